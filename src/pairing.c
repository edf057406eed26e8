/*
 * ctxc — the store's pairing rule for tool calls and tool responses.
 *
 * Rule (checked on every append and replace, and on every plan before it is
 * applied, so no path into the store can break it):
 *   - a tool_call lives in an ai entry, a tool_response in a tool entry;
 *   - a call id is used by at most one tool_call and answered by at most one
 *     tool_response;
 *   - a tool_response comes after its tool_call (a later entry).
 * A call with no response, or a response whose call is not in the store, is
 * allowed ("unpaired"); strategies never create new ones: a plan that keeps
 * one side of a pair without the other is refused.
 *
 * Lookups go through the history's optional id index (a cache, rebuilt when
 * a change other than an append made it stale); without one, or when it is
 * too small, they scan the store.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "id_index.h"
#include "json.h"
#include "pairing.h"
#include "record.h"

enum { IDS_STALE = 0, IDS_VALID = 1, IDS_FULL = 2 };

/* New tool blocks are checked in chunks of this many per store scan. */
#define CHUNK 8u

/* ---- ids of entry sources ------------------------------------------------ */

/* ctxc__ids_hash of the decoded id (one pass; the length goes in last). */
static uint32_t src_hash(const ctxc__src_t *f) {
    if (f->kind != CTXC__SRC_JSTR) { /* the bytes are the id */
        ctxc_str_t s = {f->p, f->n};
        return ctxc__ids_hash(s);
    }
    ctxc__ids_hasher_t hs;
    ctxc__ids_hash_start(&hs);
    size_t len = 0;
    ctxc__cp_iter_t it = {f->p, f->n, 0, f->kind};
    uint32_t cp;
    while (ctxc__cp_next(&it, &cp, NULL) > 0) {
        char b[4];
        size_t k = ctxc__utf8_encode(cp, b);
        len += k;
        ctxc__ids_hash_feed(&hs, b, k);
    }
    return ctxc__ids_hash_end(&hs, len);
}

static bool src_eq(const ctxc__src_t *f, ctxc_str_t s) {
    return ctxc__src_equals(f->p, f->n, f->kind, s.ptr, s.len);
}

static bool src_eq_src(const ctxc__src_t *a, const ctxc__src_t *b) {
    if (a->kind != CTXC__SRC_JSTR && b->kind != CTXC__SRC_JSTR) {
        return a->n == b->n && (a->n == 0 || memcmp(a->p, b->p, a->n) == 0);
    }
    ctxc__cp_iter_t x = {a->p, a->n, 0, a->kind};
    ctxc__cp_iter_t y = {b->p, b->n, 0, b->kind};
    for (;;) {
        uint32_t c1 = 0, c2 = 0;
        int r1 = ctxc__cp_next(&x, &c1, NULL);
        int r2 = ctxc__cp_next(&y, &c2, NULL);
        if (r1 != r2 || c1 != c2) {
            return false;
        }
        if (r1 <= 0) {
            return r1 == 0;
        }
    }
}

static const char *a_speaker(ctxc_speaker_t sp) {
    static const char *const names[] = {"a human", "an ai", "a tool"};
    return (unsigned)sp < 3u ? names[sp] : "an unknown";
}

static bool is_tool_block(ctxc_block_type_t t) {
    return t == CTXC_BLOCK_TOOL_CALL || t == CTXC_BLOCK_TOOL_RESPONSE;
}

/* Entry i (< h->count) of the store, read from its record. */
static void entry_at(const ctxc_history_t *h, size_t i, ctxc_entry_t *e) {
    ctxc__record_entry(h->arena + h->slots[i].offset, &h->slots[i], e);
}

/* Like ctxc_entry_next_block, over the tool_call and tool_response blocks
 * only. */
static bool next_tool_block(const ctxc_entry_t *e, const uint8_t **cur,
                            ctxc_block_t *b) {
    while (ctxc_entry_next_block(e, cur, b)) {
        if (is_tool_block(b->type)) {
            return true;
        }
    }
    return false;
}

/* Whether `e` holds a block of `type` whose id equals `id`. */
CTXC__NOINLINE static bool entry_has(const ctxc_entry_t *e,
                                     ctxc_block_type_t type, ctxc_str_t id) {
    size_t k;
    ctxc_block_t b;
    return ctxc__ids_in_entry(e, type, id, &k, &b);
}

/* ---- the index cache ----------------------------------------------------- */

/* The whole store as a view (what the index's positions refer to). */
CTXC__NOINLINE static void store_view(const ctxc_history_t *h, ctxc_view_t *v) {
    v->slots_ = h->slots;
    v->arena_ = h->arena;
    v->map = NULL;
    v->count = h->count;
    v->store_count = h->count;
}

/* Adds the tool blocks of the store's entries [from, to) to the index.
 * False when it is full. */
CTXC__NOINLINE static bool index_entries(const ctxc_history_t *h,
                                         ctxc__id_index_t *ix, size_t from,
                                         size_t to) {
    ctxc_view_t all;
    store_view(h, &all);
    ctxc__ids_at_t at = {&all, NULL};
    return ctxc__ids_add_entries(ix, &at, from, to);
}

/* Bytes of a table of `cap` slots (what ctxc__ids_attach needs to find the
 * same table again, alignment included). */
static size_t cap_bytes(size_t cap) {
    return cap * sizeof(ctxc__id_slot_t) + 3u;
}

/* Builds the index over the whole store, first with room for `want` ids,
 * then twice that until it fits or the memory is used up (then FULL). */
static bool build_index(ctxc_history_t *h, ctxc__id_index_t *ix, size_t want) {
    ctxc__id_index_t all;
    ctxc__ids_attach(&all, h->ids_mem_, h->ids_bytes_, 0);
    for (;;) {
        ctxc__ids_init_for(ix, h->ids_mem_, h->ids_bytes_, want);
        if (index_entries(h, ix, 0, h->count)) {
            h->ids_cap_ = ix->cap;
            h->ids_used_ = ix->used;
            h->ids_state_ = IDS_VALID;
            return true;
        }
        if (ix->cap >= all.cap) {
            h->ids_state_ = IDS_FULL;
            return false;
        }
        want = ix->cap * 2;
    }
}

/* A usable index over the whole store, or NULL (then scan). The table
 * starts at the size the store's blocks ask for, not at all the memory:
 * clearing costs its size. */
static ctxc__id_index_t *usable_index(ctxc_history_t *h, ctxc__id_index_t *ix) {
    if (h->ids_mem_ == NULL || h->ids_state_ == IDS_FULL) {
        return NULL;
    }
    if (h->ids_state_ == IDS_VALID) {
        ctxc__ids_attach(ix, h->ids_mem_, cap_bytes(h->ids_cap_), h->ids_used_);
        return ix;
    }
    size_t blocks = 0;
    for (size_t i = 0; i < h->count; i++) {
        blocks += h->slots[i].block_count;
    }
    return build_index(h, ix, blocks) ? ix : NULL;
}

/* ---- the id filter (ctxc_history_set_id_filter) ---------------------------
 * A Bloom filter of (type, id) of every tool block in the store, two
 * probes a key. An append's pairing check reads the store only when one
 * of its ids may conflict: a call whose id is there as a call or a
 * response, a response whose id is there as a response. */

/* The filter's key of a (type, id hash). */
static uint32_t idf_key(ctxc_block_type_t type, uint32_t hash) {
    return hash ^ (type == CTXC_BLOCK_TOOL_CALL ? 0u : 0x85EBCA6Bu);
}

static void idf_add(ctxc_history_t *h, ctxc_block_type_t type,
                    uint32_t hash) {
    ctxc__bloom_add(h->idf_, h->idf_bytes_, idf_key(type, hash));
}

static bool idf_has(const ctxc_history_t *h, ctxc_block_type_t type,
                    uint32_t hash) {
    return ctxc__bloom_has(h->idf_, h->idf_bytes_, idf_key(type, hash));
}

/* Adds the tool blocks of entries [from, to). */
static void idf_entries(ctxc_history_t *h, size_t from, size_t to) {
    for (size_t i = from; i < to; i++) {
        if (h->slots[i].speaker == CTXC_SPEAKER_HUMAN) {
            continue;
        }
        ctxc_entry_t e;
        entry_at(h, i, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (next_tool_block(&e, &cur, &b)) {
            idf_add(h, b.type, ctxc__ids_hash(ctxc__ids_tool_id(&b)));
        }
    }
}

void ctxc_history_set_id_filter(ctxc_history_t *h, void *mem, size_t bytes) {
    h->idf_ = mem != NULL && bytes > 0 ? (uint8_t *)mem : NULL;
    h->idf_bytes_ = h->idf_ != NULL ? bytes : 0;
    h->idf_ok_ = false;
}

void ctxc__pairing_stale(ctxc_history_t *h) {
    h->ids_state_ = IDS_STALE;
    h->idf_ok_ = false;
    h->edits_++; /* every change but an append comes here */
}

void ctxc__pairing_appended(ctxc_history_t *h) {
    if (h->idf_ok_) {
        idf_entries(h, h->count - 1, h->count);
    }
    if (h->ids_mem_ == NULL || h->ids_state_ != IDS_VALID) {
        return;
    }
    ctxc__id_index_t ix;
    ctxc__ids_attach(&ix, h->ids_mem_, cap_bytes(h->ids_cap_), h->ids_used_);
    if (index_entries(h, &ix, h->count - 1, h->count)) {
        h->ids_used_ = ix.used;
    } else { /* a larger table, built again (amortised: it doubles) */
        (void)build_index(h, &ix, ix.cap * 2);
    }
}

bool ctxc__pairing_unpaired(const ctxc_history_t *ch, size_t *calls,
                            size_t *responses) {
    /* the index is a cache: building it does not change the history */
    ctxc_history_t *h = (ctxc_history_t *)(uintptr_t)ch;
    ctxc__id_index_t store_ix;
    const ctxc__id_index_t *ix = usable_index(h, &store_ix);
    if (ix == NULL) {
        return false;
    }
    for (size_t i = 0; i < ix->cap; i++) {
        const ctxc__id_slot_t *s = &ix->slots[i];
        *calls += s->call != CTXC__IDS_NONE && s->resp == CTXC__IDS_NONE;
        *responses += s->resp != CTXC__IDS_NONE && s->call == CTXC__IDS_NONE;
    }
    return true;
}

void ctxc_history_set_id_index(ctxc_history_t *h, void *mem, size_t bytes) {
    h->ids_mem_ = bytes > 0 ? mem : NULL;
    h->ids_bytes_ = mem != NULL ? bytes : 0;
    h->ids_used_ = 0;
    h->ids_state_ = IDS_STALE;
}

/* ---- checking a new entry ------------------------------------------------ */

typedef struct {
    ctxc__src_t id;
    uint32_t hash;
    uint16_t block; /* block index in the new entry */
    uint8_t type;   /* ctxc_block_type_t */
    uint32_t call;  /* store index of a tool_call with this id, or NONE */
    uint32_t resp;  /* store index of a tool_response, or NONE */
} new_id_t;

#define NONE UINT32_MAX

/* Fills call/resp of ids[0..n) by one pass over the store (skipping `skip`,
 * the entry being replaced). */
static void scan_store(const ctxc_history_t *h, size_t skip, new_id_t *ids,
                       size_t n) {
    for (size_t i = 0; i < h->count; i++) {
        if (i == skip || h->slots[i].speaker == CTXC_SPEAKER_HUMAN) {
            continue;
        }
        ctxc_entry_t e;
        entry_at(h, i, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (next_tool_block(&e, &cur, &b)) {
            ctxc_str_t id = ctxc__ids_tool_id(&b);
            uint32_t hash = ctxc__ids_hash(id);
            for (size_t k = 0; k < n; k++) {
                if (ids[k].hash == hash && src_eq(&ids[k].id, id)) {
                    *(b.type == CTXC_BLOCK_TOOL_CALL ? &ids[k].call
                                                     : &ids[k].resp) =
                        (uint32_t)i;
                }
            }
        }
    }
}

/* Fills call/resp of ids[0..n) from the index. */
static void lookup_index(const ctxc_history_t *h, const ctxc__id_index_t *ix,
                         size_t skip, new_id_t *ids, size_t n) {
    ctxc_view_t all;
    store_view(h, &all);
    for (size_t k = 0; k < n; k++) {
        ctxc__ids_at_t at = {&all, &ids[k].id};
        const ctxc__id_slot_t *s = ctxc__ids_find(
            ix, CTXC_STR_ABSENT, ids[k].hash, ctxc__ids_match_at, &at);
        if (s == NULL) {
            continue;
        }
        if (s->call != CTXC__IDS_NONE && s->call != skip) {
            ids[k].call = s->call;
        }
        if (s->resp != CTXC__IDS_NONE && s->resp != skip) {
            ids[k].resp = s->resp;
        }
    }
}

static ctxc_status_t dup_in_entry(size_t first, size_t second,
                                  const new_id_t *d, ctxc_error_t *err) {
    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                      "blocks %z and %z: two %ss with call id %q", first,
                      second, ctxc_block_type_name((ctxc_block_type_t)d->type),
                      d->id.p, d->id.n);
}

/* True when no id of ids[0..n) can conflict with the store (an append
 * then needs no scan); the filter is built first when it is stale. */
static bool idf_rules_out(ctxc_history_t *h, const new_id_t *ids, size_t n) {
    if (h->idf_ == NULL) {
        return false;
    }
    if (!h->idf_ok_) {
        memset(h->idf_, 0, h->idf_bytes_);
        idf_entries(h, 0, h->count);
        h->idf_ok_ = true;
    }
    for (size_t k = 0; k < n; k++) {
        if (idf_has(h, CTXC_BLOCK_TOOL_RESPONSE, ids[k].hash) ||
            (ids[k].type == CTXC_BLOCK_TOOL_CALL &&
             idf_has(h, CTXC_BLOCK_TOOL_CALL, ids[k].hash))) {
            return false;
        }
    }
    return true;
}

/* Checks ids[0..n) (the tool blocks from block `from` on) against the
 * earlier tool blocks of the same entry, each other and the store. */
static ctxc_status_t check_chunk(ctxc_history_t *h, size_t pos, bool replace,
                                 const ctxc__entry_src_t *src, size_t from,
                                 new_id_t *ids, size_t n, ctxc_error_t *err) {
    for (size_t k = 1; k < n; k++) {
        for (size_t j = 0; j < k; j++) {
            if (ids[j].type == ids[k].type && ids[j].hash == ids[k].hash &&
                src_eq_src(&ids[j].id, &ids[k].id)) {
                return dup_in_entry(ids[j].block, ids[k].block, &ids[k], err);
            }
        }
    }
    for (size_t i = 0; i < from; i++) { /* earlier chunks of this entry */
        ctxc__block_src_t b;
        memset(&b, 0, sizeof b);
        ctxc_status_t st = src->block(src->ctx, i, &b, err);
        if (st != CTXC_OK) {
            return st;
        }
        if (!is_tool_block(b.type)) {
            continue;
        }
        uint32_t hash = src_hash(&b.f[0]);
        for (size_t k = 0; k < n; k++) {
            if (ids[k].type == b.type && ids[k].hash == hash &&
                src_eq_src(&ids[k].id, &b.f[0])) {
                return dup_in_entry(i, ids[k].block, &ids[k], err);
            }
        }
    }
    ctxc__id_index_t store_ix;
    ctxc__id_index_t *ix = usable_index(h, &store_ix);
    size_t skip = replace ? pos : SIZE_MAX;
    if (ix != NULL) {
        lookup_index(h, ix, skip, ids, n);
    } else if (replace || !idf_rules_out(h, ids, n)) {
        scan_store(h, skip, ids, n);
    }
    /* what the store holds already for each id: a message for each
     * conflict, all with the same arguments (block, id, entry) */
    static const char *const conflict[] = {
        "block %z (tool_call): id %q is already used by the tool_call in "
        "entry %z; call ids must be unique",
        "block %z (tool_call): id %q was answered before the call "
        "(tool_response in entry %z); a tool_response must come after its "
        "tool_call",
        "block %z (tool_response): call %q already has a tool_response (entry "
        "%z); a call has one response",
        "block %z (tool_response): its tool_call %q comes later (entry %z); a "
        "tool_response must come after its tool_call"};
    for (size_t k = 0; k < n; k++) {
        const new_id_t *d = &ids[k];
        unsigned which;
        uint32_t entry;
        if (d->type == CTXC_BLOCK_TOOL_CALL && d->call != NONE) {
            which = 0;
            entry = d->call;
        } else if (d->type == CTXC_BLOCK_TOOL_CALL && d->resp != NONE &&
                   d->resp < pos) {
            which = 1;
            entry = d->resp;
        } else if (d->type != CTXC_BLOCK_TOOL_CALL && d->resp != NONE) {
            which = 2;
            entry = d->resp;
        } else if (d->type != CTXC_BLOCK_TOOL_CALL && d->call != NONE &&
                   d->call > pos) {
            which = 3;
            entry = d->call;
        } else {
            continue;
        }
        return ctxc__fail(err, CTXC_E_INVALID_ARG, conflict[which],
                          (size_t)d->block, d->id.p, d->id.n, (size_t)entry);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc__pairing_check_put(ctxc_history_t *h, size_t pos,
                                      bool replace,
                                      const ctxc__entry_src_t *src,
                                      ctxc_error_t *err) {
    new_id_t ids[CHUNK];
    size_t n = 0;
    size_t from = 0; /* first block of the current chunk */
    ctxc_status_t st;
    for (size_t i = 0; i < src->block_count; i++) {
        ctxc__block_src_t b;
        memset(&b, 0, sizeof b);
        if ((st = src->block(src->ctx, i, &b, err)) != CTXC_OK) {
            return st;
        }
        if (!is_tool_block(b.type)) {
            continue;
        }
        ctxc_speaker_t home = b.type == CTXC_BLOCK_TOOL_CALL
                                  ? CTXC_SPEAKER_AI
                                  : CTXC_SPEAKER_TOOL;
        if (src->speaker != home) {
            const char *t = ctxc_block_type_name(b.type);
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "block %z (%s): a %s belongs in %s entry, not "
                              "in %s entry",
                              i, t, t, a_speaker(home),
                              a_speaker(src->speaker));
        }
        if (n == 0) {
            from = i;
        }
        new_id_t *d = &ids[n++];
        d->id = b.f[0];
        d->hash = src_hash(&b.f[0]);
        d->block = (uint16_t)i;
        d->type = (uint8_t)b.type;
        d->call = NONE;
        d->resp = NONE;
        if (n == CHUNK) {
            st = check_chunk(h, pos, replace, src, from, ids, n, err);
            if (st != CTXC_OK) {
                return st;
            }
            n = 0;
        }
    }
    return n > 0 ? check_chunk(h, pos, replace, src, from, ids, n, err)
                 : CTXC_OK;
}

/* ---- checking a plan ----------------------------------------------------- */

/* The first op that is out of order, or SIZE_MAX: a plan keeps and
 * replaces old entries in their order (KEEP ranges and replaced entries
 * increasing), so the new history keeps every response after its call. */
static size_t first_out_of_order(const ctxc_plan_t *plan) {
    size_t next = 0; /* old entries before `next` are placed */
    for (size_t k = 0; k < plan->count; k++) {
        const ctxc_plan_op_t *op = &plan->ops[k];
        size_t at = op->kind == CTXC_PLAN_KEEP ? op->from : op->replaces;
        if (op->kind == CTXC_PLAN_INSERT && op->replaces == UINT32_MAX) {
            continue; /* a new entry: no place in the old history */
        }
        if (at < next) {
            return k;
        }
        next = op->kind == CTXC_PLAN_KEEP ? op->to : at + 1u;
    }
    return SIZE_MAX;
}

/* The op that keeps old entry i (its KEEP) or replaces it (an INSERT), or
 * NULL when the plan drops it, in a plan in order: a binary search over the
 * increasing KEEPs, then the INSERTs that follow the one found. */
static const ctxc_plan_op_t *op_for(const ctxc_plan_t *plan, size_t i) {
    size_t lo = 0, hi = plan->count, best = SIZE_MAX;
    while (lo < hi) { /* the last KEEP with from <= i */
        size_t mid = lo + (hi - lo) / 2u;
        size_t k = mid;
        while (k > lo && plan->ops[k].kind != CTXC_PLAN_KEEP) {
            k--;
        }
        if (plan->ops[k].kind != CTXC_PLAN_KEEP) {
            lo = mid + 1u; /* only INSERTs in [lo, mid] */
        } else if (plan->ops[k].from <= i) {
            best = k;
            lo = mid + 1u;
        } else {
            hi = k;
        }
    }
    if (best != SIZE_MAX && i < plan->ops[best].to) {
        return &plan->ops[best];
    }
    for (size_t k = best == SIZE_MAX ? 0u : best + 1u;
         k < plan->count && plan->ops[k].kind == CTXC_PLAN_INSERT; k++) {
        if (plan->ops[k].replaces == i) {
            return &plan->ops[k];
        }
    }
    return NULL;
}

/* Whether the block of `type` and `id` in old entry i is in the new
 * history: its entry kept, or replaced by an entry that still holds it. */
static bool survives(const ctxc_plan_t *plan, size_t i, ctxc_block_type_t type,
                     ctxc_str_t id) {
    const ctxc_plan_op_t *op = op_for(plan, i);
    if (op == NULL || op->kind == CTXC_PLAN_KEEP) {
        return op != NULL;
    }
    ctxc_entry_t e;
    ctxc__op_entry(plan->scratch, op, &e);
    return entry_has(&e, type, id);
}

static ctxc_status_t split_pair(ctxc_str_t id, size_t call, size_t resp,
                                bool call_kept, ctxc_error_t *err) {
    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                      "the plan keeps the %s of call id %q (entry %z) "
                      "without its %s (entry %z)",
                      call_kept ? "tool_call" : "tool_response", id.ptr, id.len,
                      call_kept ? call : resp,
                      call_kept ? "tool_response" : "tool_call",
                      call_kept ? resp : call);
}

/* Every tool block of an inserted entry must come from the entry it
 * replaces (same speaker, same block type and id). */
static ctxc_status_t check_inserts(const ctxc_history_t *h,
                                   const ctxc_plan_t *plan, ctxc_error_t *err) {
    for (size_t k = 0; k < plan->count; k++) {
        const ctxc_plan_op_t *op = &plan->ops[k];
        if (op->kind != CTXC_PLAN_INSERT) {
            continue;
        }
        ctxc_entry_t e, old;
        ctxc__op_entry(plan->scratch, op, &e);
        bool has_old = op->replaces < h->count;
        if (has_old) {
            entry_at(h, op->replaces, &old);
        }
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (next_tool_block(&e, &cur, &b)) {
            ctxc_str_t id = ctxc__ids_tool_id(&b);
            if (!has_old || old.speaker != e.speaker ||
                !entry_has(&old, b.type, id)) {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "plan op %z inserts a %s (call id %q) "
                                  "that is not in the entry it replaces",
                                  k, ctxc_block_type_name(b.type), id.ptr,
                                  id.len);
            }
        }
    }
    return CTXC_OK;
}

/* The history's index as a plan check needs it: only when a dropped tool
 * block asks for its partner (a plan that drops none, such as one that
 * only rewrites results, does not pay for a rebuild). */
typedef struct {
    ctxc_history_t *h;
    bool tried;
    const ctxc__id_index_t *ix; /* NULL: scan */
    ctxc__id_index_t store;
    ctxc_view_t all; /* the store as a view */
    ctxc__ids_at_t at;
} lazy_index_t;

/* Entries next to a dropped block searched for its partner before the
 * index is asked (a response usually follows its call closely). */
#define NEAR_ENTRIES 8u

/* The history's index for ctxc__ids_seek (made usable on the first
 * ask). */
static const ctxc__id_slot_t *lazy_lookup(void *ctx, ctxc_str_t id,
                                          bool *usable) {
    lazy_index_t *lz = (lazy_index_t *)ctx;
    if (!lz->tried) {
        lz->tried = true;
        lz->ix = usable_index(lz->h, &lz->store);
    }
    *usable = lz->ix != NULL;
    return *usable ? ctxc__ids_find(lz->ix, id, ctxc__ids_hash(id),
                                    ctxc__ids_match_at, &lz->at)
                   : NULL;
}

/* The position of the other side of the pair of block b (in entry pos), or
 * SIZE_MAX: nearby entries first, then the index, else a scan (responses
 * come after calls; an id has one of each). */
static size_t partner_of(lazy_index_t *lz, size_t pos, const ctxc_block_t *b) {
    size_t p, k;
    return ctxc__ids_seek(&lz->all, pos, ctxc__ids_tool_id(b),
                          b->type == CTXC_BLOCK_TOOL_RESPONSE, NEAR_ENTRIES,
                          lazy_lookup, lz, &p, &k, NULL)
               ? p
               : SIZE_MAX;
}

/* Old entry i is not kept (dropped or replaced): each of its tool blocks
 * the plan drops must have its partner dropped too. */
static ctxc_status_t pinned_changed(size_t i, size_t pinned,
                                    ctxc_error_t *err) {
    if (i == pinned) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "the plan drops or changes pinned entry %z", i);
    }
    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                      "the plan drops or changes entry %z, whose tool pair "
                      "ties it to pinned entry %z",
                      i, pinned);
}

/* Old entry i is not kept (dropped or replaced): it must not be pinned
 * (an entry without content, outside the curated view, carries nothing to
 * keep), nor share a tool pair with a pinned entry (`pins`: the history
 * has pinned entries); each of its tool blocks the plan drops must have
 * its partner dropped too. */
static ctxc_status_t check_unkept(const ctxc_history_t *h, lazy_index_t *lz,
                                  const ctxc_plan_t *plan, size_t i, bool pins,
                                  ctxc_error_t *err) {
    if (pins && (h->slots[i].flags & CTXC_ENTRY_PINNED) != 0) {
        ctxc_entry_t pe;
        entry_at(h, i, &pe);
        if (ctxc_entry_has_content(&pe)) {
            return pinned_changed(i, i, err);
        }
    }
    if (h->slots[i].speaker == CTXC_SPEAKER_HUMAN) {
        return CTXC_OK; /* no tool blocks there (the rule) */
    }
    const ctxc_plan_op_t *ins = op_for(plan, i);
    ctxc_entry_t e, repl;
    if (ins != NULL) {
        ctxc__op_entry(plan->scratch, ins, &repl);
    }
    entry_at(h, i, &e);
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    while (next_tool_block(&e, &cur, &b)) {
        ctxc_str_t id = ctxc__ids_tool_id(&b);
        if (pins) {
            size_t q = partner_of(lz, i, &b);
            if (q != SIZE_MAX && (h->slots[q].flags & CTXC_ENTRY_PINNED)) {
                return pinned_changed(i, q, err);
            }
        }
        if (ins != NULL && entry_has(&repl, b.type, id)) {
            continue; /* the block stays */
        }
        size_t p = partner_of(lz, i, &b);
        bool call = b.type == CTXC_BLOCK_TOOL_CALL;
        if (p != SIZE_MAX &&
            survives(plan, p,
                     call ? CTXC_BLOCK_TOOL_RESPONSE : CTXC_BLOCK_TOOL_CALL,
                     id)) {
            return split_pair(id, call ? i : p, call ? p : i, !call, err);
        }
    }
    return CTXC_OK;
}

ctxc_status_t ctxc__pairing_check_plan(ctxc_history_t *h,
                                       const ctxc_plan_t *plan,
                                       ctxc_error_t *err) {
    size_t bad = first_out_of_order(plan);
    if (bad != SIZE_MAX) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "plan op %z is out of order: it places entry %z "
                          "after entries that come later in the history",
                          bad,
                          (size_t)(plan->ops[bad].kind == CTXC_PLAN_KEEP
                                       ? plan->ops[bad].from
                                       : plan->ops[bad].replaces));
    }
    ctxc_status_t st = check_inserts(h, plan, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* only what the plan does not keep can break a pair: the entries
     * between the KEEP ranges */
    lazy_index_t lz;
    lz.h = h;
    lz.tried = false;
    store_view(h, &lz.all);
    lz.at.v = &lz.all;
    lz.at.sid = NULL;
    bool pins = false; /* pinned entries: none in most histories */
    for (size_t i = 0; i < h->count && !pins; i++) {
        pins = (h->slots[i].flags & CTXC_ENTRY_PINNED) != 0;
    }
    size_t next = 0;
    for (size_t k = 0; k <= plan->count && st == CTXC_OK; k++) {
        size_t end = h->count;
        if (k < plan->count) {
            if (plan->ops[k].kind != CTXC_PLAN_KEEP) {
                continue;
            }
            end = plan->ops[k].from;
        }
        for (size_t i = next; i < end && st == CTXC_OK; i++) {
            st = check_unkept(h, &lz, plan, i, pins, err);
        }
        if (k < plan->count) {
            next = plan->ops[k].to;
        }
    }
    return st;
}
