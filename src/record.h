/*
 * ctxc — entry records (private header): the byte layout of one entry in a
 * history arena or a scratch area, how it is written from an entry source
 * and read back.
 *
 * Record (integers in native byte order, unaligned):
 *   u8 speaker | u8 flags | u16 block_count | u32 meta_len | meta bytes, NUL
 *   then per block: u8 type, then per field of that type (ctxc__block_desc):
 *   u32 len (0xFFFFFFFF = absent) | bytes | NUL
 * Strings are stored decoded (UTF-8), JSON values in canonical form.
 */
#ifndef CTXC_RECORD_H
#define CTXC_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/strategy.h"
#include "json.h"
#include "sink.h"

/* Byte equality of two strings (absent and empty compare equal). */
static inline bool ctxc__str_eq(ctxc_str_t a, ctxc_str_t b) {
    if (a.len != b.len) {
        return false;
    }
    for (size_t i = 0; i < a.len; i++) {
        if (a.ptr[i] != b.ptr[i]) {
            return false;
        }
    }
    return true;
}

/* ---- block layout -------------------------------------------------------- */

#define CTXC__MAX_FIELDS 5

/* A block type: its name and its fields' interchange keys; bit f of
 * `optional` / `json`: field f may be absent / its value is a JSON value,
 * not a string (bits instead of a struct per field: 28 bytes a type
 * instead of 48 on 32-bit targets). */
typedef struct {
    const char *name;
    uint8_t nfields;
    uint8_t optional;
    uint8_t json;
    const char *keys[CTXC__MAX_FIELDS];
} ctxc__block_desc_t;

_Static_assert(CTXC__MAX_FIELDS <= 8, "a field's bit fits uint8_t");

extern const ctxc__block_desc_t ctxc__block_desc[CTXC_BLOCK_TYPE_COUNT];

/* Field i of a block (order of ctxc__block_desc). */
ctxc_str_t ctxc__block_field(const ctxc_block_t *b, unsigned i);

/* ---- record writer (history.c) -------------------------------------------
 * The store writes entries from "sources": each field is a span plus how to
 * read it. Used by the public append/replace (raw strings, JSON text) and by
 * the importer (JSON string bodies and JSON value spans, decoded while they
 * are written into the arena). */

typedef struct {
    const char *p; /* NULL = absent */
    size_t n;
    ctxc__src_kind_t kind; /* for JSON fields: how the JSON text is read */
} ctxc__src_t;

typedef struct {
    ctxc_block_type_t type;
    ctxc__src_t f[CTXC__MAX_FIELDS];
    /* Optional: what ctxc_estimate_block_default() gives for this block,
     * when the source knows it already (the importer counts while it
     * scans); the record writer then does not count it again. */
    bool has_tokens;
    uint32_t tokens;
} ctxc__block_src_t;

/* Produces block i (0-based, called with i = 0..n-1 in order, possibly
 * several times). Returns CTXC_OK or an error (err set). */
typedef ctxc_status_t (*ctxc__block_fn)(void *ctx, size_t i,
                                        ctxc__block_src_t *out,
                                        ctxc_error_t *err);

typedef struct {
    ctxc_speaker_t speaker;
    size_t block_count;
    ctxc__block_fn block;
    void *ctx;
    ctxc__src_t metadata; /* JSON object, or absent */
} ctxc__entry_src_t;

/* A block source over the fields of `b` (type < CTXC_BLOCK_TYPE_COUNT),
 * each read as `kind`. */
void ctxc__block_src_of(const ctxc_block_t *b, ctxc__src_kind_t kind,
                        ctxc__block_src_t *out);

/* An entry source over a ctxc_entry_in_t (the public append/replace and
 * plan inserts). */
ctxc_status_t ctxc__entry_src_from_in(const ctxc_entry_in_t *in,
                                      ctxc__entry_src_t *src,
                                      ctxc_error_t *err);

/* Estimate of one entry with the history's estimator / with `fn`. */
uint32_t ctxc__estimate_entry(const ctxc_history_t *h, const ctxc_entry_t *e);
uint32_t ctxc__estimate_with(ctxc_estimate_fn fn, void *user,
                             const ctxc_entry_t *e);

/* Writes an entry record into a scratch area (plans, density results) and
 * describes it in an INSERT op (replaces = UINT32_MAX). */
ctxc_status_t ctxc__record_to_scratch(uint8_t *scratch, size_t cap,
                                      size_t *used,
                                      const ctxc__entry_src_t *src,
                                      ctxc_estimate_fn est, void *user,
                                      ctxc_plan_op_t *op, ctxc_error_t *err);

/* A read-only entry view of an INSERT op's record. */
void ctxc__op_entry(const uint8_t *scratch, const ctxc_plan_op_t *op,
                    ctxc_entry_t *e);

#define CTXC__REC_HEADER 8u
#define CTXC__SLOT_MARK 0x80u /* transient slot mark of history.c; masked */

/* Writes the record of `src` once into `out` (a sink over free memory),
 * validating everything on the way: speaker, block count, types, required
 * fields, UTF-8, JSON. out->len grows by the record size, also when the
 * record does not fit (then the bytes past out->cap are counted, not
 * written; the caller reports the bytes missing). On a fit, the flags byte
 * is set from the metadata and, with `tokens` on hosts with
 * CTXC__SCAN_STATS, *tokens is the entry's estimate by
 * ctxc_estimate_block_default() (blocks whose source knows it are not
 * counted again; the others are counted right after they are written;
 * elsewhere *tokens is left alone and callers count the stored entry). Nothing
 * but out->buf[start..cap) is written, so a failed or unwanted write is rolled
 * back by not committing it. Errors: CTXC_E_INVALID_ARG, CTXC_E_UTF8,
 * CTXC_E_PARSE, CTXC_E_TOO_DEEP, CTXC_E_TOO_LARGE. */
ctxc_status_t ctxc__record_write(const ctxc__entry_src_t *src,
                                 ctxc__sink_t *out, uint32_t *tokens,
                                 ctxc_error_t *err);

/* The block at cur (NULL: e's first) without decoding it: its type and
 * its field i (CTXC_STR_ABSENT when it has no field i or the field is
 * absent). Returns the cursor of the next block (for ctxc__entry_peek or
 * ctxc_entry_next_block), or NULL at the end of the entry. For scans that
 * decode only the blocks a field selects (ctxc__entry_find_first_field). */
const uint8_t *ctxc__entry_peek(const ctxc_entry_t *e, const uint8_t *cur,
                                unsigned i, ctxc_block_type_t *type,
                                ctxc_str_t *field);

/* The first block of `type` in e whose first field (a tool call's id, a
 * response's call id) equals value (ctxc__str_eq): its index in *block and
 * the block in *out. The other blocks are passed over by their lengths,
 * not decoded (a scan for a call id without an index reads every block of
 * the entries it passes). */
bool ctxc__entry_find_first_field(const ctxc_entry_t *e, ctxc_block_type_t type,
                                  ctxc_str_t value, size_t *block,
                                  ctxc_block_t *out);

/* A read-only entry view of the record at rec described by slot s. */
void ctxc__record_entry(const uint8_t *rec, const ctxc_slot_t *s,
                        ctxc_entry_t *e);

#endif /* CTXC_RECORD_H */
