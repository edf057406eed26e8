/*
 * ctxc host CLI — while a command waits on a model: Ctrl-C, and the status
 * line.
 *
 * Ctrl-C: cli_interrupt_install() catches SIGINT (without SA_RESTART, so a
 * wait in poll() ends at once) and only sets a flag. The port's stop hook
 * (cli_stop_hook, set on the CLI's port by cli_llm_setup) takes the flag
 * between two steps of a blocking call: the library cancels the call and
 * answers CTXC_E_CANCELLED with nothing changed. The prompt's reader takes
 * it too (cli_repl.c).
 *
 * The status line: between cli_status_begin() and cli_status_end(), every
 * call of the stop hook redraws (at most every 100 ms) one line on stderr:
 *
 *   [summarising 87 entries (21400 tokens) with middle-out - openai
 *    gpt-4o-mini - 3.2 s, waiting for the answer]
 *   [... - 12.0 s, attempt 1 failed: attempt 2 of 3 in 4 s]
 *
 * cut to the terminal's width (a line that wraps could not be redrawn in
 * place). Only when stderr is a terminal: in a pipe or a file nothing of it
 * is written. cli_status_clear() wipes it before other text goes to the
 * terminal (a streamed reply: not redrawn after that); cli_status_end()
 * wipes it for good.
 *
 * A stall: once the reply's text has started, no byte for
 * CLI_STALL_NOTICE_MS (the port's clock; the environment variable
 * CTXC_STALL_NOTICE_MS sets another) shows, after the text so far,
 *
 *   [no bytes for 12 s; Ctrl-C stops]
 *
 * (the cursor saved before it, ESC 7, and put back with the rest of the
 * screen erased, ESC 8 ESC [J, when the next piece comes or the call ends).
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "ctxc/provider.h"

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig) {
    (void)sig;
    interrupted = 1;
}

void cli_interrupt_install(void) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; /* no SA_RESTART: poll() and read() end with EINTR */
    (void)sigaction(SIGINT, &sa, NULL);
}

bool cli_interrupt_take(void) {
    bool was = interrupted != 0;
    interrupted = 0;
    return was;
}

static struct {
    bool active;
    bool shown;   /* the line is on the terminal now */
    bool silent;  /* other text came: not drawn again until the end */
    bool tty;
    char what[160];
    char who[160];
    const ctxc_provider_client_t *client;
    double t0, drawn;
    /* after the text started: the bytes received, when they last grew
     * (port clock), the stall notice on the screen and its seconds */
    size_t received;
    uint64_t bytes_at;
    bool stalled;
    uint64_t stall_s;
} st;

#define CLI_STALL_NOTICE_MS 10000u

static uint64_t stall_notice_ms(void) {
    const char *v = getenv("CTXC_STALL_NOTICE_MS");
    char *end = NULL;
    unsigned long long n = v != NULL ? strtoull(v, &end, 10) : 0;
    return v != NULL && end != v && *end == '\0' && n > 0 ? (uint64_t)n
                                                          : CLI_STALL_NOTICE_MS;
}

static void stall_wipe(void) {
    if (st.stalled) {
        fputs("\0338\033[J", stderr);
        fflush(stderr);
        st.stalled = false;
    }
}

static double mono_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

void cli_status_begin(const char *what,
                      const ctxc_provider_client_t *client,
                      const char *provider, const char *model) {
    memset(&st, 0, sizeof st);
    st.active = true;
    st.tty = isatty(2) != 0;
    st.client = client;
    snprintf(st.what, sizeof st.what, "%s", what);
    if (provider != NULL && model != NULL) {
        snprintf(st.who, sizeof st.who, "%s %s", provider, model);
    }
    st.t0 = mono_ms();
    (void)cli_interrupt_take(); /* a Ctrl-C from before is not for this */
}

static void wipe(void) {
    if (st.shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        st.shown = false;
    }
}

void cli_status_clear(void) {
    wipe();
    stall_wipe();
    if (!st.silent) { /* the text starts: a stall counts from here */
        st.silent = true;
        ctxc_provider_progress_t p;
        ctxc_provider_progress(st.client, &p);
        st.received = p.received;
        st.bytes_at = ctxc_port_now_ms(cli_llm_port());
    }
}

void cli_status_end(void) {
    wipe();
    stall_wipe();
    st.active = false;
}

/* Once the text has started: the stall notice when no byte came for a
 * while, its seconds redrawn. */
static void stall_check(void) {
    ctxc_provider_progress_t p;
    ctxc_provider_progress(st.client, &p);
    uint64_t now = ctxc_port_now_ms(cli_llm_port());
    if (p.received != st.received || now < st.bytes_at) {
        st.received = p.received;
        st.bytes_at = now;
        stall_wipe();
        return;
    }
    uint64_t quiet = now - st.bytes_at;
    if (quiet < stall_notice_ms() || (st.stalled && quiet / 1000u == st.stall_s)) {
        return;
    }
    fflush(stdout); /* the text so far stays before it */
    if (st.stalled) {
        fputs("\0338\033[J", stderr);
    }
    st.stall_s = quiet / 1000u;
    fprintf(stderr, "\0337 [no bytes for %" PRIu64 " s; Ctrl-C stops]",
            st.stall_s);
    fflush(stderr);
    st.stalled = true;
}

/* The line for the moment: what, who, elapsed, the call's phase. */
static void status_text(char *buf, size_t cap, double now) {
    if (st.who[0] == '\0') { /* the summary's model, once resolved */
        const ctxc_llm_t *used = cli_llm_used();
        if (used != NULL && used->provider != NULL && used->model != NULL) {
            snprintf(st.who, sizeof st.who, "%s %s", used->provider,
                     used->model);
        }
    }
    ctxc_provider_progress_t p;
    ctxc_provider_progress(st.client, &p);
    char phase[96] = "";
    switch (p.phase) {
    case CTXC_PROVIDER_REQUEST:
        snprintf(phase, sizeof phase, ", waiting for the answer%s",
                 p.attempt > 1 ? " (again)" : "");
        break;
    case CTXC_PROVIDER_ANSWER:
        snprintf(phase, sizeof phase, ", %zu bytes received", p.received);
        break;
    case CTXC_PROVIDER_RETRY_PAUSE:
        snprintf(phase, sizeof phase,
                 ", attempt %u failed: attempt %u of %u in %u s",
                 (unsigned)(p.attempt - 1u), (unsigned)p.attempt,
                 (unsigned)p.attempts,
                 (unsigned)((p.retry_in_ms + 999u) / 1000u));
        break;
    default:
        break;
    }
    snprintf(buf, cap, "[%s%s%s - %.1f s%s; Ctrl-C stops]", st.what,
             st.who[0] != '\0' ? " - " : "", st.who, (now - st.t0) / 1000.0,
             phase);
}

bool cli_stop_hook(void *ctx) {
    (void)ctx;
    if (interrupted != 0) {
        interrupted = 0;
        return true;
    }
    if (st.active && st.tty && st.silent && st.client != NULL) {
        stall_check();
        return false;
    }
    if (!st.active || !st.tty || st.silent) {
        return false;
    }
    double now = mono_ms();
    if (st.shown && now - st.drawn < 100.0) {
        return false;
    }
    char line[512];
    status_text(line, sizeof line, now);
    size_t width = 80;
    struct winsize ws;
    if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 20) {
        width = ws.ws_col;
    }
    fflush(stdout); /* what came before stays before */
    fprintf(stderr, "\r\033[K%.*s", (int)(width - 1), line);
    fflush(stderr);
    st.shown = true;
    st.drawn = now;
    return false;
}
