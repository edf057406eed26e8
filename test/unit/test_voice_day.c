/*
 * A voice day (issue 36): 10,000 short turns (human 5-40 words, ai 10-80
 * words, every fifth turn a tool call with its result, now and then a long
 * answer, stretches of Chinese turns) into 128 slots and a 32 KiB arena
 * with a 4000-token limit, before_send before every append and
 * ctxc_session_add_room as the append; once with each LLM-free strategy
 * and once with middle-out (a scripted model, the compression job started
 * by the prefetch threshold). The day, its checks and its table row come
 * from the board's driver (boards/mps2-an386/voice/voice_day.c), which the
 * scenario image runs on the target with the same data: nothing may fail;
 * after every append the newest entries are the ones appended, verbatim,
 * no tool response is without its call, the token total is the sum of the
 * entries, every pinned entry is still there and before_send left room on
 * all three limits. The row printed for each run: turns, compressions,
 * the limit that triggered each, the largest history reached on each
 * limit.
 *
 * Then the property: random streams of short turns with pins and tool
 * pairs (six seeds, both LLM-free strategies), the same checks.
 * CTXC_VOICE_TURNS sets the voice day's turns (default 10000).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "image_util.h"
#include "support.h"
#include "voice_day.h"

/* The middle-out run's model: a short snapshot of whatever it is asked
 * (support.h's scripted model). */
static const char snapshot[] =
    "<state_snapshot>The user asked for lights, timers, music and the "
    "weather; all were done.</state_snapshot>";

/* The driver's lines (its FAIL: lines and the table) to stdout. */
static void write_out(const char *data, size_t len) {
    fwrite(data, 1, len, stdout);
    fflush(stdout);
}

static vd_stats_t stats;

/* One run of the driver: nothing fails, the table row is printed, and the
 * requests stay under the limit. */
static void voice_day(const vd_cfg_t *cfg) {
    t_model()->calls = 0;
    t_model()->answer = snapshot;
    img_out_init(write_out);
    unsigned failed = vd_run(cfg, &stats);
    vd_table_row(cfg, &stats);
    if (cfg->llm_resolver != NULL) {
        print_message("(%u model calls, %u fallbacks)\n", t_model()->calls,
                      stats.fallbacks);
    }
    assert_int_equal(failed, 0);
    assert_int_equal(stats.turns, cfg->turns);
    assert_true(stats.appends > 2u * cfg->turns);
    assert_true(stats.compressions > 0);
    assert_true(stats.max_sent <= VD_CONTEXT_LIMIT);
}

static uint32_t voice_turns(void) {
    const char *v = getenv("CTXC_VOICE_TURNS");
    long n = v != NULL ? strtol(v, NULL, 10) : 0;
    return n > 0 ? (uint32_t)n : VD_TURNS;
}

/* The table's head once, before the first run. */
static int print_head(void **state) {
    (void)state;
    img_out_init(write_out);
    vd_table_head();
    return 0;
}

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
static void test_voice_day_top_down(void **state) {
    (void)state;
    vd_cfg_t cfg = {
        "top-down-truncation", voice_turns(), VD_SEED, false, NULL, NULL, 0};
    voice_day(&cfg);
    /* short turns fill the slots before the tokens: the slots trigger */
    assert_true(stats.by_limit[1] > 0);
}
#endif

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
static void test_voice_day_high_density(void **state) {
    (void)state;
    vd_cfg_t cfg = {"high-density", voice_turns(), VD_SEED, false,
                    NULL,           NULL,          0};
    voice_day(&cfg);
    assert_true(stats.by_limit[1] > 0);
    /* plain voice turns give the summaries nothing: it drops turns */
    assert_true(stats.dropped_runs > 0);
}
#endif

#if CTXC_CFG_STRATEGY_MIDDLE_OUT
static void test_voice_day_middle_out(void **state) {
    (void)state;
    /* the compression job started at 0.7 of the limit (prefetch) */
    vd_cfg_t cfg = {"middle-out", voice_turns(), VD_SEED, false,
                    t_model_resolve, NULL,          700};
    voice_day(&cfg);
    assert_true(t_model()->calls > 0);
}
#endif

/* ---- the property: random streams with pins, several sizes ----------------
 */

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && CTXC_CFG_STRATEGY_HIGH_DENSITY
static void test_random_streams_with_pins(void **state) {
    (void)state;
    static const char *const strategies[] = {"top-down-truncation",
                                             "high-density"};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        vd_cfg_t cfg = {
            strategies[seed % 2], 600, seed * 7919u, true, NULL, NULL, 0};
        voice_day(&cfg);
    }
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
        cmocka_unit_test(test_voice_day_top_down),
#endif
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test(test_voice_day_high_density),
#endif
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
        cmocka_unit_test(test_voice_day_middle_out),
#endif
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test(test_random_streams_with_pins),
#endif
    };
    return cmocka_run_group_tests(tests, print_head, NULL);
}
