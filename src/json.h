/*
 * ctxc — UTF-8 and the JSON helpers around the scanner (private header;
 * json.c): canonical form, string sources, decoding, key lookup.
 */
#ifndef CTXC_JSON_H
#define CTXC_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/status.h"
#include "sink.h"

/* ---- UTF-8 --------------------------------------------------------------- */

/* Decodes one scalar value at s[0..len). Returns the bytes used (1..4) or 0
 * for an invalid sequence (overlong, surrogate, > U+10FFFF, truncated). */
size_t ctxc__utf8_decode(const uint8_t *s, size_t len, uint32_t *cp);
/* Encodes cp (<= U+10FFFF, not a surrogate) into out; returns 1..4. */
size_t ctxc__utf8_encode(uint32_t cp, char out[4]);
/* Validates a whole string; on failure *bad_at = offset of the bad byte. */
bool ctxc__utf8_valid(const char *s, size_t len, size_t *bad_at);

/* ---- JSON --------------------------------------------------------------- */

/* Input of the JSON readers: a plain byte span, or the body of a JSON string
 * literal (between the quotes) whose decoded content is read. */
typedef enum {
    CTXC__SRC_RAW = 0,   /* plain UTF-8 bytes */
    CTXC__SRC_JSTR = 1,  /* body of a JSON string literal, escapes decoded */
    CTXC__SRC_VALID = 2, /* UTF-8 (or JSON text) validated already: copied
                            as is, never checked again */
} ctxc__src_kind_t;

/* Validates exactly one JSON value in `in` (whitespace around it allowed) and
 * writes its canonical form to `out`: no insignificant whitespace, key order
 * kept, strings re-escaped as JSON.stringify writes them, numbers as written.
 * Depth counts containers; a top-level container is depth 1 and may nest
 * down to `max_depth`. Errors: CTXC_E_PARSE, CTXC_E_UTF8, CTXC_E_TOO_DEEP,
 * with the byte position in the message. One pass (json_tok.h's scanner).
 * CTXC__SRC_JSTR (JSON text inside a string body) is decoded into `out` and
 * canonicalised there in place; when `out` has no room for the decoded text
 * (or only measures), only the string body is checked and out->len grows by
 * the decoded length, an upper bound of the canonical one. */
ctxc_status_t ctxc__json_canon(const char *in, size_t len,
                               ctxc__src_kind_t kind, unsigned max_depth,
                               ctxc__sink_t *out, ctxc_error_t *err);

/* Iterates the code points of a string: CTXC__SRC_RAW decodes UTF-8,
 * CTXC__SRC_JSTR decodes a JSON string body (escapes, surrogate pairs).
 * Returns 1 with *cp set, 0 at the end, or -1 on an invalid sequence (err
 * set: CTXC_E_UTF8 or CTXC_E_PARSE). */
typedef struct {
    const char *p;
    size_t n;
    size_t pos;
    ctxc__src_kind_t kind;
} ctxc__cp_iter_t;
int ctxc__cp_next(ctxc__cp_iter_t *it, uint32_t *cp, ctxc_error_t *err);

/* The character a one-letter JSON escape (the letter after the backslash,
 * all but 'u') stands for; false for any other letter. */
bool ctxc__json_simple_escape(char e, uint32_t *cp);
/* The value of a hex digit, -1 for any other character. */
int ctxc__hexval(char c);

/* Writes `cp` as JSON.stringify would inside a string literal. */
void ctxc__json_escape_cp(ctxc__sink_t *out, uint32_t cp);
/* Writes a quoted canonical JSON string from a source (validated). */
ctxc_status_t ctxc__json_write_string(ctxc__sink_t *out, const char *p,
                                      size_t n, ctxc__src_kind_t kind,
                                      ctxc_error_t *err);
/* Writes the decoded content of a source as UTF-8 (validated). */
ctxc_status_t ctxc__write_decoded(ctxc__sink_t *out, const char *p, size_t n,
                                  ctxc__src_kind_t kind, ctxc_error_t *err);
/* Compares the decoded content of a (valid) source with a plain string. */
bool ctxc__src_equals(const char *p, size_t n, ctxc__src_kind_t kind,
                      const char *s, size_t slen);

/* The value of the first of keys[0..n) (in that order of preference) that
 * is a top-level member of a canonical compact JSON object; *which is its
 * index. False when none is. One pass over the members, ended by a member
 * named keys[0]. */
bool ctxc__json_find_first_key(ctxc_str_t obj, const char *const *keys,
                               size_t n, ctxc_str_t *value, size_t *which);

/* In a canonical compact JSON object, finds top-level `key` and returns the
 * span of its value. */
bool ctxc__json_find_key(const char *obj, size_t len, const char *key,
                         ctxc_str_t *value);

/* Skips one canonical JSON value starting at obj[pos]; returns the position
 * after it. */
size_t ctxc__json_skip_value(const char *js, size_t len, size_t pos);

#endif /* CTXC_JSON_H */
