/*
 * The spill store (issue 28, part 3, the building block): blocks stored
 * and read back by id through the port's filesystem, ids never reused
 * (also when the index is lost), a byte budget kept by evicting the oldest
 * blocks first but never one of the operation in flight, clear errors
 * (unknown id, evicted, store missing), and fault injection at every port
 * call of a put: nothing listed before is lost or read as another block.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "fake_fs.h"

static mem_fs_t mfs;
static ctxc_fs_t fs;
static fault_fs_t ffs;
static ctxc_fs_t faulty;
static char ixbuf[512];
static ctxc_spill_t sp;

static int setup(void **state) {
    (void)state;
    memset(&mfs, 0, sizeof mfs);
    fs = mem_fs(&mfs);
    ctxc_error_t err;
    assert_int_equal(
        ctxc_spill_init(&sp, &fs, "spill", 100, ixbuf, sizeof ixbuf, &err),
        CTXC_OK);
    return 0;
}

static void put_ok(const char *data, char id[9]) {
    ctxc_error_t err;
    if (ctxc_spill_put(&sp, data, strlen(data), id, &err) != CTXC_OK) {
        fail_msg("put: %s", err.message);
    }
}

static ctxc_status_t get(const char *id, char *out, size_t cap,
                         ctxc_error_t *err) {
    size_t len = 0;
    memset(out, 0, cap);
    ctxc_status_t st = ctxc_spill_get(&sp, id, out, cap - 1, &len, err);
    if (st == CTXC_OK) {
        out[len] = '\0';
    }
    return st;
}

static void assert_block(const char *id, const char *want) {
    char out[256];
    ctxc_error_t err;
    if (get(id, out, sizeof out, &err) != CTXC_OK) {
        fail_msg("get %s: %s", id, err.message);
    }
    assert_string_equal(out, want);
}

static void assert_missing(const char *id, const char *why) {
    char out[256];
    ctxc_error_t err;
    assert_int_equal(get(id, out, sizeof out, &err), CTXC_E_NOT_FOUND);
    if (strstr(err.message, why) == NULL) {
        fail_msg("get %s: '%s' does not say '%s'", id, err.message, why);
    }
}

#define B30 "{\"result\":\"0123456789abcdef\"}" /* 29 bytes */

static void test_put_and_get(void **state) {
    (void)state;
    char a[9], b[9];
    put_ok(B30, a);
    put_ok("{\"result\":\"second\"}", b);
    assert_string_equal(a, "00000001");
    assert_string_equal(b, "00000002");
    assert_block(a, B30);
    assert_block(b, "{\"result\":\"second\"}");
    assert_non_null(mem_get(&mfs, "spill/00000001.json"));
    assert_string_equal(mem_get(&mfs, "spill/index"), "next 00000003\n"
                                                      "00000001 0000000029\n"
                                                      "00000002 0000000019\n");
}

static void test_errors_say_which(void **state) {
    (void)state;
    assert_missing("00000001", "store missing");
    char a[9];
    put_ok(B30, a);
    assert_missing("00000009", "unknown id");
    assert_missing("zz", "unknown id");
    assert_missing("00000000", "unknown id");
    char small[8];
    size_t len;
    ctxc_error_t err;
    assert_int_equal(ctxc_spill_get(&sp, a, small, sizeof small, &len, &err),
                     CTXC_E_NO_SPACE);
}

static void test_budget_evicts_the_oldest_first(void **state) {
    (void)state;
    char a[9], b[9], c[9], d[9];
    put_ok(B30, a);
    put_ok(B30, b);
    put_ok(B30, c); /* 90 of 100 bytes */
    put_ok(B30, d); /* a goes */
    assert_missing(a, "evicted");
    assert_null(mem_get(&mfs, "spill/00000001.json"));
    assert_block(b, B30);
    assert_block(d, B30);
    /* a block over the whole budget */
    static char big[200];
    memset(big, 'x', 150);
    char e[9];
    ctxc_error_t err;
    assert_int_equal(ctxc_spill_put(&sp, big, 150, e, &err), CTXC_E_NO_SPACE);
    assert_non_null(strstr(err.message, "over its budget"));
    assert_block(b, B30);
}

static void test_the_operation_in_flight_is_never_evicted(void **state) {
    (void)state;
    char a[9], b[9], c[9], d[9];
    put_ok(B30, a); /* before the operation: may go */
    ctxc_spill_begin(&sp);
    put_ok(B30, b);
    put_ok(B30, c);
    put_ok(B30, d); /* evicts a only */
    assert_missing(a, "evicted");
    char e[9];
    ctxc_error_t err;
    assert_int_equal(ctxc_spill_put(&sp, B30, strlen(B30), e, &err),
                     CTXC_E_NO_SPACE);
    assert_non_null(strstr(err.message, "spill store full"));
    assert_block(b, B30);
    assert_block(c, B30);
    assert_block(d, B30);
    ctxc_spill_end(&sp);
    put_ok(B30, e); /* now b may go */
    assert_missing(b, "evicted");
    assert_block(e, B30);
}

static void test_ids_are_never_reused(void **state) {
    (void)state;
    char a[9], b[9];
    put_ok(B30, a);
    put_ok(B30, b);
    /* the index lost: the next id is past the largest block file */
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_remove(&fs, "spill/index", &err), CTXC_OK);
    char c[9];
    put_ok("{\"c\":1}", c);
    assert_string_equal(c, "00000003");
    assert_block(c, "{\"c\":1}");
}

/* Every port call of a put fails once, in turn: the put fails or
 * succeeds, every block listed before reads back as itself or as evicted
 * (only the oldest may be), a failed put's block is not readable, and the
 * store works afterwards with a fresh id. */
static void test_fault_at_every_port_call_loses_nothing(void **state) {
    (void)state;
    size_t runs = 0, failed = 0;
    for (int op = FAULT_MKDIR; op < FAULT_COUNT_; op++) {
        for (unsigned nth = 1; nth < 12; nth++) {
            setup(NULL);
            char a[9], b[9], c[9];
            put_ok("{\"a\":\"first block....\"}", a); /* 24 bytes */
            put_ok("{\"b\":\"second block...\"}", b);
            put_ok("{\"c\":\"third block....\"}", c);
            faulty = fault_fs(&ffs, fs, (fault_op_t)op, nth);
            ctxc_spill_t fsp = sp;
            fsp.fs = &faulty;
            char d[9] = "";
            ctxc_error_t err;
            /* 24 more bytes: over the budget of 100, a is evicted */
            ctxc_status_t st = ctxc_spill_put(&fsp, B30, strlen(B30), d, &err);
            if (!ffs.fired) {
                assert_int_equal(st, CTXC_OK);
                break;
            }
            runs++;
            if (st != CTXC_OK) {
                failed++;
                assert_string_equal(d, "");
            }
            char out[256];
            if (get(a, out, sizeof out, &err) == CTXC_OK) {
                assert_string_equal(out, "{\"a\":\"first block....\"}");
            } else {
                assert_non_null(strstr(err.message, "evicted"));
            }
            assert_block(b, "{\"b\":\"second block...\"}");
            assert_block(c, "{\"c\":\"third block....\"}");
            if (st == CTXC_OK) {
                assert_block(d, B30);
            } else {
                assert_missing("00000004", "");
            }
            char e[9];
            put_ok("{\"e\":1}", e);
            assert_true(strcmp(e, c) > 0);
            assert_block(e, "{\"e\":1}");
            assert_block(c, "{\"c\":\"third block....\"}");
        }
    }
    printf("[ spill ] fault injection: %zu faults at port calls of a put, "
           "%zu failed puts, nothing lost\n",
           runs, failed);
    assert_true(runs > 5 && failed > 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_put_and_get, setup),
        cmocka_unit_test_setup(test_errors_say_which, setup),
        cmocka_unit_test_setup(test_budget_evicts_the_oldest_first, setup),
        cmocka_unit_test_setup(test_the_operation_in_flight_is_never_evicted,
                               setup),
        cmocka_unit_test_setup(test_ids_are_never_reused, setup),
        cmocka_unit_test_setup(test_fault_at_every_port_call_loses_nothing,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
