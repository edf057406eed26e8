/** @file
 * ctxc — history store: an ordered list of entries kept in caller-owned memory.
 *
 * Memory: one slot array (index, 16 bytes per entry) and one byte arena (the
 * text, JSON values and metadata of every entry, packed back to back). Both
 * come from the caller, usually through CTXC_HISTORY_DEFINE(). Nothing is
 * allocated.
 *
 * Atomicity: every function that fails leaves the store byte-for-byte as it
 * was (slots, arena, counters, high-water marks and token anchor).
 *
 * Strings: ctxc_str_t is a pointer + length. A NULL `ptr` means "absent" (an
 * optional field that is not set); an empty present string has ptr != NULL
 * and len 0. Strings returned by the store point into the arena, are followed
 * by a NUL byte, and stay valid until the next call that changes the store.
 *
 * JSON values (tool_call.parameters, tool_response.result, metadata) are stored
 * in compact canonical form: no insignificant whitespace, key order kept,
 * strings escaped as JavaScript's JSON.stringify writes them, numbers kept as
 * written. Values given to append/replace are validated and canonicalised.
 */
#ifndef CTXC_HISTORY_H
#define CTXC_HISTORY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** A string as pointer + length; see "Strings" in the file comment. */
typedef struct {
    const char *ptr; /**< NULL = absent */
    size_t len; /**< bytes, not counting a terminating NUL */
} ctxc_str_t;

/** A present string from a NUL-terminated C string (NULL stays absent). */
ctxc_str_t ctxc_str(const char *cstr);
/** The absent string (ptr NULL). */
#define CTXC_STR_ABSENT ((ctxc_str_t){NULL, 0})
/** A present string from a string literal (its length without the NUL). */
#define CTXC_STR_LIT(s) ((ctxc_str_t){(s), sizeof(s) - 1})

/** Who an entry is from: its interchange name is "human", "ai" or "tool". */
typedef enum {
    CTXC_SPEAKER_HUMAN = 0,
    CTXC_SPEAKER_AI = 1,
    CTXC_SPEAKER_TOOL = 2,
} ctxc_speaker_t;

/** The kind of a block; interchange names "text", "tool_call", "tool_response", "thinking", "code", "media". */
typedef enum {
    CTXC_BLOCK_TEXT = 0,
    CTXC_BLOCK_TOOL_CALL = 1,
    CTXC_BLOCK_TOOL_RESPONSE = 2,
    CTXC_BLOCK_THINKING = 3,
    CTXC_BLOCK_CODE = 4,
    CTXC_BLOCK_MEDIA = 5,
} ctxc_block_type_t;
/** Number of block types (the size of per-type tables). */
#define CTXC_BLOCK_TYPE_COUNT 6

/** Interchange names: "human"/"ai"/"tool" and "text"/"tool_call"/... */
const char *ctxc_speaker_name(ctxc_speaker_t speaker);
/** Interchange name of a block type ("text", "tool_call", ...). */
const char *ctxc_block_type_name(ctxc_block_type_t type);

/** One block. Which member of `u` is valid depends on `type`. Optional fields
 * are absent when their ptr is NULL. */
typedef struct {
    ctxc_block_type_t type; /**< which member of `u` holds the fields */
    union {
        struct {
            ctxc_str_t text;
        } text;
        struct {
            ctxc_str_t id;
            ctxc_str_t name;
            ctxc_str_t parameters; /**< JSON value */
        } tool_call;
        struct {
            ctxc_str_t call_id;
            ctxc_str_t tool_name;
            ctxc_str_t result; /**< JSON value */
            ctxc_str_t error;  /**< optional */
        } tool_response;
        struct {
            ctxc_str_t thought;
            ctxc_str_t signature; /**< optional */
        } thinking;
        struct {
            ctxc_str_t code;
            ctxc_str_t language; /**< optional */
        } code;
        struct {
            ctxc_str_t mime_type;
            ctxc_str_t data;
            ctxc_str_t encoding;
            ctxc_str_t caption;  /**< optional */
            ctxc_str_t filename; /**< optional */
        } media;
    } u; /**< the fields of the block, by `type` */
} ctxc_block_t;

/** Entry flags, cached from the metadata keys of the same name being `true`. */
#define CTXC_ENTRY_IS_SUMMARY 0x01u /**< metadata.isSummary */
#define CTXC_ENTRY_SYNTHETIC 0x02u  /**< metadata.synthetic */
#define CTXC_ENTRY_PINNED 0x04u     /**< metadata.pinned */

/** An entry to append or to replace another with. Block strings may point
 * anywhere, including into the same store's arena. */
typedef struct {
    ctxc_speaker_t speaker; /**< who the entry is from */
    const ctxc_block_t *blocks; /**< the blocks, in order */
    size_t block_count;  /**< 1 .. 65535 */
    ctxc_str_t metadata; /**< JSON object text, or absent for no metadata */
} ctxc_entry_in_t;

/** Index slot of one stored entry (part of the caller's memory; treat as
 * opaque). */
typedef struct {
    uint32_t offset; /**< record offset in the arena */
    uint32_t size;   /**< record size in bytes */
    uint32_t tokens; /**< cached token estimate */
    uint16_t block_count; /**< blocks in the entry */
    uint8_t speaker; /**< ctxc_speaker_t of the entry */
    uint8_t flags; /**< CTXC_ENTRY_* flags */
} ctxc_slot_t;

/** A read-only view of a stored entry. */
typedef struct {
    ctxc_speaker_t speaker; /**< who the entry is from */
    uint32_t flags; /**< CTXC_ENTRY_* */
    size_t block_count; /**< blocks in the entry (read them with ctxc_entry_block() or ctxc_entry_next_block()) */
    uint32_t tokens;        /**< cached estimate */
    ctxc_str_t metadata;    /**< JSON object text or absent */
    const uint8_t *blocks_; /**< internal: first block record */
    const uint8_t *end_;    /**< internal: end of the entry's record */
} ctxc_entry_t;

/** Token estimator hook: returns the token count of one block. `user` is the
 * pointer given to ctxc_history_set_estimator(). */
typedef uint32_t (*ctxc_estimate_fn)(void *user, const ctxc_block_t *block);

/** The default estimator (see estimate.h). */
uint32_t ctxc_estimate_block_default(void *user, const ctxc_block_t *block);

/** A history store: the caller's slot array and arena, and the counters over them. Declare it with CTXC_HISTORY_DEFINE() or set it up with ctxc_history_init(); read its fields only through the functions. */
typedef struct {
    ctxc_slot_t *slots; /**< the slot array (max_entries slots) */
    size_t max_entries; /**< capacity in entries */
    uint8_t *arena; /**< the byte arena */
    size_t arena_bytes; /**< capacity of the arena in bytes */

    size_t count;     /**< entries stored */
    size_t used;      /**< arena bytes used */
    size_t hwm_count; /**< high-water mark of count */
    size_t hwm_used;  /**< high-water mark of used */

    ctxc_estimate_fn estimate; /**< block estimator in use (the default when none was installed) */
    void *estimate_user; /**< pointer handed to `estimate` */
    uint64_t token_sum;   /**< sum of the cached entry estimates */
    int64_t anchor_delta; /**< provider-reported minus estimated, see anchor */

    /** Internal: the optional tool-call id index (ctxc_history_set_id_index),
     * a cache rebuilt on demand. */
    void *ids_mem_;
    size_t ids_bytes_;
    size_t ids_cap_;
    size_t ids_used_;
    uint8_t ids_state_;
    /* Internal: entries [0, frozen_) belong to a compression job in
     * progress (ctxc_session_compress_start): replace, remove and plan or
     * density application touching them answer CTXC_E_BUSY; append is
     * unaffected. gen_ counts ctxc_history_clear() calls (a job notices
     * that its range is gone). */
    size_t frozen_;
    uint32_t gen_;
    /* Internal: counts every change other than an append (replace, remove,
     * a plan or density result applied, clear, pin, an import's end or
     * abort, a new estimator): what a step learned about entries
     * [0, count) holds while it is unchanged (the density step's memo,
     * ctxc_session_t). */
    uint32_t edits_;
    /* Internal: the optional Bloom filter of the tool blocks' ids
     * (ctxc_history_set_id_filter), a cache rebuilt on demand. */
    uint8_t *idf_;
    size_t idf_bytes_;
    bool idf_ok_;
    /* Internal: 1 + the index of the first entry of an import in progress
     * (ctxc_import_begin; 0: none). A plan that would change an entry from
     * there on answers CTXC_E_BUSY (those entries are the import's until
     * it ends); removals before it move it down. */
    size_t import_from_;
} ctxc_history_t;

/** Bytes of the tool-id filter CTXC_HISTORY_DEFINE() gives a history of
 * `entries` entries (ctxc_history_set_id_filter): one byte an entry. */
#define CTXC_HISTORY_ID_FILTER_BYTES(entries) ((size_t)(entries))

/** Declares static storage for a history called `name` (a ctxc_history_t)
 * holding up to `max_entries` entries and `arena_bytes` bytes of content,
 * ready to use: no init call is needed (ctxc_history_init() is for memory
 * you provide yourself). Use at file scope (or as a block-scope static).
 *
 * Placement: the slots and the arena (the big parts) carry
 * CTXC_STORAGE_ATTR (ctxc_config_defaults.h, empty by default) and, with
 * CTXC_HISTORY_DEFINE_ATTR, `attr` as well, e.g. to put this history's
 * arena in another RAM bank or in an uninitialised section:
 *   CTXC_HISTORY_DEFINE_ATTR(hist, 256, 81920,
 *                            __attribute__((section(".ccmram"))));
 * The ctxc_history_t itself (about 80 bytes of initialised data) stays in
 * .data. A .noinit section is fine: the contents of slots and arena are
 * never read before they are written. Alignment is 8 bytes at least; an
 * attr may ask for more (__attribute__((aligned(32)))). */
#define CTXC_HISTORY_DEFINE_ATTR(name, max_entries, arena_bytes, attr)         \
    static ctxc_slot_t name##_slots_[(max_entries)] CTXC_STORAGE_ATTR attr;    \
    static uint8_t name##_arena_[(arena_bytes)] __attribute__((aligned(8)))    \
    CTXC_STORAGE_ATTR attr;                                                    \
    static uint8_t name##_idf_[CTXC_HISTORY_ID_FILTER_BYTES(max_entries)]      \
        CTXC_STORAGE_ATTR attr;                                                \
    static ctxc_history_t name = {name##_slots_,                               \
                                  (max_entries),                               \
                                  name##_arena_,                               \
                                  (arena_bytes),                               \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  ctxc_estimate_block_default,                 \
                                  NULL,                                        \
                                  0,                                           \
                                  0,                                           \
                                  NULL,                                        \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  0,                                           \
                                  name##_idf_,                                 \
                                  CTXC_HISTORY_ID_FILTER_BYTES(max_entries),   \
                                  false,                                       \
                                  0}

/** CTXC_HISTORY_DEFINE_ATTR without an attribute of its own. */
#define CTXC_HISTORY_DEFINE(name, max_entries, arena_bytes)                    \
    CTXC_HISTORY_DEFINE_ATTR(name, max_entries, arena_bytes, )

/** Same, with the CTXC_CFG_HISTORY_* sizes. */
#define CTXC_HISTORY_DEFINE_DEFAULT(name)                                      \
    CTXC_HISTORY_DEFINE(name, CTXC_CFG_HISTORY_MAX_ENTRIES,                    \
                        CTXC_CFG_HISTORY_ARENA_BYTES)
/** CTXC_HISTORY_DEFINE_DEFAULT() with an attribute list for this object (a section, an alignment). */
#define CTXC_HISTORY_DEFINE_DEFAULT_ATTR(name, attr)                           \
    CTXC_HISTORY_DEFINE_ATTR(name, CTXC_CFG_HISTORY_MAX_ENTRIES,               \
                             CTXC_CFG_HISTORY_ARENA_BYTES, attr)

/** Initialise over caller memory, for storage you place yourself (any
 * section; slots: max_entries x sizeof(ctxc_slot_t) bytes aligned for
 * ctxc_slot_t, arena: 8-byte aligned). max_entries 1..65535, arena_bytes >=
 * 64 and < 2 GiB. Errors: CTXC_E_INVALID_ARG. */
ctxc_status_t ctxc_history_init(ctxc_history_t *h, ctxc_slot_t *slots,
                                size_t max_entries, void *arena,
                                size_t arena_bytes, ctxc_error_t *err);

/** Gives the store optional memory for an index of tool-call ids (16 bytes
 * per slot; CTXC_HISTORY_ID_INDEX_BYTES(n) holds n distinct call ids). The
 * pairing rule (see ctxc_history_append) then costs O(1) per appended tool
 * block instead of a scan of the store, and plan checks and statistics are
 * linear. The
 * index is a cache: append keeps it current, other changes rebuild it on
 * next use; when it is too small, the scans are used. mem == NULL or bytes == 0
 * removes it. The memory must stay valid while the store uses it. */
void ctxc_history_set_id_index(ctxc_history_t *h, void *mem, size_t bytes);

/** Gives the store memory for a filter of the ids of its tool blocks (a
 * Bloom filter: CTXC_HISTORY_ID_FILTER_BYTES(max_entries) is what
 * CTXC_HISTORY_DEFINE() gives each history; a history set up with
 * ctxc_history_init() has none until this is called). Without an id index
 * (ctxc_history_set_id_index), the pairing rule of an append then reads
 * the stored entries only when the filter cannot rule a conflict out (an
 * id seen before, or a false positive: about 5 % with a byte an entry when
 * every entry holds a tool block): an append costs what it adds, not the
 * history's size. The filter is a cache: append keeps it current, other
 * changes rebuild it on the next append that needs it; the results are
 * those of the scans in every case. mem == NULL or bytes == 0 removes it.
 * The memory must stay valid while the store uses it. */
void ctxc_history_set_id_filter(ctxc_history_t *h, void *mem, size_t bytes);
/** Bytes of id index that hold `ids` distinct call ids (a call and its
 * response share one) whatever the power-of-two rounding. */
#define CTXC_HISTORY_ID_INDEX_BYTES(ids) ((size_t)(ids)*48u)

/** Empties the store (keeps memory, estimator and high-water marks). */
void ctxc_history_clear(ctxc_history_t *h);

/** Number of entries. */
size_t ctxc_history_count(const ctxc_history_t *h);

/** Appends an entry. Validates speaker, block types, required fields, UTF-8
 * of every string and JSON of parameters/result/metadata (which must be an
 * object); stores JSON in canonical form; computes the token estimate.
 * Keeps the pairing rule of tool calls and responses: a tool_call lives in
 * an ai entry and a tool_response in a tool entry; a call id is used by one
 * tool_call and answered by one tool_response at most; a response comes
 * after its call (a response whose call is not in the store, or a call not
 * answered yet, is allowed: "unpaired"). Without an id index
 * (ctxc_history_set_id_index) the check scans the store's tool blocks.
 * Errors: CTXC_E_INVALID_ARG (bad speaker/type/missing field, a broken
 * pairing rule; err->message names the block and the other entry), CTXC_E_UTF8,
 * CTXC_E_PARSE (bad JSON), CTXC_E_TOO_DEEP, CTXC_E_NO_SPACE (err->needed =
 * arena bytes missing, or 1 when the slot array is full). */
ctxc_status_t ctxc_history_append(ctxc_history_t *h, const ctxc_entry_in_t *in,
                                  ctxc_error_t *err);

/** Reads entry `index`. Errors: CTXC_E_RANGE. */
ctxc_status_t ctxc_history_get(const ctxc_history_t *h, size_t index,
                               ctxc_entry_t *out);

/** Reads block `block_index` of an entry obtained from ctxc_history_get().
 * Errors: CTXC_E_RANGE. */
ctxc_status_t ctxc_entry_block(const ctxc_entry_t *entry, size_t block_index,
                               ctxc_block_t *out);

/** Block iteration: `*cursor` starts as NULL; returns false after the last
 * block. */
bool ctxc_entry_next_block(const ctxc_entry_t *entry, const uint8_t **cursor,
                           ctxc_block_t *out);

/* While a compression job of a session holds entries [0, n) (between
 * ctxc_session_compress_start() and the poll that ends the job, or
 * ctxc_session_compress_cancel()), replace, remove, remove_range,
 * ctxc_history_apply_plan() and ctxc_density_apply() touching any of those
 * entries answer CTXC_E_BUSY and change nothing; entries appended since (n
 * and later) may be changed. ctxc_history_clear() cannot be refused: it
 * empties the store and the job ends with CTXC_E_CANCELLED at its next
 * poll, leaving the history as it is. */

/** Replaces entry `index` with `in` (same validation as append). The new
 * content may point into the store itself (e.g. a modified copy of the entry
 * being replaced). Needs free arena room for the new record when its strings
 * point into the arena, otherwise only for the size difference.
 * Errors: as append, plus CTXC_E_RANGE. */
ctxc_status_t ctxc_history_replace(ctxc_history_t *h, size_t index,
                                   const ctxc_entry_in_t *in,
                                   ctxc_error_t *err);

/** Removes the entries whose indexes are listed (any order, no duplicates)
 * and compacts the arena in place; later entries move down.
 * Errors: CTXC_E_RANGE (an index >= count), CTXC_E_INVALID_ARG (duplicate).
 * Nothing is removed on error. */
ctxc_status_t ctxc_history_remove(ctxc_history_t *h, const size_t *indexes,
                                  size_t n, ctxc_error_t *err);

/** Removes entries [from, to). Errors: CTXC_E_RANGE. */
ctxc_status_t ctxc_history_remove_range(ctxc_history_t *h, size_t from,
                                        size_t to, ctxc_error_t *err);

/* --- Pinned entries ------------------------------------------------------ */

/** Pins (pinned = true) or unpins entry `index`: sets its metadata key
 * "pinned" to true, or removes every top-level "pinned" key (metadata left
 * empty becomes absent), for the entry and every entry tied to it by a
 * tool call / response pair, transitively (pinning a call pins its
 * response and the other way round). Pins read from a file on one side of
 * a pair only are spread to the other side by the same call. Every
 * strategy keeps pinned entries verbatim and in order; plans that drop or
 * change one are refused (ctxc_history_apply_plan). Token estimates and
 * the anchor are unchanged (metadata is not counted). Errors: CTXC_E_RANGE,
 * CTXC_E_INVALID_ARG (NULL), CTXC_E_NO_SPACE (the rewritten metadata does
 * not fit the arena; err->needed = bytes missing), CTXC_E_BUSY (an entry
 * it would rewrite is in the range of a compression job in progress,
 * ctxc_session_compress_start()). Nothing changes on error. */
ctxc_status_t ctxc_history_pin(ctxc_history_t *h, size_t index, bool pinned,
                               ctxc_error_t *err);

/* --- Usage figures ---------------------------------------------------- */

/** How full a history is now and at most so far (ctxc_history_usage()). */
typedef struct {
    /** @{ entries: stored now, capacity, high-water mark */
    size_t entries_used, entries_max, entries_hwm;
    /** @} */
    /** @{ arena bytes: in use now, capacity, high-water mark */
    size_t bytes_used, bytes_max, bytes_hwm;
    /** @} */
} ctxc_history_usage_t;

/** Fills `out` with the store's usage and high-water marks. */
void ctxc_history_usage(const ctxc_history_t *h, ctxc_history_usage_t *out);

/* --- Token estimates -------------------------------------------------- */

/** Installs a block estimator (NULL restores the default) and recomputes every
 * cached entry estimate. Clears the anchor. */
void ctxc_history_set_estimator(ctxc_history_t *h, ctxc_estimate_fn fn,
                                void *user);

/** Estimate of the whole history: the sum of the cached entry estimates,
 * corrected by the anchor (never below 0). */
uint64_t ctxc_history_tokens(const ctxc_history_t *h);

/** Sum of the cached entry estimates, without the anchor. */
uint64_t ctxc_history_tokens_estimated(const ctxc_history_t *h);

/** Re-anchors the total to a provider-reported prompt token count for the
 * history as it is now: from now on ctxc_history_tokens() returns
 * reported + (estimates of what was appended since). replace, remove and
 * clear drop the anchor (the report no longer describes the history). */
void ctxc_history_anchor_tokens(ctxc_history_t *h, uint64_t reported);

/* --- Views ---------------------------------------------------------------
 * Raw view: every entry. Curated view (what compression strategies see):
 * every human and tool entry plus the ai entries that have content (at least
 * one block that is not an empty text or empty thinking block). A view maps
 * view positions to store indexes through caller memory. */

/** Which entries a view shows: every entry (RAW) or the curated ones (CURATED). */
typedef enum { CTXC_VIEW_RAW = 0, CTXC_VIEW_CURATED = 1 } ctxc_view_kind_t;

/** A view of a history: view positions mapped to store indexes through caller memory. Valid until the store changes. */
typedef struct {
    const ctxc_slot_t *slots_; /**< internal: read-only access to the entries */
    const uint8_t *arena_;
    const uint16_t *map; /**< view position -> store index */
    size_t count;        /**< entries in the view */
    size_t store_count;  /**< entries in the store it was made from */
} ctxc_view_t;

/** Builds a view. `map` must hold ctxc_history_count(h) elements.
 * Errors: CTXC_E_NO_SPACE (map too small; err->needed = elements). */
ctxc_status_t ctxc_view_init(ctxc_view_t *view, const ctxc_history_t *h,
                             ctxc_view_kind_t kind, uint16_t *map,
                             size_t map_cap, ctxc_error_t *err);

/** Reads the entry at view position `pos`. Errors: CTXC_E_RANGE. */
ctxc_status_t ctxc_view_get(const ctxc_view_t *view, size_t pos,
                            ctxc_entry_t *out);

/** Store index of view position `pos` (pos < view->count). */
size_t ctxc_view_index(const ctxc_view_t *view, size_t pos);

/** True when the entry has content in the sense of the curated view. */
bool ctxc_entry_has_content(const ctxc_entry_t *entry);

/* --- Statistics ----------------------------------------------------------- */

/** Counts of a history, from ctxc_history_stats(). */
typedef struct {
    size_t entries; /**< entries stored */
    size_t per_speaker[3];                        /**< by ctxc_speaker_t */
    size_t per_block_type[CTXC_BLOCK_TYPE_COUNT]; /**< by ctxc_block_type_t */
    size_t tool_calls; /**< tool_call blocks */
    size_t tool_responses; /**< tool_response blocks */
    size_t unpaired_calls;     /**< no tool_response with its id later on */
    size_t unpaired_responses; /**< no tool_call with its callId before it */
    uint64_t tokens;           /**< ctxc_history_tokens() */
} ctxc_history_stats_t;

/** Counts entries, blocks and tool-call pairing. Linear with the history's
 * id index (ctxc_history_set_id_index; a stale index is rebuilt here, which
 * writes the index memory and its cache fields, though `h` is const),
 * otherwise O(calls x blocks) with no memory beyond `out`; the same counts
 * either way. */
void ctxc_history_stats(const ctxc_history_t *h, ctxc_history_stats_t *out);

/* --- Metadata ------------------------------------------------------------ */

/** Finds a top-level key in an entry's metadata object and returns its value
 * as canonical JSON text. Errors: CTXC_E_NOT_FOUND. */
ctxc_status_t ctxc_entry_meta_find(const ctxc_entry_t *entry, const char *key,
                                   ctxc_str_t *value);

/* --- Plain-text tool values (src/text_tool.c) ------------------------------
 * A device's tool produces text ("temp 21.4C"), but a tool_call's
 * parameters and a tool_response's result are JSON values. These store
 * plain text as a JSON string, escaped as JSON.stringify writes it (the
 * canonical form: the export has "result":"temp 21.4C", and an import of
 * the exported line stores the same bytes again). Every
 * byte is taken: '"' and '\\' are escaped, \b \f \n \r \t and the other
 * control characters (NUL included) are written as escapes, valid UTF-8 as
 * it is, and each byte that does not belong to a valid UTF-8 sequence
 * (stray continuation byte, truncated or overlong sequence, encoded
 * surrogate, beyond U+10FFFF) is replaced by U+FFFD. Nothing is
 * allocated. */

/** Writes `text` (any bytes; ptr may be NULL when len is 0) as a JSON string
 * literal, quotes included, into buf[0..cap) and points `out` (may be NULL)
 * at it: the value to give as a tool_call's parameters or a
 * tool_response's result to any append (ctxc_session_add_room() included).
 * No NUL is written. The escaping is the one of "Plain-text tool values"
 * above. Errors: CTXC_E_NO_SPACE (buf too small: err->needed = the bytes
 * missing; with buf NULL and cap 0, the whole size), nothing written;
 * CTXC_E_INVALID_ARG (NULL text with len > 0, NULL buf with cap > 0). */
ctxc_status_t ctxc_json_from_text(ctxc_str_t text, char *buf, size_t cap,
                                  ctxc_str_t *out, ctxc_error_t *err);

/** Appends `in` as ctxc_history_append() does, except that the JSON fields of
 * its blocks (every tool_call's parameters, every tool_response's result)
 * are plain text, stored as JSON strings (see "Plain-text tool values")
 * and escaped straight into the arena: no buffer of the caller, no room
 * beyond the entry's own record. The other fields, the metadata (a JSON
 * object) and the pairing rule are checked as by ctxc_history_append().
 * It appends to the history directly: an application with a session
 * calls ctxc_json_from_text() and the session's add instead, so that the
 * session sees the new content.
 * Errors: those of ctxc_history_append(); CTXC_E_NO_SPACE (err->needed:
 * the arena bytes missing, or 1 when the slot array is full) with the
 * history unchanged. */
ctxc_status_t ctxc_history_append_text_tool(ctxc_history_t *h,
                                            const ctxc_entry_in_t *in,
                                            ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_HISTORY_H */
