/*
 * Board services of the MPS2 AN386 images (startup.c): console output and
 * exit status through semihosting (newlib rdimon).
 */
#ifndef MPS2_AN386_BOARD_H
#define MPS2_AN386_BOARD_H

#include <stddef.h>

/* The command line (QEMU -semihosting-config arg=...): at most this many
 * arguments of at most BOARD_CMDLINE_BYTES - 1 bytes together (the lwIP
 * image's endpoint options take a dozen). */
#define BOARD_MAX_ARGS 24
#define BOARD_CMDLINE_BYTES 512
/* Exit status after a HardFault or an unexpected exception. */
#define BOARD_EXIT_FAULT 3

/* Writes len bytes to the semihosting console (QEMU's stdout). */
void board_write(const char *s, size_t len);
/* Ends the program with this exit status (QEMU exits with it). */
void board_exit(int status) __attribute__((noreturn));

#endif /* MPS2_AN386_BOARD_H */
