/*
 * ctxc — plain text as the JSON values of tool blocks (ctxc/history.h,
 * "Plain-text tool values").
 *
 * A tool's output, or a call's parameters, given as plain bytes becomes a
 * JSON string, escaped as JSON.stringify writes it (the canonical form the
 * store keeps): '"' and '\\' escaped, \b \f \n \r \t, the other control
 * characters as \u00XX, everything else as it is. A byte that does not
 * start a valid UTF-8 sequence (a stray continuation byte, a truncated or
 * overlong sequence, an encoded surrogate, a value over U+10FFFF) becomes
 * U+FFFD, one per byte: a device's text is stored whatever its bytes.
 *
 * ctxc_history_append_text_tool() escapes straight into the arena: the
 * escaped strings are staged at the end of the arena's free tail, then the
 * record is written from the front of the free tail (history.c's one
 * writer), its JSON fields copied from the staged strings. A record that
 * fits is never longer than what it copies still has to read, so each
 * copy lands at or before its source (memmove; see write_record). Nothing
 * outside the free tail is written before the record is committed.
 *
 * Separate from the store so that images that never call it do not link
 * it.
 */
#include <string.h>

#include "ctxc/history.h"
#include "error.h"
#include "json.h"
#include "record.h"
#include "sink.h"
#include "store.h"

/* The JSON string literal of text[0..n) (quotes included) into `o`. */
static void put_text_json(ctxc__sink_t *o, const char *text, size_t n) {
    const uint8_t *u = (const uint8_t *)text;
    ctxc__putc(o, '"');
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = ctxc__utf8_decode(u + i, n - i, &cp);
        if (k == 0) {
            cp = 0xFFFDu; /* a byte of no valid sequence */
            k = 1;
        }
        ctxc__json_escape_cp(o, cp);
        i += k;
    }
    ctxc__putc(o, '"');
}

ctxc_status_t ctxc_json_from_text(ctxc_str_t text, char *buf, size_t cap,
                                  ctxc_str_t *out, ctxc_error_t *err) {
    if (text.ptr == NULL && text.len != 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL text");
    }
    if (buf == NULL && cap != 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL buffer");
    }
    ctxc__sink_t m = {NULL, 0, 0};
    put_text_json(&m, text.ptr, text.len);
    size_t need = m.len;
    if (need > cap) {
        return ctxc__fail_space(err, need - cap,
                                "the JSON string needs %z bytes, %z given",
                                need, cap);
    }
    ctxc__sink_t o = {buf, cap, 0};
    put_text_json(&o, text.ptr, text.len);
    if (out != NULL) {
        out->ptr = buf;
        out->len = o.len;
    }
    return CTXC_OK;
}

/* ---- appending with text values ------------------------------------------ */

/* The entry source of ctxc_history_append_text_tool(): the fields of
 * in->blocks, with every JSON field (ctxc__block_desc's json bits: a
 * tool_call's parameters, a tool_response's result) replaced by its JSON
 * string, already canonical: the one staged at stage + offset (the staged
 * strings lie back to back in block order). While measuring (stage NULL,
 * into a sink without a buffer, which reads no source byte) the span has
 * the string's length and points at the text. */
typedef struct {
    const ctxc_entry_in_t *in;
    const char *stage; /* NULL: measuring */
    size_t next_block; /* the block after the last one produced */
    size_t next_off;   /* where its first staged string starts */
} text_src_t;

/* Puts the JSON strings of the JSON fields of blocks [0, n) into o, in
 * order (o->len grows by what they take). */
static void put_values(ctxc__sink_t *o, const ctxc_block_t *blocks,
                       size_t n) {
    for (size_t i = 0; i < n; i++) {
        const ctxc_block_t *b = &blocks[i];
        for (unsigned f = 0; f < ctxc__block_desc[b->type].nfields; f++) {
            ctxc_str_t v = ctxc__block_field(b, f);
            if (((ctxc__block_desc[b->type].json >> f) & 1u) != 0 &&
                v.ptr != NULL) {
                put_text_json(o, v.ptr, v.len);
            }
        }
    }
}

static ctxc_status_t text_block(void *ctx, size_t i, ctxc__block_src_t *out,
                                ctxc_error_t *err) {
    text_src_t *t = (text_src_t *)ctx;
    const ctxc_block_t *b = &t->in->blocks[i];
    if ((unsigned)b->type >= CTXC_BLOCK_TYPE_COUNT) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "block %z: unknown block type %u", i,
                          (unsigned)b->type);
    }
    if (i < t->next_block) { /* asked again from the start */
        t->next_block = 0;
        t->next_off = 0;
    }
    ctxc__sink_t m = {NULL, 0, t->next_off};
    put_values(&m, t->in->blocks + t->next_block, i - t->next_block);
    ctxc__block_src_of(b, CTXC__SRC_RAW, out);
    for (unsigned f = 0; f < ctxc__block_desc[b->type].nfields; f++) {
        if (((ctxc__block_desc[b->type].json >> f) & 1u) != 0 &&
            out->f[f].p != NULL) {
            size_t at = m.len;
            put_text_json(&m, out->f[f].p, out->f[f].n);
            if (t->stage != NULL) {
                out->f[f].p = t->stage + at;
            }
            out->f[f].n = m.len - at;
            out->f[f].kind = CTXC__SRC_VALID; /* canonical as written */
        }
    }
    t->next_block = i + 1;
    t->next_off = m.len;
    return CTXC_OK;
}

ctxc_status_t ctxc_history_append_text_tool(ctxc_history_t *h,
                                            const ctxc_entry_in_t *in,
                                            ctxc_error_t *err) {
    if (h == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL history");
    }
    ctxc__entry_src_t src;
    ctxc_status_t st = ctxc__entry_src_from_in(in, &src, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (h->count >= h->max_entries) {
        return ctxc__fail_space(
            err, 1, "history holds its maximum of %z entries", h->max_entries);
    }
    text_src_t t = {in, NULL, 0, 0};
    src.block = text_block;
    src.ctx = &t;
    /* measure the record (validating every other field) */
    ctxc__sink_t m = {NULL, 0, 0};
    st = ctxc__record_write(&src, &m, NULL, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t free_bytes = h->arena_bytes - h->used;
    if (m.len > free_bytes) {
        return ctxc__fail_space(err, m.len - free_bytes,
                                "entry needs %z arena bytes, %z free", m.len,
                                free_bytes);
    }
    /* stage the strings at the end of the free tail. The record is written
     * from h->used on; as it fits, the bytes it writes before a staged
     * string's copy ends never reach past that string's start (the record
     * still holds every later string), so no write reaches a string not
     * yet copied */
    ctxc__sink_t o = {NULL, 0, 0};
    put_values(&o, in->blocks, in->block_count);
    o.buf = (char *)h->arena + h->arena_bytes - o.len;
    o.cap = o.len;
    o.len = 0;
    put_values(&o, in->blocks, in->block_count);
    t.stage = o.buf;
    t.next_block = 0;
    t.next_off = 0;
    return ctxc__history_put(h, SIZE_MAX, &src, err);
}
