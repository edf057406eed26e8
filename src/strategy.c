/*
 * ctxc — the strategy table and lookup, all expanded from
 * CTXC_STRATEGY_LIST.
 */
#include <string.h>

#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "strategies.h"

const char *const ctxc_on_limit_names[] = {"wait", "top-down-truncation",
                                           "high-density", NULL};
const char *const ctxc_fact_check_modes[4] = {"off", "append", "retry",
                                              NULL};

const char *const ctxc_strategy_names[CTXC_STRATEGY_COUNT + 1] = {
#define CTXC_STRATEGY_NAME_(id, cfg, name) name,
    CTXC_STRATEGY_LIST(CTXC_STRATEGY_NAME_)
#undef CTXC_STRATEGY_NAME_
        NULL};

/* What each strategy is, by id: requires_llm, trigger, compress, optimize.
 * The LLM strategies get their model through the context's llm_resolver
 * (without one they answer CTXC_E_UNAVAILABLE). */
#define CTXC__PROPS_MIDDLE_OUT                                                 \
    true, {CTXC_TRIGGER_THRESHOLD, CTXC_PERMILLE(0.85)}, ctxc__mo_compress, NULL
#define CTXC__PROPS_TOP_DOWN_TRUNCATION                                        \
    false, {CTXC_TRIGGER_THRESHOLD, CTXC_PERMILLE(0.85)}, ctxc__td_compress,   \
        NULL
#define CTXC__PROPS_ONE_SHOT                                                   \
    true, {CTXC_TRIGGER_THRESHOLD, CTXC_PERMILLE(0.85)}, ctxc__os_compress, NULL
#define CTXC__PROPS_HIGH_DENSITY                                               \
    false, {CTXC_TRIGGER_CONTINUOUS, CTXC_PERMILLE(0.85)}, ctxc__hd_compress,  \
        ctxc__hd_optimize

/* CTXC_CFG_STRATEGY_<NAME> is 0 or 1: an empty slot or the strategy. */
#define CTXC_CAT_(a, b) a##b
#define CTXC_CAT(a, b) CTXC_CAT_(a, b)
#define CTXC_IF_0(...)                                                         \
    { 0 }
#define CTXC_IF_1(...) __VA_ARGS__

static const ctxc_strategy_t table[CTXC_STRATEGY_COUNT] = {
#define CTXC_STRATEGY_ENTRY_(id, cfg, name)                                    \
    CTXC_CAT(CTXC_IF_, cfg)({CTXC_STRATEGY_##id, name, CTXC__PROPS_##id}),
    CTXC_STRATEGY_LIST(CTXC_STRATEGY_ENTRY_)
#undef CTXC_STRATEGY_ENTRY_
};

const ctxc_strategy_t *ctxc_strategy_get(ctxc_strategy_id_t id) {
    if ((unsigned)id >= (unsigned)CTXC_STRATEGY_COUNT ||
        table[id].name == NULL) {
        return NULL;
    }
    return &table[id];
}

ctxc_status_t ctxc_strategy_find(const char *name, const ctxc_strategy_t **out,
                                 ctxc_error_t *err) {
    if (name == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "strategy name is NULL");
    }
    for (size_t i = 0; i < CTXC_STRATEGY_COUNT; i++) {
        if (strcmp(name, ctxc_strategy_names[i]) == 0) {
            if (table[i].name == NULL) {
#define CTXC_STRATEGY_CFG_(id, cfg, name) #cfg,
                static const char *const cfg_names[] = {
                    CTXC_STRATEGY_LIST(CTXC_STRATEGY_CFG_)};
#undef CTXC_STRATEGY_CFG_
                return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                                  "strategy '%s' is left out of this build "
                                  "(%s = 0)",
                                  name, cfg_names[i]);
            }
            *out = &table[i];
            return CTXC_OK;
        }
    }
#define CTXC_STRATEGY_KNOWN_(id, cfg, name) " " name
    return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                      "unknown strategy %q (known:" CTXC_STRATEGY_LIST(
                          CTXC_STRATEGY_KNOWN_) ")",
                      name, strlen(name));
#undef CTXC_STRATEGY_KNOWN_
}
