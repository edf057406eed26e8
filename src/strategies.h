/*
 * ctxc — the strategies' functions and what they share: the call id
 * index of a view, the common start of compress() (private header;
 * strategy_*.c, boundary.c).
 */
#ifndef CTXC_STRATEGIES_H
#define CTXC_STRATEGIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/strategy.h"
#include "id_index.h"

/* ---- strategy functions (compiled in per CTXC_CFG_STRATEGY_<NAME>) ---- */

ctxc_status_t ctxc__td_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err);
ctxc_status_t ctxc__hd_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err);
ctxc_status_t ctxc__mo_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err);
ctxc_status_t ctxc__os_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err);
ctxc_status_t ctxc__hd_optimize(const ctxc_view_t *raw,
                                const ctxc_density_config_t *config,
                                ctxc_work_t *work,
                                ctxc_density_result_t *result,
                                ctxc_error_t *err);

/* ---- tool-call pairing of a view (boundary.c) ----------------------------
 * A call id index over a view: for each id the position and block of its
 * tool_call and of its tool_response. `ok` when the index holds every id
 * (a view of a store has at most one call and one response per id, the
 * store's pairing rule): then "the first tool_response after the call" and
 * "the last tool_call before the response" are the indexed ones when they
 * lie on the right side. Otherwise callers scan (the same answers,
 * slower). */
typedef struct {
    const ctxc_view_t *v;
    ctxc__id_index_t ix;
    bool ok;
    bool built; /* lazy: built on the first lookup that needs it */
    void *mem;
    size_t bytes;
} ctxc__pairs_t;

/* Builds the index over `mem` (bytes; may be NULL). */
void ctxc__pairs_build(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes);
/* The same in steps, for a caller that walks the view anyway: begin (false:
 * no table), add every tool_call and tool_response block in view order
 * (false: the table is full), then set pr->ok when every add succeeded. */
bool ctxc__pairs_begin(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes);
bool ctxc__pairs_add(ctxc__pairs_t *pr, const ctxc_entry_t *e, size_t p,
                     size_t k, const ctxc_block_t *b);
/* An index over `mem` built only when a lookup below needs it. */
void ctxc__pairs_lazy(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                      size_t bytes);
/* The first tool_response to `id` in a tool entry after view position
 * `from` (as ctxc__find_response): a few entries are scanned, then the
 * (lazy) index answers, or a scan when it cannot. */
bool ctxc__pairs_response(ctxc__pairs_t *pr, size_t from, ctxc_str_t id,
                          size_t *pos, size_t *block);
/* The last tool_call with `id` in an ai entry before view position
 * `before` (its first such block), the same way. */
bool ctxc__pairs_call(ctxc__pairs_t *pr, size_t before, ctxc_str_t id,
                      size_t *pos, size_t *block, ctxc_block_t *call);
/* The same by a scan of [0, before). */
bool ctxc__find_call(const ctxc_view_t *v, size_t before, ctxc_str_t id,
                     size_t *pos, size_t *block, ctxc_block_t *call);

/* The slot of `id` (pr->ok only), or NULL. */
ctxc__id_slot_t *ctxc__pairs_find(const ctxc__pairs_t *pr, ctxc_str_t id);
/* Sum of the block counts of a view's entries (an upper bound of its keys). */
size_t ctxc__view_blocks(const ctxc_view_t *v);

/* Common start of a compress(): the call id index of the context's view in
 * the first table of ctx->work->index, the boundary data in
 * ctx->work->boundary, the sum of the view's cached estimates (also
 * recorded as plan->meta.tokens_before, with the strategy and the original
 * count) and the target threshold x limit x 0.6. */
ctxc_status_t ctxc__compress_prepare(const ctxc_compress_ctx_t *ctx,
                                     ctxc_strategy_id_t id, ctxc_plan_t *plan,
                                     ctxc_boundary_t *bd, ctxc__pairs_t *pairs,
                                     uint64_t *total, uint64_t *target,
                                     ctxc_error_t *err);

/* First tool_response to `id` in a tool entry after view position `from`:
 * its position and block index. False when there is none (an unpaired
 * call). A scan. */
bool ctxc__find_response(const ctxc_view_t *v, size_t from, ctxc_str_t id,
                         size_t *pos, size_t *block);

#endif /* CTXC_STRATEGIES_H */
