/** @file
 * ctxc — the summariser call: what the LLM strategies (middle-out, one-shot)
 * ask of a model, independent of any provider or transport.
 *
 * A strategy builds a ctxc_llm_request_t whose parts are produced by
 * callbacks (so the history is rendered straight into the request body and
 * never copied whole into RAM) and hands it to a ctxc_llm_t. The provider
 * layer (ctxc/provider.h) implements ctxc_llm_t over the HTTP client and the
 * port's transport for the OpenAI-compatible, Anthropic and Gemini APIs;
 * tests implement it with a fake.
 *
 * Every writer callback may be called more than once per request (a count
 * pass for Content-Length, then a send pass; again on a retry) and must
 * write the same bytes each time.
 */
#ifndef CTXC_LLM_H
#define CTXC_LLM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"
#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Receives a piece of plain UTF-8 text of a request part (not JSON-escaped:
 * the provider escapes it). Returns CTXC_OK, or an error that the part's
 * writer must return as is. */
typedef ctxc_status_t (*ctxc_llm_write_fn)(void *user, const char *text,
                                           size_t len);

/** Writes one part (the system instruction, or message i) through write. */
typedef ctxc_status_t (*ctxc_llm_part_fn)(void *src, size_t index,
                                          ctxc_llm_write_fn write,
                                          void *write_user);

/** The role of a message in a summariser request. */
typedef enum {
    CTXC_LLM_ROLE_USER = 0,
    CTXC_LLM_ROLE_ASSISTANT = 1
} ctxc_llm_role_t;

/** One summariser request: a system instruction and a list of messages. */
typedef struct {
    ctxc_llm_part_fn system;      /**< writes the system instruction (index 0);
                                     NULL: none */
    size_t message_count;         /**< >= 1 */
    ctxc_llm_part_fn message;     /**< writes message i, 0 <= i < message_count */
    const ctxc_llm_role_t *roles; /**< message_count roles; NULL: all user */
    void *src;                    /**< passed to system and message */
    uint32_t max_output_tokens;   /**< 0: the provider's default */
    /** Optional: called with each piece of the answer's text as it is read
     * (a streamed answer piece by piece; a whole one as it is decoded), for
     * a chat client that shows the reply while it arrives. The pieces are
     * also in complete()'s output; a retry after a failed attempt starts
     * the text again. The status it returns is ignored. NULL: none. */
    ctxc_llm_write_fn on_text;
    void *on_text_user; /**< pointer handed to on_text */
} ctxc_llm_request_t;

/** What the call reported besides the text. */
typedef struct {
    uint64_t input_tokens; /**< as the provider counted them; 0: not reported */
    uint64_t output_tokens; /**< as the provider counted them; 0: not reported */
    char finish_reason[24]; /**< the provider's own word ("stop", "end_turn",
                               "STOP", ...), "" when none was reported */
    uint32_t attempts;      /**< requests sent (1 + retries) */
    uint32_t http_status;   /**< of the last response, 0: none */
} ctxc_llm_usage_t;

/** A model that writes summaries. complete() sends the request and writes
 * the answer's text (thinking/reasoning left out) into out[0..cap), NUL-
 * terminated, *len its length; it retries transient failures itself
 * (bounded) and never switches to another model.
 * Errors: CTXC_E_TOO_LARGE (the answer does not fit cap; err->needed when
 * known), CTXC_E_PARSE (malformed answer, or cut off by the output limit:
 * the message says which), CTXC_E_HTTP_STATUS (with the provider's own
 * error text), CTXC_E_NETWORK, CTXC_E_TLS, CTXC_E_TIMEOUT, CTXC_E_INSECURE,
 * CTXC_E_NOT_FOUND (no API key under the configured name), or a writer's
 * own error. No key or auth header text ever appears in err. */
typedef struct ctxc_llm {
    /** Sends the request and writes the answer (see above). */
    ctxc_status_t (*complete)(const struct ctxc_llm *llm,
                              const ctxc_llm_request_t *req, char *out,
                              size_t cap, size_t *len, ctxc_llm_usage_t *usage,
                              ctxc_error_t *err);
    void *ctx; /**< the implementation's context (a provider client) */
    const char *provider; /**< names for prompts and reports ("openai", ...) */
    const char *model; /**< the model's name */
    /** The resumable form of complete() (all three NULL: the model has only
     * complete(); the provider layer has both, complete() being a loop over
     * these steps that waits between them). start() checks the arguments
     * and starts the call: CTXC_E_IN_PROGRESS, or an error (the call has
     * ended). req, out and everything they point to must stay valid and
     * unchanged until the call has ended. One call at a time per model:
     * start() during a call answers CTXC_E_BUSY. */
    ctxc_status_t (*start)(const struct ctxc_llm *llm,
                           const ctxc_llm_request_t *req, char *out,
                           size_t cap, ctxc_error_t *err);
    /** Advances the call by one bounded step without waiting (one transport
     * step, or the check of a retry's "not before" time): CTXC_E_IN_PROGRESS,
     * or what complete() answers (then *len and *usage are filled as
     * complete() fills them, and the call has ended). */
    ctxc_status_t (*step)(const struct ctxc_llm *llm, size_t *len,
                          ctxc_llm_usage_t *usage, ctxc_error_t *err);
    /** Ends a call under way (nothing more is sent, the connection is
     * closed, the key wiped); harmless when none is. */
    void (*cancel)(const struct ctxc_llm *llm);
    /** When the call under way can next move (NULL: not known, step at
     * once): 0 now (the last step moved bytes or changed phase, or a
     * retry's pause is over), n: not before n ms (a retry's pause, by the
     * port clock), CTXC_LLM_DUE_NETWORK: when the connection has something
     * (the transport's wait op returns then). */
    uint32_t (*due_ms)(const struct ctxc_llm *llm);
} ctxc_llm_t;

/** ctxc_llm_t.due_ms(): the call waits for the network. */
#define CTXC_LLM_DUE_NETWORK UINT32_MAX

/** ctxc_llm_render_entry() flags: leave thinking blocks out (else each is
 * "[Reasoning left out]"). */
#define CTXC_LLM_RENDER_NO_THINKING 1u

/** Writes entry e as plain text for a model without tools — the rendering
 * of the summariser request, and what a chat client sends: text as is;
 * `[Tool Call: <name>] <parameters>`; `[Tool Result: <name>]`, then
 * `"\nError: <error>"` when there is one, then `"\n<result>"`; code fenced
 * with its language; media as `[Attachment: <mime type>, caption: ...,
 * file: ...; content not included]`; blocks separated by a blank line.
 * Returns CTXC_OK or the first error of write. */
ctxc_status_t ctxc_llm_render_entry(const ctxc_entry_t *e, unsigned flags,
                                    ctxc_llm_write_fn write, void *user);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_LLM_H */
