/*
 * ctxc host CLI — pieces shared by the command files.
 */
#ifndef CTXC_CLI_H
#define CTXC_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "ctxc/ctxc.h"

enum { CLI_EXIT_OK = 0, CLI_EXIT_FAIL = 1, CLI_EXIT_USAGE = 2 };

/* The CLI's one history (host board sizes). */
ctxc_history_t *cli_history_get(void);

/* Imports `path` ("-" = stdin) into the history; reports errors to stderr
 * as "FILE:LINE: reason". *name_out is the name used in messages. */
bool cli_load(const char *path, const char **name_out);

/* Reports an error as "NAME:LINE: reason" or "NAME: reason". */
void cli_report(const char *name, const ctxc_error_t *err);

/* ctxc_write_fn over a FILE *. */
ctxc_status_t cli_write_file(void *user, const char *data, size_t len);

/* `ctxc compress ARGS...` (argv after the command). */
int cli_cmd_compress(int argc, char **argv);

/* `ctxc prompts list|show|install ...` (argv after the command). */
int cli_cmd_prompts(int argc, char **argv);

#endif /* CTXC_CLI_H */
