/*
 * ctxc host CLI — `ctxc repl`: an interactive session over a JSONL history.
 *
 *   ctxc repl [--history FILE] [--profile NAME] [--workspace DIR]
 *
 * Settings come from $CTXC_HOME (default ~/.config/ctxc): settings.json and
 * profiles/<name>.json, through the POSIX port. On a terminal the line is
 * edited with libedit (history, Tab completes commands, setting keys,
 * values and profile names); otherwise commands are read from stdin one per
 * line, so the REPL can be scripted. A line that is not a command is added
 * to the history as a human message. A line is taken whole or not at all:
 * one longer than REPL_LINE_MAX bytes, or with a NUL byte, is an error and
 * nothing of it is added or run.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <histedit.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc/settings.h"
#include "ctxc_port_posix.h"

static ctxc_settings_store_t repl_settings;
static ctxc_posix_fs_t repl_pfs;
static ctxc_session_t repl_session;
static const char *repl_history_file;

static const char *const repl_commands[] = {
    "/compress", "/help", "/quit", "/save", "/stats", NULL,
};

static const char repl_help[] =
    "Commands:\n"
    "  /set KEY VALUE | /set unset KEY     change a setting for this session\n"
    "  /settings                           every setting: value and source\n"
    "  /settings set KEY VALUE | unset KEY change the settings file\n"
    "  /profile save|load|delete NAME | list\n"
    "  /stats                              entries, tokens, settings in force\n"
    "  /compress                           run the configured strategy\n"
    "  /save [FILE]                        write the history (atomically)\n"
    "  /help, /quit\n"
    "Any other line is added to the history as a human message.\n"
    "Tab completes commands, setting keys, values and profile names.\n";

static ctxc_status_t repl_write(void *user, const char *data, size_t len) {
    (void)user;
    return fwrite(data, 1, len, stdout) == len ? CTXC_OK : CTXC_E_IO;
}

static void repl_error(const char *what, const ctxc_error_t *err) {
    printf("error: %s%s%s\n", what, what[0] != '\0' ? ": " : "",
           ctxc_error_message(err));
}

static void repl_stats(void) {
    ctxc_history_t *h = cli_history_get();
    ctxc_error_t err;
    const ctxc_strategy_t *st = NULL;
    printf("entries %zu, tokens %" PRIu64 "\n", ctxc_history_count(h),
           ctxc_history_tokens(h));
    if (ctxc_settings_strategy(&repl_settings, &st, &err) != CTXC_OK) {
        repl_error("compression.strategy", &err);
        return;
    }
    uint64_t limit = ctxc_settings_context_limit(&repl_settings);
    uint16_t thr = ctxc_settings_threshold(&repl_settings, st);
    printf("strategy %s, threshold %u.%03u", st->name, thr / 1000u,
           thr % 1000u);
    if (limit > 0) {
        printf(", context limit %" PRIu64 " (compresses above %" PRIu64
               " tokens)",
               limit, limit * thr / 1000u);
    } else {
        printf(", context-limit not set");
    }
    if (repl_settings.profile[0] != '\0') {
        printf(", profile %s loaded", repl_settings.profile);
    }
    putchar('\n');
}

static void repl_compress(void) {
    ctxc_history_t *h = cli_history_get();
    size_t n0 = ctxc_history_count(h);
    uint64_t t0 = ctxc_history_tokens(h);
    ctxc_error_t err;
    if (ctxc_session_optimize(&repl_session, &err) != CTXC_OK) {
        repl_error("density step", &err);
        return;
    }
    if (ctxc_session_compress(&repl_session, &err) != CTXC_OK) {
        repl_error("compress", &err);
        return;
    }
    const ctxc_strategy_t *st = NULL;
    (void)ctxc_settings_strategy(&repl_settings, &st, NULL);
    printf("compressed with %s: %zu -> %zu entries, %" PRIu64 " -> %" PRIu64
           " tokens\n",
           st != NULL ? st->name : "?", n0, ctxc_history_count(h), t0,
           ctxc_history_tokens(h));
}

/* Writes the history to path (or the --history file): cli_save_history. */
static void repl_save(const char *path) {
    if (path == NULL) {
        path = repl_history_file;
    }
    if (path == NULL) {
        printf("error: /save needs a FILE (no --history given)\n");
        return;
    }
    if (!cli_save_history(cli_history_get(), path, "error: /save")) {
        return;
    }
    printf("saved %zu entries to %s\n", ctxc_history_count(cli_history_get()),
           path);
}

static void repl_add(const char *line) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(line);
    ctxc_entry_in_t in;
    memset(&in, 0, sizeof in);
    in.speaker = CTXC_SPEAKER_HUMAN;
    in.blocks = &b;
    in.block_count = 1;
    ctxc_error_t err;
    if (ctxc_session_add(&repl_session, &in, &err) != CTXC_OK) {
        repl_error("add", &err);
    }
}

/* One line; false to quit. */
static bool repl_line(char *line) {
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
        line[--n] = '\0';
    }
    const char *p = line;
    while (*p == ' ' || *p == '\t') {
        p++;
    }
    if (*p == '\0') {
        return true;
    }
    if (*p != '/') {
        repl_add(p);
        return true;
    }
    char word[32];
    size_t w = strcspn(p, " \t");
    snprintf(word, sizeof word, "%.*s", (int)(w < 31 ? w : 31), p);
    const char *arg = p + w;
    while (*arg == ' ' || *arg == '\t') {
        arg++;
    }
    if (strcmp(word, "/quit") == 0 || strcmp(word, "/exit") == 0) {
        return false;
    }
    if (strcmp(word, "/help") == 0) {
        fputs(repl_help, stdout);
    } else if (strcmp(word, "/stats") == 0) {
        repl_stats();
    } else if (strcmp(word, "/compress") == 0) {
        repl_compress();
    } else if (strcmp(word, "/save") == 0) {
        repl_save(*arg != '\0' ? arg : NULL);
    } else {
        ctxc_error_t err;
        ctxc_status_t st =
            ctxc_settings_command(&repl_settings, p, repl_write, NULL, &err);
        if (st == CTXC_E_NOT_FOUND) { /* not a settings command word */
            printf("error: unknown command %s (try /help)\n", word);
        } else if (st != CTXC_OK) {
            repl_error("", &err);
        }
    }
    fflush(stdout);
    return true;
}

/* ---- completion
 * -------------------------------------------------------------- */

typedef struct {
    char cand[64][128];
    size_t n;
} cands_t;

static bool add_cand(void *user, const char *c) {
    cands_t *cs = user;
    if (cs->n < 64) {
        snprintf(cs->cand[cs->n++], sizeof cs->cand[0], "%s", c);
    }
    return true;
}

/* Candidates for the text before the cursor; *word_start set. */
static void repl_candidates(const char *text, cands_t *cs, size_t *word_start) {
    cs->n = 0;
    *word_start = 0;
    (void)ctxc_settings_complete(&repl_settings, text, word_start, add_cand, cs,
                                 NULL);
    /* the REPL's own commands, as the first word */
    if (strchr(text, ' ') == NULL && text[0] == '/') {
        *word_start = 0;
        for (size_t i = 0; repl_commands[i] != NULL; i++) {
            if (strncmp(repl_commands[i], text, strlen(text)) == 0) {
                add_cand(cs, repl_commands[i]);
            }
        }
    }
}

static unsigned char repl_complete(EditLine *el, int ch) {
    (void)ch;
    const LineInfo *li = el_line(el);
    char text[1024];
    size_t len = (size_t)(li->cursor - li->buffer);
    if (len >= sizeof text) {
        return CC_ERROR;
    }
    memcpy(text, li->buffer, len);
    text[len] = '\0';
    cands_t cs;
    size_t ws;
    repl_candidates(text, &cs, &ws);
    if (cs.n == 0) {
        return CC_ERROR;
    }
    size_t typed = len - ws;
    /* common prefix of the candidates */
    size_t common = strlen(cs.cand[0]);
    for (size_t i = 1; i < cs.n; i++) {
        size_t k = 0;
        while (k < common && cs.cand[i][k] == cs.cand[0][k]) {
            k++;
        }
        common = k;
    }
    if (common > typed) {
        char ins[128];
        snprintf(ins, sizeof ins, "%.*s", (int)(common - typed),
                 cs.cand[0] + typed);
        if (cs.n == 1) {
            strncat(ins, " ", sizeof ins - strlen(ins) - 1);
        }
        el_insertstr(el, ins);
        return CC_REFRESH;
    }
    if (cs.n == 1) {
        el_insertstr(el, " ");
        return CC_REFRESH;
    }
    putchar('\n');
    for (size_t i = 0; i < cs.n; i++) {
        printf("%s%s", i > 0 ? "  " : "", cs.cand[i]);
    }
    putchar('\n');
    fflush(stdout);
    return CC_REDISPLAY;
}

static const char *repl_prompt(EditLine *el) {
    (void)el;
    return "ctxc> ";
}

/* ---- main loop
 * ----------------------------------------------------------------- */

/* Longest line taken (bytes before its "\n"); both loops use repl_buf. */
#define REPL_LINE_MAX 65535u
static char repl_buf[REPL_LINE_MAX + 1u];

/* A whole line of len bytes is about to run: false (and an error, nothing
 * added or run) when it is too long or holds a NUL byte - a line is never
 * cut into pieces, which could run the rest as a command. */
static bool repl_line_ok(size_t len, bool nul) {
    if (len > REPL_LINE_MAX) {
        printf("error: line longer than %u bytes; ignored (nothing added or "
               "run)\n",
               REPL_LINE_MAX);
    } else if (nul) {
        printf("error: line contains a NUL byte; ignored (nothing added or "
               "run)\n");
    }
    fflush(stdout);
    return len <= REPL_LINE_MAX && !nul;
}

static int repl_loop_editline(void) {
    EditLine *el = el_init("ctxc", stdin, stdout, stderr);
    History *hist = history_init();
    HistEvent ev;
    if (el == NULL || hist == NULL) {
        fprintf(stderr, "ctxc repl: cannot start line editing\n");
        return CLI_EXIT_FAIL;
    }
    history(hist, &ev, H_SETSIZE, 500);
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_PROMPT, repl_prompt);
    el_set(el, EL_HIST, history, hist);
    el_set(el, EL_ADDFN, "ctxc-complete", "complete a command, key or value",
           repl_complete);
    el_set(el, EL_BIND, "^I", "ctxc-complete", NULL);
    for (;;) {
        int count = 0;
        const char *got = el_gets(el, &count);
        if (got == NULL || count <= 0) {
            putchar('\n');
            break;
        }
        size_t len = (size_t)count;
        if (got[len - 1] == '\n') {
            len--;
        }
        if (!repl_line_ok(len, memchr(got, '\0', len) != NULL)) {
            continue;
        }
        memcpy(repl_buf, got, len);
        repl_buf[len] = '\0';
        if (len > 0) {
            history(hist, &ev, H_ENTER, repl_buf);
        }
        if (!repl_line(repl_buf)) {
            break;
        }
    }
    history_end(hist);
    el_end(el);
    return CLI_EXIT_OK;
}

static int repl_loop_stdin(void) {
    for (;;) {
        size_t len = 0; /* REPL_LINE_MAX + 1: too long */
        bool nul = false;
        int c;
        while ((c = getc(stdin)) != EOF && c != '\n') {
            nul = nul || c == '\0';
            if (len < REPL_LINE_MAX) {
                repl_buf[len] = (char)c;
            }
            len += len <= REPL_LINE_MAX ? 1u : 0u;
        }
        if (c == EOF && ferror(stdin)) {
            fprintf(stderr, "ctxc repl: stdin: read error: %s\n",
                    strerror(errno));
            return CLI_EXIT_FAIL;
        }
        if (c == EOF && len == 0) {
            break;
        }
        if (repl_line_ok(len, nul)) {
            repl_buf[len] = '\0';
            if (!repl_line(repl_buf)) {
                break;
            }
        }
        if (c == EOF) {
            break;
        }
    }
    return CLI_EXIT_OK;
}

static int repl_usage(const char *what, const char *arg) {
    fprintf(stderr,
            "ctxc repl: %s%s\nusage: ctxc repl [--history FILE] "
            "[--profile NAME] [--workspace DIR]\n",
            what, arg);
    return CLI_EXIT_USAGE;
}

CTXC_WORK_DEFINE_DEFAULT(repl_work);

int cli_cmd_repl(int argc, char **argv) {
    const char *profile = NULL;
    const char *workspace = NULL;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool takes = strcmp(a, "--history") == 0 ||
                     strcmp(a, "--profile") == 0 ||
                     strcmp(a, "--workspace") == 0;
        if (takes && i + 1 >= argc) {
            return repl_usage("missing value after ", a);
        }
        if (strcmp(a, "--history") == 0) {
            repl_history_file = argv[++i];
        } else if (strcmp(a, "--profile") == 0) {
            profile = argv[++i];
        } else if (strcmp(a, "--workspace") == 0) {
            workspace = argv[++i];
        } else {
            return repl_usage("unexpected argument: ", a);
        }
    }
    ctxc_error_t err;
    if (!cli_settings_open(&repl_settings, &repl_pfs, profile, "ctxc repl")) {
        return CLI_EXIT_FAIL;
    }
    ctxc_history_t *h = cli_history_get();
    if (repl_history_file != NULL) {
        FILE *probe = fopen(repl_history_file, "rb");
        if (probe != NULL) {
            fclose(probe);
            const char *name;
            if (!cli_load(repl_history_file, &name)) {
                return CLI_EXIT_FAIL;
            }
        }
    }
    if (ctxc_session_init(&repl_session, h, &repl_work, &repl_settings, &err) !=
        CTXC_OK) {
        cli_report("ctxc repl", &err);
        return CLI_EXIT_FAIL;
    }
    if (workspace == NULL) {
        workspace = cli_workspace_from_history(h);
    }
    ctxc_session_set_workspace(&repl_session, workspace);
    bool tty = isatty(0) && isatty(1);
    if (tty) {
        printf("ctxc %s - %zu entries loaded; /help for commands, Tab "
               "completes\n",
               ctxc_version(), ctxc_history_count(h));
    }
    int rc = tty ? repl_loop_editline() : repl_loop_stdin();
    return cli_stdout_ok("ctxc repl") ? rc : CLI_EXIT_FAIL;
}
