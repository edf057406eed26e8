/*
 * ctxc port template: every hook of include/ctxc/port.h, not yet written.
 * Replace each body; keep the return conventions. Delete the hooks your
 * device does not need and leave them NULL in ctxc_template_port_init()
 * (a read-only filesystem leaves every write hook NULL; no clock, log,
 * mutex or transport: leave them NULL).
 */
#include "ctxc_port_template.h"

#define TODO(err, what)                                                        \
    ctxc_error_set((err), CTXC_E_UNAVAILABLE, "port hook %s is not written",   \
                   (what))

/* ---- filesystem
 * -------------------------------------------------------------- Paths arrive
 * checked (ctxc_fs_path_check): relative, '/'-separated, no
 * "." or "..". Join them to the root your port owns (a littlefs mount, a
 * FatFS volume, a folder on an SD card). */

/* Read the whole file into buf[0..cap), set *len.
 * - no such file: CTXC_E_NOT_FOUND (exactly that: the prompt resolver
 *   moves on to the next level only on this code);
 * - larger than cap: CTXC_E_NO_SPACE with err->needed = size - cap;
 * - anything else (a directory, I/O error): CTXC_E_IO naming the path. */
static ctxc_status_t tpl_read(void *ctx, const char *path, char *buf,
                              size_t cap, size_t *len, ctxc_error_t *err) {
    (void)ctx, (void)path, (void)buf, (void)cap, (void)len;
    return TODO(err, "fs.read");
}

/* Say what is at path: CTXC_FS_NONE / CTXC_FS_FILE / CTXC_FS_DIR.
 * A missing path is CTXC_OK with CTXC_FS_NONE; only real I/O errors fail. */
static ctxc_status_t tpl_stat(void *ctx, const char *path, ctxc_fs_kind_t *kind,
                              ctxc_error_t *err) {
    (void)ctx, (void)path;
    *kind = CTXC_FS_NONE;
    return TODO(err, "fs.stat");
}

/* Call fn(user, name, kind) for each entry of directory dir ("" = root),
 * skipping "." and ".."; stop when fn returns false. No such directory:
 * CTXC_E_NOT_FOUND. */
static ctxc_status_t tpl_list(void *ctx, const char *dir, ctxc_fs_entry_fn fn,
                              void *user, ctxc_error_t *err) {
    (void)ctx, (void)dir, (void)fn, (void)user;
    return TODO(err, "fs.list");
}

/* Create one directory level (the parent exists). Already a directory:
 * CTXC_OK. A file in the way: CTXC_E_EXISTS. */
static ctxc_status_t tpl_mkdir(void *ctx, const char *dir, ctxc_error_t *err) {
    (void)ctx, (void)dir;
    return TODO(err, "fs.mkdir");
}

/* Create a NEW empty file for writing and hand back a handle (any non-NULL
 * pointer of yours). If anything exists at path: CTXC_E_EXISTS - the core
 * then tries the next temporary name, which keeps writers apart. */
static ctxc_status_t tpl_create(void *ctx, const char *path,
                                ctxc_fs_file_t *file, ctxc_error_t *err) {
    (void)ctx, (void)path;
    *file = 0;
    return TODO(err, "fs.create");
}

/* Write all len bytes; a short write is CTXC_E_IO. */
static ctxc_status_t tpl_write(void *ctx, ctxc_fs_file_t file, const void *data,
                               size_t len, ctxc_error_t *err) {
    (void)ctx, (void)file, (void)data, (void)len;
    return TODO(err, "fs.write");
}

/* Return only once the bytes are on storage (fsync, lfs_file_sync, f_sync).
 * The atomic write depends on it. */
static ctxc_status_t tpl_sync(void *ctx, ctxc_fs_file_t file,
                              ctxc_error_t *err) {
    (void)ctx, (void)file;
    return TODO(err, "fs.sync");
}

/* Release the handle. Called once per created file, also after errors. */
static ctxc_status_t tpl_close(void *ctx, ctxc_fs_file_t file,
                               ctxc_error_t *err) {
    (void)ctx, (void)file;
    return TODO(err, "fs.close");
}

/* Rename from -> to, REPLACING to in one step: afterwards, and after a
 * power cut at any moment, `to` holds the old content or the new, never
 * nothing. littlefs lfs_rename() and POSIX rename() do this; FatFS f_rename
 * does not replace - there, remove `to` first and document that a power
 * cut between the two steps loses the file. */
static ctxc_status_t tpl_rename(void *ctx, const char *from, const char *to,
                                ctxc_error_t *err) {
    (void)ctx, (void)from, (void)to;
    return TODO(err, "fs.rename");
}

/* Remove a file. None there: CTXC_E_NOT_FOUND. */
static ctxc_status_t tpl_remove(void *ctx, const char *path,
                                ctxc_error_t *err) {
    (void)ctx, (void)path;
    return TODO(err, "fs.remove");
}

static const ctxc_fs_ops_t tpl_fs_ops = {
    tpl_read,  tpl_stat, tpl_list,  tpl_mkdir,  tpl_create,
    tpl_write, tpl_sync, tpl_close, tpl_rename, tpl_remove,
};

/* ---- clock, log, mutex
 * -------------------------------------------------------- */

/* Milliseconds from any fixed point, monotonic (xTaskGetTickCount() *
 * portTICK_PERIOD_MS, HAL_GetTick(), a free-running timer). */
static uint64_t tpl_clock(void *ctx) {
    (void)ctx;
    return 0;
}

/* One line of text, no newline, valid during the call: hand it to your
 * logger (UART, RTT, syslog). Nothing secret is ever passed in. */
static void tpl_log(void *ctx, ctxc_log_level_t level, const char *msg) {
    (void)ctx, (void)level, (void)msg;
}

/* Block until the mutex is held (xSemaphoreTake(m, portMAX_DELAY)). Only
 * needed when several tasks use one session. Not taken recursively. */
static void tpl_lock(void *ctx) { (void)ctx; }

/* Release it (xSemaphoreGive(m)). */
static void tpl_unlock(void *ctx) { (void)ctx; }

/* ---- transport (used by the LLM provider layer)
 * -------------------------------- */

/* Resolve host, connect a TCP socket to port (bounded by your connect
 * timeout), and with tls run the TLS handshake verifying the certificate
 * chain against your CA certificates and the host name
 * (mbedtls_ssl_set_hostname; mbedtls_ssl_conf_authmode REQUIRED). Never
 * skip verification. Seed mbedTLS's random generator from the entropy hook
 * below. port/posix/ctxc_transport_posix.c is a complete example.
 * Errors, naming host:port and the step: CTXC_E_NETWORK (resolve, connect,
 * reset), CTXC_E_TLS (setup, handshake, verification: say why, e.g. with
 * mbedtls_x509_crt_verify_info), CTXC_E_TIMEOUT. */
static ctxc_status_t tpl_connect(void *ctx, const char *host, uint16_t port,
                                 bool tls, ctxc_error_t *err) {
    (void)ctx, (void)host, (void)port, (void)tls;
    return TODO(err, "transport.connect");
}

/* Send up to len bytes: > 0 bytes sent, 0 = try again (would block; wait
 * at most a short slice, e.g. 100 ms, before answering 0), < 0 = error
 * (CTXC_TRANSPORT_ERROR). MBEDTLS_ERR_SSL_WANT_READ/WANT_WRITE are 0. */
static int32_t tpl_send(void *ctx, const uint8_t *data, size_t len) {
    (void)ctx, (void)data, (void)len;
    return CTXC_TRANSPORT_ERROR;
}

/* Receive up to cap bytes: > 0 bytes, 0 = try again (nothing within a
 * short slice; the caller counts its read timeout across 0 answers),
 * CTXC_TRANSPORT_EOF when the peer closed cleanly, CTXC_TRANSPORT_ERROR
 * otherwise (reset, TLS alert). */
static int32_t tpl_recv(void *ctx, uint8_t *buf, size_t cap) {
    (void)ctx, (void)buf, (void)cap;
    return CTXC_TRANSPORT_ERROR;
}

/* Close the TLS session and the socket; safe to call after errors. */
static void tpl_close_conn(void *ctx) { (void)ctx; }

static const ctxc_transport_ops_t tpl_transport_ops = {
    tpl_connect,
    tpl_send,
    tpl_recv,
    tpl_close_conn,
    NULL, /* connect_poll: connect completes in one call */
    NULL, /* wait: send/recv wait their own short slice */
    NULL, /* last_error: no message of its own (or: the text and code of
           * the TLS library's last failure, as port/posix does) */
};

/* ---- entropy (TLS) --------------------------------------------------------
 */

/* Fill buf[0..len) from a real hardware entropy source: the MCU's TRNG
 * (HAL_RNG_GenerateRandomNumber, the RNG peripheral's data register after
 * its ready flag), never a counter, the tick or a fixed seed - a
 * predictable source makes TLS worthless. A device without a TRNG needs an
 * external one (a secure element) before it can use TLS. On a failure
 * answer CTXC_E_IO with the reason; TLS setup then stops with CTXC_E_TLS. */
static ctxc_status_t tpl_entropy(void *ctx, uint8_t *buf, size_t len,
                                 ctxc_error_t *err) {
    (void)ctx, (void)buf, (void)len;
    return TODO(err, "entropy");
}

/* ---- API keys, delays (provider layer) ----------------------------------
 */

/* Copy the secret named `name` (the auth-key-name setting) into
 * buf[0..cap), NUL-terminated, *len its length: from a key slot of a secure
 * element, a protected flash page, or a file of the device's key store.
 * Answer CTXC_E_NOT_FOUND naming `name` (never a value) when there is none,
 * CTXC_E_TOO_LARGE when it does not fit. Never log the key. */
static ctxc_status_t tpl_key(void *ctx, const char *name, char *buf, size_t cap,
                             size_t *len, ctxc_error_t *err) {
    (void)ctx, (void)buf, (void)cap, (void)len;
    return ctxc_error_set(err, CTXC_E_NOT_FOUND, "no API key named %s", name);
}

/* Wait ms milliseconds (vTaskDelay(pdMS_TO_TICKS(ms)), k_msleep(ms), ...):
 * the provider layer spaces out its retries with it and honours a server's
 * Retry-After. Leave port->delay_ms NULL to retry at once. */
static void tpl_delay_ms(void *ctx, uint32_t ms) { (void)ctx, (void)ms; }

/* Whether a blocking model call should stop now (a "stop" button, a
 * cancel from the UI task; read a flag set elsewhere, never block here).
 * Asked between two steps of the call; true ends it with
 * CTXC_E_CANCELLED and nothing changed. It may update a display from
 * ctxc_provider_progress(). Leave port->stop NULL if nothing stops calls. */
static bool tpl_stop(void *ctx) {
    (void)ctx;
    return false;
}

void ctxc_template_port_init(ctxc_port_t *port, ctxc_template_port_t *t) {
    port->fs.ops = &tpl_fs_ops;
    port->fs.ctx = t;
    port->clock = tpl_clock;
    port->clock_ctx = t;
    port->log = tpl_log;
    port->log_ctx = t;
    port->log_level = CTXC_LOG_WARN;
    port->mutex.lock = tpl_lock;
    port->mutex.unlock = tpl_unlock;
    port->mutex.ctx = t;
    port->transport.ops = &tpl_transport_ops;
    port->transport.ctx = t;
    port->entropy = tpl_entropy;
    port->entropy_ctx = t;
    port->key = tpl_key;
    port->key_ctx = t;
    port->delay_ms = tpl_delay_ms;
    port->delay_ctx = t;
    port->stop = tpl_stop;
    port->stop_ctx = t;
}
