/*
 * The spill store of the CLI: when compression.density.spillDir
 * is set, what the density step prunes is stored under that directory of
 * $CTXC_HOME (budget compression.density.spillBudget), and `ctxc restore
 * FILE.jsonl ID` (cli_restore.c) / `/restore ID` give a block back by the
 * id its pointer carries. A /set of either setting in a session takes
 * effect at once (cli_spill_update).
 *
 * Syncing: the store writes each block and its index atomically (a
 * temporary file, sync, rename). Through the POSIX port each of those is
 * an fsync of the file and one of its folder: four per block, which on a
 * disk made a density step that stores 37 blocks take most of a second.
 * The store's filesystem here is the port's with sync and rename's folder
 * sync deferred: the blocks and index written are synced once (syncfs of
 * the store's filesystem) before any history that may point at them is
 * written (cli_save_history calls cli_spill_flush) and at exit. A crash
 * before that loses blocks no saved history refers to.
 */
#define _GNU_SOURCE /* syncfs */

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"

static ctxc_spill_t cli_spill;
static ctxc_fs_t cli_spill_fs;
static char cli_spill_index[64 * 1024];
/* an entry line (stored) or a block (restored): the largest the CLI
 * history holds */
static char cli_spill_buf[8u << 20];
/* the store open: its folder (a copy: the setting's text may change) and
 * budget */
static bool spill_up;
static char spill_dir[4096];
static uint32_t spill_budget;
static const ctxc_posix_fs_t *spill_pfs;

/* ---- the port's filesystem, syncs deferred to cli_spill_flush() ---- */
static ctxc_fs_ops_t spill_ops;
static bool spill_dirty;

static ctxc_status_t spill_sync(void *ctx, ctxc_fs_file_t file,
                                ctxc_error_t *err) {
    (void)ctx, (void)file, (void)err;
    spill_dirty = true;
    return CTXC_OK;
}

static ctxc_status_t spill_rename(void *ctx, const char *from, const char *to,
                                  ctxc_error_t *err) {
    const ctxc_posix_fs_t *pfs = ctx;
    char a[8192], b[8192];
    if ((size_t)snprintf(a, sizeof a, "%s/%s", pfs->root, from) >= sizeof a ||
        (size_t)snprintf(b, sizeof b, "%s/%s", pfs->root, to) >= sizeof b) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG, "path too long");
    }
    if (rename(a, b) != 0) {
        return ctxc_error_set(err, CTXC_E_IO, "cannot rename to %s: %s", b,
                              strerror(errno));
    }
    spill_dirty = true;
    return CTXC_OK;
}

void cli_spill_flush(void) {
    if (!spill_dirty || spill_pfs == NULL) {
        return;
    }
    spill_dirty = false;
    int fd = open(spill_pfs->root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) {
        sync();
        return;
    }
#ifdef __linux__
    if (syncfs(fd) != 0) {
        sync();
    }
#else
    sync();
#endif
    close(fd);
}

static bool spill_init(ctxc_settings_store_t *set, ctxc_posix_fs_t *pfs,
                       const char *who) {
    const char *dir = ctxc_settings_string(set, CTXC_SETTING_DENSITY_SPILL_DIR);
    spill_up = false;
    if (dir == NULL) {
        spill_dir[0] = '\0';
        return false;
    }
    uint32_t budget = 1u << 20;
    (void)ctxc_settings_int(set, CTXC_SETTING_DENSITY_SPILL_BUDGET, &budget);
    snprintf(spill_dir, sizeof spill_dir, "%s", dir);
    spill_budget = budget;
    ctxc_fs_t base = ctxc_posix_fs(pfs);
    spill_ops = *base.ops;
    spill_ops.sync = spill_sync;
    spill_ops.rename = spill_rename;
    cli_spill_fs.ops = &spill_ops;
    cli_spill_fs.ctx = base.ctx;
    spill_pfs = pfs;
    static bool at_exit;
    if (!at_exit) {
        at_exit = true;
        (void)atexit(cli_spill_flush);
    }
    ctxc_error_t err;
    if (ctxc_spill_init(&cli_spill, &cli_spill_fs, spill_dir, budget,
                        cli_spill_index, sizeof cli_spill_index,
                        &err) != CTXC_OK) {
        cli_report(who, &err);
        return false;
    }
    spill_up = true;
    return true;
}

bool cli_spill_open(ctxc_settings_store_t *set, ctxc_posix_fs_t *pfs,
                    const char *who) {
    return spill_init(set, pfs, who);
}

void cli_spill_attach(ctxc_session_t *s) {
    ctxc_session_set_spill(s, &cli_spill, cli_spill_buf, sizeof cli_spill_buf);
}

int cli_spill_update(ctxc_session_t *s, ctxc_settings_store_t *set,
                     ctxc_posix_fs_t *pfs, const char *who) {
    const char *dir = ctxc_settings_string(set, CTXC_SETTING_DENSITY_SPILL_DIR);
    uint32_t budget = 1u << 20;
    (void)ctxc_settings_int(set, CTXC_SETTING_DENSITY_SPILL_BUDGET, &budget);
    bool same = dir == NULL ? spill_dir[0] == '\0'
                            : strcmp(dir, spill_dir) == 0 &&
                                  budget == spill_budget;
    if (same) {
        return 0;
    }
    cli_spill_flush(); /* what the old store holds is on storage */
    if (!spill_init(set, pfs, who)) {
        ctxc_session_set_spill(s, NULL, NULL, 0);
        if (dir == NULL) {
            printf("spill store: off (what the density step prunes is no "
                   "longer stored)\n");
            return 1;
        }
        return -1;
    }
    cli_spill_attach(s);
    printf("spill store: %s/%s, budget %" PRIu32 " bytes (in use from the "
           "next density step)\n",
           pfs->root, spill_dir, spill_budget);
    return 1;
}

int cli_spill_print(ctxc_session_t *s, const char *id, FILE *out) {
    size_t len = 0;
    ctxc_error_t err;
    if (ctxc_session_restore(s, id, cli_spill_buf, sizeof cli_spill_buf, &len,
                             &err) != CTXC_OK) {
        fflush(out); /* what came before stays before */
        fprintf(stderr, "error: restore %s: %s\n", id,
                ctxc_error_message(&err));
        return CLI_EXIT_FAIL;
    }
    fwrite(cli_spill_buf, 1, len, out);
    fputc('\n', out);
    return CLI_EXIT_OK;
}

bool cli_spill_history_has(const ctxc_history_t *h, const char *id) {
    char handle[48];
    snprintf(handle, sizeof handle, "[ctxc:restore %.16s]", id);
    for (size_t i = 0; i < ctxc_history_count(h); i++) {
        size_t len = 0;
        if (ctxc_export_entry_buf(h, i, cli_spill_buf, sizeof cli_spill_buf,
                                  &len, NULL) == CTXC_OK &&
            strstr(cli_spill_buf, handle) != NULL) {
            return true;
        }
    }
    return false;
}
