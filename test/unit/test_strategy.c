/*
 * Strategy framework: the one list of names, the table, lookup
 * (REQ-CS-001.1/.2/.3/.5, REQ-CS-010.3, REQ-HD-001.1-.3, REQ-HD-004.1/.4),
 * the tool-call boundary utilities (REQ-CS-004), plans, and density result
 * validation and application (REQ-HD-001.5-.7, REQ-HD-003).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/plan_build.h"
#include "ctxc/ctxc.h"
#include "support.h"

CTXC_HISTORY_DEFINE(hist, 64, 16384);
CTXC_WORK_DEFINE(work, 64, 8192);
static t_snap_t snap;

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    return 0;
}

/* ---- names and table ----------------------------------------------------- */

static void test_one_list_of_names(void **state) {
    (void)state;
    assert_int_equal(CTXC_STRATEGY_COUNT, 4);
    assert_string_equal(ctxc_strategy_names[CTXC_STRATEGY_MIDDLE_OUT],
                        "middle-out");
    assert_string_equal(ctxc_strategy_names[CTXC_STRATEGY_TOP_DOWN_TRUNCATION],
                        "top-down-truncation");
    assert_string_equal(ctxc_strategy_names[CTXC_STRATEGY_ONE_SHOT],
                        "one-shot");
    assert_string_equal(ctxc_strategy_names[CTXC_STRATEGY_HIGH_DENSITY],
                        "high-density");
    assert_null(ctxc_strategy_names[CTXC_STRATEGY_COUNT]);
}

static void test_table_properties(void **state) {
    (void)state;
    for (int i = 0; i < CTXC_STRATEGY_COUNT; i++) {
        const ctxc_strategy_t *s = ctxc_strategy_get((ctxc_strategy_id_t)i);
        const ctxc_strategy_t *found = NULL;
        ctxc_status_t st =
            ctxc_strategy_find(ctxc_strategy_names[i], &found, NULL);
        if (s == NULL) { /* left out of this build */
            assert_int_equal(st, CTXC_E_UNKNOWN_STRATEGY);
            continue;
        }
        assert_int_equal(st, CTXC_OK);
        assert_ptr_equal(found, s);
        assert_int_equal(s->id, i);
        assert_string_equal(s->name, ctxc_strategy_names[i]);
        assert_int_equal(s->trigger.default_threshold, 850);
    }
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
    const ctxc_strategy_t *mo = ctxc_strategy_get(CTXC_STRATEGY_MIDDLE_OUT);
    assert_true(mo->requires_llm);
    assert_int_equal(mo->trigger.mode, CTXC_TRIGGER_THRESHOLD);
    assert_null(mo->optimize);
    assert_non_null(mo->compress); /* the model comes from llm_resolver */
#endif
#if CTXC_CFG_STRATEGY_ONE_SHOT
    const ctxc_strategy_t *os = ctxc_strategy_get(CTXC_STRATEGY_ONE_SHOT);
    assert_true(os->requires_llm);
    assert_int_equal(os->trigger.mode, CTXC_TRIGGER_THRESHOLD);
    assert_non_null(os->compress);
    assert_null(os->optimize);
#endif
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    const ctxc_strategy_t *td =
        ctxc_strategy_get(CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    assert_false(td->requires_llm);
    assert_int_equal(td->trigger.mode, CTXC_TRIGGER_THRESHOLD);
    assert_non_null(td->compress);
    assert_null(td->optimize);
#endif
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
    const ctxc_strategy_t *hd = ctxc_strategy_get(CTXC_STRATEGY_HIGH_DENSITY);
    assert_false(hd->requires_llm);
    assert_int_equal(hd->trigger.mode, CTXC_TRIGGER_CONTINUOUS);
    assert_non_null(hd->compress);
    assert_non_null(hd->optimize);
#endif
}

static void test_unknown_name_is_named_in_the_error(void **state) {
    (void)state;
    const ctxc_strategy_t *s = NULL;
    ctxc_error_t err;
    assert_int_equal(ctxc_strategy_find("bottom-up", &s, &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "unknown strategy 'bottom-up'"));
    assert_non_null(strstr(err.message,
                           "middle-out top-down-truncation one-shot "
                           "high-density"));
    assert_null(s);
    assert_int_equal(ctxc_strategy_find("Middle-Out", &s, &err),
                     CTXC_E_UNKNOWN_STRATEGY); /* names are exact */
    assert_int_equal(ctxc_strategy_find(NULL, &s, &err), CTXC_E_INVALID_ARG);
    assert_null(ctxc_strategy_get(CTXC_STRATEGY_COUNT));
#if !CTXC_CFG_STRATEGY_MIDDLE_OUT
    assert_int_equal(ctxc_strategy_find("middle-out", &s, &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "left out of this build"));
#endif
}

/* ---- boundaries ---------------------------------------------------------- */

/* The boundary data of the curated view, computed with the call id index
 * and without it (the scans): both must agree. */
static ctxc_boundary_t boundary_of(const ctxc_history_t *h) {
    static ctxc_view_t view;
    static uint16_t mem[65], scanned[65];
    ctxc_boundary_t b, by_scan;
    assert_int_equal(
        ctxc_view_init(&view, h, CTXC_VIEW_CURATED, work.map, work.cap, NULL),
        CTXC_OK);
    assert_int_equal(
        ctxc_boundary_init(&b, &view, mem, 65, work.index,
                           work.index_slots * CTXC_WORK_INDEX_SLOT_BYTES, NULL),
        CTXC_OK);
    assert_int_equal(
        ctxc_boundary_init(&by_scan, &view, scanned, 65, NULL, 0, NULL),
        CTXC_OK);
    assert_int_equal(by_scan.count, b.count);
    assert_memory_equal(mem, scanned, (b.count + 1) * sizeof mem[0]);
    return b;
}

static void valid_splits(const ctxc_boundary_t *b, const char *expected) {
    char got[80] = "";
    for (size_t i = 0; i <= b->count; i++) {
        if (ctxc_boundary_is_valid(b, i)) {
            size_t n = strlen(got);
            snprintf(got + n, sizeof got - n, "%s%zu", n ? "," : "", i);
        }
    }
    assert_string_equal(got, expected);
}

static void test_worked_example_of_the_design(void **state) {
    (void)state;
    /* [0 human, 1 ai, 2 ai(call c1, call c2), 3 tool(c1), 4 tool(c2)] */
    ctxc_block_t calls[2] = {
        t_call("c1", "read_file", "{\"file_path\":\"a\"}"),
        t_call("c2", "read_file", "{\"file_path\":\"b\"}")};
    ctxc_block_t r1 = t_resp("c1", "read_file", "\"A\"", NULL);
    ctxc_block_t r2 = t_resp("c2", "read_file", "\"B\"", NULL);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "read both");
    t_add_text(&hist, CTXC_SPEAKER_AI, "sure");
    t_add(&hist, CTXC_SPEAKER_AI, calls, 2);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r1, 1);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r2, 1);
    ctxc_boundary_t b = boundary_of(&hist);
    valid_splits(&b, "0,1,2,5");
    assert_int_equal(ctxc_boundary_forward(&b, 3), 5);
    assert_int_equal(ctxc_boundary_forward(&b, 2), 2);
    assert_int_equal(ctxc_boundary_backward(&b, 4), 2);
    assert_int_equal(ctxc_boundary_backward(&b, 9), 5);
    assert_int_equal(ctxc_boundary_adjust(&b, 3), 2); /* fwd = N */
    assert_int_equal(ctxc_boundary_adjust(&b, 1), 1);
    assert_int_equal(ctxc_boundary_adjust(&b, 5), 5);
}

static void
test_parallel_calls_in_one_tool_entry_and_non_adjacent(void **state) {
    (void)state;
    ctxc_block_t calls[2] = {t_call("c1", "glob", "{}"),
                             t_call("c2", "glob", "{}")};
    ctxc_block_t both[2] = {t_resp("c1", "glob", "\"\"", NULL),
                            t_resp("c2", "glob", "\"\"", NULL)};
    ctxc_block_t c3 = t_call("c3", "run", "{}");
    ctxc_block_t r3 = t_resp("c3", "run", "\"\"", NULL);
    t_add(&hist, CTXC_SPEAKER_AI, calls, 2);            /* 0 */
    t_add(&hist, CTXC_SPEAKER_TOOL, both, 2);           /* 1 */
    t_add(&hist, CTXC_SPEAKER_AI, &c3, 1);              /* 2 */
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "meanwhile"); /* 3 */
    t_add(&hist, CTXC_SPEAKER_TOOL, &r3, 1);            /* 4: not adjacent */
    t_add_text(&hist, CTXC_SPEAKER_AI, "done");         /* 5 */
    ctxc_boundary_t b = boundary_of(&hist);
    valid_splits(&b, "0,2,5,6");
}

static void test_unpaired_input_does_not_block_splits(void **state) {
    (void)state;
    ctxc_block_t lost = t_call("gone", "run", "{}"); /* never answered */
    ctxc_block_t ghost = t_resp("ghost", "run", "\"\"", NULL); /* no call */
    t_add(&hist, CTXC_SPEAKER_AI, &lost, 1);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "hello");
    t_add(&hist, CTXC_SPEAKER_TOOL, &ghost, 1);
    t_add_text(&hist, CTXC_SPEAKER_AI, "bye");
    ctxc_boundary_t b = boundary_of(&hist);
    valid_splits(&b, "0,1,2,3,4");
}

static void test_boundary_memory_too_small(void **state) {
    (void)state;
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "a");
    t_add_text(&hist, CTXC_SPEAKER_AI, "b");
    ctxc_view_t v;
    uint16_t mem[2];
    ctxc_boundary_t b;
    ctxc_error_t err;
    ctxc_view_init(&v, &hist, CTXC_VIEW_RAW, work.map, work.cap, NULL);
    assert_int_equal(ctxc_boundary_init(&b, &v, mem, 2, NULL, 0, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
}

/* Responses further than a few entries from their calls (the boundary looks
 * them up in the call id index): the same splits as the scans. */
static void test_far_responses_split_as_the_scans_do(void **state) {
    (void)state;
    ctxc_block_t c1 = t_call("slow", "run", "{}");
    ctxc_block_t c2 = t_call("fast", "run", "{}");
    ctxc_block_t lost = t_call("lost", "run", "{}");
    ctxc_block_t r1 = t_resp("slow", "run", "\"\"", NULL);
    ctxc_block_t r2 = t_resp("fast", "run", "\"\"", NULL);
    t_add(&hist, CTXC_SPEAKER_AI, &c1, 1);   /* 0 */
    t_add(&hist, CTXC_SPEAKER_AI, &lost, 1); /* 1: never answered */
    for (int i = 0; i < 12; i++) {           /* 2 .. 13 */
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, "wait");
    }
    t_add(&hist, CTXC_SPEAKER_AI, &c2, 1);      /* 14 */
    t_add(&hist, CTXC_SPEAKER_TOOL, &r2, 1);    /* 15 */
    t_add(&hist, CTXC_SPEAKER_TOOL, &r1, 1);    /* 16: 16 entries later */
    t_add_text(&hist, CTXC_SPEAKER_AI, "done"); /* 17 */
    ctxc_boundary_t b = boundary_of(&hist);
    valid_splits(&b, "0,17,18");
}

/* ---- pairing counts (ctxc_history_stats) with and without an index ------- */

static void assert_stats_agree(ctxc_history_t *h, size_t calls,
                               size_t responses, size_t unpaired_calls,
                               size_t unpaired_responses) {
    static uint32_t big[CTXC_HISTORY_ID_INDEX_BYTES(64) / 4u];
    static uint32_t tiny[16]; /* 4 slots: 3 ids */
    ctxc_history_stats_t plain, with_big, with_tiny;
    ctxc_history_set_id_index(h, NULL, 0);
    ctxc_history_stats(h, &plain);
    ctxc_history_set_id_index(h, big, sizeof big);
    ctxc_history_stats(h, &with_big);
    ctxc_history_set_id_index(h, tiny, sizeof tiny);
    ctxc_history_stats(h, &with_tiny);
    ctxc_history_set_id_index(h, NULL, 0);
    assert_int_equal(plain.tool_calls, calls);
    assert_int_equal(plain.tool_responses, responses);
    assert_int_equal(plain.unpaired_calls, unpaired_calls);
    assert_int_equal(plain.unpaired_responses, unpaired_responses);
    assert_memory_equal(&with_big, &plain, sizeof plain);
    assert_memory_equal(&with_tiny, &plain, sizeof plain);
}

static void test_stats_pairing_with_and_without_an_index(void **state) {
    (void)state;
    ctxc_block_t calls[2] = {t_call("c1", "glob", "{}"),
                             t_call("c2", "glob", "{}")};
    ctxc_block_t both[2] = {t_resp("c1", "glob", "\"\"", NULL),
                            t_resp("c2", "glob", "\"\"", NULL)};
    ctxc_block_t lost = t_call("gone", "run", "{}");
    ctxc_block_t ghost = t_resp("ghost", "run", "\"\"", NULL);
    ctxc_block_t more[2] = {t_call("c3", "glob", "{}"),
                            t_call("c4", "glob", "{}")};
    ctxc_block_t c3 = t_resp("c3", "glob", "\"\"", NULL);
    t_add(&hist, CTXC_SPEAKER_AI, calls, 2);
    t_add(&hist, CTXC_SPEAKER_TOOL, both, 2);
    assert_stats_agree(&hist, 2, 2, 0, 0);
    t_add(&hist, CTXC_SPEAKER_AI, &lost, 1);
    t_add(&hist, CTXC_SPEAKER_TOOL, &ghost, 1);
    /* more ids than the tiny index holds: it takes the scans */
    assert_stats_agree(&hist, 3, 3, 1, 1);
    t_add(&hist, CTXC_SPEAKER_AI, more, 2);
    t_add(&hist, CTXC_SPEAKER_TOOL, &c3, 1);
    assert_stats_agree(&hist, 5, 4, 2, 1); /* c4 is unanswered */
}

/* ---- plans --------------------------------------------------------------- */

static void five_entries(void) {
    const char *t[] = {"alpha", "bravo", "charlie", "delta", "echo"};
    for (int i = 0; i < 5; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, t[i]);
    }
}

static void test_plan_keeps_inserts_and_drops(void **state) {
    (void)state;
    five_entries();
    ctxc_plan_t plan;
    ctxc_plan_init(&plan, &work);
    ctxc_block_t x = t_text("X replaces bravo");
    ctxc_block_t y = t_text("Y is new");
    ctxc_entry_in_t xin = {CTXC_SPEAKER_AI, &x, 1, CTXC_STR_ABSENT};
    ctxc_entry_in_t yin = {CTXC_SPEAKER_HUMAN, &y, 1,
                           ctxc_str("{\"isSummary\":true}")};
    assert_int_equal(ctxc_plan_keep(&plan, 0, 1, NULL), CTXC_OK);
    assert_int_equal(ctxc_plan_insert(&plan, &xin, NULL, NULL, 1, NULL),
                     CTXC_OK);
    assert_int_equal(ctxc_plan_keep(&plan, 2, 3, NULL), CTXC_OK);
    assert_int_equal(
        ctxc_plan_insert(&plan, &yin, NULL, NULL, UINT32_MAX, NULL), CTXC_OK);
    assert_int_equal(ctxc_plan_keep(&plan, 4, 5, NULL),
                     CTXC_OK); /* delta dropped */
    assert_int_equal(ctxc_history_apply_plan(&hist, &plan, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 5);
    assert_string_equal(t_block_text(&hist, 0, 0), "alpha");
    assert_string_equal(t_block_text(&hist, 1, 0), "X replaces bravo");
    assert_string_equal(t_block_text(&hist, 2, 0), "charlie");
    assert_string_equal(t_block_text(&hist, 3, 0), "Y is new");
    assert_string_equal(t_block_text(&hist, 4, 0), "echo");
    ctxc_entry_t e;
    ctxc_history_get(&hist, 3, &e);
    assert_int_equal(e.flags, CTXC_ENTRY_IS_SUMMARY);
    assert_int_equal(e.speaker, CTXC_SPEAKER_HUMAN);
    uint64_t sum = 0;
    for (size_t i = 0; i < 5; i++) {
        ctxc_history_get(&hist, i, &e);
        sum += e.tokens;
    }
    assert_int_equal(ctxc_history_tokens(&hist), sum);
    /* the result is ordinary history: exporting and appending still work */
    t_add_text(&hist, CTXC_SPEAKER_AI, "foxtrot");
    assert_string_equal(t_block_text(&hist, 5, 0), "foxtrot");
}

/* Random plans over entries of random sizes: kept runs move down (drops
 * before them) and up (larger inserts before them), their slots sometimes
 * the other way than their bytes; every entry ends in its place, records
 * stay packed in order and the token sum is the sum of the entries'. */
static uint32_t rnd_state;
static uint32_t rnd(uint32_t n) {
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 8) % n;
}

static void random_text(char *buf, size_t cap, const char *tag) {
    size_t n = (size_t)snprintf(buf, cap, "%s:", tag);
    size_t len = n + 1 + rnd(200);
    for (; n < len && n + 1 < cap; n++) {
        buf[n] = (char)('a' + rnd(26));
    }
    buf[n] = '\0';
}

static void test_random_plans_place_every_entry(void **state) {
    (void)state;
    static char old_text[16][256], new_text[64][256];
    static const char *want[64];
    rnd_state = 7;
    for (int trial = 0; trial < 300; trial++) {
        ctxc_history_clear(&hist);
        size_t n = 1 + rnd(16);
        for (size_t i = 0; i < n; i++) {
            char tag[16];
            snprintf(tag, sizeof tag, "old%zu", i);
            random_text(old_text[i], sizeof old_text[i], tag);
            t_add_text(&hist, CTXC_SPEAKER_HUMAN, old_text[i]);
        }
        ctxc_plan_t plan;
        ctxc_plan_init(&plan, &work);
        size_t m = 0, inserted = 0;
        for (size_t i = 0; i < n; i++) {
            uint32_t what = rnd(4); /* keep, drop, replace, keep + insert */
            if (what == 0 || what == 3) {
                assert_int_equal(ctxc_plan_keep(&plan, i, i + 1, NULL),
                                 CTXC_OK);
                want[m++] = old_text[i];
            }
            if (what >= 2) {
                char tag[16];
                snprintf(tag, sizeof tag, "new%zu", inserted);
                char *t = new_text[inserted++];
                random_text(t, sizeof new_text[0], tag);
                ctxc_block_t b = t_text(t);
                ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1,
                                      CTXC_STR_ABSENT};
                assert_int_equal(
                    ctxc_plan_insert(&plan, &in, NULL, NULL,
                                     what == 2 ? (uint32_t)i : UINT32_MAX,
                                     NULL),
                    CTXC_OK);
                want[m++] = t;
            }
        }
        assert_int_equal(ctxc_history_apply_plan(&hist, &plan, NULL), CTXC_OK);
        assert_int_equal(ctxc_history_count(&hist), m);
        uint64_t sum = 0;
        size_t at = 0;
        for (size_t i = 0; i < m; i++) {
            assert_string_equal(t_block_text(&hist, i, 0), want[i]);
            assert_int_equal(hist.slots[i].offset, at);
            at += hist.slots[i].size;
            sum += hist.slots[i].tokens;
        }
        ctxc_history_usage_t u;
        ctxc_history_usage(&hist, &u);
        assert_int_equal(u.bytes_used, at);
        assert_int_equal(ctxc_history_tokens(&hist), sum);
        t_add_text(&hist, CTXC_SPEAKER_AI, "after");
        assert_string_equal(t_block_text(&hist, m, 0), "after");
    }
}

/* An estimator of `*per` tokens per block. */
static uint32_t per_block(void *user, const ctxc_block_t *b) {
    (void)b;
    return *(const uint32_t *)user;
}

/* Inserted entries end up counted with the history's estimator, whatever
 * their ops were counted with: another estimator, the same one with another
 * user, or tokens written into an op by hand. */
static void test_plan_inserts_counted_with_the_history_estimator(void **state) {
    (void)state;
    static uint32_t seven = 7, nine = 9;
    five_entries();
    ctxc_block_t x = t_text("X is new");
    ctxc_entry_in_t xin = {CTXC_SPEAKER_AI, &x, 1, CTXC_STR_ABSENT};
    ctxc_entry_t e;
    for (int round = 0; round < 4; round++) {
        /* the history counts 7 per block except in round 0 (default) */
        ctxc_history_set_estimator(&hist, round == 0 ? NULL : per_block,
                                   round == 0 ? NULL : &seven);
        ctxc_plan_t plan;
        ctxc_plan_init(&plan, &work);
        assert_int_equal(ctxc_plan_keep(&plan, 0, 5, NULL), CTXC_OK);
        ctxc_estimate_fn fn = round == 0   ? per_block
                              : round == 1 ? NULL
                                           : per_block;
        void *user = round == 0 || round == 2 ? (void *)&nine
                     : round == 1             ? NULL
                                              : (void *)&seven;
        assert_int_equal(
            ctxc_plan_insert(&plan, &xin, fn, user, UINT32_MAX, NULL), CTXC_OK);
        if (round == 3) { /* counted by the right one, then changed */
            plan.ops[plan.count - 1].tokens = 1000;
            ctxc_plan_op_t copy = plan.ops[plan.count - 1];
            plan.ops[plan.count++] = copy; /* and one made by hand */
        }
        uint32_t want = round == 0 ? ctxc_estimate_text("X is new", 8) : 7;
        assert_int_equal(ctxc_history_apply_plan(&hist, &plan, NULL), CTXC_OK);
        assert_int_equal(ctxc_history_get(&hist, 5, &e), CTXC_OK);
        assert_int_equal(e.tokens, want);
        if (round == 3) {
            assert_int_equal(ctxc_history_get(&hist, 6, &e), CTXC_OK);
            assert_int_equal(e.tokens, want);
        }
        uint64_t sum = 0;
        for (size_t i = 0; i < ctxc_history_count(&hist); i++) {
            ctxc_history_get(&hist, i, &e);
            sum += e.tokens;
        }
        assert_int_equal(ctxc_history_tokens(&hist), sum);
        ctxc_history_remove_range(&hist, 5, ctxc_history_count(&hist), NULL);
    }
    ctxc_history_set_estimator(&hist, NULL, NULL);
}

static void test_plan_keep_merges_and_rejects_disorder(void **state) {
    (void)state;
    five_entries();
    ctxc_plan_t plan;
    ctxc_error_t err;
    ctxc_plan_init(&plan, &work);
    assert_int_equal(ctxc_plan_keep(&plan, 0, 2, NULL), CTXC_OK);
    assert_int_equal(ctxc_plan_keep(&plan, 2, 3, NULL), CTXC_OK);
    assert_int_equal(plan.count, 1); /* merged */
    assert_int_equal(ctxc_plan_keep(&plan, 1, 4, &err), CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_plan_keep(&plan, 4, 3, &err), CTXC_E_INVALID_ARG);
}

static void test_bad_plans_change_nothing(void **state) {
    (void)state;
    five_entries();
    t_snapshot(&hist, &snap);
    ctxc_plan_t plan;
    ctxc_error_t err;
    ctxc_plan_init(&plan, &work);
    plan.ops[0] = (ctxc_plan_op_t){.kind = CTXC_PLAN_KEEP, .from = 3, .to = 9};
    plan.count = 1;
    assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err),
                     CTXC_E_INVALID_ARG);
    t_assert_unchanged(&hist, &snap);
    plan.ops[0] =
        (ctxc_plan_op_t){.kind = CTXC_PLAN_INSERT, .offset = 0, .size = 999};
    assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err),
                     CTXC_E_INVALID_ARG);
    t_assert_unchanged(&hist, &snap);
    plan.ops[0] = (ctxc_plan_op_t){.kind = 7};
    assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err),
                     CTXC_E_INVALID_ARG);
    t_assert_unchanged(&hist, &snap);
}

static void test_plan_that_does_not_fit_changes_nothing(void **state) {
    (void)state;
    static ctxc_slot_t slots[4];
    static uint8_t arena[256];
    ctxc_history_t h;
    ctxc_history_init(&h, slots, 4, arena, sizeof arena, NULL);
    t_add_text(&h, CTXC_SPEAKER_HUMAN, "one");
    t_add_text(&h, CTXC_SPEAKER_AI, "two");
    t_snapshot(&h, &snap);
    static char big[300];
    memset(big, 'z', sizeof big - 1);
    ctxc_block_t b = t_text(big);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    ctxc_plan_t plan;
    ctxc_error_t err;
    ctxc_plan_init(&plan, &work);
    ctxc_plan_keep(&plan, 0, 2, NULL);
    assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, UINT32_MAX, NULL),
                     CTXC_OK);
    assert_int_equal(ctxc_history_apply_plan(&h, &plan, &err), CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, h.used + (14 + 299) - 256);
    t_assert_unchanged(&h, &snap);
    /* too many entries */
    ctxc_plan_init(&plan, &work);
    ctxc_plan_keep(&plan, 0, 2, NULL);
    ctxc_block_t s = t_text("s");
    ctxc_entry_in_t sin = {CTXC_SPEAKER_HUMAN, &s, 1, CTXC_STR_ABSENT};
    for (int i = 0; i < 3; i++) {
        ctxc_plan_insert(&plan, &sin, NULL, NULL, UINT32_MAX, NULL);
    }
    assert_int_equal(ctxc_history_apply_plan(&h, &plan, &err), CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
    t_assert_unchanged(&h, &snap);
}

static void test_plan_scratch_exhaustion(void **state) {
    (void)state;
    CTXC_WORK_DEFINE(tiny, 8, 256);
    ctxc_plan_t plan;
    ctxc_error_t err;
    ctxc_plan_init(&plan, &tiny);
    static char big[300];
    memset(big, 'q', sizeof big - 1);
    ctxc_block_t b = t_text(big);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, 0, &err),
                     CTXC_E_NO_SPACE);
    assert_non_null(strstr(err.message, "CTXC_CFG_WORK_SCRATCH_BYTES"));
    assert_int_equal(plan.count, 0);
    assert_int_equal(plan.scratch_used, 0);
}

/* ---- density results: validation and application ------------------------- */

static void replacement(ctxc_density_result_t *r, size_t index,
                        const char *text) {
    ctxc_block_t b = t_text(text);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    ctxc__entry_src_t src;
    assert_int_equal(ctxc__entry_src_from_in(&in, &src, NULL), CTXC_OK);
    assert_int_equal(ctxc__density_replace(r, index, &src, NULL, NULL, NULL),
                     CTXC_OK);
}

static void test_density_result_both_sets_is_an_error(void **state) {
    (void)state;
    five_entries();
    t_snapshot(&hist, &snap);
    ctxc_density_result_t r;
    ctxc_error_t err;
    ctxc__density_init(&r, &work);
    replacement(&r, 2, "new charlie");
    ctxc__density_remove(&r, 2, NULL);
    assert_int_equal(ctxc_density_apply(&hist, &r, &work, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(
        strstr(err.message, "entry 2 is both removed and replaced"));
    t_assert_unchanged(&hist, &snap);
}

static void test_density_result_out_of_range_or_twice(void **state) {
    (void)state;
    five_entries();
    t_snapshot(&hist, &snap);
    ctxc_density_result_t r;
    ctxc_error_t err;
    ctxc__density_init(&r, &work);
    ctxc__density_remove(&r, 5, NULL);
    assert_int_equal(ctxc_density_apply(&hist, &r, &work, &err), CTXC_E_RANGE);
    t_assert_unchanged(&hist, &snap);
    ctxc__density_init(&r, &work);
    replacement(&r, 7, "x");
    assert_int_equal(ctxc_density_apply(&hist, &r, &work, &err), CTXC_E_RANGE);
    t_assert_unchanged(&hist, &snap);
    ctxc__density_init(&r, &work);
    ctxc__density_remove(&r, 1, NULL);
    ctxc__density_remove(&r, 1, NULL);
    assert_int_equal(ctxc_density_apply(&hist, &r, &work, &err),
                     CTXC_E_INVALID_ARG);
    t_assert_unchanged(&hist, &snap);
    ctxc__density_init(&r, &work);
    replacement(&r, 3, "x");
    replacement(&r, 3, "y");
    assert_int_equal(ctxc_density_apply(&hist, &r, &work, &err),
                     CTXC_E_INVALID_ARG);
    t_assert_unchanged(&hist, &snap);
}

static void test_density_apply_replaces_then_removes(void **state) {
    (void)state;
    five_entries();
    ctxc_density_result_t r;
    ctxc__density_init(&r, &work);
    /* listed in any order; indexes refer to the history before the step */
    ctxc__density_remove(&r, 1, NULL);
    replacement(&r, 3, "DELTA");
    ctxc__density_remove(&r, 4, NULL);
    replacement(&r, 0, "ALPHA");
    assert_int_equal(ctxc_density_validate(&r, 5, work.marks, NULL), CTXC_OK);
    assert_int_equal(ctxc_density_apply(&hist, &r, &work, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 3);
    assert_string_equal(t_block_text(&hist, 0, 0), "ALPHA");
    assert_string_equal(t_block_text(&hist, 1, 0), "charlie");
    assert_string_equal(t_block_text(&hist, 2, 0), "DELTA");
    assert_int_equal(ctxc_history_tokens(&hist),
                     ctxc_estimate_text("ALPHA", 5) +
                         ctxc_estimate_text("charlie", 7) +
                         ctxc_estimate_text("DELTA", 5));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_one_list_of_names),
        cmocka_unit_test(test_table_properties),
        cmocka_unit_test(test_unknown_name_is_named_in_the_error),
        cmocka_unit_test_setup(test_worked_example_of_the_design, setup),
        cmocka_unit_test_setup(
            test_parallel_calls_in_one_tool_entry_and_non_adjacent, setup),
        cmocka_unit_test_setup(test_unpaired_input_does_not_block_splits,
                               setup),
        cmocka_unit_test_setup(test_boundary_memory_too_small, setup),
        cmocka_unit_test_setup(test_far_responses_split_as_the_scans_do, setup),
        cmocka_unit_test_setup(test_stats_pairing_with_and_without_an_index,
                               setup),
        cmocka_unit_test_setup(test_plan_keeps_inserts_and_drops, setup),
        cmocka_unit_test_setup(test_random_plans_place_every_entry, setup),
        cmocka_unit_test_setup(
            test_plan_inserts_counted_with_the_history_estimator, setup),
        cmocka_unit_test_setup(test_plan_keep_merges_and_rejects_disorder,
                               setup),
        cmocka_unit_test_setup(test_bad_plans_change_nothing, setup),
        cmocka_unit_test_setup(test_plan_that_does_not_fit_changes_nothing,
                               setup),
        cmocka_unit_test_setup(test_plan_scratch_exhaustion, setup),
        cmocka_unit_test_setup(test_density_result_both_sets_is_an_error,
                               setup),
        cmocka_unit_test_setup(test_density_result_out_of_range_or_twice,
                               setup),
        cmocka_unit_test_setup(test_density_apply_replaces_then_removes, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
