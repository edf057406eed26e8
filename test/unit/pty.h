/*
 * The CLI on a pseudo-terminal, for the suites that drive `ctxc repl` and
 * `ctxc chat` through libedit (header only; include after <cmocka.h> in one
 * test file; the file defines CTXC_CLI_PATH, as every suite does).
 *
 *     pid_t pid;
 *     int m = pty_spawn(&pid, argv);       // argv[0] = "ctxc", NULL-ended
 *     pty_expect(m, "ctxc> ");             // waits, consumes up to it
 *     pty_type(m, "/stats\r");
 *     pty_finish(m, pid);                  // /quit, exit status 0
 */
#ifndef CTXC_TEST_PTY_H
#define CTXC_TEST_PTY_H

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* How long pty_expect() waits without output (valgrind is slow). */
#ifndef PTY_QUIET_MS
#define PTY_QUIET_MS 60000
#endif

/* Starts the CLI with argv on a new pseudo-terminal (its controlling
 * terminal; TERM=vt100); returns the master side. */
static inline int pty_spawn(pid_t *pid, char *const *argv) {
    int m = posix_openpt(O_RDWR | O_NOCTTY);
    assert_true(m >= 0);
    assert_int_equal(grantpt(m), 0);
    assert_int_equal(unlockpt(m), 0);
    const char *slave = ptsname(m);
    assert_non_null(slave);
    fflush(stdout);
    fflush(stderr);
    *pid = fork();
    assert_true(*pid >= 0);
    if (*pid == 0) {
        setsid(); /* the slave becomes the controlling terminal */
        int s = open(slave, O_RDWR);
        if (s < 0 || dup2(s, 0) < 0 || dup2(s, 1) < 0 || dup2(s, 2) < 0) {
            _exit(126);
        }
        close(m);
        setenv("TERM", "vt100", 1);
        alarm(300); /* a hung child never outlives the test for long */
        execv(CTXC_CLI_PATH, argv);
        _exit(127);
    }
    return m;
}

static char pty_screen[1 << 16];
static size_t pty_screen_len;

/* Reads the terminal until `needle` shows after what was consumed
 * (PTY_QUIET_MS of silence at most); the text up to it is consumed. */
static inline void pty_expect(int m, const char *needle) {
    for (int waited = 0; waited < PTY_QUIET_MS;) {
        pty_screen[pty_screen_len] = '\0';
        char *hit = strstr(pty_screen, needle);
        if (hit != NULL) {
            size_t used = (size_t)(hit - pty_screen) + strlen(needle);
            memmove(pty_screen, pty_screen + used, pty_screen_len - used + 1);
            pty_screen_len -= used;
            return;
        }
        if (pty_screen_len > sizeof pty_screen / 2) {
            /* a long echo: keep only its tail (longer than any needle) */
            memmove(pty_screen, pty_screen + pty_screen_len - 1024, 1024);
            pty_screen_len = 1024;
        }
        struct pollfd p = {m, POLLIN, 0};
        int r = poll(&p, 1, 100);
        waited += r > 0 ? 0 : 100; /* silence, not reads, is counted */
        if (r > 0) {
            ssize_t got = read(m, pty_screen + pty_screen_len,
                               sizeof pty_screen - 1 - pty_screen_len);
            if (got <= 0) {
                break;
            }
            /* drop the NUL padding some terminal types ask for */
            for (ssize_t i = 0; i < got; i++) {
                if (pty_screen[pty_screen_len] != '\0') {
                    pty_screen_len++;
                } else {
                    memmove(pty_screen + pty_screen_len,
                            pty_screen + pty_screen_len + 1,
                            (size_t)(got - i - 1));
                }
            }
        }
    }
    pty_screen[pty_screen_len] = '\0';
    fail_msg("the terminal never showed '%s'; it shows:\n%s", needle,
             pty_screen);
}

/* pty_expect(), with the text before `needle` copied into out (cut to
 * cap - 1 bytes). */
static inline void pty_expect_copy(int m, const char *needle, char *out,
                                   size_t cap) {
    size_t have = 0;
    out[0] = '\0';
    for (int tries = 0; tries < PTY_QUIET_MS / 100; tries++) {
        pty_screen[pty_screen_len] = '\0';
        char *hit = strstr(pty_screen, needle);
        size_t upto = hit != NULL ? (size_t)(hit - pty_screen) : pty_screen_len;
        /* keep what is there so far; the rest is read by pty_expect */
        if (upto > have && cap > 1) {
            size_t n = upto < cap - 1 ? upto : cap - 1;
            memcpy(out, pty_screen, n);
            out[n] = '\0';
            have = upto;
        }
        if (hit != NULL) {
            break;
        }
        struct pollfd p = {m, POLLIN, 0};
        if (poll(&p, 1, 100) > 0) {
            ssize_t got = read(m, pty_screen + pty_screen_len,
                               sizeof pty_screen - 1 - pty_screen_len);
            if (got <= 0) {
                break;
            }
            size_t from = pty_screen_len; /* NUL padding dropped */
            for (ssize_t i = 0; i < got; i++) {
                char c = pty_screen[from + (size_t)i];
                if (c != '\0') {
                    pty_screen[pty_screen_len++] = c;
                }
            }
        }
    }
    pty_expect(m, needle);
}

/* The terminal's size (columns x rows), as a window would set it. */
static inline void pty_set_size(int m, unsigned short cols,
                                unsigned short rows) {
    struct winsize ws;
    memset(&ws, 0, sizeof ws);
    ws.ws_col = cols;
    ws.ws_row = rows;
    assert_int_equal(ioctl(m, TIOCSWINSZ, &ws), 0);
}

static inline void pty_type(int m, const char *keys) {
    /* a moment for the line editor after what was expected: libedit
     * writes its prompt before it puts the terminal in raw mode, and a key
     * typed in between is taken by the cooked line discipline (a Ctrl-D
     * becomes a NUL byte; seen under valgrind's load) */
    struct timespec settle = {0, 100000000L};
    nanosleep(&settle, NULL);
    assert_int_equal(write(m, keys, strlen(keys)), (ssize_t)strlen(keys));
}

/* /quit, leaving nothing saved: the questions asked on leaving (the
 * history to the --history file [Y/n]: n; a file name: Enter; the /set
 * changes into settings.json [y/N]: Enter) are answered; then the child
 * must exit with status 0 (within PTY_QUIET_MS of silence). */
static inline void pty_finish(int m, pid_t pid) {
    pty_type(m, "/quit\r");
    static char tail[4096];
    size_t tl = 0;
    int st = 0;
    for (int waited = 0;; ) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        assert_true(r >= 0);
        if (r == pid) {
            break;
        }
        if (waited >= PTY_QUIET_MS) {
            kill(pid, SIGKILL);
            fail_msg("the CLI did not exit after /quit; it shows:\n%s", tail);
        }
        struct pollfd p = {m, POLLIN, 0};
        int got = poll(&p, 1, 100);
        waited += got > 0 ? 0 : 100;
        if (got <= 0) {
            continue;
        }
        if (tl > sizeof tail - 512) { /* keep the end */
            memmove(tail, tail + tl - 256, 256);
            tl = 256;
        }
        ssize_t n = read(m, tail + tl, sizeof tail - 1 - tl);
        if (n <= 0) {
            continue; /* the child is gone: waitpid says so */
        }
        size_t from = tl;
        for (ssize_t i = 0; i < n; i++) { /* NUL padding dropped */
            char c = tail[from + (size_t)i];
            if (c != '\0') {
                tail[tl++] = c;
            }
        }
        tail[tl] = '\0';
        const char *answer = strstr(tail, "? [Y/n] ") != NULL ? "n\r"
                             : strstr(tail, "leave without saving)? ") != NULL ||
                                     strstr(tail, "? [y/N] ") != NULL
                                 ? "\r"
                                 : NULL;
        if (answer != NULL) {
            pty_type(m, answer);
            tl = 0;
            tail[0] = '\0';
        }
    }
    close(m);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    pty_screen_len = 0;
}

#endif /* CTXC_TEST_PTY_H */
