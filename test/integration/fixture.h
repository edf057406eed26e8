/*
 * The local HTTPS fixture server as the integration suites see it
 * (test/fixtures/https_server.py, started by the ctest fixture ctxc_https;
 * header only: include in one test file).
 *
 *     static fixture_t fx;
 *     static int load(void **state) { (void)state;
 *         return fixture_load(&fx, "test_xyz", "good", "plain", NULL); }
 *     ... fx.ca (the test CA), fixture_port(&fx, "good") ...
 *
 * CTXC_FIXTURE_DIR (environment, else the build's default) holds ports.txt
 * ("name port" lines), ca.pem and other-ca.pem.
 */
#ifndef CTXC_TEST_FIXTURE_H
#define CTXC_TEST_FIXTURE_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FIXTURE_MAX_PORTS 16

/* The transport's connect + handshake timeout in the suites that do not
 * test it: a TLS handshake under valgrind on a busy machine takes seconds
 * (5 s was missed under a load of 5-7 on 2 cores), and a wrong port or a
 * refused connection fails at once whatever the timeout. Tests of a
 * timeout use the read timeout and the fixture's pauses. */
#define FIXTURE_CONNECT_TIMEOUT_MS 60000u

typedef struct {
    char dir[1024];
    char ca[1100];       /* the test CA: dir/ca.pem */
    char other_ca[1100]; /* a CA that signed nothing the server shows */
    struct {
        char name[32];
        uint16_t port;
    } ports[FIXTURE_MAX_PORTS];
    size_t n_ports;
} fixture_t;

/* The port called name in ports.txt, 0 when there is none. */
static inline uint16_t fixture_port(const fixture_t *fx, const char *name) {
    for (size_t i = 0; i < fx->n_ports; i++) {
        if (strcmp(fx->ports[i].name, name) == 0) {
            return fx->ports[i].port;
        }
    }
    return 0;
}

/* Reads the fixture directory; every port named in the NULL-terminated
 * list after `suite` must be there. 0, or -1 with a message on stderr
 * naming the suite (a cmocka group setup fails with it). */
static inline int fixture_load(fixture_t *fx, const char *suite, ...) {
    memset(fx, 0, sizeof *fx);
    const char *d = getenv("CTXC_FIXTURE_DIR");
    if (d == NULL || d[0] == '\0') {
        d = CTXC_FIXTURE_DIR;
    }
    snprintf(fx->dir, sizeof fx->dir, "%s", d);
    snprintf(fx->ca, sizeof fx->ca, "%s/ca.pem", fx->dir);
    snprintf(fx->other_ca, sizeof fx->other_ca, "%s/other-ca.pem", fx->dir);
    char path[1100];
    snprintf(path, sizeof path, "%s/ports.txt", fx->dir);
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        fprintf(stderr,
                "%s: %s: %s\n  the fixture server is not running; run the "
                "suite through ctest (it starts the ctxc_https fixture), or "
                "start it: test/fixtures/make_certs.sh DIR && python3 "
                "test/fixtures/https_server.py --dir DIR --daemon\n",
                suite, path, strerror(errno));
        return -1;
    }
    char name[32];
    unsigned port;
    while (fx->n_ports < FIXTURE_MAX_PORTS &&
           fscanf(f, "%31s %u", name, &port) == 2) {
        if (port > 0 && port < 65536u) {
            snprintf(fx->ports[fx->n_ports].name, sizeof fx->ports[0].name,
                     "%s", name);
            fx->ports[fx->n_ports++].port = (uint16_t)port;
        }
    }
    fclose(f);
    va_list ap;
    va_start(ap, suite);
    int rc = 0;
    for (const char *want = va_arg(ap, const char *); want != NULL;
         want = va_arg(ap, const char *)) {
        if (fixture_port(fx, want) == 0) {
            fprintf(stderr, "%s: %s lacks port '%s'\n", suite, path, want);
            rc = -1;
        }
    }
    va_end(ap);
    return rc;
}

/* ---- port hooks that record (needs ctxc/port.h) -------------------------- */
#ifdef CTXC_PORT_H

/* Log lines (one per line) and delays a port asked for, for tests to look
 * at: port.log = fixture_rec_log, port.log_ctx = &rec; port.delay_ms =
 * fixture_rec_delay, port.delay_ctx = &rec (recorded, not slept). */
typedef struct {
    char lines[1 << 16];
    size_t len;
    uint32_t delays[16];
    size_t n_delays;
} fixture_rec_t;

static inline void fixture_rec_log(void *ctx, ctxc_log_level_t level,
                                   const char *msg) {
    fixture_rec_t *r = (fixture_rec_t *)ctx;
    (void)level;
    int n = snprintf(r->lines + r->len, sizeof r->lines - r->len, "%s\n", msg);
    if (n > 0 && (size_t)n < sizeof r->lines - r->len) {
        r->len += (size_t)n;
    }
}

static inline void fixture_rec_delay(void *ctx, uint32_t ms) {
    fixture_rec_t *r = (fixture_rec_t *)ctx;
    if (r->n_delays < sizeof r->delays / sizeof r->delays[0]) {
        r->delays[r->n_delays++] = ms;
    }
}

#endif /* CTXC_PORT_H */

/* ---- what the server recorded (needs ctxc/http.h) ------------------------ */
#ifdef CTXC_HTTP_H

typedef struct {
    char *buf;
    size_t cap, len;
} fixture_records_t;

static inline ctxc_status_t fixture_rec_body(void *user, const char *data,
                                             size_t len) {
    fixture_records_t *r = (fixture_records_t *)user;
    if (r->len + len >= r->cap) {
        return CTXC_E_NO_SPACE;
    }
    memcpy(r->buf + r->len, data, len);
    r->len += len;
    return CTXC_OK;
}

/* GET /__requests?test=<test_id> from the plain port (through port's
 * transport): the JSON list of the requests that carried X-Test-Id
 * test_id, NUL-terminated in buf; *len its length. */
static inline ctxc_status_t
fixture_fetch_records(const fixture_t *fx, const ctxc_port_t *port,
                      const char *test_id, char *buf, size_t cap, size_t *len) {
    static CTXC_HTTP_WORK_DEFINE(fixture_work);
    char url[256];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/__requests?test=%s",
             (unsigned)fixture_port(fx, "plain"), test_id);
    fixture_records_t r = {buf, cap, 0};
    ctxc_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = url;
    req.on_body = fixture_rec_body;
    req.user = &r;
    ctxc_http_response_t resp;
    ctxc_error_t e;
    ctxc_status_t st = ctxc_http_request(&req, port, fixture_work,
                                         sizeof fixture_work, &resp, &e);
    buf[r.len < cap ? r.len : cap - 1] = '\0';
    *len = r.len;
    return st;
}

/* How often needle occurs in hay. */
static inline size_t fixture_count(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL;
         p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

#endif /* CTXC_HTTP_H */

#endif /* CTXC_TEST_FIXTURE_H */
