/*
 * ctxc — the provider table (expanded from CTXC_PROVIDER_LIST), the
 * streaming JSON request writer, the answer readers of the three APIs and
 * the client (key, retries) behind ctxc_llm_t.complete.
 */
#include <string.h>

#include "ctxc/provider.h"
#include "error.h"
#include "json.h"
#include "json_stream.h"
#include "json_tok.h"

/* Helpers a build without some providers may not call. */
#if defined(__GNUC__) || defined(__clang__)
#define PV_HELPER __attribute__((unused)) static
#else
#define PV_HELPER static
#endif

#if CTXC_CFG_PROVIDER_KEY_BYTES < 16
#error "CTXC_CFG_PROVIDER_KEY_BYTES must be at least 16"
#endif

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

/* ---- reading answers ----------------------------------------------------
 *
 * An answer (each streamed event's data, or a whole body) goes through the
 * resumable JSON reader (json_stream.h) as it arrives: the reader hands on
 * only the values whose paths the provider's begin hook asks for (text,
 * finish reason, usage, error message, block reason) and skips the rest
 * unread, so no event or body size and no number of values is too large.
 * Text is appended to out tentatively (tlen_) and kept when the value's
 * scope turns out to be answer text (a Gemini part without thought: true,
 * an Anthropic text block or text_delta event), else dropped: JSON objects
 * are unordered, the key that decides may come after the text. */

typedef ctxc_provider_reader_t reader_t;

struct ctxc_provider {
    const char *name;
    const char *base_url;
    const char *path;  /* after the base (gemini: before the model) */
    bool model_in_url; /* gemini: {path}{model}:generateContent */
    const char *auth_header;
    const char *auth_prefix; /* before the key in the header value */
    const char *extra_name;  /* one more fixed header, or NULL */
    const char *extra_value;
    const char *cut_reason;    /* the finish reason of the output limit */
    const char *ok_reasons[2]; /* the finish reasons of a normal stop */
    void (*body)(jw_t *w, const char *model, bool stream,
                 const ctxc_llm_request_t *req);
    /* The reader's hooks: a value starts (true: its content is wanted), an
     * object ended, a wanted word (T_WORD) ended, and whether the text of
     * the JSON text just read is kept. */
    bool (*begin)(reader_t *r, const ctxc__js_t *js, int type);
    void (*scope)(reader_t *r, const ctxc__js_t *js);
    void (*word)(reader_t *r, const ctxc__js_t *js);
    bool (*keep)(const reader_t *r);
};

/* Keys the readers look for; a path element is 1 + the index. */
static const char *const keys[] = {"error",
                                   "message",
                                   "choices",
                                   "delta",
                                   "content",
                                   "finish_reason",
                                   "usage",
                                   "prompt_tokens",
                                   "completion_tokens",
                                   "refusal",
                                   "type",
                                   "text",
                                   "stop_reason",
                                   "input_tokens",
                                   "output_tokens",
                                   "candidates",
                                   "parts",
                                   "thought",
                                   "finishReason",
                                   "usageMetadata",
                                   "promptTokenCount",
                                   "candidatesTokenCount",
                                   "promptFeedback",
                                   "blockReason",
                                   "index",
                                   "detail"};
enum {
    K_ERROR = 1,
    K_MESSAGE,
    K_CHOICES,
    K_DELTA,
    K_CONTENT,
    K_FINISH_REASON,
    K_USAGE,
    K_PROMPT_TOKENS,
    K_COMPLETION_TOKENS,
    K_REFUSAL,
    K_TYPE,
    K_TEXT,
    K_STOP_REASON,
    K_INPUT_TOKENS,
    K_OUTPUT_TOKENS,
    K_CANDIDATES,
    K_PARTS,
    K_THOUGHT,
    K_FINISHREASON,
    K_USAGEMETADATA,
    K_PROMPTTOKENCOUNT,
    K_CANDIDATESTOKENCOUNT,
    K_PROMPTFEEDBACK,
    K_BLOCKREASON,
    K_INDEX,
    K_DETAIL
};
#define A0 0x80u         /* the first array element */
#define ANY CTXC__JS_ANY /* any array element */
#define AT(...)                                                                \
    ctxc__js_at(js, (const uint8_t[]){__VA_ARGS__},                            \
                sizeof((const uint8_t[]){__VA_ARGS__}))

/* Where the current wanted string or number goes (reader.cur_). */
enum {
    T_NONE,
    T_TEXT,    /* answer text, tentatively */
    T_FINISH,  /* usage->finish_reason */
    T_MSG,     /* msg_: an error message */
    T_REFUSAL, /* msg_: a refusal (its pieces appended) */
    T_BLOCK,   /* block_: a Gemini block reason */
    T_WORD,    /* word_: an Anthropic event or block type, an OpenAI
                  choice's finish reason */
    T_IN,      /* usage->input_tokens */
    T_OUT,     /* usage->output_tokens */
    T_INDEX,   /* an OpenAI choice's index */
    T_ETYPE    /* word_: an error object's type */
};

/* reader.flags_ */
enum {
    F_ERROR = 1u,   /* an error object was read in this text */
    F_REFUSAL = 2u, /* a refusal was read */
    F_OPEN = 4u,    /* a JSON text is being read */
    F_KEEP = 8u,    /* Anthropic: this event / block is text */
    F_SKIP = 16u,   /* this scope's text is not the answer's: a Gemini part
                       that is a thought, an OpenAI choice other than 0 */
    /* 32u: F_CBD (Anthropic) */
    F_CUT = 64u, /* the refusal did not fit msg_: the message says so */
    F_TOP = 128u /* msg_ holds an error body's top-level message or detail
                    (an error object's message replaces it) */
};

static ctxc__js_t *jsr(reader_t *r) { return (ctxc__js_t *)(void *)r->js_; }

_Static_assert(sizeof(ctxc__js_t) <= sizeof(((reader_t *)0)->js_),
               "CTXC_PROVIDER_JSON_STATE_BYTES must hold the JSON reader");

/* Printable ASCII of a piece of UTF-8 appended to buf[0 .. cap - 1): a
 * character outside it is one '?', newlines and tabs are spaces. Returns
 * false when some of it did not fit. */
static bool put_printable(char *buf, size_t cap, uint8_t *len, const char *p,
                          size_t n) {
    size_t i = 0;
    for (; i < n && *len + 1u < cap; i++) {
        unsigned char ch = (unsigned char)p[i];
        if (ch >= 0x80u && ch < 0xC0u) {
            continue; /* a continuation byte: its lead byte was the '?' */
        }
        buf[(*len)++] = ch >= 0x20u && ch < 0x7Fu  ? (char)ch
                        : ch == '\n' || ch == '\t' ? ' '
                                                   : '?';
    }
    buf[*len] = '\0';
    for (; i < n; i++) { /* what is left: only the rest of a character? */
        if ((unsigned char)p[i] < 0x80u || (unsigned char)p[i] >= 0xC0u) {
            return false;
        }
    }
    return true;
}

static void on_str(void *user, const char *p, size_t n) {
    reader_t *r = user;
    switch (r->cur_) {
    case T_TEXT: {
        size_t room = r->cap > 0 ? r->cap - 1u : 0u;
        if (r->tlen_ < room) {
            memcpy(r->out + r->tlen_, p,
                   room - r->tlen_ < n ? room - r->tlen_ : n);
        }
        r->tlen_ += n;
        break;
    }
    case T_FINISH: {
        char *f = r->usage->finish_reason;
        (void)put_printable(f, sizeof r->usage->finish_reason, &r->fin_len_, p,
                            n);
        break;
    }
    case T_MSG:
        (void)put_printable(r->msg_, sizeof r->msg_, &r->msg_len_, p, n);
        break;
    case T_REFUSAL:
        if (!put_printable(r->msg_, sizeof r->msg_, &r->msg_len_, p, n)) {
            r->flags_ |= F_CUT;
        }
        break;
    case T_BLOCK:
        (void)put_printable(r->block_, sizeof r->block_, &r->block_len_, p, n);
        break;
    case T_WORD:
    case T_ETYPE:
        (void)put_printable(r->word_, sizeof r->word_, &r->word_len_, p, n);
        break;
    default:
        break;
    }
}

/* A wanted string starts: where it goes. */
static bool want(reader_t *r, uint8_t target) {
    r->cur_ = target;
    if (target == T_FINISH) {
        r->fin_len_ = 0;
    } else if (target == T_MSG ||
               (target == T_REFUSAL && (r->flags_ & F_REFUSAL) == 0)) {
        r->msg_len_ = 0; /* a refusal's later pieces are appended */
        r->msg_[0] = '\0';
        r->flags_ &= (uint8_t)~F_CUT;
    } else if (target == T_WORD) {
        r->word_len_ = 0;
        r->word_[0] = '\0';
    } else if (target == T_BLOCK) {
        r->block_len_ = 0;
    }
    return true;
}

/* Error objects, in every provider's answers and error bodies:
 * {"error": {"message": ...}}, {"error": "..."}, and the same as the first
 * element of an array. In an error body (reader.error_body) without one,
 * a top-level "message" (Cerebras; {"object": "error", ...} of Mistral and
 * older vLLM) or else a top-level "detail" string (Mistral's 401, FastAPI
 * servers) is the provider's message: an error object's message replaces
 * it, a message replaces a detail. */
static bool error_begin(reader_t *r, const ctxc__js_t *js, int type,
                        bool *handled) {
    *handled = true;
    if (AT(K_ERROR) || AT(A0, K_ERROR)) {
        if (type == CTXC__JT_OBJECT || type == CTXC__JT_STRING) {
            r->flags_ |= F_ERROR;
            r->flags_ &= (uint8_t)~F_TOP;
            r->msg_len_ = 0;
            r->msg_[0] = '\0';
        }
        return type == CTXC__JT_STRING && want(r, T_MSG);
    }
    if ((AT(K_ERROR, K_MESSAGE) || AT(A0, K_ERROR, K_MESSAGE)) &&
        type == CTXC__JT_STRING) {
        return want(r, T_MSG);
    }
    if ((AT(K_ERROR, K_TYPE) || AT(A0, K_ERROR, K_TYPE)) &&
        type == CTXC__JT_STRING) {
        r->word_len_ = 0;
        r->word_[0] = '\0';
        r->cur_ = T_ETYPE;
        return true;
    }
    if (r->error_body && type == CTXC__JT_STRING &&
        (AT(K_MESSAGE) || AT(K_DETAIL))) {
        uint8_t f = r->flags_;
        if ((f & F_ERROR) == 0 || ((f & F_TOP) != 0 && AT(K_MESSAGE))) {
            r->flags_ |= F_ERROR | F_TOP;
            return want(r, T_MSG);
        }
        return false;
    }
    *handled = false;
    return false;
}

/* The text scope (a Gemini part, an Anthropic block) that began at mark_ is
 * kept or dropped. */
PV_HELPER void scope_end(reader_t *r, bool keep) {
    if (!keep) {
        r->tlen_ = r->mark_;
    }
    r->mark_ = r->tlen_;
}

/* The error types of a failure that passes (Anthropic's, sent as an
 * `event: error` inside a 200 stream or as an error body): an overloaded
 * service, a rate limit, an internal error. Retried like a 529 or 429. */
static bool transient_type(const char *t) {
    return strcmp(t, "overloaded_error") == 0 ||
           strcmp(t, "rate_limit_error") == 0 || strcmp(t, "api_error") == 0;
}

static void on_end(void *user, const ctxc__js_t *js, int type) {
    reader_t *r = user;
    (void)js;
    uint8_t cur = r->cur_;
    r->cur_ = T_NONE;
    if (type == CTXC__JT_NUMBER && (cur == T_IN || cur == T_OUT)) {
        uint64_t x = 0;
        const char *s = js->num;
        for (; *s >= '0' && *s <= '9' && x <= (UINT64_MAX - 9u) / 10u; s++) {
            x = x * 10u + (uint64_t)(*s - '0');
        }
        if (*s == '\0' && s != js->num) {
            *(cur == T_IN ? &r->usage->input_tokens
                          : &r->usage->output_tokens) = x;
        }
    } else if (type == CTXC__JT_NUMBER && cur == T_INDEX) {
        bool zero = js->num[0] == '0' && js->num[1] == '\0';
        r->flags_ &= (uint8_t)~F_SKIP;
        r->flags_ |= zero ? 0u : F_SKIP;
    } else if (type == CTXC__JT_STRING && cur == T_FINISH) {
        if (r->fin_len_ > 0) {
            r->done = true;
        }
    } else if (type == CTXC__JT_STRING && cur == T_REFUSAL) {
        if (r->msg_len_ > 0) {
            r->flags_ |= F_REFUSAL;
        }
    } else if (type == CTXC__JT_STRING && cur == T_WORD) {
        r->provider->word(r, js);
    } else if (type == CTXC__JT_STRING && cur == T_ETYPE) {
        r->transient_ = transient_type(r->word_);
    } else if (type == CTXC__JT_OBJECT) {
        r->provider->scope(r, js);
    }
}

static bool on_begin(void *user, const ctxc__js_t *js, int type) {
    reader_t *r = user;
    bool handled;
    if (js->depth == 0) {
        r->root_ = (uint8_t)type;
    }
    bool w = error_begin(r, js, type, &handled);
    return handled ? w : r->provider->begin(r, js, type);
}

static const ctxc__js_handler_t handler = {on_begin, on_str, on_end};

/* No scope or word hooks (OpenAI). */
PV_HELPER void no_scope(reader_t *r, const ctxc__js_t *js) {
    (void)r, (void)js;
}

/* ---- the three APIs ------------------------------------------------------ */

PV_HELPER bool keep_all(const reader_t *r) {
    (void)r;
    return true;
}

/* The messages as {"role": "user"|"assistant", "content": text}, comma
 * separated, in the order given (OpenAI's API takes any order of turns). */
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

/* The answer is choice 0 (ctxc never asks for n > 1, a server may still
 * send more, interleaved): each element of choices is a scope whose text,
 * refusal and finish reason count only when its index is 0 (no index: its
 * place in the array). The index may come after the rest (JSON objects are
 * unordered), so the text is tentative (mark_), the refusal's start is
 * kept (wordfor_, which OpenAI does not use otherwise) and the finish
 * reason waits in word_ until the choice ends. A stream's text is the
 * delta: some servers (Perplexity) also send the whole message so far in
 * every chunk; a whole answer's is the message. */
static bool openai_begin(reader_t *r, const ctxc__js_t *js, int type) {
    if (type == CTXC__JT_OBJECT && AT(K_CHOICES, ANY)) {
        r->mark_ = r->tlen_;
        r->wordfor_ = r->msg_len_;
        r->word_len_ = 0;
        r->word_[0] = '\0';
        r->flags_ &= (uint8_t)~F_SKIP; /* no index: its place decides */
        r->flags_ |= js->path[1] != CTXC__JS_ELEM(0) ? F_SKIP : 0u;
        return false;
    }
    if (type == CTXC__JT_NUMBER && AT(K_CHOICES, ANY, K_INDEX)) {
        return want(r, T_INDEX);
    }
    uint8_t part = r->stream ? K_DELTA : K_MESSAGE;
    if (type == CTXC__JT_STRING && (r->flags_ & F_SKIP) == 0) {
        if (AT(K_CHOICES, ANY, K_FINISH_REASON)) {
            return want(r, T_WORD);
        }
        if (AT(K_CHOICES, ANY, part, K_CONTENT)) {
            return want(r, T_TEXT);
        }
        if (AT(K_CHOICES, ANY, part, K_REFUSAL)) {
            return want(r, T_REFUSAL);
        }
    } else if (type == CTXC__JT_NUMBER) {
        if (AT(K_USAGE, K_PROMPT_TOKENS)) {
            return want(r, T_IN);
        }
        if (AT(K_USAGE, K_COMPLETION_TOKENS)) {
            return want(r, T_OUT);
        }
    }
    return false;
}

/* A choice ended: kept when it is choice 0, else its text and refusal are
 * dropped; choice 0's finish reason is the answer's. */
static void openai_scope(reader_t *r, const ctxc__js_t *js) {
    if (!AT(K_CHOICES, ANY)) {
        return;
    }
    bool keep = (r->flags_ & F_SKIP) == 0;
    scope_end(r, keep);
    if (!keep) {
        if (r->msg_len_ > r->wordfor_) { /* its refusal: dropped */
            r->msg_len_ = r->wordfor_;
            r->msg_[r->msg_len_] = '\0';
            r->flags_ &=
                (uint8_t) ~(r->msg_len_ == 0 ? F_REFUSAL | F_CUT : F_CUT);
        }
    } else if (r->word_len_ > 0) {
        memcpy(r->usage->finish_reason, r->word_, r->word_len_ + 1u);
        r->fin_len_ = r->word_len_;
        r->done = true;
    }
    r->flags_ &= (uint8_t)~F_SKIP;
}
#endif

/* The text of the user turn put before a request whose first message is
 * the assistant's (the Anthropic and Gemini APIs want the user first). */
static const char lead_turn[] =
    "(The conversation below begins with an assistant turn.)";

/* The messages as turns that alternate and start with the user (what the
 * Anthropic and Gemini APIs document): a run of messages of one role is one
 * turn holding a block (part) per message, and a request starting with an
 * assistant message gets a short user turn first. gemini: its names
 * ("model", "parts"); else Anthropic's (a one-message turn keeps the plain
 * string content). */
PV_HELPER void jw_turns(jw_t *w, const ctxc_llm_request_t *req, bool gemini) {
    const char *asst = gemini ? "\"model\"" : "\"assistant\"";
    const char *open = gemini ? ",\"parts\":[" : ",\"content\":[";
    const char *block = gemini ? "{\"text\":" : "{\"type\":\"text\",\"text\":";
    bool first = true;
    if (is_assistant(req, 0)) {
        jw_puts(w, "{\"role\":\"user\"");
        jw_puts(w, open);
        jw_puts(w, block);
        jw_str(w, lead_turn);
        jw_puts(w, "}]}");
        first = false;
    }
    for (size_t i = 0; i < req->message_count;) {
        bool a = is_assistant(req, i);
        size_t j = i + 1u;
        while (j < req->message_count && is_assistant(req, j) == a) {
            j++;
        }
        jw_puts(w, first ? "{\"role\":" : ",{\"role\":");
        jw_puts(w, a ? asst : "\"user\"");
        if (!gemini && j == i + 1u) {
            jw_puts(w, ",\"content\":");
            jw_part(w, req->message, req->src, i);
        } else {
            jw_puts(w, open);
            for (size_t k = i; k < j; k++) {
                jw_puts(w, k > i ? "," : "");
                jw_puts(w, block);
                jw_part(w, req->message, req->src, k);
                jw_puts(w, "}");
            }
            jw_puts(w, "]");
        }
        jw_puts(w, "}");
        first = false;
        i = j;
    }
}

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
    jw_turns(w, req, false);
    jw_puts(w, stream ? "],\"stream\":true}" : "],\"stream\":false}");
}

/* word_ holds: the event's type, a delta's type, a content block's type. */
enum { W_EVENT, W_DELTA, W_BLOCK };
/* flags_: this event is a content_block_delta. */
#define F_CBD 32u

static bool anthropic_begin(reader_t *r, const ctxc__js_t *js, int type) {
    if (type == CTXC__JT_STRING) {
        if (AT(K_TYPE) || AT(K_DELTA, K_TYPE) || AT(K_CONTENT, ANY, K_TYPE)) {
            r->wordfor_ = AT(K_TYPE)            ? W_EVENT
                          : AT(K_DELTA, K_TYPE) ? W_DELTA
                                                : W_BLOCK;
            return want(r, T_WORD);
        }
        if (AT(K_DELTA, K_TEXT) || AT(K_CONTENT, ANY, K_TEXT)) {
            return want(r, T_TEXT);
        }
        if (AT(K_DELTA, K_STOP_REASON) || AT(K_STOP_REASON)) {
            return want(r, T_FINISH);
        }
    } else if (type == CTXC__JT_NUMBER) {
        if (AT(K_USAGE, K_INPUT_TOKENS) ||
            AT(K_MESSAGE, K_USAGE, K_INPUT_TOKENS)) {
            return want(r, T_IN);
        }
        if (AT(K_USAGE, K_OUTPUT_TOKENS) ||
            AT(K_MESSAGE, K_USAGE, K_OUTPUT_TOKENS)) {
            return want(r, T_OUT);
        }
    } else if (type == CTXC__JT_OBJECT && AT(K_CONTENT, ANY)) {
        r->mark_ = r->tlen_; /* a content block of a whole answer */
        r->flags_ &= (uint8_t)~F_KEEP;
    }
    return false;
}

static void anthropic_word(reader_t *r, const ctxc__js_t *js) {
    (void)js;
    const char *w = r->word_;
    if (r->wordfor_ == W_EVENT) {
        if (strcmp(w, "content_block_delta") == 0) {
            r->flags_ |= F_CBD;
        } else if (strcmp(w, "message_stop") == 0) {
            r->done = true;
        }
    } else if (strcmp(w, r->wordfor_ == W_DELTA ? "text_delta" : "text") == 0) {
        r->flags_ |= F_KEEP;
    }
}

/* A content block of a whole answer ended: kept when it was a text block. */
static void anthropic_scope(reader_t *r, const ctxc__js_t *js) {
    if (AT(K_CONTENT, ANY)) {
        scope_end(r, (r->flags_ & F_KEEP) != 0);
    }
}

/* A streamed event's text is kept when it is a content_block_delta whose
 * delta is a text_delta (thinking, signature and tool input deltas are
 * not text). */
static bool anthropic_keep(const reader_t *r) {
    return !r->stream || (r->flags_ & (F_CBD | F_KEEP)) == (F_CBD | F_KEEP);
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
    jw_turns(w, req, true);
    jw_puts(w, "]");
    if (req->max_output_tokens > 0) {
        jw_puts(w, ",\"generationConfig\":{\"maxOutputTokens\":");
        jw_uint(w, req->max_output_tokens);
        jw_puts(w, "}");
    }
    jw_puts(w, "}");
}

static bool gemini_begin(reader_t *r, const ctxc__js_t *js, int type) {
    if (type == CTXC__JT_STRING) {
        if (AT(K_CANDIDATES, A0, K_FINISHREASON)) {
            return want(r, T_FINISH);
        }
        if (AT(K_CANDIDATES, A0, K_CONTENT, K_PARTS, ANY, K_TEXT)) {
            return want(r, T_TEXT);
        }
        if (AT(K_PROMPTFEEDBACK, K_BLOCKREASON)) {
            return want(r, T_BLOCK);
        }
    } else if (type == CTXC__JT_NUMBER) {
        if (AT(K_USAGEMETADATA, K_PROMPTTOKENCOUNT)) {
            return want(r, T_IN);
        }
        if (AT(K_USAGEMETADATA, K_CANDIDATESTOKENCOUNT)) {
            return want(r, T_OUT);
        }
    } else if (type == CTXC__JT_OBJECT &&
               AT(K_CANDIDATES, A0, K_CONTENT, K_PARTS, ANY)) {
        r->mark_ = r->tlen_;
        r->flags_ &= (uint8_t)~F_SKIP;
    } else if (type == CTXC__JT_TRUE &&
               AT(K_CANDIDATES, A0, K_CONTENT, K_PARTS, ANY, K_THOUGHT)) {
        r->flags_ |= F_SKIP;
    }
    return false;
}

/* A part ended: its text is kept unless it was a thought (the key may come
 * after the text). */
static void gemini_scope(reader_t *r, const ctxc__js_t *js) {
    if (AT(K_CANDIDATES, A0, K_CONTENT, K_PARTS, ANY)) {
        scope_end(r, (r->flags_ & F_SKIP) == 0);
    }
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
        "Bearer ", NULL, NULL, "length", {"stop", NULL}, openai_body,          \
        openai_begin, openai_scope, no_scope, keep_all
#define CTXC__PV_ANTHROPIC                                                     \
    "https://api.anthropic.com", "/v1/messages", false, "x-api-key", "",       \
        "anthropic-version", "2023-06-01", "max_tokens",                       \
        {"end_turn", "stop_sequence"}, anthropic_body, anthropic_begin,        \
        anthropic_scope, anthropic_word, anthropic_keep
#define CTXC__PV_GEMINI                                                        \
    "https://generativelanguage.googleapis.com", "/v1beta/models/", true,      \
        "x-goog-api-key", "", NULL, NULL, "MAX_TOKENS", {"STOP", NULL},        \
        gemini_body, gemini_begin, gemini_scope, no_scope, keep_all

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

void ctxc_provider_reader_init(ctxc_provider_reader_t *r,
                               const ctxc_provider_t *p, bool stream, char *out,
                               size_t cap, ctxc_llm_usage_t *usage) {
    memset(r, 0, sizeof *r);
    r->out = out;
    r->cap = cap;
    r->stream = stream;
    r->usage = usage;
    r->provider = p;
}

/* The text read since the last commit is the answer's: handed to on_text. */
static void commit(reader_t *r) {
    size_t start = r->len;
    size_t room = r->cap > 0 ? r->cap - 1u : 0u;
    r->len = r->tlen_;
    r->mark_ = r->tlen_;
    size_t end = r->len < room ? r->len : room;
    if (r->on_text != NULL && end > start) {
        (void)r->on_text(r->on_text_user, r->out + start, end - start);
    }
}

ctxc_status_t ctxc_provider_feed(ctxc_provider_reader_t *r, const char *data,
                                 size_t len, ctxc_error_t *err) {
    if ((r->flags_ & F_OPEN) == 0) {
        ctxc__js_init(jsr(r), keys, sizeof keys / sizeof keys[0], &handler, r);
        r->flags_ = (uint8_t)((r->flags_ & (F_REFUSAL | F_CUT)) | F_OPEN);
        r->tlen_ = r->len;
        r->mark_ = r->len;
        r->cur_ = T_NONE;
    }
    ctxc_status_t st = ctxc__js_feed(jsr(r), data, len, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "%s: the answer is not JSON", r->provider->name);
    }
    return st;
}

ctxc_status_t ctxc_provider_end(ctxc_provider_reader_t *r, ctxc_error_t *err) {
    const char *name = r->provider->name;
    if ((r->flags_ & F_OPEN) == 0) {
        return CTXC_OK;
    }
    r->flags_ &= (uint8_t)~F_OPEN;
    ctxc_status_t st = ctxc__js_end(jsr(r), err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "%s: the answer is not JSON", name);
        return st;
    }
    r->any = true;
    if ((r->flags_ & F_ERROR) != 0) {
        r->tlen_ = r->len;
        const char *reason = r->usage->finish_reason;
        return ctxc__fail(err, CTXC_E_HTTP_STATUS,
                          "%s: error in the answer: %s%s%s%s", name,
                          r->msg_len_ > 0 ? r->msg_ : "(no message)",
                          reason[0] != '\0' ? " (after finish reason " : "",
                          reason, reason[0] != '\0' ? ")" : "");
    }
    if (r->root_ != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: the answer is not a JSON object", name);
    }
    if (r->provider->keep(r)) {
        commit(r);
    } else {
        r->tlen_ = r->len;
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_provider_read(ctxc_provider_reader_t *r, const char *js,
                                 size_t len, ctxc_error_t *err) {
    r->flags_ &= (uint8_t)~F_OPEN; /* a new JSON text */
    ctxc_status_t st = ctxc_provider_feed(r, js, len, err);
    return st == CTXC_OK ? ctxc_provider_end(r, err) : st;
}

bool ctxc_provider_error_message(const ctxc_provider_reader_t *r,
                                 const char **msg) {
    if ((r->flags_ & F_ERROR) == 0) {
        return false;
    }
    *msg = r->msg_len_ > 0 ? r->msg_ : "(no message)";
    return true;
}

/* A refusal as the error: its whole text when it fits the error message,
 * else as much as fits followed by " ... (cut)" (also when it did not fit
 * the reader's msg_). */
static ctxc_status_t refused(reader_t *r, ctxc_error_t *err) {
    static const char lead[] = ": the model refused: ";
    static const char cut[] = " ... (cut)";
    const char *name = r->provider->name;
    size_t text = r->msg_len_;
    bool is_cut = (r->flags_ & F_CUT) != 0;
    size_t fixed = strlen(name) + sizeof lead - 1u;
    size_t room =
        CTXC_CFG_ERROR_MESSAGE_LEN > 0 ? CTXC_CFG_ERROR_MESSAGE_LEN - 1u : 0u;
    if (is_cut || fixed + text > room) {
        is_cut = true;
        size_t max = room > fixed + (sizeof cut - 1u)
                         ? room - fixed - (sizeof cut - 1u)
                         : 0u;
        text = text < max ? text : max;
    }
    r->msg_[text] = '\0'; /* the reader is done with it */
    return ctxc__fail(err, CTXC_E_STOPPED, "%s%s%s%s", name, lead, r->msg_,
                      is_cut ? cut : "");
}

static bool is_reason(const char *s, const char *reason) {
    return reason != NULL && strcmp(s, reason) == 0;
}

ctxc_status_t ctxc_provider_finish(ctxc_provider_reader_t *r,
                                   ctxc_error_t *err) {
    const ctxc_provider_t *p = r->provider;
    const char *reason = r->usage->finish_reason;
    if (r->block_len_ > 0) {
        return ctxc__fail(err, CTXC_E_STOPPED,
                          "%s: prompt blocked by the provider: %s", p->name,
                          r->block_);
    }
    if (!r->any) {
        return ctxc__fail(err, CTXC_E_PARSE, "%s: the answer was empty",
                          p->name);
    }
    if (is_reason(reason, p->cut_reason)) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: the answer was cut off by the model's output "
                          "limit (finish reason %s)",
                          p->name, reason);
    }
    if (reason[0] != '\0' && !is_reason(reason, p->ok_reasons[0]) &&
        !is_reason(reason, p->ok_reasons[1])) {
        return ctxc__fail(err, CTXC_E_STOPPED,
                          "%s: the model stopped with finish reason %s, not "
                          "a normal stop",
                          p->name, reason);
    }
    if ((r->flags_ & F_REFUSAL) != 0) {
        return refused(r, err);
    }
    if (!r->done) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "%s: the answer ended without a finish reason",
                          p->name);
    }
    if (r->len >= r->cap) {
        ctxc_status_t st = ctxc__fail(err, CTXC_E_TOO_LARGE,
                                      "%s: the answer's text (%z bytes) does "
                                      "not fit the output buffer (%z bytes)",
                                      p->name, r->len, r->cap);
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

/* ---- the client ---------------------------------------------------------- *
 *
 * One call is a state machine in the client (c->call_): start() reads the
 * key and starts the first attempt's HTTP request; each step() advances
 * the request by one HTTP step (ctxc_http_step) or, between attempts,
 * checks whether the retry's "not before" time (backoff or Retry-After, by
 * the port's clock) has come; pv_complete() is the loop over the same
 * steps that waits in between (the transport's wait op, or the port's
 * delay hook for a retry pause). The HTTP callbacks get the client. */

enum { CALL_IDLE = 0, CALL_HTTP, CALL_PAUSE };

static ctxc_status_t body_cb(void *user, ctxc_http_write_fn write,
                             void *write_user) {
    const ctxc_provider_client_t *c = user;
    return ctxc_provider_write_body(c->provider_, c->model_, c->stream_,
                                    c->call_.req, write, write_user);
}

/* A streamed event's data, as it arrives. */
static ctxc_status_t on_event_data(void *user, const char *data, size_t len) {
    ctxc_provider_client_t *c = user;
    c->reader_.stream = true; /* what came, whatever was asked */
    return ctxc_provider_feed(&c->reader_, data, len, c->call_.err);
}

static ctxc_status_t on_event(void *user, const ctxc_sse_event_t *ev) {
    ctxc_provider_client_t *c = user;
    if (ev->done) { /* OpenAI's data: [DONE] */
        c->reader_.done = true;
        return CTXC_OK;
    }
    return ctxc_provider_end(&c->reader_, c->call_.err);
}

static ctxc_status_t on_body(void *user, const char *data, size_t len) {
    ctxc_provider_client_t *c = user;
    ctxc_provider_reader_t *r = &c->reader_;
    const ctxc_http_response_t *resp = &c->call_.resp;
    if (resp->status >= 400u) { /* an error body: its message is read */
        r->error_body = true;
        if (!c->call_.err_body_bad &&
            ctxc_provider_feed(r, data, len, NULL) != CTXC_OK) {
            c->call_.err_body_bad = true;
        }
    } else if (resp->status >= 200u && resp->status < 300u &&
               !resp->event_stream) {
        r->stream = false; /* a whole answer, also to a streamed request */
        return ctxc_provider_feed(r, data, len, c->call_.err);
    }
    return CTXC_OK;
}

/* The message of an HTTP error status: the provider's own message when its
 * error body is JSON with one, else the HTTP client's message. */
static void http_error(ctxc_provider_client_t *c, ctxc_error_t *err) {
    const char *msg = NULL;
    if (!c->call_.err_body_bad &&
        ctxc_provider_end(&c->reader_, NULL) == CTXC_E_HTTP_STATUS &&
        ctxc_provider_error_message(&c->reader_, &msg)) {
        (void)ctxc__fail(err, CTXC_E_HTTP_STATUS, "%s: HTTP %u: %s",
                         c->provider_->name, (unsigned)c->call_.resp.status,
                         msg);
    } else {
        ctxc__err_prefix(err, "%s", c->provider_->name);
    }
}

static void wipe(void *p, size_t n) {
    volatile unsigned char *v = p;
    while (n-- > 0) {
        *v++ = 0;
    }
}

/* The call ended with st: the key wiped (and what may hold an echo of
 * it), *len and *usage filled, the client idle again. Returns st. */
static ctxc_status_t call_end(ctxc_provider_client_t *c, ctxc_status_t st,
                              size_t *len, ctxc_llm_usage_t *usage,
                              ctxc_error_t *err) {
    ctxc_provider_call_t *k = &c->call_;
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (st != CTXC_OK && err != NULL && k->klen > 0) { /* the one rule */
        ctxc__mask_secret(err->message,
                          c->key_ + strlen(c->provider_->auth_prefix), k->klen);
    }
#else
    (void)err;
#endif
    /* the key, and the request head holding it in the HTTP work area */
    wipe(c->key_, sizeof c->key_);
    size_t text_len = c->reader_.len;
    if (k->klen > 0) { /* what a server may have echoed of the key */
        wipe(c->work_, sizeof c->work_);
        wipe(&c->reader_, sizeof c->reader_);
    }
    if (st == CTXC_OK) {
        if (len != NULL) {
            *len = text_len;
        }
    } else if (k->cap > 0) {
        k->out[0] = '\0';
    }
    if (usage != NULL) {
        *usage = k->usage;
    }
    k->phase = CALL_IDLE;
    k->klen = 0;
    return st;
}

/* Starts attempt k->attempt: a fresh reader, the HTTP request. */
static ctxc_status_t attempt_start(ctxc_provider_client_t *c,
                                   ctxc_error_t *err) {
    ctxc_provider_call_t *k = &c->call_;
    const ctxc_port_t *port = c->port_;
    if (k->total > 0) {
        uint64_t used = ctxc_port_now_ms(port) - k->t0;
        k->hr.deadline_ms = used < k->total ? (uint32_t)(k->total - used) : 1u;
    }
    memset(&k->usage, 0, sizeof k->usage);
    k->usage.attempts = k->attempt + 1;
    ctxc_provider_reader_t *r = &c->reader_;
    ctxc_provider_reader_init(r, c->provider_, c->stream_, k->out, k->cap,
                              &k->usage);
    r->on_text = k->req->on_text;
    r->on_text_user = k->req->on_text_user;
    k->err_body_bad = false;
    k->phase = CALL_HTTP;
    return ctxc_http_start(&k->hr, port, c->work_, sizeof c->work_, &k->resp,
                           err);
}

/* An attempt ended with st (not CTXC_E_IN_PROGRESS): the call's result, or
 * CTXC_E_IN_PROGRESS with a retry pause set. */
static ctxc_status_t attempt_end(ctxc_provider_client_t *c, ctxc_status_t st,
                                 ctxc_error_t *err) {
    ctxc_provider_call_t *k = &c->call_;
    const ctxc_provider_t *p = c->provider_;
    const ctxc_port_t *port = c->port_;
    k->usage.http_status = k->resp.status;
    bool answered = st == CTXC_OK;
    if (answered) {
        if (!k->resp.event_stream) { /* the end of a whole answer */
            st = ctxc_provider_end(&c->reader_, err);
        }
        if (st == CTXC_OK) {
            st = ctxc_provider_finish(&c->reader_, err);
        }
    }
    /* an error object of a transient type in a 2xx answer (Anthropic's
     * `event: error` with overloaded_error in a 200 stream): retried as
     * the HTTP status it stands for would be */
    bool transient = st == CTXC_E_HTTP_STATUS && k->resp.status < 300u &&
                     c->reader_.transient_;
    if (answered && !transient) {
        return st;
    }
    if (st == CTXC_E_HTTP_STATUS && k->resp.status >= 400u) {
        http_error(c, err);
    }
    uint32_t total = k->total;
    uint32_t attempt = k->attempt;
    if (st == CTXC_E_TIMEOUT && total > 0 &&
        ctxc_port_now_ms(port) - k->t0 >= total) { /* the call's deadline */
        return ctxc__fail(err, CTXC_E_TIMEOUT,
                          "%s: the call's deadline of %u ms "
                          "(network.call-deadline-ms) ran out (attempt %u "
                          "of %u)",
                          p->name, (unsigned)total, (unsigned)(attempt + 1),
                          (unsigned)(c->retries_ + 1));
    }
    if ((!ctxc_http_retryable(st, &k->resp) && !transient) ||
        attempt >= c->retries_) {
        return st;
    }
    uint32_t wait = 500u << (attempt < 7u ? attempt : 7u);
    if (k->resp.has_retry_after) {
        wait =
            k->resp.retry_after_s > CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS / 1000u
                ? CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS
                : k->resp.retry_after_s * 1000u;
    }
    if (wait > CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS) {
        wait = CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS;
    }
    if (total > 0 && ctxc_port_now_ms(port) - k->t0 + wait >= total) {
        return ctxc__fail(err, CTXC_E_TIMEOUT,
                          "%s: the call's deadline of %u ms "
                          "(network.call-deadline-ms) would run out in the "
                          "%u ms wait before attempt %u (attempt %u: %s, "
                          "HTTP %u)",
                          p->name, (unsigned)total, (unsigned)wait,
                          (unsigned)(attempt + 2), (unsigned)(attempt + 1),
                          ctxc_status_name(st), (unsigned)k->resp.status);
    }
    ctxc_port_log(port, CTXC_LOG_WARN,
                  "%s: attempt %u of %u failed (%s, HTTP %u); retrying "
                  "in %u ms",
                  p->name, (unsigned)(attempt + 1), (unsigned)(c->retries_ + 1),
                  ctxc_status_name(st), (unsigned)k->resp.status,
                  (unsigned)wait);
    k->attempt++;
    k->pause_ms = wait;
    k->not_before = ctxc_port_now_ms(port) + wait;
    k->phase = CALL_PAUSE;
    return CTXC_E_IN_PROGRESS;
}

static ctxc_status_t pv_start(const ctxc_llm_t *llm,
                              const ctxc_llm_request_t *req, char *out,
                              size_t cap, ctxc_error_t *err) {
    if (llm == NULL || llm->ctx == NULL || req == NULL || out == NULL ||
        cap == 0 || req->message == NULL || req->message_count == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "provider call: a NULL argument, no output buffer "
                          "or no message");
    }
    ctxc_provider_client_t *c = llm->ctx;
    ctxc_provider_call_t *k = &c->call_;
    const ctxc_provider_t *p = c->provider_;
    const ctxc_port_t *port = c->port_;
    if (k->phase != CALL_IDLE) {
        return ctxc__fail(err, CTXC_E_BUSY,
                          "%s: the client has a call in progress (one call "
                          "at a time)",
                          p->name);
    }
    memset(k, 0, sizeof *k);
    k->req = req;
    k->out = out;
    k->cap = cap;
    k->err = err;
    out[0] = '\0';

    if (c->extra_header_count > CTXC_PROVIDER_EXTRA_HEADERS_MAX ||
        (c->extra_header_count > 0 && c->extra_headers == NULL)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: more than %u extra headers", p->name,
                          (unsigned)CTXC_PROVIDER_EXTRA_HEADERS_MAX);
    }
    size_t hn = 0;
    if (c->key_name_[0] != '\0') {
        if (port->key == NULL) {
            return ctxc__fail(err, CTXC_E_NOT_FOUND,
                              "%s: no API key %s: the port has no key hook",
                              p->name, c->key_name_);
        }
        size_t pl = strlen(p->auth_prefix);
        memcpy(c->key_, p->auth_prefix, pl);
        size_t klen = 0;
        ctxc_status_t st = port->key(port->key_ctx, c->key_name_, c->key_ + pl,
                                     sizeof c->key_ - pl, &klen, err);
        if (st != CTXC_OK) {
            wipe(c->key_, sizeof c->key_);
            ctxc__err_prefix(err, "%s", p->name);
            return st;
        }
        k->klen = klen;
        k->headers[hn++] = (ctxc_http_header_t){p->auth_header, c->key_, true};
    }
    if (p->extra_name != NULL) {
        k->headers[hn++] =
            (ctxc_http_header_t){p->extra_name, p->extra_value, false};
    }
    for (size_t i = 0; i < c->extra_header_count; i++) {
        k->headers[hn++] = c->extra_headers[i];
    }
    ctxc_http_request_t *hr = &k->hr;
    hr->method = "POST";
    hr->url = c->url_;
    hr->content_type = "application/json";
    hr->accept = c->stream_ ? "text/event-stream" : "application/json";
    hr->headers = k->headers;
    hr->header_count = hn;
    hr->body_fn = body_cb;
    hr->body_user = c;
    hr->timeout_ms = c->timeout_ms;
    hr->on_body = on_body;
    hr->on_event = c->stream_ ? on_event : NULL;
    hr->on_event_data = c->stream_ ? on_event_data : NULL;
    hr->user = c;
    /* The call's deadline: every attempt and every wait in it (needs the
     * port's clock; without one only the read timeout bounds a call). */
    k->total = port->clock != NULL ? c->deadline_ms : 0u;
    k->t0 = ctxc_port_now_ms(port);
    ctxc_status_t st = attempt_start(c, err);
    if (st != CTXC_E_IN_PROGRESS) {
        st = attempt_end(c, st, err);
    }
    return st == CTXC_E_IN_PROGRESS ? st : call_end(c, st, NULL, NULL, err);
}

static ctxc_status_t pv_step(const ctxc_llm_t *llm, size_t *len,
                             ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    if (llm == NULL || llm->ctx == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "provider: NULL model");
    }
    ctxc_provider_client_t *c = llm->ctx;
    ctxc_provider_call_t *k = &c->call_;
    if (k->phase == CALL_IDLE) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "provider: no call in progress");
    }
    k->err = err;
    ctxc_status_t st;
    if (k->phase == CALL_PAUSE) {
        /* without a clock the pause is the blocking caller's delay hook
         * (pv_complete), and a job sends the retry at once */
        if (c->port_->clock != NULL &&
            ctxc_port_now_ms(c->port_) < k->not_before) {
            return CTXC_E_IN_PROGRESS;
        }
        st = attempt_start(c, err);
    } else {
        st = ctxc_http_step(c->work_, err);
    }
    if (st != CTXC_E_IN_PROGRESS) {
        st = attempt_end(c, st, err);
    }
    return st == CTXC_E_IN_PROGRESS ? st : call_end(c, st, len, usage, err);
}

/* When the call under way can next move (ctxc_llm_t.due_ms). */
static uint32_t pv_due(const ctxc_llm_t *llm) {
    if (llm == NULL || llm->ctx == NULL) {
        return 0;
    }
    const ctxc_provider_client_t *c = llm->ctx;
    const ctxc_provider_call_t *k = &c->call_;
    if (k->phase == CALL_PAUSE) {
        uint64_t now = ctxc_port_now_ms(c->port_);
        return c->port_->clock == NULL || k->not_before <= now
                   ? 0u
                   : (uint32_t)(k->not_before - now < UINT32_MAX - 1u
                                    ? k->not_before - now
                                    : UINT32_MAX - 1u);
    }
    if (k->phase == CALL_HTTP && ctxc_http_idle(c->work_)) {
        return CTXC_LLM_DUE_NETWORK;
    }
    return 0;
}

void ctxc_provider_progress(const ctxc_provider_client_t *c,
                            ctxc_provider_progress_t *out) {
    if (out == NULL) {
        return;
    }
    memset(out, 0, sizeof *out);
    if (c == NULL || c->call_.phase == CALL_IDLE) {
        return;
    }
    const ctxc_provider_call_t *k = &c->call_;
    uint64_t now = ctxc_port_now_ms(c->port_);
    out->attempt = k->attempt + 1u;
    out->attempts = c->retries_ + 1u;
    out->elapsed_ms = now > k->t0 ? now - k->t0 : 0u;
    out->received = c->reader_.tlen_; /* tentative text included */
    if (k->phase == CALL_PAUSE) {
        out->phase = CTXC_PROVIDER_RETRY_PAUSE;
        out->retry_in_ms = c->port_->clock == NULL ? k->pause_ms
                           : k->not_before > now
                               ? (uint32_t)(k->not_before - now)
                               : 0u;
    } else {
        out->phase =
            out->received > 0 ? CTXC_PROVIDER_ANSWER : CTXC_PROVIDER_REQUEST;
    }
}

static void pv_cancel(const ctxc_llm_t *llm) {
    if (llm == NULL || llm->ctx == NULL) {
        return;
    }
    ctxc_provider_client_t *c = llm->ctx;
    if (c->call_.phase == CALL_HTTP) {
        ctxc_http_cancel(c->work_);
    }
    if (c->call_.phase != CALL_IDLE) {
        (void)call_end(c, CTXC_E_CANCELLED, NULL, NULL, NULL);
    }
}

/* The blocking call: the same steps, waiting between them. */
static ctxc_status_t pv_complete(const ctxc_llm_t *llm,
                                 const ctxc_llm_request_t *req, char *out,
                                 size_t cap, size_t *len,
                                 ctxc_llm_usage_t *usage, ctxc_error_t *err) {
    if (len == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "provider call: a NULL argument, no output buffer "
                          "or no message");
    }
    *len = 0;
    if (usage != NULL) {
        memset(usage, 0, sizeof *usage);
    }
    ctxc_status_t st = pv_start(llm, req, out, cap, err);
    if (st != CTXC_E_IN_PROGRESS) {
        return st;
    }
    ctxc_provider_client_t *c = llm->ctx;
    const ctxc_port_t *port = c->port_;
    const ctxc_transport_ops_t *ops = port->transport.ops;
    while (st == CTXC_E_IN_PROGRESS) {
        ctxc_provider_call_t *k = &c->call_;
        if (k->phase == CALL_PAUSE) {
            uint64_t now = ctxc_port_now_ms(port);
            uint32_t left = port->clock == NULL ? k->pause_ms
                            : k->not_before > now
                                ? (uint32_t)(k->not_before - now)
                                : 0u;
            /* with a stop hook and a clock: a slice, then the hook */
            bool sliced = port->stop != NULL && port->clock != NULL &&
                          left > CTXC_STOP_SLICE_MS;
            if (left > 0 && port->delay_ms != NULL) {
                port->delay_ms(port->delay_ctx,
                               sliced ? CTXC_STOP_SLICE_MS : left);
            }
            if (!sliced || port->delay_ms == NULL) {
                k->not_before = 0; /* waited (without the hook: at once) */
            }
        } else if (k->phase == CALL_HTTP && ops->wait != NULL &&
                   ctxc_http_idle(c->work_)) {
            ops->wait(port->transport.ctx, CTXC_HTTP_WAIT_SLICE_MS);
        }
        if (ctxc_port_stop_requested(port)) {
            const char *name = c->provider_->name;
            pv_cancel(llm);
            return ctxc__fail(err, CTXC_E_CANCELLED,
                              "%s: the call was stopped (the port's stop "
                              "hook)",
                              name);
        }
        st = pv_step(llm, len, usage, err);
    }
    return st;
}

/* A model name that may go into the URL path as one segment: the
 * characters model ids use (letters, digits, '-', '_', '.'), not starting
 * with '.' (so never "." or ".."): no '/', '%', '?', '#' or ':' can move
 * the request to another path. */
static bool url_safe(const char *s) {
    if (s[0] == '.') {
        return false;
    }
    for (; *s != '\0'; s++) {
        char ch = *s;
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
              (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ||
              ch == '.')) {
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
    /* a base URL that ends with the path's first segment (Anthropic's
     * https://host/v1, as OpenAI-compatible servers are given, or
     * Gemini's .../v1beta) does not get it twice */
    const char *path = p->path;
    const char *seg_end = strchr(path + 1, '/');
    size_t seg = seg_end != NULL ? (size_t)(seg_end - path) : strlen(path);
    if (seg > 1 && blen >= seg && memcmp(base + blen - seg, path, seg) == 0) {
        path += seg;
    }
    ctxc__sink_t u = {c->url_, sizeof c->url_ - 1, 0};
    ctxc__put(&u, base, blen);
    ctxc__puts(&u, path);
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
    c->provider_ = p;
    c->port_ = port;
    c->retries_ = retries > 10u ? 10u : retries;
    c->stream_ = stream;
    c->timeout_ms = 0;
    c->deadline_ms = 0;
    c->extra_headers = NULL;
    c->extra_header_count = 0;
    memset(&c->call_, 0, sizeof c->call_);
    out->complete = pv_complete;
    out->start = pv_start;
    out->step = pv_step;
    out->cancel = pv_cancel;
    out->due_ms = pv_due;
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
    uint32_t deadline = 0;
    (void)ctxc_settings_int(b->settings, CTXC_SETTING_NETWORK_CALL_DEADLINE_MS,
                            &deadline);
    /* the setting `stream` (of the profile, or in force); the binding's
     * flag false forces whole answers */
    st = ctxc_provider_llm(b->client, &b->ref_, b->port, retries,
                           b->stream && b->ref_.stream, &b->llm_, err);
    if (st != CTXC_OK) {
        return st;
    }
    b->client->timeout_ms = timeout;
    b->client->deadline_ms = deadline;
    *llm = &b->llm_;
    return CTXC_OK;
}
