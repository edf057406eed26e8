/*
 * `ctxc http-get URL [--ca-file FILE] [--header 'Name: value' ...]
 *                    [--bytes N] [--timeout-ms N]`
 *
 * A diagnostic of the network path the LLM strategies use: fetches URL
 * through the port (the POSIX transport: sockets + mbedTLS, certificate
 * and host name always verified) with the library's HTTP client, and
 * prints the status line, the response headers and the first N bytes of
 * the body (default 512) to stdout, control characters shown visibly
 * whether stdout is a terminal or not (cli_term.c: ESC as ^[, C1 as
 * <U+009B>; a diagnostic for a person, not a download). The CA file,
 * connect and read
 * timeouts come from the settings (network.ca-file,
 * network.connect-timeout-ms, network.read-timeout-ms) unless given here.
 * A header given with --header is sent as is; one whose name is
 * Authorization, x-api-key or x-goog-api-key is treated as a secret (never
 * sent over plain http:// to a non-loopback host, never printed).
 *
 * Exit status: 0 for a 2xx answer, 1 for any error (the error printed on
 * stderr, with whether a retry could help), 2 usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"

#define HTTP_GET_MAX_HEADERS 16

static int http_usage(const char *what, const char *arg) {
    return cli_usage_fail("http-get", "%s%s", what, arg);
}

typedef struct {
    size_t shown, limit;
    unsigned long long total;
} body_view_t;

/* Raw network bytes for a person, on a terminal or not: control
 * characters always shown visibly (cli_term.c). */
static cli_term_t http_term;

static ctxc_status_t print_header(void *user, const char *name, size_t name_len,
                                  const char *value, size_t value_len) {
    (void)user;
    cli_term_write(&http_term, name, name_len);
    fputs(": ", stdout);
    cli_term_write(&http_term, value, value_len);
    cli_term_end(&http_term);
    fputc('\n', stdout);
    return CTXC_OK;
}

static ctxc_status_t print_body(void *user, const char *data, size_t len) {
    body_view_t *b = user;
    if (b->shown == 0 && b->total == 0) {
        fputc('\n', stdout); /* the blank line between headers and body */
    }
    b->total += len;
    if (b->shown < b->limit) {
        size_t n = len < b->limit - b->shown ? len : b->limit - b->shown;
        cli_term_write(&http_term, data, n);
        b->shown += n;
    }
    return CTXC_OK;
}

static bool is_secret_name(const char *name, size_t len) {
    static const char *const secret[] = {
        "authorization", "x-api-key", "x-goog-api-key", "proxy-authorization"};
    for (size_t i = 0; i < sizeof secret / sizeof secret[0]; i++) {
        if (strlen(secret[i]) == len &&
            strncasecmp(name, secret[i], len) == 0) {
            return true;
        }
    }
    return false;
}

static bool parse_u32(const char *s, uint32_t max, uint32_t *out) {
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || s[0] == '-' || v > max) {
        return false;
    }
    *out = (uint32_t)v;
    return true;
}

static ctxc_settings_store_t http_settings;
static ctxc_posix_fs_t http_pfs;
static ctxc_posix_transport_t http_net;
static CTXC_HTTP_WORK_DEFINE(http_work);
/* "Name: value" copies split in place */
static char header_text[HTTP_GET_MAX_HEADERS][1024];

int cli_cmd_http_get(int argc, char **argv) {
    const char *url = NULL, *ca_file = NULL;
    uint32_t bytes = 512, timeout_ms = 0;
    bool have_timeout = false;
    ctxc_http_header_t headers[HTTP_GET_MAX_HEADERS];
    size_t nh = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        bool takes = strcmp(a, "--ca-file") == 0 ||
                     strcmp(a, "--header") == 0 || strcmp(a, "--bytes") == 0 ||
                     strcmp(a, "--timeout-ms") == 0;
        if (takes && i + 1 >= argc) {
            return http_usage(a, " needs a value");
        }
        if (strcmp(a, "--ca-file") == 0) {
            ca_file = argv[++i];
        } else if (strcmp(a, "--bytes") == 0) {
            if (!parse_u32(argv[++i], 1u << 30, &bytes)) {
                fprintf(stderr,
                        "ctxc http-get: --bytes takes a number, not "
                        "'%s'\n",
                        argv[i]);
                return CLI_EXIT_USAGE;
            }
        } else if (strcmp(a, "--timeout-ms") == 0) {
            if (!parse_u32(argv[++i], 3600000u, &timeout_ms) ||
                timeout_ms == 0) {
                fprintf(stderr,
                        "ctxc http-get: --timeout-ms takes 1..3600000, not "
                        "'%s'\n",
                        argv[i]);
                return CLI_EXIT_USAGE;
            }
            have_timeout = true;
        } else if (strcmp(a, "--header") == 0) {
            const char *h = argv[++i];
            const char *colon = strchr(h, ':');
            if (nh == HTTP_GET_MAX_HEADERS || colon == NULL || colon == h ||
                strlen(h) >= sizeof header_text[0]) {
                fprintf(stderr,
                        "ctxc http-get: --header takes 'Name: value' (at "
                        "most %d, each under %zu bytes)\n",
                        HTTP_GET_MAX_HEADERS, sizeof header_text[0]);
                return CLI_EXIT_USAGE;
            }
            char *t = header_text[nh];
            strcpy(t, h);
            size_t name_len = (size_t)(colon - h);
            t[name_len] = '\0';
            const char *value = t + name_len + 1;
            while (*value == ' ' || *value == '\t') {
                value++;
            }
            headers[nh].name = t;
            headers[nh].value = value;
            headers[nh].secret = is_secret_name(t, name_len);
            nh++;
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const opts[] = {
                "--ca-file", "--header", "--bytes", "--timeout-ms",
                "--verbose", "--help",   NULL};
            if (strcmp(a, "--verbose") == 0) {
                cli_verbose = true;
                continue;
            }
            return cli_unknown_option("http-get", a, opts);
        } else if (url == NULL) {
            url = a;
        } else {
            return http_usage("one URL only, not also ", a);
        }
    }
    if (url == NULL) {
        return http_usage("missing URL", "");
    }
    if (!cli_settings_open(&http_settings, &http_pfs, NULL, "ctxc http-get")) {
        return CLI_EXIT_FAIL;
    }
    ctxc_error_t err;
    ctxc_posix_port_t pp;
    if (ctxc_posix_port_init(&pp, NULL, CTXC_LOG_WARN, &err) != CTXC_OK) {
        fprintf(stderr, "ctxc http-get: %s\n", ctxc_error_message(&err));
        return CLI_EXIT_FAIL;
    }
    ctxc_posix_transport_config_t cfg =
        ctxc_posix_transport_config(&http_settings, &pp.port);
    if (ca_file != NULL) {
        cfg.ca_file = ca_file;
    }
    int rc = CLI_EXIT_FAIL;
    if (ctxc_posix_transport_init(&http_net, &cfg, &err) != CTXC_OK) {
        fprintf(stderr, "ctxc http-get: %s\n", ctxc_error_message(&err));
        ctxc_posix_port_deinit(&pp);
        return CLI_EXIT_FAIL;
    }
    pp.port.transport = ctxc_posix_transport(&http_net);
    if (!have_timeout) {
        uint32_t t = 0;
        timeout_ms = ctxc_settings_int(&http_settings,
                                       CTXC_SETTING_NETWORK_READ_TIMEOUT_MS, &t)
                         ? t
                         : 0;
    }
    body_view_t body = {0, bytes, 0};
    cli_term_init(&http_term, stdout, true);
    ctxc_http_request_t req;
    memset(&req, 0, sizeof req);
    req.method = "GET";
    req.url = url;
    req.accept = "*/*";
    req.headers = headers;
    req.header_count = nh;
    req.timeout_ms = timeout_ms;
    req.on_header = print_header;
    req.on_body = print_body;
    req.user = &body;
    ctxc_http_response_t resp;
    ctxc_status_t st = ctxc_http_request(&req, &pp.port, http_work,
                                         sizeof http_work, &resp, &err);
    /* the status line is known only after the headers: printed last */
    cli_term_end(&http_term);
    if (body.total > body.shown) {
        printf("\n[... %llu body bytes in all, %zu shown]\n", body.total,
               body.shown);
    } else if (body.total > 0 && body.shown > 0) {
        fputc('\n', stdout);
    }
    if (resp.status != 0) {
        printf("status: %u\n", (unsigned)resp.status);
    }
    if (st == CTXC_OK) {
        rc = resp.status >= 200 && resp.status < 300 ? CLI_EXIT_OK
                                                     : CLI_EXIT_FAIL;
    } else {
        const char *why = ctxc_posix_transport_last_error(&http_net);
        if (strstr(ctxc_error_message(&err), why) != NULL) {
            why = ""; /* already in the message */
        }
        fprintf(stderr, "ctxc http-get: %s%s%s%s%s (%s)\n",
                cli_verbose ? ctxc_status_name(st) : "",
                cli_verbose ? ": " : "", ctxc_error_message(&err),
                why[0] != '\0' ? "; transport: " : "", why,
                ctxc_http_retryable(st, &resp) ? "a retry could help"
                                               : "a retry would not help");
        const char *hint = cli_net_hint(&err);
        if (hint != NULL) {
            fprintf(stderr, "ctxc http-get: %s\n", hint);
        }
        if (resp.has_retry_after) {
            fprintf(stderr, "ctxc http-get: Retry-After: %u s\n",
                    (unsigned)resp.retry_after_s);
        }
    }
    ctxc_posix_transport_deinit(&http_net);
    ctxc_posix_port_deinit(&pp);
    if (!cli_stdout_ok("ctxc http-get")) {
        return CLI_EXIT_FAIL;
    }
    return rc;
}
