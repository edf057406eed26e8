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

#include "ctxc_internal.h"

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

/* A read-only entry view of the record at rec described by slot s. */
void ctxc__record_entry(const uint8_t *rec, const ctxc_slot_t *s,
                        ctxc_entry_t *e);

#endif /* CTXC_RECORD_H */
