/*
 * Fuzz target: the prompt installer's manifest reader
 * (ctxc_prompts_install over an in-memory filesystem whose
 * .prompts-manifest holds the input).
 *
 * Invariants: a refused manifest says why and nothing is written (the
 * filesystem holds only the manifest, unchanged); an accepted one leads to
 * an install after which a second install changes nothing and reports
 * every built-in prompt as up to date or kept (the user's edit).
 */
#include "fuzz.h"

#include "ctxc/prompt.h"

#define MEM_FS_FILES 16
#define MEM_FS_FILE_BYTES 16384
#include "../unit/fake_fs.h"

static mem_fs_t mfs;
static char scratch[2 * MEM_FS_FILE_BYTES];
static int changed;

static void note(void *user, const char *path, ctxc_prompt_action_t action) {
    (void)user;
    (void)path;
    if (action == CTXC_PROMPT_INSTALLED || action == CTXC_PROMPT_UPDATED) {
        changed++;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size > MEM_FS_FILE_BYTES) {
        return 0;
    }
    memset(&mfs, 0, sizeof mfs);
    ctxc_fs_t fs = mem_fs(&mfs);
    mem_put(&mfs, CTXC_PROMPT_MANIFEST, "");
    mem_node_t *m = mem_find(&mfs, CTXC_PROMPT_MANIFEST);
    m->len = size;
    memcpy(m->data, data, size);
    ctxc_error_t err;
    changed = 0;
    ctxc_status_t st =
        ctxc_prompts_install(&fs, scratch, sizeof scratch, note, NULL, &err);
    fuzz_check_error(st, &err, "install");
    if (st != CTXC_OK) {
        if (mem_file_count(&mfs) != 1 || m->len != size ||
            memcmp(m->data, data, size) != 0) {
            fuzz_fail("a refused manifest, yet the filesystem changed (%s)",
                      err.message);
        }
        return 0;
    }
    changed = 0;
    st = ctxc_prompts_install(&fs, scratch, sizeof scratch, note, NULL, &err);
    if (st != CTXC_OK) {
        fuzz_fail("the second install failed: %s", err.message);
    }
    if (changed != 0) {
        fuzz_fail("the second install wrote %d prompts again", changed);
    }
    return 0;
}
