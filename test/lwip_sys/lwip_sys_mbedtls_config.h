/*
 * mbedTLS 2.28 configuration of the host test lwip_nosys0 (test/lwip_sys):
 * port/lwip's client and the test's TLS server in the same lwIP stack, so
 * both the client and the server side: TLS 1.2, ECDHE-ECDSA with
 * AES-128-GCM over P-256 (the test fixture's certificates are EC P-256,
 * PEM, made by test/fixtures/make_certs.sh), SNI, 16 KiB records. As on the
 * device every allocation comes from the transport's pool
 * (MEMORY_BUFFER_ALLOC_C; before it is set up mbedtls_calloc answers NULL)
 * and the entropy from the port's hook through mbedtls_hardware_poll. No
 * THREADING_C: every mbedTLS call is made under lwIP's core lock (the
 * transport's calls and lwIP's callbacks in the tcpip thread), which is
 * what the test checks under ThreadSanitizer. No certificate dates (no
 * HAVE_TIME_DATE).
 */
#ifndef LWIP_SYS_MBEDTLS_CONFIG_H
#define LWIP_SYS_MBEDTLS_CONFIG_H

#include <stddef.h>

#define MBEDTLS_PLATFORM_C
#define MBEDTLS_PLATFORM_MEMORY
#define MBEDTLS_MEMORY_BUFFER_ALLOC_C
#define MBEDTLS_MEMORY_DEBUG
/* the pool's block headers hold pointers: 8-byte alignment on a 64-bit
 * host (the default 4 is a 32-bit target's; UBSan flags it here) */
#define MBEDTLS_MEMORY_ALIGN_MULTIPLE 8
void *ctxc_mbedtls_no_calloc(size_t n, size_t size);
void ctxc_mbedtls_no_free(void *p);
#define MBEDTLS_PLATFORM_STD_CALLOC ctxc_mbedtls_no_calloc
#define MBEDTLS_PLATFORM_STD_FREE ctxc_mbedtls_no_free
#define MBEDTLS_NO_PLATFORM_ENTROPY
#define MBEDTLS_ENTROPY_HARDWARE_ALT
#define MBEDTLS_ENTROPY_FORCE_SHA256
#define MBEDTLS_ENTROPY_C
#define MBEDTLS_CTR_DRBG_C

#define MBEDTLS_AES_C
#define MBEDTLS_GCM_C
#define MBEDTLS_CIPHER_C
#define MBEDTLS_MD_C
#define MBEDTLS_SHA256_C
#define MBEDTLS_BIGNUM_C
#define MBEDTLS_ECP_C
#define MBEDTLS_ECP_DP_SECP256R1_ENABLED
#define MBEDTLS_ECP_NIST_OPTIM
#define MBEDTLS_ECDH_C
#define MBEDTLS_ECDSA_C
#define MBEDTLS_ASN1_PARSE_C
#define MBEDTLS_ASN1_WRITE_C
#define MBEDTLS_OID_C
#define MBEDTLS_PK_C
#define MBEDTLS_PK_PARSE_C
#define MBEDTLS_PEM_PARSE_C
#define MBEDTLS_BASE64_C
#define MBEDTLS_ERROR_C

#define MBEDTLS_X509_USE_C
#define MBEDTLS_X509_CRT_PARSE_C

#define MBEDTLS_SSL_TLS_C
#define MBEDTLS_SSL_CLI_C
#define MBEDTLS_SSL_SRV_C
#define MBEDTLS_SSL_PROTO_TLS1_2
#define MBEDTLS_KEY_EXCHANGE_ECDHE_ECDSA_ENABLED
#define MBEDTLS_SSL_SERVER_NAME_INDICATION
#define MBEDTLS_SSL_CIPHERSUITES MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256

#include "mbedtls/check_config.h"

#endif /* LWIP_SYS_MBEDTLS_CONFIG_H */
