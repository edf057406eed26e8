/*
 * Session / dispatcher (REQ-CS-006, REQ-CS-006A.1, REQ-CS-009, REQ-HD-002,
 * REQ-HD-001.10): the density dirty flag, before_send ordering, threshold
 * precedence (ephemeral -> settings file -> strategy default), values read
 * from the settings store at each call (a /set, a settings file change or a
 * loaded profile after init applies to the next call), the emergency path,
 * locking, compression.profile of the LLM strategies, errors propagated
 * unchanged with the history untouched.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "fake_fs.h"
#include "support.h"

CTXC_HISTORY_DEFINE(hist, 64, 32768);
CTXC_WORK_DEFINE(work, 64, 16384);
static mem_fs_t mfs;
static ctxc_fs_t fs;
static ctxc_settings_store_t set; /* the store the session reads */
static ctxc_session_t s;
static t_snap_t snap;

#define LINE "one two three four five six seven eight" /* 10 tokens */

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
#define BASE_STRATEGY "high-density"
#else
#define BASE_STRATEGY "top-down-truncation"
#endif

static void base_settings(void) {
    t_set(&set, "context-limit", "1000");
    t_set(&set, "compression.strategy", BASE_STRATEGY);
}

static int setup(void **state) {
    (void)state;
    hist.arena_bytes = 32768; /* as declared (a test may end it early) */
    ctxc_history_clear(&hist);
    ctxc_history_set_estimator(&hist, NULL, NULL);
    ctxc_settings_init(&set, NULL); /* no filesystem */
    base_settings();
    return 0;
}

/* The store on an empty in-memory filesystem (settings file, profiles),
 * with the settings of setup(). */
static void store_on_mem_fs(void) {
    memset(&mfs, 0, sizeof mfs);
    fs = mem_fs(&mfs);
    ctxc_settings_init(&set, &fs);
    base_settings();
}

/* /settings set KEY VALUE: the persistent layer (settings.json). */
static void persist(const char *key, const char *value) {
    ctxc_error_t err;
    if (ctxc_settings_persist_set(&set, key, value, &err) != CTXC_OK) {
        fail_msg("/settings set %s %s: %s", key, value, err.message);
    }
}

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION || CTXC_CFG_STRATEGY_MIDDLE_OUT
static void save_profile(const char *name) {
    ctxc_error_t err;
    if (ctxc_settings_profile_save(&set, name, NULL, &err) != CTXC_OK) {
        fail_msg("/profile save %s: %s", name, err.message);
    }
}

static void load_profile(const char *name) {
    ctxc_error_t err;
    if (ctxc_settings_profile_load(&set, name, &err) != CTXC_OK) {
        fail_msg("/profile load %s: %s", name, err.message);
    }
}
#endif

static void start(void) {
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
}

static void add_text(ctxc_speaker_t sp, const char *text) {
    ctxc_block_t b = t_text(text);
    ctxc_entry_in_t in = {sp, &b, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_session_add(&s, &in, NULL), CTXC_OK);
}

static void add_lines(int n) {
    for (int i = 0; i < n; i++) {
        add_text(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, LINE);
    }
}

/* An LLM resolver that has no model: wires the LLM strategies into the
 * session (they may be selected) and fails when a summary call would be
 * made. */
#if CTXC_CFG_STRATEGY_MIDDLE_OUT || CTXC_CFG_STRATEGY_ONE_SHOT
static ctxc_status_t no_model(void *user, const char *profile,
                              const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    (void)llm;
    return ctxc_error_set(err, CTXC_E_UNAVAILABLE, "test: no model here");
}
#endif

static uint16_t threshold_now(void) {
    uint16_t t = 0;
    ctxc_error_t err;
    if (ctxc_session_threshold(&s, &t, &err) != CTXC_OK) {
        fail_msg("threshold: %s", err.message);
    }
    return t;
}

#if CTXC_CFG_PROVIDER_OPENAI && CTXC_CFG_PROVIDER_ANTHROPIC
/* An 800 x 600 PNG costs what the provider of the `provider` setting
 * charges for it (estimate.h): the session's estimator follows the
 * setting, and an estimator the application installed is left alone. */
static uint32_t app_estimator(void *user, const ctxc_block_t *b) {
    (void)user;
    (void)b;
    return 7;
}

static void test_images_cost_what_the_provider_charges(void **state) {
    (void)state;
    start();
    ctxc_block_t img;
    memset(&img, 0, sizeof img);
    img.type = CTXC_BLOCK_MEDIA;
    img.u.media.mime_type = ctxc_str("image/png");
    img.u.media.encoding = ctxc_str("base64");
    img.u.media.data = ctxc_str("iVBORw0KGgoAAAANSUhEUgAAAyAAAAJYCAYAAAA=");
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &img, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_session_add(&s, &in, NULL), CTXC_OK);
    ctxc_error_t err;
    /* no provider: the default rule, 800 x 600 / 750 */
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err), CTXC_OK);
    assert_int_equal(ctxc_history_tokens(&hist), 640);
    /* OpenAI: 85 + 170 a 512-pixel tile (800 x 600: 2 x 2 tiles) */
    t_set(&set, "provider", "openai");
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err), CTXC_OK);
    assert_int_equal(ctxc_history_tokens(&hist), 85 + 170 * 4);
    t_set(&set, "provider", "anthropic");
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err), CTXC_OK);
    assert_int_equal(ctxc_history_tokens(&hist), 640);
    /* the application's own estimator stays */
    ctxc_history_set_estimator(&hist, app_estimator, NULL);
    t_set(&set, "provider", "openai");
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err), CTXC_OK);
    assert_int_equal(ctxc_history_tokens(&hist), 7);
}
#endif

/* A store without any value set resolves to the documented defaults, and
 * a session reads them through it. */
static void test_a_fresh_store_gives_the_documented_defaults(void **state) {
    (void)state;
    ctxc_settings_init(&set, NULL);
    assert_string_equal(
        ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
        CTXC_CFG_STRATEGY_MIDDLE_OUT ? "middle-out"
                                     : CTXC_CFG_DEFAULT_STRATEGY);
    uint16_t r = 1;
    assert_false(ctxc_settings_ratio(&set, CTXC_SETTING_COMPRESSION_THRESHOLD,
                                     &r)); /* the strategy's default applies */
    assert_int_equal(ctxc_settings_context_limit(&set), 0);
    assert_int_equal(ctxc_settings_preserve_threshold(&set), 200);
    assert_int_equal(ctxc_settings_top_preserve_threshold(&set), 200);
    assert_null(ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_PROFILE));
    ctxc_density_config_t d;
    memset(&d, 0, sizeof d);
    d.workspace_root = "/kept";
    ctxc_settings_density(&set, &d);
    assert_true(d.read_write_pruning);
    assert_true(d.file_dedupe);
    assert_false(d.recency_pruning);
    assert_int_equal(d.recency_retention, 3);
    assert_string_equal(d.workspace_root, "/kept"); /* not a setting */
    start();
    assert_null(s.workspace_root);
    assert_true(s.settings == &set); /* kept by pointer, not copied */
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
    assert_int_equal(threshold_now(), 850); /* middle-out's default */
    ctxc_error_t err;
    /* the default needs an LLM: the first before_send says so (not only
     * once the history crosses the threshold) */
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err),
                     CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "'middle-out' needs an LLM"));
    assert_non_null(strstr(err.message, "top-down-truncation"));
    assert_int_equal(ctxc_session_check(&s, &err), CTXC_E_UNAVAILABLE);
    ctxc_session_set_llm_resolver(&s, no_model, NULL);
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "context-limit"));
#else
    /* a build without the LLM strategies defaults to one that runs */
    assert_int_equal(threshold_now(), 850);
    assert_int_equal(
        ctxc_settings_set_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, 1000, NULL),
        CTXC_OK);
    assert_int_equal(ctxc_session_check(&s, NULL), CTXC_OK);
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, NULL), CTXC_OK);
#endif
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
    assert_int_equal(ctxc_session_init(&s, &hist, &work, NULL, &err),
                     CTXC_E_INVALID_ARG);
}

/* REQ-HD-001.10: compression-threshold resolves ephemeral (/set) ->
 * persistent (settings file) -> the strategy's default. Invalid strategy
 * names never reach the store. */
static void test_threshold_precedence(void **state) {
    (void)state;
    store_on_mem_fs();
    start();
    assert_int_equal(threshold_now(), 850); /* trigger.default_threshold */
    persist("compression-threshold", "0.7");
    assert_int_equal(threshold_now(), 700); /* settings file over default */
    t_set(&set, "compression-threshold", "0.5");
    assert_int_equal(threshold_now(), 500); /* ephemeral over settings file */
    assert_int_equal(ctxc_settings_unset(&set, "compression-threshold", NULL),
                     CTXC_OK);
    assert_int_equal(threshold_now(), 700);
    assert_int_equal(
        ctxc_settings_persist_unset(&set, "compression-threshold", NULL),
        CTXC_OK);
    assert_int_equal(threshold_now(), 850);

    /* a name that is no strategy is refused by the store and changes
     * nothing: the session goes on with the strategy it had */
    static const char *const bad[] = {"nope", "High-Density", "",
                                      "no-such-strategy"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ctxc_error_t err;
        assert_int_equal(
            ctxc_settings_set(&set, "compression.strategy", bad[i], &err),
            CTXC_E_INVALID_ARG);
        assert_non_null(strstr(err.message, "compression.strategy"));
        assert_int_equal(ctxc_settings_persist_set(&set, "compression.strategy",
                                                   bad[i], &err),
                         CTXC_E_INVALID_ARG);
        assert_string_equal(
            ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
            BASE_STRATEGY);
        assert_int_equal(threshold_now(), 850);
    }
    const char *file = mem_get(&mfs, "settings.json");
    assert_true(file == NULL || strstr(file, "compression.strategy") == NULL);
}

static void test_add_marks_the_density_step_due(void **state) {
    (void)state;
    start();
    assert_false(s.density_dirty_);
    add_text(CTXC_SPEAKER_HUMAN, LINE);
    assert_true(s.density_dirty_);
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(s.density_dirty_); /* cleared */
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
    add_lines(10);
    assert_int_equal(ctxc_session_optimize(&s, NULL), CTXC_OK);
    assert_false(s.density_dirty_);
    /* changed in the store after init: the next call uses them */
    t_set(&set, "context-limit", "10");
    t_set(&set, "compression.strategy", "top-down-truncation");
    assert_int_equal(ctxc_session_compress(&s, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 2);
    assert_int_equal(s.last_compress.strategy,
                     CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    assert_false(s.density_dirty_);
}

static void test_strategy_without_optimize_clears_the_flag(void **state) {
    (void)state;
    t_set(&set, "compression.strategy", "top-down-truncation");
    start();
    add_text(CTXC_SPEAKER_HUMAN, LINE);
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(r.optimized);
    assert_false(s.density_dirty_);
}

static void test_threshold_check_triggers_compress(void **state) {
    (void)state;
    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set(&set, "context-limit", "200");
    t_set_ratio(&set, "compression-threshold", 500); /* above 100 tokens */
    start();
    add_lines(9);
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

/* REQ-CS-009: the session reads the store at each call, so a threshold or
 * context limit changed after ctxc_session_init() (by /set here) applies
 * to the next before_send / compress. */
static void
test_a_value_changed_after_init_applies_to_the_next_call(void **state) {
    (void)state;
    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set(&set, "context-limit", "200");
    start();
    add_lines(9);
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 10, &r, NULL), CTXC_OK);
    assert_int_equal(r.threshold_tokens, 170); /* the default 0.85 */
    assert_false(r.compressed);
    assert_int_equal(ctxc_history_count(&hist), 9);

    t_set(&set, "compression-threshold", "0.4");
    assert_int_equal(threshold_now(), 400);
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_int_equal(r.threshold_tokens, 80);
    assert_true(r.compressed);        /* 90 > 80 */
    assert_true(r.tokens_after < 48); /* target 200 x 0.4 x 0.6 */
    assert_int_equal(ctxc_history_count(&hist), 4);

    /* a larger context limit: the same history is now far below it */
    t_set(&set, "context-limit", "100000");
    add_lines(4);
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_int_equal(r.threshold_tokens, 40000);
    assert_false(r.compressed);
    assert_int_equal(ctxc_history_count(&hist), 8);

    /* unset: the next call fails loudly and changes nothing */
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    assert_int_equal(ctxc_settings_unset(&set, "context-limit", NULL), CTXC_OK);
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "context-limit"));
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "context-limit"));
    t_assert_unchanged(&hist, &snap);
}

/* The settings file is read through the store too: a value written to it
 * after init applies; an ephemeral value stays above it. */
static void test_a_settings_file_change_after_init_applies(void **state) {
    (void)state;
    store_on_mem_fs();
    t_set(&set, "compression.strategy", "top-down-truncation");
    assert_int_equal(ctxc_settings_unset(&set, "context-limit", NULL), CTXC_OK);
    start();
    add_lines(10);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_INVALID_ARG);
    persist("context-limit", "10");
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 2);
    assert_non_null(strstr(mem_get(&mfs, "settings.json"), "context-limit"));

    /* a new store read from that file gives the same to a new session */
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, &fs);
    assert_int_equal(ctxc_settings_load(&set, &err), CTXC_OK);
    t_set(&set, "compression.strategy", "top-down-truncation");
    start();
    add_lines(10);
    persist("compression-threshold", "1");
    t_set(&set, "context-limit", "1000"); /* ephemeral above the file */
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_int_equal(r.threshold_tokens, 1000);
    assert_false(r.compressed);
    assert_int_equal(ctxc_history_count(&hist), 10);
}

#endif

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && CTXC_CFG_STRATEGY_HIGH_DENSITY
/* compression.strategy changed after init: the next call runs the new
 * strategy (no copy taken at init). */
static void test_a_strategy_changed_after_init_is_used(void **state) {
    (void)state;
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10");
    start();
    add_lines(10);
    /* no tool result to summarise: high-density drops the oldest lines
     * (two stay) and says so */
    assert_int_equal(ctxc_session_compress(&s, NULL), CTXC_OK);
    assert_int_equal(s.last_compress.strategy, CTXC_STRATEGY_HIGH_DENSITY);
    assert_int_equal(s.last_compress.entries_dropped, 8);
    assert_int_equal(ctxc_history_count(&hist), 2);
    ctxc_send_report_t r;
    add_lines(1);
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_true(r.optimized); /* high-density has a density step */
    assert_true(r.compressed);
    assert_int_equal(ctxc_history_count(&hist), 2);

    t_set(&set, "compression.strategy", "top-down-truncation");
    add_lines(1);
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_false(r.optimized); /* top-down has none */
    assert_true(r.compressed);
    assert_int_equal(s.last_compress.strategy,
                     CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    assert_int_equal(ctxc_history_count(&hist), 2);
}
#endif

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
/* The density settings and the workspace root are read at each call. */
static void test_density_settings_changed_after_init_apply(void **state) {
    (void)state;
    start();
    ctxc_block_t b[4] = {
        t_call("r1", "read_file", "{\"file_path\":\"/w/src/a.c\"}"),
        t_resp("r1", "read_file", "\"int a;\"", NULL),
        t_call("w1", "write_file", "{\"file_path\":\"src/a.c\"}"),
        t_resp("w1", "write_file", "\"ok\"", NULL),
    };
    for (size_t i = 0; i < 4; i++) {
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_TOOL : CTXC_SPEAKER_AI,
                              &b[i], 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_session_add(&s, &in, NULL), CTXC_OK);
    }
    /* no workspace root: src/a.c is not /w/src/a.c */
    assert_int_equal(ctxc_session_optimize(&s, NULL), CTXC_OK);
    assert_int_equal(s.last_density.read_write_pruned, 0);
    assert_int_equal(ctxc_history_count(&hist), 4);
    /* with the root, but read->write pruning switched off after init */
    ctxc_session_set_workspace(&s, "/w");
    assert_string_equal(s.workspace_root, "/w");
    t_set(&set, "compression.density.readWritePruning", "false");
    assert_int_equal(ctxc_session_optimize(&s, NULL), CTXC_OK);
    assert_int_equal(s.last_density.read_write_pruned, 0);
    assert_int_equal(ctxc_history_count(&hist), 4);
    /* switched on again: the read and its result go */
    t_set(&set, "compression.density.readWritePruning", "true");
    assert_int_equal(ctxc_session_optimize(&s, NULL), CTXC_OK);
    assert_int_equal(s.last_density.read_write_pruned, 1);
    assert_int_equal(ctxc_history_count(&hist), 2);
}
#endif

static void test_emergency_runs_the_density_step_first(void **state) {
    (void)state;
    t_set(&set, "context-limit", "100");
    t_set(&set, "compression-threshold", "1");
    start();
    add_lines(6);
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
    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set(&set, "context-limit", "1000");
    start();
    add_text(CTXC_SPEAKER_HUMAN, LINE);
    add_text(CTXC_SPEAKER_AI, LINE);
    ctxc_history_anchor_tokens(&hist, 900); /* the provider says 900 */
    ctxc_send_report_t r;
    assert_int_equal(ctxc_session_before_send(&s, 0, &r, NULL), CTXC_OK);
    assert_int_equal(r.tokens, 900);
    assert_int_equal(r.trigger, CTXC_LIMIT_TOKENS); /* 900 > 850 */
    /* two entries: top-down-truncation keeps them, nothing changed */
    assert_false(r.compressed);
    assert_true(s.last_compress.unchanged);
    assert_int_equal(ctxc_history_count(&hist), 2);
}

static void test_errors_propagate_and_change_nothing(void **state) {
    (void)state;
    start();
    add_lines(6);
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    /* registered, needs an LLM: refused when selected in a session
     * without an LLM resolver (or left out of the build) */
    ctxc_status_t want = CTXC_CFG_STRATEGY_MIDDLE_OUT ? CTXC_E_UNAVAILABLE
                                                      : CTXC_E_UNKNOWN_STRATEGY;
    assert_int_equal(
        ctxc_settings_set(&set, "compression.strategy", "middle-out", &err),
        want);
    assert_non_null(strstr(err.message, "'middle-out'"));
    assert_non_null(strstr(err.message, "top-down-truncation"));
    assert_string_equal(
        ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
        BASE_STRATEGY); /* unchanged */
    t_assert_unchanged(&hist, &snap);
#if CTXC_CFG_STRATEGY_ONE_SHOT
    ctxc_session_set_llm_resolver(&s, no_model, NULL);
    t_set(&set, "compression.strategy", "one-shot");
    assert_true(ctxc_session_compress(&s, &err) != CTXC_OK);
    assert_true(ctxc_session_before_send(&s, 2000, NULL, &err) != CTXC_OK);
    t_assert_unchanged(&hist, &snap);
    /* an unknown name is refused by the store: one-shot stays in force */
    assert_int_equal(ctxc_settings_set(&set, "compression.strategy",
                                       "no-such-strategy", &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "no-such-strategy"));
    assert_string_equal(
        ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
        "one-shot");
    assert_true(ctxc_session_compress(&s, &err) != CTXC_OK);
    t_assert_unchanged(&hist, &snap);
#endif
    t_set(&set, "compression.strategy", "top-down-truncation");
    assert_int_equal(ctxc_settings_unset(&set, "context-limit", NULL), CTXC_OK);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "context-limit"));
    t_assert_unchanged(&hist, &snap);
}

#endif

#if !CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION || !CTXC_CFG_STRATEGY_HIGH_DENSITY
/* A one-strategy build: a strategy left out of it is refused at the moment
 * it is selected, by every way a value reaches the store (set, typed,
 * settings file, profile), naming it and what the build has; nothing
 * changes and the session goes on with the strategy in force. */
static void test_a_strategy_left_out_of_the_build_fails_loudly(void **state) {
    (void)state;
#if !CTXC_CFG_STRATEGY_HIGH_DENSITY
    const char *missing = "high-density";
    ctxc_strategy_id_t missing_id = CTXC_STRATEGY_HIGH_DENSITY;
#else
    const char *missing = "top-down-truncation";
    ctxc_strategy_id_t missing_id = CTXC_STRATEGY_TOP_DOWN_TRUNCATION;
#endif
    store_on_mem_fs();
    start();
    add_lines(6);
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    assert_int_equal(
        ctxc_settings_set(&set, "compression.strategy", missing, &err),
        CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, missing));
    assert_non_null(strstr(err.message, "is not built in"));
    assert_non_null(strstr(err.message, BASE_STRATEGY)); /* what there is */
    assert_int_equal(ctxc_settings_set_enum(&set,
                                            CTXC_SETTING_COMPRESSION_STRATEGY,
                                            missing, &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    assert_int_equal(
        ctxc_settings_set_enum_index(&set, CTXC_SETTING_COMPRESSION_STRATEGY,
                                     (uint32_t)missing_id, &err),
        CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, missing));
    assert_int_equal(
        ctxc_settings_persist_set(&set, "compression.strategy", missing, &err),
        CTXC_E_UNKNOWN_STRATEGY);
    assert_null(mem_find(&mfs, "settings.json")); /* nothing written */
    assert_string_equal(
        ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
        BASE_STRATEGY);
    /* a settings file naming it is unusable, with the reason */
    char text[96];
    snprintf(text, sizeof text, "{\"compression.strategy\": \"%s\"}", missing);
    mem_put(&mfs, "settings.json", text);
    assert_int_equal(ctxc_settings_load(&set, &err), CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "settings.json"));
    assert_non_null(strstr(err.message, missing));
    /* and so is a profile */
    mem_put(&mfs, "profiles/other.json", text);
    assert_int_equal(ctxc_settings_profile_load(&set, "other", &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, missing));
    assert_string_equal(
        ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
        BASE_STRATEGY);
    uint16_t t;
    assert_int_equal(ctxc_session_threshold(&s, &t, &err), CTXC_OK);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    /* a store holding one anyway (its fields written around the API):
     * session init refuses it, naming it and what the build has */
    static ctxc_session_t s2;
    set.ephemeral.num[CTXC_SETTING_COMPRESSION_STRATEGY] = (uint32_t)missing_id;
    set.ephemeral.set |= 1u << CTXC_SETTING_COMPRESSION_STRATEGY;
    assert_int_equal(ctxc_session_init(&s2, &hist, &work, &set, &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, missing));
    assert_non_null(strstr(err.message, BASE_STRATEGY));
}
#endif

#if CTXC_CFG_STRATEGY_MIDDLE_OUT
/* REQ-CS-006A.1: an LLM strategy resolves compression.profile before
 * anything else; a profile that does not exist is an error naming it, and
 * the history is unchanged. */
static void test_llm_strategy_with_a_missing_profile(void **state) {
    (void)state;
    store_on_mem_fs(); /* no profiles */
    t_set(&set, "compression.strategy", "middle-out");
    t_set(&set, "compression.profile", "nosuch");
    start(); /* no LLM resolver yet */
    add_lines(6);
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_PROFILE_NOT_FOUND);
    assert_non_null(strstr(err.message, "'nosuch'"));
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(ctxc_session_check(&s, &err), CTXC_E_PROFILE_NOT_FOUND);
    assert_non_null(strstr(err.message, "'nosuch'"));
    /* before_send checks the wiring first, at every call */
    assert_int_equal(ctxc_session_before_send(&s, 2000, NULL, &err),
                     CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "'middle-out'"));
    ctxc_session_set_llm_resolver(&s, no_model, NULL);
    assert_int_equal(ctxc_session_before_send(&s, 2000, NULL, &err),
                     CTXC_E_PROFILE_NOT_FOUND); /* emergency path */
    assert_non_null(strstr(err.message, "'nosuch'"));
    t_assert_unchanged(&hist, &snap);
    ctxc_session_set_llm_resolver(&s, NULL, NULL);
    /* unset: the active provider; there is no LLM resolver */
    assert_int_equal(ctxc_settings_unset(&set, "compression.profile", NULL),
                     CTXC_OK);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "'middle-out'"));
    assert_non_null(strstr(err.message, "LLM resolver"));
    t_assert_unchanged(&hist, &snap);
    /* a profile that exists resolves: the same CTXC_E_UNAVAILABLE */
    save_profile("cheap");
    t_set(&set, "compression.profile", "cheap");
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNAVAILABLE);
    t_assert_unchanged(&hist, &snap);
#if CTXC_CFG_STRATEGY_ONE_SHOT
    ctxc_session_set_llm_resolver(&s, no_model, NULL);
    t_set(&set, "compression.strategy", "one-shot");
    t_set(&set, "compression.profile", "nosuch");
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_PROFILE_NOT_FOUND);
    assert_non_null(strstr(err.message, "'nosuch'"));
    t_assert_unchanged(&hist, &snap);
#endif
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    /* a strategy without an LLM does not look at compression.profile */
    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set(&set, "context-limit", "10");
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 2);
#endif
}
#endif

/* A profile loaded with /profile load after init (saved earlier) is what
 * the session uses from the next call on: its strategy, threshold and
 * context limit. */
static void test_a_loaded_profile_changes_the_strategy(void **state) {
    (void)state;
    store_on_mem_fs();
    t_set(&set, "context-limit", "10");
    /* written by hand: a build without middle-out cannot save it */
    mem_put(&mfs, "profiles/llm.json",
            "{\"context-limit\": 10, \"compression.strategy\": "
            "\"middle-out\"}");
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set(&set, "compression-threshold", "0.5");
    save_profile("td");
#endif
    /* the session starts with this build's strategy */
    ctxc_settings_init(&set, &fs);
    base_settings();
    start();
    add_lines(10);
    t_snapshot(&hist, &snap);
    assert_int_equal(threshold_now(), 850);

    ctxc_error_t err;
    /* a profile selecting a strategy the session cannot run is refused
     * when loaded (no LLM resolver; or not in this build), changing
     * nothing */
    assert_int_equal(ctxc_settings_profile_load(&set, "llm", &err),
                     CTXC_CFG_STRATEGY_MIDDLE_OUT ? CTXC_E_UNAVAILABLE
                                                  : CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "profiles/llm.json"));
    assert_non_null(strstr(err.message, "'middle-out'"));
    assert_string_equal(set.profile, "");
    assert_int_equal(ctxc_settings_context_limit(&set), 1000);
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
    ctxc_session_set_llm_resolver(&s, no_model, NULL);
    load_profile("llm");
    assert_string_equal(set.profile, "llm");
    assert_int_equal(ctxc_settings_context_limit(&set), 10);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "test: no model here"));
#endif
    t_assert_unchanged(&hist, &snap);

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    load_profile("td");
    assert_int_equal(threshold_now(), 500); /* the profile's threshold */
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    assert_int_equal(s.last_compress.strategy,
                     CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    assert_int_equal(ctxc_history_count(&hist), 2); /* target 3 tokens */
#endif
}

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
static void test_no_space_in_the_work_area_changes_nothing(void **state) {
    (void)state;
    CTXC_WORK_DEFINE(tiny, 64, 256);
    t_set(&set, "context-limit", "10");
    assert_int_equal(ctxc_session_init(&s, &hist, &tiny, &set, NULL), CTXC_OK);
    static char big[600];
    memset(big, 'x', sizeof big - 1);
    for (int i = 0; i < 4; i++) {
        char id[8];
        snprintf(id, sizeof id, "c%d", i);
        ctxc_block_t c =
            t_call(id, "run_shell_command", "{\"command\":\"make\"}");
        char json[640];
        snprintf(json, sizeof json, "\"%s\"", big);
        ctxc_block_t r = t_resp(id, "run_shell_command", json, NULL);
        t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
        t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    }
    for (int i = 0; i < 8; i++) {
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, LINE);
    }
    /* the arena's free tail is larger than the scratch: the summaries are
     * staged there, and the result is that of a large work area */
    static t_dump_t large;
    size_t used = hist.used;
    t_snapshot(&hist, &snap);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    assert_true(s.last_compress.middle_compressed > 0);
    t_dump(&hist, &large);
    t_import(&hist, snap.content.buf);
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    static t_dump_t with_scratch;
    t_dump(&hist, &with_scratch);
    assert_string_equal(large.buf, with_scratch.buf);
    /* an arena that ends where its bytes do: the 256 bytes are all there
     * is, and summaries of 4 results need more */
    t_import(&hist, snap.content.buf);
    assert_int_equal(hist.used, used);
    hist.arena_bytes = hist.used;
    t_set(&set, "compression.bytes-threshold", "1");
    t_set(&set, "compression.reserve-bytes", "0");
    assert_int_equal(ctxc_session_init(&s, &hist, &tiny, &set, NULL), CTXC_OK);
    t_snapshot(&hist, &snap);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    t_assert_unchanged(&hist, &snap);
    /* no fallback: the same error again, not another strategy's result */
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_NO_SPACE);
    t_assert_unchanged(&hist, &snap);
    hist.arena_bytes = 32768;
}

/* An estimator that tries to add to the history while it is locked. */
static ctxc_status_t nested_add_status = CTXC_OK;
static uint32_t meddling_estimator(void *user, const ctxc_block_t *b) {
    ctxc_session_t *sess = (ctxc_session_t *)user;
    if (sess->locked_ && nested_add_status == CTXC_OK) {
        ctxc_block_t t = t_text("sneaky");
        ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &t, 1, CTXC_STR_ABSENT};
        nested_add_status = ctxc_session_add(sess, &in, NULL);
    }
    return ctxc_estimate_block_default(NULL, b);
}

static void test_history_is_locked_during_compression(void **state) {
    (void)state;
    t_set(&set, "context-limit", "10");
    start();
    ctxc_block_t c =
        t_call("c1", "run_shell_command", "{\"command\":\"make\"}");
    ctxc_block_t r = t_resp("c1", "run_shell_command",
                            "\"" LINE " " LINE " " LINE "\"", NULL);
    t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    for (int i = 0; i < 8; i++) {
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, LINE);
    }
    ctxc_history_set_estimator(&hist, meddling_estimator, &s);
    nested_add_status = CTXC_OK;
    assert_int_equal(ctxc_session_compress(&s, NULL), CTXC_OK);
    assert_int_equal(nested_add_status, CTXC_E_BUSY);
    assert_false(s.locked_);
    /* unlocked again afterwards */
    ctxc_history_set_estimator(&hist, NULL, NULL);
    add_text(CTXC_SPEAKER_HUMAN, "after");
    assert_null(strstr(t_block_text(&hist, 0, 0), "sneaky"));
}
#endif

#if CTXC_CFG_STRATEGY_MIDDLE_OUT
/* A session in a local variable: while it lives, its guard refuses an LLM
 * strategy (no resolver); ctxc_session_deinit() takes the guard off the
 * store, which then takes the strategy, and leaves another session's guard
 * alone. */
static void test_deinit_takes_the_guard_off_the_store(void **state) {
    (void)state;
    ctxc_session_t local;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&local, &hist, &work, &set, NULL),
                     CTXC_OK);
    assert_int_equal(ctxc_settings_set(&set, "compression.strategy",
                                       "middle-out", &err),
                     CTXC_E_UNAVAILABLE);
    ctxc_session_deinit(&local);
    memset(&local, 0, sizeof local); /* its memory is reused */
    assert_int_equal(ctxc_settings_set(&set, "compression.strategy",
                                       "middle-out", &err),
                     CTXC_OK);
    t_set(&set, "compression.strategy", BASE_STRATEGY);
    /* deinit of a session that no longer holds the store's guard */
    ctxc_session_t other;
    assert_int_equal(ctxc_session_init(&other, &hist, &work, &set, NULL),
                     CTXC_OK);
    assert_int_equal(ctxc_session_init(&local, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_init(&other, &hist, &work, &set, NULL); /* other's again */
    ctxc_session_deinit(&local);
    assert_int_equal(ctxc_settings_set(&set, "compression.strategy",
                                       "middle-out", &err),
                     CTXC_E_UNAVAILABLE);
    ctxc_session_deinit(&other);
    ctxc_session_deinit(NULL);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] =
    { cmocka_unit_test_setup(test_a_fresh_store_gives_the_documented_defaults,
                             setup),
      cmocka_unit_test_setup(test_init_rejects_a_small_work_area, setup),
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
      cmocka_unit_test_setup(test_deinit_takes_the_guard_off_the_store, setup),
#endif
      cmocka_unit_test_setup(test_threshold_precedence, setup),
      cmocka_unit_test_setup(test_add_marks_the_density_step_due, setup),
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
      cmocka_unit_test_setup(test_compression_and_density_never_set_the_flag,
                             setup),
      cmocka_unit_test_setup(test_strategy_without_optimize_clears_the_flag,
                             setup),
      cmocka_unit_test_setup(test_threshold_check_triggers_compress, setup),
      cmocka_unit_test_setup(
          test_a_value_changed_after_init_applies_to_the_next_call, setup),
      cmocka_unit_test_setup(test_a_settings_file_change_after_init_applies,
                             setup),
      cmocka_unit_test_setup(test_anchored_tokens_drive_the_check, setup),
      cmocka_unit_test_setup(test_errors_propagate_and_change_nothing, setup),
#endif
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && CTXC_CFG_STRATEGY_HIGH_DENSITY
      cmocka_unit_test_setup(test_a_strategy_changed_after_init_is_used, setup),
#endif
#if !CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION || !CTXC_CFG_STRATEGY_HIGH_DENSITY
      cmocka_unit_test_setup(test_a_strategy_left_out_of_the_build_fails_loudly,
                             setup),
#endif
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
      cmocka_unit_test_setup(test_llm_strategy_with_a_missing_profile, setup),
#endif
      cmocka_unit_test_setup(test_a_loaded_profile_changes_the_strategy, setup),
#if CTXC_CFG_PROVIDER_OPENAI && CTXC_CFG_PROVIDER_ANTHROPIC
      cmocka_unit_test_setup(test_images_cost_what_the_provider_charges,
                             setup),
#endif
      cmocka_unit_test_setup(test_emergency_runs_the_density_step_first, setup),
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
      cmocka_unit_test_setup(test_density_settings_changed_after_init_apply,
                             setup),
      cmocka_unit_test_setup(test_no_space_in_the_work_area_changes_nothing,
                             setup),
      cmocka_unit_test_setup(test_history_is_locked_during_compression, setup),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
