/* The voice day (voice_day.h): generator, run loop, checks and table. */
#include "voice_day.h"

#include <string.h>

#include "../common/image_util.h"

CTXC_HISTORY_DEFINE(vd_hist, VD_SLOTS, VD_ARENA_BYTES);
/* 8 KiB of scratch: the summaries and the entries a plan inserts over a
 * 128-slot history of short turns */
CTXC_WORK_DEFINE(vd_work, VD_SLOTS, 8192);
static ctxc_settings_store_t vd_settings;
static ctxc_session_t vd_session;
static ctxc_error_t vd_err;

/* ---- a seeded stream of turns ------------------------------------------- */

static uint64_t rng_state;

static uint32_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static uint32_t between(uint32_t lo, uint32_t hi) {
    return lo + rnd() % (hi - lo + 1u);
}

static const char *const words[] = {
    "the",     "light", "kitchen",  "turn",    "on",     "please", "what",
    "weather", "today", "timer",    "minutes", "set",    "music",  "play",
    "volume",  "down",  "tomorrow", "morning", "remind", "me",     "to",
    "call",    "mom",   "at",       "six",     "okay",   "done",   "it",
    "is",      "sunny", "with",     "a",       "high",   "of",     "twenty",
    "degrees", "your",  "next",     "meeting", "starts", "in",     "ten"};

static const char *const han[] = {"今天", "天气", "很", "好",   "打开", "客厅",
                                  "的",   "灯",   "请", "播放", "音乐", "明天",
                                  "早上", "提醒", "我", "开会"};

/* n words of English, or of Chinese (no spaces: about 12 bytes a token
 * for the estimator), into buf (cut before cap). */
static void sentence(char *buf, size_t cap, uint32_t n, bool chinese) {
    size_t len = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < n; i++) {
        const char *w = chinese ? han[rnd() % (sizeof han / sizeof *han)]
                                : words[rnd() % (sizeof words / sizeof *words)];
        size_t wl = strlen(w);
        if (len + wl + 2u >= cap) {
            break;
        }
        if (i > 0 && !chinese) {
            buf[len++] = ' ';
        }
        memcpy(buf + len, w, wl);
        len += wl;
        buf[len] = '\0';
    }
}

/* s, then the decimal v, then t, NUL-terminated into buf (the callers'
 * buffers hold the longest). */
static void compose(char *buf, const char *s, uint32_t v, const char *t) {
    char digits[12];
    size_t n = 0, len = strlen(s);
    memcpy(buf, s, len);
    do {
        digits[n++] = (char)('0' + (int)(v % 10u));
        v /= 10u;
    } while (v != 0);
    while (n > 0) {
        buf[len++] = digits[--n];
    }
    size_t tl = strlen(t);
    memcpy(buf + len, t, tl + 1u);
}

/* ---- checks ------------------------------------------------------------- */

static const vd_cfg_t *cur_cfg;
static vd_stats_t *st;

/* Counts a check; a failed one is printed: the run, the turn, what failed
 * and the status of the call when one failed. */
static bool check(bool ok, const char *what, ctxc_status_t status) {
    st->checks++;
    if (!ok) {
        st->failed++;
        img_put_s("FAIL: voice day ");
        img_put_s(cur_cfg->strategy);
        img_put_s(" turn ");
        img_put_u(st->turns);
        img_put_s(", after ");
        img_put_u(st->appends);
        img_put_s(" appends: ");
        img_put_s(what);
        img_put_status(status, &vd_err);
        img_flush_line();
    }
    return ok;
}

/* The strings of a block the generator makes (text, tool call, tool
 * response) into out[]; their number (0 for another type). */
static size_t block_strings(const ctxc_block_t *b, ctxc_str_t out[4]) {
    switch (b->type) {
    case CTXC_BLOCK_TEXT:
        out[0] = b->u.text.text;
        return 1;
    case CTXC_BLOCK_TOOL_CALL:
        out[0] = b->u.tool_call.id;
        out[1] = b->u.tool_call.name;
        out[2] = b->u.tool_call.parameters;
        return 3;
    case CTXC_BLOCK_TOOL_RESPONSE:
        out[0] = b->u.tool_response.call_id;
        out[1] = b->u.tool_response.tool_name;
        out[2] = b->u.tool_response.result;
        out[3] = b->u.tool_response.error;
        return 4;
    default:
        return 0;
    }
}

/* A copy of one appended entry (the generator's entries have one block):
 * its speaker, the block's type and strings, end to end in data (the
 * lengths in len[], ABSENT_LEN for an absent string). */
#define ABSENT_LEN UINT16_MAX
typedef struct {
    ctxc_speaker_t speaker;
    ctxc_block_type_t type;
    size_t nstr;
    uint16_t len[4];
    char data[4096]; /* an answer's text (< 4096 bytes) or a tool block's */
} recent_t;

/* The last VD_RECENT entries appended (a ring). */
static recent_t recent[VD_RECENT];
static uint32_t recent_n; /* appended so far, of this run */

/* compression.reserve-entries and -bytes (the settings' defaults), read
 * when the run starts */
static uint32_t reserve_entries, reserve_bytes;

static void keep_recent(ctxc_speaker_t sp, const ctxc_block_t *b) {
    recent_t *r = &recent[recent_n++ % VD_RECENT];
    ctxc_str_t str[4];
    size_t off = 0;
    r->speaker = sp;
    r->type = b->type;
    r->nstr = block_strings(b, str);
    for (size_t i = 0; i < r->nstr; i++) {
        if (str[i].ptr == NULL) {
            r->len[i] = ABSENT_LEN;
            continue;
        }
        size_t len = str[i].len;
        if (len > sizeof r->data - off || len >= ABSENT_LEN) {
            r->nstr = 0; /* never met by the generator: never equal */
            return;
        }
        r->len[i] = (uint16_t)len;
        memcpy(r->data + off, str[i].ptr, len);
        off += len;
    }
}

/* Whether stored entry i is the appended entry r, verbatim. */
static bool same_as(size_t i, const recent_t *r) {
    ctxc_entry_t e;
    ctxc_block_t b;
    ctxc_str_t str[4];
    if (ctxc_history_get(&vd_hist, i, &e) != CTXC_OK || e.block_count != 1 ||
        ctxc_entry_block(&e, 0, &b) != CTXC_OK || e.speaker != r->speaker ||
        b.type != r->type || r->nstr == 0 ||
        block_strings(&b, str) != r->nstr) {
        return false;
    }
    size_t off = 0;
    for (size_t k = 0; k < r->nstr; k++) {
        if (str[k].ptr == NULL) {
            if (r->len[k] != ABSENT_LEN) {
                return false;
            }
            continue;
        }
        if (r->len[k] == ABSENT_LEN || str[k].len != r->len[k] ||
            memcmp(str[k].ptr, r->data + off, str[k].len) != 0) {
            return false;
        }
        off += str[k].len;
    }
    return true;
}

static void note(const ctxc_send_report_t *rep, bool room) {
    if (!rep->compressed) {
        return;
    }
    st->compressions++;
    st->room_compressions += room;
    for (unsigned b = 0; b < 3; b++) {
        st->by_limit[b] += (rep->trigger >> b) & 1u;
    }
    st->dropped_runs += vd_session.last_compress.entries_dropped > 0;
    st->fallbacks += rep->fallback != NULL;
}

static void track(void) {
    ctxc_history_usage_t u;
    ctxc_history_usage(&vd_hist, &u);
    if (u.entries_used > st->max_entries) {
        st->max_entries = u.entries_used;
    }
    if (u.bytes_used > st->max_bytes) {
        st->max_bytes = u.bytes_used;
    }
    uint64_t t = ctxc_history_tokens(&vd_hist);
    if (t > st->max_tokens) {
        st->max_tokens = t;
    }
}

/* The checks after every append; false when one failed. */
static bool check_history(size_t pinned_expected) {
    unsigned failed0 = st->failed;
    size_t n = ctxc_history_count(&vd_hist);
    /* the newest entries are the last ones appended, verbatim */
    size_t k = recent_n < VD_RECENT ? recent_n : VD_RECENT;
    bool same = n >= k;
    for (size_t j = 1; same && j <= k; j++) {
        same = same_as(n - j, &recent[(recent_n - j) % VD_RECENT]);
    }
    check(same, "the newest entries are the ones appended, verbatim", CTXC_OK);
    /* no response without its call; at most the call just appended open */
    ctxc_history_stats_t hs;
    ctxc_history_stats(&vd_hist, &hs);
    check(hs.unpaired_responses == 0, "no tool response without its call",
          CTXC_OK);
    check(hs.unpaired_calls <= 1, "at most the newest tool call unanswered",
          CTXC_OK);
    /* the token total is the sum of the entries' estimates; every pinned
     * entry is still there */
    size_t pinned = 0;
    uint64_t sum = 0;
    for (size_t i = 0; i < n; i++) {
        ctxc_entry_t e;
        if (ctxc_history_get(&vd_hist, i, &e) == CTXC_OK) {
            pinned += (e.flags & CTXC_ENTRY_PINNED) != 0;
            sum += e.tokens;
        }
    }
    check(sum == ctxc_history_tokens_estimated(&vd_hist),
          "the token total is the sum of the entries' estimates", CTXC_OK);
    if (cur_cfg->pins) {
        check(pinned == pinned_expected, "every pinned entry is still there",
              CTXC_OK);
    }
    return st->failed == failed0;
}

/* before_send, then the append that makes room; counts and checks. False
 * when a check failed (the run stops). */
static bool turn_entry(ctxc_speaker_t sp, const ctxc_block_t *block,
                       size_t pinned_expected) {
    unsigned failed0 = st->failed;
    ctxc_send_report_t rep;
    ctxc_status_t s =
        ctxc_session_before_send(&vd_session, VD_PENDING_TOKENS, &rep, &vd_err);
    if (!check(s == CTXC_OK, "ctxc_session_before_send", s)) {
        return false;
    }
    note(&rep, false);
    /* room for the turn on every limit, as before_send promises (a job in
     * progress frees it only when its summary is applied) */
    uint64_t tokens = ctxc_history_tokens(&vd_hist);
    if (tokens + VD_PENDING_TOKENS > st->max_sent) {
        st->max_sent = tokens + VD_PENDING_TOKENS;
    }
    if (!ctxc_session_job_active(&vd_session)) {
        ctxc_history_usage_t u;
        ctxc_history_usage(&vd_hist, &u);
        check(u.entries_used + reserve_entries <= u.entries_max,
              "before_send left the reserved slots free", CTXC_OK);
        check(u.bytes_used + reserve_bytes <= u.bytes_max,
              "before_send left the reserved arena bytes free", CTXC_OK);
        check(tokens + VD_PENDING_TOKENS <= VD_CONTEXT_LIMIT,
              "before_send left room for the request under the limit", CTXC_OK);
    }
    ctxc_entry_in_t in = {sp, block, 1, CTXC_STR_ABSENT};
    s = ctxc_session_add_room(&vd_session, &in, &rep, &vd_err);
    if (!check(s == CTXC_OK, "ctxc_session_add_room", s)) {
        return false;
    }
    note(&rep, true);
    keep_recent(sp, block);
    st->appends++;
    track();
    return check_history(pinned_expected) && st->failed == failed0;
}

/* Pins the newest entry when it is a human turn (and unpins the oldest
 * pinned one past three); returns the entries pinned now. */
static size_t pin_newest(size_t pinned) {
    size_t n = ctxc_history_count(&vd_hist);
    ctxc_entry_t e;
    if (pinned >= 3) {
        for (size_t i = 0; i < n; i++) {
            if (ctxc_history_get(&vd_hist, i, &e) == CTXC_OK &&
                (e.flags & CTXC_ENTRY_PINNED) != 0) {
                ctxc_status_t s = ctxc_history_pin(&vd_hist, i, false, &vd_err);
                if (check(s == CTXC_OK, "unpin the oldest pinned entry", s)) {
                    pinned--;
                }
                break;
            }
        }
    }
    if (ctxc_history_get(&vd_hist, n - 1, &e) == CTXC_OK &&
        e.speaker == CTXC_SPEAKER_HUMAN && (e.flags & CTXC_ENTRY_PINNED) == 0 &&
        ctxc_history_pin(&vd_hist, n - 1, true, &vd_err) == CTXC_OK) {
        pinned++;
    }
    return pinned;
}

static ctxc_block_t text_block(const char *s) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(s);
    return b;
}

/* The session over the empty history, with the configuration's settings. */
static bool start(const vd_cfg_t *cfg) {
    ctxc_history_clear(&vd_hist);
    ctxc_settings_init(&vd_settings, NULL);
    ctxc_status_t s =
        ctxc_settings_set_enum(&vd_settings, CTXC_SETTING_COMPRESSION_STRATEGY,
                               cfg->strategy, &vd_err);
    if (!check(s == CTXC_OK, "compression.strategy", s)) {
        return false;
    }
    s = ctxc_settings_set_u32(&vd_settings, CTXC_SETTING_CONTEXT_LIMIT,
                              VD_CONTEXT_LIMIT, &vd_err);
    if (!check(s == CTXC_OK, "context-limit", s)) {
        return false;
    }
    s = ctxc_session_init(&vd_session, &vd_hist, &vd_work, &vd_settings,
                          &vd_err);
    if (!check(s == CTXC_OK, "ctxc_session_init", s)) {
        return false;
    }
    if (cfg->llm_resolver != NULL) {
        ctxc_session_set_llm_resolver(&vd_session, cfg->llm_resolver,
                                      cfg->llm_user);
    }
    if (cfg->prefetch_permille != 0) {
        s = ctxc_settings_set_ratio(&vd_settings,
                                    CTXC_SETTING_COMPRESSION_PREFETCH_THRESHOLD,
                                    cfg->prefetch_permille, &vd_err);
        if (!check(s == CTXC_OK, "compression.prefetch-threshold", s)) {
            return false;
        }
    }
    s = ctxc_session_check(&vd_session, &vd_err);
    reserve_entries = reserve_bytes = 0;
    return check(s == CTXC_OK, "ctxc_session_check", s) &&
           check(ctxc_settings_u32(&vd_settings,
                                   CTXC_SETTING_COMPRESSION_RESERVE_ENTRIES,
                                   &reserve_entries) &&
                     ctxc_settings_u32(&vd_settings,
                                       CTXC_SETTING_COMPRESSION_RESERVE_BYTES,
                                       &reserve_bytes),
                 "compression.reserve-entries and -bytes read", CTXC_OK);
}

/* The day: each turn a human entry, every fifth a tool call and its
 * result, then the answer. False when a check failed. */
static bool day(const vd_cfg_t *cfg) {
    static char human[2048], ai[4096], result[1100], text[1024];
    static char params[64], id[24];
    size_t pinned = 0;
    bool chinese = false;
    for (uint32_t t = 0; t < cfg->turns; t++) {
        st->turns = t + 1u;
        if (t % 500u == 0) {
            chinese = !chinese && rnd() % 2u == 0; /* a Chinese stretch */
        }
        sentence(human, sizeof human, between(5, 40), chinese);
        ctxc_block_t b = text_block(human);
        if (!turn_entry(CTXC_SPEAKER_HUMAN, &b, pinned)) {
            return false;
        }
        if (cfg->pins && rnd() % 40u == 0) {
            pinned = pin_newest(pinned);
        }
        if (t % 5u == 4u) { /* a tool call and its result */
            compose(id, "call_", t, "");
            compose(params, "{\"room\":\"kitchen\",\"n\":", t, "}");
            memset(&b, 0, sizeof b);
            b.type = CTXC_BLOCK_TOOL_CALL;
            b.u.tool_call.id = ctxc_str(id);
            b.u.tool_call.name = CTXC_STR_LIT("smart_home");
            b.u.tool_call.parameters = ctxc_str(params);
            if (!turn_entry(CTXC_SPEAKER_AI, &b, pinned)) {
                return false;
            }
            sentence(text, sizeof text, between(5, 60), false);
            size_t len = strlen(text);
            result[0] = '"'; /* a JSON string */
            memcpy(result + 1, text, len);
            memcpy(result + 1 + len, "\"", 2);
            memset(&b, 0, sizeof b);
            b.type = CTXC_BLOCK_TOOL_RESPONSE;
            b.u.tool_response.call_id = ctxc_str(id);
            b.u.tool_response.tool_name = CTXC_STR_LIT("smart_home");
            b.u.tool_response.result = ctxc_str(result);
            if (!turn_entry(CTXC_SPEAKER_TOOL, &b, pinned)) {
                return false;
            }
        }
        bool long_answer = rnd() % 50u == 0;
        sentence(ai, sizeof ai,
                 long_answer ? between(300, 600) : between(10, 80), chinese);
        b = text_block(ai);
        if (!turn_entry(CTXC_SPEAKER_AI, &b, pinned)) {
            return false;
        }
    }
    return true;
}

unsigned vd_run(const vd_cfg_t *cfg, vd_stats_t *out) {
    memset(out, 0, sizeof *out);
    cur_cfg = cfg;
    st = out;
    rng_state = cfg->seed;
    recent_n = 0;
    if (start(cfg)) {
        (void)day(cfg);
        if (ctxc_session_job_active(&vd_session)) {
            ctxc_session_compress_cancel(&vd_session);
        }
        check(out->compressions > 0, "the day compressed", CTXC_OK);
        check(out->max_sent <= VD_CONTEXT_LIMIT,
              "no request over the context limit", CTXC_OK);
        img_sink_t sink = {NULL, 0, 0, 0};
        ctxc_status_t s = ctxc_export(&vd_hist, img_sink_write, &sink, &vd_err);
        check(s == CTXC_OK, "export of the final history", s);
        out->export_crc = sink.crc;
    }
    ctxc_session_deinit(&vd_session);
    return out->failed;
}

/* ---- the table ----------------------------------------------------------- */

/* The columns (label, where the next one starts): the run, the
 * compressions (all; those of add_room; by the limit that triggered them;
 * those that dropped the oldest turns), the largest history on each limit
 * and the largest request, and the CRC32 of the final history's export. */
static const struct {
    const char *label;
    uint8_t end;
} col[] = {{"strategy", 22},        {"seed", 30},         {"turns", 38},
           {"appends", 48},         {"compressions", 63}, {"by append", 75},
           {"by tokens", 87},       {"by slots", 98},     {"by bytes", 109},
           {"dropped oldest", 126}, {"max slots", 138},   {"max bytes", 150},
           {"max tokens", 163},     {"max sent", 174}};

static void cell_u(unsigned i, uint64_t v) {
    img_put_s("| ");
    img_put_u(v);
    img_put_pad(col[i].end);
}

void vd_table_head(void) {
    img_put_s("voice day: ");
    img_put_u(VD_SLOTS);
    img_put_s(" slots, ");
    img_put_u(VD_ARENA_BYTES);
    img_put_s("-byte arena, ");
    img_put_u(VD_CONTEXT_LIMIT);
    img_put_s("-token limit; before_send (");
    img_put_u(VD_PENDING_TOKENS);
    img_put_s(" tokens pending) and add_room for every entry");
    img_flush_line();
    for (unsigned i = 0; i < sizeof col / sizeof *col; i++) {
        img_put_s("| ");
        img_put_s(col[i].label);
        img_put_pad(col[i].end);
    }
    img_put_s("| export crc |");
    img_flush_line();
    img_put_s("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
              "---:|---:|---|");
    img_flush_line();
}

void vd_table_row(const vd_cfg_t *cfg, const vd_stats_t *s) {
    img_put_s("| ");
    img_put_s(cfg->strategy);
    img_put_pad(col[0].end);
    cell_u(1, cfg->seed);
    cell_u(2, s->turns);
    cell_u(3, s->appends);
    cell_u(4, s->compressions);
    cell_u(5, s->room_compressions);
    cell_u(6, s->by_limit[0]);
    cell_u(7, s->by_limit[1]);
    cell_u(8, s->by_limit[2]);
    cell_u(9, s->dropped_runs);
    cell_u(10, s->max_entries);
    cell_u(11, s->max_bytes);
    cell_u(12, s->max_tokens);
    cell_u(13, s->max_sent);
    img_put_s("| ");
    img_put_x32(s->export_crc);
    img_put_s(" |");
    img_flush_line();
}
