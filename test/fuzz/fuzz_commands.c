/*
 * Fuzz target: /set, /settings and /profile command lines
 * (ctxc_settings_command) and their completion (ctxc_settings_complete),
 * over an in-memory filesystem, one line of the input after the other
 * (at most 32 lines), so sequences (save, load, delete, set, unset) are
 * explored too.
 *
 * Invariants: a refused command says why and writes no output; completion
 * points inside the line and offers only candidates that start with the
 * partial word; whatever the commands wrote to the filesystem loads again
 * (settings.json and every saved profile).
 */
#include "fuzz.h"

#define MEM_FS_FILES 24
#define MEM_FS_FILE_BYTES (CTXC_CFG_SETTINGS_FILE_BYTES + 64)
#include "../unit/fake_fs.h"

static mem_fs_t mfs;
static ctxc_settings_store_t store;
static size_t out_bytes;

static ctxc_status_t count_out(void *user, const char *data, size_t len) {
    (void)user;
    (void)data;
    out_bytes += len;
    return CTXC_OK;
}

/* Candidates of one completion call, checked after it (when the word's
 * start is known). */
static char cands[64][CTXC_CFG_SETTINGS_VALUE_BYTES + 64];
static size_t ncands;

static bool keep_candidate(void *user, const char *candidate) {
    (void)user;
    if (ncands < sizeof cands / sizeof cands[0]) {
        snprintf(cands[ncands++], sizeof cands[0], "%s", candidate);
    }
    return true;
}

static char names[16][CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1];
static size_t nnames;

static bool keep_name(void *user, const char *name) {
    (void)user;
    if (nnames < sizeof names / sizeof names[0]) {
        snprintf(names[nnames++], sizeof names[0], "%s", name);
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > 4096) {
        return 0;
    }
    memset(&mfs, 0, sizeof mfs);
    ctxc_fs_t fs = mem_fs(&mfs);
    ctxc_settings_init(&store, &fs);
    ctxc_error_t err;
    char line[512];
    size_t pos = 0;
    for (int n = 0; n < 32 && pos < size; n++) {
        size_t end = pos;
        while (end < size && data[end] != '\n') {
            end++;
        }
        size_t len = end - pos < sizeof line - 1 ? end - pos : sizeof line - 1;
        memcpy(line, data + pos, len);
        line[len] = '\0';
        pos = end + 1;

        out_bytes = 0;
        ctxc_status_t st =
            ctxc_settings_command(&store, line, count_out, NULL, &err);
        fuzz_check_error(st, &err, "command");
        if (st != CTXC_OK && st != CTXC_E_NOT_FOUND && out_bytes != 0 &&
            strncmp(line, "/profile list", 13) != 0) {
            fuzz_fail("refused command '%s' wrote %zu bytes", line, out_bytes);
        }
        size_t ws = (size_t)-1;
        size_t llen = strcspn(line, "\r\n"); /* where the line ends */
        ncands = 0;
        st = ctxc_settings_complete(&store, line, &ws, keep_candidate, NULL,
                                    &err);
        fuzz_check_error(st, &err, "complete");
        if (st != CTXC_OK) {
            continue;
        }
        if (ws > llen) {
            fuzz_fail("completion word starts at %zu of a %zu-byte line", ws,
                      llen);
        }
        for (size_t i = 0; i < ncands; i++) {
            if (strncmp(cands[i], line + ws, llen - ws) != 0) {
                fuzz_fail("completion offered '%s' for '%.*s'", cands[i],
                          (int)(llen - ws), line + ws);
            }
        }
    }
    /* what the commands wrote loads again */
    ctxc_settings_init(&store, &fs);
    ctxc_status_t st = ctxc_settings_load(&store, &err);
    if (st != CTXC_OK) {
        fuzz_fail("settings.json written by the commands is refused: %s",
                  err.message);
    }
    nnames = 0;
    st = ctxc_settings_profile_list(&store, keep_name, NULL, &err);
    fuzz_check_error(st, &err, "profile list");
    for (size_t i = 0; i < nnames; i++) {
        if (ctxc_settings_profile_load(&store, names[i], &err) != CTXC_OK) {
            fuzz_fail("saved profile '%s' does not load: %s", names[i],
                      err.message);
        }
    }
    return 0;
}
