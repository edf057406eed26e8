/*
 * ThreadSanitizer run (ctest tsan_job_threads, built with -fsanitize=thread
 * against the _tsan library and POSIX port variants): one session shared by
 * two threads through the port's pthread mutex, as an RTOS application
 * shares it between tasks (docs/compression-job.md):
 *   - the voice thread appends a turn every 2 ms (ctxc_session_add);
 *   - the compression thread starts middle-out jobs and polls them every
 *     millisecond (ctxc_session_poll), the summary going over TLS to the
 *     fixture server on 127.0.0.1 (one answer stalls 2.5 s mid-stream);
 * then checks, after both threads have ended, that every turn is in the
 * history in order and that the summaries were applied. Exit status 0 when
 * all held; ThreadSanitizer makes a report fail the run (TSAN_OPTIONS
 * halt_on_error=1, exitcode=66). No cmocka: plain asserts, messages on
 * stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"

#define KEY_VAR "CTXC_TEST_TSAN_KEY"

static ctxc_posix_port_t pp;
static ctxc_posix_transport_t net;
CTXC_HISTORY_DEFINE(hist, 2048, 1 << 20);
CTXC_WORK_DEFINE(work, 2048, 1 << 18);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static ctxc_provider_client_t client;
static ctxc_llm_t model;
static char base_url[128];
static const char *g_model = "fixture-ok";

static int failures;
#define CHECK(cond, ...)                                                       \
    do {                                                                       \
        if (!(cond)) {                                                         \
            fprintf(stderr, "tsan_job_threads: " __VA_ARGS__);                 \
            fputc('\n', stderr);                                               \
            failures++;                                                        \
        }                                                                      \
    } while (0)

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* The resolver runs inside ctxc_session_compress_start (the mutex held):
 * the client is the compression thread's only. */
static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    ctxc_provider_ref_t r;
    memset(&r, 0, sizeof r);
    snprintf(r.provider, sizeof r.provider, "openai");
    snprintf(r.model, sizeof r.model, "%s", g_model);
    snprintf(r.base_url, sizeof r.base_url, "%s", base_url);
    snprintf(r.auth_key_name, sizeof r.auth_key_name, KEY_VAR);
    ctxc_status_t st =
        ctxc_provider_llm(&client, &r, &pp.port, 0, true, &model, err);
    if (st == CTXC_OK) {
        client.timeout_ms = 10000;
        *llm = &model;
    }
    return st;
}

enum { TURNS = 800 };
static volatile int done; /* written under the session mutex only */

static int last_turn = -1; /* written by the voice thread, read after join */

static bool is_done(void) {
    pthread_mutex_lock(&pp.mutex);
    bool d = done != 0;
    pthread_mutex_unlock(&pp.mutex);
    return d;
}

static void *voice(void *arg) {
    (void)arg;
    char text[96];
    for (int i = 0; i < TURNS && !is_done(); i++) {
        snprintf(text, sizeof text, "turn %d of the voice thread", i);
        ctxc_block_t b;
        memset(&b, 0, sizeof b);
        b.type = CTXC_BLOCK_TEXT;
        b.u.text.text = ctxc_str(text);
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b,
                              1, CTXC_STR_ABSENT};
        ctxc_error_t err;
        ctxc_status_t st = ctxc_session_add(&sess, &in, &err);
        CHECK(st == CTXC_OK, "add %d: %s", i, ctxc_error_message(&err));
        last_turn = i;
        sleep_ms(2);
    }
    return NULL;
}

static int applied;

static void *compressor(void *arg) {
    (void)arg;
    static const char *const models[] = {"fixture-ok", "fixture-stall",
                                         "fixture-ok"};
    for (int j = 0; j < 3; j++) {
        g_model = models[j];
        sleep_ms(50); /* let turns arrive */
        ctxc_error_t err;
        ctxc_status_t st = ctxc_session_compress_start(&sess, &err);
        CHECK(st == CTXC_OK, "start %d: %s", j, ctxc_error_message(&err));
        if (st != CTXC_OK) {
            break;
        }
        for (int k = 0; k < 30000; k++) {
            st = ctxc_session_poll(&sess, &err);
            if (st != CTXC_E_IN_PROGRESS) {
                break;
            }
            sleep_ms(1);
        }
        CHECK(st == CTXC_OK, "job %d: %s: %s", j, ctxc_status_name(st),
              ctxc_error_message(&err));
        applied += st == CTXC_OK;
    }
    pthread_mutex_lock(&pp.mutex);
    done = 1;
    pthread_mutex_unlock(&pp.mutex);
    return NULL;
}

int main(void) {
    const char *dir = getenv("CTXC_FIXTURE_DIR");
    char path[512];
    snprintf(path, sizeof path, "%s/ports.txt", dir != NULL ? dir : ".");
    FILE *f = fopen(path, "r");
    unsigned port = 0;
    char name[64];
    unsigned p;
    while (f != NULL && fscanf(f, "%63s %u", name, &p) == 2) {
        if (strcmp(name, "good") == 0) {
            port = p;
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    if (port == 0) {
        fprintf(stderr, "tsan_job_threads: no fixture ports in %s\n", path);
        return 1;
    }
    snprintf(base_url, sizeof base_url, "https://localhost:%u/v1", port);
    char ca[512];
    snprintf(ca, sizeof ca, "%s/ca.pem", dir);
    setenv(KEY_VAR, "sk-fixture-tsan-0123456789", 1);
    ctxc_error_t err;
    if (ctxc_posix_port_init(&pp, NULL, CTXC_LOG_WARN, &err) != CTXC_OK) {
        fprintf(stderr, "port: %s\n", ctxc_error_message(&err));
        return 1;
    }
    ctxc_posix_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ca_file = ca;
    cfg.connect_timeout_ms = 60000; /* not under test: a handshake under TSan on
                                       a busy machine takes seconds */
    cfg.entropy = ctxc_posix_entropy;
    if (ctxc_posix_transport_init(&net, &cfg, &err) != CTXC_OK) {
        fprintf(stderr, "transport: %s\n", ctxc_error_message(&err));
        return 1;
    }
    pp.port.transport = ctxc_posix_transport(&net);
    ctxc_settings_init(&set, NULL);
    if (ctxc_settings_set(&set, "context-limit", "1000000", &err) != CTXC_OK ||
        ctxc_settings_set(&set, "compression.strategy", "middle-out", &err) !=
            CTXC_OK ||
        ctxc_session_init(&sess, &hist, &work, &set, &err) != CTXC_OK) {
        fprintf(stderr, "session: %s\n", ctxc_error_message(&err));
        return 1;
    }
    ctxc_session_set_port(&sess, &pp.port);
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    for (int i = 0; i < 40; i++) { /* an earlier conversation */
        char text[96];
        snprintf(text, sizeof text, "earlier message %d of the conversation",
                 i);
        ctxc_block_t b;
        memset(&b, 0, sizeof b);
        b.type = CTXC_BLOCK_TEXT;
        b.u.text.text = ctxc_str(text);
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b,
                              1, CTXC_STR_ABSENT};
        if (ctxc_session_add(&sess, &in, &err) != CTXC_OK) {
            fprintf(stderr, "add: %s\n", ctxc_error_message(&err));
            return 1;
        }
    }
    pthread_t a, b;
    pthread_create(&a, NULL, voice, NULL);
    pthread_create(&b, NULL, compressor, NULL);
    pthread_join(b, NULL);
    pthread_join(a, NULL);
    /* the turns in order (the later jobs summarised earlier turns, the
     * rest are there as they arrived), every turn after the last summary
     * contiguous up to the last one appended */
    size_t n = ctxc_history_count(&hist);
    size_t last_sum = n;
    for (size_t i = 0; i < n; i++) {
        ctxc_entry_t e;
        ctxc_history_get(&hist, i, &e);
        if (e.flags & CTXC_ENTRY_IS_SUMMARY) {
            last_sum = i;
        }
    }
    int prev = -1, summaries = 0, kept = 0;
    bool after_summary = false;
    for (size_t i = 0; i < n; i++) {
        ctxc_entry_t e;
        ctxc_block_t blk;
        ctxc_history_get(&hist, i, &e);
        if (e.flags & CTXC_ENTRY_IS_SUMMARY) {
            summaries++;
            after_summary = i == last_sum;
            prev = after_summary ? -1 : prev;
            continue;
        }
        if (ctxc_entry_block(&e, 0, &blk) != CTXC_OK ||
            blk.type != CTXC_BLOCK_TEXT) {
            continue;
        }
        int got;
        if (sscanf(blk.u.text.text.ptr, "turn %d of the", &got) == 1) {
            CHECK(got > prev, "entry %zu is turn %d after turn %d", i, got,
                  prev);
            CHECK(!after_summary || prev < 0 || got == prev + 1,
                  "entry %zu: turn %d follows turn %d (a turn lost)", i, got,
                  prev);
            prev = got;
            kept++;
        }
    }
    int want = prev + 1;
    CHECK(prev == last_turn, "the last turn kept is %d, the last appended %d",
          prev, last_turn);
    CHECK(applied == 3, "%d of 3 jobs applied", applied);
    CHECK(summaries >= 1, "no summary in the history");
    CHECK(want > 100, "only %d turns arrived", want);
    printf("tsan_job_threads: %d turns appended, %d kept in order after the "
           "summaries, %d jobs applied, %d summary entr%s, %zu entries; %s\n",
           want, kept, applied, summaries, summaries == 1 ? "y" : "ies", n,
           failures == 0 ? "ok" : "FAILED");
    ctxc_session_deinit(&sess);
    ctxc_posix_transport_deinit(&net);
    ctxc_posix_port_deinit(&pp);
    return failures == 0 ? 0 : 1;
}
