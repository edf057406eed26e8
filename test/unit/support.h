/*
 * Helpers shared by the unit suites: building entries, importing JSONL text,
 * exporting a history to memory, snapshots that prove "unchanged", and
 * setting values in a settings store.
 * Header-only (static functions); include after <cmocka.h>.
 */
#ifndef CTXC_TEST_SUPPORT_H
#define CTXC_TEST_SUPPORT_H

#include <stdio.h>
#include <string.h>

#include "ctxc/ctxc.h"

static inline ctxc_block_t t_text(const char *s) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(s);
    return b;
}

static inline ctxc_block_t t_call(const char *id, const char *name,
                                  const char *params) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TOOL_CALL;
    b.u.tool_call.id = ctxc_str(id);
    b.u.tool_call.name = ctxc_str(name);
    b.u.tool_call.parameters = ctxc_str(params);
    return b;
}

static inline ctxc_block_t t_resp(const char *id, const char *name,
                                  const char *result_json, const char *error) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TOOL_RESPONSE;
    b.u.tool_response.call_id = ctxc_str(id);
    b.u.tool_response.tool_name = ctxc_str(name);
    b.u.tool_response.result = ctxc_str(result_json);
    b.u.tool_response.error = ctxc_str(error);
    return b;
}

static inline void t_add(ctxc_history_t *h, ctxc_speaker_t sp,
                         const ctxc_block_t *blocks, size_t n) {
    ctxc_entry_in_t in = {sp, blocks, n, CTXC_STR_ABSENT};
    ctxc_error_t err;
    if (ctxc_history_append(h, &in, &err) != CTXC_OK) {
        fail_msg("append failed: %s", err.message);
    }
}

static inline void t_add_text(ctxc_history_t *h, ctxc_speaker_t sp,
                              const char *s) {
    ctxc_block_t b = t_text(s);
    t_add(h, sp, &b, 1);
}

/* Imports JSONL text (fails the test on error). */
static inline void t_import(ctxc_history_t *h, const char *jsonl) {
    static ctxc_import_t imp;
    ctxc_error_t err;
    ctxc_history_clear(h);
    if (ctxc_import_text(&imp, h, jsonl, strlen(jsonl), CTXC_FORMAT_AUTO,
                         &err) != CTXC_OK) {
        fail_msg("import failed at line %u: %s", (unsigned)err.line,
                 err.message);
    }
}

typedef struct {
    char buf[1 << 18];
    size_t len;
} t_dump_t;

static inline ctxc_status_t t_dump_write(void *user, const char *data,
                                         size_t len) {
    t_dump_t *d = (t_dump_t *)user;
    if (d->len + len >= sizeof d->buf) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(d->buf + d->len, data, len);
    d->len += len;
    d->buf[d->len] = '\0';
    return CTXC_OK;
}

static inline void t_dump(const ctxc_history_t *h, t_dump_t *d) {
    d->len = 0;
    d->buf[0] = '\0';
    assert_int_equal(ctxc_export(h, t_dump_write, d, NULL), CTXC_OK);
}

/* Everything observable about a store. */
typedef struct {
    t_dump_t content;
    ctxc_history_usage_t usage;
    uint64_t tokens;
} t_snap_t;

static inline void t_snapshot(const ctxc_history_t *h, t_snap_t *s) {
    t_dump(h, &s->content);
    ctxc_history_usage(h, &s->usage);
    s->tokens = ctxc_history_tokens(h);
}

static inline void t_assert_unchanged(const ctxc_history_t *h,
                                      const t_snap_t *before) {
    static t_snap_t now;
    t_snapshot(h, &now);
    assert_string_equal(now.content.buf, before->content.buf);
    assert_memory_equal(&now.usage, &before->usage, sizeof now.usage);
    assert_int_equal(now.tokens, before->tokens);
}

/* Settings of a test session: /set KEY VALUE on the ephemeral layer of `st`
 * (fails the test on error). t_set_ratio takes thousandths ("0.500"),
 * t_set_uint an integer. */
static inline void t_set(ctxc_settings_store_t *st, const char *key,
                         const char *value) {
    ctxc_error_t err;
    if (ctxc_settings_set(st, key, value, &err) != CTXC_OK) {
        fail_msg("/set %s %s: %s", key, value, err.message);
    }
}

static inline void t_set_ratio(ctxc_settings_store_t *st, const char *key,
                               uint32_t thousandths) {
    char text[24];
    snprintf(text, sizeof text, "%u.%03u", thousandths / 1000u,
             thousandths % 1000u);
    t_set(st, key, text);
}

static inline void t_set_uint(ctxc_settings_store_t *st, const char *key,
                              uint64_t value) {
    char text[24];
    snprintf(text, sizeof text, "%llu", (unsigned long long)value);
    t_set(st, key, text);
}

/* Text of block `k` of entry `i` (any string field that is the block's main
 * text: text, or the result JSON of a tool response). */
static inline const char *t_block_text(const ctxc_history_t *h, size_t i,
                                       size_t k) {
    ctxc_entry_t e;
    ctxc_block_t b;
    assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
    assert_int_equal(ctxc_entry_block(&e, k, &b), CTXC_OK);
    switch (b.type) {
    case CTXC_BLOCK_TEXT:
        return b.u.text.text.ptr;
    case CTXC_BLOCK_TOOL_RESPONSE:
        return b.u.tool_response.result.ptr;
    case CTXC_BLOCK_TOOL_CALL:
        return b.u.tool_call.id.ptr;
    default:
        return "";
    }
}

/* high-density's density step called directly (not through a session) over
 * work area w with cfg (a configuration the settings store may not hold),
 * then applied to h; fails the test on an error. */
static inline ctxc_density_counts_t
t_density_step(ctxc_history_t *h, const ctxc_density_config_t *cfg,
               ctxc_work_t *w) {
    const ctxc_strategy_t *hd = NULL;
    ctxc_error_t err;
    assert_int_equal(ctxc_strategy_find("high-density", &hd, NULL), CTXC_OK);
    assert_non_null(hd->optimize);
    ctxc_view_t raw;
    assert_int_equal(
        ctxc_view_init(&raw, h, CTXC_VIEW_RAW, w->map, w->cap, NULL), CTXC_OK);
    ctxc_density_result_t result;
    if (hd->optimize(&raw, cfg, w, &result, &err) != CTXC_OK) {
        fail_msg("optimize failed: %s", err.message);
    }
    if (ctxc_density_apply(h, &result, w, &err) != CTXC_OK) {
        fail_msg("apply failed: %s", err.message);
    }
    return result.counts;
}

/* Compresses `h` with the strategy of `set` at the lowest context limit
 * (threshold 1; from 10 tokens up in steps of 10, the history imported from
 * `jsonl` again before each try) whose target is met without dropping an
 * entry: for high-density, every result that has to be summarised is, and
 * nothing is dropped. *s is the session of the last try; returns the limit
 * (fails the test when there is none up to 100000). */
static inline uint64_t t_compress_no_drop(ctxc_history_t *h, ctxc_work_t *w,
                                          ctxc_settings_store_t *set,
                                          const char *workspace,
                                          const char *jsonl,
                                          ctxc_session_t *s) {
    for (uint64_t limit = 10; limit < 100000; limit += 10) {
        ctxc_error_t err;
        t_import(h, jsonl);
        t_set_uint(set, "context-limit", limit);
        t_set_ratio(set, "compression-threshold", 1000);
        assert_int_equal(ctxc_session_init(s, h, w, set, NULL), CTXC_OK);
        ctxc_session_set_workspace(s, workspace);
        if (ctxc_session_compress(s, &err) != CTXC_OK) {
            fail_msg("compress failed: %s", err.message);
        }
        if (s->last_compress.entries_dropped == 0) {
            return limit;
        }
    }
    fail_msg("no limit up to 100000 tokens without a dropped entry");
    return 0;
}

/* A scripted summary model for the LLM strategies
 * (ctxc_session_set_llm_resolver(s, t_model_resolve, NULL)): every request
 * is answered with t_model()->answer (NULL: a short state snapshot) and
 * counted in t_model()->calls. */
typedef struct {
    unsigned calls;
    const char *answer;
} t_model_t;

static inline t_model_t *t_model(void) {
    static t_model_t m;
    return &m;
}

static inline ctxc_status_t t_model_complete(const ctxc_llm_t *llm,
                                             const ctxc_llm_request_t *req,
                                             char *out, size_t cap,
                                             size_t *len,
                                             ctxc_llm_usage_t *usage,
                                             ctxc_error_t *err) {
    (void)llm;
    (void)req;
    (void)usage;
    (void)err;
    const char *a = t_model()->answer != NULL
                        ? t_model()->answer
                        : "<state_snapshot>turns</state_snapshot>";
    size_t n = strlen(a);
    assert_true(n < cap);
    memcpy(out, a, n + 1);
    *len = n;
    t_model()->calls++;
    return CTXC_OK;
}

static inline ctxc_status_t t_model_resolve(void *user, const char *profile,
                                            const ctxc_llm_t **llm,
                                            ctxc_error_t *err) {
    static const ctxc_llm_t m = {t_model_complete, NULL, "fake", "fake-1",
                                 NULL,             NULL, NULL, NULL};
    (void)user;
    (void)profile;
    (void)err;
    *llm = &m;
    return CTXC_OK;
}

#endif /* CTXC_TEST_SUPPORT_H */
