/** @file
 * ctxc — context compression core. Umbrella header: includes every public
 * header of the library (history, codec, strategies, plans, session,
 * settings, prompts, port, HTTP client, providers), so that an application
 * needs only `#include "ctxc/ctxc.h"`.
 */
/** @mainpage ctxc API reference
 *
 * ctxc keeps an LLM agent's conversation history in fixed, caller-owned
 * memory and compresses it before it overflows the model's context window.
 * This reference is generated from the public headers, one module each:
 *
 * - @ref session.h "session.h": the dispatcher an application calls around its model calls
 *   (start here: ctxc_session_init(), ctxc_session_add(),
 *   ctxc_session_before_send());
 * - @ref setup.h "setup.h": one call to a working session
 *   (ctxc_session_setup());
 * - @ref history.h "history.h": the history store in caller memory, views, statistics;
 * - @ref jsonl.h "jsonl.h": the JSON Lines codec (import, canonical export);
 * - @ref estimate.h "estimate.h": the token estimator;
 * - @ref strategy.h "strategy.h" and @ref plan.h "plan.h": the strategies, the work area, plans, density
 *   results and tool-call boundaries;
 * - @ref settings.h "settings.h": the settings registry, layers, profiles and commands;
 * - @ref prompt.h "prompt.h" and @ref todo.h "todo.h": the summary prompts and the agent's todos;
 * - @ref llm.h "llm.h", @ref provider.h "provider.h" and @ref http.h "http.h": the summariser call, the providers and
 *   the HTTP/1.1 + SSE client;
 * - @ref port.h "port.h": what the library needs from the platform;
 * - @ref status.h "status.h": status codes and the error details every call can fill;
 * - @ref ctxc_config_defaults.h "ctxc_config_defaults.h" and @ref config_guard.h "config_guard.h": the compile-time options and
 *   the link-time check that library and application agree on them.
 *
 * The topic documents (design, configuration, porting, strategies and
 * providers, footprint, testing) are in the repository's docs/ folder.
 * Names ending in `_` and names starting with `ctxc__` / `CTXC__` are
 * private and left out of this reference.
 */
#ifndef CTXC_H
#define CTXC_H

#include "ctxc/ctxc_config_defaults.h"
#include "ctxc/estimate.h"
#include "ctxc/history.h"
#include "ctxc/http.h"
#include "ctxc/llm.h"
#include "ctxc/todo.h"
#include "ctxc/jsonl.h"
#include "ctxc/plan.h"
#include "ctxc/provider.h"
#include "ctxc/session.h"
#include "ctxc/settings.h"
#include "ctxc/setup.h"
#include "ctxc/spill.h"
#include "ctxc/status.h"
#include "ctxc/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Library version, from project.yml (e.g. "0.1.0"). */
const char *ctxc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_H */
