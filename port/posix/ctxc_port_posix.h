/*
 * ctxc POSIX port — for hosts and simulation builds:
 *
 *   filesystem  a directory tree under one root: $CTXC_HOME, else
 *               $HOME/.config/ctxc (created, mode 0700, on the first write)
 *   clock       clock_gettime(CLOCK_MONOTONIC)
 *   log         one line per message on stderr: "ctxc: <level>: <text>"
 *   mutex       a pthread mutex
 *   entropy     getrandom() (the kernel's urandom pool)
 *   transport   BSD sockets + mbedTLS: ctxc_transport_posix.h (its own
 *               state, so a build without network does not carry it)
 *
 *     ctxc_posix_port_t p;
 *     if (ctxc_posix_port_init(&p, NULL, CTXC_LOG_WARN, &err) != CTXC_OK) ...
 *     ctxc_session_set_port(&session, &p.port);
 *     ctxc_prompt_resolve(&p.port.fs, ...);
 *
 * Files are created with mode 0600, directories 0700. Paths are joined to
 * the root after ctxc_fs_path_check(); symbolic links inside the root are
 * followed (they are the user's own). Only regular files are read: a FIFO,
 * a device or a socket at a path is refused (CTXC_E_IO, naming the path)
 * without waiting on it.
 */
#ifndef CTXC_PORT_POSIX_H
#define CTXC_PORT_POSIX_H

#include <pthread.h>

#include "ctxc/port.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Longest root directory path (bytes). */
#define CTXC_POSIX_ROOT_MAX 1024u

typedef struct {
    char root[CTXC_POSIX_ROOT_MAX];
    size_t root_len;
} ctxc_posix_fs_t;

/* Sets the root: `root` when not NULL, else $CTXC_HOME when set and not
 * empty, else $HOME/.config/ctxc. Nothing is created yet.
 * Errors: CTXC_E_INVALID_ARG (no root can be found: neither CTXC_HOME nor
 * HOME is set; or a relative or too long root). */
ctxc_status_t ctxc_posix_fs_init(ctxc_posix_fs_t *pfs, const char *root,
                                 ctxc_error_t *err);

/* The filesystem over pfs (which must outlive it). */
ctxc_fs_t ctxc_posix_fs(ctxc_posix_fs_t *pfs);

typedef struct {
    ctxc_port_t port; /* what the library is given */
    ctxc_posix_fs_t fs;
    pthread_mutex_t mutex;
} ctxc_posix_port_t;

/* The entropy hook of the POSIX port: getrandom() (flags 0), retried on
 * EINTR and short reads. ctx is unused. Errors: CTXC_E_IO naming errno. */
ctxc_status_t ctxc_posix_entropy(void *ctx, uint8_t *buf, size_t len,
                                 ctxc_error_t *err);

/* The key hook of the POSIX port: the value of environment variable
 * `name` (getenv). ctx is unused. Errors: CTXC_E_NOT_FOUND naming the
 * variable when it is unset or empty, CTXC_E_TOO_LARGE. */
ctxc_status_t ctxc_posix_key(void *ctx, const char *name, char *buf, size_t cap,
                             size_t *len, ctxc_error_t *err);

/* The delay hook of the POSIX port: nanosleep(), resumed after EINTR. */
void ctxc_posix_delay_ms(void *ctx, uint32_t ms);

/* Fills p->port: the filesystem (root as for ctxc_posix_fs_init), the
 * clock, the stderr log with lines up to `log_level`, the mutex, the
 * entropy hook, the key hook (getenv) and the delay hook (nanosleep). The
 * transport is separate: ctxc_posix_transport_init() (ctxc_transport_posix.h),
 * then p->port.transport = ctxc_posix_transport(&t). Errors: those of
 * ctxc_posix_fs_init, CTXC_E_IO (mutex). */
ctxc_status_t ctxc_posix_port_init(ctxc_posix_port_t *p, const char *root,
                                   ctxc_log_level_t log_level,
                                   ctxc_error_t *err);

/* Releases the mutex of a port made by ctxc_posix_port_init. */
void ctxc_posix_port_deinit(ctxc_posix_port_t *p);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_PORT_POSIX_H */
