/*
 * RAM probe for the Cortex-M4 board: declares the caller-owned storage a
 * firmware using ctxc with this board's configuration needs, so its size is
 * read from the compiled object (`make test` / `make size` print it) rather
 * than estimated. Not part of the library.
 */
#include "ctxc/ctxc.h"
#include "ctxc/provider.h"

CTXC_HISTORY_DEFINE_DEFAULT(ram_history);
CTXC_WORK_DEFINE_DEFAULT(ram_work);
static ctxc_import_t ram_import;
static ctxc_error_t ram_error;
static ctxc_session_t ram_session;
static ctxc_settings_store_t ram_settings;
static CTXC_HTTP_WORK_DEFINE(ram_http_work);
static ctxc_provider_client_t ram_provider_client;

void *ctxc_ram_probe(unsigned which);
void *ctxc_ram_probe(unsigned which) {
    switch (which) {
    case 0:
        return &ram_history;
    case 1:
        return &ram_import;
    case 2:
        return &ram_work;
    case 3:
        return &ram_session;
    case 4:
        return &ram_settings;
    case 5:
        return ram_http_work;
    case 6:
        return &ram_provider_client;
    default:
        return &ram_error;
    }
}
