/*
 * ctxc — internal declarations shared by the core modules. Not installed.
 */
#ifndef CTXC_INTERNAL_H
#define CTXC_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctxc/history.h"
#include "ctxc/status.h"
#include "ctxc/strategy.h"
#include "id_index.h"
#include "sink.h"

/* ---- errors -------------------------------------------------------------
 * Mini formatter (no stdio in the library): %s (const char *), %u (unsigned),
 * %z (size_t), %q (const char *, size_t: quoted, clipped to 40 bytes),
 * %% (percent). Returns `st` so callers can `return ctxc__fail(...)`. */
#define ctxc__fail ctxc_error_set
/* The same formatter into buf[0..cap) (always NUL-terminated, cut to fit). */
void ctxc__vformat(char *buf, size_t cap, const char *fmt, va_list ap);
/* Same, with the bytes needed for CTXC_E_NO_SPACE. */
ctxc_status_t ctxc__fail_space(ctxc_error_t *err, size_t needed,
                               const char *fmt, ...);
/* Prefixes the current message with "<prefix>: " (for context). */
void ctxc__err_prefix(ctxc_error_t *err, const char *fmt, ...);

/* ---- output sink: ctxc__sink_t, ctxc__put(), ctxc__putc() ... (sink.h) --- */

/* Byte equality of two strings (absent and empty compare equal). */
static inline bool ctxc__str_eq(ctxc_str_t a, ctxc_str_t b) {
    if (a.len != b.len) {
        return false;
    }
    for (size_t i = 0; i < a.len; i++) {
        if (a.ptr[i] != b.ptr[i]) {
            return false;
        }
    }
    return true;
}

/* ---- UTF-8 --------------------------------------------------------------- */

/* Decodes one scalar value at s[0..len). Returns the bytes used (1..4) or 0
 * for an invalid sequence (overlong, surrogate, > U+10FFFF, truncated). */
size_t ctxc__utf8_decode(const uint8_t *s, size_t len, uint32_t *cp);
/* Encodes cp (<= U+10FFFF, not a surrogate) into out; returns 1..4. */
size_t ctxc__utf8_encode(uint32_t cp, char out[4]);
/* Validates a whole string; on failure *bad_at = offset of the bad byte. */
bool ctxc__utf8_valid(const char *s, size_t len, size_t *bad_at);

/* 64-bit little-endian hosts: the importer counts the estimator's text
 * statistics while it scans (eight bytes at a time). Small targets keep the
 * separate count after the write (and the flash). */
#if SIZE_MAX > 0xFFFFFFFFu && defined(__BYTE_ORDER__) &&                      \
    __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CTXC__SCAN_STATS 1
#endif

/* ---- text statistics (estimate.c) ----------------------------------------
 * What the default estimator needs of a text: UTF-16 units, whitespace runs
 * (\s of ECMAScript) and whether it starts / ends with whitespace. The
 * pieces of a block's text join into the block's statistics. */
typedef struct {
    uint64_t units;
    uint64_t runs;
    bool first_ws;
    bool last_ws;
} ctxc__text_stats_t;

/* cp is in ECMAScript's \s set. */
bool ctxc__is_space(uint32_t cp);
/* a = a followed by b. */
void ctxc__stats_join(ctxc__text_stats_t *a, const ctxc__text_stats_t *b);
/* round(max(words * 1.3, units / 4)) with words = runs + 1 (0 if empty). */
uint32_t ctxc__stats_tokens(const ctxc__text_stats_t *s);

/* ---- JSON --------------------------------------------------------------- */

/* Input of the JSON readers: a plain byte span, or the body of a JSON string
 * literal (between the quotes) whose decoded content is read. */
typedef enum {
    CTXC__SRC_RAW = 0,  /* plain UTF-8 bytes */
    CTXC__SRC_JSTR = 1, /* body of a JSON string literal, escapes decoded */
    CTXC__SRC_VALID = 2, /* UTF-8 (or JSON text) validated already: copied
                            as is, never checked again */
} ctxc__src_kind_t;

/* Validates exactly one JSON value in `in` (whitespace around it allowed) and
 * writes its canonical form to `out`: no insignificant whitespace, key order
 * kept, strings re-escaped as JSON.stringify writes them, numbers as written.
 * Depth counts containers; a top-level container is depth 1 and may nest
 * down to `max_depth`. Errors: CTXC_E_PARSE, CTXC_E_UTF8, CTXC_E_TOO_DEEP,
 * with the byte position in the message. One pass (json_tok.h's scanner).
 * CTXC__SRC_JSTR (JSON text inside a string body) is decoded into `out` and
 * canonicalised there in place; when `out` has no room for the decoded text
 * (or only measures), only the string body is checked and out->len grows by
 * the decoded length, an upper bound of the canonical one. */
ctxc_status_t ctxc__json_canon(const char *in, size_t len,
                               ctxc__src_kind_t kind, unsigned max_depth,
                               ctxc__sink_t *out, ctxc_error_t *err);

/* Iterates the code points of a string: CTXC__SRC_RAW decodes UTF-8,
 * CTXC__SRC_JSTR decodes a JSON string body (escapes, surrogate pairs).
 * Returns 1 with *cp set, 0 at the end, or -1 on an invalid sequence (err
 * set: CTXC_E_UTF8 or CTXC_E_PARSE). */
typedef struct {
    const char *p;
    size_t n;
    size_t pos;
    ctxc__src_kind_t kind;
} ctxc__cp_iter_t;
int ctxc__cp_next(ctxc__cp_iter_t *it, uint32_t *cp, ctxc_error_t *err);

/* Writes `cp` as JSON.stringify would inside a string literal. */
void ctxc__json_escape_cp(ctxc__sink_t *out, uint32_t cp);
/* Writes a quoted canonical JSON string from a source (validated). */
ctxc_status_t ctxc__json_write_string(ctxc__sink_t *out, const char *p,
                                      size_t n, ctxc__src_kind_t kind,
                                      ctxc_error_t *err);
/* Writes the decoded content of a source as UTF-8 (validated). */
ctxc_status_t ctxc__write_decoded(ctxc__sink_t *out, const char *p, size_t n,
                                  ctxc__src_kind_t kind, ctxc_error_t *err);
/* Compares the decoded content of a (valid) source with a plain string. */
bool ctxc__src_equals(const char *p, size_t n, ctxc__src_kind_t kind,
                      const char *s, size_t slen);

/* In a canonical compact JSON object, finds top-level `key` and returns the
 * span of its value. */
bool ctxc__json_find_key(const char *obj, size_t len, const char *key,
                         ctxc_str_t *value);

/* Skips one canonical JSON value starting at obj[pos]; returns the position
 * after it. */
size_t ctxc__json_skip_value(const char *js, size_t len, size_t pos);

/* ---- block layout -------------------------------------------------------- */

#define CTXC__MAX_FIELDS 5

typedef struct {
    const char *key; /* interchange key */
    uint8_t optional;
    uint8_t json; /* value is a JSON value, not a string */
} ctxc__field_desc_t;

typedef struct {
    const char *name;
    uint8_t nfields;
    ctxc__field_desc_t fields[CTXC__MAX_FIELDS];
} ctxc__block_desc_t;

extern const ctxc__block_desc_t ctxc__block_desc[CTXC_BLOCK_TYPE_COUNT];

/* Field i of a block (order of ctxc__block_desc). */
ctxc_str_t ctxc__block_field(const ctxc_block_t *b, unsigned i);
void ctxc__block_set_field(ctxc_block_t *b, unsigned i, ctxc_str_t v);

/* ---- record writer (history.c) -------------------------------------------
 * The store writes entries from "sources": each field is a span plus how to
 * read it. Used by the public append/replace (raw strings, JSON text) and by
 * the importer (JSON string bodies and JSON value spans, decoded while they
 * are written into the arena). */

typedef struct {
    const char *p; /* NULL = absent */
    size_t n;
    ctxc__src_kind_t kind; /* for JSON fields: how the JSON text is read */
} ctxc__src_t;

typedef struct {
    ctxc_block_type_t type;
    ctxc__src_t f[CTXC__MAX_FIELDS];
    /* Optional: what ctxc_estimate_block_default() gives for this block,
     * when the source knows it already (the importer counts while it
     * scans); the record writer then does not count it again. */
    bool has_tokens;
    uint32_t tokens;
} ctxc__block_src_t;

/* Produces block i (0-based, called with i = 0..n-1 in order, possibly
 * several times). Returns CTXC_OK or an error (err set). */
typedef ctxc_status_t (*ctxc__block_fn)(void *ctx, size_t i,
                                        ctxc__block_src_t *out,
                                        ctxc_error_t *err);

typedef struct {
    ctxc_speaker_t speaker;
    size_t block_count;
    ctxc__block_fn block;
    void *ctx;
    ctxc__src_t metadata; /* JSON object, or absent */
} ctxc__entry_src_t;

/* Appends (index == SIZE_MAX) or replaces entry `index`. */
ctxc_status_t ctxc__history_put(ctxc_history_t *h, size_t index,
                                const ctxc__entry_src_t *src,
                                ctxc_error_t *err);

/* Whether tool_response block b with its result replaced by `result` (a
 * JSON value) has a smaller default estimate than b: the error both share
 * is counted once, and b's result only when its length does not decide. */
bool ctxc__estimate_result_smaller(const ctxc_block_t *b, ctxc_str_t result);
/* A lower bound of the default estimate of a tool_response whose text is
 * the JSON value v alone (no error), from its length. */
uint32_t ctxc__estimate_value_floor(ctxc_str_t v);

/* Estimate of one entry with the history's estimator / with `fn`. */
uint32_t ctxc__estimate_entry(const ctxc_history_t *h, const ctxc_entry_t *e);
uint32_t ctxc__estimate_with(ctxc_estimate_fn fn, void *user,
                             const ctxc_entry_t *e);

/* Writes an entry record into a scratch area (plans, density results) and
 * describes it in an INSERT op (replaces = UINT32_MAX). */
ctxc_status_t ctxc__record_to_scratch(uint8_t *scratch, size_t cap,
                                      size_t *used,
                                      const ctxc__entry_src_t *src,
                                      ctxc_estimate_fn est, void *user,
                                      ctxc_plan_op_t *op, ctxc_error_t *err);

/* A read-only entry view of an INSERT op's record. */
void ctxc__op_entry(const uint8_t *scratch, const ctxc_plan_op_t *op,
                    ctxc_entry_t *e);

/* An entry source that yields the blocks of an existing entry, each passed
 * through `edit` (which may change fields or return false to drop the
 * block). Fields are handed on as CTXC__SRC_VALID (copied, not checked):
 * an edit sets only valid UTF-8 strings and canonical JSON values. */
typedef bool (*ctxc__block_edit_fn)(void *user, size_t index, ctxc_block_t *b);
typedef struct {
    const ctxc_entry_t *entry;
    ctxc__block_edit_fn edit; /* NULL: blocks unchanged */
    void *user;
    /* iteration cache */
    const uint8_t *cur;
    size_t next_src; /* source block index of cur */
    size_t next_out; /* output index expected next */
} ctxc__entry_edit_t;

/* Number of blocks the edit keeps. */
size_t ctxc__entry_edit_count(ctxc__entry_edit_t *ed);
/* ctxc__block_fn over a ctxc__entry_edit_t. */
ctxc_status_t ctxc__entry_edit_block(void *ctx, size_t i,
                                     ctxc__block_src_t *out, ctxc_error_t *err);

/* ---- pairing rule of the store (pairing.c) -------------------------------- */

/* Checks that putting `src` at `pos` (appending: pos == count) keeps the
 * pairing rule: tool_call only in ai entries, tool_response only in tool
 * entries, each call id used by one call and one response at most, the
 * response after its call. Errors: CTXC_E_INVALID_ARG naming the block. */
ctxc_status_t ctxc__pairing_check_put(ctxc_history_t *h, size_t pos,
                                      bool replace,
                                      const ctxc__entry_src_t *src,
                                      ctxc_error_t *err);
/* Checks that a plan keeps both sides of every pair or neither, and that
 * its inserted entries carry only tool blocks of the entry they replace. */
ctxc_status_t ctxc__pairing_check_plan(ctxc_history_t *h,
                                       const ctxc_plan_t *plan,
                                       ctxc_error_t *err);
/* Adds the unpaired calls and responses to *calls / *responses using the
 * history's id index (each id: at most one call and one response, the
 * response later); false, adding nothing, without a usable index. */
bool ctxc__pairing_unpaired(const ctxc_history_t *h, size_t *calls,
                            size_t *responses);
/* Index maintenance: after an append / after any other change. */
void ctxc__pairing_appended(ctxc_history_t *h);
void ctxc__pairing_stale(ctxc_history_t *h);

/* ---- plans and density results (plan.c) ---------------------------------- */

ctxc_status_t ctxc__entry_src_from_in(const ctxc_entry_in_t *in,
                                      ctxc__entry_src_t *src,
                                      ctxc_error_t *err);
ctxc_status_t ctxc__plan_insert_src(ctxc_plan_t *plan,
                                    const ctxc__entry_src_t *src,
                                    ctxc_estimate_fn est, void *user,
                                    uint32_t replaces, ctxc_error_t *err);
void ctxc__density_init(ctxc_density_result_t *r, ctxc_work_t *work);
ctxc_status_t ctxc__density_remove(ctxc_density_result_t *r, size_t index,
                                   ctxc_error_t *err);
ctxc_status_t ctxc__density_replace(ctxc_density_result_t *r, size_t index,
                                    const ctxc__entry_src_t *src,
                                    ctxc_estimate_fn est, void *user,
                                    ctxc_error_t *err);

/* ---- strategy functions (compiled in per CTXC_CFG_STRATEGY_<NAME>) ---- */

ctxc_status_t ctxc__td_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err);
ctxc_status_t ctxc__hd_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err);
ctxc_status_t ctxc__hd_optimize(const ctxc_view_t *raw,
                                const ctxc_density_config_t *config,
                                ctxc_work_t *work,
                                ctxc_density_result_t *result,
                                ctxc_error_t *err);

/* ---- tool-call pairing of a view (boundary.c) ----------------------------
 * A call id index over a view: for each id the position and block of its
 * tool_call and of its tool_response. `ok` when the view is regular (every
 * tool_call in an ai entry, every tool_response in a tool entry, no id with
 * two calls or two responses) and the index holds every id: then "the first
 * tool_response after the call" and "the last tool_call before the
 * response" are the indexed ones when they lie on the right side. Otherwise
 * callers scan (the same answers, slower). */
typedef struct {
    const ctxc_view_t *v;
    ctxc__id_index_t ix;
    bool ok;
    bool built; /* lazy: built on the first lookup that needs it */
    void *mem;
    size_t bytes;
} ctxc__pairs_t;

/* Builds the index over `mem` (bytes; may be NULL). */
void ctxc__pairs_build(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes);
/* The same in steps, for a caller that walks the view anyway: begin (false:
 * no table), add every tool_call and tool_response block in view order
 * (false: not regular or full), then set pr->ok when every add succeeded. */
bool ctxc__pairs_begin(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                       size_t bytes);
bool ctxc__pairs_add(ctxc__pairs_t *pr, const ctxc_entry_t *e, size_t p,
                     size_t k, const ctxc_block_t *b);
/* An index over `mem` built only when a lookup below needs it. */
void ctxc__pairs_lazy(ctxc__pairs_t *pr, const ctxc_view_t *v, void *mem,
                      size_t bytes);
/* The first tool_response to `id` in a tool entry after view position
 * `from` (as ctxc__find_response): a few entries are scanned, then the
 * (lazy) index answers, or a scan when it cannot. */
bool ctxc__pairs_response(ctxc__pairs_t *pr, size_t from, ctxc_str_t id,
                          size_t *pos, size_t *block);
/* The last tool_call with `id` in an ai entry before view position
 * `before` (its first such block), the same way. */
bool ctxc__pairs_call(ctxc__pairs_t *pr, size_t before, ctxc_str_t id,
                      size_t *pos, size_t *block, ctxc_block_t *call);
/* The same by a scan of [0, before). */
bool ctxc__find_call(const ctxc_view_t *v, size_t before, ctxc_str_t id,
                     size_t *pos, size_t *block, ctxc_block_t *call);

/* The slot of `id` (pr->ok only), or NULL. */
ctxc__id_slot_t *ctxc__pairs_find(const ctxc__pairs_t *pr, ctxc_str_t id);
/* Sum of the block counts of a view's entries (an upper bound of its keys). */
size_t ctxc__view_blocks(const ctxc_view_t *v);

/* Common start of a compress(): the call id index of the context's view in
 * the first table of ctx->work->index, the boundary data in
 * ctx->work->boundary, the sum of the view's cached estimates (also
 * recorded as plan->meta.tokens_before, with the strategy and the original
 * count) and the target threshold x limit x 0.6. */
ctxc_status_t ctxc__compress_prepare(const ctxc_compress_ctx_t *ctx,
                                     ctxc_strategy_id_t id, ctxc_plan_t *plan,
                                     ctxc_boundary_t *bd, ctxc__pairs_t *pairs,
                                     uint64_t *total, uint64_t *target,
                                     ctxc_error_t *err);

/* First tool_response to `id` in a tool entry after view position `from`:
 * its position and block index. False when there is none (an unpaired
 * call). A scan. */
bool ctxc__find_response(const ctxc_view_t *v, size_t from, ctxc_str_t id,
                         size_t *pos, size_t *block);

#endif /* CTXC_INTERNAL_H */
