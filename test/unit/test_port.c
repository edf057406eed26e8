/*
 * The port contract (include/ctxc/port.h) and the POSIX port:
 *
 *   - ctxc_fs_path_check / ctxc_fs_is_temp_name: which paths and names pass
 *   - ctxc_fs_write_atomic on the in-memory fs (fake_fs.h): new file with
 *     parents, replace, a directory in the way, read-only filesystems
 *   - a failure injected at each step (mkdir, create, write, sync, close,
 *     rename) on the in-memory fs and on the real POSIX fs: the target keeps
 *     its old content (or stays absent), no temporary file is left, the
 *     message names the step, and a retry succeeds
 *   - stale temporary names of crashed writers
 *   - concurrent writers and a reader on the POSIX fs: never a torn file
 *   - POSIX fs specifics: root selection, root creation and modes, read /
 *     stat / list / remove errors (symlink loop = an unreadable file), a
 *     FIFO or device refused by read without waiting
 *   - a session with a port: the mutex serialises add / before_send from
 *     several threads; the clock times compressions; the log line
 *   - ctxc_port_log / ctxc_port_now_ms edge cases
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/port.h"
#include "ctxc_port_posix.h"
#include "fake_fs.h"
#include "support.h"

/* ---- helpers ----------------------------------------------------------- */

static char g_tmp[512]; /* the suite's mkdtemp directory */
static unsigned g_root_seq;

static mem_fs_t g_mem;
static ctxc_posix_fs_t g_px;

#define OLD "old content\n"
#define NEW "new content, longer than the old one\n"

static void assert_has(const char *hay, const char *needle) {
    if (strstr(hay, needle) == NULL) {
        fail_msg("expected \"%s\" in the message \"%s\"", needle, hay);
    }
}

/* Removes a directory tree (without following symbolic links). */
static void rm_tree(const char *path) {
    struct stat sb;
    if (lstat(path, &sb) != 0) {
        return;
    }
    if (S_ISDIR(sb.st_mode)) {
        DIR *d = opendir(path);
        if (d != NULL) {
            struct dirent *e;
            while ((e = readdir(d)) != NULL) {
                if (strcmp(e->d_name, ".") == 0 ||
                    strcmp(e->d_name, "..") == 0) {
                    continue;
                }
                char sub[2048];
                snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
                rm_tree(sub);
            }
            closedir(d);
        }
        (void)rmdir(path);
    } else {
        (void)unlink(path);
    }
}

/* A fresh, not yet existing directory under the suite's temp directory. */
static void new_root(char *out, size_t cap) {
    snprintf(out, cap, "%s/r%u", g_tmp, g_root_seq++);
}

/* A fresh POSIX fs over a new root (in g_px). */
static ctxc_fs_t fresh_posix(void) {
    char root[1024];
    new_root(root, sizeof root);
    assert_int_equal(ctxc_posix_fs_init(&g_px, root, NULL), CTXC_OK);
    return ctxc_posix_fs(&g_px);
}

/* A fresh in-memory fs (g_mem) or POSIX fs. */
static ctxc_fs_t fresh_fs(bool posix) {
    if (posix) {
        return fresh_posix();
    }
    memset(&g_mem, 0, sizeof g_mem);
    return mem_fs(&g_mem);
}

/* The whole file as a string (static buffer), or NULL when it cannot be
 * read (the status in *st when st is not NULL). */
static const char *read_text(const ctxc_fs_t *fs, const char *path,
                             ctxc_status_t *st) {
    static char buf[MEM_FS_FILE_BYTES + 1];
    size_t len = 0;
    ctxc_error_t err;
    ctxc_status_t r = ctxc_fs_read(fs, path, buf, sizeof buf - 1, &len, &err);
    if (st != NULL) {
        *st = r;
    }
    if (r != CTXC_OK) {
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

static void assert_content(const ctxc_fs_t *fs, const char *path,
                           const char *want) {
    ctxc_status_t st;
    const char *got = read_text(fs, path, &st);
    if (got == NULL) {
        fail_msg("%s: read failed with %s", path, ctxc_status_name(st));
    }
    assert_string_equal(got, want);
}

static ctxc_fs_kind_t kind_of(const ctxc_fs_t *fs, const char *path) {
    ctxc_fs_kind_t kind = CTXC_FS_NONE;
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_stat(fs, path, &kind, &err), CTXC_OK);
    return kind;
}

/* Directory listing collected by list_cb. */
typedef struct {
    size_t n;
    size_t temps; /* names for which ctxc_fs_is_temp_name() is true */
    char names[32][64];
    ctxc_fs_kind_t kinds[32];
    size_t stop_after; /* 0: never stop early */
} listing_t;

static bool list_cb(void *user, const char *name, ctxc_fs_kind_t kind) {
    listing_t *l = user;
    if (ctxc_fs_is_temp_name(name)) {
        l->temps++;
    }
    if (l->n < 32) {
        snprintf(l->names[l->n], sizeof l->names[l->n], "%s", name);
        l->kinds[l->n] = kind;
    }
    l->n++;
    return l->stop_after == 0 || l->n < l->stop_after;
}

static ctxc_status_t list_dir(const ctxc_fs_t *fs, const char *dir,
                              listing_t *l) {
    memset(l, 0, sizeof *l);
    ctxc_error_t err;
    return ctxc_fs_list(fs, dir, list_cb, l, &err);
}

/* Kind of `name` in the listing; CTXC_FS_NONE when absent. */
static ctxc_fs_kind_t listed(const listing_t *l, const char *name) {
    for (size_t i = 0; i < l->n && i < 32; i++) {
        if (strcmp(l->names[i], name) == 0) {
            return l->kinds[i];
        }
    }
    return CTXC_FS_NONE;
}

/* No temporary file in dir (a missing dir counts as none when allowed). */
static void assert_no_temp(const ctxc_fs_t *fs, const char *dir,
                           bool may_be_missing) {
    listing_t l;
    ctxc_status_t st = list_dir(fs, dir, &l);
    if (st == CTXC_E_NOT_FOUND && may_be_missing) {
        return;
    }
    assert_int_equal(st, CTXC_OK);
    if (l.temps != 0) {
        fail_msg("%zu temporary file(s) left in '%s' (first entry: %s)",
                 l.temps, dir, l.names[0]);
    }
}

/* Mode bits of a file under the POSIX root (relative path, "" = root). */
static unsigned mode_of(const ctxc_posix_fs_t *pfs, const char *rel) {
    char full[2048];
    snprintf(full, sizeof full, "%s%s%s", pfs->root, rel[0] ? "/" : "", rel);
    struct stat sb;
    if (stat(full, &sb) != 0) {
        fail_msg("stat %s: %s", full, strerror(errno));
    }
    return (unsigned)(sb.st_mode & 07777u);
}

static bool exists_abs(const char *full) {
    struct stat sb;
    return lstat(full, &sb) == 0;
}

static int group_setup(void **state) {
    (void)state;
    const char *base = getenv("TMPDIR");
    if (base == NULL || base[0] != '/') {
        base = "/tmp";
    }
    snprintf(g_tmp, sizeof g_tmp, "%s/ctxc_port_XXXXXX", base);
    if (mkdtemp(g_tmp) == NULL) {
        fprintf(stderr, "mkdtemp %s: %s\n", g_tmp, strerror(errno));
        return -1;
    }
    return 0;
}

static int group_teardown(void **state) {
    (void)state;
    rm_tree(g_tmp);
    return exists_abs(g_tmp) ? -1 : 0;
}

/* ---- 1. path check, temp names ---------------------------------------- */

static void path_check_accepts_valid_paths(void **state) {
    (void)state;
    ctxc_error_t err;
    const char *ok[] = {"a", "a/b.c", "x.y/z-_.md", "..a", "a../b", ".x"};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        if (ctxc_fs_path_check(ok[i], &err) != CTXC_OK) {
            fail_msg("'%s' rejected: %s", ok[i], ctxc_error_message(&err));
        }
    }
    /* the longest allowed path: CTXC_CFG_PATH_MAX - 1 bytes */
    static char longest[CTXC_CFG_PATH_MAX];
    memset(longest, 'a', sizeof longest - 1);
    longest[sizeof longest - 1] = '\0';
    assert_int_equal(ctxc_fs_path_check(longest, &err), CTXC_OK);
}

static void path_check_rejects_invalid_paths(void **state) {
    (void)state;
    static char too_long[CTXC_CFG_PATH_MAX + 1];
    memset(too_long, 'a', CTXC_CFG_PATH_MAX);
    too_long[CTXC_CFG_PATH_MAX] = '\0';
    const char *bad[] = {
        NULL,
        "",
        "/a",
        "a//b",
        "a/",
        "./a",
        "a/./b",
        "a/..",
        "a/../b",
        "..",
        ".",
        "a\\b",
        "c:x",
        "a\x01"
        "b",
        "a\tb",
        "a/\x1f",
        too_long,
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ctxc_error_t err;
        memset(&err, 0, sizeof err);
        ctxc_status_t st = ctxc_fs_path_check(bad[i], &err);
        if (st != CTXC_E_INVALID_ARG) {
            fail_msg("case %zu accepted or wrong code: %s", i,
                     ctxc_status_name(st));
        }
        assert_int_equal(err.status, CTXC_E_INVALID_ARG);
        assert_true(strlen(ctxc_error_message(&err)) > 0);
    }
}

static void path_check_rejects_bad_paths_at_every_entry_point(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    ctxc_error_t err;
    char buf[16];
    size_t len;
    ctxc_fs_kind_t kind;
    listing_t l;
    assert_int_equal(ctxc_fs_read(&fs, "../x", buf, sizeof buf, &len, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_fs_stat(&fs, "/x", &kind, &err), CTXC_E_INVALID_ARG);
    assert_int_equal(list_dir(&fs, "a//b", &l), CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_fs_write_atomic(&fs, "a/../x", "x", 1, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_fs_mkdirs(&fs, "a/./b", &err), CTXC_E_INVALID_ARG);
    assert_int_equal(ctxc_fs_remove(&fs, "", &err), CTXC_E_INVALID_ARG);
    assert_int_equal(mem_file_count(&g_mem), 0);
}

static void is_temp_name_recognises_core_temp_names(void **state) {
    (void)state;
    assert_true(ctxc_fs_is_temp_name("x.json.tmp0"));
    assert_true(ctxc_fs_is_temp_name("a.tmp15"));
    assert_true(ctxc_fs_is_temp_name(".tmp3"));
    assert_false(ctxc_fs_is_temp_name("x.tmp"));
    assert_false(ctxc_fs_is_temp_name("tmp3"));
    assert_false(ctxc_fs_is_temp_name("x.json"));
    assert_false(ctxc_fs_is_temp_name("x.tmpa"));
    assert_false(ctxc_fs_is_temp_name("x.tmp1a"));
    assert_false(ctxc_fs_is_temp_name("xtmp1"));
    assert_false(ctxc_fs_is_temp_name(""));
    assert_false(ctxc_fs_is_temp_name(NULL));
}

/* ---- 2. atomic write on the in-memory fs ------------------------------- */

static void atomic_write_creates_file_and_parents(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    ctxc_error_t err;
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "a/b/c.txt", NEW, strlen(NEW), &err),
        CTXC_OK);
    assert_int_equal(kind_of(&fs, "a"), CTXC_FS_DIR);
    assert_int_equal(kind_of(&fs, "a/b"), CTXC_FS_DIR);
    assert_int_equal(kind_of(&fs, "a/b/c.txt"), CTXC_FS_FILE);
    assert_content(&fs, "a/b/c.txt", NEW);
    assert_int_equal(mem_file_count(&g_mem), 1);
    assert_no_temp(&fs, "a/b", false);
    /* an empty file */
    assert_int_equal(ctxc_fs_write_atomic(&fs, "empty", NULL, 0, &err),
                     CTXC_OK);
    assert_content(&fs, "empty", "");
}

static void atomic_write_path_length_leaves_room_for_temp_name(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    ctxc_error_t err;
    /* ".tmp" + two digits + NUL must fit in CTXC_CFG_PATH_MAX */
    static char path[CTXC_CFG_PATH_MAX];
    memset(path, 'p', sizeof path);
    path[CTXC_CFG_PATH_MAX - 7] = '\0';
    assert_int_equal(ctxc_fs_write_atomic(&fs, path, NEW, strlen(NEW), &err),
                     CTXC_OK);
    assert_content(&fs, path, NEW);
    /* the longest valid path has no room: refused, nothing written */
    memset(path, 'q', sizeof path);
    path[CTXC_CFG_PATH_MAX - 1] = '\0';
    assert_int_equal(ctxc_fs_path_check(path, &err), CTXC_OK);
    assert_int_equal(ctxc_fs_write_atomic(&fs, path, NEW, strlen(NEW), &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(mem_file_count(&g_mem), 1);
}

static void atomic_write_replaces_existing_file(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    mem_put(&g_mem, "d/f.txt", OLD);
    ctxc_error_t err;
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "d/f.txt", NEW, strlen(NEW), &err), CTXC_OK);
    assert_content(&fs, "d/f.txt", NEW);
    assert_int_equal(mem_file_count(&g_mem), 1);
    /* and back to a shorter content */
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "d/f.txt", OLD, strlen(OLD), &err), CTXC_OK);
    assert_content(&fs, "d/f.txt", OLD);
    assert_int_equal(mem_file_count(&g_mem), 1);
}

static void atomic_write_directory_in_the_way_is_exists(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    mem_put(&g_mem, "dir/inner.txt", OLD);
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_write_atomic(&fs, "dir", NEW, strlen(NEW), &err),
                     CTXC_E_EXISTS);
    assert_has(ctxc_error_message(&err), "dir");
    assert_int_equal(kind_of(&fs, "dir"), CTXC_FS_DIR);
    assert_content(&fs, "dir/inner.txt", OLD);
    assert_int_equal(mem_file_count(&g_mem), 1);
    listing_t l;
    assert_int_equal(list_dir(&fs, "", &l), CTXC_OK);
    assert_int_equal(l.n, 1); /* only "dir" */
    assert_int_equal(l.temps, 0);
}

static void atomic_write_on_read_only_mem_fs_changes_nothing(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    mem_put(&g_mem, "d/f.txt", OLD);
    g_mem.read_only = true;
    ctxc_error_t err;
    assert_int_not_equal(
        ctxc_fs_write_atomic(&fs, "d/f.txt", NEW, strlen(NEW), &err), CTXC_OK);
    assert_int_not_equal(
        ctxc_fs_write_atomic(&fs, "g.txt", NEW, strlen(NEW), &err), CTXC_OK);
    assert_int_not_equal(
        ctxc_fs_write_atomic(&fs, "new/g.txt", NEW, strlen(NEW), &err),
        CTXC_OK);
    assert_content(&fs, "d/f.txt", OLD);
    assert_int_equal(kind_of(&fs, "g.txt"), CTXC_FS_NONE);
    assert_int_equal(kind_of(&fs, "new"), CTXC_FS_NONE);
    assert_int_equal(mem_file_count(&g_mem), 1);
    assert_no_temp(&fs, "d", false);
}

static void atomic_write_without_write_hooks_is_read_only(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_fs(false);
    mem_put(&g_mem, "d/f.txt", OLD);
    static const ctxc_fs_ops_t read_ops = {
        .read = mem_read, .stat = mem_stat, .list = mem_list};
    ctxc_fs_t ro = {&read_ops, &g_mem};
    ctxc_fs_t no_ops = {NULL, NULL};
    const ctxc_fs_t *cases[] = {NULL, &no_ops, &ro};
    for (size_t i = 0; i < 3; i++) {
        ctxc_error_t err;
        memset(&err, 0, sizeof err);
        assert_int_equal(
            ctxc_fs_write_atomic(cases[i], "d/f.txt", NEW, strlen(NEW), &err),
            CTXC_E_READ_ONLY);
        assert_has(ctxc_error_message(&err), "d/f.txt");
        assert_int_equal(
            ctxc_fs_write_atomic(cases[i], "x/y.txt", NEW, strlen(NEW), &err),
            CTXC_E_READ_ONLY);
        assert_int_equal(ctxc_fs_mkdirs(cases[i], "m/n", &err),
                         CTXC_E_READ_ONLY);
        assert_int_equal(ctxc_fs_remove(cases[i], "d/f.txt", &err),
                         CTXC_E_READ_ONLY);
    }
    /* the read side still works through the read-only ops */
    assert_content(&ro, "d/f.txt", OLD);
    assert_content(&fs, "d/f.txt", OLD);
    assert_int_equal(kind_of(&fs, "x"), CTXC_FS_NONE);
    assert_int_equal(kind_of(&fs, "m"), CTXC_FS_NONE);
    assert_int_equal(mem_file_count(&g_mem), 1);
}

static void null_fs_reads_as_empty(void **state) {
    (void)state;
    char buf[8];
    size_t len = 99;
    ctxc_fs_kind_t kind = CTXC_FS_FILE;
    ctxc_error_t err;
    listing_t l;
    assert_int_equal(ctxc_fs_read(NULL, "a", buf, sizeof buf, &len, &err),
                     CTXC_E_NOT_FOUND);
    assert_int_equal(len, 0);
    assert_int_equal(ctxc_fs_stat(NULL, "a", &kind, &err), CTXC_OK);
    assert_int_equal(kind, CTXC_FS_NONE);
    assert_int_equal(list_dir(NULL, "", &l), CTXC_E_NOT_FOUND);
}

/* ---- 3. a failure at each step ----------------------------------------- */

static const char *op_name(fault_op_t op) {
    switch (op) {
    case FAULT_MKDIR:
        return "mkdir";
    case FAULT_CREATE:
        return "create";
    case FAULT_WRITE:
        return "write";
    case FAULT_SYNC:
        return "sync";
    case FAULT_CLOSE:
        return "close";
    case FAULT_RENAME:
        return "rename";
    default:
        return "?";
    }
}

/* Writes NEW over `existed ? OLD : nothing` through a fault_fs that fails
 * `op` on its nth call; then checks the aftermath and retries. */
static void fault_case(bool posix, fault_op_t op, unsigned nth, bool existed) {
    ctxc_fs_t fs = fresh_fs(posix);
    const char *path = existed ? "d/x.json" : "n1/n2/y.json";
    const char *dir = existed ? "d" : "n1/n2";
    ctxc_error_t err;
    if (existed) {
        assert_int_equal(
            ctxc_fs_write_atomic(&fs, path, OLD, strlen(OLD), &err), CTXC_OK);
    }
    fault_fs_t f;
    ctxc_fs_t ff = fault_fs(&f, fs, op, nth);
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_fs_write_atomic(&ff, path, NEW, strlen(NEW), &err);
    if (!f.fired) {
        fail_msg("%s fs, %s #%u: the fault was never reached",
                 posix ? "posix" : "mem", op_name(op), nth);
    }
    if (st == CTXC_OK) {
        fail_msg("%s fs, %s #%u failed but the write reported success",
                 posix ? "posix" : "mem", op_name(op), nth);
    }
    assert_int_equal(err.status, st);

    /* the target: exactly OLD, or still absent */
    if (existed) {
        assert_content(&fs, path, OLD);
    } else {
        assert_int_equal(kind_of(&fs, path), CTXC_FS_NONE);
        ctxc_status_t rst;
        assert_null(read_text(&fs, path, &rst));
        assert_int_equal(rst, CTXC_E_NOT_FOUND);
    }
    assert_no_temp(&fs, dir, !existed);
    if (existed) {
        listing_t l;
        assert_int_equal(list_dir(&fs, dir, &l), CTXC_OK);
        assert_int_equal(l.n, 1);
        assert_int_equal(listed(&l, "x.json"), CTXC_FS_FILE);
    }

    /* the message names the step and the path */
    const char *msg = ctxc_error_message(&err);
    char want[256];
    switch (op) {
    case FAULT_MKDIR:
        snprintf(want, sizeof want, "creating directory %s",
                 existed    ? "d"
                 : nth == 1 ? "n1"
                            : "n1/n2");
        break;
    case FAULT_CREATE:
        snprintf(want, sizeof want, "%s.tmp0", path);
        break;
    case FAULT_WRITE:
        snprintf(want, sizeof want, "writing %s.tmp0", path);
        break;
    case FAULT_SYNC:
        snprintf(want, sizeof want, "syncing %s.tmp0", path);
        break;
    case FAULT_CLOSE:
        snprintf(want, sizeof want, "closing %s.tmp0", path);
        break;
    case FAULT_RENAME:
        snprintf(want, sizeof want, "renaming %s.tmp0 to %s", path, path);
        break;
    default:
        fail();
    }
    assert_has(msg, want);

    /* a retry without the fault writes NEW */
    assert_int_equal(ctxc_fs_write_atomic(&fs, path, NEW, strlen(NEW), &err),
                     CTXC_OK);
    assert_content(&fs, path, NEW);
    assert_no_temp(&fs, dir, false);
}

static void fault_at_each_step(bool posix) {
    static const fault_op_t ops[] = {FAULT_MKDIR, FAULT_CREATE, FAULT_WRITE,
                                     FAULT_SYNC,  FAULT_CLOSE,  FAULT_RENAME};
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        fault_case(posix, ops[i], 1, true);
        fault_case(posix, ops[i], 1, false);
    }
    /* the second of two missing parents */
    fault_case(posix, FAULT_MKDIR, 2, false);
}

static void atomic_write_fault_at_each_step_mem(void **state) {
    (void)state;
    fault_at_each_step(false);
}

static void atomic_write_fault_at_each_step_posix(void **state) {
    (void)state;
    fault_at_each_step(true);
}

/* ---- 4. stale temporary names ------------------------------------------ */

static void stale_temp_does_not_block(bool posix) {
    ctxc_fs_t fs = fresh_fs(posix);
    ctxc_error_t err;
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "s/x.json", OLD, strlen(OLD), &err), CTXC_OK);
    /* a crashed writer left tmp0 behind (written as its own file) */
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "s/x.json.tmp0", "STALE", 5, &err), CTXC_OK);
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "s/x.json", NEW, strlen(NEW), &err), CTXC_OK);
    assert_content(&fs, "s/x.json", NEW);
    assert_content(&fs, "s/x.json.tmp0", "STALE");
    listing_t l;
    assert_int_equal(list_dir(&fs, "s", &l), CTXC_OK);
    assert_int_equal(l.n, 2); /* x.json and the stale tmp0, nothing more */
    assert_int_equal(l.temps, 1);
    assert_int_equal(listed(&l, "x.json.tmp0"), CTXC_FS_FILE);
}

static void atomic_write_skips_stale_temp_name(void **state) {
    (void)state;
    stale_temp_does_not_block(false);
    stale_temp_does_not_block(true);
}

static void all_temp_names_taken(bool posix) {
    ctxc_fs_t fs = fresh_fs(posix);
    ctxc_error_t err;
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "s/x.json", OLD, strlen(OLD), &err), CTXC_OK);
    for (unsigned k = 0; k < CTXC_FS_TMP_TRIES; k++) {
        char name[64];
        snprintf(name, sizeof name, "s/x.json.tmp%u", k);
        assert_int_equal(ctxc_fs_write_atomic(&fs, name, "STALE", 5, &err),
                         CTXC_OK);
    }
    memset(&err, 0, sizeof err);
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "s/x.json", NEW, strlen(NEW), &err),
        CTXC_E_EXISTS);
    assert_has(ctxc_error_message(&err), "s/x.json");
    assert_content(&fs, "s/x.json", OLD);
    listing_t l;
    assert_int_equal(list_dir(&fs, "s", &l), CTXC_OK);
    assert_int_equal(l.n, CTXC_FS_TMP_TRIES + 1u);
    assert_int_equal(l.temps, CTXC_FS_TMP_TRIES);
    assert_content(&fs, "s/x.json.tmp15", "STALE");
    assert_content(&fs, "s/x.json.tmp0", "STALE");
    /* freeing the last name is enough again */
    assert_int_equal(ctxc_fs_remove(&fs, "s/x.json.tmp15", &err), CTXC_OK);
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "s/x.json", NEW, strlen(NEW), &err), CTXC_OK);
    assert_content(&fs, "s/x.json", NEW);
}

static void atomic_write_all_temp_names_taken_is_exists(void **state) {
    (void)state;
    all_temp_names_taken(false);
    all_temp_names_taken(true);
}

/* ---- 5. concurrent writers --------------------------------------------- */

#define A_LEN 6000u
#define B_LEN 9000u
#define WRITES 300

typedef struct {
    const ctxc_fs_t *fs;
    const char *data;
    size_t len;
    int failures;
    char first_error[CTXC_CFG_ERROR_MESSAGE_LEN + 32];
} writer_t;

typedef struct {
    const ctxc_fs_t *fs;
    atomic_int *done;
    long reads;
    long torn;
    long errors;
    char first_error[CTXC_CFG_ERROR_MESSAGE_LEN + 32];
} reader_t;

static void *writer_main(void *arg) {
    writer_t *w = arg;
    for (int i = 0; i < WRITES; i++) {
        ctxc_error_t err;
        ctxc_status_t st =
            ctxc_fs_write_atomic(w->fs, "c/file.txt", w->data, w->len, &err);
        if (st != CTXC_OK && w->failures++ == 0) {
            snprintf(w->first_error, sizeof w->first_error, "%s: %s",
                     ctxc_status_name(st), ctxc_error_message(&err));
        }
    }
    return NULL;
}

static bool all_bytes(const char *p, size_t n, char c) {
    for (size_t i = 0; i < n; i++) {
        if (p[i] != c) {
            return false;
        }
    }
    return true;
}

static void *reader_main(void *arg) {
    reader_t *r = arg;
    static char buf[16384];
    while (!atomic_load(r->done)) {
        size_t len = 0;
        ctxc_error_t err;
        ctxc_status_t st =
            ctxc_fs_read(r->fs, "c/file.txt", buf, sizeof buf, &len, &err);
        if (st != CTXC_OK) {
            /* the target always exists: rename replaces it in one step */
            if (r->errors++ == 0) {
                snprintf(r->first_error, sizeof r->first_error, "%s: %s",
                         ctxc_status_name(st), ctxc_error_message(&err));
            }
            continue;
        }
        r->reads++;
        if (!((len == A_LEN && all_bytes(buf, len, 'a')) ||
              (len == B_LEN && all_bytes(buf, len, 'b')))) {
            r->torn++;
        }
    }
    return NULL;
}

static void concurrent_writers_never_tear_a_file(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    static char a[A_LEN], b[B_LEN];
    memset(a, 'a', sizeof a);
    memset(b, 'b', sizeof b);
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_write_atomic(&fs, "c/file.txt", a, A_LEN, &err),
                     CTXC_OK);

    atomic_int done;
    atomic_init(&done, 0);
    writer_t wa = {&fs, a, A_LEN, 0, ""};
    writer_t wb = {&fs, b, B_LEN, 0, ""};
    reader_t rd = {&fs, &done, 0, 0, 0, ""};
    pthread_t ta, tb, tr;
    assert_int_equal(pthread_create(&tr, NULL, reader_main, &rd), 0);
    assert_int_equal(pthread_create(&ta, NULL, writer_main, &wa), 0);
    assert_int_equal(pthread_create(&tb, NULL, writer_main, &wb), 0);
    pthread_join(ta, NULL);
    pthread_join(tb, NULL);
    atomic_store(&done, 1);
    pthread_join(tr, NULL);

    if (wa.failures != 0 || wb.failures != 0) {
        fail_msg("writer failures: a %d (%s), b %d (%s)", wa.failures,
                 wa.first_error, wb.failures, wb.first_error);
    }
    if (rd.errors != 0) {
        fail_msg("%ld failed reads, first: %s", rd.errors, rd.first_error);
    }
    assert_true(rd.reads > 0);
    if (rd.torn != 0) {
        fail_msg("%ld of %ld reads saw a torn file", rd.torn, rd.reads);
    }
    const char *last = read_text(&fs, "c/file.txt", NULL);
    assert_non_null(last);
    size_t n = strlen(last);
    assert_true((n == A_LEN && all_bytes(last, n, 'a')) ||
                (n == B_LEN && all_bytes(last, n, 'b')));
    listing_t l;
    assert_int_equal(list_dir(&fs, "c", &l), CTXC_OK);
    assert_int_equal(l.temps, 0);
    assert_int_equal(l.n, 1);
}

/* ---- 6. POSIX fs specifics --------------------------------------------- */

typedef struct {
    char ctxc_home[1024];
    char home[1024];
    bool had_ctxc_home, had_home;
} env_save_t;

static void env_save(env_save_t *e) {
    const char *v = getenv("CTXC_HOME");
    e->had_ctxc_home = v != NULL;
    snprintf(e->ctxc_home, sizeof e->ctxc_home, "%s", v ? v : "");
    v = getenv("HOME");
    e->had_home = v != NULL;
    snprintf(e->home, sizeof e->home, "%s", v ? v : "");
}

static void env_restore(const env_save_t *e) {
    if (e->had_ctxc_home) {
        setenv("CTXC_HOME", e->ctxc_home, 1);
    } else {
        unsetenv("CTXC_HOME");
    }
    if (e->had_home) {
        setenv("HOME", e->home, 1);
    } else {
        unsetenv("HOME");
    }
}

/* The environment tests change CTXC_HOME and HOME; the teardown puts them
 * back even when an assertion fails half-way. */
static env_save_t g_env;

static int env_setup(void **state) {
    (void)state;
    env_save(&g_env);
    return 0;
}

static int env_teardown(void **state) {
    (void)state;
    env_restore(&g_env);
    return 0;
}

static void posix_init_explicit_root(void **state) {
    (void)state;
    setenv("CTXC_HOME", "/from/env", 1);
    ctxc_posix_fs_t pfs;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_fs_init(&pfs, "/explicit/root", &err), CTXC_OK);
    assert_string_equal(pfs.root, "/explicit/root");
    assert_int_equal(pfs.root_len, strlen("/explicit/root"));
    /* trailing slashes are dropped */
    assert_int_equal(ctxc_posix_fs_init(&pfs, "/explicit/root//", &err),
                     CTXC_OK);
    assert_string_equal(pfs.root, "/explicit/root");
}

static void posix_init_root_from_environment(void **state) {
    (void)state;
    ctxc_posix_fs_t pfs;
    ctxc_error_t err;

    setenv("CTXC_HOME", "/opt/ctxc-home", 1);
    setenv("HOME", "/home/someone", 1);
    assert_int_equal(ctxc_posix_fs_init(&pfs, NULL, &err), CTXC_OK);
    assert_string_equal(pfs.root, "/opt/ctxc-home");

    unsetenv("CTXC_HOME");
    assert_int_equal(ctxc_posix_fs_init(&pfs, NULL, &err), CTXC_OK);
    assert_string_equal(pfs.root, "/home/someone/.config/ctxc");
    assert_int_equal(pfs.root_len, strlen("/home/someone/.config/ctxc"));

    setenv("CTXC_HOME", "", 1);
    assert_int_equal(ctxc_posix_fs_init(&pfs, NULL, &err), CTXC_OK);
    assert_string_equal(pfs.root, "/home/someone/.config/ctxc");

    /* the port takes the same root */
    ctxc_posix_port_t p;
    assert_int_equal(ctxc_posix_port_init(&p, NULL, CTXC_LOG_ERROR, &err),
                     CTXC_OK);
    assert_string_equal(p.fs.root, "/home/someone/.config/ctxc");
    ctxc_posix_port_deinit(&p);

    /* neither set: no root */
    unsetenv("CTXC_HOME");
    unsetenv("HOME");
    assert_int_equal(ctxc_posix_fs_init(&pfs, NULL, &err), CTXC_E_INVALID_ARG);
    assert_has(ctxc_error_message(&err), "CTXC_HOME");

    /* a relative CTXC_HOME */
    setenv("CTXC_HOME", "relative/home", 1);
    assert_int_equal(ctxc_posix_fs_init(&pfs, NULL, &err), CTXC_E_INVALID_ARG);

    /* a real write lands under $CTXC_HOME */
    char root[1024];
    new_root(root, sizeof root);
    setenv("CTXC_HOME", root, 1);
    assert_int_equal(ctxc_posix_fs_init(&pfs, NULL, &err), CTXC_OK);
    ctxc_fs_t fs = ctxc_posix_fs(&pfs);
    assert_int_equal(ctxc_fs_write_atomic(&fs, "f.txt", NEW, strlen(NEW), &err),
                     CTXC_OK);
    char full[2048];
    snprintf(full, sizeof full, "%s/f.txt", root);
    assert_true(exists_abs(full));
}

/* The POSIX entropy hook (getrandom): fills every byte asked for, two
 * draws differ, the port gets it from ctxc_posix_port_init. */
static void posix_entropy_fills_and_differs(void **state) {
    (void)state;
    uint8_t a[64], b[64];
    memset(a, 0, sizeof a);
    memset(b, 0, sizeof b);
    assert_int_equal(ctxc_posix_entropy(NULL, a, sizeof a, NULL), CTXC_OK);
    assert_int_equal(ctxc_posix_entropy(NULL, b, sizeof b, NULL), CTXC_OK);
    /* 2^-512 to fail by chance */
    assert_memory_not_equal(a, b, sizeof a);
    /* a large request (more than one getrandom() call may return) */
    static uint8_t big[1u << 20];
    assert_int_equal(ctxc_posix_entropy(NULL, big, sizeof big, NULL), CTXC_OK);
    size_t zeros = 0;
    for (size_t i = 0; i < sizeof big; i++) {
        zeros += big[i] == 0;
    }
    assert_true(zeros < sizeof big / 128u); /* about 1/256 expected */
    assert_int_equal(ctxc_posix_entropy(NULL, a, 0, NULL), CTXC_OK);

    ctxc_posix_port_t p;
    char root[] = "/tmp/ctxc-entropy-XXXXXX";
    assert_non_null(mkdtemp(root));
    assert_int_equal(ctxc_posix_port_init(&p, root, CTXC_LOG_WARN, NULL),
                     CTXC_OK);
    assert_ptr_equal(p.port.entropy, ctxc_posix_entropy);
    assert_int_equal(p.port.entropy(p.port.entropy_ctx, a, 16, NULL), CTXC_OK);
    ctxc_posix_port_deinit(&p);
    rmdir(root);
}

static void posix_init_relative_root_is_invalid(void **state) {
    (void)state;
    ctxc_posix_fs_t pfs;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_fs_init(&pfs, "relative/dir", &err),
                     CTXC_E_INVALID_ARG);
    assert_has(ctxc_error_message(&err), "relative/dir");
    assert_int_equal(ctxc_posix_fs_init(&pfs, "", &err), CTXC_E_INVALID_ARG);
    ctxc_posix_port_t p;
    assert_int_equal(ctxc_posix_port_init(&p, "./x", CTXC_LOG_ERROR, &err),
                     CTXC_E_INVALID_ARG);
    /* a root longer than CTXC_POSIX_ROOT_MAX - 1 */
    static char long_root[CTXC_POSIX_ROOT_MAX + 8];
    memset(long_root, 'r', sizeof long_root - 1);
    long_root[0] = '/';
    long_root[sizeof long_root - 1] = '\0';
    assert_int_equal(ctxc_posix_fs_init(&pfs, long_root, &err),
                     CTXC_E_INVALID_ARG);
}

static void posix_root_created_0700_on_first_write(void **state) {
    (void)state;
    char base[1024], root[1200];
    new_root(base, sizeof base);
    snprintf(root, sizeof root, "%s/l1/l2/l3", base);
    ctxc_posix_fs_t pfs;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_fs_init(&pfs, root, &err), CTXC_OK);
    assert_false(exists_abs(base)); /* nothing is created by init */
    ctxc_fs_t fs = ctxc_posix_fs(&pfs);
    /* reading and listing do not create it either */
    ctxc_status_t st;
    assert_null(read_text(&fs, "f.txt", &st));
    assert_int_equal(st, CTXC_E_NOT_FOUND);
    listing_t l;
    assert_int_equal(list_dir(&fs, "", &l), CTXC_E_NOT_FOUND);
    assert_int_equal(kind_of(&fs, "f.txt"), CTXC_FS_NONE);
    assert_false(exists_abs(base));

    assert_int_equal(ctxc_fs_write_atomic(&fs, "f.txt", NEW, strlen(NEW), &err),
                     CTXC_OK);
    assert_content(&fs, "f.txt", NEW);
    assert_int_equal(mode_of(&pfs, ""), 0700u);
    assert_int_equal(mode_of(&pfs, "f.txt"), 0600u);
    char mid[1300];
    snprintf(mid, sizeof mid, "%s/l1", base);
    struct stat sb;
    assert_int_equal(stat(mid, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    /* directories made for a write are 0700, files 0600 */
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "p/q/r.txt", OLD, strlen(OLD), &err),
        CTXC_OK);
    assert_int_equal(mode_of(&pfs, "p"), 0700u);
    assert_int_equal(mode_of(&pfs, "p/q"), 0700u);
    assert_int_equal(mode_of(&pfs, "p/q/r.txt"), 0600u);
    /* a replaced file is 0600 too */
    assert_int_equal(ctxc_fs_write_atomic(&fs, "f.txt", OLD, strlen(OLD), &err),
                     CTXC_OK);
    assert_int_equal(mode_of(&pfs, "f.txt"), 0600u);

    /* mkdirs makes a fresh root as well */
    char root2[1200];
    snprintf(root2, sizeof root2, "%s/m1/m2", base);
    ctxc_posix_fs_t pfs2;
    assert_int_equal(ctxc_posix_fs_init(&pfs2, root2, &err), CTXC_OK);
    ctxc_fs_t fs2 = ctxc_posix_fs(&pfs2);
    assert_int_equal(ctxc_fs_mkdirs(&fs2, "a/b", &err), CTXC_OK);
    assert_int_equal(kind_of(&fs2, "a/b"), CTXC_FS_DIR);
    assert_int_equal(mode_of(&pfs2, ""), 0700u);
}

static void posix_read_errors(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    ctxc_error_t err;
    char buf[64];
    size_t len = 0;

    /* missing file (root missing, then root present) */
    assert_int_equal(ctxc_fs_read(&fs, "none.txt", buf, sizeof buf, &len, &err),
                     CTXC_E_NOT_FOUND);
    assert_int_equal(ctxc_fs_mkdirs(&fs, "sub", &err), CTXC_OK);
    assert_int_equal(ctxc_fs_read(&fs, "none.txt", buf, sizeof buf, &len, &err),
                     CTXC_E_NOT_FOUND);
    assert_int_equal(
        ctxc_fs_read(&fs, "nodir/none.txt", buf, sizeof buf, &len, &err),
        CTXC_E_NOT_FOUND);

    /* a directory */
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_fs_read(&fs, "sub", buf, sizeof buf, &len, &err),
                     CTXC_E_IO);
    assert_has(ctxc_error_message(&err), "sub");

    /* larger than the buffer: needed = size - cap */
    static char blob[100];
    memset(blob, 'z', sizeof blob);
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "big.bin", blob, sizeof blob, &err), CTXC_OK);
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_fs_read(&fs, "big.bin", buf, 40, &len, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 60);
    assert_has(ctxc_error_message(&err), "big.bin");
    /* exactly the buffer: fine */
    static char exact[100];
    assert_int_equal(
        ctxc_fs_read(&fs, "big.bin", exact, sizeof exact, &len, &err), CTXC_OK);
    assert_int_equal(len, 100);
    assert_memory_equal(exact, blob, 100);
    /* an empty file into a zero-capacity buffer */
    assert_int_equal(ctxc_fs_write_atomic(&fs, "empty", NULL, 0, &err),
                     CTXC_OK);
    len = 7;
    assert_int_equal(ctxc_fs_read(&fs, "empty", NULL, 0, &len, &err), CTXC_OK);
    assert_int_equal(len, 0);

    /* an unreadable file: a symlink loop (works even as root) */
    char lpath[2048];
    snprintf(lpath, sizeof lpath, "%s/loop", g_px.root);
    assert_int_equal(symlink("loop", lpath), 0);
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_fs_read(&fs, "loop", buf, sizeof buf, &len, &err);
    assert_int_equal(st, CTXC_E_IO); /* not CTXC_E_NOT_FOUND */
    assert_has(ctxc_error_message(&err), "loop");
    /* stat of it is an error too (it is not "missing") */
    ctxc_fs_kind_t kind = CTXC_FS_FILE;
    assert_int_equal(ctxc_fs_stat(&fs, "loop", &kind, &err), CTXC_E_IO);
}

/* A FIFO, a device (through a link) or a socket is refused at once with
 * the path in the message; the read never waits on a FIFO without a
 * writer. (SIGALRM ends the suite, a failure, if it ever waits.) */
static void posix_read_refuses_non_regular_files(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    ctxc_error_t err;
    char buf[64];
    size_t len = 0;
    char path[2048];
    assert_int_equal(ctxc_fs_mkdirs(&fs, "profiles", &err), CTXC_OK);

    snprintf(path, sizeof path, "%s/settings.json", g_px.root);
    assert_int_equal(mkfifo(path, 0600), 0);
    alarm(10);
    memset(&err, 0, sizeof err);
    assert_int_equal(
        ctxc_fs_read(&fs, "settings.json", buf, sizeof buf, &len, &err),
        CTXC_E_IO);
    alarm(0);
    assert_has(ctxc_error_message(&err), path);
    assert_has(ctxc_error_message(&err), "not a regular file (a FIFO)");

    snprintf(path, sizeof path, "%s/profiles/p.json", g_px.root);
    assert_int_equal(symlink("/dev/null", path), 0);
    memset(&err, 0, sizeof err);
    assert_int_equal(
        ctxc_fs_read(&fs, "profiles/p.json", buf, sizeof buf, &len, &err),
        CTXC_E_IO);
    assert_has(ctxc_error_message(&err), "profiles/p.json");
    assert_has(ctxc_error_message(&err), "not a regular file (a device)");

    /* a link to a regular file is still read (the user's own) */
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "real.json", OLD, strlen(OLD), &err),
        CTXC_OK);
    snprintf(path, sizeof path, "%s/link.json", g_px.root);
    assert_int_equal(symlink("real.json", path), 0);
    assert_string_equal(read_text(&fs, "link.json", NULL), OLD);
}

static void posix_stat_kinds(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    ctxc_error_t err;
    assert_int_equal(kind_of(&fs, "missing"), CTXC_FS_NONE);
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "d/f.txt", OLD, strlen(OLD), &err), CTXC_OK);
    assert_int_equal(kind_of(&fs, "d"), CTXC_FS_DIR);
    assert_int_equal(kind_of(&fs, "d/f.txt"), CTXC_FS_FILE);
    assert_int_equal(kind_of(&fs, "d/missing"), CTXC_FS_NONE);
    assert_int_equal(kind_of(&fs, "d/f.txt/below"), CTXC_FS_NONE);
}

static void posix_list_entries(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    ctxc_error_t err;
    listing_t l;
    assert_int_equal(list_dir(&fs, "none", &l), CTXC_E_NOT_FOUND);
    assert_int_equal(ctxc_fs_write_atomic(&fs, "a.txt", "A", 1, &err), CTXC_OK);
    assert_int_equal(ctxc_fs_write_atomic(&fs, "b.json", "{}", 2, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_fs_write_atomic(&fs, "sub/c.txt", "C", 1, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_fs_mkdirs(&fs, "sub/empty", &err), CTXC_OK);

    assert_int_equal(list_dir(&fs, "", &l), CTXC_OK);
    assert_int_equal(l.n, 3);
    assert_int_equal(listed(&l, "a.txt"), CTXC_FS_FILE);
    assert_int_equal(listed(&l, "b.json"), CTXC_FS_FILE);
    assert_int_equal(listed(&l, "sub"), CTXC_FS_DIR);
    assert_int_equal(listed(&l, "."), CTXC_FS_NONE);
    assert_int_equal(listed(&l, ".."), CTXC_FS_NONE);

    assert_int_equal(list_dir(&fs, "sub", &l), CTXC_OK);
    assert_int_equal(l.n, 2);
    assert_int_equal(listed(&l, "c.txt"), CTXC_FS_FILE);
    assert_int_equal(listed(&l, "empty"), CTXC_FS_DIR);

    assert_int_equal(list_dir(&fs, "sub/empty", &l), CTXC_OK);
    assert_int_equal(l.n, 0);

    /* stopping early is still CTXC_OK */
    memset(&l, 0, sizeof l);
    l.stop_after = 1;
    assert_int_equal(ctxc_fs_list(&fs, "", list_cb, &l, &err), CTXC_OK);
    assert_int_equal(l.n, 1);

    /* a file is not a directory */
    assert_int_not_equal(list_dir(&fs, "a.txt", &l), CTXC_OK);
}

static void posix_remove(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_fs_remove(&fs, "missing.txt", &err),
                     CTXC_E_NOT_FOUND);
    assert_has(ctxc_error_message(&err), "missing.txt");
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "d/f.txt", OLD, strlen(OLD), &err), CTXC_OK);
    assert_int_equal(ctxc_fs_remove(&fs, "d/f.txt", &err), CTXC_OK);
    assert_int_equal(kind_of(&fs, "d/f.txt"), CTXC_FS_NONE);
    assert_int_equal(ctxc_fs_remove(&fs, "d/f.txt", &err), CTXC_E_NOT_FOUND);
    assert_int_equal(kind_of(&fs, "d"), CTXC_FS_DIR);
}

static void posix_mkdir_over_a_file_is_exists(void **state) {
    (void)state;
    ctxc_fs_t fs = fresh_posix();
    ctxc_error_t err;
    assert_int_equal(ctxc_fs_write_atomic(&fs, "f", OLD, strlen(OLD), &err),
                     CTXC_OK);
    assert_int_equal(ctxc_fs_mkdirs(&fs, "f", &err), CTXC_E_EXISTS);
    assert_int_not_equal(
        ctxc_fs_write_atomic(&fs, "f/g.txt", NEW, strlen(NEW), &err), CTXC_OK);
    assert_has(ctxc_error_message(&err), "f");
    assert_content(&fs, "f", OLD);
    /* a directory in the way of a write on the real fs */
    assert_int_equal(ctxc_fs_mkdirs(&fs, "dir", &err), CTXC_OK);
    assert_int_equal(ctxc_fs_write_atomic(&fs, "dir", NEW, strlen(NEW), &err),
                     CTXC_E_EXISTS);
    assert_int_equal(kind_of(&fs, "dir"), CTXC_FS_DIR);
    assert_no_temp(&fs, "", false);
}

/* ---- 7. a session with a port ------------------------------------------ */

#define BIG_ENTRIES 1024
CTXC_HISTORY_DEFINE(big, BIG_ENTRIES, 1 << 17);
CTXC_HISTORY_DEFINE(copy, BIG_ENTRIES, 1 << 17);
CTXC_WORK_DEFINE(bigwork, BIG_ENTRIES, 16384);
CTXC_HISTORY_DEFINE(small, 64, 32768);
CTXC_WORK_DEFINE(smallwork, 64, 8192);
static t_dump_t dump1, dump2;

/* The session settings of this suite: a store without a filesystem
 * (static: it is large, and the sessions of the threads below read it
 * through the pointer they keep). */
static ctxc_settings_store_t port_set;

static ctxc_settings_store_t *port_settings(const char *strategy,
                                            uint64_t context_limit) {
    ctxc_settings_init(&port_set, NULL);
    t_set(&port_set, "compression.strategy", strategy);
    t_set_uint(&port_set, "context-limit", context_limit);
    return &port_set;
}

typedef struct {
    ctxc_session_t *s;
    unsigned id;
    unsigned count;
    uint64_t tokens; /* sum of the estimates of what was added */
    int failures;
    ctxc_status_t first_bad;
} adder_t;

static void *adder_main(void *arg) {
    adder_t *a = arg;
    for (unsigned k = 0; k < a->count; k++) {
        char text[64];
        snprintf(text, sizeof text, "w%u n%u alpha beta gamma delta", a->id, k);
        ctxc_block_t b = t_text(text);
        ctxc_entry_in_t in = {a->id % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                              &b, 1, CTXC_STR_ABSENT};
        ctxc_error_t err;
        ctxc_status_t st = ctxc_session_add(a->s, &in, &err);
        if (st != CTXC_OK) {
            if (a->failures++ == 0) {
                a->first_bad = st;
            }
            continue;
        }
        a->tokens += ctxc_estimate_block_default(NULL, &b);
    }
    return NULL;
}

/* Each writer's entries appear in increasing order; returns how many of
 * writer `id` are stored, and checks the sum of the cached estimates. */
static void check_history_order(const ctxc_history_t *h, unsigned writers,
                                unsigned *per_writer) {
    long last[8];
    for (unsigned w = 0; w < writers; w++) {
        last[w] = -1;
        per_writer[w] = 0;
    }
    uint64_t sum = 0;
    for (size_t i = 0; i < ctxc_history_count(h); i++) {
        ctxc_entry_t e;
        assert_int_equal(ctxc_history_get(h, i, &e), CTXC_OK);
        sum += e.tokens;
        unsigned w, k;
        if (sscanf(t_block_text(h, i, 0), "w%u n%u", &w, &k) != 2 ||
            w >= writers) {
            fail_msg("entry %zu: unexpected text '%s'", i,
                     t_block_text(h, i, 0));
        }
        if ((long)k <= last[w]) {
            fail_msg("entry %zu: writer %u entry %u after %ld", i, w, k,
                     last[w]);
        }
        last[w] = (long)k;
        per_writer[w]++;
    }
    assert_int_equal(sum, ctxc_history_tokens(h));
}

static void session_port_mutex_serialises_adds(void **state) {
    (void)state;
    char root[1024];
    new_root(root, sizeof root);
    ctxc_posix_port_t p;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_port_init(&p, root, CTXC_LOG_ERROR, &err),
                     CTXC_OK);
    ctxc_history_clear(&big);
    ctxc_settings_store_t *set = port_settings("top-down-truncation", 100000);
    ctxc_session_t s;
    assert_int_equal(ctxc_session_init(&s, &big, &bigwork, set, &err), CTXC_OK);
    ctxc_session_set_port(&s, &p.port);

    enum { N = 4, PER = 250 };
    adder_t a[N];
    pthread_t t[N];
    for (unsigned i = 0; i < N; i++) {
        a[i] = (adder_t){&s, i, PER, 0, 0, CTXC_OK};
    }
    for (unsigned i = 0; i < N; i++) {
        assert_int_equal(pthread_create(&t[i], NULL, adder_main, &a[i]), 0);
    }
    for (unsigned i = 0; i < N; i++) {
        pthread_join(t[i], NULL);
    }
    uint64_t expected = 0;
    for (unsigned i = 0; i < N; i++) {
        if (a[i].failures != 0) {
            fail_msg("adder %u: %d failures, first %s", i, a[i].failures,
                     ctxc_status_name(a[i].first_bad));
        }
        expected += a[i].tokens;
    }
    assert_int_equal(ctxc_history_count(&big), N * PER);
    assert_int_equal(ctxc_history_tokens(&big), expected);
    unsigned per[N];
    check_history_order(&big, N, per);
    for (unsigned i = 0; i < N; i++) {
        assert_int_equal(per[i], PER);
    }
    ctxc_posix_port_deinit(&p);
}

typedef struct {
    ctxc_session_t *s;
    atomic_int *adders_done;
    int calls;
    int compressions;
    int failures;
    char first_error[CTXC_CFG_ERROR_MESSAGE_LEN + 32];
} sender_t;

static void *sender_main(void *arg) {
    sender_t *x = arg;
    for (;;) {
        /* one more call after the adders are done: it sees every entry */
        bool finished = atomic_load(x->adders_done) != 0;
        ctxc_send_report_t rep;
        ctxc_error_t err;
        ctxc_status_t st = ctxc_session_before_send(x->s, 0, &rep, &err);
        x->calls++;
        if (st != CTXC_OK) {
            if (x->failures++ == 0) {
                snprintf(x->first_error, sizeof x->first_error, "%s: %s",
                         ctxc_status_name(st), ctxc_error_message(&err));
            }
        } else if (rep.compressed) {
            x->compressions++;
        }
        if (finished && x->calls >= 50) {
            break;
        }
    }
    return NULL;
}

static void session_port_before_send_while_adding(void **state) {
    (void)state;
    char root[1024];
    new_root(root, sizeof root);
    ctxc_posix_port_t p;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_port_init(&p, root, CTXC_LOG_ERROR, &err),
                     CTXC_OK);
    ctxc_history_clear(&big);
    ctxc_settings_store_t *set = port_settings("top-down-truncation", 300);
    ctxc_session_t s;
    assert_int_equal(ctxc_session_init(&s, &big, &bigwork, set, &err), CTXC_OK);
    ctxc_session_set_port(&s, &p.port);

    atomic_int adders_done;
    atomic_init(&adders_done, 0);
    adder_t a[2] = {{&s, 0, 400, 0, 0, CTXC_OK}, {&s, 1, 400, 0, 0, CTXC_OK}};
    sender_t x = {&s, &adders_done, 0, 0, 0, ""};
    pthread_t ts, t0, t1;
    assert_int_equal(pthread_create(&ts, NULL, sender_main, &x), 0);
    assert_int_equal(pthread_create(&t0, NULL, adder_main, &a[0]), 0);
    assert_int_equal(pthread_create(&t1, NULL, adder_main, &a[1]), 0);
    pthread_join(t0, NULL);
    pthread_join(t1, NULL);
    atomic_store(&adders_done, 1);
    pthread_join(ts, NULL);

    for (unsigned i = 0; i < 2; i++) {
        if (a[i].failures != 0) {
            fail_msg("adder %u: %d failures, first %s", i, a[i].failures,
                     ctxc_status_name(a[i].first_bad));
        }
    }
    if (x.failures != 0) {
        fail_msg("before_send: %d of %d calls failed, first: %s", x.failures,
                 x.calls, x.first_error);
    }
    assert_true(x.compressions > 0);
    /* the sender's last call came after the last add */
    assert_true(ctxc_history_tokens(&big) <= 300);
    assert_true(ctxc_history_count(&big) >= 2);
    unsigned per[2];
    check_history_order(&big, 2, per);

    /* the history exports and re-imports cleanly */
    t_dump(&big, &dump1);
    assert_true(dump1.len > 0);
    t_import(&copy, dump1.buf);
    assert_int_equal(ctxc_history_count(&copy), ctxc_history_count(&big));
    t_dump(&copy, &dump2);
    assert_string_equal(dump2.buf, dump1.buf);
    ctxc_posix_port_deinit(&p);
}

/* A fake port: a scripted clock and a log that keeps its lines. */
typedef struct {
    uint64_t seq[2];
    unsigned next;
} fake_clock_t;

static uint64_t fake_clock(void *ctx) {
    fake_clock_t *c = ctx;
    uint64_t v = c->seq[c->next];
    if (c->next < 1) {
        c->next++;
    }
    return v;
}

typedef struct {
    size_t n;
    ctxc_log_level_t level[8];
    char line[8][CTXC_CFG_LOG_LINE_LEN + 64];
} fake_log_t;

static void fake_log(void *ctx, ctxc_log_level_t level, const char *msg) {
    fake_log_t *l = ctx;
    if (l->n < 8) {
        l->level[l->n] = level;
        snprintf(l->line[l->n], sizeof l->line[l->n], "%s", msg);
    }
    l->n++;
}

static void fake_port(ctxc_port_t *p, fake_clock_t *c, fake_log_t *l,
                      ctxc_log_level_t level) {
    memset(p, 0, sizeof *p);
    memset(c, 0, sizeof *c);
    memset(l, 0, sizeof *l);
    c->seq[0] = 1000;
    c->seq[1] = 1250;
    p->clock = fake_clock;
    p->clock_ctx = c;
    p->log = fake_log;
    p->log_ctx = l;
    p->log_level = level;
}

/* 20 entries of 10 tokens each. */
static void twenty_entries(void) {
    ctxc_history_clear(&small);
    for (int i = 0; i < 20; i++) {
        t_add_text(&small, i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN,
                   "one two three four five six seven eight");
    }
    assert_int_equal(ctxc_history_tokens(&small), 200);
}

static void session_port_clock_and_log(void **state) {
    (void)state;
    ctxc_port_t port;
    fake_clock_t clk;
    fake_log_t logs;
    fake_port(&port, &clk, &logs, CTXC_LOG_INFO);
    twenty_entries();
    ctxc_settings_store_t *set = port_settings("top-down-truncation", 200);
    ctxc_session_t s;
    ctxc_error_t err;
    assert_int_equal(ctxc_session_init(&s, &small, &smallwork, set, &err),
                     CTXC_OK);
    ctxc_session_set_port(&s, &port);
    if (ctxc_session_compress(&s, &err) != CTXC_OK) {
        fail_msg("compress: %s", ctxc_error_message(&err));
    }
    assert_int_equal(s.last_compress_ms, 250);
    assert_int_equal(s.last_compress.original_count, 20);
    assert_true(s.last_compress.compressed_count < 20);
    assert_int_equal(s.last_compress.tokens_before, 200);
    assert_int_equal(ctxc_history_count(&small),
                     s.last_compress.compressed_count);
    assert_int_equal(logs.n, 1);
    assert_int_equal(logs.level[0], CTXC_LOG_INFO);
    char want[256];
    snprintf(want, sizeof want,
             "compressed with top-down-truncation: %zu -> %zu entries, "
             "%llu -> %llu tokens",
             s.last_compress.original_count, s.last_compress.compressed_count,
             (unsigned long long)s.last_compress.tokens_before,
             (unsigned long long)s.last_compress.tokens_after);
    assert_string_equal(logs.line[0], want);

    /* at CTXC_LOG_ERROR no line is logged; the clock still times it */
    fake_port(&port, &clk, &logs, CTXC_LOG_ERROR);
    twenty_entries();
    assert_int_equal(ctxc_session_init(&s, &small, &smallwork, set, &err),
                     CTXC_OK);
    ctxc_session_set_port(&s, &port);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    assert_int_equal(logs.n, 0);
    assert_int_equal(s.last_compress_ms, 250);

    /* without a port: no time */
    twenty_entries();
    assert_int_equal(ctxc_session_init(&s, &small, &smallwork, set, &err),
                     CTXC_OK);
    assert_int_equal(ctxc_session_compress(&s, &err), CTXC_OK);
    assert_int_equal(s.last_compress_ms, 0);
}

static void port_log_cuts_long_lines_and_filters_levels(void **state) {
    (void)state;
    ctxc_port_t port;
    fake_clock_t clk;
    fake_log_t logs;
    fake_port(&port, &clk, &logs, CTXC_LOG_DEBUG);
    static char long_text[CTXC_CFG_LOG_LINE_LEN * 3];
    for (size_t i = 0; i < sizeof long_text - 1; i++) {
        long_text[i] = (char)('a' + i % 26);
    }
    long_text[sizeof long_text - 1] = '\0';
    ctxc_port_log(&port, CTXC_LOG_DEBUG, "%s", long_text);
    assert_int_equal(logs.n, 1);
    assert_int_equal(strlen(logs.line[0]), CTXC_CFG_LOG_LINE_LEN - 1);
    assert_memory_equal(logs.line[0], long_text, CTXC_CFG_LOG_LINE_LEN - 1);

    /* formatting */
    ctxc_port_log(&port, CTXC_LOG_ERROR, "n=%z u=%u s=%s", (size_t)42, 7u, "x");
    assert_int_equal(logs.n, 2);
    assert_string_equal(logs.line[1], "n=42 u=7 s=x");
    assert_int_equal(logs.level[1], CTXC_LOG_ERROR);

    /* levels above log_level are not logged */
    port.log_level = CTXC_LOG_WARN;
    ctxc_port_log(&port, CTXC_LOG_INFO, "info");
    ctxc_port_log(&port, CTXC_LOG_DEBUG, "debug");
    assert_int_equal(logs.n, 2);
    ctxc_port_log(&port, CTXC_LOG_WARN, "warn");
    assert_int_equal(logs.n, 3);
    assert_string_equal(logs.line[2], "warn");
}

static void port_null_port_and_hooks_are_harmless(void **state) {
    (void)state;
    ctxc_port_log(NULL, CTXC_LOG_ERROR, "nothing %s", "here");
    ctxc_port_t port;
    memset(&port, 0, sizeof port);
    port.log_level = CTXC_LOG_DEBUG;
    ctxc_port_log(&port, CTXC_LOG_ERROR, "no log hook");
    assert_int_equal(ctxc_port_now_ms(NULL), 0);
    assert_int_equal(ctxc_port_now_ms(&port), 0);
    fake_clock_t clk;
    fake_log_t logs;
    fake_port(&port, &clk, &logs, CTXC_LOG_DEBUG);
    assert_int_equal(ctxc_port_now_ms(&port), 1000);
    assert_int_equal(ctxc_port_now_ms(&port), 1250);
    ctxc_port_log(&port, CTXC_LOG_ERROR, NULL);
    assert_int_equal(logs.n, 0);

    /* the POSIX clock is monotonic */
    ctxc_posix_port_t p;
    ctxc_error_t err;
    assert_int_equal(ctxc_posix_port_init(&p, "/nonexistent/ctxc-root",
                                          CTXC_LOG_ERROR, &err),
                     CTXC_OK);
    uint64_t t0 = ctxc_port_now_ms(&p.port);
    uint64_t t1 = ctxc_port_now_ms(&p.port);
    assert_true(t1 >= t0);
    assert_true(t0 > 0);
    assert_non_null(p.port.mutex.lock);
    p.port.mutex.lock(p.port.mutex.ctx);
    p.port.mutex.unlock(p.port.mutex.ctx);
    ctxc_posix_port_deinit(&p);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(path_check_accepts_valid_paths),
        cmocka_unit_test(path_check_rejects_invalid_paths),
        cmocka_unit_test(path_check_rejects_bad_paths_at_every_entry_point),
        cmocka_unit_test(is_temp_name_recognises_core_temp_names),
        cmocka_unit_test(atomic_write_creates_file_and_parents),
        cmocka_unit_test(atomic_write_path_length_leaves_room_for_temp_name),
        cmocka_unit_test(atomic_write_replaces_existing_file),
        cmocka_unit_test(atomic_write_directory_in_the_way_is_exists),
        cmocka_unit_test(atomic_write_on_read_only_mem_fs_changes_nothing),
        cmocka_unit_test(atomic_write_without_write_hooks_is_read_only),
        cmocka_unit_test(null_fs_reads_as_empty),
        cmocka_unit_test(atomic_write_fault_at_each_step_mem),
        cmocka_unit_test(atomic_write_fault_at_each_step_posix),
        cmocka_unit_test(atomic_write_skips_stale_temp_name),
        cmocka_unit_test(atomic_write_all_temp_names_taken_is_exists),
        cmocka_unit_test(concurrent_writers_never_tear_a_file),
        cmocka_unit_test_setup_teardown(posix_init_explicit_root, env_setup,
                                        env_teardown),
        cmocka_unit_test_setup_teardown(posix_init_root_from_environment,
                                        env_setup, env_teardown),
        cmocka_unit_test(posix_init_relative_root_is_invalid),
        cmocka_unit_test(posix_entropy_fills_and_differs),
        cmocka_unit_test(posix_root_created_0700_on_first_write),
        cmocka_unit_test(posix_read_errors),
        cmocka_unit_test(posix_read_refuses_non_regular_files),
        cmocka_unit_test(posix_stat_kinds),
        cmocka_unit_test(posix_list_entries),
        cmocka_unit_test(posix_remove),
        cmocka_unit_test(posix_mkdir_over_a_file_is_exists),
        cmocka_unit_test(session_port_mutex_serialises_adds),
        cmocka_unit_test(session_port_before_send_while_adding),
        cmocka_unit_test(session_port_clock_and_log),
        cmocka_unit_test(port_log_cuts_long_lines_and_filters_levels),
        cmocka_unit_test(port_null_port_and_hooks_are_harmless),
    };
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
