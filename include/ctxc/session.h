/** @file
 * ctxc — the compression session (dispatcher) over a history store.
 *
 *   add()          appends an entry and marks the density step due
 *   add_room()     the same, compressing first (network-free) when the
 *                  entry does not fit in the slots or the arena
 *   before_send()  settle tokens -> density step (when due and the strategy
 *                  has one) -> threshold check of the three limits (tokens,
 *                  entries, arena bytes) -> compress
 *   compress()     runs the configured strategy and applies its plan
 *
 * While a compression or a density step runs, the history is locked:
 * add() answers CTXC_E_BUSY (nothing is queued) when called from inside it;
 * with a port mutex (ctxc_session_set_port), other tasks wait instead. Errors
 * of a strategy propagate unchanged and on any error the history is
 * byte-identical to before. There is no fallback to another strategy, except
 * the one compression.on-limit asks for (see before_send), which is reported.
 *
 * A compression can also run as a resumable job (compress_start / poll /
 * compress_cancel, at the end of this file; docs/compression-job.md): add()
 * keeps working while it runs, and its range is frozen in the history.
 *
 * Settings: the session reads every value through the accessors of the
 * settings store it was given (include/ctxc/settings.h) each time it needs
 * one, so /set, a loaded profile or a changed settings file apply to the
 * next call. The threshold resolves compression-threshold (ephemeral ->
 * settings file) -> the strategy's trigger.default_threshold.
 *
 * Stack (Cortex-M4, -Os, the board's configuration, 256 entries; the
 * "Stack" table of docs/footprint.md, written by `make readme-tables`):
 * measured on the target, before_send with high-density 1488 bytes (static
 * worst case 2408), compress 1108 (top-down-truncation) / 1424
 * (high-density), optimize 1496. The strategy's own calls, the estimator
 * and the port hooks come on top (indirect calls).
 */
#ifndef CTXC_SESSION_H
#define CTXC_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/port.h"
#include "ctxc/settings.h"
#include "ctxc/spill.h"
#include "ctxc/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The accessors of the settings that need the strategy table
 * (ctxc_settings_strategy, _threshold, _density, _strategy_values) are
 * declared in ctxc/settings.h. */

/* ---- the session --------------------------------------------------------- */

/** A compression job in progress (private: the session's member job_;
 * ctxc_session_compress_start()). */
typedef struct {
    uint8_t state;   /**< none, a summary call, a plan to apply */
    bool wait;       /**< before_send waits for the job (on-limit wait) */
    size_t snapshot; /**< the job's range: entries [0, snapshot) */
    bool open; /**< the range was cut before a tool call waiting for its
                    result */
    uint32_t gen;    /**< the history's clear count at the start */
    uint64_t t0;     /**< the start, by the port clock */
    const ctxc_strategy_t *strategy; /**< the strategy it runs */
    ctxc_compress_ctx_t ctx;         /**< the strategy's context */
    ctxc_plan_t plan;                /**< the plan being made */
    ctxc_llm_job_t llm;              /**< the summary call */
} ctxc_session_job_t;

/** A session: the dispatcher over one history, work area and settings
 * store. Set up by ctxc_session_init() and the ctxc_session_set_* calls;
 * treat the fields as read-only (last_density, last_compress and
 * last_compress_ms are the results of the last step); those ending in _
 * are private. */
typedef struct {
    ctxc_history_t *history; /**< the store it compresses */
    ctxc_work_t *work; /**< its working memory */
    ctxc_settings_store_t *settings; /**< read through its accessors */
    const char *workspace_root;      /**< high-density paths; NULL: none */
    bool density_dirty_; /* private: an entry came since the density step */
    bool locked_;        /* private: a step runs (add answers BUSY) */
    ctxc_density_counts_t last_density; /**< counts of the last density step */
    /** the first entry the last density step read: 0 when it read the
     * whole history, else the count before the entries appended since the
     * step before (CTXC_CFG_DENSITY_FILTER_BYTES) */
    size_t last_density_from;
    ctxc_compress_meta_t last_compress; /**< metadata of the last compression */
    uint64_t last_compress_ms; /**< its duration by the port clock (0 without) */
    const ctxc_port_t *port;   /**< NULL: no mutex, clock or log */
    /** the LLM strategies' inputs (ctxc_session_set_llm_resolver, ...) */
    ctxc_llm_resolver_fn llm_resolver; /**< NULL: LLM strategies unavailable */
    void *llm_user; /**< pointer handed to llm_resolver */
    const ctxc_todo_t *todos; /**< the agent's todos (ctxc_session_set_todos()) */
    size_t todo_count; /**< entries in todos */
    const char *transcript_path; /**< the transcript path (ctxc_session_set_transcript()) */
    /** the spill store of pruned blocks (ctxc_session_set_spill(); NULL:
     * none) */
    ctxc_spill_t *spill;
    char *spill_buf; /**< the buffer a spilled entry is written through */
    size_t spill_buf_cap; /**< bytes of spill_buf */
    /* private: the density step's spill hook, set with the store (so a
     * build that never sets one does not link the store) */
    ctxc_status_t (*spill_fn_)(void *user, size_t index, size_t block,
                               char *id, ctxc_error_t *err);
    ctxc_session_job_t job_; /* private: the compression job */
    /* private: what ctxc_session_add_room() needs freed for the entry it
     * appends (0 otherwise) */
    size_t room_entries_;
    size_t room_bytes_;
    ctxc_density_memo_t memo_; /* private: the density step between calls */
    /* private: the background summaries' failures in a row, the last
     * one's status, and the port clock's time before which no job starts
     * (ctxc_session_job_health) */
    uint32_t job_failures_;
    ctxc_status_t job_last_;
    uint64_t job_retry_at_;
} ctxc_session_t;

/** settings is kept by pointer (it must outlive the session). The session
 * installs its strategy guard on the store (ctxc_settings_set_strategy_guard;
 * a store serves one session, and a session that ends before its store
 * calls ctxc_session_deinit(), which removes it; ctxc_settings_init also
 * removes it): from now on a change that selects an LLM
 * strategy (middle-out, one-shot) while the session has no LLM resolver is
 * refused at that moment with CTXC_E_UNAVAILABLE naming the strategy, what
 * it needs and the strategies that run without it.
 * Errors: CTXC_E_INVALID_ARG (NULL, or a work area smaller than the
 * history's max_entries); CTXC_E_UNKNOWN_STRATEGY when compression.strategy
 * does not name a strategy of this build (ctxc_settings_strategy). The LLM
 * resolver is set after init, so an LLM strategy in force at init is
 * checked by ctxc_session_check() and by every call of before_send,
 * optimize and compress (never only when the threshold is first crossed).
 */
ctxc_status_t ctxc_session_init(ctxc_session_t *s, ctxc_history_t *h,
                                ctxc_work_t *work,
                                ctxc_settings_store_t *settings,
                                ctxc_error_t *err);

/** Ends the session's hold on its settings store (and cancels a compression
 * job in progress, unfreezing its range): removes the session's
 * strategy guard from the store when it is still this session's (the store
 * keeps a pointer to the session while the guard is on it, so a session in
 * shorter-lived memory than its store — a local variable — must call this
 * before that memory goes). The store and history are left as they are; the
 * session is not used again until ctxc_session_init(). NULL: nothing. */
void ctxc_session_deinit(ctxc_session_t *s);

/** Everything a compression will need, checked now (call it once the
 * session is wired, e.g. at boot): the strategy in force is in this build
 * (CTXC_E_UNKNOWN_STRATEGY); for an LLM strategy, compression.profile
 * names a profile that exists (CTXC_E_PROFILE_NOT_FOUND) and
 * the session has an LLM resolver (CTXC_E_UNAVAILABLE naming the strategy
 * and the strategies without an LLM); context-limit is set
 * (CTXC_E_INVALID_ARG). Changes nothing. */
ctxc_status_t ctxc_session_check(ctxc_session_t *s, ctxc_error_t *err);

/** A spill store for what the density step prunes or replaces (read->write
 * pruning, recency pruning, file dedupe): each original block is stored
 * before the history changes, and its pointer carries the id
 * (CTXC_SPILLED_RESULT_TEXT, CTXC_SPILLED_NOTE_TEXT; a read pruned for a
 * later write then keeps its call, its result becomes the pointer). The
 * entry holding the block is written to the store through buf (cap bytes:
 * the longest entry line plus 24); a block that cannot be stored (the
 * store full, an I/O error, buf too small) stops the step, which then
 * changes nothing and returns the error. Blocks stored by one step are
 * never evicted by that step. sp NULL: none (pruning as without a store).
 * Everything is kept by pointer. */
void ctxc_session_set_spill(ctxc_session_t *s, ctxc_spill_t *sp, void *buf,
                            size_t cap);

/** The original block behind a pointer's id: its interchange JSON
 * (`{"type":"tool_response",...}`) into out[0..cap), *len bytes. The id
 * must be a pointer of the session's history where the density step wrote
 * it (a tool result that is the pointer, with the restored block's call
 * id; a file inclusion's note in a human text block), and the stored
 * block must hash to the id (ctxc_spill_get): a pointer quoted elsewhere
 * (a model's answer), one of another history or of a lost store reads
 * nothing. Errors: CTXC_E_UNAVAILABLE (no spill store set),
 * CTXC_E_NOT_FOUND (unknown id, evicted, store missing, not a pointer of
 * this history: the message says which),
 * CTXC_E_NO_SPACE (out too small), CTXC_E_PARSE (a stored block that is
 * not the store's), the filesystem's errors. */
ctxc_status_t ctxc_session_restore(ctxc_session_t *s, const char *id,
                                   char *out, size_t cap, size_t *len,
                                   ctxc_error_t *err);

/** The workspace root that relative paths of tool calls are resolved against
 * by the density step (kept by pointer; NULL: relative paths are compared
 * as written). Not a setting: it belongs to the conversation. */
void ctxc_session_set_workspace(ctxc_session_t *s, const char *root);

/** Gives the session a port (kept by pointer; NULL removes it): with
 * port->mutex set, add / optimize / compress / before_send each run inside
 * the mutex, so tasks may share the session; the clock times compressions
 * (last_compress_ms) and the log gets one line per compression. Call it
 * before the session is shared. */
void ctxc_session_set_port(ctxc_session_t *s, const ctxc_port_t *port);

/* ---- the LLM strategies (middle-out, one-shot) ---------------------------
 * The session hands a strategy the resolver set here, the todos and the
 * transcript path. Prompts: with a port filesystem (ctxc_session_set_port)
 * the session resolves "compression/<strategy>" through it
 * (ctxc_prompt_resolve with the resolved model's provider and model: model,
 * provider, base, then built-in level), reading the file into the upper
 * half of the work area's scratch; without one, the built-in prompt. */

/** The hook that gives the LLM strategies their model (kept; NULL removes
 * it). The strategy calls fn(user, profile, &llm, err) only when a summary
 * call will be made, with `profile` = compression.profile or NULL (then
 * the active provider/model). The resolver returns a ctxc_llm_t that stays
 * valid until the compression returns (ctxc/llm.h), or:
 * CTXC_E_PROFILE_NOT_FOUND (naming the profile), CTXC_E_INVALID_ARG (no
 * provider configured: naming the settings to set), CTXC_E_UNAVAILABLE.
 * Without a resolver an LLM strategy answers CTXC_E_UNAVAILABLE: at the
 * setting change that selects it (the session's strategy guard), and at
 * every call of before_send / optimize / compress. */
void ctxc_session_set_llm_resolver(ctxc_session_t *s, ctxc_llm_resolver_fn fn,
                                   void *user);

/** The agent's todos listed in the summary request (kept by pointer; the
 * array must stay valid while compressions may run). */
void ctxc_session_set_todos(ctxc_session_t *s, const ctxc_todo_t *todos,
                            size_t n);
/** Forgets the todos. */
void ctxc_session_clear_todos(ctxc_session_t *s);

/** The path of the full pre-compression transcript, named in the summary
 * request (kept by pointer; NULL: none). */
void ctxc_session_set_transcript(ctxc_session_t *s, const char *path);

/** Appends an entry and marks the density step due.
 * Errors: as ctxc_history_append(), CTXC_E_BUSY while locked. */
ctxc_status_t ctxc_session_add(ctxc_session_t *s, const ctxc_entry_in_t *in,
                               ctxc_error_t *err);

struct ctxc_send_report;

/** Appends an entry, making room first when it does not fit: the append
 * that a device calls for every turn. When the slots or the arena cannot
 * take the entry, it compresses and appends again (at most twice):
 *   - with a strategy that needs no model (top-down-truncation,
 *     high-density) that strategy, its targets lowered so that the entry
 *     fits;
 *   - with an LLM strategy a compression job in progress is polled once
 *     (its result, when it is there, may be enough); otherwise the job is
 *     cancelled and the network-free strategy of compression.on-limit
 *     compresses now (top-down-truncation when on-limit is "wait", else
 *     high-density when that is the only one in the build): report->job is
 *     CTXC_SEND_JOB_FALLBACK and report->fallback names it. A device never
 *     waits for the network to append a turn.
 * `report` (may be NULL) says whether and why it compressed
 * (report->compressed, report->trigger). The compression is kept when the
 * append after it fails.
 * Errors: those of ctxc_session_add(); CTXC_E_NO_SPACE without compressing
 * when the entry is larger than the whole arena (err->needed: the bytes
 * over) or when no strategy of this build can run without a model; a
 * strategy's own errors (CTXC_E_TOO_LARGE: pinned entries hold the room,
 * the message says which limit), with the history as it was. */
ctxc_status_t ctxc_session_add_room(ctxc_session_t *s,
                                    const ctxc_entry_in_t *in,
                                    struct ctxc_send_report *report,
                                    ctxc_error_t *err);

/** The threshold in force (thousandths): ephemeral, else profile, else the
 * strategy's default. Errors: those of ctxc_strategy_find(). */
ctxc_status_t ctxc_session_threshold(const ctxc_session_t *s,
                                     uint16_t *threshold, ctxc_error_t *err);

/** Runs the density step now (if the strategy has one) and clears the due
 * mark. Errors: strategy lookup, CTXC_E_UNAVAILABLE (an LLM strategy and no
 * LLM resolver), CTXC_E_NO_SPACE (work area), CTXC_E_BUSY. */
ctxc_status_t ctxc_session_optimize(ctxc_session_t *s, ctxc_error_t *err);

/** Runs the configured strategy and applies its plan: the strategy brings
 * the tokens under its target and, for the entry slots or the arena bytes
 * when they are over their threshold (ctxc_limits_over(), with the
 * reserves), those under theirs (docs/design.md, "The three limits").
 * last_compress says what it did (trigger, entries_dropped, the entries,
 * bytes and tokens before and after; unchanged when nothing was freed).
 * Errors: CTXC_E_UNKNOWN_STRATEGY, CTXC_E_PROFILE_NOT_FOUND (an LLM strategy
 * and compression.profile names a profile that does not exist:
 * before anything else), CTXC_E_UNAVAILABLE (an LLM strategy and no LLM resolver),
 * CTXC_E_INVALID_ARG (no context limit), CTXC_E_NO_SPACE, CTXC_E_BUSY, or the
 * strategy's own error. */
ctxc_status_t ctxc_session_compress(ctxc_session_t *s, ctxc_error_t *err);

/** What before_send did about a compression job (see before_send). */
typedef enum {
    CTXC_SEND_JOB_NONE = 0, /**< no job was involved */
    CTXC_SEND_JOB_STARTED,  /**< it started one (prefetch) and returned */
    CTXC_SEND_JOB_RUNNING,  /**< one is in progress (polled once) */
    CTXC_SEND_JOB_APPLIED,  /**< the job's result was applied by its poll */
    CTXC_SEND_JOB_WAITED,   /**< it waited for the job (on-limit wait) */
    CTXC_SEND_JOB_FALLBACK, /**< it cancelled the job (or started none) and
                                 compressed without the network instead */
    CTXC_SEND_JOB_FAILED    /**< the job ended with the error returned */
} ctxc_send_job_t;

/** What ctxc_session_before_send() (and ctxc_session_add_room()) did. */
typedef struct ctxc_send_report {
    uint64_t tokens;           /**< settled history tokens before anything ran */
    uint64_t threshold_tokens; /**< limit x threshold */
    bool emergency; /**< a limit would be exceeded: tokens + pending above the
                         context limit, or the entries (bytes) with their
                         reserve above the slots (arena) */
    bool optimized;            /**< the density step ran */
    bool compressed; /**< a compression changed the history (a strategy
                          that found nothing to do leaves it false; see
                          ctxc_session_t.last_compress for what it freed) */
    /** the limits over their threshold that made it compress
     * (CTXC_LIMIT_TOKENS, _ENTRIES, _BYTES; 0: none) */
    unsigned trigger;
    uint64_t tokens_after; /**< settled history tokens after it */
    ctxc_send_job_t job; /**< what became of a compression job */
    /** with job CTXC_SEND_JOB_FAILED: the status the job ended with (the
     * call itself returned CTXC_OK when no limit needed the summary, or
     * the network-free fallback kept the limit) */
    ctxc_status_t job_status;
    const char *fallback; /**< the network-free strategy that ran instead of
                               a job's summary (FALLBACK), else NULL */
} ctxc_send_report_t;

/** Call before sending the history with `pending_tokens` more (the new
 * message, tool definitions...). Density step when due (always on the
 * emergency path), then compress when any of the three limits is near its
 * end: tokens + pending over threshold x context limit, the entries plus
 * compression.reserve-entries over compression.entries-threshold x the
 * slots, the arena bytes in use plus compression.reserve-bytes over
 * compression.bytes-threshold x the arena. The strategy then frees each
 * limit that triggered down to its target (capacity x threshold x 0.6), so
 * the turn appended after this call has its slots and bytes.
 * report->trigger says which limits triggered; `report` may be NULL.
 * The two steps are committed one by one: when the compression fails after
 * a density step succeeded, the error is returned and the history is exactly
 * as the density step left it (as if ctxc_session_optimize() had been called
 * alone); when the density step fails, the history is unchanged.
 *
 * With an LLM strategy and compression.prefetch-threshold set (a ratio of
 * the context limit), it uses the resumable job instead of waiting
 * (docs/compression-job.md has the state table; report->job says which
 * case it was):
 *   - no job, over the prefetch threshold, under the threshold: starts a
 *     job and returns CTXC_OK at once (CTXC_SEND_JOB_STARTED);
 *   - a job running: one poll and no density step (RUNNING; APPLIED when
 *     that poll applied the result; its error is returned: FAILED);
 *   - over the threshold (or the limit) with the summary not there: with
 *     compression.on-limit "wait" (the default) a job is started if none
 *     runs and polled to its end here, waiting in the transport's wait op
 *     between polls, the port mutex taken per poll only (WAITED); with
 *     "top-down-truncation" or "high-density" a job is cancelled and that
 *     strategy compresses now, network-free (FALLBACK: report->fallback
 *     names it, last_compress.fallback says why, and a CTXC_LOG_WARN line
 *     is logged). */
ctxc_status_t ctxc_session_before_send(ctxc_session_t *s,
                                       uint64_t pending_tokens,
                                       ctxc_send_report_t *report,
                                       ctxc_error_t *err);

/* ---- the resumable compression job -----------------------------------
 *
 * The blocking compress() waits for the summary call. A job does the same
 * work in steps, so the caller's loop (a voice assistant's main loop, an
 * RTOS task) never waits for the network:
 *
 *   ctxc_session_compress_start(&s, &err);            // prepares
 *   while ((st = ctxc_session_poll(&s, &err)) == CTXC_E_IN_PROGRESS) {
 *       ... other work; ctxc_session_add() keeps working ...
 *   }                                                 // CTXC_OK: applied
 *
 * docs/compression-job.md has the design, a bare-metal loop, an RTOS task
 * and the bound of one poll. */

/** Starts a compression job with the configured strategy over the entries
 * [0, n) of now (the job's range): n is the history's count, moved back to
 * before the first tool_call whose tool_response is not in the history yet
 * (unless three human entries follow it: then it counts as abandoned, an
 * interrupted tool, and stays in the range as any unpaired call) and then
 * to a valid split (no tool_call in the range has its response after it),
 * so a response that arrives during the job is never separated from its
 * call. When a waiting call leaves too little before it, the job changes
 * nothing and last_compress.unchanged_reason says so. The strategy plans the range (an LLM strategy resolves its
 * model and prompt and starts the summary call: the request body's count
 * pass, nothing connected or sent yet, the first poll connects; a strategy
 * without an LLM plans it whole now, network-free). Entries [0, n) are then frozen (ctxc/history.h:
 * replace, remove and plans touching them answer CTXC_E_BUSY) until the job
 * ends; appends go on as usual.
 * Returns CTXC_OK when the job was started (ctxc_session_poll() goes on
 * with it). Errors: as ctxc_session_compress() (the checks, the strategy's
 * own errors before its call), CTXC_E_BUSY when a job is already in
 * progress. On an error no job exists and nothing changed. */
ctxc_status_t ctxc_session_compress_start(ctxc_session_t *s,
                                          ctxc_error_t *err);

/** Advances the job by one bounded step and returns without waiting:
 *   CTXC_E_IDLE         no job in progress (none started, or it has
 *                       ended): nothing was done and err is untouched; a
 *                       loop may poll unconditionally and start a job
 *                       when it sees this;
 *   CTXC_E_IN_PROGRESS  call again later (the summary call goes on: one
 *                       transport step per poll, or a retry's "not before"
 *                       time has not come; err untouched);
 *                       ctxc_session_poll_due() says when;
 *   CTXC_OK             the result was applied: the history is the plan
 *                       over [0, n) followed by every entry appended since
 *                       (in order); last_compress holds its metadata;
 *   an error            the job has ended and the history is exactly as it
 *                       is at this moment (appended entries included):
 *                       the summary call's errors (ctxc_llm_t), the
 *                       strategy's, CTXC_E_CANCELLED when the history was
 *                       cleared meanwhile (CTXC_E_INVALID_ARG: s NULL).
 * A model without the resumable form (ctxc_llm_t.step NULL) makes its whole
 * call inside one poll. With a port mutex the poll runs inside it. */
ctxc_status_t ctxc_session_poll(ctxc_session_t *s, ctxc_error_t *err);

/** Ends a job in progress: the summary call is cancelled (its connection
 * closed), the range unfrozen, the history left exactly as it is. Nothing
 * in progress: nothing happens. */
void ctxc_session_compress_cancel(ctxc_session_t *s);

/** True while a job is in progress (started, not yet ended by a poll or a
 * cancel). */
bool ctxc_session_job_active(const ctxc_session_t *s);

/** When a job's next poll can move it (ctxc_session_poll_due()). */
typedef enum {
    CTXC_POLL_IDLE = 0,   /**< no job: nothing to poll */
    CTXC_POLL_NOW,        /**< poll now (the last step moved, or a plan is
                               ready to apply) */
    CTXC_POLL_AFTER,      /**< not before *ms (a retry's pause) */
    CTXC_POLL_ON_NETWORK  /**< when the connection has something: the
                               transport's wait op (or the network stack's
                               own event) says when */
} ctxc_poll_due_t;

/** When to poll the job next, so a main loop or an RTOS task sleeps
 * exactly as long as nothing can happen (never blocks; `ms` may be NULL;
 * *ms is set for CTXC_POLL_AFTER, 0 otherwise). A model without
 * ctxc_llm_t.due_ms answers CTXC_POLL_NOW while its call runs. */
ctxc_poll_due_t ctxc_session_poll_due(const ctxc_session_t *s, uint32_t *ms);

/** How the background summaries fare (ctxc_session_job_health()). */
typedef struct {
    uint32_t failures;    /**< jobs failed in a row (0 after a success) */
    ctxc_status_t last;   /**< the status the last failed job ended with
                               (CTXC_OK: none failed since the last success) */
    uint64_t retry_in_ms; /**< by the port clock, until before_send may
                               start the next job (0: now) */
    bool cooling_down;    /**< failures reached compression.failure-limit:
                               the model is left alone until
                               compression.cooldown-ms has passed */
} ctxc_job_health_t;

/** A failed background job (a poll or before_send ending it with an
 * error) never costs the application a turn: before_send reports it
 * (report->job CTXC_SEND_JOB_FAILED, report->job_status, a CTXC_LOG_WARN
 * line) and returns CTXC_OK while no limit needs the summary; when one
 * does, it compresses with the network-free fallback (the strategy of
 * compression.on-limit, top-down-truncation for `wait`, else
 * high-density), reported as CTXC_SEND_JOB_FALLBACK. The next job waits:
 * 5 s after the first failure, twice as long after each one more, and
 * compression.cooldown-ms once compression.failure-limit jobs failed in a
 * row (meanwhile, at a limit, the fallback compresses). A job that
 * succeeds ends it. Without a port clock the waits cannot be timed: after
 * compression.failure-limit failures no job starts until a blocking
 * ctxc_session_compress() with the model succeeds. */
void ctxc_session_job_health(const ctxc_session_t *s, ctxc_job_health_t *out);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_SESSION_H */
