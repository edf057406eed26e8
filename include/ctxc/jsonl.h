/** @file
 * ctxc — JSON Lines codec for histories.
 *
 * Interchange format (one entry per line):
 *   {"speaker":"human"|"ai"|"tool","blocks":[BLOCK,...],"metadata":{...}}
 * BLOCK is one of
 *   {"type":"text","text":S}
 *   {"type":"tool_call","id":S,"name":S,"parameters":JSON}
 *   {"type":"tool_response","callId":S,"toolName":S,"result":JSON,"error":S?}
 *   {"type":"thinking","thought":S,"signature":S?}
 *   {"type":"code","code":S,"language":S?}
 *   {"type":"media","mimeType":S,"data":S,"encoding":S,"caption":S?,"filename":S?}
 * "metadata" is optional and may hold any keys; isSummary, synthetic and
 * pinned set the entry flags when true.
 *
 * The OpenAI chat-messages shape is imported too, one message per line:
 *   {"role":"system"|"user"|"assistant"|"tool","content":S|null|[PART...],
 *    "tool_calls":[{"id":S,"type":"function","function":{"name":S,
 *    "arguments":S}}], "tool_call_id":S, "name":S}
 * user/system -> human (system adds metadata {"source_role":"system"}),
 * assistant -> ai (text + tool_call blocks; arguments must hold JSON),
 * tool -> tool (tool_response; toolName from the matching call).
 *
 * Import is strict and atomic: the first bad line stops the import, the error
 * names the line and the reason, and the history is left exactly as it was
 * before ctxc_import_begin().
 *
 * Export writes the canonical form: keys in the order above, JSON compact and
 * canonical (see history.h), one entry per line ending in `"\n"`. Export of an
 * import is byte-stable: fmt(fmt(x)) == fmt(x).
 */
#ifndef CTXC_JSONL_H
#define CTXC_JSONL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The line format of an import. */
typedef enum {
    CTXC_FORMAT_AUTO = 0,     /**< decided by the first line */
    CTXC_FORMAT_ICONTENT = 1, /**< the interchange format above */
    CTXC_FORMAT_OPENAI = 2,   /**< OpenAI chat messages */
} ctxc_format_t;

/** 32-bit words per JSON token (start, end, next, size, type and flags;
 * on 64-bit little-endian hosts also the text units the importer counts
 * while it scans). */
#if SIZE_MAX > 0xFFFFFFFFu && defined(__BYTE_ORDER__) &&                      \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CTXC_JSON_TOKEN_WORDS 6
#else
#define CTXC_JSON_TOKEN_WORDS 5
#endif

/** Import state and scratch. Large (CTXC_CFG_JSON_MAX_TOKENS * 4 *
 * CTXC_JSON_TOKEN_WORDS bytes: 20 per token on 32-bit targets):
 * declare it static. Treat the members as private. */
typedef struct {
    ctxc_history_t *history; /**< the history being imported into */
    uint32_t line; /**< lines read so far */
    ctxc_format_t format; /**< the format decided at the first line (or given) */
    bool active; /**< between begin and end */
    ctxc_history_t snapshot; /**< the history's state at begin (its entry
                                count, bytes and counters: what an abort
                                gives back when nothing else changed) */
    uint32_t tokens_[CTXC_CFG_JSON_MAX_TOKENS * CTXC_JSON_TOKEN_WORDS];
} ctxc_import_t;

/** Starts an import that appends to `h`. Errors: CTXC_E_INVALID_ARG. */
ctxc_status_t ctxc_import_begin(ctxc_import_t *imp, ctxc_history_t *h,
                                ctxc_format_t format, ctxc_error_t *err);

/** Imports one line (a trailing `"\n"` or `"\r\n"` is ignored; a line holding
 * only whitespace is skipped). On error the whole import is rolled back and
 * ended: err->line is the line number, err->message the reason.
 * Errors: CTXC_E_PARSE (not JSON, wrong shape, unknown speaker/block type,
 * missing field, wrong type, unknown field), CTXC_E_UTF8, CTXC_E_TOO_DEEP,
 * CTXC_E_TOO_LARGE (line larger than the arena, or more JSON tokens than
 * CTXC_CFG_JSON_MAX_TOKENS), CTXC_E_NO_SPACE, CTXC_E_INVALID_ARG (no import
 * active). */
ctxc_status_t ctxc_import_line(ctxc_import_t *imp, const char *line, size_t len,
                               ctxc_error_t *err);

/** Ends the import, keeping what was imported. */
ctxc_status_t ctxc_import_end(ctxc_import_t *imp, ctxc_error_t *err);

/** Ends the import, removing the entries it appended: the history's
 * entries are those it had at begin. What is not the import's own is left
 * as it is: a compression job's hold on its range
 * (ctxc_session_compress_start) survives, and a job that ended while the
 * import was open keeps what it applied (it replaced entries that existed
 * before the import; a plan that would change an imported entry is
 * refused with CTXC_E_BUSY while the import is open). When nothing but
 * the import changed the history, the history is byte for byte as it was
 * at begin (counters, anchor and high-water marks included). Entries
 * appended by others after begin count as the import's. A job started
 * during the import whose range holds imported entries is cancelled by
 * the abort (its next poll answers CTXC_E_CANCELLED, as after a clear). */
void ctxc_import_abort(ctxc_import_t *imp);

/** Whole-buffer convenience: begin, every line of `text`, end. When the
 * text does not fit (CTXC_E_NO_SPACE), err->needed is what the whole text
 * needs beyond the free space - arena bytes, or entry slots when the
 * history's entries ran out - the lines after the failing one measured
 * too (the history is left as it was); err->line is the first line that
 * did not fit. ctxc_import_line() cannot see the lines to come: its
 * err->needed is what the lines so far need. */
ctxc_status_t ctxc_import_text(ctxc_import_t *imp, ctxc_history_t *h,
                               const char *text, size_t len,
                               ctxc_format_t format, ctxc_error_t *err);

/** Output sink for export: returns CTXC_OK or an error that stops the
 * export and is returned as is. */
typedef ctxc_status_t (*ctxc_write_fn)(void *user, const char *data,
                                       size_t len);

/** Writes entry `index` as one canonical line (`"\n"` included).
 * Errors: CTXC_E_RANGE, or whatever `write` returns. */
ctxc_status_t ctxc_export_entry(const ctxc_history_t *h, size_t index,
                                ctxc_write_fn write, void *user,
                                ctxc_error_t *err);

/** Writes every entry. */
ctxc_status_t ctxc_export(const ctxc_history_t *h, ctxc_write_fn write,
                          void *user, ctxc_error_t *err);

/** Writes entry `index` into `buf` (NUL-terminated). *written = line length
 * without the NUL. Errors: CTXC_E_RANGE, CTXC_E_NO_SPACE (err->needed =
 * the bytes missing). */
ctxc_status_t ctxc_export_entry_buf(const ctxc_history_t *h, size_t index,
                                    char *buf, size_t cap, size_t *written,
                                    ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_JSONL_H */
