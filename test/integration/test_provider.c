/*
 * The provider layer (src/provider.c) over the HTTP client, the POSIX TLS
 * transport and the local fixture server (test/fixtures/https_server.py,
 * the ctest fixture `ctxc_https`): the OpenAI-compatible, Anthropic and
 * Gemini APIs, streamed and not; what was sent (read back from the server's
 * /__requests); keys never leaking; errors, retries and their limits.
 * Everything stays on 127.0.0.1.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"
#include "fixture.h"

#define KEY_VAR "CTXC_TEST_PROVIDER_KEY"
#define KEY "sk-fixture-SECRET-9f8e7d6c5b4a"

/* What the fixture's scripted models answer (fixture-ok, -thinking). */
static const char SUMMARY[] =
    "<state_snapshot>\n<overall_goal>Fix the \"parser\" bug \xe2\x80\x94 "
    "caf\xc3\xa9 \xf0\x9f\x98\x80</overall_goal>\n<key_knowledge>tab\there, "
    "back\\slash</key_knowledge>\n</state_snapshot>";

/* ---- the fixture ----------------------------------------------------------
 */

static fixture_t fx;
static const char *ca_path = fx.ca;
static uint16_t port_good, port_plain;

static int load_fixture(void **state) {
    (void)state;
    if (fixture_load(&fx, "test_provider", "good", "plain", NULL) != 0) {
        return -1;
    }
    port_good = fixture_port(&fx, "good");
    port_plain = fixture_port(&fx, "plain");
    return 0;
}

/* ---- the port: TLS transport, recorded log lines and delays ------------- */

static ctxc_posix_transport_t net;
static ctxc_port_t port;
static fixture_rec_t rec; /* the port's log lines and delays */

static uint64_t now_ms(void *ctx) {
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static int setup(void **state) {
    (void)state;
    ctxc_posix_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ca_file = ca_path;
    cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
    cfg.poll_slice_ms = 50;
    cfg.entropy = ctxc_posix_entropy;
    ctxc_error_t err;
    if (ctxc_posix_transport_init(&net, &cfg, &err) != CTXC_OK) {
        fprintf(stderr, "transport init: %s\n", err.message);
        return -1;
    }
    memset(&port, 0, sizeof port);
    port.clock = now_ms;
    port.log = fixture_rec_log;
    port.log_ctx = &rec;
    port.log_level = CTXC_LOG_DEBUG;
    port.transport = ctxc_posix_transport(&net);
    port.entropy = ctxc_posix_entropy;
    port.key = ctxc_posix_key;
    port.delay_ms = fixture_rec_delay;
    port.delay_ctx = &rec;
    rec.len = 0;
    rec.lines[0] = '\0';
    rec.n_delays = 0;
    setenv(KEY_VAR, KEY, 1);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_posix_transport_deinit(&net);
    return 0;
}

/* ---- the request -----------------------------------------------------------
 */

static const char SYSTEM[] = "You summarise.\nKeep \"quotes\" and back\\slash.";
static const char *const MESSAGES[] = {
    "first: the user asks",
    "second: the assistant\tanswers",
    "third: summarise now",
};
static const ctxc_llm_role_t ROLES[] = {
    CTXC_LLM_ROLE_USER, CTXC_LLM_ROLE_ASSISTANT, CTXC_LLM_ROLE_USER};

static ctxc_status_t part(void *src, size_t index, ctxc_llm_write_fn write,
                          void *user) {
    (void)src;
    const char *s = index == (size_t)-1 ? SYSTEM : MESSAGES[index];
    /* in two pieces, to cross writer calls */
    size_t n = strlen(s);
    ctxc_status_t st = write(user, s, n / 2);
    return st != CTXC_OK ? st : write(user, s + n / 2, n - n / 2);
}

static ctxc_status_t system_part(void *src, size_t index,
                                 ctxc_llm_write_fn write, void *user) {
    (void)index;
    return part(src, (size_t)-1, write, user);
}

static ctxc_llm_request_t request(void) {
    ctxc_llm_request_t r;
    memset(&r, 0, sizeof r);
    r.system = system_part;
    r.message_count = 3;
    r.message = part;
    r.roles = ROLES;
    r.max_output_tokens = 1000;
    return r;
}

/* ---- calls ------------------------------------------------------------------
 */

static const char *const APIS[] = {"openai", "anthropic", "gemini"};

static ctxc_provider_client_t client;
static char out[8192];
static size_t out_len;
static ctxc_llm_usage_t usage;
static ctxc_error_t err;
static char test_id[64];
static unsigned test_seq;

/* TLS to "localhost" (what the fixture's certificate names for mbedTLS),
 * plain HTTP to 127.0.0.1. */
static void base_of(const char *api, bool tls, char *buf, size_t cap) {
    uint16_t p = tls ? port_good : port_plain;
    const char *host = tls ? "https://localhost" : "http://127.0.0.1";
    if (strcmp(api, "openai") == 0) {
        snprintf(buf, cap, "%s:%u/v1", host, (unsigned)p);
    } else if (strcmp(api, "gemini") == 0) { /* and a trailing slash */
        snprintf(buf, cap, "%s:%u/", host, (unsigned)p);
    } else {
        snprintf(buf, cap, "%s:%u", host, (unsigned)p);
    }
}

static uint32_t call_deadline_ms; /* client.deadline_ms of the calls */

static bool g_resumable;      /* call through start/step */
static uint64_t g_elapsed_ms; /* how long a resumable call took */

static ctxc_status_t call_with(const char *api, const char *model, bool stream,
                               uint32_t retries, const char *key_name, bool tls,
                               size_t cap) {
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    snprintf(ref.provider, sizeof ref.provider, "%s", api);
    snprintf(ref.model, sizeof ref.model, "%s", model);
    base_of(api, tls, ref.base_url, sizeof ref.base_url);
    snprintf(ref.auth_key_name, sizeof ref.auth_key_name, "%s", key_name);
    /* unique across the suite's runs (plain, ASan, valgrind at once) */
    snprintf(test_id, sizeof test_id, "provider-%ld-%ld-%u", (long)getpid(),
             (long)time(NULL), ++test_seq);
    static ctxc_http_header_t hdr[1];
    hdr[0] = (ctxc_http_header_t){"X-Test-Id", test_id, false};
    ctxc_llm_t llm;
    memset(&err, 0, sizeof err);
    ctxc_status_t st =
        ctxc_provider_llm(&client, &ref, &port, retries, stream, &llm, &err);
    if (st != CTXC_OK) {
        return st;
    }
    assert_string_equal(llm.provider, api);
    assert_string_equal(llm.model, model);
    client.extra_headers = hdr;
    client.extra_header_count = 1;
    client.timeout_ms = 10000;
    client.deadline_ms = call_deadline_ms;
    ctxc_llm_request_t req = request();
    memset(out, 'x', sizeof out);
    out_len = 12345;
    if (g_resumable) {
        /* the job's way: start, then steps, never a wait or a delay */
        uint64_t t0 = now_ms(NULL);
        st = llm.start(&llm, &req, out, cap, &err);
        while (st == CTXC_E_IN_PROGRESS && now_ms(NULL) - t0 < 60000u) {
            st = llm.step(&llm, &out_len, &usage, &err);
        }
        g_elapsed_ms = now_ms(NULL) - t0;
    } else {
        st = llm.complete(&llm, &req, out, cap, &out_len, &usage, &err);
    }
    if (st != CTXC_OK) {
        print_message("  %s %s%s: %s: %s\n", api, model,
                      stream ? " (stream)" : "", ctxc_status_name(st),
                      err.message);
    }
    assert_null(strstr(err.message, KEY));
    assert_null(strstr(err.message, "SECRET"));
    assert_null(strstr(rec.lines, "SECRET"));
    /* the key buffer is wiped after the call */
    const char *mem = (const char *)&client;
    for (size_t i = 0; i + 6 <= sizeof client; i++) {
        assert_false(memcmp(mem + i, "SECRET", 6) == 0);
    }
    return st;
}

static ctxc_status_t call(const char *api, const char *model, bool stream,
                          uint32_t retries) {
    return call_with(api, model, stream, retries, KEY_VAR, true, sizeof out);
}

/* ---- what the server received -----------------------------------------------
 */

static char records[262144];
static size_t records_len;

/* GET /__requests?test=<test_id> over plain HTTP to 127.0.0.1. */
static void fetch_records(void) {
    assert_int_equal(fixture_fetch_records(&fx, &port, test_id, records,
                                           sizeof records, &records_len),
                     CTXC_OK);
}

static size_t count_of(const char *hay, const char *needle) {
    return fixture_count(hay, needle);
}

#define assert_contains(hay, needle)                                           \
    do {                                                                       \
        if (strstr((hay), (needle)) == NULL) {                                 \
            fail_msg("'%s' not found in: %.3000s", (needle), (hay));           \
        }                                                                      \
    } while (0)

/* The body as the writer makes it, then JSON-escaped as the server's record
 * (json.dumps) holds it. */
static char expect_buf[8192];
static size_t expect_len;

static ctxc_status_t to_expect(void *user, const char *data, size_t len) {
    (void)user;
    for (size_t i = 0; i < len; i++) {
        char c = data[i];
        const char *e = NULL;
        char u[8];
        switch (c) {
        case '"':
            e = "\\\"";
            break;
        case '\\':
            e = "\\\\";
            break;
        case '\n':
            e = "\\n";
            break;
        case '\t':
            e = "\\t";
            break;
        default:
            if ((unsigned char)c < 0x20u) {
                snprintf(u, sizeof u, "\\u%04x", (unsigned)c);
                e = u;
            }
        }
        size_t k = e != NULL ? strlen(e) : 1;
        assert_true(expect_len + k < sizeof expect_buf);
        memcpy(expect_buf + expect_len, e != NULL ? e : &c, k);
        expect_len += k;
    }
    return CTXC_OK;
}

static const char *auth_header_of(const char *api) {
    return strcmp(api, "openai") == 0 ? "[\"Authorization\", \"Bearer " KEY
                                        "\"]"
           : strcmp(api, "anthropic") == 0 ? "[\"x-api-key\", \"" KEY "\"]"
                                           : "[\"x-goog-api-key\", \"" KEY
                                             "\"]";
}

/* The recorded request(s) of the last call: path, body, headers; the key
 * only in the auth header. */
static void check_sent(const char *api, const char *model, bool stream,
                       size_t requests, bool with_key) {
    fetch_records();
    assert_int_equal(count_of(records, "\"method\": \"POST\""), requests);
    char path[256];
    if (strcmp(api, "openai") == 0) {
        snprintf(path, sizeof path, "\"path\": \"/v1/chat/completions\"");
    } else if (strcmp(api, "anthropic") == 0) {
        snprintf(path, sizeof path, "\"path\": \"/v1/messages\"");
    } else {
        snprintf(path, sizeof path, "\"path\": \"/v1beta/models/%s:%s\"", model,
                 stream ? "streamGenerateContent?alt=sse" : "generateContent");
    }
    assert_int_equal(count_of(records, path), requests);
    expect_len = 0;
    ctxc_llm_request_t req = request();
    assert_int_equal(ctxc_provider_write_body(ctxc_provider_find(api), model,
                                              stream, &req, to_expect, NULL),
                     CTXC_OK);
    expect_buf[expect_len] = '\0';
    char body[8300];
    snprintf(body, sizeof body, "\"body\": \"%s\"", expect_buf);
    assert_int_equal(count_of(records, body), requests);
    /* the parts in order with their roles, the stream flag, the limit */
    if (strcmp(api, "gemini") != 0) {
        assert_contains(records, stream ? "\\\"stream\\\":true"
                                        : "\\\"stream\\\":false");
        assert_contains(records, "\\\"model\\\":\\\"");
    }
    assert_contains(records, strcmp(api, "gemini") == 0
                                 ? "\\\"maxOutputTokens\\\":1000"
                                 : "\\\"max_tokens\\\":1000");
    assert_contains(records, strcmp(api, "gemini") == 0
                                 ? "\\\"role\\\":\\\"model\\\""
                                 : "\\\"role\\\":\\\"assistant\\\"");
    const char *p1 = strstr(records, "first: the user asks");
    const char *p2 = strstr(records, "second: the assistant");
    const char *p3 = strstr(records, "third: summarise now");
    assert_true(p1 != NULL && p2 > p1 && p3 > p2);
    assert_contains(records, "[\"Content-Type\", \"application/json\"]");
    if (strcmp(api, "anthropic") == 0) {
        assert_int_equal(
            count_of(records, "[\"anthropic-version\", \"2023-06-01\"]"),
            requests);
    }
    if (with_key) {
        assert_int_equal(count_of(records, auth_header_of(api)), requests);
        assert_int_equal(count_of(records, KEY), requests);
    } else {
        assert_int_equal(count_of(records, "SECRET"), 0);
        assert_null(strstr(records, "\"Authorization\""));
        assert_null(strstr(records, "\"x-api-key\""));
        assert_null(strstr(records, "\"x-goog-api-key\""));
    }
}

static const char *stop_of(const char *api) {
    return strcmp(api, "openai") == 0      ? "stop"
           : strcmp(api, "anthropic") == 0 ? "end_turn"
                                           : "STOP";
}

/* ---- tests
 * -------------------------------------------------------------------- */

static void test_answer_each_api(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            bool stream = s == 0;
            assert_int_equal(call(APIS[a], "fixture-ok", stream, 2), CTXC_OK);
            assert_string_equal(out, SUMMARY);
            assert_int_equal(out_len, strlen(SUMMARY));
            assert_int_equal(usage.input_tokens, 42);
            assert_int_equal(usage.output_tokens, 17);
            assert_string_equal(usage.finish_reason, stop_of(APIS[a]));
            assert_int_equal(usage.attempts, 1);
            assert_int_equal(usage.http_status, 200);
            check_sent(APIS[a], "fixture-ok", stream, 1, true);
        }
    }
}

static void test_thinking_left_out(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            assert_int_equal(call(APIS[a], "fixture-thinking", s == 0, 0),
                             CTXC_OK);
            assert_string_equal(out, SUMMARY);
            assert_null(strstr(out, "think"));
        }
    }
}

static void test_blank_answer_returned(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            assert_int_equal(call(APIS[a], "fixture-blank", s == 0, 0),
                             CTXC_OK);
            assert_string_equal(out, "  \n\t \n");
        }
    }
}

static void test_cut_off_is_an_error(void **state) {
    (void)state;
    static const char *const cut[] = {"length", "max_tokens", "MAX_TOKENS"};
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            assert_int_equal(call(APIS[a], "fixture-cut", s == 0, 2),
                             CTXC_E_PARSE);
            assert_contains(err.message, "cut off by the model's output limit");
            assert_contains(err.message, APIS[a]);
            assert_string_equal(usage.finish_reason, cut[a]);
            assert_int_equal(usage.attempts, 1);
            assert_int_equal(out_len, 0);
        }
    }
}

/* Issue 25: one call has a total deadline, retries included: the stalling
 * answer (2.5 s) with a 10 s read timeout and two retries ends after the
 * 1000 ms deadline, naming it; without a deadline it is answered. */
static void test_call_deadline(void **state) {
    (void)state;
    call_deadline_ms = 1000;
    ctxc_status_t st = call("openai", "fixture-stall", true, 2);
    call_deadline_ms = 0;
    assert_int_equal(st, CTXC_E_TIMEOUT);
    assert_contains(err.message, "deadline of 1000 ms");
    assert_contains(err.message, "network.call-deadline-ms");
    assert_int_equal(usage.attempts, 1);
    assert_int_equal(call("openai", "fixture-stall", true, 2), CTXC_OK);
}

static void test_401_carries_the_provider_message(void **state) {
    (void)state;
    static const char *const msg[] = {
        "Incorrect API key provided.", "invalid x-api-key",
        "API key not valid. Please pass a valid API key."};
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            assert_int_equal(call(APIS[a], "fixture-error-401", s == 0, 2),
                             CTXC_E_HTTP_STATUS);
            assert_contains(err.message, msg[a]);
            assert_contains(err.message, "401");
            assert_int_equal(usage.attempts, 1); /* not retried */
            assert_int_equal(usage.http_status, 401);
            check_sent(APIS[a], "fixture-error-401", s == 0, 1, true);
        }
    }
    assert_int_equal(rec.n_delays, 0);
}

/* A server that repeats the key in its message: masked. */
static void test_echoed_key_masked(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        assert_int_equal(call(APIS[a], "fixture-error-echo", a != 0, 2),
                         CTXC_E_HTTP_STATUS);
        assert_contains(err.message, "Incorrect API key provided: ");
        assert_contains(err.message, "*****");
        assert_int_equal(usage.http_status, 401);
    }
}

static void test_429_once_then_ok(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            rec.n_delays = 0;
            assert_int_equal(call(APIS[a], "fixture-429-once", s == 0, 2),
                             CTXC_OK);
            assert_string_equal(out, SUMMARY);
            assert_int_equal(usage.attempts, 2);
            assert_int_equal(usage.http_status, 200);
            assert_int_equal(rec.n_delays, 1);
            /* Retry-After: 1, counted from when the answer was read: the
             * delay hook gets what is left of it by the port clock (a
             * millisecond or a few less under valgrind's load) */
            assert_in_range(rec.delays[0], 990, 1000);
            check_sent(APIS[a], "fixture-429-once", s == 0, 2, true);
        }
    }
    assert_contains(rec.lines, "retrying in 1000 ms");
}

/* The resumable call (start, then steps that never wait): the same answer
 * for each API, streamed or not; a 429 with Retry-After: 1 is retried
 * once its "not before" time has come, by the port clock, without the
 * delay hook; cancel ends a call under way and the client takes the next
 * call. */
static void test_resumable_call(void **state) {
    (void)state;
    g_resumable = true;
    for (size_t a = 0; a < 3; a++) {
        for (int s = 0; s < 2; s++) {
            bool stream = s == 0;
            assert_int_equal(call(APIS[a], "fixture-ok", stream, 2), CTXC_OK);
            assert_string_equal(out, SUMMARY);
            assert_int_equal(out_len, strlen(SUMMARY));
            assert_int_equal(usage.input_tokens, 42);
            assert_string_equal(usage.finish_reason, stop_of(APIS[a]));
            assert_int_equal(usage.attempts, 1);
            check_sent(APIS[a], "fixture-ok", stream, 1, true);
        }
    }
    rec.n_delays = 0;
    assert_int_equal(call(APIS[0], "fixture-429-once", true, 2), CTXC_OK);
    assert_string_equal(out, SUMMARY);
    assert_int_equal(usage.attempts, 2);
    assert_int_equal(rec.n_delays, 0);  /* no delay hook: a "not before" */
    assert_true(g_elapsed_ms >= 1000u); /* Retry-After: 1 was honoured */
    check_sent(APIS[0], "fixture-429-once", true, 2, true);
    g_resumable = false;

    /* cancel mid-call, then a whole call on the same client */
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    snprintf(ref.provider, sizeof ref.provider, "openai");
    snprintf(ref.model, sizeof ref.model, "fixture-ok");
    base_of("openai", true, ref.base_url, sizeof ref.base_url);
    snprintf(ref.auth_key_name, sizeof ref.auth_key_name, "%s", KEY_VAR);
    ctxc_llm_t llm;
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err), CTXC_OK);
    ctxc_llm_request_t req = request();
    assert_int_equal(llm.start(&llm, &req, out, sizeof out, &err),
                     CTXC_E_IN_PROGRESS);
    assert_int_equal(llm.start(&llm, &req, out, sizeof out, &err), CTXC_E_BUSY);
    assert_int_equal(llm.step(&llm, &out_len, &usage, &err),
                     CTXC_E_IN_PROGRESS);
    llm.cancel(&llm);
    const char *mem = (const char *)&client;
    for (size_t i = 0; i + 6 <= sizeof client; i++) {
        assert_false(memcmp(mem + i, "SECRET", 6) == 0);
    }
    assert_int_equal(llm.step(&llm, &out_len, &usage, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(
        llm.complete(&llm, &req, out, sizeof out, &out_len, &usage, &err),
        CTXC_OK);
    assert_string_equal(out, SUMMARY);
}

static void test_503_retries_exhausted(void **state) {
    (void)state;
    static const char *const msg[] = {"The server is overloaded", "Overloaded",
                                      "The model is overloaded"};
    for (size_t a = 0; a < 3; a++) {
        for (uint32_t retries = 0; retries <= 2; retries++) {
            rec.n_delays = 0;
            assert_int_equal(call(APIS[a], "fixture-error-503", true, retries),
                             CTXC_E_HTTP_STATUS);
            assert_contains(err.message, msg[a]);
            assert_int_equal(usage.attempts, retries + 1);
            assert_int_equal(usage.http_status, 503);
            assert_int_equal(rec.n_delays, retries);
            for (size_t i = 0; i < rec.n_delays; i++) { /* 500 ms, doubled */
                /* what is left of it by the port clock at the delay hook */
                assert_in_range(rec.delays[i], (500u << i) - 10u, 500u << i);
            }
            check_sent(APIS[a], "fixture-error-503", true, retries + 1, true);
        }
    }
}

/* The port's stop hook and ctxc_provider_progress(): the hook sees the
 * call's phase; true stops the blocking call. In a retry pause (429 with
 * Retry-After: 1) the pause is cut into slices of at most
 * CTXC_STOP_SLICE_MS so the hook is asked between them: the call ends in
 * the pause, the retry is never sent. In an answer that stalls after its
 * first text (fixture-hang, 20 s) the call ends with the text seen so far;
 * the client then takes the next call. */
static int stop_when; /* 1: in a retry pause; 2: once text has come */
static ctxc_provider_progress_t pause_seen, answer_seen;

static bool stop_on(void *ctx) {
    (void)ctx;
    ctxc_provider_progress_t p;
    ctxc_provider_progress(&client, &p);
    if (p.phase == CTXC_PROVIDER_RETRY_PAUSE && pause_seen.attempt == 0) {
        pause_seen = p;
    }
    if (p.phase == CTXC_PROVIDER_ANSWER) {
        answer_seen = p;
    }
    return (stop_when == 1 && p.phase == CTXC_PROVIDER_RETRY_PAUSE &&
            p.retry_in_ms < 800u) ||
           (stop_when == 2 && p.phase == CTXC_PROVIDER_ANSWER);
}

static void sleeping_delay(void *ctx, uint32_t ms) {
    fixture_rec_delay(ctx, ms);
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    nanosleep(&ts, NULL);
}

static void test_stop_hook_and_progress(void **state) {
    (void)state;
    port.stop = stop_on;
    port.delay_ms = sleeping_delay;
    memset(&pause_seen, 0, sizeof pause_seen);
    stop_when = 1;
    rec.n_delays = 0;
    assert_int_equal(call("openai", "fixture-error-429", true, 2),
                     CTXC_E_CANCELLED);
    assert_contains(err.message, "stopped");
    assert_int_equal(pause_seen.phase, CTXC_PROVIDER_RETRY_PAUSE);
    assert_int_equal(pause_seen.attempt, 2);
    assert_int_equal(pause_seen.attempts, 3);
    assert_in_range(pause_seen.retry_in_ms, 1, 1000);
    assert_true(rec.n_delays >= 2); /* sliced */
    for (size_t i = 0; i < rec.n_delays; i++) {
        assert_in_range(rec.delays[i], 1, CTXC_STOP_SLICE_MS);
    }
    check_sent("openai", "fixture-error-429", true, 1, true);

    memset(&answer_seen, 0, sizeof answer_seen);
    stop_when = 2;
    assert_int_equal(call("openai", "fixture-hang", true, 0), CTXC_E_CANCELLED);
    assert_int_equal(answer_seen.attempt, 1);
    assert_true(answer_seen.received > 0);
    ctxc_provider_progress_t idle;
    ctxc_provider_progress(&client, &idle);
    assert_int_equal(idle.phase, CTXC_PROVIDER_IDLE);
    assert_int_equal(idle.attempt, 0);

    stop_when = 0; /* the hook asked, never stopping: the call as usual */
    assert_int_equal(call("openai", "fixture-ok", true, 0), CTXC_OK);
    assert_string_equal(out, SUMMARY);
    port.stop = NULL;
    port.delay_ms = fixture_rec_delay;
}

static void test_in_stream_error(void **state) {
    (void)state;
    static const char *const msg[] = {"The server had an error while streaming",
                                      "Overloaded", "The model is overloaded"};
    for (size_t a = 0; a < 3; a++) {
        assert_int_equal(call(APIS[a], "fixture-stream-error", true, 2),
                         CTXC_E_HTTP_STATUS);
        assert_contains(err.message, "error in the answer");
        assert_contains(err.message, msg[a]);
        /* Anthropic's overloaded_error is transient: retried (issue 41) */
        assert_int_equal(usage.attempts,
                         strcmp(APIS[a], "anthropic") == 0 ? 3 : 1);
    }
}

static void test_output_too_small(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        assert_int_equal(
            call_with(APIS[a], "fixture-ok", true, 0, KEY_VAR, true, 16),
            CTXC_E_TOO_LARGE);
        assert_int_equal(err.needed, strlen(SUMMARY) + 1);
        assert_int_equal(usage.attempts, 1);
        /* non-streaming: the whole answer body must fit */
        assert_int_equal(
            call_with(APIS[a], "fixture-ok", false, 0, KEY_VAR, true, 16),
            CTXC_E_TOO_LARGE);
        assert_true(err.needed > strlen(SUMMARY));
    }
}

static void test_unknown_provider(void **state) {
    (void)state;
    assert_int_equal(call("openia", "fixture-ok", true, 0), CTXC_E_INVALID_ARG);
    assert_contains(err.message, "openia");
    assert_contains(err.message, "openai anthropic gemini");
}

static void test_missing_key(void **state) {
    (void)state;
    unsetenv(KEY_VAR);
    for (size_t a = 0; a < 3; a++) {
        assert_int_equal(call(APIS[a], "fixture-ok", true, 2),
                         CTXC_E_NOT_FOUND);
        assert_contains(err.message, KEY_VAR);
    }
    setenv(KEY_VAR, KEY, 1);
}

static void test_key_over_plain_http(void **state) {
    (void)state;
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    snprintf(ref.model, sizeof ref.model, "fixture-ok");
    snprintf(ref.auth_key_name, sizeof ref.auth_key_name, KEY_VAR);
    snprintf(ref.base_url, sizeof ref.base_url, "http://api.example.com/v1");
    ctxc_llm_t llm;
    for (size_t a = 0; a < 3; a++) {
        snprintf(ref.provider, sizeof ref.provider, "%s", APIS[a]);
        assert_int_equal(
            ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err),
            CTXC_E_INSECURE);
        assert_null(strstr(err.message, KEY));
    }
    /* plain http:// to loopback is allowed (local servers) */
    for (size_t a = 0; a < 3; a++) {
        assert_int_equal(call_with(APIS[a], "fixture-ok", true, 0, KEY_VAR,
                                   false, sizeof out),
                         CTXC_OK);
        assert_string_equal(out, SUMMARY);
    }
}

static void test_no_key_name_no_auth_header(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        assert_int_equal(
            call_with(APIS[a], "fixture-ok", a != 1, 0, "", true, sizeof out),
            CTXC_OK);
        assert_string_equal(out, SUMMARY);
        check_sent(APIS[a], "fixture-ok", a != 1, 1, false);
    }
}

static void test_bad_refs(void **state) {
    (void)state;
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    snprintf(ref.provider, sizeof ref.provider, "gemini");
    ctxc_llm_t llm;
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err),
        CTXC_E_INVALID_ARG); /* no model */
    snprintf(ref.model, sizeof ref.model, "a?b#c");
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err),
        CTXC_E_INVALID_ARG);
    snprintf(ref.model, sizeof ref.model, "gemini-2.5-flash");
    snprintf(ref.base_url, sizeof ref.base_url, "ftp://x");
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err),
        CTXC_E_INVALID_ARG);
    /* the defaults */
    ref.base_url[0] = '\0';
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err), CTXC_OK);
    assert_string_equal(
        ctxc_provider_default_base_url(ctxc_provider_find("anthropic")),
        "https://api.anthropic.com");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_answer_each_api, setup, teardown),
        cmocka_unit_test_setup_teardown(test_thinking_left_out, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_blank_answer_returned, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_cut_off_is_an_error, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_call_deadline, setup, teardown),
        cmocka_unit_test_setup_teardown(test_401_carries_the_provider_message,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_echoed_key_masked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_429_once_then_ok, setup, teardown),
        cmocka_unit_test_setup_teardown(test_resumable_call, setup, teardown),
        cmocka_unit_test_setup_teardown(test_503_retries_exhausted, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_in_stream_error, setup, teardown),
        cmocka_unit_test_setup_teardown(test_output_too_small, setup, teardown),
        cmocka_unit_test_setup_teardown(test_unknown_provider, setup, teardown),
        cmocka_unit_test_setup_teardown(test_missing_key, setup, teardown),
        cmocka_unit_test_setup_teardown(test_key_over_plain_http, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_no_key_name_no_auth_header, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_refs, setup, teardown),
        cmocka_unit_test_setup_teardown(test_stop_hook_and_progress, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
