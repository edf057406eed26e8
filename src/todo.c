/*
 * ctxc — an agent's todo list from JSON (ctxc/todo.h), read with the one
 * JSON scanner.
 */
#include "ctxc/todo.h"

#include <string.h>

#include "error.h"
#include "json.h"
#include "json_tok.h"

static ctxc_status_t bad(ctxc_error_t *err, size_t *count, const char *what,
                         size_t i) {
    *count = 0;
    return ctxc__fail(err, CTXC_E_PARSE, "todo %z: %s", i + 1, what);
}

ctxc_status_t ctxc_todos_parse(const char *json, size_t len, ctxc_todo_t *todos,
                               size_t cap, size_t *count, char *text,
                               size_t text_cap, ctxc_error_t *err) {
    if (json == NULL || count == NULL || (cap > 0 && todos == NULL) ||
        (text_cap > 0 && text == NULL)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "todos: NULL argument");
    }
    *count = 0;
    ctxc__jtok_t t[CTXC_TODO_MAX_TOKENS];
    size_t n = 0;
    ctxc_status_t st = ctxc__json_scan(json, len, CTXC_CFG_JSON_MAX_DEPTH, t,
                                       CTXC_TODO_MAX_TOKENS, &n, NULL, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (n > CTXC_TODO_MAX_TOKENS) {
        return ctxc__fail_space(err, n - CTXC_TODO_MAX_TOKENS,
                                "todos: %z JSON tokens, at most %z "
                                "(CTXC_TODO_MAX_TOKENS)",
                                n, (size_t)CTXC_TODO_MAX_TOKENS);
    }
    size_t list = 0;
    if (t[0].type == CTXC__JT_OBJECT) {
        size_t key = 1;
        list = 0;
        for (uint32_t k = 0; k < t[0].size; k++) {
            if (ctxc__jtok_is(json, &t[key], "todos")) {
                list = key + 1;
            }
            key = t[key + 1].next;
        }
        if (list == 0) {
            return ctxc__fail(err, CTXC_E_PARSE,
                              "todos: an object without a \"todos\" member");
        }
    }
    if (t[list].type != CTXC__JT_ARRAY) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "todos: expected an array of todos (or an object "
                          "with a \"todos\" array)");
    }
    if (t[list].size > cap) {
        return ctxc__fail_space(err, t[list].size - cap,
                                "todos: %z todos, room for %z",
                                (size_t)t[list].size, cap);
    }
    ctxc__sink_t out = {text, text_cap, 0};
    size_t item = list + 1;
    for (size_t i = 0; i < t[list].size; i++, item = t[item].next) {
        if (t[item].type != CTXC__JT_OBJECT) {
            return bad(err, count, "not an object", i);
        }
        size_t content = 0, status = 0, key = item + 1;
        for (uint32_t k = 0; k < t[item].size; k++, key = t[key + 1].next) {
            if (ctxc__jtok_is(json, &t[key], "content")) {
                content = key + 1;
            } else if (ctxc__jtok_is(json, &t[key], "status")) {
                status = key + 1;
            }
        }
        if (content == 0 || t[content].type != CTXC__JT_STRING) {
            return bad(err, count, "\"content\" missing or not a string", i);
        }
        if (status == 0 || t[status].type != CTXC__JT_STRING) {
            return bad(err, count, "\"status\" missing or not a string", i);
        }
        /* names[k] is status (k + 1) / 2: pending, in progress (two
         * spellings), completed */
        static const char *const names[] = {"pending", "in_progress",
                                            "in-progress", "completed"};
        _Static_assert(CTXC_TODO_PENDING == 0 && CTXC_TODO_IN_PROGRESS == 1 &&
                           CTXC_TODO_COMPLETED == 2,
                       "the order of names[]");
        size_t k = 0;
        while (k < 4 && !ctxc__jtok_is(json, &t[status], names[k])) {
            k++;
        }
        if (k == 4) {
            return bad(err, count,
                       "\"status\" is not pending, in_progress or completed",
                       i);
        }
        todos[i].status = (ctxc_todo_status_t)((k + 1u) / 2u);
        size_t at = out.len;
        const ctxc__jtok_t *c = &t[content];
        st = ctxc__write_decoded(
            &out, json + c->start, c->end - c->start,
            (c->flags & CTXC__JF_ESCAPES) != 0 ? CTXC__SRC_JSTR : CTXC__SRC_RAW,
            err);
        if (st != CTXC_OK) {
            *count = 0;
            return st;
        }
        ctxc__putc(&out, '\0');
        todos[i].content = out.len <= text_cap ? text + at : NULL;
    }
    if (out.len > text_cap) {
        return ctxc__fail_space(err, out.len - text_cap,
                                "todos: the texts need %z bytes, %z given",
                                out.len, text_cap);
    }
    *count = t[list].size;
    return CTXC_OK;
}
