/** @file
 * ctxc — LLM providers: ctxc_llm_t (ctxc/llm.h) over the HTTP client
 * (ctxc/http.h) and the port's transport, for three wire formats:
 *
 *   openai     POST {base}/chat/completions (default base
 *              https://api.openai.com/v1; also llama.cpp server, Ollama,
 *              vLLM, LM Studio, OpenRouter), Authorization: Bearer `<key>`
 *   anthropic  POST {base}/v1/messages (default https://api.anthropic.com),
 *              x-api-key, anthropic-version: 2023-06-01
 *   gemini     POST {base}/v1beta/models/{model}:generateContent, or
 *              :streamGenerateContent?alt=sse (default
 *              https://generativelanguage.googleapis.com), x-goog-api-key
 *
 * The request body is written by a streaming JSON writer straight into the
 * HTTP client's body writer (count pass, send pass): never whole in RAM.
 * Streamed answers (the default) are read event by event, text appended to
 * the caller's buffer; thinking/reasoning text is left out. A non-streaming
 * answer is read into the caller's output buffer and its text decoded there
 * in place (so that buffer must hold the whole answer body).
 *
 * The API key comes from the port's key hook (ctxc_port_t.key) under the
 * auth-key-name, once per call, into the client's key buffer, sent in a
 * header marked secret (never over plain http:// to a non-loopback host)
 * and wiped when the call returns. No auth-key-name: no auth header (local
 * servers). Transient failures (ctxc_http_retryable: 429, 408, 5xx,
 * timeouts, resets) are retried on the same provider, waiting Retry-After
 * through the port's delay hook; there is never a fallback to another one.
 */
#ifndef CTXC_PROVIDER_H
#define CTXC_PROVIDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc_config_defaults.h"
#include "ctxc/http.h"
#include "ctxc/llm.h"
#include "ctxc/port.h"
#include "ctxc/settings.h"
#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Every provider: X(ID, CTXC_CFG switch, "name"). */
#define CTXC_PROVIDER_LIST(X)                                                  \
    X(OPENAI, CTXC_CFG_PROVIDER_OPENAI, "openai")                              \
    X(ANTHROPIC, CTXC_CFG_PROVIDER_ANTHROPIC, "anthropic")                     \
    X(GEMINI, CTXC_CFG_PROVIDER_GEMINI, "gemini")

/** Provider ids: CTXC_PROVIDER_OPENAI, _ANTHROPIC, _GEMINI in list order (also those left out of the build), then CTXC_PROVIDER_COUNT. */
typedef enum {
#define CTXC_PROVIDER_ENUM_(id, cfg, name) CTXC_PROVIDER_##id,
    CTXC_PROVIDER_LIST(CTXC_PROVIDER_ENUM_)
#undef CTXC_PROVIDER_ENUM_
        CTXC_PROVIDER_COUNT
} ctxc_provider_id_t;

/** One provider API (the table is private to src/provider.c). */
typedef struct ctxc_provider ctxc_provider_t;

/** The compiled-in provider called name, NULL when there is none. */
const ctxc_provider_t *ctxc_provider_find(const char *name);

/** Its name and default base URL. */
const char *ctxc_provider_name(const ctxc_provider_t *p);
/** The provider's default base URL ("https://api.openai.com/v1", ...). */
const char *ctxc_provider_default_base_url(const ctxc_provider_t *p);

/** Bytes of the request URL buffer: a base URL, the path, the model. */
#define CTXC_PROVIDER_URL_BYTES (2u * CTXC_CFG_SETTINGS_VALUE_BYTES + 64u)

/** Most extra headers a client sends (ctxc_provider_client_t). */
#define CTXC_PROVIDER_EXTRA_HEADERS_MAX 4u

/** Bytes of the resumable JSON reader's state inside an answer reader
 * (private; checked by the build). */
#define CTXC_PROVIDER_JSON_STATE_BYTES 128u

/** Bytes kept of a provider's error or refusal message (a longer refusal is
 * cut, and its error says so). */
#define CTXC_PROVIDER_MESSAGE_BYTES 160u

/** An answer reader: fed the JSON of each streamed event (or of a whole
 * non-streaming answer, or of an error body) in pieces split anywhere, it
 * appends the answer's text to out and fills usage, holding none of the
 * JSON: events and bodies of any size are read in this fixed memory. Set
 * up with ctxc_provider_reader_init(); the members marked public may be
 * read (and on_text set) by the caller. */
typedef struct {
    char *out;  /**< public: the caller's buffer */
    size_t cap; /**< public: its bytes (one kept for the NUL) */
    size_t len; /**< public: text bytes so far (may exceed cap - 1: needed) */
    bool done;  /**< public: the provider said the answer is complete */
    bool any;   /**< public: a whole JSON text was read */
    bool stream; /**< public: the answer is an event stream (else one JSON body) */
    /** public: the text fed is an HTTP error body (status >= 400; the
     * client sets it): without an error object, a top-level "message" or
     * else "detail" string is the provider's message */
    bool error_body;
    ctxc_llm_usage_t *usage; /**< public: where usage and the finish reason go (may be NULL) */
    const ctxc_provider_t *provider; /**< public: the provider whose answers it reads */
    ctxc_llm_write_fn on_text; /**< public: ctxc_llm_request_t.on_text */
    void *on_text_user; /**< public: pointer handed to on_text */
    size_t tlen_; /**< text appended, not yet known to be the answer's */
    size_t mark_; /**< start of the current text scope */
    /* wordfor_: Anthropic: what word_ holds; OpenAI: msg_len_ where the
     * current choice began. word_: Anthropic: an event, delta or block
     * type; OpenAI: the current choice's finish reason until the choice is
     * known to be choice 0. */
    uint8_t cur_, flags_, root_, wordfor_;
    uint8_t fin_len_, msg_len_, block_len_, word_len_;
    char msg_[CTXC_PROVIDER_MESSAGE_BYTES]; /* an error message, a refusal */
    char block_[24];
    char word_[23];
    /* the error object read names a transient failure of the service
     * (type overloaded_error, rate_limit_error or api_error, as Anthropic
     * sends inside a 200 stream): retried as a 429 or 529 is (one byte of
     * word_ gave room: the reader's size is unchanged) */
    bool transient_;
    uint64_t js_[CTXC_PROVIDER_JSON_STATE_BYTES / 8u];
} ctxc_provider_reader_t;

/** The call under way in a client (private: the resumable call's state,
 * kept between the steps of ctxc_llm_t.step; the client's member call_). */
typedef struct {
    const ctxc_llm_request_t *req; /**< the request being sent */
    char *out;                     /**< the caller's answer buffer */
    size_t cap;                    /**< its bytes */
    ctxc_error_t *err;             /**< the current step's error */
    ctxc_llm_usage_t usage;        /**< the call's usage so far */
    ctxc_http_header_t headers[2u + CTXC_PROVIDER_EXTRA_HEADERS_MAX]; /**< the request's headers */
    ctxc_http_request_t hr;        /**< the HTTP request */
    ctxc_http_response_t resp;     /**< what the server answered */
    size_t klen;                   /**< bytes of the key read (0: none) */
    uint64_t t0;                   /**< the call's start, by the port clock */
    uint64_t not_before;           /**< a retry pause's end, by the port clock */
    uint32_t pause_ms;             /**< the pause's length */
    uint32_t total;                /**< the call's deadline (0: none) */
    uint32_t attempt;              /**< attempts ended so far */
    uint8_t phase;                 /**< idle, an HTTP request, a retry pause */
    bool err_body_bad;             /**< an error body that is not JSON */
} ctxc_provider_call_t;

/** A provider client: everything one call needs, owned by the caller
 * (static or in a task's memory; sizeof shown in the RAM table of docs/footprint.md:
 * the HTTP work area + the answer reader + key, URL and name buffers).
 * Members are private except where noted. One call at a time. */
typedef struct {
    CTXC_HTTP_WORK_DEFINE(work_);
    ctxc_provider_reader_t reader_;
    char key_[CTXC_CFG_PROVIDER_KEY_BYTES]; /**< wiped after each call */
    char url_[CTXC_PROVIDER_URL_BYTES];
    char model_[CTXC_CFG_SETTINGS_VALUE_BYTES];
    char key_name_[CTXC_CFG_SETTINGS_VALUE_BYTES];
    const ctxc_provider_t *provider_;
    const ctxc_port_t *port_;
    uint32_t retries_;
    bool stream_;
    /** Public, set after ctxc_provider_llm() (which clears them): the read
     * timeout in ms (0: CTXC_CFG_HTTP_TIMEOUT_MS; e.g. the setting
     * network.read-timeout-ms), and up to CTXC_PROVIDER_EXTRA_HEADERS_MAX
     * more request headers (OpenRouter's HTTP-Referer, a test id; not
     * copied: they must outlive the calls). */
    uint32_t timeout_ms;
    /** Public: the whole call's deadline in ms, every attempt and retry wait
     * included (0: none; e.g. the setting network.call-deadline-ms); needs
     * the port's clock. Running out: CTXC_E_TIMEOUT naming it. */
    uint32_t deadline_ms;
    const ctxc_http_header_t *extra_headers; /**< public: the extra headers (see timeout_ms) */
    size_t extra_header_count; /**< public: entries in extra_headers */
    ctxc_provider_call_t call_; /* private: the call under way */
} ctxc_provider_client_t;

/** Sets up c for the provider, model, base URL and key name of ref and fills
 * *out (out->provider, out->model name them; out->ctx = c) with a
 * ctxc_llm_t whose complete() sends requests through port->transport.
 * retries: transient failures retried (0..10, compression.retries); stream:
 * ask for a streamed answer (true by default in the callers). ref is copied:
 * it need not outlive the call; c and port must outlive *out.
 * Errors: CTXC_E_INVALID_ARG (a NULL argument; an unknown provider name:
 * the message lists the compiled-in ones; no model; a model with characters
 * a URL path cannot hold; a malformed base URL or one too long),
 * CTXC_E_INSECURE (an auth-key-name with a plain http:// base URL to a
 * host that is not loopback: the key would cross the network in clear). */
ctxc_status_t ctxc_provider_llm(ctxc_provider_client_t *c,
                                const ctxc_provider_ref_t *ref,
                                const ctxc_port_t *port, uint32_t retries,
                                bool stream, ctxc_llm_t *out,
                                ctxc_error_t *err);

/** What a provider call is doing (ctxc_provider_progress()). */
typedef enum {
    CTXC_PROVIDER_IDLE = 0,    /**< no call in progress */
    CTXC_PROVIDER_REQUEST,     /**< an attempt: connecting, sending, or
                                  waiting for the answer's first text */
    CTXC_PROVIDER_ANSWER,      /**< the answer's text is arriving */
    CTXC_PROVIDER_RETRY_PAUSE  /**< waiting before the next attempt */
} ctxc_provider_phase_t;

/** A call's progress, for a status line or a device's display. */
typedef struct {
    ctxc_provider_phase_t phase; /**< what the call is doing */
    uint32_t attempt;      /**< the attempt under way or next, from 1
                              (0: idle) */
    uint32_t attempts;     /**< attempts the call may make (1 + retries) */
    uint32_t retry_in_ms;  /**< in a retry pause: ms left before the next
                              attempt (by the port's clock; without one the
                              pause's length) */
    uint64_t elapsed_ms;   /**< since the call started (the port's clock;
                              0 without one) */
    size_t received;       /**< bytes of the answer's text so far */
} ctxc_provider_progress_t;

/** Fills *out with the progress of c's call (phase CTXC_PROVIDER_IDLE when
 * none is under way). Reads only: safe from the port's stop hook, from the
 * loop that drives ctxc_llm_t.step, or from the task that polls a session's
 * compression job (under the caller's own lock if another task runs it). */
void ctxc_provider_progress(const ctxc_provider_client_t *c,
                            ctxc_provider_progress_t *out);

/* ---- the session's model, from the settings ------------------------------
 *
 * What an integrator plugs into a session so middle-out and one-shot can
 * call a model:
 *
 *     static ctxc_provider_client_t client;      // 8 KB on Cortex-M4
 *     static ctxc_provider_binding_t binding;
 *     ctxc_provider_bind(&binding, &client, &settings, &port, true);
 *     ctxc_session_set_llm_resolver(&session, ctxc_provider_resolve,
 *                                   &binding);
 *
 * When a summary call is due, the resolver reads the provider, model,
 * base-url, auth-key-name and stream of compression.profile (or, unset,
 * those in force), compression.retries, network.read-timeout-ms and
 * network.call-deadline-ms, and sets up the client. The bind flag `stream`
 * false forces non-streamed answers (a transport that cannot stream);
 * true lets the setting `stream` decide. */
/** The resolver's binding to a session's settings (see above); ctxc_provider_bind() fills it. */
typedef struct {
    ctxc_provider_client_t *client; /**< the client the calls go through */
    ctxc_settings_store_t *settings; /**< the settings it reads at each call */
    const ctxc_port_t *port; /**< the port (transport, key, delay, clock) */
    bool stream; /**< false: never ask for a streamed answer */
    ctxc_provider_ref_t ref_; /**< private: the last resolved reference */
    ctxc_llm_t llm_;          /**< private: what the resolver hands out */
} ctxc_provider_binding_t;

/** Fills b (all four must outlive the session's use of b). */
void ctxc_provider_bind(ctxc_provider_binding_t *b,
                        ctxc_provider_client_t *client,
                        ctxc_settings_store_t *settings,
                        const ctxc_port_t *port, bool stream);

/** A ctxc_llm_resolver_fn (ctxc/strategy.h) over a ctxc_provider_binding_t
 * (`user`). `profile` is informational: the binding reads
 * compression.profile itself. Errors: those of
 * ctxc_settings_compression_provider() (CTXC_E_PROFILE_NOT_FOUND naming the
 * profile, the profile file's error), CTXC_E_INVALID_ARG when no provider or
 * no model is configured (naming the settings to set, or the profile that
 * lacks them), and those of ctxc_provider_llm(). */
ctxc_status_t ctxc_provider_resolve(void *user, const char *profile,
                                    const ctxc_llm_t **llm, ctxc_error_t *err);

/* ---- parts for tests and other transports ------------------------------- */

/** Writes the JSON request body of req for provider p and model through
 * write(user, ...) (what the HTTP body writer does on each pass). Returns
 * CTXC_OK, the first error of write or of a part writer. */
ctxc_status_t ctxc_provider_write_body(const ctxc_provider_t *p,
                                       const char *model, bool stream,
                                       const ctxc_llm_request_t *req,
                                       ctxc_http_write_fn write, void *user);

/** Sets up r to read one answer of provider p into out[0 .. cap) (usage
 * must not be NULL; it is filled as the answer tells). stream: the answer
 * is an event stream (each event's data one JSON text), else one JSON
 * body. */
void ctxc_provider_reader_init(ctxc_provider_reader_t *r,
                               const ctxc_provider_t *p, bool stream, char *out,
                               size_t cap, ctxc_llm_usage_t *usage);

/** Feeds the next bytes of the current JSON text (an event's data, a body),
 * split anywhere; the first call after init or after ctxc_provider_end()
 * starts a new text. Errors: CTXC_E_PARSE (not JSON: the message says
 * what, and at which byte). */
ctxc_status_t ctxc_provider_feed(ctxc_provider_reader_t *r, const char *data,
                                 size_t len, ctxc_error_t *err);

/** Ends the current JSON text (no text open: CTXC_OK). Its answer text is
 * kept (and handed to on_text) when it is the answer's: thinking,
 * reasoning, thought parts, signatures and tool input are left out.
 * Errors: CTXC_E_PARSE (the text ended inside a value, or is not a JSON
 * object), CTXC_E_HTTP_STATUS (an error object in the answer, with the
 * provider's message). */
ctxc_status_t ctxc_provider_end(ctxc_provider_reader_t *r, ctxc_error_t *err);

/** ctxc_provider_feed() of js[0..len) as one whole JSON text, then
 * ctxc_provider_end(). */
ctxc_status_t ctxc_provider_read(ctxc_provider_reader_t *r, const char *js,
                                 size_t len, ctxc_error_t *err);

/** After a text with an error object (an HTTP error body): true, and *msg
 * the provider's message (printable ASCII, cut to
 * CTXC_PROVIDER_MESSAGE_BYTES - 1, "(no message)" when it had none). */
bool ctxc_provider_error_message(const ctxc_provider_reader_t *r,
                                 const char **msg);

/** The end of an answer; only a normal stop yields CTXC_OK (OpenAI "stop",
 * Anthropic "end_turn" / "stop_sequence", Gemini "STOP", or an OpenAI
 * stream ended by [DONE] without a reason). Errors:
 *   CTXC_E_STOPPED    a blocked prompt ("prompt blocked by the provider:
 *                     SAFETY"), any other finish reason (safety,
 *                     recitation, content_filter, refusal, pause_turn,
 *                     tool calls, ...: the message names it), a refusal
 *   CTXC_E_PARSE      cut off by the output limit (length, max_tokens,
 *                     MAX_TOKENS), no answer, or no finish reason
 *   CTXC_E_TOO_LARGE  the text did not fit (err->needed: bytes of buffer)
 * On CTXC_OK out is NUL-terminated. */
ctxc_status_t ctxc_provider_finish(ctxc_provider_reader_t *r,
                                   ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_PROVIDER_H */
