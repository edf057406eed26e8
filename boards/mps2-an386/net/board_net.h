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

/* The NTP server (lwIP's sntp app; its port from the command line,
 * --ntp=PORT): QEMU user net's gateway, the host's loopback, where the test
 * runs its responder. */
#define MPS2_NTP_SERVER MPS2_NET_GW

/* TLS before the time is known (SNTP): 0 (default) refuses it, since
 * certificate dates cannot be checked; 1 lets it go on without the date
 * checks (a board that must connect before any time source answers). */
#ifndef MPS2_TLS_ALLOW_UNKNOWN_TIME
#define MPS2_TLS_ALLOW_UNKNOWN_TIME 0
#endif

/* The handshake's public-key work in slices (the port's cfg.ecp_max_ops,
 * MBEDTLS_ECP_RESTARTABLE): at most about this many of mbedTLS's basic
 * ECC operations (one is about a P-256 multiplication in GF(p); a P-256
 * scalar multiplication is about 3300) in one poll; 0: each public-key
 * step whole. The image's --ecp-max-ops=N overrides it. */
#ifndef MPS2_TLS_ECP_MAX_OPS
#define MPS2_TLS_ECP_MAX_OPS 250u
#endif

/* The device's endpoint (the lwIP image's --call; each overridable on its
 * command line, docs/device.md): provider openai | anthropic | gemini, the
 * base URL ("" : the provider's public API), the model, the API key (a
 * production device reads it from a key slot, never from the image) and
 * whether answers are streamed (SSE). */
#define MPS2_DEVICE_PROVIDER "openai"
#define MPS2_DEVICE_BASE_URL ""
#define MPS2_DEVICE_MODEL "gpt-4o-mini"
#define MPS2_DEVICE_KEY ""
#define MPS2_DEVICE_STREAM 1

/* lwIP's DNS server (dotted IPv4; "" : none, names come only from the
 * local host list of lwipopts.h). --dns=A.B.C.D overrides it. */
#define MPS2_NET_DNS_SERVER ""

/* lwIP's own heap (MEM_SIZE: pbufs of outgoing data, the altcp state). */
#define MPS2_LWIP_HEAP_BYTES (16u * 1024u)

/* The budgets of the lwIP image (docs/device.md, "Budgets"): each is the
 * measured high-water x 5/4, rounded up (512 bytes for the stack, 1 KiB for
 * the pool); every run of the image checks that its high-water x 5/4 stays
 * within them (a failed check), test/embedded/lwip_budget.py checks the
 * lwip_target run's output against the sizes in the built image, and make
 * device-tables prints the figures. Set them anew from those figures when
 * the TLS path changes. */

/* The mbedTLS pool (MBEDTLS_MEMORY_BUFFER_ALLOC_C): the parsed trust
 * store, the TLS context with its record buffers (production: 16 KiB in,
 * 4 KiB out; lab: 4 KiB both), the handshake (the server's chain, the key
 * exchange), the kept session. Production: the largest high-water is
 * 40064 bytes (the RSA-2048 <- RSA-2048 <- RSA-4096 chain; P-256 for its
 * ECDHE since the handshake runs in slices, MPS2_TLS_ECP_MAX_OPS) with the
 * tests' 4 anchors (6284 bytes parsed); with the image's own trust store
 * (6 anchors, 12220 bytes parsed) 46000; x 5/4 = 57500, 57 KiB. Lab: not run
 * by the tests (13.3 KiB measured when the profile was made), 24 KiB. */
#if defined(MPS2_TLS_PROFILE_LAB)
#define MPS2_TLS_POOL_BYTES (24u * 1024u)
#else
#define MPS2_TLS_POOL_BYTES (57u * 1024u)
#endif

/* The lwIP image's main stack (the linker script's __stack_size for
 * ctxc_lwip.elf; net/lwip_image.cmake reads the number from here): the
 * deepest the lwip_target run reaches from the top of the stack is 6364
 * bytes (main's frames and ctxc_session_before_send over TLS, the handshake
 * running inside lwIP's receive callback; 5860 before the three limits,
 * add_room and the job's failure handling); x 5/4 = 7955, 8 KiB. The
 * scenario image keeps project.yml's 32 KiB. */
#define MPS2_LWIP_STACK_BYTES 8192

/* lab profile: the largest TLS record either side sends
 * (max_fragment_length). */
#define MPS2_TLS_RECORD_BYTES 4096
/* production: records in up to the TLS maximum (the front ends do not
 * negotiate max_fragment_length), out in 4 KiB records. */
#define MPS2_TLS_IN_RECORD_BYTES 16384
#define MPS2_TLS_OUT_RECORD_BYTES 4096

/* Flash area of the trust store (section .ctxc_ca, trust_store.c made by
 * gen_trust_store.py from trust_store.txt): a length word, then DER
 * certificates one after the other. */
#define MPS2_CA_SLOT_BYTES 8192u

#endif /* MPS2_AN386_BOARD_NET_H */
