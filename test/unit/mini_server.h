/*
 * A canned plain-HTTP server on 127.0.0.1 for the CLI suites (header only;
 * include after <cmocka.h> in one test file): a child process that answers
 * up to `max_conns` connections, each with the same bytes, then exits; it
 * also exits on its own after 60 s, so it never outlives a crashed run.
 *
 *     uint16_t port;
 *     pid_t pid = mini_serve(answer, strlen(answer), 2, &port);
 *     ... http://127.0.0.1:<port>/ ...
 *     mini_stop(pid);
 *
 * Each request is read whole (its head, and a body by Content-Length)
 * before the answer is written and the connection closed.
 */
#ifndef CTXC_TEST_MINI_SERVER_H
#define CTXC_TEST_MINI_SERVER_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

static inline void mini_serve_one(int c, const char *answer, size_t len) {
    static char req[1 << 16];
    size_t n = 0;
    const char *end = NULL;
    while (end == NULL && n + 1 < sizeof req) {
        ssize_t got = read(c, req + n, sizeof req - 1 - n);
        if (got <= 0) {
            return;
        }
        n += (size_t)got;
        req[n] = '\0';
        end = strstr(req, "\r\n\r\n");
    }
    if (end == NULL) {
        return;
    }
    size_t body = 0;
    for (const char *p = strstr(req, "\r\n"); p != NULL && p < end;
         p = strstr(p + 2, "\r\n")) {
        if (strncasecmp(p + 2, "Content-Length:", 15) == 0) {
            body = (size_t)strtoul(p + 17, NULL, 10);
        }
    }
    size_t have = n - (size_t)(end + 4 - req);
    while (have < body) {
        ssize_t got = read(c, req, sizeof req);
        if (got <= 0) {
            return;
        }
        have += (size_t)got;
    }
    for (size_t off = 0; off < len;) {
        ssize_t w = write(c, answer + off, len - off);
        if (w <= 0) {
            return;
        }
        off += (size_t)w;
    }
}

/* Starts the server; *port gets its port. */
static inline pid_t mini_serve(const char *answer, size_t len, int max_conns,
                               uint16_t *port) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    assert_true(s >= 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    a.sin_port = 0;
    assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof a), 0);
    assert_int_equal(listen(s, 8), 0);
    socklen_t al = sizeof a;
    assert_int_equal(getsockname(s, (struct sockaddr *)&a, &al), 0);
    *port = ntohs(a.sin_port);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        alarm(60);
        for (int i = 0; i < max_conns; i++) {
            int c = accept(s, NULL, NULL);
            if (c < 0) {
                break;
            }
            mini_serve_one(c, answer, len);
            shutdown(c, SHUT_WR);
            close(c);
        }
        close(s);
        _exit(0);
    }
    close(s);
    return pid;
}

/* Stops the server (it may have exited already) and reaps it. */
static inline void mini_stop(pid_t pid) {
    kill(pid, SIGTERM);
    int st = 0;
    (void)waitpid(pid, &st, 0);
}

#endif /* CTXC_TEST_MINI_SERVER_H */
