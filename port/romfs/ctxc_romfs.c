/*
 * ctxc romfs port (see ctxc_romfs.h).
 */
#include <string.h>

#include "ctxc/prompt.h"
#include "ctxc_romfs.h"

/* The entry whose file name is path ("<id>.md"), or NULL. */
static const ctxc_prompt_builtin_t *romfs_file(const char *path) {
    size_t n = strlen(path);
    if (n < 4 || strcmp(path + n - 3, ".md") != 0) {
        return NULL;
    }
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        if (b->text != NULL && strlen(b->id) == n - 3 &&
            memcmp(b->id, path, n - 3) == 0) {
            return b;
        }
    }
    return NULL;
}

/* True when dir (not "") is the category of some compiled-in prompt. */
static bool romfs_dir(const char *dir) {
    size_t n = strlen(dir);
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        if (b->text != NULL && strncmp(b->id, dir, n) == 0 && b->id[n] == '/') {
            return true;
        }
    }
    return false;
}

static ctxc_status_t romfs_read(void *ctx, const char *path, char *buf,
                                size_t cap, size_t *len, ctxc_error_t *err) {
    (void)ctx;
    const ctxc_prompt_builtin_t *b = romfs_file(path);
    if (b == NULL) {
        return romfs_dir(path)
                   ? ctxc_error_set(err, CTXC_E_IO, "%s: is a directory", path)
                   : ctxc_error_set(err, CTXC_E_NOT_FOUND,
                                    "%s: no such file in the romfs", path);
    }
    if (b->len > cap) {
        ctxc_status_t st = ctxc_error_set(err, CTXC_E_NO_SPACE,
                                          "%s is %z bytes, the buffer holds %z",
                                          path, b->len, cap);
        if (err != NULL) {
            err->needed = b->len - cap;
        }
        return st;
    }
    memcpy(buf, b->text, b->len);
    *len = b->len;
    return CTXC_OK;
}

static ctxc_status_t romfs_stat(void *ctx, const char *path,
                                ctxc_fs_kind_t *kind, ctxc_error_t *err) {
    (void)ctx;
    (void)err;
    *kind = romfs_file(path) != NULL ? CTXC_FS_FILE
            : romfs_dir(path)        ? CTXC_FS_DIR
                                     : CTXC_FS_NONE;
    return CTXC_OK;
}

static ctxc_status_t romfs_list(void *ctx, const char *dir, ctxc_fs_entry_fn fn,
                                void *user, ctxc_error_t *err) {
    (void)ctx;
    size_t dn = strlen(dir);
    if (dn > 0 && !romfs_dir(dir)) {
        return ctxc_error_set(err, CTXC_E_NOT_FOUND,
                              "%s: no such directory in the romfs", dir);
    }
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        if (b->text == NULL) {
            continue;
        }
        char name[CTXC_CFG_PATH_MAX];
        const char *slash = strchr(b->id, '/');
        if (dn == 0) {
            /* the root lists each category once: at its first entry */
            size_t cn = (size_t)(slash - b->id);
            bool first = true;
            for (size_t j = 0; j < i && first; j++) {
                first = ctxc_prompt_builtins[j].text == NULL ||
                        strncmp(ctxc_prompt_builtins[j].id, b->id, cn + 1) != 0;
            }
            if (!first) {
                continue;
            }
            memcpy(name, b->id, cn);
            name[cn] = '\0';
            if (!fn(user, name, CTXC_FS_DIR)) {
                break;
            }
        } else if (strncmp(b->id, dir, dn) == 0 && b->id[dn] == '/') {
            size_t nn = strlen(slash + 1);
            memcpy(name, slash + 1, nn);
            memcpy(name + nn, ".md", 4);
            if (!fn(user, name, CTXC_FS_FILE)) {
                break;
            }
        }
    }
    return CTXC_OK;
}

static const ctxc_fs_ops_t romfs_ops = {
    .read = romfs_read, .stat = romfs_stat, .list = romfs_list,
    /* read-only: every write hook NULL */
};

ctxc_fs_t ctxc_romfs(void) {
    ctxc_fs_t fs = {&romfs_ops, NULL};
    return fs;
}
