/*
 * turn_cost: what one steady-state turn costs (issue 37). A history is
 * filled to ENTRIES entries with voice-assistant turns; then TURNS more
 * turns are measured, each one human entry and one ai entry appended (every
 * other turn the ai entry holds a tool call and a tool entry with its
 * result follows), then ctxc_session_before_send() with STRATEGY and
 * nothing to compress (the context limit, the slots and the arena far
 * away).
 *
 *   turn_cost ENTRIES TURNS STRATEGY [once]
 *
 * Prints the mean wall time of a turn (the minimum over 5 runs of TURNS
 * turns, each on a history filled anew). With `once`, the TURNS turns run
 * once and nothing is timed: for valgrind's callgrind, whose
 * `--toggle-collect=measured_turns` counts their instructions
 * (test/bench/turn_cost.sh). Asserts nothing.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctxc/ctxc.h"

#define MAX_ENTRIES 8192u
#define SLOTS (2u * MAX_ENTRIES) /* far from the entries threshold */
#define ARENA (SLOTS * 320u)

static ctxc_slot_t slots[SLOTS];
static uint8_t arena[ARENA] __attribute__((aligned(8)));
#ifdef CTXC_HISTORY_ID_FILTER_BYTES
static uint8_t id_filter[CTXC_HISTORY_ID_FILTER_BYTES(SLOTS)];
#endif
static uint8_t work_mem[CTXC_WORK_BYTES(SLOTS, 32768)]
    __attribute__((aligned(8)));
static ctxc_history_t hist;
static ctxc_work_t work;
static ctxc_settings_store_t set;
static ctxc_session_t session;
static unsigned turn_no;

static void fail(const char *what, const ctxc_error_t *err) {
    fprintf(stderr, "turn_cost: %s: %s\n", what, err->message);
    exit(1);
}

static void add(ctxc_speaker_t sp, const ctxc_block_t *b, size_t n) {
    ctxc_entry_in_t in = {sp, b, n, CTXC_STR_ABSENT};
    ctxc_error_t err;
    if (ctxc_session_add(&session, &in, &err) != CTXC_OK) {
        fail("add", &err);
    }
}

static ctxc_block_t text_block(const char *s) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(s);
    return b;
}

/* One turn as a voice assistant makes it. */
static void one_turn(void) {
    static const char *const asks[] = {
        "What is the weather like in Oslo tomorrow morning?",
        "Turn the kitchen lights down to twenty percent, please.",
        "Set a timer for twelve minutes for the pasta.",
        "Read me the note I saved about the dentist appointment.",
    };
    static const char *const answers[] = {
        "Tomorrow morning in Oslo: light rain, four degrees, wind from the "
        "south-west.",
        "Done: the kitchen lights are at twenty percent.",
        "A twelve-minute timer is running; I will tell you when it ends.",
        "Your note says: dentist on Thursday at half past nine.",
    };
    unsigned t = turn_no++;
    ctxc_block_t h = text_block(asks[t % 4]);
    add(CTXC_SPEAKER_HUMAN, &h, 1);
    if (t % 2 == 0) {
        ctxc_block_t a = text_block(answers[t % 4]);
        add(CTXC_SPEAKER_AI, &a, 1);
    } else {
        char id[24], params[64];
        snprintf(id, sizeof id, "call_%u", t);
        snprintf(params, sizeof params, "{\"file_path\":\"notes/%u.txt\"}", t);
        ctxc_block_t b[2] = {text_block("Let me look that up."),
                             text_block("")};
        memset(&b[1], 0, sizeof b[1]);
        b[1].type = CTXC_BLOCK_TOOL_CALL;
        b[1].u.tool_call.id = ctxc_str(id);
        b[1].u.tool_call.name = ctxc_str("read_file");
        b[1].u.tool_call.parameters = ctxc_str(params);
        add(CTXC_SPEAKER_AI, b, 2);
        ctxc_block_t r;
        memset(&r, 0, sizeof r);
        r.type = CTXC_BLOCK_TOOL_RESPONSE;
        r.u.tool_response.call_id = ctxc_str(id);
        r.u.tool_response.tool_name = ctxc_str("read_file");
        r.u.tool_response.result =
            ctxc_str("\"dentist on Thursday at half past nine\"");
        add(CTXC_SPEAKER_TOOL, &r, 1);
    }
    ctxc_send_report_t rep;
    ctxc_error_t err;
    if (ctxc_session_before_send(&session, 0, &rep, &err) != CTXC_OK) {
        fail("before_send", &err);
    }
    if (rep.compressed) {
        fprintf(stderr, "turn_cost: a turn compressed: not a steady state\n");
        exit(1);
    }
}

/* The measured turns (callgrind: --toggle-collect=measured_turns). */
__attribute__((noinline)) void measured_turns(unsigned turns);
__attribute__((noinline)) void measured_turns(unsigned turns) {
    for (unsigned i = 0; i < turns; i++) {
        one_turn();
    }
}

static double now_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill(size_t entries, const char *strategy) {
    ctxc_error_t err;
    turn_no = 0;
    if (ctxc_history_init(&hist, slots, SLOTS, arena, sizeof arena, &err) !=
            CTXC_OK ||
        ctxc_work_init(&work, SLOTS, 32768, work_mem, sizeof work_mem, &err) !=
            CTXC_OK) {
        fail("init", &err);
    }
#ifdef CTXC_HISTORY_ID_FILTER_BYTES /* (the baseline of an older tree) */
    /* what CTXC_HISTORY_DEFINE gives a history */
    ctxc_history_set_id_filter(&hist, id_filter, sizeof id_filter);
#endif
    ctxc_settings_init(&set, NULL);
    if (ctxc_settings_set(&set, "compression.strategy", strategy, &err) !=
            CTXC_OK ||
        ctxc_settings_set(&set, "context-limit", "100000000", &err) !=
            CTXC_OK ||
        ctxc_session_init(&session, &hist, &work, &set, &err) != CTXC_OK) {
        fail("settings", &err);
    }
    ctxc_session_set_workspace(&session, "/home/user");
    while (ctxc_history_count(&hist) < entries) {
        one_turn();
    }
}

int main(int argc, char **argv) {
    if (argc < 4 || argc > 5) {
        fprintf(stderr, "usage: turn_cost ENTRIES TURNS STRATEGY [once]\n");
        return 2;
    }
    size_t entries = (size_t)strtoul(argv[1], NULL, 10);
    unsigned turns = (unsigned)strtoul(argv[2], NULL, 10);
    if (entries < 2 || entries > MAX_ENTRIES || turns == 0) {
        fprintf(stderr, "turn_cost: 2 <= ENTRIES <= %u, TURNS > 0\n",
                MAX_ENTRIES);
        return 2;
    }
    fill(entries, argv[3]);
    measured_turns(turns); /* the turns callgrind counts */
    if (argc == 5) {
        return 0;
    }
    double best = 0;
    for (int run = 0; run < 5; run++) {
        fill(entries, argv[3]);
        double t0 = now_s();
        measured_turns(turns);
        double dt = (now_s() - t0) / turns;
        best = run == 0 || dt < best ? dt : best;
    }
    printf("turn_cost: %s, %zu entries: %.2f us a turn (min of 5 runs of %u "
           "turns)\n",
           argv[3], entries, best * 1e6, turns);
    return 0;
}
