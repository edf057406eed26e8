/* What the README's POSIX transport fragment refers to: the caller's POSIX
 * port (p), settings and error. */
#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"

static ctxc_posix_port_t p;
static ctxc_settings_store_t settings;
static ctxc_error_t err;
