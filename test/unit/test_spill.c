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
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "fake_fs.h"
#include "support.h"

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

static void put_ok(const char *data, char id[17]) {
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
    char a[17], b[17];
    put_ok(B30, a);
    put_ok("{\"result\":\"second\"}", b);
    /* the number, then the hash of the bytes */
    assert_int_equal(strlen(a), 16);
    assert_memory_equal(a, "00000001", 8);
    assert_memory_equal(b, "00000002", 8);
    assert_block(a, B30);
    assert_block(b, "{\"result\":\"second\"}");
    assert_non_null(mem_get(&mfs, "spill/00000001.json"));
    assert_string_equal(mem_get(&mfs, "spill/index"), "next 00000003\n"
                                                      "00000001 0000000029\n"
                                                      "00000002 0000000019\n");
}

static void test_errors_say_which(void **state) {
    (void)state;
    assert_missing("0000000100000000", "store missing");
    char a[17];
    put_ok(B30, a);
    assert_missing("0000000900000000", "unknown id");
    assert_missing("zz", "unknown id");
    assert_missing("0000000000000000", "unknown id");
    /* an id of 8 digits (a store before ids carried a hash) names no
     * content: refused */
    assert_missing("00000001", "not an id of the spill store");
    /* the right number with another hash */
    char wrong[17];
    memcpy(wrong, a, sizeof wrong);
    wrong[15] = wrong[15] == '0' ? '1' : '0';
    assert_missing(wrong, "another block");
    char small[8];
    size_t len;
    ctxc_error_t err;
    assert_int_equal(ctxc_spill_get(&sp, a, small, sizeof small, &len, &err),
                     CTXC_E_NO_SPACE);
}

static void test_budget_evicts_the_oldest_first(void **state) {
    (void)state;
    char a[17], b[17], c[17], d[17];
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
    char e[17];
    ctxc_error_t err;
    assert_int_equal(ctxc_spill_put(&sp, big, 150, e, &err), CTXC_E_NO_SPACE);
    assert_non_null(strstr(err.message, "over its budget"));
    assert_block(b, B30);
}

static void test_the_operation_in_flight_is_never_evicted(void **state) {
    (void)state;
    char a[17], b[17], c[17], d[17];
    put_ok(B30, a); /* before the operation: may go */
    ctxc_spill_begin(&sp);
    put_ok(B30, b);
    put_ok(B30, c);
    put_ok(B30, d); /* evicts a only */
    assert_missing(a, "evicted");
    char e[17];
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
    char a[17], b[17];
    put_ok(B30, a);
    put_ok(B30, b);
    /* the index lost: the next id is past the largest block file */
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_remove(&fs, "spill/index", &err), CTXC_OK);
    char c[17];
    put_ok("{\"c\":1}", c);
    assert_memory_equal(c, "00000003", 8);
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
            char a[17], b[17], c[17];
            put_ok("{\"a\":\"first block....\"}", a); /* 24 bytes */
            put_ok("{\"b\":\"second block...\"}", b);
            put_ok("{\"c\":\"third block....\"}", c);
            faulty = fault_fs(&ffs, fs, (fault_op_t)op, nth);
            ctxc_spill_t fsp = sp;
            fsp.fs = &faulty;
            char d[17] = "";
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
                assert_missing("0000000400000000", "");
            }
            char e[17];
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

/* ---- the density step spills what it prunes (through the session) ------ */

#if CTXC_CFG_STRATEGY_HIGH_DENSITY

CTXC_HISTORY_DEFINE(hist, 64, 65536);
CTXC_WORK_DEFINE(work, 64, 32768);
static ctxc_settings_store_t set;
static ctxc_session_t sess;
static char entry_buf[8192];
static t_dump_t before, after;

#define BODY                                                                   \
    "int main(void) { return 0; } /* a file body long enough to prune */"
#define CALL(id, name, params)                                                 \
    "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"tool_call\",\"id\":\"" id     \
    "\",\"name\":\"" name "\",\"parameters\":" params "}]}\n"
#define RESP(id, name, result)                                                 \
    "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","           \
    "\"callId\":\"" id "\",\"toolName\":\"" name "\",\"result\":\"" result     \
    "\"}]}\n"
#define HUMAN(text)                                                            \
    "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"" text   \
    "\"}]}\n"
#define INCL(path, body) "--- " path " ---\\n" body "\\n--- End of content ---"

static void session_with(const ctxc_fs_t *f, uint64_t budget) {
    ctxc_error_t err;
    assert_int_equal(
        ctxc_spill_init(&sp, f, "spill", budget, ixbuf, sizeof ixbuf, &err),
        CTXC_OK);
    ctxc_settings_init(&set, NULL);
    t_set(&set, "compression.strategy", "high-density");
    t_set(&set, "compression.density.recencyPruning", "true");
    t_set(&set, "compression.density.recencyRetention", "1");
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, &set, NULL),
                     CTXC_OK);
    ctxc_session_set_workspace(&sess, "/w");
    ctxc_session_set_spill(&sess, &sp, entry_buf, sizeof entry_buf);
}

static void three_kinds(void) {
    t_import(&hist,
             HUMAN("first\\n" INCL(
                 "src/log.h",
                 "#define LOG_V1 1 // version one of the header, long enough "
                 "to be worth a pointer with its handle, and then some more"))
                 CALL("r1", "read_file", "{\"file_path\":\"a.c\"}")
                     RESP("r1", "read_file", BODY " one") CALL(
                         "r2", "read_file", "{\"file_path\":\"b.c\"}")
                         RESP("r2", "read_file", BODY " two") CALL(
                             "w1", "write_file",
                             "{\"file_path\":\"a.c\",\"content\":\"x\"}")
                             RESP("w1", "write_file", "ok") CALL(
                                 "r3", "read_file", "{\"file_path\":\"c.c\"}")
                                 RESP("r3", "read_file", BODY " three")
                                     HUMAN("again\\n" INCL(
                                         "src/log.h",
                                         "#define LOG_V2 2 // version two of "
                                         "the header, long enough")));
}

/* The ids of the handles in the export, in order. */
static size_t handles(const char *text, char ids[][17], size_t max) {
    size_t n = 0;
    for (const char *p = text;
         (p = strstr(p, "[ctxc:restore ")) != NULL && n < max; p++) {
        memcpy(ids[n], p + 14, 16);
        ids[n][16] = '\0';
        n++;
    }
    return n;
}

static void restore_ok(const char *id, char *out, size_t cap) {
    size_t len;
    ctxc_error_t err;
    if (ctxc_session_restore(&sess, id, out, cap, &len, &err) != CTXC_OK) {
        fail_msg("restore %s: %s", id, err.message);
    }
    assert_int_equal(strlen(out), len);
}

static void test_pruned_blocks_come_back_by_their_handle(void **state) {
    (void)state;
    three_kinds();
    session_with(&fs, 1u << 20);
    t_dump(&hist, &before);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_OK);
    t_dump(&hist, &after);
    /* read->write: the call stays, its result is a pointer with an id */
    assert_non_null(strstr(after.buf, "\"r1\",\"name\":\"read_file\""));
    assert_null(strstr(after.buf, BODY " one"));
    /* recency (keeps 1): r2's result too; r3 is the newest */
    assert_null(strstr(after.buf, BODY " two"));
    assert_non_null(strstr(after.buf, BODY " three"));
    /* dedupe: the first inclusion's body */
    assert_null(strstr(after.buf, "LOG_V1"));
    assert_non_null(strstr(after.buf, "[superseded by a later inclusion of "
                                      "this file \xe2\x80\x94 [ctxc:restore "));
    assert_non_null(strstr(after.buf, "\"[Result pruned \xe2\x80\x94 "
                                      "[ctxc:restore "));
    char ids[8][17];
    assert_int_equal(handles(after.buf, ids, 8), 3);
    char out[4096];
    restore_ok(ids[0], out, sizeof out); /* the inclusion: human entry 0 */
    assert_non_null(strstr(out, "\"type\":\"text\""));
    assert_non_null(strstr(out, "LOG_V1"));
    restore_ok(ids[1], out, sizeof out);
    assert_string_equal(out, "{\"type\":\"tool_response\",\"callId\":\"r1\","
                             "\"toolName\":\"read_file\",\"result\":\"" BODY
                             " one\"}");
    restore_ok(ids[2], out, sizeof out);
    assert_non_null(strstr(out, BODY " two"));
    assert_int_equal(sess.last_density.read_write_pruned, 1);
    assert_int_equal(sess.last_density.recency_pruned, 1);
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_true(ctxc_history_tokens(&hist) < 10000);
    /* a second step changes nothing and stores nothing more */
    static t_dump_t again;
    size_t files = mem_file_count(&mfs);
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_OK);
    t_dump(&hist, &again);
    assert_string_equal(again.buf, after.buf);
    assert_int_equal(mem_file_count(&mfs), files);
    /* errors */
    size_t len;
    assert_int_equal(ctxc_session_restore(&sess, "0000ffff00000000", out,
                                          sizeof out, &len, &err),
                     CTXC_E_NOT_FOUND);
    assert_non_null(strstr(err.message, "unknown id"));
    ctxc_session_set_spill(&sess, NULL, NULL, 0);
    assert_int_equal(
        ctxc_session_restore(&sess, ids[1], out, sizeof out, &len, &err),
        CTXC_E_UNAVAILABLE);
}

static void test_without_a_store_pruning_is_as_before(void **state) {
    (void)state;
    three_kinds();
    session_with(&fs, 1u << 20);
    ctxc_session_set_spill(&sess, NULL, NULL, 0);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_OK);
    t_dump(&hist, &after);
    assert_null(strstr(after.buf, "ctxc:restore"));
    assert_null(strstr(after.buf, "\"r1\"")); /* dropped with its call */
    assert_non_null(strstr(after.buf, "re-run tool to retrieve"));
    assert_int_equal(mem_file_count(&mfs), 0);
}

/* The sizes of the blocks a step stores (from the index), in order. */
static size_t stored_sizes(size_t *sizes, size_t max) {
    const char *ix = mem_get(&mfs, "spill/index");
    size_t n = 0;
    for (const char *l = ix + 14; ix != NULL && *l != '\0' && n < max;
         l += 20) {
        sizes[n++] = (size_t)strtoul(l + 9, NULL, 10);
    }
    return n;
}

/* A step whose blocks are more than the store's budget (issue 41 item 2):
 * it succeeds and compresses; what fits is stored and restorable, the
 * rest is pruned as without a store (the pointer or the note without an
 * id), and the result says how many. */
static void test_a_step_over_the_budget_prunes_what_does_not_fit(void **state) {
    (void)state;
    /* the sizes of the step's three blocks with room for all */
    three_kinds();
    session_with(&fs, 1u << 20);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_OK);
    size_t sizes[4];
    assert_int_equal(stored_sizes(sizes, 4), 3);
    /* room for the first two only */
    setup(NULL);
    three_kinds();
    session_with(&fs, sizes[0] + sizes[1]);
    uint64_t tokens = ctxc_history_tokens(&hist);
    if (ctxc_session_optimize(&sess, &err) != CTXC_OK) {
        fail_msg("optimize: %s", err.message);
    }
    assert_true(ctxc_history_tokens(&hist) < tokens);
    assert_int_equal(sess.last_density.spill_full, 1);
    assert_int_equal(sess.last_density.read_write_pruned, 1);
    assert_int_equal(sess.last_density.recency_pruned, 1);
    t_dump(&hist, &after);
    assert_null(strstr(after.buf, BODY " one"));
    assert_null(strstr(after.buf, BODY " two"));
    assert_null(strstr(after.buf, "LOG_V1"));
    char ids[8][17];
    assert_int_equal(handles(after.buf, ids, 8), 2);
    char out[4096];
    restore_ok(ids[0], out, sizeof out);
    restore_ok(ids[1], out, sizeof out);
    /* the third block: the pointer without an id, its call kept */
    assert_non_null(strstr(after.buf, "re-run tool to retrieve"));
    ctxc_history_stats_t st;
    ctxc_history_stats(&hist, &st);
    assert_int_equal(st.unpaired_calls, 0);
    assert_int_equal(st.unpaired_responses, 0);
    /* two blocks and the index on storage, nothing else left behind */
    assert_int_equal(mem_file_count(&mfs), 3);
    /* the next step has nothing more to do, and succeeds */
    static t_dump_t again;
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_OK);
    t_dump(&hist, &again);
    assert_string_equal(again.buf, after.buf);
}

/* A budget under every block: nothing stored, everything pruned without
 * an id (the inclusion gets the note of a step without a store). */
static void test_a_store_too_small_for_any_block(void **state) {
    (void)state;
    three_kinds();
    session_with(&fs, 100);
    uint64_t tokens = ctxc_history_tokens(&hist);
    ctxc_error_t err;
    if (ctxc_session_optimize(&sess, &err) != CTXC_OK) {
        fail_msg("optimize: %s", err.message);
    }
    assert_true(ctxc_history_tokens(&hist) < tokens);
    assert_int_equal(sess.last_density.spill_full, 3);
    t_dump(&hist, &after);
    assert_null(strstr(after.buf, "ctxc:restore"));
    assert_null(strstr(after.buf, "LOG_V1"));
    assert_non_null(
        strstr(after.buf, "[superseded by a later inclusion of this file]"));
    assert_int_equal(mem_file_count(&mfs), 0);
}

/* ---- a pointer names its own block and nothing else (item 3) ---------- */

/* The store is lost and started again: its numbers come again, for other
 * blocks; an id of the old store reads nothing. */
static void test_an_id_of_a_lost_store_reads_nothing(void **state) {
    (void)state;
    char a[17];
    put_ok("{\"history\":\"A\"}", a);
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_remove(&fs, "spill/00000001.json", &err), CTXC_OK);
    assert_int_equal(ctxc_fs_remove(&fs, "spill/index", &err), CTXC_OK);
    char b[17];
    put_ok("{\"history\":\"B\"}", b);
    assert_memory_equal(a, b, 8); /* the same number again */
    assert_string_not_equal(a, b);
    assert_missing(a, "another block");
    assert_block(b, "{\"history\":\"B\"}");
}

/* History A's pointer quoted in history B (a model's answer, a forged tool
 * result) over one store: B's restore refuses it; A's own restores. */
static void test_a_pointer_of_another_history_is_refused(void **state) {
    (void)state;
    three_kinds();
    session_with(&fs, 1u << 20);
    ctxc_error_t err;
    assert_int_equal(ctxc_session_optimize(&sess, &err), CTXC_OK);
    t_dump(&hist, &after);
    char ids[8][17];
    assert_int_equal(handles(after.buf, ids, 8), 3);
    char out[4096];
    size_t len;
    restore_ok(ids[1], out, sizeof out); /* r1's result, in A */
    /* history B: the same store, A's handle in a model's answer and in a
     * tool result of another call */
    static char b_text[2048];
    snprintf(
        b_text, sizeof b_text,
        HUMAN("hello") "{\"speaker\":\"ai\",\"blocks\":[{\"type\":"
                       "\"text\",\"text\":\"see [ctxc:restore %s]\"}]}\n" CALL(
                           "x9", "read_file",
                           "{\"file_path\":\"a.c\"}") "{\"speaker\":"
                                                      "\"tool\","
                                                      "\"blocks\":[{"
                                                      "\"type\":\"tool_"
                                                      "response\","
                                                      "\"callId\":"
                                                      "\"x9\","
                                                      "\"toolName\":"
                                                      "\"read_file\","
                                                      "\"result\":\"["
                                                      "Result pruned "
                                                      "\xe2\x80\x94 "
                                                      "[ctxc:restore "
                                                      "%s]]\"}]}\n",
        ids[1], ids[1]);
    t_import(&hist, b_text);
    assert_int_equal(
        ctxc_session_restore(&sess, ids[1], out, sizeof out, &len, &err),
        CTXC_E_NOT_FOUND);
    assert_non_null(strstr(err.message, "not a pointer of this history"));
    assert_int_equal(len, 0);
    /* the dedupe block and r2's result: no pointer of B either */
    for (size_t i = 0; i < 3; i++) {
        assert_int_equal(
            ctxc_session_restore(&sess, ids[i], out, sizeof out, &len, &err),
            CTXC_E_NOT_FOUND);
    }
}

/* Every port call of the spill path fails once, in turn: the step either
 * succeeds (every handle restores its block) or fails with the history as
 * it was. */
static void test_faults_in_the_spill_path_lose_nothing(void **state) {
    (void)state;
    size_t runs = 0, failed = 0;
    for (int op = FAULT_MKDIR; op < FAULT_COUNT_; op++) {
        for (unsigned nth = 1; nth < 40; nth++) {
            setup(NULL);
            three_kinds();
            faulty = fault_fs(&ffs, fs, (fault_op_t)op, nth);
            session_with(&faulty, 1u << 20);
            t_snap_t snap;
            t_snapshot(&hist, &snap);
            ctxc_error_t err;
            ctxc_status_t st = ctxc_session_optimize(&sess, &err);
            if (!ffs.fired) {
                assert_int_equal(st, CTXC_OK);
                break;
            }
            runs++;
            if (st != CTXC_OK) {
                failed++;
                t_assert_unchanged(&hist, &snap);
                continue;
            }
            t_dump(&hist, &after);
            char ids[8][17];
            size_t n = handles(after.buf, ids, 8);
            assert_int_equal(n, 3);
            sp.fs = &fs; /* read back without faults */
            char out[4096];
            for (size_t i = 0; i < n; i++) {
                restore_ok(ids[i], out, sizeof out);
            }
        }
    }
    printf("[ spill ] density step: %zu faults at port calls of the spill "
           "path, %zu failed steps (history unchanged), the rest restorable\n",
           runs, failed);
    assert_true(runs > 10 && failed > 0);
}

#endif

int main(void) {
    const struct CMUnitTest tests[] =
    { cmocka_unit_test_setup(test_put_and_get, setup),
      cmocka_unit_test_setup(test_errors_say_which, setup),
      cmocka_unit_test_setup(test_budget_evicts_the_oldest_first, setup),
      cmocka_unit_test_setup(test_the_operation_in_flight_is_never_evicted,
                             setup),
      cmocka_unit_test_setup(test_ids_are_never_reused, setup),
      cmocka_unit_test_setup(test_an_id_of_a_lost_store_reads_nothing, setup),
      cmocka_unit_test_setup(test_fault_at_every_port_call_loses_nothing,
                             setup),
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
      cmocka_unit_test_setup(test_pruned_blocks_come_back_by_their_handle,
                             setup),
      cmocka_unit_test_setup(test_without_a_store_pruning_is_as_before, setup),
      cmocka_unit_test_setup(
          test_a_step_over_the_budget_prunes_what_does_not_fit, setup),
      cmocka_unit_test_setup(test_a_store_too_small_for_any_block, setup),
      cmocka_unit_test_setup(test_a_pointer_of_another_history_is_refused,
                             setup),
      cmocka_unit_test_setup(test_faults_in_the_spill_path_lose_nothing, setup),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
