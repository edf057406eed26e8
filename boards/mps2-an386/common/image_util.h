/*
 * What the board's images share (the scenario image and its host twin, the
 * lwIP image): a line printer over the image's console and the checksums
 * that show a history unchanged (CRC32 of the store's bytes and of its
 * export) or consistent (the token total against the entries' estimates).
 */
#ifndef MPS2_IMAGE_UTIL_H
#define MPS2_IMAGE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc.h"

/* ---- one output line at a time (at most IMG_LINE_MAX - 1 bytes; longer
 * lines are cut) -------------------------------------------------------- */
#define IMG_LINE_MAX 512u

typedef void (*img_write_fn)(const char *data, size_t len);

/* Where img_flush_line() writes (the semihosting console, stdout). */
void img_out_init(img_write_fn write);
void img_put_s(const char *s);
/* At most n bytes of s (never half a UTF-8 sequence of the total bytes
 * there are), newlines and tabs as spaces. */
void img_put_n(const char *s, size_t n, size_t total);
void img_put_u(uint64_t v);
void img_put_x32(uint32_t v); /* eight hex digits */
void img_put_pad(size_t col); /* spaces up to column col */
void img_flush_line(void);    /* the line and "\n" to the writer */
/* " (STATUS: message)" of a failed call; nothing for CTXC_OK. */
void img_put_status(ctxc_status_t st, const ctxc_error_t *err);

/* ---- checksums ---------------------------------------------------------- */

/* CRC32 (IEEE 802.3, reflected), continued from crc (0 to start). */
uint32_t img_crc32(uint32_t crc, const void *data, size_t len);

/* The store's bytes: counters, the slots in use and the arena in use. */
uint32_t img_store_crc(const ctxc_history_t *h);

/* An export writer: CRC32 of everything written, and a copy into buf when
 * buf is not NULL (CTXC_E_NO_SPACE past cap). */
typedef struct {
    char *buf;
    size_t cap, len;
    uint32_t crc;
} img_sink_t;
ctxc_status_t img_sink_write(void *user, const char *data, size_t len);

/* The sum of the entries' token estimates (the history's total must be it). */
uint64_t img_entry_token_sum(const ctxc_history_t *h);

#endif
