/*
 * ctxc POSIX transport (see ctxc_transport_posix.h): BSD sockets, mbedTLS.
 *
 * mbedTLS calls are limited to ones that exist in 2.28 and 3.x alike (the
 * one difference, the minimum TLS version, is behind a version #if); no
 * mbedtls_net_*: the socket I/O is ours, handed to mbedTLS through
 * mbedtls_ssl_set_bio().
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <mbedtls/ecp.h>
#include <mbedtls/error.h>
#include <mbedtls/version.h>

#include "ctxc_transport_posix.h"

#ifdef MSG_NOSIGNAL
#define SEND_FLAGS MSG_NOSIGNAL
#else
#define SEND_FLAGS 0 /* SO_NOSIGPIPE is set on the socket instead */
#endif

static uint64_t now_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_MONOTONIC, &ts) != 0) {
        return 0;
    }
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Milliseconds left until deadline (0 when passed), as poll() takes them. */
static int left_ms(uint64_t deadline) {
    uint64_t now = now_ms();
    if (now >= deadline) {
        return 0;
    }
    uint64_t d = deadline - now;
    return d > (uint64_t)INT_MAX ? INT_MAX : (int)d;
}

/* Waits until fd is ready for events or ms pass. >0 ready (or an error
 * condition the next call will report), 0 timeout, <0 poll failed. */
static int wait_fd(int fd, short events, int ms) {
    struct pollfd p = {fd, events, 0};
    int r = poll(&p, 1, ms);
    if (r < 0 && errno == EINTR) {
        return 0;
    }
    return r;
}

static void set_last(ctxc_posix_transport_t *t, const char *what,
                     const char *why) {
    (void)snprintf(t->last_error, sizeof t->last_error, "%s: %s", what, why);
}

/* ---- mbedTLS glue ---------------------------------------------------------
 */

/* BIO callbacks: the socket is non-blocking; "would block" becomes
 * WANT_READ / WANT_WRITE, a failure keeps its errno in t->sock_errno. */
static int bio_send(void *ctx, const unsigned char *buf, size_t len) {
    ctxc_posix_transport_t *t = ctx;
    if (len > (size_t)INT_MAX) {
        len = (size_t)INT_MAX;
    }
    ssize_t n = send(t->fd, buf, len, SEND_FLAGS);
    if (n >= 0) {
        return (int)n;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        return MBEDTLS_ERR_SSL_WANT_WRITE;
    }
    t->sock_errno = errno;
    return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

static int bio_recv(void *ctx, unsigned char *buf, size_t len) {
    ctxc_posix_transport_t *t = ctx;
    if (len > (size_t)INT_MAX) {
        len = (size_t)INT_MAX;
    }
    ssize_t n = recv(t->fd, buf, len, 0);
    if (n >= 0) {
        return (int)n; /* 0: the peer closed (mbedTLS: CONN_EOF) */
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
        return MBEDTLS_ERR_SSL_WANT_READ;
    }
    t->sock_errno = errno;
    return MBEDTLS_ERR_SSL_INTERNAL_ERROR;
}

/* The generator's entropy source: the port's hook. */
static int entropy_cb(void *ctx, unsigned char *buf, size_t len) {
    ctxc_posix_transport_t *t = ctx;
    if (t->entropy == NULL) {
        (void)ctxc_error_set(&t->entropy_err, CTXC_E_UNAVAILABLE,
                             "the port has no entropy hook");
        return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
    }
    if (t->entropy(t->entropy_ctx, buf, len, &t->entropy_err) != CTXC_OK) {
        return MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
    }
    return 0;
}

static void mbed_text(int ret, char *buf, size_t cap) {
    mbedtls_strerror(ret, buf, cap);
    if (buf[0] == '\0') {
        (void)snprintf(buf, cap, "mbedTLS error -0x%04X",
                       (unsigned)(ret < 0 ? -ret : ret));
    }
}

/* Frees what tls_prepare built and makes the contexts fresh again. */
static void tls_release(ctxc_posix_transport_t *t) {
    mbedtls_ssl_config_free(&t->conf);
    mbedtls_ctr_drbg_free(&t->drbg);
    mbedtls_x509_crt_free(&t->ca);
    mbedtls_x509_crt_init(&t->ca);
    mbedtls_ctr_drbg_init(&t->drbg);
    mbedtls_ssl_config_init(&t->conf);
    t->tls_ready = false;
}

/* Once per transport: the CA certificates, the seeded generator, the
 * client config (TLS >= 1.2, verification required). */
static ctxc_status_t tls_prepare(ctxc_posix_transport_t *t, ctxc_error_t *err) {
    if (t->tls_ready) {
        return CTXC_OK;
    }
    char why[96];
    const char *ca = t->ca_file[0] != '\0' ? t->ca_file : CTXC_POSIX_CA_BUNDLE;
    int fd = open(ca, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: CA file %s cannot be read: %s", t->host,
                              (unsigned)t->port, ca, strerror(errno));
    }
    (void)close(fd);
    int ret = mbedtls_x509_crt_parse_file(&t->ca, ca);
    if (ret < 0) { /* >= 0: at least one certificate was read */
        mbed_text(ret, why, sizeof why);
        tls_release(t);
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: CA file %s holds no usable certificate "
                              "(%s)",
                              t->host, (unsigned)t->port, ca, why);
    }
    memset(&t->entropy_err, 0, sizeof t->entropy_err);
    static const unsigned char pers[] = "ctxc posix transport";
    ret =
        mbedtls_ctr_drbg_seed(&t->drbg, entropy_cb, t, pers, sizeof pers - 1u);
    if (ret != 0) {
        tls_release(t);
        if (t->entropy_err.status != CTXC_OK) {
            return ctxc_error_set(err, CTXC_E_TLS,
                                  "%s:%u: TLS setup: the entropy source "
                                  "failed: %s",
                                  t->host, (unsigned)t->port,
                                  ctxc_error_message(&t->entropy_err));
        }
        mbed_text(ret, why, sizeof why);
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: TLS setup: seeding the generator: %s",
                              t->host, (unsigned)t->port, why);
    }
    ret = mbedtls_ssl_config_defaults(&t->conf, MBEDTLS_SSL_IS_CLIENT,
                                      MBEDTLS_SSL_TRANSPORT_STREAM,
                                      MBEDTLS_SSL_PRESET_DEFAULT);
    if (ret != 0) {
        mbed_text(ret, why, sizeof why);
        tls_release(t);
        return ctxc_error_set(err, CTXC_E_TLS, "%s:%u: TLS setup: %s", t->host,
                              (unsigned)t->port, why);
    }
    /* verification can not be turned off: REQUIRED is the only mode set */
    mbedtls_ssl_conf_authmode(&t->conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&t->conf, &t->ca, NULL);
    mbedtls_ssl_conf_rng(&t->conf, mbedtls_ctr_drbg_random, &t->drbg);
#if defined(MBEDTLS_ECP_RESTARTABLE) && MBEDTLS_VERSION_NUMBER < 0x03000000
    if (t->ecp_max_ops != 0) {
        /* the groups whose ECDH mbedTLS can stop part-way (not X25519) */
        static const mbedtls_ecp_group_id sliced[] = {MBEDTLS_ECP_DP_SECP256R1,
                                                      MBEDTLS_ECP_DP_SECP384R1,
                                                      MBEDTLS_ECP_DP_NONE};
        mbedtls_ssl_conf_curves(&t->conf, sliced);
    }
#endif
#if MBEDTLS_VERSION_NUMBER >= 0x03020000
    /* 3.2+: the version enum; mbedtls_ssl_conf_min_version is deprecated */
    mbedtls_ssl_conf_min_tls_version(&t->conf, MBEDTLS_SSL_VERSION_TLS1_2);
#elif MBEDTLS_VERSION_NUMBER >= 0x03000000
    /* 3.0 and 3.1 know no TLS version older than 1.2 */
#else
    mbedtls_ssl_conf_min_version(&t->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3);
#endif
    t->tls_ready = true;
    return CTXC_OK;
}

/* ---- connect ----------------------------------------------------------------
 *
 * A state machine over t (connect answers CTXC_E_IN_PROGRESS, connect_poll
 * advances it): the TCP connect of each address in turn (non-blocking;
 * poll(2) with a 0 timeout tells whether it completed), then with tls one
 * mbedtls_ssl_handshake_step() per call. Nothing waits for the network;
 * the CPU-bound parts are the CA file's parse (once per transport, at the
 * first TLS connect), getaddrinfo() (POSIX has no non-blocking resolver:
 * an address literal or a name in /etc/hosts answers at once) and the
 * handshake steps that do public-key work (certificate chain verification,
 * the server key exchange's signature, the client key exchange). */

enum { PH_IDLE = 0, PH_TCP = 1, PH_TLS = 2 };

static void free_addrs(ctxc_posix_transport_t *t) {
    if (t->addrs != NULL) {
        freeaddrinfo(t->addrs);
        t->addrs = NULL;
    }
    t->next = NULL;
}

static void drop_connection(ctxc_posix_transport_t *t) {
    if (t->ssl_live) {
        mbedtls_ssl_free(&t->ssl);
        t->ssl_live = false;
    }
    if (t->fd >= 0) {
        (void)close(t->fd);
        t->fd = -1;
    }
    free_addrs(t);
    t->phase = PH_IDLE;
    t->want = 0;
    t->tls = false;
}

static int open_socket(const struct addrinfo *ai) {
    int fd = socket(ai->ai_family, ai->ai_socktype, ai->ai_protocol);
    if (fd < 0) {
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl < 0 || fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0 ||
        fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
        int e = errno;
        (void)close(fd);
        errno = e;
        return -1;
    }
    int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
#ifdef SO_NOSIGPIPE
    (void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &one, sizeof one);
#endif
    return fd;
}

static ctxc_status_t timed_out(ctxc_posix_transport_t *t, ctxc_error_t *err) {
    if (t->phase == PH_TLS) {
        return ctxc_error_set(err, CTXC_E_TIMEOUT,
                              "%s:%u: TLS handshake timed out after %u ms "
                              "(connect timeout)",
                              t->host, (unsigned)t->port,
                              (unsigned)t->connect_timeout_ms);
    }
    return ctxc_error_set(err, CTXC_E_TIMEOUT,
                          "%s:%u: connect timed out after %u ms", t->host,
                          (unsigned)t->port, (unsigned)t->connect_timeout_ms);
}

/* Starts the TCP connect of the next address: CTXC_OK connected at once,
 * CTXC_E_IN_PROGRESS under way (t->fd set), or the error once every
 * address failed. */
static ctxc_status_t tcp_next(ctxc_posix_transport_t *t, ctxc_error_t *err) {
    while (t->next != NULL) {
        const struct addrinfo *ai = t->next;
        t->next = ai->ai_next;
        t->tried++;
        int fd = open_socket(ai);
        if (fd < 0) {
            t->last_errno = errno;
            continue;
        }
        int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
        if (r == 0) {
            t->fd = fd;
            return CTXC_OK;
        }
        if (errno == EINPROGRESS || errno == EINTR) {
            t->fd = fd;
            t->want = POLLOUT;
            return CTXC_E_IN_PROGRESS;
        }
        t->last_errno = errno;
        (void)close(fd);
    }
    return ctxc_error_set(
        err, CTXC_E_NETWORK, "%s:%u: cannot connect (%u address%s tried): %s",
        t->host, (unsigned)t->port, t->tried, t->tried == 1 ? "" : "es",
        t->last_errno != 0 ? strerror(t->last_errno) : "no address");
}

/* Why verification failed, from mbedtls_x509_crt_verify_info: one line per
 * reason, joined with "; ". */
static void verify_reasons(uint32_t flags, char *out, size_t cap) {
    char info[256];
    int n = mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
    if (n <= 0) {
        (void)snprintf(out, cap, "verification flags 0x%x", (unsigned)flags);
        return;
    }
    size_t k = 0;
    for (const char *p = info; *p != '\0' && k + 1 < cap; p++) {
        if (*p == '\n') {
            if (p[1] != '\0' && k + 3 < cap) {
                out[k++] = ';';
                out[k++] = ' ';
            }
            continue;
        }
        out[k++] = *p;
    }
    out[k] = '\0';
}

#if MBEDTLS_VERSION_NUMBER >= 0x03000000
#define SSL_STATE(s) ((s)->MBEDTLS_PRIVATE(state))
#else
#define SSL_STATE(s) ((s)->state)
#endif

/* The TCP connection is up: sets up the TLS context (no step yet). */
static ctxc_status_t tls_begin(ctxc_posix_transport_t *t, ctxc_error_t *err) {
    char why[128];
    mbedtls_ssl_init(&t->ssl);
    t->ssl_live = true;
    int ret = mbedtls_ssl_setup(&t->ssl, &t->conf);
    if (ret == 0) {
        ret = mbedtls_ssl_set_hostname(&t->ssl, t->host);
    }
    if (ret != 0) {
        mbed_text(ret, why, sizeof why);
        return ctxc_error_set(err, CTXC_E_TLS, "%s:%u: TLS setup: %s", t->host,
                              (unsigned)t->port, why);
    }
    mbedtls_ssl_set_bio(&t->ssl, t, bio_send, bio_recv, NULL);
    t->sock_errno = 0;
    t->phase = PH_TLS;
    t->want = POLLOUT;
    return CTXC_E_IN_PROGRESS;
}

/* One handshake step: CTXC_OK done, CTXC_E_IN_PROGRESS, or the error. */
static ctxc_status_t tls_step(ctxc_posix_transport_t *t, ctxc_error_t *err) {
    char why[128];
    if (SSL_STATE(&t->ssl) == MBEDTLS_SSL_HANDSHAKE_OVER) {
        return CTXC_OK;
    }
    t->sock_errno = 0;
#if defined(MBEDTLS_ECP_RESTARTABLE)
    /* a global of mbedTLS: set for this step only */
    mbedtls_ecp_set_max_ops(t->ecp_max_ops);
    int ret = mbedtls_ssl_handshake_step(&t->ssl);
    mbedtls_ecp_set_max_ops(0);
    if (ret == MBEDTLS_ERR_SSL_CRYPTO_IN_PROGRESS) {
        t->tls_slices++;
        t->want = 0; /* the operation goes on at the next step */
        return CTXC_E_IN_PROGRESS;
    }
#else
    int ret = mbedtls_ssl_handshake_step(&t->ssl);
#endif
    if (ret == 0) {
        t->want = 0; /* the next step may go on at once */
        return SSL_STATE(&t->ssl) == MBEDTLS_SSL_HANDSHAKE_OVER
                   ? CTXC_OK
                   : CTXC_E_IN_PROGRESS;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE) {
        t->want = ret == MBEDTLS_ERR_SSL_WANT_READ ? POLLIN : POLLOUT;
        return CTXC_E_IN_PROGRESS;
    }
    uint32_t flags = mbedtls_ssl_get_verify_result(&t->ssl);
    if (ret == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED ||
        (flags != 0u && flags != (uint32_t)-1)) {
        verify_reasons(flags, why, sizeof why);
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: server certificate rejected: %s", t->host,
                              (unsigned)t->port, why);
    }
    if (t->sock_errno != 0) {
        return ctxc_error_set(err, CTXC_E_NETWORK, "%s:%u: TLS handshake: %s",
                              t->host, (unsigned)t->port,
                              strerror(t->sock_errno));
    }
    if (ret == MBEDTLS_ERR_SSL_CONN_EOF) {
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: TLS handshake: the server closed the "
                              "connection",
                              t->host, (unsigned)t->port);
    }
    mbed_text(ret, why, sizeof why);
    return ctxc_error_set(err, CTXC_E_TLS, "%s:%u: TLS handshake failed: %s",
                          t->host, (unsigned)t->port, why);
}

/* The end of a connect attempt's call: an error drops the connection. */
static ctxc_status_t connect_result(ctxc_posix_transport_t *t,
                                    ctxc_status_t st, ctxc_error_t *err) {
    if (st == CTXC_OK) {
        free_addrs(t);
        t->phase = PH_IDLE;
        t->want = 0;
        return CTXC_OK;
    }
    if (st != CTXC_E_IN_PROGRESS) {
        drop_connection(t);
        (void)snprintf(t->last_error, sizeof t->last_error, "%s",
                       err != NULL ? ctxc_error_message(err) : "connect");
    }
    return st;
}

/* The TCP connect completed (or failed): on to TLS, or the next address. */
static ctxc_status_t tcp_done(ctxc_posix_transport_t *t, ctxc_error_t *err) {
    if (!t->tls) {
        return CTXC_OK;
    }
    return tls_begin(t, err);
}

static ctxc_status_t px_connect_poll(void *ctx, ctxc_error_t *err) {
    ctxc_posix_transport_t *t = ctx;
    if (t == NULL || !t->inited || t->phase == PH_IDLE) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect_poll: no connect under way");
    }
    if (left_ms(t->deadline) == 0) {
        return connect_result(t, timed_out(t, err), err);
    }
    ctxc_status_t st;
    if (t->phase == PH_TCP) {
        int w = wait_fd(t->fd, POLLOUT, 0);
        if (w == 0) {
            return CTXC_E_IN_PROGRESS;
        }
        int so = 0;
        socklen_t sl = sizeof so;
        if (w < 0) {
            so = errno;
        } else if (getsockopt(t->fd, SOL_SOCKET, SO_ERROR, &so, &sl) != 0) {
            so = errno;
        }
        if (so == 0) {
            st = tcp_done(t, err);
        } else {
            t->last_errno = so;
            (void)close(t->fd);
            t->fd = -1;
            st = tcp_next(t, err);
            if (st == CTXC_OK) {
                st = tcp_done(t, err);
            }
        }
    } else {
        st = tls_step(t, err);
    }
    return connect_result(t, st, err);
}

static ctxc_status_t px_connect(void *ctx, const char *host, uint16_t port,
                                bool tls, ctxc_error_t *err) {
    ctxc_posix_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect: the transport is not initialised");
    }
    if (host == NULL || host[0] == '\0' || port == 0) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect: a host name and a port are needed");
    }
    if (t->fd >= 0 || t->phase != PH_IDLE) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect %s:%u: the transport is already "
                              "connected to %s (close it first)",
                              host, (unsigned)port, t->host);
    }
    size_t n = strlen(host);
    if (n > CTXC_POSIX_HOST_MAX) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect: host name longer than %u bytes",
                              (unsigned)CTXC_POSIX_HOST_MAX);
    }
    memcpy(t->host, host, n + 1);
    t->port = port;
    t->last_error[0] = '\0';
    t->deadline = now_ms() + t->connect_timeout_ms;
    t->tried = 0;
    t->last_errno = 0;
    t->tls = tls;
    ctxc_status_t st = tls ? tls_prepare(t, err) : CTXC_OK;
    if (st == CTXC_OK) {
        char service[8];
        (void)snprintf(service, sizeof service, "%u", (unsigned)t->port);
        struct addrinfo hints;
        memset(&hints, 0, sizeof hints);
        hints.ai_family = AF_UNSPEC;
        hints.ai_socktype = SOCK_STREAM;
        hints.ai_flags = AI_NUMERICSERV;
        int g = getaddrinfo(t->host, service, &hints, &t->addrs);
        if (g != 0) {
            t->addrs = NULL;
            st = ctxc_error_set(
                err, CTXC_E_NETWORK, "%s:%u: cannot resolve the host name: %s",
                t->host, (unsigned)t->port,
                g == EAI_SYSTEM ? strerror(errno) : gai_strerror(g));
        }
    }
    if (st == CTXC_OK) {
        t->next = t->addrs;
        t->phase = PH_TCP;
        st = tcp_next(t, err);
        if (st == CTXC_OK) {
            st = tcp_done(t, err);
        }
    }
    return connect_result(t, st, err);
}

/* ---- send / recv ----------------------------------------------------------
 */

/* The answer of a TLS read or write that did not move bytes. */
static int32_t tls_fail(ctxc_posix_transport_t *t, const char *what, int ret) {
    if (ret == 0 || ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY ||
        ret == MBEDTLS_ERR_SSL_CONN_EOF) {
        set_last(t, what, "the server closed the connection");
        return CTXC_TRANSPORT_EOF;
    }
    if (t->sock_errno != 0) {
        set_last(t, what, strerror(t->sock_errno));
        return CTXC_TRANSPORT_ERROR;
    }
    /* a TLS error (a bad MAC, a record too large, an alert): its text and
     * code, and CTXC_TRANSPORT_TLS_ERROR (CTXC_E_TLS for the caller) */
    char text[80], why[112];
    mbed_text(ret, text, sizeof text);
    (void)snprintf(why, sizeof why, "TLS error: %s (-0x%04X)", text,
                   (unsigned)(ret < 0 ? -ret : ret));
    set_last(t, what, why);
    return CTXC_TRANSPORT_TLS_ERROR;
}

static bool tls_again(int ret) {
    return ret == MBEDTLS_ERR_SSL_WANT_READ ||
           ret == MBEDTLS_ERR_SSL_WANT_WRITE
#ifdef MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET
           /* 3.x, TLS 1.3: a ticket arrived instead of data */
           || ret == MBEDTLS_ERR_SSL_RECEIVED_NEW_SESSION_TICKET
#endif
        ;
}

static int32_t clip(size_t len) {
    return len > (size_t)INT32_MAX ? INT32_MAX : (int32_t)len;
}

static bool usable(const ctxc_posix_transport_t *t) {
    return t != NULL && t->inited && t->fd >= 0 && t->phase == PH_IDLE;
}

/* One try, never waits: 0 when the socket (or TLS) cannot take bytes now
 * (t->want then says what wait() waits for). */
static int32_t px_send(void *ctx, const uint8_t *data, size_t len) {
    ctxc_posix_transport_t *t = ctx;
    if (!usable(t)) {
        return CTXC_TRANSPORT_ERROR;
    }
    if (len == 0) {
        return 0;
    }
    size_t n = (size_t)clip(len);
    if (t->tls) {
        t->sock_errno = 0;
        int ret = mbedtls_ssl_write(&t->ssl, data, n);
        if (ret > 0) {
            t->want = 0;
            return ret;
        }
        if (!tls_again(ret)) {
            int32_t r = tls_fail(t, "send", ret);
            /* a closed peer cannot take bytes: an error for send */
            return r == CTXC_TRANSPORT_EOF ? CTXC_TRANSPORT_ERROR : r;
        }
        t->want = ret == MBEDTLS_ERR_SSL_WANT_READ ? POLLIN : POLLOUT;
        return 0;
    }
    ssize_t s = send(t->fd, data, n, SEND_FLAGS);
    if (s > 0) {
        t->want = 0;
    }
    if (s >= 0) {
        return (int32_t)s;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        set_last(t, "send", strerror(errno));
        return CTXC_TRANSPORT_ERROR;
    }
    t->want = POLLOUT;
    return 0;
}

/* One try, never waits (as send). */
static int32_t px_recv(void *ctx, uint8_t *buf, size_t cap) {
    ctxc_posix_transport_t *t = ctx;
    if (!usable(t)) {
        return CTXC_TRANSPORT_ERROR;
    }
    if (cap == 0) {
        return 0;
    }
    size_t n = (size_t)clip(cap);
    if (t->tls) {
        t->sock_errno = 0;
        int ret = mbedtls_ssl_read(&t->ssl, buf, n);
        if (ret > 0) {
            t->want = 0;
            return ret;
        }
        if (!tls_again(ret)) {
            return tls_fail(t, "recv", ret);
        }
        t->want = ret == MBEDTLS_ERR_SSL_WANT_WRITE ? POLLOUT : POLLIN;
        return 0;
    }
    ssize_t r = recv(t->fd, buf, n, 0);
    if (r > 0) {
        t->want = 0;
        return (int32_t)r;
    }
    if (r == 0) {
        set_last(t, "recv", "the server closed the connection");
        return CTXC_TRANSPORT_EOF;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR) {
        set_last(t, "recv", strerror(errno));
        return CTXC_TRANSPORT_ERROR;
    }
    t->want = POLLIN;
    return 0;
}

/* poll(2) for what the connection waits for, at most ms. At once when
 * there is nothing to wait for (issue 38): no connection (a caller's pause
 * is the port's delay_ms), a handshake step that can run now, TLS holding
 * decrypted bytes, or no try since the last one that moved bytes (want 0:
 * the next send/recv can go on). */
static void px_wait(void *ctx, uint32_t ms) {
    ctxc_posix_transport_t *t = ctx;
    int cap = ms > (uint32_t)INT_MAX ? INT_MAX : (int)ms;
    if (t == NULL || !t->inited || t->fd < 0) {
        return;
    }
    if (t->phase == PH_TCP) {
        (void)wait_fd(t->fd, POLLOUT, cap);
        return;
    }
    if (t->want == 0) {
        return; /* the next handshake step, send or recv can run now */
    }
    if (t->phase == PH_IDLE && t->tls && t->ssl_live &&
        mbedtls_ssl_get_bytes_avail(&t->ssl) > 0) {
        return;
    }
    (void)wait_fd(t->fd, t->want, cap);
}

static void px_close(void *ctx) {
    ctxc_posix_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return;
    }
    if (t->ssl_live && t->tls && t->fd >= 0 && t->phase == PH_IDLE) {
        /* one try, never waits: the peer may be gone already */
        (void)mbedtls_ssl_close_notify(&t->ssl);
    }
    drop_connection(t);
}

static const char *px_last_error(void *ctx) {
    const ctxc_posix_transport_t *t = ctx;
    return t != NULL ? t->last_error : NULL;
}

static const ctxc_transport_ops_t px_transport_ops = {
    px_connect,
    px_send,
    px_recv,
    px_close,
    px_connect_poll,
    px_wait,
    px_last_error,
};

/* ---- public -----------------------------------------------------------------
 */

ctxc_status_t
ctxc_posix_transport_init(ctxc_posix_transport_t *t,
                          const ctxc_posix_transport_config_t *cfg,
                          ctxc_error_t *err) {
    if (t == NULL || cfg == NULL) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "transport init: NULL argument");
    }
    const char *ca = cfg->ca_file != NULL ? cfg->ca_file : "";
    size_t n = strlen(ca);
    if (n > CTXC_POSIX_CA_PATH_MAX) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "CA file path longer than %u bytes",
                              (unsigned)CTXC_POSIX_CA_PATH_MAX);
    }
    memset(t, 0, sizeof *t);
    memcpy(t->ca_file, ca, n + 1);
    t->connect_timeout_ms = cfg->connect_timeout_ms != 0
                                ? cfg->connect_timeout_ms
                                : CTXC_POSIX_CONNECT_TIMEOUT_MS;
    t->poll_slice_ms =
        cfg->poll_slice_ms != 0 ? cfg->poll_slice_ms : CTXC_POSIX_POLL_SLICE_MS;
    t->entropy = cfg->entropy;
    t->entropy_ctx = cfg->entropy_ctx;
#if defined(MBEDTLS_ECP_RESTARTABLE)
    t->ecp_max_ops = cfg->ecp_max_ops;
#else
    t->ecp_max_ops = 0; /* this mbedTLS cannot stop an ECC operation */
#endif
    t->tls_slices = 0;
    t->fd = -1;
    t->inited = true;
    mbedtls_x509_crt_init(&t->ca);
    mbedtls_ctr_drbg_init(&t->drbg);
    mbedtls_ssl_config_init(&t->conf);
    return CTXC_OK;
}

ctxc_posix_transport_config_t
ctxc_posix_transport_config(const ctxc_settings_store_t *settings,
                            const ctxc_port_t *port) {
    ctxc_posix_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    if (settings != NULL) {
        cfg.ca_file =
            ctxc_settings_string(settings, CTXC_SETTING_NETWORK_CA_FILE);
        (void)ctxc_settings_int(settings,
                                CTXC_SETTING_NETWORK_CONNECT_TIMEOUT_MS,
                                &cfg.connect_timeout_ms);
    }
    if (port != NULL) {
        cfg.entropy = port->entropy;
        cfg.entropy_ctx = port->entropy_ctx;
    }
    return cfg;
}

ctxc_transport_t ctxc_posix_transport(ctxc_posix_transport_t *t) {
    ctxc_transport_t tr = {&px_transport_ops, t};
    return tr;
}

const char *ctxc_posix_transport_last_error(const ctxc_posix_transport_t *t) {
    return t != NULL ? t->last_error : "";
}

void ctxc_posix_transport_deinit(ctxc_posix_transport_t *t) {
    if (t == NULL || !t->inited) {
        return;
    }
    px_close(t);
    mbedtls_ssl_config_free(&t->conf);
    mbedtls_ctr_drbg_free(&t->drbg);
    mbedtls_x509_crt_free(&t->ca);
    t->tls_ready = false;
    t->inited = false;
}
