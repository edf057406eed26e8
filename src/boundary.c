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

/* ---- the limits, and dropping the oldest entries ------------------------- */

CTXC__SIZE_NOINLINE size_t ctxc_target_count(size_t capacity,
                                             uint16_t threshold) {
    return (size_t)((uint64_t)capacity * threshold * 6u / 10000u);
}

unsigned ctxc_limits_over(const ctxc_limits_t *l) {
    unsigned over = 0;
    if (l->max_entries > 0 &&
        ((uint64_t)l->entries + l->reserve_entries) * 1000u >
            (uint64_t)l->max_entries * l->entries_threshold) {
        over |= CTXC_LIMIT_ENTRIES;
    }
    if (l->arena_bytes > 0 &&
        ((uint64_t)l->bytes + l->reserve_bytes) * 1000u >
            (uint64_t)l->arena_bytes * l->bytes_threshold) {
        over |= CTXC_LIMIT_BYTES;
    }
    return over;
}

/* capacity x threshold x 0.6, and never less room than the reserve
 * (ctxc_session_add_room's entry: its need in place of a smaller one). */
static size_t target_of(size_t capacity, uint16_t threshold, size_t reserve) {
    size_t room = capacity > reserve ? capacity - reserve : 0;
    size_t t = ctxc_target_count(capacity, threshold);
    return t < room ? t : room;
}

void ctxc__targets(const ctxc_compress_ctx_t *ctx, uint64_t tokens,
                   ctxc__targets_t *t) {
    const ctxc_limits_t *l = &ctx->values.limits;
    unsigned over = ctxc_limits_over(l);
    t->tokens = tokens;
    t->entries = SIZE_MAX;
    t->bytes = SIZE_MAX;
    if (over & CTXC_LIMIT_ENTRIES) {
        t->entries = target_of(l->max_entries, l->entries_threshold,
                               l->reserve_entries);
    }
    if (over & CTXC_LIMIT_BYTES) {
        t->bytes =
            target_of(l->arena_bytes, l->bytes_threshold, l->reserve_bytes);
    }
}

/* What the plan leaves of store entry idx: its tokens and bytes after the
 * plan (an INSERT replacing it, else the entry as it is). *k walks the
 * plan's ops along increasing idx. */
static void after_plan(const ctxc_plan_t *plan, const ctxc_view_t *v,
                       size_t *k, size_t idx, uint64_t *tok, size_t *size) {
    for (; *k < plan->count; (*k)++) {
        const ctxc_plan_op_t *op = &plan->ops[*k];
        bool before = op->kind == CTXC_PLAN_KEEP
                          ? op->to <= idx
                          : op->replaces != UINT32_MAX && op->replaces < idx;
        if (!before) {
            if (op->kind == CTXC_PLAN_INSERT && op->replaces == idx) {
                *tok = op->tokens;
                *size = op->size;
                return;
            }
            break;
        }
    }
    *tok = v->slots_[idx].tokens;
    *size = v->slots_[idx].size;
}

/* Running totals of what dropping the view positions [0, cut) takes away
 * (pinned positions stay), up to store index `sidx`. */
typedef struct {
    size_t cut, sidx, k;
    uint64_t tokens;
    size_t entries, bytes, pinned;
} drop_t;

static void drop_next(drop_t *d, const ctxc_plan_t *plan, const ctxc_view_t *v,
                      const unsigned char *pin) {
    size_t idx = ctxc_view_index(v, d->cut);
    uint64_t tok;
    size_t size;
    for (; d->sidx < idx; d->sidx++) { /* entries outside the view */
        after_plan(plan, v, &d->k, d->sidx, &tok, &size);
        d->entries++;
        d->bytes += size;
    }
    if (pin != NULL && pin[d->cut]) {
        d->pinned++;
    } else {
        after_plan(plan, v, &d->k, idx, &tok, &size);
        d->tokens += tok;
        d->entries++;
        d->bytes += size;
    }
    d->sidx = idx + 1u;
    d->cut++;
}

/* The arena bytes the plan's replacements save over the entries they
 * replace. */
static size_t plan_bytes_saved(const ctxc_plan_t *plan, const ctxc_view_t *v) {
    size_t saved = 0;
    for (size_t k = 0; k < plan->count; k++) {
        const ctxc_plan_op_t *op = &plan->ops[k];
        if (op->kind == CTXC_PLAN_INSERT && op->replaces < v->store_count &&
            v->slots_[op->replaces].size > op->size) {
            saved += v->slots_[op->replaces].size - op->size;
        }
    }
    return saved;
}

/* Pinned entries that alone break a target: CTXC_E_TOO_LARGE naming the
 * limit and by how much. */
static ctxc_status_t pins_fit(const ctxc_compress_ctx_t *ctx,
                              const unsigned char *pin,
                              const ctxc__targets_t *t, uint64_t tokens,
                              ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    uint64_t ptok = 0;
    size_t pent = 0, pbytes = 0;
    for (size_t p = 0; p < v->count; p++) {
        if (pin[p]) {
            const ctxc_slot_t *sl = &v->slots_[ctxc_view_index(v, p)];
            ptok += sl->tokens;
            pent++;
            pbytes += sl->size;
        }
    }
    /* entries appended after the range (a job's) stay as well */
    const ctxc_limits_t *l = &ctx->values.limits;
    if (l->entries > v->store_count) {
        pent += l->entries - v->store_count;
    }
    if (tokens >= t->tokens && ptok >= t->tokens) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "the pinned entries alone need %z tokens, the "
                          "target is %z (context-limit x threshold x 0.6): "
                          "unpin some or raise the context limit",
                          (size_t)ptok, (size_t)t->tokens);
    }
    if (pent > t->entries) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "the pinned entries alone take %z entries, %z over "
                          "the target of %z (slots x "
                          "compression.entries-threshold x 0.6): unpin some "
                          "or give the history more slots",
                          pent, pent - t->entries, t->entries);
    }
    if (pbytes > t->bytes) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "the pinned entries alone take %z arena bytes, %z "
                          "over the target of %z (arena x "
                          "compression.bytes-threshold x 0.6): unpin some or "
                          "give the history a larger arena",
                          pbytes, pbytes - t->bytes, t->bytes);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc__truncate(const ctxc_compress_ctx_t *ctx, ctxc_plan_t *plan,
                             const ctxc_boundary_t *bd,
                             const unsigned char *pin, const ctxc__targets_t *t,
                             uint64_t *tokens, size_t *dropped,
                             size_t *cut_out, ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    const ctxc_limits_t *l = &ctx->values.limits;
    size_t n = v->count;
    *dropped = 0;
    *cut_out = 0;
    if (pin != NULL) {
        ctxc_status_t st = pins_fit(ctx, pin, t, *tokens, err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    size_t entries = l->entries > 0 ? l->entries : v->store_count;
    size_t saved = plan_bytes_saved(plan, v);
    size_t bytes = l->bytes > saved ? l->bytes - saved : 0;
    /* oldest first until every target holds (pinned entries stay) */
    drop_t d = {0};
    while (d.cut < n &&
           (*tokens - d.tokens >= t->tokens || entries - d.entries > t->entries ||
            bytes - d.bytes > t->bytes)) {
        drop_next(&d, plan, v, pin);
    }
    size_t cut = ctxc_boundary_forward(bd, d.cut);
    size_t min_keep_cut = n >= 2 ? n - 2 : 0; /* keep at least 2 entries */
    if (cut > min_keep_cut) {
        cut = ctxc_boundary_backward(bd, min_keep_cut);
    }
    if (cut < d.cut) { /* moved back: count again */
        memset(&d, 0, sizeof d);
    }
    while (d.cut < cut) {
        drop_next(&d, plan, v, pin);
    }
    if (cut == d.pinned) {
        return CTXC_OK; /* nothing to drop (all of it pinned) */
    }
    *cut_out = cut;
    /* the plan from the cut on, after the pinned entries before it */
    size_t cidx = cut < n ? ctxc_view_index(v, cut) : v->store_count;
    size_t k = 0;
    while (k < plan->count &&
           (plan->ops[k].kind == CTXC_PLAN_KEEP
                ? plan->ops[k].to <= cidx
                : plan->ops[k].replaces != UINT32_MAX &&
                      plan->ops[k].replaces < cidx)) {
        k++;
    }
    size_t m = d.pinned;
    size_t inserts = 0, gone = 0; /* the inserts counted for apply */
    for (size_t j = 0; j < plan->count; j++) {
        inserts += plan->ops[j].kind == CTXC_PLAN_INSERT;
        gone += j < k && plan->ops[j].kind == CTXC_PLAN_INSERT;
    }
    if (m + (plan->count - k) > plan->cap) {
        return ctxc__fail_space(err, m + (plan->count - k) - plan->cap,
                                "plan holds its maximum of %z ops", plan->cap);
    }
    memmove(&plan->ops[m], &plan->ops[k],
            (plan->count - k) * sizeof(ctxc_plan_op_t));
    plan->count = m + (plan->count - k);
    if (m < plan->count && plan->ops[m].kind == CTXC_PLAN_KEEP &&
        plan->ops[m].from < cidx) {
        plan->ops[m].from = (uint32_t)cidx;
    }
    for (size_t p = 0, w = 0; w < m; p++) {
        if (pin[p]) { /* a pinned entry before the cut stays in place */
            size_t at = ctxc_view_index(v, p);
            memset(&plan->ops[w], 0, sizeof plan->ops[w]);
            plan->ops[w].kind = CTXC_PLAN_KEEP;
            plan->ops[w].from = (uint32_t)at;
            plan->ops[w].to = (uint32_t)(at + 1u);
            w++;
        }
    }
    plan->counted_ = plan->counted_ == inserts ? inserts - gone : 0;
    *tokens -= d.tokens;
    *dropped = cut - d.pinned;
    plan->meta.entries_dropped = *dropped;
    return CTXC_OK;
}
