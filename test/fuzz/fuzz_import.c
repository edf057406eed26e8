/*
 * Fuzz target: JSONL import (built twice: FUZZ_FORMAT = CTXC_FORMAT_ICONTENT
 * for the interchange format, CTXC_FORMAT_OPENAI for chat messages).
 *
 * Invariants: a refused import leaves the history as it was (here: the one
 * entry put in first, byte for byte) and says why; an accepted one exports,
 * the export imports again as the interchange format (so the pairing rule
 * and every other check hold for it) with the same token estimate, and
 * exporting that gives the same bytes (byte-stable).
 */
#include "fuzz.h"

#ifndef FUZZ_FORMAT
#error "built with -DFUZZ_FORMAT=CTXC_FORMAT_ICONTENT or CTXC_FORMAT_OPENAI"
#endif

CTXC_HISTORY_DEFINE(h1, 512, 1u << 20);
CTXC_HISTORY_DEFINE(h2, 512, 1u << 20);
static ctxc_import_t imp;
static uint8_t ids1[CTXC_HISTORY_ID_INDEX_BYTES(64)];
static fuzz_buf_t before, after, again;

static const char FIRST[] = "{\"speaker\":\"human\",\"blocks\":[{\"type\":"
                            "\"text\",\"text\":\"hi\"}]}\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ctxc_error_t err;
    ctxc_history_clear(&h1);
    ctxc_history_set_id_index(&h1, ids1, sizeof ids1);
    if (ctxc_import_text(&imp, &h1, FIRST, sizeof FIRST - 1,
                         CTXC_FORMAT_ICONTENT, &err) != CTXC_OK) {
        fuzz_fail("the fixed first entry was refused: %s", err.message);
    }
    fuzz_export(&h1, &before);
    uint64_t tokens_before = ctxc_history_tokens(&h1);

    ctxc_status_t st = ctxc_import_text(&imp, &h1, (const char *)data, size,
                                        FUZZ_FORMAT, &err);
    fuzz_check_error(st, &err, "import");
    if (st != CTXC_OK) {
        fuzz_export(&h1, &after);
        fuzz_same(&before, &after, "a refused import changed the history");
        if (ctxc_history_tokens(&h1) != tokens_before) {
            fuzz_fail("a refused import changed the token estimate");
        }
        return 0;
    }
    fuzz_export(&h1, &after);
    ctxc_history_clear(&h2);
    st = ctxc_import_text(&imp, &h2, after.p, after.len, CTXC_FORMAT_ICONTENT,
                          &err);
    if (st != CTXC_OK) {
        fuzz_fail("the export of an accepted import was refused (line %u): %s",
                  (unsigned)err.line, err.message);
    }
    if (ctxc_history_count(&h2) != ctxc_history_count(&h1) ||
        ctxc_history_tokens(&h2) != ctxc_history_tokens(&h1)) {
        fuzz_fail("re-import: %zu entries / %llu tokens, were %zu / %llu",
                  ctxc_history_count(&h2),
                  (unsigned long long)ctxc_history_tokens(&h2),
                  ctxc_history_count(&h1),
                  (unsigned long long)ctxc_history_tokens(&h1));
    }
    fuzz_export(&h2, &again);
    fuzz_same(&after, &again, "export is not byte-stable");
    return 0;
}
