/*
 * ctxc — the compression session (see include/ctxc/session.h).
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "ctxc/http.h"
#include "ctxc/prompt.h"
#include "ctxc/session.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "json.h"
#include "sink.h"
#include "strategies.h"
#include "tool_roles.h"

/* A build with an LLM strategy: without one, the prompt files and the
 * compression.profile check are left out (a headless build pays for
 * neither). */
#define LLM_STRATEGIES_                                                        \
    (CTXC_CFG_STRATEGY_MIDDLE_OUT || CTXC_CFG_STRATEGY_ONE_SHOT)

/* ---- the settings as the strategies read them ---------------------------- */

#define STRATEGY_NAME_FITS_(id, cfg, name)                                     \
    _Static_assert(sizeof(name) - 1u <= CTXC_SETTINGS_ENUM_VALUE_MAX,          \
                   "strategy name too long for compression.strategy");
CTXC_STRATEGY_LIST(STRATEGY_NAME_FITS_)
#undef STRATEGY_NAME_FITS_

/* The names of the compiled-in strategies, ", "-separated. */
static void compiled_in(char *buf, size_t cap) {
    ctxc__sink_t o = {buf, cap - 1u, 0};
    for (size_t i = 0; i < CTXC_STRATEGY_COUNT; i++) {
        const ctxc_strategy_t *st = ctxc_strategy_get((ctxc_strategy_id_t)i);
        if (st != NULL) {
            ctxc__puts(&o, o.len > 0 ? ", " : "");
            ctxc__puts(&o, st->name);
        }
    }
    (void)ctxc__sink_cstr(&o);
}

ctxc_status_t ctxc_settings_strategy(const ctxc_settings_store_t *s,
                                     const ctxc_strategy_t **out,
                                     ctxc_error_t *err) {
    if (s == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "strategy: NULL argument");
    }
    ctxc_setting_value_t v;
    char avail[96];
    ctxc_setting_source_t src =
        ctxc_settings_get(s, CTXC_SETTING_COMPRESSION_STRATEGY, &v);
    if (src != CTXC_SOURCE_UNSET &&
        ctxc_strategy_find(v.str, out, NULL) == CTXC_OK) {
        return CTXC_OK;
    }
    compiled_in(avail, sizeof avail);
    if (src == CTXC_SOURCE_UNSET) {
        return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                          "compression.strategy is not set (strategies of "
                          "this build: %s)",
                          avail);
    }
    return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                      "compression.strategy %q (%s) is not a strategy of "
                      "this build (available: %s)",
                      v.str, strlen(v.str), ctxc_setting_source_name(src),
                      avail);
}

uint16_t ctxc_settings_threshold(const ctxc_settings_store_t *s,
                                 const ctxc_strategy_t *strategy) {
    uint16_t v = 0;
    if (ctxc_settings_ratio(s, CTXC_SETTING_COMPRESSION_THRESHOLD, &v)) {
        return v;
    }
    return strategy != NULL ? strategy->trigger.default_threshold : 0;
}

void ctxc_settings_density(const ctxc_settings_store_t *s,
                           ctxc_density_config_t *cfg) {
    uint32_t retention = 1;
    cfg->read_write_pruning =
        ctxc_settings_bool(s, CTXC_SETTING_DENSITY_READ_WRITE_PRUNING);
    cfg->file_dedupe = ctxc_settings_bool(s, CTXC_SETTING_DENSITY_FILE_DEDUPE);
    cfg->recency_pruning =
        ctxc_settings_bool(s, CTXC_SETTING_DENSITY_RECENCY_PRUNING);
    (void)ctxc_settings_int(s, CTXC_SETTING_DENSITY_RECENCY_RETENTION,
                            &retention);
    cfg->recency_retention = retention;
    /* stored values passed the setting's check: a value that no longer
     * parses (none here) leaves every vocabulary on */
    const char *v = ctxc_settings_string(s, CTXC_SETTING_DENSITY_VOCABULARIES);
    uint32_t off = 0;
    if (v == NULL ||
        ctxc__tool_vocabs_parse(v, strlen(v), &off, NULL) != CTXC_OK) {
        off = 0;
    }
    cfg->vocabularies_off = off;
    cfg->read_tools = ctxc_settings_string(s, CTXC_SETTING_DENSITY_READ_TOOLS);
    cfg->write_tools =
        ctxc_settings_string(s, CTXC_SETTING_DENSITY_WRITE_TOOLS);
}

void ctxc_settings_strategy_values(const ctxc_settings_store_t *s,
                                   const ctxc_strategy_t *strategy,
                                   ctxc_strategy_values_t *out) {
    out->context_limit = ctxc_settings_context_limit(s);
    out->threshold = ctxc_settings_threshold(s, strategy);
    out->preserve_threshold = ctxc_settings_preserve_threshold(s);
    out->top_preserve_threshold = ctxc_settings_top_preserve_threshold(s);
    ctxc_settings_density(s, &out->density);
    ctxc_settings_fact_check(s, &out->fact_check);
}

void ctxc_settings_fact_check(const ctxc_settings_store_t *s,
                              ctxc_fact_check_t *out) {
    uint32_t mode = CTXC_FACT_CHECK_APPEND;
    (void)ctxc_settings_enum(s, CTXC_SETTING_COMPRESSION_FACT_CHECK, &mode);
    out->mode = mode <= CTXC_FACT_CHECK_RETRY ? (ctxc_fact_check_mode_t)mode
                                              : CTXC_FACT_CHECK_APPEND;
    out->max_items = CTXC_CFG_FACT_CHECK_MAX_ITEMS;
    out->max_bytes = CTXC_CFG_FACT_CHECK_MAX_BYTES;
}

/* ---- the session --------------------------------------------------------- */

/* The strategies of this build that need no LLM, ", "-separated. */
static void llm_free(char *buf, size_t cap) {
    ctxc__sink_t o = {buf, cap - 1u, 0};
    for (size_t i = 0; i < CTXC_STRATEGY_COUNT; i++) {
        const ctxc_strategy_t *st = ctxc_strategy_get((ctxc_strategy_id_t)i);
        if (st != NULL && !st->requires_llm) {
            ctxc__puts(&o, o.len > 0 ? ", " : "");
            ctxc__puts(&o, st->name);
        }
    }
    if (o.len == 0) {
        ctxc__puts(&o, "none");
    }
    (void)ctxc__sink_cstr(&o);
}

/* Strategy st can run in session s: an LLM strategy needs the resolver.
 * Errors: CTXC_E_UNAVAILABLE naming the strategy, what it needs and the
 * strategies that run without it. */
static ctxc_status_t wired(const ctxc_session_t *s, const ctxc_strategy_t *st,
                           ctxc_error_t *err) {
    if (!st->requires_llm || s->llm_resolver != NULL) {
        return CTXC_OK;
    }
    char avail[96];
    llm_free(avail, sizeof avail);
    return ctxc__fail(err, CTXC_E_UNAVAILABLE,
                      "strategy '%s' needs an LLM: no LLM resolver in this "
                      "session (ctxc_session_set_llm_resolver); available "
                      "without one: %s",
                      st->name, avail);
}

/* The store's strategy guard while this session uses it: refuses a
 * strategy the session cannot run. */
static ctxc_status_t session_guard(void *user, uint32_t index,
                                   ctxc_error_t *err) {
    const ctxc_strategy_t *st = ctxc_strategy_get((ctxc_strategy_id_t)index);
    if (st == NULL) { /* the store refuses these itself */
        return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                          "strategy %u is not in this build", (unsigned)index);
    }
    return wired(user, st, err);
}

static void job_end(ctxc_session_t *s);

ctxc_status_t ctxc_session_init(ctxc_session_t *s, ctxc_history_t *h,
                                ctxc_work_t *work,
                                ctxc_settings_store_t *settings,
                                ctxc_error_t *err) {
    if (s == NULL || h == NULL || work == NULL || settings == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "session, history, work area and settings must not "
                          "be NULL");
    }
    if (work->cap < h->max_entries) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "work area holds %z entries, the history up to %z",
                          work->cap, h->max_entries);
    }
    const ctxc_strategy_t *st;
    ctxc_status_t r = ctxc_settings_strategy(settings, &st, err);
    if (r != CTXC_OK) {
        return r;
    }
    memset(s, 0, sizeof *s);
    s->history = h;
    s->work = work;
    s->settings = settings;
    s->density_dirty_ = h->count > 0;
    ctxc_settings_set_strategy_guard(settings, session_guard, s);
    return CTXC_OK;
}

void ctxc_session_deinit(ctxc_session_t *s) {
    if (s != NULL && s->history != NULL && s->job_.state != 0) {
        job_end(s); /* a job in progress: cancelled, its range unfrozen */
    }
    if (s != NULL && s->settings != NULL && s->settings->guard_user_ == s) {
        ctxc_settings_set_strategy_guard(s->settings, NULL, NULL);
    }
}

ctxc_status_t ctxc_session_check(ctxc_session_t *s, ctxc_error_t *err) {
    if (s == NULL || s->settings == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "session is NULL");
    }
    const ctxc_strategy_t *st;
    ctxc_status_t r = ctxc_settings_strategy(s->settings, &st, err);
    if (LLM_STRATEGIES_ && r == CTXC_OK && st->requires_llm) {
        r = ctxc_settings_compression_profile_check(s->settings, err);
    }
    if (r == CTXC_OK) {
        r = wired(s, st, err);
    }
    if (r == CTXC_OK && ctxc_settings_context_limit(s->settings) == 0) {
        r = ctxc__fail(err, CTXC_E_INVALID_ARG, "context-limit is not set");
    }
    return r;
}

void ctxc_session_set_workspace(ctxc_session_t *s, const char *root) {
    s->workspace_root = root;
}

void ctxc_session_set_port(ctxc_session_t *s, const ctxc_port_t *port) {
    s->port = port;
}

void ctxc_session_set_llm_resolver(ctxc_session_t *s, ctxc_llm_resolver_fn fn,
                                   void *user) {
    s->llm_resolver = fn;
    s->llm_user = user;
}

void ctxc_session_set_todos(ctxc_session_t *s, const ctxc_todo_t *todos,
                            size_t n) {
    s->todos = todos;
    s->todo_count = todos != NULL ? n : 0;
}

void ctxc_session_clear_todos(ctxc_session_t *s) {
    ctxc_session_set_todos(s, NULL, 0);
}

void ctxc_session_set_transcript(ctxc_session_t *s, const char *path) {
    s->transcript_path = path;
}

#if LLM_STRATEGIES_
/* The prompt through the port's filesystem: the resolution record and the
 * file text go to the upper half of the work scratch (the LLM strategies
 * keep their plan in the lower half and step over the text). */
static ctxc_status_t session_prompt(void *user, const char *provider,
                                    const char *model, const char *id,
                                    ctxc_str_t *text, ctxc_error_t *err) {
    const ctxc_session_t *s = user;
    ctxc_work_t *w = s->work;
    uint8_t *end = w->scratch + w->scratch_cap;
    uint8_t *hi = w->scratch + ((w->scratch_cap / 2u) & ~(size_t)7u);
    hi += (8u - ((uintptr_t)hi & 7u)) & 7u;
    if (hi > end || (size_t)(end - hi) < sizeof(ctxc_prompt_t) + 1u) {
        size_t have = hi > end ? 0 : (size_t)(end - hi);
        return ctxc__fail_space(err, sizeof(ctxc_prompt_t) + 1u - have,
                                "work scratch: no room to read prompt %s", id);
    }
    ctxc_prompt_t *p = (ctxc_prompt_t *)(void *)hi;
    char *buf = (char *)(p + 1);
    ctxc_status_t st =
        ctxc_prompt_resolve(&s->port->fs, provider, model, id, buf,
                            (size_t)((char *)end - buf), p, err);
    if (st == CTXC_OK) {
        *text = (ctxc_str_t){p->text, p->len};
    }
    return st;
}
#endif

static ctxc_status_t find_strategy(const ctxc_session_t *s,
                                   const ctxc_strategy_t **out,
                                   ctxc_error_t *err) {
    return ctxc_settings_strategy(s->settings, out, err);
}

static uint16_t threshold_of(const ctxc_session_t *s,
                             const ctxc_strategy_t *st) {
    return ctxc_settings_threshold(s->settings, st);
}

ctxc_status_t ctxc_session_threshold(const ctxc_session_t *s,
                                     uint16_t *threshold, ctxc_error_t *err) {
    const ctxc_strategy_t *st;
    ctxc_status_t r = find_strategy(s, &st, err);
    if (r == CTXC_OK) {
        *threshold = threshold_of(s, st);
    }
    return r;
}

/* The density step's spill hook (ctxc_session_set_spill): the block's
 * index, a line feed, then its entry's line, stored. */
static ctxc_status_t ctxc__session_spill(void *user, size_t index,
                                         size_t block, char *id,
                                         ctxc_error_t *err) {
    ctxc_session_t *s = user;
    size_t which = block;
    char num[24];
    size_t n = 0;
    do {
        num[sizeof num - 1u - n++] = (char)('0' + block % 10u);
        block /= 10u;
    } while (block > 0 && n < sizeof num - 1u);
    if (s->spill_buf == NULL || s->spill_buf_cap < n + 2u) {
        return ctxc__fail(err, CTXC_E_NO_SPACE,
                          "spill: no buffer for the entry (session)");
    }
    memcpy(s->spill_buf, num + sizeof num - n, n);
    s->spill_buf[n++] = '\n';
    size_t len = 0;
    ctxc_status_t st = ctxc_export_entry_buf(
        s->history, index, s->spill_buf + n, s->spill_buf_cap - n, &len, err);
    if (st == CTXC_OK) {
        st = ctxc_spill_put(s->spill, s->spill_buf, n + len, id, err);
    }
    if (st != CTXC_OK && err != NULL) {
        ctxc__err_prefix(err, "spilling block %z of entry %z before pruning "
                              "it (history unchanged)",
                         which, index);
    }
    return st;
}

void ctxc_session_set_spill(ctxc_session_t *s, ctxc_spill_t *sp, void *buf,
                            size_t cap) {
    s->spill = sp;
    s->spill_fn_ = sp != NULL ? ctxc__session_spill : NULL;
    s->spill_buf = buf;
    s->spill_buf_cap = buf != NULL ? cap : 0;
}

/* Whether t holds "[ctxc:restore <id>]]", ending `end` bytes before its
 * own end (0: anywhere). */
static bool has_handle(ctxc_str_t t, const char *id, size_t end) {
    static const char tag[] = "[ctxc:restore ";
    const size_t want = sizeof tag - 1u + CTXC_SPILL_ID_LEN + 2u;
    for (size_t at = 0; t.len >= want + end && at <= t.len - want - end; at++) {
        if (memcmp(t.ptr + at, tag, sizeof tag - 1u) == 0 &&
            memcmp(t.ptr + at + sizeof tag - 1u, id, CTXC_SPILL_ID_LEN) == 0 &&
            memcmp(t.ptr + at + want - 2u, "]]", 2) == 0 &&
            (end == 0 || at == t.len - want - end)) {
            return true;
        }
    }
    return false;
}

/* Whether the history holds the pointer of `id` where the density step
 * writes one, for the block restored (blk[0..n)): a tool_response whose
 * result is the spilled pointer and whose call id is the restored
 * block's, or a human text block holding the spilled note when the
 * restored block is a text block. A pointer quoted anywhere else (a
 * model's answer, a summary) or one whose block is not the restored one
 * does not count. */
static bool restore_owned(const ctxc_history_t *h, const char *id,
                          const char *blk, size_t n) {
    ctxc_str_t type, call = CTXC_STR_ABSENT;
    if (strlen(id) != CTXC_SPILL_ID_LEN ||
        !ctxc__json_find_key(blk, n, "type", &type) || type.len < 6u) {
        return false;
    }
    /* "tool_response" or "text" (another type is never spilled) */
    bool result = type.ptr[2] == 'o';
    if (result &&
        (!ctxc__json_find_key(blk, n, "callId", &call) || call.len < 2u)) {
        return false;
    }
    for (size_t i = 0; i < ctxc_history_count(h); i++) {
        ctxc_entry_t e;
        (void)ctxc_history_get(h, i, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (result && b.type == CTXC_BLOCK_TOOL_RESPONSE &&
                b.u.tool_response.result.len ==
                    sizeof("\"" CTXC_SPILLED_RESULT_TEXT "\"") - 1u &&
                has_handle(b.u.tool_response.result, id, 1u) &&
                ctxc__src_equals(call.ptr + 1, call.len - 2u, CTXC__SRC_JSTR,
                                 b.u.tool_response.call_id.ptr,
                                 b.u.tool_response.call_id.len)) {
                return true;
            }
            if (!result && e.speaker == CTXC_SPEAKER_HUMAN &&
                b.type == CTXC_BLOCK_TEXT && has_handle(b.u.text.text, id, 0)) {
                return true;
            }
        }
    }
    return false;
}

ctxc_status_t ctxc_session_restore(ctxc_session_t *s, const char *id,
                                   char *out, size_t cap, size_t *len,
                                   ctxc_error_t *err) {
    if (s == NULL || out == NULL || len == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "restore: NULL");
    }
    if (s->spill == NULL) {
        return ctxc__fail(err, CTXC_E_UNAVAILABLE,
                          "restore %s: no spill store is set "
                          "(ctxc_session_set_spill)",
                          id != NULL ? id : "");
    }
    ctxc_status_t r =
        ctxc_spill_restore_block(s->spill, id, out, cap, len, err);
    if (r == CTXC_OK && s->history != NULL &&
        !restore_owned(s->history, id, out, *len)) {
        *len = 0;
        if (cap > 0) {
            out[0] = '\0';
        }
        r = ctxc__fail(err, CTXC_E_NOT_FOUND,
                       "restore %s: not a pointer of this history", id);
    }
    return r;
}

/* The work area a network-free step (the density step, a compress of an
 * LLM-free strategy) writes in: the session's, with its scratch swapped for
 * the arena's free tail when that is larger. The records the step inserts
 * are staged there and placed by the plan's application (which moves them
 * out of the way first when the new history is longer than the old one);
 * nothing can append in between, the step holds the session. A firmware's
 * work scratch then only needs what a step inserts when the arena is
 * nearly full. */
static ctxc_work_t *step_work(const ctxc_session_t *s, ctxc_work_t *tmp) {
    const ctxc_history_t *h = s->history;
    size_t at = (h->used + 7u) & ~(size_t)7u; /* the arena is 8-aligned */
    size_t tail = at < h->arena_bytes ? h->arena_bytes - at : 0;
    if (tail <= s->work->scratch_cap) {
        return s->work;
    }
    *tmp = *s->work;
    tmp->scratch = h->arena + at;
    tmp->scratch_cap = tail;
    return tmp;
}

#if CTXC_CFG_STRATEGY_HIGH_DENSITY && CTXC_CFG_DENSITY_FILTER_BYTES > 0
/* The density step between calls (ctxc_density_memo_t; design.md, "The
 * density step between calls"). Two path buffers for the memo's scans: the
 * work area's plan operations, free before a step and after its
 * application (NULL when they are too small: every step is whole). */
static char *memo_paths(const ctxc_work_t *w) {
    size_t ops_bytes =
        w->ops != NULL ? (2u * w->cap + 2u) * sizeof(ctxc_plan_op_t) : 0;
    return ops_bytes >= 2u * (size_t)CTXC_CFG_PATH_MAX ? (char *)w->ops
                                                        : NULL;
}

/* The raw view of the history's entries [from, count): the identity map
 * written for those positions only. */
static void view_from(const ctxc_session_t *s, size_t from, ctxc_view_t *v) {
    const ctxc_history_t *h = s->history;
    for (size_t i = from; i < h->count; i++) {
        s->work->map[i] = (uint16_t)i;
    }
    *v = (ctxc_view_t){h->slots, h->arena, s->work->map + from,
                       h->count - from, h->count};
}

/* Where the step may start: after the entries the last step read when
 * nothing but appends came since, under the same settings, and none of
 * the appended entries can change an earlier one's fate; else 0. */
static size_t memo_from(ctxc_session_t *s, const ctxc_strategy_t *st,
                        const ctxc_density_config_t *d, uint32_t cfg) {
    const ctxc_history_t *h = s->history;
    const ctxc_density_memo_t *m = &s->memo_;
    char *paths = memo_paths(s->work);
    if (st->optimize != ctxc__hd_optimize || paths == NULL || !m->valid ||
        m->edits != h->edits_ || m->config != cfg || m->count > h->count ||
        s->work->cap < h->count) {
        return 0;
    }
    const ctxc_view_t all = {h->slots, h->arena, NULL, h->count, h->count};
    return ctxc__hd_memo_start(&all, d, m, paths);
}

/* After a step from `from` was applied: the memo covers the history. */
static void memo_note(ctxc_session_t *s, const ctxc_strategy_t *st,
                      const ctxc_density_config_t *d, uint32_t cfg,
                      size_t from) {
    ctxc_density_memo_t *m = &s->memo_;
    char *paths = memo_paths(s->work);
    m->valid = false;
    if (st->optimize != ctxc__hd_optimize || paths == NULL ||
        s->work->cap < s->history->count) {
        return;
    }
    if (from == 0) { /* the whole history was read: filters anew */
        memset(m->reads, 0, sizeof m->reads);
        memset(m->incl, 0, sizeof m->incl);
        m->count = 0;
    }
    const ctxc_history_t *h = s->history;
    const ctxc_view_t all = {h->slots, h->arena, NULL, h->count, h->count};
    ctxc__hd_memo_add(&all, d, m, paths); /* [m->count, count) */
    m->count = h->count;
    m->edits = s->history->edits_;
    m->config = cfg;
    m->valid = true;
}

/* After a plan that only drops entries (KEEP ranges, no INSERT) was
 * applied to a history the memo was up to date with: the entries the memo
 * covered that are left are still as a step leaves them (a step decides
 * an entry by later entries: a write after a read, a later inclusion of
 * the path, newer results of the tool; dropping entries gives none of
 * them a new reason, and the filters may only name more paths than are
 * left), and they come first in the same order. The memo covers them:
 * the turn after a truncation steps only what it appends. */
static void memo_carry(ctxc_session_t *s, const ctxc_plan_t *plan,
                       uint32_t edits_before) {
    ctxc_density_memo_t *m = &s->memo_;
    if (!m->valid || m->edits != edits_before) {
        return;
    }
    size_t kept = 0;
    for (size_t k = 0; k < plan->count; k++) {
        const ctxc_plan_op_t *op = &plan->ops[k];
        if (op->kind != CTXC_PLAN_KEEP) {
            m->valid = false; /* an inserted entry: the next step is whole */
            return;
        }
        size_t to = op->to < m->count ? op->to : m->count;
        kept += op->from < to ? to - op->from : 0u;
    }
    m->count = kept;
    m->edits = s->history->edits_;
}
#endif

static ctxc_status_t optimize_with(ctxc_session_t *s, const ctxc_strategy_t *st,
                                   ctxc_error_t *err) {
    s->density_dirty_ = false; /* cleared whether it runs or not */
    memset(&s->last_density, 0, sizeof s->last_density);
    s->last_density_from = 0;
    if (st->optimize == NULL) {
        return CTXC_OK;
    }
    ctxc_view_t raw;
    ctxc_status_t r;
    if (s->work->cap < s->history->count) { /* the view map's room */
        return ctxc_view_init(&raw, s->history, CTXC_VIEW_RAW, s->work->map,
                              s->work->cap, err);
    }
    ctxc_density_config_t density;
    memset(&density, 0, sizeof density);
    ctxc_settings_density(s->settings, &density);
    density.workspace_root = s->workspace_root;
    if (s->spill != NULL && s->spill_fn_ != NULL) {
        density.spill = s->spill_fn_;
        density.spill_user = s;
    }
#if CTXC_CFG_STRATEGY_HIGH_DENSITY && CTXC_CFG_DENSITY_FILTER_BYTES > 0
    uint32_t cfg = ctxc__hd_config_hash(&density);
    size_t from = memo_from(s, st, &density, cfg);
    view_from(s, from, &raw);
#else
    (void)ctxc_view_init(&raw, s->history, CTXC_VIEW_RAW, s->work->map,
                         s->work->cap, NULL);
#endif
    ctxc_density_result_t result;
    ctxc_work_t tmp;
    ctxc_work_t *w = step_work(s, &tmp);
    s->locked_ = true;
    if (density.spill != NULL) {
        s->spill->keep_from_ = 0xFFFFFFFFu; /* ctxc_spill_begin() */
    }
    r = st->optimize(&raw, &density, w, &result, err);
    if (r == CTXC_OK &&
        (result.n_removals > 0 || result.n_replacements > 0)) {
        r = ctxc_density_apply(s->history, &result, w, err);
    }
    if (s->spill != NULL) {
        s->spill->keep_from_ = 0; /* ctxc_spill_end() */
    }
    s->locked_ = false;
    if (r == CTXC_OK) {
        s->last_density = result.counts;
#if CTXC_CFG_STRATEGY_HIGH_DENSITY && CTXC_CFG_DENSITY_FILTER_BYTES > 0
        s->last_density_from = from;
        memo_note(s, st, &density, cfg, from);
#endif
    }
    return r;
}

/* The history's entry and byte limits now, with the settings' thresholds
 * and reserves (add_room's need in place of a smaller reserve). */
static void limits_of(const ctxc_session_t *s, ctxc_limits_t *l) {
    const ctxc_history_t *h = s->history;
    uint32_t re = 0, rb = 0; /* the registry's defaults: never unset */
    memset(l, 0, sizeof *l);
    l->entries = h->count;
    l->max_entries = h->max_entries;
    l->bytes = h->used;
    l->arena_bytes = h->arena_bytes;
    (void)ctxc_settings_ratio(s->settings,
                              CTXC_SETTING_COMPRESSION_ENTRIES_THRESHOLD,
                              &l->entries_threshold);
    (void)ctxc_settings_ratio(s->settings,
                              CTXC_SETTING_COMPRESSION_BYTES_THRESHOLD,
                              &l->bytes_threshold);
    (void)ctxc_settings_int(s->settings,
                            CTXC_SETTING_COMPRESSION_RESERVE_ENTRIES, &re);
    (void)ctxc_settings_int(s->settings, CTXC_SETTING_COMPRESSION_RESERVE_BYTES,
                            &rb);
    l->reserve_entries = re > s->room_entries_ ? re : s->room_entries_;
    l->reserve_bytes = rb > s->room_bytes_ ? rb : s->room_bytes_;
}

/* The limits over their threshold with `pending` more tokens
 * (CTXC_LIMIT_* bits). */
CTXC__NOINLINE static unsigned triggers(const ctxc_session_t *s,
                                       const ctxc_strategy_t *st,
                         uint64_t pending) {
    ctxc_limits_t l;
    limits_of(s, &l);
    uint64_t limit = ctxc_settings_context_limit(s->settings);
    unsigned over = ctxc_limits_over(&l);
    if (ctxc_history_tokens(s->history) + pending >
        limit * threshold_of(s, st) / 1000u) {
        over |= CTXC_LIMIT_TOKENS;
    }
    return over;
}

/* The limits that would be exceeded (CTXC_LIMIT_* bits): `tokens` over
 * the context limit, the entries or bytes with their reserve over the
 * capacity. In a frame of its own (off before_send's chain). */
CTXC__NOINLINE static unsigned emergencies(const ctxc_session_t *s,
                                           uint64_t tokens, uint64_t limit) {
    ctxc_limits_t l;
    limits_of(s, &l);
    return (tokens > limit ? CTXC_LIMIT_TOKENS : 0u) |
           (l.entries + l.reserve_entries > l.max_entries ? CTXC_LIMIT_ENTRIES
                                                          : 0u) |
           (l.bytes + l.reserve_bytes > l.arena_bytes ? CTXC_LIMIT_BYTES
                                                      : 0u);
}

/* The compression context over the store's entries [0, n) (n = the
 * count: all of them). */
static ctxc_status_t build_ctx(ctxc_session_t *s, const ctxc_strategy_t *st,
                               ctxc_compress_ctx_t *ctx, size_t n,
                               ctxc_error_t *err) {
    memset(ctx, 0, sizeof *ctx);
    ctxc_status_t r = ctxc_view_init(&ctx->view, s->history, CTXC_VIEW_CURATED,
                                     s->work->map, s->work->cap, err);
    if (r != CTXC_OK) {
        return r;
    }
    if (n < ctx->view.store_count) { /* the view of the range only */
        size_t c = 0;
        while (c < ctx->view.count && ctx->view.map[c] < n) {
            c++;
        }
        ctx->view.count = c;
        ctx->view.store_count = n;
    }
    ctx->estimate = s->history->estimate;
    ctx->estimate_user = s->history->estimate_user;
    ctx->current_tokens = ctxc_history_tokens(s->history);
    ctxc_settings_strategy_values(s->settings, st, &ctx->values);
    limits_of(s, &ctx->values.limits);
    ctx->values.density.workspace_root = s->workspace_root;
    ctx->profile =
        ctxc_settings_string(s->settings, CTXC_SETTING_COMPRESSION_PROFILE);
    ctx->work = s->work;
    ctx->llm_resolver = s->llm_resolver;
    ctx->llm_user = s->llm_user;
#if LLM_STRATEGIES_
    if (s->port != NULL && s->port->fs.ops != NULL) {
        ctx->prompt_resolver = session_prompt;
        ctx->prompt_user = s;
    }
#endif
    ctx->todos = s->todos;
    ctx->todo_count = s->todo_count;
    ctx->transcript_path = s->transcript_path;
    if (s->port != NULL) { /* the fact check asks it (issue 41) */
        ctx->stop = s->port->stop;
        ctx->stop_ctx = s->port->stop_ctx;
    }
    return CTXC_OK;
}

static void log_result(ctxc_session_t *s, const ctxc_strategy_t *st,
                       const ctxc_plan_t *plan, ctxc_status_t r) {
    if (r == CTXC_OK) {
        s->last_compress = plan->meta;
        s->last_compress.entries_after = s->history->count;
        s->last_compress.bytes_after = s->history->used;
        ctxc_port_log(
            s->port, CTXC_LOG_INFO,
            "compressed with %s: %z -> %z entries, %z -> %z tokens", st->name,
            plan->meta.original_count, plan->meta.compressed_count,
            (size_t)plan->meta.tokens_before, (size_t)plan->meta.tokens_after);
    } else {
        ctxc_port_log(s->port, CTXC_LOG_WARN, "compression with %s failed: %s",
                      st->name, ctxc_strerror(r));
    }
}

static void job_succeeded(ctxc_session_t *s);

/* The strategy's compress and the plan applied: the context and the plan
 * (ctxc_compress_ctx_t, ctxc_plan_t) in a frame of their own, which the
 * checks of compress_with (the profile check reads the settings file) do
 * not sit on. */
CTXC__NOINLINE static ctxc_status_t
compress_run(ctxc_session_t *s, const ctxc_strategy_t *st, ctxc_error_t *err) {
    ctxc_compress_ctx_t ctx;
    ctxc_status_t r = build_ctx(s, st, &ctx, s->history->count, err);
    if (r != CTXC_OK) {
        return r;
    }
    ctxc_work_t tmp;
    if (!st->requires_llm) { /* an LLM strategy's scratch outlives a call */
        ctx.work = step_work(s, &tmp);
    }
    ctxc_plan_t plan;
    ctxc_plan_init(&plan, ctx.work);
    uint64_t t0 = ctxc_port_now_ms(s->port);
    s->locked_ = true;
    r = st->compress(&ctx, &plan, err);
    plan.meta.trigger = triggers(s, st, 0);
    plan.meta.entries_before = s->history->count;
    plan.meta.bytes_before = s->history->used;
#if CTXC_CFG_STRATEGY_HIGH_DENSITY && CTXC_CFG_DENSITY_FILTER_BYTES > 0
    uint32_t edits_before = s->history->edits_;
#endif
    if (r == CTXC_OK) {
        r = ctxc_history_apply_plan(s->history, &plan, err);
    }
#if CTXC_CFG_STRATEGY_HIGH_DENSITY && CTXC_CFG_DENSITY_FILTER_BYTES > 0
    if (r == CTXC_OK) {
        memo_carry(s, &plan, edits_before);
    }
#endif
    s->locked_ = false;
    s->last_compress_ms = ctxc_port_now_ms(s->port) - t0;
    log_result(s, st, &plan, r);
    if (r == CTXC_OK && plan.meta.llm_call_made) {
        job_succeeded(s); /* the model answers again: no cooldown */
    }
    return r;
}

/* What a compression checks before it starts. */
static ctxc_status_t compress_checks(ctxc_session_t *s,
                                     const ctxc_strategy_t *st,
                                     ctxc_error_t *err) {
    if (LLM_STRATEGIES_ && st->requires_llm) {
        /* REQ-CS-006A.1: a compression.profile that does not exist is an
         * error naming it, before anything else (the model itself is
         * resolved only when a summary call will be made) */
        ctxc_status_t pr =
            ctxc_settings_compression_profile_check(s->settings, err);
        if (pr != CTXC_OK) {
            return pr;
        }
    }
    ctxc_status_t w = wired(s, st, err);
    if (w != CTXC_OK) {
        return w;
    }
    if (ctxc_settings_context_limit(s->settings) == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "context-limit is not set");
    }
    return CTXC_OK;
}

static ctxc_status_t compress_with(ctxc_session_t *s, const ctxc_strategy_t *st,
                                   ctxc_error_t *err) {
    ctxc_status_t r = compress_checks(s, st, err);
    return r != CTXC_OK ? r : compress_run(s, st, err);
}

static ctxc_status_t job_start(ctxc_session_t *s, ctxc_error_t *err);
static void lock(const ctxc_session_t *s);
static void unlock(const ctxc_session_t *s);
static ctxc_status_t job_poll(ctxc_session_t *s, ctxc_error_t *err);
static void job_end(ctxc_session_t *s);

/* compression.on-limit: 0 wait, else the network-free strategy's id. */
static const ctxc_strategy_t *on_limit(const ctxc_session_t *s,
                                       const char **name) {
    ctxc_setting_value_t v;
    *name = "wait";
    if (ctxc_settings_get(s->settings, CTXC_SETTING_COMPRESSION_ON_LIMIT,
                          &v) != CTXC_SOURCE_UNSET &&
        v.str != NULL) {
        *name = v.str;
    }
    if (strcmp(*name, "top-down-truncation") == 0) {
        return ctxc_strategy_get(CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    }
    if (strcmp(*name, "high-density") == 0) {
        return ctxc_strategy_get(CTXC_STRATEGY_HIGH_DENSITY);
    }
    *name = "wait";
    return NULL;
}

/* The network-free strategy that keeps a limit when the summary is not
 * there: compression.on-limit's, else (wait) top-down-truncation, else
 * high-density; NULL when the build has neither. */
static const ctxc_strategy_t *network_free(const ctxc_session_t *s) {
    const char *name;
    const ctxc_strategy_t *fb = on_limit(s, &name);
    if (fb == NULL) {
        fb = ctxc_strategy_get(CTXC_STRATEGY_TOP_DOWN_TRUNCATION);
    }
    if (fb == NULL) {
        fb = ctxc_strategy_get(CTXC_STRATEGY_HIGH_DENSITY);
    }
    return fb;
}

/* Compresses now with the network-free strategy fb instead of the summary
 * (reported: report->job FALLBACK, report->fallback, and `why` in
 * last_compress.fallback). */
static ctxc_status_t compress_instead(ctxc_session_t *s,
                                     const ctxc_strategy_t *fb,
                                     ctxc_send_report_t *rep, const char *why,
                                     ctxc_error_t *err) {
    ctxc_status_t r = compress_with(s, fb, err);
    rep->job = CTXC_SEND_JOB_FALLBACK;
    rep->fallback = fb->name;
    rep->compressed = r == CTXC_OK && !s->last_compress.unchanged;
    if (r == CTXC_OK) {
        s->last_compress.fallback = why;
    }
    return r;
}

/* ---- the background summaries' failures ----------------------------------
 * (ctxc_session_job_health in session.h: backoff 5 s x 2^(n-1), the
 * cooldown after compression.failure-limit failures in a row). */

#if LLM_STRATEGIES_

#define JOB_BACKOFF_MS 5000u

static uint32_t failure_limit(const ctxc_session_t *s) {
    uint32_t n = 3;
    (void)ctxc_settings_int(s->settings, CTXC_SETTING_COMPRESSION_FAILURE_LIMIT,
                            &n);
    return n > 0 ? n : 1;
}

static void job_failed(ctxc_session_t *s, ctxc_status_t r) {
    uint32_t cooldown = 0;
    (void)ctxc_settings_int(s->settings, CTXC_SETTING_COMPRESSION_COOLDOWN_MS,
                            &cooldown);
    if (s->job_failures_ < UINT32_MAX) {
        s->job_failures_++;
    }
    s->job_last_ = r;
    uint64_t wait = cooldown;
    if (s->job_failures_ < failure_limit(s)) {
        uint32_t k = s->job_failures_ - 1u;
        wait = (uint64_t)JOB_BACKOFF_MS << (k < 16u ? k : 16u);
        wait = wait < cooldown ? wait : cooldown;
    }
    s->job_retry_at_ = ctxc_port_now_ms(s->port) + wait;
    ctxc_port_log(s->port, CTXC_LOG_WARN,
                  "compression job failed (%s), %z in a row: the next one "
                  "not before %z ms%s",
                  ctxc_status_name(r), (size_t)s->job_failures_, (size_t)wait,
                  s->job_failures_ >= failure_limit(s) ? " (cooldown)" : "");
}

static void job_succeeded(ctxc_session_t *s) {
    s->job_failures_ = 0;
    s->job_last_ = CTXC_OK;
    s->job_retry_at_ = 0;
}

/* No job may start now (a backoff or the cooldown runs). */
static bool job_held(const ctxc_session_t *s) {
    if (s->job_failures_ == 0) {
        return false;
    }
    if (s->port == NULL || s->port->clock == NULL) { /* cannot be timed */
        return s->job_failures_ >= failure_limit(s);
    }
    return ctxc_port_now_ms(s->port) < s->job_retry_at_;
}

void ctxc_session_job_health(const ctxc_session_t *s, ctxc_job_health_t *out) {
    memset(out, 0, sizeof *out);
    if (s == NULL || s->settings == NULL) {
        return;
    }
    out->failures = s->job_failures_;
    out->last = s->job_last_;
    out->cooling_down = s->job_failures_ >= failure_limit(s);
    uint64_t now = ctxc_port_now_ms(s->port);
    out->retry_in_ms = job_held(s) && s->job_retry_at_ > now
                           ? s->job_retry_at_ - now
                           : 0;
}

/* The summary is not there and will not come in time (its job failed, or
 * a backoff or the cooldown runs): the network-free fallback keeps the
 * limit, reported; without one in the build, `why` (the job's error) is
 * returned. */
static ctxc_status_t keep_limit(ctxc_session_t *s, const ctxc_strategy_t *st,
                                ctxc_send_report_t *rep, ctxc_status_t why,
                                ctxc_error_t *err) {
    const ctxc_strategy_t *fb = network_free(s);
    if (fb == NULL) {
        return why != CTXC_OK
                   ? why
                   : ctxc__fail(err, CTXC_E_UNAVAILABLE,
                                "the summary model is cooling down after "
                                "failures and no network-free strategy is "
                                "in this build");
    }
    if (ctxc_session_job_active(s)) {
        job_end(s);
    }
    ctxc_port_log(s->port, CTXC_LOG_WARN,
                  "before_send: fallback to %s instead of %s's summary: its "
                  "jobs failed (%z in a row)",
                  fb->name, st->name, (size_t)s->job_failures_);
    return compress_instead(
        s, fb, rep,
        "the summary model failed: its jobs are held off "
        "(compression.failure-limit, compression.cooldown-ms)",
        err);
}

#else /* no LLM strategy: no summary can fail; the bookkeeping is left out */

static void job_failed(ctxc_session_t *s, ctxc_status_t r) {
    (void)s;
    (void)r;
}

static void job_succeeded(ctxc_session_t *s) { (void)s; }

static bool job_held(const ctxc_session_t *s) {
    (void)s;
    return false;
}

void ctxc_session_job_health(const ctxc_session_t *s, ctxc_job_health_t *out) {
    (void)s;
    memset(out, 0, sizeof *out);
}

static ctxc_status_t keep_limit(ctxc_session_t *s, const ctxc_strategy_t *st,
                                ctxc_send_report_t *rep, ctxc_status_t why,
                                ctxc_error_t *err) {
    (void)s;
    (void)st;
    (void)rep;
    (void)err;
    return why;
}

#endif

/* At the threshold while the summary has not arrived (a job in progress,
 * or prefetch on and none yet): wait for it (the caller's loop, outside
 * the mutex), or compress now with the network-free strategy of
 * compression.on-limit (a job in progress is cancelled first). */
static ctxc_status_t at_limit(ctxc_session_t *s, const ctxc_strategy_t *st,
                              ctxc_send_report_t *rep, ctxc_error_t *err) {
    const char *name;
    const ctxc_strategy_t *fb = on_limit(s, &name);
    if (fb == NULL && strcmp(name, "wait") != 0) {
        return ctxc__fail(err, CTXC_E_UNAVAILABLE,
                          "compression.on-limit %s: that strategy is not in "
                          "this build",
                          name);
    }
    if (fb == NULL && !ctxc_session_job_active(s) && job_held(s)) {
        return keep_limit(s, st, rep, s->job_last_, err);
    }
    if (fb == NULL) { /* wait */
        if (!ctxc_session_job_active(s)) {
            ctxc_status_t r = job_start(s, err);
            if (r != CTXC_OK) {
                return r;
            }
        }
        s->job_.wait = true;
        rep->job = CTXC_SEND_JOB_WAITED;
        return CTXC_E_IN_PROGRESS; /* ctxc_session_before_send waits */
    }
    bool had_job = ctxc_session_job_active(s);
    if (had_job) {
        job_end(s);
    }
    static const char why_job[] =
        "the summary of the compression job had not arrived at the "
        "threshold (compression.on-limit)";
    ctxc_port_log(s->port, CTXC_LOG_WARN,
                  "before_send: fallback to %s instead of %s's summary: %s",
                  fb->name, st->name,
                  had_job ? "its job had not answered at the threshold"
                          : "no summary at the threshold");
    return compress_instead(s, fb, rep, why_job, err);
}

static unsigned prefetch_due(const ctxc_session_t *s, uint64_t now,
                             uint64_t limit, uint16_t prefetch);

/* before_send's poll of a job in progress: rep->job says what became of
 * it; a failure goes to rep->job_status and the log, not to the caller's
 * err (the call goes on). Its error struct in a frame of its own, off the
 * chain of the compression that may follow. */
CTXC__NOINLINE static void send_poll(ctxc_session_t *s,
                                     ctxc_send_report_t *rep) {
    ctxc_error_t jerr;
    ctxc_status_t r = job_poll(s, &jerr);
    rep->job = r == CTXC_E_IN_PROGRESS ? CTXC_SEND_JOB_RUNNING
               : r == CTXC_OK          ? CTXC_SEND_JOB_APPLIED
                                       : CTXC_SEND_JOB_FAILED;
    if (rep->job == CTXC_SEND_JOB_FAILED) {
        rep->job_status = r;
        ctxc_port_log(s->port, CTXC_LOG_WARN,
                      "before_send: the compression job failed: %s",
                      ctxc_error_message(&jerr));
    }
}

static ctxc_status_t before_send_with(ctxc_session_t *s,
                                      const ctxc_strategy_t *st,
                                      uint64_t pending_tokens,
                                      ctxc_send_report_t *report,
                                      ctxc_error_t *err) {
    ctxc_send_report_t rep;
    memset(&rep, 0, sizeof rep);
    ctxc_status_t r;
    uint64_t limit = ctxc_settings_context_limit(s->settings);
    if (limit == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "context-limit is not set");
    }
    /* 1. settle */
    rep.tokens = ctxc_history_tokens(s->history);
    rep.threshold_tokens = limit * threshold_of(s, st) / 1000u;
    unsigned emerg = emergencies(s, rep.tokens + pending_tokens, limit);
    rep.emergency = emerg != 0;
    uint16_t prefetch = 0;
    bool jobs = st->requires_llm &&
                ctxc_settings_ratio(s->settings,
                                    CTXC_SETTING_COMPRESSION_PREFETCH_THRESHOLD,
                                    &prefetch);
    /* a job in progress: one poll, no density step (its range is frozen) */
    if (ctxc_session_job_active(s)) {
        send_poll(s, &rep);
        jobs = true;
    }
    if (!ctxc_session_job_active(s)) {
        /* 2. density step: when new content arrived, and always in an
         * emergency */
        if (s->density_dirty_ || rep.emergency) {
            rep.optimized = st->optimize != NULL;
            if ((r = optimize_with(s, st, err)) != CTXC_OK) {
                return r;
            }
        }
    }
    /* 3. threshold check (each limit), 4. compress */
    uint64_t now = ctxc_history_tokens(s->history) + pending_tokens;
    rep.trigger = triggers(s, st, pending_tokens) | emerg;
    bool over = rep.trigger != 0;
    r = CTXC_OK;
    unsigned early = 0;
    if (rep.job == CTXC_SEND_JOB_APPLIED) {
        /* one compression per call; what started the job triggered it */
        rep.compressed = !s->last_compress.unchanged;
        rep.trigger = s->last_compress.trigger;
    } else if (over && rep.job == CTXC_SEND_JOB_FAILED) {
        r = keep_limit(s, st, &rep, rep.job_status, err);
    } else if (over && jobs) {
        r = at_limit(s, st, &rep, err);
    } else if (over) {
        r = compress_with(s, st, err);
        rep.compressed = r == CTXC_OK && !s->last_compress.unchanged;
    } else if (jobs && !ctxc_session_job_active(s) && prefetch > 0 &&
               rep.job == CTXC_SEND_JOB_NONE && !job_held(s) &&
               (early = prefetch_due(s, now, limit, prefetch)) != 0) {
        r = job_start(s, err);
        if (r == CTXC_OK) {
            rep.job = CTXC_SEND_JOB_STARTED;
            s->job_.plan.meta.trigger = early; /* past the prefetch ratio */
        }
    }
    if (rep.compressed && rep.trigger != 0 &&
        rep.job != CTXC_SEND_JOB_APPLIED) {
        s->last_compress.trigger = rep.trigger;
    }
    rep.tokens_after = ctxc_history_tokens(s->history);
    if (report != NULL) {
        *report = rep;
    }
    return r;
}

/* The limits past the prefetch threshold (thousandths; CTXC_LIMIT_* bits):
 * tokens (now, with what the request adds), entries or bytes (with their
 * reserve). */
CTXC__NOINLINE static unsigned prefetch_due(const ctxc_session_t *s,
                                           uint64_t now, uint64_t limit,
                                           uint16_t prefetch) {
    ctxc_limits_t l;
    limits_of(s, &l);
    l.entries_threshold = prefetch;
    l.bytes_threshold = prefetch;
    return ctxc_limits_over(&l) |
           (now > limit * prefetch / 1000u ? CTXC_LIMIT_TOKENS : 0u);
}

/* add_room's compression: the configured strategy when it needs no model;
 * else a job's result when its poll brings it, else the network-free
 * strategy of compression.on-limit (a job in progress is cancelled). */
static ctxc_status_t make_room(ctxc_session_t *s, ctxc_send_report_t *rep,
                               ctxc_error_t *err) {
    const ctxc_strategy_t *st;
    ctxc_status_t r = find_strategy(s, &st, err);
    if (r != CTXC_OK) {
        return r;
    }
    if (ctxc_session_job_active(s)) {
        ctxc_error_t job_err; /* a failed job is logged, not the caller's */
        r = job_poll(s, &job_err);
        if (r == CTXC_OK) {
            rep->job = CTXC_SEND_JOB_APPLIED;
            rep->compressed = !s->last_compress.unchanged;
            if (rep->compressed) {
                return CTXC_OK; /* its result may be room enough */
            }
        } else if (r == CTXC_E_IN_PROGRESS) {
            job_end(s); /* the device does not wait for the network */
        }
    }
    rep->trigger = triggers(s, st, 0);
    if (!st->requires_llm) {
        r = compress_with(s, st, err);
        rep->compressed = r == CTXC_OK && !s->last_compress.unchanged;
    } else {
        const ctxc_strategy_t *fb = network_free(s);
        if (fb == NULL) {
            return ctxc__fail(err, CTXC_E_NO_SPACE,
                              "no room for the entry, and no strategy of this "
                              "build makes room without a model");
        }
        r = compress_instead(s, fb, rep,
                             "no room for the entry being appended, and the "
                             "summary was not there",
                             err);
    }
    if (r == CTXC_OK) {
        s->last_compress.trigger = rep->trigger;
    }
    return r;
}

static ctxc_status_t add_room_with(ctxc_session_t *s, const ctxc_entry_in_t *in,
                                   ctxc_send_report_t *rep,
                                   ctxc_error_t *err) {
    /* the first append's NO_SPACE is the reason to make room, not the
     * caller's error: err is written only when the call fails */
    ctxc_error_t local;
    ctxc_error_t *e = &local;
    const ctxc_history_t *h = s->history;
    rep->tokens = ctxc_history_tokens(h);
    ctxc_status_t r = ctxc_history_append(s->history, in, e);
    for (int round = 0; round < 2 && r == CTXC_E_NO_SPACE; round++) {
        size_t free_bytes = h->arena_bytes - h->used;
        s->room_entries_ = 1;
        s->room_bytes_ = 0;
        if (h->count < h->max_entries) { /* short of bytes */
            s->room_bytes_ = free_bytes + e->needed;
            if (s->room_bytes_ > h->arena_bytes) {
                size_t over = s->room_bytes_ - h->arena_bytes;
                s->room_entries_ = s->room_bytes_ = 0;
                return ctxc__fail_space(err, over,
                                        "the entry needs %z arena bytes, the "
                                        "whole arena has %z: no compression "
                                        "makes room for it",
                                        h->arena_bytes + over,
                                        h->arena_bytes);
            }
        }
        r = make_room(s, rep, e);
        s->room_entries_ = s->room_bytes_ = 0;
        if (r != CTXC_OK) {
            break;
        }
        r = ctxc_history_append(s->history, in, e);
    }
    if (r == CTXC_OK) {
        s->density_dirty_ = true;
    } else if (err != NULL) {
        *err = local;
    }
    rep->tokens_after = ctxc_history_tokens(h);
    return r;
}

/* The public entry points: one dispatcher, inside the port's mutex. */

typedef enum {
    OP_ADD,
    OP_ADD_ROOM,
    OP_OPTIMIZE,
    OP_COMPRESS,
    OP_BEFORE_SEND
} op_t;

/* Images cost what the model the history goes to charges for their size
 * (estimate.h): while the history counts with the default estimator, or
 * with one this function installed, its image rule follows the
 * `provider` setting (openai, anthropic, gemini; the default rule for
 * none or another). A change re-estimates the history, once; an
 * estimator the application installed is left alone, and nothing changes
 * while a job holds a range. */
static void images_follow_provider(ctxc_session_t *s) {
    static const ctxc_image_cost_t rules[] = {CTXC_IMAGE_COST_OPENAI,
                                              CTXC_IMAGE_COST_ANTHROPIC,
                                              CTXC_IMAGE_COST_GEMINI};
    static const char *const names[] = {"openai", "anthropic", "gemini"};
    ctxc_history_t *h = s->history;
    bool ours = h->estimate == ctxc_estimate_block_default ||
                (h->estimate == ctxc_estimate_block_for &&
                 (h->estimate_user == NULL ||
                  ((const ctxc_image_cost_t *)h->estimate_user >= rules &&
                   (const ctxc_image_cost_t *)h->estimate_user < rules + 3)));
    if (!ours || s->job_.state != 0) {
        return;
    }
    const char *p = ctxc_settings_string(s->settings, CTXC_SETTING_PROVIDER);
    const ctxc_image_cost_t *rule = NULL;
    for (size_t i = 0; p != NULL && i < 3u; i++) {
        if (strcmp(p, names[i]) == 0) {
            rule = &rules[i];
        }
    }
    ctxc_estimate_fn fn =
        rule != NULL ? ctxc_estimate_block_for : ctxc_estimate_block_default;
    if (h->estimate != fn || (rule != NULL && h->estimate_user != rule)) {
        ctxc_history_set_estimator(h, fn, (void *)(uintptr_t)rule);
    }
}

static ctxc_status_t run(ctxc_session_t *s, op_t op, const ctxc_entry_in_t *in,
                         uint64_t pending_tokens, ctxc_send_report_t *report,
                         ctxc_error_t *err) {
    const ctxc_strategy_t *st;
    ctxc_status_t r;
    if (s->port != NULL && s->port->mutex.lock != NULL) {
        s->port->mutex.lock(s->port->mutex.ctx);
    }
    if (!s->locked_ && op != OP_ADD && op != OP_ADD_ROOM) {
        images_follow_provider(s); /* before anything counts tokens */
    }
    if (s->locked_) {
        r = ctxc__fail(err, CTXC_E_BUSY,
                       op == OP_ADD ? "the history is locked by a compression "
                                      "in progress"
                                    : "a compression is in progress");
    } else if (op == OP_ADD) {
        r = ctxc_history_append(s->history, in, err);
        if (r == CTXC_OK) {
            s->density_dirty_ = true;
        }
    } else if (op == OP_ADD_ROOM) {
        r = add_room_with(s, in, report, err);
    } else if ((r = find_strategy(s, &st, err)) != CTXC_OK) {
        /* r says why */
    } else if (op != OP_COMPRESS && (r = wired(s, st, err)) != CTXC_OK) {
        /* at every call, not only when the threshold is crossed */
    } else if (op != OP_BEFORE_SEND && s->job_.state != 0) {
        r = ctxc__fail(err, CTXC_E_BUSY,
                       "a compression job is in progress (poll it to its "
                       "end, or ctxc_session_compress_cancel)");
    } else if (op == OP_OPTIMIZE) {
        r = optimize_with(s, st, err);
    } else if (op == OP_COMPRESS) {
        r = compress_with(s, st, err);
    } else {
        r = before_send_with(s, st, pending_tokens, report, err);
    }
    if (s->port != NULL && s->port->mutex.lock != NULL &&
        s->port->mutex.unlock != NULL) {
        s->port->mutex.unlock(s->port->mutex.ctx);
    }
    return r;
}

ctxc_status_t ctxc_session_add(ctxc_session_t *s, const ctxc_entry_in_t *in,
                               ctxc_error_t *err) {
    return run(s, OP_ADD, in, 0, NULL, err);
}

ctxc_status_t ctxc_session_add_room(ctxc_session_t *s,
                                    const ctxc_entry_in_t *in,
                                    ctxc_send_report_t *report,
                                    ctxc_error_t *err) {
    ctxc_send_report_t local;
    if (report == NULL) {
        report = &local;
    }
    memset(report, 0, sizeof *report);
    if (s == NULL || s->history == NULL || s->settings == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "session is NULL");
    }
    return run(s, OP_ADD_ROOM, in, 0, report, err);
}

ctxc_status_t ctxc_session_optimize(ctxc_session_t *s, ctxc_error_t *err) {
    return run(s, OP_OPTIMIZE, NULL, 0, NULL, err);
}

ctxc_status_t ctxc_session_compress(ctxc_session_t *s, ctxc_error_t *err) {
    return run(s, OP_COMPRESS, NULL, 0, NULL, err);
}

/* Waits before the next poll of the job only on what is due
 * (ctxc_session_poll_due): not at all while it can move now (the last
 * step moved bytes, a connect or handshake step can run, a plan waits);
 * the transport's wait op (it returns as soon as the connection can go
 * on) while it waits for the network; the port's delay hook for what is
 * left of a retry's pause (the transport's wait without one). Never
 * longer than CTXC_HTTP_WAIT_SLICE_MS, so the stop hook is asked in
 * between. */
static void job_pause(const ctxc_session_t *s) {
    const ctxc_port_t *p = s->port;
    uint32_t ms = 0;
    ctxc_poll_due_t due = ctxc_session_poll_due(s, &ms);
    if (due == CTXC_POLL_NOW || due == CTXC_POLL_IDLE || p == NULL) {
        return;
    }
    bool waitable = p->transport.ops != NULL && p->transport.ops->wait != NULL;
    uint32_t slice = due == CTXC_POLL_AFTER && ms < CTXC_HTTP_WAIT_SLICE_MS
                         ? ms
                         : CTXC_HTTP_WAIT_SLICE_MS;
    if (due == CTXC_POLL_ON_NETWORK && waitable) {
        p->transport.ops->wait(p->transport.ctx, slice);
    } else if (p->delay_ms != NULL) {
        p->delay_ms(p->delay_ctx, slice);
    } else if (waitable) {
        p->transport.ops->wait(p->transport.ctx, slice);
    }
}

ctxc_status_t ctxc_session_before_send(ctxc_session_t *s,
                                       uint64_t pending_tokens,
                                       ctxc_send_report_t *report,
                                       ctxc_error_t *err) {
    ctxc_send_report_t local;
    if (report == NULL) {
        report = &local;
    }
    ctxc_status_t r = run(s, OP_BEFORE_SEND, NULL, pending_tokens, report, err);
    if (r != CTXC_E_IN_PROGRESS || s == NULL || !s->job_.wait) {
        return r;
    }
    /* compression.on-limit wait: the job's steps with waits in between,
     * the mutex taken per poll (other tasks append meanwhile) */
    s->job_.wait = false;
    do {
        job_pause(s); /* only as long as the job says it cannot move */
        if (ctxc_port_stop_requested(s->port)) {
            ctxc_session_compress_cancel(s);
            report->job = CTXC_SEND_JOB_FAILED;
            return ctxc__fail(err, CTXC_E_CANCELLED,
                              "before_send: the summary call was stopped "
                              "(the port's stop hook); the history is "
                              "unchanged");
        }
        r = ctxc_session_poll(s, err);
    } while (r == CTXC_E_IN_PROGRESS);
    if (r != CTXC_OK && r != CTXC_E_CANCELLED) {
        /* the limit needs the summary that failed: the network-free
         * fallback keeps it */
        const ctxc_strategy_t *st = NULL;
        ctxc_status_t why = r;
        lock(s);
        r = find_strategy(s, &st, err);
        if (r == CTXC_OK) {
            report->job_status = why;
            r = keep_limit(s, st, report, why, err);
        }
        report->tokens_after = ctxc_history_tokens(s->history);
        unlock(s);
        return r;
    }
    if (r != CTXC_OK) {
        report->job = CTXC_SEND_JOB_FAILED;
        return r;
    }
    /* the summary is in and applied: one compression per call, as the
     * blocking path */
    lock(s);
    report->tokens_after = ctxc_history_tokens(s->history);
    unlock(s);
    report->compressed = !s->last_compress.unchanged;
    report->job = CTXC_SEND_JOB_WAITED;
    return CTXC_OK;
}

/* ---- the resumable compression job --------------------------------------- */

enum { JOB_NONE = 0, JOB_CALL, JOB_READY };

static void lock(const ctxc_session_t *s) {
    if (s->port != NULL && s->port->mutex.lock != NULL) {
        s->port->mutex.lock(s->port->mutex.ctx);
    }
}

static void unlock(const ctxc_session_t *s) {
    if (s->port != NULL && s->port->mutex.lock != NULL &&
        s->port->mutex.unlock != NULL) {
        s->port->mutex.unlock(s->port->mutex.ctx);
    }
}

/* Whether a tool_response to call id `id` is in the store after entry i. */
static bool answered(const ctxc_history_t *h, size_t i, ctxc_str_t id) {
    for (size_t j = i + 1; j < h->count; j++) {
        ctxc_entry_t e;
        (void)ctxc_history_get(h, j, &e);
        if (e.speaker != CTXC_SPEAKER_TOOL) {
            continue;
        }
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type == CTXC_BLOCK_TOOL_RESPONSE &&
                b.u.tool_response.call_id.len == id.len &&
                memcmp(b.u.tool_response.call_id.ptr, id.ptr, id.len) == 0) {
                return true;
            }
        }
    }
    return false;
}

/* Human entries after an unanswered tool call from which the call counts
 * as abandoned (an interrupted tool): the user spoke three more times. */
#define OPEN_CALL_TURNS 3u

/* Whether OPEN_CALL_TURNS human entries follow entry i. */
static bool abandoned(const ctxc_history_t *h, size_t i) {
    unsigned turns = 0;
    for (size_t j = i + 1; j < h->count && turns < OPEN_CALL_TURNS; j++) {
        turns += h->slots[j].speaker == CTXC_SPEAKER_HUMAN;
    }
    return turns >= OPEN_CALL_TURNS;
}

/* The job's range [0, n): before the first tool_call still waiting for
 * its result, then back to a valid split of the whole store (no call
 * before n answered at n or later). A call without a result that
 * OPEN_CALL_TURNS human entries follow is not waiting: the conversation
 * moved on (an interrupted tool), and it is compressed with its range as
 * any unpaired call is (docs/design.md, "Tool calls still waiting").
 * *open: the range was cut by a waiting call. */
static ctxc_status_t job_range(ctxc_session_t *s, size_t *out, bool *open,
                               ctxc_error_t *err) {
    const ctxc_history_t *h = s->history;
    size_t n = h->count;
    *open = false;
    for (size_t i = 0; i < n; i++) {
        ctxc_entry_t e;
        (void)ctxc_history_get(h, i, &e);
        if (e.speaker != CTXC_SPEAKER_AI) {
            continue;
        }
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type == CTXC_BLOCK_TOOL_CALL &&
                !answered(h, i, b.u.tool_call.id) && !abandoned(h, i)) {
                n = i; /* a waiting call: it and what follows stay out */
                *open = true;
                break;
            }
        }
    }
    ctxc_view_t raw;
    ctxc_status_t r = ctxc_view_init(&raw, h, CTXC_VIEW_RAW, s->work->map,
                                     s->work->cap, err);
    ctxc_boundary_t bd;
    if (r == CTXC_OK) {
        ctxc_work_t *w = s->work;
        r = ctxc_boundary_init(&bd, &raw, w->boundary, w->cap + 1u, w->index,
                               w->index != NULL
                                   ? 2u * w->index_slots *
                                         CTXC_WORK_INDEX_SLOT_BYTES
                                   : 0u,
                               err);
    }
    if (r == CTXC_OK) {
        *out = ctxc_boundary_backward(&bd, n);
    }
    return r;
}

/* The job ends: the range unfrozen, nothing in progress. */
static void job_end(ctxc_session_t *s) {
    ctxc_session_job_t *j = &s->job_;
    if (j->state == JOB_CALL && j->llm.call && j->llm.llm != NULL &&
        j->llm.llm->cancel != NULL) {
        j->llm.llm->cancel(j->llm.llm);
    }
    if (s->history->gen_ == j->gen) {
        s->history->frozen_ = 0;
    }
    j->state = JOB_NONE;
    j->llm.call = false;
}

static ctxc_status_t job_start(ctxc_session_t *s, ctxc_error_t *err) {
    ctxc_session_job_t *j = &s->job_;
    if (s->locked_ || j->state != JOB_NONE) {
        return ctxc__fail(err, CTXC_E_BUSY, "a compression is in progress");
    }
    const ctxc_strategy_t *st;
    ctxc_status_t r = find_strategy(s, &st, err);
    if (r == CTXC_OK) {
        r = compress_checks(s, st, err);
    }
    size_t n = 0;
    bool open = false;
    if (r == CTXC_OK) {
        r = job_range(s, &n, &open, err);
    }
    if (r == CTXC_OK) {
        r = build_ctx(s, st, &j->ctx, n, err);
    }
    if (r != CTXC_OK) {
        return r;
    }
    j->strategy = st;
    j->snapshot = n;
    j->open = open;
    j->gen = s->history->gen_;
    j->t0 = ctxc_port_now_ms(s->port);
    ctxc_plan_init(&j->plan, s->work);
    j->plan.meta.trigger = triggers(s, st, 0);
    memset(&j->llm, 0, sizeof j->llm);
    s->locked_ = true;
#if LLM_STRATEGIES_
    if (st->requires_llm) {
        r = ctxc__llm_begin(&j->ctx, st->id, &j->plan, &j->llm, err);
        if (r == CTXC_OK && j->llm.call && j->llm.llm->start != NULL &&
            j->llm.llm->step != NULL) {
            r = j->llm.llm->start(j->llm.llm, &j->llm.request, j->llm.answer,
                                  j->llm.answer_cap, err);
            if (r == CTXC_E_IN_PROGRESS) {
                r = CTXC_OK;
            } else if (r != CTXC_OK) {
                j->llm.call = false; /* the call has ended already */
            }
        }
    } else
#endif
    {
        r = st->compress(&j->ctx, &j->plan, err);
    }
    s->locked_ = false;
    if (r != CTXC_OK) {
        log_result(s, st, &j->plan, r);
        return r;
    }
    j->state = j->llm.call ? JOB_CALL : JOB_READY;
    s->history->frozen_ = n;
    ctxc_port_log(s->port, CTXC_LOG_INFO,
                  "compression job with %s started over entries [0, %z) of "
                  "%z",
                  st->name, n, s->history->count);
    return CTXC_OK;
}

/* The plan over [0, n), then every entry appended since, applied. */
static ctxc_status_t job_apply(ctxc_session_t *s, ctxc_error_t *err) {
    ctxc_session_job_t *j = &s->job_;
    ctxc_plan_t *plan = &j->plan;
    size_t n = j->snapshot;
    size_t count = s->history->count;
    ctxc_status_t r = CTXC_OK;
    if (count > n) {
        ctxc_plan_op_t *last = plan->count > 0 ? &plan->ops[plan->count - 1]
                                               : NULL;
        if (last != NULL && last->kind == CTXC_PLAN_KEEP && last->to == n) {
            last->to = (uint32_t)count;
        } else {
            r = ctxc_plan_keep(plan, n, count, err);
        }
    }
    s->history->frozen_ = 0;
    plan->meta.entries_before = count;
    plan->meta.bytes_before = s->history->used;
    if (plan->meta.unchanged && j->open) {
        plan->meta.unchanged_reason =
            "the job's range ends before a tool call still waiting for its "
            "result: too little before it to compress";
    }
    if (r == CTXC_OK) {
        s->locked_ = true;
        r = ctxc_history_apply_plan(s->history, plan, err);
        s->locked_ = false;
    }
    if (r != CTXC_OK) {
        s->history->frozen_ = n; /* job_end unfreezes */
    }
    return r;
}

static ctxc_status_t job_poll(ctxc_session_t *s, ctxc_error_t *err) {
    ctxc_session_job_t *j = &s->job_;
    if (j->state == JOB_NONE) {
        return CTXC_E_IDLE; /* nothing to do: not a failure, err untouched */
    }
    if (s->history->gen_ != j->gen) {
        job_end(s);
        return ctxc__fail(err, CTXC_E_CANCELLED,
                          "compression job cancelled: the history was "
                          "cleared while it ran");
    }
    ctxc_status_t r = CTXC_OK;
#if LLM_STRATEGIES_
    if (j->state == JOB_CALL) {
        const ctxc_llm_t *llm = j->llm.llm;
        if (llm->step != NULL && llm->start != NULL) {
            r = llm->step(llm, &j->llm.len, &j->llm.usage, err);
            if (r == CTXC_E_IN_PROGRESS) {
                return r;
            }
        } else { /* a model without steps: the whole call in this poll */
            r = llm->complete(llm, &j->llm.request, j->llm.answer,
                              j->llm.answer_cap, &j->llm.len, &j->llm.usage,
                              err);
        }
        s->locked_ = true;
        r = ctxc__llm_end(&j->ctx, &j->plan, &j->llm, r, err);
        s->locked_ = false;
        if (r == CTXC_OK && j->llm.call) {
            /* the fact check (compression.factCheck retry): a second
             * summary call naming what the first answer left out, made by
             * the job as the first was */
            ctxc_port_log(s->port, CTXC_LOG_INFO,
                          "compression job with %s: the summary lacks facts "
                          "of its range; asking the model once more",
                          j->strategy->name);
            if (llm->step != NULL && llm->start != NULL) {
                r = llm->start(llm, &j->llm.request, j->llm.answer,
                               j->llm.answer_cap, err);
                if (r == CTXC_OK || r == CTXC_E_IN_PROGRESS) {
                    return CTXC_E_IN_PROGRESS; /* still JOB_CALL */
                }
                j->llm.call = false; /* the call has ended already */
            } else {
                r = llm->complete(llm, &j->llm.request, j->llm.answer,
                                  j->llm.answer_cap, &j->llm.len,
                                  &j->llm.usage, err);
                s->locked_ = true;
                r = ctxc__llm_end(&j->ctx, &j->plan, &j->llm, r, err);
                s->locked_ = false;
            }
        }
        j->state = JOB_READY;
    }
#endif
    if (r == CTXC_OK) {
        r = job_apply(s, err);
    }
    s->last_compress_ms = ctxc_port_now_ms(s->port) - j->t0;
    log_result(s, j->strategy, &j->plan, r);
    job_end(s);
    if (r == CTXC_OK) {
        job_succeeded(s);
    } else {
        job_failed(s, r);
    }
    return r;
}

ctxc_status_t ctxc_session_compress_start(ctxc_session_t *s,
                                          ctxc_error_t *err) {
    if (s == NULL || s->history == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "session is NULL");
    }
    lock(s);
    ctxc_status_t r = job_start(s, err);
    unlock(s);
    return r;
}

ctxc_status_t ctxc_session_poll(ctxc_session_t *s, ctxc_error_t *err) {
    if (s == NULL || s->history == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "session is NULL");
    }
    lock(s);
    ctxc_status_t r = job_poll(s, err);
    unlock(s);
    return r;
}

void ctxc_session_compress_cancel(ctxc_session_t *s) {
    if (s == NULL || s->history == NULL) {
        return;
    }
    lock(s);
    if (s->job_.state != JOB_NONE) {
        ctxc_port_log(s->port, CTXC_LOG_INFO,
                      "compression job with %s cancelled",
                      s->job_.strategy->name);
        job_end(s);
    }
    unlock(s);
}

bool ctxc_session_job_active(const ctxc_session_t *s) {
    return s != NULL && s->job_.state != JOB_NONE;
}

ctxc_poll_due_t ctxc_session_poll_due(const ctxc_session_t *s, uint32_t *ms) {
    uint32_t local;
    if (ms == NULL) {
        ms = &local;
    }
    *ms = 0;
    if (!ctxc_session_job_active(s)) {
        return CTXC_POLL_IDLE;
    }
    const ctxc_session_job_t *j = &s->job_;
    if (j->state != JOB_CALL || !j->llm.call || j->llm.llm == NULL ||
        j->llm.llm->due_ms == NULL || j->llm.llm->step == NULL) {
        return CTXC_POLL_NOW; /* a plan to apply, or a model without steps */
    }
    uint32_t d = j->llm.llm->due_ms(j->llm.llm);
    if (d == CTXC_LLM_DUE_NETWORK) {
        return CTXC_POLL_ON_NETWORK;
    }
    *ms = d;
    return d == 0 ? CTXC_POLL_NOW : CTXC_POLL_AFTER;
}
