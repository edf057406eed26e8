/*
 * ctxc — pinning entries (ctxc_history_pin): the "pinned" key of an
 * entry's metadata, set or cleared in place, for the entry and every entry
 * tied to it by a tool call / response pair.
 *
 * The store's records are edited where they lie (record.h: the metadata
 * field follows the 4-byte header): a splice moves the rest of the arena
 * by the size difference. Every size is computed before the first byte
 * moves, so a pin that does not fit changes nothing.
 */
#include <string.h>

#include "ctxc/ctxc.h"
#include "error.h"
#include "json.h"
#include "pairing.h"
#include "record.h"
#include "store.h"
#include "strategies.h"

#define TARGET CTXC__SLOT_MARK /* transient: the entry's pin after the call */
#define ABSENT 0xFFFFFFFFu
/* In the record's flags byte only (never in a slot): the metadata was an
 * empty object `{}` when the pin was written, so the unpin gives `{}`
 * back, not an absent field. */
#define WAS_EMPTY 0x40u

static const char PIN_MEMBER[] = "\"pinned\":true";

static uint32_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); }

/* The metadata text of entry i (absent: ptr NULL). */
static ctxc_str_t meta_of(const ctxc_history_t *h, size_t i) {
    const uint8_t *rec = h->arena + h->slots[i].offset;
    uint32_t n = rd32(rec + 4);
    if (n == ABSENT) {
        return CTXC_STR_ABSENT;
    }
    return (ctxc_str_t){(const char *)rec + 8, n};
}

/* Walks the top-level members of a canonical object: *pos at a member's
 * first byte (after '{' or ','); its key span and the end of its value.
 * False at '}'. */
static bool next_member(ctxc_str_t o, size_t *pos, ctxc_str_t *key,
                        size_t *value, size_t *end) {
    size_t p = *pos;
    if (p >= o.len || o.ptr[p] != '"') {
        return false;
    }
    size_t k_end = ctxc__json_skip_value(o.ptr, o.len, p);
    if (k_end <= p || k_end >= o.len || o.ptr[k_end] != ':') {
        return false;
    }
    *key = (ctxc_str_t){o.ptr + p + 1, k_end - p - 2};
    *value = k_end + 1;
    *end = ctxc__json_skip_value(o.ptr, o.len, *value);
    *pos = *end < o.len && o.ptr[*end] == ',' ? *end + 1 : *end;
    return *end > *value && *end <= o.len;
}

static bool is_pinned_key(ctxc_str_t k) {
    return k.len == 6 && memcmp(k.ptr, "pinned", 6) == 0;
}

/* The length of a canonical object without its "pinned" members (2 for
 * "{}"), and whether it has any. */
static size_t unpinned_len(ctxc_str_t m, bool *any) {
    size_t pos = 1, value, end, w = 1, kept = 0;
    ctxc_str_t key;
    *any = false;
    while (next_member(m, &pos, &key, &value, &end)) {
        if (is_pinned_key(key)) {
            *any = true;
            continue;
        }
        w += (kept > 0 ? 1u : 0u) + (end - (size_t)(key.ptr - 1 - m.ptr));
        kept++;
    }
    return w + 1u;
}

/* The size change of entry i's record when its pin becomes `on`. */
static long pin_delta(const ctxc_history_t *h, size_t i, bool on) {
    ctxc_str_t m = meta_of(h, i);
    if (m.ptr == NULL) { /* absent -> {"pinned":true} (on only) */
        return on ? (long)(2u + sizeof PIN_MEMBER - 1u + 1u) : 0;
    }
    size_t pos = 1, value, end, members = 0;
    ctxc_str_t key;
    if (on) {
        while (next_member(m, &pos, &key, &value, &end)) {
            if (is_pinned_key(key)) { /* the first one counts */
                return 4L - (long)(end - value);
            }
            members++;
        }
        return (long)(sizeof PIN_MEMBER - 1u) + (members > 0 ? 1L : 0L);
    }
    bool any;
    size_t w = unpinned_len(m, &any);
    if (!any) {
        return 0;
    }
    bool keep_empty = (h->arena[h->slots[i].offset + 1] & WAS_EMPTY) != 0;
    return w == 2u && !keep_empty
               ? -(long)(m.len + 1u) /* the field becomes absent */
               : (long)w - (long)m.len;
}

/* Opens (n > 0) or closes (n < 0) a gap at arena offset `at` of entry i:
 * moves the rest of the arena, fixes the offsets and the entry's size. */
static void splice(ctxc_history_t *h, size_t i, size_t at, long n) {
    size_t tail = h->used - at;
    if (n > 0) {
        memmove(h->arena + at + (size_t)n, h->arena + at, tail);
    } else if (n < 0) {
        memmove(h->arena + at, h->arena + at + (size_t)(-n),
                tail - (size_t)(-n));
    }
    h->used = (size_t)((long)h->used + n);
    h->slots[i].size = (uint32_t)((long)h->slots[i].size + n);
    for (size_t j = i + 1; j < h->count; j++) {
        h->slots[j].offset = (uint32_t)((long)h->slots[j].offset + n);
    }
}

/* Rewrites entry i's metadata so that its pin is `on` (pin_delta said
 * what it costs; the room is there). */
static void pin_write(ctxc_history_t *h, size_t i, bool on) {
    size_t rec = h->slots[i].offset;
    ctxc_str_t m = meta_of(h, i);
    size_t mstart = rec + 8; /* the metadata text in the arena */
    bool was_empty = on && m.ptr != NULL && m.len == 2u; /* "{}" */
    bool keep_empty = !on && (h->arena[rec + 1] & WAS_EMPTY) != 0;
    if (m.ptr == NULL) {     /* absent: {"pinned":true} */
        size_t body = 2u + sizeof PIN_MEMBER - 1u;
        splice(h, i, mstart, (long)(body + 1u));
        uint8_t *p = h->arena + rec;
        wr32(p + 4, (uint32_t)body);
        p[8] = '{';
        memcpy(p + 9, PIN_MEMBER, sizeof PIN_MEMBER - 1u);
        p[8 + body - 1u] = '}';
        p[8 + body] = '\0';
    } else if (on) {
        long d = pin_delta(h, i, true);
        size_t pos = 1, value, end, members = 0;
        ctxc_str_t key;
        bool done = false;
        while (!done && next_member(m, &pos, &key, &value, &end)) {
            members++;
            if (is_pinned_key(key)) { /* its value becomes true */
                splice(h, i, mstart + value, 4L - (long)(end - value));
                memcpy(h->arena + mstart + value, "true", 4);
                done = true;
            }
        }
        if (!done) { /* a new member before the closing brace */
            size_t at = mstart + m.len - 1u;
            splice(h, i, at, d);
            uint8_t *p = h->arena + at;
            if (members > 0) {
                *p++ = ',';
            }
            memcpy(p, PIN_MEMBER, sizeof PIN_MEMBER - 1u);
        }
        wr32(h->arena + rec + 4, (uint32_t)((long)m.len + d));
    } else {
        bool any;
        size_t w_len = unpinned_len(m, &any);
        if (w_len == 2u && !keep_empty) { /* nothing but pins: it goes */
            splice(h, i, mstart, -(long)(m.len + 1u));
            wr32(h->arena + rec + 4, ABSENT);
        } else { /* the other members move forward over the pins */
            char *t = (char *)h->arena + mstart;
            size_t pos = 1, value, end, w = 1, kept = 0;
            ctxc_str_t key;
            while (
                next_member((ctxc_str_t){t, m.len}, &pos, &key, &value, &end)) {
                if (is_pinned_key(key)) {
                    continue;
                }
                size_t from = (size_t)(key.ptr - 1 - t);
                if (kept++ > 0) {
                    t[w++] = ',';
                }
                memmove(t + w, t + from, end - from);
                w += end - from;
            }
            t[w++] = '}';
            t[w] = '\0';
            splice(h, i, mstart + w + 1u, (long)w - (long)m.len);
            wr32(h->arena + rec + 4, (uint32_t)w);
        }
    }
    uint8_t *flags = &h->arena[h->slots[i].offset + 1];
    if (was_empty) {
        *flags |= WAS_EMPTY;
    }
    if (on) {
        *flags |= CTXC_ENTRY_PINNED;
        h->slots[i].flags |= CTXC_ENTRY_PINNED;
    } else {
        *flags &= (uint8_t) ~(CTXC_ENTRY_PINNED | WAS_EMPTY);
        h->slots[i].flags &= (uint8_t)~CTXC_ENTRY_PINNED;
    }
}

/* Spreads the TARGET mark over tool pairs until nothing changes: `on`
 * marks the unmarked side of a pair with one marked side, else clears the
 * marked side. */
static void spread(ctxc_history_t *h, ctxc__pairs_t *pr, bool on) {
    const ctxc_view_t *v = pr->v;
    for (bool changed = true; changed;) {
        changed = false;
        for (size_t a = 0; a < h->count; a++) {
            if (h->slots[a].speaker != CTXC_SPEAKER_AI) {
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
                                      CTXC__PAIR_WINDOW, &q, &k, NULL)) {
                    continue;
                }
                bool ma = (h->slots[a].flags & TARGET) != 0;
                bool mq = (h->slots[q].flags & TARGET) != 0;
                if (ma == mq) {
                    continue;
                }
                size_t x = on ? (ma ? q : a) : (ma ? a : q);
                if (on) {
                    h->slots[x].flags |= TARGET;
                } else {
                    h->slots[x].flags &= (uint8_t)~TARGET;
                }
                changed = true;
            }
        }
    }
}

static void clear_targets(ctxc_history_t *h) {
    for (size_t i = 0; i < h->count; i++) {
        h->slots[i].flags &= (uint8_t)~TARGET;
    }
}

ctxc_status_t ctxc_history_pin(ctxc_history_t *h, size_t index, bool pinned,
                               ctxc_error_t *err) {
    if (h == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL history");
    }
    if (index >= h->count) {
        return ctxc__fail(err, CTXC_E_RANGE,
                          "entry %z does not exist (%z entries)", index,
                          h->count);
    }
    /* the pins as they will be: every pin spread over its pairs first (a
     * pin read from a file may be on one side only), then this entry's
     * group pinned or cleared */
    ctxc_view_t all = {h->slots, h->arena, NULL, h->count, h->count};
    ctxc__pairs_t pr;
    ctxc__pairs_lazy(&pr, &all, NULL, 0);
    for (size_t i = 0; i < h->count; i++) {
        if (h->slots[i].flags & CTXC_ENTRY_PINNED) {
            h->slots[i].flags |= TARGET;
        }
    }
    spread(h, &pr, true);
    if (pinned) {
        h->slots[index].flags |= TARGET;
        spread(h, &pr, true);
    } else {
        h->slots[index].flags &= (uint8_t)~TARGET;
        spread(h, &pr, false);
    }
    /* a compression job's range (entries [0, frozen_)) does not change
     * while the job runs: its request and plan are made from those bytes */
    for (size_t i = 0; i < h->frozen_ && i < h->count; i++) {
        bool want = (h->slots[i].flags & TARGET) != 0;
        bool is = (h->slots[i].flags & CTXC_ENTRY_PINNED) != 0;
        if (want != is) {
            clear_targets(h);
            return ctxc__frozen(h, i, err);
        }
    }
    /* what the rewrites cost, before any byte moves */
    long total = 0;
    for (size_t i = 0; i < h->count; i++) {
        bool want = (h->slots[i].flags & TARGET) != 0;
        bool is = (h->slots[i].flags & CTXC_ENTRY_PINNED) != 0;
        if (want != is) {
            total += pin_delta(h, i, want);
        }
    }
    if (total > 0 && (size_t)total > h->arena_bytes - h->used) {
        size_t need = (size_t)total - (h->arena_bytes - h->used);
        clear_targets(h);
        return ctxc__fail_space(err, need,
                                "pinning needs %z more arena bytes for the "
                                "metadata of the entries it marks",
                                need);
    }
    /* shrinking rewrites first, then growing ones: the arena never holds
     * more than the result */
    for (int grow = 0; grow < 2; grow++) {
        for (size_t i = 0; i < h->count; i++) {
            bool want = (h->slots[i].flags & TARGET) != 0;
            bool is = (h->slots[i].flags & CTXC_ENTRY_PINNED) != 0;
            if (want != is && (pin_delta(h, i, want) > 0) == (grow == 1)) {
                pin_write(h, i, want);
            }
        }
    }
    clear_targets(h);
    if (h->used > h->hwm_used) {
        h->hwm_used = h->used;
    }
    ctxc__pairing_stale(h);
    return CTXC_OK;
}
