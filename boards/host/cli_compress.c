/*
 * ctxc host CLI — `ctxc compress`.
 *
 *   ctxc compress FILE [--profile NAME] [--strategy NAME] [--context-limit N]
 *        [--threshold X] [--preserve X] [--top-preserve X] [--workspace DIR]
 *        [--density KEY=VALUE ...] [--optimize-only] [-o OUT.jsonl]
 *        [--provider P] [--model M] [--base-url URL] [--key-env VAR]
 *        [--no-stream] [--todos FILE.json] [--transcript PATH]
 *
 * Values resolve as everywhere: options (the ephemeral layer, over a
 * profile loaded with --profile) -> $CTXC_HOME/settings.json -> defaults.
 *
 * Imports FILE, runs the density step (for strategies that have one) and
 * the strategy through a session, writes the compressed history as
 * canonical JSONL (stdout, or OUT through cli_save_history: a file is
 * replaced atomically, a FIFO or device is written to, "-" is stdout), and
 * prints a before/after table to stderr. The density step and the strategy
 * are one step: when the strategy fails nothing is written.
 *
 * Exit status: 0 done; 1 bad input, I/O error or a failed step (nothing
 * written); 2 usage error; 3 written, but the result is still over the
 * context limit (the table's last line says by how much); 130 stopped by
 * Ctrl-C (nothing written).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"

CTXC_WORK_DEFINE_DEFAULT(cli_work);

static ctxc_settings_store_t cli_settings;
static ctxc_posix_fs_t cli_pfs;

/* A usage error: one line and where the usage is. */
static int usage3(const char *before, const char *arg, const char *after) {
    return cli_usage_fail("compress", "%s%s%s", before, arg, after);
}

/* Every option of `ctxc compress`, for the suggestions. */
static const char *const compress_options[] = {
    "--profile",   "--strategy",     "--context-limit", "--threshold",
    "--preserve",  "--top-preserve", "--workspace",     "--density",
    "--optimize-only", "-o",         "--provider",      "--model",
    "--base-url",  "--key-env",      "--ca-file",       "--no-stream",
    "--todos",     "--transcript",   "--verbose",       "--help",
    "-q",          NULL,
};


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

/* The history to OUT ("-" or no -o: stdout); see cli_save_history. */
static bool write_output(const char *out, const ctxc_history_t *h) {
    return cli_save_history(h, out != NULL ? out : "-", "ctxc compress");
}

/* A command-line option that sets a setting: --option KEY. */
static const struct {
    const char *option;
    const char *key;
} option_keys[] = {
    {"--strategy", "compression.strategy"},
    {"--context-limit", "context-limit"},
    {"--threshold", "compression-threshold"},
    {"--preserve", "compression-preserve-threshold"},
    {"--top-preserve", "compression-top-preserve-threshold"},
    /* the model of middle-out and one-shot (ephemeral: never saved) */
    {"--provider", "provider"},
    {"--model", "model"},
    {"--base-url", "base-url"},
    {"--key-env", "auth-key-name"},
    {"--ca-file", "network.ca-file"},
};

/* --density KEY=VALUE: KEY is compression.density.<name> or just <name>. */
static ctxc_status_t set_density(const char *kv, ctxc_error_t *err) {
    const char *eq = strchr(kv, '=');
    if (eq == NULL || eq == kv) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "--density takes KEY=VALUE, not '%s'", kv);
    }
    char key[160];
    const char *prefix = "compression.density.";
    size_t kn = (size_t)(eq - kv);
    bool full = kn > strlen(prefix) && strncmp(kv, prefix, strlen(prefix)) == 0;
    snprintf(key, sizeof key, "%s%.*s", full ? "" : prefix, (int)kn, kv);
    return ctxc_settings_set(&cli_settings, key, eq + 1, err);
}

/* The header line: file, strategy, limit, threshold, profile. */
static void print_header(const char *name, const ctxc_strategy_t *strategy,
                         uint64_t limit, ctxc_session_t *session) {
    uint16_t thr = 0;
    (void)ctxc_session_threshold(session, &thr, NULL);
    fprintf(stderr, "ctxc compress %s: strategy %s", name, strategy->name);
    if (limit > 0) {
        fprintf(stderr,
                ", context limit %" PRIu64 ", threshold %u.%03u "
                "(target %" PRIu64 " tokens)",
                limit, thr / 1000u, thr % 1000u,
                ctxc_target_tokens(limit, thr));
    }
    if (cli_settings.profile[0] != '\0') {
        fprintf(stderr, ", profile %s", cli_settings.profile);
    }
    fputc('\n', stderr);
    fflush(stderr);
}

int cli_cmd_compress(int argc, char **argv) {
    const char *file = NULL;
    const char *out = NULL;
    const char *profile = NULL;
    const char *workspace = NULL;
    const char *todos = NULL;
    const char *transcript = NULL;
    bool optimize_only = false;
    bool density_given = false;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);

    /* the profile first, so that options given with it override it */
    for (int i = 0; i + 1 < argc; i++) {
        if (strcmp(argv[i], "--profile") == 0) {
            profile = argv[i + 1];
        }
    }
    if (!cli_settings_open(&cli_settings, &cli_pfs, profile, "ctxc compress")) {
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        bool takes = strcmp(a, "--workspace") == 0 ||
                     strcmp(a, "--density") == 0 || strcmp(a, "-o") == 0 ||
                     strcmp(a, "--profile") == 0 || strcmp(a, "--todos") == 0 ||
                     strcmp(a, "--transcript") == 0;
        const char *key = NULL;
        for (size_t k = 0; k < sizeof option_keys / sizeof option_keys[0];
             k++) {
            if (strcmp(a, option_keys[k].option) == 0) {
                key = option_keys[k].key;
                takes = true;
            }
        }
        if (takes && v == NULL) {
            return usage3("", a, " needs a value");
        }
        if (key != NULL && strcmp(a, "--ca-file") == 0) {
            v = cli_absolute_path(v); /* the setting takes absolute paths */
        }
        if (key != NULL || strcmp(a, "--density") == 0) {
            ctxc_status_t st =
                key != NULL ? ctxc_settings_set(&cli_settings, key, v, &err)
                            : set_density(v, &err);
            if (st != CTXC_OK) {
                const char *hint = strcmp(a, "--provider") == 0
                                       ? cli_provider_hint(v, true)
                                       : NULL;
                fprintf(stderr, "ctxc compress: %s %s: %s%s%s\n", a, v,
                        ctxc_error_message(&err), hint != NULL ? "\n" : "",
                        hint != NULL ? hint : "");
                return CLI_EXIT_USAGE;
            }
            density_given = density_given || key == NULL;
        } else if (strcmp(a, "--workspace") == 0) {
            workspace = v;
        } else if (strcmp(a, "--todos") == 0) {
            todos = v;
        } else if (strcmp(a, "--transcript") == 0) {
            transcript = v;
        } else if (strcmp(a, "--profile") == 0) {
            /* loaded above */
        } else if (strcmp(a, "-o") == 0) {
            out = v;
        } else if (strcmp(a, "--optimize-only") == 0) {
            optimize_only = true;
            continue;
        } else if (strcmp(a, "--no-stream") == 0) {
            /* the summary model answers in one JSON body (for servers and
             * proxies that do not stream); ephemeral, like --model */
            if (ctxc_settings_set_bool(&cli_settings, CTXC_SETTING_STREAM,
                                       false, &err) != CTXC_OK) {
                fprintf(stderr, "ctxc compress: --no-stream: %s\n",
                        ctxc_error_message(&err));
                return CLI_EXIT_USAGE;
            }
            continue;
        } else if (strcmp(a, "--verbose") == 0) {
            cli_verbose = true;
            continue;
        } else if (strcmp(a, "-q") == 0) {
            cli_quiet = true; /* errors only (and the over-the-limit line) */
            continue;
        } else if (a[0] == '-' && a[1] != '\0') {
            return cli_unknown_option("compress", a, compress_options);
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
    const ctxc_strategy_t *strategy;
    if (ctxc_settings_strategy(&cli_settings, &strategy, &err) != CTXC_OK) {
        cli_report("ctxc compress", &err);
        return CLI_EXIT_USAGE;
    }
    if (density_given && strategy->optimize == NULL) {
        fprintf(stderr,
                "ctxc compress: note: --density has no effect: %s has no "
                "density step (high-density has one)\n",
                strategy->name);
    }
    uint64_t limit = ctxc_settings_context_limit(&cli_settings);
    if (!optimize_only && limit == 0) {
        return usage3("no context limit: give --context-limit N (the model's "
                      "context window in tokens) or set context-limit",
                      "", "");
    }

    /* the summary model, before anything is read: named by the flags */
    const char *missing =
        optimize_only ? NULL
                      : cli_summary_model_missing(&cli_settings, strategy,
                                                  "--provider P", "--model M");
    if (missing != NULL) {
        fprintf(stderr,
                "ctxc compress: %s asks a model for its summary: give %s (or "
                "--profile NAME with them), or --strategy top-down-truncation "
                "or high-density (no model)\n",
                strategy->name, missing);
        return CLI_EXIT_USAGE;
    }

    const char *name;
    if (!cli_load(file, &name)) {
        return CLI_EXIT_FAIL;
    }
    ctxc_history_t *h = cli_history_get();
    if (workspace == NULL) {
        workspace = cli_workspace_from_history(h);
    }
    /* static: the settings store (static) keeps a pointer to its session */
    static ctxc_session_t session;
    if (ctxc_session_init(&session, h, &cli_work, &cli_settings, &err) !=
        CTXC_OK) {
        cli_report("ctxc compress", &err);
        return CLI_EXIT_FAIL;
    }
    ctxc_session_set_workspace(&session, workspace);
    if (cli_spill_open(&cli_settings, &cli_pfs, "ctxc compress")) {
        cli_spill_attach(&session);
    }
    if (strategy->requires_llm) {
        if (!cli_llm_setup(&session, &cli_settings, "ctxc compress") ||
            (todos != NULL &&
             !cli_llm_todos(&session, todos, "ctxc compress"))) {
            return CLI_EXIT_FAIL;
        }
        ctxc_session_set_transcript(&session, transcript);
    }
    /* the header: on a terminal first, so that it shows before a model
     * call; into a pipe or file with the table, after it (an error is
     * then the one line written) */
    bool header_first = isatty(2) != 0 && !cli_quiet;
    if (header_first) {
        print_header(name, strategy, limit, &session);
    }
    figures_t before = figures(h);
    double t0 = now_ms();
    if (ctxc_session_optimize(&session, &err) != CTXC_OK) {
        cli_report("ctxc compress: density step", &err);
        return CLI_EXIT_FAIL;
    }
    figures_t mid = figures(h);
    double t1 = now_ms();
    if (!optimize_only) {
        /* a model call: the status line on a terminal, Ctrl-C stops it */
        char what[160];
        snprintf(what, sizeof what,
                 "summarising %zu entries (%" PRIu64 " tokens) with %s",
                 mid.entries, mid.tokens, strategy->name);
        if (strategy->requires_llm) {
            cli_interrupt_install();
            cli_status_begin(what, cli_llm_client(), NULL, NULL);
        }
        ctxc_status_t cst = ctxc_session_compress(&session, &err);
        cli_status_end();
        if (cst == CTXC_E_CANCELLED) {
            fprintf(stderr, "ctxc compress: stopped (Ctrl-C); nothing "
                            "written\n");
            return 130;
        }
        if (cst != CTXC_OK) {
            cli_report("ctxc compress", &err);
            return CLI_EXIT_FAIL;
        }
    }
    double t2 = now_ms();
    figures_t after = figures(h);
    if (!write_output(out, h)) {
        return CLI_EXIT_FAIL;
    }

    if (!cli_quiet && !header_first) {
        print_header(name, strategy, limit, &session);
    }
    if (cli_quiet) {
        goto over_limit;
    }
    fprintf(stderr, "%-12s %12s %12s %12s\n", "", "before",
            strategy->optimize != NULL ? "optimized" : "-",
            optimize_only ? "-" : "compressed");
    fprintf(stderr, "%-12s %12zu %12zu %12zu\n", "entries", before.entries,
            mid.entries, after.entries);
    fprintf(stderr, "%-12s %12" PRIu64 " %12" PRIu64 " %12" PRIu64 "\n",
            "tokens", before.tokens, mid.tokens, after.tokens);
    /* the history arena's bytes (entries as stored), not the JSONL
     * file's size */
    fprintf(stderr, "%-12s %12zu %12zu %12zu\n", "arena bytes",
            before.bytes, mid.bytes, after.bytes);
    if (strategy->optimize != NULL) {
        const ctxc_density_counts_t *c = &session.last_density;
        fprintf(stderr,
                "density: read->write pruned %zu reads (entries: %zu removed, "
                "%zu replaced); file dedupe %zu inclusions (%zu entries); "
                "recency pruned %zu results (%zu entries)%s\n",
                c->read_write_pruned, c->read_write_entries_removed,
                c->read_write_entries_replaced, c->file_dedupe_replaced,
                c->file_dedupe_entries, c->recency_pruned, c->recency_entries,
                ctxc_settings_bool(&cli_settings,
                                   CTXC_SETTING_DENSITY_RECENCY_PRUNING)
                    ? ""
                    : " [recency off]");
        if (c->spill_full > 0) {
            fprintf(stderr,
                    "density: %zu blocks pruned without being stored (the "
                    "spill store's budget is smaller than this step's "
                    "blocks: compression.density.spillBudget)\n",
                    c->spill_full);
        }
    }
    if (!optimize_only) {
        const ctxc_compress_meta_t *m = &session.last_compress;
        fprintf(stderr, "compress: %zu of %zu entries compressed",
                m->middle_compressed, m->original_count);
        if (m->top_preserved > 0) {
            fprintf(stderr, ", %zu kept at the top", m->top_preserved);
        }
        fprintf(stderr, ", %zu kept as the recent tail", m->bottom_preserved);
        const ctxc_llm_t *used = cli_llm_used();
        if (m->llm_call_made && used != NULL) {
            fprintf(stderr, "; summary written by %s model %s",
                    used->provider != NULL ? used->provider : "?",
                    used->model != NULL ? used->model : "?");
        }
        if (m->unchanged) {
            fprintf(stderr, " (history unchanged%s%s)",
                    m->unchanged_reason != NULL ? ": " : "",
                    m->unchanged_reason != NULL ? m->unchanged_reason : "");
        }
        fputc('\n', stderr);
        if (m->llm_call_made && !m->unchanged) {
            ctxc_fact_check_t fc;
            ctxc_settings_fact_check(&cli_settings, &fc);
            fprintf(stderr,
                    "facts: %zu found, %zu missing, %zu added by ctxc "
                    "(compression.factCheck %s%s)\n",
                    m->anchors_found, m->anchors_missing, m->anchors_added,
                    ctxc_fact_check_modes[fc.mode],
                    m->fact_retry_made ? ", asked again" : "");
        }
    }
    fprintf(stderr, "time: density step %.3f ms, compress %.3f ms\n", t1 - t0,
            t2 - t1);
over_limit:
    /* written, but a model given it would refuse it: a script must know */
    if (!optimize_only && limit > 0 && after.tokens > limit) {
        fprintf(stderr,
                "over the limit: %" PRIu64 " tokens for a context limit of "
                "%" PRIu64 " (%" PRIu64 " over; exit status 3)\n",
                after.tokens, limit, after.tokens - limit);
        return CLI_EXIT_OVER;
    }
    return CLI_EXIT_OK;
}
