/*
 * Fuzz target: the answer readers of the providers (src/provider.c:
 * ctxc_provider_read / ctxc_provider_finish) for OpenAI-compatible,
 * Anthropic and Gemini answers, streamed (one event's data per input line)
 * and whole (the input is the body, read in place as the client does).
 *
 * Input: byte 0 picks the provider (mod 3), streaming (bit 2) and a small
 * output buffer (bit 3); a whole answer is read as an HTTP error body when
 * bit 4 is set (it also sizes the pieces); the rest is the answer.
 * Invariants: a refusal says why; an accepted answer is NUL-terminated
 * inside the buffer, valid UTF-8, and its length is what the reader says;
 * a text that does not fit is CTXC_E_TOO_LARGE with the bytes needed; the
 * provider's message of an error is printable ASCII inside its bound.
 */
#include "fuzz.h"

#include "ctxc/provider.h"
#include "json.h"

static const char *const names[3] = {"openai", "anthropic", "gemini"};
static char out[1 << 15];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > sizeof out - 1) {
        return 0;
    }
    const ctxc_provider_t *p = ctxc_provider_find(names[data[0] % 3u]);
    if (p == NULL) {
        return 0; /* left out of this build */
    }
    bool stream = (data[0] & 4u) != 0;
    size_t cap = (data[0] & 8u) != 0 ? 16 : sizeof out;
    const char *in = (const char *)data + 1;
    size_t len = size - 1;
    ctxc_llm_usage_t usage;
    memset(&usage, 0, sizeof usage);
    static ctxc_provider_reader_t r;
    ctxc_provider_reader_init(&r, p, stream, out, cap, &usage);
    r.error_body = !stream && (data[0] & 16u) != 0;
    ctxc_error_t err;
    ctxc_status_t st = CTXC_OK;
    if (stream) {
        size_t pos = 0;
        while (pos < len && st == CTXC_OK) {
            size_t end = pos;
            while (end < len && in[end] != '\n') {
                end++;
            }
            if (end > pos) {
                st = ctxc_provider_read(&r, in + pos, end - pos, &err);
                fuzz_check_error(st, &err, "provider read (event)");
            }
            pos = end + 1;
        }
    } else {
        /* a body of any size, in pieces as it arrives */
        size_t piece = 1u + (size_t)(data[0] >> 4);
        for (size_t pos = 0; pos < len && st == CTXC_OK; pos += piece) {
            size_t k = len - pos < piece ? len - pos : piece;
            st = ctxc_provider_feed(&r, in + pos, k, &err);
        }
        if (st == CTXC_OK) {
            st = ctxc_provider_end(&r, &err);
        }
        fuzz_check_error(st, &err, "provider read (whole)");
        const char *msg = NULL;
        if (st == CTXC_E_HTTP_STATUS &&
            !ctxc_provider_error_message(&r, &msg)) {
            fuzz_fail("an error in the answer without the provider's message");
        }
        for (size_t i = 0; msg != NULL && msg[i] != '\0'; i++) {
            if (i + 1u >= CTXC_PROVIDER_MESSAGE_BYTES || msg[i] < 0x20 ||
                msg[i] > 0x7E) {
                fuzz_fail("the provider's message is not printable ASCII "
                          "inside its bound (byte %zu)",
                          i);
            }
        }
    }
    if (st != CTXC_OK) {
        return 0;
    }
    st = ctxc_provider_finish(&r, &err);
    fuzz_check_error(st, &err, "provider finish");
    if (st == CTXC_E_TOO_LARGE && err.needed == 0) {
        fuzz_fail("too large without the bytes needed");
    }
    if (st != CTXC_OK) {
        return 0;
    }
    if (r.len >= cap || out[r.len] != '\0') {
        fuzz_fail("answer of %zu bytes not NUL-terminated in a %zu-byte "
                  "buffer",
                  r.len, cap);
    }
    size_t bad;
    if (!ctxc__utf8_valid(out, r.len, &bad)) {
        fuzz_fail("answer text is not valid UTF-8 at byte %zu", bad);
    }
    return 0;
}
