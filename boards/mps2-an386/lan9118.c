/*
 * LAN9118 netif (lan9118.h). Register offsets and bits from the SMSC
 * LAN9118 datasheet, as QEMU's hw/net/lan9118.c models them:
 *   0x00 RX data FIFO, 0x20 TX data FIFO, 0x40 RX status FIFO,
 *   0x48 TX status FIFO, 0x50 ID_REV, 0x58 INT_STS, 0x5c INT_EN,
 *   0x64 BYTE_TEST (0x87654321), 0x6c RX_CFG, 0x70 TX_CFG, 0x74 HW_CFG,
 *   0x7c RX_FIFO_INF, 0x80 TX_FIFO_INF, 0x84 PMT_CTRL, 0xa4 MAC_CSR_CMD,
 *   0xa8 MAC_CSR_DATA; MAC registers (through MAC_CSR_*): 1 MAC_CR,
 *   2 ADDRH, 3 ADDRL.
 * A frame goes out as TX command A (buffer size, first + last segment),
 * TX command B (frame length, a tag) and the bytes in little-endian words;
 * a received frame is an RX status word (length incl. the 4-byte FCS in
 * bits 29:16, error summary bit 15) and its words in the RX data FIFO.
 */
#include "lan9118.h"

#include <string.h>

#include "lwip/etharp.h"
#include "lwip/pbuf.h"
#include "netif/ethernet.h"

#define REG(off) (*(volatile uint32_t *)(LAN9118_BASE + (off)))

#define RX_DATA 0x00u
#define TX_DATA 0x20u
#define RX_STATUS 0x40u
#define TX_STATUS 0x48u
#define ID_REV 0x50u
#define INT_STS 0x58u
#define INT_EN 0x5cu
#define BYTE_TEST 0x64u
#define RX_CFG 0x6cu
#define TX_CFG 0x70u
#define HW_CFG 0x74u
#define RX_FIFO_INF 0x7cu
#define TX_FIFO_INF 0x80u
#define PMT_CTRL 0x84u
#define FREE_RUN 0x9cu
#define MAC_CSR_CMD 0xa4u
#define MAC_CSR_DATA 0xa8u

#define BYTE_TEST_VALUE 0x87654321u
#define HW_CFG_SRST 0x1u
#define PMT_CTRL_READY 0x1u
#define TX_CFG_TX_ON 0x2u
#define MAC_CSR_BUSY 0x80000000u
#define MAC_CSR_READ 0x40000000u
#define MAC_CR 1u
#define MAC_ADDRH 2u
#define MAC_ADDRL 3u
#define MAC_CR_TXEN 0x8u
#define MAC_CR_RXEN 0x4u
#define MAC_CR_FDPX 0x00100000u
#define TX_CMD_A_FIRST 0x2000u
#define TX_CMD_A_LAST 0x1000u
#define RX_STS_ERROR 0x8000u

#define ETH_FRAME_MAX 1518u

static uint32_t mac_read(uint32_t reg) {
    REG(MAC_CSR_CMD) = MAC_CSR_BUSY | MAC_CSR_READ | reg;
    while ((REG(MAC_CSR_CMD) & MAC_CSR_BUSY) != 0u) {
    }
    return REG(MAC_CSR_DATA);
}

static void mac_write(uint32_t reg, uint32_t value) {
    REG(MAC_CSR_DATA) = value;
    REG(MAC_CSR_CMD) = MAC_CSR_BUSY | reg;
    while ((REG(MAC_CSR_CMD) & MAC_CSR_BUSY) != 0u) {
    }
}

bool lan9118_present(void) { return REG(BYTE_TEST) == BYTE_TEST_VALUE; }

uint32_t lan9118_free_run(void) { return REG(FREE_RUN); }

/* One frame from the pbuf chain p into the TX FIFO. */
static err_t lan9118_output(struct netif *netif, struct pbuf *p) {
    (void)netif;
    if (p->tot_len > ETH_FRAME_MAX - 4u) {
        return ERR_BUF;
    }
    uint32_t len = p->tot_len;
    /* room for the two command words and the frame's words */
    while ((REG(TX_FIFO_INF) & 0xffffu) < len + 8u) {
    }
    REG(TX_DATA) = TX_CMD_A_FIRST | TX_CMD_A_LAST | len;
    REG(TX_DATA) = (len << 16) | len; /* tag = length */
    uint32_t word = 0;
    unsigned fill = 0;
    for (const struct pbuf *q = p; q != NULL; q = q->next) {
        const uint8_t *b = q->payload;
        for (uint16_t i = 0; i < q->len; i++) {
            word |= (uint32_t)b[i] << (8u * fill);
            if (++fill == 4u) {
                REG(TX_DATA) = word;
                word = 0;
                fill = 0;
            }
        }
    }
    if (fill != 0u) {
        REG(TX_DATA) = word;
    }
    return ERR_OK;
}

unsigned lan9118_poll(struct netif *netif) {
    unsigned frames = 0;
    while (((REG(TX_FIFO_INF) >> 16) & 0xffu) != 0u) {
        (void)REG(TX_STATUS); /* sent: nothing to keep */
    }
    while (((REG(RX_FIFO_INF) >> 16) & 0xffu) != 0u) {
        uint32_t status = REG(RX_STATUS);
        uint32_t len = (status >> 16) & 0x3fffu; /* with the FCS */
        uint32_t words = (len + 3u) / 4u;
        if ((status & RX_STS_ERROR) != 0u || len < 18u || len > ETH_FRAME_MAX) {
            for (uint32_t i = 0; i < words; i++) {
                (void)REG(RX_DATA); /* dropped word by word */
            }
            continue;
        }
        uint16_t frame = (uint16_t)(len - 4u);
        struct pbuf *p = pbuf_alloc(PBUF_RAW, frame, PBUF_POOL);
        uint32_t word = 0;
        unsigned have = 0;
        uint32_t read = 0;
        if (p != NULL) {
            for (struct pbuf *q = p; q != NULL; q = q->next) {
                uint8_t *b = q->payload;
                for (uint16_t i = 0; i < q->len; i++) {
                    if (have == 0u) {
                        word = REG(RX_DATA);
                        read++;
                        have = 4;
                    }
                    b[i] = (uint8_t)word;
                    word >>= 8;
                    have--;
                }
            }
        }
        while (read < words) { /* the FCS, or the whole frame without a pbuf */
            (void)REG(RX_DATA);
            read++;
        }
        if (p == NULL) {
            continue; /* out of pbufs: TCP sends it again */
        }
        if (netif->input(p, netif) != ERR_OK) {
            pbuf_free(p);
        }
        frames++;
    }
    return frames;
}

err_t lan9118_netif_init(struct netif *netif) {
    if (!lan9118_present()) {
        return ERR_IF;
    }
    REG(HW_CFG) = HW_CFG_SRST;
    while ((REG(HW_CFG) & HW_CFG_SRST) != 0u) {
    }
    while ((REG(PMT_CTRL) & PMT_CTRL_READY) == 0u) {
    }
    REG(INT_EN) = 0;
    REG(INT_STS) = 0xffffffffu;
    REG(RX_CFG) = 0; /* no offset, no end padding */
    uint32_t lo = mac_read(MAC_ADDRL), hi = mac_read(MAC_ADDRH);
    netif->hwaddr_len = ETH_HWADDR_LEN;
    netif->hwaddr[0] = (uint8_t)lo;
    netif->hwaddr[1] = (uint8_t)(lo >> 8);
    netif->hwaddr[2] = (uint8_t)(lo >> 16);
    netif->hwaddr[3] = (uint8_t)(lo >> 24);
    netif->hwaddr[4] = (uint8_t)hi;
    netif->hwaddr[5] = (uint8_t)(hi >> 8);
    netif->mtu = 1500;
    netif->flags = NETIF_FLAG_BROADCAST | NETIF_FLAG_ETHARP |
                   NETIF_FLAG_ETHERNET | NETIF_FLAG_LINK_UP;
    netif->name[0] = 'e';
    netif->name[1] = 'n';
    netif->output = etharp_output;
    netif->linkoutput = lan9118_output;
    REG(TX_CFG) = TX_CFG_TX_ON;
    /* exact MAC match + broadcast (the reset value is promiscuous) */
    mac_write(MAC_CR, MAC_CR_TXEN | MAC_CR_RXEN | MAC_CR_FDPX);
    return ERR_OK;
}
