/*
 * ctxc configuration overlay for the host simulation build (boards/host).
 *
 * Picked up through ctxc_config_defaults.h (the board folder is on the include
 * path of the library and of everything linked with it, so they agree).
 * The host CLI must hold the largest real transcripts in memory at once
 * (about 1.8 MB of JSON lines and 1000 entries), so the arenas are large.
 * Every option not set here keeps its default (project.yml / the defaults
 * header).
 */
#ifndef CTXC_BOARD_HOST_CONFIG_H
#define CTXC_BOARD_HOST_CONFIG_H

/* Entries per default history: room for the longest transcripts many times
 * over. */
#define CTXC_CFG_HISTORY_MAX_ENTRIES 16384

/* Byte arena per default history: 32 MiB, far above the 1.8 MB largest
 * transcript. */
#define CTXC_CFG_HISTORY_ARENA_BYTES (32u * 1024u * 1024u)

/* JSON tokens per JSONL line: long tool outputs and big tool-call arguments. */
#define CTXC_CFG_JSON_MAX_TOKENS 16384

/* Bytes for the entries a compression plan inserts (tool-result summaries of
 * a whole transcript, 10x benchmark histories included). */
#define CTXC_CFG_WORK_SCRATCH_BYTES (8u * 1024u * 1024u)

#endif /* CTXC_BOARD_HOST_CONFIG_H */
