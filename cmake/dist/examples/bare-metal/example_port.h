/*
 * The example's port (example_port.c): a console and an exit status
 * through semihosting, and a ctxc port that only logs. A firmware puts its
 * UART (or RTT, ITM...) where console_write() writes.
 */
#ifndef EXAMPLE_PORT_H
#define EXAMPLE_PORT_H

#include "ctxc/ctxc.h"

/* Writes a NUL-terminated string to the console. */
void console_write(const char *s);
/* The port: log lines of level INFO and above to the console, nothing
 * else (no clock, filesystem, network, mutex). */
void example_port_init(ctxc_port_t *port);
/* Ends the program: QEMU exits 0 for status 0, 1 otherwise. */
void example_exit(int status) __attribute__((noreturn));

#endif /* EXAMPLE_PORT_H */
