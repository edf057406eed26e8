/*
 * Import/export throughput (not a test: nothing about times is asserted).
 * Built as build/host/test/bench/bench_io; run: bench_io [CORPUS_DIR].
 *
 * For every *.jsonl file of the corpus, as is (1x) and concatenated 10
 * times (10x), the fastest of several interleaved runs of
 *   tokenize  the library's JSON scanner alone over every line (validation
 *             and tokens, what import has to do at the least),
 *   jsmn      jsmn over every line (only when jsmn.h is installed),
 *   import    ctxc_import_text into an empty history (validate,
 *             canonicalise, estimate, store),
 *   export    ctxc_export of that history into memory,
 * (CPU time of the process: the machine may be shared) as MB/s of the file's
 * bytes (export: of the bytes written), and import time / tokenize time.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctxc/ctxc.h"

#if defined(__has_include)
#if __has_include("../../src/json_tok.h")
#include "../../src/json_tok.h"
#define HAVE_SCAN 1
#endif
#if __has_include(<jsmn.h>)
#define JSMN_STATIC
#define JSMN_PARENT_LINKS
#define JSMN_STRICT
#include <jsmn.h>
#define HAVE_JSMN 1
#endif
#endif

#define MAX_ENTRIES 65535
#define ARENA_BYTES (96u * 1024u * 1024u)
#define MAX_TOK 65536

CTXC_HISTORY_DEFINE(hist, MAX_ENTRIES, ARENA_BYTES);
static ctxc_import_t importer;
static char out_buf[128u * 1024u * 1024u];
static size_t out_len;
#ifdef HAVE_SCAN
static ctxc__jtok_t toks[MAX_TOK];
#endif
#ifdef HAVE_JSMN
static jsmntok_t jtoks[MAX_TOK];
#endif

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static ctxc_status_t write_mem(void *user, const char *data, size_t len) {
    (void)user;
    if (out_len + len > sizeof out_buf) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(out_buf + out_len, data, len);
    out_len += len;
    return CTXC_OK;
}

typedef enum { OP_TOKENIZE, OP_JSMN, OP_IMPORT, OP_EXPORT } op_t;

/* One run of `op` over text; returns seconds or -1. */
static double run(op_t op, const char *text, size_t len) {
    double t0 = now();
    size_t start = 0;
    switch (op) {
    case OP_TOKENIZE:
    case OP_JSMN:
        while (start < len) {
            const char *nl = memchr(text + start, '\n', len - start);
            size_t end = nl != NULL ? (size_t)(nl - text) : len;
            if (end > start) {
#ifdef HAVE_SCAN
                if (op == OP_TOKENIZE) {
                    size_t n;
                    if (ctxc__json_scan(text + start, end - start, 64, toks,
                                        MAX_TOK, &n, NULL, NULL) != CTXC_OK) {
                        return -1;
                    }
                }
#endif
#ifdef HAVE_JSMN
                if (op == OP_JSMN) {
                    jsmn_parser p;
                    jsmn_init(&p);
                    if (jsmn_parse(&p, text + start, end - start, jtoks,
                                   MAX_TOK) < 0) {
                        return -1;
                    }
                }
#endif
            }
            start = end + 1;
        }
        break;
    case OP_IMPORT: {
        ctxc_history_clear(&hist);
        ctxc_error_t err;
        if (ctxc_import_text(&importer, &hist, text, len, CTXC_FORMAT_AUTO,
                             &err) != CTXC_OK) {
            fprintf(stderr, "import failed: line %u: %s\n", (unsigned)err.line,
                    err.message);
            return -1;
        }
        break;
    }
    case OP_EXPORT:
        out_len = 0;
        if (ctxc_export(&hist, write_mem, NULL, NULL) != CTXC_OK) {
            return -1;
        }
        break;
    }
    return now() - t0;
}

/* Runs tokenize, jsmn, import and export in turn, `reps` rounds, so that a
 * change in the machine's load hits all of them alike; keeps each one's
 * fastest run (the least disturbed one). */
static void measure(const char *name, const char *size, const char *text,
                    size_t len, int reps) {
    double best[4] = {-1, -1, -1, -1};
    for (int r = 0; r < reps; r++) {
        for (int op = OP_TOKENIZE; op <= OP_EXPORT; op++) {
#ifndef HAVE_SCAN
            if (op == OP_TOKENIZE) {
                continue;
            }
#endif
#ifndef HAVE_JSMN
            if (op == OP_JSMN) {
                continue;
            }
#endif
            double t = run((op_t)op, text, len);
            if (t < 0) {
                printf("| %s | %s | %s failed |\n", name, size,
                       op == OP_IMPORT ? "import" : "a run");
                return;
            }
            if (best[op] < 0 || t < best[op]) {
                best[op] = t;
            }
        }
    }
    double mb = (double)len / 1e6;
    double tok = best[OP_TOKENIZE], jsmn = best[OP_JSMN];
    double imp = best[OP_IMPORT], exp = best[OP_EXPORT];
    printf("| %-34s | %3s | %6.2f | %7.1f | %7.1f | %7.1f | %7.1f | %5.2f | "
           "%5.2f |\n",
           name, size, mb, tok > 0 ? mb / tok : 0.0, jsmn > 0 ? mb / jsmn : 0.0,
           mb / imp, (double)out_len / 1e6 / exp, tok > 0 ? imp / tok : 0.0,
           jsmn > 0 ? imp / jsmn : 0.0);
}

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *b = malloc(((size_t)n + 1u) * 10u);
    if (b == NULL || fread(b, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(b);
        return NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int by_name(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "../shared/corpus";
    DIR *d = opendir(dir);
    if (d == NULL) {
        fprintf(stderr, "bench_io: no corpus at %s\n", dir);
        return 1;
    }
    char *names[256];
    int nn = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL && nn < 256) {
        size_t l = strlen(de->d_name);
        if (l > 6 && strcmp(de->d_name + l - 6, ".jsonl") == 0) {
            names[nn++] = strdup(de->d_name);
        }
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof names[0], by_name);
    printf("| file | size | MB | tokenize MB/s | jsmn MB/s | import MB/s | "
           "export MB/s | import/tokenize | import/jsmn |\n");
    printf("|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int i = 0; i < nn; i++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        size_t len;
        char *text = read_file(path, &len);
        if (text == NULL) {
            continue;
        }
        names[i][strlen(names[i]) - 6] = '\0';
        measure(names[i], "1x", text, len, 15);
        if (len > 0 && text[len - 1] != '\n') {
            text[len++] = '\n';
        }
        for (int k = 1; k < 10; k++) {
            memcpy(text + (size_t)k * len, text, len);
        }
        measure(names[i], "10x", text, len * 10u, 5);
        free(text);
    }
    return 0;
}
