/*
 * Reports of the benchmark: the one-screen summary (stdout and the head of
 * bench.md) and the full markdown table (bench.md).
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bench.h"
#include "ctxc/ctxc.h"

static const char *const size_names[SIZE_COUNT] = {"1x", "10x"};

/* Sum of the medians of rows (op_a, size_a) over the sum of those of rows
 * (op_b, size_b), over the files where both were measured: the ratio of an
 * operation to its baseline (same size) or its 10x/1x growth (same
 * operation). Also the worst per-file ratio and the numerator's bytes. */
typedef struct {
    double num_s, den_s, bytes, worst;
    size_t files, worst_file;
} agg_t;

static agg_t aggregate_of(const bench_results_t *r, op_id_t op_a, int size_a,
                          op_id_t op_b, int size_b, bool cold) {
    agg_t a;
    memset(&a, 0, sizeof a);
    for (size_t f = 0; f < r->n_files; f++) {
        const row_t *x = &r->rows[f][size_a][op_a];
        const row_t *y = &r->rows[f][size_b][op_b];
        double xs = cold ? x->cold_s : x->median_s;
        double ys = cold ? y->cold_s : y->median_s;
        if (!x->done || !y->done || ys <= 0 || xs <= 0) {
            continue;
        }
        a.num_s += xs;
        a.den_s += ys;
        a.bytes += x->bytes;
        double q = xs / ys;
        if (q > a.worst) {
            a.worst = q;
            a.worst_file = f;
        }
        a.files++;
    }
    return a;
}

static agg_t aggregate(const bench_results_t *r, op_id_t op_a, int size_a,
                       op_id_t op_b, int size_b) {
    return aggregate_of(r, op_a, size_a, op_b, size_b, false);
}

static double ratio(const agg_t *a) {
    return a->den_s > 0 ? a->num_s / a->den_s : 0.0;
}

static double mbs(const agg_t *a) {
    return a->num_s > 0 ? a->bytes / 1e6 / a->num_s : 0.0;
}

/* The cells of a summary line. */
enum {
    C_OP,
    C_MBS1,
    C_MBS10,
    C_BASE,
    C_R1,
    C_R10,
    C_RT,
    C_GROWTH,
    C_COLD,
    C_GT,
    C_COUNT
};
#define CELL 40
typedef char cells_t[C_COUNT][CELL];

static void summary_line(FILE *out, cells_t c) {
    fprintf(out, "%-28s %8s %9s  %-8s %-16s %-16s %-9s  %-15s %-15s %s\n",
            c[C_OP], c[C_MBS1], c[C_MBS10], c[C_BASE], c[C_R1], c[C_R10],
            c[C_RT], c[C_GROWTH], c[C_COLD], c[C_GT]);
}

static void set_cells(cells_t c, const char *op, const char *mbs1,
                      const char *mbs10, const char *base, const char *r1,
                      const char *r10, const char *rt, const char *growth,
                      const char *cold, const char *gt) {
    const char *v[C_COUNT] = {op,  mbs1, mbs10,  base, r1,
                              r10, rt,   growth, cold, gt};
    for (int i = 0; i < C_COUNT; i++) {
        snprintf(c[i], sizeof c[i], "%s", v[i]);
    }
}

/* "2.62 [3.10]" or "-" */
static void ratio_text(char *cell, const agg_t *a) {
    if (a->files == 0) {
        snprintf(cell, CELL, "-");
    } else {
        snprintf(cell, CELL, "%.2f [%.2f]", ratio(a), a->worst);
    }
}

/* "<=2 PASS", "<=2 MISS", "<=2 n/a" */
static void verdict(char *cell, double target, bool ok, bool measured) {
    snprintf(cell, CELL, "<=%g %s", target,
             !measured ? "n/a"
             : ok      ? "PASS"
                       : "MISS");
}

static const char *op_label(op_id_t op, char *buf, size_t cap) {
    if (op == OP_TOKENISE) {
        snprintf(buf, cap, "%s (%s)", bench_ops[op].name,
                 bench_tokeniser.tokenise != NULL ? bench_tokeniser.name
                                                  : "n/a");
    } else {
        snprintf(buf, cap, "%s", bench_ops[op].name);
    }
    return buf;
}

/* The cells every row has: name, MB/s at 1x and 10x, 10x/1x time and its
 * target; the others "-" (set by the caller). */
static void common_cells(cells_t c, const bench_results_t *r, op_id_t op) {
    const op_info_t *o = &bench_ops[op];
    agg_t s1 = aggregate(r, op, SIZE_1X, op, SIZE_1X);
    agg_t s10 = aggregate(r, op, SIZE_10X, op, SIZE_10X);
    agg_t gr = aggregate(r, op, SIZE_10X, op, SIZE_1X);
    agg_t cold = aggregate_of(r, op, SIZE_10X, op, SIZE_1X, true);
    set_cells(c, "", "-", "-", "-", "-", "-", "", "", "", "");
    op_label(op, c[C_OP], sizeof c[C_OP]);
    if (s1.files > 0) {
        snprintf(c[C_MBS1], sizeof c[C_MBS1], "%.0f", mbs(&s1));
    }
    if (s10.files > 0) {
        snprintf(c[C_MBS10], sizeof c[C_MBS10], "%.0f", mbs(&s10));
    }
    ratio_text(c[C_GROWTH], &gr);
    if (cold.files > 0) {
        ratio_text(c[C_COLD], &cold);
    }
    /* the linearity verdict: on the cold series where there is one (see
     * bench_strategies.c: warm, the cache size decides), else warm */
    const agg_t *judged = cold.files > 0 ? &cold : &gr;
    if (o->max_growth > 0) {
        verdict(c[C_GT], o->max_growth, ratio(judged) <= o->max_growth,
                judged->files > 0);
    }
}

static double total_bytes(const bench_results_t *r, int size) {
    double b = 0;
    for (size_t f = 0; f < r->n_files; f++) {
        b += (double)r->rows[f][size][OP_PROC_FMT].bytes;
    }
    return b;
}

void bench_summary(FILE *out, const bench_results_t *r) {
    fprintf(out,
            "ctxc benchmark (ctxc %s, %s). Informational: targets are "
            "reported, never enforced.\n",
            CTXC_VERSION_STRING, CTXC_TARGET_NAME);
    if (r->corpus_fallback) {
        fprintf(out,
                "NO CORPUS at %s (%s; set CTXC_CORPUS, or run `make "
                "bench`, which generates sessions): benchmarked "
                "the shipped example %s/%s instead.\n",
                r->corpus_missing, r->corpus_problem, r->corpus, r->names[0]);
    } else {
        fprintf(out, "Corpus: %s, %zu files.\n", r->corpus, r->n_files);
    }
    fprintf(out,
            "Input: %.1f MB (1x) / %.1f MB (10x). Bench time %.0f s; %ld "
            "CPUs, load average %.1f at the start, %.1f at the end%s.\n",
            total_bytes(r, SIZE_1X) / 1e6, total_bytes(r, SIZE_10X) / 1e6,
            r->total_s, r->cores, r->load[0], r->load[1],
            r->load[0] > (double)r->cores || r->load[1] > (double)r->cores
                ? " (busy machine: times are noisy)"
                : "");
    fprintf(out, "Totals over the corpus of per-file medians; [worst file]; "
                 "verdicts on the totals (ratio targets at 1x and 10x).\n\n");

    cells_t c;
    set_cells(c, "in process", "MB/s 1x", "MB/s 10x", "x what", "ratio 1x",
              "ratio 10x", "target", "10x/1x warm", "10x/1x cold", "target");
    summary_line(out, c);
    for (op_id_t op = 0; op < OP_COUNT; op++) {
        const op_info_t *o = &bench_ops[op];
        if (o->process) {
            continue;
        }
        agg_t x1 = aggregate(r, op, SIZE_1X, o->baseline, SIZE_1X);
        agg_t x10 = aggregate(r, op, SIZE_10X, o->baseline, SIZE_10X);
        common_cells(c, r, op);
        if (o->baseline != op) {
            snprintf(c[C_BASE], sizeof c[C_BASE], "%s",
                     bench_ops[o->baseline].abbr);
            ratio_text(c[C_R1], &x1);
            ratio_text(c[C_R10], &x10);
            if (o->max_ratio > 0) {
                verdict(c[C_RT], o->max_ratio,
                        ratio(&x1) <= o->max_ratio &&
                            ratio(&x10) <= o->max_ratio,
                        x1.files > 0 && x10.files > 0);
            }
        }
        summary_line(out, c);
    }

    set_cells(c, "whole process", "MB/s 1x", "MB/s 10x", "", "wall ms 1x",
              "wall ms 10x", "RSS MiB", "10x/1x time", "", "target");
    fputc('\n', out);
    summary_line(out, c);
    for (op_id_t op = 0; op < OP_COUNT; op++) {
        if (!bench_ops[op].process) {
            continue;
        }
        common_cells(c, r, op);
        c[C_BASE][0] = '\0';
        long rss = 0;
        for (size_t f = 0; f < r->n_files; f++) {
            if (r->rows[f][SIZE_10X][op].peak_rss_kib > rss) {
                rss = r->rows[f][SIZE_10X][op].peak_rss_kib;
            }
        }
        snprintf(c[C_R1], sizeof c[C_R1], "%.1f",
                 aggregate(r, op, SIZE_1X, op, SIZE_1X).num_s * 1e3);
        snprintf(c[C_R10], sizeof c[C_R10], "%.1f",
                 aggregate(r, op, SIZE_10X, op, SIZE_10X).num_s * 1e3);
        snprintf(c[C_RT], sizeof c[C_RT], "%.1f", (double)rss / 1024.0);
        summary_line(out, c);
    }
    fprintf(out,
            "\nratio = total median time / total median time of \"x what\" "
            "on the same inputs (warm); 10x/1x = total at 10x / total at "
            "1x (linear: about 10).\n"
            "warm: runs back to back (a 1x arena is still in cache after its "
            "restore, a 10x one is not); cold: the caches\n"
            "emptied (64 MiB written and read) before each run at both sizes; "
            "the linearity verdict is on cold where\n"
            "measured. MB/s: bytes of the input (text for tokenise, import, "
            "export and the CLI; arena otherwise) /\n"
            "total time. Whole process: `ctxc stats|fmt|compress FILE` as a "
            "child, stdout to /dev/null; RSS: max peak RSS at 10x.\n");
}

static void print_row(FILE *out, const bench_results_t *r, size_t f, int size,
                      op_id_t op) {
    const row_t *x = &r->rows[f][size][op];
    const row_t *set = r->rows[f][size];
    char l[64], entries[48], tokens[48], cmp[OP_COUNT][16];
    if (x->entries_before == x->entries_after) {
        snprintf(entries, sizeof entries, "%zu", x->entries_before);
    } else {
        snprintf(entries, sizeof entries, "%zu → %zu", x->entries_before,
                 x->entries_after);
    }
    if (x->tokens_before == x->tokens_after) {
        snprintf(tokens, sizeof tokens, "%" PRIu64, x->tokens_before);
    } else {
        snprintf(tokens, sizeof tokens, "%" PRIu64 " → %" PRIu64,
                 x->tokens_before, x->tokens_after);
    }
    /* ratio to memcpy (in process), to tokenise and to import (the text
     * operations) */
    static const op_id_t against[] = {OP_MEMCPY, OP_TOKENISE, OP_IMPORT};
    for (size_t i = 0; i < sizeof against / sizeof against[0]; i++) {
        const row_t *b = &set[against[i]];
        bool wanted = against[i] == OP_MEMCPY ? !bench_ops[op].process
                      : against[i] == OP_TOKENISE
                          ? op == OP_IMPORT || op == OP_EXPORT
                          : op == OP_EXPORT;
        if (wanted && b->done && b->median_s > 0) {
            snprintf(cmp[i], sizeof cmp[i], "%.2f", x->median_s / b->median_s);
        } else {
            snprintf(cmp[i], sizeof cmp[i], "-");
        }
    }
    char arena[24] = "-", rss[24] = "-";
    if (x->peak_arena > 0) {
        snprintf(arena, sizeof arena, "%zu", x->peak_arena);
    }
    if (x->peak_rss_kib > 0) {
        snprintf(rss, sizeof rss, "%ld", x->peak_rss_kib);
    }
    fprintf(out,
            "| %s | %s | %s | %s | %s | %.0f | %.4f | %.0f | %s | %s | %s | %s "
            "| %s | %u |\n",
            r->names[f], size_names[size], op_label(op, l, sizeof l), entries,
            tokens, x->bytes, x->median_s * 1e3,
            x->median_s > 0 ? x->bytes / 1e6 / x->median_s : 0.0, cmp[0],
            cmp[1], cmp[2], arena, rss, x->reps);
}

/* "3.10 (name)" or "-" */
static void worst_text(char *cell, size_t cap, const bench_results_t *r,
                       const agg_t *a) {
    if (a->files == 0) {
        snprintf(cell, cap, "-");
    } else {
        snprintf(cell, cap, "%.2f (%s)", a->worst, r->names[a->worst_file]);
    }
}

/* Which file is the worst one of each bracket of the summary. */
static void worst_files(FILE *out, const bench_results_t *r) {
    fprintf(out, "## Worst files\n\n"
                 "| operation | ratio 1x | ratio 10x | 10x/1x time |\n"
                 "|---|---|---|---|\n");
    for (op_id_t op = 0; op < OP_COUNT; op++) {
        const op_info_t *o = &bench_ops[op];
        char l[64], w1[160] = "-", w10[160] = "-", wg[160];
        if (o->baseline != op) {
            agg_t x1 = aggregate(r, op, SIZE_1X, o->baseline, SIZE_1X);
            agg_t x10 = aggregate(r, op, SIZE_10X, o->baseline, SIZE_10X);
            worst_text(w1, sizeof w1, r, &x1);
            worst_text(w10, sizeof w10, r, &x10);
        }
        agg_t gr = aggregate(r, op, SIZE_10X, op, SIZE_1X);
        worst_text(wg, sizeof wg, r, &gr);
        fprintf(out, "| %s | %s | %s | %s |\n", op_label(op, l, sizeof l), w1,
                w10, wg);
    }
    fputc('\n', out);
}

void bench_table(FILE *out, const bench_results_t *r) {
    fprintf(out,
            "## Notes\n\n"
            "- Corpus: `%s`%s. 1x: the file as is; 10x: its entries appended "
            "%d times, tool ids renamed per copy, written as JSONL to `%s/`.\n"
            "- In process: medians of %u (1x) / %u (10x) runs. Before each "
            "run, untimed: the history restored from a pristine copy by "
            "memcpy (density step, compress), emptied (import). "
            "\"memcpy of the arena\" times that restore itself (slots and "
            "used arena bytes).\n"
            "- tokenise only: %s over every line of the text, nothing else "
            "(test/bench/bench_tokenise.c says how to point it at another "
            "tokenizer). import: `ctxc_import_text` (validate, "
            "canonicalise, estimate, store). export: `ctxc_export` into a "
            "memory buffer.\n"
            "- Density step: high-density, default density settings; "
            "\"recency on\" adds `compression.density.recencyPruning=true` "
            "(retention 3). Compress: context limit 50%% of the input's "
            "token estimate, default threshold; high-density compress starts "
            "from the output of the density step (its entries and tokens "
            "\"before\" are that output).\n"
            "- Whole process: `%s` as a child (posix_spawn, wait4), "
            "`stats FILE`, `fmt FILE`, `compress FILE --strategy "
            "high-density --context-limit <50%%>`; stdout to /dev/null, "
            "`$CTXC_HOME` an empty directory; median wall time of %u (1x) / "
            "%u (10x) runs, peak RSS = max `ru_maxrss` of the child.\n"
            "- bytes: JSONL text for tokenise, import, export and the "
            "processes, arena bytes otherwise; MB/s = bytes / median "
            "(1 MB = 10^6 bytes). × memcpy / × tokenise / × import: median / "
            "median of that operation on the same input. Peak arena: "
            "high-water mark of the history arena during the operation.\n\n",
            r->corpus,
            r->corpus_fallback ? " (no corpus: the shipped example)" : "",
            BENCH_COPIES, r->work_dir, r->reps[SIZE_1X], r->reps[SIZE_10X],
            r->tokeniser, r->cli, r->proc_reps[SIZE_1X],
            r->proc_reps[SIZE_10X]);
    worst_files(out, r);
    fprintf(out, "## All rows\n\n"
                 "| file | size | operation | entries | tokens | bytes | "
                 "median ms | MB/s | × memcpy | × tokenise | × import | peak "
                 "arena bytes | peak RSS KiB | runs |\n"
                 "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
                 "---:|---:|\n");
    for (size_t f = 0; f < r->n_files; f++) {
        for (int size = 0; size < SIZE_COUNT; size++) {
            for (op_id_t op = 0; op < OP_COUNT; op++) {
                if (r->rows[f][size][op].done) {
                    print_row(out, r, f, size, op);
                }
            }
        }
    }
}
