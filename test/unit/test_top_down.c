/*
 * top-down-truncation (REQ-CS-003): no LLM; target = threshold x context
 * limit x 0.6; oldest first until below the target; only valid tool-call
 * boundaries; at least 2 entries kept; no synthetic entries.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION

CTXC_HISTORY_DEFINE(hist, 64, 32768);
CTXC_WORK_DEFINE(work, 64, 8192);
static t_dump_t before, after;

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    return 0;
}

/* Runs the strategy through a session. */
static ctxc_session_t run(uint64_t limit, uint32_t threshold) {
    static ctxc_settings_store_t set;
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "top-down-truncation");
    t_set_uint(&set, "context-limit", limit);
    t_set_ratio(&set, "compression-threshold", threshold);
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    t_dump(&hist, &before);
    if (ctxc_session_compress(&s, &err) != CTXC_OK) {
        fail_msg("compress failed: %s", err.message);
    }
    t_dump(&hist, &after);
    return s;
}

/* The output is a suffix of the input: nothing synthetic, nothing edited. */
static void assert_suffix(void) {
    size_t n = strlen(after.buf);
    assert_true(n <= strlen(before.buf));
    assert_string_equal(before.buf + strlen(before.buf) - n, after.buf);
}

/* 20 text entries of exactly 10 tokens each (8 words -> 10.4 -> 10). */
static void twenty_entries(void) {
    for (int i = 0; i < 20; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                   "one two three four five six seven eight");
    }
    assert_int_equal(ctxc_history_tokens(&hist), 200);
}

static void test_drops_oldest_until_below_target(void **state) {
    (void)state;
    twenty_entries();
    /* target = 200 x 0.5 x 0.6 = 60 tokens: keep 5 entries (50 < 60) */
    ctxc_session_t s = run(200, 500);
    assert_int_equal(ctxc_history_count(&hist), 5);
    assert_int_equal(ctxc_history_tokens(&hist), 50);
    assert_suffix();
    assert_int_equal(s.last_compress.strategy, CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    assert_int_equal(s.last_compress.original_count, 20);
    assert_int_equal(s.last_compress.compressed_count, 5);
    assert_int_equal(s.last_compress.middle_compressed, 15);
    assert_int_equal(s.last_compress.tokens_before, 200);
    assert_int_equal(s.last_compress.tokens_after, 50);
    assert_false(s.last_compress.llm_call_made);
    assert_false(s.last_compress.unchanged);
}

static void test_target_exactly_reached_is_not_below(void **state) {
    (void)state;
    twenty_entries();
    /* target = 1000 x 0.1 x 0.6 = 60: 60 is not below 60, so 5 entries */
    run(1000, 100);
    assert_int_equal(ctxc_history_count(&hist), 5);
}

static void test_below_target_leaves_history_unchanged(void **state) {
    (void)state;
    twenty_entries();
    ctxc_session_t s = run(1000, 850); /* target 510 > 200 */
    assert_int_equal(ctxc_history_count(&hist), 20);
    assert_string_equal(after.buf, before.buf);
    assert_true(s.last_compress.unchanged);
}

static void test_keeps_at_least_two_entries(void **state) {
    (void)state;
    twenty_entries();
    run(10, 100); /* target 0: nothing is ever below it */
    assert_int_equal(ctxc_history_count(&hist), 2);
    assert_suffix();
}

static void test_minimum_two_respects_tool_call_boundaries(void **state) {
    (void)state;
    /* the worked example: [human, ai, ai(c1,c2), tool(c1), tool(c2)] keeps
     * [2..4] (the reference implementation keeps [3..4]: two orphans) */
    ctxc_block_t calls[2] = {t_call("c1", "read_file", "{\"file_path\":\"a\"}"),
                             t_call("c2", "read_file", "{\"file_path\":\"b\"}")};
    ctxc_block_t r1 = t_resp("c1", "read_file", "\"A\"", NULL);
    ctxc_block_t r2 = t_resp("c2", "read_file", "\"B\"", NULL);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "read both");
    t_add_text(&hist, CTXC_SPEAKER_AI, "sure");
    t_add(&hist, CTXC_SPEAKER_AI, calls, 2);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r1, 1);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r2, 1);
    run(10, 100);
    assert_int_equal(ctxc_history_count(&hist), 3);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.tool_calls, 2);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
    assert_suffix();
}

static void test_cut_moves_forward_past_a_call_to_reach_the_target(void **state) {
    (void)state;
    /* [h, ai(c1), h(noise), tool(c1), ai, h]: cutting after entry 1 would
     * orphan c1's response; the cut moves forward to 4 */
    ctxc_block_t c1 = t_call("c1", "run_shell_command", "{\"command\":\"make\"}");
    ctxc_block_t r1 = t_resp("c1", "run_shell_command",
                             "\"one two three four five six seven eight\"", NULL);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "one two three four five six seven eight");
    t_add(&hist, CTXC_SPEAKER_AI, &c1, 1);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "one two three four five six seven eight");
    t_add(&hist, CTXC_SPEAKER_TOOL, &r1, 1);
    t_add_text(&hist, CTXC_SPEAKER_AI, "one two three four five six seven eight");
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "one two three four five six seven eight");
    /* tokens: 10, 15 (the call), 10, 10, 10, 10 = 65; target 84 x 0.6 = 50:
     * dropping two entries (40 left) is enough, but a cut at 2 or 3 would
     * separate c1 from its response, so the cut is at 4 */
    assert_int_equal(ctxc_history_tokens(&hist), 65);
    run(84, 1000);
    assert_int_equal(ctxc_history_count(&hist), 2);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_responses, 0);
    assert_suffix();
}

static void test_entries_outside_the_curated_view_follow_their_neighbours(void **state) {
    (void)state;
    for (int i = 0; i < 6; i++) {
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, "one two three four five six seven eight");
        t_add_text(&hist, CTXC_SPEAKER_AI, ""); /* empty: not in the curated view */
    }
    run(10, 100);
    /* the last two curated entries are the 5th and 6th human entries; the
     * empty ai entry between them stays, the trailing one too */
    assert_int_equal(ctxc_history_count(&hist), 4);
    assert_suffix();
}

static void test_single_entry_history_is_kept(void **state) {
    (void)state;
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "lonely");
    run(10, 100);
    assert_int_equal(ctxc_history_count(&hist), 1);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_drops_oldest_until_below_target, setup),
        cmocka_unit_test_setup(test_target_exactly_reached_is_not_below, setup),
        cmocka_unit_test_setup(test_below_target_leaves_history_unchanged, setup),
        cmocka_unit_test_setup(test_keeps_at_least_two_entries, setup),
        cmocka_unit_test_setup(test_minimum_two_respects_tool_call_boundaries, setup),
        cmocka_unit_test_setup(test_cut_moves_forward_past_a_call_to_reach_the_target, setup),
        cmocka_unit_test_setup(test_entries_outside_the_curated_view_follow_their_neighbours, setup),
        cmocka_unit_test_setup(test_single_entry_history_is_kept, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* top-down-truncation left out of this build */

static void test_left_out(void **state) {
    (void)state;
    const ctxc_strategy_t *s;
    assert_int_equal(ctxc_strategy_find("top-down-truncation", &s, NULL),
                     CTXC_E_UNKNOWN_STRATEGY);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_left_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
