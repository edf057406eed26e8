/* What the README's provider fragments refer to and do not declare
 * themselves: the caller's settings, session, port, request and buffers. */
#include "ctxc/ctxc.h"

static ctxc_settings_store_t settings;
static ctxc_session_t session;
static ctxc_port_t port;
static ctxc_error_t err;
static ctxc_status_t st;
static ctxc_llm_request_t req;
static char out[4096];
static size_t len;
static ctxc_llm_usage_t usage;
static uint32_t read_timeout_ms = 30000;
