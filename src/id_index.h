/*
 * ctxc — tool-call id index (private): call id -> position of its tool_call
 * and of its tool_response, in an open-addressing table over caller memory.
 *
 * The table keeps only a 32-bit hash of each id and the two positions; the
 * caller's `match` callback compares a candidate with the stored id, so
 * equal hashes never merge two ids. A table that cannot take another id
 * reports it (ctxc__ids_add returns NULL): callers then answer the question
 * another way (a scan), never wrongly.
 *
 * Positions are whatever the caller indexes (store indexes, view positions),
 * 0 .. 65534; CTXC__IDS_NONE marks "no such block".
 */
#ifndef CTXC_ID_INDEX_H
#define CTXC_ID_INDEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "record.h"

#define CTXC__IDS_NONE 0xFFFFu

typedef struct {
    uint32_t hash;
    uint16_t call;       /* position of the tool_call, or CTXC__IDS_NONE */
    uint16_t resp;       /* position of the tool_response, or CTXC__IDS_NONE */
    uint16_t call_block; /* block index of the tool_call at `call` */
    uint16_t resp_block; /* block index of the tool_response at `resp` */
    uint16_t flags;      /* the caller's (0 in a new slot) */
    uint16_t count;      /* the caller's (0 in a new slot) */
} ctxc__id_slot_t;

typedef struct {
    ctxc__id_slot_t *slots;
    size_t cap;  /* slots, a power of two (0: no table) */
    size_t used; /* ids held */
} ctxc__id_index_t;

/* Whether the id held by `slot` (at its call or response position) equals
 * `id`. */
typedef bool (*ctxc__id_match_fn)(void *ctx, const ctxc__id_slot_t *slot,
                                  ctxc_str_t id);

/* Bytes of one slot, for sizing memory (CTXC_WORK_INDEX_SLOT_BYTES in
 * strategy.h says the same; CTXC_HISTORY_ID_INDEX_BYTES in history.h gives
 * an id three). */
#define CTXC__ID_SLOT_BYTES 16u

/* An empty table over `mem`: as many slots as `ids` ids need (the smallest
 * power of two whose 3/4 holds them, at least 16) when the memory has them
 * (clearing a table costs its size, so a step over a short history does not
 * pay for a large work area), else the largest power-of-two number of slots
 * that fits `bytes` of `mem` (aligned to 4). Fewer than 4 slots: no table
 * (every add fails). */
void ctxc__ids_init_for(ctxc__id_index_t *ix, void *mem, size_t bytes,
                        size_t ids);

/* The same table over memory that already holds one with `used` ids (as
 * ctxc__ids_init_for and later adds left it): nothing is cleared. */
void ctxc__ids_attach(ctxc__id_index_t *ix, void *mem, size_t bytes,
                      size_t used);

/* Hash of an id (FNV-style over its bytes: four at a time on 64-bit hosts,
 * one at a time on small targets). */
uint32_t ctxc__ids_hash(ctxc_str_t id);

/* The hash of an id whose bytes arrive in pieces (e.g. while a JSON string
 * is decoded): start, feed the pieces, end with the total length. Equal to
 * ctxc__ids_hash of the whole. */
typedef struct {
    uint32_t h;
    uint8_t tail[4];
    unsigned ntail;
} ctxc__ids_hasher_t;
void ctxc__ids_hash_start(ctxc__ids_hasher_t *hs);
void ctxc__ids_hash_feed(ctxc__ids_hasher_t *hs, const void *data, size_t n);
uint32_t ctxc__ids_hash_end(const ctxc__ids_hasher_t *hs, size_t len);

/* A Bloom filter of `bytes` bytes over key hashes (two probes a key): the
 * history's tool-id filter (pairing.c) and the density step's memo
 * (strategy_high_density.c). */
static inline void ctxc__bloom_probes(size_t bytes, uint32_t h, size_t *a,
                                      size_t *b) {
    size_t bits = bytes * 8u;
    *a = h % bits;
    *b = ((h * 0x9E3779B1u) >> 7) % bits;
}
static inline void ctxc__bloom_add(uint8_t *f, size_t bytes, uint32_t h) {
    size_t a, b;
    ctxc__bloom_probes(bytes, h, &a, &b);
    f[a >> 3] |= (uint8_t)(1u << (a & 7u));
    f[b >> 3] |= (uint8_t)(1u << (b & 7u));
}
static inline bool ctxc__bloom_has(const uint8_t *f, size_t bytes,
                                   uint32_t h) {
    size_t a, b;
    ctxc__bloom_probes(bytes, h, &a, &b);
    return (f[a >> 3] & (1u << (a & 7u))) != 0 &&
           (f[b >> 3] & (1u << (b & 7u))) != 0;
}

/* The slot of `id`, or NULL when the table does not hold it. */
ctxc__id_slot_t *ctxc__ids_find(const ctxc__id_index_t *ix, ctxc_str_t id,
                                uint32_t hash, ctxc__id_match_fn match,
                                void *ctx);

/* The slot of `id`, added (both positions CTXC__IDS_NONE) when new; the
 * caller sets `call` or `resp` of a new slot before the next find or add (a
 * slot with neither counts as free). NULL when the table is full (3/4 of its
 * slots hold ids) or has no memory. */
ctxc__id_slot_t *ctxc__ids_add(ctxc__id_index_t *ix, ctxc_str_t id,
                               uint32_t hash, ctxc__id_match_fn match,
                               void *ctx);

/* ---- ids of tool blocks at view positions --------------------------------
 * A table whose slots hold the positions and block indexes of tool_call and
 * tool_response blocks in a view (the store's own index: a view of the
 * whole store, map NULL). */

typedef struct {
    const ctxc_view_t *v;
    const ctxc__src_t *sid; /* compare with this source, not `id` (or NULL) */
} ctxc__ids_at_t;

/* ctxc__id_match_fn over an ctxc__ids_at_t: whether the block at the
 * slot's call (or, without one, response) position holds `id`. */
bool ctxc__ids_match_at(void *ctx, const ctxc__id_slot_t *slot, ctxc_str_t id);

/* Adds tool block b, block k of view position p, to the table; false when
 * it is full (or k does not fit a slot). */
bool ctxc__ids_add_block(ctxc__id_index_t *ix, ctxc__ids_at_t *at,
                         const ctxc_block_t *b, size_t p, size_t k);

/* Adds the tool blocks of the view's entries [from, to) to the table;
 * false when it is full. */
bool ctxc__ids_add_entries(ctxc__id_index_t *ix, ctxc__ids_at_t *at,
                           size_t from, size_t to);

/* The id of a tool block (a tool_call's id, a tool_response's call id). */
ctxc_str_t ctxc__ids_tool_id(const ctxc_block_t *b);

/* The first block of `type` (tool_call or tool_response) with call id `id`
 * in entry e: its index in *block and the block in *out. */
bool ctxc__ids_in_entry(const ctxc_entry_t *e, ctxc_block_type_t type,
                        ctxc_str_t id, size_t *block, ctxc_block_t *out);

/* ---- finding the other side of a pair ------------------------------------
 * One finder for the store (pairing.c, over a view of the whole store) and
 * the strategies (boundary.c, over their view), each with its own index. */

/* The index of a finder: the slot of `id` (NULL: not held) when *usable is
 * set; *usable false when there is no index to ask (then the finder
 * scans). Asked at most once per search. */
typedef const ctxc__id_slot_t *(*ctxc__ids_lookup_fn)(void *ctx, ctxc_str_t id,
                                                      bool *usable);

/* The tool_call (`call`) or tool_response with call id `id` nearest to view
 * position `at`: the last tool_call in an ai entry before it (its first such
 * block), or the first tool_response in a tool entry after it (the store's
 * pairing rule: the entries of other speakers are not read). Its position,
 * block index and, when `out` is not NULL, the block. The `window` entries
 * next to `at` are scanned, then the index answers (the slot's call or
 * response, when it lies on the right side), or, when it cannot, a scan of
 * the rest: the same answers. `block` and `out` come from the slot's
 * call_block / resp_block when the index answers. A `window` of SIZE_MAX
 * is a scan (`lookup` is not called and may be NULL). */
bool ctxc__ids_seek(const ctxc_view_t *v, size_t at, ctxc_str_t id, bool call,
                    size_t window, ctxc__ids_lookup_fn lookup, void *ctx,
                    size_t *pos, size_t *block, ctxc_block_t *out);

#endif /* CTXC_ID_INDEX_H */
