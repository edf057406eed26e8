/*
 * ctxc — the store's pairing rule for tool calls and responses (private
 * header; pairing.c).
 */
#ifndef CTXC_PAIRING_H
#define CTXC_PAIRING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/strategy.h"
#include "record.h"

/* ---- pairing rule of the store (pairing.c) --------------------------------
 */

/* Checks that putting `src` at `pos` (appending: pos == count) keeps the
 * pairing rule: tool_call only in ai entries, tool_response only in tool
 * entries, each call id used by one call and one response at most, the
 * response after its call. Errors: CTXC_E_INVALID_ARG naming the block. */
ctxc_status_t ctxc__pairing_check_put(ctxc_history_t *h, size_t pos,
                                      bool replace,
                                      const ctxc__entry_src_t *src,
                                      ctxc_error_t *err);
/* Checks that a plan keeps both sides of every pair or neither, and that
 * its inserted entries carry only tool blocks of the entry they replace. */
ctxc_status_t ctxc__pairing_check_plan(ctxc_history_t *h,
                                       const ctxc_plan_t *plan,
                                       ctxc_error_t *err);
/* Adds the unpaired calls and responses to *calls / *responses using the
 * history's id index (each id: at most one call and one response, the
 * response later); false, adding nothing, without a usable index. */
bool ctxc__pairing_unpaired(const ctxc_history_t *h, size_t *calls,
                            size_t *responses);
/* Index maintenance: after an append / after any other change. */
void ctxc__pairing_appended(ctxc_history_t *h);
void ctxc__pairing_stale(ctxc_history_t *h);

#endif /* CTXC_PAIRING_H */
