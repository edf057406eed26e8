/*
 * ctxc — an entry as plain text for a model without tools (ctxc/llm.h):
 * the rendering of the summariser request, also used by chat clients.
 */
#include <string.h>

#include "ctxc/llm.h"
#include "record.h"

typedef struct {
    ctxc_llm_write_fn w;
    void *u;
    ctxc_status_t st;
} out_t;

static void put(out_t *o, const char *p, size_t n) {
    if (o->st == CTXC_OK && n > 0) {
        o->st = o->w(o->u, p, n);
    }
}

static void put_str(out_t *o, ctxc_str_t s) {
    if (s.ptr != NULL) {
        put(o, s.ptr, s.len);
    }
}

/* How each block type is written: text, \1..\5 the block's fields (the
 * order of ctxc__block_desc), \21..\25 "when field 1..5 is absent, go on
 * after its reference" (an optional part). */
#define FIELD_REFS "\1\2\3\4\5\21\22\23\24\25"
static const char *const layout[CTXC_BLOCK_TYPE_COUNT] = {
    [CTXC_BLOCK_TEXT] = "\1",
    [CTXC_BLOCK_TOOL_CALL] = "[Tool Call: \2] \3",
    [CTXC_BLOCK_TOOL_RESPONSE] = "[Tool Result: \2]\24\nError: \4\n\3",
    [CTXC_BLOCK_THINKING] = "[Reasoning left out]",
    [CTXC_BLOCK_CODE] = "```\2\n\1\n```",
    [CTXC_BLOCK_MEDIA] = ("[Attachment: \1\24, caption: \4\25, file: \5; "
                          "content not included]"),
};

ctxc_status_t ctxc_llm_render_entry(const ctxc_entry_t *e, unsigned flags,
                                    ctxc_llm_write_fn write, void *user) {
    out_t oo = {write, user, CTXC_OK};
    out_t *o = &oo;
    const uint8_t *cur = NULL;
    ctxc_block_t b;
    bool first = true;
    while (ctxc_entry_next_block(e, &cur, &b)) {
        if (b.type == CTXC_BLOCK_THINKING &&
            (flags & CTXC_LLM_RENDER_NO_THINKING) != 0) {
            continue;
        }
        if (!first) {
            put(o, "\n\n", 2);
        }
        first = false;
        const char *t =
            (unsigned)b.type < CTXC_BLOCK_TYPE_COUNT ? layout[b.type] : "";
        while (*t != '\0') {
            unsigned c = (unsigned char)*t;
            if (c >= 0x11u && c <= 0x15u) { /* an optional part */
                if (ctxc__block_field(&b, c - 0x11u).ptr == NULL) {
                    t = strchr(t, (int)(c - 0x10u));
                }
                t++;
            } else if (c <= 5u) {
                put_str(o, ctxc__block_field(&b, c - 1u));
                t++;
            } else {
                size_t n = strcspn(t, FIELD_REFS);
                put(o, t, n);
                t += n;
            }
        }
    }
    return o->st;
}
