/*
 * A log-only port for ctxc on a bare-metal Cortex-M: every member of
 * ctxc_port_t is NULL but the log, which writes to the console. The
 * console and the exit status go through ARM semihosting (QEMU's
 * -semihosting-config enable=on); on a board, console_write() is the UART.
 */
#include <stdint.h>
#include <string.h>

#include "example_port.h"

#define SYS_WRITE0 0x04 /* write a NUL-terminated string */
#define SYS_EXIT 0x18   /* report an exception or the end */
#define ADP_STOPPED_APPLICATION_EXIT 0x20026u
#define ADP_STOPPED_RUN_TIME_ERROR 0x20023u

static uintptr_t semihost(uintptr_t op, uintptr_t arg) {
    register uintptr_t r0 __asm__("r0") = op;
    register uintptr_t r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

void console_write(const char *s) { (void)semihost(SYS_WRITE0, (uintptr_t)s); }

void example_exit(int status) {
    (void)semihost(SYS_EXIT, status == 0 ? ADP_STOPPED_APPLICATION_EXIT
                                         : ADP_STOPPED_RUN_TIME_ERROR);
    for (;;) {
    }
}

static void log_line(void *ctx, ctxc_log_level_t level, const char *msg) {
    (void)ctx;
    static const char *const names[] = {"error", "warn", "info", "debug"};
    console_write("ctxc ");
    console_write(names[level <= CTXC_LOG_DEBUG ? level : CTXC_LOG_DEBUG]);
    console_write(": ");
    console_write(msg);
    console_write("\n");
}

void example_port_init(ctxc_port_t *port) {
    memset(port, 0, sizeof *port); /* NULL: not there */
    port->log = log_line;
    port->log_level = CTXC_LOG_INFO;
}
