/*
 * ctxc — context compression core. Umbrella header.
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
#include "ctxc/spill.h"
#include "ctxc/status.h"
#include "ctxc/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Library version, from project.yml (e.g. "0.1.0"). */
const char *ctxc_version(void);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_H */
