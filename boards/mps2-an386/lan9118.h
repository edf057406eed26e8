/*
 * SMSC LAN9118 Ethernet controller as an lwIP netif (NO_SYS, polled), for
 * the MPS2 AN386 as QEMU models it (`-nic user,model=lan9118`): the
 * controller at 0x40200000, 32-bit register access, PIO through its
 * TX/RX data FIFOs, no interrupts (the firmware calls lan9118_poll()).
 *
 *     static struct netif nif;
 *     netif_add(&nif, &ip, &mask, &gw, NULL, lan9118_netif_init,
 *               netif_input);
 *     netif_set_default(&nif); netif_set_up(&nif);
 *     for (;;) { lan9118_poll(&nif); sys_check_timeouts(); ... }
 */
#ifndef MPS2_AN386_LAN9118_H
#define MPS2_AN386_LAN9118_H

#include <stdbool.h>
#include <stdint.h>

#include "lwip/err.h"
#include "lwip/netif.h"

/* The AN386's Ethernet controller (QEMU hw/arm/mps2.c). */
#define LAN9118_BASE 0x40200000u

/* netif init for netif_add(): checks the chip (BYTE_TEST, ID_REV), resets
 * it, reads the MAC address QEMU gave it, enables TX and RX. ERR_IF when
 * no LAN9118 answers (QEMU without a NIC). */
err_t lan9118_netif_init(struct netif *netif);

/* Moves every frame waiting in the RX FIFO into lwIP (netif->input) and
 * drops the TX status words; returns the number of frames received. */
unsigned lan9118_poll(struct netif *netif);

/* True when the chip answered its byte test (a NIC is there). */
bool lan9118_present(void);

/* A free-running 25 MHz counter of the chip (FREE_RUN), 32 bits. */
uint32_t lan9118_free_run(void);

#endif /* MPS2_AN386_LAN9118_H */
