/*
 * ctxc — default token estimator (see include/ctxc/estimate.h).
 * Integer arithmetic only: no floating point on the target. One pass over
 * the bytes; ASCII needs no decoding.
 */
#include <stddef.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h> /* x86-64 hosts: sixteen bytes at a time */
#endif

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "json.h"
#include "sink.h"
#include "swar.h"
#include "text_stats.h"

/* The text of a block is fed in pieces; `runs` counts maximal whitespace
 * runs, so the pieces of text.split(/\s+/) are runs + 1 (text not empty).
 * size_t, not 64 bits (long sequences on 32-bit targets): a block's counts
 * are at most 6 per byte of text held in memory (an escaped control
 * character), so they fit the address space's size type. */
typedef struct {
    size_t runs;
    size_t units; /* UTF-16 code units */
    bool in_space;
} acc_t;

#ifdef CTXC__SCAN_STATS
void ctxc__stats_join(ctxc__text_stats_t *a, const ctxc__text_stats_t *b) {
    if (b->units == 0) {
        return;
    }
    if (a->units == 0) {
        *a = *b;
        return;
    }
    a->runs += b->runs - (a->last_ws && b->first_ws ? 1u : 0u);
    a->units += b->units;
    a->last_ws = b->last_ws;
}

uint32_t ctxc__stats_tokens(const ctxc__text_stats_t *s) {
    return ctxc_estimate_formula(s->units == 0 ? 0u : s->runs + 1u, s->units);
}
#endif

CTXC__NOINLINE static void acc_space(acc_t *a, bool sp) {
    a->runs += (size_t)(sp && !a->in_space);
    a->in_space = sp;
}

static void acc_cp(acc_t *a, uint32_t cp) {
    a->units += cp >= 0x10000u ? 2u : 1u;
    acc_space(a, cp < 0x80u ? ctxc__is_space_ascii((uint8_t)cp)
                            : ctxc__is_space_cp(cp));
}

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ &&    \
    SIZE_MAX > 0xFFFFFFFFu
/* 64-bit little-endian machines count eight ASCII bytes at a time; small
 * targets keep the byte loop (and the flash). */
#define SWAR 1
#endif

/* Adds UTF-8 text s[0..n); with `jstr`, s is the body of a canonical JSON
 * string literal and its escapes count as the characters they stand for. */
static void acc_text(acc_t *a, const char *s, size_t n, bool jstr) {
    const uint8_t *u = (const uint8_t *)s;
    size_t runs = a->runs;
    bool in = a->in_space;
    size_t i = 0;
    size_t ascii = 0;
#ifdef SWAR
    uint64_t lanes = 0;     /* per-byte run counts, summed every 255 words */
    uint64_t esc_lanes = 0; /* per-byte escape counts (1 unit per pair) */
    unsigned nlanes = 0;
#endif
    while (i < n) {
        size_t stop = i + 1; /* one character by the byte path */
#if defined(SWAR) && defined(__SSE2__)
        /* sixteen ASCII bytes at a time while there is no escape either */
        while (n - i >= 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(const void *)(u + i));
            unsigned stop16 = (unsigned)_mm_movemask_epi8(v);
            if (jstr) {
                stop16 |= (unsigned)_mm_movemask_epi8(
                    _mm_cmpeq_epi8(v, _mm_set1_epi8('\\')));
            }
            if (stop16 != 0) {
                break;
            }
            __m128i ctl = _mm_and_si128(_mm_cmpgt_epi8(v, _mm_set1_epi8(0x08)),
                                        _mm_cmplt_epi8(v, _mm_set1_epi8(0x0E)));
            unsigned ws = (unsigned)_mm_movemask_epi8(
                _mm_or_si128(ctl, _mm_cmpeq_epi8(v, _mm_set1_epi8(' '))));
            runs += (uint64_t)ctxc__pop16(ws & ~((ws << 1) | (in ? 1u : 0u)));
            in = (ws >> 15) != 0;
            i += 16;
            ascii += 16;
        }
        if (i >= n) {
            break;
        }
#endif
#ifdef SWAR
        /* eight bytes at a time up to the next byte >= 0x80 (or, in a
         * string body, backslash); first the plain words, in a tight loop */
        if (!jstr) {
            uint64_t in_bit = in ? 0x80u : 0u;
            while (n - i >= 8) {
                uint64_t x;
                memcpy(&x, u + i, sizeof x);
                if ((x & CTXC__SWAR_HIGH) != 0) {
                    break;
                }
                uint64_t ge09 =
                    (x + CTXC__SWAR_ONES * (0x80u - 0x09u)) & CTXC__SWAR_HIGH;
                uint64_t ge0e =
                    (x + CTXC__SWAR_ONES * (0x80u - 0x0Eu)) & CTXC__SWAR_HIGH;
                uint64_t ws = ctxc__swar_eq(x, ' ') | (ge09 & ~ge0e);
                lanes += (ws & ~((ws << 8) | in_bit)) >> 7;
                in_bit = (ws >> 56) & 0x80u;
                i += 8;
                ascii += 8;
                if (++nlanes == 255u) {
                    runs += ctxc__swar_byte_sum(lanes);
                    lanes = 0;
                    nlanes = 0;
                }
            }
            in = in_bit != 0;
        }
        if (n - i >= 8) {
            uint64_t x;
            memcpy(&x, u + i, sizeof x);
            uint64_t xl = x & CTXC__SWAR_LOW;
            uint64_t cut = x & CTXC__SWAR_HIGH; /* stop before: non-ASCII */
            uint64_t ge09 =
                (xl + CTXC__SWAR_ONES * (0x80u - 0x09u)) & CTXC__SWAR_HIGH;
            uint64_t ge0e =
                (xl + CTXC__SWAR_ONES * (0x80u - 0x0Eu)) & CTXC__SWAR_HIGH;
            uint64_t ws = ctxc__swar_eq(xl, ' ') | (ge09 & ~ge0e);
            uint64_t esc = jstr ? ctxc__swar_eq(xl, '\\') : 0u;
            if (esc != 0) {
                /* a string body: an escape counts as the character it
                 * stands for. Backslashes pair up from the left: the first
                 * of a pair escapes the byte after it. \\u escapes and an
                 * escape cut by the word end go through the byte path. */
                uint64_t m = esc;
                esc = 0;
                while (m != 0) {
                    uint64_t bit = m & (~m + 1u);
                    esc |= bit;
                    m &= ~(bit | (bit << 8));
                }
                uint64_t after = esc << 8;
                cut |= ((after & ctxc__swar_eq(xl, 'u')) >> 8) |
                       (esc & (0x80ull << 56));
                uint64_t wl =
                    after & (ctxc__swar_eq(xl, 'n') | ctxc__swar_eq(xl, 't') |
                             ctxc__swar_eq(xl, 'r') | ctxc__swar_eq(xl, 'f'));
                ws |= wl | (wl >> 8);
            }
            unsigned nb = cut == 0 ? 8u : (unsigned)__builtin_ctzll(cut) / 8u;
            if (nb > 0) {
                uint64_t keep = nb < 8u ? (1ull << (8u * nb)) - 1u : ~0ull;
                ws &= keep;
                esc &= keep;
                uint64_t starts = ws & ~((ws << 8) | (in ? 0x80u : 0u));
                in = ((ws >> (8u * nb - 1u)) & 1u) != 0;
                lanes += starts >> 7;
                esc_lanes += esc >> 7;
                if (++nlanes == 255u) {
                    runs += ctxc__swar_byte_sum(lanes);
                    ascii -= ctxc__swar_byte_sum(esc_lanes);
                    lanes = esc_lanes = 0;
                    nlanes = 0;
                }
                i += nb;
                ascii += nb;
                continue;
            }
        }
#elif defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* 32-bit targets: four ASCII bytes at a time up to the next byte >=
         * 0x80 (or, in a string body, backslash), then one character by
         * the byte path (the byte loop alone was a sixth of an import on
         * the board) */
        uint32_t in_bit = in ? 0x80u : 0u;
        while (n - i >= 4) {
            uint32_t x;
            memcpy(&x, u + i, sizeof x);
            if (((x & 0x80808080u) | (jstr ? ctxc__word_eq(x, '\\') : 0u)) !=
                0) {
                break;
            }
            uint32_t ge09 = (x + 0x77777777u) & 0x80808080u; /* >= 0x09 */
            uint32_t ge0e = (x + 0x72727272u) & 0x80808080u; /* >= 0x0E */
            uint32_t ws = ctxc__word_eq(x, ' ') | (ge09 & ~ge0e);
            /* run starts: a space byte after a byte that is not one */
            runs += (((ws & ~((ws << 8) | in_bit)) >> 7) * 0x01010101u) >> 24;
            in_bit = (ws >> 24) & 0x80u;
            i += 4;
            ascii += 4;
        }
        in = in_bit != 0;
        if (i >= n) {
            break;
        }
        stop = i + 1;
#else
        stop = n;
#endif
        while (i < stop) {
            uint8_t c = u[i];
            uint32_t cp = c;
            size_t k = 1;
            if (c == '\\' && jstr && i + 1 < n) {
                /* an escape: the character it stands for */
                ctxc__cp_iter_t it = {s, n, i, CTXC__SRC_JSTR};
                if (ctxc__cp_next(&it, &cp, NULL) <= 0) {
                    cp = 0xFFFDu;
                    it.pos = i + 1;
                }
                k = it.pos - i;
            } else if (c >= 0x80u) {
                k = ctxc__utf8_decode(u + i, n - i, &cp);
                if (k == 0) {
                    cp = 0xFFFDu; /* invalid byte: one non-space unit */
                    k = 1;
                }
            }
            if (cp < 0x80u) {
                bool sp = ctxc__is_space_ascii((uint8_t)cp);
                runs += (size_t)(sp && !in);
                in = sp;
                ascii++;
            } else {
                a->units += cp >= 0x10000u ? 2u : 1u;
                bool sp = ctxc__is_space_cp(cp);
                runs += (size_t)(sp && !in);
                in = sp;
            }
            i += k;
        }
    }
#ifdef SWAR
    runs += ctxc__swar_byte_sum(lanes);
    ascii -= ctxc__swar_byte_sum(esc_lanes);
#endif
    a->units += ascii;
    a->runs = runs;
    a->in_space = in;
}

static void acc_utf8(acc_t *a, const char *s, size_t n) {
    acc_text(a, s, n, false);
}

/* Adds s escaped as JSON.stringify writes it inside a string literal. */
static void acc_escaped(acc_t *a, const char *s, size_t n) {
    size_t run = 0;
    for (size_t i = 0; i < n; i++) {
        uint8_t c = (uint8_t)s[i];
        if (c >= 0x20u && c != '"' && c != '\\') {
            continue;
        }
        acc_utf8(a, s + run, i - run);
        char buf[8];
        ctxc__sink_t out = {buf, sizeof buf, 0};
        ctxc__json_escape_cp(&out, c);
        acc_utf8(a, buf, out.len); /* an escape sequence: ASCII */
        run = i + 1;
    }
    acc_utf8(a, s + run, n - run);
}

/* Adds the decoded content of a JSON value when it is a string, else its
 * text. */
static void acc_json_value_text(acc_t *a, ctxc_str_t v) {
    if (v.ptr == NULL) {
        return;
    }
    if (v.len >= 2 && v.ptr[0] == '"') {
        acc_text(a, v.ptr + 1, v.len - 2, true);
        return;
    }
    acc_utf8(a, v.ptr, v.len);
}

static void acc_str(acc_t *a, ctxc_str_t s) {
    if (s.ptr != NULL) {
        acc_utf8(a, s.ptr, s.len);
    }
}

CTXC__NOINLINE static uint64_t acc_words(const acc_t *a) {
    return a->units == 0 ? 0u : a->runs + 1u;
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
    *words = acc_words(&a);
    *utf16_len = a.units;
}

uint32_t ctxc_estimate_text(const char *text, size_t len) {
    uint64_t w, u;
    ctxc_estimate_measure(text, len, &w, &u);
    return ctxc_estimate_formula(w, u);
}

_Static_assert(offsetof(ctxc_block_t, u.text.text) ==
                       offsetof(ctxc_block_t, u.thinking.thought) &&
                   offsetof(ctxc_block_t, u.text.text) ==
                       offsetof(ctxc_block_t, u.code.code),
               "the text of text, thinking and code blocks is in one place");

/* ---- images ---------------------------------------------------------------
 * An image's size is read from the first bytes of its base64 data (PNG,
 * GIF, JPEG, WebP headers); each decoded byte is decoded on its own (a
 * base64 group of 4 characters holds 3 bytes), so a JPEG's frame header is
 * found by jumping over its segments without decoding the rest. */

static int b64_val(char c) {
    return c >= 'A' && c <= 'Z'   ? c - 'A'
           : c >= 'a' && c <= 'z' ? c - 'a' + 26
           : c >= '0' && c <= '9' ? c - '0' + 52
           : c == '+' || c == '-' ? 62
           : c == '/' || c == '_' ? 63
                                  : -1;
}

/* Decoded byte i of base64 text d, or -1 (past the end, not base64). */
static int b64_at(ctxc_str_t d, size_t i) {
    size_t g = i / 3u * 4u, k = i % 3u;
    if (d.ptr == NULL || g + k + 1u >= d.len) {
        return -1;
    }
    int a = b64_val(d.ptr[g + k]), b = b64_val(d.ptr[g + k + 1u]);
    if (a < 0 || b < 0) {
        return -1;
    }
    static const uint8_t sh[3][2] = {{2, 4}, {4, 2}, {6, 0}};
    return ((a << sh[k][0]) | (b >> sh[k][1])) & 0xFF;
}

/* Bytes [i, i + n) of d big-endian (little-endian with le); false when
 * one is missing. */
static bool b64_num(ctxc_str_t d, size_t i, size_t n, bool le, uint32_t *v) {
    uint32_t x = 0;
    for (size_t k = 0; k < n; k++) {
        int c = b64_at(d, le ? i + n - 1u - k : i + k);
        if (c < 0) {
            return false;
        }
        x = x << 8 | (uint32_t)c;
    }
    *v = x;
    return true;
}

static bool b64_is(ctxc_str_t d, size_t i, const char *s) {
    for (size_t k = 0; s[k] != '\0'; k++) {
        if (b64_at(d, i + k) != (uint8_t)s[k]) {
            return false;
        }
    }
    return true;
}

#define JPEG_SEGMENTS_MAX 64u /* segments passed looking for the frame */

bool ctxc_estimate_image_size(const ctxc_block_t *b, uint32_t *w, uint32_t *h) {
    *w = *h = 0;
    if (b == NULL || b->type != CTXC_BLOCK_MEDIA ||
        b->u.media.data.ptr == NULL || b->u.media.encoding.ptr == NULL ||
        b->u.media.encoding.len != 6 ||
        memcmp(b->u.media.encoding.ptr, "base64", 6) != 0) {
        return false;
    }
    ctxc_str_t d = b->u.media.data;
    uint32_t x = 0, y = 0;
    if (b64_is(d, 0, "\x89PNG") && b64_is(d, 12, "IHDR")) {
        if (!b64_num(d, 16, 4, false, &x) || !b64_num(d, 20, 4, false, &y)) {
            return false;
        }
    } else if (b64_is(d, 0, "GIF8")) {
        if (!b64_num(d, 6, 2, true, &x) || !b64_num(d, 8, 2, true, &y)) {
            return false;
        }
    } else if (b64_is(d, 0, "RIFF") && b64_is(d, 8, "WEBP")) {
        uint32_t v;
        if (b64_is(d, 12, "VP8X") && b64_num(d, 24, 3, true, &x) &&
            b64_num(d, 27, 3, true, &y)) {
            x++, y++;
        } else if (b64_is(d, 12, "VP8 ") && b64_num(d, 26, 2, true, &x) &&
                   b64_num(d, 28, 2, true, &y)) {
            x &= 0x3FFFu, y &= 0x3FFFu;
        } else if (b64_is(d, 12, "VP8L") && b64_num(d, 21, 4, true, &v)) {
            x = (v & 0x3FFFu) + 1u;
            y = ((v >> 14) & 0x3FFFu) + 1u;
        } else {
            return false;
        }
    } else if (b64_at(d, 0) == 0xFF && b64_at(d, 1) == 0xD8) {
        size_t i = 2;
        for (unsigned s = 0; s < JPEG_SEGMENTS_MAX; s++) {
            int m0 = b64_at(d, i), m = b64_at(d, i + 1u);
            uint32_t len;
            if (m0 != 0xFF || m < 0 || !b64_num(d, i + 2u, 2, false, &len)) {
                return false;
            }
            bool sof =
                m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC;
            if (sof) {
                if (!b64_num(d, i + 5u, 2, false, &y) ||
                    !b64_num(d, i + 7u, 2, false, &x)) {
                    return false;
                }
                break;
            }
            i += 2u + len;
        }
    } else {
        return false;
    }
    if (x == 0 || y == 0) {
        return false;
    }
    *w = x;
    *h = y;
    return true;
}

/* 32-bit arithmetic (no 64-bit division on small targets): sides are
 * taken at most 65535 pixels, so every product below fits. */
static uint32_t ceil_div(uint32_t a, uint32_t b) { return (a + b - 1u) / b; }

/* (w, h) scaled down (aspect kept) so that neither side passes max. */
static void fit(uint32_t *w, uint32_t *h, uint32_t max) {
    if (*w > max && *w >= *h) {
        *h = *h * max / *w;
        *w = max;
    } else if (*h > max) {
        *w = *w * max / *h;
        *h = max;
    }
    *w += *w == 0u;
    *h += *h == 0u;
}

uint32_t ctxc_estimate_image_tokens(ctxc_image_cost_t rule, uint32_t w,
                                    uint32_t h) {
    static const uint16_t unknown[4] = {
        CTXC_IMAGE_TOKENS_DEFAULT, CTXC_IMAGE_TOKENS_ANTHROPIC,
        CTXC_IMAGE_TOKENS_OPENAI, CTXC_IMAGE_TOKENS_GEMINI};
    if ((unsigned)rule > CTXC_IMAGE_COST_GEMINI) {
        rule = CTXC_IMAGE_COST_DEFAULT;
    }
    if (w == 0 || h == 0) {
        return unknown[rule];
    }
    uint32_t x = w < 65535u ? w : 65535u, y = h < 65535u ? h : 65535u;
    if (rule == CTXC_IMAGE_COST_OPENAI) { /* high detail: 512-pixel tiles */
        fit(&x, &y, 2048u);
        if (x > 768u && y > 768u) { /* the shorter side to 768 */
            if (x < y) {
                y = y * 768u / x, x = 768u;
            } else {
                x = x * 768u / y, y = 768u;
            }
        }
        return 85u + 170u * ceil_div(x, 512u) * ceil_div(y, 512u);
    }
    if (rule == CTXC_IMAGE_COST_GEMINI) { /* 258 a 768-pixel tile */
        return x <= 384u && y <= 384u
                   ? 258u
                   : 258u * ceil_div(x, 768u) * ceil_div(y, 768u);
    }
    fit(&x, &y, 1568u); /* w x h / 750 of the image fitted in 1568 */
    return ceil_div(x * y, 750u);
}

static bool is_image(ctxc_str_t mime) {
    static const char pre[] = "image/";
    if (mime.ptr == NULL || mime.len < sizeof pre - 1u) {
        return false;
    }
    for (size_t i = 0; i < sizeof pre - 1u; i++) {
        char c = mime.ptr[i];
        if ((c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c) != pre[i]) {
            return false;
        }
    }
    return true;
}

uint32_t ctxc_estimate_block_default(void *user, const ctxc_block_t *b) {
    (void)user;
    return ctxc_estimate_block_for(NULL, b);
}

uint32_t ctxc_estimate_block_for(void *user, const ctxc_block_t *b) {
    acc_t a = {0, 0, false};
    uint32_t image = 0;
    switch (b->type) {
    case CTXC_BLOCK_TOOL_CALL:
        acc_utf8(&a, "{\"name\":\"", 9);
        if (b->u.tool_call.name.ptr != NULL) {
            acc_escaped(&a, b->u.tool_call.name.ptr, b->u.tool_call.name.len);
        }
        acc_utf8(&a, "\",\"parameters\":", 15);
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
    case CTXC_BLOCK_MEDIA:
        acc_str(&a, b->u.media.caption);
        if (is_image(b->u.media.mime_type)) {
            uint32_t w, h;
            (void)ctxc_estimate_image_size(b, &w, &h);
            image = ctxc_estimate_image_tokens(
                user != NULL ? *(const ctxc_image_cost_t *)user
                             : CTXC_IMAGE_COST_DEFAULT,
                w, h);
        }
        break;
    case CTXC_BLOCK_TEXT:
    case CTXC_BLOCK_THINKING:
    case CTXC_BLOCK_CODE: /* the text: their first field, in one place */
        acc_str(&a, b->u.text.text);
        break;
    default:
        break;
    }
    uint32_t t = ctxc_estimate_formula(acc_words(&a), a.units);
    return t > UINT32_MAX - image ? UINT32_MAX : t + image;
}

/* UTF-16 units the default estimator counts at least for a field of n
 * bytes: a code point takes at most 3 bytes per unit in UTF-8 (4 bytes for
 * 2 units, invalid bytes 1 each), at most 6 in a JSON string body (\uXXXX
 * for 1 unit). */
static uint64_t units_floor(ctxc_str_t s, bool json) {
    if (s.ptr == NULL) {
        return 0;
    }
    if (json && s.len >= 2 && s.ptr[0] == '"') {
        return (s.len - 2 + 5) / 6;
    }
    return (s.len + 2) / 3;
}

uint32_t ctxc__estimate_value_floor(ctxc_str_t v) {
    uint64_t r = (units_floor(v, true) + 2u) / 4u;
    return r > UINT32_MAX ? UINT32_MAX : (uint32_t)r;
}

bool ctxc__estimate_result_smaller(const ctxc_block_t *b, ctxc_str_t result) {
    /* an empty result: any other one only adds text after the error, which
     * takes neither words nor units away (the error is not read) */
    ctxc_str_t old = b->u.tool_response.result;
    if (old.ptr == NULL || old.len == 0 ||
        (old.len == 2 && old.ptr[0] == '"' && old.ptr[1] == '"')) {
        return false;
    }
    /* the text both blocks start with: the error and its newline */
    acc_t head = {0, 0, false};
    if (b->u.tool_response.error.ptr != NULL) {
        acc_str(&head, b->u.tool_response.error);
        acc_cp(&head, '\n');
    }
    acc_t with = head;
    acc_json_value_text(&with, result);
    uint32_t t_with = ctxc_estimate_formula(acc_words(&with), with.units);
#ifdef CTXC__HOST_FAST
    uint64_t floor_units =
        head.units + units_floor(b->u.tool_response.result, true);
    if ((floor_units + 2u) / 4u > t_with) {
        return true; /* the block's length alone puts it above */
    }
#endif
    acc_json_value_text(&head, b->u.tool_response.result);
    return t_with < ctxc_estimate_formula(acc_words(&head), head.units);
}
