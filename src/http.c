/*
 * ctxc — HTTP/1.1 client over the port's transport (RFC 9112 message
 * syntax), allocation-free: everything lives in the caller's work area.
 *
 * Work area layout (from an 8-byte aligned start):
 *   http_t state (<= CTXC_HTTP_STATE_BYTES) | ctxc_sse_parser_t |
 *   host (CTXC_HTTP_HOST_MAX + 1) | I/O buffer | response line buffer
 *   (CTXC_CFG_HTTP_LINE_MAX + 1: the line and its CR) | SSE buffer |
 *   error body excerpt / Location
 *
 * The response parser is a byte-driven state machine (feed() takes any
 * slice), so a response split anywhere parses the same.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/http.h"
#include "error.h"
#include "sink.h"

enum {
    ST_STATUS = 0, /* reading the status line */
    ST_HEADER,     /* reading header lines */
    ST_BODY_LEN,   /* Content-Length body: `left` bytes to go */
    ST_BODY_CLOSE, /* body up to the end of the connection */
    ST_CHUNK_SIZE, /* reading a chunk-size line */
    ST_CHUNK_DATA, /* chunk data: `left` bytes to go */
    ST_CHUNK_END,  /* the CRLF after chunk data */
    ST_TRAILER,    /* trailer lines after the last chunk */
    ST_DONE
};

enum {
    PH_CONNECT = 0, /* connect() is due */
    PH_CONNECTING,  /* connect() answered CTXC_E_IN_PROGRESS */
    PH_SEND,        /* the request goes out */
    PH_RECV,        /* the response comes in */
    PH_END          /* ended (the transport is closed) */
};

typedef struct {
    const ctxc_http_request_t *req;
    const ctxc_port_t *port;
    ctxc_http_response_t *resp;
    ctxc_error_t *err;
    const ctxc_transport_ops_t *ops;
    void *tctx;
    ctxc_url_t url;
    /* the call's phase (PH_*) and the step's outcome */
    uint8_t phase;
    bool moved;     /* the last step moved bytes (or changed phase) */
    bool connected; /* connect was called and close is due */
    bool rendered;  /* every request byte is in the I/O buffer or sent */
    /* sending */
    ctxc_status_t out_st; /* the render's first error (or STOP_) */
    uint32_t windows;     /* windows sent by this step */
    uint64_t body_total;  /* bytes of the count pass */
    uint64_t body_gen;    /* body bytes of this render so far */
    uint64_t gen;         /* request bytes of this render so far */
    uint64_t pos;         /* request bytes handed to the I/O buffer */
    size_t io_off;        /* io[io_off, io_len): not sent yet */
    size_t io_len;
    bool overflow; /* the send pass wrote more than the count pass */
    /* timing */
    uint64_t last_progress; /* clock ms of the last byte moved */
    uint64_t start;         /* clock ms of the call's start */
    uint32_t idle_polls;    /* consecutive 0 answers */
    uint32_t timeout_ms;
    bool deadline_hit; /* the request's deadline ran out */
    /* response parser */
    uint8_t state;
    bool chunk_cr;       /* ST_CHUNK_END: the CR was seen */
    bool has_length;     /* Content-Length seen */
    bool te_chunked;     /* the last transfer coding is chunked */
    bool te_present;     /* any Transfer-Encoding */
    bool is_error;       /* final status >= 400 */
    bool use_sse;        /* 2xx body through the SSE reader */
    bool has_date;       /* a valid Date header */
    bool ra_is_date;     /* Retry-After is an HTTP-date */
    bool exc_space;      /* the excerpt ends with a space */
    uint8_t coding_kind; /* a coding ctxc does not decode: 0 none, 1 a
                            content coding, 2 a transfer coding */
    uint8_t coding_len;  /* bytes of coding */
    char coding[22];     /* the first such coding (cut to fit) */
    uint32_t header_count;
    uint64_t left;
    uint64_t length;
    uint64_t date;     /* Date header, Unix time */
    uint64_t ra_value; /* Retry-After: delta seconds or Unix time */
    size_t line_len;
    size_t exc_len;
    char *host;
    char *io;
    char *line;
    char *sse_buf;
    char *exc;
    ctxc_sse_parser_t *sse;
} http_t;

_Static_assert(sizeof(http_t) <= CTXC_HTTP_STATE_BYTES,
               "CTXC_HTTP_STATE_BYTES is too small for the client state");
_Static_assert(CTXC_HTTP_STATE_BYTES % 8u == 0,
               "CTXC_HTTP_STATE_BYTES keeps the SSE parser aligned");

#define LINE_CAP ((size_t)CTXC_CFG_HTTP_LINE_MAX + 1u)

/* ---- small helpers ------------------------------------------------------- */

CTXC__SIZE_NOINLINE static char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool eq_ci(const char *s, size_t n, const char *lit) {
    size_t k = strlen(lit);
    if (n != k) {
        return false;
    }
    for (size_t i = 0; i < k; i++) {
        if (lower(s[i]) != lit[i]) {
            return false;
        }
    }
    return true;
}

static bool is_tchar(char c) {
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
        (c >= '0' && c <= '9')) {
        return true;
    }
    return c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL;
}

static bool is_token(const char *s, size_t n) {
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!is_tchar(s[i])) {
            return false;
        }
    }
    return true;
}

/* A header value we send: no CR, LF or NUL (no header injection). */
static bool value_ok(const char *v) {
    return v != NULL && strpbrk(v, "\r\n") == NULL;
}

static bool is_ows(char c) { return c == ' ' || c == '\t'; }

/* ---- timing -------------------------------------------------------------- */

static bool has_clock(const http_t *h) {
    return h->port != NULL && h->port->clock != NULL;
}

static void progress(http_t *h) {
    h->moved = true;
    h->idle_polls = 0;
    if (has_clock(h)) {
        h->last_progress = ctxc_port_now_ms(h->port);
    }
}

/* The transport answered "try again": CTXC_E_TIMEOUT once it has been too
 * long (or, without a clock, too many times in a row). */
static ctxc_status_t idle(http_t *h, const char *what) {
    bool clock = has_clock(h);
    if (clock ? ctxc_port_now_ms(h->port) - h->last_progress < h->timeout_ms
              : ++h->idle_polls < (uint32_t)CTXC_CFG_HTTP_IDLE_POLLS_MAX) {
        return CTXC_OK;
    }
    return ctxc__fail(h->err, CTXC_E_TIMEOUT,
                      clock ? "http: %s %s: no progress for %u ms (read "
                              "timeout)"
                            : "http: %s %s: %u 'try again' answers in a row "
                              "and no clock (CTXC_CFG_HTTP_IDLE_POLLS_MAX)",
                      what, h->host,
                      clock ? (unsigned)h->timeout_ms
                            : (unsigned)CTXC_CFG_HTTP_IDLE_POLLS_MAX);
}

/* CTXC_E_TIMEOUT once the request's deadline has run out (never without a
 * clock or a deadline). what: "<doing> <host>". */
static ctxc_status_t deadline(http_t *h, const char *what) {
    uint32_t ms = h->req->deadline_ms;
    if (ms == 0 || !has_clock(h) ||
        ctxc_port_now_ms(h->port) - h->start < (uint64_t)ms) {
        return CTXC_OK;
    }
    h->deadline_hit = true;
    return ctxc__fail(h->err, CTXC_E_TIMEOUT,
                      "deadline of %u ms ran out while %s %s", (unsigned)ms,
                      what, h->host);
}

/* ---- sending ------------------------------------------------------------- *
 *
 * The request (head and body) is one byte sequence produced by render():
 * the head, then the body writer's bytes. It goes out through the I/O
 * buffer in windows: a send step renders from the start, skips the bytes
 * already handed to the buffer (h->pos), fills the buffer and hands it to
 * the transport without waiting; when the transport takes less than the
 * buffer, the render stops (nothing on the stack is kept: the next step
 * renders again from the start and skips further). The writer is thus
 * called once per window that does not go out at once; it must write the
 * same bytes each time (ctxc_http_body_fn). */

#define STOP_ CTXC_E_IN_PROGRESS /* render() stopped: the window is full */
/* Full windows one send step hands to the transport at most. */
#define SEND_WINDOWS_PER_STEP 16u

/* A send or recv answered r < 0 (not CTXC_TRANSPORT_EOF): CTXC_E_TLS for
 * CTXC_TRANSPORT_TLS_ERROR (a TLS error after the handshake), else
 * CTXC_E_NETWORK, with the port's own message (its last_error op: what
 * broke, the TLS library's text and code) when it has one. */
static ctxc_status_t transport_failed(http_t *h, int32_t r, const char *what) {
    ctxc_status_t st =
        r == CTXC_TRANSPORT_TLS_ERROR ? CTXC_E_TLS : CTXC_E_NETWORK;
    const char *why =
        h->ops->last_error != NULL ? h->ops->last_error(h->tctx) : NULL;
    if (why != NULL && why[0] != '\0') {
        return ctxc__fail(h->err, st, "http: %s %s failed: %s", what, h->host,
                          why);
    }
    return ctxc__fail(h->err, st,
                      st == CTXC_E_TLS
                          ? "http: %s %s failed (TLS error)"
                          : "http: %s %s failed (connection reset or "
                            "transport error)",
                      what, h->host);
}

/* Sends io[io_off, io_len) without waiting. CTXC_OK when all of it went,
 * STOP_ when the transport took less (a send of fewer bytes ends the step:
 * the transport is full), or the error; the deadline is checked before
 * every send. */
static ctxc_status_t flush_io(http_t *h) {
    while (h->io_off < h->io_len) {
        ctxc_status_t st = deadline(h, "sending the request to");
        if (st != CTXC_OK) {
            return st;
        }
        size_t want = h->io_len - h->io_off;
        int32_t r = h->ops->send(h->tctx, (const uint8_t *)h->io + h->io_off,
                                 want);
        if (r > 0 && (size_t)r <= want) {
            h->io_off += (size_t)r;
            progress(h);
            if ((size_t)r < want) {
                return STOP_; /* the transport is full for now */
            }
        } else if (r == 0) {
            return STOP_;
        } else {
            return transport_failed(h, r, "sending to");
        }
    }
    h->io_off = 0;
    h->io_len = 0;
    return CTXC_OK;
}

/* Request bytes as render() produces them: those before h->pos are
 * skipped, the rest fill the I/O buffer, which goes out when full (unless
 * it holds the body's last byte: that one waits for the writer's end). */
static ctxc_status_t emit(http_t *h, const char *p, size_t n, bool body) {
    if (body) {
        if (n > h->body_total - h->body_gen) {
            h->overflow = true;
            return CTXC_E_INVALID_ARG;
        }
        h->body_gen += n;
    }
    while (n > 0) {
        if (h->gen < h->pos) { /* sent in an earlier window */
            uint64_t skip = h->pos - h->gen;
            size_t k = skip < n ? (size_t)skip : n;
            h->gen += k;
            p += k;
            n -= k;
            continue;
        }
        size_t room = CTXC_CFG_HTTP_IO_BUFFER_BYTES - h->io_len;
        if (room == 0) {
            /* more bytes follow, so the request's last byte is not in the
             * buffer: that one goes only once the writer has ended with
             * the counted length (render, the step) */
            if (h->windows >= SEND_WINDOWS_PER_STEP) {
                return STOP_; /* this step's share */
            }
            h->windows++;
            ctxc_status_t st = flush_io(h);
            if (st != CTXC_OK) {
                return st;
            }
            continue;
        }
        size_t k = room < n ? room : n;
        memcpy(h->io + h->io_len, p, k);
        h->io_len += k;
        h->gen += k;
        h->pos += k;
        p += k;
        n -= k;
    }
    return CTXC_OK;
}

static void put_n(http_t *h, const char *s, size_t n) {
    if (h->out_st == CTXC_OK) {
        h->out_st = emit(h, s, n, false);
    }
}

static void put(http_t *h, const char *s) { put_n(h, s, strlen(s)); }

static void put_uint(http_t *h, uint64_t v) {
    char digits[24];
    ctxc__sink_t s = {digits, sizeof digits, 0};
    ctxc__put_uint(&s, v);
    put_n(h, digits, s.len);
}

static ctxc_status_t count_write(void *user, const char *data, size_t len) {
    (void)data;
    ((http_t *)user)->body_total += len;
    return CTXC_OK;
}

/* The send pass: never more than the count pass. */
static ctxc_status_t body_write(void *user, const char *data, size_t len) {
    http_t *h = user;
    if (h->out_st == CTXC_OK) {
        h->out_st = emit(h, data, len, true);
    }
    return h->out_st;
}

static ctxc_status_t fixed_body(void *body_user, ctxc_http_write_fn write,
                                void *write_user) {
    const ctxc_http_request_t *req = body_user;
    return write(write_user, req->body_data, req->body_len);
}

static ctxc_http_body_fn body_fn(const ctxc_http_request_t *req) {
    if (req->body_fn != NULL) {
        return req->body_fn;
    }
    return req->body_len > 0 ? fixed_body : NULL;
}

static void *body_user(const ctxc_http_request_t *req) {
    return req->body_fn != NULL ? req->body_user : (void *)(uintptr_t)req;
}

CTXC__SIZE_NOINLINE static ctxc_status_t body_failed(http_t *h,
                                                     ctxc_status_t st) {
    return ctxc__fail(h->err, st, "http: the request body writer failed: %s",
                      ctxc_strerror(st));
}

static bool method_is(const http_t *h, const char *m) {
    return strcmp(h->req->method, m) == 0;
}

static void put_header(http_t *h, const char *name, const char *value) {
    put(h, name);
    put(h, ": ");
    put(h, value);
    put(h, "\r\n");
}

static bool caller_sends(const ctxc_http_request_t *req, const char *name) {
    for (size_t i = 0; i < req->header_count; i++) {
        const char *n = req->headers[i].name;
        if (eq_ci(n, strlen(n), name)) {
            return true;
        }
    }
    return false;
}

/* Renders the whole request from its start (see above). CTXC_OK: every
 * byte is in the I/O buffer or sent; STOP_: the transport took less than a
 * window (h->pos says how far it got); or the error. */
CTXC__SIZE_NOINLINE static ctxc_status_t render(http_t *h) {
    const ctxc_http_request_t *req = h->req;
    h->gen = 0;
    h->body_gen = 0;
    h->out_st = CTXC_OK;
    put(h, req->method);
    put(h, " ");
    if (h->url.path[0] != '/') {
        put(h, "/"); /* "http://host?q" */
    }
    put_n(h, h->url.path, h->url.path_len);
    put(h, " HTTP/1.1\r\nHost: ");
    if (h->url.ipv6) {
        put(h, "[");
    }
    put(h, h->host);
    if (h->url.ipv6) {
        put(h, "]");
    }
    if (h->url.port != (h->url.tls ? 443u : 80u)) {
        put(h, ":");
        put_uint(h, h->url.port);
    }
    put(h, "\r\n");
    if (!caller_sends(req, "user-agent")) {
        put_header(h, "User-Agent", "ctxc/" CTXC_VERSION_STRING);
    }
    if (req->accept != NULL) {
        put_header(h, "Accept", req->accept);
    }
    put_header(h, "Accept-Encoding", "identity"); /* no coding decoded */
    if (req->content_type != NULL) {
        put_header(h, "Content-Type", req->content_type);
    }
    ctxc_http_body_fn fn = body_fn(req);
    if (fn != NULL || method_is(h, "POST") || method_is(h, "PUT") ||
        method_is(h, "PATCH")) {
        put(h, "Content-Length: ");
        put_uint(h, h->body_total);
        put(h, "\r\n");
    }
    put(h, "Connection: close\r\n");
    for (size_t i = 0; i < req->header_count; i++) {
        put_header(h, req->headers[i].name, req->headers[i].value);
    }
    put(h, "\r\n");
    if (fn != NULL && h->out_st == CTXC_OK) {
        ctxc_status_t st = fn(body_user(req), body_write, h);
        if (h->out_st != CTXC_OK && !h->overflow) {
            return h->out_st; /* STOP_, or a transport error */
        }
        if (st != CTXC_OK && !h->overflow) {
            return body_failed(h, st);
        }
        if (h->overflow || h->body_gen != h->body_total) {
            return ctxc__fail(
                h->err, CTXC_E_INVALID_ARG,
                "http: the request body writer wrote %s bytes on the "
                "send pass than the %z it counted (nothing more sent)",
                h->overflow ? "more" : "fewer", (size_t)h->body_total);
        }
    }
    return h->out_st;
}

/* ---- the error body excerpt ---------------------------------------------- */

CTXC__SIZE_NOINLINE static void exc_reset(http_t *h) {
    h->exc_len = 0;
    h->exc_space = false;
    h->exc[0] = '\0';
}

/* Appends printable text: whitespace runs become one space, other control
 * and non-ASCII bytes '?'. */
static void exc_put(http_t *h, const char *p, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (h->exc_len + 1u >= (size_t)CTXC_CFG_HTTP_ERROR_BODY_MAX) {
            break;
        }
        unsigned char c = (unsigned char)p[i];
        if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
            if (h->exc_len == 0 || h->exc_space) {
                continue;
            }
            c = ' ';
            h->exc_space = true;
        } else {
            h->exc_space = false;
            if (c < 0x20u || c >= 0x7Fu) {
                c = '?';
            }
        }
        h->exc[h->exc_len++] = (char)c;
    }
    h->exc[h->exc_len] = '\0';
}

/* Masks every secret header value in the NUL-terminated s by the one rule
 * (ctxc__mask_secret, error.h): the value as a whole, and each of its
 * space-separated words of 4 bytes or more (the key of "Bearer <key>": a
 * start of it cut off at the end of s is masked too). */
static void mask_secrets(const ctxc_http_request_t *req, char *s) {
    for (size_t i = 0; req->headers != NULL && i < req->header_count; i++) {
        const ctxc_http_header_t *hd = &req->headers[i];
        if (!hd->secret || hd->value == NULL) {
            continue;
        }
        const char *v = hd->value;
        ctxc__mask_secret(s, v, strlen(v));
        while (*v != '\0') {
            while (*v == ' ' || *v == '\t') {
                v++;
            }
            size_t n = 0;
            while (v[n] != '\0' && v[n] != ' ' && v[n] != '\t') {
                n++;
            }
            if (n >= 4u && n < strlen(hd->value)) {
                ctxc__mask_secret(s, v, n);
            }
            v += n;
        }
    }
}

static ctxc_status_t status_error(http_t *h) {
    mask_secrets(h->req, h->exc);
    h->resp->error_body = h->exc;
    return ctxc__fail(h->err, CTXC_E_HTTP_STATUS, "http: HTTP %u from %s: %s",
                      (unsigned)h->resp->status, h->host,
                      h->exc_len > 0 ? h->exc : "(no body)");
}

/* ---- the response parser ------------------------------------------------- */

/* Body bytes (dechunked). With the SSE reader, on_body gets the bytes it
 * read (so what it gets does not depend on how the bytes were sliced). */
static ctxc_status_t deliver(http_t *h, const char *p, size_t n) {
    const ctxc_http_request_t *req = h->req;
    ctxc_status_t st = CTXC_OK;
    if (h->use_sse) {
        st = ctxc_sse_feed(h->sse, p, n, h->err);
        n = ctxc_sse_used(h->sse);
        if (ctxc_sse_done(h->sse)) {
            h->resp->sse_done = true;
            h->state = ST_DONE; /* [DONE]: the rest is not read */
        }
    }
    h->resp->body_bytes += n;
    if (h->is_error) {
        exc_put(h, p, n);
    }
    if (req->on_body != NULL && n > 0) {
        ctxc_status_t body_st = req->on_body(req->user, p, n);
        if (st == CTXC_OK) {
            st = body_st;
        }
    }
    return st;
}

static ctxc_status_t body_end(http_t *h) {
    h->state = ST_DONE;
    if (h->use_sse) {
        return ctxc_sse_finish(h->sse, h->err);
    }
    return CTXC_OK;
}

static ctxc_status_t status_line(http_t *h, const char *s, size_t n) {
    /* HTTP/1.x SP 3DIGIT [SP reason] */
    unsigned code = 0;
    size_t i = 9;
    if (n >= 12 && memcmp(s, "HTTP/1.", 7) == 0 && s[7] >= '0' && s[7] <= '9' &&
        s[8] == ' ' && (n == 12 || s[12] == ' ')) {
        while (i < 12 && s[i] >= '0' && s[i] <= '9') {
            code = code * 10u + (unsigned)(s[i++] - '0');
        }
    }
    if (i != 12) {
        return ctxc__fail(h->err, CTXC_E_PARSE,
                          "http: malformed status line %q from %s", s, n,
                          h->host);
    }
    if (code < 100u || code > 599u) {
        return ctxc__fail(h->err, CTXC_E_PARSE,
                          "http: status %u from %s is not 100..599", code,
                          h->host);
    }
    h->resp->status = (uint16_t)code;
    h->state = ST_HEADER;
    return CTXC_OK;
}

static bool parse_u64(const char *s, size_t n, uint64_t *out) {
    uint64_t v = 0;
    if (n == 0) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (s[i] < '0' || s[i] > '9' || v > (UINT64_MAX - 9u) / 10u) {
            return false;
        }
        v = v * 10u + (uint64_t)(s[i] - '0');
    }
    *out = v;
    return true;
}

/* Reads a coding list (Content-Encoding, Transfer-Encoding): "identity"
 * elements are skipped, "chunked" (transfer only) sets te_chunked, the
 * first other coding is kept to be refused (coding_kind 1 content, 2
 * transfer). */
static void codings(http_t *h, const char *v, size_t vl, uint8_t kind) {
    size_t i = 0;
    while (i < vl) {
        while (i < vl && (is_ows(v[i]) || v[i] == ',')) {
            i++;
        }
        size_t b = i;
        while (i < vl && v[i] != ',' && !is_ows(v[i])) {
            i++;
        }
        size_t n = i - b;
        if (n == 0 || eq_ci(v + b, n, "identity")) {
            continue;
        }
        if (kind == 2u && eq_ci(v + b, n, "chunked")) {
            h->te_chunked = true;
        } else if (h->coding_kind == 0) {
            h->coding_kind = kind;
            h->coding_len =
                (uint8_t)(n < sizeof h->coding ? n : sizeof h->coding);
            memcpy(h->coding, v + b, h->coding_len);
        }
    }
}

static ctxc_status_t known_header(http_t *h, const char *name, size_t nl,
                                  const char *v, size_t vl) {
    static const char *const known[] = {"content-length",
                                        "transfer-encoding",
                                        "retry-after",
                                        "content-type",
                                        "date",
                                        "location",
                                        "content-encoding"};
    unsigned which = 0;
    while (which < 7 && !eq_ci(name, nl, known[which])) {
        which++;
    }
    if (which == 0) {
        uint64_t len;
        if (!parse_u64(v, vl, &len) || (h->has_length && len != h->length)) {
            return ctxc__fail(h->err, CTXC_E_PARSE,
                              "http: bad Content-Length %q from %s", v, vl,
                              h->host);
        }
        h->has_length = true;
        h->length = len;
    } else if (which == 1) {
        /* chunked (once, last) and identity are read; any other coding is
         * refused at the end of the headers */
        h->te_present = true;
        codings(h, v, vl, 2u);
    } else if (which == 2) {
        uint64_t s;
        if (parse_u64(v, vl, &s)) {
            h->ra_is_date = false;
            h->ra_value = s;
            h->resp->has_retry_after = true;
        } else if (ctxc_http_parse_date(v, vl, &s)) {
            h->ra_is_date = true;
            h->ra_value = s;
            h->resp->has_retry_after = true;
        }
    } else if (which == 3) {
        size_t k = 0; /* the media type, without parameters */
        while (k < vl && v[k] != ';' && !is_ows(v[k])) {
            k++;
        }
        h->resp->event_stream = eq_ci(v, k, "text/event-stream");
    } else if (which == 4) {
        h->has_date = ctxc_http_parse_date(v, vl, &h->date);
    } else if (which == 5) {
        exc_reset(h);
        exc_put(h, v, vl);
    } else if (which == 6) {
        codings(h, v, vl, 1u);
    }
    return CTXC_OK;
}

/* A header or trailer line (not empty). */
static ctxc_status_t header_line(http_t *h, const char *s, size_t n,
                                 bool trailer) {
    if (is_ows(s[0])) {
        return ctxc__fail(h->err, CTXC_E_PARSE,
                          "http: obsolete folded header line from %s", h->host);
    }
    size_t nl = 0;
    while (nl < n && s[nl] != ':') {
        nl++;
    }
    if (nl == n || !is_token(s, nl)) {
        return ctxc__fail(h->err, CTXC_E_PARSE,
                          "http: malformed header line %q from %s", s, n,
                          h->host);
    }
    if (++h->header_count > (uint32_t)CTXC_CFG_HTTP_MAX_HEADERS) {
        return ctxc__fail(h->err, CTXC_E_TOO_LARGE,
                          "http: more than %u header lines from %s, the "
                          "limit of CTXC_CFG_HTTP_MAX_HEADERS (%u)",
                          (unsigned)CTXC_CFG_HTTP_MAX_HEADERS, h->host,
                          (unsigned)CTXC_CFG_HTTP_MAX_HEADERS);
    }
    const char *v = s + nl + 1;
    size_t vl = n - nl - 1;
    while (vl > 0 && is_ows(v[0])) {
        v++;
        vl--;
    }
    while (vl > 0 && is_ows(v[vl - 1])) {
        vl--;
    }
    if (h->resp->status < 200u) {
        return CTXC_OK; /* an interim response's: nothing is kept */
    }
    if (!trailer) {
        ctxc_status_t st = known_header(h, s, nl, v, vl);
        if (st != CTXC_OK) {
            return st;
        }
    }
    if (h->req->on_header != NULL) {
        return h->req->on_header(h->req->user, s, nl, v, vl);
    }
    return CTXC_OK;
}

static void retry_after(http_t *h) {
    ctxc_http_response_t *r = h->resp;
    if (!r->has_retry_after) {
        return;
    }
    uint64_t s = 0;
    if (!h->ra_is_date) {
        s = h->ra_value;
    } else {
        r->retry_after_date = h->ra_value;
        if (h->has_date && h->ra_value > h->date) {
            s = h->ra_value - h->date;
        }
    }
    r->retry_after_s = s > UINT32_MAX ? UINT32_MAX : (uint32_t)s;
}

/* A body in a coding ctxc does not decode: refused before any of it is
 * read. An error status stays the report (its status, Retry-After and
 * retryability matter more), without the undecodable body. */
CTXC__SIZE_NOINLINE static ctxc_status_t coded_body(http_t *h) {
    const char *kind = h->coding_kind == 1u ? "content" : "transfer";
    const char *why = h->coding_kind == 1u ? "it asked for identity"
                                           : "it reads chunked only";
    if (h->is_error) {
        h->resp->error_body = h->exc; /* "" */
        return ctxc__fail(h->err, CTXC_E_HTTP_STATUS,
                          "http: HTTP %u from %s: the body uses %s coding %q, "
                          "which ctxc does not decode (%s)",
                          (unsigned)h->resp->status, h->host, kind, h->coding,
                          (size_t)h->coding_len, why);
    }
    return ctxc__fail(h->err, CTXC_E_PARSE,
                      "http: the response from %s uses %s coding %q, which "
                      "ctxc does not decode (%s)",
                      h->host, kind, h->coding, (size_t)h->coding_len, why);
}

/* The empty line after the headers: the framing of the body. */
static ctxc_status_t headers_end(http_t *h) {
    ctxc_http_response_t *r = h->resp;
    if (r->status < 200u) {
        if (r->status == 101u) {
            return ctxc__fail(
                h->err, CTXC_E_PARSE,
                "http: unexpected 101 Switching Protocols from %s", h->host);
        }
        /* an interim response (100 Continue, 103 Early Hints): the final
         * one follows; its headers were counted, checked for syntax and
         * otherwise ignored (header_line), so nothing of it is left */
        h->state = ST_STATUS;
        h->header_count = 0;
        return CTXC_OK;
    }
    retry_after(h);
    r->has_content_length = h->has_length;
    r->content_length = h->has_length ? h->length : 0;
    if (r->status >= 300u && r->status < 400u) {
        r->location = h->exc;
        return ctxc__fail(
            h->err, CTXC_E_HTTP_STATUS,
            "http: HTTP %u from %s: redirect to '%s' not followed",
            (unsigned)r->status, h->host,
            h->exc_len > 0 ? h->exc : "(no Location)");
    }
    exc_reset(h);
    h->is_error = r->status >= 400u;
    if (!h->is_error && h->req->on_event != NULL && r->event_stream) {
        h->use_sse = true;
        ctxc_sse_init(h->sse, h->sse_buf, CTXC_CFG_HTTP_SSE_BUFFER_BYTES,
                      h->req->on_event, h->req->user);
        ctxc_sse_stream_data(h->sse, h->req->on_event_data);
    }
    if (method_is(h, "HEAD") || r->status == 204u) {
        return body_end(h);
    }
    if (h->coding_kind != 0) {
        return coded_body(h);
    }
    if (h->te_present) {
        r->chunked = h->te_chunked;
        h->state = h->te_chunked ? ST_CHUNK_SIZE : ST_BODY_CLOSE;
    } else if (h->has_length) {
        h->left = h->length;
        h->state = ST_BODY_LEN;
        if (h->left == 0) {
            return body_end(h);
        }
    } else {
        h->state = ST_BODY_CLOSE;
    }
    return CTXC_OK;
}

static ctxc_status_t chunk_size_line(http_t *h, const char *s, size_t n) {
    uint64_t size = 0;
    size_t i = 0;
    for (; i < n; i++) {
        char c = lower(s[i]);
        unsigned d;
        if (c >= '0' && c <= '9') {
            d = (unsigned)(c - '0');
        } else if (c >= 'a' && c <= 'f') {
            d = (unsigned)(c - 'a' + 10);
        } else {
            break;
        }
        if (size > (UINT64_MAX >> 4)) {
            return ctxc__fail(h->err, CTXC_E_PARSE,
                              "http: chunk size too large from %s", h->host);
        }
        size = size * 16u + d;
    }
    size_t digits = i;
    while (i < n && is_ows(s[i])) {
        i++;
    }
    if (digits == 0 || (i < n && s[i] != ';')) {
        return ctxc__fail(h->err, CTXC_E_PARSE,
                          "http: bad chunk size line %q from %s", s, n,
                          h->host);
    }
    /* chunk extensions (";name=value") are ignored */
    if (size == 0) {
        h->state = ST_TRAILER;
    } else {
        h->left = size;
        h->state = ST_CHUNK_DATA;
    }
    return CTXC_OK;
}

/* A complete line (without its line end) in the line states. */
CTXC__SIZE_NOINLINE static ctxc_status_t line_done(http_t *h, const char *s,
                                                   size_t n) {
    switch (h->state) {
    case ST_STATUS:
        return status_line(h, s, n);
    case ST_HEADER:
        return n == 0 ? headers_end(h) : header_line(h, s, n, false);
    case ST_CHUNK_SIZE:
        return chunk_size_line(h, s, n);
    default: /* ST_TRAILER */
        return n == 0 ? body_end(h) : header_line(h, s, n, true);
    }
}

static const char *line_what(const http_t *h) {
    switch (h->state) {
    case ST_STATUS:
        return "status";
    case ST_HEADER:
        return "header";
    case ST_CHUNK_SIZE:
        return "chunk size";
    default:
        return "trailer";
    }
}

/* A response line over CTXC_CFG_HTTP_LINE_MAX: the limit, its value and
 * the line's length (ended) or the bytes read of it so far. */
CTXC__SIZE_NOINLINE static ctxc_status_t line_too_long(http_t *h, size_t bytes,
                                                       bool ended) {
    const unsigned max = (unsigned)CTXC_CFG_HTTP_LINE_MAX;
    if (ended) {
        return ctxc__fail(h->err, CTXC_E_TOO_LARGE,
                          "http: %s line from %s is %z bytes, longer than "
                          "CTXC_CFG_HTTP_LINE_MAX (%u)",
                          line_what(h), h->host, bytes, max);
    }
    return ctxc__fail(h->err, CTXC_E_TOO_LARGE,
                      "http: %s line from %s is more than %u bytes (%z read "
                      "without its end), longer than CTXC_CFG_HTTP_LINE_MAX "
                      "(%u)",
                      line_what(h), h->host, max, bytes, max);
}

/* Feeds response bytes; stops at ST_DONE. */
static ctxc_status_t feed(http_t *h, const char *p, size_t n) {
    ctxc_status_t st = CTXC_OK;
    while (n > 0 && st == CTXC_OK && h->state != ST_DONE) {
        switch (h->state) {
        case ST_BODY_LEN:
        case ST_CHUNK_DATA: {
            size_t take = h->left < n ? (size_t)h->left : n;
            h->left -= take;
            st = deliver(h, p, take);
            p += take;
            n -= take;
            if (st == CTXC_OK && h->left == 0 && h->state != ST_DONE) {
                if (h->state == ST_BODY_LEN) {
                    st = body_end(h);
                } else {
                    h->state = ST_CHUNK_END;
                    h->chunk_cr = false;
                }
            }
            break;
        }
        case ST_BODY_CLOSE:
            st = deliver(h, p, n);
            n = 0;
            break;
        case ST_CHUNK_END:
            if (*p == '\r' && !h->chunk_cr) {
                h->chunk_cr = true;
            } else if (*p == '\n') {
                h->state = ST_CHUNK_SIZE;
            } else {
                st = ctxc__fail(h->err, CTXC_E_PARSE,
                                "http: chunk data from %s not followed by CRLF",
                                h->host);
            }
            p++;
            n--;
            break;
        default: { /* the line states */
            const char *lf = memchr(p, '\n', n);
            size_t take = lf != NULL ? (size_t)(lf - p) : n;
            if (h->line_len + take > LINE_CAP) {
                size_t got = h->line_len + take;
                if (lf == NULL) {
                    return line_too_long(h, got, false);
                }
                return line_too_long(h, got - (p[take - 1] == '\r'), true);
            }
            memcpy(h->line + h->line_len, p, take);
            h->line_len += take;
            p += take;
            n -= take;
            if (lf == NULL) {
                break;
            }
            p++; /* the LF */
            n--;
            size_t len = h->line_len;
            h->line_len = 0;
            if (len > 0 && h->line[len - 1] == '\r') {
                len--;
            }
            if (len > (size_t)CTXC_CFG_HTTP_LINE_MAX) {
                return line_too_long(h, len, true);
            }
            if (memchr(h->line, '\r', len) != NULL ||
                memchr(h->line, '\0', len) != NULL) {
                return ctxc__fail(h->err, CTXC_E_PARSE,
                                  "http: CR or NUL inside a %s line from %s",
                                  line_what(h), h->host);
            }
            st = line_done(h, h->line, len);
            break;
        }
        }
    }
    return st;
}

/* The peer closed the connection cleanly. */
static ctxc_status_t at_eof(http_t *h) {
    switch (h->state) {
    case ST_BODY_CLOSE:
        return body_end(h);
    case ST_STATUS:
    case ST_HEADER:
        return ctxc__fail(
            h->err, CTXC_E_NETWORK,
            "http: %s closed the connection before the end of the "
            "response headers",
            h->host);
    case ST_BODY_LEN:
        return ctxc__fail(h->err, CTXC_E_NETWORK,
                          "http: %s closed the connection after %z of %z body "
                          "bytes",
                          h->host, (size_t)(h->length - h->left),
                          (size_t)h->length);
    default:
        return ctxc__fail(
            h->err, CTXC_E_NETWORK,
            "http: %s closed the connection inside the chunked body", h->host);
    }
}

/* ---- the request --------------------------------------------------------- */

static ctxc_status_t check_request(http_t *h) {
    const ctxc_http_request_t *req = h->req;
    if (req->method == NULL || !is_token(req->method, strlen(req->method))) {
        return ctxc__fail(h->err, CTXC_E_INVALID_ARG, "http: bad method");
    }
    if (req->url == NULL) {
        return ctxc__fail(h->err, CTXC_E_INVALID_ARG, "http: no url");
    }
    if ((req->content_type != NULL && !value_ok(req->content_type)) ||
        (req->accept != NULL && !value_ok(req->accept))) {
        return ctxc__fail(h->err, CTXC_E_INVALID_ARG,
                          "http: CR or LF in Content-Type or Accept");
    }
    if (req->header_count > 0 && req->headers == NULL) {
        return ctxc__fail(h->err, CTXC_E_INVALID_ARG, "http: headers is NULL");
    }
    if (req->body_fn == NULL && req->body_len > 0 && req->body_data == NULL) {
        return ctxc__fail(h->err, CTXC_E_INVALID_ARG,
                          "http: body_data is NULL");
    }
    static const char *const owned[] = {"host", "content-length",
                                        "transfer-encoding", "connection",
                                        "accept-encoding"};
    for (size_t i = 0; i < req->header_count; i++) {
        const ctxc_http_header_t *hd = &req->headers[i];
        if (hd->name == NULL || !is_token(hd->name, strlen(hd->name))) {
            return ctxc__fail(h->err, CTXC_E_INVALID_ARG,
                              "http: header %u has a bad name", (unsigned)i);
        }
        if (!value_ok(hd->value)) {
            return ctxc__fail(h->err, CTXC_E_INVALID_ARG,
                              "http: header '%s' has no value or CR/LF in it",
                              hd->name);
        }
        for (size_t k = 0; k < sizeof owned / sizeof owned[0]; k++) {
            if (eq_ci(hd->name, strlen(hd->name), owned[k])) {
                return ctxc__fail(h->err, CTXC_E_INVALID_ARG,
                                  "http: header '%s' is set by the client",
                                  hd->name);
            }
        }
    }
    return CTXC_OK;
}

/* A secret header may cross plain HTTP only to a loopback host. */
CTXC__SIZE_NOINLINE static ctxc_status_t check_secure(http_t *h) {
    if (h->url.tls ||
        ctxc_http_host_is_loopback(h->url.host, h->url.host_len)) {
        return CTXC_OK;
    }
    for (size_t i = 0; i < h->req->header_count; i++) {
        if (h->req->headers[i].secret) {
            return ctxc__fail(
                h->err, CTXC_E_INSECURE,
                "http: refusing to send the secret header '%s' over "
                "plain http:// to %s (not a loopback host); use "
                "https://",
                h->req->headers[i].name, h->host);
        }
    }
    return CTXC_OK;
}

static bool has_secret(const ctxc_http_request_t *req) {
    for (size_t i = 0; i < req->header_count; i++) {
        if (req->headers[i].secret) {
            return true;
        }
    }
    return false;
}

/* What the transport connects to: the URL's host, except "localhost" with a
 * secret over plain http, which goes to the literal loopback address (a
 * resolver's answer for the name is not trusted with the key). */
static const char *connect_host(const http_t *h) {
    if (!h->url.tls && has_secret(h->req) &&
        eq_ci(h->host, h->url.host_len, "localhost")) {
        return "127.0.0.1";
    }
    return h->host;
}

static ctxc_status_t connect_status(http_t *h, ctxc_status_t st) {
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    /* a port that set no message: its last_error, if it has one */
    const char *why = h->ops->last_error != NULL ? h->ops->last_error(h->tctx)
                                                 : NULL;
    if (h->err != NULL && h->err->message[0] == '\0' && why != NULL &&
        why[0] != '\0') {
        (void)ctxc__fail(h->err, st, "%s", why);
    }
#endif
    switch (st) {
    case CTXC_E_TLS:
    case CTXC_E_TIMEOUT:
    case CTXC_E_NETWORK:
        break;
    default:
        st = CTXC_E_NETWORK; /* CTXC_E_IO and anything else */
        if (h->err != NULL) {
            h->err->status = st;
        }
        break;
    }
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    /* "host:port" once: the POSIX transport's messages start with it */
    if (h->err != NULL) {
        const char *host = connect_host(h);
        size_t hn = strlen(host);
        const char *m = h->err->message;
        unsigned port = 0;
        size_t k = hn + 1u;
        if (strncmp(m, host, hn) == 0 && m[hn] == ':') {
            while (m[k] >= '0' && m[k] <= '9' && port < 65536u) {
                port = port * 10u + (unsigned)(m[k++] - '0');
            }
        }
        if (port == h->url.port && k > hn + 1u && m[k] == ':') {
            ctxc__err_prefix(h->err, "http");
            return st;
        }
    }
#endif
    ctxc__err_prefix(h->err, "http: connect to %s:%u", connect_host(h),
                     (unsigned)h->url.port);
    return st;
}

bool ctxc_http_retryable(ctxc_status_t st, const ctxc_http_response_t *resp) {
    switch (st) {
    case CTXC_E_NETWORK:
    case CTXC_E_TIMEOUT:
        return true;
    case CTXC_E_HTTP_STATUS:
        return resp != NULL && (resp->status == 408u || resp->status == 429u ||
                                (resp->status >= 500u && resp->status < 600u));
    default:
        return false;
    }
}

/* ---- the resumable call -------------------------------------------------- */

static http_t *state_of(void *work) {
    char *base = work;
    base += (8u - ((uintptr_t)base & 7u)) & 7u;
    return (http_t *)(void *)base;
}

/* The call ends with st: the transport closed, the log line, secrets
 * masked, resp->retryable set. Returns st. */
static ctxc_status_t end_call(http_t *h, ctxc_status_t st) {
    if (h->phase == PH_END) {
        return st;
    }
    h->phase = PH_END;
    if (h->connected) {
        h->ops->close(h->tctx);
        h->connected = false;
        ctxc_port_log(h->port, CTXC_LOG_DEBUG, "http: %s %s:%u: HTTP %u (%s)",
                      h->req->method, h->host, (unsigned)h->url.port,
                      (unsigned)h->resp->status, ctxc_status_name(st));
    }
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (st != CTXC_OK && h->err != NULL) {
        /* a last guard: nothing the server sent back quoted in a message
         * (a malformed line, an excerpt) shows a secret */
        mask_secrets(h->req, h->err->message);
    }
#endif
    h->resp->retryable = ctxc_http_retryable(st, h->resp);
    return st;
}

/* The transport answered "try again": CTXC_E_IN_PROGRESS, or the read
 * timeout. */
static ctxc_status_t idle_step(http_t *h, const char *what) {
    ctxc_status_t st = idle(h, what);
    return st == CTXC_OK ? CTXC_E_IN_PROGRESS : st;
}

static ctxc_status_t connected(http_t *h) {
    h->phase = PH_SEND;
    h->moved = true;
    progress(h);
    ctxc_status_t st = deadline(h, "connecting to");
    return st != CTXC_OK ? st : CTXC_E_IN_PROGRESS;
}

static ctxc_status_t step_connect(http_t *h) {
    ctxc_status_t st;
    if (h->phase == PH_CONNECT) {
        st = h->ops->connect(h->tctx, connect_host(h), h->url.port,
                             h->url.tls, h->err);
        h->moved = true;
        /* after a failed connect the port has released it: no close() */
        h->connected = st == CTXC_OK || st == CTXC_E_IN_PROGRESS;
    } else if (h->ops->connect_poll == NULL) {
        st = ctxc__fail(h->err, CTXC_E_INVALID_ARG,
                        "http: the transport answered 'in progress' to "
                        "connect and has no connect_poll");
    } else {
        st = h->ops->connect_poll(h->tctx, h->err);
    }
    if (st == CTXC_OK) {
        return connected(h);
    }
    if (st != CTXC_OK && st != CTXC_E_IN_PROGRESS) {
        h->connected = false; /* the port released it */
    }
    if (st == CTXC_E_IN_PROGRESS) {
        if (h->phase == PH_CONNECT) {
            h->phase = PH_CONNECTING;
        }
        /* the connect timeout is the port's; the deadline is ours */
        ctxc_status_t d = deadline(h, "connecting to");
        return d != CTXC_OK ? d : CTXC_E_IN_PROGRESS;
    }
    return connect_status(h, st);
}

static ctxc_status_t step_send(http_t *h) {
    ctxc_status_t st = deadline(h, "sending the request to");
    if (st != CTXC_OK) {
        return st;
    }
    h->windows = 0;
    st = flush_io(h);
    if (st == CTXC_OK && !h->rendered) {
        st = render(h);
        if (st == CTXC_OK) {
            h->rendered = true;
            st = flush_io(h);
        }
    }
    if (st == STOP_) {
        return h->moved ? CTXC_E_IN_PROGRESS : idle_step(h, "sending to");
    }
    if (st == CTXC_OK && h->rendered) {
        h->phase = PH_RECV;
        h->moved = true;
        progress(h);
        return CTXC_E_IN_PROGRESS;
    }
    return st;
}

static ctxc_status_t step_recv(http_t *h) {
    ctxc_status_t st = deadline(h, "reading the response from");
    if (st == CTXC_OK) {
        int32_t r = h->ops->recv(h->tctx, (uint8_t *)h->io,
                                 CTXC_CFG_HTTP_IO_BUFFER_BYTES);
        if (r > 0 && (size_t)r <= CTXC_CFG_HTTP_IO_BUFFER_BYTES) {
            progress(h);
            st = feed(h, h->io, (size_t)r);
        } else if (r == 0) {
            st = idle(h, "waiting for");
            if (st == CTXC_OK) {
                return CTXC_E_IN_PROGRESS;
            }
        } else if (r == CTXC_TRANSPORT_EOF) {
            h->moved = true;
            st = at_eof(h);
        } else {
            st = transport_failed(h, r, "receiving from");
        }
    }
    if (st != CTXC_OK) {
        /* an error status is the better report than what broke while
         * reading its body */
        if (h->is_error && !h->deadline_hit &&
            (st == CTXC_E_NETWORK || st == CTXC_E_TIMEOUT ||
             st == CTXC_E_PARSE || st == CTXC_E_TOO_LARGE)) {
            return status_error(h);
        }
        return st;
    }
    if (h->state == ST_DONE) {
        return h->is_error ? status_error(h) : CTXC_OK;
    }
    return CTXC_E_IN_PROGRESS;
}

ctxc_status_t ctxc_http_start(const ctxc_http_request_t *req,
                              const ctxc_port_t *port, void *work,
                              size_t work_bytes, ctxc_http_response_t *resp,
                              ctxc_error_t *err) {
    if (resp != NULL) {
        memset(resp, 0, sizeof *resp);
        resp->location = "";
        resp->error_body = "";
    }
    if (req == NULL || resp == NULL || work == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "http: NULL request, response or work area");
    }
    if (work_bytes < CTXC_HTTP_WORK_BYTES) {
        return ctxc__fail_space(err, CTXC_HTTP_WORK_BYTES - work_bytes,
                                "http: the work area has %z bytes, a request "
                                "needs %z (CTXC_HTTP_WORK_BYTES)",
                                work_bytes, (size_t)CTXC_HTTP_WORK_BYTES);
    }
    const ctxc_transport_ops_t *ops = port != NULL ? port->transport.ops : NULL;
    if (ops == NULL || ops->connect == NULL || ops->send == NULL ||
        ops->recv == NULL || ops->close == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "http: the port has no transport");
    }
    http_t *h = state_of(work);
    char *base = (char *)h;
    memset(h, 0, sizeof *h);
    h->req = req;
    h->port = port;
    h->resp = resp;
    h->err = err;
    h->ops = ops;
    h->tctx = port->transport.ctx;
    if (has_clock(h)) {
        h->start = ctxc_port_now_ms(port);
    }
    h->timeout_ms =
        req->timeout_ms != 0 ? req->timeout_ms : CTXC_CFG_HTTP_TIMEOUT_MS;
    h->sse = (ctxc_sse_parser_t *)(void *)(base + CTXC_HTTP_STATE_BYTES);
    h->host = (char *)(h->sse + 1);
    h->io = h->host + CTXC_HTTP_HOST_MAX + 1u;
    h->line = h->io + CTXC_CFG_HTTP_IO_BUFFER_BYTES;
    h->sse_buf = h->line + LINE_CAP;
    h->exc = h->sse_buf + CTXC_CFG_HTTP_SSE_BUFFER_BYTES;
    h->host[0] = '\0';
    exc_reset(h);
    h->phase = PH_CONNECT;
    ctxc_status_t st = check_request(h);
    if (st == CTXC_OK) {
        st = ctxc_url_parse(req->url, &h->url, h->err);
    }
    if (st == CTXC_OK) {
        memcpy(h->host, h->url.host, h->url.host_len);
        h->host[h->url.host_len] = '\0';
        st = check_secure(h);
    }
    ctxc_http_body_fn fn = body_fn(req);
    if (st == CTXC_OK && fn != NULL) {
        st = fn(body_user(req), count_write, h);
        if (st != CTXC_OK) {
            st = body_failed(h, st);
        }
    }
    return st == CTXC_OK ? CTXC_E_IN_PROGRESS : end_call(h, st);
}

ctxc_status_t ctxc_http_step(void *work, ctxc_error_t *err) {
    if (work == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "http: NULL work area");
    }
    http_t *h = state_of(work);
    if (h->phase == PH_END) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "http: no request in progress in this work area");
    }
    h->err = err;
    h->moved = false;
    ctxc_status_t st;
    switch (h->phase) {
    case PH_CONNECT:
    case PH_CONNECTING:
        st = step_connect(h);
        break;
    case PH_SEND:
        st = step_send(h);
        break;
    default:
        st = step_recv(h);
        break;
    }
    return st == CTXC_E_IN_PROGRESS ? st : end_call(h, st);
}

bool ctxc_http_idle(const void *work) {
    if (work == NULL) {
        return false;
    }
    const http_t *h = state_of((void *)(uintptr_t)work);
    return h->phase != PH_CONNECT && !h->moved; /* connecting can run now */
}

void ctxc_http_cancel(void *work) {
    if (work != NULL) {
        http_t *h = state_of(work);
        h->err = NULL;
        (void)end_call(h, CTXC_E_CANCELLED);
    }
}

ctxc_status_t ctxc_http_request(const ctxc_http_request_t *req,
                                const ctxc_port_t *port, void *work,
                                size_t work_bytes, ctxc_http_response_t *resp,
                                ctxc_error_t *err) {
    ctxc_status_t st = ctxc_http_start(req, port, work, work_bytes, resp, err);
    const ctxc_transport_ops_t *ops = port != NULL ? port->transport.ops : NULL;
    while (st == CTXC_E_IN_PROGRESS) {
        st = ctxc_http_step(work, err);
        if (st == CTXC_E_IN_PROGRESS && ops->wait != NULL &&
            ctxc_http_idle(work)) {
            ops->wait(port->transport.ctx, CTXC_HTTP_WAIT_SLICE_MS);
        }
        if (st == CTXC_E_IN_PROGRESS && ctxc_port_stop_requested(port)) {
            ctxc_http_cancel(work);
            return ctxc__fail(err, CTXC_E_CANCELLED,
                              "http: stopped by the port's stop hook");
        }
    }
    return st;
}
