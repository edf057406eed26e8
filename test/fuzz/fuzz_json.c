/*
 * Fuzz target: the JSON scanner and canonicaliser (src/json.c; private API,
 * this is test code).
 *
 * Invariants: the scanner and the canonicaliser agree on what is JSON;
 * refusals say why; the canonical form is JSON again, is its own canonical
 * form (idempotent), and is never longer than needed to hold it (the
 * measuring pass counts the same length as the writing pass). The first
 * input byte picks the depth limit (1..CTXC_CFG_JSON_MAX_DEPTH).
 */
#include "fuzz.h"

#include "json.h"
#include "json_tok.h"
#include "sink.h"

#define OUT_CAP (1u << 20)
static char out1[OUT_CAP], out2[OUT_CAP];
static ctxc__jtok_t tok[4096];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > OUT_CAP / 2) {
        return 0;
    }
    unsigned depth = 1u + data[0] % CTXC_CFG_JSON_MAX_DEPTH;
    const char *js = (const char *)data + 1;
    size_t len = size - 1;
    ctxc_error_t err;

    ctxc__sink_t measure = {NULL, 0, 0};
    ctxc_status_t st_m =
        ctxc__json_canon(js, len, CTXC__SRC_RAW, depth, &measure, &err);
    fuzz_check_error(st_m, &err, "canon (measure)");

    ctxc__sink_t o1 = {out1, OUT_CAP, 0};
    ctxc_status_t st =
        ctxc__json_canon(js, len, CTXC__SRC_RAW, depth, &o1, &err);
    fuzz_check_error(st, &err, "canon");
    if (st != st_m) {
        fuzz_fail("canon: %s when measuring, %s when writing",
                  ctxc_status_name(st_m), ctxc_status_name(st));
    }
    size_t count = 0;
    ctxc_status_t st_s = ctxc__json_scan(
        js, len, depth, tok, sizeof tok / sizeof tok[0], &count, NULL, &err);
    fuzz_check_error(st_s, &err, "scan");
    if ((st_s == CTXC_OK) != (st == CTXC_OK)) {
        fuzz_fail("scan says %s, canon says %s", ctxc_status_name(st_s),
                  ctxc_status_name(st));
    }
    if (st != CTXC_OK) {
        return 0;
    }
    if (o1.len != measure.len) {
        fuzz_fail("canon wrote %zu bytes, measured %zu", o1.len, measure.len);
    }
    if (o1.len > OUT_CAP) {
        return 0;
    }
    ctxc__sink_t o2 = {out2, OUT_CAP, 0};
    st = ctxc__json_canon(out1, o1.len, CTXC__SRC_RAW, depth, &o2, &err);
    if (st != CTXC_OK) {
        fuzz_fail("the canonical form is refused: %s", err.message);
    }
    if (o2.len != o1.len || memcmp(out1, out2, o1.len) != 0) {
        fuzz_fail("canonical form not idempotent (%zu -> %zu bytes)", o1.len,
                  o2.len);
    }
    return 0;
}
