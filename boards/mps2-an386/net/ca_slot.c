/*
 * The CA certificate slot of the lwIP image: MPS2_CA_SLOT_BYTES of flash in
 * their own section (.ctxc_ca), a 4-byte little-endian length, then the
 * CA certificate (DER). The build leaves it empty (length 0: TLS connects
 * fail with "no CA certificate compiled in"); the image is given its CA by
 * writing this section, e.g. with
 *   arm-none-eabi-objcopy --update-section .ctxc_ca=ca_slot.bin in.elf out.elf
 * where ca_slot.bin is exactly MPS2_CA_SLOT_BYTES long
 * (test/embedded/lwip_ca_slot.py makes it from a PEM file). The test does
 * this with the fixture's CA, which make_certs.sh creates afresh on every
 * test run. Kept in its own translation unit so that no compiler sees the
 * (empty) initialiser where the slot is read.
 */
#include <stdint.h>

#include "board_net.h"

__attribute__((section(".ctxc_ca"), aligned(4), used))
const uint8_t mps2_ca_slot[MPS2_CA_SLOT_BYTES] = {0};
