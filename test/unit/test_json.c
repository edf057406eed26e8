/*
 * JSON primitives (src/json.c): canonical form, escapes, UTF-8 validation,
 * surrogates, numbers, depth limit, key lookup.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/json.h"
#include "../../src/json_tok.h"
#include "ctxc/ctxc.h"

static char out[4096];
static ctxc_error_t err;

static ctxc_status_t canon_kind(const char *in, size_t len,
                                ctxc__src_kind_t kind, unsigned depth) {
    ctxc__sink_t s = {out, sizeof out - 1, 0};
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc__json_canon(in, len, kind, depth, &s, &err);
    assert_true(s.len < sizeof out);
    out[s.len] = '\0';
    if (st == CTXC_OK && kind == CTXC__SRC_RAW) {
        /* measuring gives the same length */
        ctxc__sink_t m = {NULL, 0, 0};
        assert_int_equal(ctxc__json_canon(in, len, kind, depth, &m, NULL),
                         CTXC_OK);
        assert_int_equal(m.len, s.len);
    }
    return st;
}

static ctxc_status_t canon(const char *in) {
    return canon_kind(in, strlen(in), CTXC__SRC_RAW, 32);
}

static void assert_canon(const char *in, const char *expected) {
    assert_int_equal(canon(in), CTXC_OK);
    assert_string_equal(out, expected);
    /* canonical form is a fixed point */
    char again[4096];
    strcpy(again, out);
    assert_int_equal(canon(again), CTXC_OK);
    assert_string_equal(out, again);
}

static void assert_rejected(const char *in, ctxc_status_t st, const char *msg) {
    assert_int_equal(canon(in), st);
    if (msg != NULL && strstr(err.message, msg) == NULL) {
        fail_msg("message '%s' lacks '%s'", err.message, msg);
    }
}

static void test_whitespace_and_structure(void **state) {
    (void)state;
    assert_canon(" { \"a\" : [ 1 , 2 , { } , [ ] ] ,\n\t\"b\" : null } ",
                 "{\"a\":[1,2,{},[]],\"b\":null}");
    assert_canon("\"just a string\"", "\"just a string\"");
    assert_canon("true", "true");
    assert_canon("[false,null]", "[false,null]");
    /* key order is kept, duplicate keys are kept */
    assert_canon("{\"z\":1,\"a\":2,\"z\":3}", "{\"z\":1,\"a\":2,\"z\":3}");
}

static void test_escapes_are_written_like_json_stringify(void **state) {
    (void)state;
    assert_canon("\"a\\/b\"", "\"a/b\"");
    assert_canon("\"\\u0041\\u00e9\\u00E9\"", "\"A\xc3\xa9\xc3\xa9\"");
    assert_canon("\"\\u001F\\u0000\\u007f\"", "\"\\u001f\\u0000\x7f\"");
    assert_canon("\"\\b\\f\\n\\r\\t\\\"\\\\\"", "\"\\b\\f\\n\\r\\t\\\"\\\\\"");
    assert_canon("\"\\u0008\\u000a\"", "\"\\b\\n\"");
    assert_canon("\"\\ud83d\\ude00\"", "\"\xf0\x9f\x98\x80\"");
    assert_canon("\"\\u2028\"", "\"\xe2\x80\xa8\"");      /* literal, like JS */
    assert_canon("\"caf\xc3\xa9 \xe6\x97\xa5\"", "\"caf\xc3\xa9 \xe6\x97\xa5\"");
}

static void test_numbers_are_kept_as_written(void **state) {
    (void)state;
    assert_canon("[0,-0,1.50,1e10,1E+2,-3.25e-7,123456789012345678901234567890]",
                 "[0,-0,1.50,1e10,1E+2,-3.25e-7,123456789012345678901234567890]");
    assert_rejected("01", CTXC_E_PARSE, "leading zero");
    assert_rejected("1.", CTXC_E_PARSE, "decimal point");
    assert_rejected(".5", CTXC_E_PARSE, "value expected");
    assert_rejected("-", CTXC_E_PARSE, "digit expected");
    assert_rejected("1e", CTXC_E_PARSE, "exponent");
    assert_rejected("+1", CTXC_E_PARSE, "value expected");
}

static void test_syntax_errors(void **state) {
    (void)state;
    assert_rejected("", CTXC_E_PARSE, "empty input");
    assert_rejected("{\"a\" 1}", CTXC_E_PARSE, "':' expected");
    assert_rejected("{\"a\":1,}", CTXC_E_PARSE, "string key expected");
    assert_rejected("[1,]", CTXC_E_PARSE, "value expected");
    assert_rejected("[1 2]", CTXC_E_PARSE, "',' or ']' expected");
    assert_rejected("{1:2}", CTXC_E_PARSE, "string key expected");
    assert_rejected("{\"a\":1} x", CTXC_E_PARSE, "after the JSON value");
    assert_rejected("{\"a\":1", CTXC_E_PARSE, "unexpected end");
    assert_rejected("tru", CTXC_E_PARSE, "literal");
    assert_rejected("nulll", CTXC_E_PARSE, "after the JSON value");
    assert_rejected("\"abc", CTXC_E_PARSE, "unterminated");
    assert_rejected("\"a\tb\"", CTXC_E_PARSE, "control character");
    assert_rejected("\"\\x\"", CTXC_E_PARSE, "unknown escape");
    assert_rejected("\"\\u12G4\"", CTXC_E_PARSE, "\\u escape");
    assert_rejected("'single'", CTXC_E_PARSE, "value expected");
    /* the position is reported */
    assert_rejected("{\"a\":1,\"b\" 2}", CTXC_E_PARSE, "byte 12");
}

static void test_utf8_and_surrogates(void **state) {
    (void)state;
    assert_rejected("\"\\ud800\"", CTXC_E_UTF8, "lone high surrogate");
    assert_rejected("\"\\ud800x\"", CTXC_E_UTF8, "lone high surrogate");
    assert_rejected("\"\\ud800\\u0041\"", CTXC_E_UTF8, "lone high surrogate");
    assert_rejected("\"\\udc00\"", CTXC_E_UTF8, "lone low surrogate");
    assert_rejected("\"\xff\"", CTXC_E_UTF8, "invalid UTF-8");
    assert_rejected("\"\xc0\x80\"", CTXC_E_UTF8, "invalid UTF-8");     /* overlong */
    assert_rejected("\"\xed\xa0\x80\"", CTXC_E_UTF8, "invalid UTF-8"); /* surrogate */
    assert_rejected("\"\xf4\x90\x80\x80\"", CTXC_E_UTF8, NULL);        /* > 10FFFF */
    assert_rejected("\"\xe6\x97\"", CTXC_E_UTF8, NULL);                /* truncated */

    size_t bad = 99;
    assert_true(ctxc__utf8_valid("ok \xc3\xa9", 5, &bad));
    assert_false(ctxc__utf8_valid("ok \xc3", 4, &bad));
    assert_int_equal(bad, 3);
    uint32_t cps[] = {0x41, 0xE9, 0x7FF, 0x800, 0xFFFF, 0x10000, 0x10FFFF};
    for (size_t i = 0; i < sizeof cps / sizeof cps[0]; i++) {
        char b[4];
        uint32_t back = 0;
        size_t n = ctxc__utf8_encode(cps[i], b);
        assert_int_equal(ctxc__utf8_decode((const uint8_t *)b, n, &back), n);
        assert_int_equal(back, cps[i]);
    }
}

static void test_depth_limit(void **state) {
    (void)state;
    char deep[200];
    for (unsigned limit = 1; limit < 40; limit += 7) {
        size_t n = 0;
        for (unsigned i = 0; i < limit; i++) {
            deep[n++] = '[';
        }
        for (unsigned i = 0; i < limit; i++) {
            deep[n++] = ']';
        }
        assert_int_equal(canon_kind(deep, n, CTXC__SRC_RAW, limit), CTXC_OK);
        assert_int_equal(canon_kind(deep, n, CTXC__SRC_RAW, limit - 1),
                         CTXC_E_TOO_DEEP);
        assert_non_null(strstr(err.message, "deeper than"));
    }
    assert_int_equal(canon_kind("{\"a\":{\"b\":[1]}}", 15, CTXC__SRC_RAW, 3),
                     CTXC_OK);
    assert_int_equal(canon_kind("{\"a\":{\"b\":[1]}}", 15, CTXC__SRC_RAW, 2),
                     CTXC_E_TOO_DEEP);
}

static void test_json_inside_a_string_source(void **state) {
    (void)state;
    /* the body of "{\"path\": \"a\\\\b\"}" holds the JSON {"path": "a\\b"} */
    const char *body = "{\\\"path\\\": \\\"a\\\\\\\\b\\\"}";
    assert_int_equal(canon_kind(body, strlen(body), CTXC__SRC_JSTR, 32), CTXC_OK);
    assert_string_equal(out, "{\"path\":\"a\\\\b\"}");
    const char *bad = "{\\\"path\\\" 1}";
    assert_int_equal(canon_kind(bad, strlen(bad), CTXC__SRC_JSTR, 32),
                     CTXC_E_PARSE);
}

static void test_string_writers_and_compare(void **state) {
    (void)state;
    char buf[64];
    ctxc__sink_t s = {buf, sizeof buf, 0};
    assert_int_equal(ctxc__json_write_string(&s, "a\"b\n\x01\xc3\xa9", 7,
                                             CTXC__SRC_RAW, NULL),
                     CTXC_OK);
    assert_int_equal(s.len, strlen("\"a\\\"b\\n\\u0001\xc3\xa9\""));
    assert_memory_equal(buf, "\"a\\\"b\\n\\u0001\xc3\xa9\"", s.len);

    s.len = 0;
    assert_int_equal(ctxc__write_decoded(&s, "x\\u00e9\\n", 9, CTXC__SRC_JSTR,
                                         NULL),
                     CTXC_OK);
    assert_int_equal(s.len, 4);
    assert_memory_equal(buf, "x\xc3\xa9\n", 4);
    s.len = 0;
    assert_int_equal(ctxc__write_decoded(&s, "\xff", 1, CTXC__SRC_RAW, &err),
                     CTXC_E_UTF8);

    assert_true(ctxc__src_equals("sp\\u0065aker", 12, CTXC__SRC_JSTR,
                                 "speaker", 7));
    assert_false(ctxc__src_equals("speakers", 8, CTXC__SRC_JSTR, "speaker", 7));
    assert_false(ctxc__src_equals("speak", 5, CTXC__SRC_JSTR, "speaker", 7));
    assert_true(ctxc__src_equals("ab", 2, CTXC__SRC_RAW, "ab", 2));

    /* a sink that is too small writes nothing past its end but counts */
    char tiny[4] = {'#', '#', '#', '#'};
    ctxc__sink_t t = {tiny, 3, 0};
    ctxc__put(&t, "ab", 2);
    ctxc__put(&t, "cd", 2);
    assert_int_equal(t.len, 4);
    assert_int_equal(tiny[3], '#');
}

static void test_find_key_in_canonical_objects(void **state) {
    (void)state;
    const char *obj = "{\"a\":{\"x\":[1,{\"y\":2}]},\"s\":\"q,\\\"}\",\"n\":-1.5,"
                      "\"t\":true}";
    ctxc_str_t v;
    assert_true(ctxc__json_find_key(obj, strlen(obj), "a", &v));
    assert_int_equal(v.len, strlen("{\"x\":[1,{\"y\":2}]}"));
    assert_true(ctxc__json_find_key(obj, strlen(obj), "s", &v));
    assert_int_equal(v.len, strlen("\"q,\\\"}\""));
    assert_true(ctxc__json_find_key(obj, strlen(obj), "n", &v));
    assert_memory_equal(v.ptr, "-1.5", 4);
    assert_true(ctxc__json_find_key(obj, strlen(obj), "t", &v));
    assert_int_equal(v.len, 4);
    assert_false(ctxc__json_find_key(obj, strlen(obj), "x", &v));
    assert_false(ctxc__json_find_key("{}", 2, "a", &v));
    assert_false(ctxc__json_find_key("[1]", 3, "a", &v));
}

/* Keys written with escapes are found by what they decode to, whatever
 * the length of the raw text: "fil\\u0065_path" is file_path, a key with
 * an escaped quote matches its decoded form, and raw text of the key's
 * length with a backslash in it never matches a key without one. */
static void test_find_key_written_with_escapes(void **state) {
    (void)state;
    const char *obj = "{\"fil\\u0065_path\":1,\"a\\\"b\":2,\"p\\\\q\":3,"
                      "\"\\u0061\":4,\"file_pat\":5,\"file_path\":6}";
    ctxc_str_t v;
    size_t which;
    /* the first key decodes to file_path: found there, not at the plain
     * one at the end */
    assert_true(ctxc__json_find_key(obj, strlen(obj), "file_path", &v));
    assert_memory_equal(v.ptr, "1", 1);
    assert_true(ctxc__json_find_key(obj, strlen(obj), "a\"b", &v));
    assert_memory_equal(v.ptr, "2", 1);
    assert_true(ctxc__json_find_key(obj, strlen(obj), "p\\q", &v));
    assert_memory_equal(v.ptr, "3", 1);
    assert_true(ctxc__json_find_key(obj, strlen(obj), "a", &v));
    assert_memory_equal(v.ptr, "4", 1);
    /* raw p\\q (4 bytes) decodes to 3: not the 4-byte key p\\q */
    const char *raw4 = "{\"p\\\\q\":3}";
    assert_false(ctxc__json_find_key(raw4, strlen(raw4), "p\\\\q", &v));
    assert_false(ctxc__json_find_key(obj, strlen(obj), "file_pa", &v));
    assert_false(ctxc__json_find_key(obj, strlen(obj), "", &v));
    /* the first of several keys in the order given */
    static const char *const keys[] = {"nope", "file_pat", "a"};
    ctxc_str_t o = {obj, strlen(obj)};
    assert_true(ctxc__json_find_first_key(o, keys, 3, &v, &which));
    assert_int_equal(which, 1);
    assert_memory_equal(v.ptr, "5", 1);
}

/* ---- the tokenizer ------------------------------------------------------ */

static void test_tokens_of_a_document(void **state) {
    (void)state;
    const char *js = "{\"a\":[1,\"x\\ny\",{}],\"b\":null,\"c\":\"\xc3\xa9\"}";
    ctxc__jtok_t t[16];
    size_t n = 0;
    assert_int_equal(ctxc__json_scan(js, strlen(js), 8, t, 16, &n, NULL, NULL),
                     CTXC_OK);
    assert_int_equal(n, 10);
    assert_int_equal(t[0].type, CTXC__JT_OBJECT);
    assert_int_equal(t[0].size, 3); /* keys */
    assert_int_equal(t[0].start, 0);
    assert_int_equal(t[0].end, strlen(js));
    assert_int_equal(t[0].next, 10);
    /* members: key, value; the next key after the value's subtree */
    const char *keys[] = {"a", "b", "c"};
    const uint8_t types[] = {CTXC__JT_ARRAY, CTXC__JT_NULL, CTXC__JT_STRING};
    size_t key = 1;
    for (size_t k = 0; k < 3; k++) {
        assert_true(ctxc__jtok_is(js, &t[key], keys[k]));
        assert_int_equal(t[key + 1].type, types[k]);
        key = t[key + 1].next;
    }
    assert_int_equal(key, 10);
    /* the array: 1, "x\ny", {} */
    assert_int_equal(t[2].size, 3);
    assert_int_equal(t[3].type, CTXC__JT_NUMBER);
    assert_int_equal(ctxc__jtok_n(&t[3]), 1);
    assert_int_equal(t[3].next, 4);
    assert_int_equal(t[4].type, CTXC__JT_STRING);
    assert_memory_equal(ctxc__jtok_p(js, &t[4]), "x\\ny", 4); /* the body */
    assert_int_equal(t[4].flags, CTXC__JF_ESCAPES);
    assert_int_equal(t[5].type, CTXC__JT_OBJECT);
    assert_int_equal(t[5].size, 0);
    assert_int_equal(t[2].next, 6);
    assert_int_equal(t[9].flags, CTXC__JF_NONASCII);
    assert_false(ctxc__jtok_is(js, &t[2], "a")); /* not a string */
}

static void test_token_storage_too_small_counts_what_is_needed(void **state) {
    (void)state;
    const char *js = "[1,2,3,[4,5]]";
    ctxc__jtok_t t[3];
    size_t n = 0;
    assert_int_equal(ctxc__json_scan(js, strlen(js), 8, t, 3, &n, NULL, NULL),
                     CTXC_OK);
    assert_int_equal(n, 7);
    assert_int_equal(t[0].size, 4);
    assert_int_equal(t[2].type, CTXC__JT_NUMBER);
    /* validation does not stop at the end of the storage */
    assert_int_equal(ctxc__json_scan("[1,2,3,[4,5,]]", 14, 8, t, 3, &n, NULL,
                                     &err),
                     CTXC_E_PARSE);
    /* no storage: validation and counting only */
    assert_int_equal(ctxc__json_scan(js, strlen(js), 8, NULL, 0, &n, NULL, NULL),
                     CTXC_OK);
    assert_int_equal(n, 7);
}

/* NONCANON is set exactly when the canonical form differs from the text. */
static void test_noncanonical_flag_matches_the_canonical_form(void **state) {
    (void)state;
    static const char *const cases[] = {
        "{\"a\":[1,\"b\",{\"c\":null}],\"d\":\"\\n\\t\\\"\\\\\\u0001\\u001f\"}",
        "{\"a\": 1}",
        "[1 ,2]",
        "{\"a\":[1,[2,{\"b\":\"x\\/y\"}]]}",
        "{\"a\":[1,[2,{\"b\":\"x\\u0041\"}]]}",
        "{\"a\":\"\\u001F\"}",
        "{\"a\":\"\\u000a\"}",
        "{\"a\":\"\\u00e9\"}",
        "{\"a\":\"\\ud83d\\ude00\"}",
        "{\"a\":\"\\u000b\"}",
        "[\"\xc3\xa9\",\"\\b\\f\\r\"]",
        "[[[[]]],{\"k\":[\"v\"]}\n]",
        "\"\\/\"",
        "\"plain\"",
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *js = cases[i];
        ctxc__jtok_t t[32];
        size_t n;
        ctxc__sink_t s = {out, sizeof out - 1, 0};
        assert_int_equal(
            ctxc__json_scan(js, strlen(js), 8, t, 32, &n, &s, NULL), CTXC_OK);
        bool same = s.len == strlen(js) && memcmp(out, js, s.len) == 0;
        bool flagged = (t[0].flags & CTXC__JF_NONCANON) != 0;
        if (same == flagged) {
            fail_msg("case %zu (%s): canonical %s, flag %d", i, js,
                     same ? "same" : "different", (int)flagged);
        }
        /* every token: its own text is canonical iff not flagged */
        for (size_t k = 0; k < n; k++) {
            if (t[k].type != CTXC__JT_STRING && t[k].type != CTXC__JT_OBJECT &&
                t[k].type != CTXC__JT_ARRAY) {
                continue;
            }
            size_t a = t[k].start, b = t[k].end;
            if (t[k].type == CTXC__JT_STRING) {
                a--;
                b++;
            }
            char one[256];
            ctxc__sink_t o = {one, sizeof one, 0};
            assert_int_equal(ctxc__json_canon(js + a, b - a, CTXC__SRC_RAW, 8,
                                              &o, NULL),
                             CTXC_OK);
            bool tsame = o.len == b - a && memcmp(one, js + a, o.len) == 0;
            assert_int_equal(tsame, (t[k].flags & CTXC__JF_NONCANON) == 0);
        }
    }
}

/* The scan that counts text statistics gives the same tokens, and string
 * statistics that match the estimator on the decoded content. */
static void test_scan_with_statistics(void **state) {
    (void)state;
    const char *js =
        "{\"a\":\"  x\\ny\\\\n\\t \\\"q\\\" \\u00a0\xc2\xa0z \",\"b\":[\"\","
        "\"plain words here and there\",\"\\n\\n\\n\\n\\n\\n\\n\\n\\n\",1]}";
    const char *content[] = {NULL, NULL, "  x\ny\\n\t \"q\" \xc2\xa0\xc2\xa0z ", NULL, NULL, "",
                             "plain words here and there",
                             "\n\n\n\n\n\n\n\n\n", NULL};
    ctxc__jtok_t a[16], b[16];
    size_t na, nb;
    assert_int_equal(ctxc__json_scan(js, strlen(js), 8, a, 16, &na, NULL, NULL),
                     CTXC_OK);
    assert_int_equal(
        ctxc__json_scan_stats(js, strlen(js), 8, b, 16, &nb, NULL), CTXC_OK);
    assert_int_equal(na, nb);
    for (size_t k = 0; k < na; k++) {
        assert_int_equal(a[k].type, b[k].type);
        assert_int_equal(a[k].start, b[k].start);
        assert_int_equal(a[k].end, b[k].end);
        assert_int_equal(a[k].next, b[k].next);
        assert_int_equal(a[k].flags & 7u, b[k].flags & 7u);
        if (a[k].type != CTXC__JT_STRING) {
            assert_int_equal(a[k].size, b[k].size);
            continue;
        }
        if ((b[k].flags & CTXC__JF_STATS) == 0) {
            continue; /* a target that counts after the write */
        }
#ifdef CTXC__SCAN_STATS
        if (k < sizeof content / sizeof content[0] && content[k] != NULL) {
            ctxc__text_stats_t st = ctxc__jtok_stats(&b[k]);
            assert_int_equal(ctxc__stats_tokens(&st),
                             ctxc_estimate_text(content[k], strlen(content[k])));
            uint64_t w, u;
            ctxc_estimate_measure(content[k], strlen(content[k]), &w, &u);
            assert_int_equal(st.units, u);
            assert_int_equal(st.units == 0 ? 0 : st.runs + 1, w);
        }
#endif
    }
}

/* Random strings of plain runs, spaces, escapes and non-ASCII characters
 * at every alignment: the statistics of the scan agree with the estimator
 * on the decoded content (the wide paths of the scan cut their words at
 * every kind of byte). */
static void test_scan_statistics_of_random_strings(void **state) {
    (void)state;
#ifdef CTXC__SCAN_STATS
    static const char *const piece[][2] = {
        {" ", " "},         {"   ", "   "},     {"a", "a"},
        {"words", "words"}, {"\\n", "\n"},      {"\\t", "\t"},
        {"\\\"", "\""},     {"\\\\", "\\"},     {"\\u00a0", "\xc2\xa0"},
        {"\\r", "\r"},      {"\\/", "/"},       {"\\b", "\b"},
        {"\\f", "\f"},      {"\xc2\xa0", "\xc2\xa0"},
        {"\xe2\x80\x83", "\xe2\x80\x83"},
        {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80"},
        {"0123456789abcdefghij", "0123456789abcdefghij"},
    };
    const size_t npiece = sizeof piece / sizeof piece[0];
    uint32_t seed = 11;
    static char content[1024];
    size_t cn = 0;
    ctxc__text_stats_t joined;
    memset(&joined, 0, sizeof joined);
    for (int trial = 0; trial < 3000; trial++) {
        char js[512];
        size_t jn = 0;
        if (trial % 2 == 0) { /* pairs of strings: their stats joined */
            cn = 0;
            memset(&joined, 0, sizeof joined);
        }
        size_t c0 = cn;
        seed = seed * 1103515245u + 12345u;
        size_t lead = (seed >> 8) % 17;
        for (size_t i = 0; i < lead; i++) {
            js[jn++] = ' ';
        }
        memcpy(js + jn, "{\"k\":\"", 6);
        jn += 6;
        seed = seed * 1103515245u + 12345u;
        size_t pieces = (seed >> 8) % 24;
        for (size_t i = 0; i < pieces; i++) {
            seed = seed * 1103515245u + 12345u;
            size_t k = (seed >> 8) % npiece;
            size_t bl = strlen(piece[k][0]), dl = strlen(piece[k][1]);
            memcpy(js + jn, piece[k][0], bl);
            jn += bl;
            memcpy(content + cn, piece[k][1], dl);
            cn += dl;
        }
        memcpy(js + jn, "\"}", 2);
        jn += 2;
        ctxc__jtok_t t[8];
        size_t nt;
        assert_int_equal(ctxc__json_scan_stats(js, jn, 8, t, 8, &nt, NULL),
                         CTXC_OK);
        assert_int_equal(nt, 3);
        assert_true((t[2].flags & CTXC__JF_STATS) != 0);
        ctxc__text_stats_t st = ctxc__jtok_stats(&t[2]);
        uint64_t w, u;
        ctxc_estimate_measure(content + c0, cn - c0, &w, &u);
        assert_int_equal(st.units, u);
        assert_int_equal(st.units == 0 ? 0 : st.runs + 1, w);
        ctxc__stats_join(&joined, &st);
        ctxc_estimate_measure(content, cn, &w, &u);
        assert_int_equal(ctxc__stats_tokens(&joined),
                         ctxc_estimate_formula(w, u));
    }
#endif
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_whitespace_and_structure),
        cmocka_unit_test(test_escapes_are_written_like_json_stringify),
        cmocka_unit_test(test_numbers_are_kept_as_written),
        cmocka_unit_test(test_syntax_errors),
        cmocka_unit_test(test_utf8_and_surrogates),
        cmocka_unit_test(test_depth_limit),
        cmocka_unit_test(test_json_inside_a_string_source),
        cmocka_unit_test(test_string_writers_and_compare),
        cmocka_unit_test(test_find_key_in_canonical_objects),
        cmocka_unit_test(test_find_key_written_with_escapes),
        cmocka_unit_test(test_tokens_of_a_document),
        cmocka_unit_test(test_token_storage_too_small_counts_what_is_needed),
        cmocka_unit_test(test_noncanonical_flag_matches_the_canonical_form),
        cmocka_unit_test(test_scan_with_statistics),
        cmocka_unit_test(test_scan_statistics_of_random_strings),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
