/*
 * ctxc — Server-Sent Events reader (the event stream parsing rules of the
 * WHATWG HTML standard), incremental over a bounded buffer.
 *
 * buf_[0 .. data_len_) holds the data lines of the current event joined
 * with "\n"; the line being read follows it at buf_[data_len_ ..
 * data_len_ + line_len_). A finished data line's value is moved down to the
 * end of the data; one byte is kept for the NUL after the data.
 */
#include <string.h>

#include "ctxc/http.h"
#include "error.h"

enum {
    SSE_CR = 1u,      /* the last byte was a CR (a LF right after is skipped) */
    SSE_COMMENT = 2u, /* the current line is a comment: its bytes are dropped */
    SSE_PENDING = 4u, /* a field line was read since the last dispatch */
    SSE_RETRY = 8u,   /* a valid retry: field was seen */
    SSE_DONE = 16u,   /* [DONE] was dispatched */
    SSE_DATA = 32u,   /* streaming a data: value to data_fn_ */
    SSE_SKIPSP = 64u, /* ... whose first space is still to be skipped */
    SSE_DROP = 128u   /* the value of a field nobody reads: dropped */
};

/* Streaming mode: the data of an event goes to data_fn_ as it arrives and
 * the buffer holds only the line being read (its field name, or the value
 * of an event/id/retry field). done_ counts the bytes of the data that
 * match "[DONE]" (0xFF: it does not). */
static bool streaming(const ctxc_sse_parser_t *p) {
    return p->data_fn_ != NULL;
}

/* Where the line being read starts in buf_. */
static size_t line_at(const ctxc_sse_parser_t *p) {
    return streaming(p) ? 0u : p->data_len_;
}

void ctxc_sse_init(ctxc_sse_parser_t *p, char *buf, size_t cap,
                   ctxc_sse_event_fn fn, void *user) {
    memset(p, 0, sizeof *p);
    p->buf_ = buf;
    p->cap_ = cap;
    p->fn_ = fn;
    p->user_ = user;
}

void ctxc_sse_stream_data(ctxc_sse_parser_t *p, ctxc_sse_data_fn fn) {
    p->data_fn_ = fn;
}

/* Data bytes of the current event, in streaming mode. While the data so
 * far is a prefix of "[DONE]" it is held back (done_ counts it: the held
 * bytes are that prefix), so the data callback never sees the end marker;
 * it is let go as soon as the data turns out to be something else. */
static const char done_marker[] = "[DONE]";

static ctxc_status_t data_out(ctxc_sse_parser_t *p, const char *s, size_t n) {
    size_t i = 0;
    ctxc_status_t st = CTXC_OK;
    while (i < n && p->done_ != 0xFFu) {
        if (p->done_ < 6u && s[i] == done_marker[p->done_]) {
            p->done_++;
            i++;
            continue;
        }
        uint8_t held = p->done_;
        p->done_ = 0xFFu;
        if (held > 0) {
            st = p->data_fn_(p->user_, done_marker, held);
        }
    }
    p->data_len_ += n;
    if (st == CTXC_OK && i < n) {
        st = p->data_fn_(p->user_, s + i, n - i);
    }
    return st;
}

/* Before an event is dispatched: held bytes that were not "[DONE]" after
 * all (the data was a shorter prefix of it) go out. */
static ctxc_status_t data_flush(ctxc_sse_parser_t *p) {
    if (p->done_ == 0xFFu || (p->done_ == 6u && p->data_len_ == 6u)) {
        return CTXC_OK;
    }
    uint8_t held = p->done_;
    p->done_ = 0xFFu;
    return held > 0 ? p->data_fn_(p->user_, done_marker, held) : CTXC_OK;
}

bool ctxc_sse_done(const ctxc_sse_parser_t *p) {
    return (p->flags_ & SSE_DONE) != 0;
}

static bool name_is(const char *s, size_t n, const char *lit) {
    size_t k = strlen(lit);
    return n == k && memcmp(s, lit, k) == 0;
}

static ctxc_status_t set_field(char *dst, size_t *dst_len, const char *v,
                               size_t n, const char *what, ctxc_error_t *err) {
    if (n >= CTXC_CFG_HTTP_SSE_FIELD_MAX) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "SSE %s field of %z bytes is longer than "
                          "CTXC_CFG_HTTP_SSE_FIELD_MAX - 1 (%u)",
                          what, n, (unsigned)(CTXC_CFG_HTTP_SSE_FIELD_MAX - 1));
    }
    memcpy(dst, v, n);
    dst[n] = '\0';
    *dst_len = n;
    return CTXC_OK;
}

static ctxc_status_t dispatch(ctxc_sse_parser_t *p) {
    p->flags_ &= (uint8_t)~SSE_PENDING;
    if (p->data_lines_ == 0) {
        p->type_len_ = 0; /* no data: nothing dispatched, type reset */
        return CTXC_OK;
    }
    ctxc_sse_event_t ev;
    if (streaming(p)) {
        ctxc_status_t st = data_flush(p);
        if (st != CTXC_OK) {
            return st;
        }
        ev.data = "";
        ev.done = p->data_len_ == 6u && p->done_ == 6u;
    } else {
        p->buf_[p->data_len_] = '\0';
        ev.data = p->buf_;
        ev.done = name_is(p->buf_, p->data_len_, "[DONE]");
    }
    ev.type = p->type_len_ > 0 ? p->type_ : "message";
    ev.type_len = p->type_len_ > 0 ? p->type_len_ : 7u;
    ev.data_len = p->data_len_;
    p->id_[p->id_len_] = '\0';
    ev.id = p->id_;
    ev.id_len = p->id_len_;
    ev.has_retry = (p->flags_ & SSE_RETRY) != 0;
    ev.retry_ms = p->retry_ms_;
    p->data_len_ = 0;
    p->done_ = 0;
    p->data_lines_ = 0;
    p->type_len_ = 0;
    if (ev.done) {
        p->flags_ |= SSE_DONE;
    }
    return p->fn_ != NULL ? p->fn_(p->user_, &ev) : CTXC_OK;
}

/* The line buf_[data_len_ .. data_len_ + line_len_) is complete. */
static ctxc_status_t line_end(ctxc_sse_parser_t *p, ctxc_error_t *err) {
    char *line = p->buf_ + line_at(p);
    size_t n = p->line_len_;
    p->line_len_ = 0;
    if ((p->flags_ & (SSE_COMMENT | SSE_DROP | SSE_DATA)) != 0) {
        p->flags_ &=
            (uint8_t) ~(SSE_COMMENT | SSE_DROP | SSE_DATA | SSE_SKIPSP);
        return CTXC_OK;
    }
    if (n == 0) {
        return dispatch(p);
    }
    size_t name_len = 0;
    while (name_len < n && line[name_len] != ':') {
        name_len++;
    }
    size_t v = name_len;
    if (v < n) {
        v++; /* the colon */
        if (v < n && line[v] == ' ') {
            v++;
        }
    }
    const char *value = line + v;
    size_t value_len = n - v;
    p->flags_ |= SSE_PENDING;
    if (name_is(line, name_len, "data") && streaming(p)) {
        /* "data" without a colon: an empty value */
        ctxc_status_t st = data_out(p, "\n", p->data_lines_ > 0 ? 1u : 0u);
        p->data_lines_++;
        return st;
    }
    if (name_is(line, name_len, "data")) {
        if (p->data_lines_ > 0) {
            p->buf_[p->data_len_++] = '\n'; /* value starts >= 5 bytes on */
        }
        memmove(p->buf_ + p->data_len_, value, value_len);
        p->data_len_ += value_len;
        p->data_lines_++;
    } else if (name_is(line, name_len, "event")) {
        return set_field(p->type_, &p->type_len_, value, value_len, "event",
                         err);
    } else if (name_is(line, name_len, "id")) {
        if (memchr(value, '\0', value_len) == NULL) {
            return set_field(p->id_, &p->id_len_, value, value_len, "id", err);
        }
    } else if (name_is(line, name_len, "retry")) {
        uint32_t ms = 0;
        size_t i = 0;
        while (i < value_len && value[i] >= '0' && value[i] <= '9' &&
               ms <= (UINT32_MAX - 9u) / 10u) {
            ms = ms * 10u + (uint32_t)(value[i] - '0');
            i++;
        }
        if (value_len > 0 && i == value_len) {
            p->retry_ms_ = ms;
            p->flags_ |= SSE_RETRY;
        }
    }
    return CTXC_OK; /* other fields are ignored */
}

/* Streaming mode, at the colon of a line: a data line's value goes out as
 * it arrives, an event/id/retry value is kept, any other is dropped. */
static ctxc_status_t field_named(ctxc_sse_parser_t *p) {
    const char *name = p->buf_;
    size_t n = p->line_len_;
    if (name_is(name, n, "data")) {
        p->flags_ |= SSE_DATA | SSE_SKIPSP | SSE_PENDING;
        ctxc_status_t st = data_out(p, "\n", p->data_lines_ > 0 ? 1u : 0u);
        p->data_lines_++;
        return st;
    }
    if (!name_is(name, n, "event") && !name_is(name, n, "id") &&
        !name_is(name, n, "retry")) {
        p->flags_ |= SSE_DROP | SSE_PENDING;
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_sse_feed(ctxc_sse_parser_t *p, const char *data, size_t len,
                            ctxc_error_t *err) {
    p->used_ = 0;
    for (size_t i = 0; i < len; i++) {
        if ((p->flags_ & SSE_DONE) != 0) {
            return CTXC_OK;
        }
        p->used_ = i + 1u;
        char c = data[i];
        if ((p->flags_ & SSE_CR) != 0) {
            p->flags_ &= (uint8_t)~SSE_CR;
            if (c == '\n') {
                continue; /* the LF of a CRLF */
            }
        }
        if (c == '\r' || c == '\n') {
            if (c == '\r') {
                p->flags_ |= SSE_CR;
            }
            ctxc_status_t st = line_end(p, err);
            if (st != CTXC_OK) {
                return st;
            }
            continue;
        }
        if ((p->flags_ & (SSE_COMMENT | SSE_DROP)) != 0) {
            continue;
        }
        if ((p->flags_ & SSE_DATA) != 0) { /* a run of the data value */
            if ((p->flags_ & SSE_SKIPSP) != 0) {
                p->flags_ &= (uint8_t)~SSE_SKIPSP;
                if (c == ' ') {
                    continue;
                }
            }
            size_t end = i;
            while (end < len && data[end] != '\r' && data[end] != '\n') {
                end++;
            }
            ctxc_status_t st = data_out(p, data + i, end - i);
            p->used_ = end;
            if (st != CTXC_OK) {
                return st;
            }
            i = end - 1u;
            continue;
        }
        if (p->line_len_ == 0 && c == ':') {
            p->flags_ |= SSE_COMMENT;
            p->line_len_ = 1; /* a line is open (for finish) */
            continue;
        }
        if (c == ':' && streaming(p) && p->line_len_ <= 5u &&
            memchr(p->buf_, ':', p->line_len_) == NULL) {
            ctxc_status_t st = field_named(p);
            if (st != CTXC_OK) {
                return st;
            }
            if ((p->flags_ & (SSE_DATA | SSE_DROP)) != 0) {
                p->line_len_ = 1; /* a line is open (for finish) */
                continue;
            }
        } else if (streaming(p) && p->line_len_ > 5u &&
                   memchr(p->buf_, ':', p->line_len_) == NULL) {
            /* a name longer than any field read: nobody reads its value */
            p->flags_ |= SSE_DROP | SSE_PENDING;
            continue;
        }
        /* one byte stays free for the NUL after the data */
        if (line_at(p) + p->line_len_ + 2u > p->cap_) {
            p->used_ = i;
            return ctxc__fail(
                err, CTXC_E_TOO_LARGE,
                streaming(p) ? "SSE event or id field longer than the %z "
                               "byte buffer (CTXC_CFG_HTTP_SSE_BUFFER_BYTES)"
                             : "SSE line and event data longer than the %z "
                               "byte buffer (CTXC_CFG_HTTP_SSE_BUFFER_BYTES)",
                p->cap_);
        }
        p->buf_[line_at(p) + p->line_len_++] = c;
    }
    return CTXC_OK;
}

size_t ctxc_sse_used(const ctxc_sse_parser_t *p) { return p->used_; }

ctxc_status_t ctxc_sse_finish(ctxc_sse_parser_t *p, ctxc_error_t *err) {
    if ((p->flags_ & SSE_DONE) != 0) {
        return CTXC_OK;
    }
    if (streaming(p) && p->data_lines_ > 0 && (p->flags_ & SSE_COMMENT) == 0) {
        /* Streaming mode: a last event whose blank line is missing is still
         * dispatched (its data went out already; the reader of the data
         * judges whether it is complete). */
        ctxc_status_t st =
            (p->flags_ & SSE_DATA) != 0 ? line_end(p, err) : CTXC_OK;
        return st == CTXC_OK ? dispatch(p) : st;
    }
    if (p->line_len_ > 0 || (p->flags_ & (SSE_PENDING | SSE_DATA)) != 0) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "event stream ended inside an event (%z bytes of "
                          "data and %z of a line not dispatched)",
                          p->data_len_, p->line_len_);
    }
    return CTXC_OK;
}
