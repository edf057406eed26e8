/*
 * high-density's tool-role table (issue 15): the density step and the
 * one-line summaries of compress understand the tools of each built-in
 * vocabulary (Claude Code, OpenHands, SWE-agent, Codex CLI, pi, Cline, the
 * spec's names), vocabularies mixed in one history, vocabularies switched
 * off by the setting, user tools (also from a profile), malformed
 * parameters skipped (REQ-HD-013.5), the settings' checks, and the scans
 * agreeing with the indexed path.
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

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

CTXC_HISTORY_DEFINE(hist, 128, 65536);
CTXC_WORK_DEFINE(work, 128, 32768);
static t_dump_t before, after;
static ctxc_settings_store_t set;
static mem_fs_t mfs;
static ctxc_fs_t fs;

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    memset(&mfs, 0, sizeof mfs);
    fs = mem_fs(&mfs);
    ctxc_settings_init(&set, &fs);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "100000");
    return 0;
}

/* The density step through a session (workspace /w): tokens never grow,
 * every call stays paired. */
static ctxc_density_counts_t optimize(void) {
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, "/w");
    t_dump(&hist, &before);
    uint64_t tokens = ctxc_history_tokens(&hist);
    if (ctxc_session_optimize(&s, &err) != CTXC_OK) {
        fail_msg("optimize failed: %s", err.message);
    }
    t_dump(&hist, &after);
    assert_true(ctxc_history_tokens(&hist) <= tokens);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
    return s.last_density;
}

/* Each id of the space-separated list is gone from the history (call and
 * response) / still in it. */
static void assert_ids(const char *list, bool kept) {
    const char *p = list;
    while (*p != '\0') {
        const char *e = strchr(p, ' ');
        size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
        char q[40];
        assert_true(n + 3 <= sizeof q);
        q[0] = '"';
        memcpy(q + 1, p, n);
        q[n + 1] = '"';
        q[n + 2] = '\0';
        if (kept && strstr(after.buf, q) == NULL) {
            fail_msg("%s was pruned", q);
        }
        if (!kept && strstr(after.buf, q) != NULL) {
            fail_msg("%s was kept", q);
        }
        p += n + (e != NULL ? 1u : 0u);
    }
}
#define PRUNED(list) assert_ids(list, false)
#define KEPT(list) assert_ids(list, true)

/* clang-format off */
#define CB(id, name, params)                                                   \
    "{\"type\":\"tool_call\",\"id\":\"" id "\",\"name\":\"" name               \
    "\",\"parameters\":" params "}"
#define RB(id, name, result)                                                   \
    "{\"type\":\"tool_response\",\"callId\":\"" id "\",\"toolName\":\"" name   \
    "\",\"result\":\"" result "\"}"
#define AI(blocks) "{\"speaker\":\"ai\",\"blocks\":[" blocks "]}\n"
#define TOOL(blocks) "{\"speaker\":\"tool\",\"blocks\":[" blocks "]}\n"
#define CALL(id, name, params) AI(CB(id, name, params))
#define RESP(id, name, result) TOOL(RB(id, name, result))
#define ERR(id, name, error)                                                   \
    TOOL("{\"type\":\"tool_response\",\"callId\":\"" id "\",\"toolName\":\""  \
         name "\",\"result\":\"\",\"error\":\"" error "\"}")
#define HUMAN(text)                                                            \
    "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"" text  \
    "\"}]}\n"
#define BODY "int main(void) { return 0; } /* a file body long enough */"
#define SRE "str_replace_editor"

/* ---- one vocabulary per history ------------------------------------------ */

/* Claude Code: Read {file_path, offset, limit}, Edit, MultiEdit, Write,
 * NotebookEdit {notebook_path}, Bash, Grep. Parallel reads, a ranged read,
 * a failing edit (a write call all the same, as for the spec's names), a
 * read never written, a read after the last write. */
#define CLAUDE_CODE_JSONL                                                      \
    HUMAN("fix the parser")                                                    \
    AI(CB("r1", "Read", "{\"file_path\":\"/w/src/a.c\"}") ","                  \
       CB("r2", "Read", "{\"file_path\":\"/w/src/b.c\",\"offset\":10,\"limit\":20}")) \
    TOOL(RB("r1", "Read", BODY " a") "," RB("r2", "Read", BODY " b"))          \
    CALL("e1", "Edit", "{\"file_path\":\"/w/src/a.c\",\"old_string\":\"0\",\"new_string\":\"1\"}") \
    RESP("e1", "Edit", "ok")                                                   \
    CALL("r3", "Read", "{\"file_path\":\"/w/src/c.c\",\"offset\":1,\"limit\":5}") \
    RESP("r3", "Read", BODY " c")                                              \
    CALL("e2", "Edit", "{\"file_path\":\"/w/src/c.c\",\"old_string\":\"zz\",\"new_string\":\"y\"}") \
    ERR("e2", "Edit", "String to replace not found in file.")                  \
    CALL("r4", "Read", "{\"file_path\":\"/w/src/d.c\"}") RESP("r4", "Read", BODY " d") \
    CALL("b1", "Bash", "{\"command\":\"make\",\"description\":\"build\"}")     \
    RESP("b1", "Bash", "ok")                                                   \
    CALL("r5", "Read", "{\"file_path\":\"/w/nb.ipynb\"}") RESP("r5", "Read", BODY " nb") \
    CALL("n1", "NotebookEdit", "{\"notebook_path\":\"/w/nb.ipynb\",\"new_source\":\"x\"}") \
    RESP("n1", "NotebookEdit", "ok")                                           \
    CALL("m1", "MultiEdit", "{\"file_path\":\"/w/src/b.c\",\"edits\":[{\"old_string\":\"a\",\"new_string\":\"b\"}]}") \
    RESP("m1", "MultiEdit", "ok")                                              \
    CALL("g1", "Grep", "{\"pattern\":\"main\",\"path\":\"/w/src/d.c\"}")       \
    RESP("g1", "Grep", BODY " grep")                                           \
    CALL("w1", "Write", "{\"file_path\":\"/w/src/e.c\",\"content\":\"x\"}")    \
    RESP("w1", "Write", "ok")                                                  \
    CALL("r6", "Read", "{\"file_path\":\"/w/src/a.c\"}") RESP("r6", "Read", BODY " a2")

/* OpenHands: str_replace_editor view (read; also ranged, also of a
 * directory), str_replace (a failed one is not flagged by the source),
 * create, insert, undo_edit (writes); the shell tool SHELL. */
#define OPENHANDS_JSONL(SHELL)                                                 \
    HUMAN("fix match.c")                                                       \
    CALL("v1", SRE, "{\"command\":\"view\",\"path\":\"/w/src/match.c\"}")      \
    RESP("v1", SRE, BODY " m1")                                                \
    AI(CB("v2", SRE, "{\"command\":\"view\",\"path\":\"/w/src/match.c\",\"view_range\":[10,40]}") "," \
       CB("v3", SRE, "{\"command\":\"view\",\"path\":\"/w/src\"}"))            \
    TOOL(RB("v2", SRE, BODY " m2") "," RB("v3", SRE, BODY " dir"))             \
    CALL("s1", SRE, "{\"command\":\"str_replace\",\"path\":\"/w/src/match.c\",\"old_str\":\"a\",\"new_str\":\"b\"}") \
    RESP("s1", SRE, "ERROR: No replacement was performed")                     \
    CALL("v4", SRE, "{\"command\":\"view\",\"path\":\"/w/src/util.c\"}")       \
    RESP("v4", SRE, BODY " u")                                                 \
    CALL("c1", SRE, "{\"command\":\"create\",\"path\":\"/w/src/util.c\",\"file_text\":\"x\"}") \
    RESP("c1", SRE, "File created")                                            \
    CALL("v5", SRE, "{\"command\":\"view\",\"path\":\"/w/src/other.c\"}")      \
    RESP("v5", SRE, BODY " o")                                                 \
    CALL("i1", SRE, "{\"command\":\"insert\",\"path\":\"/w/src/x.c\",\"insert_line\":3,\"new_str\":\"x\"}") \
    RESP("i1", SRE, "ok")                                                      \
    CALL("x1", SHELL, "{\"command\":\"make test\"}")                           \
    RESP("x1", SHELL, "ok")                                                    \
    CALL("v6", SRE, "{\"command\":\"view\",\"path\":\"/w/src/t.c\"}")          \
    RESP("v6", SRE, BODY " t")                                                 \
    CALL("u1", SRE, "{\"command\":\"undo_edit\",\"path\":\"/w/src/t.c\"}")     \
    RESP("u1", SRE, "ok")

/* Codex CLI writes through apply_patch (a multi-file patch: update, add,
 * delete, move); its reads are shell commands, which never go. The reads
 * here are the spec's read_file / read_line_range (relative paths). */
#define PATCH                                                                  \
    "{\"input\":\"*** Begin Patch\\n*** Update File: src/a.rs\\n@@ fn main\\n" \
    "-    old();\\n+    new();\\n*** Add File: src/b.rs\\n+pub fn b() {}\\n"     \
    "*** Delete File: src/c.rs\\n*** Update File: src/d.rs\\n*** Move to: "    \
    "src/e.rs\\n@@\\n-x\\n+y\\n*** End Patch\"}"
#define CODEX_JSONL                                                            \
    HUMAN("refactor")                                                          \
    CALL("sh1", "shell", "{\"command\":[\"bash\",\"-lc\",\"cat src/a.rs\"],\"workdir\":\"/w\"}") \
    RESP("sh1", "shell", BODY " cat")                                          \
    AI(CB("r1", "read_file", "{\"file_path\":\"src/a.rs\"}") ","               \
       CB("r2", "read_line_range", "{\"file_path\":\"src/c.rs\",\"start\":1,\"end\":9}") "," \
       CB("r3", "read_file", "{\"file_path\":\"./src/d.rs\"}") ","             \
       CB("r4", "read_file", "{\"file_path\":\"src/e.rs\"}") ","               \
       CB("r5", "read_file", "{\"file_path\":\"src/f.rs\"}"))                  \
    TOOL(RB("r1", "read_file", BODY " a") "," RB("r2", "read_line_range", BODY " c") "," \
         RB("r3", "read_file", BODY " d") "," RB("r4", "read_file", BODY " e") "," \
         RB("r5", "read_file", BODY " f"))                                     \
    CALL("p0", "apply_patch", "{\"input\":42}")                                \
    ERR("p0", "apply_patch", "invalid patch")                                  \
    CALL("p1", "apply_patch", PATCH)                                           \
    RESP("p1", "apply_patch", "Success. Updated the following files")          \
    CALL("sh2", "shell", "{\"command\":[\"cargo\",\"test\"]}")                 \
    RESP("sh2", "shell", "ok")

/* pi: read {path, offset, limit}, write, edit {path, oldText, newText},
 * bash; paths relative, with ./ and .., absolute; a failing edit. */
#define PI_JSONL                                                               \
    HUMAN("port the TUI")                                                      \
    AI(CB("r1", "read", "{\"path\":\"src/a.ts\"}") ","                         \
       CB("r2", "read", "{\"path\":\"./src/b.ts\",\"offset\":5,\"limit\":10}")) \
    TOOL(RB("r1", "read", BODY " a") "," RB("r2", "read", BODY " b"))          \
    CALL("r3", "read", "{\"path\":\"/w/src/c.ts\"}") RESP("r3", "read", BODY " c") \
    CALL("r4", "read", "{\"path\":\"src/zz.ts\"}") RESP("r4", "read", BODY " z") \
    CALL("e1", "edit", "{\"path\":\"/w/src/a.ts\",\"oldText\":\"a\",\"newText\":\"b\"}") \
    RESP("e1", "edit", "ok")                                                   \
    CALL("w1", "write", "{\"path\":\"src/x/../b.ts\",\"content\":\"x\"}")      \
    RESP("w1", "write", "ok")                                                  \
    CALL("e2", "edit", "{\"path\":\"src/zz.ts\",\"oldText\":\"q\",\"newText\":\"r\"}") \
    ERR("e2", "edit", "Could not find the exact text")                         \
    CALL("b1", "bash", "{\"command\":\"npm test\"}") RESP("b1", "bash", "ok")

/* Cline: read_file {path} (the spec's name, Cline's `path` key),
 * write_to_file, replace_in_file {path, diff}, execute_command. */
#define CLINE_JSONL                                                            \
    HUMAN("add logging")                                                       \
    AI(CB("r1", "read_file", "{\"path\":\"src/log.js\"}") ","                  \
       CB("r2", "read_file", "{\"path\":\"src/app.js\"}"))                     \
    TOOL(RB("r1", "read_file", BODY " l") "," RB("r2", "read_file", BODY " a")) \
    CALL("x1", "execute_command", "{\"command\":\"npm test\",\"requires_approval\":false}") \
    RESP("x1", "execute_command", "ok")                                        \
    CALL("d1", "replace_in_file", "{\"path\":\"src/log.js\",\"diff\":\"<<<<<<< SEARCH\\na\\n=======\\nb\\n>>>>>>> REPLACE\"}") \
    RESP("d1", "replace_in_file", "ok")                                        \
    CALL("r3", "read_file", "{\"path\":\"src/new.js\"}") RESP("r3", "read_file", BODY " n") \
    CALL("w1", "write_to_file", "{\"path\":\"src/new.js\",\"content\":\"x\"}") \
    RESP("w1", "write_to_file", "ok")

/* A read of one vocabulary is stale after a write of any other. */
#define MIXED_JSONL                                                            \
    HUMAN("mixed")                                                             \
    AI(CB("xa", "read", "{\"path\":\"src/a.c\"}") ","                          \
       CB("xb", "read_file", "{\"path\":\"src/b.c\"}") ","                     \
       CB("xc", SRE, "{\"command\":\"view\",\"path\":\"/w/src/c.c\"}") ","     \
       CB("xd", "Read", "{\"file_path\":\"/w/src/d.c\"}") ","                  \
       CB("xe", "read_line_range", "{\"file_path\":\"src/e.c\",\"start\":1}")) \
    TOOL(RB("xa", "read", BODY " a") "," RB("xb", "read_file", BODY " b") ","  \
         RB("xc", SRE, BODY " c") "," RB("xd", "Read", BODY " d") ","          \
         RB("xe", "read_line_range", BODY " e"))                               \
    CALL("wa", "Edit", "{\"file_path\":\"/w/src/a.c\",\"old_string\":\"a\",\"new_string\":\"b\"}") \
    RESP("wa", "Edit", "ok")                                                   \
    CALL("wb", "apply_patch", "{\"input\":\"*** Begin Patch\\n*** Update File: src/b.c\\n@@\\n-a\\n+b\\n*** End Patch\"}") \
    RESP("wb", "apply_patch", "ok")                                            \
    CALL("wc", "replace", "{\"file_path\":\"src/c.c\",\"old_string\":\"a\",\"new_string\":\"b\"}") \
    RESP("wc", "replace", "ok")                                                \
    CALL("wd", "write_to_file", "{\"path\":\"src/d.c\",\"content\":\"x\"}")    \
    RESP("wd", "write_to_file", "ok")

/* An in-house agent's tools (user tools peek:target, cat_file, put:target)
 * and Claude's Write. */
#define INHOUSE_JSONL                                                          \
    HUMAN("in-house agent")                                                    \
    AI(CB("p1", "peek", "{\"target\":\"src/a.c\"}") ","                        \
       CB("p2", "cat_file", "{\"file_path\":\"src/b.c\"}") ","                 \
       CB("p3", "peek", "{\"target\":\"src/c.c\"}"))                           \
    TOOL(RB("p1", "peek", BODY " a") "," RB("p2", "cat_file", BODY " b") ","   \
         RB("p3", "peek", BODY " c"))                                          \
    CALL("u1", "put", "{\"target\":\"/w/src/a.c\",\"data\":\"x\"}")            \
    RESP("u1", "put", "ok")                                                    \
    CALL("u2", "Write", "{\"file_path\":\"src/b.c\",\"content\":\"x\"}")       \
    RESP("u2", "Write", "ok")

/* Parameters that do not hold a usable path. */
#define MALFORMED_JSONL                                                        \
    HUMAN("x")                                                                 \
    AI(CB("m1", "Read", "{\"file_path\":42}") ","                              \
       CB("m2", SRE, "{\"command\":\"view\"}") ","                             \
       CB("m3", SRE, "{\"command\":7,\"path\":\"/w/a.c\"}") ","                \
       CB("m4", "read", "{\"path\":[\"/w/a.c\"]}") ","                         \
       CB("m5", SRE, "{\"command\":\"list\",\"path\":\"/w/a.c\"}") ","         \
       CB("m6", "read", "{\"path\":\"\"}") ","                                 \
       CB("r0", "read", "{\"path\":\"/w/a.c\"}"))                              \
    TOOL(RB("m1", "Read", BODY) "," RB("m2", SRE, BODY) "," RB("m3", SRE, BODY) "," \
         RB("m4", "read", BODY) "," RB("m5", SRE, BODY) "," RB("m6", "read", BODY) "," \
         RB("r0", "read", BODY))                                               \
    CALL("w1", "Write", "{\"file_path\":{\"p\":\"/w/a.c\"}}") RESP("w1", "Write", "ok") \
    CALL("w2", "apply_patch", "{\"input\":\"*** Begin Patch\\n*** Update File: \\n*** End Patch\"}") \
    RESP("w2", "apply_patch", "ok")                                            \
    CALL("w3", "shell", "{\"command\":\"not an argv\"}") RESP("w3", "shell", "ok") \
    CALL("w4", "edit", "{\"path\":\"/w/a.c\"}") RESP("w4", "edit", "ok")

#define OUT                                                                    \
    "cc -c sensor.c\\ncc -c control.c\\ncc -c main.c\\nld -o thermo sensor.o " \
    "control.o main.o\\nrunning 14 tests... all passed in 0.02 seconds\\n"
#define SUMMARIES_JSONL                                                        \
    HUMAN("go")                                                                \
    CALL("c1", "shell", "{\"command\":[\"bash\",\"-lc\",\"make \\\"all\\\"\"]}") \
    RESP("c1", "shell", OUT OUT)                                               \
    CALL("c2", "apply_patch", "{\"input\":\"*** Begin Patch\\n*** Add File: src/n\\u00e9w.rs\\n+x\\n*** Update File: src/b.rs\\n*** End Patch\"}") \
    RESP("c2", "apply_patch", OUT OUT)                                         \
    CALL("c3", SRE, "{\"command\":\"view\",\"path\":\"/w/src/match.c\"}")      \
    RESP("c3", SRE, OUT OUT)                                                   \
    CALL("c4", "NotebookEdit", "{\"new_source\":\"x\",\"notebook_path\":\"/w/nb.ipynb\"}") \
    RESP("c4", "NotebookEdit", OUT OUT)                                        \
    CALL("c5", "Bash", "{\"description\":\"build\",\"command\":\"cargo build\"}") \
    RESP("c5", "Bash", OUT OUT)                                                \
    CALL("c6", "peek", "{\"command\":\"no\",\"target\":\"src/p.c\"}")          \
    RESP("c6", "peek", OUT OUT)                                                \
    CALL("c7", "execute_command", "{\"command\":\"npm test\"}")                \
    ERR("c7", "execute_command", OUT)                                          \
    HUMAN("a") HUMAN("b") HUMAN("c") HUMAN("d") HUMAN("e") HUMAN("f")          \
    HUMAN("g") HUMAN("h") HUMAN("i") HUMAN("j") HUMAN("k") HUMAN("l")          \
    HUMAN("m") HUMAN("n")
/* clang-format on */

static void test_claude_code(void **state) {
    (void)state;
    t_import(&hist, CLAUDE_CODE_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 4);
    assert_int_equal(c.read_write_entries_removed, 6);
    assert_int_equal(c.read_write_entries_replaced, 0);
    PRUNED("r1 r2 r3 r5");
    KEPT("r4 r6 e1 e2 b1 n1 m1 g1 w1");
}

static void test_openhands(void **state) {
    (void)state;
    t_import(&hist, OPENHANDS_JSONL("execute_bash"));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 4);
    PRUNED("v1 v2 v4 v6");
    KEPT("v3 v5 s1 c1 i1 x1 u1");
    /* v2 left its entries with v3: block-level */
    assert_int_equal(c.read_write_entries_replaced, 2);
    assert_int_equal(c.read_write_entries_removed, 6);
}

/* SWE-agent's function-calling editor is the same str_replace_editor (with
 * bash): its rows alone are enough. */
static void test_swe_agent_alone(void **state) {
    (void)state;
    t_set(&set, "compression.density.vocabularies", "swe-agent");
    t_import(&hist, OPENHANDS_JSONL("bash"));
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 4);
    PRUNED("v1 v2 v4 v6");
    KEPT("v3 v5 s1 c1 i1 x1 u1");
}

static void test_codex(void **state) {
    (void)state;
    t_import(&hist, CODEX_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 4);
    PRUNED("r1 r2 r3 r4");
    KEPT("r5 sh1 sh2 p0 p1");
    assert_int_equal(c.read_write_entries_replaced, 2);
    assert_int_equal(c.read_write_entries_removed, 0);
}

static void test_pi(void **state) {
    (void)state;
    t_import(&hist, PI_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 3);
    assert_int_equal(c.read_write_entries_removed, 4);
    PRUNED("r1 r2 r4");
    KEPT("r3 e1 w1 e2 b1");
}

static void test_cline(void **state) {
    (void)state;
    t_set(&set, "compression.density.vocabularies", "cline");
    t_import(&hist, CLINE_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 2);
    PRUNED("r1 r3");
    KEPT("r2 x1 d1 w1");
}

/* ---- vocabularies together and apart ------------------------------------- */

static void test_mixed_vocabularies(void **state) {
    (void)state;
    t_import(&hist, MIXED_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 4);
    PRUNED("xa xb xc xd");
    KEPT("xe wa wb wc wd");
}

/* The setting picks vocabularies: left out, their tools are other tools. */
static void test_vocabularies_setting(void **state) {
    (void)state;
    t_set(&set, "compression.density.vocabularies", "spec,pi");
    t_import(&hist, MIXED_JSONL);
    /* xa (pi's read) is stale only through Claude's Edit (off); xb is the
     * spec's read_file (path key), written by apply_patch (off); xc is an
     * OpenHands view (off); xd a Claude Read (off) */
    assert_int_equal(optimize().read_write_pruned, 0);
    assert_string_equal(after.buf, before.buf);

    t_set(&set, "compression.density.vocabularies", "none");
    t_import(&hist, CLAUDE_CODE_JSONL);
    assert_int_equal(optimize().read_write_pruned, 0);

    t_set(&set, "compression.density.vocabularies",
          "claude-code,codex,openhands,cline");
    t_import(&hist, MIXED_JSONL);
    /* xa: pi's read is off; xb: Cline's read_file; xc: written by the
     * spec's replace (off) */
    assert_int_equal(optimize().read_write_pruned, 2);
    PRUNED("xb xd");
    KEPT("xa xc xe");
}

static void test_vocabularies_setting_is_checked(void **state) {
    (void)state;
    ctxc_error_t err;
    assert_int_equal(ctxc_settings_set(&set, "compression.density.vocabularies",
                                       "pi,claude", &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "unknown vocabulary"));
    assert_non_null(strstr(err.message, "claude"));
    assert_non_null(strstr(err.message, "known: none, spec, claude-code, "
                                        "openhands, swe-agent, codex, pi, "
                                        "cline"));
    assert_int_equal(ctxc_settings_set(&set, "compression.density.vocabularies",
                                       "pi,,spec", &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_settings_set(&set, "compression.density.vocabularies",
                                       "none,pi", &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "none"));
    assert_int_equal(ctxc_settings_set(&set, "compression.density.vocabularies",
                                       "spec,pi,cline", &err),
                     CTXC_OK);
}

/* ---- user tools -----------------------------------------------------------
 */

static void test_user_tools_from_a_profile(void **state) {
    (void)state;
    ctxc_error_t err;
    /* without them: nothing is known to be read */
    t_import(&hist, INHOUSE_JSONL);
    assert_int_equal(optimize().read_write_pruned, 0);

    /* a profile written by another session */
    mem_put(&mfs, "profiles/inhouse.json",
            "{\"compression.strategy\": \"high-density\", "
            "\"compression.density.readTools\": \"peek:target,cat_file\", "
            "\"compression.density.writeTools\": \"put:target\"}");
    if (ctxc_settings_profile_load(&set, "inhouse", &err) != CTXC_OK) {
        fail_msg("%s", err.message);
    }
    t_import(&hist, INHOUSE_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 2);
    PRUNED("p1 p2");
    KEPT("p3 u1 u2");

    /* saved again: the same keys */
    size_t n = 0;
    assert_int_equal(ctxc_settings_profile_save(&set, "copy", &n, &err),
                     CTXC_OK);
    assert_non_null(
        strstr(mem_get(&mfs, "profiles/copy.json"),
               "\"compression.density.readTools\": \"peek:target,cat_file\""));
    assert_non_null(strstr(mem_get(&mfs, "profiles/copy.json"),
                           "\"compression.density.writeTools\": "
                           "\"put:target\""));
}

static void test_user_tools_are_checked(void **state) {
    (void)state;
    ctxc_error_t err;
    static const char *const bad[] = {
        "peek target",
        "peek:",
        ":target",
        "a,,b",
        "peek:a:b",
        "pe\"ek",
        "peek,",
        ",peek",
        "p\xc3\xa9",
        "a:0123456789012345678901234567890123456789012345678"
        "901234567890123"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        if (ctxc_settings_set(&set, "compression.density.readTools", bad[i],
                              &err) != CTXC_E_INVALID_ARG) {
            fail_msg("%s was taken", bad[i]);
        }
        assert_non_null(strstr(err.message, "compression.density.readTools"));
    }
    assert_int_equal(ctxc_settings_set(&set, "compression.density.writeTools",
                                       "a,b,c,d,e,f,g,h,i", &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "more than 8 tools"));
    assert_int_equal(ctxc_settings_set(&set, "compression.density.writeTools",
                                       "a,b,c,d,e,f,g,h:path_2", &err),
                     CTXC_OK);
}

/* ---- malformed parameters (REQ-HD-013.5) --------------------------------- */

static void test_malformed_parameters_are_skipped(void **state) {
    (void)state;
    t_import(&hist, MALFORMED_JSONL);
    ctxc_density_counts_t c = optimize();
    assert_int_equal(c.read_write_pruned, 1);
    PRUNED("r0");
    KEPT("m1 m2 m3 m4 m5 m6 w1 w2 w3 w4");
}

/* ---- the scans agree with the indexed path ------------------------------- */

static ctxc_density_counts_t optimize_in(const ctxc_density_config_t *cfg,
                                         ctxc_work_t *w) {
    ctxc_density_counts_t counts = t_density_step(&hist, cfg, w);
    t_dump(&hist, &after);
    return counts;
}

static void test_scans_agree_with_the_index(void **state) {
    (void)state;
    static t_dump_t indexed;
    static const size_t slots[] = {0, 2, 16, 32};
    ctxc_density_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.read_write_pruning = true;
    cfg.workspace_root = "/w";
    cfg.read_tools = "peek:target,cat_file";
    cfg.write_tools = "put:target";
    /* (the histories also write each other's paths) */
    t_import(&hist, CLAUDE_CODE_JSONL MIXED_JSONL INHOUSE_JSONL);
    ctxc_density_counts_t c = optimize_in(&cfg, &work);
    assert_true(c.read_write_pruned >= 4 + 4 + 2);
    memcpy(&indexed, &after, sizeof indexed);
    for (size_t i = 0; i < sizeof slots / sizeof slots[0]; i++) {
        ctxc_work_t small = work; /* the same memory, a smaller index */
        small.index_slots = slots[i];
        if (slots[i] == 0) {
            small.index = NULL;
        }
        t_import(&hist, CLAUDE_CODE_JSONL MIXED_JSONL INHOUSE_JSONL);
        ctxc_density_counts_t d = optimize_in(&cfg, &small);
        assert_string_equal(after.buf, indexed.buf);
        assert_memory_equal(&d, &c, sizeof c);
    }
}

/* ---- compress: summaries name the path or command ------------------------ */

static void test_summaries_through_the_table(void **state) {
    (void)state;
    t_set(&set, "compression.density.readTools", "peek:target");
    ctxc_session_t s;
    (void)t_compress_no_drop(&hist, &work, &set, "/w", SUMMARIES_JSONL, &s);
    assert_string_equal(t_block_text(&hist, 2, 0),
                        "\"[summarized] shell bash -lc make \\\"all\\\": ok\"");
    assert_string_equal(t_block_text(&hist, 4, 0),
                        "\"[summarized] apply_patch src/n\xc3\xa9w.rs: ok\"");
    assert_string_equal(t_block_text(&hist, 6, 0),
                        "\"[summarized] " SRE " /w/src/match.c: ok\"");
    assert_string_equal(t_block_text(&hist, 8, 0),
                        "\"[summarized] NotebookEdit /w/nb.ipynb: ok\"");
    assert_string_equal(t_block_text(&hist, 10, 0),
                        "\"[summarized] Bash cargo build: ok\"");
    /* the user tool's key, not the generic `command` */
    assert_string_equal(t_block_text(&hist, 12, 0),
                        "\"[summarized] peek src/p.c: ok\"");
    assert_string_equal(t_block_text(&hist, 14, 0),
                        "\"[summarized] execute_command npm test: error\"");
    /* the spec's vocabulary alone: the generic keys (`command` of peek) */
    t_set(&set, "compression.density.vocabularies", "spec");
    t_set(&set, "compression.density.readTools", "cat");
    (void)t_compress_no_drop(&hist, &work, &set, "/w", SUMMARIES_JSONL, &s);
    assert_string_equal(t_block_text(&hist, 2, 0),
                        "\"[summarized] shell: ok\"");
    assert_string_equal(t_block_text(&hist, 12, 0),
                        "\"[summarized] peek no: ok\"");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_claude_code, setup),
        cmocka_unit_test_setup(test_openhands, setup),
        cmocka_unit_test_setup(test_swe_agent_alone, setup),
        cmocka_unit_test_setup(test_codex, setup),
        cmocka_unit_test_setup(test_pi, setup),
        cmocka_unit_test_setup(test_cline, setup),
        cmocka_unit_test_setup(test_mixed_vocabularies, setup),
        cmocka_unit_test_setup(test_vocabularies_setting, setup),
        cmocka_unit_test_setup(test_vocabularies_setting_is_checked, setup),
        cmocka_unit_test_setup(test_user_tools_from_a_profile, setup),
        cmocka_unit_test_setup(test_user_tools_are_checked, setup),
        cmocka_unit_test_setup(test_malformed_parameters_are_skipped, setup),
        cmocka_unit_test_setup(test_scans_agree_with_the_index, setup),
        cmocka_unit_test_setup(test_summaries_through_the_table, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_left_out(void **state) {
    (void)state;
    skip();
}

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_left_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
