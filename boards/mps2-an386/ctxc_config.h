/*
 * ctxc configuration overlay for the Cortex-M4 board mps2-an386 (runs under
 * qemu-system-arm -M mps2-an386; see project.yml targets.cortex-m4).
 *
 * Picked up through ctxc_config_defaults.h (the board folder is on the include
 * path of the library and of the firmware linked with it, so they agree).
 * The sizes come from board_sizes.h (shared with the scenario image); the
 * board has 4 MB of SSRAM for data (0x20000000), so one default history,
 * one work area, the import scratch and the settings store (about 240 KB,
 * `make size` prints the exact RAM table) fit easily. Sizes in bytes
 * unless stated.
 */
#ifndef CTXC_BOARD_MPS2_AN386_CONFIG_H
#define CTXC_BOARD_MPS2_AN386_CONFIG_H

#include "board_sizes.h"

#define CTXC_CFG_HISTORY_MAX_ENTRIES MPS2_HISTORY_MAX_ENTRIES
#define CTXC_CFG_HISTORY_ARENA_BYTES MPS2_HISTORY_ARENA_BYTES
#define CTXC_CFG_WORK_SCRATCH_BYTES MPS2_WORK_SCRATCH_BYTES

/* Error message text kept in ctxc_error_t. 256 bytes hold the longest the
 * lwIP image produces whole: the HTTP client's prefix, host:port twice and
 * a rejected certificate's reasons, or a TLS error after the handshake
 * with mbedTLS's text and code (96 cut those mid-word). */
#define CTXC_CFG_ERROR_MESSAGE_LEN 256

/* No index tables in the work area (the library default is 2 slots per
 * entry). A history here holds at most MPS2_HISTORY_MAX_ENTRIES (256)
 * entries; at that size the density step's scans, the path that gives the
 * same results without the index, take about twice the instructions of the
 * indexed passes (host callgrind of ctxc_session_optimize on the first 256
 * entries of the corpus file pi-large-session: 1.91 M against 0.91 M
 * instructions, 2.85 M against 1.42 M with recency pruning), a few ms on a
 * Cortex-M4. Without it the work area is 16384 bytes of RAM smaller and
 * the library about 2.4 KB of flash smaller (docs/footprint.md, "Flash and RAM of the library on
 * Cortex-M4"). A board whose histories reach thousands of entries keeps
 * the default: there the scans grow with the square of the entries. */
#define CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY 0

/* CTXC_CFG_STACK_BUDGET: bytes of stack one call of a public entry point
 * may use on this board (below the caller's frame), not a library option:
 * the scenario image (scenario/) measures every entry point it calls by
 * stack painting and fails when one exceeds it; the stack table of docs/footprint.md
 * lists the measurements. The deepest today is the high-density strategy
 * (compress, density step, before_send): about 1.5 KB measured, 2.4 KB
 * static worst case; 6 KiB leaves room for a port's hooks and estimators
 * called from inside. The image's stack is 32 KiB (project.yml
 * targets.cortex-m4.memory.stack). */
#define CTXC_CFG_STACK_BUDGET 6144

#endif /* CTXC_BOARD_MPS2_AN386_CONFIG_H */
