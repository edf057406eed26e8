/*
 * The pairing rule of the store (src/pairing.c): where tool calls and tool
 * responses may live, one call and one response per id, the response after
 * its call; append, replace, import and plans all keep it, with and without
 * the id index, and a refused change leaves the store byte-identical.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

CTXC_HISTORY_DEFINE(hist, 128, 32768);
CTXC_WORK_DEFINE(work, 128, 8192);

/* Index modes every case runs in: none (scans, or the id filter
 * CTXC_HISTORY_DEFINE gives the history ruling them out), none and no
 * filter, a filter of one byte (it rules nothing out), a roomy index, and
 * one too small for the history (full: falls back to scans mid-way). */
enum {
    MODE_NONE,
    MODE_NO_FILTER,
    MODE_TINY_FILTER,
    MODE_INDEX,
    MODE_TINY,
    MODE_COUNT
};
static uint32_t ids_mem[CTXC_HISTORY_ID_INDEX_BYTES(128) / 4];

static void reset(int mode) {
    ctxc_history_clear(&hist);
    ctxc_history_set_id_filter(&hist, hist_idf_,
                               mode == MODE_NO_FILTER     ? 0
                               : mode == MODE_TINY_FILTER ? 1
                                                          : sizeof hist_idf_);
    if (mode < MODE_INDEX) {
        ctxc_history_set_id_index(&hist, NULL, 0);
    } else {
        ctxc_history_set_id_index(&hist, ids_mem,
                                  mode == MODE_INDEX ? sizeof ids_mem
                                                     : 8u * 16u + 3u);
    }
}

static ctxc_status_t put(ctxc_speaker_t sp, const ctxc_block_t *b, size_t n,
                         ctxc_error_t *err) {
    ctxc_entry_in_t in = {sp, b, n, CTXC_STR_ABSENT};
    return ctxc_history_append(&hist, &in, err);
}

static ctxc_status_t call(const char *id, ctxc_error_t *err) {
    ctxc_block_t b = t_call(id, "read_file", "{\"file_path\":\"a.c\"}");
    return put(CTXC_SPEAKER_AI, &b, 1, err);
}

static ctxc_status_t resp(ctxc_speaker_t sp, const char *id,
                          ctxc_error_t *err) {
    ctxc_block_t b = t_resp(id, "read_file", "\"x\"", NULL);
    return put(sp, &b, 1, err);
}

/* Appending must fail with `what` in the message, leaving the store as it
 * was. */
static void refused(ctxc_status_t st, const ctxc_error_t *err,
                    const t_snap_t *before, const char *what) {
    assert_int_equal(st, CTXC_E_INVALID_ARG);
    if (strstr(err->message, what) == NULL) {
        fail_msg("message '%s' lacks '%s'", err->message, what);
    }
    t_assert_unchanged(&hist, before);
}

static t_snap_t snap;

static void test_blocks_live_in_their_speakers_entries(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, "go");
        assert_int_equal(call("c1", &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        /* a response in a human entry (provider shape: results in user
         * turns) and in an ai entry */
        refused(resp(CTXC_SPEAKER_HUMAN, "c1", &err), &err, &snap,
                "block 0 (tool_response): a tool_response belongs in a tool "
                "entry, not in a human entry");
        refused(resp(CTXC_SPEAKER_AI, "c1", &err), &err, &snap,
                "not in an ai entry");
        /* a call in a tool or human entry */
        ctxc_block_t c = t_call("c2", "run", "{}");
        refused(put(CTXC_SPEAKER_TOOL, &c, 1, &err), &err, &snap,
                "a tool_call belongs in an ai entry, not in a tool entry");
        refused(put(CTXC_SPEAKER_HUMAN, &c, 1, &err), &err, &snap,
                "not in a human entry");
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c1", &err), CTXC_OK);
    }
}

static void test_one_response_per_call(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        /* [human, ai(call c1), tool(c1), human, tool(c1)] */
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, "go");
        assert_int_equal(call("c1", &err), CTXC_OK);
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c1", &err), CTXC_OK);
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, "again");
        t_snapshot(&hist, &snap);
        refused(resp(CTXC_SPEAKER_TOOL, "c1", &err), &err, &snap,
                "block 0 (tool_response): call 'c1' already has a "
                "tool_response (entry 2); a call has one response");
        /* two responses to one id in the same entry */
        assert_int_equal(call("c2", &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        ctxc_block_t two[3] = {t_resp("c2", "run", "1", NULL), t_text("x"),
                               t_resp("c2", "run", "2", NULL)};
        refused(put(CTXC_SPEAKER_TOOL, two, 3, &err), &err, &snap,
                "blocks 0 and 2: two tool_responses with call id 'c2'");
        /* an orphan response (no call) may not be answered twice either */
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "ghost", &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        refused(resp(CTXC_SPEAKER_TOOL, "ghost", &err), &err, &snap,
                "already has a tool_response");
    }
}

static void test_call_ids_are_unique(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        assert_int_equal(call("c1", &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        refused(call("c1", &err), &err, &snap,
                "block 0 (tool_call): id 'c1' is already used by the "
                "tool_call in entry 0");
        ctxc_block_t two[2] = {t_call("p", "a", "{}"), t_call("p", "b", "{}")};
        refused(put(CTXC_SPEAKER_AI, two, 2, &err), &err, &snap,
                "blocks 0 and 1: two tool_calls with call id 'p'");
        /* a call and a response share an id: that is the pair */
        ctxc_block_t ok[2] = {t_call("p", "a", "{}"), t_call("q", "b", "{}")};
        assert_int_equal(put(CTXC_SPEAKER_AI, ok, 2, &err), CTXC_OK);
    }
}

static void test_response_comes_after_its_call(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, "go");
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "r1", &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        refused(call("r1", &err), &err, &snap,
                "block 0 (tool_call): id 'r1' was answered before the call "
                "(tool_response in entry 1)");
    }
}

/* Many parallel calls in one entry: checked in chunks, duplicates found
 * across chunk borders. */
static void test_many_calls_in_one_entry(void **state) {
    (void)state;
    static char ids[40][8];
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        ctxc_block_t b[40];
        for (int i = 0; i < 40; i++) {
            snprintf(ids[i], sizeof ids[i], "k%d", i);
            b[i] = t_call(ids[i], "glob", "{}");
        }
        assert_int_equal(put(CTXC_SPEAKER_AI, b, 40, &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        b[33] = t_call("k2x", "glob", "{}");
        b[37] = t_call("k2x", "glob", "{}");
        for (int i = 0; i < 40; i++) { /* fresh ids but the two */
            if (i != 33 && i != 37) {
                snprintf(ids[i], sizeof ids[i], "m%d", i);
                b[i] = t_call(ids[i], "glob", "{}");
            }
        }
        refused(put(CTXC_SPEAKER_AI, b, 40, &err), &err, &snap,
                "blocks 33 and 37");
        b[37] = t_call("m1", "glob", "{}"); /* same as block 1 */
        refused(put(CTXC_SPEAKER_AI, b, 40, &err), &err, &snap,
                "blocks 1 and 37");
        b[37] = t_call("k5", "glob", "{}"); /* used by entry 0 */
        refused(put(CTXC_SPEAKER_AI, b, 40, &err), &err, &snap,
                "block 37 (tool_call): id 'k5' is already used");
        b[37] = t_call("m37", "glob", "{}");
        assert_int_equal(put(CTXC_SPEAKER_AI, b, 40, &err), CTXC_OK);
    }
}

static void test_replace_keeps_the_rule(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        assert_int_equal(call("c1", &err), CTXC_OK);                    /* 0 */
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c1", &err), CTXC_OK); /* 1 */
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "z", &err), CTXC_OK);  /* 2 */
        assert_int_equal(call("c2", &err), CTXC_OK);                    /* 3 */
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c2", &err), CTXC_OK); /* 4 */
        assert_int_equal(call("c3", &err), CTXC_OK);                    /* 5 */
        /* an entry replaced by an edited copy of itself is fine */
        ctxc_block_t r = t_resp("c1", "read_file", "\"short\"", NULL);
        ctxc_entry_in_t in = {CTXC_SPEAKER_TOOL, &r, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_history_replace(&hist, 1, &in, &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        /* entry 4 answering c1 again: a second response */
        assert_int_equal(ctxc_history_replace(&hist, 4, &in, &err),
                         CTXC_E_INVALID_ARG);
        assert_non_null(strstr(err.message, "already has a tool_response"));
        t_assert_unchanged(&hist, &snap);
        /* entry 0's call renamed to c2: c2 is entry 3's */
        ctxc_block_t c = t_call("c2", "x", "{}");
        ctxc_entry_in_t ci = {CTXC_SPEAKER_AI, &c, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_history_replace(&hist, 0, &ci, &err),
                         CTXC_E_INVALID_ARG);
        assert_non_null(strstr(err.message, "already used by the tool_call "
                                            "in entry 3"));
        t_assert_unchanged(&hist, &snap);
        /* entry 3's call renamed to z: answered earlier (entry 2) */
        c = t_call("z", "x", "{}");
        assert_int_equal(ctxc_history_replace(&hist, 3, &ci, &err),
                         CTXC_E_INVALID_ARG);
        assert_non_null(strstr(err.message, "answered before the call "
                                            "(tool_response in entry 2)"));
        t_assert_unchanged(&hist, &snap);
        /* entry 2 answering c3, whose call (entry 5) comes later */
        r = t_resp("c3", "x", "1", NULL);
        assert_int_equal(ctxc_history_replace(&hist, 2, &in, &err),
                         CTXC_E_INVALID_ARG);
        assert_non_null(strstr(err.message, "comes later (entry 5)"));
        t_assert_unchanged(&hist, &snap);
        /* a call moved to the entry of its own renamed copy is fine */
        c = t_call("c2", "renamed", "{}");
        assert_int_equal(ctxc_history_replace(&hist, 3, &ci, &err), CTXC_OK);
    }
}

/* The index is a cache: after removals the ids are free again, and a failed
 * import does not leave its ids behind. */
static void test_ids_free_again_after_removal_and_failed_import(void **state) {
    (void)state;
    static ctxc_import_t imp;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        ctxc_error_t err;
        assert_int_equal(call("c1", &err), CTXC_OK);
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c1", &err), CTXC_OK);
        assert_int_equal(ctxc_history_remove_range(&hist, 0, 2, &err), CTXC_OK);
        assert_int_equal(call("c1", &err), CTXC_OK);
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c1", &err), CTXC_OK);
        static const char text[] =
            "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":"
            "\"n1\",\"name\":\"x\",\"parameters\":{}}]}\n"
            "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
            "\"callId\":\"n1\",\"toolName\":\"x\",\"result\":1}]}\n"
            "{\"speaker\":\"bad\"}\n";
        t_snapshot(&hist, &snap);
        assert_int_not_equal(ctxc_import_text(&imp, &hist, text, strlen(text),
                                              CTXC_FORMAT_AUTO, &err),
                             CTXC_OK);
        assert_int_equal(err.line, 3);
        t_assert_unchanged(&hist, &snap);
        assert_int_equal(call("n1", &err), CTXC_OK);
        assert_int_equal(resp(CTXC_SPEAKER_TOOL, "n1", &err), CTXC_OK);
        t_snapshot(&hist, &snap);
        refused(call("c1", &err), &err, &snap, "already used");
        ctxc_history_clear(&hist);
        assert_int_equal(call("c1", &err), CTXC_OK);
    }
}

/* Import names the line; nothing of the file is imported. */
static void expect_import_error(const char *text, uint32_t line,
                                const char *what) {
    static ctxc_import_t imp;
    ctxc_error_t err;
    ctxc_history_clear(&hist);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "before");
    t_snapshot(&hist, &snap);
    assert_int_equal(ctxc_import_text(&imp, &hist, text, strlen(text),
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(err.line, line);
    if (strstr(err.message, what) == NULL) {
        fail_msg("line %u: message '%s' lacks '%s'", (unsigned)line,
                 err.message, what);
    }
    t_assert_unchanged(&hist, &snap);
}

#define H(t)                                                                   \
    "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"" t      \
    "\"}]}\n"
#define AI(t)                                                                  \
    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":\"" t "\"}]}" \
    "\n"
#define CALL(id, name, params)                                                 \
    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"" id     \
    "\",\"name\":\"" name "\",\"parameters\":" params "}]}\n"
#define RESP_IN(sp, id)                                                        \
    "{\"speaker\":\"" sp "\",\"blocks\":[{\"type\":\"tool_response\","         \
    "\"callId\":\"" id "\",\"toolName\":\"t\",\"result\":\"r\"}]}\n"
#define RESP(id) RESP_IN("tool", id)

static void test_import_refuses_broken_pairing_with_line(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        /* the three shapes of issue 9 */
        expect_import_error(H("a") CALL("c1", "run", "{}") RESP("c1") H("b")
                                RESP("c1") H("c") AI("d"),
                            5, "call 'c1' already has a tool_response");
        expect_import_error(H("a") CALL("c1", "run", "{}")
                                RESP_IN("human", "c1") H("b") AI("c"),
                            3, "a tool_response belongs in a tool entry");
        expect_import_error(
            H("a") CALL("r1", "read_file", "{\"file_path\":\"/w/a.c\"}")
                RESP("r1") RESP("r1")
                    CALL("w1", "write_file", "{\"file_path\":\"/w/a.c\"}")
                        RESP("w1") AI("done"),
            4, "already has a tool_response");
        /* and more: a response before its call, a call answered in two
         * different later entries, a response in an ai entry */
        expect_import_error(H("a") RESP("c9") CALL("c9", "run", "{}"), 3,
                            "answered before the call");
        expect_import_error(CALL("c1", "run", "{}") H("x") RESP("c1") AI("y")
                                RESP("c1"),
                            5, "already has a tool_response");
        expect_import_error(CALL("c1", "run", "{}") RESP_IN("ai", "c1"), 2,
                            "not in an ai entry");
        /* the same id in the OpenAI shape: tool messages answer calls */
        expect_import_error(
            "{\"role\":\"user\",\"content\":\"go\"}\n"
            "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
            "\"k\",\"type\":\"function\",\"function\":{\"name\":\"f\","
            "\"arguments\":\"{}\"}}]}\n"
            "{\"role\":\"tool\",\"tool_call_id\":\"k\",\"content\":\"1\"}\n"
            "{\"role\":\"tool\",\"tool_call_id\":\"k\",\"content\":\"2\"}\n",
            4, "already has a tool_response");
    }
}

/* Ids written with escapes in the file are the same ids as written
 * plainly: found in the index (hash of the decoded bytes) and by the scans. */
static void test_escaped_ids_are_the_same_ids(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        reset(mode);
        expect_import_error(CALL("toolu_\\u00e9t\\u00e9_42", "run", "{}")
                                RESP("toolu_\xc3\xa9t\xc3\xa9_42")
                                    RESP("toolu_\xc3\xa9t\\u00e9_42"),
                            3, "already has a tool_response (entry 2)");
        expect_import_error(CALL("c\\u0031", "run", "{}")
                                CALL("c1", "run", "{}"),
                            2, "id 'c1' is already used");
    }
}

/* The OpenAI importer puts tool results into tool entries after the
 * assistant turn that called them. */
static void test_openai_tool_messages_pair_with_their_calls(void **state) {
    (void)state;
    static const char text[] =
        "{\"role\":\"user\",\"content\":\"go\"}\n"
        "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
        "\"k\",\"type\":\"function\",\"function\":{\"name\":\"f\","
        "\"arguments\":\"{}\"}}]}\n"
        "{\"role\":\"tool\",\"tool_call_id\":\"k\",\"content\":\"1\"}\n";
    reset(MODE_INDEX);
    t_import(&hist, text);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.per_speaker[CTXC_SPEAKER_TOOL], 1);
    assert_int_equal(st.tool_calls, 1);
    assert_int_equal(st.tool_responses, 1);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
}

/* ---- plans ----------------------------------------------------------------
 */

/* Applying `plan` must be refused with `what` in the message, leaving the
 * history as `snap` recorded it. */
static void plan_refused(const ctxc_plan_t *plan, const char *what) {
    ctxc_error_t err;
    assert_int_equal(ctxc_history_apply_plan(&hist, plan, &err),
                     CTXC_E_INVALID_ARG);
    if (strstr(err.message, what) == NULL) {
        fail_msg("message '%s' lacks '%s'", err.message, what);
    }
    t_assert_unchanged(&hist, &snap);
}

static void load_pairs(int mode) {
    reset(mode);
    ctxc_error_t err;
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "go"); /* 0 */
    ctxc_block_t two[2] = {t_call("c1", "a", "{}"), t_call("c2", "b", "{}")};
    assert_int_equal(put(CTXC_SPEAKER_AI, two, 2, &err), CTXC_OK);      /* 1 */
    assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c1", &err), CTXC_OK);     /* 2 */
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "between");                   /* 3 */
    assert_int_equal(resp(CTXC_SPEAKER_TOOL, "c2", &err), CTXC_OK);     /* 4 */
    assert_int_equal(resp(CTXC_SPEAKER_TOOL, "orphan", &err), CTXC_OK); /* 5 */
    t_add_text(&hist, CTXC_SPEAKER_AI, "end");                          /* 6 */
}

static void test_plans_keep_pairs_together(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        ctxc_plan_t plan;
        ctxc_error_t err;
        /* keeping [3, 7) would keep c2's response without its call */
        load_pairs(mode);
        t_snapshot(&hist, &snap);
        ctxc_plan_init(&plan, &work);
        assert_int_equal(ctxc_plan_keep(&plan, 3, 7, &err), CTXC_OK);
        plan_refused(&plan, "keeps the tool_response of call id 'c2' "
                            "(entry 4) without its tool_call (entry 1)");
        /* dropping entry 4 alone leaves c2's call unanswered */
        ctxc_plan_init(&plan, &work);
        assert_int_equal(ctxc_plan_keep(&plan, 0, 4, &err), CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 5, 7, &err), CTXC_OK);
        plan_refused(&plan, "keeps the tool_call of call id "
                            "'c2' (entry 1) without its "
                            "tool_response (entry 4)");
        /* an insert that replaces entry 1 without c2 (c2 answered in 4) */
        ctxc_plan_init(&plan, &work);
        assert_int_equal(ctxc_plan_keep(&plan, 0, 1, &err), CTXC_OK);
        ctxc_block_t only1 = t_call("c1", "a", "{}");
        ctxc_entry_in_t in = {CTXC_SPEAKER_AI, &only1, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, 1, &err),
                         CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 2, 7, &err), CTXC_OK);
        plan_refused(&plan, "'c2'");
        /* an insert may not bring tool blocks of its own */
        ctxc_plan_init(&plan, &work);
        ctxc_block_t fresh = t_call("new", "a", "{}");
        in.blocks = &fresh;
        assert_int_equal(
            ctxc_plan_insert(&plan, &in, NULL, NULL, UINT32_MAX, &err),
            CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 0, 7, &err), CTXC_OK);
        plan_refused(&plan, "plan op 0 inserts a tool_call "
                            "(call id 'new') that is not in "
                            "the entry it replaces");
        /* valid: drop the pair c1 with its response by replacing entry 1
         * with c2 alone and dropping entry 2; the orphan may go alone */
        ctxc_plan_init(&plan, &work);
        assert_int_equal(ctxc_plan_keep(&plan, 0, 1, &err), CTXC_OK);
        ctxc_block_t only2 = t_call("c2", "b", "{}");
        in.blocks = &only2;
        assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, 1, &err),
                         CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 3, 5, &err), CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 6, 7, &err), CTXC_OK);
        assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err), CTXC_OK);
        assert_int_equal(ctxc_history_count(&hist), 5);
        ctxc_history_stats_t st;
        ctxc_history_stats(&hist, &st);
        assert_int_equal(st.tool_calls, 1);
        assert_int_equal(st.unpaired_calls, 0);
        assert_int_equal(st.unpaired_responses, 0);
        /* and the store still refuses a second c2 response afterwards */
        t_snapshot(&hist, &snap);
        refused(resp(CTXC_SPEAKER_TOOL, "c2", &err), &err, &snap,
                "already has a tool_response (entry 3)");
    }
}

/* Plans keep old entries in their order: a replacement placed before the
 * entries it followed (here: a response before its call) is refused. */
static void test_plans_keep_the_order(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        ctxc_plan_t plan;
        ctxc_error_t err;
        load_pairs(mode);
        t_snapshot(&hist, &snap);
        ctxc_plan_init(&plan, &work);
        ctxc_block_t r = t_resp("c1", "read_file", "\"short\"", NULL);
        ctxc_entry_in_t in = {CTXC_SPEAKER_TOOL, &r, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, 2, &err),
                         CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 0, 2, &err), CTXC_OK);
        assert_int_equal(ctxc_plan_keep(&plan, 3, 7, &err), CTXC_OK);
        plan_refused(&plan, "plan op 1 is out of order");
    }
}

/* Many pairs and a plan of many ops: every pair is checked wherever its
 * sides are (kept, replaced, dropped), with and without the index. */
static void test_long_plans(void **state) {
    (void)state;
    static char ids[30][8];
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        for (int broken = 0; broken < 2; broken++) {
            reset(mode);
            ctxc_error_t err;
            for (int k = 0; k < 30; k++) { /* 0: call, 1: text, 2: response */
                snprintf(ids[k], sizeof ids[k], "p%d", k);
                assert_int_equal(call(ids[k], &err), CTXC_OK);
                t_add_text(&hist, CTXC_SPEAKER_HUMAN, "between");
                assert_int_equal(resp(CTXC_SPEAKER_TOOL, ids[k], &err),
                                 CTXC_OK);
            }
            t_snapshot(&hist, &snap);
            /* pair k: kept (k % 3 == 0), its response replaced by a
             * shorter copy (1), dropped with its call (2) */
            ctxc_plan_t plan;
            ctxc_plan_init(&plan, &work);
            for (int k = 0; k < 30; k++) {
                size_t c = (size_t)k * 3u;
                if (k % 3 == 0) {
                    assert_int_equal(ctxc_plan_keep(&plan, c, c + 3, &err),
                                     CTXC_OK);
                } else if (k % 3 == 1) {
                    assert_int_equal(ctxc_plan_keep(&plan, c, c + 2, &err),
                                     CTXC_OK);
                    ctxc_block_t r = t_resp(ids[k], "read_file", "1", NULL);
                    ctxc_entry_in_t in = {CTXC_SPEAKER_TOOL, &r, 1,
                                          CTXC_STR_ABSENT};
                    assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL,
                                                      (uint32_t)(c + 2), &err),
                                     CTXC_OK);
                } else if (broken && k == 26) { /* keeps only the call */
                    assert_int_equal(ctxc_plan_keep(&plan, c, c + 1, &err),
                                     CTXC_OK);
                } else {
                    assert_int_equal(ctxc_plan_keep(&plan, c + 1, c + 2, &err),
                                     CTXC_OK);
                }
            }
            ctxc_status_t st = ctxc_history_apply_plan(&hist, &plan, &err);
            if (broken) {
                assert_int_equal(st, CTXC_E_INVALID_ARG);
                assert_non_null(strstr(err.message,
                                       "keeps the tool_call of call id 'p26' "
                                       "(entry 78) without its tool_response "
                                       "(entry 80)"));
                t_assert_unchanged(&hist, &snap);
                continue;
            }
            assert_int_equal(st, CTXC_OK);
            ctxc_history_stats_t stats;
            ctxc_history_stats(&hist, &stats);
            assert_int_equal(stats.tool_calls, 20);
            assert_int_equal(stats.tool_responses, 20);
            assert_int_equal(stats.unpaired_calls, 0);
            assert_int_equal(stats.unpaired_responses, 0);
        }
    }
}

/* A response far from its call (beyond the nearby entries a plan check
 * looks at first): still found, through the index or the scans. */
static void test_plans_with_far_pairs(void **state) {
    (void)state;
    for (int mode = 0; mode < MODE_COUNT; mode++) {
        for (int drop_call = 0; drop_call < 2; drop_call++) {
            reset(mode);
            ctxc_error_t err;
            t_add_text(&hist, CTXC_SPEAKER_HUMAN, "go");  /* 0 */
            assert_int_equal(call("far", &err), CTXC_OK); /* 1 */
            for (int k = 0; k < 20; k++) {                /* 2-21 */
                t_add_text(&hist, k % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                           "filler");
            }
            assert_int_equal(resp(CTXC_SPEAKER_TOOL, "far", &err),
                             CTXC_OK);                 /* 22 */
            t_add_text(&hist, CTXC_SPEAKER_AI, "end"); /* 23 */
            t_snapshot(&hist, &snap);
            ctxc_plan_t plan;
            ctxc_plan_init(&plan, &work);
            if (drop_call) { /* keeps the response alone */
                assert_int_equal(ctxc_plan_keep(&plan, 2, 24, &err), CTXC_OK);
            } else { /* keeps the call alone */
                assert_int_equal(ctxc_plan_keep(&plan, 0, 22, &err), CTXC_OK);
                assert_int_equal(ctxc_plan_keep(&plan, 23, 24, &err), CTXC_OK);
            }
            plan_refused(&plan, "call id 'far' (entry");
            /* dropping both is fine */
            ctxc_plan_init(&plan, &work);
            assert_int_equal(ctxc_plan_keep(&plan, 2, 22, &err), CTXC_OK);
            assert_int_equal(ctxc_plan_keep(&plan, 23, 24, &err), CTXC_OK);
            assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err),
                             CTXC_OK);
            assert_int_equal(ctxc_history_count(&hist), 21);
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_blocks_live_in_their_speakers_entries),
        cmocka_unit_test(test_one_response_per_call),
        cmocka_unit_test(test_call_ids_are_unique),
        cmocka_unit_test(test_response_comes_after_its_call),
        cmocka_unit_test(test_many_calls_in_one_entry),
        cmocka_unit_test(test_replace_keeps_the_rule),
        cmocka_unit_test(test_ids_free_again_after_removal_and_failed_import),
        cmocka_unit_test(test_import_refuses_broken_pairing_with_line),
        cmocka_unit_test(test_escaped_ids_are_the_same_ids),
        cmocka_unit_test(test_openai_tool_messages_pair_with_their_calls),
        cmocka_unit_test(test_plans_keep_pairs_together),
        cmocka_unit_test(test_plans_keep_the_order),
        cmocka_unit_test(test_long_plans),
        cmocka_unit_test(test_plans_with_far_pairs),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
