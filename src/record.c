/*
 * ctxc — entry records: block descriptors, writing a record from an entry
 * source (once, into free memory), reading it back, per-entry estimates.
 * Layout: see record.h.
 */
#include <stddef.h>
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "error.h"
#include "json.h"
#include "record.h"
#include "sink.h"
#include "text_stats.h"

#define ABSENT_LEN 0xFFFFFFFFu

/* F(i): the bit of field i (optional, json). */
#define F(i) (1u << (i))
const ctxc__block_desc_t ctxc__block_desc[CTXC_BLOCK_TYPE_COUNT] = {
    [CTXC_BLOCK_TEXT] = {"text", 1, 0, 0, {"text"}},
    [CTXC_BLOCK_TOOL_CALL] =
        {"tool_call", 3, 0, F(2), {"id", "name", "parameters"}},
    [CTXC_BLOCK_TOOL_RESPONSE] = {"tool_response",
                                  4,
                                  F(3),
                                  F(2),
                                  {"callId", "toolName", "result", "error"}},
    [CTXC_BLOCK_THINKING] = {"thinking", 2, F(1), 0, {"thought", "signature"}},
    [CTXC_BLOCK_CODE] = {"code", 2, F(1), 0, {"code", "language"}},
    [CTXC_BLOCK_MEDIA] = {"media",
                          5,
                          F(3) | F(4),
                          0,
                          {"mimeType", "data", "encoding", "caption",
                           "filename"}},
};
#undef F

/* Where field i of each block type is in a ctxc_block_t (the order of
 * ctxc__block_desc). */
#define FIELD_AT(m) (uint16_t) offsetof(ctxc_block_t, u.m)
static const uint16_t field_at[CTXC_BLOCK_TYPE_COUNT][CTXC__MAX_FIELDS] = {
    [CTXC_BLOCK_TEXT] = {FIELD_AT(text.text)},
    [CTXC_BLOCK_TOOL_CALL] = {FIELD_AT(tool_call.id), FIELD_AT(tool_call.name),
                              FIELD_AT(tool_call.parameters)},
    [CTXC_BLOCK_TOOL_RESPONSE] = {FIELD_AT(tool_response.call_id),
                                  FIELD_AT(tool_response.tool_name),
                                  FIELD_AT(tool_response.result),
                                  FIELD_AT(tool_response.error)},
    [CTXC_BLOCK_THINKING] = {FIELD_AT(thinking.thought),
                             FIELD_AT(thinking.signature)},
    [CTXC_BLOCK_CODE] = {FIELD_AT(code.code), FIELD_AT(code.language)},
    [CTXC_BLOCK_MEDIA] = {FIELD_AT(media.mime_type), FIELD_AT(media.data),
                          FIELD_AT(media.encoding), FIELD_AT(media.caption),
                          FIELD_AT(media.filename)},
};

/* The fields of every type lie one after the other from the union's start
 * (ctxc_entry_next_block fills them so). */
_Static_assert(sizeof(((ctxc_block_t *)0)->u) ==
                       CTXC__MAX_FIELDS * sizeof(ctxc_str_t) &&
                   offsetof(ctxc_block_t, u.media.filename) ==
                       offsetof(ctxc_block_t, u) + 4u * sizeof(ctxc_str_t) &&
                   offsetof(ctxc_block_t, u.tool_response.error) ==
                       offsetof(ctxc_block_t, u) + 3u * sizeof(ctxc_str_t) &&
                   offsetof(ctxc_block_t, u.tool_call.parameters) ==
                       offsetof(ctxc_block_t, u) + 2u * sizeof(ctxc_str_t) &&
                   offsetof(ctxc_block_t, u.code.language) ==
                       offsetof(ctxc_block_t, u) + sizeof(ctxc_str_t) &&
                   offsetof(ctxc_block_t, u.thinking.signature) ==
                       offsetof(ctxc_block_t, u) + sizeof(ctxc_str_t),
               "block fields are consecutive strings from the union's start");

static ctxc_str_t *field_ptr(ctxc_block_t *b, unsigned i) {
    if ((unsigned)b->type >= CTXC_BLOCK_TYPE_COUNT ||
        i >= ctxc__block_desc[b->type].nfields) {
        return NULL;
    }
    return (ctxc_str_t *)(void *)((char *)b + field_at[b->type][i]);
}

ctxc_str_t ctxc__block_field(const ctxc_block_t *b, unsigned i) {
    ctxc_str_t *p = field_ptr((ctxc_block_t *)(uintptr_t)b, i);
    return p != NULL ? *p : CTXC_STR_ABSENT;
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

#if defined(__GNUC__) && defined(CTXC__HOST_FAST)
#define PREFETCH(p) __builtin_prefetch(p)
#else
#define PREFETCH(p) ((void)0)
#endif

CTXC__SIZE_NOINLINE static const uint8_t *read_str(const uint8_t *p,
                                                   ctxc_str_t *out) {
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

void ctxc__record_entry(const uint8_t *rec, const ctxc_slot_t *s,
                        ctxc_entry_t *e) {
    e->speaker = (ctxc_speaker_t)s->speaker;
    e->flags = s->flags & (uint8_t)~CTXC__SLOT_MARK;
    e->block_count = s->block_count;
    e->tokens = s->tokens;
    e->blocks_ = read_str(rec + 4, &e->metadata);
    e->end_ = rec + s->size;
    /* the last field's length is read before the entry's blocks are done
     * with: its cache line is asked for now, while the first ones are read */
    PREFETCH(e->end_ - 1);
}

bool ctxc_entry_next_block(const ctxc_entry_t *entry, const uint8_t **cursor,
                           ctxc_block_t *out) {
    const uint8_t *p = *cursor == NULL ? entry->blocks_ : *cursor;
    if (p >= entry->end_) {
        return false;
    }
    out->type = (ctxc_block_type_t)p[0];
    p++;
    /* the fields, in order from the union's start (field_at), then the
     * union's other bytes zeroed: not a memset of the whole block per
     * block read (a thirtieth of an import on the board) */
    ctxc_str_t *fields = (ctxc_str_t *)(void *)&out->u;
    unsigned nf = ctxc__block_desc[out->type].nfields;
    unsigned f = 0;
    for (; f < nf; f++) { /* read_str, in line: the hottest loop of a step */
        uint32_t n = rd32(p);
        p += 4;
        if (n == ABSENT_LEN) {
            fields[f].ptr = NULL;
            fields[f].len = 0;
        } else {
            fields[f].ptr = (const char *)p;
            fields[f].len = n;
            p += (size_t)n + 1u;
        }
    }
    for (; f < CTXC__MAX_FIELDS; f++) {
        fields[f].ptr = NULL;
        fields[f].len = 0;
    }
    *cursor = p;
    if (p < entry->end_) {
        PREFETCH(p); /* the next block's header */
    }
    return true;
}

/* The record of the block after the one at p, read from lengths only. */
static const uint8_t *skip_block(const uint8_t *p) {
    unsigned n = ctxc__block_desc[p[0]].nfields;
    p++;
    for (unsigned f = 0; f < n; f++) {
        uint32_t len = rd32(p);
        p += 4;
        if (len != ABSENT_LEN) {
            p += (size_t)len + 1;
        }
    }
    return p;
}

ctxc_status_t ctxc_entry_block(const ctxc_entry_t *entry, size_t block_index,
                               ctxc_block_t *out) {
    if (block_index >= entry->block_count) {
        return CTXC_E_RANGE;
    }
    const uint8_t *cur = entry->blocks_;
    for (size_t i = 0; i < block_index; i++) {
        cur = skip_block(cur);
    }
    ctxc_entry_next_block(entry, &cur, out);
    return CTXC_OK;
}

const uint8_t *ctxc__entry_peek(const ctxc_entry_t *e, const uint8_t *cur,
                                unsigned i, ctxc_block_type_t *type,
                                ctxc_str_t *field) {
    const uint8_t *p = cur == NULL ? e->blocks_ : cur;
    if (p >= e->end_) {
        return NULL;
    }
    unsigned n = ctxc__block_desc[p[0]].nfields;
    *type = (ctxc_block_type_t)p[0];
    *field = CTXC_STR_ABSENT;
    const uint8_t *f = p + 1;
    for (unsigned k = 0; k < n; k++) {
        uint32_t len = rd32(f);
        if (k == i) {
            if (len != ABSENT_LEN) {
                field->ptr = (const char *)f + 4;
                field->len = len;
            }
            break;
        }
        f += 4;
        if (len != ABSENT_LEN) {
            f += (size_t)len + 1;
        }
    }
    return skip_block(p);
}

bool ctxc__entry_find_first_field(const ctxc_entry_t *e, ctxc_block_type_t type,
                                  ctxc_str_t value, size_t *block,
                                  ctxc_block_t *out) {
    const uint8_t *cur = e->blocks_;
    for (size_t k = 0;; k++) {
        ctxc_block_type_t t;
        ctxc_str_t f;
        const uint8_t *next = ctxc__entry_peek(e, cur, 0, &t, &f);
        if (next == NULL) {
            return false;
        }
        /* memcmp, not ctxc__str_eq's byte loop: ids of one provider share
         * a long prefix ("toolu_01...") */
        if (t == type && f.len == value.len &&
            (f.len == 0 || memcmp(f.ptr, value.ptr, f.len) == 0)) {
            ctxc_entry_next_block(e, &cur, out); /* only this one decoded */
            *block = k;
            return true;
        }
        cur = next;
    }
}

/* ---- writing records ----------------------------------------------------- */

static ctxc_status_t emit_field(ctxc__sink_t *out, const ctxc__src_t *f,
                                bool json, ctxc_error_t *err) {
    size_t at = out->len;
    uint8_t lenbuf[4] = {0, 0, 0, 0};
    ctxc__put(out, (const char *)lenbuf, 4);
    ctxc_status_t st;
    if (json && f->kind == CTXC__SRC_VALID) {
        ctxc__put(out, f->p, f->n); /* canonical already */
        st = CTXC_OK;
    } else if (json) {
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

/* Writes a record; with `tokens`, also sums the default estimate of its
 * blocks: the one the source brings, else counted on the block just
 * written (while it is in the cache). */
static ctxc_status_t emit_record(const ctxc__entry_src_t *src,
                                 ctxc__sink_t *out, uint64_t *tokens,
                                 ctxc_error_t *err) {
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
        size_t at = out->len;
        ctxc__putc(out, (char)b.type);
        for (unsigned f = 0; f < d->nfields; f++) {
            const char *key = d->keys[f];
            if (b.f[f].p == NULL) {
                if (((d->optional >> f) & 1u) == 0) {
                    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                      "block %z (%s): missing field '%s'", i,
                                      d->name, key);
                }
                emit_absent(out);
                continue;
            }
            if ((st = emit_field(out, &b.f[f], ((d->json >> f) & 1u) != 0,
                                 err)) != CTXC_OK) {
                ctxc__err_prefix(err, "block %z (%s) field '%s'", i, d->name,
                                 key);
                return st;
            }
        }
#ifdef CTXC__SCAN_STATS
        if (tokens != NULL && b.has_tokens) {
            *tokens += b.tokens;
        } else if (tokens != NULL && out->buf != NULL && out->len <= out->cap) {
            ctxc_entry_t e;
            memset(&e, 0, sizeof e);
            e.blocks_ = (const uint8_t *)out->buf + at;
            e.end_ = (const uint8_t *)out->buf + out->len;
            const uint8_t *cur = NULL;
            ctxc_block_t blk;
            (void)ctxc_entry_next_block(&e, &cur, &blk);
            *tokens += ctxc_estimate_block_default(NULL, &blk);
        }
#else
        (void)at;
        (void)tokens;
#endif
    }
    return CTXC_OK;
}

/* The entry flags of a canonical metadata object: the first occurrence of
 * a key counts, like ctxc_entry_meta_find. */
static uint8_t flags_of(const ctxc_str_t *meta) {
    static const char *const keys[] = {"isSummary", "synthetic", "pinned"};
    static const uint8_t key_len[] = {9, 9, 6};
    static const uint8_t key_flag[] = {CTXC_ENTRY_IS_SUMMARY,
                                       CTXC_ENTRY_SYNTHETIC, CTXC_ENTRY_PINNED};
    const char *o = meta->ptr;
    size_t len = meta->len;
    uint8_t flags = 0;
    /* most metadata names none of them: no walk over its members unless
     * one of the names follows a quote somewhere (in canonical JSON these
     * names are never written with escapes). The walk compares keys as
     * decoded strings: on the board it took a twentieth of an import. */
    if (len == 0) { /* no metadata (o may be NULL: no o + len) */
        return 0;
    }
    bool named = false;
    const char *end = o + len;
    for (const char *q = o;
         !named && (q = memchr(q, '"', (size_t)(end - q))) != NULL;) {
        q++;
        for (size_t k = 0; k < 3 && !named; k++) {
            size_t kl = key_len[k];
            named = (size_t)(end - q) > kl && q[0] == keys[k][0] &&
                    memcmp(q, keys[k], kl) == 0 && q[kl] == '"';
        }
    }
    if (!named) {
        return 0;
    }
    for (size_t k = 0; k < 3; k++) {
        ctxc_str_t v;
        if (ctxc__json_find_key(o, len, keys[k], &v) && v.len == 4 &&
            memcmp(v.ptr, "true", 4) == 0) {
            flags |= key_flag[k];
        }
    }
    return flags;
}

ctxc_status_t ctxc__record_write(const ctxc__entry_src_t *src,
                                 ctxc__sink_t *out, uint32_t *tokens,
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
    size_t start = out->len;
    uint64_t sum = 0;
    ctxc_status_t st = emit_record(src, out, tokens != NULL ? &sum : NULL, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t size = out->len - start;
    if (size > 0x7FFFFFFFu) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE, "entry larger than 2 GiB");
    }
    if (out->buf != NULL && out->len <= out->cap) {
        uint8_t *rec = (uint8_t *)out->buf + start;
        ctxc_str_t meta;
        (void)read_str(rec + 4, &meta);
        rec[1] = flags_of(&meta);
    }
    if (tokens != NULL) {
        *tokens = sum > UINT32_MAX ? UINT32_MAX : (uint32_t)sum;
    }
    return CTXC_OK;
}

uint32_t ctxc__estimate_with(ctxc_estimate_fn fn, void *user,
                             const ctxc_entry_t *e) {
    uint32_t sum = 0; /* saturating */
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    if (fn == NULL) {
        fn = ctxc_estimate_block_default;
        user = NULL;
    }
    while (ctxc_entry_next_block(e, &cur, &b)) {
        uint32_t t = fn(user, &b);
        sum = sum + t < sum ? UINT32_MAX : sum + t;
    }
    return sum;
}

uint32_t ctxc__estimate_entry(const ctxc_history_t *h, const ctxc_entry_t *e) {
    return ctxc__estimate_with(h->estimate, h->estimate_user, e);
}

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

/* ---- records outside the store (plans, density results) ------------------ */

ctxc_status_t ctxc__record_to_scratch(uint8_t *scratch, size_t cap,
                                      size_t *used,
                                      const ctxc__entry_src_t *src,
                                      ctxc_estimate_fn est, void *user,
                                      ctxc_plan_op_t *op, ctxc_error_t *err) {
    size_t free_bytes = cap - *used;
    uint8_t *rec = scratch + *used;
    ctxc__sink_t w = {(char *)rec, free_bytes, 0};
    uint32_t tokens = 0;
    ctxc_status_t st = ctxc__record_write(src, &w, &tokens, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t size = w.len;
    if (size > free_bytes) {
        return ctxc__fail_space(err, size - free_bytes,
                                "work scratch area full: an inserted entry "
                                "needs %z bytes, %z free "
                                "(CTXC_CFG_WORK_SCRATCH_BYTES)",
                                size, free_bytes);
    }
    ctxc_slot_t slot = {0,
                        (uint32_t)size,
                        0,
                        (uint16_t)src->block_count,
                        (uint8_t)src->speaker,
                        rec[1]};
    ctxc_entry_t e;
    ctxc__record_entry(rec, &slot, &e);
    memset(op, 0, sizeof *op);
    op->kind = CTXC_PLAN_INSERT;
    op->speaker = slot.speaker;
    op->flags = slot.flags;
    op->block_count = slot.block_count;
    op->offset = (uint32_t)*used;
    op->size = (uint32_t)size;
#ifdef CTXC__SCAN_STATS
    op->tokens = est == NULL || est == ctxc_estimate_block_default
                     ? tokens
                     : ctxc__estimate_with(est, user, &e);
#else
    op->tokens = ctxc__estimate_with(est, user, &e);
#endif
    op->replaces = UINT32_MAX;
    *used += size;
    return CTXC_OK;
}

void ctxc__op_entry(const uint8_t *scratch, const ctxc_plan_op_t *op,
                    ctxc_entry_t *e) {
    ctxc_slot_t slot = {op->offset,      op->size,    op->tokens,
                        op->block_count, op->speaker, op->flags};
    ctxc__record_entry(scratch + op->offset, &slot, e);
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

/* ---- entries given as ctxc_entry_in_t ------------------------------------ */

void ctxc__block_src_of(const ctxc_block_t *b, ctxc__src_kind_t kind,
                        ctxc__block_src_t *out) {
    memset(out, 0, sizeof *out);
    out->type = b->type;
    const uint16_t *at = field_at[b->type];
    for (unsigned f = 0; f < ctxc__block_desc[b->type].nfields; f++) {
        const ctxc_str_t *v =
            (const ctxc_str_t *)(const void *)((const char *)b + at[f]);
        out->f[f].p = v->ptr;
        out->f[f].n = v->len;
        out->f[f].kind = kind;
    }
}

static ctxc_status_t block_from_in(void *ctx, size_t i, ctxc__block_src_t *out,
                                   ctxc_error_t *err) {
    const ctxc_entry_in_t *in = (const ctxc_entry_in_t *)ctx;
    const ctxc_block_t *b = &in->blocks[i];
    if ((unsigned)b->type >= CTXC_BLOCK_TYPE_COUNT) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "block %z: unknown block type %u", i,
                          (unsigned)b->type);
    }
    ctxc__block_src_of(b, CTXC__SRC_RAW, out);
    return CTXC_OK;
}

ctxc_status_t ctxc__entry_src_from_in(const ctxc_entry_in_t *in,
                                      ctxc__entry_src_t *src,
                                      ctxc_error_t *err) {
    if (in == NULL || (in->blocks == NULL && in->block_count != 0)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL entry");
    }
    src->speaker = in->speaker;
    src->block_count = in->block_count;
    src->block = block_from_in;
    src->ctx = (void *)(uintptr_t)in;
    src->metadata.p = in->metadata.ptr;
    src->metadata.n = in->metadata.len;
    src->metadata.kind = CTXC__SRC_RAW;
    return CTXC_OK;
}
