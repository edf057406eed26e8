/*
 * ctxc — the /set, /settings and /profile commands and their completion
 * (see include/ctxc/settings.h). Output goes through the caller's write
 * function, collected in a stream (sink.h); nothing here does I/O of its
 * own. The strategy named in the notes comes from ctxc_settings_strategy()
 * (ctxc/session.h).
 */
#include <stdarg.h>
#include <string.h>

#include "compiler.h"
#include "ctxc/session.h"
#include "ctxc/settings.h"
#include "error.h"
#include "settings_registry.h"
#include "sink.h"

#if !CTXC_CFG_COMMANDS
/* The command layer is left out (CTXC_CFG_COMMANDS=0). */
ctxc_status_t ctxc_settings_command(ctxc_settings_store_t *s, const char *line,
                                    ctxc_write_fn write, void *user,
                                    ctxc_error_t *err) {
    (void)s;
    (void)line;
    (void)write;
    (void)user;
    return ctxc__fail(err, CTXC_E_UNAVAILABLE,
                      "settings commands are not in this build "
                      "(CTXC_CFG_COMMANDS=0): use ctxc_settings_set");
}

ctxc_status_t ctxc_settings_complete(const ctxc_settings_store_t *s,
                                     const char *line, size_t *word_start,
                                     ctxc_complete_fn fn, void *user,
                                     ctxc_error_t *err) {
    (void)s;
    (void)line;
    (void)fn;
    (void)user;
    if (word_start != NULL) {
        *word_start = 0;
    }
    return ctxc__fail(err, CTXC_E_UNAVAILABLE,
                      "completion is not in this build (CTXC_CFG_COMMANDS=0)");
}
#else

#define USAGE_SET "usage: /set KEY VALUE | /set unset KEY"
#define USAGE_SETTINGS                                                         \
    "usage: /settings | /settings set KEY VALUE | /settings unset KEY"
#define USAGE_PROFILE "usage: /profile save|load|delete NAME | /profile list"

#define MAX_WORDS 5u
#define KEY_BYTES 65u /* longer than any key: such a word is unknown */

typedef struct {
    const char *p;
    size_t n;
} word_t;

static bool is_space(char c) { return c == ' ' || c == '\t'; }

/* Splits line into words; returns how many there are (only the first
 * MAX_WORDS are kept). */
static size_t split(const char *line, word_t *w) {
    size_t count = 0;
    size_t i = 0;
    for (;;) {
        while (line[i] != '\0' && is_space(line[i])) {
            i++;
        }
        if (line[i] == '\0' || line[i] == '\n' || line[i] == '\r') {
            return count;
        }
        size_t start = i;
        while (line[i] != '\0' && !is_space(line[i]) && line[i] != '\n' &&
               line[i] != '\r') {
            i++;
        }
        if (count < MAX_WORDS) {
            w[count].p = line + start;
            w[count].n = i - start;
        }
        count++;
    }
}

static bool weq(word_t w, const char *s) {
    size_t n = strlen(s);
    return w.n == n && memcmp(w.p, s, n) == 0;
}

/* Copies a word into dst (NUL-terminated); false when it does not fit. */
static bool wcopy(char *dst, size_t cap, word_t w) {
    if (w.n >= cap) {
        return false;
    }
    memcpy(dst, w.p, w.n);
    dst[w.n] = '\0';
    return true;
}

/* ---- output: a stream (sink.h) in front of the caller's write function -- */

#define OUT_BYTES 128u /* text collected before a call of write */

typedef ctxc__stream_t out_t;

static void out_s(out_t *o, const char *s) { ctxc__stream_puts(o, s); }

/* Writes fmt with each ARG byte (\1) replaced by the next string argument:
 * one call for a line made of literal text and strings. */
#define ARG "\1"
static void out_f(out_t *o, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    for (;;) {
        size_t n = 0;
        while (fmt[n] != '\0' && fmt[n] != ARG[0]) {
            n++;
        }
        ctxc__stream_put(o, fmt, n);
        if (fmt[n] == '\0') {
            break;
        }
        out_s(o, va_arg(ap, const char *));
        fmt += n + 1;
    }
    va_end(ap);
}

static void out_uint(out_t *o, size_t v) {
    char tmp[20];
    ctxc__sink_t n = {tmp, sizeof tmp, 0};
    ctxc__put_uint(&n, v);
    ctxc__stream_put(o, tmp, n.len);
}

static void out_value(out_t *o, ctxc_setting_id_t id,
                      const ctxc_setting_value_t *v) {
    char text[CTXC_CFG_SETTINGS_VALUE_BYTES + 16];
    (void)ctxc_setting_format(id, v, text, sizeof text);
    out_s(o, text);
}

/* ---- arguments ----------------------------------------------------------- */

static ctxc_status_t get_key(word_t w, char *key, ctxc_setting_id_t *id,
                             ctxc_error_t *err) {
    if (!wcopy(key, KEY_BYTES, w)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "unknown setting %q", w.p,
                          w.n);
    }
    return ctxc_setting_find(key, id, err);
}

CTXC__NOINLINE static ctxc_status_t get_value(word_t w, const char *key,
                                              char *value, ctxc_error_t *err) {
    if (!wcopy(value, CTXC_CFG_SETTINGS_VALUE_BYTES, w)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: the value is longer than %z characters", key,
                          (size_t)CTXC_CFG_SETTINGS_VALUE_BYTES - 1u);
    }
    return CTXC_OK;
}

static ctxc_status_t get_name(word_t w, char *name, ctxc_error_t *err) {
    if (!wcopy(name, CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1u, w)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "profile name %q is longer than %u characters", w.p,
                          w.n, (unsigned)CTXC_CFG_SETTINGS_PROFILE_NAME_MAX);
    }
    return ctxc_profile_name_check(name, err);
}

/* Where a resolved value comes from, as shown to the user. */
static void out_source(out_t *o, const ctxc_settings_store_t *s,
                       ctxc_setting_id_t id, ctxc_setting_source_t src) {
    if (src == CTXC_SOURCE_EPHEMERAL &&
        (s->from_profile & ((ctxc_setting_bits_t)1u << id)) != 0 &&
        s->profile[0] != '\0') {
        out_f(o, "profile " ARG, s->profile);
    } else {
        out_s(o, ctxc_setting_source_name(src));
    }
}

/* "VALUE (source)" or "(not set...)". */
static void out_resolved(out_t *o, const ctxc_settings_store_t *s,
                         ctxc_setting_id_t id) {
    ctxc_setting_value_t v;
    ctxc_setting_source_t src = ctxc_settings_get(s, id, &v);
    if (src == CTXC_SOURCE_UNSET) {
        out_s(o, "(not set");
        if (id == CTXC_SETTING_COMPRESSION_THRESHOLD) {
            const ctxc_strategy_t *st;
            if (ctxc_settings_strategy(s, &st, NULL) == CTXC_OK) {
                ctxc_setting_value_t d = {CTXC_SOURCE_DEFAULT,
                                          st->trigger.default_threshold, NULL};
                out_f(o, ": the default of " ARG ", ", st->name);
                out_value(o, id, &d);
                out_s(o, ", applies");
            } else {
                out_s(o, ": the strategy's default applies");
            }
        }
        out_s(o, ")");
        return;
    }
    out_value(o, id, &v);
    out_s(o, " (");
    out_source(o, s, id, src);
    ctxc_setting_value_t f;
    if (src == CTXC_SOURCE_EPHEMERAL &&
        ctxc_settings_get_layer(s, id, CTXC_SOURCE_PERSISTENT, &f)) {
        out_s(o, "; settings file: ");
        out_value(o, id, &f);
    }
    out_s(o, ")");
}

/* ---- /settings ----------------------------------------------------------- */

static void out_key_help(out_t *o, const ctxc_setting_spec_t *sp) {
    out_s(o, "      ");
    if (sp->type == CTXC_SETTING_TYPE_ENUM) {
        out_s(o, "one of: ");
        bool first = true;
        for (size_t i = 0; sp->values[i] != NULL; i++) {
            if (ctxc_setting_check(
                    (ctxc_setting_id_t)(sp - ctxc_settings_registry),
                    sp->values[i], NULL) == CTXC_OK) {
                out_s(o, first ? "" : ", ");
                out_s(o, sp->values[i]);
                first = false;
            }
        }
    } else {
        out_f(o, ARG ": " ARG, sp->hint, sp->description);
    }
    out_s(o, "\n");
}

static void show_settings(out_t *o, const ctxc_settings_store_t *s) {
    if (s->file_bad) {
        out_s(o, "settings file: " CTXC_SETTINGS_FILE
                 " is unusable; changes to it are refused until it is fixed "
                 "or removed:\n  ");
        out_s(o, ctxc_error_message(&s->file_error));
        out_s(o, "\n");
    } else if (s->fs.ops == NULL) {
        out_s(o, "settings file: none (no filesystem)\n");
    } else {
        out_s(o, "settings file: " CTXC_SETTINGS_FILE "\n");
    }
    if (s->profile[0] != '\0') {
        out_f(o, "profile loaded: " ARG "\n", s->profile);
    }
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        const char *cat = ctxc_settings_registry[i].category;
        bool seen = false;
        for (size_t j = 0; j < i && !seen; j++) {
            seen = strcmp(ctxc_settings_registry[j].category, cat) == 0;
        }
        if (seen) {
            continue;
        }
        out_f(o, "\n" ARG "\n", cat);
        for (size_t k = i; k < CTXC_SETTING_COUNT; k++) {
            const ctxc_setting_spec_t *sp = &ctxc_settings_registry[k];
            if (strcmp(sp->category, cat) != 0) {
                continue;
            }
            out_f(o, "  " ARG " = ", sp->key);
            out_resolved(o, s, (ctxc_setting_id_t)k);
            out_s(o, "\n");
            out_key_help(o, sp);
        }
    }
}

/* ---- notes after a change ------------------------------------------------ */

static void note_after_set(out_t *o, ctxc_settings_store_t *s,
                           ctxc_setting_id_t id) {
    if (id == CTXC_SETTING_COMPRESSION_STRATEGY) {
        const ctxc_strategy_t *st;
        ctxc_error_t e;
        if (ctxc_settings_strategy(s, &st, &e) != CTXC_OK) {
            out_f(o, "note: " ARG "\n", ctxc_error_message(&e));
        }
    } else if (id == CTXC_SETTING_COMPRESSION_PROFILE) {
        const char *name = ctxc_settings_string(s, id);
        char path[sizeof CTXC_PROFILES_DIR +
                  CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 6u];
        ctxc__sink_t p = {path, sizeof path - 1u, 0};
        ctxc__put(&p, CTXC_PROFILES_DIR "/", sizeof CTXC_PROFILES_DIR);
        ctxc__put(&p, name, strlen(name));
        ctxc__put(&p, ".json", 5);
        (void)ctxc__sink_cstr(&p);
        ctxc_fs_kind_t kind = CTXC_FS_NONE;
        if (ctxc_fs_stat(&s->fs, path, &kind, NULL) == CTXC_OK &&
            kind != CTXC_FS_FILE) {
            out_f(o,
                  "note: there is no saved profile '" ARG
                  "' yet; compression fails until it exists\n",
                  name);
        }
    }
}

/* ---- commands ------------------------------------------------------------ */

static ctxc_status_t cmd_set(ctxc_settings_store_t *s, const word_t *w,
                             size_t nw, out_t *o, ctxc_error_t *err) {
    char key[KEY_BYTES];
    char value[CTXC_CFG_SETTINGS_VALUE_BYTES];
    ctxc_setting_id_t id;
    ctxc_status_t st;
    if (nw >= 2 && weq(w[1], "unset")) {
        if (nw != 3) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG, USAGE_SET);
        }
        if ((st = get_key(w[2], key, &id, err)) != CTXC_OK ||
            (st = ctxc_settings_unset(s, key, err)) != CTXC_OK) {
            return st;
        }
        out_f(o, ARG " unset; now ", key);
        out_resolved(o, s, id);
        out_s(o, "\n");
        return CTXC_OK;
    }
    if (nw < 2 || nw > 3) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, USAGE_SET);
    }
    if ((st = get_key(w[1], key, &id, err)) != CTXC_OK) {
        return st;
    }
    word_t empty = {"", 0};
    if ((st = get_value(nw == 3 ? w[2] : empty, key, value, err)) != CTXC_OK ||
        (st = ctxc_settings_set(s, key, value, err)) != CTXC_OK) {
        return st;
    }
    out_f(o, ARG " = ", key);
    out_resolved(o, s, id);
    out_s(o, "\n");
    note_after_set(o, s, id);
    return CTXC_OK;
}

static ctxc_status_t cmd_settings(ctxc_settings_store_t *s, const word_t *w,
                                  size_t nw, out_t *o, ctxc_error_t *err) {
    char key[KEY_BYTES];
    char value[CTXC_CFG_SETTINGS_VALUE_BYTES];
    ctxc_setting_id_t id;
    ctxc_status_t st;
    if (nw == 1) {
        show_settings(o, s);
        return CTXC_OK;
    }
    bool set = weq(w[1], "set");
    if (!((set && nw == 4) || (weq(w[1], "unset") && nw == 3))) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, USAGE_SETTINGS);
    }
    if ((st = get_key(w[2], key, &id, err)) != CTXC_OK) {
        return st;
    }
    if (set) {
        if ((st = get_value(w[3], key, value, err)) != CTXC_OK ||
            (st = ctxc_settings_persist_set(s, key, value, err)) != CTXC_OK) {
            return st;
        }
        ctxc_setting_value_t v;
        (void)ctxc_settings_get_layer(s, id, CTXC_SOURCE_PERSISTENT, &v);
        out_f(o, ARG " = ", key);
        out_value(o, id, &v);
        out_s(o, " (saved to " CTXC_SETTINGS_FILE ")\n");
        if (ctxc_settings_get_layer(s, id, CTXC_SOURCE_EPHEMERAL, &v)) {
            out_s(o, "note: the session value ");
            out_value(o, id, &v);
            out_f(o,
                  " is in force over it (/set unset " ARG
                  " to use the saved one)\n",
                  key);
        }
        note_after_set(o, s, id);
        return CTXC_OK;
    }
    if ((st = ctxc_settings_persist_unset(s, key, err)) != CTXC_OK) {
        return st;
    }
    out_f(o, ARG " is not in " CTXC_SETTINGS_FILE "; now ", key);
    out_resolved(o, s, id);
    out_s(o, "\n");
    return CTXC_OK;
}

typedef struct {
    out_t *o;
    const ctxc_settings_store_t *s;
    size_t count;
} list_out_t;

static bool list_one(void *user, const char *name) {
    list_out_t *l = user;
    out_f(l->o, "  " ARG, name);
    if (strcmp(name, l->s->profile) == 0) {
        out_s(l->o, " (loaded)");
    }
    out_s(l->o, "\n");
    l->count++;
    return l->o->st == CTXC_OK;
}

static size_t popcount(ctxc_setting_bits_t m) {
    size_t n = 0;
    for (; m != 0u; m &= m - 1u) {
        n++;
    }
    return n;
}

static ctxc_status_t cmd_profile(ctxc_settings_store_t *s, const word_t *w,
                                 size_t nw, out_t *o, ctxc_error_t *err) {
    char name[CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1];
    ctxc_status_t st;
    if (nw == 2 && weq(w[1], "list")) {
        list_out_t l = {o, s, 0};
        out_s(o, "saved profiles:\n");
        st = ctxc_settings_profile_list(s, list_one, &l, err);
        if (st != CTXC_OK) {
            return st;
        }
        if (l.count == 0) {
            out_s(o, "  (none; /profile save NAME saves the settings in "
                     "force)\n");
        }
        return CTXC_OK;
    }
    bool save = nw >= 2 && weq(w[1], "save");
    bool load = nw >= 2 && weq(w[1], "load");
    bool del = nw >= 2 && weq(w[1], "delete");
    if (nw >= 2 && !(save || load || del || weq(w[1], "list"))) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "unknown subcommand %q; " USAGE_PROFILE, w[1].p,
                          w[1].n);
    }
    if (!(save || load || del) || nw != 3) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, USAGE_PROFILE);
    }
    if ((st = get_name(w[2], name, err)) != CTXC_OK) {
        return st;
    }
    if (save) {
        size_t count = 0;
        if ((st = ctxc_settings_profile_save(s, name, &count, err)) !=
            CTXC_OK) {
            return st;
        }
        out_f(o, "profile '" ARG "' saved: ", name);
        out_uint(o, count);
        out_f(o, ARG CTXC_PROFILES_DIR "/" ARG ".json\n",
              count == 1 ? " setting in " : " settings in ", name);
        if (s->file_bad) {
            out_s(o, "note: " CTXC_SETTINGS_FILE " is unusable; its values "
                     "are not in the profile\n");
        }
        return CTXC_OK;
    }
    if (load) {
        if ((st = ctxc_settings_profile_load(s, name, err)) != CTXC_OK) {
            return st;
        }
        out_f(o, "profile '" ARG "' loaded: ", name);
        out_uint(o, popcount(s->from_profile));
        out_s(o, popcount(s->from_profile) == 1 ? " setting\n" : " settings\n");
        for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
            ctxc_setting_value_t v;
            if ((s->from_profile & ((ctxc_setting_bits_t)1u << i)) != 0 &&
                ctxc_settings_get_layer(s, (ctxc_setting_id_t)i,
                                        CTXC_SOURCE_EPHEMERAL, &v)) {
                out_f(o, "  " ARG " = ", ctxc_settings_registry[i].key);
                out_value(o, (ctxc_setting_id_t)i, &v);
                out_s(o, "\n");
            }
        }
        return CTXC_OK;
    }
    if ((st = ctxc_settings_profile_delete(s, name, err)) != CTXC_OK) {
        return st;
    }
    out_f(o, "profile '" ARG "' deleted\n", name);
    return CTXC_OK;
}

/* Runs the command of words w[0..nw) (w[0] starts with '/'); its output
 * goes to o. */
static ctxc_status_t run_command(ctxc_settings_store_t *s, const word_t *w,
                                 size_t nw, out_t *o, ctxc_error_t *err) {
    /* nw may exceed MAX_WORDS: every command then answers with its usage */
    if (weq(w[0], "/set")) {
        return cmd_set(s, w, nw, o, err);
    }
    if (weq(w[0], "/settings")) {
        return cmd_settings(s, w, nw, o, err);
    }
    if (weq(w[0], "/profile")) {
        return cmd_profile(s, w, nw, o, err);
    }
    return ctxc__fail(err, CTXC_E_NOT_FOUND,
                      "unknown command %q (settings commands: /set, "
                      "/settings, /profile)",
                      w[0].p, w[0].n);
}

ctxc_status_t ctxc_settings_command(ctxc_settings_store_t *s, const char *line,
                                    ctxc_write_fn write, void *user,
                                    ctxc_error_t *err) {
    if (s == NULL || line == NULL || write == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "command: NULL argument");
    }
    word_t w[MAX_WORDS];
    size_t nw = split(line, w);
    if (nw == 0 || w[0].p[0] != '/') {
        return ctxc__fail(err, CTXC_E_NOT_FOUND,
                          "not a command (commands start with /: /set, "
                          "/settings, /profile)");
    }
    char buf[OUT_BYTES];
    out_t o;
    ctxc__stream_init(&o, buf, sizeof buf, write, user);
    ctxc_status_t st = run_command(s, w, nw, &o, err);
    if (ctxc__stream_flush(&o) != CTXC_OK && st == CTXC_OK) {
        return ctxc__fail(err, o.st, "writing the command output failed");
    }
    return st;
}

/* ---- completion ---------------------------------------------------------- */

typedef struct {
    ctxc_complete_fn fn;
    void *user;
    word_t partial;
    bool stop;
} comp_t;

static void offer(comp_t *c, const char *cand) {
    if (c->stop || strlen(cand) < c->partial.n ||
        memcmp(cand, c->partial.p, c->partial.n) != 0) {
        return;
    }
    if (!c->fn(c->user, cand)) {
        c->stop = true;
    }
}

static void offer_list(comp_t *c, const char *const *list) {
    for (size_t i = 0; list[i] != NULL; i++) {
        offer(c, list[i]);
    }
}

static void offer_keys(comp_t *c) {
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        offer(c, ctxc_settings_registry[i].key);
    }
}

static bool offer_profile(void *user, const char *name) {
    comp_t *c = user;
    offer(c, name);
    return !c->stop;
}

static ctxc_status_t offer_profiles(const ctxc_settings_store_t *s, comp_t *c,
                                    ctxc_error_t *err) {
    return ctxc_settings_profile_list(s, offer_profile, c, err);
}

/* Values of the key named by word w. */
static ctxc_status_t offer_values(const ctxc_settings_store_t *s, comp_t *c,
                                  word_t w, ctxc_error_t *err) {
    static const char *const BOOLS[] = {"true", "false", NULL};
    char key[KEY_BYTES];
    ctxc_setting_id_t id;
    if (!wcopy(key, sizeof key, w) ||
        ctxc_setting_find(key, &id, NULL) != CTXC_OK) {
        return CTXC_OK;
    }
    const ctxc_setting_spec_t *sp = ctxc_setting_spec(id);
    if (sp->type == CTXC_SETTING_TYPE_ENUM) {
        for (size_t i = 0; sp->values[i] != NULL; i++) {
            if (ctxc_setting_check(id, sp->values[i], NULL) == CTXC_OK) {
                offer(c, sp->values[i]); /* the values of this build */
            }
        }
    } else if (sp->type == CTXC_SETTING_TYPE_BOOL) {
        offer_list(c, BOOLS);
    } else if (sp->check == CTXC_SETTING_CHECK_NAME) {
        return offer_profiles(s, c, err);
    } else if (sp->check == CTXC_SETTING_CHECK_PROVIDER) {
        /* the providers of this build */
        char name[CTXC_SETTINGS_ENUM_VALUE_MAX + 1u];
        for (const char *q = ctxc__setting_providers();
             (q = strchr(q, ' ')) != NULL;) {
            size_t k = strcspn(++q, " ");
            if (k < sizeof name) {
                memcpy(name, q, k);
                name[k] = '\0';
                offer(c, name);
            }
        }
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_settings_complete(const ctxc_settings_store_t *s,
                                     const char *line, size_t *word_start,
                                     ctxc_complete_fn fn, void *user,
                                     ctxc_error_t *err) {
    static const char *const COMMANDS[] = {"/set", "/settings", "/profile",
                                           NULL};
    static const char *const SETTINGS_SUB[] = {"set", "unset", NULL};
    static const char *const PROFILE_SUB[] = {"save", "load", "list", "delete",
                                              NULL};
    static const char *const UNSET[] = {"unset", NULL};
    if (s == NULL || line == NULL || fn == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "complete: NULL argument");
    }
    /* the line ends at its first CR or LF, as for split() */
    size_t len = strcspn(line, "\r\n");
    word_t w[MAX_WORDS];
    size_t nw = split(line, w);
    comp_t c = {fn, user, {line + len, 0}, false};
    size_t done = nw; /* complete words before the partial one */
    if (nw > 0 && len > 0 && !is_space(line[len - 1])) {
        done = nw - 1;
        if (nw <= MAX_WORDS) {
            c.partial = w[nw - 1];
        }
    }
    if (word_start != NULL) {
        *word_start = (size_t)(c.partial.p - line);
    }
    if (done > MAX_WORDS - 1u || (nw > MAX_WORDS)) {
        return CTXC_OK;
    }
    if (done == 0) {
        if (c.partial.n == 0 || c.partial.p[0] == '/') {
            offer_list(&c, COMMANDS);
        }
        return CTXC_OK;
    }
    if (weq(w[0], "/set")) {
        if (done == 1) {
            offer_list(&c, UNSET);
            offer_keys(&c);
        } else if (done == 2 && weq(w[1], "unset")) {
            offer_keys(&c);
        } else if (done == 2) {
            return offer_values(s, &c, w[1], err);
        }
    } else if (weq(w[0], "/settings")) {
        if (done == 1) {
            offer_list(&c, SETTINGS_SUB);
        } else if (done == 2 && (weq(w[1], "set") || weq(w[1], "unset"))) {
            offer_keys(&c);
        } else if (done == 3 && weq(w[1], "set")) {
            return offer_values(s, &c, w[2], err);
        }
    } else if (weq(w[0], "/profile")) {
        if (done == 1) {
            offer_list(&c, PROFILE_SUB);
        } else if (done == 2 && (weq(w[1], "load") || weq(w[1], "delete"))) {
            return offer_profiles(s, &c, err);
        }
    }
    return CTXC_OK;
}

#endif /* CTXC_CFG_COMMANDS */
