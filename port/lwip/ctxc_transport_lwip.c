/*
 * ctxc lwIP transport (see ctxc_transport_lwip.h): altcp + altcp_tls_mbedtls.
 */
#include "ctxc_transport_lwip.h"

#include <string.h>

#include "lwip/altcp.h"
#include "lwip/altcp_tcp.h"
#include "lwip/altcp_tls.h"
#include "lwip/dns.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/timeouts.h"

#include "altcp_tls_mbedtls_structs.h" /* lwIP 2.1.3: the TLS pcb's rx */
#include "mbedtls/ecdh.h"
#include "mbedtls/ecp.h"
#include "mbedtls/entropy.h"
#include "mbedtls/entropy_poll.h"
#include "mbedtls/error.h"
#include "mbedtls/memory_buffer_alloc.h"
#include "mbedtls/platform.h"
#include "mbedtls/platform_time.h"
#include "mbedtls/platform_util.h"
#include "mbedtls/ssl.h"
#include "mbedtls/ssl_internal.h" /* the handshake's ecrs_enabled */
#include "mbedtls/x509_crt.h"

#if !LWIP_ALTCP || !LWIP_ALTCP_TLS || !LWIP_ALTCP_TLS_MBEDTLS || !LWIP_DNS
#error                                                                         \
    "port/lwip needs LWIP_ALTCP, LWIP_ALTCP_TLS, LWIP_ALTCP_TLS_MBEDTLS and LWIP_DNS in lwipopts.h"
#endif

#if NO_SYS
#define CORE_LOCK()
#define CORE_UNLOCK()
#else
#include "lwip/tcpip.h"
#if !LWIP_TCPIP_CORE_LOCKING
#error "port/lwip with NO_SYS=0 needs LWIP_TCPIP_CORE_LOCKING=1"
#endif
#define CORE_LOCK() LOCK_TCPIP_CORE()
#define CORE_UNLOCK() UNLOCK_TCPIP_CORE()
#endif

/* ---- process-wide: the entropy hook and the pool ------------------------ */

static ctxc_entropy_fn entropy_fn;
static void *entropy_ctx;
static ctxc_error_t entropy_err;
static bool pool_ready;

/* MBEDTLS_ENTROPY_HARDWARE_ALT: mbedTLS's entropy source, the port's hook */
int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len,
                          size_t *olen);
int mbedtls_hardware_poll(void *data, unsigned char *output, size_t len,
                          size_t *olen) {
    (void)data;
    *olen = 0;
    if (entropy_fn == NULL) {
        (void)ctxc_error_set(&entropy_err, CTXC_E_UNAVAILABLE,
                             "the port has no entropy hook");
        return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
    }
    if (entropy_fn(entropy_ctx, output, len, &entropy_err) != CTXC_OK) {
        return MBEDTLS_ERR_ENTROPY_SOURCE_FAILED;
    }
    *olen = len;
    return 0;
}

/* The pool's usage; the caller holds the core lock (NO_SYS=0: the tcpip
 * thread allocates from the pool in lwIP's callbacks). */
static void pool_usage(size_t *now, size_t *max) {
    *now = 0;
    *max = 0;
#if defined(MBEDTLS_MEMORY_DEBUG)
    if (pool_ready) {
        size_t blocks = 0;
        mbedtls_memory_buffer_alloc_cur_get(now, &blocks);
        mbedtls_memory_buffer_alloc_max_get(max, &blocks);
    }
#endif
}

void ctxc_lwip_tls_pool_usage(size_t *now, size_t *max) {
    CORE_LOCK();
    pool_usage(now, max);
    CORE_UNLOCK();
}

void ctxc_lwip_tls_pool_reset_max(void) {
#if defined(MBEDTLS_MEMORY_DEBUG)
    CORE_LOCK();
    if (pool_ready) {
        mbedtls_memory_buffer_alloc_max_reset();
    }
    CORE_UNLOCK();
#endif
}

/* ---- helpers --------------------------------------------------------------
 */

/* t->phase: where a connect is (see "connect" below) */
enum { PHASE_IDLE = 0, PHASE_DNS, PHASE_TCP, PHASE_UP };

/* lwIP's error as text: lwip_strerr() is "" without LWIP_DEBUG, so the
 * errors a connection can end with are named here (a message must never
 * end in an empty reason). */
static const char *err_text(err_t e) {
    switch (e) {
    case ERR_RST:
        return "connection reset by the peer";
    case ERR_ABRT:
        return "connection aborted";
    case ERR_CLSD:
        return "connection closed";
    case ERR_CONN:
        return "not connected";
    case ERR_TIMEOUT:
        return "timed out";
    case ERR_RTE:
        return "no route to the host";
    case ERR_MEM:
        return "out of lwIP memory";
    case ERR_BUF:
        return "out of lwIP buffers";
    case ERR_VAL:
        return "invalid value";
    case ERR_USE:
        return "address in use";
    case ERR_ARG:
        return "invalid argument";
    default:
        break;
    }
    const char *t = lwip_strerr(e);
    return t != NULL && t[0] != '\0' ? t : "lwIP error";
}

static uint64_t now_ms(const ctxc_lwip_transport_t *t) {
    return t->cfg.clock(t->cfg.clock_ctx);
}

/* One pump of the stack inside a step (connect_poll, send, recv), which
 * must not wait. NO_SYS: the netif poll and lwIP's timers. NO_SYS=0: nothing
 * (the tcpip thread and the driver move the data on their own; cfg.poll
 * blocks for a tick, which only wait() may do). */
static void pump(ctxc_lwip_transport_t *t) {
#if NO_SYS
    t->cfg.poll(t->cfg.poll_ctx);
    sys_check_timeouts();
#else
    (void)t;
#endif
}

/* Lets the stack run for a moment inside wait() (see the header: NO_SYS
 * or RTOS). NO_SYS=0: the core lock released while cfg.poll blocks. */
static void idle(ctxc_lwip_transport_t *t) {
#if NO_SYS
    pump(t);
#else
    CORE_UNLOCK();
    t->cfg.poll(t->cfg.poll_ctx);
    CORE_LOCK();
#endif
}

static void keep_last(ctxc_lwip_transport_t *t, const char *msg) {
    size_t n = strlen(msg);
    if (n >= sizeof t->last_error) {
        n = sizeof t->last_error - 1u;
    }
    memcpy(t->last_error, msg, n);
    t->last_error[n] = '\0';
}

static void set_last(ctxc_lwip_transport_t *t, const char *what,
                     const char *why) {
    ctxc_error_t e;
    (void)ctxc_error_set(&e, CTXC_E_IO, "%s: %s", what, why);
    keep_last(t, ctxc_error_message(&e));
}

/* ---- mbedTLS hooks (linked with -Wl,--wrap=...; see the header) -----------
 *
 * lwIP 2.1.3's altcp_tls_mbedtls drops every error mbedtls_ssl_read()
 * answers after the handshake (altcp_mbedtls_handle_rx_appldata: a record
 * too large, a bad MAC, an alert, even close_notify: the pbuf is freed and
 * ERR_OK returned, the connection stays open and silent). The port wraps
 * mbedtls_ssl_read at link time: the code reaches the transport of that
 * connection (t->ssl_err), counts as progress for wait(), and send/recv
 * report it at once with mbedTLS's code and text. The same way the key
 * exchange's group is taken from mbedtls_ecdh_read_params (mbedTLS 2.28
 * keeps no record of it after the handshake), and a failed allocation
 * from mbedtls_calloc (how much the pool lacked). */

static ctxc_lwip_transport_t *watched; /* the connection being made / up */
static size_t pool_failed_bytes;       /* the last allocation that failed */

static uint32_t ticks_now(const ctxc_lwip_transport_t *t) {
    return t != NULL && t->cfg.ticks != NULL ? t->cfg.ticks(t->cfg.ticks_ctx)
                                             : 0u;
}

/* The altcp TLS state of t's connection when ssl is its context. */
static altcp_mbedtls_state_t *tls_state_of(ctxc_lwip_transport_t *t,
                                           const mbedtls_ssl_context *ssl) {
    if (t == NULL || t->pcb == NULL || t->pcb->state == NULL ||
        altcp_tls_context(t->pcb) != ssl) {
        return NULL;
    }
    return (altcp_mbedtls_state_t *)t->pcb->state;
}

/* The handshake in slices (cfg.ecp_max_ops, MBEDTLS_ECP_RESTARTABLE):
 * one handshake state a call, and a public-key operation stopped after
 * ecp_max_ops of mbedTLS's ECC operations. altcp_tls_mbedtls calls
 * mbedtls_ssl_handshake in its receive callback and knows no
 * MBEDTLS_ERR_SSL_CRYPTO_IN_PROGRESS (it would close the connection), and on
 * WANT_READ it expects its input chain (state->rx) consumed and waits for the
 * next segment. So when a state is done or a public-key operation stops: the
 * input mbedTLS has not read yet is kept aside (t->hs_held), altcp is told
 * WANT_READ, and the next connect_poll calls the receive callback again
 * (resume_handshake: the kept input, or an empty pbuf) where mbedTLS goes on
 * from where it stopped. Input that arrives meanwhile is queued behind the kept
 * input before mbedTLS reads again (at the top of every handshake call), so the
 * order holds. */
int __real_mbedtls_ssl_handshake(mbedtls_ssl_context *ssl);
int __wrap_mbedtls_ssl_handshake(mbedtls_ssl_context *ssl);
int __wrap_mbedtls_ssl_handshake(mbedtls_ssl_context *ssl) {
    ctxc_lwip_transport_t *t = watched;
    altcp_mbedtls_state_t *st = tls_state_of(t, ssl);
    if (st != NULL && t->hs_held != NULL) {
        if (st->rx != NULL) {
            pbuf_cat(t->hs_held, st->rx);
        }
        st->rx = t->hs_held;
        t->hs_held = NULL;
    }
#if defined(MBEDTLS_ECP_RESTARTABLE)
    mbedtls_ecp_set_max_ops(t != NULL ? (unsigned)t->cfg.ecp_max_ops : 0u);
#endif
    int from = ssl->state;
    uint32_t t0 = ticks_now(t);
    int r;
    bool step_more = false;
#if defined(MBEDTLS_SSL_ECP_RESTARTABLE_ENABLED)
    /* mbedTLS 2.28 turns the restart on after the server's hello for
     * ECDHE-ECDSA suites only; its client key exchange (the one step of an
     * ECDHE-RSA handshake over 10 ms on the board: 29 ms, two P-256 point
     * multiplications) restarts the same way in an ECDHE-RSA suite, and its
     * RSA checks take the whole path (an RSA key has no restartable
     * verify). Turned on for those suites too, before the server's
     * certificate is read. */
    if (t != NULL && t->cfg.ecp_max_ops != 0 && ssl->handshake != NULL &&
        ssl->state > MBEDTLS_SSL_SERVER_HELLO &&
        ssl->state <= MBEDTLS_SSL_SERVER_CERTIFICATE &&
        ssl->minor_ver == MBEDTLS_SSL_MINOR_VERSION_3 &&
        ssl->handshake->ciphersuite_info != NULL &&
        ssl->handshake->ciphersuite_info->key_exchange ==
            MBEDTLS_KEY_EXCHANGE_ECDHE_RSA) {
        ssl->handshake->ecrs_enabled = 1;
    }
#endif
    if (t != NULL && t->cfg.ecp_max_ops != 0 &&
        ssl->state != MBEDTLS_SSL_HANDSHAKE_OVER) {
        /* in slices: one handshake state a call (mbedtls_ssl_handshake
         * loops over them), so a step that cannot be stopped (an RSA
         * check, an ECDHE-RSA key exchange) holds one poll, not the
         * server's whole flight and the client's answer */
        r = mbedtls_ssl_handshake_step(ssl);
        step_more = r == 0 && ssl->state != MBEDTLS_SSL_HANDSHAKE_OVER;
    } else {
        r = __real_mbedtls_ssl_handshake(ssl);
    }
    if (t != NULL) {
        uint32_t d = ticks_now(t) - t0;
        t->handshake_ticks += d;
        if (d > t->handshake_longest) {
            t->handshake_longest = d;
            t->longest_from = (uint8_t)from;
            t->longest_to = (uint8_t)ssl->state;
        }
        if ((unsigned)from < CTXC_LWIP_TLS_STATES &&
            d > t->state_longest[from]) {
            t->state_longest[from] = d;
        }
    }
#if defined(MBEDTLS_ECP_RESTARTABLE)
    mbedtls_ecp_set_max_ops(0u);
#endif
    if ((r == MBEDTLS_ERR_SSL_CRYPTO_IN_PROGRESS || step_more) && st != NULL) {
        struct pbuf *p = st->rx;
        st->rx = NULL;
        if (p != NULL && p->len == 0 && p->next == NULL) {
            pbuf_free(p); /* resume_handshake's empty pbuf, unread */
            p = NULL;
        }
        t->hs_held = p;
        t->hs_more = true;
        if (!step_more) {
            t->handshake_slices++; /* a public-key operation stopped */
        }
        t->events++; /* wait() returns: there is work for connect_poll */
        return MBEDTLS_ERR_SSL_WANT_READ;
    }
    /* altcp_tls_mbedtls closes on a failed handshake and keeps no code:
     * the code for tcp_failed's "TLS handshake failed: ..." */
    if (r < 0 && r != MBEDTLS_ERR_SSL_WANT_READ &&
        r != MBEDTLS_ERR_SSL_WANT_WRITE && t != NULL && t->pcb != NULL &&
        altcp_tls_context(t->pcb) == ssl && t->ssl_err == 0) {
        t->ssl_err = r;
    }
    /* A failed handshake: mbedTLS has queued its fatal alert (a refused
     * certificate: bad_certificate, certificate_expired, unknown_ca) on the
     * TCP pcb, and altcp closes it next. The rest of the server's flight,
     * unread, is not acknowledged to TCP, and tcp_close answers received
     * data not taken with a RST that drops the queued alert unsent (in the
     * receive callback tcp_output waits until the callback returns). Taken
     * now, the close is an orderly one: the alert, then FIN
     * (RFC 5246 7.2.2). */
    if (r < 0 && r != MBEDTLS_ERR_SSL_WANT_READ &&
        r != MBEDTLS_ERR_SSL_WANT_WRITE && st != NULL && st->rx != NULL &&
        t->pcb != NULL && t->pcb->inner_conn != NULL) {
        altcp_recved(t->pcb->inner_conn, st->rx->tot_len);
    }
    return r;
}

int __real_mbedtls_ssl_write(mbedtls_ssl_context *ssl, const unsigned char *buf,
                             size_t len);
int __wrap_mbedtls_ssl_write(mbedtls_ssl_context *ssl, const unsigned char *buf,
                             size_t len);
int __wrap_mbedtls_ssl_write(mbedtls_ssl_context *ssl, const unsigned char *buf,
                             size_t len) {
    ctxc_lwip_transport_t *t = watched;
    uint32_t t0 = ticks_now(t);
    int r = __real_mbedtls_ssl_write(ssl, buf, len);
    if (t != NULL) {
        t->record_ticks += ticks_now(t) - t0;
    }
    return r;
}

int __real_mbedtls_ssl_read(mbedtls_ssl_context *ssl, unsigned char *buf,
                            size_t len);
int __wrap_mbedtls_ssl_read(mbedtls_ssl_context *ssl, unsigned char *buf,
                            size_t len);
int __wrap_mbedtls_ssl_read(mbedtls_ssl_context *ssl, unsigned char *buf,
                            size_t len) {
    ctxc_lwip_transport_t *t = watched;
    uint32_t t0 = ticks_now(t);
    int r = __real_mbedtls_ssl_read(ssl, buf, len);
    if (t != NULL) {
        t->record_ticks += ticks_now(t) - t0;
    }
    if (r < 0 && r != MBEDTLS_ERR_SSL_WANT_READ &&
        r != MBEDTLS_ERR_SSL_WANT_WRITE && t != NULL && t->pcb != NULL &&
        altcp_tls_context(t->pcb) == ssl && t->ssl_err == 0) {
        t->ssl_err = r;
        t->events++;
    }
    return r;
}

int __real_mbedtls_ecdh_read_params(mbedtls_ecdh_context *ctx,
                                    const unsigned char **buf,
                                    const unsigned char *end);
int __wrap_mbedtls_ecdh_read_params(mbedtls_ecdh_context *ctx,
                                    const unsigned char **buf,
                                    const unsigned char *end);
int __wrap_mbedtls_ecdh_read_params(mbedtls_ecdh_context *ctx,
                                    const unsigned char **buf,
                                    const unsigned char *end) {
    int r = __real_mbedtls_ecdh_read_params(ctx, buf, end);
    if (r == 0 && watched != NULL) {
#if defined(MBEDTLS_ECDH_LEGACY_CONTEXT)
        watched->group = (uint16_t)ctx->grp.id;
#else
        watched->group = (uint16_t)ctx->grp_id;
#endif
    }
    return r;
}

void *__real_mbedtls_calloc(size_t n, size_t size);
void *__wrap_mbedtls_calloc(size_t n, size_t size);
void *__wrap_mbedtls_calloc(size_t n, size_t size) {
    void *p = __real_mbedtls_calloc(n, size);
    if (p == NULL && n != 0 && size != 0) {
        pool_failed_bytes = n * size;
    }
    return p;
}

/* "text (-0xCODE)" of an mbedTLS error code (ctxc_error_set has no %x). */
static void tls_error_text(int code, char *out, size_t cap) {
    static const char hex[] = "0123456789abcdef";
    unsigned v = (unsigned)(code < 0 ? -code : code);
    char num[12] = "(-0x";
    size_t k = 4;
    for (int shift = 12; shift >= 0; shift -= 4) {
        num[k++] = hex[(v >> (unsigned)shift) & 0xfu];
    }
    num[k++] = ')';
    num[k] = '\0';
    ctxc_error_t e;
#if defined(MBEDTLS_ERROR_C)
    char text[160];
    mbedtls_strerror(code, text, sizeof text);
    (void)ctxc_error_set(&e, CTXC_E_TLS, "%s %s", text, num);
#else
    (void)ctxc_error_set(&e, CTXC_E_TLS, "mbedTLS error %s", num);
#endif
    size_t n = strlen(ctxc_error_message(&e));
    if (n >= cap) {
        n = cap - 1u;
    }
    memcpy(out, ctxc_error_message(&e), n);
    out[n] = '\0';
}

/* ---- calendar time ----------------------------------------------------------
 *
 * MBEDTLS_HAVE_TIME_DATE: the validity dates of certificates are checked
 * against cfg.time (seconds since 1970 UTC, 0 while not known yet). */

static ctxc_lwip_time_fn time_fn;
static void *time_ctx;

#if defined(MBEDTLS_HAVE_TIME_DATE)
static uint64_t calendar_now(void) {
    return time_fn != NULL ? time_fn(time_ctx) : 0u;
}
#endif

#if defined(MBEDTLS_HAVE_TIME_DATE)
static mbedtls_time_t tls_time(mbedtls_time_t *out) {
    mbedtls_time_t now = (mbedtls_time_t)calendar_now();
    if (out != NULL) {
        *out = now;
    }
    return now;
}

#if defined(MBEDTLS_PLATFORM_GMTIME_R_ALT)
/* UTC broken down (civil-from-days, proleptic Gregorian calendar): what
 * the X.509 date check needs, without newlib's time functions. */
struct tm *mbedtls_platform_gmtime_r(const mbedtls_time_t *tt,
                                     struct tm *tm_buf) {
    int64_t s = (int64_t)*tt;
    int64_t days = s / 86400;
    int64_t rem = s % 86400;
    if (rem < 0) {
        rem += 86400;
        days--;
    }
    tm_buf->tm_hour = (int)(rem / 3600);
    tm_buf->tm_min = (int)(rem % 3600 / 60);
    tm_buf->tm_sec = (int)(rem % 60);
    int64_t z = days + 719468;
    int64_t era = (z >= 0 ? z : z - 146096) / 146097;
    int64_t doe = z - era * 146097;
    int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    int64_t y = yoe + era * 400;
    int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    int64_t mp = (5 * doy + 2) / 153;
    int64_t d = doy - (153 * mp + 2) / 5 + 1;
    int64_t m = mp < 10 ? mp + 3 : mp - 9;
    tm_buf->tm_year = (int)(y + (m <= 2 ? 1 : 0) - 1900);
    tm_buf->tm_mon = (int)(m - 1);
    tm_buf->tm_mday = (int)d;
    tm_buf->tm_wday = (int)((days % 7 + 11) % 7); /* 1970-01-01: Thursday */
    tm_buf->tm_yday = 0;
    tm_buf->tm_isdst = 0;
    return tm_buf;
}
#endif
#endif

/* ---- callbacks (lwIP context) -----------------------------------------------
 */

static void on_err(void *arg, err_t err) {
    ctxc_lwip_transport_t *t = arg;
    if (t != NULL) {
        t->pcb = NULL; /* freed by lwIP */
        t->failed = true;
        t->err = err;
        t->events++;
    }
}

static err_t on_recv(void *arg, struct altcp_pcb *pcb, struct pbuf *p,
                     err_t err) {
    ctxc_lwip_transport_t *t = arg;
    (void)pcb;
    t->events++;
    if (p == NULL) {
        t->eof = true;
        return ERR_OK;
    }
    if (err != ERR_OK) {
        pbuf_free(p);
        return ERR_OK;
    }
    if (t->rx == NULL) {
        t->rx = p;
    } else {
        pbuf_cat(t->rx, p);
    }
    return ERR_OK;
}

static err_t on_connected(void *arg, struct altcp_pcb *pcb, err_t err) {
    ctxc_lwip_transport_t *t = arg;
    (void)pcb;
    t->events++;
    if (err == ERR_OK) {
        t->up = true;
    }
    return ERR_OK;
}

/* Room in the send buffer again: progress for a waiting sender. */
static err_t on_sent(void *arg, struct altcp_pcb *pcb, u16_t len) {
    ctxc_lwip_transport_t *t = arg;
    (void)pcb;
    (void)len;
    t->events++;
    return ERR_OK;
}

static void on_dns(const char *name, const ip_addr_t *addr, void *arg) {
    ctxc_lwip_transport_t *t = arg;
    /* an answer for a connect that was closed meanwhile is not this one's */
    if (t->phase != PHASE_DNS || strcmp(name, t->host) != 0) {
        return;
    }
    t->events++;
    t->dns_done = true;
    if (addr != NULL && IP_IS_V4(addr)) {
        t->dns_found = true;
        t->dns_addr = ip4_addr_get_u32(ip_2_ip4(addr));
    }
}

/* Every certificate of the chain, with its verification flags (the name
 * mismatch comes with the server's own, depth 0): kept for the message. */
static int on_verify(void *arg, mbedtls_x509_crt *crt, int depth,
                     uint32_t *flags) {
    ctxc_lwip_transport_t *t = arg;
    (void)crt;
    (void)depth;
#if defined(MBEDTLS_HAVE_TIME_DATE)
    if (calendar_now() == 0 && t->cfg.allow_unknown_time) {
        /* no clock yet and the board chose to go on: dates unchecked */
        *flags &= ~(uint32_t)(MBEDTLS_X509_BADCERT_EXPIRED |
                              MBEDTLS_X509_BADCERT_FUTURE);
    }
#endif
    t->verify_flags |= *flags;
    t->verified_certs++;
    return 0;
}

/* ---- TLS configuration ------------------------------------------------------
 */

/* The groups offered, cheapest first (the server picks). */
static const mbedtls_ecp_group_id tls_groups[] = {
#if defined(MBEDTLS_ECP_DP_CURVE25519_ENABLED)
    MBEDTLS_ECP_DP_CURVE25519,
#endif
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
    MBEDTLS_ECP_DP_SECP256R1,
#endif
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
    MBEDTLS_ECP_DP_SECP384R1,
#endif
    MBEDTLS_ECP_DP_NONE};

/* With slices (cfg.ecp_max_ops): the groups whose ECDH mbedTLS 2.28 can
 * stop and go on (short Weierstrass curves; X25519 is not restartable). */
static const mbedtls_ecp_group_id tls_groups_sliced[] = {
#if defined(MBEDTLS_ECP_DP_SECP256R1_ENABLED)
    MBEDTLS_ECP_DP_SECP256R1,
#endif
#if defined(MBEDTLS_ECP_DP_SECP384R1_ENABLED)
    MBEDTLS_ECP_DP_SECP384R1,
#endif
    MBEDTLS_ECP_DP_NONE};

/* An allocation from the pool failed since pool_failed_bytes was reset:
 * the pool, not the input, is the cause. */
static bool alloc_failure(int code) {
    (void)code;
    return pool_failed_bytes != 0;
}

/* "TLS pool too small (needed at least N bytes, the pool has M)". */
static ctxc_status_t pool_too_small(ctxc_lwip_transport_t *t, const char *what,
                                    ctxc_error_t *err) {
    size_t now = 0, max = 0;
    pool_usage(&now, &max);
    return ctxc_error_set(err, CTXC_E_TLS,
                          "%s:%u: %s: TLS pool too small (needed at least %u "
                          "bytes, the pool has %u)",
                          t->host, (unsigned)t->port, what,
                          (unsigned)(now + pool_failed_bytes),
                          (unsigned)t->cfg.tls_pool_bytes);
}

/* The trust store: one PEM text (NUL counted) or DER certificates one
 * after the other (each an ASN.1 SEQUENCE), parsed into one chain. */
static ctxc_status_t parse_trust(ctxc_lwip_transport_t *t,
                                 mbedtls_x509_crt *chain, ctxc_error_t *err) {
    const uint8_t *p = t->cfg.ca;
    size_t len = t->cfg.ca_len;
    unsigned count = 0;
    if (len > 0 && p[len - 1] == '\0') {
        int r = mbedtls_x509_crt_parse(chain, p, len);
        if (r != 0) {
            char why[128];
            tls_error_text(r, why, sizeof why);
            return alloc_failure(r)
                       ? pool_too_small(t, "TLS setup", err)
                       : ctxc_error_set(err, CTXC_E_TLS,
                                        "%s:%u: TLS setup: CA "
                                        "certificate does not "
                                        "parse (%s)",
                                        t->host, (unsigned)t->port, why);
        }
        t->trust_count = 0;
        for (const mbedtls_x509_crt *c = chain; c != NULL && c->raw.len != 0;
             c = c->next) {
            t->trust_count++;
        }
        return CTXC_OK;
    }
    size_t off = 0;
    while (off < len) {
        size_t body = 0, head = 0;
        if (len - off >= 2 && p[off] == 0x30) {
            uint8_t l0 = p[off + 1];
            if (l0 < 0x80) {
                head = 2;
                body = l0;
            } else if ((l0 & 0x7fu) >= 1u && (l0 & 0x7fu) <= 3u &&
                       len - off >= 2u + (l0 & 0x7fu)) {
                head = 2u + (l0 & 0x7fu);
                for (size_t i = 2; i < head; i++) {
                    body = body << 8 | p[off + i];
                }
            }
        }
        if (head == 0 || body > len - off - head) {
            return ctxc_error_set(err, CTXC_E_TLS,
                                  "%s:%u: TLS setup: CA certificate %u does "
                                  "not parse (not a DER certificate at byte "
                                  "%u)",
                                  t->host, (unsigned)t->port, count + 1u,
                                  (unsigned)off);
        }
        int r = mbedtls_x509_crt_parse_der(chain, p + off, head + body);
        if (r != 0) {
            if (alloc_failure(r)) {
                return pool_too_small(t, "TLS setup", err);
            }
            char why[128];
            tls_error_text(r, why, sizeof why);
            return ctxc_error_set(err, CTXC_E_TLS,
                                  "%s:%u: TLS setup: CA certificate %u does "
                                  "not parse (%s)",
                                  t->host, (unsigned)t->port, count + 1u, why);
        }
        count++;
        off += head + body;
    }
    t->trust_count = (uint16_t)count;
    return CTXC_OK;
}

static ctxc_status_t tls_prepare(ctxc_lwip_transport_t *t, ctxc_error_t *err) {
    if (t->tls_conf != NULL) {
        return CTXC_OK;
    }
    if (t->cfg.tls_pool == NULL || t->cfg.tls_pool_bytes == 0) {
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: TLS setup: no memory pool for mbedTLS",
                              t->host, (unsigned)t->port);
    }
    if (t->cfg.ca == NULL || t->cfg.ca_len == 0) {
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: TLS setup: no CA certificate compiled "
                              "in",
                              t->host, (unsigned)t->port);
    }
    if (!pool_ready) {
        mbedtls_memory_buffer_alloc_init(t->cfg.tls_pool,
                                         t->cfg.tls_pool_bytes);
        pool_ready = true;
    }
    entropy_fn = t->cfg.entropy;
    entropy_ctx = t->cfg.entropy_ctx;
    time_fn = t->cfg.time;
    time_ctx = t->cfg.time_ctx;
#if defined(MBEDTLS_HAVE_TIME_DATE)
    (void)mbedtls_platform_set_time(tls_time);
#endif
    memset(&entropy_err, 0, sizeof entropy_err);
    pool_failed_bytes = 0;
    mbedtls_x509_crt *chain = mbedtls_calloc(1, sizeof *chain);
    if (chain == NULL) {
        return pool_too_small(t, "TLS setup", err);
    }
    mbedtls_x509_crt_init(chain);
    ctxc_status_t st = parse_trust(t, chain, err);
    if (st != CTXC_OK) {
        mbedtls_x509_crt_free(chain);
        mbedtls_free(chain);
        return st;
    }
    /* no CA for lwIP to parse: the port's chain is set below */
    struct altcp_tls_config *conf = altcp_tls_create_config_client(NULL, 0);
    if (conf == NULL) {
        mbedtls_x509_crt_free(chain);
        mbedtls_free(chain);
        if (entropy_err.status != CTXC_OK) {
            return ctxc_error_set(err, CTXC_E_TLS,
                                  "%s:%u: TLS setup: the entropy source "
                                  "failed: %s",
                                  t->host, (unsigned)t->port,
                                  ctxc_error_message(&entropy_err));
        }
        return pool_too_small(t, "TLS setup", err);
    }
    /* The mbedtls_ssl_config is the first member of lwIP's struct
     * altcp_tls_config (altcp_tls_mbedtls.c), so the pointer to one is the
     * pointer to the other. lwIP sets VERIFY_OPTIONAL (or NONE without a
     * CA); a failed verification must end the handshake: REQUIRED. */
    mbedtls_ssl_config *sc = (mbedtls_ssl_config *)(void *)conf;
    mbedtls_ssl_conf_ca_chain(sc, chain, NULL);
    mbedtls_ssl_conf_authmode(sc, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_verify(sc, on_verify, t);
    mbedtls_ssl_conf_min_version(sc, MBEDTLS_SSL_MAJOR_VERSION_3,
                                 MBEDTLS_SSL_MINOR_VERSION_3);
#if defined(MBEDTLS_ECP_RESTARTABLE)
    mbedtls_ssl_conf_curves(sc, t->cfg.ecp_max_ops != 0 ? tls_groups_sliced
                                                        : tls_groups);
#else
    mbedtls_ssl_conf_curves(sc, tls_groups);
    (void)tls_groups_sliced;
#endif
#if defined(MBEDTLS_SSL_MAX_FRAGMENT_LENGTH)
    (void)mbedtls_ssl_conf_max_frag_len(
        sc,
        MBEDTLS_SSL_MAX_CONTENT_LEN <= 512    ? MBEDTLS_SSL_MAX_FRAG_LEN_512
        : MBEDTLS_SSL_MAX_CONTENT_LEN <= 1024 ? MBEDTLS_SSL_MAX_FRAG_LEN_1024
        : MBEDTLS_SSL_MAX_CONTENT_LEN <= 2048 ? MBEDTLS_SSL_MAX_FRAG_LEN_2048
                                              : MBEDTLS_SSL_MAX_FRAG_LEN_4096);
#endif
    t->tls_conf = conf;
    t->trust = chain;
    return CTXC_OK;
}

/* ---- connect
 * -----------------------------------------------------------------
 *
 * A connect is a small state machine (t->phase): DNS (waiting for lwIP's
 * resolver), TCP (altcp_connect sent; with TLS the handshake runs in lwIP's
 * receive callbacks), UP. step() looks at what the callbacks recorded and
 * moves it on; it never waits. connect() starts it, connect_poll() pumps
 * the stack once and steps, wait() pumps until something happened. */

static void drop(ctxc_lwip_transport_t *t) {
    if (t->pcb != NULL) {
        struct altcp_pcb *pcb = t->pcb;
        altcp_arg(pcb, NULL);
        altcp_recv(pcb, NULL);
        altcp_sent(pcb, NULL);
        altcp_err(pcb, NULL);
        if (altcp_close(pcb) != ERR_OK) {
            altcp_abort(pcb);
        }
        t->pcb = NULL;
    }
    if (t->rx != NULL) {
        pbuf_free(t->rx);
        t->rx = NULL;
    }
    if (t->hs_held != NULL) {
        pbuf_free(t->hs_held);
        t->hs_held = NULL;
    }
    t->hs_more = false;
    t->up = false;
    t->phase = PHASE_IDLE;
}

/* The next slice of a handshake whose public-key operation stopped (see
 * __wrap_mbedtls_ssl_handshake): altcp's receive callback of the TCP pcb
 * under the TLS one, with the input kept aside (or an empty pbuf, which
 * altcp's read of it frees), as if a segment had arrived. */
static void resume_handshake(ctxc_lwip_transport_t *t) {
    t->hs_more = false;
    struct altcp_pcb *inner = t->pcb != NULL ? t->pcb->inner_conn : NULL;
    if (inner == NULL || inner->recv == NULL) {
        return;
    }
    struct pbuf *p = t->hs_held;
    t->hs_held = NULL;
    if (p == NULL) {
        p = pbuf_alloc(PBUF_RAW, 0, PBUF_REF);
        if (p == NULL) {
            t->hs_more = true; /* out of pbufs: the next poll again */
            return;
        }
    }
    /* lwIP frees the pbuf (or keeps it in the TLS state) in any case */
    (void)inner->recv(inner->arg, inner, p, ERR_OK);
}

/* Keeps the session of the handshake just done (its ticket or id) for the
 * next connect to the same host:port (resumption: no certificate chain,
 * no key exchange's signature to check). A full handshake verified the
 * chain (no verify callback runs on a resumed one). */
static void keep_session(ctxc_lwip_transport_t *t) {
    t->resumed = t->verified_certs == 0;
    if (t->session == NULL) {
        t->session = mbedtls_calloc(1, sizeof(mbedtls_ssl_session));
        if (t->session == NULL) {
            return; /* no resumption: the pool is short */
        }
    } else {
        mbedtls_ssl_session_free((mbedtls_ssl_session *)t->session);
    }
    mbedtls_ssl_session *sess = t->session;
    mbedtls_ssl_session_init(sess);
    if (mbedtls_ssl_get_session(altcp_tls_context(t->pcb), sess) != 0) {
        mbedtls_ssl_session_free(sess);
        mbedtls_free(sess);
        t->session = NULL;
        return;
    }
    size_t n = strlen(t->host);
    if (n >= sizeof t->session_host) {
        n = sizeof t->session_host - 1u;
    }
    memcpy(t->session_host, t->host, n);
    t->session_host[n] = '\0';
    t->session_port = t->port;
}

/* mbedtls_x509_crt_verify_info's lines joined with "; ". */
static void verify_reasons(uint32_t flags, char *out, size_t cap) {
    char info[192];
    int n = mbedtls_x509_crt_verify_info(info, sizeof info, "", flags);
    size_t k = 0;
    if (n <= 0) {
        static const char hex[] = "0123456789abcdef";
        static const char head[] = "verification flags 0x";
        for (const char *p = head; *p != '\0' && k + 1 < cap; p++) {
            out[k++] = *p;
        }
        for (int shift = 28; shift >= 0 && k + 1 < cap; shift -= 4) {
            out[k++] = hex[(flags >> (unsigned)shift) & 0xfu];
        }
        out[k] = '\0';
        return;
    }
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

/* The TCP connect (and with TLS the handshake) to the resolved address. */
static ctxc_status_t start_tcp(ctxc_lwip_transport_t *t, const ip_addr_t *addr,
                               ctxc_error_t *err) {
    bool tls = t->tls;
    pool_failed_bytes = 0;
    struct altcp_pcb *pcb = tls ? altcp_tls_new(t->tls_conf, IPADDR_TYPE_V4)
                                : altcp_tcp_new_ip_type(IPADDR_TYPE_V4);
    if (pcb == NULL) {
        if (tls && pool_failed_bytes != 0) {
            return pool_too_small(t, "TLS connection", err);
        }
        return ctxc_error_set(err, tls ? CTXC_E_TLS : CTXC_E_NETWORK,
                              "%s:%u: out of lwIP memory (a connection "
                              "block: MEMP_NUM_ALTCP_PCB, MEMP_NUM_TCP_PCB)",
                              t->host, (unsigned)t->port);
    }
    /* Nagle's algorithm off (TCP_NODELAY). A request leaves in several
     * writes (TLS records, the HTTP head and body); with Nagle on, the
     * stack keeps a short last segment back until the peer has
     * acknowledged the one before, and a peer delays that ACK (lwIP's
     * delayed ACK: up to 250 ms): every call waited that long. On a TLS
     * pcb altcp hands this to the TCP pcb under it. */
    altcp_nagle_disable(pcb);
    if (tls && mbedtls_ssl_set_hostname(altcp_tls_context(pcb), t->host) != 0) {
        altcp_abort(pcb);
        return ctxc_error_set(err, CTXC_E_TLS, "%s:%u: TLS setup: host name",
                              t->host, (unsigned)t->port);
    }
#if defined(MBEDTLS_SSL_SESSION_TICKETS) || defined(MBEDTLS_SSL_CLI_C)
    /* resumption: the session of the last handshake with this host:port */
    if (tls && t->session != NULL && t->session_port == t->port &&
        strcmp(t->session_host, t->host) == 0) {
        (void)mbedtls_ssl_set_session(altcp_tls_context(pcb),
                                      (mbedtls_ssl_session *)t->session);
    }
#endif
    t->pcb = pcb;
    t->verify_flags = 0;
    t->verified_certs = 0;
    altcp_arg(pcb, t);
    altcp_recv(pcb, on_recv);
    altcp_sent(pcb, on_sent);
    altcp_err(pcb, on_err);
    t->phase = PHASE_TCP;
    err_t e = altcp_connect(pcb, addr, t->port, on_connected);
    if (e != ERR_OK) {
        return ctxc_error_set(err, CTXC_E_NETWORK, "%s:%u: cannot connect: %s",
                              t->host, (unsigned)t->port, err_text(e));
    }
    return CTXC_E_IN_PROGRESS;
}

/* Why the TCP/TLS phase ended without a connection. */
static ctxc_status_t tcp_failed(ctxc_lwip_transport_t *t, ctxc_error_t *err) {
    bool tls = t->tls;
    if (tls && t->verify_flags != 0) {
        char why[160];
        verify_reasons(t->verify_flags, why, sizeof why);
        keep_last(t, "server certificate rejected: ");
        size_t k = strlen(t->last_error);
        size_t n = strlen(why);
        if (n > sizeof t->last_error - 1u - k) {
            n = sizeof t->last_error - 1u - k;
        }
        memcpy(t->last_error + k, why, n);
        t->last_error[k + n] = '\0';
        return ctxc_error_set(err, CTXC_E_TLS,
                              "%s:%u: server certificate rejected: %s", t->host,
                              (unsigned)t->port, why);
    }
    if (t->failed && t->err == ERR_CLSD && tls) {
        if (t->ssl_err != 0) { /* mbedTLS's code from the handshake */
            char why[128];
            tls_error_text(t->ssl_err, why, sizeof why);
            return ctxc_error_set(err, CTXC_E_TLS,
                                  "%s:%u: TLS handshake failed: %s", t->host,
                                  (unsigned)t->port, why);
        }
        return ctxc_error_set(err, CTXC_E_TLS, "%s:%u: TLS handshake failed",
                              t->host, (unsigned)t->port);
    }
    return ctxc_error_set(err, CTXC_E_NETWORK, "%s:%u: cannot connect: %s",
                          t->host, (unsigned)t->port,
                          t->failed ? err_text((err_t)t->err)
                                    : "the server closed");
}

/* Moves a connect under way on by what the callbacks recorded; never
 * waits. CTXC_OK connected, CTXC_E_IN_PROGRESS, or an error. */
static ctxc_status_t step(ctxc_lwip_transport_t *t, ctxc_error_t *err) {
    if (t->phase == PHASE_DNS && t->dns_done) {
        if (!t->dns_found) {
            return ctxc_error_set(err, CTXC_E_NETWORK,
                                  "%s:%u: cannot resolve the host name (lwIP "
                                  "DNS: no answer for the name)",
                                  t->host, (unsigned)t->port);
        }
        ip_addr_t addr;
        ip_addr_set_ip4_u32(&addr, t->dns_addr);
        ctxc_status_t st = start_tcp(t, &addr, err);
        if (st != CTXC_E_IN_PROGRESS) {
            return st;
        }
    }
    if (t->phase == PHASE_TCP) {
        if (t->up) {
            t->phase = PHASE_UP;
            if (t->tls) {
                keep_session(t);
            }
            return CTXC_OK;
        }
        if (t->failed || t->eof || (t->tls && t->verify_flags != 0)) {
            return tcp_failed(t, err);
        }
    }
    if (t->phase == PHASE_UP) {
        return CTXC_OK;
    }
    if (now_ms(t) >= t->connect_deadline) {
        return ctxc_error_set(err, CTXC_E_TIMEOUT,
                              "%s:%u: %s timed out after %u ms", t->host,
                              (unsigned)t->port,
                              t->phase == PHASE_DNS ? "resolving the host name"
                              : t->tls              ? "connect (TLS handshake)"
                                                    : "connect",
                              (unsigned)t->cfg.connect_timeout_ms);
    }
    return CTXC_E_IN_PROGRESS;
}

/* After a connect step: an error closes the connection and is kept. */
static ctxc_status_t settle(ctxc_lwip_transport_t *t, ctxc_status_t st,
                            ctxc_error_t *err) {
    if (st != CTXC_OK && st != CTXC_E_IN_PROGRESS) {
        drop(t);
        if (t->last_error[0] == '\0') {
            keep_last(t, err != NULL ? ctxc_error_message(err) : "connect");
        }
    }
    return st;
}

/* Pumps the stack until something happened (a callback ran), the connect
 * deadline passed (while connecting) or ms passed. Under the core lock. */
static void wait_locked(ctxc_lwip_transport_t *t, uint32_t ms) {
    uint64_t until = now_ms(t) + ms;
    uint32_t seen = t->events;
    for (;;) {
        if (t->rx != NULL || t->eof || t->failed || t->ssl_err != 0 ||
            t->hs_more) {
            return; /* something to answer now (or a slice to run) */
        }
        idle(t);
        if (t->events != seen) {
            return;
        }
        uint64_t now = now_ms(t);
        if (now >= until || ((t->phase == PHASE_DNS || t->phase == PHASE_TCP) &&
                             now >= t->connect_deadline)) {
            return;
        }
    }
}

static ctxc_status_t lw_connect(void *ctx, const char *host, uint16_t port,
                                bool tls, ctxc_error_t *err) {
    ctxc_lwip_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect: the transport is not initialised");
    }
    if (host == NULL || host[0] == '\0' || port == 0) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect: a host name and a port are needed");
    }
    size_t n = strlen(host);
    if (n > CTXC_LWIP_HOST_MAX) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect: host name longer than %u bytes",
                              (unsigned)CTXC_LWIP_HOST_MAX);
    }
    CORE_LOCK();
    if (t->pcb != NULL || t->phase == PHASE_DNS) {
        CORE_UNLOCK();
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect %s:%u: the transport is already "
                              "connected or connecting (close it first)",
                              host, (unsigned)port);
    }
    drop(t);
    memcpy(t->host, host, n + 1);
    t->port = port;
    t->tls = tls;
    t->eof = t->failed = false;
    t->err = ERR_OK;
    t->last_error[0] = '\0';
    t->connect_deadline = now_ms(t) + t->cfg.connect_timeout_ms;
    t->ssl_err = 0;
    t->group = 0;
    t->handshake_ticks = 0;
    t->record_ticks = 0;
    t->handshake_longest = 0;
    t->handshake_slices = 0;
    t->longest_from = t->longest_to = 0;
    memset(t->state_longest, 0, sizeof t->state_longest);
    ctxc_status_t st = tls ? tls_prepare(t, err) : CTXC_OK;
#if defined(MBEDTLS_HAVE_TIME_DATE)
    if (st == CTXC_OK && tls && calendar_now() == 0 &&
        !t->cfg.allow_unknown_time) {
        st = ctxc_error_set(err, CTXC_E_TLS,
                            "%s:%u: TLS refused: the time is not known yet "
                            "(SNTP), certificate dates cannot be checked",
                            t->host, (unsigned)t->port);
    }
#endif
    if (st == CTXC_OK && tls) {
        watched = t;
    }
    if (st == CTXC_OK) {
        ip_addr_t addr;
        ip_addr_set_zero(&addr);
        t->dns_done = t->dns_found = false;
        t->phase = PHASE_DNS;
        err_t e = dns_gethostbyname(t->host, &addr, on_dns, t);
        if (e == ERR_OK) {
            st = start_tcp(t, &addr, err);
        } else if (e == ERR_INPROGRESS) {
            st = CTXC_E_IN_PROGRESS;
        } else {
            st = ctxc_error_set(err, CTXC_E_NETWORK,
                                "%s:%u: cannot resolve the host name (lwIP "
                                "DNS: %s)",
                                t->host, (unsigned)t->port, err_text(e));
        }
    }
    st = settle(t, st, err);
    CORE_UNLOCK();
    return st;
}

static ctxc_status_t lw_connect_poll(void *ctx, ctxc_error_t *err) {
    ctxc_lwip_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "connect_poll: the transport is not initialised");
    }
    CORE_LOCK();
    ctxc_status_t st;
    if (t->phase == PHASE_IDLE) {
        st = ctxc_error_set(err, CTXC_E_INVALID_ARG,
                            "connect_poll: no connect under way");
    } else {
        if (t->phase == PHASE_TCP && t->hs_more) {
            resume_handshake(t); /* one slice, no pump (one bound a poll) */
        } else if (t->phase != PHASE_UP) {
            pump(t);
        }
        st = settle(t, step(t, err), err);
    }
    CORE_UNLOCK();
    return st;
}

static void lw_wait(void *ctx, uint32_t ms) {
    ctxc_lwip_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return;
    }
    CORE_LOCK();
    wait_locked(t, ms);
    CORE_UNLOCK();
}

/* ---- send / recv
 * -------------------------------------------------------------
 *
 * One step each: the stack is pumped once when there is nothing to move,
 * then 0 (try again) is the answer; neither ever waits (wait() does). */

static int32_t lw_send(void *ctx, const uint8_t *data, size_t len) {
    ctxc_lwip_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return CTXC_TRANSPORT_ERROR;
    }
    if (len == 0) {
        return 0;
    }
    CORE_LOCK();
    int32_t r = 0;
    for (int pass = 0; pass < 2; pass++) {
        if (t->ssl_err != 0 &&
            t->ssl_err != MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
            char why[128];
            tls_error_text(t->ssl_err, why, sizeof why);
            set_last(t, "send: TLS error after the handshake", why);
            r = CTXC_TRANSPORT_TLS_ERROR;
            break;
        }
        if (t->pcb == NULL || t->failed || t->eof || t->ssl_err != 0 ||
            t->phase != PHASE_UP) {
            set_last(t, "send",
                     t->failed ? err_text((err_t)t->err)
                               : "the connection is closed");
            r = CTXC_TRANSPORT_ERROR;
            break;
        }
        u16_t room = altcp_sndbuf(t->pcb);
        if (room > 0) {
            u16_t n = len < room ? (u16_t)len : room;
            err_t e = altcp_write(t->pcb, data, n, TCP_WRITE_FLAG_COPY);
            if (e == ERR_OK) {
                (void)altcp_output(t->pcb);
                r = (int32_t)n;
                break;
            }
            if (e != ERR_MEM) {
                set_last(t, "send", err_text(e));
                r = CTXC_TRANSPORT_ERROR;
                break;
            }
        }
        if (pass == 0) {
            pump(t); /* one pump: acknowledgements free room */
        }
    }
    CORE_UNLOCK();
    return r;
}

static int32_t lw_recv(void *ctx, uint8_t *buf, size_t cap) {
    ctxc_lwip_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return CTXC_TRANSPORT_ERROR;
    }
    if (cap == 0) {
        return 0;
    }
    CORE_LOCK();
    if (t->rx == NULL && !t->eof && !t->failed && t->ssl_err == 0 &&
        t->pcb != NULL) {
        pump(t); /* one pump */
    }
    int32_t r = 0;
    if (t->rx != NULL) {
        u16_t n = t->rx->tot_len;
        if (cap < n) {
            n = (u16_t)cap;
        }
        n = pbuf_copy_partial(t->rx, buf, n, 0);
        t->rx = pbuf_free_header(t->rx, n);
        if (t->pcb != NULL) {
            altcp_recved(t->pcb, n);
        }
        r = (int32_t)n;
    } else if (t->ssl_err == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
        set_last(t, "recv",
                 "the server closed the connection (TLS "
                 "close_notify)");
        r = CTXC_TRANSPORT_EOF;
    } else if (t->ssl_err != 0) {
        char why[128];
        tls_error_text(t->ssl_err, why, sizeof why);
        set_last(t, "recv: TLS error after the handshake", why);
        r = CTXC_TRANSPORT_TLS_ERROR;
    } else if (t->eof && t->tls) {
        /* a TLS peer ends with close_notify; a bare FIN may cut an answer
         * (a truncation is not an end) */
        set_last(t, "recv",
                 "the server closed the connection without TLS "
                 "close_notify");
        r = CTXC_TRANSPORT_ERROR;
    } else if (t->eof) {
        set_last(t, "recv", "the server closed the connection");
        r = CTXC_TRANSPORT_EOF;
    } else if (t->pcb == NULL || t->failed || t->phase != PHASE_UP) {
        set_last(t, "recv",
                 t->failed ? err_text((err_t)t->err)
                           : "the connection is closed");
        r = CTXC_TRANSPORT_ERROR;
    }
    CORE_UNLOCK();
    return r;
}

static void lw_close(void *ctx) {
    ctxc_lwip_transport_t *t = ctx;
    if (t == NULL || !t->inited) {
        return;
    }
    CORE_LOCK();
    drop(t); /* altcp_close: TLS close_notify, then FIN */
    CORE_UNLOCK();
}

static const char *lw_last_error(void *ctx) {
    const ctxc_lwip_transport_t *t = ctx;
    return t != NULL ? t->last_error : NULL;
}

static const ctxc_transport_ops_t lw_ops = {
    lw_connect,      lw_send, lw_recv,      lw_close,
    lw_connect_poll, lw_wait, lw_last_error};

/* ---- public
 * -------------------------------------------------------------------- */

ctxc_status_t ctxc_lwip_transport_init(ctxc_lwip_transport_t *t,
                                       const ctxc_lwip_transport_config_t *cfg,
                                       ctxc_error_t *err) {
    if (t == NULL || cfg == NULL || cfg->clock == NULL || cfg->poll == NULL) {
        return ctxc_error_set(err, CTXC_E_INVALID_ARG,
                              "lwIP transport init: NULL argument (the clock "
                              "and poll hooks are required)");
    }
    memset(t, 0, sizeof *t);
    t->cfg = *cfg;
    if (t->cfg.connect_timeout_ms == 0) {
        t->cfg.connect_timeout_ms = CTXC_LWIP_CONNECT_TIMEOUT_MS;
    }
    t->inited = true;
    return CTXC_OK;
}

ctxc_transport_t ctxc_lwip_transport(ctxc_lwip_transport_t *t) {
    ctxc_transport_t tr = {&lw_ops, t};
    return tr;
}

const char *ctxc_lwip_transport_last_error(const ctxc_lwip_transport_t *t) {
    return t != NULL ? t->last_error : "";
}

void ctxc_lwip_transport_tls_info(const ctxc_lwip_transport_t *t,
                                  const char **version, const char **suite) {
    *version = "";
    *suite = "";
    CORE_LOCK();
    if (t != NULL && t->tls && t->up && t->pcb != NULL) {
        const mbedtls_ssl_context *ssl = altcp_tls_context(t->pcb);
        *version = mbedtls_ssl_get_version(ssl);
        *suite = mbedtls_ssl_get_ciphersuite(ssl);
    }
    CORE_UNLOCK();
}

void ctxc_lwip_transport_tls_work(const ctxc_lwip_transport_t *t,
                                  uint32_t *handshake, uint32_t *records) {
    CORE_LOCK();
    *handshake = t != NULL ? t->handshake_ticks : 0u;
    *records = t != NULL ? t->record_ticks : 0u;
    CORE_UNLOCK();
}

void ctxc_lwip_transport_tls_slices(const ctxc_lwip_transport_t *t,
                                    uint32_t *slices, uint32_t *longest) {
    CORE_LOCK();
    *slices = t != NULL ? t->handshake_slices : 0u;
    *longest = t != NULL ? t->handshake_longest : 0u;
    CORE_UNLOCK();
}

void ctxc_lwip_transport_tls_longest_states(const ctxc_lwip_transport_t *t,
                                            int *from, int *to) {
    CORE_LOCK();
    *from = t != NULL ? t->longest_from : 0;
    *to = t != NULL ? t->longest_to : 0;
    CORE_UNLOCK();
}

uint32_t ctxc_lwip_transport_tls_state_longest(const ctxc_lwip_transport_t *t,
                                               unsigned state) {
    CORE_LOCK();
    uint32_t v = t != NULL && state < CTXC_LWIP_TLS_STATES
                     ? t->state_longest[state]
                     : 0u;
    CORE_UNLOCK();
    return v;
}

unsigned ctxc_lwip_transport_trust_count(const ctxc_lwip_transport_t *t) {
    return t != NULL && t->trust != NULL ? t->trust_count : 0u;
}

bool ctxc_lwip_transport_tls_resumed(const ctxc_lwip_transport_t *t) {
    CORE_LOCK();
    bool r = t != NULL && t->tls && t->up && t->resumed;
    CORE_UNLOCK();
    return r;
}

const char *ctxc_lwip_transport_tls_group(const ctxc_lwip_transport_t *t) {
    CORE_LOCK();
    uint16_t group = t != NULL && t->tls && t->up ? t->group : 0u;
    CORE_UNLOCK();
    if (group == 0) {
        return "";
    }
    const mbedtls_ecp_curve_info *ci =
        mbedtls_ecp_curve_info_from_grp_id((mbedtls_ecp_group_id)group);
    return ci != NULL ? ci->name : "";
}

void ctxc_lwip_transport_deinit(ctxc_lwip_transport_t *t) {
    if (t == NULL || !t->inited) {
        return;
    }
    CORE_LOCK();
    drop(t);
    if (t->tls_conf != NULL) {
        altcp_tls_free_config(t->tls_conf);
        t->tls_conf = NULL;
    }
    if (t->session != NULL) {
        mbedtls_ssl_session_free((mbedtls_ssl_session *)t->session);
        mbedtls_free(t->session);
        t->session = NULL;
    }
    if (t->trust != NULL) {
        mbedtls_x509_crt_free(t->trust);
        mbedtls_free(t->trust);
        t->trust = NULL;
    }
    if (watched == t) {
        watched = NULL;
    }
    CORE_UNLOCK();
    t->inited = false;
}
