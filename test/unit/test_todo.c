/*
 * ctxc_todos_parse (ctxc/todo.h): an agent's todo list from JSON.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/todo.h"

static ctxc_todo_t todos[8];
static char text[256];

static ctxc_status_t parse(const char *json, size_t *n, ctxc_error_t *err) {
    memset(todos, 0, sizeof todos);
    return ctxc_todos_parse(json, strlen(json), todos, 8, n, text, sizeof text,
                            err);
}

static void test_an_array_of_todos(void **state) {
    (void)state;
    size_t n = 99;
    assert_int_equal(parse("[{\"content\":\"write the parser\",\"status\":"
                           "\"in_progress\"},{\"status\":\"pending\","
                           "\"content\":\"tests\"},{\"content\":\"plan\","
                           "\"status\":\"completed\"}]",
                           &n, NULL),
                     CTXC_OK);
    assert_int_equal(n, 3);
    assert_string_equal(todos[0].content, "write the parser");
    assert_int_equal(todos[0].status, CTXC_TODO_IN_PROGRESS);
    assert_string_equal(todos[1].content, "tests");
    assert_int_equal(todos[1].status, CTXC_TODO_PENDING);
    assert_int_equal(todos[2].status, CTXC_TODO_COMPLETED);
}

/* The TodoWrite-style input: {"todos": [...]}, other members ignored,
 * escapes decoded, "in-progress" accepted. */
static void test_an_object_with_todos(void **state) {
    (void)state;
    size_t n = 0;
    assert_int_equal(
        parse("{\"other\":[1,2],\"todos\":[{\"content\":\"fix \\\"ring\\\" "
              "\\u00e9\",\"activeForm\":\"Fixing\",\"status\":\"in-progress\","
              "\"id\":\"1\"}]}",
              &n, NULL),
        CTXC_OK);
    assert_int_equal(n, 1);
    assert_string_equal(todos[0].content, "fix \"ring\" \xc3\xa9");
    assert_int_equal(todos[0].status, CTXC_TODO_IN_PROGRESS);
    assert_int_equal(parse("[]", &n, NULL), CTXC_OK);
    assert_int_equal(n, 0);
}

static void expect_error(const char *json, ctxc_status_t want,
                         const char *in_message) {
    size_t n = 7;
    ctxc_error_t err;
    assert_int_equal(parse(json, &n, &err), want);
    assert_int_equal(n, 0);
    if (in_message != NULL && strstr(err.message, in_message) == NULL) {
        fail_msg("'%s' not in '%s'", in_message, err.message);
    }
}

static void test_bad_lists_say_why(void **state) {
    (void)state;
    expect_error("[{\"content\":\"a\",\"status\":\"pending\"},{\"content\":"
                 "\"b\",\"status\":\"done\"}]",
                 CTXC_E_PARSE, "todo 2: \"status\"");
    expect_error("[{\"status\":\"pending\"}]", CTXC_E_PARSE,
                 "todo 1: \"content\"");
    expect_error("[{\"content\":3,\"status\":\"pending\"}]", CTXC_E_PARSE,
                 "todo 1: \"content\"");
    expect_error("[\"a\"]", CTXC_E_PARSE, "todo 1: not an object");
    expect_error("{\"items\":[]}", CTXC_E_PARSE, "\"todos\"");
    expect_error("\"todos\"", CTXC_E_PARSE, "array");
    expect_error("[{\"content\":\"a\",", CTXC_E_PARSE, NULL);
}

static void test_too_many_or_too_long(void **state) {
    (void)state;
    ctxc_error_t err;
    size_t n = 5;
    static char many[2048];
    strcpy(many, "[");
    for (int i = 0; i < 10; i++) {
        strcat(many, i ? "," : "");
        strcat(many, "{\"content\":\"x\",\"status\":\"pending\"}");
    }
    strcat(many, "]");
    assert_int_equal(parse(many, &n, &err), CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 2); /* 10 todos, room for 8 */
    assert_int_equal(n, 0);
    /* texts larger than the buffer */
    const char *json = "[{\"content\":\"0123456789\",\"status\":\"pending\"}]";
    char small[8];
    assert_int_equal(ctxc_todos_parse(json, strlen(json), todos, 8, &n, small,
                                      sizeof small, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 3); /* 10 bytes + NUL in 8 */
    assert_int_equal(n, 0);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_an_array_of_todos),
        cmocka_unit_test(test_an_object_with_todos),
        cmocka_unit_test(test_bad_lists_say_why),
        cmocka_unit_test(test_too_many_or_too_long),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
