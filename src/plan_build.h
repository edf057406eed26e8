/*
 * ctxc — building plans and density results from entry sources, and
 * editing an existing entry into a new one (private header; plan.c).
 */
#ifndef CTXC_PLAN_BUILD_H
#define CTXC_PLAN_BUILD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/strategy.h"
#include "record.h"

/* An entry source that yields the blocks of an existing entry, each passed
 * through `edit` (which may change fields or return false to drop the
 * block). Fields are handed on as CTXC__SRC_VALID (copied, not checked):
 * an edit sets only valid UTF-8 strings and canonical JSON values. */
typedef bool (*ctxc__block_edit_fn)(void *user, size_t index, ctxc_block_t *b);
typedef struct {
    const ctxc_entry_t *entry;
    ctxc__block_edit_fn edit; /* NULL: blocks unchanged */
    void *user;
    /* optional: the default estimate of each source block as the edit
     * leaves it (UINT32_MAX: not known), taken by the record writer instead
     * of counting the block again; NULL: none known */
    const uint32_t *tokens;
    size_t ntokens;
    /* iteration cache */
    const uint8_t *cur;
    size_t next_src; /* source block index of cur */
    size_t next_out; /* output index expected next */
} ctxc__entry_edit_t;

/* Number of blocks the edit keeps. */
size_t ctxc__entry_edit_count(ctxc__entry_edit_t *ed);
/* ctxc__block_fn over a ctxc__entry_edit_t. */
ctxc_status_t ctxc__entry_edit_block(void *ctx, size_t i,
                                     ctxc__block_src_t *out, ctxc_error_t *err);

/* ---- plans and density results (plan.c) ---------------------------------- */

ctxc_status_t ctxc__plan_insert_src(ctxc_plan_t *plan,
                                    const ctxc__entry_src_t *src,
                                    ctxc_estimate_fn est, void *user,
                                    uint32_t replaces, ctxc_error_t *err);
/* Notes that one more INSERT op was counted with `est` (NULL: the default
 * estimator) in a plan's or density result's counted_ fields. */
void ctxc__note_counted(ctxc_estimate_fn *fn, void **user, size_t *count,
                        ctxc_estimate_fn est, void *est_user);
void ctxc__density_init(ctxc_density_result_t *r, ctxc_work_t *work);
/* A removal / a replacement of entry `index`. CTXC_E_NO_SPACE when the
 * result holds its maximum (work->cap of each): err->needed = 1 is a lower
 * bound (the step does not know how many more it would have added); a
 * replacement's scratch shortfall is exact (bytes). */
ctxc_status_t ctxc__density_remove(ctxc_density_result_t *r, size_t index,
                                   ctxc_error_t *err);
ctxc_status_t ctxc__density_replace(ctxc_density_result_t *r, size_t index,
                                    const ctxc__entry_src_t *src,
                                    ctxc_estimate_fn est, void *user,
                                    ctxc_error_t *err);

#endif /* CTXC_PLAN_BUILD_H */
