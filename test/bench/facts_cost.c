/*
 * facts_cost: the fact check of an LLM summary on the review's worst case
 * (issue 41, review item 4): 2400 backticked identifiers in the summarised
 * range and a crafted 60 KB answer that holds none of them but their long
 * common prefix everywhere (the case that made a naive search quadratic).
 * One one-shot compression through the session with a fake model, with
 * compression.factCheck off and append, then append again with an answer
 * that also holds every byte pair of the identifiers (what defeats the
 * check's pair filter); prints the times (a benchmark: nothing is
 * asserted). Under callgrind: `valgrind --tool=callgrind
 * test/bench/facts_cost append` counts the instructions.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ctxc/ctxc.h"

#define IDS 2400
#define PER_MSG 24
#define ANSWER 61440

CTXC_HISTORY_DEFINE(hist, 512, 1u << 20);
CTXC_WORK_DEFINE(work, 512, 262144);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static char answer[ANSWER + 64];

/* an identifier: a 40-byte common prefix and its number */
#define PREFIX "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

static ctxc_status_t fake_complete(const ctxc_llm_t *llm,
                                   const ctxc_llm_request_t *req, char *out,
                                   size_t cap, size_t *len,
                                   ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    (void)llm, (void)req, (void)usage;
    size_t n = strlen(answer);
    if (n + 1 > cap) {
        return ctxc_error_set(err, CTXC_E_TOO_LARGE, "answer buffer %zu", cap);
    }
    memcpy(out, answer, n + 1);
    *len = n;
    return CTXC_OK;
}

static const ctxc_llm_t fake = {fake_complete, NULL, "fake", "fake-1",
                                NULL,          NULL, NULL,   NULL};

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user, (void)profile, (void)err;
    *llm = &fake;
    return CTXC_OK;
}

static void add(ctxc_speaker_t sp, const char *text) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(text);
    ctxc_entry_in_t in = {sp, &b, 1, CTXC_STR_ABSENT};
    ctxc_error_t err;
    if (ctxc_history_append(&hist, &in, &err) != CTXC_OK) {
        fprintf(stderr, "append: %s\n", err.message);
    }
}

static double run(const char *mode) {
    static char text[PER_MSG * 64];
    ctxc_history_clear(&hist);
    for (int m = 0; m < IDS / PER_MSG; m++) {
        size_t o = 0;
        for (int i = 0; i < PER_MSG; i++) {
            o += (size_t)snprintf(text + o, sizeof text - o,
                                  "`" PREFIX "%04d` ", m * PER_MSG + i);
        }
        add(CTXC_SPEAKER_HUMAN, text);
        add(CTXC_SPEAKER_AI, "noted");
    }
    for (int i = 0; i < 10; i++) { /* the kept tail */
        add(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, "later words");
    }
    ctxc_settings_init(&set, NULL);
    ctxc_error_t err;
    (void)ctxc_settings_set(&set, "context-limit", "10000000", &err);
    (void)ctxc_settings_set(&set, "compression.strategy", "one-shot", &err);
    (void)ctxc_settings_set(&set, "compression.factCheck", mode, &err);
    if (ctxc_session_init(&sess, &hist, &work, &set, &err) != CTXC_OK) {
        fprintf(stderr, "init: %s\n", err.message);
        return -1;
    }
    ctxc_session_set_llm_resolver(&sess, resolve, NULL);
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ctxc_status_t st = ctxc_session_compress(&sess, &err);
    clock_gettime(CLOCK_MONOTONIC, &b);
    if (st != CTXC_OK) {
        fprintf(stderr, "compress (%s): %s\n", mode, err.message);
    }
    printf("factCheck %-6s: %8.3f s, anchors missing %zu, added %zu\n", mode,
           (double)(b.tv_sec - a.tv_sec) +
               (double)(b.tv_nsec - a.tv_nsec) / 1e9,
           (size_t)sess.last_compress.anchors_missing,
           (size_t)sess.last_compress.anchors_added);
    ctxc_session_deinit(&sess);
    return 0;
}

int main(int argc, char **argv) {
    /* the crafted answer: the identifiers' prefix, over and over */
    memcpy(answer, "<state_snapshot>", 16);
    memset(answer + 16, 'a', ANSWER - 40);
    strcpy(answer + ANSWER - 24, "</state_snapshot>");
    if (argc > 1) {
        return run(argv[1]) < 0;
    }
    if (run("off") < 0 || run("append") < 0) {
        return 1;
    }
    /* the worst case for the pair filter: the answer also holds every
     * byte pair of the identifiers (a0..a9, 00..99), so each search runs
     * over the whole answer */
    char *p = answer + ANSWER - 24 - 10 * 3 - 100 * 3;
    for (int i = 0; i < 10; i++, p += 3) {
        p[0] = 'a', p[1] = (char)('0' + i), p[2] = ' ';
    }
    for (int i = 0; i < 100; i++, p += 3) {
        p[0] = (char)('0' + i / 10), p[1] = (char)('0' + i % 10), p[2] = ' ';
    }
    printf("with every pair of the identifiers in the answer:\n");
    return run("append") < 0;
}
