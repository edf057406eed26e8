/*
 * Firmware without a console (issue 13): a settings store built only from
 * typed calls on setting ids drives a session that compresses; strategies a
 * build lacks fail when selected and the default is one the build has;
 * storage placed in a section with the *_DEFINE_ATTR macros, or by hand
 * with ctxc_work_init(), works.
 *
 * Built against the full library (test_headless, asan_test_headless) and
 * against the headless one (headless_test_headless: CTXC_CFG_COMMANDS=0,
 * no LLM strategies; test/CMakeLists.txt) and the one without files
 * (nofile_test_headless: the same and CTXC_CFG_SETTINGS_FILE_BYTES=0).
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

/* A section with a C-identifier name: the linker gives its bounds as
 * __start_<name> / __stop_<name>. */
#define PLACED __attribute__((section("ctxc_test_ram")))
extern const uint8_t __start_ctxc_test_ram[];
extern const uint8_t __stop_ctxc_test_ram[];

#define ENTRIES 64
CTXC_HISTORY_DEFINE_ATTR(hist, ENTRIES, 16384, PLACED);
CTXC_WORK_DEFINE_ATTR(work, ENTRIES, 4096, PLACED __attribute__((aligned(32))));
static ctxc_settings_store_t set;
static ctxc_session_t s;

/* Memory for a work area set up by hand (ctxc_work_init), also placed. */
static uint8_t hand_mem[CTXC_WORK_BYTES(ENTRIES, 4096) + 3] PLACED;
static ctxc_work_t hand;

#define LINE "one two three four five six seven eight" /* 10 tokens */

/* The LLM-free strategy this test runs: one of the build. */
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
#define RUN_ID CTXC_STRATEGY_TOP_DOWN_TRUNCATION
#else
#define RUN_ID CTXC_STRATEGY_HIGH_DENSITY
#endif

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    return 0;
}

static bool placed(const void *p, size_t n) {
    const uint8_t *b = p;
    return b >= __start_ctxc_test_ram && b + n <= __stop_ctxc_test_ram;
}

/* Every value a session reads, set by id with typed calls: the session
 * compresses with them and keeps the history under its limit. */
static void run_typed_flow(ctxc_work_t *w) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_settings_set_enum_index(
                         &set, CTXC_SETTING_COMPRESSION_STRATEGY, RUN_ID, &err),
                     CTXC_OK);
    assert_int_equal(
        ctxc_settings_set_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, 200, &err),
        CTXC_OK);
    assert_int_equal(ctxc_settings_set_ratio(
                         &set, CTXC_SETTING_COMPRESSION_THRESHOLD, 600, &err),
                     CTXC_OK);
    assert_int_equal(
        ctxc_settings_set_ratio(
            &set, CTXC_SETTING_COMPRESSION_PRESERVE_THRESHOLD, 300, &err),
        CTXC_OK);
    assert_int_equal(
        ctxc_settings_set_bool(&set, CTXC_SETTING_DENSITY_RECENCY_PRUNING, true,
                               &err),
        CTXC_OK);
    assert_int_equal(ctxc_settings_set_u32(
                         &set, CTXC_SETTING_DENSITY_RECENCY_RETENTION, 2, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_session_init(&s, &hist, w, &set, &err), CTXC_OK);
    assert_int_equal(ctxc_session_check(&s, &err), CTXC_OK);
    uint16_t t = 0;
    assert_int_equal(ctxc_session_threshold(&s, &t, &err), CTXC_OK);
    assert_int_equal(t, 600);
    bool compressed = false;
    for (int i = 0; i < 40; i++) {
        ctxc_block_t b = t_text(LINE);
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b,
                              1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_session_add(&s, &in, &err), CTXC_OK);
        ctxc_send_report_t rep;
        assert_int_equal(ctxc_session_before_send(&s, 0, &rep, &err), CTXC_OK);
        compressed |= rep.compressed;
        assert_true(ctxc_history_tokens(&hist) <= 120u); /* 0.6 x 200 */
    }
    assert_true(compressed);
    assert_int_equal(s.last_compress.strategy, RUN_ID);
    assert_true(ctxc_history_count(&hist) < 40u);
}

static void test_a_store_of_typed_calls_drives_a_session(void **state) {
    (void)state;
    run_typed_flow(&work);
#if !CTXC_CFG_COMMANDS
    /* the text command layer and its help texts are not in this build */
    assert_int_equal(
        ctxc_settings_command(&set, "/set context-limit 1", NULL, NULL, NULL),
        CTXC_E_UNAVAILABLE);
    assert_null(ctxc_setting_spec(CTXC_SETTING_CONTEXT_LIMIT)->description);
#endif
    assert_int_equal(ctxc_settings_context_limit(&set), 200);
}

/* The history and work area of *_DEFINE_ATTR sit in the section the
 * attribute names, with the alignment it asks for. */
static void test_define_attr_places_the_storage(void **state) {
    (void)state;
    assert_true((uintptr_t)__stop_ctxc_test_ram >
                (uintptr_t)__start_ctxc_test_ram);
    assert_true(placed(hist.slots, ENTRIES * sizeof(ctxc_slot_t)));
    assert_true(placed(hist.arena, hist.arena_bytes));
    assert_true(placed(work.scratch, work.scratch_cap));
    assert_true(placed(work.map, ENTRIES * sizeof(uint16_t)));
    assert_true(placed(work.ops, (2 * ENTRIES + 2) * sizeof(ctxc_plan_op_t)));
    assert_int_equal((uintptr_t)work.scratch % 32u, 0);
    assert_int_equal((uintptr_t)hist.arena % 8u, 0);
    /* the control structs are ordinary data */
    assert_false(placed(&hist, sizeof hist));
    assert_false(placed(&work, sizeof work));
}

/* ctxc_work_init over hand-placed memory (any alignment) gives a work area
 * the session compresses with, like CTXC_WORK_DEFINE's. */
static void test_work_init_over_hand_placed_memory(void **state) {
    (void)state;
    ctxc_error_t err;
    uint8_t *mem = hand_mem + 3; /* not aligned */
    size_t bytes = sizeof hand_mem - 3u;
    assert_int_equal(
        ctxc_work_init(&hand, ENTRIES, 4096, mem, bytes - 1u, &err),
        CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
    assert_int_equal(ctxc_work_init(&hand, 0, 4096, mem, bytes, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_work_init(&hand, ENTRIES, 16, mem, bytes, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_work_init(&hand, ENTRIES, 4096, NULL, bytes, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_work_init(&hand, ENTRIES, 4096, mem, bytes, &err),
                     CTXC_OK);
    assert_int_equal(hand.cap, ENTRIES);
    assert_int_equal(hand.scratch_cap, 4096);
    assert_int_equal(hand.index_slots, work.index_slots);
    assert_int_equal((uintptr_t)hand.scratch % 8u, 0);
    assert_int_equal((uintptr_t)hand.ops % 8u, 0);
    assert_int_equal((uintptr_t)hand.removals % 4u, 0);
    /* the parts do not overlap and stay inside the memory */
    const uint8_t *lo = mem, *hi = mem + bytes;
    const struct {
        const void *p;
        size_t n;
    } parts[] = {
        {hand.map, ENTRIES * 2u},
        {hand.boundary, (ENTRIES + 1u) * 2u},
        {hand.marks, ENTRIES * 2u},
        {hand.removals, ENTRIES * 4u},
        {hand.ops, (2u * ENTRIES + 2u) * sizeof(ctxc_plan_op_t)},
        {hand.replacements, ENTRIES * sizeof(ctxc_plan_op_t)},
        {hand.scratch, 4096},
        {hand.index, 2u * hand.index_slots * CTXC_WORK_INDEX_SLOT_BYTES},
    };
    size_t np = sizeof parts / sizeof parts[0];
    for (size_t i = 0; i < np; i++) {
        const uint8_t *a = parts[i].p;
        assert_true(a >= lo && a + parts[i].n <= hi);
        for (size_t j = i + 1; j < np; j++) {
            const uint8_t *b = parts[j].p;
            assert_true(a + parts[i].n <= b || b + parts[j].n <= a);
        }
    }
    run_typed_flow(&hand);
}

/* The default of compression.strategy is a strategy of this build; a
 * build without the LLM strategies refuses them when they are selected,
 * naming what it has; with them, a session without an LLM resolver
 * refuses them at that moment. */
static void test_strategies_the_build_or_session_lacks(void **state) {
    (void)state;
    ctxc_error_t err;
    const ctxc_strategy_t *st = NULL;
    assert_int_equal(ctxc_settings_strategy(&set, &st, &err), CTXC_OK);
    assert_string_equal(st->name, CTXC_CFG_DEFAULT_STRATEGY);
#if !CTXC_CFG_STRATEGY_MIDDLE_OUT && !CTXC_CFG_STRATEGY_ONE_SHOT
    assert_false(st->requires_llm); /* a default that runs */
    assert_int_equal(ctxc_settings_set_enum(&set,
                                            CTXC_SETTING_COMPRESSION_STRATEGY,
                                            "middle-out", &err),
                     CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "'middle-out'"));
    assert_non_null(strstr(err.message, ctxc_strategy_names[RUN_ID]));
    assert_int_equal(
        ctxc_settings_set_enum_index(&set, CTXC_SETTING_COMPRESSION_STRATEGY,
                                     CTXC_STRATEGY_ONE_SHOT, &err),
        CTXC_E_UNKNOWN_STRATEGY);
    assert_non_null(strstr(err.message, "'one-shot'"));
    /* a session on the fresh store runs without any LLM */
    assert_int_equal(
        ctxc_settings_set_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, 1000, &err),
        CTXC_OK);
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, &err), CTXC_OK);
    assert_int_equal(ctxc_session_before_send(&s, 0, NULL, &err), CTXC_OK);
#else
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, &err), CTXC_OK);
    assert_int_equal(ctxc_settings_set_enum_index(
                         &set, CTXC_SETTING_COMPRESSION_STRATEGY, RUN_ID, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_settings_set_enum(&set,
                                            CTXC_SETTING_COMPRESSION_STRATEGY,
                                            "middle-out", &err),
                     CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "'middle-out' needs an LLM"));
    assert_non_null(strstr(err.message, ctxc_strategy_names[RUN_ID]));
    assert_int_equal(ctxc_settings_enum(&set, CTXC_SETTING_COMPRESSION_STRATEGY,
                                        &(uint32_t){0}),
                     true);
    assert_string_equal(
        ctxc_settings_string(&set, CTXC_SETTING_COMPRESSION_STRATEGY),
        ctxc_strategy_names[RUN_ID]);
#endif
}

/* The minimum of CTXC_CFG_SETTINGS_FILE_BYTES that the static assertion's
 * message states (1339 + 10 x CTXC_CFG_SETTINGS_VALUE_BYTES) is the one the
 * build checks: a new setting that changes it fails here until the message
 * (ctxc/settings.h) says the new figure. */
static void test_settings_file_minimum_as_stated(void **state) {
    (void)state;
    assert_int_equal(CTXC_SETTINGS_FILE_MIN_BYTES,
                     1339u + 10u * (unsigned)CTXC_CFG_SETTINGS_VALUE_BYTES);
}

/* CTXC_CFG_SETTINGS_FILE_BYTES=0: a store with no file buffer, which never
 * touches a filesystem (a device without one): a settings.json there is
 * not read, a profile not written; the values set by calls work. */
static void test_store_without_a_file_buffer(void **state) {
    (void)state;
#if CTXC_CFG_SETTINGS_FILE_BYTES == 0
    static mem_fs_t mfs;
    memset(&mfs, 0, sizeof mfs);
    ctxc_fs_t fs = mem_fs(&mfs);
    mem_put(&mfs, "settings.json", "{\"context-limit\": 5}\n");
    ctxc_error_t err;
    ctxc_settings_init(&set, &fs);
    assert_int_equal(ctxc_settings_load(&set, &err), CTXC_OK);
    assert_int_equal(ctxc_settings_context_limit(&set), 0); /* not read */
    assert_int_equal(
        ctxc_settings_set_u32(&set, CTXC_SETTING_CONTEXT_LIMIT, 1000, &err),
        CTXC_OK);
    assert_int_equal(ctxc_settings_context_limit(&set), 1000);
    assert_int_not_equal(ctxc_settings_profile_save(&set, "p", NULL, &err),
                         CTXC_OK);
    assert_null(mem_find(&mfs, "profiles/p.json"));
    /* the store is the two layers and little else: no 2 KiB buffer */
    assert_true(sizeof(ctxc_settings_store_t) <
                2u * sizeof(ctxc_settings_layer_t) + sizeof(ctxc_error_t) +
                    128u);
#else
    skip();
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_settings_file_minimum_as_stated),
        cmocka_unit_test(test_store_without_a_file_buffer),
        cmocka_unit_test_setup(test_a_store_of_typed_calls_drives_a_session,
                               setup),
        cmocka_unit_test_setup(test_define_attr_places_the_storage, setup),
        cmocka_unit_test_setup(test_work_init_over_hand_placed_memory, setup),
        cmocka_unit_test_setup(test_strategies_the_build_or_session_lacks,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
