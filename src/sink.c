/*
 * ctxc — the bounded output sink and streams (see src/sink.h).
 */
#include "sink.h"
#include "compiler.h"

#ifdef __OPTIMIZE_SIZE__
CTXC__SIZE_NOINLINE void ctxc__put(ctxc__sink_t *s, const char *p, size_t n) {
    ctxc__sink_put_(s, p, n);
}

void ctxc__putc(ctxc__sink_t *s, char c) { ctxc__sink_putc_(s, c); }

void ctxc__puts(ctxc__sink_t *s, const char *str) {
    ctxc__put(s, str, strlen(str));
}

void ctxc__stream_puts(ctxc__stream_t *w, const char *str) {
    ctxc__stream_put(w, str, strlen(str));
}
#endif

void ctxc__put_uint(ctxc__sink_t *s, uint64_t v) {
    char tmp[20]; /* UINT64_MAX has 20 digits */
    size_t n = sizeof tmp;
    do {
        tmp[--n] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    ctxc__put(s, tmp + n, sizeof tmp - n);
}

void ctxc__stream_init(ctxc__stream_t *w, char *buf, size_t cap,
                       ctxc__write_fn write, void *user) {
    w->sink.buf = buf;
    w->sink.cap = cap;
    w->sink.len = 0;
    w->write = write;
    w->user = user;
    w->st = CTXC_OK;
}

static void stream_write(ctxc__stream_t *w, const char *p, size_t n) {
    if (w->st == CTXC_OK && n > 0) {
        w->st = w->write(w->user, p, n);
    }
}

ctxc_status_t ctxc__stream_flush(ctxc__stream_t *w) {
    stream_write(w, w->sink.buf, w->sink.len);
    w->sink.len = 0;
    return w->st;
}

void ctxc__stream_put(ctxc__stream_t *w, const char *p, size_t n) {
    if (n > w->sink.cap - w->sink.len) {
        (void)ctxc__stream_flush(w);
        if (n > w->sink.cap) {
            stream_write(w, p, n);
            return;
        }
    }
    ctxc__put(&w->sink, p, n);
}
