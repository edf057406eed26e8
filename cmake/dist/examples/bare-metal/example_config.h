/*
 * The example's ctxc configuration (compiled into the library and the
 * application alike: the Makefile passes -DCTXC_CONFIG_FILE="example_config.h"
 * to every compile). The profile of a device without a console, a
 * filesystem or a network: no text commands, no LLM strategies, no settings
 * file buffer, and a small history. Every option and its default:
 * include/ctxc/ctxc_config_defaults.h.
 */
#ifndef EXAMPLE_CONFIG_H
#define EXAMPLE_CONFIG_H

/* no /set, /settings, /profile: settings are set by typed calls */
#define CTXC_CFG_COMMANDS 0
/* no strategy that asks a model: top-down-truncation and high-density */
#define CTXC_CFG_STRATEGY_MIDDLE_OUT 0
#define CTXC_CFG_STRATEGY_ONE_SHOT 0
/* no filesystem: no settings file, no profiles, no 2 KiB buffer */
#define CTXC_CFG_SETTINGS_FILE_BYTES 0

/* the history: 64 entries in 16 KiB */
#define CTXC_CFG_HISTORY_MAX_ENTRIES 64
#define CTXC_CFG_HISTORY_ARENA_BYTES (16u * 1024u)
#define CTXC_CFG_WORK_SCRATCH_BYTES 2048
/* no index tables in the work area: at 64 entries the scans that replace
 * them cost little, and the work area is 2 x 128 x 16 = 4 KiB smaller
 * (the indexed code drops out of the flash too) */
#define CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY 0

#endif /* EXAMPLE_CONFIG_H */
