/*
 * Memory sizes of the mps2-an386 board, in one place: ctxc_config.h turns
 * them into the library's CTXC_CFG_* values, and the scenario image
 * (scenario/scenario.c) declares its storage with them, also when it is
 * compiled for the host (so both runs use the same capacities). Plain
 * macros, no ctxc includes.
 */
#ifndef MPS2_AN386_BOARD_SIZES_H
#define MPS2_AN386_BOARD_SIZES_H

/* Entries of one history (16 bytes of slot array each). */
#define MPS2_HISTORY_MAX_ENTRIES 256
/* History byte arena: the example session (boards/host/examples,
 * 87 entries) takes about 68 KB of arena; 96 KiB holds it with room for a
 * conversation to grow before compression, and holds the scenario's
 * 256-entry histories (gen_histories.py, about 100 KB of JSONL each). */
#define MPS2_HISTORY_ARENA_BYTES (96u * 1024u)
/* Work area scratch for the entries a plan or a density step inserts. */
#define MPS2_WORK_SCRATCH_BYTES (32u * 1024u)

/* The caller-owned RAM beyond the history (everything a firmware declares
 * for ctxc but the history's arena and slot array, provider client
 * included: test/embedded/ram_table.sh reads it from ram_probe.c's object)
 * may take at most this; `make test` fails above it (ctest ram_budget).
 * Set at what this configuration takes today (79302 bytes: the work area's
 * 32 KiB scratch and 18 KiB of plan operations and replacements, the
 * import's token array, the provider client, the settings store) plus a
 * little, so that nothing grows unnoticed. The goal for a voice device is
 * 16 KiB (docs/footprint.md says what stands between). */
#define MPS2_RAM_BEYOND_HISTORY_BUDGET 81920

/* The library's flash in each profile (issue 36; test/embedded/
 * flash_profiles.py measures it from the built artifacts, the table of
 * docs/footprint.md says per object where it goes): the whole library
 * (every object of libctxc.a), the voice profile (the library's share of
 * ctxc_voice_app.elf: openai, middle-out + top-down-truncation +
 * high-density, typed settings, no settings commands) and the minimal
 * profile (its share of ctxc_minimal_app.elf). `make test` fails above a
 * budget (ctest flash_budget_<profile>). The budgets are set at what each
 * takes today plus a little, so that nothing grows unnoticed: full 125776
 * bytes, voice 89369, minimal 35470; the full budget went up by 2 KiB for
 * the public helpers that no profile image links (issue 40: text_tool.c
 * 906 bytes, setup.c 709; the full library 130277 bytes then), and all
 * three by about 1 KiB for issue 37's per-turn cost (the density step's
 * memo, the append's id filter, the written-path table, the import's
 * word-at-a-time scanner: full 133095, voice 94262, minimal 37038 then),
 * and by 3-5 KiB for issue 41 and 38's features (images counted by their
 * size per provider, estimate.c +1.4 KB, in every profile; the fact
 * check's ranking and search, the kept head and the summary's usage,
 * strategy_llm.c + anchors.c +1.4 KB; the import's rollback with a job,
 * the restore ids bound to their blocks and the step over the spill
 * budget, session/spill/plan/jsonl +1.0 KB; the retry of errors inside
 * a 2xx answer; the faster id scan and key lookup of issue 37, record.c +
 * json.c +0.3 KB: full 138679, voice 98735, minimal 39004 then).
 * The goals of the issue are below them (not checked; the table prints
 * the distance):
 *   full     budget 136 KiB, goal 100 KB
 *   voice    budget  97 KiB, goal  64 KB
 *   minimal  budget  39 KiB, goal  24 KB */
#define MPS2_FLASH_FULL_BUDGET 139264
#define MPS2_FLASH_FULL_GOAL 102400
#define MPS2_FLASH_VOICE_BUDGET 99328
#define MPS2_FLASH_VOICE_GOAL 65536
#define MPS2_FLASH_MINIMAL_BUDGET 39936
#define MPS2_FLASH_MINIMAL_GOAL 24576

#endif /* MPS2_AN386_BOARD_SIZES_H */
