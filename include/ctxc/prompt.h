/** @file
 * ctxc — the prompt store: built-in prompts, the resolver hierarchy and the
 * installer.
 *
 * A prompt has an id `"<category>/<name>"` (e.g. "compression/middle-out").
 * Its built-in copy is `prompts/<id>.md` of the source tree, compiled into a
 * const table. On a filesystem (include/ctxc/port.h) it is looked up, first
 * found wins:
 *
 *   `providers/<provider>/models/<model>/<id>.md`   level "model"
 *   `providers/<provider>/<id>.md`                   level "provider"
 *   `<id>.md`                                        level "base"
 *   the built-in table                             level "built-in"
 *
 * `<provider>` and `<model>` are each turned into one safe path component
 * (ctxc_prompt_component); a level whose name is empty is skipped. A file
 * found on the filesystem is used verbatim.
 */
#ifndef CTXC_PROMPT_H
#define CTXC_PROMPT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/port.h"
#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Prompt id of middle-out's summary prompt. */
#define CTXC_PROMPT_MIDDLE_OUT "compression/middle-out"
/** Prompt id of one-shot's summary prompt. */
#define CTXC_PROMPT_ONE_SHOT "compression/one-shot"

/* ---- built-in table ------------------------------------------------------ */

/** One built-in prompt: its id and its text in flash. */
typedef struct {
    const char *id;   /**< "compression/middle-out" */
    const char *text; /**< NULL when the build leaves the prompt out */
    size_t len; /**< bytes of `text` */
} ctxc_prompt_builtin_t;

/** Generated from prompts/ at build time (gen/ctxc_prompts.c), sorted by id.
 * Every shipped prompt has an entry, also those left out of the build. */
extern const ctxc_prompt_builtin_t ctxc_prompt_builtins[];
extern const size_t ctxc_prompt_builtin_count; /**< entries in ctxc_prompt_builtins */

/** The table entry of id, or NULL when no prompt of that id ships. */
const ctxc_prompt_builtin_t *ctxc_prompt_builtin(const char *id);

/* ---- names ----------------------------------------------------------------
 */

/** Longest provider or model path component (bytes, without the NUL). */
#define CTXC_PROMPT_COMPONENT_MAX 64u

/** Turns a provider or model name into one path component: ASCII letters
 * lower-cased; every character outside [a-z0-9._-] (one UTF-8 sequence, or
 * one invalid byte) becomes '-'; a result made only of dots ("." or "..")
 * has its dots turned into '-'. A name longer than CTXC_PROMPT_COMPONENT_MAX
 * is cut to 55 bytes followed by '~' and 8 hex digits of a hash of the whole
 * name, so that two long names never share a folder by accident.
 * Writes the NUL-terminated component to out and returns its length; 0 for
 * NULL or "" (the level is then skipped). Never fails. */
size_t ctxc_prompt_component(const char *name,
                             char out[CTXC_PROMPT_COMPONENT_MAX + 1]);

/** Where a resolved prompt came from, first match wins: the model's folder, the provider's, the base folder, the built-in table. */
typedef enum {
    CTXC_PROMPT_LEVEL_MODEL = 0,
    CTXC_PROMPT_LEVEL_PROVIDER,
    CTXC_PROMPT_LEVEL_BASE,
    CTXC_PROMPT_LEVEL_BUILTIN,
    CTXC_PROMPT_LEVEL_COUNT_
} ctxc_prompt_level_t;

/** "model", "provider", "base", "built-in". */
const char *ctxc_prompt_level_name(ctxc_prompt_level_t level);

/** Checks a prompt id: `"<category>/<name>"`, each part from [a-z0-9._-], not
 * starting with '.'. Errors: CTXC_E_INVALID_ARG naming the problem. */
ctxc_status_t ctxc_prompt_id_check(const char *id, ctxc_error_t *err);

/** The filesystem path of id at a filesystem level, into out[0..cap).
 * Errors: CTXC_E_INVALID_ARG (id, level), CTXC_E_NOT_FOUND (the level is
 * skipped: its provider or model name is empty), CTXC_E_NO_SPACE. */
ctxc_status_t ctxc_prompt_path(const char *provider, const char *model,
                               const char *id, ctxc_prompt_level_t level,
                               char *out, size_t cap, ctxc_error_t *err);

/* ---- resolving ------------------------------------------------------------
 */

/** A resolved prompt: its text, the level it came from and the file used. */
typedef struct {
    const char *text; /**< the caller's buffer, or the built-in table */
    size_t len; /**< bytes of `text` */
    ctxc_prompt_level_t level; /**< the level it was found at */
    char path[CTXC_CFG_PATH_MAX]; /**< the file used; `"<id>.md"` for built-in */
} ctxc_prompt_t;

/** Resolves id for provider/model (either may be NULL or ""): the first
 * level that has the file wins; a file is read into buf[0..cap) and used
 * verbatim. fs may be NULL (built-in only).
 * Errors: CTXC_E_INVALID_ARG (id), CTXC_E_PROMPT_NOT_FOUND (no level has it,
 * not even the built-in table; the message names the file), and for a file
 * that exists but cannot be used, the error of reading it naming the path
 * (CTXC_E_IO for an unreadable file or a directory, CTXC_E_NO_SPACE with
 * err->needed when it is larger than cap) - never a silent fallback to the
 * next level. */
ctxc_status_t ctxc_prompt_resolve(const ctxc_fs_t *fs, const char *provider,
                                  const char *model, const char *id, char *buf,
                                  size_t cap, ctxc_prompt_t *out,
                                  ctxc_error_t *err);

/* ---- installer ------------------------------------------------------------
 *
 * Writes each built-in prompt that is missing to "<id>.md" under the root,
 * and updates a file to a newer built-in text only when the user never
 * edited it. What it wrote is recorded in CTXC_PROMPT_MANIFEST (one line
 * per file: 16 hex digits of the FNV-1a 64 hash of the content installed,
 * a space, the path); a file whose content matches neither the built-in
 * text nor the recorded hash is the user's and is never touched. */

/** The installer's record of what it wrote, under the filesystem root. */
#define CTXC_PROMPT_MANIFEST ".prompts-manifest"

/** What the installer did with one prompt. */
typedef enum {
    CTXC_PROMPT_INSTALLED = 0, /**< was missing, written */
    CTXC_PROMPT_UPDATED,       /**< unedited copy of an older text, replaced */
    CTXC_PROMPT_UP_TO_DATE,    /**< already the built-in text */
    CTXC_PROMPT_KEPT,          /**< edited by the user, left alone */
    CTXC_PROMPT_NOT_BUILT_IN   /**< left out of this build, nothing to write */
} ctxc_prompt_action_t;

/** "installed", "updated", "up to date", "kept (edited by you)",
 * "not in this build". */
const char *ctxc_prompt_action_name(ctxc_prompt_action_t action);

/** Called once per built-in prompt with what the installer did. */
typedef void (*ctxc_prompt_install_fn)(void *user, const char *path,
                                       ctxc_prompt_action_t action);

/** Installs/updates the built-in prompts on fs. scratch: the first half holds
 * the manifest, the second half one prompt file at a time (so at least
 * twice the larger of the two). fn may be NULL.
 * Errors: CTXC_E_READ_ONLY, CTXC_E_PARSE (a corrupt manifest, with its line;
 * nothing is written then: fix or delete it), CTXC_E_NO_SPACE (scratch),
 * the filesystem's errors naming the path. Files are written one by one,
 * each atomically, then the manifest; a failure stops there (what was
 * written stays, and is recognised as unedited on the next run). */
ctxc_status_t ctxc_prompts_install(const ctxc_fs_t *fs, char *scratch,
                                   size_t cap, ctxc_prompt_install_fn fn,
                                   void *user, ctxc_error_t *err);

/** FNV-1a 64 of data (the manifest's hash). */
uint64_t ctxc_prompt_hash(const void *data, size_t len);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_PROMPT_H */
