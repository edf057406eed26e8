/*
 * The resumable compression job end to end: a session whose middle-out
 * summary goes through the provider layer, the HTTP client and the POSIX
 * TLS transport to the local fixture server (test/fixtures/https_server.py)
 * while a main loop appends a simulated voice turn every 20 ms and polls
 * the job without ever waiting in it. Everything stays on 127.0.0.1.
 *
 *   - a stalled answer (fixture-stall: 2.5 s pause mid-stream): the turns
 *     typed meanwhile are kept after the summary, in order;
 *   - faults during a job with turns arriving (a certificate for another
 *     host, HTTP 500, a stall past the read timeout, a reset): the history
 *     is the original plus the turns, byte for byte;
 *   - the poll bound: every poll's wall time, by what the transport was
 *     doing (TCP connect, each TLS handshake step by its mbedTLS state,
 *     send/recv): printed as a table of medians over repeated runs
 *     (informational: no test asserts a wall time).
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

#define KEY_VAR "CTXC_TEST_JOB_KEY"
#define KEY "sk-fixture-SECRET-job-0123456789"

static fixture_t fx;
static const char *ca_path = fx.ca;

static int load_fixture(void **state) {
    (void)state;
    return fixture_load(&fx, "test_job_e2e", "good", "wronghost", NULL);
}

/* ---- the port, the session ------------------------------------------------
 */

static ctxc_posix_transport_t net;
static ctxc_port_t port;
static fixture_rec_t rec;

static uint64_t now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000u + (uint64_t)ts.tv_nsec / 1000u;
}

static uint64_t now_ms(void *ctx) {
    (void)ctx;
    return now_us() / 1000u;
}

CTXC_HISTORY_DEFINE(hist, 256, 262144);
CTXC_HISTORY_DEFINE(ref, 256, 262144);
CTXC_WORK_DEFINE(work, 256, 65536);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static ctxc_provider_client_t client;
static ctxc_llm_t model;
static char g_model[64];
static uint16_t g_port;
static uint32_t g_read_timeout_ms;
static char test_id[64];
static ctxc_http_header_t hdr[1];

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    ctxc_provider_ref_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.provider, sizeof r.provider, "openai");
    snprintf(r.model, sizeof r.model, "%s", g_model);
    snprintf(r.base_url, sizeof r.base_url, "https://localhost:%u/v1",
             (unsigned)g_port);
    snprintf(r.auth_key_name, sizeof r.auth_key_name, KEY_VAR);
    ctxc_status_t st =
        ctxc_provider_llm(&client, &r, &port, 0, true, &model, err);
    if (st == CTXC_OK) {
        hdr[0] = (ctxc_http_header_t){"X-Test-Id", test_id, false};
        client.extra_headers = hdr;
        client.extra_header_count = 1;
        client.timeout_ms = g_read_timeout_ms;
        *llm = &model;
    }
    return st;
}

static int setup(void **state) {
    (void)state;
    ctxc_posix_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ca_file = ca_path;
    cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
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
    port.log_level = CTXC_LOG_INFO;
    port.transport = ctxc_posix_transport(&net);
    port.entropy = ctxc_posix_entropy;
    port.key = ctxc_posix_key;
    rec.len = 0;
    rec.lines[0] = '\0';
    setenv(KEY_VAR, KEY, 1);
    g_port = fixture_port(&fx, "good");
    snprintf(g_model, sizeof g_model, "fixture-ok");
    g_read_timeout_ms = 10000;
    snprintf(test_id, sizeof test_id, "job-%ld", (long)getpid());
    ctxc_history_clear(&hist);
    ctxc_history_clear(&ref);
    ctxc_settings_init(&set, NULL);
    if (ctxc_settings_set(&set, "context-limit", "100000", NULL) != CTXC_OK ||
        ctxc_settings_set(&set, "compression.strategy", "middle-out", NULL) !=
            CTXC_OK ||
        ctxc_session_init(&sess, &hist, &work, &set, NULL) != CTXC_OK) {
        return -1;
    }
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    ctxc_session_set_port(&sess, &port);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_session_compress_cancel(&sess);
    ctxc_session_deinit(&sess);
    ctxc_posix_transport_deinit(&net);
    return 0;
}

static void add_text(ctxc_history_t *h, ctxc_speaker_t sp, const char *s) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(s);
    ctxc_entry_in_t in = {sp, &b, 1, CTXC_STR_ABSENT};
    ctxc_error_t err;
    ctxc_status_t st = h == &hist ? ctxc_session_add(&sess, &in, &err)
                                  : ctxc_history_append(h, &in, &err);
    if (st != CTXC_OK) {
        fail_msg("append: %s", err.message);
    }
}

static const char *text(const char *tag, size_t i) {
    static char t[8][200];
    static unsigned k;
    char *p = t[k++ % 8];
    snprintf(p, 200,
             "%s %zu: the user talks to the assistant about the weather, "
             "the shopping list and the timer in the kitchen",
             tag, i);
    return p;
}

static void history_of(size_t n) {
    for (size_t i = 0; i < n; i++) {
        ctxc_speaker_t sp = i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN;
        add_text(&hist, sp, text("msg", i));
        add_text(&ref, sp, text("msg", i));
    }
}

typedef struct {
    char buf[1 << 18];
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

static void assert_same(const ctxc_history_t *a, const ctxc_history_t *b) {
    static dump_t da, db;
    da.len = db.len = 0;
    assert_int_equal(ctxc_export(a, dump_write, &da, NULL), CTXC_OK);
    assert_int_equal(ctxc_export(b, dump_write, &db, NULL), CTXC_OK);
    assert_string_equal(da.buf, db.buf);
}

/* ---- the poll bound --------------------------------------------------------
 */

/* What the transport did in a poll: by its state before the poll. */
enum { K_CONNECT = 0, K_TCP, K_IO, K_HS0 };
#define KINDS (K_HS0 + 20)
typedef struct {
    uint64_t max_us[KINDS];
    unsigned n[KINDS];
    uint64_t longest_us;
    unsigned polls;
} bound_t;

static int kind_now(void) {
    if (net.phase == 1) {
        return K_TCP;
    }
    if (net.phase == 2) {
        int s = net.ssl.state;
        return K_HS0 + (s >= 0 && s < 20 ? s : 19);
    }
    return net.fd >= 0 ? K_IO : K_CONNECT;
}

/* The main loop: poll the job (never waiting in it), a voice turn every
 * 20 ms, at most MAX_TURNS (a job slowed by valgrind on a busy machine
 * lasts longer, and turns on a timer would fill the 256 slots: the test
 * is what happens to the turns, not how many come); the loop itself
 * sleeps 1 ms between polls. Returns the job's end status; *turns the
 * turns appended. */
#define MAX_TURNS 200u
static ctxc_status_t main_loop(size_t *turns, bound_t *b, bool to_ref) {
    ctxc_error_t err;
    ctxc_status_t st = ctxc_session_compress_start(&sess, &err);
    if (st != CTXC_OK) {
        fail_msg("start: %s: %s", ctxc_status_name(st), err.message);
    }
    uint64_t next_turn = now_us() + 20000u;
    uint64_t end = now_us() + 30000000u;
    *turns = 0;
    do {
        int k = kind_now();
        uint64_t t0 = now_us();
        st = ctxc_session_poll(&sess, &err);
        uint64_t d = now_us() - t0;
        if (b != NULL) {
            if (d > b->max_us[k]) {
                b->max_us[k] = d;
            }
            b->n[k]++;
            b->polls++;
            if (d > b->longest_us) {
                b->longest_us = d;
            }
        }
        if (*turns < MAX_TURNS && now_us() >= next_turn) {
            ctxc_speaker_t sp =
                *turns % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN;
            add_text(&hist, sp, text("turn", *turns));
            if (to_ref) {
                add_text(&ref, sp, text("turn", *turns));
            }
            (*turns)++;
            next_turn += 20000u;
        }
        struct timespec ms = {0, 1000000L};
        nanosleep(&ms, NULL);
    } while (st == CTXC_E_IN_PROGRESS && now_us() < end);
    if (st != CTXC_OK && st != CTXC_E_IN_PROGRESS) {
        print_message("  job ended: %s: %s\n", ctxc_status_name(st),
                      err.message);
    }
    return st;
}

/* ---- tests ------------------------------------------------------------------
 */

/* fixture-stall pauses 2.5 s after the first piece of the summary: the
 * turns that arrive meanwhile are kept after the result, in order. */
static void test_turns_kept_while_the_summary_streams(void **state) {
    (void)state;
    history_of(30);
    snprintf(g_model, sizeof g_model, "fixture-stall");
    size_t turns = 0;
    assert_int_equal(main_loop(&turns, NULL, false), CTXC_OK);
    assert_true(turns >= 100); /* 2.5 s of stall, a turn each 20 ms */
    size_t n = ctxc_history_count(&hist);
    /* 30 entries: 6 kept, summary, continuation, 6 kept, then the turns */
    assert_int_equal(n, 6 + 2 + 6 + turns);
    for (size_t i = 0; i < turns; i++) {
        ctxc_entry_t e;
        ctxc_block_t b;
        assert_int_equal(ctxc_history_get(&hist, 14 + i, &e), CTXC_OK);
        assert_int_equal(ctxc_entry_block(&e, 0, &b), CTXC_OK);
        assert_string_equal(b.u.text.text.ptr, text("turn", i));
    }
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, 6, &e), CTXC_OK);
    assert_true(e.flags & CTXC_ENTRY_IS_SUMMARY);
    assert_non_null(strstr(rec.lines, "compression job with middle-out "
                                      "started over entries [0, 30)"));
}

/* Faults during a job with turns arriving: the history is the original
 * plus the turns, byte for byte, and the key never shows. */
static void test_faults_keep_original_plus_turns(void **state) {
    (void)state;
    static const struct {
        const char *model;
        const char *port;
        uint32_t read_timeout_ms;
        ctxc_status_t want;
    } faults[] = {
        {"fixture-ok", "wronghost", 10000, CTXC_E_TLS},
        {"fixture-error-500", "good", 10000, CTXC_E_HTTP_STATUS},
        {"fixture-stall", "good", 500, CTXC_E_TIMEOUT},
        {"fixture-reset", "good", 10000, CTXC_E_NETWORK},
    };
    history_of(24);
    for (size_t f = 0; f < sizeof faults / sizeof faults[0]; f++) {
        snprintf(g_model, sizeof g_model, "%s", faults[f].model);
        g_port = fixture_port(&fx, faults[f].port);
        g_read_timeout_ms = faults[f].read_timeout_ms;
        size_t turns = 0;
        ctxc_status_t st = main_loop(&turns, NULL, true);
        if (st != faults[f].want) {
            fail_msg("%s on %s: %s, expected %s", faults[f].model,
                     faults[f].port, ctxc_status_name(st),
                     ctxc_status_name(faults[f].want));
        }
        assert_false(ctxc_session_job_active(&sess));
        assert_same(&hist, &ref);
        assert_null(strstr(rec.lines, "SECRET"));
    }
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static const char *kind_name(int k) {
    static const char *const hs[] = {"hello request",
                                     "client hello",
                                     "server hello",
                                     "server certificate",
                                     "server key exchange",
                                     "certificate request",
                                     "server hello done",
                                     "client certificate",
                                     "client key exchange",
                                     "certificate verify",
                                     "client change cipher",
                                     "client finished",
                                     "server change cipher",
                                     "server finished",
                                     "flush buffers",
                                     "handshake wrapup",
                                     "handshake over",
                                     "(17)",
                                     "(18)",
                                     "(19)"};
    switch (k) {
    case K_CONNECT:
        return "connect() (resolve, socket, TCP SYN)";
    case K_TCP:
        return "TCP connect completion";
    case K_IO:
        return "send / recv (request out, answer in)";
    default:
        return hs[k - K_HS0];
    }
}

/* The poll bound: RUNS jobs of a 40-entry history against fixture-ok over
 * TLS (a fresh transport each run: a full handshake; the CA file parse is
 * in run 0 only), each poll timed by what the transport was doing. Prints
 * the median over the runs of each kind's longest poll, and the longest
 * poll of all. Asserts only that every job succeeded. */
static void test_poll_bound_table(void **state) {
    (void)state;
    enum { RUNS = 15 };
    static uint64_t per[KINDS][RUNS];
    static unsigned seen[KINDS];
    uint64_t longest[RUNS];
    uint64_t first_connect = 0;
    memset(seen, 0, sizeof seen);
    for (int run = 0; run < RUNS; run++) {
        ctxc_history_clear(&hist);
        ctxc_history_clear(&ref);
        history_of(40);
        bound_t b;
        memset(&b, 0, sizeof b);
        size_t turns = 0;
        assert_int_equal(main_loop(&turns, &b, false), CTXC_OK);
        for (int k = 0; k < KINDS; k++) {
            if (b.n[k] > 0) {
                per[k][seen[k]++] = b.max_us[k];
            }
        }
        longest[run] = b.longest_us;
        if (run == 0) {
            first_connect = b.max_us[K_CONNECT];
        }
        /* a fresh transport: the next run does a full handshake again
         * (and reads the CA file again: not timed into the table) */
        ctxc_posix_transport_deinit(&net);
        ctxc_posix_transport_config_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.ca_file = ca_path;
        cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
        cfg.entropy = ctxc_posix_entropy;
        assert_int_equal(ctxc_posix_transport_init(&net, &cfg, NULL), CTXC_OK);
        ctxc_error_t err;
        /* the CA file parse and the generator's seeding, outside the table:
         * one connect to the good port, closed at once */
        ctxc_status_t st = net.inited
                               ? port.transport.ops->connect(&net, "localhost",
                                                             g_port, true, &err)
                               : CTXC_E_INVALID_ARG;
        assert_true(st == CTXC_OK || st == CTXC_E_IN_PROGRESS);
        port.transport.ops->close(&net);
    }
    /* the one-time TLS setup with the system CA bundle (the default): the
     * connect() that parses it (informational; skipped without one) */
    uint64_t bundle_us = 0;
    if (access(CTXC_POSIX_CA_BUNDLE, R_OK) == 0) {
        static ctxc_posix_transport_t sys;
        ctxc_posix_transport_config_t cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.entropy = ctxc_posix_entropy;
        assert_int_equal(ctxc_posix_transport_init(&sys, &cfg, NULL), CTXC_OK);
        ctxc_transport_t tr = ctxc_posix_transport(&sys);
        uint64_t t0 = now_us();
        (void)tr.ops->connect(tr.ctx, "localhost", g_port, true, NULL);
        bundle_us = now_us() - t0;
        tr.ops->close(tr.ctx);
        ctxc_posix_transport_deinit(&sys);
    }
    printf("[ poll bound ] %d runs (40-entry history, middle-out over TLS to "
           "127.0.0.1, fixture-ok streamed), median of each run's longest "
           "poll:\n",
           RUNS);
    printf("[ poll bound ] | transport step in the poll | polls seen in | "
           "median longest (us) | worst (us) |\n");
    for (int k = 0; k < KINDS; k++) {
        if (seen[k] == 0) {
            continue;
        }
        qsort(per[k], seen[k], sizeof per[k][0], cmp_u64);
        printf("[ poll bound ] | %s | %u runs | %llu | %llu |\n", kind_name(k),
               seen[k], (unsigned long long)per[k][seen[k] / 2],
               (unsigned long long)per[k][seen[k] - 1]);
    }
    qsort(longest, RUNS, sizeof longest[0], cmp_u64);
    printf("[ poll bound ] longest poll of a run: median %llu us, worst %llu "
           "us; first connect of the suite (CA file parse + seeding "
           "included): %llu us\n",
           (unsigned long long)longest[RUNS / 2],
           (unsigned long long)longest[RUNS - 1],
           (unsigned long long)first_connect);
    printf("[ poll bound ] first TLS connect() of a transport with the system "
           "CA bundle (%s parsed once): %llu us\n",
           CTXC_POSIX_CA_BUNDLE, (unsigned long long)bundle_us);
    fflush(stdout);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_turns_kept_while_the_summary_streams, setup, teardown),
        cmocka_unit_test_setup_teardown(test_faults_keep_original_plus_turns,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_bound_table, setup, teardown),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
