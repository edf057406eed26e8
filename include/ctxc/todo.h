/*
 * ctxc — reading an agent's todo list from JSON, for the
 * summariser request of the LLM strategies (ctxc_todo_t in strategy.h;
 * ctxc_session_set_todos()).
 *
 * Accepted shapes: an array of todo objects, or an object whose "todos"
 * member is one (the input of the TodoWrite-style tools agents use):
 *   [{"content": "write the parser", "status": "in_progress"}, ...]
 *   {"todos": [{"content": "...", "status": "pending", "activeForm": "..."}]}
 * "status" is "pending", "in_progress" (also "in-progress") or "completed";
 * other members ("activeForm", "id", "priority", ...) are ignored.
 */
#ifndef CTXC_TODO_H
#define CTXC_TODO_H

#include <stddef.h>

#include "ctxc/status.h"
#include "ctxc/strategy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Parses json[0..len) into todos[0..cap): *count = the number of todos.
 * Each content string is decoded (escapes resolved), NUL-terminated and
 * stored in text[0..text_cap); todos[i].content points into it.
 * Errors: CTXC_E_PARSE / CTXC_E_UTF8 / CTXC_E_TOO_DEEP (not JSON, or not
 * one of the shapes above: the message names the todo and the member),
 * CTXC_E_NO_SPACE (more todos than cap, or the texts do not fit text_cap;
 * err->needed = what is missing), CTXC_E_INVALID_ARG (NULL arguments).
 * On error *count is 0. Stack: a token array of CTXC_TODO_MAX_TOKENS
 * tokens on the stack (20 bytes each on 32-bit targets: 1920 bytes), so
 * this is a convenience for hosts and for devices that receive the list as
 * JSON; firmware that has the todos in hand fills ctxc_todo_t directly. */
ctxc_status_t ctxc_todos_parse(const char *json, size_t len, ctxc_todo_t *todos,
                               size_t cap, size_t *count, char *text,
                               size_t text_cap, ctxc_error_t *err);

/* Tokens of one parse: 5 per todo with two members (7 with activeForm),
 * plus 1-3 for the list; a list with more is CTXC_E_NO_SPACE. */
#ifndef CTXC_TODO_MAX_TOKENS
#define CTXC_TODO_MAX_TOKENS 96u
#endif

#ifdef __cplusplus
}
#endif

#endif /* CTXC_TODO_H */
