/*
 * ctxc — history store over caller-owned memory.
 *
 * The arena holds entry records (record.h) packed back to back in entry
 * order; slot i describes entry i.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "error.h"
#include "id_index.h"
#include "pairing.h"
#include "record.h"
#include "sink.h"
#include "store.h"
#include "text_stats.h"

#define REC_HEADER CTXC__REC_HEADER
#define SLOT_MARK                                                              \
    CTXC__SLOT_MARK /* transient mark of remove(); never stored                \
                     */

static void slot_entry(const ctxc_history_t *h, size_t i, ctxc_entry_t *e) {
    ctxc__record_entry(h->arena + h->slots[i].offset, &h->slots[i], e);
}

/* ---- init / clear / get -------------------------------------------------- */

ctxc_status_t ctxc_history_init(ctxc_history_t *h, ctxc_slot_t *slots,
                                size_t max_entries, void *arena,
                                size_t arena_bytes, ctxc_error_t *err) {
    if (h == NULL || slots == NULL || arena == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "history, slots and arena must not be NULL");
    }
    if (max_entries == 0 || max_entries > 65535u) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "max_entries must be 1..65535 (got %z)", max_entries);
    }
    if (arena_bytes < 64u || arena_bytes > 0x7FFFFFFFu) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "arena_bytes must be 64 .. 2^31-1 (got %z)",
                          arena_bytes);
    }
    memset(h, 0, sizeof *h);
    h->slots = slots;
    h->max_entries = max_entries;
    h->arena = (uint8_t *)arena;
    h->arena_bytes = arena_bytes;
    h->estimate = ctxc_estimate_block_default;
    return CTXC_OK;
}

void ctxc_history_clear(ctxc_history_t *h) {
    h->frozen_ = 0;
    if (h->import_from_ != 0) {
        h->import_from_ = 1; /* an open import's entries start again */
    }
    h->gen_++;
    h->count = 0;
    h->used = 0;
    h->token_sum = 0;
    h->anchor_delta = 0;
    ctxc__pairing_stale(h);
}

size_t ctxc_history_count(const ctxc_history_t *h) { return h->count; }

ctxc_status_t ctxc_history_get(const ctxc_history_t *h, size_t index,
                               ctxc_entry_t *out) {
    if (index >= h->count) {
        return CTXC_E_RANGE;
    }
    slot_entry(h, index, out);
    return CTXC_OK;
}

/* Fills slot i from the record at `offset` (flags, tokens: `tokens` is the
 * default estimator's, counted by the record writer). */
static void fill_slot(ctxc_history_t *h, size_t i, size_t offset, size_t size,
                      const ctxc__entry_src_t *src, uint32_t tokens) {
    ctxc_slot_t *s = &h->slots[i];
    s->offset = (uint32_t)offset;
    s->size = (uint32_t)size;
    s->speaker = (uint8_t)src->speaker;
    s->block_count = (uint16_t)src->block_count;
    s->flags = h->arena[offset + 1]; /* set by ctxc__record_write */
    s->tokens = tokens;
#ifdef CTXC__SCAN_STATS
    if (h->estimate != ctxc_estimate_block_default)
#endif
    {
        ctxc_entry_t e;
        slot_entry(h, i, &e);
        s->tokens = ctxc__estimate_entry(h, &e);
    }
}

static bool in_arena(const ctxc_history_t *h, const char *p) {
    uintptr_t a = (uintptr_t)h->arena;
    uintptr_t x = (uintptr_t)p;
    return p != NULL && x >= a && x < a + h->arena_bytes;
}

static bool src_aliases(const ctxc_history_t *h, const ctxc__entry_src_t *src) {
    if (in_arena(h, src->metadata.p)) {
        return true;
    }
    for (size_t i = 0; i < src->block_count; i++) {
        ctxc__block_src_t b;
        memset(&b, 0, sizeof b);
        if (src->block(src->ctx, i, &b, NULL) != CTXC_OK) {
            return true;
        }
        for (unsigned f = 0; f < CTXC__MAX_FIELDS; f++) {
            if (in_arena(h, b.f[f].p)) {
                return true;
            }
        }
    }
    return false;
}

static void reverse(uint8_t *p, size_t n) {
    for (size_t i = 0, j = n; i + 1 < j; i++, j--) {
        uint8_t t = p[i];
        p[i] = p[j - 1];
        p[j - 1] = t;
    }
}

/* Rotates p[0..a+b) so that the last b bytes come first. */
static void rotate(uint8_t *p, size_t a, size_t b) {
    reverse(p, a);
    reverse(p + a, b);
    reverse(p, a + b);
}

CTXC__NOINLINE static void note_hwm(ctxc_history_t *h, size_t peak) {
    if (peak > h->hwm_used) {
        h->hwm_used = peak;
    }
    if (h->count > h->hwm_count) {
        h->hwm_count = h->count;
    }
}

ctxc_status_t ctxc__frozen(const ctxc_history_t *h, size_t index,
                           ctxc_error_t *err) {
    return ctxc__fail(err, CTXC_E_BUSY,
                      "entry %z is in the range of a compression in progress "
                      "(entries [0, %z)): it can change once the job has "
                      "ended or was cancelled",
                      index, h->frozen_);
}

ctxc_status_t ctxc__history_put(ctxc_history_t *h, size_t index,
                                const ctxc__entry_src_t *src,
                                ctxc_error_t *err) {
    bool replace = index != SIZE_MAX;
    if (replace && index >= h->count) {
        return ctxc__fail(err, CTXC_E_RANGE,
                          "entry %z does not exist (%z entries)", index,
                          h->count);
    }
    if (replace && index < h->frozen_) {
        return ctxc__frozen(h, index, err);
    }
    if (!replace && h->count >= h->max_entries) {
        return ctxc__fail_space(
            err, 1, "history holds its maximum of %z entries", h->max_entries);
    }
    /* one pass: validate and write the record into the free tail of the
     * arena; it only becomes part of the store when committed below */
    size_t free_bytes = h->arena_bytes - h->used;
    ctxc__sink_t w = {(char *)h->arena + h->used, free_bytes, 0};
    uint32_t tokens = 0;
    ctxc_status_t st = ctxc__record_write(src, &w, &tokens, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t size = w.len;
    st = ctxc__pairing_check_put(h, replace ? index : h->count, replace, src,
                                 err);
    if (st != CTXC_OK) {
        return st;
    }
    if (!replace) {
        if (size > free_bytes) {
            return ctxc__fail_space(err, size - free_bytes,
                                    "entry needs %z arena bytes, %z free", size,
                                    free_bytes);
        }
        size_t off = h->used;
        h->used += size;
        h->count++;
        fill_slot(h, h->count - 1, off, size, src, tokens);
        h->token_sum += h->slots[h->count - 1].tokens;
        note_hwm(h, h->used);
        ctxc__pairing_appended(h);
        return CTXC_OK;
    }

    ctxc_slot_t *s = &h->slots[index];
    size_t off = s->offset;
    size_t old = s->size;
    size_t tail = h->used - (off + old);
    bool alias = src_aliases(h, src);
    size_t need = alias ? size : (size > old ? size - old : 0);
    if (need > free_bytes) {
        return ctxc__fail_space(
            err, need - free_bytes,
            "replacement needs %z free arena bytes, %z free", need, free_bytes);
    }
    size_t peak;
    if (size <= free_bytes) {
        /* the new record is staged after the used bytes: rotate it into
         * place: [old][tail][new] -> [old][new][tail] -> [new][tail] */
        peak = h->used + size;
        rotate(h->arena + off + old, tail, size);
        memmove(h->arena + off, h->arena + off + old, size + tail);
    } else {
        /* no room to stage (sources outside the arena): make room in place
         * and write the (now validated and measured) record again there */
        memmove(h->arena + off + size, h->arena + off + old, tail);
        ctxc__sink_t w2 = {(char *)h->arena + off, size, 0};
        (void)ctxc__record_write(src, &w2, &tokens, NULL);
        peak = h->used - old + size;
    }
    h->used = h->used - old + size;
    for (size_t i = index + 1; i < h->count; i++) {
        h->slots[i].offset = (uint32_t)(h->slots[i].offset + size - old);
    }
    h->token_sum -= s->tokens;
    fill_slot(h, index, off, size, src, tokens);
    h->token_sum += s->tokens;
    h->anchor_delta = 0;
    note_hwm(h, peak);
    ctxc__pairing_stale(h);
    return CTXC_OK;
}

/* ---- public append / replace --------------------------------------------- */

static ctxc_status_t put_in(ctxc_history_t *h, size_t index,
                            const ctxc_entry_in_t *in, ctxc_error_t *err) {
    if (h == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL history");
    }
    ctxc__entry_src_t src;
    ctxc_status_t st = ctxc__entry_src_from_in(in, &src, err);
    if (st != CTXC_OK) {
        return st;
    }
    return ctxc__history_put(h, index, &src, err);
}

ctxc_status_t ctxc_history_append(ctxc_history_t *h, const ctxc_entry_in_t *in,
                                  ctxc_error_t *err) {
    return put_in(h, SIZE_MAX, in, err);
}

ctxc_status_t ctxc_history_replace(ctxc_history_t *h, size_t index,
                                   const ctxc_entry_in_t *in,
                                   ctxc_error_t *err) {
    if (index == SIZE_MAX) {
        return ctxc__fail(err, CTXC_E_RANGE, "entry index out of range");
    }
    return put_in(h, index, in, err);
}

/* ---- removal ------------------------------------------------------------- */

/* Drops every marked slot and compacts the arena. */
static void compact_marked(ctxc_history_t *h) {
    size_t w = 0;
    size_t wpos = 0;
    size_t first = h->import_from_; /* 1 + an open import's first entry */
    for (size_t i = 0; i < h->count; i++) {
        ctxc_slot_t s = h->slots[i];
        if (s.flags & SLOT_MARK) {
            h->token_sum -= s.tokens;
            if (i + 1u < first) {
                h->import_from_--; /* removed before the import's entries */
            }
            continue;
        }
        if (s.offset != wpos) {
            memmove(h->arena + wpos, h->arena + s.offset, s.size);
            s.offset = (uint32_t)wpos;
        }
        h->slots[w++] = s;
        wpos += s.size;
    }
    h->count = w;
    h->used = wpos;
    h->anchor_delta = 0;
    ctxc__pairing_stale(h);
}

ctxc_status_t ctxc_history_remove(ctxc_history_t *h, const size_t *indexes,
                                  size_t n, ctxc_error_t *err) {
    if (n == 0) {
        return CTXC_OK;
    }
    if (indexes == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "indexes is NULL");
    }
    for (size_t k = 0; k < n; k++) {
        size_t i = indexes[k];
        ctxc_status_t st = CTXC_OK;
        if (i >= h->count) {
            st =
                ctxc__fail(err, CTXC_E_RANGE,
                           "entry %z does not exist (%z entries)", i, h->count);
        } else if (i < h->frozen_) {
            st = ctxc__frozen(h, i, err);
        } else if (h->slots[i].flags & SLOT_MARK) {
            st = ctxc__fail(err, CTXC_E_INVALID_ARG,
                            "entry %z listed twice for removal", i);
        }
        if (st != CTXC_OK) {
            for (size_t j = 0; j < k; j++) { /* undo the marks */
                h->slots[indexes[j]].flags &= (uint8_t)~SLOT_MARK;
            }
            return st;
        }
        h->slots[i].flags |= SLOT_MARK;
    }
    compact_marked(h);
    return CTXC_OK;
}

ctxc_status_t ctxc_history_remove_range(ctxc_history_t *h, size_t from,
                                        size_t to, ctxc_error_t *err) {
    if (from > to || to > h->count) {
        return ctxc__fail(err, CTXC_E_RANGE,
                          "range [%z, %z) is outside the %z entries", from, to,
                          h->count);
    }
    if (from < to && from < h->frozen_) {
        return ctxc__frozen(h, from, err);
    }
    for (size_t i = from; i < to; i++) {
        h->slots[i].flags |= SLOT_MARK;
    }
    if (from < to) {
        compact_marked(h);
    }
    return CTXC_OK;
}

/* ---- usage, tokens ------------------------------------------------------- */

void ctxc_history_usage(const ctxc_history_t *h, ctxc_history_usage_t *out) {
    out->entries_used = h->count;
    out->entries_max = h->max_entries;
    out->entries_hwm = h->hwm_count;
    out->bytes_used = h->used;
    out->bytes_max = h->arena_bytes;
    out->bytes_hwm = h->hwm_used;
}

void ctxc_history_set_estimator(ctxc_history_t *h, ctxc_estimate_fn fn,
                                void *user) {
    h->estimate = fn != NULL ? fn : ctxc_estimate_block_default;
    h->estimate_user = fn != NULL ? user : NULL;
    h->token_sum = 0;
    for (size_t i = 0; i < h->count; i++) {
        ctxc_entry_t e;
        slot_entry(h, i, &e);
        h->slots[i].tokens = ctxc__estimate_entry(h, &e);
        h->token_sum += h->slots[i].tokens;
    }
    h->anchor_delta = 0;
    h->edits_++; /* a step's "not smaller" decisions follow the estimate */
}

uint64_t ctxc_history_tokens_estimated(const ctxc_history_t *h) {
    return h->token_sum;
}

CTXC__SIZE_NOINLINE uint64_t ctxc_history_tokens(const ctxc_history_t *h) {
    int64_t sum = (int64_t)h->token_sum + h->anchor_delta;
    return sum < 0 ? 0u : (uint64_t)sum;
}

void ctxc_history_anchor_tokens(ctxc_history_t *h, uint64_t reported) {
    h->anchor_delta = (int64_t)reported - (int64_t)h->token_sum;
}

/* ---- views --------------------------------------------------------------- */
ctxc_status_t ctxc_view_init(ctxc_view_t *view, const ctxc_history_t *h,
                             ctxc_view_kind_t kind, uint16_t *map,
                             size_t map_cap, ctxc_error_t *err) {
    if (map_cap < h->count) {
        return ctxc__fail_space(err, h->count - map_cap,
                                "view map holds %z of %z entries", map_cap,
                                h->count);
    }
    size_t n = 0;
    for (size_t i = 0; i < h->count; i++) {
        if (kind == CTXC_VIEW_CURATED &&
            h->slots[i].speaker == CTXC_SPEAKER_AI) {
            ctxc_entry_t e;
            slot_entry(h, i, &e);
            if (!ctxc_entry_has_content(&e)) {
                continue;
            }
        }
        map[n++] = (uint16_t)i;
    }
    view->slots_ = h->slots;
    view->arena_ = h->arena;
    view->map = map;
    view->count = n;
    view->store_count = h->count;
    return CTXC_OK;
}

size_t ctxc_view_index(const ctxc_view_t *view, size_t pos) {
    return view->map != NULL ? view->map[pos] : pos;
}

ctxc_status_t ctxc_view_get(const ctxc_view_t *view, size_t pos,
                            ctxc_entry_t *out) {
    if (pos >= view->count) {
        return CTXC_E_RANGE;
    }
    const ctxc_slot_t *s = &view->slots_[ctxc_view_index(view, pos)];
    ctxc__record_entry(view->arena_ + s->offset, s, out);
    return CTXC_OK;
}

/* ---- store steps of a plan application (plan.c) -------------------------- */

void ctxc__store_commit(ctxc_history_t *h, size_t count, size_t used) {
    h->count = count;
    h->used = used;
    h->token_sum = 0;
    for (size_t i = 0; i < h->count; i++) {
        h->token_sum += h->slots[i].tokens;
    }
    h->anchor_delta = 0;
    note_hwm(h, h->used);
    ctxc__pairing_stale(h);
}

/* ---- statistics ---------------------------------------------------------- */

/* Whether a block of `type` whose id (call id or response callId) is `id`
 * exists in entries [from, to). */
/* Whether the tool block with `id` at store index i has its partner: a
 * tool_call before it (`call`) or a tool_response after it. A scan. */
static bool has_partner(const ctxc_history_t *h, size_t i, bool call,
                        ctxc_str_t id) {
    ctxc_view_t all = {h->slots, h->arena, NULL, h->count, h->count};
    size_t p, k;
    return ctxc__ids_seek(&all, i, id, call, SIZE_MAX, NULL, NULL, &p, &k,
                          NULL);
}

void ctxc_history_stats(const ctxc_history_t *h, ctxc_history_stats_t *out) {
    memset(out, 0, sizeof *out);
    out->entries = h->count;
    out->tokens = ctxc_history_tokens(h);
    /* with the store's id index, each id is counted once there */
    bool indexed = ctxc__pairing_unpaired(h, &out->unpaired_calls,
                                          &out->unpaired_responses);
    for (size_t i = 0; i < h->count; i++) {
        ctxc_entry_t e;
        slot_entry(h, i, &e);
        out->per_speaker[e.speaker]++;
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            out->per_block_type[b.type]++;
            if (b.type == CTXC_BLOCK_TOOL_CALL) {
                out->tool_calls++;
                if (!indexed && !has_partner(h, i, false, b.u.tool_call.id)) {
                    out->unpaired_calls++;
                }
            } else if (b.type == CTXC_BLOCK_TOOL_RESPONSE) {
                out->tool_responses++;
                if (!indexed &&
                    !has_partner(h, i, true, b.u.tool_response.call_id)) {
                    out->unpaired_responses++;
                }
            }
        }
    }
}
