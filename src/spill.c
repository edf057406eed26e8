/*
 * ctxc — the spill store (ctxc/spill.h).
 *
 * The index is fixed-width text, read into the caller's buffer, edited
 * there and written back atomically:
 *   "next XXXXXXXX\n"            the next id (hex)
 *   "XXXXXXXX DDDDDDDDDD\n"      per stored block, oldest first: its id
 *                                and its size (decimal, zero-padded)
 * The start of the buffer holds the path being built (no path buffer on
 * the stack).
 *
 * A block's id is its number (the file's name, 8 hex digits) followed by
 * the hash of its bytes (8 more): a get reads the numbered file and gives
 * it only when its bytes hash to the id's second half, so an id names
 * one content, whatever store its number is read from (a store lost and
 * started again reuses numbers, never hashes).
 */
#include <string.h>

#include "ctxc/port.h"
#include "ctxc/spill.h"
#include "error.h"
#include "id_index.h"
#include "json.h"

#define HEAD 14u /* "next XXXXXXXX\n" */
#define LINE 20u /* "XXXXXXXX DDDDDDDDDD\n" */
#define IN_FLIGHT_PENDING 0xFFFFFFFFu

typedef struct {
    char *path; /* path area (path_cap bytes) */
    size_t path_cap;
    char *text; /* the index text */
    size_t len, cap;
    uint32_t next;
    uint64_t total; /* bytes of the listed blocks */
} ix_t;

static void hex8(uint32_t v, char *out) {
    static const char digits[] = "0123456789abcdef";
    for (int i = 7; i >= 0; i--) {
        out[i] = digits[v & 0xFu];
        v >>= 4;
    }
}

static bool parse_hex8(const char *s, uint32_t *v) {
    uint32_t x = 0;
    for (int i = 0; i < 8; i++) {
        char c = s[i];
        uint32_t d;
        if (c >= '0' && c <= '9') {
            d = (uint32_t)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            d = (uint32_t)(c - 'a' + 10);
        } else {
            return false;
        }
        x = x << 4 | d;
    }
    *v = x;
    return true;
}

static uint64_t line_size(const char *l) {
    uint64_t n = 0;
    for (size_t i = 9; i < 19; i++) {
        n = n * 10u + (uint64_t)(l[i] - '0');
    }
    return n;
}

static bool line_ok(const char *l) {
    uint32_t id;
    if (!parse_hex8(l, &id) || l[8] != ' ' || l[19] != '\n') {
        return false;
    }
    for (size_t i = 9; i < 19; i++) {
        if (l[i] < '0' || l[i] > '9') {
            return false;
        }
    }
    return true;
}

/* "<dir>/<name>" into the path area. */
static const char *path_of(const ctxc_spill_t *sp, ix_t *ix, const char *name,
                           size_t n) {
    size_t dl = strlen(sp->dir);
    memcpy(ix->path, sp->dir, dl);
    ix->path[dl] = '/';
    memcpy(ix->path + dl + 1, name, n);
    ix->path[dl + 1 + n] = '\0';
    return ix->path;
}

static const char *block_path(const ctxc_spill_t *sp, ix_t *ix, uint32_t id) {
    char name[13];
    hex8(id, name);
    memcpy(name + 8, ".json", 5);
    return path_of(sp, ix, name, 13);
}

static void ix_setup(const ctxc_spill_t *sp, ix_t *ix) {
    ix->path_cap = strlen(sp->dir) + 16u;
    ix->path = sp->buf;
    ix->text = sp->buf + ix->path_cap;
    ix->cap = sp->cap - ix->path_cap;
    ix->len = 0;
    ix->next = 1;
    ix->total = 0;
}

/* The largest id of a block file in the directory (listing). */
typedef struct {
    uint32_t max;
} scan_t;

static bool scan_entry(void *user, const char *name, ctxc_fs_kind_t kind) {
    scan_t *s = user;
    uint32_t id;
    if (kind == CTXC_FS_FILE && strlen(name) == 13 &&
        memcmp(name + 8, ".json", 5) == 0 && parse_hex8(name, &id) &&
        id > s->max) {
        s->max = id;
    }
    return true;
}

/* Reads the index (CTXC_E_NOT_FOUND: none; *missing). */
static ctxc_status_t ix_load(const ctxc_spill_t *sp, ix_t *ix, bool *missing,
                             ctxc_error_t *err) {
    ix_setup(sp, ix);
    *missing = false;
    size_t len = 0;
    ctxc_status_t st = ctxc_fs_read(sp->fs, path_of(sp, ix, "index", 5),
                                    ix->text, ix->cap, &len, err);
    if (st == CTXC_E_NOT_FOUND) {
        *missing = true;
        scan_t s = {0};
        st = ctxc_fs_list(sp->fs, sp->dir, scan_entry, &s, err);
        if (st != CTXC_OK && st != CTXC_E_NOT_FOUND) {
            return st;
        }
        ix->next = s.max + 1u;
        memcpy(ix->text, "next ", 5);
        hex8(ix->next, ix->text + 5);
        ix->text[13] = '\n';
        ix->len = HEAD;
        return CTXC_OK;
    }
    if (st != CTXC_OK) {
        return st;
    }
    if (len < HEAD || (len - HEAD) % LINE != 0 ||
        memcmp(ix->text, "next ", 5) != 0 ||
        !parse_hex8(ix->text + 5, &ix->next) || ix->text[13] != '\n') {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: not the index of a spill store", ix->path);
    }
    for (size_t at = HEAD; at < len; at += LINE) {
        if (!line_ok(ix->text + at)) {
            return ctxc__fail(err, CTXC_E_PARSE,
                              "%s: not the index of a spill store", ix->path);
        }
        ix->total += line_size(ix->text + at);
    }
    ix->len = len;
    return CTXC_OK;
}

ctxc_status_t ctxc_spill_init(ctxc_spill_t *sp, const ctxc_fs_t *fs,
                              const char *dir, uint64_t budget, void *buf,
                              size_t cap, ctxc_error_t *err) {
    if (sp == NULL || fs == NULL || dir == NULL || buf == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "spill store: NULL");
    }
    ctxc_status_t st = ctxc_fs_path_check(dir, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t dl = strlen(dir);
    if (dl == 0 || dl + 16u > CTXC_CFG_PATH_MAX || cap < dl + 16u + 64u) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "spill store: directory %q too long or buffer of "
                          "%z bytes too small (%z at least)",
                          dir, dl, cap, dl + 16u + 64u);
    }
    sp->fs = fs;
    sp->dir = dir;
    sp->budget = budget;
    sp->buf = buf;
    sp->cap = cap;
    sp->keep_from_ = 0;
    return CTXC_OK;
}

void ctxc_spill_begin(ctxc_spill_t *sp) { sp->keep_from_ = IN_FLIGHT_PENDING; }

void ctxc_spill_end(ctxc_spill_t *sp) { sp->keep_from_ = 0; }

ctxc_status_t ctxc_spill_put(ctxc_spill_t *sp, const char *data, size_t len,
                             char id[CTXC_SPILL_ID_LEN + 1],
                             ctxc_error_t *err) {
    if (sp == NULL || sp->buf == NULL || (data == NULL && len > 0) ||
        id == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "spill store: NULL");
    }
    if ((uint64_t)len > sp->budget) {
        return ctxc__fail_space(err, len,
                                "spill store full: a block of %z bytes is "
                                "over its budget of %z bytes",
                                len, (size_t)sp->budget);
    }
    ix_t ix;
    bool missing;
    ctxc_status_t st = ix_load(sp, &ix, &missing, err);
    if (st != CTXC_OK) {
        return st;
    }
    uint32_t me = ix.next;
    if (me == 0xFFFFFFFFu) {
        return ctxc__fail(err, CTXC_E_NO_SPACE, "spill store: no id left");
    }
    /* 0. when the blocks of the operation in flight alone leave no room,
     * fail before writing anything (a step over the budget would else
     * write and remove each of its remaining blocks) */
    uint32_t keep = sp->keep_from_ == IN_FLIGHT_PENDING ? me : sp->keep_from_;
    if (keep != 0) {
        uint64_t held = 0;
        size_t lines = 0;
        for (size_t at = HEAD; at < ix.len; at += LINE) {
            uint32_t v = 0;
            (void)parse_hex8(ix.text + at, &v);
            if (v >= keep) {
                held += line_size(ix.text + at);
                lines++;
            }
        }
        if (held + len > sp->budget || HEAD + (lines + 1u) * LINE > ix.cap) {
            return ctxc__fail_space(
                err,
                held + len > sp->budget ? (size_t)(held + len - sp->budget)
                                        : LINE,
                "spill store full: %z bytes stored by the operation in "
                "flight, budget %z bytes",
                (size_t)held, (size_t)sp->budget);
        }
    }
    /* 1. the block, before anything refers to it */
    st = ctxc_fs_write_atomic(sp->fs, block_path(sp, &ix, me), data, len, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* 2. room: the oldest blocks go, never one of the operation in flight */
    while (ix.total + len > sp->budget || ix.len + LINE > ix.cap) {
        uint32_t old = 0;
        if (ix.len > HEAD) {
            (void)parse_hex8(ix.text + HEAD, &old);
        }
        if (ix.len == HEAD || (keep != 0 && old >= keep)) {
            (void)ctxc_fs_remove(sp->fs, block_path(sp, &ix, me), NULL);
            return ctxc__fail_space(
                err, (size_t)(ix.total + len - sp->budget),
                "spill store full: %z bytes stored by the operation in "
                "flight, budget %z bytes",
                (size_t)ix.total, (size_t)sp->budget);
        }
        st = ctxc_fs_remove(sp->fs, block_path(sp, &ix, old), err);
        if (st != CTXC_OK && st != CTXC_E_NOT_FOUND) {
            (void)ctxc_fs_remove(sp->fs, block_path(sp, &ix, me), NULL);
            return st;
        }
        ix.total -= line_size(ix.text + HEAD);
        memmove(ix.text + HEAD, ix.text + HEAD + LINE, ix.len - HEAD - LINE);
        ix.len -= LINE;
    }
    /* 3. the index: the new block listed, the next id */
    char *l = ix.text + ix.len;
    hex8(me, l);
    l[8] = ' ';
    uint64_t n = len;
    for (int i = 18; i >= 9; i--) {
        l[i] = (char)('0' + n % 10u);
        n /= 10u;
    }
    l[19] = '\n';
    ix.len += LINE;
    hex8(me + 1u, ix.text + 5);
    st = ctxc_fs_write_atomic(sp->fs, path_of(sp, &ix, "index", 5), ix.text,
                              ix.len, err);
    if (st != CTXC_OK) {
        (void)ctxc_fs_remove(sp->fs, block_path(sp, &ix, me), NULL);
        return st;
    }
    if (sp->keep_from_ == IN_FLIGHT_PENDING) {
        sp->keep_from_ = me;
    }
    hex8(me, id);
    hex8(ctxc__ids_hash((ctxc_str_t){data, len}), id + 8);
    id[CTXC_SPILL_ID_LEN] = '\0';
    (void)missing;
    return CTXC_OK;
}

ctxc_status_t ctxc_spill_get(const ctxc_spill_t *sp, const char *id, char *out,
                             size_t cap, size_t *len, ctxc_error_t *err) {
    if (sp == NULL || sp->buf == NULL || id == NULL || len == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "spill store: NULL");
    }
    uint32_t want, hash;
    size_t idl = 0;
    while (idl <= CTXC_SPILL_ID_LEN && id[idl] != '\0') {
        idl++;
    }
    if (idl != CTXC_SPILL_ID_LEN || !parse_hex8(id, &want) ||
        !parse_hex8(id + 8, &hash) || want == 0) {
        return ctxc__fail(err, CTXC_E_NOT_FOUND,
                          "unknown id %q: not an id of the spill store", id,
                          idl);
    }
    ix_t ix;
    bool missing;
    ctxc_status_t st = ix_load(sp, &ix, &missing, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (missing) {
        return ctxc__fail(err, CTXC_E_NOT_FOUND,
                          "store missing: no spill store in %q (id %s)",
                          sp->dir, strlen(sp->dir), id);
    }
    if (want >= ix.next) {
        return ctxc__fail(err, CTXC_E_NOT_FOUND,
                          "unknown id %s: the spill store never gave it out",
                          id);
    }
    bool listed = false;
    for (size_t at = HEAD; at < ix.len && !listed; at += LINE) {
        uint32_t v;
        listed = parse_hex8(ix.text + at, &v) && v == want;
    }
    if (listed) {
        st =
            ctxc_fs_read(sp->fs, block_path(sp, &ix, want), out, cap, len, err);
        if (st == CTXC_OK && ctxc__ids_hash((ctxc_str_t){out, *len}) != hash) {
            *len = 0;
            return ctxc__fail(err, CTXC_E_NOT_FOUND,
                              "unknown id %s: another block (of a lost "
                              "store) has its number",
                              id);
        }
        if (st != CTXC_E_NOT_FOUND) {
            return st;
        }
    }
    return ctxc__fail(err, CTXC_E_NOT_FOUND,
                      "evicted: block %s was removed from the spill store "
                      "for room (re-run the tool to retrieve it)",
                      id);
}

ctxc_status_t ctxc_spill_restore_block(const ctxc_spill_t *sp, const char *id,
                                       char *out, size_t cap, size_t *len,
                                       ctxc_error_t *err) {
    size_t n = 0;
    ctxc_status_t st = ctxc_spill_get(sp, id, out, cap, &n, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* "<block>\n<entry line>": the block's JSON out of the line */
    size_t block = 0, i = 0;
    while (i < n && i < 6 && out[i] >= '0' && out[i] <= '9') {
        block = block * 10u + (size_t)(out[i++] - '0');
    }
    ctxc_str_t blocks;
    if (i == 0 || i >= n || out[i] != '\n' ||
        !ctxc__json_find_key(out + i + 1, n - i - 1, "blocks", &blocks) ||
        blocks.len < 2 || blocks.ptr[0] != '[') {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "restore %s: not a block of the spill store", id);
    }
    size_t at = 1;
    for (size_t k = 0; at < blocks.len && blocks.ptr[at] != ']'; k++) {
        size_t end = ctxc__json_skip_value(blocks.ptr, blocks.len, at);
        if (end <= at || end > blocks.len) {
            break;
        }
        if (k == block) {
            size_t bl = end - at;
            memmove(out, blocks.ptr + at, bl);
            if (bl < cap) {
                out[bl] = '\0';
            }
            *len = bl;
            return CTXC_OK;
        }
        at = end < blocks.len && blocks.ptr[end] == ',' ? end + 1u : end;
    }
    return ctxc__fail(err, CTXC_E_PARSE,
                      "restore %s: not a block of the spill store", id);
}
