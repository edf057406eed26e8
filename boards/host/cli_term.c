/*
 * ctxc host CLI — text from the network shown to a person: control
 * characters made visible, so that a model's reply or a server's answer
 * cannot drive the terminal (OSC 52 clipboard writes, title changes,
 * clearing the screen, moving the cursor).
 *
 *   C0 controls except "\n" and "\t"   caret notation: ESC ^[, BEL ^G,
 *                                      CR ^M, NUL ^@ (the byte + 0x40)
 *   DEL (0x7F)                         ^?
 *   C1 controls U+0080..U+009F         <U+0080>..<U+009F> (in UTF-8 the
 *   (UTF-8 C2 80..C2 9F)               bytes C2 80..C2 9F; a C2 at the end
 *                                      of one piece is held until the next)
 *
 * Everything else is written as it is. Only what is shown changes: the
 * history keeps the text as it came.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

void cli_term_init(cli_term_t *t, FILE *out, bool neutralise) {
    t->out = out;
    t->neutralise = neutralise;
    t->pending_c2 = false;
}

static void put_c1(FILE *out, unsigned char second) {
    fprintf(out, "<U+%04X>", (unsigned)second); /* C2 xx is U+00xx */
}

void cli_term_write(cli_term_t *t, const char *data, size_t len) {
    if (!t->neutralise) {
        fwrite(data, 1, len, t->out);
        return;
    }
    size_t i = 0;
    if (t->pending_c2 && len > 0) { /* a C2 ended the previous piece */
        t->pending_c2 = false;
        unsigned char c = (unsigned char)data[0];
        if (c >= 0x80u && c <= 0x9Fu) {
            put_c1(t->out, c);
            i = 1;
        } else {
            fputc(0xC2, t->out);
        }
    }
    size_t run = i; /* start of the bytes not yet written */
    for (; i < len; i++) {
        unsigned char c = (unsigned char)data[i];
        bool c0 = (c < 0x20u && c != '\n' && c != '\t') || c == 0x7Fu;
        bool c2 = c == 0xC2u;
        if (!c0 && !c2) {
            continue;
        }
        fwrite(data + run, 1, i - run, t->out);
        run = i + 1;
        if (c0) {
            fputc('^', t->out);
            fputc(c == 0x7Fu ? '?' : (int)(c + 0x40u), t->out);
        } else if (i + 1 == len) {
            t->pending_c2 = true; /* its second byte is in the next piece */
        } else if ((unsigned char)data[i + 1] >= 0x80u &&
                   (unsigned char)data[i + 1] <= 0x9Fu) {
            put_c1(t->out, (unsigned char)data[++i]);
            run = i + 1;
        } else {
            fputc(0xC2, t->out);
        }
    }
    fwrite(data + run, 1, len - run, t->out);
}

void cli_term_end(cli_term_t *t) {
    if (t->pending_c2) { /* a sequence cut off: written as it came */
        fputc(0xC2, t->out);
        t->pending_c2 = false;
    }
}
