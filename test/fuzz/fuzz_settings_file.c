/*
 * Fuzz target: the settings file reader (settings.json) and the profile
 * reader (profiles/<name>.json), over an in-memory filesystem.
 *
 * Invariants: a refused file says why, leaves the persistent layer empty
 * and the store usable (an ephemeral /set still works) and is never
 * overwritten by a persistent set; an accepted settings.json survives a
 * persistent set of another key (re-read and written back: it loads again,
 * and every value it had is still there); a refused profile changes no
 * ephemeral setting.
 */
#include "fuzz.h"

#define MEM_FS_FILES 8
#define MEM_FS_FILE_BYTES (CTXC_CFG_SETTINGS_FILE_BYTES + 64)
#include "../unit/fake_fs.h"

static mem_fs_t mfs;
static ctxc_settings_store_t store;

static void put_bytes(const char *path, const uint8_t *data, size_t size) {
    mem_put(&mfs, path, "");
    mem_node_t *n = mem_find(&mfs, path);
    n->len = size;
    memcpy(n->data, data, size);
}

static void same_file(const char *path, const uint8_t *data, size_t size) {
    mem_node_t *n = mem_find(&mfs, path);
    if (n == NULL || n->len != size || memcmp(n->data, data, size) != 0) {
        fuzz_fail("%s was changed or removed", path);
    }
}

/* Every setting's value and source, as text, into out. */
static void snapshot(char *out, size_t cap, int skip) {
    size_t used = 0;
    out[0] = '\0';
    for (int id = 0; id < CTXC_SETTING_COUNT; id++) {
        if (id == skip) {
            continue;
        }
        ctxc_setting_value_t v;
        ctxc_setting_source_t src =
            ctxc_settings_get(&store, (ctxc_setting_id_t)id, &v);
        char text[CTXC_CFG_SETTINGS_VALUE_BYTES + 32];
        size_t n =
            ctxc_setting_format((ctxc_setting_id_t)id, &v, text, sizeof text);
        (void)n;
        int w =
            snprintf(out + used, cap - used, "%d:%d:%s\n", id, (int)src, text);
        if (w < 0 || (size_t)w >= cap - used) {
            fuzz_fail("snapshot buffer too small");
        }
        used += (size_t)w;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > CTXC_CFG_SETTINGS_FILE_BYTES + 32) {
        return 0;
    }
    ctxc_error_t err;
    static char snap1[8192], snap2[8192];

    /* settings.json */
    memset(&mfs, 0, sizeof mfs);
    ctxc_fs_t fs = mem_fs(&mfs);
    put_bytes("settings.json", data, size);
    ctxc_settings_init(&store, &fs);
    ctxc_status_t st = ctxc_settings_load(&store, &err);
    fuzz_check_error(st, &err, "settings load");
    if (st != CTXC_OK) {
        if (!store.file_bad) {
            fuzz_fail("a refused settings.json is not marked bad");
        }
        if (store.persistent.set != 0) {
            fuzz_fail("a refused settings.json left values behind");
        }
        if (ctxc_settings_set(&store, "context-limit", "5000", &err) !=
            CTXC_OK) {
            fuzz_fail("the store is unusable after a bad file: %s",
                      err.message);
        }
        st = ctxc_settings_persist_set(&store, "context-limit", "6000", &err);
        if (st == CTXC_OK) {
            fuzz_fail("a bad settings.json was overwritten");
        }
        same_file("settings.json", data, size);
    } else {
        snapshot(snap1, sizeof snap1, (int)CTXC_SETTING_DENSITY_FILE_DEDUPE);
        st = ctxc_settings_persist_set(&store, "compression.density.fileDedupe",
                                       "true", &err);
        fuzz_check_error(st, &err, "persistent set");
        if (st == CTXC_OK) {
            ctxc_settings_init(&store, &fs);
            if (ctxc_settings_load(&store, &err) != CTXC_OK) {
                fuzz_fail("settings.json written by ctxc is refused: %s",
                          err.message);
            }
            snapshot(snap2, sizeof snap2,
                     (int)CTXC_SETTING_DENSITY_FILE_DEDUPE);
            if (strcmp(snap1, snap2) != 0) {
                fuzz_fail("a persistent set changed other settings:\n%s---\n%s",
                          snap1, snap2);
            }
        }
    }

    /* the same bytes as a profile */
    memset(&mfs, 0, sizeof mfs);
    put_bytes("profiles/p.json", data, size);
    ctxc_settings_init(&store, &fs);
    (void)ctxc_settings_set(&store, "context-limit", "7000", &err);
    snapshot(snap1, sizeof snap1, -1);
    st = ctxc_settings_profile_load(&store, "p", &err);
    fuzz_check_error(st, &err, "profile load");
    if (st != CTXC_OK) {
        snapshot(snap2, sizeof snap2, -1);
        if (strcmp(snap1, snap2) != 0) {
            fuzz_fail("a refused profile changed the settings");
        }
    }
    same_file("profiles/p.json", data, size);
    return 0;
}
