/*
 * ctxc — UTF-8 and JSON primitives: validation, canonical form, string
 * escaping. Iterative (no recursion), bounded depth, no allocation.
 */
#include <string.h>

#include "ctxc_internal.h"

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
    if (cp < 0x800u) {
        out[0] = (char)(0xC0u | (cp >> 6));
        out[1] = (char)(0x80u | (cp & 0x3Fu));
        return 2;
    }
    if (cp < 0x10000u) {
        out[0] = (char)(0xE0u | (cp >> 12));
        out[1] = (char)(0x80u | ((cp >> 6) & 0x3Fu));
        out[2] = (char)(0x80u | (cp & 0x3Fu));
        return 3;
    }
    out[0] = (char)(0xF0u | (cp >> 18));
    out[1] = (char)(0x80u | ((cp >> 12) & 0x3Fu));
    out[2] = (char)(0x80u | ((cp >> 6) & 0x3Fu));
    out[3] = (char)(0x80u | (cp & 0x3Fu));
    return 4;
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

static bool simple_escape(char e, uint32_t *cp) {
    for (size_t i = 0; i < sizeof ESC_LETTER - 1; i++) {
        if (ESC_LETTER[i] == e) {
            *cp = (uint8_t)ESC_CHAR[i];
            return true;
        }
    }
    return false;
}

/* ---- code point iteration ------------------------------------------------ */

static int hexval(char c) {
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

static bool read_hex4(const char *p, size_t n, size_t pos, uint32_t *v) {
    if (pos + 4 > n) {
        return false;
    }
    uint32_t r = 0;
    for (size_t i = 0; i < 4; i++) {
        int h = hexval(p[pos + i]);
        if (h < 0) {
            return false;
        }
        r = (r << 4) | (uint32_t)h;
    }
    *v = r;
    return true;
}

int ctxc__cp_next(ctxc__cp_iter_t *it, uint32_t *cp, ctxc_error_t *err) {
    if (it->pos >= it->n) {
        return 0;
    }
    const uint8_t *u = (const uint8_t *)it->p;
    uint8_t c = u[it->pos];
    if (it->kind == CTXC__SRC_JSTR && c == '\\') {
        size_t at = it->pos;
        if (at + 1 >= it->n) {
            ctxc__fail(err, CTXC_E_PARSE, "unfinished escape at byte %z",
                       at + 1);
            return -1;
        }
        char e = it->p[at + 1];
        uint32_t v;
        if (simple_escape(e, &v)) {
            *cp = v;
            it->pos = at + 2;
            return 1;
        }
        switch (e) {
        case 'u': {
            if (!read_hex4(it->p, it->n, at + 2, &v)) {
                ctxc__fail(err, CTXC_E_PARSE,
                           "bad \\u escape at byte %z (4 hex digits needed)",
                           at + 1);
                return -1;
            }
            if (v >= 0xDC00u && v <= 0xDFFFu) {
                ctxc__fail(err, CTXC_E_UTF8,
                           "lone low surrogate \\u%q at byte %z (no high "
                           "surrogate before it)",
                           it->p + at + 2, (size_t)4, at + 1);
                return -1;
            }
            if (v >= 0xD800u && v <= 0xDBFFu) {
                uint32_t lo;
                if (at + 7 < it->n && it->p[at + 6] == '\\' &&
                    it->p[at + 7] == 'u' &&
                    read_hex4(it->p, it->n, at + 8, &lo) && lo >= 0xDC00u &&
                    lo <= 0xDFFFu) {
                    *cp = 0x10000u + ((v - 0xD800u) << 10) + (lo - 0xDC00u);
                    it->pos = at + 12;
                    return 1;
                }
                ctxc__fail(err, CTXC_E_UTF8,
                           "lone high surrogate \\u%q at byte %z (no low "
                           "surrogate after it)",
                           it->p + at + 2, (size_t)4, at + 1);
                return -1;
            }
            *cp = v;
            it->pos = at + 6;
            return 1;
        }
        default:
            ctxc__fail(err, CTXC_E_PARSE, "unknown escape '\\%q' at byte %z",
                       it->p + at + 1, (size_t)1, at + 1);
            return -1;
        }
    }
    if (it->kind == CTXC__SRC_JSTR && c < 0x20u) {
        ctxc__fail(err, CTXC_E_PARSE,
                   "control character (code %z) inside a string at byte %z "
                   "(must be escaped)",
                   (size_t)c, it->pos + 1);
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

/* ---- escaping ------------------------------------------------------------ */

void ctxc__json_escape_cp(ctxc__sink_t *out, uint32_t cp) {
    static const char hex[] = "0123456789abcdef";
    char b[4];
    if (cp >= 0x20u && cp != '"' && cp != '\\') { /* the common case */
        ctxc__put(out, b, ctxc__utf8_encode(cp, b));
        return;
    }
    for (size_t i = 0; i < ESC_WRITTEN; i++) {
        if (cp == (uint8_t)ESC_CHAR[i]) {
            char esc[2] = {'\\', ESC_LETTER[i]};
            ctxc__put(out, esc, 2);
            return;
        }
    }
    char u[6] = {'\\', 'u', '0', '0', hex[(cp >> 4) & 0xFu], hex[cp & 0xFu]};
    ctxc__put(out, u, 6); /* the other controls */
}

ctxc_status_t ctxc__json_write_string(ctxc__sink_t *out, const char *p,
                                      size_t n, ctxc__src_kind_t kind,
                                      ctxc_error_t *err) {
    ctxc__cp_iter_t it = {p, n, 0, kind};
    uint32_t cp;
    int r;
    ctxc__putc(out, '"');
    while ((r = ctxc__cp_next(&it, &cp, err)) > 0) {
        ctxc__json_escape_cp(out, cp);
    }
    ctxc__putc(out, '"');
    return r < 0 ? (err != NULL ? err->status : CTXC_E_PARSE) : CTXC_OK;
}

ctxc_status_t ctxc__write_decoded(ctxc__sink_t *out, const char *p, size_t n,
                                  ctxc__src_kind_t kind, ctxc_error_t *err) {
    if (kind == CTXC__SRC_RAW) {
        size_t bad;
        if (!ctxc__utf8_valid(p, n, &bad)) {
            return ctxc__fail(err, CTXC_E_UTF8, "invalid UTF-8 at byte %z",
                              bad + 1);
        }
        ctxc__put(out, p, n);
        return CTXC_OK;
    }
    ctxc__cp_iter_t it = {p, n, 0, kind};
    uint32_t cp;
    int r;
    while ((r = ctxc__cp_next(&it, &cp, err)) > 0) {
        char b[4];
        ctxc__put(out, b, ctxc__utf8_encode(cp, b));
    }
    return r < 0 ? (err != NULL ? err->status : CTXC_E_PARSE) : CTXC_OK;
}

bool ctxc__src_equals(const char *p, size_t n, ctxc__src_kind_t kind,
                      const char *s, size_t slen) {
    if (kind == CTXC__SRC_RAW) {
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

/* ---- canonical JSON ---------------------------------------------------------
 * A reader yields the bytes of the JSON text: directly (RAW) or decoded from a
 * JSON string body (JSTR). */

typedef struct {
    ctxc__cp_iter_t it;
    char pend[4];
    size_t pn, pi;
    size_t at; /* 1-based position of the last byte taken, for messages */
    ctxc_error_t *err;
    bool failed;
} reader_t;

/* Next byte, or -1 at the end, or -2 on a decoding error (err set). */
static int rd_fill(reader_t *r) {
    if (r->pi < r->pn) {
        return 0;
    }
    if (r->it.kind == CTXC__SRC_RAW) {
        return r->it.pos < r->it.n ? 0 : -1;
    }
    uint32_t cp;
    size_t before = r->it.pos;
    int k = ctxc__cp_next(&r->it, &cp, r->err);
    if (k == 0) {
        return -1;
    }
    if (k < 0) {
        r->failed = true;
        return -2;
    }
    r->at = before + 1;
    r->pn = ctxc__utf8_encode(cp, r->pend);
    r->pi = 0;
    return 0;
}

static int rd_peek(reader_t *r) {
    int s = rd_fill(r);
    if (s < 0) {
        return s;
    }
    if (r->it.kind == CTXC__SRC_RAW) {
        return (unsigned char)r->it.p[r->it.pos];
    }
    return (unsigned char)r->pend[r->pi];
}

static int rd_next(reader_t *r) {
    int c = rd_peek(r);
    if (c < 0) {
        return c;
    }
    if (r->it.kind == CTXC__SRC_RAW) {
        r->it.pos++;
        r->at = r->it.pos;
    } else {
        r->pi++;
    }
    return c;
}

static bool is_ws(int c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static int skip_ws(reader_t *r) {
    int c;
    while ((c = rd_peek(r)) >= 0 && is_ws(c)) {
        rd_next(r);
    }
    return c;
}

static ctxc_status_t syntax(reader_t *r, const char *what) {
    if (r->failed) {
        return r->err != NULL ? r->err->status : CTXC_E_PARSE;
    }
    return ctxc__fail(r->err, CTXC_E_PARSE, "invalid JSON at byte %z: %s",
                      r->at == 0 ? (size_t)1 : r->at, what);
}

/* Reads four hex digits of a \\u escape. */
static bool rd_hex4(reader_t *r, uint32_t *v) {
    uint32_t acc = 0;
    for (int i = 0; i < 4; i++) {
        int h = rd_next(r);
        int hv = h < 0 ? -1 : hexval((char)h);
        if (hv < 0) {
            return false;
        }
        acc = (acc << 4) | (uint32_t)hv;
    }
    *v = acc;
    return true;
}

/* Reads a JSON string literal (opening quote already taken). */
static ctxc_status_t canon_string(reader_t *r, ctxc__sink_t *out) {
    ctxc__putc(out, '"');
    for (;;) {
        int c = rd_next(r);
        if (c < 0) {
            return syntax(r, "unterminated string");
        }
        if (c == '"') {
            break;
        }
        uint32_t cp;
        if (c == '\\') {
            int e = rd_next(r);
            if (e >= 0 && simple_escape((char)e, &cp)) {
                ctxc__json_escape_cp(out, cp);
                continue;
            }
            switch (e) {
            case 'u': {
                uint32_t v = 0;
                if (!rd_hex4(r, &v)) {
                    return syntax(r, "bad \\u escape (4 hex digits needed)");
                }
                if (v >= 0xDC00u && v <= 0xDFFFu) {
                    if (r->failed) {
                        return syntax(r, "");
                    }
                    return ctxc__fail(r->err, CTXC_E_UTF8,
                                      "lone low surrogate escape at byte %z",
                                      r->at);
                }
                if (v >= 0xD800u && v <= 0xDBFFu) {
                    uint32_t lo = 0;
                    bool ok = rd_next(r) == '\\' && rd_next(r) == 'u' &&
                              rd_hex4(r, &lo);
                    if (!ok || lo < 0xDC00u || lo > 0xDFFFu) {
                        if (r->failed) {
                            return syntax(r, "");
                        }
                        return ctxc__fail(
                            r->err, CTXC_E_UTF8,
                            "lone high surrogate escape near byte %z (no "
                            "low surrogate after it)",
                            r->at);
                    }
                    v = 0x10000u + ((v - 0xD800u) << 10) + (lo - 0xDC00u);
                }
                cp = v;
                break;
            }
            default:
                return syntax(r, "unknown escape in string");
            }
        } else if (c < 0x20) {
            return syntax(r, "control character in string (must be escaped)");
        } else if (c < 0x80) {
            cp = (uint32_t)c;
        } else {
            uint8_t b[4];
            size_t need = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
            b[0] = (uint8_t)c;
            size_t got = 1;
            while (got < need) {
                int d = rd_peek(r);
                if (d < 0 || (d & 0xC0) != 0x80) {
                    break;
                }
                b[got++] = (uint8_t)rd_next(r);
            }
            if (ctxc__utf8_decode(b, got, &cp) != got || got != need) {
                if (r->failed) {
                    return syntax(r, "");
                }
                return ctxc__fail(r->err, CTXC_E_UTF8,
                                  "invalid UTF-8 in string at byte %z", r->at);
            }
        }
        ctxc__json_escape_cp(out, cp);
    }
    ctxc__putc(out, '"');
    return CTXC_OK;
}

static bool is_digit(int c) { return c >= '0' && c <= '9'; }

/* Reads a number (first byte not yet taken); writes it as written. */
static ctxc_status_t canon_number(reader_t *r, ctxc__sink_t *out) {
    int c = rd_peek(r);
    if (c == '-') {
        ctxc__putc(out, (char)rd_next(r));
        c = rd_peek(r);
    }
    if (c == '0') {
        ctxc__putc(out, (char)rd_next(r));
        c = rd_peek(r);
        if (is_digit(c)) {
            return syntax(r, "leading zero in number");
        }
    } else if (is_digit(c)) {
        while (is_digit(c)) {
            ctxc__putc(out, (char)rd_next(r));
            c = rd_peek(r);
        }
    } else {
        return syntax(r, "digit expected in number");
    }
    if (c == '.') {
        ctxc__putc(out, (char)rd_next(r));
        c = rd_peek(r);
        if (!is_digit(c)) {
            return syntax(r, "digit expected after decimal point");
        }
        while (is_digit(c)) {
            ctxc__putc(out, (char)rd_next(r));
            c = rd_peek(r);
        }
    }
    if (c == 'e' || c == 'E') {
        ctxc__putc(out, (char)rd_next(r));
        c = rd_peek(r);
        if (c == '+' || c == '-') {
            ctxc__putc(out, (char)rd_next(r));
            c = rd_peek(r);
        }
        if (!is_digit(c)) {
            return syntax(r, "digit expected in exponent");
        }
        while (is_digit(c)) {
            ctxc__putc(out, (char)rd_next(r));
            c = rd_peek(r);
        }
    }
    if (c == -2) {
        return syntax(r, "");
    }
    return CTXC_OK;
}

static ctxc_status_t canon_literal(reader_t *r, ctxc__sink_t *out,
                                   const char *word) {
    for (const char *w = word; *w != '\0'; w++) {
        if (rd_next(r) != (unsigned char)*w) {
            return syntax(r, "unknown literal (true, false or null expected)");
        }
    }
    ctxc__put(out, word, strlen(word));
    return CTXC_OK;
}

enum { ST_VALUE, ST_ARR_FIRST, ST_OBJ_FIRST, ST_KEY, ST_COLON, ST_AFTER };

ctxc_status_t ctxc__json_canon(const char *in, size_t len,
                               ctxc__src_kind_t kind, unsigned max_depth,
                               ctxc__sink_t *out, ctxc_error_t *err) {
    reader_t r;
    memset(&r, 0, sizeof r);
    r.it.p = in;
    r.it.n = len;
    r.it.kind = kind;
    r.err = err;
    uint64_t is_obj = 0; /* bit d set: container at depth d+1 is an object */
    unsigned depth = 0;
    int state = ST_VALUE;
    ctxc_status_t st;
    for (;;) {
        int c = skip_ws(&r);
        if (c == -2) {
            return syntax(&r, "");
        }
        if (state == ST_AFTER) {
            if (depth == 0) {
                if (c >= 0) {
                    rd_next(&r);
                    return syntax(&r, "unexpected data after the JSON value");
                }
                return CTXC_OK;
            }
            bool obj = ((is_obj >> (depth - 1)) & 1u) != 0;
            if (c < 0) {
                return syntax(&r,
                              obj ? "unexpected end of input ('}' missing)"
                                  : "unexpected end of input (']' missing)");
            }
            rd_next(&r);
            if (c == ',') {
                ctxc__putc(out, ',');
                state = obj ? ST_KEY : ST_VALUE;
            } else if (c == (obj ? '}' : ']')) {
                ctxc__putc(out, (char)c);
                depth--;
            } else {
                return syntax(&r, obj ? "',' or '}' expected"
                                      : "',' or ']' expected");
            }
            continue;
        }
        if (c < 0) {
            return syntax(&r, depth == 0 && state == ST_VALUE
                                  ? "empty input"
                                  : "unexpected end of input");
        }
        if (state == ST_OBJ_FIRST && c == '}') {
            rd_next(&r);
            ctxc__putc(out, '}');
            depth--;
            state = ST_AFTER;
            continue;
        }
        if (state == ST_ARR_FIRST && c == ']') {
            rd_next(&r);
            ctxc__putc(out, ']');
            depth--;
            state = ST_AFTER;
            continue;
        }
        if (state == ST_OBJ_FIRST || state == ST_KEY) {
            rd_next(&r);
            if (c != '"') {
                return syntax(&r, "string key expected");
            }
            if ((st = canon_string(&r, out)) != CTXC_OK) {
                return st;
            }
            state = ST_COLON;
            continue;
        }
        if (state == ST_COLON) {
            rd_next(&r);
            if (c != ':') {
                return syntax(&r, "':' expected after key");
            }
            ctxc__putc(out, ':');
            state = ST_VALUE;
            continue;
        }
        /* a value (ST_VALUE or ST_ARR_FIRST) */
        if (c == '{' || c == '[') {
            rd_next(&r);
            if (depth >= max_depth || depth >= 64u) {
                return ctxc__fail(err, CTXC_E_TOO_DEEP,
                                  "JSON nesting deeper than %u levels at byte "
                                  "%z",
                                  max_depth, r.at);
            }
            if (c == '{') {
                is_obj |= (uint64_t)1u << depth;
            } else {
                is_obj &= ~((uint64_t)1u << depth);
            }
            depth++;
            ctxc__putc(out, (char)c);
            state = c == '{' ? ST_OBJ_FIRST : ST_ARR_FIRST;
            continue;
        }
        if (c == '"') {
            rd_next(&r);
            st = canon_string(&r, out);
        } else if (c == '-' || is_digit(c)) {
            st = canon_number(&r, out);
        } else if (c == 't') {
            st = canon_literal(&r, out, "true");
        } else if (c == 'f') {
            st = canon_literal(&r, out, "false");
        } else if (c == 'n') {
            st = canon_literal(&r, out, "null");
        } else {
            rd_next(&r);
            st = syntax(&r, "value expected");
        }
        if (st != CTXC_OK) {
            return st;
        }
        state = ST_AFTER;
    }
}

/* ---- reading canonical JSON ---------------------------------------------- */

size_t ctxc__json_skip_value(const char *js, size_t len, size_t pos) {
    size_t depth = 0;
    bool in_str = false;
    for (size_t i = pos; i < len; i++) {
        char c = js[i];
        if (in_str) {
            if (c == '\\') {
                i++;
            } else if (c == '"') {
                in_str = false;
                if (depth == 0) {
                    return i + 1;
                }
            }
            continue;
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

bool ctxc__json_find_key(const char *obj, size_t len, const char *key,
                         ctxc_str_t *value) {
    if (obj == NULL || len < 2 || obj[0] != '{') {
        return false;
    }
    size_t klen = strlen(key);
    size_t i = 1;
    while (i < len && obj[i] == '"') {
        size_t kstart = i + 1;
        size_t kend =
            ctxc__json_skip_value(obj, len, i) - 1; /* closing quote */
        size_t vstart = kend + 2;                   /* after ':' */
        if (vstart > len) {
            return false;
        }
        size_t vend = ctxc__json_skip_value(obj, len, vstart);
        if (ctxc__src_equals(obj + kstart, kend - kstart, CTXC__SRC_JSTR, key,
                             klen)) {
            value->ptr = obj + vstart;
            value->len = vend - vstart;
            return true;
        }
        i = vend + 1; /* skip ',' */
    }
    return false;
}
