/*
 * ctxc — UTF-8 and JSON primitives: validation, canonical form, string
 * escaping. Iterative (no recursion), bounded depth, no allocation.
 */
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h> /* x86-64 hosts: sixteen bytes at a time */
#endif

#include "compiler.h"
#include "error.h"
#include "json.h"
#include "json_tok.h"
#include "sink.h"
#include "swar.h"
#include "text_stats.h"

/* ---- UTF-8 -------------------------------------------------------------- */

size_t ctxc__utf8_decode(const uint8_t *s, size_t len, uint32_t *cp) {
    if (len == 0) {
        return 0;
    }
    uint8_t c = s[0];
    if (c < 0x80u) {
        *cp = c;
        return 1;
    }
    size_t need;
    uint32_t v;
    uint32_t min;
    if (c >= 0xC2u && c <= 0xDFu) {
        need = 2;
        v = c & 0x1Fu;
        min = 0x80u;
    } else if (c >= 0xE0u && c <= 0xEFu) {
        need = 3;
        v = c & 0x0Fu;
        min = 0x800u;
    } else if (c >= 0xF0u && c <= 0xF4u) {
        need = 4;
        v = c & 0x07u;
        min = 0x10000u;
    } else {
        return 0;
    }
    if (len < need) {
        return 0;
    }
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0u) != 0x80u) {
            return 0;
        }
        v = (v << 6) | (uint32_t)(s[i] & 0x3Fu);
    }
    if (v < min || v > 0x10FFFFu || (v >= 0xD800u && v <= 0xDFFFu)) {
        return 0;
    }
    *cp = v;
    return need;
}

size_t ctxc__utf8_encode(uint32_t cp, char out[4]) {
    if (cp < 0x80u) {
        out[0] = (char)cp;
        return 1;
    }
    size_t n = cp < 0x800u ? 2u : cp < 0x10000u ? 3u : 4u;
    for (size_t i = n - 1u; i > 0; i--, cp >>= 6) {
        out[i] = (char)(0x80u | (cp & 0x3Fu));
    }
    /* the lead byte: 110xxxxx, 1110xxxx or 11110xxx */
    out[0] = (char)(uint8_t)((0xF00u >> n) | cp);
    return n;
}

bool ctxc__utf8_valid(const char *s, size_t len, size_t *bad_at) {
    const uint8_t *u = (const uint8_t *)s;
    size_t i = 0;
    while (i < len) {
        if (u[i] < 0x80u) {
            i++;
            continue;
        }
        uint32_t cp;
        size_t k = ctxc__utf8_decode(u + i, len - i, &cp);
        if (k == 0) {
            if (bad_at != NULL) {
                *bad_at = i;
            }
            return false;
        }
        i += k;
    }
    return true;
}

/* The one-character escapes of JSON (all but \\u): the letter after the
 * backslash and the character it stands for. "/" is read but never
 * written escaped (JSON.stringify does not). */
static const char ESC_LETTER[] = "\"\\bfnrt/";
static const char ESC_CHAR[] = "\"\\\b\f\n\r\t/";
#define ESC_WRITTEN 7u /* all but "/" */

bool ctxc__json_simple_escape(char e, uint32_t *cp) {
    for (size_t i = 0; i < sizeof ESC_LETTER - 1; i++) {
        if (ESC_LETTER[i] == e) {
            *cp = (uint8_t)ESC_CHAR[i];
            return true;
        }
    }
    return false;
}

/* ---- code point iteration ------------------------------------------------ */

int ctxc__hexval(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    if (c >= 'A' && c <= 'F') {
        return c - 'A' + 10;
    }
    return -1;
}

/* Four hex digits at s[pos..pos+4) into *v; false (with *bad the 1-based
 * position of the first bad or missing digit) when there are not. */
static bool hex4_at(const uint8_t *s, size_t n, size_t pos, uint32_t *v,
                    size_t *bad) {
    uint32_t r = 0;
    for (size_t i = 0; i < 4; i++) {
        int h = pos + i < n ? ctxc__hexval((char)s[pos + i]) : -1;
        if (h < 0) {
            *bad = pos + i < n ? pos + i + 1 : n;
            return false;
        }
        r = (r << 4) | (uint32_t)h;
    }
    *v = r;
    return true;
}

/* The \\u escape at s[at] (a backslash, then 'u'): its code point (a
 * surrogate pair joined) in *cp and its length (6 or 12) in *len, or what
 * is wrong with it: U_HEX (*len: the 1-based position of the first bad or
 * missing digit), U_LOW (a lone low surrogate), U_HIGH (a high surrogate
 * without a low one after it). */
enum { U_OK, U_HEX, U_LOW, U_HIGH };

static int u_escape(const uint8_t *s, size_t n, size_t at, uint32_t *cp,
                    size_t *len) {
    uint32_t v, lo;
    if (!hex4_at(s, n, at + 2, &v, len)) {
        return U_HEX;
    }
    if (v >= 0xDC00u && v <= 0xDFFFu) {
        return U_LOW;
    }
    *len = 6;
    if (v >= 0xD800u && v <= 0xDBFFu) {
        size_t bad;
        if (!(at + 7 < n && s[at + 6] == '\\' && s[at + 7] == 'u' &&
              hex4_at(s, n, at + 8, &lo, &bad) && lo >= 0xDC00u &&
              lo <= 0xDFFFu)) {
            return U_HIGH;
        }
        v = 0x10000u + ((v - 0xD800u) << 10) + (lo - 0xDC00u);
        *len = 12;
    }
    *cp = v;
    return U_OK;
}

/* Messages shared by the iterator and the scanner. */
static const char BAD_JSON[] = "invalid JSON at byte %z: %s";
static const char LONE_LOW[] = "lone low surrogate escape at byte %z";
static const char LONE_HIGH[] = "lone high surrogate escape near byte %z (no "
                                "low surrogate after it)";

int ctxc__cp_next(ctxc__cp_iter_t *it, uint32_t *cp, ctxc_error_t *err) {
    if (it->pos >= it->n) {
        return 0;
    }
    const uint8_t *u = (const uint8_t *)it->p;
    uint8_t c = u[it->pos];
    if (it->kind == CTXC__SRC_JSTR && c == '\\') {
        size_t at = it->pos;
        if (at + 1 >= it->n) {
            ctxc__fail(err, CTXC_E_PARSE, BAD_JSON, at + 1,
                       "unterminated string");
            return -1;
        }
        char e = it->p[at + 1];
        uint32_t v;
        if (ctxc__json_simple_escape(e, &v)) {
            *cp = v;
            it->pos = at + 2;
            return 1;
        }
        if (e != 'u') {
            ctxc__fail(err, CTXC_E_PARSE, BAD_JSON, at + 2,
                       "unknown escape in string");
            return -1;
        }
        size_t len;
        int r = u_escape(u, it->n, at, cp, &len);
        if (r != U_OK) {
            /* each message takes the byte; the first also the reason */
            ctxc__fail(err, r == U_HEX ? CTXC_E_PARSE : CTXC_E_UTF8,
                       r == U_HEX   ? BAD_JSON
                       : r == U_LOW ? LONE_LOW
                                    : LONE_HIGH,
                       at + 1, "bad \\u escape (4 hex digits needed)");
            return -1;
        }
        it->pos = at + len;
        return 1;
    }
    if (it->kind == CTXC__SRC_JSTR && c < 0x20u) {
        ctxc__fail(err, CTXC_E_PARSE, BAD_JSON, it->pos + 1,
                   "control character in string (must be escaped)");
        return -1;
    }
    if (c < 0x80u) {
        *cp = c;
        it->pos++;
        return 1;
    }
    size_t k = ctxc__utf8_decode(u + it->pos, it->n - it->pos, cp);
    if (k == 0) {
        ctxc__fail(err, CTXC_E_UTF8, "invalid UTF-8 at byte %z", it->pos + 1);
        return -1;
    }
    it->pos += k;
    return 1;
}

/* ---- byte classes -------------------------------------------------------- */

/* A byte copied as is inside a string literal: printable ASCII but '"' and
 * '\\'. */
static bool is_plain(uint8_t c) {
    return c >= 0x20u && c < 0x80u && c != '"' && c != '\\';
}

CTXC__SIZE_NOINLINE static bool is_json_ws(uint8_t c) {
    return c == ' ' || c == '\n' || c == '\t' || c == '\r';
}

/* The high bit of each byte of x that is not plain: >= 0x80, < 0x20, '"'
 * or '\\' (exact per byte: no carry crosses a byte). */
static inline ctxc__word_t special_bytes(ctxc__word_t x) {
    ctxc__word_t low = x & CTXC__WORD_LOW;
    ctxc__word_t ctl = ~(low + CTXC__WORD_ONES * 0x60u); /* < 0x20 */
    return (x | ctl | ctxc__word_eq(low, '"') | ctxc__word_eq(low, '\\')) &
           ~CTXC__WORD_LOW;
}

#if defined(__SSE2__)
/* Bit j set when byte j of s[0..16) is not plain (see special_bytes); with
 * `spaces`, the bits of the bytes that are ' '. */
static inline unsigned special16(const uint8_t *s, unsigned *spaces) {
    __m128i v = _mm_loadu_si128((const __m128i *)(const void *)s);
    /* signed: bytes >= 0x80 are below 0x20 too */
    __m128i ctl = _mm_cmplt_epi8(v, _mm_set1_epi8(0x20));
    __m128i q = _mm_cmpeq_epi8(v, _mm_set1_epi8('"'));
    __m128i b = _mm_cmpeq_epi8(v, _mm_set1_epi8('\\'));
    if (spaces != NULL) {
        *spaces =
            (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')));
    }
    return (unsigned)_mm_movemask_epi8(_mm_or_si128(ctl, _mm_or_si128(q, b)));
}
#endif

/* Index of the first byte of s[i..n) that is not PLAIN (n if none). */
static size_t skip_plain(const uint8_t *s, size_t i, size_t n) {
#if defined(__SSE2__)
    while (n - i >= 16) {
        unsigned special = special16(s + i, NULL);
        if (special != 0) {
            return i + (size_t)__builtin_ctz(special);
        }
        i += 16;
    }
#endif
    /* a machine word at a time (eight bytes or four); a byte is special
     * when it is >= 0x80, < 0x20, '"' or '\\' */
    while (n - i >= sizeof(ctxc__word_t)) {
        ctxc__word_t x;
        memcpy(&x, s + i, sizeof x);
        ctxc__word_t special = special_bytes(x);
        if (special != 0) {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
            return i + ctxc__word_first(special);
#else
            break;
#endif
        }
        i += sizeof x;
    }
    while (i < n && is_plain(s[i])) {
        i++;
    }
    return i;
}

/* ---- text statistics while scanning ---------------------------------------
 * ctxc__json_scan_stats() counts what the default estimator needs of every
 * string's content in the same pass (64-bit hosts: eight bytes at a time
 * with the run skipping; elsewhere the option is off and the record writer
 * counts the stored text instead). */

#ifdef CTXC__SCAN_STATS
#define SCAN_STATS 1

typedef struct {
    uint64_t runs;
    uint64_t units;
    uint64_t lanes; /* per-byte run starts, summed every 255 words */
    unsigned nl;
    bool in; /* the last character was whitespace */
    bool any;
    bool first;
    bool esc; /* an escape was taken inside skip_plain_stats() */
} wsacc_t;

static inline void ws_char(wsacc_t *w, uint32_t cp) {
    bool sp = cp < 0x80u ? cp == ' ' || (cp >= 0x09u && cp <= 0x0Du)
                         : ctxc__is_space(cp);
    if (!w->any) {
        w->first = sp;
        w->any = true;
    }
    w->runs += (uint64_t)(sp && !w->in);
    w->in = sp;
    w->units += cp >= 0x10000u ? 2u : 1u;
}

/* A short canonical escape at s[i] (\\n \\t \\r \\f \\b \\" \\\\), taken
 * without leaving the run: counted (the first four are whitespace) and
 * noted. Only for scans that write nothing. */
static bool short_escape(const uint8_t *s, size_t i, size_t n, wsacc_t *w) {
    uint8_t e = i + 1 < n && s[i] == '\\' ? s[i + 1] : 0u;
    uint32_t cp = e == 'n'                              ? '\n'
                  : e == 't'                            ? '\t'
                  : e == 'r'                            ? '\r'
                  : e == 'f'                            ? '\f'
                  : (e == 'b' || e == '"' || e == '\\') ? 'x'
                                                        : 0u;
    if (cp == 0u) {
        return false;
    }
    ws_char(w, cp);
    w->esc = true;
    return true;
}

/* skip_plain() that also counts the spaces of the bytes it skips (and takes
 * the short escapes). */
static size_t skip_plain_stats(const uint8_t *s, size_t i, size_t n,
                               wsacc_t *w) {
#if defined(__SSE2__)
    while (n - i >= 16) {
        unsigned ws;
        unsigned special = special16(s + i, &ws);
        unsigned nb = special == 0 ? 16u : (unsigned)__builtin_ctz(special);
        if (nb == 0) {
            if (!short_escape(s, i, n, w)) {
                return i;
            }
            i += 2;
            continue;
        }
        ws &= (1u << nb) - 1u;
        if (!w->any) {
            w->first = (ws & 1u) != 0;
            w->any = true;
        }
        w->runs += (uint64_t)ctxc__pop16(ws & ~((ws << 1) | (w->in ? 1u : 0u)));
        w->in = ((ws >> (nb - 1u)) & 1u) != 0;
        w->units += nb;
        i += nb;
        if (nb < 16u) {
            if (!short_escape(s, i, n, w)) {
                return i;
            }
            i += 2;
        }
    }
#endif
    while (n - i >= 8) {
        uint64_t x;
        memcpy(&x, s + i, sizeof x);
        uint64_t sp = (x & CTXC__SWAR_LOW) ^ (CTXC__SWAR_ONES * 0x20u);
        uint64_t special = special_bytes(x);
        unsigned nb =
            special == 0 ? 8u : (unsigned)__builtin_ctzll(special) / 8u;
        if (nb == 0) {
            if (!short_escape(s, i, n, w)) {
                return i;
            }
            i += 2;
            continue;
        }
        uint64_t ws = ~((sp + CTXC__SWAR_LOW) | sp) & ~CTXC__SWAR_LOW;
        if (nb < 8u) {
            ws &= (1ull << (8u * nb)) - 1u;
        }
        if (!w->any) {
            w->first = (ws & 0x80u) != 0;
            w->any = true;
        }
        w->lanes += (ws & ~((ws << 8) | (w->in ? 0x80u : 0u))) >> 7;
        if (++w->nl == 255u) {
            w->runs += ctxc__swar_byte_sum(w->lanes);
            w->lanes = 0;
            w->nl = 0;
        }
        w->in = ((ws >> (8u * nb - 1u)) & 1u) != 0;
        w->units += nb;
        i += nb;
        if (nb < 8u) {
            if (!short_escape(s, i, n, w)) {
                return i;
            }
            i += 2;
        }
    }
    while (i < n && is_plain(s[i])) {
        ws_char(w, s[i]);
        i++;
    }
    return i;
}
#endif

#ifdef CTXC__HOST_FAST
/* Length (2..4) of the valid UTF-8 sequence at s[0..n) whose first byte is
 * >= 0x80, or 0. */
static size_t utf8_seq(const uint8_t *s, size_t n) {
    uint32_t cp;
    return ctxc__utf8_decode(s, n, &cp);
}
#endif

/* ---- escaping ------------------------------------------------------------ */

/* Writes the JSON.stringify escape of a character that needs one: '"',
 * '\\' or a control character. */
static void put_escape(ctxc__sink_t *out, uint8_t c) {
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < ESC_WRITTEN; i++) {
        if (c == (uint8_t)ESC_CHAR[i]) {
            char esc[2] = {'\\', ESC_LETTER[i]};
            ctxc__put(out, esc, 2);
            return;
        }
    }
    char u[6] = {'\\', 'u', '0', '0', hex[(c >> 4) & 0xFu], hex[c & 0xFu]};
    ctxc__put(out, u, 6); /* the other controls */
}

void ctxc__json_escape_cp(ctxc__sink_t *out, uint32_t cp) {
    if (cp >= 0x20u && cp != '"' && cp != '\\') { /* the common case */
        char b[4];
        ctxc__put(out, b, ctxc__utf8_encode(cp, b));
        return;
    }
    put_escape(out, (uint8_t)cp);
}

ctxc_status_t ctxc__json_write_string(ctxc__sink_t *out, const char *p,
                                      size_t n, ctxc__src_kind_t kind,
                                      ctxc_error_t *err) {
    /* what is written as it stands (plain ASCII, valid UTF-8) is copied in
     * runs; the rest through the code point iterator and the escaper */
    const uint8_t *u = (const uint8_t *)p;
    ctxc__cp_iter_t it = {p, n, 0, kind};
    size_t run = 0;
    uint32_t cp;
    int r;
    ctxc__putc(out, '"');
    for (;;) {
        it.pos = skip_plain(u, it.pos, n);
        size_t at = it.pos;
        if ((r = ctxc__cp_next(&it, &cp, err)) <= 0) {
            break;
        }
        /* a backslash here is an escape of a JSON string body (elsewhere
         * the character '\\', escaped as well) */
        if (cp < 0x20u || cp == '"' || u[at] == '\\') {
            ctxc__put(out, p + run, at - run);
            ctxc__json_escape_cp(out, cp);
            run = it.pos;
        }
    }
    ctxc__put(out, p + run, it.pos - run);
    ctxc__putc(out, '"');
    return r < 0 ? (err != NULL ? err->status : CTXC_E_PARSE) : CTXC_OK;
}

ctxc_status_t ctxc__write_decoded(ctxc__sink_t *out, const char *p, size_t n,
                                  ctxc__src_kind_t kind, ctxc_error_t *err) {
    if (kind == CTXC__SRC_VALID) {
        ctxc__put(out, p, n);
        return CTXC_OK;
    }
    if (kind == CTXC__SRC_RAW) {
        size_t bad;
        if (!ctxc__utf8_valid(p, n, &bad)) {
            return ctxc__fail(err, CTXC_E_UTF8, "invalid UTF-8 at byte %z",
                              bad + 1);
        }
        ctxc__put(out, p, n);
        return CTXC_OK;
    }
    const uint8_t *u = (const uint8_t *)p;
#ifndef CTXC__HOST_FAST
    /* a JSON string body: runs of plain bytes are copied at once, the rest
     * goes through the code point iterator */
    ctxc__cp_iter_t it = {p, n, 0, kind};
    for (;;) {
        size_t run = it.pos;
        it.pos = skip_plain(u, it.pos, n);
        ctxc__put(out, p + run, it.pos - run);
        uint32_t cp;
        int r = ctxc__cp_next(&it, &cp, err);
        if (r <= 0) {
            return r < 0 ? (err != NULL ? err->status : CTXC_E_PARSE) : CTXC_OK;
        }
        char b[4];
        ctxc__put(out, b, ctxc__utf8_encode(cp, b));
    }
#else
    /* a JSON string body: runs of plain bytes and valid UTF-8 are copied at
     * once; escapes (and errors) go through the code point iterator */
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        for (;;) {
            i = skip_plain(u, i, n);
            size_t k;
            if (i < n && u[i] == '"') {
                i++;
            } else if (i < n && u[i] >= 0x80u &&
                       (k = utf8_seq(u + i, n - i)) != 0) {
                i += k;
            } else {
                break;
            }
        }
        ctxc__put(out, p + run, i - run);
        uint32_t cp;
        if (i + 1 < n && u[i] == '\\' && u[i + 1] != 'u' &&
            ctxc__json_simple_escape(p[i + 1], &cp)) {
            char ch = (char)cp; /* the common escapes, without the iterator */
            ctxc__putc(out, ch);
            i += 2;
        } else if (i < n) {
            ctxc__cp_iter_t it = {p, n, i, kind};
            if (ctxc__cp_next(&it, &cp, err) < 0) {
                return err != NULL ? err->status : CTXC_E_PARSE;
            }
            char b[4];
            ctxc__put(out, b, ctxc__utf8_encode(cp, b));
            i = it.pos;
        }
    }
    return CTXC_OK;
#endif
}

CTXC__SIZE_NOINLINE bool ctxc__src_equals(const char *p, size_t n,
                                          ctxc__src_kind_t kind, const char *s,
                                          size_t slen) {
    if (kind != CTXC__SRC_JSTR) {
        return n == slen && (n == 0 || memcmp(p, s, n) == 0);
    }
    ctxc__cp_iter_t it = {p, n, 0, kind};
    size_t at = 0;
    uint32_t cp;
    while (ctxc__cp_next(&it, &cp, NULL) > 0) {
        char b[4];
        size_t k = ctxc__utf8_encode(cp, b);
        if (at + k > slen || memcmp(s + at, b, k) != 0) {
            return false;
        }
        at += k;
    }
    return at == slen && it.pos == n;
}

bool ctxc__jtok_is(const char *js, const ctxc__jtok_t *t, const char *s) {
    if (t->type != CTXC__JT_STRING) {
        return false;
    }
    const char *p = ctxc__jtok_p(js, t);
    size_t n = ctxc__jtok_n(t);
    if ((t->flags & CTXC__JF_ESCAPES) != 0) {
        return ctxc__src_equals(p, n, CTXC__SRC_JSTR, s, strlen(s));
    }
    for (size_t k = 0; k < n; k++) { /* no strlen: keys are short */
        if (p[k] != s[k] || s[k] == '\0') {
            return false;
        }
    }
    return s[n] == '\0';
}

/* ---- the scanner ----------------------------------------------------------
 * One pass over the bytes: a state machine with an explicit stack of open
 * containers (no recursion), strings copied in runs. */

typedef struct {
    const uint8_t *s;
    size_t n;
    ctxc__jtok_t *tok;
    size_t cap;
    size_t nt; /* tokens seen */
    ctxc__sink_t *out;
    ctxc_error_t *err;
    bool noncanon; /* the last string was not canonical */
    bool stats;    /* count text statistics of strings */
} scan_t;

/* An open container: its token index (OPEN_TOK when the token is not
 * stored), and OPEN_OBJ for an object. */
#define OPEN_OBJ 0x80000000u
#define OPEN_TOK 0x7FFFFFFFu

/* Flags the open containers open[0..depth) as not canonical. One that is
 * flagged already had its ancestors flagged with it. */
static void mark_noncanon(scan_t *sc, const uint32_t *open, unsigned depth) {
    while (depth-- > 0) {
        uint32_t k = open[depth] & OPEN_TOK;
        if (k < sc->cap) {
            uint8_t *f = &sc->tok[k].flags;
            if ((*f & CTXC__JF_NONCANON) != 0) {
                return;
            }
            *f |= CTXC__JF_NONCANON;
        }
    }
}

static ctxc_status_t syntax_at(scan_t *sc, size_t at, const char *what) {
    return ctxc__fail(sc->err, CTXC_E_PARSE, BAD_JSON, at == 0 ? (size_t)1 : at,
                      what);
}

static size_t new_tok(scan_t *sc, uint8_t type, size_t start) {
    size_t k = sc->nt++;
    if (k < sc->cap) {
        ctxc__jtok_t *t = &sc->tok[k];
        t->start = (uint32_t)start;
        t->end = (uint32_t)start;
        t->next = (uint32_t)(k + 1);
        t->size = 0;
        t->type = type;
        t->flags = 0;
        t->pad_ = 0;
#ifdef SCAN_STATS
        t->units = 0;
#endif
    }
    return k;
}

static void put_bytes(scan_t *sc, size_t from, size_t to) {
    if (sc->out != NULL) {
        ctxc__put(sc->out, (const char *)sc->s + from, to - from);
    }
}

/* A string literal whose opening quote is at s[q]. Returns the position of
 * the closing quote in *end. */
static ctxc_status_t scan_string(scan_t *sc, size_t q, size_t tk, size_t *end) {
    const uint8_t *s = sc->s;
    size_t n = sc->n;
    size_t i = q + 1;
    size_t run = i;
    uint8_t flags = 0;
#ifdef SCAN_STATS
    wsacc_t w;
    memset(&w, 0, sizeof w);
    bool stats = sc->stats;
#define WS_CHAR(cp)                                                            \
    do {                                                                       \
        if (stats) {                                                           \
            ws_char(&w, cp);                                                   \
        }                                                                      \
    } while (0)
#else
#define WS_CHAR(cp) (void)(cp)
#endif
    if (sc->out != NULL) {
        ctxc__putc(sc->out, '"');
    }
    for (;;) {
#ifdef SCAN_STATS
        i = stats ? skip_plain_stats(s, i, n, &w) : skip_plain(s, i, n);
#else
        i = skip_plain(s, i, n);
#endif
        if (i >= n) {
            return syntax_at(sc, n, "unterminated string");
        }
        uint8_t c = s[i];
        if (c >= 0x80u) {
            uint32_t ucp = 0;
            size_t k = ctxc__utf8_decode(s + i, n - i, &ucp);
            if (k == 0) {
                size_t at = i + 1;
                while (at < n && at - i < 4 && (s[at] & 0xC0u) == 0x80u) {
                    at++;
                }
                return ctxc__fail(sc->err, CTXC_E_UTF8,
                                  "invalid UTF-8 in string at byte %z", at);
            }
            flags |= CTXC__JF_NONASCII;
            WS_CHAR(ucp);
            i += k;
            continue;
        }
        if (c == '"') {
            break;
        }
        if (c < 0x20u) {
            return syntax_at(sc, i + 1,
                             "control character in string (must be escaped)");
        }
        /* a backslash */
        flags |= CTXC__JF_ESCAPES;
        put_bytes(sc, run, i);
        if (i + 1 >= n) {
            return syntax_at(sc, n, "unterminated string");
        }
        uint8_t e = s[i + 1];
        uint32_t cp;
        if (e == 'u') {
            size_t len;
            int r = u_escape(s, n, i, &cp, &len);
            if (r == U_HEX) {
                return syntax_at(sc, len,
                                 "bad \\u escape (4 hex digits needed)");
            }
            if (r != U_OK) {
                return ctxc__fail(sc->err, CTXC_E_UTF8,
                                  r == U_LOW ? LONE_LOW : LONE_HIGH,
                                  r == U_LOW  ? i + 6
                                  : i + 7 < n ? i + 8
                                              : n);
            }
            /* JSON.stringify writes \\u only for controls without a short
             * form (\\b \\t \\n \\f \\r are 8, 9, 10, 12, 13), in lower case */
            if (cp >= 0x20u || ((0x3700u >> cp) & 1u) != 0 ||
                (s[i + 5] >= 'A' && s[i + 5] <= 'F')) {
                flags |= CTXC__JF_NONCANON;
            }
            if (sc->out != NULL) {
                ctxc__json_escape_cp(sc->out, cp);
            }
            WS_CHAR(cp);
            i += len;
        } else if (ctxc__json_simple_escape((char)e, &cp)) {
            if (e == '/') {
                flags |= CTXC__JF_NONCANON;
            }
            WS_CHAR(cp);
            if (sc->out != NULL) {
                if (e == '/') {
                    ctxc__putc(sc->out, '/');
                } else {
                    ctxc__put(sc->out, (const char *)s + i, 2);
                }
            }
            i += 2;
        } else {
            return syntax_at(sc, i + 2, "unknown escape in string");
        }
        run = i;
    }
#undef WS_CHAR
    put_bytes(sc, run, i);
    if (sc->out != NULL) {
        ctxc__putc(sc->out, '"');
    }
    if (tk < sc->cap) {
        ctxc__jtok_t *t = &sc->tok[tk];
        t->start = (uint32_t)(q + 1);
        t->end = (uint32_t)i;
#ifdef SCAN_STATS
        if (stats) {
            flags |= w.esc ? CTXC__JF_ESCAPES : 0u;
            w.runs += ctxc__swar_byte_sum(w.lanes);
            t->size = (uint32_t)w.runs;
            t->units = (uint32_t)w.units;
            flags |= CTXC__JF_STATS;
            flags |= w.any && w.first ? CTXC__JF_WS_FIRST : 0u;
            flags |= w.in ? CTXC__JF_WS_LAST : 0u;
        }
#endif
        t->flags = flags;
    }
    sc->noncanon = (flags & CTXC__JF_NONCANON) != 0;
    *end = i + 1;
    return CTXC_OK;
}

static bool is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

static size_t digits(const uint8_t *s, size_t i, size_t n) {
    while (i < n && is_digit(s[i])) {
        i++;
    }
    return i;
}

/* A number starting at s[i]; *end = the byte after it. */
static ctxc_status_t scan_number(scan_t *sc, size_t i, size_t *end) {
    const uint8_t *s = sc->s;
    size_t n = sc->n;
    size_t start = i;
    if (s[i] == '-') {
        i++;
    }
    if (i < n && s[i] == '0') {
        i++;
        if (i < n && is_digit(s[i])) {
            return syntax_at(sc, i, "leading zero in number");
        }
    } else if (i < n && is_digit(s[i])) {
        i = digits(s, i, n);
    } else {
        return syntax_at(sc, i, "digit expected in number");
    }
    if (i < n && s[i] == '.') {
        i++;
        if (i >= n || !is_digit(s[i])) {
            return syntax_at(sc, i, "digit expected after decimal point");
        }
        i = digits(s, i, n);
    }
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        i++;
        if (i < n && (s[i] == '+' || s[i] == '-')) {
            i++;
        }
        if (i >= n || !is_digit(s[i])) {
            return syntax_at(sc, i, "digit expected in exponent");
        }
        i = digits(s, i, n);
    }
    put_bytes(sc, start, i);
    *end = i;
    return CTXC_OK;
}

enum { ST_VALUE, ST_ARR_FIRST, ST_OBJ_FIRST, ST_KEY, ST_COLON, ST_AFTER };

static ctxc_status_t scan(const char *js, size_t len, unsigned max_depth,
                          ctxc__jtok_t *tok, size_t cap, size_t *count,
                          ctxc__sink_t *out, bool stats, ctxc_error_t *err) {
    scan_t sc = {(const uint8_t *)js,
                 len,
                 tok,
                 tok != NULL ? cap : 0,
                 0,
                 out,
                 err,
                 false,
                 stats};
    const uint8_t *s = sc.s;
    uint32_t open[64]; /* each open container (token index, OPEN_OBJ) */
    unsigned depth = 0;
    int state = ST_VALUE;
    size_t i = 0;
    ctxc_status_t st;
    if (max_depth > 64u) {
        max_depth = 64u;
    }
    for (;;) {
        /* a token's first byte is above ' ': no call for it */
        if (i < len && s[i] <= ' ' && is_json_ws(s[i])) {
            while (i < len && is_json_ws(s[i])) {
                i++;
            }
            mark_noncanon(&sc, open, depth);
        }
        int c = i < len ? s[i] : -1;
        if (state == ST_AFTER) {
            if (depth == 0) {
                if (c >= 0) {
                    return syntax_at(&sc, i + 1,
                                     "unexpected data after the JSON value");
                }
                break;
            }
            bool obj = (open[depth - 1] & OPEN_OBJ) != 0;
            if (c < 0) {
                return syntax_at(&sc, len,
                                 obj ? "unexpected end of input ('}' missing)"
                                     : "unexpected end of input (']' missing)");
            }
            i++;
            if (c == ',') {
                state = obj ? ST_KEY : ST_VALUE;
            } else if (c != (obj ? '}' : ']')) {
                return syntax_at(&sc, i,
                                 obj ? "',' or '}' expected"
                                     : "',' or ']' expected");
            }
            if (out != NULL) {
                ctxc__putc(out, (char)c);
            }
            if (c != ',') {
                depth--;
                uint32_t k = open[depth] & OPEN_TOK;
                if (k < sc.cap) {
                    tok[k].end = (uint32_t)i;
                    tok[k].next = (uint32_t)sc.nt;
                }
            }
            continue;
        }
        if (c < 0) {
            return syntax_at(&sc, len,
                             depth == 0 && state == ST_VALUE
                                 ? "empty input"
                                 : "unexpected end of input");
        }
        if ((state == ST_OBJ_FIRST && c == '}') ||
            (state == ST_ARR_FIRST && c == ']')) {
            state = ST_AFTER; /* closed by the ST_AFTER branch */
            continue;
        }
        if (state == ST_COLON) {
            i++;
            if (c != ':') {
                return syntax_at(&sc, i, "':' expected after key");
            }
            if (out != NULL) {
                ctxc__putc(out, ':');
            }
            state = ST_VALUE;
            continue;
        }
        bool key = state == ST_OBJ_FIRST || state == ST_KEY;
        if (key && c != '"') {
            return syntax_at(&sc, i + 1, "string key expected");
        }
        if (depth > 0 && (open[depth - 1] & OPEN_TOK) < sc.cap &&
            (key || (open[depth - 1] & OPEN_OBJ) == 0)) {
            tok[open[depth - 1] & OPEN_TOK].size++;
        }
        if (c == '{' || c == '[') {
            if (depth >= max_depth) {
                return ctxc__fail(err, CTXC_E_TOO_DEEP,
                                  "JSON nesting deeper than %u levels at byte "
                                  "%z",
                                  max_depth, i + 1);
            }
            size_t t =
                new_tok(&sc, c == '{' ? CTXC__JT_OBJECT : CTXC__JT_ARRAY, i);
            /* a token past the storage: OPEN_TOK, never below sc.cap */
            open[depth] = (t < sc.cap ? (uint32_t)t : OPEN_TOK) |
                          (c == '{' ? OPEN_OBJ : 0u);
            depth++;
            if (out != NULL) {
                ctxc__putc(out, (char)c);
            }
            i++;
            state = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
            continue;
        }
        size_t end = i;
        size_t tk;
        if (c == '"') {
            tk = new_tok(&sc, CTXC__JT_STRING, i + 1);
            st = scan_string(&sc, i, tk, &end);
        } else if (c == '-' || is_digit((uint8_t)c)) {
            tk = new_tok(&sc, CTXC__JT_NUMBER, i);
            st = scan_number(&sc, i, &end);
        } else {
            static const char *const lit[] = {"true", "false", "null"};
            unsigned w = c == 't' ? 0u : c == 'f' ? 1u : c == 'n' ? 2u : 3u;
            if (w == 3u) {
                return syntax_at(&sc, i + 1, "value expected");
            }
            tk = new_tok(&sc, (uint8_t)(CTXC__JT_TRUE + w), i);
            const char *word = lit[w];
            size_t k = 0;
            while (word[k] != '\0') {
                if (i + k >= len || s[i + k] != (uint8_t)word[k]) {
                    return syntax_at(&sc, i + k < len ? i + k + 1 : len,
                                     "unknown literal (true, false or null "
                                     "expected)");
                }
                k++;
            }
            end = i + k;
            put_bytes(&sc, i, end);
            st = CTXC_OK;
        }
        if (st != CTXC_OK) {
            return st;
        }
        if (c == '"' && sc.noncanon) {
            mark_noncanon(&sc, open, depth);
        }
        if (tk < sc.cap && c != '"') {
            tok[tk].end = (uint32_t)end;
        }
        i = end;
        state = key ? ST_COLON : ST_AFTER;
    }
    if (count != NULL) {
        *count = sc.nt;
    }
    return CTXC_OK;
}

ctxc_status_t ctxc__json_scan(const char *js, size_t len, unsigned max_depth,
                              ctxc__jtok_t *tok, size_t cap, size_t *count,
                              ctxc__sink_t *out, ctxc_error_t *err) {
    return scan(js, len, max_depth, tok, cap, count, out, false, err);
}

ctxc_status_t ctxc__json_scan_stats(const char *js, size_t len,
                                    unsigned max_depth, ctxc__jtok_t *tok,
                                    size_t cap, size_t *count,
                                    ctxc_error_t *err) {
    return scan(js, len, max_depth, tok, cap, count, NULL, true, err);
}

/* ---- canonical JSON ------------------------------------------------------ */

ctxc_status_t ctxc__json_canon(const char *in, size_t len,
                               ctxc__src_kind_t kind, unsigned max_depth,
                               ctxc__sink_t *out, ctxc_error_t *err) {
    if (kind != CTXC__SRC_JSTR) {
        return ctxc__json_scan(in, len, max_depth, NULL, 0, NULL, out, err);
    }
    /* JSON text inside a string body: decode it into the sink, then
     * canonicalise it in place (the canonical form is never longer than
     * the text it is made from, so writing never overtakes reading) */
    size_t at = out->len;
    ctxc_status_t st = ctxc__write_decoded(out, in, len, kind, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (out->buf == NULL || out->len > out->cap) {
        return CTXC_OK; /* no room to look at it: the decoded length is an
                           upper bound of the canonical one */
    }
    size_t n = out->len - at;
    out->len = at;
    return ctxc__json_scan(out->buf + at, n, max_depth, NULL, 0, NULL, out,
                           err);
}

/* ---- reading canonical JSON ---------------------------------------------- */

size_t ctxc__json_skip_value(const char *js, size_t len, size_t pos) {
    size_t depth = 0;
    bool in_str = false;
    for (size_t i = pos; i < len; i++) {
        char c = js[i];
        if (in_str) {
#ifndef CTXC__HOST_FAST
            /* small targets: byte by byte, an escape's second byte skipped */
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_str = false;
                if (depth == 0) {
                    return i + 1;
                }
            }
            continue;
#else
            /* to the next quote that no backslash escapes */
            const char *q = memchr(js + i, '"', len - i);
            if (q == NULL) {
                return len;
            }
            size_t j = (size_t)(q - js);
            size_t k = j;
            while (k > i && js[k - 1] == '\\') {
                k--;
            }
            i = j;
            if (((j - k) & 1u) == 0) {
                in_str = false;
                if (depth == 0) {
                    return i + 1;
                }
            }
            continue;
#endif
        }
        switch (c) {
        case '"':
            in_str = true;
            break;
        case '{':
        case '[':
            depth++;
            break;
        case '}':
        case ']':
            if (depth == 0) {
                return i; /* end of the enclosing container */
            }
            depth--;
            if (depth == 0) {
                return i + 1;
            }
            break;
        case ',':
            if (depth == 0) {
                return i;
            }
            break;
        default:
            break;
        }
    }
    return len;
}

/* Whether the raw key text raw[0, rawlen) (between its quotes, escapes as
 * written) decodes to key. An escape makes the raw text longer than what
 * it decodes to: raw text as long as the key is equal when its bytes are
 * (and the key has no backslash, which the raw text would then have as an
 * escape); shorter raw text never is; longer raw text only through an
 * escape, and its first byte must then be the key's or a backslash. Only
 * that case decodes (a key's bytes are compared where they lie: this is
 * the lookup of a path in every tool call's parameters). */
static bool key_is(const char *raw, size_t rawlen, const char *key) {
    size_t klen = strlen(key);
    if (rawlen == klen) {
        return memcmp(raw, key, klen) == 0 && memchr(key, '\\', klen) == NULL;
    }
    if (rawlen < klen || (klen > 0 && raw[0] != key[0] && raw[0] != '\\')) {
        return false;
    }
    return ctxc__src_equals(raw, rawlen, CTXC__SRC_JSTR, key, klen);
}

bool ctxc__json_find_first_key(ctxc_str_t obj, const char *const *keys,
                               size_t n, ctxc_str_t *value, size_t *which) {
    const char *o = obj.ptr;
    size_t len = obj.len;
    size_t best = n;
    if (o == NULL || len < 2 || o[0] != '{') {
        return false;
    }
    size_t i = 1;
    while (best > 0 && i < len && o[i] == '"') {
        size_t kstart = i + 1;
        size_t kend = ctxc__json_skip_value(o, len, i) - 1; /* closing quote */
        size_t vstart = kend + 2;                           /* after ':' */
        if (vstart > len) {
            break;
        }
        size_t vend = ctxc__json_skip_value(o, len, vstart);
        size_t rawlen = kend - kstart;
        for (size_t k = 0; k < best; k++) {
            if (key_is(o + kstart, rawlen, keys[k])) {
                best = k;
                value->ptr = o + vstart;
                value->len = vend - vstart;
                break;
            }
        }
        i = vend + 1; /* skip ',' */
    }
    *which = best;
    return best < n;
}

bool ctxc__json_find_key(const char *obj, size_t len, const char *key,
                         ctxc_str_t *value) {
    ctxc_str_t o = {obj, len};
    size_t which;
    return ctxc__json_find_first_key(o, &key, 1, value, &which);
}
