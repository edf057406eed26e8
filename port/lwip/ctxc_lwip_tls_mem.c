/*
 * Memory of lwIP's altcp_tls_mbedtls (the functions of its
 * altcp_tls_mbedtls_mem.h), from the mbedTLS pool instead of the lwIP
 * heap: the TLS configuration, the per-connection state and everything
 * mbedTLS allocates come from the one static pool the transport hands to
 * mbedtls_memory_buffer_alloc_init() (ctxc_transport_lwip.c). This file
 * takes the place of lwIP's altcp_tls_mbedtls_mem.c in the build.
 */
#include "lwip/opt.h"

#if LWIP_ALTCP && LWIP_ALTCP_TLS && LWIP_ALTCP_TLS_MBEDTLS

#include "mbedtls/platform.h"

#include "altcp_tls_mbedtls_mem.h"
#include "altcp_tls_mbedtls_structs.h"

/* MBEDTLS_PLATFORM_STD_CALLOC / _FREE (ctxc_mbedtls_config.h): what
 * mbedtls_calloc is before the pool is set up: nothing (so that no libc
 * allocator is linked). */
void *ctxc_mbedtls_no_calloc(size_t n, size_t size) {
    (void)n;
    (void)size;
    return NULL;
}

void ctxc_mbedtls_no_free(void *p) { (void)p; }

void altcp_mbedtls_mem_init(void) {
    /* the pool is set up by the transport before the first TLS config */
}

altcp_mbedtls_state_t *altcp_mbedtls_alloc(void *conf) {
    altcp_mbedtls_state_t *s = mbedtls_calloc(1, sizeof *s);
    if (s != NULL) {
        s->conf = conf;
    }
    return s;
}

void altcp_mbedtls_free(void *conf, altcp_mbedtls_state_t *state) {
    (void)conf;
    mbedtls_free(state);
}

void *altcp_mbedtls_alloc_config(size_t size) {
    return mbedtls_calloc(1, size);
}

void altcp_mbedtls_free_config(void *item) { mbedtls_free(item); }

#endif
