/*
 * ctxc — one call to a working session (ctxc/setup.h): the settings store,
 * the session, the port, the model, the strategy and the context limit,
 * in that order, and the session's own check at the end. Every step is a
 * public call; on an error the ones already made are undone.
 *
 * A file of its own: an image that wires its session by hand does not
 * link it, and it is the only caller of the provider binding that the
 * library has (only in a build with an LLM strategy).
 */
#include <stddef.h>

#include "ctxc/setup.h"
#include "error.h"

#define SETUP_LLM (CTXC_CFG_STRATEGY_MIDDLE_OUT || CTXC_CFG_STRATEGY_ONE_SHOT)

static ctxc_status_t check_cfg(const ctxc_session_t *s,
                               const ctxc_session_setup_t *cfg,
                               ctxc_error_t *err) {
    if (s == NULL || cfg == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "session setup: NULL session or configuration");
    }
    if (cfg->history == NULL || cfg->work == NULL || cfg->settings == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "session setup: %s is NULL (history, work and "
                          "settings are required)",
                          cfg->history == NULL ? "history"
                          : cfg->work == NULL  ? "work"
                                               : "settings");
    }
    if ((cfg->provider_client == NULL) != (cfg->provider_binding == NULL)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "session setup: provider_client and "
                          "provider_binding go together");
    }
    if (cfg->provider_client != NULL && cfg->llm_resolver != NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "session setup: a provider or an llm_resolver, "
                          "not both");
    }
#if !SETUP_LLM
    if (cfg->provider_client != NULL || cfg->llm_resolver != NULL) {
        return ctxc__fail(err, CTXC_E_UNAVAILABLE,
                          "session setup: a model is given but this build "
                          "has no LLM strategy (CTXC_CFG_STRATEGY_MIDDLE_OUT "
                          "and CTXC_CFG_STRATEGY_ONE_SHOT are 0)");
    }
#endif
    return CTXC_OK;
}

/* The steps after the session's init; any error is the caller's to undo. */
static ctxc_status_t wire(ctxc_session_t *s, const ctxc_session_setup_t *cfg,
                          ctxc_error_t *err) {
    ctxc_status_t st;
    if (cfg->port != NULL) {
        ctxc_session_set_port(s, cfg->port);
    }
#if SETUP_LLM
    if (cfg->provider_client != NULL) {
        ctxc_provider_bind(cfg->provider_binding, cfg->provider_client,
                           cfg->settings, cfg->port, !cfg->provider_no_stream);
        ctxc_session_set_llm_resolver(s, ctxc_provider_resolve,
                                      cfg->provider_binding);
    } else if (cfg->llm_resolver != NULL) {
        ctxc_session_set_llm_resolver(s, cfg->llm_resolver, cfg->llm_user);
    }
#endif
    if (cfg->strategy != NULL) {
        st = ctxc_settings_set_enum(cfg->settings,
                                    CTXC_SETTING_COMPRESSION_STRATEGY,
                                    cfg->strategy, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "session setup: strategy");
            return st;
        }
    }
    if (cfg->context_limit != 0) {
        st = ctxc_settings_set_u32(cfg->settings, CTXC_SETTING_CONTEXT_LIMIT,
                                   cfg->context_limit, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "session setup: context_limit");
            return st;
        }
    }
    st = ctxc_session_check(s, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "session setup");
    }
    return st;
}

ctxc_status_t ctxc_session_setup(ctxc_session_t *s,
                                 const ctxc_session_setup_t *cfg,
                                 ctxc_error_t *err) {
    ctxc_status_t st = check_cfg(s, cfg, err);
    if (st != CTXC_OK) {
        return st;
    }
    const ctxc_fs_t *fs =
        cfg->port != NULL && cfg->port->fs.ops != NULL ? &cfg->port->fs : NULL;
    ctxc_settings_init(cfg->settings, fs);
#if CTXC_CFG_SETTINGS_FILE_BYTES > 0 /* else no settings file: nothing read */
    if (fs != NULL) {
        st = ctxc_settings_load(cfg->settings, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "session setup");
            ctxc_settings_init(cfg->settings, fs);
            return st;
        }
    }
#endif
    st = ctxc_session_init(s, cfg->history, cfg->work, cfg->settings, err);
    if (st == CTXC_OK) {
        st = wire(s, cfg, err);
        if (st != CTXC_OK) {
            ctxc_session_deinit(s);
        }
    } else {
        ctxc__err_prefix(err, "session setup");
    }
    if (st != CTXC_OK) {
        ctxc_settings_init(cfg->settings, fs);
    }
    return st;
}
