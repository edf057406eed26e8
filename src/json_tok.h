/*
 * ctxc — the one JSON reader of the library (private header).
 *
 * ctxc__json_scan() validates one JSON text in a single pass (syntax,
 * UTF-8 in strings, escapes, surrogate pairs, numbers, nesting depth) and
 * can, in the same pass,
 *   - record tokens into caller memory (one per value and per object key),
 *   - write the canonical form (compact, key order kept, strings escaped as
 *     JSON.stringify writes them, numbers as written) to a sink.
 * Nothing is allocated; the nesting limit bounds the stack use.
 *
 * Usage (a reader of a small document, e.g. settings or an HTTP body):
 *
 *     ctxc__jtok_t t[64];
 *     size_t n;
 *     st = ctxc__json_scan(js, len, CTXC_CFG_JSON_MAX_DEPTH, t, 64, &n,
 *                          NULL, err);
 *     if (st == CTXC_OK && n > 64) -> too many tokens (n = tokens needed)
 *     t[0] is the root. In an object, members are key, value pairs:
 *         for (k = 0, key = root + 1; k < t[root].size; k++) {
 *             val = key + 1;            // the key's value
 *             ... ctxc__jtok_is(js, &t[key], "name") ...
 *             key = t[val].next;        // after the value's subtree
 *         }
 *     In an array, element k+1 is t[element k].next.
 *     String tokens span the body between the quotes; CTXC__JF_ESCAPES says
 *     whether it must be decoded (ctxc__write_decoded(..., CTXC__SRC_JSTR)),
 *     without it the body is the content (valid UTF-8).
 */
#ifndef CTXC_JSON_TOK_H
#define CTXC_JSON_TOK_H

#include "sink.h"
#include "text_stats.h"

enum {
    CTXC__JT_OBJECT = 1,
    CTXC__JT_ARRAY = 2,
    CTXC__JT_STRING = 3,
    CTXC__JT_NUMBER = 4,
    CTXC__JT_TRUE = 5,
    CTXC__JT_FALSE = 6,
    CTXC__JT_NULL = 7,
};

/* Flags of string tokens. */
#define CTXC__JF_ESCAPES 0x1u  /* the body holds backslash escapes */
#define CTXC__JF_NONASCII 0x2u /* the body holds bytes >= 0x80 */
/* Strings and containers: not in canonical form as written (whitespace
 * inside, or an escape JSON.stringify would write differently). Without it
 * the bytes of the value are its canonical form. */
#define CTXC__JF_NONCANON 0x4u
/* Strings scanned by ctxc__json_scan_stats(): `size` is the number of
 * whitespace runs of the decoded content and `units` its UTF-16 length;
 * these flags say that the statistics are there and whether the content
 * starts / ends with whitespace (see ctxc__text_stats_t). */
#define CTXC__JF_STATS 0x8u
#define CTXC__JF_WS_FIRST 0x10u
#define CTXC__JF_WS_LAST 0x20u

/* One token: five 32-bit words, six where the scan counts text statistics
 * (CTXC_JSON_TOKEN_WORDS; ctxc_import_t reserves that much). */
typedef struct {
    uint32_t start; /* first byte; strings: first byte after the quote */
    uint32_t end;   /* one past the last byte; strings: the closing quote */
    uint32_t next;  /* index of the token after this value (and its subtree) */
    uint32_t size;  /* containers: elements (objects: keys); strings with
                       CTXC__JF_STATS: whitespace runs of the content */
    uint8_t type;   /* CTXC__JT_* */
    uint8_t flags;  /* CTXC__JF_* */
    uint16_t pad_;
#ifdef CTXC__SCAN_STATS
    uint32_t units; /* strings with CTXC__JF_STATS: UTF-16 units */
#endif
} ctxc__jtok_t;

/* Validates js[0..len) as exactly one JSON value (whitespace around it
 * allowed). Tokens go to tok[0..cap) (tok may be NULL, cap 0); *count (may
 * be NULL) receives the number of tokens the text has, also when it is
 * larger than cap. With out != NULL the canonical form is written there.
 * Errors: CTXC_E_PARSE, CTXC_E_UTF8, CTXC_E_TOO_DEEP (1-based byte position
 * in the message). A top-level container is depth 1. */
ctxc_status_t ctxc__json_scan(const char *js, size_t len, unsigned max_depth,
                              ctxc__jtok_t *tok, size_t cap, size_t *count,
                              ctxc__sink_t *out, ctxc_error_t *err);

/* Same, and string tokens also get the statistics the default estimator
 * needs (CTXC__JF_STATS; on 64-bit hosts, where they cost little: a caller
 * checks the flag and counts otherwise). */
ctxc_status_t ctxc__json_scan_stats(const char *js, size_t len,
                                    unsigned max_depth, ctxc__jtok_t *tok,
                                    size_t cap, size_t *count,
                                    ctxc_error_t *err);

#ifdef CTXC__SCAN_STATS
/* Statistics of a string token (flag CTXC__JF_STATS set). */
static inline ctxc__text_stats_t ctxc__jtok_stats(const ctxc__jtok_t *t) {
    ctxc__text_stats_t st = {t->units, t->size,
                             (t->flags & CTXC__JF_WS_FIRST) != 0,
                             (t->flags & CTXC__JF_WS_LAST) != 0};
    return st;
}
#endif

/* Body of a token (strings: without the quotes). */
static inline const char *ctxc__jtok_p(const char *js, const ctxc__jtok_t *t) {
    return js + t->start;
}
static inline size_t ctxc__jtok_n(const ctxc__jtok_t *t) {
    return (size_t)(t->end - t->start);
}

/* A string token whose decoded content equals the C string s. */
bool ctxc__jtok_is(const char *js, const ctxc__jtok_t *t, const char *s);

#endif /* CTXC_JSON_TOK_H */
