/*
 * ctxc — the resumable JSON reader (private header; json_stream.c).
 *
 * A push parser for one JSON text fed in pieces split anywhere (an SSE
 * event's data as it arrives, an HTTP body chunk by chunk). It validates
 * the whole text (syntax, UTF-8 in strings, escapes, numbers, nesting)
 * and holds none of it: its state is a few dozen bytes whatever the size
 * of the text or the number of its values. What a reader wants out of the
 * text it takes through three callbacks, keyed by the path of each value:
 *
 *   begin(user, js, type)  a value starts; js->path[0 .. js->depth) names
 *                          it (see below). Returning true asks for its
 *                          content: a string's decoded bytes go to str(), a
 *                          number's text is in js->num at end().
 *   str(user, p, n)        decoded UTF-8 bytes of a wanted string, in any
 *                          number of pieces (a piece may end inside a
 *                          multi-byte sequence); escapes are decoded, a
 *                          lone surrogate escape becomes U+FFFD.
 *   end(user, js, type)    the value ended (containers at their closing
 *                          bracket, with the path they began with).
 *
 * A path element is one byte: an object member is its key's id (1 + the
 * key's index in the key table given to init, 0 for a key not in it or
 * longer than CTXC__JS_KEY_MAX bytes), an array element is
 * CTXC__JS_ELEM(i) (indexes from 126 on share one value). Values nested
 * deeper than CTXC__JS_PATH_MAX containers are validated but reach no
 * callback. Nothing is allocated; no recursion.
 */
#ifndef CTXC_JSON_STREAM_H
#define CTXC_JSON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/status.h"

#define CTXC__JS_PATH_MAX 8u
#define CTXC__JS_KEY_MAX 24u
#define CTXC__JS_NUM_MAX 24u

/* Path element of array element i. */
#define CTXC__JS_ELEM(i) ((uint8_t)(0x80u + ((i) < 0x7Eu ? (i) : 0x7Eu)))
/* In a pattern (ctxc__js_at): any array element. */
#define CTXC__JS_ANY 0xFFu

typedef struct ctxc__js ctxc__js_t;

typedef struct {
    bool (*begin)(void *user, const ctxc__js_t *js, int type);
    void (*str)(void *user, const char *p, size_t n);
    void (*end)(void *user, const ctxc__js_t *js, int type);
} ctxc__js_handler_t;

struct ctxc__js {
    const ctxc__js_handler_t *h;
    void *user;
    const char *const *keys; /* the key table */
    uint8_t nkeys;
    uint8_t state;
    uint8_t sub;  /* the state's step (strings, numbers, literals) */
    uint8_t want; /* the current string or number was asked for */
    uint8_t depth;
    uint8_t u8_need; /* continuation bytes still due */
    uint8_t u8_lo, u8_hi;
    uint8_t hex_n; /* hex digits of a \u escape read */
    uint8_t key_len;
    uint8_t num_len; /* 0xFF: longer than CTXC__JS_NUM_MAX - 1 */
    uint8_t in_key;
    uint16_t hex;
    uint16_t hi_sur; /* a high surrogate waiting for its low half */
    uint64_t arrays; /* bit d: the container at depth d is an array */
    uint64_t pos;    /* bytes read */
    uint8_t path[CTXC__JS_PATH_MAX];
    char key[CTXC__JS_KEY_MAX];
    char num[CTXC__JS_NUM_MAX]; /* a wanted number's text, NUL-terminated */
};

/* Starts reading a new JSON text. keys[0 .. nkeys) (nkeys < 128) are the
 * keys whose ids paths carry. */
void ctxc__js_init(ctxc__js_t *js, const char *const *keys, size_t nkeys,
                   const ctxc__js_handler_t *h, void *user);

/* Reads the next piece. Errors: CTXC_E_PARSE (the message says what and
 * at which byte of the text); after an error every call fails again. */
ctxc_status_t ctxc__js_feed(ctxc__js_t *js, const char *p, size_t n,
                            ctxc_error_t *err);

/* The end of the text: CTXC_E_PARSE unless exactly one whole value was
 * read (a number at the very end is completed here). */
ctxc_status_t ctxc__js_end(ctxc__js_t *js, ctxc_error_t *err);

/* Whether js->path[0 .. depth) matches pattern[0 .. n) (CTXC__JS_ANY
 * matches any array element). */
static inline bool ctxc__js_at(const ctxc__js_t *js, const uint8_t *pattern,
                               size_t n) {
    if (js->depth != n) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (pattern[i] != js->path[i] &&
            !(pattern[i] == CTXC__JS_ANY && js->path[i] >= 0x80u)) {
            return false;
        }
    }
    return true;
}

#endif /* CTXC_JSON_STREAM_H */
