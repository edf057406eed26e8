/*
 * high-density (REQ-HD-001 ... REQ-HD-008, REQ-HD-013): the density step
 * (read->write pruning, @file dedupe, recency pruning, exact counts,
 * malformed parameters skipped) and compress (one-line summaries of older
 * tool results, recent tail kept, no LLM).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

CTXC_HISTORY_DEFINE(hist, 128, 65536);
CTXC_WORK_DEFINE(work, 128, 32768);
static t_dump_t before, after;
static ctxc_settings_store_t set;
static const char *workspace; /* the session's workspace root */

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "100000");
    workspace = "/w";
    return 0;
}

/* The history's checks after a density step (tokens never grow, pairing). */
static void after_density(uint64_t tokens) {
    t_dump(&hist, &after);
    assert_true(ctxc_history_tokens(&hist) <= tokens);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
}

/* The density step through a session over `set` and `workspace`. */
static ctxc_density_counts_t optimize(void) {
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, workspace);
    t_dump(&hist, &before);
    uint64_t tokens = ctxc_history_tokens(&hist);
    if (ctxc_session_optimize(&s, &err) != CTXC_OK) {
        fail_msg("optimize failed: %s", err.message);
    }
    after_density(tokens);
    return s.last_density;
}

/* The strategy's optimize called directly with a density configuration the
 * settings store cannot hold, then applied. */
static ctxc_density_counts_t optimize_with(const ctxc_density_config_t *cfg) {
    t_dump(&hist, &before);
    uint64_t tokens = ctxc_history_tokens(&hist);
    ctxc_density_counts_t counts = t_density_step(&hist, cfg, &work);
    after_density(tokens);
    return counts;
}

#define READ(id, params)                                                       \
    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"" id     \
    "\",\"name\":\"read_file\",\"parameters\":" params "}]}\n"
#define CALL(id, name, params)                                                 \
    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"" id     \
    "\",\"name\":\"" name "\",\"parameters\":" params "}]}\n"
#define RESP(id, name, result)                                                 \
    "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\",\"callId\":\"" id \
    "\",\"toolName\":\"" name "\",\"result\":\"" result "\"}]}\n"
#define HUMAN(text)                                                            \
    "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"" text "\"}]}\n"
#define BODY "int main(void) { return 0; } /* a file body long enough */"

/* ---- read->write pruning ------------------------------------------------- */

static void test_read_of_a_file_written_later_is_pruned_with_its_response(void **state) {
    (void)state;
    t_import(&hist, HUMAN("fix it")
                    READ("r1", "{\"file_path\":\"src/a.c\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "replace", "{\"file_path\":\"/w/src/a.c\",\"old_string\":\"0\",\"new_string\":\"1\"}")
                    RESP("w1", "replace", "ok"));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 1);
    assert_int_equal(c.read_write_entries_removed, 2);
    assert_int_equal(c.read_write_entries_replaced, 0);
    assert_int_equal(ctxc_history_count(&hist), 3);
    assert_null(strstr(after.buf, "\"r1\""));
    assert_non_null(strstr(after.buf, "\"w1\""));
}

static void test_pruning_is_block_level(void **state) {
    (void)state;
    t_import(&hist,
             HUMAN("look")
             "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":\"reading\"},"
             "{\"type\":\"tool_call\",\"id\":\"r1\",\"name\":\"read_file\",\"parameters\":{\"file_path\":\"a.c\"}},"
             "{\"type\":\"tool_call\",\"id\":\"r2\",\"name\":\"read_line_range\",\"parameters\":{\"file_path\":\"b.c\",\"start\":1,\"end\":9}}]}\n"
             "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\",\"callId\":\"r1\",\"toolName\":\"read_file\",\"result\":\"" BODY "\"},"
             "{\"type\":\"tool_response\",\"callId\":\"r2\",\"toolName\":\"read_line_range\",\"result\":\"" BODY "\"}]}\n"
             CALL("w1", "write_file", "{\"file_path\":\"a.c\",\"content\":\"x\"}")
             RESP("w1", "write_file", "ok"));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 1);
    assert_int_equal(c.read_write_entries_removed, 0);
    assert_int_equal(c.read_write_entries_replaced, 2);
    assert_int_equal(ctxc_history_count(&hist), 5);
    /* the ai entry keeps its text and the other call, the tool entry the
     * other response */
    ctxc_entry_t e;
    ctxc_history_get(&hist, 1, &e);
    assert_int_equal(e.block_count, 2);
    assert_string_equal(t_block_text(&hist, 1, 0), "reading");
    assert_string_equal(t_block_text(&hist, 1, 1), "r2");
    ctxc_history_get(&hist, 2, &e);
    assert_int_equal(e.block_count, 1);
    assert_null(strstr(after.buf, "\"r1\""));
}

static void test_every_write_tool_counts(void **state) {
    (void)state;
    const char *writers[] = {"write_file", "ast_edit", "replace", "insert_at_line",
                             "delete_line_range"};
    for (size_t i = 0; i < 5; i++) {
        setup(NULL);
        char text[2048];
        snprintf(text, sizeof text,
                 READ("r1", "{\"file_path\":\"a.c\"}") RESP("r1", "read_file", BODY)
                 "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"w\","
                 "\"name\":\"%s\",\"parameters\":{\"file_path\":\"a.c\"}}]}\n"
                 RESP("w", "x", "ok"),
                 writers[i]);
        t_import(&hist, text);
        assert_int_equal(optimize().read_write_pruned, 1);
    }
    /* a tool that only looks does not count as a write */
    setup(NULL);
    t_import(&hist, READ("r1", "{\"file_path\":\"a.c\"}") RESP("r1", "read_file", BODY)
                    CALL("g", "search_file_content", "{\"file_path\":\"a.c\"}")
                    RESP("g", "search_file_content", "x"));
    assert_int_equal(optimize().read_write_pruned, 0);
}

static void test_path_keys_are_taken_in_order(void **state) {
    (void)state;
    /* file_path wins over path: the read is of a.c */
    t_import(&hist, READ("r1", "{\"path\":\"x.c\",\"file_path\":\"a.c\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "write_file", "{\"path\":\"x.c\"}")
                    RESP("w1", "write_file", "ok"));
    assert_int_equal(optimize().read_write_pruned, 0);
    setup(NULL);
    t_import(&hist, READ("r1", "{\"absolute_path\":\"/w/a.c\",\"path\":\"x.c\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "write_file", "{\"path\":\"/w/./src/../a.c\"}")
                    RESP("w1", "write_file", "ok"));
    assert_int_equal(optimize().read_write_pruned, 1);
}

static void test_no_case_folding_and_write_before_read(void **state) {
    (void)state;
    t_import(&hist, READ("r1", "{\"file_path\":\"README.md\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "write_file", "{\"file_path\":\"readme.md\"}")
                    RESP("w1", "write_file", "ok")
                    CALL("w2", "write_file", "{\"file_path\":\"b.c\"}")
                    RESP("w2", "write_file", "ok")
                    READ("r2", "{\"file_path\":\"b.c\"}") /* after the write */
                    RESP("r2", "read_file", BODY));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 0);
    assert_string_equal(after.buf, before.buf);
}

static void test_relative_paths_resolve_against_the_workspace(void **state) {
    (void)state;
    t_import(&hist, READ("r1", "{\"file_path\":\"/w/lib/../src/a.c\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "replace", "{\"file_path\":\"src//a.c\"}")
                    RESP("w1", "replace", "ok"));
    assert_int_equal(optimize().read_write_pruned, 1);
    /* another workspace: src/a.c is /elsewhere/src/a.c */
    setup(NULL);
    workspace = "/elsewhere";
    t_import(&hist, READ("r1", "{\"file_path\":\"/w/src/a.c\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "replace", "{\"file_path\":\"src/a.c\"}")
                    RESP("w1", "replace", "ok"));
    assert_int_equal(optimize().read_write_pruned, 0);
}

static void test_relative_paths_without_a_workspace_root(void **state) {
    (void)state;
    workspace = NULL; /* the default */
    t_import(&hist, READ("r1", "{\"file_path\":\"src/./a.c\"}")
                    RESP("r1", "read_file", BODY)
                    CALL("w1", "replace", "{\"file_path\":\"src/a.c\"}")
                    RESP("w1", "replace", "ok"));
    assert_int_equal(optimize().read_write_pruned, 1);
}

static void test_read_many_files_rule(void **state) {
    (void)state;
    const char *tail = CALL("w1", "write_file", "{\"file_path\":\"a.c\"}")
        RESP("w1", "write_file", "ok") CALL("w2", "write_file", "{\"file_path\":\"b.c\"}")
            RESP("w2", "write_file", "ok");
    struct {
        const char *params;
        size_t pruned;
    } cases[] = {
        {"{\"paths\":[\"a.c\",\"/w/b.c\"]}", 1},  /* every path written later */
        {"{\"paths\":[\"a.c\",\"c.c\"]}", 0},     /* c.c is not */
        {"{\"paths\":[\"a.c\",\"src/*.c\"]}", 0}, /* a glob */
        {"{\"paths\":[\"a.c\"],\"include\":[\"*.h\"]}", 0},
        {"{\"paths\":[]}", 0},
        {"{\"paths\":\"a.c\"}", 0}, /* malformed */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        setup(NULL);
        char text[4096];
        snprintf(text, sizeof text,
                 "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"m\","
                 "\"name\":\"read_many_files\",\"parameters\":%s}]}\n%s%s",
                 cases[i].params, RESP("m", "read_many_files", BODY), tail);
        t_import(&hist, text);
        if (optimize().read_write_pruned != cases[i].pruned) {
            fail_msg("case %zu (%s): expected %zu", i, cases[i].params,
                     cases[i].pruned);
        }
    }
}

static void test_malformed_parameters_are_skipped(void **state) {
    (void)state;
    t_import(&hist, READ("r1", "{\"file_path\":42}") RESP("r1", "read_file", BODY)
                    READ("r2", "[\"a.c\"]") RESP("r2", "read_file", BODY)
                    READ("r3", "{}") RESP("r3", "read_file", BODY)
                    READ("r4", "{\"file_path\":\"\"}") RESP("r4", "read_file", BODY)
                    CALL("w1", "write_file", "{\"file_path\":null}")
                    RESP("w1", "write_file", "ok")
                    CALL("w2", "write_file", "{\"file_path\":\"a.c\"}")
                    RESP("w2", "write_file", "ok"));
    ctxc_density_counts_t c = optimize(); /* no error */
    assert_int_equal(c.read_write_pruned, 0);
    assert_string_equal(after.buf, before.buf);
}

static void test_read_write_pruning_can_be_switched_off(void **state) {
    (void)state;
    t_set(&set, "compression.density.readWritePruning", "false");
    t_import(&hist, READ("r1", "{\"file_path\":\"a.c\"}") RESP("r1", "read_file", BODY)
                    CALL("w1", "write_file", "{\"file_path\":\"a.c\"}")
                    RESP("w1", "write_file", "ok"));
    assert_int_equal(optimize().read_write_pruned, 0);
    assert_string_equal(after.buf, before.buf);
}

/* ---- @file dedupe -------------------------------------------------------- */

#define INCL(path, body) "--- " path " ---\\n" body "\\n--- End of content ---"

static void test_three_inclusions_keep_only_the_latest(void **state) {
    (void)state;
    t_import(&hist,
             HUMAN("first\\n" INCL("src/log.h", "#define LOG_V1 1 // version one of the header, long enough"))
             HUMAN("again\\n" INCL("src/log.h", "#define LOG_V2 2 // version two of the header, long enough"))
             HUMAN("last\\n" INCL("src/log.h", "#define LOG_V3 3 // version three of the header, long enough")));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.file_dedupe_replaced, 2);
    assert_int_equal(c.file_dedupe_entries, 2);
    assert_int_equal(ctxc_history_count(&hist), 3); /* replaced, not removed */
    assert_string_equal(t_block_text(&hist, 0, 0),
                        "first\n--- src/log.h ---\n[superseded by a later inclusion "
                        "of this file]\n--- End of content ---");
    assert_null(strstr(after.buf, "LOG_V1"));
    assert_null(strstr(after.buf, "LOG_V2"));
    assert_non_null(strstr(after.buf, "LOG_V3"));
}

static void test_dedupe_never_grows_a_short_inclusion(void **state) {
    (void)state;
    t_import(&hist, HUMAN("a\\n" INCL("s.h", "int s;")) HUMAN("b\\n" INCL("s.h", "int t;")));
    assert_int_equal(optimize().file_dedupe_replaced, 0);
    assert_string_equal(after.buf, before.buf);
}

static void test_dedupe_never_grows_tokens_of_dense_content(void **state) {
    (void)state;
    /* a message counted by its many short words: replacing one long word
     * of content by the eight words of the note would add tokens */
#define WORDS20 "a b c d e f g h i j k l m n o p q r s t "
    t_import(&hist,
             HUMAN(WORDS20 WORDS20 WORDS20 "\\n" INCL("k.b64", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlq"))
             HUMAN("b\\n" INCL("k.b64", "QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVphYmNkZWZnaGlr")));
    uint64_t tokens = ctxc_history_tokens(&hist);
    ctxc_density_counts_t c = optimize();
    assert_true(ctxc_history_tokens(&hist) <= tokens);
    assert_int_equal(c.file_dedupe_replaced, 0);
    assert_string_equal(after.buf, before.buf);
}

static void test_dedupe_leaves_unpaired_markers_and_other_files(void **state) {
    (void)state;
    t_import(&hist,
             HUMAN("--- src/a.h ---\\nno closing marker here, so this stays as it is")
             HUMAN("b " INCL("src/b.h", "int b_version_one_of_this_header_file;"))
             HUMAN("--- src/a.h ---\\nstill no closing marker in this message at all")
             HUMAN("c " INCL("src/c.h", "int only_one_inclusion_of_this_file;")));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.file_dedupe_replaced, 0);
    assert_string_equal(after.buf, before.buf);
}

static void test_dedupe_within_one_message_and_paths_resolved(void **state) {
    (void)state;
    t_import(&hist, HUMAN("two in one:\\n" INCL("./src/x.h", "int x_old_version_of_the_file; /* longer than the note */")
                          "\\nand\\n" INCL("/w/src/x.h", "int x_new_version_of_the_file; /* longer than the note */")));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.file_dedupe_replaced, 1);
    assert_null(strstr(after.buf, "x_old_version"));
    assert_non_null(strstr(after.buf, "x_new_version"));
}

/* ---- recency pruning ----------------------------------------------------- */

static void five_reads_two_shells(void) {
    t_import(&hist, READ("r1", "{\"file_path\":\"1.c\"}") RESP("r1", "read_file", BODY " one")
                    READ("r2", "{\"file_path\":\"2.c\"}") RESP("r2", "read_file", BODY " two")
                    CALL("s1", "run_shell_command", "{\"command\":\"make\"}")
                    RESP("s1", "run_shell_command", BODY " build")
                    READ("r3", "{\"file_path\":\"3.c\"}") RESP("r3", "read_file", BODY " three")
                    READ("r4", "{\"file_path\":\"4.c\"}") RESP("r4", "read_file", BODY " four")
                    CALL("s2", "run_shell_command", "{\"command\":\"make test\"}")
                    RESP("s2", "run_shell_command", BODY " test")
                    READ("r5", "{\"file_path\":\"5.c\"}") RESP("r5", "read_file", "ok"));
}

static void test_recency_is_off_by_default(void **state) {
    (void)state;
    five_reads_two_shells();
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.recency_pruned, 0);
    assert_string_equal(after.buf, before.buf);
}

static void test_recency_keeps_the_newest_per_tool(void **state) {
    (void)state;
    t_set(&set, "compression.density.recencyPruning", "true"); /* keeps 3 */
    five_reads_two_shells();
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.recency_pruned, 2); /* r1, r2; shells untouched */
    assert_int_equal(c.recency_entries, 2);
    assert_int_equal(ctxc_history_count(&hist), 14); /* structure kept */
    assert_string_equal(t_block_text(&hist, 1, 0),
                        "\"[Result pruned \xe2\x80\x94 re-run tool to retrieve]\"");
    assert_string_equal(t_block_text(&hist, 3, 0),
                        "\"[Result pruned \xe2\x80\x94 re-run tool to retrieve]\"");
    assert_non_null(strstr(after.buf, BODY " three"));
    assert_non_null(strstr(after.buf, BODY " build"));
    ctxc_entry_t e;
    ctxc_block_t b;
    ctxc_history_get(&hist, 1, &e);
    ctxc_entry_block(&e, 0, &b);
    assert_string_equal(b.u.tool_response.call_id.ptr, "r1");
    assert_string_equal(b.u.tool_response.tool_name.ptr, "read_file");
}

/* The setting cannot be 0 (the store refuses it and keeps what it had);
 * the strategy itself still counts a retention below one as one. */
static void test_recency_retention_below_one_counts_as_one(void **state) {
    (void)state;
    ctxc_error_t err;
    t_set(&set, "compression.density.recencyRetention", "2");
    assert_int_equal(ctxc_settings_set(&set,
                                       "compression.density.recencyRetention",
                                       "0", &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "recencyRetention"));
    uint32_t kept = 0;
    assert_true(
        ctxc_settings_int(&set, CTXC_SETTING_DENSITY_RECENCY_RETENTION, &kept));
    assert_int_equal(kept, 2); /* unchanged */
    assert_int_equal(
        ctxc_settings_get(&set, CTXC_SETTING_DENSITY_RECENCY_RETENTION, NULL),
        CTXC_SOURCE_EPHEMERAL);

    ctxc_density_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    ctxc_settings_density(&set, &cfg); /* the defaults of the other three */
    cfg.recency_pruning = true;
    cfg.recency_retention = 0;
    cfg.workspace_root = "/w";
    five_reads_two_shells();
    ctxc_density_counts_t c = optimize_with(&cfg);
    /* read_file keeps r5 only (r1-r4 pruned); shells keep s2 (s1 pruned) */
    assert_int_equal(c.recency_pruned, 5);
    assert_non_null(strstr(after.buf, BODY " test"));
    assert_null(strstr(after.buf, BODY " build"));
    /* the same result as retention 1 (the smallest the store takes) through
     * a session */
    static t_dump_t direct;
    memcpy(&direct, &after, sizeof direct);
    ctxc_history_clear(&hist);
    t_set(&set, "compression.density.recencyPruning", "true");
    t_set(&set, "compression.density.recencyRetention", "1");
    five_reads_two_shells();
    assert_int_equal(optimize().recency_pruned, 5);
    assert_string_equal(after.buf, direct.buf);
}

static void test_recency_never_grows_a_small_result(void **state) {
    (void)state;
    t_set(&set, "compression.density.recencyPruning", "true");
    t_set(&set, "compression.density.recencyRetention", "1");
    t_import(&hist, READ("r1", "{\"file_path\":\"1.c\"}") RESP("r1", "read_file", "ok")
                    READ("r2", "{\"file_path\":\"2.c\"}") RESP("r2", "read_file", "ok"));
    assert_int_equal(optimize().recency_pruned, 0);
    assert_string_equal(after.buf, before.buf);
}


/* ---- the indexed path and the scans agree -------------------------------- */

/* A history with every kind of density edit: reads pruned by later writes
 * (also read_many_files and a read answered in a tool entry with two
 * results), a read of a file never written, @file inclusions repeated in
 * and across messages (one path that does not resolve), and results of
 * several tools for recency. */
#define P64 "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0/"
#define LONG_PATH P64 P64 P64 P64 P64 P64 P64 P64 P64 "x.h" /* > CTXC_CFG_PATH_MAX */
static void rich_history(void) {
    t_import(&hist,
             HUMAN("start\\n" INCL("src/a.h", "int a_version_one; /* long enough for the note */")
                   "\\n" INCL(LONG_PATH, "a path too long to resolve, compared as written"))
             READ("r1", "{\"file_path\":\"src/a.c\"}") RESP("r1", "read_file", BODY " a1")
             "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"r2\",\"name\":\"read_file\","
             "\"parameters\":{\"file_path\":\"/w/src/b.c\"}},{\"type\":\"tool_call\",\"id\":\"g1\","
             "\"name\":\"glob\",\"parameters\":{\"pattern\":\"*.c\"}}]}\n"
             "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\",\"callId\":\"g1\","
             "\"toolName\":\"glob\",\"result\":\"" BODY " g1\"},{\"type\":\"tool_response\","
             "\"callId\":\"r2\",\"toolName\":\"read_file\",\"result\":\"" BODY " b1\"}]}\n"
             CALL("m1", "read_many_files", "{\"paths\":[\"src/a.c\",\"src/b.c\"]}")
             RESP("m1", "read_many_files", BODY " many")
             READ("r3", "{\"file_path\":\"src/never_written.c\"}") RESP("r3", "read_file", BODY " nw")
             CALL("s1", "run_shell_command", "{\"command\":\"make\"}")
             RESP("s1", "run_shell_command", BODY " build one")
             HUMAN("again\\n" INCL("./src/a.h", "int a_version_two; /* long enough for the note */")
                   "\\n" INCL(LONG_PATH, "a path too long to resolve, again")
                   "\\n" INCL("./" LONG_PATH, "the same path written another way, kept"))
             CALL("w1", "replace", "{\"file_path\":\"src/a.c\",\"old_string\":\"0\",\"new_string\":\"1\"}")
             RESP("w1", "replace", "ok")
             CALL("w2", "write_file", "{\"file_path\":\"src/b.c\",\"content\":\"x\"}")
             RESP("w2", "write_file", "ok")
             CALL("s2", "run_shell_command", "{\"command\":\"make test\"}")
             RESP("s2", "run_shell_command", BODY " build two")
             READ("r4", "{\"file_path\":\"src/a.c\"}") RESP("r4", "read_file", BODY " a2")
             CALL("g2", "glob", "{\"pattern\":\"*.h\"}") RESP("g2", "glob", BODY " g2")
             HUMAN("last\\n" INCL("/w/src/a.h", "int a_version_three; /* long enough for the note */")));
}

/* The density step over `w` (optimize_with's steps with another work
 * area). */
static ctxc_density_counts_t optimize_in(const ctxc_density_config_t *cfg,
                                         ctxc_work_t *w) {
    ctxc_density_counts_t counts = t_density_step(&hist, cfg, w);
    t_dump(&hist, &after);
    return counts;
}

/* The same history through the density step with the work area's index and
 * with less or none (the scans): the same history and counts. */
static void assert_index_sizes_agree(void (*make)(void),
                                     const ctxc_density_config_t *cfg,
                                     bool expect_edits) {
    static t_dump_t indexed;
    static const size_t slots[] = {0, 2, 16, 32};
    ctxc_history_clear(&hist);
    make();
    t_dump(&hist, &before);
    ctxc_density_counts_t c = optimize_in(cfg, &work);
    memcpy(&indexed, &after, sizeof indexed);
    if (expect_edits) {
        assert_string_not_equal(indexed.buf, before.buf);
    }
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        ctxc_work_t small = work; /* the same memory, a smaller index */
        small.index_slots = slots[i];
        if (slots[i] == 0) {
            small.index = NULL;
        }
        ctxc_history_clear(&hist);
        make();
        ctxc_density_counts_t d = optimize_in(cfg, &small);
        assert_string_equal(after.buf, indexed.buf);
        assert_memory_equal(&d, &c, sizeof c);
    }
}

/* More @file paths than a small key table holds, few tool ids. */
static void many_inclusions(void) {
#define INC2(n) INCL("src/f" n ".h", "int version_of_file_" n "; /* long enough */")
    t_import(&hist,
             HUMAN("a\\n" INC2("1") "\\n" INC2("2") "\\n" INC2("3") "\\n" INC2("4") "\\n"
                   INC2("5") "\\n" INC2("6") "\\n" INC2("7") "\\n" INC2("8"))
             READ("r1", "{\"file_path\":\"src/f1.h\"}") RESP("r1", "read_file", BODY)
             HUMAN("b\\n" INC2("9") "\\n" INC2("10") "\\n" INC2("11") "\\n" INC2("12") "\\n"
                   INC2("13") "\\n" INC2("14") "\\n" INC2("1") "\\n" INC2("5"))
             CALL("w1", "write_file", "{\"file_path\":\"src/f1.h\",\"content\":\"x\"}")
             RESP("w1", "write_file", "ok")
             HUMAN("c\\n" INC2("2") "\\n" INC2("9") "\\n" INC2("14")));
#undef INC2
}

/* A tool entry with more results than an entry's marks have bits for (12,
 * two tools, two of them dropped with reads of files written later), and
 * newer results of both tools. */
#define WCALL(id, name, params)                                                \
    "{\"type\":\"tool_call\",\"id\":\"" id "\",\"name\":\"" name                \
    "\",\"parameters\":" params "}"
#define WRESP(id, name, result)                                                \
    "{\"type\":\"tool_response\",\"callId\":\"" id "\",\"toolName\":\"" name    \
    "\",\"result\":\"" result "\"}"
static void wide_tool_entry(void) {
    t_import(&hist,
             "{\"speaker\":\"ai\",\"blocks\":["
             WCALL("r1", "read_file", "{\"file_path\":\"1.c\"}") ","
             WCALL("g1", "glob", "{\"pattern\":\"1\"}") ","
             WCALL("r2", "read_file", "{\"file_path\":\"2.c\"}") ","
             WCALL("g2", "glob", "{\"pattern\":\"2\"}") ","
             WCALL("r3", "read_file", "{\"file_path\":\"3.c\"}") ","
             WCALL("g3", "glob", "{\"pattern\":\"3\"}") ","
             WCALL("r4", "read_file", "{\"file_path\":\"4.c\"}") ","
             WCALL("g4", "glob", "{\"pattern\":\"4\"}") ","
             WCALL("r5", "read_file", "{\"file_path\":\"5.c\"}") ","
             WCALL("g5", "glob", "{\"pattern\":\"5\"}") ","
             WCALL("r6", "read_file", "{\"file_path\":\"6.c\"}") ","
             WCALL("g6", "glob", "{\"pattern\":\"6\"}") "]}\n"
             "{\"speaker\":\"tool\",\"blocks\":["
             WRESP("r1", "read_file", BODY " 1") "," WRESP("g1", "glob", BODY " g1") ","
             WRESP("r2", "read_file", BODY " 2") "," WRESP("g2", "glob", BODY " g2") ","
             WRESP("r3", "read_file", BODY " 3") "," WRESP("g3", "glob", BODY " g3") ","
             WRESP("r4", "read_file", BODY " 4") "," WRESP("g4", "glob", BODY " g4") ","
             WRESP("r5", "read_file", BODY " 5") "," WRESP("g5", "glob", BODY " g5") ","
             WRESP("r6", "read_file", BODY " 6") "," WRESP("g6", "glob", BODY " g6") "]}\n"
             CALL("w1", "write_file", "{\"file_path\":\"2.c\",\"content\":\"x\"}")
             RESP("w1", "write_file", "ok")
             CALL("w2", "write_file", "{\"file_path\":\"6.c\",\"content\":\"x\"}")
             RESP("w2", "write_file", "ok")
             READ("r7", "{\"file_path\":\"7.c\"}") RESP("r7", "read_file", BODY " 7")
             CALL("g7", "glob", "{\"pattern\":\"7\"}") RESP("g7", "glob", BODY " g7"));
}
#undef WCALL
#undef WRESP

/* Results of a tool with an empty name between results of another. */
static void empty_tool_names(void) {
    t_import(&hist, CALL("e1", "", "{}") RESP("e1", "", BODY " e1")
                    CALL("x1", "x", "{}") RESP("x1", "x", BODY " x1")
                    CALL("e2", "", "{}") RESP("e2", "", BODY " e2")
                    CALL("e3", "", "{}") RESP("e3", "", BODY " e3")
                    CALL("x2", "x", "{}") RESP("x2", "x", BODY " x2"));
}

static void test_density_step_without_room_for_the_index_gives_the_same_result(void **state) {
    (void)state;
    ctxc_density_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.read_write_pruning = true;
    cfg.file_dedupe = true;
    cfg.workspace_root = "/w";
    assert_index_sizes_agree(rich_history, &cfg, true);
    cfg.recency_pruning = true;
    for (uint32_t keep = 0; keep <= 3; keep++) {
        cfg.recency_retention = keep;
        assert_index_sizes_agree(rich_history, &cfg, true);
    }
    /* a retention above 16 bits (the index path now takes it too):
     * nothing has that many newer results, so nothing is pruned with or
     * without room for the index */
    cfg.recency_retention = 0x10001u;
    assert_index_sizes_agree(rich_history, &cfg, false);
    cfg.recency_retention = 3;
    cfg.read_write_pruning = false;
    assert_index_sizes_agree(rich_history, &cfg, true);
    assert_index_sizes_agree(five_reads_two_shells, &cfg, true);
    cfg.read_write_pruning = true;
    assert_index_sizes_agree(many_inclusions, &cfg, true);
    for (uint32_t keep = 1; keep <= 6; keep++) {
        cfg.recency_retention = keep;
        assert_index_sizes_agree(wide_tool_entry, &cfg, true);
    }
    cfg.read_write_pruning = false;
    cfg.recency_retention = 2;
    assert_index_sizes_agree(wide_tool_entry, &cfg, true);
    cfg.recency_retention = 1;
    assert_index_sizes_agree(empty_tool_names, &cfg, true);
    ctxc_history_clear(&hist);
    empty_tool_names();
    ctxc_density_counts_t c = optimize_in(&cfg, &work);
    assert_int_equal(c.recency_pruned, 3); /* e1, e2 and x1 */
    assert_non_null(strstr(after.buf, BODY " e3"));
    assert_non_null(strstr(after.buf, BODY " x2"));
}

/* Recency in an entry with more results than an entry's marks have bits
 * for: the blocks past them are decided like the first ones. */
static void test_recency_in_a_wide_tool_entry(void **state) {
    (void)state;
    t_set(&set, "compression.density.recencyPruning", "true");
    t_set(&set, "compression.density.recencyRetention", "1");
    wide_tool_entry();
    ctxc_density_counts_t c = optimize();
    /* r2, r6 go with their reads; read_file keeps r7, glob keeps g7 */
    assert_int_equal(c.read_write_pruned, 2);
    assert_int_equal(c.recency_pruned, 10);
    for (size_t k = 0; k < 10; k++) {
        assert_string_equal(t_block_text(&hist, 1, k),
                            "\"[Result pruned \xe2\x80\x94 re-run tool to retrieve]\"");
    }
    assert_non_null(strstr(after.buf, BODY " 7"));
    assert_non_null(strstr(after.buf, BODY " g7"));
}

/* ---- compress ------------------------------------------------------------ */

static ctxc_session_t compress(uint64_t limit, uint32_t threshold) {
    ctxc_session_t s;
    ctxc_error_t err;
    t_set_uint(&set, "context-limit", limit);
    t_set_ratio(&set, "compression-threshold", threshold);
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, workspace);
    t_dump(&hist, &before);
    uint64_t tokens = ctxc_history_tokens(&hist);
    if (ctxc_session_compress(&s, &err) != CTXC_OK) {
        fail_msg("compress failed: %s", err.message);
    }
    t_dump(&hist, &after);
    assert_true(ctxc_history_tokens(&hist) <= tokens);
    return s;
}

/* compress at the lowest context limit whose target the one-line
 * summaries meet without dropping an entry (t_compress_no_drop): every
 * result that has to be summarised is, and nothing is dropped. */
static ctxc_session_t compress_all(void) {
    static t_dump_t orig;
    ctxc_session_t s;
    t_dump(&hist, &orig);
    (void)t_compress_no_drop(&hist, &work, &set, workspace, orig.buf, &s);
    memcpy(&before, &orig, sizeof before);
    t_dump(&hist, &after);
    return s;
}

#define LONG_OUT                                                               \
    "cc -c sensor.c\\ncc -c control.c\\ncc -c main.c\\nld -o thermo sensor.o "  \
    "control.o main.o\\nrunning 14 tests... all passed in 0.02 seconds\\n"

static void ten_turns(void) {
    t_import(&hist, HUMAN("please build and test")
                    READ("r1", "{\"file_path\":\"src/sensor.c\"}")
                    RESP("r1", "read_file", LONG_OUT LONG_OUT)
                    CALL("s1", "run_shell_command", "{\"command\":\"make test\"}")
                    "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
                    "\"callId\":\"s1\",\"toolName\":\"run_shell_command\",\"result\":\"\","
                    "\"error\":\"" LONG_OUT "\"}]}\n"
                    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":\"the build "
                    "failed, fixing\"}]}\n"
                    CALL("s2", "run_shell_command", "{\"command\":\"make\"}")
                    RESP("s2", "run_shell_command", LONG_OUT LONG_OUT)
                    CALL("s3", "run_shell_command", "{\"command\":\"make check\"}")
                    RESP("s3", "run_shell_command", LONG_OUT LONG_OUT)
                    HUMAN("thanks"));
}

static void test_compress_summarises_older_results_and_keeps_the_tail(void **state) {
    (void)state;
    ten_turns();
    /* 11 entries; preserve 0.2 keeps floor(11 x 0.8) = 8.. as the tail */
    ctxc_session_t s = compress_all(); /* aim as low as the summaries go */
    assert_int_equal(ctxc_history_count(&hist), 11);
    assert_string_equal(t_block_text(&hist, 2, 0),
                        "\"[summarized] read_file src/sensor.c: ok\"");
    assert_string_equal(t_block_text(&hist, 4, 0),
                        "\"[summarized] run_shell_command make test: error\"");
    assert_string_equal(t_block_text(&hist, 7, 0),
                        "\"[summarized] run_shell_command make: ok\"");
    /* the tail (entries 8..10) is verbatim; calls and texts are kept */
    assert_non_null(strstr(after.buf, "\"make check\""));
    assert_non_null(strstr(t_block_text(&hist, 9, 0), "running 14 tests"));
    assert_null(strstr(t_block_text(&hist, 9, 0), "[summarized]"));
    assert_non_null(strstr(after.buf, "the build failed, fixing"));
    assert_non_null(strstr(after.buf, "\"name\":\"read_file\""));
    assert_int_equal(s.last_compress.middle_compressed, 3);
    assert_int_equal(s.last_compress.bottom_preserved, 3);
    assert_false(s.last_compress.llm_call_made);
    /* the summarised error keeps its meaning without the error text */
    ctxc_entry_t e;
    ctxc_block_t b;
    ctxc_history_get(&hist, 4, &e);
    ctxc_entry_block(&e, 0, &b);
    assert_null(b.u.tool_response.error.ptr);
    assert_string_equal(b.u.tool_response.call_id.ptr, "s1");
}

/* The entries compress rewrites carry the estimate a recount gives: in a
 * wide tool entry, a large result summarised, a short one kept (its summary
 * is not smaller), a medium one summarised, and a text after them. */
#define WIDE_CALL(id)                                                          \
    "{\"type\":\"tool_call\",\"id\":\"" id                                  \
    "\",\"name\":\"run_shell_command\",\"parameters\":{\"command\":\"make\"}}"
#define WIDE_RESP(id, result)                                                  \
    "{\"type\":\"tool_response\",\"callId\":\"" id                          \
    "\",\"toolName\":\"run_shell_command\",\"result\":\"" result "\"}"
static void test_compress_counts_rewritten_entries_as_a_recount(void **state) {
    (void)state;
    t_import(&hist, HUMAN("build it")
                    "{\"speaker\":\"ai\",\"blocks\":["
                    WIDE_CALL("w1") "," WIDE_CALL("w2") "," WIDE_CALL("w3") "]}\n"
                    "{\"speaker\":\"tool\",\"blocks\":["
                    WIDE_RESP("w1", LONG_OUT LONG_OUT LONG_OUT LONG_OUT LONG_OUT LONG_OUT
                                    LONG_OUT LONG_OUT) ","
                    WIDE_RESP("w2", "ok") "," WIDE_RESP("w3", LONG_OUT) "]}\n"
                    CALL("s2", "run_shell_command", "{\"command\":\"make\"}")
                    RESP("s2", "run_shell_command", LONG_OUT LONG_OUT)
                    CALL("s3", "run_shell_command", "{\"command\":\"make check\"}")
                    RESP("s3", "run_shell_command", LONG_OUT LONG_OUT)
                    HUMAN("thanks") HUMAN("more") HUMAN("done"));
    compress_all();
    ctxc_entry_t e;
    ctxc_block_t b;
    ctxc_history_get(&hist, 2, &e);
    ctxc_entry_block(&e, 0, &b);
    assert_non_null(strstr(b.u.tool_response.result.ptr, "[summarized]"));
    ctxc_entry_block(&e, 1, &b);
    assert_string_equal(b.u.tool_response.result.ptr, "\"ok\"");
    ctxc_entry_block(&e, 2, &b);
    assert_non_null(strstr(b.u.tool_response.result.ptr, "[summarized]"));
    static uint32_t tokens[64];
    size_t n = ctxc_history_count(&hist);
    for (size_t i = 0; i < n; i++) {
        ctxc_history_get(&hist, i, &e);
        tokens[i] = e.tokens;
    }
    uint64_t total = ctxc_history_tokens_estimated(&hist);
    ctxc_history_set_estimator(&hist, NULL, NULL); /* counts every entry */
    for (size_t i = 0; i < n; i++) {
        ctxc_history_get(&hist, i, &e);
        assert_int_equal(e.tokens, tokens[i]);
    }
    assert_int_equal(ctxc_history_tokens_estimated(&hist), total);
}

/* The summary names the first of file_path, absolute_path, path, command,
 * pattern, dir_path whose value is a string (others are passed over),
 * escapes what JSON needs escaped and clips long text with an ellipsis. */
#define X16 "xxxxxxxxxxxxxxxx"
#define X96 X16 X16 X16 X16 X16 X16
#define X100 X96 "xxxx"
static void test_compress_summary_argument(void **state) {
    (void)state;
    t_import(&hist, HUMAN("go")
                    CALL("c1", "grep", "{\"command\":42,\"dir_path\":\"d\",\"pattern\":\"\\\"x\\\"\\\\t\"}")
                    RESP("c1", "grep", LONG_OUT LONG_OUT)
                    CALL("c2", "edit", "{\"command\":\"make\",\"path\":\"\\u00e9t\\u00e9.c\",\"file_path\":[1]}")
                    RESP("c2", "edit", LONG_OUT LONG_OUT)
                    CALL("c3", "run_shell_command", "{\"command\":\"" LONG_OUT "\"}")
                    RESP("c3", "run_shell_command", LONG_OUT LONG_OUT)
                    CALL("c4", "glob", "{\"dir_path\":\"a\\tb\"}")
                    RESP("c4", "glob", LONG_OUT LONG_OUT)
                    CALL("c5", "sh", "{\"command\":\"make\\r\\nall\"}")
                    RESP("c5", "sh", LONG_OUT LONG_OUT)
                    CALL("c6", "sh", "{\"command\":\"" X100 "\\nmore\"}")
                    RESP("c6", "sh", LONG_OUT LONG_OUT)
                    HUMAN("a") HUMAN("b") HUMAN("c") HUMAN("d") HUMAN("e") HUMAN("f")
                    HUMAN("g") HUMAN("h") HUMAN("i") HUMAN("j") HUMAN("k") HUMAN("l"));
    compress_all();
    assert_string_equal(t_block_text(&hist, 2, 0),
                        "\"[summarized] grep \\\"x\\\"\\\\t: ok\"");
    assert_string_equal(t_block_text(&hist, 4, 0),
                        "\"[summarized] edit \xc3\xa9t\xc3\xa9.c: ok\"");
    assert_string_equal(t_block_text(&hist, 6, 0),
                        "\"[summarized] run_shell_command cc -c sensor.c\xe2\x80\xa6: ok\"");
    assert_string_equal(t_block_text(&hist, 8, 0),
                        "\"[summarized] glob a\\tb: ok\"");
    assert_string_equal(t_block_text(&hist, 10, 0),
                        "\"[summarized] sh make\xe2\x80\xa6: ok\"");
    assert_string_equal(t_block_text(&hist, 12, 0),
                        "\"[summarized] sh " X96 "\xe2\x80\xa6: ok\"");
}
#undef X16
#undef X96
#undef X100

static void test_compress_stops_once_below_the_target(void **state) {
    (void)state;
    ten_turns();
    uint64_t total = ctxc_history_tokens(&hist);
    /* a target just below the total: summarising the first result is enough */
    uint64_t limit = (total - 1) * 10000 / 6000;
    ctxc_session_t s = compress(limit, 1000);
    assert_int_equal(s.last_compress.middle_compressed, 1);
    assert_non_null(strstr(t_block_text(&hist, 2, 0), "[summarized]"));
    assert_null(strstr(t_block_text(&hist, 4, 0), "[summarized]"));
    /* already below: nothing changes */
    setup(NULL);
    ten_turns();
    s = compress(total * 10, 1000);
    assert_true(s.last_compress.unchanged);
    assert_string_equal(after.buf, before.buf);
}

/* Results far from their calls (found through the call id index). */
static void far_history(void) {
    t_import(&hist, HUMAN("go") READ("r1", "{\"file_path\":\"src/far.c\"}")
                    CALL("s1", "run_shell_command", "{\"command\":\"make all\"}")
                    HUMAN("1") HUMAN("2") HUMAN("3") HUMAN("4") HUMAN("5") HUMAN("6")
                    HUMAN("7") HUMAN("8") HUMAN("9") HUMAN("10")
                    RESP("s1", "run_shell_command", LONG_OUT LONG_OUT)
                    RESP("r1", "read_file", LONG_OUT LONG_OUT)
                    HUMAN("11") HUMAN("12") HUMAN("13") HUMAN("14"));
}

/* compress with the call id index and without it (the scans): the same
 * plan, for the summaries and the tool-call boundary of the tail. */
static void test_compress_without_room_for_the_index_gives_the_same_result(void **state) {
    (void)state;
    static t_dump_t indexed;
    void (*makers[])(void) = {ten_turns, rich_history, far_history};
    for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
        setup(NULL);
        makers[m]();
        (void)compress_all();
        uint64_t limit = ctxc_settings_context_limit(&set);
        for (int tiny = 0; tiny < 2; tiny++) {
            ctxc_work_t small = work;
            small.index_slots = tiny ? 2 : work.index_slots;
            setup(NULL);
            makers[m]();
            ctxc_session_t s;
            ctxc_error_t err;
            t_set_uint(&set, "context-limit", limit);
            t_set_ratio(&set, "compression-threshold", 1000);
            assert_int_equal(ctxc_session_init(&s, &hist, &small, &set, NULL), CTXC_OK);
            ctxc_session_set_workspace(&s, workspace);
            t_dump(&hist, &before);
            if (ctxc_session_compress(&s, &err) != CTXC_OK) {
                fail_msg("compress failed: %s", err.message);
            }
            t_dump(&hist, &after);
            assert_string_not_equal(after.buf, before.buf);
            if (makers[m] == far_history) { /* the calls were found */
                assert_non_null(strstr(after.buf, "[summarized] read_file src/far.c: ok"));
                assert_non_null(strstr(after.buf, "[summarized] run_shell_command make all: ok"));
            }
            if (!tiny) {
                memcpy(&indexed, &after, sizeof indexed);
            } else {
                assert_string_equal(after.buf, indexed.buf);
            }
        }
    }
}

/* Work areas too small for high-density's state in the work area (issue
 * 13: compress keeps its buffers in `replacements`, the density step its
 * state in `ops`; on a 64-bit host they need 51 and 31 entries) keep that
 * state on the stack: the same history as with a large work area. */
CTXC_HISTORY_DEFINE(hist_small, 24, 65536);
CTXC_WORK_DEFINE(work_small, 24, 32768);

static void test_density_step_in_a_small_work_area_gives_the_same_result(void **state) {
    (void)state;
    static t_dump_t large;
    ctxc_density_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.read_write_pruning = true;
    cfg.file_dedupe = true;
    cfg.recency_pruning = true;
    cfg.recency_retention = 1;
    cfg.workspace_root = "/w";
    void (*makers[])(void) = {rich_history, ten_turns, far_history};
    for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
        ctxc_history_clear(&hist);
        makers[m]();
        assert_true(ctxc_history_count(&hist) <= work_small.cap);
        t_dump(&hist, &before);
        ctxc_density_counts_t a = optimize_in(&cfg, &work);
        memcpy(&large, &after, sizeof large);
        t_import(&hist, before.buf);
        ctxc_density_counts_t b = optimize_in(&cfg, &work_small);
        assert_string_equal(after.buf, large.buf);
        assert_memory_equal(&a, &b, sizeof a);
        if (makers[m] == rich_history) {
            assert_string_not_equal(after.buf, before.buf);
            assert_true(a.read_write_pruned > 0 && a.file_dedupe_replaced > 0);
        }
    }
}

static void test_compress_in_a_small_work_area_gives_the_same_result(void **state) {
    (void)state;
    static t_dump_t large;
    void (*makers[])(void) = {ten_turns, rich_history, far_history};
    for (size_t m = 0; m < sizeof makers / sizeof makers[0]; m++) {
        setup(NULL);
        /* the small history's 24 slots stay under their threshold */
        t_set(&set, "compression.entries-threshold", "1");
        t_set(&set, "compression.reserve-entries", "0");
        makers[m]();
        ctxc_session_t s = compress_all();
        assert_string_not_equal(after.buf, before.buf);
        memcpy(&large, &after, sizeof large);
        t_import(&hist_small, before.buf);
        ctxc_error_t err;
        assert_int_equal(ctxc_session_init(&s, &hist_small, &work_small, &set, NULL),
                         CTXC_OK);
        ctxc_session_set_workspace(&s, workspace);
        if (ctxc_session_compress(&s, &err) != CTXC_OK) {
            fail_msg("compress failed: %s", err.message);
        }
        t_dump(&hist_small, &after);
        assert_string_equal(after.buf, large.buf);
        if (makers[m] == far_history) { /* the calls were found */
            assert_non_null(strstr(after.buf, "[summarized] read_file src/far.c: ok"));
        }
    }
}

static void test_compress_with_a_larger_preserved_tail(void **state) {
    (void)state;
    ten_turns();
    t_set(&set, "compression-preserve-threshold", "1"); /* all verbatim */
    uint64_t total = ctxc_history_tokens(&hist);
    /* a target the history meets: nothing to summarise, nothing changes */
    ctxc_session_t s = compress(total * 10000 / 6000 + 10, 1000);
    assert_true(s.last_compress.unchanged);
    assert_string_equal(after.buf, before.buf);
    /* a target it does not meet: no summary either (the whole history is
     * the preserved tail), the oldest entries go, the rest stays verbatim */
    setup(NULL);
    ten_turns();
    t_set(&set, "compression-preserve-threshold", "1");
    s = compress(10, 1000);
    assert_null(strstr(after.buf, "[summarized]"));
    /* 11 entries; at least 2 stay, and the call of s3 with its result */
    assert_int_equal(s.last_compress.entries_dropped, 8);
    assert_int_equal(ctxc_history_count(&hist), 3);
    assert_string_equal(before.buf + strlen(before.buf) - strlen(after.buf),
                        after.buf);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_read_of_a_file_written_later_is_pruned_with_its_response, setup),
        cmocka_unit_test_setup(test_pruning_is_block_level, setup),
        cmocka_unit_test_setup(test_every_write_tool_counts, setup),
        cmocka_unit_test_setup(test_path_keys_are_taken_in_order, setup),
        cmocka_unit_test_setup(test_no_case_folding_and_write_before_read, setup),
        cmocka_unit_test_setup(test_relative_paths_resolve_against_the_workspace, setup),
        cmocka_unit_test_setup(test_relative_paths_without_a_workspace_root, setup),
        cmocka_unit_test_setup(test_read_many_files_rule, setup),
        cmocka_unit_test_setup(test_malformed_parameters_are_skipped, setup),
        cmocka_unit_test_setup(test_read_write_pruning_can_be_switched_off, setup),
        cmocka_unit_test_setup(test_three_inclusions_keep_only_the_latest, setup),
        cmocka_unit_test_setup(test_dedupe_leaves_unpaired_markers_and_other_files, setup),
        cmocka_unit_test_setup(test_dedupe_never_grows_a_short_inclusion, setup),
        cmocka_unit_test_setup(test_dedupe_never_grows_tokens_of_dense_content, setup),
        cmocka_unit_test_setup(test_dedupe_within_one_message_and_paths_resolved, setup),
        cmocka_unit_test_setup(test_recency_is_off_by_default, setup),
        cmocka_unit_test_setup(test_recency_keeps_the_newest_per_tool, setup),
        cmocka_unit_test_setup(test_recency_retention_below_one_counts_as_one, setup),
        cmocka_unit_test_setup(test_recency_never_grows_a_small_result, setup),
        cmocka_unit_test_setup(test_recency_in_a_wide_tool_entry, setup),
        cmocka_unit_test_setup(
            test_compress_counts_rewritten_entries_as_a_recount, setup),
        cmocka_unit_test_setup(test_density_step_without_room_for_the_index_gives_the_same_result, setup),
        cmocka_unit_test_setup(test_compress_summarises_older_results_and_keeps_the_tail, setup),
        cmocka_unit_test_setup(test_compress_summary_argument, setup),
        cmocka_unit_test_setup(test_compress_stops_once_below_the_target, setup),
        cmocka_unit_test_setup(test_compress_with_a_larger_preserved_tail, setup),
        cmocka_unit_test_setup(test_compress_without_room_for_the_index_gives_the_same_result, setup),
        cmocka_unit_test_setup(test_density_step_in_a_small_work_area_gives_the_same_result, setup),
        cmocka_unit_test_setup(test_compress_in_a_small_work_area_gives_the_same_result, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else /* high-density left out of this build */

static void test_left_out(void **state) {
    (void)state;
    const ctxc_strategy_t *s;
    assert_int_equal(ctxc_strategy_find("high-density", &s, NULL),
                     CTXC_E_UNKNOWN_STRATEGY);
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_left_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
