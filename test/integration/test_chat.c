/*
 * `ctxc chat` (boards/host/cli_repl.c in chat mode) against the local
 * fixture server (test/fixtures/https_server.py, the ctest fixture
 * `ctxc_https`): the CLI runs as a child with a script on stdin; its model
 * is the fixture's fixture-chat ("fixture-chat: N messages received.") over
 * TLS to https://localhost:PORT (the fixture's CA in $CTXC_HOME's
 * settings.json). What was sent is read back from the server's request log
 * (requests.jsonl in the fixture folder), found by a marker unique to the
 * run in the system text. Everything stays on 127.0.0.1.
 */
#define _XOPEN_SOURCE 700 /* posix_openpt */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "../unit/mini_server.h"
#include "../unit/pty.h"
#include "fixture.h"

/* ---- the fixture ------------------------------------------------------- */

static fixture_t fx;
static const char *fixture_dir = fx.dir;
static uint16_t port_good;

static int load_fixture(void **state) {
    (void)state;
    if (fixture_load(&fx, "test_chat", "good", NULL) != 0) {
        return -1;
    }
    port_good = fixture_port(&fx, "good");
    return 0;
}

/* ---- $CTXC_HOME: a fresh folder whose settings trust the fixture's CA --- */

static char g_base[256];
static char g_home[300];
static char g_hist[400];
static char g_marker[128]; /* unique system text of this test */
static unsigned g_seq;

static void put_file(const char *path, const char *text) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    assert_int_equal(fclose(f), 0);
}

static int setup(void **state) {
    (void)state;
    const char *dir = getenv("TMPDIR");
    snprintf(g_base, sizeof g_base, "%s/ctxc_test_chat_XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    if (mkdtemp(g_base) == NULL) {
        return -1;
    }
    snprintf(g_home, sizeof g_home, "%s/home", g_base);
    char p[600];
    snprintf(p, sizeof p, "%s/profiles", g_home);
    if (mkdir(g_home, 0700) != 0 || mkdir(p, 0700) != 0) {
        return -1;
    }
    snprintf(p, sizeof p, "%s/settings.json", g_home);
    char text[1400];
    snprintf(text, sizeof text, "{\"network.ca-file\": \"%s/ca.pem\"}\n",
             fixture_dir);
    put_file(p, text);
    setenv("CTXC_HOME", g_home, 1);
    snprintf(g_hist, sizeof g_hist, "%s/history.jsonl", g_base);
    /* unique across the suite's runs (plain, ASan, valgrind at once) */
    snprintf(g_marker, sizeof g_marker, "You are the chat test %ld-%ld-%u.",
             (long)getpid(), (long)time(NULL), ++g_seq);
    return 0;
}

static int teardown(void **state) {
    (void)state;
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_base);
    return system(cmd) == 0 ? 0 : -1;
}

/* ---- running the CLI ---------------------------------------------------- */

#define OUT_CAP ((size_t)1024 * 1024)
static char g_out[OUT_CAP + 1];
static char g_err[OUT_CAP + 1];
static int g_status;

static size_t slurp(const char *path, char *buf, size_t cap) {
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        buf[0] = '\0';
        return 0;
    }
    size_t n = fread(buf, 1, cap, f);
    fclose(f);
    buf[n] = '\0';
    return n;
}

/* Runs `ctxc CMD ARGS...` (NULL-terminated) with `script` on stdin;
 * g_status, g_out and g_err get what it did. */
static void run_v(const char *cmd, const char *script, va_list ap) {
    char in[400], out[400], err[400];
    snprintf(in, sizeof in, "%s/stdin.txt", g_base);
    snprintf(out, sizeof out, "%s/stdout.txt", g_base);
    snprintf(err, sizeof err, "%s/stderr.txt", g_base);
    put_file(in, script);
    char *argv[32];
    size_t argc = 0;
    argv[argc++] = (char *)"ctxc";
    argv[argc++] = (char *)cmd;
    for (const char *a; (a = va_arg(ap, const char *)) != NULL;) {
        assert_true(argc < 31);
        argv[argc++] = (char *)a;
    }
    argv[argc] = NULL;
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int i = open(in, O_RDONLY);
        int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (i < 0 || o < 0 || e < 0 || dup2(i, 0) < 0 || dup2(o, 1) < 0 ||
            dup2(e, 2) < 0) {
            _exit(126);
        }
        alarm(120); /* a hang fails the run (valgrind is slow) */
        execv(CTXC_CLI_PATH, argv);
        _exit(127);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    g_status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    slurp(out, g_out, OUT_CAP);
    slurp(err, g_err, OUT_CAP);
    assert_true(g_status != 126 && g_status != 127);
}

static void chat(const char *script, ...) {
    va_list ap;
    va_start(ap, script);
    run_v("chat", script, ap);
    va_end(ap);
}

static void run_v_repl(const char *script, ...) {
    va_list ap;
    va_start(ap, script);
    run_v("repl", script, ap);
    va_end(ap);
}

/* `ctxc CMD ARGS...` with nothing on stdin. */
static void run(const char *cmd, ...) {
    va_list ap;
    va_start(ap, cmd);
    run_v(cmd, "", ap);
    va_end(ap);
}

#define assert_contains(hay, needle)                                           \
    do {                                                                       \
        if (strstr((hay), (needle)) == NULL) {                                 \
            fail_msg("'%s' not found in: %.3000s", (needle), (hay));           \
        }                                                                      \
    } while (0)

/* `needle` occurs after `after` in hay; returns where. */
static const char *assert_after(const char *hay, const char *after,
                                const char *needle) {
    const char *a = strstr(hay, after);
    if (a == NULL) {
        fail_msg("'%s' not found in: %.3000s", after, hay);
    }
    const char *n = strstr(a + strlen(after), needle);
    if (n == NULL) {
        fail_msg("'%s' not found after '%s' in: %.3000s", needle, after, hay);
    }
    return n;
}

static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL;
         p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/* The base URL of each API on the fixture (TLS, "localhost" as its
 * certificate names it). */
static const char *const APIS[] = {"openai", "anthropic", "gemini"};

static const char *base_of(const char *api) {
    static char buf[128];
    snprintf(buf, sizeof buf, "https://localhost:%u%s", (unsigned)port_good,
             strcmp(api, "openai") == 0 ? "/v1" : "");
    return buf;
}

/* The lines of the server's request log that hold `marker` (the bodies,
 * JSON-escaped as the log holds them), concatenated into buf. */
static char g_log[8u * 1024u * 1024u];
static char g_sent[1024 * 1024];

static size_t sent_with(const char *marker) {
    char path[1100];
    snprintf(path, sizeof path, "%s/requests.jsonl", fixture_dir);
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    size_t n = 0, lines = 0;
    g_sent[0] = '\0';
    while (fgets(g_log, (int)sizeof g_log, f) != NULL) {
        if (strstr(g_log, marker) != NULL) {
            size_t k = strlen(g_log);
            assert_true(n + k < sizeof g_sent);
            memcpy(g_sent + n, g_log, k + 1);
            n += k;
            lines++;
        }
    }
    fclose(f);
    return lines;
}

/* ---- tests -------------------------------------------------------------- */

/* Two lines: two replies on stdout, the history human/ai alternating with
 * them, the requests with the system text and the roles in order (each
 * API's own shape). */
static void test_two_turns_each_api(void **state) {
    (void)state;
    for (size_t a = 0; a < 3; a++) {
        char marker[200];
        snprintf(marker, sizeof marker, "%s %s", g_marker, APIS[a]);
        unlink(g_hist);
        chat("hello, first line\nand \"a second\" line\n/save\n", "--history",
             g_hist, "--provider", APIS[a], "--model", "fixture-chat",
             "--base-url", base_of(APIS[a]), "--system", marker, NULL);
        assert_int_equal(g_status, 0);
        /* replies in order, each on its own line, then /save */
        const char *r1 = assert_after(g_out, "",
                                      "fixture-chat: 1 message "
                                      "received.\n");
        const char *r2 = assert_after(r1, "received.\n",
                                      "fixture-chat: 3 messages "
                                      "received.\n");
        assert_after(r2, "received.\n", "saved 4 entries to ");
        assert_null(strstr(g_out, "error"));
        /* the saved history */
        static char saved[65536];
        slurp(g_hist, saved, sizeof saved - 1);
        assert_string_equal(
            saved,
            "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"hello, first line\"}]}\n"
            "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"fixture-chat: 1 message received.\"}]}\n"
            "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"and \\\"a second\\\" line\"}]}\n"
            "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
            "\"fixture-chat: 3 messages received.\"}]}\n");
        /* what the server got: two requests, the second with the whole
         * history in order */
        assert_int_equal(sent_with(marker), 2);
        char want[1024];
        if (strcmp(APIS[a], "openai") == 0) {
            snprintf(
                want, sizeof want,
                "[{\\\"role\\\":\\\"system\\\",\\\"content\\\":\\\"%s\\\"},"
                "{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"hello, "
                "first line\\\"},{\\\"role\\\":\\\"assistant\\\","
                "\\\"content\\\":\\\"fixture-chat: 1 message "
                "received.\\\"},{\\\"role\\\":\\\"user\\\","
                "\\\"content\\\":\\\"and \\\\\\\"a second\\\\\\\" "
                "line\\\"}]",
                marker);
        } else if (strcmp(APIS[a], "anthropic") == 0) {
            snprintf(want, sizeof want, "\\\"system\\\":\\\"%s\\\"", marker);
            assert_contains(g_sent, want);
            snprintf(want, sizeof want,
                     "\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"hello, "
                     "first line\\\"},{\\\"role\\\":\\\"assistant\\\","
                     "\\\"content\\\":\\\"fixture-chat: 1 message "
                     "received.\\\"},{\\\"role\\\":\\\"user\\\","
                     "\\\"content\\\":\\\"and \\\\\\\"a second\\\\\\\" "
                     "line\\\"}]");
        } else {
            snprintf(want, sizeof want, "%s", marker);
            assert_contains(g_sent, "systemInstruction");
            assert_contains(g_sent, want);
            snprintf(want, sizeof want,
                     "\\\"role\\\":\\\"user\\\",\\\"parts\\\":[{\\\"text\\\":"
                     "\\\"hello, first line\\\"}]},{\\\"role\\\":\\\"model\\\","
                     "\\\"parts\\\":[{\\\"text\\\":\\\"fixture-chat: 1 "
                     "message received.\\\"}]},{\\\"role\\\":\\\"user\\\","
                     "\\\"parts\\\":[{\\\"text\\\":\\\"and \\\\\\\"a "
                     "second\\\\\\\" line\\\"}]}]");
        }
        assert_contains(g_sent, want);
    }
}

/* A history with tool calls, results and thinking: tool entries as user
 * text, calls in ai entries as text, thinking left out. */
static void test_tool_entries_rendered(void **state) {
    (void)state;
    put_file(g_hist,
             "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
             "\"read a.c\"}]}\n"
             "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"thinking\","
             "\"thought\":\"SECRET-THOUGHT\"},{\"type\":\"text\",\"text\":"
             "\"Reading it.\"},{\"type\":\"tool_call\",\"id\":\"c1\",\"name\":"
             "\"read_file\",\"parameters\":{\"path\":\"a.c\"}}]}\n"
             "{\"speaker\":\"tool\",\"blocks\":[{\"type\":\"tool_response\","
             "\"callId\":\"c1\",\"toolName\":\"read_file\",\"result\":"
             "\"int main(void);\"}]}\n"
             "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"thinking\","
             "\"thought\":\"SECRET-ONLY\"}]}\n");
    chat("what is in it?\n/stats\n", "--history", g_hist, "--provider",
         "openai", "--model", "fixture-chat", "--base-url", base_of("openai"),
         "--system", g_marker, NULL);
    assert_int_equal(g_status, 0);
    /* 4 messages: the thinking-only entry is not one */
    assert_contains(g_out, "fixture-chat: 4 messages received.\n");
    assert_contains(g_out, "entries 6, ");
    assert_int_equal(sent_with(g_marker), 1);
    assert_null(strstr(g_sent, "SECRET"));
    assert_contains(
        g_sent,
        "{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"read a.c\\\"},"
        "{\\\"role\\\":\\\"assistant\\\",\\\"content\\\":\\\"Reading "
        "it.\\\\n\\\\n"
        "[Tool Call: read_file] {\\\\\\\"path\\\\\\\":\\\\\\\"a.c\\\\\\\"}"
        "\\\"},{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"[Tool Result: "
        "read_file]\\\\n\\\\\\\"int main(void);\\\\\\\"\\\"},"
        "{\\\"role\\\":\\\"user\\\",\\\"content\\\":\\\"what is in it?\\\"}]");
}

static const char LONG_LINE[] =
    "the quick brown fox jumps over the lazy dog while the cat watches "
    "from the window and the bird sings a song about summer rain and "
    "distant hills";

/* $CTXC_HOME/profiles/NAME.json: the fixture's OpenAI API with `model`. */
static void put_profile(const char *name, const char *model) {
    char p[600], text[600];
    snprintf(p, sizeof p, "%s/profiles/%s.json", g_home, name);
    snprintf(text, sizeof text,
             "{\"provider\": \"openai\", \"model\": \"%s\", "
             "\"base-url\": \"%s\"}\n",
             model, base_of("openai"));
    put_file(p, text);
}

/* The --history file with 12 long entries (human, ai, ...); its text is
 * left in hist (cap bytes). */
static void put_twelve_entries(char *hist, size_t cap) {
    size_t k = 0;
    for (int i = 0; i < 12; i++) {
        k += (size_t)snprintf(hist + k, cap - k,
                              "{\"speaker\":\"%s\",\"blocks\":[{\"type\":"
                              "\"text\",\"text\":\"earlier %d: %s\"}]}\n",
                              i % 2 ? "ai" : "human", i, LONG_LINE);
        assert_true(k < cap);
    }
    put_file(g_hist, hist);
}

/* A tiny context limit with top-down-truncation (no model call): the
 * history is cut before a send, the line says so, fewer messages go out. */
static void test_top_down_compresses_during_the_chat(void **state) {
    (void)state;
    char script[2048];
    snprintf(script, sizeof script,
             "/set compression.strategy top-down-truncation\n"
             "/set context-limit 150\n"
             "one: %s\ntwo: %s\nthree: %s\nfour: %s\n/stats\n/save\n",
             LONG_LINE, LONG_LINE, LONG_LINE, LONG_LINE);
    chat(script, "--history", g_hist, "--provider", "openai", "--model",
         "fixture-chat", "--base-url", base_of("openai"), "--system", g_marker,
         NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "[compressed with top-down-truncation: ");
    assert_null(strstr(g_out, "error"));
    /* the reply after the cut counts fewer messages than the history had */
    const char *cut = strstr(g_out, "[compressed with top-down-truncation: ");
    unsigned before = 0, after = 0;
    assert_int_equal(sscanf(cut,
                            "[compressed with top-down-truncation: %u -> %u "
                            "entries",
                            &before, &after),
                     2);
    assert_true(after < before);
    char reply[80];
    snprintf(reply, sizeof reply, "fixture-chat: %u message%s received.", after,
             after == 1 ? "" : "s");
    assert_after(g_out, "[compressed with top-down-truncation: ", reply);
    static char saved[65536];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_null(strstr(saved, "one: "));
    assert_contains(saved, "four: ");
    /* the last reply was appended after the cut */
    assert_after(saved, "four: ", "{\"speaker\":\"ai\"");
}

/* middle-out with its summary written by the fixture (compression.profile:
 * model fixture-ok), while the chat itself talks to fixture-chat. */
static void test_middle_out_summarises_during_the_chat(void **state) {
    (void)state;
    put_profile("summ", "fixture-ok");
    char script[2048];
    snprintf(script, sizeof script,
             "/set compression.strategy middle-out\n"
             "/set compression.profile summ\n"
             "/set context-limit 200\n"
             "one: %s\ntwo: %s\nthree: %s\nfour: %s\nfive: %s\n/save\n",
             LONG_LINE, LONG_LINE, LONG_LINE, LONG_LINE, LONG_LINE);
    chat(script, "--history", g_hist, "--provider", "openai", "--model",
         "fixture-chat", "--base-url", base_of("openai"), "--system", g_marker,
         NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "[compressed with middle-out: ");
    assert_null(strstr(g_out, "error"));
    static char saved[65536];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_contains(saved, "\"isSummary\":true");
    assert_contains(saved, "<state_snapshot>");
    assert_contains(saved, "five: ");
    /* the summary went to the model with the next chat request */
    assert_int_equal(sent_with(g_marker), 5);
    assert_contains(g_sent, "state_snapshot");
}

/* An HTTP error: the provider's message printed, the human line kept, no
 * ai entry; the next line works again. */
static void test_provider_error_keeps_the_line(void **state) {
    (void)state;
    chat("this one fails\n/save\n/set model fixture-chat\nthis one works\n"
         "/save\n",
         "--history", g_hist, "--provider", "openai", "--model",
         "fixture-error-401", "--base-url", base_of("openai"), NULL);
    assert_int_equal(g_status, 1); /* a scripted line failed */
    assert_contains(g_err, "error: openai fixture-error-401: ");
    assert_contains(g_err, "Incorrect API key provided.");
    assert_contains(g_err, "no reply added");
    assert_contains(g_out, "saved 1 entries");
    /* the next request carries both human lines, no ai entry between */
    assert_contains(g_out, "fixture-chat: 2 messages received.\n");
    static char saved[65536];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_int_equal(count_of(saved, "\"speaker\":\"human\""), 2);
    assert_int_equal(count_of(saved, "\"speaker\":\"ai\""), 1);
}

/* A reply longer than the reply buffer (64 KiB; one JSON answer with
 * --no-stream): what was shown of it (the buffer's 65535 bytes) is what
 * the history keeps, marked as cut (issue 39 item 8). */
static void test_reply_too_long(void **state) {
    (void)state;
    chat("give me a lot\n/save\n", "--history", g_hist, "--provider", "openai",
         "--model", "fixture-chat-long", "--base-url", base_of("openai"),
         "--no-stream", NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_err, "note: the reply is longer than 65535 bytes (the "
                           "chat's reply buffer): the 65535 bytes shown are "
                           "kept in the history, marked as cut");
    assert_contains(g_out, "saved 2 entries");
    static char saved[256 * 1024];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_int_equal(count_of(saved, "\"speaker\":\"ai\""), 1);
    assert_contains(saved, "\"metadata\":{\"cut\":\"reply-buffer\","
                           "\"keptBytes\":65535}");
    /* shown = kept: the reply's bytes on stdout are the entry's */
    const char *text = strstr(saved, "\"speaker\":\"ai\"");
    assert_non_null(text);
    text = strstr(text, "\"text\":\"") + 8;
    const char *end = strchr(text, '"');
    assert_int_equal(end - text, 65535);
    static char kept[65536];
    memcpy(kept, text, 65535);
    kept[65535] = '\0';
    assert_non_null(strstr(g_out, kept));
}

/* A reply cut off by the model's output limit (fixture-cut: finish reason
 * length / max_tokens / MAX_TOKENS), streamed or not: shown, then kept as
 * shown with metadata.cut output-limit and the provider's reason, and a
 * note says so; the next turn sends it (issue 39 item 8). */
static void test_cut_reply_kept_and_marked(void **state) {
    (void)state;
    static const char *const reason[] = {"length", "max_tokens", "MAX_TOKENS"};
    for (size_t a = 0; a < 3; a++) {
        for (int stream = 0; stream < 2; stream++) {
            unlink(g_hist);
            chat("cut me short\n/save\n", "--history", g_hist, "--provider",
                 APIS[a], "--model", "fixture-cut", "--base-url",
                 base_of(APIS[a]), stream ? NULL : "--no-stream", NULL);
            assert_int_equal(g_status, 0);
            assert_contains(g_out, "<state_snapshot>");
            char want[200];
            snprintf(want, sizeof want,
                     "note: the reply was cut off by the model's output "
                     "limit (finish reason %s): kept in the history as "
                     "shown, marked as cut",
                     reason[a]);
            assert_contains(g_err, want);
            static char saved[65536];
            slurp(g_hist, saved, sizeof saved - 1);
            snprintf(want, sizeof want,
                     "\"text\":\"<state_snapshot>\\n<overall_goal\"}],"
                     "\"metadata\":{\"cut\":\"output-limit\","
                     "\"finishReason\":\"%s\"}}",
                     reason[a]);
            assert_contains(saved, want);
        }
    }
}

/* The other limits are not the reply's: each error names its own. Streamed,
 * the same reply comes as one SSE event of ~70 KB: read whatever its size
 * (issue 25), it is the reply buffer that is too small; a key longer than
 * the key buffer is refused before anything is sent. */
static void test_other_limits_name_themselves(void **state) {
    (void)state;
    chat("give me a lot\n/save\n", "--history", g_hist, "--provider", "openai",
         "--model", "fixture-chat-long", "--base-url", base_of("openai"), NULL);
    assert_int_equal(g_status, 0); /* kept as shown, marked as cut */
    assert_contains(g_err, "note: the reply is longer than 65535 bytes");
    assert_null(strstr(g_out, "CTXC_CFG_HTTP_SSE_BUFFER_BYTES"));
    assert_null(strstr(g_err, "CTXC_CFG_HTTP_SSE_BUFFER_BYTES"));
    assert_contains(g_out, "saved 2 entries");

    static char key[4096]; /* more than any key buffer */
    memset(key, 'k', sizeof key - 1);
    key[sizeof key - 1] = '\0';
    setenv("CTXC_TEST_LONG_KEY", key, 1);
    chat("hello\n", "--provider", "openai", "--model", "fixture-chat",
         "--base-url", base_of("openai"), "--key-env", "CTXC_TEST_LONG_KEY",
         "--system", g_marker, NULL);
    unsetenv("CTXC_TEST_LONG_KEY");
    assert_int_equal(g_status, 1); /* a scripted line failed */
    assert_contains(g_err, "error: openai fixture-chat: ");
    assert_contains(g_err, "the API key in CTXC_TEST_LONG_KEY is longer than ");
    assert_null(strstr(g_out, "the reply is longer"));
    assert_null(strstr(g_out, "kkkk"));
    assert_int_equal(sent_with(g_marker), 0);
}

/* The setting stream: on by default ("stream":true); --no-stream and
 * /set stream false ask for one JSON answer ("stream":false), which is
 * printed and added like a streamed one. */
static void test_stream_off(void **state) {
    (void)state;
    char marker[200];
    snprintf(marker, sizeof marker, "%s default", g_marker);
    chat("hello\n", "--provider", "openai", "--model", "fixture-chat",
         "--base-url", base_of("openai"), "--system", marker, NULL);
    assert_int_equal(g_status, 0);
    assert_int_equal(sent_with(marker), 1);
    assert_contains(g_sent, "\\\"stream\\\":true");

    snprintf(marker, sizeof marker, "%s no-stream", g_marker);
    chat("hello\n/save\n", "--history", g_hist, "--provider", "openai",
         "--model", "fixture-chat", "--base-url", base_of("openai"), "--system",
         marker, "--no-stream", NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "fixture-chat: 1 message received.\nsaved 2 ");
    assert_int_equal(sent_with(marker), 1);
    assert_contains(g_sent, "\\\"stream\\\":false");
    assert_null(strstr(g_sent, "\\\"stream\\\":true"));
    static char saved[65536];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_contains(saved, "\"fixture-chat: 1 message received.\"");

    /* the setting itself, for the next line */
    snprintf(marker, sizeof marker, "%s set", g_marker);
    chat("/set stream false\nhello\n", "--provider", "gemini", "--model",
         "fixture-chat", "--base-url", base_of("gemini"), "--system", marker,
         NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "fixture-chat: 1 message received.\n");
    assert_int_equal(sent_with(marker), 1);
    assert_contains(g_sent, ":generateContent\"");
    assert_null(strstr(g_sent, "streamGenerateContent"));
}

/* compress --no-stream: the summary request of middle-out asks for one
 * JSON answer ("stream":false); without it, a streamed one. (Needs
 * ctxc_provider_resolve to follow ref.stream.) */
static void test_compress_no_stream(void **state) {
    (void)state;
    char in[600], line[1024];
    snprintf(in, sizeof in, "%s/in.jsonl", g_base);
    FILE *f = fopen(in, "wb");
    assert_non_null(f);
    for (int i = 0; i < 12; i++) {
        snprintf(line, sizeof line,
                 "{\"speaker\":\"%s\",\"blocks\":[{\"type\":\"text\","
                 "\"text\":\"%s %d: %s\"}]}\n",
                 i % 2 == 0 ? "human" : "ai", g_marker, i, LONG_LINE);
        fputs(line, f);
    }
    assert_int_equal(fclose(f), 0);
    const char *const modes[] = {"--no-stream", NULL};
    for (size_t k = 0; k < 2; k++) {
        char out[600];
        snprintf(out, sizeof out, "%s/out%zu.jsonl", g_base, k);
        run("compress", in, "--strategy", "middle-out", "--context-limit",
            "200", "--preserve", "0.1", "--top-preserve", "0.1", "--provider",
            "openai", "--model", "fixture-ok", "--base-url", base_of("openai"),
            "-o", out, modes[k], NULL);
        /* written; the summary and the tail are still over 200 tokens */
        assert_int_equal(g_status, 3);
        assert_contains(g_err, "over the limit: ");
        static char saved[65536];
        slurp(out, saved, sizeof saved - 1);
        if (strstr(saved, "<state_snapshot>") == NULL) {
            fail_msg("no summary; stderr: %s", g_err);
        }
        if (k == 0) {
            assert_int_equal(sent_with(g_marker), 1);
            assert_contains(g_sent, "\\\"stream\\\":false");
            assert_null(strstr(g_sent, "\\\"stream\\\":true"));
        } else {
            assert_int_equal(sent_with(g_marker), 2);
            assert_contains(g_sent, "\\\"stream\\\":true");
        }
    }
}

/* One header line too many (70 > CTXC_CFG_HTTP_MAX_HEADERS): the error
 * names that limit, not the reply's. */
static void test_too_many_headers_named(void **state) {
    (void)state;
    static char answer[8192];
    size_t n = (size_t)snprintf(answer, sizeof answer, "HTTP/1.1 200 OK\r\n");
    for (int i = 0; i < 70; i++) {
        n += (size_t)snprintf(answer + n, sizeof answer - n,
                              "X-Filler-%d: %d\r\n", i, i);
    }
    n += (size_t)snprintf(answer + n, sizeof answer - n,
                          "Content-Type: application/json\r\n"
                          "Content-Length: 2\r\nConnection: close\r\n\r\n{}");
    uint16_t port;
    pid_t srv = mini_serve(answer, n, 4, &port);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u/v1", (unsigned)port);
    chat("hello\n", "--provider", "openai", "--model", "m", "--base-url", base,
         NULL);
    mini_stop(srv);
    assert_int_equal(g_status, 1); /* a scripted line failed */
    assert_contains(g_err, "error: openai m: ");
    assert_contains(g_err, "more than 64 header lines from 127.0.0.1, the "
                           "limit of CTXC_CFG_HTTP_MAX_HEADERS (64)");
    assert_null(strstr(g_out, "the reply is longer"));
}

/* A streamed OpenAI answer whose text holds terminal controls: an OSC 52
 * clipboard write, clear screen, an 8-bit CSI (U+009B), CR, DEL. */
static const char EVIL_TEXT_JSON[] =
    "before \\u001b]52;c;aGVsbG8=\\u0007 mid \\u001b[2J after "
    "\\u009b31m red\\r\\u007f end";
static const char EVIL_SHOWN[] =
    "before ^[]52;c;aGVsbG8=^G mid ^[[2J after <U+009B>31m red^M^? end";

static pid_t evil_server(uint16_t *port) {
    static char body[2048], answer[4096];
    int bn =
        snprintf(body, sizeof body,
                 "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\","
                 "\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\","
                 "\"content\":\"%s\"},\"finish_reason\":null}]}\n\n"
                 "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\","
                 "\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":"
                 "\"stop\"}]}\n\n"
                 "data: [DONE]\n\n",
                 EVIL_TEXT_JSON);
    int n = snprintf(answer, sizeof answer,
                     "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                     "Content-Length: %d\r\nConnection: close\r\n\r\n%s",
                     bn, body);
    return mini_serve(answer, (size_t)n, 2, port);
}

/* On a terminal the reply's control characters are shown, not obeyed; the
 * saved history keeps them as they came. */
static void test_reply_controls_neutralised_on_a_terminal(void **state) {
    (void)state;
    uint16_t port;
    pid_t srv = evil_server(&port);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u/v1", (unsigned)port);
    char *argv[] = {(char *)"ctxc",
                    (char *)"chat",
                    (char *)"--provider",
                    (char *)"openai",
                    (char *)"--model",
                    (char *)"m",
                    (char *)"--base-url",
                    base,
                    (char *)"--history",
                    g_hist,
                    NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_expect(m, "you> ");
    pty_type(m, "show me\r");
    pty_expect(m, EVIL_SHOWN);
    pty_expect(m, "you> ");
    pty_type(m, "/save\r");
    pty_expect(m, "saved 2 entries");
    pty_finish(m, pid);
    mini_stop(srv);
    static char saved[65536];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_contains(saved, "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\","
                           "\"text\":\"before \\u001b]52;c;aGVsbG8=\\u0007 "
                           "mid \\u001b[2J after \xc2\x9b"
                           "31m red\\r\x7f end\"}]}");
}

/* Not a terminal (a pipe, a file): the reply is written as it came. */
static void test_reply_raw_when_not_a_terminal(void **state) {
    (void)state;
    uint16_t port;
    pid_t srv = evil_server(&port);
    char base[64];
    snprintf(base, sizeof base, "http://127.0.0.1:%u/v1", (unsigned)port);
    chat("show me\n", "--provider", "openai", "--model", "m", "--base-url",
         base, NULL);
    mini_stop(srv);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "before \x1b]52;c;aGVsbG8=\x07 mid \x1b[2J after "
                           "\xc2\x9b"
                           "31m red\r\x7f end\n");
}

/* No provider or no model: the message names the settings; nothing sent. */
static void test_no_provider_names_the_settings(void **state) {
    (void)state;
    chat("hello\n/save\n/set provider openai\nagain\n", "--history", g_hist,
         NULL);
    assert_int_equal(g_status, 1); /* a scripted line failed */
    assert_contains(g_err, "error: no provider set: set provider and model");
    assert_contains(g_err, "error: no model set: set provider and model");
    assert_contains(g_out, "saved 1 entries");
    assert_null(strstr(g_out, "fixture-chat"));
}

/* Usage errors exit 2 and show the chat's usage. */
static void test_usage_errors(void **state) {
    (void)state;
    chat("", "--bogus", NULL);
    assert_int_equal(g_status, 2);
    assert_contains(g_err, "see 'ctxc chat --help'");
    chat("", "--model", NULL);
    assert_int_equal(g_status, 2);
    assert_contains(g_err, "missing value after --model");
    chat("", "--base-url", "ftp://x", NULL);
    assert_int_equal(g_status, 2);
    assert_contains(g_err, "--base-url ftp://x");
}

/* A script: the notes and errors on stderr, the replies alone on stdout,
 * exit 1 when a line failed. A reply cut by the model's output limit says
 * so (not "the summary"); an untrusted CA names --ca-file and
 * network.ca-file; host:port once; no status code names. */
static void test_script_diagnostics(void **state) {
    (void)state;
    chat("hello\n", "--provider", "openai", "--model", "fixture-cut",
         "--base-url", base_of("openai"), NULL);
    assert_int_equal(g_status, 0); /* kept as shown, marked as cut */
    assert_contains(g_err, "note: context-limit not set");
    assert_contains(g_err, "note: the reply was cut off by the model's output "
                           "limit");
    assert_null(strstr(g_err, "summary"));
    assert_null(strstr(g_out, "note:"));
    assert_null(strstr(g_out, "error:"));

    chat("hello\n/set provider openia\n", "--provider", "openai", "--model",
         "fixture-chat", "--base-url", base_of("openai"), "--system", g_marker,
         NULL);
    assert_int_equal(g_status, 1); /* the /set line failed */
    assert_contains(g_out, "fixture-chat: 1 message received.");
    assert_contains(g_err, "error: provider: 'openia' is not a provider of "
                           "this build (compiled in: openai anthropic "
                           "gemini)");

    /* a CA the host does not trust: settings.json without the fixture's */
    char p[600];
    snprintf(p, sizeof p, "%s/settings.json", g_home);
    put_file(p, "{}\n");
    chat("hello\n", "--provider", "openai", "--model", "fixture-chat",
         "--base-url", base_of("openai"), NULL);
    assert_int_equal(g_status, 1);
    char hostport[64];
    snprintf(hostport, sizeof hostport, "localhost:%u", (unsigned)port_good);
    assert_int_equal(count_of(g_err, hostport), 1);
    assert_contains(g_err, "--ca-file FILE");
    assert_contains(g_err, "network.ca-file");
    assert_null(strstr(g_err, "CTXC_E_"));
    assert_null(strstr(g_err, "HTTP 0"));
    /* --ca-file (relative to the working directory too) fixes it */
    char ca[1100];
    snprintf(ca, sizeof ca, "%s/ca.pem", fixture_dir);
    chat("hello\n", "--provider", "openai", "--model", "fixture-chat",
         "--base-url", base_of("openai"), "--ca-file", ca, NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "fixture-chat: 1 message received.");
    /* compress: the same, one message, --ca-file accepted */
    char example[512];
    snprintf(example, sizeof example,
             "%s/boards/host/examples/coding-session.jsonl", CTXC_SOURCE_DIR);
    run("compress", example, "--context-limit", "1000", "--provider",
        "openai", "--model", "fixture-ok", "--base-url", base_of("openai"),
        NULL);
    assert_int_equal(g_status, 1);
    assert_int_equal(count_of(g_err, hostport), 1);
    assert_int_equal(count_of(g_err, "ctxc compress: "), 2); /* + the hint */
    assert_contains(g_err, "--ca-file FILE");
    assert_null(strstr(g_err, "warning"));
    assert_null(strstr(g_err, "CTXC_E_"));
    run("compress", example, "--context-limit", "1000", "--provider",
        "openai", "--model", "fixture-ok", "--base-url", base_of("openai"),
        "--ca-file", ca, NULL);
    assert_int_equal(g_status, 3); /* written, still over 1000 tokens */
    assert_contains(g_err, "summary written by openai model fixture-ok");
}

/* The repl can use the LLM strategies: the same provider flags as chat. */
static void test_repl_uses_the_llm_strategies(void **state) {
    (void)state;
    char example[512], cmd[1400];
    snprintf(example, sizeof example, "%s/agent.jsonl", g_base);
    snprintf(cmd, sizeof cmd,
             "cp '%s/boards/host/examples/coding-session.jsonl' '%s'",
             CTXC_SOURCE_DIR, example);
    assert_int_equal(system(cmd), 0);
    run_v_repl("/set context-limit 1000\n/compress\n", "--history", example,
               "--provider", "openai", "--model", "fixture-ok", "--base-url",
               base_of("openai"), NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_out, "compressed with middle-out: 87 -> ");
    /* saved as it happened, the file as loaded kept as FILE.bak */
    assert_string_equal(g_err, "");
    assert_contains(g_out, "(compressed: 87 -> ");
    assert_contains(g_out, "the file as loaded is kept as ");
    snprintf(cmd, sizeof cmd,
             "cmp -s '%s/boards/host/examples/coding-session.jsonl' '%s.bak'",
             CTXC_SOURCE_DIR, example);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd,
             "cp '%s/boards/host/examples/coding-session.jsonl' '%s'",
             CTXC_SOURCE_DIR, example);
    assert_int_equal(system(cmd), 0);
    /* without a model: told how with this prompt's own commands, at once */
    run_v_repl("/set context-limit 1000\n/compress\n/stats\n", "--history",
               example, NULL);
    assert_int_equal(g_status, 1);
    assert_contains(g_err, "error: /compress: middle-out asks a model for "
                           "its summary: /set provider P (openai, anthropic, "
                           "gemini) and /set model M (or /set "
                           "compression.profile NAME), or /set "
                           "compression.strategy top-down-truncation or "
                           "high-density (no model)\n");
    assert_contains(g_out, "entries 87, "); /* nothing changed */
}

/* ---- on a terminal (libedit) --------------------------------------------- */

/* `ctxc chat` on a terminal: the banner names the model, the prompt, a
 * line answered, /stats, /quit. */
static void test_chat_on_a_terminal(void **state) {
    (void)state;
    char *argv[] = {(char *)"ctxc",
                    (char *)"chat",
                    (char *)"--provider",
                    (char *)"openai",
                    (char *)"--model",
                    (char *)"fixture-chat",
                    (char *)"--base-url",
                    (char *)base_of("openai"),
                    (char *)"--system",
                    g_marker,
                    NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_expect(m, "chat: provider openai, model fixture-chat");
    pty_expect(m, "you> ");
    pty_type(m, "hello on a terminal\r");
    pty_expect(m, "fixture-chat: 1 message received.");
    pty_expect(m, "you> ");
    pty_type(m, "/stats\r");
    pty_expect(m, "entries 2, ");
    pty_expect(m, "you> ");
    pty_type(m, "/quit\r");
    pty_expect(m, "the history (2 entries) is not saved: file to save it to "
                  "(Enter: leave without saving)? ");
    pty_type(m, "\r");
    pty_expect(m, "not saved");
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    close(m);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    assert_int_equal(sent_with(g_marker), 1);
    assert_contains(g_sent, "hello on a terminal");
}

/* compression.prefetch-threshold on a terminal: the summary (fixture-stall:
 * 2.5 s mid-answer) is fetched in the background while the prompt stays
 * live; a turn typed meanwhile gets its reply at once and is kept after
 * the summary once it is applied; the status line shows on stderr (the
 * terminal). */
static void test_prompt_live_while_a_summary_is_fetched(void **state) {
    (void)state;
    put_profile("slow", "fixture-stall");
    static char hist[16384];
    put_twelve_entries(hist, sizeof hist);
    char *argv[] = {(char *)"ctxc",
                    (char *)"chat",
                    (char *)"--history",
                    g_hist,
                    (char *)"--provider",
                    (char *)"openai",
                    (char *)"--model",
                    (char *)"fixture-chat",
                    (char *)"--base-url",
                    (char *)base_of("openai"),
                    (char *)"--system",
                    g_marker,
                    NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_expect(m, "you> ");
    pty_type(m, "/set compression.strategy middle-out\r");
    pty_expect(m, "you> ");
    pty_type(m, "/set compression.profile slow\r");
    pty_expect(m, "you> ");
    pty_type(m, "/set context-limit 100000\r");
    pty_expect(m, "you> ");
    pty_type(m, "/set compression.prefetch-threshold 0.001\r");
    pty_expect(m, "you> ");
    pty_type(m, "first turn\r");
    pty_expect(m, "[summary: being fetched in the background; keep typing]");
    pty_expect(m, "fixture-chat: 13 messages received.");
    pty_expect(m, "you> ");
    /* typed while the summary is in flight (it stalls 2.5 s) */
    pty_type(m, "typed while fetching\r");
    pty_expect(m, "fixture-chat: 15 messages received.");
    pty_expect(m, "you> ");
    pty_expect(m, "[summary applied in the background: ");
    pty_type(m, "/save\r");
    pty_expect(m, "saved ");
    pty_type(m, "/quit\r");
    /* saved: no question about the history; the /set changes: kept for
     * this session only (Enter) */
    pty_expect(m, "keep them in settings.json? [y/N] ");
    pty_type(m, "\r");
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    close(m);
    assert_true(WIFEXITED(st));
    assert_int_equal(WEXITSTATUS(st), 0);
    static char saved[65536];
    slurp(g_hist, saved, sizeof saved - 1);
    const char *sum = strstr(saved, "\"isSummary\":true");
    assert_non_null(sum);
    const char *typed = strstr(saved, "typed while fetching");
    assert_non_null(typed);
    assert_true(typed > sum); /* kept after the result, in order */
    assert_true(strstr(saved, "first turn") < typed);
}

/* ---- Ctrl-C, leaving, the status line -------------------------------- */

/* The child's exit status once it has ended (it must end within 60 s). */
static int exit_of(pid_t pid) {
    int st = 0;
    for (int i = 0; i < 600; i++) {
        pid_t r = waitpid(pid, &st, WNOHANG);
        assert_true(r >= 0);
        if (r == pid) {
            return WIFEXITED(st) ? WEXITSTATUS(st) : 1000 + WTERMSIG(st);
        }
        struct timespec ts = {0, 100000000L};
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    fail_msg("the CLI did not exit");
    return -1;
}

static double mono_s(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* `ctxc chat` with the fixture's OpenAI API and `model` on a terminal of
 * 200 x 40, at its first prompt. */
static int chat_on_a_terminal(const char *model, pid_t *pid) {
    char *argv[] = {(char *)"ctxc",       (char *)"chat",
                    (char *)"--provider", (char *)"openai",
                    (char *)"--model",    (char *)model,
                    (char *)"--base-url", (char *)base_of("openai"),
                    NULL};
    pty_screen_len = 0;
    int m = pty_spawn(pid, argv);
    pty_set_size(m, 200, 40);
    pty_expect(m, "you> ");
    return m;
}

/* Ctrl-C at the prompt drops the line typed so far and the program goes
 * on; at an empty prompt the first Ctrl-C says how to leave and a second
 * leaves. The --history file (not there before) has each line before the
 * next prompt, so leaving asks nothing. */
static void test_ctrl_c_at_the_prompt(void **state) {
    (void)state;
    char *argv[] = {(char *)"ctxc", (char *)"repl", (char *)"--history",
                    g_hist, NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_expect(m, "ctxc> ");
    pty_type(m, "first line\r");
    pty_expect(m, "ctxc> ");
    /* saved before the next prompt */
    static char saved[4096];
    slurp(g_hist, saved, sizeof saved - 1);
    assert_contains(saved, "first line");
    pty_type(m, "half a line");
    pty_expect(m, "half a line");
    pty_type(m, "\x03");
    pty_expect(m, "^C");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/stats\r");
    pty_expect(m, "entries 1, "); /* the dropped line was not added */
    pty_expect(m, "ctxc> ");
    pty_type(m, "\x03");
    pty_expect(m, "(Ctrl-C again or Ctrl-D to leave)");
    pty_expect(m, "ctxc> ");
    pty_type(m, "\x03"); /* saved already: nothing to ask */
    assert_int_equal(exit_of(pid), 0);
    close(m);
    slurp(g_hist, saved, sizeof saved - 1);
    assert_contains(saved, "first line");
    assert_null(strstr(saved, "half a line"));
}

/* Ctrl-D with unsaved changes and no --history: the history is saved to
 * the file named at the question, and the session's /set changes go into
 * settings.json when the user says so. */
static void test_leaving_asks_what_to_keep(void **state) {
    (void)state;
    char *argv[] = {(char *)"ctxc", (char *)"repl", NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_expect(m, "ctxc> ");
    pty_type(m, "/set context-limit 7777\r");
    pty_expect(m, "ctxc> ");
    pty_type(m, "a line worth keeping\r");
    pty_expect(m, "ctxc> ");
    pty_type(m, "\x04");
    pty_expect(m, "the history (1 entry) is not saved: file to save it to "
                  "(Enter: leave without saving)? ");
    char line[500];
    snprintf(line, sizeof line, "%s\r", g_hist);
    pty_type(m, line);
    pty_expect(m, "saved 1 entries to ");
    pty_expect(m, "this session's /set changes: context-limit 7777");
    pty_expect(m, "keep them in settings.json? [y/N] ");
    pty_type(m, "y\r");
    pty_expect(m, "kept in settings.json");
    assert_int_equal(exit_of(pid), 0);
    close(m);
    static char text[4096];
    slurp(g_hist, text, sizeof text - 1);
    assert_contains(text, "a line worth keeping");
    char p[600];
    snprintf(p, sizeof p, "%s/settings.json", g_home);
    slurp(p, text, sizeof text - 1);
    assert_contains(text, "\"context-limit\": 7777");
    assert_contains(text, "network.ca-file"); /* what was there stays */
}

/* A script is never asked: with --history its lines are saved as they
 * come; without one, what it did not save is named on stderr. */
static void test_script_told_what_was_not_saved(void **state) {
    (void)state;
    run_v_repl("a line\n", "--history", g_hist, NULL);
    assert_int_equal(g_status, 0);
    assert_int_equal(g_err[0], '\0');
    static char text[4096];
    slurp(g_hist, text, sizeof text - 1);
    assert_contains(text, "a line");
    run_v_repl("a line\n", NULL);
    assert_int_equal(g_status, 0);
    assert_contains(g_err, "note: the history's changes were not saved "
                           "(/save FILE writes them)");
}

/* Ctrl-C during a reply that stalls (fixture-hang: 20 s after its first
 * piece): the call is stopped at once, the program goes on at the prompt
 * with the human line kept and no reply added. Before it, the status line
 * names the provider and model. */
static void test_ctrl_c_stops_a_stalled_reply(void **state) {
    (void)state;
    char *argv[] = {(char *)"ctxc",       (char *)"chat",
                    (char *)"--provider", (char *)"openai",
                    (char *)"--model",    (char *)"fixture-hang",
                    (char *)"--base-url", (char *)base_of("openai"),
                    (char *)"--system",   g_marker,
                    NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_set_size(m, 200, 40);
    pty_expect(m, "you> ");
    pty_type(m, "tell me slowly\r");
    pty_expect(m, "[waiting for the reply - openai fixture-hang - ");
    pty_expect(m, "<stat"); /* the first piece (5 bytes), then silence */
    double t0 = mono_s();
    pty_type(m, "\x03");
    pty_expect(m, "stopped (Ctrl-C): the reply so far is dropped");
    pty_expect(m, "you> ");
    assert_true(mono_s() - t0 < 10.0); /* not the 20 s of the stall */
    pty_type(m, "/stats\r");
    pty_expect(m, "entries 1, "); /* the line, no reply */
    pty_expect(m, "you> ");
    pty_type(m, "/quit\r");
    pty_expect(m, "file to save it to (Enter: leave without saving)? ");
    pty_type(m, "\r");
    pty_expect(m, "not saved");
    assert_int_equal(exit_of(pid), 0);
    close(m);
}

/* Ctrl-D typed while a reply is awaited (fixture-stall: 2.5 s of silence
 * before its text) is kept for the next prompt, where it leaves: the reply
 * is completed and added first, then the leaving question comes. */
static void test_ctrl_d_typed_during_a_reply_leaves(void **state) {
    (void)state;
    pid_t pid;
    int m = chat_on_a_terminal("fixture-stall", &pid);
    pty_type(m, "one slow reply\r");
    pty_expect(m, "[waiting for the reply - openai fixture-stall - ");
    pty_type(m, "\x04"); /* the reply is 2.5 s away */
    pty_expect(m, "</state_snapshot>"); /* the reply goes on to its end */
    pty_expect(m, "the history (2 entries) is not saved: file to save it "
                  "to (Enter: leave without saving)? ");
    pty_type(m, "\r");
    pty_expect(m, "not saved");
    assert_int_equal(exit_of(pid), 0);
    close(m);
}

/* Ctrl-C while /compress waits for a middle-out summary that stalls: the
 * status line says what is summarised and by which model; the history is
 * unchanged and the chat goes on. */
static void test_ctrl_c_stops_a_stalled_summary(void **state) {
    (void)state;
    put_profile("hang", "fixture-hang");
    static char hist[16384];
    put_twelve_entries(hist, sizeof hist);
    char *argv[] = {(char *)"ctxc",       (char *)"chat",
                    (char *)"--history",  g_hist,
                    (char *)"--provider", (char *)"openai",
                    (char *)"--model",    (char *)"fixture-chat",
                    (char *)"--base-url", (char *)base_of("openai"),
                    NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_set_size(m, 200, 40);
    pty_expect(m, "you> ");
    pty_type(m, "/set compression.strategy middle-out\r");
    pty_expect(m, "you> ");
    pty_type(m, "/set compression.profile hang\r");
    pty_expect(m, "you> ");
    pty_type(m, "/set context-limit 1000\r");
    pty_expect(m, "you> ");
    pty_type(m, "/compress\r");
    pty_expect(m, "[summarising 12 entries (");
    pty_expect(m, " with middle-out - openai fixture-hang - ");
    pty_expect(m, "bytes received"); /* the first piece, then silence */
    pty_type(m, "\x03");
    pty_expect(m, "compress: stopped (Ctrl-C); the history is unchanged");
    pty_expect(m, "you> ");
    pty_type(m, "/stats\r");
    pty_expect(m, "entries 12, ");
    pty_expect(m, "you> ");
    pty_type(m, "/quit\r"); /* the history is as loaded: no question */
    pty_expect(m, "keep them in settings.json? [y/N] ");
    pty_type(m, "\r");
    assert_int_equal(exit_of(pid), 0);
    close(m);
    static char after[16384];
    slurp(g_hist, after, sizeof after - 1);
    assert_string_equal(after, hist);
    char p[600];
    snprintf(p, sizeof p, "%s/settings.json", g_home);
    slurp(p, after, sizeof after - 1);
    assert_null(strstr(after, "context-limit")); /* not kept: Enter */
}

/* Ended by SIGTERM while a reply is awaited (its EOF key switched off for
 * the call): the terminal is left as it was found, Ctrl-D its EOF key. */
static void test_terminal_restored_when_killed_during_a_reply(void **state) {
    (void)state;
    pid_t pid;
    int m = chat_on_a_terminal("fixture-hang", &pid);
    pty_type(m, "tell me slowly\r");
    pty_expect(m, "<stat"); /* the first piece, then 20 s of silence */
    assert_int_equal(kill(pid, SIGTERM), 0);
    assert_int_equal(exit_of(pid), 1000 + SIGTERM);
    struct termios t;
    assert_int_equal(tcgetattr(m, &t), 0);
    assert_int_equal(t.c_cc[VEOF], 4); /* Ctrl-D */
    assert_true((t.c_lflag & ICANON) != 0);
    close(m);
}

/* A reply that fails with 429 and Retry-After: 1: the status line counts
 * down to the next attempt. */
static void test_status_line_counts_down_a_retry(void **state) {
    (void)state;
    pid_t pid;
    int m = chat_on_a_terminal("fixture-error-429", &pid);
    pty_type(m, "are you busy?\r");
    pty_expect(m, "[waiting for the reply - openai fixture-error-429 - ");
    pty_expect(m, "attempt 1 failed: attempt 2 of 3 in 1 s");
    pty_expect(m, "attempt 2 failed: attempt 3 of 3 in 1 s");
    pty_expect(m, "(the history keeps your line; no reply added)");
    pty_expect(m, "you> ");
    pty_type(m, "/quit\r");
    pty_expect(m, "(Enter: leave without saving)? ");
    pty_type(m, "\r");
    assert_int_equal(exit_of(pid), 0);
    close(m);
}

/* `ctxc compress` on a terminal: the header first, then the status line
 * while the summary (fixture-stall: 2.5 s) is awaited, then the table;
 * into a file (stderr not a terminal) no status line at all. */
static void test_compress_status_line(void **state) {
    (void)state;
    char example[512], out[600];
    snprintf(example, sizeof example,
             "%s/boards/host/examples/coding-session.jsonl", CTXC_SOURCE_DIR);
    snprintf(out, sizeof out, "%s/out.jsonl", g_base);
    char *argv[] = {(char *)"ctxc",       (char *)"compress",
                    example,              (char *)"--strategy",
                    (char *)"middle-out", (char *)"--context-limit",
                    (char *)"1000",       (char *)"--provider",
                    (char *)"openai",     (char *)"--model",
                    (char *)"fixture-stall", (char *)"--base-url",
                    (char *)base_of("openai"), (char *)"-o",
                    out,                  NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_set_size(m, 200, 40);
    pty_expect(m, "coding-session.jsonl: strategy middle-out");
    pty_expect(m, "[summarising ");
    pty_expect(m, " with middle-out - openai fixture-stall - ");
    pty_expect(m, "summary written by openai model fixture-stall");
    assert_int_equal(exit_of(pid), 3); /* still over the limit of 1000 */
    close(m);
    run("compress", example, "--strategy", "middle-out", "--context-limit",
        "1000", "--provider", "openai", "--model", "fixture-stall",
        "--base-url", base_of("openai"), "-o", out, NULL);
    assert_int_equal(g_status, 3);
    assert_null(strstr(g_err, "[summarising"));
    assert_null(strstr(g_err, "\033"));
    assert_true(strncmp(g_err, "ctxc compress ", 14) == 0 &&
                strstr(g_err, "coding-session.jsonl: strategy middle-out") <
                    strchr(g_err, '\n')); /* the header is the first line */
}

/* ---- issue 39: keys as people keep them, the Anthropic base URL ------- */

/* The header line `name` of the requests sent with `marker`, as the
 * fixture's log holds it ("[\"Name\", \"value\"]"), or NULL. */
static const char *sent_header(const char *marker, const char *name) {
    (void)sent_with(marker);
    static char want[200];
    snprintf(want, sizeof want, "[\"%s\", \"", name);
    return strstr(g_sent, want);
}

/* No --key-env: each provider reads its usual variable (OPENAI_API_KEY,
 * ANTHROPIC_API_KEY, GEMINI_API_KEY then GOOGLE_API_KEY), names it on
 * stderr once, never shows the key; --key-env still wins; with none set
 * nothing is sent and a 401 says which variable to set. A base URL ending
 * in /v1 for Anthropic is not doubled (/v1/messages). */
static void test_keys_from_the_usual_variables(void **state) {
    (void)state;
    static const char *const vars[] = {"OPENAI_API_KEY", "ANTHROPIC_API_KEY",
                                       "GEMINI_API_KEY", "GOOGLE_API_KEY",
                                       "CTXC_TEST_OTHER_KEY"};
    for (size_t v = 0; v < sizeof vars / sizeof vars[0]; v++) {
        unsetenv(vars[v]);
    }
    static const struct {
        const char *api, *var, *header, *value;
    } cases[] = {
        {"openai", "OPENAI_API_KEY", "Authorization", "Bearer sk-ctxc-o-1"},
        {"anthropic", "ANTHROPIC_API_KEY", "x-api-key", "sk-ctxc-a-1"},
        {"gemini", "GEMINI_API_KEY", "x-goog-api-key", "ctxc-g-1"},
        {"gemini", "GOOGLE_API_KEY", "x-goog-api-key", "ctxc-g-2"},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        const char *key = strchr(cases[c].value, ' ') != NULL
                              ? strchr(cases[c].value, ' ') + 1
                              : cases[c].value;
        setenv(cases[c].var, key, 1);
        char marker[200], base[200];
        snprintf(marker, sizeof marker, "%s key %zu", g_marker, c);
        /* Anthropic given the base URL as OpenAI-compatible servers are */
        snprintf(base, sizeof base, "%s%s", base_of(cases[c].api),
                 strcmp(cases[c].api, "anthropic") == 0 ? "/v1/" : "");
        chat("hello\n", "--provider", cases[c].api, "--model",
             "fixture-chat", "--base-url", base, "--system", marker, NULL);
        unsetenv(cases[c].var);
        assert_int_equal(g_status, 0);
        char want[300];
        snprintf(want, sizeof want,
                 "note: %s: the API key from %s (no --key-env or "
                 "auth-key-name given)\n",
                 cases[c].api, cases[c].var);
        assert_contains(g_err, want);
        assert_null(strstr(g_err, key));
        assert_null(strstr(g_out, key));
        const char *h = sent_header(marker, cases[c].header);
        assert_non_null(h);
        snprintf(want, sizeof want, "[\"%s\", \"%s\"]", cases[c].header,
                 cases[c].value);
        assert_contains(g_sent, want);
        if (strcmp(cases[c].api, "anthropic") == 0) {
            assert_contains(g_sent, "\"path\": \"/v1/messages\"");
            assert_null(strstr(g_sent, "/v1/v1/"));
        }
    }
    /* GEMINI_API_KEY first when both are set */
    setenv("GEMINI_API_KEY", "ctxc-g-first", 1);
    setenv("GOOGLE_API_KEY", "ctxc-g-second", 1);
    char marker[200];
    snprintf(marker, sizeof marker, "%s both", g_marker);
    chat("hello\n", "--provider", "gemini", "--model", "fixture-chat",
         "--base-url", base_of("gemini"), "--system", marker, NULL);
    unsetenv("GEMINI_API_KEY");
    unsetenv("GOOGLE_API_KEY");
    assert_int_equal(g_status, 0);
    (void)sent_with(marker);
    assert_contains(g_sent, "[\"x-goog-api-key\", \"ctxc-g-first\"]");
    /* --key-env wins over the usual variable, and no note */
    setenv("OPENAI_API_KEY", "sk-ctxc-usual", 1);
    setenv("CTXC_TEST_OTHER_KEY", "sk-ctxc-other", 1);
    snprintf(marker, sizeof marker, "%s key-env", g_marker);
    chat("hello\n", "--provider", "openai", "--model", "fixture-chat",
         "--base-url", base_of("openai"), "--key-env", "CTXC_TEST_OTHER_KEY",
         "--system", marker, NULL);
    unsetenv("OPENAI_API_KEY");
    unsetenv("CTXC_TEST_OTHER_KEY");
    assert_int_equal(g_status, 0);
    assert_null(strstr(g_err, "note: openai: the API key"));
    (void)sent_with(marker);
    assert_contains(g_sent, "[\"Authorization\", \"Bearer sk-ctxc-other\"]");
    /* none set: nothing sent, and a 401 names the variable */
    snprintf(marker, sizeof marker, "%s none", g_marker);
    chat("hello\n", "--provider", "openai", "--model", "fixture-error-401",
         "--base-url", base_of("openai"), "--system", marker, NULL);
    assert_int_equal(g_status, 1);
    assert_null(sent_header(marker, "Authorization"));
    assert_contains(g_err, "no API key was sent: export OPENAI_API_KEY, or "
                           "give --key-env VAR");
}

/* ---- issue 39: a stall once the text has started ---------------------- */

/* fixture-hang sends its first piece, then nothing for 20 s: after
 * CTXC_STALL_NOTICE_MS without a byte (the port's clock), the terminal
 * shows "[no bytes for N s; Ctrl-C stops]" after the text so far; Ctrl-C
 * wipes it and stops the call. */
static void test_stall_shown_after_the_text(void **state) {
    (void)state;
    setenv("CTXC_STALL_NOTICE_MS", "200", 1);
    pid_t pid;
    int m = chat_on_a_terminal("fixture-hang", &pid);
    unsetenv("CTXC_STALL_NOTICE_MS");
    pty_type(m, "tell me slowly\r");
    pty_expect(m, "<stat"); /* the first piece */
    pty_expect(m, "\0337 [no bytes for "); /* after it, the cursor kept */
    pty_expect(m, " s; Ctrl-C stops]");
    pty_type(m, "\x03");
    pty_expect(m, "\0338\033[J"); /* wiped */
    pty_expect(m, "stopped (Ctrl-C): the reply so far is dropped");
    pty_expect(m, "you> ");
    pty_type(m, "/quit\r");
    pty_expect(m, "(Enter: leave without saving)? ");
    pty_type(m, "\r");
    assert_int_equal(exit_of(pid), 0);
    close(m);
}

/* A paste on the terminal (bracketed: ESC [200~ ... ESC [201~) is one
 * turn: one request whose last user message holds every pasted line. */
static void test_paste_is_one_turn(void **state) {
    (void)state;
    char *argv[] = {(char *)"ctxc",       (char *)"chat",
                    (char *)"--provider", (char *)"openai",
                    (char *)"--model",    (char *)"fixture-chat",
                    (char *)"--base-url", (char *)base_of("openai"),
                    (char *)"--system",   g_marker,
                    NULL};
    pid_t pid;
    pty_screen_len = 0;
    int m = pty_spawn(&pid, argv);
    pty_expect(m, "\033[?2004h"); /* the mode on at the prompt */
    pty_expect(m, "you> ");
    pty_type(m, "\033[200~one\rtwo\rthree\rfour\r\033[201~\r");
    pty_expect(m, "fixture-chat: 1 message received.");
    pty_expect(m, "you> ");
    pty_type(m, "/quit\r");
    pty_expect(m, "(Enter: leave without saving)? ");
    pty_type(m, "\r");
    assert_int_equal(exit_of(pid), 0);
    close(m);
    assert_int_equal(sent_with(g_marker), 1);
    assert_contains(g_sent, "one\\\\ntwo\\\\nthree\\\\nfour");
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(
            test_prompt_live_while_a_summary_is_fetched, setup, teardown),
        cmocka_unit_test_setup_teardown(test_two_turns_each_api, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_tool_entries_rendered, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_top_down_compresses_during_the_chat, setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_middle_out_summarises_during_the_chat, setup, teardown),
        cmocka_unit_test_setup_teardown(test_provider_error_keeps_the_line,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_too_long, setup, teardown),
        cmocka_unit_test_setup_teardown(test_cut_reply_kept_and_marked, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_keys_from_the_usual_variables,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_stall_shown_after_the_text, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_paste_is_one_turn, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_other_limits_name_themselves,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_too_many_headers_named, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_stream_off, setup, teardown),
        cmocka_unit_test_setup_teardown(test_compress_no_stream, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(
            test_reply_controls_neutralised_on_a_terminal, setup, teardown),
        cmocka_unit_test_setup_teardown(test_reply_raw_when_not_a_terminal,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_no_provider_names_the_settings,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_usage_errors, setup, teardown),
        cmocka_unit_test_setup_teardown(test_script_diagnostics, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_repl_uses_the_llm_strategies,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_chat_on_a_terminal, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_script_told_what_was_not_saved,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(test_compress_status_line, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_at_the_prompt, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_leaving_asks_what_to_keep, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_stops_a_stalled_reply, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_c_stops_a_stalled_summary, setup,
                                        teardown),
        cmocka_unit_test_setup_teardown(test_ctrl_d_typed_during_a_reply_leaves,
                                        setup, teardown),
        cmocka_unit_test_setup_teardown(
            test_terminal_restored_when_killed_during_a_reply, setup, teardown),
        cmocka_unit_test_setup_teardown(test_status_line_counts_down_a_retry, setup,
                                        teardown),
    };
    return cmocka_run_group_tests(tests, load_fixture, NULL);
}
