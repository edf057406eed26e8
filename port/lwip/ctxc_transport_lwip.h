/*
 * ctxc lwIP transport — the transport of include/ctxc/port.h over lwIP's
 * altcp API, TLS from altcp_tls_mbedtls (lwIP 2.1.x, mbedTLS 2.28), for
 * devices whose network is lwIP.
 *
 *     static ctxc_lwip_transport_t net;            // caller-owned
 *     static uint8_t tls_pool[40 * 1024];          // mbedTLS allocations
 *     ctxc_lwip_transport_config_t cfg = {
 *         .ca = ca_der, .ca_len = sizeof ca_der,   // compiled in
 *         .clock = board_ms, .poll = board_net_poll,
 *         .entropy = board_trng,                   // the port's hook
 *         .tls_pool = tls_pool, .tls_pool_bytes = sizeof tls_pool,
 *     };
 *     ctxc_lwip_transport_init(&net, &cfg, &err);
 *     port.transport = ctxc_lwip_transport(&net);
 *
 * connect(host, port, tls): the host name through lwIP's DNS
 * (dns_gethostbyname: its local host list, its cache, or a query to the
 * configured server; dotted IPv4 addresses directly), then altcp_connect;
 * with tls the handshake with SNI = host, the chain verified against the CA
 * (DER, or PEM with the NUL counted in ca_len) and the certificate's DNS
 * names matched to host (mbedTLS 2.28 matches DNS names only: give a name,
 * not an address, for https); verification is required, there is no way
 * to turn it off. The connect timeout bounds DNS, TCP and the handshake.
 * Errors as the port contract says: CTXC_E_NETWORK (resolve, refused,
 * reset), CTXC_E_TLS (CA, entropy, handshake, verification with the reason:
 * "not trusted", "name mismatch"...), CTXC_E_TIMEOUT, CTXC_E_INVALID_ARG.
 *
 * send / recv: each call waits at most poll_slice_ms for room or data,
 * driving the stack meanwhile, and answers 0 (try again) when the slice
 * passed; the HTTP client counts network.read-timeout-ms across those 0
 * answers with the port clock. recv answers CTXC_TRANSPORT_EOF when the
 * peer closed, CTXC_TRANSPORT_ERROR on a reset or a TLS error.
 *
 * Driving the stack — two ways, chosen by lwIP's NO_SYS:
 *   NO_SYS=1 (bare metal, polling): whenever the transport waits it calls
 *     cfg.poll (the firmware's netif poll: received frames into lwIP) and
 *     sys_check_timeouts(); nothing else needs to run lwIP meanwhile.
 *   NO_SYS=0 (an RTOS, lwIP's tcpip thread): every lwIP call of the
 *     transport is made under LOCK_TCPIP_CORE() (LWIP_TCPIP_CORE_LOCKING=1
 *     is required), the callbacks run in the tcpip thread; while waiting
 *     the transport releases the lock and calls cfg.poll, which must block
 *     for a moment (e.g. vTaskDelay(1)); the tcpip thread and the netif
 *     driver move the data. Use it from one task at a time.
 *
 * Memory: everything ctxc keeps is in the caller's ctxc_lwip_transport_t;
 * mbedTLS (and the altcp TLS state) allocate from cfg.tls_pool through
 * MBEDTLS_MEMORY_BUFFER_ALLOC_C (ctxc_lwip_tls_mem.c replaces lwIP's
 * altcp_tls_mbedtls_mem.c, which would use the lwIP heap). One transport
 * (one pool) per image: the pool and the entropy hook are process-wide in
 * mbedTLS.
 *
 * Entropy: mbedTLS's entropy collector reads mbedtls_hardware_poll()
 * (MBEDTLS_ENTROPY_HARDWARE_ALT), which this port implements over
 * cfg.entropy: the board's TRNG. An emulator has none; see the board's
 * note (boards/mps2-an386: QEMU's is not a real TRNG).
 */
#ifndef CTXC_TRANSPORT_LWIP_H
#define CTXC_TRANSPORT_LWIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/port.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CTXC_LWIP_CONNECT_TIMEOUT_MS 10000u
#define CTXC_LWIP_POLL_SLICE_MS 20u
#define CTXC_LWIP_HOST_MAX 253u

/* Drives the network while the transport waits (see above). */
typedef void (*ctxc_lwip_poll_fn)(void *ctx);

typedef struct {
    const uint8_t *ca; /* the CA certificate(s): DER, or PEM incl. the NUL */
    size_t ca_len;
    uint32_t connect_timeout_ms; /* DNS + TCP + handshake; 0: default */
    uint32_t poll_slice_ms;      /* longest wait of one send/recv; 0: default */
    ctxc_clock_fn clock;         /* milliseconds; required */
    void *clock_ctx;
    ctxc_lwip_poll_fn poll; /* NO_SYS: the netif poll; required */
    void *poll_ctx;
    ctxc_entropy_fn entropy; /* seeds TLS; NULL: TLS connects fail */
    void *entropy_ctx;
    void *tls_pool; /* mbedTLS's heap; NULL: TLS connects fail */
    size_t tls_pool_bytes;
} ctxc_lwip_transport_config_t;

struct altcp_pcb;
struct altcp_tls_config;
struct pbuf;

/* One connection's state; caller-owned, fields private. */
typedef struct {
    ctxc_lwip_transport_config_t cfg;
    bool inited;
    bool tls;
    bool up;     /* connected (handshake done) */
    bool eof;    /* the peer closed */
    bool failed; /* the err callback ran: pcb gone */
    int8_t err;  /* its err_t */
    bool dns_done;
    bool dns_found;
    uint32_t dns_addr; /* IPv4, network order */
    uint32_t verify_flags;
    struct altcp_pcb *pcb;
    struct altcp_tls_config *tls_conf;
    struct pbuf *rx; /* received, not yet read */
    char host[CTXC_LWIP_HOST_MAX + 1];
    uint16_t port;
    char last_error[192];
} ctxc_lwip_transport_t;

/* Initialises t with a copy of cfg (the CA and the pool must outlive t).
 * Errors: CTXC_E_INVALID_ARG (NULL t or cfg, no clock or poll hook). */
ctxc_status_t ctxc_lwip_transport_init(ctxc_lwip_transport_t *t,
                                       const ctxc_lwip_transport_config_t *cfg,
                                       ctxc_error_t *err);

/* The transport over t: ops + ctx for ctxc_port_t.transport. */
ctxc_transport_t ctxc_lwip_transport(ctxc_lwip_transport_t *t);

/* Why the last connect failed or send/recv answered < 0 ("" if none); for
 * a rejected certificate every reason mbedTLS gives, whole (the error
 * message is cut to CTXC_CFG_ERROR_MESSAGE_LEN). */
const char *ctxc_lwip_transport_last_error(const ctxc_lwip_transport_t *t);

/* The connection's TLS version and cipher suite ("TLSv1.2",
 * "TLS-ECDHE-ECDSA-WITH-AES-128-GCM-SHA256"), both "" when it is not a
 * TLS connection that is up. */
void ctxc_lwip_transport_tls_info(const ctxc_lwip_transport_t *t,
                                  const char **version, const char **suite);

/* Bytes of the TLS pool in use now and at most so far (0 without
 * MBEDTLS_MEMORY_DEBUG). */
void ctxc_lwip_tls_pool_usage(size_t *now, size_t *max);

/* Closes any connection and frees the TLS configuration. */
void ctxc_lwip_transport_deinit(ctxc_lwip_transport_t *t);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_TRANSPORT_LWIP_H */
