/*
 * The spill store of the CLI: when compression.density.spillDir
 * is set, what the density step prunes is stored under that directory of
 * $CTXC_HOME (budget compression.density.spillBudget), and `ctxc restore
 * FILE.jsonl ID` (cli_restore.c) / `/restore ID` give a block back by the
 * id its pointer carries.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"

static ctxc_spill_t cli_spill;
static ctxc_fs_t cli_spill_fs;
static char cli_spill_index[64 * 1024];
/* an entry line (stored) or a block (restored): the largest the CLI
 * history holds */
static char cli_spill_buf[8u << 20];

bool cli_spill_open(ctxc_settings_store_t *set, ctxc_posix_fs_t *pfs,
                    const char *who) {
    const char *dir = ctxc_settings_string(set, CTXC_SETTING_DENSITY_SPILL_DIR);
    if (dir == NULL) {
        return false;
    }
    uint32_t budget = 1u << 20;
    (void)ctxc_settings_int(set, CTXC_SETTING_DENSITY_SPILL_BUDGET, &budget);
    cli_spill_fs = ctxc_posix_fs(pfs);
    ctxc_error_t err;
    if (ctxc_spill_init(&cli_spill, &cli_spill_fs, dir, budget, cli_spill_index,
                        sizeof cli_spill_index, &err) != CTXC_OK) {
        cli_report(who, &err);
        return false;
    }
    return true;
}

void cli_spill_attach(ctxc_session_t *s) {
    ctxc_session_set_spill(s, &cli_spill, cli_spill_buf, sizeof cli_spill_buf);
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
