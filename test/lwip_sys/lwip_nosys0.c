/*
 * lwip_nosys0 (ctest lwip_nosys0, lwip_nosys0_asan): port/lwip's NO_SYS=0
 * path, the way an RTOS runs it, on the host.
 *
 * The environment:
 *   - lwIP 2.1.3 (Debian's source, port/lwip/fetch_sources.sh) built with
 *     NO_SYS=0 and LWIP_TCPIP_CORE_LOCKING=1 (test/lwip_sys/lwipopts.h);
 *     its OS layer is the POSIX sys_arch Debian ships in lwip/port/
 *     (pthreads: the tcpip thread, mailboxes, the core lock, and
 *     LWIP_ASSERT_CORE_LOCKED() checking that the caller holds the lock);
 *   - the only netif is lwIP's loopback (127.0.0.1); "fixture.ctxc.test"
 *     is in lwIP's local host list;
 *   - a TLS server inside the same stack (altcp_tls server over lwIP's raw
 *     API, so its callbacks run in the tcpip thread) answering OpenAI-style
 *     chat completions with a canned <state_snapshot> summary: JSON, or
 *     SSE (about 60 KB, several TLS records) when the request asks for a
 *     stream. Three listeners: :443 the fixture's certificate for
 *     fixture.ctxc.test, :444 a certificate for another name, :445 resets
 *     the connection once the request has arrived. Certificates and CA:
 *     test/fixtures/make_certs.sh (ctest fixture ctxc_certs,
 *     $CTXC_FIXTURE_DIR);
 *   - mbedTLS 2.28 (the fetched source, test/lwip_sys/
 *     lwip_sys_mbedtls_config.h) for both ends, every allocation from the
 *     transport's pool;
 *   - port/lwip/ctxc_transport_lwip.c as is, its poll hook a 1 ms sleep
 *     (the RTOS's vTaskDelay(1)).
 *
 * The agent thread (a pthread, never the tcpip thread) then runs:
 *   refused    a TLS connect to a port nothing listens on: CTXC_E_NETWORK
 *              (this first TLS connect also sets up the transport's pool,
 *              which the server's TLS configurations then allocate from)
 *   blocking   ctxc_session_before_send with middle-out (not streamed):
 *              compressed, the summary in the history, the invariant
 *   job        ctxc_session_compress_start + ctxc_session_poll (streamed),
 *              a turn appended every 25 polls, the pool's usage and the TLS
 *              info read between polls (what a device prints): the summary
 *              in the history, the turns after it in order, the invariant;
 *              no poll waits (the poll hook is called only inside wait())
 *   wronghost  before_send against :444: CTXC_E_TLS naming the mismatch,
 *              the history byte for byte as before
 *   reset      a job against :445: CTXC_E_NETWORK (reset), the history as
 *              before
 *   nodelay    a TLS connect to :443 and a plain TCP connect to :8080 (a
 *              listener that takes and drops what it gets): each up, its
 *              TCP connection with Nagle's algorithm off (lwIP's
 *              altcp_nagle_disabled on the port's pcb: with Nagle on, a
 *              request's last short segment waits for the server's
 *              delayed ACK, about 200 ms a call)
 * and every transport call is checked to come from the agent thread, every
 * server callback to run in the tcpip thread. Output: one line per case,
 * the threads' line, then "lwip_nosys0: N checks, M failed: ok|FAILED";
 * exit 0 only when all held. Without the certificates: exit 77 (skip).
 * A watchdog (alarm) ends a hung run after 120 s.
 */
#define _GNU_SOURCE

#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc_transport_lwip.h"

#include "lwip/altcp.h"
#include "lwip/altcp_tcp.h"
#include "lwip/altcp_tls.h"
#include "lwip/init.h"
#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/sys.h"
#include "lwip/tcpip.h"

#define HOST "fixture.ctxc.test"
#define PORT_GOOD 443
#define PORT_WRONGHOST 444
#define PORT_RESET 445
#define PORT_NOTHING 4430
#define PORT_PLAIN 8080
#define SUMMARY_MARK "lwip-nosys0 summary"

/* ---- checks ----------------------------------------------------------------
 */

static unsigned checks, failures;

static bool check(bool ok, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static bool check(bool ok, const char *fmt, ...) {
    checks++;
    if (!ok) {
        failures++;
        va_list ap;
        va_start(ap, fmt);
        fputs("lwip_nosys0: FAIL: ", stdout);
        vprintf(fmt, ap);
        fputc('\n', stdout);
        va_end(ap);
    }
    return ok;
}

static uint64_t now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

static void sleep_ms(long ms) {
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* ---- threads ---------------------------------------------------------------
 */

static pthread_t tcpip_tid; /* set in tcpip_init's done callback */
static pthread_t agent_tid; /* the application thread */
static unsigned srv_calls, srv_wrong_thread; /* under the core lock */

static void tcpip_ready(void *arg) {
    tcpip_tid = pthread_self();
    sys_sem_signal((sys_sem_t *)arg);
}

static void on_tcpip_thread(void) {
    srv_calls++;
    if (!pthread_equal(pthread_self(), tcpip_tid)) {
        srv_wrong_thread++;
    }
}

/* ---- the TLS server in the stack -------------------------------------------
 * Everything below runs in the tcpip thread (lwIP callbacks) except
 * server_start, which the agent calls with the core lock held. */

enum { MODE_GOOD, MODE_WRONGHOST, MODE_RESET };

#define REQ_CAP (1u << 20)
#define SLOTS 4

typedef struct {
    struct altcp_pcb *pcb;
    int mode;
    char *req; /* REQ_CAP */
    size_t req_len;
    bool answered;
    const char *out;
    size_t out_len, out_off;
} conn_t;

static conn_t conns[SLOTS];
static struct altcp_tls_config *conf_good, *conf_wrong;
static struct altcp_pcb *listeners[3];
static int listener_mode[3] = {MODE_GOOD, MODE_WRONGHOST, MODE_RESET};
static unsigned srv_requests, srv_resets, srv_answers;
static char *answer_json, *answer_sse;
static size_t answer_json_len, answer_sse_len;

static void conn_release(conn_t *c) {
    c->pcb = NULL;
    c->req_len = 0;
    c->answered = false;
    c->out = NULL;
    c->out_len = c->out_off = 0;
}

static void conn_close(conn_t *c) {
    struct altcp_pcb *pcb = c->pcb;
    conn_release(c);
    if (pcb != NULL) {
        altcp_arg(pcb, NULL);
        altcp_recv(pcb, NULL);
        altcp_sent(pcb, NULL);
        altcp_err(pcb, NULL);
        if (altcp_close(pcb) != ERR_OK) {
            altcp_abort(pcb);
        }
    }
}

/* Writes what fits of the answer; closes (close_notify, FIN) after it. */
static void conn_push(conn_t *c) {
    while (c->pcb != NULL && c->out_off < c->out_len) {
        u16_t room = altcp_sndbuf(c->pcb);
        if (room == 0) {
            return; /* the sent callback comes back */
        }
        size_t n = c->out_len - c->out_off;
        if (n > room) {
            n = room;
        }
        if (n > 4096) {
            n = 4096;
        }
        err_t e = altcp_write(c->pcb, c->out + c->out_off, (u16_t)n,
                              TCP_WRITE_FLAG_COPY);
        if (e == ERR_MEM) {
            return;
        }
        if (e != ERR_OK) {
            conn_close(c);
            return;
        }
        c->out_off += n;
        (void)altcp_output(c->pcb);
    }
    if (c->pcb != NULL && c->out_off == c->out_len) {
        srv_answers++;
        conn_close(c);
    }
}

/* The request is complete: its headers and Content-Length bytes. */
static bool request_complete(const conn_t *c, bool *stream) {
    const char *end = memmem(c->req, c->req_len, "\r\n\r\n", 4);
    if (end == NULL) {
        return false;
    }
    size_t head = (size_t)(end - c->req) + 4;
    size_t body = 0;
    for (const char *p = c->req; p < end; p++) {
        if (strncasecmp(p, "\r\nContent-Length:", 17) == 0) {
            body = strtoul(p + 17, NULL, 10);
            break;
        }
    }
    if (c->req_len < head + body) {
        return false;
    }
    *stream = memmem(c->req + head, body, "\"stream\":true", 13) != NULL;
    return true;
}

static err_t srv_recv(void *arg, struct altcp_pcb *pcb, struct pbuf *p,
                      err_t err) {
    conn_t *c = arg;
    on_tcpip_thread();
    if (p == NULL) {
        conn_close(c);
        return ERR_OK;
    }
    if (err != ERR_OK || c == NULL) {
        pbuf_free(p);
        return ERR_OK;
    }
    size_t n = p->tot_len;
    if (c->req_len + n <= REQ_CAP) {
        pbuf_copy_partial(p, c->req + c->req_len, (u16_t)n, 0);
        c->req_len += n;
    }
    altcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    bool stream = false;
    if (!c->answered && request_complete(c, &stream)) {
        c->answered = true;
        srv_requests++;
        if (c->mode == MODE_RESET) {
            srv_resets++;
            conn_release(c);
            altcp_abort(pcb); /* RST */
            return ERR_ABRT;
        }
        c->out = stream ? answer_sse : answer_json;
        c->out_len = stream ? answer_sse_len : answer_json_len;
        c->out_off = 0;
        conn_push(c);
    }
    return ERR_OK;
}

static err_t srv_sent(void *arg, struct altcp_pcb *pcb, u16_t len) {
    (void)pcb;
    (void)len;
    on_tcpip_thread();
    if (arg != NULL) {
        conn_push(arg);
    }
    return ERR_OK;
}

static void srv_err(void *arg, err_t err) {
    (void)err;
    on_tcpip_thread();
    if (arg != NULL) {
        conn_release(arg); /* the pcb is gone */
    }
}

static err_t srv_accept(void *arg, struct altcp_pcb *pcb, err_t err) {
    on_tcpip_thread();
    if (err != ERR_OK || pcb == NULL) {
        return ERR_VAL;
    }
    conn_t *c = NULL;
    for (int i = 0; i < SLOTS; i++) {
        if (conns[i].pcb == NULL) {
            c = &conns[i];
            break;
        }
    }
    if (c == NULL) {
        altcp_abort(pcb);
        return ERR_ABRT;
    }
    conn_release(c);
    c->pcb = pcb;
    c->mode = *(const int *)arg;
    altcp_arg(pcb, c);
    altcp_recv(pcb, srv_recv);
    altcp_sent(pcb, srv_sent);
    altcp_err(pcb, srv_err);
    return ERR_OK;
}

static char *read_file(const char *dir, const char *name, size_t *len) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return NULL;
    }
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf == NULL || fread(buf, 1, (size_t)n, f) != (size_t)n) {
        fclose(f);
        free(buf);
        return NULL;
    }
    fclose(f);
    buf[n] = '\0';
    *len = (size_t)n + 1; /* PEM: the NUL counted */
    return buf;
}

static char *ca_pem, *good_pem, *good_key, *wrong_pem, *wrong_key;
static size_t ca_len, good_len, good_key_len, wrong_len, wrong_key_len;

/* The canned answers: a chat completion, and the same summary streamed in
 * many small events (about 60 KB: several 16 KiB TLS records). */
static void make_answers(void) {
    static const char summary[] =
        "<state_snapshot>\\n<overall_goal>" SUMMARY_MARK
        ": keep the agent's history in the arena</overall_goal>\\n"
        "<key_knowledge>lwIP NO_SYS=0, the tcpip thread, core locking"
        "</key_knowledge>\\n</state_snapshot>";
    char body[2048];
    int bn = snprintf(
        body, sizeof body,
        "{\"id\":\"chatcmpl-lwip\",\"object\":\"chat.completion\","
        "\"created\":1700000000,\"model\":\"lwip-test\",\"choices\":[{"
        "\"index\":0,\"message\":{\"role\":\"assistant\",\"content\":\"%s\"},"
        "\"finish_reason\":\"stop\"}],\"usage\":{\"prompt_tokens\":42,"
        "\"completion_tokens\":17,\"total_tokens\":59}}",
        summary);
    answer_json = malloc(4096);
    answer_json_len =
        (size_t)snprintf(answer_json, 4096,
                         "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                         "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                         bn, body);
    size_t cap = 128 * 1024, n = 0;
    char *sse = malloc(cap);
    static const char ev_head[] =
        "data: {\"id\":\"chatcmpl-lwip\",\"object\":\"chat.completion.chunk\","
        "\"created\":1700000000,\"model\":\"lwip-test\",\"choices\":[{"
        "\"index\":0,\"delta\":{\"content\":\"";
    static const char ev_tail[] = "\"},\"finish_reason\":null}]}\n\n";
    /* the summary in pieces of 8 characters (escapes kept whole), then a
     * long key_knowledge of filler pieces before its end */
    const char *s = summary;
    size_t slen = strlen(summary);
    size_t cut = (size_t)(strstr(summary, "</key_knowledge>") - summary);
    size_t i = 0;
    int filler = 0;
    while (i < slen) {
        char piece[64];
        size_t k = 0;
        if (i == cut && filler < 300) {
            k = (size_t)snprintf(piece, sizeof piece, " fact %03d;", filler++);
        } else {
            size_t lim = i < cut ? cut : slen;
            while (k < 8 && i < lim) {
                if (s[i] == '\\') {
                    piece[k++] = s[i++];
                }
                piece[k++] = s[i++];
            }
        }
        n += (size_t)snprintf(sse + n, cap - n, "%s%.*s%s", ev_head, (int)k,
                              piece, ev_tail);
    }
    n += (size_t)snprintf(
        sse + n, cap - n,
        "data: {\"id\":\"chatcmpl-lwip\",\"object\":\"chat.completion.chunk\","
        "\"created\":1700000000,\"model\":\"lwip-test\",\"choices\":[{"
        "\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}],\"usage\":{"
        "\"prompt_tokens\":42,\"completion_tokens\":17,\"total_tokens\":59}}"
        "\n\ndata: [DONE]\n\n");
    answer_sse = malloc(n + 256);
    answer_sse_len = (size_t)snprintf(
        answer_sse, n + 256,
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
        "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
        n, sse);
    free(sse);
}

/* The plain TCP listener (:8080): takes what arrives, drops it, closes
 * when the client does. */
static err_t plain_recv(void *arg, struct altcp_pcb *pcb, struct pbuf *p,
                        err_t err) {
    (void)arg;
    (void)err;
    on_tcpip_thread();
    if (p == NULL) {
        altcp_recv(pcb, NULL);
        if (altcp_close(pcb) != ERR_OK) {
            altcp_abort(pcb);
            return ERR_ABRT;
        }
        return ERR_OK;
    }
    altcp_recved(pcb, p->tot_len);
    pbuf_free(p);
    return ERR_OK;
}

static err_t plain_accept(void *arg, struct altcp_pcb *pcb, err_t err) {
    (void)arg;
    on_tcpip_thread();
    if (err != ERR_OK || pcb == NULL) {
        return ERR_VAL;
    }
    altcp_recv(pcb, plain_recv);
    return ERR_OK;
}

/* With the core lock held. */
static bool server_start(void) {
    for (int i = 0; i < SLOTS; i++) {
        conns[i].req = malloc(REQ_CAP);
    }
    conf_good = altcp_tls_create_config_server_privkey_cert(
        (const u8_t *)good_key, good_key_len, NULL, 0, (const u8_t *)good_pem,
        good_len);
    conf_wrong = altcp_tls_create_config_server_privkey_cert(
        (const u8_t *)wrong_key, wrong_key_len, NULL, 0,
        (const u8_t *)wrong_pem, wrong_len);
    if (conf_good == NULL || conf_wrong == NULL) {
        return false;
    }
    const u16_t ports[3] = {PORT_GOOD, PORT_WRONGHOST, PORT_RESET};
    for (int i = 0; i < 3; i++) {
        struct altcp_pcb *l = altcp_tls_new(
            listener_mode[i] == MODE_WRONGHOST ? conf_wrong : conf_good,
            IPADDR_TYPE_V4);
        if (l == NULL || altcp_bind(l, IP4_ADDR_ANY, ports[i]) != ERR_OK) {
            return false;
        }
        listeners[i] = altcp_listen(l);
        if (listeners[i] == NULL) {
            return false;
        }
        altcp_arg(listeners[i], &listener_mode[i]);
        altcp_accept(listeners[i], srv_accept);
    }
    struct altcp_pcb *plain = altcp_tcp_new_ip_type(IPADDR_TYPE_V4);
    if (plain == NULL || altcp_bind(plain, IP4_ADDR_ANY, PORT_PLAIN) != ERR_OK) {
        return false;
    }
    plain = altcp_listen(plain);
    if (plain == NULL) {
        return false;
    }
    altcp_accept(plain, plain_accept);
    return true;
}

/* With the core lock held: the connections end. The listeners (and their
 * TLS configurations) stay until the process ends: lwIP 2.1.3 asserts when
 * a TLS listener is closed (altcp_mbedtls_close sets a poll callback on
 * the inner LISTEN pcb: "invalid socket state for poll"). */
static void server_stop(void) {
    for (int i = 0; i < SLOTS; i++) {
        conn_close(&conns[i]);
    }
}

/* ---- the port --------------------------------------------------------------
 */

static ctxc_lwip_transport_t net;
static uint8_t tls_pool[512 * 1024] __attribute__((aligned(16)));
static ctxc_port_t port;
static pthread_mutex_t session_mutex = PTHREAD_MUTEX_INITIALIZER;

/* agent thread only */
static unsigned poll_calls, poll_calls_outside_wait, wait_calls;
static unsigned net_calls, net_calls_wrong_thread;
static bool in_wait;
static uint64_t wait_ms_total;

static uint64_t port_clock(void *ctx) {
    (void)ctx;
    return now_ms();
}

/* cfg.poll: the RTOS's one-tick delay */
static void os_tick(void *ctx) {
    (void)ctx;
    poll_calls++;
    if (!in_wait) {
        poll_calls_outside_wait++;
    }
    sleep_ms(1);
}

static ctxc_status_t entropy(void *ctx, uint8_t *buf, size_t len,
                             ctxc_error_t *err) {
    (void)ctx;
    size_t got = 0;
    while (got < len) {
        ssize_t r = getrandom(buf + got, len - got, 0);
        if (r <= 0) {
            return ctxc_error_set(err, CTXC_E_IO, "getrandom failed");
        }
        got += (size_t)r;
    }
    return CTXC_OK;
}

static ctxc_status_t api_key(void *ctx, const char *name, char *buf, size_t cap,
                             size_t *len, ctxc_error_t *err) {
    (void)ctx;
    (void)name;
    static const char key[] = "sk-lwip-nosys0-test";
    if (cap < sizeof key) {
        return ctxc_error_set(err, CTXC_E_TOO_LARGE, "key does not fit");
    }
    memcpy(buf, key, sizeof key);
    *len = sizeof key - 1;
    return CTXC_OK;
}

static void mutex_lock(void *ctx) { pthread_mutex_lock(ctx); }
static void mutex_unlock(void *ctx) { pthread_mutex_unlock(ctx); }

/* The transport's ops, each call checked to come from the agent thread
 * (never the tcpip thread) before it goes to port/lwip. */
static const ctxc_transport_ops_t *lw;

static void note_call(void) {
    net_calls++;
    if (!pthread_equal(pthread_self(), agent_tid) ||
        pthread_equal(pthread_self(), tcpip_tid)) {
        net_calls_wrong_thread++;
    }
}

static ctxc_status_t c_connect(void *ctx, const char *host, uint16_t p,
                               bool tls, ctxc_error_t *err) {
    note_call();
    return lw->connect(ctx, host, p, tls, err);
}
static int32_t c_send(void *ctx, const uint8_t *d, size_t n) {
    note_call();
    return lw->send(ctx, d, n);
}
static int32_t c_recv(void *ctx, uint8_t *b, size_t n) {
    note_call();
    return lw->recv(ctx, b, n);
}
static void c_close(void *ctx) {
    note_call();
    lw->close(ctx);
}
static ctxc_status_t c_connect_poll(void *ctx, ctxc_error_t *err) {
    note_call();
    return lw->connect_poll(ctx, err);
}
static void c_wait(void *ctx, uint32_t ms) {
    note_call();
    wait_calls++;
    uint64_t t0 = now_ms();
    in_wait = true;
    lw->wait(ctx, ms);
    in_wait = false;
    wait_ms_total += now_ms() - t0;
}
static const char *c_last_error(void *ctx) { return lw->last_error(ctx); }

static const ctxc_transport_ops_t checked_ops = {
    c_connect, c_send, c_recv, c_close, c_connect_poll, c_wait, c_last_error};

/* ---- the session -----------------------------------------------------------
 */

#define ENTRIES 2048
CTXC_HISTORY_DEFINE(hist, ENTRIES, 1 << 20);
CTXC_HISTORY_DEFINE(check_hist, ENTRIES, 1 << 20);
CTXC_WORK_DEFINE(work, ENTRIES, 1 << 18);
static ctxc_settings_store_t settings;
static ctxc_session_t session;
static ctxc_provider_client_t client;
static ctxc_provider_binding_t binding;
static ctxc_import_t imp;

typedef struct {
    char *buf;
    size_t len, cap;
} sink_t;

static ctxc_status_t sink_write(void *user, const char *data, size_t len) {
    sink_t *s = user;
    if (s->len + len > s->cap) {
        size_t cap = (s->len + len) * 2;
        char *b = realloc(s->buf, cap);
        if (b == NULL) {
            return CTXC_E_NO_SPACE;
        }
        s->buf = b;
        s->cap = cap;
    }
    memcpy(s->buf + s->len, data, len);
    s->len += len;
    return CTXC_OK;
}

static sink_t export_of(const ctxc_history_t *h) {
    sink_t s = {NULL, 0, 0};
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_export(h, sink_write, &s, &err);
    check(st == CTXC_OK, "export: %s", ctxc_error_message(&err));
    return s;
}

static void set(const char *key, const char *value) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_settings_set(&settings, key, value, &err);
    check(st == CTXC_OK, "setting %s: %s", key, ctxc_error_message(&err));
}

static void use_endpoint(int p, bool stream) {
    char url[96];
    snprintf(url, sizeof url, "https://" HOST ":%d/v1", p);
    set("base-url", url);
    set("stream", stream ? "true" : "false");
}

static void add_text(ctxc_speaker_t who, const char *text) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(text);
    ctxc_entry_in_t in = {who, &b, 1, CTXC_STR_ABSENT};
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_status_t st = ctxc_session_add(&session, &in, &err);
    check(st == CTXC_OK, "add: %s", ctxc_error_message(&err));
}

/* A fresh conversation of 60 turns (about 9000 tokens). */
static void fresh_history(void) {
    ctxc_history_clear(&hist);
    for (int i = 0; i < 60; i++) {
        char text[1024];
        int n = snprintf(text, sizeof text, "earlier turn %d:", i);
        for (int w = 0; w < 24 && n < (int)sizeof text - 48; w++) {
            n += snprintf(text + n, sizeof text - (size_t)n,
                          " the agent looked at file_%d_%d.c", i, w);
        }
        add_text(i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
    }
}

static uint64_t token_sum(const ctxc_history_t *h) {
    uint64_t sum = 0;
    ctxc_entry_t e;
    for (size_t i = 0; i < ctxc_history_count(h); i++) {
        if (ctxc_history_get(h, i, &e) == CTXC_OK) {
            sum += e.tokens;
        }
    }
    return sum;
}

/* The summary entry's index (SIZE_MAX: none) and whether it carries the
 * server's text. */
static size_t summary_index(bool *marked) {
    *marked = false;
    for (size_t i = 0; i < ctxc_history_count(&hist); i++) {
        ctxc_entry_t e;
        ctxc_block_t b;
        if (ctxc_history_get(&hist, i, &e) != CTXC_OK ||
            !(e.flags & CTXC_ENTRY_IS_SUMMARY)) {
            continue;
        }
        for (size_t k = 0; k < e.block_count; k++) {
            if (ctxc_entry_block(&e, k, &b) == CTXC_OK &&
                b.type == CTXC_BLOCK_TEXT &&
                memmem(b.u.text.text.ptr, b.u.text.text.len, SUMMARY_MARK,
                       strlen(SUMMARY_MARK)) != NULL) {
                *marked = true;
            }
        }
        return i;
    }
    return SIZE_MAX;
}

/* token total = sum of entries; the export re-imports with the same
 * entries, tokens and bytes */
static bool invariant(const char *name) {
    bool sum_ok = ctxc_history_tokens_estimated(&hist) == token_sum(&hist);
    sink_t a = export_of(&hist);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_history_clear(&check_hist);
    ctxc_status_t st = ctxc_import_text(&imp, &check_hist, a.buf, a.len,
                                        CTXC_FORMAT_ICONTENT, &err);
    bool same = false;
    if (st == CTXC_OK) {
        sink_t b = export_of(&check_hist);
        same = ctxc_history_count(&check_hist) == ctxc_history_count(&hist) &&
               ctxc_history_tokens_estimated(&check_hist) ==
                   ctxc_history_tokens_estimated(&hist) &&
               b.len == a.len && memcmp(a.buf, b.buf, a.len) == 0;
        free(b.buf);
    }
    free(a.buf);
    check(sum_ok, "%s: token total is the sum of the entries", name);
    check(same,
          "%s: the export re-imports with the same entries, tokens "
          "and bytes (%s)",
          name, st == CTXC_OK ? "differs" : ctxc_error_message(&err));
    return sum_ok && same;
}

static ctxc_status_t session_begin(void) {
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_status_t st =
        ctxc_session_init(&session, &hist, &work, &settings, &err);
    check(st == CTXC_OK, "session init: %s", ctxc_error_message(&err));
    ctxc_session_set_port(&session, &port);
    ctxc_session_set_llm_resolver(&session, ctxc_provider_resolve, &binding);
    return st;
}

/* ---- the cases
 * --------------------------------------------------------------- */

/* A connect through the transport's ops, driven by wait + connect_poll
 * until it is up or failed; the connection stays open. */
static ctxc_status_t connect_done(uint16_t p, bool tls, ctxc_error_t *err) {
    memset(err, 0, sizeof *err);
    ctxc_status_t st =
        port.transport.ops->connect(port.transport.ctx, HOST, p, tls, err);
    for (int i = 0; i < 10000 && st == CTXC_E_IN_PROGRESS; i++) {
        port.transport.ops->wait(port.transport.ctx, 50);
        st = port.transport.ops->connect_poll(port.transport.ctx, err);
    }
    return st;
}

static void case_refused(void) {
    ctxc_error_t err;
    ctxc_status_t st = connect_done(PORT_NOTHING, true, &err);
    port.transport.ops->close(port.transport.ctx);
    printf("case refused: TLS connect to %s:%d (nothing listens): %s: %s\n",
           HOST, PORT_NOTHING, ctxc_status_name(st), ctxc_error_message(&err));
    check(st == CTXC_E_NETWORK, "refused: %s, want CTXC_E_NETWORK",
          ctxc_status_name(st));
}

static void case_blocking(void) {
    fresh_history();
    use_endpoint(PORT_GOOD, false);
    size_t n0 = ctxc_history_count(&hist);
    uint64_t t0 = ctxc_history_tokens(&hist);
    ctxc_send_report_t report;
    memset(&report, 0, sizeof report);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    uint64_t ms = now_ms();
    ctxc_status_t st = ctxc_session_before_send(&session, 0, &report, &err);
    ms = now_ms() - ms;
    bool marked = false;
    size_t si = summary_index(&marked);
    printf("case blocking: before_send (middle-out, JSON): %s%s%s in %llu ms; "
           "%zu entries / %llu tokens -> %zu / %llu; summary %s\n",
           ctxc_status_name(st), st == CTXC_OK ? "" : ": ",
           st == CTXC_OK ? "" : ctxc_error_message(&err),
           (unsigned long long)ms, n0, (unsigned long long)t0,
           ctxc_history_count(&hist),
           (unsigned long long)ctxc_history_tokens(&hist),
           marked ? "from the server in the history" : "MISSING");
    check(st == CTXC_OK, "blocking: %s: %s", ctxc_status_name(st),
          ctxc_error_message(&err));
    check(report.compressed, "blocking: the report says compressed");
    check(si != SIZE_MAX && marked, "blocking: the server's summary is in "
                                    "the history");
    bool inv = invariant("blocking");
    printf("case blocking: invariant (token total = sum of entries, export "
           "re-imports the same): %s\n",
           inv ? "holds" : "BROKEN");
}

static bool tls_info_seen;
static size_t pool_max_seen;

static void case_job(void) {
    fresh_history();
    use_endpoint(PORT_GOOD, true);
    size_t n0 = ctxc_history_count(&hist);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    unsigned outside0 = poll_calls_outside_wait, wait0 = wait_calls;
    ctxc_status_t st = ctxc_session_compress_start(&session, &err);
    check(st == CTXC_OK, "job: start: %s", ctxc_error_message(&err));
    unsigned polls = 0, turns = 0;
    uint64_t longest = 0, t_start = now_ms();
    while (st == CTXC_OK || st == CTXC_E_IN_PROGRESS) {
        uint64_t t = now_ms();
        st = ctxc_session_poll(&session, &err);
        t = now_ms() - t;
        longest = t > longest ? t : longest;
        polls++;
        if (st != CTXC_E_IN_PROGRESS) {
            break;
        }
        /* what a device does between polls: the pool's usage, the
         * connection's TLS parameters (read while the tcpip thread runs
         * the handshake and the records: each takes the core lock) */
        size_t now = 0, max = 0;
        ctxc_lwip_tls_pool_usage(&now, &max);
        pool_max_seen = max > pool_max_seen ? max : pool_max_seen;
        const char *ver = "", *suite = "";
        ctxc_lwip_transport_tls_info(&net, &ver, &suite);
        tls_info_seen |= ver[0] != '\0' && suite[0] != '\0' &&
                         ctxc_lwip_transport_tls_group(&net)[0] != '\0';
        uint32_t hs = 0, rec = 0;
        ctxc_lwip_transport_tls_work(&net, &hs, &rec);
        (void)ctxc_lwip_transport_tls_resumed(&net);
        if (polls % 25 == 0 && turns < 40) {
            char text[96];
            snprintf(text, sizeof text, "turn %u during the job", turns);
            add_text(turns % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, text);
            turns++;
        }
        if (polls > 20000 || now_ms() - t_start > 60000) {
            break;
        }
        sleep_ms(1); /* the application's loop does its own work */
    }
    bool marked = false;
    size_t si = summary_index(&marked);
    printf("case job: compress_start + %u polls (SSE, %zu bytes): %s%s%s; "
           "longest poll %llu ms; %zu entries -> %zu; summary %s; %u turns "
           "appended during the job\n",
           polls, answer_sse_len, ctxc_status_name(st),
           st == CTXC_OK ? "" : ": ",
           st == CTXC_OK ? "" : ctxc_error_message(&err),
           (unsigned long long)longest, n0, ctxc_history_count(&hist),
           marked ? "from the server in the history" : "MISSING", turns);
    check(st == CTXC_OK, "job: %s: %s", ctxc_status_name(st),
          ctxc_error_message(&err));
    check(si != SIZE_MAX && marked, "job: the server's summary is in the "
                                    "history");
    check(turns > 0, "job: no turn appended during the job");
    /* the turns after the summary, in order, none lost */
    unsigned next = 0;
    for (size_t i = si == SIZE_MAX ? 0 : si + 1; i < ctxc_history_count(&hist);
         i++) {
        ctxc_entry_t e;
        ctxc_block_t b;
        unsigned got;
        if (ctxc_history_get(&hist, i, &e) == CTXC_OK &&
            ctxc_entry_block(&e, 0, &b) == CTXC_OK &&
            b.type == CTXC_BLOCK_TEXT &&
            sscanf(b.u.text.text.ptr, "turn %u during", &got) == 1) {
            check(got == next, "job: turn %u where turn %u belongs", got, next);
            next = got + 1;
        }
    }
    check(next == turns, "job: %u of %u turns after the summary", next, turns);
    unsigned outside = poll_calls_outside_wait - outside0;
    printf("case job: %u turns after the summary in order; the poll hook "
           "(a 1 ms sleep) ran %u times outside wait(), wait() called %u "
           "times (the job never calls it)\n",
           next, outside, wait_calls - wait0);
    check(outside == 0,
          "job: a poll waited: the poll hook (a sleep) ran %u "
          "times inside send/recv/connect_poll",
          outside);
    check(wait_calls == wait0, "job: wait() was called by the job");
    check(tls_info_seen, "job: the TLS version, suite and group were never "
                         "read between polls");
    bool inv = invariant("job");
    printf("case job: invariant: %s; pool high-water %zu bytes; TLS info "
           "read between polls: %s\n",
           inv ? "holds" : "BROKEN", pool_max_seen,
           tls_info_seen ? "yes" : "never up");
}

static bool history_same(const sink_t *before, const char *name) {
    sink_t after = export_of(&hist);
    bool same = after.len == before->len &&
                memcmp(after.buf, before->buf, after.len) == 0;
    free(after.buf);
    check(same, "%s: the history changed", name);
    return same;
}

static void case_wronghost(void) {
    fresh_history();
    use_endpoint(PORT_WRONGHOST, false);
    sink_t before = export_of(&hist);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_send_report_t report;
    ctxc_status_t st = ctxc_session_before_send(&session, 0, &report, &err);
    bool same = history_same(&before, "wronghost");
    printf("case wronghost: before_send against :%d: %s: %s; history %s\n",
           PORT_WRONGHOST, ctxc_status_name(st), ctxc_error_message(&err),
           same ? "byte for byte as before" : "CHANGED");
    check(st == CTXC_E_TLS, "wronghost: %s, want CTXC_E_TLS",
          ctxc_status_name(st));
    check(strstr(ctxc_error_message(&err), "certificate rejected") != NULL &&
              strstr(ctxc_error_message(&err), "CN") != NULL,
          "wronghost: the message does not name the mismatch");
    free(before.buf);
}

static void case_reset(void) {
    fresh_history();
    use_endpoint(PORT_RESET, true);
    sink_t before = export_of(&hist);
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    unsigned resets0 = srv_resets;
    ctxc_status_t st = ctxc_session_compress_start(&session, &err);
    unsigned polls = 0;
    while (st == CTXC_OK || st == CTXC_E_IN_PROGRESS) {
        st = ctxc_session_poll(&session, &err);
        polls++;
        if (st != CTXC_E_IN_PROGRESS || polls > 20000) {
            break;
        }
        sleep_ms(1);
    }
    bool same = history_same(&before, "reset");
    printf("case reset: job against :%d, %u polls: %s: %s; history %s\n",
           PORT_RESET, polls, ctxc_status_name(st), ctxc_error_message(&err),
           same ? "byte for byte as before" : "CHANGED");
    check(st == CTXC_E_NETWORK, "reset: %s, want CTXC_E_NETWORK",
          ctxc_status_name(st));
    LOCK_TCPIP_CORE();
    unsigned resets = srv_resets - resets0;
    UNLOCK_TCPIP_CORE();
    check(resets >= 1, "reset: the server reset no connection");
    free(before.buf);
}

static void case_nodelay(void) {
    static const struct {
        uint16_t port;
        bool tls;
        const char *what;
    } conns_tried[] = {{PORT_GOOD, true, "TLS"}, {PORT_PLAIN, false, "TCP"}};
    for (size_t i = 0; i < sizeof conns_tried / sizeof conns_tried[0]; i++) {
        ctxc_error_t err;
        ctxc_status_t st =
            connect_done(conns_tried[i].port, conns_tried[i].tls, &err);
        /* lwIP's own flag (TF_NODELAY of the TCP pcb; through the TLS
         * pcb for TLS), read from the port's pcb under the core lock */
        LOCK_TCPIP_CORE();
        bool up = st == CTXC_OK && net.pcb != NULL;
        bool nodelay = up && altcp_nagle_disabled(net.pcb) != 0;
        UNLOCK_TCPIP_CORE();
        port.transport.ops->close(port.transport.ctx);
        printf("case nodelay: %s connect to %s:%u: %s%s%s; Nagle's algorithm "
               "%s\n",
               conns_tried[i].what, HOST, (unsigned)conns_tried[i].port,
               ctxc_status_name(st), st == CTXC_OK ? "" : ": ",
               st == CTXC_OK ? "" : ctxc_error_message(&err),
               !up ? "not known (no connection)"
                   : nodelay ? "off (TCP_NODELAY)" : "ON");
        check(up, "nodelay: %s connect: %s: %s", conns_tried[i].what,
              ctxc_status_name(st), ctxc_error_message(&err));
        check(nodelay,
              "nodelay: the %s connection has Nagle's algorithm on (its "
              "request's last segment waits for the peer's delayed ACK)",
              conns_tried[i].what);
    }
}

static void *agent(void *arg) {
    (void)arg;
    agent_tid = pthread_self();
    ctxc_error_t err;
    memset(&err, 0, sizeof err);
    ctxc_lwip_transport_config_t cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.ca = (const uint8_t *)ca_pem;
    cfg.ca_len = ca_len;
    cfg.connect_timeout_ms = 10000;
    cfg.clock = port_clock;
    cfg.poll = os_tick;
    cfg.entropy = entropy;
    cfg.tls_pool = tls_pool;
    cfg.tls_pool_bytes = sizeof tls_pool;
    if (!check(ctxc_lwip_transport_init(&net, &cfg, &err) == CTXC_OK,
               "transport init: %s", ctxc_error_message(&err))) {
        return NULL;
    }
    ctxc_transport_t tr = ctxc_lwip_transport(&net);
    lw = tr.ops;
    memset(&port, 0, sizeof port);
    port.clock = port_clock;
    port.transport.ops = &checked_ops;
    port.transport.ctx = tr.ctx;
    port.entropy = entropy;
    port.key = api_key;
    port.mutex.lock = mutex_lock;
    port.mutex.unlock = mutex_unlock;
    port.mutex.ctx = &session_mutex;

    case_refused();

    LOCK_TCPIP_CORE();
    bool up = server_start();
    UNLOCK_TCPIP_CORE();
    if (!check(up, "the TLS server did not start (certificates, pool)")) {
        return NULL;
    }

    ctxc_settings_init(&settings, NULL);
    set("provider", "openai");
    set("model", "lwip-test");
    set("auth-key-name", "lwip-key");
    set("compression.strategy", "middle-out");
    set("compression.retries", "0");
    set("network.read-timeout-ms", "10000");
    set("compression-threshold", "0.8");
    ctxc_provider_bind(&binding, &client, &settings, &port, true);
    if (session_begin() != CTXC_OK) {
        return NULL;
    }
    fresh_history();
    char limit[32];
    snprintf(limit, sizeof limit, "%llu",
             (unsigned long long)(ctxc_history_tokens(&hist) * 3u / 4u));
    set("context-limit", limit);

    case_blocking();
    case_job();
    case_wronghost();
    case_reset();
    case_nodelay();

    ctxc_session_deinit(&session);
    LOCK_TCPIP_CORE();
    server_stop();
    UNLOCK_TCPIP_CORE();
    ctxc_lwip_transport_deinit(&net);
    return NULL;
}

static void watchdog(int sig) {
    (void)sig;
    static const char msg[] = "lwip_nosys0: FAIL: still running after 120 s "
                              "(watchdog)\n";
    (void)!write(1, msg, sizeof msg - 1);
    _exit(1);
}

int main(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *dir = getenv("CTXC_FIXTURE_DIR");
    if (dir == NULL) {
        dir = CTXC_FIXTURE_DIR;
    }
    ca_pem = read_file(dir, "ca.pem", &ca_len);
    good_pem = read_file(dir, "device.pem", &good_len);
    good_key = read_file(dir, "device.key", &good_key_len);
    wrong_pem = read_file(dir, "wronghost.pem", &wrong_len);
    wrong_key = read_file(dir, "wronghost.key", &wrong_key_len);
    if (ca_pem == NULL || good_pem == NULL || good_key == NULL ||
        wrong_pem == NULL || wrong_key == NULL) {
        printf("lwip_nosys0: SKIP: no test certificates in %s "
               "(test/fixtures/make_certs.sh, ctest fixture ctxc_certs)\n",
               dir);
        return 77;
    }
    signal(SIGALRM, watchdog);
    alarm(120);
    make_answers();

    sys_sem_t ready;
    if (sys_sem_new(&ready, 0) != ERR_OK) {
        printf("lwip_nosys0: FAIL: sys_sem_new\n");
        return 1;
    }
    tcpip_init(tcpip_ready, &ready);
    sys_arch_sem_wait(&ready, 0);
    sys_sem_free(&ready);
    printf("lwip_nosys0: lwIP %s NO_SYS=0, tcpip thread, "
           "LWIP_TCPIP_CORE_LOCKING=1 (Debian's POSIX sys_arch); loopback "
           "netif 127.0.0.1; TLS server in the same stack on :%d (%s), :%d "
           "(wrong host), :%d (resets)\n",
           LWIP_VERSION_STRING, PORT_GOOD, HOST, PORT_WRONGHOST, PORT_RESET);

    pthread_t a;
    if (pthread_create(&a, NULL, agent, NULL) != 0) {
        printf("lwip_nosys0: FAIL: pthread_create\n");
        return 1;
    }
    pthread_join(a, NULL);

    LOCK_TCPIP_CORE();
    unsigned calls = srv_calls, wrong = srv_wrong_thread;
    unsigned requests = srv_requests, answers = srv_answers;
    UNLOCK_TCPIP_CORE();
    printf("threads: %u server callbacks, %u of them outside the tcpip "
           "thread; %u transport calls from the agent thread, %u from "
           "another; wait(): %u calls, %llu ms, %u poll-hook ticks in all; "
           "server: %u requests, %u answers\n",
           calls, wrong, net_calls, net_calls_wrong_thread, wait_calls,
           (unsigned long long)wait_ms_total, poll_calls, requests, answers);
    check(calls > 0 && wrong == 0,
          "server callbacks outside the tcpip "
          "thread: %u",
          wrong);
    check(net_calls > 0 && net_calls_wrong_thread == 0,
          "transport calls from another thread: %u", net_calls_wrong_thread);
    printf("lwip_nosys0: %u checks, %u failed: %s\n", checks, failures,
           failures == 0 ? "ok" : "FAILED");
    return failures == 0 ? 0 : 1;
}
