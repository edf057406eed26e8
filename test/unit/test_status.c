/*
 * Status codes: one X-macro list gives the enum, the names and the texts.
 * Error messages and the bounded output sink they are written through
 * (src/sink.h): the first bytes kept, every byte counted, streams in front
 * of a write function.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "../../src/error.h"
#include "../../src/sink.h"
#include "ctxc/ctxc.h"

static void test_every_status_has_a_distinct_text_and_name(void **state) {
    (void)state;
    for (int i = 0; i < (int)CTXC_STATUS_COUNT_; i++) {
        const char *t = ctxc_strerror((ctxc_status_t)i);
        const char *n = ctxc_status_name((ctxc_status_t)i);
        assert_non_null(t);
        assert_true(strlen(t) > 1);
        assert_true(strncmp(n, "CTXC_", 5) == 0);
        for (int j = 0; j < i; j++) {
            assert_string_not_equal(t, ctxc_strerror((ctxc_status_t)j));
            assert_string_not_equal(n, ctxc_status_name((ctxc_status_t)j));
        }
    }
    assert_int_equal(CTXC_OK, 0);
    assert_string_equal(ctxc_strerror(CTXC_OK), "ok");
    assert_string_equal(ctxc_status_name(CTXC_E_NO_SPACE), "CTXC_E_NO_SPACE");
    assert_string_equal(ctxc_status_name(CTXC_E_UNKNOWN_STRATEGY),
                        "CTXC_E_UNKNOWN_STRATEGY");
}

static void test_unknown_values_are_safe(void **state) {
    (void)state;
    assert_string_equal(ctxc_strerror((ctxc_status_t)9999), "unknown status");
    assert_string_equal(ctxc_strerror((ctxc_status_t)-1), "unknown status");
    assert_string_equal(ctxc_status_name((ctxc_status_t)9999),
                        "CTXC_E_UNKNOWN");
}

static void test_error_details_are_filled(void **state) {
    (void)state;
    ctxc_history_t h;
    ctxc_error_t err;
    memset(&err, 0x55, sizeof err);
    assert_int_equal(ctxc_history_init(&h, NULL, 1, NULL, 0, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(err.status, CTXC_E_INVALID_ARG);
    assert_int_equal(err.line, 0);
    assert_int_equal(err.needed, 0);
    assert_string_equal(ctxc_error_message(&err),
                        "history, slots and arena must not be NULL");
    assert_string_equal(ctxc_error_message(NULL), "");
    /* a NULL error pointer is allowed everywhere */
    assert_int_equal(ctxc_history_init(&h, NULL, 1, NULL, 0, NULL),
                     CTXC_E_INVALID_ARG);
}

static void test_long_messages_are_clipped_not_overflowed(void **state) {
    (void)state;
    CTXC_HISTORY_DEFINE(h, 2, 512);
    static ctxc_import_t imp_state;
    ctxc_import_t *imp = &imp_state;
    static char line[300];
    memset(line, 0, sizeof line);
    strcpy(line, "{\"speaker\":\"");
    memset(line + strlen(line), 'w', 200);
    strcat(line, "\",\"blocks\":[{\"type\":\"text\",\"text\":\"x\"}]}");
    ctxc_error_t err;
    assert_int_equal(
        ctxc_import_text(imp, &h, line, strlen(line), CTXC_FORMAT_AUTO, &err),
        CTXC_E_PARSE);
    assert_true(strlen(err.message) < sizeof err.message);
    assert_non_null(strstr(err.message, "unknown speaker 'wwww"));
    assert_non_null(strstr(err.message, "...'"));
}

static void test_version_comes_from_the_manifest(void **state) {
    (void)state;
    assert_string_equal(ctxc_version(), CTXC_VERSION_STRING);
    assert_non_null(strchr(ctxc_version(), '.'));
}

/* ---- the sink (src/sink.h) ----------------------------------------------- */

/* A sink keeps the first cap bytes of what is put, also from a put that
 * does not fit whole, and counts every byte. */
static void test_sink_keeps_the_first_bytes_and_counts_all(void **state) {
    (void)state;
    char buf[8];
    memset(buf, '#', sizeof buf);
    ctxc__sink_t s = {buf, 6, 0};
    ctxc__put(&s, "abcd", 4);
    assert_int_equal(s.len, 4);
    assert_memory_equal(buf, "abcd", 4);
    ctxc__put(&s, "efgh", 4); /* only "ef" fits */
    ctxc__putc(&s, 'i');
    ctxc__puts(&s, "jk");
    assert_int_equal(s.len, 11);
    assert_memory_equal(buf, "abcdef##", 8); /* nothing past cap */
    assert_string_equal(ctxc__sink_cstr(&s), "abcdef");
    /* a text sink leaves room for the NUL */
    char t[4];
    ctxc__sink_t u = {t, sizeof t - 1, 0};
    ctxc__puts(&u, "ok");
    assert_string_equal(ctxc__sink_cstr(&u), "ok");
}

static void test_sink_without_buffer_measures(void **state) {
    (void)state;
    ctxc__sink_t m = {NULL, 0, 0};
    ctxc__puts(&m, "hello, ");
    ctxc__putc(&m, 'w');
    ctxc__put_uint(&m, 12345);
    assert_int_equal(m.len, 13);
}

static void test_sink_writes_unsigned_decimals(void **state) {
    (void)state;
    static const struct {
        uint64_t v;
        const char *text;
    } cases[] = {{0, "0"},
                 {7, "7"},
                 {10, "10"},
                 {4294967295u, "4294967295"},
                 {UINT64_MAX, "18446744073709551615"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char buf[24];
        ctxc__sink_t s = {buf, sizeof buf - 1, 0};
        ctxc__put_uint(&s, cases[i].v);
        assert_int_equal(s.len, strlen(cases[i].text));
        assert_string_equal(ctxc__sink_cstr(&s), cases[i].text);
    }
}

typedef struct {
    char text[64];
    size_t len;
    size_t calls_left; /* writes that succeed before one fails */
} dest_t;

static ctxc_status_t dest_write(void *user, const char *data, size_t len) {
    dest_t *d = user;
    if (d->calls_left == 0) {
        return CTXC_E_IO;
    }
    d->calls_left--;
    assert_true(d->len + len < sizeof d->text);
    memcpy(d->text + d->len, data, len);
    d->len += len;
    d->text[d->len] = '\0';
    return CTXC_OK;
}

/* A stream hands everything to its write function, in order: small puts
 * collected, a put larger than the buffer passed through. */
static void test_stream_writes_everything_in_order(void **state) {
    (void)state;
    dest_t d = {"", 0, 100};
    char buf[4];
    ctxc__stream_t w;
    ctxc__stream_init(&w, buf, sizeof buf, dest_write, &d);
    ctxc__stream_puts(&w, "ab");
    ctxc__stream_puts(&w, "cd");
    assert_string_equal(d.text, ""); /* still collected */
    ctxc__stream_puts(&w, "e");
    ctxc__stream_puts(&w, "0123456789");
    ctxc__stream_put(&w, "fg", 2);
    assert_int_equal(ctxc__stream_flush(&w), CTXC_OK);
    assert_string_equal(d.text, "abcde0123456789fg");
    assert_int_equal(ctxc__stream_flush(&w), CTXC_OK); /* nothing pending */
    assert_string_equal(d.text, "abcde0123456789fg");
}

/* The first error of the write function sticks: nothing is written after
 * it and the flush answers it. */
static void test_stream_error_sticks(void **state) {
    (void)state;
    dest_t d = {"", 0, 1};
    char buf[4];
    ctxc__stream_t w;
    ctxc__stream_init(&w, buf, sizeof buf, dest_write, &d);
    ctxc__stream_puts(&w, "abcd");
    ctxc__stream_puts(&w, "efgh"); /* "abcd" written */
    ctxc__stream_puts(&w, "ijkl"); /* "efgh" fails */
    d.calls_left = 100;
    ctxc__stream_puts(&w, "mnop");
    assert_int_equal(ctxc__stream_flush(&w), CTXC_E_IO);
    assert_string_equal(d.text, "abcd");
}

/* Messages are cut to the buffer byte by byte (not piece by piece), always
 * NUL-terminated. */
static void test_messages_are_cut_to_the_byte(void **state) {
    (void)state;
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    (void)ctxc__fail(&err, CTXC_E_IO, "%s and %u", "abcdef", 42u);
    assert_string_equal(err.message, "abcdef and 42");
    /* one %s longer than the message: its first bytes are kept */
    ctxc_error_t small;
    memset(&small, 0, sizeof small);
    char long_text[CTXC_CFG_ERROR_MESSAGE_LEN + 50];
    memset(long_text, 'x', sizeof long_text - 1);
    long_text[sizeof long_text - 1] = '\0';
    (void)ctxc__fail(&small, CTXC_E_IO, "%s!", long_text);
    assert_int_equal(strlen(small.message), sizeof small.message - 1);
    assert_int_equal(small.message[0], 'x');
    assert_int_equal(small.message[sizeof small.message - 2], 'x');
    ctxc__err_prefix(&small, "pre");
    assert_int_equal(strlen(small.message), sizeof small.message - 1);
    assert_memory_equal(small.message, "pre: xxx", 8);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_status_has_a_distinct_text_and_name),
        cmocka_unit_test(test_unknown_values_are_safe),
        cmocka_unit_test(test_error_details_are_filled),
        cmocka_unit_test(test_long_messages_are_clipped_not_overflowed),
        cmocka_unit_test(test_version_comes_from_the_manifest),
        cmocka_unit_test(test_sink_keeps_the_first_bytes_and_counts_all),
        cmocka_unit_test(test_sink_without_buffer_measures),
        cmocka_unit_test(test_sink_writes_unsigned_decimals),
        cmocka_unit_test(test_stream_writes_everything_in_order),
        cmocka_unit_test(test_stream_error_sticks),
        cmocka_unit_test(test_messages_are_cut_to_the_byte),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
