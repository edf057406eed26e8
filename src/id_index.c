/*
 * ctxc — tool-call id index over caller memory (see id_index.h).
 */
#include "id_index.h"

#include <string.h>

#include "compiler.h"

#include "ctxc/strategy.h"
#include "record.h"

_Static_assert(sizeof(ctxc__id_slot_t) == CTXC__ID_SLOT_BYTES,
               "CTXC__ID_SLOT_BYTES is the size of a slot");
_Static_assert(CTXC__ID_SLOT_BYTES == CTXC_WORK_INDEX_SLOT_BYTES,
               "the public sizing macros use the slot size");
/* 3 slots per id: the largest power of two below is at least 1.5 per id,
 * more than the 4/3 a table at its 3/4 load needs */
_Static_assert(CTXC_HISTORY_ID_INDEX_BYTES(1) == 3u * CTXC__ID_SLOT_BYTES,
               "CTXC_HISTORY_ID_INDEX_BYTES gives every id 3 slots");

void ctxc__ids_attach(ctxc__id_index_t *ix, void *mem, size_t bytes,
                      size_t used) {
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
    ix->used = ix->cap > 0 ? used : 0;
}

/* The largest table that fits, emptied. */
static void ids_init(ctxc__id_index_t *ix, void *mem, size_t bytes) {
    ctxc__ids_attach(ix, mem, bytes, 0);
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

void ctxc__ids_init_for(ctxc__id_index_t *ix, void *mem, size_t bytes,
                        size_t ids) {
    size_t most = bytes / sizeof(ctxc__id_slot_t);
    size_t want = 16;
    while (want < most && want / 4 * 3 < ids) {
        want *= 2;
    }
    if (want >= most) {
        ids_init(ix, mem, bytes); /* all there is */
        return;
    }
    /* room for `want` slots after the alignment skip */
    ids_init(ix, mem, want * sizeof(ctxc__id_slot_t) + 3u);
}

/* Four bytes a step (FNV prime, xor-shift), then a final mix; the length
 * is mixed in first. Streamed so that an id can be hashed while it is
 * decoded (its bytes arrive in pieces). */
#ifdef CTXC__HOST_FAST
static uint32_t mix_word(uint32_t h, uint32_t w) {
    h = (h ^ w) * 16777619u;
    return h ^ (h >> 15);
}

void ctxc__ids_hash_start(ctxc__ids_hasher_t *hs) {
    hs->h = 2166136261u;
    memset(hs->tail, 0, sizeof hs->tail);
    hs->ntail = 0;
}

void ctxc__ids_hash_feed(ctxc__ids_hasher_t *hs, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    while (hs->ntail > 0 && hs->ntail < 4 && n > 0) {
        hs->tail[hs->ntail++] = *p++;
        n--;
    }
    if (hs->ntail == 4) {
        uint32_t w;
        memcpy(&w, hs->tail, 4);
        hs->h = mix_word(hs->h, w);
        hs->ntail = 0;
    }
    while (n >= 4) {
        uint32_t w;
        memcpy(&w, p, 4);
        hs->h = mix_word(hs->h, w);
        p += 4;
        n -= 4;
    }
    while (n > 0) {
        hs->tail[hs->ntail++] = *p++;
        n--;
    }
}

uint32_t ctxc__ids_hash_end(const ctxc__ids_hasher_t *hs, size_t len) {
    uint32_t h = hs->h;
    for (unsigned i = 0; i < hs->ntail; i++) {
        h = (h ^ hs->tail[i]) * 16777619u;
    }
    h = (h ^ (uint32_t)len) * 16777619u;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    return h;
}

#else
/* Small targets hash a byte at a time (the same start and finish; an index
 * only ever compares hashes made by one build). */
void ctxc__ids_hash_start(ctxc__ids_hasher_t *hs) { hs->h = 2166136261u; }

void ctxc__ids_hash_feed(ctxc__ids_hasher_t *hs, const void *data, size_t n) {
    const uint8_t *p = (const uint8_t *)data;
    for (size_t i = 0; i < n; i++) {
        hs->h = (hs->h ^ p[i]) * 16777619u;
    }
}

uint32_t ctxc__ids_hash_end(const ctxc__ids_hasher_t *hs, size_t len) {
    uint32_t h = (hs->h ^ (uint32_t)len) * 16777619u;
    h ^= h >> 16;
    h *= 0x85EBCA6Bu;
    h ^= h >> 13;
    return h;
}
#endif

uint32_t ctxc__ids_hash(ctxc_str_t id) {
    ctxc__ids_hasher_t hs;
    ctxc__ids_hash_start(&hs);
    ctxc__ids_hash_feed(&hs, id.ptr, id.len);
    return ctxc__ids_hash_end(&hs, id.len);
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

/* Entry p of a view (a map of NULL: store indexes). */
static void view_entry(const ctxc_view_t *v, size_t p, ctxc_entry_t *e) {
    const ctxc_slot_t *s = &v->slots_[v->map != NULL ? v->map[p] : p];
    ctxc__record_entry(v->arena_ + s->offset, s, e);
}

ctxc_str_t ctxc__ids_tool_id(const ctxc_block_t *b) {
    return b->type == CTXC_BLOCK_TOOL_CALL ? b->u.tool_call.id
                                           : b->u.tool_response.call_id;
}

bool ctxc__ids_match_at(void *ctx, const ctxc__id_slot_t *slot, ctxc_str_t id) {
    const ctxc__ids_at_t *at = (const ctxc__ids_at_t *)ctx;
    bool call = slot->call != CTXC__IDS_NONE;
    size_t p = call ? slot->call : slot->resp;
    ctxc_entry_t e;
    ctxc_block_t b;
    if (p >= at->v->count) {
        return false;
    }
    view_entry(at->v, p, &e);
    if (ctxc_entry_block(&e, call ? slot->call_block : slot->resp_block, &b) !=
        CTXC_OK) {
        return false;
    }
    ctxc_str_t bid = ctxc__ids_tool_id(&b);
    return at->sid != NULL ? ctxc__src_equals(at->sid->p, at->sid->n,
                                              at->sid->kind, bid.ptr, bid.len)
                           : ctxc__str_eq(bid, id);
}

bool ctxc__ids_add_block(ctxc__id_index_t *ix, ctxc__ids_at_t *at,
                         const ctxc_block_t *b, size_t p, size_t k) {
    ctxc_str_t id = ctxc__ids_tool_id(b);
    ctxc__id_slot_t *s =
        k < CTXC__IDS_NONE
            ? ctxc__ids_add(ix, id, ctxc__ids_hash(id), ctxc__ids_match_at, at)
            : NULL;
    if (s == NULL) {
        return false;
    }
    if (b->type == CTXC_BLOCK_TOOL_CALL) {
        s->call = (uint16_t)p;
        s->call_block = (uint16_t)k;
    } else {
        s->resp = (uint16_t)p;
        s->resp_block = (uint16_t)k;
    }
    return true;
}

bool ctxc__ids_add_entries(ctxc__id_index_t *ix, ctxc__ids_at_t *at,
                           size_t from, size_t to) {
    for (size_t p = from; p < to; p++) {
        ctxc_entry_t e;
        view_entry(at->v, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
            if ((b.type == CTXC_BLOCK_TOOL_CALL ||
                 b.type == CTXC_BLOCK_TOOL_RESPONSE) &&
                !ctxc__ids_add_block(ix, at, &b, p, k)) {
                return false;
            }
        }
    }
    return true;
}

bool ctxc__ids_in_entry(const ctxc_entry_t *e, ctxc_block_type_t type,
                        ctxc_str_t id, size_t *block, ctxc_block_t *out) {
    /* the id is the first field of both tool blocks */
    return ctxc__entry_find_first_field(e, type, id, block, out);
}

bool ctxc__ids_seek(const ctxc_view_t *v, size_t at, ctxc_str_t id, bool call,
                    size_t window, ctxc__ids_lookup_fn lookup, void *ctx,
                    size_t *pos, size_t *block, ctxc_block_t *out) {
    ctxc_block_t b;
    ctxc_entry_t e;
    ctxc_block_type_t type =
        call ? CTXC_BLOCK_TOOL_CALL : CTXC_BLOCK_TOOL_RESPONSE;
    /* the store's pairing rule: calls in ai entries, responses in tool
     * entries; the entries of the others are not read */
    uint8_t speaker = call ? CTXC_SPEAKER_AI : CTXC_SPEAKER_TOOL;
    /* positions to look at: [0, at) backwards, or (at, count) forwards */
    size_t n = call ? at : v->count - at - 1;
    size_t p = at;
    if (out == NULL) {
        out = &b;
    }
    for (size_t i = 0; i < n; i++) {
        p = call ? p - 1 : p + 1;
        bool usable = false;
        const ctxc__id_slot_t *s =
            i == window ? lookup(ctx, id, &usable) : NULL;
        if (usable) {
            size_t q = s == NULL ? CTXC__IDS_NONE : call ? s->call : s->resp;
            if (q == CTXC__IDS_NONE || (call ? q >= at : q <= at)) {
                return false;
            }
            *pos = q;
            *block = call ? s->call_block : s->resp_block;
            if (out == &b) {
                return true;
            }
            view_entry(v, q, &e);
            return ctxc_entry_block(&e, *block, out) == CTXC_OK;
        }
        if (v->slots_[v->map != NULL ? v->map[p] : p].speaker != speaker) {
            continue;
        }
        view_entry(v, p, &e);
        if (ctxc__ids_in_entry(&e, type, id, block, out)) {
            *pos = p;
            return true;
        }
    }
    return false;
}
