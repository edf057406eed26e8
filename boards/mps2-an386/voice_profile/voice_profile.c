/*
 * The voice profile (issue 36): what a voice assistant's firmware pays in
 * flash for ctxc. Built against libctxc_voice.a: one provider API
 * (openai), middle-out, top-down-truncation and high-density (one-shot
 * left out), no settings commands (CTXC_CFG_COMMANDS=0), no work-area
 * index; its settings come from typed calls only (no key looked up by
 * name, no settings file). It uses what such a firmware uses, so that the
 * linker keeps it:
 *
 *   - a session over a 128-slot history with a 32 KiB arena and a
 *     4000-token limit (the voice day's, voice/voice_day.h), every turn
 *     appended with ctxc_session_before_send() then
 *     ctxc_session_add_room();
 *   - middle-out's summaries from the openai provider client
 *     (ctxc_provider_bind + ctxc_provider_resolve as the session's LLM
 *     resolver), through the compression job that before_send starts at
 *     compression.prefetch-threshold, the API key from the port's key hook;
 *   - then the same day with top-down-truncation and with high-density.
 *
 * There is no network: the port's transport is an in-memory server that
 * checks each request (POST /v1/chat/completions to api.openai.com over
 * TLS, the key as a bearer token, the model, a streamed answer asked for)
 * and answers it with a streamed chat completion (SSE, chunked), served
 * in small slices. After every append the image checks that the newest
 * entry is the one appended, that no tool response is without its call
 * and that the token total is the sum of the entries'; after each
 * before_send with no job running, that the next request fits the limit.
 * Prints "voice: ok ..." and exits 0 when every check passed (QEMU passes
 * the status on); --plant-fault (-semihosting-config arg=...) gives the
 * key slot a wrong key, which the server refuses: the run must fail. The
 * library's share of the linked image is read from the link map
 * (test/embedded/flash_profiles.py).
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "board.h"
#include "common/image_util.h"
#include "ctxc/ctxc.h"
#include "ctxc/provider.h"

#define SLOTS 128u                /* as VD_SLOTS (voice/voice_day.h) */
#define ARENA_BYTES (32u * 1024u) /* as VD_ARENA_BYTES */
#define CONTEXT_LIMIT 4000u       /* as VD_CONTEXT_LIMIT */
#define PENDING_TOKENS 60u        /* what each request adds */
#define TURNS 160u                /* turns of each strategy's run */
#define MODEL "gpt-4o-mini"
#define KEY_NAME "device-key"
#define KEY "sk-voice-device-0123456789"

CTXC_HISTORY_DEFINE(hist, SLOTS, ARENA_BYTES);
/* 8 KiB of scratch: middle-out's summary answer and the entries a plan
 * inserts over a 128-slot history of short turns (as the voice day) */
CTXC_WORK_DEFINE(work, SLOTS, 8192);
static ctxc_settings_store_t settings;
static ctxc_session_t session;
static ctxc_provider_client_t client;
static ctxc_provider_binding_t binding;
static ctxc_port_t port;
static ctxc_error_t err;

static unsigned checks, failed;

static void write_out(const char *data, size_t len) { board_write(data, len); }

static bool check(bool ok, const char *what, ctxc_status_t st) {
    checks++;
    if (!ok) {
        failed++;
        img_put_s("FAIL: voice: ");
        img_put_s(what);
        img_put_status(st, &err);
        img_flush_line();
    }
    return ok;
}

/* ---- the in-memory server ------------------------------------------------
 *
 * One connection at a time: connect() takes the host and port, send()
 * takes the request (its head kept to check it, its body scanned for the
 * stream flag and counted against Content-Length), recv() answers once the
 * whole request is in, at most SLICE bytes a call. */

#define HEAD_MAX 1024u
#define SLICE 97u /* the answer arrives in pieces split anywhere */

static struct {
    bool open, tls, host_ok, answered;
    char head[HEAD_MAX];
    size_t head_len;   /* bytes of head[] filled */
    size_t head_end;   /* bytes of the head, "\r\n\r\n" included (0: not yet) */
    size_t body_len;   /* Content-Length */
    size_t body_seen;  /* body bytes received */
    size_t stream_hit; /* bytes of STREAM_FLAG matched so far */
    bool stream_flag;  /* the body asked for a streamed answer */
    bool model_ok;     /* the body starts with the model */
    size_t out_pos;    /* bytes of the answer sent */
    unsigned requests; /* requests answered */
    unsigned bad;      /* requests refused */
} srv;

static const char STREAM_FLAG[] = "\"stream\":true";
static const char BODY_START[] = "{\"model\":\"" MODEL "\"";

/* The answer: a streamed chat completion, one chunk per event. */
static const char *const events[] = {
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
    "\"content\":\"\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
    "\"<state_snapshot>The user asked for lights, timers, music \"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":"
    "\"and the weather; all were done.</state_snapshot>\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
    "\"stop\"}]}\n\n",
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":900,"
    "\"completion_tokens\":24,\"total_tokens\":924}}\n\n",
    "data: [DONE]\n\n"};

static char answer[1024];
static size_t answer_len;

static void answer_put(const char *s, size_t n) {
    if (answer_len + n <= sizeof answer) {
        memcpy(answer + answer_len, s, n);
    }
    answer_len += n;
}

static void answer_build(void) {
    static const char head[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: text/event-stream\r\n"
                               "Transfer-Encoding: chunked\r\n\r\n";
    answer_len = 0;
    answer_put(head, sizeof head - 1u);
    for (size_t i = 0; i < sizeof events / sizeof *events; i++) {
        size_t n = strlen(events[i]);
        char hex[8];
        size_t k = 0;
        for (int shift = 12; shift >= 0; shift -= 4) {
            unsigned d = (unsigned)(n >> (unsigned)shift) & 0xFu;
            if (d != 0 || k != 0 || shift == 0) {
                hex[k++] = "0123456789abcdef"[d];
            }
        }
        answer_put(hex, k);
        answer_put("\r\n", 2);
        answer_put(events[i], n);
        answer_put("\r\n", 2);
    }
    answer_put("0\r\n\r\n", 5);
}

static bool head_has(const char *line) {
    size_t n = strlen(line);
    for (size_t i = 0; i + n <= srv.head_end; i++) {
        if (memcmp(srv.head + i, line, n) == 0) {
            return true;
        }
    }
    return false;
}

/* The head is in: its request line, host, key and body length. */
static void head_done(void) {
    static const char cl[] = "\r\nContent-Length: ";
    srv.body_len = 0;
    for (size_t i = 0; i + sizeof cl - 1u < srv.head_end; i++) {
        if (memcmp(srv.head + i, cl, sizeof cl - 1u) == 0) {
            for (size_t k = i + sizeof cl - 1u;
                 k < srv.head_end && srv.head[k] >= '0' && srv.head[k] <= '9';
                 k++) {
                srv.body_len = srv.body_len * 10u + (size_t)(srv.head[k] - '0');
            }
            break;
        }
    }
    if (!head_has("POST /v1/chat/completions HTTP/1.1\r\n") ||
        !head_has("\r\nAuthorization: Bearer " KEY "\r\n") ||
        srv.body_len == 0) {
        srv.bad++;
    }
}

static void body_bytes(const uint8_t *d, size_t n) {
    for (size_t i = 0; i < n; i++) {
        size_t at = srv.body_seen + i;
        if (at < sizeof BODY_START - 1u && d[i] != (uint8_t)BODY_START[at]) {
            srv.model_ok = false;
        }
        /* STREAM_FLAG has no prefix that recurs inside it but '"': a
         * mismatch restarts at 0, or at 1 on a '"' */
        if (!srv.stream_flag) {
            if (d[i] == (uint8_t)STREAM_FLAG[srv.stream_hit]) {
                srv.stream_flag = ++srv.stream_hit == sizeof STREAM_FLAG - 1u;
            } else {
                srv.stream_hit = d[i] == '"' ? 1u : 0u;
            }
        }
    }
    srv.body_seen += n;
}

static ctxc_status_t srv_connect(void *ctx, const char *host, uint16_t p,
                                 bool tls, ctxc_error_t *e) {
    (void)ctx;
    (void)e;
    memset(srv.head, 0, sizeof srv.head);
    srv.open = true;
    srv.tls = tls;
    srv.host_ok = strcmp(host, "api.openai.com") == 0 && p == 443;
    srv.answered = false;
    srv.head_len = srv.head_end = srv.body_len = srv.body_seen = 0;
    srv.stream_hit = 0;
    srv.stream_flag = false;
    srv.model_ok = true;
    srv.out_pos = 0;
    return CTXC_OK;
}

static int32_t srv_send(void *ctx, const uint8_t *d, size_t n) {
    (void)ctx;
    if (!srv.open) {
        return CTXC_TRANSPORT_ERROR;
    }
    size_t used = 0;
    if (srv.head_end == 0) {
        while (used < n && srv.head_end == 0) {
            if (srv.head_len == sizeof srv.head) {
                srv.bad++;
                return CTXC_TRANSPORT_ERROR;
            }
            srv.head[srv.head_len++] = (char)d[used++];
            if (srv.head_len >= 4 &&
                memcmp(srv.head + srv.head_len - 4, "\r\n\r\n", 4) == 0) {
                srv.head_end = srv.head_len;
                head_done();
            }
        }
    }
    body_bytes(d + used, n - used);
    return (int32_t)n;
}

static int32_t srv_recv(void *ctx, uint8_t *buf, size_t cap) {
    (void)ctx;
    if (!srv.open) {
        return CTXC_TRANSPORT_ERROR;
    }
    if (srv.head_end == 0 || srv.body_seen < srv.body_len) {
        return 0; /* the request is not in yet */
    }
    if (!srv.answered) {
        srv.answered = true;
        srv.requests++;
        if (!srv.tls || !srv.host_ok || !srv.stream_flag || !srv.model_ok ||
            srv.body_seen != srv.body_len) {
            srv.bad++;
        }
    }
    if (srv.out_pos == answer_len) {
        return CTXC_TRANSPORT_EOF;
    }
    size_t n = answer_len - srv.out_pos;
    n = n < cap ? n : cap;
    n = n < SLICE ? n : SLICE;
    memcpy(buf, answer + srv.out_pos, n);
    srv.out_pos += n;
    return (int32_t)n;
}

static void srv_close(void *ctx) {
    (void)ctx;
    srv.open = false;
}

static const ctxc_transport_ops_t srv_ops = {
    srv_connect, srv_send, srv_recv, srv_close, NULL, NULL, NULL};

/* --plant-fault: the key slot answers another key (the server refuses the
 * requests, and a check must fail: ctest voice_target_selftest) */
static bool plant_fault;

/* ctxc_key_fn: the device's key slot, under KEY_NAME */
static ctxc_status_t device_key(void *ctx, const char *name, char *buf,
                                size_t cap, size_t *len, ctxc_error_t *e) {
    (void)ctx;
    static const char good[] = KEY, wrong[] = "sk-voice-device-0123456788";
    _Static_assert(sizeof good == sizeof wrong, "keys of the same length");
    const char *key = plant_fault ? wrong : good;
    if (strcmp(name, KEY_NAME) != 0) {
        return ctxc_error_set(e, CTXC_E_NOT_FOUND, "no API key named '%s'",
                              name);
    }
    if (sizeof good > cap) {
        return ctxc_error_set(e, CTXC_E_TOO_LARGE, "the API key does not fit");
    }
    memcpy(buf, key, sizeof good);
    *len = sizeof good - 1u;
    return CTXC_OK;
}

/* The session's resolver: the binding's (ctxc_provider_resolve), and what
 * it handed out kept for the checks. */
static unsigned resolved;
static bool resolved_openai;

static ctxc_status_t resolve(void *user, const char *profile,
                             const ctxc_llm_t **llm, ctxc_error_t *e) {
    ctxc_status_t st = ctxc_provider_resolve(user, profile, llm, e);
    if (st == CTXC_OK) {
        resolved++;
        resolved_openai = (*llm)->ctx == &client && (*llm)->start != NULL &&
                          strcmp((*llm)->provider, "openai") == 0 &&
                          strcmp((*llm)->model, MODEL) == 0;
    }
    return st;
}

/* ---- the turns -------------------------------------------------------------
 */

static uint64_t rng_state = 36u;

static uint32_t rnd(void) { /* xorshift64* */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (uint32_t)((rng_state * 2685821657736338717ull) >> 32);
}

static const char *const words[] = {
    "the",    "light",   "kitchen", "turn",  "on",       "please",
    "what",   "weather", "today",   "timer", "minutes",  "set",
    "music",  "play",    "volume",  "down",  "tomorrow", "morning",
    "remind", "me",      "to",      "call",  "mom",      "at",
    "six",    "okay",    "done",    "it",    "is",       "sunny"};

/* lo..hi words into buf */
static void sentence(char *buf, size_t cap, uint32_t lo, uint32_t hi) {
    uint32_t n = lo + rnd() % (hi - lo + 1u);
    size_t len = 0;
    for (uint32_t i = 0; i < n; i++) {
        const char *w = words[rnd() % (sizeof words / sizeof *words)];
        size_t wl = strlen(w);
        if (len + wl + 2u >= cap) {
            break;
        }
        if (i > 0) {
            buf[len++] = ' ';
        }
        memcpy(buf + len, w, wl);
        len += wl;
    }
    buf[len] = '\0';
}

/* what a run counted */
static struct { unsigned compressions, summaries, by_limit[3]; } run;

static void note(const ctxc_send_report_t *rep) {
    if (!rep->compressed) {
        return;
    }
    run.compressions++;
    for (unsigned b = 0; b < 3; b++) {
        run.by_limit[b] += (rep->trigger >> b) & 1u;
    }
    run.summaries +=
        session.last_compress.strategy == CTXC_STRATEGY_MIDDLE_OUT &&
        session.last_compress.llm_call_made;
}

/* The newest entry is `b` as appended (its first string). */
static bool newest_is(const ctxc_block_t *b) {
    ctxc_entry_t e;
    ctxc_block_t got;
    size_t n = ctxc_history_count(&hist);
    if (n == 0 || ctxc_history_get(&hist, n - 1, &e) != CTXC_OK ||
        ctxc_entry_block(&e, 0, &got) != CTXC_OK || got.type != b->type) {
        return false;
    }
    ctxc_str_t want = b->type == CTXC_BLOCK_TEXT ? b->u.text.text
                      : b->type == CTXC_BLOCK_TOOL_CALL
                          ? b->u.tool_call.id
                          : b->u.tool_response.call_id;
    ctxc_str_t have = got.type == CTXC_BLOCK_TEXT ? got.u.text.text
                      : got.type == CTXC_BLOCK_TOOL_CALL
                          ? got.u.tool_call.id
                          : got.u.tool_response.call_id;
    return want.len == have.len && memcmp(want.ptr, have.ptr, want.len) == 0;
}

/* before_send, then the append that makes room, then the checks. */
static bool turn_entry(ctxc_speaker_t sp, const ctxc_block_t *b) {
    ctxc_send_report_t rep;
    ctxc_status_t st =
        ctxc_session_before_send(&session, PENDING_TOKENS, &rep, &err);
    if (!check(st == CTXC_OK, "ctxc_session_before_send", st)) {
        return false;
    }
    note(&rep);
    if (!ctxc_session_job_active(&session) &&
        !check(ctxc_history_tokens(&hist) + PENDING_TOKENS <= CONTEXT_LIMIT,
               "before_send left room for the request", CTXC_OK)) {
        return false;
    }
    ctxc_entry_in_t in = {sp, b, 1, CTXC_STR_ABSENT};
    st = ctxc_session_add_room(&session, &in, &rep, &err);
    if (!check(st == CTXC_OK, "ctxc_session_add_room", st)) {
        return false;
    }
    note(&rep);
    ctxc_history_stats_t hs;
    ctxc_history_stats(&hist, &hs);
    return check(newest_is(b), "the newest entry is the one appended",
                 CTXC_OK) &&
           check(hs.unpaired_responses == 0,
                 "no tool response without its call", CTXC_OK) &&
           check(img_entry_token_sum(&hist) ==
                     ctxc_history_tokens_estimated(&hist),
                 "the token total is the sum of the entries'", CTXC_OK);
}

static ctxc_block_t text_block(const char *s) {
    ctxc_block_t b;
    memset(&b, 0, sizeof b);
    b.type = CTXC_BLOCK_TEXT;
    b.u.text.text = ctxc_str(s);
    return b;
}

/* TURNS turns with the strategy in force: a human turn, every fifth a
 * tool call and its result, the answer. */
static bool day(void) {
    static char human[320], ai[640], result[400];
    static char id[16];
    static uint32_t calls;
    memset(&run, 0, sizeof run);
    for (uint32_t t = 0; t < TURNS; t++) {
        sentence(human, sizeof human, 5, 40);
        ctxc_block_t b = text_block(human);
        if (!turn_entry(CTXC_SPEAKER_HUMAN, &b)) {
            return false;
        }
        if (t % 5u == 4u) { /* call ids unique across the runs */
            uint32_t c = ++calls;
            memcpy(id, "call_", 5);
            for (size_t k = 0; k < 4; k++, c /= 10u) {
                id[8 - k] = (char)('0' + (int)(c % 10u));
            }
            id[9] = '\0';
            memset(&b, 0, sizeof b);
            b.type = CTXC_BLOCK_TOOL_CALL;
            b.u.tool_call.id = ctxc_str(id);
            b.u.tool_call.name = CTXC_STR_LIT("smart_home");
            b.u.tool_call.parameters = CTXC_STR_LIT("{\"room\":\"kitchen\"}");
            if (!turn_entry(CTXC_SPEAKER_AI, &b)) {
                return false;
            }
            result[0] = '"';
            sentence(result + 1, sizeof result - 3u, 5, 40);
            size_t len = strlen(result);
            memcpy(result + len, "\"", 2);
            memset(&b, 0, sizeof b);
            b.type = CTXC_BLOCK_TOOL_RESPONSE;
            b.u.tool_response.call_id = ctxc_str(id);
            b.u.tool_response.tool_name = CTXC_STR_LIT("smart_home");
            b.u.tool_response.result = ctxc_str(result);
            if (!turn_entry(CTXC_SPEAKER_TOOL, &b)) {
                return false;
            }
        }
        sentence(ai, sizeof ai, 10, 80);
        b = text_block(ai);
        if (!turn_entry(CTXC_SPEAKER_AI, &b)) {
            return false;
        }
    }
    return true;
}

/* One run's line: "voice: STRATEGY: N compressions (tokens a, entries b,
 * bytes c), S summaries, H entries, T tokens". */
static void run_line(const char *strategy) {
    img_put_s("voice: ");
    img_put_s(strategy);
    img_put_s(": ");
    img_put_u(run.compressions);
    img_put_s(" compressions (tokens ");
    img_put_u(run.by_limit[0]);
    img_put_s(", entries ");
    img_put_u(run.by_limit[1]);
    img_put_s(", bytes ");
    img_put_u(run.by_limit[2]);
    img_put_s("), ");
    img_put_u(run.summaries);
    img_put_s(" summaries, ");
    img_put_u(ctxc_history_count(&hist));
    img_put_s(" entries, ");
    img_put_u(ctxc_history_tokens(&hist));
    img_put_s(" tokens");
    img_flush_line();
}

static bool set_ok(ctxc_status_t st, const char *what) {
    return check(st == CTXC_OK, what, st);
}

int main(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        plant_fault = plant_fault || strcmp(argv[i], "--plant-fault") == 0;
    }
    img_out_init(write_out);
    answer_build();
    check(answer_len <= sizeof answer, "the answer fits its buffer", CTXC_OK);

    /* typed calls on setting ids only, no filesystem */
    ctxc_settings_init(&settings, NULL);
    if (!set_ok(ctxc_settings_set_enum_index(&settings,
                                             CTXC_SETTING_COMPRESSION_STRATEGY,
                                             CTXC_STRATEGY_MIDDLE_OUT, &err),
                "compression.strategy") ||
        !set_ok(ctxc_settings_set_u32(&settings, CTXC_SETTING_CONTEXT_LIMIT,
                                      CONTEXT_LIMIT, &err),
                "context-limit") ||
        !set_ok(ctxc_settings_set_ratio(
                    &settings, CTXC_SETTING_COMPRESSION_PREFETCH_THRESHOLD, 700,
                    &err),
                "compression.prefetch-threshold") ||
        !set_ok(ctxc_settings_set_str(&settings, CTXC_SETTING_PROVIDER,
                                      "openai", &err),
                "provider") ||
        !set_ok(
            ctxc_settings_set_str(&settings, CTXC_SETTING_MODEL, MODEL, &err),
            "model") ||
        !set_ok(ctxc_settings_set_str(&settings, CTXC_SETTING_AUTH_KEY_NAME,
                                      KEY_NAME, &err),
                "auth-key-name")) {
        return 1;
    }
    /* what this build leaves out is refused */
    ctxc_status_t st = ctxc_settings_set_enum_index(
        &settings, CTXC_SETTING_COMPRESSION_STRATEGY, CTXC_STRATEGY_ONE_SHOT,
        &err);
    check(st == CTXC_E_UNKNOWN_STRATEGY, "one-shot is refused", st);
    st = ctxc_settings_set_str(&settings, CTXC_SETTING_PROVIDER, "anthropic",
                               &err);
    check(st == CTXC_E_INVALID_ARG, "anthropic is refused", st);
    st = ctxc_settings_command(&settings, "/set context-limit 1", NULL, NULL,
                               NULL);
    check(st == CTXC_E_UNAVAILABLE, "the command layer is left out", st);

    /* the port: the in-memory server and the key slot */
    port.transport.ops = &srv_ops;
    port.transport.ctx = &srv;
    port.key = device_key;
    ctxc_provider_bind(&binding, &client, &settings, &port, true);
    if (!set_ok(ctxc_session_init(&session, &hist, &work, &settings, &err),
                "ctxc_session_init")) {
        return 1;
    }
    ctxc_session_set_port(&session, &port);
    ctxc_session_set_llm_resolver(&session, resolve, &binding);
    if (!set_ok(ctxc_session_check(&session, &err), "ctxc_session_check")) {
        return 1;
    }

    /* middle-out over the provider client */
    bool ok = day();
    if (ctxc_session_job_active(&session)) {
        ctxc_session_compress_cancel(&session);
    }
    run_line("middle-out");
    unsigned mo_summaries = run.summaries;
    check(ok && mo_summaries > 0, "middle-out summarised through the provider",
          CTXC_OK);
    check(srv.requests >= mo_summaries && srv.bad == 0,
          "every request went to the openai API with the device's key",
          CTXC_OK);
    check(resolved > 0 && resolved_openai,
          "the resolver set up the provider client for openai", CTXC_OK);

    /* the network-free strategies, on the same history */
    static const struct {
        ctxc_strategy_id_t id;
        const char *name;
    } lf[] = {{CTXC_STRATEGY_TOP_DOWN_TRUNCATION, "top-down-truncation"},
              {CTXC_STRATEGY_HIGH_DENSITY, "high-density"}};
    for (size_t i = 0; ok && i < sizeof lf / sizeof *lf; i++) {
        unsigned requests = srv.requests;
        ok = set_ok(ctxc_settings_set_enum_index(
                        &settings, CTXC_SETTING_COMPRESSION_STRATEGY, lf[i].id,
                        &err),
                    lf[i].name) &&
             day();
        run_line(lf[i].name);
        check(ok && run.compressions > 0, lf[i].name, CTXC_OK);
        check(srv.requests == requests, "no request without an LLM strategy",
              CTXC_OK);
    }
    ctxc_session_deinit(&session);
    if (failed != 0) {
        img_put_s("voice: ");
        img_put_u(failed);
        img_put_s(" of ");
        img_put_u(checks);
        img_put_s(" checks failed");
        img_flush_line();
        return 1;
    }
    img_put_s("voice: ok, ");
    img_put_u(checks);
    img_put_s(" checks, ");
    img_put_u(srv.requests);
    img_put_s(" summaries from the provider");
    img_flush_line();
    return 0;
}
