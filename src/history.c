/*
 * ctxc — history store over caller-owned memory.
 *
 * Arena record of one entry (integers in native byte order, unaligned):
 *   u8 speaker | u8 flags | u16 block_count | u32 meta_len | meta bytes, NUL
 *   then per block: u8 type, then per field of that type (ctxc__block_desc):
 *   u32 len (0xFFFFFFFF = absent) | bytes | NUL
 * Records are packed back to back in entry order; slot i describes entry i.
 */
#include <string.h>

#include "ctxc/ctxc.h"
#include "ctxc_internal.h"

#define ABSENT_LEN 0xFFFFFFFFu
#define REC_HEADER 8u
#define SLOT_MARK 0x80u /* transient mark used by remove(); never stored */

const ctxc__block_desc_t ctxc__block_desc[CTXC_BLOCK_TYPE_COUNT] = {
    [CTXC_BLOCK_TEXT] = {"text", 1, {{"text", 0, 0}}},
    [CTXC_BLOCK_TOOL_CALL] =
        {"tool_call", 3, {{"id", 0, 0}, {"name", 0, 0}, {"parameters", 0, 1}}},
    [CTXC_BLOCK_TOOL_RESPONSE] = {"tool_response",
                                  4,
                                  {{"callId", 0, 0},
                                   {"toolName", 0, 0},
                                   {"result", 0, 1},
                                   {"error", 1, 0}}},
    [CTXC_BLOCK_THINKING] = {"thinking",
                             2,
                             {{"thought", 0, 0}, {"signature", 1, 0}}},
    [CTXC_BLOCK_CODE] = {"code", 2, {{"code", 0, 0}, {"language", 1, 0}}},
    [CTXC_BLOCK_MEDIA] = {"media",
                          5,
                          {{"mimeType", 0, 0},
                           {"data", 0, 0},
                           {"encoding", 0, 0},
                           {"caption", 1, 0},
                           {"filename", 1, 0}}},
};

static ctxc_str_t *field_ptr(ctxc_block_t *b, unsigned i) {
    switch (b->type) {
    case CTXC_BLOCK_TEXT:
        return i == 0 ? &b->u.text.text : NULL;
    case CTXC_BLOCK_TOOL_CALL: {
        ctxc_str_t *f[] = {&b->u.tool_call.id, &b->u.tool_call.name,
                           &b->u.tool_call.parameters};
        return i < 3 ? f[i] : NULL;
    }
    case CTXC_BLOCK_TOOL_RESPONSE: {
        ctxc_str_t *f[] = {
            &b->u.tool_response.call_id, &b->u.tool_response.tool_name,
            &b->u.tool_response.result, &b->u.tool_response.error};
        return i < 4 ? f[i] : NULL;
    }
    case CTXC_BLOCK_THINKING: {
        ctxc_str_t *f[] = {&b->u.thinking.thought, &b->u.thinking.signature};
        return i < 2 ? f[i] : NULL;
    }
    case CTXC_BLOCK_CODE: {
        ctxc_str_t *f[] = {&b->u.code.code, &b->u.code.language};
        return i < 2 ? f[i] : NULL;
    }
    case CTXC_BLOCK_MEDIA: {
        ctxc_str_t *f[] = {&b->u.media.mime_type, &b->u.media.data,
                           &b->u.media.encoding, &b->u.media.caption,
                           &b->u.media.filename};
        return i < 5 ? f[i] : NULL;
    }
    }
    return NULL;
}

ctxc_str_t ctxc__block_field(const ctxc_block_t *b, unsigned i) {
    ctxc_str_t *p = field_ptr((ctxc_block_t *)(uintptr_t)b, i);
    return p != NULL ? *p : CTXC_STR_ABSENT;
}

void ctxc__block_set_field(ctxc_block_t *b, unsigned i, ctxc_str_t v) {
    ctxc_str_t *p = field_ptr(b, i);
    if (p != NULL) {
        *p = v;
    }
}

ctxc_str_t ctxc_str(const char *cstr) {
    ctxc_str_t s = {cstr, cstr != NULL ? strlen(cstr) : 0};
    return s;
}

static const char *const speaker_names[] = {"human", "ai", "tool"};

const char *ctxc_speaker_name(ctxc_speaker_t speaker) {
    return (unsigned)speaker < 3u ? speaker_names[speaker] : "?";
}

const char *ctxc_block_type_name(ctxc_block_type_t type) {
    return (unsigned)type < CTXC_BLOCK_TYPE_COUNT ? ctxc__block_desc[type].name
                                                  : "?";
}

/* ---- raw record access --------------------------------------------------- */

static uint32_t rd32(const uint8_t *p) {
    uint32_t v;
    memcpy(&v, p, sizeof v);
    return v;
}

static void wr32(uint8_t *p, uint32_t v) { memcpy(p, &v, sizeof v); }

static const uint8_t *read_str(const uint8_t *p, ctxc_str_t *out) {
    uint32_t n = rd32(p);
    p += 4;
    if (n == ABSENT_LEN) {
        out->ptr = NULL;
        out->len = 0;
        return p;
    }
    out->ptr = (const char *)p;
    out->len = n;
    return p + n + 1;
}

static void record_entry(const uint8_t *rec, const ctxc_slot_t *s,
                         ctxc_entry_t *e) {
    e->speaker = (ctxc_speaker_t)s->speaker;
    e->flags = s->flags & (uint8_t)~SLOT_MARK;
    e->block_count = s->block_count;
    e->tokens = s->tokens;
    e->blocks_ = read_str(rec + 4, &e->metadata);
    e->end_ = rec + s->size;
}

static void slot_entry(const ctxc_history_t *h, size_t i, ctxc_entry_t *e) {
    record_entry(h->arena + h->slots[i].offset, &h->slots[i], e);
}

bool ctxc_entry_next_block(const ctxc_entry_t *entry, const uint8_t **cursor,
                           ctxc_block_t *out) {
    const uint8_t *p = *cursor == NULL ? entry->blocks_ : *cursor;
    if (p >= entry->end_) {
        return false;
    }
    memset(out, 0, sizeof *out);
    out->type = (ctxc_block_type_t)p[0];
    p++;
    const ctxc__block_desc_t *d = &ctxc__block_desc[out->type];
    for (unsigned f = 0; f < d->nfields; f++) {
        ctxc_str_t v;
        p = read_str(p, &v);
        ctxc__block_set_field(out, f, v);
    }
    *cursor = p;
    return true;
}

ctxc_status_t ctxc_entry_block(const ctxc_entry_t *entry, size_t block_index,
                               ctxc_block_t *out) {
    if (block_index >= entry->block_count) {
        return CTXC_E_RANGE;
    }
    const uint8_t *cur = NULL;
    for (size_t i = 0; i <= block_index; i++) {
        ctxc_entry_next_block(entry, &cur, out);
    }
    return CTXC_OK;
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

/* ---- writing records ----------------------------------------------------- */

static ctxc_status_t emit_field(ctxc__sink_t *out, const ctxc__src_t *f,
                                bool json, ctxc_error_t *err) {
    size_t at = out->len;
    uint8_t lenbuf[4] = {0, 0, 0, 0};
    ctxc__put(out, (const char *)lenbuf, 4);
    ctxc_status_t st;
    if (json) {
        st = ctxc__json_canon(f->p, f->n, f->kind, CTXC_CFG_JSON_MAX_DEPTH, out,
                              err);
    } else {
        st = ctxc__write_decoded(out, f->p, f->n, f->kind, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    size_t n = out->len - at - 4;
    if (n >= ABSENT_LEN) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE, "field larger than 4 GiB");
    }
    if (out->buf != NULL && out->len <= out->cap) {
        wr32((uint8_t *)out->buf + at, (uint32_t)n);
    }
    ctxc__putc(out, '\0');
    return CTXC_OK;
}

static void emit_absent(ctxc__sink_t *out) {
    uint8_t lenbuf[4];
    wr32(lenbuf, ABSENT_LEN);
    ctxc__put(out, (const char *)lenbuf, 4);
}

static bool src_is_object(const ctxc__src_t *s) {
    for (size_t i = 0; i < s->n; i++) {
        char c = s->p[i];
        if (c != ' ' && c != '\t' && c != '\n' && c != '\r') {
            return c == '{';
        }
    }
    return false;
}

/* Writes (or, with out->buf == NULL, measures and validates) a record. */
static ctxc_status_t emit_record(const ctxc__entry_src_t *src,
                                 ctxc__sink_t *out, ctxc_error_t *err) {
    uint8_t hdr[4] = {(uint8_t)src->speaker, 0, 0, 0};
    uint16_t nb = (uint16_t)src->block_count;
    memcpy(hdr + 2, &nb, sizeof nb);
    ctxc__put(out, (const char *)hdr, 4);
    ctxc_status_t st;
    if (src->metadata.p == NULL) {
        emit_absent(out);
    } else {
        if (!src_is_object(&src->metadata)) {
            return ctxc__fail(err, CTXC_E_PARSE,
                              "metadata must be a JSON object");
        }
        if ((st = emit_field(out, &src->metadata, true, err)) != CTXC_OK) {
            ctxc__err_prefix(err, "metadata");
            return st;
        }
    }
    for (size_t i = 0; i < src->block_count; i++) {
        ctxc__block_src_t b;
        memset(&b, 0, sizeof b);
        if ((st = src->block(src->ctx, i, &b, err)) != CTXC_OK) {
            return st;
        }
        if ((unsigned)b.type >= CTXC_BLOCK_TYPE_COUNT) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "block %z: unknown block type %u", i,
                              (unsigned)b.type);
        }
        const ctxc__block_desc_t *d = &ctxc__block_desc[b.type];
        ctxc__putc(out, (char)b.type);
        for (unsigned f = 0; f < d->nfields; f++) {
            const ctxc__field_desc_t *fd = &d->fields[f];
            if (b.f[f].p == NULL) {
                if (!fd->optional) {
                    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                      "block %z (%s): missing field '%s'", i,
                                      d->name, fd->key);
                }
                emit_absent(out);
                continue;
            }
            if ((st = emit_field(out, &b.f[f], fd->json != 0, err)) !=
                CTXC_OK) {
                ctxc__err_prefix(err, "block %z (%s) field '%s'", i, d->name,
                                 fd->key);
                return st;
            }
        }
    }
    return CTXC_OK;
}

/* Validates an entry source and measures its record. */
static ctxc_status_t measure_record(const ctxc__entry_src_t *src, size_t *size,
                                    ctxc_error_t *err) {
    if ((unsigned)src->speaker > (unsigned)CTXC_SPEAKER_TOOL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "unknown speaker %u",
                          (unsigned)src->speaker);
    }
    if (src->block_count == 0 || src->block_count > 65535u) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "an entry needs 1..65535 blocks (got %z)",
                          src->block_count);
    }
    ctxc__sink_t m = {NULL, 0, 0};
    ctxc_status_t st = emit_record(src, &m, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (m.len > 0x7FFFFFFFu) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE, "entry larger than 2 GiB");
    }
    *size = m.len;
    return CTXC_OK;
}

static uint8_t flags_of(const ctxc_str_t *meta) {
    static const struct {
        const char *key;
        uint8_t flag;
    } keys[] = {{"isSummary", CTXC_ENTRY_IS_SUMMARY},
                {"synthetic", CTXC_ENTRY_SYNTHETIC},
                {"pinned", CTXC_ENTRY_PINNED}};
    uint8_t flags = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        ctxc_str_t v;
        if (ctxc__json_find_key(meta->ptr, meta->len, keys[k].key, &v) &&
            v.len == 4 && memcmp(v.ptr, "true", 4) == 0) {
            flags |= keys[k].flag;
        }
    }
    return flags;
}

uint32_t ctxc__estimate_with(ctxc_estimate_fn fn, void *user,
                             const ctxc_entry_t *e) {
    uint64_t sum = 0;
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    if (fn == NULL) {
        fn = ctxc_estimate_block_default;
        user = NULL;
    }
    while (ctxc_entry_next_block(e, &cur, &b)) {
        sum += fn(user, &b);
    }
    return sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
}

uint32_t ctxc__estimate_entry(const ctxc_history_t *h, const ctxc_entry_t *e) {
    return ctxc__estimate_with(h->estimate, h->estimate_user, e);
}

/* Fills slot i from the record at `offset` (flags, tokens). */
static void fill_slot(ctxc_history_t *h, size_t i, size_t offset, size_t size,
                      const ctxc__entry_src_t *src) {
    ctxc_slot_t *s = &h->slots[i];
    s->offset = (uint32_t)offset;
    s->size = (uint32_t)size;
    s->speaker = (uint8_t)src->speaker;
    s->block_count = (uint16_t)src->block_count;
    s->flags = 0;
    s->tokens = 0;
    ctxc_entry_t e;
    slot_entry(h, i, &e);
    s->flags = flags_of(&e.metadata);
    h->arena[offset + 1] = s->flags;
    e.flags = s->flags;
    s->tokens = ctxc__estimate_entry(h, &e);
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

static void note_hwm(ctxc_history_t *h, size_t peak) {
    if (peak > h->hwm_used) {
        h->hwm_used = peak;
    }
    if (h->count > h->hwm_count) {
        h->hwm_count = h->count;
    }
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
    if (!replace && h->count >= h->max_entries) {
        return ctxc__fail_space(
            err, 1, "history holds its maximum of %z entries", h->max_entries);
    }
    /* pass 1: validate and measure */
    size_t size;
    ctxc_status_t st = measure_record(src, &size, err);
    if (st != CTXC_OK) {
        return st;
    }
    st = ctxc__pairing_check_put(h, replace ? index : h->count, replace, src,
                                 err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t free_bytes = h->arena_bytes - h->used;
    if (!replace) {
        if (size > free_bytes) {
            return ctxc__fail_space(err, size - free_bytes,
                                    "entry needs %z arena bytes, %z free", size,
                                    free_bytes);
        }
        ctxc__sink_t w = {(char *)h->arena + h->used, size, 0};
        (void)emit_record(src, &w, NULL);
        size_t off = h->used;
        h->used += size;
        h->count++;
        fill_slot(h, h->count - 1, off, size, src);
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
    if (alias) {
        /* stage the new record after the used bytes, then rotate it into
         * place: [old][tail][new] -> [old][new][tail] -> [new][tail] */
        ctxc__sink_t w = {(char *)h->arena + h->used, size, 0};
        (void)emit_record(src, &w, NULL);
        peak = h->used + size;
        rotate(h->arena + off + old, tail, size);
        memmove(h->arena + off, h->arena + off + old, size + tail);
    } else {
        memmove(h->arena + off + size, h->arena + off + old, tail);
        ctxc__sink_t w = {(char *)h->arena + off, size, 0};
        (void)emit_record(src, &w, NULL);
        peak = h->used - old + size;
    }
    h->used = h->used - old + size;
    for (size_t i = index + 1; i < h->count; i++) {
        h->slots[i].offset = (uint32_t)(h->slots[i].offset + size - old);
    }
    h->token_sum -= s->tokens;
    fill_slot(h, index, off, size, src);
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
    for (size_t i = 0; i < h->count; i++) {
        ctxc_slot_t s = h->slots[i];
        if (s.flags & SLOT_MARK) {
            h->token_sum -= s.tokens;
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
}

uint64_t ctxc_history_tokens_estimated(const ctxc_history_t *h) {
    return h->token_sum;
}

uint64_t ctxc_history_tokens(const ctxc_history_t *h) {
    int64_t sum = (int64_t)h->token_sum + h->anchor_delta;
    return sum < 0 ? 0u : (uint64_t)sum;
}

void ctxc_history_anchor_tokens(ctxc_history_t *h, uint64_t reported) {
    h->anchor_delta = (int64_t)reported - (int64_t)h->token_sum;
}

/* ---- views --------------------------------------------------------------- */

bool ctxc_entry_has_content(const ctxc_entry_t *entry) {
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    while (ctxc_entry_next_block(entry, &cur, &b)) {
        if (b.type == CTXC_BLOCK_TEXT && b.u.text.text.len == 0) {
            continue;
        }
        if (b.type == CTXC_BLOCK_THINKING && b.u.thinking.thought.len == 0) {
            continue;
        }
        return true;
    }
    return false;
}

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
    record_entry(view->arena_ + s->offset, s, out);
    return CTXC_OK;
}

/* ---- records outside the store (plans, density results) ------------------ */

ctxc_status_t ctxc__record_to_scratch(uint8_t *scratch, size_t cap,
                                      size_t *used,
                                      const ctxc__entry_src_t *src,
                                      ctxc_estimate_fn est, void *user,
                                      ctxc_plan_op_t *op, ctxc_error_t *err) {
    size_t size;
    ctxc_status_t st = measure_record(src, &size, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t free_bytes = cap - *used;
    if (size > free_bytes) {
        return ctxc__fail_space(err, size - free_bytes,
                                "work scratch area full: an inserted entry "
                                "needs %z bytes, %z free "
                                "(CTXC_CFG_WORK_SCRATCH_BYTES)",
                                size, free_bytes);
    }
    uint8_t *rec = scratch + *used;
    ctxc__sink_t w = {(char *)rec, size, 0};
    (void)emit_record(src, &w, NULL);
    ctxc_slot_t slot = {
        0, (uint32_t)size, 0, (uint16_t)src->block_count, (uint8_t)src->speaker,
        0};
    ctxc_entry_t e;
    record_entry(rec, &slot, &e);
    slot.flags = flags_of(&e.metadata);
    rec[1] = slot.flags;
    e.flags = slot.flags;
    memset(op, 0, sizeof *op);
    op->kind = CTXC_PLAN_INSERT;
    op->speaker = slot.speaker;
    op->flags = slot.flags;
    op->block_count = slot.block_count;
    op->offset = (uint32_t)*used;
    op->size = (uint32_t)size;
    op->tokens = ctxc__estimate_with(est, user, &e);
    op->replaces = UINT32_MAX;
    *used += size;
    return CTXC_OK;
}

void ctxc__op_entry(const uint8_t *scratch, const ctxc_plan_op_t *op,
                    ctxc_entry_t *e) {
    ctxc_slot_t slot = {op->offset,      op->size,    op->tokens,
                        op->block_count, op->speaker, op->flags};
    record_entry(scratch + op->offset, &slot, e);
}

ctxc_status_t ctxc_history_apply_plan(ctxc_history_t *h,
                                      const ctxc_plan_t *plan,
                                      ctxc_error_t *err) {
    if (h == NULL || plan == NULL || (plan->count > 0 && plan->ops == NULL)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL plan or history");
    }
    /* 1. validate and size the new history */
    size_t next = 0;
    size_t new_count = 0;
    size_t new_used = 0;
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
                op->size < REC_HEADER) {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "plan op %z inserts bytes outside the plan's "
                                  "scratch area",
                                  k);
            }
            new_count++;
            new_used += op->size;
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
    /* tool calls and responses stay paired */
    ctxc_status_t st = ctxc__pairing_check_plan(h, plan, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* 2. drop every entry no KEEP covers, compacting what stays */
    size_t k = 0;
    for (size_t i = 0; i < h->count; i++) {
        while (k < plan->count &&
               (plan->ops[k].kind != CTXC_PLAN_KEEP || plan->ops[k].to <= i)) {
            k++;
        }
        bool kept = k < plan->count && plan->ops[k].from <= i;
        if (!kept) {
            h->slots[i].flags |= SLOT_MARK;
        }
    }
    compact_marked(h);
    /* 3. place everything from the back: kept records only move up */
    size_t kept_left = h->count;
    size_t pos_slot = new_count;
    size_t pos_byte = new_used;
    for (size_t j = plan->count; j-- > 0;) {
        const ctxc_plan_op_t *op = &plan->ops[j];
        if (op->kind == CTXC_PLAN_KEEP) {
            for (size_t n = op->to - op->from; n > 0; n--) {
                ctxc_slot_t s = h->slots[--kept_left];
                pos_byte -= s.size;
                memmove(h->arena + pos_byte, h->arena + s.offset, s.size);
                s.offset = (uint32_t)pos_byte;
                h->slots[--pos_slot] = s;
            }
        } else {
            pos_byte -= op->size;
            memcpy(h->arena + pos_byte, plan->scratch + op->offset, op->size);
            ctxc_slot_t s = {(uint32_t)pos_byte, op->size,    op->tokens,
                             op->block_count,    op->speaker, op->flags};
            h->slots[--pos_slot] = s;
        }
    }
    h->count = new_count;
    h->used = new_used;
    /* inserted entries are recounted with the store's own estimator */
    size_t at = 0;
    for (size_t j = 0; j < plan->count; j++) {
        const ctxc_plan_op_t *op = &plan->ops[j];
        if (op->kind == CTXC_PLAN_KEEP) {
            at += op->to - op->from;
            continue;
        }
        ctxc_entry_t e;
        slot_entry(h, at, &e);
        h->slots[at++].tokens = ctxc__estimate_entry(h, &e);
    }
    h->token_sum = 0;
    for (size_t i = 0; i < h->count; i++) {
        h->token_sum += h->slots[i].tokens;
    }
    h->anchor_delta = 0;
    note_hwm(h, h->used);
    return CTXC_OK;
}

/* ---- statistics ---------------------------------------------------------- */

/* Whether a block of `type` whose id (call id or response callId) is `id`
 * exists in entries [from, to). */
static bool find_id(const ctxc_history_t *h, size_t from, size_t to,
                    ctxc_block_type_t type, ctxc_str_t id) {
    for (size_t i = from; i < to; i++) {
        ctxc_entry_t e;
        slot_entry(h, i, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type == type && ctxc__str_eq(type == CTXC_BLOCK_TOOL_CALL
                                                   ? b.u.tool_call.id
                                                   : b.u.tool_response.call_id,
                                               id)) {
                return true;
            }
        }
    }
    return false;
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
                if (!indexed &&
                    !find_id(h, i + 1, h->count, CTXC_BLOCK_TOOL_RESPONSE,
                             b.u.tool_call.id)) {
                    out->unpaired_calls++;
                }
            } else if (b.type == CTXC_BLOCK_TOOL_RESPONSE) {
                out->tool_responses++;
                if (!indexed && !find_id(h, 0, i, CTXC_BLOCK_TOOL_CALL,
                                         b.u.tool_response.call_id)) {
                    out->unpaired_responses++;
                }
            }
        }
    }
}

/* ---- metadata ------------------------------------------------------------ */

ctxc_status_t ctxc_entry_meta_find(const ctxc_entry_t *entry, const char *key,
                                   ctxc_str_t *value) {
    if (entry->metadata.ptr == NULL ||
        !ctxc__json_find_key(entry->metadata.ptr, entry->metadata.len, key,
                             value)) {
        return CTXC_E_NOT_FOUND;
    }
    return CTXC_OK;
}
