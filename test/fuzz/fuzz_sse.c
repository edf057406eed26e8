/*
 * Fuzz target: the Server-Sent Events reader (src/sse.c).
 *
 * Invariants: the stream read whole and the stream read in slices (sizes
 * taken from the first input byte, and one byte at a time) dispatch the
 * same events (type, data, id, retry, [DONE]) and end with the same status;
 * a refusal says why.
 */
#include "fuzz.h"

#define MAX_RECORD (1u << 16)

typedef struct {
    char log[MAX_RECORD];
    size_t len;
} record_t;

static record_t rec[3];
static char buf[1024];

static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    record_t *r = user;
    int n = snprintf(r->log + r->len, sizeof r->log - r->len,
                     "[%.*s|%.*s|%.*s|%d:%u|%d]", (int)ev->type_len, ev->type,
                     (int)ev->data_len, ev->data, (int)ev->id_len, ev->id,
                     (int)ev->has_retry, (unsigned)ev->retry_ms, (int)ev->done);
    if (n > 0) {
        r->len += (size_t)n < sizeof r->log - r->len
                      ? (size_t)n
                      : sizeof r->log - r->len - 1;
    }
    return CTXC_OK;
}

static ctxc_status_t run(const char *data, size_t size, size_t slice,
                         record_t *r) {
    ctxc_sse_parser_t p;
    ctxc_error_t err;
    r->len = 0;
    r->log[0] = '\0';
    ctxc_sse_init(&p, buf, sizeof buf, on_event, r);
    size_t pos = 0;
    while (pos < size && !ctxc_sse_done(&p)) {
        size_t n = size - pos < slice ? size - pos : slice;
        ctxc_status_t st = ctxc_sse_feed(&p, data + pos, n, &err);
        fuzz_check_error(st, &err, "sse feed");
        if (st != CTXC_OK) {
            return st;
        }
        size_t used = ctxc_sse_used(&p);
        if (used > n) {
            fuzz_fail("sse used %zu of %zu bytes", used, n);
        }
        pos += used;
        if (used < n && !ctxc_sse_done(&p)) {
            fuzz_fail("sse stopped reading before [DONE]");
        }
    }
    if (ctxc_sse_done(&p)) {
        return CTXC_OK;
    }
    ctxc_status_t st = ctxc_sse_finish(&p, &err);
    fuzz_check_error(st, &err, "sse finish");
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 8192) {
        return 0;
    }
    size_t slice = 1u + data[0] % 64u;
    const char *s = (const char *)data + 1;
    size--;
    ctxc_status_t a = run(s, size, size > 0 ? size : 1, &rec[0]);
    ctxc_status_t b = run(s, size, slice, &rec[1]);
    ctxc_status_t c = run(s, size, 1, &rec[2]);
    if (a != b || a != c) {
        fuzz_fail("whole: %s, slices of %zu: %s, bytes: %s",
                  ctxc_status_name(a), slice, ctxc_status_name(b),
                  ctxc_status_name(c));
    }
    for (int i = 1; i < 3; i++) {
        if (rec[i].len != rec[0].len ||
            memcmp(rec[i].log, rec[0].log, rec[0].len) != 0) {
            fuzz_fail("events differ by slicing:\n%s\n---\n%s", rec[0].log,
                      rec[i].log);
        }
    }
    return 0;
}
