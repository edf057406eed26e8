/*
 * Session / dispatcher (REQ-CS-006, REQ-HD-002, REQ-HD-001.10): the density
 * dirty flag, before_send ordering, threshold precedence, the emergency
 * path, locking, errors propagated unchanged with the history untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

CTXC_HISTORY_DEFINE(hist, 64, 32768);
CTXC_WORK_DEFINE(work, 64, 16384);
static ctxc_settings_t set;
static ctxc_session_t s;
static t_snap_t snap;

#define LINE "one two three four five six seven eight" /* 10 tokens */

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_history_set_estimator(&hist, NULL, NULL);
    ctxc_settings_defaults(&set);
    set.context_limit = 1000;
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
    set.strategy = "high-density";
#else
    set.strategy = "top-down-truncation";
#endif
    return 0;
}

static void start(void) {
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
}

static void add_text(ctxc_speaker_t sp, const char *text) {
    ctxc_block_t b = t_text(text);
    ctxc_entry_in_t in = {sp, &b, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_session_add(&s, &in, NULL), CTXC_OK);
}

static void test_defaults(void **state) {
    (void)state;
    ctxc_settings_t d;
    ctxc_settings_defaults(&d);
    assert_string_equal(d.strategy, "middle-out");
    assert_int_equal(d.threshold_ephemeral, CTXC_UNSET);
    assert_int_equal(d.threshold_profile, CTXC_UNSET);
    assert_true(d.density.read_write_pruning);
    assert_true(d.density.file_dedupe);
    assert_false(d.density.recency_pruning);
    assert_int_equal(d.density.recency_retention, 3);
}

static void test_init_rejects_a_small_work_area(void **state) {
    (void)state;
    CTXC_WORK_DEFINE(small, 8, 256);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &small, &set, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "work area"));
    assert_int_equal(ctxc_session_init(&s, NULL, &work, &set, &err),
                     CTXC_E_INVALID_ARG);
}

static void test_threshold_precedence(void **state) {
    (void)state;
    uint16_t t = 0;
    start();
    assert_int_equal(ctxc_session_threshold(&s, &t, NULL), CTXC_OK);
    assert_int_equal(t, 850); /* the strategy's trigger.default_threshold */
    set.threshold_profile = 700;
    start();
    ctxc_session_threshold(&s, &t, NULL);
    assert_int_equal(t, 700); /* profile over default */
    set.threshold_ephemeral = 500;
    start();
    ctxc_session_threshold(&s, &t, NULL);
    assert_int_equal(t, 500); /* ephemeral over profile */
    set.strategy = "nope";
    start();
    assert_int_equal(ctxc_session_threshold(&s, &t, NULL), CTXC_E_UNKNOWN_STRATEGY);
}

static void test_add_marks_the_density_step_due(void **state) {
    (void)state;
    start();
    assert_false(s.density_dirty);
    add_text(CTXC_SPEAKER_HUMAN, LINE);
    assert_true(s.density_dirty);
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(s.density_dirty); /* cleared */
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
    assert_true(r.optimized);
#endif
    assert_false(r.compressed);
    /* nothing new: the density step is skipped */
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(r.optimized);
}

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
static void test_compression_and_density_never_set_the_flag(void **state) {
    (void)state;
    start();
    for (int i = 0; i < 10; i++) {
        add_text(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, LINE);
    }
    assert_int_equal(ctxc_session_optimize(&s, NULL), CTXC_OK);
    assert_false(s.density_dirty);
    set.context_limit = 10;
    s.settings.context_limit = 10;
    s.settings.strategy = "top-down-truncation";
    assert_int_equal(ctxc_session_compress(&s, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 2);
    assert_false(s.density_dirty);
}

static void test_strategy_without_optimize_clears_the_flag(void **state) {
    (void)state;
    set.strategy = "top-down-truncation";
    start();
    add_text(CTXC_SPEAKER_HUMAN, LINE);
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(r.optimized);
    assert_false(s.density_dirty);
}

static void test_threshold_check_triggers_compress(void **state) {
    (void)state;
    set.strategy = "top-down-truncation";
    set.context_limit = 200;
    set.threshold_ephemeral = 500; /* compress above 100 tokens */
    start();
    for (int i = 0; i < 9; i++) {
        add_text(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, LINE);
    }
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 10, &r, NULL), CTXC_OK);
    assert_int_equal(r.tokens, 90);
    assert_int_equal(r.threshold_tokens, 100);
    assert_false(r.compressed); /* 90 + 10 is not above 100 */
    assert_int_equal(ctxc_session_before_send(&s, 11, &r, NULL), CTXC_OK);
    assert_true(r.compressed);
    assert_false(r.emergency);
    assert_true(r.tokens_after < 60); /* target 200 x 0.5 x 0.6 */
}

#endif

static void test_emergency_runs_the_density_step_first(void **state) {
    (void)state;
    set.context_limit = 100;
    set.threshold_ephemeral = 1000;
    start();
    for (int i = 0; i < 6; i++) {
        add_text(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, LINE);
    }
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(r.compressed);
    /* clean now, but projected over the hard limit */
    assert_int_equal(ctxc_session_before_send(&s, 50, &r, NULL), CTXC_OK);
    assert_true(r.emergency);
    assert_true(r.compressed);
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
    assert_true(r.optimized);
#endif
}

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
static void test_anchored_tokens_drive_the_check(void **state) {
    (void)state;
    set.strategy = "top-down-truncation";
    set.context_limit = 1000;
    start();
    add_text(CTXC_SPEAKER_HUMAN, LINE);
    add_text(CTXC_SPEAKER_AI, LINE);
    ctxc_history_anchor_tokens(&hist, 900); /* the provider says 900 */
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_int_equal(r.tokens, 900);
    assert_true(r.compressed); /* 900 > 850 */
}

static void test_errors_propagate_and_change_nothing(void **state) {
    (void)state;
    start();
    for (int i = 0; i < 6; i++) {
        add_text(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, LINE);
    }
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    s.settings.strategy = "middle-out"; /* registered, needs the LLM layer */
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "'middle-out' is not available in this build"));
#else
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNKNOWN_STRATEGY);
#endif
    t_assert_unchanged(&hist, &snap);
    s.settings.strategy = "one-shot";
    assert_true(ctxc_session_compress(&s, &err) != CTXC_OK);
    t_assert_unchanged(&hist, &snap);
    s.settings.strategy = "no-such-strategy";
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "'no-such-strategy'"));
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    t_assert_unchanged(&hist, &snap);
    s.settings.strategy = NULL;
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNKNOWN_STRATEGY);
    s.settings.strategy = "top-down-truncation";
    s.settings.context_limit = 0;
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "context-limit"));
    t_assert_unchanged(&hist, &snap);
}

#endif

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
static void test_no_space_in_the_work_area_changes_nothing(void **state) {
    (void)state;
    CTXC_WORK_DEFINE(tiny, 64, 256);
    set.context_limit = 10;
    assert_int_equal(ctxc_session_init(&s, &hist, &tiny, &set, NULL), CTXC_OK);
    static char big[600];
    memset(big, 'x', sizeof big - 1);
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof id, "c%d", i);
        ctxc_block_t c = t_call(id, "run_shell_command", "{\"command\":\"make\"}");
        char json[640];
        snprintf(json, sizeof json, "\"%s\"", big);
        ctxc_block_t r = t_resp(id, "run_shell_command", json, NULL);
        t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
        t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    }
    for (int i = 0; i < 8; i++) {
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, LINE);
    }
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    /* summaries of 4 results need more than 256 bytes of scratch */
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    t_assert_unchanged(&hist, &snap);
    /* no fallback: the same error again, not another strategy's result */
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_NO_SPACE);
    t_assert_unchanged(&hist, &snap);
}

/* An estimator that tries to add to the history while it is locked. */
static ctxc_status_t nested_add_status = CTXC_OK;
static uint32_t meddling_estimator(void *user, const ctxc_block_t *b) {
    ctxc_session_t *sess = (ctxc_session_t *)user;
    if (sess->locked && nested_add_status == CTXC_OK) {
        ctxc_block_t t = t_text("sneaky");
        ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &t, 1, CTXC_STR_ABSENT};
        nested_add_status = ctxc_session_add(sess, &in, NULL);
    }
    return ctxc_estimate_block_default(NULL, b);
}

static void test_history_is_locked_during_compression(void **state) {
    (void)state;
    set.context_limit = 10;
    start();
    ctxc_block_t c = t_call("c1", "run_shell_command", "{\"command\":\"make\"}");
    ctxc_block_t r = t_resp("c1", "run_shell_command", "\"" LINE " " LINE " " LINE "\"", NULL);
    t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    for (int i = 0; i < 8; i++) {
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, LINE);
    }
    ctxc_history_set_estimator(&hist, meddling_estimator, &s);
    nested_add_status = CTXC_OK;
    assert_int_equal(ctxc_session_compress(&s, NULL), CTXC_OK);
    assert_int_equal(nested_add_status, CTXC_E_BUSY);
    assert_false(s.locked);
    /* unlocked again afterwards */
    ctxc_history_set_estimator(&hist, NULL, NULL);
    add_text(CTXC_SPEAKER_HUMAN, "after");
    assert_null(strstr(t_block_text(&hist, 0, 0), "sneaky"));
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test_setup(test_init_rejects_a_small_work_area, setup),
        cmocka_unit_test_setup(test_threshold_precedence, setup),
        cmocka_unit_test_setup(test_add_marks_the_density_step_due, setup),
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
        cmocka_unit_test_setup(test_compression_and_density_never_set_the_flag, setup),
        cmocka_unit_test_setup(test_strategy_without_optimize_clears_the_flag, setup),
        cmocka_unit_test_setup(test_threshold_check_triggers_compress, setup),
        cmocka_unit_test_setup(test_anchored_tokens_drive_the_check, setup),
        cmocka_unit_test_setup(test_errors_propagate_and_change_nothing, setup),
#endif
        cmocka_unit_test_setup(test_emergency_runs_the_density_step_first, setup),
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test_setup(test_no_space_in_the_work_area_changes_nothing, setup),
        cmocka_unit_test_setup(test_history_is_locked_during_compression, setup),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
