/*
 * ctxc — the history store's own operations for the core (private header;
 * history.c): writing an entry from a source, and the step a plan
 * application ends with (committing a store rebuilt in place).
 */
#ifndef CTXC_STORE_H
#define CTXC_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "record.h"

/* Appends (index == SIZE_MAX) or replaces entry `index`. */
/* CTXC_E_BUSY: entry index lies in a compression job's range
 * (h->frozen_). */
ctxc_status_t ctxc__frozen(const ctxc_history_t *h, size_t index,
                           ctxc_error_t *err);

ctxc_status_t ctxc__history_put(ctxc_history_t *h, size_t index,
                                const ctxc__entry_src_t *src,
                                ctxc_error_t *err);

/* After the slots [0, count) and arena bytes [0, used) were rewritten in
 * place: takes them as the store, recounts the token sum, drops the anchor,
 * notes the high-water marks. */
void ctxc__store_commit(ctxc_history_t *h, size_t count, size_t used);

#endif /* CTXC_STORE_H */
