/*
 * ctxc — tool-call id index over caller memory (see id_index.h).
 */
#include "id_index.h"

#include <string.h>

#include "ctxc/strategy.h"

_Static_assert(sizeof(ctxc__id_slot_t) == CTXC__ID_SLOT_BYTES,
               "CTXC__ID_SLOT_BYTES is the size of a slot");
_Static_assert(CTXC__ID_SLOT_BYTES == CTXC_WORK_INDEX_SLOT_BYTES &&
                   CTXC__ID_SLOT_BYTES == CTXC_STATS_INDEX_SLOT_BYTES,
               "the public sizing macros use the slot size");

void ctxc__ids_init(ctxc__id_index_t *ix, void *mem, size_t bytes) {
    uintptr_t a = (uintptr_t)mem;
    size_t skip = (size_t)((4u - (a & 3u)) & 3u);
    size_t n = mem != NULL && bytes > skip
                   ? (bytes - skip) / sizeof(ctxc__id_slot_t)
                   : 0;
    size_t cap = 1;
    while (cap * 2 <= n) {
        cap *= 2;
    }
    ix->slots =
        cap >= 4 ? (ctxc__id_slot_t *)(void *)((uint8_t *)mem + skip) : NULL;
    ix->cap = cap >= 4 ? cap : 0;
    ctxc__ids_clear(ix);
}

void ctxc__ids_init_for(ctxc__id_index_t *ix, void *mem, size_t bytes,
                        size_t ids) {
    size_t most = bytes / sizeof(ctxc__id_slot_t);
    size_t want = 16;
    while (want < most && want / 4 * 3 < ids) {
        want *= 2;
    }
    if (want >= most) {
        ctxc__ids_init(ix, mem, bytes); /* all there is */
        return;
    }
    /* room for `want` slots after the alignment skip */
    ctxc__ids_init(ix, mem, want * sizeof(ctxc__id_slot_t) + 3u);
}

void ctxc__ids_clear(ctxc__id_index_t *ix) {
    ix->used = 0;
    for (size_t i = 0; i < ix->cap; i++) {
        ix->slots[i].call = CTXC__IDS_NONE;
        ix->slots[i].resp = CTXC__IDS_NONE;
        ix->slots[i].call_block = 0;
        ix->slots[i].resp_block = 0;
        ix->slots[i].flags = 0;
        ix->slots[i].count = 0;
        ix->slots[i].hash = 0;
    }
}

uint32_t ctxc__ids_hash(ctxc_str_t id) {
    /* four bytes a step (FNV prime, xor-shift), then a final mix */
    const uint8_t *p = (const uint8_t *)id.ptr;
    size_t n = id.len;
    uint32_t h = 2166136261u ^ (uint32_t)n;
    while (n >= 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        h = (h ^ w) * 16777619u;
        h ^= h >> 15;
        p += 4;
        n -= 4;
    }
    while (n > 0) {
        h = (h ^ *p++) * 16777619u;
        n--;
    }
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    return h;
}

static bool slot_free(const ctxc__id_slot_t *s) {
    return s->call == CTXC__IDS_NONE && s->resp == CTXC__IDS_NONE;
}

/* The slot holding `id`, or the free slot where it would go. */
static ctxc__id_slot_t *probe(const ctxc__id_index_t *ix, ctxc_str_t id,
                              uint32_t hash, ctxc__id_match_fn match,
                              void *ctx) {
    size_t mask = ix->cap - 1;
    for (size_t i = hash & mask;; i = (i + 1) & mask) {
        ctxc__id_slot_t *s = &ix->slots[i];
        if (slot_free(s) || (s->hash == hash && match(ctx, s, id))) {
            return s;
        }
    }
}

ctxc__id_slot_t *ctxc__ids_find(const ctxc__id_index_t *ix, ctxc_str_t id,
                                uint32_t hash, ctxc__id_match_fn match,
                                void *ctx) {
    if (ix->cap == 0) {
        return NULL;
    }
    ctxc__id_slot_t *s = probe(ix, id, hash, match, ctx);
    return slot_free(s) ? NULL : s;
}

ctxc__id_slot_t *ctxc__ids_add(ctxc__id_index_t *ix, ctxc_str_t id,
                               uint32_t hash, ctxc__id_match_fn match,
                               void *ctx) {
    if (ix->cap == 0) {
        return NULL;
    }
    ctxc__id_slot_t *s = probe(ix, id, hash, match, ctx);
    if (!slot_free(s)) {
        return s;
    }
    if ((ix->used + 1) * 4 > ix->cap * 3) {
        return NULL;
    }
    ix->used++;
    s->hash = hash;
    return s;
}
