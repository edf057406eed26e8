/*
 * ctxc — compiler hints (private header).
 *
 * CTXC__NOINLINE keeps a static function out of line where inlining it
 * makes the code larger at -Os (its callers are cold or it is reached
 * once per entry or per call, so the call costs nothing measurable), or
 * where a function with a large frame would otherwise stack it on top of a
 * deep call chain (issue 13: the stack of the public entry points).
 */
#ifndef CTXC_COMPILER_H
#define CTXC_COMPILER_H

#if defined(__GNUC__)
#define CTXC__NOINLINE __attribute__((noinline))
#else
#define CTXC__NOINLINE
#endif

/* CTXC__SIZE_NOINLINE: out of line only when built for size (-Os: the
 * Cortex-M build), where GCC's inlining of these makes the code larger;
 * hosts (-O2) inline them as they see fit (some are on hot paths). */
#if defined(__GNUC__) && defined(__OPTIMIZE_SIZE__)
#define CTXC__SIZE_NOINLINE __attribute__((noinline))
#else
#define CTXC__SIZE_NOINLINE
#endif

/* CTXC__HOST_FAST: 64-bit hosts compile shortcuts that only make a path
 * faster (the same results as the general path next to them); small
 * targets keep the general path and the flash. */
#include <stdint.h>
#if SIZE_MAX > 0xFFFFFFFFu && !defined(CTXC__NO_HOST_FAST)
#define CTXC__HOST_FAST 1
#endif

#endif /* CTXC_COMPILER_H */
