/*
 * The density step between calls (issue 37; docs/design.md, "The density
 * step between calls"): a session's step after appends reads only them
 * when none of them can change an earlier entry, and its result is the
 * result of a step over the whole history, byte for byte.
 *
 * The property: random histories (reads, writes, read_many_files, shells,
 * @file inclusions under several spellings of a few paths, results that
 * come a turn late or never), random edits between turns (pins, replaced
 * entries, settings, the workspace root), a step after every turn. After
 * each one, a copy of the history as it was before the step gets a step
 * from scratch (a new session); both must export the same bytes.
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

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

CTXC_HISTORY_DEFINE(hist, 640, 393216);
CTXC_HISTORY_DEFINE(ref, 640, 393216);
CTXC_WORK_DEFINE(work, 640, 65536);
CTXC_WORK_DEFINE(rwork, 640, 65536);
static ctxc_settings_store_t set;
static t_dump_t before, mine, theirs;
static const char *root;

static uint32_t rng;
static uint32_t rnd(uint32_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 17;
    rng ^= rng << 5;
    return rng % n;
}

/* A few files under several spellings (relative, absolute, with "./" and
 * ".."), so that equal paths are not always equal strings. */
static const char *path(void) {
    static const char *const p[] = {"a.c",      "/w/a.c",   "./a.c",
                                    "b.c",      "src/../b.c", "/w/b.c",
                                    "c.h",      "/w/c.h",   "d.md",
                                    "/other/e", "f.txt",    "/w/f.txt"};
    return p[rnd(sizeof p / sizeof p[0])];
}

static const char FILLER[] =
    "line one of some content that is long enough to be worth pruning\\n"
    "line two of some content that is long enough to be worth pruning\\n";

static char ids[64][16]; /* calls whose result comes some turns late */
static char names[64][24];
static unsigned due[64]; /* turns to wait */
static size_t late;
static unsigned next_id;

static void add(ctxc_session_t *s, ctxc_speaker_t sp, const ctxc_block_t *b,
                size_t n) {
    ctxc_entry_in_t in = {sp, b, n, CTXC_STR_ABSENT};
    ctxc_error_t err;
    if (ctxc_session_add(s, &in, &err) != CTXC_OK) {
        fail_msg("add failed: %s", err.message);
    }
}

static void add_result(ctxc_session_t *s, const char *id, const char *name) {
    char result[300];
    snprintf(result, sizeof result, "\"%s %s\"", name, FILLER);
    ctxc_block_t b = t_resp(id, name, result, NULL);
    add(s, CTXC_SPEAKER_TOOL, &b, 1);
}

/* The late results that are due, in the order of their calls. */
static void late_results(ctxc_session_t *s) {
    size_t kept = 0;
    for (size_t i = 0; i < late; i++) {
        if (due[i] == 0 || rnd(2) == 0) {
            add_result(s, ids[i], names[i]);
            continue;
        }
        due[i]--;
        memmove(ids[kept], ids[i], sizeof ids[i]);
        memmove(names[kept], names[i], sizeof names[i]);
        due[kept++] = due[i];
    }
    late = kept;
}

/* One turn: a human text (sometimes with an inclusion), an ai entry with a
 * text or one or two tool calls, their results now, one to three turns
 * later (before or after the next turn's calls) or never. */
static void turn(ctxc_session_t *s) {
    char text[600], params[2][200], id[2][16];
    const char *name[2];
    bool results_first = rnd(2) == 0;
    if (results_first) {
        late_results(s);
    }
    if (rnd(3) == 0) {
        snprintf(text, sizeof text,
                 "look at this\n--- %s ---\n%s %u\n--- End of content ---\n"
                 "and tell me",
                 path(), "included content that is long enough to dedupe, "
                 "long enough to dedupe, long enough to dedupe",
                 rnd(3));
    } else {
        snprintf(text, sizeof text, "what is next, step %u?", next_id);
    }
    ctxc_block_t h = t_text(text);
    add(s, CTXC_SPEAKER_HUMAN, &h, 1);
    size_t calls = rnd(4) == 0 ? 0 : 1 + rnd(2);
    ctxc_block_t b[2];
    for (size_t c = 0; c < calls; c++) {
        snprintf(id[c], sizeof id[c], "c%u", next_id++);
        switch (rnd(6)) {
        case 0:
        case 1:
            name[c] = "read_file";
            snprintf(params[c], sizeof params[c], "{\"file_path\":\"%s\"}",
                     path());
            break;
        case 2:
            name[c] = "write_file";
            snprintf(params[c], sizeof params[c],
                     "{\"file_path\":\"%s\",\"content\":\"x\"}", path());
            break;
        case 3:
            name[c] = "read_many_files";
            snprintf(params[c], sizeof params[c], "{\"paths\":[\"%s\",\"%s\"]}",
                     path(), path());
            break;
        case 4:
            name[c] = "run_shell_command";
            snprintf(params[c], sizeof params[c], "{\"command\":\"ls\"}");
            break;
        default:
            name[c] = "get_weather";
            snprintf(params[c], sizeof params[c], "{\"city\":\"Oslo\"}");
            break;
        }
        b[c] = t_call(id[c], name[c], params[c]);
    }
    if (calls == 0) {
        ctxc_block_t t = t_text("an answer without tools");
        add(s, CTXC_SPEAKER_AI, &t, 1);
    } else {
        add(s, CTXC_SPEAKER_AI, b, calls);
    }
    if (!results_first) {
        late_results(s);
    }
    for (size_t c = 0; c < calls; c++) {
        uint32_t when = rnd(6);
        if (when <= 1 && late < 64) { /* later */
            snprintf(ids[late], sizeof ids[late], "%s", id[c]);
            snprintf(names[late], sizeof names[late], "%s", name[c]);
            due[late++] = rnd(3);
        } else if (when != 2) { /* 2: never */
            add_result(s, id[c], name[c]);
        }
    }
}

/* A compression that drops the oldest entries (top-down-truncation to 3/4
 * of the history's tokens; high-density in a build without it, which drops
 * the oldest turns of a conversation without tool output), as before_send
 * makes between turns. */
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
#define TRUNCATING "top-down-truncation"
#else
#define TRUNCATING "high-density"
#endif
static void truncate_oldest(ctxc_session_t *s) {
    uint64_t tokens = ctxc_history_tokens(s->history);
    if (tokens < 200) {
        return;
    }
    char lim[24];
    snprintf(lim, sizeof lim, "%llu", (unsigned long long)(tokens * 3u / 4u));
    t_set(&set, "compression.strategy", TRUNCATING);
    t_set(&set, "context-limit", lim);
    ctxc_error_t err;
    ctxc_status_t st = ctxc_session_compress(s, &err);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10000000");
    /* pinned entries over the target: refused, the history as it was */
    if (st != CTXC_OK && strstr(err.message, "pinned entries alone") == NULL) {
        fail_msg("truncation failed: %s", err.message);
    }
}

/* An edit of the history or the settings between turns, sometimes. */
static void edit(ctxc_session_t *s) {
    ctxc_history_t *h = s->history;
    switch (rnd(24)) {
    case 0: /* pin or unpin an entry (with its pair) */
        if (h->count > 0) {
            size_t i = rnd((uint32_t)h->count);
            ctxc_entry_t e;
            assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
            (void)ctxc_history_pin(h, i, (e.flags & CTXC_ENTRY_PINNED) == 0,
                                   NULL);
        }
        break;
    case 1: /* a human entry replaced */
        for (size_t i = h->count; i-- > 0;) {
            ctxc_entry_t e;
            assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
            if (e.speaker == CTXC_SPEAKER_HUMAN && rnd(3) == 0) {
                ctxc_block_t t = t_text("--- a.c ---\nreplaced, long enough "
                                        "to be deduplicated later on, yes\n"
                                        "--- End of content ---");
                ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &t, 1,
                                      CTXC_STR_ABSENT};
                assert_int_equal(ctxc_history_replace(h, i, &in, NULL),
                                 CTXC_OK);
                break;
            }
        }
        break;
    case 2:
        t_set(&set, "compression.density.recencyPruning",
              rnd(2) ? "true" : "false");
        break;
    case 3:
        t_set(&set, "compression.density.fileDedupe",
              rnd(4) ? "true" : "false");
        break;
    case 4:
        root = rnd(2) ? "/w" : "/other";
        ctxc_session_set_workspace(s, root);
        break;
    case 5: /* the oldest entries dropped: the memo goes on after it */
    case 6:
        truncate_oldest(s);
        break;
    default:
        break;
    }
}

/* The step from scratch on a copy of `before`, exported into `theirs`. */
static void step_from_scratch(void) {
    t_import(&ref, before.buf);
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &ref, &rwork, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_workspace(&s, root);
    if (ctxc_session_optimize(&s, &err) != CTXC_OK) {
        fail_msg("step from scratch failed: %s", err.message);
    }
    assert_int_equal(s.last_density_from, 0);
    t_dump(&ref, &theirs);
}

static void run(uint32_t seed, int turns, size_t *incremental) {
    rng = seed;
    late = 0;
    next_id = 0;
    root = "/w";
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10000000");
    t_set(&set, "compression.density.recencyRetention", "2");
    ctxc_session_t s;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, root);
    for (int t = 0; t < turns; t++) {
        edit(&s);
        turn(&s);
        t_dump(&hist, &before);
        ctxc_error_t err;
        if (ctxc_session_optimize(&s, &err) != CTXC_OK) {
            fail_msg("step failed: %s", err.message);
        }
        if (s.last_density_from > 0) {
            (*incremental)++;
        }
        t_dump(&hist, &mine);
        step_from_scratch();
        if (strcmp(mine.buf, theirs.buf) != 0) {
            fail_msg("seed %u turn %d: the step from entry %zu differs from "
                     "a step over the whole history",
                     (unsigned)seed, t, s.last_density_from);
        }
    }
}

static void test_a_step_after_appends_equals_a_step_from_scratch(void **state) {
    (void)state;
    size_t incremental = 0, total = 0;
    for (uint32_t seed = 1; seed <= 6; seed++) {
        run(seed * 2654435761u, 120, &incremental);
        total += 120;
    }
    /* both ways were taken: most steps read only what came */
    print_message("%zu of %zu steps read only the appended entries\n",
                  incremental, total);
    assert_true(incremental > total / 3);
    assert_true(incremental < total);
}

/* The steady state: turns of short text and a tool call with its result
 * read only what each turn appended; an edit of an old entry, another
 * setting or a write of a path read before makes the next step read the
 * whole history. */
static void test_steady_turns_read_only_what_came(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10000000");
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, "/w");
    char id[16], params[64];
    for (unsigned t = 0; t < 40; t++) {
        ctxc_block_t h = t_text("turn the lights on");
        add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
        snprintf(id, sizeof id, "r%u", t);
        /* four files: the read filter holds few paths, so that the
         * never-read write below is no false positive in any build */
        snprintf(params, sizeof params, "{\"file_path\":\"notes/%u.txt\"}",
                 t % 4u);
        ctxc_block_t c = t_call(id, "read_file", params);
        add(&s, CTXC_SPEAKER_AI, &c, 1);
        add_result(&s, id, "read_file");
        size_t count = hist.count;
        assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
        assert_int_equal(s.last_density_from, t == 0 ? 0 : count - 3);
    }
    /* a write of a file read before: the read goes, the whole history read */
    ctxc_block_t w = t_call("w1", "write_file",
                            "{\"file_path\":\"/w/notes/3.txt\",\"content\":\"x\"}");
    add(&s, CTXC_SPEAKER_AI, &w, 1);
    add_result(&s, "w1", "write_file");
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, 0);
    assert_int_equal(s.last_density.read_write_pruned, 10);
    /* a write of a file never read: only what came */
    size_t count = hist.count;
    w = t_call("w2", "write_file",
               "{\"file_path\":\"/w/new.txt\",\"content\":\"x\"}");
    add(&s, CTXC_SPEAKER_AI, &w, 1);
    add_result(&s, "w2", "write_file");
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, count);
    /* an old entry pinned: whole */
    assert_int_equal(ctxc_history_pin(&hist, 0, true, NULL), CTXC_OK);
    ctxc_block_t h = t_text("and now?");
    add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, 0);
    /* another setting: whole */
    t_set(&set, "compression.density.fileDedupe", "false");
    add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, 0);
    /* a result whose call came before the last step: whole */
    ctxc_block_t c = t_call("late", "get_weather", "{\"city\":\"Oslo\"}");
    add(&s, CTXC_SPEAKER_AI, &c, 1);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_not_equal(s.last_density_from, 0);
    add_result(&s, "late", "get_weather");
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, 0);
}

/* A truncation (a plan that only drops entries) keeps what the step
 * learned about the entries left: the next turn's step reads only what it
 * appended; a compression that inserts entries (high-density's one-line
 * summaries) makes the next step read the whole history. */
static void test_a_truncation_keeps_the_memo(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10000000");
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, "/w");
    for (unsigned t = 0; t < 30; t++) {
        ctxc_block_t h = t_text("what is the weather like in the mountains "
                                "this weekend, and should I take a coat?");
        add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
        ctxc_block_t a = t_text("cold and windy up there: take the coat");
        add(&s, CTXC_SPEAKER_AI, &a, 1);
        assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    }
    size_t before = hist.count;
    truncate_oldest(&s);
    size_t after = hist.count;
    assert_true(after < before);
    ctxc_block_t h = t_text("and on Sunday?");
    add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, after);
    /* an old entry edited after the last step, then a truncation: the
     * memo no longer matched the history, the next step is whole */
    ctxc_block_t r = t_text("a replaced question");
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &r, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_replace(&hist, hist.count - 4, &in, NULL),
                     CTXC_OK);
    truncate_oldest(&s);
    assert_true(hist.count < after + 1);
    add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, 0);
}

/* A read whose result comes after a write of its file and after a step:
 * the read and its result go when the result comes, as a step from
 * scratch does. */
static void test_a_late_result_of_a_read_written_meanwhile(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10000000");
    root = "/w";
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, root);
    ctxc_block_t h = t_text("edit a.c please");
    add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
    ctxc_block_t r = t_call("r1", "read_file", "{\"file_path\":\"a.c\"}");
    add(&s, CTXC_SPEAKER_AI, &r, 1);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    ctxc_block_t w =
        t_call("w1", "write_file", "{\"file_path\":\"/w/a.c\",\"content\":\"x\"}");
    add(&s, CTXC_SPEAKER_AI, &w, 1);
    add_result(&s, "w1", "write_file");
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density.read_write_pruned, 0); /* no result yet */
    add_result(&s, "r1", "read_file");
    t_dump(&hist, &before);
    assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
    assert_int_equal(s.last_density_from, 0);
    assert_int_equal(s.last_density.read_write_pruned, 1);
    t_dump(&hist, &mine);
    step_from_scratch();
    assert_string_equal(mine.buf, theirs.buf);
}

/* Recency pruning on: a new result of a tool reaches back only as far as
 * the oldest result of that tool whose fate it can change; the step reads
 * from there, and its result is a step from scratch's. */
static void test_recency_reaches_back_to_the_results_it_changes(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "context-limit", "10000000");
    t_set(&set, "compression.density.recencyPruning", "true");
    t_set(&set, "compression.density.recencyRetention", "2");
    root = "/w";
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &hist, &work, &set, NULL), CTXC_OK);
    ctxc_session_set_workspace(&s, root);
    char id[16];
    size_t incremental = 0, reached_back = 0;
    for (unsigned t = 0; t < 30; t++) {
        ctxc_block_t h = t_text("what is the weather?");
        add(&s, CTXC_SPEAKER_HUMAN, &h, 1);
        snprintf(id, sizeof id, "w%u", t);
        const char *tool = t % 3 == 0 ? "get_weather" : "run_shell_command";
        ctxc_block_t c = t_call(id, tool, "{\"command\":\"date\"}");
        add(&s, CTXC_SPEAKER_AI, &c, 1);
        add_result(&s, id, tool);
        size_t count = hist.count;
        t_dump(&hist, &before);
        assert_int_equal(ctxc_session_optimize(&s, &err), CTXC_OK);
        if (t > 0) {
            /* not the whole history; back to the results whose payload
             * the new one can take, when there are such */
            assert_true(s.last_density_from > 0);
            assert_true(s.last_density_from <= count - 3);
            incremental++;
            reached_back += s.last_density_from < count - 3;
        }
        t_dump(&hist, &mine);
        step_from_scratch();
        assert_string_equal(mine.buf, theirs.buf);
    }
    assert_int_equal(incremental, 29);
    assert_true(reached_back >= 25);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_recency_reaches_back_to_the_results_it_changes),
        cmocka_unit_test(test_a_step_after_appends_equals_a_step_from_scratch),
        cmocka_unit_test(test_steady_turns_read_only_what_came),
        cmocka_unit_test(test_a_truncation_keeps_the_memo),
        cmocka_unit_test(test_a_late_result_of_a_read_written_meanwhile),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_left_out(void **state) {
    (void)state;
    skip();
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_left_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
