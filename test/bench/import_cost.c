/*
 * import_cost: one ctxc_import_text() and one ctxc_export() of a history of
 * the board's scenario (boards/mps2-an386/scenario/gen_histories.py, the
 * same bytes the scenario image imports), for counting instructions per
 * byte with callgrind on the host:
 *
 *   valgrind --tool=callgrind --toggle-collect=ctxc_import_text \
 *       import_cost [NAME]            (default NAME: full-1)
 *   valgrind --tool=callgrind --toggle-collect=ctxc_export import_cost
 *
 * Built in every host tree; meaningful with the board's configuration
 * (cmake -DCTXC_CONFIG_FILE=<repo>/boards/mps2-an386/ctxc_config.h): 256
 * slots, a 96 KiB arena, no work-area index. The export goes to a sink
 * that copies into a buffer (no checksum), so its count is the library's.
 * Prints the bytes imported and exported; asserts nothing about cost.
 */
#include <stdio.h>
#include <string.h>

#include "ctxc/ctxc.h"

#include "../../boards/mps2-an386/board_sizes.h"
#include "scenario.h"

CTXC_HISTORY_DEFINE(cost_hist, MPS2_HISTORY_MAX_ENTRIES,
                    MPS2_HISTORY_ARENA_BYTES);
static ctxc_import_t cost_imp;
static ctxc_error_t cost_err;
static char out_buf[160u * 1024u];

typedef struct {
    char *buf;
    size_t cap, len;
} sink_t;

static ctxc_status_t sink_write(void *user, const char *data, size_t len) {
    sink_t *s = user;
    if (len > s->cap - s->len) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    return CTXC_OK;
}

/* The scenario's console: unused here (scenario.h declares it). */
void scn_write(const char *s, size_t len) { (void)fwrite(s, 1, len, stdout); }

int main(int argc, char **argv) {
    const char *name = argc > 1 ? argv[1] : "full-1";
    const scn_input_t *in = NULL;
    for (size_t i = 0; i < scn_input_count; i++) {
        if (strcmp(scn_inputs[i].name, name) == 0) {
            in = &scn_inputs[i];
        }
    }
    if (in == NULL) {
        fprintf(stderr, "import_cost: no history '%s'\n", name);
        return 2;
    }
    ctxc_status_t st =
        ctxc_import_text(&cost_imp, &cost_hist, in->text, in->len,
                         CTXC_FORMAT_ICONTENT, &cost_err);
    if (st != CTXC_OK) {
        fprintf(stderr, "import_cost: import: %s\n",
                ctxc_error_message(&cost_err));
        return 1;
    }
    sink_t s = {out_buf, sizeof out_buf, 0};
    st = ctxc_export(&cost_hist, sink_write, &s, &cost_err);
    if (st != CTXC_OK) {
        fprintf(stderr, "import_cost: export: %s\n",
                ctxc_error_message(&cost_err));
        return 1;
    }
    printf("import_cost: %s: %zu entries, %zu bytes imported (%zu of %zu "
           "arena bytes), %zu exported\n",
           name, ctxc_history_count(&cost_hist), in->len, cost_hist.used,
           cost_hist.arena_bytes, s.len);
    return 0;
}
