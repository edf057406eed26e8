/*
 * ctxc — tool-call boundaries: where a history may be cut without
 * separating a tool_call from its tool_response.
 */
#include <string.h>

#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "ctxc_internal.h"

bool ctxc__find_response(const ctxc_view_t *v, size_t from, ctxc_str_t id,
                         size_t *pos, size_t *block) {
    for (size_t p = from + 1; p < v->count; p++) {
        ctxc_entry_t e;
        ctxc_view_get(v, p, &e);
        if (e.speaker != CTXC_SPEAKER_TOOL) {
            continue;
        }
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
            if (b.type == CTXC_BLOCK_TOOL_RESPONSE &&
                ctxc__str_eq(b.u.tool_response.call_id, id)) {
                *pos = p;
                *block = k;
                return true;
            }
        }
    }
    return false;
}

ctxc_status_t ctxc_boundary_init(ctxc_boundary_t *b, const ctxc_view_t *view,
                                 uint16_t *mem, size_t mem_cap,
                                 ctxc_error_t *err) {
    size_t n = view->count;
    if (mem_cap < n + 1) {
        return ctxc__fail_space(err, n + 1 - mem_cap,
                                "boundary data needs %z elements, has %z",
                                n + 1, mem_cap);
    }
    uint16_t running = 0; /* 1 + the furthest response of calls so far */
    mem[0] = 0;
    for (size_t a = 0; a < n; a++) {
        ctxc_entry_t e;
        ctxc_view_get(view, a, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t blk;
        while (ctxc_entry_next_block(&e, &cur, &blk)) {
            if (blk.type != CTXC_BLOCK_TOOL_CALL) {
                continue;
            }
            size_t p, k;
            if (ctxc__find_response(view, a, blk.u.tool_call.id, &p, &k) &&
                p + 1 > running) { /* unpaired calls do not count */
                running = (uint16_t)(p + 1);
            }
        }
        mem[a + 1] = running;
    }
    b->limit = mem;
    b->count = n;
    return CTXC_OK;
}

bool ctxc_split_is_valid(const ctxc_boundary_t *b, size_t i) {
    return i <= b->count && b->limit[i] <= i;
}

size_t ctxc_find_forward_valid_split_point(const ctxc_boundary_t *b, size_t i) {
    for (size_t j = i; j < b->count; j++) {
        if (ctxc_split_is_valid(b, j)) {
            return j;
        }
    }
    return b->count;
}

size_t ctxc_find_backward_valid_split_point(const ctxc_boundary_t *b,
                                            size_t i) {
    if (i > b->count) {
        i = b->count;
    }
    for (size_t j = i; j > 0; j--) {
        if (ctxc_split_is_valid(b, j)) {
            return j;
        }
    }
    return 0;
}

size_t ctxc_adjust_for_tool_call_boundary(const ctxc_boundary_t *b, size_t i) {
    size_t f = ctxc_find_forward_valid_split_point(b, i);
    return f < b->count ? f : ctxc_find_backward_valid_split_point(b, i);
}

ctxc_status_t ctxc__compress_prepare(const ctxc_compress_ctx_t *ctx,
                                     ctxc_strategy_id_t id, ctxc_plan_t *plan,
                                     ctxc_boundary_t *bd, uint64_t *total,
                                     uint64_t *target, ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    ctxc_status_t st =
        ctxc_boundary_init(bd, v, ctx->work->aux, ctx->work->cap + 1, err);
    if (st != CTXC_OK) {
        return st;
    }
    *total = 0;
    for (size_t i = 0; i < v->count; i++) {
        ctxc_entry_t e;
        ctxc_view_get(v, i, &e);
        *total += e.tokens;
    }
    *target =
        ctxc_target_tokens(ctx->values.context_limit, ctx->values.threshold);
    plan->meta.strategy = id;
    plan->meta.original_count = v->count;
    plan->meta.tokens_before = *total;
    return CTXC_OK;
}
