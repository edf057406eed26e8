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

static char out[512];
static ctxc_llm_usage_t usage;
static ctxc_provider_reader_t rd;
static ctxc_error_t err;

static bool stream_mode;

static void reader(const char *api, size_t cap) {
    memset(&usage, 0, sizeof usage);
    memset(&rd, 0, sizeof rd);
    memset(out, 'x', sizeof out);
    memset(&err, 0, sizeof err);
    const ctxc_provider_t *p = ctxc_provider_find(api);
    assert_non_null(p);
    ctxc_provider_reader_init(&rd, p, stream_mode, out, cap, &usage);
}

/* As the client reads a stream: each event's data streamed to the reader
 * as it arrives, the event's end ends its JSON text. */
static ctxc_status_t on_data(void *user, const char *data, size_t len) {
    (void)user;
    return ctxc_provider_feed(&rd, data, len, &err);
}

static ctxc_status_t on_ev(void *user, const ctxc_sse_event_t *ev) {
    (void)user;
    if (ev->done) {
        rd.done = true;
        return CTXC_OK;
    }
    return ctxc_provider_end(&rd, &err);
}

/* Feeds an event stream one byte at a time, then finishes the answer. */
static ctxc_status_t stream_bytes(const char *api, const char *sse,
                                  size_t cap) {
    stream_mode = true;
    reader(api, cap);
    static char buf[64]; /* the line of an event or id field, no more */
    ctxc_sse_parser_t p;
    ctxc_sse_init(&p, buf, sizeof buf, on_ev, NULL);
    ctxc_sse_stream_data(&p, on_data);
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

/* A whole answer, fed one byte at a time (as a body arrives). */
static ctxc_status_t whole(const char *api, const char *json, size_t cap) {
    stream_mode = false;
    reader(api, cap);
    size_t n = strlen(json);
    for (size_t i = 0; i < n; i++) {
        ctxc_status_t st = ctxc_provider_feed(&rd, json + i, 1, &err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    ctxc_status_t st = ctxc_provider_end(&rd, &err);
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
    assert_non_null(strstr(err.message, "cut off by the model's output limit"));
    assert_int_equal(whole("anthropic",
                           "{\"content\":[{\"type\":\"text\",\"text\":\"S\"}],"
                           "\"stop_reason\":\"max_tokens\"}",
                           sizeof out),
                     CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "cut off by the model's output limit"));
    assert_int_equal(
        whole("gemini",
              "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"S\"}]},"
              "\"finishReason\":\"MAX_TOKENS\"}]}",
              sizeof out),
        CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "cut off by the model's output limit"));
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

/* Issue 25: an event larger than any buffer (a Gemini thought signature of
 * 7000 bytes) and an event with far more JSON values than the old token
 * array held (a gpt-5 moderation chunk) are read; what is not the answer's
 * text is skipped unread. The SSE buffer here is 64 bytes. */
static void test_events_of_any_size(void **state) {
    (void)state;
    static char sse[12000];
    size_t n = (size_t)snprintf(
        sse, sizeof sse,
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"Sum\","
        "\"thoughtSignature\":\"");
    for (size_t i = 0; i < 7000; i++) {
        sse[n++] = (char)('A' + i % 26u);
    }
    n +=
        (size_t)snprintf(sse + n, sizeof sse - n,
                         "\"}],\"role\":\"model\"},\"finishReason\":\"STOP\"}]}"
                         "\r\n\r\n");
    assert_int_equal(stream_bytes("gemini", sse, sizeof out), CTXC_OK);
    assert_string_equal(out, "Sum");

    n = (size_t)snprintf(sse, sizeof sse,
                         "data: {\"choices\":[{\"delta\":{\"content\":\"ok\"},"
                         "\"finish_reason\":null}],\"moderation\":[");
    for (size_t i = 0; i < 300; i++) {
        n += (size_t)snprintf(sse + n, sizeof sse - n,
                              "%s{\"c\":%u,\"s\":[0.5,true,null]}",
                              i ? "," : "", (unsigned)i);
    }
    n += (size_t)snprintf(sse + n, sizeof sse - n,
                          "]}\n\ndata: {\"choices\":[{\"delta\":{},"
                          "\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n");
    assert_int_equal(stream_bytes("openai", sse, sizeof out), CTXC_OK);
    assert_string_equal(out, "ok");
}

/* Issue 25: only a normal stop yields a summary; every other reason is an
 * error naming it (CTXC_E_STOPPED), streamed or whole. */
static void test_stop_reasons(void **state) {
    (void)state;
    static const struct {
        const char *api, *json, *reason;
    } c[] = {
        {"gemini",
         "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"S\"}]},"
         "\"finishReason\":\"SAFETY\"}]}",
         "SAFETY"},
        {"gemini",
         "{\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"S\"}]},"
         "\"finishReason\":\"RECITATION\"}]}",
         "RECITATION"},
        {"gemini",
         "{\"candidates\":[{\"finishReason\":\"PROHIBITED_CONTENT\"}]}",
         "PROHIBITED_CONTENT"},
        {"openai",
         "{\"choices\":[{\"message\":{\"content\":\"S\"},"
         "\"finish_reason\":\"content_filter\"}]}",
         "content_filter"},
        {"openai",
         "{\"choices\":[{\"message\":{\"content\":null},"
         "\"finish_reason\":\"tool_calls\"}]}",
         "tool_calls"},
        {"anthropic",
         "{\"content\":[{\"type\":\"text\",\"text\":\"S\"}],"
         "\"stop_reason\":\"refusal\"}",
         "refusal"},
        {"anthropic",
         "{\"content\":[{\"type\":\"text\",\"text\":\"S\"}],"
         "\"stop_reason\":\"pause_turn\"}",
         "pause_turn"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        assert_int_equal(whole(c[i].api, c[i].json, sizeof out),
                         CTXC_E_STOPPED);
        assert_non_null(strstr(err.message, c[i].reason));
        assert_non_null(strstr(err.message, "not a normal stop"));
    }
    /* streamed: text first, the safety stop last */
    assert_int_equal(
        stream_bytes("gemini",
                     "data: {\"candidates\":[{\"content\":{\"parts\":[{"
                     "\"text\":\"Part one\"}]}}]}\r\n\r\n"
                     "data: {\"candidates\":[{\"content\":{\"parts\":[{"
                     "\"text\":\" two\"}]},\"finishReason\":\"SAFETY\"}]}"
                     "\r\n\r\n",
                     sizeof out),
        CTXC_E_STOPPED);
    assert_string_equal(err.message, "gemini: the model stopped with finish "
                                     "reason SAFETY, not a normal stop");
    /* the normal stops of Anthropic */
    assert_int_equal(whole("anthropic",
                           "{\"content\":[{\"type\":\"text\",\"text\":\"S\"}],"
                           "\"stop_reason\":\"stop_sequence\"}",
                           sizeof out),
                     CTXC_OK);
    /* an OpenAI refusal */
    assert_int_equal(
        whole("openai",
              "{\"choices\":[{\"message\":{\"content\":null,\"refusal\":"
              "\"I can't help\"},\"finish_reason\":\"stop\"}]}",
              sizeof out),
        CTXC_E_STOPPED);
    assert_string_equal(err.message, "openai: the model refused: I can't help");
}

/* Issue 25: a blocked prompt (no candidates, promptFeedback.blockReason),
 * also when the stream's last blank line is missing. */
static void test_blocked_prompt(void **state) {
    (void)state;
    static const char *const sse[] = {
        "data: {\"promptFeedback\": {\"blockReason\": \"SAFETY\","
        "\"safetyRatings\": [{\"category\": \"X\",\"probability\": "
        "\"HIGH\"}]}}\r\n\r\n",
        "data: {\"promptFeedback\": {\"blockReason\": \"SAFETY\"}}\r\n"};
    for (size_t i = 0; i < 2; i++) {
        assert_int_equal(stream_bytes("gemini", sse[i], sizeof out),
                         CTXC_E_STOPPED);
        assert_string_equal(err.message,
                            "gemini: prompt blocked by the provider: SAFETY");
    }
    assert_int_equal(whole("gemini",
                           "{\"promptFeedback\":{\"blockReason\":\"OTHER\"}}",
                           sizeof out),
                     CTXC_E_STOPPED);
    assert_string_equal(err.message,
                        "gemini: prompt blocked by the provider: OTHER");
}

/* JSON objects are unordered: the key that says a piece is not the answer
 * (Gemini "thought": true, Anthropic's delta type) may come after it. */
static void test_deciding_key_after_the_text(void **state) {
    (void)state;
    assert_int_equal(
        stream_bytes(
            "gemini",
            "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":"
            "\"secret plan\",\"thought\":true},{\"text\":\"Sum\"}]},"
            "\"finishReason\":\"STOP\"}]}\n\n",
            sizeof out),
        CTXC_OK);
    assert_string_equal(out, "Sum");
    assert_int_equal(
        stream_bytes(
            "anthropic",
            "data: {\"delta\":{\"text\":\"no\",\"type\":\"other_delta\"},"
            "\"type\":\"content_block_delta\"}\n\n"
            "data: {\"delta\":{\"text\":\"Sum\",\"type\":\"text_delta\"},"
            "\"type\":\"content_block_delta\"}\n\n"
            "data: {\"delta\":{\"stop_reason\":\"end_turn\"},\"type\":"
            "\"message_delta\"}\n\n",
            sizeof out),
        CTXC_OK);
    assert_string_equal(out, "Sum");
}

/* Error bodies of any size (Gemini's always carry a details array): the
 * provider's own message. */
static void test_error_body_message(void **state) {
    (void)state;
    static char body[4096];
    size_t n = (size_t)snprintf(
        body, sizeof body,
        "{\n  \"error\": {\n    \"code\": 400,\n    \"message\": \"API key "
        "not valid. Please pass a valid API key.\",\n    \"status\": "
        "\"INVALID_ARGUMENT\",\n    \"details\": [");
    for (size_t i = 0; i < 40; i++) {
        n += (size_t)snprintf(body + n, sizeof body - n,
                              "%s{\"@type\": \"t\", \"reason\": \"R%u\"}",
                              i ? "," : "", (unsigned)i);
    }
    snprintf(body + n, sizeof body - n, "]\n  }\n}\n");
    stream_mode = false;
    reader("gemini", sizeof out);
    size_t len = strlen(body);
    for (size_t i = 0; i < len; i += 7) { /* 7-byte pieces */
        size_t k = len - i < 7 ? len - i : 7;
        assert_int_equal(ctxc_provider_feed(&rd, body + i, k, &err), CTXC_OK);
    }
    assert_int_equal(ctxc_provider_end(&rd, &err), CTXC_E_HTTP_STATUS);
    const char *msg = NULL;
    assert_true(ctxc_provider_error_message(&rd, &msg));
    assert_string_equal(msg, "API key not valid. Please pass a valid API key.");
}

/* The SSE reader in streaming mode: [DONE] never reaches the data callback,
 * data that only starts like it does; multi-line data is joined. */
static char seen[256];
static size_t seen_len;
static int events;
static ctxc_status_t seen_data(void *user, const char *d, size_t n) {
    (void)user;
    assert_true(seen_len + n < sizeof seen);
    memcpy(seen + seen_len, d, n);
    seen_len += n;
    return CTXC_OK;
}
static ctxc_status_t seen_ev(void *user, const ctxc_sse_event_t *ev) {
    (void)user;
    memcpy(seen + seen_len, ev->done ? "<done>" : "|", ev->done ? 6 : 1);
    seen_len += ev->done ? 6u : 1u;
    events++;
    return CTXC_OK;
}
static void test_sse_streaming_mode(void **state) {
    (void)state;
    static const char in[] = "data: [DO\n\ndata: [DONE]x\n\nid: 7\ndata: a\n"
                             "data:b\nretry: 10\nfoo: long value dropped\n"
                             "verylongfieldname: x\n\ndata: [DONE]\n\n"
                             "data: after\n\n";
    for (size_t piece = 1; piece <= 8; piece++) {
        char buf[16];
        ctxc_sse_parser_t p;
        ctxc_sse_init(&p, buf, sizeof buf, seen_ev, NULL);
        ctxc_sse_stream_data(&p, seen_data);
        seen_len = 0;
        events = 0;
        size_t n = strlen(in);
        for (size_t i = 0; i < n; i += piece) {
            size_t k = n - i < piece ? n - i : piece;
            assert_int_equal(ctxc_sse_feed(&p, in + i, k, &err), CTXC_OK);
        }
        assert_int_equal(ctxc_sse_finish(&p, &err), CTXC_OK);
        seen[seen_len] = '\0';
        assert_string_equal(seen, "[DO|[DONE]x|a\nb|<done>");
        assert_int_equal(events, 4);
        assert_true(ctxc_sse_done(&p));
    }
}

/* Issue 25: Anthropic and Gemini requests start with a user turn and
 * alternate: a run of one role is one turn with a block per message; a
 * request starting with the assistant gets a user turn first. OpenAI keeps
 * the messages as given. */
static void test_turns_alternate(void **state) {
    (void)state;
    static const ctxc_llm_role_t roles[] = {
        CTXC_LLM_ROLE_ASSISTANT, CTXC_LLM_ROLE_USER, CTXC_LLM_ROLE_USER};
    ctxc_llm_request_t req;
    memset(&req, 0, sizeof req);
    req.message_count = 3;
    req.message = msg_part;
    req.roles = roles;
    body_t b;
    memset(&b, 0, sizeof b);
    assert_int_equal(ctxc_provider_write_body(ctxc_provider_find("anthropic"),
                                              "m", false, &req, collect, &b),
                     CTXC_OK);
    assert_string_equal(
        b.buf,
        "{\"model\":\"m\",\"max_tokens\":8192,\"messages\":[{\"role\":\"user\","
        "\"content\":[{\"type\":\"text\",\"text\":\"(The conversation below "
        "begins with an assistant turn.)\"}]},{\"role\":\"assistant\","
        "\"content\":\"hi \\\"there\\\"\\n\"},{\"role\":\"user\",\"content\":"
        "[{\"type\":\"text\",\"text\":\"a\\\\b\\tc\\u0001\"},{\"type\":"
        "\"text\",\"text\":\"caf\xc3\xa9\"}]}],\"stream\":false}");
    memset(&b, 0, sizeof b);
    assert_int_equal(ctxc_provider_write_body(ctxc_provider_find("gemini"), "m",
                                              false, &req, collect, &b),
                     CTXC_OK);
    assert_string_equal(
        b.buf,
        "{\"contents\":[{\"role\":\"user\",\"parts\":[{\"text\":\"(The "
        "conversation below begins with an assistant turn.)\"}]},{"
        "\"role\":\"model\",\"parts\":[{\"text\":\"hi \\\"there\\\"\\n\"}"
        "]},{\"role\":\"user\",\"parts\":[{\"text\":\"a\\\\b\\tc\\u0001\"}"
        ",{\"text\":\"caf\xc3\xa9\"}]}]}");
}

/* Issue 25: a Gemini model name goes into the URL path only when it is one
 * segment of the characters model ids use. */
static void test_model_in_path(void **state) {
    (void)state;
    static ctxc_provider_client_t client;
    static const char *const bad[] = {
        "../../../admin/x", "..",    ".hidden", "a/b",
        "m%2e%2e",          "m?x=1", "m#f",     "m:x"};
    static const char *const good[] = {"gemini-2.5-flash", "gemini-1.5-pro-002",
                                       "m_1.0"};
    ctxc_port_t port;
    memset(&port, 0, sizeof port);
    ctxc_llm_t llm;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ctxc_provider_ref_t ref;
        memset(&ref, 0, sizeof ref);
        strcpy(ref.provider, "gemini");
        strcpy(ref.model, bad[i]);
        assert_int_equal(
            ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err),
            CTXC_E_INVALID_ARG);
        assert_non_null(strstr(err.message, "cannot go into the request URL"));
    }
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        ctxc_provider_ref_t ref;
        memset(&ref, 0, sizeof ref);
        strcpy(ref.provider, "gemini");
        strcpy(ref.model, good[i]);
        assert_int_equal(
            ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err),
            CTXC_OK);
    }
    /* in the body only (OpenAI): any text */
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    strcpy(ref.provider, "openai");
    strcpy(ref.model, "org/model:tag");
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, true, &llm, &err), CTXC_OK);
}

/* ---- issue 41: answer shapes of the second conformance set ----------------
 *
 * Each answer goes through the client as a live call does (the HTTP
 * client, chunk and SSE readers, the answer reader, the error path and the
 * key masking), over an in-memory transport that hands the response out in
 * 7-byte pieces, as the conformance replay sends it. */

static const char KEY[] = "sk-unit-0123456789abcdefghij";

typedef struct {
    char resp[16384];
    size_t len, pos;
    char sent[512]; /* the start of the request */
    size_t sent_len;
} canned_t;
static canned_t canned;
static const char *canned_base = "http://127.0.0.1:9"; /* call_with's */

static ctxc_status_t cn_connect(void *ctx, const char *host, uint16_t port,
                                bool tls, ctxc_error_t *e) {
    (void)host, (void)port, (void)tls, (void)e;
    ((canned_t *)ctx)->pos = 0;
    ((canned_t *)ctx)->sent_len = 0;
    return CTXC_OK;
}
static int32_t cn_send(void *ctx, const uint8_t *data, size_t len) {
    canned_t *c = ctx;
    size_t n = len < 4096u ? len : 4096u;
    size_t room = sizeof c->sent - 1u - c->sent_len;
    size_t k = n < room ? n : room;
    memcpy(c->sent + c->sent_len, data, k);
    c->sent_len += k;
    c->sent[c->sent_len] = '\0';
    return (int32_t)n;
}
static int32_t cn_recv(void *ctx, uint8_t *buf, size_t cap) {
    canned_t *c = ctx;
    if (c->pos >= c->len) {
        return CTXC_TRANSPORT_EOF;
    }
    size_t n = c->len - c->pos < 7u ? c->len - c->pos : 7u;
    n = n < cap ? n : cap;
    memcpy(buf, c->resp + c->pos, n);
    c->pos += n;
    return (int32_t)n;
}
static void cn_close(void *ctx) { (void)ctx; }
static const ctxc_transport_ops_t cn_ops = {
    cn_connect, cn_send, cn_recv, cn_close, NULL, NULL, NULL};
static ctxc_status_t cn_key(void *ctx, const char *name, char *buf, size_t cap,
                            size_t *len, ctxc_error_t *e) {
    (void)ctx, (void)name, (void)e;
    assert_true(sizeof KEY <= cap);
    memcpy(buf, KEY, sizeof KEY);
    *len = sizeof KEY - 1u;
    return CTXC_OK;
}

/* One call of api's client (stream or not) answered with HTTP status,
 * content type and body; the text goes to out (cap bytes). */
static ctxc_status_t call_with(const char *api, bool stream, unsigned status,
                               const char *type, const char *body, size_t cap) {
    static ctxc_provider_client_t client;
    ctxc_port_t port;
    memset(&port, 0, sizeof port);
    port.transport.ops = &cn_ops;
    port.transport.ctx = &canned;
    port.key = cn_key;
    int n = snprintf(canned.resp, sizeof canned.resp,
                     "HTTP/1.1 %u X\r\nContent-Type: %s\r\nContent-Length: "
                     "%u\r\nConnection: close\r\n\r\n%s",
                     status, type, (unsigned)strlen(body), body);
    assert_true(n > 0 && (size_t)n < sizeof canned.resp);
    canned.len = (size_t)n;
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    strcpy(ref.provider, api);
    strcpy(ref.model, "m-1");
    strcpy(ref.base_url, canned_base);
    strcpy(ref.auth_key_name, "UNIT_KEY");
    ctxc_llm_t llm;
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, 0, stream, &llm, &err),
        CTXC_OK);
    ctxc_llm_request_t req;
    memset(&req, 0, sizeof req);
    req.message_count = 1;
    req.message = msg_part;
    memset(out, 'x', sizeof out);
    memset(&usage, 0, sizeof usage);
    memset(&err, 0, sizeof err);
    size_t len = 0;
    assert_true(cap <= sizeof out);
    ctxc_status_t st = llm.complete(&llm, &req, out, cap, &len, &usage, &err);
    if (st == CTXC_OK) {
        assert_int_equal(len, strlen(out));
    }
    return st;
}

static ctxc_status_t stream_call(const char *sse, size_t cap) {
    return call_with("openai", true, 200, "text/event-stream", sse, cap);
}

/* The request path under a base URL that ends with the path's first
 * segment: Anthropic under .../v1 (as OpenAI-compatible servers are
 * given) and Gemini under .../v1beta get it once (issue 39 item 11). */
static void test_base_url_segment_not_doubled(void **state) {
    (void)state;
    static const struct {
        const char *api, *base, *line;
    } cases[] = {
        {"anthropic", "http://127.0.0.1:9/v1", "POST /v1/messages HTTP/1.1"},
        {"anthropic", "http://127.0.0.1:9/v1/", "POST /v1/messages HTTP/1.1"},
        {"anthropic", "http://127.0.0.1:9", "POST /v1/messages HTTP/1.1"},
        {"anthropic", "http://127.0.0.1:9/proxy", "POST /proxy/v1/messages "},
        {"openai", "http://127.0.0.1:9/v1", "POST /v1/chat/completions "},
        {"gemini", "http://127.0.0.1:9/v1beta",
         "POST /v1beta/models/m-1:generateContent "},
        {"gemini", "http://127.0.0.1:9",
         "POST /v1beta/models/m-1:generateContent "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        canned_base = cases[i].base;
        (void)call_with(cases[i].api, false, 500, "application/json", "{}", 64);
        if (strncmp(canned.sent, cases[i].line, strlen(cases[i].line)) != 0) {
            fail_msg("%s under %s: the request starts %.60s", cases[i].api,
                     cases[i].base, canned.sent);
        }
    }
    canned_base = "http://127.0.0.1:9";
}

/* A refusal streamed in pieces (gpt-4o structured output, content null):
 * the whole refusal is the message, not its last piece; one longer than
 * the reader keeps is cut and says so. */
static void test_refusal_in_pieces(void **state) {
    (void)state;
    static const char sse[] =
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
        "null,\"refusal\":\"\"},\"finish_reason\":null}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"refusal\":\"I'm\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"refusal\":\" very sorry,\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"refusal\":\" but I can't assist "
        "with that request\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"refusal\":\".\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{},\"finish_reason\":"
        "\"stop\"}"
        "]}\n\n"
        "data: [DONE]\n\n";
    static const char want[] = "openai: the model refused: I'm very sorry, but "
                               "I can't assist with that request.";
    assert_int_equal(stream_call(sse, sizeof out), CTXC_E_STOPPED);
    assert_string_equal(err.message, want);
    /* the same through the reader alone, byte by byte */
    assert_int_equal(stream_bytes("openai", sse, sizeof out), CTXC_E_STOPPED);
    assert_string_equal(err.message, want);
    /* unary: one piece, as before */
    assert_int_equal(
        call_with("openai", false, 200, "application/json",
                  "{\"choices\":[{\"index\":0,\"message\":{\"content\":null,"
                  "\"refusal\":\"I'm very sorry, but I can't assist with "
                  "that request.\"},\"finish_reason\":\"stop\"}]}",
                  sizeof out),
        CTXC_E_STOPPED);
    assert_string_equal(err.message, want);
    /* 40 pieces of 10 bytes: 400 bytes, more than the message holds */
    static char big[8192];
    size_t n = 0;
    for (unsigned i = 0; i < 40; i++) {
        n += (size_t)snprintf(big + n, sizeof big - n,
                              "data: {\"choices\":["
                              "{\"index\":0,\"delta\":{\"refusal\":"
                              "\"piece %02u. \"}}"
                              "]}\n\n",
                              i);
    }
    snprintf(big + n, sizeof big - n, "%s",
             "data: {\"choices\":["
             "{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}"
             "]}\n\n");
    assert_int_equal(stream_call(big, sizeof out), CTXC_E_STOPPED);
    assert_non_null(strstr(err.message, "openai: the model refused"));
    assert_non_null(strstr(err.message, "piece 00. piece 01. piece 02."));
    size_t len = strlen(err.message);
    assert_true(len > 10);
    assert_string_equal(err.message + len - 10, " ... (cut)");
    assert_null(strstr(err.message, "piece 39."));
    assert_true(strlen(err.message) < sizeof err.message);
}

/* Servers that send the whole message so far beside each delta
 * (Perplexity): only the delta is the stream. */
static void test_cumulative_message_beside_delta(void **state) {
    (void)state;
    static const char sse[] =
        "data: {\"choices\":["
        "{\"index\":0,\"finish_reason\":null,\"message\":{\"role\":"
        "\"assistant\",\"content\":\"Hello\"},\"delta\":{\"role\":"
        "\"assistant\",\"content\":\"Hello\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"finish_reason\":null,\"delta\":{\"content\":"
        "\" there\"},\"message\":{\"role\":\"assistant\",\"content\":"
        "\"Hello there\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"finish_reason\":\"stop\",\"message\":{"
        "\"content\":\"Hello there!\"},\"delta\":{\"content\":\"!\"}}"
        "]}\n\n";
    assert_int_equal(stream_call(sse, sizeof out), CTXC_OK);
    assert_string_equal(out, "Hello there!");
    assert_int_equal(stream_bytes("openai", sse, sizeof out), CTXC_OK);
    assert_string_equal(out, "Hello there!");
    /* a whole answer's text is its message, also when a stream was asked
     * for and a whole answer came */
    static const char one[] = "{\"choices\":[{\"index\":0,\"message\":{"
                              "\"content\":\"Hi\"},\"finish_reason\":"
                              "\"stop\"}]}";
    assert_int_equal(whole("openai", one, sizeof out), CTXC_OK);
    assert_string_equal(out, "Hi");
    for (int s = 0; s < 2; s++) {
        assert_int_equal(call_with("openai", s == 0, 200, "application/json",
                                   one, sizeof out),
                         CTXC_OK);
        assert_string_equal(out, "Hi");
        assert_int_equal(
            call_with("anthropic", s == 0, 200, "application/json",
                      "{\"type\":\"message\",\"content\":[{\"type\":\"text\","
                      "\"text\":\"Hi\"}],\"stop_reason\":\"end_turn\"}",
                      sizeof out),
            CTXC_OK);
        assert_string_equal(out, "Hi");
    }
}

/* Two choices interleaved (n=2): only choice 0 is the answer, its finish
 * reason the answer's; the choice's index may come after its delta, and
 * both choices may be in one chunk. */
static void test_two_choices_interleaved(void **state) {
    (void)state;
    static const char sse[] =
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":"
        "\"\"},\"finish_reason\":null}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"content\":\"I'm\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{\"role\":\"assistant\",\"content\":"
        "\"\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{\"content\":\"I'm\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"content\":\" unable\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"delta\":{\"content\":\" sadly\"},\"index\":1}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"delta\":{\"refusal\":\"no\"},\"index\":1}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{},\"finish_reason\":"
        "\"length\"}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"delta\":{\"content\":\" "
        "to\"},\"index\":0},{\"index\":1,"
        "\"delta\":{\"content\":\" to\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{\"content\":\"!"
        "\"}},{\"index\":0,"
        "\"delta\":{\"content\":\" say.\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{},\"finish_"
        "reason\":\"stop\"}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{},\"finish_"
        "reason\":\"stop\"}"
        "]}\n\n"
        "data: [DONE]\n\n";
    assert_int_equal(stream_call(sse, sizeof out), CTXC_OK);
    assert_string_equal(out, "I'm unable to say.");
    assert_string_equal(usage.finish_reason, "stop");
    assert_int_equal(stream_bytes("openai", sse, sizeof out), CTXC_OK);
    assert_string_equal(out, "I'm unable to say.");
    /* choice 0 cut by the output limit, choice 1 stopped: cut */
    static const char cut[] =
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{\"content\":\"I'm\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{\"content\":\"Yes.\"}}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":0,\"delta\":{},\"finish_reason\":\"length\"}"
        "]}\n\n"
        "data: {\"choices\":["
        "{\"index\":1,\"delta\":{},\"finish_reason\":"
        "\"stop\"}"
        "]}\n\n"
        "data: [DONE]\n\n";
    assert_int_equal(stream_call(cut, sizeof out), CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "cut off"));
    /* a whole answer with two choices: the one of index 0 */
    assert_int_equal(
        whole(
            "openai",
            "{\"choices\":[{\"message\":{\"content\":\"B\"},\"finish_reason\":"
            "\"length\",\"index\":1},{\"index\":0,\"message\":{\"content\":"
            "\"A\"},\"finish_reason\":\"stop\"}]}",
            sizeof out),
        CTXC_OK);
    assert_string_equal(out, "A");
    assert_string_equal(usage.finish_reason, "stop");
}

/* Error bodies without {"error":{"message":...}}: a top-level message
 * (Cerebras), {"object":"error","message":...} (Mistral, older vLLM),
 * {"detail": "..."} (Mistral's 401, FastAPI servers): the provider's
 * message, not the raw JSON; an error object still wins; a key the message
 * echoes is masked; the message is bounded. */
static void test_error_body_shapes(void **state) {
    (void)state;
    static const struct {
        unsigned status;
        const char *body, *want;
    } c[] = {
        {401,
         "{\"message\":\"Wrong API Key\",\"type\":\"invalid_request_error\","
         "\"param\":\"api_key\",\"code\":\"wrong_api_key\"}",
         "openai: HTTP 401: Wrong API Key"},
        {400,
         "{\"object\":\"error\",\"message\":\"Invalid model: bad model\","
         "\"type\":\"invalid_model\",\"param\":null,\"code\":\"1500\"}",
         "openai: HTTP 400: Invalid model: bad model"},
        {401, "{\"detail\":\"Unauthorized\"}",
         "openai: HTTP 401: Unauthorized"},
        {422, "{\"detail\":\"d\",\"message\":\"m\"}", "openai: HTTP 422: m"},
        {400, "{\"message\":\"m\",\"detail\":\"d\"}", "openai: HTTP 400: m"},
        {400, "{\"message\":\"top\",\"error\":{\"message\":\"inner\"}}",
         "openai: HTTP 400: inner"},
        {400, "{\"error\":{\"message\":\"inner\"},\"detail\":\"top\"}",
         "openai: HTTP 400: inner"},
        {500, "{\"error\":\"a string\",\"message\":\"top\"}",
         "openai: HTTP 500: a string"},
    };
    for (size_t i = 0; i < sizeof c / sizeof c[0]; i++) {
        for (int s = 0; s < 2; s++) {
            assert_int_equal(call_with("openai", s == 0, c[i].status,
                                       "application/json", c[i].body,
                                       sizeof out),
                             CTXC_E_HTTP_STATUS);
            assert_string_equal(err.message, c[i].want);
            assert_int_equal(usage.http_status, c[i].status);
        }
    }
    /* the key echoed in a top-level message or detail: masked */
    static char body[512];
    snprintf(body, sizeof body, "{\"message\":\"bad key %s.\"}", KEY);
    assert_int_equal(
        call_with("openai", true, 401, "application/json", body, sizeof out),
        CTXC_E_HTTP_STATUS);
    assert_non_null(strstr(err.message, "HTTP 401: bad key *****"));
    assert_null(strstr(err.message, "0123456789"));
    snprintf(body, sizeof body, "{\"detail\":\"key %s\"}", KEY);
    assert_int_equal(
        call_with("anthropic", true, 401, "application/json", body, sizeof out),
        CTXC_E_HTTP_STATUS);
    assert_non_null(strstr(err.message, "anthropic: HTTP 401: key *****"));
    assert_null(strstr(err.message, "0123456789"));
    /* a long message: cut to the reader's bound, printable */
    static char longb[4096];
    size_t n = (size_t)snprintf(longb, sizeof longb, "{\"message\":\"");
    for (size_t i = 0; i < 2000; i++) {
        if (i % 50u == 49u) {
            longb[n++] = '\\'; /* \n */
            longb[n++] = 'n';
        } else {
            longb[n++] = 'a';
        }
    }
    snprintf(longb + n, sizeof longb - n, "\"}");
    assert_int_equal(
        call_with("gemini", false, 500, "application/json", longb, sizeof out),
        CTXC_E_HTTP_STATUS);
    assert_non_null(strstr(err.message, "gemini: HTTP 500: aaaa"));
    assert_null(strchr(err.message, '\n'));
    assert_null(strchr(err.message, '{'));
    /* in a 200 answer a top-level message is not an error */
    assert_int_equal(
        call_with("openai", false, 200, "application/json",
                  "{\"message\":\"note\",\"choices\":[{\"index\":0,\"message\":"
                  "{\"content\":\"Sum\"},\"finish_reason\":\"stop\"}]}",
                  sizeof out),
        CTXC_OK);
    assert_string_equal(out, "Sum");
}

/* ---- issue 41: Anthropic's `event: error` inside a 200 stream -------------
 *
 * Recorded shape (bytes written for this test): a 200 event stream that
 * starts a message and then sends `event: error` with an error object of
 * type overloaded_error, rate_limit_error or api_error. These are the
 * service's transient failures (what a 529 or 429 says): the client
 * retries them, within its retries, the call's deadline and the port's
 * stop hook. Other error types (invalid_request_error) are not retried. */

static const char ANT_ERROR_FMT[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_01\","
    "\"type\":\"message\",\"role\":\"assistant\",\"content\":[],"
    "\"model\":\"m-1\",\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}"
    "\n\n"
    "event: error\n"
    "data: {\"type\":\"error\",\"error\":{\"type\":\"%s\",\"message\":"
    "\"%s\"}}\n\n";

static const char ANT_OK[] =
    "event: message_start\n"
    "data: {\"type\":\"message_start\",\"message\":{\"id\":\"msg_02\","
    "\"usage\":{\"input_tokens\":12,\"output_tokens\":1}}}\n\n"
    "event: content_block_start\n"
    "data: {\"type\":\"content_block_start\",\"index\":0,"
    "\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"
    "event: content_block_delta\n"
    "data: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":"
    "{\"type\":\"text_delta\",\"text\":\"Hello after the retry\"}}\n\n"
    "event: content_block_stop\n"
    "data: {\"type\":\"content_block_stop\",\"index\":0}\n\n"
    "event: message_delta\n"
    "data: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":"
    "\"end_turn\"},\"usage\":{\"output_tokens\":5}}\n\n"
    "event: message_stop\n"
    "data: {\"type\":\"message_stop\"}\n\n";

/* A transport answering each connection with the next of its responses. */
typedef struct {
    char resp[3][2048];
    size_t len[3], pos;
    unsigned conn, n;
} seq_t;
static seq_t seq;
static uint64_t seq_now;        /* the port's clock, moved by the delay hook */
static unsigned seq_stop_after; /* the stop hook says stop after so many
                                   delays (0: never) */
static unsigned seq_delays;

static ctxc_status_t sq_connect(void *ctx, const char *host, uint16_t port,
                                bool tls, ctxc_error_t *e) {
    (void)host, (void)port, (void)tls, (void)e;
    seq_t *q = ctx;
    q->pos = 0;
    q->conn++;
    return CTXC_OK;
}
static int32_t sq_send(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx, (void)data;
    return (int32_t)(len < 4096u ? len : 4096u);
}
static int32_t sq_recv(void *ctx, uint8_t *buf, size_t cap) {
    seq_t *q = ctx;
    unsigned i = q->conn - 1u < q->n ? q->conn - 1u : q->n - 1u;
    if (q->pos >= q->len[i]) {
        return CTXC_TRANSPORT_EOF;
    }
    size_t n = q->len[i] - q->pos < 7u ? q->len[i] - q->pos : 7u;
    n = n < cap ? n : cap;
    memcpy(buf, q->resp[i] + q->pos, n);
    q->pos += n;
    return (int32_t)n;
}
static const ctxc_transport_ops_t sq_ops = {
    sq_connect, sq_send, sq_recv, cn_close, NULL, NULL, NULL};
static uint64_t sq_clock(void *ctx) {
    (void)ctx;
    return seq_now;
}
static void sq_delay(void *ctx, uint32_t ms) {
    (void)ctx;
    seq_now += ms;
    seq_delays++;
}
static bool sq_stop(void *ctx) {
    (void)ctx;
    return seq_stop_after > 0 && seq_delays >= seq_stop_after;
}

static void seq_add(const char *sse) {
    int n = snprintf(seq.resp[seq.n], sizeof seq.resp[0],
                     "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "Connection: close\r\n\r\n%s",
                     sse);
    assert_true(n > 0 && (size_t)n < sizeof seq.resp[0]);
    seq.len[seq.n++] = (size_t)n;
}

static void seq_add_error(const char *type, const char *msg) {
    char sse[1024];
    int n = snprintf(sse, sizeof sse, ANT_ERROR_FMT, type, msg);
    assert_true(n > 0 && (size_t)n < sizeof sse);
    seq_add(sse);
}

/* One streamed Anthropic call over seq with retries and deadline. */
static ctxc_status_t seq_call(uint32_t retries, uint32_t deadline_ms) {
    static ctxc_provider_client_t client;
    ctxc_port_t port;
    memset(&port, 0, sizeof port);
    port.transport.ops = &sq_ops;
    port.transport.ctx = &seq;
    port.key = cn_key;
    port.clock = sq_clock;
    port.delay_ms = sq_delay;
    port.stop = sq_stop;
    seq.conn = 0;
    seq_delays = 0;
    ctxc_provider_ref_t ref;
    memset(&ref, 0, sizeof ref);
    strcpy(ref.provider, "anthropic");
    strcpy(ref.model, "m-1");
    strcpy(ref.base_url, "http://127.0.0.1:9");
    strcpy(ref.auth_key_name, "UNIT_KEY");
    ctxc_llm_t llm;
    assert_int_equal(
        ctxc_provider_llm(&client, &ref, &port, retries, true, &llm, &err),
        CTXC_OK);
    client.deadline_ms = deadline_ms;
    ctxc_llm_request_t req;
    memset(&req, 0, sizeof req);
    req.message_count = 1;
    req.message = msg_part;
    memset(out, 'x', sizeof out);
    memset(&usage, 0, sizeof usage);
    memset(&err, 0, sizeof err);
    size_t len = 0;
    return llm.complete(&llm, &req, out, sizeof out, &len, &usage, &err);
}

static void test_in_stream_overloaded_retried(void **state) {
    (void)state;
    static const char *const transient[] = {"overloaded_error",
                                            "rate_limit_error", "api_error"};
    for (size_t i = 0; i < 3; i++) {
        memset(&seq, 0, sizeof seq);
        seq_add_error(transient[i], "Overloaded");
        seq_add(ANT_OK);
        seq_now = 1000;
        assert_int_equal(seq_call(2, 0), CTXC_OK);
        assert_string_equal(out, "Hello after the retry");
        assert_int_equal(usage.attempts, 2);
        assert_int_equal(seq.conn, 2);
        assert_true(seq_now >= 1500); /* the backoff was waited */
    }
    /* retries exhausted: the provider's message is the error */
    memset(&seq, 0, sizeof seq);
    seq_add_error("overloaded_error", "Overloaded");
    seq_now = 1000;
    assert_int_equal(seq_call(1, 0), CTXC_E_HTTP_STATUS);
    assert_int_equal(usage.attempts, 2);
    assert_non_null(strstr(err.message, "Overloaded"));
    /* not a transient type: not retried */
    memset(&seq, 0, sizeof seq);
    seq_add_error("invalid_request_error", "prompt is too long");
    seq_add(ANT_OK);
    assert_int_equal(seq_call(2, 0), CTXC_E_HTTP_STATUS);
    assert_int_equal(usage.attempts, 1);
    assert_int_equal(seq.conn, 1);
    assert_non_null(strstr(err.message, "prompt is too long"));
}

/* The retry keeps the call's deadline and the port's stop hook. */
static void test_in_stream_overloaded_deadline_and_stop(void **state) {
    (void)state;
    memset(&seq, 0, sizeof seq);
    seq_add_error("overloaded_error", "Overloaded");
    seq_add(ANT_OK);
    seq_now = 1000;
    seq_stop_after = 0;
    /* the first wait (500 ms) would pass a 300 ms deadline */
    assert_int_equal(seq_call(2, 300), CTXC_E_TIMEOUT);
    assert_non_null(strstr(err.message, "call-deadline-ms"));
    assert_int_equal(seq.conn, 1);
    /* stopped in the pause before the second attempt */
    seq_now = 1000;
    seq_stop_after = 1;
    assert_int_equal(seq_call(2, 0), CTXC_E_CANCELLED);
    assert_non_null(strstr(err.message, "stop"));
    assert_int_equal(seq.conn, 1);
    seq_stop_after = 0;
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
        cmocka_unit_test(test_turns_alternate),
        cmocka_unit_test(test_model_in_path),
        cmocka_unit_test(test_events_of_any_size),
        cmocka_unit_test(test_stop_reasons),
        cmocka_unit_test(test_blocked_prompt),
        cmocka_unit_test(test_deciding_key_after_the_text),
        cmocka_unit_test(test_error_body_message),
        cmocka_unit_test(test_sse_streaming_mode),
        cmocka_unit_test(test_refusal_in_pieces),
        cmocka_unit_test(test_base_url_segment_not_doubled),
        cmocka_unit_test(test_cumulative_message_beside_delta),
        cmocka_unit_test(test_two_choices_interleaved),
        cmocka_unit_test(test_error_body_shapes),
        cmocka_unit_test(test_in_stream_overloaded_retried),
        cmocka_unit_test(test_in_stream_overloaded_deadline_and_stop),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
