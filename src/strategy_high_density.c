/*
 * ctxc — high-density: no LLM.
 *
 * optimize() (the density step, over the raw view):
 *   1. read->write pruning: a read call whose file is written later goes,
 *      with its response (block-level: other blocks of the entries stay);
 *   2. @file dedupe: of the "--- <path> ---" ... "--- End of content ---"
 *      inclusions in human text, only the latest of each path keeps its
 *      content;
 *   3. recency pruning (off by default): per tool name only the newest
 *      `recency_retention` results keep their payload.
 * compress(): outside the recent tail, tool results become one-line
 * summaries (tool, path or command, ok/error) until the estimate is below
 * threshold x limit x 0.6.
 *
 * Nothing here makes tokens grow: a replacement that would not be smaller
 * than what it replaces is not made. Malformed tool parameters are skipped.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "id_index.h"
#include "json.h"
#include "plan_build.h"
#include "record.h"
#include "sink.h"
#include "strategies.h"
#include "text_stats.h"
#include "tool_roles.h"

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

#define MAX_EDIT_BLOCKS 64u /* blocks per entry the density step can edit */

/* The indexed passes run in frames of their own (off the chain of the
 * edits that write records); without the index they are left to the
 * compiler, which then drops them. */
#if CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY == 0
#define HD_INDEXED_NOINLINE
#else
#define HD_INDEXED_NOINLINE CTXC__NOINLINE
#endif
#define MAX_TEXT_EDITS 8u /* text blocks per entry the dedupe can rewrite */

/* per-entry marks in work->marks */
#define MARK_WRITE 0x1u  /* ai entry holds a write call */
#define MARK_RWCALL 0x2u /* ai entry holds a pruned read call */
#define MARK_RWRESP 0x4u /* tool entry holds a response of a pruned read */
/* marks of the indexed path only (entries the later passes need to see) */
#define MARK_READ 0x8u    /* ai entry holds a read call */
#define MARK_INCL 0x10u   /* human entry holds an @file inclusion */
#define MARK_RECENT 0x20u /* tool entry holds a result marked recent */
/* recency-pruned result block k < RECENT_BLOCKS of a tool entry */
#define MARK_RECENT_BLOCK0 0x40u
#define RECENT_BLOCKS 10u

static const char END_MARKER[] = "--- End of content ---";
static const char DEDUPE_NOTE[] =
    "[superseded by a later inclusion of this file]";
static const char POINTER_JSON[] = "\"" CTXC_PRUNED_RESULT_TEXT "\"";
/* with a spill hook: the same with the block's id (patched over the
 * zeros; SPILL_ID_AT: where they are) */
static const char SPILL_POINTER_JSON[] = "\"" CTXC_SPILLED_RESULT_TEXT "\"";
static const char SPILL_NOTE[] = CTXC_SPILLED_NOTE_TEXT;
#define SPILL_ID_LEN 16u /* CTXC_SPILL_ID_LEN: a number and a hash */
#define OLD_ID_LEN 8u    /* the ids of earlier stores: a number alone */
#define SPILL_POINTER_ID_AT (sizeof SPILL_POINTER_JSON - 1u - 3u - SPILL_ID_LEN)
#define SPILL_NOTE_ID_AT (sizeof SPILL_NOTE - 1u - 2u - SPILL_ID_LEN)
#define SPILL_NOTES 8u /* spilled inclusions replaced per text block */

static bool str_is(ctxc_str_t s, const char *lit) {
    size_t n = strlen(lit);
    return s.ptr != NULL && s.len == n && memcmp(s.ptr, lit, n) == 0;
}

/* A result that is a pointer already (with or without an id, of this or
 * an earlier id length). */
static bool is_pointer(ctxc_str_t r) {
    return str_is(r, POINTER_JSON) ||
           (r.ptr != NULL &&
            (r.len == sizeof SPILL_POINTER_JSON - 1u ||
             r.len == sizeof SPILL_POINTER_JSON - 1u - OLD_ID_LEN) &&
            memcmp(r.ptr, SPILL_POINTER_JSON, SPILL_POINTER_ID_AT) == 0);
}

/* The speaker of view position p, from its slot (the record is not
 * touched: passes that skip other speakers do not read their records). */
static ctxc_speaker_t speaker_at(const ctxc_view_t *v, size_t p) {
    return (ctxc_speaker_t)v->slots_[ctxc_view_index(v, p)].speaker;
}

/* Decodes the body b[0..n) of a canonical JSON string (its escapes still
 * in) into buf (NUL-terminated): false when it does not fit. */
static bool json_body(const char *b, size_t n, char *buf, size_t cap,
                      size_t *len) {
    if (memchr(b, '\\', n) == NULL) {
        /* no escape: the stored (valid UTF-8) body is the decoded text */
        if (n > cap - 1) {
            return false;
        }
        memcpy(buf, b, n);
        buf[n] = '\0';
        *len = n;
        return true;
    }
    ctxc__sink_t s = {buf, cap - 1, 0};
    if (ctxc__write_decoded(&s, b, n, CTXC__SRC_JSTR, NULL) != CTXC_OK ||
        s.len > cap - 1) {
        return false;
    }
    buf[s.len] = '\0';
    *len = s.len;
    return true;
}

/* ---- parameters and paths ------------------------------------------------
 * Paths are built in place in one CTXC_CFG_PATH_MAX buffer of the step
 * (hd_t.path[]): the path as written is put after "<root>/", then
 * normalised where it lies. */

#define PATH_CAP ((size_t)CTXC_CFG_PATH_MAX)

/* Normalises out[0..n) (".", ".." and "//" segments) in place: every byte
 * is written at or before where it is read. No case folding. */
static bool normalise(char *out, size_t n, size_t cap, size_t *outlen) {
    if (n > 0 && n + 2 <= cap && out[0] != '.' && out[n - 1] != '/') {
        /* the common case: no empty, "." or ".." segment (nor any other
         * segment starting with '.'): the path is its own normal form */
        const char *sep = out;
        const char *end = out + n;
        while ((sep = memchr(sep, '/', (size_t)(end - sep))) != NULL &&
               sep[1] != '/' && sep[1] != '.') {
            sep++;
        }
        if (sep == NULL) {
            out[n] = '\0';
            *outlen = n;
            return true;
        }
    }
    bool absolute = n > 0 && out[0] == '/';
    size_t o = 0;
    size_t floor = 0; /* ".." may not pop below this (leading ".." kept) */
    if (absolute) {
        o = 1; /* out[0] is already the '/' */
        floor = 1;
    }
    size_t i = 0;
    while (i < n) {
        while (i < n && out[i] == '/') {
            i++;
        }
        size_t s = i;
        while (i < n && out[i] != '/') {
            i++;
        }
        size_t seg = i - s;
        if (seg == 0 || (seg == 1 && out[s] == '.')) {
            continue;
        }
        bool dotdot = seg == 2 && out[s] == '.' && out[s + 1] == '.';
        if (dotdot) {
            if (o > floor) { /* pop the last segment */
                while (o > floor && out[o - 1] != '/') {
                    o--;
                }
                if (o > floor) {
                    o--; /* its separator */
                }
                continue;
            }
            if (absolute) {
                continue; /* "/.." is "/" */
            }
        }
        if (o + seg + 2 > cap) {
            return false;
        }
        if (o > 0 && out[o - 1] != '/') {
            out[o++] = '/';
        }
        memmove(out + o, out + s, seg);
        o += seg;
        if (dotdot) {
            floor = o; /* a kept leading ".." */
        }
    }
    out[o] = '\0';
    *outlen = o;
    return o > 0;
}

/* Bytes before the written path in a path buffer: "<root>/" (none without
 * a root). */
static size_t root_room(const char *root, size_t *rlen) {
    *rlen = root != NULL ? strlen(root) : 0;
    return *rlen > 0 ? *rlen + 1 : 0;
}

/* The path as written, raw[0..plen) (anywhere, also inside out), resolved
 * against the root into out (cap bytes). */
static bool resolve_raw(const char *root, const char *raw, size_t plen,
                        char *out, size_t cap, size_t *outlen) {
    size_t rlen;
    size_t off = root_room(root, &rlen);
    size_t n;
    if (plen == 0 || raw[0] != '/') {
        if (rlen + 1 + plen >= cap) {
            return false;
        }
        memmove(out + off, raw, plen);
        if (rlen > 0) {
            memcpy(out, root, rlen);
            out[rlen] = '/';
        }
        n = off + plen;
    } else {
        if (plen >= cap) {
            return false;
        }
        memmove(out, raw, plen);
        n = plen;
    }
    return normalise(out, n, cap, outlen);
}

/* Resolves the path as written in text t[0..plen) into out. */
static bool resolve_path(const char *root, const char *t, size_t plen,
                         char *out, size_t cap, size_t *outlen) {
    return resolve_raw(root, t, plen, out, cap, outlen);
}

CTXC__NOINLINE static bool has_glob(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '{') {
            return true;
        }
    }
    return false;
}

#define PATH_NONEMPTY 0x1u /* a path written as "" is none */
#define PATH_NO_GLOB 0x2u  /* a path with glob characters is none */

/* Decodes the escaped JSON string body b[0..n) (a path as written) and
 * resolves it against root into out. */
static bool body_path(const char *root, const char *b, size_t n, unsigned how,
                      char *out, size_t cap, size_t *outlen) {
    size_t rlen;
    size_t off = root_room(root, &rlen);
    size_t raw;
    if (off >= cap || !json_body(b, n, out + off, cap - off, &raw)) {
        /* an absolute path needs no room for the root */
        if (off == 0 || cap == 0 || !json_body(b, n, out, cap, &raw) ||
            raw == 0 || out[0] != '/') {
            return false;
        }
        off = 0;
    }
    if (((how & PATH_NONEMPTY) && raw == 0) ||
        ((how & PATH_NO_GLOB) && has_glob(out + off, raw))) {
        return false;
    }
    return resolve_raw(root, out + off, raw, out, cap, outlen);
}

/* Kinds of keys in the key table (the top 2 bits of their hash). */
#define KEY_PATH 0u     /* written path: the latest write call */
#define KEY_INCL 1u     /* resolved @file path: inclusions still to come */
#define KEY_INCL_RAW 2u /* @file path that does not resolve, as written */
#define KEY_TOOL 3u     /* tool name: counts of its results (recency) */

/* Flag of a KEY_PATH slot: the path's bytes are in hd->pool at the slot's
 * offset (resp: high half, resp_block: low half), `count` bytes. */
#define KEY_BYTES 0x1u

/* Flags of a call id's slot in the pairs index. */
#define ID_PRUNED 0x1u /* read call pruned with its response (read->write) */
#define ID_RECENT 0x2u /* response has `retention` newer ones (recency) */
/* A call's slot keeps the reference of its tool (tool_roles.h) in `count`:
 * the name is compared once, when the index is built. */

typedef struct {
    const ctxc_view_t *v;
    const ctxc_density_config_t *cfg;
    ctxc_work_t *work;
    uint16_t *mark;
    /* The indexed path (both NULL: the scans): call id pairs, and the keys
     * of the step (written paths, @file paths, tool names). */
    const ctxc__pairs_t *pairs;
    ctxc__id_index_t *keys;
    /* the same pairs, also on the scan path (then they scan) */
    ctxc__pairs_t *pr;
    /* Resolved written paths, kept in the work scratch until the edits
     * start writing there (NULL then): KEY_PATH slots with KEY_BYTES
     * compare against them instead of decoding the write call again. */
    char *pool;
    size_t pool_cap, pool_used;
    /* default estimate of a result that is the pointer text alone */
    uint32_t pointer_tokens;
    /* The step's two path buffers (path_cap bytes each, in the work
     * area: see ctxc__hd_optimize): [0] the path a pass looks for, [1] the
     * paths it is compared with. No path buffer is on the stack. */
    char *path[2];
    size_t path_cap;
    /* pinned raw view positions (in work->boundary, which the step does not
     * use otherwise), or NULL when none is: never edited, never pruned */
    const unsigned char *pin;
    /* Without the index: the last position written of each written path's
     * hash (wtab_cap pairs of hash, position + 1; 0: empty), in the plan
     * operations after the path buffers; wtab_cap 0 (no room, or a table
     * that filled up): the scans decide alone. */
    uint32_t *wtab;
    size_t wtab_cap;
} hd_t;

/* The indexed path's tables as the passes test them: a constant NULL when
 * CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY is 0, so that every indexed branch
 * (key table, id flags) compiles out with index_prepare, not only the
 * passes that build them. */
#if CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY == 0
#define HD_KEYS(hd) ((void)(hd), (ctxc__id_index_t *)NULL)
#define HD_PAIRS(hd) ((void)(hd), (const ctxc__pairs_t *)NULL)
#else
#define HD_KEYS(hd) ((hd)->keys)
#define HD_PAIRS(hd) ((hd)->pairs)
#endif

/* The next resolved path of a call (*pos: 0 first) into out. */
static bool call_next_path(const hd_t *hd, const ctxc__tool_t *t,
                           ctxc_str_t params, size_t *pos, char *out,
                           size_t *outlen) {
    ctxc_str_t body;
    while (ctxc__tool_next_path(t, params, pos, &body)) {
        if (body_path(hd->cfg->workspace_root, body.ptr, body.len,
                      PATH_NONEMPTY, out, hd->path_cap, outlen)) {
            return true;
        }
        if (t->at != CTXC__AT_PATCH) {
            return false; /* one key: malformed, skipped */
        }
    }
    return false;
}

/* Does write call b (resolved to t) touch path[0..plen)? (into buf) */
static bool call_writes(const hd_t *hd, const ctxc__tool_t *t,
                        ctxc_str_t params, const char *path, size_t plen,
                        char *buf) {
    size_t pos = 0, wlen;
    while (call_next_path(hd, t, params, &pos, buf, &wlen)) {
        if (wlen == plen && memcmp(buf, path, plen) == 0) {
            return true;
        }
    }
    return false;
}

static const ctxc__id_slot_t *key_find(const hd_t *hd, unsigned kind,
                                       const char *key, size_t len);

/* The written-path table (hd_t.wtab): open addressing on a path's hash,
 * each slot the hash (ctxc__ids_hash) and 1 + the last position that
 * writes a path of that hash. Paths that share a hash share a slot: the table only says where
 * no write of a path can be (after its slot's position), the scans say
 * the rest. */
static uint32_t wtab_hash(const char *path, size_t n) {
    ctxc_str_t k = {path, n};
    return ctxc__ids_hash(k) | 1u; /* never 0: an empty slot */
}

/* 1 + the last position writing a path of hash h (0: none). */
static size_t wtab_last(const hd_t *hd, uint32_t h) {
    size_t i = h % hd->wtab_cap;
    for (size_t n = 0; n < hd->wtab_cap; n++) {
        const uint32_t *e = &hd->wtab[2u * i];
        if (e[0] == h) {
            return e[1];
        }
        if (e[0] == 0) {
            return 0;
        }
        i = i + 1 < hd->wtab_cap ? i + 1 : 0;
    }
    return 0;
}

/* Notes a write of a path of hash h at position p; a table that fills up
 * is dropped (wtab_cap 0: the scans alone). */
static void wtab_note(hd_t *hd, uint32_t h, size_t p) {
    size_t i = h % hd->wtab_cap;
    for (size_t n = 0; n < hd->wtab_cap * 3u / 4u; n++) {
        uint32_t *e = &hd->wtab[2u * i];
        if (e[0] == 0 || e[0] == h) {
            e[0] = h;
            e[1] = (uint32_t)p + 1u;
            return;
        }
        i = i + 1 < hd->wtab_cap ? i + 1 : 0;
    }
    hd->wtab_cap = 0;
}

/* Is `path` (in hd->path[0]) written by a write call in an entry after
 * position p? */
CTXC__NOINLINE static bool written_after(const hd_t *hd, size_t p,
                                         const char *path, size_t plen) {
    if (HD_KEYS(hd) != NULL) {
        const ctxc__id_slot_t *s = key_find(hd, KEY_PATH, path, plen);
        return s != NULL && s->call > p;
    }
    size_t last = hd->v->count;
    if (hd->wtab_cap > 0) { /* no write of the path's hash after p: none */
        last = wtab_last(hd, wtab_hash(path, plen));
        if (last <= p + 1) {
            return false;
        }
    }
    for (size_t q = last; q-- > p + 1;) { /* the last write first */
        if ((hd->mark[q] & MARK_WRITE) == 0) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(hd->v, q, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            ctxc__tool_t t;
            if (b.type == CTXC_BLOCK_TOOL_CALL &&
                ctxc__tool_resolve(hd->cfg, b.u.tool_call.name,
                                   b.u.tool_call.parameters, &t) != 0 &&
                t.role == CTXC__ROLE_WRITE &&
                call_writes(hd, &t, b.u.tool_call.parameters, path, plen,
                            hd->path[1])) {
                return true;
            }
        }
    }
    return false;
}

/* read_many_files: every path concrete and written later, no include. */
static bool many_files_written_after(const hd_t *hd, size_t p,
                                     ctxc_str_t params) {
    ctxc_str_t paths, inc;
    if (ctxc__json_find_key(params.ptr, params.len, "include", &inc) &&
        !(inc.len == 2 && inc.ptr[0] == '[') && !str_is(inc, "null")) {
        return false; /* include patterns are globs */
    }
    if (!ctxc__json_find_key(params.ptr, params.len, "paths", &paths) ||
        paths.len < 3 || paths.ptr[0] != '[') {
        return false; /* none, empty or malformed */
    }
    size_t pos = 1;
    char *path = hd->path[0];
    while (pos < paths.len && paths.ptr[pos] != ']') {
        size_t end = ctxc__json_skip_value(paths.ptr, paths.len, pos);
        ctxc_str_t el = {paths.ptr + pos, end - pos};
        size_t plen;
        if (el.len < 2 || el.ptr[0] != '"' ||
            !body_path(hd->cfg->workspace_root, el.ptr + 1, el.len - 2,
                       PATH_NO_GLOB, path, hd->path_cap, &plen) ||
            !written_after(hd, p, path, plen)) {
            return false;
        }
        pos = end < paths.len && paths.ptr[end] == ',' ? end + 1 : end;
    }
    return true;
}

/* The read->write rule for call block k of position p. A pruned call must
 * have a response that can be dropped with it. On the indexed path the
 * call's tool comes from its slot (resolved when the index was built). */
static bool rw_prunes(const hd_t *hd, size_t p, size_t k, const ctxc_block_t *b,
                      size_t *q_out, size_t *r_out) {
    if (!hd->cfg->read_write_pruning || b->type != CTXC_BLOCK_TOOL_CALL ||
        k >= MAX_EDIT_BLOCKS) {
        return false;
    }
    ctxc__tool_t t;
    size_t q = 0, r = 0;
    bool found = false;
    const ctxc__id_slot_t *s =
        HD_PAIRS(hd) != NULL ? ctxc__pairs_find(hd->pairs, b->u.tool_call.id)
                             : NULL;
    if (s != NULL && s->call == p && s->call_block == k) {
        ctxc__tool_get(hd->cfg, s->count, &t);
        if (s->resp != CTXC__IDS_NONE && s->resp > p) {
            q = s->resp;
            r = s->resp_block;
            found = true;
        }
    } else {
        (void)ctxc__tool_resolve(hd->cfg, b->u.tool_call.name,
                                 b->u.tool_call.parameters, &t);
    }
    if (t.role != CTXC__ROLE_READ && t.role != CTXC__ROLE_READ_MANY) {
        return false;
    }
    if (!found && !ctxc__pairs_seek(hd->pr, p, b->u.tool_call.id, false, 0, &q,
                                    &r, NULL)) {
        return false;
    }
    if (r >= MAX_EDIT_BLOCKS ||
        (hd->pin != NULL && (hd->pin[p] || hd->pin[q]))) {
        return false; /* a pinned read and its result stay */
    }
    bool pruned;
    if (t.at == CTXC__AT_PATHS) {
        pruned = many_files_written_after(hd, p, b->u.tool_call.parameters);
    } else {
        size_t pos = 0, plen;
        pruned = call_next_path(hd, &t, b->u.tool_call.parameters, &pos,
                                hd->path[0], &plen) &&
                 written_after(hd, p, hd->path[0], plen);
    }
    if (pruned && q_out != NULL) {
        *q_out = q;
        *r_out = r;
    }
    return pruned;
}

/* Is response block k of position q dropped with its pruned read call? */
static bool rw_drops_response(const hd_t *hd, size_t q, size_t k,
                              const ctxc_block_t *b) {
    if ((hd->mark[q] & MARK_RWRESP) == 0) {
        return false;
    }
    if (HD_PAIRS(hd) != NULL) { /* a pruned call's response is its only one */
        const ctxc__id_slot_t *s =
            ctxc__pairs_find(hd->pairs, b->u.tool_response.call_id);
        return s != NULL && (s->flags & ID_PRUNED) != 0 && s->resp == q &&
               s->resp_block == k;
    }
    size_t p, ck, rq, rk;
    ctxc_block_t call;
    return ctxc__pairs_seek(hd->pr, q, b->u.tool_response.call_id, true, 0, &p,
                            &ck, &call) &&
           (hd->mark[p] & MARK_RWCALL) != 0 &&
           rw_prunes(hd, p, ck, &call, &rq, &rk) && rq == q && rk == k;
}

/* ---- @file inclusions ---------------------------------------------------- */

typedef struct {
    size_t start;      /* first byte of the opening marker line */
    size_t path, plen; /* the path inside the marker */
    size_t body, blen; /* the content between the marker lines */
    size_t end;        /* after the closing marker */
} incl_t;

static size_t line_end(const char *t, size_t n, size_t i) {
    const char *nl = memchr(t + i, '\n', n - i);
    return nl != NULL ? (size_t)(nl - t) : n;
}

static bool is_open_marker(const char *t, size_t a, size_t b) {
    return b - a > 8 && memcmp(t + a, "--- ", 4) == 0 &&
           memcmp(t + b - 4, " ---", 4) == 0 &&
           !(b - a == sizeof END_MARKER - 1 &&
             memcmp(t + a, END_MARKER, b - a) == 0);
}

static bool is_close_marker(const char *t, size_t a, size_t b) {
    return b - a == sizeof END_MARKER - 1 &&
           memcmp(t + a, END_MARKER, b - a) == 0;
}

/* Next complete inclusion at or after byte `from`. An opening marker with
 * no closing marker before the next opening one is unpaired: skipped. */
static bool next_inclusion(const char *t, size_t n, size_t from, incl_t *in) {
    size_t i = from;
    while (i < n) {
        size_t e = line_end(t, n, i);
        if ((i == 0 || t[i - 1] == '\n') && is_open_marker(t, i, e)) {
            size_t j = e + 1;
            while (j < n) {
                size_t f = line_end(t, n, j);
                if (is_close_marker(t, j, f)) {
                    in->start = i;
                    in->path = i + 4;
                    in->plen = e - i - 8;
                    in->body = e + 1;
                    in->blen = j > e + 1 ? j - 1 - (e + 1) : 0;
                    in->end = f;
                    return true;
                }
                if (is_open_marker(t, j, f)) {
                    break; /* unpaired: try again from that marker */
                }
                j = f + 1;
            }
            i = e + 1;
            continue;
        }
        i = e + 1;
    }
    return false;
}

static bool same_include_path(const hd_t *hd, const char *a, size_t alen,
                              const char *b, size_t blen) {
    char *ra = hd->path[0], *rb = hd->path[1];
    size_t la, lb;
    if (!resolve_path(hd->cfg->workspace_root, a, alen, ra, hd->path_cap,
                      &la) ||
        !resolve_path(hd->cfg->workspace_root, b, blen, rb, hd->path_cap,
                      &lb)) {
        return alen == blen && memcmp(a, b, alen) == 0;
    }
    return la == lb && memcmp(ra, rb, la) == 0;
}

/* ---- the key table of the indexed path ---------------------------------- */

static uint32_t key_hash(unsigned kind, const char *key, size_t len) {
    ctxc_str_t k = {key, len};
    return (ctxc__ids_hash(k) & 0x3FFFFFFFu) | ((uint32_t)kind << 30);
}

/* Byte offset of an inclusion kept in a slot (resp: high half). */
static size_t slot_offset(const ctxc__id_slot_t *s) {
    return ((size_t)s->resp << 16) | s->resp_block;
}

/* Whether the key held by `slot` (re-read where it was seen) is `key`. */
static bool key_match(void *ctx, const ctxc__id_slot_t *slot, ctxc_str_t key) {
    const hd_t *hd = (const hd_t *)ctx;
    ctxc_entry_t e;
    ctxc_block_t b;
    ctxc_view_get(hd->v, slot->call, &e);
    if (ctxc_entry_block(&e, slot->call_block, &b) != CTXC_OK) {
        return false;
    }
    unsigned kind = slot->hash >> 30;
    char *buf = hd->path[1];
    size_t len;
    if (kind == KEY_PATH && (slot->flags & KEY_BYTES) && hd->pool != NULL) {
        return slot->count == key.len &&
               memcmp(hd->pool + slot_offset(slot), key.ptr, key.len) == 0;
    }
    if (kind == KEY_PATH) { /* any path the write call touches */
        ctxc__tool_t t;
        (void)ctxc__tool_resolve(hd->cfg, b.u.tool_call.name,
                                 b.u.tool_call.parameters, &t);
        return t.role == CTXC__ROLE_WRITE &&
               call_writes(hd, &t, b.u.tool_call.parameters, key.ptr, key.len,
                           buf);
    }
    if (kind == KEY_TOOL) {
        return ctxc__str_eq(b.u.tool_response.tool_name, key);
    }
    const char *t = b.u.text.text.ptr;
    size_t at = slot_offset(slot);
    size_t end = line_end(t, b.u.text.text.len, at);
    const char *raw = t + at + 4;
    size_t rawlen = end - at - 8;
    if (kind == KEY_INCL_RAW) {
        return rawlen == key.len && memcmp(raw, key.ptr, rawlen) == 0;
    }
    return resolve_path(hd->cfg->workspace_root, raw, rawlen, buf, hd->path_cap,
                        &len) &&
           len == key.len && memcmp(buf, key.ptr, len) == 0;
}

static const ctxc__id_slot_t *key_find(const hd_t *hd, unsigned kind,
                                       const char *key, size_t len) {
    ctxc_str_t k = {key, len};
    return ctxc__ids_find(hd->keys, k, key_hash(kind, key, len), key_match,
                          (void *)(uintptr_t)hd);
}

/* The slot of a key, added (seen at p, block k) when new; NULL when the
 * table is full. */
static ctxc__id_slot_t *key_add(const hd_t *hd, unsigned kind, const char *key,
                                size_t len, size_t p, size_t k) {
    ctxc_str_t ks = {key, len};
    ctxc__id_slot_t *s = ctxc__ids_add(hd->keys, ks, key_hash(kind, key, len),
                                       key_match, (void *)(uintptr_t)hd);
    if (s != NULL && s->call == CTXC__IDS_NONE) {
        s->call = (uint16_t)p;
        s->call_block = (uint16_t)k;
    }
    return s;
}

/* The key of an inclusion: its resolved path, or the path as written when
 * it does not resolve (compared as written, like same_include_path). */
static unsigned incl_key(const hd_t *hd, const char *t, const incl_t *in,
                         char *buf, const char **key, size_t *len) {
    if (resolve_path(hd->cfg->workspace_root, t + in->path, in->plen, buf,
                     hd->path_cap, len)) {
        *key = buf;
        return KEY_INCL;
    }
    *key = t + in->path;
    *len = in->plen;
    return KEY_INCL_RAW;
}

/* Counts one more inclusion of its path (pass 0); false when the table is
 * full. */
static bool incl_count(const hd_t *hd, size_t p, size_t k, const char *t,
                       const incl_t *in) {
    const char *key;
    size_t len;
    unsigned kind = incl_key(hd, t, in, hd->path[0], &key, &len);
    ctxc__id_slot_t *s = key_add(hd, kind, key, len, p, k);
    if (s == NULL || s->count == 0xFFFFu || in->start > 0xFFFFFFFFu) {
        return false;
    }
    if (s->count++ == 0) { /* where it was first seen, to compare keys */
        s->resp = (uint16_t)(in->start >> 16);
        s->resp_block = (uint16_t)(in->start & 0xFFFFu);
    }
    return true;
}

/* Takes one inclusion off its path's count (pass 3, in the same order):
 * whether the path is included again later. */
static bool incl_consume(const hd_t *hd, const char *t, const incl_t *in) {
    const char *key;
    size_t len;
    unsigned kind = incl_key(hd, t, in, hd->path[0], &key, &len);
    ctxc__id_slot_t *s =
        (ctxc__id_slot_t *)(uintptr_t)key_find(hd, kind, key, len);
    if (s == NULL || s->count == 0) {
        return false; /* cannot happen: pass 0 counted it */
    }
    return --s->count > 0;
}

/* Counts the inclusions of a human text block (pass 0, marking the entry
 * MARK_INCL) or takes them off (pass 3, `consume`). */
static bool incl_walk(const hd_t *hd, size_t p, size_t k, ctxc_str_t text,
                      bool consume) {
    size_t at = 0;
    incl_t in;
    while (next_inclusion(text.ptr, text.len, at, &in)) {
        if (consume) {
            (void)incl_consume(hd, text.ptr, &in);
        } else if (!incl_count(hd, p, k, text.ptr, &in)) {
            return false;
        } else {
            hd->mark[p] |= MARK_INCL;
        }
        at = in.end;
    }
    return true;
}

/* Is inclusion `in` of text block k at position p included again later? */
static bool included_later(const hd_t *hd, size_t p, size_t k, const char *t,
                           const incl_t *in) {
    for (size_t q = p; q < hd->v->count; q++) {
        if (speaker_at(hd->v, q) != CTXC_SPEAKER_HUMAN) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(hd->v, q, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t j = 0; ctxc_entry_next_block(&e, &cur, &b); j++) {
            if (b.type != CTXC_BLOCK_TEXT || (q == p && j < k)) {
                continue;
            }
            const char *u = b.u.text.text.ptr;
            size_t un = b.u.text.text.len;
            size_t at = (q == p && j == k) ? in->end : 0;
            incl_t x;
            while (next_inclusion(u, un, at, &x)) {
                if (same_include_path(hd, t + in->path, in->plen, u + x.path,
                                      x.plen)) {
                    return true;
                }
                at = x.end;
            }
        }
    }
    return false;
}

/* ---- per-entry edits ----------------------------------------------------- */

#define ED_DROP 1u    /* block removed (read->write) */
#define ED_POINTER 2u /* result replaced by the pointer text (recency) */
#define ED_RETEXT 4u  /* text block rewritten (dedupe) */
#define ED_SPILL 8u   /* result replaced by a pointer with an id (spilled) */

/* (per-block bytes, not 64-bit masks: variable 64-bit shifts are long on
 * 32-bit targets) */
typedef struct {
    uint8_t what[MAX_EDIT_BLOCKS]; /* ED_* of each block */
    unsigned all;                  /* the ED_* of all blocks */
    size_t text_block[MAX_TEXT_EDITS];
    ctxc_str_t text[MAX_TEXT_EDITS];
    size_t ntext;
} hd_edit_t;

static bool apply_edit(void *user, size_t index, ctxc_block_t *b) {
    const hd_edit_t *ed = (const hd_edit_t *)user;
    if (index >= MAX_EDIT_BLOCKS) {
        return true;
    }
    unsigned what = ed->what[index];
    if (what & ED_DROP) {
        return false;
    }
    if (what & ED_POINTER) {
        b->u.tool_response.result = CTXC_STR_LIT(POINTER_JSON);
    }
    if (what & (ED_RETEXT | ED_SPILL)) {
        for (size_t i = 0; i < ed->ntext; i++) {
            if (ed->text_block[i] != index) {
                continue;
            }
            if (what & ED_SPILL) {
                b->u.tool_response.result = ed->text[i];
            } else {
                b->u.text.text = ed->text[i];
            }
        }
    }
    return true;
}

/* Newer responses of the same tool (not dropped by read->write) than block
 * k of position q, counted up to `enough`. */
CTXC__NOINLINE static size_t newer_results(const hd_t *hd, size_t q, size_t k,
                                           ctxc_str_t tool, size_t enough) {
    size_t n = 0;
    for (size_t p = q; p < hd->v->count && n < enough; p++) {
        if (speaker_at(hd->v, p) != CTXC_SPEAKER_TOOL) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(hd->v, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t j = 0; ctxc_entry_next_block(&e, &cur, &b) && n < enough;
             j++) {
            if ((p == q && j <= k) || b.type != CTXC_BLOCK_TOOL_RESPONSE ||
                !ctxc__str_eq(b.u.tool_response.tool_name, tool) ||
                rw_drops_response(hd, p, j, &b)) {
                continue;
            }
            n++;
        }
    }
    return n;
}

/* The spilled notes of a dedupe text t[0..n) (the i-th note's id at
 * t[at[i]]) rewritten as the notes without a store: their length. */
static size_t plain_notes(char *t, size_t n, const size_t *at, size_t count) {
    size_t w = 0, rd = 0;
    for (size_t i = 0; i < count; i++) {
        size_t from = at[i] - SPILL_NOTE_ID_AT;
        memmove(t + w, t + rd, from - rd);
        w += from - rd;
        memcpy(t + w, DEDUPE_NOTE, sizeof DEDUPE_NOTE - 1u);
        w += sizeof DEDUPE_NOTE - 1u;
        rd = from + sizeof SPILL_NOTE - 1u;
    }
    memmove(t + w, t + rd, n - rd);
    return w + n - rd;
}

/* Builds the dedupe text of a human text block into the scratch tail. */
CTXC__NOINLINE static ctxc_status_t
dedupe_text(const hd_t *hd, size_t p, size_t k, ctxc_str_t text,
            ctxc_density_result_t *r, ctxc_str_t *out, size_t *replaced,
            ctxc_error_t *err) {
    const char *t = text.ptr;
    size_t n = text.len;
    ctxc__sink_t s = {(char *)r->scratch + r->scratch_used,
                      r->scratch_cap - r->scratch_used, 0};
    size_t copied = 0;
    size_t at = 0;
    incl_t in;
    *replaced = 0;
    bool spill = hd->cfg->spill != NULL;
    const char *note = spill ? SPILL_NOTE : DEDUPE_NOTE;
    size_t note_len = spill ? sizeof SPILL_NOTE - 1u : sizeof DEDUPE_NOTE - 1u;
    size_t notes[SPILL_NOTES]; /* where the spilled notes' ids go */
    while (next_inclusion(t, n, at, &in)) {
        /* the indexed path takes every inclusion off its count, in order */
        bool later = HD_KEYS(hd) != NULL && incl_consume(hd, t, &in);
        if (in.blen > note_len && (!spill || *replaced < SPILL_NOTES) &&
            (HD_KEYS(hd) != NULL ? later : included_later(hd, p, k, t, &in))) {
            ctxc__put(&s, t + copied, in.body - copied);
            if (spill) {
                notes[*replaced] = s.len + SPILL_NOTE_ID_AT;
            }
            ctxc__put(&s, note, note_len);
            copied = in.body + in.blen;
            (*replaced)++;
        }
        at = in.end;
    }
    if (*replaced == 0) {
        return CTXC_OK;
    }
    ctxc__put(&s, t + copied, n - copied);
    if (s.len > s.cap) {
        return ctxc__fail_space(
            err, s.len - s.cap,
            "work scratch area full while deduplicating "
            "file inclusions (CTXC_CFG_WORK_SCRATCH_BYTES)");
    }
    if (ctxc_estimate_text(s.buf, s.len) >= ctxc_estimate_text(t, n)) {
        *replaced = 0; /* shorter in bytes, not in tokens: leave it */
        return CTXC_OK;
    }
    if (spill) { /* the original block first, then its id in each note */
        char id[SPILL_ID_LEN + 1u];
        ctxc_status_t st = hd->cfg->spill(
            hd->cfg->spill_user, ctxc_view_index(hd->v, p), k, id, err);
        if (st == CTXC_E_NO_SPACE) {
            /* the store cannot take it: the notes without an id */
            s.len = plain_notes(s.buf, s.len, notes, *replaced);
            r->counts.spill_full++;
        } else if (st != CTXC_OK) {
            return st;
        } else {
            for (size_t i = 0; i < *replaced; i++) {
                memcpy(s.buf + notes[i], id, SPILL_ID_LEN);
            }
        }
    }
    out->ptr = s.buf;
    out->len = s.len;
    r->scratch_used += s.len; /* reclaimed after the record is written */
    return CTXC_OK;
}

static uint32_t block_tokens(ctxc_estimate_fn fn, void *user,
                             const ctxc_block_t *b) {
    return fn != NULL ? fn(user, b) : ctxc_estimate_block_default(NULL, b);
}

/* Is read call block k of position p pruned (read->write)? */
static bool call_pruned(const hd_t *hd, size_t p, size_t k,
                        const ctxc_block_t *b) {
    if (HD_PAIRS(hd) != NULL) { /* decided once, in the pruning pass */
        const ctxc__id_slot_t *s =
            ctxc__pairs_find(hd->pairs, b->u.tool_call.id);
        return s != NULL && (s->flags & ID_PRUNED) != 0 && s->call == p &&
               s->call_block == k;
    }
    return rw_prunes(hd, p, k, b, NULL, NULL);
}

/* Has response block k of position q `retention` newer results of its tool
 * (recency)? */
static bool recency_prunes(const hd_t *hd, size_t q, size_t k,
                           const ctxc_block_t *b, uint32_t retention) {
    if (HD_PAIRS(hd) != NULL) { /* decided once, in the recency pass */
        if (k < RECENT_BLOCKS) {
            return (hd->mark[q] & (MARK_RECENT_BLOCK0 << k)) != 0;
        }
        const ctxc__id_slot_t *s =
            ctxc__pairs_find(hd->pairs, b->u.tool_response.call_id);
        return s != NULL && (s->flags & ID_RECENT) != 0;
    }
    return newer_results(hd, q, k, b->u.tool_response.tool_name, retention) >=
           retention;
}

/* Records the edits ed of entry e (position p) decided by edit_entry: the
 * entry removed or its replacement written (over the temporary texts from
 * temp_start on), and the counts. A frame of its own: the record writer's
 * chain does not carry edit_entry's decision locals twice. */
CTXC__NOINLINE static ctxc_status_t
write_edit(const hd_t *hd, hd_edit_t *ed, const ctxc_entry_t *ep, size_t p,
           size_t temp_start, size_t dedupe, size_t recency,
           ctxc_density_result_t *r, ctxc_error_t *err) {
    size_t index = ctxc_view_index(hd->v, p);
    ctxc__entry_edit_t src_ed = {ep, apply_edit, ed, NULL, 0, NULL, 0, 0};
    size_t remaining = ctxc__entry_edit_count(&src_ed);
    ctxc_status_t st;
    if (remaining == 0) {
        r->scratch_used = temp_start;
        st = ctxc__density_remove(r, index, err);
        if (st == CTXC_OK) {
            r->counts.read_write_entries_removed++;
        }
        return st;
    }
    ctxc__entry_src_t src = {
        ep->speaker,
        remaining,
        ctxc__entry_edit_block,
        &src_ed,
        {ep->metadata.ptr, ep->metadata.len, CTXC__SRC_VALID}};
    size_t before = r->n_replacements;
    st = ctxc__density_replace(r, index, &src, NULL, NULL, err);
    if (st != CTXC_OK) {
        r->scratch_used = temp_start;
        return st;
    }
    /* slide the record over the temporary texts it was built from */
    ctxc_plan_op_t *op = &r->replacements[before];
    if (op->offset > temp_start) {
        memmove(r->scratch + temp_start, r->scratch + op->offset, op->size);
        op->offset = (uint32_t)temp_start;
        r->scratch_used = temp_start + op->size;
    }
    if (ed->all & ED_DROP) {
        r->counts.read_write_entries_replaced++;
    }
    if (dedupe) {
        r->counts.file_dedupe_replaced += dedupe;
        r->counts.file_dedupe_entries++;
    }
    if (recency) {
        r->counts.recency_pruned += recency;
        r->counts.recency_entries++;
    }
    return CTXC_OK;
}

/* With a spill hook: result block k of position p (b) becomes the pointer
 * with its id when that is smaller (ed->what[k] = ED_SPILL; else 0): the
 * block is spilled first, the pointer text goes to the scratch tail. */
CTXC__NOINLINE static ctxc_status_t
spill_pointer(const hd_t *hd, hd_edit_t *ed, size_t p, size_t k,
              const ctxc_block_t *b, ctxc_density_result_t *r,
              ctxc_error_t *err) {
    ed->what[k] = 0;
    if (is_pointer(b->u.tool_response.result) || ed->ntext >= MAX_TEXT_EDITS ||
        !ctxc__estimate_result_smaller(b, CTXC_STR_LIT(SPILL_POINTER_JSON))) {
        return CTXC_OK; /* a pointer already, no room to note it, or larger */
    }
    size_t n = sizeof SPILL_POINTER_JSON - 1u;
    if (r->scratch_cap - r->scratch_used < n) {
        return ctxc__fail_space(err, n - (r->scratch_cap - r->scratch_used),
                                "work scratch area full while pruning "
                                "(CTXC_CFG_WORK_SCRATCH_BYTES)");
    }
    char id[SPILL_ID_LEN + 1u];
    ctxc_status_t st = hd->cfg->spill(hd->cfg->spill_user,
                                      ctxc_view_index(hd->v, p), k, id, err);
    if (st == CTXC_E_NO_SPACE) {
        /* the store cannot take it (full of this step's blocks, or the
         * entry over the hook's buffer): pruned as without a store, the
         * pointer without an id, and said in the counts; a step never
         * fails for want of room in the store */
        if (ctxc__estimate_result_smaller(b, CTXC_STR_LIT(POINTER_JSON))) {
            ed->what[k] = ED_POINTER;
            r->counts.spill_full++;
        }
        return CTXC_OK;
    }
    if (st != CTXC_OK) {
        return st;
    }
    char *t = (char *)r->scratch + r->scratch_used;
    memcpy(t, SPILL_POINTER_JSON, n);
    memcpy(t + SPILL_POINTER_ID_AT, id, SPILL_ID_LEN);
    r->scratch_used += n; /* reclaimed after the record is written */
    ed->text_block[ed->ntext] = k;
    ed->text[ed->ntext++] = (ctxc_str_t){t, n};
    ed->what[k] = ED_SPILL;
    return CTXC_OK;
}

/* Decides and records the edits of position p. */
CTXC__NOINLINE static ctxc_status_t edit_entry(const hd_t *hd, hd_edit_t *edp,
                                               size_t p,
                                               ctxc_density_result_t *r,
                                               ctxc_error_t *err) {
    ctxc_entry_t e;
    ctxc_view_get(hd->v, p, &e);
    hd_edit_t *ed = edp;
    memset(ed, 0, sizeof *ed);
    size_t temp_start = r->scratch_used;
    size_t dedupe = 0, recency = 0;
    const ctxc_density_config_t *cfg = hd->cfg;
    uint32_t retention =
        cfg->recency_retention < 1 ? 1 : cfg->recency_retention;

    const uint8_t *cur = NULL;
    ctxc_block_t b;
    size_t k = 0;
    /* a pinned entry is never edited (its inclusions still count below) */
    bool pinned = hd->pin != NULL && hd->pin[p];
    for (;
         !pinned && k < MAX_EDIT_BLOCKS && ctxc_entry_next_block(&e, &cur, &b);
         k++) {
        unsigned what = 0;
        if (b.type == CTXC_BLOCK_TOOL_CALL && (hd->mark[p] & MARK_RWCALL) &&
            call_pruned(hd, p, k, &b)) {
            what = cfg->spill != NULL ? 0u : ED_DROP; /* spilled: it stays */
        } else if (b.type == CTXC_BLOCK_TOOL_RESPONSE) {
            if (rw_drops_response(hd, p, k, &b)) {
                if (cfg->spill == NULL) {
                    what = ED_DROP;
                } else {
                    ctxc_status_t st = spill_pointer(hd, ed, p, k, &b, r, err);
                    if (st != CTXC_OK) {
                        r->scratch_used = temp_start;
                        return st;
                    }
                    what = ed->what[k];
                    if (what == 0) { /* left as it is: not pruned */
                        r->counts.read_write_pruned--;
                    }
                }
            } else if (cfg->recency_pruning &&
                       !is_pointer(b.u.tool_response.result) &&
                       cfg->spill != NULL &&
                       recency_prunes(hd, p, k, &b, retention)) {
                ctxc_status_t st = spill_pointer(hd, ed, p, k, &b, r, err);
                if (st != CTXC_OK) {
                    r->scratch_used = temp_start;
                    return st;
                }
                what = ed->what[k];
                recency += what != 0 ? 1u : 0u;
            } else if (cfg->recency_pruning &&
                       !is_pointer(b.u.tool_response.result) &&
                       recency_prunes(hd, p, k, &b, retention)) {
                /* a result whose length alone puts it above the pointer
                 * is not counted */
                if ((b.u.tool_response.error.ptr == NULL &&
                     ctxc__estimate_value_floor(b.u.tool_response.result) >
                         hd->pointer_tokens) ||
                    ctxc__estimate_result_smaller(&b,
                                                  CTXC_STR_LIT(POINTER_JSON))) {
                    what = ED_POINTER;
                    recency++;
                }
            }
        } else if (b.type == CTXC_BLOCK_TEXT && cfg->file_dedupe &&
                   e.speaker == CTXC_SPEAKER_HUMAN) {
            if (ed->ntext >= MAX_TEXT_EDITS) {
                if (HD_KEYS(hd) != NULL) { /* keep the counts in step */
                    (void)incl_walk(hd, p, k, b.u.text.text, true);
                }
                continue;
            }
            size_t replaced;
            ctxc_str_t nt;
            ctxc_status_t st =
                dedupe_text(hd, p, k, b.u.text.text, r, &nt, &replaced, err);
            if (st != CTXC_OK) {
                r->scratch_used = temp_start;
                return st;
            }
            if (replaced > 0) {
                what = ED_RETEXT;
                ed->text_block[ed->ntext] = k;
                ed->text[ed->ntext++] = nt;
                dedupe += replaced;
            }
        }
        ed->what[k] = (uint8_t)what;
        ed->all |= what;
    }
    /* blocks past the editable ones: their inclusions still count */
    while (HD_KEYS(hd) != NULL && cfg->file_dedupe &&
           e.speaker == CTXC_SPEAKER_HUMAN &&
           ctxc_entry_next_block(&e, &cur, &b)) {
        if (b.type == CTXC_BLOCK_TEXT) {
            (void)incl_walk(hd, p, k, b.u.text.text, true);
        }
        k++;
    }
    if (ed->all == 0) {
        return CTXC_OK;
    }
    return write_edit(hd, ed, &e, p, temp_start, dedupe, recency, r, err);
}

/* ---- the indexed path: passes over the whole view ------------------------ */

/* Pass 0: marks the entries with write calls, and puts the latest write of
 * each path, the @file inclusions of each path and the tool names into the
 * key table. False when the table is full. */
typedef enum { INDEX_OK, INDEX_IDS_FULL, INDEX_KEYS_FULL } index_result_t;

/* Pass 0 for call block k of position p: its id, and its tool resolved
 * once (a read's reference kept in its id's slot; a write's paths put into
 * the key table). */
static index_result_t index_call(hd_t *hd, ctxc__pairs_t *pairs,
                                 const ctxc_entry_t *e, const ctxc_block_t *b,
                                 size_t p, size_t k) {
    ctxc_str_t id = b->u.tool_call.id;
    ctxc__id_slot_t *ids =
        k < CTXC__IDS_NONE ? ctxc__ids_add(&pairs->ix, id, ctxc__ids_hash(id),
                                           ctxc__ids_match_at, &pairs->at)
                           : NULL;
    if (ids == NULL) {
        return INDEX_IDS_FULL;
    }
    ids->call = (uint16_t)p;
    ids->call_block = (uint16_t)k;
    if (e->speaker != CTXC_SPEAKER_AI) {
        return INDEX_OK;
    }
    ctxc__tool_t t;
    ctxc__tool_ref_t ref = ctxc__tool_resolve(hd->cfg, b->u.tool_call.name,
                                              b->u.tool_call.parameters, &t);
    if (t.role == CTXC__ROLE_READ || t.role == CTXC__ROLE_READ_MANY) {
        hd->mark[p] |= MARK_READ;
        ids->count = ref;
        return INDEX_OK;
    }
    if (t.role != CTXC__ROLE_WRITE || !hd->cfg->read_write_pruning) {
        return INDEX_OK;
    }
    hd->mark[p] |= MARK_WRITE;
    char *path = hd->path[0];
    size_t pos = 0, plen;
    while (
        call_next_path(hd, &t, b->u.tool_call.parameters, &pos, path, &plen)) {
        ctxc__id_slot_t *s = key_add(hd, KEY_PATH, path, plen, p, k);
        if (s == NULL) {
            return INDEX_KEYS_FULL;
        }
        if ((s->flags & KEY_BYTES) == 0 && hd->pool != NULL &&
            plen <= hd->pool_cap - hd->pool_used &&
            (uint64_t)hd->pool_used + plen <= 0xFFFFFFFFu) {
            memcpy(hd->pool + hd->pool_used, path, plen);
            s->resp = (uint16_t)(hd->pool_used >> 16);
            s->resp_block = (uint16_t)(hd->pool_used & 0xFFFFu);
            s->count = (uint16_t)plen;
            s->flags |= KEY_BYTES;
            hd->pool_used += plen;
        }
        if ((s->flags & KEY_BYTES) == 0 && t.at == CTXC__AT_PATCH) {
            /* a call of several paths is matched by its bytes only */
            return INDEX_KEYS_FULL;
        }
        s->call = (uint16_t)p; /* the latest write */
        s->call_block = (uint16_t)k;
    }
    return INDEX_OK;
}

static index_result_t index_keys(hd_t *hd, ctxc__pairs_t *pairs) {
    const ctxc_density_config_t *cfg = hd->cfg;
    ctxc_str_t last_tool = CTXC_STR_ABSENT; /* the tool of the last result */
    for (size_t p = 0; p < hd->v->count; p++) {
        ctxc_entry_t e;
        ctxc_view_get(hd->v, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
            if (b.type == CTXC_BLOCK_TOOL_RESPONSE &&
                !ctxc__ids_add_block(&pairs->ix, &pairs->at, &b, p, k)) {
                return INDEX_IDS_FULL;
            }
            if (b.type == CTXC_BLOCK_TOOL_CALL) {
                index_result_t r = index_call(hd, pairs, &e, &b, p, k);
                if (r != INDEX_OK) {
                    return r;
                }
            } else if (e.speaker == CTXC_SPEAKER_HUMAN &&
                       b.type == CTXC_BLOCK_TEXT && cfg->file_dedupe) {
                if (!incl_walk(hd, p, k, b.u.text.text, false)) {
                    return INDEX_KEYS_FULL;
                }
            } else if (e.speaker == CTXC_SPEAKER_TOOL &&
                       b.type == CTXC_BLOCK_TOOL_RESPONSE &&
                       cfg->recency_pruning) {
                ctxc_str_t name = b.u.tool_response.tool_name;
                if (!(last_tool.ptr != NULL && /* added just before */
                      ctxc__str_eq(name, last_tool)) &&
                    key_add(hd, KEY_TOOL, name.ptr, name.len, p, k) == NULL) {
                    return INDEX_KEYS_FULL;
                }
                last_tool = name;
            }
        }
    }
    pairs->ok = true;
    return INDEX_OK;
}

static void clear_marks(const hd_t *hd) {
    memset(hd->mark, 0, hd->v->count * sizeof hd->mark[0]);
}

/* Sets up the indexed path over the work area's index: false (marks
 * cleared) when a table is too small. */
HD_INDEXED_NOINLINE static bool index_prepare(hd_t *hd, ctxc__pairs_t *pairs,
                                              ctxc__id_index_t *keys) {
    const ctxc_work_t *w = hd->work;
    if (CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY == 0 || /* compiled out */
        w->index == NULL || w->index_slots == 0) {
        return false;
    }
    size_t bytes = w->index_slots * CTXC_WORK_INDEX_SLOT_BYTES;
    uint8_t *mem = (uint8_t *)w->index + bytes;
    hd->keys = keys;
    size_t want = ctxc__view_blocks(hd->v);
    size_t first_cap = 0;
    for (int attempt = 0; attempt < 2; attempt++) {
        /* first a table for one key per block, then all the memory */
        ctxc__ids_init_for(keys, mem, bytes, attempt == 0 ? want : SIZE_MAX);
        if (attempt == 1 && keys->cap <= first_cap) {
            break; /* no larger table to try */
        }
        first_cap = keys->cap;
        clear_marks(hd);
        hd->pool = (char *)w->scratch;
        hd->pool_cap = w->scratch != NULL ? w->scratch_cap : 0;
        hd->pool_used = 0;
        if (!ctxc__pairs_begin(pairs, hd->v, w->index, bytes)) {
            break;
        }
        index_result_t r = index_keys(hd, pairs);
        if (r == INDEX_OK) {
            hd->pairs = pairs;
            return true;
        }
        if (r == INDEX_IDS_FULL) {
            break;
        }
    }
    hd->keys = NULL;
    hd->pool = NULL;
    clear_marks(hd);
    return false;
}

/* The recency pass: per tool name, pass 0 counts the results that stay
 * (those read->write drops, only in entries marked MARK_RWRESP, do not),
 * pass 1 takes each off again in the same order, so what is left is the
 * number of newer ones; a result with `retention` newer ones is marked
 * recent: in its entry's marks (blocks below RECENT_BLOCKS) or as ID_RECENT
 * in its id's slot. The count is 32 bits in a tool key's flags (high half)
 * and count (low half), both 0 in a new slot. */
HD_INDEXED_NOINLINE static void recency_pass(const hd_t *hd,
                                             uint32_t retention) {
    for (int pass = 0; pass < 2; pass++) {
        ctxc_str_t last_name = CTXC_STR_ABSENT; /* the last result's tool */
        ctxc__id_slot_t *t = NULL;              /* and its slot */
        for (size_t p = 0; p < hd->v->count; p++) {
            if (speaker_at(hd->v, p) != CTXC_SPEAKER_TOOL) {
                continue;
            }
            ctxc_entry_t e;
            ctxc_view_get(hd->v, p, &e);
            bool rw = (hd->mark[p] & MARK_RWRESP) != 0;
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
                if (b.type != CTXC_BLOCK_TOOL_RESPONSE) {
                    continue;
                }
                ctxc__id_slot_t *id = NULL;
                if (rw || k >= RECENT_BLOCKS) {
                    id = ctxc__pairs_find(hd->pairs, b.u.tool_response.call_id);
                    if (id == NULL || (id->flags & ID_PRUNED) != 0) {
                        continue; /* dropped (or not indexed: cannot be) */
                    }
                }
                ctxc_str_t name = b.u.tool_response.tool_name;
                if (t == NULL || !ctxc__str_eq(name, last_name)) {
                    t = (ctxc__id_slot_t *)(uintptr_t)key_find(
                        hd, KEY_TOOL, name.ptr, name.len);
                    last_name = name;
                    if (t == NULL) {
                        continue; /* cannot happen: every tool is indexed */
                    }
                }
                uint32_t n = ((uint32_t)t->flags << 16 | t->count) +
                             (pass == 0 ? 1u : 0xFFFFFFFFu);
                t->flags = (uint16_t)(n >> 16);
                t->count = (uint16_t)n;
                if (pass == 1 && n >= retention) {
                    hd->mark[p] |= MARK_RECENT;
                    if (k < RECENT_BLOCKS) {
                        hd->mark[p] |= (uint16_t)(MARK_RECENT_BLOCK0 << k);
                    } else {
                        id->flags |= ID_RECENT;
                    }
                }
            }
        }
    }
}

/* On the indexed path (calls only in ai entries, results only in tool
 * entries: the store's pairing rule), whether entry p can have an edit: a
 * pruned read, a dropped or recency-pruned result, an @file inclusion. */
static bool may_edit(const hd_t *hd, size_t p) {
    uint16_t m = hd->mark[p];
    return (m & (MARK_RWCALL | MARK_RWRESP | MARK_RECENT)) != 0 ||
           ((m & MARK_INCL) != 0 && hd->cfg->file_dedupe);
}

/* The density step's state. It is kept in the work area's plan operations
 * (`ops`), which the step does not use (ctxc_density_apply does, after it),
 * before the two path buffers; a work area too small for both keeps it on
 * the stack (hd_optimize_small). */
typedef struct {
    hd_t hd;
    ctxc__pairs_t pairs;
    ctxc__id_index_t keys;
    hd_edit_t ed;
} hd_state_t;

/* Bytes of hd_state_t as the ops region holds it (the path buffers after
 * it stay 8-byte aligned). */
#define HD_STATE_BYTES ((sizeof(hd_state_t) + 7u) & ~(size_t)7u)

/* The estimate of a result that is the pointer text alone. */
CTXC__NOINLINE static uint32_t pointer_tokens(void) {
    ctxc_block_t pointer;
    memset(&pointer, 0, sizeof pointer);
    pointer.type = CTXC_BLOCK_TOOL_RESPONSE;
    pointer.u.tool_response.result = CTXC_STR_LIT(POINTER_JSON);
    return ctxc_estimate_block_default(NULL, &pointer);
}

/* Without the index: marks the ai entries with a write call, and notes
 * their paths in the written-path table. */
CTXC__NOINLINE static void mark_writes(hd_t *hd) {
    const ctxc_view_t *raw = hd->v;
    if (hd->wtab_cap > 0) {
        memset(hd->wtab, 0, hd->wtab_cap * 2u * sizeof hd->wtab[0]);
    }
    for (size_t p = 0; p < raw->count; p++) {
        if (speaker_at(raw, p) != CTXC_SPEAKER_AI) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(raw, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (e.speaker == CTXC_SPEAKER_AI &&
               ctxc_entry_next_block(&e, &cur, &b)) {
            ctxc__tool_t t;
            if (b.type == CTXC_BLOCK_TOOL_CALL &&
                ctxc__tool_resolve(hd->cfg, b.u.tool_call.name,
                                   b.u.tool_call.parameters, &t) != 0 &&
                t.role == CTXC__ROLE_WRITE) {
                hd->mark[p] |= MARK_WRITE;
                size_t pos = 0, wlen;
                while (hd->wtab_cap > 0 &&
                       call_next_path(hd, &t, b.u.tool_call.parameters, &pos,
                                      hd->path[1], &wlen)) {
                    wtab_note(hd, wtab_hash(hd->path[1], wlen), p);
                }
            }
        }
    }
}

/* Read->write pruning: marks the pruned read calls and their responses. */
CTXC__NOINLINE static void rw_pass(const hd_t *hd, ctxc__pairs_t *pairs,
                                   bool indexed,
                                   ctxc_density_result_t *result) {
    const ctxc_view_t *raw = hd->v;
    for (size_t p = 0; p < raw->count; p++) {
        if (indexed && (hd->mark[p] & MARK_READ) == 0) {
            continue; /* no read call to prune */
        }
        ctxc_entry_t e;
        ctxc_view_get(raw, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t k = 0; e.speaker == CTXC_SPEAKER_AI &&
                           ctxc_entry_next_block(&e, &cur, &b);
             k++) {
            size_t q, r;
            if (rw_prunes(hd, p, k, &b, &q, &r)) {
                hd->mark[p] |= MARK_RWCALL;
                hd->mark[q] |= MARK_RWRESP;
                result->counts.read_write_pruned++;
                if (indexed) {
                    ctxc__pairs_find(pairs, b.u.tool_call.id)->flags |=
                        ID_PRUNED;
                }
            }
        }
    }
}

/* The step with its state at S and its two path buffers of path_cap bytes
 * each at paths (or NULL). */
static ctxc_status_t
hd_optimize_in(const ctxc_view_t *raw, const ctxc_density_config_t *config,
               ctxc_work_t *work, ctxc_density_result_t *result, hd_state_t *S,
               char *paths, size_t path_cap, uint32_t *wtab, size_t wtab_cap,
               ctxc_error_t *err) {
    ctxc__pairs_t *pairs = &S->pairs;
    ctxc__pairs_lazy(pairs, raw, NULL, 0); /* scans unless indexed below */
    hd_t *hd = &S->hd;
    *hd = (hd_t){
        raw,         config, work,
        work->marks, NULL,   NULL,
        pairs,       NULL,   0,
        0,           0,      {paths, paths != NULL ? paths + path_cap : NULL},
        path_cap,    NULL,   wtab,
        wtab_cap};
    hd->pointer_tokens = pointer_tokens();
    /* the pinned entries (with the pairs over the index memory, which
     * index_prepare sets up anew) */
    if (work->boundary != NULL && ctxc__pins_mark(pairs, NULL) > 0) {
        ctxc__pairs_lazy(pairs, raw, work->index,
                         work->index != NULL
                             ? work->index_slots * CTXC_WORK_INDEX_SLOT_BYTES
                             : 0);
        (void)ctxc__pins_mark(pairs, (unsigned char *)work->boundary);
        hd->pin = (const unsigned char *)work->boundary;
        ctxc__pairs_lazy(pairs, raw, NULL, 0);
    }
    uint32_t retention =
        config->recency_retention < 1 ? 1 : config->recency_retention;
    clear_marks(hd);
    bool indexed = index_prepare(hd, pairs, &S->keys);
    if (!indexed && config->read_write_pruning) {
        mark_writes(hd);
    }
    if (config->read_write_pruning) {
        rw_pass(hd, pairs, indexed, result);
    }
    hd->pool = NULL; /* the edits write into the scratch from here on */
    if (indexed && config->recency_pruning) {
        recency_pass(hd, retention);
    }
    for (size_t p = 0; p < raw->count; p++) {
        if (indexed && !may_edit(hd, p)) {
            continue;
        }
        ctxc_status_t st = edit_entry(hd, &S->ed, p, result, err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    return CTXC_OK;
}

/* A work area whose plan operations cannot hold the state and two
 * CTXC_CFG_PATH_MAX path buffers (fewer than 26 entries on a 32-bit
 * target, 31 on a 64-bit host, with the default 512): the state on the stack,
 * the path buffers in the operations (up to half their bytes each, as before).
 */
CTXC__NOINLINE static ctxc_status_t
hd_optimize_small(const ctxc_view_t *raw, const ctxc_density_config_t *config,
                  ctxc_work_t *work, ctxc_density_result_t *result,
                  size_t ops_bytes, ctxc_error_t *err) {
    hd_state_t S;
    size_t path_cap = ops_bytes / 2u < PATH_CAP ? ops_bytes / 2u : PATH_CAP;
    return hd_optimize_in(raw, config, work, result, &S, (char *)work->ops,
                          path_cap, NULL, 0, err);
}

ctxc_status_t ctxc__hd_optimize(const ctxc_view_t *raw,
                                const ctxc_density_config_t *config,
                                ctxc_work_t *work,
                                ctxc_density_result_t *result,
                                ctxc_error_t *err) {
    if (work->cap < raw->count) {
        return ctxc__fail_space(err, raw->count - work->cap,
                                "work area holds %z entries, the history %z",
                                work->cap, raw->count);
    }
    ctxc__density_init(result, work);
    /* The work area's plan operations (2 * cap + 2 of 24 bytes), which the
     * step does not use: the state (hd_state_t), then the two path buffers
     * of CTXC_CFG_PATH_MAX bytes (enough from 26 entries on with the
     * default 512). A smaller work area: see hd_optimize_small. */
    size_t ops_bytes =
        work->ops != NULL ? (2u * work->cap + 2u) * sizeof(ctxc_plan_op_t) : 0;
    size_t skip = (8u - ((uintptr_t)work->ops & 7u)) & 7u; /* align to 8 */
    if (ops_bytes < skip + HD_STATE_BYTES + 2u * PATH_CAP) {
        return hd_optimize_small(raw, config, work, result, ops_bytes, err);
    }
    char *mem = (char *)work->ops + skip;
    /* the rest of the operations: the written-path table (a slot per
     * entry at most: 8 bytes each) */
    size_t rest = ops_bytes - skip - HD_STATE_BYTES - 2u * PATH_CAP;
    size_t wtab_cap = rest / (2u * sizeof(uint32_t));
    if (wtab_cap > raw->count + 8u) {
        wtab_cap = raw->count + 8u;
    }
    return hd_optimize_in(raw, config, work, result, (hd_state_t *)(void *)mem,
                          mem + HD_STATE_BYTES, PATH_CAP,
                          (uint32_t *)(void *)(mem + HD_STATE_BYTES +
                                               2u * PATH_CAP),
                          wtab_cap, err);
}

/* ---- between calls: what the step learned (ctxc_density_memo_t) ----------
 * After a step, the history is its own fixed point: a second step changes
 * nothing. Entries appended since can change an earlier entry's fate only
 * through a write of a path read earlier (read->write), an inclusion of a
 * path included earlier (dedupe), a result for a call made earlier
 * (pairing, pins), or any result under recency pruning. The first two are
 * asked of two Bloom filters of the paths in the stepped entries; when
 * none of them can, a step over the appended entries alone gives what a
 * step over the whole history would. */

#if CTXC_CFG_DENSITY_FILTER_BYTES > 0
#define FILTER_BYTES ((size_t)CTXC_CFG_DENSITY_FILTER_BYTES)
#define SEED_PATH 0u          /* a resolved path */
#define SEED_RAW 0x2d4f7a1bu  /* an inclusion's path as written */

/* The settings' hash: the project's id hash fed with each field. */
static void feed_str(ctxc__ids_hasher_t *hs, const char *s) {
    size_t n = s != NULL ? strlen(s) + 1u : 0u; /* NULL and "" differ */
    ctxc__ids_hash_feed(hs, &n, sizeof n);
    ctxc__ids_hash_feed(hs, s != NULL ? s : "", n);
}

uint32_t ctxc__hd_config_hash(const ctxc_density_config_t *c) {
    unsigned char flags[4] = {c->read_write_pruning, c->file_dedupe,
                              c->recency_pruning, c->spill != NULL};
    ctxc__ids_hasher_t hs;
    ctxc__ids_hash_start(&hs);
    ctxc__ids_hash_feed(&hs, flags, sizeof flags);
    ctxc__ids_hash_feed(&hs, &c->recency_retention,
                        sizeof c->recency_retention);
    ctxc__ids_hash_feed(&hs, &c->vocabularies_off, sizeof c->vocabularies_off);
    feed_str(&hs, c->workspace_root);
    feed_str(&hs, c->read_tools);
    feed_str(&hs, c->write_tools);
    return ctxc__ids_hash_end(&hs, 0);
}

/* What the two scans do with a key: test it (reaches back) or add it. */
#define MEMO_TOOLS 8u /* tool names of new results followed back (recency) */
typedef struct {
    hd_t hd;               /* cfg, the view and the path buffers only */
    ctxc_density_memo_t *m; /* add to it, or NULL: test */
    const ctxc_density_memo_t *test;
    bool hit;
    /* the test's tool names of the new results (recency pruning) */
    ctxc_str_t tools[MEMO_TOOLS];
    size_t n_tools;
} memo_scan_t;

static void memo_key(memo_scan_t *ms, uint8_t *add_to, const uint8_t *test,
                     uint32_t seed, const char *key, size_t len) {
    ctxc_str_t k = {key, len};
    uint32_t h = ctxc__ids_hash(k) ^ seed;
    if (ms->m != NULL) {
        ctxc__bloom_add(add_to, FILTER_BYTES, h);
    } else if (ctxc__bloom_has(test, FILTER_BYTES, h)) {
        ms->hit = true;
    }
}

/* The inclusions of a human text block: each path as written and
 * resolved (same_include_path compares one or the other). */
static void memo_text(memo_scan_t *ms, ctxc_str_t text) {
    uint8_t *f = ms->m != NULL ? ms->m->incl : NULL;
    const uint8_t *t = ms->test != NULL ? ms->test->incl : NULL;
    size_t at = 0, len;
    incl_t in;
    while (!ms->hit && next_inclusion(text.ptr, text.len, at, &in)) {
        memo_key(ms, f, t, SEED_RAW, text.ptr + in.path, in.plen);
        if (resolve_path(ms->hd.cfg->workspace_root, text.ptr + in.path,
                         in.plen, ms->hd.path[0], ms->hd.path_cap, &len)) {
            memo_key(ms, f, t, SEED_PATH, ms->hd.path[0], len);
        }
        at = in.end;
    }
}

/* A tool call: its read paths (as rw_prunes takes them) are added; its
 * written paths (as written_after compares them) are tested. */
static void memo_call(memo_scan_t *ms, const ctxc_block_t *b) {
    ctxc__tool_t t;
    ctxc_str_t params = b->u.tool_call.parameters;
    if (ctxc__tool_resolve(ms->hd.cfg, b->u.tool_call.name, params, &t) ==
        0) {
        return;
    }
    char *path = ms->hd.path[0];
    size_t pos = 0, plen;
    if (ms->m == NULL) {
        while (!ms->hit && t.role == CTXC__ROLE_WRITE &&
               call_next_path(&ms->hd, &t, params, &pos, path, &plen)) {
            memo_key(ms, NULL, ms->test->reads, SEED_PATH, path, plen);
        }
        return;
    }
    if (t.role != CTXC__ROLE_READ && t.role != CTXC__ROLE_READ_MANY) {
        return;
    }
    ctxc_str_t paths;
    if (t.at != CTXC__AT_PATHS) {
        if (call_next_path(&ms->hd, &t, params, &pos, path, &plen)) {
            memo_key(ms, ms->m->reads, NULL, SEED_PATH, path, plen);
        }
    } else if (ctxc__json_find_key(params.ptr, params.len, "paths", &paths) &&
               paths.len >= 3 && paths.ptr[0] == '[') {
        pos = 1;
        while (pos < paths.len && paths.ptr[pos] != ']') {
            size_t end = ctxc__json_skip_value(paths.ptr, paths.len, pos);
            ctxc_str_t el = {paths.ptr + pos, end - pos};
            if (el.len >= 2 && el.ptr[0] == '"' &&
                body_path(ms->hd.cfg->workspace_root, el.ptr + 1, el.len - 2,
                          PATH_NO_GLOB, path, ms->hd.path_cap, &plen)) {
                memo_key(ms, ms->m->reads, NULL, SEED_PATH, path, plen);
            }
            if (end <= pos) {
                break;
            }
            pos = end < paths.len && paths.ptr[end] == ',' ? end + 1 : end;
        }
    }
}

/* The test notes the tool of a new result (recency pruning): too many
 * different ones and the step reads the whole history. */
static void memo_tool(memo_scan_t *ms, ctxc_str_t name) {
    for (size_t i = 0; i < ms->n_tools; i++) {
        if (ctxc__str_eq(ms->tools[i], name)) {
            return;
        }
    }
    if (ms->n_tools == MEMO_TOOLS) {
        ms->hit = true;
        return;
    }
    ms->tools[ms->n_tools++] = name;
}

/* Positions [lo, count) of the view: added to the filters, or tested. */
static void memo_scan(memo_scan_t *ms, size_t lo) {
    const ctxc_view_t *v = ms->hd.v;
    for (size_t p = lo; p < v->count && !ms->hit; p++) {
        ctxc_entry_t e;
        ctxc_view_get(v, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (!ms->hit && ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type == CTXC_BLOCK_TOOL_CALL) {
                memo_call(ms, &b);
            } else if (b.type == CTXC_BLOCK_TEXT &&
                       e.speaker == CTXC_SPEAKER_HUMAN) {
                memo_text(ms, b.u.text.text);
            } else if (b.type == CTXC_BLOCK_TOOL_RESPONSE && ms->m == NULL &&
                       ms->hd.cfg->recency_pruning) {
                memo_tool(ms, b.u.tool_response.tool_name);
            }
        }
    }
}

static void memo_scan_init(memo_scan_t *ms, const ctxc_view_t *all,
                           const ctxc_density_config_t *config, char *paths) {
    memset(ms, 0, sizeof *ms);
    ms->hd.v = all;
    ms->hd.cfg = config;
    ms->hd.path[0] = paths;
    ms->hd.path[1] = paths + PATH_CAP;
    ms->hd.path_cap = PATH_CAP;
}

/* The position of the call of the response with id `id` at q when it is
 * at lo or after, else q. ctxc__pairs_seek looks at [lo, q) nearest first
 * (the window) before it would ask an index, which these pairs do not
 * have memory for: a call outside that range costs a whole step anyway. */
static size_t call_before(ctxc__pairs_t *pairs, size_t lo, size_t q,
                          ctxc_str_t id) {
    size_t p, k;
    return ctxc__pairs_seek(pairs, q, id, true, q - lo, &p, &k, NULL) &&
                   p >= lo
               ? p
               : q;
}

/* Recency: where the oldest result of `tool` before `old` whose fate a
 * newer result can change (the retention-th newest, or the oldest of
 * fewer) has its call; `old` when there is none. */
static size_t recency_reach(ctxc__pairs_t *pairs, size_t old,
                            ctxc_str_t tool, uint32_t retention) {
    const ctxc_view_t *all = pairs->v;
    size_t seen = 0, reach = old;
    for (size_t p = old; p-- > 0 && seen < retention;) {
        if (speaker_at(all, p) != CTXC_SPEAKER_TOOL) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(all, p, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type == CTXC_BLOCK_TOOL_RESPONSE &&
                ctxc__str_eq(b.u.tool_response.tool_name, tool)) {
                seen++;
                size_t c = call_before(pairs, 0, p, b.u.tool_response.call_id);
                reach = c < reach ? c : reach;
            }
        }
    }
    return reach;
}

/* Whether the call of every result in [lo, count) is in [lo, its entry):
 * the step from lo then sees every pair it would see from 0. */
static bool pairs_within(ctxc__pairs_t *pairs, size_t lo) {
    const ctxc_view_t *all = pairs->v;
    for (size_t q = lo; q < all->count; q++) {
        if (speaker_at(all, q) != CTXC_SPEAKER_TOOL) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(all, q, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type != CTXC_BLOCK_TOOL_RESPONSE) {
                continue;
            }
            if (call_before(pairs, lo, q, b.u.tool_response.call_id) == q) {
                return false;
            }
        }
    }
    return true;
}

size_t ctxc__hd_memo_start(const ctxc_view_t *all,
                           const ctxc_density_config_t *config,
                           const ctxc_density_memo_t *memo, char *paths) {
    size_t old = memo->count;
    memo_scan_t ms;
    memo_scan_init(&ms, all, config, paths);
    ms.test = memo;
    memo_scan(&ms, old);
    if (ms.hit) {
        return 0;
    }
    size_t start = old;
    uint32_t retention =
        config->recency_retention < 1 ? 1 : config->recency_retention;
    ctxc__pairs_t pairs; /* scans: the calls are near their results */
    ctxc__pairs_lazy(&pairs, all, NULL, 0);
    for (size_t i = 0; i < ms.n_tools; i++) {
        size_t reach = recency_reach(&pairs, old, ms.tools[i], retention);
        start = reach < start ? reach : start;
    }
    return start > 0 && pairs_within(&pairs, start) ? start : 0;
}

void ctxc__hd_memo_add(const ctxc_view_t *all,
                       const ctxc_density_config_t *config,
                       ctxc_density_memo_t *memo, char *paths) {
    memo_scan_t ms;
    memo_scan_init(&ms, all, config, paths);
    ms.m = memo;
    memo_scan(&ms, memo->count);
}
#endif /* CTXC_CFG_DENSITY_FILTER_BYTES > 0 */

/* ---- compress: one-line summaries of older tool results ------------------ */

/* Bytes of one summary as JSON. */
#define SUM_BUF 320u
#define SUM_CACHE                                                              \
    4u /* summaries of one entry kept between decide and write                 \
        */

/* Appends s to the sink, at most `max` bytes, cut on a UTF-8 boundary. */
static void put_clipped(ctxc__sink_t *s, const char *p, size_t n, size_t max) {
    size_t take = n;
    bool cut = false;
    /* a line end at or after `max` cuts at `max` all the same */
    size_t look = n < max ? n : max;
    const char *nl = look > 0 ? memchr(p, '\n', look) : NULL;
    size_t before = nl != NULL ? (size_t)(nl - p) : look;
    const char *cr = before > 0 ? memchr(p, '\r', before) : NULL;
    const char *end = cr != NULL ? cr : nl;
    if (end != NULL) {
        take = (size_t)(end - p);
        cut = true;
    }
    if (take > max) {
        take = max;
        cut = true;
    }
    while (take > 0 && take < n && ((unsigned char)p[take] & 0xC0u) == 0x80u) {
        take--;
    }
    ctxc__put(s, p, take);
    if (cut) {
        ctxc__put(s, "\xe2\x80\xa6", 3); /* ellipsis */
    }
}

/* The longest summary text, in bytes. */
#define SUMMARY_TEXT_MAX 255u

/* Bytes of an argument kept for its summary (which shows at most 96). */
#define ARG_BYTES 128u

/* Decodes the JSON string body b[0..n) into arg (its first ARG_BYTES
 * bytes); *full = its whole decoded length. False when it is not valid or
 * is longer than CTXC_CFG_PATH_MAX - 1 bytes (an argument that does not
 * fit a path buffer is not named). */
static bool arg_body(const char *b, size_t n, char *arg, size_t *full) {
    ctxc__sink_t s = {arg, ARG_BYTES, 0};
    if (memchr(b, '\\', n) == NULL) {
        ctxc__put(&s, b, n);
    } else if (ctxc__write_decoded(&s, b, n, CTXC__SRC_JSTR, NULL) != CTXC_OK) {
        return false;
    }
    *full = s.len;
    return s.len <= PATH_CAP - 1u;
}

/* The path or command of a call through the tool-role table, into arg
 * (ARG_BYTES; *alen: its whole length): false when the table names none
 * (then the generic keys below are tried). */
static bool table_arg(const ctxc_density_config_t *cfg,
                      const ctxc_block_t *call, char *arg, size_t *alen) {
    ctxc__tool_t t;
    ctxc_str_t params = call->u.tool_call.parameters;
    if (cfg == NULL ||
        ctxc__tool_resolve(cfg, call->u.tool_call.name, params, &t) == 0) {
        return false;
    }
    size_t pos = 0;
    ctxc_str_t body;
    if (t.at != CTXC__AT_PATHS && t.at != CTXC__AT_NONE &&
        ctxc__tool_next_path(&t, params, &pos, &body) &&
        arg_body(body.ptr, body.len, arg, alen) && *alen > 0) {
        return true;
    }
    return ctxc__tool_command(&t, params, arg, ARG_BYTES, PATH_CAP - 1u, alen);
}

/* "[summarized] <tool> <path or command>: ok|error" as a JSON string,
 * into buf (SUM_BUF bytes). The text is put together in `text`
 * (SUMMARY_TEXT_MAX + 1 bytes), the argument decoded into the start of buf
 * (ARG_BYTES <= SUM_BUF), which is free until the text is complete: both
 * are work-area memory (see sum_mem_t), not stack. */
static void summary_json(const ctxc_density_config_t *cfg,
                         const ctxc_block_t *resp, const ctxc_block_t *call,
                         char *text, char *buf, ctxc_str_t *out) {
    ctxc__sink_t s = {text, SUMMARY_TEXT_MAX, 0};
    ctxc__put(&s, "[summarized] ", 13);
    put_clipped(&s, resp->u.tool_response.tool_name.ptr,
                resp->u.tool_response.tool_name.len, 48);
    char *arg = buf;
    size_t alen;
    if (call != NULL && table_arg(cfg, call, arg, &alen)) {
        ctxc__putc(&s, ' ');
        put_clipped(&s, arg, alen, 96);
    } else if (call != NULL) {
        static const char *const keys[] = {"file_path", "absolute_path",
                                           "path",      "command",
                                           "pattern",   "dir_path"};
        size_t nkeys = sizeof keys / sizeof keys[0];
        ctxc_str_t v;
        size_t which;
        /* the first key present whose value is a string that fits */
        for (size_t from = 0;
             from < nkeys &&
             ctxc__json_find_first_key(call->u.tool_call.parameters,
                                       keys + from, nkeys - from, &v, &which);
             from += which + 1) {
            if (v.len >= 2 && v.ptr[0] == '"' &&
                arg_body(v.ptr + 1, v.len - 2, arg, &alen)) {
                ctxc__putc(&s, ' ');
                put_clipped(&s, arg, alen, 96);
                break;
            }
        }
    }
    if (resp->u.tool_response.error.ptr != NULL) {
        ctxc__put(&s, ": error", 7);
    } else {
        ctxc__put(&s, ": ok", 4);
    }
    ctxc__sink_t j = {buf, SUM_BUF, 0};
    (void)ctxc__json_write_string(&j, text, s.len, CTXC__SRC_RAW, NULL);
    out->ptr = buf;
    out->len = j.len;
}

typedef struct {
    const ctxc_view_t *v;
    const ctxc_density_config_t *cfg; /* the tool vocabularies */
    ctxc__pairs_t *pairs;             /* finds the calls */
    size_t pos;
    ctxc_estimate_fn estimate;
    void *estimate_user;
    /* the default estimate of any summary is at most this (UINT32_MAX
     * with another estimator: no bound) */
    uint32_t summary_max;
    bool decided; /* `use` holds the decisions of the entry's blocks */
    bool any_use; /* a block of the entry has `use` set */
    bool default_estimate;
    ctxc_block_t call;  /* the call a summarised response answers */
    ctxc_block_t after; /* a summarised block, to compare */
    /* the buffers below live in the work area (sum_mem_t), not here */
    char *buf;  /* the summary of the block being written: SUM_BUF bytes */
    char *text; /* its text before JSON: SUMMARY_TEXT_MAX + 1 bytes */
    /* NULL when the work area has no room for them: each block is then
     * decided as it is written (the same decisions, made later) */
    uint8_t *use; /* response blocks whose summary is smaller */
    /* with the default estimator: the estimate of each block as it is
     * written (UINT32_MAX: not known), for the record writer */
    uint32_t *out_tokens;
    /* the summaries decide_entry made, kept for writing the record */
    size_t ncached;
    size_t cached_block[SUM_CACHE];
    ctxc_str_t cached[SUM_CACHE];
    /* their bytes: cache_slots buffers of SUM_BUF bytes after sum_mem_t
     * (fewer slots only mean summaries made again) */
    char *cache_buf;
    size_t cache_slots;
} sum_edit_t;

/* compress's buffers. They are kept in the work area's density
 * replacements (`replacements`, cap x 24 bytes), which compress does not
 * use: a density result is applied before compress runs and the next
 * density step starts a new one. The mandatory part (sum_need_t) is 900
 * bytes on a 32-bit target (a work area of 38 entries; 1208 bytes, 51
 * entries on a 64-bit host); the per-block decisions 320 more (51 / 64
 * entries); the summary cache SUM_BUF per slot after that (all four slots
 * from 105 / 117 entries on). A smaller work area keeps the mandatory part
 * on the stack (hd_compress_small) and decides each block as it is
 * written: the same summaries. */
typedef struct {
    sum_edit_t se;
    ctxc__pairs_t pairs;
    /* the entry being written and its record source */
    ctxc_entry_t e;
    ctxc__entry_edit_t ed;
    ctxc__entry_src_t src;
    char buf[SUM_BUF];
    char text[SUMMARY_TEXT_MAX + 1];
} sum_need_t;
typedef struct {
    sum_need_t need;
    uint32_t out_tokens[MAX_EDIT_BLOCKS];
    uint8_t use[MAX_EDIT_BLOCKS];
} sum_mem_t;

/* The tool_call a response of position pos answers: the last one with its
 * id before pos. */
static bool call_of(sum_edit_t *se, ctxc_str_t id, ctxc_block_t *call) {
    size_t p, k;
    return ctxc__pairs_seek(se->pairs, se->pos, id, true, CTXC__PAIR_WINDOW, &p,
                            &k, call);
}

/* The summarised form of response block b (its text in se->buf) into
 * *out (which may be b). */
static void summarized(sum_edit_t *se, const ctxc_block_t *b,
                       ctxc_block_t *out) {
    bool found = call_of(se, b->u.tool_response.call_id, &se->call);
    ctxc_str_t sum;
    summary_json(se->cfg, b, found ? &se->call : NULL, se->text, se->buf, &sum);
    if (out != b) {
        *out = *b;
    }
    out->u.tool_response.result = sum;
    out->u.tool_response.error = CTXC_STR_ABSENT;
}

static bool summarize_edit(void *user, size_t index, ctxc_block_t *b) {
    sum_edit_t *se = (sum_edit_t *)user;
    if (b->type != CTXC_BLOCK_TOOL_RESPONSE) {
        return true;
    }
    if (se->decided) {
        if (!se->use[index]) {
            return true;
        }
        for (size_t i = 0; i < se->ncached; i++) {
            if (se->cached_block[i] == index) {
                b->u.tool_response.result = se->cached[i];
                b->u.tool_response.error = CTXC_STR_ABSENT;
                return true;
            }
        }
        summarized(se, b, b);
        return true;
    }
    ctxc_block_t *after = &se->after;
    summarized(se, b, after);
    if (block_tokens(se->estimate, se->estimate_user, after) <
        block_tokens(se->estimate, se->estimate_user, b)) {
        *b = *after;
    }
    return true;
}

/* Rough size of a block, to pick the one not to estimate. */
CTXC__NOINLINE static size_t block_size(const ctxc_block_t *b) {
    size_t n = 0;
    for (unsigned f = 0; f < ctxc__block_desc[b->type].nfields; f++) {
        n += ctxc__block_field(b, f).len;
    }
    return n;
}

/* Decides, once, which response blocks of entry e (up to MAX_EDIT_BLOCKS
 * blocks) are summarised: those whose summary estimates below the block.
 * The entry's cached estimate is the sum of its blocks' estimates (made with
 * the same estimator), so the largest block is not estimated again: its
 * estimate is what the others leave of the entry's. */
CTXC__NOINLINE static void decide_entry(sum_edit_t *se, const ctxc_entry_t *e) {
    se->decided = false;
    se->any_use = false;
    se->ncached = 0;
    if (e->block_count > MAX_EDIT_BLOCKS || se->use == NULL) {
        return; /* each block decided as it is written */
    }
    memset(se->use, 0, MAX_EDIT_BLOCKS);
    size_t largest = 0, largest_size = 0;
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    for (size_t k = 0; ctxc_entry_next_block(e, &cur, &b); k++) {
        size_t n = block_size(&b);
        if (k == 0 || n > largest_size) {
            largest = k;
            largest_size = n;
        }
    }
    uint32_t *tokens = se->out_tokens;
    uint32_t others = 0; /* saturating: the test below is the same */
    cur = NULL;
    for (size_t k = 0; ctxc_entry_next_block(e, &cur, &b); k++) {
        if (k != largest) {
            tokens[k] = block_tokens(se->estimate, se->estimate_user, &b);
            others =
                others + tokens[k] < others ? UINT32_MAX : others + tokens[k];
        } else {
            tokens[k] = UINT32_MAX; /* not known unless a response */
        }
    }
    cur = NULL;
    for (size_t k = 0; ctxc_entry_next_block(e, &cur, &b); k++) {
        if (b.type != CTXC_BLOCK_TOOL_RESPONSE) {
            continue;
        }
        if (k == largest) {
            tokens[k] = e->tokens < UINT32_MAX && others <= e->tokens
                            ? (uint32_t)(e->tokens - others)
                            : block_tokens(se->estimate, se->estimate_user, &b);
        }
        if (se->summary_max < tokens[k]) {
            se->use[k] = 1; /* no summary can reach it */
            se->any_use = true;
            tokens[k] = UINT32_MAX; /* the summary's: not counted */
            continue;
        }
        ctxc_block_t *after = &se->after;
        summarized(se, &b, after);
        uint32_t t = block_tokens(se->estimate, se->estimate_user, after);
        if (t < tokens[k]) {
            se->use[k] = 1;
            se->any_use = true;
            tokens[k] = t;
            ctxc_str_t sum = after->u.tool_response.result;
            if (se->ncached < se->cache_slots && sum.len <= SUM_BUF) {
                size_t c = se->ncached++;
                memcpy(se->cache_buf + c * SUM_BUF, sum.ptr, sum.len);
                se->cached_block[c] = k;
                se->cached[c].ptr = se->cache_buf + c * SUM_BUF;
                se->cached[c].len = sum.len;
            }
        }
    }
    se->decided = true;
}

/* compress with its buffers at mem (room bytes, at least sum_need_t,
 * 4-byte aligned). */
static ctxc_status_t hd_compress_in(const ctxc_compress_ctx_t *ctx,
                                    ctxc_plan_t *plan, void *mem, size_t room,
                                    ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    size_t n = v->count;
    ctxc_boundary_t bd;
    sum_need_t *need = mem;
    ctxc__pairs_t *pairs = &need->pairs;
    uint64_t total, target;
    ctxc_status_t st =
        ctxc__compress_prepare(ctx, CTXC_STRATEGY_HIGH_DENSITY, plan, &bd,
                               pairs, &total, &target, err);
    if (st != CTXC_OK) {
        return st;
    }
    uint32_t keep_pm = 1000u - (ctx->values.preserve_threshold > 1000u
                                    ? 1000u
                                    : ctx->values.preserve_threshold);
    size_t split =
        ctxc_boundary_adjust(&bd, (size_t)(((uint64_t)n * keep_pm) / 1000u));

    plan->meta.compressed_count = n;
    plan->meta.bottom_preserved = n - split;

    sum_edit_t *se = &need->se;
    se->v = v;
    se->cfg = &ctx->values.density;
    se->buf = need->buf;
    se->text = need->text;
    se->use = NULL;
    se->out_tokens = NULL;
    se->cache_buf = NULL;
    se->cache_slots = 0;
    if (room >= sizeof(sum_mem_t)) {
        sum_mem_t *m = mem;
        size_t slots = (room - sizeof(sum_mem_t)) / SUM_BUF;
        se->use = m->use;
        se->out_tokens = m->out_tokens;
        se->cache_buf = (char *)(m + 1);
        se->cache_slots = slots < SUM_CACHE ? slots : SUM_CACHE;
    }
    se->pairs = pairs;
    se->estimate = ctx->estimate;
    se->estimate_user = ctx->estimate_user;
    se->default_estimate =
        ctx->estimate == NULL || ctx->estimate == ctxc_estimate_block_default;
    /* a text of n bytes has at most n units and (n + 1) / 2 + 1 words */
    se->summary_max =
        ctx->estimate == NULL || ctx->estimate == ctxc_estimate_block_default
            ? ctxc_estimate_formula(SUMMARY_TEXT_MAX / 2u + 2u,
                                    SUMMARY_TEXT_MAX)
            : UINT32_MAX;
    uint64_t pinned_tokens;
    const unsigned char *pin = ctxc__compress_pins(ctx, pairs, &pinned_tokens);
    uint64_t estimate = total;
    size_t next_keep = 0; /* store index from which entries are still kept */
    size_t summarized_count = 0;
    for (size_t p = 0; p < split && estimate >= target; p++) {
        if (speaker_at(v, p) != CTXC_SPEAKER_TOOL || (pin != NULL && pin[p])) {
            continue; /* pinned results are never shortened */
        }
        ctxc_entry_t *e = &need->e;
        ctxc_view_get(v, p, e);
        se->pos = p;
        decide_entry(se, e);
        if (se->decided && !se->any_use) {
            continue; /* the entry as it is: nothing to gain */
        }
        need->ed = (ctxc__entry_edit_t){
            e,
            summarize_edit,
            se,
            se->decided && se->default_estimate ? se->out_tokens : NULL,
            e->block_count,
            NULL,
            0,
            0};
        need->src = (ctxc__entry_src_t){
            e->speaker,
            e->block_count,
            ctxc__entry_edit_block,
            &need->ed,
            {e->metadata.ptr, e->metadata.len, CTXC__SRC_VALID}};
        size_t mark = plan->scratch_used;
        ctxc_plan_op_t op;
        if ((st = ctxc__record_to_scratch(plan->scratch, plan->scratch_cap,
                                          &plan->scratch_used, &need->src,
                                          ctx->estimate, ctx->estimate_user,
                                          &op, err)) != CTXC_OK) {
            return st;
        }
        if (op.tokens >= e->tokens) { /* nothing to gain: keep it as it is */
            plan->scratch_used = mark;
            continue;
        }
        size_t index = ctxc_view_index(v, p);
        op.replaces = (uint32_t)index;
        if ((st = ctxc_plan_keep(plan, next_keep, index, err)) != CTXC_OK) {
            return st;
        }
        if (plan->count >= plan->cap) {
            return ctxc__fail_space(err, 1, "plan holds its maximum of %z ops",
                                    plan->cap);
        }
        plan->ops[plan->count++] = op;
        ctxc__note_counted(&plan->counted_estimate_, &plan->counted_user_,
                           &plan->counted_, ctx->estimate, ctx->estimate_user);
        estimate -= e->tokens - op.tokens;
        next_keep = index + 1;
        summarized_count++;
    }
    if ((st = ctxc_plan_keep(plan, next_keep, v->store_count, err)) !=
        CTXC_OK) {
        return st;
    }
    /* the summaries were not enough (a conversation without tool output,
     * or a limit of entries or bytes): the oldest unpinned entries go, as
     * top-down-truncation drops them (meta.entries_dropped says how many) */
    ctxc__targets_t t;
    ctxc__targets(ctx, target, &t);
    size_t dropped = 0, cut = 0;
    if ((st = ctxc__truncate(ctx, plan, &bd, pin, &t, &estimate, &dropped,
                             &cut, err)) != CTXC_OK) {
        return st;
    }
    if (dropped > 0) { /* the summaries kept: those after the cut */
        summarized_count = 0;
        for (size_t k = 0; k < plan->count; k++) {
            summarized_count += plan->ops[k].kind == CTXC_PLAN_INSERT;
        }
        plan->meta.compressed_count = n - dropped;
        if (n - cut < plan->meta.bottom_preserved) {
            plan->meta.bottom_preserved = n - cut;
        }
    }
    plan->meta.middle_compressed = summarized_count + dropped;
    plan->meta.tokens_after = estimate;
    plan->meta.unchanged = summarized_count + dropped == 0;
    return CTXC_OK;
}

/* A work area too small for sum_need_t (fewer than 38 entries): the
 * mandatory buffers on the stack, in a frame of their own. */
CTXC__NOINLINE static ctxc_status_t
hd_compress_small(const ctxc_compress_ctx_t *ctx, ctxc_plan_t *plan,
                  ctxc_error_t *err) {
    sum_need_t need;
    return hd_compress_in(ctx, plan, &need, sizeof need, err);
}

ctxc_status_t ctxc__hd_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err) {
    size_t room = ctx->work != NULL && ctx->work->replacements != NULL
                      ? ctx->work->cap * sizeof(ctxc_plan_op_t)
                      : 0;
    /* aligned to 8 (the region is only 4-byte aligned) */
    size_t skip =
        room > 0 ? (8u - ((uintptr_t)ctx->work->replacements & 7u)) & 7u : 0;
    if (room < skip + sizeof(sum_need_t)) {
        return hd_compress_small(ctx, plan, err);
    }
    return hd_compress_in(ctx, plan, (char *)ctx->work->replacements + skip,
                          room - skip, err);
}

#endif
