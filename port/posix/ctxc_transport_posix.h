/*
 * ctxc POSIX transport — the transport of include/ctxc/port.h over BSD
 * sockets, with mbedTLS for https (hosts and simulation builds).
 *
 *     static ctxc_posix_transport_t net;   // caller-owned, one per connection
 *     ctxc_posix_transport_config_t cfg = {
 *         .ca_file = NULL,                 // NULL / "": the system bundle
 *         .connect_timeout_ms = 10000,     // 0: the default
 *         .poll_slice_ms = 0,              // unused (send/recv never wait)
 *         .entropy = ctxc_posix_entropy,   // the port's entropy hook
 *     };
 *     ctxc_posix_transport_init(&net, &cfg, &err);
 *     port.transport = ctxc_posix_transport(&net);
 *     ... the HTTP client calls connect / send / recv / close ...
 *     ctxc_posix_transport_deinit(&net);
 *
 * connect(host, port, tls) answers CTXC_E_IN_PROGRESS (or CTXC_OK / an
 * error at once) and connect_poll() advances it one bounded step per call,
 * never waiting for the network:
 *   - connect: the CA file is read and the random generator seeded (from
 *     the entropy hook) at the first TLS connect, once per transport;
 *     getaddrinfo(host) (IPv4 and IPv6; it is the one blocking call: POSIX
 *     has no non-blocking resolver, and an address literal or a name of
 *     /etc/hosts answers at once), then a non-blocking TCP connect of the
 *     first address;
 *   - connect_poll: whether the TCP connect completed (poll(2) with a 0
 *     timeout; a failed address moves on to the next), then with tls one
 *     mbedtls_ssl_handshake_step() per call. The steps that do public-key
 *     work (the server certificate chain's verification, the server key
 *     exchange's signature, the client key exchange) are the longest:
 *     docs/compression-job.md has their measured durations.
 *   - the connect timeout bounds everything from connect() on, checked at
 *     every connect_poll;
 *   - with tls: TLS 1.2 or later, SNI = host, the chain verified against
 *     the CA file (PEM; the system bundle by default) and the certificate
 *     matched to host (mbedTLS 2.28 matches DNS names only: give a name,
 *     not an IP address, for https). There is no way to turn verification
 *     off.
 *   - errors: CTXC_E_NETWORK (resolve, refused, unreachable, reset),
 *     CTXC_E_TLS (CA file, entropy, handshake; a verification failure
 *     names host:port and the reason from mbedtls_x509_crt_verify_info:
 *     expired, not trusted, name mismatch), CTXC_E_TIMEOUT,
 *     CTXC_E_INVALID_ARG (NULL or empty host, port 0, already connected;
 *     connect_poll without a connect under way). After an error the
 *     connection is released (close() is still harmless).
 *
 * send / recv: one try on the non-blocking socket, never a wait: 0 (try
 * again) when it cannot move bytes now. wait(ms) is poll(2) on the socket
 * for what the last call waited for (readable, writable), at most ms; it
 * returns at once when there is nothing to wait for: no connection (a
 * pause is the port's delay_ms, not the transport's), TLS holding
 * decrypted bytes, a handshake step that can run now, or no send/recv
 * that found the socket not ready since the last one that moved bytes.
 * recv answers CTXC_TRANSPORT_EOF when
 * the peer closed (TLS close_notify, or the TCP stream ending: an HTTP
 * client tells a cut answer from a whole one by its framing),
 * CTXC_TRANSPORT_ERROR on a reset or a TLS error;
 * ctxc_posix_transport_last_error() says which. SIGPIPE is never raised
 * (MSG_NOSIGNAL).
 *
 * Memory: everything ctxc keeps is in the caller's ctxc_posix_transport_t.
 * mbedTLS allocates its own internals (the parsed CA certificates, the
 * session buffers) from its heap; ctxc code calls no allocator.
 */
#ifndef CTXC_TRANSPORT_POSIX_H
#define CTXC_TRANSPORT_POSIX_H

#include <stdbool.h>
#include <stdint.h>

#include <netdb.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/ssl.h>
#include <mbedtls/x509_crt.h>

#include "ctxc/port.h"
#include "ctxc/settings.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The CA bundle used when no CA file is configured (Debian, Ubuntu). */
#define CTXC_POSIX_CA_BUNDLE "/etc/ssl/certs/ca-certificates.crt"
/* Defaults for a config value of 0 (the settings registry has the same
 * connect default: network.connect-timeout-ms). */
#define CTXC_POSIX_CONNECT_TIMEOUT_MS 10000u
#define CTXC_POSIX_POLL_SLICE_MS 100u
/* Longest CA file path and host name (bytes, without the NUL). */
#define CTXC_POSIX_CA_PATH_MAX 1023u
#define CTXC_POSIX_HOST_MAX 253u

typedef struct {
    const char *ca_file;         /* PEM file; NULL or "": the system bundle
                                    (copied by init) */
    uint32_t connect_timeout_ms; /* connect + TLS handshake; 0: default */
    uint32_t poll_slice_ms;      /* unused since send/recv never wait (the
                                    wait op takes its own time); kept so
                                    existing configurations compile */
    ctxc_entropy_fn entropy;     /* seeds TLS; NULL: TLS connects fail */
    void *entropy_ctx;
    uint32_t ecp_max_ops; /* with an mbedTLS built with
                             MBEDTLS_ECP_RESTARTABLE: the handshake's ECC
                             work (chain and key exchange signatures, the
                             ECDHE) in slices of at most this many basic
                             ECC operations, one a connect_poll, the groups
                             offered P-256 and P-384; 0, or an mbedTLS
                             without it (Debian's): each step whole */
} ctxc_posix_transport_config_t;

/* One connection's state; caller-owned, fields private. */
typedef struct {
    char ca_file[CTXC_POSIX_CA_PATH_MAX + 1];
    uint32_t connect_timeout_ms;
    uint32_t poll_slice_ms;
    ctxc_entropy_fn entropy;
    void *entropy_ctx;
    uint32_t ecp_max_ops; /* the config's; 0 without MBEDTLS_ECP_RESTARTABLE */
    uint32_t tls_slices;  /* connect_polls that stopped in the middle of an
                             ECC operation (MBEDTLS_ERR_SSL_CRYPTO_IN_PROGRESS),
                             counted over the transport's life */

    bool inited; /* between init and deinit */
    int fd;      /* -1: not connected */
    bool tls;
    bool ssl_live;  /* ssl was set up for this connection */
    bool tls_ready; /* CA parsed, generator seeded, config built */
    int sock_errno; /* errno of the last failed socket call in a BIO */
    /* the connect under way (connect answered CTXC_E_IN_PROGRESS) */
    uint8_t phase;     /* 0 idle/connected, 1 TCP connect, 2 handshake */
    short want;        /* poll events the connection waits for (wait op) */
    uint64_t deadline; /* the connect timeout, by CLOCK_MONOTONIC */
    struct addrinfo *addrs; /* getaddrinfo's list, until connected */
    struct addrinfo *next;  /* the address to try after the current one */
    int last_errno;         /* why the last address failed */
    unsigned tried;         /* addresses tried */
    char host[CTXC_POSIX_HOST_MAX + 1];
    uint16_t port;
    ctxc_error_t entropy_err; /* why the entropy hook failed */
    char last_error[128];     /* why the last send/recv failed */

    mbedtls_x509_crt ca;
    mbedtls_ctr_drbg_context drbg;
    mbedtls_ssl_config conf;
    mbedtls_ssl_context ssl;
} ctxc_posix_transport_t;

/* Initialises t (not connected) with a copy of cfg. Nothing is read or
 * opened yet. Call ctxc_posix_transport_deinit() before initialising an
 * initialised t again (mbedTLS state would leak). Errors: CTXC_E_INVALID_ARG
 * (NULL t or cfg, a CA path longer than CTXC_POSIX_CA_PATH_MAX). */
ctxc_status_t
ctxc_posix_transport_init(ctxc_posix_transport_t *t,
                          const ctxc_posix_transport_config_t *cfg,
                          ctxc_error_t *err);

/* The config from the settings: network.ca-file (unset: NULL, the system
 * bundle), network.connect-timeout-ms, and the port's entropy hook (port
 * may be NULL: no entropy). poll_slice_ms is the default. ca_file points
 * into the store (init copies it). network.read-timeout-ms is not the
 * transport's: the HTTP client counts it across recv's 0 answers. */
ctxc_posix_transport_config_t
ctxc_posix_transport_config(const ctxc_settings_store_t *settings,
                            const ctxc_port_t *port);

/* The transport over t (which must outlive it): ops + ctx for
 * ctxc_port_t.transport. */
ctxc_transport_t ctxc_posix_transport(ctxc_posix_transport_t *t);

/* Why the last send/recv answered < 0, or the last connect failed ("" when
 * nothing failed). */
const char *ctxc_posix_transport_last_error(const ctxc_posix_transport_t *t);

/* Closes any connection and releases what mbedTLS holds for t (the CA
 * certificates, the generator, the TLS config). t can be initialised
 * again. Does nothing on a t that is not initialised (a zeroed one, or one
 * already deinitialised). */
void ctxc_posix_transport_deinit(ctxc_posix_transport_t *t);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_TRANSPORT_POSIX_H */
