/*
 * ctxc romfs port — the built-in prompt table as a read-only filesystem,
 * for devices without one. The files are "<id>.md" ("compression/
 * middle-out.md"), the directories their categories; prompts the build
 * leaves out are absent. Every write hook is NULL: writes through it answer
 * CTXC_E_READ_ONLY.
 *
 *     ctxc_fs_t fs = ctxc_romfs();
 *     ctxc_prompt_resolve(&fs, provider, model, CTXC_PROMPT_MIDDLE_OUT, ...);
 */
#ifndef CTXC_ROMFS_H
#define CTXC_ROMFS_H

#include "ctxc/port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The romfs filesystem (no state: ctx is NULL). */
ctxc_fs_t ctxc_romfs(void);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_ROMFS_H */
