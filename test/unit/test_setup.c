/*
 * One call to a working session (issue 40, part 4): ctxc_session_setup()
 * wires settings, session, port and model in the order the library needs.
 * A session it set up takes strategy settings and compresses; the LLM
 * strategies are accepted once a model is wired (a resolver or the
 * provider binding); settings.json is read from the port's filesystem; a
 * bad configuration fails with a message naming what is wrong and leaves
 * nothing half-wired (no session guard on the store, the store empty, the
 * history untouched).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "fake_fs.h"
#include "support.h"

CTXC_HISTORY_DEFINE(hist, 64, 32768);
CTXC_WORK_DEFINE(work, 64, 16384);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static mem_fs_t mfs;
static ctxc_port_t port;
static t_snap_t snap;

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    memset(&mfs, 0, sizeof mfs);
    memset(&port, 0, sizeof port);
    memset(&sess, 0, sizeof sess);
    t_model()->calls = 0;
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_session_deinit(&sess);
    return 0;
}

static ctxc_session_setup_t base_cfg(void) {
    ctxc_session_setup_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.history = &hist;
    cfg.work = &work;
    cfg.settings = &set;
    cfg.strategy = "top-down-truncation";
    cfg.context_limit = 300;
    return cfg;
}

static void must_setup(const ctxc_session_setup_t *cfg) {
    ctxc_error_t err;
    if (ctxc_session_setup(&sess, cfg, &err) != CTXC_OK) {
        fail_msg("setup: %s", ctxc_error_message(&err));
    }
}

/* Turns of about 20 tokens each until `n` entries. */
static void talk(size_t n) {
    ctxc_error_t err;
    for (size_t i = ctxc_history_count(&hist); i < n; i++) {
        ctxc_block_t b =
            t_text("the sensor on channel three reads twenty one degrees "
                   "now and the valve stays closed until the evening run");
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                              &b, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_session_add(&sess, &in, &err), CTXC_OK);
    }
}

static void test_setup_compresses(void **state) {
    (void)state;
    ctxc_session_setup_t cfg = base_cfg();
    must_setup(&cfg);
    uint32_t limit = 0;
    assert_true(ctxc_settings_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, &limit));
    assert_int_equal(limit, 300);
    assert_ptr_equal(sess.history, &hist);
    talk(30);
    ctxc_send_report_t rep;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_true(rep.compressed);
    assert_true(ctxc_history_tokens(&hist) <= 300);
    assert_true(ctxc_history_count(&hist) < 30);
    /* strategy settings after the setup apply to the next step */
    assert_int_equal(ctxc_settings_set_enum(&set,
                                            CTXC_SETTING_COMPRESSION_STRATEGY,
                                            "high-density", &err),
                     CTXC_OK);
    talk(40);
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_true(rep.compressed);
    assert_true(ctxc_history_tokens(&hist) <= 300);
}

static void test_llm_strategy_with_resolver(void **state) {
    (void)state;
    ctxc_session_setup_t cfg = base_cfg();
    cfg.strategy = "middle-out";
    cfg.llm_resolver = t_model_resolve;
    must_setup(&cfg);
    talk(30);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_compress(&sess, &err), CTXC_OK);
    assert_int_equal(t_model()->calls, 1);
    assert_true(ctxc_history_count(&hist) < 30);
    /* and the LLM strategies stay selectable afterwards */
    assert_int_equal(ctxc_settings_set_enum(&set,
                                            CTXC_SETTING_COMPRESSION_STRATEGY,
                                            "one-shot", &err),
                     CTXC_OK);
}

static void test_llm_strategy_with_provider(void **state) {
    (void)state;
    static ctxc_provider_client_t client;
    static ctxc_provider_binding_t binding;
    ctxc_session_setup_t cfg = base_cfg();
    cfg.strategy = "middle-out";
    cfg.port = &port;
    cfg.provider_client = &client;
    cfg.provider_binding = &binding;
    must_setup(&cfg);
    assert_ptr_equal(binding.client, &client);
    assert_ptr_equal(binding.settings, &set);
    assert_ptr_equal(binding.port, &port);
    assert_true(binding.stream);
    assert_true(sess.llm_resolver == ctxc_provider_resolve);
    assert_ptr_equal(sess.llm_user, &binding);
    /* the resolver reads the settings at the call: none configured yet */
    const ctxc_llm_t *llm = NULL;
    ctxc_error_t err;
    assert_int_equal(ctxc_provider_resolve(&binding, NULL, &llm, &err),
                     CTXC_E_INVALID_ARG);
}

static void test_settings_file_from_port(void **state) {
    (void)state;
    mem_put(&mfs, "settings.json",
            "{\"context-limit\": 500, \"compression.strategy\": "
            "\"high-density\"}");
    port.fs = mem_fs(&mfs);
    ctxc_session_setup_t cfg = base_cfg();
    cfg.port = &port;
    cfg.strategy = NULL;
    cfg.context_limit = 0;
    must_setup(&cfg);
    uint32_t limit = 0;
    assert_true(ctxc_settings_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, &limit));
    assert_int_equal(limit, 500);
    ctxc_error_t err;
    const ctxc_strategy_t *strat = NULL;
    assert_int_equal(ctxc_settings_strategy(&set, &strat, &err), CTXC_OK);
    assert_string_equal(strat->name, "high-density");
    assert_ptr_equal(sess.port, &port);
    /* the configuration's values go over the file's */
    ctxc_session_deinit(&sess);
    cfg.context_limit = 700;
    must_setup(&cfg);
    assert_true(ctxc_settings_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, &limit));
    assert_int_equal(limit, 700);
}

/* After a failed setup: nothing wired. The store has no value and no
 * session guard (an LLM strategy is accepted by it without a model); the
 * history is as it was. */
static void assert_not_wired(void) {
    uint32_t limit = 0;
    assert_false(ctxc_settings_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, &limit));
    ctxc_error_t err;
    assert_int_equal(ctxc_settings_set_enum(&set,
                                            CTXC_SETTING_COMPRESSION_STRATEGY,
                                            "middle-out", &err),
                     CTXC_OK);
    t_assert_unchanged(&hist, &snap);
}

static void expect_fail(const ctxc_session_setup_t *cfg, ctxc_status_t want,
                        const char *words) {
    ctxc_error_t err;
    assert_int_equal(ctxc_session_setup(&sess, cfg, &err), want);
    const char *msg = ctxc_error_message(&err);
    if (strstr(msg, words) == NULL) {
        fail_msg("message '%s' lacks '%s'", msg, words);
    }
    assert_not_wired();
}

static void test_bad_config_nothing_wired(void **state) {
    (void)state;
    for (int i = 0; i < 4; i++) {
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, "a turn before the setup");
    }
    t_snapshot(&hist, &snap);
    ctxc_session_setup_t cfg = base_cfg();
    /* an LLM strategy without a model: refused when it is selected */
    cfg.strategy = "middle-out";
    expect_fail(&cfg, CTXC_E_UNAVAILABLE, "middle-out");
    /* a strategy that is not one */
    cfg.strategy = "bottom-up";
    expect_fail(&cfg, CTXC_E_INVALID_ARG, "bottom-up");
    /* no context limit anywhere */
    cfg = base_cfg();
    cfg.context_limit = 0;
    expect_fail(&cfg, CTXC_E_INVALID_ARG, "context-limit");
    /* required objects, the provider's two halves, two models */
    cfg = base_cfg();
    cfg.work = NULL;
    expect_fail(&cfg, CTXC_E_INVALID_ARG, "work is NULL");
    static ctxc_provider_client_t client;
    static ctxc_provider_binding_t binding;
    cfg = base_cfg();
    cfg.provider_client = &client;
    expect_fail(&cfg, CTXC_E_INVALID_ARG, "provider_binding");
    cfg.provider_binding = &binding;
    cfg.llm_resolver = t_model_resolve;
    expect_fail(&cfg, CTXC_E_INVALID_ARG, "not both");
    /* an unusable settings.json */
    mem_put(&mfs, "settings.json", "{\"context-limit\": ");
    port.fs = mem_fs(&mfs);
    cfg = base_cfg();
    cfg.port = &port;
    expect_fail(&cfg, CTXC_E_PARSE, "settings.json");
    /* a work area smaller than the history */
    static uint8_t small_mem[CTXC_WORK_BYTES(8, 1024)];
    static ctxc_work_t small;
    ctxc_error_t err;
    assert_int_equal(ctxc_work_init(&small, 8, 1024, small_mem,
                                    sizeof small_mem, &err),
                     CTXC_OK);
    cfg = base_cfg();
    cfg.work = &small;
    expect_fail(&cfg, CTXC_E_INVALID_ARG, "session setup");
    /* and a good configuration still works after all of them */
    cfg = base_cfg();
    must_setup(&cfg);
    t_assert_unchanged(&hist, &snap);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_setup_compresses, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_llm_strategy_with_resolver, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_llm_strategy_with_provider, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_settings_file_from_port, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_bad_config_nothing_wired, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
