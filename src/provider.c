/*
 * ctxc — the provider table (expanded from CTXC_PROVIDER_LIST), the
 * streaming JSON request writer, the answer readers of the three APIs and
 * the client (key, retries) behind ctxc_llm_t.complete.
 */
#include <string.h>

#include "ctxc/provider.h"
#include "error.h"
#include "json.h"
#include "json_tok.h"

typedef ctxc__jtok_t tok_t;

/* Helpers a build without some providers may not call. */
#if defined(__GNUC__) || defined(__clang__)
#define PV_HELPER __attribute__((unused)) static
#else
#define PV_HELPER static
#endif

#if CTXC_CFG_PROVIDER_KEY_BYTES < 16
#error "CTXC_CFG_PROVIDER_KEY_BYTES must be at least 16"
#endif
#if CTXC_CFG_PROVIDER_JSON_TOKENS < 16
#error "CTXC_CFG_PROVIDER_JSON_TOKENS must be at least 16"
#endif
#if CTXC_CFG_PROVIDER_ERROR_BYTES < 64
#error "CTXC_CFG_PROVIDER_ERROR_BYTES must be at least 64"
#endif

_Static_assert(sizeof(ctxc_provider_tok_t) >= sizeof(ctxc__jtok_t),
               "ctxc_provider_tok_t must hold a JSON token");

/* ---- the streaming JSON writer ------------------------------------------- */

typedef struct {
    ctxc_http_write_fn write;
    void *user;
    ctxc_status_t st; /* the first error: nothing is written after it */
} jw_t;

PV_HELPER void jw_put(jw_t *w, const char *p, size_t n) {
    if (w->st == CTXC_OK && n > 0) {
        w->st = w->write(w->user, p, n);
    }
}

PV_HELPER void jw_puts(jw_t *w, const char *s) { jw_put(w, s, strlen(s)); }

/* Plain UTF-8 text as the body of a JSON string. Byte by byte, so a piece
 * may end inside a multi-byte sequence: bytes >= 0x80 go through as they
 * are; '"', '\' and control characters are escaped. */
PV_HELPER ctxc_status_t jw_text(void *user, const char *text, size_t len) {
    jw_t *w = user;
    size_t run = 0;
    for (size_t i = 0; i < len && w->st == CTXC_OK; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch >= 0x20u && ch != '"' && ch != '\\') {
            continue;
        }
        jw_put(w, text + run, i - run);
        run = i + 1;
        char e[6]; /* the JSON codec's escape of this character */
        ctxc__sink_t es = {e, sizeof e, 0};
        ctxc__json_escape_cp(&es, ch);
        jw_put(w, e, es.len);
    }
    if (run < len) {
        jw_put(w, text + run, len - run);
    }
    return w->st;
}

PV_HELPER void jw_str(jw_t *w, const char *s) {
    jw_put(w, "\"", 1);
    (void)jw_text(w, s, strlen(s));
    jw_put(w, "\"", 1);
}

PV_HELPER void jw_uint(jw_t *w, uint64_t v) {
    char b[24];
    ctxc__sink_t s = {b, sizeof b, 0};
    ctxc__put_uint(&s, v);
    jw_put(w, b, s.len);
}

/* A request part (system or message i) as a JSON string. */
PV_HELPER void jw_part(jw_t *w, ctxc_llm_part_fn fn, void *src, size_t i) {
    jw_put(w, "\"", 1);
    if (w->st == CTXC_OK) {
        ctxc_status_t st = fn(src, i, jw_text, w);
        if (st != CTXC_OK && w->st == CTXC_OK) {
            w->st = st;
        }
    }
    jw_put(w, "\"", 1);
}

PV_HELPER bool is_assistant(const ctxc_llm_request_t *req, size_t i) {
    return req->roles != NULL && req->roles[i] == CTXC_LLM_ROLE_ASSISTANT;
}

/* ---- reading answers ---------------------------------------------------- */

#define NONE ((size_t)-1)

/* The value of key in the object at o (NONE: o is not an object, or no such
 * key). */
PV_HELPER size_t get(const char *js, const tok_t *t, size_t o,
                     const char *key) {
    if (o == NONE || t[o].type != CTXC__JT_OBJECT) {
        return NONE;
    }
    size_t k = o + 1;
    for (uint32_t i = 0; i < t[o].size; i++) {
        if (ctxc__jtok_is(js, &t[k], key)) {
            return k + 1;
        }
        k = t[k + 1].next;
    }
    return NONE;
}

/* Element k of the array at a. */
PV_HELPER size_t at(const tok_t *t, size_t a, uint32_t k) {
    if (a == NONE || t[a].type != CTXC__JT_ARRAY || k >= t[a].size) {
        return NONE;
    }
    size_t e = a + 1;
    while (k-- > 0) {
        e = t[e].next;
    }
    return e;
}

PV_HELPER bool is_type(const tok_t *t, size_t v, int type) {
    return v != NONE && t[v].type == type;
}

PV_HELPER bool str_is(const char *js, const tok_t *t, size_t v, const char *s) {
    return is_type(t, v, CTXC__JT_STRING) && ctxc__jtok_is(js, &t[v], s);
}

/* A non-negative integer into *out (other values leave it). */
PV_HELPER void num(const char *js, const tok_t *t, size_t v, uint64_t *out) {
    if (!is_type(t, v, CTXC__JT_NUMBER)) {
        return;
    }
    uint64_t x = 0;
    for (uint32_t i = t[v].start; i < t[v].end; i++) {
        unsigned d = (unsigned)(js[i] - '0');
        if (d > 9u || x > (UINT64_MAX - d) / 10u) {
            return;
        }
        x = x * 10u + d;
    }
    *out = x;
}

/* Decodes string v into s, printable ASCII only (others become '?'). */
PV_HELPER void put_printable(ctxc__sink_t *s, const char *js, const tok_t *t,
                             size_t v) {
    ctxc__cp_iter_t it = {js + t[v].start, ctxc__jtok_n(&t[v]), 0,
                          (t[v].flags & CTXC__JF_ESCAPES) != 0 ? CTXC__SRC_JSTR
                                                               : CTXC__SRC_RAW};
    uint32_t cp;
    while (s->len < s->cap && ctxc__cp_next(&it, &cp, NULL) == 1) {
        ctxc__putc(s, cp >= 0x20u && cp < 0x7fu  ? (char)cp
                      : cp == '\n' || cp == '\t' ? ' '
                                                 : '?');
    }
}

/* The finish reason (a string; null and others leave it). */
PV_HELPER void reason(ctxc_provider_reader_t *r, const char *js, const tok_t *t,
                      size_t v) {
    if (!is_type(t, v, CTXC__JT_STRING)) {
        return;
    }
    ctxc__sink_t s = {r->usage->finish_reason,
                      sizeof r->usage->finish_reason - 1, 0};
    put_printable(&s, js, t, v);
    (void)ctxc__sink_cstr(&s);
    r->done = true;
}

/* Hands the text appended since `start` (the part stored in out) to the
 * caller's on_text hook. */
PV_HELPER void shown(const ctxc_provider_reader_t *r, size_t start) {
    size_t room = r->cap > 0 ? r->cap - 1 : 0;
    size_t end = r->len < room ? r->len : room;
    if (r->on_text != NULL && end > start) {
        (void)r->on_text(r->on_text_user, r->out + start, end - start);
    }
}

/* Appends the content of string v to the text (null and others: nothing).
 * Writes at out + len, never past a byte not yet read when js lies in out
 * (a decoded code point is never longer than its JSON spelling). */
PV_HELPER void text(ctxc_provider_reader_t *r, const char *js, const tok_t *t,
                    size_t v) {
    if (!is_type(t, v, CTXC__JT_STRING)) {
        return;
    }
    size_t room = r->cap > 0 ? r->cap - 1 : 0;
    const char *p = js + t[v].start;
    size_t n = ctxc__jtok_n(&t[v]);
    size_t start = r->len;
    if ((t[v].flags & CTXC__JF_ESCAPES) == 0) {
        if (r->len < room) {
            size_t k = room - r->len < n ? room - r->len : n;
            memmove(r->out + r->len, p, k);
        }
        r->len += n;
        shown(r, start);
        return;
    }
    ctxc__cp_iter_t it = {p, n, 0, CTXC__SRC_JSTR};
    uint32_t cp;
    while (ctxc__cp_next(&it, &cp, NULL) == 1) { /* validated by the scan */
        char b[4];
        size_t k = ctxc__utf8_encode(cp, b);
        if (r->len < room) { /* the first bytes, as a sink keeps them */
            memcpy(r->out + r->len, b, room - r->len < k ? room - r->len : k);
        }
        r->len += k;
    }
    shown(r, start);
}

/* The provider's message of an error object ({"error": {"message": ...}}
 * or {"error": "..."}) into s; false when there is none. */
static bool error_message(const char *js, const tok_t *t, ctxc__sink_t *s) {
    size_t e = get(js, t, 0, "error");
    if (e == NONE && t[0].type == CTXC__JT_ARRAY) { /* [{"error": ...}] */
        e = get(js, t, at(t, 0, 0), "error");
    }
    if (e == NONE) {
        return false;
    }
    size_t m = is_type(t, e, CTXC__JT_STRING) ? e : get(js, t, e, "message");
    if (!is_type(t, m, CTXC__JT_STRING)) {
        ctxc__puts(s, "(no message)");
        return true;
    }
    put_printable(s, js, t, m);
    return true;
}

/* An error object inside a 2xx answer (an in-stream error event). */
PV_HELPER ctxc_status_t stream_error(const ctxc_provider_reader_t *r,
                                     const char *js, const tok_t *t,
                                     ctxc_error_t *err) {
    char msg[112];
    ctxc__sink_t s = {msg, sizeof msg - 1, 0};
    if (!error_message(js, t, &s)) {
        return CTXC_OK;
    }
    return ctxc__fail(err, CTXC_E_HTTP_STATUS, "%s: error in the answer: %s",
                      ctxc_provider_name(r->provider), ctxc__sink_cstr(&s));
}

/* ---- the three APIs ------------------------------------------------------ */

struct ctxc_provider {
    const char *name;
    const char *base_url;
    const char *path;  /* after the base (gemini: before the model) */
    bool model_in_url; /* gemini: {path}{model}:generateContent */
    const char *auth_header;
    const char *auth_prefix; /* before the key in the header value */
    const char *extra_name;  /* one more fixed header, or NULL */
    const char *extra_value;
    const char *cut_reason; /* the finish reason of the output limit */
    void (*body)(jw_t *w, const char *model, bool stream,
                 const ctxc_llm_request_t *req);
    ctxc_status_t (*read)(ctxc_provider_reader_t *r, const char *js,
                          const tok_t *t, bool stream, ctxc_error_t *err);
};

/* The messages as {"role": "user"|"assistant", "content": text}, comma
 * separated (the shape OpenAI's and Anthropic's APIs share). */
PV_HELPER void jw_chat_messages(jw_t *w, const ctxc_llm_request_t *req) {
    for (size_t i = 0; i < req->message_count; i++) {
        jw_puts(w, i > 0 ? ",{\"role\":" : "{\"role\":");
        jw_puts(w, is_assistant(req, i) ? "\"assistant\"" : "\"user\"");
        jw_puts(w, ",\"content\":");
        jw_part(w, req->message, req->src, i);
        jw_puts(w, "}");
    }
}

#if CTXC_CFG_PROVIDER_OPENAI
static void openai_body(jw_t *w, const char *model, bool stream,
                        const ctxc_llm_request_t *req) {
    jw_puts(w, "{\"model\":");
    jw_str(w, model);
    jw_puts(w, ",\"messages\":[");
    if (req->system != NULL) {
        jw_puts(w, "{\"role\":\"system\",\"content\":");
        jw_part(w, req->system, req->src, 0);
        jw_puts(w, "},");
    }
    jw_chat_messages(w, req);
    jw_puts(w, stream ? "],\"stream\":true,\"stream_options\":{"
                        "\"include_usage\":true}"
                      : "],\"stream\":false");
    if (req->max_output_tokens > 0) {
        jw_puts(w, ",\"max_tokens\":");
        jw_uint(w, req->max_output_tokens);
    }
    jw_puts(w, "}");
}

static ctxc_status_t openai_read(ctxc_provider_reader_t *r, const char *js,
                                 const tok_t *t, bool stream,
                                 ctxc_error_t *err) {
    ctxc_status_t st = stream_error(r, js, t, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t ch = at(t, get(js, t, 0, "choices"), 0);
    size_t u = get(js, t, 0, "usage");
    num(js, t, get(js, t, u, "prompt_tokens"), &r->usage->input_tokens);
    num(js, t, get(js, t, u, "completion_tokens"), &r->usage->output_tokens);
    reason(r, js, t, get(js, t, ch, "finish_reason"));
    /* the text last: a whole answer is decoded in place */
    size_t m = get(js, t, ch, stream ? "delta" : "message");
    text(r, js, t, get(js, t, m, "content"));
    return CTXC_OK;
}
#endif

#if CTXC_CFG_PROVIDER_ANTHROPIC
static void anthropic_body(jw_t *w, const char *model, bool stream,
                           const ctxc_llm_request_t *req) {
    jw_puts(w, "{\"model\":");
    jw_str(w, model);
    jw_puts(w, ",\"max_tokens\":");
    jw_uint(w, req->max_output_tokens > 0 ? req->max_output_tokens
                                          : CTXC_CFG_PROVIDER_MAX_TOKENS);
    if (req->system != NULL) {
        jw_puts(w, ",\"system\":");
        jw_part(w, req->system, req->src, 0);
    }
    jw_puts(w, ",\"messages\":[");
    jw_chat_messages(w, req);
    jw_puts(w, stream ? "],\"stream\":true}" : "],\"stream\":false}");
}

static ctxc_status_t anthropic_read(ctxc_provider_reader_t *r, const char *js,
                                    const tok_t *t, bool stream,
                                    ctxc_error_t *err) {
    ctxc_status_t st = stream_error(r, js, t, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc_llm_usage_t *us = r->usage;
    size_t type = get(js, t, 0, "type");
    if (!stream) {
        size_t u = get(js, t, 0, "usage");
        num(js, t, get(js, t, u, "input_tokens"), &us->input_tokens);
        num(js, t, get(js, t, u, "output_tokens"), &us->output_tokens);
        reason(r, js, t, get(js, t, 0, "stop_reason"));
        size_t c = get(js, t, 0, "content");
        for (uint32_t i = 0; is_type(t, c, CTXC__JT_ARRAY) && i < t[c].size;
             i++) {
            size_t b = at(t, c, i);
            if (str_is(js, t, get(js, t, b, "type"), "text")) {
                text(r, js, t, get(js, t, b, "text"));
            }
        }
    } else if (str_is(js, t, type, "message_start")) {
        size_t u = get(js, t, get(js, t, 0, "message"), "usage");
        num(js, t, get(js, t, u, "input_tokens"), &us->input_tokens);
        num(js, t, get(js, t, u, "output_tokens"), &us->output_tokens);
    } else if (str_is(js, t, type, "content_block_delta")) {
        size_t d = get(js, t, 0, "delta");
        if (str_is(js, t, get(js, t, d, "type"), "text_delta")) {
            text(r, js, t, get(js, t, d, "text"));
        } /* thinking_delta, signature_delta, input_json_delta: not text */
    } else if (str_is(js, t, type, "message_delta")) {
        size_t u = get(js, t, 0, "usage");
        num(js, t, get(js, t, u, "input_tokens"), &us->input_tokens);
        num(js, t, get(js, t, u, "output_tokens"), &us->output_tokens);
        reason(r, js, t, get(js, t, get(js, t, 0, "delta"), "stop_reason"));
    } else if (str_is(js, t, type, "message_stop")) {
        r->done = true;
    }
    return CTXC_OK;
}
#endif

#if CTXC_CFG_PROVIDER_GEMINI
static void gemini_body(jw_t *w, const char *model, bool stream,
                        const ctxc_llm_request_t *req) {
    (void)model, (void)stream; /* both are in the URL */
    jw_puts(w, "{");
    if (req->system != NULL) {
        jw_puts(w, "\"systemInstruction\":{\"parts\":[{\"text\":");
        jw_part(w, req->system, req->src, 0);
        jw_puts(w, "}]},");
    }
    jw_puts(w, "\"contents\":[");
    for (size_t i = 0; i < req->message_count; i++) {
        jw_puts(w, i > 0 ? ",{\"role\":" : "{\"role\":");
        jw_puts(w, is_assistant(req, i) ? "\"model\"" : "\"user\"");
        jw_puts(w, ",\"parts\":[{\"text\":");
        jw_part(w, req->message, req->src, i);
        jw_puts(w, "}]}");
    }
    jw_puts(w, "]");
    if (req->max_output_tokens > 0) {
        jw_puts(w, ",\"generationConfig\":{\"maxOutputTokens\":");
        jw_uint(w, req->max_output_tokens);
        jw_puts(w, "}");
    }
    jw_puts(w, "}");
}

static ctxc_status_t gemini_read(ctxc_provider_reader_t *r, const char *js,
                                 const tok_t *t, bool stream,
                                 ctxc_error_t *err) {
    (void)stream; /* every streamed chunk is a whole response */
    ctxc_status_t st = stream_error(r, js, t, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t c = at(t, get(js, t, 0, "candidates"), 0);
    size_t u = get(js, t, 0, "usageMetadata");
    num(js, t, get(js, t, u, "promptTokenCount"), &r->usage->input_tokens);
    num(js, t, get(js, t, u, "candidatesTokenCount"), &r->usage->output_tokens);
    reason(r, js, t, get(js, t, c, "finishReason"));
    size_t parts = get(js, t, get(js, t, c, "content"), "parts");
    for (uint32_t i = 0; is_type(t, parts, CTXC__JT_ARRAY) && i < t[parts].size;
         i++) {
        size_t p = at(t, parts, i);
        if (!is_type(t, get(js, t, p, "thought"), CTXC__JT_TRUE)) {
            text(r, js, t, get(js, t, p, "text"));
        }
    }
    return CTXC_OK;
}
#endif

/* CTXC_CFG_PROVIDER_<NAME> is 0 or 1: an empty slot or the provider. */
#define CTXC_PV_CAT_(a, b) a##b
#define CTXC_PV_CAT(a, b) CTXC_PV_CAT_(a, b)
#define CTXC_PV_IF_0(...)                                                      \
    { 0 }
#define CTXC_PV_IF_1(...) __VA_ARGS__
#define CTXC_PV_STR_0(...)
#define CTXC_PV_STR_1(...) __VA_ARGS__

#define CTXC__PV_OPENAI                                                        \
    "https://api.openai.com/v1", "/chat/completions", false, "Authorization",  \
        "Bearer ", NULL, NULL, "length", openai_body, openai_read
#define CTXC__PV_ANTHROPIC                                                     \
    "https://api.anthropic.com", "/v1/messages", false, "x-api-key", "",       \
        "anthropic-version", "2023-06-01", "max_tokens", anthropic_body,       \
        anthropic_read
#define CTXC__PV_GEMINI                                                        \
    "https://generativelanguage.googleapis.com", "/v1beta/models/", true,      \
        "x-goog-api-key", "", NULL, NULL, "MAX_TOKENS", gemini_body,           \
        gemini_read

static const struct ctxc_provider table[CTXC_PROVIDER_COUNT] = {
#define CTXC_PV_ENTRY_(id, cfg, name)                                          \
    CTXC_PV_CAT(CTXC_PV_IF_, cfg)({name, CTXC__PV_##id}),
    CTXC_PROVIDER_LIST(CTXC_PV_ENTRY_)
#undef CTXC_PV_ENTRY_
};

/* " openai anthropic gemini": the compiled-in ones. */
#define CTXC_PV_NAME_(id, cfg, name) CTXC_PV_CAT(CTXC_PV_STR_, cfg)(" " name)
static const char compiled_in[] = "" CTXC_PROVIDER_LIST(CTXC_PV_NAME_);
#undef CTXC_PV_NAME_

const ctxc_provider_t *ctxc_provider_find(const char *name) {
    for (size_t i = 0; name != NULL && i < CTXC_PROVIDER_COUNT; i++) {
        if (table[i].name != NULL && strcmp(table[i].name, name) == 0) {
            return &table[i];
        }
    }
    return NULL;
}

const char *ctxc_provider_name(const ctxc_provider_t *p) { return p->name; }

const char *ctxc_provider_default_base_url(const ctxc_provider_t *p) {
    return p->base_url;
}

ctxc_status_t ctxc_provider_write_body(const ctxc_provider_t *p,
                                       const char *model, bool stream,
                                       const ctxc_llm_request_t *req,
                                       ctxc_http_write_fn write, void *user) {
    jw_t w = {write, user, CTXC_OK};
    p->body(&w, model, stream, req);
    return w.st;
}

ctxc_status_t ctxc_provider_read(ctxc_provider_reader_t *r, const char *js,
                                 size_t len, bool stream, ctxc_error_t *err) {
    const char *name = r->provider->name;
    tok_t *t = (tok_t *)(void *)r->tok;
    size_t cap = r->tok_cap * sizeof(ctxc_provider_tok_t) / sizeof(tok_t);
    size_t n = 0;
    ctxc_status_t st = ctxc__json_scan(js, len, CTXC_CFG_JSON_MAX_DEPTH, t, cap,
                                       &n, NULL, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "%s: the answer is not JSON", name);
        return ctxc__fail(err, CTXC_E_PARSE, "%s", ctxc_error_message(err));
    }
    if (n > cap) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "%s: the answer has %z JSON tokens, more than %z "
                          "(CTXC_CFG_PROVIDER_JSON_TOKENS)",
                          name, n, cap);
    }
    if (t[0].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: the answer is not a JSON object", name);
    }
    r->any = true;
    return r->provider->read(r, js, t, stream, err);
}

ctxc_status_t ctxc_provider_finish(ctxc_provider_reader_t *r,
                                   ctxc_error_t *err) {
    const char *name = r->provider->name;
    if (!r->any) {
        return ctxc__fail(err, CTXC_E_PARSE, "%s: the answer was empty", name);
    }
    if (strcmp(r->usage->finish_reason, r->provider->cut_reason) == 0) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: the summary was cut off by the output limit "
                          "(finish reason %s)",
                          name, r->usage->finish_reason);
    }
    if (!r->done) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: the answer ended without a finish reason", name);
    }
    if (r->len >= r->cap) {
        ctxc_status_t st = ctxc__fail(err, CTXC_E_TOO_LARGE,
                                      "%s: the answer's text (%z bytes) does "
                                      "not fit the output buffer (%z bytes)",
                                      name, r->len, r->cap);
        if (err != NULL) {
            err->needed = r->len + 1;
        }
        if (r->cap > 0) {
            r->out[r->cap - 1] = '\0';
        }
        return st;
    }
    r->out[r->len] = '\0';
    return CTXC_OK;
}

/* ---- the client ---------------------------------------------------------- */

/* One call's state, handed to the HTTP callbacks. */
typedef struct {
    ctxc_provider_client_t *c;
    const ctxc_llm_request_t *req;
    ctxc_provider_reader_t r;
    const ctxc_http_response_t *resp;
    size_t raw_len; /* bytes of a whole (non-event) 2xx body */
    ctxc_error_t *err;
} call_t;

static ctxc_status_t body_cb(void *user, ctxc_http_write_fn write,
                             void *write_user) {
    const call_t *k = user;
    return ctxc_provider_write_body(k->c->provider_, k->c->model_,
                                    k->c->stream_, k->req, write, write_user);
}

static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    call_t *k = user;
    if (ev->done) { /* OpenAI's data: [DONE] */
        k->r.done = true;
        return CTXC_OK;
    }
    if (ev->data_len == 0) {
        return CTXC_OK;
    }
    return ctxc_provider_read(&k->r, ev->data, ev->data_len, true, k->err);
}

static ctxc_status_t on_body(void *user, const char *data, size_t len) {
    call_t *k = user;
    ctxc_provider_client_t *c = k->c;
    if (k->resp->status >= 400u) { /* the error body: its first bytes */
        size_t room = sizeof c->errbody_ - c->errbody_len_;
        size_t n = len < room ? len : room;
        memcpy(c->errbody_ + c->errbody_len_, data, n);
        c->errbody_len_ += n;
    } else if (k->resp->status >= 200u && k->resp->status < 300u &&
               !k->resp->event_stream) {
        /* a whole answer: into the output buffer, read at the end */
        size_t room = k->r.cap > 0 ? k->r.cap - 1 : 0;
        if (k->raw_len < room) {
            size_t n = room - k->raw_len < len ? room - k->raw_len : len;
            memcpy(k->r.out + k->raw_len, data, n);
        }
        k->raw_len += len;
    }
    return CTXC_OK;
}

/* The message of an HTTP error status: the provider's own message when its
 * error body is JSON with one, else the HTTP client's message. */
static void http_error(call_t *k, ctxc_error_t *err) {
    ctxc_provider_client_t *c = k->c;
    tok_t *t = (tok_t *)(void *)c->tok_;
    size_t cap = sizeof(c->tok_) / (sizeof(tok_t));
    size_t n = 0;
    char msg[112];
    ctxc__sink_t s = {msg, sizeof msg - 1, 0};
    if (ctxc__json_scan(c->errbody_, c->errbody_len_, CTXC_CFG_JSON_MAX_DEPTH,
                        t, cap, &n, NULL, NULL) == CTXC_OK &&
        n <= cap && error_message(c->errbody_, t, &s)) {
        (void)ctxc__fail(err, CTXC_E_HTTP_STATUS, "%s: HTTP %u: %s",
                         c->provider_->name, (unsigned)k->resp->status,
                         ctxc__sink_cstr(&s));
    } else {
        ctxc__err_prefix(err, "%s", c->provider_->name);
    }
}

/* Replaces every copy of the key (and a cut-off start of it at the end) in
 * s with '*'. */
PV_HELPER void mask_key(char *s, const char *key, size_t klen) {
    if (klen < 4u) {
        return;
    }
    size_t n = strlen(s);
    for (size_t i = 0; i < n; i++) {
        size_t m = 0;
        while (i + m < n && m < klen && s[i + m] == key[m]) {
            m++;
        }
        if (m == klen || (i + m == n && m >= 4u)) {
            memset(s + i, '*', m);
            i += m - 1;
        }
    }
}

static void wipe(void *p, size_t n) {
    volatile unsigned char *v = p;
    while (n-- > 0) {
        *v++ = 0;
    }
}

static ctxc_status_t pv_complete(const ctxc_llm_t *llm,
                                 const ctxc_llm_request_t *req, char *out,
                                 size_t cap, size_t *len,
                                 ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    if (llm == NULL || llm->ctx == NULL || req == NULL || out == NULL ||
        cap == 0 || len == NULL || req->message == NULL ||
        req->message_count == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "provider call: a NULL argument, no output buffer "
                          "or no message");
    }
    ctxc_provider_client_t *c = llm->ctx;
    const ctxc_provider_t *p = c->provider_;
    const ctxc_port_t *port = c->port_;
    ctxc_llm_usage_t local;
    if (usage == NULL) {
        usage = &local;
    }
    memset(usage, 0, sizeof *usage);
    *len = 0;
    out[0] = '\0';

    if (c->extra_header_count > CTXC_PROVIDER_EXTRA_HEADERS_MAX ||
        (c->extra_header_count > 0 && c->extra_headers == NULL)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: more than %u extra headers", p->name,
                          (unsigned)CTXC_PROVIDER_EXTRA_HEADERS_MAX);
    }
    ctxc_http_header_t headers[2u + CTXC_PROVIDER_EXTRA_HEADERS_MAX];
    size_t hn = 0;
    size_t klen = 0;
    ctxc_status_t st;
    if (c->key_name_[0] != '\0') {
        if (port->key == NULL) {
            return ctxc__fail(err, CTXC_E_NOT_FOUND,
                              "%s: no API key %s: the port has no key hook",
                              p->name, c->key_name_);
        }
        size_t pl = strlen(p->auth_prefix);
        memcpy(c->key_, p->auth_prefix, pl);
        st = port->key(port->key_ctx, c->key_name_, c->key_ + pl,
                       sizeof c->key_ - pl, &klen, err);
        if (st != CTXC_OK) {
            wipe(c->key_, sizeof c->key_);
            ctxc__err_prefix(err, "%s", p->name);
            return st;
        }
        headers[hn++] = (ctxc_http_header_t){p->auth_header, c->key_, true};
    }
    if (p->extra_name != NULL) {
        headers[hn++] =
            (ctxc_http_header_t){p->extra_name, p->extra_value, false};
    }

    for (size_t i = 0; i < c->extra_header_count; i++) {
        headers[hn++] = c->extra_headers[i];
    }

    ctxc_http_response_t resp;
    memset(&resp, 0, sizeof resp);
    call_t k;
    memset(&k, 0, sizeof k);
    k.c = c;
    k.req = req;
    k.resp = &resp;
    k.err = err;
    ctxc_http_request_t hr;
    memset(&hr, 0, sizeof hr);
    hr.method = "POST";
    hr.url = c->url_;
    hr.content_type = "application/json";
    hr.accept = c->stream_ ? "text/event-stream" : "application/json";
    hr.headers = headers;
    hr.header_count = hn;
    hr.body_fn = body_cb;
    hr.body_user = &k;
    hr.timeout_ms = c->timeout_ms;
    hr.on_body = on_body;
    hr.on_event = c->stream_ ? on_event : NULL;
    hr.user = &k;

    st = CTXC_OK;
    for (uint32_t attempt = 0;; attempt++) {
        memset(usage, 0, sizeof *usage);
        usage->attempts = attempt + 1;
        memset(&k.r, 0, sizeof k.r);
        k.r.out = out;
        k.r.cap = cap;
        k.r.usage = usage;
        k.r.tok = c->tok_;
        k.r.tok_cap = CTXC_CFG_PROVIDER_JSON_TOKENS;
        k.r.provider = p;
        k.r.on_text = req->on_text;
        k.r.on_text_user = req->on_text_user;
        k.raw_len = 0;
        c->errbody_len_ = 0;
        st =
            ctxc_http_request(&hr, port, c->work_, sizeof c->work_, &resp, err);
        usage->http_status = resp.status;
        if (st == CTXC_OK) {
            if (!resp.event_stream) { /* a whole answer in out */
                if (k.raw_len >= cap) {
                    st = ctxc__fail(err, CTXC_E_TOO_LARGE,
                                    "%s: the answer (%z bytes) does not fit "
                                    "the output buffer (%z bytes)",
                                    p->name, k.raw_len, cap);
                    if (err != NULL) {
                        err->needed = k.raw_len + 1;
                    }
                    break;
                }
                st = ctxc_provider_read(&k.r, out, k.raw_len, false, err);
            }
            if (st == CTXC_OK) {
                st = ctxc_provider_finish(&k.r, err);
            }
            break;
        }
        if (st == CTXC_E_HTTP_STATUS && resp.status >= 400u) {
            http_error(&k, err);
        }
        if (!ctxc_http_retryable(st, &resp) || attempt >= c->retries_) {
            break;
        }
        uint32_t wait = 500u << (attempt < 7u ? attempt : 7u);
        if (resp.has_retry_after) {
            wait =
                resp.retry_after_s > CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS / 1000u
                    ? CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS
                    : resp.retry_after_s * 1000u;
        }
        if (wait > CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS) {
            wait = CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS;
        }
        ctxc_port_log(port, CTXC_LOG_WARN,
                      "%s: attempt %u of %u failed (%s, HTTP %u); retrying "
                      "in %u ms",
                      p->name, (unsigned)(attempt + 1),
                      (unsigned)(c->retries_ + 1), ctxc_status_name(st),
                      (unsigned)resp.status, (unsigned)wait);
        if (port->delay_ms != NULL && wait > 0) {
            port->delay_ms(port->delay_ctx, wait);
        }
    }
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (st != CTXC_OK && err != NULL && klen > 0) {
        mask_key(err->message, c->key_ + strlen(p->auth_prefix), klen);
    }
#endif
    /* the key, and the request head holding it in the HTTP work area */
    wipe(c->key_, sizeof c->key_);
    if (klen > 0) {
        wipe(c->work_, sizeof c->work_);
        wipe(c->errbody_, sizeof c->errbody_);
    }
    if (st == CTXC_OK) {
        *len = k.r.len;
    } else {
        out[0] = '\0';
    }
    return st;
}

/* Characters a model name may have where it goes into the URL path. */
static bool url_safe(const char *s) {
    for (; *s != '\0'; s++) {
        char ch = *s;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || strchr("-._:/@+", ch) != NULL)) {
            return false;
        }
    }
    return true;
}

ctxc_status_t ctxc_provider_llm(ctxc_provider_client_t *c,
                                const ctxc_provider_ref_t *ref,
                                const ctxc_port_t *port, uint32_t retries,
                                bool stream, ctxc_llm_t *out,
                                ctxc_error_t *err) {
    if (c == NULL || ref == NULL || port == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "provider: a NULL argument");
    }
    const ctxc_provider_t *p = ctxc_provider_find(ref->provider);
    if (p == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "unknown provider %q (compiled in:%s)", ref->provider,
                          strlen(ref->provider), compiled_in);
    }
    if (ref->model[0] == '\0') {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: no model is set (setting model)", p->name);
    }
    size_t model_len = strlen(ref->model);
    if (model_len >= sizeof c->model_ ||
        strlen(ref->auth_key_name) >= sizeof c->key_name_ ||
        (p->model_in_url && !url_safe(ref->model))) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: model %q cannot go into the request URL",
                          p->name, ref->model, model_len);
    }
    const char *base = ref->base_url[0] != '\0' ? ref->base_url : p->base_url;
    size_t blen = strlen(base);
    while (blen > 0 && base[blen - 1] == '/') {
        blen--;
    }
    ctxc__sink_t u = {c->url_, sizeof c->url_ - 1, 0};
    ctxc__put(&u, base, blen);
    ctxc__puts(&u, p->path);
    if (p->model_in_url) {
        ctxc__puts(&u, ref->model);
        ctxc__puts(&u, stream ? ":streamGenerateContent?alt=sse"
                              : ":generateContent");
    }
    if (u.len > u.cap) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: base URL too long (%z bytes)", p->name, blen);
    }
    (void)ctxc__sink_cstr(&u);
    ctxc_url_t url;
    ctxc_status_t st = ctxc_url_parse(c->url_, &url, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "%s: base-url", p->name);
        return st;
    }
    if (ref->auth_key_name[0] != '\0' && !url.tls &&
        !ctxc_http_host_is_loopback(url.host, url.host_len)) {
        return ctxc__fail(err, CTXC_E_INSECURE,
                          "%s: the API key would go over plain http:// to "
                          "%q (use https://)",
                          p->name, url.host, url.host_len);
    }
    memcpy(c->model_, ref->model, model_len + 1);
    memcpy(c->key_name_, ref->auth_key_name, strlen(ref->auth_key_name) + 1);
    wipe(c->key_, sizeof c->key_);
    c->errbody_len_ = 0;
    c->provider_ = p;
    c->port_ = port;
    c->retries_ = retries > 10u ? 10u : retries;
    c->stream_ = stream;
    c->timeout_ms = 0;
    c->extra_headers = NULL;
    c->extra_header_count = 0;
    out->complete = pv_complete;
    out->ctx = c;
    out->provider = p->name;
    out->model = c->model_;
    return CTXC_OK;
}

/* ---- the session's model, from the settings ------------------------------ */

void ctxc_provider_bind(ctxc_provider_binding_t *b,
                        ctxc_provider_client_t *client,
                        ctxc_settings_store_t *settings,
                        const ctxc_port_t *port, bool stream) {
    memset(b, 0, sizeof *b);
    b->client = client;
    b->settings = settings;
    b->port = port;
    b->stream = stream;
}

ctxc_status_t ctxc_provider_resolve(void *user, const char *profile,
                                    const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)profile; /* the store knows compression.profile */
    ctxc_provider_binding_t *b = user;
    if (b == NULL || llm == NULL || b->client == NULL || b->settings == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "provider binding: NULL argument (ctxc_provider_bind "
                          "first)");
    }
    ctxc_status_t st =
        ctxc_settings_compression_provider(b->settings, &b->ref_, err);
    if (st != CTXC_OK) {
        return st;
    }
    const char *where = b->ref_.profile[0] != '\0' ? "profile '" : "";
    const char *name = b->ref_.profile[0] != '\0' ? b->ref_.profile : "";
    const char *end = b->ref_.profile[0] != '\0' ? "'" : "";
    if (b->ref_.provider[0] == '\0' || b->ref_.model[0] == '\0') {
        return ctxc__fail(
            err, CTXC_E_INVALID_ARG,
            "no %s set for the summary call%s%s%s%s: set provider and "
            "model (base-url, auth-key-name as needed) or "
            "compression.profile",
            b->ref_.provider[0] == '\0' ? "provider" : "model",
            where[0] != '\0' ? " in " : "", where, name, end);
    }
    uint32_t retries = 2, timeout = 0;
    (void)ctxc_settings_int(b->settings, CTXC_SETTING_COMPRESSION_RETRIES,
                            &retries);
    (void)ctxc_settings_int(b->settings, CTXC_SETTING_NETWORK_READ_TIMEOUT_MS,
                            &timeout);
    st = ctxc_provider_llm(b->client, &b->ref_, b->port, retries, b->stream,
                           &b->llm_, err);
    if (st != CTXC_OK) {
        return st;
    }
    b->client->timeout_ms = timeout;
    *llm = &b->llm_;
    return CTXC_OK;
}
