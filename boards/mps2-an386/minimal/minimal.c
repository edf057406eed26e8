/*
 * The minimal profile (issue 14): what a headless firmware that only keeps
 * its history under a token budget pays in flash. Built against
 * libctxc_minimal.a: top-down-truncation only, no settings commands or
 * completion (CTXC_CFG_COMMANDS=0), no prompt table (it follows the LLM
 * strategies, left out), no providers, no work-area index. Its settings
 * come from typed calls only (ctxc_settings_set_u32...). It appends
 * entries as a device would (no JSONL import), lets before_send keep the
 * history under the limit, and checks that it did; exits 0 on success
 * (QEMU passes the status on). The library's share of the linked image is
 * read from the link map (test/embedded/minimal_size.py).
 */
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "ctxc/ctxc.h"

#define ENTRIES 64
/* The history and the work area in the board's uninitialised RAM section
 * (.noinit, mps2-an386.ld), as an integrator puts an arena in another RAM
 * bank: check_placement.py checks the symbols' section in the image. */
#define NOINIT __attribute__((section(".noinit.ctxc")))
CTXC_HISTORY_DEFINE_ATTR(hist, ENTRIES, 16384, NOINIT);
CTXC_WORK_DEFINE_ATTR(work, ENTRIES, 1024, NOINIT);
static ctxc_settings_store_t settings;
static ctxc_session_t session;

static void say(const char *s) { board_write(s, strlen(s)); }

/* Stack of one call, as the scenario image measures it: the free stack is
 * painted below this frame, and the deepest word written is found after
 * the call (the linker script gives the stack's lower end). */
extern uint32_t __stack_limit__[];
#define PAINT 0xC5AC5AC5u
static uint32_t *painted_top;

__attribute__((noinline)) static void paint(void) {
    uint32_t *sp;
    __asm__ volatile("mov %0, sp" : "=r"(sp));
    painted_top = sp - 16;
    for (uint32_t *p = __stack_limit__; p < painted_top; p++) {
        *(volatile uint32_t *)p = PAINT;
    }
}

__attribute__((noinline)) static size_t used_below(const volatile void *frame) {
    const uint32_t *p = __stack_limit__;
    while (p < painted_top && *p == PAINT) {
        p++;
    }
    return (size_t)((uintptr_t)frame - (uintptr_t)p);
}

static void say_num(size_t v) {
    char buf[16];
    size_t k = sizeof buf;
    buf[--k] = '\0';
    do {
        buf[--k] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    say(buf + k);
}

static int fail(const char *what, const ctxc_error_t *err) {
    say("minimal: ");
    say(what);
    say(": ");
    say(ctxc_error_message(err));
    say("\n");
    return 1;
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    ctxc_error_t err;
    ctxc_settings_init(&settings, NULL);
    /* typed calls on setting ids only: no key is looked up by name */
    if (ctxc_settings_set_enum_index(
            &settings, CTXC_SETTING_COMPRESSION_STRATEGY,
            CTXC_STRATEGY_TOP_DOWN_TRUNCATION, &err) != CTXC_OK ||
        ctxc_settings_set_u32(&settings, CTXC_SETTING_CONTEXT_LIMIT, 400,
                              &err) != CTXC_OK ||
        ctxc_settings_set_ratio(&settings, CTXC_SETTING_COMPRESSION_THRESHOLD,
                                800, &err) != CTXC_OK) {
        return fail("settings", &err);
    }
    /* a strategy this build left out is refused when it is selected */
    if (ctxc_settings_set_enum_index(
            &settings, CTXC_SETTING_COMPRESSION_STRATEGY,
            CTXC_STRATEGY_MIDDLE_OUT, &err) != CTXC_E_UNKNOWN_STRATEGY) {
        say("minimal: middle-out was accepted\n");
        return 1;
    }
    /* the command layer is not in this build */
    if (ctxc_settings_command(&settings, "/set context-limit 1", NULL, NULL,
                              NULL) != CTXC_E_UNAVAILABLE) {
        say("minimal: the command layer answered\n");
        return 1;
    }
    if (ctxc_session_init(&session, &hist, &work, &settings, &err) != CTXC_OK ||
        ctxc_session_check(&session, &err) != CTXC_OK) {
        return fail("session", &err);
    }
    static const char *const lines[] = {
        "the sensor reads 21.5 degrees in the living room",
        "turn the heating down by one degree after midnight",
        "schedule the kitchen lights for seven in the morning",
        "what was the lowest temperature this week and when"};
    size_t stack_max = 0;
    for (int i = 0; i < 48; i++) {
        ctxc_block_t b;
        memset(&b, 0, sizeof b);
        b.type = CTXC_BLOCK_TEXT;
        b.u.text.text = ctxc_str(lines[i % 4]);
        ctxc_entry_in_t in = {i % 2 ? CTXC_SPEAKER_AI : CTXC_SPEAKER_HUMAN, &b,
                              1, CTXC_STR_ABSENT};
        if (ctxc_session_add(&session, &in, &err) != CTXC_OK) {
            return fail("add", &err);
        }
        volatile uint32_t anchor = 0;
        paint();
        ctxc_status_t st = ctxc_session_before_send(&session, 0, NULL, &err);
        size_t used = used_below((const volatile void *)&anchor);
        stack_max = used > stack_max ? used : stack_max;
        if (st != CTXC_OK) {
            return fail("before_send", &err);
        }
    }
    if (ctxc_history_tokens(&hist) > 400) {
        say("minimal: the history is over its limit\n");
        return 1;
    }
    say("minimal: ctxc_session_before_send (top-down-truncation) stack ");
    say_num(stack_max);
    say(" bytes\n");
    say("minimal: ok, history kept under its limit\n");
    return 0;
}
