/*
 * ctxc — tool-call boundaries: where a history may be cut without
 * separating a tool_call from its tool_response.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "id_index.h"
#include "record.h"
#include "strategies.h"

/* ---- the call id index of a view ---------------------------------------- */

size_t ctxc__view_blocks(const ctxc_view_t *v) {
    size_t n = 0;
    for (size_t p = 0; p < v->count; p++) {
        n += v->slots_[ctxc_view_index(v, p)].block_count;
    }
    return n;
}

CTXC__NOINLINE static void pairs_reset(ctxc__pairs_t *pr, const ctxc_view_t *v,
                                       void *mem, size_t bytes, bool built) {
    pr->v = v;
    pr->at.v = v;
    pr->at.sid = NULL;
    pr->ok = false;
    pr->built = built;
    pr->mem = mem;
    pr->bytes = bytes;
    pr->ix.slots = NULL;
    pr->ix.cap = 0;
    pr->ix.used = 0;
}

#if CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY > 0
ctxc__id_slot_t *ctxc__pairs_find(const ctxc__pairs_t *pr, ctxc_str_t id) {
    if (!pr->ok) {
        return NULL;
    }
    return ctxc__ids_find(&pr->ix, id, ctxc__ids_hash(id), ctxc__ids_match_at,
                          (void *)(uintptr_t)&pr->at);
}

bool ctxc__pairs_begin(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes) {
    pairs_reset(pr, v, mem, bytes, true);
    ctxc__ids_init_for(&pr->ix, mem, bytes, ctxc__view_blocks(v));
    return pr->ix.cap > 0 && v->count < CTXC__IDS_NONE;
}

/* Builds the index over `mem` (bytes; may be NULL). */
static void pairs_build(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                        size_t bytes) {
    pr->ok = ctxc__pairs_begin(pr, v, mem, bytes) &&
             ctxc__ids_add_entries(&pr->ix, &pr->at, 0, v->count);
}

#else /* no index in this build: every lookup scans (the same answers) */

ctxc__id_slot_t *ctxc__pairs_find(const ctxc__pairs_t *pr, ctxc_str_t id) {
    (void)pr;
    (void)id;
    return NULL;
}

bool ctxc__pairs_begin(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes) {
    pairs_reset(pr, v, mem, bytes, true);
    return false;
}

/* Builds the index over `mem` (bytes; may be NULL). */
static void pairs_build(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                        size_t bytes) {
    pairs_reset(pr, v, mem, bytes, true);
}
#endif

void ctxc__pairs_lazy(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                      size_t bytes) {
    pairs_reset(pr, v, mem, bytes, false);
}

/* Builds a lazy index on its first use; whether it answers (it holds every
 * id). */
static bool pairs_ready(ctxc__pairs_t *pr) {
    if (!pr->built) {
        pr->built = true;
        pairs_build(pr, pr->v, pr->mem, pr->bytes);
    }
    return pr->ok;
}

/* The view's index for ctxc__ids_seek (built on the first ask). */
static const ctxc__id_slot_t *pairs_lookup(void *ctx, ctxc_str_t id,
                                           bool *usable) {
    ctxc__pairs_t *pr = (ctxc__pairs_t *)ctx;
    *usable = pairs_ready(pr);
    return ctxc__pairs_find(pr, id);
}

bool ctxc__pairs_seek(ctxc__pairs_t *pr, size_t at, ctxc_str_t id, bool call,
                      size_t window, size_t *pos, size_t *block,
                      ctxc_block_t *out) {
    return ctxc__ids_seek(pr->v, at, id, call, window, pairs_lookup, pr, pos,
                          block, out);
}

/* ---- boundaries ---------------------------------------------------------- */

/* The boundary data: for each call, the first response after it (near
 * it, else through the index, else by a scan). */
static void limits_fill(ctxc__pairs_t *pr, uint16_t *mem) {
    const ctxc_view_t *view = pr->v;
    uint16_t running = 0; /* 1 + the furthest response of calls so far */
    mem[0] = 0;
    for (size_t a = 0; a < view->count; a++) {
        mem[a + 1] = running;
        /* tool calls are only in ai entries (the store's pairing rule):
         * the others are not read */
        if (view->slots_[ctxc_view_index(view, a)].speaker != CTXC_SPEAKER_AI) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(view, a, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t blk;
        while (ctxc_entry_next_block(&e, &cur, &blk)) {
            if (blk.type != CTXC_BLOCK_TOOL_CALL) {
                continue;
            }
            size_t p, k;
            if (ctxc__pairs_seek(pr, a, blk.u.tool_call.id, false,
                                 CTXC__PAIR_WINDOW, &p, &k, NULL) &&
                p + 1 > running) { /* unpaired calls do not count */
                running = (uint16_t)(p + 1);
            }
        }
        mem[a + 1] = running;
    }
}

CTXC__NOINLINE static ctxc_status_t
boundary_room(const ctxc_view_t *view, size_t mem_cap, ctxc_error_t *err) {
    size_t n = view->count;
    if (mem_cap < n + 1) {
        return ctxc__fail_space(err, n + 1 - mem_cap,
                                "boundary data needs %z elements, has %z",
                                n + 1, mem_cap);
    }
    return CTXC_OK;
}

static void boundary_fill(ctxc_boundary_t *b, ctxc__pairs_t *pr,
                          uint16_t *mem) {
    limits_fill(pr, mem);
    b->limit = mem;
    b->count = pr->v->count;
}

ctxc_status_t ctxc_boundary_init(ctxc_boundary_t *b, const ctxc_view_t *view,
                                 uint16_t *mem, size_t mem_cap, void *index,
                                 size_t index_bytes, ctxc_error_t *err) {
    ctxc_status_t st = boundary_room(view, mem_cap, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc__pairs_t pr;
    ctxc__pairs_lazy(&pr, view, index, index_bytes);
    boundary_fill(b, &pr, mem);
    return CTXC_OK;
}

bool ctxc_boundary_is_valid(const ctxc_boundary_t *b, size_t i) {
    return i <= b->count && b->limit[i] <= i;
}

size_t ctxc_boundary_forward(const ctxc_boundary_t *b, size_t i) {
    for (size_t j = i; j < b->count; j++) {
        if (ctxc_boundary_is_valid(b, j)) {
            return j;
        }
    }
    return b->count;
}

size_t ctxc_boundary_backward(const ctxc_boundary_t *b, size_t i) {
    if (i > b->count) {
        i = b->count;
    }
    for (size_t j = i; j > 0; j--) {
        if (ctxc_boundary_is_valid(b, j)) {
            return j;
        }
    }
    return 0;
}

size_t ctxc_boundary_adjust(const ctxc_boundary_t *b, size_t i) {
    size_t f = ctxc_boundary_forward(b, i);
    return f < b->count ? f : ctxc_boundary_backward(b, i);
}

CTXC__SIZE_NOINLINE uint64_t ctxc_target_tokens(uint64_t context_limit,
                                                uint16_t threshold) {
    return context_limit * threshold * 6u / 10000u;
}

ctxc_status_t ctxc__compress_prepare(const ctxc_compress_ctx_t *ctx,
                                     ctxc_strategy_id_t id, ctxc_plan_t *plan,
                                     ctxc_boundary_t *bd, ctxc__pairs_t *pairs,
                                     uint64_t *total, uint64_t *target,
                                     ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    const ctxc_work_t *w = ctx->work;
    ctxc_status_t st = boundary_room(v, w->cap + 1, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc__pairs_lazy(
        pairs, v, w->index,
        w->index != NULL ? w->index_slots * CTXC_WORK_INDEX_SLOT_BYTES : 0);
    boundary_fill(bd, pairs, w->boundary);
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

/* ---- pinned entries ------------------------------------------------------ */

size_t ctxc__pins_mark(ctxc__pairs_t *pr, unsigned char *pin) {
    const ctxc_view_t *v = pr->v;
    size_t marked = 0;
    for (size_t p = 0; p < v->count; p++) {
        bool on =
            (v->slots_[ctxc_view_index(v, p)].flags & CTXC_ENTRY_PINNED) != 0;
        if (pin != NULL) {
            pin[p] = on ? 1u : 0u;
        }
        marked += on ? 1u : 0u;
    }
    if (marked == 0 || pin == NULL) {
        return marked; /* the common case: no pin, no pair walked */
    }
    /* a call and its response are pinned together, transitively: until
     * nothing changes (each round pins at least one more entry) */
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t a = 0; a < v->count; a++) {
            if (v->slots_[ctxc_view_index(v, a)].speaker != CTXC_SPEAKER_AI) {
                continue;
            }
            ctxc_entry_t e;
            ctxc_view_get(v, a, &e);
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            while (ctxc_entry_next_block(&e, &cur, &b)) {
                size_t q, k;
                if (b.type != CTXC_BLOCK_TOOL_CALL ||
                    !ctxc__pairs_seek(pr, a, b.u.tool_call.id, false,
                                      CTXC__PAIR_WINDOW, &q, &k, NULL) ||
                    pin[a] == pin[q]) {
                    continue;
                }
                pin[a] = pin[q] = 1u;
                marked++;
                changed = true;
            }
        }
    }
    return marked;
}

const unsigned char *ctxc__compress_pins(const ctxc_compress_ctx_t *ctx,
                                         ctxc__pairs_t *pairs,
                                         uint64_t *pinned_tokens) {
    unsigned char *pin = (unsigned char *)ctx->work->removals;
    *pinned_tokens = 0;
    if (pin == NULL || ctxc__pins_mark(pairs, NULL) == 0) {
        return NULL;
    }
    (void)ctxc__pins_mark(pairs, pin);
    for (size_t p = 0; p < ctx->view.count; p++) {
        if (pin[p]) {
            ctxc_entry_t e;
            ctxc_view_get(&ctx->view, p, &e);
            *pinned_tokens += e.tokens;
        }
    }
    return pin;
}
