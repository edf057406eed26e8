/*
 * ctxc — host CLI (built as build/host/ctxc).
 *
 *   ctxc stats FILE|- [--entries]   figures of an imported history
 *   ctxc fmt FILE|-                 canonical IContent JSONL on stdout
 *   ctxc help [CMD], ctxc CMD --help   see cli_help.c
 *   ctxc compress FILE ...          see cli_compress.c
 *   ctxc prompts list|show|install  see cli_prompts.c
 *   ctxc repl / ctxc chat ...       see cli_repl.c
 *   ctxc restore FILE ID            see cli_restore.c
 *   ctxc http-get URL ...           see cli_http.c
 *
 * This file dispatches to the commands and holds the two smallest (stats,
 * fmt); the history they read and its loading are cli_state.c's (cli.h
 * shows the layers).
 *
 * Exit status: 0 success, 1 bad input / I/O error, 2 usage error.
 * Errors go to stderr as "FILE:LINE: reason" (or "FILE: reason" when the
 * error is not tied to a line).
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctxc/ctxc.h"

/* The help texts: cli_help.c. */
static void cli_usage(FILE *out) { cli_help_global(out); }

/* --- Statistics ----------------------------------------------------------- */

static int cli_cmd_stats(const char *path, bool per_entry) {
    const char *name;
    ctxc_history_stats_t st;
    ctxc_history_usage_t use;

    if (!cli_load(path, &name)) {
        return CLI_EXIT_FAIL;
    }
    ctxc_history_stats(cli_history_get(),
                       &st); /* linear: the history has an index */
    ctxc_history_usage(cli_history_get(), &use);

    printf("file: %s\n", name);
    printf("entries: %zu (human %zu, ai %zu, tool %zu)\n", st.entries,
           st.per_speaker[CTXC_SPEAKER_HUMAN], st.per_speaker[CTXC_SPEAKER_AI],
           st.per_speaker[CTXC_SPEAKER_TOOL]);
    printf("blocks: text %zu, tool_call %zu, tool_response %zu, thinking %zu, "
           "code %zu, media %zu\n",
           st.per_block_type[CTXC_BLOCK_TEXT],
           st.per_block_type[CTXC_BLOCK_TOOL_CALL],
           st.per_block_type[CTXC_BLOCK_TOOL_RESPONSE],
           st.per_block_type[CTXC_BLOCK_THINKING],
           st.per_block_type[CTXC_BLOCK_CODE],
           st.per_block_type[CTXC_BLOCK_MEDIA]);
    printf("tool calls: %zu (unpaired %zu), tool responses: %zu (unpaired "
           "%zu)\n",
           st.tool_calls, st.unpaired_calls, st.tool_responses,
           st.unpaired_responses);
    printf("tokens (estimated): %" PRIu64 "\n", st.tokens);
    printf("arena: %zu of %zu bytes, %zu of %zu entries\n", use.bytes_used,
           use.bytes_max, use.entries_used, use.entries_max);

    if (per_entry) {
        size_t count = ctxc_history_count(cli_history_get());
        for (size_t i = 0; i < count; i++) {
            ctxc_entry_t e;
            if (ctxc_history_get(cli_history_get(), i, &e) != CTXC_OK) {
                continue;
            }
            printf("%zu %s %" PRIu32 "%s\n", i, ctxc_speaker_name(e.speaker),
                   e.tokens,
                   (e.flags & CTXC_ENTRY_PINNED) != 0 ? " pinned" : "");
        }
    }

    return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* --- fmt ------------------------------------------------------------------ */

static int cli_cmd_fmt(const char *path) {
    const char *name;
    ctxc_error_t err;

    if (!cli_load(path, &name)) {
        return CLI_EXIT_FAIL;
    }
    memset(&err, 0, sizeof err);
    errno = 0;
    if (ctxc_export(cli_history_get(), cli_write_file, stdout, &err) != CTXC_OK) {
        if (err.status == CTXC_E_IO) {
            fprintf(stderr, "ctxc: stdout: write error: %s\n", strerror(errno));
        } else {
            cli_report("ctxc: export", &err);
        }
        return CLI_EXIT_FAIL;
    }
    return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
}

/* --- main ----------------------------------------------------------------- */

/* --opt=value is --opt value (the usual form): an argument "--NAME=VALUE"
 * (NAME lower-case letters, digits and dashes) becomes two, unless it is
 * the value of an option before it. */
static const char *const cli_value_options[] = {
    "--history",   "--profile",  "--workspace",     "--provider",
    "--model",     "--base-url", "--key-env",       "--ca-file",
    "--system",    "--strategy", "--context-limit", "--threshold",
    "--preserve",  "--top-preserve", "--density",   "-o",
    "--todos",     "--transcript", "--header",      "--bytes",
    "--timeout-ms", NULL,
};

static bool cli_takes_value(const char *a) {
    for (size_t i = 0; cli_value_options[i] != NULL; i++) {
        if (strcmp(a, cli_value_options[i]) == 0) {
            return true;
        }
    }
    return false;
}

static char **cli_split_eq(int *argc, char **argv) {
    static char *out[512];
    static char names[64][64];
    size_t n = 0, used = 0;
    for (int i = 0; i < *argc; i++) {
        const char *a = argv[i];
        const char *eq = strncmp(a, "--", 2) == 0 ? strchr(a, '=') : NULL;
        bool name_ok = eq != NULL && eq > a + 2 && (size_t)(eq - a) < 64;
        for (const char *c = a + 2; name_ok && c < eq; c++) {
            name_ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') ||
                      *c == '-';
        }
        bool value = i > 0 && cli_takes_value(argv[i - 1]);
        if (name_ok && !value && used < 64 && n + 2 < 512) {
            snprintf(names[used], sizeof names[used], "%.*s", (int)(eq - a),
                     a);
            out[n++] = names[used++];
            out[n++] = argv[i] + (eq - a) + 1;
        } else if (n + 1 < 512) {
            out[n++] = argv[i];
        }
    }
    out[n] = NULL;
    *argc = (int)n;
    return out;
}

static bool cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int main(int argc, char **argv) {
    const char *cmd;
    const char *file = NULL;
    bool entries = false;

    if (argc < 2) {
        return cli_usage_fail(NULL, "missing command");
    }
    argv = cli_split_eq(&argc, argv);
    cmd = argv[1];
    if (cli_is_help(cmd)) {
        cli_usage(stdout);
        return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (strcmp(cmd, "help") == 0) {
        if (argc > 3) {
            return cli_usage_fail("help", "one COMMAND at a time");
        }
        if (argc == 2) {
            cli_usage(stdout);
        } else if (cli_is_help(argv[2])) {
            (void)cli_help_command("help", stdout);
        } else if (!cli_help_command(argv[2], stdout)) {
            char hint[160];
            cli_suggest(argv[2], cli_command_names(), hint, sizeof hint);
            return cli_usage_fail(NULL, "help: no command '%s'%s", argv[2],
                                  hint);
        }
        return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (strcmp(cmd, "--version") == 0) {
        if (argc != 2) {
            return cli_usage_fail(NULL, "--version takes no arguments");
        }
        printf("ctxc %s\n", ctxc_version());
        return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
    }
    if (cmd[0] == '-') {
        static const char *const global_options[] = {"--help", "--version",
                                                     NULL};
        return cli_unknown_option(NULL, cmd, global_options);
    }
    /* `ctxc CMD ... --help`: that command's usage */
    for (int i = 2; i < argc; i++) {
        if (cli_is_help(argv[i]) && cli_help_command(cmd, stdout)) {
            return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        }
    }
    if (strcmp(cmd, "compress") == 0) {
        return cli_cmd_compress(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "chat") == 0) {
        return cli_cmd_chat(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "repl") == 0) {
        return cli_cmd_repl(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "restore") == 0) {
        return cli_cmd_restore(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "prompts") == 0) {
        return cli_cmd_prompts(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "http-get") == 0) {
        return cli_cmd_http_get(argc - 2, argv + 2);
    }
    if (strcmp(cmd, "stats") != 0 && strcmp(cmd, "fmt") != 0) {
        char hint[160];
        cli_suggest(cmd, cli_command_names(), hint, sizeof hint);
        return cli_usage_fail(NULL, "unknown command '%s'%s", cmd, hint);
    }

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--entries") == 0 && strcmp(cmd, "stats") == 0) {
            entries = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const stats_options[] = {"--entries", "--help",
                                                        NULL};
            static const char *const fmt_options[] = {"--help", NULL};
            return cli_unknown_option(cmd, a,
                                      strcmp(cmd, "stats") == 0 ? stats_options
                                                                : fmt_options);
        } else if (file == NULL) {
            file = a;
        } else {
            return cli_usage_fail(cmd, "unexpected argument '%s'", a);
        }
    }
    if (file == NULL) {
        return cli_usage_fail(cmd, "missing FILE");
    }

    if (strcmp(cmd, "stats") == 0) {
        return cli_cmd_stats(file, entries);
    }
    return cli_cmd_fmt(file);
}
