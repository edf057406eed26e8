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
 */
#define _POSIX_C_SOURCE 200809L

#include <signal.h>
#include <stdio.h>
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
} st;

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
    st.silent = true;
}

void cli_status_end(void) {
    wipe();
    st.active = false;
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
