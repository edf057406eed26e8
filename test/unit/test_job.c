/*
 * The resumable compression job (ctxc_session_compress_start / _poll /
 * _cancel, include/ctxc/session.h) with a fake model that has the
 * resumable form (ctxc_llm_t start/step/cancel): its step answers "in
 * progress" a scripted number of times, then renders the request (from the
 * job's view of the history, while entries were appended meanwhile) and
 * answers a scripted text or error. Also before_send's job states
 * (compression.prefetch-threshold, compression.on-limit).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/plan.h"
#include "ctxc/prompt.h"
#include "support.h"

#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION

CTXC_HISTORY_DEFINE(hist, 128, 65536);
CTXC_HISTORY_DEFINE(ref, 128, 65536);
CTXC_WORK_DEFINE(work, 128, 16384);
static ctxc_settings_store_t set;
static ctxc_session_t sess;

/* ---- the fake model ------------------------------------------------------ */

static struct {
    int steps;          /* "in progress" answers before the end */
    uint32_t due;       /* what due_ms answers while the call runs */
    ctxc_status_t fail; /* CTXC_OK: answer */
    /* record */
    const ctxc_llm_request_t *req;
    char *out;
    size_t cap;
    int started, stepped, cancelled, completes;
    bool active;
    char rendered[16384]; /* every message of the request, joined */
    size_t rendered_len;
} fk;

static const char ANSWER[] = "<state_snapshot>the job's summary</state_snapshot>";

static ctxc_status_t grab(void *user, const char *text, size_t len) {
    (void)user;
    if (fk.rendered_len + len + 1 >= sizeof fk.rendered) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(fk.rendered + fk.rendered_len, text, len);
    fk.rendered_len += len;
    fk.rendered[fk.rendered_len] = '\0';
    return CTXC_OK;
}

static ctxc_status_t answer(const ctxc_llm_request_t *req, char *out,
                            size_t cap, size_t *len, ctxc_error_t *err) {
    fk.rendered_len = 0;
    fk.rendered[0] = '\0';
    for (size_t i = 0; i < req->message_count; i++) {
        assert_int_equal(req->message(req->src, i, grab, NULL), CTXC_OK);
        (void)grab(NULL, "\n", 1);
    }
    if (fk.fail != CTXC_OK) {
        return ctxc_error_set(err, fk.fail, "scripted failure");
    }
    assert_true(sizeof ANSWER <= cap);
    memcpy(out, ANSWER, sizeof ANSWER);
    *len = sizeof ANSWER - 1u;
    return CTXC_OK;
}

static ctxc_status_t fk_start(const ctxc_llm_t *llm,
                              const ctxc_llm_request_t *req, char *out,
                              size_t cap, ctxc_error_t *err) {
    (void)llm;
    (void)err;
    if (fk.active) {
        return CTXC_E_BUSY;
    }
    fk.started++;
    fk.active = true;
    fk.req = req;
    fk.out = out;
    fk.cap = cap;
    return CTXC_E_IN_PROGRESS;
}

static ctxc_status_t fk_step(const ctxc_llm_t *llm, size_t *len,
                             ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm;
    (void)usage;
    assert_true(fk.active);
    fk.stepped++;
    if (fk.stepped <= fk.steps) {
        return CTXC_E_IN_PROGRESS;
    }
    fk.active = false;
    return answer(fk.req, fk.out, fk.cap, len, err);
}

static void fk_cancel(const ctxc_llm_t *llm) {
    (void)llm;
    if (fk.active) {
        fk.cancelled++;
        fk.active = false;
    }
}

static uint32_t fk_due(const ctxc_llm_t *llm) {
    (void)llm;
    return fk.active ? fk.due : 0u;
}

static ctxc_status_t fk_complete(const ctxc_llm_t *llm,
                                 const ctxc_llm_request_t *req, char *out,
                                 size_t cap, size_t *len,
                                 ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm;
    (void)usage;
    fk.completes++;
    return answer(req, out, cap, len, err);
}

static const ctxc_llm_t stepping = {fk_complete, NULL,    "fake",   "fake-1",
                                    fk_start,    fk_step, fk_cancel,
                                    fk_due};
static const ctxc_llm_t blocking = {fk_complete, NULL, "fake", "fake-1",
                                    NULL,        NULL, NULL, NULL};
static const ctxc_llm_t *g_model = &stepping;

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    (void)err;
    *llm = g_model;
    return CTXC_OK;
}

/* ---- the port: a log ----------------------------------------------------- */

static char g_log[8192];

static void log_line(void *ctx, ctxc_log_level_t level, const char *msg) {
    (void)ctx;
    size_t n = strlen(g_log);
    snprintf(g_log + n, sizeof g_log - n, "%d %s\n", (int)level, msg);
}

static ctxc_port_t port;
static uint64_t g_now; /* the port clock, moved by the tests */
static uint64_t fake_clock(void *ctx) {
    (void)ctx;
    return g_now;
}

/* ---- setup --------------------------------------------------------------- */

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_history_clear(&ref);
    memset(&fk, 0, sizeof fk);
    g_model = &stepping;
    g_log[0] = '\0';
    memset(&port, 0, sizeof port);
    port.log = log_line;
    port.log_level = CTXC_LOG_DEBUG;
    ctxc_settings_init(&set, NULL);
    t_set_uint(&set, "context-limit", 100000);
    t_set(&set, "compression.strategy", "middle-out");
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    ctxc_session_set_port(&sess, &port);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_session_compress_cancel(&sess);
    ctxc_session_deinit(&sess);
    return 0;
}

#define FILLER                                                                 \
    " one two three four five six seven eight nine ten eleven twelve "         \
    "thirteen fourteen fifteen sixteen seventeen eighteen"

static const char *text(const char *tag, size_t i) {
    static char t[8][200];
    static unsigned k;
    char *p = t[k++ % 8];
    snprintf(p, 200, "%s %zu" FILLER, tag, i);
    return p;
}

/* Entry i of both stores (the reference is what the history should be). */
static void add_both(ctxc_speaker_t sp, const char *s) {
    t_add_text(&hist, sp, s);
    t_add_text(&ref, sp, s);
}

static void alternating(size_t n) {
    for (size_t i = 0; i < n; i++) {
        add_both(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text("msg", i));
    }
}

/* A voice turn arriving while the job runs (through the session). */
static void turn(size_t i, bool also_ref) {
    ctxc_block_t b = t_text(text("turn", i));
    ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b, 1,
                          CTXC_STR_ABSENT};
    ctxc_error_t err;
    if (ctxc_session_add(&sess, &in, &err) != CTXC_OK) {
        fail_msg("add: %s", err.message);
    }
    if (also_ref) {
        t_add(&ref, in.speaker, &b, 1);
    }
}

static void start_ok(void) {
    ctxc_error_t err;
    ctxc_status_t st = ctxc_session_compress_start(&sess, &err);
    if (st != CTXC_OK) {
        fail_msg("start: %s: %s", ctxc_status_name(st), err.message);
    }
}

static void assert_same(const ctxc_history_t *a, const ctxc_history_t *b) {
    static t_dump_t da, db;
    t_dump(a, &da);
    t_dump(b, &db);
    assert_string_equal(da.buf, db.buf);
}

static const char *text_at(size_t i) { return t_block_text(&hist, i, 0); }

/* ---- the job ------------------------------------------------------------- */

/* Turns appended while the summary is made stay after the result, in
 * order; the request holds the job's range only. */
static void test_appends_kept_after_the_result(void **state) {
    (void)state;
    alternating(20);
    fk.steps = 5;
    start_ok();
    assert_true(ctxc_session_job_active(&sess));
    assert_int_equal(fk.started, 1);
    ctxc_error_t err;
    ctxc_status_t st;
    size_t turns = 0, polls = 0;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
        turn(turns++, false);
        assert_true(++polls < 100);
    }
    if (st != CTXC_OK) {
        fail_msg("poll: %s: %s", ctxc_status_name(st), err.message);
    }
    assert_false(ctxc_session_job_active(&sess));
    assert_int_equal(turns, 5);
    /* 20 entries: 4 kept + summary + continuation + 4 kept, then the turns */
    assert_int_equal(ctxc_history_count(&hist), 4 + 2 + 4 + turns);
    assert_string_equal(text_at(0), text("msg", 0));
    assert_string_equal(text_at(4), ANSWER);
    assert_string_equal(text_at(6), text("msg", 16));
    for (size_t i = 0; i < turns; i++) {
        assert_string_equal(text_at(10 + i), text("turn", i));
    }
    /* the model saw the range, never a turn that arrived meanwhile */
    assert_non_null(strstr(fk.rendered, "msg 4 one"));
    assert_null(strstr(fk.rendered, "turn 0"));
    assert_true(sess.last_compress.llm_call_made);
    assert_null(sess.last_compress.fallback);
    assert_int_equal(fk.completes, 0); /* steps only */
}

/* A failed call, a cancel and a cleared history each end the job with the
 * history exactly as it is at that moment, turns included. */
static void test_failure_and_cancel_keep_history_as_it_is(void **state) {
    (void)state;
    alternating(20);
    fk.steps = 3;
    fk.fail = CTXC_E_NETWORK;
    start_ok();
    ctxc_error_t err;
    ctxc_status_t st;
    size_t turns = 0;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
        turn(turns++, true);
    }
    assert_int_equal(st, CTXC_E_NETWORK);
    assert_false(ctxc_session_job_active(&sess));
    assert_same(&hist, &ref);
    assert_non_null(strstr(g_log, "failed"));

    /* cancel mid-call: the model's call is cancelled */
    fk.fail = CTXC_OK;
    fk.stepped = 0;
    fk.steps = 100;
    start_ok();
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IN_PROGRESS);
    turn(turns++, true);
    ctxc_session_compress_cancel(&sess);
    assert_int_equal(fk.cancelled, 1);
    assert_false(ctxc_session_job_active(&sess));
    assert_same(&hist, &ref);
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IDLE);
    ctxc_session_compress_cancel(&sess); /* nothing in progress: nothing */

    /* the history cleared while the job runs: cancelled at the next poll */
    fk.stepped = 0;
    start_ok();
    ctxc_history_clear(&hist);
    turn(0, false);
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_CANCELLED);
    assert_int_equal(ctxc_history_count(&hist), 1);
    assert_false(ctxc_session_job_active(&sess));

    /* a session ended with a job in progress: cancelled, range unfrozen */
    alternating(8);
    fk.stepped = 0;
    start_ok();
    ctxc_session_deinit(&sess);
    assert_false(fk.active);
    ctxc_block_t b = t_text("edited");
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_replace(&hist, 0, &in, &err), CTXC_OK);
}

/* While a job holds [0, n): edits of the range, another compression and
 * the density step are refused with CTXC_E_BUSY and change nothing; the
 * appended entries may be edited; afterwards everything works again. */
static void test_edits_of_the_range_are_refused(void **state) {
    (void)state;
    alternating(20);
    fk.steps = 10;
    start_ok();
    turn(0, true);
    turn(1, true);
    ctxc_error_t err;
    ctxc_block_t b = t_text("edited");
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_replace(&hist, 3, &in, &err), CTXC_E_BUSY);
    assert_non_null(strstr(err.message, "compression in progress"));
    size_t idx[1] = {0};
    assert_int_equal(ctxc_history_remove(&hist, idx, 1, &err), CTXC_E_BUSY);
    assert_int_equal(ctxc_history_remove_range(&hist, 19, 21, &err),
                     CTXC_E_BUSY);
    assert_int_equal(ctxc_session_compress(&sess, &err), CTXC_E_BUSY);
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_E_BUSY);
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_E_BUSY);
    assert_same(&hist, &ref);
    /* an appended entry may change */
    assert_int_equal(ctxc_history_replace(&hist, 21, &in, &err), CTXC_OK);
    ctxc_status_t st;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
    }
    assert_int_equal(st, CTXC_OK);
    size_t n = ctxc_history_count(&hist);
    assert_string_equal(text_at(n - 1), "edited");
    assert_string_equal(text_at(n - 2), text("turn", 0));
    /* the range is free again */
    assert_int_equal(ctxc_history_replace(&hist, 0, &in, &err), CTXC_OK);
}

/* The pairing rule across the job and the appends: the range ends before
 * a tool_call whose response has not arrived, so the response that arrives
 * during the job stays with its call. */
static void test_open_tool_call_stays_out_of_the_range(void **state) {
    (void)state;
    alternating(16);
    /* a call answered later, with another call open in between */
    ctxc_block_t c1 = t_call("c1", "read", "{\"path\":\"/a\"}");
    add_both(CTXC_SPEAKER_AI, text("pre", 0));
    t_add(&hist, CTXC_SPEAKER_AI, &c1, 1);
    t_add(&ref, CTXC_SPEAKER_AI, &c1, 1);
    size_t call_at = ctxc_history_count(&hist) - 1u;
    add_both(CTXC_SPEAKER_HUMAN, text("msg", 100));
    add_both(CTXC_SPEAKER_AI, text("msg", 101));
    fk.steps = 2;
    start_ok();
    /* the range [0, n) ends before the open call */
    assert_true(sess.job_.snapshot <= call_at);
    ctxc_block_t r1 = t_resp("c1", "read", "{\"text\":\"A\"}", NULL);
    ctxc_entry_in_t in = {CTXC_SPEAKER_TOOL, &r1, 1, CTXC_STR_ABSENT};
    ctxc_error_t err;
    assert_int_equal(ctxc_session_add(&sess, &in, &err), CTXC_OK);
    ctxc_status_t st;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
    }
    if (st != CTXC_OK) {
        fail_msg("poll: %s: %s", ctxc_status_name(st), err.message);
    }
    ctxc_history_stats_t hs;
    ctxc_history_stats(&hist, &hs);
    assert_int_equal(hs.tool_calls, 1);
    assert_int_equal(hs.tool_responses, 1);
    assert_int_equal(hs.unpaired_calls, 0);
    assert_int_equal(hs.unpaired_responses, 0);
}

/* A call whose result never came (an interrupted tool) at the start of a
 * long conversation: three human turns after it, it no longer holds the
 * job's range back, and the job compresses; a call still waiting (no
 * three turns after it yet) with too little before it: the job changes
 * nothing and says why. */
static void test_an_abandoned_call_does_not_stop_compression(void **state) {
    (void)state;
    ctxc_block_t c1 = t_call("c1", "lights", "{\"room\":\"hall\"}");
    add_both(CTXC_SPEAKER_HUMAN, text("msg", 0));
    t_add(&hist, CTXC_SPEAKER_AI, &c1, 1);
    t_add(&ref, CTXC_SPEAKER_AI, &c1, 1);
    alternating(2);
    /* waiting: one human turn after it; the range ends before it */
    fk.steps = 0;
    start_ok();
    assert_int_equal(sess.job_.snapshot, 1);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_OK);
    assert_true(sess.last_compress.unchanged);
    assert_non_null(strstr(sess.last_compress.unchanged_reason,
                           "waiting for its result"));
    assert_int_equal(fk.started, 0); /* too little to ask the model */
    /* three human turns after it: abandoned, the job compresses */
    alternating(16);
    start_ok();
    assert_int_equal(sess.job_.snapshot, ctxc_history_count(&hist));
    ctxc_status_t st;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
    }
    assert_int_equal(st, CTXC_OK);
    assert_false(sess.last_compress.unchanged);
    assert_int_equal(fk.started, 1);
}

/* A model without the resumable form makes its call inside one poll; a
 * strategy without an LLM plans at start and applies at the first poll,
 * turns appended in between kept. */
static void test_blocking_model_and_llm_free_strategy(void **state) {
    (void)state;
    alternating(20);
    g_model = &blocking;
    start_ok();
    turn(0, false);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_OK);
    assert_int_equal(fk.completes, 1);
    size_t n = ctxc_history_count(&hist);
    assert_string_equal(text_at(n - 1), text("turn", 0));

    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set_uint(&set, "context-limit", 300);
    start_ok();
    turn(1, false);
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_OK);
    n = ctxc_history_count(&hist);
    assert_string_equal(text_at(n - 1), text("turn", 1));
    assert_string_equal(text_at(n - 2), text("turn", 0));
}

/* ---- pinned entries and the fact check in the job (issue 28) ------------- */

/* 20 entries; entry 6 pinned, entry 8 names `frob_widget` (an anchor the
 * fake's summary lacks). */
static void pinned_and_anchored(void) {
    for (size_t i = 0; i < 20; i++) {
        char t[256];
        snprintf(t, sizeof t, "%s%s", text("msg", i),
                 i == 8 ? " and then `frob_widget` broke" : "");
        add_both(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, t);
    }
    ctxc_error_t err;
    assert_int_equal(ctxc_history_pin(&hist, 6, true, &err), CTXC_OK);
    assert_int_equal(ctxc_history_pin(&ref, 6, true, &err), CTXC_OK);
}

static void poll_to_end(void) {
    ctxc_error_t err;
    ctxc_status_t st;
    size_t polls = 0;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
        assert_true(++polls < 100);
    }
    if (st != CTXC_OK) {
        fail_msg("poll: %s: %s", ctxc_status_name(st), err.message);
    }
}

/* compression.factCheck retry in the job: the second summary call is
 * started by the job (start/step, never a blocking call inside a poll),
 * its request names the missing fact; the fact still missing from the
 * second answer is appended. The pinned entry of the range is not sent,
 * is kept verbatim after the summary pair, and cannot be unpinned (nor
 * another entry of the range pinned) while the job runs; an entry appended
 * meanwhile can be pinned. */
static void test_job_pins_and_fact_check_retry(void **state) {
    (void)state;
    pinned_and_anchored();
    t_set(&set, "compression.factCheck", "retry");
    fk.steps = 2;
    start_ok();
    ctxc_error_t err;
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IN_PROGRESS);
    assert_int_equal(ctxc_history_pin(&hist, 6, false, &err), CTXC_E_BUSY);
    assert_int_equal(ctxc_history_pin(&hist, 5, true, &err), CTXC_E_BUSY);
    turn(0, false);
    size_t appended = ctxc_history_count(&hist) - 1;
    assert_int_equal(ctxc_history_pin(&hist, appended, true, &err), CTXC_OK);
    poll_to_end();
    assert_int_equal(fk.started, 2); /* the retry: a second started call */
    assert_int_equal(fk.completes, 0);
    /* the second request named what the first answer lacked */
    assert_non_null(strstr(fk.rendered, "left out these facts"));
    assert_non_null(strstr(fk.rendered, "frob_widget"));
    assert_null(strstr(fk.rendered, "msg 6 one")); /* pinned: not sent */
    assert_true(sess.last_compress.fact_retry_made);
    assert_true(sess.last_compress.anchors_missing >= 1);
    assert_true(sess.last_compress.anchors_added >= 1);
    /* 4 kept, summary (+ section), continuation, the pinned 6, 4 kept,
     * the turn */
    assert_int_equal(ctxc_history_count(&hist), 4 + 2 + 1 + 4 + 1);
    assert_non_null(strstr(text_at(4), "frob_widget"));
    assert_string_equal(text_at(6), text("msg", 6));
    assert_string_equal(text_at(7), text("msg", 16));
    assert_string_equal(text_at(11), text("turn", 0));
    assert_non_null(strstr(g_log, "asking the model once more"));

    /* a model without the resumable form: both calls in one poll */
    ctxc_history_clear(&hist);
    ctxc_history_clear(&ref);
    pinned_and_anchored();
    g_model = &blocking;
    memset(&sess.last_compress, 0, sizeof sess.last_compress);
    start_ok();
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_OK);
    assert_int_equal(fk.completes, 2);
    assert_true(sess.last_compress.fact_retry_made);
    assert_string_equal(text_at(6), text("msg", 6));

    /* append (the default): one call, the section appended */
    ctxc_history_clear(&hist);
    ctxc_history_clear(&ref);
    pinned_and_anchored();
    t_set(&set, "compression.factCheck", "append");
    g_model = &stepping;
    fk.started = 0;
    start_ok();
    poll_to_end();
    assert_int_equal(fk.started, 1);
    assert_false(sess.last_compress.fact_retry_made);
    assert_true(sess.last_compress.anchors_added >= 1);
    assert_non_null(strstr(text_at(4), "frob_widget"));
    assert_string_equal(text_at(6), text("msg", 6));
}

/* A failed retry call ends the job like a failed first call: the history
 * as it is, nothing applied. */
static void test_job_failed_retry_changes_nothing(void **state) {
    (void)state;
    pinned_and_anchored();
    t_set(&set, "compression.factCheck", "retry");
    start_ok();
    ctxc_error_t err;
    /* the first call answers at the first step */
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IN_PROGRESS);
    assert_int_equal(fk.started, 2);
    fk.fail = CTXC_E_NETWORK;
    ctxc_status_t st;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
    }
    assert_int_equal(st, CTXC_E_NETWORK);
    assert_false(ctxc_session_job_active(&sess));
    assert_same(&hist, &ref);
}

/* ---- before_send ---------------------------------------------------------- */

/* compression.prefetch-threshold: before_send starts the job and returns
 * at once; the next ones poll it; the result is applied by one of them. */
static void test_before_send_prefetch(void **state) {
    (void)state;
    alternating(20); /* 20 x 26 = 520 tokens or so */
    uint64_t tokens = ctxc_history_tokens(&hist);
    t_set_uint(&set, "context-limit", tokens * 2);
    t_set(&set, "compression-threshold", "0.9");
    t_set(&set, "compression.prefetch-threshold", "0.4");
    fk.steps = 2;
    ctxc_send_report_t rep;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_STARTED);
    assert_false(rep.compressed);
    assert_true(ctxc_session_job_active(&sess));
    assert_int_equal(fk.stepped, 0); /* nothing waited for */
    turn(0, false);
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_RUNNING);
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_RUNNING);
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_APPLIED);
    assert_true(rep.compressed);
    assert_false(ctxc_session_job_active(&sess));
    size_t n = ctxc_history_count(&hist);
    assert_string_equal(text_at(n - 1), text("turn", 0));
    assert_true(rep.tokens_after < tokens);
    /* under the prefetch threshold: nothing */
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_NONE);
}

/* compression.on-limit at the threshold with the summary not there:
 * top-down-truncation cancels the job and compresses at once (reported in
 * the report, the metadata and the log); wait polls the job to its end. */
/* 20 alternating entries at 50 % of a context limit of twice their
 * tokens (threshold 0.9, prefetch 0.4, on-limit `on_limit`): a before_send
 * of nothing starts the job, which the fake model keeps in flight; answers
 * the history's tokens (a message of that size crosses the threshold). */
static uint64_t job_in_flight(const char *on_limit) {
    alternating(20);
    uint64_t tokens = ctxc_history_tokens(&hist);
    t_set_uint(&set, "context-limit", tokens * 2);
    t_set(&set, "compression-threshold", "0.9");
    t_set(&set, "compression.prefetch-threshold", "0.4");
    t_set(&set, "compression.on-limit", on_limit);
    fk.steps = 1000;
    ctxc_send_report_t rep;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_STARTED);
    return tokens;
}

static void test_before_send_on_limit(void **state) {
    (void)state;
    uint64_t tokens = job_in_flight("top-down-truncation");
    ctxc_send_report_t rep;
    ctxc_error_t err;
    /* a long message pushes past the threshold */
    ctxc_status_t st = ctxc_session_before_send(&sess, tokens, &rep, &err);
    if (st != CTXC_OK) {
        fail_msg("before_send: %s: %s", ctxc_status_name(st), err.message);
    }
    assert_int_equal(rep.job, CTXC_SEND_JOB_FALLBACK);
    assert_string_equal(rep.fallback, "top-down-truncation");
    assert_int_equal(rep.trigger, CTXC_LIMIT_TOKENS);
    /* the history alone (half the limit) is under top-down-truncation's
     * target (0.54 of it): it ran and changed nothing, and says so */
    assert_false(rep.compressed);
    assert_true(sess.last_compress.unchanged);
    assert_int_equal(fk.cancelled, 1);
    assert_false(ctxc_session_job_active(&sess));
    assert_non_null(sess.last_compress.fallback);
    assert_int_equal(sess.last_compress.strategy,
                     CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    assert_non_null(strstr(g_log, "1 before_send: fallback to "
                                  "top-down-truncation"));

    /* wait: the job is polled to its end inside before_send */
    ctxc_history_clear(&hist);
    alternating(20);
    t_set(&set, "compression.on-limit", "wait");
    memset(&fk, 0, sizeof fk);
    fk.steps = 3;
    st = ctxc_session_before_send(&sess, tokens, &rep, &err);
    if (st != CTXC_OK) {
        fail_msg("before_send: %s: %s", ctxc_status_name(st), err.message);
    }
    assert_int_equal(rep.job, CTXC_SEND_JOB_WAITED);
    assert_true(rep.compressed);
    assert_int_equal(fk.stepped, 4);
    assert_string_equal(text_at(4), ANSWER);
    assert_false(ctxc_session_job_active(&sess));
}

/* The port's stop hook (a "stop" button, Ctrl-C) while before_send waits
 * for the job (compression.on-limit wait): the job and its call are
 * cancelled, before_send answers CTXC_E_CANCELLED and the history is as it
 * was. The hook here says stop once the model has been stepped a few
 * times (the summary would take 1000 steps). */
static bool stop_after_some_steps(void *ctx) {
    (void)ctx;
    return fk.stepped >= 5;
}

static void test_before_send_wait_stopped_by_the_port(void **state) {
    (void)state;
    uint64_t tokens = job_in_flight("wait");
    ctxc_send_report_t rep;
    ctxc_error_t err;
    /* past the threshold: before_send waits for the job, and is stopped */
    port.stop = stop_after_some_steps;
    ctxc_status_t st = ctxc_session_before_send(&sess, tokens, &rep, &err);
    port.stop = NULL;
    assert_int_equal(st, CTXC_E_CANCELLED);
    assert_non_null(strstr(err.message, "stopped"));
    assert_int_equal(rep.job, CTXC_SEND_JOB_FAILED);
    assert_false(rep.compressed);
    assert_false(fk.active); /* the model's call was cancelled */
    assert_false(ctxc_session_job_active(&sess));
    assert_same(&hist, &ref);
    /* the next call goes on as usual: a job started early, waited for */
    memset(&fk, 0, sizeof fk);
    fk.steps = 2;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    st = ctxc_session_before_send(&sess, tokens, &rep, &err);
    assert_int_equal(st, CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_WAITED);
}

/* ---- waiting without sleeping (issue 38 points 2 and 4) ------------------ */

/* A transport whose wait finds nothing (the time passes), and a delay hook:
 * both move the port clock. */
static void idle_wait(void *ctx, uint32_t ms) {
    (void)ctx;
    g_now += ms;
}
static void clock_delay(void *ctx, uint32_t ms) {
    (void)ctx;
    g_now += ms;
}
static const ctxc_transport_ops_t idle_ops = {.wait = idle_wait};

/* before_send at the limit waits for the job: not at all while the model
 * says it can move at once, a slice in the transport per step while it
 * waits for the network; ctxc_session_poll_due says which. */
static void test_waiting_without_sleeping(void **state) {
    (void)state;
    port.clock = fake_clock;
    port.transport.ops = &idle_ops;
    port.delay_ms = clock_delay;
    g_now = 1000;
    ctxc_send_report_t rep;
    ctxc_error_t err;
    uint32_t ms = 7;
    assert_int_equal(ctxc_session_poll_due(&sess, &ms), CTXC_POLL_IDLE);
    assert_int_equal(ms, 0);
    uint64_t tokens = job_in_flight("wait");
    /* the model can move at once: no time passes while waiting for it */
    fk.due = 0;
    assert_int_equal(ctxc_session_poll_due(&sess, &ms), CTXC_POLL_NOW);
    fk.steps = fk.stepped + 6;
    uint64_t t0 = g_now;
    assert_int_equal(ctxc_session_before_send(&sess, tokens, &rep, &err),
                     CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_WAITED);
    assert_int_equal(g_now - t0, 0);
    /* the model waits for the network: one slice in the transport's wait
     * before each poll but the first */
    setup(NULL);
    port.clock = fake_clock;
    port.transport.ops = &idle_ops;
    port.delay_ms = clock_delay;
    tokens = job_in_flight("wait");
    fk.due = CTXC_LLM_DUE_NETWORK;
    assert_int_equal(ctxc_session_poll_due(&sess, &ms), CTXC_POLL_ON_NETWORK);
    int polls0 = fk.stepped;
    fk.steps = fk.stepped + 4;
    t0 = g_now;
    assert_int_equal(ctxc_session_before_send(&sess, tokens, &rep, &err),
                     CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_WAITED);
    int polls = fk.stepped - polls0;
    assert_int_equal(g_now - t0, (uint64_t)(polls - 1) * CTXC_HTTP_WAIT_SLICE_MS);
    /* a retry's pause: the time it names */
    setup(NULL);
    (void)job_in_flight("wait");
    fk.due = 1234;
    assert_int_equal(ctxc_session_poll_due(&sess, &ms), CTXC_POLL_AFTER);
    assert_int_equal(ms, 1234);
    /* a model without due_ms: poll at once */
    ctxc_session_compress_cancel(&sess);
    g_model = &blocking;
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    assert_int_equal(ctxc_session_poll_due(&sess, &ms), CTXC_POLL_NOW);
}

/* ---- polling without a job; err after an answer that is not a failure -- */

static const ctxc_error_t SENTINEL = {CTXC_E_RANGE, 77, 5,
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
                                      "left by an earlier call"
#endif
};

static void assert_untouched(const ctxc_error_t *err) {
    assert_memory_equal(err, &SENTINEL, sizeof SENTINEL);
}

/* ctxc_session_poll() with no job answers CTXC_E_IDLE (before any job,
 * after one ended, after a cancel), changes nothing and leaves err as it
 * was; so do a poll that answers CTXC_E_IN_PROGRESS and the one that
 * applies the result (CTXC_OK). */
static void test_poll_without_a_job_is_idle(void **state) {
    (void)state;
    alternating(20);
    ctxc_error_t err = SENTINEL;
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IDLE);
    assert_untouched(&err);
    assert_int_equal(ctxc_session_poll(&sess, NULL), CTXC_E_IDLE);
    assert_same(&hist, &ref);
    assert_null(strstr(g_log, "compression job"));
    assert_string_equal(ctxc_status_name(CTXC_E_IDLE), "CTXC_E_IDLE");
    assert_non_null(strstr(ctxc_strerror(CTXC_E_IDLE), "no job"));

    fk.steps = 2;
    start_ok();
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IN_PROGRESS);
    assert_untouched(&err);
    ctxc_status_t st;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
    }
    assert_int_equal(st, CTXC_OK);
    assert_untouched(&err);
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IDLE);
    assert_untouched(&err);

    /* after a cancel */
    fk.stepped = 0;
    fk.steps = 50;
    start_ok();
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IN_PROGRESS);
    ctxc_session_compress_cancel(&sess);
    assert_int_equal(ctxc_session_poll(&sess, &err), CTXC_E_IDLE);
    assert_untouched(&err);
    /* a NULL session is still a bad argument */
    assert_int_equal(ctxc_session_poll(NULL, &err), CTXC_E_INVALID_ARG);
}

/* A filesystem without the prompt files: every level's read answers
 * CTXC_E_NOT_FOUND with a message, and the built-in prompt is used. */
static ctxc_status_t no_file(void *ctx, const char *path, char *buf, size_t cap,
                             size_t *len, ctxc_error_t *err) {
    (void)ctx;
    (void)buf;
    (void)cap;
    *len = 0;
    return ctxc_error_set(err, CTXC_E_NOT_FOUND, "%s: no such file", path);
}
static const ctxc_fs_ops_t no_files = {.read = no_file};

/* The built-in prompt fallback is not an error: a compression that found
 * no prompt file (the blocking call, a job's start and poll) returns
 * CTXC_OK and leaves err as it was (it used to carry the last level's
 * NOT_FOUND message); ctxc_prompt_resolve() alone too. */
static void test_builtin_prompt_leaves_err_alone(void **state) {
    (void)state;
    port.fs.ops = &no_files;
    alternating(20);
    ctxc_error_t err = SENTINEL;
    assert_int_equal(ctxc_session_compress(&sess, &err), CTXC_OK);
    assert_untouched(&err);
    assert_string_equal(text_at(4), ANSWER);
    assert_int_equal(fk.completes, 1);

    ctxc_history_clear(&hist);
    alternating(20);
    fk.steps = 1;
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    assert_untouched(&err);
    ctxc_status_t st;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
    }
    assert_int_equal(st, CTXC_OK);
    assert_untouched(&err);

    static char buf[256];
    ctxc_prompt_t p;
    assert_int_equal(ctxc_prompt_resolve(&port.fs, "openai", "gpt-x",
                                         "compression/middle-out", buf,
                                         sizeof buf, &p, &err),
                     CTXC_OK);
    assert_untouched(&err);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BUILTIN);
    /* a read that fails otherwise is still reported */
    assert_int_equal(ctxc_prompt_resolve(&port.fs, "openai", "gpt-x",
                                         "compression/no-such", buf, sizeof buf,
                                         &p, &err),
                     CTXC_E_PROMPT_NOT_FOUND);
    assert_int_equal(err.status, CTXC_E_PROMPT_NOT_FOUND);
}

/* ctxc_session_add_room() into a full history: the first append's
 * NO_SPACE is why room is made, not an error of the call, which returns
 * CTXC_OK and leaves err as it was; so does the poll of a job that fails
 * inside it (the room then made without the network). */
static void test_add_room_leaves_err_alone(void **state) {
    (void)state;
    alternating(128); /* every slot used */
    ctxc_block_t b = t_text(text("late", 0));
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    ctxc_send_report_t rep;
    ctxc_error_t err = SENTINEL;
    assert_int_equal(ctxc_session_add_room(&sess, &in, &rep, &err), CTXC_OK);
    assert_untouched(&err);
    assert_true(rep.compressed);

    /* full again, with a job whose poll fails inside add_room */
    size_t i = 0;
    while (ctxc_history_count(&hist) < 128) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                   text("more", i));
        i++;
    }
    fk.steps = 0;
    fk.fail = CTXC_E_NETWORK;
    start_ok();
    assert_int_equal(ctxc_session_add_room(&sess, &in, &rep, &err), CTXC_OK);
    assert_untouched(&err);
    assert_false(ctxc_session_job_active(&sess));
    assert_non_null(strstr(g_log, "failed"));
}

/* ---- a failed background job never costs a turn (issue 38 point 3) ----- */


/* before_send(0) until the job in flight has ended; the calls all answer
 * CTXC_OK; the report of the one that ended it. */
static ctxc_send_report_t send_until_job_ends(void) {
    ctxc_send_report_t rep;
    ctxc_error_t err;
    for (int i = 0; i < 20; i++) {
        memset(&err, 0, sizeof err);
        assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err),
                         CTXC_OK);
        assert_int_equal(err.status, CTXC_OK); /* untouched */
        if (!ctxc_session_job_active(&sess)) {
            return rep;
        }
    }
    fail_msg("the job did not end in 20 calls");
    return rep;
}

static void test_a_failed_job_costs_no_turn(void **state) {
    (void)state;
    port.clock = fake_clock;
    g_now = 1000;
    uint64_t tokens = job_in_flight("wait");
    fk.steps = 2;
    fk.fail = CTXC_E_HTTP_STATUS; /* the provider is down */
    ctxc_send_report_t rep = send_until_job_ends();
    assert_int_equal(rep.job, CTXC_SEND_JOB_FAILED);
    assert_int_equal(rep.job_status, CTXC_E_HTTP_STATUS);
    assert_false(rep.compressed);
    assert_same(&hist, &ref); /* the turn and the history are kept */
    assert_non_null(strstr(g_log, "compression job failed"));
    ctxc_job_health_t h;
    ctxc_session_job_health(&sess, &h);
    assert_int_equal(h.failures, 1);
    assert_int_equal(h.last, CTXC_E_HTTP_STATUS);
    assert_int_equal(h.retry_in_ms, 5000);
    assert_false(h.cooling_down);
    /* the backoff: no new job before it has passed */
    ctxc_error_t err;
    g_now += 4999;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_NONE);
    assert_int_equal(fk.started, 1);
    /* then one, failing again: 10 s; a third: the cooldown (300 s) */
    uint64_t waits[2] = {1, 10000};
    for (int k = 0; k < 2; k++) {
        g_now += waits[k];
        assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err),
                         CTXC_OK);
        assert_int_equal(rep.job, CTXC_SEND_JOB_STARTED);
        rep = send_until_job_ends();
        assert_int_equal(rep.job, CTXC_SEND_JOB_FAILED);
    }
    assert_int_equal(fk.started, 3);
    ctxc_session_job_health(&sess, &h);
    assert_int_equal(h.failures, 3);
    assert_true(h.cooling_down);
    assert_int_equal(h.retry_in_ms, 300000);
    /* at the threshold during the cooldown: the network-free fallback keeps
     * the limit, the model is not asked */
    g_now += 1000;
    assert_int_equal(ctxc_session_before_send(&sess, tokens, &rep, &err),
                     CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_FALLBACK);
    assert_string_equal(rep.fallback, "top-down-truncation");
    assert_int_equal(fk.started, 3);
    assert_non_null(sess.last_compress.fallback);
    /* the cooldown over and the provider back: a job, and it succeeds */
    g_now += 300000;
    fk.fail = CTXC_OK;
    alternating(20);
    t_set_uint(&set, "context-limit", ctxc_history_tokens(&hist) * 2);
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_STARTED);
    rep = send_until_job_ends();
    assert_int_equal(rep.job, CTXC_SEND_JOB_APPLIED);
    ctxc_session_job_health(&sess, &h);
    assert_int_equal(h.failures, 0);
    assert_int_equal(h.last, CTXC_OK);
    assert_int_equal(h.retry_in_ms, 0);
}

/* The limit needs the summary (on-limit wait) and its job fails: the
 * network-free fallback keeps the limit and the call answers CTXC_OK,
 * with the job's status in the report. */
static void test_a_failed_job_at_the_limit_falls_back(void **state) {
    (void)state;
    port.clock = fake_clock;
    g_now = 1000;
    uint64_t tokens = job_in_flight("wait");
    fk.steps = 3;
    fk.fail = CTXC_E_NETWORK;
    ctxc_send_report_t rep;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_before_send(&sess, tokens, &rep, &err),
                     CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_FALLBACK);
    assert_int_equal(rep.job_status, CTXC_E_NETWORK);
    assert_string_equal(rep.fallback, "top-down-truncation");
    assert_false(ctxc_session_job_active(&sess));
    ctxc_job_health_t h;
    ctxc_session_job_health(&sess, &h);
    assert_int_equal(h.failures, 1);
    assert_int_equal(h.last, CTXC_E_NETWORK);
}

/* Without a port clock the waits cannot be timed: after
 * compression.failure-limit failures no job starts (the fallback keeps the
 * limits) until a blocking compression with the model succeeds. */
static void test_failures_without_a_clock(void **state) {
    (void)state;
    t_set(&set, "compression.failure-limit", "1");
    uint64_t tokens = job_in_flight("wait");
    (void)tokens;
    fk.steps = 1;
    fk.fail = CTXC_E_TIMEOUT;
    (void)send_until_job_ends();
    ctxc_job_health_t h;
    ctxc_session_job_health(&sess, &h);
    assert_true(h.cooling_down);
    ctxc_send_report_t rep;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.job, CTXC_SEND_JOB_NONE);
    fk.fail = CTXC_OK;
    g_model = &blocking;
    assert_int_equal(ctxc_session_compress(&sess, &err), CTXC_OK);
    ctxc_session_job_health(&sess, &h);
    assert_int_equal(h.failures, 0);
}

#endif

int main(void) {
#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_appends_kept_after_the_result,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_failure_and_cancel_keep_history_as_it_is, setup, teardown),
        cmocka_unit_test_setup_teardown(test_edits_of_the_range_are_refused,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_open_tool_call_stays_out_of_the_range, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_blocking_model_and_llm_free_strategy, setup, teardown),
        cmocka_unit_test_setup_teardown(test_job_pins_and_fact_check_retry,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_before_send_wait_stopped_by_the_port, setup, teardown),
        cmocka_unit_test_setup_teardown(test_poll_without_a_job_is_idle, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_builtin_prompt_leaves_err_alone,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_add_room_leaves_err_alone, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_job_failed_retry_changes_nothing,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_before_send_prefetch, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_an_abandoned_call_does_not_stop_compression, setup, teardown),
        cmocka_unit_test_setup_teardown(test_waiting_without_sleeping, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_a_failed_job_costs_no_turn, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_a_failed_job_at_the_limit_falls_back, setup, teardown),
        cmocka_unit_test_setup_teardown(test_failures_without_a_clock, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_before_send_on_limit, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    return 0;
#endif
}
