/*
 * History store: every operation, exhaustion, unchanged-after-failure,
 * views, token totals and the anchor.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

/* ---- helpers ------------------------------------------------------------- */

static ctxc_status_t add(ctxc_history_t *h, ctxc_speaker_t sp,
                         const ctxc_block_t *blocks, size_t n, const char *meta,
                         ctxc_error_t *err) {
    ctxc_entry_in_t in = {sp, blocks, n, ctxc_str(meta)};
    return ctxc_history_append(h, &in, err);
}

static ctxc_status_t add_text(ctxc_history_t *h, ctxc_speaker_t sp,
                              const char *text) {
    ctxc_block_t b = t_text(text);
    return add(h, sp, &b, 1, NULL, NULL);
}

/* Canonical JSONL of the whole history. */
typedef struct {
    char buf[1 << 16];
    size_t len;
} dump_t;

static ctxc_status_t dump_write(void *user, const char *data, size_t len) {
    dump_t *d = user;
    if (d->len + len > sizeof d->buf) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(d->buf + d->len, data, len);
    d->len += len;
    return CTXC_OK;
}

static void dump(const ctxc_history_t *h, dump_t *d) {
    d->len = 0;
    assert_int_equal(ctxc_export(h, dump_write, d, NULL), CTXC_OK);
    d->buf[d->len] = '\0';
}

/* Everything observable about a store. */
typedef struct {
    dump_t content;
    ctxc_history_usage_t usage;
    uint64_t tokens, estimated;
} snapshot_t;

static snapshot_t snap_a, snap_b;

static void snapshot(const ctxc_history_t *h, snapshot_t *s) {
    memset(s, 0, sizeof *s);
    dump(h, &s->content);
    ctxc_history_usage(h, &s->usage);
    s->tokens = ctxc_history_tokens(h);
    s->estimated = ctxc_history_tokens_estimated(h);
}

static void assert_unchanged(const ctxc_history_t *h, const snapshot_t *before) {
    snapshot(h, &snap_b);
    assert_int_equal(snap_b.content.len, before->content.len);
    assert_memory_equal(snap_b.content.buf, before->content.buf,
                        before->content.len);
    assert_memory_equal(&snap_b.usage, &before->usage, sizeof before->usage);
    assert_int_equal(snap_b.tokens, before->tokens);
    assert_int_equal(snap_b.estimated, before->estimated);
}

static const char *entry_text(const ctxc_history_t *h, size_t i) {
    ctxc_entry_t e;
    ctxc_block_t b;
    assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
    assert_int_equal(ctxc_entry_block(&e, 0, &b), CTXC_OK);
    assert_int_equal(b.type, CTXC_BLOCK_TEXT);
    return b.u.text.text.ptr;
}

CTXC_HISTORY_DEFINE(small, 8, 1024);

static int setup(void **state) {
    (void)state;
    ctxc_history_clear(&small);
    small.hwm_count = 0;
    small.hwm_used = 0;
    ctxc_history_set_estimator(&small, NULL, NULL);
    return 0;
}

/* ---- init ---------------------------------------------------------------- */

static void test_init_rejects_bad_arguments(void **state) {
    (void)state;
    ctxc_history_t h;
    ctxc_slot_t slots[4];
    uint8_t arena[128];
    ctxc_error_t err;
    assert_int_equal(ctxc_history_init(&h, NULL, 4, arena, sizeof arena, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_history_init(&h, slots, 0, arena, sizeof arena, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "max_entries"));
    assert_int_equal(ctxc_history_init(&h, slots, 4, arena, 16, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "arena_bytes"));
    assert_int_equal(ctxc_history_init(&h, slots, 4, arena, sizeof arena, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_history_count(&h), 0);
}

/* ---- append / get -------------------------------------------------------- */

static void test_append_and_read_every_block_type(void **state) {
    (void)state;
    ctxc_block_t b[5];
    memset(b, 0, sizeof b);
    b[0] = t_text("hello");
    b[1] = t_call("c1", "read_file", "{ \"file_path\" : \"a.c\" }");
    b[2].type = CTXC_BLOCK_THINKING;
    b[2].u.thinking.thought = ctxc_str("hmm");
    b[2].u.thinking.signature = ctxc_str("sig");
    b[3].type = CTXC_BLOCK_CODE;
    b[3].u.code.code = ctxc_str("x = 1");
    b[4].type = CTXC_BLOCK_MEDIA;
    b[4].u.media.mime_type = ctxc_str("image/png");
    b[4].u.media.data = ctxc_str("AAAA");
    b[4].u.media.encoding = ctxc_str("base64");
    b[4].u.media.caption = ctxc_str("a cat");
    ctxc_block_t r = t_resp("c1", "read_file", "\"int x;\"", "boom");
    ctxc_error_t err;
    assert_int_equal(add(&small, CTXC_SPEAKER_AI, b, 5,
                         "{\"model\": \"m1\", \"pinned\": true}", &err),
                     CTXC_OK);
    assert_int_equal(add(&small, CTXC_SPEAKER_TOOL, &r, 1, NULL, &err),
                     CTXC_OK);

    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&small, 0, &e), CTXC_OK);
    assert_int_equal(e.speaker, CTXC_SPEAKER_AI);
    assert_int_equal(e.block_count, 5);
    assert_int_equal(e.flags, CTXC_ENTRY_PINNED);
    assert_string_equal(e.metadata.ptr, "{\"model\":\"m1\",\"pinned\":true}");

    ctxc_block_t out;
    assert_int_equal(ctxc_entry_block(&e, 1, &out), CTXC_OK);
    assert_int_equal(out.type, CTXC_BLOCK_TOOL_CALL);
    assert_string_equal(out.u.tool_call.id.ptr, "c1");
    assert_string_equal(out.u.tool_call.parameters.ptr, "{\"file_path\":\"a.c\"}");
    assert_int_equal(ctxc_entry_block(&e, 2, &out), CTXC_OK);
    assert_string_equal(out.u.thinking.signature.ptr, "sig");
    assert_int_equal(ctxc_entry_block(&e, 3, &out), CTXC_OK);
    assert_null(out.u.code.language.ptr); /* absent optional */
    assert_int_equal(ctxc_entry_block(&e, 4, &out), CTXC_OK);
    assert_string_equal(out.u.media.caption.ptr, "a cat");
    assert_null(out.u.media.filename.ptr);
    assert_int_equal(ctxc_entry_block(&e, 5, &out), CTXC_E_RANGE);

    /* iteration visits the five blocks in order */
    const uint8_t *cur = NULL;
    int n = 0;
    while (ctxc_entry_next_block(&e, &cur, &out)) {
        assert_int_equal(out.type, b[n].type);
        n++;
    }
    assert_int_equal(n, 5);

    assert_int_equal(ctxc_history_get(&small, 1, &e), CTXC_OK);
    assert_int_equal(e.speaker, CTXC_SPEAKER_TOOL);
    assert_null(e.metadata.ptr);
    assert_int_equal(ctxc_entry_block(&e, 0, &out), CTXC_OK);
    assert_int_equal(out.type, CTXC_BLOCK_TOOL_RESPONSE);
    assert_string_equal(out.u.tool_response.call_id.ptr, "c1");
    assert_string_equal(out.u.tool_response.result.ptr, "\"int x;\"");
    assert_string_equal(out.u.tool_response.error.ptr, "boom");
    assert_int_equal(ctxc_history_get(&small, 2, &e), CTXC_E_RANGE);
}

static void test_metadata_flags_and_lookup(void **state) {
    (void)state;
    ctxc_block_t b = t_text("summary");
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &b, 1,
                         "{\"isSummary\":true,\"synthetic\":true,\"pinned\":false,"
                         "\"usage\":{\"promptTokens\":10,\"completionTokens\":2}}",
                         NULL),
                     CTXC_OK);
    ctxc_entry_t e;
    ctxc_history_get(&small, 0, &e);
    assert_int_equal(e.flags, CTXC_ENTRY_IS_SUMMARY | CTXC_ENTRY_SYNTHETIC);
    ctxc_str_t v;
    assert_int_equal(ctxc_entry_meta_find(&e, "usage", &v), CTXC_OK);
    assert_int_equal(v.len, strlen("{\"promptTokens\":10,\"completionTokens\":2}"));
    assert_memory_equal(v.ptr, "{\"promptTokens\":10,\"completionTokens\":2}", v.len);
    assert_int_equal(ctxc_entry_meta_find(&e, "model", &v), CTXC_E_NOT_FOUND);
    /* the flags follow the first occurrence of a key, like meta_find; a
     * nested key or a string "true" is no flag */
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &b, 1,
                         "{\"pinned\":false,\"x\":{\"synthetic\":true},"
                         "\"pinned\":true,\"isSummary\":\"true\","
                         "\"synthetic\":true}",
                         NULL),
                     CTXC_OK);
    ctxc_history_get(&small, 1, &e);
    assert_int_equal(e.flags, CTXC_ENTRY_SYNTHETIC);
    assert_int_equal(ctxc_entry_meta_find(&e, "pinned", &v), CTXC_OK);
    assert_memory_equal(v.ptr, "false", 5);
}

static void test_append_rejects_bad_input_and_changes_nothing(void **state) {
    (void)state;
    assert_int_equal(add_text(&small, CTXC_SPEAKER_HUMAN, "keep me"), CTXC_OK);
    snapshot(&small, &snap_a);
    ctxc_error_t err;

    ctxc_block_t missing = t_call("c1", NULL, "{}");
    assert_int_equal(add(&small, CTXC_SPEAKER_AI, &missing, 1, NULL, &err),
                     CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "missing field 'name'"));
    assert_unchanged(&small, &snap_a);

    ctxc_block_t badjson = t_call("c1", "x", "{\"a\":}");
    assert_int_equal(add(&small, CTXC_SPEAKER_AI, &badjson, 1, NULL, &err),
                     CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "parameters"));
    assert_unchanged(&small, &snap_a);

    ctxc_block_t badutf8 = t_text("caf\xc3");
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &badutf8, 1, NULL, &err),
                     CTXC_E_UTF8);
    assert_unchanged(&small, &snap_a);

    ctxc_block_t ok = t_text("fine");
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &ok, 1, "[1]", &err),
                     CTXC_E_PARSE);
    assert_non_null(strstr(err.message, "metadata must be a JSON object"));
    assert_int_equal(add(&small, (ctxc_speaker_t)7, &ok, 1, NULL, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &ok, 0, NULL, &err),
                     CTXC_E_INVALID_ARG);
    ctxc_block_t badtype = ok;
    badtype.type = (ctxc_block_type_t)9;
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &badtype, 1, NULL, &err),
                     CTXC_E_INVALID_ARG);
    assert_unchanged(&small, &snap_a);
}

/* ---- exhaustion ---------------------------------------------------------- */

static void test_arena_exhaustion_reports_exact_bytes_needed(void **state) {
    (void)state;
    static char big[700];
    memset(big, 'x', sizeof big - 1);
    assert_int_equal(add_text(&small, CTXC_SPEAKER_HUMAN, big), CTXC_OK);
    snapshot(&small, &snap_a);
    ctxc_error_t err;
    ctxc_block_t b = t_text(big);
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &b, 1, NULL, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.status, CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    assert_unchanged(&small, &snap_a);

    /* the same entry fits exactly when `needed` more bytes exist */
    size_t exact = small.used + (small.arena_bytes - small.used) + err.needed;
    static ctxc_slot_t slots[4];
    static uint8_t arena[2048];
    ctxc_history_t h;
    for (int extra = -1; extra <= 0; extra++) {
        assert_int_equal(ctxc_history_init(&h, slots, 4, arena,
                                           (size_t)((long)exact + extra), NULL),
                         CTXC_OK);
        assert_int_equal(add_text(&h, CTXC_SPEAKER_HUMAN, big), CTXC_OK);
        assert_int_equal(add_text(&h, CTXC_SPEAKER_HUMAN, big),
                         extra < 0 ? CTXC_E_NO_SPACE : CTXC_OK);
    }
    assert_int_equal(h.used, h.arena_bytes); /* filled to the last byte */
}

static void test_slot_exhaustion(void **state) {
    (void)state;
    for (int i = 0; i < 8; i++) {
        assert_int_equal(add_text(&small, CTXC_SPEAKER_HUMAN, "x"), CTXC_OK);
    }
    snapshot(&small, &snap_a);
    ctxc_error_t err;
    ctxc_block_t b = t_text("one too many");
    assert_int_equal(add(&small, CTXC_SPEAKER_HUMAN, &b, 1, NULL, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 1);
    assert_non_null(strstr(err.message, "maximum of 8 entries"));
    assert_unchanged(&small, &snap_a);
}

/* ---- replace ------------------------------------------------------------- */

static void test_replace_grow_shrink_and_alias(void **state) {
    (void)state;
    add_text(&small, CTXC_SPEAKER_HUMAN, "first");
    add_text(&small, CTXC_SPEAKER_AI, "second");
    add_text(&small, CTXC_SPEAKER_HUMAN, "third");
    size_t used = small.used;

    ctxc_block_t grown = t_text("second, but much longer than before");
    ctxc_entry_in_t in = {CTXC_SPEAKER_AI, &grown, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_replace(&small, 1, &in, NULL), CTXC_OK);
    assert_int_equal(small.used, used + strlen(grown.u.text.text.ptr) - 6);
    assert_string_equal(entry_text(&small, 0), "first");
    assert_string_equal(entry_text(&small, 1), grown.u.text.text.ptr);
    assert_string_equal(entry_text(&small, 2), "third");

    ctxc_block_t shrunk = t_text("2");
    in.blocks = &shrunk;
    assert_int_equal(ctxc_history_replace(&small, 1, &in, NULL), CTXC_OK);
    assert_int_equal(small.used, used - 5);
    assert_string_equal(entry_text(&small, 2), "third");

    /* new content that points into the store itself: entry 2 becomes a copy
     * of entry 0's text plus entry 2's own text as a second block */
    ctxc_entry_t e0, e2;
    ctxc_block_t blocks[2];
    ctxc_history_get(&small, 0, &e0);
    ctxc_history_get(&small, 2, &e2);
    ctxc_entry_block(&e0, 0, &blocks[0]);
    ctxc_entry_block(&e2, 0, &blocks[1]);
    ctxc_entry_in_t alias = {CTXC_SPEAKER_HUMAN, blocks, 2, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_replace(&small, 0, &alias, NULL), CTXC_OK);
    ctxc_entry_t e;
    ctxc_block_t b;
    ctxc_history_get(&small, 0, &e);
    assert_int_equal(e.block_count, 2);
    ctxc_entry_block(&e, 0, &b);
    assert_string_equal(b.u.text.text.ptr, "first");
    ctxc_entry_block(&e, 1, &b);
    assert_string_equal(b.u.text.text.ptr, "third");
    assert_string_equal(entry_text(&small, 1), "2");
    assert_string_equal(entry_text(&small, 2), "third");
    assert_int_equal(ctxc_history_tokens_estimated(&small),
                     (uint64_t)(ctxc_estimate_text("first", 5) +
                                ctxc_estimate_text("third", 5) +
                                ctxc_estimate_text("2", 1) +
                                ctxc_estimate_text("third", 5)));
}

static void test_replace_failures_change_nothing(void **state) {
    (void)state;
    static char big[600];
    memset(big, 'y', sizeof big - 1);
    add_text(&small, CTXC_SPEAKER_HUMAN, "a");
    add_text(&small, CTXC_SPEAKER_AI, big);
    snapshot(&small, &snap_a);
    ctxc_error_t err;
    ctxc_block_t b = t_text(big);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
    assert_int_equal(ctxc_history_replace(&small, 0, &in, &err), CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    assert_unchanged(&small, &snap_a);
    assert_int_equal(ctxc_history_replace(&small, 2, &in, &err), CTXC_E_RANGE);
    assert_unchanged(&small, &snap_a);
    ctxc_block_t bad = t_call("c", "n", "nope");
    in.blocks = &bad;
    assert_int_equal(ctxc_history_replace(&small, 0, &in, &err), CTXC_E_PARSE);
    assert_unchanged(&small, &snap_a);
    /* an aliasing replacement needs room for the staged copy */
    ctxc_entry_t e1;
    ctxc_block_t copy;
    ctxc_history_get(&small, 1, &e1);
    ctxc_entry_block(&e1, 0, &copy);
    in.blocks = &copy;
    assert_int_equal(ctxc_history_replace(&small, 0, &in, &err), CTXC_E_NO_SPACE);
    assert_unchanged(&small, &snap_a);
}

/* A replacement is written once into the free tail and moved into place;
 * when the tail cannot hold it but the size difference fits, it is written
 * in place instead: the documented room ("only the size difference") holds
 * and the neighbours stay intact either way. */
static void test_replace_without_room_to_stage(void **state) {
    (void)state;
    static ctxc_slot_t slots[4];
    static uint8_t arena[256];
    ctxc_history_t h;
    assert_int_equal(ctxc_history_init(&h, slots, 4, arena, sizeof arena, NULL),
                     CTXC_OK);
    static char old_text[121], new_text[131];
    memset(old_text, 'o', sizeof old_text - 1);
    memset(new_text, 'n', sizeof new_text - 1);
    assert_int_equal(add_text(&h, CTXC_SPEAKER_HUMAN, "before"), CTXC_OK);
    assert_int_equal(add_text(&h, CTXC_SPEAKER_AI, old_text), CTXC_OK);
    assert_int_equal(add_text(&h, CTXC_SPEAKER_HUMAN, "after"), CTXC_OK);
    size_t free_bytes = h.arena_bytes - h.used;
    assert_true(free_bytes < 10u + 8u + 5u + 130u); /* no room for a copy */
    assert_true(free_bytes >= 10u);                 /* room for the growth */
    ctxc_block_t b = t_text(new_text);
    ctxc_entry_in_t in = {CTXC_SPEAKER_AI, &b, 1, CTXC_STR_ABSENT};
    size_t used = h.used;
    assert_int_equal(ctxc_history_replace(&h, 1, &in, NULL), CTXC_OK);
    assert_int_equal(h.used, used + 10u);
    assert_string_equal(entry_text(&h, 0), "before");
    assert_string_equal(entry_text(&h, 1), new_text);
    assert_string_equal(entry_text(&h, 2), "after");
    assert_int_equal(ctxc_history_tokens_estimated(&h),
                     (uint64_t)ctxc_estimate_text("before", 6) +
                         ctxc_estimate_text(new_text, 130) +
                         ctxc_estimate_text("after", 5));
    /* and with room to stage, the same result */
    ctxc_block_t small_b = t_text("mid");
    in.blocks = &small_b;
    assert_int_equal(ctxc_history_replace(&h, 1, &in, NULL), CTXC_OK);
    assert_string_equal(entry_text(&h, 0), "before");
    assert_string_equal(entry_text(&h, 1), "mid");
    assert_string_equal(entry_text(&h, 2), "after");
}

/* ---- remove -------------------------------------------------------------- */

static void test_remove_set_compacts_in_place(void **state) {
    (void)state;
    const char *texts[] = {"zero", "one", "two", "three", "four", "five"};
    for (int i = 0; i < 6; i++) {
        add_text(&small, CTXC_SPEAKER_HUMAN, texts[i]);
    }
    size_t used = small.used;
    uint64_t tokens = ctxc_history_tokens_estimated(&small);
    size_t idx[] = {4, 1, 2}; /* any order */
    assert_int_equal(ctxc_history_remove(&small, idx, 3, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&small), 3);
    assert_string_equal(entry_text(&small, 0), "zero");
    assert_string_equal(entry_text(&small, 1), "three");
    assert_string_equal(entry_text(&small, 2), "five");
    /* the removed records are gone from the arena: a one-text-block record
     * is 14 bytes plus its text ("one", "two", "four") */
    assert_int_equal(small.used, used - (3 * 14 + 3 + 3 + 4));
    assert_int_equal(ctxc_history_tokens_estimated(&small),
                     tokens - 3); /* one token each */
    ctxc_history_usage_t u;
    ctxc_history_usage(&small, &u);
    assert_int_equal(u.entries_hwm, 6);
    assert_int_equal(u.bytes_hwm, used);
    /* room is reusable */
    assert_int_equal(add_text(&small, CTXC_SPEAKER_AI, "six"), CTXC_OK);
    assert_string_equal(entry_text(&small, 3), "six");
}

static void test_remove_failures_change_nothing(void **state) {
    (void)state;
    add_text(&small, CTXC_SPEAKER_HUMAN, "a");
    add_text(&small, CTXC_SPEAKER_HUMAN, "b");
    add_text(&small, CTXC_SPEAKER_HUMAN, "c");
    snapshot(&small, &snap_a);
    ctxc_error_t err;
    size_t dup[] = {0, 2, 0};
    assert_int_equal(ctxc_history_remove(&small, dup, 3, &err), CTXC_E_INVALID_ARG);
    assert_non_null(strstr(err.message, "listed twice"));
    assert_unchanged(&small, &snap_a);
    size_t out[] = {1, 3};
    assert_int_equal(ctxc_history_remove(&small, out, 2, &err), CTXC_E_RANGE);
    assert_unchanged(&small, &snap_a);
    assert_int_equal(ctxc_history_remove_range(&small, 2, 4, &err), CTXC_E_RANGE);
    assert_int_equal(ctxc_history_remove_range(&small, 2, 1, &err), CTXC_E_RANGE);
    assert_unchanged(&small, &snap_a);
    /* after a failed removal a valid one still works on every entry */
    size_t ok[] = {0, 2};
    assert_int_equal(ctxc_history_remove(&small, ok, 2, &err), CTXC_OK);
    assert_string_equal(entry_text(&small, 0), "b");
}

static void test_remove_range_and_clear(void **state) {
    (void)state;
    const char *texts[] = {"a", "b", "c", "d"};
    for (int i = 0; i < 4; i++) {
        add_text(&small, CTXC_SPEAKER_HUMAN, texts[i]);
    }
    assert_int_equal(ctxc_history_remove_range(&small, 1, 3, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&small), 2);
    assert_string_equal(entry_text(&small, 0), "a");
    assert_string_equal(entry_text(&small, 1), "d");
    assert_int_equal(ctxc_history_remove_range(&small, 1, 1, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_count(&small), 2);
    ctxc_history_clear(&small);
    ctxc_history_usage_t u;
    ctxc_history_usage(&small, &u);
    assert_int_equal(u.entries_used, 0);
    assert_int_equal(u.bytes_used, 0);
    assert_int_equal(u.entries_hwm, 4);
    assert_int_equal(u.entries_max, 8);
    assert_int_equal(u.bytes_max, 1024);
    assert_int_equal(ctxc_history_tokens(&small), 0);
}

/* ---- views --------------------------------------------------------------- */

static void test_curated_view_skips_empty_ai_entries(void **state) {
    (void)state;
    add_text(&small, CTXC_SPEAKER_HUMAN, "question");
    add_text(&small, CTXC_SPEAKER_AI, ""); /* no content */
    ctxc_block_t th;
    memset(&th, 0, sizeof th);
    th.type = CTXC_BLOCK_THINKING;
    th.u.thinking.thought = ctxc_str("");
    add(&small, CTXC_SPEAKER_AI, &th, 1, NULL, NULL); /* no content */
    add_text(&small, CTXC_SPEAKER_AI, "answer");
    add_text(&small, CTXC_SPEAKER_HUMAN, ""); /* human entries always count */
    uint16_t map[8];
    ctxc_view_t v;
    assert_int_equal(ctxc_view_init(&v, &small, CTXC_VIEW_RAW, map, 8, NULL),
                     CTXC_OK);
    assert_int_equal(v.count, 5);
    assert_int_equal(ctxc_view_init(&v, &small, CTXC_VIEW_CURATED, map, 8, NULL),
                     CTXC_OK);
    assert_int_equal(v.count, 3);
    assert_int_equal(v.map[0], 0);
    assert_int_equal(v.map[1], 3);
    assert_int_equal(v.map[2], 4);
    ctxc_error_t err;
    assert_int_equal(ctxc_view_init(&v, &small, CTXC_VIEW_RAW, map, 2, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 3);
}

/* ---- tokens -------------------------------------------------------------- */

static uint32_t seven_per_block(void *user, const ctxc_block_t *b) {
    (void)b;
    return *(const uint32_t *)user;
}

static void test_token_cache_hook_and_anchor(void **state) {
    (void)state;
    add_text(&small, CTXC_SPEAKER_HUMAN, "hello world"); /* 3 */
    add_text(&small, CTXC_SPEAKER_AI, "a b c d e");      /* 7 */
    ctxc_entry_t e;
    ctxc_history_get(&small, 1, &e);
    assert_int_equal(e.tokens, 7);
    assert_int_equal(ctxc_history_tokens(&small), 10);

    ctxc_history_anchor_tokens(&small, 250);
    assert_int_equal(ctxc_history_tokens(&small), 250);
    assert_int_equal(ctxc_history_tokens_estimated(&small), 10);
    add_text(&small, CTXC_SPEAKER_HUMAN, "hello world");
    assert_int_equal(ctxc_history_tokens(&small), 253);
    assert_int_equal(ctxc_history_remove_range(&small, 0, 1, NULL), CTXC_OK);
    assert_int_equal(ctxc_history_tokens(&small), 10); /* anchor dropped */

    ctxc_history_anchor_tokens(&small, 2); /* below the estimate */
    assert_int_equal(ctxc_history_tokens(&small), 2);

    uint32_t seven = 7;
    ctxc_history_set_estimator(&small, seven_per_block, &seven);
    assert_int_equal(ctxc_history_tokens(&small), 14);
    add_text(&small, CTXC_SPEAKER_HUMAN, "anything");
    assert_int_equal(ctxc_history_tokens(&small), 21);
    ctxc_history_set_estimator(&small, NULL, NULL);
    assert_int_equal(ctxc_history_tokens(&small), 7 + 3 + 2);
}

static void test_stats_count_blocks_and_unpaired_tool_calls(void **state) {
    (void)state;
    ctxc_block_t calls[3] = {t_call("c1", "read_file", "{}"),
                             t_call("c2", "run", "{}"), t_text("x")};
    ctxc_block_t resp[2] = {t_resp("c1", "read_file", "\"ok\"", NULL),
                            t_resp("ghost", "run", "\"\"", "gone")};
    ctxc_block_t early = t_resp("c3", "glob", "\"\"", NULL);
    ctxc_block_t late = t_call("c3", "glob", "{}");
    add_text(&small, CTXC_SPEAKER_HUMAN, "go");
    add(&small, CTXC_SPEAKER_TOOL, &early, 1, NULL, NULL); /* before its call */
    add(&small, CTXC_SPEAKER_AI, calls, 3, NULL, NULL);
    add(&small, CTXC_SPEAKER_TOOL, resp, 2, NULL, NULL);
    /* a call after its response breaks the pairing rule: refused */
    assert_int_equal(add(&small, CTXC_SPEAKER_AI, &late, 1, NULL, NULL),
                     CTXC_E_INVALID_ARG);
    ctxc_history_stats_t st;
    ctxc_history_stats(&small, &st);
    assert_int_equal(st.entries, 4);
    assert_int_equal(st.per_speaker[CTXC_SPEAKER_HUMAN], 1);
    assert_int_equal(st.per_speaker[CTXC_SPEAKER_AI], 1);
    assert_int_equal(st.per_speaker[CTXC_SPEAKER_TOOL], 2);
    assert_int_equal(st.per_block_type[CTXC_BLOCK_TEXT], 2);
    assert_int_equal(st.per_block_type[CTXC_BLOCK_TOOL_CALL], 2);
    assert_int_equal(st.per_block_type[CTXC_BLOCK_TOOL_RESPONSE], 3);
    assert_int_equal(st.tool_calls, 2);
    assert_int_equal(st.tool_responses, 3);
    assert_int_equal(st.unpaired_calls, 1);     /* c2 */
    assert_int_equal(st.unpaired_responses, 2); /* ghost, and the c3 with no call */
    assert_int_equal(st.tokens, ctxc_history_tokens(&small));
}

static void test_define_macro_default_sizes(void **state) {
    (void)state;
    CTXC_HISTORY_DEFINE_DEFAULT(def);
    ctxc_history_usage_t u;
    ctxc_history_usage(&def, &u);
    assert_int_equal(u.entries_max, CTXC_CFG_HISTORY_MAX_ENTRIES);
    assert_int_equal(u.bytes_max, CTXC_CFG_HISTORY_ARENA_BYTES);
    assert_int_equal(add_text(&def, CTXC_SPEAKER_HUMAN, "works"), CTXC_OK);
    assert_string_equal(entry_text(&def, 0), "works");
    ctxc_history_clear(&def);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_init_rejects_bad_arguments),
        cmocka_unit_test_setup(test_append_and_read_every_block_type, setup),
        cmocka_unit_test_setup(test_metadata_flags_and_lookup, setup),
        cmocka_unit_test_setup(test_append_rejects_bad_input_and_changes_nothing, setup),
        cmocka_unit_test_setup(test_arena_exhaustion_reports_exact_bytes_needed, setup),
        cmocka_unit_test_setup(test_slot_exhaustion, setup),
        cmocka_unit_test_setup(test_replace_grow_shrink_and_alias, setup),
        cmocka_unit_test_setup(test_replace_failures_change_nothing, setup),
        cmocka_unit_test_setup(test_replace_without_room_to_stage, setup),
        cmocka_unit_test_setup(test_remove_set_compacts_in_place, setup),
        cmocka_unit_test_setup(test_remove_failures_change_nothing, setup),
        cmocka_unit_test_setup(test_remove_range_and_clear, setup),
        cmocka_unit_test_setup(test_curated_view_skips_empty_ai_entries, setup),
        cmocka_unit_test_setup(test_token_cache_hook_and_anchor, setup),
        cmocka_unit_test_setup(test_stats_count_blocks_and_unpaired_tool_calls, setup),
        cmocka_unit_test(test_define_macro_default_sizes),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
