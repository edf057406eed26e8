/*
 * ctxc — JSON Lines import (IContent and OpenAI chat messages) and canonical
 * export. The JSON scanner (json_tok.h) validates and tokenises each line in
 * one pass; the record writer then copies the string bodies into the arena
 * (escape-free ones as they are).
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "error.h"
#include "json.h"
#include "json_tok.h"
#include "pairing.h"
#include "record.h"
#include "sink.h"
#include "store.h"
#include "swar.h"
#include "text_stats.h"

/* A string literal without strlen (export writes its keys by the thousand). */
#define PUT_LIT(w, lit) ctxc__stream_put((w), (lit), sizeof(lit) - 1u)

_Static_assert(sizeof(ctxc__jtok_t) == CTXC_JSON_TOKEN_WORDS * sizeof(uint32_t),
               "ctxc_import_t token storage does not match ctxc__jtok_t");

/* ---- token document helpers ---------------------------------------------- */

typedef struct {
    const char *js;
    const ctxc__jtok_t *t;
    int n;
    /* the token scratch after the line's tokens, for block sources kept
     * while the line is stored (none: NULL, 0) */
    ctxc__block_src_t *spare;
    size_t nspare;
} doc_t;

/* Index of the token after the subtree rooted at i. */
static int skip(const doc_t *d, int i) { return (int)d->t[i].next; }

static const char *tok_p(const doc_t *d, int i) {
    return d->js + d->t[i].start;
}
static size_t tok_n(const doc_t *d, int i) {
    return (size_t)(d->t[i].end - d->t[i].start);
}

static bool tok_is(const doc_t *d, int i, const char *s) {
    const ctxc__jtok_t *t = &d->t[i];
#ifdef CTXC__HOST_FAST
    if (t->type == CTXC__JT_STRING && (t->flags & CTXC__JF_ESCAPES) == 0) {
        const char *p = d->js + t->start; /* the common case, inline */
        size_t n = t->end - t->start;
        for (size_t k = 0; k < n; k++) {
            if (p[k] != s[k] || s[k] == '\0') {
                return false;
            }
        }
        return s[n] == '\0';
    }
#endif
    return ctxc__jtok_is(d->js, t, s);
}

static bool tok_null(const doc_t *d, int i) {
    return d->t[i].type == CTXC__JT_NULL;
}

/* A JSON value token as a source span (strings keep their quotes). The
 * line is validated: a value the scanner found canonical is stored as it
 * is written, the others are canonicalised when they are stored. */
static ctxc__src_t value_src(const doc_t *d, int i) {
    const ctxc__jtok_t *t = &d->t[i];
    ctxc__src_t s = {tok_p(d, i), tok_n(d, i), CTXC__SRC_VALID};
    if (t->type == CTXC__JT_STRING) {
        s.p--;
        s.n += 2;
    }
    if ((t->flags & CTXC__JF_NONCANON) != 0) {
        s.kind = CTXC__SRC_RAW;
    }
    return s;
}

/* A string token as a source of its decoded content (valid UTF-8 as is when
 * it has no escapes). */
static ctxc__src_t string_src(const doc_t *d, int i) {
    ctxc__src_t s = {tok_p(d, i), tok_n(d, i),
                     (d->t[i].flags & CTXC__JF_ESCAPES) != 0 ? CTXC__SRC_JSTR
                                                             : CTXC__SRC_VALID};
    return s;
}

#ifdef CTXC__SCAN_STATS
/* Statistics of a string token, if the scan counted them. */
static bool tok_stats(const doc_t *d, int i, ctxc__text_stats_t *st) {
    const ctxc__jtok_t *t = &d->t[i];
    if (t->type != CTXC__JT_STRING || (t->flags & CTXC__JF_STATS) == 0) {
        return false;
    }
    *st = ctxc__jtok_stats(t);
    return true;
}

/* Gives a block source the default estimate of the text error "\n" text
 * (tokens; -1: absent), when the scan counted every piece (a string). */
static void set_tokens(const doc_t *d, int error, int text,
                       ctxc__block_src_t *out) {
    ctxc__text_stats_t all = {0, 0, false, false};
    ctxc__text_stats_t one;
    if (error >= 0) {
        if (!tok_stats(d, error, &one)) {
            return;
        }
        ctxc__stats_join(&all, &one);
        const ctxc__text_stats_t nl = {1, 1, true, true};
        ctxc__stats_join(&all, &nl);
    }
    if (text >= 0) {
        if (!tok_stats(d, text, &one)) {
            return;
        }
        ctxc__stats_join(&all, &one);
    }
    out->has_tokens = true;
    out->tokens = ctxc__stats_tokens(&all);
}
#else
/* Small targets: the record writer counts (nothing is counted in the scan). */
static void set_tokens(const doc_t *d, int error, int text,
                       ctxc__block_src_t *out) {
    (void)d;
    (void)error;
    (void)text;
    (void)out;
}
#endif

static const char *type_name(unsigned t) {
    switch (t) {
    case CTXC__JT_OBJECT:
        return "an object";
    case CTXC__JT_ARRAY:
        return "an array";
    case CTXC__JT_STRING:
        return "a string";
    default:
        return "a number, boolean or null";
    }
}

/* Child `k` of a container (object: the key token), with a sequential cache. */
typedef struct {
    int container;
    int k;
    int tok;
} child_cache_t;

static int nth_child(const doc_t *d, int container, int k, child_cache_t *c) {
    int step = d->t[container].type == CTXC__JT_OBJECT ? 2 : 1;
    int tok = container + 1;
    int from = 0;
    if (c != NULL && c->container == container && c->k <= k && c->k >= 0) {
        tok = c->tok;
        from = c->k;
    }
    for (int i = from; i < k; i++) {
        tok = step == 2 ? skip(d, tok + 1) : skip(d, tok);
    }
    if (c != NULL) {
        c->container = container;
        c->k = k;
        c->tok = tok;
    }
    return tok;
}

/* Looks up keys of an object: `keys` lists the allowed ones; found value
 * tokens go to `vals` (-1 when missing). Unknown and duplicate keys are
 * errors; with `ignore_null_unknown`, unknown keys whose value is null are
 * skipped. */
static ctxc_status_t object_keys(const doc_t *d, int obj,
                                 const char *const *keys, int nkeys, int *vals,
                                 bool ignore_null_unknown, ctxc_error_t *err) {
    for (int k = 0; k < nkeys; k++) {
        vals[k] = -1;
    }
    int key = obj + 1;
    int next = 0; /* keys come in the listed order in canonical lines: the
                     one after the last found is tried first */
    for (int m = 0; m < (int)d->t[obj].size; m++) {
        int val = key + 1;
        int k = next;
        int tries = 0;
        while (tries < nkeys && !tok_is(d, key, keys[k])) {
            k = k + 1 < nkeys ? k + 1 : 0;
            tries++;
        }
        if (tries == nkeys) {
            if (!(ignore_null_unknown && tok_null(d, val))) {
                return ctxc__fail(err, CTXC_E_PARSE, "unknown key %q",
                                  tok_p(d, key), tok_n(d, key));
            }
        } else if (vals[k] >= 0) {
            return ctxc__fail(err, CTXC_E_PARSE, "duplicate key '%s'", keys[k]);
        } else {
            vals[k] = val;
            next = k + 1 < nkeys ? k + 1 : 0;
        }
        key = skip(d, val);
    }
    return CTXC_OK;
}

/* "missing key 'K'" for what = "'K'" (the quoted key want_type names). */
static ctxc_status_t missing(const char *what, ctxc_error_t *err) {
    return ctxc__fail(err, CTXC_E_PARSE, "missing key %s", what);
}

/* Token tok (-1: the key is missing) must be of type `type`. */
static ctxc_status_t want_type(const doc_t *d, int tok, unsigned type,
                               const char *what, ctxc_error_t *err) {
    if (tok < 0) {
        return missing(what, err);
    }
    if (d->t[tok].type != type) {
        return ctxc__fail(err, CTXC_E_PARSE, "%s must be %s, not %s", what,
                          type_name(type), type_name(d->t[tok].type));
    }
    return CTXC_OK;
}

/* ---- IContent ------------------------------------------------------------ */

/* Blocks whose sources are kept: the record writer and the store's
 * pairing check each ask for every block, the second time from the token
 * scratch the line's tokens left free (on the board the second resolution
 * was a tenth of an import); a block that does not fit is resolved
 * again. */
typedef struct {
    const doc_t *d;
    int blocks; /* array token */
    child_cache_t cache;
    size_t nkept; /* blocks 0 .. nkept-1 are in d->spare */
} ic_ctx_t;

/* Resolves block element `el` into a source, validating it. */
static ctxc_status_t ic_block(const doc_t *d, int el, size_t i,
                              ctxc__block_src_t *out, ctxc_error_t *err) {
    if (d->t[el].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "block %z must be an object, not %s", i,
                          type_name(d->t[el].type));
    }
    int type_tok = -1;
    int key = el + 1;
    for (int m = 0; m < (int)d->t[el].size; m++) {
        if (tok_is(d, key, "type")) {
            type_tok = key + 1;
            break;
        }
        key = skip(d, key + 1);
    }
    if (type_tok < 0) {
        return ctxc__fail(err, CTXC_E_PARSE, "block %z: missing key 'type'", i);
    }
    if (d->t[type_tok].type != CTXC__JT_STRING) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "block %z: 'type' must be a string", i);
    }
    unsigned type = 0;
    while (type < CTXC_BLOCK_TYPE_COUNT &&
           !tok_is(d, type_tok, ctxc__block_desc[type].name)) {
        type++;
    }
    if (type == CTXC_BLOCK_TYPE_COUNT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "block %z: unknown block type %q (text, tool_call, "
                          "tool_response, thinking, code or media expected)",
                          i, tok_p(d, type_tok), tok_n(d, type_tok));
    }
    const ctxc__block_desc_t *desc = &ctxc__block_desc[type];
    const char *keys[CTXC__MAX_FIELDS + 1];
    int vals[CTXC__MAX_FIELDS + 1];
    keys[0] = "type";
    for (unsigned f = 0; f < desc->nfields; f++) {
        keys[f + 1] = desc->keys[f];
    }
    ctxc_status_t st =
        object_keys(d, el, keys, (int)desc->nfields + 1, vals, false, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "block %z (%s)", i, desc->name);
        return st;
    }
    memset(out, 0, sizeof *out);
    out->type = (ctxc_block_type_t)type;
    for (unsigned f = 0; f < desc->nfields; f++) {
        int v = vals[f + 1];
        if (v < 0) {
            if (((desc->optional >> f) & 1u) == 0) {
                return ctxc__fail(err, CTXC_E_PARSE,
                                  "block %z (%s): missing key '%s'", i,
                                  desc->name, desc->keys[f]);
            }
            continue;
        }
        if (((desc->json >> f) & 1u) != 0) {
            out->f[f] = value_src(d, v);
        } else {
            if (d->t[v].type != CTXC__JT_STRING) {
                return ctxc__fail(
                    err, CTXC_E_PARSE,
                    "block %z (%s): '%s' must be a string, not %s", i,
                    desc->name, desc->keys[f], type_name(d->t[v].type));
            }
            out->f[f] = string_src(d, v);
        }
    }
    /* the estimate from what the scan counted: the text of the block is
     * one string (media: the caption; tool_response: error "\n" result) */
    switch (out->type) {
    case CTXC_BLOCK_TOOL_CALL:
        break;
    case CTXC_BLOCK_TOOL_RESPONSE:
        set_tokens(d, vals[4], vals[3], out);
        break;
    case CTXC_BLOCK_MEDIA:
        set_tokens(d, -1, vals[4], out);
        break;
    default: /* text, thinking, code: the first field */
        set_tokens(d, -1, vals[1], out);
        break;
    }
    return CTXC_OK;
}

CTXC__NOINLINE static ctxc_status_t
ic_block_fn(void *ctx, size_t i, ctxc__block_src_t *out, ctxc_error_t *err) {
    ic_ctx_t *c = (ic_ctx_t *)ctx;
    if (i < c->nkept) {
        *out = c->d->spare[i];
        return CTXC_OK;
    }
    int el = nth_child(c->d, c->blocks, (int)i, &c->cache);
    ctxc_status_t st = ic_block(c->d, el, i, out, err);
    if (st == CTXC_OK && i == c->nkept && i < c->d->nspare) {
        c->d->spare[c->nkept++] = *out;
    }
    return st;
}

static ctxc_status_t import_icontent(ctxc_history_t *h, const doc_t *d,
                                     ctxc_error_t *err) {
    static const char *const keys[] = {"speaker", "blocks", "metadata"};
    int v[3];
    ctxc_status_t st = object_keys(d, 0, keys, 3, v, false, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (v[0] < 0) {
        return missing("'speaker'", err);
    }
    if (v[1] < 0) {
        return missing("'blocks'", err);
    }
    if ((st = want_type(d, v[0], CTXC__JT_STRING, "'speaker'", err)) !=
            CTXC_OK ||
        (st = want_type(d, v[1], CTXC__JT_ARRAY, "'blocks'", err)) != CTXC_OK ||
        (v[2] >= 0 && (st = want_type(d, v[2], CTXC__JT_OBJECT, "'metadata'",
                                      err)) != CTXC_OK)) {
        return st;
    }
    unsigned sp = 0;
    while (sp < 3 && !tok_is(d, v[0], ctxc_speaker_name((ctxc_speaker_t)sp))) {
        sp++;
    }
    if (sp == 3) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "unknown speaker %q (human, ai or tool expected)",
                          tok_p(d, v[0]), tok_n(d, v[0]));
    }
    if (d->t[v[1]].size == 0) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "'blocks' is empty (an entry "
                          "needs at least one block)");
    }
    /* the blocks are checked as the record is written, in order */
    ic_ctx_t c;
    c.d = d;
    c.blocks = v[1];
    c.cache = (child_cache_t){-1, 0, 0};
    c.nkept = 0;
    ctxc__entry_src_t src = {
        (ctxc_speaker_t)sp, (size_t)d->t[v[1]].size, ic_block_fn, &c,
        v[2] >= 0 ? value_src(d, v[2]) : (ctxc__src_t){NULL, 0, CTXC__SRC_RAW}};
    return ctxc__history_put(h, SIZE_MAX, &src, err);
}

/* ---- OpenAI chat messages ------------------------------------------------ */

typedef struct {
    const doc_t *d;
    int content;    /* content token or -1 */
    int ncontent;   /* text blocks taken from content */
    int tool_calls; /* array token or -1 */
    child_cache_t cache;
    ctxc__src_t tool_name; /* role tool */
    int tool_call_id;
    ctxc_history_t *h;
    bool check_args; /* parse arguments strings (in the arena's free tail) */
} oa_ctx_t;

static const ctxc__src_t EMPTY_OBJECT = {"{}", 2, CTXC__SRC_RAW};

static ctxc_status_t oa_content_block(oa_ctx_t *c, int k,
                                      ctxc__block_src_t *out,
                                      ctxc_error_t *err) {
    const doc_t *d = c->d;
    memset(out, 0, sizeof *out);
    out->type = CTXC_BLOCK_TEXT;
    if (d->t[c->content].type == CTXC__JT_STRING) {
        out->f[0] = string_src(d, c->content);
        set_tokens(d, -1, c->content, out);
        return CTXC_OK;
    }
    int part = nth_child(d, c->content, k, &c->cache);
    if (d->t[part].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "content part %u must be an object", (unsigned)k);
    }
    static const char *const keys[] = {"type", "text"};
    int v[2];
    ctxc_status_t st = object_keys(d, part, keys, 2, v, false, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "content part %u", (unsigned)k);
        return st;
    }
    if (v[0] < 0 || !tok_is(d, v[0], "text")) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "content part %u: only {\"type\":\"text\"} parts "
                          "are supported",
                          (unsigned)k);
    }
    if (v[1] < 0 || d->t[v[1]].type != CTXC__JT_STRING) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "content part %u: 'text' must be a string",
                          (unsigned)k);
    }
    out->f[0] = string_src(d, v[1]);
    set_tokens(d, -1, v[1], out);
    return CTXC_OK;
}

/* Checks that a JSON text held in a string body is valid JSON, decoding it
 * into the free tail of the arena (scratch nobody sees). Without room for it
 * the entry cannot be stored either: the record writer reports that. */
static ctxc_status_t check_json_text(ctxc_history_t *h, const ctxc__src_t *s,
                                     ctxc_error_t *err) {
    ctxc__sink_t m = {(char *)h->arena + h->used, h->arena_bytes - h->used, 0};
    return ctxc__json_canon(s->p, s->n, s->kind, CTXC_CFG_JSON_MAX_DEPTH, &m,
                            err);
}

static ctxc_status_t oa_tool_call(const oa_ctx_t *c, int call, unsigned k,
                                  ctxc__block_src_t *out, ctxc_error_t *err) {
    const doc_t *d = c->d;
    if (d->t[call].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE, "tool_calls[%u] must be an object",
                          k);
    }
    static const char *const keys[] = {"id", "type", "function"};
    int v[3];
    ctxc_status_t st = object_keys(d, call, keys, 3, v, true, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "tool_calls[%u]", k);
        return st;
    }
    if (v[0] < 0 || d->t[v[0]].type != CTXC__JT_STRING) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "tool_calls[%u]: 'id' must be a string", k);
    }
    if (v[1] >= 0 && !tok_is(d, v[1], "function")) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "tool_calls[%u]: only type \"function\" is supported",
                          k);
    }
    if (v[2] < 0 || d->t[v[2]].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "tool_calls[%u]: 'function' must be an object", k);
    }
    static const char *const fkeys[] = {"name", "arguments"};
    int f[2];
    if ((st = object_keys(d, v[2], fkeys, 2, f, true, err)) != CTXC_OK) {
        ctxc__err_prefix(err, "tool_calls[%u].function", k);
        return st;
    }
    if (f[0] < 0 || d->t[f[0]].type != CTXC__JT_STRING) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "tool_calls[%u].function: 'name' must be a string",
                          k);
    }
    memset(out, 0, sizeof *out);
    out->type = CTXC_BLOCK_TOOL_CALL;
    out->f[0] = string_src(d, v[0]);
    out->f[1] = string_src(d, f[0]);
    if (f[1] < 0 ||
        (d->t[f[1]].type == CTXC__JT_STRING && tok_n(d, f[1]) == 0)) {
        out->f[2] = EMPTY_OBJECT; /* no arguments */
    } else if (d->t[f[1]].type == CTXC__JT_STRING) {
        out->f[2] = string_src(d, f[1]); /* JSON text inside the string */
        if (out->f[2].kind == CTXC__SRC_VALID) {
            out->f[2].kind = CTXC__SRC_RAW; /* not canonical JSON yet */
        }
        if (c->check_args &&
            (st = check_json_text(c->h, &out->f[2], err)) != CTXC_OK) {
            ctxc__err_prefix(err,
                             "tool_calls[%u].function.arguments is not "
                             "valid JSON",
                             k);
            return st;
        }
    } else {
        out->f[2] = value_src(d, f[1]); /* already a JSON value */
    }
    return CTXC_OK;
}

static ctxc_status_t oa_block_fn(void *ctx, size_t i, ctxc__block_src_t *out,
                                 ctxc_error_t *err) {
    oa_ctx_t *c = (oa_ctx_t *)ctx;
    const doc_t *d = c->d;
    if (c->tool_call_id >= 0) {
        memset(out, 0, sizeof *out);
        out->type = CTXC_BLOCK_TOOL_RESPONSE;
        out->f[0] = string_src(d, c->tool_call_id);
        out->f[1] = c->tool_name;
        if (c->content >= 0 && !tok_null(d, c->content)) {
            out->f[2] = value_src(d, c->content);
            set_tokens(d, -1, c->content, out);
        } else {
            out->f[2] = (ctxc__src_t){"\"\"", 2, CTXC__SRC_RAW};
            set_tokens(d, -1, -1, out); /* "": 0 */
        }
        return CTXC_OK;
    }
    if ((int)i < c->ncontent) {
        return oa_content_block(c, (int)i, out, err);
    }
    unsigned k = (unsigned)((int)i - c->ncontent);
    int call = nth_child(d, c->tool_calls, (int)k, &c->cache);
    return oa_tool_call(c, call, k, out, err);
}

/* Name of the tool_call with this id, searched backwards through h. */
CTXC__NOINLINE static ctxc__src_t find_call_name(const ctxc_history_t *h,
                                                 const doc_t *d, int id_tok) {
    for (size_t i = ctxc_history_count(h); i-- > 0;) {
        ctxc_entry_t e;
        ctxc_history_get(h, i, &e);
        const uint8_t *cur = NULL;
        ctxc_block_t b;
        while (ctxc_entry_next_block(&e, &cur, &b)) {
            if (b.type == CTXC_BLOCK_TOOL_CALL &&
                ctxc__src_equals(tok_p(d, id_tok), tok_n(d, id_tok),
                                 CTXC__SRC_JSTR, b.u.tool_call.id.ptr,
                                 b.u.tool_call.id.len)) {
                ctxc__src_t s = {b.u.tool_call.name.ptr, b.u.tool_call.name.len,
                                 CTXC__SRC_RAW};
                return s;
            }
        }
    }
    return (ctxc__src_t){"", 0, CTXC__SRC_RAW};
}

static ctxc_status_t import_openai(ctxc_history_t *h, const doc_t *d,
                                   ctxc_error_t *err) {
    static const char *const keys[] = {"role", "content", "tool_calls",
                                       "tool_call_id", "name"};
    enum { ROLE, CONTENT, CALLS, CALL_ID, NAME };
    int v[5];
    ctxc_status_t st = object_keys(d, 0, keys, 5, v, true, err);
    if (st != CTXC_OK) {
        return st;
    }
    if ((st = want_type(d, v[ROLE], CTXC__JT_STRING, "'role'", err)) !=
        CTXC_OK) {
        return st;
    }
    oa_ctx_t c;
    memset(&c, 0, sizeof c);
    c.d = d;
    c.content = v[CONTENT];
    c.tool_calls = -1;
    c.tool_call_id = -1;
    c.cache.container = -1;
    /* the roles and the speakers they become */
    static const char *const roles[] = {"system", "user", "assistant", "tool"};
    static const uint8_t role_speaker[] = {CTXC_SPEAKER_HUMAN,
                                           CTXC_SPEAKER_HUMAN, CTXC_SPEAKER_AI,
                                           CTXC_SPEAKER_TOOL};
    unsigned role = 0;
    while (role < 4 && !tok_is(d, v[ROLE], roles[role])) {
        role++;
    }
    if (role == 4) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "unknown role %q (system, user, assistant or tool "
                          "expected)",
                          tok_p(d, v[ROLE]), tok_n(d, v[ROLE]));
    }
    ctxc_speaker_t speaker = (ctxc_speaker_t)role_speaker[role];
    bool assistant = role == 2;
    bool tool = role == 3;
    ctxc__src_t meta = {NULL, 0, CTXC__SRC_RAW};
    if (role == 0) {
        meta = (ctxc__src_t){"{\"source_role\":\"system\"}", 24, CTXC__SRC_RAW};
    }
    if (v[NAME] >= 0 && (st = want_type(d, v[NAME], CTXC__JT_STRING, "'name'",
                                        err)) != CTXC_OK) {
        return st;
    }
    if (!assistant && v[CALLS] >= 0 && !tok_null(d, v[CALLS])) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "'tool_calls' is only allowed on assistant messages");
    }
    if (!tool && v[CALL_ID] >= 0 && !tok_null(d, v[CALL_ID])) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "'tool_call_id' is only allowed on tool messages");
    }
    size_t nblocks;
    if (tool) {
        if ((st = want_type(d, v[CALL_ID], CTXC__JT_STRING, "'tool_call_id'",
                            err)) != CTXC_OK) {
            return st;
        }
        if (c.content >= 0 && !tok_null(d, c.content) &&
            d->t[c.content].type != CTXC__JT_STRING) {
            return ctxc__fail(err, CTXC_E_PARSE,
                              "'content' of a tool message must be a string");
        }
        c.tool_call_id = v[CALL_ID];
        c.tool_name = v[NAME] >= 0 ? string_src(d, v[NAME])
                                   : find_call_name(h, d, v[CALL_ID]);
        nblocks = 1;
    } else {
        if (c.content >= 0 && !tok_null(d, c.content)) {
            unsigned t = d->t[c.content].type;
            if (t == CTXC__JT_STRING) {
                /* an empty assistant text next to tool calls is no block */
                c.ncontent =
                    (tok_n(d, c.content) == 0 && assistant && v[CALLS] >= 0 &&
                     d->t[v[CALLS]].type == CTXC__JT_ARRAY &&
                     d->t[v[CALLS]].size > 0)
                        ? 0
                        : 1;
            } else if (t == CTXC__JT_ARRAY) {
                c.ncontent = (int)d->t[c.content].size;
            } else {
                return ctxc__fail(err, CTXC_E_PARSE,
                                  "'content' must be a string, an array of "
                                  "parts or null, not %s",
                                  type_name(t));
            }
        }
        int ncalls = 0;
        if (assistant && v[CALLS] >= 0 && !tok_null(d, v[CALLS])) {
            if ((st = want_type(d, v[CALLS], CTXC__JT_ARRAY, "'tool_calls'",
                                err)) != CTXC_OK) {
                return st;
            }
            c.tool_calls = v[CALLS];
            ncalls = (int)d->t[v[CALLS]].size;
        }
        nblocks = (size_t)c.ncontent + (size_t)ncalls;
        if (nblocks == 0) {
            return ctxc__fail(err, CTXC_E_PARSE,
                              "message has no content and no tool calls");
        }
    }
    c.h = h;
    c.check_args = true;
    for (size_t i = 0; i < nblocks; i++) { /* validate first */
        ctxc__block_src_t b;
        if ((st = oa_block_fn(&c, i, &b, err)) != CTXC_OK) {
            return st;
        }
    }
    c.check_args = false; /* the record writer uses the tail now */
    ctxc__entry_src_t src = {speaker, nblocks, oa_block_fn, &c, meta};
    return ctxc__history_put(h, SIZE_MAX, &src, err);
}

/* ---- import driver ------------------------------------------------------- */

ctxc_status_t ctxc_import_begin(ctxc_import_t *imp, ctxc_history_t *h,
                                ctxc_format_t format, ctxc_error_t *err) {
    if (imp == NULL || h == NULL || (unsigned)format > CTXC_FORMAT_OPENAI) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "import needs a state, a history and a known format");
    }
    imp->history = h;
    imp->line = 0;
    imp->format = format;
    imp->active = true;
    imp->snapshot = *h;
    h->import_from_ = h->count + 1u; /* its entries: from here on */
    return CTXC_OK;
}

CTXC__NOINLINE static void give_back(const ctxc_import_t *imp,
                                     ctxc_history_t *h) {
    const ctxc_history_t *s = &imp->snapshot;
    h->arena_bytes = s->arena_bytes;
    h->ids_mem_ = s->ids_mem_;
    h->ids_bytes_ = s->ids_bytes_;
    h->ids_cap_ = s->ids_cap_;
    h->ids_used_ = s->ids_used_;
    h->ids_state_ = s->ids_state_;
}

/* The rollback works on the entries, not on the whole struct saved at
 * begin: the import's entries are those from the history's mark on
 * (import_from_: kept up to date by removals and plans before it, which
 * may not touch the entries after it), and what is not the import's (a
 * job's hold, what a job applied, the edit count) stays. When nothing but
 * appends happened, the counters saved at begin are exact and are taken
 * back as they were. */
void ctxc_import_abort(ctxc_import_t *imp) {
    if (imp == NULL || !imp->active) {
        return;
    }
    ctxc_history_t *h = imp->history;
    const ctxc_history_t *s = &imp->snapshot;
    give_back(imp, h); /* an index lent by ctxc_import_text() */
    size_t from = h->import_from_ > 0 ? h->import_from_ - 1u : h->count;
    if (from > h->count) {
        from = h->count;
    }
    h->import_from_ = 0;
    if (h->frozen_ > from) {
        /* a job started during the import holds imported entries: it is
         * cancelled as by a clear (its next poll ends it) */
        h->frozen_ = 0;
        h->gen_++;
    }
    if (h->edits_ == s->edits_ && h->gen_ == s->gen_ && from == s->count) {
        /* appends only: the saved counters are exact */
        h->count = s->count;
        h->used = s->used;
        h->token_sum = s->token_sum;
        h->anchor_delta = s->anchor_delta;
        h->hwm_count = s->hwm_count;
        h->hwm_used = s->hwm_used;
    } else if (from < h->count) {
        for (size_t i = from; i < h->count; i++) {
            h->token_sum -= h->slots[i].tokens;
        }
        h->used = h->slots[from].offset;
        h->count = from;
    }
    ctxc__pairing_stale(h); /* its id index and filter saw the lines */
    imp->active = false;
}

ctxc_status_t ctxc_import_end(ctxc_import_t *imp, ctxc_error_t *err) {
    if (imp == NULL || !imp->active) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "no import in progress");
    }
    imp->history->import_from_ = 0;
    imp->active = false;
    return CTXC_OK;
}

/* One line into the history (ctxc_import_line without the rollback): a
 * failure changes nothing. */
static ctxc_status_t line_in(ctxc_import_t *imp, const char *line, size_t len,
                             ctxc_error_t *err) {
    if (line == NULL && len != 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "NULL line");
    }
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) {
        len--;
    }
    size_t first = 0;
    while (first < len &&
           (line[first] == ' ' || line[first] == '\t' || line[first] == '\r')) {
        first++;
    }
    if (first == len) {
        return CTXC_OK; /* blank line */
    }
    ctxc_history_t *h = imp->history;
    if (len > h->arena_bytes) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "line is %z bytes, larger than the history arena (%z "
                          "bytes)",
                          len, h->arena_bytes);
    }
    if (len > 0x7FFFFFFFu) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE, "line too long");
    }
    /* one pass: syntax, UTF-8, escapes, surrogates, depth, tokens */
    ctxc__jtok_t *tokens = (ctxc__jtok_t *)(void *)imp->tokens_;
    size_t n = 0;
    ctxc_status_t st =
        ctxc__json_scan_stats(line, len, CTXC_CFG_JSON_MAX_DEPTH, tokens,
                              CTXC_CFG_JSON_MAX_TOKENS, &n, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (n > CTXC_CFG_JSON_MAX_TOKENS) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "line has more than %u JSON tokens "
                          "(CTXC_CFG_JSON_MAX_TOKENS)",
                          (unsigned)CTXC_CFG_JSON_MAX_TOKENS);
    }
    /* the scratch after the tokens, aligned for block sources */
    uintptr_t free0 = (uintptr_t)(tokens + n);
    uintptr_t end = (uintptr_t)(tokens + CTXC_CFG_JSON_MAX_TOKENS);
    uintptr_t al = (uintptr_t) _Alignof(ctxc__block_src_t);
    free0 = (free0 + al - 1u) & ~(al - 1u);
    doc_t d = {line, tokens, (int)n, (ctxc__block_src_t *)free0,
               free0 < end ? (end - free0) / sizeof(ctxc__block_src_t) : 0u};
    if (tokens[0].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "a line must hold a JSON object, not %s",
                          type_name(tokens[0].type));
    }
    ctxc_format_t fmt = imp->format;
    if (fmt == CTXC_FORMAT_AUTO) {
        static const char *const probe[] = {"speaker", "role"};
        int key = 1;
        for (int m2 = 0; m2 < (int)tokens[0].size && fmt == CTXC_FORMAT_AUTO;
             m2++) {
            if (tok_is(&d, key, probe[0])) {
                fmt = CTXC_FORMAT_ICONTENT;
            } else if (tok_is(&d, key, probe[1])) {
                fmt = CTXC_FORMAT_OPENAI;
            }
            key = skip(&d, key + 1);
        }
        if (fmt == CTXC_FORMAT_AUTO) {
            return ctxc__fail(err, CTXC_E_PARSE,
                              "neither an entry (no 'speaker' key) nor an "
                              "OpenAI chat message (no 'role' key)");
        }
        imp->format = fmt;
    }
    return fmt == CTXC_FORMAT_ICONTENT ? import_icontent(h, &d, err)
                                       : import_openai(h, &d, err);
}

/* After line_in: a failure rolls the whole import back; the error names
 * the line. */
static ctxc_status_t line_done(ctxc_import_t *imp, ctxc_status_t st,
                               ctxc_error_t *err) {
    if (st != CTXC_OK) {
        ctxc_import_abort(imp);
        if (err != NULL) {
            err->status = st;
            err->line = imp->line;
        }
    }
    return st;
}

ctxc_status_t ctxc_import_line(ctxc_import_t *imp, const char *line, size_t len,
                               ctxc_error_t *err) {
    if (imp == NULL || !imp->active) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "no import in progress");
    }
    imp->line++;
    return line_done(imp, line_in(imp, line, len, err), err);
}

/* The arena bytes (or, when `entries`, the entry slots) each line of
 * text[start..len) takes, added up: every line imported alone into the
 * history as it is (rolled back at once), so nothing changes. Stops at a
 * line that is not an entry (*complete false). */
static size_t measure_rest(ctxc_import_t *imp, ctxc_history_t *h,
                           const char *text, size_t start, size_t len,
                           bool entries, bool *complete) {
    size_t total = 0;
    ctxc_format_t fmt = imp->format;
    *complete = true;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - text) : len;
        size_t used0 = h->used, count0 = h->count;
        size_t free0 = h->arena_bytes - used0;
        ctxc_error_t e;
        memset(&e, 0, sizeof e);
        ctxc_status_t st = ctxc_import_begin(imp, h, fmt, &e);
        if (st == CTXC_OK) {
            st = ctxc_import_line(imp, text + start, end - start, &e);
        }
        if (st == CTXC_OK) {
            total += entries ? h->count - count0 : h->used - used0;
            ctxc_import_abort(imp);
        } else if (st == CTXC_E_NO_SPACE) { /* rolled back already */
            total += entries ? 1u : e.needed + free0;
        } else {
            *complete = false;
            break;
        }
        start = end + 1;
    }
    imp->format = fmt;
    return total;
}

/* ---- an id index lent for one import -------------------------------------
 * Without an id index of its own (ctxc_history_set_id_index) the store
 * checks the tool blocks of each new entry against those of every entry
 * before it: an import pays the square of its entries (on the board's 256
 * entries, seven tenths of the import). So ctxc_import_text() lends the
 * store one for the time of the import, at the end of the arena's free
 * tail, which looks that much shorter meanwhile: an eighth of the free
 * tail at most, three slots per free entry slot at most. The lent bytes go
 * back (the arena's size and the index fields as they were at begin)
 * before a line that could need them, for a line that failed for want of
 * room (it is tried again without the index), at the end, and on any
 * failure (the rollback restores the whole history). A table that fills
 * up answers by scans, as any index does; the results are those of the
 * scans in every case. */

static size_t lend_index(ctxc_history_t *h) {
    size_t bytes = (h->arena_bytes - h->used) / 8u;
    size_t most = CTXC_HISTORY_ID_INDEX_BYTES(h->max_entries - h->count);
    if (most < bytes) {
        bytes = most;
    }
    if (h->ids_mem_ != NULL || bytes < CTXC_HISTORY_ID_INDEX_BYTES(8)) {
        return 0;
    }
    h->arena_bytes -= bytes;
    ctxc_history_set_id_index(h, h->arena + h->arena_bytes, bytes);
    return bytes;
}

ctxc_status_t ctxc_import_text(ctxc_import_t *imp, ctxc_history_t *h,
                               const char *text, size_t len,
                               ctxc_format_t format, ctxc_error_t *err) {
    ctxc_status_t st = ctxc_import_begin(imp, h, format, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t lent = lend_index(h);
    size_t start = 0;
    while (start < len) {
        const char *nl = memchr(text + start, '\n', len - start);
        size_t end = nl != NULL ? (size_t)(nl - text) : len;
        bool full = h->count >= h->max_entries; /* slots, not bytes */
        size_t lines = h->count - imp->snapshot.count;
        if (lent != 0 && end - start > h->arena_bytes - h->used) {
            give_back(imp, h); /* the line may need the lent bytes */
            lent = 0;
        }
        imp->line++;
        st = line_in(imp, text + start, end - start, err);
        if (st == CTXC_E_NO_SPACE && lent != 0) {
            give_back(imp, h);
            lent = 0;
            st = line_in(imp, text + start, end - start, err);
        }
        if ((st = line_done(imp, st, err)) != CTXC_OK) {
            if (st == CTXC_E_NO_SPACE && err != NULL) {
                /* what the whole text needs, not just this line: the
                 * lines after it measured one by one */
                uint32_t line = err->line;
                bool complete;
                size_t rest =
                    measure_rest(imp, h, text, end + 1, len, full, &complete);
                size_t needed = err->needed + rest;
                if (full) {
                    ctxc__fail_space(err, needed,
                                     "the text has %z%s entries more than the "
                                     "history's %z free slots",
                                     needed, complete ? "" : " or more",
                                     h->max_entries - h->count);
                } else {
                    ctxc__fail_space(err, needed,
                                     "the text needs %z%s arena bytes more "
                                     "than the %z free (line %u and %z "
                                     "entries before it imported)",
                                     needed, complete ? "" : " or more",
                                     h->arena_bytes - h->used, (unsigned)line,
                                     lines);
                }
                err->line = line;
            }
            return st;
        }
        start = end + 1;
    }
    if (lent != 0) {
        give_back(imp, h);
    }
    return ctxc_import_end(imp, err);
}

/* ---- export -------------------------------------------------------------- */

/* An entry goes out through a stream (sink.h) over this many bytes of
 * stack: short pieces collect, long runs are written as they are. */
#define EXPORT_BUF 192u

/* A stored string (valid UTF-8) as a JSON string literal: runs that need
 * no escape are written at once. */
static void w_json_string(ctxc__stream_t *w, ctxc_str_t s) {
    const uint8_t *u = (const uint8_t *)s.ptr;
    size_t i = 0;
    size_t run = 0;
    ctxc__stream_put(w, "\"", 1);
    while (i < s.len) {
        if (s.len - i >= sizeof(ctxc__word_t)) { /* a word without escapes */
            ctxc__word_t x;
            memcpy(&x, u + i, sizeof x);
            ctxc__word_t low = x & CTXC__WORD_LOW;
            ctxc__word_t m = (~(low + CTXC__WORD_ONES * 0x60u) |
                              ctxc__word_eq(low, '"') |
                              ctxc__word_eq(low, '\\')) &
                             ~x & CTXC__WORD_HIGH;
            if (m == 0) {
                i += sizeof x;
                continue;
            }
            i += ctxc__word_first(m);
        }
        uint8_t c = u[i];
        if (c >= 0x20u && c != '"' && c != '\\') {
            i++;
            continue;
        }
        ctxc__stream_put(w, s.ptr + run, i - run);
        char tmp[8];
        ctxc__sink_t o = {tmp, sizeof tmp, 0};
        ctxc__json_escape_cp(&o, c);
        ctxc__stream_put(w, tmp, o.len);
        run = ++i;
    }
    ctxc__stream_put(w, s.ptr + run, i - run);
    ctxc__stream_put(w, "\"", 1);
}

static void write_entry(ctxc__stream_t *w, const ctxc_entry_t *e) {
    PUT_LIT(w, "{\"speaker\":\"");
    ctxc__stream_puts(w, ctxc_speaker_name(e->speaker));
    PUT_LIT(w, "\",\"blocks\":[");
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    bool first = true;
    while (ctxc_entry_next_block(e, &cur, &b)) {
        const ctxc__block_desc_t *d = &ctxc__block_desc[b.type];
        if (!first) {
            ctxc__stream_put(w, ",", 1);
        }
        PUT_LIT(w, "{\"type\":\"");
        first = false;
        ctxc__stream_puts(w, d->name);
        ctxc__stream_put(w, "\"", 1);
        for (unsigned f = 0; f < d->nfields; f++) {
            ctxc_str_t v = ctxc__block_field(&b, f);
            if (v.ptr == NULL) {
                continue;
            }
            PUT_LIT(w, ",\"");
            ctxc__stream_puts(w, d->keys[f]);
            PUT_LIT(w, "\":");
            if (((d->json >> f) & 1u) != 0) {
                ctxc__stream_put(w, v.ptr, v.len);
            } else {
                w_json_string(w, v);
            }
        }
        ctxc__stream_put(w, "}", 1);
    }
    ctxc__stream_put(w, "]", 1);
    if (e->metadata.ptr != NULL) {
        PUT_LIT(w, ",\"metadata\":");
        ctxc__stream_put(w, e->metadata.ptr, e->metadata.len);
    }
    PUT_LIT(w, "}\n");
}

ctxc_status_t ctxc_export_entry(const ctxc_history_t *h, size_t index,
                                ctxc_write_fn write, void *user,
                                ctxc_error_t *err) {
    ctxc_entry_t e;
    if (write == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "write function is NULL");
    }
    if (ctxc_history_get(h, index, &e) != CTXC_OK) {
        return ctxc__fail(err, CTXC_E_RANGE,
                          "entry %z does not exist (%z entries)", index,
                          ctxc_history_count(h));
    }
    char buf[EXPORT_BUF];
    ctxc__stream_t w;
    ctxc__stream_init(&w, buf, sizeof buf, write, user);
    write_entry(&w, &e);
    ctxc_status_t st = ctxc__stream_flush(&w);
    if (st != CTXC_OK) {
        return ctxc__fail(err, st, "writing entry %z failed", index);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_export(const ctxc_history_t *h, ctxc_write_fn write,
                          void *user, ctxc_error_t *err) {
    for (size_t i = 0; i < ctxc_history_count(h); i++) {
        ctxc_status_t st = ctxc_export_entry(h, i, write, user, err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    return CTXC_OK;
}

static ctxc_status_t sink_write(void *user, const char *data, size_t len) {
    ctxc__put((ctxc__sink_t *)user, data, len);
    return CTXC_OK;
}

ctxc_status_t ctxc_export_entry_buf(const ctxc_history_t *h, size_t index,
                                    char *buf, size_t cap, size_t *written,
                                    ctxc_error_t *err) {
    if (buf == NULL || cap == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "buffer is NULL or empty");
    }
    ctxc__sink_t s = {buf, cap - 1, 0};
    ctxc_status_t st = ctxc_export_entry(h, index, sink_write, &s, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (s.len > cap - 1) {
        buf[0] = '\0';
        return ctxc__fail_space(err, s.len + 1 - cap,
                                "entry %z needs %z bytes, buffer holds %z",
                                index, s.len + 1, cap);
    }
    buf[s.len] = '\0';
    if (written != NULL) {
        *written = s.len;
    }
    return CTXC_OK;
}
