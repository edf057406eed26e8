/*
 * The library's side of the link-time configuration guard
 * (include/ctxc/config_guard.h): defines ctxc_cfg_<OPTION>_<value> for the
 * values this library is built with. An application that includes the
 * headers with other values references other names and fails to link.
 */
#define CTXC_CONFIG_GUARD_DEFINE 1
#include "ctxc/ctxc_config_defaults.h"
