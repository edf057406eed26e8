/*
 * ctxc on a bare-metal Cortex-M4: the minimum calls.
 *
 *   1. storage, all static: the history, the work area, the settings
 *      store, the session (no heap anywhere)
 *   2. ctxc_session_setup(): the settings store, the session and the port
 *      wired in one call, with the strategy and the model's context window
 *   3. each turn: ctxc_session_add_room() the new entries (it makes room
 *      first when the slots or the arena are full), then
 *      ctxc_session_before_send() before the history goes to the model
 *      (it compresses when the tokens, the slots or the arena near their
 *      end)
 *   4. every fifth turn the model calls a tool whose answer is plain text
 *      ("temp 21.4C"): ctxc_json_from_text() makes it the JSON string a
 *      tool result is
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

/* A tool call and its plain-text result: the parameters and the result
 * are JSON values, and the text becomes a JSON string (any bytes: quotes,
 * control characters and invalid UTF-8 are escaped or replaced). */
static ctxc_status_t tool_turn(unsigned t, ctxc_error_t *err) {
    static char json[64]; /* the escaped result; 12 bytes here */
    char id[8] = "call";
    id[4] = (char)('0' + t / 10u);
    id[5] = (char)('0' + t % 10u);
    id[6] = '\0';
    ctxc_block_t b = {0};
    b.type = CTXC_BLOCK_TOOL_CALL;
    b.u.tool_call.id = ctxc_str(id);
    b.u.tool_call.name = ctxc_str("read_sensor");
    b.u.tool_call.parameters = ctxc_str("{\"channel\":3}");
    ctxc_entry_in_t in = {0};
    in.speaker = CTXC_SPEAKER_AI;
    in.blocks = &b;
    in.block_count = 1;
    ctxc_status_t st = ctxc_session_add_room(&session, &in, NULL, err);
    ctxc_str_t result;
    if (st == CTXC_OK) {
        st = ctxc_json_from_text(ctxc_str("temp 21.4C"), json, sizeof json,
                                 &result, err);
    }
    if (st == CTXC_OK) {
        b.type = CTXC_BLOCK_TOOL_RESPONSE;
        b.u.tool_response.call_id = ctxc_str(id);
        b.u.tool_response.tool_name = ctxc_str("read_sensor");
        b.u.tool_response.result = result;
        b.u.tool_response.error = CTXC_STR_ABSENT;
        in.speaker = CTXC_SPEAKER_TOOL;
        st = ctxc_session_add_room(&session, &in, NULL, err);
    }
    return st;
}

int main(void) {
    ctxc_error_t err;

    /* 2. settings, session and a port that logs each compression, in one
     * call: no filesystem, so the settings are the ones given here */
    example_port_init(&port);
    ctxc_session_setup_t cfg = {0};
    cfg.history = &history;
    cfg.work = &work;
    cfg.settings = &settings;
    cfg.port = &port;
    cfg.strategy = "top-down-truncation";
    cfg.context_limit = CONTEXT_LIMIT;
    if (ctxc_session_setup(&session, &cfg, &err) != CTXC_OK) {
        return fail("setup", &err);
    }

    /* 3. the conversation */
    unsigned compressions = 0;
    for (unsigned t = 0; t < TURNS; t++) {
        if (t % 5u == 4u && tool_turn(t, &err) != CTXC_OK) {
            return fail("tool", &err);
        }
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
