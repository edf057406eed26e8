/*
 * ctxc — the tool-role table of the density step and of high-density's
 * summaries: built-in vocabularies (rows compiled in per
 * CTXC_CFG_TOOLS_<VOCAB>), user tools, the paths and commands of a call.
 * The vocabularies and the schemas their rows follow: tool_roles.h.
 */
#include "tool_roles.h"

#include <string.h>

#include "ctxc/ctxc_config_defaults.h"
#include "error.h"
#include "json.h"
#include "sink.h"

/* Vocabulary bits (ctxc_density_config_t.vocabularies_off). */
#define V_SPEC 0u
#define V_CLAUDE_CODE 1u
#define V_OPENHANDS 2u
#define V_SWE_AGENT 3u
#define V_CODEX 4u
#define V_PI 5u
#define V_CLINE 6u
#define V_COUNT 7u

/* Discriminators (parameter `command`). */
#define D_NONE 0u
#define D_VIEW 1u /* "view" */
#define D_EDIT 2u /* "create", "str_replace", "insert", "undo_edit" */

/* ---- the table --------------------------------------------------------------
 * X(vocabulary, name, role, path location, command location, discriminator)
 */
#if CTXC_CFG_TOOLS_SPEC
#define ROWS_SPEC(X)                                                           \
    X(SPEC, "read_file", READ, SPEC, NONE, NONE)                               \
    X(SPEC, "read_line_range", READ, SPEC, NONE, NONE)                         \
    X(SPEC, "read_many_files", READ_MANY, PATHS, NONE, NONE)                   \
    X(SPEC, "ast_read_file", READ, SPEC, NONE, NONE)                           \
    X(SPEC, "write_file", WRITE, SPEC, NONE, NONE)                             \
    X(SPEC, "ast_edit", WRITE, SPEC, NONE, NONE)                               \
    X(SPEC, "replace", WRITE, SPEC, NONE, NONE)                                \
    X(SPEC, "insert_at_line", WRITE, SPEC, NONE, NONE)                         \
    X(SPEC, "delete_line_range", WRITE, SPEC, NONE, NONE)                      \
    X(SPEC, "run_shell_command", SHELL, NONE, COMMAND, NONE)                   \
    X(SPEC, "glob", SEARCH, NONE, NONE, NONE)                                  \
    X(SPEC, "search_file_content", SEARCH, NONE, NONE, NONE)
#else
#define ROWS_SPEC(X)
#endif
#if CTXC_CFG_TOOLS_CLAUDE_CODE
#define ROWS_CLAUDE_CODE(X)                                                    \
    X(CLAUDE_CODE, "Read", READ, FILE, NONE, NONE)                             \
    X(CLAUDE_CODE, "Write", WRITE, FILE, NONE, NONE)                           \
    X(CLAUDE_CODE, "Edit", WRITE, FILE, NONE, NONE)                            \
    X(CLAUDE_CODE, "MultiEdit", WRITE, FILE, NONE, NONE)                       \
    X(CLAUDE_CODE, "NotebookEdit", WRITE, NOTEBOOK, NONE, NONE)                \
    X(CLAUDE_CODE, "Bash", SHELL, NONE, COMMAND, NONE)                         \
    X(CLAUDE_CODE, "Glob", SEARCH, NONE, NONE, NONE)                           \
    X(CLAUDE_CODE, "Grep", SEARCH, NONE, NONE, NONE)
#else
#define ROWS_CLAUDE_CODE(X)
#endif
#if CTXC_CFG_TOOLS_OPENHANDS
#define ROWS_OPENHANDS(X)                                                      \
    X(OPENHANDS, "str_replace_editor", READ, PATH, NONE, VIEW)                 \
    X(OPENHANDS, "str_replace_editor", WRITE, PATH, NONE, EDIT)                \
    X(OPENHANDS, "execute_bash", SHELL, NONE, COMMAND, NONE)
#else
#define ROWS_OPENHANDS(X)
#endif
#if CTXC_CFG_TOOLS_SWE_AGENT
#define ROWS_SWE_AGENT(X)                                                      \
    X(SWE_AGENT, "str_replace_editor", READ, PATH, NONE, VIEW)                 \
    X(SWE_AGENT, "str_replace_editor", WRITE, PATH, NONE, EDIT)                \
    X(SWE_AGENT, "bash", SHELL, NONE, COMMAND, NONE)
#else
#define ROWS_SWE_AGENT(X)
#endif
#if CTXC_CFG_TOOLS_CODEX
#define ROWS_CODEX(X)                                                          \
    X(CODEX, "apply_patch", WRITE, PATCH, NONE, NONE)                          \
    X(CODEX, "shell", SHELL, NONE, COMMAND, NONE)
#else
#define ROWS_CODEX(X)
#endif
#if CTXC_CFG_TOOLS_PI
#define ROWS_PI(X)                                                             \
    X(PI, "read", READ, PATH, NONE, NONE)                                      \
    X(PI, "write", WRITE, PATH, NONE, NONE)                                    \
    X(PI, "edit", WRITE, PATH, NONE, NONE)                                     \
    X(PI, "bash", SHELL, NONE, COMMAND, NONE)
#else
#define ROWS_PI(X)
#endif
#if CTXC_CFG_TOOLS_CLINE
#define ROWS_CLINE(X)                                                          \
    X(CLINE, "read_file", READ, PATH, NONE, NONE)                              \
    X(CLINE, "write_to_file", WRITE, PATH, NONE, NONE)                         \
    X(CLINE, "replace_in_file", WRITE, PATH, NONE, NONE)                       \
    X(CLINE, "execute_command", SHELL, NONE, COMMAND, NONE)
#else
#define ROWS_CLINE(X)
#endif

#define CTXC__TOOL_ROWS(X)                                                     \
    ROWS_SPEC(X)                                                               \
    ROWS_CLAUDE_CODE(X)                                                        \
    ROWS_OPENHANDS(X)                                                          \
    ROWS_SWE_AGENT(X)                                                          \
    ROWS_CODEX(X)                                                              \
    ROWS_PI(X)                                                                 \
    ROWS_CLINE(X)

/* A row: its name and, packed in three bytes (a row takes 8 bytes on
 * 32-bit targets instead of 12), role, path location and vocabulary bit |
 * discriminator << 3 | command location << 5. */
typedef struct {
    const char *name;
    uint8_t role;
    uint8_t at;
    uint8_t vdc;
} row_t;

#define VDC_VOCAB(x) ((x)&7u)
#define VDC_DISC(x) (((x) >> 3) & 3u)
#define VDC_CMD(x) ((x) >> 5)
_Static_assert(V_COUNT <= 8u && D_EDIT <= 3u && CTXC__CMD_COMMAND <= 7u,
               "vocabulary, discriminator and command fit one byte");

#define ROW_(v, name, role, at, cmd, disc)                                     \
    {name, CTXC__ROLE_##role, CTXC__AT_##at,                                   \
     (uint8_t)(V_##v | D_##disc << 3 | CTXC__CMD_##cmd << 5)},
/* an empty table still has one (unmatchable) row */
static const row_t ROWS[] = {CTXC__TOOL_ROWS(ROW_){"", 0, 0, 0}};
#undef ROW_
#define NROWS (sizeof ROWS / sizeof ROWS[0] - 1u)

/* The rows' name lengths on their own: a lookup finds the rows of a
 * length with memchr instead of visiting every row. */
#define LEN_(v, name, ...) (uint8_t)(sizeof name - 1u),
static const uint8_t LENS[] = {CTXC__TOOL_ROWS(LEN_) 0};
#undef LEN_

/* Vocabulary names, by bit, and whether each is compiled in. */
static const char *const VOCAB_NAMES[V_COUNT] = {
    "spec", "claude-code", "openhands", "swe-agent", "codex", "pi", "cline"};
#define IN_(v) ((uint32_t)(CTXC_CFG_TOOLS_##v ? 1u : 0u) << V_##v)
#define VOCABS_BUILT                                                           \
    (IN_(SPEC) | IN_(CLAUDE_CODE) | IN_(OPENHANDS) | IN_(SWE_AGENT) |          \
     IN_(CODEX) | IN_(PI) | IN_(CLINE))

/* ---- user tools ------------------------------------------------------------
 * References: USER_READ | i, USER_WRITE | i (entry i of the list). */
#define USER_READ 0x4000u
#define USER_WRITE 0x8000u
#define USER_INDEX 0x3FFFu

/* The next entry of a user list from *at: its name and key (key_len 0: no
 * key); false at the end. */
static bool user_next(const char *list, size_t *at, ctxc_str_t *name,
                      ctxc_str_t *key) {
    const char *p = list + *at;
    if (*p == '\0') {
        return false;
    }
    const char *end = strchr(p, ',');
    size_t n = end != NULL ? (size_t)(end - p) : strlen(p);
    const char *colon = memchr(p, ':', n);
    name->ptr = p;
    name->len = colon != NULL ? (size_t)(colon - p) : n;
    key->ptr = colon != NULL ? colon + 1 : NULL;
    key->len = colon != NULL ? n - name->len - 1u : 0;
    *at += n + (end != NULL ? 1u : 0u);
    return true;
}

static void user_tool(const char *list, size_t index, bool write,
                      ctxc__tool_t *out) {
    size_t at = 0;
    ctxc_str_t name, key;
    for (size_t i = 0; user_next(list, &at, &name, &key); i++) {
        if (i == index) {
            out->role = write ? CTXC__ROLE_WRITE : CTXC__ROLE_READ;
            if (key.len > 0) {
                out->at = CTXC__AT_USER;
                out->key = key.ptr;
                out->key_len = key.len;
            } else {
                out->at = CTXC__AT_SPEC;
            }
            return;
        }
    }
}

static ctxc__tool_ref_t user_find(const char *list, ctxc_str_t name,
                                  unsigned kind) {
    size_t at = 0;
    ctxc_str_t n, key;
    for (size_t i = 0;
         list != NULL && i <= USER_INDEX && user_next(list, &at, &n, &key);
         i++) {
        if (n.len == name.len && memcmp(n.ptr, name.ptr, n.len) == 0) {
            return (ctxc__tool_ref_t)(kind | i);
        }
    }
    return 0;
}

/* ---- resolving ------------------------------------------------------------
 */

static bool value_is(ctxc_str_t v, const char *quoted, size_t n) {
    return v.len == n && memcmp(v.ptr, quoted, n) == 0;
}

static bool disc_ok(unsigned disc, ctxc_str_t params) {
    ctxc_str_t v;
    if (!ctxc__json_find_key(params.ptr, params.len, "command", &v)) {
        return false;
    }
    if (disc == D_VIEW) {
        return value_is(v, "\"view\"", 6);
    }
    return value_is(v, "\"create\"", 8) || value_is(v, "\"str_replace\"", 13) ||
           value_is(v, "\"insert\"", 8) || value_is(v, "\"undo_edit\"", 11);
}

static void row_tool(size_t i, ctxc__tool_t *out) {
    out->role = ROWS[i].role;
    out->at = ROWS[i].at;
    out->cmd = VDC_CMD(ROWS[i].vdc);
}

ctxc__tool_ref_t ctxc__tool_resolve(const ctxc_density_config_t *cfg,
                                    ctxc_str_t name, ctxc_str_t params,
                                    ctxc__tool_t *out) {
    memset(out, 0, sizeof *out);
    if (name.ptr == NULL || name.len == 0) {
        return 0;
    }
    ctxc__tool_ref_t ref = 0;
    if (cfg->read_tools != NULL) {
        ref = user_find(cfg->read_tools, name, USER_READ);
    }
    if (ref == 0 && cfg->write_tools != NULL) {
        ref = user_find(cfg->write_tools, name, USER_WRITE);
    }
    if (ref != 0) {
        ctxc__tool_get(cfg, ref, out);
        return ref;
    }
    if (name.len > UINT8_MAX) {
        return 0;
    }
    uint32_t off = cfg->vocabularies_off;
    const uint8_t *at = LENS;
    const uint8_t *end = LENS + NROWS;
    while (at < end &&
           (at = memchr(at, (int)name.len, (size_t)(end - at))) != NULL) {
        size_t i = (size_t)(at - LENS);
        const row_t *r = &ROWS[i];
        at++;
        if (r->name[0] != name.ptr[0] ||
            ((off >> VDC_VOCAB(r->vdc)) & 1u) != 0 ||
            memcmp(r->name, name.ptr, name.len) != 0 ||
            (VDC_DISC(r->vdc) != D_NONE &&
             !disc_ok(VDC_DISC(r->vdc), params))) {
            continue;
        }
        row_tool(i, out);
        return (ctxc__tool_ref_t)(i + 1u);
    }
    return 0;
}

void ctxc__tool_get(const ctxc_density_config_t *cfg, ctxc__tool_ref_t ref,
                    ctxc__tool_t *out) {
    memset(out, 0, sizeof *out);
    if ((ref & USER_READ) != 0 && cfg->read_tools != NULL) {
        user_tool(cfg->read_tools, ref & USER_INDEX, false, out);
    } else if ((ref & USER_WRITE) != 0 && cfg->write_tools != NULL) {
        user_tool(cfg->write_tools, ref & USER_INDEX, true, out);
    } else if (ref > 0 && ref <= NROWS) {
        row_tool(ref - 1u, out);
    }
}

/* ---- paths and commands -------------------------------------------------- */

static const char *const KEYS_SPEC[] = {"file_path", "absolute_path", "path"};
static const char *const KEYS_PATH[] = {"path"};
static const char *const KEYS_FILE[] = {"file_path"};
static const char *const KEYS_NOTEBOOK[] = {"notebook_path"};

/* The patch text of an apply_patch call: its `input`, or the parameter
 * value itself when it is a string. The body of the JSON string. */
static bool patch_text(ctxc_str_t params, ctxc_str_t *body) {
    ctxc_str_t v = params;
    if (!(params.len >= 2 && params.ptr[0] == '"') &&
        !ctxc__json_find_key(params.ptr, params.len, "input", &v)) {
        return false;
    }
    if (v.len < 2 || v.ptr[0] != '"') {
        return false;
    }
    body->ptr = v.ptr + 1;
    body->len = v.len - 2;
    return true;
}

static const char *const PATCH_HEADERS[] = {
    "*** Add File: ", "*** Update File: ", "*** Delete File: ",
    "*** Move to: "};

/* The next file header path in the escaped patch body from *pos (a line
 * start): its span [*s, *e); *pos moves past it. */
static bool patch_next(ctxc_str_t body, size_t *pos, size_t *s, size_t *e) {
    const char *t = body.ptr;
    size_t n = body.len;
    size_t i = *pos;
    while (i < n) {
        /* i is at a line start */
        for (size_t h = 0; h < sizeof PATCH_HEADERS / sizeof PATCH_HEADERS[0];
             h++) {
            size_t hl = strlen(PATCH_HEADERS[h]);
            if (n - i > hl && memcmp(t + i, PATCH_HEADERS[h], hl) == 0) {
                size_t j = i + hl;
                size_t start = j;
                while (j < n) {
                    if (t[j] == '\\' && j + 1 < n &&
                        (t[j + 1] == 'n' || t[j + 1] == 'r')) {
                        break;
                    }
                    j += t[j] == '\\' ? 2u : 1u;
                }
                if (j > n) {
                    j = n;
                }
                *s = start;
                *e = j;
                *pos = j;
                return true;
            }
        }
        /* to the next line start */
        while (i < n) {
            if (t[i] == '\\' && i + 1 < n) {
                char c = t[i + 1];
                i += 2;
                if (c == 'n') {
                    break;
                }
                continue;
            }
            i++;
        }
    }
    *pos = n;
    return false;
}

bool ctxc__tool_next_path(const ctxc__tool_t *t, ctxc_str_t params, size_t *pos,
                          ctxc_str_t *body) {
    if (t->at == CTXC__AT_PATCH) {
        ctxc_str_t text;
        size_t s, e;
        if (!patch_text(params, &text) || !patch_next(text, pos, &s, &e)) {
            return false;
        }
        body->ptr = text.ptr + s;
        body->len = e - s;
        return true;
    }
    if (*pos != 0) {
        return false;
    }
    *pos = 1;
    ctxc_str_t v;
    size_t which;
    switch (t->at) {
    case CTXC__AT_SPEC:
        if (!ctxc__json_find_first_key(params, KEYS_SPEC, 3, &v, &which)) {
            return false;
        }
        break;
    case CTXC__AT_PATH:
    case CTXC__AT_FILE:
    case CTXC__AT_NOTEBOOK: {
        const char *const *k = t->at == CTXC__AT_PATH   ? KEYS_PATH
                               : t->at == CTXC__AT_FILE ? KEYS_FILE
                                                        : KEYS_NOTEBOOK;
        if (!ctxc__json_find_first_key(params, k, 1, &v, &which)) {
            return false;
        }
        break;
    }
    case CTXC__AT_USER: {
        char key[64];
        if (t->key_len == 0 || t->key_len >= sizeof key) {
            return false;
        }
        memcpy(key, t->key, t->key_len);
        key[t->key_len] = '\0';
        if (!ctxc__json_find_key(params.ptr, params.len, key, &v)) {
            return false;
        }
        break;
    }
    default:
        return false;
    }
    if (v.len < 2 || v.ptr[0] != '"') {
        return false;
    }
    body->ptr = v.ptr + 1;
    body->len = v.len - 2;
    return true;
}

bool ctxc__tool_command(const ctxc__tool_t *t, ctxc_str_t params, char *buf,
                        size_t cap, size_t string_max, size_t *len) {
    ctxc_str_t v;
    if (t->cmd != CTXC__CMD_COMMAND ||
        !ctxc__json_find_key(params.ptr, params.len, "command", &v)) {
        return false;
    }
    ctxc__sink_t s = {buf, cap, 0};
    if (v.len >= 2 && v.ptr[0] == '"') { /* a string */
        if (ctxc__write_decoded(&s, v.ptr + 1, v.len - 2, CTXC__SRC_JSTR,
                                NULL) != CTXC_OK ||
            s.len > string_max) {
            return false;
        }
        *len = s.len;
        return *len > 0;
    }
    if (v.len < 3 || v.ptr[0] != '[') {
        return false;
    }
    /* an argv array: its strings joined by spaces */
    size_t pos = 1;
    while (pos < v.len && v.ptr[pos] != ']') {
        size_t end = ctxc__json_skip_value(v.ptr, v.len, pos);
        if (end <= pos || end > v.len) {
            break;
        }
        if (v.ptr[pos] == '"') {
            if (s.len > 0) {
                ctxc__putc(&s, ' ');
            }
            if (ctxc__write_decoded(&s, v.ptr + pos + 1, end - pos - 2,
                                    CTXC__SRC_JSTR, NULL) != CTXC_OK) {
                return false;
            }
        }
        pos = end < v.len && v.ptr[end] == ',' ? end + 1 : end;
    }
    *len = s.len;
    return *len > 0;
}

/* ---- settings ------------------------------------------------------------ */

/* The known vocabulary names, for the error of an unknown one. */
#define KNOWN_(v, text) CTXC_CFG_TOOLS_##v ? text : ""
static const char *const KNOWN[V_COUNT] = {
    KNOWN_(SPEC, ", spec"),           KNOWN_(CLAUDE_CODE, ", claude-code"),
    KNOWN_(OPENHANDS, ", openhands"), KNOWN_(SWE_AGENT, ", swe-agent"),
    KNOWN_(CODEX, ", codex"),         KNOWN_(PI, ", pi"),
    KNOWN_(CLINE, ", cline")};
#undef KNOWN_

ctxc_status_t ctxc__tool_vocabs_parse(const char *p, size_t n, uint32_t *off,
                                      ctxc_error_t *err) {
    uint32_t on = 0;
    bool none = false;
    size_t i = 0;
    while (i <= n) {
        const char *comma = i < n ? memchr(p + i, ',', n - i) : NULL;
        size_t e = comma != NULL ? (size_t)(comma - p) : n;
        size_t len = e - i;
        bool found = false;
        if (len == 4 && memcmp(p + i, "none", 4) == 0) {
            none = true;
            found = true;
        }
        for (unsigned v = 0; !found && v < V_COUNT; v++) {
            if (((VOCABS_BUILT >> v) & 1u) != 0 &&
                strlen(VOCAB_NAMES[v]) == len &&
                memcmp(VOCAB_NAMES[v], p + i, len) == 0) {
                on |= 1u << v;
                found = true;
            }
        }
        if (!found) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "compression.density.vocabularies: unknown "
                              "vocabulary %q (known: none%s%s%s%s%s%s%s)",
                              p + i, len, KNOWN[0], KNOWN[1], KNOWN[2],
                              KNOWN[3], KNOWN[4], KNOWN[5], KNOWN[6]);
        }
        i = e + 1;
    }
    if (none && on != 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "compression.density.vocabularies: \"none\" "
                          "cannot be listed with other vocabularies");
    }
    *off = VOCABS_BUILT & ~on;
    return CTXC_OK;
}

static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
           (c >= '0' && c <= '9') || c == '_' || c == '.' || c == '-';
}

static bool name_ok(const char *p, size_t n, size_t max) {
    if (n == 0 || n > max) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!name_char(p[i])) {
            return false;
        }
    }
    return true;
}

ctxc_status_t ctxc__tool_user_check(const char *key, const char *p, size_t n,
                                    ctxc_error_t *err) {
    size_t count = 0;
    size_t i = 0;
    while (i <= n) {
        const char *comma = i < n ? memchr(p + i, ',', n - i) : NULL;
        size_t e = comma != NULL ? (size_t)(comma - p) : n;
        const char *colon = memchr(p + i, ':', e - i);
        size_t nlen = colon != NULL ? (size_t)(colon - (p + i)) : e - i;
        if (!name_ok(p + i, nlen, 255) ||
            (colon != NULL && !name_ok(colon + 1, e - nlen - i - 1, 63))) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: entry %q is not `name` or `name:pathKey` "
                              "(A-Z a-z 0-9 _ . -, a key of at most 63 "
                              "characters; entries separated by commas)",
                              key, p + i, e - i);
        }
        if (++count > CTXC_CFG_DENSITY_USER_TOOLS_MAX) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: more than %u tools "
                              "(CTXC_CFG_DENSITY_USER_TOOLS_MAX)",
                              key, (unsigned)CTXC_CFG_DENSITY_USER_TOOLS_MAX);
        }
        i = e + 1;
    }
    return CTXC_OK;
}
