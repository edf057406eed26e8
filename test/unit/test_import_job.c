/*
 * An import that fails (ctxc_import_abort) while a compression job of a
 * session runs over the same history (issue 41 item 1): the abort removes
 * the import's entries and nothing else. The job's hold on its range
 * survives, a job that ended during the import keeps what it applied (no
 * entry lost or duplicated), and the store stays consistent (its
 * counters agree with its slots, its export re-imports to the same). A
 * fake model with the resumable form answers after a scripted number of
 * steps.
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

#if CTXC_CFG_STRATEGY_MIDDLE_OUT

CTXC_HISTORY_DEFINE(hist, 128, 65536);
CTXC_HISTORY_DEFINE(copy, 128, 65536);
CTXC_WORK_DEFINE(work, 128, 16384);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static ctxc_import_t imp;

/* ---- a model answering after `steps` polls ------------------------------ */

static struct {
    int steps, stepped;
    bool active;
    char *out;
    size_t cap;
} fk;

static const char ANSWER[] =
    "<state_snapshot>the job's summary</state_snapshot>";

static ctxc_status_t fk_start(const ctxc_llm_t *llm,
                              const ctxc_llm_request_t *req, char *out,
                              size_t cap, ctxc_error_t *err) {
    (void)llm;
    (void)req;
    (void)err;
    fk.active = true;
    fk.out = out;
    fk.cap = cap;
    return CTXC_E_IN_PROGRESS;
}

static ctxc_status_t fk_step(const ctxc_llm_t *llm, size_t *len,
                             ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm;
    (void)usage;
    (void)err;
    if (++fk.stepped <= fk.steps) {
        return CTXC_E_IN_PROGRESS;
    }
    fk.active = false;
    assert_true(sizeof ANSWER <= fk.cap);
    memcpy(fk.out, ANSWER, sizeof ANSWER);
    *len = sizeof ANSWER - 1u;
    return CTXC_OK;
}

static void fk_cancel(const ctxc_llm_t *llm) {
    (void)llm;
    fk.active = false;
}

static ctxc_status_t fk_complete(const ctxc_llm_t *llm,
                                 const ctxc_llm_request_t *req, char *out,
                                 size_t cap, size_t *len,
                                 ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm;
    (void)req;
    (void)out;
    (void)cap;
    (void)len;
    (void)usage;
    return ctxc_error_set(err, CTXC_E_INVALID_ARG, "steps only");
}

static const ctxc_llm_t stepping = {fk_complete, NULL,    "fake",    "fake-1",
                                    fk_start,    fk_step, fk_cancel, NULL};

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    (void)err;
    *llm = &stepping;
    return CTXC_OK;
}

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    memset(&fk, 0, sizeof fk);
    ctxc_settings_init(&set, NULL);
    t_set_uint(&set, "context-limit", 100000);
    t_set(&set, "compression.strategy", "middle-out");
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    ctxc_session_compress_cancel(&sess);
    ctxc_session_deinit(&sess);
    return 0;
}

#define FILLER                                                                 \
    " one two three four five six seven eight nine ten eleven twelve "         \
    "thirteen fourteen fifteen sixteen seventeen eighteen"

static const char *text(const char *tag, size_t i) {
    static char t[8][200];
    static unsigned k;
    char *p = t[k++ % 8];
    snprintf(p, 200, "%s %zu" FILLER, tag, i);
    return p;
}

static void alternating(size_t n) {
    for (size_t i = 0; i < n; i++) {
        t_add_text(&hist, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                   text("msg", i));
    }
}

/* The store agrees with itself: slots packed in order over `used` bytes,
 * the token sum is the sum of the slots', its export imports again to the
 * same text, and the pairing counts are those of the export. */
static void check_store(const ctxc_history_t *h) {
    size_t at = 0;
    uint64_t tokens = 0;
    for (size_t i = 0; i < h->count; i++) {
        assert_int_equal(h->slots[i].offset, at);
        at += h->slots[i].size;
        tokens += h->slots[i].tokens;
    }
    assert_int_equal(at, h->used);
    assert_int_equal(tokens, h->token_sum);
    static t_dump_t a, b;
    t_dump(h, &a);
    ctxc_error_t err;
    ctxc_history_clear(&copy);
    assert_int_equal(
        ctxc_import_text(&imp, &copy, a.buf, a.len, CTXC_FORMAT_AUTO, &err),
        CTXC_OK);
    t_dump(&copy, &b);
    assert_string_equal(a.buf, b.buf);
    ctxc_history_stats_t s1, s2;
    ctxc_history_stats(h, &s1);
    ctxc_history_stats(&copy, &s2);
    s1.tokens = s2.tokens = 0;
    assert_memory_equal(&s1, &s2, sizeof s1);
}

static void import_lines(size_t n) {
    static char line[400];
    ctxc_error_t err;
    for (size_t i = 0; i < n; i++) {
        snprintf(line, sizeof line,
                 "{\"speaker\":\"%s\",\"blocks\":[{\"type\":\"text\",\"text\":"
                 "\"%s\"}]}",
                 i % 2 ? "ai" : "human", text("imported", i));
        assert_int_equal(ctxc_import_line(&imp, line, strlen(line), &err),
                         CTXC_OK);
    }
}

/* A bad line: the import rolls back (ctxc_import_abort). */
static void import_fails(void) {
    ctxc_error_t err;
    static const char bad[] = "{\"speaker\":\"nobody\",\"blocks\":[]}";
    assert_int_equal(ctxc_import_line(&imp, bad, sizeof bad - 1u, &err),
                     CTXC_E_PARSE);
    assert_false(imp.active);
}

static ctxc_status_t poll_to_end(void) {
    ctxc_error_t err;
    ctxc_status_t st;
    int polls = 0;
    while ((st = ctxc_session_poll(&sess, &err)) == CTXC_E_IN_PROGRESS) {
        assert_true(++polls < 100);
    }
    return st;
}

/* An import that ends well, then a job over everything: it applies. */
static void import_lines_after_end(void) {
    ctxc_error_t err;
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    import_lines(16);
    assert_int_equal(ctxc_import_end(&imp, &err), CTXC_OK);
    fk.stepped = 0;
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    assert_int_equal(poll_to_end(), CTXC_OK);
    assert_string_equal(t_block_text(&hist, 4, 0), ANSWER);
    check_store(&hist);
}

/* 20 entries compressed by middle-out: 4 kept, the summary and its
 * continuation, then entries 16..19; exactly once each. */
static void assert_job_result(void) {
    assert_int_equal(ctxc_history_count(&hist), 10);
    for (size_t i = 0; i < 4; i++) {
        assert_string_equal(t_block_text(&hist, i, 0), text("msg", i));
        assert_string_equal(t_block_text(&hist, 6 + i, 0), text("msg", 16 + i));
    }
    assert_string_equal(t_block_text(&hist, 4, 0), ANSWER);
}

/* The job still runs when the import fails: its range stays held (an
 * edit of it is refused), the entries are those before the import, and
 * the job then ends with its plan applied over them. */
static void test_abort_while_the_job_runs(void **state) {
    (void)state;
    alternating(20);
    static t_snap_t before;
    t_snapshot(&hist, &before);
    fk.steps = 3;
    ctxc_error_t err;
    /* the import opens first, the job starts over the entries before it */
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    size_t held = hist.frozen_;
    assert_true(held > 0);
    import_lines(3);
    assert_int_equal(ctxc_history_count(&hist), 23);
    import_fails();
    /* entry by entry as before the import, and the same counters */
    t_assert_unchanged(&hist, &before);
    for (size_t i = 0; i < 20; i++) {
        assert_string_equal(t_block_text(&hist, i, 0), text("msg", i));
    }
    check_store(&hist);
    /* the hold is the job's: still there */
    assert_true(ctxc_session_job_active(&sess));
    assert_int_equal(hist.frozen_, held);
    assert_int_equal(ctxc_history_remove_range(&hist, 0, 1, &err), CTXC_E_BUSY);
    assert_int_equal(poll_to_end(), CTXC_OK);
    assert_job_result();
    assert_int_equal(hist.frozen_, 0);
    check_store(&hist);
    assert_int_equal(ctxc_session_check(&sess, &err), CTXC_OK);
}

/* The job ends (its plan applied) while the import is open, then the
 * import fails: what the job applied stays, the imported entries go,
 * nothing is duplicated, and no hold is left behind. */
static void test_abort_after_the_job_ended(void **state) {
    (void)state;
    alternating(20);
    fk.steps = 2;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    import_lines(2);
    assert_int_equal(poll_to_end(), CTXC_OK);
    /* the job's result, the two imported entries after it */
    assert_int_equal(ctxc_history_count(&hist), 12);
    assert_string_equal(t_block_text(&hist, 10, 0), text("imported", 0));
    import_lines(2);
    import_fails();
    assert_job_result();
    check_store(&hist);
    assert_int_equal(hist.frozen_, 0);
    assert_false(ctxc_session_job_active(&sess));
    /* no hold left: the whole history can change */
    assert_int_equal(ctxc_history_remove_range(&hist, 0, 1, &err), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 9);
    assert_int_equal(ctxc_session_check(&sess, &err), CTXC_OK);
}

/* A job started during the import over imported entries is cancelled by
 * the abort (as by a clear): its next poll says so and changes nothing;
 * the entries are those before the import. */
static void test_abort_cancels_a_job_over_imported_entries(void **state) {
    (void)state;
    ctxc_error_t err;
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    import_lines(20);
    fk.steps = 2;
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    assert_true(hist.frozen_ > 0);
    import_fails();
    assert_int_equal(ctxc_history_count(&hist), 0);
    assert_int_equal(hist.frozen_, 0);
    assert_int_equal(poll_to_end(), CTXC_E_CANCELLED);
    assert_int_equal(ctxc_history_count(&hist), 0);
    check_store(&hist);
}

/* A job started during the import over imported entries that ends
 * before the import does: its plan would change imported entries, so it
 * is refused (CTXC_E_BUSY, nothing changed); the abort then gives back
 * the history as it was before the import. */
static void test_a_job_over_imported_entries_cannot_apply(void **state) {
    (void)state;
    alternating(4);
    static t_snap_t before;
    t_snapshot(&hist, &before);
    ctxc_error_t err;
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    import_lines(16);
    fk.steps = 1;
    assert_int_equal(ctxc_session_compress_start(&sess, &err), CTXC_OK);
    assert_true(hist.frozen_ > 4);
    static t_dump_t mid, now;
    t_dump(&hist, &mid);
    assert_int_equal(poll_to_end(), CTXC_E_BUSY);
    t_dump(&hist, &now);
    assert_string_equal(now.buf, mid.buf);
    assert_int_equal(hist.frozen_, 0);
    import_fails();
    t_assert_unchanged(&hist, &before);
    check_store(&hist);
    /* the import ended: a compression applies again */
    import_lines_after_end();
}

/* Without a job, an abort gives back the history byte for byte, also
 * after ctxc_import_text lent the store an id index. */
static void test_abort_alone_is_exact(void **state) {
    (void)state;
    alternating(6);
    static t_snap_t before;
    t_snapshot(&hist, &before);
    static const char text2[] = "{\"speaker\":\"human\",\"blocks\":[{\"type\":"
                                "\"text\",\"text\":\"a\"}]}\n"
                                "{\"speaker\":\"nobody\",\"blocks\":[]}\n";
    ctxc_error_t err;
    assert_int_equal(ctxc_import_text(&imp, &hist, text2, sizeof text2 - 1u,
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_E_PARSE);
    t_assert_unchanged(&hist, &before);
    assert_int_equal(hist.arena_bytes, 65536);
    check_store(&hist);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_abort_while_the_job_runs, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_abort_after_the_job_ended, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_abort_cancels_a_job_over_imported_entries, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_a_job_over_imported_entries_cannot_apply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_abort_alone_is_exact, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}

#else
int main(void) { return 0; }
#endif
