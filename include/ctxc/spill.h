/** @file
 * ctxc — the spill store (the density step stores what it prunes in it
 * through ctxc_session_set_spill()): a bounded store of pruned blocks
 * under one directory of the port's filesystem, each under a short id that
 * a pointer text can carry ("[ctxc:restore 0000002a]").
 *
 * Layout under `dir`: one file per block, "<id>.json" (the bytes given to
 * ctxc_spill_put, written atomically), and "index": a first line
 * "next <N>" (the next id), then one line "<id> <bytes>" per stored block,
 * oldest first (written atomically after the block). A block's number is
 * 8 lowercase hex digits of an increasing number, never reused while the
 * store lives: when the index is lost, the next number is taken past the
 * largest block file in the directory. Its id is the number followed by
 * 8 hex digits of a hash of the block's bytes, and a get gives the block
 * only when its bytes hash to it: an id names one content, also when the
 * directory was lost and a new store hands the same numbers out again
 * (it then answers "unknown id", never another block).
 *
 * Bounds: the blocks listed take at most `budget` bytes and the index fits
 * the caller's buffer; a put evicts the oldest blocks first to stay within
 * both, but never one stored since ctxc_spill_begin() (the operation in
 * flight): then it fails with CTXC_E_NO_SPACE ("store full"), before
 * writing anything. The density step then prunes that block without
 * storing it (ctxc_density_counts_t.spill_full).
 *
 * Failures: a put that fails (full store, I/O error) leaves every block
 * listed before it readable, except those it evicted, which read as
 * evicted (never as another block); its own block is not listed.
 *
 * Memory: the caller's `buf` holds the index while a call runs (about 18
 * bytes a stored block, plus 24); nothing else is kept. Not thread-safe:
 * one store, one caller at a time.
 */
#ifndef CTXC_SPILL_H
#define CTXC_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/port.h"
#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Characters of a block's id (lowercase hex digits; a NUL follows): its
 * number (8) and the hash of its bytes (8). */
#define CTXC_SPILL_ID_LEN 16u

/** A spill store (see the file comment); set up by ctxc_spill_init(). */
typedef struct {
    const ctxc_fs_t *fs; /**< the port's filesystem (kept by pointer) */
    const char *dir;     /**< root-relative directory (kept by pointer) */
    uint64_t budget;     /**< bytes of stored blocks at most */
    char *buf;           /**< caller memory for the index */
    size_t cap;          /**< bytes of buf */
    uint32_t keep_from_; /* internal: ids >= this are in flight (0: none;
                            0xFFFFFFFF: begun, its first id to come) */
} ctxc_spill_t;

/** Sets up a store (nothing is written until the first put). `dir` must be
 * a valid root-relative path of at most CTXC_CFG_PATH_MAX - 16 bytes; cap
 * at least 64. Errors: CTXC_E_INVALID_ARG. */
ctxc_status_t ctxc_spill_init(ctxc_spill_t *sp, const ctxc_fs_t *fs,
                              const char *dir, uint64_t budget, void *buf,
                              size_t cap, ctxc_error_t *err);

/** An operation starts: blocks put from now until ctxc_spill_end() are
 * never evicted by a put in between. */
void ctxc_spill_begin(ctxc_spill_t *sp);
/** The operation started by ctxc_spill_begin() ends. */
void ctxc_spill_end(ctxc_spill_t *sp);

/** Stores data[0..len) and writes its id (CTXC_SPILL_ID_LEN hex digits and
 * a NUL: the block's number and the hash of data) into id. Errors:
 * CTXC_E_NO_SPACE (the block alone is over the budget, or the room could only
 * be made by evicting blocks of the operation in flight: "store full"),
 * CTXC_E_PARSE (an index that is not the store's), the filesystem's errors
 * (CTXC_E_IO, CTXC_E_READ_ONLY, ...) with the step named. */
ctxc_status_t ctxc_spill_put(ctxc_spill_t *sp, const char *data, size_t len,
                             char id[CTXC_SPILL_ID_LEN + 1], ctxc_error_t *err);

/** Reads the block stored under id into out[0..cap); *len = its size.
 * Errors: CTXC_E_NOT_FOUND, the message saying which: "unknown id" (never
 * given out by this store, not an id, an 8-digit id of an older store, or
 * an id whose number holds another block: its hash differs), "evicted"
 * (given out, then evicted for room), "store missing" (no index in dir);
 * CTXC_E_NO_SPACE (out too small, err->needed), CTXC_E_INVALID_ARG (NULL),
 * the filesystem's errors. */
ctxc_status_t ctxc_spill_get(const ctxc_spill_t *sp, const char *id, char *out,
                             size_t cap, size_t *len, ctxc_error_t *err);

/** What the density step stores (ctxc_session_set_spill) is the index of
 * the block, a line feed and its entry's interchange line; this reads it
 * (ctxc_spill_get) and gives the block's interchange JSON alone, in
 * out[0..*len) (NUL-terminated when it fits). Errors: as ctxc_spill_get,
 * and CTXC_E_PARSE for stored bytes of another shape. */
ctxc_status_t ctxc_spill_restore_block(const ctxc_spill_t *sp, const char *id,
                                       char *out, size_t cap, size_t *len,
                                       ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_SPILL_H */
