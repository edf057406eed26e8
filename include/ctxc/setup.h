/** @file
 * ctxc — one call to a working session: the history, the work area, the
 * settings store, the port and (in a build with an LLM strategy) the
 * provider, wired in the order the library needs.
 *
 *     CTXC_HISTORY_DEFINE_DEFAULT(history);
 *     CTXC_WORK_DEFINE_DEFAULT(work);
 *     static ctxc_settings_store_t settings;
 *     static ctxc_session_t session;
 *
 *     ctxc_session_setup_t cfg = {0};
 *     cfg.history = &history;
 *     cfg.work = &work;
 *     cfg.settings = &settings;
 *     cfg.strategy = "top-down-truncation";
 *     cfg.context_limit = 8000;
 *     ctxc_status_t st = ctxc_session_setup(&session, &cfg, &err);
 *
 * What is read once and what is read live: the session reads every
 * setting through the store at each call, so a value set after the setup
 * (ctxc_settings_set_u32(), /set, a profile) applies to the next step, the
 * provider's (provider, model, base-url, compression.retries,
 * network.read-timeout-ms, network.call-deadline-ms) included: the
 * provider binding reads them at each summary call. What a port's
 * transport copied when the application set it up (the POSIX transport's
 * network.ca-file and network.connect-timeout-ms,
 * ctxc_posix_transport_config()) stays as it was until the application
 * sets the transport up again; the setup does not touch the transport.
 */
#ifndef CTXC_SETUP_H
#define CTXC_SETUP_H

#include <stdbool.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/port.h"
#include "ctxc/provider.h"
#include "ctxc/session.h"
#include "ctxc/settings.h"
#include "ctxc/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** What ctxc_session_setup() wires. Zero-initialise it and set the fields
 * you need; every object pointed to is the caller's and must outlive the
 * session. */
typedef struct {
    ctxc_history_t *history; /**< required: the history store */
    ctxc_work_t *work; /**< required: the work area (at least the history's max_entries) */
    /** required: the settings store; the setup initialises it
     * (ctxc_settings_init() over the port's filesystem, then
     * ctxc_settings_load() when there is one and the build has a settings
     * file buffer, CTXC_CFG_SETTINGS_FILE_BYTES > 0), so values you want
     * on top are set after the setup */
    ctxc_settings_store_t *settings;
    const ctxc_port_t *port; /**< optional (NULL: no filesystem, clock, log, mutex or network) */
    /** optional: compression.strategy (ephemeral layer), set once the
     * model is wired; NULL keeps the settings file's or the default */
    const char *strategy;
    /** optional: context-limit in tokens (ephemeral layer); 0 keeps the
     * settings file's (the session check needs one) */
    uint32_t context_limit;
    /** optional, with provider_binding, in a build with middle-out or
     * one-shot: the model of the LLM strategies comes from the settings
     * (provider, model, base-url, auth-key-name of compression.profile or
     * those in force) through this client and port->transport
     * (ctxc_provider_bind() + ctxc_provider_resolve()) */
    ctxc_provider_client_t *provider_client;
    ctxc_provider_binding_t *provider_binding; /**< filled by the setup (see provider_client) */
    bool provider_no_stream; /**< true: never ask the provider for a streamed answer */
    /** optional, instead of the provider: your own model resolver
     * (ctxc_session_set_llm_resolver()) */
    ctxc_llm_resolver_fn llm_resolver;
    void *llm_user; /**< pointer handed to llm_resolver */
} ctxc_session_setup_t;

/** Wires a session from `cfg`, in this order: the settings store
 * (initialised over port->fs and settings.json read when the port has a
 * filesystem and the build a settings file buffer; a missing file is
 * fine), the session
 * (ctxc_session_init()), the port (ctxc_session_set_port()), the model
 * (the provider binding or cfg->llm_resolver: before the strategy, so
 * that middle-out and one-shot are accepted), then cfg->strategy and
 * cfg->context_limit, and last ctxc_session_check(): on CTXC_OK the
 * session compresses with the strategy in force.
 * On an error nothing is half-wired: the session is deinitialised
 * (ctxc_session_deinit()), the settings store is left empty (initialised
 * again, no guard on it), the history and the work area are untouched,
 * and err names the step. Errors: CTXC_E_INVALID_ARG (a required pointer
 * NULL, provider_client without provider_binding or with llm_resolver,
 * no context limit), CTXC_E_UNAVAILABLE (an LLM strategy without a model;
 * a provider in a build without an LLM strategy), CTXC_E_UNKNOWN_STRATEGY,
 * the errors of ctxc_settings_load() (an unusable settings.json), of
 * ctxc_session_init() and of the setters. */
ctxc_status_t ctxc_session_setup(ctxc_session_t *s,
                                 const ctxc_session_setup_t *cfg,
                                 ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_SETUP_H */
