/*
 * ctxc — default token estimator (see include/ctxc/estimate.h).
 * Integer arithmetic only: no floating point on the target.
 */
#include <string.h>

#include "ctxc/ctxc.h"
#include "ctxc_internal.h"

typedef struct {
    uint64_t words;
    uint64_t units; /* UTF-16 code units */
    bool in_word;
} acc_t;

/* ECMAScript WhiteSpace and LineTerminator (the \s class). */
static bool is_space(uint32_t cp) {
    if (cp == 0x20u || (cp >= 0x09u && cp <= 0x0Du) || cp == 0xA0u) {
        return true;
    }
    if (cp < 0x1680u) {
        return false;
    }
    return cp == 0x1680u || (cp >= 0x2000u && cp <= 0x200Au) || cp == 0x2028u ||
           cp == 0x2029u || cp == 0x202Fu || cp == 0x205Fu || cp == 0x3000u ||
           cp == 0xFEFFu;
}

static void acc_cp(acc_t *a, uint32_t cp) {
    a->units += cp >= 0x10000u ? 2u : 1u;
    if (is_space(cp)) {
        a->in_word = false;
    } else if (!a->in_word) {
        a->in_word = true;
        a->words++;
    }
}

static void acc_utf8(acc_t *a, const char *s, size_t n) {
    const uint8_t *u = (const uint8_t *)s;
    size_t i = 0;
    while (i < n) {
        uint32_t cp;
        size_t k = u[i] < 0x80u ? 1u : ctxc__utf8_decode(u + i, n - i, &cp);
        if (u[i] < 0x80u) {
            cp = u[i];
        } else if (k == 0) {
            cp = 0xFFFDu; /* invalid byte: one non-space unit */
            k = 1;
        }
        acc_cp(a, cp);
        i += k;
    }
}

/* Adds a JSON-escaped string literal (with quotes) of raw UTF-8 `s`. */
static void acc_json_string(acc_t *a, const char *s, size_t n) {
    char buf[8];
    ctxc__cp_iter_t it = {s, n, 0, CTXC__SRC_RAW};
    uint32_t cp;
    acc_cp(a, '"');
    while (ctxc__cp_next(&it, &cp, NULL) > 0) {
        ctxc__sink_t out = {buf, sizeof buf, 0};
        ctxc__json_escape_cp(&out, cp);
        if (out.len == 1 || cp >= 0x80u) {
            acc_cp(a, cp);
        } else {
            acc_utf8(a, buf, out.len); /* an escape sequence: ASCII */
        }
    }
    acc_cp(a, '"');
}

/* Adds the decoded content of a JSON value when it is a string, else its
 * text. */
static void acc_json_value_text(acc_t *a, ctxc_str_t v) {
    if (v.ptr == NULL) {
        return;
    }
    if (v.len >= 2 && v.ptr[0] == '"') {
        ctxc__cp_iter_t it = {v.ptr + 1, v.len - 2, 0, CTXC__SRC_JSTR};
        uint32_t cp;
        while (ctxc__cp_next(&it, &cp, NULL) > 0) {
            acc_cp(a, cp);
        }
        return;
    }
    acc_utf8(a, v.ptr, v.len);
}

static void acc_str(acc_t *a, ctxc_str_t s) {
    if (s.ptr != NULL) {
        acc_utf8(a, s.ptr, s.len);
    }
}

uint32_t ctxc_estimate_formula(uint64_t words, uint64_t utf16_len) {
    uint64_t by_words = (13u * words + 5u) / 10u;
    uint64_t by_len = (utf16_len + 2u) / 4u;
    uint64_t r = by_words > by_len ? by_words : by_len;
    return r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}

void ctxc_estimate_measure(const char *text, size_t len, uint64_t *words,
                           uint64_t *utf16_len) {
    acc_t a = {0, 0, false};
    if (text != NULL) {
        acc_utf8(&a, text, len);
    }
    *words = a.words;
    *utf16_len = a.units;
}

uint32_t ctxc_estimate_text(const char *text, size_t len) {
    uint64_t w, u;
    ctxc_estimate_measure(text, len, &w, &u);
    return ctxc_estimate_formula(w, u);
}

uint32_t ctxc_estimate_block_default(void *user, const ctxc_block_t *b) {
    (void)user;
    acc_t a = {0, 0, false};
    switch (b->type) {
    case CTXC_BLOCK_TEXT:
        acc_str(&a, b->u.text.text);
        break;
    case CTXC_BLOCK_TOOL_CALL:
        acc_utf8(&a, "{\"name\":", 8);
        acc_json_string(&a, b->u.tool_call.name.ptr, b->u.tool_call.name.len);
        acc_utf8(&a, ",\"parameters\":", 14);
        acc_str(&a, b->u.tool_call.parameters);
        acc_cp(&a, '}');
        break;
    case CTXC_BLOCK_TOOL_RESPONSE:
        if (b->u.tool_response.error.ptr != NULL) {
            acc_str(&a, b->u.tool_response.error);
            acc_cp(&a, '\n');
        }
        acc_json_value_text(&a, b->u.tool_response.result);
        break;
    case CTXC_BLOCK_THINKING:
        acc_str(&a, b->u.thinking.thought);
        break;
    case CTXC_BLOCK_CODE:
        acc_str(&a, b->u.code.code);
        break;
    case CTXC_BLOCK_MEDIA:
        acc_str(&a, b->u.media.caption);
        break;
    }
    return ctxc_estimate_formula(a.words, a.units);
}
