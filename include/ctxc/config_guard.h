/** @file
 * ctxc — link-time configuration guard.
 *
 * The library and an application that see different values of an option
 * that sizes a public struct or a work area (ctxc_error_t, ctxc_import_t,
 * ctxc_settings_store_t, ctxc_provider_client_t, CTXC_HTTP_WORK_BYTES, ...)
 * would link and then corrupt memory. So every option of the list below
 * becomes a symbol whose name holds its value:
 *
 *   `ctxc_cfg_<OPTION>_<decimal value>`     e.g. ctxc_cfg_ERROR_MESSAGE_LEN_160
 *
 * The library defines each one once (src/config_guard.c). Every translation
 * unit that includes a ctxc header references each one, with the values
 * that translation unit sees. An application built with another value
 * fails to link:
 *
 *   undefined reference to `ctxc_cfg_ERROR_MESSAGE_LEN_96'
 *
 * names the option and the application's value; the library's value is in
 * `nm libctxc.a | grep ctxc_cfg_`.
 *
 * How (GCC and Clang on ELF targets; CTXC_CONFIG_GUARD 0 turns it off, and
 * it is off for other compilers): a top-level asm statement puts the
 * reference into the section .rodata.ctxc_config_guard, flagged "R"
 * (SHF_GNU_RETAIN, binutils 2.36 or later) so that --gc-sections keeps it
 * and the linker resolves it. On 32-bit ARM the reference is an
 * R_ARM_NONE relocation: no byte of flash or RAM. Elsewhere (the host) it
 * is a 4-byte PC-relative word per option and translation unit, in
 * read-only data (no dynamic relocation, also in a PIE).
 *
 * The values are integer constant expressions of #if: (64), 64u and
 * (2u * 32u) work; outside 0 .. 99999999 stops the build with #error. The
 * digits come from #if chains (config_guard_ref.h) as string literals, the
 * option names are string literals too: no token pasting, and no macro of
 * the same name (PATH_MAX of <limits.h>) can change a name.
 */
#ifndef CTXC_CONFIG_GUARD_H
#define CTXC_CONFIG_GUARD_H

/** CTXC_CONFIG_GUARD: 1 (default with GCC or Clang on ELF) references the
 * link-time guard symbols of the sizing options; 0 (define it everywhere)
 * turns the guard off. */
#ifndef CTXC_CONFIG_GUARD
#if defined(__GNUC__) && defined(__ELF__)
#define CTXC_CONFIG_GUARD 1
#else
#define CTXC_CONFIG_GUARD 0
#endif
#endif

#if CTXC_CONFIG_GUARD

#define CTXC_GUARD_NAME_ "ERROR_MESSAGE_LEN"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_ERROR_MESSAGE_LEN)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "JSON_MAX_TOKENS"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_JSON_MAX_TOKENS)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "PATH_MAX"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_PATH_MAX)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "WORK_INDEX_SLOTS_PER_ENTRY"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "DENSITY_FILTER_BYTES"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_DENSITY_FILTER_BYTES)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "SETTINGS_VALUE_BYTES"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_SETTINGS_VALUE_BYTES)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "SETTINGS_FILE_BYTES"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_SETTINGS_FILE_BYTES)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "SETTINGS_PROFILE_NAME_MAX"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "HTTP_IO_BUFFER_BYTES"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_HTTP_IO_BUFFER_BYTES)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "HTTP_LINE_MAX"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_HTTP_LINE_MAX)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "HTTP_SSE_BUFFER_BYTES"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_HTTP_SSE_BUFFER_BYTES)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "HTTP_SSE_FIELD_MAX"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_HTTP_SSE_FIELD_MAX)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "HTTP_ERROR_BODY_MAX"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_HTTP_ERROR_BODY_MAX)
#include "ctxc/config_guard_ref.h"

#define CTXC_GUARD_NAME_ "PROVIDER_KEY_BYTES"
#define CTXC_GUARD_VALUE_ (CTXC_CFG_PROVIDER_KEY_BYTES)
#include "ctxc/config_guard_ref.h"


#endif /* CTXC_CONFIG_GUARD */

#endif /* CTXC_CONFIG_GUARD_H */
