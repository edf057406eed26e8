/*
 * The voice day (issue 36): a day of short voice turns appended to a small
 * history, as a voice assistant does, through the public API only. One
 * driver for the scenario image (boards/mps2-an386/scenario, on the target
 * and its host twin: both print the same rows) and for the host suite
 * test/unit/test_voice_day.c (which adds an LLM strategy with a scripted
 * model and the seeded property with pins).
 *
 * A run: VD_SLOTS slots, a VD_ARENA_BYTES arena, a VD_CONTEXT_LIMIT-token
 * context limit, the strategy of the configuration; `turns` turns from a
 * seeded generator of its own (human 5-40 words, ai 10-80 words, every
 * fifth turn a tool call and its result, 1 in 50 a long answer of 300-600
 * words, stretches of Chinese turns). Every entry is appended as a device
 * does: ctxc_session_before_send() with VD_PENDING_TOKENS, then
 * ctxc_session_add_room(). After every append it checks:
 *   - before_send left room on all three limits (the reserves of the
 *     settings, the context limit), unless a compression job runs;
 *   - the newest VD_RECENT entries are the last ones appended, verbatim;
 *   - no tool response is without its call (at most the call just
 *     appended is open) and the token total is the sum of the entries'
 *     estimates;
 *   - with pins, every pinned entry is still there.
 * It counts the compressions (by before_send and by the append), the limit
 * that triggered each, those that dropped the oldest turns, and the
 * largest history reached on each limit. Deterministic (no clock, its own
 * PRNG), nothing allocated (static storage), no stdio: its lines go
 * through the board's line printer (common/image_util.h: the caller sets
 * img_out_init() first).
 */
#ifndef MPS2_VOICE_DAY_H
#define MPS2_VOICE_DAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc.h"

#define VD_SLOTS 128u                /* entry slots of the history */
#define VD_ARENA_BYTES (32u * 1024u) /* its arena */
#define VD_CONTEXT_LIMIT 4000u       /* context-limit, tokens */
#define VD_PENDING_TOKENS 60u        /* what each request adds (before_send) */
#define VD_RECENT 4u    /* newest entries checked verbatim after each append */
#define VD_TURNS 10000u /* turns of a voice day */
#define VD_SEED 36u     /* the voice day's seed (issue 36) */

/* What to run. */
typedef struct {
    const char *strategy; /* compression.strategy */
    uint32_t turns;       /* human turns (each with its answer) */
    uint64_t seed;        /* the generator's seed (not 0) */
    bool pins; /* pin a human turn now and then (at most 3 at a time) */
    /* An LLM strategy's model (ctxc_session_set_llm_resolver; NULL: none,
     * for the LLM-free strategies) and compression.prefetch-threshold in
     * thousandths (0: unset; with it before_send starts compression jobs). */
    ctxc_llm_resolver_fn llm_resolver;
    void *llm_user;
    uint16_t prefetch_permille;
} vd_cfg_t;

/* What a run did. */
typedef struct {
    uint32_t turns;             /* turns run */
    uint32_t appends;           /* entries appended */
    uint32_t compressions;      /* that changed the history (before_send's
                                   and add_room's) */
    uint32_t room_compressions; /* those made by add_room */
    uint32_t by_limit[3];  /* compressions triggered by tokens, entries, bytes
                              (one compression may count under several) */
    uint32_t dropped_runs; /* compressions that dropped the oldest turns */
    uint32_t fallbacks;    /* network-free compressions instead of a job */
    size_t max_entries;    /* the largest history: entries */
    size_t max_bytes;      /* arena bytes */
    uint64_t max_tokens;   /* tokens, after an append */
    uint64_t max_sent;     /* tokens after before_send, + the pending ones:
                              what a request sends at most */
    uint32_t export_crc;   /* CRC32 of the final history's export */
    uint32_t checks;       /* checks made */
    uint32_t failed;       /* checks failed (each printed as a FAIL: line) */
} vd_stats_t;

/* Runs one voice day (the run stops after the first entry whose checks
 * fail). Returns the number of failed checks (0: all passed). */
unsigned vd_run(const vd_cfg_t *cfg, vd_stats_t *out);

/* The table: a title and header (once), then a row per run. */
void vd_table_head(void);
void vd_table_row(const vd_cfg_t *cfg, const vd_stats_t *st);

#endif /* MPS2_VOICE_DAY_H */
