/*
 * Fuzz target: the HTTP/1.1 response parser, chunked decoder and SSE
 * hand-off of the client (src/http.c), over a scripted in-memory transport
 * that answers the input as the server's response.
 *
 * Invariants: the response read in one piece, in slices (sizes from the
 * first input byte, with "try again" answers between them) and one byte at
 * a time gives the same status code, result, body bytes and events; a
 * refusal says why, and never quotes the secret header's value.
 */
#include "fuzz.h"

typedef struct {
    const uint8_t *resp;
    size_t len, pos, slice;
    unsigned zero_every, calls;
} fake_t;

static ctxc_status_t f_connect(void *ctx, const char *host, uint16_t port,
                               bool tls, ctxc_error_t *err) {
    (void)host;
    (void)port;
    (void)tls;
    (void)err;
    fake_t *f = ctx;
    f->pos = 0;
    f->calls = 0;
    return CTXC_OK;
}

static int32_t f_send(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx;
    (void)data;
    return (int32_t)(len > 4096 ? 4096 : len);
}

static int32_t f_recv(void *ctx, uint8_t *buf, size_t cap) {
    fake_t *f = ctx;
    f->calls++;
    if (f->zero_every != 0 && f->calls % f->zero_every == 0) {
        return 0;
    }
    if (f->pos >= f->len) {
        return CTXC_TRANSPORT_EOF;
    }
    size_t n = f->len - f->pos;
    n = n < f->slice ? n : f->slice;
    n = n < cap ? n : cap;
    memcpy(buf, f->resp + f->pos, n);
    f->pos += n;
    return (int32_t)n;
}

static void f_close(void *ctx) { (void)ctx; }

static const ctxc_transport_ops_t fake_ops = {f_connect, f_send, f_recv,
                                              f_close, NULL, NULL, NULL};

/* headers and events (whole per call) tagged in log; body bytes
 * concatenated in body (their slicing into calls is free to differ) */
typedef struct {
    char log[1 << 16];
    size_t len;
    char body[1 << 15];
    size_t body_len;
} record_t;

static void rec_put(record_t *r, const char *tag, const char *p, size_t n) {
    int w = snprintf(r->log + r->len, sizeof r->log - r->len, "%s%zu:", tag, n);
    if (w > 0 && (size_t)w < sizeof r->log - r->len) {
        r->len += (size_t)w;
    }
    size_t k = n < sizeof r->log - r->len ? n : sizeof r->log - r->len;
    memcpy(r->log + r->len, p, k);
    r->len += k;
}

static ctxc_status_t on_body(void *user, const char *data, size_t len) {
    record_t *r = user;
    size_t k =
        len < sizeof r->body - r->body_len ? len : sizeof r->body - r->body_len;
    memcpy(r->body + r->body_len, data, k);
    r->body_len += k;
    return CTXC_OK;
}

static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    rec_put(user, "E", ev->data, ev->data_len);
    return CTXC_OK;
}

static ctxc_status_t on_header(void *user, const char *name, size_t nl,
                               const char *value, size_t vl) {
    rec_put(user, "H", name, nl);
    rec_put(user, "V", value, vl);
    return CTXC_OK;
}

static CTXC_HTTP_WORK_DEFINE(work);
static record_t rec[3];

#define SECRET "fuzz-secret-value-123456789"

static ctxc_status_t run(const uint8_t *resp, size_t len, size_t slice,
                         unsigned zero_every, record_t *r, uint16_t *status) {
    fake_t f = {resp, len, 0, slice, zero_every, 0};
    ctxc_port_t port;
    memset(&port, 0, sizeof port);
    port.transport.ops = &fake_ops;
    port.transport.ctx = &f;
    ctxc_http_header_t h = {"Authorization", "Bearer " SECRET, true};
    ctxc_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = "https://example.com/v1/x";
    req.headers = &h;
    req.header_count = 1;
    req.on_body = on_body;
    req.on_event = on_event;
    req.on_header = on_header;
    req.user = r;
    r->len = 0;
    r->body_len = 0;
    ctxc_http_response_t resp_info;
    ctxc_error_t err;
    ctxc_status_t st =
        ctxc_http_request(&req, &port, work, sizeof work, &resp_info, &err);
    fuzz_check_error(st, &err, "http request");
    if (st != CTXC_OK && strstr(ctxc_error_message(&err), SECRET) != NULL) {
        fuzz_fail("the secret appears in an error message");
    }
    *status = resp_info.status;
    return st;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 16384) {
        return 0;
    }
    size_t slice = 1u + data[0] % 97u;
    uint16_t s0, s1, s2;
    ctxc_status_t a = run(data + 1, size - 1, 1u << 20, 0, &rec[0], &s0);
    ctxc_status_t b = run(data + 1, size - 1, slice, 3, &rec[1], &s1);
    ctxc_status_t c = run(data + 1, size - 1, 1, 0, &rec[2], &s2);
    if (a != b || a != c || s0 != s1 || s0 != s2) {
        fuzz_fail("whole: %s/%u, slices of %zu: %s/%u, bytes: %s/%u",
                  ctxc_status_name(a), s0, slice, ctxc_status_name(b), s1,
                  ctxc_status_name(c), s2);
    }
    for (int i = 1; i < 3; i++) {
        if (rec[i].len != rec[0].len ||
            memcmp(rec[i].log, rec[0].log, rec[0].len) != 0) {
            fuzz_fail("headers or events differ by slicing (%zu vs %zu "
                      "bytes)",
                      rec[0].len, rec[i].len);
        }
        if (rec[i].body_len != rec[0].body_len ||
            memcmp(rec[i].body, rec[0].body, rec[0].body_len) != 0) {
            fuzz_fail("body bytes differ by slicing (%zu vs %zu bytes)",
                      rec[0].body_len, rec[i].body_len);
        }
    }
    return 0;
}
