/*
 * The three limits of a history (issue 36): compression is due when the
 * tokens, the entry slots or the arena bytes near their end
 * (compression-threshold, compression.entries-threshold,
 * compression.bytes-threshold, with compression.reserve-entries /
 * reserve-bytes counted as used); the strategy frees the limit that
 * triggered down to capacity x threshold x 0.6; pinned entries that alone
 * break a limit fail with the limit named and nothing changed; the report
 * says which limit triggered and whether the history changed;
 * ctxc_session_add_room appends with room made first, network-free.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION || CTXC_CFG_STRATEGY_HIGH_DENSITY

CTXC_HISTORY_DEFINE(hist, 64, 32768);        /* slots run out first */
CTXC_HISTORY_DEFINE(bhist, 64, 4096);        /* bytes run out first */
CTXC_WORK_DEFINE(work, 64, 16384);
static ctxc_settings_store_t set;
static ctxc_session_t s;
static t_snap_t snap;

/* The LLM-free strategies of this build. */
static const char *const llm_free[] = {
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    "top-down-truncation",
#endif
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
    "high-density",
#endif
};
#define N_LLM_FREE (sizeof llm_free / sizeof llm_free[0])

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_history_clear(&bhist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "context-limit", "100000"); /* tokens never the limit */
    return 0;
}

static void start(ctxc_history_t *h, const char *strategy) {
    t_set(&set, "compression.strategy", strategy);
    assert_int_equal(ctxc_session_init(&s, h, &work, &set, NULL), CTXC_OK);
}

/* One short line ("turn N"): few tokens, few bytes. */
static void add_short(ctxc_history_t *h, unsigned i) {
    char text[32];
    snprintf(text, sizeof text, "turn %u", i);
    t_add_text(h, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
}

/* One entry of a 200-byte metadata pad and one word: bytes, no tokens. */
static ctxc_status_t add_padded(ctxc_history_t *h, unsigned i, bool room,
                                ctxc_send_report_t *rep, ctxc_error_t *err) {
    static char meta[256];
    char pad[201];
    memset(pad, 'p', 200);
    pad[200] = '\0';
    snprintf(meta, sizeof meta, "{\"n\":%u,\"pad\":\"%s\"}", i, pad);
    ctxc_block_t b = t_text("ok");
    ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b, 1,
                          ctxc_str(meta)};
    if (room) {
        return ctxc_session_add_room(&s, &in, rep, err);
    }
    (void)h;
    return ctxc_session_add(&s, &in, err);
}

static void send_ok(uint64_t pending, ctxc_send_report_t *rep) {
    ctxc_error_t err;
    if (ctxc_session_before_send(&s, pending, rep, &err) != CTXC_OK) {
        fail_msg("before_send: %s", err.message);
    }
}

/* ---- the entry slots ------------------------------------------------------ */

/* 64 slots, threshold 0.9, reserve 4: due when the count + 4 passes 57.6,
 * that is from 54 entries on; freed down to 64 x 0.9 x 0.6 = 34 entries. */
static void test_slots_trigger_and_are_freed(void **state) {
    (void)state;
    for (size_t k = 0; k < N_LLM_FREE; k++) {
        setup(NULL);
        start(&hist, llm_free[k]);
        for (unsigned i = 0; i < 53; i++) {
            add_short(&hist, i);
        }
        ctxc_send_report_t rep;
        send_ok(0, &rep);
        assert_int_equal(rep.trigger, 0);
        assert_false(rep.compressed);
        assert_int_equal(ctxc_history_count(&hist), 53);
        add_short(&hist, 53);
        t_snapshot(&hist, &snap);
        send_ok(0, &rep);
        assert_int_equal(rep.trigger, CTXC_LIMIT_ENTRIES);
        assert_true(rep.compressed);
        assert_false(rep.emergency);
        size_t n = ctxc_history_count(&hist);
        assert_true(n <= 34);
        assert_true(n >= 30); /* no more than needed (and a valid cut) */
        /* the newest entries, verbatim */
        assert_string_equal(t_block_text(&hist, n - 1, 0), "turn 53");
        assert_int_equal(s.last_compress.trigger, CTXC_LIMIT_ENTRIES);
        assert_int_equal(s.last_compress.entries_before, 54);
        assert_int_equal(s.last_compress.entries_after, n);
        assert_int_equal(s.last_compress.entries_dropped, 54 - n);
        assert_true(s.last_compress.bytes_after <
                    s.last_compress.bytes_before);
        ctxc_session_deinit(&s);
    }
}

/* The thresholds and the reserve are settings, read at each call. */
static void test_slot_settings_apply(void **state) {
    (void)state;
    start(&hist, llm_free[0]);
    for (unsigned i = 0; i < 40; i++) {
        add_short(&hist, i);
    }
    ctxc_send_report_t rep;
    send_ok(0, &rep);
    assert_int_equal(rep.trigger, 0);
    t_set(&set, "compression.entries-threshold", "0.5"); /* 32 */
    send_ok(0, &rep);
    assert_int_equal(rep.trigger, CTXC_LIMIT_ENTRIES);
    assert_true(ctxc_history_count(&hist) <= 19); /* 64 x 0.5 x 0.6 */
    /* a reserve as large as the slots: due at once, an emergency */
    t_set(&set, "compression.entries-threshold", "0.9");
    t_set(&set, "compression.reserve-entries", "64");
    send_ok(0, &rep);
    assert_true(rep.emergency);
    assert_true(rep.trigger & CTXC_LIMIT_ENTRIES);
}

/* ---- the arena bytes ------------------------------------------------------ */

/* 4096 bytes, threshold 0.9, reserve 512: due when the bytes + 512 pass
 * 3686; freed down to 4096 x 0.9 x 0.6 = 2211 bytes. Entries of a few
 * tokens: neither the tokens nor the slots are near their end. */
static void test_bytes_trigger_and_are_freed(void **state) {
    (void)state;
    for (size_t k = 0; k < N_LLM_FREE; k++) {
        setup(NULL);
        t_set(&set, "compression.reserve-bytes", "512");
        start(&bhist, llm_free[k]);
        ctxc_send_report_t rep;
        ctxc_error_t err;
        unsigned i = 0;
        ctxc_history_usage_t u;
        do {
            assert_int_equal(add_padded(&bhist, i++, false, NULL, &err),
                             CTXC_OK);
            send_ok(0, &rep);
            ctxc_history_usage(&bhist, &u);
        } while (!rep.compressed && i < 40);
        assert_true(rep.compressed);
        assert_int_equal(rep.trigger, CTXC_LIMIT_BYTES);
        assert_true(s.last_compress.bytes_before + 512u > 3686u);
        assert_true(u.bytes_used <= 2211u);
        assert_true(s.last_compress.entries_dropped > 0);
        /* the one before the compression did not trigger */
        assert_true(s.last_compress.bytes_before - 230u + 512u <= 3686u);
        ctxc_session_deinit(&s);
    }
}

/* ---- the pinned entries --------------------------------------------------- */

/* 40 pinned of 54 entries: the slot target is 34, the pinned alone take
 * 40: the strategy fails naming the limit and by how much, and nothing
 * changes. */
static void test_pinned_entries_over_the_slot_target(void **state) {
    (void)state;
    for (size_t k = 0; k < N_LLM_FREE; k++) {
        setup(NULL);
        start(&hist, llm_free[k]);
        ctxc_error_t err;
        for (unsigned i = 0; i < 54; i++) {
            add_short(&hist, i);
            if (i < 40) {
                assert_int_equal(ctxc_history_pin(&hist, i, true, &err),
                                 CTXC_OK);
            }
        }
        t_snapshot(&hist, &snap);
        assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_TOO_LARGE);
        assert_non_null(strstr(err.message, "pinned entries alone take 40 "
                                            "entries, 6 over the target of "
                                            "34"));
        assert_non_null(strstr(err.message, "compression.entries-threshold"));
        t_assert_unchanged(&hist, &snap);
        ctxc_send_report_t rep;
        assert_int_equal(ctxc_session_before_send(&s, 0, &rep, &err),
                         CTXC_E_TOO_LARGE);
        t_assert_unchanged(&hist, &snap);
        /* 30 pinned: the target holds, the 24 unpinned go but for 4 */
        for (unsigned i = 30; i < 40; i++) {
            assert_int_equal(ctxc_history_pin(&hist, i, false, &err), CTXC_OK);
        }
        send_ok(0, &rep);
        assert_true(rep.compressed);
        size_t n = ctxc_history_count(&hist);
        assert_true(n <= 34);
        size_t pinned = 0;
        for (size_t j = 0; j < n; j++) {
            ctxc_entry_t e;
            (void)ctxc_history_get(&hist, j, &e);
            pinned += (e.flags & CTXC_ENTRY_PINNED) != 0;
        }
        assert_int_equal(pinned, 30);
        assert_string_equal(t_block_text(&hist, 0, 0), "turn 0");
        assert_string_equal(t_block_text(&hist, n - 1, 0), "turn 53");
        ctxc_session_deinit(&s);
    }
}

static void test_pinned_entries_over_the_byte_target(void **state) {
    (void)state;
    t_set(&set, "compression.reserve-bytes", "512"); /* target 2211 */
    start(&bhist, llm_free[0]);
    ctxc_error_t err;
    for (unsigned i = 0; i < 15; i++) {
        assert_int_equal(add_padded(&bhist, i, false, NULL, &err), CTXC_OK);
        if (i < 11) { /* 11 x 230 bytes > 2211 */
            assert_int_equal(ctxc_history_pin(&bhist, i, true, &err), CTXC_OK);
        }
    }
    t_snapshot(&bhist, &snap);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_E_TOO_LARGE);
    assert_non_null(strstr(err.message, "arena bytes"));
    assert_non_null(strstr(err.message, "over the target of 2211"));
    t_assert_unchanged(&bhist, &snap);
}

/* ---- the report ----------------------------------------------------------- */

/* A strategy that runs and finds nothing to free leaves `compressed`
 * false (the metadata says unchanged); the tokens trigger is reported. */
static void test_compressed_only_when_changed(void **state) {
    (void)state;
    for (size_t k = 0; k < N_LLM_FREE; k++) {
        setup(NULL);
        t_set(&set, "context-limit", "20");
        start(&hist, llm_free[k]);
        t_add_text(&hist, CTXC_SPEAKER_HUMAN,
                   "one two three four five six seven eight nine ten");
        t_add_text(&hist, CTXC_SPEAKER_AI,
                   "one two three four five six seven eight nine ten");
        ctxc_send_report_t rep;
        send_ok(0, &rep); /* 26 tokens > 17, but two entries always stay */
        assert_int_equal(rep.trigger, CTXC_LIMIT_TOKENS);
        assert_true(rep.emergency);
        assert_false(rep.compressed);
        assert_true(s.last_compress.unchanged);
        assert_int_equal(ctxc_history_count(&hist), 2);
        ctxc_session_deinit(&s);
    }
}

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
/* Plain voice turns give high-density nothing to summarise: it meets the
 * token target by dropping the oldest turns and says so. */
static void test_high_density_meets_the_token_target_without_tools(
    void **state) {
    (void)state;
    t_set(&set, "context-limit", "200");
    start(&hist, "high-density");
    for (unsigned i = 0; i < 30; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                   "one two three four five six seven eight"); /* 10 */
    }
    ctxc_send_report_t rep;
    send_ok(0, &rep);
    assert_int_equal(rep.trigger, CTXC_LIMIT_TOKENS);
    assert_true(rep.compressed);
    /* target 200 x 0.85 x 0.6 = 102: ten entries (100) stay */
    assert_int_equal(ctxc_history_count(&hist), 10);
    assert_int_equal(s.last_compress.entries_dropped, 20);
    assert_int_equal(s.last_compress.middle_compressed, 20);
    assert_int_equal(s.last_compress.tokens_after, 100);
    send_ok(0, &rep); /* under the threshold now */
    assert_int_equal(rep.trigger, 0);
    assert_false(rep.compressed);
}

/* Tool pairs at the slot limit: the one-line summaries free no slot, the
 * oldest pairs go whole (no call without its result). */
static void test_high_density_frees_slots_of_tool_pairs(void **state) {
    (void)state;
    start(&hist, "high-density");
    ctxc_error_t err;
    for (unsigned i = 0; i < 18; i++) {
        char id[16];
        snprintf(id, sizeof id, "c%u", i);
        ctxc_block_t call = t_call(id, "run_shell_command",
                                   "{\"command\":\"make\"}");
        ctxc_block_t resp = t_resp(id, "run_shell_command",
                                   "\"cc -c a.c\\ncc -c b.c\\nld -o x a.o "
                                   "b.o\\nall tests passed\"",
                                   NULL);
        add_short(&hist, 2 * i);
        t_add(&hist, CTXC_SPEAKER_AI, &call, 1);
        t_add(&hist, CTXC_SPEAKER_TOOL, &resp, 1);
    }
    assert_int_equal(ctxc_history_count(&hist), 54);
    ctxc_send_report_t rep;
    assert_int_equal(ctxc_session_before_send(&s, 0, &rep, &err), CTXC_OK);
    assert_int_equal(rep.trigger, CTXC_LIMIT_ENTRIES);
    assert_true(ctxc_history_count(&hist) <= 34);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
}
#endif

/* ---- add_room -------------------------------------------------------------- */

static ctxc_status_t add_room_text(const char *text, ctxc_send_report_t *rep,
                                   ctxc_error_t *err) {
    ctxc_block_t b = t_text(text);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    return ctxc_session_add_room(&s, &in, rep, err);
}

/* The slots full: a plain add fails, add_room makes room and appends. */
static void test_add_room_when_the_slots_are_full(void **state) {
    (void)state;
    for (size_t k = 0; k < N_LLM_FREE; k++) {
        setup(NULL);
        start(&hist, llm_free[k]);
        for (unsigned i = 0; i < 64; i++) {
            add_short(&hist, i);
        }
        ctxc_error_t err;
        ctxc_block_t b = t_text("one more");
        ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_session_add(&s, &in, &err), CTXC_E_NO_SPACE);
        ctxc_send_report_t rep;
        assert_int_equal(add_room_text("one more", &rep, &err), CTXC_OK);
        assert_true(rep.compressed);
        assert_true(rep.trigger & CTXC_LIMIT_ENTRIES);
        assert_null(rep.fallback);
        size_t n = ctxc_history_count(&hist);
        assert_true(n <= 35);
        assert_string_equal(t_block_text(&hist, n - 1, 0), "one more");
        assert_string_equal(t_block_text(&hist, n - 2, 0), "turn 63");
        /* room now: the next one is appended without a compression */
        assert_int_equal(add_room_text("and another", &rep, &err), CTXC_OK);
        assert_false(rep.compressed);
        assert_int_equal(ctxc_history_count(&hist), n + 1);
        ctxc_session_deinit(&s);
    }
}

/* The arena full (slots to spare): add_room makes room in bytes. */
static void test_add_room_when_the_arena_is_full(void **state) {
    (void)state;
    start(&bhist, llm_free[0]);
    ctxc_error_t err;
    unsigned i = 0;
    while (add_padded(&bhist, i, false, NULL, &err) == CTXC_OK && i < 64) {
        i++;
    }
    assert_int_equal(err.status, CTXC_E_NO_SPACE);
    assert_true(ctxc_history_count(&bhist) < 64);
    ctxc_send_report_t rep;
    assert_int_equal(add_padded(&bhist, i, true, &rep, &err), CTXC_OK);
    assert_true(rep.compressed);
    assert_true(rep.trigger & CTXC_LIMIT_BYTES);
    ctxc_history_usage_t u;
    ctxc_history_usage(&bhist, &u);
    assert_true(u.bytes_used <= 2211u + 240u);
}

/* An entry larger than the whole arena: no compression can make room;
 * nothing changes. */
static void test_add_room_of_an_entry_larger_than_the_arena(void **state) {
    (void)state;
    start(&bhist, llm_free[0]);
    ctxc_error_t err;
    for (unsigned i = 0; i < 10; i++) {
        assert_int_equal(add_padded(&bhist, i, false, NULL, &err), CTXC_OK);
    }
    static char big[5000];
    memset(big, 'w', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    t_snapshot(&bhist, &snap);
    ctxc_send_report_t rep;
    assert_int_equal(add_room_text(big, &rep, &err), CTXC_E_NO_SPACE);
    assert_non_null(strstr(err.message, "the whole arena has 4096"));
    assert_true(err.needed > 0);
    assert_false(rep.compressed);
    t_assert_unchanged(&bhist, &snap);
}

/* An entry of 60 % of the arena into a full one: the byte target is
 * lowered below 0.54 of the arena so that it fits. */
static void test_add_room_of_a_large_entry(void **state) {
    (void)state;
    start(&bhist, llm_free[0]);
    ctxc_error_t err;
    unsigned i = 0;
    while (add_padded(&bhist, i, false, NULL, &err) == CTXC_OK && i < 64) {
        i++;
    }
    static char big[2500];
    memset(big, 'w', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    ctxc_send_report_t rep;
    assert_int_equal(add_room_text(big, &rep, &err), CTXC_OK);
    assert_true(rep.compressed);
    size_t n = ctxc_history_count(&bhist);
    assert_string_equal(t_block_text(&bhist, n - 1, 0), big);
    assert_true(n >= 2); /* the entries before it that fit stay */
}

/* Pinned entries hold every slot: the strategy's error comes back and
 * nothing changes. */
static void test_add_room_with_every_slot_pinned(void **state) {
    (void)state;
    start(&hist, llm_free[0]);
    ctxc_error_t err;
    for (unsigned i = 0; i < 64; i++) {
        add_short(&hist, i);
        assert_int_equal(ctxc_history_pin(&hist, i, true, &err), CTXC_OK);
    }
    t_snapshot(&hist, &snap);
    ctxc_send_report_t rep;
    assert_int_equal(add_room_text("no room", &rep, &err), CTXC_E_TOO_LARGE);
    assert_non_null(strstr(err.message, "pinned entries alone take 64"));
    t_assert_unchanged(&hist, &snap);
}

/* ---- records staged in the arena's free tail ------------------------------ */

/* A plan whose inserted records are staged in the arena's free tail (as the
 * session's network-free steps stage them) and whose new history is longer
 * than the old one, so the kept records moving up would run over the
 * staged bytes: they are moved out of the way first. Inserted before and
 * after the kept entries; and an arena too small for both: NO_SPACE,
 * nothing changed. */
static void test_plan_staged_in_the_arena_tail(void **state) {
    (void)state;
    for (int before = 0; before < 2; before++) {
        setup(NULL);
        for (unsigned i = 0; i < 3; i++) {
            add_short(&bhist, i);
        }
        static t_dump_t old;
        t_dump(&bhist, &old);
        ctxc_plan_t plan;
        ctxc_plan_init(&plan, &work);
        size_t at = (bhist.used + 7u) & ~(size_t)7u;
        plan.scratch = bhist.arena + at;
        plan.scratch_cap = bhist.arena_bytes - at;
        ctxc_block_t b = t_text("a new entry, staged in the arena's tail");
        ctxc_entry_in_t in = {CTXC_SPEAKER_AI, &b, 1, CTXC_STR_ABSENT};
        ctxc_error_t err;
        if (!before) {
            assert_int_equal(ctxc_plan_keep(&plan, 0, 3, &err), CTXC_OK);
        }
        assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, UINT32_MAX,
                                          &err),
                         CTXC_OK);
        if (before) {
            assert_int_equal(ctxc_plan_keep(&plan, 0, 3, &err), CTXC_OK);
        }
        assert_int_equal(ctxc_history_apply_plan(&bhist, &plan, &err),
                         CTXC_OK);
        assert_int_equal(ctxc_history_count(&bhist), 4);
        size_t k = before ? 0 : 3;
        assert_string_equal(t_block_text(&bhist, k, 0),
                            "a new entry, staged in the arena's tail");
        for (unsigned i = 0; i < 3; i++) {
            char want[16];
            snprintf(want, sizeof want, "turn %u", i);
            assert_string_equal(t_block_text(&bhist, before + i, 0), want);
        }
        assert_true(strstr(old.buf, "turn 2") != NULL);
    }
    /* no room for the new history beside the staged bytes */
    setup(NULL);
    for (unsigned i = 0; i < 3; i++) {
        add_short(&bhist, i);
    }
    size_t at = (bhist.used + 7u) & ~(size_t)7u;
    ctxc_plan_t plan;
    ctxc_plan_init(&plan, &work);
    plan.scratch = bhist.arena + at;
    plan.scratch_cap = bhist.arena_bytes - at;
    static char big[1400];
    memset(big, 'b', sizeof big - 1);
    ctxc_block_t b = t_text(big);
    ctxc_entry_in_t in = {CTXC_SPEAKER_AI, &b, 1, CTXC_STR_ABSENT};
    ctxc_error_t err;
    assert_int_equal(ctxc_plan_keep(&plan, 0, 3, &err), CTXC_OK);
    for (int i = 0; i < 2; i++) { /* 2 x 1400 staged, 2 x 1400 more kept */
        assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, UINT32_MAX,
                                          &err),
                         CTXC_OK);
    }
    t_snapshot(&bhist, &snap);
    assert_int_equal(ctxc_history_apply_plan(&bhist, &plan, &err),
                     CTXC_E_NO_SPACE);
    assert_non_null(strstr(err.message, "staged bytes"));
    t_assert_unchanged(&bhist, &snap);
}

/* The session's high-density steps with a work area of 256 bytes of
 * scratch over a voice-like stream: the arena's free tail holds what they
 * insert, before_send keeps it free, nothing fails. */
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
CTXC_WORK_DEFINE(tiny, 64, 256);
static void test_a_tiny_scratch_is_enough_with_a_free_tail(void **state) {
    (void)state;
    t_set(&set, "context-limit", "600");
    t_set(&set, "compression.strategy", "high-density");
    assert_int_equal(ctxc_session_init(&s, &hist, &tiny, &set, NULL), CTXC_OK);
    ctxc_error_t err;
    unsigned summarised = 0;
    for (unsigned i = 0; i < 300; i++) {
        char id[16], out[200];
        snprintf(id, sizeof id, "c%u", i);
        snprintf(out, sizeof out,
                 "\"light %u on in the kitchen, the living room and the hall; "
                 "all other lights stay as they were\"",
                 i);
        ctxc_block_t call = t_call(id, "smart_home", "{\"command\":\"on\"}");
        ctxc_block_t resp = t_resp(id, "smart_home", out, NULL);
        ctxc_block_t text = t_text("turn the lights on please");
        ctxc_entry_in_t ins[3] = {{CTXC_SPEAKER_HUMAN, &text, 1, {0}},
                                  {CTXC_SPEAKER_AI, &call, 1, {0}},
                                  {CTXC_SPEAKER_TOOL, &resp, 1, {0}}};
        for (int k = 0; k < 3; k++) {
            ctxc_send_report_t rep;
            if (ctxc_session_before_send(&s, 20, &rep, &err) != CTXC_OK ||
                ctxc_session_add_room(&s, &ins[k], &rep, &err) != CTXC_OK) {
                fail_msg("turn %u: %s", i, err.message);
            }
        }
        if (s.last_compress.middle_compressed > s.last_compress.entries_dropped) {
            summarised++;
        }
    }
    assert_true(summarised > 0); /* summaries were written, in the tail */
}
#endif

#if CTXC_CFG_STRATEGY_MIDDLE_OUT
/* ---- an LLM strategy: add_room never waits for the network ---------------- */

static void test_add_room_with_an_llm_strategy_falls_back(void **state) {
    (void)state;
    static const char *const on_limit[] = {"wait", "high-density"};
    for (size_t k = 0; k < 2; k++) {
        setup(NULL);
        ctxc_session_init(&s, &hist, &work, &set, NULL);
        ctxc_session_set_llm_resolver(&s, t_model_resolve, NULL);
        t_set(&set, "compression.strategy", "middle-out");
        t_set(&set, "compression.on-limit", on_limit[k]);
        for (unsigned i = 0; i < 64; i++) {
            add_short(&hist, i);
        }
        t_model()->calls = 0;
        ctxc_send_report_t rep;
        ctxc_error_t err;
        assert_int_equal(add_room_text("one more", &rep, &err), CTXC_OK);
        assert_int_equal(t_model()->calls, 0);
        assert_int_equal(rep.job, CTXC_SEND_JOB_FALLBACK);
        assert_string_equal(rep.fallback, k == 0 ? "top-down-truncation"
                                                 : "high-density");
        assert_true(rep.compressed);
        assert_non_null(s.last_compress.fallback);
        assert_string_equal(
            t_block_text(&hist, ctxc_history_count(&hist) - 1, 0), "one more");
        ctxc_session_deinit(&s);
    }
}

/* The prefetch job starts on the slots too, and its result says so. */
static void test_prefetch_on_the_slots(void **state) {
    (void)state;
    ctxc_session_init(&s, &hist, &work, &set, NULL);
    ctxc_session_set_llm_resolver(&s, t_model_resolve, NULL);
    t_set(&set, "compression.strategy", "middle-out");
    t_set(&set, "compression.prefetch-threshold", "0.5");
    for (unsigned i = 0; i < 29; i++) { /* 29 + 4 > 32 */
        add_short(&hist, i);
    }
    ctxc_send_report_t rep;
    send_ok(0, &rep);
    assert_int_equal(rep.job, CTXC_SEND_JOB_STARTED);
    t_model()->calls = 0;
    send_ok(0, &rep); /* its poll makes the call and applies it */
    assert_int_equal(rep.job, CTXC_SEND_JOB_APPLIED);
    assert_int_equal(t_model()->calls, 1);
    assert_true(rep.compressed);
    assert_int_equal(rep.trigger, CTXC_LIMIT_ENTRIES);
    assert_int_equal(s.last_compress.trigger, CTXC_LIMIT_ENTRIES);
    assert_true(ctxc_history_count(&hist) < 29);
    ctxc_session_deinit(&s);
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_slots_trigger_and_are_freed, setup),
        cmocka_unit_test_setup(test_slot_settings_apply, setup),
        cmocka_unit_test_setup(test_bytes_trigger_and_are_freed, setup),
        cmocka_unit_test_setup(test_pinned_entries_over_the_slot_target,
                               setup),
        cmocka_unit_test_setup(test_pinned_entries_over_the_byte_target,
                               setup),
        cmocka_unit_test_setup(test_compressed_only_when_changed, setup),
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test_setup(
            test_high_density_meets_the_token_target_without_tools, setup),
        cmocka_unit_test_setup(test_high_density_frees_slots_of_tool_pairs,
                               setup),
#endif
        cmocka_unit_test_setup(test_add_room_when_the_slots_are_full, setup),
        cmocka_unit_test_setup(test_add_room_when_the_arena_is_full, setup),
        cmocka_unit_test_setup(test_add_room_of_an_entry_larger_than_the_arena,
                               setup),
        cmocka_unit_test_setup(test_add_room_of_a_large_entry, setup),
        cmocka_unit_test_setup(test_add_room_with_every_slot_pinned, setup),
        cmocka_unit_test_setup(test_plan_staged_in_the_arena_tail, setup),
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test_setup(test_a_tiny_scratch_is_enough_with_a_free_tail,
                               setup),
#endif
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
        cmocka_unit_test_setup(test_add_room_with_an_llm_strategy_falls_back,
                               setup),
        cmocka_unit_test_setup(test_prefetch_on_the_slots, setup),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
int main(void) {
    return 0; /* no LLM-free strategy in this build */
}
#endif
