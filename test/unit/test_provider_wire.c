/*
 * The provider layer without a network (src/provider.c): the exact JSON
 * request bodies of the three APIs (escaping, roles, limits, both passes
 * alike) and the answer readers fed streamed events byte by byte through
 * the SSE reader, and whole answers: text, thinking left out, usage,
 * finish reasons, cut-offs, in-stream errors, too small buffers.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/provider.h"

/* ---- request bodies ------------------------------------------------------ */

static const char *const MSGS[] = {"hi \"there\"\n", "a\\b\tc\x01",
                                   "caf\xc3\xa9"};
static const ctxc_llm_role_t ROLES[] = {
    CTXC_LLM_ROLE_USER, CTXC_LLM_ROLE_ASSISTANT, CTXC_LLM_ROLE_USER};
static size_t piece; /* bytes per write() call of the parts; 0: whole */

static ctxc_status_t put_text(const char *s, ctxc_llm_write_fn write,
                              void *user) {
    size_t n = strlen(s);
    size_t step = piece == 0 ? (n == 0 ? 1 : n) : piece;
    for (size_t i = 0; i < n; i += step) {
        ctxc_status_t st = write(user, s + i, n - i < step ? n - i : step);
        if (st != CTXC_OK) {
            return st;
        }
    }
    return CTXC_OK;
}

static ctxc_status_t sys_part(void *src, size_t i, ctxc_llm_write_fn write,
                              void *user) {
    (void)src, (void)i;
    return put_text("Be brief.", write, user);
}

static ctxc_status_t msg_part(void *src, size_t i, ctxc_llm_write_fn write,
                              void *user) {
    (void)src;
    return put_text(MSGS[i], write, user);
}

static ctxc_status_t failing_part(void *src, size_t i, ctxc_llm_write_fn write,
                                  void *user) {
    (void)src, (void)i, (void)write, (void)user;
    return CTXC_E_IO;
}

typedef struct {
    char buf[4096];
    size_t len;
    size_t calls;
    size_t fail_at; /* 0: never */
} body_t;

static ctxc_status_t collect(void *user, const char *data, size_t len) {
    body_t *b = user;
    b->calls++;
    if (b->fail_at != 0 && b->calls == b->fail_at) {
        return CTXC_E_NETWORK;
    }
    assert_true(b->len + len < sizeof b->buf);
    memcpy(b->buf + b->len, data, len);
    b->len += len;
    b->buf[b->len] = '\0';
    return CTXC_OK;
}

static void body_of(const char *api, bool stream, uint32_t max, bool system,
                    body_t *b) {
    ctxc_llm_request_t req;
    memset(&req, 0, sizeof req);
    req.system = system ? sys_part : NULL;
    req.message_count = 3;
    req.message = msg_part;
    req.roles = ROLES;
    req.max_output_tokens = max;
    memset(b, 0, sizeof *b);
    const ctxc_provider_t *p = ctxc_provider_find(api);
    assert_non_null(p);
    assert_int_equal(
        ctxc_provider_write_body(p, "m-1", stream, &req, collect, b), CTXC_OK);
}

#define ESC_MSGS "hi \\\"there\\\"\\n", "a\\\\b\\tc\\u0001", "caf\xc3\xa9"

static void test_bodies_exact(void **state) {
    (void)state;
    body_t b;
    body_of("openai", true, 200, true, &b);
    assert_string_equal(
        b.buf, "{\"model\":\"m-1\",\"messages\":[{\"role\":\"system\","
               "\"content\":\"Be brief.\"},{\"role\":\"user\",\"content\":"
               "\"hi \\\"there\\\"\\n\"},{\"role\":\"assistant\",\"content\":"
               "\"a\\\\b\\tc\\u0001\"},{\"role\":\"user\",\"content\":"
               "\"caf\xc3\xa9\"}],\"stream\":true,\"stream_options\":{"
               "\"include_usage\":true},\"max_tokens\":200}");
    body_of("openai", false, 0, false, &b);
    assert_string_equal(
        b.buf, "{\"model\":\"m-1\",\"messages\":[{\"role\":\"user\","
               "\"content\":\"hi \\\"there\\\"\\n\"},{\"role\":\"assistant\","
               "\"content\":\"a\\\\b\\tc\\u0001\"},{\"role\":\"user\","
               "\"content\":\"caf\xc3\xa9\"}],\"stream\":false}");
    body_of("anthropic", true, 0, true, &b);
    assert_string_equal(
        b.buf, "{\"model\":\"m-1\",\"max_tokens\":8192,\"system\":\"Be "
               "brief.\",\"messages\":[{\"role\":\"user\",\"content\":\"hi "
               "\\\"there\\\"\\n\"},{\"role\":\"assistant\",\"content\":"
               "\"a\\\\b\\tc\\u0001\"},{\"role\":\"user\",\"content\":"
               "\"caf\xc3\xa9\"}],\"stream\":true}");
    body_of("anthropic", false, 77, false, &b);
    assert_string_equal(
        b.buf, "{\"model\":\"m-1\",\"max_tokens\":77,\"messages\":[{\"role\":"
               "\"user\",\"content\":\"hi \\\"there\\\"\\n\"},{\"role\":"
               "\"assistant\",\"content\":\"a\\\\b\\tc\\u0001\"},{\"role\":"
               "\"user\",\"content\":\"caf\xc3\xa9\"}],\"stream\":false}");
    body_of("gemini", true, 300, true, &b);
    assert_string_equal(
        b.buf, "{\"systemInstruction\":{\"parts\":[{\"text\":\"Be brief.\"}]},"
               "\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi "
               "\\\"there\\\"\\n\"}]},{\"role\":\"model\",\"parts\":[{\"text\":"
               "\"a\\\\b\\tc\\u0001\"}]},{\"role\":\"user\",\"parts\":[{"
               "\"text\":\"caf\xc3\xa9\"}]}],\"generationConfig\":{"
               "\"maxOutputTokens\":300}}");
    body_of("gemini", false, 0, false, &b);
    assert_string_equal(
        b.buf, "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"hi "
               "\\\"there\\\"\\n\"}]},{\"role\":\"model\",\"parts\":[{\"text\":"
               "\"a\\\\b\\tc\\u0001\"}]},{\"role\":\"user\",\"parts\":[{"
               "\"text\":\"caf\xc3\xa9\"}]}]}");
}

/* The same bytes on every pass, however the parts are cut into pieces (a
 * piece may end inside a UTF-8 sequence or before an escaped byte). */
static void test_passes_alike(void **state) {
    (void)state;
    static const char *const apis[] = {"openai", "anthropic", "gemini"};
    for (size_t a = 0; a < 3; a++) {
        body_t first, again;
        piece = 0;
        body_of(apis[a], true, 5, true, &first);
        for (piece = 1; piece <= 4; piece++) {
            body_of(apis[a], true, 5, true, &again);
            assert_int_equal(again.len, first.len);
            assert_memory_equal(again.buf, first.buf, first.len);
        }
        piece = 0;
    }
}

static void test_writer_errors_returned(void **state) {
    (void)state;
    ctxc_llm_request_t req;
    memset(&req, 0, sizeof req);
    req.message_count = 1;
    req.message = failing_part;
    body_t b;
    memset(&b, 0, sizeof b);
    assert_int_equal(ctxc_provider_write_body(ctxc_provider_find("openai"), "m",
                                              true, &req, collect, &b),
                     CTXC_E_IO);
    req.message = msg_part;
    for (size_t k = 1; k <= 5; k++) {
        memset(&b, 0, sizeof b);
        b.fail_at = k;
        assert_int_equal(ctxc_provider_write_body(ctxc_provider_find("gemini"),
                                                  "m", true, &req, collect, &b),
                         CTXC_E_NETWORK);
        assert_int_equal(b.calls, k); /* nothing written after the error */
    }
}

static void test_find(void **state) {
    (void)state;
    assert_null(ctxc_provider_find("nope"));
    assert_null(ctxc_provider_find(NULL));
    assert_string_equal(ctxc_provider_name(ctxc_provider_find("gemini")),
                        "gemini");
    assert_string_equal(
        ctxc_provider_default_base_url(ctxc_provider_find("openai")),
        "https://api.openai.com/v1");
}

/* ---- answer readers --------------------------------------------------------
 */

static ctxc_provider_tok_t toks[CTXC_CFG_PROVIDER_JSON_TOKENS];
static char out[512];
static ctxc_llm_usage_t usage;
static ctxc_provider_reader_t rd;
static ctxc_error_t err;

static void reader(const char *api, size_t cap) {
    memset(&usage, 0, sizeof usage);
    memset(&rd, 0, sizeof rd);
    memset(out, 'x', sizeof out);
    memset(&err, 0, sizeof err);
    rd.out = out;
    rd.cap = cap;
    rd.usage = &usage;
    rd.tok = toks;
    rd.tok_cap = CTXC_CFG_PROVIDER_JSON_TOKENS;
    rd.provider = ctxc_provider_find(api);
    assert_non_null(rd.provider);
}

static ctxc_status_t on_ev(void *user, const ctxc_sse_event_t *ev) {
    (void)user;
    if (ev->done) {
        rd.done = true;
        return CTXC_OK;
    }
    return ctxc_provider_read(&rd, ev->data, ev->data_len, true, &err);
}

/* Feeds an event stream one byte at a time, then finishes the answer. */
static ctxc_status_t stream_bytes(const char *api, const char *sse,
                                  size_t cap) {
    reader(api, cap);
    static char buf[2048];
    ctxc_sse_parser_t p;
    ctxc_sse_init(&p, buf, sizeof buf, on_ev, NULL);
    size_t n = strlen(sse);
    for (size_t i = 0; i < n; i++) {
        ctxc_status_t st = ctxc_sse_feed(&p, sse + i, 1, &err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    ctxc_status_t st = ctxc_sse_finish(&p, &err);
    return st != CTXC_OK ? st : ctxc_provider_finish(&rd, &err);
}

/* A whole answer, read from inside the output buffer (as the client does). */
static ctxc_status_t whole(const char *api, const char *json, size_t cap) {
    reader(api, cap);
    size_t n = strlen(json);
    assert_true(n < cap);
    memcpy(out, json, n);
    ctxc_status_t st = ctxc_provider_read(&rd, out, n, false, &err);
    return st != CTXC_OK ? st : ctxc_provider_finish(&rd, &err);
}

static const char OPENAI_SSE[] =
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"},\"finish_reason\":null}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"reasoning_content\":\"hmm\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"reasoning\":\"hmm\",\"content\":null}}]}"
    "\n\n"
    ": keep-alive\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"Sum \\\"A\\\"\\n\"}}]}\n\n"
    "data: {\"choices\":[{\"delta\":{\"content\":\"caf\\u00e9 \\ud83d\\ude00"
    "\"}}]}\r\n\r\n"
    "data: {\"choices\":[{\"delta\":{},\"finish_reason\":\"stop\"}]}\n\n"
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":11,"
    "\"completion_tokens\":5}}\n\n"
    "data: [DONE]\n\n";

static const char ANTHROPIC_SSE[] =
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{"
    "\"usage\":{\"input_tokens\":11,\"output_tokens\":1}}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
    "\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"hmm\"}}"
    "\n\n"
    "event: ping\ndata: {\"type\":\"ping\"}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
    "\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"Sum \\\"A\\\"\\n"
    "\"}}\n\n"
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\","
    "\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"caf\xc3\xa9 "
    "\\ud83d\\ude00\"}}\n\n"
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{"
    "\"stop_reason\":\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n";

static const char GEMINI_SSE[] =
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hmm\","
    "\"thought\":true}],\"role\":\"model\"}}]}\r\n\r\n"
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Sum "
    "\\\"A\\\"\\n\"}],\"role\":\"model\"}}]}\r\n\r\n"
    "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"caf\xc3\xa9 "
    "\\ud83d\\ude00\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}],"
    "\"usageMetadata\":{\"promptTokenCount\":11,\"candidatesTokenCount\":5}}"
    "\r\n\r\n";

static const char TEXT[] = "Sum \"A\"\ncaf\xc3\xa9 \xf0\x9f\x98\x80";

static void test_streams_byte_by_byte(void **state) {
    (void)state;
    static const struct {
        const char *api;
        const char *sse;
        const char *stop;
    } c[] = {{"openai", OPENAI_SSE, "stop"},
             {"anthropic", ANTHROPIC_SSE, "end_turn"},
             {"gemini", GEMINI_SSE, "STOP"}};
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(stream_bytes(c[i].api, c[i].sse, sizeof out), CTXC_OK);
        assert_string_equal(out, TEXT);
        assert_int_equal(rd.len, strlen(TEXT));
        assert_string_equal(usage.finish_reason, c[i].stop);
        assert_int_equal(usage.input_tokens, 11);
        assert_int_equal(usage.output_tokens, 5);
        /* too small: the bytes needed, the start of the text kept */
        assert_int_equal(stream_bytes(c[i].api, c[i].sse, 6), CTXC_E_TOO_LARGE);
        assert_int_equal(err.needed, strlen(TEXT) + 1);
        assert_string_equal(out, "Sum \"");
        /* every cap: the text or the exact size it needs */
        for (size_t cap = 1; cap <= strlen(TEXT) + 1; cap++) {
            ctxc_status_t st = stream_bytes(c[i].api, c[i].sse, cap);
            assert_int_equal(st,
                             cap > strlen(TEXT) ? CTXC_OK : CTXC_E_TOO_LARGE);
            assert_memory_equal(out, TEXT, cap - 1);
        }
    }
}

static void test_whole_answers(void **state) {
    (void)state;
    assert_int_equal(
        whole("openai",
              "{\"id\":\"x\",\"choices\":[{\"index\":0,\"message\":{\"role\":"
              "\"assistant\",\"reasoning_content\":\"hmm\",\"content\":\"Sum "
              "\\\"A\\\"\\ncaf\\u00e9 \\ud83d\\ude00\"},\"finish_reason\":"
              "\"stop\"}],\"usage\":{\"prompt_tokens\":11,"
              "\"completion_tokens\":5}}",
              sizeof out),
        CTXC_OK);
    assert_string_equal(out, TEXT);
    assert_string_equal(usage.finish_reason, "stop");
    assert_int_equal(usage.input_tokens, 11);
    assert_int_equal(usage.output_tokens, 5);
    assert_int_equal(
        whole("anthropic",
              "{\"type\":\"message\",\"content\":[{\"type\":\"thinking\","
              "\"thinking\":\"hmm\",\"signature\":\"s\"},{\"type\":\"text\","
              "\"text\":\"Sum \\\"A\\\"\\n\"},{\"type\":\"text\",\"text\":"
              "\"caf\xc3\xa9 \\ud83d\\ude00\"}],\"stop_reason\":\"end_turn\","
              "\"usage\":{\"input_tokens\":11,\"output_tokens\":5}}",
              sizeof out),
        CTXC_OK);
    assert_string_equal(out, TEXT);
    assert_string_equal(usage.finish_reason, "end_turn");
    assert_int_equal(usage.output_tokens, 5);
    assert_int_equal(
        whole("gemini",
              "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"hmm\","
              "\"thought\":true},{\"text\":\"Sum \\\"A\\\"\\n\"},{\"text\":"
              "\"caf\xc3\xa9 \\ud83d\\ude00\"}],\"role\":\"model\"},"
              "\"finishReason\":\"STOP\",\"index\":0}],\"usageMetadata\":{"
              "\"promptTokenCount\":11,\"candidatesTokenCount\":5}}",
              sizeof out),
        CTXC_OK);
    assert_string_equal(out, TEXT);
    assert_string_equal(usage.finish_reason, "STOP");
    assert_int_equal(usage.input_tokens, 11);
}

static void test_cut_and_malformed(void **state) {
    (void)state;
    assert_int_equal(whole("openai",
                           "{\"choices\":[{\"message\":{\"content\":\"Su\"},"
                           "\"finish_reason\":\"length\"}]}",
                           sizeof out),
                     CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "cut off by the output limit"));
    assert_int_equal(whole("anthropic",
                           "{\"content\":[{\"type\":\"text\",\"text\":\"S\"}],"
                           "\"stop_reason\":\"max_tokens\"}",
                           sizeof out),
                     CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "cut off by the output limit"));
    assert_int_equal(
        whole("gemini",
              "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"S\"}]},"
              "\"finishReason\":\"MAX_TOKENS\"}]}",
              sizeof out),
        CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "cut off by the output limit"));
    /* no finish reason: the stream ended early */
    assert_int_equal(
        stream_bytes(
            "openai",
            "data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\n",
            sizeof out),
        CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "without a finish reason"));
    assert_int_equal(whole("openai", "{\"choices\":[{\"message\":", sizeof out),
                     CTXC_E_PARSE);
    assert_int_equal(whole("gemini", "[1,2]", sizeof out), CTXC_E_PARSE);
    assert_int_equal(stream_bytes("anthropic", "", sizeof out), CTXC_E_PARSE);
}

static void test_in_stream_errors(void **state) {
    (void)state;
    assert_int_equal(
        stream_bytes("anthropic",
                     "event: error\ndata: {\"type\":\"error\",\"error\":{"
                     "\"type\":\"overloaded_error\",\"message\":\"Overloaded "
                     "\\u00e9\\u0007\"}}\n\n",
                     sizeof out),
        CTXC_E_HTTP_STATUS);
    assert_string_equal(err.message,
                        "anthropic: error in the answer: Overloaded ??");
    assert_int_equal(
        stream_bytes("openai", "data: {\"error\":{\"message\":\"boom\"}}\n\n",
                     sizeof out),
        CTXC_E_HTTP_STATUS);
    assert_string_equal(err.message, "openai: error in the answer: boom");
}

static void test_too_many_tokens(void **state) {
    (void)state;
    char js[2048];
    size_t n = (size_t)snprintf(js, sizeof js, "{\"choices\":[");
    for (size_t i = 0; i < CTXC_CFG_PROVIDER_JSON_TOKENS; i++) {
        n += (size_t)snprintf(js + n, sizeof js - n, "%s1", i ? "," : "");
    }
    snprintf(js + n, sizeof js - n, "]}");
    reader("openai", sizeof out);
    assert_int_equal(ctxc_provider_read(&rd, js, strlen(js), true, &err),
                     CTXC_E_TOO_LARGE);
    assert_non_null(strstr(err.message, "CTXC_CFG_PROVIDER_JSON_TOKENS"));
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bodies_exact),
        cmocka_unit_test(test_passes_alike),
        cmocka_unit_test(test_writer_errors_returned),
        cmocka_unit_test(test_find),
        cmocka_unit_test(test_streams_byte_by_byte),
        cmocka_unit_test(test_whole_answers),
        cmocka_unit_test(test_cut_and_malformed),
        cmocka_unit_test(test_in_stream_errors),
        cmocka_unit_test(test_too_many_tokens),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
