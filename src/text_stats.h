/*
 * ctxc — what the default estimator counts in a text (private header;
 * estimate.c), shared with the importer that counts while it scans.
 */
#ifndef CTXC_TEXT_STATS_H
#define CTXC_TEXT_STATS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"

/* 64-bit little-endian hosts: the importer counts the estimator's text
 * statistics while it scans (eight bytes at a time). Small targets keep the
 * separate count after the write (and the flash). */
#if SIZE_MAX > 0xFFFFFFFFu && defined(__BYTE_ORDER__) &&                       \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CTXC__SCAN_STATS 1
#endif

/* ---- text statistics (estimate.c) ----------------------------------------
 * What the default estimator needs of a text: UTF-16 units, whitespace runs
 * (\s of ECMAScript) and whether it starts / ends with whitespace. The
 * pieces of a block's text join into the block's statistics. */
typedef struct {
    uint64_t units;
    uint64_t runs;
    bool first_ws;
    bool last_ws;
} ctxc__text_stats_t;

/* ECMAScript WhiteSpace and LineTerminator (the \s class): ASCII, beyond
 * ASCII, any code point. */
static inline bool ctxc__is_space_ascii(uint8_t c) {
    return c == 0x20u || (c >= 0x09u && c <= 0x0Du);
}
static inline bool ctxc__is_space_cp(uint32_t cp) {
    return cp == 0xA0u || cp == 0x1680u || (cp >= 0x2000u && cp <= 0x200Au) ||
           cp == 0x2028u || cp == 0x2029u || cp == 0x202Fu || cp == 0x205Fu ||
           cp == 0x3000u || cp == 0xFEFFu;
}
static inline bool ctxc__is_space(uint32_t cp) {
    return cp < 0x80u ? ctxc__is_space_ascii((uint8_t)cp)
                      : ctxc__is_space_cp(cp);
}
/* a = a followed by b. */
void ctxc__stats_join(ctxc__text_stats_t *a, const ctxc__text_stats_t *b);
/* round(max(words * 1.3, units / 4)) with words = runs + 1 (0 if empty). */
uint32_t ctxc__stats_tokens(const ctxc__text_stats_t *s);

/* Whether tool_response block b with its result replaced by `result` (a
 * JSON value) has a smaller default estimate than b: the error both share
 * is counted once, and b's result only when its length does not decide. */
bool ctxc__estimate_result_smaller(const ctxc_block_t *b, ctxc_str_t result);
/* A lower bound of the default estimate of a tool_response whose text is
 * the JSON value v alone (no error), from its length. */
uint32_t ctxc__estimate_value_floor(ctxc_str_t v);

#endif /* CTXC_TEXT_STATS_H */
