/*
 * Token estimation: exact values of round(max(words * 1.3, utf16_len / 4))
 * on examples (ASCII, non-ASCII, surrogate pairs, unicode whitespace) and the
 * per-block text rules. words = text.split(/\s+/).length for non-empty text
 * (leading and trailing whitespace each add an empty piece), 0 for "".
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/text_stats.h"
#include "ctxc/ctxc.h"

static uint32_t est(const char *s) { return ctxc_estimate_text(s, strlen(s)); }

static void measure(const char *s, uint64_t words, uint64_t units) {
    uint64_t w, u;
    ctxc_estimate_measure(s, strlen(s), &w, &u);
    assert_int_equal(w, words);
    assert_int_equal(u, units);
}

static void test_exact_values_ascii(void **state) {
    (void)state;
    assert_int_equal(est(""), 0);
    assert_int_equal(est("   "), 3);         /* ["", ""]: 2.6 -> 3 */
    assert_int_equal(est("hello"), 1);       /* 1.3 -> 1, 1.25 -> 1 */
    assert_int_equal(est("hello world"), 3); /* 2.6 -> 3, 2.75 -> 3 */
    assert_int_equal(est("a b c d e"), 7);   /* 6.5 -> 7 (half up) */
    assert_int_equal(est("ab"), 1);          /* 1.3 -> 1, 0.5 -> 1 */
    assert_int_equal(est("abcdefghijklmnopqrstuvwxyz"),
                     7);                                   /* 26/4 = 6.5 -> 7 */
    assert_int_equal(est("abcdefghijklmnopqrstuvwxy"), 6); /* 6.25 -> 6 */
    /* ["", "leading", "and", "trailing", ""]: 6.5 -> 7, 24/4 = 6 */
    assert_int_equal(est("  leading and trailing  "), 7);
    assert_int_equal(est("one\ttwo\nthree\r\nfour\vfive\fsix"),
                     8); /* 7.8 -> 8 */
    measure("  a  b  ", 4, 8);
}

/* The examples of the rule: JavaScript's text.split(/\s+/).length. */
static void test_words_are_split_pieces(void **state) {
    (void)state;
    measure("done\n", 2, 5); /* ["done", ""] */
    assert_int_equal(est("done\n"), 3);
    measure(" ", 2, 1); /* ["", ""] */
    assert_int_equal(est(" "), 3);
    measure("c d\n", 3, 4); /* ["c", "d", ""] */
    assert_int_equal(est("c d\n"), 4);
    measure("", 0, 0);
    assert_int_equal(est(""), 0);
    measure("a", 1, 1);
    measure("\n\n\t ", 2, 4);               /* one run */
    measure("\xc2\xa0x\xe3\x80\x80", 3, 3); /* NBSP, IDEOGRAPHIC SPACE */
    measure("\xef\xbb\xbf", 2, 1);          /* BOM alone */
}

static void test_exact_values_non_ascii(void **state) {
    (void)state;
    /* é is one UTF-16 unit (2 UTF-8 bytes) */
    measure("h\xc3\xa9llo w\xc3\xb6rld", 2, 11);
    assert_int_equal(est("h\xc3\xa9llo w\xc3\xb6rld"), 3);
    /* 8 BMP CJK characters, no spaces: 1 word, 8 units -> 2 */
    measure("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3\x83\x86\xe3"
            "\x82\xad\xe3\x82\xb9\xe3\x83\x88",
            1, 8);
    assert_int_equal(est("\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e\xe3\x81\xae\xe3"
                         "\x83\x86\xe3\x82\xad\xe3\x82\xb9\xe3\x83\x88"),
                     2);
    /* U+1F600 needs a surrogate pair: 2 units */
    measure("\xf0\x9f\x98\x80", 1, 2);
    assert_int_equal(est("\xf0\x9f\x98\x80"), 1); /* 1.3 -> 1, 0.5 -> 1 */
    /* six emoji: 12 units -> 3 */
    assert_int_equal(est("\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80\xf0"
                         "\x9f\x98\x80\xf0\x9f\x98\x80\xf0\x9f\x98\x80"),
                     3);
    /* 14 emoji: 28 units -> 7 */
    char many[14 * 4 + 1];
    for (int i = 0; i < 14; i++) {
        memcpy(many + 4 * i, "\xf0\x9f\x98\x80", 4);
    }
    many[56] = '\0';
    measure(many, 1, 28);
    assert_int_equal(est(many), 7);
}

static void test_unicode_whitespace_separates_words(void **state) {
    (void)state;
    measure("a\xc2\xa0"
            "b",
            2, 3); /* NO-BREAK SPACE */
    measure("a\xe3\x80\x80"
            "b",
            2, 3); /* IDEOGRAPHIC SPACE */
    measure("a\xe2\x80\xa8"
            "b",
            2, 3); /* LINE SEPARATOR */
    measure("a\xef\xbb\xbf"
            "b",
            2, 3); /* BOM / ZWNBSP */
    measure("a\xe2\x80\x8b"
            "b",
            1, 3); /* ZERO WIDTH SPACE is not \s */
    measure("a\xe2\x80\x8a"
            "b\xe2\x80\x80"
            "c",
            3, 5); /* HAIR, EN QUAD */
}

static void test_integer_formula_matches_floating_point(void **state) {
    (void)state;
    for (uint64_t w = 0; w < 1500; w += 1) {
        for (uint64_t u = 0; u < 1500; u += 7) {
            double a = (double)w * 1.3;
            double b = (double)u / 4.0;
            double x = a > b ? a : b;
            uint32_t js = (uint32_t)floor(x + 0.5); /* Math.round */
            assert_int_equal(ctxc_estimate_formula(w, u), js);
        }
    }
    assert_int_equal(ctxc_estimate_formula(5, 0), 7);
    assert_int_equal(ctxc_estimate_formula(0, 2), 1);
    assert_int_equal(ctxc_estimate_formula(0, 1), 0);
}

static uint32_t block_est(const ctxc_block_t *b) {
    return ctxc_estimate_block_default(NULL, b);
}

static void test_block_text_rules(void **state) {
    (void)state;
    ctxc_block_t b;
    memset(&b, 0, sizeof b);

    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str("a b c d e");
    assert_int_equal(block_est(&b), 7);
    b.u.text.text = ctxc_str("done\n");
    assert_int_equal(block_est(&b), 3);
    b.u.text.text = ctxc_str("");
    assert_int_equal(block_est(&b), 0);

    /* tool_call: compact {"name":...,"parameters":...} */
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TOOL_CALL;
    b.u.tool_call.id = ctxc_str("c1");
    b.u.tool_call.name = ctxc_str("read_file");
    b.u.tool_call.parameters = ctxc_str("{\"file_path\":\"/src/a b.c\"}");
    assert_int_equal(
        block_est(&b),
        est("{\"name\":\"read_file\",\"parameters\":{\"file_path\":"
            "\"/src/a b.c\"}}"));
    assert_int_equal(block_est(&b), 15); /* 2 words -> 3, 58 units -> 15 */
    /* the name is JSON-escaped in that text */
    b.u.tool_call.name = ctxc_str("we\"ird\tname");
    assert_int_equal(block_est(&b),
                     est("{\"name\":\"we\\\"ird\\tname\",\"parameters\":{"
                         "\"file_path\":\"/src/a b.c\"}}"));

    /* tool_response: error + "\n" + result; string results are decoded */
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TOOL_RESPONSE;
    b.u.tool_response.call_id = ctxc_str("c1");
    b.u.tool_response.tool_name = ctxc_str("run");
    b.u.tool_response.result = ctxc_str("\"line one\\nline two\"");
    assert_int_equal(block_est(&b), est("line one\nline two"));
    assert_int_equal(block_est(&b), 5); /* 4 words -> 5.2 -> 5 */
    b.u.tool_response.error = ctxc_str("exit status 2");
    assert_int_equal(block_est(&b), est("exit status 2\nline one\nline two"));
    b.u.tool_response.result = ctxc_str("{\"files\":[\"a\",\"b\"],\"n\":2}");
    b.u.tool_response.error = CTXC_STR_ABSENT;
    assert_int_equal(block_est(&b), est("{\"files\":[\"a\",\"b\"],\"n\":2}"));
    b.u.tool_response.result = ctxc_str("\"\\ud83d\\ude00 ok\"");
    assert_int_equal(block_est(&b), est("\xf0\x9f\x98\x80 ok"));

    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_THINKING;
    b.u.thinking.thought = ctxc_str("let me think about this");
    b.u.thinking.signature =
        ctxc_str("very long signature that does not count");
    assert_int_equal(block_est(&b), est("let me think about this"));

    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_CODE;
    b.u.code.code = ctxc_str("int main(void) { return 0; }");
    b.u.code.language = ctxc_str("c");
    assert_int_equal(block_est(&b), est("int main(void) { return 0; }"));

    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_MEDIA;
    b.u.media.mime_type = ctxc_str("image/png");
    b.u.media.data =
        ctxc_str("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAA");
    b.u.media.encoding = ctxc_str("base64");
    /* a 1 x 1 PNG: 1 token for the image (issue 41), no caption */
    assert_int_equal(block_est(&b), 1);
    b.u.media.caption = ctxc_str("a diagram of the board");
    assert_int_equal(block_est(&b), 1 + est("a diagram of the board"));
}

/* A tool_response whose result is a JSON string counts the decoded string:
 * escapes at every offset of the 8-byte steps, escaped backslashes, \u
 * escapes (BMP and surrogate pairs), runs of escaped whitespace. */
static void test_string_result_counts_like_its_decoded_text(void **state) {
    (void)state;
    static const struct {
        const char *json; /* body of the JSON string */
        const char *text; /* its content */
    } pieces[] = {
        {"word", "word"},
        {" ", " "},
        {"\\n", "\n"},
        {"\\t", "\t"},
        {"\\r\\n", "\r\n"},
        {"\\f", "\f"},
        {"\\b", "\b"},
        {"\\\"", "\""},
        {"\\\\", "\\"},
        {"\\\\n", "\\n"},
        {"\\u00e9", "\xc3\xa9"},
        {"\\u0001", "\x01"},
        {"\\ud83d\\ude00", "\xf0\x9f\x98\x80"},
        {"\xe3\x80\x80", "\xe3\x80\x80"},
        {"ab cd", "ab cd"},
    };
    const size_t np = sizeof pieces / sizeof pieces[0];
    static char json[4096], text[4096];
    for (size_t seed = 0; seed < 400; seed++) {
        size_t jn = 0, tn = 0;
        json[jn++] = '"';
        size_t r = seed * 2654435761u;
        for (size_t k = 0; k < 3 + seed % 40; k++) {
            r = r * 6364136223846793005u + 1442695040888963407u;
            size_t pick = (size_t)(r >> 33) % np;
            size_t a = strlen(pieces[pick].json), b = strlen(pieces[pick].text);
            memcpy(json + jn, pieces[pick].json, a);
            memcpy(text + tn, pieces[pick].text, b);
            jn += a;
            tn += b;
        }
        json[jn++] = '"';
        ctxc_block_t blk;
        memset(&blk, 0, sizeof blk);
        blk.type = CTXC_BLOCK_TOOL_RESPONSE;
        blk.u.tool_response.call_id = ctxc_str("c");
        blk.u.tool_response.tool_name = ctxc_str("t");
        blk.u.tool_response.result = (ctxc_str_t){json, jn};
        uint64_t w, u;
        ctxc_estimate_measure(text, tn, &w, &u);
        if (block_est(&blk) != ctxc_estimate_formula(w, u)) {
            fail_msg("seed %zu: %.*s", seed, (int)jn, json);
        }
        /* the same text as a text block */
        blk.type = CTXC_BLOCK_TEXT;
        blk.u.text.text = (ctxc_str_t){text, tn};
        assert_int_equal(block_est(&blk), ctxc_estimate_formula(w, u));
    }
}

/* Fills buf with `reps` copies of unit and returns the length. */
static size_t repeat(char *buf, size_t cap, const char *unit, size_t reps) {
    size_t n = strlen(unit), len = 0;
    for (size_t i = 0; i < reps && len + n < cap; i++) {
        memcpy(buf + len, unit, n);
        len += n;
    }
    buf[len] = '\0';
    return len;
}

/* Whether another result makes a tool_response smaller is what the two
 * blocks' estimates say, whatever bytes make up the old result (down to the
 * densest encodings of a unit: 4-byte UTF-8 for 2 units, \uXXXX for 1),
 * with or without an error, long or short. */
static void test_result_smaller_agrees_with_the_estimates(void **state) {
    (void)state;
    static const char *const json_units[] = {
        "x",    "\\n",          "\\u00e9",          "\\ud83d\\ude00",
        "\\\\", "\xe2\x82\xac", "\xf0\x9f\x98\x80", " ",
        "a b "};
    static const char *const errors[] = {NULL, "", "failed",
                                         "\xf0\x9f\x98\x80 a b c d e f g"};
    static const char *const news[] = {
        "\"[Result pruned \xe2\x80\x94 re-run tool to retrieve]\"", "\"\"",
        "{\"a\":[1,2,3]}", "\"a b c d e f g h i j k l m n o p\""};
    static char json[8192];
    size_t agree = 0, smaller = 0;
    for (size_t u = 0; u < sizeof json_units / sizeof json_units[0]; u++) {
        for (size_t reps = 0; reps < 700; reps += 23) {
            json[0] = '"';
            size_t n = repeat(json + 1, sizeof json - 2, json_units[u], reps);
            json[n + 1] = '"';
            for (size_t e = 0; e < sizeof errors / sizeof errors[0]; e++) {
                for (size_t r = 0; r < sizeof news / sizeof news[0]; r++) {
                    ctxc_block_t b;
                    memset(&b, 0, sizeof b);
                    b.type = CTXC_BLOCK_TOOL_RESPONSE;
                    b.u.tool_response.call_id = ctxc_str("c1");
                    b.u.tool_response.tool_name = ctxc_str("t");
                    b.u.tool_response.result = (ctxc_str_t){json, n + 2};
                    b.u.tool_response.error = errors[e] != NULL
                                                  ? ctxc_str(errors[e])
                                                  : CTXC_STR_ABSENT;
                    ctxc_block_t after = b;
                    after.u.tool_response.result = ctxc_str(news[r]);
                    bool want = ctxc_estimate_block_default(NULL, &after) <
                                ctxc_estimate_block_default(NULL, &b);
                    if (errors[e] == NULL) { /* the floor of the result */
                        assert_true(ctxc__estimate_value_floor(
                                        b.u.tool_response.result) <=
                                    ctxc_estimate_block_default(NULL, &b));
                        assert_true(
                            ctxc__estimate_value_floor(ctxc_str(news[r])) <=
                            ctxc_estimate_block_default(NULL, &after));
                    }
                    assert_int_equal(
                        ctxc__estimate_result_smaller(&b, ctxc_str(news[r])),
                        want);
                    agree++;
                    smaller += want;
                }
            }
        }
    }
    assert_true(smaller > 0 && smaller < agree); /* both answers seen */
    /* 6000 letters in a string: 1500 tokens by length, the floor 250 */
    json[0] = '"';
    size_t n = repeat(json + 1, sizeof json - 2, "x", 6000);
    json[n + 1] = '"';
    assert_int_equal(ctxc__estimate_value_floor((ctxc_str_t){json, n + 2}),
                     250);
}

static void test_entry_estimate_is_the_sum_of_blocks(void **state) {
    (void)state;
    CTXC_HISTORY_DEFINE(h, 4, 1024);
    ctxc_block_t b[2];
    memset(b, 0, sizeof b);
    b[0].type = CTXC_BLOCK_TEXT;
    b[0].u.text.text = ctxc_str("a b c d e");
    b[1].type = CTXC_BLOCK_TEXT;
    b[1].u.text.text = ctxc_str("hello world");
    ctxc_entry_in_t in = {CTXC_SPEAKER_AI, b, 2, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_append(&h, &in, NULL), CTXC_OK);
    ctxc_entry_t e;
    ctxc_history_get(&h, 0, &e);
    assert_int_equal(e.tokens, 10);
    assert_int_equal(ctxc_history_tokens(&h), 10);
}

/* Random texts of words, whitespace runs (ASCII and unicode) and
 * non-ASCII characters, long enough for the wide paths and at every
 * alignment: words and UTF-16 units are what a count piece by piece gives,
 * and a JSON string result holding the same text (with escapes) counts
 * like the text. */
static void test_random_texts_count_like_their_pieces(void **state) {
    (void)state;
    static const struct {
        const char *text;    /* the piece */
        const char *escaped; /* as a JSON string body */
        unsigned units;
        bool space;
    } piece[] = {
        {" ", " ", 1, true},
        {"    ", "    ", 4, true},
        {"\t\n", "\\t\\n", 2, true},
        {"\r\f\v", "\\r\\f\\u000b", 3, true},
        {"\xc2\xa0", "\xc2\xa0", 1, true},    /* U+00A0 */
        {"\xe2\x80\x83", "\\u2003", 1, true}, /* U+2003 */
        {"w", "w", 1, false},
        {"words", "words", 5, false},
        {"0123456789abcdefghijklmnop", "0123456789abcdefghijklmnop", 26, false},
        {"\"q\\", "\\\"q\\\\", 3, false},
        {"\xc3\xa9", "\xc3\xa9", 1, false},                 /* e acute */
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80", 2, false}, /* 2 units */
    };
    const size_t npiece = sizeof piece / sizeof piece[0];
    uint32_t seed = 5;
    for (int trial = 0; trial < 4000; trial++) {
        char text[1200], json[1200];
        size_t tn = 0, jn = 0;
        uint64_t units = 0, runs = 0;
        bool in = false;
        json[jn++] = '"';
        seed = seed * 1103515245u + 12345u;
        size_t pieces = (seed >> 8) % 40;
        for (size_t i = 0; i < pieces; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t k = (seed >> 8) % npiece;
            size_t tl = strlen(piece[k].text), el = strlen(piece[k].escaped);
            memcpy(text + tn, piece[k].text, tl);
            tn += tl;
            memcpy(json + jn, piece[k].escaped, el);
            jn += el;
            units += piece[k].units;
            runs += piece[k].space && !in;
            in = piece[k].space;
        }
        json[jn++] = '"';
        uint64_t w, u;
        ctxc_estimate_measure(text, tn, &w, &u);
        assert_int_equal(u, units);
        assert_int_equal(w, units == 0 ? 0 : runs + 1);
        ctxc_block_t b;
        memset(&b, 0, sizeof b);
        b.type = CTXC_BLOCK_TOOL_RESPONSE;
        b.u.tool_response.result.ptr = json;
        b.u.tool_response.result.len = jn;
        assert_int_equal(block_est(&b), ctxc_estimate_formula(w, u));
    }
}

/* ---- issue 41: images cost their size --------------------------------- */

static char b64buf[4][256];

/* base64 of n bytes into one of four buffers */
static const char *b64(const uint8_t *p, size_t n) {
    static const char A[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    static unsigned k;
    char *o = b64buf[k++ % 4];
    size_t j = 0;
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)p[i] << 16;
        v |= i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0;
        v |= i + 2 < n ? p[i + 2] : 0;
        o[j++] = A[v >> 18 & 63];
        o[j++] = A[v >> 12 & 63];
        o[j++] = i + 1 < n ? A[v >> 6 & 63] : '=';
        o[j++] = i + 2 < n ? A[v & 63] : '=';
    }
    o[j] = '\0';
    return o;
}

static ctxc_block_t image(const char *mime, const char *data) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_MEDIA;
    b.u.media.mime_type = ctxc_str(mime);
    b.u.media.data = ctxc_str(data);
    b.u.media.encoding = ctxc_str("base64");
    return b;
}

static const char *png(uint32_t w, uint32_t h) {
    uint8_t p[33] = {0x89, 'P', 'N', 'G', 13,  10,  26,  10,
                     0,    0,   0,   13,  'I', 'H', 'D', 'R'};
    for (int i = 0; i < 4; i++) {
        p[16 + i] = (uint8_t)(w >> (24 - 8 * i));
        p[20 + i] = (uint8_t)(h >> (24 - 8 * i));
    }
    return b64(p, sizeof p);
}

static void test_images_cost_their_size(void **state) {
    (void)state;
    uint32_t w, h;
    /* PNG */
    ctxc_block_t b = image("image/png", png(800, 600));
    assert_true(ctxc_estimate_image_size(&b, &w, &h));
    assert_int_equal(w, 800);
    assert_int_equal(h, 600);
    assert_int_equal(block_est(&b), 640); /* 800 x 600 / 750 */
    /* larger than 1568: fitted first (1568 x 784) */
    b = image("image/png", png(3136, 1568));
    assert_int_equal(block_est(&b), 1640);
    /* GIF, little-endian sizes */
    static const uint8_t gif[] = {'G', 'I', 'F', '8', '9', 'a', 100, 0, 50, 0};
    b = image("image/gif", b64(gif, sizeof gif));
    assert_int_equal(block_est(&b), 7);
    /* JPEG: an APP0 segment, then the frame (SOF0) 1024 x 768 */
    static const uint8_t jpg[] = {0xFF, 0xD8, 0xFF, 0xE0, 0, 6,  'J', 'F',
                                  'I',  'F',  0xFF, 0xC0, 0, 17, 8,   3,
                                  0,    4,    0,    3,    0, 0,  0,   0};
    b = image("image/jpeg", b64(jpg, sizeof jpg));
    assert_true(ctxc_estimate_image_size(&b, &w, &h));
    assert_int_equal(w, 1024);
    assert_int_equal(h, 768);
    assert_int_equal(block_est(&b), 1049);
    /* WebP (VP8X: sizes minus one, 24 bits) 400 x 300 */
    static const uint8_t webp[] = {
        'R', 'I', 'F', 'F', 0, 0, 0, 0, 'W', 'E',  'B', 'P', 'V',  'P', '8',
        'X', 10,  0,   0,   0, 0, 0, 0, 0,   0x8F, 1,   0,   0x2B, 1,   0};
    b = image("image/webp", b64(webp, sizeof webp));
    assert_int_equal(block_est(&b), 160);
    /* unknown size: the rule's default; a caption adds its words */
    b = image("image/png", "aGVsbG8=");
    assert_false(ctxc_estimate_image_size(&b, &w, &h));
    assert_int_equal(block_est(&b), CTXC_IMAGE_TOKENS_DEFAULT);
    b.u.media.caption = ctxc_str("the board");
    assert_int_equal(block_est(&b),
                     CTXC_IMAGE_TOKENS_DEFAULT + est("the board"));
    /* not an image: the caption only */
    b = image("application/pdf", png(800, 600));
    assert_int_equal(block_est(&b), 0);
    /* per provider */
    ctxc_image_cost_t rule = CTXC_IMAGE_COST_ANTHROPIC;
    b = image("image/png", "aGVsbG8=");
    assert_int_equal(ctxc_estimate_block_for(&rule, &b), 1600);
    rule = CTXC_IMAGE_COST_OPENAI;
    assert_int_equal(ctxc_estimate_block_for(&rule, &b), 765);
    b = image("image/png", png(1024, 1024)); /* 768 x 768: 4 tiles */
    assert_int_equal(ctxc_estimate_block_for(&rule, &b), 765);
    b = image("image/png", png(512, 512)); /* 1 tile */
    assert_int_equal(ctxc_estimate_block_for(&rule, &b), 255);
    rule = CTXC_IMAGE_COST_GEMINI;
    b = image("image/png", png(300, 300));
    assert_int_equal(ctxc_estimate_block_for(&rule, &b), 258);
    b = image("image/png", png(1000, 1000));
    assert_int_equal(ctxc_estimate_block_for(&rule, &b), 1032);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_values_ascii),
        cmocka_unit_test(test_images_cost_their_size),
        cmocka_unit_test(test_exact_values_non_ascii),
        cmocka_unit_test(test_unicode_whitespace_separates_words),
        cmocka_unit_test(test_words_are_split_pieces),
        cmocka_unit_test(test_integer_formula_matches_floating_point),
        cmocka_unit_test(test_block_text_rules),
        cmocka_unit_test(test_string_result_counts_like_its_decoded_text),
        cmocka_unit_test(test_entry_estimate_is_the_sum_of_blocks),
        cmocka_unit_test(test_result_smaller_agrees_with_the_estimates),
        cmocka_unit_test(test_random_texts_count_like_their_pieces),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
