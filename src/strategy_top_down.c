/*
 * ctxc — top-down-truncation: no LLM. Drops the oldest entries until the
 * estimate of what remains is below threshold x context limit x 0.6 and,
 * for the history's entry slots and arena bytes when they are over their
 * threshold, until they are at or under capacity x their threshold x 0.6;
 * cutting only at valid tool-call boundaries and keeping at least the last
 * 2 entries. Pinned entries are never dropped: they stay in place, in
 * order, and count against the targets; when they alone break one the
 * strategy fails, saying which limit and by how much.
 */
#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "strategies.h"

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION

ctxc_status_t ctxc__td_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    size_t n = v->count;
    ctxc_boundary_t bd;
    ctxc__pairs_t pairs;
    uint64_t total, target;
    ctxc_status_t st =
        ctxc__compress_prepare(ctx, CTXC_STRATEGY_TOP_DOWN_TRUNCATION, plan,
                               &bd, &pairs, &total, &target, err);
    if (st != CTXC_OK) {
        return st;
    }
    uint64_t pinned_tokens = 0;
    const unsigned char *pin = ctxc__compress_pins(ctx, &pairs, &pinned_tokens);
    ctxc__targets_t t;
    ctxc__targets(ctx, target, &t);
    uint64_t kept = total;
    size_t dropped = 0, cut = 0;
    st = ctxc_plan_keep(plan, 0, v->store_count, err);
    if (st == CTXC_OK) {
        st = ctxc__truncate(ctx, plan, &bd, pin, &t, &kept, &dropped, &cut, err);
    }
    plan->meta.compressed_count = n - dropped;
    plan->meta.middle_compressed = dropped;
    plan->meta.tokens_after = kept;
    plan->meta.unchanged = dropped == 0;
    plan->meta.bottom_preserved = n - cut;
    return st;
}

#endif
