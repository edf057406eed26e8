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

#endif /* CTXC_ERROR_H */
