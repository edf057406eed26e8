/*
 * ctxc configuration of this source tree (dist: config/ctxc_config.h).
 *
 * As shipped it sets nothing: every option keeps the default written in
 * include/ctxc/ctxc_config_defaults.h (which documents each one) or in the
 * generated include/ctxc/ctxc_manifest.h (project.yml: arenas, strategies).
 *
 * To configure, either
 *   - define options here and put config/ on the include path of the
 *     library AND of every file of your application that includes a ctxc
 *     header, or
 *   - pass -DCTXC_CONFIG_FILE='"/path/to/your_config.h"' (then this file is
 *     not read) or -DCTXC_CFG_<OPTION>=<value> to every such compile.
 *
 * The library and your code must see the same values: the options that
 * size public structs are checked at link time (a mismatch fails with
 * "undefined reference to `ctxc_cfg_<OPTION>_<value>'").
 */
#ifndef CTXC_DIST_CONFIG_H
#define CTXC_DIST_CONFIG_H

/* Examples (the defaults in parentheses):
 * #define CTXC_CFG_HISTORY_MAX_ENTRIES 128       (project.yml: 256)
 * #define CTXC_CFG_HISTORY_ARENA_BYTES (32u * 1024u) (project.yml: 65536)
 * #define CTXC_CFG_JSON_MAX_TOKENS 256           (project.yml: 512)
 * #define CTXC_CFG_ERROR_MESSAGE_LEN 96          (160)
 * #define CTXC_CFG_STRATEGY_MIDDLE_OUT 0         (project.yml: 1)
 * #define CTXC_CFG_STRATEGY_ONE_SHOT 0           (project.yml: 1)
 * #define CTXC_CFG_COMMANDS 0                    (1: the /set ... layer)
 */

#endif /* CTXC_DIST_CONFIG_H */
