/*
 * `ctxc restore FILE ID`: the block the density step stored before it
 * pruned it, behind the pointer [ctxc:restore ID] of FILE (the id must be
 * in FILE: it belongs to that history), from the spill store that
 * compression.density.spillDir names (cli_spill.c).
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"

int cli_cmd_restore(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "ctxc restore: expected FILE and ID\n"
                        "see 'ctxc restore --help'\n");
        return CLI_EXIT_USAGE;
    }
    const char *file = argv[0], *id = argv[1];
    static ctxc_settings_store_t set;
    static ctxc_posix_fs_t pfs;
    if (!cli_settings_open(&set, &pfs, NULL, "ctxc restore")) {
        return CLI_EXIT_FAIL;
    }
    if (!cli_spill_open(&set, &pfs, "ctxc restore")) {
        fprintf(stderr, "ctxc restore: no spill store: set "
                        "compression.density.spillDir\n");
        return CLI_EXIT_FAIL;
    }
    /* the handle must be in the file: the id belongs to that history */
    const char *name;
    if (!cli_load(file, &name)) {
        return CLI_EXIT_FAIL;
    }
    ctxc_history_t *h = cli_history_get();
    if (!cli_spill_history_has(h, id)) {
        fprintf(stderr, "ctxc restore: %s holds no pointer [ctxc:restore %s]\n",
                name, id);
        return CLI_EXIT_FAIL;
    }
    static ctxc_session_t s; /* only its store is used */
    memset(&s, 0, sizeof s);
    s.history = h;
    cli_spill_attach(&s);
    int rc = cli_spill_print(&s, id, stdout);
    return rc == CLI_EXIT_OK && cli_stdout_ok("ctxc restore") ? CLI_EXIT_OK
                                                              : CLI_EXIT_FAIL;
}
