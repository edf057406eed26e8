/*
 * mbedTLS 2.28 configuration of the mps2-an386 lwIP image (passed as
 * MBEDTLS_CONFIG_FILE): a TLS 1.2 client for one cipher family, ECDHE-ECDSA
 * over P-256 with AES-GCM (what the fixture's EC certificates and
 * Python's ssl offer; a board talking to a public API adds RSA and the
 * curves its server uses), the certificate chain and host name verified
 * against a CA compiled into the image (DER), SNI, 4 KiB records
 * (max_fragment_length), every allocation from a static pool
 * (MEMORY_BUFFER_ALLOC_C; size MPS2_TLS_POOL_BYTES in board_net.h), the
 * entropy from the port's hook through mbedtls_hardware_poll (port/lwip).
 *
 * No MBEDTLS_HAVE_TIME_DATE: the board has no calendar clock, so the
 * validity dates of certificates are not checked. A device with an RTC or
 * SNTP should enable it (and MBEDTLS_PLATFORM_TIME_ALT for its clock).
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

/* crypto */
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
#define MBEDTLS_SSL_MAX_FRAGMENT_LENGTH
#define MBEDTLS_SSL_MAX_CONTENT_LEN MPS2_TLS_RECORD_BYTES
#define MBEDTLS_SSL_CIPHERSUITES MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256

#include "mbedtls/check_config.h"

#endif /* CTXC_MBEDTLS_CONFIG_H */
