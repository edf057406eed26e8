/*
 * ctxc host CLI — help and usage errors.
 *
 *   ctxc --help              the commands, one line each
 *   ctxc help CMD            that command's usage (also `ctxc CMD --help`)
 *   a usage error            one line "ctxc CMD: what went wrong" and
 *                            "see 'ctxc CMD --help'", on stderr, exit 2
 *
 * Close matches are suggested for commands, options and the repl's slash
 * commands (`ctxc stat`, `--strat`, `/sett`): a candidate the typed word is
 * a prefix of, or one within a small edit distance.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char help_global[] =
    "usage: ctxc COMMAND [ARGS]\n"
    "       ctxc help COMMAND | ctxc COMMAND --help\n"
    "       ctxc --help | --version\n"
    "\n"
    "Commands:\n"
    "  stats FILE [--entries]  figures of an imported history (entries,\n"
    "                          blocks, tool calls, tokens, memory)\n"
    "  fmt FILE                the history as canonical IContent JSON Lines\n"
    "  restore FILE ID         the block behind the pointer [ctxc:restore ID]\n"
    "                          of FILE, from the spill store\n"
    "  compress FILE ...       compress a history with a strategy\n"
    "  repl ...                interactive session: settings, /compress,\n"
    "                          /save; reads stdin when not a terminal\n"
    "  chat ...                chat with a model; the history compressed\n"
    "                          as it grows\n"
    "  prompts list|show|install\n"
    "                          the compression prompts under $CTXC_HOME\n"
    "  http-get URL ...        fetch a URL through the port: a network check\n"
    "  help COMMAND            the usage of COMMAND\n"
    "\n"
    "FILE is a JSON Lines file in the IContent interchange format or the\n"
    "OpenAI chat-messages format (one entry per line); - reads stdin.\n"
    "Settings and prompts live under $CTXC_HOME (default ~/.config/ctxc).\n"
    "\n"
    "Exit status: 0 success, 1 invalid input or I/O error (or, for a\n"
    "scripted repl or chat, a line that failed), 2 usage error.\n";

static const char help_stats[] =
    "usage: ctxc stats FILE [--entries]\n"
    "Imports FILE (- : stdin) and prints the entries per speaker, the blocks\n"
    "per type, the tool calls and responses (with the unpaired ones), the\n"
    "token estimate and the memory used (the history arena). --entries adds\n"
    "one line per entry: INDEX SPEAKER TOKENS [pinned].\n";

static const char help_fmt[] =
    "usage: ctxc fmt FILE\n"
    "Imports FILE (- : stdin) and writes it to stdout as canonical IContent\n"
    "JSON Lines.\n";

static const char help_compress[] =
    "usage: ctxc compress FILE [--profile NAME] [--strategy NAME]\n"
    "           [--context-limit N] [--threshold X] [--preserve X]\n"
    "           [--top-preserve X] [--workspace DIR] [--density KEY=VALUE ...]\n"
    "           [--optimize-only] [-o OUT] [--provider P] [--model M]\n"
    "           [--base-url URL] [--key-env VAR] [--ca-file FILE] [--no-stream]\n"
    "           [--todos FILE.json] [--transcript PATH] [--verbose]\n"
    "Runs the density step (strategies that have one) and the strategy;\n"
    "writes the compressed JSONL to stdout or OUT and a before/after table to\n"
    "stderr. X is a fraction (0.85).\n"
    "  --strategy NAME       middle-out, top-down-truncation, one-shot,\n"
    "                        high-density (those compiled in)\n"
    "  --context-limit N     the model's context window in tokens\n"
    "  --density KEY=VALUE   readWritePruning, fileDedupe, recencyPruning\n"
    "                        (true|false), recencyRetention (N)\n"
    "  --workspace DIR       defaults to metadata.cwd of the first entry\n"
    "  --optimize-only       only the density step\n"
    "  middle-out and one-shot ask a model for a summary:\n"
    "  --provider P          openai, anthropic, gemini (those compiled in)\n"
    "  --model M, --base-url URL\n"
    "  --key-env VAR         the environment variable holding the API key\n"
    "  --ca-file FILE        CA certificates to trust (PEM; the setting\n"
    "                        network.ca-file)\n"
    "  --no-stream           one JSON answer, not streamed (setting stream)\n"
    "  --todos FILE.json, --transcript PATH: go into the summary request\n"
    "  --verbose             status codes and the library's log\n"
    "Options are settings for this run only (over --profile NAME, then\n"
    "$CTXC_HOME/settings.json, then the defaults). Exit status 3: written,\n"
    "but still over --context-limit (the table says by how much).\n";

static const char help_repl[] =
    "usage: ctxc repl [--history FILE] [--profile NAME] [--workspace DIR]\n"
    "           [--provider P] [--model M] [--base-url URL] [--key-env VAR]\n"
    "           [--ca-file FILE] [--verbose]\n"
    "An interactive session over a history: /set, /settings, /profile,\n"
    "/stats, /compress, /pin N, /unpin N, /restore ID, /save [FILE], /help,\n"
    "/quit; Tab completes. Any other line is added as a human message; a\n"
    "paste is one message, and so are the lines between a line that starts\n"
    "with \"\"\" and one that ends with \"\"\". The provider options set the\n"
    "model that writes the summaries of middle-out and one-shot (or /set\n"
    "provider, /set model); without --key-env the provider's usual variable\n"
    "holds the key (OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or\n"
    "GOOGLE_API_KEY). --verbose shows status codes and the library's log.\n"
    "When stdin is not a terminal the commands are read from it one per line;\n"
    "errors go to stderr and the exit status is 1 when any line failed.\n"
    "--history FILE is written (atomically) before each prompt; the first\n"
    "write over a file loaded keeps it as FILE.bak.\n";

static const char help_chat[] =
    "usage: ctxc chat [--history FILE] [--profile NAME] [--workspace DIR]\n"
    "           [--provider P] [--model M] [--base-url URL] [--key-env VAR]\n"
    "           [--ca-file FILE] [--system TEXT] [--no-stream] [--verbose]\n"
    "Chat with the active provider/model: each line is added to the history,\n"
    "compressed when it outgrows the threshold, sent whole; the reply\n"
    "streams to stdout (--no-stream: one JSON answer, printed whole) and is\n"
    "added as an ai entry. A paste is one message, and so are the lines\n"
    "between a line that starts with \"\"\" and one that ends with \"\"\".\n"
    "Without --key-env the provider's usual variable holds the key\n"
    "(OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY or GOOGLE_API_KEY;\n"
    "its name is said, never the key). A reply is kept up to 65535 bytes\n"
    "(the chat's reply buffer): one cut there, or by the model's output\n"
    "limit, is kept as it was shown and marked as cut (metadata.cut). The\n"
    "repl's commands work: /set, /settings, /profile, /stats, /compress,\n"
    "/pin N, /unpin N, /restore ID, /save [FILE], /help, /quit. On a\n"
    "terminal, control characters of the reply are shown, not obeyed (ESC\n"
    "as ^[, C1 as <U+009B>); the history keeps the reply as it came. When\n"
    "stdin is not a terminal lines are read from it; notes and errors go to\n"
    "stderr and the exit status is 1 when any line failed. --history FILE\n"
    "is written (atomically) before each prompt; the first write over a\n"
    "file loaded keeps it as FILE.bak. --verbose shows status codes and the\n"
    "library's log.\n";

static const char help_prompts[] =
    "usage: ctxc prompts list [--provider P] [--model M]\n"
    "       ctxc prompts show NAME [--provider P] [--model M]\n"
    "       ctxc prompts install\n"
    "\n"
    "Prompts live under $CTXC_HOME (default ~/.config/ctxc). For a provider\n"
    "P and model M, NAME resolves from the first of:\n"
    "  providers/P/models/M/compression/NAME.md   (level model)\n"
    "  providers/P/compression/NAME.md            (level provider)\n"
    "  compression/NAME.md                        (level base)\n"
    "  the copy built into ctxc                   (level built-in)\n"
    "P and M are made into safe folder names (lower case, [a-z0-9._-]).\n"
    "list and show write nothing; install writes the built-in prompts\n"
    "into $CTXC_HOME to be edited (never overwriting a file you changed).\n"
    "NAME: middle-out, compression/middle-out or compression/middle-out.md.\n";

static const char help_http_get[] =
    "usage: ctxc http-get URL [--ca-file FILE] [--header 'Name: value' ...]\n"
    "                         [--bytes N] [--timeout-ms N]\n"
    "Fetches URL through the port's transport (TLS verified against the\n"
    "system CA bundle or --ca-file / network.ca-file) and prints the status,\n"
    "the response headers and the first N bytes of the body (default 512),\n"
    "control characters shown as ^[ (C0, DEL ^?) and <U+0080>..<U+009F>.\n";

static const char help_restore[] =
    "usage: ctxc restore FILE ID\n"
    "Prints the block that the density step stored before it pruned it: the\n"
    "one behind the pointer [ctxc:restore ID] of FILE (the ID must be in\n"
    "FILE), read from the spill store (the setting\n"
    "compression.density.spillDir under $CTXC_HOME).\n";

static const char help_help[] = "usage: ctxc help [COMMAND]\n"
                                "Prints the usage of COMMAND, or the list of "
                                "commands.\n";

static const struct {
    const char *name;
    const char *text;
} help_commands[] = {
    {"stats", help_stats},     {"fmt", help_fmt},   {"compress", help_compress},
    {"repl", help_repl},       {"chat", help_chat}, {"prompts", help_prompts},
    {"http-get", help_http_get},        {"restore", help_restore},
    {"help", help_help},
};

static const char *const command_names[] = {
    "stats", "fmt", "compress", "repl", "chat", "prompts", "http-get",
    "restore", "help",
    NULL,
};

void cli_help_global(FILE *out) { fputs(help_global, out); }

bool cli_help_command(const char *cmd, FILE *out) {
    for (size_t i = 0; i < sizeof help_commands / sizeof help_commands[0];
         i++) {
        if (strcmp(cmd, help_commands[i].name) != 0) {
            continue;
        }
        fputs(help_commands[i].text, out);
        return true;
    }
    return false;
}

const char *const *cli_command_names(void) { return command_names; }

/* Edit distance (Damerau: a swap of neighbours counts 1), case folded;
 * words longer than 63 bytes are never close. */
static size_t distance(const char *a, const char *b) {
    size_t n = strlen(a), m = strlen(b);
    if (n > 63 || m > 63) {
        return 99;
    }
    size_t d[64][64];
    for (size_t i = 0; i <= n; i++) {
        d[i][0] = i;
    }
    for (size_t j = 0; j <= m; j++) {
        d[0][j] = j;
    }
    for (size_t i = 1; i <= n; i++) {
        for (size_t j = 1; j <= m; j++) {
            char x = a[i - 1], y = b[j - 1];
            x = (char)(x >= 'A' && x <= 'Z' ? x + 32 : x);
            y = (char)(y >= 'A' && y <= 'Z' ? y + 32 : y);
            size_t best = d[i - 1][j - 1] + (x == y ? 0u : 1u);
            if (d[i - 1][j] + 1 < best) {
                best = d[i - 1][j] + 1;
            }
            if (d[i][j - 1] + 1 < best) {
                best = d[i][j - 1] + 1;
            }
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                d[i - 2][j - 2] + 1 < best) {
                best = d[i - 2][j - 2] + 1;
            }
            d[i][j] = best;
        }
    }
    return d[n][m];
}

size_t cli_suggest(const char *typed, const char *const *cands, char *buf,
                   size_t cap) {
    size_t len = strlen(typed);
    /* a leading "--" or "/" does not count towards closeness */
    size_t skip = strspn(typed, "-/");
    size_t limit = len - skip <= 2 ? 1 : len - skip <= 5 ? 2 : 3;
    const char *pick[3];
    size_t n = 0;
    for (size_t pass = 0; pass < 2 && n == 0; pass++) {
        for (size_t i = 0; cands[i] != NULL && n < 3; i++) {
            bool close =
                pass == 0 ? len > skip && strncmp(cands[i], typed, len) == 0 &&
                                cands[i][len] != '\0'
                          : distance(typed, cands[i]) <= limit;
            if (close && strcmp(cands[i], typed) != 0) {
                pick[n++] = cands[i];
            }
        }
        if (pass == 0) { /* a word a prefix of, and one distance 1 from */
            for (size_t i = 0; n > 0 && n < 3 && cands[i] != NULL; i++) {
                bool dup = false;
                for (size_t k = 0; k < n; k++) {
                    dup = dup || pick[k] == cands[i];
                }
                if (!dup && strcmp(cands[i], typed) != 0 &&
                    distance(typed, cands[i]) <= 1) {
                    pick[n++] = cands[i];
                }
            }
        }
    }
    if (cap == 0) {
        return n;
    }
    buf[0] = '\0';
    if (n == 0) {
        return 0;
    }
    size_t o = (size_t)snprintf(buf, cap, "; did you mean ");
    for (size_t k = 0; k < n && o < cap; k++) {
        o += (size_t)snprintf(buf + o, cap - o, "%s'%s'",
                              k == 0 ? "" : k + 1 == n ? " or " : ", ",
                              pick[k]);
    }
    if (o < cap) {
        snprintf(buf + o, cap - o, "?");
    }
    return n;
}

int cli_usage_fail(const char *cmd, const char *fmt, ...) {
    va_list ap;
    fprintf(stderr, "ctxc%s%s: ", cmd != NULL ? " " : "",
            cmd != NULL ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "\nsee 'ctxc %s%s'\n", cmd != NULL ? cmd : "",
            cmd != NULL ? " --help" : "--help");
    return CLI_EXIT_USAGE;
}

int cli_unknown_option(const char *cmd, const char *opt,
                       const char *const *options) {
    char hint[160];
    cli_suggest(opt, options, hint, sizeof hint);
    return cli_usage_fail(cmd, "unknown option '%s'%s", opt, hint);
}
