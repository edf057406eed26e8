/*
 * ctxc — the prompt store (see include/ctxc/prompt.h).
 */
#include <string.h>

#include "ctxc/prompt.h"
#include "error.h"
#include "json.h"
#include "sink.h"

const ctxc_prompt_builtin_t *ctxc_prompt_builtin(const char *id) {
    if (id == NULL) {
        return NULL;
    }
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        if (strcmp(ctxc_prompt_builtins[i].id, id) == 0) {
            return &ctxc_prompt_builtins[i];
        }
    }
    return NULL;
}

uint64_t ctxc_prompt_hash(const void *data, size_t len) {
    const uint8_t *p = data;
    uint64_t h = 0xcbf29ce484222325u;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3u;
    }
    return h;
}

static const char hex_digits[] = "0123456789abcdef";
#define HASH_HEX 16u

static void hash_hex(uint64_t h, char out[HASH_HEX]) {
    for (unsigned i = HASH_HEX; i-- > 0; h >>= 4) {
        out[i] = hex_digits[h & 0xFu];
    }
}

static bool safe_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
}

size_t ctxc_prompt_component(const char *name,
                             char out[CTXC_PROMPT_COMPONENT_MAX + 1]) {
    out[0] = '\0';
    if (name == NULL || name[0] == '\0') {
        return 0;
    }
    size_t in_len = strlen(name);
    const uint8_t *s = (const uint8_t *)name;
    size_t n = 0;
    bool only_dots = true;
    bool cut = false;
    for (size_t i = 0; i < in_len;) {
        char c = (char)s[i];
        size_t step = 1;
        if (c >= 'A' && c <= 'Z') {
            c = (char)(c - 'A' + 'a');
        } else if (s[i] >= 0x80u) {
            uint32_t cp;
            size_t k = ctxc__utf8_decode(s + i, in_len - i, &cp);
            step = k == 0 ? 1 : k; /* an invalid byte is one character */
            c = '-';
        } else if (!safe_char(c)) {
            c = '-';
        }
        i += step;
        if (n == CTXC_PROMPT_COMPONENT_MAX) {
            cut = true;
            break;
        }
        only_dots = only_dots && c == '.';
        out[n++] = c;
    }
    if (cut) {
        char hex[HASH_HEX]; /* the low 32 bits of the hash: its last 8 */
        hash_hex(ctxc_prompt_hash(name, in_len), hex);
        n = CTXC_PROMPT_COMPONENT_MAX - 9u;
        out[n++] = '~';
        memcpy(out + n, hex + 8, 8);
        n += 8;
        only_dots = false;
    }
    if (only_dots) {
        for (size_t i = 0; i < n; i++) {
            out[i] = '-';
        }
    }
    out[n] = '\0';
    return n;
}

const char *ctxc_prompt_level_name(ctxc_prompt_level_t level) {
    switch (level) {
    case CTXC_PROMPT_LEVEL_MODEL:
        return "model";
    case CTXC_PROMPT_LEVEL_PROVIDER:
        return "provider";
    case CTXC_PROMPT_LEVEL_BASE:
        return "base";
    case CTXC_PROMPT_LEVEL_BUILTIN:
        return "built-in";
    default:
        return "unknown";
    }
}

const char *ctxc_prompt_action_name(ctxc_prompt_action_t action) {
    switch (action) {
    case CTXC_PROMPT_INSTALLED:
        return "installed";
    case CTXC_PROMPT_UPDATED:
        return "updated";
    case CTXC_PROMPT_UP_TO_DATE:
        return "up to date";
    case CTXC_PROMPT_KEPT:
        return "kept (edited by you)";
    case CTXC_PROMPT_NOT_BUILT_IN:
        return "not in this build";
    default:
        return "unknown";
    }
}

ctxc_status_t ctxc_prompt_id_check(const char *id, ctxc_error_t *err) {
    if (id == NULL || id[0] == '\0') {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "prompt id is empty");
    }
    size_t n = strlen(id);
    const char *slash = strchr(id, '/');
    bool ok = slash != NULL && slash != id && slash[1] != '\0' &&
              strchr(slash + 1, '/') == NULL && id[0] != '.' &&
              slash[1] != '.' && n + 3u < CTXC_CFG_PATH_MAX;
    for (size_t i = 0; ok && i < n; i++) {
        ok = id[i] == '/' || safe_char(id[i]);
    }
    if (!ok) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "prompt id %q is not <category>/<name> of "
                          "[a-z0-9._-]",
                          id, n);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_prompt_path(const char *provider, const char *model,
                               const char *id, ctxc_prompt_level_t level,
                               char *out, size_t cap, ctxc_error_t *err) {
    ctxc_status_t st = ctxc_prompt_id_check(id, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (level > CTXC_PROMPT_LEVEL_BASE) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "prompt level %u has no path", (unsigned)level);
    }
    char prov[CTXC_PROMPT_COMPONENT_MAX + 1];
    char mod[CTXC_PROMPT_COMPONENT_MAX + 1];
    size_t np = ctxc_prompt_component(provider, prov);
    size_t nm = ctxc_prompt_component(model, mod);
    if ((level <= CTXC_PROMPT_LEVEL_PROVIDER && np == 0) ||
        (level == CTXC_PROMPT_LEVEL_MODEL && nm == 0)) {
        return ctxc__fail(
            err, CTXC_E_NOT_FOUND, "the %s level is skipped: no %s name",
            ctxc_prompt_level_name(level), np == 0 ? "provider" : "model");
    }
    ctxc__sink_t s = {out, cap, 0};
    if (level <= CTXC_PROMPT_LEVEL_PROVIDER) {
        ctxc__put(&s, "providers/", 10);
        ctxc__put(&s, prov, np);
        ctxc__putc(&s, '/');
    }
    if (level == CTXC_PROMPT_LEVEL_MODEL) {
        ctxc__put(&s, "models/", 7);
        ctxc__put(&s, mod, nm);
        ctxc__putc(&s, '/');
    }
    ctxc__put(&s, id, strlen(id));
    ctxc__put(&s, ".md", 4); /* with the NUL */
    if (s.len > cap) {
        return ctxc__fail_space(err, s.len - cap,
                                "prompt path needs %z bytes, the buffer has %z",
                                s.len, cap);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_prompt_resolve(const ctxc_fs_t *fs, const char *provider,
                                  const char *model, const char *id, char *buf,
                                  size_t cap, ctxc_prompt_t *out,
                                  ctxc_error_t *err) {
    if (out == NULL || (buf == NULL && cap != 0)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "resolve: NULL argument");
    }
    memset(out, 0, sizeof *out);
    ctxc_status_t st = ctxc_prompt_id_check(id, err);
    if (st != CTXC_OK) {
        return st;
    }
    for (unsigned lv = 0; fs != NULL && fs->ops != NULL &&
                          lv <= (unsigned)CTXC_PROMPT_LEVEL_BASE;
         lv++) {
        ctxc_error_t skip;
        st = ctxc_prompt_path(provider, model, id, (ctxc_prompt_level_t)lv,
                              out->path, sizeof out->path, &skip);
        if (st == CTXC_E_NOT_FOUND) {
            continue; /* level skipped: empty name */
        }
        if (st != CTXC_OK) {
            if (err != NULL) {
                *err = skip;
            }
            return st;
        }
        size_t len = 0;
        /* a missing file is the next level's turn, not an error: err is
         * filled only when the call fails */
        st = ctxc_fs_read(fs, out->path, buf, cap, &len, &skip);
        if (st == CTXC_E_NOT_FOUND) {
            continue;
        }
        if (st != CTXC_OK) {
            if (err != NULL) {
                *err = skip;
            }
            ctxc__err_prefix(err, "prompt %s", out->path);
            return st;
        }
        out->text = buf;
        out->len = len;
        out->level = (ctxc_prompt_level_t)lv;
        return CTXC_OK;
    }
    const ctxc_prompt_builtin_t *b = ctxc_prompt_builtin(id);
    size_t n = strlen(id);
    memcpy(out->path, id, n);
    memcpy(out->path + n, ".md", 4);
    if (b == NULL || b->text == NULL) {
        return ctxc__fail(
            err, CTXC_E_PROMPT_NOT_FOUND,
            "prompt %s not found: no override file and %s", out->path,
            b == NULL ? "no such built-in prompt" : "this build leaves it out");
    }
    out->text = b->text;
    out->len = b->len;
    out->level = CTXC_PROMPT_LEVEL_BUILTIN;
    return CTXC_OK;
}

/* ---- installer ------------------------------------------------------------
 */

#define MANIFEST_HEADER                                                        \
    "# ctxc prompt manifest: what the installer wrote (FNV-1a 64 of the "      \
    "content, path).\n# Written by ctxc; do not edit. Delete it to start "     \
    "over.\n"
/* The manifest text, read in place and appended to through the sink. */
typedef ctxc__sink_t manifest_t;

static int hex_val(char c) {
    if (c >= '0' && c <= '9') {
        return c - '0';
    }
    if (c >= 'a' && c <= 'f') {
        return c - 'a' + 10;
    }
    return -1;
}

/* Validates the manifest: comment lines, or "<16 hex> <path>". */
static ctxc_status_t manifest_check(const manifest_t *m, ctxc_error_t *err) {
    size_t pos = 0;
    uint32_t line = 0;
    while (pos < m->len) {
        line++;
        const char *l = m->buf + pos;
        const char *nl = memchr(l, '\n', m->len - pos);
        size_t n = nl != NULL ? (size_t)(nl - l) : m->len - pos;
        pos += n + (nl != NULL);
        if (n == 0 || l[0] == '#') {
            continue;
        }
        bool ok = n > HASH_HEX + 1u && l[HASH_HEX] == ' ' &&
                  n - HASH_HEX - 1u < CTXC_CFG_PATH_MAX;
        for (size_t i = 0; ok && i < HASH_HEX; i++) {
            ok = hex_val(l[i]) >= 0;
        }
        if (ok) {
            char path[CTXC_CFG_PATH_MAX];
            memcpy(path, l + HASH_HEX + 1u, n - HASH_HEX - 1u);
            path[n - HASH_HEX - 1u] = '\0';
            ok = ctxc_fs_path_check(path, NULL) == CTXC_OK &&
                 memchr(path, '\0', n - HASH_HEX - 1u) == NULL;
        }
        if (!ok) {
            ctxc_status_t st =
                ctxc__fail(err, CTXC_E_PARSE,
                           "%s:%u: expected '<16 hex digits> <path>', got %q; "
                           "fix or delete the file",
                           CTXC_PROMPT_MANIFEST, line, l, n);
            if (err != NULL) {
                err->line = line;
            }
            return st;
        }
    }
    return CTXC_OK;
}

/* The hash field of path's line, or NULL. */
static char *manifest_find(const manifest_t *m, const char *path) {
    size_t plen = strlen(path);
    size_t pos = 0;
    while (pos < m->len) {
        char *l = m->buf + pos;
        char *nl = memchr(l, '\n', m->len - pos);
        size_t n = nl != NULL ? (size_t)(nl - l) : m->len - pos;
        pos += n + (nl != NULL);
        if (n == HASH_HEX + 1u + plen && l[0] != '#' &&
            memcmp(l + HASH_HEX + 1u, path, plen) == 0) {
            return l;
        }
    }
    return NULL;
}

/* Records hash h for path: overwrites the hash of its line in place, or
 * appends a line. */
static ctxc_status_t manifest_set(manifest_t *m, const char *path, uint64_t h,
                                  ctxc_error_t *err) {
    char *l = manifest_find(m, path);
    if (l != NULL) {
        hash_hex(h, l);
        return CTXC_OK;
    }
    size_t plen = strlen(path);
    bool need_nl = m->len > 0 && m->buf[m->len - 1] != '\n';
    size_t add = need_nl + HASH_HEX + 1u + plen + 1u;
    if (add > m->cap - m->len) {
        return ctxc__fail_space(err, add - (m->cap - m->len),
                                "the prompt manifest does not fit the "
                                "install scratch area");
    }
    if (need_nl) {
        ctxc__putc(m, '\n');
    }
    char hex[HASH_HEX];
    hash_hex(h, hex);
    ctxc__put(m, hex, HASH_HEX);
    ctxc__putc(m, ' ');
    ctxc__put(m, path, plen);
    ctxc__putc(m, '\n');
    return CTXC_OK;
}

static bool manifest_hash_is(const manifest_t *m, const char *path,
                             uint64_t h) {
    const char *l = manifest_find(m, path);
    if (l == NULL) {
        return false;
    }
    char want[HASH_HEX];
    hash_hex(h, want);
    return memcmp(l, want, HASH_HEX) == 0;
}

ctxc_status_t ctxc_prompts_install(const ctxc_fs_t *fs, char *scratch,
                                   size_t cap, ctxc_prompt_install_fn fn,
                                   void *user, ctxc_error_t *err) {
    if (scratch == NULL || cap < 2u) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "install: no scratch area");
    }
    if (fs == NULL || fs->ops == NULL || fs->ops->create == NULL) {
        return ctxc__fail(err, CTXC_E_READ_ONLY,
                          "cannot install prompts: the filesystem is "
                          "read-only");
    }
    manifest_t m = {.buf = scratch, .cap = cap / 2u, .len = 0};
    char *file = scratch + m.cap;
    size_t file_cap = cap - m.cap;

    ctxc_status_t st =
        ctxc_fs_read(fs, CTXC_PROMPT_MANIFEST, m.buf, m.cap, &m.len, err);
    if (st == CTXC_E_NOT_FOUND) {
        size_t h = sizeof MANIFEST_HEADER - 1u;
        if (h > m.cap) {
            return ctxc__fail_space(err, h - m.cap,
                                    "install scratch area too small");
        }
        memcpy(m.buf, MANIFEST_HEADER, h);
        m.len = h;
    } else if (st != CTXC_OK) {
        ctxc__err_prefix(err, "reading %s", CTXC_PROMPT_MANIFEST);
        return st;
    } else if ((st = manifest_check(&m, err)) != CTXC_OK) {
        return st;
    }

    bool manifest_dirty = st == CTXC_E_NOT_FOUND;
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        char path[CTXC_CFG_PATH_MAX];
        st = ctxc_prompt_path(NULL, NULL, b->id, CTXC_PROMPT_LEVEL_BASE, path,
                              sizeof path, err);
        if (st != CTXC_OK) {
            return st;
        }
        if (b->text == NULL) {
            if (fn != NULL) {
                fn(user, path, CTXC_PROMPT_NOT_BUILT_IN);
            }
            continue;
        }
        uint64_t hb = ctxc_prompt_hash(b->text, b->len);
        size_t len = 0;
        ctxc_prompt_action_t action;
        st = ctxc_fs_read(fs, path, file, file_cap, &len, err);
        if (st == CTXC_E_NOT_FOUND) {
            action = CTXC_PROMPT_INSTALLED;
        } else if (st == CTXC_OK && len == b->len &&
                   memcmp(file, b->text, len) == 0) {
            action = CTXC_PROMPT_UP_TO_DATE;
        } else if (st == CTXC_OK &&
                   manifest_hash_is(&m, path, ctxc_prompt_hash(file, len))) {
            action = CTXC_PROMPT_UPDATED;
        } else if (st == CTXC_OK) {
            action = CTXC_PROMPT_KEPT;
        } else {
            ctxc__err_prefix(err, "reading %s", path);
            return st;
        }
        if (action == CTXC_PROMPT_INSTALLED || action == CTXC_PROMPT_UPDATED) {
            st = ctxc_fs_write_atomic(fs, path, b->text, b->len, err);
            if (st != CTXC_OK) {
                return st;
            }
        }
        if (action != CTXC_PROMPT_KEPT && !manifest_hash_is(&m, path, hb)) {
            st = manifest_set(&m, path, hb, err);
            if (st != CTXC_OK) {
                return st;
            }
            manifest_dirty = true;
        }
        if (fn != NULL) {
            fn(user, path, action);
        }
    }
    if (!manifest_dirty) {
        return CTXC_OK;
    }
    return ctxc_fs_write_atomic(fs, CTXC_PROMPT_MANIFEST, m.buf, m.len, err);
}
