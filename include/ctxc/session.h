/*
 * ctxc — the compression session (dispatcher) over a history store.
 *
 *   add()          appends an entry and marks the density step due
 *   before_send()  settle tokens -> density step (when due and the strategy
 *                  has one) -> threshold check -> compress
 *   compress()     runs the configured strategy and applies its plan
 *
 * While a compression or a density step runs, the history is locked:
 * add() answers CTXC_E_BUSY (nothing is queued) when called from inside it;
 * with a port mutex (ctxc_session_set_port), other tasks wait instead. Errors
 * of a strategy propagate unchanged, there is no fallback to another strategy,
 * and on any error the history is byte-identical to before.
 *
 * Settings: the session reads every value through the accessors of the
 * settings store it was given (include/ctxc/settings.h) each time it needs
 * one, so /set, a loaded profile or a changed settings file apply to the
 * next call. The threshold resolves compression-threshold (ephemeral ->
 * settings file) -> the strategy's trigger.default_threshold.
 *
 * Stack (Cortex-M4, -Os, the board's configuration; README "Stack"):
 * measured on the target, before_send with high-density 4616 bytes (its
 * density step), with top-down-truncation 892 (minimal profile image);
 * compress 1468 (top-down-truncation) / 4420 (high-density); optimize 4624.
 * Static call-graph worst cases without the strategy: add, before_send,
 * compress and optimize about 2120 (an LLM strategy's compression.profile
 * check reads the profile file), init 736, check 1768, threshold 728; the
 * strategy's compress/optimize, the estimator and the port hooks come on
 * top (indirect calls).
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

/* ---- the settings as the strategies read them ---------------------------
 * The accessors of the settings store (ctxc/settings.h) that need the
 * strategy table (REQ-CS-009, REQ-HD-001.10, REQ-HD-009.5). */

/* compression.strategy, looked up. Errors: CTXC_E_UNKNOWN_STRATEGY naming
 * the value, where it came from and the strategies of this build, when it
 * is not set or not compiled in (REQ-CS-009.4). */
ctxc_status_t ctxc_settings_strategy(const ctxc_settings_store_t *s,
                                     const ctxc_strategy_t **out,
                                     ctxc_error_t *err);

/* compression-threshold in force: the setting, else the default threshold
 * of `strategy` (REQ-HD-001.10). */
uint16_t ctxc_settings_threshold(const ctxc_settings_store_t *s,
                                 const ctxc_strategy_t *strategy);

/* The four compression.density.* settings into cfg (REQ-HD-009.5);
 * cfg->workspace_root is not a setting and is left as it is. */
void ctxc_settings_density(const ctxc_settings_store_t *s,
                           ctxc_density_config_t *cfg);
/* The fact check of LLM summaries: the mode from compression.factCheck,
 * the bounds from CTXC_CFG_FACT_CHECK_MAX_ITEMS / _MAX_BYTES. */
void ctxc_settings_fact_check(const ctxc_settings_store_t *s,
                              ctxc_fact_check_t *out);

/* Every value a strategy reads: context limit, threshold (of `strategy`),
 * preserve fractions and density settings (out->density.workspace_root is
 * left as it is). */
void ctxc_settings_strategy_values(const ctxc_settings_store_t *s,
                                   const ctxc_strategy_t *strategy,
                                   ctxc_strategy_values_t *out);

/* ---- the session --------------------------------------------------------- */

typedef struct {
    ctxc_history_t *history;
    ctxc_work_t *work;
    ctxc_settings_store_t *settings; /* read through its accessors */
    const char *workspace_root;      /* high-density paths; NULL: none */
    bool density_dirty;
    bool locked;
    ctxc_density_counts_t last_density; /* counts of the last density step */
    ctxc_compress_meta_t last_compress; /* metadata of the last compression */
    uint64_t last_compress_ms; /* its duration by the port clock (0 without) */
    const ctxc_port_t *port;   /* NULL: no mutex, clock or log */
    /* the LLM strategies' inputs (ctxc_session_set_llm_resolver, ...) */
    ctxc_llm_resolver_fn llm_resolver; /* NULL: LLM strategies unavailable */
    void *llm_user;
    const ctxc_todo_t *todos;
    size_t todo_count;
    const char *transcript_path;
    /* the spill store of pruned blocks (ctxc_session_set_spill; NULL:
     * none) and the buffer a spilled entry is written through */
    ctxc_spill_t *spill;
    char *spill_buf;
    size_t spill_buf_cap;
    /* internal: the density step's spill hook, set with the store (so a
     * build that never sets one does not link the store) */
    ctxc_status_t (*spill_fn_)(void *user, size_t index, size_t block,
                               char *id, ctxc_error_t *err);
} ctxc_session_t;

/* settings is kept by pointer (it must outlive the session). The session
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

/* Ends the session's hold on its settings store: removes the session's
 * strategy guard from the store when it is still this session's (the store
 * keeps a pointer to the session while the guard is on it, so a session in
 * shorter-lived memory than its store — a local variable — must call this
 * before that memory goes). The store and history are left as they are; the
 * session is not used again until ctxc_session_init(). NULL: nothing. */
void ctxc_session_deinit(ctxc_session_t *s);

/* Everything a compression will need, checked now (call it once the
 * session is wired, e.g. at boot): the strategy in force is in this build
 * (CTXC_E_UNKNOWN_STRATEGY); for an LLM strategy, compression.profile
 * names a profile that exists (REQ-CS-006A.1: CTXC_E_PROFILE_NOT_FOUND) and
 * the session has an LLM resolver (CTXC_E_UNAVAILABLE naming the strategy
 * and the strategies without an LLM); context-limit is set
 * (CTXC_E_INVALID_ARG). Changes nothing. */
ctxc_status_t ctxc_session_check(ctxc_session_t *s, ctxc_error_t *err);

/* A spill store for what the density step prunes or replaces (read->write
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

/* The original block behind a pointer's id: its interchange JSON
 * (`{"type":"tool_response",...}`) into out[0..cap), *len bytes.
 * Errors: CTXC_E_UNAVAILABLE (no spill store set), CTXC_E_NOT_FOUND
 * (unknown id, evicted, store missing: the message says which),
 * CTXC_E_NO_SPACE (out too small), CTXC_E_PARSE (a stored block that is
 * not the store's), the filesystem's errors. */
ctxc_status_t ctxc_session_restore(ctxc_session_t *s, const char *id,
                                   char *out, size_t cap, size_t *len,
                                   ctxc_error_t *err);

/* The workspace root that relative paths of tool calls are resolved against
 * by the density step (kept by pointer; NULL: relative paths are compared
 * as written). Not a setting: it belongs to the conversation. */
void ctxc_session_set_workspace(ctxc_session_t *s, const char *root);

/* Gives the session a port (kept by pointer; NULL removes it): with
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

/* The hook that gives the LLM strategies their model (kept; NULL removes
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

/* The agent's todos listed in the summary request (kept by pointer; the
 * array must stay valid while compressions may run). */
void ctxc_session_set_todos(ctxc_session_t *s, const ctxc_todo_t *todos,
                            size_t n);
void ctxc_session_clear_todos(ctxc_session_t *s);

/* The path of the full pre-compression transcript, named in the summary
 * request (kept by pointer; NULL: none). */
void ctxc_session_set_transcript(ctxc_session_t *s, const char *path);

/* Appends an entry and marks the density step due.
 * Errors: as ctxc_history_append(), CTXC_E_BUSY while locked. */
ctxc_status_t ctxc_session_add(ctxc_session_t *s, const ctxc_entry_in_t *in,
                               ctxc_error_t *err);

/* The threshold in force (thousandths): ephemeral, else profile, else the
 * strategy's default. Errors: those of ctxc_strategy_find(). */
ctxc_status_t ctxc_session_threshold(const ctxc_session_t *s,
                                     uint16_t *threshold, ctxc_error_t *err);

/* Runs the density step now (if the strategy has one) and clears the due
 * mark. Errors: strategy lookup, CTXC_E_UNAVAILABLE (an LLM strategy and no
 * LLM resolver), CTXC_E_NO_SPACE (work area), CTXC_E_BUSY. */
ctxc_status_t ctxc_session_optimize(ctxc_session_t *s, ctxc_error_t *err);

/* Runs the configured strategy and applies its plan.
 * Errors: CTXC_E_UNKNOWN_STRATEGY, CTXC_E_PROFILE_NOT_FOUND (an LLM strategy
 * and compression.profile names a profile that does not exist:
 * REQ-CS-006A.1), CTXC_E_UNAVAILABLE (an LLM strategy and no LLM resolver),
 * CTXC_E_INVALID_ARG (no context limit), CTXC_E_NO_SPACE, CTXC_E_BUSY, or the
 * strategy's own error. */
ctxc_status_t ctxc_session_compress(ctxc_session_t *s, ctxc_error_t *err);

typedef struct {
    uint64_t tokens;           /* settled history tokens before anything ran */
    uint64_t threshold_tokens; /* limit x threshold */
    bool emergency;            /* tokens + pending above the context limit */
    bool optimized;            /* the density step ran */
    bool compressed;           /* compress ran */
    uint64_t tokens_after;
} ctxc_send_report_t;

/* Call before sending the history with `pending_tokens` more (the new
 * message, tool definitions...). Density step when due (always on the
 * emergency path), then compress when tokens + pending exceed the threshold
 * or the context limit. `report` may be NULL.
 * The two steps are committed one by one: when the compression fails after
 * a density step succeeded, the error is returned and the history is exactly
 * as the density step left it (as if ctxc_session_optimize() had been called
 * alone); when the density step fails, the history is unchanged. */
ctxc_status_t ctxc_session_before_send(ctxc_session_t *s,
                                       uint64_t pending_tokens,
                                       ctxc_send_report_t *report,
                                       ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_SESSION_H */
