/*
 * ctxc POSIX port (see ctxc_port_posix.h).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "ctxc_port_posix.h"

#define FULL_MAX (CTXC_POSIX_ROOT_MAX + CTXC_CFG_PATH_MAX + 8u)

static ctxc_status_t io_error(ctxc_error_t *err, const char *what,
                              const char *path, int e) {
    /* ENOTDIR: a file where a directory of the path should be - the path
     * does not exist, as stat() says too */
    return ctxc_error_set(
        err, e == ENOENT || e == ENOTDIR ? CTXC_E_NOT_FOUND : CTXC_E_IO,
        "%s %s: %s", what, path, strerror(e));
}

ctxc_status_t ctxc_posix_fs_init(ctxc_posix_fs_t *pfs, const char *root,
                                 ctxc_error_t *err) {
    memset(pfs, 0, sizeof *pfs);
    const char *base = root;
    const char *suffix = "";
    if (base == NULL) {
        base = getenv("CTXC_HOME");
        if (base == NULL || base[0] == '\0') {
            base = getenv("HOME");
            suffix = "/.config/ctxc";
            if (base == NULL || base[0] == '\0') {
                return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                                      "no settings folder: set CTXC_HOME (or "
                                      "HOME)");
            }
        }
    }
    if (base[0] != '/') {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "the ctxc folder '%s' must be an absolute path",
                              base);
    }
    size_t nb = strlen(base);
    size_t ns = strlen(suffix);
    while (nb > 1 && base[nb - 1] == '/') {
        nb--;
    }
    if (nb + ns >= sizeof pfs->root) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "the ctxc folder path is longer than %u bytes",
                              (unsigned)sizeof pfs->root - 1u);
    }
    memcpy(pfs->root, base, nb);
    memcpy(pfs->root + nb, suffix, ns + 1);
    pfs->root_len = nb + ns;
    return CTXC_OK;
}

/* root + "/" + path into out. */
static ctxc_status_t full_path(const ctxc_posix_fs_t *pfs, const char *path,
                               char out[FULL_MAX], ctxc_error_t *err) {
    ctxc_status_t st =
        path[0] == '\0' ? CTXC_OK : ctxc_fs_path_check(path, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t n = strlen(path);
    memcpy(out, pfs->root, pfs->root_len);
    size_t k = pfs->root_len;
    if (n > 0) {
        out[k++] = '/';
        memcpy(out + k, path, n);
        k += n;
    }
    out[k] = '\0';
    return CTXC_OK;
}

/* Creates the root (and its parents) when missing. */
static ctxc_status_t ensure_root(const ctxc_posix_fs_t *pfs,
                                 ctxc_error_t *err) {
    char dir[CTXC_POSIX_ROOT_MAX];
    memcpy(dir, pfs->root, pfs->root_len + 1);
    for (size_t i = 1; i <= pfs->root_len; i++) {
        if (i < pfs->root_len && dir[i] != '/') {
            continue;
        }
        char keep = dir[i];
        dir[i] = '\0';
        if (mkdir(dir, 0700) != 0 && errno != EEXIST) {
            return io_error(err, "creating", dir, errno);
        }
        dir[i] = keep;
    }
    return CTXC_OK;
}

static ctxc_status_t px_read(void *ctx, const char *path, char *buf, size_t cap,
                             size_t *len, ctxc_error_t *err) {
    char full[FULL_MAX];
    ctxc_status_t st = full_path(ctx, path, full, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
     * below); it changes nothing for a regular file */
    int fd = open(full, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        return io_error(err, "cannot read", full, errno);
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0) {
        st = io_error(err, "cannot read", full, errno);
    } else if (S_ISDIR(sb.st_mode)) {
        st = ctxc_error_set(err, CTXC_E_IO, "cannot read %s: is a directory",
                            full);
    } else if (!S_ISREG(sb.st_mode)) {
        st = ctxc_error_set(err, CTXC_E_IO,
                            "cannot read %s: not a regular file (%s)", full,
                            S_ISFIFO(sb.st_mode)   ? "a FIFO"
                            : S_ISSOCK(sb.st_mode) ? "a socket"
                                                   : "a device");
    } else if ((uintmax_t)sb.st_size > cap) {
        st = ctxc_error_set(err, CTXC_E_NO_SPACE,
                            "%s is %z bytes, the buffer holds %z", full,
                            (size_t)sb.st_size, cap);
        if (err != NULL) {
            err->needed = (size_t)sb.st_size - cap;
        }
    } else {
        size_t got = 0;
        while (st == CTXC_OK && got < cap) {
            ssize_t r = read(fd, buf + got, cap - got);
            if (r < 0 && errno == EINTR) {
                continue;
            }
            if (r < 0) {
                st = io_error(err, "cannot read", full, errno);
            } else if (r == 0) {
                break;
            } else {
                got += (size_t)r;
            }
        }
        if (st == CTXC_OK && got == cap && cap > 0) {
            /* grew since fstat: is there more? */
            char probe;
            if (read(fd, &probe, 1) == 1) {
                st = ctxc_error_set(err, CTXC_E_NO_SPACE,
                                    "%s is larger than the buffer (%z)", full,
                                    cap);
                if (err != NULL) {
                    err->needed = 1;
                }
            }
        }
        *len = got;
    }
    close(fd);
    return st;
}

static ctxc_status_t px_stat(void *ctx, const char *path, ctxc_fs_kind_t *kind,
                             ctxc_error_t *err) {
    char full[FULL_MAX];
    ctxc_status_t st = full_path(ctx, path, full, err);
    if (st != CTXC_OK) {
        return st;
    }
    struct stat sb;
    if (stat(full, &sb) != 0) {
        if (errno == ENOENT || errno == ENOTDIR) {
            *kind = CTXC_FS_NONE;
            return CTXC_OK;
        }
        return io_error(err, "cannot stat", full, errno);
    }
    *kind = S_ISDIR(sb.st_mode) ? CTXC_FS_DIR : CTXC_FS_FILE;
    return CTXC_OK;
}

static ctxc_status_t px_list(void *ctx, const char *dir, ctxc_fs_entry_fn fn,
                             void *user, ctxc_error_t *err) {
    char full[FULL_MAX];
    ctxc_status_t st = full_path(ctx, dir, full, err);
    if (st != CTXC_OK) {
        return st;
    }
    DIR *d = opendir(full);
    if (d == NULL) {
        return io_error(err, "cannot list", full, errno);
    }
    size_t n = strlen(full);
    for (;;) {
        errno = 0;
        struct dirent *e = readdir(d);
        if (e == NULL) {
            if (errno != 0) {
                st = io_error(err, "cannot list", full, errno);
            }
            break;
        }
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) {
            continue;
        }
        size_t en = strlen(e->d_name);
        ctxc_fs_kind_t kind = CTXC_FS_FILE;
        if (n + 1 + en < sizeof full) {
            full[n] = '/';
            memcpy(full + n + 1, e->d_name, en + 1);
            struct stat sb;
            if (stat(full, &sb) == 0 && S_ISDIR(sb.st_mode)) {
                kind = CTXC_FS_DIR;
            }
            full[n] = '\0';
        }
        if (!fn(user, e->d_name, kind)) {
            break;
        }
    }
    closedir(d);
    return st;
}

static ctxc_status_t px_mkdir(void *ctx, const char *dir, ctxc_error_t *err) {
    char full[FULL_MAX];
    ctxc_status_t st = full_path(ctx, dir, full, err);
    if (st == CTXC_OK) {
        st = ensure_root(ctx, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    if (mkdir(full, 0700) == 0) {
        return CTXC_OK;
    }
    int e = errno;
    struct stat sb;
    if (e == EEXIST && stat(full, &sb) == 0) {
        return S_ISDIR(sb.st_mode)
                   ? CTXC_OK
                   : ctxc_error_set(err, CTXC_E_EXISTS,
                                    "cannot create directory %s: a file is "
                                    "in the way",
                                    full);
    }
    return io_error(err, "cannot create directory", full, e);
}

/* An open file: the descriptor, offset by one so that NULL is never valid. */
static ctxc_fs_file_t fd_handle(int fd) {
    return (ctxc_fs_file_t)(intptr_t)(fd + 1);
}
static int handle_fd(ctxc_fs_file_t f) { return (int)((intptr_t)f - 1); }

static ctxc_status_t px_create(void *ctx, const char *path,
                               ctxc_fs_file_t *file, ctxc_error_t *err) {
    char full[FULL_MAX];
    ctxc_status_t st = full_path(ctx, path, full, err);
    if (st == CTXC_OK) {
        st = ensure_root(ctx, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    int fd = open(full, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) {
        int e = errno;
        return e == EEXIST ? ctxc_error_set(err, CTXC_E_EXISTS,
                                            "%s already exists", full)
                           : io_error(err, "cannot create", full, e);
    }
    *file = fd_handle(fd);
    return CTXC_OK;
}

static ctxc_status_t px_write(void *ctx, ctxc_fs_file_t file, const void *data,
                              size_t len, ctxc_error_t *err) {
    (void)ctx;
    const char *p = data;
    while (len > 0) {
        ssize_t w = write(handle_fd(file), p, len);
        if (w < 0 && errno == EINTR) {
            continue;
        }
        if (w <= 0) {
            return ctxc_error_set(err, CTXC_E_IO, "write failed: %s",
                                  w < 0 ? strerror(errno) : "no progress");
        }
        p += w;
        len -= (size_t)w;
    }
    return CTXC_OK;
}

static ctxc_status_t px_sync(void *ctx, ctxc_fs_file_t file,
                             ctxc_error_t *err) {
    (void)ctx;
    if (fsync(handle_fd(file)) != 0) {
        return ctxc_error_set(err, CTXC_E_IO, "fsync failed: %s",
                              strerror(errno));
    }
    return CTXC_OK;
}

static ctxc_status_t px_close(void *ctx, ctxc_fs_file_t file,
                              ctxc_error_t *err) {
    (void)ctx;
    if (close(handle_fd(file)) != 0) {
        return ctxc_error_set(err, CTXC_E_IO, "close failed: %s",
                              strerror(errno));
    }
    return CTXC_OK;
}

/* fsyncs the directory holding full (so a rename survives a power cut). */
static void sync_parent(char *full) {
    char *slash = strrchr(full, '/');
    if (slash == NULL) {
        return;
    }
    *slash = '\0';
    int fd =
        open(full[0] != '\0' ? full : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    *slash = '/';
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

static ctxc_status_t px_rename(void *ctx, const char *from, const char *to,
                               ctxc_error_t *err) {
    char src[FULL_MAX];
    char dst[FULL_MAX];
    ctxc_status_t st = full_path(ctx, from, src, err);
    if (st == CTXC_OK) {
        st = full_path(ctx, to, dst, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    if (rename(src, dst) != 0) {
        return io_error(err, "cannot rename to", dst, errno);
    }
    sync_parent(dst);
    return CTXC_OK;
}

static ctxc_status_t px_remove(void *ctx, const char *path, ctxc_error_t *err) {
    char full[FULL_MAX];
    ctxc_status_t st = full_path(ctx, path, full, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (unlink(full) != 0) {
        return io_error(err, "cannot remove", full, errno);
    }
    return CTXC_OK;
}

static const ctxc_fs_ops_t px_ops = {
    px_read,  px_stat, px_list,  px_mkdir,  px_create,
    px_write, px_sync, px_close, px_rename, px_remove,
};

ctxc_fs_t ctxc_posix_fs(ctxc_posix_fs_t *pfs) {
    ctxc_fs_t fs = {&px_ops, pfs};
    return fs;
}

/* ---- clock, log, mutex ----------------------------------------------------
 */

static uint64_t px_clock(void *ctx) {
    (void)ctx;
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void px_log(void *ctx, ctxc_log_level_t level, const char *msg) {
    (void)ctx;
    static const char *const names[] = {"error", "warning", "info", "debug"};
    const char *name = (unsigned)level < 4u ? names[level] : "log";
    fprintf(stderr, "ctxc: %s: %s\n", name, msg);
}

ctxc_status_t ctxc_posix_entropy(void *ctx, uint8_t *buf, size_t len,
                                 ctxc_error_t *err) {
    (void)ctx;
    size_t got = 0;
    while (got < len) {
        /* flags 0: the urandom pool, blocking only until it is seeded once
         * at boot */
        ssize_t r = getrandom(buf + got, len - got, 0);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return ctxc_error_set(err, CTXC_E_IO, "getrandom: %s",
                                  r < 0 ? strerror(errno) : "no bytes");
        }
        got += (size_t)r;
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_posix_key(void *ctx, const char *name, char *buf, size_t cap,
                             size_t *len, ctxc_error_t *err) {
    (void)ctx;
    const char *v = name != NULL && name[0] != '\0' ? getenv(name) : NULL;
    if (v == NULL || v[0] == '\0') {
        return ctxc_error_set(err, CTXC_E_NOT_FOUND,
                              "no API key: environment variable %s is not set",
                              name != NULL ? name : "");
    }
    size_t n = strlen(v);
    if (buf == NULL || n >= cap) {
        return ctxc_error_set(err, CTXC_E_TOO_LARGE,
                              "the API key in %s is longer than %z bytes", name,
                              cap > 0 ? cap - 1 : 0);
    }
    memcpy(buf, v, n + 1);
    *len = n;
    return CTXC_OK;
}

void ctxc_posix_delay_ms(void *ctx, uint32_t ms) {
    (void)ctx;
    struct timespec ts = {(time_t)(ms / 1000u), (long)(ms % 1000u) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

static void px_lock(void *ctx) { (void)pthread_mutex_lock(ctx); }
static void px_unlock(void *ctx) { (void)pthread_mutex_unlock(ctx); }

ctxc_status_t ctxc_posix_port_init(ctxc_posix_port_t *p, const char *root,
                                   ctxc_log_level_t log_level,
                                   ctxc_error_t *err) {
    memset(p, 0, sizeof *p);
    ctxc_status_t st = ctxc_posix_fs_init(&p->fs, root, err);
    if (st != CTXC_OK) {
        return st;
    }
    int e = pthread_mutex_init(&p->mutex, NULL);
    if (e != 0) {
        return ctxc_error_set(err, CTXC_E_IO, "pthread_mutex_init: %s",
                              strerror(e));
    }
    p->port.fs = ctxc_posix_fs(&p->fs);
    p->port.clock = px_clock;
    p->port.log = px_log;
    p->port.log_level = log_level;
    p->port.mutex.lock = px_lock;
    p->port.mutex.unlock = px_unlock;
    p->port.mutex.ctx = &p->mutex;
    p->port.entropy = ctxc_posix_entropy;
    p->port.key = ctxc_posix_key;
    p->port.delay_ms = ctxc_posix_delay_ms;
    return CTXC_OK;
}

void ctxc_posix_port_deinit(ctxc_posix_port_t *p) {
    (void)pthread_mutex_destroy(&p->mutex);
}
