/*
 * ctxc — a work area over caller memory (ctxc_work_init, see
 * include/ctxc/strategy.h): the arrays CTXC_WORK_DEFINE declares, carved
 * from one block in the order of CTXC_WORK_BYTES.
 */
#include <stdint.h>

#include "ctxc/strategy.h"
#include "error.h"

/* Takes n bytes (rounded up to 8) from *p. */
static void *take(uint8_t **p, size_t n) {
    void *r = *p;
    *p += (n + 7u) & ~(size_t)7u;
    return r;
}

ctxc_status_t ctxc_work_init(ctxc_work_t *w, size_t max_entries,
                             size_t scratch_bytes, void *mem, size_t bytes,
                             ctxc_error_t *err) {
    if (w == NULL || mem == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "work area: NULL argument");
    }
    if (max_entries < 1u || max_entries > 65535u) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "work area: max_entries must be 1..65535 (got %z)",
                          max_entries);
    }
    if (scratch_bytes < 256u || scratch_bytes > 0x7FFFFFFFu) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "work area: scratch_bytes must be 256 .. 2^31-1 "
                          "(got %z)",
                          scratch_bytes);
    }
    size_t need = CTXC_WORK_BYTES(max_entries, scratch_bytes);
    if (bytes < need) {
        return ctxc__fail_space(err, need - bytes,
                                "work area: %z bytes given, %z needed for %z "
                                "entries and %z bytes of scratch",
                                bytes, need, max_entries, scratch_bytes);
    }
    uint8_t *p = mem;
    p += (8u - ((uintptr_t)p & 7u)) & 7u;
    size_t cap = max_entries;
    size_t slots = CTXC_WORK_INDEX_SLOTS(max_entries);
    ctxc_plan_op_t *ops = take(&p, (3u * cap + 2u) * sizeof(ctxc_plan_op_t));
    w->ops = ops;
    w->replacements = ops + 2u * cap + 2u;
    w->scratch = take(&p, scratch_bytes);
    w->scratch_cap = scratch_bytes;
    w->index = take(&p, 2u * slots * CTXC_WORK_INDEX_SLOT_BYTES);
    w->index_slots = slots;
    w->removals = take(&p, 4u * cap);
    uint16_t *u16 = take(&p, 2u * (3u * cap + 1u));
    w->map = u16;
    w->boundary = u16 + cap;
    w->marks = u16 + 2u * cap + 1u;
    w->cap = cap;
    return CTXC_OK;
}
