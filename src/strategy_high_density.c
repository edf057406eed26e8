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

#include "ctxc/ctxc.h"
#include "ctxc/strategy.h"
#include "ctxc_internal.h"

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

#define MAX_EDIT_BLOCKS 64u /* blocks per entry the density step can edit */
#define MAX_TEXT_EDITS 8u   /* text blocks per entry the dedupe can rewrite */

/* per-entry marks in work->aux2 */
#define MARK_WRITE 0x1u  /* ai entry holds a write call */
#define MARK_RWCALL 0x2u /* ai entry holds a pruned read call */
#define MARK_RWRESP 0x4u /* tool entry holds a response of a pruned read */

static const char END_MARKER[] = "--- End of content ---";
static const char DEDUPE_NOTE[] =
    "[superseded by a later inclusion of this file]";
static const char POINTER_JSON[] = "\"" CTXC_PRUNED_RESULT_TEXT "\"";

static bool str_is(ctxc_str_t s, const char *lit) {
    size_t n = strlen(lit);
    return s.ptr != NULL && s.len == n && memcmp(s.ptr, lit, n) == 0;
}

static bool is_read_tool(ctxc_str_t n) {
    return str_is(n, "read_file") || str_is(n, "read_line_range") ||
           str_is(n, "read_many_files") || str_is(n, "ast_read_file");
}

static bool is_write_tool(ctxc_str_t n) {
    return str_is(n, "write_file") || str_is(n, "ast_edit") ||
           str_is(n, "replace") || str_is(n, "insert_at_line") ||
           str_is(n, "delete_line_range");
}

/* ---- parameters and paths ------------------------------------------------ */

/* Decodes a canonical JSON string value into buf (NUL-terminated). */
static bool json_string(ctxc_str_t v, char *buf, size_t cap, size_t *len) {
    if (v.len < 2 || v.ptr[0] != '"') {
        return false;
    }
    ctxc__sink_t s = {buf, cap - 1, 0};
    if (ctxc__write_decoded(&s, v.ptr + 1, v.len - 2, CTXC__SRC_JSTR, NULL) !=
            CTXC_OK ||
        s.len > cap - 1) {
        return false;
    }
    buf[s.len] = '\0';
    *len = s.len;
    return true;
}

/* The path parameter: the first of file_path, absolute_path, path present;
 * false when none is, or when it is not a string (malformed: skipped). */
static bool param_path(ctxc_str_t params, char *buf, size_t cap, size_t *len) {
    static const char *const keys[] = {"file_path", "absolute_path", "path"};
    for (size_t k = 0; k < 3; k++) {
        ctxc_str_t v;
        if (ctxc__json_find_key(params.ptr, params.len, keys[k], &v)) {
            return json_string(v, buf, cap, len) && *len > 0;
        }
    }
    return false;
}

/* Resolves `p` against `root` and normalises ".", ".." and "//" segments.
 * No case folding. */
static bool resolve_path(const char *root, const char *p, size_t plen,
                         char *out, size_t cap, size_t *outlen) {
    char tmp[CTXC_CFG_PATH_MAX];
    size_t n = 0;
    size_t rlen = root != NULL ? strlen(root) : 0;
    if (plen == 0 || p[0] != '/') {
        if (rlen + 1 + plen >= sizeof tmp) {
            return false;
        }
        if (rlen > 0) {
            memcpy(tmp, root, rlen);
        }
        n = rlen;
        if (n > 0) {
            tmp[n++] = '/';
        }
    } else if (plen >= sizeof tmp) {
        return false;
    }
    memcpy(tmp + n, p, plen);
    n += plen;

    bool absolute = n > 0 && tmp[0] == '/';
    size_t o = 0;
    size_t floor = 0; /* ".." may not pop below this (leading ".." kept) */
    if (absolute) {
        out[o++] = '/';
        floor = 1;
    }
    size_t i = 0;
    while (i < n) {
        while (i < n && tmp[i] == '/') {
            i++;
        }
        size_t s = i;
        while (i < n && tmp[i] != '/') {
            i++;
        }
        size_t seg = i - s;
        if (seg == 0 || (seg == 1 && tmp[s] == '.')) {
            continue;
        }
        if (seg == 2 && tmp[s] == '.' && tmp[s + 1] == '.') {
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
        memcpy(out + o, tmp + s, seg);
        o += seg;
        if (seg == 2 && tmp[s] == '.' && tmp[s + 1] == '.') {
            floor = o; /* a kept leading ".." */
        }
    }
    out[o] = '\0';
    *outlen = o;
    return o > 0;
}

typedef struct {
    const ctxc_view_t *v;
    const ctxc_density_config_t *cfg;
    ctxc_work_t *work;
    uint16_t *mark;
} hd_t;

/* Resolved path of a read/write call's parameters, into out. */
static bool call_path(const hd_t *hd, ctxc_str_t params, char *out,
                      size_t *outlen) {
    char raw[CTXC_CFG_PATH_MAX];
    size_t rawlen;
    if (!param_path(params, raw, sizeof raw, &rawlen)) {
        return false;
    }
    return resolve_path(hd->cfg->workspace_root, raw, rawlen, out,
                        CTXC_CFG_PATH_MAX, outlen);
}

/* Is `path` written by a write call in an entry after position p? */
static bool written_after(const hd_t *hd, size_t p, const char *path,
                          size_t plen) {
    char wpath[CTXC_CFG_PATH_MAX];
    for (size_t q = p + 1; q < hd->v->count; q++) {
        if ((hd->mark[q] & MARK_WRITE) == 0) {
            continue;
        }
        ctxc_entry_t e;
        ctxc_view_get(hd->v, q, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            size_t wlen;
            if (b.type == CTXC_BLOCK_TOOL_CALL &&
                is_write_tool(b.u.tool_call.name) &&
                call_path(hd, b.u.tool_call.parameters, wpath, &wlen) &&
                wlen == plen && memcmp(wpath, path, plen) == 0) {
                return true;
            }
        }
    }
    return false;
}

static bool has_glob(const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '*' || s[i] == '?' || s[i] == '[' || s[i] == '{') {
            return true;
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
    while (pos < paths.len && paths.ptr[pos] != ']') {
        size_t end = ctxc__json_skip_value(paths.ptr, paths.len, pos);
        ctxc_str_t el = {paths.ptr + pos, end - pos};
        char raw[CTXC_CFG_PATH_MAX], path[CTXC_CFG_PATH_MAX];
        size_t rawlen, plen;
        if (!json_string(el, raw, sizeof raw, &rawlen) ||
            has_glob(raw, rawlen) ||
            !resolve_path(hd->cfg->workspace_root, raw, rawlen, path,
                          sizeof path, &plen) ||
            !written_after(hd, p, path, plen)) {
            return false;
        }
        pos = end < paths.len && paths.ptr[end] == ',' ? end + 1 : end;
    }
    return true;
}

/* Position and block of the last call with `id` before q. */
static bool find_call(const ctxc_view_t *v, size_t q, ctxc_str_t id,
                      size_t *p_out, size_t *k_out, ctxc_block_t *call) {
    for (size_t p = q; p-- > 0;) {
        ctxc_entry_t e;
        ctxc_view_get(v, p, &e);
        if (e.speaker != CTXC_SPEAKER_AI) {
            continue;
        }
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        for (size_t k = 0; ctxc_entry_next_block(&e, &cur, &b); k++) {
            if (b.type == CTXC_BLOCK_TOOL_CALL &&
                ctxc__str_eq(b.u.tool_call.id, id)) {
                *p_out = p;
                *k_out = k;
                *call = b;
                return true;
            }
        }
    }
    return false;
}

/* The read->write rule for call block k of position p. A pruned call must
 * have a response that can be dropped with it. */
static bool rw_prunes(const hd_t *hd, size_t p, size_t k, const ctxc_block_t *b,
                      size_t *q_out, size_t *r_out) {
    if (!hd->cfg->read_write_pruning || b->type != CTXC_BLOCK_TOOL_CALL ||
        !is_read_tool(b->u.tool_call.name) || k >= MAX_EDIT_BLOCKS) {
        return false;
    }
    size_t q, r;
    if (!ctxc__find_response(hd->v, p, b->u.tool_call.id, &q, &r) ||
        r >= MAX_EDIT_BLOCKS) {
        return false;
    }
    bool pruned;
    if (str_is(b->u.tool_call.name, "read_many_files")) {
        pruned = many_files_written_after(hd, p, b->u.tool_call.parameters);
    } else {
        char path[CTXC_CFG_PATH_MAX];
        size_t plen;
        pruned = call_path(hd, b->u.tool_call.parameters, path, &plen) &&
                 written_after(hd, p, path, plen);
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
    size_t p, ck, rq, rk;
    ctxc_block_t call;
    return find_call(hd->v, q, b->u.tool_response.call_id, &p, &ck, &call) &&
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
    char ra[CTXC_CFG_PATH_MAX], rb[CTXC_CFG_PATH_MAX];
    size_t la, lb;
    if (!resolve_path(hd->cfg->workspace_root, a, alen, ra, sizeof ra, &la) ||
        !resolve_path(hd->cfg->workspace_root, b, blen, rb, sizeof rb, &lb)) {
        return alen == blen && memcmp(a, b, alen) == 0;
    }
    return la == lb && memcmp(ra, rb, la) == 0;
}

/* Is inclusion `in` of text block k at position p included again later? */
static bool included_later(const hd_t *hd, size_t p, size_t k, const char *t,
                           const incl_t *in) {
    for (size_t q = p; q < hd->v->count; q++) {
        ctxc_entry_t e;
        ctxc_view_get(hd->v, q, &e);
        if (e.speaker != CTXC_SPEAKER_HUMAN) {
            continue;
        }
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

typedef struct {
    uint64_t drop;    /* blocks removed (read->write) */
    uint64_t pointer; /* results replaced by the pointer text (recency) */
    uint64_t retext;  /* text blocks rewritten (dedupe) */
    size_t text_block[MAX_TEXT_EDITS];
    ctxc_str_t text[MAX_TEXT_EDITS];
    size_t ntext;
} hd_edit_t;

static bool apply_edit(void *user, size_t index, ctxc_block_t *b) {
    const hd_edit_t *ed = (const hd_edit_t *)user;
    if (index >= MAX_EDIT_BLOCKS) {
        return true;
    }
    uint64_t bit = (uint64_t)1u << index;
    if (ed->drop & bit) {
        return false;
    }
    if (ed->pointer & bit) {
        b->u.tool_response.result = CTXC_STR_LIT(POINTER_JSON);
    }
    if (ed->retext & bit) {
        for (size_t i = 0; i < ed->ntext; i++) {
            if (ed->text_block[i] == index) {
                b->u.text.text = ed->text[i];
            }
        }
    }
    return true;
}

/* Newer responses of the same tool (not dropped by read->write) than block
 * k of position q, counted up to `enough`. */
static size_t newer_results(const hd_t *hd, size_t q, size_t k, ctxc_str_t tool,
                            size_t enough) {
    size_t n = 0;
    for (size_t p = q; p < hd->v->count && n < enough; p++) {
        ctxc_entry_t e;
        ctxc_view_get(hd->v, p, &e);
        if (e.speaker != CTXC_SPEAKER_TOOL) {
            continue;
        }
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

/* Builds the dedupe text of a human text block into the scratch tail. */
static ctxc_status_t dedupe_text(const hd_t *hd, size_t p, size_t k,
                                 ctxc_str_t text, ctxc_density_result_t *r,
                                 ctxc_str_t *out, size_t *replaced,
                                 ctxc_error_t *err) {
    const char *t = text.ptr;
    size_t n = text.len;
    ctxc__sink_t s = {(char *)r->scratch + r->scratch_used,
                      r->scratch_cap - r->scratch_used, 0};
    size_t copied = 0;
    size_t at = 0;
    incl_t in;
    *replaced = 0;
    while (next_inclusion(t, n, at, &in)) {
        if (in.blen > sizeof DEDUPE_NOTE - 1 &&
            included_later(hd, p, k, t, &in)) {
            ctxc__put(&s, t + copied, in.body - copied);
            ctxc__put(&s, DEDUPE_NOTE, sizeof DEDUPE_NOTE - 1);
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
    out->ptr = s.buf;
    out->len = s.len;
    r->scratch_used += s.len; /* reclaimed after the record is written */
    return CTXC_OK;
}

static uint32_t block_tokens(ctxc_estimate_fn fn, void *user,
                             const ctxc_block_t *b) {
    return fn != NULL ? fn(user, b) : ctxc_estimate_block_default(NULL, b);
}

/* Decides and records the edits of position p. */
static ctxc_status_t edit_entry(const hd_t *hd, size_t p,
                                ctxc_density_result_t *r, ctxc_error_t *err) {
    ctxc_entry_t e;
    ctxc_view_get(hd->v, p, &e);
    hd_edit_t ed;
    memset(&ed, 0, sizeof ed);
    size_t temp_start = r->scratch_used;
    size_t dedupe = 0, recency = 0;
    const ctxc_density_config_t *cfg = hd->cfg;
    uint32_t retention =
        cfg->recency_retention < 1 ? 1 : cfg->recency_retention;

    const uint8_t *cur = NULL;
    ctxc_block_t b;
    for (size_t k = 0;
         ctxc_entry_next_block(&e, &cur, &b) && k < MAX_EDIT_BLOCKS; k++) {
        uint64_t bit = (uint64_t)1u << k;
        if (b.type == CTXC_BLOCK_TOOL_CALL && (hd->mark[p] & MARK_RWCALL) &&
            rw_prunes(hd, p, k, &b, NULL, NULL)) {
            ed.drop |= bit;
        } else if (b.type == CTXC_BLOCK_TOOL_RESPONSE) {
            if (rw_drops_response(hd, p, k, &b)) {
                ed.drop |= bit;
            } else if (cfg->recency_pruning &&
                       !str_is(b.u.tool_response.result, POINTER_JSON) &&
                       newer_results(hd, p, k, b.u.tool_response.tool_name,
                                     retention) >= retention) {
                ctxc_block_t after = b;
                after.u.tool_response.result = CTXC_STR_LIT(POINTER_JSON);
                if (block_tokens(NULL, NULL, &after) <
                    block_tokens(NULL, NULL, &b)) {
                    ed.pointer |= bit;
                    recency++;
                }
            }
        } else if (b.type == CTXC_BLOCK_TEXT && cfg->file_dedupe &&
                   e.speaker == CTXC_SPEAKER_HUMAN &&
                   ed.ntext < MAX_TEXT_EDITS) {
            size_t replaced;
            ctxc_str_t nt;
            ctxc_status_t st =
                dedupe_text(hd, p, k, b.u.text.text, r, &nt, &replaced, err);
            if (st != CTXC_OK) {
                r->scratch_used = temp_start;
                return st;
            }
            if (replaced > 0) {
                ed.retext |= bit;
                ed.text_block[ed.ntext] = k;
                ed.text[ed.ntext++] = nt;
                dedupe += replaced;
            }
        }
    }
    if (ed.drop == 0 && ed.pointer == 0 && ed.retext == 0) {
        return CTXC_OK;
    }
    size_t index = ctxc_view_index(hd->v, p);
    ctxc__entry_edit_t src_ed = {&e, apply_edit, &ed, NULL, 0, 0};
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
    ctxc__entry_src_t src = {e.speaker,
                             remaining,
                             ctxc__entry_edit_block,
                             &src_ed,
                             {e.metadata.ptr, e.metadata.len, CTXC__SRC_RAW}};
    size_t before = r->n_replacements;
    st = ctxc__density_replace(r, index, &src, NULL, NULL, err);
    if (st != CTXC_OK) {
        r->scratch_used = temp_start;
        return st;
    }
    /* slide the record over the temporary texts it was built from */
    ctxc_plan_op_t *op = &r->replacements[before];
    if (op->a > temp_start) {
        memmove(r->scratch + temp_start, r->scratch + op->a, op->b);
        op->a = (uint32_t)temp_start;
        r->scratch_used = temp_start + op->b;
    }
    if (ed.drop) {
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
    hd_t hd = {raw, config, work, work->aux2};
    for (size_t p = 0; p < raw->count; p++) {
        hd.mark[p] = 0;
    }
    if (config->read_write_pruning) {
        for (size_t p = 0; p < raw->count; p++) {
            ctxc_entry_t e;
            ctxc_view_get(raw, p, &e);
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            while (e.speaker == CTXC_SPEAKER_AI &&
                   ctxc_entry_next_block(&e, &cur, &b)) {
                if (b.type == CTXC_BLOCK_TOOL_CALL &&
                    is_write_tool(b.u.tool_call.name)) {
                    hd.mark[p] |= MARK_WRITE;
                }
            }
        }
        for (size_t p = 0; p < raw->count; p++) {
            ctxc_entry_t e;
            ctxc_view_get(raw, p, &e);
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            for (size_t k = 0; e.speaker == CTXC_SPEAKER_AI &&
                               ctxc_entry_next_block(&e, &cur, &b);
                 k++) {
                size_t q, r;
                if (rw_prunes(&hd, p, k, &b, &q, &r)) {
                    hd.mark[p] |= MARK_RWCALL;
                    hd.mark[q] |= MARK_RWRESP;
                    result->counts.read_write_pruned++;
                }
            }
        }
    }
    for (size_t p = 0; p < raw->count; p++) {
        ctxc_status_t st = edit_entry(&hd, p, result, err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    return CTXC_OK;
}

/* ---- compress: one-line summaries of older tool results ------------------ */

/* Appends s to the sink, at most `max` bytes, cut on a UTF-8 boundary. */
static void put_clipped(ctxc__sink_t *s, const char *p, size_t n, size_t max) {
    size_t take = n;
    bool cut = false;
    for (size_t i = 0; i < n; i++) {
        if (p[i] == '\n' || p[i] == '\r') {
            take = i;
            cut = true;
            break;
        }
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

/* "[summarized] <tool> <path or command>: ok|error" as a JSON string. */
static void summary_json(const ctxc_block_t *resp, const ctxc_block_t *call,
                         char *buf, size_t cap, ctxc_str_t *out) {
    char text[256];
    ctxc__sink_t s = {text, sizeof text - 1, 0};
    ctxc__put(&s, "[summarized] ", 13);
    put_clipped(&s, resp->u.tool_response.tool_name.ptr,
                resp->u.tool_response.tool_name.len, 48);
    if (call != NULL) {
        static const char *const keys[] = {"file_path", "absolute_path",
                                           "path",      "command",
                                           "pattern",   "dir_path"};
        for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
            ctxc_str_t v;
            char arg[CTXC_CFG_PATH_MAX];
            size_t alen;
            if (ctxc__json_find_key(call->u.tool_call.parameters.ptr,
                                    call->u.tool_call.parameters.len, keys[k],
                                    &v) &&
                json_string(v, arg, sizeof arg, &alen)) {
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
    ctxc__sink_t j = {buf, cap, 0};
    (void)ctxc__json_write_string(&j, text, s.len, CTXC__SRC_RAW, NULL);
    out->ptr = buf;
    out->len = j.len;
}

typedef struct {
    const ctxc_view_t *v;
    size_t pos;
    ctxc_estimate_fn estimate;
    void *estimate_user;
    char buf[320]; /* the summary of the block being written */
} sum_edit_t;

static bool summarize_edit(void *user, size_t index, ctxc_block_t *b) {
    sum_edit_t *se = (sum_edit_t *)user;
    (void)index;
    if (b->type != CTXC_BLOCK_TOOL_RESPONSE) {
        return true;
    }
    size_t p, k;
    ctxc_block_t call;
    bool found =
        find_call(se->v, se->pos, b->u.tool_response.call_id, &p, &k, &call);
    ctxc_str_t sum;
    summary_json(b, found ? &call : NULL, se->buf, sizeof se->buf, &sum);
    ctxc_block_t after = *b;
    after.u.tool_response.result = sum;
    after.u.tool_response.error = CTXC_STR_ABSENT;
    if (block_tokens(se->estimate, se->estimate_user, &after) <
        block_tokens(se->estimate, se->estimate_user, b)) {
        *b = after;
    }
    return true;
}

ctxc_status_t ctxc__hd_compress(const ctxc_compress_ctx_t *ctx,
                                ctxc_plan_t *plan, ctxc_error_t *err) {
    const ctxc_view_t *v = &ctx->view;
    size_t n = v->count;
    ctxc_boundary_t bd;
    uint64_t total, target;
    ctxc_status_t st = ctxc__compress_prepare(ctx, CTXC_STRATEGY_HIGH_DENSITY,
                                              plan, &bd, &total, &target, err);
    if (st != CTXC_OK) {
        return st;
    }
    uint32_t keep_pm = 1000u - (ctx->values.preserve_threshold > 1000u
                                    ? 1000u
                                    : ctx->values.preserve_threshold);
    size_t split = ctxc_adjust_for_tool_call_boundary(
        &bd, (size_t)(((uint64_t)n * keep_pm) / 1000u));

    plan->meta.compressed_count = n;
    plan->meta.bottom_preserved = n - split;

    sum_edit_t se;
    se.v = v;
    se.estimate = ctx->estimate;
    se.estimate_user = ctx->estimate_user;
    uint64_t estimate = total;
    size_t next_keep = 0; /* store index from which entries are still kept */
    size_t summarized = 0;
    for (size_t p = 0; p < split && estimate >= target; p++) {
        ctxc_entry_t e;
        ctxc_view_get(v, p, &e);
        if (e.speaker != CTXC_SPEAKER_TOOL) {
            continue;
        }
        se.pos = p;
        ctxc__entry_edit_t ed = {&e, summarize_edit, &se, NULL, 0, 0};
        ctxc__entry_src_t src = {
            e.speaker,
            e.block_count,
            ctxc__entry_edit_block,
            &ed,
            {e.metadata.ptr, e.metadata.len, CTXC__SRC_RAW}};
        size_t mark = plan->scratch_used;
        ctxc_plan_op_t op;
        if ((st = ctxc__record_to_scratch(
                 plan->scratch, plan->scratch_cap, &plan->scratch_used, &src,
                 ctx->estimate, ctx->estimate_user, &op, err)) != CTXC_OK) {
            return st;
        }
        if (op.tokens >= e.tokens) { /* nothing to gain: keep it as it is */
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
        estimate -= e.tokens - op.tokens;
        next_keep = index + 1;
        summarized++;
    }
    if ((st = ctxc_plan_keep(plan, next_keep, v->store_count, err)) !=
        CTXC_OK) {
        return st;
    }
    plan->meta.middle_compressed = summarized;
    plan->meta.tokens_after = estimate;
    plan->meta.unchanged = summarized == 0;
    return CTXC_OK;
}

#endif
