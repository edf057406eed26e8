/*
 * ctxc — the resumable JSON reader (json_stream.h): one byte at a time
 * through a small state machine, string runs handed on without a copy.
 */
#include <string.h>

#include "error.h"
#include "json.h"
#include "json_stream.h"
#include "json_tok.h"

enum {
    S_VALUE,          /* a value is due */
    S_VALUE_OR_CLOSE, /* after '[' */
    S_KEY_OR_CLOSE,   /* after '{' */
    S_KEY,            /* after ',' in an object */
    S_COLON,          /* after a key */
    S_AFTER,          /* after a value inside a container */
    S_STRING,
    S_NUMBER,
    S_LITERAL,
    S_END, /* the value is complete: only whitespace may follow */
    S_FAIL
};

enum { STR_PLAIN, STR_ESC, STR_HEX };

enum { N_MINUS, N_ZERO, N_INT, N_DOT, N_FRAC, N_E, N_ESIGN, N_EXP };

static const char *const literals[3] = {"true", "false", "null"};
static const uint8_t literal_types[3] = {CTXC__JT_TRUE, CTXC__JT_FALSE,
                                         CTXC__JT_NULL};

#if CTXC_CFG_JSON_MAX_DEPTH > 64
#error "the reader keeps container kinds in 64 bits"
#endif

void ctxc__js_init(ctxc__js_t *js, const char *const *keys, size_t nkeys,
                   const ctxc__js_handler_t *h, void *user) {
    memset(js, 0, sizeof *js);
    js->h = h;
    js->user = user;
    js->keys = keys;
    js->nkeys = (uint8_t)(nkeys < 127u ? nkeys : 127u);
    js->state = S_VALUE;
}

static ctxc_status_t fail(ctxc__js_t *js, size_t i, const char *what,
                          ctxc_error_t *err) {
    js->state = S_FAIL;
    return ctxc__fail(err, CTXC_E_PARSE, "%s at byte %z", what,
                      (size_t)(js->pos + i + 1u));
}

static bool reach(const ctxc__js_t *js) {
    return js->depth <= CTXC__JS_PATH_MAX;
}

static void value_begin(ctxc__js_t *js, int type) {
    js->want = 0;
    if (reach(js) && js->h->begin != NULL) {
        js->want = js->h->begin(js->user, js, type) ? 1u : 0u;
    }
}

/* A value ended at js->depth: its end callback, then what may follow. */
static void value_end(ctxc__js_t *js, int type) {
    if (reach(js) && js->h->end != NULL) {
        js->h->end(js->user, js, type);
    }
    js->want = 0;
    js->state = js->depth == 0 ? S_END : S_AFTER;
}

/* Decoded string bytes: into the key, or to the reader when it asked. */
static void emit(ctxc__js_t *js, const char *p, size_t n) {
    if (n == 0) {
        return;
    }
    if (js->in_key) {
        if (js->key_len != 0xFFu && js->key_len + n <= CTXC__JS_KEY_MAX) {
            memcpy(js->key + js->key_len, p, n);
            js->key_len = (uint8_t)(js->key_len + n);
        } else {
            js->key_len = 0xFFu;
        }
    } else if (js->want && js->h->str != NULL) {
        js->h->str(js->user, p, n);
    }
}

static void emit_cp(ctxc__js_t *js, uint32_t cp) {
    char b[4];
    emit(js, b, ctxc__utf8_encode(cp, b));
}

/* A high surrogate not followed by its low half. */
static void lone_high(ctxc__js_t *js) {
    if (js->hi_sur != 0) {
        js->hi_sur = 0;
        emit_cp(js, 0xFFFDu);
    }
}

static void key_done(ctxc__js_t *js) {
    uint8_t id = 0;
    for (uint8_t k = 0; js->key_len != 0xFFu && k < js->nkeys; k++) {
        const char *s = js->keys[k];
        if (strlen(s) == js->key_len && memcmp(s, js->key, js->key_len) == 0) {
            id = (uint8_t)(k + 1u);
            break;
        }
    }
    if (reach(js) && js->depth > 0) {
        js->path[js->depth - 1u] = id;
    }
    js->in_key = 0;
    js->state = S_COLON;
}

static ctxc_status_t push(ctxc__js_t *js, size_t i, bool array,
                          ctxc_error_t *err) {
    value_begin(js, array ? CTXC__JT_ARRAY : CTXC__JT_OBJECT);
    if (js->depth >= CTXC_CFG_JSON_MAX_DEPTH) {
        return fail(js, i,
                    "nested deeper than CTXC_CFG_JSON_MAX_DEPTH "
                    "containers",
                    err);
    }
    uint64_t bit = (uint64_t)1u << js->depth;
    js->arrays = array ? js->arrays | bit : js->arrays & ~bit;
    js->depth++;
    if (reach(js)) {
        js->path[js->depth - 1u] = array ? CTXC__JS_ELEM(0u) : 0u;
    }
    js->state = array ? S_VALUE_OR_CLOSE : S_KEY_OR_CLOSE;
    return CTXC_OK;
}

static ctxc_status_t pop(ctxc__js_t *js, size_t i, bool array,
                         ctxc_error_t *err) {
    bool top_array = ((js->arrays >> (js->depth - 1u)) & 1u) != 0;
    if (top_array != array) {
        return fail(
            js, i, array ? "']' closes an object" : "'}' closes an array", err);
    }
    js->depth--;
    value_end(js, array ? CTXC__JT_ARRAY : CTXC__JT_OBJECT);
    return CTXC_OK;
}

static void number_done(ctxc__js_t *js) {
    if (js->num_len != 0xFFu) {
        js->num[js->num_len] = '\0';
    } else {
        js->num[0] = '\0';
    }
    value_end(js, CTXC__JT_NUMBER);
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

/* One byte of a number; *again when the byte ended it and must be read as
 * what follows. */
static ctxc_status_t number_byte(ctxc__js_t *js, size_t i, char c, bool *again,
                                 ctxc_error_t *err) {
    uint8_t next = 0xFFu;
    switch (js->sub) {
    case N_MINUS:
        next = c == '0' ? N_ZERO : is_digit(c) ? N_INT : 0xFEu;
        break;
    case N_ZERO:
        next = c == '.' ? N_DOT : (c == 'e' || c == 'E') ? N_E : 0xFFu;
        break;
    case N_INT:
        next = is_digit(c)              ? N_INT
               : c == '.'               ? N_DOT
               : (c == 'e' || c == 'E') ? N_E
                                        : 0xFFu;
        break;
    case N_DOT:
        next = is_digit(c) ? N_FRAC : 0xFEu;
        break;
    case N_FRAC:
        next = is_digit(c) ? N_FRAC : (c == 'e' || c == 'E') ? N_E : 0xFFu;
        break;
    case N_E:
        next = (c == '+' || c == '-') ? N_ESIGN : is_digit(c) ? N_EXP : 0xFEu;
        break;
    case N_ESIGN:
        next = is_digit(c) ? N_EXP : 0xFEu;
        break;
    default: /* N_EXP */
        next = is_digit(c) ? N_EXP : 0xFFu;
        break;
    }
    if (next == 0xFEu) {
        return fail(js, i, "malformed number", err);
    }
    if (next == 0xFFu) { /* the number ended before c */
        number_done(js);
        *again = true;
        return CTXC_OK;
    }
    js->sub = next;
    if (js->num_len < CTXC__JS_NUM_MAX - 1u) {
        js->num[js->num_len++] = c;
    } else {
        js->num_len = 0xFFu;
    }
    return CTXC_OK;
}

static void escape_cp(ctxc__js_t *js, uint32_t cp) {
    if (js->hi_sur != 0) {
        if (cp >= 0xDC00u && cp <= 0xDFFFu) {
            uint32_t full = 0x10000u +
                            (((uint32_t)js->hi_sur - 0xD800u) << 10) +
                            (cp - 0xDC00u);
            js->hi_sur = 0;
            emit_cp(js, full);
            return;
        }
        lone_high(js);
    }
    if (cp >= 0xD800u && cp <= 0xDBFFu) {
        js->hi_sur = (uint16_t)cp;
    } else if (cp >= 0xDC00u && cp <= 0xDFFFu) {
        emit_cp(js, 0xFFFDu);
    } else {
        emit_cp(js, cp);
    }
}

/* String bytes from p[i]: a run of plain bytes is handed on in one piece.
 * Returns the index of the next byte to read. */
static size_t string_bytes(ctxc__js_t *js, const char *p, size_t i, size_t n,
                           ctxc_status_t *st, ctxc_error_t *err) {
    if (js->sub == STR_ESC) {
        char c = p[i];
        uint32_t ch;
        if (c == 'u') {
            js->sub = STR_HEX;
            js->hex_n = 0;
            js->hex = 0;
        } else if (ctxc__json_simple_escape(c, &ch)) {
            lone_high(js);
            char b = (char)ch;
            emit(js, &b, 1);
            js->sub = STR_PLAIN;
        } else {
            *st = fail(js, i, "bad escape in a string", err);
        }
        return i + 1u;
    }
    if (js->sub == STR_HEX) {
        int v = ctxc__hexval(p[i]);
        if (v < 0) {
            *st = fail(js, i, "bad \\u escape in a string", err);
            return i + 1u;
        }
        js->hex = (uint16_t)(((unsigned)js->hex << 4) | (unsigned)v);
        if (++js->hex_n == 4u) {
            js->sub = STR_PLAIN;
            escape_cp(js, js->hex);
        }
        return i + 1u;
    }
    size_t run = i;
    while (i < n) {
        uint8_t b = (uint8_t)p[i];
        if (js->u8_need > 0) {
            if (b < js->u8_lo || b > js->u8_hi) {
                *st = fail(js, i, "invalid UTF-8 in a string", err);
                return i + 1u;
            }
            js->u8_need--;
            js->u8_lo = 0x80u;
            js->u8_hi = 0xBFu;
            i++;
            continue;
        }
        if (js->hi_sur != 0 && b != '\\') {
            emit(js, p + run, i - run);
            run = i;
            lone_high(js);
        }
        if (b == '"' || b == '\\') {
            emit(js, p + run, i - run);
            if (b == '\\') {
                js->sub = STR_ESC;
            } else if (js->in_key) {
                key_done(js);
            } else {
                value_end(js, CTXC__JT_STRING);
            }
            return i + 1u;
        }
        if (b < 0x20u) {
            *st = fail(js, i, "control character in a string", err);
            return i + 1u;
        }
        if (b >= 0x80u) {
            js->u8_lo = 0x80u;
            js->u8_hi = 0xBFu;
            if (b >= 0xC2u && b <= 0xDFu) {
                js->u8_need = 1;
            } else if (b >= 0xE0u && b <= 0xEFu) {
                js->u8_need = 2;
                js->u8_lo = b == 0xE0u ? 0xA0u : 0x80u;
                js->u8_hi = b == 0xEDu ? 0x9Fu : 0xBFu;
            } else if (b >= 0xF0u && b <= 0xF4u) {
                js->u8_need = 3;
                js->u8_lo = b == 0xF0u ? 0x90u : 0x80u;
                js->u8_hi = b == 0xF4u ? 0x8Fu : 0xBFu;
            } else {
                *st = fail(js, i, "invalid UTF-8 in a string", err);
                return i + 1u;
            }
        }
        i++;
    }
    emit(js, p + run, i - run);
    return i;
}

static bool is_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* A value starting with c. */
static ctxc_status_t value_start(ctxc__js_t *js, size_t i, char c,
                                 ctxc_error_t *err) {
    if (c == '{' || c == '[') {
        return push(js, i, c == '[', err);
    }
    if (c == '"') {
        value_begin(js, CTXC__JT_STRING);
        js->in_key = 0;
        js->state = S_STRING;
        js->sub = STR_PLAIN;
        return CTXC_OK;
    }
    if (c == '-' || is_digit(c)) {
        value_begin(js, CTXC__JT_NUMBER);
        js->state = S_NUMBER;
        js->sub = c == '-' ? N_MINUS : c == '0' ? N_ZERO : N_INT;
        js->num[0] = c;
        js->num_len = 1;
        return CTXC_OK;
    }
    for (uint8_t k = 0; k < 3u; k++) {
        if (c == literals[k][0]) {
            value_begin(js, literal_types[k]);
            js->state = S_LITERAL;
            js->sub = k;
            js->hex_n = 1;
            return CTXC_OK;
        }
    }
    return fail(js, i, "a value was expected", err);
}

ctxc_status_t ctxc__js_feed(ctxc__js_t *js, const char *p, size_t n,
                            ctxc_error_t *err) {
    ctxc_status_t st = CTXC_OK;
    size_t i = 0;
    if (js->state == S_FAIL) {
        return fail(js, 0, "the text was already malformed", err);
    }
    while (i < n && st == CTXC_OK) {
        char c = p[i];
        switch (js->state) {
        case S_STRING:
            i = string_bytes(js, p, i, n, &st, err);
            continue;
        case S_NUMBER: {
            bool again = false;
            st = number_byte(js, i, c, &again, err);
            if (!again) {
                i++;
            }
            continue;
        }
        case S_LITERAL: {
            const char *lit = literals[js->sub];
            if (c != lit[js->hex_n]) {
                st = fail(js, i, "malformed literal", err);
                break;
            }
            if (lit[++js->hex_n] == '\0') {
                value_end(js, literal_types[js->sub]);
            }
            i++;
            continue;
        }
        default:
            break;
        }
        if (st != CTXC_OK) {
            break;
        }
        i++;
        if (is_ws(c)) {
            continue;
        }
        size_t at = i - 1u;
        switch (js->state) {
        case S_VALUE:
            st = value_start(js, at, c, err);
            break;
        case S_VALUE_OR_CLOSE:
            st =
                c == ']' ? pop(js, at, true, err) : value_start(js, at, c, err);
            break;
        case S_KEY_OR_CLOSE:
        case S_KEY:
            if (c == '}' && js->state == S_KEY_OR_CLOSE) {
                st = pop(js, at, false, err);
            } else if (c == '"') {
                js->in_key = 1;
                js->key_len = 0;
                js->state = S_STRING;
                js->sub = STR_PLAIN;
            } else {
                st = fail(js, at, "an object key was expected", err);
            }
            break;
        case S_COLON:
            if (c == ':') {
                js->state = S_VALUE;
            } else {
                st = fail(js, at, "':' was expected", err);
            }
            break;
        case S_AFTER: {
            bool array = ((js->arrays >> (js->depth - 1u)) & 1u) != 0;
            if (c == ',') {
                if (array) {
                    if (reach(js) && js->path[js->depth - 1u] < 0xFEu) {
                        js->path[js->depth - 1u]++;
                    }
                    js->state = S_VALUE;
                } else {
                    js->state = S_KEY;
                }
            } else if (c == ']' || c == '}') {
                st = pop(js, at, c == ']', err);
            } else {
                st = fail(js, at, "',' or a closing bracket was expected", err);
            }
            break;
        }
        case S_END:
            st = fail(js, at, "more after the JSON value", err);
            break;
        default: /* S_FAIL */
            st = fail(js, at, "the text was already malformed", err);
            break;
        }
    }
    js->pos += i;
    return st;
}

ctxc_status_t ctxc__js_end(ctxc__js_t *js, ctxc_error_t *err) {
    if (js->state == S_NUMBER && js->depth == 0 &&
        (js->sub == N_ZERO || js->sub == N_INT || js->sub == N_FRAC ||
         js->sub == N_EXP)) {
        number_done(js);
    }
    if (js->state == S_END) {
        return CTXC_OK;
    }
    if (js->state == S_FAIL) {
        return fail(js, 0, "the text was already malformed", err);
    }
    js->state = S_FAIL;
    return ctxc__fail(err, CTXC_E_PARSE,
                      js->pos == 0 ? "empty JSON text"
                                   : "the JSON text ended inside a value "
                                     "(after %z bytes)",
                      (size_t)js->pos);
}
