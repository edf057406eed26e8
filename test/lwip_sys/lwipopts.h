/*
 * lwIP options of the host test lwip_nosys0 (test/lwip_sys): port/lwip
 * with an OS underneath, as an RTOS integrator builds it. NO_SYS=0, lwIP's
 * tcpip thread, LWIP_TCPIP_CORE_LOCKING=1; the OS layer is the POSIX
 * sys_arch (pthreads) that Debian's lwIP source ships in port/ (fetched by
 * port/lwip/fetch_sources.sh). The only network is lwIP's loopback netif
 * (127.0.0.1): the test's TLS server listens inside the same stack, so no
 * packet leaves the process.
 *
 * LWIP_ASSERT_CORE_LOCKED() is the sys_arch's check (sys_check_core_locking:
 * the calling thread must hold the core lock); a failed lwIP assertion
 * aborts the test.
 */
#ifndef LWIP_SYS_TEST_LWIPOPTS_H
#define LWIP_SYS_TEST_LWIPOPTS_H

#define NO_SYS 0
#define LWIP_TCPIP_CORE_LOCKING 1
#define LWIP_TCPIP_CORE_LOCKING_INPUT 0
#define SYS_LIGHTWEIGHT_PROT 1
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define LWIP_NETIF_API 0

/* lwIP's heap and pools: static (as on a device) */
#define MEM_ALIGNMENT 8
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 0
#define MEM_SIZE (256 * 1024)

#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 0
#define LWIP_ETHERNET 0
#define LWIP_ICMP 1
#define LWIP_RAW 0
#define LWIP_UDP 1 /* DNS needs it compiled in */
#define LWIP_TCP 1
#define LWIP_DHCP 0
#define LWIP_AUTOIP 0
#define LWIP_IGMP 0

/* the loopback netif 127.0.0.1 (lwip_init adds it); its packets are
 * delivered by the tcpip thread (LWIP_NETIF_LOOPBACK_MULTITHREADING) */
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1
#define LWIP_LOOPBACK_MAX_PBUFS 0

/* TCP: the window holds a whole 16 KiB TLS record (altcp_tls_mbedtls
 * gives a record's window back only once mbedTLS has all of it) */
#define TCP_MSS 1460
#define TCP_WND (16 * TCP_MSS)
#define TCP_SND_BUF (8 * TCP_MSS)
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF) / TCP_MSS)
#define MEMP_NUM_TCP_PCB 16
#define MEMP_NUM_TCP_PCB_LISTEN 4
#define MEMP_NUM_TCP_SEG 128
#define MEMP_NUM_UDP_PCB 2
#define MEMP_NUM_ALTCP_PCB 32
#define PBUF_POOL_SIZE 96
#define PBUF_POOL_BUFSIZE 1536
#define LWIP_TCP_KEEPALIVE 0
#define TCP_LISTEN_BACKLOG 0

#define LWIP_ALTCP 1
#define LWIP_ALTCP_TLS 1
#define LWIP_ALTCP_TLS_MBEDTLS 1

/* the server's name, from lwIP's local host list: the loopback address */
#define LWIP_DNS 1
#define DNS_LOCAL_HOSTLIST 1
#define DNS_LOCAL_HOSTLIST_IS_DYNAMIC 0
#define DNS_LOCAL_HOSTLIST_INIT                                                \
    {                                                                          \
        DNS_LOCAL_HOSTLIST_ELEM("fixture.ctxc.test",                           \
                                IPADDR4_INIT_BYTES(127, 0, 0, 1))              \
    }

/* the tcpip thread */
#define TCPIP_MBOX_SIZE 64
#define TCPIP_THREAD_STACKSIZE 0
#define TCPIP_THREAD_PRIO 1
#define DEFAULT_THREAD_STACKSIZE 0
#define MEMP_NUM_TCPIP_MSG_INPKT 64

#define LWIP_NETIF_STATUS_CALLBACK 0
#define LWIP_NETIF_LINK_CALLBACK 0
#define LWIP_STATS 0
#define LWIP_CHECKSUM_CTRL_PER_NETIF 0

/* the POSIX sys_arch's core-lock hooks (Debian's port/sys_arch.c) */
void sys_check_core_locking(void);
#define LWIP_ASSERT_CORE_LOCKED() sys_check_core_locking()
void sys_mark_tcpip_thread(void);
#define LWIP_MARK_TCPIP_THREAD() sys_mark_tcpip_thread()
void sys_lock_tcpip_core(void);
#define LOCK_TCPIP_CORE() sys_lock_tcpip_core()
void sys_unlock_tcpip_core(void);
#define UNLOCK_TCPIP_CORE() sys_unlock_tcpip_core()

#endif /* LWIP_SYS_TEST_LWIPOPTS_H */
