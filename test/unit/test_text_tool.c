/*
 * Plain-text tool values (issue 40, part 3): ctxc_json_from_text() and
 * ctxc_history_append_text_tool(). Every byte is escaped as JSON.stringify
 * would (the canonical form the store keeps), invalid UTF-8 becomes U+FFFD
 * per byte, the values survive export and import byte for byte, and a
 * value that does not fit fails with the bytes missing and the history
 * unchanged, down to the last byte of the arena.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

CTXC_HISTORY_DEFINE(hist, 16, 16384);
CTXC_HISTORY_DEFINE(other, 16, 16384);
static t_snap_t snap;
static t_dump_t d1, d2;

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&hist);
    ctxc_history_clear(&other);
    return 0;
}

/* The JSON string of text[0..n) by ctxc_json_from_text, NUL-terminated
 * in a static buffer. */
static const char *quote(const char *text, size_t n) {
    static char buf[4096];
    ctxc_str_t out;
    ctxc_error_t err;
    ctxc_str_t in = {text, n};
    if (ctxc_json_from_text(in, buf, sizeof buf - 1, &out, &err) != CTXC_OK) {
        fail_msg("ctxc_json_from_text: %s", err.message);
    }
    assert_ptr_equal(out.ptr, buf);
    buf[out.len] = '\0';
    return buf;
}

/* JSON.stringify's escape of one ASCII byte, inside the quotes. */
static void stringify_byte(unsigned c, char *out) {
    switch (c) {
    case '\b': strcpy(out, "\\b"); return;
    case '\t': strcpy(out, "\\t"); return;
    case '\n': strcpy(out, "\\n"); return;
    case '\f': strcpy(out, "\\f"); return;
    case '\r': strcpy(out, "\\r"); return;
    case '"': strcpy(out, "\\\""); return;
    case '\\': strcpy(out, "\\\\"); return;
    default: break;
    }
    if (c < 0x20u) {
        snprintf(out, 8, "\\u%04x", c);
    } else {
        out[0] = (char)c;
        out[1] = '\0';
    }
}

static void test_every_ascii_byte(void **state) {
    (void)state;
    for (unsigned c = 0; c < 0x80u; c++) {
        char b = (char)c;
        char want[16] = "\"";
        stringify_byte(c, want + 1);
        strcat(want, "\"");
        assert_string_equal(quote(&b, 1), want);
    }
    assert_string_equal(quote("temp 21.4C", 10), "\"temp 21.4C\"");
    assert_string_equal(quote("", 0), "\"\"");
    assert_string_equal(quote(NULL, 0), "\"\"");
    /* what the store's own canonicaliser gives for each is the same: an
     * append of the JSON string through ctxc_history_append is stored as
     * it was written */
    for (unsigned c = 0; c < 0x80u; c++) {
        char b = (char)c;
        ctxc_block_t r = t_resp("c", "t", quote(&b, 1), NULL);
        ctxc_history_clear(&hist);
        t_add(&hist, CTXC_SPEAKER_TOOL, &r, 1);
        ctxc_entry_t e;
        ctxc_block_t got;
        assert_int_equal(ctxc_history_get(&hist, 0, &e), CTXC_OK);
        assert_int_equal(ctxc_entry_block(&e, 0, &got), CTXC_OK);
        assert_int_equal(got.u.tool_response.result.len, strlen(quote(&b, 1)));
        assert_memory_equal(got.u.tool_response.result.ptr, quote(&b, 1),
                            got.u.tool_response.result.len);
    }
}

static void test_utf8_kept_invalid_replaced(void **state) {
    (void)state;
    /* valid multi-byte sequences stay as they are */
    assert_string_equal(quote("\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80", 11),
                        "\"\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
    /* one U+FFFD per byte of no valid sequence */
#define FFFD "\xef\xbf\xbd"
    static const struct {
        const char *in;
        size_t n;
        const char *want;
    } cases[] = {
        {"\x80", 1, "\"" FFFD "\""},                    /* stray continuation */
        {"a\xc3", 2, "\"a" FFFD "\""},                  /* truncated */
        {"\xc0\xaf", 2, "\"" FFFD FFFD "\""},           /* overlong '/' */
        {"\xed\xa0\x80", 3, "\"" FFFD FFFD FFFD "\""},  /* surrogate */
        {"\xf4\x90\x80\x80", 4, "\"" FFFD FFFD FFFD FFFD "\""}, /* > 10FFFF */
        {"\xff\"", 2, "\"" FFFD "\\\"\""},
        {"\xe2\x82x", 3, "\"" FFFD FFFD "x\""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        assert_string_equal(quote(cases[i].in, cases[i].n), cases[i].want);
    }
#undef FFFD
}

static void test_json_from_text_no_space(void **state) {
    (void)state;
    char buf[8];
    memset(buf, 'X', sizeof buf);
    ctxc_error_t err;
    ctxc_str_t out = {NULL, 0};
    /* "a\nb" needs 6 bytes: "a\nb" with quotes */
    assert_int_equal(
        ctxc_json_from_text(CTXC_STR_LIT("a\nb"), buf, 5, &out, &err),
        CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
    assert_null(out.ptr);
    for (size_t i = 0; i < sizeof buf; i++) {
        assert_int_equal(buf[i], 'X'); /* nothing written */
    }
    assert_int_equal(
        ctxc_json_from_text(CTXC_STR_LIT("a\nb"), NULL, 0, NULL, &err),
        CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 6);
    assert_int_equal(
        ctxc_json_from_text(CTXC_STR_LIT("a\nb"), buf, 6, &out, &err),
        CTXC_OK);
    assert_int_equal(out.len, 6);
    assert_memory_equal(buf, "\"a\\nb\"", 6);
    assert_int_equal(buf[6], 'X');
    ctxc_str_t bad = {NULL, 3};
    assert_int_equal(ctxc_json_from_text(bad, buf, sizeof buf, &out, &err),
                     CTXC_E_INVALID_ARG);
}

/* Appends a call and its response with text values, with the raw
 * (unescaped) texts given. */
static ctxc_status_t add_pair(ctxc_history_t *h, const char *id,
                              const char *params, size_t pn,
                              const char *result, size_t rn,
                              ctxc_error_t *err) {
    ctxc_block_t c = t_call(id, "sensor", NULL);
    c.u.tool_call.parameters.ptr = params;
    c.u.tool_call.parameters.len = pn;
    ctxc_entry_in_t ci = {CTXC_SPEAKER_AI, &c, 1, CTXC_STR_ABSENT};
    ctxc_status_t st = ctxc_history_append_text_tool(h, &ci, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc_block_t r = t_resp(id, "sensor", NULL, NULL);
    r.u.tool_response.result.ptr = result;
    r.u.tool_response.result.len = rn;
    ctxc_entry_in_t ri = {CTXC_SPEAKER_TOOL, &r, 1,
                          CTXC_STR_LIT("{\"timestamp\":7}")};
    return ctxc_history_append_text_tool(h, &ri, err);
}

static void test_round_trip(void **state) {
    (void)state;
    ctxc_error_t err;
    char all[256];
    for (unsigned i = 0; i < 256u; i++) {
        all[i] = (char)i;
    }
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "What does channel 3 read?");
    assert_int_equal(add_pair(&hist, "c1", "channel 3", 9, "temp 21.4C", 10,
                              &err),
                     CTXC_OK);
    assert_int_equal(add_pair(&hist, "c2", all, sizeof all, all, sizeof all,
                              &err),
                     CTXC_OK);
    assert_int_equal(ctxc_history_count(&hist), 5);
    t_dump(&hist, &d1);
    assert_non_null(strstr(
        d1.buf, "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
                "\"callId\":\"c1\",\"toolName\":\"sensor\",\"result\":\"temp "
                "21.4C\"}],\"metadata\":{\"timestamp\":7}}\n"));
    assert_non_null(strstr(d1.buf, "\"parameters\":\"channel 3\""));
    /* the stored values are the escaper's strings */
    ctxc_entry_t e;
    ctxc_block_t b;
    assert_int_equal(ctxc_history_get(&hist, 4, &e), CTXC_OK);
    assert_int_equal(ctxc_entry_block(&e, 0, &b), CTXC_OK);
    const char *want = quote(all, sizeof all);
    assert_int_equal(b.u.tool_response.result.len, strlen(want));
    assert_memory_equal(b.u.tool_response.result.ptr, want, strlen(want));
    /* export, import, export: the same bytes */
    ctxc_history_clear(&other);
    static ctxc_import_t imp;
    assert_int_equal(ctxc_import_text(&imp, &other, d1.buf, d1.len,
                                      CTXC_FORMAT_AUTO, &err),
                     CTXC_OK);
    t_dump(&other, &d2);
    assert_string_equal(d2.buf, d1.buf);
    /* the same as the JSON strings given to the plain append */
    ctxc_history_clear(&other);
    t_add_text(&other, CTXC_SPEAKER_HUMAN, "What does channel 3 read?");
    static char p1[64], p2[2048];
    strcpy(p1, quote("channel 3", 9));
    strcpy(p2, quote(all, sizeof all));
    ctxc_block_t c1 = t_call("c1", "sensor", p1);
    t_add(&other, CTXC_SPEAKER_AI, &c1, 1);
    ctxc_block_t r1 = t_resp("c1", "sensor", "\"temp 21.4C\"", NULL);
    ctxc_entry_in_t ri = {CTXC_SPEAKER_TOOL, &r1, 1,
                          CTXC_STR_LIT("{\"timestamp\":7}")};
    assert_int_equal(ctxc_history_append(&other, &ri, &err), CTXC_OK);
    ctxc_block_t c2 = t_call("c2", "sensor", p2);
    t_add(&other, CTXC_SPEAKER_AI, &c2, 1);
    ctxc_block_t r2 = t_resp("c2", "sensor", p2, NULL);
    ri.blocks = &r2;
    assert_int_equal(ctxc_history_append(&other, &ri, &err), CTXC_OK);
    t_dump(&other, &d2);
    assert_string_equal(d2.buf, d1.buf);
    assert_int_equal(ctxc_history_tokens(&other), ctxc_history_tokens(&hist));
}

/* An ai entry of several blocks, each JSON value growing when escaped. */
static void fill_blocks(ctxc_block_t *b) {
    static const char p0[] = "a\"b\\c\n\x01";
    static const char p1[] = "\xff\xfe plain";
    b[0] = t_text("reading two channels");
    b[1] = t_call("k1", "read", NULL);
    b[1].u.tool_call.parameters = CTXC_STR_LIT(p0);
    b[2] = t_call("k2", "read", NULL);
    b[2].u.tool_call.parameters = CTXC_STR_LIT(p1);
    b[3] = t_text("done");
}

static void test_no_space_to_the_last_byte(void **state) {
    (void)state;
    ctxc_block_t b[4];
    fill_blocks(b);
    ctxc_entry_in_t in = {CTXC_SPEAKER_AI, b, 4, CTXC_STR_ABSENT};
    ctxc_error_t err;
    /* the record's size in a roomy history */
    assert_int_equal(ctxc_history_append_text_tool(&hist, &in, &err),
                     CTXC_OK);
    ctxc_history_usage_t u;
    ctxc_history_usage(&hist, &u);
    size_t size = u.bytes_used;
    t_dump(&hist, &d1);

    /* a history with one byte less than that free: refused, unchanged */
    static ctxc_slot_t slots[4];
    static uint8_t arena[1024] __attribute__((aligned(8)));
    static ctxc_history_t small;
    const char *first = "{\"speaker\":\"human\",\"blocks\":[{\"type\":"
                        "\"text\",\"text\":\"hello\"}]}\n";
    for (size_t extra = 0; extra < 2; extra++) {
        memset(arena, 0x5a, sizeof arena);
        assert_int_equal(ctxc_history_init(&small, slots, 4, arena, 64, &err),
                         CTXC_OK);
        t_add_text(&small, CTXC_SPEAKER_HUMAN, "hello");
        ctxc_history_usage(&small, &u);
        size_t arena_bytes = u.bytes_used + size - 1 + extra;
        assert_int_equal(ctxc_history_init(&small, slots, 4, arena,
                                           arena_bytes, &err),
                         CTXC_OK);
        t_add_text(&small, CTXC_SPEAKER_HUMAN, "hello");
        t_snapshot(&small, &snap);
        ctxc_status_t st = ctxc_history_append_text_tool(&small, &in, &err);
        if (extra == 0) {
            assert_int_equal(st, CTXC_E_NO_SPACE);
            assert_int_equal(err.needed, 1);
            t_assert_unchanged(&small, &snap);
            assert_int_equal(arena[arena_bytes], 0x5a); /* never past it */
        } else {
            /* exactly full: the staged strings and the record share the
             * free tail, and the stored entry is the same */
            assert_int_equal(st, CTXC_OK);
            ctxc_history_usage(&small, &u);
            assert_int_equal(u.bytes_used, arena_bytes);
            assert_int_equal(arena[arena_bytes], 0x5a);
            t_dump(&small, &d2);
            assert_int_equal(strncmp(d2.buf, first, strlen(first)), 0);
            assert_string_equal(d2.buf + strlen(first), d1.buf);
        }
    }
    /* slots full: needed is one slot */
    assert_int_equal(ctxc_history_init(&small, slots, 1, arena, 1024, &err),
                     CTXC_OK);
    t_add_text(&small, CTXC_SPEAKER_HUMAN, "hello");
    t_snapshot(&small, &snap);
    assert_int_equal(ctxc_history_append_text_tool(&small, &in, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
    t_assert_unchanged(&small, &snap);
}

static void test_checks_as_append(void **state) {
    (void)state;
    ctxc_error_t err;
    t_add_text(&hist, CTXC_SPEAKER_HUMAN, "hi");
    t_snapshot(&hist, &snap);
    /* a tool_response in a human entry: the pairing rule */
    ctxc_block_t r = t_resp("c1", "sensor", "temp", NULL);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &r, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_append_text_tool(&hist, &in, &err),
                     CTXC_E_INVALID_ARG);
    t_assert_unchanged(&hist, &snap);
    /* a missing result is missing, not an empty text */
    ctxc_block_t m = t_resp("c1", "sensor", NULL, NULL);
    in.speaker = CTXC_SPEAKER_TOOL;
    in.blocks = &m;
    assert_int_equal(ctxc_history_append_text_tool(&hist, &in, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(ctxc_error_message(&err), "result"));
    /* other fields are still checked: invalid UTF-8 in a call id */
    ctxc_block_t bad = t_resp("c\xff", "sensor", "temp", NULL);
    in.blocks = &bad;
    assert_int_equal(ctxc_history_append_text_tool(&hist, &in, &err),
                     CTXC_E_UTF8);
    /* metadata stays JSON */
    in.blocks = &r;
    in.metadata = CTXC_STR_LIT("not json");
    assert_int_equal(ctxc_history_append_text_tool(&hist, &in, &err),
                     CTXC_E_PARSE);
    t_assert_unchanged(&hist, &snap);
    assert_int_equal(ctxc_history_append_text_tool(NULL, &in, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_history_append_text_tool(&hist, NULL, &err),
                     CTXC_E_INVALID_ARG);
    /* the tool error field stays a plain string */
    ctxc_block_t e = t_resp("c9", "sensor", "", "timeout");
    in.blocks = &e;
    in.metadata = CTXC_STR_ABSENT;
    assert_int_equal(ctxc_history_append_text_tool(&hist, &in, &err),
                     CTXC_OK);
    t_dump(&hist, &d1);
    assert_non_null(strstr(d1.buf, "\"result\":\"\",\"error\":\"timeout\""));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_every_ascii_byte, setup),
        cmocka_unit_test_setup(test_utf8_kept_invalid_replaced, setup),
        cmocka_unit_test_setup(test_json_from_text_no_space, setup),
        cmocka_unit_test_setup(test_round_trip, setup),
        cmocka_unit_test_setup(test_no_space_to_the_last_byte, setup),
        cmocka_unit_test_setup(test_checks_as_append, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
