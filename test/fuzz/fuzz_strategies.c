/*
 * Fuzz target: the LLM-free compression of any history the importer
 * accepts: the density step, high-density compress and
 * top-down-truncation compress, through a session.
 *
 * Input: byte 0 picks the settings (context limit, density switches,
 * recency retention), the rest is JSONL (interchange format).
 *
 * Invariants after every call: a refused call says why and leaves the
 * history's export byte-identical; an accepted one never raises the token
 * estimate, and its result exports and imports again (so the pairing rule
 * and every other store check hold for it, with the same estimate).
 */
#include "fuzz.h"

#define ENTRIES 256
CTXC_HISTORY_DEFINE(h, ENTRIES, 1u << 19);
CTXC_HISTORY_DEFINE(h2, ENTRIES, 1u << 19);
CTXC_WORK_DEFINE(work, ENTRIES, 1u << 16);
static ctxc_import_t imp;
static ctxc_settings_store_t set;
static ctxc_session_t s;
static fuzz_buf_t before, after, again;

static void setting(const char *key, const char *value) {
    ctxc_error_t err;
    if (ctxc_settings_set(&set, key, value, &err) != CTXC_OK) {
        fuzz_fail("setting %s=%s: %s", key, value, err.message);
    }
}

/* Runs one step; checks the invariants. */
static void step(const char *what,
                 ctxc_status_t (*fn)(ctxc_session_t *, ctxc_error_t *)) {
    ctxc_error_t err;
    fuzz_export(&h, &before);
    uint64_t tokens = ctxc_history_tokens(&h);
    ctxc_status_t st = fn(&s, &err);
    fuzz_check_error(st, &err, what);
    fuzz_export(&h, &after);
    if (st != CTXC_OK) {
        fuzz_same(&before, &after, what);
        return;
    }
    if (ctxc_history_tokens(&h) > tokens) {
        fuzz_fail("%s raised the estimate: %llu -> %llu", what,
                  (unsigned long long)tokens,
                  (unsigned long long)ctxc_history_tokens(&h));
    }
    ctxc_history_clear(&h2);
    st = ctxc_import_text(&imp, &h2, after.p, after.len, CTXC_FORMAT_ICONTENT,
                          &err);
    if (st != CTXC_OK) {
        fuzz_fail("%s: its result is refused on import (line %u): %s", what,
                  (unsigned)err.line, err.message);
    }
    if (ctxc_history_tokens_estimated(&h2) !=
        ctxc_history_tokens_estimated(&h)) {
        fuzz_fail("%s: estimate %llu, re-imported %llu", what,
                  (unsigned long long)ctxc_history_tokens_estimated(&h),
                  (unsigned long long)ctxc_history_tokens_estimated(&h2));
    }
    fuzz_export(&h2, &again);
    fuzz_same(&after, &again, "export after a step is not byte-stable");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    uint8_t cfg = data[0];
    ctxc_error_t err;
    for (int strategy = 0; strategy < 2; strategy++) {
        ctxc_history_clear(&h);
        if (ctxc_import_text(&imp, &h, (const char *)data + 1, size - 1,
                             CTXC_FORMAT_ICONTENT, &err) != CTXC_OK) {
            return 0;
        }
        ctxc_settings_init(&set, NULL);
        static const char *const limits[] = {"1", "50", "400", "3000"};
        setting("context-limit", limits[cfg & 3]);
        setting("compression.density.readWritePruning",
                cfg & 4 ? "false" : "true");
        setting("compression.density.fileDedupe", cfg & 8 ? "false" : "true");
        setting("compression.density.recencyPruning",
                cfg & 16 ? "true" : "false");
        setting("compression.density.recencyRetention", cfg & 32 ? "1" : "3");
        setting("compression.strategy",
                strategy == 0 ? "high-density" : "top-down-truncation");
        if (ctxc_session_init(&s, &h, &work, &set, &err) != CTXC_OK) {
            fuzz_fail("session init: %s", err.message);
        }
        if (strategy == 0) {
            step("density step", ctxc_session_optimize);
        }
        step(strategy == 0 ? "high-density compress" : "top-down compress",
             ctxc_session_compress);
    }
    return 0;
}
