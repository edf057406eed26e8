/*
 * ctxc host CLI — what the command files share. Two layers, no cycle:
 *
 *   commands   main.c (dispatch, stats, fmt), cli_compress.c, cli_repl.c
 *              (repl, chat), cli_restore.c, cli_prompts.c, cli_http.c
 *   shared     cli_state.c (the history, loading, reports, workspace),
 *              cli_output.c, cli_settings.c, cli_llm.c, cli_spill.c,
 *              cli_help.c, cli_term.c, cli_wait.c
 *
 * A command calls the shared modules, never another command (main.c only
 * dispatches to them); the shared modules call no command.
 */
#ifndef CTXC_CLI_H
#define CTXC_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc_port_posix.h"

/* CLI_EXIT_OVER: `ctxc compress` wrote its result, but it is still over
 * the context limit. */
enum {
    CLI_EXIT_OK = 0,
    CLI_EXIT_FAIL = 1,
    CLI_EXIT_USAGE = 2,
    CLI_EXIT_OVER = 3
};

/* ---- the shared state (cli_state.c) ---- */

/* The CLI's one history (host board sizes). */
ctxc_history_t *cli_history_get(void);

/* The history as it is, kept aside (a second store of the same size);
 * cli_history_restore() puts it back exactly (no job may be in progress
 * between the two): a step that fails changes nothing. */
void cli_history_snapshot(void);
void cli_history_restore(void);

/* Imports `path` ("-" = stdin) into the history; reports errors to stderr
 * as "FILE:LINE: reason". *name_out is the name used in messages. */
bool cli_load(const char *path, const char **name_out);

/* Reports an error as "NAME:LINE: reason" or "NAME: reason". */
void cli_report(const char *name, const ctxc_error_t *err);

/* Writes h as JSONL to path (see cli_output.c): "-" is stdout; a missing
 * or regular file is replaced atomically (a unique temporary file in its
 * directory, created exclusively, the old mode kept or 0600, fsync, rename,
 * directory fsync; the temporary file removed on failure); a FIFO or a
 * character device is written as a stream; a symbolic link is followed to
 * one of these; anything else is refused. Errors go to stderr as
 * "WHO: PATH: reason". */
bool cli_save_history(const ctxc_history_t *h, const char *path,
                      const char *who);

/* Flushes stdout and checks it for a write error: false (and
 * "WHO: stdout: write error: reason" on stderr) when output was lost. */
bool cli_stdout_ok(const char *who);

/* ctxc_write_fn over a FILE * (cli_state.c). */
ctxc_status_t cli_write_file(void *user, const char *data, size_t len);

/* `ctxc compress ARGS...` (argv after the command). */
int cli_cmd_compress(int argc, char **argv);

/* Opens the settings store over $CTXC_HOME (settings.json: a file that is
 * not JSON is reported on stderr and ignored; one whose members the library
 * refuses keeps the others, each refused key named; never rewritten) and
 * loads `profile`
 * (may be NULL) into the ephemeral layer. False (error printed, prefixed
 * with `who`) when the profile cannot be loaded. */
bool cli_settings_open(ctxc_settings_store_t *store, ctxc_posix_fs_t *pfs,
                       const char *profile, const char *who);

/* After a change of the settings file was refused (a file the library
 * does not take whole): its persistent layer loaded again as
 * cli_settings_open() loads it, the keys it takes kept, no warning. */
void cli_settings_reload(ctxc_settings_store_t *store,
                         const ctxc_posix_fs_t *pfs, const char *who);

/* metadata.cwd of the first entry (a static copy), or NULL (cli_state.c). */
const char *cli_workspace_from_history(const ctxc_history_t *h);

/* The spill store (cli_spill.c): opened when compression.density.spillDir
 * is set (false otherwise, or on an error, printed with `who`), attached
 * to a session, a block printed by id (the error on stdout when `out` is
 * stdout: the REPL), and `ctxc restore FILE.jsonl ID`. */
bool cli_spill_open(ctxc_settings_store_t *set, ctxc_posix_fs_t *pfs,
                    const char *who);
void cli_spill_attach(ctxc_session_t *s);
/* After a settings change in a session: when spillDir or spillBudget in
 * force differ from the store open, the store is opened again with them
 * (or detached, spillDir unset) and one line says so. 0: nothing changed,
 * 1: changed, -1: the new store could not be opened (printed with `who`;
 * the session has none then). */
int cli_spill_update(ctxc_session_t *s, ctxc_settings_store_t *set,
                     ctxc_posix_fs_t *pfs, const char *who);
/* The blocks written since the last flush, on storage (one syncfs): before
 * a history that may point at them is written (cli_save_history), and at
 * exit. */
void cli_spill_flush(void);
int cli_spill_print(ctxc_session_t *s, const char *id, FILE *out);
/* Whether a pointer "[ctxc:restore ID]" is in h (the id belongs to it). */
bool cli_spill_history_has(const ctxc_history_t *h, const char *id);
/* `ctxc restore FILE.jsonl ID` (cli_restore.c). */
int cli_cmd_restore(int argc, char **argv);

/* `ctxc repl ...` (argv after the command). */
int cli_cmd_repl(int argc, char **argv);
/* `ctxc chat ...` (argv after the command): the REPL in chat mode
 * (cli_repl.c). */
int cli_cmd_chat(int argc, char **argv);

/* `ctxc prompts list|show|install ...` (argv after the command). */
int cli_cmd_prompts(int argc, char **argv);

/* The model of the LLM strategies (cli_llm.c): sets the session's port
 * (POSIX: prompts under $CTXC_HOME, key from the environment) with the TLS
 * transport from the network.* settings, and a provider client bound to the
 * settings as its LLM resolver. False (error printed with `who`) when the
 * port or transport cannot be set up. */
bool cli_llm_setup(ctxc_session_t *s, ctxc_settings_store_t *settings,
                   const char *who);
/* Keys as people keep them (cli_llm.c): the variable of `provider`'s own
 * tools that is set (OPENAI_API_KEY; ANTHROPIC_API_KEY; GEMINI_API_KEY,
 * then GOOGLE_API_KEY), or NULL; their names ("GEMINI_API_KEY or
 * GOOGLE_API_KEY"), or NULL for another provider. */
const char *cli_default_key_env(const char *provider);
const char *cli_default_key_names(const char *provider);
/* A provider reference made ready for a call (the chat's and the summary
 * model's): no auth-key-name given, the provider's usual variable when it
 * is set and the URL may carry a key (https, or http to loopback), named
 * once in a note on stderr (never the key); Anthropic's base URL without a
 * trailing /v1 (its path has its own). Returns the variable taken by
 * default, or NULL. */
const char *cli_provider_ref_ready(ctxc_provider_ref_t *ref);
/* The model of the last summary call (provider and model names), or NULL. */
const ctxc_llm_t *cli_llm_used(void);
/* The port cli_llm_setup() made (NULL before). */
const ctxc_port_t *cli_llm_port(void);
/* The same port with a transport of its own: the chat's replies (a
 * compression job keeps cli_llm_port()'s connection between its polls). */
const ctxc_port_t *cli_chat_port(void);
void cli_llm_teardown(void);
/* --todos FILE: the agent's todo list (JSON) handed to the session. */
bool cli_llm_todos(ctxc_session_t *s, const char *path, const char *who);

/* Text from the network shown to a person (cli_term.c): with neutralise,
 * C0 controls other than "\n" and "\t" are written in caret notation (ESC
 * as ^[, BEL ^G, CR ^M), DEL as ^?, the C1 controls U+0080..U+009F (UTF-8
 * C2 80..C2 9F) as <U+0080>..<U+009F>, the rest as it is; a C2 ending one
 * piece waits for the next. Without neutralise the bytes are written as
 * they are. */
typedef struct {
    FILE *out;
    bool neutralise;
    bool pending_c2;
} cli_term_t;
void cli_term_init(cli_term_t *t, FILE *out, bool neutralise);
void cli_term_write(cli_term_t *t, const char *data, size_t len);
/* Ends the text: a C2 still waiting is written as it came. */
void cli_term_end(cli_term_t *t);

/* While a command waits on a model (cli_wait.c): Ctrl-C and the status
 * line. cli_interrupt_install() catches SIGINT (a flag; no SA_RESTART);
 * cli_interrupt_take() answers whether Ctrl-C was pressed since the last
 * take, and clears it. */
void cli_interrupt_install(void);
bool cli_interrupt_take(void);
/* The status line on stderr (a terminal only) while a model call runs:
 * what is done, by which provider and model (NULL: the summary model
 * cli_llm_used() names once resolved), the elapsed time, the call's phase
 * and a retry's countdown (from `client`'s progress). Redrawn by the stop
 * hook; cli_status_clear() wipes it before other text is printed (and
 * keeps it off until the end); cli_status_end() wipes it. */
void cli_status_begin(const char *what, const ctxc_provider_client_t *client,
                      const char *provider, const char *model);
void cli_status_clear(void);
void cli_status_end(void);
/* The port's stop hook (cli_llm_setup sets it): draws the status line;
 * true (the call is stopped) when Ctrl-C was pressed. */
bool cli_stop_hook(void *ctx);
/* The summary calls' provider client (cli_llm.c). */
const ctxc_provider_client_t *cli_llm_client(void);

/* `ctxc http-get URL ...` (argv after the command): cli_http.c. */
int cli_cmd_http_get(int argc, char **argv);

/* Help and usage errors (cli_help.c). */
void cli_help_global(FILE *out);
/* The usage of `cmd`; false when there is no such command. */
bool cli_help_command(const char *cmd, FILE *out);
/* The commands, NULL-terminated. */
const char *const *cli_command_names(void);
/* "; did you mean 'x'?" (or "'x' or 'y'") into buf when a candidate of the
 * NULL-terminated `cands` is close to `typed`, else ""; the count. */
size_t cli_suggest(const char *typed, const char *const *cands, char *buf,
                   size_t cap);
/* A usage error: "ctxc CMD: <message>" and "see 'ctxc CMD --help'" on
 * stderr (cmd NULL: the global help); returns CLI_EXIT_USAGE. */
int cli_usage_fail(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* "unknown option 'X'" with the closest of `options`. */
int cli_unknown_option(const char *cmd, const char *opt,
                       const char *const *options);
/* path made absolute against the working directory (a static copy; path
 * itself when it is absolute or too long). */
const char *cli_absolute_path(const char *path);
/* A hint for a network error a person can fix (an untrusted CA: the flag
 * --ca-file and the setting network.ca-file), or NULL. */
const char *cli_net_hint(const ctxc_error_t *err);
/* The compiled-in providers, `sep`-separated (a static string). */
const char *cli_provider_list(const char *sep);
/* When strategy st asks a model for its summary and the settings name none
 * (no compression.profile; provider or model unset): what is to be given,
 * in the caller's own words for the two (`provider`: "--provider P" or
 * "/set provider P"), e.g. "--provider P (openai, anthropic, gemini) and
 * --model M" (a static string). NULL when nothing is missing. */
const char *cli_summary_model_missing(const ctxc_settings_store_t *s,
                                      const ctxc_strategy_t *st,
                                      const char *provider, const char *model);
/* --verbose: status names and the library's log shown (cli_llm.c). */
extern bool cli_verbose;
/* compress -q: errors only (no header, table or notes). */
extern bool cli_quiet;
/* For a provider that is not compiled in (`ollama`): how an OpenAI-
 * compatible server is named, in flags (true) or /set commands; NULL for a
 * known provider. */
const char *cli_provider_hint(const char *value, bool flags);

#endif /* CTXC_CLI_H */
