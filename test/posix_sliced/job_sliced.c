/*
 * The POSIX port with the handshake's public-key work in slices (issue 38:
 * "on the host with the POSIX port, no poll over 2 ms of CPU"). Built
 * against mbedTLS 2.28 compiled from source with MBEDTLS_ECP_RESTARTABLE
 * (posix_sliced.cmake); Debian's libmbedtls, which the port links
 * elsewhere, cannot stop an ECC operation part-way.
 *
 * A middle-out job of a 40-entry history goes over TLS to the fixture
 * (127.0.0.1, ECDSA P-256 chain, ECDHE-ECDSA), polled as a main loop polls
 * it (ctxc_session_poll_due: at once, or after the transport's wait), on a
 * fresh transport each run: a full handshake. Each poll's CPU time is
 * taken with CLOCK_THREAD_CPUTIME_ID (the thread's own work, not the
 * time other processes took on a busy machine). Runs: cfg.ecp_max_ops
 * 0 (each public-key step whole), then 250 (the board's slice), RUNS
 * times each. Asserted: every job compressed, both leave the same
 * history, with slices the handshake stopped part-way in at least two
 * polls and without them in none. Printed (never asserted: time): the
 * median over the runs of the longest poll, of the longest poll that ran
 * a slice, and the slices a handshake took. Rerun with
 * `ctest -V -R job_sliced`.
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

#if !defined(MBEDTLS_ECP_RESTARTABLE)
#error "job_sliced needs an mbedTLS built with MBEDTLS_ECP_RESTARTABLE"
#endif

#define KEY_VAR "CTXC_TEST_SLICED_KEY"
#define KEY "sk-fixture-SECRET-sliced-0123456789"

static fixture_t fx;

static int load_fixture(void **state) {
    (void)state;
    return fixture_load(&fx, "job_sliced", "good", NULL);
}

static uint64_t mono_ms(void *ctx) {
    (void)ctx;
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static uint64_t cpu_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static ctxc_posix_transport_t net;
static ctxc_port_t port;
static fixture_rec_t rec;
CTXC_HISTORY_DEFINE(hist, 256, 262144);
CTXC_WORK_DEFINE(work, 256, 65536);
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

/* A fresh transport with ecp_max_ops (a full handshake next); the CA file
 * parsed and the generator seeded outside the measured job. */
static void fresh_transport(uint32_t ecp_max_ops) {
    ctxc_posix_transport_deinit(&net);
    ctxc_posix_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ca_file = fx.ca;
    cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
    cfg.entropy = ctxc_posix_entropy;
    cfg.ecp_max_ops = ecp_max_ops;
    ctxc_error_t err;
    if (ctxc_posix_transport_init(&net, &cfg, &err) != CTXC_OK) {
        fail_msg("transport init: %s", err.message);
    }
    port.transport = ctxc_posix_transport(&net);
    ctxc_status_t st =
        port.transport.ops->connect(&net, "localhost", g_port, true, &err);
    assert_true(st == CTXC_OK || st == CTXC_E_IN_PROGRESS);
    port.transport.ops->close(&net);
}

static void add_text(size_t i) {
    char t[200];
    snprintf(t, sizeof t,
             "msg %zu: the user talks to the assistant about the weather, "
             "the shopping list and the timer in the kitchen",
             i);
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(t);
    ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b, 1,
                          CTXC_STR_ABSENT};
    ctxc_error_t err;
    if (ctxc_history_append(&hist, &in, &err) != CTXC_OK) {
        fail_msg("append: %s", err.message);
    }
}

static int setup(void **state) {
    (void)state;
    memset(&port, 0, sizeof port);
    port.clock = mono_ms;
    port.log = fixture_rec_log;
    port.log_ctx = &rec;
    port.log_level = CTXC_LOG_WARN;
    port.entropy = ctxc_posix_entropy;
    port.key = ctxc_posix_key;
    port.delay_ms = ctxc_posix_delay_ms;
    setenv(KEY_VAR, KEY, 1);
    g_port = fixture_port(&fx, "good");
    snprintf(test_id, sizeof test_id, "sliced-%ld", (long)getpid());
    ctxc_settings_init(&set, NULL);
    if (ctxc_settings_set(&set, "context-limit", "100000", NULL) != CTXC_OK ||
        ctxc_settings_set(&set, "compression.strategy", "middle-out", NULL) !=
            CTXC_OK) {
        return -1;
    }
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
    char buf[1 << 16];
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

typedef struct {
    uint64_t longest_us;       /* the longest poll, CPU time */
    uint64_t longest_slice_us; /* the longest poll that ran a slice */
    unsigned polls, slices;
} run_t;

/* One job on a fresh transport; its figures, the history in out. */
static run_t one_job(uint32_t ecp_max_ops, dump_t *out) {
    run_t r;
    memset(&r, 0, sizeof r);
    ctxc_session_deinit(&sess);
    ctxc_history_clear(&hist);
    for (size_t i = 0; i < 40; i++) {
        add_text(i);
    }
    fresh_transport(ecp_max_ops);
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    ctxc_session_set_port(&sess, &port);
    ctxc_error_t err;
    ctxc_status_t st = ctxc_session_compress_start(&sess, &err);
    if (st != CTXC_OK) {
        fail_msg("start: %s: %s", ctxc_status_name(st), err.message);
    }
    uint64_t end = mono_ms(NULL) + 30000u;
    do {
        uint32_t ms = 0;
        ctxc_poll_due_t due = ctxc_session_poll_due(&sess, &ms);
        if (due == CTXC_POLL_ON_NETWORK) {
            port.transport.ops->wait(&net, 50);
        } else if (due == CTXC_POLL_AFTER) {
            ctxc_posix_delay_ms(NULL, ms < 50u ? ms : 50u);
        }
        uint32_t s0 = net.tls_slices;
        uint64_t t0 = cpu_us();
        st = ctxc_session_poll(&sess, &err);
        uint64_t d = cpu_us() - t0;
        r.polls++;
        if (d > r.longest_us) {
            r.longest_us = d;
        }
        if (net.tls_slices != s0 && d > r.longest_slice_us) {
            r.longest_slice_us = d;
        }
    } while (st == CTXC_E_IN_PROGRESS && mono_ms(NULL) < end);
    if (st != CTXC_OK) {
        fail_msg("job (ecp_max_ops %u): %s: %s", (unsigned)ecp_max_ops,
                 ctxc_status_name(st), err.message);
    }
    r.slices = net.tls_slices;
    out->len = 0;
    assert_int_equal(ctxc_export(&hist, dump_write, out, NULL), CTXC_OK);
    return r;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static void test_handshake_in_slices(void **state) {
    (void)state;
    enum { RUNS = 9 };
    static const uint32_t ops[] = {0, 250};
    static dump_t first, now;
    for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
        uint64_t longest[RUNS], slice[RUNS];
        unsigned slices = 0, polls = 0;
        for (int i = 0; i < RUNS; i++) {
            run_t r = one_job(ops[k], k == 0 && i == 0 ? &first : &now);
            if (k != 0 || i != 0) {
                assert_string_equal(first.buf, now.buf); /* same answer */
            }
            if (ops[k] == 0) {
                assert_int_equal(r.slices, 0);
            } else if (r.slices < 2) {
                fail_msg("ecp_max_ops %u: the handshake stopped part-way in "
                         "%u polls",
                         (unsigned)ops[k], r.slices);
            }
            longest[i] = r.longest_us;
            slice[i] = r.longest_slice_us;
            slices = r.slices;
            polls = r.polls;
        }
        qsort(longest, RUNS, sizeof longest[0], cmp_u64);
        qsort(slice, RUNS, sizeof slice[0], cmp_u64);
        printf("[ sliced ] ecp_max_ops %u: longest poll %llu us of CPU "
               "(median of %d runs, worst %llu us); longest poll that ran "
               "a slice %llu us (median); %u slices, %u polls in the last "
               "run\n",
               (unsigned)ops[k], (unsigned long long)longest[RUNS / 2], RUNS,
               (unsigned long long)longest[RUNS - 1],
               (unsigned long long)slice[RUNS / 2], slices, polls);
        fflush(stdout);
    }
    assert_null(strstr(rec.lines, "SECRET"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_handshake_in_slices, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
