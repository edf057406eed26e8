/** @file
 * ctxc — HTTP/1.1 client and Server-Sent Events reader.
 *
 * One request per call over the port's transport (ctxc_port_t.transport;
 * see ctxc/port.h), every byte of memory from the caller:
 *
 *   static CTXC_HTTP_WORK_DEFINE(work);
 *   ctxc_http_request_t req = {.method = "POST", .url = url, ...};
 *   ctxc_http_response_t resp;
 *   st = ctxc_http_request(&req, &port, work, sizeof work, &resp, &err);
 *
 * The request head and body go out through a small buffer in the work area
 * (CTXC_CFG_HTTP_IO_BUFFER_BYTES): the body comes from a writer callback
 * that runs twice, once to count (Content-Length) and once to send, so a
 * large body is never held in RAM. The response is read incrementally:
 * headers and body bytes are handed to callbacks as they arrive (no
 * whole-body buffer), and a text/event-stream body can be split into events
 * by the SSE reader. Every request sends "Connection: close"; the transport
 * is closed on every path after a successful connect.
 *
 * Codings: every request sends "Accept-Encoding: identity" and the client
 * decodes no content coding and no transfer coding but chunked. A response
 * whose Content-Encoding is not absent or "identity", or whose
 * Transfer-Encoding holds anything but "chunked" (and "identity"), is
 * refused at the end of its headers, before any body byte reaches a
 * callback: a 2xx with CTXC_E_PARSE ("http: the response from `<host>` uses
 * content coding 'gzip', which ctxc does not decode (it asked for
 * identity)"; for a transfer coding "... transfer coding 'x' ... (it reads
 * chunked only)"). This holds for error statuses too (their excerpt would
 * be garbage), but there the status stays the report: CTXC_E_HTTP_STATUS
 * with the status, Retry-After and retryability as usual, the message
 * naming the coding instead of an excerpt, error_body "" and no body bytes
 * passed to on_body. HEAD and 204 answers have no body and are not
 * refused.
 *
 * Security: a header marked secret (an API key) is never sent over plain
 * http:// to a host that is not a loopback address as judged by
 * ctxc_http_host_is_loopback() (exactly "localhost", a canonical 127.a.b.c
 * or ::1): the call fails with CTXC_E_INSECURE before connecting. With a
 * secret over plain http://, "localhost" is not resolved: the transport is
 * asked to connect to the literal address "127.0.0.1" (the Host header
 * still says what the URL says), so the key goes where the rule judged, not
 * where a resolver points. Secret values never appear in error messages or
 * log lines (and are masked in the error body excerpt when the server
 * echoes them; see ctxc__mask_secret in src/error.h for the rule).
 *
 * Stack use: bounded (no recursion; the parsers keep their state and
 * buffers in the work area): about 320 bytes on Cortex-M4 for the client's
 * deepest call chain, plus the callbacks' and the transport hooks' own.
 */
#ifndef CTXC_HTTP_H
#define CTXC_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc_config_defaults.h"
#include "ctxc/port.h"
#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- URLs ---------------------------------------------------------------- */

/** Longest host name or address a URL may have (bytes, without brackets). */
#define CTXC_HTTP_HOST_MAX 255u

/** A parsed absolute URL. Pointers point into the parsed string. */
typedef struct {
    bool tls;         /**< https:// */
    const char *host; /**< without the brackets of an IPv6 literal */
    size_t host_len;  /**< 1 .. CTXC_HTTP_HOST_MAX */
    uint16_t port;    /**< the URL's port, else 80 / 443 */
    bool ipv6;        /**< host was a [v6] literal */
    const char *path; /**< path and query ("/" when the URL has none); a
                         fragment (#...) is not part of it */
    size_t path_len; /**< bytes of `path` */
} ctxc_url_t;

/** Parses "http://host[:port][/path][?query]" or "https://..." (scheme case
 * insensitive; host a name, a dotted IPv4 address or a [v6] literal).
 * User info (user:pass@) is refused: credentials go in a secret header.
 * Errors: CTXC_E_INVALID_ARG naming the problem (other schemes, an empty or
 * malformed host, a bad port, spaces or control characters in the path);
 * the message never repeats the path or query (which may hold a key). */
ctxc_status_t ctxc_url_parse(const char *url, ctxc_url_t *out,
                             ctxc_error_t *err);

/** True when host[0..len) is one of the loopback spellings a secret may
 * cross plain http:// to (the client and the providers use this rule):
 *   - "localhost" in any case, without a trailing dot ("localhost." is a
 *     name a resolver may answer for; the client connects to 127.0.0.1 for
 *     "localhost", see the top of this file);
 *   - a dotted IPv4 address 127.a.b.c in canonical decimal: exactly four
 *     parts, each 0..255 without leading zeros ("127.0.0.09", "127.08.0.1",
 *     "127.1", "2130706433" and hex forms are not, as resolvers read such
 *     text in different ways);
 *   - the IPv6 address ::1 in any spelling ("0:0:0:0:0:0:0:1", "::0:1"),
 *     given without the brackets of the URL.
 * Nothing here resolves a name: every accepted spelling is an address
 * (or "localhost", which the client does not resolve for a secret). */
bool ctxc_http_host_is_loopback(const char *host, size_t len);

/** Parses an HTTP-date (RFC 9110 5.6.7: IMF-fixdate "Sun, 06 Nov 1994
 * 08:49:37 GMT", and the obsolete RFC 850 "Sunday, 06-Nov-94 08:49:37 GMT"
 * and asctime "Sun Nov  6 08:49:37 1994" forms) into Unix time (seconds
 * since 1970-01-01 UTC). A two-digit RFC 850 year is 19yy from 70, else
 * 20yy. The weekday is not checked against the date. Returns false when s
 * is not one of the three forms (or a date before 1970). */
bool ctxc_http_parse_date(const char *s, size_t len, uint64_t *unix_time);

/* ---- requests ------------------------------------------------------------ */

/** One request header. name and value are NUL-terminated; neither may hold
 * CR, LF or NUL, and name must be an HTTP token. */
typedef struct {
    const char *name; /**< the header's name (an HTTP token) */
    const char *value; /**< its value */
    /** true for credentials (Authorization, x-api-key, ...): never sent over
     * plain http:// to a non-loopback host (CTXC_E_INSECURE; over plain
     * http:// "localhost" is then reached at 127.0.0.1), never shown in
     * messages or logs, masked in the error body excerpt. */
    bool secret;
} ctxc_http_header_t;

/** The request body writer: writes the whole body through write(write_user,
 * bytes, len), in any number of calls, and returns CTXC_OK, or the first
 * error write() returned, or its own error. It is called twice per request
 * and must write the same bytes both times: first to count them
 * (Content-Length; write() only counts), then to send them (write() sends
 * through the I/O buffer). A second pass of another length fails the request
 * with CTXC_E_INVALID_ARG before the last byte goes out, so the server never
 * receives a complete request with a wrong body. write has the shape of
 * ctxc_write_fn (ctxc/jsonl.h): a body writer can hand it straight to
 * ctxc_export() and the other streaming writers. */
typedef ctxc_status_t (*ctxc_http_write_fn)(void *user, const char *data,
                                            size_t len);
/** Request body writer (see above). */
typedef ctxc_status_t (*ctxc_http_body_fn)(void *body_user,
                                           ctxc_http_write_fn write,
                                           void *write_user);

/** Called once per header (and trailer) line of the final response, in
 * order; name and value are the raw bytes (value without surrounding
 * spaces), not NUL-terminated, valid during the call. resp->status is
 * already set. The headers of interim 1xx responses (100 Continue, 103
 * Early Hints) are not passed on and leave nothing in resp (no Location,
 * Retry-After, Date, Content-Length, Content-Type, ...). A status other
 * than CTXC_OK stops the request and is returned. */
typedef ctxc_status_t (*ctxc_http_header_fn)(void *user, const char *name,
                                             size_t name_len, const char *value,
                                             size_t value_len);

/** Called with body bytes as they arrive (decoded from chunked transfer
 * coding), for every final response, error statuses included (check
 * resp->status). A status other than CTXC_OK stops the request. */
typedef ctxc_status_t (*ctxc_http_data_fn)(void *user, const char *data,
                                           size_t len);

/** One Server-Sent Event. Strings are valid during the callback. */
typedef struct {
    const char *type; /**< the event: field, "message" when there was none */
    size_t type_len; /**< bytes of `type` */
    const char *data; /**< the data: lines joined with `"\n"`, NUL-terminated */
    size_t data_len; /**< bytes of `data` */
    const char *id; /**< the last event id seen in the stream ("" if none) */
    size_t id_len; /**< bytes of `id` */
    bool has_retry;    /**< a retry: field with digits only was seen */
    uint32_t retry_ms; /**< its value (the last one seen in the stream) */
    bool done;         /**< data is exactly "[DONE]": the end of the stream */
} ctxc_sse_event_t;

/** Called once per event; a status other than CTXC_OK stops the stream (and
 * the request) and is returned. */
typedef ctxc_status_t (*ctxc_sse_event_fn)(void *user,
                                           const ctxc_sse_event_t *ev);

/** Streaming mode (ctxc_sse_stream_data, ctxc_http_request_t.on_event_data):
 * called with the data of the current event as it arrives, in pieces split
 * anywhere (the data: lines joined with `"\n"`), before the event's
 * ctxc_sse_event_fn call; a status other than CTXC_OK stops the stream. */
typedef ctxc_status_t (*ctxc_sse_data_fn)(void *user, const char *data,
                                          size_t len);

/** One HTTP request: method, URL, headers, body and the response callbacks. */
typedef struct {
    const char *method; /**< "GET", "POST", ... (an HTTP token) */
    const char *url;    /**< http:// or https:// (ctxc_url_parse) */
    /** Sent as given (NULL: not sent). Host, User-Agent (`ctxc/<version>`),
     * Accept-Encoding: identity, Content-Length (when there is a body or
     * the method is POST, PUT or PATCH) and Connection: close are always
     * sent by the client (headers may not set Host, Accept-Encoding,
     * Content-Length, Transfer-Encoding or Connection; a caller's
     * User-Agent replaces ctxc's). */
    const char *content_type;
    const char *accept; /**< Accept header (NULL: not sent) */
    const ctxc_http_header_t *headers; /**< extra headers, the auth header(s)
                                          marked secret */
    size_t header_count; /**< entries in `headers` */
    /** The body: body_fn when not NULL (called twice, see above), else
     * body_data[0..body_len) (may be NULL with body_len 0: no body). */
    ctxc_http_body_fn body_fn;
    void *body_user; /**< pointer handed to `body_fn` */
    const char *body_data; /**< the body as bytes, when body_fn is NULL */
    size_t body_len; /**< bytes of `body_data` */
    /** Read timeout: ms without progress while sending or receiving (the
     * port's clock measures it); 0: CTXC_CFG_HTTP_TIMEOUT_MS. Without a
     * clock, CTXC_CFG_HTTP_IDLE_POLLS_MAX consecutive "try again" answers
     * of the transport are the timeout. The connect timeout is the
     * transport's own. */
    uint32_t timeout_ms;
    uint32_t deadline_ms; /**< the whole request (connect to last byte) must
                             end within this many ms of the call's start, by
                             the port's clock; 0: no deadline */
    /* The deadline is checked before every send and recv and once the
     * transport's connect returns (the connect itself is bounded by the
     * transport's own connect timeout). When it runs out the call fails with
     * CTXC_E_TIMEOUT (also while reading an error status's body), the
     * message starting "deadline of <deadline_ms> ms ran out while ..."
     * (connecting to / sending the request to / reading the response from
     * <host>). A port without a clock cannot measure it: it is then not
     * enforced (the read timeout still is, by its poll count). */
    /** Response callbacks (each may be NULL) and their user pointer. */
    ctxc_http_header_fn on_header;
    ctxc_http_data_fn on_body; /**< each piece of the response body as it arrives */
    /** When not NULL, a 2xx body with Content-Type text/event-stream is read
     * as an event stream and each event goes to on_event (another body
     * goes to on_body only: check resp->event_stream); on_body still gets the
     * raw bytes the reader read (the events of a slice of bytes come first).
     * After a "[DONE]" event the request ends with CTXC_OK without reading
     * further (on_body gets the bytes up to its line end); a stream that ends
     * inside an event fails with CTXC_E_PARSE. */
    ctxc_sse_event_fn on_event;
    /** With on_event: NULL reads each event's data whole into the SSE buffer
     * (CTXC_CFG_HTTP_SSE_BUFFER_BYTES bounds an event); not NULL streams it
     * to this callback as it arrives (events of any size; on_event then
     * gets ev->data "" and ev->data_len the bytes streamed). */
    ctxc_sse_data_fn on_event_data;
    void *user; /**< pointer handed to every response callback */
} ctxc_http_request_t;

/** What the server answered; filled by ctxc_http_request() on success and on
 * failure (as far as the response got). */
typedef struct {
    uint16_t status;      /**< final HTTP status, 0 when none was read */
    bool retryable;       /**< == ctxc_http_retryable() of the call's result */
    bool has_retry_after; /**< a valid Retry-After header */
    /** Seconds to wait: the delta-seconds of Retry-After, or its HTTP-date
     * minus the response's Date header (0 when already past). When the
     * header is an HTTP-date and the response has no valid Date header,
     * the client cannot know the server's "now" (the port's clock is
     * monotonic, not wall time): retry_after_s is then 0 and only
     * retry_after_date is set, for the caller to compare with its wall
     * clock. */
    uint32_t retry_after_s;
    uint64_t retry_after_date; /**< Unix time of an HTTP-date Retry-After,
                                  0 for delta-seconds */
    bool has_content_length; /**< the response had a Content-Length */
    uint64_t content_length; /**< its value */
    bool chunked;        /**< Transfer-Encoding: chunked */
    bool event_stream;   /**< Content-Type: text/event-stream */
    bool sse_done;       /**< the event stream ended with [DONE] */
    uint64_t body_bytes; /**< body bytes received (after dechunking) */
    /** The Location of a 3xx, or the printable excerpt of an error body
     * (>= 400; secrets masked); NUL-terminated, in the work area (valid
     * until it is reused), "" when none. */
    const char *location;
    const char *error_body; /**< the printable excerpt of an error body (>= 400; secrets masked), "" when none */
} ctxc_http_response_t;

/** Bytes of the client's internal state in the work area (an upper bound,
 * checked by the build: 256 on 32-bit targets, 384 on 64-bit hosts; 32
 * more than before the resumable request kept its send position). */
#define CTXC_HTTP_STATE_BYTES (128u + 32u * sizeof(void *))

/* ---- Server-Sent Events (WHATWG HTML "event stream" parsing) ------------ */

/** The SSE reader. Members are private; set up with ctxc_sse_init(). */
typedef struct {
    char *buf_;           /**< data of the event, then the current line */
    size_t cap_;          /**< bytes of buf_ */
    size_t data_len_;     /**< bytes of data so far */
    size_t line_len_;     /**< bytes of the current line */
    uint32_t data_lines_; /**< data: lines of the current event */
    uint32_t retry_ms_;
    uint8_t flags_;
    size_t type_len_;
    size_t id_len_;
    size_t used_; /**< bytes of the last feed read */
    ctxc_sse_event_fn fn_;
    ctxc_sse_data_fn data_fn_; /**< streaming mode when not NULL */
    void *user_;
    uint8_t done_; /**< data bytes matching "[DONE]" (streaming mode) */
    char type_[CTXC_CFG_HTTP_SSE_FIELD_MAX];
    char id_[CTXC_CFG_HTTP_SSE_FIELD_MAX];
} ctxc_sse_parser_t;

/** Sets up p over buf[0..cap) (cap >= 2): one event's data plus the line
 * being read must fit (else CTXC_E_TOO_LARGE). Events go to fn(user, ...). */
void ctxc_sse_init(ctxc_sse_parser_t *p, char *buf, size_t cap,
                   ctxc_sse_event_fn fn, void *user);

/** Switches p (after ctxc_sse_init) to streaming mode: each event's data goes
 * to fn(user, ...) as it arrives and is never held whole; buf then holds only
 * the line being read (a field name, or an event, id or retry value), and the
 * event callback gets ev->data "" with ev->data_len the bytes streamed.
 * Field names other than data, event, id and retry have their values
 * dropped unread. fn NULL: back to whole events. */
void ctxc_sse_stream_data(ctxc_sse_parser_t *p, ctxc_sse_data_fn fn);

/** Feeds the next bytes of the stream, split anywhere. Lines end with CRLF,
 * LF or CR; lines starting with ':' are comments; fields event, data, id
 * and retry (other fields are ignored; "name: value" or "name:value"; a
 * line without ':' is a field with an empty value); an empty line dispatches
 * the event when it has data. After the [DONE] event further bytes are
 * ignored. Errors: CTXC_E_TOO_LARGE (a line and the event's data do not fit
 * the buffer, or an event type or id longer than
 * CTXC_CFG_HTTP_SSE_FIELD_MAX - 1), or what the callback returned. */
ctxc_status_t ctxc_sse_feed(ctxc_sse_parser_t *p, const char *data, size_t len,
                            ctxc_error_t *err);

/** Bytes of the last ctxc_sse_feed() call that were read: all of them,
 * except after the [DONE] event (the bytes up to the line end that
 * dispatched it) or an error (the bytes before the one that failed, or up to
 * the line end whose field or callback failed). */
size_t ctxc_sse_used(const ctxc_sse_parser_t *p);

/** The end of the stream. Errors: CTXC_E_PARSE when it ends inside an event
 * (a line without its end, or fields not yet dispatched by an empty line),
 * unless [DONE] was seen. */
ctxc_status_t ctxc_sse_finish(ctxc_sse_parser_t *p, ctxc_error_t *err);

/** True once the [DONE] event was dispatched. */
bool ctxc_sse_done(const ctxc_sse_parser_t *p);

/* ---- the client ---------------------------------------------------------- */

/** Bytes of work area one request needs (with the configured sizes). */
#define CTXC_HTTP_WORK_BYTES                                                   \
    (CTXC_HTTP_STATE_BYTES + sizeof(ctxc_sse_parser_t) + 8u +                  \
     (CTXC_HTTP_HOST_MAX + 1u) + CTXC_CFG_HTTP_IO_BUFFER_BYTES +               \
     (CTXC_CFG_HTTP_LINE_MAX + 1u) + CTXC_CFG_HTTP_SSE_BUFFER_BYTES +          \
     CTXC_CFG_HTTP_ERROR_BODY_MAX)

/** Declares a suitably aligned work area: `static CTXC_HTTP_WORK_DEFINE(w);`
 * (pass w and sizeof w). Also usable as a struct member (it carries no
 * attribute). For a standalone one placed in a section:
 * `static CTXC_HTTP_WORK_DEFINE_ATTR(w, __attribute__((section(".x"))));`
 * (CTXC_STORAGE_ATTR applies too). The work area needs no init function:
 * any memory of CTXC_HTTP_WORK_BYTES bytes, any alignment, will do. */
#define CTXC_HTTP_WORK_DEFINE(name)                                            \
    uint64_t name[(CTXC_HTTP_WORK_BYTES + 7u) / 8u]
/** CTXC_HTTP_WORK_DEFINE() with an attribute list (see above). */
#define CTXC_HTTP_WORK_DEFINE_ATTR(name, attr)                                 \
    CTXC_HTTP_WORK_DEFINE(name) CTXC_STORAGE_ATTR attr

/** Sends one request and reads its response (see the top of this file).
 * work[0..work_bytes) is the work area (any alignment; at least
 * CTXC_HTTP_WORK_BYTES); it must stay untouched during the call. port
 * gives the transport (port->transport), the clock and the log.
 * Returns CTXC_OK for a 2xx response read to its end. Errors:
 *   CTXC_E_INVALID_ARG   a NULL argument, no transport, a bad URL, method
 *                        or header, or a body writer whose two passes
 *                        differ in length
 *   CTXC_E_NO_SPACE      work_bytes too small (err->needed = bytes missing)
 *   CTXC_E_INSECURE      a secret header and plain http:// to a host that is
 *                        not loopback by ctxc_http_host_is_loopback()
 *                        (nothing was connected)
 *   CTXC_E_NETWORK       connect failed (resolve, refused; a transport's
 *                        CTXC_E_IO is reported as this), send/recv error,
 *                        reset, or the connection closed before the
 *                        response was complete
 *   CTXC_E_TLS           the transport's connect reported a TLS failure
 *   CTXC_E_TIMEOUT       no progress within the read timeout, the
 *                        request's deadline_ms ran out, or the transport's
 *                        connect timed out
 *   CTXC_E_HTTP_STATUS   the final status is not 2xx: >= 400 with the
 *                        status and the body excerpt (or the coding that
 *                        kept it from being read) in the message; 3xx (not
 *                        followed) naming the Location
 *   CTXC_E_PARSE         a malformed response (status line, header,
 *                        Content-Length, chunk), a 2xx body in a content or
 *                        transfer coding ctxc does not decode (see
 *                        "Codings" at the top), or an event stream that
 *                        ended inside an event
 *   CTXC_E_TOO_LARGE     a response line longer than CTXC_CFG_HTTP_LINE_MAX,
 *                        more than CTXC_CFG_HTTP_MAX_HEADERS headers, an SSE
 *                        line or event too large for its buffer
 *                        (CTXC_CFG_HTTP_SSE_BUFFER_BYTES) or an SSE event
 *                        type or id over CTXC_CFG_HTTP_SSE_FIELD_MAX - 1;
 *                        the message names the limit, its value and, where
 *                        known, the size met (a line's length, or the bytes
 *                        read of it without its end)
 *   or the status a callback (body writer, on_header, on_body, on_event)
 *   returned. resp is filled as far as the response got. */
ctxc_status_t ctxc_http_request(const ctxc_http_request_t *req,
                                const ctxc_port_t *port, void *work,
                                size_t work_bytes, ctxc_http_response_t *resp,
                                ctxc_error_t *err);

/* ---- the resumable request ------------------------------------------------
 *
 * ctxc_http_request() is a loop over these steps (one code path): it calls
 * ctxc_http_step() until the answer is not CTXC_E_IN_PROGRESS and, when a
 * step moved nothing (ctxc_http_idle) and the transport has a wait op,
 * waits in it for at most CTXC_HTTP_WAIT_SLICE_MS between steps. A caller
 * that must never block (a main loop, ctxc_session_poll) calls the steps
 * itself and returns to its own work in between.
 *
 * Nothing of the call lives on the stack between steps: its state is in
 * the work area, and req, port, resp and what they point to (the URL, the
 * headers, the callbacks' user data) must stay valid and unchanged until
 * the call has ended (a step answered something else than
 * CTXC_E_IN_PROGRESS, or ctxc_http_cancel()).
 *
 * One step does one bounded piece of work: start() checks the request and
 * runs the body writer's count pass; then each step is one transport call
 * (connect, or connect_poll: the TCP connect's completion, one handshake
 * step) or one send step (the request rendered from its start, the bytes
 * already sent skipped, at most 16 I/O buffers handed to the transport,
 * stopping at the first it does not take whole: its position is kept, so
 * the body writer runs once per such step and its cost grows with the
 * body's offset) or one recv() of at most CTXC_CFG_HTTP_IO_BUFFER_BYTES
 * fed through the parser, the SSE reader and the callbacks. Time limits
 * are checked at each step by the port's clock: the read timeout and
 * deadline_ms as for ctxc_http_request(). */

/** Longest wait of ctxc_http_request() in the transport's wait op between
 * two steps (it returns early once the connection can go on). */
#define CTXC_HTTP_WAIT_SLICE_MS 50u

/** Starts a request in work (as ctxc_http_request: same arguments, same
 * checks). Returns CTXC_E_IN_PROGRESS when the request is under way (call
 * ctxc_http_step()), or the error (nothing was connected). */
ctxc_status_t ctxc_http_start(const ctxc_http_request_t *req,
                              const ctxc_port_t *port, void *work,
                              size_t work_bytes, ctxc_http_response_t *resp,
                              ctxc_error_t *err);

/** Advances the request in work by one step (see above) and never waits.
 * Returns CTXC_E_IN_PROGRESS (call again), CTXC_OK (a 2xx response read to
 * its end) or an error as ctxc_http_request() lists them; after any answer
 * but CTXC_E_IN_PROGRESS the transport is closed and resp filled as far as
 * the response got. CTXC_E_INVALID_ARG when no request is under way. */
ctxc_status_t ctxc_http_step(void *work, ctxc_error_t *err);

/** True when the last step moved no byte and changed no phase: the
 * connection waits for the network (a blocking caller may wait now).
 * False before the first step (the connect can run at once). */
bool ctxc_http_idle(const void *work);

/** Ends a request under way: the transport is closed (mid-connect too);
 * nothing more is sent, no callback runs. resp->retryable is false. A
 * request that has ended already is left as it is. */
void ctxc_http_cancel(void *work);

/** Whether sending the same request again could help after status st:
 * CTXC_E_NETWORK and CTXC_E_TIMEOUT yes; CTXC_E_HTTP_STATUS for 408, 429
 * and 5xx yes (resp may be NULL: then no); everything else no (other 4xx,
 * 3xx, TLS, malformed responses, insecure requests, bad arguments). */
bool ctxc_http_retryable(ctxc_status_t st, const ctxc_http_response_t *resp);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_HTTP_H */
