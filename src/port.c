/*
 * ctxc — the core side of the port contract: path checks, the atomic write
 * built from the port's primitives, directory creation, clock and log.
 */
#include <stdarg.h>
#include <string.h>

#include "ctxc/port.h"
#include "error.h"

ctxc_status_t ctxc_fs_path_check(const char *path, ctxc_error_t *err) {
    if (path == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "path is NULL");
    }
    size_t n = strlen(path);
    if (n >= CTXC_CFG_PATH_MAX) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "path %q is %z bytes, longer than the limit of %z",
                          path, n, n, (size_t)CTXC_CFG_PATH_MAX - 1u);
    }
    if (n == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "path is empty");
    }
    /* the other faults name the path (and nothing else) */
    const char *why = NULL;
    size_t start = 0;
    if (path[0] == '/') {
        why = "path %q is absolute; paths are relative to the port's root";
    }
    for (size_t i = 0; why == NULL && i <= n; i++) {
        if (i < n && path[i] != '/') {
            if (path[i] == '\\' || path[i] == ':' ||
                (unsigned char)path[i] < 0x20u) {
                why = "path %q contains a character that is not allowed (\\, "
                      ":, control)";
            }
            continue;
        }
        size_t len = i - start;
        if (len == 0) {
            why = "path %q has an empty component";
        } else if ((len == 1 && path[start] == '.') ||
                   (len == 2 && path[start] == '.' && path[start + 1] == '.')) {
            why = "path %q contains a '.' or '..' component";
        }
        start = i + 1;
    }
    if (why != NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, why, path, n);
    }
    return CTXC_OK;
}

static bool fs_present(const ctxc_fs_t *fs) {
    return fs != NULL && fs->ops != NULL;
}

static bool fs_writable(const ctxc_fs_t *fs) {
    const ctxc_fs_ops_t *o = fs->ops;
    return o->mkdir != NULL && o->create != NULL && o->write != NULL &&
           o->sync != NULL && o->close != NULL && o->rename != NULL &&
           o->remove != NULL;
}

static ctxc_status_t need_writable(const ctxc_fs_t *fs, const char *path,
                                   ctxc_error_t *err) {
    if (!fs_present(fs) || !fs_writable(fs)) {
        return ctxc__fail(err, CTXC_E_READ_ONLY,
                          "cannot write %s: the filesystem is read-only", path);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_fs_read(const ctxc_fs_t *fs, const char *path, char *buf,
                           size_t cap, size_t *len, ctxc_error_t *err) {
    if (len == NULL || (buf == NULL && cap != 0)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "read: NULL argument");
    }
    *len = 0;
    ctxc_status_t st = ctxc_fs_path_check(path, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (!fs_present(fs) || fs->ops->read == NULL) {
        return ctxc__fail(err, CTXC_E_NOT_FOUND, "%s: no filesystem", path);
    }
    return fs->ops->read(fs->ctx, path, buf, cap, len, err);
}

ctxc_status_t ctxc_fs_stat(const ctxc_fs_t *fs, const char *path,
                           ctxc_fs_kind_t *kind, ctxc_error_t *err) {
    if (kind == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "stat: NULL argument");
    }
    *kind = CTXC_FS_NONE;
    ctxc_status_t st = ctxc_fs_path_check(path, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (!fs_present(fs) || fs->ops->stat == NULL) {
        return CTXC_OK;
    }
    return fs->ops->stat(fs->ctx, path, kind, err);
}

ctxc_status_t ctxc_fs_list(const ctxc_fs_t *fs, const char *dir,
                           ctxc_fs_entry_fn fn, void *user, ctxc_error_t *err) {
    if (dir == NULL || fn == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "list: NULL argument");
    }
    if (dir[0] != '\0') {
        ctxc_status_t st = ctxc_fs_path_check(dir, err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    if (!fs_present(fs) || fs->ops->list == NULL) {
        return ctxc__fail(err, CTXC_E_NOT_FOUND, "%s: no filesystem",
                          dir[0] != '\0' ? dir : "(root)");
    }
    return fs->ops->list(fs->ctx, dir, fn, user, err);
}

bool ctxc_fs_is_temp_name(const char *name) {
    if (name == NULL) {
        return false;
    }
    size_t n = strlen(name);
    size_t d = n;
    while (d > 0 && name[d - 1] >= '0' && name[d - 1] <= '9') {
        d--;
    }
    return d < n && d >= 4 && memcmp(name + d - 4, ".tmp", 4) == 0;
}

/* Creates every directory on the way to (and including, when `last`)
 * path[0..n). */
static ctxc_status_t mkdirs_n(const ctxc_fs_t *fs, const char *path, size_t n,
                              ctxc_error_t *err) {
    char dir[CTXC_CFG_PATH_MAX];
    for (size_t i = 1; i <= n; i++) {
        if (i < n && path[i] != '/') {
            continue;
        }
        memcpy(dir, path, i);
        dir[i] = '\0';
        ctxc_status_t st = fs->ops->mkdir(fs->ctx, dir, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "creating directory %s", dir);
            return st;
        }
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_fs_mkdirs(const ctxc_fs_t *fs, const char *dir,
                             ctxc_error_t *err) {
    ctxc_status_t st = ctxc_fs_path_check(dir, err);
    if (st == CTXC_OK) {
        st = need_writable(fs, dir, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    return mkdirs_n(fs, dir, strlen(dir), err);
}

ctxc_status_t ctxc_fs_remove(const ctxc_fs_t *fs, const char *path,
                             ctxc_error_t *err) {
    ctxc_status_t st = ctxc_fs_path_check(path, err);
    if (st == CTXC_OK) {
        st = need_writable(fs, path, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    return fs->ops->remove(fs->ctx, path, err);
}

/* Writes data into a new temporary file and closes it. On failure the file
 * is closed and removed again; the first error is the one reported. */
static ctxc_status_t write_temp(const ctxc_fs_t *fs, const char *tmp,
                                const void *data, size_t len,
                                ctxc_error_t *err) {
    const ctxc_fs_ops_t *o = fs->ops;
    ctxc_fs_file_t file = NULL;
    ctxc_status_t st = o->create(fs->ctx, tmp, &file, err);
    if (st != CTXC_OK) {
        if (st != CTXC_E_EXISTS) {
            ctxc__err_prefix(err, "creating %s", tmp);
        }
        return st;
    }
    const char *step = "writing";
    st = o->write(fs->ctx, file, data, len, err);
    if (st == CTXC_OK) {
        step = "syncing";
        st = o->sync(fs->ctx, file, err);
    }
    ctxc_error_t close_err;
    ctxc_status_t cst =
        o->close(fs->ctx, file, st == CTXC_OK ? err : &close_err);
    if (st == CTXC_OK && cst != CTXC_OK) {
        step = "closing";
        st = cst;
    }
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, "%s %s", step, tmp);
        ctxc_error_t ignored;
        (void)o->remove(fs->ctx, tmp, &ignored);
    }
    return st;
}

ctxc_status_t ctxc_fs_write_atomic(const ctxc_fs_t *fs, const char *path,
                                   const void *data, size_t len,
                                   ctxc_error_t *err) {
    if (data == NULL && len != 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "write: data is NULL");
    }
    ctxc_status_t st = ctxc_fs_path_check(path, err);
    if (st == CTXC_OK) {
        st = need_writable(fs, path, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    size_t n = strlen(path);
    /* room for ".tmp" and up to two digits */
    if (n + 7u > CTXC_CFG_PATH_MAX) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "path %q is too long for its temporary name", path,
                          n);
    }
    ctxc_fs_kind_t kind = CTXC_FS_NONE;
    if (fs->ops->stat != NULL) {
        st = fs->ops->stat(fs->ctx, path, &kind, err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    if (kind == CTXC_FS_DIR) {
        return ctxc__fail(err, CTXC_E_EXISTS,
                          "cannot write %s: a directory is in the way", path);
    }
    const char *slash = strrchr(path, '/');
    if (slash != NULL) {
        st = mkdirs_n(fs, path, (size_t)(slash - path), err);
        if (st != CTXC_OK) {
            return st;
        }
    }
    char tmp[CTXC_CFG_PATH_MAX];
    memcpy(tmp, path, n);
    memcpy(tmp + n, ".tmp", 4);
    for (unsigned k = 0; k < CTXC_FS_TMP_TRIES; k++) {
        size_t t = n + 4;
        if (k >= 10u) {
            tmp[t++] = (char)('0' + k / 10u);
        }
        tmp[t++] = (char)('0' + k % 10u);
        tmp[t] = '\0';
        st = write_temp(fs, tmp, data, len, err);
        if (st == CTXC_E_EXISTS) {
            continue;
        }
        if (st != CTXC_OK) {
            return st;
        }
        st = fs->ops->rename(fs->ctx, tmp, path, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "renaming %s to %s", tmp, path);
            ctxc_error_t ignored;
            (void)fs->ops->remove(fs->ctx, tmp, &ignored);
        }
        return st;
    }
    return ctxc__fail(err, CTXC_E_EXISTS,
                      "cannot write %s: all %u temporary names %s.tmpN are "
                      "taken (left behind by crashed writers? remove them)",
                      path, CTXC_FS_TMP_TRIES, path);
}

uint64_t ctxc_port_now_ms(const ctxc_port_t *port) {
    if (port == NULL || port->clock == NULL) {
        return 0;
    }
    return port->clock(port->clock_ctx);
}

bool ctxc_port_stop_requested(const ctxc_port_t *port) {
    return port != NULL && port->stop != NULL && port->stop(port->stop_ctx);
}

void ctxc_port_log(const ctxc_port_t *port, ctxc_log_level_t level,
                   const char *fmt, ...) {
    if (port == NULL || port->log == NULL || level > port->log_level ||
        fmt == NULL) {
        return;
    }
    char line[CTXC_CFG_LOG_LINE_LEN];
    va_list ap;
    va_start(ap, fmt);
    ctxc__vformat(line, sizeof line, fmt, ap);
    va_end(ap);
    port->log(port->log_ctx, level, line);
}
