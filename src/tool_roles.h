/*
 * ctxc — the tool-role table of the density step and of high-density's
 * summaries (private; tool_roles.c).
 *
 * One static const table (CTXC__TOOL_ROWS below, in flash) maps a tool name
 * to its role (read, read_many, write, shell, search), where its file path
 * is (parameter keys in order, or the file headers of a patch) and where
 * its command is, with an optional discriminator parameter for multiplexed
 * tools. A call is resolved once (ctxc__tool_resolve) to a small reference
 * that later passes decode without comparing names again.
 *
 * Vocabularies (each CTXC_CFG_TOOLS_<VOCAB>, 0/1, default 1; setting
 * compression.density.vocabularies picks among the compiled-in ones), with
 * the public tool schema each row follows:
 *   spec         the spec's names (docs/strategies-providers.md): read_file,
 *                read_line_range, ast_read_file {file_path | absolute_path
 *                | path}; read_many_files {paths: [...], include};
 *                write_file, ast_edit, replace, insert_at_line,
 *                delete_line_range {file_path | absolute_path | path};
 *                run_shell_command {command}; glob, search_file_content.
 *   claude-code  Claude Code: Read {file_path, offset, limit}; Write
 *                {file_path, content}; Edit {file_path, old_string,
 *                new_string}; MultiEdit {file_path, edits}; NotebookEdit
 *                {notebook_path, ...}; Bash {command}; Glob, Grep.
 *   openhands    OpenHands CodeAct: str_replace_editor {command, path}
 *                (command view = read; create, str_replace, insert,
 *                undo_edit = write); execute_bash {command}.
 *   swe-agent    SWE-agent function calling (tools/edit_anthropic):
 *                str_replace_editor as above; bash {command}.
 *   codex        Codex CLI: apply_patch {input: "*** Begin Patch ..."} (or
 *                the patch text as the whole parameter value): the paths of
 *                "*** Add File:", "*** Update File:", "*** Delete File:"
 *                and "*** Move to:" lines are written; shell {command:
 *                argv array}.
 *   pi           pi coding agent: read {path, offset, limit}; write {path,
 *                content}; edit {path, oldText, newText}; bash {command}.
 *   cline        Cline: read_file {path}; write_to_file {path, content};
 *                replace_in_file {path, diff}; execute_command {command}.
 * A name in several vocabularies resolves through the first enabled row
 * (read_file: spec, then cline; spec's path keys include `path`).
 *
 * User tools: compression.density.readTools / writeTools, comma-separated
 * entries `name` or `name:pathKey` (without a key: file_path, absolute_path,
 * path), at most CTXC_CFG_DENSITY_USER_TOOLS_MAX each; they are looked up
 * before the table.
 */
#ifndef CTXC_TOOL_ROLES_H
#define CTXC_TOOL_ROLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/status.h"
#include "ctxc/strategy.h"

/* Roles. */
#define CTXC__ROLE_OTHER 0u
#define CTXC__ROLE_READ 1u
#define CTXC__ROLE_READ_MANY 2u
#define CTXC__ROLE_WRITE 3u
#define CTXC__ROLE_SHELL 4u
#define CTXC__ROLE_SEARCH 5u

/* Where the path is. */
#define CTXC__AT_NONE 0u
#define CTXC__AT_SPEC 1u     /* file_path, absolute_path, path */
#define CTXC__AT_PATH 2u     /* path */
#define CTXC__AT_FILE 3u     /* file_path */
#define CTXC__AT_NOTEBOOK 4u /* notebook_path */
#define CTXC__AT_PATHS 5u    /* paths: [...] (read_many_files) */
#define CTXC__AT_PATCH 6u    /* file headers of a patch text */
#define CTXC__AT_USER 7u     /* the user's key */

/* Where the command is. */
#define CTXC__CMD_NONE 0u
#define CTXC__CMD_COMMAND 1u /* `command`: a string or an argv array */

/* A resolved call. */
typedef struct {
    uint8_t role;
    uint8_t at;
    uint8_t cmd;
    const char *key; /* CTXC__AT_USER: the path key (not NUL-terminated) */
    size_t key_len;
} ctxc__tool_t;

/* Reference of a resolved call (0: not a known tool), storable in 16 bits.
 */
typedef uint16_t ctxc__tool_ref_t;

/* Resolves the tool call `name` (with its parameters, read only for a
 * discriminator) under cfg's vocabularies and user tools: its reference,
 * and the tool in *out (role OTHER when 0). */
ctxc__tool_ref_t ctxc__tool_resolve(const ctxc_density_config_t *cfg,
                                    ctxc_str_t name, ctxc_str_t params,
                                    ctxc__tool_t *out);

/* The tool of a reference ctxc__tool_resolve returned under the same cfg. */
void ctxc__tool_get(const ctxc_density_config_t *cfg, ctxc__tool_ref_t ref,
                    ctxc__tool_t *out);

/* The paths of a call, one at a time: the body of the JSON string that
 * holds the next one (still escaped; decode it with CTXC__SRC_JSTR). Start
 * with *pos = 0; false when there is no further path. Keyed paths: the
 * first key present, false when its value is not a string (malformed:
 * REQ-HD-013.5); patches: each file header in order. AT_PATHS is not
 * iterated here. */
bool ctxc__tool_next_path(const ctxc__tool_t *t, ctxc_str_t params, size_t *pos,
                          ctxc_str_t *body);

/* The call's command (a string, or the argv array joined by spaces),
 * decoded: its first cap bytes into buf, its whole length in *len. False
 * when there is none, or when a string command is longer than string_max
 * bytes. */
bool ctxc__tool_command(const ctxc__tool_t *t, ctxc_str_t params, char *buf,
                        size_t cap, size_t string_max, size_t *len);

/* Parses a value of compression.density.vocabularies (comma-separated
 * names of compiled-in vocabularies, or "none") into the mask of the
 * vocabularies left out (bit CTXC__VOCAB_<V>). Errors (CTXC_E_INVALID_ARG)
 * name the unknown entry and the known names. */
ctxc_status_t ctxc__tool_vocabs_parse(const char *p, size_t n, uint32_t *off,
                                      ctxc_error_t *err);

/* Checks a value of compression.density.readTools / writeTools: entries
 * `name` or `name:pathKey` ([A-Za-z0-9_.-]+ each), comma-separated, at most
 * CTXC_CFG_DENSITY_USER_TOOLS_MAX. `key` names the setting in errors. */
ctxc_status_t ctxc__tool_user_check(const char *key, const char *p, size_t n,
                                    ctxc_error_t *err);

#endif /* CTXC_TOOL_ROLES_H */
