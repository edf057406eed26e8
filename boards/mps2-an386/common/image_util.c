/* Output line and checksums of the board's images (image_util.h). */
#include "image_util.h"

#include <string.h>

static char line[IMG_LINE_MAX];
static size_t line_len;
static img_write_fn out_write;

void img_out_init(img_write_fn write) {
    out_write = write;
    line_len = 0;
}

static void put_c(char c) {
    if (line_len < sizeof line - 1) { /* one byte kept for the newline */
        line[line_len++] = c;
    }
}

void img_put_s(const char *s) {
    while (*s != '\0') {
        put_c(*s++);
    }
}

void img_put_n(const char *s, size_t n, size_t total) {
    while (n > 0 && n < total && ((unsigned char)s[n] & 0xc0u) == 0x80u) {
        n--;
    }
    for (size_t i = 0; i < n; i++) {
        put_c(s[i] == '\n' || s[i] == '\t' ? ' ' : s[i]);
    }
}

void img_put_u(uint64_t v) {
    char tmp[24];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (n > 0) {
        put_c(tmp[--n]);
    }
}

void img_put_x32(uint32_t v) {
    for (int shift = 28; shift >= 0; shift -= 4) {
        put_c("0123456789abcdef"[(v >> shift) & 0xfu]);
    }
}

void img_put_pad(size_t col) {
    while (line_len < col && line_len < sizeof line - 1) {
        line[line_len++] = ' ';
    }
}

void img_flush_line(void) {
    line[line_len++] = '\n';
    if (out_write != NULL) {
        out_write(line, line_len);
    }
    line_len = 0;
}

uint32_t img_crc32(uint32_t crc, const void *data, size_t len) {
    static const uint32_t nibble[16] = {
        0x00000000u, 0x1db71064u, 0x3b6e20c8u, 0x26d930acu,
        0x76dc4190u, 0x6b6b51f4u, 0x4db26158u, 0x5005713cu,
        0xedb88320u, 0xf00f9344u, 0xd6d6a3e8u, 0xcb61b38cu,
        0x9b64c2b0u, 0x86d3d2d4u, 0xa00ae278u, 0xbdbdf21cu};
    const uint8_t *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        crc = (crc >> 4) ^ nibble[crc & 0xfu];
        crc = (crc >> 4) ^ nibble[crc & 0xfu];
    }
    return ~crc;
}

uint32_t img_store_crc(const ctxc_history_t *h) {
    uint64_t counts[3] = {h->count, h->used, h->token_sum};
    uint32_t c = img_crc32(0, counts, sizeof counts);
    c = img_crc32(c, h->slots, h->count * sizeof h->slots[0]);
    return img_crc32(c, h->arena, h->used);
}

ctxc_status_t img_sink_write(void *user, const char *data, size_t len) {
    img_sink_t *s = user;
    s->crc = img_crc32(s->crc, data, len);
    if (s->buf != NULL) {
        if (len > s->cap - s->len) {
            return CTXC_E_NO_SPACE;
        }
        memcpy(s->buf + s->len, data, len);
    }
    s->len += len;
    return CTXC_OK;
}

uint64_t img_entry_token_sum(const ctxc_history_t *h) {
    uint64_t sum = 0;
    ctxc_entry_t e;
    for (size_t i = 0; i < ctxc_history_count(h); i++) {
        if (ctxc_history_get(h, i, &e) == CTXC_OK) {
            sum += e.tokens;
        }
    }
    return sum;
}

void img_put_status(ctxc_status_t st, const ctxc_error_t *err) {
    if (st != CTXC_OK) {
        img_put_s(" (");
        img_put_s(ctxc_status_name(st));
        img_put_s(": ");
        img_put_s(ctxc_error_message(err));
        img_put_s(")");
    }
}
