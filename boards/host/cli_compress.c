/*
 * ctxc host CLI — `ctxc compress`.
 *
 *   ctxc compress FILE --strategy NAME [--context-limit N] [--threshold X]
 *        [--preserve X] [--top-preserve X] [--workspace DIR]
 *        [--density KEY=VALUE ...] [--optimize-only] [-o OUT.jsonl]
 *
 * Imports FILE, runs the density step (for strategies that have one) and
 * the strategy through a session, writes the compressed history as
 * canonical JSONL (stdout, or OUT written to OUT.tmp and renamed), and
 * prints a before/after table to stderr.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "ctxc/ctxc.h"

CTXC_WORK_DEFINE_DEFAULT(cli_work);

static char cli_workspace[4096];

/* Prints "ctxc compress: <before><arg><after>" and the usage line. */
static int usage3(const char *before, const char *arg, const char *after) {
    fprintf(stderr, "ctxc compress: %s%s%s", before, arg, after);
    fprintf(stderr,
            "\nusage: ctxc compress FILE --strategy NAME [--context-limit N] "
            "[--threshold X]\n"
            "         [--preserve X] [--top-preserve X] [--workspace DIR]\n"
            "         [--density KEY=VALUE ...] [--optimize-only] [-o OUT]\n");
    return CLI_EXIT_USAGE;
}

/* "0.85" -> 850; a fraction in [0, 1] with at most 3 decimals. */
static bool parse_fraction(const char *s, int32_t *out) {
    int32_t v = 0;
    const char *p = s;
    if (*p == '1' || *p == '0') {
        v = (*p - '0') * 1000;
        p++;
    } else {
        return false;
    }
    if (*p == '.') {
        p++;
        int32_t scale = 100;
        if (*p == '\0') {
            return false;
        }
        while (*p >= '0' && *p <= '9') {
            if (scale == 0) {
                return false; /* more than 3 decimals */
            }
            v += (*p - '0') * scale;
            scale /= 10;
            p++;
        }
    }
    if (*p != '\0' || v > 1000) {
        return false;
    }
    *out = v;
    return true;
}

static bool parse_u64(const char *s, uint64_t *out) {
    if (*s < '0' || *s > '9') {
        return false;
    }
    errno = 0;
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || *end != '\0') {
        return false;
    }
    *out = (uint64_t)v;
    return true;
}

static bool parse_bool(const char *s, bool *out) {
    if (strcmp(s, "true") == 0) {
        *out = true;
    } else if (strcmp(s, "false") == 0) {
        *out = false;
    } else {
        return false;
    }
    return true;
}

/* --density KEY=VALUE (KEY with or without "compression.density."). */
static bool parse_density(const char *kv, ctxc_density_config_t *d,
                          const char **why) {
    const char *eq = strchr(kv, '=');
    if (eq == NULL) {
        *why = "expected KEY=VALUE";
        return false;
    }
    size_t klen = (size_t)(eq - kv);
    const char *prefix = "compression.density.";
    if (klen > strlen(prefix) && strncmp(kv, prefix, strlen(prefix)) == 0) {
        kv += strlen(prefix);
        klen -= strlen(prefix);
    }
    const char *val = eq + 1;
#define KEY_IS(k) (klen == strlen(k) && strncmp(kv, k, klen) == 0)
    if (KEY_IS("readWritePruning")) {
        *why = "readWritePruning takes true or false";
        return parse_bool(val, &d->read_write_pruning);
    }
    if (KEY_IS("fileDedupe")) {
        *why = "fileDedupe takes true or false";
        return parse_bool(val, &d->file_dedupe);
    }
    if (KEY_IS("recencyPruning")) {
        *why = "recencyPruning takes true or false";
        return parse_bool(val, &d->recency_pruning);
    }
    if (KEY_IS("recencyRetention")) {
        uint64_t n;
        *why = "recencyRetention takes a whole number";
        if (!parse_u64(val, &n) || n > UINT32_MAX) {
            return false;
        }
        d->recency_retention = (uint32_t)n;
        return true;
    }
#undef KEY_IS
    *why = "unknown key (readWritePruning, fileDedupe, recencyPruning, "
           "recencyRetention)";
    return false;
}

/* metadata.cwd of the first entry, as the default workspace root. */
static const char *workspace_from_history(const ctxc_history_t *h) {
    ctxc_entry_t e;
    ctxc_str_t v;
    if (ctxc_history_get(h, 0, &e) != CTXC_OK ||
        ctxc_entry_meta_find(&e, "cwd", &v) != CTXC_OK || v.len < 2 ||
        v.ptr[0] != '"') {
        return NULL;
    }
    /* the canonical JSON string of a path: copy it unescaped */
    size_t o = 0;
    for (size_t i = 1; i + 1 < v.len && o + 1 < sizeof cli_workspace; i++) {
        char c = v.ptr[i];
        if (c == '\\' && i + 2 < v.len) {
            c = v.ptr[++i];
            if (c != '\\' && c != '"' && c != '/') {
                return NULL; /* unusual escapes: do not guess */
            }
        }
        cli_workspace[o++] = c;
    }
    cli_workspace[o] = '\0';
    return o > 0 ? cli_workspace : NULL;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

typedef struct {
    size_t entries;
    uint64_t tokens;
    size_t bytes;
} figures_t;

static figures_t figures(const ctxc_history_t *h) {
    figures_t f = {ctxc_history_count(h), ctxc_history_tokens(h), h->used};
    return f;
}

static bool write_output(const char *out, const ctxc_history_t *h) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (out == NULL) {
        if (ctxc_export(h, cli_write_file, stdout, &err) != CTXC_OK ||
            fflush(stdout) != 0) {
            fprintf(stderr, "ctxc compress: stdout: write error: %s\n",
                    strerror(errno));
            return false;
        }
        return true;
    }
    char tmp[4200];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", out) >= sizeof tmp) {
        fprintf(stderr, "ctxc compress: %s: path too long\n", out);
        return false;
    }
    FILE *fp = fopen(tmp, "wb");
    if (fp == NULL) {
        fprintf(stderr, "ctxc compress: %s: cannot open: %s\n", tmp,
                strerror(errno));
        return false;
    }
    bool ok = ctxc_export(h, cli_write_file, fp, &err) == CTXC_OK;
    ok = fflush(fp) == 0 && ok;
    ok = fclose(fp) == 0 && ok;
    if (!ok || rename(tmp, out) != 0) {
        fprintf(stderr, "ctxc compress: %s: write error: %s\n", out,
                strerror(errno));
        remove(tmp);
        return false;
    }
    return true;
}

int cli_cmd_compress(int argc, char **argv) {
    ctxc_settings_t set;
    ctxc_settings_defaults(&set);
    set.strategy = NULL;
    const char *file = NULL;
    const char *out = NULL;
    bool optimize_only = false;
    bool workspace_given = false;

    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes =
            strcmp(a, "--strategy") == 0 || strcmp(a, "--context-limit") == 0 ||
            strcmp(a, "--threshold") == 0 || strcmp(a, "--preserve") == 0 ||
            strcmp(a, "--top-preserve") == 0 || strcmp(a, "--workspace") == 0 ||
            strcmp(a, "--density") == 0 || strcmp(a, "-o") == 0;
        if (takes && v == NULL) {
            return usage3("", a, " needs a value");
        }
        if (strcmp(a, "--strategy") == 0) {
            set.strategy = v;
        } else if (strcmp(a, "--context-limit") == 0) {
            if (!parse_u64(v, &set.context_limit) || set.context_limit == 0) {
                return usage3(
                    "--context-limit takes a positive number of tokens, not '",
                    v, "'");
            }
        } else if (strcmp(a, "--threshold") == 0) {
            if (!parse_fraction(v, &set.threshold_ephemeral)) {
                return usage3("--threshold takes a fraction from 0 to 1 (e.g. "
                              "0.85), not '",
                              v, "'");
            }
        } else if (strcmp(a, "--preserve") == 0) {
            if (!parse_fraction(v, &set.preserve_threshold)) {
                return usage3("--preserve takes a fraction from 0 to 1, not '",
                              v, "'");
            }
        } else if (strcmp(a, "--top-preserve") == 0) {
            if (!parse_fraction(v, &set.top_preserve_threshold)) {
                return usage3(
                    "--top-preserve takes a fraction from 0 to 1, not '", v,
                    "'");
            }
        } else if (strcmp(a, "--workspace") == 0) {
            set.density.workspace_root = v;
            workspace_given = true;
        } else if (strcmp(a, "--density") == 0) {
            const char *why = "";
            if (!parse_density(v, &set.density, &why)) {
                fprintf(stderr, "ctxc compress: --density %s: %s\n", v, why);
                return CLI_EXIT_USAGE;
            }
        } else if (strcmp(a, "-o") == 0) {
            out = v;
        } else if (strcmp(a, "--optimize-only") == 0) {
            optimize_only = true;
            continue;
        } else if (a[0] == '-' && a[1] != '\0') {
            return usage3("unknown option '", a, "'");
        } else if (file == NULL) {
            file = a;
            continue;
        } else {
            return usage3("unexpected argument '", a, "'");
        }
        i++; /* the value */
    }
    if (file == NULL) {
        return usage3("", "missing FILE", "");
    }
    if (set.strategy == NULL) {
        return usage3("", "missing --strategy NAME", "");
    }
    const ctxc_strategy_t *strategy;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (ctxc_strategy_find(set.strategy, &strategy, &err) != CTXC_OK) {
        cli_report("ctxc compress", &err);
        return CLI_EXIT_USAGE;
    }
    if (!optimize_only && set.context_limit == 0) {
        return usage3("missing --context-limit N (the model's context window "
                      "in tokens)",
                      "", "");
    }

    const char *name;
    if (!cli_load(file, &name)) {
        return CLI_EXIT_FAIL;
    }
    ctxc_history_t *h = cli_history_get();
    if (!workspace_given) {
        set.density.workspace_root = workspace_from_history(h);
    }
    ctxc_session_t session;
    if (ctxc_session_init(&session, h, &cli_work, &set, &err) != CTXC_OK) {
        cli_report("ctxc compress", &err);
        return CLI_EXIT_FAIL;
    }
    figures_t before = figures(h);
    double t0 = now_ms();
    if (ctxc_session_optimize(&session, &err) != CTXC_OK) {
        cli_report("ctxc compress: density step", &err);
        return CLI_EXIT_FAIL;
    }
    figures_t mid = figures(h);
    double t1 = now_ms();
    if (!optimize_only && ctxc_session_compress(&session, &err) != CTXC_OK) {
        cli_report("ctxc compress", &err);
        return CLI_EXIT_FAIL;
    }
    double t2 = now_ms();
    figures_t after = figures(h);
    if (!write_output(out, h)) {
        return CLI_EXIT_FAIL;
    }

    uint16_t thr = 0;
    (void)ctxc_session_threshold(&session, &thr, NULL);
    fprintf(stderr, "ctxc compress %s: strategy %s", name, strategy->name);
    if (set.context_limit > 0) {
        fprintf(stderr,
                ", context limit %" PRIu64 ", threshold %u.%03u "
                "(target %" PRIu64 " tokens)",
                set.context_limit, thr / 1000u, thr % 1000u,
                ctxc_target_tokens(set.context_limit, thr));
    }
    fprintf(stderr, "\n%-10s %12s %12s %12s\n", "", "before",
            strategy->optimize != NULL ? "optimized" : "-",
            optimize_only ? "-" : "compressed");
    fprintf(stderr, "%-10s %12zu %12zu %12zu\n", "entries", before.entries,
            mid.entries, after.entries);
    fprintf(stderr, "%-10s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
            "tokens", before.tokens, mid.tokens, after.tokens);
    fprintf(stderr, "%-10s %12zu %12zu %12zu\n", "bytes", before.bytes,
            mid.bytes, after.bytes);
    if (strategy->optimize != NULL) {
        const ctxc_density_counts_t *c = &session.last_density;
        fprintf(stderr,
                "density: read->write pruned %zu reads (entries: %zu removed, "
                "%zu replaced); file dedupe %zu inclusions (%zu entries); "
                "recency pruned %zu results (%zu entries)%s\n",
                c->read_write_pruned, c->read_write_entries_removed,
                c->read_write_entries_replaced, c->file_dedupe_replaced,
                c->file_dedupe_entries, c->recency_pruned, c->recency_entries,
                set.density.recency_pruning ? "" : " [recency off]");
    }
    if (!optimize_only) {
        const ctxc_compress_meta_t *m = &session.last_compress;
        fprintf(stderr,
                "compress: %zu of %zu entries compressed, %zu kept as the "
                "recent tail%s\n",
                m->middle_compressed, m->original_count, m->bottom_preserved,
                m->unchanged ? " (history unchanged)" : "");
    }
    fprintf(stderr, "time: density step %.3f ms, compress %.3f ms\n", t1 - t0,
            t2 - t1);
    return CLI_EXIT_OK;
}
