/*
 * The on-target scenario: what a firmware integrating ctxc does, through the
 * public API only, over histories kept in flash (scenario_data.c):
 *
 *   import          ctxc_import_text() of the whole history
 *   settings        the settings store on the romfs port (read-only): the
 *                   strategy, threshold and context limit set with
 *                   ctxc_settings_command() and read back through the typed
 *                   accessors; a persistent /settings set must answer
 *                   CTXC_E_READ_ONLY and change nothing
 *   before_send     ctxc_session_before_send() with high-density and with
 *                   top-down-truncation (the LLM-free strategies; middle-out
 *                   and one-shot need a provider, the lwIP image runs them)
 *   compress        ctxc_session_compress() with top-down-truncation and
 *                   with high-density, each on a fresh import
 *   density         ctxc_session_optimize() (the density step)
 *   no-space        an import into a small arena until CTXC_E_NO_SPACE: the
 *                   history is byte-identical afterwards (CRC32 of its
 *                   arena bytes and slots, and of its export)
 *   voice day       10,000 short voice turns into 128 slots and a 32 KiB
 *                   arena (../voice/voice_day.h), once with each LLM-free
 *                   strategy, with its own checks after every append and
 *                   its own table (after the histories' rows)
 *
 * After every operation: the token total equals the sum of the entries'
 * estimates, and the pairing invariant holds (the export re-imports into a
 * second history, with the same entry count, tokens and export CRC).
 * Prints one table row per history x operation and returns the number of
 * failed checks. The same file runs on the target and on the host; the rows
 * must be identical.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctxc/ctxc.h"
#include "ctxc_romfs.h"

#include "../board_sizes.h"
#include "../common/image_util.h"
#include "../voice/voice_day.h"
#include "scenario.h"

#define SMALL_ARENA_BYTES (8u * 1024u) /* the arena-exhaustion case */
#define EXPORT_CAP (160u * 1024u)      /* an export of a full arena */
#define WORKSPACE "/home/dev/thermo"   /* the example session's cwd */

CTXC_HISTORY_DEFINE(hist, MPS2_HISTORY_MAX_ENTRIES, MPS2_HISTORY_ARENA_BYTES);
CTXC_HISTORY_DEFINE(check_hist, MPS2_HISTORY_MAX_ENTRIES,
                    MPS2_HISTORY_ARENA_BYTES);
CTXC_HISTORY_DEFINE(small_hist, MPS2_HISTORY_MAX_ENTRIES, SMALL_ARENA_BYTES);
CTXC_WORK_DEFINE(work, MPS2_HISTORY_MAX_ENTRIES, MPS2_WORK_SCRATCH_BYTES);
static ctxc_import_t imp;
static ctxc_settings_store_t settings;
static ctxc_session_t session;
static ctxc_error_t err;
static char export_buf[EXPORT_CAP];

static unsigned flags_;
static bool planted;
static unsigned checks, failed;

static void fail(const char *hname, const char *op, const char *what,
                 ctxc_status_t st) {
    failed++;
    img_put_s("FAIL: ");
    img_put_s(hname);
    img_put_s(" ");
    img_put_s(op);
    img_put_s(": ");
    img_put_s(what);
    img_put_s(" (");
    img_put_s(ctxc_status_name(st));
    if (st != CTXC_OK) {
        img_put_s(": ");
        img_put_s(ctxc_error_message(&err));
    }
    img_put_s(")");
    img_flush_line();
}

static bool check(bool ok, const char *hname, const char *op, const char *what,
                  ctxc_status_t st) {
    checks++;
    if (!ok) {
        fail(hname, op, what, st);
    }
    return ok;
}

/* ---- stack measurement --------------------------------------------------- */

enum {
    EP_IMPORT,
    EP_EXPORT,
    EP_SETTINGS_LOAD,
    EP_SETTINGS_COMMAND,
    EP_BEFORE_SEND,
    EP_BEFORE_SEND_TD,
    EP_COMPRESS_TD,
    EP_COMPRESS_HD,
    EP_OPTIMIZE,
    EP_TURN,
    EP_COUNT
};
static const char *const ep_names[EP_COUNT] = {
    "ctxc_import_text",
    "ctxc_export",
    "ctxc_settings_load",
    "ctxc_settings_command",
    "ctxc_session_before_send (high-density)",
    "ctxc_session_before_send (top-down-truncation)",
    "ctxc_session_compress (top-down-truncation)",
    "ctxc_session_compress (high-density)",
    "ctxc_session_optimize (density step)",
    "a steady-state turn (high-density: appends, before_send)",
};
static size_t ep_max[EP_COUNT]; /* the deepest stack over every call */
/* Board ticks of the longest call on the largest history (most entries;
 * the 256-entry ones), and that history's name and entries (lines). */
static uint32_t ep_ticks[EP_COUNT];
static const char *ep_hist[EP_COUNT];
static size_t ep_entries[EP_COUNT];
static const char *cur_hist = "-";
static size_t cur_entries;

static void note_stack(unsigned ep, size_t used) {
    if (used > ep_max[ep]) {
        ep_max[ep] = used;
    }
    uint32_t t = scn_stack_ticks();
    if (ep_hist[ep] == NULL || cur_entries > ep_entries[ep] ||
        (cur_entries == ep_entries[ep] && t > ep_ticks[ep])) {
        ep_ticks[ep] = t;
        ep_hist[ep] = cur_hist;
        ep_entries[ep] = cur_entries;
    }
}

/* Measures one call: st = call, the stack it used noted under ep. */
#define MEASURED(ep, st, call)                                                 \
    do {                                                                       \
        char anchor_ = 0;                                                      \
        scn_stack_begin(&anchor_);                                             \
        (st) = (call);                                                         \
        note_stack((ep), scn_stack_end(&anchor_));                             \
    } while (0)

/* ---- export ---------------------------------------------------------------
 */

static ctxc_status_t export_to(const ctxc_history_t *h, img_sink_t *s,
                               bool measure) {
    ctxc_status_t st;
    s->len = 0;
    s->crc = 0;
    if (measure) {
        MEASURED(EP_EXPORT, st, ctxc_export(h, img_sink_write, s, &err));
    } else {
        st = ctxc_export(h, img_sink_write, s, &err);
    }
    return st;
}

/* Token totals and the pairing invariant of `h` after an operation; the
 * CRC32 of its export into *crc. */
static void check_history(const char *hname, const char *op,
                          const ctxc_history_t *h, uint32_t *crc) {
    img_sink_t out = {export_buf, sizeof export_buf, 0, 0};
    *crc = 0;
    check(ctxc_history_tokens_estimated(h) == img_entry_token_sum(h), hname, op,
          "token total is the sum of the entry estimates", CTXC_OK);
    ctxc_status_t st = export_to(h, &out, true);
    if (!check(st == CTXC_OK, hname, op, "export", st)) {
        return;
    }
    *crc = out.crc;
    if ((flags_ & SCN_PLANT_FAULT) != 0 && !planted && out.len > 0) {
        export_buf[0] ^= 0x20; /* '{' -> '[': the self-test's planted fault */
        planted = true;
    }
    ctxc_history_clear(&check_hist);
    st = ctxc_import_text(&imp, &check_hist, export_buf, out.len,
                          CTXC_FORMAT_ICONTENT, &err);
    if (!check(st == CTXC_OK, hname, op, "export re-imports (pairing)", st)) {
        return;
    }
    check(ctxc_history_count(&check_hist) == ctxc_history_count(h), hname, op,
          "re-import has the same entries", CTXC_OK);
    check(ctxc_history_tokens_estimated(&check_hist) ==
              ctxc_history_tokens_estimated(h),
          hname, op, "re-import has the same tokens", CTXC_OK);
    img_sink_t again = {NULL, 0, 0, 0};
    st = export_to(&check_hist, &again, false);
    check(st == CTXC_OK && again.crc == out.crc, hname, op,
          "re-import exports the same bytes", st);
}

/* ---- table -----------------------------------------------------------------
 */

static void row(const char *hname, const char *op, ctxc_status_t st, size_t n0,
                uint64_t t0, const ctxc_history_t *h, uint32_t crc) {
    img_put_s("| ");
    img_put_s(hname);
    img_put_pad(12);
    img_put_s("| ");
    img_put_s(op);
    img_put_pad(46);
    img_put_s("| ");
    img_put_s(ctxc_status_name(st));
    img_put_pad(64);
    img_put_s("| ");
    img_put_u(n0);
    img_put_pad(72);
    img_put_s("| ");
    img_put_u(t0);
    img_put_pad(81);
    img_put_s("| ");
    img_put_u(ctxc_history_count(h));
    img_put_pad(89);
    img_put_s("| ");
    img_put_u(ctxc_history_tokens(h));
    img_put_pad(98);
    img_put_s("| ");
    img_put_x32(crc);
    img_put_s(" |");
    img_flush_line();
}

/* ---- operations
 * -------------------------------------------------------------- */

static ctxc_status_t import_input(const scn_input_t *in) {
    ctxc_status_t st;
    ctxc_history_clear(&hist);
    MEASURED(EP_IMPORT, st,
             ctxc_import_text(&imp, &hist, in->text, in->len,
                              CTXC_FORMAT_ICONTENT, &err));
    return st;
}

/* Command output (the settings listing) is counted, not shown. */
static ctxc_status_t discard(void *user, const char *data, size_t len) {
    (void)data;
    *(size_t *)user += len;
    return CTXC_OK;
}

static ctxc_status_t command(const char *cmd) {
    ctxc_status_t st;
    size_t out = 0;
    MEASURED(EP_SETTINGS_COMMAND, st,
             ctxc_settings_command(&settings, cmd, discard, &out, &err));
    return st;
}

static ctxc_status_t set_strategy(const char *name) {
    char cmd[64] = "/set compression.strategy ";
    size_t n = strlen(cmd);
    size_t len = strlen(name);
    if (len >= sizeof cmd - n) {
        return CTXC_E_INVALID_ARG;
    }
    memcpy(cmd + n, name, len + 1);
    return command(cmd);
}

/* Settings for one history: the context limit at 3/4 of its tokens (so
 * every strategy has work to do), threshold 0.8, recency pruning on. */
static void configure(const char *hname, uint64_t tokens) {
    static const char op[] = "settings";
    uint64_t limit = tokens * 3u / 4u;
    char cmd[64] = "/set context-limit ";
    char digits[24];
    size_t n = strlen(cmd), d = 0;
    do {
        digits[d++] = (char)('0' + (int)(limit % 10u));
        limit /= 10u;
    } while (limit != 0);
    while (d > 0) {
        cmd[n++] = digits[--d];
    }
    cmd[n] = '\0';
    ctxc_status_t st = command(cmd);
    check(st == CTXC_OK, hname, op, cmd, st);
    st = command("/set compression-threshold 0.8");
    check(st == CTXC_OK, hname, op, "/set compression-threshold", st);
    st = command("/set compression.density.recencyPruning true");
    check(st == CTXC_OK, hname, op, "/set recencyPruning", st);
    st = set_strategy("high-density");
    check(st == CTXC_OK, hname, op, "/set compression.strategy", st);
    check(ctxc_settings_context_limit(&settings) == tokens * 3u / 4u, hname, op,
          "context-limit reads back", CTXC_OK);
    uint16_t thr = 0;
    check(ctxc_settings_ratio(&settings, CTXC_SETTING_COMPRESSION_THRESHOLD,
                              &thr) &&
              thr == 800,
          hname, op, "compression-threshold reads back 800", CTXC_OK);
    check(ctxc_settings_bool(&settings, CTXC_SETTING_DENSITY_RECENCY_PRUNING),
          hname, op, "recencyPruning reads back", CTXC_OK);
    const ctxc_strategy_t *strategy = NULL;
    st = ctxc_settings_strategy(&settings, &strategy, &err);
    check(st == CTXC_OK && strategy != NULL &&
              strategy->id == CTXC_STRATEGY_HIGH_DENSITY,
          hname, op, "strategy reads back high-density", st);
    /* romfs is read-only: the persistent layer refuses, nothing changes */
    st = command("/settings set context-limit 1000");
    check(st == CTXC_E_READ_ONLY, hname, op,
          "/settings set answers CTXC_E_READ_ONLY on romfs", st);
    check(ctxc_settings_context_limit(&settings) == tokens * 3u / 4u, hname, op,
          "context-limit unchanged after the refused write", CTXC_OK);
}

static void start_session(const char *hname, const char *op) {
    ctxc_status_t st =
        ctxc_session_init(&session, &hist, &work, &settings, &err);
    check(st == CTXC_OK, hname, op, "ctxc_session_init", st);
    ctxc_session_set_workspace(&session, WORKSPACE);
}

/* Operation on a fresh import: row + checks. which: 0 before_send
 * high-density, 1 compress top-down, 2 compress high-density, 3 density
 * step, 4 before_send top-down. */
#define OP_COUNT 5u
static void run_op(const scn_input_t *in, unsigned which) {
    static const char *const ops[OP_COUNT] = {
        "before_send high-density", "compress top-down-truncation",
        "compress high-density", "density step (optimize)",
        "before_send top-down-truncation"};
    const char *op = ops[which];
    ctxc_status_t st = import_input(in);
    if (!check(st == CTXC_OK, in->name, op, "import", st)) {
        return;
    }
    st = set_strategy(which == 1 || which == 4 ? "top-down-truncation"
                                               : "high-density");
    check(st == CTXC_OK, in->name, op, "/set compression.strategy", st);
    start_session(in->name, op);
    size_t n0 = ctxc_history_count(&hist);
    uint64_t t0 = ctxc_history_tokens(&hist);
    ctxc_send_report_t report = {0};
    switch (which) {
    case 0:
    case 4:
        if (which == 0) {
            MEASURED(EP_BEFORE_SEND, st,
                     ctxc_session_before_send(&session, 0, &report, &err));
        } else {
            MEASURED(EP_BEFORE_SEND_TD, st,
                     ctxc_session_before_send(&session, 0, &report, &err));
        }
        check(st != CTXC_OK ||
                  report.tokens_after == ctxc_history_tokens(&hist),
              in->name, op, "report.tokens_after is the history's total", st);
        check(st != CTXC_OK || report.compressed, in->name, op,
              "compressed (over the threshold)", st);
        break;
    case 1:
        MEASURED(EP_COMPRESS_TD, st, ctxc_session_compress(&session, &err));
        break;
    case 2:
        MEASURED(EP_COMPRESS_HD, st, ctxc_session_compress(&session, &err));
        break;
    default:
        MEASURED(EP_OPTIMIZE, st, ctxc_session_optimize(&session, &err));
        break;
    }
    check(st == CTXC_OK, in->name, op, "status", st);
    check(ctxc_history_tokens(&hist) <= t0, in->name, op, "tokens do not grow",
          st);
    uint32_t crc;
    check_history(in->name, op, &hist, &crc);
    row(in->name, op, st, n0, t0, &hist, crc);
}

/* One steady-state turn (issue 37): a human entry and an ai entry
 * appended (every other turn a tool call, and its result), then
 * before_send with nothing to compress (*compressed says if it did). */
static ctxc_status_t steady_turn(unsigned t, bool *compressed) {
    static const char *const asks[] = {"What is on my list for today?",
                                       "Turn the hall light off, please."};
    char id[16] = "steady_";
    size_t n = strlen(id);
    id[n++] = (char)('0' + (int)(t / 10u % 10u));
    id[n++] = (char)('0' + (int)(t % 10u));
    id[n] = '\0';
    ctxc_block_t b[2];
    memset(b, 0, sizeof b);
    b[0].type = CTXC_BLOCK_TEXT;
    b[0].u.text.text = ctxc_str(asks[t % 2u]);
    ctxc_entry_in_t in = {CTXC_SPEAKER_HUMAN, b, 1, CTXC_STR_ABSENT};
    ctxc_status_t st = ctxc_session_add(&session, &in, &err);
    if (st != CTXC_OK) {
        return st;
    }
    b[0].u.text.text = ctxc_str("Done.");
    in.speaker = CTXC_SPEAKER_AI;
    if (t % 2u == 1u) {
        b[1].type = CTXC_BLOCK_TOOL_CALL;
        b[1].u.tool_call.id = ctxc_str(id);
        b[1].u.tool_call.name = ctxc_str("read_file");
        b[1].u.tool_call.parameters =
            ctxc_str("{\"file_path\":\"notes/today.md\"}");
        in.block_count = 2;
    }
    if ((st = ctxc_session_add(&session, &in, &err)) != CTXC_OK) {
        return st;
    }
    if (t % 2u == 1u) {
        b[0].type = CTXC_BLOCK_TOOL_RESPONSE;
        b[0].u.tool_response.call_id = ctxc_str(id);
        b[0].u.tool_response.tool_name = ctxc_str("read_file");
        b[0].u.tool_response.result = ctxc_str("\"milk, call Anna\"");
        ctxc_entry_in_t r = {CTXC_SPEAKER_TOOL, b, 1, CTXC_STR_ABSENT};
        if ((st = ctxc_session_add(&session, &r, &err)) != CTXC_OK) {
            return st;
        }
    }
    ctxc_send_report_t report = {0};
    st = ctxc_session_before_send(&session, 0, &report, &err);
    *compressed = report.compressed;
    return st;
}

/* Steady-state turns after the first before_send (which compresses) and
 * the turn after it: the cost of a turn that adds two or three entries to
 * a long history. Only for the long histories (a short one's context
 * limit is a few turns). */
#define STEADY_TURNS 10u
static void run_steady(const scn_input_t *in) {
    static const char op[] = "10 steady turns high-density";
    ctxc_status_t st = import_input(in);
    if (!check(st == CTXC_OK, in->name, op, "import", st)) {
        return;
    }
    st = set_strategy("high-density");
    check(st == CTXC_OK, in->name, op, "/set compression.strategy", st);
    start_session(in->name, op);
    ctxc_send_report_t report = {0};
    st = ctxc_session_before_send(&session, 0, &report, &err);
    check(st == CTXC_OK, in->name, op, "the first before_send", st);
    /* the turn after a compression reads the whole history (the
     * compression changed it): the before_send rows measure that */
    bool compressed = false;
    st = steady_turn(STEADY_TURNS, &compressed);
    check(st == CTXC_OK && !compressed, in->name, op, "the turn after it",
          st);
    size_t n0 = ctxc_history_count(&hist);
    uint64_t t0 = ctxc_history_tokens(&hist);
    for (unsigned t = 0; t < STEADY_TURNS && st == CTXC_OK; t++) {
        MEASURED(EP_TURN, st, steady_turn(t, &compressed));
        check(st == CTXC_OK, in->name, op, "status", st);
        check(!compressed, in->name, op, "nothing to compress", st);
    }
    uint32_t crc;
    check_history(in->name, op, &hist, &crc);
    row(in->name, op, st, n0, t0, &hist, crc);
}

/* Arena exhaustion: lines imported one import at a time into an 8 KiB
 * arena until one answers CTXC_E_NO_SPACE; the history must be
 * byte-identical to before that call. */
static void run_no_space(const scn_input_t *in) {
    static const char op[] = "no-space import (8 KiB arena)";
    ctxc_history_clear(&small_hist);
    const char *p = in->text, *end = in->text + in->len;
    ctxc_status_t st = CTXC_OK;
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl != NULL ? (size_t)(nl - p) + 1 : (size_t)(end - p);
        uint32_t before = img_store_crc(&small_hist);
        img_sink_t e0 = {NULL, 0, 0, 0};
        (void)export_to(&small_hist, &e0, false);
        size_t n0 = ctxc_history_count(&small_hist);
        uint64_t t0 = ctxc_history_tokens(&small_hist);
        MEASURED(EP_IMPORT, st,
                 ctxc_import_text(&imp, &small_hist, p, len,
                                  CTXC_FORMAT_ICONTENT, &err));
        if (st == CTXC_E_NO_SPACE) {
            img_sink_t e1 = {NULL, 0, 0, 0};
            (void)export_to(&small_hist, &e1, false);
            check(img_store_crc(&small_hist) == before, in->name, op,
                  "store bytes identical after CTXC_E_NO_SPACE", st);
            check(e1.crc == e0.crc, in->name, op,
                  "export identical after CTXC_E_NO_SPACE", st);
            check(ctxc_history_count(&small_hist) == n0 &&
                      ctxc_history_tokens(&small_hist) == t0,
                  in->name, op, "entries and tokens unchanged", st);
            uint32_t crc;
            check_history(in->name, op, &small_hist, &crc);
            row(in->name, op, st, n0, t0, &small_hist, crc);
            return;
        }
        if (!check(st == CTXC_OK, in->name, op, "import of one line", st)) {
            return;
        }
        p += len;
    }
    check(false, in->name, op, "the arena never ran out", st);
}

static void run_input(const scn_input_t *in) {
    static const char op[] = "import";
    cur_hist = in->name;
    cur_entries = 0; /* one entry a line */
    for (const char *p = in->text, *end = in->text + in->len; p < end;) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        cur_entries++;
        p = nl != NULL ? nl + 1 : end;
    }
    ctxc_status_t st = import_input(in);
    check(st == CTXC_OK, in->name, op, "status", st);
    uint32_t crc;
    check_history(in->name, op, &hist, &crc);
    row(in->name, op, st, 0, 0, &hist, crc);
    if (st != CTXC_OK) {
        return;
    }
    configure(in->name, ctxc_history_tokens(&hist));
    size_t imported = ctxc_history_count(&hist);
    for (unsigned which = 0; which < OP_COUNT; which++) {
        run_op(in, which);
    }
    if (imported >= 200u) {
        run_steady(in);
    }
    run_no_space(in);
}

/* The voice day (issue 36; ../voice/voice_day.h): 10,000 short turns into
 * 128 slots and a 32 KiB arena, once with each LLM-free strategy; its
 * table after the histories' (the host suite test_voice_day runs the same
 * days). */
static void run_voice_day(void) {
    static const char *const strategies[] = {"top-down-truncation",
                                             "high-density"};
    vd_stats_t vs;
    vd_table_head();
    for (size_t i = 0; i < sizeof strategies / sizeof *strategies; i++) {
        vd_cfg_t cfg = {strategies[i], VD_TURNS, VD_SEED, false, NULL, NULL, 0};
        failed += vd_run(&cfg, &vs);
        checks += vs.checks;
        vd_table_row(&cfg, &vs);
    }
}

unsigned scn_run(unsigned flags) {
    img_out_init(scn_write);
    flags_ = flags;
    planted = false;
    checks = failed = 0;
    memset(ep_max, 0, sizeof ep_max);
    memset(ep_ticks, 0, sizeof ep_ticks);
    memset(ep_hist, 0, sizeof ep_hist);
    memset(ep_entries, 0, sizeof ep_entries);
    cur_hist = "-";
    cur_entries = 0;

    ctxc_fs_t fs = ctxc_romfs();
    ctxc_settings_init(&settings, &fs);
    ctxc_status_t st;
    MEASURED(EP_SETTINGS_LOAD, st, ctxc_settings_load(&settings, &err));
    check(st == CTXC_OK, "-", "settings", "ctxc_settings_load on romfs", st);

    img_put_s("scenario results (ctxc ");
    img_put_s(CTXC_VERSION_STRING);
    img_put_s(")");
    img_flush_line();
    img_put_s("| history");
    img_put_pad(12);
    img_put_s("| operation");
    img_put_pad(46);
    img_put_s("| status");
    img_put_pad(64);
    img_put_s("| n0");
    img_put_pad(72);
    img_put_s("| tokens0");
    img_put_pad(81);
    img_put_s("| n1");
    img_put_pad(89);
    img_put_s("| tokens1");
    img_put_pad(98);
    img_put_s("| export crc |");
    img_flush_line();
    img_put_s("|---|---|---|---:|---:|---:|---:|---|");
    img_flush_line();
    for (size_t i = 0; i < scn_input_count; i++) {
        run_input(&scn_inputs[i]);
    }
    run_voice_day();
    img_put_s("scenario end");
    img_flush_line();

    bool measured = false;
    for (unsigned ep = 0; ep < EP_COUNT; ep++) {
        measured = measured || ep_max[ep] != 0;
    }
    if (measured) {
        for (unsigned ep = 0; ep < EP_COUNT; ep++) {
            checks++;
            failed += scn_stack_report(ep_names[ep], ep_max[ep]);
        }
        for (unsigned ep = 0; ep < EP_COUNT; ep++) {
            img_put_s("ticks: ");
            img_put_s(ep_names[ep]);
            img_put_s(" ");
            img_put_u(ep_ticks[ep]);
            img_put_s(" at most (25 MHz counter; history ");
            img_put_s(ep_hist[ep] != NULL ? ep_hist[ep] : "-");
            img_put_s(", ");
            img_put_u(ep_entries[ep]);
            img_put_s(" entries)");
            img_flush_line();
        }
    }
    img_put_s("scenario: ");
    img_put_u(checks);
    img_put_s(" checks, ");
    img_put_u(failed);
    img_put_s(" failed");
    img_flush_line();
    return failed;
}
