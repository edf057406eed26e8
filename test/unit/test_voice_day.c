/*
 * A voice day (issue 36): 10,000 short turns (human 5-40 words, ai 10-80
 * words, every fifth turn a tool call with its result, now and then a long
 * answer, stretches of Chinese turns) into 128 slots and a 32 KiB arena
 * with a 4000-token limit, before_send before every append and
 * ctxc_session_add_room as the append; once with each LLM-free strategy
 * and once with middle-out (a scripted model, the compression job started
 * by the prefetch threshold). Nothing may fail; after every turn the
 * newest entries are the ones appended, verbatim, no tool response is
 * without its call, every pinned entry is still there and before_send left
 * room on all three limits. The table printed for each run: turns,
 * compressions, the limit that triggered each, the largest history
 * reached on each limit.
 *
 * Then the property: random streams of short turns with pins and tool
 * pairs (six seeds, both LLM-free strategies), the same checks.
 * CTXC_VOICE_TURNS sets the voice day's turns (default 10000).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "support.h"

#define SLOTS 128u
#define ARENA (32u * 1024u)
#define LIMIT 4000u

CTXC_HISTORY_DEFINE(hist, SLOTS, ARENA);
CTXC_WORK_DEFINE(work, SLOTS, 8192);

/* ---- a seeded stream of turns --------------------------------------------- */

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
    "the",     "light",  "kitchen", "turn",    "on",      "please",  "what",
    "weather", "today",  "timer",   "minutes", "set",     "music",   "play",
    "volume",  "down",   "tomorrow", "morning", "remind", "me",      "to",
    "call",    "mom",    "at",      "six",     "okay",    "done",    "it",
    "is",      "sunny",  "with",    "a",       "high",    "of",      "twenty",
    "degrees", "your",   "next",    "meeting", "starts",  "in",      "ten"};

static const char *const han[] = {"今天", "天气", "很", "好", "打开", "客厅",
                                  "的",   "灯",   "请", "播放", "音乐", "明天",
                                  "早上", "提醒", "我", "开会"};

/* n words of English, or of Chinese (no spaces: about 12 bytes a token
 * for the estimator), into buf. */
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

/* ---- the run -------------------------------------------------------------- */

typedef struct {
    const char *strategy;
    uint32_t turns;
    uint64_t seed;
    bool pins;      /* pin an entry now and then (at most 3 at a time) */
    bool middle_out; /* the scripted model, prefetch jobs */
} run_cfg_t;

typedef struct {
    uint32_t turns, appends, compressions, room_compressions;
    uint32_t by_limit[3]; /* tokens, entries, bytes */
    uint32_t dropped_runs; /* compressions that dropped the oldest entries */
    size_t max_entries, max_bytes;
    uint64_t max_tokens; /* after an append (an answer not yet compressed) */
    uint64_t max_sent;   /* after before_send: what goes to the model */
    uint32_t fallbacks;
} run_stats_t;

static ctxc_settings_store_t settings;
static ctxc_session_t session;
static run_stats_t stats;
static char last_text[4096];
static uint32_t model_calls;

/* The scripted model: a short snapshot of whatever it is asked. */
static ctxc_status_t model_complete(const ctxc_llm_t *llm,
                                    const ctxc_llm_request_t *req, char *out,
                                    size_t cap, size_t *len,
                                    ctxc_llm_usage_t *usage,
                                    ctxc_error_t *err) {
    (void)llm;
    (void)req;
    (void)usage;
    (void)err;
    static const char a[] =
        "<state_snapshot>The user asked for lights, timers, music and the "
        "weather; all were done.</state_snapshot>";
    assert_true(sizeof a < cap);
    memcpy(out, a, sizeof a);
    *len = sizeof a - 1u;
    model_calls++;
    return CTXC_OK;
}

static const ctxc_llm_t model = {model_complete, NULL, "fake", "fake-1",
                                 NULL,           NULL, NULL};

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *err) {
    (void)user;
    (void)profile;
    (void)err;
    *llm = &model;
    return CTXC_OK;
}

static void note(const ctxc_send_report_t *rep, bool room) {
    if (!rep->compressed) {
        return;
    }
    stats.compressions++;
    stats.room_compressions += room;
    for (unsigned b = 0; b < 3; b++) {
        stats.by_limit[b] += (rep->trigger >> b) & 1u;
    }
    stats.dropped_runs += session.last_compress.entries_dropped > 0;
    stats.fallbacks += rep->fallback != NULL;
}

static void track(void) {
    ctxc_history_usage_t u;
    ctxc_history_usage(&hist, &u);
    if (u.entries_used > stats.max_entries) {
        stats.max_entries = u.entries_used;
    }
    if (u.bytes_used > stats.max_bytes) {
        stats.max_bytes = u.bytes_used;
    }
    uint64_t t = ctxc_history_tokens(&hist);
    if (t > stats.max_tokens) {
        stats.max_tokens = t;
    }
}

/* The checks after every append. */
static void check_invariants(const run_cfg_t *cfg, size_t pinned_expected) {
    size_t n = ctxc_history_count(&hist);
    assert_true(n >= 1);
    /* the newest entry is the one just appended, verbatim */
    ctxc_entry_t e;
    assert_int_equal(ctxc_history_get(&hist, n - 1, &e), CTXC_OK);
    ctxc_block_t b;
    assert_int_equal(ctxc_entry_block(&e, 0, &b), CTXC_OK);
    const ctxc_str_t got = b.type == CTXC_BLOCK_TEXT ? b.u.text.text
                           : b.type == CTXC_BLOCK_TOOL_RESPONSE
                               ? b.u.tool_response.result
                               : b.u.tool_call.parameters;
    if (b.type == CTXC_BLOCK_TEXT) {
        assert_int_equal(got.len, strlen(last_text));
        assert_memory_equal(got.ptr, last_text, got.len);
    }
    /* no response without its call; at most the call just appended open */
    ctxc_history_stats_t hs;
    ctxc_history_stats(&hist, &hs);
    assert_int_equal(hs.unpaired_responses, 0);
    assert_true(hs.unpaired_calls <= 1);
    /* every pinned entry is still there */
    size_t pinned = 0;
    for (size_t i = 0; i < n; i++) {
        assert_int_equal(ctxc_history_get(&hist, i, &e), CTXC_OK);
        pinned += (e.flags & CTXC_ENTRY_PINNED) != 0;
    }
    if (cfg->pins) {
        assert_int_equal(pinned, pinned_expected);
    }
}

/* before_send, then the append that makes room; counts and checks. */
static void turn_entry(const run_cfg_t *cfg, ctxc_speaker_t sp,
                       const ctxc_block_t *blocks, size_t nb,
                       size_t pinned_expected) {
    ctxc_error_t err;
    ctxc_send_report_t rep;
    if (ctxc_session_before_send(&session, 60, &rep, &err) != CTXC_OK) {
        fail_msg("turn %u: before_send: %s", stats.turns, err.message);
    }
    note(&rep, false);
    /* room for the turn on every limit, as before_send promises */
    ctxc_history_usage_t u;
    ctxc_history_usage(&hist, &u);
    uint64_t sent = ctxc_history_tokens(&hist) + 60u;
    if (sent > stats.max_sent) {
        stats.max_sent = sent;
    }
    if (!ctxc_session_job_active(&session)) {
        assert_true(u.entries_used + 4u <= u.entries_max);
        assert_true(u.bytes_used + 2048u <= u.bytes_max);
        assert_true(ctxc_history_tokens(&hist) + 60u <= LIMIT);
    }
    ctxc_entry_in_t in = {sp, blocks, nb, CTXC_STR_ABSENT};
    if (ctxc_session_add_room(&session, &in, &rep, &err) != CTXC_OK) {
        fail_msg("turn %u: add_room: %s", stats.turns, err.message);
    }
    note(&rep, true);
    stats.appends++;
    track();
    check_invariants(cfg, pinned_expected);
}

static void print_stats(const run_cfg_t *cfg) {
    print_message("voice day (%s%s, seed %llu): %u turns, %u appends, %u "
                  "compressions (%u by the append), triggered by tokens %u, "
                  "entries %u, bytes %u; %u dropped the oldest turns, %u "
                  "fallbacks, %u model calls; largest history %zu of %u "
                  "entries, %zu of %u bytes, %llu of %u tokens (%llu sent at "
                  "most)\n",
                  cfg->strategy, cfg->middle_out ? ", job" : "",
                  (unsigned long long)cfg->seed, stats.turns, stats.appends,
                  stats.compressions, stats.room_compressions,
                  stats.by_limit[0], stats.by_limit[1], stats.by_limit[2],
                  stats.dropped_runs, stats.fallbacks, model_calls,
                  stats.max_entries, (unsigned)hist.max_entries,
                  stats.max_bytes, (unsigned)hist.arena_bytes,
                  (unsigned long long)stats.max_tokens, LIMIT,
                  (unsigned long long)stats.max_sent);
}

/* Pins the newest entry (and unpins the oldest pinned one past three). */
static size_t pin_newest(size_t pinned) {
    ctxc_error_t err;
    size_t n = ctxc_history_count(&hist);
    if (pinned >= 3) {
        for (size_t i = 0; i < n; i++) {
            ctxc_entry_t e;
            (void)ctxc_history_get(&hist, i, &e);
            if (e.flags & CTXC_ENTRY_PINNED) {
                assert_int_equal(ctxc_history_pin(&hist, i, false, &err),
                                 CTXC_OK);
                pinned--;
                break;
            }
        }
    }
    ctxc_entry_t e;
    (void)ctxc_history_get(&hist, n - 1, &e);
    if (e.speaker == CTXC_SPEAKER_HUMAN && !(e.flags & CTXC_ENTRY_PINNED) &&
        ctxc_history_pin(&hist, n - 1, true, &err) == CTXC_OK) {
        pinned++;
    }
    return pinned;
}

static void voice_day(const run_cfg_t *cfg) {
    ctxc_error_t err;
    memset(&stats, 0, sizeof stats);
    model_calls = 0;
    ctxc_history_clear(&hist);
    ctxc_settings_init(&settings, NULL);
    t_set(&settings, "compression.strategy", cfg->strategy);
    t_set_uint(&settings, "context-limit", LIMIT);
    assert_int_equal(ctxc_session_init(&session, &hist, &work, &settings, &err),
                     CTXC_OK);
    if (cfg->middle_out) {
        ctxc_session_set_llm_resolver(&session, resolve, NULL);
        t_set(&settings, "compression.prefetch-threshold", "0.7");
    }
    rng_state = cfg->seed;
    static char human[2048], ai[4096], result[2048], params[256], id[32];
    size_t pinned = 0;
    bool chinese = false;
    for (uint32_t t = 0; t < cfg->turns; t++) {
        stats.turns = t + 1;
        if (t % 500 == 0) {
            chinese = !chinese && rnd() % 2 == 0; /* a Chinese stretch */
        }
        sentence(human, sizeof human, between(5, 40), chinese);
        ctxc_block_t hb = t_text(human);
        strcpy(last_text, human);
        turn_entry(cfg, CTXC_SPEAKER_HUMAN, &hb, 1, pinned);
        if (cfg->pins && rnd() % 40 == 0) {
            pinned = pin_newest(pinned);
        }
        if (t % 5 == 4) { /* a tool call and its result */
            snprintf(id, sizeof id, "call_%u", t);
            snprintf(params, sizeof params, "{\"room\":\"kitchen\",\"n\":%u}",
                     t);
            ctxc_block_t cb = t_call(id, "smart_home", params);
            turn_entry(cfg, CTXC_SPEAKER_AI, &cb, 1, pinned);
            char text[1024];
            sentence(text, sizeof text, between(5, 60), false);
            snprintf(result, sizeof result, "\"%s\"", text);
            ctxc_block_t rb = t_resp(id, "smart_home", result, NULL);
            turn_entry(cfg, CTXC_SPEAKER_TOOL, &rb, 1, pinned);
        }
        bool long_answer = rnd() % 50 == 0;
        sentence(ai, sizeof ai, long_answer ? between(300, 600) : between(10, 80),
                 chinese);
        ctxc_block_t ab = t_text(ai);
        strcpy(last_text, ai);
        turn_entry(cfg, CTXC_SPEAKER_AI, &ab, 1, pinned);
    }
    if (ctxc_session_job_active(&session)) {
        ctxc_session_compress_cancel(&session);
    }
    print_stats(cfg);
    assert_true(stats.compressions > 0);
    assert_true(stats.max_sent <= LIMIT);
    ctxc_session_deinit(&session);
}

static uint32_t voice_turns(void) {
    const char *v = getenv("CTXC_VOICE_TURNS");
    long n = v != NULL ? strtol(v, NULL, 10) : 0;
    return n > 0 ? (uint32_t)n : 10000u;
}

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
static void test_voice_day_top_down(void **state) {
    (void)state;
    run_cfg_t cfg = {"top-down-truncation", voice_turns(), 36, false, false};
    voice_day(&cfg);
    /* short turns fill the slots before the tokens: the slots trigger */
    assert_true(stats.by_limit[1] > 0);
}
#endif

#if CTXC_CFG_STRATEGY_HIGH_DENSITY
static void test_voice_day_high_density(void **state) {
    (void)state;
    run_cfg_t cfg = {"high-density", voice_turns(), 36, false, false};
    voice_day(&cfg);
    assert_true(stats.by_limit[1] > 0);
    /* plain voice turns give the summaries nothing: it drops turns */
    assert_true(stats.dropped_runs > 0);
}
#endif

#if CTXC_CFG_STRATEGY_MIDDLE_OUT
static void test_voice_day_middle_out(void **state) {
    (void)state;
    run_cfg_t cfg = {"middle-out", voice_turns(), 36, false, true};
    voice_day(&cfg);
    assert_true(model_calls > 0);
}
#endif

/* ---- the property: random streams with pins, several sizes ---------------- */

#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && CTXC_CFG_STRATEGY_HIGH_DENSITY
static void test_random_streams_with_pins(void **state) {
    (void)state;
    static const char *const strategies[] = {"top-down-truncation",
                                             "high-density"};
    for (uint64_t seed = 1; seed <= 6; seed++) {
        run_cfg_t cfg = {strategies[seed % 2], 600, seed * 7919u, true, false};
        voice_day(&cfg);
    }
}
#endif

int main(void) {
    const struct CMUnitTest tests[] = {
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
        cmocka_unit_test(test_voice_day_top_down),
#endif
#if CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test(test_voice_day_high_density),
#endif
#if CTXC_CFG_STRATEGY_MIDDLE_OUT
        cmocka_unit_test(test_voice_day_middle_out),
#endif
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && CTXC_CFG_STRATEGY_HIGH_DENSITY
        cmocka_unit_test(test_random_streams_with_pins),
#endif
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
