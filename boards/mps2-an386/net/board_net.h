/*
 * Network configuration of the mps2-an386 lwIP image, in one place (plain
 * macros): the address plan of QEMU's user-mode network, the host name the
 * fixture's certificate names, and the memory the network stack gets.
 */
#ifndef MPS2_AN386_BOARD_NET_H
#define MPS2_AN386_BOARD_NET_H

/* QEMU user net (-nic user,model=lan9118): the guest is 10.0.2.15/24, the
 * gateway 10.0.2.2 is the host's loopback. Byte lists (a, b, c, d). */
#define MPS2_NET_IP 10, 0, 2, 15
#define MPS2_NET_MASK 255, 255, 255, 0
#define MPS2_NET_GW 10, 0, 2, 2

/* The name of the fixture's "device" certificate (test/fixtures/
 * make_certs.sh), resolved by lwIP's local host list to the gateway. */
#define MPS2_NET_FIXTURE_HOST "fixture.ctxc.test"

/* lwIP's own heap (MEM_SIZE: pbufs of outgoing data, the altcp state). */
#define MPS2_LWIP_HEAP_BYTES (16u * 1024u)

/* The mbedTLS pool (MBEDTLS_MEMORY_BUFFER_ALLOC_C): the parsed CA, the
 * TLS context with its two 4 KiB record buffers, the handshake (ECDHE
 * P-256 and the server's certificate). The image prints the pool's
 * high-water mark: about 13.3 KiB per connection; 24 KiB leaves room for a
 * larger server chain. */
#define MPS2_TLS_POOL_BYTES (24u * 1024u)

/* The largest TLS record either side sends (max_fragment_length): the
 * record buffers of ctxc_mbedtls_config.h. */
#define MPS2_TLS_RECORD_BYTES 4096

/* Flash slot for the CA certificate (ca_slot.c): length word + DER. */
#define MPS2_CA_SLOT_BYTES 2048u

#endif /* MPS2_AN386_BOARD_NET_H */
