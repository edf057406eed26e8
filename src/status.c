/*
 * ctxc — status codes and error reporting.
 */
#include <stdarg.h>
#include <string.h>

#include "compiler.h"
#include "ctxc/ctxc.h"
#include "error.h"
#include "sink.h"

/* The texts and the names of the codes, each packed into one string
 * ("a\0b\0..."): no table of pointers. */
static const char status_text[] =
#define CTXC_STATUS_TEXT_(name, text) text "\0"
    CTXC_STATUS_LIST(CTXC_STATUS_TEXT_)
#undef CTXC_STATUS_TEXT_
    ;

static const char status_names[] =
#define CTXC_STATUS_NAME_(name, text) #name "\0"
    CTXC_STATUS_LIST(CTXC_STATUS_NAME_)
#undef CTXC_STATUS_NAME_
    ;

/* The string of `status` in a packed list, or `other`. */
CTXC__NOINLINE static const char *
packed_at(const char *list, ctxc_status_t status, const char *other) {
    if ((unsigned)status >= (unsigned)CTXC_STATUS_COUNT_) {
        return other;
    }
    for (unsigned i = (unsigned)status; i > 0; i--) {
        list += strlen(list) + 1u;
    }
    return list;
}

const char *ctxc_strerror(ctxc_status_t status) {
    return packed_at(status_text, status, "unknown status");
}

const char *ctxc_status_name(ctxc_status_t status) {
    return packed_at(status_names, status, "CTXC_E_UNKNOWN");
}

const char *ctxc_version(void) { return CTXC_VERSION_STRING; }

const char *ctxc_error_message(const ctxc_error_t *err) {
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (err != NULL) {
        return err->message;
    }
#else
    (void)err;
#endif
    return "";
}

/* The formatter of ctxc__fail() and friends (see error.h). */
static void vformat(ctxc__sink_t *m, const char *fmt, va_list ap) {
    for (const char *f = fmt; *f != '\0'; f++) {
        if (*f != '%' || f[1] == '\0') {
            ctxc__putc(m, *f);
            continue;
        }
        f++;
        switch (*f) {
        case 's': {
            const char *s = va_arg(ap, const char *);
            if (s == NULL) {
                s = "(null)";
            }
            ctxc__puts(m, s);
            break;
        }
        case 'u':
            ctxc__put_uint(m, va_arg(ap, unsigned));
            break;
        case 'z':
            ctxc__put_uint(m, va_arg(ap, size_t));
            break;
        case 'q': {
            const char *s = va_arg(ap, const char *);
            size_t n = va_arg(ap, size_t);
            ctxc__putc(m, '\'');
            if (s != NULL) {
                size_t take = n > 40u ? 40u : n;
                /* do not cut a UTF-8 sequence in half */
                while (take < n && take > 0 &&
                       ((unsigned char)s[take] & 0xC0u) == 0x80u) {
                    take--;
                }
                for (size_t i = 0; i < take; i++) {
                    unsigned char c = (unsigned char)s[i];
                    char ch = (c < 0x20u || c == 0x7Fu) ? '?' : (char)c;
                    ctxc__putc(m, ch);
                }
                if (take < n) {
                    ctxc__put(m, "...", 3);
                }
            }
            ctxc__putc(m, '\'');
            break;
        }
        case '%':
            ctxc__putc(m, '%');
            break;
        default:
            ctxc__put(m, f - 1, 2);
            break;
        }
    }
}

void ctxc__vformat(char *buf, size_t cap, const char *fmt, va_list ap) {
    if (buf == NULL || cap == 0) {
        return;
    }
    ctxc__sink_t m = {buf, cap - 1u, 0};
    vformat(&m, fmt, ap);
    (void)ctxc__sink_cstr(&m);
}

static void set_error(ctxc_error_t *err, ctxc_status_t st, size_t needed,
                      const char *fmt, va_list ap) {
    if (err == NULL) {
        return;
    }
    err->status = st;
    err->line = 0;
    err->needed = needed;
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    ctxc__vformat(err->message, sizeof err->message, fmt, ap);
#else
    (void)fmt;
    (void)ap;
#endif
}

ctxc_status_t ctxc_error_set(ctxc_error_t *err, ctxc_status_t st,
                             const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error(err, st, 0, fmt, ap);
    va_end(ap);
    return st;
}

ctxc_status_t ctxc__fail_space(ctxc_error_t *err, size_t needed,
                               const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    set_error(err, CTXC_E_NO_SPACE, needed, fmt, ap);
    va_end(ap);
    return CTXC_E_NO_SPACE;
}

void ctxc__err_prefix(ctxc_error_t *err, const char *fmt, ...) {
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (err == NULL) {
        return;
    }
    char old[CTXC_CFG_ERROR_MESSAGE_LEN];
    memcpy(old, err->message, sizeof old);
    ctxc__sink_t m = {err->message, sizeof err->message - 1u, 0};
    va_list ap;
    va_start(ap, fmt);
    vformat(&m, fmt, ap);
    va_end(ap);
    ctxc__put(&m, ": ", 2);
    ctxc__puts(&m, old);
    (void)ctxc__sink_cstr(&m);
#else
    (void)err;
    (void)fmt;
#endif
}

/* See error.h. s[i] is masked right after the runs starting at i were
 * looked for: a later start only reads bytes after it, so masking in place
 * never hides a run that starts inside another one and goes on past it. */
void ctxc__mask_secret(char *s, const char *secret, size_t secret_len) {
    if (s == NULL || secret == NULL || secret_len == 0) {
        return;
    }
    size_t n = strlen(s);
    size_t min = secret_len < 8u ? secret_len : 8u;
    /* a start of the secret that s ends with, looked for before masking */
    size_t tail = 0;
    for (size_t k = secret_len - 1u < n ? secret_len - 1u : n; k >= 4u; k--) {
        if (memcmp(s + n - k, secret, k) == 0) {
            tail = k;
            break;
        }
    }
    size_t end = 0; /* s[..end) is inside a run */
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; n - i >= min && j + min <= secret_len; j++) {
            size_t k = 0;
            while (i + k < n && j + k < secret_len &&
                   s[i + k] == secret[j + k]) {
                k++;
            }
            if (k >= min && i + k > end) {
                end = i + k;
            }
        }
        if (i < end) {
            s[i] = '*';
        }
    }
    memset(s + n - tail, '*', tail);
}
