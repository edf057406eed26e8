/*
 * ctxc — the fact check of an LLM summary (private; anchors.c): the
 * anchors of the summarised range, found without a model, checked against
 * the summary text, and the bounded section of the missing ones that ctxc
 * appends to the summary.
 *
 * Anchors, by class (the order in which missing ones take the section's
 * slots: files written and failed commands, files read or searched, todos,
 * URLs, identifiers), newest first within a class:
 *   file        paths the range's tool calls read, wrote or searched (the
 *               tool-role table, every enabled vocabulary, user tools),
 *               resolved against the workspace root and normalised; found
 *               by that form, the form relative to the root, or the last
 *               two components
 *   failed      shell commands whose response has an error or a nonzero
 *               exit status (with the status or the first error line);
 *               found by the command's first 40 bytes
 *   url         http:// and https:// URLs in human and ai text and in tool
 *               call parameters; found verbatim
 *   identifier  `single-backticked` words the human wrote (no whitespace,
 *               1..64 bytes); found verbatim
 *   todo        the active todos (in progress, pending); found by their
 *               first 120 bytes, ignoring ASCII case
 * Pinned entries are not summarised (kept verbatim), so not checked.
 * Each anchor counts once (the first, newest occurrence), as long as the
 * memory for the set of anchors seen lasts (4 bytes an anchor). Each
 * search is linear in the summary's bytes (anchors.c: has()), so the check
 * costs at most anchors x summary bytes, whatever the model wrote.
 */
#ifndef CTXC_ANCHORS_H
#define CTXC_ANCHORS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/strategy.h"
#include "strategies.h"

typedef struct {
    /* input */
    const ctxc_compress_ctx_t *ctx;
    ctxc__pairs_t *pairs;     /* call id pairs of ctx->view */
    const unsigned char *pin; /* pinned positions (skipped), or NULL */
    size_t from, to;          /* the summarised view range */
    size_t max_items;
    size_t max_bytes; /* of the section, header and footer included */
    char *mem;        /* caller memory: section, scratch, anchors seen */
    size_t mem_cap;
    /* the port's stop hook (NULL: none), asked every few anchors: when it
     * says stop, the check ends with `stopped` set and nothing written */
    bool (*stop)(void *ctx);
    void *stop_ctx;
    bool stopped; /* output */
    /* output of ctxc__facts_check */
    size_t found, missing, added;
    const char *section; /* the section (in mem), section_len bytes; 0 when
                            nothing is missing */
    size_t section_len;
    const char *items; /* the item lines alone (for a retry request) */
    size_t items_len;
} ctxc__facts_t;

/* Bytes of memory the check needs at least (section of max_bytes plus its
 * scratch); more holds the list of anchors seen. */
#define CTXC__FACTS_SCRATCH 512u
#define CTXC__FACTS_MIN(max_bytes) ((size_t)(max_bytes) + CTXC__FACTS_SCRATCH)

/* Checks `summary` against the anchors of the range; fills the counts and
 * the section. */
void ctxc__facts_check(ctxc__facts_t *f, ctxc_str_t summary);

#endif /* CTXC_ANCHORS_H */
