/*
 * The HTTP/1.1 client and the SSE reader (include/ctxc/http.h), over a
 * scripted in-memory transport (fake_t below): it serves a response byte
 * string in configurable slices, can answer "try again" (0), a transport
 * error at an offset or nothing at all (a stall, with a fake clock that
 * advances), and records what was connected and sent.
 *
 *   - request bytes exactly as expected: head, Content-Length from the count
 *     pass, a body larger than the I/O buffer sent in slices, the two-pass
 *     length mismatch
 *   - bodies: Content-Length, chunked (extensions, trailers, bad sizes),
 *     close-delimited; interim 1xx responses
 *   - every response split at every byte and fed one byte at a time gives
 *     the same result (headers, body, events, status, message)
 *   - SSE: multi-line data, comments, fields, CRLF / LF / CR, [DONE], a cut
 *     event, an over-long line
 *   - error statuses (4xx with the body excerpt, 429 with Retry-After
 *     seconds and dates, 5xx), redirects, header limits, truncated bodies,
 *     resets, stalls with and without a clock
 *   - the secret header rule (loopback / https only, before connecting;
 *     "localhost" reached at 127.0.0.1), the work area size, secrets never
 *     in messages, the key-masking rule (ctxc__mask_secret) against a slow
 *     reference
 *   - the request deadline (a drip-fed answer, a slow reader, a slow
 *     connect), interim 1xx responses leaving nothing behind, content and
 *     transfer codings refused
 *   - URL parsing, loopback hosts, HTTP dates
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/error.h"
#include "ctxc/ctxc.h"
#include "ctxc/http.h"
#include "ctxc/port.h"

#define SECRET "sk-test-9f8e7d6c5b4a39281706"
#define AUTH "Bearer " SECRET

/* ---- the fake transport -------------------------------------------------- */

typedef struct {
    /* script */
    const char *resp;
    size_t resp_len;
    size_t split_at;     /* > 0: the first recv returns at most this much */
    size_t recv_max;     /* > 0: at most this much per recv */
    size_t send_max;     /* > 0: at most this much per send */
    unsigned zero_every; /* > 0: every n-th recv/send answers 0 first */
    long error_at;       /* >= 0: recv answers CTXC_TRANSPORT_ERROR there */
    long send_error_at;  /* >= 0: send answers CTXC_TRANSPORT_ERROR there */
    int32_t error_code;  /* != 0: what those two answer instead */
    const char *why;     /* the port's last_error() (NULL: none) */
    const char *connect_why; /* connect fails without a message; this is
                              * its last_error() */
    bool stall;          /* recv always answers 0 */
    long stall_at;       /* >= 0: recv answers 0 from there on */
    ctxc_status_t connect_status;
    uint64_t clock_step; /* ms the clock advances per transport call */
    uint64_t connect_ms; /* ms the clock advances in connect */
    /* record */
    size_t pos;
    unsigned calls;
    char host[300];
    uint16_t port;
    bool tls;
    bool connected;
    bool closed;
    char sent[16384];
    size_t sent_len;
    size_t largest_send;
    uint64_t now;
} fake_t;

static ctxc_status_t fake_connect(void *ctx, const char *host, uint16_t port,
                                  bool tls, ctxc_error_t *err) {
    fake_t *f = ctx;
    f->now += f->connect_ms;
    if (f->connect_status != CTXC_OK) {
        if (f->connect_why != NULL) {
            f->why = f->connect_why; /* no message in err, only the port's */
            return f->connect_status;
        }
        return ctxc_error_set(err, f->connect_status, "fake connect failed");
    }
    snprintf(f->host, sizeof f->host, "%s", host);
    f->port = port;
    f->tls = tls;
    f->connected = true;
    return CTXC_OK;
}

static bool fake_zero(fake_t *f) {
    f->now += f->clock_step;
    f->calls++;
    return f->zero_every > 0 && f->calls % f->zero_every == 0;
}

static int32_t fake_send(void *ctx, const uint8_t *data, size_t len) {
    fake_t *f = ctx;
    assert_true(f->connected && !f->closed);
    if (fake_zero(f)) {
        return 0;
    }
    if (f->send_error_at >= 0 && f->sent_len >= (size_t)f->send_error_at) {
        return f->error_code != 0 ? f->error_code : CTXC_TRANSPORT_ERROR;
    }
    size_t n = len;
    if (f->send_max > 0 && n > f->send_max) {
        n = f->send_max;
    }
    assert_true(f->sent_len + n <= sizeof f->sent);
    memcpy(f->sent + f->sent_len, data, n);
    f->sent_len += n;
    if (n > f->largest_send) {
        f->largest_send = n;
    }
    return (int32_t)n;
}

static int32_t fake_recv(void *ctx, uint8_t *buf, size_t cap) {
    fake_t *f = ctx;
    assert_true(f->connected && !f->closed);
    bool zero = fake_zero(f); /* the clock advances on every call */
    if (f->stall || zero ||
        (f->stall_at >= 0 && f->pos >= (size_t)f->stall_at)) {
        return 0;
    }
    if (f->error_at >= 0 && f->pos >= (size_t)f->error_at) {
        return f->error_code != 0 ? f->error_code : CTXC_TRANSPORT_ERROR;
    }
    if (f->pos >= f->resp_len) {
        return CTXC_TRANSPORT_EOF;
    }
    size_t n = f->resp_len - f->pos;
    if (n > cap) {
        n = cap;
    }
    if (f->split_at > 0 && f->pos < f->split_at && n > f->split_at - f->pos) {
        n = f->split_at - f->pos;
    }
    if (f->recv_max > 0 && n > f->recv_max) {
        n = f->recv_max;
    }
    if (f->error_at >= 0 && f->pos + n > (size_t)f->error_at) {
        n = (size_t)f->error_at - f->pos;
    }
    memcpy(buf, f->resp + f->pos, n);
    f->pos += n;
    return (int32_t)n;
}

static void fake_close(void *ctx) {
    fake_t *f = ctx;
    assert_true(f->connected);
    f->closed = true;
}

static const char *fake_last_error(void *ctx) { return ((fake_t *)ctx)->why; }

static const ctxc_transport_ops_t fake_ops = {
    fake_connect, fake_send, fake_recv, fake_close, NULL, NULL,
    fake_last_error};

static uint64_t fake_clock(void *ctx) { return ((fake_t *)ctx)->now; }

static void fake_init(fake_t *f, const char *resp) {
    memset(f, 0, sizeof *f);
    f->resp = resp;
    f->resp_len = resp != NULL ? strlen(resp) : 0;
    f->error_at = -1;
    f->send_error_at = -1;
    f->stall_at = -1;
}

static ctxc_port_t port_of(fake_t *f, bool with_clock) {
    ctxc_port_t p;
    memset(&p, 0, sizeof p);
    p.transport.ops = &fake_ops;
    p.transport.ctx = f;
    if (with_clock) {
        p.clock = fake_clock;
        p.clock_ctx = f;
    }
    return p;
}

/* ---- what a request gave back -------------------------------------------- */

typedef struct {
    char headers[4096];
    size_t headers_len;
    char body[16384];
    size_t body_len;
    char events[8192];
    size_t events_len;
    ctxc_status_t stop_with; /* a callback's answer (CTXC_OK: go on) */
} got_t;

static void got_append(char *buf, size_t cap, size_t *len, const char *p,
                       size_t n) {
    assert_true(*len + n < cap);
    memcpy(buf + *len, p, n);
    *len += n;
    buf[*len] = '\0';
}

static ctxc_status_t on_header(void *user, const char *name, size_t nl,
                               const char *value, size_t vl) {
    got_t *g = user;
    got_append(g->headers, sizeof g->headers, &g->headers_len, name, nl);
    got_append(g->headers, sizeof g->headers, &g->headers_len, ": ", 2);
    got_append(g->headers, sizeof g->headers, &g->headers_len, value, vl);
    got_append(g->headers, sizeof g->headers, &g->headers_len, "\n", 1);
    return g->stop_with;
}

static ctxc_status_t on_body(void *user, const char *data, size_t len) {
    got_t *g = user;
    got_append(g->body, sizeof g->body, &g->body_len, data, len);
    return CTXC_OK;
}

static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    got_t *g = user;
    static char line[8192];
    assert_int_equal(ev->data[ev->data_len], '\0');
    char retry[16] = "";
    if (ev->has_retry) {
        snprintf(retry, sizeof retry, "r%u", (unsigned)ev->retry_ms);
    }
    int n =
        snprintf(line, sizeof line, "[%.*s|%.*s|%.*s|%s%s]\n",
                 (int)ev->type_len, ev->type, (int)ev->id_len, ev->id,
                 (int)ev->data_len, ev->data, retry, ev->done ? "|done" : "");
    assert_true(n > 0 && (size_t)n < sizeof line);
    got_append(g->events, sizeof g->events, &g->events_len, line, (size_t)n);
    return CTXC_OK;
}

static CTXC_HTTP_WORK_DEFINE(g_work);

typedef struct {
    ctxc_status_t st;
    ctxc_error_t err;
    ctxc_http_response_t resp;
    got_t got;
} result_t;

static result_t g_res;

static ctxc_http_request_t get_req(const char *url) {
    ctxc_http_request_t r;
    memset(&r, 0, sizeof r);
    r.method = "GET";
    r.url = url;
    r.on_header = on_header;
    r.on_body = on_body;
    r.user = &g_res.got;
    return r;
}

static ctxc_status_t run_req(ctxc_http_request_t *req, fake_t *f,
                             bool with_clock) {
    memset(&g_res, 0, sizeof g_res);
    req->user = &g_res.got;
    ctxc_port_t port = port_of(f, with_clock);
    g_res.st = ctxc_http_request(req, &port, g_work, sizeof g_work, &g_res.resp,
                                 &g_res.err);
    if (f->connected) {
        assert_true(f->closed); /* always closed after a connect */
    }
    assert_int_equal(ctxc_http_retryable(g_res.st, &g_res.resp),
                     g_res.resp.retryable);
    return g_res.st;
}

static ctxc_status_t run_get(const char *url, fake_t *f) {
    ctxc_http_request_t req = get_req(url);
    return run_req(&req, f, true);
}

static void assert_has(const char *hay, const char *needle) {
    if (strstr(hay, needle) == NULL) {
        fail_msg("expected \"%s\" in \"%s\"", needle, hay);
    }
}

/* ---- request bytes ------------------------------------------------------- */

/* A body of 2000 bytes written in pieces of 1..97 bytes. */
static char g_big[2001];

static ctxc_status_t big_body(void *user, ctxc_http_write_fn write, void *wu) {
    (void)user;
    size_t at = 0;
    size_t piece = 1;
    while (at < 2000) {
        size_t n = piece < 2000 - at ? piece : 2000 - at;
        ctxc_status_t st = write(wu, g_big + at, n);
        if (st != CTXC_OK) {
            return st;
        }
        at += n;
        piece = piece % 97 + 1;
    }
    return CTXC_OK;
}

static void test_request_bytes_exactly(void **state) {
    (void)state;
    for (size_t i = 0; i < 2000; i++) {
        g_big[i] = (char)('a' + i % 26);
    }
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    f.send_max = 100;
    ctxc_http_header_t hs[] = {{"Authorization", AUTH, true},
                               {"X-Extra", "one two", false}};
    ctxc_http_request_t req = get_req("https://api.example.com/v1/chat?x=1#f");
    req.method = "POST";
    req.content_type = "application/json";
    req.accept = "text/event-stream";
    req.headers = hs;
    req.header_count = 2;
    req.body_fn = big_body;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    char want[4096];
    int n = snprintf(want, sizeof want,
                     "POST /v1/chat?x=1 HTTP/1.1\r\n"
                     "Host: api.example.com\r\n"
                     "User-Agent: ctxc/%s\r\n"
                     "Accept: text/event-stream\r\n"
                     "Accept-Encoding: identity\r\n"
                     "Content-Type: application/json\r\n"
                     "Content-Length: 2000\r\n"
                     "Connection: close\r\n"
                     "Authorization: " AUTH "\r\n"
                     "X-Extra: one two\r\n"
                     "\r\n"
                     "%s",
                     ctxc_version(), g_big);
    assert_int_equal(f.sent_len, (size_t)n);
    assert_memory_equal(f.sent, want, (size_t)n);
    assert_string_equal(f.host, "api.example.com");
    assert_int_equal(f.port, 443);
    assert_true(f.tls);
    /* sent in slices no larger than the I/O buffer, far below the body */
    assert_true(f.largest_send <= CTXC_CFG_HTTP_IO_BUFFER_BYTES);
    assert_true(f.largest_send < 2000);
    assert_int_equal(g_res.resp.status, 200);
    assert_string_equal(g_res.got.body, "ok");
    assert_string_equal(g_res.got.headers, "Content-Length: 2\n");
    assert_false(g_res.resp.retryable);
}

static void test_request_defaults(void **state) {
    (void)state;
    static const struct {
        const char *method, *url, *want;
    } cases[] = {
        {"GET", "http://127.0.0.1:8080",
         "GET / HTTP/1.1\r\nHost: 127.0.0.1:8080\r\n"},
        {"POST", "http://[::1]:8080/p",
         "POST /p HTTP/1.1\r\nHost: [::1]:8080\r\n"},
        {"GET", "HTTPS://h.example:443?q=1",
         "GET /?q=1 HTTP/1.1\r\nHost: h.example\r\n"},
        {"DELETE", "http://h.example:80/a/b",
         "DELETE /a/b HTTP/1.1\r\nHost: h.example\r\n"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_t f;
        fake_init(&f, "HTTP/1.1 204 No Content\r\n\r\n");
        ctxc_http_request_t req = get_req(cases[i].url);
        req.method = cases[i].method;
        assert_int_equal(run_req(&req, &f, true), CTXC_OK);
        f.sent[f.sent_len] = '\0';
        char ua[64];
        snprintf(ua, sizeof ua, "User-Agent: ctxc/%s\r\n", ctxc_version());
        size_t wl = strlen(cases[i].want);
        assert_memory_equal(f.sent, cases[i].want, wl);
        assert_true(strncmp(f.sent + wl, ua, strlen(ua)) == 0);
        bool post = strcmp(cases[i].method, "POST") == 0;
        assert_int_equal(strstr(f.sent, "Content-Length: 0\r\n") != NULL, post);
        assert_has(f.sent, "Connection: close\r\n\r\n");
        assert_has(f.sent, "\r\nAccept-Encoding: identity\r\n");
        assert_int_equal(g_res.resp.status, 204);
    }
    /* a fixed body, and a caller's User-Agent replaces ours */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    ctxc_http_header_t ua = {"user-agent", "probe/1", false};
    ctxc_http_request_t req = get_req("http://localhost/x");
    req.method = "PUT";
    req.body_data = "{\"a\":1}";
    req.body_len = 7;
    req.headers = &ua;
    req.header_count = 1;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    f.sent[f.sent_len] = '\0';
    char want[256];
    snprintf(want, sizeof want,
             "PUT /x HTTP/1.1\r\nHost: localhost\r\n"
             "Accept-Encoding: identity\r\nContent-Length: 7\r\n"
             "Connection: close\r\nuser-agent: probe/1\r\n\r\n{\"a\":1}");
    assert_string_equal(f.sent, want);
}

/* Writes 1000 bytes on the count pass, then 1000 + delta on the send
 * pass, one byte per call. */
static int g_delta;
static int g_pass;

static ctxc_status_t changing_body(void *user, ctxc_http_write_fn write,
                                   void *wu) {
    (void)user;
    int n = 1000 + (g_pass++ == 0 ? 0 : g_delta);
    for (int i = 0; i < n; i++) {
        ctxc_status_t st = write(wu, "x", 1);
        if (st != CTXC_OK) {
            return st;
        }
    }
    return CTXC_OK;
}

static void test_body_passes_of_different_length_fail(void **state) {
    (void)state;
    static const int deltas[] = {1, -1, 5, -1000};
    for (size_t i = 0; i < sizeof deltas / sizeof deltas[0]; i++) {
        fake_t f;
        fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        g_delta = deltas[i];
        g_pass = 0;
        ctxc_http_request_t req = get_req("https://h.example/");
        req.method = "POST";
        req.body_fn = changing_body;
        assert_int_equal(run_req(&req, &f, true), CTXC_E_INVALID_ARG);
        assert_has(g_res.err.message, "body writer");
        assert_has(g_res.err.message, deltas[i] > 0 ? "more" : "fewer");
        /* the server never got a complete request: fewer body bytes than
         * Content-Length announced */
        f.sent[f.sent_len] = '\0';
        if (deltas[i] == -1000) {
            assert_int_equal(f.sent_len, 0); /* all still in the buffer */
            continue;
        }
        assert_has(f.sent, "Content-Length: 1000\r\n");
        const char *body = strstr(f.sent, "\r\n\r\n") + 4;
        assert_true(strlen(body) > 0 && strlen(body) < 1000);
        assert_true(f.closed);
        assert_false(g_res.resp.retryable);
    }
}

/* The 2000-byte body in one write (larger than the I/O buffer, so it goes
 * out directly), then one byte more on the send pass. */
static ctxc_status_t one_put_then_more(void *user, ctxc_http_write_fn write,
                                       void *wu) {
    (void)user;
    ctxc_status_t st = write(wu, g_big, 2000);
    if (st == CTXC_OK && g_pass++ > 0) {
        st = write(wu, "x", 1);
    }
    return st;
}

static void test_body_longer_in_one_write_never_completes(void **state) {
    (void)state;
    memset(g_big, 'b', 2000);
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    g_pass = 0;
    ctxc_http_request_t req = get_req("https://h.example/");
    req.method = "POST";
    req.body_fn = one_put_then_more;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_INVALID_ARG);
    assert_has(g_res.err.message, "more bytes");
    f.sent[f.sent_len] = '\0';
    assert_has(f.sent, "Content-Length: 2000\r\n");
    const char *body = strstr(f.sent, "\r\n\r\n") + 4;
    /* the request never completes: its last byte is not sent */
    assert_true(strlen(body) < 2000);
}

/* Counts fine, then fails on the send pass. */
static ctxc_status_t fails_second(void *user, ctxc_http_write_fn write,
                                  void *wu) {
    (void)user;
    ctxc_status_t st = write(wu, "abc", 3);
    return st == CTXC_OK && g_pass++ > 0 ? CTXC_E_RANGE : st;
}

static ctxc_status_t failing_body(void *user, ctxc_http_write_fn write,
                                  void *wu) {
    (void)user;
    (void)write;
    (void)wu;
    return CTXC_E_NO_SPACE;
}

static void test_body_writer_error_is_returned(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
    ctxc_http_request_t req = get_req("https://h.example/");
    req.method = "POST";
    req.body_fn = failing_body;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_NO_SPACE);
    assert_has(g_res.err.message, "body writer failed");
    assert_false(f.connected);
    /* its error on the send pass is its own, not a length mismatch */
    fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
    g_pass = 0;
    req.body_fn = fails_second;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_RANGE);
    assert_has(g_res.err.message, "body writer failed");
    assert_true(f.closed);
}

static void test_send_errors(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
    f.send_error_at = 10;
    f.send_max = 5;
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_has(g_res.err.message, "sending to h.example");
    assert_true(g_res.resp.retryable);
    /* send keeps answering 0 while time passes */
    fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
    f.zero_every = 1;
    f.clock_step = 1000;
    ctxc_http_request_t req = get_req("https://h.example/");
    req.timeout_ms = 5000;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
    assert_true(g_res.resp.retryable);
}

/* ---- bodies -------------------------------------------------------------- */

static void test_content_length_body(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n"
                  "Content-Length: 11\r\n\r\nhello worldIGNORED");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
    assert_string_equal(g_res.got.body, "hello world");
    assert_true(g_res.resp.has_content_length);
    assert_int_equal(g_res.resp.content_length, 11);
    assert_int_equal(g_res.resp.body_bytes, 11);
    assert_string_equal(g_res.got.headers,
                        "Content-Type: text/plain\nContent-Length: 11\n");
}

static void test_chunked_body(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f,
              "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n"
              "5;name=value;x\r\nhello\r\n"
              "1 ; ext \r\n \r\n"
              "A\r\n0123456789\r\n"
              "0;last\r\nX-Trailer: t1\r\nX-Other:  t2 \r\n\r\nIGNORED");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
    assert_string_equal(g_res.got.body, "hello 0123456789");
    assert_true(g_res.resp.chunked);
    assert_string_equal(g_res.got.headers,
                        "Transfer-Encoding: identity, chunked\n"
                        "X-Trailer: t1\nX-Other: t2\n");
    /* LF-only line ends are accepted too */
    fake_init(&f, "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\n\n"
                  "3\nabc\n0\n\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
    assert_string_equal(g_res.got.body, "abc");
}

static void test_bad_chunks(void **state) {
    (void)state;
    static const struct {
        const char *body, *why;
    } bad[] = {
        {"zz\r\nabc\r\n0\r\n\r\n", "bad chunk size line"},  /* not hex */
        {"\r\nabc\r\n0\r\n\r\n", "bad chunk size line"},    /* empty */
        {"3 x\r\nabc\r\n0\r\n\r\n", "bad chunk size line"}, /* junk */
        {"3\r\nabcX\r\n0\r\n\r\n", "not followed by CRLF"},
        {"3\r\nabc\r\r\n0\r\n\r\n", "not followed by CRLF"},
        {"FFFFFFFFFFFFFFFFF\r\nabc\r\n", "chunk size too large"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char resp[256];
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n%s",
                 bad[i].body);
        fake_t f;
        fake_init(&f, resp);
        assert_int_equal(run_get("https://h.example/", &f), CTXC_E_PARSE);
        assert_has(g_res.err.message, bad[i].why);
        assert_false(g_res.resp.retryable);
    }
    /* the connection ends inside the chunked body */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                  "5\r\nhel");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_has(g_res.err.message, "inside the chunked body");
}

static void test_close_delimited_body(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.0 200 OK\r\nServer: x\r\n\r\nall of this\r\n"
                  "until the end");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
    assert_string_equal(g_res.got.body, "all of this\r\nuntil the end");
    assert_false(g_res.resp.has_content_length);
    /* a Transfer-Encoding without chunked: the body runs to the close */
    fake_init(&f, "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n"
                  "Content-Length: 2\r\n\r\nabcdef");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
    assert_string_equal(g_res.got.body, "abcdef");
}

static void test_interim_responses_and_head(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 100 Continue\r\n\r\n"
                  "HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n"
                  "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
    assert_int_equal(g_res.resp.status, 200);
    assert_string_equal(g_res.got.body, "abc");
    /* HEAD: Content-Length without a body */
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 3000\r\n\r\n");
    ctxc_http_request_t req = get_req("https://h.example/");
    req.method = "HEAD";
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_int_equal(g_res.resp.content_length, 3000);
    assert_int_equal(g_res.got.body_len, 0);
    /* 101 is not something this client asked for */
    fake_init(&f, "HTTP/1.1 101 Switching Protocols\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_PARSE);
}

/* An interim response's headers leave nothing behind: not its Location,
 * Retry-After, Date, Content-Length or Content-Type, and on_header only
 * sees the final response's headers. */
static void test_interim_responses_leave_nothing_behind(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 103 Early Hints\r\nLocation: /a\r\n\r\n"
                  "HTTP/1.1 302 Found\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_has(g_res.err.message, "(no Location)");
    assert_null(strstr(g_res.err.message, "/a"));
    assert_string_equal(g_res.resp.location, "");
    assert_int_equal(g_res.resp.status, 302);
    assert_string_equal(g_res.got.headers, "Content-Length: 0\n");
    /* Retry-After and Date of an interim response */
    fake_init(&f, "HTTP/1.1 103 Early Hints\r\nRetry-After: 7\r\n\r\n"
                  "HTTP/1.1 429 Too Many\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_false(g_res.resp.has_retry_after);
    assert_int_equal(g_res.resp.retry_after_s, 0);
    fake_init(&f, "HTTP/1.1 103 Early Hints\r\n"
                  "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n\r\n"
                  "HTTP/1.1 503 Busy\r\n"
                  "Retry-After: Sun, 06 Nov 1994 08:50:37 GMT\r\n"
                  "Content-Length: 0\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_true(g_res.resp.has_retry_after);
    assert_int_equal(g_res.resp.retry_after_s, 0); /* no Date of its own */
    assert_int_equal(g_res.resp.retry_after_date, 784111837u);
    /* Content-Length and Content-Type of an interim response */
    fake_init(&f, "HTTP/1.1 100 Continue\r\nContent-Length: 2\r\n"
                  "Content-Type: text/event-stream\r\n\r\n"
                  "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n\r\n"
                  "abcdef");
    ctxc_http_request_t req = get_req("https://h.example/");
    req.on_event = on_event;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_false(g_res.resp.has_content_length);
    assert_false(g_res.resp.event_stream);
    assert_string_equal(g_res.got.body, "abcdef");
    assert_string_equal(g_res.got.headers, "Content-Type: application/json\n");
}

/* The client asks for identity and decodes no content or transfer coding
 * but chunked: a coded body is refused before any of it is passed on. */
static void test_codings_are_refused(void **state) {
    (void)state;
    static const struct {
        const char *headers, *coding;
    } bad[] = {
        {"Content-Encoding: gzip\r\n", "content coding 'gzip'"},
        {"Content-Encoding: identity, br\r\n", "content coding 'br'"},
        {"Content-Encoding: identity\r\nContent-Encoding: Deflate\r\n",
         "content coding 'Deflate'"},
        {"Transfer-Encoding: gzip, chunked\r\n", "transfer coding 'gzip'"},
        {"Transfer-Encoding: chunked, gzip\r\n", "transfer coding 'gzip'"},
        {"Transfer-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n",
         "transfer coding 'gzip'"},
        {"Transfer-Encoding: compress\r\n", "transfer coding 'compress'"},
    };
    static char resp[512];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        bool te = strstr(bad[i].headers, "Transfer") != NULL;
        /* a success: CTXC_E_PARSE naming the coding */
        snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\n%s%s\r\n%s",
                 bad[i].headers, te ? "" : "Content-Length: 8\r\n",
                 te ? "8\r\n\x1f\x8b\x08\x00\x01\x02\x03\x04\r\n0\r\n\r\n"
                    : "\x1f\x8b\x08\x00\x01\x02\x03\x04");
        fake_t f;
        fake_init(&f, resp);
        ctxc_status_t st = run_get("https://h.example/", &f);
        if (st != CTXC_E_PARSE) {
            fail_msg("%s: %s", bad[i].headers, ctxc_status_name(st));
        }
        assert_has(g_res.err.message, bad[i].coding);
        assert_has(g_res.err.message, "which ctxc does not decode");
        assert_has(g_res.err.message, "h.example");
        assert_int_equal(g_res.got.body_len, 0);
        assert_false(g_res.resp.retryable);
        /* an error status: still the status (retryable, Retry-After), its
         * body neither passed on nor shown */
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 503 Busy\r\nRetry-After: 9\r\n%s%s\r\n%s",
                 bad[i].headers, te ? "" : "Content-Length: 8\r\n",
                 te ? "8\r\n\x1f\x8b\x08\x00\x01\x02\x03\x04\r\n0\r\n\r\n"
                    : "\x1f\x8b\x08\x00\x01\x02\x03\x04");
        fake_init(&f, resp);
        assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
        assert_int_equal(g_res.resp.status, 503);
        assert_true(g_res.resp.retryable);
        assert_int_equal(g_res.resp.retry_after_s, 9);
        assert_has(g_res.err.message, "HTTP 503 from h.example");
        assert_has(g_res.err.message, bad[i].coding);
        assert_string_equal(g_res.resp.error_body, "");
        assert_int_equal(g_res.got.body_len, 0);
    }
    /* identity, chunked, and bodiless answers are fine */
    static const char *const good[] = {
        "HTTP/1.1 200 OK\r\nContent-Encoding: identity\r\n"
        "Content-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nContent-Encoding: IDENTITY\r\n"
        "Content-Encoding:\r\nContent-Length: 2\r\n\r\nok",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        "2\r\nok\r\n0\r\n\r\n",
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: identity, chunked\r\n\r\n"
        "2\r\nok\r\n0\r\n\r\n",
        "HTTP/1.1 204 No Content\r\nContent-Encoding: gzip\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        fake_t f;
        fake_init(&f, good[i]);
        if (run_get("https://h.example/", &f) != CTXC_OK) {
            fail_msg("%s: %s", good[i], g_res.err.message);
        }
        if (g_res.resp.status == 200) {
            assert_string_equal(g_res.got.body, "ok");
        }
    }
}

static void test_malformed_responses(void **state) {
    (void)state;
    static const char *const bad[] = {
        "HTTP/2 200 OK\r\n\r\n",
        "HTTP/1.1 20 OK\r\n\r\n",
        "HTTP/1.1 2000 OK\r\n\r\n",
        "HTTP/1.1 099 Low\r\n\r\n",
        "ICY 200 OK\r\n\r\n",
        "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n",
        "HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n",
        "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n",
        "HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 12a\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n",
        "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999999\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        fake_t f;
        fake_init(&f, bad[i]);
        if (run_get("https://h.example/", &f) != CTXC_E_PARSE) {
            fail_msg("case %zu: %s (%s)", i, ctxc_status_name(g_res.st),
                     g_res.err.message);
        }
        assert_false(g_res.resp.retryable);
    }
    /* the connection ends before the headers do */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_has(g_res.err.message, "before the end of the response headers");
    fake_init(&f, "");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
}

static void test_callbacks_can_stop(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nA: 1\r\nContent-Length: 1\r\n\r\nx");
    ctxc_http_request_t req = get_req("https://h.example/");
    memset(&g_res, 0, sizeof g_res);
    req.user = &g_res.got;
    g_res.got.stop_with = CTXC_E_RANGE;
    ctxc_port_t port = port_of(&f, true);
    assert_int_equal(ctxc_http_request(&req, &port, g_work, sizeof g_work,
                                       &g_res.resp, &g_res.err),
                     CTXC_E_RANGE);
    assert_string_equal(g_res.got.headers, "A: 1\n");
    assert_int_equal(g_res.got.body_len, 0);
    assert_true(f.closed);
}

/* ---- every split gives the same result ----------------------------------- */

static void signature(char *out, size_t cap) {
    snprintf(out, cap,
             "%s|%s|%u|%d|%u|%llu|%d|%llu|%s|%s|%s|headers=%s|body=%s|"
             "events=%s",
             ctxc_status_name(g_res.st),
             g_res.st == CTXC_OK ? "" : g_res.err.message,
             (unsigned)g_res.resp.status, g_res.resp.has_retry_after,
             (unsigned)g_res.resp.retry_after_s,
             (unsigned long long)g_res.resp.retry_after_date,
             g_res.resp.sse_done, (unsigned long long)g_res.resp.body_bytes,
             g_res.resp.location, g_res.resp.error_body,
             g_res.resp.retryable ? "retry" : "final", g_res.got.headers,
             g_res.got.body, g_res.got.events);
}

static const char *const g_responses[] = {
    "HTTP/1.1 200 OK\r\nContent-Length: 11\r\nX-A:  v \r\n\r\nhello world",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
    "5;e=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nT: x\r\n\r\n",
    "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nuntil\r\nclose",
    "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\nContent-Length: 2\n\nok",
    "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
    "Transfer-Encoding: chunked\r\n\r\n"
    "21\r\n: hi\r\ndata: a\r\ndata: b\r\nid: 7\r\n\r\n"
    "\r\n21\r\nevent: e\rretry: 30\rdata:c\r\rdata\n\n\r\n"
    "e\r\ndata: [DONE]\n\n\r\n0\r\n\r\n",
    "HTTP/1.1 200 OK\r\ncontent-type: Text/Event-Stream; charset=utf-8\r\n"
    "\r\ndata: x\n\ndata: y\n",
    "HTTP/1.1 404 Not Found\r\nContent-Type: application/json\r\n"
    "Content-Length: 60\r\n\r\n"
    "{\"error\": {\"message\": \"no such model\",\n  \"type\": \"invalid\"}}",
    "HTTP/1.1 429 Too Many Requests\r\n"
    "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
    "Retry-After: Sun, 06 Nov 1994 08:50:07 GMT\r\n"
    "Transfer-Encoding: chunked\r\n\r\n4\r\nslow\r\n0\r\n\r\n",
    "HTTP/1.1 302 Found\r\nLocation: https://other.example/x\r\n\r\n",
    "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nshort",
    "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcX",
};

static void run_split_n(const char *resp, size_t len, size_t split_at,
                        size_t recv_max, unsigned zero_every, char *sig,
                        size_t cap) {
    fake_t f;
    fake_init(&f, resp);
    f.resp_len = len;
    f.split_at = split_at;
    f.recv_max = recv_max;
    f.zero_every = zero_every;
    ctxc_http_header_t auth = {"Authorization", AUTH, true};
    ctxc_http_request_t req = get_req("https://h.example/");
    req.headers = &auth;
    req.header_count = 1;
    req.on_event = on_event;
    run_req(&req, &f, true);
    signature(sig, cap);
}

static void run_split(const char *resp, size_t split_at, size_t recv_max,
                      unsigned zero_every, char *sig, size_t cap) {
    run_split_n(resp, strlen(resp), split_at, recv_max, zero_every, sig, cap);
}

static void test_every_split_gives_the_same_result(void **state) {
    (void)state;
    static char want[40000];
    static char got[40000];
    for (size_t r = 0; r < sizeof g_responses / sizeof g_responses[0]; r++) {
        const char *resp = g_responses[r];
        size_t len = strlen(resp);
        run_split(resp, 0, 0, 0, want, sizeof want);
        for (size_t k = 1; k < len; k++) {
            run_split(resp, k, 0, 0, got, sizeof got);
            if (strcmp(want, got) != 0) {
                fail_msg("response %zu split at %zu:\n%s\nvs\n%s", r, k, got,
                         want);
            }
        }
        run_split(resp, 0, 1, 0, got, sizeof got);
        assert_string_equal(got, want);
        run_split(resp, 0, 3, 2, got, sizeof got); /* 0s in between */
        assert_string_equal(got, want);
    }
    /* and the reference results are the right ones */
    run_split(g_responses[4], 0, 0, 0, want, sizeof want);
    assert_string_equal(g_res.got.events, "[message|7|a\nb|]\n"
                                          "[e|7|c|r30]\n"
                                          "[message|7||r30]\n"
                                          "[message|7|[DONE]|r30|done]\n");
    assert_true(g_res.resp.sse_done);
    run_split(g_responses[5], 0, 0, 0, want, sizeof want);
    assert_int_equal(g_res.st, CTXC_E_PARSE);
    assert_string_equal(g_res.got.events, "[message||x|]\n");
}

/* Responses with a few bytes changed (a fuzz of the parsers): whatever the
 * outcome, fed whole, one byte at a time or split anywhere, it is the same
 * (and the sanitizer build sees no bad access). */
static void test_mutated_responses_split_consistently(void **state) {
    (void)state;
    static char want[40000];
    static char got[40000];
    static char resp[1024];
    static const char alphabet[] = "\r\n :;0aF-[]\x00\xff"
                                   "9";
    uint32_t seed = 12345u;
    for (int iter = 0; iter < 3000; iter++) {
        size_t r = (size_t)iter % (sizeof g_responses / sizeof g_responses[0]);
        size_t len = strlen(g_responses[r]);
        memcpy(resp, g_responses[r], len + 1);
        for (int k = 0; k < 1 + iter % 3; k++) {
            seed = seed * 1103515245u + 12345u;
            size_t at = (seed >> 8) % len;
            seed = seed * 1103515245u + 12345u;
            resp[at] = alphabet[(seed >> 8) % (sizeof alphabet - 1)];
        }
        /* the length stays: a NUL byte is part of the response */
        run_split_n(resp, len, 0, 0, 0, want, sizeof want);
        run_split_n(resp, len, 0, 1, 0, got, sizeof got);
        if (strcmp(want, got) != 0) {
            fail_msg("iteration %d, one byte at a time:\n%s\nvs\n%s", iter, got,
                     want);
        }
        seed = seed * 1103515245u + 12345u;
        size_t split = 1 + (seed >> 8) % (len - 1);
        run_split_n(resp, len, split, 0, 0, got, sizeof got);
        if (strcmp(want, got) != 0) {
            fail_msg("iteration %d, split at %zu:\n%s\nvs\n%s", iter, split,
                     got, want);
        }
    }
}

/* ---- SSE ----------------------------------------------------------------- */

static ctxc_status_t run_sse(const char *body, size_t len) {
    char resp[12000];
    int n = snprintf(resp, sizeof resp,
                     "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "\r\n");
    assert_true((size_t)n + len < sizeof resp);
    memcpy(resp + n, body, len);
    resp[(size_t)n + len] = '\0';
    fake_t f;
    fake_init(&f, resp);
    f.resp_len = (size_t)n + len;
    ctxc_http_request_t req = get_req("https://h.example/");
    req.on_event = on_event;
    return run_req(&req, &f, true);
}

static void test_sse_events(void **state) {
    (void)state;
    static const char body[] =
        ":comment line\n"
        ": another\r\n"
        "event: delta\n"
        "data: {\"a\":1}\n"
        "data:second\n"
        "data:  two spaces\n"
        "id: 42\n"
        "retry: 1500\n"
        "unknown: field\n"
        "\n"
        "\n" /* nothing to dispatch */
        "event: ping\n"
        "\n" /* no data: nothing, and the type is reset */
        "data\n"
        "\n"
        "retry: x1\n" /* not digits: ignored */
        "id\n"        /* empty id */
        "data: last\r\n\r\n";
    assert_int_equal(run_sse(body, sizeof body - 1), CTXC_OK);
    assert_string_equal(g_res.got.events,
                        "[delta|42|{\"a\":1}\nsecond\n two spaces|r1500]\n"
                        "[message|42||r1500]\n"
                        "[message||last|r1500]\n");
    assert_false(g_res.resp.sse_done);
}

static void test_sse_line_ends(void **state) {
    (void)state;
    static const char *const bodies[] = {
        "data: a\ndata: b\n\ndata: c\n\n",
        "data: a\r\ndata: b\r\n\r\ndata: c\r\n\r\n",
        "data: a\rdata: b\r\rdata: c\r\r",
        "data: a\r\ndata: b\n\rdata: c\r\n\n",
    };
    for (size_t i = 0; i < sizeof bodies / sizeof bodies[0]; i++) {
        assert_int_equal(run_sse(bodies[i], strlen(bodies[i])), CTXC_OK);
        assert_string_equal(g_res.got.events,
                            "[message||a\nb|]\n[message||c|]\n");
    }
}

static void test_sse_done_ends_the_stream(void **state) {
    (void)state;
    static const char body[] = "data: x\n\ndata: [DONE]\n\ndata: after\n\n"
                               "this is not even an event";
    assert_int_equal(run_sse(body, sizeof body - 1), CTXC_OK);
    assert_string_equal(g_res.got.events,
                        "[message||x|]\n[message||[DONE]||done]\n");
    assert_true(g_res.resp.sse_done);
    /* the raw bytes end with the event too, however they were sliced */
    assert_string_equal(g_res.got.body, "data: x\n\ndata: [DONE]\n\n");
    /* "[DONE]" with anything around it is data */
    static const char other[] = "data: [DONE] \n\ndata: [DONE]\ndata: x\n\n";
    assert_int_equal(run_sse(other, sizeof other - 1), CTXC_OK);
    assert_false(g_res.resp.sse_done);
}

static void test_sse_cut_event_is_an_error(void **state) {
    (void)state;
    static const char *const cut[] = {
        "data: x\n\ndata: y\n",  /* no empty line after the data */
        "data: x\n\ndata: y",    /* inside a line */
        "data: x\n\nevent: e\n", /* a field without its event */
        "data: x\n\n: comm",     /* inside a comment line */
    };
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        assert_int_equal(run_sse(cut[i], strlen(cut[i])), CTXC_E_PARSE);
        assert_has(g_res.err.message, "ended inside an event");
        assert_string_equal(g_res.got.events, "[message||x|]\n");
    }
    /* a Content-Length body that ends the stream inside an event */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 7\r\n"
                  "Content-Type: text/event-stream\r\n\r\ndata: x");
    ctxc_http_request_t req = get_req("https://h.example/");
    req.on_event = on_event;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_PARSE);
}

static void test_sse_long_lines(void **state) {
    (void)state;
    static char body[10000];
    /* a data line that fits exactly: data + NUL = the buffer */
    size_t n = 0;
    memcpy(body, "data:", 5);
    n = 5;
    size_t fit = CTXC_CFG_HTTP_SSE_BUFFER_BYTES - 1 - 5;
    memset(body + n, 'd', fit);
    n += fit;
    memcpy(body + n, "\n\n", 2);
    n += 2;
    assert_int_equal(run_sse(body, n), CTXC_OK);
    assert_int_equal(g_res.got.events_len, fit + strlen("[message|||]\n"));
    /* one byte more does not */
    n = 5;
    memset(body + n, 'd', fit + 1);
    n += fit + 1;
    memcpy(body + n, "\n\n", 2);
    n += 2;
    assert_int_equal(run_sse(body, n), CTXC_E_TOO_LARGE);
    assert_has(g_res.err.message, "CTXC_CFG_HTTP_SSE_BUFFER_BYTES");
    char limit[64];
    snprintf(limit, sizeof limit, "the %u byte buffer",
             (unsigned)CTXC_CFG_HTTP_SSE_BUFFER_BYTES);
    assert_has(g_res.err.message, limit);
    /* many data lines that add up to too much */
    n = 0;
    for (int i = 0; i < 200; i++) {
        memcpy(body + n, "data: 0123456789012345678901234\n", 32);
        n += 32;
    }
    assert_int_equal(run_sse(body, n), CTXC_E_TOO_LARGE);
    /* a comment line of any length is fine (it is not kept) */
    body[0] = ':';
    memset(body + 1, 'c', 9000);
    memcpy(body + 9001, "\ndata: z\n\n", 10);
    assert_int_equal(run_sse(body, 9011), CTXC_OK);
    assert_string_equal(g_res.got.events, "[message||z|]\n");
    /* an event type or id longer than the field */
    char longtype[200];
    snprintf(longtype, sizeof longtype, "event: %0*d\ndata: x\n\n",
             CTXC_CFG_HTTP_SSE_FIELD_MAX, 0);
    assert_int_equal(run_sse(longtype, strlen(longtype)), CTXC_E_TOO_LARGE);
    assert_has(g_res.err.message, "CTXC_CFG_HTTP_SSE_FIELD_MAX");
    snprintf(limit, sizeof limit, "CTXC_CFG_HTTP_SSE_FIELD_MAX - 1 (%u)",
             (unsigned)CTXC_CFG_HTTP_SSE_FIELD_MAX - 1u);
    assert_has(g_res.err.message, limit);
}

static ctxc_status_t count_events(void *user, const ctxc_sse_event_t *ev) {
    (void)ev;
    (*(int *)user)++;
    return CTXC_OK;
}

static void test_sse_only_for_event_streams(void **state) {
    (void)state;
    /* a JSON answer to a streaming request: the body, no events, OK */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                  "Content-Length: 13\r\n\r\n{\"id\": \"x:1\"}");
    ctxc_http_request_t req = get_req("https://h.example/");
    req.on_event = on_event;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_false(g_res.resp.event_stream);
    assert_string_equal(g_res.got.body, "{\"id\": \"x:1\"}");
    assert_int_equal(g_res.got.events_len, 0);
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Type: text/event-streams\r\n"
                  "\r\ndata: x\n\n");
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_int_equal(g_res.got.events_len, 0);
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream ;x=y\r\n"
                  "\r\ndata: x\n\n");
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_true(g_res.resp.event_stream);
    assert_string_equal(g_res.got.events, "[message||x|]\n");
}

static void test_sse_reader_alone(void **state) {
    (void)state;
    char buf[16];
    ctxc_sse_parser_t p;
    int events = 0;
    ctxc_error_t err;
    ctxc_sse_init(&p, buf, sizeof buf, count_events, &events);
    /* 14 bytes of line + NUL fit a 16-byte buffer, "data: " counted */
    assert_int_equal(ctxc_sse_feed(&p, "data: 12345678\n\n", 16, &err),
                     CTXC_OK);
    assert_int_equal(events, 1);
    assert_int_equal(ctxc_sse_feed(&p, "data: 1234567890\n", 17, &err),
                     CTXC_E_TOO_LARGE);
    ctxc_sse_init(&p, buf, sizeof buf, count_events, &events);
    assert_int_equal(ctxc_sse_finish(&p, &err), CTXC_OK);
    assert_int_equal(ctxc_sse_feed(&p, "data: [DONE]\n\nxx", 16, &err),
                     CTXC_OK);
    assert_true(ctxc_sse_done(&p));
    assert_int_equal(ctxc_sse_finish(&p, &err), CTXC_OK);
}

/* ---- error statuses ------------------------------------------------------ */

static void test_client_errors_carry_the_body(void **state) {
    (void)state;
    static const unsigned codes[] = {400, 401, 403, 404, 422};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        char resp[512];
        snprintf(
            resp, sizeof resp,
            "HTTP/1.1 %u Whatever\r\nContent-Type: application/json\r\n"
            "Content-Length: 50\r\n\r\n"
            "{\"error\":{\"message\":\"Invalid model\",\n\t\"code\":\"m\"}}",
            codes[i]);
        fake_t f;
        fake_init(&f, resp);
        assert_int_equal(run_get("https://api.example.com/", &f),
                         CTXC_E_HTTP_STATUS);
        char want[64];
        snprintf(want, sizeof want, "HTTP %u from api.example.com", codes[i]);
        assert_has(g_res.err.message, want);
        assert_has(
            g_res.err.message,
            "{\"error\":{\"message\":\"Invalid model\", \"code\":\"m\"}}");
        assert_string_equal(
            g_res.resp.error_body,
            "{\"error\":{\"message\":\"Invalid model\", \"code\":\"m\"}}");
        assert_int_equal(g_res.resp.status, codes[i]);
        assert_false(g_res.resp.retryable);
        assert_false(ctxc_http_retryable(g_res.st, &g_res.resp));
        /* the body went to on_body too */
        assert_int_equal(g_res.got.body_len, 50);
    }
    /* an error body larger than the excerpt is cut, non-printable bytes
     * become '?', and a reset while reading it still reports the status */
    static char resp[4096];
    int n =
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 400 Bad\r\nContent-Length: 3000\r\n\r\n\x01\xff");
    memset(resp + n, 'e', 2000);
    resp[n + 2000] = '\0';
    fake_t f;
    fake_init(&f, resp);
    f.error_at = n + 1500;
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_int_equal(strlen(g_res.resp.error_body),
                     CTXC_CFG_HTTP_ERROR_BODY_MAX - 1);
    assert_true(strncmp(g_res.resp.error_body, "??eee", 5) == 0);
    assert_false(g_res.resp.retryable);
    /* no body at all */
    fake_init(&f, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_has(g_res.err.message, "HTTP 403 from h.example: (no body)");
}

static void test_rate_limits_and_server_errors_are_retryable(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 429 Too Many Requests\r\nRetry-After: 7\r\n"
                  "Content-Length: 4\r\n\r\nslow");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_true(g_res.resp.retryable);
    assert_true(g_res.resp.has_retry_after);
    assert_int_equal(g_res.resp.retry_after_s, 7);
    assert_int_equal(g_res.resp.retry_after_date, 0);
    assert_has(g_res.err.message, "HTTP 429");
    assert_has(g_res.err.message, "slow");
    /* an HTTP-date, relative to the server's Date */
    fake_init(&f, "HTTP/1.1 429 Too Many Requests\r\n"
                  "Retry-After: Sun, 06 Nov 1994 08:51:37 GMT\r\n"
                  "Date: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                  "Content-Length: 0\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_true(g_res.resp.retryable);
    assert_true(g_res.resp.has_retry_after);
    assert_int_equal(g_res.resp.retry_after_s, 120);
    assert_int_equal(g_res.resp.retry_after_date, 784111897u);
    /* a date without Date: the absolute time only */
    fake_init(&f, "HTTP/1.1 503 Unavailable\r\n"
                  "Retry-After: Sunday, 06-Nov-94 08:49:37 GMT\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_true(g_res.resp.retryable);
    assert_true(g_res.resp.has_retry_after);
    assert_int_equal(g_res.resp.retry_after_s, 0);
    assert_int_equal(g_res.resp.retry_after_date, 784111777u);
    /* a date in the past: 0 seconds; garbage: no Retry-After */
    fake_init(&f, "HTTP/1.1 429 x\r\nDate: Sun, 06 Nov 1994 08:49:37 GMT\r\n"
                  "Retry-After: Sun Nov  6 08:49:00 1994\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_true(g_res.resp.has_retry_after);
    assert_int_equal(g_res.resp.retry_after_s, 0);
    fake_init(&f, "HTTP/1.1 429 x\r\nRetry-After: soon\r\n\r\n");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
    assert_false(g_res.resp.has_retry_after);
    assert_true(g_res.resp.retryable);
    static const unsigned codes[] = {500, 502, 503, 504, 408};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        char resp[128];
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 %u x\r\nContent-Length: 5\r\n\r\noops!", codes[i]);
        fake_init(&f, resp);
        assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
        assert_int_equal(g_res.resp.status, codes[i]);
        assert_true(g_res.resp.retryable);
        assert_has(g_res.err.message, "oops!");
    }
    assert_false(ctxc_http_retryable(CTXC_E_HTTP_STATUS, NULL));
    assert_false(ctxc_http_retryable(CTXC_E_TLS, NULL));
    assert_false(ctxc_http_retryable(CTXC_E_PARSE, NULL));
    assert_false(ctxc_http_retryable(CTXC_E_INSECURE, NULL));
    assert_true(ctxc_http_retryable(CTXC_E_NETWORK, NULL));
    assert_true(ctxc_http_retryable(CTXC_E_TIMEOUT, NULL));
}

static void test_redirects_are_not_followed(void **state) {
    (void)state;
    static const unsigned codes[] = {301, 302, 307, 308};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        char resp[256];
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 %u Moved\r\nLocation: https://new.example/v2\r\n"
                 "Content-Length: 5\r\n\r\nmoved",
                 codes[i]);
        fake_t f;
        fake_init(&f, resp);
        assert_int_equal(run_get("https://h.example/", &f), CTXC_E_HTTP_STATUS);
        assert_has(g_res.err.message, "redirect to 'https://new.example/v2'");
        assert_string_equal(g_res.resp.location, "https://new.example/v2");
        assert_int_equal(g_res.resp.status, codes[i]);
        assert_false(g_res.resp.retryable);
    }
}

/* ---- limits and broken connections --------------------------------------- */

static void test_header_limits(void **state) {
    (void)state;
    static char resp[CTXC_CFG_HTTP_LINE_MAX * 2 + 4096];
    /* CTXC_CFG_HTTP_MAX_HEADERS headers are fine, one more is not */
    for (int extra = 0; extra < 2; extra++) {
        size_t n = (size_t)snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\n");
        for (int i = 0; i < CTXC_CFG_HTTP_MAX_HEADERS - 1 + extra; i++) {
            n += (size_t)snprintf(resp + n, sizeof resp - n, "X-%d: v\r\n", i);
        }
        snprintf(resp + n, sizeof resp - n, "Content-Length: 1\r\n\r\nx");
        fake_t f;
        fake_init(&f, resp);
        if (extra == 0) {
            assert_int_equal(run_get("https://h.example/", &f), CTXC_OK);
        } else {
            assert_int_equal(run_get("https://h.example/", &f),
                             CTXC_E_TOO_LARGE);
            assert_has(g_res.err.message, "CTXC_CFG_HTTP_MAX_HEADERS");
            char limit[64];
            snprintf(limit, sizeof limit, "more than %u header lines",
                     (unsigned)CTXC_CFG_HTTP_MAX_HEADERS);
            assert_has(g_res.err.message, limit);
            assert_false(g_res.resp.retryable);
        }
    }
    /* a header line of CTXC_CFG_HTTP_LINE_MAX bytes is fine (CRLF or LF),
     * one byte more is not */
    for (int extra = 0; extra < 2; extra++) {
        for (int crlf = 0; crlf < 2; crlf++) {
            size_t n =
                (size_t)snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nX: ");
            memset(resp + n, 'v', CTXC_CFG_HTTP_LINE_MAX - 3 + extra);
            n += CTXC_CFG_HTTP_LINE_MAX - 3 + extra;
            snprintf(resp + n, sizeof resp - n, "%s\r\n", crlf ? "\r\n" : "\n");
            fake_t f;
            fake_init(&f, resp);
            ctxc_status_t st = run_get("https://h.example/", &f);
            assert_int_equal(st, extra ? CTXC_E_TOO_LARGE : CTXC_OK);
            if (extra) {
                /* the limit, its value and the line's length */
                char want[128];
                snprintf(want, sizeof want,
                         "header line from h.example is %u bytes, longer than "
                         "CTXC_CFG_HTTP_LINE_MAX (%u)",
                         (unsigned)CTXC_CFG_HTTP_LINE_MAX + 1u,
                         (unsigned)CTXC_CFG_HTTP_LINE_MAX);
                assert_has(g_res.err.message, want);
            }
        }
    }
    /* a line without an end in sight: as much as was read */
    size_t n = (size_t)snprintf(resp, sizeof resp, "HTTP/1.1 200 OK\r\nX: ");
    memset(resp + n, 'v', CTXC_CFG_HTTP_LINE_MAX * 2);
    resp[n + CTXC_CFG_HTTP_LINE_MAX * 2] = '\0';
    fake_t f;
    fake_init(&f, resp);
    f.recv_max = 100;
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_TOO_LARGE);
    char want[128];
    snprintf(want, sizeof want,
             "header line from h.example is more than %u bytes (",
             (unsigned)CTXC_CFG_HTTP_LINE_MAX);
    assert_has(g_res.err.message, want);
    snprintf(want, sizeof want,
             " read without its end), longer than CTXC_CFG_HTTP_LINE_MAX (%u)",
             (unsigned)CTXC_CFG_HTTP_LINE_MAX);
    assert_has(g_res.err.message, want);
    /* a status line too */
    memset(resp, 'H', CTXC_CFG_HTTP_LINE_MAX + 10);
    snprintf(resp + CTXC_CFG_HTTP_LINE_MAX + 10, 8, "\r\n\r\n");
    fake_init(&f, resp);
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_TOO_LARGE);
    assert_has(g_res.err.message, "status line");
    assert_has(g_res.err.message, "CTXC_CFG_HTTP_LINE_MAX");
}

static void test_truncated_and_reset_bodies(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc");
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_has(g_res.err.message, "after 3 of 10 body bytes");
    assert_true(g_res.resp.retryable);
    assert_string_equal(g_res.got.body, "abc");
    static const char ok[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    fake_init(&f, ok);
    f.error_at = (long)(sizeof ok - 1 - 4);
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_true(g_res.resp.retryable);
    assert_has(g_res.err.message, "receiving from h.example");
    assert_string_equal(g_res.got.body, "012345");
}

/* A failed recv/send/connect carries the port's own message (its
 * last_error op: the TLS library's text and code); a TLS error after the
 * handshake (CTXC_TRANSPORT_TLS_ERROR) is CTXC_E_TLS, not a network
 * error. */
static void test_port_error_text(void **state) {
    (void)state;
    static const char ok[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n0123456789";
    static const char badmac[] =
        "recv: TLS error after the handshake: SSL - Verification of the "
        "message MAC failed (-0x7180)";
    fake_t f;
    /* a bad MAC inside the body */
    fake_init(&f, ok);
    f.error_at = (long)(sizeof ok - 1 - 4);
    f.error_code = CTXC_TRANSPORT_TLS_ERROR;
    f.why = badmac;
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_TLS);
    assert_has(g_res.err.message, "receiving from h.example");
    assert_has(g_res.err.message, "Verification of the message MAC failed");
    assert_has(g_res.err.message, "(-0x7180)");
    assert_string_equal(g_res.got.body, "012345");
    /* the same with CTXC_TRANSPORT_ERROR: a network error, the port's text */
    fake_init(&f, ok);
    f.error_at = 3;
    f.why = "recv: the server closed the connection without TLS close_notify";
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_true(g_res.resp.retryable);
    assert_has(g_res.err.message, "without TLS close_notify");
    /* a TLS error without a message: still CTXC_E_TLS, said so */
    fake_init(&f, ok);
    f.error_at = 3;
    f.error_code = CTXC_TRANSPORT_TLS_ERROR;
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_TLS);
    assert_has(g_res.err.message, "TLS error");
    /* an empty message is no message */
    fake_init(&f, ok);
    f.error_at = 3;
    f.why = "";
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_NETWORK);
    assert_has(g_res.err.message, "connection reset or transport error");
    /* send */
    fake_init(&f, ok);
    f.send_error_at = 10;
    f.send_max = 5;
    f.error_code = CTXC_TRANSPORT_TLS_ERROR;
    f.why = "send: TLS error after the handshake: SSL - A fatal alert "
            "message was received from our peer (-0x7780)";
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_TLS);
    assert_has(g_res.err.message, "sending to h.example");
    assert_has(g_res.err.message, "fatal alert message");
    assert_has(g_res.err.message, "(-0x7780)");
    /* a connect that failed with no message of its own: the port's text */
    fake_init(&f, ok);
    f.connect_status = CTXC_E_TLS;
    f.connect_why = "h.example:443: handshake failed: X509 - Certificate "
                    "verification failed (-0x2700)";
    assert_int_equal(run_get("https://h.example/", &f), CTXC_E_TLS);
    assert_has(g_res.err.message, "h.example:443: handshake failed");
    assert_has(g_res.err.message, "(-0x2700)");
}

static void test_stalls_time_out(void **state) {
    (void)state;
    /* with a clock: recv keeps answering 0 while the clock advances */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
    f.stall = true;
    f.clock_step = 100;
    ctxc_http_request_t req = get_req("https://h.example/");
    req.timeout_ms = 2000;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
    assert_has(g_res.err.message, "2000 ms");
    assert_true(g_res.resp.retryable);
    assert_true(f.now >= 2000 && f.now < 3000);
    /* zeros now and then while time passes below the timeout: fine */
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
    f.zero_every = 2;
    f.recv_max = 1;
    f.clock_step = 900;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    /* without a clock: a bounded number of zeros */
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx");
    f.stall = true;
    assert_int_equal(run_req(&req, &f, false), CTXC_E_TIMEOUT);
    assert_has(g_res.err.message, "CTXC_CFG_HTTP_IDLE_POLLS_MAX");
    /* a stall in the middle of the body */
    static const char mid[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nxy";
    fake_init(&f, mid);
    f.stall_at = (long)(sizeof mid - 1);
    f.clock_step = 10;
    req.timeout_ms = 50;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
    assert_string_equal(g_res.got.body, "xy");
    assert_true(g_res.resp.retryable);
}

/* The port's stop hook: a request that stalls in the middle of its body
 * is stopped once the hook says so (here: 500 ms into it by the fake
 * clock, long before the 2000 ms read timeout): CTXC_E_CANCELLED, the
 * connection closed, the body so far delivered. Without a hook the same
 * request runs into its timeout. */
static bool stop_after_500_ms(void *ctx) { return ((fake_t *)ctx)->now >= 500; }

static void test_stop_hook_ends_a_blocking_request(void **state) {
    (void)state;
    static const char mid[] =
        "HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\nxy";
    fake_t f;
    fake_init(&f, mid);
    f.stall_at = (long)(sizeof mid - 1);
    f.clock_step = 10;
    ctxc_http_request_t req = get_req("https://h.example/");
    req.timeout_ms = 2000;
    req.user = &g_res.got;
    memset(&g_res, 0, sizeof g_res);
    ctxc_port_t port = port_of(&f, true);
    port.stop = stop_after_500_ms;
    port.stop_ctx = &f;
    g_res.st = ctxc_http_request(&req, &port, g_work, sizeof g_work,
                                 &g_res.resp, &g_res.err);
    assert_int_equal(g_res.st, CTXC_E_CANCELLED);
    assert_has(g_res.err.message, "stop hook");
    assert_true(f.closed);
    assert_true(f.now >= 500 && f.now < 2000);
    assert_string_equal(g_res.got.body, "xy");
    assert_true(ctxc_port_stop_requested(&port));
    assert_false(ctxc_port_stop_requested(NULL));
    /* no hook: the timeout */
    fake_init(&f, mid);
    f.stall_at = (long)(sizeof mid - 1);
    f.clock_step = 10;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
}

/* A server that drips its answer: one byte per recv, the clock 500 ms on
 * per transport call. The read timeout never trips (bytes keep coming);
 * the deadline ends the call. */
static void test_deadline_ends_a_drip_fed_answer(void **state) {
    (void)state;
    static char resp[512];
    static const char *const heads[] = {"HTTP/1.1 200 OK",
                                        "HTTP/1.1 500 Server Error"};
    for (size_t i = 0; i < 2; i++) {
        char body[201];
        memset(body, 'd', 200);
        body[200] = '\0';
        snprintf(resp, sizeof resp, "%s\r\nContent-Length: 200\r\n\r\n%s",
                 heads[i], body);
        fake_t f;
        fake_init(&f, resp);
        f.recv_max = 1;
        f.clock_step = 500;
        ctxc_http_request_t req = get_req("https://h.example/");
        req.timeout_ms = 2000;
        req.deadline_ms = 3000;
        assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
        if (strncmp(g_res.err.message, "deadline of 3000 ms ran out", 27) !=
            0) {
            fail_msg("message: %s", g_res.err.message);
        }
        assert_has(g_res.err.message, "while reading the response");
        assert_has(g_res.err.message, "h.example");
        assert_true(g_res.resp.retryable);
        assert_true(f.pos < strlen(resp)); /* it did not wait for the end */
        /* no deadline: the same answer is read to its end */
        fake_init(&f, resp);
        f.recv_max = 1;
        f.clock_step = 500;
        req.deadline_ms = 0;
        assert_int_equal(run_req(&req, &f, true),
                         i == 0 ? CTXC_OK : CTXC_E_HTTP_STATUS);
        assert_int_equal(g_res.resp.body_bytes, 200);
    }
    /* a deadline that is not reached changes nothing */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
    f.recv_max = 1;
    f.clock_step = 10;
    ctxc_http_request_t req = get_req("https://h.example/");
    req.deadline_ms = 100000;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_string_equal(g_res.got.body, "ok");
    /* a slow reader of the request: the deadline runs out while sending */
    for (size_t i = 0; i < 2000; i++) {
        g_big[i] = (char)('a' + i % 26);
    }
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    f.send_max = 10;
    f.clock_step = 100;
    req = get_req("https://h.example/");
    req.method = "POST";
    req.body_fn = big_body;
    req.deadline_ms = 1000;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
    assert_has(g_res.err.message,
               "deadline of 1000 ms ran out while sending the request");
    assert_true(f.sent_len < 2000);
    /* a connect that used it all up: nothing is sent */
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    f.connect_ms = 5000;
    req = get_req("https://h.example/");
    req.deadline_ms = 1000;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_TIMEOUT);
    assert_has(g_res.err.message,
               "deadline of 1000 ms ran out while connecting to h.example");
    assert_int_equal(f.sent_len, 0);
}

/* ---- connect and the secret rule ----------------------------------------- */

static void test_secrets_need_https_or_loopback(void **state) {
    (void)state;
    static const char *const refused[] = {
        "http://api.example.com/v1",
        "http://10.0.2.15:8080/", /* not loopback (never contacted: fake) */
        "http://128.0.0.1/",
        "http://localhost.evil.example/",
        "http://[::2]/",
        "http://127.0.0.1.evil.example/",
        "http://[::ffff:1]/",
        "http://0.0.0.0/",
        /* spellings a resolver may send elsewhere: only the canonical
         * forms count */
        "http://localhost.:11434/",
        "http://LocalHost./",
        "http://127.0.0.09:8080/",
        "http://127.08.0.1:8080/",
        "http://0127.0.0.1/",
        "http://127.1/",
        "http://2130706433/",
        "http://0x7f.0.0.1/",
    };
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++) {
        fake_t f;
        fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
        ctxc_http_header_t hs[] = {{"X-Plain", "p", false},
                                   {"x-api-key", SECRET, true}};
        ctxc_http_request_t req = get_req(refused[i]);
        req.headers = hs;
        req.header_count = 2;
        if (run_req(&req, &f, true) != CTXC_E_INSECURE) {
            fail_msg("%s: %s", refused[i], ctxc_status_name(g_res.st));
        }
        assert_string_equal(f.host, ""); /* never connected */
        assert_int_equal(f.sent_len, 0);
        assert_has(g_res.err.message, "x-api-key");
        assert_has(g_res.err.message, "https://");
        assert_null(strstr(g_res.err.message, SECRET));
        assert_false(g_res.resp.retryable);
    }
    static const struct {
        const char *url, *host;
    } allowed[] = {
        {"http://127.0.0.1:8080/v1", "127.0.0.1"},
        {"http://127.200.3.4/", "127.200.3.4"},
        {"http://127.0.0.0/", "127.0.0.0"},
        {"http://127.255.255.255/", "127.255.255.255"},
        /* localhost: the literal loopback address, not a resolver's answer */
        {"http://localhost/", "127.0.0.1"},
        {"http://LocalHost:11434/", "127.0.0.1"},
        {"http://[::1]:8080/", "::1"},
        {"http://[0:0:0:0:0:0:0:1]/", "0:0:0:0:0:0:0:1"},
        {"http://[0::0:1]/", "0::0:1"},
        {"https://api.example.com/", "api.example.com"},
        {"https://10.0.2.15/", "10.0.2.15"},
    };
    for (size_t i = 0; i < sizeof allowed / sizeof allowed[0]; i++) {
        fake_t f;
        fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
        ctxc_http_header_t auth = {"Authorization", AUTH, true};
        ctxc_http_request_t req = get_req(allowed[i].url);
        req.headers = &auth;
        req.header_count = 1;
        if (run_req(&req, &f, true) != CTXC_OK) {
            fail_msg("%s: %s", allowed[i].url, g_res.err.message);
        }
        assert_string_equal(f.host, allowed[i].host);
        f.sent[f.sent_len] = '\0';
        assert_has(f.sent, "Authorization: " AUTH "\r\n");
    }
    /* the Host header still says what the URL says */
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    ctxc_http_header_t key = {"x-api-key", SECRET, true};
    ctxc_http_request_t req = get_req("http://LocalHost:11434/v1");
    req.headers = &key;
    req.header_count = 1;
    assert_int_equal(run_req(&req, &f, true), CTXC_OK);
    assert_string_equal(f.host, "127.0.0.1");
    assert_int_equal(f.port, 11434);
    f.sent[f.sent_len] = '\0';
    assert_has(f.sent, "GET /v1 HTTP/1.1\r\nHost: LocalHost:11434\r\n");
    /* without a secret, localhost goes to the resolver as usual */
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(run_get("http://localhost:8080/", &f), CTXC_OK);
    assert_string_equal(f.host, "localhost");
    /* without a secret, plain http to anywhere is fine */
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    assert_int_equal(run_get("http://api.example.com/", &f), CTXC_OK);
    assert_string_equal(f.host, "api.example.com");
    assert_int_equal(f.port, 80);
    assert_false(f.tls);
}

static void test_connect_failures(void **state) {
    (void)state;
    static const struct {
        ctxc_status_t from, to;
        bool retry;
    } cases[] = {
        {CTXC_E_TLS, CTXC_E_TLS, false},
        {CTXC_E_IO, CTXC_E_NETWORK, true},
        {CTXC_E_NETWORK, CTXC_E_NETWORK, true},
        {CTXC_E_TIMEOUT, CTXC_E_TIMEOUT, true},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        fake_t f;
        fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
        f.connect_status = cases[i].from;
        assert_int_equal(run_get("https://h.example:8443/", &f), cases[i].to);
        assert_int_equal(g_res.err.status, cases[i].to);
        assert_has(g_res.err.message, "connect to h.example:8443");
        assert_has(g_res.err.message, "fake connect failed");
        assert_int_equal(g_res.resp.retryable, cases[i].retry);
        assert_false(f.closed);
    }
}

static void test_bad_arguments(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
    static const char *const urls[] = {
        "ftp://h/",        "https://",        "https:///x",
        "https://u:p@h/",  "https://h:0/",    "https://h:65536/",
        "https://h:/",     "https://h x/",    "https://h/a b",
        "https://[::1/",   "https://[::1]x/", "https://h/\x01",
        "https://h_\xff/",
    };
    for (size_t i = 0; i < sizeof urls / sizeof urls[0]; i++) {
        fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
        if (run_get(urls[i], &f) != CTXC_E_INVALID_ARG) {
            fail_msg("%s: %s", urls[i], ctxc_status_name(g_res.st));
        }
        assert_false(f.connected);
    }
    static const ctxc_http_header_t bad_headers[][1] = {
        {{"X-Inject", "a\r\nEvil: 1", false}},
        {{"Bad Name", "v", false}},
        {{"Host", "other", false}},
        {{"content-length", "5", false}},
        {{"Transfer-Encoding", "chunked", false}},
        {{"Accept-Encoding", "gzip", false}},
        {{"X-Null", NULL, false}},
    };
    for (size_t i = 0; i < sizeof bad_headers / sizeof bad_headers[0]; i++) {
        fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
        ctxc_http_request_t req = get_req("https://h.example/");
        req.headers = bad_headers[i];
        req.header_count = 1;
        assert_int_equal(run_req(&req, &f, true), CTXC_E_INVALID_ARG);
        assert_false(f.connected);
    }
    /* a secret with CR/LF is refused without showing it */
    ctxc_http_header_t s = {"Authorization", "Bearer " SECRET "\r\n", true};
    ctxc_http_request_t req = get_req("https://h.example/");
    req.headers = &s;
    req.header_count = 1;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_INVALID_ARG);
    assert_null(strstr(g_res.err.message, SECRET));
    req = get_req("https://h.example/");
    req.method = "GE T";
    assert_int_equal(run_req(&req, &f, true), CTXC_E_INVALID_ARG);
    /* no transport, NULL arguments */
    ctxc_port_t none;
    memset(&none, 0, sizeof none);
    ctxc_http_response_t resp;
    ctxc_error_t err;
    req = get_req("https://h.example/");
    assert_int_equal(
        ctxc_http_request(&req, &none, g_work, sizeof g_work, &resp, &err),
        CTXC_E_INVALID_ARG);
    assert_int_equal(
        ctxc_http_request(&req, NULL, g_work, sizeof g_work, &resp, &err),
        CTXC_E_INVALID_ARG);
    assert_int_equal(
        ctxc_http_request(NULL, NULL, g_work, sizeof g_work, &resp, NULL),
        CTXC_E_INVALID_ARG);
}

static void test_work_area_too_small(void **state) {
    (void)state;
    fake_t f;
    fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n");
    ctxc_port_t port = port_of(&f, true);
    ctxc_http_request_t req = get_req("https://h.example/");
    ctxc_http_response_t resp;
    ctxc_error_t err;
    size_t small = CTXC_HTTP_WORK_BYTES - 100;
    assert_int_equal(ctxc_http_request(&req, &port, g_work, small, &resp, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 100);
    assert_has(err.message, "CTXC_HTTP_WORK_BYTES");
    assert_false(f.connected);
    /* the exact size works, at any alignment */
    for (size_t off = 0; off < 8; off++) {
        static uint8_t area[CTXC_HTTP_WORK_BYTES + 8];
        fake_init(&f, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok");
        memset(&g_res, 0, sizeof g_res);
        req.user = &g_res.got;
        assert_int_equal(ctxc_http_request(&req, &port, area + off,
                                           CTXC_HTTP_WORK_BYTES, &resp, &err),
                         CTXC_OK);
        assert_string_equal(g_res.got.body, "ok");
    }
}

static void test_secret_never_in_messages(void **state) {
    (void)state;
    /* the server echoes the key; the excerpt masks it, also when the
     * excerpt's limit cuts it */
    static char resp[1024];
    static char body[600];
    for (size_t cut = 0; cut < 40; cut++) {
        size_t pad = CTXC_CFG_HTTP_ERROR_BODY_MAX - 1 - cut - 4;
        memset(body, 'p', pad);
        snprintf(body + pad, sizeof body - pad, " %s and " AUTH " end", SECRET);
        snprintf(resp, sizeof resp,
                 "HTTP/1.1 401 Unauthorized\r\nContent-Length: %zu\r\n\r\n%s",
                 strlen(body), body);
        fake_t f;
        fake_init(&f, resp);
        ctxc_http_header_t auth = {"Authorization", AUTH, true};
        ctxc_http_request_t req = get_req("https://h.example/");
        req.headers = &auth;
        req.header_count = 1;
        assert_int_equal(run_req(&req, &f, true), CTXC_E_HTTP_STATUS);
        assert_null(strstr(g_res.err.message, "sk-test"));
        assert_null(strstr(g_res.resp.error_body, "sk-t"));
        assert_null(strstr(g_res.resp.error_body, "9f8e7d6c"));
    }
    /* short echo: the full message shows the masked key */
    fake_t f;
    fake_init(&f, "HTTP/1.1 401 x\r\nContent-Length: 40\r\n\r\n"
                  "bad key sk-test-9f8e7d6c5b4a39281706 !!!");
    ctxc_http_header_t auth = {"x-api-key", SECRET, true};
    ctxc_http_request_t req = get_req("https://h.example/");
    req.headers = &auth;
    req.header_count = 1;
    assert_int_equal(run_req(&req, &f, true), CTXC_E_HTTP_STATUS);
    assert_has(g_res.err.message, "bad key ***");
    assert_null(strstr(g_res.err.message, SECRET));
    /* every kind of failure with the secret header: never in the message */
    static const char *const resps[] = {
        "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc",
        "HTTP/1.1 302 x\r\nLocation: /y\r\n\r\n",
        "HTTP/1.1 500 x\r\n\r\n" SECRET,
        "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        "garbage " SECRET "\r\n\r\n",
        "HTTP/1.1 200 OK\r\n" SECRET "\r\n\r\n",
    };
    for (size_t i = 0; i < sizeof resps / sizeof resps[0]; i++) {
        fake_init(&f, resps[i]);
        ctxc_http_header_t a2 = {"Authorization", AUTH, true};
        req = get_req("https://h.example/");
        req.headers = &a2;
        req.header_count = 1;
        assert_int_not_equal(run_req(&req, &f, true), CTXC_OK);
        assert_null(strstr(g_res.err.message, SECRET));
        assert_null(strstr(g_res.err.message, "sk-test"));
    }
    for (size_t i = 0; i < 2; i++) {
        fake_init(&f, "HTTP/1.1 200 OK\r\n\r\n");
        ctxc_http_header_t a3 = {"Authorization", AUTH, true};
        req = get_req(i == 0 ? "http://example.com/" : "https://h.example/");
        req.headers = &a3;
        req.header_count = 1;
        f.stall = i == 1;
        f.clock_step = 1000;
        assert_int_not_equal(run_req(&req, &f, true), CTXC_OK);
        assert_null(strstr(g_res.err.message, SECRET));
    }
}

/* ---- the key-masking rule (ctxc__mask_secret, src/error.h) -------------- */

#define KEY40 "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz012345"

static void mask_case(const char *in, const char *secret, const char *want) {
    char buf[512];
    snprintf(buf, sizeof buf, "%s", in);
    ctxc__mask_secret(buf, secret, strlen(secret));
    if (strcmp(buf, want) != 0) {
        fail_msg("masking '%s' in '%s': got '%s', want '%s'", secret, in, buf,
                 want);
    }
}

/* The rule, written the slow way: every 8-byte window of s that occurs in
 * the secret (any run of 8 or more is made of such windows), every full
 * occurrence of a secret shorter than 8, and the longest start of the
 * secret (4 bytes or more, shorter than it) that s ends with. */
static void mask_reference(char *s, const char *sec, size_t sl) {
    size_t n = strlen(s);
    size_t w = sl < 8 ? sl : 8;
    static char mark[512];
    memset(mark, 0, sizeof mark);
    for (size_t i = 0; w > 0 && i + w <= n; i++) {
        for (size_t j = 0; j + w <= sl; j++) {
            if (memcmp(s + i, sec + j, w) == 0) {
                memset(mark + i, 1, w);
            }
        }
    }
    for (size_t k = 4; k < sl && k <= n; k++) {
        if (memcmp(s + n - k, sec, k) == 0) {
            memset(mark + n - k, 1, k);
        }
    }
    for (size_t i = 0; i < n; i++) {
        if (mark[i]) {
            s[i] = '*';
        }
    }
}

static void test_mask_secret(void **state) {
    (void)state;
    assert_int_equal(strlen(KEY40), 40);
    /* the first 24 bytes of a 40-byte key */
    mask_case("key sk-proj-AbCdEfGhIjKlMnOp is wrong", KEY40,
              "key ************************ is wrong");
    /* a run of 10 bytes from its middle */
    mask_case("[IjKlMnOpQr]", KEY40, "[**********]");
    /* its end, the whole key, twice, and in a row */
    mask_case("..QrStUvWxYz012345", KEY40, "..****************");
    mask_case(KEY40 " and " KEY40, KEY40,
              "**************************************** and "
              "****************************************");
    mask_case(KEY40 KEY40, KEY40,
              "********************************************************"
              "************************");
    /* two runs from different places that touch */
    mask_case("sk-proj-AbCdQrStUvWxYz!", KEY40, "**********************!");
    /* 7 bytes are not a run; the rest stays as it was */
    mask_case("a IjKlMnO b", KEY40, "a IjKlMnO b");
    mask_case("nothing here", KEY40, "nothing here");
    mask_case("", KEY40, "");
    /* a start of the key cut off at the end of the text */
    mask_case("invalid key sk-pr", KEY40, "invalid key *****");
    mask_case("invalid key sk-", KEY40, "invalid key sk-");
    /* a secret shorter than 8: every full occurrence */
    mask_case("abc xabcx ab abcabc", "abc", "*** x***x ab ******");
    mask_case("pw=hunter2;hunter", "hunter2", "pw=*******;******");
    mask_case("pw=hunter2;hunt!", "hunter2", "pw=*******;hunt!");
    /* nothing to mask with */
    char buf[16] = "abc";
    ctxc__mask_secret(buf, "abc", 0);
    assert_string_equal(buf, "abc");
    /* against the slow rule: texts made of pieces of a key (some repeating
     * its own bytes) and noise */
    static const char *const keys[] = {KEY40, "aaaaaaaaaaab", "abcabcabcabcab",
                                       "xyz", "k3y-0123456789"};
    uint32_t seed = 12345;
    for (int round = 0; round < 3000; round++) {
        const char *key = keys[round % 5];
        size_t kl = strlen(key);
        char text[200], ref[200];
        size_t n = 0;
        while (n < 120) {
            seed = seed * 1103515245u + 12345u;
            uint32_t r = seed >> 8;
            size_t from = r % kl;
            size_t len = 1 + (r >> 8) % 16;
            if ((r >> 16) % 3 == 0) {
                text[n++] = (char)('!' + (r >> 4) % 90);
                continue;
            }
            for (size_t k = 0; k < len && from + k < kl && n < 120; k++) {
                text[n++] = key[from + k];
            }
        }
        text[n] = '\0';
        memcpy(ref, text, n + 1);
        mask_reference(ref, key, kl);
        ctxc__mask_secret(text, key, kl);
        if (strcmp(text, ref) != 0) {
            fail_msg("key %s:\n got %s\nwant %s", key, text, ref);
        }
    }
}

/* ---- URLs, loopback, dates ----------------------------------------------- */

static void test_url_parse(void **state) {
    (void)state;
    ctxc_url_t u;
    ctxc_error_t err;
    assert_int_equal(
        ctxc_url_parse("https://API.example.com:8443/v1/x?k=v#frag", &u, &err),
        CTXC_OK);
    assert_true(u.tls);
    assert_int_equal(u.port, 8443);
    assert_int_equal(u.host_len, 15);
    assert_memory_equal(u.host, "API.example.com", 15);
    assert_int_equal(u.path_len, 9);
    assert_memory_equal(u.path, "/v1/x?k=v", 9);
    assert_int_equal(ctxc_url_parse("http://[::1]", &u, &err), CTXC_OK);
    assert_false(u.tls);
    assert_true(u.ipv6);
    assert_int_equal(u.port, 80);
    assert_int_equal(u.host_len, 3);
    assert_int_equal(u.path_len, 1);
    assert_memory_equal(u.path, "/", 1);
    /* a key in the query is never repeated by a message */
    assert_int_equal(ctxc_url_parse("https://h/p?key=" SECRET " x", &u, &err),
                     CTXC_E_INVALID_ARG);
    assert_null(strstr(err.message, SECRET));
    char longhost[400];
    memset(longhost, 'a', sizeof longhost);
    memcpy(longhost, "http://", 7);
    longhost[7 + CTXC_HTTP_HOST_MAX + 1] = '\0';
    assert_int_equal(ctxc_url_parse(longhost, &u, &err), CTXC_E_INVALID_ARG);
    longhost[7 + CTXC_HTTP_HOST_MAX] = '\0';
    assert_int_equal(ctxc_url_parse(longhost, &u, &err), CTXC_OK);
}

static void test_loopback_hosts(void **state) {
    (void)state;
    static const char *const yes[] = {
        "localhost", "LOCALHOST",       "LocalHost",       "127.0.0.1",
        "127.0.0.0", "127.1.2.3",       "127.255.255.254", "127.10.100.200",
        "::1",       "0:0:0:0:0:0:0:1", "::0:1",           "0000::0001",
    };
    static const char *const no[] = {
        "localhost.example",
        "xlocalhost",
        "127.0.0",
        "127.0.0.1.1",
        "127.0.0.256",
        "1127.0.0.1",
        "128.0.0.1",
        "::",
        "::2",
        "1::1",
        "::1:0",
        ":::1",
        "0:0:0:0:0:0:0:0:1",
        "",
        "127.0.0.1 ",
        /* only the exact spellings: a trailing dot, leading zeros (octal to
         * some resolvers) and short or numeric forms go to DNS */
        "localhost.",
        "LOCALHOST.",
        "localhost..",
        "127.0.0.09",
        "127.08.0.1",
        "127.0.0.01",
        "0127.0.0.1",
        "127.000.0.1",
        "127.0.0.",
        ".127.0.0.1",
        "127..0.1",
        "127.1",
        "127.0.1",
        "2130706433",
        "0x7f.0.0.1",
        "127.0.0.1.",
    };
    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (!ctxc_http_host_is_loopback(yes[i], strlen(yes[i]))) {
            fail_msg("%s is loopback", yes[i]);
        }
    }
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++) {
        if (ctxc_http_host_is_loopback(no[i], strlen(no[i]))) {
            fail_msg("%s is not loopback", no[i]);
        }
    }
}

static void test_http_dates(void **state) {
    (void)state;
    static const struct {
        const char *s;
        uint64_t t;
    } ok[] = {
        {"Sun, 06 Nov 1994 08:49:37 GMT", 784111777u},
        {"Sunday, 06-Nov-94 08:49:37 GMT", 784111777u},
        {"Sun Nov  6 08:49:37 1994", 784111777u},
        {"Thu, 01 Jan 1970 00:00:00 GMT", 0u},
        {"Tue, 29 Feb 2000 12:00:00 GMT", 951825600u},
        {"Mon, 23 Nov 2026 15:10:24 GMT", 1795446624u},
        {"Wed, 31 Dec 2098 23:59:59 GMT", 4070908799u},
        {"Monday, 01-Jan-01 00:00:00 GMT", 978307200u},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t t = 1;
        if (!ctxc_http_parse_date(ok[i].s, strlen(ok[i].s), &t)) {
            fail_msg("'%s' is a date", ok[i].s);
        }
        assert_int_equal(t, ok[i].t);
    }
    static const char *const bad[] = {
        "Sun, 06 Nov 1994 08:49:37 UTC",
        "Sun, 6 Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49 GMT",
        "Sun, 30 Feb 1994 08:49:37 GMT",
        "Sun, 29 Feb 1900 08:49:37 GMT",
        "Sun, 06 Foo 1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",
        "Sun, 06 Nov 1969 08:49:37 GMT",
        "Sun, 06 Nov 1994 25:49:37 GMT",
        "120",
        "",
        "Sun, 06 Nov 1994 08:49:37 GMTx",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        uint64_t t;
        if (ctxc_http_parse_date(bad[i], strlen(bad[i]), &t)) {
            fail_msg("'%s' is not a date", bad[i]);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_request_bytes_exactly),
        cmocka_unit_test(test_request_defaults),
        cmocka_unit_test(test_body_passes_of_different_length_fail),
        cmocka_unit_test(test_body_longer_in_one_write_never_completes),
        cmocka_unit_test(test_body_writer_error_is_returned),
        cmocka_unit_test(test_send_errors),
        cmocka_unit_test(test_content_length_body),
        cmocka_unit_test(test_chunked_body),
        cmocka_unit_test(test_bad_chunks),
        cmocka_unit_test(test_close_delimited_body),
        cmocka_unit_test(test_interim_responses_and_head),
        cmocka_unit_test(test_interim_responses_leave_nothing_behind),
        cmocka_unit_test(test_codings_are_refused),
        cmocka_unit_test(test_malformed_responses),
        cmocka_unit_test(test_callbacks_can_stop),
        cmocka_unit_test(test_every_split_gives_the_same_result),
        cmocka_unit_test(test_mutated_responses_split_consistently),
        cmocka_unit_test(test_sse_events),
        cmocka_unit_test(test_sse_line_ends),
        cmocka_unit_test(test_sse_done_ends_the_stream),
        cmocka_unit_test(test_sse_cut_event_is_an_error),
        cmocka_unit_test(test_sse_long_lines),
        cmocka_unit_test(test_sse_only_for_event_streams),
        cmocka_unit_test(test_sse_reader_alone),
        cmocka_unit_test(test_client_errors_carry_the_body),
        cmocka_unit_test(test_rate_limits_and_server_errors_are_retryable),
        cmocka_unit_test(test_redirects_are_not_followed),
        cmocka_unit_test(test_header_limits),
        cmocka_unit_test(test_truncated_and_reset_bodies),
        cmocka_unit_test(test_port_error_text),
        cmocka_unit_test(test_stalls_time_out),
        cmocka_unit_test(test_deadline_ends_a_drip_fed_answer),
        cmocka_unit_test(test_secrets_need_https_or_loopback),
        cmocka_unit_test(test_connect_failures),
        cmocka_unit_test(test_bad_arguments),
        cmocka_unit_test(test_work_area_too_small),
        cmocka_unit_test(test_secret_never_in_messages),
        cmocka_unit_test(test_mask_secret),
        cmocka_unit_test(test_url_parse),
        cmocka_unit_test(test_loopback_hosts),
        cmocka_unit_test(test_http_dates),
        cmocka_unit_test(test_stop_hook_ends_a_blocking_request),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
