/*
 * Test fakes for the port filesystem (header only; include in one test file):
 *
 *   mem_fs_t    an in-memory filesystem with directories, files that can be
 *               made unreadable, and a read-only switch
 *   fault_fs_t  wraps any ctxc_fs_t and fails one chosen primitive on its
 *               n-th call (a write fails after half of its bytes, so the
 *               temporary file is torn, as after a crash)
 */
#ifndef CTXC_TEST_FAKE_FS_H
#define CTXC_TEST_FAKE_FS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "ctxc/port.h"

#ifndef MEM_FS_FILES
#define MEM_FS_FILES 64
#endif
#ifndef MEM_FS_FILE_BYTES
#define MEM_FS_FILE_BYTES 16384
#endif

typedef struct {
    bool used;
    bool dir;
    bool unreadable;
    bool open;
    char path[CTXC_CFG_PATH_MAX];
    size_t len;
    char data[MEM_FS_FILE_BYTES];
} mem_node_t;

typedef struct {
    mem_node_t nodes[MEM_FS_FILES];
    bool read_only;
} mem_fs_t;

static inline mem_node_t *mem_find(mem_fs_t *m, const char *path) {
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        if (m->nodes[i].used && strcmp(m->nodes[i].path, path) == 0) {
            return &m->nodes[i];
        }
    }
    return NULL;
}

static inline mem_node_t *mem_new(mem_fs_t *m, const char *path, bool dir) {
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        mem_node_t *n = &m->nodes[i];
        if (!n->used) {
            memset(n, 0, sizeof *n);
            n->used = true;
            n->dir = dir;
            strcpy(n->path, path);
            return n;
        }
    }
    return NULL;
}

/* The parent of path exists (as a directory) or is the root. */
static inline bool mem_parent_ok(mem_fs_t *m, const char *path) {
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        return true;
    }
    char parent[CTXC_CFG_PATH_MAX];
    memcpy(parent, path, (size_t)(slash - path));
    parent[slash - path] = '\0';
    mem_node_t *n = mem_find(m, parent);
    return n != NULL && n->dir;
}

static inline ctxc_status_t mem_read(void *ctx, const char *path, char *buf,
                                     size_t cap, size_t *len,
                                     ctxc_error_t *err) {
    mem_node_t *n = mem_find(ctx, path);
    if (n == NULL) {
        return ctxc_error_set(err, CTXC_E_NOT_FOUND, "%s: no such file", path);
    }
    if (n->dir || n->unreadable) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: %s", path,
                              n->dir ? "is a directory" : "permission denied");
    }
    if (n->len > cap) {
        ctxc_status_t st = ctxc_error_set(err, CTXC_E_NO_SPACE,
                                          "%s: larger than the buffer", path);
        if (err != NULL) {
            err->needed = n->len - cap;
        }
        return st;
    }
    memcpy(buf, n->data, n->len);
    *len = n->len;
    return CTXC_OK;
}

static inline ctxc_status_t mem_stat(void *ctx, const char *path,
                                     ctxc_fs_kind_t *kind, ctxc_error_t *err) {
    (void)err;
    mem_node_t *n = mem_find(ctx, path);
    *kind = n == NULL ? CTXC_FS_NONE : n->dir ? CTXC_FS_DIR : CTXC_FS_FILE;
    return CTXC_OK;
}

static inline ctxc_status_t mem_list(void *ctx, const char *dir,
                                     ctxc_fs_entry_fn fn, void *user,
                                     ctxc_error_t *err) {
    mem_fs_t *m = ctx;
    size_t dn = strlen(dir);
    if (dn > 0) {
        mem_node_t *d = mem_find(m, dir);
        if (d == NULL || !d->dir) {
            return ctxc_error_set(err, CTXC_E_NOT_FOUND,
                                  "%s: no such directory", dir);
        }
    }
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        mem_node_t *n = &m->nodes[i];
        if (!n->used) {
            continue;
        }
        const char *rest = n->path;
        if (dn > 0) {
            if (strncmp(n->path, dir, dn) != 0 || n->path[dn] != '/') {
                continue;
            }
            rest = n->path + dn + 1;
        }
        if (strchr(rest, '/') != NULL) {
            continue;
        }
        if (!fn(user, rest, n->dir ? CTXC_FS_DIR : CTXC_FS_FILE)) {
            break;
        }
    }
    return CTXC_OK;
}

static inline ctxc_status_t mem_mkdir(void *ctx, const char *dir,
                                      ctxc_error_t *err) {
    mem_fs_t *m = ctx;
    if (m->read_only) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: read-only", dir);
    }
    mem_node_t *n = mem_find(m, dir);
    if (n != NULL) {
        return n->dir ? CTXC_OK
                      : ctxc_error_set(err, CTXC_E_EXISTS, "%s: a file", dir);
    }
    if (!mem_parent_ok(m, dir)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: no parent", dir);
    }
    return mem_new(m, dir, true) != NULL
               ? CTXC_OK
               : ctxc_error_set(err, CTXC_E_IO, "%s: fs full", dir);
}

static inline ctxc_status_t mem_create(void *ctx, const char *path,
                                       ctxc_fs_file_t *file,
                                       ctxc_error_t *err) {
    mem_fs_t *m = ctx;
    if (m->read_only) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: read-only", path);
    }
    if (mem_find(m, path) != NULL) {
        return ctxc_error_set(err, CTXC_E_EXISTS, "%s: exists", path);
    }
    if (!mem_parent_ok(m, path)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: no parent", path);
    }
    mem_node_t *n = mem_new(m, path, false);
    if (n == NULL) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: fs full", path);
    }
    n->open = true;
    *file = n;
    return CTXC_OK;
}

static inline ctxc_status_t mem_write(void *ctx, ctxc_fs_file_t file,
                                      const void *data, size_t len,
                                      ctxc_error_t *err) {
    (void)ctx;
    mem_node_t *n = file;
    if (n->len + len > MEM_FS_FILE_BYTES) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: no space", n->path);
    }
    if (len > 0) {
        memcpy(n->data + n->len, data, len);
    }
    n->len += len;
    return CTXC_OK;
}

static inline ctxc_status_t mem_sync(void *ctx, ctxc_fs_file_t file,
                                     ctxc_error_t *err) {
    (void)ctx;
    (void)file;
    (void)err;
    return CTXC_OK;
}

static inline ctxc_status_t mem_close(void *ctx, ctxc_fs_file_t file,
                                      ctxc_error_t *err) {
    (void)ctx;
    (void)err;
    ((mem_node_t *)file)->open = false;
    return CTXC_OK;
}

static inline ctxc_status_t mem_rename(void *ctx, const char *from,
                                       const char *to, ctxc_error_t *err) {
    mem_fs_t *m = ctx;
    mem_node_t *src = mem_find(m, from);
    if (src == NULL) {
        return ctxc_error_set(err, CTXC_E_NOT_FOUND, "%s: no such file", from);
    }
    mem_node_t *dst = mem_find(m, to);
    if (dst != NULL && dst->dir) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: is a directory", to);
    }
    if (dst != NULL) {
        dst->used = false;
    }
    strcpy(src->path, to);
    return CTXC_OK;
}

static inline ctxc_status_t mem_remove(void *ctx, const char *path,
                                       ctxc_error_t *err) {
    mem_node_t *n = mem_find(ctx, path);
    if (n == NULL || n->dir) {
        return ctxc_error_set(err, CTXC_E_NOT_FOUND, "%s: no such file", path);
    }
    n->used = false;
    return CTXC_OK;
}

static const ctxc_fs_ops_t mem_fs_ops = {
    mem_read,  mem_stat, mem_list,  mem_mkdir,  mem_create,
    mem_write, mem_sync, mem_close, mem_rename, mem_remove,
};

static inline ctxc_fs_t mem_fs(mem_fs_t *m) {
    ctxc_fs_t fs = {&mem_fs_ops, m};
    return fs;
}

/* Puts a file (and its parent directories) straight into the fake. */
static inline void mem_put(mem_fs_t *m, const char *path, const char *text) {
    char dir[CTXC_CFG_PATH_MAX];
    for (const char *p = strchr(path, '/'); p != NULL; p = strchr(p + 1, '/')) {
        memcpy(dir, path, (size_t)(p - path));
        dir[p - path] = '\0';
        if (mem_find(m, dir) == NULL) {
            (void)mem_new(m, dir, true);
        }
    }
    mem_node_t *n = mem_find(m, path);
    if (n == NULL) {
        n = mem_new(m, path, false);
    }
    n->len = strlen(text);
    memcpy(n->data, text, n->len);
}

/* The content of a file as a NUL-terminated string in a static buffer, or
 * NULL when there is no such file. */
static inline const char *mem_get(mem_fs_t *m, const char *path) {
    static char out[MEM_FS_FILE_BYTES + 1];
    mem_node_t *n = mem_find(m, path);
    if (n == NULL || n->dir) {
        return NULL;
    }
    memcpy(out, n->data, n->len);
    out[n->len] = '\0';
    return out;
}

/* Number of files (not directories) in the fake. */
static inline size_t mem_file_count(mem_fs_t *m) {
    size_t c = 0;
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        c += m->nodes[i].used && !m->nodes[i].dir;
    }
    return c;
}

/* ---- fault injection ------------------------------------------------------
 */

typedef enum {
    FAULT_NONE = 0,
    FAULT_MKDIR,
    FAULT_CREATE,
    FAULT_WRITE,
    FAULT_SYNC,
    FAULT_CLOSE,
    FAULT_RENAME,
    FAULT_READ,
    FAULT_REMOVE,
    FAULT_COUNT_
} fault_op_t;

typedef struct {
    ctxc_fs_t inner;
    fault_op_t op; /* which primitive fails */
    unsigned nth;  /* on its nth call (1-based) */
    unsigned calls[FAULT_COUNT_];
    bool fired;
} fault_fs_t;

static inline bool fault_hit(fault_fs_t *f, fault_op_t op) {
    f->calls[op]++;
    if (f->op == op && f->calls[op] == f->nth) {
        f->fired = true;
        return true;
    }
    return false;
}

static inline ctxc_status_t fault_read(void *ctx, const char *path, char *buf,
                                       size_t cap, size_t *len,
                                       ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_READ)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: injected read error", path);
    }
    return f->inner.ops->read(f->inner.ctx, path, buf, cap, len, err);
}
static inline ctxc_status_t fault_stat(void *ctx, const char *path,
                                       ctxc_fs_kind_t *kind,
                                       ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    return f->inner.ops->stat(f->inner.ctx, path, kind, err);
}
static inline ctxc_status_t fault_list(void *ctx, const char *dir,
                                       ctxc_fs_entry_fn fn, void *user,
                                       ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    return f->inner.ops->list(f->inner.ctx, dir, fn, user, err);
}
static inline ctxc_status_t fault_mkdir(void *ctx, const char *dir,
                                        ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_MKDIR)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: injected mkdir error", dir);
    }
    return f->inner.ops->mkdir(f->inner.ctx, dir, err);
}
static inline ctxc_status_t fault_create(void *ctx, const char *path,
                                         ctxc_fs_file_t *file,
                                         ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_CREATE)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: injected create error",
                              path);
    }
    return f->inner.ops->create(f->inner.ctx, path, file, err);
}
static inline ctxc_status_t fault_write(void *ctx, ctxc_fs_file_t file,
                                        const void *data, size_t len,
                                        ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_WRITE)) {
        /* torn: half the bytes reach the file, then the error */
        (void)f->inner.ops->write(f->inner.ctx, file, data, len / 2, err);
        return ctxc_error_set(err, CTXC_E_IO, "injected write error");
    }
    return f->inner.ops->write(f->inner.ctx, file, data, len, err);
}
static inline ctxc_status_t fault_sync(void *ctx, ctxc_fs_file_t file,
                                       ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_SYNC)) {
        return ctxc_error_set(err, CTXC_E_IO, "injected sync error");
    }
    return f->inner.ops->sync(f->inner.ctx, file, err);
}
static inline ctxc_status_t fault_close(void *ctx, ctxc_fs_file_t file,
                                        ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    ctxc_status_t st = f->inner.ops->close(f->inner.ctx, file, err);
    if (fault_hit(f, FAULT_CLOSE)) {
        return ctxc_error_set(err, CTXC_E_IO, "injected close error");
    }
    return st;
}
static inline ctxc_status_t fault_rename(void *ctx, const char *from,
                                         const char *to, ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_RENAME)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: injected rename error", to);
    }
    return f->inner.ops->rename(f->inner.ctx, from, to, err);
}
static inline ctxc_status_t fault_remove(void *ctx, const char *path,
                                         ctxc_error_t *err) {
    fault_fs_t *f = ctx;
    if (fault_hit(f, FAULT_REMOVE)) {
        return ctxc_error_set(err, CTXC_E_IO, "%s: injected remove error",
                              path);
    }
    return f->inner.ops->remove(f->inner.ctx, path, err);
}

static const ctxc_fs_ops_t fault_fs_ops = {
    fault_read,  fault_stat, fault_list,  fault_mkdir,  fault_create,
    fault_write, fault_sync, fault_close, fault_rename, fault_remove,
};

static inline ctxc_fs_t fault_fs(fault_fs_t *f, ctxc_fs_t inner, fault_op_t op,
                                 unsigned nth) {
    memset(f, 0, sizeof *f);
    f->inner = inner;
    f->op = op;
    f->nth = nth;
    ctxc_fs_t fs = {&fault_fs_ops, f};
    return fs;
}

#endif /* CTXC_TEST_FAKE_FS_H */
