/*
 * ctxc — top-down-truncation: no LLM. Drops the oldest entries until the
 * estimate of what remains is below threshold x context limit x 0.6, cutting
 * only at valid tool-call boundaries and keeping at least the last 2 entries.
 * Pinned entries are never dropped: they stay in place, in order, and count
 * against the target; when they alone reach it the strategy fails, saying
 * how many tokens they need.
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
    if (pin != NULL && total >= target && pinned_tokens >= target) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "the pinned entries alone need %z tokens, the "
                          "target is %z (context-limit x threshold x 0.6): "
                          "unpin some or raise the context limit",
                          (size_t)pinned_tokens, (size_t)target);
    }

    /* oldest first until what remains is below the target (pinned entries
     * stay and keep counting) */
    size_t cut = 0;
    uint64_t remaining = total;
    while (cut < n && remaining >= target) {
        ctxc_entry_t e;
        ctxc_view_get(v, cut, &e);
        if (pin == NULL || !pin[cut]) {
            remaining -= e.tokens;
        }
        cut++;
    }
    cut = ctxc_boundary_forward(&bd, cut);
    size_t min_keep_cut = n >= 2 ? n - 2 : 0; /* keep at least 2 entries */
    if (cut > min_keep_cut) {
        cut = ctxc_boundary_backward(&bd, min_keep_cut);
    }

    size_t pinned_before = 0;
    for (size_t i = 0; pin != NULL && i < cut; i++) {
        pinned_before += pin[i];
    }
    if (cut == pinned_before) { /* nothing to drop (all of it pinned) */
        st = ctxc_plan_keep(plan, 0, v->store_count, err);
        plan->meta.unchanged = true;
        plan->meta.compressed_count = n;
        plan->meta.bottom_preserved = n;
        plan->meta.tokens_after = total;
        return st;
    }
    uint64_t kept = 0;
    size_t pinned_kept = 0;
    for (size_t i = 0; pin != NULL && i < cut && st == CTXC_OK; i++) {
        if (pin[i]) { /* a pinned entry before the cut stays in place */
            ctxc_entry_t e;
            ctxc_view_get(v, i, &e);
            kept += e.tokens;
            pinned_kept++;
            size_t at = ctxc_view_index(v, i);
            st = ctxc_plan_keep(plan, at, at + 1u, err);
        }
    }
    for (size_t i = cut; i < n; i++) {
        ctxc_entry_t e;
        ctxc_view_get(v, i, &e);
        kept += e.tokens;
    }
    /* keep the store from the first kept entry on (entries outside the
     * curated view that lie in the kept tail stay with it) */
    if (st == CTXC_OK) {
        st = ctxc_plan_keep(plan, ctxc_view_index(v, cut), v->store_count, err);
    }
    plan->meta.compressed_count = pinned_kept + n - cut;
    plan->meta.bottom_preserved = n - cut;
    plan->meta.middle_compressed = cut - pinned_kept;
    plan->meta.tokens_after = kept;
    return st;
}

#endif
