/*
 * ctxc host CLI — where output goes: the one history writer behind
 * `ctxc compress -o OUT` and the REPL's `/save FILE`, and the check that
 * what a command printed on stdout really got there.
 *
 * OUT is looked at (lstat) before anything is written:
 *
 *   -                       standard output
 *   missing                 a new file, mode 0600, written atomically
 *   a regular file          replaced atomically, its permission bits (and,
 *                           when allowed, its owner and group) kept
 *   a FIFO or a character   written directly, as a stream (a reader on the
 *   device                  FIFO gets the history; /dev/null stays a device)
 *   a symbolic link         followed: to a FIFO or device -> written to it;
 *                           to the file standard output already is (e.g.
 *                           /dev/stdout, /proc/self/fd/1) -> stdout; to
 *                           another regular file -> that file is replaced
 *                           atomically in its own directory and the link is
 *                           kept; dangling -> refused
 *   anything else           refused (a directory, a socket, a block device)
 *
 * Atomically: a new temporary file with a unique name in the target's
 * directory (".NAME.XXXXXX", created exclusively, so a file or a symbolic
 * link planted there is never opened, followed or removed), the history
 * written, fsync, rename over the target, fsync of the directory. On any
 * failure the temporary file is removed and the target is untouched.
 */
#define _XOPEN_SOURCE 700 /* realpath, mkstemp, fchown */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#ifndef PATH_MAX
#define PATH_MAX 4096
#endif

/* Exports h into fp and flushes it; errno says why when false. */
static bool export_to(FILE *fp, const ctxc_history_t *h) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    errno = 0;
    bool ok = ctxc_export(h, cli_write_file, fp, &err) == CTXC_OK;
    int e = errno;
    if (fflush(fp) != 0) {
        return false;
    }
    if (!ok || ferror(fp)) {
        errno = e != 0 ? e : EIO;
        return false;
    }
    return true;
}

static bool write_error(const char *who, const char *path, int e) {
    fprintf(stderr, "%s: %s: write error: %s\n", who, path, strerror(e));
    return false;
}

static bool save_to_stdout(const ctxc_history_t *h, const char *who) {
    return export_to(stdout, h) ? true : write_error(who, "stdout", errno);
}

/* A FIFO or character device: opened without O_CREAT/O_TRUNC and written
 * as a stream (blocks, like any writer, until a FIFO has a reader). */
static bool save_to_stream(const ctxc_history_t *h, const char *path,
                           const char *who) {
    int fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: cannot open: %s\n", who, path,
                strerror(errno));
        return false;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !(S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode))) {
        /* replaced since lstat: do not write into whatever it is now */
        fprintf(stderr, "%s: %s: changed while being opened; not written\n",
                who, path);
        close(fd);
        return false;
    }
    FILE *fp = fdopen(fd, "wb");
    if (fp == NULL) {
        int e = errno;
        close(fd);
        return write_error(who, path, e);
    }
    bool ok = export_to(fp, h);
    int e = errno;
    if (fclose(fp) != 0 && ok) {
        ok = false;
        e = errno;
    }
    return ok ? true : write_error(who, path, e);
}

/* fsyncs the directory part of path ("." when there is none). */
static void sync_dir_of(const char *path) {
    static char dir[PATH_MAX];
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, sizeof dir, ".");
    } else if (slash == path) {
        snprintf(dir, sizeof dir, "/");
    } else {
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd); /* some filesystems refuse it: the rename stands */
        close(fd);
    }
}

/* Writes h to a new temporary file next to target, then renames it over
 * target. `old` is the target's stat (NULL when it does not exist). */
static bool save_replace(const ctxc_history_t *h, const char *target,
                         const struct stat *old, const char *who) {
    static char tmp[PATH_MAX];
    const char *slash = strrchr(target, '/');
    const char *base = slash != NULL ? slash + 1 : target;
    int dlen = slash != NULL ? (int)(slash - target) + 1 : 0;
    /* ".NAME.XXXXXX" in the same directory (the name cut to stay a valid
     * file name) */
    if ((size_t)snprintf(tmp, sizeof tmp, "%.*s.%.200s.XXXXXX", dlen, target,
                         base) >= sizeof tmp) {
        fprintf(stderr, "%s: %s: path too long\n", who, target);
        return false;
    }
    int fd = mkstemp(tmp); /* O_CREAT | O_EXCL, mode 0600 */
    if (fd < 0) {
        int e = errno;
        if (e == ENOENT || e == ENOTDIR) { /* the folder is what is wrong */
            fprintf(stderr, "%s: %s: the folder %.*s %s\n", who, target,
                    dlen > 1 ? dlen - 1 : dlen > 0 ? 1 : 1,
                    dlen > 0 ? target : ".",
                    e == ENOENT ? "does not exist" : "is not a folder");
        } else {
            fprintf(stderr, "%s: %s: cannot write into its folder: %s\n",
                    who, target, strerror(e));
        }
        return false;
    }
    int e = 0;
    if (old != NULL) {
        if ((old->st_uid != geteuid() || old->st_gid != getegid()) &&
            fchown(fd, old->st_uid, old->st_gid) != 0) {
            /* not allowed (not root): the file becomes ours */
        }
        if (fchmod(fd, old->st_mode & 0777) != 0) {
            e = errno;
        }
    }
    FILE *fp = e == 0 ? fdopen(fd, "wb") : NULL;
    if (fp == NULL) {
        e = e != 0 ? e : errno;
        close(fd);
    } else {
        bool ok = export_to(fp, h) && fsync(fd) == 0;
        e = ok ? 0 : errno;
        if (fclose(fp) != 0 && e == 0) {
            e = errno;
        }
    }
    if (e == 0 && rename(tmp, target) != 0) {
        e = errno;
    }
    if (e != 0) {
        (void)unlink(tmp);
        return write_error(who, target, e);
    }
    sync_dir_of(target);
    return true;
}

/* Is sb the file standard output is open on? */
static bool is_stdout(const struct stat *sb) {
    struct stat out;
    return fstat(STDOUT_FILENO, &out) == 0 && out.st_dev == sb->st_dev &&
           out.st_ino == sb->st_ino;
}

bool cli_save_history(const ctxc_history_t *h, const char *path,
                      const char *who) {
    cli_spill_flush(); /* the blocks its pointers name come first */
    if (strcmp(path, "-") == 0) {
        return save_to_stdout(h, who);
    }
    struct stat lsb;
    if (lstat(path, &lsb) != 0) {
        if (errno != ENOENT) {
            fprintf(stderr, "%s: %s: %s\n", who, path, strerror(errno));
            return false;
        }
        return save_replace(h, path, NULL, who);
    }
    bool link = S_ISLNK(lsb.st_mode);
    struct stat sb = lsb;
    if (link && stat(path, &sb) != 0) {
        fprintf(stderr,
                "%s: %s: a symbolic link to a file that cannot be reached "
                "(%s); not written\n",
                who, path, strerror(errno));
        return false;
    }
    if (S_ISFIFO(sb.st_mode) || S_ISCHR(sb.st_mode)) {
        return save_to_stream(h, path, who);
    }
    if (!S_ISREG(sb.st_mode)) {
        fprintf(stderr,
                "%s: %s: %s; not written (give a regular file, a FIFO, a "
                "character device or -)\n",
                who, path,
                S_ISDIR(sb.st_mode) ? "is a directory"
                                    : "is not a regular file");
        return false;
    }
    if (!link) {
        return save_replace(h, path, &sb, who);
    }
    if (is_stdout(&sb)) {
        return save_to_stdout(h, who);
    }
    /* replace the link's target, in the target's directory */
    static char resolved[PATH_MAX];
    struct stat rsb;
    if (realpath(path, resolved) == NULL || lstat(resolved, &rsb) != 0 ||
        !S_ISREG(rsb.st_mode) || rsb.st_dev != sb.st_dev ||
        rsb.st_ino != sb.st_ino) {
        fprintf(stderr,
                "%s: %s: cannot resolve the symbolic link to its file; not "
                "written\n",
                who, path);
        return false;
    }
    return save_replace(h, resolved, &rsb, who);
}

bool cli_stdout_ok(const char *who) {
    errno = 0;
    bool flushed = fflush(stdout) == 0;
    int e = errno;
    if (flushed && !ferror(stdout)) {
        return true;
    }
    /* a write failed earlier (its errno is gone): say what is known */
    fprintf(stderr, "%s: stdout: write error: %s\n", who,
            !flushed && e != 0 ? strerror(e) : "some output was lost");
    return false;
}
