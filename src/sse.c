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
    SSE_DONE = 16u    /* [DONE] was dispatched */
};

void ctxc_sse_init(ctxc_sse_parser_t *p, char *buf, size_t cap,
                   ctxc_sse_event_fn fn, void *user) {
    memset(p, 0, sizeof *p);
    p->buf_ = buf;
    p->cap_ = cap;
    p->fn_ = fn;
    p->user_ = user;
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
    p->buf_[p->data_len_] = '\0';
    ev.type = p->type_len_ > 0 ? p->type_ : "message";
    ev.type_len = p->type_len_ > 0 ? p->type_len_ : 7u;
    ev.data = p->buf_;
    ev.data_len = p->data_len_;
    p->id_[p->id_len_] = '\0';
    ev.id = p->id_;
    ev.id_len = p->id_len_;
    ev.has_retry = (p->flags_ & SSE_RETRY) != 0;
    ev.retry_ms = p->retry_ms_;
    ev.done = name_is(p->buf_, p->data_len_, "[DONE]");
    p->data_len_ = 0;
    p->data_lines_ = 0;
    p->type_len_ = 0;
    if (ev.done) {
        p->flags_ |= SSE_DONE;
    }
    return p->fn_ != NULL ? p->fn_(p->user_, &ev) : CTXC_OK;
}

/* The line buf_[data_len_ .. data_len_ + line_len_) is complete. */
static ctxc_status_t line_end(ctxc_sse_parser_t *p, ctxc_error_t *err) {
    char *line = p->buf_ + p->data_len_;
    size_t n = p->line_len_;
    p->line_len_ = 0;
    if ((p->flags_ & SSE_COMMENT) != 0) {
        p->flags_ &= (uint8_t)~SSE_COMMENT;
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
        if ((p->flags_ & SSE_COMMENT) != 0) {
            continue;
        }
        if (p->line_len_ == 0 && c == ':') {
            p->flags_ |= SSE_COMMENT;
            p->line_len_ = 1; /* a line is open (for finish) */
            continue;
        }
        /* one byte stays free for the NUL after the data */
        if (p->data_len_ + p->line_len_ + 2u > p->cap_) {
            p->used_ = i;
            return ctxc__fail(err, CTXC_E_TOO_LARGE,
                              "SSE line and event data longer than the %z "
                              "byte buffer (CTXC_CFG_HTTP_SSE_BUFFER_BYTES)",
                              p->cap_);
        }
        p->buf_[p->data_len_ + p->line_len_++] = c;
    }
    return CTXC_OK;
}

size_t ctxc_sse_used(const ctxc_sse_parser_t *p) { return p->used_; }

ctxc_status_t ctxc_sse_finish(ctxc_sse_parser_t *p, ctxc_error_t *err) {
    if ((p->flags_ & SSE_DONE) != 0) {
        return CTXC_OK;
    }
    if (p->line_len_ > 0 || (p->flags_ & SSE_PENDING) != 0) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "event stream ended inside an event (%z bytes of "
                          "data and %z of a line not dispatched)",
                          p->data_len_, p->line_len_);
    }
    return CTXC_OK;
}
