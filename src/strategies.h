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
/* The LLM strategies (id middle-out or one-shot) in two halves around the
 * summary call: begin plans up to the call and sets job->call (false: the
 * plan is already complete, no call); end takes the call's status (and
 * job->len, job->usage) and completes the plan, unless the fact check
 * (compression.factCheck retry) asks the model once more: then end answers
 * CTXC_OK with job->call set again (job->request now names the missing
 * facts, job->len 0): make that call and call end again (at most once).
 * compress() is begin, the blocking call(s), end. CTXC_E_UNAVAILABLE for
 * an id not compiled in. */
ctxc_status_t ctxc__llm_begin(const ctxc_compress_ctx_t *ctx,
                              ctxc_strategy_id_t id, ctxc_plan_t *plan,
                              ctxc_llm_job_t *job, ctxc_error_t *err);
ctxc_status_t ctxc__llm_end(const ctxc_compress_ctx_t *ctx, ctxc_plan_t *plan,
                            ctxc_llm_job_t *job, ctxc_status_t call_st,
                            ctxc_error_t *err);
ctxc_status_t ctxc__hd_optimize(const ctxc_view_t *raw,
                                const ctxc_density_config_t *config,
                                ctxc_work_t *work,
                                ctxc_density_result_t *result,
                                ctxc_error_t *err);
/* The density step between calls (ctxc_density_memo_t, in the session).
 * `all` is a view of the whole history (identity: map NULL), `paths` two
 * CTXC_CFG_PATH_MAX buffers. config_hash: what the memo compares to notice
 * changed settings. memo_start: the first position a step must read so
 * that its result is a whole step's, given that [0, memo->count) was
 * stepped and only appends came since: memo->count when nothing appended
 * can change an earlier entry; the oldest result whose recency a new
 * result of its tool can change; 0 (the whole history) for a write of a
 * path read before, an inclusion of a path included before, a result
 * whose call is before the start. memo_add: adds the read and inclusion
 * paths of [memo->count, count) to the filters. */
uint32_t ctxc__hd_config_hash(const ctxc_density_config_t *config);
size_t ctxc__hd_memo_start(const ctxc_view_t *all,
                           const ctxc_density_config_t *config,
                           const ctxc_density_memo_t *memo, char *paths);
void ctxc__hd_memo_add(const ctxc_view_t *all,
                       const ctxc_density_config_t *config,
                       ctxc_density_memo_t *memo, char *paths);

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
    ctxc__ids_at_t at; /* what the slots' positions refer to: v */
    bool ok;
    bool built; /* lazy: built on the first lookup that needs it */
    void *mem;
    size_t bytes;
} ctxc__pairs_t;

/* The index in steps, for a caller that walks the view anyway: begin (false:
 * no table), add every tool_call and tool_response block in view order with
 * ctxc__ids_add_block(&pr->ix, &pr->at, ...) (false: the table is full),
 * then set pr->ok when every add succeeded. */
bool ctxc__pairs_begin(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes);
/* An index over `mem` built only when a lookup below needs it. */
void ctxc__pairs_lazy(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                      size_t bytes);
/* Entries next to a call or response scanned before the index is asked. */
#define CTXC__PAIR_WINDOW 8u

/* The tool_call (`call`) or tool_response with call id `id` nearest to view
 * position `at`: the last tool_call in an ai entry before it (its first such
 * block), or the first tool_response in a tool entry after it. Its position,
 * block index and, when `out` is not NULL, the block. The `window` entries
 * next to `at` are scanned, then the (lazy) index answers, or, when it
 * cannot (a full table, no memory, compiled out), a scan of the rest: the
 * same answers. */
bool ctxc__pairs_seek(ctxc__pairs_t *pr, size_t at, ctxc_str_t id, bool call,
                      size_t window, size_t *pos, size_t *block,
                      ctxc_block_t *out);

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

/* ---- pinned entries (boundary.c) ----------------------------------------
 * An entry is pinned when its metadata says "pinned": true, or when it
 * shares a tool call / response pair with a pinned entry (transitively: a
 * call's ai entry, the tool entries answering it, and so on). Strategies
 * keep pinned entries verbatim and in order. */

/* Marks the pinned entries of pr->v in pin[0..count) (1 pinned, 0 not;
 * pin may be NULL: then only the flagged entries are counted). Returns the
 * entries marked (0 when none is flagged: no pair is looked at). */
size_t ctxc__pins_mark(ctxc__pairs_t *pr, unsigned char *pin);

/* The pinned entries of a compress()'s view, marked in the work area's
 * `removals` (free while compress runs: a density result is applied before
 * it), or NULL when there are none; *pinned_tokens = their estimates. */
const unsigned char *ctxc__compress_pins(const ctxc_compress_ctx_t *ctx,
                                         ctxc__pairs_t *pairs,
                                         uint64_t *pinned_tokens);

/* ---- the limits of a compression (boundary.c) ---------------------------
 * The token target always; the entry and byte targets of the whole history
 * only for a limit over its threshold when the compression starts
 * (ctxc_limits_over; SIZE_MAX: none): capacity x threshold x 0.6, at most
 * the capacity less the reserve. */
typedef struct {
    uint64_t tokens; /* of the view */
    size_t entries;  /* of the whole history */
    size_t bytes;    /* of the whole history */
} ctxc__targets_t;

void ctxc__targets(const ctxc_compress_ctx_t *ctx, uint64_t tokens,
                   ctxc__targets_t *t);

/* Drops the oldest unpinned entries of the context's view until every
 * target holds, on top of `plan` (its ops in order over the store: KEEP
 * ranges and INSERTs that replace one entry each; *tokens: the view's
 * tokens after it). The cut is a valid split of `bd` and at least 2
 * entries of the view stay; pinned entries before it stay in place.
 * Rewrites the plan in place, lowers *tokens by what was dropped and sets
 * *dropped (also plan->meta.entries_dropped; 0: the plan is as it was)
 * and *cut (the view position of the first entry kept after the pinned
 * ones; 0 when nothing was dropped).
 * Errors: CTXC_E_TOO_LARGE when the pinned entries alone break a target
 * (the message names the limit and by how much), CTXC_E_NO_SPACE (ops). */
ctxc_status_t ctxc__truncate(const ctxc_compress_ctx_t *ctx, ctxc_plan_t *plan,
                             const ctxc_boundary_t *bd,
                             const unsigned char *pin, const ctxc__targets_t *t,
                             uint64_t *tokens, size_t *dropped,
                             size_t *cut_out, ctxc_error_t *err);

#endif /* CTXC_STRATEGIES_H */
