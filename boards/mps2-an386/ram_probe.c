/*
 * RAM probe for the Cortex-M4 board: declares the caller-owned storage a
 * firmware using ctxc with this board's configuration needs, so its size is
 * read from the compiled object (`make test` / `make size` print it) rather
 * than estimated. Not part of the library.
 */
#include "ctxc/ctxc.h"

CTXC_HISTORY_DEFINE_DEFAULT(ram_history);
static ctxc_import_t ram_import;
static ctxc_error_t ram_error;

void *ctxc_ram_probe(unsigned which);
void *ctxc_ram_probe(unsigned which) {
    switch (which) {
    case 0: return &ram_history;
    case 1: return &ram_import;
    default: return &ram_error;
    }
}
