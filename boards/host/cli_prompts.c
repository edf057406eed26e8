/*
 * ctxc host CLI — `ctxc prompts list|show|install`: the prompt store over
 * the POSIX port (root: $CTXC_HOME, else ~/.config/ctxc).
 *
 * list and show only read ($CTXC_HOME is not created or written; a prompt
 * with no file resolves to the copy built into ctxc); install writes the
 * built-in prompts there (never overwriting a file the user changed).
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "ctxc/prompt.h"
#include "ctxc_port_posix.h"

/* One prompt file at a time; the installer uses both halves. */
static char prompt_buf[2u * 256u * 1024u];

/* A usage error: one line and where the usage is. */
static int prompts_usage_error(const char *what, const char *arg) {
    return cli_usage_fail("prompts", "%s%s", what, arg);
}

typedef struct {
    unsigned changed;
    bool verbose;
} install_report_t;

static void on_install(void *user, const char *path,
                       ctxc_prompt_action_t action) {
    install_report_t *r = user;
    if (action == CTXC_PROMPT_INSTALLED || action == CTXC_PROMPT_UPDATED) {
        r->changed++;
    }
    if (r->verbose) {
        printf("%-32s %s\n", path, ctxc_prompt_action_name(action));
    }
}

static int prompts_install(const ctxc_fs_t *fs, const char *root,
                           bool verbose) {
    ctxc_error_t err;
    install_report_t rep = {0, verbose};
    if (verbose) {
        printf("prompt root: %s\n", root);
    }
    if (ctxc_prompts_install(fs, prompt_buf, sizeof prompt_buf, on_install,
                             &rep, &err) != CTXC_OK) {
        fprintf(stderr, "ctxc: prompts install: %s\n",
                ctxc_error_message(&err));
        return CLI_EXIT_FAIL;
    }
    if (!verbose && rep.changed > 0) {
        fprintf(stderr, "ctxc: installed %u built-in prompt(s) into %s\n",
                rep.changed, root);
    }
    return CLI_EXIT_OK;
}

/* "middle-out", "compression/middle-out" or "...middle-out.md" -> id. */
static bool prompt_id_of(const char *name, char *id, size_t cap) {
    const char *cat = strchr(name, '/') == NULL ? "compression/" : "";
    size_t n = strlen(name);
    if (n > 3 && strcmp(name + n - 3, ".md") == 0) {
        n -= 3;
    }
    if (strlen(cat) + n + 1 > cap) {
        return false;
    }
    snprintf(id, cap, "%s%.*s", cat, (int)n, name);
    return ctxc_prompt_id_check(id, NULL) == CTXC_OK;
}

static void print_source(FILE *f, const ctxc_posix_fs_t *pfs,
                         const ctxc_prompt_t *p) {
    if (p->level == CTXC_PROMPT_LEVEL_BUILTIN) {
        fprintf(f, "(built into ctxc %s)", ctxc_version());
    } else {
        fprintf(f, "%s/%s", pfs->root, p->path);
    }
}

int cli_cmd_prompts(int argc, char **argv) {
    if (argc < 1) {
        return prompts_usage_error("missing list, show NAME or install", "");
    }
    const char *sub = argv[0];
    const char *provider = NULL;
    const char *model = NULL;
    const char *name = NULL;
    bool is_list = strcmp(sub, "list") == 0;
    bool is_show = strcmp(sub, "show") == 0;
    bool is_install = strcmp(sub, "install") == 0;
    if (!is_list && !is_show && !is_install) {
        static const char *const subs[] = {"list", "show", "install", NULL};
        char hint[120];
        cli_suggest(sub, subs, hint, sizeof hint);
        return cli_usage_fail("prompts", "unknown subcommand '%s'%s", sub,
                              hint);
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool takes = strcmp(a, "--provider") == 0 || strcmp(a, "--model") == 0;
        if (takes && !is_install) {
            if (i + 1 >= argc) {
                return prompts_usage_error("missing value after ", a);
            }
            *(a[2] == 'p' ? &provider : &model) = argv[++i];
        } else if (a[0] == '-' && a[1] != '\0') {
            static const char *const opts[] = {"--provider", "--model",
                                               "--help", NULL};
            return cli_unknown_option("prompts", a, opts);
        } else if (is_show && name == NULL) {
            name = a;
        } else {
            return prompts_usage_error("unexpected argument: ", a);
        }
    }
    if (is_show && name == NULL) {
        return prompts_usage_error("show needs a prompt NAME", "");
    }

    ctxc_error_t err;
    ctxc_posix_fs_t pfs;
    if (ctxc_posix_fs_init(&pfs, NULL, &err) != CTXC_OK) {
        fprintf(stderr, "ctxc: prompts: %s\n", ctxc_error_message(&err));
        return CLI_EXIT_FAIL;
    }
    ctxc_fs_t fs = ctxc_posix_fs(&pfs);
    if (is_install) {
        int rc = prompts_install(&fs, pfs.root, true);
        return cli_stdout_ok("ctxc: prompts install") ? rc : CLI_EXIT_FAIL;
    }
    /* list and show only read: a prompt not installed resolves to the
     * copy built into ctxc (`ctxc prompts install` writes the files) */

    if (is_show) {
        char id[CTXC_CFG_PATH_MAX];
        if (!prompt_id_of(name, id, sizeof id)) {
            fprintf(stderr,
                    "ctxc: prompts show: '%s' is not a prompt name "
                    "([a-z0-9._-], e.g. middle-out)\n",
                    name);
            return CLI_EXIT_USAGE;
        }
        ctxc_prompt_t p;
        if (ctxc_prompt_resolve(&fs, provider, model, id, prompt_buf,
                                sizeof prompt_buf, &p, &err) != CTXC_OK) {
            fprintf(stderr, "ctxc: prompts show: %s\n",
                    ctxc_error_message(&err));
            return CLI_EXIT_FAIL;
        }
        fprintf(stderr, "ctxc: %s resolves from level %s: ", id,
                ctxc_prompt_level_name(p.level));
        fflush(stdout);
        print_source(stderr, &pfs, &p);
        fputc('\n', stderr);
        fwrite(p.text, 1, p.len, stdout);
        return cli_stdout_ok("ctxc: prompts show") ? CLI_EXIT_OK
                                                   : CLI_EXIT_FAIL;
    }

    char comp[CTXC_PROMPT_COMPONENT_MAX + 1];
    printf("prompt root: %s\n", pfs.root);
    if (ctxc_prompt_component(provider, comp) > 0) {
        printf("provider:    %s (folder providers/%s)\n", provider, comp);
    }
    if (ctxc_prompt_component(model, comp) > 0) {
        printf("model:       %s (folder models/%s)\n", model, comp);
    }
    printf("%-26s %-9s %s\n", "PROMPT", "LEVEL", "SOURCE");
    int rc = CLI_EXIT_OK;
    for (size_t i = 0; i < ctxc_prompt_builtin_count; i++) {
        const char *id = ctxc_prompt_builtins[i].id;
        ctxc_prompt_t p;
        ctxc_status_t st = ctxc_prompt_resolve(
            &fs, provider, model, id, prompt_buf, sizeof prompt_buf, &p, &err);
        if (st != CTXC_OK) {
            printf("%-26s %-9s %s\n", id, "error", ctxc_error_message(&err));
            rc = CLI_EXIT_FAIL;
            continue;
        }
        printf("%-26s %-9s ", id, ctxc_prompt_level_name(p.level));
        print_source(stdout, &pfs, &p);
        putchar('\n');
    }
    return cli_stdout_ok("ctxc: prompts list") ? rc : CLI_EXIT_FAIL;
}
