/*
 * Tests of the host CLI (build/host/ctxc), run as a child process: every test
 * looks only at the arguments, stdin, stdout, stderr and the exit status.
 *
 * Compile definitions (set by the build):
 *   CTXC_CLI_PATH       path of the built CLI (string literal)
 *   CTXC_TEST_DATA_DIR  test/data (string literal)
 *   CTXC_SOURCE_DIR     the repository root (string literal)
 *
 * Fixtures in test/data:
 *   cli_small.jsonl      8 entries, every block type, 3 paired calls
 *   cli_unpaired.jsonl   one call without response, one response without call
 *   cli_order.jsonl      a response that comes before its call (refused)
 *   fmt_input.jsonl      non-canonical input; fmt_expected.jsonl its fmt output
 *   bad_*.jsonl          one rejected line each (line numbers below)
 */
#define _XOPEN_SOURCE 700

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mini_server.h"
#include "pty.h"

/* The host configuration, when the library's include paths are available. */
#if defined(__has_include)
#if __has_include("ctxc_manifest.h")
#if __has_include("ctxc/ctxc_config_defaults.h")
#include "ctxc/ctxc_config_defaults.h"
#include "ctxc/ctxc.h"
#endif
#endif
#endif

#ifndef CTXC_CLI_PATH
#error "CTXC_CLI_PATH must be defined (path of the built ctxc CLI)"
#endif
#ifndef CTXC_TEST_DATA_DIR
#error "CTXC_TEST_DATA_DIR must be defined (test/data)"
#endif
#ifndef CTXC_SOURCE_DIR
#error "CTXC_SOURCE_DIR must be defined (repository root)"
#endif

/* JSON nesting limit of the host build (project.yml defaults.json_max_depth
 * unless the host board overrides it). */
#ifdef CTXC_CFG_JSON_MAX_DEPTH
#define TEST_MAX_DEPTH CTXC_CFG_JSON_MAX_DEPTH
#else
#define TEST_MAX_DEPTH 32
#endif

#define EXIT_USAGE 2

/* --- Running the CLI ------------------------------------------------------ */

#define OUT_CAP ((size_t)8 * 1024 * 1024)
#define ERR_CAP ((size_t)64 * 1024)
#define MAX_ARGS 16

typedef struct {
    int status; /* exit status; -1 when the child did not exit normally */
    char *out;
    size_t out_len;
    char *err;
    size_t err_len;
} run_t;

/* How the next runs are set up (each test resets what it changes):
 * g_stdout_path   stdout opened on this file instead of captured
 * g_child_dir     the directory the CLI runs in
 * g_fsize_limit   RLIMIT_FSIZE of the CLI (0: none), SIGXFSZ ignored
 * A CLI that runs longer than CHILD_TIMEOUT_S seconds (a hang) is killed
 * by SIGALRM and the run fails. */
static const char *g_stdout_path;
static const char *g_child_dir;
static rlim_t g_fsize_limit;
#define CHILD_TIMEOUT_S 30u

static char g_out[OUT_CAP + 1];
static char g_err[ERR_CAP + 1];
static char g_out2[OUT_CAP + 1];
static char g_argstore[MAX_ARGS][4096];

static int make_temp(char *path, size_t cap) {
    const char *dir = getenv("TMPDIR");
    int fd;
    if (dir == NULL || dir[0] == '\0') {
        dir = "/tmp";
    }
    snprintf(path, cap, "%s/ctxc_test_cli_XXXXXX", dir);
    fd = mkstemp(path);
    assert_true(fd >= 0);
    return fd;
}

static size_t slurp_fd(int fd, char *buf, size_t cap) {
    size_t len = 0;
    assert_int_equal(lseek(fd, 0, SEEK_SET), 0);
    for (;;) {
        ssize_t n;
        assert_true(len < cap); /* output larger than the test buffer */
        n = read(fd, buf + len, cap - len);
        assert_true(n >= 0);
        if (n == 0) {
            break;
        }
        len += (size_t)n;
    }
    buf[len] = '\0';
    return len;
}

/* Runs the CLI with the NULL-terminated arguments that follow `stdin_path`
 * (NULL = /dev/null) and captures stdout into `out` (g_out when NULL). */
static void run_into(run_t *r, char *out, const char *stdin_path, ...) {
    char *argv[MAX_ARGS + 2];
    char out_path[256], err_path[256];
    int out_fd, err_fd, st = 0;
    size_t argc = 0;
    va_list ap;
    pid_t pid;

    snprintf(g_argstore[0], sizeof g_argstore[0], "%s", "ctxc");
    argv[argc++] = g_argstore[0];
    va_start(ap, stdin_path);
    for (;;) {
        const char *a = va_arg(ap, const char *);
        if (a == NULL) {
            break;
        }
        assert_true(argc < MAX_ARGS);
        assert_true(strlen(a) < sizeof g_argstore[0]);
        snprintf(g_argstore[argc], sizeof g_argstore[argc], "%s", a);
        argv[argc] = g_argstore[argc];
        argc++;
    }
    va_end(ap);
    argv[argc] = NULL;

    out_fd = make_temp(out_path, sizeof out_path);
    err_fd = make_temp(err_path, sizeof err_path);
    fflush(stdout);
    fflush(stderr);
    pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int in_fd =
            open(stdin_path != NULL ? stdin_path : "/dev/null", O_RDONLY);
        int to_fd =
            g_stdout_path != NULL ? open(g_stdout_path, O_WRONLY) : out_fd;
        if (in_fd < 0 || to_fd < 0 || dup2(in_fd, 0) < 0 ||
            dup2(to_fd, 1) < 0 || dup2(err_fd, 2) < 0) {
            _exit(126);
        }
        if (g_child_dir != NULL && chdir(g_child_dir) != 0) {
            _exit(126);
        }
        if (g_fsize_limit != 0) {
            struct rlimit rl = {g_fsize_limit, g_fsize_limit};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) {
                _exit(126);
            }
        }
        alarm(CHILD_TIMEOUT_S); /* kept across execv */
        execv(CTXC_CLI_PATH, argv);
        _exit(127);
    }
    assert_int_equal(waitpid(pid, &st, 0), pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    r->out = out != NULL ? out : g_out;
    r->out_len = slurp_fd(out_fd, r->out, OUT_CAP);
    r->err = g_err;
    r->err_len = slurp_fd(err_fd, g_err, ERR_CAP);
    close(out_fd);
    close(err_fd);
    unlink(out_path);
    unlink(err_path);
    /* 126/127: the child could not redirect or exec the CLI */
    assert_true(r->status != 126 && r->status != 127);
}

#define RUN(r, ...) run_into((r), NULL, NULL, __VA_ARGS__, (const char *)NULL)
#define RUN_STDIN(r, in, ...)                                                  \
    run_into((r), NULL, (in), __VA_ARGS__, (const char *)NULL)

/* --- Files ---------------------------------------------------------------- */

static void data_path(char *buf, size_t cap, const char *name) {
    snprintf(buf, cap, "%s/%s", CTXC_TEST_DATA_DIR, name);
}

static size_t read_file(const char *path, char *buf, size_t cap) {
    int fd = open(path, O_RDONLY);
    size_t len;
    if (fd < 0) {
        fail_msg("cannot open %s: %s", path, strerror(errno));
    }
    len = slurp_fd(fd, buf, cap);
    close(fd);
    return len;
}

static void write_temp(char *path, size_t cap, const char *data, size_t len) {
    int fd = make_temp(path, cap);
    size_t off = 0;
    while (off < len) {
        ssize_t n = write(fd, data + off, len - off);
        assert_true(n > 0);
        off += (size_t)n;
    }
    close(fd);
}

static size_t count_nonblank_lines(const char *buf, size_t len) {
    size_t n = 0;
    int blank = 1;
    for (size_t i = 0; i < len; i++) {
        char c = buf[i];
        if (c == '\n') {
            n += blank ? 0u : 1u;
            blank = 1;
        } else if (c != ' ' && c != '\t' && c != '\r') {
            blank = 0;
        }
    }
    return n + (blank ? 0u : 1u);
}

static void assert_bytes_equal(const char *got, size_t got_len,
                               const char *want, size_t want_len) {
    size_t i = 0;
    while (i < got_len && i < want_len && got[i] == want[i]) {
        i++;
    }
    if (i == got_len && i == want_len) {
        return;
    }
    fail_msg("outputs differ at byte %zu (lengths %zu and %zu)\n"
             "got:  %.200s\nwant: %.200s",
             i, got_len, want_len, got + (i > 40 ? i - 40 : 0),
             want + (i > 40 ? i - 40 : 0));
}

/* Line `n` (0-based) of `text`, copied into `buf` without its "\n". */
static const char *line_of(const char *text, size_t n, char *buf, size_t cap) {
    const char *p = text;
    for (size_t i = 0; i < n; i++) {
        p = strchr(p, '\n');
        if (p == NULL) {
            return NULL;
        }
        p++;
    }
    const char *e = strchr(p, '\n');
    size_t len = e != NULL ? (size_t)(e - p) : strlen(p);
    if (len == 0 && e == NULL) {
        return NULL;
    }
    assert_true(len < cap);
    memcpy(buf, p, len);
    buf[len] = '\0';
    return buf;
}

static size_t count_lines(const char *text, size_t len) {
    size_t n = 0;
    for (size_t i = 0; i < len; i++) {
        n += text[i] == '\n' ? 1u : 0u;
    }
    return n;
}

/* --- Shared expectations -------------------------------------------------- */

/* Failure with a line number: exit 1, nothing on stdout, one stderr line
 * "FILE:LINE: reason" with a non-empty reason. */
static void assert_line_error(const run_t *r, const char *file, unsigned line) {
    char prefix[4200];
    snprintf(prefix, sizeof prefix, "%s:%u: ", file, line);
    if (r->status != 1 || r->out_len != 0 ||
        strncmp(r->err, prefix, strlen(prefix)) != 0) {
        fail_msg("want exit 1, empty stdout and stderr starting with '%s'; "
                 "got exit %d, %zu bytes of stdout, stderr: %s",
                 prefix, r->status, r->out_len, r->err);
    }
    assert_true(r->err_len > strlen(prefix) + 1); /* a reason follows */
    assert_int_equal(r->err[r->err_len - 1], '\n');
    assert_int_equal(count_lines(r->err, r->err_len), 1);
}

/* A usage error: exit 2, nothing on stdout, two lines on stderr: what
 * went wrong and "see 'ctxc [CMD] --help'" (not the whole help). */
static void assert_usage_error(const run_t *r) {
    if (r->status != EXIT_USAGE || strstr(r->err, "\nsee 'ctxc ") == NULL ||
        strstr(r->err, "--help'\n") == NULL ||
        count_lines(r->err, r->err_len) != 2) {
        fail_msg("want exit 2, one line and \"see 'ctxc CMD --help'\" on "
                 "stderr; got exit %d, stderr: %s",
                 r->status, r->err);
    }
    assert_int_equal(r->out_len, 0);
}

/* Parses the "arena:" line: used/cap bytes and used/cap entries. */
static void parse_arena(const char *out, size_t *bytes_used, size_t *bytes_max,
                        size_t *entries_used, size_t *entries_max) {
    char line[256];
    assert_non_null(line_of(out, 5, line, sizeof line));
    if (sscanf(line, "arena: %zu of %zu bytes, %zu of %zu entries", bytes_used,
               bytes_max, entries_used, entries_max) != 4) {
        fail_msg("bad arena line: %s", line);
    }
}

/* --- Help, version, usage ------------------------------------------------- */

static void test_help(void **state) {
    run_t r;
    (void)state;
    RUN(&r, "--help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: ctxc"));
    assert_non_null(strstr(r.out, "stats FILE"));
    assert_non_null(strstr(r.out, "fmt FILE"));
    assert_non_null(strstr(r.out, "--entries"));
    assert_int_equal(r.err_len, 0);

    RUN(&r, "-h");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: ctxc"));

    RUN(&r, "stats", "--help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "usage: ctxc stats FILE [--entries]"));
    assert_null(strstr(r.out, "Commands:"));
}

/* `ctxc CMD --help` and `ctxc help CMD` print that command's usage (the
 * global help tells the user to run them); every option of compress is
 * in its usage; `ctxc help` alone is the global help. */
static void test_command_help(void **state) {
    (void)state;
    static const struct {
        const char *cmd, *want;
    } cases[] = {
        {"stats", "usage: ctxc stats FILE"},
        {"fmt", "usage: ctxc fmt FILE"},
        {"compress", "usage: ctxc compress FILE"},
        {"repl", "usage: ctxc repl"},
        {"chat", "usage: ctxc chat"},
        {"prompts", "usage: ctxc prompts list"},
        {"http-get", "usage: ctxc http-get URL"},
        {"help", "usage: ctxc help"},
    };
    run_t r;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        RUN(&r, cases[i].cmd, "--help");
        assert_int_equal(r.status, 0);
        if (strncmp(r.out, cases[i].want, strlen(cases[i].want)) != 0) {
            fail_msg("ctxc %s --help printed: %s", cases[i].cmd, r.out);
        }
        assert_null(strstr(r.out, "Commands:"));
        assert_int_equal(r.err_len, 0);
        char first[4096];
        snprintf(first, sizeof first, "%s", r.out);
        RUN(&r, "help", cases[i].cmd);
        assert_int_equal(r.status, 0);
        assert_string_equal(r.out, first);
    }
    RUN(&r, "compress", "--help");
    static const char *const flags[] = {
        "--profile", "--strategy", "--context-limit", "--threshold",
        "--preserve", "--top-preserve", "--workspace", "--density",
        "--optimize-only", "-o", "--provider", "--model", "--base-url",
        "--key-env", "--ca-file", "--no-stream", "--todos", "--transcript"};
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++) {
        if (strstr(r.out, flags[i]) == NULL) {
            fail_msg("compress usage lacks %s: %s", flags[i], r.out);
        }
    }
    RUN(&r, "help");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "Commands:"));
    assert_non_null(strstr(r.out, "ctxc help COMMAND"));
    RUN(&r, "help", "stat");
    assert_usage_error(&r);
    assert_non_null(strstr(r.err, "did you mean 'stats'?"));
}

/* Close matches are suggested: commands, options, prompts subcommands. */
static void test_suggestions(void **state) {
    (void)state;
    char small[4096];
    data_path(small, sizeof small, "cli_small.jsonl");
    run_t r;
    RUN(&r, "stat", small);
    assert_usage_error(&r);
    assert_string_equal(r.err, "ctxc: unknown command 'stat'; did you mean "
                               "'stats'?\nsee 'ctxc --help'\n");
    RUN(&r, "compress", small, "--strat", "high-density");
    assert_usage_error(&r);
    assert_string_equal(r.err, "ctxc compress: unknown option '--strat'; did "
                               "you mean '--strategy'?\nsee 'ctxc compress "
                               "--help'\n");
    RUN(&r, "compress", small, "--contex-limit", "100");
    assert_non_null(strstr(r.err, "did you mean '--context-limit'?"));
    RUN(&r, "stats", small, "--entires");
    assert_non_null(strstr(r.err, "did you mean '--entries'?"));
    RUN(&r, "prompts", "lst");
    assert_usage_error(&r);
    assert_non_null(strstr(r.err, "did you mean 'list'?"));
    RUN(&r, "repl", "--histroy", "x");
    assert_usage_error(&r);
    assert_non_null(strstr(r.err, "did you mean '--history'?"));
    RUN(&r, "frobnicate", small);
    assert_usage_error(&r);
    assert_null(strstr(r.err, "did you mean"));
}

/* `ctxc --version` prints the version of project.yml. */
static void test_version(void **state) {
    char yml[65536], want[128], line[512];
    size_t len;
    const char *version = NULL;
    run_t r;
    (void)state;

    len = read_file(CTXC_SOURCE_DIR "/project.yml", yml, sizeof yml - 1);
    for (size_t i = 0; line_of(yml, i, line, sizeof line) != NULL; i++) {
        char *p = line;
        while (*p == ' ') {
            p++;
        }
        if (p != line && strncmp(p, "version:", 8) == 0) {
            p += 8;
            while (*p == ' ') {
                p++;
            }
            p[strcspn(p, " #\r")] = '\0';
            version = p;
            break;
        }
    }
    assert_true(len > 0);
    assert_non_null(version);
    snprintf(want, sizeof want, "ctxc %s\n", version);

    RUN(&r, "--version");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want);
    assert_int_equal(r.err_len, 0);
}

static void test_usage_errors(void **state) {
    char small[4096];
    run_t r;
    (void)state;
    data_path(small, sizeof small, "cli_small.jsonl");

    run_into(&r, NULL, NULL, (const char *)NULL); /* no arguments */
    assert_usage_error(&r);
    RUN(&r, "frobnicate", small);
    assert_usage_error(&r);
    assert_non_null(strstr(r.err, "frobnicate"));
    RUN(&r, "stats");
    assert_usage_error(&r);
    RUN(&r, "fmt");
    assert_usage_error(&r);
    RUN(&r, "stats", small, small);
    assert_usage_error(&r);
    RUN(&r, "stats", "--bogus", small);
    assert_usage_error(&r);
    assert_non_null(strstr(r.err, "--bogus"));
    RUN(&r, "fmt", small, "--entries");
    assert_usage_error(&r);
    RUN(&r, "--version", "extra");
    assert_usage_error(&r);
    RUN(&r, "--entries");
    assert_usage_error(&r);
}

/* --- stats ---------------------------------------------------------------- */

/* cli_small.jsonl, counted by hand:
 *   0 human  text                                   14
 *   1 ai     thinking, text, tool_call call_1       5 + 8 + 15 = 28
 *   2 tool   tool_response call_1                   29
 *   3 ai     tool_call call_2, tool_call call_3     28 + 16 = 44
 *   4 tool   tool_response call_2, call_3 (error)   1 + 8 = 9
 *   5 ai     text, code                             18 + 8 = 26
 *   6 human  media, text                            8 + 9 = 17
 *   7 ai     text                                   14
 * Token estimate per block: max((13 * words + 5) / 10, (utf16_len + 2) / 4),
 * e.g. entry 0: 10 words -> 13, 57 code units -> 14. Words are the pieces
 * of text.split(/\s+/): the error text "make: *** [test] Error 1\n" of
 * entry 4 is 6 pieces (the last one empty) -> 8. */
static const char small_summary[] =
    "entries: 8 (human 2, ai 4, tool 2)\n"
    "blocks: text 5, tool_call 3, tool_response 3, thinking 1, code 1, "
    "media 1\n"
    "tool calls: 3 (unpaired 0), tool responses: 3 (unpaired 0)\n"
    "tokens (estimated): 181\n";
static const char small_entries[] = "0 human 14\n"
                                    "1 ai 28\n"
                                    "2 tool 29\n"
                                    "3 ai 44\n"
                                    "4 tool 9\n"
                                    "5 ai 26\n"
                                    "6 human 17\n"
                                    "7 ai 14\n";

/* Checks "file:", the four summary lines and the arena line, and returns
 * the rest of stdout. */
static const char *check_summary(const run_t *r, const char *file_shown,
                                 const char *summary, size_t entries) {
    char want[4400];
    size_t used, cap, ent, ent_cap, n;
    const char *rest;

    if (r->status != 0) {
        fail_msg("exit %d, stderr: %s", r->status, r->err);
    }
    assert_int_equal(r->err_len, 0);
    n = (size_t)snprintf(want, sizeof want, "file: %s\n%s", file_shown,
                         summary);
    assert_true(n < sizeof want);
    if (strncmp(r->out, want, n) != 0) {
        fail_msg("stats output\n%s\ndoes not start with\n%s", r->out, want);
    }
    parse_arena(r->out, &used, &cap, &ent, &ent_cap);
    assert_int_equal(ent, entries);
    assert_true(entries == 0 ? used == 0 : used > 0);
    assert_true(used <= cap);
    assert_true(ent <= ent_cap);
    rest = strchr(r->out + n, '\n');
    assert_non_null(rest);
    return rest + 1;
}

static void test_stats_small(void **state) {
    char path[4096];
    run_t r;
    (void)state;
    data_path(path, sizeof path, "cli_small.jsonl");
    RUN(&r, "stats", path);
    const char *rest = check_summary(&r, path, small_summary, 8);
    assert_string_equal(rest, ""); /* no per-entry lines without --entries */
}

static void test_stats_entries(void **state) {
    char path[4096];
    run_t r;
    (void)state;
    data_path(path, sizeof path, "cli_small.jsonl");

    RUN(&r, "stats", path, "--entries");
    assert_string_equal(check_summary(&r, path, small_summary, 8),
                        small_entries);

    RUN(&r, "stats", "--entries", path); /* option before the file */
    assert_string_equal(check_summary(&r, path, small_summary, 8),
                        small_entries);
}

/* cli_unpaired.jsonl: call a1 is answered, call a2 never is; the response
 * to z9 has no call. */
static void test_stats_unpaired(void **state) {
    static const char summary[] =
        "entries: 5 (human 1, ai 2, tool 2)\n"
        "blocks: text 2, tool_call 2, tool_response 2, thinking 0, code 0, "
        "media 0\n"
        "tool calls: 2 (unpaired 1), tool responses: 2 (unpaired 1)\n"
        "tokens (estimated): 52\n";
    char path[4096];
    run_t r;
    (void)state;
    data_path(path, sizeof path, "cli_unpaired.jsonl");
    RUN(&r, "stats", path, "--entries");
    assert_string_equal(check_summary(&r, path, summary, 5),
                        "0 human 9\n1 ai 32\n2 tool 5\n3 tool 5\n4 ai 1\n");
}

/* A response that comes before its call pairs with nothing: the call has no
 * later response and the response no earlier call. */
static void test_stats_response_before_call(void **state) {
    char path[4096];
    run_t r;
    (void)state;
    data_path(path, sizeof path, "cli_order.jsonl");
    RUN(&r, "stats", path);
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, "cli_order.jsonl:3: block 0 (tool_call): id "
                                  "'r1' was answered before the call"));
}

static void test_stats_empty_file(void **state) {
    static const char summary[] =
        "entries: 0 (human 0, ai 0, tool 0)\n"
        "blocks: text 0, tool_call 0, tool_response 0, thinking 0, code 0, "
        "media 0\n"
        "tool calls: 0 (unpaired 0), tool responses: 0 (unpaired 0)\n"
        "tokens (estimated): 0\n";
    char path[256];
    run_t r;
    (void)state;
    write_temp(path, sizeof path, "\n  \n", 4);
    RUN(&r, "stats", path, "--entries");
    assert_string_equal(check_summary(&r, path, summary, 0), "");
    RUN(&r, "fmt", path);
    assert_int_equal(r.status, 0);
    assert_int_equal(r.out_len, 0);
    unlink(path);
}

/* --- fmt ------------------------------------------------------------------ */

static char g_file[OUT_CAP + 1];

/* fmt of an already canonical file is the file itself. */
static void test_fmt_canonical_is_unchanged(void **state) {
    static const char *const names[] = {"cli_small.jsonl", "cli_unpaired.jsonl",
                                        "fmt_expected.jsonl"};
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char path[4096];
        run_t r;
        size_t len;
        data_path(path, sizeof path, names[i]);
        len = read_file(path, g_file, OUT_CAP);
        RUN(&r, "fmt", path);
        if (r.status != 0) {
            fail_msg("%s: exit %d, stderr: %s", names[i], r.status, r.err);
        }
        assert_int_equal(r.err_len, 0);
        assert_bytes_equal(r.out, r.out_len, g_file, len);
    }
}

/* Whitespace, key order, blank lines, escapes (\u00e9, \/, surrogate
 * pairs, control characters), numbers as written, optional fields. */
static void test_fmt_normalises(void **state) {
    char in[4096], want[4096];
    run_t r;
    size_t len;
    (void)state;
    data_path(in, sizeof in, "fmt_input.jsonl");
    data_path(want, sizeof want, "fmt_expected.jsonl");
    len = read_file(want, g_file, OUT_CAP);
    RUN(&r, "fmt", in);
    if (r.status != 0) {
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    }
    assert_int_equal(r.err_len, 0);
    assert_bytes_equal(r.out, r.out_len, g_file, len);
}

/* fmt(fmt(x)) == fmt(x) */
static void test_fmt_idempotent(void **state) {
    static const char *const names[] = {"fmt_input.jsonl", "cli_small.jsonl"};
    (void)state;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        char in[4096], tmp[256];
        run_t r1, r2;
        data_path(in, sizeof in, names[i]);
        RUN(&r1, "fmt", in);
        assert_int_equal(r1.status, 0);
        write_temp(tmp, sizeof tmp, r1.out, r1.out_len);
        run_into(&r2, g_out2, NULL, "fmt", tmp, (const char *)NULL);
        assert_int_equal(r2.status, 0);
        assert_bytes_equal(r2.out, r2.out_len, r1.out, r1.out_len);
        unlink(tmp);
    }
}

/* "\r\n" line ends are accepted and written as "\n". */
static void test_fmt_crlf(void **state) {
    static const char crlf[] =
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"one\"}]}\r\n"
        "\r\n"
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"two\"}]}\r\n";
    static const char want[] =
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"one\"}]}\n"
        "{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\",\"text\":"
        "\"two\"}]}\n";
    char path[256];
    run_t r;
    (void)state;
    write_temp(path, sizeof path, crlf, sizeof crlf - 1);
    RUN(&r, "fmt", path);
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, want);
    unlink(path);
}

/* --- stdin ---------------------------------------------------------------- */

static void test_stdin(void **state) {
    char in[4096], want[4096];
    run_t r;
    size_t len;
    (void)state;
    data_path(in, sizeof in, "fmt_input.jsonl");
    data_path(want, sizeof want, "fmt_expected.jsonl");
    len = read_file(want, g_file, OUT_CAP);
    RUN_STDIN(&r, in, "fmt", "-");
    assert_int_equal(r.status, 0);
    assert_bytes_equal(r.out, r.out_len, g_file, len);

    data_path(in, sizeof in, "cli_small.jsonl");
    RUN_STDIN(&r, in, "stats", "-", "--entries");
    assert_string_equal(check_summary(&r, "<stdin>", small_summary, 8),
                        small_entries);

    data_path(in, sizeof in, "bad_speaker.jsonl");
    RUN_STDIN(&r, in, "fmt", "-");
    assert_line_error(&r, "<stdin>", 4);
}

/* --- Bad input ------------------------------------------------------------ */

static const struct {
    const char *name;
    unsigned line;
} bad_files[] = {
    {"bad_not_json.jsonl", 3},           /* unterminated string */
    {"bad_trailing_garbage.jsonl", 2},   /* text after the object */
    {"bad_shape.jsonl", 2},              /* an array instead of an object */
    {"bad_speaker.jsonl", 4},            /* "robot"; line 2 is blank */
    {"bad_block_type.jsonl", 2},         /* "picture" */
    {"bad_missing_field.jsonl", 3},      /* tool_call without name */
    {"bad_missing_blocks.jsonl", 2},     /* entry without blocks */
    {"bad_empty_blocks.jsonl", 2},       /* blocks: [] */
    {"bad_wrong_type.jsonl", 2},         /* text: 42 */
    {"bad_metadata_type.jsonl", 3},      /* metadata: an array */
    {"bad_lone_surrogate.jsonl", 4},     /* \ud800 */
    {"bad_lone_low_surrogate.jsonl", 2}, /* \udc00 */
};

static void test_bad_inputs(void **state) {
    (void)state;
    for (size_t i = 0; i < sizeof bad_files / sizeof bad_files[0]; i++) {
        char path[4096];
        run_t r;
        data_path(path, sizeof path, bad_files[i].name);
        RUN(&r, "fmt", path);
        assert_line_error(&r, path, bad_files[i].line);
        RUN(&r, "stats", path);
        assert_line_error(&r, path, bad_files[i].line);
    }
}

static const char good_line[] = "{\"speaker\":\"human\",\"blocks\":[{\"type\":"
                                "\"text\",\"text\":\"fine\"}]}\n";

/* Raw bytes that are not UTF-8, inside a string on line 2. */
static void test_bad_utf8_bytes(void **state) {
    static const char *const bad[] = {
        "caf\xc3(",          /* truncated sequence */
        "\xff",              /* never valid */
        "\xc0\xaf",          /* overlong "/" */
        "\xed\xa0\x80",      /* UTF-8 encoded surrogate */
        "\xf4\x90\x80\x80",  /* above U+10FFFF */
        "\x80 continuation", /* stray continuation byte */
    };
    (void)state;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512], path[256];
        run_t r;
        int n = snprintf(text, sizeof text,
                         "%s{\"speaker\":\"ai\",\"blocks\":[{\"type\":\"text\","
                         "\"text\":\"%s\"}]}\n%s",
                         good_line, bad[i], good_line);
        assert_true(n > 0 && (size_t)n < sizeof text);
        write_temp(path, sizeof path, text, (size_t)n);
        RUN(&r, "fmt", path);
        assert_line_error(&r, path, 2);
        unlink(path);
    }
}

/* Writes good_line, then an entry whose deepest array/object nesting is
 * `depth` (the entry object is depth 1), then good_line. */
static void write_nested(char *path, size_t cap, int depth) {
    static char text[8192];
    /* entry (1) > blocks (2) > block (3) > parameters (4) ... */
    int arrays = depth - 3;
    size_t n = 0;
    n += (size_t)snprintf(text + n, sizeof text - n,
                          "%s{\"speaker\":\"ai\",\"blocks\":[{\"type\":"
                          "\"tool_call\",\"id\":\"d1\",\"name\":\"deep\","
                          "\"parameters\":",
                          good_line);
    for (int i = 0; i < arrays; i++) {
        text[n++] = '[';
    }
    text[n++] = '0';
    for (int i = 0; i < arrays; i++) {
        text[n++] = ']';
    }
    n += (size_t)snprintf(text + n, sizeof text - n, "}]}\n%s", good_line);
    assert_true(n < sizeof text);
    write_temp(path, cap, text, n);
}

static void test_nesting_limit(void **state) {
    char path[256];
    run_t r;
    (void)state;

    write_nested(path, sizeof path, TEST_MAX_DEPTH); /* at the limit: fine */
    RUN(&r, "stats", path);
    if (r.status != 0) {
        fail_msg("depth %d rejected: %s", TEST_MAX_DEPTH, r.err);
    }
    assert_non_null(strstr(r.out, "entries: 3 "));
    unlink(path);

    write_nested(path, sizeof path, TEST_MAX_DEPTH + 1); /* one too deep */
    RUN(&r, "fmt", path);
    assert_line_error(&r, path, 2);
    unlink(path);

    write_nested(path, sizeof path, 200); /* far too deep */
    RUN(&r, "stats", path);
    assert_line_error(&r, path, 2);
    unlink(path);
}

/* A line longer than the history arena is rejected with its number. The
 * arena size is read from `stats` of an empty input. */
static void test_line_longer_than_arena(void **state) {
    static const char head[] =
        "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\",\"text\":\"";
    static const char tail[] = "\"}]}\n";
    static char chunk[65536];
    size_t used, cap, ent, ent_cap, body, off = 0;
    char path[256];
    run_t r;
    FILE *fp;
    (void)state;

    RUN_STDIN(&r, "/dev/null", "stats", "-");
    assert_int_equal(r.status, 0);
    parse_arena(r.out, &used, &cap, &ent, &ent_cap);
    assert_true(cap > 0 && cap < ((size_t)1 << 30));

    /* line 2 is cap + 1 bytes long without its "\n" */
    body = cap + 1u - (sizeof head - 1) - (sizeof tail - 2);
    memset(chunk, 'a', sizeof chunk);
    fp = fdopen(make_temp(path, sizeof path), "wb");
    assert_non_null(fp);
    assert_int_equal(fputs(good_line, fp) >= 0, 1);
    assert_int_equal(fputs(head, fp) >= 0, 1);
    while (off < body) {
        size_t n = body - off < sizeof chunk ? body - off : sizeof chunk;
        assert_int_equal(fwrite(chunk, 1, n, fp), n);
        off += n;
    }
    assert_int_equal(fputs(tail, fp) >= 0, 1);
    assert_int_equal(fputs(good_line, fp) >= 0, 1);
    assert_int_equal(fclose(fp), 0);

    RUN(&r, "stats", path);
    assert_line_error(&r, path, 2);
    unlink(path);
}

static void test_missing_file(void **state) {
    char path[4096], want[4400];
    run_t r;
    (void)state;
    data_path(path, sizeof path, "no_such_file.jsonl");
    snprintf(want, sizeof want, "%s: ", path);

    RUN(&r, "stats", path);
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_len, 0);
    assert_true(strncmp(r.err, want, strlen(want)) == 0);
    assert_non_null(strstr(r.err, strerror(ENOENT)));

    RUN(&r, "fmt", path);
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, strerror(ENOENT)));

    /* a directory opens but cannot be read */
    RUN(&r, "stats", CTXC_TEST_DATA_DIR);
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, CTXC_TEST_DATA_DIR ": "));
}

/* --- The shipped example session ------------------------------------------ */

static void test_example_session(void **state) {
    static const char rel[] = "boards/host/examples/coding-session.jsonl";
    char path[4096], want[128], line[512];
    size_t len, lines, used, cap, ent, ent_cap;
    run_t r;
    (void)state;

    snprintf(path, sizeof path, "%s/%s", CTXC_SOURCE_DIR, rel);
    len = read_file(path, g_file, OUT_CAP);
    lines = count_nonblank_lines(g_file, len);
    assert_true(lines >= 60);

    RUN(&r, "stats", path, "--entries");
    if (r.status != 0) {
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    }
    snprintf(want, sizeof want, "entries: %zu (", lines);
    assert_non_null(line_of(r.out, 1, line, sizeof line));
    assert_true(strncmp(line, want, strlen(want)) == 0);
    assert_non_null(line_of(r.out, 3, line, sizeof line));
    assert_non_null(strstr(line, " (unpaired 0), tool responses: "));
    assert_true(strlen(line) > 12);
    assert_string_equal(line + strlen(line) - 12, "(unpaired 0)");
    parse_arena(r.out, &used, &cap, &ent, &ent_cap);
    assert_int_equal(ent, lines);
    assert_int_equal(count_lines(r.out, r.out_len), 6 + lines);

    /* the example is written in canonical form */
    RUN(&r, "fmt", path);
    assert_int_equal(r.status, 0);
    assert_bytes_equal(r.out, r.out_len, g_file, len);
}

/* --- compress ------------------------------------------------------------- */

static void example_path(char *path, size_t cap) {
    snprintf(path, cap, "%s/boards/host/examples/coding-session.jsonl",
             CTXC_SOURCE_DIR);
}

/* Runs `stats` on JSONL text and returns its entry count; asserts that the
 * text imports and has no unpaired tool calls or responses. */
static size_t stats_of(const char *jsonl, size_t len) {
    char tmp[256], line[512];
    run_t r;
    size_t used, cap, ent, ent_cap;
    write_temp(tmp, sizeof tmp, jsonl, len);
    run_into(&r, g_out2, NULL, "stats", tmp, (const char *)NULL);
    unlink(tmp);
    if (r.status != 0) {
        fail_msg("stats of the output failed: %s", r.err);
    }
    assert_non_null(line_of(r.out, 3, line, sizeof line));
    assert_non_null(strstr(line, "(unpaired 0), tool responses: "));
    assert_string_equal(line + strlen(line) - 12, "(unpaired 0)");
    parse_arena(r.out, &used, &cap, &ent, &ent_cap);
    return ent;
}

static void test_compress_top_down(void **state) {
    char path[4096];
    run_t r;
    (void)state;
    example_path(path, sizeof path);
    RUN(&r, "compress", path, "--strategy", "top-down-truncation",
        "--context-limit", "16000");
    if (r.status != 0) {
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    }
    assert_non_null(strstr(r.err,
                           "strategy top-down-truncation, context limit "
                           "16000, threshold 0.850 (target 8160 tokens)"));
    assert_non_null(strstr(r.err, "entries"));
    assert_non_null(strstr(r.err, "tokens"));
    assert_non_null(strstr(r.err, "bytes"));
    assert_non_null(strstr(r.err, "time: "));
    assert_null(strstr(r.err, "density:")); /* no density step */
    size_t n = stats_of(r.out, r.out_len);  /* (reuses the stderr buffer) */
    assert_true(n >= 2 && n < 87);
}

static void test_compress_high_density_to_a_file(void **state) {
    char path[4096], out[256];
    run_t r;
    (void)state;
    example_path(path, sizeof path);
    int fd = make_temp(out, sizeof out);
    close(fd);
    RUN(&r, "compress", path, "--strategy", "high-density", "--context-limit",
        "12000", "--threshold", "0.9", "--density", "recencyPruning=true", "-o",
        out);
    if (r.status != 0) {
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    }
    assert_int_equal(r.out_len, 0); /* the history went to the file */
    assert_non_null(strstr(r.err, "threshold 0.900"));
    assert_non_null(strstr(r.err, "density: read->write pruned "));
    assert_null(strstr(r.err, "[recency off]"));
    assert_non_null(strstr(r.err, "compress: "));
    size_t len = read_file(out, g_file, OUT_CAP);
    unlink(out);
    assert_true(stats_of(g_file, len) > 2);
    assert_non_null(strstr(g_file, "[summarized]"));
}

static void test_compress_optimize_only(void **state) {
    char path[4096];
    run_t r;
    (void)state;
    example_path(path, sizeof path);
    RUN(&r, "compress", path, "--strategy", "high-density", "--optimize-only",
        "--density", "compression.density.fileDedupe=false");
    if (r.status != 0) {
        fail_msg("exit %d, stderr: %s", r.status, r.err);
    }
    assert_non_null(strstr(r.err, "file dedupe 0 inclusions"));
    assert_null(strstr(r.err, "compress: "));
    assert_null(strstr(r.out, "[summarized]"));
    size_t n = stats_of(r.out, r.out_len);
    assert_true(n < 87); /* read->write pruning removed entries */
}

static void test_compress_errors(void **state) {
    char path[4096];
    run_t r;
    (void)state;
    example_path(path, sizeof path);
    /* no --strategy: compression.strategy's default, middle-out, which
     * needs a model: without provider and model the error says what to set
     * (and nothing is written) */
    RUN(&r, "compress", path, "--context-limit", "100");
    assert_int_equal(r.status, EXIT_USAGE);
    /* one message, naming the flags, before the file is read */
    assert_string_equal(r.err,
                        "ctxc compress: middle-out asks a model for its "
                        "summary: give --provider P (openai, anthropic, "
                        "gemini) and --model M (or --profile NAME with them), "
                        "or --strategy top-down-truncation or high-density "
                        "(no model)\n");
    assert_int_equal(r.out_len, 0);
    RUN(&r, "compress", path, "--strategy", "bottom-up", "--context-limit",
        "100");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err,
                           "invalid value 'bottom-up' (allowed: middle-out, "
                           "top-down-truncation, one-shot, high-density)"));
    RUN(&r, "compress", path, "--strategy", "one-shot", "--context-limit",
        "100", "--provider", "openai");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "one-shot asks a model for its summary: "
                                  "give --model M"));
    assert_int_equal(r.out_len, 0);
    RUN(&r, "compress", path, "--strategy", "one-shot", "--context-limit",
        "100", "--provider", "openia", "--model", "m");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_string_equal(r.err, "ctxc compress: --provider openia: provider: "
                               "'openia' is not a provider of this build "
                               "(compiled in: openai anthropic gemini)\n");
    /* an API key never crosses plain http to a host that is not loopback */
    RUN(&r, "compress", path, "--strategy", "one-shot", "--context-limit",
        "100", "--provider", "openai", "--model", "m", "--base-url",
        "http://example.com/v1", "--key-env", "CTXC_TEST_NO_SUCH_KEY");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "would go over plain http://"));
    RUN(&r, "compress", path, "--strategy", "top-down-truncation");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "--context-limit"));
    RUN(&r, "compress", path, "--strategy", "top-down-truncation",
        "--context-limit", "100", "--threshold", "1.5");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "compression-threshold: '1.5' is above 1"));
    RUN(&r, "compress", path, "--strategy", "high-density", "--context-limit",
        "100", "--density", "speed=11");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(
        strstr(r.err, "unknown setting 'compression.density.speed'"));
    RUN(&r, "compress", path, "--strategy", "high-density", "--context-limit",
        "100", "--density", "recencyRetention=many");
    assert_int_equal(r.status, EXIT_USAGE);
    RUN(&r, "compress", "/nonexistent/x.jsonl", "--strategy",
        "top-down-truncation", "--context-limit", "100");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "cannot open"));
}

/* --- prompts ------------------------------------------------------------ */

static char g_home[256];

/* A fresh, empty $CTXC_HOME (a not yet existing folder in a temp dir). */
static void fresh_home(void) {
    const char *dir = getenv("TMPDIR");
    char base[200];
    snprintf(base, sizeof base, "%s/ctxc_test_home_XXXXXX",
             dir != NULL && dir[0] != '\0' ? dir : "/tmp");
    assert_non_null(mkdtemp(base));
    snprintf(g_home, sizeof g_home, "%s/home", base);
    assert_int_equal(setenv("CTXC_HOME", g_home, 1), 0);
}

/* Outside fresh_home(): a settings folder that does not exist, so the
 * user's own settings never reach the tests. */
#define NO_HOME "/nonexistent-ctxc-test-home/ctxc"

static void drop_home(void) {
    char cmd[300];
    char *slash = strrchr(g_home, '/');
    *slash = '\0';
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_home);
    assert_int_equal(system(cmd), 0);
    setenv("CTXC_HOME", NO_HOME, 1);
}

static void put_home_file(const char *rel, const char *text) {
    char path[600], cmd[700];
    snprintf(path, sizeof path, "%s/%s", g_home, rel);
    snprintf(cmd, sizeof cmd, "mkdir -p \"$(dirname '%s')\"", path);
    assert_int_equal(system(cmd), 0);
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* A copy of the shipped example session in $CTXC_HOME (fresh_home() first)
 * as `rel`, its path into path: a REPL with --history writes its file as
 * it goes, and the example in the source tree must stay as it is. */
static void home_example(const char *rel, char *path, size_t cap) {
    char cmd[1600];
    snprintf(path, cap, "%s/%s", g_home, rel);
    snprintf(cmd, sizeof cmd,
             "mkdir -p '%s' && cp '%s/boards/host/examples/coding-session.jsonl'"
             " '%s'",
             g_home, CTXC_SOURCE_DIR, path);
    assert_int_equal(system(cmd), 0);
}

static const char *home_file(const char *rel) {
    static char text[65536];
    char path[600];
    snprintf(path, sizeof path, "%s/%s", g_home, rel);
    size_t n = read_file(path, text, sizeof text - 1);
    text[n] = '\0';
    return text;
}

/* The line of `list` output for prompt id, as "LEVEL SOURCE" with the
 * column padding squeezed. */
static const char *list_row(const run_t *r, const char *id) {
    static char row[1024];
    char key[128];
    snprintf(key, sizeof key, "\n%s ", id);
    const char *p = strstr(r->out, key);
    assert_non_null(p);
    p += strlen(key);
    size_t n = 0;
    bool space = true;
    for (; *p != '\n' && *p != '\0' && n + 1 < sizeof row; p++) {
        if (*p == ' ') {
            if (!space) {
                row[n++] = ' ';
            }
            space = true;
        } else {
            row[n++] = *p;
            space = false;
        }
    }
    row[n] = '\0';
    return row;
}

static void test_prompts_as_a_new_user(void **state) {
    (void)state;
    run_t r;
    char want[700];
    fresh_home();
    RUN(&r, "prompts", "install");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "compression/middle-out.md"));
    assert_non_null(strstr(r.out, "installed"));
    RUN(&r, "prompts", "list", "--provider", "anthropic", "--model",
        "claude-x");
    assert_int_equal(r.status, 0);
    snprintf(want, sizeof want, "base %s/compression/middle-out.md", g_home);
    assert_string_equal(list_row(&r, "compression/middle-out"), want);
    snprintf(want, sizeof want, "base %s/compression/one-shot.md", g_home);
    assert_string_equal(list_row(&r, "compression/one-shot"), want);

    /* a file in the provider folder changes the resolution */
    put_home_file("providers/anthropic/compression/middle-out.md", "mine\n");
    RUN(&r, "prompts", "list", "--provider", "Anthropic", "--model",
        "claude-x");
    snprintf(want, sizeof want,
             "provider %s/providers/anthropic/compression/middle-out.md",
             g_home);
    assert_string_equal(list_row(&r, "compression/middle-out"), want);
    RUN(&r, "prompts", "show", "middle-out", "--provider", "anthropic");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "mine\n");
    assert_non_null(strstr(r.err, "level provider"));

    /* a traversal attempt in the model name stays inside the root */
    put_home_file("providers/anthropic/models/..-..-etc-passwd/compression/"
                  "one-shot.md",
                  "inside\n");
    RUN(&r, "prompts", "list", "--provider", "anthropic", "--model",
        "../../etc/passwd");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "models/..-..-etc-passwd"));
    snprintf(want, sizeof want,
             "model %s/providers/anthropic/models/..-..-etc-passwd/compression/"
             "one-shot.md",
             g_home);
    assert_string_equal(list_row(&r, "compression/one-shot"), want);

    /* show prints the file verbatim; install keeps a user edit */
    put_home_file("compression/one-shot.md", "edited\r\n");
    RUN(&r, "prompts", "show", "compression/one-shot.md");
    assert_int_equal(r.status, 0);
    assert_string_equal(r.out, "edited\r\n");
    RUN(&r, "prompts", "install");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "kept (edited by you)"));
    assert_string_equal(home_file("compression/one-shot.md"), "edited\r\n");
    drop_home();
}

/* A list (or show) writes nothing: a first run lists the built-in
 * prompts and $CTXC_HOME is still not there; install writes them. */
static void test_prompts_list_writes_nothing(void **state) {
    (void)state;
    run_t r;
    fresh_home();
    RUN(&r, "prompts", "list");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    assert_non_null(strstr(list_row(&r, "compression/middle-out"),
                           "built-in"));
    RUN(&r, "prompts", "show", "middle-out");
    assert_int_equal(r.status, 0);
    assert_true(r.out_len > 100);
    struct stat sb;
    assert_int_equal(stat(g_home, &sb), -1); /* never created */
    RUN(&r, "prompts", "install");
    assert_int_equal(r.status, 0);
    assert_true(strlen(home_file("compression/middle-out.md")) > 100);
    drop_home();
}

static void test_prompts_errors(void **state) {
    (void)state;
    run_t r;
    fresh_home();
    RUN(&r, "prompts");
    assert_usage_error(&r);
    RUN(&r, "prompts", "remove");
    assert_usage_error(&r);
    RUN(&r, "prompts", "show");
    assert_usage_error(&r);
    RUN(&r, "prompts", "show", "../../etc/passwd");
    assert_int_equal(r.status, EXIT_USAGE);
    RUN(&r, "prompts", "list", "--model");
    assert_usage_error(&r);
    RUN(&r, "prompts", "show", "nope");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "compression/nope.md"));
    assert_non_null(strstr(r.err, "not found"));
    /* a directory where a prompt file should be: an error naming it, no
     * silent fallback */
    put_home_file("providers/p/compression/one-shot.md/x", "");
    RUN(&r, "prompts", "list", "--provider", "p");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "providers/p/compression/one-shot.md"));
    assert_non_null(strstr(r.out, "is a directory"));
    /* a corrupt manifest stops the installer, which writes nothing */
    put_home_file(".prompts-manifest", "garbage\n");
    RUN(&r, "prompts", "install");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, ".prompts-manifest:1:"));
    assert_string_equal(home_file(".prompts-manifest"), "garbage\n");
    drop_home();
    /* a relative CTXC_HOME */
    setenv("CTXC_HOME", "relative/dir", 1);
    RUN(&r, "prompts", "list");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "absolute"));
    setenv("CTXC_HOME", NO_HOME, 1);
}

/* --- repl ----------------------------------------------------------------- */

/* Starts the CLI with args (copied: pty_spawn wants char *const *). */
static int pty_start(pid_t *pid, const char *const *args) {
    char *argv[MAX_ARGS + 2];
    size_t n = 0;
    for (; args[n] != NULL; n++) {
        snprintf(g_argstore[n], sizeof g_argstore[n], "%s", args[n]);
        argv[n] = g_argstore[n];
    }
    argv[n] = NULL;
    return pty_spawn(pid, argv);
}

/* A new user in `ctxc repl` on a terminal: completes the strategy key and
 * value with Tab, saves a profile, restarts, loads it (completing its name)
 * and compresses with it (REQ-CS-007.4/.5/.6). */
static void test_repl_on_a_terminal(void **state) {
    (void)state;
    char example[512];
    fresh_home();
    home_example("agent.jsonl", example, sizeof example);
    const char *args[] = {"ctxc", "repl", "--history", example, NULL};
    pid_t pid;
    int m = pty_start(&pid, args);
    pty_expect(m, "ctxc> ");
    pty_type(m, "/set compression.str\t");
    pty_expect(m, "ategy ");
    pty_type(m, "\t"); /* every registered strategy */
    pty_expect(m, "middle-out");
    pty_expect(m, "top-down-truncation");
    pty_expect(m, "one-shot");
    pty_expect(m, "high-density");
    pty_type(m, "top\t\r");
    pty_expect(m, "compression.strategy = top-down-truncation (session)");
    pty_type(m, "/set context-limit 3000\r");
    pty_expect(m, "context-limit = 3000");
    pty_type(m, "/profile save cheap\r");
    pty_expect(m, "profile 'cheap' saved");
    pty_finish(m, pid);

    m = pty_start(&pid, args);
    pty_expect(m, "ctxc> ");
    pty_type(m, "/stats\r");
    pty_expect(m, "strategy middle-out"); /* a new session: the default */
    pty_type(m, "/profile load ch\t");
    pty_expect(m, "eap ");
    pty_type(m, "\r");
    pty_expect(m, "profile 'cheap' loaded");
    pty_type(m, "/compress\r");
    pty_expect(m, "compressed with top-down-truncation: 87 -> ");
    pty_finish(m, pid);
    drop_home();
}

/* Scripted: commands on stdin (not a terminal). */
static void test_repl_scripted(void **state) {
    (void)state;
    char script[256], hist[300];
    static const char text[] =
        "/set compression.strategy top-down-truncation\n"
        "/set context-limit 40\n"
        "hello there, this is the first message of the session\n"
        "and a second message with a few more words in it\n"
        "a third one so that something can be dropped\n"
        "/stats\n"
        "/compress\n"
        "/save\n"
        "/set compresion.strategy x\n"
        "/set compression.strategy bottom-up\n"
        "/profile load nosuch\n"
        "/nope\n";
    fresh_home();
    put_home_file("profiles/.keep", "");
    write_temp(script, sizeof script, text, sizeof text - 1);
    snprintf(hist, sizeof hist, "%s/history.jsonl", g_home);
    run_t r;
    RUN_STDIN(&r, script, "repl", "--history", hist);
    /* a script whose lines failed: exit 1, the errors on stderr */
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "entries 3, tokens "));
    assert_non_null(
        strstr(r.out, "compressed with top-down-truncation: 3 -> "));
    assert_non_null(strstr(r.out, "saved "));
    assert_null(strstr(r.out, "error:"));
    assert_non_null(strstr(r.err, "did you mean 'compression.strategy'?"));
    assert_non_null(strstr(r.err, "allowed: middle-out, top-down-truncation"));
    assert_non_null(strstr(r.err, "nosuch"));
    assert_non_null(strstr(r.err, "error: unknown command /nope"));
    /* the saved history imports again */
    RUN(&r, "stats", hist);
    assert_int_equal(r.status, 0);
    unlink(script);
    drop_home();
}

/* A script: diagnostics go to stderr, stdout keeps only the answers, and
 * the exit status is 1 when any line failed (0 when none did). */
static void test_repl_script_exit_status(void **state) {
    (void)state;
    char script[256];
    static const char bad[] = "/set context-limit abc\n"
                              "/compress\n"
                              "/nosuch\n"
                              "/sett\n";
    fresh_home();
    write_temp(script, sizeof script, bad, sizeof bad - 1);
    run_t r;
    RUN_STDIN(&r, script, "repl");
    assert_int_equal(r.status, 1);
    assert_int_equal(r.out_len, 0);
    assert_non_null(strstr(r.err, "error: context-limit: 'abc' is not a whole "
                                  "number >= 1\n"));
    assert_non_null(strstr(r.err, "error: unknown command /nosuch (try "
                                  "/help)\n"));
    assert_non_null(strstr(r.err, "error: unknown command /sett; did you mean "
                                  "'/settings' or '/set'?"));
    unlink(script);
    static const char good[] = "/set context-limit 100\n/stats\n";
    write_temp(script, sizeof script, good, sizeof good - 1);
    RUN_STDIN(&r, script, "repl");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    assert_non_null(strstr(r.out, "context-limit = 100"));
    unlink(script);
    drop_home();
}

/* On a terminal a failed line does not end the session nor its status: a
 * person reads the error and goes on; /quit exits 0. */
static void test_repl_terminal_errors_keep_exit_zero(void **state) {
    (void)state;
    fresh_home();
    const char *args[] = {"ctxc", "repl", NULL};
    pid_t pid;
    int m = pty_start(&pid, args);
    pty_expect(m, "ctxc> ");
    pty_type(m, "/sett\r");
    pty_expect(m, "did you mean '/settings' or '/set'?");
    pty_expect(m, "ctxc> ");
    pty_finish(m, pid); /* exit status 0 */
    drop_home();
}

/* Issue 30's smaller things: the table's arena row says what it counts;
 * /compress that changes nothing says so; -o into a missing folder names
 * the folder; a URL without a scheme is quoted whole; the chat's reply
 * limit is in its help. */
static void test_smaller_things(void **state) {
    (void)state;
    char example[512], out[600];
    example_path(example, sizeof example);
    run_t r;
    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "5000", "-o", "/dev/null");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "\narena bytes  "));
    assert_null(strstr(r.err, "\nbytes "));

    snprintf(out, sizeof out, "/nonexistent-ctxc-dir/sub/out.jsonl");
    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "5000", "-o", out);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, "ctxc compress: /nonexistent-ctxc-dir/sub/"
                               "out.jsonl: the folder /nonexistent-ctxc-dir/"
                               "sub does not exist\n");

    RUN(&r, "http-get", "localhost:3456/v1");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "(in 'localhost:3456/v1')"));
    assert_null(strstr(r.err, "CTXC_E_"));

    RUN(&r, "chat", "--help");
    assert_non_null(strstr(r.out, "65535 bytes"));

    char script[256];
    static const char text[] = "/set compression.strategy top-down-truncation\n"
                               "/set context-limit 100000\n"
                               "/compress\n";
    fresh_home();
    home_example("agent.jsonl", example, sizeof example);
    write_temp(script, sizeof script, text, sizeof text - 1);
    RUN_STDIN(&r, script, "repl", "--history", example);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "top-down-truncation changed nothing: 87 "
                                  "entries, "));
    assert_null(strstr(r.out, "87 -> 87"));
    unlink(script);
    drop_home();
}

/* A file that does not fit: the report says what the whole file needs,
 * not the first line that did not fit (the lines after it measured): here
 * the entry slots. */
static void test_import_needs_the_whole_file(void **state) {
    (void)state;
#if defined(CTXC_CFG_HISTORY_MAX_ENTRIES) && defined(CTXC_CFG_HISTORY_ARENA_BYTES)
    char path[256];
    int fd = make_temp(path, sizeof path);
    FILE *f = fdopen(fd, "w");
    assert_non_null(f);
    for (unsigned i = 0; i < CTXC_CFG_HISTORY_MAX_ENTRIES + 100u; i++) {
        fprintf(f, "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
                   "\"text\":\"line %u\"}]}\n",
                i);
    }
    assert_int_equal(fclose(f), 0);
    run_t r;
    RUN(&r, "stats", path);
    char want[512];
    snprintf(want, sizeof want,
             "%s:%u: the file has 100 entries more than the history's %u "
             "(CTXC_CFG_HISTORY_MAX_ENTRIES)\n",
             path, (unsigned)CTXC_CFG_HISTORY_MAX_ENTRIES + 1u,
             (unsigned)CTXC_CFG_HISTORY_MAX_ENTRIES);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.err, want);

    /* (the arena-bytes branch, the same measuring with the bytes each line
     * takes, is not run here: a file over the host's 32 MiB arena is too
     * slow under valgrind; ctxc_import_text's is tested in test_jsonl) */
    unlink(path);
#else
    skip();
#endif
}

/* Tab after /set provider lists this build's providers; a long list comes
 * in columns on several lines, not as one wrapped line. */
static void test_repl_completion(void **state) {
    (void)state;
    fresh_home();
    const char *args[] = {"ctxc", "repl", NULL};
    pid_t pid;
    int m = pty_start(&pid, args);
    pty_expect(m, "ctxc> ");
    pty_type(m, "/set provider \t");
    pty_expect(m, "openai");
    pty_type(m, "\x15"); /* ^U: the line emptied */
    pty_type(m, "/set provider an\t\r");
    pty_expect(m, "provider = anthropic (session)");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/set \t");
    pty_expect(m, "\n");
    /* every key (and unset), in rows of several columns: more than one a
     * line, fewer lines than keys, none wider than 80 */
    static char shown[sizeof pty_screen];
    pty_expect_copy(m, "ctxc> ", shown, sizeof shown);
    size_t lines = 0, widest = 0, len = 0;
    for (const char *p = shown; *p != '\0'; p++) {
        if (*p == '\n') {
            lines++;
            widest = len > widest ? len : widest;
            len = 0;
        } else if (*p != '\r') {
            len++;
        }
    }
    if (strstr(shown, "compression.strategy") == NULL ||
        strstr(shown, "network.call-deadline-ms") == NULL || lines < 3 ||
        lines > 20 || widest > 80) {
        fail_msg("want the keys in columns; %zu lines, widest %zu:\n%s", lines,
                 widest, shown);
    }
    pty_type(m, "\x15");
    pty_finish(m, pid);
    drop_home();
}

/* ctxc compress --profile uses the profile's settings (options override). */
static void test_compress_with_a_profile(void **state) {
    (void)state;
    char example[512];
    snprintf(example, sizeof example,
             "%s/boards/host/examples/coding-session.jsonl", CTXC_SOURCE_DIR);
    fresh_home();
    put_home_file("profiles/cheap.json",
                  "{\"compression.strategy\": \"top-down-truncation\", "
                  "\"context-limit\": 4000}\n");
    run_t r;
    RUN(&r, "compress", example, "--profile", "cheap");
    assert_int_equal(r.status, 0);
    assert_non_null(
        strstr(r.err, "strategy top-down-truncation, context limit 4000"));
    assert_non_null(strstr(r.err, "profile cheap"));
    RUN(&r, "compress", example, "--profile", "cheap", "--context-limit",
        "8000");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "context limit 8000"));
    RUN(&r, "compress", example, "--profile", "nosuch");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "nosuch"));
    /* a corrupt settings file is reported, left alone, and the rest works */
    put_home_file("settings.json", "{not json");
    RUN(&r, "compress", example, "--profile", "cheap");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "settings.json"));
    assert_string_equal(home_file("settings.json"), "{not json");
    drop_home();
}

/* --- Where -o OUT and /save FILE write ----------------------------------- */

static char g_dir[256]; /* fresh_dir(): an empty temp directory */

static void fresh_dir(void) {
    const char *t = getenv("TMPDIR");
    snprintf(g_dir, sizeof g_dir, "%s/ctxc_test_out_XXXXXX",
             t != NULL && t[0] != '\0' ? t : "/tmp");
    assert_non_null(mkdtemp(g_dir));
}

static void drop_dir(void) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", g_dir);
    assert_int_equal(system(cmd), 0);
}

/* g_dir/rel (four buffers in turn, so a call can take several). */
static const char *in_dir(const char *rel) {
    static char buf[4][512];
    static unsigned next;
    char *p = buf[next++ % 4u];
    snprintf(p, sizeof buf[0], "%s/%s", g_dir, rel);
    return p;
}

static void write_text(const char *path, const char *text, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    assert_int_equal(write(fd, text, len), (ssize_t)len);
    close(fd);
}

static void assert_file_is(const char *path, const char *want, size_t len) {
    static char got[65536];
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    if (!S_ISREG(sb.st_mode)) {
        fail_msg("%s is no longer a regular file", path);
    }
    size_t n = read_file(path, got, sizeof got - 1);
    assert_bytes_equal(got, n, want, len);
}

static unsigned mode_bits(const char *path) {
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    return (unsigned)(sb.st_mode & 07777);
}

static mode_t lstat_type(const char *path) {
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    return sb.st_mode & S_IFMT;
}

static void assert_link_to(const char *path, const char *target) {
    char got[512];
    ssize_t n = readlink(path, got, sizeof got - 1);
    if (n < 0) {
        fail_msg("%s is no longer a symbolic link", path);
    }
    got[n] = '\0';
    assert_string_equal(got, target);
}

/* Names in a directory (without . and ..). */
static size_t dir_count(const char *dir) {
    DIR *d = opendir(dir);
    assert_non_null(d);
    size_t n = 0;
    for (struct dirent *e = readdir(d); e != NULL; e = readdir(d)) {
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0;
    }
    closedir(d);
    return n;
}

static char g_want[65536]; /* the canonical JSONL of cli_small.jsonl */
static size_t g_want_len;
static char g_small[4096];

/* g_small, and g_want from `ctxc fmt`. */
static void want_small(void) {
    run_t r;
    data_path(g_small, sizeof g_small, "cli_small.jsonl");
    run_into(&r, g_out2, NULL, "fmt", g_small, (const char *)NULL);
    assert_int_equal(r.status, 0);
    assert_true(r.out_len < sizeof g_want);
    memcpy(g_want, r.out, r.out_len);
    g_want_len = r.out_len;
}

/* `ctxc compress SRC` with a limit that keeps every entry (so the output
 * is the canonical JSONL), to `-o out`. */
#define COMPRESS_TO(r, src, out)                                               \
    RUN((r), "compress", (src), "--strategy", "top-down-truncation",           \
        "--context-limit", "100000", "-o", (out))

static void assert_ok(const run_t *r) {
    if (r->status != 0) {
        fail_msg("exit %d, stderr: %s", r->status, r->err);
    }
}

/* A symbolic link or a file planted at the old fixed temp name OUT.tmp is
 * neither followed nor destroyed; OUT becomes a regular file. */
static void test_output_planted_temp_is_left_alone(void **state) {
    (void)state;
    run_t r;
    fresh_dir();
    want_small();
    write_text(in_dir("victim"), "secret\n", 7);
    assert_int_equal(symlink("victim", in_dir("out.jsonl.tmp")), 0);
    write_text(in_dir("out2.jsonl.tmp"), "my notes\n", 9);
    COMPRESS_TO(&r, g_small, in_dir("out.jsonl"));
    assert_ok(&r);
    assert_file_is(in_dir("victim"), "secret\n", 7);
    assert_link_to(in_dir("out.jsonl.tmp"), "victim");
    assert_file_is(in_dir("out.jsonl"), g_want, g_want_len);
    COMPRESS_TO(&r, g_small, in_dir("out2.jsonl"));
    assert_ok(&r);
    assert_file_is(in_dir("out2.jsonl.tmp"), "my notes\n", 9);
    assert_file_is(in_dir("out2.jsonl"), g_want, g_want_len);
    assert_int_equal(dir_count(g_dir), 5); /* no temporary file left */
    drop_dir();
}

/* /save goes through the same writer. */
static void test_repl_save_planted_temp_is_left_alone(void **state) {
    (void)state;
    char script[256], text[700];
    run_t r;
    fresh_dir();
    want_small();
    write_text(in_dir("victim"), "secret\n", 7);
    assert_int_equal(symlink("victim", in_dir("saved.jsonl.tmp")), 0);
    snprintf(text, sizeof text, "/save %s\n", in_dir("saved.jsonl"));
    write_temp(script, sizeof script, text, strlen(text));
    RUN_STDIN(&r, script, "repl", "--history", g_small);
    unlink(script);
    assert_ok(&r);
    assert_non_null(strstr(r.out, "saved 8 entries"));
    assert_file_is(in_dir("victim"), "secret\n", 7);
    assert_link_to(in_dir("saved.jsonl.tmp"), "victim");
    assert_file_is(in_dir("saved.jsonl"), g_want, g_want_len);
    assert_int_equal(mode_bits(in_dir("saved.jsonl")), 0600u);
    drop_dir();
}

/* A new OUT is 0600; a replaced OUT keeps its mode (also when it is the
 * input itself). */
static void test_output_mode(void **state) {
    (void)state;
    run_t r;
    mode_t old_mask = umask(022);
    fresh_dir();
    want_small();
    COMPRESS_TO(&r, g_small, in_dir("new.jsonl"));
    assert_ok(&r);
    assert_int_equal(mode_bits(in_dir("new.jsonl")), 0600u);
    write_text(in_dir("self.jsonl"), g_want, g_want_len);
    assert_int_equal(chmod(in_dir("self.jsonl"), 0600), 0);
    COMPRESS_TO(&r, in_dir("self.jsonl"), in_dir("self.jsonl"));
    assert_ok(&r);
    assert_int_equal(mode_bits(in_dir("self.jsonl")), 0600u);
    assert_file_is(in_dir("self.jsonl"), g_want, g_want_len);
    write_text(in_dir("shared.jsonl"), "old\n", 4);
    assert_int_equal(chmod(in_dir("shared.jsonl"), 0640), 0);
    COMPRESS_TO(&r, g_small, in_dir("shared.jsonl"));
    assert_ok(&r);
    assert_int_equal(mode_bits(in_dir("shared.jsonl")), 0640u);
    assert_int_equal(dir_count(g_dir), 3);
    drop_dir();
    umask(old_mask);
}

/* A failed write leaves OUT as it was and no temporary file behind. */
static void test_output_failure_leaves_no_trace(void **state) {
    (void)state;
    run_t r;
    fresh_dir();
    want_small();
    write_text(in_dir("out.jsonl"), "old\n", 4);
    g_fsize_limit = 300; /* the history is 1313 bytes */
    COMPRESS_TO(&r, g_small, in_dir("out.jsonl"));
    g_fsize_limit = 0;
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "out.jsonl: write error"));
    assert_file_is(in_dir("out.jsonl"), "old\n", 4);
    assert_int_equal(dir_count(g_dir), 1);
    drop_dir();
}

/* Reads what is waiting in a non-blocking FIFO. */
static size_t drain(int fd, char *buf, size_t cap) {
    size_t n = 0;
    for (;;) {
        ssize_t got = read(fd, buf + n, cap - n);
        if (got <= 0) {
            break;
        }
        n += (size_t)got;
    }
    return n;
}

/* -o onto a FIFO (or a link to one) writes into it: the reader gets the
 * history and the FIFO stays. */
static void test_output_to_a_fifo(void **state) {
    (void)state;
    run_t r;
    fresh_dir();
    want_small();
    assert_int_equal(mkfifo(in_dir("pipe"), 0600), 0);
    assert_int_equal(symlink("pipe", in_dir("link")), 0);
    int rd = open(in_dir("pipe"), O_RDONLY | O_NONBLOCK);
    assert_true(rd >= 0);
    COMPRESS_TO(&r, g_small, in_dir("pipe"));
    assert_ok(&r);
    size_t n = drain(rd, g_file, OUT_CAP);
    assert_bytes_equal(g_file, n, g_want, g_want_len);
    assert_int_equal(lstat_type(in_dir("pipe")), S_IFIFO);
    COMPRESS_TO(&r, g_small, in_dir("link"));
    assert_ok(&r);
    n = drain(rd, g_file, OUT_CAP);
    assert_bytes_equal(g_file, n, g_want, g_want_len);
    assert_link_to(in_dir("link"), "pipe");
    assert_int_equal(lstat_type(in_dir("pipe")), S_IFIFO);
    close(rd);
    assert_int_equal(dir_count(g_dir), 2);
    drop_dir();
}

/* -o -, and a link to the descriptor of stdout, write to stdout. */
static void test_output_to_stdout(void **state) {
    (void)state;
    run_t r;
    fresh_dir();
    want_small();
    assert_int_equal(symlink("/proc/self/fd/1", in_dir("to-stdout")), 0);
    COMPRESS_TO(&r, g_small, in_dir("to-stdout"));
    assert_ok(&r);
    assert_bytes_equal(r.out, r.out_len, g_want, g_want_len);
    assert_link_to(in_dir("to-stdout"), "/proc/self/fd/1");
    g_child_dir = g_dir;
    COMPRESS_TO(&r, g_small, "-");
    g_child_dir = NULL;
    assert_ok(&r);
    assert_bytes_equal(r.out, r.out_len, g_want, g_want_len);
    assert_int_equal(dir_count(g_dir), 1); /* no file named "-" */
    drop_dir();
}

/* A character device stays one (as root: a copy of /dev/null made with
 * mknod; skipped when mknod is not allowed). */
static void test_output_to_a_device(void **state) {
    (void)state;
    run_t r;
    fresh_dir();
    want_small();
    if (mknod(in_dir("null"), S_IFCHR | 0666, makedev(1, 3)) == 0) {
        COMPRESS_TO(&r, g_small, in_dir("null"));
        assert_ok(&r);
        assert_int_equal(lstat_type(in_dir("null")), S_IFCHR);
        assert_int_equal(dir_count(g_dir), 1);
    }
    drop_dir();
}

/* A link to a regular file: the file is replaced (mode kept) in its own
 * directory and the link stays; a dangling link or a directory is
 * refused. */
static void test_output_through_a_link(void **state) {
    (void)state;
    run_t r;
    fresh_dir();
    want_small();
    assert_int_equal(mkdir(in_dir("sub"), 0700), 0);
    write_text(in_dir("sub/real.jsonl"), "old\n", 4);
    assert_int_equal(chmod(in_dir("sub/real.jsonl"), 0640), 0);
    assert_int_equal(symlink("sub/real.jsonl", in_dir("l.jsonl")), 0);
    COMPRESS_TO(&r, g_small, in_dir("l.jsonl"));
    assert_ok(&r);
    assert_link_to(in_dir("l.jsonl"), "sub/real.jsonl");
    assert_file_is(in_dir("sub/real.jsonl"), g_want, g_want_len);
    assert_int_equal(mode_bits(in_dir("sub/real.jsonl")), 0640u);
    assert_int_equal(dir_count(in_dir("sub")), 1);

    assert_int_equal(symlink("nowhere/x.jsonl", in_dir("d.jsonl")), 0);
    COMPRESS_TO(&r, g_small, in_dir("d.jsonl"));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "d.jsonl: a symbolic link to a file that "
                                  "cannot be reached"));
    assert_link_to(in_dir("d.jsonl"), "nowhere/x.jsonl");

    COMPRESS_TO(&r, g_small, in_dir("sub"));
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "is a directory"));
    assert_int_equal(dir_count(g_dir), 3);
    assert_int_equal(dir_count(in_dir("sub")), 1);
    drop_dir();
}

/* --- A FIFO in the settings folder ------------------------------------- */

static void test_fifo_in_the_settings_folder(void **state) {
    (void)state;
    char path[600], script[256];
    run_t r;
    want_small();
    fresh_home();
    put_home_file("profiles/.keep", "");
    snprintf(path, sizeof path, "%s/settings.json", g_home);
    assert_int_equal(mkfifo(path, 0600), 0);
    snprintf(path, sizeof path, "%s/profiles/p.json", g_home);
    assert_int_equal(mkfifo(path, 0600), 0);

    RUN(&r, "compress", g_small, "--strategy", "top-down-truncation",
        "--context-limit", "100000");
    assert_ok(&r);
    assert_non_null(
        strstr(r.err, "settings.json: not a regular file (a FIFO)"));
    assert_bytes_equal(r.out, r.out_len, g_want, g_want_len);

    RUN(&r, "compress", g_small, "--profile", "p");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "profiles/p.json: not a regular file"));

    static const char text[] = "/profile load p\n/stats\n";
    write_temp(script, sizeof script, text, sizeof text - 1);
    RUN_STDIN(&r, script, "repl");
    unlink(script);
    assert_int_equal(r.status, 1); /* the /profile load line failed */
    assert_non_null(strstr(r.err, "profiles/p.json: not a regular file"));
    assert_non_null(strstr(r.out, "entries 0"));
    drop_home();
}

/* --- REPL lines ---------------------------------------------------------- */

static size_t count_of(const char *hay, const char *needle) {
    size_t n = 0;
    for (const char *p = strstr(hay, needle); p != NULL;
         p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

/* A line over 65535 bytes is one error and nothing of it runs (not even a
 * command in its tail); a NUL byte is an error; 65535 bytes is one entry. */
static void test_repl_long_lines(void **state) {
    (void)state;
    static char text[300000];
    char script[256];
    size_t n = 0;
    memset(text + n, 'a', 65535);
    n += 65535;
    n += (size_t)sprintf(text + n, "/set context-limit 999\n");
    memset(text + n, 'b', 70000);
    n += 70000;
    text[n++] = '\n';
    memcpy(text + n, "hello\0world\n", 12);
    n += 12;
    memset(text + n, 'c', 65535);
    n += 65535;
    n += (size_t)sprintf(text + n, "\n/stats\n");
    write_temp(script, sizeof script, text, n);
    run_t r;
    RUN_STDIN(&r, script, "repl");
    unlink(script);
    assert_int_equal(r.status, 1); /* lines failed */
    assert_int_equal(count_of(r.err, "error: line longer than 65535 bytes"), 2);
    assert_int_equal(count_of(r.err, "error: line contains a NUL byte"), 1);
    assert_null(strstr(r.out, "999"));
    /* only the c line: one word, 65535 code units -> 16384 tokens */
    assert_non_null(strstr(r.out, "entries 1, tokens 16384\n"));
    assert_non_null(strstr(r.out, "context-limit not set"));
}

/* Types n copies of c into the terminal, reading (and dropping) the echo
 * as it comes so that neither side blocks. */
static void pty_type_many(int m, char c, size_t n) {
    static char chunk[256];
    static char sink[4096];
    memset(chunk, c, sizeof chunk);
    while (n > 0) {
        size_t k = n < sizeof chunk ? n : sizeof chunk;
        struct pollfd p[1] = {{m, POLLIN | POLLOUT, 0}};
        assert_true(poll(p, 1, 10000) > 0);
        if (p[0].revents & POLLIN) {
            assert_true(read(m, sink, sizeof sink) > 0);
        }
        if (p[0].revents & POLLOUT) {
            ssize_t w = write(m, chunk, k);
            assert_true(w > 0);
            n -= (size_t)w;
        }
    }
}

/* Waits until the line editor reads the keyboard itself (a completion
 * comes back), then empties the line: what is typed next goes to it, not
 * to the terminal's own line buffer. */
static void pty_sync_editor(int m) {
    pty_type(m, "/sta\t");
    pty_expect(m, "ts ");
    pty_type(m, "\x01\x0b"); /* ^A ^K: start of line, kill to the end */
}

/* On a terminal too a line is one entry, never cut, and a line over
 * 65535 bytes is one error with nothing of it run. */
static void test_repl_terminal_long_line(void **state) {
    (void)state;
    const char *args[] = {"ctxc", "repl", NULL};
    pid_t pid;
    int m = pty_start(&pid, args);
    pty_expect(m, "ctxc> ");
    pty_sync_editor(m);
    pty_type_many(m, 'a', 9000);
    pty_type(m, "\r");
    pty_expect(m, "ctxc> ");
    pty_sync_editor(m);
    pty_type_many(m, 'b', 65535);
    pty_type(m, "/set context-limit 999\r");
    pty_expect(m, "error: line longer than 65535 bytes");
    pty_type(m, "/stats\r");
    /* only the first line: one word, 9000 code units -> 2250 tokens */
    pty_expect(m, "entries 1, tokens 2250");
    pty_expect(m, "context-limit not set");
    pty_finish(m, pid);
}

/* --- Output errors ------------------------------------------------------- */

static void assert_write_error(const run_t *r, const char *what) {
    if (r->status != 1 || strstr(r->err, "stdout: write error") == NULL) {
        fail_msg("%s onto /dev/full: want exit 1 and a write error; got exit "
                 "%d, stderr: %s",
                 what, r->status, r->err);
    }
}

/* Every command whose stdout is /dev/full says so and exits 1. */
static void test_output_errors_are_reported(void **state) {
    (void)state;
    char script[256];
    run_t r;
    want_small();
    fresh_home();
    g_stdout_path = "/dev/full";
    RUN(&r, "--help");
    assert_write_error(&r, "--help");
    RUN(&r, "--version");
    assert_write_error(&r, "--version");
    RUN(&r, "stats", g_small);
    assert_write_error(&r, "stats");
    RUN(&r, "fmt", g_small);
    assert_write_error(&r, "fmt");
    RUN(&r, "compress", g_small, "--strategy", "top-down-truncation",
        "--context-limit", "100000");
    assert_write_error(&r, "compress");
    RUN(&r, "prompts", "show", "middle-out");
    assert_write_error(&r, "prompts show");
    RUN(&r, "prompts", "list");
    assert_write_error(&r, "prompts list");
    RUN(&r, "prompts", "install");
    assert_write_error(&r, "prompts install");
    RUN(&r, "prompts", "--help");
    assert_write_error(&r, "prompts --help");
    static const char text[] = "/stats\n";
    write_temp(script, sizeof script, text, sizeof text - 1);
    RUN_STDIN(&r, script, "repl");
    unlink(script);
    assert_write_error(&r, "repl");
    g_stdout_path = NULL;
    drop_home();
}

/* http-get prints network bytes for a person: control characters in
 * header values and the body are shown (^[, ^G, <U+009B>, ^?), never
 * written raw, even when stdout is not a terminal. */
static void test_http_get_shows_controls(void **state) {
    (void)state;
    static const char body[] = "x\x1b[2Jy\xc2\x9b"
                               "z\x7f!";
    char answer[512];
    int n = snprintf(answer, sizeof answer,
                     "HTTP/1.1 200 OK\r\nX-Evil: a\x1b]0;pwned\x07"
                     "b\r\nContent-Type: text/plain\r\nContent-Length: "
                     "%zu\r\nConnection: close\r\n\r\n%s",
                     strlen(body), body);
    uint16_t port;
    pid_t srv = mini_serve(answer, (size_t)n, 1, &port);
    char url[64];
    snprintf(url, sizeof url, "http://127.0.0.1:%u/", (unsigned)port);
    run_t r;
    RUN(&r, "http-get", url);
    mini_stop(srv);
    assert_int_equal(r.status, 0);
    if (strstr(r.out, "X-Evil: a^[]0;pwned^Gb\n") == NULL ||
        strstr(r.out, "\nx^[[2Jy<U+009B>z^?!\n") == NULL) {
        fail_msg("not neutralised:\n%s", r.out);
    }
    assert_null(memchr(r.out, 0x1b, r.out_len));
    assert_null(strstr(r.out, "\xc2\x9b"));
}

/* /pin N and /unpin N (issue 28): the entry and its tool pair are pinned,
 * kept through a compression, saved, and shown by stats --entries. */
static void test_repl_pin_scripted(void **state) {
    (void)state;
    char script[256], hist[300], example[512];
    static const char text[] =
        "/pin 1\n"
        "/pin 1\n"
        "/pin nope\n"
        "/pin 9999\n"
        "/set compression.strategy top-down-truncation\n"
        "/set context-limit 3000\n"
        "/compress\n"
        "/save\n";
    snprintf(example, sizeof example,
             "%s/boards/host/examples/coding-session.jsonl", CTXC_SOURCE_DIR);
    fresh_home();
    write_temp(script, sizeof script, text, sizeof text - 1);
    snprintf(hist, sizeof hist, "%s/history.jsonl", g_home);
    run_t r;
    char cmd[1600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s' && cp '%s' '%s'", g_home, example,
             hist);
    assert_int_equal(system(cmd), 0);
    RUN_STDIN(&r, script, "repl", "--history", hist);
    assert_int_equal(r.status, 1); /* a script with failed lines */
    /* entry 1 is a call: its response (2) is pinned with it */
    assert_non_null(strstr(r.out, "pinned: 1 2 (2 of 87 entries pinned)"));
    assert_non_null(strstr(r.out, "pinned: nothing changed"));
    assert_non_null(strstr(r.err, "error: /pin needs an entry index"));
    assert_non_null(strstr(r.err, "entry 9999 does not exist"));
    assert_non_null(
        strstr(r.out, "compressed with top-down-truncation: 87 -> "));
    RUN(&r, "stats", hist, "--entries");
    assert_int_equal(r.status, 0);
    /* the pair leads the truncated history, still pinned */
    const char *lines = strstr(r.out, "\n0 ");
    assert_non_null(lines);
    assert_true(strncmp(lines, "\n0 ai 99 pinned\n1 tool 315 pinned\n", 34) ==
                0);
    unlink(script);
    drop_home();
}

/* Tab completes /pin and /unpin and the entries they would change. */
static void test_repl_pin_completion(void **state) {
    (void)state;
    char example[512];
    fresh_home();
    home_example("agent.jsonl", example, sizeof example);
    const char *args[] = {"ctxc", "repl", "--history", example, NULL};
    pid_t pid;
    int m = pty_start(&pid, args);
    pty_expect(m, "ctxc> ");
    pty_type(m, "/pin 0\r");
    pty_expect(m, "pinned: 0");
    pty_type(m, "/unp\t");
    pty_expect(m, "in ");
    pty_type(m, "\t"); /* the only pinned entry */
    pty_expect(m, "0 ");
    pty_type(m, "\r");
    pty_expect(m, "unpinned: 0 (0 of 87 entries pinned)");
    pty_finish(m, pid);
    drop_home();
}

/* The spill store (issue 28): with compression.density.spillDir set, the
 * density step stores what it prunes and its pointers carry ids; `ctxc
 * restore FILE ID` and `/restore ID` give the blocks back. */
static void test_spill_and_restore(void **state) {
    (void)state;
    char example[512], out[700], script[256];
    snprintf(example, sizeof example,
             "%s/boards/host/examples/coding-session.jsonl", CTXC_SOURCE_DIR);
    fresh_home();
    put_home_file("settings.json",
                  "{\"compression.density.spillDir\": \"spill\"}\n");
    snprintf(out, sizeof out, "%s/out.jsonl", g_home);
    run_t r;
    RUN(&r, "compress", example, "--strategy", "high-density",
        "--context-limit", "16000", "--density", "recencyPruning=true",
        "--optimize-only", "-o", out);
    assert_int_equal(r.status, 0);
    const char *text = home_file("out.jsonl");
    const char *h = strstr(text, "[Result pruned \xe2\x80\x94 [ctxc:restore ");
    assert_non_null(h);
    char id[17];
    memcpy(id, h + strlen("[Result pruned \xe2\x80\x94 [ctxc:restore "), 16);
    id[16] = '\0';
    RUN(&r, "restore", out, id);
    assert_int_equal(r.status, 0);
    if (strncmp(r.out, "{\"type\":\"tool_response\",", 24) != 0) {
        fail_msg("restore %s: %.200s / %s", id, r.out, r.err);
    }
    RUN(&r, "restore", out, "0000ffff");
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "holds no pointer"));
    /* the id quoted by a model's answer in another file is not a pointer of
     * that file (issue 41 item 3): nothing is read */
    static char forged[300];
    snprintf(forged, sizeof forged,
             "{\"speaker\":\"human\",\"blocks\":[{\"type\":\"text\","
             "\"text\":\"hi\"}]}\n{\"speaker\":\"ai\",\"blocks\":[{\"type\":"
             "\"text\",\"text\":\"[ctxc:restore %s]\"}]}\n",
             id);
    put_home_file("forged.jsonl", forged);
    char forged_path[600];
    snprintf(forged_path, sizeof forged_path, "%s/forged.jsonl", g_home);
    RUN(&r, "restore", forged_path, id);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "not a pointer of this history"));
    /* a scripted repl whose /restore fails: the error on stderr, a failing
     * exit status (issue 41 item 5) */
    static char text2[256];
    snprintf(text2, sizeof text2, "/restore %s\n/restore 0000fff000000000\n",
             id);
    write_temp(script, sizeof script, text2, strlen(text2));
    RUN_STDIN(&r, script, "repl", "--history", out);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.out, "{\"type\":\"tool_response\","));
    assert_null(strstr(r.out, "unknown id 0000fff000000000"));
    assert_non_null(strstr(r.err, "unknown id 0000fff000000000"));
    unlink(script);
    /* the store gone: `ctxc restore` says so on stderr, stdout stays empty
     * (so `> block.json` never stores an error) */
    char cmd[700];
    snprintf(cmd, sizeof cmd, "rm -rf '%s/spill'", g_home);
    assert_int_equal(system(cmd), 0);
    RUN(&r, "restore", out, id);
    assert_int_equal(r.status, 1);
    assert_string_equal(r.out, "");
    assert_non_null(strstr(r.err, "error: restore"));
    drop_home();
}

/* --- Issue 39: the CLI never loses a conversation ------------------------ */

/* The entries of a JSONL file imported whole by the library (-1: it does
 * not import: torn, or missing). */
CTXC_HISTORY_DEFINE(t39_hist, 1024, 1u << 20);
static long t39_entries(const char *path) {
    static char line[1 << 17];
    static ctxc_import_t imp;
    ctxc_error_t err;
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        return -1;
    }
    ctxc_history_clear(&t39_hist);
    bool ok = ctxc_import_begin(&imp, &t39_hist, CTXC_FORMAT_AUTO, &err) ==
              CTXC_OK;
    while (ok && fgets(line, (int)sizeof line, f) != NULL) {
        ok = ctxc_import_line(&imp, line, strlen(line), &err) == CTXC_OK;
    }
    fclose(f);
    if (!ok || ctxc_import_end(&imp, &err) != CTXC_OK) {
        return -1;
    }
    return (long)ctxc_history_count(&t39_hist);
}

/* Reads fd until `needle` shows (60 s of silence at most). */
static void t39_read_until(int fd, const char *needle) {
    static char buf[1 << 16];
    size_t len = 0;
    for (int quiet = 0; quiet < 600;) {
        buf[len] = '\0';
        if (strstr(buf, needle) != NULL) {
            return;
        }
        if (len > sizeof buf / 2) {
            memmove(buf, buf + len - 256, 256);
            len = 256;
        }
        struct pollfd p = {fd, POLLIN, 0};
        int r = poll(&p, 1, 100);
        quiet += r > 0 ? 0 : 1;
        if (r > 0) {
            ssize_t n = read(fd, buf + len, sizeof buf - 1 - len);
            if (n <= 0) {
                break;
            }
            len += (size_t)n;
        }
    }
    fail_msg("never showed '%s'; got: %s", needle, buf);
}

/* `ctxc repl --history FILE` with stdin and stdout on pipes. */
static pid_t t39_spawn(const char *hist, int *to, int *from) {
    int in[2], out[2];
    assert_int_equal(pipe(in), 0);
    assert_int_equal(pipe(out), 0);
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        int nul = open("/dev/null", O_WRONLY);
        if (nul < 0 || dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0 ||
            dup2(nul, 2) < 0) {
            _exit(126);
        }
        close(in[1]);
        close(out[0]);
        alarm(300);
        execl(CTXC_CLI_PATH, "ctxc", "repl", "--history", hist,
              (char *)NULL);
        _exit(127);
    }
    close(in[0]);
    close(out[1]);
    *to = in[1];
    *from = out[0];
    return pid;
}

/* (1) Saved as it happens: each line is in FILE before the next is read
 * (/stats answering proves the line before it was taken); killed at
 * seeded random points (SIGKILL, during a line and its save), FILE always
 * imports whole, with the acknowledged lines and at most the one in
 * flight; SIGTERM at the prompt loses nothing. */
static void test_repl_saves_as_it_goes(void **state) {
    (void)state;
    char hist[600], line[128];
    unsigned seed = 39u;
    signal(SIGPIPE, SIG_IGN);
    fresh_home();
    for (int round = 0; round < 10; round++) {
        home_example("agent.jsonl", hist, sizeof hist);
        int to, from;
        pid_t pid = t39_spawn(hist, &to, &from);
        seed = seed * 1103515245u + 12345u;
        unsigned acked = (seed >> 16) % 4u;
        for (unsigned i = 0; i < acked; i++) {
            snprintf(line, sizeof line, "turn %d.%u\n/stats\n", round, i);
            assert_int_equal(write(to, line, strlen(line)),
                             (ssize_t)strlen(line));
            snprintf(line, sizeof line, "entries %u, ", 88u + i);
            t39_read_until(from, line);
            assert_int_equal(t39_entries(hist), 88 + (long)i);
        }
        bool term = round == 9;
        if (!term) { /* one more line, killed somewhere in it */
            snprintf(line, sizeof line, "turn %d.%u in flight\n", round,
                     acked);
            assert_int_equal(write(to, line, strlen(line)),
                             (ssize_t)strlen(line));
            seed = seed * 1103515245u + 12345u;
            for (volatile unsigned spin = (seed >> 16) % 200000u; spin > 0;
                 spin--) {
            }
        }
        assert_int_equal(kill(pid, term ? SIGTERM : SIGKILL), 0);
        int st = 0;
        assert_int_equal(waitpid(pid, &st, 0), pid);
        assert_true(WIFSIGNALED(st));
        close(to);
        close(from);
        long n = t39_entries(hist);
        if (n != 87 + (long)acked && !(n == 88 + (long)acked && !term)) {
            fail_msg("round %d: %ld entries in the file (want %u%s)", round,
                     n, 87u + acked, term ? "" : " or one more");
        }
    }
    drop_home();
}

/* `ctxc repl --history` over a copy of the shipped example in a fresh
 * home (its path in hist), on a pseudo-terminal at its first prompt. */
static int repl_on_example(char *hist, size_t cap, pid_t *pid) {
    fresh_home();
    home_example("agent.jsonl", hist, cap);
    const char *args[] = {"ctxc", "repl", "--history", hist, NULL};
    int m = pty_start(pid, args);
    pty_expect(m, "ctxc> ");
    return m;
}

/* (2) Nothing overwritten by surprise: the first write over the file the
 * session loaded keeps it as FILE.bak; leaving says what changed. */
static void test_repl_keeps_the_loaded_file(void **state) {
    (void)state;
    char hist[600], cmd[2000];
    pid_t pid;
    int m = repl_on_example(hist, sizeof hist, &pid);
    pty_type(m, "/set compression.strategy top-down-truncation\r");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/set context-limit 3000\r");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/compress\r");
    pty_expect(m, "compressed with top-down-truncation: 87 -> ");
    pty_expect(m, "ctxc> ");
    long n = t39_entries(hist);
    assert_true(n > 0 && n < 87); /* saved before the prompt */
    snprintf(cmd, sizeof cmd,
             "cmp -s '%s/boards/host/examples/coding-session.jsonl' '%s.bak'",
             CTXC_SOURCE_DIR, hist);
    assert_int_equal(system(cmd), 0);
    pty_type(m, "/quit\r");
    char want[2000];
    snprintf(want, sizeof want, "%s: %ld entries (compressed: 87 -> %ld "
             "entries); the file as loaded is kept as %s.bak",
             hist, n, n, hist);
    pty_expect(m, want);
    pty_expect(m, "keep them in settings.json? [y/N] ");
    pty_type(m, "\r");
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    close(m);
    assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    pty_screen_len = 0;
    drop_home();
}

/* (3) A /compress that fails changes nothing: high-density's density
 * step runs, the strategy fails (no context limit): the history is as it
 * was, density step included, and nothing is written. */
static void test_repl_failed_compress_changes_nothing(void **state) {
    (void)state;
    char hist[600], cmd[2000];
    pid_t pid;
    int m = repl_on_example(hist, sizeof hist, &pid);
    pty_type(m, "/set compression.strategy high-density\r");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/compress\r");
    pty_expect(m, "error: compress: ");
    pty_expect(m, "(the history is unchanged: the density step undone too)");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/stats\r");
    pty_expect(m, "entries 87, tokens 14068");
    pty_expect(m, "ctxc> ");
    pty_finish(m, pid);
    snprintf(cmd, sizeof cmd,
             "cmp -s '%s/boards/host/examples/coding-session.jsonl' '%s'",
             CTXC_SOURCE_DIR, hist);
    assert_int_equal(system(cmd), 0);
    snprintf(cmd, sizeof cmd, "test ! -e '%s.bak'", hist);
    assert_int_equal(system(cmd), 0);
    drop_home();
}

/* (4) A --history file that is there but cannot be read is an error (the
 * file and the reason named, exit 1), never a new history written over
 * it. Root reads any file, so: a socket (open: ENXIO) and a symbolic link
 * to itself (ELOOP); a 0000 file as well when not root. */
static void test_repl_unreadable_history(void **state) {
    (void)state;
    char script[256], path[700];
    static const char text[] = "a line\n/save\n";
    fresh_home();
    put_home_file("settings.json", "{}\n");
    write_temp(script, sizeof script, text, sizeof text - 1);
    run_t r;

    snprintf(path, sizeof path, "%s/sock.jsonl", g_home);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    assert_true(sfd >= 0);
    struct sockaddr_un sa;
    memset(&sa, 0, sizeof sa);
    sa.sun_family = AF_UNIX;
    assert_true(strlen(path) < sizeof sa.sun_path);
    memcpy(sa.sun_path, path, strlen(path));
    assert_int_equal(bind(sfd, (struct sockaddr *)&sa, sizeof sa), 0);
    RUN_STDIN(&r, script, "repl", "--history", path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, path));
    assert_non_null(strstr(r.err, strerror(ENXIO)));
    assert_non_null(strstr(r.err, "nothing written"));
    struct stat sb;
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    /* ctxc chat the same (issue 41 item 7): the file is kept as it is */
    RUN_STDIN(&r, script, "chat", "--history", path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, path));
    assert_non_null(strstr(r.err, "nothing written"));
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISSOCK(sb.st_mode));
    close(sfd);

    /* a directory opens but cannot be read: an error, nothing written */
    snprintf(path, sizeof path, "%s/dir.jsonl", g_home);
    assert_int_equal(mkdir(path, 0700), 0);
    RUN_STDIN(&r, script, "repl", "--history", path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, "nothing written"));
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISDIR(sb.st_mode));

    snprintf(path, sizeof path, "%s/loop.jsonl", g_home);
    assert_int_equal(symlink("loop.jsonl", path), 0);
    RUN_STDIN(&r, script, "repl", "--history", path);
    assert_int_equal(r.status, 1);
    assert_non_null(strstr(r.err, path));
    assert_non_null(strstr(r.err, strerror(ELOOP)));
    assert_int_equal(lstat(path, &sb), 0);
    assert_true(S_ISLNK(sb.st_mode));

    if (geteuid() != 0) {
        snprintf(path, sizeof path, "%s/locked.jsonl", g_home);
        put_home_file("locked.jsonl", "");
        assert_int_equal(chmod(path, 0), 0);
        RUN_STDIN(&r, script, "repl", "--history", path);
        assert_int_equal(r.status, 1);
        assert_non_null(strstr(r.err, strerror(EACCES)));
        assert_int_equal(stat(path, &sb), 0);
        assert_int_equal(sb.st_size, 0);
    }
    unlink(script);
    drop_home();
}

/* (5) `ctxc compress` whose result is still over the context limit: the
 * result is written, the table says by how much, exit status 3. */
static void test_compress_over_the_limit(void **state) {
    (void)state;
    char example[512], out[600];
    example_path(example, sizeof example);
    fresh_home();
    put_home_file("settings.json", "{}\n");
    snprintf(out, sizeof out, "%s/out.jsonl", g_home);
    run_t r;
    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "100", "-o", out);
    assert_int_equal(r.status, 3);
    assert_non_null(strstr(r.err, "over the limit: 116 tokens for a context "
                                  "limit of 100 (16 over; exit status 3)\n"));
    assert_int_equal(t39_entries(out), 3);
    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "5000", "-o", out);
    assert_int_equal(r.status, 0);
    assert_null(strstr(r.err, "over the limit"));
    drop_home();
}

/* --- Issue 39, items 6, 9 and 11 ----------------------------------------- */

/* Several lines as one message in a script: a line that starts with """
 * opens a block, one that ends with """ closes it; its lines (a /command
 * among them) are one human entry; """one line""" too; a block left open
 * at the end is an error, nothing of it added. */
static void test_repl_multiline_blocks(void **state) {
    (void)state;
    char script[256], hist[300];
    static const char text[] = "first\n"
                               "\"\"\"\n"
                               "/stats is text here\n"
                               "  indented\n"
                               "\"\"\"\n"
                               "\"\"\"one line\"\"\"\n"
                               "\"\"\"starts here\n"
                               "and ends here\"\"\"\n"
                               "/stats\n"
                               "\"\"\"left open\n"
                               "/quit\n";
    fresh_home();
    put_home_file("settings.json", "{}\n");
    write_temp(script, sizeof script, text, sizeof text - 1);
    snprintf(hist, sizeof hist, "%s/h.jsonl", g_home);
    run_t r;
    RUN_STDIN(&r, script, "repl", "--history", hist);
    assert_int_equal(r.status, 1); /* the block left open */
    assert_non_null(strstr(r.out, "entries 4, "));
    assert_null(strstr(r.out, "entries 5"));
    assert_non_null(strstr(r.err, "error: a \"\"\" block was not closed; "
                                  "nothing of it added"));
    const char *saved = home_file("h.jsonl");
    assert_non_null(strstr(saved, "\"text\":\"first\"}"));
    assert_non_null(strstr(saved, "\"text\":\"/stats is text here\\n  "
                                  "indented\"}"));
    assert_non_null(strstr(saved, "\"text\":\"one line\"}"));
    assert_non_null(strstr(saved, "\"text\":\"starts here\\nand ends "
                                  "here\"}"));
    assert_null(strstr(saved, "left open"));
    unlink(script);
    drop_home();
}

/* On a terminal: the bracketed paste mode is on at the prompt; a paste of
 * several lines (CR as the terminal sends them, UTF-8, a line that looks
 * like a command) goes into the line whole and Enter makes it one entry;
 * a """ block typed line by line shows the "... " prompt. */
static void test_repl_paste_on_a_terminal(void **state) {
    (void)state;
    char hist[300];
    fresh_home();
    put_home_file("settings.json", "{}\n");
    snprintf(hist, sizeof hist, "%s/p.jsonl", g_home);
    const char *args[] = {"ctxc", "repl", "--history", hist, NULL};
    pid_t pid;
    int m = pty_start(&pid, args);
    pty_expect(m, "\033[?2004h");
    pty_expect(m, "ctxc> ");
    pty_type(m, "\033[200~line one\rline two \xc3\xa9\r/three\r\033[201~");
    pty_expect(m, "/three");
    pty_type(m, " and more\r");
    pty_expect(m, "\033[?2004l"); /* off while the line is worked on */
    pty_expect(m, "ctxc> ");
    pty_type(m, "\"\"\"\r");
    pty_expect(m, "... ");
    pty_type(m, "typed\r");
    pty_expect(m, "... ");
    pty_type(m, "block\"\"\"\r");
    pty_expect(m, "ctxc> ");
    pty_type(m, "/stats\r");
    pty_expect(m, "entries 2, ");
    pty_finish(m, pid);
    const char *saved = home_file("p.jsonl");
    assert_non_null(strstr(saved, "\"text\":\"line one\\nline two \xc3\xa9"
                                  "\\n/three and more\"}"));
    assert_non_null(strstr(saved, "\"text\":\"typed\\nblock\"}"));
    drop_home();
}

/* /set compression.density.spillDir in a session takes effect at once (and
 * unset turns it off): the density step of /compress stores what it prunes
 * there and /restore gives it back, in the same session. */
static void test_repl_spill_set_in_session(void **state) {
    (void)state;
    char example[512], script[256];
    fresh_home();
    home_example("agent.jsonl", example, sizeof example);
    static const char text[] =
        "/set compression.strategy high-density\n"
        "/set compression.density.recencyPruning true\n"
        "/set context-limit 16000\n"
        "/set compression.density.spillDir spill-now\n"
        "/compress\n"
        "/set unset compression.density.spillDir\n";
    write_temp(script, sizeof script, text, sizeof text - 1);
    run_t r;
    RUN_STDIN(&r, script, "repl", "--history", example);
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.out, "spill store: "));
    assert_non_null(strstr(r.out, "/spill-now, budget 1048576 bytes"));
    assert_non_null(strstr(r.out, "spill store: off"));
    unlink(script);
    const char *saved = home_file("agent.jsonl");
    const char *h = strstr(saved, "[ctxc:restore ");
    assert_non_null(h);
    char id[17];
    memcpy(id, h + strlen("[ctxc:restore "), 16);
    id[16] = '\0';
    char idx[600];
    snprintf(idx, sizeof idx, "%s/spill-now/index", g_home);
    struct stat sb;
    assert_int_equal(stat(idx, &sb), 0);
    /* set again in a new session: /restore reads that store */
    char text2[200];
    snprintf(text2, sizeof text2,
             "/restore %s\n/set compression.density.spillDir spill-now\n"
             "/restore %s\n",
             id, id);
    write_temp(script, sizeof script, text2, strlen(text2));
    char agent[600]; /* the history that holds the pointer */
    snprintf(agent, sizeof agent, "%s/agent.jsonl", g_home);
    RUN_STDIN(&r, script, "repl", "--history", agent);
    assert_int_equal(r.status, 1); /* the first /restore: no store yet */
    assert_non_null(strstr(r.err, "no spill store is set"));
    assert_non_null(strstr(r.out, "{\"type\":\"tool_response\","));
    unlink(script);
    drop_home();
}

/* Issue 39 item 11: --opt=value; --density where it has no effect; the
 * repl's and chat's help name every option and command; an unknown
 * provider names the OpenAI-compatible way; one bad value of settings.json
 * costs only its key; compress -q. */
static void test_issue39_polish(void **state) {
    (void)state;
    char example[512];
    example_path(example, sizeof example);
    run_t r;
    RUN(&r, "compress", example, "--strategy=top-down-truncation",
        "--context-limit=32000", "-o", "/dev/null");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "context limit 32000"));
    RUN(&r, "compress", example, "--context-limt=32000");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "unknown option '--context-limt'; did you "
                                  "mean '--context-limit'?"));

    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "32000", "--density", "recencyPruning=true", "-o",
        "/dev/null");
    assert_int_equal(r.status, 0);
    assert_non_null(strstr(r.err, "note: --density has no effect: "
                                  "top-down-truncation has no density step"));

    static const char *const want[] = {"--verbose", "/pin", "/unpin",
                                       "/restore", "/quit", "\"\"\""};
    for (int c = 0; c < 2; c++) {
        RUN(&r, "help", c == 0 ? "repl" : "chat");
        assert_int_equal(r.status, 0);
        for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
            if (strstr(r.out, want[i]) == NULL) {
                fail_msg("help %s lacks %s", c == 0 ? "repl" : "chat",
                         want[i]);
            }
        }
    }

    RUN(&r, "chat", "--provider", "ollama", "--model", "llama3.2");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "is --provider openai --base-url URL"));
    RUN(&r, "compress", example, "--provider=ollama");
    assert_int_equal(r.status, EXIT_USAGE);
    assert_non_null(strstr(r.err, "is --provider openai --base-url URL"));

    char script[256];
    fresh_home();
    put_home_file("settings.json",
                  "{\"context-limit\": \"lots\", \"compression.strategy\": "
                  "\"top-down-truncation\", \"nosuch\": 1, "
                  "\"compression-threshold\": 0.5}\n");
    static const char st[] = "/stats\n/settings set model m\n/stats\n";
    write_temp(script, sizeof script, st, sizeof st - 1);
    RUN_STDIN(&r, script, "repl");
    assert_int_equal(r.status, 1); /* the refused /settings set */
    assert_non_null(strstr(r.err, "'context-limit' ignored (the rest of the "
                                  "file is used; fix or remove it)"));
    assert_non_null(strstr(r.err, "'nosuch' ignored"));
    assert_null(strstr(r.err, "'compression.strategy' ignored"));
    /* the rest kept, also after the refused write re-read the file */
    assert_int_equal(count_of(r.out, "strategy top-down-truncation, threshold "
                                     "0.500"),
                     2);
    assert_non_null(strstr(home_file("settings.json"), "\"lots\""));
    unlink(script);
    drop_home();

    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "32000", "-q", "-o", "/dev/null");
    assert_int_equal(r.status, 0);
    assert_int_equal(r.err_len, 0);
    RUN(&r, "compress", example, "--strategy", "top-down-truncation",
        "--context-limit", "100", "-q", "-o", "/dev/null");
    assert_int_equal(r.status, 3);
    assert_string_equal(r.err, "over the limit: 116 tokens for a context "
                               "limit of 100 (16 over; exit status 3)\n");
}

int main(void) {
    setenv("CTXC_HOME", NO_HOME, 1);
    if (getenv("CTXC_TEST_FILTER") != NULL) { /* e.g. "test_repl_*" */
        cmocka_set_test_filter(getenv("CTXC_TEST_FILTER"));
    }
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_repl_saves_as_it_goes),
        cmocka_unit_test(test_repl_keeps_the_loaded_file),
        cmocka_unit_test(test_repl_failed_compress_changes_nothing),
        cmocka_unit_test(test_repl_unreadable_history),
        cmocka_unit_test(test_compress_over_the_limit),
        cmocka_unit_test(test_repl_multiline_blocks),
        cmocka_unit_test(test_repl_paste_on_a_terminal),
        cmocka_unit_test(test_repl_spill_set_in_session),
        cmocka_unit_test(test_issue39_polish),
        cmocka_unit_test(test_repl_on_a_terminal),
        cmocka_unit_test(test_repl_scripted),
        cmocka_unit_test(test_repl_pin_scripted),
        cmocka_unit_test(test_repl_pin_completion),
        cmocka_unit_test(test_repl_script_exit_status),
        cmocka_unit_test(test_repl_terminal_errors_keep_exit_zero),
        cmocka_unit_test(test_spill_and_restore),
        cmocka_unit_test(test_compress_with_a_profile),
        cmocka_unit_test(test_prompts_as_a_new_user),
        cmocka_unit_test(test_prompts_list_writes_nothing),
        cmocka_unit_test(test_smaller_things),
        cmocka_unit_test(test_repl_completion),
        cmocka_unit_test(test_import_needs_the_whole_file),
        cmocka_unit_test(test_prompts_errors),
        cmocka_unit_test(test_compress_top_down),
        cmocka_unit_test(test_compress_high_density_to_a_file),
        cmocka_unit_test(test_compress_optimize_only),
        cmocka_unit_test(test_compress_errors),
        cmocka_unit_test(test_help),
        cmocka_unit_test(test_command_help),
        cmocka_unit_test(test_suggestions),
        cmocka_unit_test(test_version),
        cmocka_unit_test(test_usage_errors),
        cmocka_unit_test(test_stats_small),
        cmocka_unit_test(test_stats_entries),
        cmocka_unit_test(test_stats_unpaired),
        cmocka_unit_test(test_stats_response_before_call),
        cmocka_unit_test(test_stats_empty_file),
        cmocka_unit_test(test_fmt_canonical_is_unchanged),
        cmocka_unit_test(test_fmt_normalises),
        cmocka_unit_test(test_fmt_idempotent),
        cmocka_unit_test(test_fmt_crlf),
        cmocka_unit_test(test_stdin),
        cmocka_unit_test(test_bad_inputs),
        cmocka_unit_test(test_bad_utf8_bytes),
        cmocka_unit_test(test_nesting_limit),
        cmocka_unit_test(test_line_longer_than_arena),
        cmocka_unit_test(test_missing_file),
        cmocka_unit_test(test_example_session),
        cmocka_unit_test(test_output_planted_temp_is_left_alone),
        cmocka_unit_test(test_repl_save_planted_temp_is_left_alone),
        cmocka_unit_test(test_output_mode),
        cmocka_unit_test(test_output_failure_leaves_no_trace),
        cmocka_unit_test(test_output_to_a_fifo),
        cmocka_unit_test(test_output_to_stdout),
        cmocka_unit_test(test_output_to_a_device),
        cmocka_unit_test(test_output_through_a_link),
        cmocka_unit_test(test_fifo_in_the_settings_folder),
        cmocka_unit_test(test_repl_long_lines),
        cmocka_unit_test(test_repl_terminal_long_line),
        cmocka_unit_test(test_output_errors_are_reported),
        cmocka_unit_test(test_http_get_shows_controls),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
