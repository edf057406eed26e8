/*
 * ctxc — building plans and density results, applying density results.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "json.h"
#include "pairing.h"
#include "plan_build.h"
#include "record.h"
#include "store.h"

/* ---- editing an existing entry into a new one ---------------------------- */

/* Advances the cache to the next kept source block; returns false at the
 * end. */
static bool edit_next(ctxc__entry_edit_t *ed, ctxc_block_t *b) {
    while (ctxc_entry_next_block(ed->entry, &ed->cur, b)) {
        size_t src = ed->next_src++;
        if (ed->edit == NULL || ed->edit(ed->user, src, b)) {
            return true;
        }
    }
    return false;
}

size_t ctxc__entry_edit_count(ctxc__entry_edit_t *ed) {
    ed->cur = NULL;
    ed->next_src = 0;
    ed->next_out = 0;
    size_t n = 0;
    ctxc_block_t b;
    while (edit_next(ed, &b)) {
        n++;
    }
    ed->cur = NULL;
    ed->next_src = 0;
    return n;
}

ctxc_status_t ctxc__entry_edit_block(void *ctx, size_t i,
                                     ctxc__block_src_t *out,
                                     ctxc_error_t *err) {
    ctxc__entry_edit_t *ed = (ctxc__entry_edit_t *)ctx;
    if (i != ed->next_out) { /* restart (the writer makes two passes) */
        ed->cur = NULL;
        ed->next_src = 0;
        ed->next_out = 0;
    }
    ctxc_block_t b;
    while (ed->next_out <= i) {
        if (!edit_next(ed, &b)) {
            return ctxc__fail(err, CTXC_E_RANGE, "block %z does not exist", i);
        }
        ed->next_out++;
    }
    /* the store's canonical bytes, or an edit's canonical text: copied,
     * not validated again */
    ctxc__block_src_of(&b, CTXC__SRC_VALID, out);
    size_t src = ed->next_src - 1; /* the source block of b */
    if (ed->tokens != NULL && src < ed->ntokens &&
        ed->tokens[src] != UINT32_MAX) {
        out->has_tokens = true;
        out->tokens = ed->tokens[src];
    }
    return CTXC_OK;
}

/* ---- plans --------------------------------------------------------------- */

void ctxc__note_counted(ctxc_estimate_fn *fn, void **user, size_t *count,
                        ctxc_estimate_fn est, void *est_user) {
    if (est == NULL || est == ctxc_estimate_block_default) {
        est = ctxc_estimate_block_default;
        est_user = NULL;
    }
    if (*count == SIZE_MAX) {
        return; /* two estimators seen already */
    }
    if (*count == 0) {
        *fn = est;
        *user = est_user;
        *count = 1;
    } else if (*fn == est && *user == est_user) {
        (*count)++;
    } else {
        *count = SIZE_MAX;
    }
}

void ctxc_plan_init(ctxc_plan_t *plan, ctxc_work_t *work) {
    memset(plan, 0, sizeof *plan);
    plan->ops = work->ops;
    plan->cap = 2 * work->cap + 2;
    plan->scratch = work->scratch;
    plan->scratch_cap = work->scratch_cap;
}

static ctxc_status_t plan_room(ctxc_plan_t *plan, ctxc_error_t *err) {
    if (plan->count >= plan->cap) {
        return ctxc__fail_space(err, 1, "plan holds its maximum of %z ops",
                                plan->cap);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_plan_keep(ctxc_plan_t *plan, size_t from, size_t to,
                             ctxc_error_t *err) {
    if (from > to || to > UINT32_MAX) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "bad keep range [%z, %z)",
                          from, to);
    }
    if (from == to) {
        return CTXC_OK;
    }
    /* increasing over every earlier KEEP */
    for (size_t k = plan->count; k-- > 0;) {
        if (plan->ops[k].kind == CTXC_PLAN_KEEP) {
            if (plan->ops[k].to > from) {
                return ctxc__fail(
                    err, CTXC_E_INVALID_ARG,
                    "keep [%z, %z) overlaps or precedes an earlier "
                    "kept range",
                    from, to);
            }
            break;
        }
    }
    if (plan->count > 0) {
        ctxc_plan_op_t *last = &plan->ops[plan->count - 1];
        if (last->kind == CTXC_PLAN_KEEP && last->to == from) {
            last->to = (uint32_t)to;
            return CTXC_OK;
        }
    }
    ctxc_status_t st = plan_room(plan, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc_plan_op_t *op = &plan->ops[plan->count++];
    memset(op, 0, sizeof *op);
    op->kind = CTXC_PLAN_KEEP;
    op->from = (uint32_t)from;
    op->to = (uint32_t)to;
    return CTXC_OK;
}

ctxc_status_t ctxc__plan_insert_src(ctxc_plan_t *plan,
                                    const ctxc__entry_src_t *src,
                                    ctxc_estimate_fn est, void *user,
                                    uint32_t replaces, ctxc_error_t *err) {
    ctxc_status_t st = plan_room(plan, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc_plan_op_t op;
    st = ctxc__record_to_scratch(plan->scratch, plan->scratch_cap,
                                 &plan->scratch_used, src, est, user, &op, err);
    if (st != CTXC_OK) {
        return st;
    }
    op.replaces = replaces;
    plan->ops[plan->count++] = op;
    ctxc__note_counted(&plan->counted_estimate_, &plan->counted_user_,
                       &plan->counted_, est, user);
    return CTXC_OK;
}

ctxc_status_t ctxc_plan_insert(ctxc_plan_t *plan, const ctxc_entry_in_t *in,
                               ctxc_estimate_fn estimate, void *user,
                               uint32_t replaces, ctxc_error_t *err) {
    ctxc__entry_src_t src;
    ctxc_status_t st = ctxc__entry_src_from_in(in, &src, err);
    if (st != CTXC_OK) {
        return st;
    }
    return ctxc__plan_insert_src(plan, &src, estimate, user, replaces, err);
}

/* ---- applying a plan ----------------------------------------------------- */

/* The arena bytes of the kept run [from, to) (records are packed in entry
 * order: a run is one span). */
static size_t run_start(const ctxc_history_t *h, const ctxc_plan_op_t *op) {
    return op->to > op->from ? h->slots[op->from].offset : 0;
}

static size_t run_bytes(const ctxc_history_t *h, const ctxc_plan_op_t *op) {
    if (op->to <= op->from) {
        return 0;
    }
    const ctxc_slot_t *last = &h->slots[op->to - 1];
    return last->offset + last->size - h->slots[op->from].offset;
}

/* Moves every kept run to its place in the new layout, each byte once:
 * the arena's records (`slots` false) or the slot array (true; an insert
 * takes one slot). Runs keep their order, so a run that moves down only
 * lands on the old bytes of runs before it (moved already when going up),
 * and a run that moves up only on those of runs after it (moved already
 * when going down): two sweeps. The arena pass reads the old slots, so it
 * comes first. */
static void place_runs(ctxc_history_t *h, const ctxc_plan_t *plan, size_t total,
                       bool slots) {
    uint8_t *base = slots ? (uint8_t *)h->slots : h->arena;
    for (int down = 0; down < 2; down++) {
        size_t pos = down ? total : 0;
        for (size_t q = 0; q < plan->count; q++) {
            const ctxc_plan_op_t *op =
                &plan->ops[down ? plan->count - 1 - q : q];
            size_t from = 0, n;
            if (op->kind != CTXC_PLAN_KEEP) {
                n = slots ? sizeof(ctxc_slot_t) : op->size;
            } else if (slots) {
                from = op->from * sizeof(ctxc_slot_t);
                n = (op->to - op->from) * sizeof(ctxc_slot_t);
            } else {
                from = run_start(h, op);
                n = run_bytes(h, op);
            }
            pos -= down ? n : 0;
            if (op->kind == CTXC_PLAN_KEEP &&
                (down ? pos > from : pos < from)) {
                memmove(base + pos, base + from, n);
            }
            pos += down ? 0 : n;
        }
    }
}

ctxc_status_t ctxc_history_apply_plan(ctxc_history_t *h,
                                      const ctxc_plan_t *plan,
                                      ctxc_error_t *err) {
    if (h == NULL || plan == NULL || (plan->count > 0 && plan->ops == NULL)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL plan or history");
    }
    if (h->frozen_ > 0) {
        return ctxc__frozen(h, 0, err);
    }
    /* 1. validate and size the new history */
    size_t next = 0;
    size_t new_count = 0;
    size_t new_used = 0;
    size_t inserts = 0;
    for (size_t k = 0; k < plan->count; k++) {
        const ctxc_plan_op_t *op = &plan->ops[k];
        if (op->kind == CTXC_PLAN_KEEP) {
            if (op->from < next || op->from > op->to || op->to > h->count) {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "plan op %z keeps [%z, %z): out of order or "
                                  "beyond the %z entries",
                                  k, (size_t)op->from, (size_t)op->to,
                                  h->count);
            }
            next = op->to;
            new_count += op->to - op->from;
            for (size_t i = op->from; i < op->to; i++) {
                new_used += h->slots[i].size;
            }
        } else if (op->kind == CTXC_PLAN_INSERT) {
            if (plan->scratch == NULL || op->offset > plan->scratch_used ||
                op->size > plan->scratch_used - op->offset ||
                op->size < CTXC__REC_HEADER) {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "plan op %z inserts bytes outside the plan's "
                                  "scratch area",
                                  k);
            }
            new_count++;
            new_used += op->size;
            inserts++;
        } else {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "plan op %z has unknown kind %u", k,
                              (unsigned)op->kind);
        }
    }
    if (new_count > h->max_entries) {
        return ctxc__fail_space(err, new_count - h->max_entries,
                                "the new history has %z entries, the store "
                                "holds %z",
                                new_count, h->max_entries);
    }
    if (new_used > h->arena_bytes) {
        return ctxc__fail_space(err, new_used - h->arena_bytes,
                                "the new history needs %z arena bytes, the "
                                "arena has %z",
                                new_used, h->arena_bytes);
    }
    /* the entries of an import in progress are kept, in order, at the end */
    size_t import_to = 0; /* their first one's new index + 1 */
    if (h->import_from_ > 0) {
        size_t first = h->import_from_ - 1u, need = h->count;
        for (size_t q = plan->count; q > 0 && need > first; q--) {
            const ctxc_plan_op_t *op = &plan->ops[q - 1u];
            if (op->kind != CTXC_PLAN_KEEP || op->to != need) {
                break;
            }
            need = op->from;
        }
        if (need > first) {
            return ctxc__fail(err, CTXC_E_BUSY,
                              "entries %z on belong to an import in progress",
                              first);
        }
        import_to = new_count - (h->count - first) + 1u;
    }
    /* tool calls and responses stay paired */
    ctxc_status_t st = ctxc__pairing_check_plan(h, plan, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* inserted records staged in the arena's free tail (the session's
     * network-free steps write them there): out of the way of the new
     * history first, to the arena's end */
    const uint8_t *staged = plan->scratch;
    if (inserts > 0 && staged >= h->arena + h->used &&
        staged < h->arena + h->arena_bytes &&
        (size_t)(staged - h->arena) < new_used) {
        size_t len = plan->scratch_used;
        if (new_used + len > h->arena_bytes) {
            return ctxc__fail_space(err, new_used + len - h->arena_bytes,
                                    "the new history needs %z arena bytes "
                                    "and its %z staged bytes beside them, the "
                                    "arena has %z",
                                    new_used, len, h->arena_bytes);
        }
        memmove(h->arena + h->arena_bytes - len, staged, len);
        staged = h->arena + h->arena_bytes - len;
    }
    /* 2. move the kept records, each once, then their slots; 3. copy the
     * inserted records into the gaps left between them */
    place_runs(h, plan, new_used, false);
    place_runs(h, plan, new_count * sizeof(ctxc_slot_t), true);
    /* the inserts' tokens as they are when they were counted with the
     * store's estimator, else counted again with it */
    bool counted = inserts > 0 && plan->counted_ == inserts &&
                   plan->counted_estimate_ == h->estimate &&
                   (h->estimate == ctxc_estimate_block_default ||
                    plan->counted_user_ == h->estimate_user);
    size_t j = 0, pos = 0;
    for (size_t k = 0; k < plan->count; k++) {
        const ctxc_plan_op_t *op = &plan->ops[k];
        if (op->kind == CTXC_PLAN_KEEP) { /* the kept slots' new offsets */
            for (size_t n = op->to - op->from; n > 0; n--, j++) {
                h->slots[j].offset = (uint32_t)pos;
                pos += h->slots[j].size;
            }
            continue;
        }
        memcpy(h->arena + pos, staged + op->offset, op->size);
        /* inserted entries are counted with the store's own estimator */
        ctxc_slot_t s = {(uint32_t)pos,   op->size,    op->tokens,
                         op->block_count, op->speaker, op->flags};
        if (!counted) {
            ctxc_entry_t e;
            ctxc__record_entry(h->arena + pos, &s, &e);
            s.tokens = ctxc__estimate_entry(h, &e);
        }
        h->slots[j++] = s;
        pos += op->size;
    }
    ctxc__store_commit(h, new_count, new_used);
    if (import_to > 0) {
        h->import_from_ = import_to;
    }
    return CTXC_OK;
}

/* ---- density results ----------------------------------------------------- */

void ctxc__density_init(ctxc_density_result_t *r, ctxc_work_t *work) {
    memset(r, 0, sizeof *r);
    r->removals = work->removals;
    r->cap_removals = work->cap;
    r->replacements = work->replacements;
    r->cap_replacements = work->cap;
    r->scratch = work->scratch;
    r->scratch_cap = work->scratch_cap;
}

ctxc_status_t ctxc__density_remove(ctxc_density_result_t *r, size_t index,
                                   ctxc_error_t *err) {
    if (r->n_removals >= r->cap_removals) {
        return ctxc__fail_space(err, 1, "density result holds %z removals",
                                r->cap_removals);
    }
    r->removals[r->n_removals++] = (uint32_t)index;
    return CTXC_OK;
}

ctxc_status_t ctxc__density_replace(ctxc_density_result_t *r, size_t index,
                                    const ctxc__entry_src_t *src,
                                    ctxc_estimate_fn est, void *user,
                                    ctxc_error_t *err) {
    if (r->n_replacements >= r->cap_replacements) {
        return ctxc__fail_space(err, 1, "density result holds %z replacements",
                                r->cap_replacements);
    }
    ctxc_plan_op_t op;
    ctxc_status_t st = ctxc__record_to_scratch(
        r->scratch, r->scratch_cap, &r->scratch_used, src, est, user, &op, err);
    if (st != CTXC_OK) {
        return st;
    }
    op.replaces = (uint32_t)index;
    r->replacements[r->n_replacements++] = op;
    ctxc__note_counted(&r->counted_estimate_, &r->counted_user_, &r->counted_,
                       est, user);
    return CTXC_OK;
}

#define MARK_KEEP 0xFFFFu
#define MARK_REMOVE 0xFFFEu

ctxc_status_t ctxc_density_validate(const ctxc_density_result_t *r,
                                    size_t count, uint16_t *mark,
                                    ctxc_error_t *err) {
    if (count > 0xFFFDu) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "too many entries");
    }
    for (size_t i = 0; i < count; i++) {
        mark[i] = MARK_KEEP;
    }
    for (size_t i = 0; i < r->n_removals; i++) {
        uint32_t idx = r->removals[i];
        if (idx >= count) {
            return ctxc__fail(err, CTXC_E_RANGE,
                              "density removal %z: entry %z does not exist "
                              "(%z entries)",
                              i, (size_t)idx, count);
        }
        if (mark[idx] != MARK_KEEP) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "entry %z is removed twice", (size_t)idx);
        }
        mark[idx] = MARK_REMOVE;
    }
    for (size_t i = 0; i < r->n_replacements; i++) {
        const ctxc_plan_op_t *op = &r->replacements[i];
        uint32_t idx = op->replaces;
        if (op->kind != CTXC_PLAN_INSERT || idx >= count) {
            return ctxc__fail(err, CTXC_E_RANGE,
                              "density replacement %z: entry %z does not exist "
                              "(%z entries)",
                              i, (size_t)idx, count);
        }
        if (r->scratch == NULL || op->offset > r->scratch_used ||
            op->size > r->scratch_used - op->offset) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "density replacement %z lies outside its scratch "
                              "area",
                              i);
        }
        if (mark[idx] == MARK_REMOVE) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "entry %z is both removed and replaced",
                              (size_t)idx);
        }
        if (mark[idx] != MARK_KEEP) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "entry %z is replaced twice", (size_t)idx);
        }
        mark[idx] = (uint16_t)i;
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_density_apply(ctxc_history_t *h,
                                 const ctxc_density_result_t *r,
                                 ctxc_work_t *work, ctxc_error_t *err) {
    if (h->frozen_ > 0) {
        return ctxc__frozen(h, 0, err);
    }
    if (work->cap < h->count) {
        return ctxc__fail_space(err, h->count - work->cap,
                                "work area holds %z entries, the history %z",
                                work->cap, h->count);
    }
    /* one mark per entry: keep, remove, or the replacement's number */
    uint16_t *mark = work->marks;
    ctxc_status_t st = ctxc_density_validate(r, h->count, mark, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (r->n_removals == 0 && r->n_replacements == 0) {
        return CTXC_OK;
    }
    ctxc_plan_t plan;
    ctxc_plan_init(&plan, work);
    plan.scratch = r->scratch;
    plan.scratch_used = r->scratch_used;
    plan.scratch_cap = r->scratch_cap;
    plan.counted_estimate_ = r->counted_estimate_;
    plan.counted_user_ = r->counted_user_;
    plan.counted_ = r->counted_;
    for (size_t i = 0; i < h->count; i++) {
        if (mark[i] == MARK_KEEP) {
            st = ctxc_plan_keep(&plan, i, i + 1, err);
        } else if (mark[i] == MARK_REMOVE) {
            continue;
        } else if (plan.count < plan.cap) {
            plan.ops[plan.count++] = r->replacements[mark[i]];
        } else {
            st = ctxc__fail_space(err, 1, "plan holds %z ops", plan.cap);
        }
        if (st != CTXC_OK) {
            return st;
        }
    }
    return ctxc_history_apply_plan(h, &plan, err);
}
