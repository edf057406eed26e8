/*
 * ctxc — error messages of the core (private header; status.c).
 */
#ifndef CTXC_ERROR_H
#define CTXC_ERROR_H

#include <stdarg.h>
#include <stddef.h>

#include "ctxc/status.h"

/* ---- errors -------------------------------------------------------------
 * Mini formatter (no stdio in the library): %s (const char *), %u (unsigned),
 * %z (size_t), %q (const char *, size_t: quoted, clipped to 40 bytes),
 * %% (percent). Returns `st` so callers can `return ctxc__fail(...)`. */
#define ctxc__fail ctxc_error_set
/* The same formatter into buf[0..cap) (always NUL-terminated, cut to fit). */
void ctxc__vformat(char *buf, size_t cap, const char *fmt, va_list ap);
/* Same, with the bytes needed for CTXC_E_NO_SPACE. */
ctxc_status_t ctxc__fail_space(ctxc_error_t *err, size_t needed,
                               const char *fmt, ...);
/* Prefixes the current message with "<prefix>: " (for context). */
void ctxc__err_prefix(ctxc_error_t *err, const char *fmt, ...);

/* ---- secrets --------------------------------------------------------------
 * The one key-masking rule (the HTTP client's error excerpt and messages;
 * any module that may show text a server echoed). Replaces with '*' in the
 * NUL-terminated s:
 *   - every run of 8 or more consecutive bytes equal to a substring of
 *     secret[0..secret_len) starting at any offset of it (a whole key, its
 *     first 24 bytes, 10 bytes from its middle, ...);
 *   - for a secret shorter than 8 bytes, every full occurrence of it;
 *   - a start of the secret of 4 or more bytes (shorter than the secret)
 *     that s ends with: a key cut off by a length limit.
 * Nothing happens when s or secret is NULL or secret_len is 0. Time:
 * O(strlen(s) * secret_len * run length); no memory beyond the stack. */
void ctxc__mask_secret(char *s, const char *secret, size_t secret_len);

#endif /* CTXC_ERROR_H */
