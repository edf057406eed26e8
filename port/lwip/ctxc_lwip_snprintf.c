/*
 * A small snprintf for mbedTLS (MBEDTLS_PLATFORM_SNPRINTF_MACRO in the
 * board's mbedTLS config): what its X.509 and OID text functions use (%s,
 * %c, %d, %u, %x, %X, %p, %%, a zero flag, a width, the l modifier), C99
 * return value (the length the whole text needs). It keeps newlib's printf
 * out of the image, which would link newlib's stdio and its heap.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

int ctxc_lwip_snprintf(char *s, size_t n, const char *fmt, ...);

typedef struct {
    char *s;
    size_t n, len;
} out_t;

static void put(out_t *o, char c) {
    if (o->n > 0 && o->len < o->n - 1u) {
        o->s[o->len] = c;
    }
    o->len++;
}

static void put_num(out_t *o, uintmax_t v, unsigned base, bool upper,
                    bool negative, unsigned width, char pad) {
    char tmp[24];
    unsigned k = 0;
    const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
    do {
        tmp[k++] = digits[v % base];
        v /= base;
    } while (v != 0 && k < sizeof tmp);
    unsigned len = k + (negative ? 1u : 0u);
    if (negative && pad == '0') {
        put(o, '-');
    }
    for (; len < width; len++) {
        put(o, pad);
    }
    if (negative && pad != '0') {
        put(o, '-');
    }
    while (k > 0) {
        put(o, tmp[--k]);
    }
}

int ctxc_lwip_snprintf(char *s, size_t n, const char *fmt, ...) {
    out_t o = {s, n, 0};
    va_list ap;
    va_start(ap, fmt);
    for (const char *p = fmt; *p != '\0'; p++) {
        if (*p != '%') {
            put(&o, *p);
            continue;
        }
        p++;
        char pad = ' ';
        if (*p == '0') {
            pad = '0';
            p++;
        }
        unsigned width = 0;
        while (*p >= '0' && *p <= '9') {
            width = width * 10u + (unsigned)(*p++ - '0');
        }
        bool is_long = false;
        while (*p == 'l') {
            is_long = true;
            p++;
        }
        switch (*p) {
        case 's': {
            const char *str = va_arg(ap, const char *);
            if (str == NULL) {
                str = "(null)";
            }
            while (*str != '\0') {
                put(&o, *str++);
            }
            break;
        }
        case 'c':
            put(&o, (char)va_arg(ap, int));
            break;
        case 'd': {
            long v = is_long ? va_arg(ap, long) : (long)va_arg(ap, int);
            uintmax_t m = v < 0 ? (uintmax_t)(-(v + 1)) + 1u : (uintmax_t)v;
            put_num(&o, m, 10, false, v < 0, width, pad);
            break;
        }
        case 'u':
        case 'x':
        case 'X': {
            unsigned long v = is_long ? va_arg(ap, unsigned long)
                                      : (unsigned long)va_arg(ap, unsigned);
            put_num(&o, v, *p == 'u' ? 10u : 16u, *p == 'X', false, width, pad);
            break;
        }
        case 'p':
            put(&o, '0');
            put(&o, 'x');
            put_num(&o, (uintptr_t)va_arg(ap, void *), 16, false, false, 8,
                    '0');
            break;
        case '%':
            put(&o, '%');
            break;
        case '\0':
            p--;
            break;
        default:
            put(&o, '%');
            put(&o, *p);
            break;
        }
    }
    va_end(ap);
    if (n > 0) {
        s[o.len < n ? o.len : n - 1u] = '\0';
    }
    return o.len > (size_t)INT32_MAX ? INT32_MAX : (int)o.len;
}
