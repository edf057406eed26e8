/*
 * Shared declarations of the benchmark (test/bench): the operations and
 * their targets, the result rows, the tokenise-only baseline, the child
 * process runner and the reports. See bench_strategies.c for what is
 * measured and how.
 */
#ifndef CTXC_BENCH_H
#define CTXC_BENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define BENCH_MAX_FILES 64
#define BENCH_NAME_LEN 96
#define BENCH_COPIES 10 /* the 10x input: the file appended 10 times */

/* --- Operations ------------------------------------------------------------
 */

/* One row kind each. In-process operations first, then whole-process runs
 * of the CLI. */
typedef enum {
    OP_MEMCPY,          /* memcpy of the arena (the history restore) */
    OP_TOKENISE,        /* the JSON tokenizer alone over every line */
    OP_IMPORT,          /* ctxc_import_text into an empty history */
    OP_EXPORT,          /* ctxc_export of the history into a buffer */
    OP_DENSITY,         /* high-density density step, default settings */
    OP_DENSITY_RECENCY, /* the same with recency pruning on */
    OP_HD_COMPRESS,     /* high-density compress after the density step */
    OP_TD_COMPRESS,     /* top-down-truncation compress */
    OP_PROC_STATS,      /* `ctxc stats FILE` as a child process */
    OP_PROC_FMT,        /* `ctxc fmt FILE` */
    OP_PROC_COMPRESS,   /* `ctxc compress FILE --strategy high-density` */
    OP_COUNT
} op_id_t;

typedef struct {
    const char *name;
    const char *abbr;  /* short name, when it is a baseline */
    bool process;      /* a child process (wall time, peak RSS) */
    bool text_input;   /* bytes = JSONL text (else arena bytes) */
    op_id_t baseline;  /* the ratio target is to this operation */
    double max_ratio;  /* target: median <= max_ratio x baseline; 0: none */
    double max_growth; /* target: 10x median <= max_growth x 1x; 0: none */
} op_info_t;

extern const op_info_t bench_ops[OP_COUNT];

/* --- Results ----------------------------------------------------------------
 */

typedef struct {
    bool done;
    double median_s;
    double cold_s; /* median with the caches emptied before each run; 0: not
                      measured (see bench_strategies.c, evict_caches()) */
    double bytes;  /* input of the operation (see op_info_t.text_input) */
    size_t entries_before, entries_after;
    uint64_t tokens_before, tokens_after;
    size_t peak_arena; /* arena high-water mark (in-process), 0: n/a */
    long peak_rss_kib; /* max peak RSS of the child over the runs, 0: n/a */
    unsigned reps;
} row_t;

enum { SIZE_1X, SIZE_10X, SIZE_COUNT };

typedef struct {
    const char *corpus;         /* the directory benchmarked */
    bool corpus_fallback;       /* no corpus: the shipped example instead */
    const char *corpus_missing; /* then: the corpus directory looked for */
    const char *corpus_problem; /* and what is wrong with it */
    const char *cli;            /* the ctxc binary run as a child */
    const char *work_dir;       /* the 10x files */
    const char *report;         /* the full report (markdown) */
    const char *tokeniser;      /* name of the tokenise-only baseline */
    unsigned reps[SIZE_COUNT], proc_reps[SIZE_COUNT];
    size_t n_files;
    char names[BENCH_MAX_FILES][BENCH_NAME_LEN];
    row_t rows[BENCH_MAX_FILES][SIZE_COUNT][OP_COUNT];
    double total_s; /* wall time of the whole benchmark */
    long cores;     /* online CPUs */
    double load[2]; /* 1-minute load average at the start and the end */
} bench_results_t;

/* --- Tokenise-only baseline (bench_tokenise.c) -------------------------------
 */

typedef struct {
    const char *name; /* shown in the reports */
    /* Tokenises one JSON text, no more: returns the number of tokens, or a
     * negative value when the tokenizer rejects the text. NULL: this
     * tokenizer is not available in this build (the rows are left out). */
    long (*tokenise)(const char *json, size_t len);
} bench_tokeniser_t;

/* The tokenizer the tokenise-only rows time. */
extern const bench_tokeniser_t bench_tokeniser;

/* --- Child processes (bench_process.c) ---------------------------------------
 */

/* Runs argv[0] with argv, stdin from /dev/null, stdout to /dev/null and
 * stderr to `err_path`, and waits for it. Returns its exit status (-1 when
 * it could not be started or did not exit normally) and its peak RSS in
 * KiB (getrusage of the child through wait4) in *rss_kib. */
int bench_spawn(char *const argv[], const char *err_path, long *rss_kib);

/* The 1-minute load average (-1 when unknown): other work on the machine
 * makes the times unreliable, so the summary shows it. */
double bench_load(void);

/* Online CPUs (-1 when unknown). */
long bench_cores(void);

/* --- Reports (bench_report.c) ------------------------------------------------
 */

/* The one-screen summary: per operation the corpus totals at 1x and 10x,
 * the ratio to its baseline and the 10x/1x time ratio (worst file in
 * brackets), and PASS/MISS against its targets. */
void bench_summary(FILE *out, const bench_results_t *r);

/* The full table, one row per file, size and operation (markdown). */
void bench_table(FILE *out, const bench_results_t *r);

#endif /* CTXC_BENCH_H */
