/*
 * The LLM strategies (docs/strategies-providers.md): middle-out and one-shot,
 * through the session, with a fake ctxc_llm_t that records the rendered
 * request (system text and each message with its role, written through the
 * part callbacks twice: the count pass and the send pass must give the
 * same bytes) and answers with a scripted text or error.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/prompt.h"
#include "fake_fs.h"
#include "support.h"

#if CTXC_CFG_STRATEGY_MIDDLE_OUT && CTXC_CFG_STRATEGY_ONE_SHOT

CTXC_HISTORY_DEFINE(hist, 128, 65536);
CTXC_HISTORY_DEFINE(chk, 128, 65536);
CTXC_WORK_DEFINE(work, 128, 16384);
CTXC_WORK_DEFINE(tiny, 128, 1024);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static t_snap_t snap;

/* ---- the fake model ------------------------------------------------------ */

#define MAX_MSGS 64
#define PART_BYTES 16384

typedef struct {
    char buf[PART_BYTES];
    size_t len;
} part_t;

static struct {
    /* script */
    ctxc_status_t fail;         /* CTXC_OK: answer */
    const char *answer;         /* NULL: a short snapshot */
    size_t big_answer;          /* > 0: an answer of this many 'x' */
    ctxc_status_t resolve_fail; /* the resolver's answer */
    /* record */
    int calls, resolves;
    const char *profile_seen;
    part_t system;
    part_t msg[MAX_MSGS];
    ctxc_llm_role_t role[MAX_MSGS];
    size_t n;
    size_t answer_cap;
    uint64_t usage_in, usage_out; /* the usage the fake reports */
} fk;

static ctxc_status_t part_write(void *user, const char *text, size_t len) {
    part_t *p = user;
    if (p->len + len >= sizeof p->buf) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(p->buf + p->len, text, len);
    p->len += len;
    p->buf[p->len] = '\0';
    return CTXC_OK;
}

/* Writes every part into `sys` / `msgs` (one pass). */
static void render(const ctxc_llm_request_t *req, part_t *sys, part_t *msgs) {
    sys->len = 0;
    sys->buf[0] = '\0';
    if (req->system != NULL) {
        assert_int_equal(req->system(req->src, 0, part_write, sys), CTXC_OK);
    }
    assert_true(req->message_count >= 1 && req->message_count <= MAX_MSGS);
    for (size_t i = 0; i < req->message_count; i++) {
        msgs[i].len = 0;
        msgs[i].buf[0] = '\0';
        assert_int_equal(req->message(req->src, i, part_write, &msgs[i]),
                         CTXC_OK);
    }
}

static ctxc_status_t fake_complete(const ctxc_llm_t *llm,
                                   const ctxc_llm_request_t *req, char *out,
                                   size_t cap, size_t *len,
                                   ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    static part_t sys2, msgs2[MAX_MSGS];
    (void)llm;
    if (usage != NULL) {
        memset(usage, 0, sizeof *usage);
        usage->input_tokens = fk.usage_in;
        usage->output_tokens = fk.usage_out;
    }
    fk.calls++;
    fk.answer_cap = cap;
    /* count pass, then send pass: the same bytes */
    render(req, &fk.system, fk.msg);
    render(req, &sys2, msgs2);
    assert_string_equal(fk.system.buf, sys2.buf);
    fk.n = req->message_count;
    for (size_t i = 0; i < fk.n; i++) {
        assert_string_equal(fk.msg[i].buf, msgs2[i].buf);
        fk.role[i] = req->roles != NULL ? req->roles[i] : CTXC_LLM_ROLE_USER;
    }
    if (fk.fail != CTXC_OK) {
        return ctxc_error_set(err, fk.fail, "scripted failure");
    }
    if (fk.big_answer > 0) {
        if (fk.big_answer + 1 > cap) {
            ctxc_error_set(err, CTXC_E_TOO_LARGE, "answer too large");
            if (err != NULL) {
                err->needed = fk.big_answer + 1 - cap;
            }
            return CTXC_E_TOO_LARGE;
        }
        memset(out, 'x', fk.big_answer);
        out[fk.big_answer] = '\0';
        *len = fk.big_answer;
        return CTXC_OK;
    }
    const char *a = fk.answer != NULL
                        ? fk.answer
                        : "<state_snapshot>short</state_snapshot>";
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
    fk.resolves++;
    fk.profile_seen = profile;
    if (fk.resolve_fail != CTXC_OK) {
        return ctxc_error_set(err, fk.resolve_fail, "profile 'x' not found");
    }
    *llm = &fake_llm;
    return CTXC_OK;
}

/* ---- setup --------------------------------------------------------------- */

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    ctxc_settings_init(&set, NULL);
    t_set_uint(&set, "context-limit", 100000);
    /* the summaries as the model wrote them (the fact check: test_facts) */
    t_set(&set, "compression.factCheck", "off");
    return 0;
}

static void start(const char *strategy, ctxc_work_t *w) {
    t_set(&set, "compression.strategy", strategy);
    assert_int_equal(ctxc_session_init(&sess, &hist, w, &set, NULL), CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, fake_resolve, NULL);
    t_snapshot(&hist, &snap);
}

static ctxc_status_t compress(ctxc_error_t *err) {
    memset(err, 0, sizeof *err);
    return ctxc_session_compress(&sess, err);
}

static void compress_ok(void) {
    ctxc_error_t err;
    ctxc_status_t st = compress(&err);
    if (st != CTXC_OK) {
        fail_msg("compress: %s: %s", ctxc_status_name(st), err.message);
    }
}

static void compress_fails(ctxc_status_t want) {
    ctxc_error_t err;
    ctxc_status_t st = compress(&err);
    if (st != want) {
        fail_msg("compress: %s (%s), expected %s", ctxc_status_name(st),
                 err.message, ctxc_status_name(want));
    }
    t_assert_unchanged(&hist, &snap);
}

/* Entry i's text: "msg <i>" and 18 more words (26 tokens). */
#define FILLER                                                                 \
    " one two three four five six seven eight nine ten eleven twelve "         \
    "thirteen fourteen fifteen sixteen seventeen eighteen"
static const char *msg_text(size_t i) {
    static char text[4][160];
    static unsigned k;
    char *t = text[k++ % 4];
    snprintf(t, 160, "msg %zu" FILLER, i);
    return t;
}

static void add_msg(ctxc_speaker_t sp, size_t i) {
    t_add_text(&hist, sp, msg_text(i));
}

static void alternating(size_t n) {
    for (size_t i = 0; i < n; i++) {
        add_msg(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, i);
    }
}

static const char *text_of(size_t i) { return t_block_text(&hist, i, 0); }

static ctxc_entry_t entry(size_t i) {
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, i, &e), CTXC_OK);
    return e;
}

/* Entry i is the summary and i + 1 the continuation. */
static void assert_summary_at(size_t i, const char *answer) {
    ctxc_entry_t e = entry(i);
    assert_int_equal(e.speaker, CTXC_SPEAKER_HUMAN);
    assert_true(e.flags & CTXC_ENTRY_IS_SUMMARY);
    assert_string_equal(text_of(i), answer);
    e = entry(i + 1);
    assert_int_equal(e.speaker, CTXC_SPEAKER_AI);
    assert_false(e.flags & CTXC_ENTRY_IS_SUMMARY);
}

/* The output exports and imports again unchanged (the store refuses
 * unpaired tool calls/responses that were paired, so this is the pairing
 * invariant), and the tokens agree with the metadata. */
static void assert_valid_output(void) {
    static t_dump_t a, b;
    t_dump(&hist, &a);
    t_import(&chk, a.buf);
    t_dump(&chk, &b);
    assert_string_equal(a.buf, b.buf);
    assert_int_equal(sess.last_compress.tokens_after,
                     ctxc_history_tokens(&hist));
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
}

/* Position of needle in hay (fails when absent). */
static size_t pos(const char *hay, const char *needle) {
    const char *p = strstr(hay, needle);
    if (p == NULL) {
        fail_msg("'%s' not found in:\n%s", needle, hay);
    }
    return (size_t)(p - hay);
}

static const char *final_msg(void) { return fk.msg[fk.n - 1].buf; }

/* ---- middle-out: splits -------------------------------------------------- */

static void test_twenty_is_4_12_4(void **state) {
    (void)state;
    alternating(20);
    start("middle-out", &work);
    compress_ok();
    assert_int_equal(ctxc_history_count(&hist), 10);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(text_of(i), msg_text(i));
        assert_string_equal(text_of(6 + i), msg_text(16 + i));
    }
    assert_summary_at(4, "<state_snapshot>short</state_snapshot>");
    const ctxc_compress_meta_t *m = &sess.last_compress;
    assert_true(m->llm_call_made);
    assert_false(m->unchanged);
    assert_int_equal(m->top_preserved, 4);
    assert_int_equal(m->bottom_preserved, 4);
    assert_int_equal(m->middle_compressed, 12);
    assert_int_equal(m->original_count, 20);
    assert_int_equal(m->compressed_count, 10);
    assert_int_equal(m->tokens_before, snap.tokens);
    assert_true(m->tokens_after < m->tokens_before);
    assert_valid_output();
    /* the request: 12 alternating turns (entries 4..15) and the final one */
    assert_int_equal(fk.calls, 1);
    assert_int_equal(fk.resolves, 1);
    assert_null(fk.profile_seen);
    assert_int_equal(fk.n, 13);
    for (size_t i = 0; i < 12; i++) {
        assert_string_equal(fk.msg[i].buf, msg_text(4 + i));
        assert_int_equal(fk.role[i],
                         i % 2 ? CTXC_LLM_ROLE_ASSISTANT : CTXC_LLM_ROLE_USER);
    }
    assert_int_equal(fk.role[12], CTXC_LLM_ROLE_USER);
    /* the continuation names the latest request (entry 18, in the bottom) */
    assert_non_null(strstr(text_of(5), "msg 18 one two"));
}

/* [0 h, 1 ai, 2 h, 3 ai(c1, c2), 4 tool(c1), 5 tool(c2), ...]: ceil(20 x
 * 0.2) = 4 is no valid split (nor 5); 3 is below the minimum, so the top
 * is 6. At the bottom, 16 and 17 split call c3 (15) from its response
 * (17, not adjacent): the bottom starts at 18. An orphan response in the
 * middle is rendered and summarised. */
static void test_boundaries_parallel_calls_and_orphans(void **state) {
    (void)state;
    add_msg(CTXC_SPEAKER_HUMAN, 0);
    add_msg(CTXC_SPEAKER_AI, 1);
    add_msg(CTXC_SPEAKER_HUMAN, 2);
    ctxc_block_t calls[2] = {t_call("c1", "read_file", "{\"path\":\"a.c\"}"),
                             t_call("c2", "read_file", "{\"path\":\"b.c\"}")};
    t_add(&hist, CTXC_SPEAKER_AI, calls, 2);
    ctxc_block_t r1 = t_resp("c1", "read_file", "\"int a;\"", NULL);
    ctxc_block_t r2 = t_resp("c2", "read_file", "\"int b;\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r1, 1);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r2, 1);
    for (size_t i = 6; i < 15; i++) {
        if (i == 10) {
            ctxc_block_t orphan = t_resp("gone", "run", "\"orphan\"", NULL);
            t_add(&hist, CTXC_SPEAKER_TOOL, &orphan, 1);
        } else {
            add_msg(i == 9 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI, i);
        }
    }
    ctxc_block_t c3 = t_call("c3", "run", "{\"cmd\":\"make\"}");
    t_add(&hist, CTXC_SPEAKER_AI, &c3, 1); /* 15 */
    add_msg(CTXC_SPEAKER_AI, 16);
    ctxc_block_t r3 = t_resp("c3", "run", "\"ok\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r3, 1); /* 17 */
    add_msg(CTXC_SPEAKER_AI, 18);
    add_msg(CTXC_SPEAKER_HUMAN, 19);
    assert_int_equal(ctxc_history_count(&hist), 20);
    start("middle-out", &work);
    compress_ok();
    const ctxc_compress_meta_t *m = &sess.last_compress;
    assert_int_equal(m->top_preserved, 6);
    assert_int_equal(m->bottom_preserved, 2);
    assert_int_equal(m->middle_compressed, 12);
    assert_int_equal(ctxc_history_count(&hist), 10);
    assert_summary_at(6, "<state_snapshot>short</state_snapshot>");
    assert_string_equal(t_block_text(&hist, 5, 0), "\"int b;\"");
    assert_valid_output();
    /* the orphan and the call are rendered as text */
    bool orphan_seen = false, call_seen = false;
    for (size_t i = 0; i < fk.n; i++) {
        orphan_seen |=
            strstr(fk.msg[i].buf, "[Tool Result: run]\n\"orphan\"") != NULL;
        call_seen |= strstr(fk.msg[i].buf,
                            "[Tool Call: run] {\"cmd\":\"make\"}") != NULL;
    }
    assert_true(orphan_seen);
    assert_true(call_seen);
}

static void test_fewer_than_4_unchanged_without_call(void **state) {
    (void)state;
    alternating(7); /* top 2, bottom from 5: 3 in the middle */
    start("middle-out", &work);
    compress_ok();
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(fk.resolves, 0);
    assert_int_equal(fk.calls, 0);
    assert_true(sess.last_compress.unchanged);
    assert_false(sess.last_compress.llm_call_made);
    assert_non_null(
        strstr(sess.last_compress.unchanged_reason, "fewer than 4"));
    /* 8 entries: 2 / 4 / 2, a call */
    add_msg(CTXC_SPEAKER_AI, 7);
    start("middle-out", &work);
    compress_ok();
    assert_int_equal(fk.calls, 1);
    assert_int_equal(ctxc_history_count(&hist), 6);
}

static void test_empty_middle_unchanged(void **state) {
    (void)state;
    alternating(20);
    t_set_ratio(&set, "compression-top-preserve-threshold", 600);
    t_set_ratio(&set, "compression-preserve-threshold", 600);
    start("middle-out", &work);
    compress_ok();
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(fk.resolves, 0);
    assert_non_null(strstr(sess.last_compress.unchanged_reason, "empty"));
}

static void test_top_never_below_minimum(void **state) {
    (void)state;
    /* the call at 3 is answered at 7: 4..7 are no valid splits; the top
     * is 8 (never 3) */
    for (size_t i = 0; i < 3; i++) {
        add_msg(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, i);
    }
    ctxc_block_t c = t_call("k", "run", "{}");
    t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
    for (size_t i = 4; i < 7; i++) {
        add_msg(CTXC_SPEAKER_AI, i);
    }
    ctxc_block_t r = t_resp("k", "run", "\"done\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    for (size_t i = 8; i < 20; i++) {
        add_msg(i == 19 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI, i);
    }
    start("middle-out", &work);
    compress_ok();
    assert_int_equal(sess.last_compress.top_preserved, 8);
    assert_int_equal(sess.last_compress.bottom_preserved, 4);
    assert_int_equal(ctxc_history_count(&hist), 14);
    assert_summary_at(8, "<state_snapshot>short</state_snapshot>");
    assert_valid_output();
}

/* ---- the latest request -------------------------------------------------- */

static void test_short_latest_request_moves_to_bottom(void **state) {
    (void)state;
    for (size_t i = 0; i < 20; i++) {
        add_msg(i == 0 || i == 10 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI, i);
    }
    start("middle-out", &work);
    compress_ok();
    /* middle [4, 10), bottom [10, 20) starting with the request */
    assert_int_equal(sess.last_compress.middle_compressed, 6);
    assert_int_equal(sess.last_compress.bottom_preserved, 10);
    assert_int_equal(ctxc_history_count(&hist), 16);
    assert_string_equal(text_of(6), msg_text(10));
    assert_null(strstr(final_msg(), "<latest_request>"));
    assert_valid_output();

    /* the request at 6: the middle shrinks to 2, no call */
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    for (size_t i = 0; i < 20; i++) {
        add_msg(i == 0 || i == 6 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI, i);
    }
    start("middle-out", &work);
    compress_ok();
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(fk.resolves, 0);
    assert_true(sess.last_compress.unchanged);
}

static char long_text[8192];

static void test_long_latest_request_goes_in_full(void **state) {
    (void)state;
    size_t n = 0;
    for (int w = 0; w < 450 && n + 16 < sizeof long_text; w++) {
        n +=
            (size_t)snprintf(long_text + n, sizeof long_text - n, "word%d ", w);
    }
    memcpy(long_text + n, "END", 4);
    for (size_t i = 0; i < 20; i++) {
        if (i == 10) {
            t_add_text(&hist, CTXC_SPEAKER_HUMAN, long_text);
        } else {
            add_msg(i == 0 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI, i);
        }
    }
    ctxc_entry_t e = entry(10);
    assert_true(e.tokens >= 500);
    start("middle-out", &work);
    compress_ok();
    assert_int_equal(sess.last_compress.middle_compressed, 12);
    const char *f = final_msg();
    size_t a = pos(f, "<latest_request>\n");
    size_t b = pos(f, long_text);
    size_t c = pos(f, "</latest_request>");
    assert_true(a < b && b < c);
    assert_true(c < pos(f, "<state_snapshot>"));
    /* the continuation quotes its start, cut */
    assert_non_null(strstr(text_of(5), "\"word0 word1 "));
    assert_non_null(strstr(text_of(5), "...\""));
    assert_valid_output();
}

/* ---- the request --------------------------------------------------------- */

static const ctxc_todo_t todos[] = {
    {"ship it", CTXC_TODO_COMPLETED},
    {"write the tests", CTXC_TODO_PENDING},
    {"fix the parser", CTXC_TODO_IN_PROGRESS},
    {"update the docs", CTXC_TODO_PENDING},
};

static void test_request_parts_in_order(void **state) {
    (void)state;
    alternating(20);
    start("middle-out", &work);
    ctxc_session_set_todos(&sess, todos, 4);
    ctxc_session_set_transcript(&sess, "/tmp/ctxc/transcript-1.jsonl");
    compress_ok();
    /* system: preamble, then the built-in prompt */
    const ctxc_prompt_builtin_t *bp =
        ctxc_prompt_builtin(CTXC_PROMPT_MIDDLE_OUT);
    assert_non_null(bp);
    size_t pre = pos(fk.system.buf, "never instructions");
    size_t pr = pos(fk.system.buf, bp->text);
    assert_true(pre < pr);
    assert_int_equal(pr + bp->len, fk.system.len);
    assert_non_null(strstr(fk.system.buf, "<state_snapshot>"));
    /* final: todos (in progress, then pending, no completed), transcript,
     * trigger; no earlier snapshot */
    const char *f = final_msg();
    size_t t0 = pos(f, "- [in progress] fix the parser\n");
    size_t t1 = pos(f, "- [pending] write the tests\n");
    size_t t2 = pos(f, "- [pending] update the docs\n");
    size_t tr = pos(f, "The full pre-compression transcript is at "
                       "/tmp/ctxc/transcript-1.jsonl");
    size_t tg = pos(f, "<scratchpad>");
    assert_true(t0 < t1 && t1 < t2 && t2 < tr && tr < tg);
    assert_null(strstr(f, "ship it"));
    assert_null(strstr(f, "earlier <state_snapshot>"));
    /* the continuation names the request and the todo in progress */
    assert_non_null(strstr(text_of(5), "msg 18 one two"));
    assert_non_null(strstr(text_of(5), "fix the parser"));

    /* cleared todos, no transcript, an earlier snapshot in the middle */
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    for (size_t i = 0; i < 20; i++) {
        if (i == 6) {
            ctxc_block_t b = t_text("<state_snapshot>old</state_snapshot>");
            ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1,
                                  CTXC_STR_LIT("{\"isSummary\":true}")};
            assert_int_equal(ctxc_history_append(&hist, &in, NULL), CTXC_OK);
        } else {
            add_msg(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, i);
        }
    }
    start("middle-out", &work);
    ctxc_session_clear_todos(&sess);
    compress_ok();
    f = final_msg();
    assert_null(strstr(f, "todo"));
    assert_null(strstr(f, "transcript"));
    assert_true(pos(f, "<scratchpad>") < pos(f, "earlier <state_snapshot>"));
    /* the head before the earlier summary stays (6 entries, issue 41):
     * the new summary at 6, the continuation at 7; the earlier summary is
     * no user request */
    assert_summary_at(6, "<state_snapshot>short</state_snapshot>");
    assert_non_null(strstr(text_of(7), "msg 18 one two"));
    assert_null(strstr(text_of(7), "todo"));
}

static void test_earlier_snapshot_in_text(void **state) {
    (void)state;
    for (size_t i = 0; i < 20; i++) {
        if (i == 7) {
            t_add_text(&hist, CTXC_SPEAKER_AI,
                       "as noted in <state_snapshot> before, go on");
        } else {
            add_msg(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, i);
        }
    }
    start("middle-out", &work);
    compress_ok();
    assert_non_null(strstr(final_msg(), "earlier <state_snapshot>"));
}

static void test_rendering(void **state) {
    (void)state;
    add_msg(CTXC_SPEAKER_HUMAN, 0);
    add_msg(CTXC_SPEAKER_AI, 1);
    add_msg(CTXC_SPEAKER_HUMAN, 2);
    add_msg(CTXC_SPEAKER_AI, 3);
    /* 4: ai with thinking, text, a call */
    ctxc_block_t b4[3];
    memset(b4, 0, sizeof b4);
    b4[0].type = CTXC_BLOCK_THINKING;
    b4[0].u.thinking.thought = ctxc_str("SECRET THOUGHT");
    b4[1] = t_text("Let me look.");
    b4[2] = t_call("r1", "read_file", "{\"path\":\"src/a.c\"}");
    t_add(&hist, CTXC_SPEAKER_AI, b4, 3);
    /* 5: tool result with an error */
    ctxc_block_t b5 = t_resp("r1", "read_file", "{\"code\":2}", "no such file");
    t_add(&hist, CTXC_SPEAKER_TOOL, &b5, 1);
    /* 6: human with media and code */
    ctxc_block_t b6[2];
    memset(b6, 0, sizeof b6);
    b6[0].type = CTXC_BLOCK_MEDIA;
    b6[0].u.media.mime_type = ctxc_str("image/png");
    b6[0].u.media.data = ctxc_str("aGVsbG8=");
    b6[0].u.media.encoding = ctxc_str("base64");
    b6[0].u.media.caption = ctxc_str("the diagram");
    b6[0].u.media.filename = ctxc_str("d.png");
    b6[1].type = CTXC_BLOCK_CODE;
    b6[1].u.code.code = ctxc_str("int main(void);");
    b6[1].u.code.language = ctxc_str("c");
    t_add(&hist, CTXC_SPEAKER_HUMAN, b6, 2);
    for (size_t i = 7; i < 20; i++) {
        add_msg(i == 18 ? CTXC_SPEAKER_HUMAN : CTXC_SPEAKER_AI, i);
    }
    start("middle-out", &work);
    compress_ok();
    /* turns: [4 ai] [5 tool, 6 human] [7..15 ai], the final one */
    assert_int_equal(fk.n, 4);
    assert_int_equal(fk.role[0], CTXC_LLM_ROLE_ASSISTANT);
    assert_int_equal(fk.role[1], CTXC_LLM_ROLE_USER);
    assert_int_equal(fk.role[2], CTXC_LLM_ROLE_ASSISTANT);
    assert_int_equal(fk.role[3], CTXC_LLM_ROLE_USER);
    assert_string_equal(fk.msg[0].buf,

                        "[Reasoning left out]\n\nLet me look.\n\n"
                        "[Tool Call: read_file] {\"path\":\"src/a.c\"}");
    assert_string_equal(
        fk.msg[1].buf,
        "[Tool Result: read_file]\nError: no such file\n{\"code\":2}\n\n"
        "[Attachment: image/png, caption: the diagram, file: d.png; content "
        "not included]\n\n```c\nint main(void);\n```");
    assert_null(strstr(fk.msg[1].buf, "aGVsbG8="));
    assert_null(strstr(fk.msg[0].buf, "SECRET"));
    assert_valid_output();
}

/* ---- prompts ------------------------------------------------------------- */

static mem_fs_t mem;

static void test_prompt_through_port_fs(void **state) {
    (void)state;
    memset(&mem, 0, sizeof mem);
    mem_put(&mem, "providers/fake/compression/middle-out.md",
            "PROVIDER PROMPT for middle-out");
    mem_put(&mem, "providers/fake/models/fake-1/compression/one-shot.md",
            "MODEL PROMPT for one-shot");
    static ctxc_port_t port;
    memset(&port, 0, sizeof port);
    port.fs = mem_fs(&mem);
    alternating(20);
    start("middle-out", &work);
    ctxc_session_set_port(&sess, &port);
    compress_ok();
    assert_non_null(
        strstr(fk.system.buf, "\n\nPROVIDER PROMPT for middle-out"));
    assert_valid_output();

    ctxc_history_clear(&hist);
    alternating(20);
    start("one-shot", &work);
    ctxc_session_set_port(&sess, &port);
    compress_ok();
    assert_non_null(strstr(fk.system.buf, "\n\nMODEL PROMPT for one-shot"));

    /* a prompt file that cannot be read: the error, nothing changed */
    ctxc_history_clear(&hist);
    alternating(20);
    mem_find(&mem, "providers/fake/compression/middle-out.md")->unreadable =
        true;
    start("middle-out", &work);
    ctxc_session_set_port(&sess, &port);
    fk.calls = 0;
    compress_fails(CTXC_E_IO);
    assert_int_equal(fk.calls, 0);
}

/* ---- failures ------------------------------------------------------------ */

static void test_failures_leave_history_unchanged(void **state) {
    (void)state;
    alternating(20);
    start("middle-out", &work);
    fk.answer = " \n\t \r\n";
    compress_fails(CTXC_E_PARSE);
    assert_int_equal(fk.calls, 1);

    /* a summary not smaller than the 12 entries it replaces */
    static char big[4000];
    memset(big, 0, sizeof big);
    for (size_t i = 0; i + 6 < 1500; i += 5) {
        memcpy(big + i, "word ", 5);
    }
    fk.answer = big;
    compress_fails(CTXC_E_TOO_LARGE);

    fk.answer = NULL;
    fk.fail = CTXC_E_HTTP_STATUS;
    compress_fails(CTXC_E_HTTP_STATUS);
    fk.fail = CTXC_E_PARSE; /* cut off by the output limit */
    compress_fails(CTXC_E_PARSE);
    fk.fail = CTXC_OK;

    /* the resolver's error (the profile is gone): no call */
    fk.calls = 0;
    fk.resolve_fail = CTXC_E_PROFILE_NOT_FOUND;
    compress_fails(CTXC_E_PROFILE_NOT_FOUND);
    assert_int_equal(fk.calls, 0);
    fk.resolve_fail = CTXC_OK;

    /* invalid UTF-8 in the answer: refused by the store's rules */
    fk.answer = "bad \xff summary";
    compress_fails(CTXC_E_UTF8);

    /* and then it works */
    fk.answer = NULL;
    compress_ok();
    assert_int_equal(ctxc_history_count(&hist), 10);
}

static void test_no_resolver_is_unavailable(void **state) {
    (void)state;
    alternating(20);
    start("one-shot", &work);
    ctxc_session_set_llm_resolver(&sess, NULL, NULL);
    ctxc_error_t err;
    assert_int_equal(compress(&err), CTXC_E_UNAVAILABLE);
    assert_non_null(strstr(err.message, "'one-shot'"));
    assert_non_null(strstr(err.message, "LLM resolver"));
    t_assert_unchanged(&hist, &snap);
}

static void test_answer_larger_than_buffer(void **state) {
    (void)state;
    alternating(20);
    start("middle-out", &work);
    fk.big_answer = 20000;
    ctxc_error_t err;
    assert_int_equal(compress(&err), CTXC_E_TOO_LARGE);
    assert_true(err.needed > 0);
    assert_int_equal(err.needed, 20001 - fk.answer_cap);
    t_assert_unchanged(&hist, &snap);
    /* scratch 16384: half for the plan; the answer buffer is the upper
     * half less the roles (13 x 4 rounded to 8) and the continuation */
    assert_int_equal(fk.answer_cap, 8192 - 56 - 512);

    /* a work area too small for the call at all */
    memset(&fk, 0, sizeof fk);
    start("middle-out", &tiny);
    assert_int_equal(compress(&err), CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    assert_int_equal(fk.calls, 0);
    t_assert_unchanged(&hist, &snap);
}

/* ---- one-shot ------------------------------------------------------------ */

static void test_one_shot(void **state) {
    (void)state;
    alternating(20);
    start("one-shot", &work);
    ctxc_session_set_todos(&sess, todos + 1, 1);
    compress_ok();
    assert_int_equal(ctxc_history_count(&hist), 6);
    assert_summary_at(0, "<state_snapshot>short</state_snapshot>");
    assert_string_equal(text_of(2), msg_text(16));
    assert_non_null(strstr(text_of(1), "write the tests"));
    const ctxc_compress_meta_t *m = &sess.last_compress;
    assert_int_equal(m->strategy, CTXC_STRATEGY_ONE_SHOT);
    assert_true(m->llm_call_made);
    assert_int_equal(m->top_preserved, 0);
    assert_int_equal(m->bottom_preserved, 4);
    assert_int_equal(m->middle_compressed, 16);
    assert_int_equal(fk.n, 17);
    assert_string_equal(fk.msg[0].buf, msg_text(0));
    const ctxc_prompt_builtin_t *bp = ctxc_prompt_builtin(CTXC_PROMPT_ONE_SHOT);
    assert_non_null(strstr(fk.system.buf, bp->text));
    assert_non_null(strstr(final_msg(), "- [pending] write the tests"));
    assert_valid_output();

    /* a boundary: the call at 15 answered at 17 moves the split to 18 */
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    alternating(15);
    ctxc_block_t c = t_call("z", "run", "{}");
    t_add(&hist, CTXC_SPEAKER_AI, &c, 1);
    add_msg(CTXC_SPEAKER_AI, 16);
    ctxc_block_t r = t_resp("z", "run", "\"ok\"", NULL);
    t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
    add_msg(CTXC_SPEAKER_HUMAN, 18);
    add_msg(CTXC_SPEAKER_AI, 19);
    start("one-shot", &work);
    compress_ok();
    assert_int_equal(sess.last_compress.bottom_preserved, 2);
    assert_int_equal(ctxc_history_count(&hist), 4);
    assert_valid_output();

    /* preserve 0: everything is summarised, [summary, continuation] */
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    alternating(10);
    t_set_ratio(&set, "compression-preserve-threshold", 0);
    start("one-shot", &work);
    compress_ok();
    assert_int_equal(ctxc_history_count(&hist), 2);
    assert_summary_at(0, "<state_snapshot>short</state_snapshot>");
    assert_int_equal(sess.last_compress.bottom_preserved, 0);
    assert_int_equal(sess.last_compress.middle_compressed, 10);
    assert_valid_output();
}

static void test_one_shot_too_few_and_failures(void **state) {
    (void)state;
    alternating(4); /* split floor(3.2) = 3 */
    start("one-shot", &work);
    compress_ok();
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(fk.resolves, 0);
    assert_true(sess.last_compress.unchanged);
    assert_non_null(
        strstr(sess.last_compress.unchanged_reason, "fewer than 4"));

    ctxc_history_clear(&hist);
    alternating(20);
    start("one-shot", &work);
    fk.answer = "   ";
    compress_fails(CTXC_E_PARSE);
    fk.answer = NULL;
    fk.fail = CTXC_E_TIMEOUT;
    compress_fails(CTXC_E_TIMEOUT);
    fk.fail = CTXC_OK;
    fk.resolve_fail = CTXC_E_INVALID_ARG;
    compress_fails(CTXC_E_INVALID_ARG);
}

/* before_send: over the threshold, the configured LLM strategy runs. */
static void test_before_send(void **state) {
    (void)state;
    alternating(20);
    t_set_uint(&set, "context-limit", 250);
    start("middle-out", &work);
    ctxc_send_report_t rep;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err), CTXC_OK);
    assert_true(rep.compressed);
    assert_true(rep.tokens_after < rep.tokens);
    assert_int_equal(ctxc_history_count(&hist), 10);
    /* a failing call: the error, the history as it was */
    ctxc_history_clear(&hist);
    alternating(20);
    start("middle-out", &work);
    fk.fail = CTXC_E_NETWORK;
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_session_before_send(&sess, 0, &rep, &err),
                     CTXC_E_NETWORK);
    t_assert_unchanged(&hist, &snap);
}

/* Issue 41: the continuation does not quote a whitespace-only latest
 * request, and names the images attached to the latest request. */
static void test_continuation_blank_request_and_images(void **state) {
    (void)state;
    ctxc_block_t img;
    memset(&img, 0, sizeof img);
    img.type = CTXC_BLOCK_MEDIA;
    img.u.media.mime_type = ctxc_str("image/png");
    img.u.media.data = ctxc_str("aGVsbG8=");
    img.u.media.encoding = ctxc_str("base64");
    /* blank text and one image */
    alternating(18);
    ctxc_block_t b[4] = {t_text("  \n\t "), img};
    t_add(&hist, CTXC_SPEAKER_HUMAN, b, 2);
    add_msg(CTXC_SPEAKER_AI, 19);
    start("middle-out", &work);
    compress_ok();
    const char *cont = text_of(5);
    assert_null(strstr(cont, "Your latest request: \""));
    assert_non_null(strstr(cont, "Your latest request is an attached image."));
    /* blank text only: nothing quoted, no image named */
    ctxc_history_clear(&hist);
    alternating(18);
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, " \n ");
    add_msg(CTXC_SPEAKER_AI, 19);
    start("middle-out", &work);
    compress_ok();
    cont = text_of(5);
    assert_null(strstr(cont, "latest request"));
    assert_null(strstr(cont, "\" \""));
    /* a blank text, then the request's text, and two images */
    ctxc_history_clear(&hist);
    alternating(18);
    b[0] = t_text("   ");
    b[1] = t_text("fix the parser");
    b[2] = img;
    b[3] = img;
    t_add(&hist, CTXC_SPEAKER_HUMAN, b, 4);
    add_msg(CTXC_SPEAKER_AI, 19);
    start("middle-out", &work);
    compress_ok();
    assert_non_null(strstr(text_of(5), "Your latest request: \"fix the "
                                       "parser\", with attached images (2)."));
}

/* Issue 41: a second middle-out compression keeps the head the first one
 * kept (8 entries), though ceil(N x 0.2) of the shorter history is 4: the
 * first head stays the prefix of the requests (the prompt cache), and the
 * earlier summary is merged into the new one. */
static void test_second_compression_keeps_the_head(void **state) {
    (void)state;
    alternating(40);
    start("middle-out", &work);
    compress_ok();
    /* [8 head, summary, continuation, 8 bottom] */
    assert_int_equal(ctxc_history_count(&hist), 18);
    assert_summary_at(8, "<state_snapshot>short</state_snapshot>");
    for (size_t i = 40; i < 42; i++) {
        add_msg(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, i);
    }
    fk.answer = "<state_snapshot>second</state_snapshot>";
    compress_ok();
    for (size_t i = 0; i < 8; i++) {
        assert_string_equal(text_of(i), msg_text(i));
    }
    assert_summary_at(8, "<state_snapshot>second</state_snapshot>");
    assert_int_equal(sess.last_compress.top_preserved, 8);
    /* the earlier summary was sent, to be merged */
    assert_non_null(strstr(fk.msg[0].buf, "<state_snapshot>short"));
    assert_non_null(strstr(final_msg(), "earlier <state_snapshot>"));
    assert_valid_output();
    /* too little after the earlier summary (14 entries, preserve 0.5:
     * the bottom starts at 7, before it): the head is summarised from
     * ceil(14 x 0.2) = 3 as before, rather than nothing */
    assert_int_equal(ctxc_history_count(&hist), 14);
    t_set_ratio(&set, "compression-preserve-threshold", 500);
    fk.answer = "<state_snapshot>third</state_snapshot>";
    compress_ok();
    assert_false(sess.last_compress.unchanged);
    assert_int_equal(sess.last_compress.top_preserved, 3);
    assert_summary_at(3, "<state_snapshot>third</state_snapshot>");
    assert_valid_output();
}

/* Issue 41: the provider's usage of the summary call is kept on the
 * summary entry's metadata and in the result; without a report the
 * metadata is {"isSummary":true} as before. */
static void test_summary_call_usage_kept(void **state) {
    (void)state;
    alternating(20);
    fk.usage_in = 1234;
    fk.usage_out = 56;
    start("middle-out", &work);
    compress_ok();
    ctxc_entry_t e = entry(4);
    assert_true(e.flags & CTXC_ENTRY_IS_SUMMARY);
    assert_int_equal(e.metadata.len,
                     strlen("{\"isSummary\":true,\"usage\":{\"inputTokens\":"
                            "1234,\"outputTokens\":56}}"));
    assert_memory_equal(e.metadata.ptr,
                        "{\"isSummary\":true,\"usage\":{\"inputTokens\":1234,"
                        "\"outputTokens\":56}}",
                        e.metadata.len);
    assert_int_equal(sess.last_compress.summary_input_tokens, 1234);
    assert_int_equal(sess.last_compress.summary_output_tokens, 56);
    assert_valid_output();
    /* not reported */
    ctxc_history_clear(&hist);
    alternating(20);
    fk.usage_in = fk.usage_out = 0;
    start("middle-out", &work);
    compress_ok();
    e = entry(4);
    assert_int_equal(e.metadata.len, strlen("{\"isSummary\":true}"));
    assert_int_equal(sess.last_compress.summary_input_tokens, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_twenty_is_4_12_4, setup),
        cmocka_unit_test_setup(test_summary_call_usage_kept, setup),
        cmocka_unit_test_setup(test_second_compression_keeps_the_head, setup),
        cmocka_unit_test_setup(test_continuation_blank_request_and_images,
                               setup),
        cmocka_unit_test_setup(test_boundaries_parallel_calls_and_orphans,
                               setup),
        cmocka_unit_test_setup(test_fewer_than_4_unchanged_without_call, setup),
        cmocka_unit_test_setup(test_empty_middle_unchanged, setup),
        cmocka_unit_test_setup(test_top_never_below_minimum, setup),
        cmocka_unit_test_setup(test_short_latest_request_moves_to_bottom,
                               setup),
        cmocka_unit_test_setup(test_long_latest_request_goes_in_full, setup),
        cmocka_unit_test_setup(test_request_parts_in_order, setup),
        cmocka_unit_test_setup(test_earlier_snapshot_in_text, setup),
        cmocka_unit_test_setup(test_rendering, setup),
        cmocka_unit_test_setup(test_prompt_through_port_fs, setup),
        cmocka_unit_test_setup(test_failures_leave_history_unchanged, setup),
        cmocka_unit_test_setup(test_no_resolver_is_unavailable, setup),
        cmocka_unit_test_setup(test_answer_larger_than_buffer, setup),
        cmocka_unit_test_setup(test_one_shot, setup),
        cmocka_unit_test_setup(test_one_shot_too_few_and_failures, setup),
        cmocka_unit_test_setup(test_before_send, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else

static void test_left_out(void **state) { (void)state; }

int main(void) {
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_left_out)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#endif
