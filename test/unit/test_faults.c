/*
 * Fault injection (issue 16): every port call that can fail fails, one at a
 * time, at every position, and every memory area is too small at every
 * size, for the operations that write state:
 *
 *   filesystem faults  (read, mkdir, create, write (torn), sync, close,
 *                       rename, remove: the n-th call of one kind fails,
 *                       for n = 1, 2, ... until the operation runs through)
 *     - a persistent setting (settings.json)
 *     - a profile save (profiles/<name>.json)
 *     - the prompt installer (prompt files and the manifest)
 *     - a history saved as JSONL through the port (export, then
 *       ctxc_fs_write_atomic: what a firmware's /save does)
 *   clock faults       (0, backwards, huge jumps) under every compression
 *                       through the session, with each LLM-free strategy
 *   exhaustion         (every size from 0 up to what the operation needs)
 *     - import: arena bytes and entry slots
 *     - density step and each strategy's compress: work-area scratch
 *     - plan application: arena bytes
 *
 * After each faulted run: a failed call says why, and the state is the old
 * one (history byte-identical, files with their old content) or, when the
 * operation reports success, the new one; no file is torn or missing, no
 * temporary file is left, and the same operation without the fault then
 * succeeds. For space: CTXC_E_NO_SPACE with err->needed (for import and
 * plans the whole shortfall; for the density step and compress that of the
 * entry that did not fit, so growing by it repeatedly gets through). The
 * suite prints how many faults it injected and
 * their outcomes.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/plan.h"
#include "ctxc/prompt.h"
#define MEM_FS_FILES 24
#define MEM_FS_FILE_BYTES (96 * 1024)
#include "fake_fs.h"
#include "support.h"

/* ---- the outcome counts ---------------------------------------------------
 */

typedef struct {
    unsigned injected;  /* faults that fired */
    unsigned refused;   /* ... the operation failed, old state kept */
    unsigned completed; /* ... the operation still succeeded, new state */
    unsigned runs;      /* operations run (with and without a fault) */
} tally_t;

static tally_t tally_fs, tally_clock, tally_space;

static void print_tally(const char *what, const tally_t *t) {
    printf("faults: %-28s %5u runs, %5u faults injected: %5u refused "
           "(old state kept), %5u completed (new state)\n",
           what, t->runs, t->injected, t->refused, t->completed);
}

/* ---- filesystem faults ----------------------------------------------------
 */

static mem_fs_t mfs;
static mem_fs_t mfs_before; /* the world before the operation */
static mem_fs_t mfs_after;  /* ... and after it ran without faults */
static fault_fs_t ffs;

static const char *const op_names[FAULT_COUNT_] = {"none",   "mkdir", "create",
                                                   "write",  "sync",  "close",
                                                   "rename", "read",  "remove"};

/* True when the files of a and b (not directories) are the same, ignoring
 * the core's temporary names, which are reported separately. */
static bool same_files(const mem_fs_t *a, const mem_fs_t *b) {
    for (int pass = 0; pass < 2; pass++) {
        const mem_fs_t *x = pass == 0 ? a : b;
        const mem_fs_t *y = pass == 0 ? b : a;
        for (size_t i = 0; i < MEM_FS_FILES; i++) {
            const mem_node_t *n = &x->nodes[i];
            if (!n->used || n->dir) {
                continue;
            }
            const mem_node_t *m = mem_find((mem_fs_t *)y, n->path);
            if (m == NULL || m->dir || m->len != n->len ||
                memcmp(m->data, n->data, n->len) != 0) {
                return false;
            }
        }
    }
    return true;
}

static const char *temp_file(const mem_fs_t *m) {
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        const mem_node_t *n = &m->nodes[i];
        const char *base = strrchr(n->path, '/');
        base = base != NULL ? base + 1 : n->path;
        if (n->used && !n->dir && ctxc_fs_is_temp_name(base)) {
            return n->path;
        }
    }
    return NULL;
}

/* One operation over a filesystem: prepare() sets up the world in mfs (run
 * once), run() does the operation over fs. */
typedef struct {
    const char *name;
    void (*prepare)(void);
    ctxc_status_t (*run)(const ctxc_fs_t *fs, ctxc_error_t *err);
    /* the new state may differ from one fault-free run to the next (none
     * here); files the operation may legitimately leave half-way: when an
     * operation writes several files one by one (the prompt installer),
     * a failure keeps the ones written before it */
    bool partial_ok;
} fs_op_t;

/* A failure after some files were written (partial_ok): each file holds its
 * old or its new content. */
static void assert_each_file_old_or_new(const char *op, const char *fault,
                                        unsigned n) {
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        const mem_node_t *f = &mfs.nodes[i];
        if (!f->used || f->dir) {
            continue;
        }
        const mem_node_t *o = mem_find(&mfs_before, f->path);
        const mem_node_t *w = mem_find(&mfs_after, f->path);
        bool is_old = o != NULL && o->len == f->len &&
                      memcmp(o->data, f->data, f->len) == 0;
        bool is_new = w != NULL && w->len == f->len &&
                      memcmp(w->data, f->data, f->len) == 0;
        if (!is_old && !is_new) {
            fail_msg("%s, %s fault #%u: %s is neither old nor new (torn)", op,
                     fault, n, f->path);
        }
    }
    for (size_t i = 0; i < MEM_FS_FILES; i++) {
        const mem_node_t *o = &mfs_before.nodes[i];
        if (o->used && !o->dir && mem_find(&mfs, o->path) == NULL) {
            fail_msg("%s, %s fault #%u: %s went missing", op, fault, n,
                     o->path);
        }
    }
}

static void run_fs_faults(const fs_op_t *op) {
    ctxc_error_t err;
    /* the reference: the operation without faults */
    memset(&mfs, 0, sizeof mfs);
    op->prepare();
    mfs_before = mfs;
    ctxc_fs_t plain = mem_fs(&mfs);
    tally_fs.runs++;
    if (op->run(&plain, &err) != CTXC_OK) {
        fail_msg("%s without faults: %s", op->name, err.message);
    }
    mfs_after = mfs;
    assert_false(same_files(&mfs_before, &mfs_after));

    for (int k = FAULT_MKDIR; k < FAULT_COUNT_; k++) {
        for (unsigned n = 1; n < 200; n++) {
            mfs = mfs_before;
            ctxc_fs_t fs = fault_fs(&ffs, mem_fs(&mfs), (fault_op_t)k, n);
            memset(&err, 0, sizeof err);
            tally_fs.runs++;
            ctxc_status_t st = op->run(&fs, &err);
            if (!ffs.fired) {
                /* fewer than n calls of this kind: done with it */
                if (st != CTXC_OK) {
                    fail_msg("%s with no fault fired: %s", op->name,
                             err.message);
                }
                break;
            }
            tally_fs.injected++;
            const char *tmp = temp_file(&mfs);
            if (tmp != NULL) {
                fail_msg("%s, %s fault #%u: temporary file %s left behind",
                         op->name, op_names[k], n, tmp);
            }
            if (st == CTXC_OK) {
                tally_fs.completed++;
                if (!same_files(&mfs, &mfs_after)) {
                    fail_msg("%s reported success over a %s fault #%u but "
                             "the files are not the new ones",
                             op->name, op_names[k], n);
                }
            } else {
                tally_fs.refused++;
                assert_int_equal(err.status, st);
                assert_true(err.message[0] != '\0');
                if (op->partial_ok) {
                    assert_each_file_old_or_new(op->name, op_names[k], n);
                } else if (!same_files(&mfs, &mfs_before)) {
                    fail_msg("%s failed on a %s fault #%u (%s) but changed "
                             "the files",
                             op->name, op_names[k], n, err.message);
                }
            }
            /* the next run without faults succeeds, with the new state */
            ctxc_fs_t again = mem_fs(&mfs);
            tally_fs.runs++;
            if (op->run(&again, &err) != CTXC_OK) {
                fail_msg("%s after a %s fault #%u: the retry fails: %s",
                         op->name, op_names[k], n, err.message);
            }
            if (!same_files(&mfs, &mfs_after)) {
                fail_msg("%s after a %s fault #%u: the retry does not give "
                         "the same files",
                         op->name, op_names[k], n);
            }
        }
    }
}

/* settings.json: one key set persistently, over an older file */
static ctxc_settings_store_t store;

static void prep_settings(void) {
    mem_put(&mfs, "settings.json", "{\"context-limit\":64000}");
    mem_put(&mfs, "profiles/old.json", "{\"model\":\"small\"}");
}

static ctxc_status_t op_settings(const ctxc_fs_t *fs, ctxc_error_t *err) {
    ctxc_settings_init(&store, fs);
    (void)ctxc_settings_load(&store, NULL); /* a read fault: file_bad */
    return ctxc_settings_persist_set(&store, "compression.strategy",
                                     "top-down-truncation", err);
}

static ctxc_status_t op_profile(const ctxc_fs_t *fs, ctxc_error_t *err) {
    ctxc_settings_init(&store, fs);
    ctxc_status_t st = ctxc_settings_set(&store, "model", "tiny", err);
    if (st == CTXC_OK) {
        st = ctxc_settings_set(&store, "context-limit", "8000", err);
    }
    return st != CTXC_OK ? st
                         : ctxc_settings_profile_save(&store, "old", NULL, err);
}

static ctxc_status_t op_profile_delete(const ctxc_fs_t *fs, ctxc_error_t *err) {
    ctxc_settings_init(&store, fs);
    return ctxc_settings_profile_delete(&store, "old", err);
}

/* the prompt installer on a filesystem with an older manifest */
static char prompt_scratch[1 << 15];

static void prep_prompts(void) {
    mem_put(&mfs, CTXC_PROMPT_MANIFEST, "# ctxc prompt manifest\n");
}

static ctxc_status_t op_prompts(const ctxc_fs_t *fs, ctxc_error_t *err) {
    return ctxc_prompts_install(fs, prompt_scratch, sizeof prompt_scratch, NULL,
                                NULL, err);
}

/* a history saved through the port */
CTXC_HISTORY_DEFINE(hist, 256, 1u << 17);
static t_dump_t save_text;

static void prep_history(void) {
    mem_put(&mfs, "sessions/today.jsonl",
            "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"old\"}]}\n");
}

static ctxc_status_t op_history_save(const ctxc_fs_t *fs, ctxc_error_t *err) {
    save_text.len = 0;
    ctxc_status_t st = ctxc_export(&hist, t_dump_write, &save_text, err);
    return st != CTXC_OK
               ? st
               : ctxc_fs_write_atomic(fs, "sessions/today.jsonl", save_text.buf,
                                      save_text.len, err);
}

static char example[1 << 17];

static void load_example(void) {
    FILE *f = fopen(
        CTXC_SOURCE_DIR "/boards/host/examples/coding-session.jsonl", "rb");
    assert_non_null(f);
    size_t n = fread(example, 1, sizeof example - 1, f);
    fclose(f);
    assert_true(n > 0 && n < sizeof example - 1);
    example[n] = '\0';
}

static void test_filesystem_faults(void **state) {
    (void)state;
    static const fs_op_t ops[] = {
        {"settings persist set", prep_settings, op_settings, false},
        {"profile save", prep_settings, op_profile, false},
        {"profile delete", prep_settings, op_profile_delete, false},
        {"prompt install", prep_prompts, op_prompts, true},
        {"history save", prep_history, op_history_save, false},
    };
    load_example();
    t_import(&hist, example);
    for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
        tally_t before = tally_fs;
        run_fs_faults(&ops[i]);
        tally_t d = {tally_fs.injected - before.injected,
                     tally_fs.refused - before.refused,
                     tally_fs.completed - before.completed,
                     tally_fs.runs - before.runs};
        assert_true(d.injected > 0);
        print_tally(ops[i].name, &d);
    }
    print_tally("filesystem, all", &tally_fs);
}

/* ---- clock faults ---------------------------------------------------------
 */

CTXC_WORK_DEFINE(work, 256, 1u << 16);
static ctxc_session_t sess;
static t_snap_t expect_snap, before_snap;

typedef enum {
    CLOCK_ZERO,
    CLOCK_BACKWARDS,
    CLOCK_JUMPS,
    CLOCK_KINDS
} clock_kind_t;

typedef struct {
    clock_kind_t kind;
    uint64_t t;
} fake_clock_t;

static uint64_t fake_clock(void *ctx) {
    fake_clock_t *c = ctx;
    switch (c->kind) {
    case CLOCK_ZERO:
        return 0;
    case CLOCK_BACKWARDS:
        c->t = c->t > 1000 ? c->t - 1000 : UINT64_MAX;
        return c->t;
    default:
        c->t += UINT64_MAX / 3;
        return c->t;
    }
}

static void session_with(ctxc_settings_store_t *st, const char *strategy,
                         const char *limit, const ctxc_port_t *port) {
    ctxc_settings_init(st, NULL);
    t_set(st, "compression.strategy", strategy);
    t_set(st, "context-limit", limit);
    assert_int_equal(ctxc_session_init(&sess, &hist, &work, st, NULL), CTXC_OK);
    ctxc_session_set_port(&sess, port);
}

static void compress_all(void) {
    ctxc_error_t err;
    if (ctxc_session_optimize(&sess, &err) != CTXC_OK ||
        ctxc_session_compress(&sess, &err) != CTXC_OK) {
        fail_msg("compression: %s", err.message);
    }
}

static void test_clock_faults(void **state) {
    (void)state;
    static const char *const strategies[] = {"high-density",
                                             "top-down-truncation"};
    load_example();
    for (size_t s = 0; s < 2; s++) {
        /* the reference: no clock at all */
        t_import(&hist, example);
        session_with(&store, strategies[s], "9000", NULL);
        compress_all();
        t_snapshot(&hist, &expect_snap);
        for (int k = 0; k < CLOCK_KINDS; k++) {
            fake_clock_t c = {(clock_kind_t)k, 5000};
            ctxc_port_t port;
            memset(&port, 0, sizeof port);
            port.clock = fake_clock;
            port.clock_ctx = &c;
            t_import(&hist, example);
            session_with(&store, strategies[s], "9000", &port);
            tally_clock.runs++;
            tally_clock.injected++;
            compress_all();
            tally_clock.completed++;
            t_assert_unchanged(&hist, &expect_snap);
        }
    }
    print_tally("clock (0, backwards, jumps)", &tally_clock);
}

/* ---- exhaustion -----------------------------------------------------------
 */

static ctxc_slot_t small_slots[64];
static uint8_t small_arena[1 << 14] __attribute__((aligned(8)));
static ctxc_history_t small;
static ctxc_import_t imp;

static const char *small_text(void) {
    static char text[4096];
    FILE *f = fopen(CTXC_TEST_DATA_DIR "/cli_small.jsonl", "rb");
    assert_non_null(f);
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    return text;
}

/* Import into an arena of every size, then into every slot count: each
 * too-small store answers CTXC_E_NO_SPACE (or CTXC_E_TOO_LARGE for a line
 * larger than the whole arena), keeps nothing, and a store larger by
 * err->needed takes that line. */
static void test_import_exhaustion(void **state) {
    (void)state;
    const char *text = small_text();
    size_t len = strlen(text);
    ctxc_error_t err;
    /* what it needs */
    assert_int_equal(ctxc_history_init(&small, small_slots, 64, small_arena,
                                       sizeof small_arena, NULL),
                     CTXC_OK);
    assert_int_equal(
        ctxc_import_text(&imp, &small, text, len, CTXC_FORMAT_ICONTENT, NULL),
        CTXC_OK);
    size_t need_bytes = small.used, need_entries = small.count;
    for (size_t bytes = 64; bytes <= need_bytes; bytes++) {
        assert_int_equal(ctxc_history_init(&small, small_slots, 64, small_arena,
                                           bytes, NULL),
                         CTXC_OK);
        tally_space.runs++;
        ctxc_status_t st = ctxc_import_text(&imp, &small, text, len,
                                            CTXC_FORMAT_ICONTENT, &err);
        if (bytes == need_bytes) {
            assert_int_equal(st, CTXC_OK);
            break;
        }
        tally_space.injected++;
        tally_space.refused++;
        if (st != CTXC_E_NO_SPACE && st != CTXC_E_TOO_LARGE) {
            fail_msg("arena %zu: %s (%s)", bytes, ctxc_status_name(st),
                     err.message);
        }
        assert_int_equal(ctxc_history_count(&small), 0);
        assert_int_equal(small.used, 0);
        if (st == CTXC_E_NO_SPACE) {
            assert_true(err.needed > 0);
            /* the line that failed fits with err->needed more bytes */
            assert_true(err.line >= 1);
        }
    }
    for (size_t entries = 1; entries < need_entries; entries++) {
        assert_int_equal(ctxc_history_init(&small, small_slots, entries,
                                           small_arena, sizeof small_arena,
                                           NULL),
                         CTXC_OK);
        tally_space.runs++;
        tally_space.injected++;
        assert_int_equal(ctxc_import_text(&imp, &small, text, len,
                                          CTXC_FORMAT_ICONTENT, &err),
                         CTXC_E_NO_SPACE);
        tally_space.refused++;
        assert_true(err.needed > 0);
        assert_int_equal(ctxc_history_count(&small), 0);
    }
}

/* The arena ends where its bytes do: the session stages a step's inserted
 * records in the arena's free tail when that is larger than the work
 * scratch, so the scratch sizes below are all there is only without one.
 * The arena's own threshold is put out of the way. */
static void no_free_tail(void) {
    hist.arena_bytes = hist.used;
    t_set(&store, "compression.bytes-threshold", "1");
    t_set(&store, "compression.reserve-bytes", "0");
}

/* The density step and each strategy's compress with every scratch size
 * from 0 up (and no free tail in the arena): CTXC_E_NO_SPACE, history
 * unchanged, and the size plus err->needed is enough. */
static void scratch_sweep(const char *strategy, const char *limit,
                          bool density) {
    ctxc_error_t err;
    size_t full = work.scratch_cap;
    load_example();
    size_t min_ok = 0;
    size_t step = 64; /* sizes sampled every 64 bytes, then every size
                         in the 64 below the first that works */
    for (size_t cap = 0; cap <= full; cap += step) {
        hist.arena_bytes = 1u << 17;
        t_import(&hist, example);
        session_with(&store, strategy, limit, NULL);
        if (!density) {
            assert_int_equal(ctxc_session_optimize(&sess, NULL), CTXC_OK);
        }
        no_free_tail();
        t_snapshot(&hist, &before_snap);
        work.scratch_cap = cap;
        tally_space.runs++;
        ctxc_status_t st = density ? ctxc_session_optimize(&sess, &err)
                                   : ctxc_session_compress(&sess, &err);
        work.scratch_cap = full;
        if (st == CTXC_OK) {
            if (step > 1 && cap > 0) {
                cap -= step; /* the loop adds 1: every size from here */
                step = 1;
                continue;
            }
            min_ok = cap;
            break;
        }
        tally_space.injected++;
        tally_space.refused++;
        if (st != CTXC_E_NO_SPACE) {
            fail_msg("%s %s, scratch %zu: %s (%s)", strategy,
                     density ? "density step" : "compress", cap,
                     ctxc_status_name(st), err.message);
        }
        assert_true(err.needed > 0);
        t_assert_unchanged(&hist, &before_snap);
        /* the reported shortfall is that of the entry that did not fit
         * (the step stops there): growing the scratch by it, again and
         * again, gets through, once per entry at most */
        size_t grown = cap, rounds = 0;
        for (;;) {
            grown = grown + err.needed <= full ? grown + err.needed : full;
            hist.arena_bytes = 1u << 17;
            t_import(&hist, example);
            session_with(&store, strategy, limit, NULL);
            if (!density) {
                assert_int_equal(ctxc_session_optimize(&sess, NULL), CTXC_OK);
            }
            no_free_tail();
            work.scratch_cap = grown;
            st = density ? ctxc_session_optimize(&sess, &err)
                         : ctxc_session_compress(&sess, &err);
            work.scratch_cap = full;
            rounds++;
            if (st == CTXC_OK) {
                break;
            }
            assert_int_equal(st, CTXC_E_NO_SPACE);
            assert_true(err.needed > 0);
            if (rounds > ctxc_history_count(&hist) || grown == full) {
                fail_msg("%s %s from scratch %zu: still short after %zu "
                         "rounds (%zu bytes)",
                         strategy, density ? "density step" : "compress", cap,
                         rounds, grown);
            }
        }
    }
    printf("faults: %s %s needs %zu scratch bytes\n", strategy,
           density ? "density step" : "compress", min_ok);
}

static void test_work_area_exhaustion(void **state) {
    (void)state;
    unsigned before = tally_space.injected;
    scratch_sweep("high-density", "9000", true);
    scratch_sweep("high-density", "9000", false);
    /* the sweeps met too-small areas (top-down writes no entries: it needs
     * none) */
    assert_true(tally_space.injected > before + 100);
    scratch_sweep("top-down-truncation", "9000", false);
    hist.arena_bytes = 1u << 17;
}

/* A plan that replaces an entry with a larger one, applied to arenas of
 * every size up to what it needs: CTXC_E_NO_SPACE, history unchanged. */
static void test_plan_apply_exhaustion(void **state) {
    (void)state;
    static char big[2048];
    memset(big, 'x', sizeof big - 1);
    ctxc_error_t err;
    const char *text = small_text();
    size_t len = strlen(text);
    size_t need = 0;
    for (size_t bytes = 1313; bytes < sizeof small_arena; bytes++) {
        assert_int_equal(ctxc_history_init(&small, small_slots, 64, small_arena,
                                           bytes, NULL),
                         CTXC_OK);
        if (ctxc_import_text(&imp, &small, text, len, CTXC_FORMAT_ICONTENT,
                             NULL) != CTXC_OK) {
            continue;
        }
        t_snapshot(&small, &before_snap);
        ctxc_plan_t plan;
        ctxc_plan_init(&plan, &work);
        ctxc_block_t b = t_text(big);
        ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, &b, 1, CTXC_STR_ABSENT};
        assert_int_equal(ctxc_plan_insert(&plan, &in, NULL, NULL, 0, NULL),
                         CTXC_OK);
        assert_int_equal(
            ctxc_plan_keep(&plan, 1, ctxc_history_count(&small), NULL),
            CTXC_OK);
        tally_space.runs++;
        ctxc_status_t st = ctxc_history_apply_plan(&small, &plan, &err);
        if (st == CTXC_OK) {
            need = bytes;
            break;
        }
        tally_space.injected++;
        tally_space.refused++;
        assert_int_equal(st, CTXC_E_NO_SPACE);
        assert_true(err.needed > 0);
        t_assert_unchanged(&small, &before_snap);
    }
    assert_true(need > 1313);
    printf("faults: the plan needs an arena of %zu bytes\n", need);
    print_tally("space (import, work, plan)", &tally_space);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_filesystem_faults),
        cmocka_unit_test(test_clock_faults),
        cmocka_unit_test(test_import_exhaustion),
        cmocka_unit_test(test_work_area_exhaustion),
        cmocka_unit_test(test_plan_apply_exhaustion),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
