/*
 * Shared pieces of the fuzz targets (test/fuzz/fuzz_<name>.c).
 *
 * Every target defines LLVMFuzzerTestOneInput(). It is linked two ways:
 *   - with clang's libFuzzer (-fsanitize=fuzzer,address,undefined): the
 *     fuzzer itself, built by `make fuzz` in build/fuzz;
 *   - with driver.c (any compiler; the sanitizer build of the library in
 *     the host test tree): runs every file given, once, in name order: the
 *     seed corpus and the saved regressions, as ctest entries of `make
 *     test` (fast, deterministic).
 * A broken invariant calls fuzz_fail(), which prints what broke and aborts
 * (a crash to libFuzzer, a failed test to ctest).
 */
#ifndef CTXC_FUZZ_H
#define CTXC_FUZZ_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctxc/ctxc.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

__attribute__((noreturn, format(printf, 1, 2))) static inline void
fuzz_fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant broken: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

/* A failed call must say why: a status other than OK in err, and the same
 * status returned. */
static inline void fuzz_check_error(ctxc_status_t st, const ctxc_error_t *err,
                                    const char *what) {
    if (st == CTXC_OK) {
        return;
    }
    if (err->status != st) {
        fuzz_fail("%s returned %s but err says %s", what, ctxc_status_name(st),
                  ctxc_status_name(err->status));
    }
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (err->message[0] == '\0') {
        fuzz_fail("%s failed with %s and no message", what,
                  ctxc_status_name(st));
    }
#endif
}

/* A growing byte buffer for exports (test code: the heap is fine here). */
typedef struct {
    char *p;
    size_t len, cap;
} fuzz_buf_t;

static inline ctxc_status_t fuzz_buf_write(void *user, const char *data,
                                           size_t len) {
    fuzz_buf_t *b = (fuzz_buf_t *)user;
    if (b->len + len > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len) {
            cap *= 2;
        }
        char *p = (char *)realloc(b->p, cap);
        if (p == NULL) {
            fuzz_fail("out of memory");
        }
        b->p = p;
        b->cap = cap;
    }
    if (len > 0) {
        memcpy(b->p + b->len, data, len);
    }
    b->len += len;
    return CTXC_OK;
}

/* The canonical export of h into b (emptied first). */
static inline void fuzz_export(const ctxc_history_t *h, fuzz_buf_t *b) {
    ctxc_error_t err;
    b->len = 0;
    if (ctxc_export(h, fuzz_buf_write, b, &err) != CTXC_OK) {
        fuzz_fail("export of an accepted history failed: %s", err.message);
    }
}

static inline void fuzz_same(const fuzz_buf_t *a, const fuzz_buf_t *b,
                             const char *what) {
    if (a->len != b->len || (a->len > 0 && memcmp(a->p, b->p, a->len) != 0)) {
        fuzz_fail("%s: %zu bytes before, %zu after, not the same", what, a->len,
                  b->len);
    }
}

#endif /* CTXC_FUZZ_H */
