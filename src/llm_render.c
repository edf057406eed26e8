/*
 * ctxc — an entry as plain text for a model without tools (ctxc/llm.h):
 * the rendering of the summariser request, also used by chat clients.
 */
#include <string.h>

#include "ctxc/llm.h"

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

static void puts_(out_t *o, const char *s) { put(o, s, strlen(s)); }

static void put_str(out_t *o, ctxc_str_t s) {
    if (s.ptr != NULL) {
        put(o, s.ptr, s.len);
    }
}

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
            puts_(o, "\n\n");
        }
        first = false;
        switch (b.type) {
        case CTXC_BLOCK_TEXT:
            put_str(o, b.u.text.text);
            break;
        case CTXC_BLOCK_TOOL_CALL:
            puts_(o, "[Tool Call: ");
            put_str(o, b.u.tool_call.name);
            puts_(o, "] ");
            put_str(o, b.u.tool_call.parameters);
            break;
        case CTXC_BLOCK_TOOL_RESPONSE:
            puts_(o, "[Tool Result: ");
            put_str(o, b.u.tool_response.tool_name);
            puts_(o, "]");
            if (b.u.tool_response.error.ptr != NULL) {
                puts_(o, "\nError: ");
                put_str(o, b.u.tool_response.error);
            }
            puts_(o, "\n");
            put_str(o, b.u.tool_response.result);
            break;
        case CTXC_BLOCK_THINKING:
            puts_(o, "[Reasoning left out]");
            break;
        case CTXC_BLOCK_CODE:
            puts_(o, "```");
            put_str(o, b.u.code.language);
            puts_(o, "\n");
            put_str(o, b.u.code.code);
            puts_(o, "\n```");
            break;
        case CTXC_BLOCK_MEDIA:
            puts_(o, "[Attachment: ");
            put_str(o, b.u.media.mime_type);
            if (b.u.media.caption.ptr != NULL) {
                puts_(o, ", caption: ");
                put_str(o, b.u.media.caption);
            }
            if (b.u.media.filename.ptr != NULL) {
                puts_(o, ", file: ");
                put_str(o, b.u.media.filename);
            }
            puts_(o, "; content not included]");
            break;
        default:
            break;
        }
    }
    return o->st;
}
