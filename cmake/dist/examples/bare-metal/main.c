/*
 * ctxc on a bare-metal Cortex-M4: the minimum calls.
 *
 *   1. storage, all static: the history, the work area, the settings
 *      store, the session (no heap anywhere)
 *   2. settings by typed calls: the strategy and the model's context window
 *   3. a session over them, with a port that logs
 *   4. each turn: ctxc_session_add_room() the new entries (it makes room
 *      first when the slots or the arena are full), then
 *      ctxc_session_before_send() before the history goes to the model
 *      (it compresses when the tokens, the slots or the arena near their
 *      end)
 *
 * It plays 40 turns of a conversation (a question, an answer) into a
 * history for a 600-token context window and prints, at the end,
 *
 *   example: 40 turns, C compressions, N entries, T tokens (limit 600)
 *   example: settings store S bytes, history H bytes
 *
 * then exits 0 (QEMU's exit status), or prints "example: FAIL: ..." and
 * exits 1.
 */
#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc.h"
#include "example_port.h"

#define CONTEXT_LIMIT 600u
#define TURNS 40u

/* 1. storage (sizes from example_config.h) */
CTXC_HISTORY_DEFINE_DEFAULT(history);
CTXC_WORK_DEFINE_DEFAULT(work);
static ctxc_settings_store_t settings;
static ctxc_session_t session;
static ctxc_port_t port;

static void put_u(uint64_t v) {
    char buf[24];
    size_t i = sizeof buf - 1;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + (char)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    console_write(&buf[i]);
}

static int fail(const char *what, const ctxc_error_t *err) {
    console_write("example: FAIL: ");
    console_write(what);
    console_write(": ");
    console_write(ctxc_error_message(err));
    console_write("\n");
    return 1;
}

/* One text entry. */
static ctxc_status_t add(ctxc_speaker_t who, const char *text,
                         ctxc_error_t *err) {
    ctxc_block_t b = {0};
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(text);
    ctxc_entry_in_t in = {0};
    in.speaker = who;
    in.blocks = &b;
    in.block_count = 1;
    return ctxc_session_add_room(&session, &in, NULL, err);
}

int main(void) {
    ctxc_error_t err;

    /* 2. settings: no filesystem, typed calls on setting ids */
    ctxc_settings_init(&settings, NULL);
    if (ctxc_settings_set_enum(&settings, CTXC_SETTING_COMPRESSION_STRATEGY,
                               "top-down-truncation", &err) != CTXC_OK ||
        ctxc_settings_set_u32(&settings, CTXC_SETTING_CONTEXT_LIMIT,
                              CONTEXT_LIMIT, &err) != CTXC_OK) {
        return fail("settings", &err);
    }

    /* 3. the session, with a port that logs each compression */
    example_port_init(&port);
    if (ctxc_session_init(&session, &history, &work, &settings, &err) !=
        CTXC_OK) {
        return fail("session", &err);
    }
    ctxc_session_set_port(&session, &port);

    /* 4. the conversation */
    unsigned compressions = 0;
    for (unsigned t = 0; t < TURNS; t++) {
        if (add(CTXC_SPEAKER_HUMAN,
                "What does the sensor on channel three read now, and is "
                "it within the range we agreed on yesterday?",
                &err) != CTXC_OK) {
            return fail("add", &err);
        }
        ctxc_send_report_t rep;
        if (ctxc_session_before_send(&session, 0, &rep, &err) != CTXC_OK) {
            return fail("before_send", &err);
        }
        compressions += rep.compressed ? 1u : 0u;
        /* ... send the history to the model, get its answer ... */
        if (add(CTXC_SPEAKER_AI,
                "Channel three reads 21.4 degrees, inside the agreed range "
                "of 18 to 24 degrees; no action is needed.",
                &err) != CTXC_OK) {
            return fail("add", &err);
        }
    }

    console_write("example: ");
    put_u(TURNS);
    console_write(" turns, ");
    put_u(compressions);
    console_write(" compressions, ");
    put_u(ctxc_history_count(&history));
    console_write(" entries, ");
    put_u(ctxc_history_tokens(&history));
    console_write(" tokens (limit ");
    put_u(CONTEXT_LIMIT);
    console_write(")\nexample: settings store ");
    put_u(sizeof settings);
    console_write(" bytes, history ");
    put_u(CTXC_CFG_HISTORY_ARENA_BYTES);
    console_write(" bytes\n");
    return ctxc_history_tokens(&history) <= CONTEXT_LIMIT && compressions > 0
               ? 0
               : 1;
}
