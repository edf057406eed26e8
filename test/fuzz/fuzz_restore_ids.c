/*
 * Fuzz target: restore ids (issue 41 item 3). A history the importer
 * accepts goes through a session's density step with a spill store (an
 * in-memory filesystem); then every id the step wrote, every pointer text
 * the input itself holds (forged ones included), and variants of each
 * (another hash, the number alone, cut, a digit changed) are restored.
 * Then the store is lost (its directory emptied), the step runs again on
 * the same history imported anew, handing the same numbers out, and every
 * old id is read again.
 *
 * Input: byte 0 picks the settings (bit 0-1: the store's budget, bit 2:
 * recency retention 1 or 3, bit 3: file dedupe off), the rest is JSONL
 * (interchange format).
 *
 * Invariants: a restore that succeeds gives a block of the input (its
 * interchange JSON is in the export before the step), for an id that the
 * history holds as a pointer the density step wrote; an id that differs
 * from one the store gave out in its hash reads nothing; after the store
 * was lost, an id of the old store reads nothing or exactly the bytes it
 * read before (never another block); a refused step leaves the history as
 * it was.
 */
#include "fuzz.h"

#define MEM_FS_FILES 160
#define MEM_FS_FILE_BYTES 8192
#include "fake_fs.h"

#define ENTRIES 128
CTXC_HISTORY_DEFINE(h, ENTRIES, 1u << 18);
CTXC_WORK_DEFINE(work, ENTRIES, 1u << 15);
static ctxc_import_t imp;
static ctxc_settings_store_t set;
static ctxc_session_t s;
static mem_fs_t mfs;
static ctxc_fs_t fs;
static ctxc_spill_t sp;
static char ixbuf[4096];
static char entry_buf[1u << 14];
static char out[1u << 14];
static fuzz_buf_t before, after, again;

#define MAX_IDS 64
static char ids[MAX_IDS][CTXC_SPILL_ID_LEN + 1];
static char *old_bytes[MAX_IDS];
static size_t old_len[MAX_IDS];
static size_t nids;

static void setting(const char *key, const char *value) {
    ctxc_error_t err;
    if (ctxc_settings_set(&set, key, value, &err) != CTXC_OK) {
        fuzz_fail("setting %s=%s: %s", key, value, err.message);
    }
}

static bool is_hex(char c) {
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

/* The ids of the pointer texts in t[0..n) (up to MAX_IDS, no repeats). */
static void collect(const char *t, size_t n) {
    static const char tag[] = "[ctxc:restore ";
    for (size_t i = 0; i + sizeof tag - 1u + CTXC_SPILL_ID_LEN <= n; i++) {
        if (memcmp(t + i, tag, sizeof tag - 1u) != 0) {
            continue;
        }
        const char *id = t + i + sizeof tag - 1u;
        bool ok = true;
        for (size_t k = 0; k < CTXC_SPILL_ID_LEN; k++) {
            ok = ok && is_hex(id[k]);
        }
        bool seen = false;
        for (size_t k = 0; k < nids && ok; k++) {
            seen = seen || memcmp(ids[k], id, CTXC_SPILL_ID_LEN) == 0;
        }
        if (ok && !seen && nids < MAX_IDS) {
            memcpy(ids[nids], id, CTXC_SPILL_ID_LEN);
            ids[nids][CTXC_SPILL_ID_LEN] = '\0';
            nids++;
        }
    }
}

static bool contains(const fuzz_buf_t *b, const char *p, size_t n) {
    for (size_t i = 0; n > 0 && i + n <= b->len; i++) {
        if (memcmp(b->p + i, p, n) == 0) {
            return true;
        }
    }
    return false;
}

/* A session restore of `id`: when it succeeds, a block of the input. */
static bool restore(const char *id) {
    size_t len = 0;
    ctxc_error_t err;
    ctxc_status_t st =
        ctxc_session_restore(&s, id, out, sizeof out - 1u, &len, &err);
    fuzz_check_error(st, &err, "restore");
    if (st != CTXC_OK) {
        return false;
    }
    if (!contains(&before, out, len)) {
        fuzz_fail("restore %s gave a block that is not of the input", id);
    }
    if (!contains(&after, id, strlen(id))) {
        fuzz_fail("restore %s succeeded for an id the history does not hold",
                  id);
    }
    return true;
}

/* Imports the input and runs the density step with the store: false when
 * the input is refused or the step is. */
static bool step(const char *text, size_t len, uint8_t cfg) {
    ctxc_error_t err;
    ctxc_history_clear(&h);
    if (ctxc_import_text(&imp, &h, text, len, CTXC_FORMAT_ICONTENT, &err) !=
        CTXC_OK) {
        return false;
    }
    static const uint64_t budgets[] = {64, 600, 4000, 1u << 20};
    if (ctxc_spill_init(&sp, &fs, "spill", budgets[cfg & 3u], ixbuf,
                        sizeof ixbuf, &err) != CTXC_OK) {
        fuzz_fail("spill init: %s", err.message);
    }
    ctxc_settings_init(&set, NULL);
    setting("compression.strategy", "high-density");
    setting("compression.density.recencyPruning", "true");
    setting("compression.density.recencyRetention", cfg & 4u ? "3" : "1");
    if (cfg & 8u) {
        setting("compression.density.fileDedupe", "false");
    }
    if (ctxc_session_init(&s, &h, &work, &set, &err) != CTXC_OK) {
        fuzz_fail("session: %s", err.message);
    }
    ctxc_session_set_workspace(&s, "/w");
    ctxc_session_set_spill(&s, &sp, entry_buf, sizeof entry_buf);
    fuzz_export(&h, &before);
    ctxc_status_t st = ctxc_session_optimize(&s, &err);
    fuzz_check_error(st, &err, "density step");
    fuzz_export(&h, &after);
    if (st != CTXC_OK) {
        fuzz_same(&before, &after, "a refused density step");
        return false;
    }
    return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) {
        return 0;
    }
    uint8_t cfg = data[0];
    const char *text = (const char *)data + 1;
    size_t len = size - 1;
    memset(&mfs, 0, sizeof mfs);
    fs = mem_fs(&mfs);
    nids = 0;
    if (!step(text, len, cfg)) {
        return 0;
    }
    collect(after.p, after.len);
    size_t given = nids; /* the step's own ids first */
    collect(text, len);  /* then the input's (forged) pointer texts */
    for (size_t i = 0; i < nids; i++) {
        bool ok = restore(ids[i]);
        if (i < given) {
            /* the step's own, with the history that holds it: readable
             * unless evicted */
            size_t l = 0;
            ctxc_error_t err;
            if (ctxc_spill_get(&sp, ids[i], out, sizeof out, &l, &err) ==
                CTXC_OK) {
                old_bytes[i] = (char *)malloc(l + 1u);
                if (old_bytes[i] == NULL) {
                    fuzz_fail("out of memory");
                }
                memcpy(old_bytes[i], out, l);
                old_len[i] = l;
                if (!ok) {
                    fuzz_fail("restore %s: a pointer the step wrote, its "
                              "block stored, did not restore",
                              ids[i]);
                }
            } else {
                old_bytes[i] = NULL;
            }
        }
        /* variants: never a block */
        char v[CTXC_SPILL_ID_LEN + 1];
        memcpy(v, ids[i], sizeof v);
        v[CTXC_SPILL_ID_LEN - 1u] =
            v[CTXC_SPILL_ID_LEN - 1u] == '0' ? '1' : '0';
        if (i < given && restore(v)) {
            fuzz_fail("restore %s (another hash than %s) read a block", v,
                      ids[i]);
        }
        v[8] = '\0'; /* the number alone */
        if (restore(v)) {
            fuzz_fail("restore of the number %s alone read a block", v);
        }
    }
    /* the store lost: the same numbers again for the blocks of a new step */
    memset(&mfs, 0, sizeof mfs);
    fs = mem_fs(&mfs);
    ctxc_session_deinit(&s);
    if (step(text, len, (uint8_t)(cfg ^ 4u))) {
        for (size_t i = 0; i < given; i++) {
            size_t l = 0;
            ctxc_error_t err;
            ctxc_status_t st =
                ctxc_spill_get(&sp, ids[i], out, sizeof out, &l, &err);
            if (st == CTXC_OK && (old_bytes[i] == NULL || l != old_len[i] ||
                                  memcmp(out, old_bytes[i], l) != 0)) {
                fuzz_fail("id %s of a lost store read another block", ids[i]);
            }
        }
        fuzz_export(&h, &again);
    }
    for (size_t i = 0; i < given; i++) {
        free(old_bytes[i]);
        old_bytes[i] = NULL;
    }
    ctxc_session_deinit(&s);
    return 0;
}
