/*
 * Benchmark of the non-LLM compression steps (not a test: nothing about
 * times is asserted). Built as build/host/test/bench/bench_strategies and
 * run by `make bench`.
 *
 * For every *.jsonl file of $CTXC_CORPUS (default <repo>/../shared/corpus;
 * without a corpus: the shipped example session) and for two inputs made
 * from it,
 *   1x   the file as is,
 *   10x  the file's entries appended 10 times, tool_call ids and
 *        tool_response callIds suffixed "~k" in copy k so pairs stay unique,
 * it times with CLOCK_MONOTONIC
 *   - the high-density density step alone (ctxc_session_optimize, default
 *     density settings),
 *   - high-density compress, on the output of the density step,
 *   - top-down-truncation compress,
 * with the context limit at 50% of the input's token estimate (so both
 * strategies really cut) and the default threshold. Each measurement is
 * repeated (7 times for 1x, 3 for 10x); the history is restored from a
 * pristine copy with memcpy before every run (not timed) and the median is
 * reported, next to the median of that memcpy itself as a baseline.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctxc/ctxc.h"

#ifndef CTXC_SOURCE_DIR
#error "the build passes CTXC_SOURCE_DIR (the repository root)"
#endif

#define MAX_ENTRIES 16384
#define ARENA_BYTES (24u * 1024u * 1024u)
#define SCRATCH_BYTES (8u * 1024u * 1024u)
#define COPIES 10
#define REPS_1X 7
#define REPS_10X 3
#define MAX_REPS 7
#define MAX_FILES 128
#define MAX_ROWS (MAX_FILES * 2 * 4)

/* --- Storage (two histories at most) ---------------------------------------- */

/* The pristine input of the current measurement; restored into `work_hist`
 * before every run. */
CTXC_HISTORY_DEFINE(pristine, MAX_ENTRIES, ARENA_BYTES);
/* The history the operations run on (also the 1x source of the 10x input). */
CTXC_HISTORY_DEFINE(work_hist, MAX_ENTRIES, ARENA_BYTES);
CTXC_WORK_DEFINE(work, MAX_ENTRIES, SCRATCH_BYTES);
static ctxc_import_t importer;

/* Blocks of one entry copy and the renamed ids they point to. */
static ctxc_block_t copy_blocks[65535];
static char id_pool[1u << 20];

/* --- Results ---------------------------------------------------------------- */

typedef struct {
    char file[96];
    const char *size;      /* "1x" / "10x" */
    const char *operation;
    size_t entries_before, entries_after;
    uint64_t tokens_before, tokens_after;
    double median_s;
    double bytes;          /* arena bytes of the input of the operation */
    double baseline_s;     /* memcpy of the input (file-level), median */
    size_t peak_bytes;
} row_t;

static row_t rows[MAX_ROWS];
static size_t n_rows;

/* --- Helpers ---------------------------------------------------------------- */

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y ? 1 : 0;
}

static double median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2.0;
}

static void die(const char *what, const ctxc_error_t *err) {
    fprintf(stderr, "bench_strategies: %s: %s (%s)\n", what,
            ctxc_error_message(err), ctxc_status_name(err->status));
    exit(1);
}

/* Copies the entries of `src` (slots, used arena bytes, counters) into
 * `dst`, which has the same capacity: the restore between runs. */
static void restore(ctxc_history_t *dst, const ctxc_history_t *src) {
    memcpy(dst->slots, src->slots, src->count * sizeof *src->slots);
    memcpy(dst->arena, src->arena, src->used);
    dst->count = src->count;
    dst->used = src->used;
    dst->token_sum = src->token_sum;
    dst->anchor_delta = src->anchor_delta;
    dst->hwm_count = src->count; /* the high-water marks restart here */
    dst->hwm_used = src->used;
}

static void reset_hwm(ctxc_history_t *h) {
    h->hwm_count = h->count;
    h->hwm_used = h->used;
}

static char *load_file(const char *path, size_t *len) {
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fprintf(stderr, "bench_strategies: cannot open %s: %s\n", path,
                strerror(errno));
        exit(1);
    }
    size_t cap = 1u << 20, n = 0;
    char *buf = malloc(cap);
    for (;;) {
        if (buf == NULL) {
            fprintf(stderr, "bench_strategies: out of memory reading %s\n", path);
            exit(1);
        }
        n += fread(buf + n, 1, cap - n, fp);
        if (n < cap) {
            break;
        }
        cap *= 2;
        buf = realloc(buf, cap);
    }
    if (ferror(fp)) {
        fprintf(stderr, "bench_strategies: read error on %s\n", path);
        exit(1);
    }
    fclose(fp);
    *len = n;
    return buf;
}

/* `dst` <- `src` appended COPIES times, ids suffixed "~k" in copy k. */
static void build_10x(ctxc_history_t *dst, const ctxc_history_t *src) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_history_clear(dst);
    for (unsigned k = 0; k < COPIES; k++) {
        for (size_t i = 0; i < ctxc_history_count(src); i++) {
            ctxc_entry_t e;
            if (ctxc_history_get(src, i, &e) != CTXC_OK) {
                fprintf(stderr, "bench_strategies: entry %zu vanished\n", i);
                exit(1);
            }
            size_t nb = 0, pool = 0;
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            while (ctxc_entry_next_block(&e, &cur, &b)) {
                ctxc_str_t *id = b.type == CTXC_BLOCK_TOOL_CALL ? &b.u.tool_call.id
                                 : b.type == CTXC_BLOCK_TOOL_RESPONSE
                                     ? &b.u.tool_response.call_id
                                     : NULL;
                if (id != NULL && id->ptr != NULL) {
                    int w = snprintf(id_pool + pool, sizeof id_pool - pool,
                                     "%.*s~%u", (int)id->len, id->ptr, k);
                    if (w < 0 || (size_t)w >= sizeof id_pool - pool) {
                        fprintf(stderr, "bench_strategies: entry %zu: ids "
                                        "larger than the id pool\n", i);
                        exit(1);
                    }
                    id->ptr = id_pool + pool;
                    id->len = (size_t)w;
                    pool += (size_t)w + 1;
                }
                copy_blocks[nb++] = b;
            }
            ctxc_entry_in_t in = {e.speaker, copy_blocks, nb, e.metadata};
            if (ctxc_history_append(dst, &in, &err) != CTXC_OK) {
                die("building the 10x input", &err);
            }
        }
    }
}

/* --- Measurements ------------------------------------------------------------ */

typedef enum { OP_DENSITY, OP_HD_COMPRESS, OP_TD_COMPRESS } op_t;

static const char *const op_names[] = {
    "high-density: density step",
    "high-density: compress (after density step)",
    "top-down-truncation: compress",
};

static row_t *new_row(const char *file, const char *size) {
    if (n_rows == MAX_ROWS) {
        fprintf(stderr, "bench_strategies: more than %d results\n", MAX_ROWS);
        exit(1);
    }
    row_t *r = &rows[n_rows++];
    memset(r, 0, sizeof *r);
    snprintf(r->file, sizeof r->file, "%s", file);
    r->size = size;
    return r;
}

/* Median time of restoring the input (memcpy of slots + used arena). */
static double measure_memcpy(unsigned reps) {
    double t[MAX_REPS];
    for (unsigned r = 0; r < reps; r++) {
        double t0 = now_s();
        restore(&work_hist, &pristine);
        t[r] = now_s() - t0;
    }
    return median(t, reps);
}

static void measure(const char *file, const char *size, op_t op,
                    uint64_t context_limit, unsigned reps, double baseline) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    /* the settings the session reads (defaults but strategy and limit);
     * static: the store is large */
    static ctxc_settings_store_t set;
    ctxc_settings_init(&set, NULL);
    char limit_text[24];
    snprintf(limit_text, sizeof limit_text, "%" PRIu64, context_limit);
    if (ctxc_settings_set(&set, "compression.strategy",
                          op == OP_TD_COMPRESS ? "top-down-truncation"
                                               : "high-density",
                          &err) != CTXC_OK ||
        ctxc_settings_set(&set, "context-limit", limit_text, &err) != CTXC_OK) {
        die("settings", &err);
    }

    row_t *row = new_row(file, size);
    row->operation = op_names[op];
    row->baseline_s = baseline;
    double t[MAX_REPS];
    for (unsigned r = 0; r < reps; r++) {
        restore(&work_hist, &pristine); /* not timed */
        ctxc_session_t s;
        if (ctxc_session_init(&s, &work_hist, &work, &set, &err) != CTXC_OK) {
            die("session init", &err);
        }
        if (op == OP_HD_COMPRESS && ctxc_session_optimize(&s, &err) != CTXC_OK) {
            die(file, &err);
        }
        size_t entries_before = ctxc_history_count(&work_hist);
        uint64_t tokens_before = ctxc_history_tokens(&work_hist);
        size_t bytes_before = work_hist.used;
        reset_hwm(&work_hist);

        double t0 = now_s();
        ctxc_status_t st = op == OP_DENSITY ? ctxc_session_optimize(&s, &err)
                                            : ctxc_session_compress(&s, &err);
        t[r] = now_s() - t0;
        if (st != CTXC_OK) {
            fprintf(stderr, "bench_strategies: %s %s, %s:\n", file, size,
                    op_names[op]);
            die("operation failed", &err);
        }
        ctxc_history_usage_t u;
        ctxc_history_usage(&work_hist, &u);
        row->entries_before = entries_before;
        row->tokens_before = tokens_before;
        row->bytes = (double)bytes_before;
        row->entries_after = ctxc_history_count(&work_hist);
        row->tokens_after = ctxc_history_tokens(&work_hist);
        if (u.bytes_hwm > row->peak_bytes) {
            row->peak_bytes = u.bytes_hwm;
        }
    }
    row->median_s = median(t, reps);
}

static void bench_input(const char *file, const char *size, unsigned reps) {
    uint64_t tokens = ctxc_history_tokens(&pristine);
    uint64_t limit = tokens / 2 > 0 ? tokens / 2 : 1;
    double t_start = now_s();
    double baseline = measure_memcpy(reps);

    row_t *b = new_row(file, size);
    b->operation = "memcpy baseline (restore)";
    b->entries_before = b->entries_after = ctxc_history_count(&pristine);
    b->tokens_before = b->tokens_after = tokens;
    b->median_s = b->baseline_s = baseline;
    b->bytes = (double)pristine.used;
    b->peak_bytes = pristine.used;

    measure(file, size, OP_DENSITY, limit, reps, baseline);
    measure(file, size, OP_HD_COMPRESS, limit, reps, baseline);
    measure(file, size, OP_TD_COMPRESS, limit, reps, baseline);
    fprintf(stderr, "bench: %-40s %-3s %5zu entries %9" PRIu64
                    " tokens %10zu bytes, context limit %" PRIu64 ": %.2f s\n",
            file, size, ctxc_history_count(&pristine), tokens, pristine.used,
            limit, now_s() - t_start);
}

static void bench_file(const char *dir, const char *name) {
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >= sizeof path) {
        fprintf(stderr, "bench_strategies: path too long: %s/%s\n", dir, name);
        exit(1);
    }
    size_t len;
    char *text = load_file(path, &len);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);

    /* 1x: the file in `pristine`. */
    ctxc_history_clear(&pristine);
    if (ctxc_import_text(&importer, &pristine, text, len, CTXC_FORMAT_AUTO,
                         &err) != CTXC_OK) {
        fprintf(stderr, "bench_strategies: %s:%u: %s\n", path,
                (unsigned)err.line, ctxc_error_message(&err));
        exit(1);
    }
    free(text);
    bench_input(name, "1x", REPS_1X);

    /* 10x: the 1x input moves to `work_hist`, the 10x one is built in
     * `pristine`. */
    restore(&work_hist, &pristine);
    build_10x(&pristine, &work_hist);
    bench_input(name, "10x", REPS_10X);
}

static int cmp_str(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted *.jsonl names of `dir` into names[]; -1 when `dir` cannot be read. */
static int list_corpus(const char *dir, char **names, int cap) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    int n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 6 && strcmp(de->d_name + l - 6, ".jsonl") == 0 && n < cap) {
            names[n] = malloc(l + 1);
            if (names[n] == NULL) {
                break;
            }
            memcpy(names[n++], de->d_name, l + 1);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp_str);
    return n;
}

/* --- Report ------------------------------------------------------------------ */

static void print_table(void) {
    printf("| file | size | entries | tokens before | operation | tokens after "
           "| median ms | MB/s | ratio to memcpy | peak arena bytes |\n");
    printf("|---|---|---:|---:|---|---:|---:|---:|---:|---:|\n");
    for (size_t i = 0; i < n_rows; i++) {
        const row_t *r = &rows[i];
        char entries[48];
        if (r->entries_before == r->entries_after) {
            snprintf(entries, sizeof entries, "%zu", r->entries_before);
        } else {
            snprintf(entries, sizeof entries, "%zu → %zu", r->entries_before,
                     r->entries_after);
        }
        double mbs = r->median_s > 0 ? r->bytes / 1e6 / r->median_s : 0.0;
        double ratio = r->baseline_s > 0 ? r->median_s / r->baseline_s : 0.0;
        printf("| %s | %s | %s | %" PRIu64 " | %s | %" PRIu64
               " | %.4f | %.0f | %.1f | %zu |\n",
               r->file, r->size, entries, r->tokens_before, r->operation,
               r->tokens_after, r->median_s * 1e3, mbs, ratio, r->peak_bytes);
    }
}

int main(void) {
    double t_start = now_s();
    const char *env = getenv("CTXC_CORPUS");
    const char *corpus =
        env != NULL && env[0] != '\0' ? env : CTXC_SOURCE_DIR "/../shared/corpus";
    static char *names[MAX_FILES];
    int n = list_corpus(corpus, names, MAX_FILES);

    printf("# ctxc strategy benchmark (ctxc %s, target %s)\n\n", CTXC_VERSION_STRING,
           CTXC_TARGET_NAME);
    if (n <= 0) {
        printf("No corpus: %s %s; benchmarking the shipped example session "
               "instead (set CTXC_CORPUS to a directory of *.jsonl files).\n\n",
               corpus, n < 0 ? "cannot be read" : "holds no *.jsonl file");
        bench_file(CTXC_SOURCE_DIR "/boards/host/examples", "coding-session.jsonl");
    } else {
        printf("Corpus: %s (%d files)\n\n", corpus, n);
        for (int i = 0; i < n; i++) {
            bench_file(corpus, names[i]);
            free(names[i]);
        }
    }
    printf("Context limit = 50%% of the input's token estimate, default "
           "threshold and density settings. Medians of %d runs (1x) / %d runs "
           "(10x; the file appended %d times, tool ids renamed per copy); the "
           "history is restored by memcpy before each run (not timed). "
           "\"tokens before\"/entries: the history the operation starts from "
           "(high-density compress: the output of the density step). MB/s: "
           "arena bytes of that history / median (1 MB = 10^6 bytes). Ratio: "
           "median / median of the memcpy restore of the input. Peak: arena "
           "high-water mark during the operation.\n\n",
           REPS_1X, REPS_10X, COPIES);
    print_table();
    printf("\nTotal benchmark time: %.1f s\n", now_s() - t_start);
    return 0;
}
