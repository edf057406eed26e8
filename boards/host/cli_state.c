/*
 * ctxc host CLI — the state the commands share: the CLI's one history
 * (sized by the host board's ctxc_config.h), loading a file into it line by
 * line through one static buffer (nothing is allocated), error reports in
 * the "FILE:LINE: reason" form, the workspace a history names, and the
 * ctxc_write_fn over a FILE. The commands (main.c's stats and fmt,
 * cli_compress.c, cli_repl.c, cli_restore.c, ...) sit above this module and
 * the helper modules (cli_output.c, cli_settings.c, cli_llm.c,
 * cli_spill.c, cli_help.c, cli_term.c); no command calls another.
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

/* --- Storage -------------------------------------------------------------- */

CTXC_HISTORY_DEFINE_DEFAULT(cli_history);
static ctxc_import_t cli_import;
/* Tool-call id index of cli_history: pairing checks in O(1) per block for
 * up to two distinct call ids per entry on average (scans beyond). */
static uint32_t
    cli_ids[CTXC_HISTORY_ID_INDEX_BYTES(2u * CTXC_CFG_HISTORY_MAX_ENTRIES) /
            sizeof(uint32_t)];

ctxc_history_t *cli_history_get(void) { return &cli_history; }

/* --- The history as it was before a step ---------------------------------
 * A second store of the same size: a compression that fails is undone
 * whole, its density step with it (the library keeps the density step of
 * a failed compression; the CLI does not). The slots hold arena offsets,
 * so the used parts and the counters copied back are the history exactly
 * as it was; the tool-call id index is rebuilt on its next use. */

CTXC_HISTORY_DEFINE_DEFAULT(cli_snap);

void cli_history_snapshot(void) {
    ctxc_history_t *h = &cli_history;
    memcpy(cli_snap.slots, h->slots, h->count * sizeof h->slots[0]);
    memcpy(cli_snap.arena, h->arena, h->used);
    cli_snap.count = h->count;
    cli_snap.used = h->used;
    cli_snap.token_sum = h->token_sum;
    cli_snap.anchor_delta = h->anchor_delta;
}

void cli_history_restore(void) {
    ctxc_history_t *h = &cli_history;
    memcpy(h->slots, cli_snap.slots, cli_snap.count * sizeof h->slots[0]);
    memcpy(h->arena, cli_snap.arena, cli_snap.used);
    h->count = cli_snap.count;
    h->used = cli_snap.used;
    h->token_sum = cli_snap.token_sum;
    h->anchor_delta = cli_snap.anchor_delta;
    ctxc_history_set_id_index(h, cli_ids, sizeof cli_ids);
}

/* Largest line accepted: a line cannot need more than the whole arena. */
#define CLI_MAX_LINE ((size_t)CTXC_CFG_HISTORY_ARENA_BYTES)
/* Bytes asked from fread() at a time. */
#define CLI_READ_CHUNK ((size_t)65536)
/* Holds one pending line of up to CLI_MAX_LINE bytes plus its "\n" and
 * one chunk of read-ahead. */
static char cli_buf[(size_t)CTXC_CFG_HISTORY_ARENA_BYTES + 1u + 65536u];

/* --- Output helpers ------------------------------------------------------- */

static const char *cli_reason(const ctxc_error_t *err) {
    const char *msg = ctxc_error_message(err);
    if (msg == NULL || msg[0] == '\0') {
        msg = ctxc_strerror(err->status);
    }
    return msg;
}

void cli_report(const char *name, const ctxc_error_t *err) {
    if (err->line != 0) {
        fprintf(stderr, "%s:%" PRIu32 ": %s", name, err->line,
                cli_reason(err));
    } else {
        fprintf(stderr, "%s: %s", name, cli_reason(err));
    }
    if (cli_verbose) {
        fprintf(stderr, " [%s]", ctxc_status_name(err->status));
    }
    fputc('\n', stderr);
    const char *hint = cli_net_hint(err);
    if (hint != NULL) {
        fprintf(stderr, "%s: %s\n", name, hint);
    }
}

/* --- Import --------------------------------------------------------------- */

/* A file that does not fit: after the first line that does not, the rest
 * is measured (each line imported alone into the history as it was, then
 * rolled back), so that the report says what the whole file needs. */
typedef struct {
    bool active;
    bool entries; /* the entry slots ran out, not the arena */
    bool complete;
    uint32_t line; /* the first line that did not fit */
    size_t needed; /* bytes (or entries) beyond the free ones */
    size_t lines;  /* lines measured after it */
} cli_over_t;
static cli_over_t cli_over;

static void cli_measure(const char *line, size_t len) {
    ctxc_history_usage_t u;
    ctxc_history_usage(&cli_history, &u);
    size_t count0 = ctxc_history_count(&cli_history);
    ctxc_error_t e;
    memset(&e, 0, sizeof e);
    ctxc_status_t st =
        ctxc_import_begin(&cli_import, &cli_history, CTXC_FORMAT_AUTO, &e);
    if (st == CTXC_OK) {
        st = ctxc_import_line(&cli_import, line, len, &e);
    }
    if (st == CTXC_OK) {
        ctxc_history_usage_t after;
        ctxc_history_usage(&cli_history, &after);
        cli_over.needed += cli_over.entries
                               ? ctxc_history_count(&cli_history) - count0
                               : after.bytes_used - u.bytes_used;
        ctxc_import_abort(&cli_import);
    } else if (st == CTXC_E_NO_SPACE) { /* rolled back already */
        cli_over.needed +=
            cli_over.entries ? 1u : e.needed + (u.bytes_max - u.bytes_used);
    } else {
        cli_over.complete = false; /* a bad line: counted up to it */
    }
    cli_over.lines++;
}

static void cli_over_report(const char *name) {
    ctxc_history_usage_t u;
    ctxc_history_usage(&cli_history, &u);
    if (cli_over.entries) {
        fprintf(stderr,
                "%s:%" PRIu32 ": the file has %zu%s entries more than the "
                "history's %zu (CTXC_CFG_HISTORY_MAX_ENTRIES)\n",
                name, cli_over.line, cli_over.needed,
                cli_over.complete ? "" : " or more", u.entries_max);
    } else {
        fprintf(stderr,
                "%s:%" PRIu32 ": the file needs %zu%s arena bytes more than "
                "the %zu free (the history arena is %zu bytes, "
                "CTXC_CFG_HISTORY_ARENA_BYTES)\n",
                name, cli_over.line, cli_over.needed,
                cli_over.complete ? "" : " or more",
                u.bytes_max - u.bytes_used, u.bytes_max);
    }
}

/* Imports one line; on failure reports it (the import is already rolled
 * back by the library), except a line that does not fit: then the rest of
 * the file is measured and reported at its end (cli_over). */
static bool cli_feed(const char *name, const char *line, size_t len) {
    if (cli_over.active) {
        cli_measure(line, len);
        return true;
    }
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_history_usage_t u;
    ctxc_history_usage(&cli_history, &u);
    bool full = u.entries_used >= u.entries_max;
    if (ctxc_import_line(&cli_import, line, len, &err) != CTXC_OK) {
        if (err.status == CTXC_E_NO_SPACE) {
            cli_over.active = true;
            cli_over.entries = full;
            cli_over.complete = true;
            cli_over.line = err.line;
            cli_over.needed = err.needed;
            cli_over.lines = 0;
            return true;
        }
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
    if (cli_over.active) {
        cli_over.active = false;
        cli_over_report(name);
        return false;
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

ctxc_status_t cli_write_file(void *user, const char *data, size_t len) {
    FILE *out = user;
    if (len > 0 && fwrite(data, 1, len, out) != len) {
        return CTXC_E_IO;
    }
    return CTXC_OK;
}

/* --- The workspace of a history ----------------------------------------- */

static char cli_workspace[4096];

const char *cli_workspace_from_history(const ctxc_history_t *h) {
    ctxc_entry_t e;
    ctxc_str_t v;
    if (ctxc_history_get(h, 0, &e) != CTXC_OK ||
        ctxc_entry_meta_find(&e, "cwd", &v) != CTXC_OK || v.len < 2 ||
        v.ptr[0] != '"') {
        return NULL;
    }
    /* the canonical JSON string of a path: copy it unescaped */
    size_t o = 0;
    for (size_t i = 1; i + 1 < v.len && o + 1 < sizeof cli_workspace; i++) {
        char c = v.ptr[i];
        if (c == '\\' && i + 2 < v.len) {
            c = v.ptr[++i];
            if (c != '\\' && c != '"' && c != '/') {
                return NULL; /* unusual escapes: do not guess */
            }
        }
        cli_workspace[o++] = c;
    }
    cli_workspace[o] = '\0';
    return o > 0 ? cli_workspace : NULL;
}
