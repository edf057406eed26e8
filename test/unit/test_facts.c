/*
 * The fact check of LLM summaries (issue 28, part 2): the anchors of the
 * summarised range (paths the tool calls read, wrote or searched, in every
 * vocabulary, normalised against the workspace; failed commands with their
 * exit status or first error line; URLs; identifiers the human wrote in
 * backticks; active todos) are looked for in the summary without a model;
 * the missing ones are appended in one bounded section written by ctxc
 * (most recent first); `retry` asks the model once more, naming them;
 * `off` leaves the summary as the model wrote it. The compress metadata
 * reports found / missing / added.
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

#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_ONE_SHOT

CTXC_HISTORY_DEFINE(hist, 64, 65536);
CTXC_WORK_DEFINE(work, 64, 32768);
static ctxc_settings_store_t set;
static ctxc_session_t sess;

/* ---- the fake model: scripted answers, the last request kept ------------ */

static struct {
    const char *answers[2];
    int calls;
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
    const char *a = fk.answers[fk.calls < 2 ? fk.calls : 1];
    fk.calls++;
    size_t n = strlen(a);
    assert_true(n < cap);
    memcpy(out, a, n + 1);
    *len = n;
    return CTXC_OK;
}

static const ctxc_llm_t fake_llm = {fake_complete, NULL, "fake", "fake-1",
                                    NULL,          NULL, NULL,   NULL};

static ctxc_status_t fake_resolve(void *user, const char *profile,
                                  const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    (void)err;
    *llm = &fake_llm;
    return CTXC_OK;
}

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    fk.answers[0] = fk.answers[1] =
        "<state_snapshot>we worked</state_snapshot>";
    ctxc_settings_init(&set, NULL);
    t_set_uint(&set, "context-limit", 100000);
    return 0;
}

#define FILL " and some more words so that the entry has a decent size here"

/* A session: 2 human + ai turns with tools, then filler; one-shot
 * summarises all but the last 20 %. */
static void history(void) {
    t_add_text(&hist, CTXC_SPEAKER_HUMAN,
               "please fix `parse_header` in the parser, see "
               "https://example.org/spec#headers." FILL);
    ctxc_block_t c1 =
        t_call("c1", "read_file", "{\"file_path\":\"src/parse.c\"}");
    t_add(&hist, CTXC_SPEAKER_AI, &c1, 1);
    ctxc_block_t r1 =
        t_resp("c1", "read_file", "\"int parse_header(void);" FILL "\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r1, 1);
    ctxc_block_t c2 = t_call("c2", "Edit",
                             "{\"file_path\":\"/w/include/parse.h\","
                             "\"old_string\":\"a\",\"new_string\":\"b\"}");
    t_add(&hist, CTXC_SPEAKER_AI, &c2, 1);
    ctxc_block_t r2 = t_resp("c2", "Edit", "\"ok\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r2, 1);
    ctxc_block_t c3 =
        t_call("c3", "run_shell_command", "{\"command\":\"make test\"}");
    t_add(&hist, CTXC_SPEAKER_AI, &c3, 1);
    ctxc_block_t r3 = t_resp(
        "c3", "run_shell_command",
        "{\"exit_code\":2,\"output\":\"test_parse FAILED" FILL "\"}", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r3, 1);
    ctxc_block_t c4 = t_call("c4", "Bash", "{\"command\":\"ls\"}");
    t_add(&hist, CTXC_SPEAKER_AI, &c4, 1);
    ctxc_block_t r4 = t_resp("c4", "Bash", "\"src include\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r4, 1);
    for (int i = 0; i < 7; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI,
                   "filler" FILL FILL);
    }
}

static const ctxc_todo_t todos[] = {
    {"add a regression test for headers", CTXC_TODO_IN_PROGRESS},
    {"an old done thing", CTXC_TODO_COMPLETED},
};

static ctxc_status_t run(const char *mode) {
    t_set(&set, "compression.strategy", "one-shot");
    if (mode != NULL) {
        t_set(&set, "compression.factCheck", mode);
    }
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, fake_resolve, NULL);
    ctxc_session_set_workspace(&sess, "/w");
    ctxc_session_set_todos(&sess, todos, 2);
    ctxc_error_t err;
    ctxc_status_t st = ctxc_session_compress(&sess, &err);
    if (st != CTXC_OK) {
        fail_msg("compress: %s", err.message);
    }
    return st;
}

static const char *summary(void) { return t_block_text(&hist, 0, 0); }

static void test_missing_facts_are_appended_most_recent_first(void **state) {
    (void)state;
    history();
    run(NULL); /* the default: append */
    const char *s = summary();
    assert_true(strncmp(s,
                        "<state_snapshot>we worked</state_snapshot>\n\n"
                        "<ctxc_facts>\nAdded by ctxc, not by the model",
                        86) == 0);
    const char *todo = strstr(s, "- todo (in progress): add a regression "
                                 "test for headers\n");
    const char *make = strstr(s, "- failed command: `make test` (exit 2)\n");
    const char *edit = strstr(s, "- file: include/parse.h\n");
    const char *read = strstr(s, "- file: src/parse.c\n");
    const char *url = strstr(s, "- url: https://example.org/spec#headers\n");
    const char *id = strstr(s, "- identifier: `parse_header`\n");
    assert_non_null(todo);
    assert_non_null(make);
    assert_non_null(edit);
    assert_non_null(read);
    assert_non_null(url);
    assert_non_null(id);
    /* by class (issue 41): what the range changed or broke (newest
     * first), files read, todos, URLs, identifiers */
    assert_true(make < edit && edit < read && read < todo && todo < url &&
                url < id);
    assert_null(strstr(s, "`ls`"));           /* did not fail */
    assert_null(strstr(s, "old done thing")); /* completed */
    assert_non_null(strstr(s, "</ctxc_facts>"));
    assert_int_equal(sess.last_compress.anchors_found, 0);
    assert_int_equal(sess.last_compress.anchors_missing, 6);
    assert_int_equal(sess.last_compress.anchors_added, 6);
    assert_false(sess.last_compress.fact_retry_made);
    assert_int_equal(fk.calls, 1);
    assert_int_equal(sess.last_compress.tokens_after,
                     ctxc_history_tokens(&hist));
}

static void test_facts_the_summary_has_are_not_added(void **state) {
    (void)state;
    history();
    /* paths by their last two components or as written, the command by its
     * text, the todo ignoring case */
    fk.answers[0] = "<state_snapshot>Edited include/parse.h after reading "
                    "/w/src/parse.c; `make test` failed; next: Add a "
                    "regression test for headers; parse_header per "
                    "https://example.org/spec#headers</state_snapshot>";
    run("append");
    assert_string_equal(summary(), fk.answers[0]);
    assert_int_equal(sess.last_compress.anchors_found, 6);
    assert_int_equal(sess.last_compress.anchors_missing, 0);
    assert_int_equal(sess.last_compress.anchors_added, 0);
}

static void test_off_keeps_the_summary_as_written(void **state) {
    (void)state;
    history();
    run("off");
    assert_string_equal(summary(), fk.answers[0]);
    assert_int_equal(sess.last_compress.anchors_missing, 0);
    assert_int_equal(fk.calls, 1);
}

static void test_retry_asks_once_naming_what_is_missing(void **state) {
    (void)state;
    history();
    fk.answers[1] = "<state_snapshot>we worked on src/parse.c and "
                    "include/parse.h; `make test` failed with exit 2; "
                    "parse_header</state_snapshot>";
    run("retry");
    assert_int_equal(fk.calls, 2);
    /* the second request named the missing facts */
    assert_non_null(strstr(fk.request, "left out these facts"));
    assert_non_null(strstr(fk.request, "- file: src/parse.c"));
    const char *s = summary();
    assert_true(strncmp(s, fk.answers[1], strlen(fk.answers[1])) == 0);
    /* what the second answer still misses is appended */
    assert_non_null(strstr(s, "- url: https://example.org/spec#headers\n"));
    assert_non_null(strstr(s, "- todo (in progress): "));
    assert_null(strstr(s, "- file: src/parse.c"));
    assert_true(sess.last_compress.fact_retry_made);
    assert_int_equal(sess.last_compress.anchors_found, 4);
    assert_int_equal(sess.last_compress.anchors_missing, 2);
    assert_int_equal(sess.last_compress.anchors_added, 2);
}

static void test_the_section_is_bounded(void **state) {
    (void)state;
    char text[128];
    for (int i = 0; i < 40; i++) {
        snprintf(text, sizeof text, "look at `ident_%02d` please" FILL, i);
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
    }
    run("append");
    const char *s = summary();
    size_t items = 0;
    for (const char *p = s; (p = strstr(p, "\n- ")) != NULL; p++) {
        items += strncmp(p, "\n- and ", 7) != 0; /* the todo, identifiers */
    }
    if (items != CTXC_CFG_FACT_CHECK_MAX_ITEMS) {
        fail_msg("%zu items in:\n%s", items, s);
    }
    assert_non_null(strstr(s, "- and 5 more not listed"));
    const char *sec = strstr(s, "\n\n<ctxc_facts>");
    assert_non_null(sec);
    assert_true(strlen(sec) <= CTXC_CFG_FACT_CHECK_MAX_BYTES);
    /* most recent first: the summarised human entries 30, 28, ... */
    assert_non_null(strstr(s, "`ident_30`"));
    assert_true(strstr(s, "`ident_30`") < strstr(s, "`ident_28`"));
    assert_null(strstr(s, "`ident_00`"));
    assert_int_equal(sess.last_compress.anchors_missing, 17);
    assert_int_equal(sess.last_compress.anchors_added,
                     CTXC_CFG_FACT_CHECK_MAX_ITEMS);
}

/* Issue 41, the ranking: a range that read or wrote 11 files (absolute
 * paths under the workspace), failed one command, with 3 URLs and 24
 * backticked identifiers the human wrote later; the summary names none
 * of them (34 anchors missing in the summarised range, 12 slots). The files
 * written and the failed command come first, then the files read: every file
 * survives, shortened relative to the workspace (before: one file and ten
 * identifiers took the slots). */
static void test_ranking_keeps_files_before_identifiers(void **state) {
    (void)state;
    char params[160], text[200], id[8];
    /* the oldest: the files (5 written, 6 read), one failed command */
    for (int i = 0; i < 11; i++) {
        snprintf(id, sizeof id, "f%02d", i);
        snprintf(params, sizeof params,
                 "{\"file_path\":\"/home/dev/fw/src/drivers/net/"
                 "eth_port_%02d.c\"%s}",
                 i, i % 2 ? "" : ",\"content\":\"x\"");
        ctxc_block_t c = t_call(id, i % 2 ? "read_file" : "write_file", params);
        t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
        ctxc_block_t r =
            t_resp(id, i % 2 ? "read_file" : "write_file", "\"ok\"", NULL);
        t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    }
    ctxc_block_t c = t_call("m1", "Bash", "{\"command\":\"make flash\"}");
    t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
    ctxc_block_t r =
        t_resp("m1", "Bash", "{\"exit_code\":2,\"output\":\"no probe\"}", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    /* then the human's URLs and identifiers, newer (3 a message) */
    for (int i = 0; i < 8; i++) {
        snprintf(text, sizeof text,
                 "also `net_ident_%02d`, `net_ident_%02d` and `net_ident_%02d`"
                 "%s%d",
                 3 * i, 3 * i + 1, 3 * i + 2,
                 i < 3 ? " per https://example.org/doc" : " ", i);
        t_add_text(&hist, CTXC_SPEAKER_HUMAN, text);
        t_add_text(&hist, CTXC_SPEAKER_AI, "ok" FILL);
    }
    for (int i = 0; i < 6; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                   "filler" FILL FILL);
    }
    t_set(&set, "compression.strategy", "one-shot");
    t_set(&set, "compression.factCheck", "append");
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, fake_resolve, NULL);
    ctxc_session_set_workspace(&sess, "/home/dev/fw");
    ctxc_session_set_todos(&sess, todos, 2);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_compress(&sess, &err), CTXC_OK);
    const char *s = summary();
    size_t files = 0;
    for (int i = 0; i < 11; i++) {
        char want[64];
        snprintf(want, sizeof want, "- file: src/drivers/net/eth_port_%02d.c\n",
                 i);
        files += strstr(s, want) != NULL;
    }
    if (files != 11) {
        fail_msg("%zu of 11 files in:\n%s", files, s);
    }
    const char *make = strstr(s, "- failed command: `make flash` (exit 2)");
    const char *written = strstr(s, "eth_port_10.c");
    const char *read = strstr(s, "eth_port_09.c");
    const char *more = strstr(s, "more not listed");
    assert_non_null(make);
    assert_non_null(more);
    /* changed (newest first), then read; the 12 slots are taken by them,
     * the todo, URLs and identifiers are counted in "and N more" */
    assert_true(make < written && written < read && read < more);
    assert_null(strstr(s, "net_ident_"));
    assert_null(strstr(s, "/home/dev/fw/")); /* relative to the workspace */
    /* 11 files, the command, the todo, 3 URLs, the identifiers of the
     * summarised messages (the last 20 % are kept) */
    assert_true(sess.last_compress.anchors_missing > 30);
    assert_int_equal(sess.last_compress.anchors_added,
                     CTXC_CFG_FACT_CHECK_MAX_ITEMS);
    assert_true(strlen(strstr(s, "\n\n<ctxc_facts>")) <=
                CTXC_CFG_FACT_CHECK_MAX_BYTES);
}

/* A long failed command shows its first 96 bytes (the bytes of the
 * section go to more items), its detail at most 60. */
static void test_a_long_failed_command_is_cut(void **state) {
    (void)state;
    char cmd[400], params[480], err[200];
    memset(cmd, 0, sizeof cmd);
    for (size_t i = 0; i < 300; i++) {
        cmd[i] = (char)('a' + i % 26);
    }
    memset(err, 'E', 150);
    err[150] = '\0';
    snprintf(params, sizeof params, "{\"command\":\"%s\"}", cmd);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "build it" FILL);
    ctxc_block_t c = t_call("k1", "Bash", params);
    t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
    ctxc_block_t r = t_resp("k1", "Bash", "\"\"", err);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    for (int i = 0; i < 7; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI,
                   "filler" FILL FILL);
    }
    run("append");
    const char *s = summary();
    char want[160];
    snprintf(want, sizeof want, "- failed command: `%.96s...` (", cmd);
    const char *item = strstr(s, want);
    if (item == NULL) {
        fail_msg("no '%s' in:\n%s", want, s);
    }
    const char *open = item + strlen(want);
    assert_true(strncmp(open, "EEEE", 4) == 0);
    assert_int_equal(strchr(open, ')') - open, 60 + 3); /* and "..." */
}

/* Review item 4: the check asks the port's stop hook as it goes; a stop
 * ends the compression with CTXC_E_CANCELLED and the history as it was. */
static int stop_asked;
static bool stop_now(void *ctx) {
    (void)ctx;
    stop_asked++;
    return true;
}

static void test_the_stop_hook_ends_the_check(void **state) {
    (void)state;
    history();
    t_snap_t snap;
    t_snapshot(&hist, &snap);
    ctxc_port_t port;
    memset(&port, 0, sizeof port);
    port.stop = stop_now;
    t_set(&set, "compression.strategy", "one-shot");
    t_set(&set, "compression.factCheck", "append");
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_port(&sess, &port);
    ctxc_session_set_llm_resolver(&sess, fake_resolve, NULL);
    ctxc_session_set_workspace(&sess, "/w");
    ctxc_error_t err;
    stop_asked = 0;
    assert_int_equal(ctxc_session_compress(&sess, &err), CTXC_E_CANCELLED);
    assert_non_null(strstr(err.message, "fact check"));
    assert_true(stop_asked > 0);
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(fk.calls, 1); /* after the model's answer */
}

static void test_pinned_entries_are_not_checked(void **state) {
    (void)state;
    history();
    ctxc_error_t err;
    assert_int_equal(ctxc_history_pin(&hist, 0, true, &err), CTXC_OK);
    run("append");
    const char *s = t_block_text(&hist, 0, 0); /* the summary comes first */
    (void)s;
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, 0, &e), CTXC_OK);
    assert_true(e.flags & CTXC_ENTRY_IS_SUMMARY);
    const char *sum = t_block_text(&hist, 0, 0);
    assert_null(strstr(sum, "identifier: `parse_header`"));
    assert_null(strstr(sum, "url: https://example.org"));
    assert_non_null(strstr(sum, "- file: src/parse.c"));
}

#endif

int main(void) {
#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_ONE_SHOT
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(
            test_missing_facts_are_appended_most_recent_first, setup),
        cmocka_unit_test_setup(test_facts_the_summary_has_are_not_added, setup),
        cmocka_unit_test_setup(test_off_keeps_the_summary_as_written, setup),
        cmocka_unit_test_setup(test_retry_asks_once_naming_what_is_missing,
                               setup),
        cmocka_unit_test_setup(test_the_section_is_bounded, setup),
        cmocka_unit_test_setup(test_pinned_entries_are_not_checked, setup),
        cmocka_unit_test_setup(test_ranking_keeps_files_before_identifiers,
                               setup),
        cmocka_unit_test_setup(test_the_stop_hook_ends_the_check, setup),
        cmocka_unit_test_setup(test_a_long_failed_command_is_cut, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    printf("test_facts: the LLM strategies are not in this build\n");
    return 0;
#endif
}
