/*
 * ctxc host CLI — the settings store over the POSIX port, shared by
 * `ctxc compress` and `ctxc repl`.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"

/* ---- one bad value does not cost the whole file -------------------------
 * settings.json that the library refuses for its content (an unknown key, a
 * value of the wrong type or out of range, a repeated key) is read again
 * member by member: each member alone is given to the library (a store of
 * its own, through the port's filesystem with settings.json read from
 * memory), those it takes are loaded together, each one refused is named
 * with the library's reason. The file itself is never rewritten: a later
 * /settings set reads it again and refuses to overwrite it, as before. */

static ctxc_fs_ops_t set_ops;
static const ctxc_fs_ops_t *set_base;
static const char *set_text; /* settings.json as read, while set */
static size_t set_len;

static ctxc_status_t set_read(void *ctx, const char *path, char *buf,
                              size_t cap, size_t *len, ctxc_error_t *err) {
    if (set_text != NULL && strcmp(path, CTXC_SETTINGS_FILE) == 0) {
        if (set_len > cap) {
            return ctxc_error_set(err, CTXC_E_NO_SPACE, "%s: too large",
                                  path);
        }
        memcpy(buf, set_text, set_len);
        *len = set_len;
        return CTXC_OK;
    }
    return set_base->read(ctx, path, buf, cap, len, err);
}

/* The end of the JSON string starting at t[i] == '"' (past its closing
 * quote), or 0. */
static size_t str_end(const char *t, size_t n, size_t i) {
    for (i++; i < n; i++) {
        if (t[i] == '\\') {
            i++;
        } else if (t[i] == '"') {
            return i + 1;
        }
    }
    return 0;
}

static size_t skip_ws(const char *t, size_t n, size_t i) {
    while (i < n && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n' ||
                     t[i] == '\r')) {
        i++;
    }
    return i;
}

/* The end of the JSON value at t[i], or 0 (its inside is the library's to
 * check: only its extent is found here). */
static size_t value_end(const char *t, size_t n, size_t i) {
    if (i >= n) {
        return 0;
    }
    if (t[i] == '"') {
        return str_end(t, n, i);
    }
    if (t[i] == '{' || t[i] == '[') {
        size_t depth = 0;
        for (; i < n; i++) {
            if (t[i] == '"') {
                size_t e = str_end(t, n, i);
                if (e == 0) {
                    return 0;
                }
                i = e - 1;
            } else if (t[i] == '{' || t[i] == '[') {
                depth++;
            } else if ((t[i] == '}' || t[i] == ']') && --depth == 0) {
                return i + 1;
            }
        }
        return 0;
    }
    size_t s = i;
    while (i < n && t[i] != ',' && t[i] != '}' && t[i] != ' ' &&
           t[i] != '\t' && t[i] != '\n' && t[i] != '\r') {
        i++;
    }
    return i > s ? i : 0;
}

#define SET_MEMBERS_MAX 128u

static bool salvage(ctxc_settings_store_t *store, const ctxc_fs_t *fs,
                    const char *path, const char *who, bool warn) {
    static char text[65536];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return false;
    }
    size_t n = fread(text, 1, sizeof text, f);
    fclose(f);
    if (n == sizeof text) {
        return false;
    }
    /* the members of the one object: [key start, key end, member end) */
    size_t ks[SET_MEMBERS_MAX], ke[SET_MEMBERS_MAX], me[SET_MEMBERS_MAX];
    size_t count = 0;
    size_t i = skip_ws(text, n, 0);
    if (i >= n || text[i] != '{') {
        return false;
    }
    i = skip_ws(text, n, i + 1);
    if (i < n && text[i] == '}') {
        return false; /* empty: not what was refused */
    }
    for (;;) {
        if (i >= n || text[i] != '"' || count == SET_MEMBERS_MAX) {
            return false;
        }
        size_t k_end = str_end(text, n, i);
        if (k_end == 0) {
            return false;
        }
        size_t j = skip_ws(text, n, k_end);
        if (j >= n || text[j] != ':') {
            return false;
        }
        size_t v_end = value_end(text, n, skip_ws(text, n, j + 1));
        if (v_end == 0) {
            return false;
        }
        ks[count] = i;
        ke[count] = k_end;
        me[count] = v_end;
        count++;
        i = skip_ws(text, n, v_end);
        if (i < n && text[i] == ',') {
            i = skip_ws(text, n, i + 1);
            continue;
        }
        if (i < n && text[i] == '}' && skip_ws(text, n, i + 1) == n) {
            break;
        }
        return false;
    }
    /* each member alone, in a store of its own */
    static ctxc_settings_store_t one;
    static char kept[65536 + 4];
    static char alone[65536 + 4];
    size_t kl = 0;
    kept[kl++] = '{';
    size_t bad = 0;
    for (size_t m = 0; m < count; m++) {
        const char *key = text + ks[m] + 1;
        int key_len = (int)(ke[m] - ks[m] - 2);
        bool repeated = false;
        for (size_t o = 0; o < m && !repeated; o++) {
            repeated = ke[o] - ks[o] == ke[m] - ks[m] &&
                       memcmp(text + ks[o], text + ks[m], ke[m] - ks[m]) == 0;
        }
        ctxc_error_t err;
        memset(&err, 0, sizeof err);
        bool ok = false;
        if (!repeated) {
            size_t al = 0;
            alone[al++] = '{';
            memcpy(alone + al, text + ks[m], me[m] - ks[m]);
            al += me[m] - ks[m];
            alone[al++] = '}';
            set_text = alone;
            set_len = al;
            ctxc_settings_init(&one, fs);
            ok = ctxc_settings_load(&one, &err) == CTXC_OK;
            set_text = NULL;
        }
        if (!ok) {
            bad++;
            if (warn) {
                fprintf(stderr,
                        "%s: warning: %s: '%.*s' ignored (the rest of the "
                        "file is used; fix or remove it): %s\n",
                        who, path, key_len, key,
                        repeated ? "the key is given twice (the first is used)"
                                 : ctxc_error_message(&err));
            }
            continue;
        }
        if (kl > 1) {
            kept[kl++] = ',';
        }
        memcpy(kept + kl, text + ks[m], me[m] - ks[m]);
        kl += me[m] - ks[m];
    }
    kept[kl++] = '}';
    if (bad == 0) {
        return false; /* refused as a whole: not a member's fault */
    }
    set_text = kept;
    set_len = kl;
    ctxc_error_t err;
    ctxc_status_t st = ctxc_settings_load(store, &err);
    set_text = NULL;
    return st == CTXC_OK;
}

/* settings.json into the persistent layer, what can be taken of it. */
static void settings_load(ctxc_settings_store_t *store,
                          const ctxc_posix_fs_t *pfs, const char *who,
                          bool warn) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_settings_load(store, &err);
    char path[sizeof pfs->root + sizeof CTXC_SETTINGS_FILE + 1];
    snprintf(path, sizeof path, "%s/%s", pfs->root, CTXC_SETTINGS_FILE);
    if (st != CTXC_OK && !((st == CTXC_E_PARSE || st == CTXC_E_UTF8) &&
                           salvage(store, &store->fs, path, who, warn))) {
        /* reported, never overwritten; the other layers go on */
        (void)ctxc_settings_load(store, &err); /* the file's own error */
        if (warn) {
            fprintf(stderr,
                    "%s: warning: %s (ignored; fix or remove it): %s\n", who,
                    path, ctxc_error_message(&err));
        }
    }
}

void cli_settings_reload(ctxc_settings_store_t *store,
                         const ctxc_posix_fs_t *pfs, const char *who) {
    if (store->fs.ops == &set_ops) {
        settings_load(store, pfs, who, false);
    }
}

bool cli_settings_open(ctxc_settings_store_t *store, ctxc_posix_fs_t *pfs,
                       const char *profile, const char *who) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (ctxc_posix_fs_init(pfs, NULL, &err) == CTXC_OK) {
        ctxc_fs_t base = ctxc_posix_fs(pfs);
        set_base = base.ops;
        set_ops = *base.ops;
        set_ops.read = set_read;
        ctxc_fs_t fs = {&set_ops, base.ctx};
        ctxc_settings_init(store, &fs);
        settings_load(store, pfs, who, true);
    } else {
        fprintf(stderr, "%s: warning: no settings folder (%s); defaults only\n",
                who, ctxc_error_message(&err));
        ctxc_settings_init(store, NULL);
    }
    if (profile != NULL &&
        ctxc_settings_profile_load(store, profile, &err) != CTXC_OK) {
        fprintf(stderr, "%s: --profile %s: %s\n", who, profile,
                ctxc_error_message(&err));
        return false;
    }
    return true;
}

const char *cli_absolute_path(const char *path) {
    static char buf[4096];
    char cwd[3072];
    if (path[0] == '/' || getcwd(cwd, sizeof cwd) == NULL ||
        (size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= sizeof buf) {
        return path;
    }
    return buf;
}
