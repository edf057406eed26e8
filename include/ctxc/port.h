/** @file
 * ctxc — the port contract: what ctxc needs from the platform.
 *
 * The core does no I/O of its own. Everything it needs from the platform
 * comes through the hooks declared here, filled in by a port:
 *
 *   port/posix/     directory filesystem under $CTXC_HOME, POSIX clock,
 *                   stderr log, pthread mutex, getrandom() entropy, API
 *                   keys from getenv(), nanosleep() delays, and the
 *                   transport (BSD sockets + mbedTLS) (hosts)
 *   port/romfs/     read-only filesystem over the built-in prompt table
 *                   (devices without a filesystem)
 *   port/template/  every hook stubbed, with what a port must do: start a
 *                   new port by copying it
 *
 * Conventions for every hook that returns ctxc_status_t: CTXC_OK on success,
 * otherwise a CTXC_E_* code, with `err` filled through ctxc_error_set() when
 * it is not NULL (the message names the path and the reason). Hooks never
 * receive secret material, except the transport's payload bytes.
 */
#ifndef CTXC_PORT_H
#define CTXC_PORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- filesystem -------------------------------------------------------------
 *
 * Every path is relative to the one root the port owns: components separated
 * by '/', none empty, none "." or "..", no leading '/', at most
 * CTXC_CFG_PATH_MAX - 1 bytes. The core checks each path with
 * ctxc_fs_path_check() before it reaches a hook, so a port may rely on it
 * (and may check again). "" names the root itself (list only).
 *
 * The core builds an atomic write out of the primitives below
 * (ctxc_fs_write_atomic): create a new temporary file beside the target,
 * write, sync, close, rename over the target. A port only has to make each
 * primitive honest: sync() returns after the bytes are on storage, and
 * rename() replaces the target in one step (POSIX rename(), littlefs
 * lfs_rename()). A read-only port leaves every write hook NULL. */

/** What is at a path (stat(), list()). */
typedef enum {
    CTXC_FS_NONE = 0, /**< nothing at that path */
    CTXC_FS_FILE,
    CTXC_FS_DIR
} ctxc_fs_kind_t;

/** Called once per directory entry by list(); `name` is one component (not
 * "." or ".."), NUL-terminated, valid only during the call. Return false to
 * stop the listing early (list() then still returns CTXC_OK). */
typedef bool (*ctxc_fs_entry_fn)(void *user, const char *name,
                                 ctxc_fs_kind_t kind);

/** An open file of a port (what create() hands back). */
typedef void *ctxc_fs_file_t;

/** The filesystem hooks of a port: nine primitives over root-relative paths that the core has already checked (see above). */
typedef struct {
    /** Reads the whole file into buf[0..cap). *len = its size.
     * CTXC_E_NOT_FOUND: no such file (the core then tries elsewhere, so this
     *                   code must mean exactly that);
     * CTXC_E_NO_SPACE:  larger than cap, err->needed = size - cap;
     * CTXC_E_IO:        anything else (a directory, no permission, a read
     *                   error), message naming the path and the reason. */
    ctxc_status_t (*read)(void *ctx, const char *path, char *buf, size_t cap,
                          size_t *len, ctxc_error_t *err);
    /** What is at path. Errors: CTXC_E_IO only (a missing path is OK with
     * CTXC_FS_NONE). */
    ctxc_status_t (*stat)(void *ctx, const char *path, ctxc_fs_kind_t *kind,
                          ctxc_error_t *err);
    /** Calls fn for each entry of directory `dir`, in no particular order.
     * CTXC_E_NOT_FOUND when there is no such directory, CTXC_E_IO. */
    ctxc_status_t (*list)(void *ctx, const char *dir, ctxc_fs_entry_fn fn,
                          void *user, ctxc_error_t *err);

    /* Write side; NULL in a read-only port (the core then answers
     * CTXC_E_READ_ONLY). */

    /** Creates directory `dir` (one level; its parent exists). A directory
     * already there is CTXC_OK; a file there is CTXC_E_EXISTS. */
    ctxc_status_t (*mkdir)(void *ctx, const char *dir, ctxc_error_t *err);
    /** Creates a new, empty file for writing. It must not exist yet:
     * CTXC_E_EXISTS if anything is at path (the core then picks another
     * temporary name, which is what keeps concurrent writers apart). */
    ctxc_status_t (*create)(void *ctx, const char *path, ctxc_fs_file_t *file,
                            ctxc_error_t *err);
    /** Writes all len bytes (a short write is CTXC_E_IO). */
    ctxc_status_t (*write)(void *ctx, ctxc_fs_file_t file, const void *data,
                           size_t len, ctxc_error_t *err);
    /** Returns once everything written is on storage (fsync). */
    ctxc_status_t (*sync)(void *ctx, ctxc_fs_file_t file, ctxc_error_t *err);
    /** Releases the file; called exactly once per successful create(), also
     * after a failed write or sync. */
    ctxc_status_t (*close)(void *ctx, ctxc_fs_file_t file, ctxc_error_t *err);
    /** Renames file `from` to `to`, replacing `to` in one step: an observer
     * (or a power cut) sees the old `to` or the new one, never neither. */
    ctxc_status_t (*rename)(void *ctx, const char *from, const char *to,
                            ctxc_error_t *err);
    /** Removes a file. CTXC_E_NOT_FOUND when there is none. */
    ctxc_status_t (*remove)(void *ctx, const char *path, ctxc_error_t *err);
} ctxc_fs_ops_t;

/** A filesystem: its hooks and the port's context for them. */
typedef struct {
    const ctxc_fs_ops_t *ops; /**< the hooks (NULL: no filesystem) */
    void *ctx; /**< the port's context, handed to every hook */
} ctxc_fs_t;

/** Checks a root-relative path (see above). Errors: CTXC_E_INVALID_ARG
 * naming the problem. */
ctxc_status_t ctxc_fs_path_check(const char *path, ctxc_error_t *err);

/** ctxc_fs_read / ctxc_fs_stat / ctxc_fs_list: the hooks, after
 * ctxc_fs_path_check(). A NULL fs reads as empty: CTXC_E_NOT_FOUND /
 * CTXC_FS_NONE. */
ctxc_status_t ctxc_fs_read(const ctxc_fs_t *fs, const char *path, char *buf,
                           size_t cap, size_t *len, ctxc_error_t *err);
/** The stat hook after ctxc_fs_path_check() (see ctxc_fs_read()). */
ctxc_status_t ctxc_fs_stat(const ctxc_fs_t *fs, const char *path,
                           ctxc_fs_kind_t *kind, ctxc_error_t *err);
/** The list hook after ctxc_fs_path_check() (see ctxc_fs_read()). */
ctxc_status_t ctxc_fs_list(const ctxc_fs_t *fs, const char *dir,
                           ctxc_fs_entry_fn fn, void *user, ctxc_error_t *err);

/** Replaces (or creates) file `path` with data[0..len), atomically: after a
 * failure or a crash at any step the file holds its old content or the new
 * one, never a mix. Missing parent directories are created first. The
 * temporary file is `"<path>.tmp<N>"` (N = 0..CTXC_FS_TMP_TRIES-1, the first
 * free one); it is removed again when a step fails. Names containing ".tmp"
 * followed by digits at the end are therefore the core's; listings made by
 * the core skip them (ctxc_fs_is_temp_name()).
 * Errors: CTXC_E_INVALID_ARG (path), CTXC_E_READ_ONLY, CTXC_E_EXISTS (a
 * directory is at path, or every temporary name is taken), or the hook's
 * own error with the step named in the message. */
ctxc_status_t ctxc_fs_write_atomic(const ctxc_fs_t *fs, const char *path,
                                   const void *data, size_t len,
                                   ctxc_error_t *err);

/** Unique temporary names ctxc_fs_write_atomic() tries before it gives up. */
#define CTXC_FS_TMP_TRIES 16u

/** Removes a file. Errors: CTXC_E_INVALID_ARG, CTXC_E_READ_ONLY,
 * CTXC_E_NOT_FOUND, the hook's own error. */
ctxc_status_t ctxc_fs_remove(const ctxc_fs_t *fs, const char *path,
                             ctxc_error_t *err);

/** Creates dir and any missing parents. Errors: as ctxc_fs_write_atomic. */
ctxc_status_t ctxc_fs_mkdirs(const ctxc_fs_t *fs, const char *dir,
                             ctxc_error_t *err);

/** True for the temporary names of ctxc_fs_write_atomic ("x.json.tmp3"). */
bool ctxc_fs_is_temp_name(const char *name);

/* ---- clock, log, mutex -----------------------------------------------------
 */

/** Milliseconds from any fixed point (monotonic; wraps after 2^64). */
typedef uint64_t (*ctxc_clock_fn)(void *ctx);

/** Severity of a log line. */
typedef enum {
    CTXC_LOG_ERROR = 0,
    CTXC_LOG_WARN,
    CTXC_LOG_INFO,
    CTXC_LOG_DEBUG
} ctxc_log_level_t;

/** One line of text (no trailing newline), valid during the call. The core
 * never passes secret material (keys, auth headers, payloads) to it. */
typedef void (*ctxc_log_fn)(void *ctx, ctxc_log_level_t level, const char *msg);

/** Optional mutex around a shared session (RTOS tasks, threads). lock()
 * blocks until the mutex is held; it is not taken recursively: do not call
 * session functions from inside callbacks the session runs. */
typedef struct {
    void (*lock)(void *ctx); /**< takes the mutex (blocks) */
    void (*unlock)(void *ctx); /**< releases it */
    void *ctx; /**< the port's context for both */
} ctxc_mutex_t;

/* ---- transport
 * ---------------------------------------------------------------
 *
 * A byte stream to an HTTP(S) server over an opaque context. Implemented by
 * the ports of the LLM provider layer (POSIX sockets or lwIP, with mbedTLS).
 * With tls = true the port verifies the server certificate chain and the
 * host name; there is no insecure mode.
 *
 * Every call is one bounded step. Blocking callers (ctxc_llm_call, the
 * blocking session calls) loop over the same steps as the resumable job
 * (ctxc_session_poll) and sleep in wait() between them; the job returns to
 * the application instead. One code path, two ways to drive it.
 *
 * Return convention of send/recv: > 0 bytes moved, 0 = nothing moved yet,
 * try again (would block; a port with a wait op never waits inside
 * send/recv, a port without one may wait up to its own short slice:
 * either way the caller counts its own timeout across 0 answers with the
 * port clock), < 0 = error (the connection is unusable; close it). recv()
 * answering < 0 after the peer closed cleanly is CTXC_TRANSPORT_EOF; a TLS
 * error after the handshake (a record too large, a bad MAC, an alert from
 * the peer: what the TLS library's read or write answered) is
 * CTXC_TRANSPORT_TLS_ERROR, which the HTTP client reports as CTXC_E_TLS; a
 * reset, a close without TLS close_notify (a cut answer) or any other
 * failure is CTXC_TRANSPORT_ERROR (CTXC_E_NETWORK). Either way the port's
 * last_error() says what happened, with the TLS library's code. */
/** recv(): the peer closed the connection cleanly. */
#define CTXC_TRANSPORT_EOF (-1)
/** send()/recv(): the connection failed (reset, a close without TLS
 * close_notify, any failure below TLS): CTXC_E_NETWORK for the caller. */
#define CTXC_TRANSPORT_ERROR (-2)
/** send()/recv(): a TLS error after the handshake (a record too large, a
 * bad MAC, an alert): CTXC_E_TLS for the caller. A port that cannot tell
 * answers CTXC_TRANSPORT_ERROR instead. */
#define CTXC_TRANSPORT_TLS_ERROR (-3)

/** The transport hooks of a port (see above). */
typedef struct {
    /** Starts connecting ctx to host:port (TCP, then with tls the TLS
     * handshake with SNI = host, the chain verified against the port's CA
     * certificates and the certificate matched to host). Answers CTXC_OK
     * when connected, CTXC_E_IN_PROGRESS when the connection is under way
     * and connect_poll() must be called to advance it (only ports with a
     * connect_poll answer it), or an error, each with a message naming
     * host:port and the step:
     *   CTXC_E_NETWORK  resolving, connecting (refused, unreachable), reset
     *   CTXC_E_TLS      TLS setup (CA certificates, entropy), the handshake,
     *                   or verification: the message says why (expired, not
     *                   trusted, name mismatch)
     *   CTXC_E_TIMEOUT  connect (or the handshake) took longer than the
     *                   port's connect timeout */
    ctxc_status_t (*connect)(void *ctx, const char *host, uint16_t port,
                             bool tls, ctxc_error_t *err);
    int32_t (*send)(void *ctx, const uint8_t *data, size_t len); /**< sends up to len bytes: > 0 sent, 0 try again, < 0 CTXC_TRANSPORT_ERROR or CTXC_TRANSPORT_TLS_ERROR */
    int32_t (*recv)(void *ctx, uint8_t *buf, size_t cap); /**< receives up to cap bytes: > 0 received, 0 try again, < 0 CTXC_TRANSPORT_EOF, CTXC_TRANSPORT_ERROR or CTXC_TRANSPORT_TLS_ERROR */
    /** Ends the connection (TLS close_notify where possible) and releases
     * the socket; safe after errors, on a closed context and in the middle
     * of a connect that answered CTXC_E_IN_PROGRESS. */
    void (*close)(void *ctx);
    /** Advances a connect that answered CTXC_E_IN_PROGRESS by one bounded
     * step (the TCP connect's completion, one handshake round, a DNS answer)
     * without waiting for the network: CTXC_OK connected,
     * CTXC_E_IN_PROGRESS not yet, or an error as connect() lists (the
     * connect timeout is the port's, counted from connect()). NULL: the
     * port's connect() completes or fails in one call. */
    ctxc_status_t (*connect_poll)(void *ctx, ctxc_error_t *err);
    /** Waits at most ms for the connection to be able to progress (readable,
     * writable, a connect or handshake step due), driving the network
     * meanwhile where the port must (lwIP without an OS). Blocking callers
     * call it after a 0 answer or CTXC_E_IN_PROGRESS; a resumable job never
     * calls it. NULL: the port waits inside send/recv/connect_poll (a
     * short slice) instead. */
    void (*wait)(void *ctx, uint32_t ms);
    /** The port's message about the last failed send, recv or
     * connect_poll of ctx (NUL-terminated, owned by the port, valid until
     * the next call on ctx), e.g. "recv: TLS error after the handshake:
     * SSL - Verification of the message MAC failed (-0x7180)"; NULL or ""
     * when it has none. The HTTP client quotes it in the error of a failed
     * send or recv. NULL: the port keeps no message (the error then names
     * only the host and the step). */
    const char *(*last_error)(void *ctx);
} ctxc_transport_ops_t;

/** A transport: its hooks and the port's context for them. */
typedef struct {
    const ctxc_transport_ops_t *ops; /**< the hooks (NULL: no network) */
    void *ctx; /**< the port's context (one connection) */
} ctxc_transport_t;

/* ---- entropy --------------------------------------------------------------
 *
 * Fills buf[0..len) with unpredictable bytes from a real entropy source
 * (a TRNG peripheral, getrandom()); TLS seeds its random generator from it
 * (nonces, key exchange). Never a counter, a clock or a fixed seed: a
 * predictable source makes every TLS session readable. A source that cannot
 * deliver answers an error (CTXC_E_IO or CTXC_E_UNAVAILABLE with a message);
 * TLS setup then fails with CTXC_E_TLS and that message, nothing is sent. */
/** Entropy hook (see above). */
typedef ctxc_status_t (*ctxc_entropy_fn)(void *ctx, uint8_t *buf, size_t len,
                                         ctxc_error_t *err);

/* ---- API keys ---------------------------------------------------------------
 *
 * Looks up the secret named `name` (the auth-key-name setting: an
 * environment variable on POSIX hosts, a key slot or file on a device) and
 * writes it into buf[0..cap), NUL-terminated, *len its length (without the
 * NUL). Errors: CTXC_E_NOT_FOUND when there is no key under that name (the
 * message names `name`, never a value), CTXC_E_TOO_LARGE when it does not
 * fit cap - 1 bytes, CTXC_E_IO. The key goes only into the caller's buffer
 * (the provider layer wipes it after each request): a hook never logs it or
 * puts it in err. */
/** API key hook (see above). */
typedef ctxc_status_t (*ctxc_key_fn)(void *ctx, const char *name, char *buf,
                                     size_t cap, size_t *len,
                                     ctxc_error_t *err);

/* ---- delays -----------------------------------------------------------------
 *
 * Waits ms milliseconds (the provider layer between retries, honouring a
 * server's Retry-After). Without the hook retries are sent at once. */
/** Delay hook (see above). */
typedef void (*ctxc_delay_fn)(void *ctx, uint32_t ms);

/* ---- stopping a blocking call -----------------------------------------------
 *
 * Asked by the library's blocking calls between two of their steps: the
 * provider's complete(), ctxc_http_request(), ctxc_session_compress() and
 * ctxc_session_before_send() while a summary call runs. It is asked after
 * each wait in the transport (at most CTXC_HTTP_WAIT_SLICE_MS) and, with a
 * clock, every CTXC_STOP_SLICE_MS of a retry pause (the pause is then cut
 * into slices of the delay hook). True stops the call: its connection is
 * closed, the function returns CTXC_E_CANCELLED and changes nothing (a
 * compression leaves the history as it was). A firmware's "stop" button, a
 * console's Ctrl-C. It may also show progress (ctxc_provider_progress()):
 * it runs on the caller's thread, with no library lock held. The
 * resumable forms (ctxc_session_poll(), ctxc_llm_t.step) never ask it:
 * their caller decides between two polls. */
/** Stop hook (see above): true stops the blocking call in progress. */
typedef bool (*ctxc_stop_fn)(void *ctx);

/** Longest slice of a retry pause between two questions to the stop hook
 * (milliseconds). */
#define CTXC_STOP_SLICE_MS 100u

/* ---- the port: everything in one place -------------------------------------
 */

/** Everything the core needs from the platform: filesystem, clock, log, mutex, transport, entropy, API keys, delays and the stop hook. Any hook may be NULL (see each field). */
typedef struct {
    ctxc_fs_t fs;        /**< ops NULL: no filesystem */
    ctxc_clock_fn clock; /**< NULL: time reads as 0 */
    void *clock_ctx; /**< pointer handed to `clock` */
    ctxc_log_fn log; /**< NULL: no logging */
    void *log_ctx; /**< pointer handed to `log` */
    ctxc_log_level_t log_level; /**< lines above this level are not built */
    ctxc_mutex_t mutex;         /**< lock NULL: no locking */
    ctxc_transport_t transport; /**< ops NULL: no network */
    ctxc_entropy_fn entropy;    /**< NULL: no TLS (nothing to seed it) */
    void *entropy_ctx; /**< pointer handed to `entropy` */
    ctxc_key_fn key; /**< NULL: no API keys (a provider that needs one fails
                        with CTXC_E_NOT_FOUND) */
    void *key_ctx; /**< pointer handed to `key` */
    ctxc_delay_fn delay_ms; /**< NULL: retries are not spaced out */
    void *delay_ctx; /**< pointer handed to `delay_ms` */
    ctxc_stop_fn stop; /**< NULL: blocking calls run to their end */
    void *stop_ctx; /**< pointer handed to `stop` */
} ctxc_port_t;

/** Whether port->stop asks the blocking call in progress to stop (false
 * without a hook; port may be NULL). */
bool ctxc_port_stop_requested(const ctxc_port_t *port);

/** Milliseconds from port->clock, 0 without one (port may be NULL). */
uint64_t ctxc_port_now_ms(const ctxc_port_t *port);

/** Logs through port->log when level <= port->log_level. The text is built
 * with the formatter of ctxc_error_set() into a CTXC_CFG_LOG_LINE_LEN
 * buffer on the stack (longer lines are cut). port may be NULL. */
void ctxc_port_log(const ctxc_port_t *port, ctxc_log_level_t level,
                   const char *fmt, ...);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_PORT_H */
