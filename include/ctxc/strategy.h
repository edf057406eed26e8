/** @file
 * ctxc — compression strategies: the static table, the compression context,
 * plans, the density (optimize) step and the tool-call boundary utilities.
 * Building and applying plans and density results: ctxc/plan.h.
 *
 * A strategy never touches the history store. It reads an immutable context
 * (a read-only view of the entries plus settings) and writes a plan: the new
 * history as a sequence of kept ranges and inserted entries (replacements or
 * synthetic entries). The session applies the plan only after everything
 * that can fail has succeeded, so a failing strategy leaves the history
 * byte-for-byte as it was.
 *
 * Ratios (thresholds, preserve fractions) are integers in thousandths
 * (850 = 0.85): no floating point on the target.
 *
 * Struct fields whose name ends in '_' are private (padding, internal
 * state), as in history.h: do not read or set them.
 */
#ifndef CTXC_STRATEGY_H
#define CTXC_STRATEGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/llm.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The one list of strategies: X(ID, config-name, "name").
 * The id enum, the name table (also the enum values of the
 * compression.strategy setting) and the strategy table expand from it. */
#define CTXC_STRATEGY_LIST(X)                                                  \
    X(MIDDLE_OUT, CTXC_CFG_STRATEGY_MIDDLE_OUT, "middle-out")                  \
    X(TOP_DOWN_TRUNCATION, CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION,              \
      "top-down-truncation")                                                   \
    X(ONE_SHOT, CTXC_CFG_STRATEGY_ONE_SHOT, "one-shot")                        \
    X(HIGH_DENSITY, CTXC_CFG_STRATEGY_HIGH_DENSITY, "high-density")

/** Strategy ids: CTXC_STRATEGY_MIDDLE_OUT, _TOP_DOWN_TRUNCATION, _ONE_SHOT, _HIGH_DENSITY in list order (also for strategies left out of the build), then CTXC_STRATEGY_COUNT. */
typedef enum {
#define CTXC_STRATEGY_ENUM_(id, cfg, name) CTXC_STRATEGY_##id,
    CTXC_STRATEGY_LIST(CTXC_STRATEGY_ENUM_)
#undef CTXC_STRATEGY_ENUM_
        CTXC_STRATEGY_COUNT
} ctxc_strategy_id_t;

/** Every strategy name, in list order, NULL-terminated (the allowed values of
 * the compression.strategy setting), whether compiled in or not. */
extern const char *const ctxc_strategy_names[CTXC_STRATEGY_COUNT + 1];

/** Thousandths: CTXC_PERMILLE(0.85) == 850 (compile-time constants only). */
#define CTXC_PERMILLE(x) ((uint16_t)((x)*1000.0 + 0.5))

/* ---- views -----------------------------------------------------------------
 * ctxc_view_t (history.h) is read-only: strategies get entries through
 * ctxc_view_get() and never see the store. */

/* ---- the compression context --------------------------------------------- */

/** When a strategy acts (its trigger). */
typedef enum {
    CTXC_TRIGGER_THRESHOLD = 0,  /**< compress when over the threshold */
    CTXC_TRIGGER_CONTINUOUS = 1, /**< optimize whenever new content arrived,
                                    compress when over the threshold */
} ctxc_trigger_mode_t;

/** A strategy's trigger: when it runs and its default threshold. */
typedef struct {
    ctxc_trigger_mode_t mode; /**< threshold-only or continuous */
    uint16_t default_threshold; /**< thousandths of the context limit */
} ctxc_trigger_t;

/** Density (optimize) configuration. */
typedef struct ctxc_density_config {
    bool read_write_pruning; /**< drop reads of files written later */
    bool file_dedupe;        /**< keep only the latest --- path --- inclusion */
    bool recency_pruning;    /**< keep only the newest results per tool */
    uint32_t recency_retention; /**< results kept per tool; < 1 counts as 1 */
    const char *workspace_root; /**< relative paths resolve against it; may be
                                   NULL or "" */
    /** Tool vocabularies left out (one bit per vocabulary, in the order of
     * src/tool_roles.c; 0: every compiled-in one), from the setting
     * compression.density.vocabularies. */
    uint32_t vocabularies_off;
    /** User tools (compression.density.readTools / writeTools): NULL or
     * comma-separated `name` / `name:pathKey` entries, as the setting
     * checks them; they must stay valid while the step runs. */
    const char *read_tools;
    const char *write_tools; /**< the same for writes (compression.density.writeTools) */
    /** The spill hook (NULL: none; then pruning is as without a store):
     * called before a tool result or a text block is pruned or replaced,
     * with the store index of its entry and the block's index in it; it
     * stores the block and writes its id (CTXC_SPILL_ID_LEN hex digits and
     * a NUL, ctxc/spill.h). The pointer then carries the id
     * (CTXC_SPILLED_RESULT_TEXT, CTXC_SPILLED_NOTE_TEXT), and a read pruned
     * for a later write keeps its call and gets the pointer too.
     * CTXC_E_NO_SPACE (the store cannot take the block) prunes that block
     * as without a store (counted in spill_full); another error stops the
     * step: nothing is applied. */
    ctxc_status_t (*spill)(void *user, size_t index, size_t block, char *id,
                           ctxc_error_t *err);
    void *spill_user; /**< pointer handed to `spill` */
} ctxc_density_config_t;

/** Internal (a field of ctxc_session_t): what a session's density step
 * learned between calls, so that a step after appends reads only them
 * (CTXC_CFG_DENSITY_FILTER_BYTES). */
typedef struct {
    size_t count;    /**< entries [0, count) were stepped */
    uint32_t edits;  /**< the history's edit count after that step */
    uint32_t config; /**< a hash of the density settings it ran with */
    bool valid;      /**< false: the next step reads the whole history */
    /** Bloom filter of the paths of the read calls in [0, count) */
    uint8_t reads[CTXC_CFG_DENSITY_FILTER_BYTES > 0
                      ? CTXC_CFG_DENSITY_FILTER_BYTES
                      : 1];
    /** Bloom filter of the paths of the file inclusions in [0, count) */
    uint8_t incl[CTXC_CFG_DENSITY_FILTER_BYTES > 0
                     ? CTXC_CFG_DENSITY_FILTER_BYTES
                     : 1];
} ctxc_density_memo_t;

/** The fact check of LLM summaries (the setting compression.factCheck; the
 * bounds CTXC_CFG_FACT_CHECK_MAX_ITEMS / _MAX_BYTES): the anchors of the
 * summarised range (paths its tool calls touched, failed commands, URLs,
 * backticked identifiers, active todos) missing from the summary are
 * appended in a bounded section written by ctxc; `retry` asks the model
 * once more first, naming them. */
typedef enum {
    CTXC_FACT_CHECK_OFF = 0,    /**< no check */
    CTXC_FACT_CHECK_APPEND = 1, /**< missing anchors appended (default) */
    CTXC_FACT_CHECK_RETRY = 2,  /**< one more call naming them, then append */
} ctxc_fact_check_mode_t;

/** "off", "append", "retry", NULL (the setting's values). */
extern const char *const ctxc_fact_check_modes[4];

/** The fact check's mode and bounds (ctxc_settings_fact_check()). */
typedef struct ctxc_fact_check {
    ctxc_fact_check_mode_t mode; /**< off, append or retry */
    uint32_t max_items; /**< items listed at most (>= 1) */
    uint32_t max_bytes; /**< bytes of the section at most (>= 256: less
                           means no section) */
} ctxc_fact_check_t;

/** The history's entry and byte limits as a compression sees them
 * (ctxc_strategy_values_t.limits; the session fills it from the store and
 * the settings, see ctxc_limits_over()). */
typedef struct ctxc_limits {
    size_t entries;     /**< entries stored now (the whole history) */
    size_t max_entries; /**< its slots (0: no entry limit) */
    size_t bytes;       /**< arena bytes in use now */
    size_t arena_bytes; /**< the arena's bytes (0: no byte limit) */
    uint16_t entries_threshold; /**< compression.entries-threshold */
    uint16_t bytes_threshold;   /**< compression.bytes-threshold */
    size_t reserve_entries; /**< slots kept free for the next turn */
    size_t reserve_bytes;   /**< arena bytes kept free for it */
} ctxc_limits_t;

/** Values the strategies read (the settings registry of a later issue feeds
 * them; today the session's settings struct does). */
typedef struct ctxc_strategy_values {
    uint64_t context_limit;          /**< tokens */
    uint16_t threshold;              /**< resolved compression threshold */
    uint16_t preserve_threshold;     /**< tail fraction kept */
    uint16_t top_preserve_threshold; /**< head fraction kept (middle-out) */
    ctxc_density_config_t density; /**< the density step's settings */
    ctxc_fact_check_t fact_check; /**< the fact check (middle-out, one-shot) */
    /** the history's entry and byte limits (the session fills them from
     * the store and the settings; all zero: tokens only, as in a context
     * made by hand) */
    ctxc_limits_t limits;
} ctxc_strategy_values_t;


/** Which limit of a history: the bits of ctxc_compress_meta_t.trigger and
 * ctxc_send_report_t.trigger. */
#define CTXC_LIMIT_TOKENS 0x1u  /**< the context limit (tokens) */
#define CTXC_LIMIT_ENTRIES 0x2u /**< the slot array (entries) */
#define CTXC_LIMIT_BYTES 0x4u   /**< the arena (bytes) */

/** The entries or bytes a compression brings a limit down to when that
 * limit is over its threshold: capacity x threshold x 0.6, rounded down,
 * as the token target. */
size_t ctxc_target_count(size_t capacity, uint16_t threshold);

/** The limits over their threshold now (CTXC_LIMIT_ENTRIES,
 * CTXC_LIMIT_BYTES; the token limit is the caller's: it knows what the
 * next request adds): entries + reserve_entries over max_entries x
 * entries_threshold, bytes + reserve_bytes over arena_bytes x
 * bytes_threshold. A limit of 0 is never over. */
unsigned ctxc_limits_over(const ctxc_limits_t *l);

/** Resolvers of the LLM strategies, called only when a summary call will be
 * made (after the split checks).
 * llm: the model that writes the summary (ctxc/llm.h): the profile named by
 * compression.profile when `profile` is not NULL, else the active provider.
 * Errors: CTXC_E_PROFILE_NOT_FOUND (naming the profile), CTXC_E_INVALID_ARG
 * (no provider configured: the message names the settings to set),
 * CTXC_E_UNAVAILABLE (no provider layer in this build).
 * prompt: the text of prompt_id for that provider and model (valid until
 * the strategy returns). */
typedef ctxc_status_t (*ctxc_llm_resolver_fn)(void *user, const char *profile,
                                              const ctxc_llm_t **llm,
                                              ctxc_error_t *err);
/** The LLM strategies (middle-out, one-shot) keep their plan in the lower
 * half of work->scratch and use the upper half for the message roles, the
 * continuation text and the answer buffer; a prompt resolver that needs
 * memory for the text may read it into the start of the upper half (as the
 * session's does): the strategy then starts its own use after the text.
 * Any other prompt text must stay valid until compress() returns. */
typedef ctxc_status_t (*ctxc_prompt_resolver_fn)(
    void *user, const char *provider, const char *model, const char *prompt_id,
    ctxc_str_t *text, ctxc_error_t *err);

/** The summary call of an LLM strategy between its two halves (the session's
 * resumable job, ctxc_session_compress_start): the request the strategy
 * prepared and what the call answered. Members marked public may be read;
 * the rest is the strategy's. It must stay where it is from the first half
 * to the second (request.src points into it). With the fact check's
 * `retry` the second half may set `call` again: one more summary call, with
 * the request naming the facts the first answer left out. */
typedef struct {
    bool call;                  /**< public: a summary call is to be made */
    const struct ctxc_llm *llm; /**< public: the model it goes to */
    ctxc_llm_request_t request; /**< public: what to send */
    char *answer;               /**< public: the answer buffer */
    size_t answer_cap;          /**< public: its bytes */
    size_t len;                 /**< public: the answer's bytes (set by the
                                   caller of the call) */
    ctxc_llm_usage_t usage;     /**< public: the call's usage */
    const void *ctx_;           /* private: the compression context */
    const uint16_t *starts_;
    const unsigned char *pin_;  /* pinned view positions (not sent), or NULL */
    size_t turns_, from_, to_, long_latest_;
    uint64_t total_;
    char *cont_;
    size_t facts_cap_;          /* the fact check's memory above the answer */
    ctxc_str_t prompt_;
    ctxc_str_t missed_;         /* a retry: the facts the first answer lacked */
    bool earlier_snapshot_;
    bool retried_;              /* the fact check's second call was made */
    uint64_t used_in_, used_out_; /* the usage of the calls before this one */
} ctxc_llm_job_t;

/** An active todo of the agent, listed in the summariser
 * request: in-progress ones first, then pending; completed ones are left
 * out. */
typedef enum {
    CTXC_TODO_PENDING = 0,
    CTXC_TODO_IN_PROGRESS = 1,
    CTXC_TODO_COMPLETED = 2
} ctxc_todo_status_t;

/** One todo of the agent, as the summariser request lists it. */
typedef struct {
    const char *content; /**< one line of UTF-8 */
    ctxc_todo_status_t status; /**< pending, in progress or completed */
} ctxc_todo_t;

/** Caller memory the strategies and the session work in. Declare with
 * CTXC_WORK_DEFINE() / CTXC_WORK_DEFINE_ATTR(), or set it up over memory
 * you place yourself with ctxc_work_init(); `cap` must be at least the
 * history's max_entries.
 *
 * `index` holds two hash tables of `index_slots` slots each
 * (CTXC_WORK_INDEX_SLOT_BYTES per slot): call id -> its tool_call and
 * tool_response, and the keys of the density step (written paths, @file
 * paths, tool names). With them the density step and the tool-call
 * boundaries take time linear in the history. A table uses only the slots a
 * history needs; when a history has more keys than 3/4 of index_slots (or
 * index_slots is 0), the step takes a slower path (quadratic in the entries)
 * with the same result. CTXC_WORK_DEFINE() gives
 * CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY slots per entry, rounded up to a power
 * of two.
 *
 * high-density also borrows what a step does not use, so that its state is
 * not on the stack (nothing else uses these regions meanwhile):
 *  - the density step keeps its state (about 270 bytes on a 32-bit target,
 *    480 on a 64-bit host: pass state, pairing, key table, the edits of the
 *    entry being written) and then its two path buffers (2 x
 *    CTXC_CFG_PATH_MAX bytes) in `ops`, which only the plan of a compress
 *    and ctxc_density_apply() (after the step) use. With fewer than 26
 *    entries on a 32-bit target (31 on a 64-bit host; default
 *    CTXC_CFG_PATH_MAX) the state stays on the stack instead, and with
 *    fewer than 21 entries `ops` holds shorter path buffers: paths longer
 *    than half of it are skipped like paths over CTXC_CFG_PATH_MAX.
 *  - compress keeps its buffers in `replacements` (a density result is
 *    applied before compress runs, the next step starts a new one): the
 *    summary being written, its text, the entry being written and its
 *    record source (900 bytes on a 32-bit target, 1208 on a 64-bit host;
 *    from 38 / 51 entries on, else on the stack), then the per-block
 *    decisions (320 bytes; from 51 / 64 entries on, else each block is
 *    decided as it is written: the same result), then up to four 320-byte
 *    summaries cached between deciding and writing (all four from 105 /
 *    117 entries on; fewer only mean summaries made again).
 * Pinned entries (ctxc_history_pin): compress marks them, one byte per
 * view position, in `removals` (free while compress runs), and the density
 * step in `boundary` (which it does not use otherwise); with no pinned
 * entry neither is touched.
 * The results are the same with any work area size. */
typedef struct ctxc_plan_op ctxc_plan_op_t;
/** The work area (see above); set up by CTXC_WORK_DEFINE() or ctxc_work_init(), then handed to the session. */
typedef struct {
    uint16_t *map;      /**< view map, cap elements */
    uint16_t *boundary; /**< boundary data (ctxc_boundary_t), cap + 1 elements */
    uint16_t *marks;    /**< per-entry marks of the density step and of
                           ctxc_density_apply(), cap elements */
    uint32_t *removals; /**< density removals, cap elements */
    size_t cap; /**< entries the arrays are sized for */
    ctxc_plan_op_t *ops;          /**< plan operations, 2 * cap + 2 elements */
    ctxc_plan_op_t *replacements; /**< density replacements, cap elements */
    uint8_t *scratch;             /**< bytes of inserted entries */
    size_t scratch_cap; /**< bytes of `scratch` */
    void *index;        /**< 2 * index_slots * CTXC_WORK_INDEX_SLOT_BYTES bytes,
                           4-byte aligned, or NULL */
    size_t index_slots; /**< slots per table (0: no index) */
} ctxc_work_t;

/** Bytes of one slot of the work area's index. */
#define CTXC_WORK_INDEX_SLOT_BYTES 16u

/** Immutable input of compress(). Holds no pointer to the history store.
 * The cached estimates of the view's entries (ctxc_entry_t.tokens) are the
 * sums of their blocks' estimates by `estimate` (the history's estimator),
 * as the store keeps them; strategies rely on that. */
typedef struct {
    ctxc_view_t view;          /**< curated view of the history */
    ctxc_estimate_fn estimate; /**< the history's estimator */
    void *estimate_user; /**< pointer handed to `estimate` */
    uint64_t current_tokens; /**< ctxc_history_tokens() now */
    ctxc_strategy_values_t values; /**< the settings the strategy reads (limit, thresholds, density) */
    ctxc_llm_resolver_fn llm_resolver; /**< NULL: no provider layer */
    void *llm_user; /**< pointer handed to `llm_resolver` */
    const char *profile;                     /**< compression.profile, or NULL */
    ctxc_prompt_resolver_fn prompt_resolver; /**< NULL: the built-in prompt */
    void *prompt_user; /**< pointer handed to `prompt_resolver` */
    const ctxc_todo_t *todos; /**< the agent's todos (may be NULL) */
    size_t todo_count; /**< todos in `todos` */
    const char *transcript_path; /**< the full transcript's path, or NULL */
    ctxc_work_t *work;           /**< working memory (not the store) */
    /** The port's stop hook (NULL: none): work of a strategy after its
     * model call (the fact check of the summary) asks it and ends with
     * CTXC_E_CANCELLED, changing nothing, when it says stop. */
    bool (*stop)(void *ctx);
    void *stop_ctx; /**< pointer handed to `stop` */
} ctxc_compress_ctx_t;

/* ---- plans --------------------------------------------------------------- */

/** What a plan operation does. */
typedef enum {
    CTXC_PLAN_KEEP = 0,   /**< keep store entries [from, to) */
    CTXC_PLAN_INSERT = 1, /**< insert the entry record at
                             scratch[offset, offset + size) */
} ctxc_plan_kind_t;

/** One operation of a plan (ctxc_plan_op_t): keep a range of store entries or insert a new entry record. */
struct ctxc_plan_op {
    uint8_t kind; /**< ctxc_plan_kind_t */
    uint8_t speaker; /**< INSERT */
    uint8_t flags;   /**< INSERT */
    uint8_t pad_;
    uint16_t block_count; /**< INSERT */
    uint16_t pad2_;
    union {
        struct {
            uint32_t from; /**< KEEP: first store index kept */
            uint32_t to;   /**< KEEP: one past the last store index kept */
        };
        struct {
            uint32_t offset; /**< INSERT: the record's first scratch byte */
            uint32_t size;   /**< INSERT: the record's bytes */
        };
    };
    uint32_t tokens;   /**< INSERT: estimate */
    uint32_t replaces; /**< INSERT: store index replaced, or UINT32_MAX */
};

/** What a plan did, for the caller's report. */
typedef struct {
    size_t original_count;   /**< entries in the compressed view */
    size_t compressed_count; /**< entries of that view after the plan */
    ctxc_strategy_id_t strategy; /**< the strategy that made the plan */
    bool llm_call_made; /**< whether a model was asked for a summary */
    bool unchanged;               /**< the plan keeps the history as it is */
    const char *unchanged_reason; /**< why (static text), or NULL */
    size_t top_preserved;         /**< middle-out */
    size_t bottom_preserved;      /**< middle-out, one-shot, top-down (kept tail),
                                     high-density (tail kept verbatim) */
    size_t middle_compressed;     /**< entries removed or summarised */
    uint64_t tokens_before; /**< estimate of the view before the plan */
    uint64_t tokens_after; /**< estimate of the planned history */
    /** Set by the session when this network-free strategy ran instead of
     * waiting for a compression job's summary (compression.on-limit): why
     * (static text); NULL otherwise. */
    const char *fallback;
    /** the fact check of an LLM summary (ctxc_fact_check_t): anchors of the
     * summarised range found in the summary */
    size_t anchors_found;
    size_t anchors_missing; /**< anchors missing from the model's summary */
    size_t anchors_added; /**< anchors listed in the section ctxc appended */
    /** whether a second call asked for the missing ones (retry) */
    bool fact_retry_made;
    /** @{ the summary call's usage as the provider reported it (both calls
     * when the fact check asked again; 0: not reported), also kept in the
     * summary entry's metadata ("usage") */
    uint64_t summary_input_tokens, summary_output_tokens;
    /** @} */
    /** the limits over their threshold when it started (CTXC_LIMIT_*
     * bits); the strategy freed each of these down to its target */
    unsigned trigger;
    /** oldest unpinned entries dropped whole to meet a limit:
     * top-down-truncation always; high-density when its one-line summaries
     * were not enough (the view's entries, as middle_compressed counts) */
    size_t entries_dropped;
    /** @{ the whole history's entries and arena bytes before and after
     * (set by the session when the plan is applied) */
    size_t entries_before, entries_after, bytes_before, bytes_after;
    /** @} */
} ctxc_compress_meta_t;

/** The new history as ops over the store. Ops are in order; KEEP ranges are
 * increasing and do not overlap. */
typedef struct {
    ctxc_plan_op_t *ops; /**< the operations, `count` of `cap` used */
    /** @{ operations used and their capacity */
    size_t count, cap;
    /** @} */
    uint8_t *scratch; /**< bytes of the inserted entries' records */
    /** @{ scratch bytes used and their capacity */
    size_t scratch_used, scratch_cap;
    /** @} */
    ctxc_compress_meta_t meta; /**< what the plan did */
    /** internal: the estimator (and its user) that the first `counted_`
     * INSERT ops were counted with; when that is every INSERT and the
     * history counts with the same, applying the plan takes their tokens */
    ctxc_estimate_fn counted_estimate_;
    void *counted_user_;
    size_t counted_;
} ctxc_plan_t;

/* ---- density step -------------------------------------------------------- */

/** What each pass of the density step changed. */
typedef struct {
    size_t read_write_pruned; /**< read calls dropped with their responses */
    size_t read_write_entries_removed; /**< entries removed by read/write pruning */
    size_t read_write_entries_replaced; /**< entries replaced by read/write pruning (blocks left out) */
    size_t file_dedupe_replaced; /**< inclusions whose content was replaced */
    size_t file_dedupe_entries;  /**< entries replaced by the dedupe pass */
    size_t recency_pruned;       /**< results replaced by the pointer text */
    size_t recency_entries;      /**< entries replaced by the recency pass */
    /** blocks pruned without being stored: the spill hook answered
     * CTXC_E_NO_SPACE (the store full of this step's blocks); such a
     * result got the pointer without an id, such an inclusion the note
     * without one */
    size_t spill_full;
} ctxc_density_counts_t;

/** Result of optimize(): entries to remove and entries to replace (the
 * replacement records live in `scratch`). */
typedef struct {
    uint32_t *removals; /**< store indexes of the entries to remove */
    /** @{ removals: used and capacity */
    size_t n_removals, cap_removals;
    /** @} */
    ctxc_plan_op_t *replacements; /**< INSERT ops with `replaces` set */
    /** @{ replacements: used and capacity */
    size_t n_replacements, cap_replacements;
    /** @} */
    uint8_t *scratch; /**< bytes of the replacement records */
    /** @{ scratch bytes used and their capacity */
    size_t scratch_used, scratch_cap;
    /** @} */
    ctxc_density_counts_t counts; /**< what each pass changed */
    /** internal: as in ctxc_plan_t, for the replacements */
    ctxc_estimate_fn counted_estimate_;
    void *counted_user_;
    size_t counted_;
} ctxc_density_result_t;

/** The pointer text that replaces a pruned result (recency pruning). */
#define CTXC_PRUNED_RESULT_TEXT                                                \
    "[Result pruned \xe2\x80\x94 re-run tool to retrieve]"
/** With a spill hook (ctxc_density_config_t.spill): the pointer text of a
 * spilled result; 0000000000000000 stands for the block's id. */
#define CTXC_SPILLED_RESULT_TEXT                                               \
    "[Result pruned \xe2\x80\x94 [ctxc:restore 0000000000000000]]"
/** The note of a spilled inclusion (file dedupe with a spill hook);
 * 0000000000000000 stands for the block's id. */
#define CTXC_SPILLED_NOTE_TEXT                                                 \
    "[superseded by a later inclusion of this file \xe2\x80\x94 "              \
    "[ctxc:restore 0000000000000000]]"

/* ---- strategies ---------------------------------------------------------- */

/** A strategy: its name, whether it needs a model, its trigger and its functions. The table of compiled-in ones is read with ctxc_strategy_find() and ctxc_strategy_get(). */
typedef struct ctxc_strategy {
    ctxc_strategy_id_t id; /**< its id */
    const char *name; /**< its name ("middle-out", ...) */
    bool requires_llm; /**< true for middle-out and one-shot (they call a model) */
    ctxc_trigger_t trigger; /**< when it runs, its default threshold */
    /** Plans the compressed history. Errors: as documented per strategy;
     * CTXC_E_UNAVAILABLE for LLM strategies in a build without them. */
    ctxc_status_t (*compress)(const ctxc_compress_ctx_t *ctx, ctxc_plan_t *plan,
                              ctxc_error_t *err);
    /** Optional density step over the raw view (NULL: none). */
    ctxc_status_t (*optimize)(const ctxc_view_t *raw,
                              const ctxc_density_config_t *config,
                              ctxc_work_t *work, ctxc_density_result_t *result,
                              ctxc_error_t *err);
} ctxc_strategy_t;

/** The compression target: context_limit x threshold x 0.6 tokens
 * (threshold in thousandths), rounded down. */
uint64_t ctxc_target_tokens(uint64_t context_limit, uint16_t threshold);

/** Looks a strategy up by name. Errors: CTXC_E_UNKNOWN_STRATEGY (the message
 * names it; also for a known name left out of this build, with a message
 * saying so), CTXC_E_INVALID_ARG (NULL). */
ctxc_status_t ctxc_strategy_find(const char *name, const ctxc_strategy_t **out,
                                 ctxc_error_t *err);

/** The compiled-in strategy with this id, or NULL. */
const ctxc_strategy_t *ctxc_strategy_get(ctxc_strategy_id_t id);

/* ---- tool-call boundaries ------------------------------------------------
 * A split index i (0 <= i <= N) of a view is valid when no tool_call in
 * [0, i) has its tool_response (the first one with its id in a tool entry
 * after it) in [i, N). Pairs already unpaired in the input do not count.
 * All functions share the prefix ctxc_boundary_. */

/** Tool-call boundaries of a view: which split indexes keep every call with its response. */
typedef struct {
    const uint16_t *limit; /**< limit[i]: 1 + the last response position of
                              calls before i (0: none); N + 1 elements */
    size_t count; /**< entries of the view (N) */
} ctxc_boundary_t;

/** Computes the boundary data of a view into `mem` (count + 1 elements).
 * `index` (index_bytes bytes, CTXC_WORK_INDEX_SLOT_BYTES per slot; may be
 * NULL) is scratch for a call id index: with room for the view's tool ids
 * (4/3 slots per id) this takes time linear in the view, otherwise
 * quadratic, with the same result. Errors: CTXC_E_NO_SPACE (mem). */
ctxc_status_t ctxc_boundary_init(ctxc_boundary_t *b, const ctxc_view_t *view,
                                 uint16_t *mem, size_t mem_cap, void *index,
                                 size_t index_bytes, ctxc_error_t *err);
/** True when split index i (0 <= i <= count) separates no tool call from its response. */
bool ctxc_boundary_is_valid(const ctxc_boundary_t *b, size_t i);
/** Smallest valid index >= i (N when none below it). */
size_t ctxc_boundary_forward(const ctxc_boundary_t *b, size_t i);
/** Largest valid index <= i (0 is always valid). */
size_t ctxc_boundary_backward(const ctxc_boundary_t *b, size_t i);
/** Forward if that is < N, else backward. */
size_t ctxc_boundary_adjust(const ctxc_boundary_t *b, size_t i);

/** Slots per index table of a work area for `max_entries` entries:
 * CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY per entry rounded up to a power of
 * two (a constant expression). */
#define CTXC_WORK_POW2_SMEAR_(x)                                               \
    ((x) | ((x) >> 1) | ((x) >> 2) | ((x) >> 3) | ((x) >> 4) | ((x) >> 5) |    \
     ((x) >> 6) | ((x) >> 7) | ((x) >> 8) | ((x) >> 9) | ((x) >> 10) |         \
     ((x) >> 11) | ((x) >> 12) | ((x) >> 13) | ((x) >> 14) | ((x) >> 15) |     \
     ((x) >> 16) | ((x) >> 17) | ((x) >> 18) | ((x) >> 19) | ((x) >> 20) |     \
     ((x) >> 21) | ((x) >> 22) | ((x) >> 23))
/** Slots per index table of a work area for `max_entries` entries: CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY x max_entries rounded up to a power of two, 0 when the option is 0 (a constant expression). */
#define CTXC_WORK_INDEX_SLOTS(max_entries)                                     \
    (CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY == 0                                  \
         ? 0u                                                                  \
         : CTXC_WORK_POW2_SMEAR_(                                              \
               (size_t)(max_entries)*CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY -     \
               1u) +                                                           \
               1u)

/** Declares the work area for histories of up to `max_entries` entries and
 * `scratch_bytes` bytes of inserted entries, as static storage `name`,
 * ready to use (no init call). Its arrays carry CTXC_STORAGE_ATTR
 * (ctxc_config_defaults.h, empty by default) and, with
 * CTXC_WORK_DEFINE_ATTR, `attr` too (a section, more alignment); the
 * ctxc_work_t itself stays in .data. Their contents are never read before
 * they are written, so an uninitialised (.noinit) section is fine. */
#define CTXC_WORK_DEFINE_ATTR(name, max_entries, scratch_bytes, attr)          \
    static uint16_t name##_map_[(max_entries)] CTXC_STORAGE_ATTR attr;         \
    static uint16_t name##_boundary_[(max_entries) + 1] CTXC_STORAGE_ATTR      \
        attr;                                                                  \
    static uint16_t name##_marks_[(max_entries)] CTXC_STORAGE_ATTR attr;       \
    static uint32_t name##_rem_[(max_entries)] CTXC_STORAGE_ATTR attr;         \
    static ctxc_plan_op_t name##_ops_[2 * (max_entries) + 2] CTXC_STORAGE_ATTR \
        attr;                                                                  \
    static ctxc_plan_op_t name##_repl_[(max_entries)] CTXC_STORAGE_ATTR attr;  \
    static uint8_t name##_scratch_[(scratch_bytes)]                            \
        __attribute__((aligned(8))) CTXC_STORAGE_ATTR attr;                    \
    static uint32_t name##_index_[2 * CTXC_WORK_INDEX_SLOTS(max_entries) *     \
                                      (CTXC_WORK_INDEX_SLOT_BYTES / 4u) +      \
                                  1u] CTXC_STORAGE_ATTR attr;                  \
    static ctxc_work_t name = {.map = name##_map_,                             \
                               .boundary = name##_boundary_,                   \
                               .marks = name##_marks_,                         \
                               .removals = name##_rem_,                        \
                               .cap = (max_entries),                           \
                               .ops = name##_ops_,                             \
                               .replacements = name##_repl_,                   \
                               .scratch = name##_scratch_,                     \
                               .scratch_cap = (scratch_bytes),                 \
                               .index = name##_index_,                         \
                               .index_slots =                                  \
                                   CTXC_WORK_INDEX_SLOTS(max_entries)}

/** CTXC_WORK_DEFINE_ATTR without an attribute of its own. */
#define CTXC_WORK_DEFINE(name, max_entries, scratch_bytes)                     \
    CTXC_WORK_DEFINE_ATTR(name, max_entries, scratch_bytes, )

/** CTXC_WORK_DEFINE() with the CTXC_CFG_HISTORY_MAX_ENTRIES and CTXC_CFG_WORK_SCRATCH_BYTES sizes. */
#define CTXC_WORK_DEFINE_DEFAULT(name)                                         \
    CTXC_WORK_DEFINE(name, CTXC_CFG_HISTORY_MAX_ENTRIES,                       \
                     CTXC_CFG_WORK_SCRATCH_BYTES)
/** CTXC_WORK_DEFINE_DEFAULT() with an attribute list for this object. */
#define CTXC_WORK_DEFINE_DEFAULT_ATTR(name, attr)                              \
    CTXC_WORK_DEFINE_ATTR(name, CTXC_CFG_HISTORY_MAX_ENTRIES,                  \
                          CTXC_CFG_WORK_SCRATCH_BYTES, attr)

/** Bytes of memory ctxc_work_init() needs for `max_entries` entries and
 * `scratch_bytes` bytes of scratch (index included, with
 * CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY; a constant expression). Each part is
 * rounded up to 8 bytes, plus 8 for aligning the start. */
#define CTXC_WORK_ROUND8_(n) (((size_t)(n) + 7u) & ~(size_t)7u)
/** Bytes of memory ctxc_work_init() needs for `max_entries` entries and `scratch_bytes` bytes of scratch (see the comment above). */
#define CTXC_WORK_BYTES(max_entries, scratch_bytes)                            \
    (8u +                                                                      \
     CTXC_WORK_ROUND8_((3u * (size_t)(max_entries)) * sizeof(ctxc_plan_op_t) + \
                       2u * sizeof(ctxc_plan_op_t)) +                          \
     CTXC_WORK_ROUND8_(scratch_bytes) +                                        \
     CTXC_WORK_ROUND8_(2u * CTXC_WORK_INDEX_SLOTS(max_entries) *               \
                       CTXC_WORK_INDEX_SLOT_BYTES) +                           \
     CTXC_WORK_ROUND8_(4u * (size_t)(max_entries)) +                           \
     CTXC_WORK_ROUND8_(2u * (3u * (size_t)(max_entries) + 1u)))

/** Sets up *w over `bytes` bytes of caller memory at `mem` (any alignment,
 * any section: for storage you place by hand, e.g. a linker-script region
 * or a RAM bank without a C declaration), for histories of up to
 * `max_entries` entries (1..65535) and `scratch_bytes` bytes of scratch
 * (>= 256), the index sized as CTXC_WORK_DEFINE sizes it. The memory must
 * stay valid while *w is in use; its contents need no initialisation.
 * Errors: CTXC_E_INVALID_ARG (NULL, a size out of range), CTXC_E_NO_SPACE
 * when bytes < CTXC_WORK_BYTES(max_entries, scratch_bytes) (err->needed
 * says how many more). */
ctxc_status_t ctxc_work_init(ctxc_work_t *w, size_t max_entries,
                             size_t scratch_bytes, void *mem, size_t bytes,
                             ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_STRATEGY_H */
