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
 * The steps (include/ctxc/port.h: every call is one bounded step):
 *   connect       checks the arguments, sets up TLS, asks lwIP's DNS and
 *                 sends the TCP SYN as far as it can without waiting, then
 *                 answers CTXC_E_IN_PROGRESS (or an error); the caller
 *                 advances it with connect_poll() (a blocking caller calls
 *                 wait() between the steps, as src/http.c does). There is
 *                 no one-call connect: every caller of the port contract
 *                 handles CTXC_E_IN_PROGRESS (a connect that blocked
 *                 inside the transport would hold a resumable job's poll
 *                 for the whole handshake).
 *   connect_poll  pumps the stack once (NO_SYS=1: cfg.poll and
 *                 sys_check_timeouts; NO_SYS=0: nothing to pump, the tcpip
 *                 thread moves the data) and advances the connect by what
 *                 happened: the
 *                 DNS answer starts the TCP connect, the handshake's end
 *                 (lwIP runs it in its receive callbacks) makes it CTXC_OK;
 *                 a refusal, a rejected certificate or the connect timeout
 *                 (counted from connect) is the error. Never waits.
 *   send / recv   move what can be moved; when nothing can, pump the stack
 *                 once (NO_SYS=1) and try again, then answer 0 (try
 *                 again). They never wait (cfg.poll, which blocks under
 *                 NO_SYS=0, is never called from them): a caller that
 *                 wants to block calls wait().
 *   wait(ms)      pumps the stack (NO_SYS=0: releases the core lock and
 *                 calls cfg.poll) until one of lwIP's callbacks ran (data or
 *                 a close arrived, sent data was acknowledged, the DNS
 *                 answered, the connect or handshake ended) or ms passed,
 *                 or the connect timeout, whichever is first; returns at
 *                 once when received data or a close is pending. Blocking
 *                 callers call it after a 0 answer or CTXC_E_IN_PROGRESS; a
 *                 resumable job never does.
 *   last_error    ctxc_lwip_transport_last_error(): the message about the
 *                 last failed call (the HTTP client quotes it).
 * recv answers CTXC_TRANSPORT_EOF when the peer closed (with TLS: after
 * its close_notify); CTXC_TRANSPORT_TLS_ERROR (send too) on a TLS error
 * after the handshake (a record too large, a bad MAC, an alert: the
 * message of last_error has mbedTLS's text and code, "... (-0x7180)"; the
 * HTTP client's CTXC_E_TLS); CTXC_TRANSPORT_ERROR on a reset or a TLS peer
 * that closed the TCP connection without close_notify (an answer cut short
 * must not look complete; the client's CTXC_E_NETWORK).
 *
 * Errors after the handshake and lwIP 2.1.3: altcp_tls_mbedtls drops what
 * mbedtls_ssl_read() answers once the handshake is done (the record is
 * freed, the connection stays open and nothing more arrives: a stall until
 * the read timeout). The port catches those codes by wrapping
 * mbedtls_ssl_read at link time; the image must be linked with
 *     -Wl,--wrap=mbedtls_ssl_read -Wl,--wrap=mbedtls_ecdh_read_params
 *     -Wl,--wrap=mbedtls_calloc -Wl,--wrap=mbedtls_ssl_handshake
 *     -Wl,--wrap=mbedtls_ssl_write
 * (boards/mps2-an386/net/lwip_image.cmake adds them as the port library's
 * link options; without them the link fails on the __real_ symbols, never
 * silently). The other two wraps give the key exchange's group and, when
 * the pool runs out, how much was asked for ("TLS pool too small (needed
 * at least N bytes, the pool has M)", distinct from "CA certificate K
 * does not parse (text (-0x....))").
 *
 * Driving the stack — two ways, chosen by lwIP's NO_SYS:
 *   NO_SYS=1 (bare metal, polling): one pump is cfg.poll (the firmware's
 *     netif poll: received frames into lwIP) and sys_check_timeouts();
 *     nothing else needs to run lwIP between the transport's calls, but
 *     the stack moves only while the transport (or the firmware) pumps it.
 *   NO_SYS=0 (an RTOS, lwIP's tcpip thread). The integrator provides
 *     lwIP's sys_arch for the RTOS (threads, semaphores, mailboxes,
 *     mutexes, sys_now), builds lwIP with LWIP_TCPIP_CORE_LOCKING=1 (the
 *     port does not compile without it; LOCK_TCPIP_CORE/UNLOCK_TCPIP_CORE
 *     from the sys_arch), calls tcpip_init() once and waits for its done
 *     callback before the first connect, brings the netif up (under the
 *     core lock or through tcpip_callback), and sets cfg.poll to a
 *     one-tick delay (vTaskDelay(1), k_msleep(1)): it is called only by
 *     wait(), with the core lock released, so that wait() sleeps.
 *     Threads: the transport's ops, ctxc_lwip_transport_init/_deinit and
 *     the getters below are called from application tasks, never from the
 *     tcpip thread, an lwIP callback, or with the core lock held (it is
 *     not recursive); each takes the core lock around its lwIP and mbedTLS
 *     work. One transport is used by one task at a time (the session's
 *     mutex when tasks share the session). lwIP's callbacks run in the
 *     tcpip thread with the lock held, and with them the TLS handshake and
 *     the record decryption: mbedTLS's pool allocations and the hooks
 *     cfg.entropy (when the random generator reseeds), cfg.time
 *     (certificate dates) and cfg.ticks run there too, so they must be
 *     callable from that thread and must not call the transport.
 *     connect_poll, send and recv never wait, but like every call they
 *     take the core lock and so may block while the tcpip thread holds it
 *     (a handshake step's public-key operation runs there). Tested on the
 *     host with lwIP's POSIX sys_arch under ThreadSanitizer
 *     (test/lwip_sys: ctest lwip_nosys0, lwip_nosys0_asan).
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
#define CTXC_LWIP_HOST_MAX 253u
/* mbedTLS 2.28's handshake states (mbedtls_ssl_states) measured one by one */
#define CTXC_LWIP_TLS_STATES 20u

/* Drives the network while the transport waits (see above). */
typedef void (*ctxc_lwip_poll_fn)(void *ctx);

/* Calendar time: seconds since 1970-01-01 UTC, 0 while not known yet
 * (before SNTP answered). */
typedef uint64_t (*ctxc_lwip_time_fn)(void *ctx);

typedef struct {
    const uint8_t *ca; /* the CA certificate(s): DER, or PEM incl. the NUL */
    size_t ca_len;
    uint32_t connect_timeout_ms; /* DNS + TCP + handshake; 0: default */
    ctxc_clock_fn clock;         /* milliseconds; required */
    void *clock_ctx;
    ctxc_lwip_poll_fn poll; /* NO_SYS=1: the netif poll; NO_SYS=0: a
                               one-tick delay (wait() only); required */
    void *poll_ctx;
    ctxc_entropy_fn entropy; /* seeds TLS; NULL: TLS connects fail */
    void *entropy_ctx;
    void *tls_pool; /* mbedTLS's heap; NULL: TLS connects fail */
    size_t tls_pool_bytes;
    /* With MBEDTLS_HAVE_TIME_DATE: certificate dates are checked against
     * time(); while it answers 0 (or is NULL) TLS connects are refused
     * (CTXC_E_TLS "the time is not known yet"), unless allow_unknown_time:
     * then they go on with the dates unchecked. */
    ctxc_lwip_time_fn time;
    void *time_ctx;
    bool allow_unknown_time;
    /* Optional: a fine free-running counter (any rate; the board's cycle
     * or timer counter) the port reads around mbedTLS's handshake and
     * record calls (ctxc_lwip_transport_tls_work); NULL: not measured. */
    uint32_t (*ticks)(void *ctx);
    void *ticks_ctx;
    /* The handshake's public-key work in slices (mbedTLS built with
     * MBEDTLS_ECP_RESTARTABLE; ignored without it). 0: each handshake
     * step runs its public-key operations whole (a P-256 chain's step is
     * tens of millions of instructions). N: a step does at most about N of
     * mbedTLS's basic ECC operations (mbedtls_ecp_set_max_ops: one is
     * about a multiplication in GF(p) of P-256; a P-256 scalar
     * multiplication is about 3300) and returns; connect_poll goes on
     * with the next slice. And each call runs one handshake state
     * (mbedtls_ssl_handshake_step), not the whole flight. What mbedTLS 2.28 splits: the ECDSA checks
     * (chain, the server key exchange's signature) and the ECDH of the
     * ECDHE-ECDSA suites on P-256 and P-384; so with N != 0 the groups
     * offered are P-256 and P-384 only (X25519 is not restartable).
     * Not split: an ECDHE-RSA handshake (its ECDH and the RSA checks run
     * whole: mbedTLS restarts ECDHE-ECDSA only). */
    uint32_t ecp_max_ops;
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
    uint8_t phase; /* idle, DNS, TCP/TLS, up */
    uint32_t events; /* callbacks run so far: what wait() waits for */
    uint64_t connect_deadline;
    bool dns_done;
    bool dns_found;
    uint32_t dns_addr; /* IPv4, network order */
    uint32_t verify_flags;
    int ssl_err;    /* what mbedtls_ssl_read answered after the handshake
                     * (or mbedtls_ssl_handshake, when it failed) */
    uint16_t group; /* the key exchange's group (mbedtls_ecp_group_id) */
    void *trust;    /* the parsed trust store (mbedtls_x509_crt, pool) */
    void *session;  /* the last handshake's session (mbedtls_ssl_session) */
    char session_host[CTXC_LWIP_HOST_MAX + 1];
    uint16_t session_port;
    uint16_t verified_certs; /* verify callbacks of this handshake */
    uint16_t trust_count;    /* anchors parsed from cfg.ca */
    bool resumed;            /* the connection up resumed a session */
    uint32_t handshake_ticks; /* cfg.ticks inside mbedtls_ssl_handshake */
    uint32_t record_ticks;    /* ... inside mbedtls_ssl_read / _write */
    uint32_t handshake_longest; /* the longest mbedtls_ssl_handshake call */
    uint32_t handshake_slices;  /* calls that stopped in a public-key op */
    uint8_t longest_from, longest_to; /* its mbedTLS states, before/after */
    uint32_t state_longest[CTXC_LWIP_TLS_STATES]; /* per state it began in */
    bool hs_more;     /* a public-key op stopped: go on at connect_poll */
    struct pbuf *hs_held; /* handshake input kept while it is stopped */
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

/* The work of the last connection's TLS in cfg.ticks: inside
 * mbedtls_ssl_handshake (the handshake's computation: key exchange, chain
 * verification; never the network's waits, the calls return when input
 * is missing) and inside mbedtls_ssl_read/_write (the records). Counted
 * from connect on; 0 without cfg.ticks. */
void ctxc_lwip_transport_tls_work(const ctxc_lwip_transport_t *t,
                                  uint32_t *handshake, uint32_t *records);

/* The handshake's slices of the last connection (cfg.ecp_max_ops):
 * *slices the calls of mbedtls_ssl_handshake that stopped in a public-key
 * operation (to go on at the next connect_poll), *longest the longest
 * single call in cfg.ticks (the longest piece of handshake computation
 * one step ran). 0 without cfg.ticks / without slicing. */
void ctxc_lwip_transport_tls_slices(const ctxc_lwip_transport_t *t,
                                    uint32_t *slices, uint32_t *longest);

/* The mbedTLS handshake states (mbedtls_ssl_states) before and after the
 * longest call of ctxc_lwip_transport_tls_slices: which steps it ran. */
void ctxc_lwip_transport_tls_longest_states(const ctxc_lwip_transport_t *t,
                                            int *from, int *to);

/* The longest mbedtls_ssl_handshake call of the last connection that
 * began in handshake state `state` (mbedtls_ssl_states), in cfg.ticks; 0
 * when none ran there. With cfg.ecp_max_ops each call runs one state (or
 * one slice of its public-key work): the cost of each step. */
uint32_t ctxc_lwip_transport_tls_state_longest(const ctxc_lwip_transport_t *t,
                                               unsigned state);

/* The trust anchors parsed from cfg.ca (at the first TLS connect), 0
 * before. */
unsigned ctxc_lwip_transport_trust_count(const ctxc_lwip_transport_t *t);

/* True when the TLS connection that is up resumed the session of the last
 * handshake with the same host:port (a session ticket or id; the port
 * keeps one session and offers it on the next connect to that host:port:
 * no certificate chain is sent or checked, no key exchange signed). */
bool ctxc_lwip_transport_tls_resumed(const ctxc_lwip_transport_t *t);

/* The key exchange's group of the TLS connection that is up ("x25519",
 * "secp256r1", "secp384r1"), "" otherwise. */
const char *ctxc_lwip_transport_tls_group(const ctxc_lwip_transport_t *t);

/* Bytes of the TLS pool in use now and at most so far (0 without
 * MBEDTLS_MEMORY_DEBUG). NO_SYS=0: this and the getters above take the
 * core lock (the tcpip thread writes what they read). */
void ctxc_lwip_tls_pool_usage(size_t *now, size_t *max);

/* Starts the high-water mark of ctxc_lwip_tls_pool_usage() anew from the
 * bytes in use now (a measurement per connection). */
void ctxc_lwip_tls_pool_reset_max(void);

/* Closes any connection and frees the TLS configuration. */
void ctxc_lwip_transport_deinit(ctxc_lwip_transport_t *t);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_TRANSPORT_LWIP_H */
