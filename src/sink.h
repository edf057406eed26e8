/*
 * ctxc — the one bounded output sink of the core (private; not installed).
 *
 * A sink is a byte buffer and a count:
 *
 *   ctxc__sink_t o = {buf, cap, 0};
 *
 * Every put counts all its bytes in o.len and stores those that still fit:
 * buf[0..min(len, cap)) always holds the first bytes of the output, so a
 * caller writes first and checks once at the end:
 *
 *   o.len <= o.cap   everything is in buf[0..len)
 *   o.len >  o.cap   it did not fit: len is the size it needs, buf holds
 *                    its first cap bytes
 *
 * With buf == NULL (cap 0) a sink only measures. A sink never fails and
 * never writes past buf[cap - 1]; there is no NUL unless asked for: a text
 * sink over char b[N] is {b, N - 1, 0} (one byte left for the NUL) and
 * ctxc__sink_cstr() terminates it, cut to fit.
 *
 * A stream (ctxc__stream_t) is a sink in front of a write function: bytes
 * collect in the sink's buffer and go to the function when it is full and at
 * ctxc__stream_flush(); the function's first error sticks and drops the rest.
 *
 * This header is kept small and stable: the JSON codec, the history store,
 * the strategies, the settings and the status messages all write through
 * it.
 */
#ifndef CTXC_SINK_H
#define CTXC_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctxc/status.h"

typedef struct {
    char *buf;  /* NULL: measure only */
    size_t cap; /* bytes buf holds */
    size_t len; /* bytes put so far (may exceed cap) */
} ctxc__sink_t;

/* The body of ctxc__put() (use ctxc__put()). */
static inline void ctxc__sink_put_(ctxc__sink_t *s, const char *p, size_t n) {
    if (s->buf != NULL && s->len < s->cap && n > 0) {
        size_t k = s->cap - s->len < n ? s->cap - s->len : n;
        uintptr_t d = (uintptr_t)(s->buf + s->len), q = (uintptr_t)p;
        if (q + k <= d || d + k <= q) {
            memcpy(s->buf + s->len, p, k); /* apart: the word copy */
        } else {
            memmove(s->buf + s->len, p, k); /* in-place rewrites overlap */
        }
    }
    s->len += n;
}

/* Puts p[0..n): stores what fits, counts all of it. Built for size (-Os:
 * the Cortex-M build), it is one function in sink.c rather than a copy in
 * every object file; otherwise it is inlined (the JSON codec puts most
 * code points through it). */
#ifdef __OPTIMIZE_SIZE__
void ctxc__put(ctxc__sink_t *s, const char *p, size_t n);
#else
static inline void ctxc__put(ctxc__sink_t *s, const char *p, size_t n) {
    ctxc__sink_put_(s, p, n);
}
#endif

/* Puts one byte (inline where speed counts: the JSON codec puts most bytes
 * one at a time; one function in sink.c when built for size). */
static inline void ctxc__sink_putc_(ctxc__sink_t *s, char c) {
    if (s->buf != NULL && s->len < s->cap) {
        s->buf[s->len] = c;
    }
    s->len++;
}

/* Puts a NUL-terminated string (without its NUL). */
#ifdef __OPTIMIZE_SIZE__
void ctxc__putc(ctxc__sink_t *s, char c);
void ctxc__puts(ctxc__sink_t *s, const char *str);
#else
static inline void ctxc__putc(ctxc__sink_t *s, char c) {
    ctxc__sink_putc_(s, c);
}
static inline void ctxc__puts(ctxc__sink_t *s, const char *str) {
    ctxc__put(s, str, strlen(str));
}
#endif

/* Puts v in decimal, no sign or leading zeros ("0" for 0). */
void ctxc__put_uint(ctxc__sink_t *s, uint64_t v);

/* Writes a NUL after what buf holds (at min(len, cap): the caller leaves a
 * byte for it after cap; buf must not be NULL) and returns buf. */
static inline char *ctxc__sink_cstr(ctxc__sink_t *s) {
    s->buf[s->len < s->cap ? s->len : s->cap] = '\0';
    return s->buf;
}

/* ---- streams ------------------------------------------------------------- */

/* The write function of a stream: the same shape as ctxc_write_fn
 * (ctxc/jsonl.h). Returns CTXC_OK or the error that stops the stream. */
typedef ctxc_status_t (*ctxc__write_fn)(void *user, const char *data,
                                        size_t len);

typedef struct {
    ctxc__sink_t sink; /* the pending bytes: buf[0..len), len <= cap */
    ctxc__write_fn write;
    void *user;
    ctxc_status_t st; /* CTXC_OK, or the first error of write */
} ctxc__stream_t;

/* A stream over buf[0..cap) (cap > 0) that writes to write(user, ...). */
void ctxc__stream_init(ctxc__stream_t *w, char *buf, size_t cap,
                       ctxc__write_fn write, void *user);

/* Puts p[0..n): collected while it fits, else written (the pending bytes
 * first). Nothing is written once the stream has an error. */
void ctxc__stream_put(ctxc__stream_t *w, const char *p, size_t n);

#ifdef __OPTIMIZE_SIZE__
void ctxc__stream_puts(ctxc__stream_t *w, const char *str);
#else
static inline void ctxc__stream_puts(ctxc__stream_t *w, const char *str) {
    ctxc__stream_put(w, str, strlen(str));
}
#endif

/* Writes the pending bytes; returns w->st. */
ctxc_status_t ctxc__stream_flush(ctxc__stream_t *w);

#endif /* CTXC_SINK_H */
