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
 * nothing of it is added or run. Several lines are one message: a paste on
 * a terminal (bracketed paste, repl_paste_key) and a """ block
 * (repl_take); a message of several lines is never a command.
 *
 *   ctxc chat [--history FILE] [--profile NAME] [--workspace DIR]
 *             [--provider P] [--model M] [--base-url URL] [--key-env VAR]
 *             [--system TEXT] [--no-stream]
 *
 * The same loop in chat mode: a line that is not a command is added as a
 * human entry, ctxc_session_before_send() compresses when needed (one line
 * printed when it did), the whole history goes to the active provider/model
 * (the provider, model, base-url, auth-key-name in force) as chat messages,
 * the reply is streamed to stdout as it arrives (the setting stream, off
 * with --no-stream: one JSON answer, printed whole) and appended as an ai
 * entry. On a terminal, control characters of the reply (and of an error
 * message) are shown visibly (cli_term.c); the history keeps the reply as
 * it came. On an error the human line stays, no ai entry is added; a
 * reply cut by the output limit or at the end of the reply buffer is kept
 * as it was shown, marked as cut in its metadata (chat_keep_cut). Without
 * --key-env the provider's usual variable holds the key
 * (cli_provider_ref_ready).
 *
 * Ctrl-C (cli_wait.c): at the prompt it drops the line typed so far; at an
 * empty prompt the first says how to leave, the second leaves (as Ctrl-D
 * and /quit). During a model call (a reply, /compress, the compression
 * before a turn) it stops the call through the port's stop hook: the
 * history is as before the call (a chat turn keeps the human line). While
 * a model call runs a status line on stderr (a terminal only) says what is
 * done, by which model, for how long, and counts down a retry. Keys typed
 * during a call wait for the next prompt; a Ctrl-D among them leaves there
 * (repl_tty_hold).
 *
 * --history FILE: a file that is there must load (one that cannot be read
 * is an error, nothing written); the history is written to it before each
 * prompt (atomically), the file as loaded kept as FILE.bak before it is
 * first written over (repl_autosave). A compression that fails is undone
 * with its density step (cli_history_snapshot).
 *
 * Leaving with unsaved changes: on a terminal the user is asked (the
 * history: to the --history file when its write failed, the question
 * naming what changed, Enter saves; without one, a file name; the
 * session's /set changes: into settings.json, Enter keeps them for the
 * session only); a script is never asked: a note on stderr says what was
 * not saved.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <wchar.h>
#include <histedit.h>
#include <stdarg.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <termios.h>
#include <inttypes.h>
#include <locale.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc/settings.h"
#include "ctxc_port_posix.h"

static ctxc_settings_store_t repl_settings;
static ctxc_posix_fs_t repl_pfs;
static ctxc_session_t repl_session;
static const char *repl_history_file;
/* chat mode (`ctxc chat`): the system text (--system, NULL: none) */
static bool repl_chat;
static const char *chat_system;
/* a line failed (scripted: the exit status is 1) */
static bool repl_failed;
/* a compression changed the history in this session */
static bool repl_compressed;

/* A diagnostic: to stderr, and the line counts as failed. */
static void repl_diag(const char *fmt, ...)
    __attribute__((format(printf, 1, 2)));
static void repl_diag(const char *fmt, ...) {
    va_list ap;
    fflush(stdout); /* what came before stays before */
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    repl_failed = true;
}

static const char *const repl_commands[] = {
    "/compress", "/help",  "/pin",   "/quit",
    "/restore",  "/save",  "/stats", "/unpin", NULL,
};
/* every command word, for the suggestions */
static const char *const repl_all_commands[] = {
    "/compress", "/help",    "/quit",    "/exit", "/save",
    "/stats",    "/set",     "/settings", "/profile", NULL,
};

static const char repl_help[] =
    "Commands:\n"
    "  /set KEY VALUE | /set unset KEY     change a setting for this session\n"
    "  /settings                           every setting: value and source\n"
    "  /settings set KEY VALUE | unset KEY change the settings file\n"
    "  /profile save|load|delete NAME | list\n"
    "  /stats                              entries, tokens, settings in force\n"
    "  /compress                           run the configured strategy\n"
    "  /pin N | /unpin N                   keep entry N (and its tool pair)\n"
    "                                      verbatim through every compression\n"
    "  /restore ID                         the block behind a pointer's\n"
    "                                      [ctxc:restore ID] (spill store)\n"
    "  /save [FILE]                        write the history (atomically)\n"
    "  /help, /quit\n"
    "Any other line is added to the history as a human message; a paste,\n"
    "and the lines from one that starts with \"\"\" to one that ends with\n"
    "\"\"\", are one message.\n"
    "Tab completes commands, setting keys, values and profile names.\n";

static const char chat_help[] =
    "Commands:\n"
    "  /set KEY VALUE | /set unset KEY     change a setting for this session\n"
    "                                      (provider, model, base-url,\n"
    "                                      auth-key-name, stream: the chat\n"
    "                                      model)\n"
    "  /settings                           every setting: value and source\n"
    "  /settings set KEY VALUE | unset KEY change the settings file\n"
    "  /profile save|load|delete NAME | list\n"
    "  /stats                              entries, tokens, settings in force\n"
    "  /compress                           run the configured strategy now\n"
    "  /pin N | /unpin N                   keep entry N (and its tool pair)\n"
    "                                      verbatim through every compression\n"
    "  /restore ID                         the block behind a pointer's\n"
    "                                      [ctxc:restore ID] (spill store)\n"
    "  /save [FILE]                        write the history (atomically)\n"
    "  /help, /quit\n"
    "Any other line is sent to the model with the whole history (compressed\n"
    "first when it outgrows the threshold); the reply is added to it. A\n"
    "paste, and the lines from one that starts with \"\"\" to one that ends\n"
    "with \"\"\", are one message.\n"
    "Tab completes commands, setting keys, values and profile names.\n";

static ctxc_status_t repl_write(void *user, const char *data, size_t len) {
    (void)user;
    return fwrite(data, 1, len, stdout) == len ? CTXC_OK : CTXC_E_IO;
}

static void repl_error(const char *what, const ctxc_error_t *err) {
    repl_diag("error: %s%s%s\n", what, what[0] != '\0' ? ": " : "",
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

/* The status line of a summary call the configured strategy may make
 * (drawn only while one runs: the port's stop hook). */
static void repl_status_begin_summary(void) {
    ctxc_history_t *h = cli_history_get();
    const ctxc_strategy_t *st = NULL;
    (void)ctxc_settings_strategy(&repl_settings, &st, NULL);
    char what[160];
    snprintf(what, sizeof what,
             "summarising %zu entries (%" PRIu64 " tokens) with %s",
             ctxc_history_count(h), ctxc_history_tokens(h),
             st != NULL ? st->name : "?");
    cli_status_begin(what, cli_llm_client(), NULL, NULL);
}

/* What a step that was stopped or failed left of the history, against
 * its entries, arena bytes and tokens before (n0, b0, t0): "the history
 * is unchanged" only when it is so; else what stays changed (a density
 * step that ran and is not undone: a job in progress keeps it). */
static const char *repl_left(size_t n0, size_t b0, uint64_t t0) {
    static char what[200];
    ctxc_history_t *h = cli_history_get();
    ctxc_history_usage_t u;
    ctxc_history_usage(h, &u);
    size_t n1 = ctxc_history_count(h);
    uint64_t t1 = ctxc_history_tokens(h);
    if (n1 == n0 && u.bytes_used == b0 && t1 == t0) {
        return "the history is unchanged";
    }
    snprintf(what, sizeof what,
             "the density step ran and is kept: %zu -> %zu entries, "
             "%" PRIu64 " -> %" PRIu64 " tokens",
             n0, n1, t0, t1);
    return what;
}

static size_t repl_bytes(void) {
    ctxc_history_usage_t u;
    ctxc_history_usage(cli_history_get(), &u);
    return u.bytes_used;
}

static void repl_compress(void) {
    ctxc_history_t *h = cli_history_get();
    size_t n0 = ctxc_history_count(h);
    uint64_t t0 = ctxc_history_tokens(h);
    size_t b0 = repl_bytes();
    ctxc_error_t err;
    const ctxc_strategy_t *st = NULL;
    (void)ctxc_settings_strategy(&repl_settings, &st, NULL);
    /* the summary model, named with this prompt's own commands */
    const char *missing = cli_summary_model_missing(
        &repl_settings, st, "/set provider P", "/set model M");
    if (missing != NULL) {
        repl_diag("error: /compress: %s asks a model for its summary: %s (or "
                  "/set compression.profile NAME), or /set "
                  "compression.strategy top-down-truncation or high-density "
                  "(no model)\n",
                  st->name, missing);
        return;
    }
    /* the density step and the strategy are one step: a failure undoes
     * both (the library would keep the density step) */
    bool undo = !ctxc_session_job_active(&repl_session);
    if (undo) {
        cli_history_snapshot();
    }
    if (ctxc_session_optimize(&repl_session, &err) != CTXC_OK) {
        repl_error("density step", &err);
        return;
    }
    repl_status_begin_summary();
    ctxc_status_t cst = ctxc_session_compress(&repl_session, &err);
    cli_status_end();
    if (cst != CTXC_OK && undo) {
        cli_history_restore();
    }
    if (cst == CTXC_E_CANCELLED) {
        repl_diag("compress: stopped (Ctrl-C); %s\n", repl_left(n0, b0, t0));
        return;
    }
    if (cst != CTXC_OK) {
        repl_diag("error: compress: %s (%s%s)\n", ctxc_error_message(&err),
                  repl_left(n0, b0, t0),
                  undo ? ": the density step undone too" : "");
        return;
    }
    const ctxc_compress_meta_t *m = &repl_session.last_compress;
    if (ctxc_history_count(h) == n0 && ctxc_history_tokens(h) == t0) {
        printf("%s changed nothing: %zu entries, %" PRIu64 " tokens%s%s\n",
               st != NULL ? st->name : "compression", n0, t0,
               m->unchanged && m->unchanged_reason != NULL ? " - " : "",
               m->unchanged && m->unchanged_reason != NULL
                   ? m->unchanged_reason
                   : "");
        return;
    }
    repl_compressed = true;
    printf("compressed with %s: %zu -> %zu entries, %" PRIu64 " -> %" PRIu64
           " tokens\n",
           st != NULL ? st->name : "?", n0, ctxc_history_count(h), t0,
           ctxc_history_tokens(h));
}

static void repl_mark_saved(void);
static void repl_autosave(void);
static bool repl_write_file(const char *who);

/* Writes the history to path (or the --history file): cli_save_history. */
static void repl_save(const char *path) {
    if (path == NULL) {
        path = repl_history_file;
    }
    if (path == NULL) {
        repl_diag("error: /save needs a FILE (no --history given)\n");
        return;
    }
    bool file = repl_history_file != NULL &&
                strcmp(path, repl_history_file) == 0;
    if (file ? !repl_write_file("error: /save")
             : !cli_save_history(cli_history_get(), path, "error: /save")) {
        repl_failed = true;
        return;
    }
    printf("saved %zu entries to %s\n", ctxc_history_count(cli_history_get()),
           path);
    repl_mark_saved();
}

/* What an append that had to make room did (ctxc_session_add_room): one
 * line, as before_send's. */
static void repl_room_report(const ctxc_send_report_t *rep) {
    if (!rep->compressed) {
        return;
    }
    const ctxc_compress_meta_t *m = &repl_session.last_compress;
    const ctxc_strategy_t *st = ctxc_strategy_get(m->strategy);
    repl_compressed = true;
    printf("[no room for the entry: compressed with %s%s: %zu -> %zu "
           "entries, %zu -> %zu arena bytes]\n",
           st != NULL ? st->name : "?",
           rep->fallback != NULL ? " (the summary was not there)" : "",
           m->entries_before, m->entries_after, m->bytes_before,
           m->bytes_after);
}

/* ctxc_session_add_room() as one step: when it fails, a compression it
 * made room with (and its density step) is undone too. */
static bool repl_add_room(const ctxc_entry_in_t *in, ctxc_send_report_t *rep,
                          ctxc_error_t *err) {
    bool undo = !ctxc_session_job_active(&repl_session);
    if (undo) {
        cli_history_snapshot();
    }
    if (ctxc_session_add_room(&repl_session, in, rep, err) == CTXC_OK) {
        return true;
    }
    if (undo && !ctxc_session_job_active(&repl_session)) {
        cli_history_restore();
    }
    return false;
}

static bool repl_add(const char *line) {
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
    ctxc_send_report_t rep;
    if (!repl_add_room(&in, &rep, &err)) {
        repl_error("add", &err);
        return false;
    }
    repl_room_report(&rep);
    return true;
}

/* ---- chat mode ------------------------------------------------------------
 * The history as chat messages: one message per entry that has something
 * besides thinking (human -> user, ai -> assistant, tool -> user); its
 * blocks rendered as text, one per line. */

/* Longest reply kept (bytes); a longer one is an error, nothing appended. */
#define CHAT_REPLY_MAX 65535u
static char chat_reply[CHAT_REPLY_MAX + 1u];
static ctxc_provider_client_t chat_client;
static uint16_t chat_map[CTXC_CFG_HISTORY_MAX_ENTRIES];
static ctxc_llm_role_t chat_roles[CTXC_CFG_HISTORY_MAX_ENTRIES];
static bool chat_streamed_any;
static bool chat_streamed_nl;
/* what was shown of the reply so far: the pieces handed to on_text point
 * into chat_reply, in order (a retry starts them again at its start); a
 * copy, as a failed call leaves chat_reply empty */
static char chat_shown_text[CHAT_REPLY_MAX + 1u];
static size_t chat_shown;
/* what the terminal shows of replies and errors (neutralised on a tty) */
static cli_term_t chat_term;
static cli_term_t chat_err_term;

static const char *repl_who(void) {
    return repl_chat ? "ctxc chat" : "ctxc repl";
}

static bool chat_block_shown(const ctxc_block_t *b) {
    return b->type != CTXC_BLOCK_THINKING &&
           !(b->type == CTXC_BLOCK_TEXT && b->u.text.text.len == 0);
}

/* Calls write for the pieces of a str; stops at the first error. */
#define CHAT_PUT(ptr, len)                                                     \
    do {                                                                       \
        if ((len) > 0) {                                                       \
            ctxc_status_t st_ = write(write_user, (ptr), (len));               \
            if (st_ != CTXC_OK) {                                              \
                return st_;                                                    \
            }                                                                  \
        }                                                                      \
    } while (0)
#define CHAT_PUTS(s) CHAT_PUT((s), strlen(s))

static ctxc_status_t chat_message(void *src, size_t index,
                                  ctxc_llm_write_fn write, void *write_user) {
    (void)src;
    ctxc_entry_t e;
    ctxc_status_t st = ctxc_history_get(cli_history_get(), chat_map[index], &e);
    if (st != CTXC_OK) {
        return st;
    }
    /* thinking left out: a model answering the user has no use for it */
    return ctxc_llm_render_entry(&e, CTXC_LLM_RENDER_NO_THINKING, write,
                                 write_user);
}

static ctxc_status_t chat_system_part(void *src, size_t index,
                                      ctxc_llm_write_fn write,
                                      void *write_user) {
    (void)src, (void)index;
    CHAT_PUTS(chat_system);
    return CTXC_OK;
}

/* The entries sent (chat_map) and their roles; the count. */
static size_t chat_messages(void) {
    const ctxc_history_t *h = cli_history_get();
    size_t n = 0;
    for (size_t i = 0;
         i < ctxc_history_count(h) && n < sizeof chat_map / sizeof chat_map[0];
         i++) {
        ctxc_entry_t e;
        if (ctxc_history_get(h, i, &e) != CTXC_OK) {
            continue;
        }
        bool shown = false;
        for (size_t k = 0; k < e.block_count && !shown; k++) {
            ctxc_block_t b;
            shown =
                ctxc_entry_block(&e, k, &b) == CTXC_OK && chat_block_shown(&b);
        }
        if (shown) {
            chat_map[n] = (uint16_t)i;
            chat_roles[n] = e.speaker == CTXC_SPEAKER_AI
                                ? CTXC_LLM_ROLE_ASSISTANT
                                : CTXC_LLM_ROLE_USER;
            n++;
        }
    }
    return n;
}

/* The reply as it arrives: straight to the terminal. */
static ctxc_status_t chat_on_text(void *user, const char *text, size_t len) {
    (void)user;
    if (text >= chat_reply && text + len <= chat_reply + CHAT_REPLY_MAX) {
        size_t at = (size_t)(text - chat_reply);
        memcpy(chat_shown_text + at, text, len);
        chat_shown = at + len;
    }
    if (len > 0) {
        cli_status_clear(); /* the reply takes the line */
        cli_term_write(&chat_term, text, len);
        fflush(stdout);
        chat_streamed_any = true;
        chat_streamed_nl = text[len - 1] == '\n';
    }
    return CTXC_OK;
}

static void chat_add_reply(const char *text, size_t len, const char *meta) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text.ptr = text;
    b.u.text.text.len = len;
    ctxc_entry_in_t in;
    memset(&in, 0, sizeof in);
    in.speaker = CTXC_SPEAKER_AI;
    in.blocks = &b;
    in.block_count = 1;
    in.metadata = meta != NULL ? ctxc_str(meta) : CTXC_STR_ABSENT;
    ctxc_error_t err;
    ctxc_send_report_t rep;
    if (!repl_add_room(&in, &rep, &err)) {
        repl_error("the reply was not added to the history", &err);
    } else {
        repl_room_report(&rep);
    }
}

/* A hint for an error (no key was sent), shown after its message. */
static char chat_key_hint[160];

/* Whether a failed call was a reply cut off by the model's output limit
 * (its finish reason: length, max_tokens, MAX_TOKENS). */
static bool chat_cut_reason(ctxc_status_t st, const ctxc_error_t *err,
                            const ctxc_llm_usage_t *usage) {
    static const char *const cut[] = {"length", "max_tokens", "MAX_TOKENS"};
    if (st != CTXC_E_PARSE) {
        return false;
    }
    for (size_t i = 0; i < sizeof cut / sizeof cut[0]; i++) {
        if (strcmp(usage->finish_reason, cut[i]) == 0) {
            return true;
        }
    }
    return strstr(ctxc_error_message(err), "cut off by the model's output "
                                           "limit") != NULL;
}

/* The reply as far as it was shown (chat_reply[0..chat_shown), without a
 * UTF-8 sequence cut in two at its end) added as an ai entry whose
 * metadata says where it was cut: {"cut":"output-limit","finishReason":R}
 * or {"cut":"reply-buffer","keptBytes":N}; a note says so (what the user
 * read is what the model will remember). */
static void chat_keep_cut(bool over, const ctxc_llm_usage_t *usage) {
    size_t n = chat_shown;
    if (n > 0) {
        size_t k = n - 1;
        while (k > 0 && ((unsigned char)chat_shown_text[k] & 0xC0u) == 0x80u) {
            k--;
        }
        unsigned char lead = (unsigned char)chat_shown_text[k];
        size_t need = lead < 0x80u ? 1u : lead >= 0xF0u ? 4u
                      : lead >= 0xE0u ? 3u : lead >= 0xC0u ? 2u : 1u;
        if (k + need > n) {
            n = k;
        }
    }
    char reason[sizeof usage->finish_reason];
    size_t r = 0;
    for (const char *p = usage->finish_reason; *p != '\0' &&
                                               r + 1 < sizeof reason; p++) {
        if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') ||
            (*p >= '0' && *p <= '9') || *p == '_' || *p == '-') {
            reason[r++] = *p;
        }
    }
    reason[r] = '\0';
    char meta[96];
    if (over) {
        snprintf(meta, sizeof meta, "{\"cut\":\"reply-buffer\",\"keptBytes\":%zu}",
                 n);
    } else {
        snprintf(meta, sizeof meta,
                 "{\"cut\":\"output-limit\",\"finishReason\":\"%s\"}",
                 r > 0 ? reason : "length");
    }
    fflush(stdout);
    if (over) {
        fprintf(stderr,
                "note: the reply is longer than %u bytes (the chat's reply "
                "buffer): the %zu bytes shown are kept in the history, "
                "marked as cut (metadata.cut reply-buffer)\n",
                CHAT_REPLY_MAX, n);
    } else {
        fprintf(stderr,
                "note: the reply was cut off by the model's output limit "
                "(finish reason %s): kept in the history as shown, marked "
                "as cut (metadata.cut output-limit)\n",
                r > 0 ? reason : "length");
    }
    chat_add_reply(chat_shown_text, n, meta);
}

/* Ends a streamed reply's line before anything else is printed. */
static void chat_end_line(void) {
    cli_term_end(&chat_term);
    if (chat_streamed_any && !chat_streamed_nl) {
        putchar('\n');
    }
    chat_streamed_any = false;
    chat_streamed_nl = false;
}

static void chat_failed(const char *what, const ctxc_error_t *err) {
    chat_end_line();
    /* the message may quote the server's own words: shown like a reply */
    const char *msg = ctxc_error_message(err);
    repl_diag("error: %s: ", what);
    cli_term_write(&chat_err_term, msg, strlen(msg));
    cli_term_end(&chat_err_term);
    const char *hint =
        chat_key_hint[0] != '\0' ? chat_key_hint : cli_net_hint(err);
    fprintf(stderr, "\n%s%s(the history keeps your line; no reply added)\n",
            hint != NULL ? hint : "", hint != NULL ? "\n" : "");
}

/* ---- the compression job in the background (compression.prefetch-
 * threshold): polled while the prompt waits for input ---------------------- */

static bool repl_status_tty(void) { return isatty(2) != 0; }

/* A status line on stderr when it is a terminal (nothing otherwise). */
static void repl_status(const char *text) {
    if (repl_status_tty()) {
        fprintf(stderr, "\r\033[K%s\n", text);
        fflush(stderr);
    }
}

/* What became of the job: one line on stdout. */
static void repl_job_report(ctxc_status_t st, const ctxc_error_t *err) {
    const ctxc_compress_meta_t *m = &repl_session.last_compress;
    if (st == CTXC_OK) {
        repl_compressed = true;
        printf("[summary applied in the background: %zu -> %zu entries of "
               "its range, %" PRIu64 " -> %" PRIu64 " tokens; your turns "
               "since kept]\n",
               m->original_count, m->compressed_count, m->tokens_before,
               m->tokens_after);
    } else {
        printf("[summary failed in the background: %s; the history is "
               "unchanged, your turns kept]\n",
               err != NULL ? ctxc_error_message(err) : ctxc_strerror(st));
    }
    fflush(stdout);
}

/* One poll of a job in progress; true when it ended now. */
static bool repl_job_tick(void) {
    if (!ctxc_session_job_active(&repl_session)) {
        return false;
    }
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_session_poll(&repl_session, &err);
    if (st == CTXC_E_IN_PROGRESS) {
        return false;
    }
    if (repl_status_tty()) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
    }
    repl_job_report(st, &err);
    return true;
}

/* At the end of the chat: the job in progress polled to its end (its
 * deadlines bound it), waiting in the transport between polls. */
static void repl_job_finish(void) {
    if (!ctxc_session_job_active(&repl_session)) {
        return;
    }
    repl_status("[waiting for the summary in progress; Ctrl-C cancels it]");
    const ctxc_port_t *p = cli_llm_port();
    (void)cli_interrupt_take();
    while (!repl_job_tick()) {
        if (cli_interrupt_take()) {
            ctxc_session_compress_cancel(&repl_session);
            printf("[summary in progress cancelled: the history is as it "
                   "is]\n");
            fflush(stdout);
            return;
        }
        /* wait only for what the job waits on: a retry's pause (in
         * slices of 50 ms, so Ctrl-C is seen) or the network; the
         * transport's wait returns at once when nothing is due */
        uint32_t ms = 0;
        ctxc_poll_due_t due = ctxc_session_poll_due(&repl_session, &ms);
        if (due == CTXC_POLL_AFTER) {
            (void)poll(NULL, 0, (int)(ms < 50u ? ms : 50u));
        } else if (due == CTXC_POLL_ON_NETWORK && p != NULL &&
                   p->transport.ops != NULL &&
                   p->transport.ops->wait != NULL) {
            p->transport.ops->wait(p->transport.ctx, 50);
        }
    }
}

/* libedit's character reader: while a job runs, stdin is polled every 20
 * ms and the job between, so the prompt stays live; the line typed is kept
 * and redrawn after a status line. One UTF-8 character per call. */
static int repl_getc(EditLine *el, wchar_t *wc) {
    for (;;) {
        if (cli_interrupt_take()) { /* Ctrl-C: the key bound to cancel */
            *wc = (wchar_t)3;
            return 1;
        }
        bool job = ctxc_session_job_active(&repl_session);
        struct pollfd pf = {0, POLLIN, 0};
        int r = poll(&pf, 1, job ? 20 : -1);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r == 0) {
            if (repl_job_tick()) {
                repl_autosave(); /* the summary applied */
                el_set(el, EL_REFRESH);
            }
            continue;
        }
        break;
    }
    unsigned char b[4];
    ssize_t n;
    while ((n = read(0, b, 1)) < 0 && errno == EINTR) {
        if (cli_interrupt_take()) {
            *wc = (wchar_t)3;
            return 1;
        }
    }
    if (n <= 0) {
        return n == 0 ? 0 : -1;
    }
    size_t len = b[0] < 0x80u ? 1u : b[0] >= 0xF0u ? 4u : b[0] >= 0xE0u ? 3u
                                  : b[0] >= 0xC0u ? 2u : 1u;
    for (size_t i = 1; i < len; i++) {
        if (read(0, b + i, 1) != 1) {
            len = i;
            break;
        }
    }
    mbstate_t ms;
    memset(&ms, 0, sizeof ms);
    wchar_t w = 0;
    size_t got = mbrtowc(&w, (const char *)b, len, &ms);
    *wc = got == (size_t)-1 || got == (size_t)-2 ? (wchar_t)b[0] : w;
    return 1;
}

/* A chat line: add it, compress when needed, send, stream, append. */
static void chat_send(const char *line) {
    if (!repl_add(line)) {
        return;
    }
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    const struct {
        ctxc_setting_id_t id;
        char *buf;
    } keys[] = {
        {CTXC_SETTING_PROVIDER, ref.provider},
        {CTXC_SETTING_MODEL, ref.model},
        {CTXC_SETTING_BASE_URL, ref.base_url},
        {CTXC_SETTING_AUTH_KEY_NAME, ref.auth_key_name},
    };
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        const char *v = ctxc_settings_string(&repl_settings, keys[k].id);
        snprintf(keys[k].buf, CTXC_CFG_SETTINGS_VALUE_BYTES, "%s",
                 v != NULL ? v : "");
    }
    ref.stream = ctxc_settings_bool(&repl_settings, CTXC_SETTING_STREAM);
    /* no --key-env: the provider's usual variable (named, never shown);
     * Anthropic's base URL without a /v1 its path has already */
    (void)cli_provider_ref_ready(&ref);
    if (ref.provider[0] == '\0' || ref.model[0] == '\0') {
        repl_diag("error: no %s set: set provider and model (/set provider "
                  "%s, /set model NAME; base-url and auth-key-name as "
                  "needed; on the command line --provider, --model, "
                  "--base-url, --key-env)\n(the history keeps your line; no "
                  "reply added)\n",
                  ref.provider[0] == '\0' ? "provider" : "model",
                  cli_provider_list("|"));
        return;
    }
    ctxc_history_t *h = cli_history_get();
    size_t n0 = ctxc_history_count(h);
    uint64_t t0 = ctxc_history_tokens(h);
    size_t b0 = repl_bytes();
    ctxc_send_report_t rep;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    memset(&rep, 0, sizeof rep);
    static bool warned;
    if (ctxc_settings_context_limit(&repl_settings) == 0) {
        if (!warned) { /* nothing to compress against */
            fflush(stdout);
            fprintf(stderr,
                    "note: context-limit not set: the history is sent whole, "
                    "never compressed (/set context-limit N)\n");
            warned = true;
        }
    } else {
        /* the density step and the strategy: one step (undone together) */
        bool undo = !ctxc_session_job_active(&repl_session);
        if (undo) {
            cli_history_snapshot();
        }
        repl_status_begin_summary();
        ctxc_status_t bst = ctxc_session_before_send(&repl_session, 0, &rep,
                                                     &err);
        cli_status_end();
        if (bst != CTXC_OK && undo &&
            !ctxc_session_job_active(&repl_session)) {
            cli_history_restore();
        }
        if (bst == CTXC_E_CANCELLED) {
            repl_diag("stopped (Ctrl-C) while summarising: %s, nothing "
                      "sent\n(the history keeps your line; no reply "
                      "added)\n",
                      repl_left(n0, b0, t0));
            return;
        }
        if (bst != CTXC_OK) {
            chat_failed("compress before sending", &err);
            return;
        }
    }
    if (rep.job == CTXC_SEND_JOB_STARTED) {
        repl_status("[summary: being fetched in the background; keep "
                    "typing]");
    } else if (rep.job == CTXC_SEND_JOB_FALLBACK) {
        printf("[the summary was not there at the threshold: compressed with "
               "%s instead (compression.on-limit)]\n",
               rep.fallback);
    }
    if (rep.job == CTXC_SEND_JOB_APPLIED) {
        repl_job_report(CTXC_OK, NULL);
    } else if (rep.trigger != 0 && !rep.compressed &&
               ctxc_history_count(h) == n0) {
        printf("[compression ran: history unchanged]\n");
    } else if (rep.compressed || ctxc_history_count(h) != n0) {
        repl_compressed = true;
        const ctxc_strategy_t *st = NULL;
        (void)ctxc_settings_strategy(&repl_settings, &st, NULL);
        printf("[compressed with %s%s: %zu -> %zu entries, %" PRIu64
               " -> %" PRIu64 " tokens]\n",
               rep.compressed && st != NULL ? st->name : "the density step",
               rep.compressed && rep.optimized ? " after the density step" : "",
               n0, ctxc_history_count(h), rep.tokens, rep.tokens_after);
    }
    uint32_t retries = 2, timeout = 0, deadline = 0;
    (void)ctxc_settings_int(&repl_settings, CTXC_SETTING_COMPRESSION_RETRIES,
                            &retries);
    (void)ctxc_settings_int(&repl_settings,
                            CTXC_SETTING_NETWORK_READ_TIMEOUT_MS, &timeout);
    (void)ctxc_settings_int(&repl_settings,
                            CTXC_SETTING_NETWORK_CALL_DEADLINE_MS, &deadline);
    ctxc_llm_t llm;
    if (ctxc_provider_llm(&chat_client, &ref, cli_chat_port(), retries,
                          ref.stream, &llm, &err) != CTXC_OK) {
        chat_failed(ref.provider, &err);
        return;
    }
    chat_client.timeout_ms = timeout;
    chat_client.deadline_ms = deadline;
    ctxc_llm_request_t req;
    memset(&req, 0, sizeof req);
    req.system = chat_system != NULL ? chat_system_part : NULL;
    req.message_count = chat_messages();
    req.message = chat_message;
    req.roles = chat_roles;
    req.on_text = chat_on_text;
    chat_streamed_any = false;
    chat_streamed_nl = false;
    chat_shown = 0;
    size_t len = 0;
    ctxc_llm_usage_t usage;
    memset(&usage, 0, sizeof usage);
    cli_status_begin("waiting for the reply", &chat_client, ref.provider,
                     ref.model);
    ctxc_status_t st = llm.complete(&llm, &req, chat_reply, sizeof chat_reply,
                                    &len, &usage, &err);
    cli_status_end();
    if (st == CTXC_E_CANCELLED) {
        chat_end_line();
        repl_diag("stopped (Ctrl-C): the reply so far is dropped\n(the "
                  "history keeps your line; no reply added)\n");
        return;
    }
    /* a reply cut short (by the model's output limit, or at the end of
     * the reply buffer: err.needed known; any other limit, the key, header
     * lines, an SSE event..., has its own message, below): what was shown
     * is what the history keeps, marked as cut in its metadata */
    bool over = st == CTXC_E_TOO_LARGE && err.needed > sizeof chat_reply;
    if ((over || chat_cut_reason(st, &err, &usage)) && chat_shown > 0) {
        chat_end_line();
        chat_keep_cut(over, &usage);
        return;
    }
    if (over) {
        chat_end_line();
        repl_diag("error: the reply is longer than %u bytes (the chat's reply "
                  "buffer); nothing of it shown or added\n(the history keeps "
                  "your line; no reply added)\n",
                  CHAT_REPLY_MAX);
        return;
    }
    if (st != CTXC_OK) {
        char what[2 * CTXC_CFG_SETTINGS_VALUE_BYTES + 8];
        snprintf(what, sizeof what, "%s %s", ref.provider, ref.model);
        if (err.status == CTXC_E_HTTP_STATUS && ref.auth_key_name[0] == '\0' &&
            cli_default_key_names(ref.provider) != NULL &&
            (strstr(ctxc_error_message(&err), "HTTP 401") != NULL ||
             strstr(ctxc_error_message(&err), "HTTP 403") != NULL)) {
            snprintf(chat_key_hint, sizeof chat_key_hint,
                     "no API key was sent: export %s, or give --key-env VAR "
                     "(/set auth-key-name VAR)",
                     cli_default_key_names(ref.provider));
        }
        chat_failed(what, &err);
        chat_key_hint[0] = '\0';
        return;
    }
    if (!chat_streamed_any && len > 0) { /* not streamed after all */
        chat_on_text(NULL, chat_reply, len);
    }
    chat_end_line();
    chat_add_reply(chat_reply, len, NULL);
}

/* /pin N and /unpin N: the entry and its tool pair; prints the entries
 * whose pin changed. */
static void repl_pin(const char *arg, bool on) {
    ctxc_history_t *h = cli_history_get();
    char *end = NULL;
    errno = 0;
    unsigned long long n = strtoull(arg, &end, 10);
    if (arg[0] < '0' || arg[0] > '9' || errno != 0 || end == NULL ||
        (*end != '\0' && *end != ' ' && *end != '\t')) {
        repl_diag("error: %s needs an entry index (0 .. %zu)\n",
               on ? "/pin" : "/unpin",
               ctxc_history_count(h) > 0 ? ctxc_history_count(h) - 1 : 0);
        return;
    }
    /* the pins before, to report what changed (one bit an entry) */
    static unsigned char was[(CTXC_CFG_HISTORY_MAX_ENTRIES + 7) / 8];
    size_t count = ctxc_history_count(h);
    for (size_t i = 0; i < count && i / 8 < sizeof was; i++) {
        ctxc_entry_t e;
        (void)ctxc_history_get(h, i, &e);
        was[i / 8] =
            (unsigned char)((was[i / 8] & ~(1u << (i % 8))) |
                            ((e.flags & CTXC_ENTRY_PINNED) != 0 ? 1u << (i % 8)
                                                                : 0u));
    }
    ctxc_error_t err;
    if (ctxc_history_pin(h, (size_t)n, on, &err) != CTXC_OK) {
        repl_error(on ? "/pin" : "/unpin", &err);
        return;
    }
    size_t pinned = 0, changed = 0;
    printf("%s:", on ? "pinned" : "unpinned");
    for (size_t i = 0; i < count; i++) {
        ctxc_entry_t e;
        (void)ctxc_history_get(h, i, &e);
        bool now = (e.flags & CTXC_ENTRY_PINNED) != 0;
        bool before = i / 8 < sizeof was && (was[i / 8] >> (i % 8)) & 1u;
        pinned += now ? 1u : 0u;
        if (now != before) {
            printf(" %zu", i);
            changed++;
        }
    }
    printf("%s (%zu of %zu entries pinned)\n",
           changed == 0 ? " nothing changed" : "", pinned, count);
}

/* ---- what leaving would lose ----------------------------------------------
 * The history is "saved" when its canonical JSONL is what was loaded or
 * last written by /save (a hash of the export, so an edit that keeps the
 * counts is seen too); the /set changes of the session are remembered as
 * typed, the last of each key. */

static uint64_t repl_saved_hash;

static ctxc_status_t hash_write(void *user, const char *data, size_t len) {
    uint64_t *h = user;
    for (size_t i = 0; i < len; i++) { /* FNV-1a */
        *h = (*h ^ (unsigned char)data[i]) * 1099511628211ull;
    }
    return CTXC_OK;
}

static uint64_t repl_history_hash(void) {
    uint64_t h = 14695981039346656037ull;
    (void)ctxc_export(cli_history_get(), hash_write, &h, NULL);
    return h;
}

static void repl_mark_saved(void) { repl_saved_hash = repl_history_hash(); }

/* ---- saving as it happens (--history FILE) --------------------------------
 * Before each prompt (after a line, a reply, a compression, a summary
 * applied in the background) a history that differs from what FILE holds
 * is written to it through cli_save_history (a temporary file, fsync,
 * rename: a kill at any instant leaves the old or the new whole file);
 * SIGHUP, SIGTERM and SIGQUIT wait for the rename. The first time the
 * session writes over a file it loaded, that file is kept as FILE.bak (a
 * hard link to it, or a copy where links cannot be made; an older FILE.bak
 * is replaced): the history as loaded is never lost. */

static uint64_t repl_file_hash; /* the history FILE holds */
static bool repl_file_loaded;   /* FILE existed when the session began */
static size_t repl_loaded_count;
static bool repl_backup_made;
static char repl_backup[4096];

/* FILE.bak as a copy of FILE (no hard link possible there). */
static bool repl_backup_copy(const char *from, const char *to) {
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        return false;
    }
    int out = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (out < 0) {
        int e = errno;
        close(in);
        errno = e;
        return false;
    }
    static char buf[65536];
    bool ok = true;
    for (;;) {
        ssize_t n = read(in, buf, sizeof buf);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            ok = n == 0;
            break;
        }
        for (ssize_t o = 0; ok && o < n;) {
            ssize_t w = write(out, buf + o, (size_t)(n - o));
            if (w < 0 && errno == EINTR) {
                continue;
            }
            ok = w > 0;
            o += w > 0 ? w : 0;
        }
        if (!ok) {
            break;
        }
    }
    int e = errno;
    ok = ok && fsync(out) == 0;
    e = ok ? 0 : e != 0 ? e : errno;
    close(out);
    close(in);
    if (!ok) {
        (void)unlink(to);
        errno = e != 0 ? e : EIO;
    }
    return ok;
}

/* Keeps the loaded FILE as FILE.bak, once, before it is first written
 * over; false (and why, on stderr) when it cannot be kept. */
static bool repl_keep_backup(void) {
    if (!repl_file_loaded || repl_backup_made) {
        return true;
    }
    if ((size_t)snprintf(repl_backup, sizeof repl_backup, "%s.bak",
                         repl_history_file) >= sizeof repl_backup) {
        fprintf(stderr, "%s: %s: path too long for its backup; not written\n",
                repl_who(), repl_history_file);
        return false;
    }
    if (unlink(repl_backup) != 0 && errno != ENOENT) {
        fprintf(stderr, "%s: %s: cannot replace it (%s); %s not written\n",
                repl_who(), repl_backup, strerror(errno), repl_history_file);
        return false;
    }
    /* the file itself, not a symbolic link to it (which the save would
     * leave pointing at the new history) */
    if (linkat(AT_FDCWD, repl_history_file, AT_FDCWD, repl_backup,
               AT_SYMLINK_FOLLOW) != 0 &&
        !repl_backup_copy(repl_history_file, repl_backup)) {
        fprintf(stderr, "%s: %s: cannot keep the file as loaded there (%s); "
                        "%s not written\n",
                repl_who(), repl_backup, strerror(errno), repl_history_file);
        return false;
    }
    repl_backup_made = true;
    return true;
}

/* Writes the history to FILE (the backup first); false on an error
 * (printed, prefixed with `who`). */
static bool repl_write_file(const char *who) {
    if (!repl_keep_backup()) {
        return false;
    }
    /* a signal that would end the program waits for the rename */
    sigset_t block, old;
    sigemptyset(&block);
    sigaddset(&block, SIGHUP);
    sigaddset(&block, SIGTERM);
    sigaddset(&block, SIGQUIT);
    (void)sigprocmask(SIG_BLOCK, &block, &old);
    bool ok = cli_save_history(cli_history_get(), repl_history_file, who);
    if (ok) {
        repl_file_hash = repl_history_hash();
        repl_saved_hash = repl_file_hash;
    }
    (void)sigprocmask(SIG_SETMASK, &old, NULL);
    return ok;
}

/* Before a prompt: FILE brought up to date. Only a regular file (or a
 * missing one) is written as it happens; a FIFO or a device gets the
 * history from /save. */
static void repl_autosave(void) {
    if (repl_history_file == NULL || repl_history_hash() == repl_file_hash) {
        return;
    }
    struct stat sb;
    if (stat(repl_history_file, &sb) == 0 ? !S_ISREG(sb.st_mode)
                                          : errno != ENOENT) {
        return;
    }
    fflush(stdout);
    if (!repl_write_file("error: saving the history")) {
        repl_failed = true;
    }
}

/* What the history became: "compressed: 198 -> 176 entries" (or without
 * "compressed: " when no compression ran). */
static void repl_change(char *buf, size_t cap) {
    snprintf(buf, cap, "%s%zu -> %zu entries",
             repl_compressed ? "compressed: " : "", repl_loaded_count,
             ctxc_history_count(cli_history_get()));
}

#define REPL_SETS_MAX 32u
static struct {
    char key[64];
    char value[CTXC_CFG_SETTINGS_VALUE_BYTES];
} repl_sets[REPL_SETS_MAX];
static size_t repl_set_count;

/* A /set that took effect: "KEY VALUE" or "unset KEY". */
static void repl_note_set(const char *arg) {
    bool unset = strncmp(arg, "unset ", 6) == 0;
    const char *k = unset ? arg + 6 : arg;
    while (*k == ' ' || *k == '\t') {
        k++;
    }
    size_t kl = strcspn(k, " \t");
    const char *v = k + kl;
    while (*v == ' ' || *v == '\t') {
        v++;
    }
    if (kl == 0 || kl >= sizeof repl_sets[0].key ||
        (!unset && strlen(v) >= sizeof repl_sets[0].value)) {
        return;
    }
    size_t i = 0;
    while (i < repl_set_count &&
           !(strlen(repl_sets[i].key) == kl &&
             strncmp(repl_sets[i].key, k, kl) == 0)) {
        i++;
    }
    if (unset) { /* back to the file's value: nothing to keep */
        if (i < repl_set_count) {
            repl_sets[i] = repl_sets[--repl_set_count];
        }
        return;
    }
    if (i == repl_set_count) {
        if (repl_set_count == REPL_SETS_MAX) {
            return;
        }
        repl_set_count++;
    }
    size_t vl = strlen(v);
    while (vl > 0 && (v[vl - 1] == ' ' || v[vl - 1] == '\t')) {
        vl--; /* a completed value ends with a blank */
    }
    snprintf(repl_sets[i].key, sizeof repl_sets[i].key, "%.*s", (int)kl, k);
    snprintf(repl_sets[i].value, sizeof repl_sets[i].value, "%.*s", (int)vl,
             v);
}

/* A question on the terminal, answered with a line: false on Ctrl-C or
 * Ctrl-D (no answer). The answer without surrounding blanks. */
static bool repl_ask(const char *question, char *buf, size_t cap) {
    fputs(question, stdout);
    fflush(stdout);
    size_t n = 0;
    (void)cli_interrupt_take();
    for (;;) {
        char c;
        ssize_t r = read(0, &c, 1);
        if (r < 0 && errno == EINTR) {
            if (cli_interrupt_take()) {
                putchar('\n');
                return false;
            }
            continue;
        }
        if (r <= 0) {
            putchar('\n');
            return false;
        }
        if (c == '\n' || c == '\r') {
            break;
        }
        if (n + 1 < cap) {
            buf[n++] = c;
        }
    }
    while (n > 0 && (buf[n - 1] == ' ' || buf[n - 1] == '\t')) {
        n--;
    }
    buf[n] = '\0';
    size_t lead = strspn(buf, " \t");
    memmove(buf, buf + lead, n - lead + 1);
    return true;
}

/* Leaving: unsaved history and /set changes. On a terminal the user is
 * asked (the history: to the --history file, Enter saves; without one, a
 * file name; the /set changes: into settings.json, Enter keeps them for
 * this session only); a script is told on stderr what was not saved. */
static void repl_leave(bool tty) {
    ctxc_history_t *h = cli_history_get();
    char ans[1024];
    char change[128];
    repl_change(change, sizeof change);
    if (repl_history_file != NULL) {
        repl_autosave(); /* the last try */
    }
    if (repl_history_file != NULL
            ? repl_history_hash() != repl_file_hash
            : repl_history_hash() != repl_saved_hash) {
        char q[1400];
        if (!tty) {
            fprintf(stderr,
                    "note: the history's changes were not saved (%s)\n",
                    repl_history_file != NULL
                        ? "/save writes them to the --history file"
                        : "/save FILE writes them");
        } else if (repl_history_file != NULL) {
            /* what changed since it was loaded, and where the file as
             * loaded is kept */
            char bak[4200] = "";
            if (repl_file_loaded) {
                snprintf(bak, sizeof bak, "; %s as loaded kept as %s.bak",
                         repl_history_file, repl_history_file);
            }
            snprintf(q, sizeof q,
                     "save the history (%zu entr%s; %s%s) to %s? [Y/n] ",
                     ctxc_history_count(h),
                     ctxc_history_count(h) == 1 ? "y" : "ies", change,
                     bak, repl_history_file);
            if (repl_ask(q, ans, sizeof ans) &&
                (ans[0] == '\0' || ans[0] == 'y' || ans[0] == 'Y')) {
                repl_save(NULL);
            } else {
                printf("not saved\n");
            }
        } else {
            snprintf(q, sizeof q,
                     "the history (%zu entr%s) is not saved: file to save "
                     "it to (Enter: leave without saving)? ",
                     ctxc_history_count(h),
                     ctxc_history_count(h) == 1 ? "y" : "ies");
            for (int tries = 0; tries < 3; tries++) {
                if (!repl_ask(q, ans, sizeof ans) || ans[0] == '\0') {
                    printf("not saved\n");
                    break;
                }
                repl_failed = false;
                repl_save(ans);
                if (!repl_failed) {
                    break;
                }
            }
        }
    }
    if (repl_backup_made) {
        printf("%s: %zu entr%s (%s); the file as loaded is kept as %s\n",
               repl_history_file, ctxc_history_count(h),
               ctxc_history_count(h) == 1 ? "y" : "ies", change, repl_backup);
    }
    if (tty && repl_set_count > 0) {
        printf("this session's /set changes:");
        for (size_t i = 0; i < repl_set_count; i++) {
            printf("%s %s %s", i > 0 ? "," : "", repl_sets[i].key,
                   repl_sets[i].value);
        }
        printf("\n");
        if (repl_ask("keep them in settings.json? [y/N] ", ans, sizeof ans) &&
            (ans[0] == 'y' || ans[0] == 'Y')) {
            for (size_t i = 0; i < repl_set_count; i++) {
                ctxc_error_t err;
                if (ctxc_settings_persist_set(&repl_settings, repl_sets[i].key,
                                              repl_sets[i].value,
                                              &err) != CTXC_OK) {
                    repl_error(repl_sets[i].key, &err);
                }
            }
            printf("kept in settings.json\n");
        }
    }
    fflush(stdout);
}

/* After a /set that was refused: `/set provider ollama` names the way to
 * an OpenAI-compatible server. */
static void repl_set_hint(const char *word, const char *arg) {
    if (strcmp(word, "/set") != 0 || strncmp(arg, "provider", 8) != 0 ||
        (arg[8] != ' ' && arg[8] != '\t')) {
        return;
    }
    const char *v = arg + 8;
    while (*v == ' ' || *v == '\t') {
        v++;
    }
    char name[64];
    snprintf(name, sizeof name, "%.*s", (int)strcspn(v, " \t"), v);
    const char *hint = cli_provider_hint(name, false);
    if (hint != NULL) {
        fprintf(stderr, "%s\n", hint);
    }
}

/* After a /set of a compression.density.* setting: a note when the
 * strategy in force has no density step (it has no effect then). */
static void repl_density_note(const char *arg) {
    static const char prefix[] = "compression.density.";
    const ctxc_strategy_t *st = NULL;
    if (strncmp(arg, prefix, sizeof prefix - 1) != 0 ||
        ctxc_settings_strategy(&repl_settings, &st, NULL) != CTXC_OK ||
        st == NULL || st->optimize != NULL) {
        return;
    }
    fflush(stdout);
    fprintf(stderr,
            "note: %s has no density step: compression.density.* has no "
            "effect with it (high-density has one)\n",
            st->name);
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
    /* a block of lines (a paste, a """ block) is a message, never a
     * command, whatever its first line */
    if (*p != '/' || strchr(p, '\n') != NULL) {
        if (repl_chat) {
            chat_send(p);
        } else {
            (void)repl_add(p);
        }
        fflush(stdout);
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
        fputs(repl_chat ? chat_help : repl_help, stdout);
    } else if (strcmp(word, "/stats") == 0) {
        repl_stats();
    } else if (strcmp(word, "/compress") == 0) {
        repl_compress();
    } else if (strcmp(word, "/save") == 0) {
        repl_save(*arg != '\0' ? arg : NULL);
    } else if (strcmp(word, "/pin") == 0 || strcmp(word, "/unpin") == 0) {
        repl_pin(arg, word[1] == 'p');
    } else if (strcmp(word, "/restore") == 0) {
        if (cli_spill_print(&repl_session, arg, stdout) != CLI_EXIT_OK) {
            repl_failed = true; /* a script's exit status says so */
        }
    } else {
        ctxc_error_t err;
        ctxc_status_t st =
            ctxc_settings_command(&repl_settings, p, repl_write, NULL, &err);
        if (st == CTXC_OK && strcmp(word, "/set") == 0) {
            repl_note_set(arg);
        }
        if (st == CTXC_OK &&
            cli_spill_update(&repl_session, &repl_settings, &repl_pfs,
                             "error: spill store") < 0) {
            repl_failed = true; /* the setting is in force; no store */
        }
        if (st == CTXC_E_NOT_FOUND) { /* not a settings command word */
            char hint[160];
            cli_suggest(word, repl_all_commands, hint, sizeof hint);
            repl_diag("error: unknown command %s%s (try /help)\n", word,
                      hint);
        } else if (st != CTXC_OK) {
            repl_error("", &err);
            repl_set_hint(word, arg);
            if (repl_settings.file_bad) { /* the refused write re-read it */
                cli_settings_reload(&repl_settings, &repl_pfs, repl_who());
            }
        } else if (strcmp(word, "/set") == 0) {
            repl_density_note(arg);
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
    /* /pin N, /unpin N: the entries that would change, newest first */
    bool pin = strncmp(text, "/pin ", 5) == 0;
    if (pin || strncmp(text, "/unpin ", 7) == 0) {
        const char *num = text + (pin ? 5 : 7);
        if (strchr(num, ' ') == NULL) {
            ctxc_history_t *h = cli_history_get();
            *word_start = (size_t)(num - text);
            cs->n = 0;
            char c[24];
            for (size_t i = ctxc_history_count(h); i-- > 0;) {
                ctxc_entry_t e;
                (void)ctxc_history_get(h, i, &e);
                bool is = (e.flags & CTXC_ENTRY_PINNED) != 0;
                snprintf(c, sizeof c, "%zu", i);
                if (is != pin && strncmp(c, num, strlen(num)) == 0) {
                    add_cand(cs, c);
                }
            }
        }
        return;
    }
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
    /* in columns, across then down (the candidates' order), to the
     * terminal's width */
    size_t width = 80, colw = 0;
    struct winsize ws_;
    if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws_) == 0 && ws_.ws_col >= 20) {
        width = ws_.ws_col;
    }
    for (size_t i = 0; i < cs.n; i++) {
        size_t l = strlen(cs.cand[i]) + 2u;
        colw = l > colw ? l : colw;
    }
    size_t cols = width / colw > 0 ? width / colw : 1;
    size_t rows = (cs.n + cols - 1) / cols;
    putchar('\n');
    for (size_t r = 0; r < rows; r++) {
        for (size_t k = 0; k < cols; k++) {
            size_t i = r * cols + k;
            if (i < cs.n) {
                bool last = k + 1 == cols || i + 1 == cs.n;
                printf("%-*s", last ? 0 : (int)colw, cs.cand[i]);
            }
        }
        putchar('\n');
    }
    fflush(stdout);
    return CC_REDISPLAY;
}

static bool repl_in_block;

static const char *repl_prompt(EditLine *el) {
    (void)el;
    return repl_in_block ? "... " : repl_chat ? "you> " : "ctxc> ";
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
        repl_diag("error: line longer than %u bytes; ignored (nothing added "
                  "or run)\n",
                  REPL_LINE_MAX);
    } else if (nul) {
        repl_diag("error: line contains a NUL byte; ignored (nothing added or "
                  "run)\n");
    }
    fflush(stdout);
    return len <= REPL_LINE_MAX && !nul;
}

/* Several lines as one message: a line that starts with three double
 * quotes opens a block, a line that ends with them closes it; the lines
 * between (and the text after the opening and before the closing quotes)
 * are one message, line breaks kept, never a command. On a terminal the
 * prompt is "... " meanwhile; Ctrl-C drops the block. */
static char repl_block[REPL_LINE_MAX + 1u];
static size_t repl_block_len;
static bool repl_block_over;

static void repl_block_add(const char *text, size_t len, bool nl) {
    size_t need = len + (nl ? 1u : 0u);
    if (repl_block_over || repl_block_len + need > REPL_LINE_MAX) {
        repl_block_over = true;
        return;
    }
    memcpy(repl_block + repl_block_len, text, len);
    repl_block_len += len;
    if (nl) {
        repl_block[repl_block_len++] = '\n';
    }
}

static void repl_block_drop(void) {
    repl_in_block = false;
    repl_block_len = 0;
    repl_block_over = false;
}

/* At the end of input: a block still open is an error, nothing added. */
static void repl_block_unclosed(void) {
    if (repl_in_block) {
        repl_diag("error: a \"\"\" block was not closed; nothing of it added\n");
        repl_block_drop();
    }
}

/* One line read: a """ block gathered, the rest to repl_line; false to
 * quit. */
static bool repl_take(char *line) {
    size_t n = strlen(line);
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r')) {
        line[--n] = '\0';
    }
    const char *p = line;
    if (!repl_in_block) {
        while (*p == ' ' || *p == '\t') {
            p++;
        }
        if (strncmp(p, "\"\"\"", 3) != 0 || strchr(line, '\n') != NULL) {
            return repl_line(line);
        }
        p += 3;
        repl_in_block = true;
        repl_block_len = 0;
        repl_block_over = false;
        n = strlen(p);
        if (n >= 3 && strcmp(p + n - 3, "\"\"\"") == 0) { /* """one line""" */
            repl_block_add(p, n - 3, false);
        } else {
            if (n > 0) {
                repl_block_add(p, n, true);
            }
            return true;
        }
    } else {
        n = strlen(p);
        size_t e = n;
        while (e > 0 && (p[e - 1] == ' ' || p[e - 1] == '\t')) {
            e--;
        }
        if (e < 3 || strncmp(p + e - 3, "\"\"\"", 3) != 0) {
            repl_block_add(p, n, true);
            return true;
        }
        repl_block_add(p, e - 3, false);
    }
    /* closed: the block without the line breaks around it */
    bool over = repl_block_over;
    size_t len = repl_block_len;
    repl_block_drop();
    if (over) {
        repl_diag("error: a \"\"\" block longer than %u bytes; ignored "
                  "(nothing added)\n",
                  REPL_LINE_MAX);
        return true;
    }
    while (len > 0 && repl_block[len - 1] == '\n') {
        len--;
    }
    size_t lead = 0;
    while (lead < len && repl_block[lead] == '\n') {
        lead++;
    }
    repl_block[len] = '\0';
    if (strchr(repl_block + lead, '\n') == NULL &&
        repl_block[lead] == '/') { /* one line, still a message */
        if (repl_chat) {
            chat_send(repl_block + lead);
        } else {
            (void)repl_add(repl_block + lead);
        }
        fflush(stdout);
        return true;
    }
    return repl_line(repl_block + lead);
}

/* Bracketed paste (the terminal sends ESC [200~ TEXT ESC [201~ when the
 * mode ESC [?2004h is on, as it is while the prompt waits): the pasted text
 * goes into the line whole, its line breaks kept (CR and CR LF as LF, the
 * last ones dropped), so that Enter sends it as one message. Read here
 * from the terminal directly, up to the closing sequence; a paste longer
 * than a line is dropped with an error. */
static char repl_paste[REPL_LINE_MAX + 1u];

static unsigned char repl_paste_key(EditLine *el, int ch) {
    (void)ch;
    static const char end[] = "\033[201~";
    size_t n = 0, matched = 0;
    bool over = false, cr = false;
    for (;;) {
        unsigned char c;
        ssize_t r = read(0, &c, 1);
        if (r < 0 && errno == EINTR) {
            (void)cli_interrupt_take(); /* a paste is taken whole */
            continue;
        }
        if (r <= 0) {
            break;
        }
        if (c == (unsigned char)end[matched]) {
            if (++matched == sizeof end - 1) {
                break;
            }
            continue;
        }
        /* a partial match that failed: its bytes are text */
        for (size_t k = 0; k < matched; k++) {
            if (n < REPL_LINE_MAX) {
                repl_paste[n++] = end[k];
            } else {
                over = true;
            }
        }
        matched = c == (unsigned char)end[0] ? 1u : 0u;
        if (matched == 1) {
            continue;
        }
        if (c == '\n' && cr) { /* CR LF: the LF is the CR's */
            cr = false;
            continue;
        }
        cr = c == '\r';
        if (n < REPL_LINE_MAX) {
            repl_paste[n++] = cr ? '\n' : (char)c;
        } else {
            over = true;
        }
    }
    while (n > 0 && repl_paste[n - 1] == '\n') {
        n--;
    }
    repl_paste[n] = '\0';
    const LineInfo *li = el_line(el);
    if (over || n + (size_t)(li->lastchar - li->buffer) > REPL_LINE_MAX) {
        fflush(stdout);
        fprintf(stderr, "\nerror: the paste is longer than %u bytes; "
                        "ignored (nothing added)\n",
                REPL_LINE_MAX);
        return CC_REDISPLAY;
    }
    if (memchr(repl_paste, '\0', n) != NULL) {
        for (size_t k = 0; k < n; k++) { /* a NUL would end the line */
            repl_paste[k] = repl_paste[k] == '\0' ? ' ' : repl_paste[k];
        }
    }
    if (n > 0) {
        /* as wide characters of its UTF-8 (a byte that is not UTF-8 as
         * it is) */
        static wchar_t w[REPL_LINE_MAX + 1u];
        size_t wn = 0;
        for (size_t k = 0; k < n;) {
            unsigned char b = (unsigned char)repl_paste[k];
            size_t len = b < 0x80u ? 1u : b >= 0xF0u ? 4u : b >= 0xE0u ? 3u
                         : b >= 0xC0u ? 2u : 1u;
            uint32_t cp = len == 1 ? b : b & (0x3Fu >> (len - 1));
            size_t j = 1;
            for (; j < len && k + j < n &&
                   ((unsigned char)repl_paste[k + j] & 0xC0u) == 0x80u;
                 j++) {
                cp = (cp << 6) | ((unsigned char)repl_paste[k + j] & 0x3Fu);
            }
            if (j < len) {
                cp = b;
                j = 1;
            }
            w[wn++] = (wchar_t)cp;
            k += j;
        }
        w[wn] = L'\0';
        (void)el_winsertstr(el, w);
    }
    return CC_REFRESH;
}

/* Ctrl-C at the prompt: the line typed so far is dropped (CANCEL_LINE);
 * at an empty prompt (CANCEL_EMPTY) the first says how to leave, the
 * second in a row leaves. repl_getc turns SIGINT into the key ^C, bound to
 * this function (and the key itself, when the terminal sends it). */
static enum { CANCEL_NONE, CANCEL_LINE, CANCEL_EMPTY } repl_cancel;

static unsigned char repl_interrupt_key(EditLine *el, int ch) {
    (void)ch;
    const LineInfo *li = el_line(el);
    repl_cancel = li->lastchar == li->buffer ? CANCEL_EMPTY : CANCEL_LINE;
    return CC_NEWLINE;
}

/* Keys typed while a line is worked on (a reply streams, a summary is
 * awaited) wait in the terminal, which libedit has put back in its cooked
 * mode; there the EOF key is not a byte: a Ctrl-D typed then would reach
 * the next prompt as a NUL and be lost. While a line is worked on the EOF
 * key is switched off, so a Ctrl-D stays the byte 4 that libedit reads at
 * the next prompt as "leave"; the terminal's settings are put back exactly
 * as they were before libedit takes the terminal again (it would otherwise
 * take the changed settings for the user's own). */
static struct termios repl_tty_saved;
static volatile sig_atomic_t repl_tty_held;

static void repl_tty_release(void) {
    if (repl_tty_held) {
        (void)tcsetattr(0, TCSANOW, &repl_tty_saved);
        repl_tty_held = 0;
    }
}

/* A signal that ends the program while the key is off (SIGTERM, SIGHUP,
 * SIGQUIT) puts the terminal back first (tcsetattr is async-signal-safe),
 * then ends it as it would have. */
static volatile sig_atomic_t repl_paste_on;

/* The terminal's bracketed paste mode, on while the prompt waits (written
 * to stdout, a terminal there). */
static void repl_paste_mode(bool on) {
    if (on != (repl_paste_on != 0)) {
        fflush(stdout);
        static const char on_[] = "\033[?2004h", off[] = "\033[?2004l";
        (void)!write(1, on ? on_ : off, sizeof on_ - 1);
        repl_paste_on = on ? 1 : 0;
    }
}

static void repl_tty_on_fatal(int sig) {
    if (repl_paste_on) {
        static const char off[] = "\033[?2004l";
        (void)!write(1, off, sizeof off - 1);
    }
    if (repl_tty_held) {
        (void)tcsetattr(0, TCSANOW, &repl_tty_saved);
    }
    (void)signal(sig, SIG_DFL);
    (void)raise(sig);
}

static void repl_tty_hold(void) {
    static bool installed;
    if (!installed) {
        installed = true;
        (void)atexit(repl_tty_release); /* an exit() while held */
        static const int fatal[] = {SIGTERM, SIGHUP, SIGQUIT};
        for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++) {
            struct sigaction old;
            if (sigaction(fatal[i], NULL, &old) == 0 &&
                old.sa_handler == SIG_DFL) { /* an ignored one stays so */
                struct sigaction sa;
                memset(&sa, 0, sizeof sa);
                sa.sa_handler = repl_tty_on_fatal;
                sigemptyset(&sa.sa_mask);
                (void)sigaction(fatal[i], &sa, NULL);
            }
        }
    }
    struct termios t;
    if (tcgetattr(0, &t) != 0) {
        return;
    }
    repl_tty_saved = t;
#ifdef _POSIX_VDISABLE
    t.c_cc[VEOF] = _POSIX_VDISABLE;
#else
    t.c_cc[VEOF] = 0;
#endif
    if (tcsetattr(0, TCSANOW, &t) == 0) { /* what was typed stays */
        repl_tty_held = 1;
    }
}

static int repl_loop_editline(void) {
    /* libedit edits wide characters: UTF-8 typed or pasted is decoded and
     * encoded again by the locale's character type (the C locale's would
     * drop every byte past ASCII) */
    if (setlocale(LC_CTYPE, "") == NULL || MB_CUR_MAX == 1) {
        (void)setlocale(LC_CTYPE, "C.UTF-8");
    }
    EditLine *el = el_init("ctxc", stdin, stdout, stderr);
    History *hist = history_init();
    HistEvent ev;
    if (el == NULL || hist == NULL) {
        fprintf(stderr, "%s: cannot start line editing\n", repl_who());
        return CLI_EXIT_FAIL;
    }
    history(hist, &ev, H_SETSIZE, 500);
    el_set(el, EL_EDITOR, "emacs");
    el_set(el, EL_PROMPT, repl_prompt);
    el_set(el, EL_HIST, history, hist);
    el_set(el, EL_ADDFN, "ctxc-complete", "complete a command, key or value",
           repl_complete);
    el_set(el, EL_BIND, "^I", "ctxc-complete", NULL);
    el_set(el, EL_ADDFN, "ctxc-interrupt", "drop the line; twice: leave",
           repl_interrupt_key);
    el_set(el, EL_BIND, "^C", "ctxc-interrupt", NULL);
    el_set(el, EL_ADDFN, "ctxc-paste", "a pasted block, whole",
           repl_paste_key);
    el_set(el, EL_BIND, "\033[200~", "ctxc-paste", NULL);
    el_set(el, EL_GETCFN, repl_getc);
    int empty_interrupts = 0;
    for (;;) {
        int count = 0;
        repl_autosave(); /* what the last line did is in FILE */
        repl_cancel = CANCEL_NONE;
        repl_tty_release();
        repl_paste_mode(true); /* a paste comes marked, as one block */
        const char *got = el_gets(el, &count);
        repl_paste_mode(false);
        repl_tty_hold();
        if (repl_cancel != CANCEL_NONE) {
            printf("^C\n");
            fflush(stdout);
            if (repl_in_block) {
                repl_block_drop();
                printf("(the \"\"\" block is dropped)\n");
                fflush(stdout);
                empty_interrupts = 0;
                continue;
            }
            if (repl_cancel == CANCEL_LINE) {
                empty_interrupts = 0;
                continue; /* the line is dropped, a new prompt */
            }
            if (++empty_interrupts >= 2) {
                break;
            }
            printf("(Ctrl-C again or Ctrl-D to leave)\n");
            fflush(stdout);
            continue;
        }
        empty_interrupts = 0;
        if (got == NULL || count <= 0) {
            putchar('\n');
            repl_block_unclosed();
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
        if (!repl_take(repl_buf)) {
            break;
        }
    }
    repl_block_drop();
    repl_tty_release(); /* the questions on leaving read cooked lines */
    history_end(hist);
    el_end(el);
    return CLI_EXIT_OK;
}

static int repl_loop_stdin(void) {
    for (;;) {
        (void)repl_job_tick();
        repl_autosave(); /* what the last line did is in FILE */
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
        if (c == EOF && ferror(stdin) && errno == EINTR &&
            cli_interrupt_take()) {
            clearerr(stdin); /* Ctrl-C: the script ends here */
            break;
        }
        if (c == EOF && ferror(stdin)) {
            fprintf(stderr, "%s: stdin: read error: %s\n", repl_who(),
                    strerror(errno));
            return CLI_EXIT_FAIL;
        }
        if (c == EOF && len == 0) {
            break;
        }
        if (repl_line_ok(len, nul)) {
            repl_buf[len] = '\0';
            if (!repl_take(repl_buf)) {
                repl_block_drop();
                break;
            }
        }
        if (c == EOF) {
            break;
        }
    }
    repl_block_unclosed();
    return CLI_EXIT_OK;
}

static int repl_usage(const char *what, const char *arg) {
    return cli_usage_fail(repl_chat ? "chat" : "repl", "%s%s", what, arg);
}

/* Every option, for the suggestions. */
static const char *const repl_options[] = {
    "--history",  "--profile", "--workspace", "--provider", "--model",
    "--base-url", "--key-env", "--ca-file",   "--verbose",  "--help",
    NULL,
};
static const char *const chat_options[] = {
    "--history", "--profile", "--workspace", "--provider", "--model",
    "--base-url", "--key-env", "--ca-file", "--verbose", "--help",
    "--system", "--no-stream", NULL,
};

CTXC_WORK_DEFINE_DEFAULT(repl_work);

/* Options that set a setting (ephemeral, as in `ctxc compress`): the
 * chat's model, and the summary model of the LLM strategies. */
static const struct {
    const char *option;
    const char *key;
} chat_option_keys[] = {
    {"--provider", "provider"},
    {"--model", "model"},
    {"--base-url", "base-url"},
    {"--key-env", "auth-key-name"},
    {"--ca-file", "network.ca-file"},
};

static const char *chat_option_key(const char *a) {
    for (size_t k = 0; k < sizeof chat_option_keys / sizeof chat_option_keys[0];
         k++) {
        if (strcmp(a, chat_option_keys[k].option) == 0) {
            return chat_option_keys[k].key;
        }
    }
    return NULL;
}

static int repl_main(int argc, char **argv) {
    const char *profile = NULL;
    const char *workspace = NULL;
    const char *who = repl_who();
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool takes = strcmp(a, "--history") == 0 ||
                     strcmp(a, "--profile") == 0 ||
                     strcmp(a, "--workspace") == 0 ||
                     (repl_chat && strcmp(a, "--system") == 0) ||
                     chat_option_key(a) != NULL;
        if (takes && i + 1 >= argc) {
            return repl_usage("missing value after ", a);
        }
        if (strcmp(a, "--history") == 0) {
            repl_history_file = argv[++i];
        } else if (strcmp(a, "--profile") == 0) {
            profile = argv[++i];
        } else if (strcmp(a, "--workspace") == 0) {
            workspace = argv[++i];
        } else if (takes) {
            i++; /* --system and the settings: after the profile, below */
        } else if (repl_chat && strcmp(a, "--no-stream") == 0) {
            /* below, after the profile */
        } else if (strcmp(a, "--verbose") == 0) {
            cli_verbose = true;
        } else if (a[0] == '-') {
            return cli_unknown_option(repl_chat ? "chat" : "repl", a,
                                      repl_chat ? chat_options : repl_options);
        } else {
            return repl_usage("unexpected argument: ", a);
        }
    }
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (!cli_settings_open(&repl_settings, &repl_pfs, profile, who)) {
        return CLI_EXIT_FAIL;
    }
    for (int i = 0; i < argc; i++) {
        const char *key = chat_option_key(argv[i]);
        if (strcmp(argv[i], "--no-stream") == 0) {
            /* one JSON answer: servers and proxies that do not stream */
            if (ctxc_settings_set_bool(&repl_settings, CTXC_SETTING_STREAM,
                                       false, &err) != CTXC_OK) {
                fprintf(stderr, "%s: --no-stream: %s\n", who,
                        ctxc_error_message(&err));
                return CLI_EXIT_USAGE;
            }
        } else if (strcmp(argv[i], "--system") == 0) {
            chat_system = argv[++i];
        } else if (key != NULL) {
            const char *v = strcmp(argv[i], "--ca-file") == 0
                                ? cli_absolute_path(argv[i + 1])
                                : argv[i + 1];
            if (ctxc_settings_set(&repl_settings, key, v, &err) != CTXC_OK) {
                const char *hint = strcmp(argv[i], "--provider") == 0
                                       ? cli_provider_hint(v, true)
                                       : NULL;
                fprintf(stderr, "%s: %s %s: %s%s%s\n", who, argv[i],
                        argv[i + 1], ctxc_error_message(&err),
                        hint != NULL ? "\n" : "", hint != NULL ? hint : "");
                return CLI_EXIT_USAGE;
            }
            i++;
        } else if (strcmp(argv[i], "--history") == 0 ||
                   strcmp(argv[i], "--profile") == 0 ||
                   strcmp(argv[i], "--workspace") == 0) {
            i++;
        }
    }
    ctxc_history_t *h = cli_history_get();
    if (repl_history_file != NULL) {
        /* a missing file is a new history; one that is there must load
         * (a file that cannot be read is an error, never a new file that
         * would then be written over it) */
        struct stat sb;
        if (lstat(repl_history_file, &sb) == 0) {
            const char *name;
            if (!cli_load(repl_history_file, &name)) {
                fprintf(stderr, "%s: %s: not loaded; nothing written\n", who,
                        repl_history_file);
                return CLI_EXIT_FAIL;
            }
            repl_file_loaded = true;
            repl_loaded_count = ctxc_history_count(h);
        } else if (errno != ENOENT) {
            fprintf(stderr, "%s: %s: cannot read: %s; nothing written\n", who,
                    repl_history_file, strerror(errno));
            return CLI_EXIT_FAIL;
        }
    }
    if (ctxc_session_init(&repl_session, h, &repl_work, &repl_settings, &err) !=
        CTXC_OK) {
        cli_report(who, &err);
        return CLI_EXIT_FAIL;
    }
    if (cli_spill_open(&repl_settings, &repl_pfs, who)) {
        cli_spill_attach(&repl_session);
    }
    if (workspace == NULL) {
        workspace = cli_workspace_from_history(h);
    }
    ctxc_session_set_workspace(&repl_session, workspace);
    /* the chat's model and the LLM strategies' (one port, one transport);
     * the repl goes on without them when they cannot be set up (the
     * LLM-free strategies still work; /compress says what is missing) */
    bool llm = cli_llm_setup(&repl_session, &repl_settings, who);
    if (repl_chat && !llm) {
        return CLI_EXIT_FAIL;
    }
    repl_mark_saved(); /* what was loaded (or nothing) is saved */
    repl_file_hash = repl_saved_hash; /* FILE holds it (or nothing) */
    cli_interrupt_install();
    cli_term_init(&chat_term, stdout, isatty(1) != 0);
    cli_term_init(&chat_err_term, stderr, isatty(2) != 0);
    bool tty = isatty(0) && isatty(1);
    if (tty) {
        printf("ctxc %s - %zu entries loaded; /help for commands, Tab "
               "completes\n",
               ctxc_version(), ctxc_history_count(h));
        if (repl_chat) {
            const char *pv =
                ctxc_settings_string(&repl_settings, CTXC_SETTING_PROVIDER);
            const char *md =
                ctxc_settings_string(&repl_settings, CTXC_SETTING_MODEL);
            printf("chat: provider %s, model %s\n",
                   pv != NULL ? pv : "(not set)",
                   md != NULL ? md : "(not set)");
        }
    }
    int rc = tty ? repl_loop_editline() : repl_loop_stdin();
    repl_job_finish(); /* a summary in flight is waited for, then applied */
    repl_autosave();
    if (rc == CLI_EXIT_OK) {
        repl_leave(tty);
    }
    if (rc == CLI_EXIT_OK && !tty && repl_failed) {
        rc = CLI_EXIT_FAIL; /* a script: one of its lines failed */
    }
    cli_llm_teardown();
    return cli_stdout_ok(who) ? rc : CLI_EXIT_FAIL;
}

int cli_cmd_repl(int argc, char **argv) {
    repl_chat = false;
    return repl_main(argc, argv);
}

int cli_cmd_chat(int argc, char **argv) {
    repl_chat = true;
    return repl_main(argc, argv);
}
