/*
 * Fuzz target: an import that fails or is aborted while a compression job
 * of a session runs over the same history (issue 41 item 1).
 *
 * Input: byte 0 picks the schedule (bit 0: the job starts before the
 * import begins, else after the first imported line; bits 1-2: the model's
 * steps before it answers; bits 3-5: polls of the job between imported
 * lines; bit 6: the job is cancelled instead of polled to its end), the
 * rest is JSONL (interchange format), imported line by line after a fixed
 * history of 20 entries; the import is aborted after its last line (or
 * rolls back at its first bad one).
 *
 * Invariants: after the abort and the job's end, the history is either the
 * fixed history as it was or the job's result over it (computed on a copy
 * without an import) - never an imported entry, never an entry lost or
 * doubled; the store agrees with itself (slots packed in order, the token
 * sum of its slots, an export that imports again to the same bytes); no
 * hold is left.
 */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#define ENTRIES 256
CTXC_HISTORY_DEFINE(h, ENTRIES, 1u << 18);
CTXC_HISTORY_DEFINE(h2, ENTRIES, 1u << 18);
CTXC_WORK_DEFINE(work, ENTRIES, 1u << 15);
static ctxc_import_t imp;
static ctxc_settings_store_t set;
static ctxc_session_t s;
static fuzz_buf_t base, result, now, again;

/* ---- a model that answers after `steps` polls -----------------------------
 */

static int fk_steps, fk_stepped;
static char *fk_out;
static size_t fk_cap;
static const char ANSWER[] =
    "<state_snapshot>the job's summary</state_snapshot>";

static ctxc_status_t fk_start(const ctxc_llm_t *llm,
                              const ctxc_llm_request_t *req, char *out,
                              size_t cap, ctxc_error_t *err) {
    (void)llm;
    (void)req;
    (void)err;
    fk_out = out;
    fk_cap = cap;
    fk_stepped = 0;
    return CTXC_E_IN_PROGRESS;
}

static ctxc_status_t fk_step(const ctxc_llm_t *llm, size_t *len,
                             ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm;
    (void)usage;
    if (++fk_stepped <= fk_steps) {
        return CTXC_E_IN_PROGRESS;
    }
    if (sizeof ANSWER > fk_cap) {
        return ctxc_error_set(err, CTXC_E_NO_SPACE, "answer buffer");
    }
    memcpy(fk_out, ANSWER, sizeof ANSWER);
    *len = sizeof ANSWER - 1u;
    return CTXC_OK;
}

static void fk_cancel(const ctxc_llm_t *llm) { (void)llm; }

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

/* ---- the history ------------------------------------------------------------
 */

static void fixed_history(ctxc_history_t *hh) {
    ctxc_history_clear(hh);
    for (size_t i = 0; i < 20; i++) {
        char text[160];
        snprintf(text, sizeof text,
                 "message %zu one two three four five six seven eight nine "
                 "ten eleven twelve",
                 i);
        ctxc_block_t b = {.type = CTXC_BLOCK_TEXT};
        b.u.text.text = ctxc_str(text);
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b,
                              1, CTXC_STR_ABSENT};
        ctxc_error_t err;
        if (ctxc_history_append(hh, &in, &err) != CTXC_OK) {
            fuzz_fail("fixed history: %s", err.message);
        }
    }
}

static void session_on(ctxc_history_t *hh) {
    ctxc_error_t err;
    ctxc_settings_init(&set, NULL);
    if (ctxc_settings_set(&set, "context-limit", "100000", &err) != CTXC_OK ||
        ctxc_settings_set(&set, "compression.strategy", "middle-out", &err) !=
            CTXC_OK ||
        ctxc_session_init(&s, hh, &work, &set, &err) != CTXC_OK) {
        fuzz_fail("session: %s", err.message);
    }
    ctxc_session_set_llm_resolver(&s, resolve, NULL);
}

static ctxc_status_t poll_to_end(void) {
    ctxc_error_t err;
    ctxc_status_t st = CTXC_E_IN_PROGRESS;
    for (int i = 0; i < 64 && st == CTXC_E_IN_PROGRESS; i++) {
        st = ctxc_session_poll(&s, &err);
    }
    if (st == CTXC_E_IN_PROGRESS) {
        fuzz_fail("the job never ended");
    }
    return st;
}

/* The store agrees with itself. */
static void check_store(void) {
    size_t at = 0;
    uint64_t tokens = 0;
    for (size_t i = 0; i < h.count; i++) {
        if (h.slots[i].offset != at) {
            fuzz_fail("slot %zu at %u, expected %zu", i,
                      (unsigned)h.slots[i].offset, at);
        }
        at += h.slots[i].size;
        tokens += h.slots[i].tokens;
    }
    if (at != h.used || tokens != h.token_sum) {
        fuzz_fail("used %zu (slots %zu), token sum %llu (slots %llu)", h.used,
                  at, (unsigned long long)h.token_sum,
                  (unsigned long long)tokens);
    }
    fuzz_export(&h, &now);
    ctxc_error_t err;
    ctxc_history_clear(&h2);
    if (ctxc_import_text(&imp, &h2, now.p, now.len, CTXC_FORMAT_ICONTENT,
                         &err) != CTXC_OK) {
        fuzz_fail("the history after the abort does not import: %s",
                  err.message);
    }
    fuzz_export(&h2, &again);
    fuzz_same(&now, &again, "export after the abort is not byte-stable");
}

/* Line i of an export (its start and length); false past the end. */
static bool line_at(const fuzz_buf_t *b, size_t i, const char **p, size_t *n) {
    const char *at = b->p, *end = b->p + b->len;
    for (; i > 0 && at < end; i--) {
        const char *nl = memchr(at, '\n', (size_t)(end - at));
        at = nl != NULL ? nl + 1 : end;
    }
    if (at >= end) {
        return false;
    }
    const char *nl = memchr(at, '\n', (size_t)(end - at));
    *p = at;
    *n = (size_t)((nl != NULL ? nl : end) - at);
    return true;
}

/* A job's result over the fixed history whatever range it took: a prefix
 * of the fixed history's lines, two lines of its own (the summary and its
 * continuation), then a suffix of them; every fixed line once at most. */
static bool summary_of_base(const fuzz_buf_t *b) {
    const char *p, *q;
    size_t n, m, lines = 0;
    while (line_at(b, lines, &p, &n)) {
        lines++;
    }
    size_t k = 0; /* the prefix */
    while (k < lines && line_at(b, k, &p, &n) && line_at(&base, k, &q, &m) &&
           n == m && memcmp(p, q, n) == 0) {
        k++;
    }
    if (k + 2u > lines || !line_at(b, k, &p, &n) ||
        memmem(p, n, ANSWER, sizeof ANSWER - 1u) == NULL) {
        return false;
    }
    size_t tail = lines - k - 2u;
    if (k + tail >= 20u) {
        return false;
    }
    for (size_t i = 0; i < tail; i++) {
        if (!line_at(b, k + 2u + i, &p, &n) ||
            !line_at(&base, 20u - tail + i, &q, &m) || n != m ||
            memcmp(p, q, n) != 0) {
            return false;
        }
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    uint8_t cfg = data[0];
    bool job_first = (cfg & 1u) != 0;
    int steps = (int)((cfg >> 1) & 3u);
    unsigned polls = (cfg >> 3) & 7u;
    bool cancel = (cfg & 0x40u) != 0;
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    ctxc_error_t err;

    /* the job's result over the fixed history, without an import */
    fixed_history(&h);
    fuzz_export(&h, &base);
    session_on(&h);
    fk_steps = steps;
    if (ctxc_session_compress_start(&s, &err) != CTXC_OK) {
        fuzz_fail("job start: %s", err.message);
    }
    if (poll_to_end() != CTXC_OK) {
        fuzz_fail("the job failed without an import");
    }
    fuzz_export(&h, &result);
    ctxc_session_deinit(&s);

    /* the same with the import */
    fixed_history(&h);
    session_on(&h);
    fk_steps = steps;
    bool started = false, job_over_import = false;
    if (job_first) {
        started = ctxc_session_compress_start(&s, &err) == CTXC_OK;
    }
    if (ctxc_import_begin(&imp, &h, CTXC_FORMAT_ICONTENT, &err) != CTXC_OK) {
        fuzz_fail("import begin: %s", err.message);
    }
    size_t start = 0, lines = 0;
    while (start < len && imp.active) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - text) : len;
        ctxc_status_t st =
            ctxc_import_line(&imp, text + start, end - start, &err);
        fuzz_check_error(st, &err, "import line");
        lines++;
        if (!started && imp.active) {
            started = ctxc_session_compress_start(&s, &err) == CTXC_OK;
            job_over_import = started && h.frozen_ > 20;
        }
        for (unsigned p = 0; p < polls && ctxc_session_job_active(&s); p++) {
            fuzz_export(&h, &now);
            ctxc_status_t ps = ctxc_session_poll(&s, &err);
            if (ps == CTXC_E_BUSY && job_over_import && imp.active) {
                /* its plan would change imported entries: refused */
                fuzz_export(&h, &again);
                fuzz_same(&now, &again, "a refused job changed the history");
            } else if (ps != CTXC_OK && ps != CTXC_E_IN_PROGRESS) {
                fuzz_fail("poll during the import: %s", err.message);
            }
        }
        start = end + 1;
    }
    ctxc_import_abort(&imp); /* a no-op when a bad line rolled back */
    if (imp.active) {
        fuzz_fail("the import is still open after its abort");
    }
    if (cancel) {
        ctxc_session_compress_cancel(&s);
    } else if (ctxc_session_job_active(&s)) {
        ctxc_status_t st = poll_to_end();
        if (st != CTXC_OK && !(st == CTXC_E_CANCELLED && job_over_import)) {
            fuzz_fail("the job ended with %s after the abort",
                      ctxc_status_name(st));
        }
    }
    if (h.frozen_ != 0 || ctxc_session_job_active(&s)) {
        fuzz_fail("a hold is left after the job's end");
    }
    check_store();
    fuzz_export(&h, &now);
    bool same_base = now.len == base.len && memcmp(now.p, base.p, now.len) == 0;
    bool same_result =
        now.len == result.len && memcmp(now.p, result.p, now.len) == 0;
    if (!same_base && !same_result && !summary_of_base(&now)) {
        fuzz_fail("after the abort (%zu lines, job %s) the history is neither "
                  "the one before the import nor a summary over it",
                  lines, started ? "started" : "not started");
    }
    ctxc_session_deinit(&s);
    return 0;
}
