/* What the compression job fragments of docs/compression-job.md refer to
 * and do not declare themselves: the application's session (set up
 * elsewhere: history, work area, settings, port, LLM resolver) and the
 * board's own functions, stubbed. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc.h"

static ctxc_session_t session;
static ctxc_error_t err;

/* A finished voice turn from the speech recogniser, if one is ready. */
static bool voice_turn_ready(char *text, size_t cap) {
    (void)text, (void)cap;
    return false;
}
/* The rest of the main loop: audio, LEDs, buttons. */
static void audio_and_ui_work(void) {}
/* lwIP without an OS: the driver's input and timers. */
static void net_poll(void) {}
/* The RTOS's sleep, mutex, and a queue of finished turns. */
static void task_sleep_ms(uint32_t ms) { (void)ms; }
static bool turn_queue_take(char *text, size_t cap, uint32_t wait_ms) {
    (void)text, (void)cap, (void)wait_ms;
    return false;
}
static void log_text(const char *s) { (void)s; }
