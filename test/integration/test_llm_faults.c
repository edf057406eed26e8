/*
 * Fault injection on the LLM path (issue 16): a middle-out compression
 * through the session, the provider client and the real POSIX TLS
 * transport against the fixture server, with the transport wrapped so that
 * the n-th call of one kind fails — connect (CTXC_E_NETWORK), send and recv
 * (a reset: CTXC_TRANSPORT_ERROR), recv "try again" forever (a stall past
 * the read timeout) — for n = 1, 2, ... until the compression runs
 * through; and the clock jumping while the call runs.
 *
 * After each faulted run: the call failed with a typed error and the
 * history is byte-identical, or (a fault the retries absorbed) it is the
 * compressed history; the next run without faults succeeds and gives the
 * same history as the reference run. The suite prints the counts.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"
#include "fixture.h"

static fixture_t fx;
static const char *ca_path = fx.ca;
static unsigned port_good;

static int load_fixture(void **state) {
    (void)state;
    if (fixture_load(&fx, "test_llm_faults", "good", NULL) != 0) {
        return -1;
    }
    port_good = fixture_port(&fx, "good");
    return 0;
}

/* ---- the transport with faults ------------------------------------------- */

typedef enum { TF_CONNECT, TF_SEND, TF_RECV, TF_STALL, TF_KINDS } tf_kind_t;

static const char *const tf_names[TF_KINDS] = {"connect", "send",
                                               "recv (reset)", "recv (stall)"};

typedef struct {
    ctxc_transport_t inner;
    tf_kind_t kind;
    unsigned nth;
    unsigned calls[TF_KINDS];
    bool fired;
    bool stalling;
} tf_t;

static bool tf_hit(tf_t *f, tf_kind_t k) {
    f->calls[k]++;
    if (f->nth != 0 && f->kind == k && f->calls[k] == f->nth) {
        f->fired = true;
        return true;
    }
    return false;
}

static ctxc_status_t tf_connect(void *ctx, const char *host, uint16_t port,
                                bool tls, ctxc_error_t *err) {
    tf_t *f = ctx;
    f->stalling = false;
    if (tf_hit(f, TF_CONNECT)) {
        return ctxc_error_set(err, CTXC_E_NETWORK,
                              "%s: injected connect failure", host);
    }
    return f->inner.ops->connect(f->inner.ctx, host, port, tls, err);
}

static int32_t tf_send(void *ctx, const uint8_t *data, size_t len) {
    tf_t *f = ctx;
    if (tf_hit(f, TF_SEND)) {
        return CTXC_TRANSPORT_ERROR;
    }
    return f->inner.ops->send(f->inner.ctx, data, len);
}

static int32_t tf_recv(void *ctx, uint8_t *buf, size_t cap) {
    tf_t *f = ctx;
    if (f->stalling) {
        return 0; /* the peer went silent */
    }
    if (tf_hit(f, TF_RECV)) {
        return CTXC_TRANSPORT_ERROR;
    }
    f->calls[TF_STALL]++;
    if (f->nth != 0 && f->kind == TF_STALL && f->calls[TF_STALL] == f->nth) {
        f->fired = true;
        f->stalling = true;
        return 0;
    }
    return f->inner.ops->recv(f->inner.ctx, buf, cap);
}

static void tf_close(void *ctx) {
    tf_t *f = ctx;
    f->inner.ops->close(f->inner.ctx);
}

static ctxc_status_t tf_connect_poll(void *ctx, ctxc_error_t *err) {
    tf_t *f = ctx;
    return f->inner.ops->connect_poll(f->inner.ctx, err);
}

static void tf_wait(void *ctx, uint32_t ms) {
    tf_t *f = ctx;
    f->inner.ops->wait(f->inner.ctx, ms);
}

static const ctxc_transport_ops_t tf_ops = {
    tf_connect,      tf_send, tf_recv, tf_close,
    tf_connect_poll, tf_wait, NULL /* last_error */};

/* ---- the world ----------------------------------------------------------- */

CTXC_HISTORY_DEFINE(hist, 128, 1u << 17);
CTXC_WORK_DEFINE(work, 128, 1u << 15);
static ctxc_settings_store_t settings;
static ctxc_session_t sess;
static ctxc_posix_port_t pp;
static ctxc_posix_transport_t net;
static ctxc_provider_client_t client;
static ctxc_provider_binding_t binding;
static tf_t tf;
static ctxc_import_t imp;

typedef struct {
    char *p;
    size_t len, cap;
} buf_t;

static ctxc_status_t buf_write(void *user, const char *data, size_t len) {
    buf_t *b = user;
    if (b->len + len > b->cap) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
    return CTXC_OK;
}

static char text_before[1 << 17], text_after[1 << 17], text_ref[1 << 17],
    text_now[1 << 17];

static size_t export_to(char *dst, size_t cap) {
    buf_t b = {dst, 0, cap};
    assert_int_equal(ctxc_export(&hist, buf_write, &b, NULL), CTXC_OK);
    return b.len;
}

/* A history of 20 turns: a middle of 12 for middle-out. */
static void fill_history(void) {
    static char jsonl[16384];
    size_t n = 0;
    for (int i = 0; i < 20; i++) {
        n += (size_t)snprintf(
            jsonl + n, sizeof jsonl - n,
            "{\"speaker\":\"%s\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"turn %d: some words about the ring buffer and its tests, "
            "repeated so that the summary is smaller than this middle, "
            "repeated so that the summary is smaller than this middle\"}]}\n",
            i % 2 ? "ai" : "human", i);
    }
    ctxc_history_clear(&hist);
    ctxc_error_t err;
    if (ctxc_import_text(&imp, &hist, jsonl, n, CTXC_FORMAT_ICONTENT, &err) !=
        CTXC_OK) {
        fail_msg("import: %s", err.message);
    }
}

static void set(const char *k, const char *v) {
    ctxc_error_t err;
    if (ctxc_settings_set(&settings, k, v, &err) != CTXC_OK) {
        fail_msg("%s=%s: %s", k, v, err.message);
    }
}

static void world(unsigned retries) {
    char base[128], r[8];
    snprintf(base, sizeof base, "https://localhost:%u/v1", port_good);
    snprintf(r, sizeof r, "%u", retries);
    ctxc_settings_init(&settings, NULL);
    set("compression.strategy", "middle-out");
    set("context-limit", "100000");
    set("provider", "openai");
    set("model", "fixture-ok");
    set("base-url", base);
    set("compression.retries", r);
    set("network.read-timeout-ms", "300");
    fill_history();
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &settings, &err),
                     CTXC_OK);
    ctxc_session_set_port(&sess, &pp.port);
    ctxc_provider_bind(&binding, &client, &settings, &pp.port, true);
    ctxc_session_set_llm_resolver(&sess, ctxc_provider_resolve, &binding);
}

static int setup(void **state) {
    (void)state;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_port_init(&pp, "/tmp", CTXC_LOG_ERROR, &err),
                     CTXC_OK);
    pp.port.delay_ms = NULL; /* retries at once: the suite stays fast */
    ctxc_posix_transport_config_t cfg = {0};
    cfg.ca_file = ca_path;
    cfg.connect_timeout_ms = FIXTURE_CONNECT_TIMEOUT_MS;
    cfg.poll_slice_ms = 20;
    cfg.entropy = ctxc_posix_entropy;
    assert_int_equal(ctxc_posix_transport_init(&net, &cfg, &err), CTXC_OK);
    memset(&tf, 0, sizeof tf);
    tf.inner = ctxc_posix_transport(&net);
    pp.port.transport.ops = &tf_ops;
    pp.port.transport.ctx = &tf;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_posix_transport_deinit(&net);
    ctxc_posix_port_deinit(&pp);
    return 0;
}

typedef struct {
    unsigned runs, injected, refused, absorbed;
} tally_t;

static void run_faults(unsigned retries, tally_t *t) {
    ctxc_error_t err;
    /* the reference run */
    world(retries);
    memset(&tf, 0, sizeof tf);
    tf.inner = ctxc_posix_transport(&net);
    t->runs++;
    if (ctxc_session_compress(&sess, &err) != CTXC_OK) {
        fail_msg("reference run: %s", err.message);
    }
    size_t ref_len = export_to(text_ref, sizeof text_ref);
    assert_int_equal(sess.last_compress.llm_call_made, true);

    for (int k = 0; k < TF_KINDS; k++) {
        for (unsigned n = 1; n < 400; n++) {
            world(retries);
            size_t before_len = export_to(text_before, sizeof text_before);
            ctxc_transport_t inner = tf.inner;
            memset(&tf, 0, sizeof tf);
            tf.inner = inner;
            tf.kind = (tf_kind_t)k;
            tf.nth = n;
            t->runs++;
            memset(&err, 0, sizeof err);
            ctxc_status_t st = ctxc_session_compress(&sess, &err);
            size_t after_len = export_to(text_after, sizeof text_after);
            if (!tf.fired) {
                if (st != CTXC_OK) {
                    fail_msg("%s #%u not reached, yet: %s", tf_names[k], n,
                             err.message);
                }
                break; /* fewer calls than n: this kind is done */
            }
            t->injected++;
            if (st == CTXC_OK) {
                t->absorbed++; /* a retry got through */
                if (after_len != ref_len ||
                    memcmp(text_after, text_ref, ref_len) != 0) {
                    fail_msg("%s #%u: success, but not the reference result",
                             tf_names[k], n);
                }
            } else {
                t->refused++;
                if (st != CTXC_E_NETWORK && st != CTXC_E_TIMEOUT &&
                    st != CTXC_E_TLS) {
                    fail_msg("%s #%u: unexpected %s (%s)", tf_names[k], n,
                             ctxc_status_name(st), err.message);
                }
                assert_true(err.message[0] != '\0');
                if (after_len != before_len ||
                    memcmp(text_after, text_before, before_len) != 0) {
                    fail_msg("%s #%u failed (%s) but changed the history",
                             tf_names[k], n, err.message);
                }
                /* the next run without faults succeeds */
                memset(tf.calls, 0, sizeof tf.calls);
                tf.nth = 0;
                t->runs++;
                if (ctxc_session_compress(&sess, &err) != CTXC_OK) {
                    fail_msg("%s #%u: the retry fails: %s", tf_names[k], n,
                             err.message);
                }
                size_t now_len = export_to(text_now, sizeof text_now);
                if (now_len != ref_len ||
                    memcmp(text_now, text_ref, ref_len) != 0) {
                    fail_msg("%s #%u: the retry gives another result",
                             tf_names[k], n);
                }
            }
        }
    }
}

static void test_every_transport_call_fails_once(void **state) {
    (void)state;
    tally_t t0 = {0, 0, 0, 0}, t2 = {0, 0, 0, 0};
    run_faults(0, &t0);
    printf("faults: llm middle-out, retries 0: %u runs, %u faults injected: "
           "%u refused (history unchanged), %u absorbed\n",
           t0.runs, t0.injected, t0.refused, t0.absorbed);
    assert_true(t0.injected >= 4);
    assert_int_equal(t0.absorbed, 0); /* no retries: every fault fails it */
    run_faults(2, &t2);
    printf("faults: llm middle-out, retries 2: %u runs, %u faults injected: "
           "%u refused (history unchanged), %u absorbed by a retry\n",
           t2.runs, t2.injected, t2.refused, t2.absorbed);
    assert_true(t2.absorbed > 0);
}

/* The clock of the port jumps back and far ahead while the call runs: the
 * same result (the read timeout is measured on the clock: a jump ahead may
 * only end the call as a timeout, with the history unchanged). */
static uint64_t jumpy(void *ctx) {
    uint64_t *c = ctx;
    (*c)++;
    return *c % 3 == 0 ? 0 : *c * 1000u; /* back to 0, or 1 s ahead */
}

static void test_clock_jumps(void **state) {
    (void)state;
    uint64_t t = 0;
    world(0);
    memset(&tf, 0, sizeof tf);
    tf.inner = ctxc_posix_transport(&net);
    pp.port.clock = jumpy;
    pp.port.clock_ctx = &t;
    ctxc_error_t err;
    size_t before_len = export_to(text_before, sizeof text_before);
    ctxc_status_t st = ctxc_session_compress(&sess, &err);
    size_t after_len = export_to(text_after, sizeof text_after);
    if (st != CTXC_OK) {
        assert_int_equal(after_len, before_len);
        assert_memory_equal(text_after, text_before, before_len);
    } else {
        assert_true(sess.last_compress.llm_call_made);
    }
    printf("faults: llm middle-out under a jumping clock: %s\n",
           ctxc_status_name(st));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_every_transport_call_fails_once,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_clock_jumps, setup, teardown),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
