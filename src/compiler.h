/*
 * ctxc — compiler hints (private header).
 *
 * CTXC__NOINLINE keeps a static function out of line where inlining it
 * makes the code larger at -Os (its callers are cold or it is reached
 * once per entry or per call, so the call costs nothing measurable).
 */
#ifndef CTXC_COMPILER_H
#define CTXC_COMPILER_H

#if defined(__GNUC__)
#define CTXC__NOINLINE __attribute__((noinline))
#else
#define CTXC__NOINLINE
#endif

#endif /* CTXC_COMPILER_H */
