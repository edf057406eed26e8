/*
 * Pinned entries (issue 28, part 1): ctxc_history_pin and the metadata it
 * writes (kept by export/import), one pairing rule (a call and its
 * response are pinned together), plan validation refusing plans that drop
 * or change a pinned entry, and every strategy keeping pinned entries byte
 * for byte and in order: top-down-truncation, middle-out and one-shot
 * (with a fake model), high-density's density step and compress.
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

CTXC_HISTORY_DEFINE(hist, 64, 65536);
CTXC_HISTORY_DEFINE(small, 64, 256);
CTXC_WORK_DEFINE(work, 64, 32768);
static ctxc_settings_store_t set;
static t_dump_t before, after;

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set_uint(&set, "context-limit", 100000);
    return 0;
}

#define TEXT_LINE(sp, text, meta)                                              \
    "{\"speaker\":\"" sp "\",\"blocks\":[{\"type\":\"text\",\"text\":\"" text \
    "\"}]" meta "}\n"
#define CALL(id, name, params)                                                 \
    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"" id     \
    "\",\"name\":\"" name "\",\"parameters\":" params "}]}\n"
#define RESP(id, name, result)                                                 \
    "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","         \
    "\"callId\":\"" id "\",\"toolName\":\"" name "\",\"result\":\"" result   \
    "\"}]}\n"

static const char *meta_of(size_t i) {
    static char buf[256];
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, i, &e), CTXC_OK);
    if (e.metadata.ptr == NULL) {
        return "(absent)";
    }
    snprintf(buf, sizeof buf, "%.*s", (int)e.metadata.len, e.metadata.ptr);
    return buf;
}

static bool pinned(size_t i) {
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, i, &e), CTXC_OK);
    return (e.flags & CTXC_ENTRY_PINNED) != 0;
}

static void pin(size_t i, bool on) {
    ctxc_error_t err;
    if (ctxc_history_pin(&hist, i, on, &err) != CTXC_OK) {
        fail_msg("pin %zu: %s", i, err.message);
    }
}

/* The exported line of entry i (JSONL), for byte comparisons. */
static void line_of(const t_dump_t *d, size_t i, char *out, size_t cap) {
    const char *p = d->buf;
    for (size_t k = 0; k < i; k++) {
        p = strchr(p, '\n');
        assert_non_null(p);
        p++;
    }
    const char *e = strchr(p, '\n');
    size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
    assert_true(n < cap);
    memcpy(out, p, n);
    out[n] = '\0';
}

/* Whether the exported history `d` holds line `line` verbatim. */
static bool has_line(const t_dump_t *d, const char *line) {
    size_t n = strlen(line);
    for (const char *p = d->buf; (p = strstr(p, line)) != NULL; p++) {
        if ((p == d->buf || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0')) {
            return true;
        }
    }
    return false;
}

static void assert_paired(void) {
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
}

/* ---- ctxc_history_pin and the metadata ---------------------------------- */

static void test_pin_writes_metadata_and_unpin_restores_it(void **state) {
    (void)state;
    t_import(&hist, TEXT_LINE("human", "a", "")
                        TEXT_LINE("ai", "b", ",\"metadata\":{\"model\":\"m\"}")
                            TEXT_LINE("human", "c",
                                      ",\"metadata\":{\"pinned\":false,"
                                      "\"x\":1}"));
    t_dump(&hist, &before);
    pin(0, true);
    pin(1, true);
    pin(2, true);
    assert_string_equal(meta_of(0), "{\"pinned\":true}");
    assert_string_equal(meta_of(1), "{\"model\":\"m\",\"pinned\":true}");
    assert_string_equal(meta_of(2), "{\"pinned\":true,\"x\":1}");
    assert_true(pinned(0) && pinned(1) && pinned(2));
    /* pinning twice changes nothing */
    t_dump(&hist, &after);
    pin(1, true);
    static t_dump_t again;
    t_dump(&hist, &again);
    assert_string_equal(again.buf, after.buf);
    /* export -> import keeps the pins */
    static t_dump_t round;
    CTXC_HISTORY_DEFINE(copy, 64, 65536);
    t_import(&copy, after.buf);
    t_dump(&copy, &round);
    assert_string_equal(round.buf, after.buf);
    ctxc_entry_t e;
    ctxc_history_get(&copy, 1, &e);
    assert_true(e.flags & CTXC_ENTRY_PINNED);
    /* unpin: the key goes (metadata left empty goes too) */
    pin(0, false);
    pin(1, false);
    pin(2, false);
    assert_string_equal(meta_of(0), "(absent)");
    assert_string_equal(meta_of(1), "{\"model\":\"m\"}");
    assert_string_equal(meta_of(2), "{\"x\":1}");
    assert_false(pinned(0) || pinned(1) || pinned(2));
    t_dump(&hist, &after);
    /* entries 0 and 1 are back byte for byte */
    char a[256], b[256];
    line_of(&before, 0, a, sizeof a);
    line_of(&after, 0, b, sizeof b);
    assert_string_equal(a, b);
    line_of(&before, 1, a, sizeof a);
    line_of(&after, 1, b, sizeof b);
    assert_string_equal(a, b);
    assert_int_equal(ctxc_history_count(&hist), 3);
}

/* An entry stored with "metadata":{} (issue 41 item 6): pin then unpin
 * gives back its exact bytes ({} stays {}), as an entry without metadata
 * gets back its absent field; the pinned store is as any other, and a
 * compression between keeps the promise. */
static void test_pin_unpin_of_empty_metadata_is_exact(void **state) {
    (void)state;
    t_import(&hist, TEXT_LINE("human", "a", ",\"metadata\":{}")
                        TEXT_LINE("ai", "b", "")
                            TEXT_LINE("human", "c", ",\"metadata\":{}"));
    t_dump(&hist, &before);
    assert_string_equal(meta_of(0), "{}");
    pin(0, true);
    pin(1, true);
    assert_string_equal(meta_of(0), "{\"pinned\":true}");
    assert_string_equal(meta_of(1), "{\"pinned\":true}");
    assert_true(pinned(0));
    /* a change elsewhere moves the records, not the note */
    ctxc_error_t err;
    assert_int_equal(ctxc_history_remove_range(&hist, 2, 3, &err), CTXC_OK);
    pin(0, false);
    pin(1, false);
    assert_string_equal(meta_of(0), "{}");
    assert_string_equal(meta_of(1), "(absent)");
    assert_false(pinned(0) || pinned(1));
    t_dump(&hist, &after);
    char a[256], b[256];
    for (size_t i = 0; i < 2; i++) {
        line_of(&before, i, a, sizeof a);
        line_of(&after, i, b, sizeof b);
        assert_string_equal(a, b);
    }
    /* the entry's flags say only what its metadata says */
    ctxc_entry_t e;
    ctxc_history_get(&hist, 0, &e);
    assert_int_equal(e.flags, 0);
    /* pinned again, then an entry without metadata pinned and unpinned */
    pin(0, true);
    pin(0, false);
    assert_string_equal(meta_of(0), "{}");
}

static void test_unpin_removes_every_pinned_key(void **state) {
    (void)state;
    t_import(&hist, TEXT_LINE("human", "a",
                              ",\"metadata\":{\"pinned\":true,\"y\":2,"
                              "\"pinned\":true}"));
    assert_true(pinned(0));
    pin(0, false);
    assert_string_equal(meta_of(0), "{\"y\":2}");
    assert_false(pinned(0));
}

static void test_pinning_a_call_pins_its_responses_and_back(void **state) {
    (void)state;
    t_import(&hist,
             TEXT_LINE("human", "go", "")
             "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":"
             "\"c1\",\"name\":\"read_file\",\"parameters\":{}},{\"type\":"
             "\"tool_call\",\"id\":\"c2\",\"name\":\"read_file\","
             "\"parameters\":{}}]}\n" RESP("c1", "read_file", "one")
                 RESP("c2", "read_file", "two") TEXT_LINE("human", "x", ""));
    pin(2, true); /* the response of c1: its call, and the sibling c2 */
    assert_false(pinned(0));
    assert_true(pinned(1) && pinned(2) && pinned(3));
    assert_false(pinned(4));
    pin(3, false); /* unpinning one side unpins the group */
    assert_false(pinned(1) || pinned(2) || pinned(3));
    pin(1, true); /* from the call's side */
    assert_true(pinned(1) && pinned(2) && pinned(3));
}

static void test_pin_errors_change_nothing(void **state) {
    (void)state;
    ctxc_error_t err;
    t_import(&hist, TEXT_LINE("human", "a", ""));
    assert_int_equal(ctxc_history_pin(&hist, 1, true, &err), CTXC_E_RANGE);
    assert_int_equal(ctxc_history_pin(NULL, 0, true, &err),
                     CTXC_E_INVALID_ARG);
    /* an arena without room for the key */
    ctxc_history_clear(&small);
    ctxc_block_t one = t_text("a"); /* fill the arena */
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &one, 1, CTXC_STR_ABSENT};
    while (ctxc_history_append(&small, &in, &err) == CTXC_OK) {
    }
    t_snap_t snap;
    t_snapshot(&small, &snap);
    assert_int_equal(ctxc_history_pin(&small, 0, true, &err),
                     CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    t_assert_unchanged(&small, &snap);
}

/* ---- plan validation ------------------------------------------------------ */

static void test_plans_that_drop_or_change_a_pinned_entry_are_refused(
    void **state) {
    (void)state;
    ctxc_error_t err;
    t_import(&hist, TEXT_LINE("human", "a", ",\"metadata\":{\"pinned\":true}")
                        TEXT_LINE("ai", "b", "") CALL("c1", "shell", "{}")
                            RESP("c1", "shell", "out"));
    t_snap_t snap;
    t_snapshot(&hist, &snap);
    ctxc_plan_t plan;
    ctxc_plan_init(&plan, &work);
    assert_int_equal(ctxc_plan_keep(&plan, 1, 4, &err), CTXC_OK);
    assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "pinned entry 0"));
    t_assert_unchanged(&hist, &snap);
    /* a pin on the call only protects its response from a rewrite */
    t_import(&hist, TEXT_LINE("human", "a", "")
                        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":"
                        "\"tool_call\",\"id\":\"c1\",\"name\":\"shell\","
                        "\"parameters\":{}}],\"metadata\":{\"pinned\":true}}\n"
                            RESP("c1", "shell", "a long output"));
    t_snapshot(&hist, &snap);
    ctxc_plan_init(&plan, &work);
    assert_int_equal(ctxc_plan_keep(&plan, 0, 2, &err), CTXC_OK);
    ctxc_block_t short_resp = t_resp("c1", "shell", "\"x\"", NULL);
    ctxc_entry_in_t in = {CTXC_SPEAKER_TOOL, &short_resp, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, 2, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_history_apply_plan(&hist, &plan, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "pinned entry 1"));
    t_assert_unchanged(&hist, &snap);
}

/* ---- top-down-truncation -------------------------------------------------- */

#define WORDS " one two three four five six seven eight" /* 10 tokens */

static ctxc_status_t run(const char *strategy, uint64_t limit,
                         uint32_t threshold, ctxc_session_t *s,
                         ctxc_error_t *err) {
    t_set(&set, "compression.strategy", strategy);
    t_set_uint(&set, "context-limit", limit);
    t_set_ratio(&set, "compression-threshold", threshold);
    assert_int_equal(ctxc_session_init(s, &hist, &work, &set, NULL), CTXC_OK);
    t_dump(&hist, &before);
    ctxc_status_t st = ctxc_session_compress(s, err);
    t_dump(&hist, &after);
    return st;
}

static void twenty(void) {
    char text[64];
    for (int i = 0; i < 20; i++) {
        snprintf(text, sizeof text, "e%02d" WORDS, i);
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
    }
}

static void test_top_down_keeps_a_pinned_old_entry_in_place(void **state) {
    (void)state;
    twenty();
    pin(2, true);
    char line[256];
    t_dump(&hist, &before);
    line_of(&before, 2, line, sizeof line);
    ctxc_session_t s;
    ctxc_error_t err;
    /* target 100 x 1.0 x 0.6 = 60 tokens: 10 + the last entries */
    assert_int_equal(run("top-down-truncation", 100, 1000, &s, &err), CTXC_OK);
    assert_true(ctxc_history_count(&hist) < 20);
    char first[256];
    line_of(&after, 0, first, sizeof first);
    assert_string_equal(first, line); /* byte for byte, first */
    assert_true(ctxc_history_tokens(&hist) < 60);
    assert_int_equal(s.last_compress.compressed_count,
                     ctxc_history_count(&hist));
    /* the rest is a suffix of the input */
    const char *rest = strchr(after.buf, '\n') + 1;
    assert_string_equal(before.buf + strlen(before.buf) - strlen(rest), rest);
    /* without the pin, entry 2 goes */
    setup(NULL);
    twenty();
    assert_int_equal(run("top-down-truncation", 100, 1000, &s, &err), CTXC_OK);
    assert_false(has_line(&after, line));
}

static void test_top_down_pinned_entries_over_the_target_fail(void **state) {
    (void)state;
    twenty();
    for (size_t i = 0; i < 8; i++) {
        pin(i, true);
    }
    ctxc_session_t s;
    ctxc_error_t err;
    t_snap_t snap;
    t_snapshot(&hist, &snap);
    /* target 60: the 8 pinned entries need 96 */
    assert_int_equal(run("top-down-truncation", 100, 1000, &s, &err),
                     CTXC_E_TOO_LARGE);
    if (strstr(err.message, "pinned entries alone need 96 tokens") == NULL) {
        fail_msg("message: %s", err.message);
    }
    assert_non_null(strstr(err.message, "target is 60"));
    t_assert_unchanged(&hist, &snap);
}

static void test_top_down_keeps_a_pinned_tool_pair(void **state) {
    (void)state;
    t_import(&hist, TEXT_LINE("human", "h0" WORDS, "")
                        CALL("c1", "read_file", "{\"file_path\":\"a.c\"}")
                            RESP("c1", "read_file", "r" WORDS));
    char text[64];
    for (int i = 0; i < 10; i++) {
        snprintf(text, sizeof text, "e%02d" WORDS, i);
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
    }
    pin(2, true); /* the response: pins the call too */
    char call[256], resp[256];
    t_dump(&hist, &before);
    line_of(&before, 1, call, sizeof call);
    line_of(&before, 2, resp, sizeof resp);
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(run("top-down-truncation", 100, 1000, &s, &err), CTXC_OK);
    char l0[256], l1[256];
    line_of(&after, 0, l0, sizeof l0);
    line_of(&after, 1, l1, sizeof l1);
    assert_string_equal(l0, call);
    assert_string_equal(l1, resp);
    assert_false(has_line(&after, "{\"speaker\":\"human\",\"blocks\":[{\"type\":"
                                  "\"text\",\"text\":\"h0" WORDS "\"}]}"));
    assert_paired();
}

/* ---- middle-out and one-shot (a fake model) ------------------------------ */

#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_ONE_SHOT

static struct {
    char request[32768];
    size_t len;
} fk;

static ctxc_status_t grab(void *user, const char *text, size_t len) {
    (void)user;
    if (fk.len + len < sizeof fk.request) {
        memcpy(fk.request + fk.len, text, len);
        fk.len += len;
        fk.request[fk.len] = '\0';
    }
    return CTXC_OK;
}

static ctxc_status_t fake_complete(const ctxc_llm_t *llm,
                                   const ctxc_llm_request_t *req, char *out,
                                   size_t cap, size_t *len,
                                   ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm;
    (void)usage;
    (void)err;
    fk.len = 0;
    fk.request[0] = '\0';
    for (size_t i = 0; i < req->message_count; i++) {
        assert_int_equal(req->message(req->src, i, grab, NULL), CTXC_OK);
    }
    static const char a[] = "<state_snapshot>short</state_snapshot>";
    assert_true(sizeof a <= cap);
    memcpy(out, a, sizeof a);
    *len = sizeof a - 1u;
    return CTXC_OK;
}

static const ctxc_llm_t fake_llm = {fake_complete, NULL, "fake", "fake-1",
                                    NULL,          NULL, NULL, NULL};

static ctxc_status_t fake_resolve(void *user, const char *profile,
                                  const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    (void)err;
    *llm = &fake_llm;
    return CTXC_OK;
}

static void run_llm(const char *strategy) {
    ctxc_session_t s;
    ctxc_error_t err;
    t_set(&set, "compression.strategy", strategy);
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_llm_resolver(&s, fake_resolve, NULL);
    t_dump(&hist, &before);
    if (ctxc_session_compress(&s, &err) != CTXC_OK) {
        fail_msg("compress: %s", err.message);
    }
    t_dump(&hist, &after);
    assert_paired();
    assert_int_equal(s.last_compress.tokens_after, ctxc_history_tokens(&hist));
    assert_int_equal(s.last_compress.compressed_count,
                     ctxc_history_count(&hist));
}

/* 20 entries, 6 and 7 a tool pair, pinned through the response (7). */
static void twenty_with_pair(void) {
    char text[64];
    for (int i = 0; i < 20; i++) {
        if (i == 6) {
            ctxc_block_t c = t_call("p1", "read_file", "{\"file_path\":\"k.c\"}");
            t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
        } else if (i == 7) {
            ctxc_block_t r = t_resp("p1", "read_file", "\"KEPT BODY\"", NULL);
            t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
        } else {
            snprintf(text, sizeof text, "e%02d" WORDS, i);
            t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                       text);
        }
    }
    pin(7, true);
    pin(10, true);
}

static void test_middle_out_keeps_pinned_entries_after_the_summary(
    void **state) {
    (void)state;
    twenty_with_pair();
    char l6[256], l7[256], l10[256];
    t_dump(&hist, &before);
    line_of(&before, 6, l6, sizeof l6);
    line_of(&before, 7, l7, sizeof l7);
    line_of(&before, 10, l10, sizeof l10);
    run_llm("middle-out");
    /* 20 -> top 4, summary, continuation, the 3 pinned, bottom 4 */
    assert_int_equal(ctxc_history_count(&hist), 13);
    ctxc_entry_t e;
    ctxc_history_get(&hist, 4, &e);
    assert_true(e.flags & CTXC_ENTRY_IS_SUMMARY);
    char l[256];
    line_of(&after, 6, l, sizeof l);
    assert_string_equal(l, l6);
    line_of(&after, 7, l, sizeof l);
    assert_string_equal(l, l7);
    line_of(&after, 8, l, sizeof l);
    assert_string_equal(l, l10);
    /* the pinned entries were not sent to the model, the others were */
    assert_null(strstr(fk.request, "KEPT BODY"));
    assert_null(strstr(fk.request, "e10"));
    assert_non_null(strstr(fk.request, "e09"));
}

static void test_one_shot_keeps_pinned_entries_after_the_summary(
    void **state) {
    (void)state;
    twenty_with_pair();
    char l7[256], l10[256];
    t_dump(&hist, &before);
    line_of(&before, 7, l7, sizeof l7);
    line_of(&before, 10, l10, sizeof l10);
    run_llm("one-shot");
    /* 20 -> summary, continuation, 3 pinned, the last 4 */
    assert_int_equal(ctxc_history_count(&hist), 9);
    char l[256];
    line_of(&after, 3, l, sizeof l);
    assert_string_equal(l, l7);
    line_of(&after, 4, l, sizeof l);
    assert_string_equal(l, l10);
    assert_null(strstr(fk.request, "KEPT BODY"));
}

static void test_middle_out_counts_only_unpinned_entries_in_the_middle(
    void **state) {
    (void)state;
    char text[64];
    for (int i = 0; i < 10; i++) { /* top 2, middle 6, bottom 2 */
        snprintf(text, sizeof text, "e%02d" WORDS, i);
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
    }
    pin(3, true);
    pin(4, true);
    pin(5, true); /* 3 of the 6 left: no call */
    ctxc_session_t s;
    ctxc_error_t err;
    t_set(&set, "compression.strategy", "middle-out");
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_llm_resolver(&s, fake_resolve, NULL);
    t_dump(&hist, &before);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    t_dump(&hist, &after);
    assert_true(s.last_compress.unchanged);
    assert_false(s.last_compress.llm_call_made);
    assert_string_equal(after.buf, before.buf);
}

#endif

/* ---- high-density --------------------------------------------------------- */

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

#define BODY "int main(void) { return 0; } /* a file body long enough */"
#define INCL(path, body) "--- " path " ---\\n" body "\\n--- End of content ---"

static ctxc_density_counts_t optimize(void) {
    ctxc_session_t s;
    ctxc_error_t err;
    t_set(&set, "compression.strategy", "high-density");
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, "/w");
    t_dump(&hist, &before);
    if (ctxc_session_optimize(&s, &err) != CTXC_OK) {
        fail_msg("optimize failed: %s", err.message);
    }
    t_dump(&hist, &after);
    assert_paired();
    return s.last_density;
}

static void test_density_step_never_prunes_a_pinned_read(void **state) {
    (void)state;
    t_import(&hist, TEXT_LINE("human", "fix it", "")
                        CALL("r1", "read_file", "{\"file_path\":\"src/a.c\"}")
                            RESP("r1", "read_file", BODY)
                                CALL("r2", "read_file",
                                     "{\"file_path\":\"src/a.c\"}")
                                    RESP("r2", "read_file", BODY " 2")
                                        CALL("w1", "write_file",
                                             "{\"file_path\":\"src/a.c\","
                                             "\"content\":\"x\"}")
                                            RESP("w1", "write_file", "ok"));
    pin(1, true); /* the first read (and its response) */
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 1); /* only r2 */
    assert_int_equal(ctxc_history_count(&hist), 5);
    assert_non_null(strstr(after.buf, "\"r1\""));
    assert_non_null(strstr(after.buf, BODY "\""));
    assert_null(strstr(after.buf, "\"r2\""));
}

static void test_density_step_never_dedupes_a_pinned_inclusion(void **state) {
    (void)state;
    t_import(&hist,
             TEXT_LINE("human", "first\\n" INCL("src/log.h", "#define V1 1 // version one of the header, long enough"), "")
             TEXT_LINE("human", "again\\n" INCL("src/log.h", "#define V2 2 // version two of the header, long enough"), "")
             TEXT_LINE("human", "last\\n" INCL("src/log.h", "#define V3 3 // version three of the header, long enough"), ""));
    pin(0, true);
    char l0[512];
    t_dump(&hist, &before);
    line_of(&before, 0, l0, sizeof l0);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.file_dedupe_replaced, 1); /* V2 only */
    char l[512];
    line_of(&after, 0, l, sizeof l);
    assert_string_equal(l, l0);
    assert_null(strstr(after.buf, "V2"));
}

static void test_recency_never_prunes_a_pinned_result(void **state) {
    (void)state;
    t_set(&set, "compression.density.recencyPruning", "true");
    t_set(&set, "compression.density.recencyRetention", "1");
    t_import(&hist, CALL("r1", "read_file", "{\"file_path\":\"a.c\"}")
                        RESP("r1", "read_file", BODY " one")
                            CALL("r2", "read_file", "{\"file_path\":\"b.c\"}")
                                RESP("r2", "read_file", BODY " two")
                                    CALL("r3", "read_file",
                                         "{\"file_path\":\"c.c\"}")
                                        RESP("r3", "read_file", BODY " three"));
    pin(0, true); /* the call: its result is pinned with it */
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.recency_pruned, 1); /* r2 only */
    assert_non_null(strstr(after.buf, BODY " one"));
    assert_null(strstr(after.buf, BODY " two"));
}

static void test_high_density_compress_never_shortens_a_pinned_result(
    void **state) {
    (void)state;
    static char big[2048];
    size_t n = 0;
    for (int i = 0; i < 40; i++) {
        n += (size_t)snprintf(big + n, sizeof big - n, "line %d of output ", i);
    }
    char line[4096];
    for (int i = 0; i < 6; i++) {
        char id[8];
        snprintf(id, sizeof id, "s%d", i);
        ctxc_block_t c = t_call(id, "run_shell_command", "{\"command\":\"make\"}");
        t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
        snprintf(line, sizeof line, "\"%s\"", big);
        ctxc_block_t r = t_resp(id, "run_shell_command", line, NULL);
        t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    }
    pin(1, true);
    char l1[4096];
    t_dump(&hist, &before);
    line_of(&before, 1, l1, sizeof l1);
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(run("high-density", 1000, 1000, &s, &err), CTXC_OK);
    assert_true(s.last_compress.middle_compressed > 0);
    char l[4096];
    line_of(&after, 1, l, sizeof l);
    assert_string_equal(l, l1);
    line_of(&before, 3, l1, sizeof l1);
    line_of(&after, 3, l, sizeof l);
    assert_string_not_equal(l, l1); /* the unpinned one was summarised */
    assert_paired();
}

#endif

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_pin_writes_metadata_and_unpin_restores_it,
                               setup),
        cmocka_unit_test_setup(test_pin_unpin_of_empty_metadata_is_exact,
                               setup),
        cmocka_unit_test_setup(test_unpin_removes_every_pinned_key, setup),
        cmocka_unit_test_setup(test_pinning_a_call_pins_its_responses_and_back,
                               setup),
        cmocka_unit_test_setup(test_pin_errors_change_nothing, setup),
        cmocka_unit_test_setup(
            test_plans_that_drop_or_change_a_pinned_entry_are_refused, setup),
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
        cmocka_unit_test_setup(test_top_down_keeps_a_pinned_old_entry_in_place,
                               setup),
        cmocka_unit_test_setup(
            test_top_down_pinned_entries_over_the_target_fail, setup),
        cmocka_unit_test_setup(test_top_down_keeps_a_pinned_tool_pair, setup),
#endif
#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_ONE_SHOT
        cmocka_unit_test_setup(
            test_middle_out_keeps_pinned_entries_after_the_summary, setup),
        cmocka_unit_test_setup(
            test_one_shot_keeps_pinned_entries_after_the_summary, setup),
        cmocka_unit_test_setup(
            test_middle_out_counts_only_unpinned_entries_in_the_middle, setup),
#endif
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test_setup(test_density_step_never_prunes_a_pinned_read,
                               setup),
        cmocka_unit_test_setup(
            test_density_step_never_dedupes_a_pinned_inclusion, setup),
        cmocka_unit_test_setup(test_recency_never_prunes_a_pinned_result,
                               setup),
        cmocka_unit_test_setup(
            test_high_density_compress_never_shortens_a_pinned_result, setup),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
