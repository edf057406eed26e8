/*
 * The prompt store (REQ-CS-005, REQ-CS-006A.3, REQ-HD-010/011/012): the
 * built-in table generated from prompts/, safe path components for provider
 * and model names, the resolver order model -> provider -> base -> built-in
 * with empty names skipping levels, verbatim use, errors for unreadable and
 * missing files, the romfs port, and the installer (fills gaps, keeps user
 * edits, updates unedited copies, survives a failure at every step).
 *
 * Also built against the one-strategy library (only_td), where the
 * middle-out and one-shot prompts are left out of the build.
 */
#define _POSIX_C_SOURCE 200809L
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "ctxc/ctxc.h"
#include "ctxc/prompt.h"
#include "ctxc_romfs.h"
#include "fake_fs.h"

static mem_fs_t mem;
static char buf[32768];
static char scratch[65536];

static int setup(void **state) {
    (void)state;
    memset(&mem, 0, sizeof mem);
    return 0;
}

/* The bytes of prompts/<id>.md in the source tree ("" when missing). */
static const char *source_prompt(const char *id, size_t *len) {
    static char text[32768];
    char path[1024];
    snprintf(path, sizeof path, "%s/prompts/%s.md", CTXC_SOURCE_DIR, id);
    FILE *f = fopen(path, "rb");
    *len = 0;
    text[0] = '\0';
    if (f != NULL) {
        *len = fread(text, 1, sizeof text - 1, f);
        text[*len] = '\0';
        fclose(f);
    }
    return text;
}

static bool msg_has(const ctxc_error_t *err, const char *needle) {
    return strstr(ctxc_error_message(err), needle) != NULL;
}

/* ---- built-in table -------------------------------------------------------
 */

static void test_builtin_table_is_the_prompts_folder(void **state) {
    (void)state;
    assert_true(ctxc_prompt_builtin_count >= 2);
    assert_non_null(ctxc_prompt_builtin(CTXC_PROMPT_MIDDLE_OUT));
    assert_non_null(ctxc_prompt_builtin(CTXC_PROMPT_ONE_SHOT));
    assert_null(ctxc_prompt_builtin("compression/nope"));
    assert_null(ctxc_prompt_builtin(NULL));
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        assert_int_equal(ctxc_prompt_id_check(b->id, NULL), CTXC_OK);
        if (i > 0) {
            assert_true(strcmp(ctxc_prompt_builtins[i - 1].id, b->id) < 0);
        }
        size_t n;
        const char *src = source_prompt(b->id, &n);
        assert_true(n > 0);
        if (b->text != NULL) { /* byte for byte the shipped file */
            assert_int_equal(b->len, n);
            assert_memory_equal(b->text, src, n);
        }
    }
#if CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT
    assert_non_null(ctxc_prompt_builtin(CTXC_PROMPT_MIDDLE_OUT)->text);
#else
    assert_null(ctxc_prompt_builtin(CTXC_PROMPT_MIDDLE_OUT)->text);
#endif
}

/* REQ-CS-005 / REQ-HD-010..012: what the shipped prompts ask for. */
static void test_shipped_prompts_ask_for_the_snapshot(void **state) {
    (void)state;
    static const char *const sections[] = {
        "<state_snapshot>",    "<overall_goal>",    "<key_knowledge>",
        "<file_system_state>", "<recent_actions>",  "<current_plan>",
        "<task_context>",      "<user_directives>", "<errors_encountered>",
        "<code_references>",   "<scratchpad>",
    };
    const char *ids[] = {CTXC_PROMPT_MIDDLE_OUT, CTXC_PROMPT_ONE_SHOT};
    for (size_t i = 0; i < 2; i++) {
        size_t n;
        const char *text = source_prompt(ids[i], &n);
        for (size_t k = 0; k < sizeof sections / sizeof sections[0]; k++) {
            if (strstr(text, sections[k]) == NULL) {
                fail_msg("%s lacks %s", ids[i], sections[k]);
            }
        }
        /* an earlier snapshot is integrated, not dropped */
        assert_non_null(strstr(text, "may contain a <state_snapshot>"));
        assert_non_null(strstr(text, "Fold all of its"));
        for (size_t k = 0; k < n; k++) { /* our own ASCII text */
            assert_true((unsigned char)text[k] < 0x80u);
        }
    }
    size_t n;
    assert_non_null(
        strstr(source_prompt(CTXC_PROMPT_MIDDLE_OUT, &n), "MIDDLE"));
    assert_non_null(strstr(source_prompt(CTXC_PROMPT_ONE_SHOT, &n), "tail"));
}

/* ---- names -------------------------------------------------------------- */

static const char *comp(const char *name) {
    static char out[CTXC_PROMPT_COMPONENT_MAX + 1];
    size_t n = ctxc_prompt_component(name, out);
    assert_int_equal(n, strlen(out));
    return out;
}

static void test_component_sanitisation(void **state) {
    (void)state;
    assert_string_equal(comp("anthropic"), "anthropic");
    assert_string_equal(comp("Anthropic"), "anthropic");
    assert_string_equal(comp("claude-3.5_Sonnet"), "claude-3.5_sonnet");
    assert_string_equal(comp("gpt 4o"), "gpt-4o");
    assert_string_equal(comp("a/b"), "a-b");
    assert_string_equal(comp("a\\b"), "a-b");
    assert_string_equal(comp("../../etc/passwd"), "..-..-etc-passwd");
    assert_string_equal(comp("/etc/passwd"), "-etc-passwd");
    assert_string_equal(comp(".."), "--");
    assert_string_equal(comp("."), "-");
    assert_string_equal(comp("..."), "---");
    assert_string_equal(comp("C:x"), "c-x");
    assert_string_equal(comp("a\nb"), "a-b");
    /* one '-' per character: two-byte, three-byte, four-byte, invalid */
    assert_string_equal(comp("\xc3\x9c"
                             "ber"),
                        "-ber");
    assert_string_equal(comp("x\xe2\x82\xacy"), "x-y");
    assert_string_equal(comp("\xf0\x9f\x98\x80!"), "--");
    assert_string_equal(comp("a\xff\xfe"), "a--");
    assert_string_equal(comp(""), "");
    char out[CTXC_PROMPT_COMPONENT_MAX + 1];
    assert_int_equal(ctxc_prompt_component(NULL, out), 0);
}

static void test_long_names_are_cut_with_a_hash(void **state) {
    (void)state;
    char a[300], b[300];
    memset(a, 'm', sizeof a - 1);
    a[sizeof a - 1] = '\0';
    memcpy(b, a, sizeof a);
    b[250] = 'n';
    char ca[CTXC_PROMPT_COMPONENT_MAX + 1], cb[CTXC_PROMPT_COMPONENT_MAX + 1];
    assert_int_equal(ctxc_prompt_component(a, ca), CTXC_PROMPT_COMPONENT_MAX);
    assert_int_equal(ctxc_prompt_component(b, cb), CTXC_PROMPT_COMPONENT_MAX);
    assert_string_not_equal(ca, cb);
    assert_memory_equal(ca, a, 55);
    assert_int_equal(ca[55], '~');
    /* exactly the limit is kept as it is */
    a[CTXC_PROMPT_COMPONENT_MAX] = '\0';
    assert_string_equal(comp(a), a);
    /* a long run of dots is no traversal either */
    char dots[200];
    memset(dots, '.', sizeof dots - 1);
    dots[sizeof dots - 1] = '\0';
    assert_int_equal(ctxc_fs_path_check(comp(dots), NULL), CTXC_OK);
}

static void test_every_sanitised_path_stays_in_the_root(void **state) {
    (void)state;
    static const char *const hostile[] = {
        "..",
        "../..",
        "../../etc/passwd",
        "/etc/passwd",
        "a/../../b",
        "..\\..\\x",
        "%2e%2e",
        "C:\\Windows",
        "\t",
        " ",
        ".hidden",
        "a//b",
        "\xc0\xae\xc0\xae",
        "models/../../x",
    };
    size_t n = sizeof hostile / sizeof hostile[0];
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) {
            for (unsigned lv = 0; lv <= CTXC_PROMPT_LEVEL_BASE; lv++) {
                char path[CTXC_CFG_PATH_MAX];
                ctxc_status_t st = ctxc_prompt_path(
                    hostile[i], hostile[j], CTXC_PROMPT_MIDDLE_OUT,
                    (ctxc_prompt_level_t)lv, path, sizeof path, NULL);
                assert_int_equal(st, CTXC_OK);
                assert_int_equal(ctxc_fs_path_check(path, NULL), CTXC_OK);
                size_t slashes = 0;
                for (const char *p = path; *p != '\0'; p++) {
                    slashes += *p == '/';
                }
                /* providers/P/models/M/compression/x.md: exactly 5, 3, 1 */
                assert_int_equal(slashes, lv == 0 ? 5u : lv == 1 ? 3u : 1u);
            }
        }
    }
}

static void test_paths_per_level_and_skipped_levels(void **state) {
    (void)state;
    char p[CTXC_CFG_PATH_MAX];
    assert_int_equal(ctxc_prompt_path("OpenAI", "GPT-4o", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_MODEL, p, sizeof p,
                                      NULL),
                     CTXC_OK);
    assert_string_equal(
        p, "providers/openai/models/gpt-4o/compression/one-shot.md");
    assert_int_equal(ctxc_prompt_path("OpenAI", "GPT-4o", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_PROVIDER, p, sizeof p,
                                      NULL),
                     CTXC_OK);
    assert_string_equal(p, "providers/openai/compression/one-shot.md");
    assert_int_equal(ctxc_prompt_path(NULL, NULL, CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_BASE, p, sizeof p,
                                      NULL),
                     CTXC_OK);
    assert_string_equal(p, "compression/one-shot.md");
    /* empty names skip their levels */
    assert_int_equal(ctxc_prompt_path("", "m", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_MODEL, p, sizeof p,
                                      NULL),
                     CTXC_E_NOT_FOUND);
    assert_int_equal(ctxc_prompt_path(NULL, "m", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_PROVIDER, p, sizeof p,
                                      NULL),
                     CTXC_E_NOT_FOUND);
    assert_int_equal(ctxc_prompt_path("p", "", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_MODEL, p, sizeof p,
                                      NULL),
                     CTXC_E_NOT_FOUND);
    /* buffer too small */
    ctxc_error_t err;
    assert_int_equal(ctxc_prompt_path("p", "m", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_MODEL, p, 10, &err),
                     CTXC_E_NO_SPACE);
    assert_true(err.needed > 0);
    /* bad ids and levels */
    static const char *const bad[] = {"",      "middle-out", "a/b/c",
                                      "../x",  "x/..",       "Compression/x",
                                      "x/y z", "/x",         "x/"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        assert_int_equal(ctxc_prompt_id_check(bad[i], &err),
                         CTXC_E_INVALID_ARG);
        assert_int_equal(ctxc_prompt_path("p", "m", bad[i],
                                          CTXC_PROMPT_LEVEL_BASE, p, sizeof p,
                                          NULL),
                         CTXC_E_INVALID_ARG);
    }
    assert_int_equal(ctxc_prompt_path("p", "m", CTXC_PROMPT_ONE_SHOT,
                                      CTXC_PROMPT_LEVEL_BUILTIN, p, sizeof p,
                                      NULL),
                     CTXC_E_INVALID_ARG);
    assert_string_equal(ctxc_prompt_level_name(CTXC_PROMPT_LEVEL_BUILTIN),
                        "built-in");
}

/* ---- resolving ------------------------------------------------------------
 */

#define MODEL_FILE "providers/anthropic/models/claude-x/compression/one-shot.md"
#define PROVIDER_FILE "providers/anthropic/compression/one-shot.md"
#define BASE_FILE "compression/one-shot.md"

static ctxc_status_t resolve(const char *provider, const char *model,
                             const char *id, ctxc_prompt_t *p,
                             ctxc_error_t *err) {
    ctxc_fs_t fs = mem_fs(&mem);
    return ctxc_prompt_resolve(&fs, provider, model, id, buf, sizeof buf, p,
                               err);
}

static void test_resolver_order(void **state) {
    (void)state;
    mem_put(&mem, MODEL_FILE, "model text");
    mem_put(&mem, PROVIDER_FILE, "provider text");
    mem_put(&mem, BASE_FILE, "base text");
    ctxc_prompt_t p;
    assert_int_equal(
        resolve("Anthropic", "Claude-X", CTXC_PROMPT_ONE_SHOT, &p, NULL),
        CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_MODEL);
    assert_string_equal(p.path, MODEL_FILE);
    assert_int_equal(p.len, 10);
    assert_memory_equal(p.text, "model text", 10);

    /* another model of the same provider: the provider level */
    assert_int_equal(
        resolve("anthropic", "claude-y", CTXC_PROMPT_ONE_SHOT, &p, NULL),
        CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_PROVIDER);
    assert_memory_equal(p.text, "provider text", 13);

    /* no model name: the model level is skipped even though a file exists */
    mem_put(&mem, "providers/anthropic/models/-/compression/one-shot.md",
            "dash");
    assert_int_equal(resolve("anthropic", "", CTXC_PROMPT_ONE_SHOT, &p, NULL),
                     CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_PROVIDER);

    /* no provider: straight to the base level */
    assert_int_equal(resolve(NULL, "claude-x", CTXC_PROMPT_ONE_SHOT, &p, NULL),
                     CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BASE);
    assert_memory_equal(p.text, "base text", 9);

    /* remove the files one by one */
    ctxc_fs_t fs = mem_fs(&mem);
    assert_int_equal(ctxc_fs_remove(&fs, MODEL_FILE, NULL), CTXC_OK);
    assert_int_equal(
        resolve("anthropic", "claude-x", CTXC_PROMPT_ONE_SHOT, &p, NULL),
        CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_PROVIDER);
    assert_int_equal(ctxc_fs_remove(&fs, PROVIDER_FILE, NULL), CTXC_OK);
    assert_int_equal(
        resolve("anthropic", "claude-x", CTXC_PROMPT_ONE_SHOT, &p, NULL),
        CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BASE);
    assert_int_equal(ctxc_fs_remove(&fs, BASE_FILE, NULL), CTXC_OK);
    ctxc_error_t err;
    ctxc_status_t st =
        resolve("anthropic", "claude-x", CTXC_PROMPT_ONE_SHOT, &p, &err);
#if CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT
    assert_int_equal(st, CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BUILTIN);
    assert_string_equal(p.path, BASE_FILE);
    assert_ptr_equal(p.text, ctxc_prompt_builtin(CTXC_PROMPT_ONE_SHOT)->text);
#else
    assert_int_equal(st, CTXC_E_PROMPT_NOT_FOUND);
#endif
}

static void test_traversal_in_model_name_resolves_inside_root(void **state) {
    (void)state;
    /* the sanitised folder is where the file is looked for, and only there */
    mem_put(&mem, "providers/p/models/..-..-etc-passwd/compression/one-shot.md",
            "inside");
    ctxc_prompt_t p;
    assert_int_equal(
        resolve("p", "../../etc/passwd", CTXC_PROMPT_ONE_SHOT, &p, NULL),
        CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_MODEL);
    assert_string_equal(
        p.path, "providers/p/models/..-..-etc-passwd/compression/one-shot.md");
    assert_memory_equal(p.text, "inside", 6);
    /* a file at the spot a traversal would reach is never read */
    mem_put(&mem, "etc/passwd/compression/one-shot.md", "outside");
    mem_put(&mem, "providers/etc/compression/one-shot.md", "outside");
    ctxc_status_t st = resolve("../etc", "../../../etc/passwd",
                               CTXC_PROMPT_ONE_SHOT, &p, NULL);
#if CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT
    assert_int_equal(st, CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BUILTIN);
#else
    assert_int_equal(st, CTXC_E_PROMPT_NOT_FOUND);
#endif
}

static void test_file_is_used_verbatim(void **state) {
    (void)state;
    static const char text[] =
        "  line one\r\n\tline {{two}}\n\xe2\x82\xac\0tail\n\n";
    mem_node_t *n;
    mem_put(&mem, BASE_FILE, "x");
    n = mem_find(&mem, BASE_FILE);
    memcpy(n->data, text, sizeof text - 1);
    n->len = sizeof text - 1;
    ctxc_prompt_t p;
    assert_int_equal(resolve(NULL, NULL, CTXC_PROMPT_ONE_SHOT, &p, NULL),
                     CTXC_OK);
    assert_int_equal(p.len, sizeof text - 1);
    assert_memory_equal(p.text, text, sizeof text - 1);
    /* an empty file is a (empty) prompt, not a fallback */
    n->len = 0;
    assert_int_equal(resolve(NULL, NULL, CTXC_PROMPT_ONE_SHOT, &p, NULL),
                     CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BASE);
    assert_int_equal(p.len, 0);
}

static void test_unreadable_file_is_an_error_not_a_fallback(void **state) {
    (void)state;
    mem_put(&mem, PROVIDER_FILE, "provider text");
    mem_put(&mem, BASE_FILE, "base text");
    mem_find(&mem, PROVIDER_FILE)->unreadable = true;
    ctxc_prompt_t p;
    ctxc_error_t err;
    assert_int_equal(
        resolve("anthropic", "claude-x", CTXC_PROMPT_ONE_SHOT, &p, &err),
        CTXC_E_IO);
    assert_true(msg_has(&err, PROVIDER_FILE));
    assert_true(msg_has(&err, "permission denied"));
    assert_null(p.text);

    /* a directory where the file should be */
    memset(&mem, 0, sizeof mem);
    mem_put(&mem, BASE_FILE, "base text");
    ctxc_fs_t fs = mem_fs(&mem);
    assert_int_equal(ctxc_fs_mkdirs(&fs, PROVIDER_FILE, NULL), CTXC_OK);
    assert_int_equal(resolve("anthropic", NULL, CTXC_PROMPT_ONE_SHOT, &p, &err),
                     CTXC_E_IO);
    assert_true(msg_has(&err, PROVIDER_FILE));

    /* larger than the caller's buffer: how much more is needed */
    memset(&mem, 0, sizeof mem);
    mem_put(&mem, BASE_FILE, "0123456789");
    assert_int_equal(ctxc_prompt_resolve(&fs, NULL, NULL, CTXC_PROMPT_ONE_SHOT,
                                         buf, 4, &p, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(err.needed, 6);
    assert_true(msg_has(&err, BASE_FILE));
}

static void test_missing_everywhere_names_the_file(void **state) {
    (void)state;
    ctxc_prompt_t p;
    ctxc_error_t err;
    assert_int_equal(resolve("p", "m", "compression/nope", &p, &err),
                     CTXC_E_PROMPT_NOT_FOUND);
    assert_true(msg_has(&err, "compression/nope.md"));
    assert_int_equal(ctxc_prompt_resolve(NULL, "p", "m", "compression/nope",
                                         buf, sizeof buf, &p, &err),
                     CTXC_E_PROMPT_NOT_FOUND);
    /* bad id */
    assert_int_equal(resolve("p", "m", "../nope", &p, &err),
                     CTXC_E_INVALID_ARG);
    /* a prompt this build leaves out (REQ-CS-006A.3) */
    ctxc_status_t st = ctxc_prompt_resolve(
        NULL, NULL, NULL, CTXC_PROMPT_MIDDLE_OUT, buf, sizeof buf, &p, &err);
#if CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT
    assert_int_equal(st, CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BUILTIN);
#else
    assert_int_equal(st, CTXC_E_PROMPT_NOT_FOUND);
    assert_true(msg_has(&err, "compression/middle-out.md"));
    assert_true(msg_has(&err, "leaves it out"));
    /* ...and a file on the filesystem still provides it */
    mem_put(&mem, "compression/middle-out.md", "from the device");
    assert_int_equal(resolve(NULL, NULL, CTXC_PROMPT_MIDDLE_OUT, &p, &err),
                     CTXC_OK);
    assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BASE);
#endif
}

/* ---- romfs ------------------------------------------------------------------
 */

typedef struct {
    char names[8][64];
    ctxc_fs_kind_t kinds[8];
    size_t n;
} listing_t;

static bool collect(void *user, const char *name, ctxc_fs_kind_t kind) {
    listing_t *l = user;
    if (l->n < 8) {
        snprintf(l->names[l->n], sizeof l->names[0], "%s", name);
        l->kinds[l->n++] = kind;
    }
    return true;
}

static void test_romfs_serves_the_builtin_table(void **state) {
    (void)state;
    ctxc_fs_t fs = ctxc_romfs();
    size_t compiled_in = 0;
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        char path[CTXC_CFG_PATH_MAX];
        snprintf(path, sizeof path, "%s.md", b->id);
        size_t len = 0;
        ctxc_fs_kind_t kind;
        assert_int_equal(ctxc_fs_stat(&fs, path, &kind, NULL), CTXC_OK);
        ctxc_status_t st = ctxc_fs_read(&fs, path, buf, sizeof buf, &len, NULL);
        if (b->text == NULL) {
            assert_int_equal(kind, CTXC_FS_NONE);
            assert_int_equal(st, CTXC_E_NOT_FOUND);
            continue;
        }
        compiled_in++;
        assert_int_equal(kind, CTXC_FS_FILE);
        assert_int_equal(st, CTXC_OK);
        assert_int_equal(len, b->len);
        assert_memory_equal(buf, b->text, len);
        /* resolving through it: the base level, same text */
        ctxc_prompt_t p;
        assert_int_equal(ctxc_prompt_resolve(&fs, "any", "model", b->id, buf,
                                             sizeof buf, &p, NULL),
                         CTXC_OK);
        assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BASE);
        assert_memory_equal(p.text, b->text, b->len);
        /* too small a buffer */
        ctxc_error_t err;
        assert_int_equal(ctxc_fs_read(&fs, path, buf, 3, &len, &err),
                         CTXC_E_NO_SPACE);
        assert_int_equal(err.needed, b->len - 3);
    }
    listing_t root = {0}, cat = {0};
    assert_int_equal(ctxc_fs_list(&fs, "", collect, &root, NULL), CTXC_OK);
    ctxc_status_t st = ctxc_fs_list(&fs, "compression", collect, &cat, NULL);
    if (compiled_in == 0) {
        assert_int_equal(root.n, 0);
        assert_int_equal(st, CTXC_E_NOT_FOUND);
    } else {
        assert_int_equal(root.n, 1); /* "compression", once */
        assert_string_equal(root.names[0], "compression");
        assert_int_equal(root.kinds[0], CTXC_FS_DIR);
        assert_int_equal(st, CTXC_OK);
        assert_int_equal(cat.n, compiled_in);
        for (size_t i = 0; i < cat.n; i++) {
            assert_int_equal(cat.kinds[i], CTXC_FS_FILE);
            assert_non_null(strstr(cat.names[i], ".md"));
        }
        ctxc_error_t err;
        size_t len;
        assert_int_equal(
            ctxc_fs_read(&fs, "compression", buf, sizeof buf, &len, &err),
            CTXC_E_IO);
    }
    assert_int_equal(ctxc_fs_list(&fs, "nope", collect, &cat, NULL),
                     CTXC_E_NOT_FOUND);
    /* read-only: writing, removing and installing are refused */
    ctxc_error_t err;
    assert_int_equal(
        ctxc_fs_write_atomic(&fs, "compression/x.md", "x", 1, &err),
        CTXC_E_READ_ONLY);
    assert_int_equal(ctxc_fs_remove(&fs, "compression/one-shot.md", NULL),
                     CTXC_E_READ_ONLY);
    assert_int_equal(
        ctxc_prompts_install(&fs, scratch, sizeof scratch, NULL, NULL, &err),
        CTXC_E_READ_ONLY);
}

/* ---- installer
 * ---------------------------------------------------------------- */

typedef struct {
    char path[8][CTXC_CFG_PATH_MAX];
    ctxc_prompt_action_t action[8];
    size_t n;
} report_t;

static void on_action(void *user, const char *path, ctxc_prompt_action_t a) {
    report_t *r = user;
    if (r->n < 8) {
        snprintf(r->path[r->n], sizeof r->path[0], "%s", path);
        r->action[r->n++] = a;
    }
}

static ctxc_status_t install(ctxc_fs_t *fs, report_t *r, ctxc_error_t *err) {
    memset(r, 0, sizeof *r);
    return ctxc_prompts_install(fs, scratch, sizeof scratch, on_action, r, err);
}

/* Every built-in prompt of this build is on fs with the built-in text. */
static void assert_all_installed(void) {
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        char path[CTXC_CFG_PATH_MAX];
        snprintf(path, sizeof path, "%s.md", b->id);
        const char *got = mem_get(&mem, path);
        if (b->text == NULL) {
            assert_null(got);
        } else {
            assert_non_null(got);
            assert_int_equal(strlen(got), b->len);
            assert_memory_equal(got, b->text, b->len);
        }
    }
}

static size_t builtins_in_build(void) {
    size_t n = 0;
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        n += ctxc_prompt_builtins[i].text != NULL;
    }
    return n;
}

static void test_install_into_an_empty_root_then_again(void **state) {
    (void)state;
    ctxc_fs_t fs = mem_fs(&mem);
    report_t r;
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    assert_int_equal(r.n, ctxc_prompt_builtin_count);
    for (size_t i = 0; i < r.n; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        assert_int_equal(r.action[i], b->text != NULL
                                          ? CTXC_PROMPT_INSTALLED
                                          : CTXC_PROMPT_NOT_BUILT_IN);
    }
    assert_all_installed();
    const char *m = mem_get(&mem, CTXC_PROMPT_MANIFEST);
    assert_non_null(m);
    char manifest[4096];
    snprintf(manifest, sizeof manifest, "%s", m);
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const ctxc_prompt_builtin_t *b = &ctxc_prompt_builtins[i];
        if (b->text != NULL) {
            char line[CTXC_CFG_PATH_MAX + 32];
            snprintf(line, sizeof line, "%016llx %s.md\n",
                     (unsigned long long)ctxc_prompt_hash(b->text, b->len),
                     b->id);
            assert_non_null(strstr(manifest, line));
        }
    }
    /* resolving now comes from the base level */
    ctxc_prompt_t p;
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        if (ctxc_prompt_builtins[i].text != NULL) {
            assert_int_equal(resolve("anthropic", "claude-x",
                                     ctxc_prompt_builtins[i].id, &p, NULL),
                             CTXC_OK);
            assert_int_equal(p.level, CTXC_PROMPT_LEVEL_BASE);
        }
    }
    /* the second run changes nothing */
    size_t files = mem_file_count(&mem);
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    for (size_t i = 0; i < r.n; i++) {
        assert_true(r.action[i] == CTXC_PROMPT_UP_TO_DATE ||
                    r.action[i] == CTXC_PROMPT_NOT_BUILT_IN);
    }
    assert_string_equal(mem_get(&mem, CTXC_PROMPT_MANIFEST), manifest);
    assert_int_equal(mem_file_count(&mem), files);
}

#if CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT &&                                    \
    CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT
static ctxc_prompt_action_t action_of(const report_t *r, const char *path) {
    for (size_t i = 0; i < r->n; i++) {
        if (strcmp(r->path[i], path) == 0) {
            return r->action[i];
        }
    }
    fail_msg("no report for %s", path);
    return CTXC_PROMPT_NOT_BUILT_IN;
}

static void test_install_keeps_user_edits_and_fills_gaps(void **state) {
    (void)state;
    ctxc_fs_t fs = mem_fs(&mem);
    report_t r;
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    /* the user edits one prompt and deletes the other */
    mem_put(&mem, "compression/one-shot.md", "my own one-shot prompt");
    assert_int_equal(ctxc_fs_remove(&fs, "compression/middle-out.md", NULL),
                     CTXC_OK);
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    assert_int_equal(action_of(&r, "compression/one-shot.md"),
                     CTXC_PROMPT_KEPT);
    assert_int_equal(action_of(&r, "compression/middle-out.md"),
                     CTXC_PROMPT_INSTALLED);
    assert_string_equal(mem_get(&mem, "compression/one-shot.md"),
                        "my own one-shot prompt");
    const ctxc_prompt_builtin_t *mo =
        ctxc_prompt_builtin(CTXC_PROMPT_MIDDLE_OUT);
    assert_memory_equal(mem_get(&mem, "compression/middle-out.md"), mo->text,
                        mo->len);
    /* and again: still kept */
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    assert_int_equal(action_of(&r, "compression/one-shot.md"),
                     CTXC_PROMPT_KEPT);
    assert_string_equal(mem_get(&mem, "compression/one-shot.md"),
                        "my own one-shot prompt");
}

static void test_install_updates_only_unedited_older_copies(void **state) {
    (void)state;
    ctxc_fs_t fs = mem_fs(&mem);
    /* an older version installed "old text" for both; the user then
     * edited middle-out */
    char manifest[512];
    snprintf(manifest, sizeof manifest,
             "# written by an older ctxc\n%016llx compression/one-shot.md\n"
             "%016llx compression/middle-out.md\n"
             "0123456789abcdef compression/retired.md\n",
             (unsigned long long)ctxc_prompt_hash("old text", 8),
             (unsigned long long)ctxc_prompt_hash("old text", 8));
    mem_put(&mem, CTXC_PROMPT_MANIFEST, manifest);
    mem_put(&mem, "compression/one-shot.md", "old text");
    mem_put(&mem, "compression/middle-out.md", "old text, edited");
    report_t r;
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    assert_int_equal(action_of(&r, "compression/one-shot.md"),
                     CTXC_PROMPT_UPDATED);
    assert_int_equal(action_of(&r, "compression/middle-out.md"),
                     CTXC_PROMPT_KEPT);
    const ctxc_prompt_builtin_t *os = ctxc_prompt_builtin(CTXC_PROMPT_ONE_SHOT);
    assert_memory_equal(mem_get(&mem, "compression/one-shot.md"), os->text,
                        os->len);
    assert_string_equal(mem_get(&mem, "compression/middle-out.md"),
                        "old text, edited");
    /* the manifest: one-shot's new hash, middle-out's old one, other lines kept
     */
    const char *m = mem_get(&mem, CTXC_PROMPT_MANIFEST);
    char want[64];
    snprintf(want, sizeof want, "%016llx compression/one-shot.md",
             (unsigned long long)ctxc_prompt_hash(os->text, os->len));
    assert_non_null(strstr(m, want));
    snprintf(want, sizeof want, "%016llx compression/middle-out.md",
             (unsigned long long)ctxc_prompt_hash("old text", 8));
    assert_non_null(strstr(m, want));
    assert_non_null(strstr(m, "0123456789abcdef compression/retired.md"));
    assert_non_null(strstr(m, "# written by an older ctxc"));
    /* the user reverts to what was installed: recognised as unedited */
    mem_put(&mem, "compression/middle-out.md", "old text");
    assert_int_equal(install(&fs, &r, NULL), CTXC_OK);
    assert_int_equal(action_of(&r, "compression/middle-out.md"),
                     CTXC_PROMPT_UPDATED);
    assert_all_installed();
}
#endif

static void test_install_refuses_a_corrupt_manifest(void **state) {
    (void)state;
    static const char *const corrupt[] = {
        "not a manifest line\n",
        "0123 compression/one-shot.md\n",
        "0123456789abcdeg compression/one-shot.md\n",
        "0123456789abcdef ../escape.md\n",
        "0123456789abcdef\n",
    };
    for (size_t i = 0; i < sizeof corrupt / sizeof corrupt[0]; i++) {
        memset(&mem, 0, sizeof mem);
        char text[256];
        snprintf(text, sizeof text, "# header\n%s", corrupt[i]);
        mem_put(&mem, CTXC_PROMPT_MANIFEST, text);
        ctxc_fs_t fs = mem_fs(&mem);
        report_t r;
        ctxc_error_t err;
        assert_int_equal(install(&fs, &r, &err), CTXC_E_PARSE);
        assert_int_equal(err.line, 2);
        assert_true(msg_has(&err, CTXC_PROMPT_MANIFEST ":2:"));
        /* nothing written, the manifest untouched */
        assert_int_equal(mem_file_count(&mem), 1);
        assert_string_equal(mem_get(&mem, CTXC_PROMPT_MANIFEST), text);
    }
}

static void test_install_errors_name_the_file(void **state) {
    (void)state;
    ctxc_fs_t fs = mem_fs(&mem);
    report_t r;
    ctxc_error_t err;
    /* an unreadable prompt file: an error naming it, the file untouched */
    mem_put(&mem, "compression/one-shot.md", "mine");
    mem_find(&mem, "compression/one-shot.md")->unreadable = true;
    if (ctxc_prompt_builtin(CTXC_PROMPT_ONE_SHOT)->text != NULL) {
        assert_int_equal(install(&fs, &r, &err), CTXC_E_IO);
        assert_true(msg_has(&err, "compression/one-shot.md"));
        mem_find(&mem, "compression/one-shot.md")->unreadable = false;
        assert_string_equal(mem_get(&mem, "compression/one-shot.md"), "mine");
    }
    /* a read-only filesystem */
    memset(&mem, 0, sizeof mem);
    mem.read_only = true;
    if (builtins_in_build() > 0) {
        assert_int_not_equal(install(&fs, &r, &err), CTXC_OK);
        assert_int_equal(mem_file_count(&mem), 0);
    }
    /* scratch too small */
    mem.read_only = false;
    assert_int_equal(ctxc_prompts_install(&fs, scratch, 64, NULL, NULL, &err),
                     CTXC_E_NO_SPACE);
    assert_int_equal(ctxc_prompts_install(&fs, NULL, 0, NULL, NULL, &err),
                     CTXC_E_INVALID_ARG);
    assert_int_equal(
        ctxc_prompts_install(NULL, scratch, sizeof scratch, NULL, NULL, &err),
        CTXC_E_READ_ONLY);
}

/* A failure at any step of any write leaves every prompt file absent or
 * complete, no temporary file behind and a valid manifest (or none); the
 * next run completes the installation. */
static void test_install_survives_a_failure_at_every_step(void **state) {
    (void)state;
    static const fault_op_t ops[] = {FAULT_MKDIR, FAULT_CREATE, FAULT_WRITE,
                                     FAULT_SYNC,  FAULT_CLOSE,  FAULT_RENAME,
                                     FAULT_READ};
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
        for (unsigned nth = 1; nth <= 4; nth++) {
            memset(&mem, 0, sizeof mem);
            static fault_fs_t f;
            ctxc_fs_t fs = fault_fs(&f, mem_fs(&mem), ops[o], nth);
            report_t r;
            ctxc_error_t err;
            ctxc_status_t st = install(&fs, &r, &err);
            if (!f.fired) {
                assert_int_equal(st, CTXC_OK);
                continue;
            }
            assert_int_not_equal(st, CTXC_OK);
            for (size_t i = 0; i < MEM_FS_FILES; i++) {
                mem_node_t *n = &mem.nodes[i];
                if (!n->used || n->dir) {
                    continue;
                }
                assert_false(ctxc_fs_is_temp_name(n->path));
                if (strcmp(n->path, CTXC_PROMPT_MANIFEST) == 0) {
                    continue;
                }
                char id[CTXC_CFG_PATH_MAX];
                snprintf(id, sizeof id, "%.*s", (int)(strlen(n->path) - 3),
                         n->path);
                const ctxc_prompt_builtin_t *b = ctxc_prompt_builtin(id);
                assert_non_null(b);
                assert_int_equal(n->len, b->len);
                assert_memory_equal(n->data, b->text, b->len);
            }
            ctxc_fs_t plain = mem_fs(&mem);
            assert_int_equal(install(&plain, &r, NULL), CTXC_OK);
            assert_all_installed();
        }
    }
}

int main(void) {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_builtin_table_is_the_prompts_folder),
        cmocka_unit_test(test_shipped_prompts_ask_for_the_snapshot),
        cmocka_unit_test(test_component_sanitisation),
        cmocka_unit_test(test_long_names_are_cut_with_a_hash),
        cmocka_unit_test(test_every_sanitised_path_stays_in_the_root),
        cmocka_unit_test(test_paths_per_level_and_skipped_levels),
        cmocka_unit_test_setup(test_resolver_order, setup),
        cmocka_unit_test_setup(
            test_traversal_in_model_name_resolves_inside_root, setup),
        cmocka_unit_test_setup(test_file_is_used_verbatim, setup),
        cmocka_unit_test_setup(test_unreadable_file_is_an_error_not_a_fallback,
                               setup),
        cmocka_unit_test_setup(test_missing_everywhere_names_the_file, setup),
        cmocka_unit_test(test_romfs_serves_the_builtin_table),
        cmocka_unit_test_setup(test_install_into_an_empty_root_then_again,
                               setup),
#if CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT &&                                    \
    CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT
        cmocka_unit_test_setup(test_install_keeps_user_edits_and_fills_gaps,
                               setup),
        cmocka_unit_test_setup(test_install_updates_only_unedited_older_copies,
                               setup),
#endif
        cmocka_unit_test_setup(test_install_refuses_a_corrupt_manifest, setup),
        cmocka_unit_test_setup(test_install_errors_name_the_file, setup),
        cmocka_unit_test_setup(test_install_survives_a_failure_at_every_step,
                               setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
