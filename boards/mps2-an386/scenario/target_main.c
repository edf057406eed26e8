/*
 * The scenario image's main on the MPS2 AN386 (QEMU): runs the scenario,
 * measures the stack of each public entry point by painting, exits with
 * the number of failed checks (0: all passed) through semihosting.
 *
 *   image.elf [--plant-fault] [--hard-fault] [--stack-budget=N]
 *                          (arguments: -semihosting-config arg=...)
 *
 * --plant-fault corrupts one byte of the first export before its re-import
 * check: the run must then fail (the self-test of the target test).
 * --hard-fault writes to an unmapped address before the scenario: the
 * HardFault handler must report it and exit with BOARD_EXIT_FAULT.
 * --stack-budget=N checks the stack against N bytes instead of
 * CTXC_CFG_STACK_BUDGET (the self-test of the budget check uses a tiny N).
 */
#include <stdint.h>
#include <string.h>

#include "ctxc/ctxc.h"

#include "../board.h"
#include "scenario.h"

#define PAINT 0xC7C7C7C7u

extern uint32_t __stack_limit__[];

void scn_write(const char *s, size_t len) { board_write(s, len); }

static uint32_t *painted_top;

/* The LAN9118's 25 MHz free-running counter (FREE_RUN, base 0x40200000 +
 * 0x9c): under QEMU -icount shift=0 a tick is 40 guest instructions. */
#define FREE_RUN_REG (*(volatile const uint32_t *)0x4020009Cu)
static uint32_t ticks_start, ticks_last;

uint32_t scn_stack_ticks(void) { return ticks_last; }
static size_t budget = CTXC_CFG_STACK_BUDGET;

/* Paints from the stack limit up to a little below this function's frame. */
__attribute__((noinline)) void scn_stack_begin(const void *frame) {
    uint32_t *sp;
    (void)frame;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    painted_top = sp - 16; /* 64 bytes of margin below this frame */
    for (uint32_t *p = __stack_limit__; p < painted_top; p++) {
        *(volatile uint32_t *)p = PAINT;
    }
    ticks_start = FREE_RUN_REG;
}

/* Bytes between `frame` (in the caller's frame) and the lowest word that
 * is no longer painted. */
__attribute__((noinline)) size_t scn_stack_end(const void *frame) {
    ticks_last = FREE_RUN_REG - ticks_start;
    const uint32_t *p = __stack_limit__;
    while (p < painted_top && *p == PAINT) {
        p++;
    }
    if (p == __stack_limit__) {
        static const char msg[] =
            "FAIL: stack overflow (no painted word left)\n";
        board_write(msg, sizeof msg - 1);
    }
    return (size_t)((uintptr_t)frame - (uintptr_t)p);
}

static void put_num(char *buf, size_t *n, size_t v) {
    char tmp[16];
    size_t k = 0;
    do {
        tmp[k++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (k > 0) {
        buf[(*n)++] = tmp[--k];
    }
}

unsigned scn_stack_report(const char *entry, size_t bytes) {
    char buf[128];
    size_t n = 0;
    size_t len = strlen(entry);
    if (len > 60) {
        len = 60;
    }
    memcpy(buf, "stack: ", 7);
    n = 7;
    memcpy(buf + n, entry, len);
    n += len;
    buf[n++] = ' ';
    put_num(buf, &n, bytes);
    memcpy(buf + n, " bytes (budget ", 15);
    n += 15;
    put_num(buf, &n, budget);
    buf[n++] = ')';
    unsigned bad = bytes > budget;
    if (bad) {
        memcpy(buf + n, " FAIL: over budget", 18);
        n += 18;
    }
    buf[n++] = '\n';
    board_write(buf, n);
    return bad;
}

int main(int argc, char **argv) {
    unsigned flags = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--plant-fault") == 0) {
            flags |= SCN_PLANT_FAULT;
        } else if (strncmp(argv[i], "--stack-budget=", 15) == 0) {
            budget = 0;
            for (const char *p = argv[i] + 15; *p >= '0' && *p <= '9'; p++) {
                budget = budget * 10u + (size_t)(*p - '0');
            }
        } else if (strcmp(argv[i], "--hard-fault") == 0) {
            *(volatile uint32_t *)0xF0000000u = 1u; /* no device there */
        }
    }
    unsigned failed = scn_run(flags);
    return failed > 100 ? 100 : (int)failed;
}
