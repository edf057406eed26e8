/*
 * Board services of the mps2-an386 lwIP image (net_board.c): the network
 * interface (LAN9118, fixed address of board_net.h), its poll, a
 * millisecond clock, the entropy hook, the compiled-in CA slot.
 */
#ifndef MPS2_AN386_NET_BOARD_H
#define MPS2_AN386_NET_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "ctxc/port.h"

/* lwip_init(), the LAN9118 netif up with the fixed address. Writes one line
 * describing it into line[0..cap). Returns false when there is no NIC. */
bool mps2_net_up(char *line, size_t cap);

/* ctxc_lwip_poll_fn: received frames into lwIP. */
void mps2_net_poll(void *ctx);

/* ctxc_clock_fn: milliseconds since mps2_net_up (the LAN9118's 25 MHz
 * free-running counter, extended to 64 bits). */
uint64_t mps2_clock_ms(void *ctx);

/* The LAN9118's 25 MHz free-running counter (wraps after 171 s): under
 * QEMU -icount shift=0 one tick is 40 instructions. */
uint32_t mps2_ticks(void *ctx);

/* ctxc_entropy_fn of the QEMU board. NOT A TRNG: the MPS2 AN386 as QEMU
 * models it has no random number generator, so the bytes are read from the
 * host's /dev/urandom through semihosting (SYS_OPEN/SYS_READ). They are
 * unpredictable, but they come from the debug channel: a real board reads
 * its TRNG peripheral here and never a host file, a counter or a clock. */
ctxc_status_t mps2_entropy(void *ctx, uint8_t *buf, size_t len,
                           ctxc_error_t *err);

/* Calendar time (SNTP): mps2_time_start asks the NTP server at
 * 10.0.2.2:port (lwIP's sntp app, polled by the netif poll's timers);
 * mps2_time_now answers seconds since 1970 UTC, 0 until the first answer
 * (a ctxc_lwip_time_fn). mps2_time_set is SNTP_SET_SYSTEM_TIME. */
void mps2_time_start(unsigned short port);
uint64_t mps2_time_now(void *ctx);
void mps2_time_set(unsigned long sec);

/* The trust store (trust_store.c, made by gen_trust_store.py; tests
 * overwrite the area): *len 0 when it is empty. */
const uint8_t *mps2_ca(size_t *len);

#endif /* MPS2_AN386_NET_BOARD_H */
