/*
 * Startup for the MPS2 AN386 (Cortex-M4) firmware images: vector table,
 * Reset_Handler (.data copy, .bss zero, the semihosting command line as
 * argc/argv, main, exit status) and the fault
 * handlers, which report through semihosting and exit non-zero.
 *
 * I/O and exit go through newlib's rdimon (libgloss semihosting):
 * initialise_monitor_handles() opens the console, _write() writes to it and
 * _exit() reports the status to QEMU (SYS_EXIT_EXTENDED, which rdimon finds
 * in the host's semihosting features; that lookup needs the handle table
 * the initialisation sets up).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "board.h"

extern uint32_t __data_start__[], __data_end__[], __data_load__[];
extern uint32_t __bss_start__[], __bss_end__[];
extern uint32_t __stack_top__[];

int main(int argc, char **argv);
void Reset_Handler(void);
void Default_Handler(void);
void HardFault_Handler(void);

/* newlib rdimon (libgloss/arm/syscalls.c) */
extern void initialise_monitor_handles(void);
extern void _exit(int status) __attribute__((noreturn));
extern int _write(int fd, const void *buf, size_t len);

typedef void (*vector_t)(void);

__attribute__((section(".vectors"), used)) static const vector_t vectors[16] = {
    (vector_t)(uintptr_t)__stack_top__, /* initial SP */
    Reset_Handler,
    Default_Handler,   /* NMI */
    HardFault_Handler, /* HardFault */
    HardFault_Handler, /* MemManage */
    HardFault_Handler, /* BusFault */
    HardFault_Handler, /* UsageFault */
    NULL,
    NULL,
    NULL,
    NULL,
    Default_Handler, /* SVCall */
    Default_Handler, /* DebugMon */
    NULL,
    Default_Handler, /* PendSV */
    Default_Handler, /* SysTick */
};

/* rdimon's initialise_monitor_handles() calls newlib's __sinit(), the
 * stdio set-up: linking newlib's would pull in stdio's stream table and
 * with it malloc/free, although nothing here calls them. Nothing in this
 * image uses stdio, so __sinit is defined here as empty: the image links no
 * allocator (ctest symbols_scenario_image checks it). */
struct _reent;
void __sinit(struct _reent *reent);
void __sinit(struct _reent *reent) { (void)reent; }

/* Semihosting call (ARM semihosting: BKPT 0xAB on M-profile). */
static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

#define SYS_GET_CMDLINE 0x15

void board_write(const char *s, size_t len) {
    while (len > 0) {
        int left = _write(1, s, len); /* rdimon: bytes NOT written */
        if (left < 0 || (size_t)left >= len) {
            return;
        }
        s += len - (size_t)left;
        len = (size_t)left;
    }
}

void board_exit(int status) { _exit(status); }

/* The command line QEMU passes (-semihosting-config ...,arg=...), split at
 * spaces. */
static char cmdline[BOARD_CMDLINE_BYTES];
static char *argv_buf[BOARD_MAX_ARGS + 1];

static int get_args(void) {
    struct {
        char *buf;
        int len;
    } block = {cmdline, (int)sizeof cmdline - 1};
    int argc = 0;
    if (semihost(SYS_GET_CMDLINE, &block) != 0) {
        argv_buf[0] = NULL;
        return 0;
    }
    cmdline[sizeof cmdline - 1] = '\0';
    char *p = cmdline;
    while (*p != '\0' && argc < BOARD_MAX_ARGS) {
        while (*p == ' ') {
            *p++ = '\0';
        }
        if (*p == '\0') {
            break;
        }
        argv_buf[argc++] = p;
        while (*p != '\0' && *p != ' ') {
            p++;
        }
    }
    argv_buf[argc] = NULL;
    return argc;
}

void Reset_Handler(void) {
    for (uint32_t *src = __data_load__, *dst = __data_start__;
         dst < __data_end__;) {
        *dst++ = *src++;
    }
    for (uint32_t *dst = __bss_start__; dst < __bss_end__;) {
        *dst++ = 0;
    }
    initialise_monitor_handles();
    int argc = get_args();
    _exit(main(argc, argv_buf));
}

/* Reports the fault (stacked PC, CFSR) on the semihosting console and exits
 * with status BOARD_EXIT_FAULT. */
static void hex32(char *out, uint32_t v) {
    for (int i = 7; i >= 0; i--) {
        out[i] = "0123456789abcdef"[v & 0xfu];
        v >>= 4;
    }
}

__attribute__((used)) static void fault_report(const uint32_t *frame) {
    static char msg[] = "FAULT: hard fault pc=0x00000000 cfsr=0x00000000\n";
    hex32(msg + 23, frame[6]);
    hex32(msg + 39, *(volatile const uint32_t *)0xE000ED28u);
    board_write(msg, sizeof msg - 1);
    _exit(BOARD_EXIT_FAULT);
}

__attribute__((naked)) void HardFault_Handler(void) {
    __asm__ volatile("tst lr, #4\n"
                     "ite eq\n"
                     "mrseq r0, msp\n"
                     "mrsne r0, psp\n"
                     "b fault_report\n");
}

void Default_Handler(void) {
    static const char msg[] = "FAULT: unexpected exception\n";
    board_write(msg, sizeof msg - 1);
    _exit(BOARD_EXIT_FAULT);
}
