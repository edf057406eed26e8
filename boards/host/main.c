/*
 * ctxc — host CLI (built as build/host/ctxc).
 *
 *   ctxc stats FILE|- [--entries]   figures of an imported history
 *   ctxc fmt FILE|-                 canonical IContent JSONL on stdout
 *   ctxc compress FILE ...          see cli_compress.c
 *   ctxc prompts list|show|install  see cli_prompts.c
 *   ctxc repl / ctxc chat ...       see cli_repl.c
 *
 * The file is streamed line by line through one static buffer into
 * ctxc_import_line(); nothing is allocated. The history is declared with
 * CTXC_HISTORY_DEFINE_DEFAULT, so its size comes from the host board's
 * ctxc_config.h.
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

static const char cli_usage_text1[] =
    "usage: ctxc COMMAND [ARGS]\n"
    "       ctxc --help | --version\n"
    "\n"
    "Commands:\n"
    "  stats FILE [--entries]  import FILE and print entries per speaker,\n"
    "                          blocks per type, tool calls and responses\n"
    "                          (with the unpaired ones), the token estimate\n"
    "                          and the memory used; --entries adds one line\n"
    "                          per entry: INDEX SPEAKER TOKENS [pinned]\n"
    "  restore FILE ID         the block behind the pointer [ctxc:restore ID]\n"
    "                          of FILE, from the spill store\n"
    "                          (compression.density.spillDir)\n"
    "  fmt FILE                import FILE and write it to stdout as\n"
    "                          canonical IContent JSON Lines\n"
    "  compress FILE [--profile NAME] [--strategy NAME] [--context-limit N]\n"
    "           [--threshold X]"
    " [--preserve X] [--top-preserve X] [--workspace DIR]\n"
    "           [--density KEY=VALUE ...] [--optimize-only] [-o OUT]\n"
    "           [--provider P] [--model M] [--base-url URL] [--key-env VAR]\n"
    "           [--no-stream] [--todos FILE.json] [--transcript PATH]\n"
    "                          run the density step (strategies that have\n"
    "                          one) and the strategy; write the compressed\n"
    "                          JSONL to stdout or OUT and a before/after\n"
    "                          table to stderr. X is a fraction (0.85).\n"
    "                          --density keys: readWritePruning, fileDedupe,\n"
    "                          recencyPruning (true|false), recencyRetention\n"
    "                          (N). --workspace defaults to metadata.cwd of\n"
    "                          the first entry. --optimize-only runs only the\n"
    "                          density step. middle-out and one-shot ask a\n"
    "                          model: --provider (openai, anthropic, gemini),\n"
    "                          --model, --base-url, --key-env (the "
    "environment\n"
    "                          variable holding the API key), or a --profile\n"
    "                          with them; --todos and --transcript go into "
    "the\n"
    "                          summary request. --no-stream: the model\n"
    "                          answers in one JSON body, not streamed (the\n"
    "                          setting stream; for servers and proxies that\n"
    "                          do not stream).\n"
    "";
/* two parts: a C string literal stays under 4095 bytes */
static const char cli_usage_text2[] =
    "  repl [--history FILE] [--profile NAME] [--workspace DIR]\n"
    "                          interactive session: /set, /settings,\n"
    "                          /profile, /stats, /compress, /save, /help;\n"
    "                          Tab completes; reads stdin when not a tty\n"
    "  chat [--history FILE] [--profile NAME] [--workspace DIR]\n"
    "       [--provider P] [--model M] [--base-url URL] [--key-env VAR]\n"
    "       [--system TEXT] [--no-stream]\n"
    "                          chat with the active provider/model: each\n"
    "                          line is added to the history, compressed when\n"
    "                          it outgrows the threshold, sent whole; the\n"
    "                          reply streams to stdout (--no-stream: one\n"
    "                          JSON answer, printed whole) and is added as\n"
    "                          an ai entry; the repl's /commands work; reads\n"
    "                          stdin when not a tty. On a terminal, control\n"
    "                          characters of the reply are shown, not\n"
    "                          obeyed: ESC as ^[, BEL ^G, CR ^M (C0 controls\n"
    "                          but newline and tab: ^ and the byte + 0x40),\n"
    "                          DEL ^?, C1 controls as <U+0080>..<U+009F>;\n"
    "                          the history keeps the reply as it came\n"
    "  prompts list|show NAME|install [--provider P] [--model M]\n"
    "                          the compression prompts under $CTXC_HOME\n"
    "                          (default ~/.config/ctxc): the level each one\n"
    "                          resolves from, the text, or install the\n"
    "                          built-in ones (see `ctxc prompts --help`)\n"
    "  http-get URL [--ca-file FILE] [--header 'Name: value' ...] [--bytes N]\n"
    "           [--timeout-ms N]\n"
    "                          fetch URL through the port (TLS verified) and\n"
    "                          print the headers, the first N bytes of the\n"
    "                          body (512) and the status: a network check;\n"
    "                          control characters in headers and body are\n"
    "                          always shown as chat shows them (^[, <U+009B>)\n"
    "\n"
    "FILE is a JSON Lines file in the IContent interchange format or the\n"
    "OpenAI chat-messages format (one entry per line); - reads stdin.\n"
    "\n"
    "Options:\n"
    "  -h, --help              print this help and exit\n"
    "  --version               print the version and exit\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or I/O error, 2 usage error.\n";

static void cli_usage(FILE *out) {
    fputs(cli_usage_text1, out);
    fputs(cli_usage_text2, out);
}

/* --- Storage -------------------------------------------------------------- */

CTXC_HISTORY_DEFINE_DEFAULT(cli_history);
static ctxc_import_t cli_import;
/* Tool-call id index of cli_history: pairing checks in O(1) per block for
 * up to two distinct call ids per entry on average (scans beyond). */
static uint32_t
    cli_ids[CTXC_HISTORY_ID_INDEX_BYTES(2u * CTXC_CFG_HISTORY_MAX_ENTRIES) /
            sizeof(uint32_t)];

ctxc_history_t *cli_history_get(void) { return &cli_history; }

/* Largest line accepted: a line cannot need more than the whole arena. */
#define CLI_MAX_LINE ((size_t)CTXC_CFG_HISTORY_ARENA_BYTES)
/* Bytes asked from fread() at a time. */
#define CLI_READ_CHUNK ((size_t)65536)
/* Holds one pending line of up to CLI_MAX_LINE bytes plus its "\n" and
 * one chunk of read-ahead. */
static char cli_buf[(size_t)CTXC_CFG_HISTORY_ARENA_BYTES + 1u + 65536u];

/* --- Output helpers ------------------------------------------------------- */

static void cli_usage_error(const char *what) {
    if (what != NULL) {
        fprintf(stderr, "ctxc: %s\n", what);
    }
    cli_usage(stderr);
}

static const char *cli_reason(const ctxc_error_t *err) {
    const char *msg = ctxc_error_message(err);
    if (msg == NULL || msg[0] == '\0') {
        msg = ctxc_strerror(err->status);
    }
    return msg;
}

void cli_report(const char *name, const ctxc_error_t *err) {
    if (err->line != 0) {
        fprintf(stderr, "%s:%" PRIu32 ": %s\n", name, err->line,
                cli_reason(err));
    } else {
        fprintf(stderr, "%s: %s\n", name, cli_reason(err));
    }
}

/* --- Import --------------------------------------------------------------- */

/* Imports one line; on failure reports it (the import is already rolled
 * back by the library). */
static bool cli_feed(const char *name, const char *line, size_t len) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (ctxc_import_line(&cli_import, line, len, &err) != CTXC_OK) {
        cli_report(name, &err);
        return false;
    }
    return true;
}

static void cli_line_too_long(const char *name, uint32_t line) {
    fprintf(stderr,
            "%s:%" PRIu32 ": line longer than the history arena (%zu bytes)\n",
            name, line, CLI_MAX_LINE);
}

/* Streams `fp` into cli_history. `name` is used in messages. */
static bool cli_import_stream(FILE *fp, const char *name) {
    ctxc_error_t err;
    size_t start = 0; /* first byte of the pending line */
    size_t scan = 0;  /* where the search for '\n' resumes */
    size_t end = 0;   /* end of the buffered data */
    uint32_t line = 0;
    bool eof = false;

    memset(&err, 0, sizeof err);
    ctxc_history_set_id_index(&cli_history, cli_ids, sizeof cli_ids);
    if (ctxc_import_begin(&cli_import, &cli_history, CTXC_FORMAT_AUTO, &err) !=
        CTXC_OK) {
        cli_report(name, &err);
        return false;
    }

    for (;;) {
        const char *nl = memchr(cli_buf + scan, '\n', end - scan);
        if (nl != NULL) {
            size_t len = (size_t)(nl - (cli_buf + start)) + 1u;
            line++;
            if (len - 1u > CLI_MAX_LINE) {
                ctxc_import_abort(&cli_import);
                cli_line_too_long(name, line);
                return false;
            }
            if (!cli_feed(name, cli_buf + start, len)) {
                return false;
            }
            start += len;
            scan = start;
            continue;
        }
        scan = end;
        if (end - start > CLI_MAX_LINE) {
            ctxc_import_abort(&cli_import);
            cli_line_too_long(name, line + 1u);
            return false;
        }
        if (eof) {
            break;
        }
        if (sizeof cli_buf - end < CLI_READ_CHUNK) {
            /* Move the pending partial line to the front. Since it is at
             * most CLI_MAX_LINE bytes, a whole chunk fits behind it. */
            memmove(cli_buf, cli_buf + start, end - start);
            end -= start;
            scan -= start;
            start = 0;
        }
        size_t n = fread(cli_buf + end, 1, CLI_READ_CHUNK, fp);
        if (n == 0) {
            if (ferror(fp)) {
                int e = errno;
                ctxc_import_abort(&cli_import);
                fprintf(stderr, "%s: read error: %s\n", name, strerror(e));
                return false;
            }
            eof = true;
        }
        end += n;
    }

    if (end > start) { /* last line without "\n" */
        line++;
        if (!cli_feed(name, cli_buf + start, end - start)) {
            return false;
        }
    }

    if (ctxc_import_end(&cli_import, &err) != CTXC_OK) {
        cli_report(name, &err);
        return false;
    }
    return true;
}

/* Opens `path` ("-" = stdin) and imports it. */
bool cli_load(const char *path, const char **name_out) {
    bool is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "<stdin>" : path;
    FILE *fp = stdin;
    bool ok;

    *name_out = name;
    if (!is_stdin) {
        errno = 0;
        fp = fopen(path, "rb");
        if (fp == NULL) {
            int e = errno;
            fprintf(stderr, "%s: cannot open: %s\n", name, strerror(e));
            return false;
        }
    }
    errno = 0;
    ok = cli_import_stream(fp, name);
    if (!is_stdin) {
        fclose(fp);
    }
    return ok;
}

/* --- Statistics ----------------------------------------------------------- */

static int cli_cmd_stats(const char *path, bool per_entry) {
    const char *name;
    ctxc_history_stats_t st;
    ctxc_history_usage_t use;

    if (!cli_load(path, &name)) {
        return CLI_EXIT_FAIL;
    }
    ctxc_history_stats(&cli_history,
                       &st); /* linear: the history has an index */
    ctxc_history_usage(&cli_history, &use);

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
        size_t count = ctxc_history_count(&cli_history);
        for (size_t i = 0; i < count; i++) {
            ctxc_entry_t e;
            if (ctxc_history_get(&cli_history, i, &e) != CTXC_OK) {
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

ctxc_status_t cli_write_file(void *user, const char *data, size_t len) {
    FILE *out = user;
    if (len > 0 && fwrite(data, 1, len, out) != len) {
        return CTXC_E_IO;
    }
    return CTXC_OK;
}

static int cli_cmd_fmt(const char *path) {
    const char *name;
    ctxc_error_t err;

    if (!cli_load(path, &name)) {
        return CLI_EXIT_FAIL;
    }
    memset(&err, 0, sizeof err);
    errno = 0;
    if (ctxc_export(&cli_history, cli_write_file, stdout, &err) != CTXC_OK) {
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

static bool cli_is_help(const char *arg) {
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int main(int argc, char **argv) {
    const char *cmd;
    const char *file = NULL;
    bool entries = false;

    if (argc < 2) {
        cli_usage_error("missing command");
        return CLI_EXIT_USAGE;
    }
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            cli_usage(stdout);
            return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
        }
    }
    cmd = argv[1];
    if (strcmp(cmd, "--version") == 0) {
        if (argc != 2) {
            cli_usage_error("--version takes no arguments");
            return CLI_EXIT_USAGE;
        }
        printf("ctxc %s\n", ctxc_version());
        return cli_stdout_ok("ctxc") ? CLI_EXIT_OK : CLI_EXIT_FAIL;
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
        fprintf(stderr, "ctxc: unknown command '%s'\n", cmd);
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }

    for (int i = 2; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--entries") == 0 && strcmp(cmd, "stats") == 0) {
            entries = true;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "ctxc: %s: unknown option '%s'\n", cmd, a);
            cli_usage(stderr);
            return CLI_EXIT_USAGE;
        } else if (file == NULL) {
            file = a;
        } else {
            fprintf(stderr, "ctxc: %s: unexpected argument '%s'\n", cmd, a);
            cli_usage(stderr);
            return CLI_EXIT_USAGE;
        }
    }
    if (file == NULL) {
        fprintf(stderr, "ctxc: %s: missing FILE\n", cmd);
        cli_usage(stderr);
        return CLI_EXIT_USAGE;
    }

    if (strcmp(cmd, "stats") == 0) {
        return cli_cmd_stats(file, entries);
    }
    return cli_cmd_fmt(file);
}
