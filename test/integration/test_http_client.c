/*
 * The HTTP/1.1 + SSE client (src/http.c, src/sse.c) over the real POSIX
 * transport (sockets + mbedTLS) against the local HTTPS fixture server
 * (test/fixtures/https_server.py, started by the ctest fixture ctxc_https):
 * every scripted behaviour of the server ends in the expected result or
 * typed error, over real TLS, and the server's record of what it received
 * shows the request the client wrote.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"
#include "fixture.h"

/* ---- the fixture ----------------------------------------------------------
 */

static fixture_t fx;
static const char *fixture_dir = fx.dir;
static const char *ca_path = fx.ca;
static unsigned port_good, port_plain, port_wronghost, port_selfsigned,
    port_expired;

static int load_fixture(void **state) {
    (void)state;
    if (fixture_load(&fx, "test_http_client", "good", "plain", "wronghost",
                     "selfsigned", "expired", NULL) != 0) {
        return -1;
    }
    port_good = fixture_port(&fx, "good");
    port_plain = fixture_port(&fx, "plain");
    port_wronghost = fixture_port(&fx, "wronghost");
    port_selfsigned = fixture_port(&fx, "selfsigned");
    port_expired = fixture_port(&fx, "expired");
    return 0;
}

/* ---- one request through the real port ------------------------------------
 */

static ctxc_posix_transport_t net;
static ctxc_posix_port_t pp;
static CTXC_HTTP_WORK_DEFINE(work);

typedef struct {
    char body[1 << 16];
    size_t body_len;
    unsigned long long body_total;
    char events[16][256];
    size_t n_events;
    unsigned headers;
} got_t;

static got_t got;

static ctxc_status_t on_header(void *user, const char *name, size_t nl,
                               const char *value, size_t vl) {
    (void)name;
    (void)nl;
    (void)value;
    (void)vl;
    ((got_t *)user)->headers++;
    return CTXC_OK;
}

static ctxc_status_t on_body(void *user, const char *data, size_t len) {
    got_t *g = user;
    g->body_total += len;
    size_t n = len < sizeof g->body - 1 - g->body_len
                   ? len
                   : sizeof g->body - 1 - g->body_len;
    memcpy(g->body + g->body_len, data, n);
    g->body_len += n;
    g->body[g->body_len] = '\0';
    return CTXC_OK;
}

static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    got_t *g = user;
    if (g->n_events < 16) {
        snprintf(g->events[g->n_events++], sizeof g->events[0], "%.*s",
                 (int)ev->data_len, ev->data);
    }
    return CTXC_OK;
}

static int setup(void **state) {
    (void)state;
    memset(&got, 0, sizeof got);
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_port_init(&pp, "/tmp", CTXC_LOG_ERROR, &err),
                     CTXC_OK);
    ctxc_posix_transport_config_t cfg = {0};
    cfg.ca_file = ca_path;
    cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
    cfg.poll_slice_ms = 50;
    cfg.entropy = ctxc_posix_entropy;
    assert_int_equal(ctxc_posix_transport_init(&net, &cfg, &err), CTXC_OK);
    pp.port.transport = ctxc_posix_transport(&net);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_posix_transport_deinit(&net);
    ctxc_posix_port_deinit(&pp);
    return 0;
}

static char url_buf[256];

static const char *url(const char *scheme, unsigned port, const char *path) {
    snprintf(url_buf, sizeof url_buf, "%s://localhost:%u%s", scheme, port,
             path);
    return url_buf;
}

typedef struct {
    ctxc_status_t st;
    ctxc_http_response_t resp;
    ctxc_error_t err;
} result_t;

static result_t get(const char *u, const ctxc_http_header_t *h, size_t nh,
                    uint32_t timeout_ms) {
    result_t r;
    memset(&r, 0, sizeof r);
    ctxc_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = u;
    req.accept = "*/*";
    req.headers = h;
    req.header_count = nh;
    req.timeout_ms = timeout_ms;
    req.on_header = on_header;
    req.on_body = on_body;
    req.on_event = on_event;
    req.user = &got;
    r.st =
        ctxc_http_request(&req, &pp.port, work, sizeof work, &r.resp, &r.err);
    return r;
}

#define EXPECT(r, status)                                                      \
    do {                                                                       \
        if ((r).st != (status)) {                                              \
            fail_msg("got %s (%s), expected %s", ctxc_status_name((r).st),     \
                     ctxc_error_message(&(r).err), ctxc_status_name(status));  \
        }                                                                      \
    } while (0)

/* ---- answers --------------------------------------------------------------
 */

static void test_json_answer(void **state) {
    (void)state;
    result_t r = get(url("https", port_good, "/json"), NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    assert_int_equal(r.resp.status, 200);
    assert_true(r.resp.has_content_length);
    assert_int_equal(r.resp.content_length, got.body_len);
    assert_non_null(strstr(got.body, "\"chat.completion\""));
    assert_true(got.headers >= 3);
}

static void test_sse_answer(void **state) {
    (void)state;
    result_t r = get(url("https", port_good, "/sse"), NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    assert_true(r.resp.event_stream);
    assert_true(r.resp.sse_done);
    assert_true(got.n_events >= 2);
    assert_non_null(strstr(got.events[0], "chat.completion.chunk"));
    assert_string_equal(got.events[got.n_events - 1], "[DONE]");
}

static void test_chunked_answer(void **state) {
    (void)state;
    result_t r = get(url("https", port_good, "/chunked"), NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    assert_true(r.resp.chunked);
    assert_int_equal(r.resp.body_bytes, got.body_len);
    assert_true(got.body_len > 0);
}

static void test_plain_http_answer(void **state) {
    (void)state;
    result_t r = get(url("http", port_plain, "/json"), NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    assert_int_equal(r.resp.status, 200);
}

static void test_huge_body_streams_through(void **state) {
    (void)state;
    result_t r =
        get(url("https", port_good, "/huge-body?bytes=3000000"), NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    assert_int_equal(got.body_total, 3000000);
    assert_int_equal(r.resp.body_bytes, 3000000);
}

static void test_malformed_json_is_the_callers_business(void **state) {
    (void)state;
    /* the HTTP layer hands the bytes over; the provider reader refuses */
    result_t r = get(url("https", port_good, "/malformed-json"), NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    assert_true(got.body_len > 0);
}

/* ---- typed errors
 * ------------------------------------------------------------ */

static void expect_status(const char *path, uint16_t code, bool retryable,
                          const char *in_message) {
    memset(&got, 0, sizeof got);
    result_t r = get(url("https", port_good, path), NULL, 0, 0);
    EXPECT(r, CTXC_E_HTTP_STATUS);
    assert_int_equal(r.resp.status, code);
    assert_int_equal(ctxc_http_retryable(r.st, &r.resp), retryable);
    if (in_message != NULL &&
        strstr(ctxc_error_message(&r.err), in_message) == NULL) {
        fail_msg("%s: '%s' not in '%s'", path, in_message,
                 ctxc_error_message(&r.err));
    }
}

static void test_error_statuses(void **state) {
    (void)state;
    expect_status("/status/401", 401, false, "401");
    expect_status("/status/403", 403, false, "403");
    expect_status("/status/404", 404, false, "404");
    expect_status("/status/500", 500, true, "500");
    expect_status("/status/503", 503, true, "503");
    expect_status("/redirect", 302, false, "/json");
}

static void test_retry_after(void **state) {
    (void)state;
    result_t r = get(url("https", port_good, "/429"), NULL, 0, 0);
    EXPECT(r, CTXC_E_HTTP_STATUS);
    assert_true(r.resp.retryable);
    assert_true(r.resp.has_retry_after);
    assert_int_equal(r.resp.retry_after_s, 2);
    memset(&got, 0, sizeof got);
    r = get(url("https", port_good, "/429-date"), NULL, 0, 0);
    EXPECT(r, CTXC_E_HTTP_STATUS);
    assert_true(r.resp.has_retry_after);
    /* an HTTP-date 2 s after the server's Date header */
    assert_true(r.resp.retry_after_s >= 1 && r.resp.retry_after_s <= 3);
}

static void test_cut_answers(void **state) {
    (void)state;
    result_t r = get(url("https", port_good, "/truncated"), NULL, 0, 0);
    EXPECT(r, CTXC_E_NETWORK);
    assert_true(ctxc_http_retryable(r.st, &r.resp));
    memset(&got, 0, sizeof got);
    r = get(url("https", port_good, "/sse-cut"), NULL, 0, 0);
    EXPECT(r, CTXC_E_PARSE);
    assert_int_equal(got.n_events, 1); /* the whole event came through */
    memset(&got, 0, sizeof got);
    r = get(url("https", port_good, "/reset"), NULL, 0, 0);
    EXPECT(r, CTXC_E_NETWORK);
    assert_true(ctxc_http_retryable(r.st, &r.resp));
}

static void test_stall_past_the_read_timeout(void **state) {
    (void)state;
    result_t r =
        get(url("https", port_good, "/stall-headers?ms=3000"), NULL, 0, 400);
    EXPECT(r, CTXC_E_TIMEOUT);
    assert_true(ctxc_http_retryable(r.st, &r.resp));
    memset(&got, 0, sizeof got);
    r = get(url("https", port_good, "/stall?ms=3000"), NULL, 0, 400);
    EXPECT(r, CTXC_E_TIMEOUT);
}

/* The server sends one byte, then waits 3 s: well within the read timeout
 * of 5 s, past the deadline of 600 ms. */
static void test_deadline_past_a_slow_answer(void **state) {
    (void)state;
    memset(&got, 0, sizeof got);
    ctxc_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = url("https", port_good, "/stall?ms=3000");
    req.timeout_ms = 5000;
    req.deadline_ms = 600;
    req.on_body = on_body;
    req.user = &got;
    result_t r;
    memset(&r, 0, sizeof r);
    r.st =
        ctxc_http_request(&req, &pp.port, work, sizeof work, &r.resp, &r.err);
    EXPECT(r, CTXC_E_TIMEOUT);
    const char *msg = ctxc_error_message(&r.err);
    if (strncmp(msg, "deadline of 600 ms ran out", 26) != 0) {
        fail_msg("message: %s", msg);
    }
    assert_true(ctxc_http_retryable(r.st, &r.resp));
}

static void test_oversized_header(void **state) {
    (void)state;
    result_t r = get(url("https", port_good, "/huge-header"), NULL, 0, 0);
    EXPECT(r, CTXC_E_TOO_LARGE);
    assert_false(ctxc_http_retryable(r.st, &r.resp));
}

static void test_bad_certificates_are_refused(void **state) {
    (void)state;
    static const char *const why[] = {"Common Name", "not correctly signed",
                                      "expired"};
    unsigned ports[] = {port_wronghost, port_selfsigned, port_expired};
    for (int i = 0; i < 3; i++) {
        memset(&got, 0, sizeof got);
        result_t r = get(url("https", ports[i], "/json"), NULL, 0, 0);
        EXPECT(r, CTXC_E_TLS);
        assert_false(ctxc_http_retryable(r.st, &r.resp));
        if (strstr(ctxc_error_message(&r.err), why[i]) == NULL) {
            fail_msg("'%s' not in '%s'", why[i], ctxc_error_message(&r.err));
        }
        assert_int_equal(got.headers, 0);
    }
}

static void test_secret_never_crosses_plain_http(void **state) {
    (void)state;
    ctxc_http_header_t key[] = {
        {"Authorization", "Bearer sk-never-sent-123456", true},
        {"X-Test-Id", "http-client-localhost-key", false}};
    /* loopback over plain http: allowed (local model servers); localhost is
     * reached at 127.0.0.1 (where the plain fixture listens), the Host
     * header names localhost */
    result_t r = get(url("http", port_plain, "/json"), key, 2, 0);
    EXPECT(r, CTXC_OK);
    memset(&got, 0, sizeof got);
    r = get(
        url("https", port_good, "/__requests?test=http-client-localhost-key"),
        NULL, 0, 0);
    EXPECT(r, CTXC_OK);
    char host[64];
    snprintf(host, sizeof host, "[\"Host\", \"localhost:%u\"]", port_plain);
    if (strstr(got.body, host) == NULL) {
        fail_msg("the server's record lacks '%s':\n%.2000s", host, got.body);
    }
    /* a non-loopback host: refused before connecting */
    r = get("http://ctxc-test.invalid/json", key, 1, 0);
    EXPECT(r, CTXC_E_INSECURE);
    assert_null(strstr(ctxc_error_message(&r.err), "sk-never"));
    /* names a resolver answers for are not loopback, whatever it says */
    char u[64];
    snprintf(u, sizeof u, "http://localhost.:%u/json", port_plain);
    r = get(u, key, 1, 0);
    EXPECT(r, CTXC_E_INSECURE);
}

/* ---- the request the server received ------------------------------------ */

typedef struct {
    const char *text;
    size_t len, step;
} body_src_t;

static ctxc_status_t write_body(void *user, ctxc_http_write_fn write,
                                void *wu) {
    const body_src_t *b = user;
    for (size_t off = 0; off < b->len; off += b->step) {
        size_t n = b->len - off < b->step ? b->len - off : b->step;
        ctxc_status_t st = write(wu, b->text + off, n);
        if (st != CTXC_OK) {
            return st;
        }
    }
    return CTXC_OK;
}

static void test_request_as_recorded_by_the_server(void **state) {
    (void)state;
    static char body[20000];
    for (size_t i = 0; i < sizeof body - 1; i++) {
        body[i] = (char)('a' + i % 26);
    }
    body[sizeof body - 1] = '\0';
    body_src_t src = {body, sizeof body - 1, 777};
    ctxc_http_header_t h[] = {{"X-Test-Id", "http-client-post", false},
                              {"x-api-key", "k-secret-abcdef-123", true}};
    ctxc_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "POST";
    req.url = url("https", port_good, "/echo");
    req.content_type = "application/json";
    req.accept = "application/json";
    req.headers = h;
    req.header_count = 2;
    req.body_fn = write_body;
    req.body_user = &src;
    req.on_body = on_body;
    req.user = &got;
    ctxc_http_response_t resp;
    ctxc_error_t err;
    assert_int_equal(
        ctxc_http_request(&req, &pp.port, work, sizeof work, &resp, &err),
        CTXC_OK);
    assert_int_equal(got.body_len, src.len);
    assert_memory_equal(got.body, body, src.len);

    /* what the server recorded */
    memset(&got, 0, sizeof got);
    result_t r =
        get(url("https", port_good, "/__requests?test=http-client-post"), NULL,
            0, 0);
    EXPECT(r, CTXC_OK);
    static const char *const want[] = {
        "\"method\": \"POST\", \"path\": \"/echo\", \"version\": \"HTTP/1.1\"",
        "[\"Host\", \"localhost:",
        "[\"User-Agent\", \"ctxc/" CTXC_VERSION_STRING "\"]",
        /* Content-Length from the count pass of the body writer */
        "[\"Content-Length\", \"19999\"]",
        "[\"Content-Type\", \"application/json\"]",
        "[\"Connection\", \"close\"]", "[\"Accept-Encoding\", \"identity\"]"};
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        if (strstr(got.body, want[i]) == NULL) {
            fail_msg("the server's record lacks '%s':\n%.2000s", want[i],
                     got.body);
        }
    }
}

/* ---- `ctxc http-get`, as a user runs it -----------------------------------
 */

/* Runs the CLI; its stdout and stderr (merged) into out; the exit status. */
static int run_cli(char *out, size_t cap, const char *fmt, ...) {
    char args[1024], cmd[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(args, sizeof args, fmt, ap);
    va_end(ap);
    snprintf(cmd, sizeof cmd, "CTXC_HOME=%s '%s' %s 2>&1", fixture_dir,
             CTXC_CLI_PATH, args);
    FILE *p = popen(cmd, "r");
    assert_non_null(p);
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_cli_http_get(void **state) {
    (void)state;
    static char out[1 << 16];
    int rc = run_cli(out, sizeof out,
                     "http-get https://localhost:%u/json "
                     "--ca-file '%s' --bytes 40",
                     port_good, ca_path);
    if (rc != 0 || strstr(out, "status: 200") == NULL ||
        strstr(out, "Content-Type: application/json") == NULL ||
        strstr(out, "body bytes in all, 40 shown") == NULL) {
        fail_msg("exit %d:\n%s", rc, out);
    }
    rc = run_cli(out, sizeof out,
                 "http-get https://localhost:%u/json "
                 "--ca-file '%s'",
                 port_expired, ca_path);
    /* in words; the status name only with --verbose */
    if (rc != 1 || strstr(out, "CTXC_E_") != NULL ||
        strstr(out, "expired") == NULL) {
        fail_msg("expired certificate: exit %d:\n%s", rc, out);
    }
    rc = run_cli(out, sizeof out,
                 "http-get https://localhost:%u/json "
                 "--ca-file '%s' --verbose",
                 port_expired, ca_path);
    if (rc != 1 || strstr(out, "CTXC_E_TLS") == NULL) {
        fail_msg("expired certificate, --verbose: exit %d:\n%s", rc, out);
    }
    /* no CA given: the system bundle does not know the test CA */
    rc = run_cli(out, sizeof out, "http-get https://localhost:%u/json",
                 port_good);
    if (rc != 1 || strstr(out, "not correctly signed") == NULL) {
        fail_msg("system bundle: exit %d:\n%s", rc, out);
    }
    rc = run_cli(out, sizeof out,
                 "http-get https://localhost:%u/status/404 "
                 "--ca-file '%s'",
                 port_good, ca_path);
    if (rc != 1 || strstr(out, "status: 404") == NULL ||
        strstr(out, "a retry would not help") == NULL) {
        fail_msg("404: exit %d:\n%s", rc, out);
    }
    rc = run_cli(out, sizeof out, "http-get");
    assert_int_equal(rc, 2);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_json_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_sse_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_chunked_answer, setup, teardown),
        cmocka_unit_test_setup_teardown(test_plain_http_answer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_huge_body_streams_through, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_malformed_json_is_the_callers_business, setup, teardown),
        cmocka_unit_test_setup_teardown(test_error_statuses, setup, teardown),
        cmocka_unit_test_setup_teardown(test_retry_after, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_answers, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stall_past_the_read_timeout, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_deadline_past_a_slow_answer, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_oversized_header, setup, teardown),
        cmocka_unit_test_setup_teardown(test_bad_certificates_are_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_secret_never_crosses_plain_http,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_request_as_recorded_by_the_server,
                                        setup, teardown),
        cmocka_unit_test(test_cli_http_get),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
