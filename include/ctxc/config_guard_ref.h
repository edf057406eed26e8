/** @file
 * ctxc — one reference (or, in src/config_guard.c, one definition) of the
 * link-time configuration guard: the symbol
 * `ctxc_cfg_<CTXC_GUARD_NAME_>_<decimal CTXC_GUARD_VALUE_>`.
 * Included by ctxc/config_guard.h once per option; no include guard.
 */
#if (CTXC_GUARD_VALUE_) < 0 || (CTXC_GUARD_VALUE_) > 99999999
#error                                                                         \
    "ctxc configuration guard: a struct-sizing option is outside 0 .. 99999999"
#endif

#undef CTXC_GUARD_D0_
#if (CTXC_GUARD_VALUE_) % 10 == 0
#define CTXC_GUARD_D0_ "0"
#elif (CTXC_GUARD_VALUE_) % 10 == 1
#define CTXC_GUARD_D0_ "1"
#elif (CTXC_GUARD_VALUE_) % 10 == 2
#define CTXC_GUARD_D0_ "2"
#elif (CTXC_GUARD_VALUE_) % 10 == 3
#define CTXC_GUARD_D0_ "3"
#elif (CTXC_GUARD_VALUE_) % 10 == 4
#define CTXC_GUARD_D0_ "4"
#elif (CTXC_GUARD_VALUE_) % 10 == 5
#define CTXC_GUARD_D0_ "5"
#elif (CTXC_GUARD_VALUE_) % 10 == 6
#define CTXC_GUARD_D0_ "6"
#elif (CTXC_GUARD_VALUE_) % 10 == 7
#define CTXC_GUARD_D0_ "7"
#elif (CTXC_GUARD_VALUE_) % 10 == 8
#define CTXC_GUARD_D0_ "8"
#elif (CTXC_GUARD_VALUE_) % 10 == 9
#define CTXC_GUARD_D0_ "9"
#endif
#undef CTXC_GUARD_D1_
#if (CTXC_GUARD_VALUE_) < 10
#define CTXC_GUARD_D1_ ""
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 0
#define CTXC_GUARD_D1_ "0"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 1
#define CTXC_GUARD_D1_ "1"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 2
#define CTXC_GUARD_D1_ "2"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 3
#define CTXC_GUARD_D1_ "3"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 4
#define CTXC_GUARD_D1_ "4"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 5
#define CTXC_GUARD_D1_ "5"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 6
#define CTXC_GUARD_D1_ "6"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 7
#define CTXC_GUARD_D1_ "7"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 8
#define CTXC_GUARD_D1_ "8"
#elif ((CTXC_GUARD_VALUE_) / 10) % 10 == 9
#define CTXC_GUARD_D1_ "9"
#endif
#undef CTXC_GUARD_D2_
#if (CTXC_GUARD_VALUE_) < 100
#define CTXC_GUARD_D2_ ""
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 0
#define CTXC_GUARD_D2_ "0"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 1
#define CTXC_GUARD_D2_ "1"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 2
#define CTXC_GUARD_D2_ "2"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 3
#define CTXC_GUARD_D2_ "3"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 4
#define CTXC_GUARD_D2_ "4"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 5
#define CTXC_GUARD_D2_ "5"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 6
#define CTXC_GUARD_D2_ "6"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 7
#define CTXC_GUARD_D2_ "7"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 8
#define CTXC_GUARD_D2_ "8"
#elif ((CTXC_GUARD_VALUE_) / 100) % 10 == 9
#define CTXC_GUARD_D2_ "9"
#endif
#undef CTXC_GUARD_D3_
#if (CTXC_GUARD_VALUE_) < 1000
#define CTXC_GUARD_D3_ ""
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 0
#define CTXC_GUARD_D3_ "0"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 1
#define CTXC_GUARD_D3_ "1"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 2
#define CTXC_GUARD_D3_ "2"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 3
#define CTXC_GUARD_D3_ "3"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 4
#define CTXC_GUARD_D3_ "4"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 5
#define CTXC_GUARD_D3_ "5"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 6
#define CTXC_GUARD_D3_ "6"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 7
#define CTXC_GUARD_D3_ "7"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 8
#define CTXC_GUARD_D3_ "8"
#elif ((CTXC_GUARD_VALUE_) / 1000) % 10 == 9
#define CTXC_GUARD_D3_ "9"
#endif
#undef CTXC_GUARD_D4_
#if (CTXC_GUARD_VALUE_) < 10000
#define CTXC_GUARD_D4_ ""
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 0
#define CTXC_GUARD_D4_ "0"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 1
#define CTXC_GUARD_D4_ "1"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 2
#define CTXC_GUARD_D4_ "2"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 3
#define CTXC_GUARD_D4_ "3"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 4
#define CTXC_GUARD_D4_ "4"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 5
#define CTXC_GUARD_D4_ "5"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 6
#define CTXC_GUARD_D4_ "6"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 7
#define CTXC_GUARD_D4_ "7"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 8
#define CTXC_GUARD_D4_ "8"
#elif ((CTXC_GUARD_VALUE_) / 10000) % 10 == 9
#define CTXC_GUARD_D4_ "9"
#endif
#undef CTXC_GUARD_D5_
#if (CTXC_GUARD_VALUE_) < 100000
#define CTXC_GUARD_D5_ ""
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 0
#define CTXC_GUARD_D5_ "0"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 1
#define CTXC_GUARD_D5_ "1"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 2
#define CTXC_GUARD_D5_ "2"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 3
#define CTXC_GUARD_D5_ "3"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 4
#define CTXC_GUARD_D5_ "4"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 5
#define CTXC_GUARD_D5_ "5"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 6
#define CTXC_GUARD_D5_ "6"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 7
#define CTXC_GUARD_D5_ "7"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 8
#define CTXC_GUARD_D5_ "8"
#elif ((CTXC_GUARD_VALUE_) / 100000) % 10 == 9
#define CTXC_GUARD_D5_ "9"
#endif
#undef CTXC_GUARD_D6_
#if (CTXC_GUARD_VALUE_) < 1000000
#define CTXC_GUARD_D6_ ""
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 0
#define CTXC_GUARD_D6_ "0"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 1
#define CTXC_GUARD_D6_ "1"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 2
#define CTXC_GUARD_D6_ "2"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 3
#define CTXC_GUARD_D6_ "3"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 4
#define CTXC_GUARD_D6_ "4"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 5
#define CTXC_GUARD_D6_ "5"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 6
#define CTXC_GUARD_D6_ "6"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 7
#define CTXC_GUARD_D6_ "7"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 8
#define CTXC_GUARD_D6_ "8"
#elif ((CTXC_GUARD_VALUE_) / 1000000) % 10 == 9
#define CTXC_GUARD_D6_ "9"
#endif
#undef CTXC_GUARD_D7_
#if (CTXC_GUARD_VALUE_) < 10000000
#define CTXC_GUARD_D7_ ""
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 0
#define CTXC_GUARD_D7_ "0"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 1
#define CTXC_GUARD_D7_ "1"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 2
#define CTXC_GUARD_D7_ "2"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 3
#define CTXC_GUARD_D7_ "3"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 4
#define CTXC_GUARD_D7_ "4"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 5
#define CTXC_GUARD_D7_ "5"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 6
#define CTXC_GUARD_D7_ "6"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 7
#define CTXC_GUARD_D7_ "7"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 8
#define CTXC_GUARD_D7_ "8"
#elif ((CTXC_GUARD_VALUE_) / 10000000) % 10 == 9
#define CTXC_GUARD_D7_ "9"
#endif

#undef CTXC_GUARD_SYM_
#define CTXC_GUARD_SYM_                                                        \
    "ctxc_cfg_" CTXC_GUARD_NAME_                                               \
    "_" CTXC_GUARD_D7_ CTXC_GUARD_D6_ CTXC_GUARD_D5_ CTXC_GUARD_D4_            \
        CTXC_GUARD_D3_ CTXC_GUARD_D2_ CTXC_GUARD_D1_ CTXC_GUARD_D0_

#if defined(CTXC_CONFIG_GUARD_DEFINE)
/** The library's definition (src/config_guard.c): a label of no size. */
__asm__(".pushsection .rodata.ctxc_config_guard_def,\"a\",%progbits\n\t"
        ".globl " CTXC_GUARD_SYM_ "\n" CTXC_GUARD_SYM_ ":\n\t.popsection");
#endif
#if defined(__arm__)
__asm__(".pushsection .rodata.ctxc_config_guard,\"aR\",%progbits\n\t"
        ".reloc ., R_ARM_NONE, " CTXC_GUARD_SYM_ "\n\t.popsection");
#else
__asm__(".pushsection .rodata.ctxc_config_guard,\"aR\",%progbits\n\t"
        ".4byte " CTXC_GUARD_SYM_ " - .\n\t.popsection");
#endif

/* config_guard.h defines these again for the next option. */
#undef CTXC_GUARD_NAME_
#undef CTXC_GUARD_VALUE_
