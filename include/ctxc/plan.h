/** @file
 * ctxc — building plans and density results and applying them to a history
 * (the types are in ctxc/strategy.h: a strategy's compress() writes a plan,
 * its optimize() a density result).
 *
 * Application is atomic: every check (ranges, room, the pairing rule of
 * tool calls and responses) happens before the first byte moves; on any
 * error the history is byte-for-byte as it was.
 */
#ifndef CTXC_PLAN_H
#define CTXC_PLAN_H

#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/status.h"
#include "ctxc/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Empty plan over the work area. */
void ctxc_plan_init(ctxc_plan_t *plan, ctxc_work_t *work);
/** Appends KEEP [from, to) (store indexes; merged with a preceding adjacent
 * KEEP). Errors: CTXC_E_NO_SPACE (the plan holds its maximum of
 * 2 x work->cap + 2 ops; err->needed = 1 is a lower bound: the ops the
 * caller still means to add are not known here), CTXC_E_INVALID_ARG (not
 * increasing). */
ctxc_status_t ctxc_plan_keep(ctxc_plan_t *plan, size_t from, size_t to,
                             ctxc_error_t *err);
/** Appends an inserted entry (validated and written into the scratch area;
 * its estimate computed with `estimate`). `replaces` is the store index it
 * stands in for, or UINT32_MAX for a synthetic entry. Errors:
 * CTXC_E_NO_SPACE (the plan is full: err->needed = 1, a lower bound as for
 * ctxc_plan_keep; the scratch area is full: err->needed = the bytes this
 * entry is missing), and the entry's own errors (CTXC_E_INVALID_ARG,
 * CTXC_E_UTF8, CTXC_E_PARSE, ...). */
ctxc_status_t ctxc_plan_insert(ctxc_plan_t *plan, const ctxc_entry_in_t *in,
                               ctxc_estimate_fn estimate, void *user,
                               uint32_t replaces, ctxc_error_t *err);

/** Applies a plan to the history. All checks happen first; on any error the
 * history is unchanged. Errors: CTXC_E_INVALID_ARG (ops out of order or out
 * of range; a KEEP that keeps one side of a tool call / response pair
 * without the other; an INSERT with tool blocks not taken from the entry it
 * replaces), CTXC_E_NO_SPACE (the new history does not fit; err->needed). */
ctxc_status_t ctxc_history_apply_plan(ctxc_history_t *h,
                                      const ctxc_plan_t *plan,
                                      ctxc_error_t *err);

/** Validates a density result against a history of `count` entries: every
 * index in range, none listed twice, none both removed and replaced. `mark`
 * (count elements of caller memory) receives one mark per entry; O(count).
 * Errors: CTXC_E_RANGE, CTXC_E_INVALID_ARG. */
ctxc_status_t ctxc_density_validate(const ctxc_density_result_t *r,
                                    size_t count, uint16_t *mark,
                                    ctxc_error_t *err);
/** Validates, then applies: replacements first, removals from the highest
 * index down (as one atomic step), tokens recounted. Uses work->ops and
 * work->marks. On error nothing is applied. CTXC_E_NO_SPACE: the work area
 * holds fewer entries than the history (err->needed = the entries missing),
 * or the plan it builds is full (err->needed = 1, a lower bound), or the new
 * history does not fit (as ctxc_history_apply_plan). */
ctxc_status_t ctxc_density_apply(ctxc_history_t *h,
                                 const ctxc_density_result_t *r,
                                 ctxc_work_t *work, ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_PLAN_H */
