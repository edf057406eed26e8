/*
 * Waiting for a job costs what the blocking call costs (issue 38 point 2).
 * The same history and the same answer (fixture-ok over TLS to the local
 * fixture server, 127.0.0.1, a full handshake each run): once through the
 * blocking ctxc_session_compress(), once through ctxc_session_before_send()
 * with compression.prefetch-threshold set and the history over the
 * threshold (on-limit wait: it starts a job and polls it to its end,
 * waiting between polls). Both leave the same history.
 *
 * The transport is watched: every wait op call is timed and counted, and a
 * wait that follows a send or recv that moved bytes (or the connect's end)
 * is a wait while data was moving; the port's delay hook is counted too.
 * Asserted (structure, on any machine): both paths answer the same, the
 * job path never waits while data moves and never sleeps in the delay hook
 * (the server answers at once: no retry pause is due). Printed (not
 * asserted: wall time): the median time of each path over the runs, their
 * ratio, and the time spent in the wait op. Rerun with
 * `ctest -V -R test_job_wait_e2e`.
 */
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

#define KEY_VAR "CTXC_TEST_JOB_WAIT_KEY"
#define KEY "sk-fixture-SECRET-wait-0123456789"

static fixture_t fx;

static int load_fixture(void **state) {
    (void)state;
    return fixture_load(&fx, "test_job_wait_e2e", "good", NULL);
}

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t clock_ms(void *ctx) {
    (void)ctx;
    return now_us() / 1000u;
}

/* ---- the watched transport -------------------------------------------- */

static ctxc_posix_transport_t net;
static ctxc_transport_t inner;

static struct {
    bool moved;     /* the last send/recv moved bytes, or connected */
    unsigned waits; /* wait op calls */
    unsigned waits_after_move; /* ... right after bytes moved */
    uint64_t wait_us;          /* time inside the wait op */
    unsigned delays;           /* delay hook calls */
    uint64_t delay_ms;         /* ms asked of the delay hook */
} w;

static ctxc_status_t w_connect(void *ctx, const char *host, uint16_t port,
                               bool tls, ctxc_error_t *err) {
    (void)ctx;
    ctxc_status_t st = inner.ops->connect(inner.ctx, host, port, tls, err);
    w.moved = st == CTXC_OK;
    return st;
}

static ctxc_status_t w_connect_poll(void *ctx, ctxc_error_t *err) {
    (void)ctx;
    ctxc_status_t st = inner.ops->connect_poll(inner.ctx, err);
    w.moved = st == CTXC_OK;
    return st;
}

static int32_t w_send(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx;
    int32_t n = inner.ops->send(inner.ctx, data, len);
    w.moved = n > 0;
    return n;
}

static int32_t w_recv(void *ctx, uint8_t *buf, size_t cap) {
    (void)ctx;
    int32_t n = inner.ops->recv(inner.ctx, buf, cap);
    w.moved = n > 0;
    return n;
}

static void w_close(void *ctx) {
    (void)ctx;
    inner.ops->close(inner.ctx);
}

static void w_wait(void *ctx, uint32_t ms) {
    (void)ctx;
    w.waits++;
    if (w.moved) {
        w.waits_after_move++;
    }
    uint64_t t0 = now_us();
    inner.ops->wait(inner.ctx, ms);
    w.wait_us += now_us() - t0;
}

static const char *w_last_error(void *ctx) {
    (void)ctx;
    return inner.ops->last_error(inner.ctx);
}

static const ctxc_transport_ops_t watched = {
    w_connect, w_send, w_recv, w_close, w_connect_poll, w_wait, w_last_error,
};

static void w_delay(void *ctx, uint32_t ms) {
    (void)ctx;
    w.delays++;
    w.delay_ms += ms;
    ctxc_posix_delay_ms(NULL, ms);
}

/* ---- the session -------------------------------------------------------- */

static ctxc_port_t port;
static fixture_rec_t rec;
CTXC_HISTORY_DEFINE(hist, 1024, 1 << 20);
CTXC_WORK_DEFINE(work, 1024, 1 << 18);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static ctxc_provider_client_t client;
static ctxc_llm_t model;
static uint16_t g_port;
static char test_id[64];
static ctxc_http_header_t hdr[1];

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    ctxc_provider_ref_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.provider, sizeof r.provider, "openai");
    snprintf(r.model, sizeof r.model, "fixture-ok");
    snprintf(r.base_url, sizeof r.base_url, "https://localhost:%u/v1",
             (unsigned)g_port);
    snprintf(r.auth_key_name, sizeof r.auth_key_name, KEY_VAR);
    ctxc_status_t st =
        ctxc_provider_llm(&client, &r, &port, 0, true, &model, err);
    if (st == CTXC_OK) {
        hdr[0] = (ctxc_http_header_t){"X-Test-Id", test_id, false};
        client.extra_headers = hdr;
        client.extra_header_count = 1;
        client.timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS; /* not under test */
        *llm = &model;
    }
    return st;
}

/* A fresh transport (the next call does a full handshake), the CA file
 * parsed and the generator seeded outside the measured calls. */
static void fresh_transport(void) {
    ctxc_posix_transport_deinit(&net);
    ctxc_posix_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ca_file = fx.ca;
    cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
    cfg.entropy = ctxc_posix_entropy;
    ctxc_error_t err;
    if (ctxc_posix_transport_init(&net, &cfg, &err) != CTXC_OK) {
        fail_msg("transport init: %s", err.message);
    }
    inner = ctxc_posix_transport(&net);
    ctxc_status_t st =
        inner.ops->connect(inner.ctx, "localhost", g_port, true, &err);
    assert_true(st == CTXC_OK || st == CTXC_E_IN_PROGRESS);
    inner.ops->close(inner.ctx);
}

static void set_ok(const char *key, const char *value) {
    ctxc_error_t err;
    if (ctxc_settings_set(&set, key, value, &err) != CTXC_OK) {
        fail_msg("set %s %s: %s", key, value, err.message);
    }
}

static const char *text(size_t i) {
    static char t[256];
    snprintf(t, sizeof t,
             "msg %zu: the user talks to the assistant about the weather, "
             "the shopping list, the timer in the kitchen and the train to "
             "the city tomorrow morning at eight",
             i);
    return t;
}

/* The history of n entries, the session over it; prefetch: the job path
 * (compression.prefetch-threshold set), else the blocking one. The
 * context limit puts the history over compression-threshold (0.5). */
static void session_of(size_t n, bool prefetch) {
    ctxc_session_deinit(&sess);
    ctxc_history_clear(&hist);
    for (size_t i = 0; i < n; i++) {
        ctxc_block_t b;
        memset(&b, 0, sizeof b);
        b.type = CTXC_BLOCK_TEXT;
        b.u.text.text = ctxc_str(text(i));
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b,
                              1, CTXC_STR_ABSENT};
        ctxc_error_t err;
        if (ctxc_history_append(&hist, &in, &err) != CTXC_OK) {
            fail_msg("append %zu: %s", i, err.message);
        }
    }
    ctxc_settings_init(&set, NULL);
    char limit[32];
    snprintf(limit, sizeof limit, "%llu",
             (unsigned long long)(ctxc_history_tokens(&hist) * 10u / 6u));
    set_ok("context-limit", limit);
    set_ok("compression.strategy", "middle-out");
    set_ok("compression-threshold", "0.5");
    if (prefetch) {
        set_ok("compression.prefetch-threshold", "0.1");
    }
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    ctxc_session_set_port(&sess, &port);
}

static int setup(void **state) {
    (void)state;
    memset(&port, 0, sizeof port);
    port.clock = clock_ms;
    port.log = fixture_rec_log;
    port.log_ctx = &rec;
    port.log_level = CTXC_LOG_WARN;
    port.transport = (ctxc_transport_t){&watched, NULL};
    port.delay_ms = w_delay;
    port.entropy = ctxc_posix_entropy;
    port.key = ctxc_posix_key;
    rec.len = 0;
    setenv(KEY_VAR, KEY, 1);
    g_port = fixture_port(&fx, "good");
    snprintf(test_id, sizeof test_id, "wait-%ld", (long)getpid());
    memset(&sess, 0, sizeof sess);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_session_compress_cancel(&sess);
    ctxc_session_deinit(&sess);
    ctxc_posix_transport_deinit(&net);
    return 0;
}

typedef struct {
    char buf[1 << 20];
    size_t len;
} dump_t;

static ctxc_status_t dump_write(void *user, const char *data, size_t len) {
    dump_t *d = user;
    if (d->len + len >= sizeof d->buf) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(d->buf + d->len, data, len);
    d->len += len;
    d->buf[d->len] = '\0';
    return CTXC_OK;
}

static dump_t blocking_out, job_out;

typedef struct {
    uint64_t us;
    unsigned waits, waits_after_move, delays;
    uint64_t wait_us;
} measure_t;

/* One compression of an n-entry history: blocking (ctxc_session_compress)
 * or through before_send waiting for its job; its time, the watch's
 * counts, and the history it left exported into out. */
static measure_t one(size_t n, bool job, dump_t *out) {
    session_of(n, job);
    fresh_transport();
    memset(&w, 0, sizeof w);
    ctxc_error_t err;
    ctxc_send_report_t rep;
    uint64_t t0 = now_us();
    ctxc_status_t st = job ? ctxc_session_before_send(&sess, 0, &rep, &err)
                           : ctxc_session_compress(&sess, &err);
    measure_t m = {now_us() - t0, w.waits, w.waits_after_move, w.delays,
                   w.wait_us};
    if (st != CTXC_OK) {
        fail_msg("%s: %s: %s", job ? "before_send" : "compress",
                 ctxc_status_name(st), err.message);
    }
    if (job) {
        assert_int_equal(rep.job, CTXC_SEND_JOB_WAITED);
        assert_true(rep.compressed);
    }
    assert_false(ctxc_session_job_active(&sess));
    assert_true(ctxc_history_count(&hist) < n);
    out->len = 0;
    assert_int_equal(ctxc_export(&hist, dump_write, out, NULL), CTXC_OK);
    return m;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* RUNS pairs (blocking, then the job; the order alternates) for each
 * history size: the same answer; the job never waits while data moves
 * and never sleeps in the delay hook; the medians and their ratio
 * printed. */
static void test_wait_costs_what_blocking_costs(void **state) {
    (void)state;
    enum { RUNS = 9 };
    static const size_t sizes[] = {40, 800};
    for (size_t z = 0; z < sizeof sizes / sizeof sizes[0]; z++) {
        size_t n = sizes[z];
        uint64_t tb[RUNS], tj[RUNS], wb[RUNS], wj[RUNS];
        unsigned waits_b = 0, waits_j = 0;
        uint64_t tokens = 0;
        for (int r = 0; r < RUNS; r++) {
            measure_t b, j;
            if (r % 2 == 0) {
                b = one(n, false, &blocking_out);
                j = one(n, true, &job_out);
            } else {
                j = one(n, true, &job_out);
                b = one(n, false, &blocking_out);
            }
            session_of(n, false);
            tokens = ctxc_history_tokens(&hist);
            /* the same answer: the same history after both */
            assert_string_equal(blocking_out.buf, job_out.buf);
            /* the job path: no sleep while data was moved, no delay */
            if (j.waits_after_move != 0 || j.delays != 0) {
                fail_msg("%zu entries, run %d: the job waited %u times "
                         "right after bytes moved, %u delays",
                         n, r, j.waits_after_move, j.delays);
            }
            assert_int_equal(b.waits_after_move, 0);
            assert_int_equal(b.delays, 0);
            tb[r] = b.us;
            tj[r] = j.us;
            wb[r] = b.wait_us;
            wj[r] = j.wait_us;
            waits_b += b.waits;
            waits_j += j.waits;
        }
        qsort(tb, RUNS, sizeof tb[0], cmp_u64);
        qsort(tj, RUNS, sizeof tj[0], cmp_u64);
        qsort(wb, RUNS, sizeof wb[0], cmp_u64);
        qsort(wj, RUNS, sizeof wj[0], cmp_u64);
        printf("[ job wait ] %zu entries (%llu tokens), %d runs each, TLS to "
               "127.0.0.1, fixture-ok: blocking compress median %.1f ms "
               "(min %.1f, max %.1f), before_send waiting for its job median "
               "%.1f ms (min %.1f, max %.1f): ratio %.2f; in the transport's "
               "wait: %.1f ms / %.1f ms (median), %.1f / %.1f wait calls a "
               "run; waits right after bytes moved: 0; delay hook: 0\n",
               n, (unsigned long long)tokens, RUNS, tb[RUNS / 2] / 1000.0,
               tb[0] / 1000.0, tb[RUNS - 1] / 1000.0, tj[RUNS / 2] / 1000.0,
               tj[0] / 1000.0, tj[RUNS - 1] / 1000.0,
               (double)tj[RUNS / 2] / (double)tb[RUNS / 2],
               wb[RUNS / 2] / 1000.0, wj[RUNS / 2] / 1000.0,
               (double)waits_b / RUNS, (double)waits_j / RUNS);
        fflush(stdout);
    }
    assert_null(strstr(rec.lines, "SECRET"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_wait_costs_what_blocking_costs,
                                        setup, teardown),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
