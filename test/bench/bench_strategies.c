/*
 * Benchmark of import, export and the LLM-free compression steps, in
 * process and as whole CLI processes (not a test: nothing about times is
 * asserted, the targets are reported as PASS/MISS). Built as
 * build/host/test/bench/bench_strategies and run by `make bench`.
 *
 * For every *.jsonl file of $CTXC_CORPUS (no default; `make bench` without
 * a corpus points it at the sessions test/bench/gen_sessions.py generates
 * under build/; unset or empty here: the shipped example session alone) and
 * for two inputs made
 * from it,
 *   1x   the file as is,
 *   10x  the file's entries appended 10 times, tool_call ids and
 *        tool_response callIds suffixed "~k" in copy k so pairs stay unique
 *        (its text is the export of that history, written to
 *        <build>/bench/<name>.10x.jsonl for the process rows),
 * it times with CLOCK_MONOTONIC
 *   - memcpy of the arena (the restore of the history between runs),
 *   - tokenise only: the JSON tokenizer over every line (bench_tokenise.c),
 *   - import: ctxc_import_text of the text into an empty history,
 *   - export: ctxc_export of the history into a memory buffer,
 *   - the high-density density step (default settings, then with recency
 *     pruning on),
 *   - high-density compress, on the output of the density step,
 *   - top-down-truncation compress,
 * with the context limit at 50% of the input's token estimate (so both
 * strategies really cut), and runs the CLI on the file as a child process:
 * `ctxc stats`, `ctxc fmt` and `ctxc compress --strategy high-density` with
 * the same limit (stdout to /dev/null, $CTXC_HOME an empty directory): wall
 * time and peak RSS of the child.
 *
 * Every measurement goes through time_median(): an untimed preparation (the
 * history restored from a pristine copy, an empty history, ...), the timed
 * run, an untimed look at the result; the median over the runs is kept.
 * The operations with a linearity target (and memcpy, for reference) get a
 * second series with the caches emptied between the preparation and the
 * timed run (evict_caches(): 64 MiB written and read, twice this machine
 * class's L3): warm, a 1x arena stays in cache after its restore and a 10x
 * one cannot, so the warm 10x/1x ratio measures the cache size as much as
 * the algorithm (memcpy itself grows ~28x here); cold, both sizes start
 * from memory.
 * Runs: 7 (1x) / 5 (10x) in process, 5 / 3 for the child processes.
 *
 * Output: the one-screen summary on stdout; the summary, the notes and the
 * full table in <build>/bench.md.
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
#include <sys/stat.h>
#include <time.h>

#include "bench.h"
#include "ctxc/ctxc.h"

#if !defined(CTXC_SOURCE_DIR) || !defined(CTXC_BENCH_CLI) ||                   \
    !defined(CTXC_BENCH_BUILD_DIR)
#error "the build passes CTXC_SOURCE_DIR, CTXC_BENCH_CLI, CTXC_BENCH_BUILD_DIR"
#endif

#define MAX_ENTRIES 16384
#define ARENA_BYTES (24u * 1024u * 1024u)
#define SCRATCH_BYTES (8u * 1024u * 1024u)
#define REPS_1X 7
#define REPS_10X 5
#define PROC_REPS_1X 5
#define PROC_REPS_10X 3
#define MAX_REPS 7

/* The operations, their baselines and the targets (informational). */
const op_info_t bench_ops[OP_COUNT] = {
    [OP_MEMCPY] = {"memcpy of the arena", "memcpy", false, false, OP_MEMCPY, 0,
                   0},
    [OP_TOKENISE] = {"tokenise only", "tokenise", false, true, OP_MEMCPY, 0, 0},
    [OP_IMPORT] = {"import", "import", false, true, OP_TOKENISE, 2.0, 0},
    [OP_EXPORT] = {"export", "export", false, true, OP_IMPORT, 1.0, 0},
    [OP_DENSITY] = {"density step", "density", false, false, OP_MEMCPY, 10.0,
                    12.0},
    [OP_DENSITY_RECENCY] = {"density step, recency on", "density", false, false,
                            OP_MEMCPY, 10.0, 12.0},
    [OP_HD_COMPRESS] = {"high-density compress", "hd", false, false, OP_MEMCPY,
                        10.0, 12.0},
    [OP_TD_COMPRESS] = {"top-down compress", "td", false, false, OP_MEMCPY, 0,
                        0},
    [OP_PROC_STATS] = {"ctxc stats", "stats", true, true, OP_PROC_STATS, 0,
                       12.0},
    [OP_PROC_FMT] = {"ctxc fmt", "fmt", true, true, OP_PROC_FMT, 0, 0},
    [OP_PROC_COMPRESS] = {"ctxc compress (high-density)", "compress", true,
                          true, OP_PROC_COMPRESS, 0, 0},
};

/* --- Storage
 * ------------------------------------------------------------------ */

/* The pristine input of the current measurement; restored into `work_hist`
 * before every run that changes the history. */
CTXC_HISTORY_DEFINE(pristine, MAX_ENTRIES, ARENA_BYTES);
/* The history the operations run on (also the 1x source of the 10x input,
 * and the target of the import runs). */
CTXC_HISTORY_DEFINE(work_hist, MAX_ENTRIES, ARENA_BYTES);
CTXC_WORK_DEFINE(work, MAX_ENTRIES, SCRATCH_BYTES);
/* Tool-call id indexes of the two histories (as the CLI has one). */
#define IDS_WORDS (CTXC_HISTORY_ID_INDEX_BYTES(2u * MAX_ENTRIES) / 4u)
static uint32_t pristine_ids[IDS_WORDS], work_ids[IDS_WORDS];
static ctxc_import_t importer;
static ctxc_settings_store_t settings; /* large: static */

/* Blocks of one entry copy and the renamed ids they point to. */
static ctxc_block_t copy_blocks[65535];
static char id_pool[1u << 20];

/* A growable byte buffer (the bench may allocate; the library may not). */
typedef struct {
    char *p;
    size_t len, cap;
} buf_t;

static buf_t export_out; /* what the export runs write */
static buf_t text_10x;   /* the text of the 10x input */

static bench_results_t R;

/* --- Helpers
 * ------------------------------------------------------------------ */

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

static void fail(const char *fmt_what, const char *detail) {
    fprintf(stderr, "bench_strategies: %s%s%s\n", fmt_what,
            detail != NULL ? ": " : "", detail != NULL ? detail : "");
    exit(1);
}

static void die(const char *what, const ctxc_error_t *err) {
    fprintf(stderr, "bench_strategies: %s: line %u: %s (%s)\n", what,
            (unsigned)err->line, ctxc_error_message(err),
            ctxc_status_name(err->status));
    exit(1);
}

static void buf_put(buf_t *b, const char *data, size_t len) {
    if (b->cap - b->len < len) {
        size_t cap = b->cap != 0 ? b->cap : 1u << 20;
        while (cap - b->len < len) {
            cap *= 2;
        }
        char *p = realloc(b->p, cap);
        if (p == NULL) {
            fail("out of memory", NULL);
        }
        b->p = p;
        b->cap = cap;
    }
    memcpy(b->p + b->len, data, len);
    b->len += len;
}

static ctxc_status_t buf_write(void *user, const char *data, size_t len) {
    buf_put(user, data, len);
    return CTXC_OK;
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
    /* the id index described the old content: rebuilt on next use */
    ctxc_history_set_id_index(dst, work_ids, sizeof work_ids);
}

static void reset_hwm(ctxc_history_t *h) {
    h->hwm_count = h->count;
    h->hwm_used = h->used;
}

static void load_file(const char *path, buf_t *out) {
    FILE *fp = fopen(path, "rb");
    if (fp == NULL) {
        fail(path, strerror(errno));
    }
    out->len = 0;
    char chunk[1u << 16];
    size_t n;
    while ((n = fread(chunk, 1, sizeof chunk, fp)) > 0) {
        buf_put(out, chunk, n);
    }
    if (ferror(fp)) {
        fail(path, "read error");
    }
    fclose(fp);
}

static void save_file(const char *path, const buf_t *b) {
    FILE *fp = fopen(path, "wb");
    if (fp == NULL || fwrite(b->p, 1, b->len, fp) != b->len ||
        fclose(fp) != 0) {
        fail(path, "cannot write");
    }
}

/* `dst` <- `src` appended BENCH_COPIES times, ids suffixed "~k" in copy k. */
static void build_10x(ctxc_history_t *dst, const ctxc_history_t *src) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_history_clear(dst);
    for (unsigned k = 0; k < BENCH_COPIES; k++) {
        for (size_t i = 0; i < ctxc_history_count(src); i++) {
            ctxc_entry_t e;
            if (ctxc_history_get(src, i, &e) != CTXC_OK) {
                fail("building the 10x input", "an entry vanished");
            }
            size_t nb = 0, pool = 0;
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            while (ctxc_entry_next_block(&e, &cur, &b)) {
                ctxc_str_t *id = b.type == CTXC_BLOCK_TOOL_CALL
                                     ? &b.u.tool_call.id
                                 : b.type == CTXC_BLOCK_TOOL_RESPONSE
                                     ? &b.u.tool_response.call_id
                                     : NULL;
                if (id != NULL && id->ptr != NULL) {
                    int w = snprintf(id_pool + pool, sizeof id_pool - pool,
                                     "%.*s~%u", (int)id->len, id->ptr, k);
                    if (w < 0 || (size_t)w >= sizeof id_pool - pool) {
                        fail("building the 10x input",
                             "ids larger than the id pool");
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

/* --- The timing helper
 * ----------------------------------------------------------- */

/* One measurement: prepare (untimed, may be NULL), run (timed), after
 * (untimed, may be NULL; looks at the result), all on `ctx`. */
typedef struct {
    void (*prepare)(void *ctx);
    void (*run)(void *ctx);
    void (*after)(void *ctx);
} timed_t;

/* Empties the data caches (as far as software can): writes, then reads,
 * a buffer larger than the last-level cache. Untimed. */
#define EVICT_BYTES (64u << 20)
static unsigned char evict_buf[EVICT_BYTES];
static volatile unsigned evict_sink;

static void evict_caches(void) {
    static unsigned char fill;
    fill++;
    memset(evict_buf, fill, sizeof evict_buf);
    unsigned acc = 0;
    for (size_t i = 0; i < sizeof evict_buf; i += 64) {
        acc += evict_buf[i];
    }
    evict_sink = acc;
}

/* The one place that times: `reps` runs of `t`, the median in row (in
 * row->cold_s when `cold`: the caches emptied before each timed run). */
static void time_median(const timed_t *t, void *ctx, unsigned reps, row_t *row,
                        bool cold) {
    double s[MAX_REPS];
    if (reps > MAX_REPS) {
        reps = MAX_REPS;
    }
    for (unsigned r = 0; r < reps; r++) {
        if (t->prepare != NULL) {
            t->prepare(ctx);
        }
        if (cold) {
            evict_caches();
        }
        double t0 = now_s();
        t->run(ctx);
        s[r] = now_s() - t0;
        if (t->after != NULL) {
            t->after(ctx);
        }
    }
    if (cold) {
        row->cold_s = median(s, reps);
        return;
    }
    row->median_s = median(s, reps);
    row->reps = reps;
    row->done = true;
}

/* --- The operations
 * ---------------------------------------------------------------- */

/* What the callbacks of one measurement work on. */
typedef struct {
    row_t *row;
    op_id_t op;
    const char *text; /* the JSONL text of the input */
    size_t len;
    long tokens;            /* tokenise: tokens seen */
    ctxc_session_t s;       /* density step and compress */
    char arg_text[8][4096]; /* process: the command line */
    char *argv[9];
    char err_path[4096]; /* process: its stderr */
    int status;          /* process: exit status */
    long rss_kib;        /* process: peak RSS of the last run */
} job_t;

/* Records the history's figures after an in-process run. */
static void note_history_after(job_t *j) {
    ctxc_history_usage_t u;
    ctxc_history_usage(&work_hist, &u);
    j->row->entries_after = ctxc_history_count(&work_hist);
    j->row->tokens_after = ctxc_history_tokens(&work_hist);
    if (u.bytes_hwm > j->row->peak_arena) {
        j->row->peak_arena = u.bytes_hwm;
    }
}

/* memcpy of the arena */
static void run_memcpy(void *ctx) {
    (void)ctx;
    restore(&work_hist, &pristine);
}

/* tokenise only */
static void run_tokenise(void *ctx) {
    job_t *j = ctx;
    const char *p = j->text, *end = j->text + j->len;
    j->tokens = 0;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *eol = nl != NULL ? nl : end;
        long n = bench_tokeniser.tokenise(p, (size_t)(eol - p));
        if (n < 0) {
            fail(bench_tokeniser.name, "rejected a line that imports");
        }
        j->tokens += n;
        p = eol + 1;
    }
}

/* import */
static void prepare_import(void *ctx) {
    (void)ctx;
    ctxc_history_clear(&work_hist);
    reset_hwm(&work_hist);
}

static void run_import(void *ctx) {
    job_t *j = ctx;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (ctxc_import_text(&importer, &work_hist, j->text, j->len,
                         CTXC_FORMAT_AUTO, &err) != CTXC_OK) {
        die("import", &err);
    }
}

static void after_import(void *ctx) {
    job_t *j = ctx;
    note_history_after(j);
    if (ctxc_history_count(&work_hist) != ctxc_history_count(&pristine)) {
        fail("import", "a different number of entries than the input");
    }
}

/* export */
static void prepare_export(void *ctx) {
    (void)ctx;
    export_out.len = 0; /* the buffer keeps its size: no realloc timed */
}

static void run_export(void *ctx) {
    (void)ctx;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (ctxc_export(&pristine, buf_write, &export_out, &err) != CTXC_OK) {
        die("export", &err);
    }
}

static void after_export(void *ctx) {
    job_t *j = ctx;
    j->row->bytes = (double)export_out.len;
    if (export_out.len != j->len ||
        memcmp(export_out.p, j->text, j->len) != 0) {
        fprintf(stderr, "bench: note: the export differs from the input text "
                        "(the input is not canonical)\n");
    }
}

/* density step and compress: a session over the restored history */
static void prepare_session(void *ctx) {
    job_t *j = ctx;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    restore(&work_hist, &pristine);
    if (ctxc_session_init(&j->s, &work_hist, &work, &settings, &err) !=
        CTXC_OK) {
        die("session init", &err);
    }
    if (j->op == OP_HD_COMPRESS &&
        ctxc_session_optimize(&j->s, &err) != CTXC_OK) {
        die("density step before compress", &err);
    }
    j->row->entries_before = ctxc_history_count(&work_hist);
    j->row->tokens_before = ctxc_history_tokens(&work_hist);
    j->row->bytes = (double)work_hist.used;
    reset_hwm(&work_hist);
}

static void run_session(void *ctx) {
    job_t *j = ctx;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    bool density = j->op == OP_DENSITY || j->op == OP_DENSITY_RECENCY;
    ctxc_status_t st = density ? ctxc_session_optimize(&j->s, &err)
                               : ctxc_session_compress(&j->s, &err);
    if (st != CTXC_OK) {
        die(bench_ops[j->op].name, &err);
    }
}

static void after_session(void *ctx) { note_history_after(ctx); }

/* a child process */
static void set_command(job_t *j, const char *const words[]) {
    size_t i = 0;
    for (; words[i] != NULL && i < sizeof j->arg_text / sizeof j->arg_text[0];
         i++) {
        snprintf(j->arg_text[i], sizeof j->arg_text[i], "%s", words[i]);
        j->argv[i] = j->arg_text[i];
    }
    j->argv[i] = NULL;
}

static void run_process(void *ctx) {
    job_t *j = ctx;
    j->status = bench_spawn(j->argv, j->err_path, &j->rss_kib);
}

static void after_process(void *ctx) {
    job_t *j = ctx;
    if (j->status != 0) {
        fprintf(stderr,
                "bench_strategies: `%s %s %s` exited with %d; its "
                "stderr is in %s\n",
                j->argv[0], j->argv[1], j->argv[2], j->status, j->err_path);
        exit(1);
    }
    if (j->rss_kib > j->row->peak_rss_kib) {
        j->row->peak_rss_kib = j->rss_kib;
    }
}

static const timed_t timed_memcpy = {NULL, run_memcpy, NULL};
static const timed_t timed_tokenise = {NULL, run_tokenise, NULL};
static const timed_t timed_import = {prepare_import, run_import, after_import};
static const timed_t timed_export = {prepare_export, run_export, after_export};
static const timed_t timed_session = {prepare_session, run_session,
                                      after_session};
static const timed_t timed_process = {NULL, run_process, after_process};

/* Sets the settings the session reads: the strategy of `op`, the context
 * limit, recency pruning for OP_DENSITY_RECENCY; the rest default. */
static void configure(op_id_t op, uint64_t context_limit) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    char limit_text[24];
    snprintf(limit_text, sizeof limit_text, "%" PRIu64, context_limit);
    ctxc_settings_init(&settings, NULL);
    if (ctxc_settings_set(&settings, "compression.strategy",
                          op == OP_TD_COMPRESS ? "top-down-truncation"
                                               : "high-density",
                          &err) != CTXC_OK ||
        ctxc_settings_set(&settings, "context-limit", limit_text, &err) !=
            CTXC_OK ||
        (op == OP_DENSITY_RECENCY &&
         ctxc_settings_set(&settings, "compression.density.recencyPruning",
                           "true", &err) != CTXC_OK)) {
        die("settings", &err);
    }
}

/* Measures every operation on the input now in `pristine`, whose text is
 * text[0..len) and whose file is `path`. */
static void bench_input(size_t file, int size, const char *path,
                        const char *text, size_t len) {
    double t_start = now_s();
    uint64_t tokens = ctxc_history_tokens(&pristine);
    uint64_t limit = tokens / 2 > 0 ? tokens / 2 : 1;
    char limit_text[24];
    snprintf(limit_text, sizeof limit_text, "%" PRIu64, limit);
    unsigned reps = R.reps[size], proc_reps = R.proc_reps[size];

    for (op_id_t op = 0; op < OP_COUNT; op++) {
        row_t *row = &R.rows[file][size][op];
        memset(row, 0, sizeof *row);
        row->entries_before = row->entries_after =
            ctxc_history_count(&pristine);
        row->tokens_before = row->tokens_after = tokens;
        row->bytes =
            bench_ops[op].text_input ? (double)len : (double)pristine.used;
        job_t j;
        memset(&j, 0, sizeof j);
        j.row = row;
        j.op = op;
        j.text = text;
        j.len = len;
        switch (op) {
        case OP_MEMCPY:
            time_median(&timed_memcpy, &j, reps, row, false);
            time_median(&timed_memcpy, &j, reps, row, true);
            row->peak_arena = pristine.used;
            break;
        case OP_TOKENISE:
            if (bench_tokeniser.tokenise != NULL) {
                time_median(&timed_tokenise, &j, reps, row, false);
            }
            break;
        case OP_IMPORT:
            time_median(&timed_import, &j, reps, row, false);
            break;
        case OP_EXPORT:
            time_median(&timed_export, &j, reps, row, false);
            break;
        case OP_DENSITY:
        case OP_DENSITY_RECENCY:
        case OP_HD_COMPRESS:
        case OP_TD_COMPRESS:
            configure(op, limit);
            time_median(&timed_session, &j, reps, row, false);
            if (bench_ops[op].max_growth > 0) {
                time_median(&timed_session, &j, reps, row, true);
            }
            break;
        case OP_PROC_STATS:
        case OP_PROC_FMT:
        case OP_PROC_COMPRESS: {
            static const char *const cmd[] = {"stats", "fmt", "compress"};
            const char *const words[] = {
                R.cli,          cmd[op - OP_PROC_STATS],
                path,           op == OP_PROC_COMPRESS ? "--strategy" : NULL,
                "high-density", "--context-limit",
                limit_text,     NULL};
            set_command(&j, words);
            snprintf(j.err_path, sizeof j.err_path, "%s/child.err", R.work_dir);
            time_median(&timed_process, &j, proc_reps, row, false);
            break;
        }
        case OP_COUNT:
            break;
        }
    }
    fprintf(stderr,
            "bench: %-38s %-3s %5zu entries %8" PRIu64 " tokens %9zu bytes: "
            "%.1f s\n",
            R.names[file], size == SIZE_1X ? "1x" : "10x",
            ctxc_history_count(&pristine), tokens, len, now_s() - t_start);
}

static void bench_file(const char *dir, size_t file) {
    static buf_t text_1x;
    const char *name = R.names[file];
    char path[4096], path_10x[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, name) >=
            sizeof path ||
        (size_t)snprintf(path_10x, sizeof path_10x, "%s/%.*s.10x.jsonl",
                         R.work_dir, (int)(strlen(name) - 6),
                         name) >= sizeof path_10x) {
        fail(name, "path too long");
    }
    load_file(path, &text_1x);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);

    /* 1x: the file in `pristine`. */
    ctxc_history_clear(&pristine);
    if (ctxc_import_text(&importer, &pristine, text_1x.p, text_1x.len,
                         CTXC_FORMAT_AUTO, &err) != CTXC_OK) {
        die(path, &err);
    }
    bench_input(file, SIZE_1X, path, text_1x.p, text_1x.len);

    /* 10x: the 1x input moves to `work_hist`, the 10x one is built in
     * `pristine`; its text is its export. */
    restore(&work_hist, &pristine);
    build_10x(&pristine, &work_hist);
    text_10x.len = 0;
    if (ctxc_export(&pristine, buf_write, &text_10x, &err) != CTXC_OK) {
        die("export of the 10x input", &err);
    }
    save_file(path_10x, &text_10x);
    bench_input(file, SIZE_10X, path_10x, text_10x.p, text_10x.len);
}

/* --- Corpus
 * ------------------------------------------------------------------------ */

static int cmp_name(const void *a, const void *b) { return strcmp(a, b); }

/* The sorted *.jsonl names of `dir` into R.names; -1 when `dir` cannot be
 * read. */
static int list_corpus(const char *dir) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        return -1;
    }
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        size_t l = strlen(de->d_name);
        if (l > 6 && l < BENCH_NAME_LEN &&
            strcmp(de->d_name + l - 6, ".jsonl") == 0) {
            if (n == BENCH_MAX_FILES) {
                fprintf(stderr,
                        "bench: more than %d corpus files; the rest "
                        "are left out\n",
                        BENCH_MAX_FILES);
                break;
            }
            memcpy(R.names[n++], de->d_name, l + 1);
        }
    }
    closedir(d);
    qsort(R.names, n, sizeof R.names[0], cmp_name);
    return (int)n;
}

static void make_dir(const char *path) {
    if (mkdir(path, 0755) != 0 && errno != EEXIST) {
        fail(path, strerror(errno));
    }
}

int main(void) {
    double t_start = now_s();
    static char home[4096];
    R.cli = CTXC_BENCH_CLI;
    R.work_dir = CTXC_BENCH_BUILD_DIR "/bench";
    R.report = CTXC_BENCH_BUILD_DIR "/bench.md";
    R.tokeniser = bench_tokeniser.name;
    R.cores = bench_cores();
    R.load[0] = bench_load();
    R.reps[SIZE_1X] = REPS_1X;
    R.reps[SIZE_10X] = REPS_10X;
    R.proc_reps[SIZE_1X] = PROC_REPS_1X;
    R.proc_reps[SIZE_10X] = PROC_REPS_10X;
    make_dir(R.work_dir);
    ctxc_history_set_id_index(&pristine, pristine_ids, sizeof pristine_ids);
    ctxc_history_set_id_index(&work_hist, work_ids, sizeof work_ids);
    /* the CLI children read no user settings */
    snprintf(home, sizeof home, "%s/home", R.work_dir);
    make_dir(home);
    setenv("CTXC_HOME", home, 1);

    const char *env = getenv("CTXC_CORPUS");
    R.corpus = env != NULL && env[0] != '\0' ? env : "(CTXC_CORPUS not set)";
    int n = env != NULL && env[0] != '\0' ? list_corpus(R.corpus) : -2;
    if (n <= 0) {
        R.corpus_problem = n == -2  ? "no directory given"
                           : n < 0 ? "cannot be read"
                                   : "holds no *.jsonl file";
        R.corpus_fallback = true;
        R.corpus_missing = R.corpus;
        fprintf(stderr,
                "bench: no corpus: %s %s; benchmarking the shipped "
                "example session instead (set CTXC_CORPUS)\n",
                R.corpus, R.corpus_problem);
        R.corpus = CTXC_SOURCE_DIR "/boards/host/examples";
        snprintf(R.names[0], sizeof R.names[0], "coding-session.jsonl");
        n = 1;
    }
    R.n_files = (size_t)n;
    for (size_t i = 0; i < R.n_files; i++) {
        bench_file(R.corpus, i);
    }
    R.total_s = now_s() - t_start;
    R.load[1] = bench_load();

    FILE *md = fopen(R.report, "w");
    if (md == NULL) {
        fail(R.report, strerror(errno));
    }
    fputs("# ctxc benchmark\n\n```text\n", md);
    bench_summary(md, &R);
    fputs("```\n\n", md);
    bench_table(md, &R);
    if (fclose(md) != 0) {
        fail(R.report, "cannot write");
    }
    bench_summary(stdout, &R);
    printf("Full table: %s\n", R.report);
    return 0;
}
