/*
 * The /set, /settings and /profile commands and their completion
 * (REQ-CS-007, REQ-CS-008; REQ-CS-007.4/.5 completion of strategies and
 * profile names; REQ-CS-007.6 profiles): output through a write function,
 * errors that name valid values and suggest the closest key, nothing
 * changed or written on error, completion candidates for every context.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "fake_fs.h"
#include "support.h"

static mem_fs_t mfs;
static ctxc_fs_t fs;
static ctxc_settings_store_t st;
static t_dump_t out;
static ctxc_error_t err;

static int setup(void **state) {
    (void)state;
    memset(&mfs, 0, sizeof mfs);
    fs = mem_fs(&mfs);
    ctxc_settings_init(&st, &fs);
    out.len = 0;
    out.buf[0] = '\0';
    return 0;
}

/* Runs a command; returns its status, output in out.buf. */
static ctxc_status_t run(const char *line) {
    out.len = 0;
    out.buf[0] = '\0';
    memset(&err, 0, sizeof err);
    return ctxc_settings_command(&st, line, t_dump_write, &out, &err);
}

static void run_ok(const char *line) {
    if (run(line) != CTXC_OK) {
        fail_msg("%s: %s", line, err.message);
    }
}

static void assert_contains(const char *hay, const char *needle) {
    if (strstr(hay, needle) == NULL) {
        fail_msg("'%s' does not contain '%s'", hay, needle);
    }
}

static const char *val(const char *key) {
    static char buf[CTXC_CFG_SETTINGS_VALUE_BYTES + 16];
    ctxc_setting_id_t id;
    ctxc_setting_value_t v;
    assert_int_equal(ctxc_setting_find(key, &id, NULL), CTXC_OK);
    buf[0] = '\0';
    if (ctxc_settings_get(&st, id, &v) != CTXC_SOURCE_UNSET) {
        ctxc_setting_format(id, &v, buf, sizeof buf);
    }
    return buf;
}

/* ---- /set ---------------------------------------------------------------- */

/* REQ-CS-008: /set KEY VALUE and /set unset KEY act on the session layer. */
static void test_set_and_unset(void **state) {
    (void)state;
    run_ok("/set compression.strategy top-down-truncation");
    assert_string_equal(out.buf, "compression.strategy = top-down-truncation "
                                 "(session)\n");
    assert_string_equal(val("compression.strategy"), "top-down-truncation");
    run_ok("  /set\tcompression-threshold   0.75  ");
    assert_string_equal(out.buf, "compression-threshold = 0.75 (session)\n");
    run_ok("/set compression.strategy high-density\n");
    assert_string_equal(val("compression.strategy"), "high-density");

    run_ok("/set unset compression.strategy");
    assert_string_equal(out.buf, "compression.strategy unset; now middle-out "
                                 "(default)\n");
    run_ok("/set unset compression-threshold");
    assert_string_equal(out.buf, "compression-threshold unset; now (not set: "
                                 "the default of middle-out, 0.85, applies)\n");
    /* nothing was written to the settings file */
    assert_int_equal(mem_file_count(&mfs), 0);
}

/* REQ-CS-008: an unknown key changes nothing and suggests the closest key. */
static void test_set_unknown_key_suggests(void **state) {
    (void)state;
    assert_int_equal(run("/set compresion.strategy one-shot"),
                     CTXC_E_INVALID_ARG);
    assert_string_equal(err.message,
                        "unknown setting 'compresion.strategy'; did you mean "
                        "'compression.strategy'?");
    assert_string_equal(out.buf, "");
    assert_int_equal(st.ephemeral.set, 0);
    assert_int_equal(run("/set unset contxt-limit"), CTXC_E_INVALID_ARG);
    assert_contains(err.message, "did you mean 'context-limit'?");
    /* a key longer than any registered one */
    assert_int_equal(
        run("/set "
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            "aaaaaaaaaaaaaaaaaaaaaaaa 1"),
        CTXC_E_INVALID_ARG);
    assert_contains(err.message, "unknown setting 'aaaa");
}

/* REQ-CS-008: an invalid value changes nothing; the error names the valid
 * values or the range. */
static void test_set_invalid_value_names_the_allowed_values(void **state) {
    (void)state;
    run_ok("/set compression.strategy one-shot");
    assert_int_equal(run("/set compression.strategy fastest"),
                     CTXC_E_INVALID_ARG);
    assert_contains(err.message, "(allowed: middle-out, top-down-truncation, "
                                 "one-shot, high-density)");
    assert_string_equal(val("compression.strategy"), "one-shot");
    assert_int_equal(run("/set compression-preserve-threshold 1.5"),
                     CTXC_E_INVALID_ARG);
    assert_contains(err.message, "a number from 0 to 1");
    assert_int_equal(run("/set compression.density.fileDedupe yes"),
                     CTXC_E_INVALID_ARG);
    assert_contains(err.message, "(allowed: true, false)");
    assert_int_equal(run("/set compression.density.recencyRetention 0"),
                     CTXC_E_INVALID_ARG);
    assert_contains(err.message, ">= 1");
    /* a missing value names the allowed ones too */
    assert_int_equal(run("/set compression.strategy"), CTXC_E_INVALID_ARG);
    assert_contains(err.message, "allowed: middle-out");
    assert_string_equal(out.buf, "");
    /* a value longer than the store holds */
    char line[300];
    memset(line, 0, sizeof line);
    strcpy(line, "/set model ");
    memset(line + strlen(line), 'x', 200);
    assert_int_equal(run(line), CTXC_E_INVALID_ARG);
    assert_contains(err.message, "model: the value is longer than 127");
    /* a secret given as auth-key-name is neither stored nor echoed */
    assert_int_equal(run("/set auth-key-name sk-proj-0123456789abcdef"),
                     CTXC_E_INVALID_ARG);
    assert_null(strstr(err.message, "0123456789abcdef"));
    assert_string_equal(val("auth-key-name"), "");
}

static void test_usage_errors(void **state) {
    (void)state;
    static const struct {
        const char *line;
        const char *usage;
    } cases[] = {
        {"/set", "usage: /set KEY VALUE | /set unset KEY"},
        {"/set model a b", "usage: /set KEY VALUE"},
        {"/set unset", "usage: /set KEY VALUE | /set unset KEY"},
        {"/set unset model extra", "usage: /set"},
        {"/settings show", "usage: /settings | /settings set KEY VALUE"},
        {"/settings set model", "usage: /settings"},
        {"/settings unset", "usage: /settings"},
        {"/settings set a b c d e f g", "usage: /settings"},
        {"/profile", "usage: /profile save|load|delete NAME | /profile list"},
        {"/profile save", "usage: /profile"},
        {"/profile list x", "usage: /profile"},
        {"/profile rename a b", "unknown subcommand 'rename'; usage: /profile"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ctxc_status_t s = run(cases[i].line);
        if (s != CTXC_E_INVALID_ARG ||
            strstr(err.message, cases[i].usage) == NULL) {
            fail_msg("%s: %s '%s'", cases[i].line, ctxc_status_name(s),
                     err.message);
        }
        assert_string_equal(out.buf, "");
    }
    /* not one of these commands: CTXC_E_NOT_FOUND, so a caller can try its
     * own */
    assert_int_equal(run("/compress"), CTXC_E_NOT_FOUND);
    assert_string_equal(err.message, "unknown command '/compress' (settings "
                                     "commands: /set, /settings, /profile)");
    assert_int_equal(run("/sett"), CTXC_E_NOT_FOUND);
    assert_int_equal(run("hello there"), CTXC_E_NOT_FOUND);
    assert_contains(err.message, "commands start with /");
    assert_int_equal(run("   "), CTXC_E_NOT_FOUND);
    assert_int_equal(st.ephemeral.set, 0);
}

/* Notes after /set: a strategy name or profile that is not usable yet. */
static void test_set_notes(void **state) {
    (void)state;
    run_ok("/set compression.profile cheap");
    assert_string_equal(out.buf, "compression.profile = cheap (session)\n"
                                 "note: there is no saved profile 'cheap' yet; "
                                 "compression fails until it exists\n");
    mem_put(&mfs, "profiles/cheap.json", "{}");
    run_ok("/set compression.profile cheap");
    assert_string_equal(out.buf, "compression.profile = cheap (session)\n");
    assert_int_equal(run("/set compression.profile ../cheap"),
                     CTXC_E_INVALID_ARG);
    assert_contains(err.message, "compression.profile: profile name '../cheap' "
                                 "is not valid");
}

/* ---- /settings ----------------------------------------------------------- */

/* REQ-CS-008: /settings shows every setting by category; "Chat Compression"
 * lists the strategy with its allowed values, and the profile. */
static void test_settings_display(void **state) {
    (void)state;
    mem_put(&mfs, "settings.json",
            "{\"compression.strategy\": \"top-down-truncation\", "
            "\"context-limit\": 32000}");
    assert_int_equal(ctxc_settings_load(&st, NULL), CTXC_OK);
    run_ok("/set compression.strategy high-density");
    run_ok("/settings");
    assert_contains(out.buf, "settings file: settings.json\n");
    assert_contains(
        out.buf,
        "\nChat Compression\n"
        "  compression.strategy = high-density (session; settings file: "
        "top-down-truncation)\n"
        "      one of: middle-out, top-down-truncation, one-shot, "
        "high-density\n"
        "  compression.profile = (not set)\n"
        "      profile name: saved profile whose provider and model write the "
        "summaries (unset: the active provider)\n"
        "  compression.retries = 2 (default)\n"
        "      count: retries of a failed summary call (429, 5xx, timeouts, "
        "resets) on the same provider, after Retry-After\n"
        "  compression.factCheck = append (default)\n"
        "      one of: off, append, retry\n"
        "  compression-threshold = (not set: the default of high-density, "
        "0.85, applies)\n");
    assert_contains(out.buf, "  compression-preserve-threshold = 0.2 "
                             "(default)\n      0-1: ");
    assert_contains(out.buf, "\nContext\n  context-limit = 32000 (settings "
                             "file)\n");
    assert_contains(out.buf, "\nDensity\n  compression.density."
                             "readWritePruning = true (default)\n");
    assert_contains(out.buf, "\nProvider\n  provider = (not set)\n");
    /* groups appear once each, in table order */
    const char *cc = strstr(out.buf, "\nChat Compression\n");
    const char *ctx = strstr(out.buf, "\nContext\n");
    const char *den = strstr(out.buf, "\nDensity\n");
    const char *prov = strstr(out.buf, "\nProvider\n");
    assert_true(cc < ctx && ctx < den && den < prov);
    assert_null(strstr(cc + 1, "\nChat Compression\n"));
    /* displaying changes nothing */
    assert_string_equal(mem_get(&mfs, "settings.json"),
                        "{\"compression.strategy\": \"top-down-truncation\", "
                        "\"context-limit\": 32000}");
}

static void test_settings_display_of_an_unusable_file(void **state) {
    (void)state;
    mem_put(&mfs, "settings.json", "{\"context-limit\": -5}");
    assert_int_equal(ctxc_settings_load(&st, NULL), CTXC_E_PARSE);
    run_ok("/settings");
    assert_contains(out.buf,
                    "settings file: settings.json is unusable; changes to it "
                    "are refused until it is fixed or removed:\n"
                    "  settings.json: context-limit: '-5' is not a whole "
                    "number >= 1\n");
    assert_contains(out.buf, "  context-limit = (not set)\n");
    /* and /settings set refuses */
    assert_int_equal(run("/settings set context-limit 100"), CTXC_E_PARSE);
    assert_contains(err.message, "refusing to overwrite unusable "
                                 "settings.json: context-limit: '-5'");
    assert_string_equal(out.buf, "");
    assert_string_equal(mem_get(&mfs, "settings.json"),
                        "{\"context-limit\": -5}");
    /* without a filesystem */
    ctxc_settings_init(&st, NULL);
    run_ok("/settings");
    assert_contains(out.buf, "settings file: none (no filesystem)\n");
}

/* /settings set|unset change the persistent layer and save the file. */
static void test_settings_set_and_unset(void **state) {
    (void)state;
    run_ok("/settings set compression.strategy top-down-truncation");
    assert_string_equal(out.buf, "compression.strategy = top-down-truncation "
                                 "(saved to settings.json)\n");
    assert_string_equal(mem_get(&mfs, "settings.json"),
                        "{\n  \"compression.strategy\": "
                        "\"top-down-truncation\"\n}\n");
    run_ok("/set compression.strategy high-density");
    run_ok("/settings set compression.strategy one-shot");
    assert_string_equal(out.buf,
                        "compression.strategy = one-shot (saved to "
                        "settings.json)\n"
                        "note: the session value high-density is in force "
                        "over it (/set unset compression.strategy to use the "
                        "saved one)\n");
    assert_string_equal(val("compression.strategy"), "high-density");
    run_ok("/settings unset compression.strategy");
    assert_string_equal(out.buf, "compression.strategy is not in "
                                 "settings.json; now high-density (session)\n");
    assert_string_equal(mem_get(&mfs, "settings.json"), "{}\n");
    /* invalid: nothing written */
    assert_int_equal(run("/settings set compression.strategy nope"),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(run("/settings unset modle"), CTXC_E_INVALID_ARG);
    assert_contains(err.message, "did you mean 'model'?");
    assert_string_equal(mem_get(&mfs, "settings.json"), "{}\n");
}

/* ---- /profile ------------------------------------------------------------ */

/* REQ-CS-007.6: save, list, load (after a restart), delete. */
static void test_profile_commands(void **state) {
    (void)state;
    run_ok("/profile list");
    assert_string_equal(out.buf, "saved profiles:\n  (none; /profile save "
                                 "NAME saves the settings in force)\n");
    run_ok("/set compression.strategy top-down-truncation");
    run_ok("/set provider openai");
    run_ok("/profile save fast");
    assert_string_equal(out.buf, "profile 'fast' saved: 2 settings in "
                                 "profiles/fast.json\n");
    run_ok("/set model m");
    run_ok("/profile save b-one");
    assert_string_equal(out.buf, "profile 'b-one' saved: 3 settings in "
                                 "profiles/b-one.json\n");

    /* a restart: a new store over the same files */
    ctxc_settings_init(&st, &fs);
    assert_int_equal(ctxc_settings_load(&st, NULL), CTXC_OK);
    run_ok("/profile load fast");
    assert_string_equal(out.buf, "profile 'fast' loaded: 2 settings\n"
                                 "  compression.strategy = "
                                 "top-down-truncation\n"
                                 "  provider = openai\n");
    assert_string_equal(val("compression.strategy"), "top-down-truncation");
    run_ok("/profile list");
    assert_string_equal(out.buf, "saved profiles:\n  b-one\n  fast (loaded)\n");
    run_ok("/settings");
    assert_contains(out.buf, "profile loaded: fast\n");
    assert_contains(out.buf, "  compression.strategy = top-down-truncation "
                             "(profile fast)\n");

    assert_int_equal(run("/profile load nope"), CTXC_E_PROFILE_NOT_FOUND);
    assert_contains(err.message, "profile 'nope' not found");
    assert_int_equal(run("/profile load ../etc"), CTXC_E_INVALID_ARG);
    assert_int_equal(run("/profile save a/b"), CTXC_E_INVALID_ARG);
    assert_int_equal(
        run("/profile save 123456789012345678901234567890123456789"),
        CTXC_E_INVALID_ARG);
    assert_contains(err.message, "longer than 32 characters");
    assert_string_equal(out.buf, "");

    run_ok("/profile delete b-one");
    assert_string_equal(out.buf, "profile 'b-one' deleted\n");
    assert_null(mem_get(&mfs, "profiles/b-one.json"));
    assert_int_equal(run("/profile delete b-one"), CTXC_E_PROFILE_NOT_FOUND);
}

static void test_profile_save_notes_an_unusable_settings_file(void **state) {
    (void)state;
    mem_put(&mfs, "settings.json", "{oops");
    (void)ctxc_settings_load(&st, NULL);
    run_ok("/set model m");
    run_ok("/profile save p");
    assert_string_equal(out.buf,
                        "profile 'p' saved: 1 setting in profiles/p.json\n"
                        "note: settings.json is unusable; its values are not "
                        "in the profile\n");
}

/* A write function that fails: its status comes back. */
static ctxc_status_t failing_write(void *user, const char *data, size_t len) {
    (void)user;
    (void)data;
    (void)len;
    return CTXC_E_IO;
}

static void test_output_errors_propagate(void **state) {
    (void)state;
    assert_int_equal(
        ctxc_settings_command(&st, "/settings", failing_write, NULL, &err),
        CTXC_E_IO);
    assert_contains(err.message, "writing the command output failed");
    /* also when the whole output is one short line (written at the end);
     * the change itself is made */
    memset(&err, 0, sizeof err);
    assert_int_equal(ctxc_settings_command(&st, "/set context-limit 1000",
                                           failing_write, NULL, &err),
                     CTXC_E_IO);
    assert_contains(err.message, "writing the command output failed");
    assert_string_equal(val("context-limit"), "1000");
}

/* ---- completion ---------------------------------------------------------- */

typedef struct {
    char items[40][64];
    size_t n;
    size_t stop_after;
} cands_t;

static bool collect(void *user, const char *cand) {
    cands_t *c = user;
    assert_true(c->n < 40);
    snprintf(c->items[c->n++], sizeof c->items[0], "%s", cand);
    return c->stop_after == 0 || c->n < c->stop_after;
}

/* Completes `line`; checks the word start and the candidates (in order; a
 * NULL-terminated list). */
static void expect(const char *line, size_t start, const char *const *want) {
    cands_t got;
    memset(&got, 0, sizeof got);
    size_t ws = 9999;
    assert_int_equal(
        ctxc_settings_complete(&st, line, &ws, collect, &got, NULL), CTXC_OK);
    size_t n = 0;
    while (want[n] != NULL) {
        n++;
    }
    bool same = got.n == n && ws == start;
    for (size_t i = 0; same && i < n; i++) {
        same = strcmp(got.items[i], want[i]) == 0;
    }
    if (!same) {
        char list[2048] = "";
        for (size_t i = 0; i < got.n; i++) {
            strcat(list, got.items[i]);
            strcat(list, " ");
        }
        fail_msg("'%s': word start %zu (want %zu), got %zu: %s", line, ws,
                 start, got.n, list);
    }
}

#define W(...) ((const char *const[]){__VA_ARGS__, NULL})
#define NONE ((const char *const[]){NULL})

static void test_complete_commands(void **state) {
    (void)state;
    expect("", 0, W("/set", "/settings", "/profile"));
    expect("/", 0, W("/set", "/settings", "/profile"));
    expect("/se", 0, W("/set", "/settings"));
    expect("/sett", 0, W("/settings"));
    expect("  /p", 2, W("/profile"));
    expect("/x", 0, NONE);
    expect("hello", 0, NONE);
    expect("/settings ", 10, W("set", "unset"));
    expect("/settings u", 10, W("unset"));
    expect("/profile ", 9, W("save", "load", "list", "delete"));
    expect("/profile l", 9, W("load", "list"));
    expect("/compress ", 10, NONE);
}

/* The line ends at its first CR or LF, for the words and for the partial
 * word alike (found by fuzz_commands: "/settings \r..." used to complete
 * the command word instead of the word after it). */
static void test_complete_stops_at_a_line_end(void **state) {
    (void)state;
    expect("/settings \rjunk", 10, W("set", "unset"));
    expect("/settings \njunk", 10, W("set", "unset"));
    expect("/profile l\r x", 9, W("load", "list"));
    expect("/se\n/profile ", 0, W("/set", "/settings"));
}

/* Keys after /set, /set unset, /settings set|unset. */
static void test_complete_keys(void **state) {
    (void)state;
    const char *const *all = W(
        "compression.strategy", "compression.profile", "compression.retries",
        "compression.factCheck", "compression-threshold",
        "compression.prefetch-threshold", "compression.on-limit",
        "compression.failure-limit", "compression.cooldown-ms",
        "compression.entries-threshold", "compression.bytes-threshold",
        "compression.reserve-entries", "compression.reserve-bytes",
        "compression-preserve-threshold",
        "compression-top-preserve-threshold", "context-limit",
        "compression.density.readWritePruning",
        "compression.density.fileDedupe", "compression.density.recencyPruning",
        "compression.density.recencyRetention",
        "compression.density.vocabularies", "compression.density.readTools",
        "compression.density.writeTools", "compression.density.spillDir", "compression.density.spillBudget", "provider", "model", "base-url",
        "auth-key-name", "stream", "network.ca-file",
        "network.connect-timeout-ms", "network.read-timeout-ms",
        "network.call-deadline-ms");
    cands_t got;
    memset(&got, 0, sizeof got);
    assert_int_equal(
        ctxc_settings_complete(&st, "/set ", NULL, collect, &got, NULL),
        CTXC_OK);
    assert_int_equal(got.n, CTXC_SETTING_COUNT + 1);
    assert_string_equal(got.items[0], "unset");
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        assert_string_equal(got.items[i + 1], all[i]);
    }
    expect("/set compression.str", 5, W("compression.strategy"));
    expect("/set compression.", 5,
           W("compression.strategy", "compression.profile",
             "compression.retries", "compression.factCheck",
             "compression.prefetch-threshold", "compression.on-limit",
        "compression.failure-limit", "compression.cooldown-ms",
        "compression.entries-threshold", "compression.bytes-threshold",
        "compression.reserve-entries", "compression.reserve-bytes",
             "compression.density.readWritePruning",
             "compression.density.fileDedupe",
             "compression.density.recencyPruning",
             "compression.density.recencyRetention",
             "compression.density.vocabularies",
             "compression.density.readTools",
             "compression.density.writeTools", "compression.density.spillDir",
             "compression.density.spillBudget"));
    expect("/set un", 5, W("unset"));
    expect("/set unset con", 11, W("context-limit"));
    expect(
        "/settings set comp", 14,
        W("compression.strategy", "compression.profile", "compression.retries",
          "compression.factCheck", "compression-threshold",
          "compression.prefetch-threshold", "compression.on-limit",
        "compression.failure-limit", "compression.cooldown-ms",
        "compression.entries-threshold", "compression.bytes-threshold",
        "compression.reserve-entries", "compression.reserve-bytes",
          "compression-preserve-threshold",
          "compression-top-preserve-threshold",
          "compression.density.readWritePruning",
          "compression.density.fileDedupe",
          "compression.density.recencyPruning",
          "compression.density.recencyRetention",
          "compression.density.vocabularies", "compression.density.readTools",
          "compression.density.writeTools", "compression.density.spillDir",
          "compression.density.spillBudget"));
    expect("/settings unset mo", 16, W("model"));
    expect("/set zzz", 5, NONE);
}

/* REQ-CS-007.4: every registered strategy after /set compression.strategy;
 * true/false for booleans. */
static void test_complete_values(void **state) {
    (void)state;
    expect("/set compression.strategy ", 26,
           W("middle-out", "top-down-truncation", "one-shot", "high-density"));
    expect("/set compression.strategy h", 26, W("high-density"));
    expect("/set  compression.strategy   t", 29, W("top-down-truncation"));
    expect("/settings set compression.strategy o", 35, W("one-shot"));
    expect("/set compression.density.recencyPruning ", 40, W("true", "false"));
    expect("/set compression.density.recencyPruning f", 40, W("false"));
    expect("/set model ", 11, NONE);
    expect("/set context-limit ", 19, NONE);
    expect("/set compresion.strategy ", 25, NONE);
    expect("/set compression.strategy high-density ", 39, NONE);
    expect("/settings unset compression.strategy ", 37, NONE);
}

/* REQ-CS-007.5: saved profile names after /set compression.profile,
 * /profile load and /profile delete. */
static void test_complete_profile_names(void **state) {
    (void)state;
    expect("/profile load ", 14, NONE);
    mem_put(&mfs, "profiles/fast.json", "{}");
    mem_put(&mfs, "profiles/cheap.json", "{}");
    mem_put(&mfs, "profiles/careful.json", "{}");
    mem_put(&mfs, "profiles/cheap.json.tmp1", "{");
    expect("/profile load ", 14, W("careful", "cheap", "fast"));
    expect("/profile load c", 14, W("careful", "cheap"));
    expect("/profile delete f", 16, W("fast"));
    expect("/set compression.profile ", 25, W("careful", "cheap", "fast"));
    expect("/set compression.profile ch", 25, W("cheap"));
    expect("/settings set compression.profile ", 34,
           W("careful", "cheap", "fast"));
    expect("/profile save ", 14, NONE);
    expect("/profile load fast ", 19, NONE);
    /* the callback can stop the listing */
    cands_t got;
    memset(&got, 0, sizeof got);
    got.stop_after = 1;
    assert_int_equal(ctxc_settings_complete(&st, "/profile load ", NULL,
                                            collect, &got, NULL),
                     CTXC_OK);
    assert_int_equal(got.n, 1);
}

/* The new-user path of the issue, through the library: complete the key,
 * set a strategy, save a profile, restart, load it, the session's strategy
 * accessor returns it. */
static void test_new_user_path(void **state) {
    (void)state;
    cands_t got;
    memset(&got, 0, sizeof got);
    size_t ws = 0;
    assert_int_equal(ctxc_settings_complete(&st, "/set compression.str", &ws,
                                            collect, &got, NULL),
                     CTXC_OK);
    assert_int_equal(got.n, 1);
    char line[128];
    snprintf(line, sizeof line, "%.*s%s top-down-truncation", (int)ws,
             "/set compression.str", got.items[0]);
    run_ok(line);
    run_ok("/set context-limit 16000");
    run_ok("/profile save td");
    ctxc_settings_init(&st, &fs); /* restart */
    assert_int_equal(ctxc_settings_load(&st, NULL), CTXC_OK);
    run_ok("/profile load td");
    const ctxc_strategy_t *s = NULL;
#if CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
    assert_int_equal(ctxc_settings_strategy(&st, &s, NULL), CTXC_OK);
    assert_string_equal(s->name, "top-down-truncation");
#else
    assert_int_equal(ctxc_settings_strategy(&st, &s, NULL),
                     CTXC_E_UNKNOWN_STRATEGY);
#endif
    assert_int_equal(ctxc_settings_context_limit(&st), 16000);
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_set_and_unset, setup),
        cmocka_unit_test_setup(test_set_unknown_key_suggests, setup),
        cmocka_unit_test_setup(test_set_invalid_value_names_the_allowed_values,
                               setup),
        cmocka_unit_test_setup(test_usage_errors, setup),
        cmocka_unit_test_setup(test_set_notes, setup),
        cmocka_unit_test_setup(test_settings_display, setup),
        cmocka_unit_test_setup(test_settings_display_of_an_unusable_file,
                               setup),
        cmocka_unit_test_setup(test_settings_set_and_unset, setup),
        cmocka_unit_test_setup(test_profile_commands, setup),
        cmocka_unit_test_setup(
            test_profile_save_notes_an_unusable_settings_file, setup),
        cmocka_unit_test_setup(test_output_errors_propagate, setup),
        cmocka_unit_test_setup(test_complete_commands, setup),
        cmocka_unit_test_setup(test_complete_stops_at_a_line_end, setup),
        cmocka_unit_test_setup(test_complete_keys, setup),
        cmocka_unit_test_setup(test_complete_values, setup),
        cmocka_unit_test_setup(test_complete_profile_names, setup),
        cmocka_unit_test_setup(test_new_user_path, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
