/** @file
 * ctxc — status codes.
 *
 * Every status code is written once, in CTXC_STATUS_LIST. The enum and the
 * text returned by ctxc_strerror() both expand from it.
 */
#ifndef CTXC_STATUS_H
#define CTXC_STATUS_H

#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc_config_defaults.h"

#ifdef __cplusplus
extern "C" {
#endif

/** X(name, text) */
#define CTXC_STATUS_LIST(X)                                                    \
    X(CTXC_OK, "ok")                                                           \
    X(CTXC_E_INVALID_ARG, "invalid argument")                                  \
    X(CTXC_E_NO_SPACE, "out of space in a caller-provided buffer or arena")    \
    X(CTXC_E_RANGE, "index out of range")                                      \
    X(CTXC_E_PARSE, "malformed input")                                         \
    X(CTXC_E_UTF8, "invalid UTF-8 or unicode escape")                          \
    X(CTXC_E_TOO_DEEP, "JSON nesting deeper than the configured limit")        \
    X(CTXC_E_TOO_LARGE, "input larger than a configured limit")                \
    X(CTXC_E_NOT_FOUND, "not found")                                           \
    X(CTXC_E_IO, "input/output error")                                         \
    X(CTXC_E_UNKNOWN_STRATEGY, "unknown compression strategy")                 \
    X(CTXC_E_UNAVAILABLE, "not available in this build")                       \
    X(CTXC_E_BUSY, "history is locked by a compression in progress")           \
    X(CTXC_E_PROMPT_NOT_FOUND, "prompt not found")                             \
    X(CTXC_E_PROFILE_NOT_FOUND, "profile not found")                           \
    X(CTXC_E_EXISTS, "already exists")                                         \
    X(CTXC_E_READ_ONLY, "read-only filesystem")                                \
    X(CTXC_E_NETWORK, "network failure (resolve, connect, reset)")             \
    X(CTXC_E_TLS, "TLS handshake or certificate verification failed")          \
    X(CTXC_E_TIMEOUT, "timed out")                                             \
    X(CTXC_E_HTTP_STATUS, "the server answered with an HTTP error status")     \
    X(CTXC_E_INSECURE, "refused: a secret would cross plain HTTP")             \
    X(CTXC_E_STOPPED, "the model stopped without a normal finish (safety, "    \
                      "refusal, blocked prompt, ...)")                         \
    X(CTXC_E_IN_PROGRESS, "in progress: call again to go on")                 \
    X(CTXC_E_CANCELLED, "cancelled: the call or job was stopped before its "   \
                        "end")                                                 \
    X(CTXC_E_IDLE, "idle: no job in progress, nothing to do")

/** Status codes: CTXC_OK (0) and the CTXC_E_* errors of CTXC_STATUS_LIST, each with its description (ctxc_strerror()). */
typedef enum {
#define CTXC_STATUS_ENUM_(name, text) name,
    CTXC_STATUS_LIST(CTXC_STATUS_ENUM_)
#undef CTXC_STATUS_ENUM_
        CTXC_STATUS_COUNT_
} ctxc_status_t;

/** Short, constant description of a status code; never NULL. Unknown values
 * give "unknown status". */
const char *ctxc_strerror(ctxc_status_t status);

/** Details of a failed call. Every fallible public function takes an optional
 * `ctxc_error_t *err` (NULL is allowed) and fills it on failure. A call that
 * returns CTXC_OK leaves err exactly as it was (what it tried and did not
 * need, such as a prompt file missing before the built-in one is used, is
 * not reported), and so do the two answers that are not failures:
 * CTXC_E_IN_PROGRESS (a step of a resumable call: call again) and
 * CTXC_E_IDLE (ctxc_session_poll() with no job in progress: nothing to do).
 * On every other status err is filled:
 *   status   the same value the function returned
 *   line     1-based input line for codec errors, 0 otherwise
 *   needed   for CTXC_E_NO_SPACE: how many more bytes (or entry slots, as the
 *            message says) the call needed; 0 otherwise
 *   message  a NUL-terminated explanation naming the offending field, key,
 *            file or value (empty when CTXC_CFG_ERROR_MESSAGE_LEN is 0). It
 *            never contains secret material. */
typedef struct {
    ctxc_status_t status; /**< the same value the function returned */
    uint32_t line; /**< 1-based input line for codec errors, 0 otherwise */
    size_t needed; /**< for CTXC_E_NO_SPACE: how many more bytes or entries the call needed; 0 otherwise */
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    char message[CTXC_CFG_ERROR_MESSAGE_LEN];
#endif
} ctxc_error_t;

/** The message of `err` ("" when messages are compiled out or err is NULL). */
const char *ctxc_error_message(const ctxc_error_t *err);

/** Fills err (when not NULL) with status st and a message built from fmt,
 * and returns st: `return ctxc_error_set(err, CTXC_E_IO, "%s: %s", path,
 * why);`. For ports and callers; there is no stdio behind it. fmt knows
 * %s (const char *), %u (unsigned), %z (size_t), %q (const char *, size_t:
 * quoted, clipped to 40 bytes) and %%. line and needed are set to 0. */
ctxc_status_t ctxc_error_set(ctxc_error_t *err, ctxc_status_t st,
                             const char *fmt, ...);

/** Name of the status code as written in the source ("CTXC_E_NO_SPACE"). */
const char *ctxc_status_name(ctxc_status_t status);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_STATUS_H */
