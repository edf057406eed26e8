/*
 * ctxc — bytes eight at a time in a 64-bit word (or four in a machine word
 * of 32 bits), and sixteen-bit masks (private header; used by the JSON
 * scanner and the estimator). Every operation is exact per byte: no carry
 * crosses a byte.
 */
#ifndef CTXC_SWAR_H
#define CTXC_SWAR_H

#include <stddef.h>
#include <stdint.h>

#define CTXC__SWAR_ONES 0x0101010101010101ull
#define CTXC__SWAR_LOW (CTXC__SWAR_ONES * 0x7Fu)
#define CTXC__SWAR_HIGH (CTXC__SWAR_ONES * 0x80u)

/* 0x80 in each byte of x (bytes < 0x80) that equals c. */
static inline uint64_t ctxc__swar_eq(uint64_t x, uint8_t c) {
    uint64_t d = x ^ (CTXC__SWAR_ONES * c);
    return ~((d + CTXC__SWAR_LOW) | d) & CTXC__SWAR_HIGH;
}

/* The sum of the eight byte values of v (each at most 255 / 8). */
static inline uint64_t ctxc__swar_byte_sum(uint64_t v) {
    v = (v & 0x00FF00FF00FF00FFull) + ((v >> 8) & 0x00FF00FF00FF00FFull);
    return (v * 0x0001000100010001ull) >> 48;
}

/* The same in a machine word: eight bytes on 64-bit hosts, four on small
 * targets (the JSON scanner's string runs: a third of the byte loop's
 * instructions on a Cortex-M4). */
#if SIZE_MAX > 0xFFFFFFFFu
typedef uint64_t ctxc__word_t;
#else
typedef uint32_t ctxc__word_t;
#endif
#define CTXC__WORD_ONES ((ctxc__word_t)-1 / 0xFFu)
#define CTXC__WORD_LOW (CTXC__WORD_ONES * 0x7Fu)
#define CTXC__WORD_HIGH (CTXC__WORD_ONES * 0x80u)

/* 0x80 in each byte of x (bytes < 0x80) that equals c. */
static inline ctxc__word_t ctxc__word_eq(ctxc__word_t x, uint8_t c) {
    ctxc__word_t d = x ^ (CTXC__WORD_ONES * c);
    return ~((d + CTXC__WORD_LOW) | d) & CTXC__WORD_HIGH;
}

/* The index of the first byte in memory order whose 0x80 bit is set in
 * m (m != 0; little-endian machines). */
static inline unsigned ctxc__word_first(ctxc__word_t m) {
#if SIZE_MAX > 0xFFFFFFFFu
    return (unsigned)__builtin_ctzll(m) / 8u;
#else
    return (unsigned)__builtin_ctz(m) / 8u;
#endif
}

/* Bits set in a 16-bit mask (no popcount instruction in the x86-64
 * baseline: __builtin_popcount would be a library call). */
static inline unsigned ctxc__pop16(unsigned x) {
    x = x - ((x >> 1) & 0x5555u);
    x = (x & 0x3333u) + ((x >> 2) & 0x3333u);
    x = (x + (x >> 4)) & 0x0F0Fu;
    return (x + (x >> 8)) & 0x1Fu;
}

#endif /* CTXC_SWAR_H */
