/*
 * Corpus test: every *.jsonl file of the real-transcript corpus
 * (directory $CTXC_CORPUS; the build passes a default) is
 *   - imported (entry count == number of non-blank lines),
 *   - exported, re-imported into a second history and exported again, and
 *     the two exports must be byte-equal (fmt is idempotent),
 *   - checked against the corpus README's claims: every tool_call id is
 *     unique and answered by a later tool_response, and no tool_response
 *     lacks an earlier tool_call.
 * One cmocka test per file. Without a corpus the test exits 77 (skipped).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"

#define MAX_FILES 64
#define SKIP_STATUS 77

/* --- Storage -------------------------------------------------------------- */

CTXC_HISTORY_DEFINE_DEFAULT(hist_a);
CTXC_HISTORY_DEFINE_DEFAULT(hist_b);
static ctxc_import_t imp;

/* The corpus file, and two exports. An export escapes text (e.g. "\n"
 * becomes two bytes), so it may be larger than the arena it came from. */
#define FILE_CAP ((size_t)CTXC_CFG_HISTORY_ARENA_BYTES * 2u)
static char file_buf[FILE_CAP];
static char export_a[FILE_CAP];
static char export_b[FILE_CAP];

typedef struct {
    char *buf;
    size_t cap;
    size_t len;
    bool overflow;
} sink_t;

static ctxc_status_t sink_write(void *user, const char *data, size_t len) {
    sink_t *s = user;
    if (len > s->cap - s->len) {
        s->overflow = true;
        return CTXC_E_NO_SPACE;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    return CTXC_OK;
}

/* --- Helpers -------------------------------------------------------------- */

static size_t load_file(const char *path) {
    FILE *fp = fopen(path, "rb");
    size_t len = 0;
    if (fp == NULL) {
        fail_msg("cannot open %s: %s", path, strerror(errno));
    }
    for (;;) {
        size_t n = fread(file_buf + len, 1, FILE_CAP - len, fp);
        len += n;
        if (n == 0) {
            break;
        }
        if (len == FILE_CAP) {
            fclose(fp);
            fail_msg("%s is larger than the test buffer (%zu bytes)", path,
                     FILE_CAP);
        }
    }
    if (ferror(fp)) {
        fclose(fp);
        fail_msg("read error on %s", path);
    }
    fclose(fp);
    return len;
}

static size_t count_nonblank_lines(const char *buf, size_t len) {
    size_t n = 0;
    bool blank = true;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n') {
            n += blank ? 0u : 1u;
            blank = true;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            blank = false;
        }
    }
    return n + (blank ? 0u : 1u);
}

static void import_or_fail(ctxc_history_t *h, const char *what,
                           const char *text, size_t len) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_history_clear(h);
    if (ctxc_import_text(&imp, h, text, len, CTXC_FORMAT_AUTO, &err) !=
        CTXC_OK) {
        fail_msg("%s:%u: %s (%s)", what, (unsigned)err.line,
                 ctxc_error_message(&err), ctxc_status_name(err.status));
    }
}

static size_t export_or_fail(const ctxc_history_t *h, const char *what,
                             char *buf) {
    ctxc_error_t err;
    sink_t sink = {buf, FILE_CAP, 0, false};
    memset(&err, 0, sizeof err);
    if (ctxc_export(h, sink_write, &sink, &err) != CTXC_OK) {
        fail_msg("%s: export failed: %s", what,
                 sink.overflow ? "larger than the test buffer"
                               : ctxc_error_message(&err));
    }
    return sink.len;
}

static bool str_eq(ctxc_str_t a, ctxc_str_t b) {
    return a.ptr != NULL && b.ptr != NULL && a.len == b.len &&
           (a.len == 0 || memcmp(a.ptr, b.ptr, a.len) == 0);
}

/* Position of a block: entry index and block index within the entry. */
typedef struct {
    size_t entry, block;
} pos_t;

static bool pos_before(pos_t a, pos_t b) {
    return a.entry < b.entry || (a.entry == b.entry && a.block < b.block);
}

/* Counts the blocks of type `want` (tool_call: id, tool_response: callId)
 * whose id equals `id` and that lie after (after = true) or before `at`. */
static size_t count_matches(const ctxc_history_t *h, ctxc_block_type_t want,
                            ctxc_str_t id, pos_t at, bool after) {
    size_t n = 0, count = ctxc_history_count(h);
    for (size_t i = 0; i < count; i++) {
        ctxc_entry_t e;
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
        for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
            pos_t p = {i, k};
            ctxc_str_t bid;
            if (b.type != want) {
                continue;
            }
            if (after ? !pos_before(at, p) : !pos_before(p, at)) {
                continue;
            }
            bid = want == CTXC_BLOCK_TOOL_CALL ? b.u.tool_call.id
                                               : b.u.tool_response.call_id;
            if (str_eq(bid, id)) {
                n++;
            }
        }
    }
    return n;
}

static void check_pairing(const ctxc_history_t *h, const char *name) {
    size_t count = ctxc_history_count(h);
    size_t calls = 0, responses = 0;
    for (size_t i = 0; i < count; i++) {
        ctxc_entry_t e;
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
        for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
            pos_t p = {i, k};
            if (b.type == CTXC_BLOCK_TOOL_CALL) {
                ctxc_str_t id = b.u.tool_call.id;
                calls++;
                if (count_matches(h, CTXC_BLOCK_TOOL_RESPONSE, id, p, true) !=
                    1) {
                    fail_msg("%s: entry %zu: tool_call %.*s is not answered "
                             "by exactly one later tool_response",
                             name, i, (int)id.len, id.ptr);
                }
                if (count_matches(h, CTXC_BLOCK_TOOL_CALL, id, p, true) != 0) {
                    fail_msg("%s: entry %zu: tool_call id %.*s is not unique",
                             name, i, (int)id.len, id.ptr);
                }
            } else if (b.type == CTXC_BLOCK_TOOL_RESPONSE) {
                ctxc_str_t id = b.u.tool_response.call_id;
                responses++;
                if (count_matches(h, CTXC_BLOCK_TOOL_CALL, id, p, false) == 0) {
                    fail_msg("%s: entry %zu: tool_response %.*s has no "
                             "earlier tool_call",
                             name, i, (int)id.len, id.ptr);
                }
            }
        }
    }
    assert_int_equal(calls, responses);
}

static const char *base_name(const char *path) {
    const char *s = strrchr(path, '/');
    return s != NULL ? s + 1 : path;
}

/* --- The test ------------------------------------------------------------- */

static void test_corpus_file(void **state) {
    const char *path = *state;
    const char *name = base_name(path);
    size_t len, lines, len_a, len_b;

    len = load_file(path);
    lines = count_nonblank_lines(file_buf, len);

    import_or_fail(&hist_a, name, file_buf, len);
    assert_int_equal(ctxc_history_count(&hist_a), lines);
    check_pairing(&hist_a, name);
    /* the library's statistics agree with the independent check above */
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist_a, &st);
    assert_int_equal(st.entries, lines);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
    assert_int_equal(st.tool_calls, st.tool_responses);

    len_a = export_or_fail(&hist_a, name, export_a);
    assert_int_equal(count_nonblank_lines(export_a, len_a), lines);

    import_or_fail(&hist_b, "re-import", export_a, len_a);
    assert_int_equal(ctxc_history_count(&hist_b), lines);
    len_b = export_or_fail(&hist_b, "re-export", export_b);

    if (len_a != len_b || memcmp(export_a, export_b, len_a) != 0) {
        size_t i = 0;
        while (i < len_a && i < len_b && export_a[i] == export_b[i]) {
            i++;
        }
        fail_msg("%s: fmt is not idempotent: exports differ at byte %zu "
                 "(lengths %zu and %zu)",
                 name, i, len_a, len_b);
    }
    assert_int_equal(ctxc_history_tokens_estimated(&hist_a),
                     ctxc_history_tokens_estimated(&hist_b));
}

/* --- Discovery ------------------------------------------------------------ */

static char paths[MAX_FILES][4096];

static int cmp_str(const void *a, const void *b) {
    return strcmp((const char *)a, (const char *)b);
}

static bool ends_with(const char *s, const char *suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* Fills `paths` with the *.jsonl files of `dir`, sorted. Returns how many;
 * 0 when the directory cannot be read. */
static size_t find_files(const char *dir) {
    DIR *d = opendir(dir);
    size_t n = 0;
    struct dirent *de;
    char names[MAX_FILES][256];

    if (d == NULL) {
        return 0;
    }
    while ((de = readdir(d)) != NULL) {
        if (!ends_with(de->d_name, ".jsonl") || de->d_name[0] == '.') {
            continue;
        }
        if (n == MAX_FILES) {
            fprintf(stderr, "corpus: more than %d files, the rest ignored\n",
                    MAX_FILES);
            break;
        }
        if (strlen(de->d_name) >= sizeof names[0]) {
            continue;
        }
        snprintf(names[n], sizeof names[n], "%s", de->d_name);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    for (size_t i = 0; i < n; i++) {
        snprintf(paths[i], sizeof paths[i], "%s/%s", dir, names[i]);
    }
    return n;
}

int main(void) {
    static struct CMUnitTest tests[MAX_FILES];
    const char *dir = getenv("CTXC_CORPUS");
    size_t n;

#ifdef CTXC_CORPUS_DEFAULT
    if (dir == NULL || dir[0] == '\0') {
        dir = CTXC_CORPUS_DEFAULT;
    }
#endif
    if (dir == NULL || dir[0] == '\0') {
        printf("corpus absent: CTXC_CORPUS is not set (set it to a "
               "directory of *.jsonl agent sessions; docs/testing.md, \"The "
               "corpus\", says how to get one)\n");
        return SKIP_STATUS;
    }
    n = find_files(dir);
    if (n == 0) {
        printf("corpus absent: no *.jsonl file in %s (set CTXC_CORPUS to a "
               "directory of *.jsonl agent sessions; docs/testing.md, \"The "
               "corpus\", says how to get one)\n",
               dir);
        return SKIP_STATUS;
    }

    for (size_t i = 0; i < n; i++) {
        const struct CMUnitTest t =
            cmocka_unit_test_prestate(test_corpus_file, paths[i]);
        tests[i] = t;
        tests[i].name = base_name(paths[i]); /* one test per file name */
    }
    return _cmocka_run_group_tests("corpus", tests, n, NULL, NULL);
}
