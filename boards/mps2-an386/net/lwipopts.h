/*
 * lwIP options of the mps2-an386 lwIP image (port/lwip over the LAN9118 of
 * QEMU's mps2-an386, boards/mps2-an386/lan9118.c): bare metal, NO_SYS=1,
 * polled (no interrupts), IPv4 only, TCP + the altcp API with TLS from
 * altcp_tls_mbedtls (mbedTLS config: ctxc_mbedtls_config.h), DNS answered
 * from a local host list only (no name server is configured, so no query
 * ever leaves the device). lwIP 2.1.3 (Debian's, fetched by
 * port/lwip/fetch_sources.sh).
 *
 * Memory: every lwIP pool and its heap (MEM_SIZE) are static arrays
 * (MEM_LIBC_MALLOC=0, MEMP_MEM_MALLOC=0); TLS allocates from the mbedTLS
 * pool instead (MPS2_TLS_POOL_BYTES, board_net.h; port/lwip's
 * altcp_tls_mbedtls_mem functions).
 */
#ifndef MPS2_AN386_LWIPOPTS_H
#define MPS2_AN386_LWIPOPTS_H

#include "board_net.h"

#define NO_SYS 1
#define SYS_LIGHTWEIGHT_PROT 0 /* one context: nothing runs in interrupts */
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define LWIP_NETIF_API 0

#define MEM_ALIGNMENT 4
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 0
#define MEM_SIZE MPS2_LWIP_HEAP_BYTES

#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 1 /* DNS needs it compiled in */
#define LWIP_TCP 1
#define LWIP_DHCP 0 /* fixed address: board_net.h */
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0
#define IP_REASSEMBLY 0
#define IP_FRAG 0

/* TCP: one connection at a time (the HTTP client's). The window must hold
 * a whole TLS record: altcp_tls_mbedtls gives the window back for a record
 * only once mbedTLS has all of it, so a window smaller than the largest
 * incoming record stalls the connection (production: 16 KiB records plus
 * the record overhead: 12 segments; lab: 4 KiB records, 4 segments). */
#define TCP_MSS 1460
#if defined(MPS2_TLS_PROFILE_LAB)
#define TCP_WND (4 * TCP_MSS)
#else
#define TCP_WND (12 * TCP_MSS)
#endif
#define TCP_SND_BUF (4 * TCP_MSS)
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF) / TCP_MSS)
#define MEMP_NUM_TCP_PCB 4
#define MEMP_NUM_TCP_PCB_LISTEN 1
#define MEMP_NUM_TCP_SEG 16
#define MEMP_NUM_UDP_PCB 2
#define MEMP_NUM_ALTCP_PCB 8
/* received segments of one window, and the decrypted text of a 16 KiB
 * record waiting for the reader (altcp_tls_mbedtls puts it in pool
 * pbufs) */
#if defined(MPS2_TLS_PROFILE_LAB)
#define PBUF_POOL_SIZE 12
#else
#define PBUF_POOL_SIZE 32
#endif
#define PBUF_POOL_BUFSIZE 1536
#define LWIP_TCP_KEEPALIVE 0

#define LWIP_ALTCP 1
#define LWIP_ALTCP_TLS 1
#define LWIP_ALTCP_TLS_MBEDTLS 1

/* DNS through lwIP: this table first (the fixture's host name is QEMU
 * user-net's gateway, which QEMU maps to the host's 127.0.0.1), then the
 * configured server (board_net.h MPS2_NET_DNS_SERVER or --dns; none by
 * default, so no query leaves the device). */
#define LWIP_DNS 1
/* The DNS server's UDP port: 53, a variable so that a test can run its
 * responder on an unprivileged port (--dns=A.B.C.D:PORT). */
extern unsigned short mps2_dns_port;
#define DNS_SERVER_PORT mps2_dns_port
#define DNS_LOCAL_HOSTLIST 1
#define DNS_LOCAL_HOSTLIST_IS_DYNAMIC 0
#define MPS2_IP4_INIT_(a, b, c, d) IPADDR4_INIT_BYTES(a, b, c, d)
#define MPS2_IP4_INIT(bytes) MPS2_IP4_INIT_(bytes)
#define DNS_LOCAL_HOSTLIST_INIT                                                \
    {                                                                          \
        DNS_LOCAL_HOSTLIST_ELEM(MPS2_NET_FIXTURE_HOST,                         \
                                MPS2_IP4_INIT(MPS2_NET_GW))                    \
    }

/* Calendar time from lwIP's SNTP app (apps/sntp/sntp.c): one server, set
 * by the firmware (net_board.c: mps2_time_start), no DNS for it; the answer
 * sets the board's calendar clock (mps2_time_set), which the TLS layer
 * reads for certificate dates. The server's UDP port is a variable so that
 * a test can run its NTP responder on an unprivileged port (123 on a real
 * network). */
extern unsigned short mps2_sntp_port;
void mps2_time_set(unsigned long sec);
#define SNTP_SERVER_DNS 0
#define SNTP_MAX_SERVERS 1
#define SNTP_PORT mps2_sntp_port
#define SNTP_SET_SYSTEM_TIME(sec) mps2_time_set((unsigned long)(sec))
#define SNTP_STARTUP_DELAY 0
#define SNTP_RECV_TIMEOUT 2000
#define SNTP_CHECK_RESPONSE 1 /* the answer must come from the server asked */
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 1)

#define LWIP_NETIF_STATUS_CALLBACK 0
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_STATS 0
#define LWIP_CHECKSUM_CTRL_PER_NETIF 0

#endif /* MPS2_AN386_LWIPOPTS_H */
