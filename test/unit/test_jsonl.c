/*
 * JSON Lines codec: valid input, canonical output, round trip, every
 * bad-input class (line number, reason, nothing imported), OpenAI shape.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"

CTXC_HISTORY_DEFINE(hist, 64, 1 << 16);
static ctxc_import_t imp;
static ctxc_error_t err;

typedef struct {
    char buf[1 << 17];
    size_t len;
} out_t;
static out_t out, out2;

static ctxc_status_t out_write(void *user, const char *data, size_t len) {
    out_t *o = user;
    if (o->len + len >= sizeof o->buf) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(o->buf + o->len, data, len);
    o->len += len;
    o->buf[o->len] = '\0';
    return CTXC_OK;
}

static void export_to(const ctxc_history_t *h, out_t *o) {
    o->len = 0;
    o->buf[0] = '\0';
    assert_int_equal(ctxc_export(h, out_write, o, NULL), CTXC_OK);
}

static ctxc_status_t import_str(const char *text) {
    memset(&err, 0, sizeof err);
    return ctxc_import_text(&imp, &hist, text, strlen(text), CTXC_FORMAT_AUTO,
                            &err);
}

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    return 0;
}

static void assert_fmt(const char *in, const char *expected) {
    ctxc_history_clear(&hist);
    if (import_str(in) != CTXC_OK) {
        fail_msg("import failed: line %u: %s", (unsigned)err.line, err.message);
    }
    export_to(&hist, &out);
    assert_string_equal(out.buf, expected);
    /* fmt(fmt(x)) == fmt(x) */
    ctxc_history_clear(&hist);
    assert_int_equal(import_str(expected), CTXC_OK);
    export_to(&hist, &out2);
    assert_string_equal(out2.buf, expected);
}

/* ---- valid input --------------------------------------------------------- */

static void test_canonical_output(void **state) {
    (void)state;
    assert_fmt(
        "{ \"metadata\" : {\"timestamp\": 17, \"model\":\"m\"}, \"blocks\": [ "
        "{\"text\":\"caf\\u00e9 \\/ \\ud83d\\ude00\",\"type\":\"text\"} ], "
        "\"speaker\":\"ai\" }\n",
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"caf\xc3\xa9 / "
        "\xf0\x9f\x98\x80\"}],\"metadata\":{\"timestamp\":17,\"model\":\"m\"}}"
        "\n");
    assert_fmt(
        "{\"speaker\":\"ai\",\"blocks\":[{\"parameters\":{ "
        "\"file_path\":\"a.c\" },"
        "\"name\":\"read_file\",\"id\":\"c1\",\"type\":\"tool_call\"}]}\r\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":"
        "\"c1\",\"toolName\":\"read_file\",\"result\":\"x\\ty\",\"error\":"
        "\"e\"}]}\n",
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"c1\","
        "\"name\":"
        "\"read_file\",\"parameters\":{\"file_path\":\"a.c\"}}]}\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":"
        "\"c1\",\"toolName\":\"read_file\",\"result\":\"x\\ty\",\"error\":"
        "\"e\"}]}\n");
}

/* JSON values are stored as written when that is canonical already and
 * canonicalised otherwise, also when the only difference is deep inside
 * (an escape, a space) or in a string value. */
static void test_values_are_stored_canonical(void **state) {
    (void)state;
    assert_fmt(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"c\","
        "\"name\":\"n\",\"parameters\":{\"a\":[1,{\"b\":\"q\"} ]}}],"
        "\"metadata\":{\"k\":\"\\\"\\\\\\b\\u0001\"}}\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":\"c\",\"toolName\":\"t\",\"result\":\"a\\/b\\u0041\\u001F"
        "\\u000a\"}],\"metadata\":{\"x\":{\"y\":[1,{\"z\":\"\\u00e9\"}]}}}\n",
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"c\","
        "\"name\":\"n\",\"parameters\":{\"a\":[1,{\"b\":\"q\"}]}}],"
        "\"metadata\":{\"k\":\"\\\"\\\\\\b\\u0001\"}}\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":\"c\",\"toolName\":\"t\",\"result\":\"a/bA\\u001f\\n\"}],"
        "\"metadata\":{\"x\":{\"y\":[1,{\"z\":\"\xc3\xa9\"}]}}}\n");
    /* OpenAI arguments: JSON text inside a string, with and without
     * escapes */
    ctxc_history_clear(&hist);
    assert_int_equal(
        import_str("{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{"
                   "\"id\":\"1\",\"type\":\"function\",\"function\":{\"name\":"
                   "\"f\",\"arguments\":\"{ \\\"p\\\" : \\\"a\\\\/b\\\" }\"}},"
                   "{\"id\":\"2\",\"type\":\"function\",\"function\":{\"name\":"
                   "\"g\",\"arguments\":\"[1, 2]\"}}]}\n"),
        CTXC_OK);
    export_to(&hist, &out);
    assert_string_equal(
        out.buf, "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\","
                 "\"id\":\"1\",\"name\":\"f\",\"parameters\":{\"p\":\"a/b\"}},"
                 "{\"type\":\"tool_call\",\"id\":\"2\",\"name\":\"g\","
                 "\"parameters\":[1,2]}]}\n");
}

/* The importer estimates blocks from what its scan counted; that must be
 * exactly what the estimator gives on the stored entry. Strings made of
 * pieces with whitespace at every position of the 8-byte steps, escaped
 * and literal unicode whitespace, empty texts, errors joined to results. */
static uint32_t stored_estimate(size_t i) {
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, i, &e), CTXC_OK);
    uint32_t sum = 0;
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    while (ctxc_entry_next_block(&e, &cur, &b)) {
        sum += ctxc_estimate_block_default(NULL, &b);
    }
    return sum;
}

static void test_import_estimates_match_the_estimator(void **state) {
    (void)state;
    static const char *const pieces[] = {
        "w",
        "word",
        " ",
        "  ",
        "\\n",
        "\\t\\r",
        "\\f",
        "\\b",
        "\\u000b",
        "\\u00a0",
        "\xc2\xa0",
        "\\u2028",
        "\xe3\x80\x80",
        "\\ufeff",
        "\\ud83d\\ude00",
        "\xf0\x9f\x98\x80",
        "\\\"",
        "\\\\",
        "\\/",
        "\xc3\xa9",
        "a b c d e f g h",
    };
    const size_t np = sizeof pieces / sizeof pieces[0];
    static char text[3][2048];
    static char line[32768];
    uint64_t r = 88172645463325252ull;
    for (int round = 0; round < 300; round++) {
        for (int k = 0; k < 3; k++) {
            size_t n = 0;
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            size_t count = (size_t)(r % 30u);
            for (size_t j = 0; j < count; j++) {
                r ^= r << 13;
                r ^= r >> 7;
                r ^= r << 17;
                const char *p = pieces[r % np];
                memcpy(text[k] + n, p, strlen(p));
                n += strlen(p);
            }
            text[k][n] = '\0';
        }
        snprintf(
            line, sizeof line,
            "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"%s\"},{\"type\":\"thinking\",\"thought\":\"%s\"},{\"type\":"
            "\"code\",\"code\":\"%s\"},{\"type\":\"media\",\"mimeType\":"
            "\"m\",\"data\":\"d\",\"encoding\":\"e\"%s%s%s}]}\n"
            "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
            "\"callId\":\"c1\",\"toolName\":\"t\",\"result\":\"%s\",\"error\":"
            "\"%s\"},{\"type\":\"tool_response\",\"callId\":\"c2\","
            "\"toolName\":"
            "\"t\",\"result\":\"%s\"},{\"type\":\"tool_response\",\"callId\":"
            "\"c3\",\"toolName\":\"t\",\"result\":{\"x\":\"%s\"},\"error\":"
            "\"%s\"}]}\n"
            "\x01{\"role\":\"user\",\"content\":\"%s\"}\n"
            "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":"
            "\"%s\"}]}\n"
            "{\"role\":\"tool\",\"tool_call_id\":\"c1\",\"content\":\"%s\"}\n"
            "{\"role\":\"tool\",\"tool_call_id\":\"c2\",\"content\":null}\n",
            text[0], text[1], text[2], round % 2 ? ",\"caption\":\"" : "",
            round % 2 ? text[0] : "", round % 2 ? "\"" : "", text[1], text[2],
            text[0], text[1], text[2], text[0], text[1], text[2]);
        /* the entries, then (after \x01) the OpenAI messages */
        char *oa = strchr(line, '\x01');
        *oa++ = '\0';
        const char *parts[2] = {line, oa};
        for (int part = 0; part < 2; part++) {
            ctxc_history_clear(&hist);
            if (import_str(parts[part]) != CTXC_OK) {
                fail_msg("import failed: line %u: %s", (unsigned)err.line,
                         err.message);
            }
            for (size_t i = 0; i < ctxc_history_count(&hist); i++) {
                ctxc_entry_t e;
                ctxc_history_get(&hist, i, &e);
                if (e.tokens != stored_estimate(i)) {
                    fail_msg("round %d entry %zu: %u, the estimator says %u: "
                             "%s",
                             round, i, (unsigned)e.tokens,
                             (unsigned)stored_estimate(i), parts[part]);
                }
            }
        }
    }
}

static void test_every_block_type_round_trips(void **state) {
    (void)state;
    const char *all =
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"hi\"}"
        "],"
        "\"metadata\":{}}\n"
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"thinking\",\"thought\":"
        "\"t\","
        "\"signature\":\"s\"},{\"type\":\"code\",\"code\":\"x=1\",\"language\":"
        "\"py\"},{\"type\":\"media\",\"mimeType\":\"image/"
        "png\",\"data\":\"AA==\","
        "\"encoding\":\"base64\",\"caption\":\"c\",\"filename\":\"f.png\"},"
        "{\"type\":\"tool_call\",\"id\":\"1\",\"name\":\"n\",\"parameters\":[1,"
        "{\"a\":null}]}],\"metadata\":{\"isSummary\":true,\"usage\":{"
        "\"promptTokens\":5,\"completionTokens\":1}}}\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":"
        "\"1\",\"toolName\":\"n\",\"result\":{\"ok\":true,\"n\":1.50}}]}\n";
    assert_fmt(all, all);
    ctxc_entry_t e;
    ctxc_history_get(&hist, 1, &e);
    assert_int_equal(e.flags, CTXC_ENTRY_IS_SUMMARY);
    assert_int_equal(e.block_count, 4);
    ctxc_history_get(&hist, 2, &e);
    ctxc_block_t b;
    ctxc_entry_block(&e, 0, &b);
    assert_string_equal(b.u.tool_response.result.ptr,
                        "{\"ok\":true,\"n\":1.50}");
    assert_null(b.u.tool_response.error.ptr);
}

static void test_blank_lines_and_no_final_newline(void **state) {
    (void)state;
    assert_int_equal(
        import_str(
            "\n  \n{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
            "\"text\":\"a\"}]}\n\r\n{\"speaker\":\"ai\",\"blocks\":[{"
            "\"type\":\"text\",\"text\":\"b\"}]}"),
        CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 2);
}

static void test_unpaired_calls_and_responses_are_data(void **state) {
    (void)state;
    assert_int_equal(
        import_str(
            "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
            "\"callId\":\"ghost\",\"toolName\":\"x\",\"result\":\"\"}]}\n"
            "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":"
            "\"c9\",\"name\":\"x\",\"parameters\":{}}]}\n"),
        CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 2);
}

/* ---- bad input: each class names the line, imports nothing --------------- */

static const char *GOOD = "{\"speaker\":\"human\",\"blocks\":[{\"type\":"
                          "\"text\",\"text\":\"ok\"}]}\n";

static void assert_bad_line3(const char *bad, ctxc_status_t st,
                             const char *reason) {
    ctxc_history_clear(&hist);
    /* one entry was there before the import: it must survive untouched */
    assert_int_equal(import_str(GOOD), CTXC_OK);
    export_to(&hist, &out2);
    ctxc_history_usage_t before, after;
    ctxc_history_usage(&hist, &before);
    uint64_t tokens = ctxc_history_tokens(&hist);

    char text[1 << 16];
    snprintf(text, sizeof text, "%s%s%s\n%s", GOOD, GOOD, bad, GOOD);
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    ctxc_status_t got = CTXC_OK;
    const char *p = text;
    while (*p != '\0' && got == CTXC_OK) {
        const char *nl = strchr(p, '\n');
        size_t n = nl != NULL ? (size_t)(nl - p) : strlen(p);
        got = ctxc_import_line(&imp, p, n, &err);
        p += n + (nl != NULL);
    }
    if (got != st) {
        fail_msg("expected %s, got %s (%s)", ctxc_status_name(st),
                 ctxc_status_name(got), err.message);
    }
    assert_int_equal(err.status, st);
    assert_int_equal(err.line, 3);
    if (strstr(err.message, reason) == NULL) {
        fail_msg("message '%s' lacks '%s'", err.message, reason);
    }
    /* nothing of the file was imported; the earlier entry is intact */
    ctxc_history_usage(&hist, &after);
    assert_memory_equal(&before, &after, sizeof before);
    assert_int_equal(ctxc_history_tokens(&hist), tokens);
    export_to(&hist, &out);
    assert_string_equal(out.buf, out2.buf);
    /* the import is over */
    assert_int_equal(ctxc_import_line(&imp, GOOD, strlen(GOOD), NULL),
                     CTXC_E_INVALID_ARG);
}

static void test_not_json(void **state) {
    (void)state;
    assert_bad_line3("this is not json", CTXC_E_PARSE,
                     "invalid JSON at byte 2");
    assert_bad_line3("@", CTXC_E_PARSE,
                     "invalid JSON at byte 1: value expected");
    assert_bad_line3("{\"speaker\":\"human\",\"blocks\":[}", CTXC_E_PARSE,
                     "invalid JSON");
    assert_bad_line3("{\"speaker\":\"human\"} {}", CTXC_E_PARSE,
                     "after the JSON value");
}

static void test_wrong_shape(void **state) {
    (void)state;
    assert_bad_line3("[1,2]", CTXC_E_PARSE,
                     "must hold a JSON object, not an array");
    assert_bad_line3("{\"speaker\":\"human\",\"blocks\":{}}", CTXC_E_PARSE,
                     "'blocks' must be an array, not an object");
    assert_bad_line3("{\"speaker\":\"human\",\"blocks\":[\"text\"]}",
                     CTXC_E_PARSE, "block 0 must be an object");
    assert_bad_line3("{\"speaker\":\"human\",\"blocks\":[]}", CTXC_E_PARSE,
                     "'blocks' is empty");
    assert_bad_line3("{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
                     "\"text\":\"a\"}],\"extra\":1}",
                     CTXC_E_PARSE, "unknown key 'extra'");
    assert_bad_line3("{\"speaker\":\"human\",\"speaker\":\"ai\",\"blocks\":[]}",
                     CTXC_E_PARSE, "duplicate key 'speaker'");
    assert_bad_line3("{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
                     "\"text\":\"a\",\"bold\":true}]}",
                     CTXC_E_PARSE, "block 0 (text): unknown key 'bold'");
    assert_bad_line3("{\"foo\":1}", CTXC_E_PARSE, "unknown key 'foo'");
    /* on the first line the format is not known yet */
    ctxc_history_clear(&hist);
    assert_int_equal(import_str("{\"foo\":1}\n"), CTXC_E_PARSE);
    assert_int_equal(err.line, 1);
    assert_non_null(strstr(err.message, "no 'speaker' key"));
    assert_non_null(strstr(err.message, "no 'role' key"));
}

static void test_unknown_speaker_and_block_type(void **state) {
    (void)state;
    assert_bad_line3("{\"speaker\":\"robot\",\"blocks\":[{\"type\":\"text\","
                     "\"text\":\"a\"}]}",
                     CTXC_E_PARSE, "unknown speaker 'robot'");
    assert_bad_line3(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"a\"},{\"type\":\"image\",\"url\":\"x\"}]}",
        CTXC_E_PARSE, "block 1: unknown block type 'image'");
}

static void test_missing_field(void **state) {
    (void)state;
    assert_bad_line3("{\"blocks\":[{\"type\":\"text\",\"text\":\"a\"}],"
                     "\"metadata\":{},\"speaker\":\"ai\",\"x\":1}",
                     CTXC_E_PARSE, "unknown key 'x'");
    assert_bad_line3("{\"speaker\":\"ai\",\"metadata\":{}}", CTXC_E_PARSE,
                     "missing key 'blocks'");
    assert_bad_line3("{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\","
                     "\"id\":\"c\",\"parameters\":{}}]}",
                     CTXC_E_PARSE, "block 0 (tool_call): missing key 'name'");
    assert_bad_line3(
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":\"c\",\"toolName\":\"n\"}]}",
        CTXC_E_PARSE, "missing key 'result'");
    assert_bad_line3("{\"speaker\":\"ai\",\"blocks\":[{\"text\":\"a\"}]}",
                     CTXC_E_PARSE, "block 0: missing key 'type'");
}

static void test_wrong_type(void **state) {
    (void)state;
    assert_bad_line3("{\"speaker\":1,\"blocks\":[]}", CTXC_E_PARSE,
                     "'speaker' must be a string, not a number");
    assert_bad_line3(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "42}]}",
        CTXC_E_PARSE, "'text' must be a string");
    assert_bad_line3(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"a\"}],\"metadata\":[]}",
        CTXC_E_PARSE, "'metadata' must be an object");
    assert_bad_line3("{\"speaker\":\"ai\",\"blocks\":[{\"type\":7}]}",
                     CTXC_E_PARSE, "'type' must be a string");
}

static void test_invalid_utf8_and_surrogates(void **state) {
    (void)state;
    assert_bad_line3(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"bad \xc3\x28 byte\"}]}",
        CTXC_E_UTF8, "invalid UTF-8");
    assert_bad_line3(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"\\ud800 alone\"}]}",
        CTXC_E_UTF8, "lone high surrogate");
    assert_bad_line3(
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"\\udfff\"}]}",
        CTXC_E_UTF8, "lone low surrogate");
}

/* An entry whose tool_call parameters nest `depth` arrays deep. */
static void nested_line(char *line, size_t cap, int depth) {
    int n = snprintf(line, cap,
                     "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\","
                     "\"id\":\"c\",\"name\":\"n\",\"parameters\":");
    for (int i = 0; i < depth; i++) {
        line[n++] = '[';
    }
    for (int i = 0; i < depth; i++) {
        line[n++] = ']';
    }
    snprintf(line + n, cap - (size_t)n, "}]}");
}

static void test_nesting_too_deep(void **state) {
    (void)state;
    char line[512];
    /* the line is depth 1, blocks 2, block 3: parameters may add
     * CTXC_CFG_JSON_MAX_DEPTH - 3 levels */
    nested_line(line, sizeof line, CTXC_CFG_JSON_MAX_DEPTH - 3 + 1);
    assert_bad_line3(line, CTXC_E_TOO_DEEP, "deeper than");
    ctxc_history_clear(&hist);
    nested_line(line, sizeof line, CTXC_CFG_JSON_MAX_DEPTH - 3);
    assert_int_equal(import_str(line), CTXC_OK);
}

static void test_line_larger_than_arena(void **state) {
    (void)state;
    static ctxc_slot_t slots[4];
    static uint8_t arena[256];
    ctxc_history_t tiny;
    ctxc_history_init(&tiny, slots, 4, arena, sizeof arena, NULL);
    char line[400];
    int n = snprintf(
        line, sizeof line,
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":\"");
    memset(line + n, 'z', 300);
    snprintf(line + n + 300, sizeof line - (size_t)n - 300, "\"}]}");
    assert_int_equal(ctxc_import_text(&imp, &tiny, line, strlen(line),
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_E_TOO_LARGE);
    assert_int_equal(err.line, 1);
    assert_non_null(
        strstr(err.message, "larger than the history arena (256 bytes)"));
    assert_int_equal(ctxc_history_count(&tiny), 0);
}

static void test_arena_full_midway_rolls_back(void **state) {
    (void)state;
    static ctxc_slot_t slots[8];
    static uint8_t arena[200];
    ctxc_history_t tiny;
    ctxc_history_init(&tiny, slots, 8, arena, sizeof arena, NULL);
    char text[2048] = "";
    for (int i = 0; i < 6; i++) {
        strcat(text,
               "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
               "\"text\":\"0123456789012345678901234567890123456789\"}]}\n");
    }
    assert_int_equal(ctxc_import_text(&imp, &tiny, text, strlen(text),
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.line, 4); /* 3 records of 54 bytes fit in 200 */
    /* what the whole text needs, not line 4 alone: 6 x 54 - 200 */
    assert_int_equal(err.needed, 6u * 54u - 200u);
    assert_non_null(strstr(err.message, "the text needs 124 arena bytes more "
                                        "than the 200 free"));
    assert_int_equal(ctxc_history_count(&tiny), 0);
    ctxc_history_usage_t u;
    ctxc_history_usage(&tiny, &u);
    assert_int_equal(u.bytes_used, 0);
    assert_int_equal(u.bytes_hwm, 0);

    /* with the arena that big, the import fits */
    static uint8_t big[6u * 54u];
    ctxc_history_init(&tiny, slots, 8, big, sizeof big, NULL);
    assert_int_equal(ctxc_import_text(&imp, &tiny, text, strlen(text),
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);

    /* entry slots running out: the count of entries more than the slots */
    ctxc_history_init(&tiny, slots, 2, big, sizeof big, NULL);
    assert_int_equal(ctxc_import_text(&imp, &tiny, text, strlen(text),
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.line, 3);
    assert_int_equal(err.needed, 4);
    assert_int_equal(ctxc_history_count(&tiny), 0);
}

static void test_too_many_tokens(void **state) {
    (void)state;
    static char line[CTXC_CFG_JSON_MAX_TOKENS * 2 + 200];
    int n = snprintf(line, sizeof line,
                     "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\","
                     "\"id\":\"c\",\"name\":\"n\",\"parameters\":[");
    for (int i = 0; i < CTXC_CFG_JSON_MAX_TOKENS; i++) {
        line[n++] = '0';
        line[n++] = ',';
    }
    snprintf(line + n, sizeof line - (size_t)n, "0]}]}");
    if (strlen(line) > hist.arena_bytes) {
        skip(); /* cannot happen with the configured sizes */
    }
    assert_bad_line3(line, CTXC_E_TOO_LARGE, "JSON tokens");
}

static void test_import_api_misuse(void **state) {
    (void)state;
    ctxc_import_t fresh;
    memset(&fresh, 0, sizeof fresh);
    assert_int_equal(ctxc_import_line(&fresh, GOOD, strlen(GOOD), &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_import_end(&fresh, &err), CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_import_begin(&fresh, NULL, CTXC_FORMAT_AUTO, &err),
                     CTXC_E_INVALID_ARG);
    /* abort restores */
    ctxc_history_clear(&hist);
    assert_int_equal(ctxc_import_begin(&imp, &hist, CTXC_FORMAT_AUTO, NULL),
                     CTXC_OK);
    assert_int_equal(ctxc_import_line(&imp, GOOD, strlen(GOOD), NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 1);
    ctxc_import_abort(&imp);
    assert_int_equal(ctxc_history_count(&hist), 0);
}

/* ---- OpenAI chat messages ------------------------------------------------ */

static void test_openai_messages(void **state) {
    (void)state;
    const char *in =
        "{\"role\":\"system\",\"content\":\"You are terse.\"}\n"
        "{\"role\":\"user\",\"content\":[{\"type\":\"text\",\"text\":\"read "
        "a.c\"}]}\n"
        "{\"role\":\"assistant\",\"content\":null,\"tool_calls\":[{\"id\":"
        "\"call_1\","
        "\"type\":\"function\",\"function\":{\"name\":\"read_file\","
        "\"arguments\":"
        "\"{\\\"file_path\\\": \\\"a.c\\\"}\"}},{\"id\":\"call_2\",\"type\":"
        "\"function\",\"function\":{\"name\":\"list\",\"arguments\":\"\"}}]}\n"
        "{\"role\":\"tool\",\"tool_call_id\":\"call_1\",\"content\":\"int "
        "x;\"}\n"
        "{\"role\":\"tool\",\"tool_call_id\":\"call_2\",\"name\":\"list\","
        "\"content\":\"a.c\"}\n"
        "{\"role\":\"assistant\",\"content\":\"Done.\",\"refusal\":null}\n";
    assert_int_equal(import_str(in), CTXC_OK);
    export_to(&hist, &out);
    assert_string_equal(
        out.buf,
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"You "
        "are "
        "terse.\"}],\"metadata\":{\"source_role\":\"system\"}}\n"
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"read "
        "a.c\"}]}\n"
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"call_"
        "1\","
        "\"name\":\"read_file\",\"parameters\":{\"file_path\":\"a.c\"}},{"
        "\"type\":"
        "\"tool_call\",\"id\":\"call_2\",\"name\":\"list\",\"parameters\":{}}]}"
        "\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":"
        "\"call_1\",\"toolName\":\"read_file\",\"result\":\"int x;\"}]}\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":"
        "\"call_2\",\"toolName\":\"list\",\"result\":\"a.c\"}]}\n"
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":\"Done.\"}"
        "]}\n");
}

static void test_openai_bad_input(void **state) {
    (void)state;
    const char *ok = "{\"role\":\"user\",\"content\":\"hi\"}\n";
    const char *bad[][2] = {
        {"{\"role\":\"wizard\",\"content\":\"x\"}", "unknown role 'wizard'"},
        {"{\"role\":\"assistant\",\"tool_calls\":[{\"id\":\"c\",\"type\":"
         "\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"{oops\"}}]"
         "}",
         "arguments is not valid JSON"},
        {"{\"role\":\"tool\",\"content\":\"x\"}", "missing key 'tool_call_id'"},
        {"{\"role\":\"assistant\",\"content\":null}", "no content"},
        {"{\"role\":\"user\",\"content\":[{\"type\":\"image_url\"}]}",
         "only {\"type\":\"text\"} parts"},
        {"{\"role\":\"user\",\"content\":\"x\",\"tool_call_id\":\"c\"}",
         "only allowed on tool messages"},
        {"{\"content\":\"x\"}", "missing key 'role'"},
        {"{\"role\":\"user\",\"content\":\"x\",\"extra\":1}",
         "unknown key 'extra'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ctxc_history_clear(&hist);
        char text[1024];
        snprintf(text, sizeof text, "%s%s\n", ok, bad[i][0]);
        assert_int_equal(import_str(text), CTXC_E_PARSE);
        assert_int_equal(err.line, 2);
        if (strstr(err.message, bad[i][1]) == NULL) {
            fail_msg("case %zu: message '%s' lacks '%s'", i, err.message,
                     bad[i][1]);
        }
        assert_int_equal(ctxc_history_count(&hist), 0);
    }
    /* a file is one format: an entry line after an OpenAI line is refused */
    ctxc_history_clear(&hist);
    char mixed[512];
    snprintf(mixed, sizeof mixed, "%s%s", ok, GOOD);
    assert_int_equal(import_str(mixed), CTXC_E_PARSE);
    assert_int_equal(err.line, 2);
    assert_non_null(strstr(err.message, "unknown key 'speaker'"));
}

/* ---- export helpers ------------------------------------------------------ */

static ctxc_status_t failing_write(void *user, const char *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return CTXC_E_IO;
}

static void test_export_buffer_and_errors(void **state) {
    (void)state;
    assert_int_equal(import_str(GOOD), CTXC_OK);
    char buf[128];
    size_t n = 0;
    assert_int_equal(ctxc_export_entry_buf(&hist, 0, buf, sizeof buf, &n, &err),
                     CTXC_OK);
    assert_int_equal(n, strlen(GOOD));
    assert_string_equal(buf, GOOD);
    assert_int_equal(ctxc_export_entry_buf(&hist, 0, buf, 10, &n, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, strlen(GOOD) + 1 - 10);
    assert_int_equal(
        ctxc_export_entry_buf(&hist, 0, buf, strlen(GOOD) + 1, &n, &err),
        CTXC_OK);
    assert_int_equal(ctxc_export_entry_buf(&hist, 1, buf, sizeof buf, &n, &err),
                     CTXC_E_RANGE);
    assert_int_equal(ctxc_export(&hist, failing_write, NULL, &err), CTXC_E_IO);
}

/* A write function that takes `limit` bytes in all: the write that would go
 * past it fails with CTXC_E_NO_SPACE, and so does every write after it
 * (whose bytes are counted in `late`). */
typedef struct {
    out_t *o;
    size_t limit;
    bool failed;
    size_t late;
} limited_t;

static ctxc_status_t limited_write(void *user, const char *data, size_t len) {
    limited_t *l = user;
    if (l->failed || l->o->len + len > l->limit) {
        l->late += l->failed ? len : 0;
        l->failed = true;
        return CTXC_E_NO_SPACE;
    }
    return out_write(l->o, data, len);
}

/* Export goes out through a bounded buffer: lines longer than it, with
 * escapes and runs of every length, come out byte for byte; the first
 * write error stops the export, is returned as is with the entry it
 * happened in, and nothing is written after it. */
static void test_export_write_errors_stop_the_export(void **state) {
    (void)state;
    static char text[4096];
    static char big[1200];
    for (size_t i = 0; i < sizeof big - 1; i++) {
        big[i] = (char)('a' + i % 26);
    }
    big[sizeof big - 1] = '\0';
    snprintf(text, sizeof text,
             "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
             "\"%.150s\\n\\\"q\\\"\\t\\u0001%.60s\"}]}\n"
             "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\","
             "\"text\":\"%s\"}]}\n"
             "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
             "\"\\\\\\\\x\\n\\n\\n\"}],\"metadata\":{\"k\":[1,2]}}\n",
             big, big, big);
    ctxc_history_clear(&hist);
    if (import_str(text) != CTXC_OK) {
        fail_msg("line %u: %s", (unsigned)err.line, err.message);
    }
    export_to(&hist, &out);
    assert_string_equal(out.buf, text);
    size_t total = out.len;
    const size_t limits[] = {0,   1,   191, 192,  193,       250,
                             400, 700, 900, 1500, total - 1, total};
    for (size_t k = 0; k < sizeof limits / sizeof limits[0]; k++) {
        limited_t l = {&out2, limits[k], false, 0};
        out2.len = 0;
        out2.buf[0] = '\0';
        ctxc_status_t st = ctxc_export(&hist, limited_write, &l, &err);
        /* what was written is the start of the export */
        assert_memory_equal(out2.buf, text, out2.len);
        assert_int_equal(l.late, 0);
        if (limits[k] == total) {
            assert_int_equal(st, CTXC_OK);
            assert_int_equal(out2.len, total);
            continue;
        }
        if (st != CTXC_E_NO_SPACE) {
            fail_msg("limit %zu of %zu: %s", limits[k], total,
                     ctxc_status_name(st));
        }
        assert_int_equal(err.status, CTXC_E_NO_SPACE);
        assert_true(out2.len <= limits[k]);
        /* the entry of the first byte that was not taken */
        size_t entry = 0;
        for (size_t i = 0; i < out2.len; i++) {
            entry += text[i] == '\n';
        }
        char want[64];
        snprintf(want, sizeof want, "writing entry %zu failed", entry);
        assert_string_equal(err.message, want);
    }
}

/* ---- the id index an import lends the store ------------------------------
 * ctxc_import_text() checks the pairing rule through an id index it lends
 * the history at the end of the arena's free tail; the line-by-line API
 * scans the store. Both must answer the same, byte for byte, and the lent
 * bytes must come back (the arena's size, a text that needs all of it). */

#define LENT_SLOTS 512
static ctxc_slot_t lent_slots_a[LENT_SLOTS], lent_slots_b[LENT_SLOTS];
static uint8_t lent_arena_a[1 << 16], lent_arena_b[1 << 16];
static ctxc_history_t lent_a, lent_b;
static ctxc_import_t lent_imp_b;
static char lent_text[1 << 16];
static size_t lent_len;

static void lent_add(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    int n =
        vsnprintf(lent_text + lent_len, sizeof lent_text - lent_len, fmt, ap);
    va_end(ap);
    assert_true(n > 0 && (size_t)n < sizeof lent_text - lent_len);
    lent_len += (size_t)n;
}

/* An ai entry with a call of id c<k>, a tool entry answering id c<r>. */
static void lent_call(unsigned k) {
    lent_add("{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
             "\"step %u\"},{\"type\":\"tool_call\",\"id\":\"c%u\",\"name\":"
             "\"read_file\",\"parameters\":{\"file_path\":\"f%u.c\"}}]}\n",
             k, k, k);
}
static void lent_response(unsigned r) {
    lent_add("{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
             "\"callId\":\"c%u\",\"toolName\":\"read_file\",\"result\":"
             "\"int x%u;\"}]}\n",
             r, r);
}

/* `pairs` calls each answered, with a human entry every 7th. */
static void lent_history(unsigned pairs) {
    lent_len = 0;
    for (unsigned k = 0; k < pairs; k++) {
        if (k % 7 == 0) {
            lent_add("{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
                     "\"text\":\"go on %u\"}]}\n",
                     k);
        }
        lent_call(k);
        lent_response(k);
    }
}

/* Imports lent_text into `a` with ctxc_import_text and into `b` line by
 * line (no lent index): the same status, error, entries, bytes and
 * export. Returns the status. */
static ctxc_status_t lent_import_both(ctxc_history_t *a, ctxc_history_t *b) {
    ctxc_error_t ea, eb;
    memset(&ea, 0, sizeof ea);
    memset(&eb, 0, sizeof eb);
    ctxc_status_t sa =
        ctxc_import_text(&imp, a, lent_text, lent_len, CTXC_FORMAT_AUTO, &ea);
    ctxc_status_t sb = ctxc_import_begin(&lent_imp_b, b, CTXC_FORMAT_AUTO, &eb);
    assert_int_equal(sb, CTXC_OK);
    size_t start = 0;
    while (sb == CTXC_OK && start < lent_len) {
        const char *nl = memchr(lent_text + start, '\n', lent_len - start);
        size_t end = nl != NULL ? (size_t)(nl - lent_text) : lent_len;
        sb = ctxc_import_line(&lent_imp_b, lent_text + start, end - start, &eb);
        start = end + 1;
    }
    if (sb == CTXC_OK) {
        sb = ctxc_import_end(&lent_imp_b, &eb);
    }
    assert_int_equal(sa, sb);
    if (sa != CTXC_OK && sa != CTXC_E_NO_SPACE) {
        assert_int_equal(ea.line, eb.line);
        assert_string_equal(ea.message, eb.message);
    }
    assert_int_equal(ctxc_history_count(a), ctxc_history_count(b));
    ctxc_history_usage_t ua, ub;
    ctxc_history_usage(a, &ua);
    ctxc_history_usage(b, &ub);
    assert_int_equal(ua.bytes_used, ub.bytes_used);
    assert_int_equal(ua.bytes_max, ub.bytes_max);
    assert_int_equal(ua.bytes_hwm, ub.bytes_hwm);
    ctxc_history_stats_t ta, tb;
    ctxc_history_stats(a, &ta);
    ctxc_history_stats(b, &tb);
    assert_int_equal(ta.unpaired_calls, tb.unpaired_calls);
    assert_int_equal(ta.unpaired_responses, tb.unpaired_responses);
    export_to(a, &out);
    export_to(b, &out2);
    assert_string_equal(out.buf, out2.buf);
    if (sa != CTXC_OK) {
        err = ea;
    }
    return sa;
}

static void lent_reset(size_t arena_bytes) {
    ctxc_history_init(&lent_a, lent_slots_a, LENT_SLOTS, lent_arena_a,
                      arena_bytes, NULL);
    ctxc_history_init(&lent_b, lent_slots_b, LENT_SLOTS, lent_arena_b,
                      arena_bytes, NULL);
}

static void test_import_lent_index_same_answers(void **state) {
    (void)state;
    /* 150 pairs: the index grows from its first table several times */
    lent_reset(sizeof lent_arena_a);
    lent_history(150);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_OK);
    ctxc_history_usage_t u;
    ctxc_history_usage(&lent_a, &u);
    assert_int_equal(u.bytes_max, sizeof lent_arena_a); /* given back */

    /* a call id used again, long after its first call */
    lent_reset(sizeof lent_arena_a);
    lent_history(150);
    lent_call(3);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "id 'c3' is already used by the "
                                        "tool_call in entry 7"));
    assert_int_equal(ctxc_history_count(&lent_a), 0);

    /* a call answered twice */
    lent_reset(sizeof lent_arena_a);
    lent_history(150);
    lent_response(140);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "call 'c140' already has a "
                                        "tool_response"));

    /* a response before its call: stored unpaired, then the call refused */
    lent_reset(sizeof lent_arena_a);
    lent_history(40);
    lent_response(900);
    for (unsigned k = 1000; k < 1040; k++) {
        lent_call(k);
        lent_response(k);
    }
    lent_call(900);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "id 'c900' was answered before the "
                                        "call"));

    /* calls without responses and responses without calls: data */
    lent_reset(sizeof lent_arena_a);
    lent_history(30);
    for (unsigned k = 500; k < 520; k++) {
        lent_call(k);
        lent_response(k + 100);
    }
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_OK);
    ctxc_history_stats_t st;
    ctxc_history_stats(&lent_a, &st);
    assert_int_equal(st.unpaired_calls, 20);
    assert_int_equal(st.unpaired_responses, 20);
}

static void test_import_lent_index_on_a_history_with_entries(void **state) {
    (void)state;
    /* the index covers the entries there before the import */
    lent_reset(sizeof lent_arena_a);
    lent_history(60);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_OK);
    lent_len = 0;
    lent_call(700);
    lent_response(700);
    lent_call(12); /* used by an entry of the first import */
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "id 'c12' is already used"));
    assert_int_equal(ctxc_history_count(&lent_a), 60u * 2u + 9u);

    /* a history with an id index of its own keeps it */
    static uint8_t ids_a[CTXC_HISTORY_ID_INDEX_BYTES(256)];
    static uint8_t ids_b[CTXC_HISTORY_ID_INDEX_BYTES(256)];
    lent_reset(sizeof lent_arena_a);
    ctxc_history_set_id_index(&lent_a, ids_a, sizeof ids_a);
    ctxc_history_set_id_index(&lent_b, ids_b, sizeof ids_b);
    lent_history(100);
    lent_call(50);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_E_INVALID_ARG);
    lent_history(100);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_OK);
}

static void test_import_lent_index_gives_the_bytes_back(void **state) {
    (void)state;
    /* what the text takes, then an arena of exactly that size: the lent
     * bytes go back before the last lines need them */
    lent_reset(sizeof lent_arena_a);
    lent_history(120);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_OK);
    ctxc_history_usage_t u;
    ctxc_history_usage(&lent_a, &u);
    size_t need = u.bytes_used;
    for (size_t extra = 0; extra < 3000; extra += 97) {
        lent_reset(need + extra);
        assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_OK);
        ctxc_history_usage(&lent_a, &u);
        assert_int_equal(u.bytes_used, need);
        assert_int_equal(u.bytes_max, need + extra);
    }
    /* one byte less: the whole text's shortfall, nothing imported */
    lent_reset(need - 1);
    assert_int_equal(lent_import_both(&lent_a, &lent_b), CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
    assert_int_equal(ctxc_history_count(&lent_a), 0);
    ctxc_history_usage(&lent_a, &u);
    assert_int_equal(u.bytes_max, need - 1);
}

/* ---- robustness: mutated input never crashes, corrupts or half-imports --- */

static uint32_t rng_state = 2463534242u;
static uint32_t rng(void) { /* xorshift32, fixed seed: reproducible */
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static void
test_mutated_input_is_rejected_cleanly_or_round_trips(void **state) {
    (void)state;
    static const char seed[] =
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"fix "
        "caf\\u00e9 \\ud83d\\ude00\"}],\"metadata\":{\"cwd\":\"/w\"}}\n"
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"thinking\",\"thought\":"
        "\"t\"},"
        "{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":\"read_file\","
        "\"parameters\":{\"file_path\":\"a.c\",\"n\":[1,2.5e3,null,true]}}]}\n"
        "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
        "\"callId\":"
        "\"c1\",\"toolName\":\"read_file\",\"result\":\"int "
        "x;\\n\",\"error\":\"e\"}]}\n";
    static const char alphabet[] =
        "{}[]\",:\\u0123456789aeflnrstx \n\xc3\xa9\xff";
    static char buf[sizeof seed + 16];
    int accepted = 0, rejected = 0;
    for (int round = 0; round < 4000; round++) {
        size_t len = sizeof seed - 1;
        memcpy(buf, seed, len);
        int edits = 1 + (int)(rng() % 4);
        for (int k = 0; k < edits; k++) {
            size_t at = rng() % len;
            uint32_t op = rng() % 3;
            char c = alphabet[rng() % (sizeof alphabet - 1)];
            if (op == 0) {
                buf[at] = c; /* replace */
            } else if (op == 1 && len > 1) {
                memmove(buf + at, buf + at + 1, len - at - 1); /* delete */
                len--;
            } else if (len + 1 < sizeof buf) {
                memmove(buf + at + 1, buf + at, len - at); /* insert */
                buf[at] = c;
                len++;
            }
        }
        ctxc_history_clear(&hist);
        assert_int_equal(import_str(GOOD), CTXC_OK);
        memset(&err, 0, sizeof err);
        ctxc_status_t st =
            ctxc_import_text(&imp, &hist, buf, len, CTXC_FORMAT_AUTO, &err);
        if (st != CTXC_OK) {
            assert_int_equal(err.status, st);
            assert_true(err.line >= 1 && err.line <= 4);
            assert_true(strlen(err.message) > 0);
            assert_int_equal(ctxc_history_count(&hist), 1);
            export_to(&hist, &out);
            assert_string_equal(out.buf, GOOD);
            rejected++;
            continue;
        }
        accepted++;
        /* accepted: the canonical form is a fixed point */
        export_to(&hist, &out);
        ctxc_history_clear(&hist);
        assert_int_equal(ctxc_import_text(&imp, &hist, out.buf, out.len,
                                          CTXC_FORMAT_AUTO, &err),
                         CTXC_OK);
        export_to(&hist, &out2);
        assert_string_equal(out.buf, out2.buf);
    }
    /* both paths were exercised */
    assert_true(accepted > 100);
    assert_true(rejected > 100);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_canonical_output, setup),
        cmocka_unit_test_setup(test_values_are_stored_canonical, setup),
        cmocka_unit_test_setup(test_import_estimates_match_the_estimator,
                               setup),
        cmocka_unit_test_setup(test_every_block_type_round_trips, setup),
        cmocka_unit_test_setup(test_blank_lines_and_no_final_newline, setup),
        cmocka_unit_test_setup(test_unpaired_calls_and_responses_are_data,
                               setup),
        cmocka_unit_test_setup(test_not_json, setup),
        cmocka_unit_test_setup(test_wrong_shape, setup),
        cmocka_unit_test_setup(test_unknown_speaker_and_block_type, setup),
        cmocka_unit_test_setup(test_missing_field, setup),
        cmocka_unit_test_setup(test_wrong_type, setup),
        cmocka_unit_test_setup(test_invalid_utf8_and_surrogates, setup),
        cmocka_unit_test_setup(test_nesting_too_deep, setup),
        cmocka_unit_test_setup(test_line_larger_than_arena, setup),
        cmocka_unit_test_setup(test_arena_full_midway_rolls_back, setup),
        cmocka_unit_test_setup(test_too_many_tokens, setup),
        cmocka_unit_test_setup(test_import_api_misuse, setup),
        cmocka_unit_test_setup(test_openai_messages, setup),
        cmocka_unit_test_setup(test_openai_bad_input, setup),
        cmocka_unit_test_setup(test_export_buffer_and_errors, setup),
        cmocka_unit_test_setup(test_export_write_errors_stop_the_export, setup),
        cmocka_unit_test_setup(test_import_lent_index_same_answers, setup),
        cmocka_unit_test_setup(test_import_lent_index_on_a_history_with_entries,
                               setup),
        cmocka_unit_test_setup(test_import_lent_index_gives_the_bytes_back,
                               setup),
        cmocka_unit_test_setup(
            test_mutated_input_is_rejected_cleanly_or_round_trips, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
