/*
 * Board services of the mps2-an386 lwIP image (net_board.h), and what lwIP
 * needs from a NO_SYS platform: sys_now() and the arch/cc.h hooks.
 */
#include "net_board.h"

#include <stdbool.h>
#include <string.h>

#include "lwip/apps/sntp.h"
#include "lwip/init.h"
#include "lwip/ip4_addr.h"
#include "lwip/netif.h"
#include "lwip/sys.h"
#include "netif/ethernet.h"

#include "../board.h"
#include "../lan9118.h"
#include "board_net.h"
#include "ctxc_mbedtls_config.h"

extern const uint8_t mps2_ca_slot[MPS2_CA_SLOT_BYTES];

static struct netif nif;

/* IP4_ADDR over the byte lists of board_net.h */
#define SET_IP4_(addr, a, b, c, d) IP4_ADDR(addr, a, b, c, d)
#define SET_IP4(addr, bytes) SET_IP4_(addr, bytes)

/* ---- clock: FREE_RUN (25 MHz, 32 bits) extended ---------------------------
 */

static uint32_t last_ticks;
static uint64_t ticks_hi; /* multiples of 2^32 ticks seen */

uint64_t mps2_clock_ms(void *ctx) {
    (void)ctx;
    uint32_t now = lan9118_free_run();
    if (now < last_ticks) {
        ticks_hi += (uint64_t)1 << 32;
    }
    last_ticks = now;
    return (ticks_hi + now) / 25000u;
}

u32_t sys_now(void) { return (u32_t)mps2_clock_ms(NULL); }

uint32_t mps2_ticks(void *ctx) {
    (void)ctx;
    return lan9118_free_run();
}

/* ---- calendar time: SNTP ------------------------------------------------- */

unsigned short mps2_sntp_port = 123;
unsigned short mps2_dns_port = 53;
static uint64_t time_base;    /* seconds since 1970 at time_base_ms */
static uint64_t time_base_ms; /* mps2_clock_ms when it was set */

void mps2_time_set(unsigned long sec) {
    time_base = sec;
    time_base_ms = mps2_clock_ms(NULL);
}

uint64_t mps2_time_now(void *ctx) {
    (void)ctx;
    if (time_base == 0) {
        return 0;
    }
    return time_base + (mps2_clock_ms(NULL) - time_base_ms) / 1000u;
}

void mps2_time_start(unsigned short port) {
    ip_addr_t server;
    mps2_sntp_port = port;
    SET_IP4(&server, MPS2_NTP_SERVER); /* IPv4-only lwIP: ip_addr_t is ip4_addr_t */
    sntp_setoperatingmode(SNTP_OPMODE_POLL);
    sntp_setserver(0, &server);
    sntp_init();
}

/* ---- semihosting: the host's /dev/urandom -------------------------------- */

static int semihost(int op, const void *arg) {
    register int r0 __asm__("r0") = op;
    register const void *r1 __asm__("r1") = arg;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return r0;
}

#define SYS_OPEN 0x01
#define SYS_CLOSE 0x02
#define SYS_READ 0x06

ctxc_status_t mps2_entropy(void *ctx, uint8_t *buf, size_t len,
                           ctxc_error_t *err) {
    (void)ctx;
    static const char path[] = "/dev/urandom";
    uintptr_t open_args[3] = {(uintptr_t)path, 1 /* "rb" */, sizeof path - 1};
    int fd = semihost(SYS_OPEN, open_args);
    if (fd < 0) {
        return ctxc_error_set(err, CTXC_E_IO,
                              "entropy: semihosting cannot open %s", path);
    }
    uintptr_t read_args[3] = {(uintptr_t)fd, (uintptr_t)buf, len};
    int left = semihost(SYS_READ, read_args); /* bytes NOT read */
    uintptr_t close_args[1] = {(uintptr_t)fd};
    (void)semihost(SYS_CLOSE, close_args);
    if (left != 0) {
        return ctxc_error_set(err, CTXC_E_IO,
                              "entropy: short read from %s over semihosting",
                              path);
    }
    return CTXC_OK;
}

/* ---- lwIP platform hooks (arch/cc.h) ----------------------------------------
 */

void mps2_net_diag(const char *msg) {
    (void)msg; /* LWIP_DEBUG is off: no diagnostics are built */
}

void mps2_net_assert(const char *msg, const char *file, int line) {
    static const char head[] = "FAIL: lwIP assertion: ";
    board_write(head, sizeof head - 1);
    board_write(msg, strlen(msg));
    board_write(" (", 2);
    board_write(file, strlen(file));
    board_write(")\n", 2);
    (void)line;
    board_exit(4);
}

void mps2_tls_exit(int status) {
    static const char msg[] = "FAIL: mbedTLS stopped the image (pool)\n";
    board_write(msg, sizeof msg - 1);
    board_exit(status != 0 ? status : 5);
}

int mps2_tls_fprintf(FILE *stream, const char *format, ...) {
    (void)stream;
    (void)format;
    return 0;
}

uint32_t mps2_net_rand(void) {
    /* xorshift over the cycle counter: TCP ports and DNS ids only */
    static uint32_t x = 0x9e3779b9u;
    x ^= lan9118_free_run();
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return x;
}

/* ---- the interface ----------------------------------------------------------
 */

static void put_dec(char *line, size_t cap, size_t *n, unsigned v) {
    char tmp[12];
    size_t k = 0;
    do {
        tmp[k++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (k > 0 && *n + 1 < cap) {
        line[(*n)++] = tmp[--k];
    }
}

static void put_str(char *line, size_t cap, size_t *n, const char *s) {
    while (*s != '\0' && *n + 1 < cap) {
        line[(*n)++] = *s++;
    }
}

bool mps2_net_up(char *line, size_t cap) {
    size_t n = 0;
    line[0] = '\0';
    if (!lan9118_present()) {
        return false;
    }
    (void)mps2_clock_ms(NULL);
    lwip_init();
    ip4_addr_t ip, mask, gw;
    SET_IP4(&ip, MPS2_NET_IP);
    SET_IP4(&mask, MPS2_NET_MASK);
    SET_IP4(&gw, MPS2_NET_GW);
    if (netif_add(&nif, &ip, &mask, &gw, NULL, lan9118_netif_init,
                  ethernet_input) == NULL) {
        return false;
    }
    netif_set_default(&nif);
    netif_set_up(&nif);
    netif_set_link_up(&nif);
    put_str(line, cap, &n, "net: lan9118 ");
    for (unsigned i = 0; i < 6; i++) {
        if (i > 0) {
            put_str(line, cap, &n, ":");
        }
        char hx[3] = {"0123456789abcdef"[nif.hwaddr[i] >> 4],
                      "0123456789abcdef"[nif.hwaddr[i] & 15u], '\0'};
        put_str(line, cap, &n, hx);
    }
    put_str(line, cap, &n, ", ");
    const uint8_t *a = (const uint8_t *)&ip;
    for (unsigned i = 0; i < 4; i++) {
        put_dec(line, cap, &n, a[i]);
        put_str(line, cap, &n, i < 3 ? "." : "");
    }
    put_str(line, cap, &n, "/24 gw ");
    a = (const uint8_t *)&gw;
    for (unsigned i = 0; i < 4; i++) {
        put_dec(line, cap, &n, a[i]);
        put_str(line, cap, &n, i < 3 ? "." : "");
    }
    put_str(line, cap, &n, " (lwIP " LWIP_VERSION_STRING ", NO_SYS, polled)");
    line[n] = '\0';
    return true;
}

void mps2_net_poll(void *ctx) {
    (void)ctx;
    (void)lan9118_poll(&nif);
}

const uint8_t *mps2_ca(size_t *len) {
    uint32_t n = (uint32_t)mps2_ca_slot[0] | (uint32_t)mps2_ca_slot[1] << 8 |
                 (uint32_t)mps2_ca_slot[2] << 16 |
                 (uint32_t)mps2_ca_slot[3] << 24;
    *len = n <= MPS2_CA_SLOT_BYTES - 4u ? n : 0u;
    return mps2_ca_slot + 4;
}
