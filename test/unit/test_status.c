/*
 * Status codes: one X-macro list gives the enum, the names and the texts.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

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
    assert_string_equal(ctxc_status_name((ctxc_status_t)9999), "CTXC_E_UNKNOWN");
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
    assert_int_equal(ctxc_import_text(imp, &h, line, strlen(line),
                                      CTXC_FORMAT_AUTO, &err),
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

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_status_has_a_distinct_text_and_name),
        cmocka_unit_test(test_unknown_values_are_safe),
        cmocka_unit_test(test_error_details_are_filled),
        cmocka_unit_test(test_long_messages_are_clipped_not_overflowed),
        cmocka_unit_test(test_version_comes_from_the_manifest),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
