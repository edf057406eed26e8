/*
 * ctxc host CLI — the settings store over the POSIX port, shared by
 * `ctxc compress` and `ctxc repl`.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <unistd.h>
#include <string.h>

#include "cli.h"

bool cli_settings_open(ctxc_settings_store_t *store, ctxc_posix_fs_t *pfs,
                       const char *profile, const char *who) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    if (ctxc_posix_fs_init(pfs, NULL, &err) == CTXC_OK) {
        ctxc_fs_t fs = ctxc_posix_fs(pfs);
        ctxc_settings_init(store, &fs);
        if (ctxc_settings_load(store, &err) != CTXC_OK) {
            /* reported, never overwritten; the other layers go on */
            fprintf(stderr,
                    "%s: warning: %s/%s (ignored; fix or remove it): %s\n", who,
                    pfs->root, CTXC_SETTINGS_FILE, ctxc_error_message(&err));
        }
    } else {
        fprintf(stderr, "%s: warning: no settings folder (%s); defaults only\n",
                who, ctxc_error_message(&err));
        ctxc_settings_init(store, NULL);
    }
    if (profile != NULL &&
        ctxc_settings_profile_load(store, profile, &err) != CTXC_OK) {
        fprintf(stderr, "%s: --profile %s: %s\n", who, profile,
                ctxc_error_message(&err));
        return false;
    }
    return true;
}

const char *cli_absolute_path(const char *path) {
    static char buf[4096];
    char cwd[3072];
    if (path[0] == '/' || getcwd(cwd, sizeof cwd) == NULL ||
        (size_t)snprintf(buf, sizeof buf, "%s/%s", cwd, path) >= sizeof buf) {
        return path;
    }
    return buf;
}
