/*
 * mbedTLS 2.28 configuration of the mps2-an386 lwIP image (passed as
 * MBEDTLS_CONFIG_FILE), in two profiles chosen by MPS2_TLS_PROFILE_LAB
 * (CMake: -DMPS2_TLS_PROFILE=lab; default production):
 *
 * production  what the public LLM APIs' front ends need (docs/device.md,
 *             "TLS profile"): TLS 1.2 client; ECDHE-ECDSA and ECDHE-RSA
 *             with AES-128-GCM, AES-256-GCM and ChaCha20-Poly1305; groups
 *             X25519, P-256, P-384; certificate chains with RSA 2048-4096
 *             (PKCS#1 v1.5 and PSS) and ECDSA P-256/P-384 over SHA-256/384;
 *             incoming records up to 16 KiB (MBEDTLS_SSL_IN_CONTENT_LEN
 *             16384: the front ends do not honour max_fragment_length, so
 *             it is not asked for), outgoing 4 KiB; extended master secret;
 *             session tickets (resumption); certificate dates checked
 *             against the board's calendar time (MBEDTLS_HAVE_TIME_DATE,
 *             SNTP, net_board.c); mbedTLS's error texts (MBEDTLS_ERROR_C)
 *             for the messages after the handshake.
 * lab         the issue-17 image's small profile: ECDHE-ECDSA P-256 with
 *             AES-128-GCM, 4 KiB records both ways (max_fragment_length
 *             asked for, which the fixture's Python server honours), no
 *             dates. Only for servers one controls.
 *
 * Both: the handshake's ECC in slices (MBEDTLS_ECP_RESTARTABLE), the
 * certificate chain and host name verified against the trust
 * store in flash (DER), SNI, every allocation from a static pool
 * (MEMORY_BUFFER_ALLOC_C; size MPS2_TLS_POOL_BYTES in board_net.h), the
 * entropy from the port's hook through mbedtls_hardware_poll (port/lwip).
 */
#ifndef CTXC_MBEDTLS_CONFIG_H
#define CTXC_MBEDTLS_CONFIG_H

#include "board_net.h"

/* platform */
#define MBEDTLS_HAVE_ASM
#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_MEMORY_DEBUG /* the pool's high-water mark */
/* before the pool is set up mbedtls_calloc answers NULL: no libc heap */
#include <stddef.h>
void *ctxc_mbedtls_no_calloc(size_t n, size_t size);
void ctxc_mbedtls_no_free(void *p);
#define MBEDTLS_PLATFORM_STD_CALLOC ctxc_mbedtls_no_calloc
#define MBEDTLS_PLATFORM_STD_FREE ctxc_mbedtls_no_free
/* the pool's corruption check stops the image (net_board.c), not exit() */
void mps2_tls_exit(int status);
#define MBEDTLS_PLATFORM_EXIT_MACRO mps2_tls_exit
/* the pool's debug report (MEMORY_DEBUG) goes nowhere: no stdio streams */
#include <stdio.h>
int mps2_tls_fprintf(FILE *stream, const char *format, ...);
#define MBEDTLS_PLATFORM_FPRINTF_MACRO mps2_tls_fprintf
/* X.509 texts through port/lwip's small snprintf (no newlib stdio) */
int ctxc_lwip_snprintf(char *s, size_t n, const char *fmt, ...);
#define MBEDTLS_PLATFORM_SNPRINTF_MACRO ctxc_lwip_snprintf
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_ENTROPY_HARDWARE_ALT
#define MBEDTLS_ENTROPY_FORCE_SHA256
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_CTR_DRBG_C

/* crypto common to both */
#define MBEDTLS_AES_C
#define MBEDTLS_AES_ROM_TABLES
#define MBEDTLS_GCM_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_SHA256_SMALLER
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECP_WINDOW_SIZE 2
#define MBEDTLS_ECP_FIXED_POINT_OPTIM 0
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
/* The handshake's public-key work in slices (issue 38): ECDSA checks and
 * the ECDHE-ECDSA key exchange on P-256/P-384 stop after
 * MPS2_TLS_ECP_MAX_OPS basic operations (board_net.h, the port's
 * cfg.ecp_max_ops) and go on at the next poll. Needs the legacy ECDH
 * context (mbedTLS 2.28's check_config). */
#define MBEDTLS_ECP_RESTARTABLE
#define MBEDTLS_ECDH_LEGACY_CONTEXT
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_OID_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C

/* X.509 */
#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C

/* TLS client */
#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_SSL_SERVER_NAME_INDICATION

#if defined(MPS2_TLS_PROFILE_LAB)

#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
#define MBEDTLS_SSL_MAX_CONTENT_LEN MPS2_TLS_RECORD_BYTES
#define MBEDTLS_SSL_CIPHERSUITES MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256

#else /* production */

/* SHA-384 (suites with AES-256-GCM, P-384 / SHA-384 signatures) */
#define MBEDTLS_SHA512_C
/* ChaCha20-Poly1305 */
#define MBEDTLS_CHACHA20_C
#define MBEDTLS_POLY1305_C
#define MBEDTLS_CHACHAPOLY_C
/* the groups */
#define MBEDTLS_ECP_DP_CURVE25519_ENABLED
#define MBEDTLS_ECP_DP_SECP384R1_ENABLED
/* RSA chains: PKCS#1 v1.5 and PSS signatures, 2048..4096-bit keys */
#define MBEDTLS_RSA_C
#define MBEDTLS_PKCS1_V15
#define MBEDTLS_PKCS1_V21
#define MBEDTLS_X509_RSASSA_PSS_SUPPORT
#define MBEDTLS_KEY_EXCHANGE_ECDHE_RSA_ENABLED
#define MBEDTLS_SSL_EXTENDED_MASTER_SECRET
#define MBEDTLS_SSL_SESSION_TICKETS
/* 16 KiB records in (no max_fragment_length: the large front ends do not
 * negotiate it), requests go out in 4 KiB records */
#define MBEDTLS_SSL_IN_CONTENT_LEN MPS2_TLS_IN_RECORD_BYTES
#define MBEDTLS_SSL_OUT_CONTENT_LEN MPS2_TLS_OUT_RECORD_BYTES
/* certificate dates: the platform time hook reads the board's calendar
 * clock (SNTP, net_board.c) */
#define MBEDTLS_HAVE_TIME
#define MBEDTLS_HAVE_TIME_DATE
#define MBEDTLS_PLATFORM_TIME_ALT
#define MBEDTLS_PLATFORM_GMTIME_R_ALT
/* error texts for the port's messages (code and text) */
#define MBEDTLS_ERROR_C
#define MBEDTLS_SSL_CIPHERSUITES                                               \
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,                           \
        MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,                         \
        MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,                 \
        MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,                   \
        MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,                       \
        MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384

#endif

#include "mbedtls/check_config.h"

#endif /* CTXC_MBEDTLS_CONFIG_H */
