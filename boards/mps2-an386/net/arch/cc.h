/*
 * lwIP architecture header of the mps2-an386 image (arm-none-eabi-gcc,
 * newlib, little endian): diagnostics to the semihosting console, an
 * assertion that stops the image.
 */
#ifndef MPS2_AN386_ARCH_CC_H
#define MPS2_AN386_ARCH_CC_H

#include <stdint.h>

#define BYTE_ORDER LITTLE_ENDIAN
#define LWIP_NO_CTYPE_H 0

void mps2_net_diag(const char *msg);
void mps2_net_assert(const char *msg, const char *file, int line);
uint32_t mps2_net_rand(void);

#define LWIP_PLATFORM_DIAG(x) mps2_net_diag("lwip diag")
#define LWIP_PLATFORM_ASSERT(x) mps2_net_assert((x), __FILE__, __LINE__)
/* lwIP's own randomness (initial TCP ports, DNS ids): not key material */
#define LWIP_RAND() mps2_net_rand()

#endif /* MPS2_AN386_ARCH_CC_H */
