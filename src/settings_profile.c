/*
 * ctxc — settings: named profiles, profiles/<name>.json (see
 * include/ctxc/settings.h): save, load, delete, list, and the provider a
 * profile names for the summary call.
 */
#include <string.h>

#include "compiler.h"
#include "error.h"
#include "settings_file.h"
#include "settings_registry.h"
#include "settings_store.h"
#include "sink.h"

#define PROFILE_PATH_MAX                                                       \
    (sizeof CTXC_PROFILES_DIR + CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 6u)

/* Checks the name and writes "profiles/<name>.json". */
static ctxc_status_t profile_path(const char *name, char *path,
                                  ctxc_error_t *err) {
    ctxc_status_t st = ctxc_profile_name_check(name, err);
    if (st != CTXC_OK) {
        return st;
    }
    ctxc__sink_t o = {path, PROFILE_PATH_MAX - 1u, 0};
    ctxc__put(&o, CTXC_PROFILES_DIR "/", sizeof CTXC_PROFILES_DIR);
    ctxc__put(&o, name, strlen(name));
    ctxc__put(&o, ".json", 5);
    (void)ctxc__sink_cstr(&o);
    return CTXC_OK;
}

/* The checks every profile command starts with: a store, a valid name;
 * path = its file. */
static ctxc_status_t profile_target(const ctxc_settings_store_t *s,
                                    const char *name, char *path,
                                    ctxc_error_t *err) {
    if (s == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings store is NULL");
    }
    return profile_path(name, path, err);
}

/* The values a profile saves: every persist-to-profile key that is set,
 * ephemeral else persistent (defaults are not stored). */
static bool saved_value(const void *user, ctxc_setting_id_t id,
                        ctxc_setting_value_t *v) {
    const ctxc_settings_store_t *s = user;
    return ctxc__spec(id)->persist_to_profile &&
           (ctxc__layer_get(&s->ephemeral, id, v) ||
            ctxc__layer_get(&s->persistent, id, v));
}

ctxc_status_t ctxc_settings_profile_save(ctxc_settings_store_t *s,
                                         const char *name, size_t *count,
                                         ctxc_error_t *err) {
    char path[PROFILE_PATH_MAX];
    ctxc_status_t st = profile_target(s, name, path, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t len = 0;
    st = ctxc__settings_read(s, path, &len, NULL, err);
    if (st != CTXC_OK && st != CTXC_E_NOT_FOUND) {
        ctxc__err_prefix(err, "not overwriting it (delete the profile first)");
        if (err != NULL) {
            err->status = CTXC_E_EXISTS;
        }
        return CTXC_E_EXISTS;
    }
    st = ctxc__settings_format(s, saved_value, s, &len, count, err);
    if (st == CTXC_OK) {
        st =
            ctxc_fs_write_atomic(&s->fs, path, CTXC__SETTINGS_BUF(s), len, err);
    }
    return st;
}

static ctxc_status_t profile_not_found(const char *name, const char *path,
                                       const char *why, ctxc_error_t *err) {
    return ctxc__fail(err, CTXC_E_PROFILE_NOT_FOUND,
                      "%sprofile '%s' not found (no %s; /profile list shows "
                      "the saved ones)",
                      why, name, path);
}

/* A ctxc__settings_visit_fn that keeps the value of compression.strategy. */
static void visit_strategy(void *user, ctxc_setting_id_t id, uint32_t num,
                           const char *p, size_t n) {
    (void)p;
    (void)n;
    if (id == CTXC_SETTING_COMPRESSION_STRATEGY) {
        *(uint32_t *)user = num;
    }
}

ctxc_status_t ctxc_settings_profile_load(ctxc_settings_store_t *s,
                                         const char *name, ctxc_error_t *err) {
    char path[PROFILE_PATH_MAX];
    ctxc_status_t st = profile_target(s, name, path, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t len = 0;
    ctxc_setting_bits_t present = 0;
    st = ctxc__settings_read(s, path, &len, &present, err);
    if (st == CTXC_E_NOT_FOUND) {
        return profile_not_found(name, path, "", err);
    }
    if (st == CTXC_OK &&
        (present & ctxc__setting_bit(CTXC_SETTING_COMPRESSION_STRATEGY))) {
        uint32_t strategy = 0;
        (void)ctxc__settings_parse(CTXC__SETTINGS_BUF(s), len, visit_strategy,
                                   &strategy, NULL, NULL);
        st = ctxc__strategy_guard(s, CTXC_SETTING_COMPRESSION_STRATEGY,
                                  strategy, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "%s", path);
        }
    }
    if (st != CTXC_OK) {
        return st;
    }
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        if (ctxc_settings_registry[i].persist_to_profile) {
            ctxc__layer_unset(&s->ephemeral, (ctxc_setting_id_t)i);
        }
    }
    (void)ctxc__settings_parse(CTXC__SETTINGS_BUF(s), len, ctxc__layer_visit,
                               &s->ephemeral, NULL, NULL);
    s->from_profile = present;
    memcpy(s->profile, name, strlen(name) + 1u);
    return CTXC_OK;
}

ctxc_status_t ctxc_settings_profile_delete(ctxc_settings_store_t *s,
                                           const char *name,
                                           ctxc_error_t *err) {
    char path[PROFILE_PATH_MAX];
    ctxc_status_t st = profile_target(s, name, path, err);
    if (st != CTXC_OK) {
        return st;
    }
    st = ctxc_fs_remove(&s->fs, path, err);
    if (st == CTXC_E_NOT_FOUND) {
        return profile_not_found(name, path, "", err);
    }
    return st;
}

/* Listing in byte order without storage: each pass over the directory finds
 * the smallest name above the previous one. */
typedef struct {
    const char *prev; /* NULL: none yet */
    char best[CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1];
    bool found;
} pass_t;

/* Compares a[0..an) with the NUL-terminated b, bytewise. */
static int cmp_name(const char *a, size_t an, const char *b) {
    size_t bn = strlen(b);
    size_t m = an < bn ? an : bn;
    int c = memcmp(a, b, m);
    if (c != 0) {
        return c;
    }
    return an < bn ? -1 : an > bn ? 1 : 0;
}

static bool list_pass(void *user, const char *name, ctxc_fs_kind_t kind) {
    pass_t *p = user;
    size_t n = strlen(name);
    /* the temporary files of ctxc_fs_write_atomic() end in ".tmpN", never
       in ".json", so this also skips them */
    if (kind != CTXC_FS_FILE || n <= 5 ||
        memcmp(name + n - 5, ".json", 5) != 0) {
        return true;
    }
    n -= 5;
    if (!ctxc__setting_name_valid(name, n,
                                  CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)) {
        return true;
    }
    if (p->prev != NULL && cmp_name(name, n, p->prev) <= 0) {
        return true;
    }
    if (!p->found || cmp_name(name, n, p->best) < 0) {
        memcpy(p->best, name, n);
        p->best[n] = '\0';
        p->found = true;
    }
    return true;
}

ctxc_status_t ctxc_settings_profile_list(const ctxc_settings_store_t *s,
                                         ctxc_name_fn fn, void *user,
                                         ctxc_error_t *err) {
    if (s == NULL || fn == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "profile list: NULL argument");
    }
    char prev[CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1];
    pass_t p;
    p.prev = NULL;
    for (;;) {
        p.found = false;
        ctxc_error_t e;
        ctxc_status_t st =
            ctxc_fs_list(&s->fs, CTXC_PROFILES_DIR, list_pass, &p, &e);
        if (st == CTXC_E_NOT_FOUND) {
            return CTXC_OK;
        }
        if (st != CTXC_OK) {
            if (err != NULL) {
                *err = e;
            }
            return st;
        }
        if (!p.found || !fn(user, p.best)) {
            return CTXC_OK;
        }
        memcpy(prev, p.best, sizeof prev);
        p.prev = prev;
    }
}

typedef struct {
    ctxc_provider_ref_t *out;
} ref_visit_t;

static void copy_str(char *dst, size_t cap, const char *p, size_t n) {
    if (n >= cap) {
        n = cap - 1;
    }
    memcpy(dst, p, n);
    dst[n] = '\0';
}

/* Out of line: GCC otherwise copies the switch into both callers. */
CTXC__NOINLINE static char *ref_field(ctxc_provider_ref_t *r,
                                      ctxc_setting_id_t id) {
    switch (id) {
    case CTXC_SETTING_PROVIDER:
        return r->provider;
    case CTXC_SETTING_MODEL:
        return r->model;
    case CTXC_SETTING_BASE_URL:
        return r->base_url;
    case CTXC_SETTING_AUTH_KEY_NAME:
        return r->auth_key_name;
    default:
        return NULL;
    }
}

static void visit_ref(void *user, ctxc_setting_id_t id, uint32_t num,
                      const char *p, size_t n) {
    ctxc_provider_ref_t *out = ((ref_visit_t *)user)->out;
    char *dst = ref_field(out, id);
    if (dst != NULL) {
        copy_str(dst, CTXC_CFG_SETTINGS_VALUE_BYTES, p, n);
    } else if (id == CTXC_SETTING_STREAM) {
        out->stream = num != 0;
    }
}

/* Reads the profile compression.profile names (`name`) into s->buf. */
static ctxc_status_t read_compression_profile(ctxc_settings_store_t *s,
                                              const char *name, size_t *len,
                                              ctxc_error_t *err) {
    char path[PROFILE_PATH_MAX];
    ctxc_status_t st = profile_path(name, path, err);
    if (st == CTXC_OK) {
        st = ctxc__settings_read(s, path, len, NULL, err);
    }
    if (st == CTXC_E_NOT_FOUND) {
        return profile_not_found(name, path, "compression.profile: ", err);
    }
    return st;
}

ctxc_status_t ctxc_settings_compression_profile_check(ctxc_settings_store_t *s,
                                                      ctxc_error_t *err) {
    if (s == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "compression profile: NULL argument");
    }
    const char *name =
        ctxc_settings_string(s, CTXC_SETTING_COMPRESSION_PROFILE);
    size_t len = 0;
    return name == NULL ? CTXC_OK
                        : read_compression_profile(s, name, &len, err);
}

ctxc_status_t ctxc_settings_compression_provider(ctxc_settings_store_t *s,
                                                 ctxc_provider_ref_t *out,
                                                 ctxc_error_t *err) {
    if (s == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "compression provider: NULL argument");
    }
    memset(out, 0, sizeof *out);
    const char *name =
        ctxc_settings_string(s, CTXC_SETTING_COMPRESSION_PROFILE);
    if (name == NULL) {
        for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
            char *dst = ref_field(out, (ctxc_setting_id_t)i);
            const char *v = ctxc_settings_string(s, (ctxc_setting_id_t)i);
            if (dst != NULL && v != NULL) {
                copy_str(dst, CTXC_CFG_SETTINGS_VALUE_BYTES, v, strlen(v));
            }
        }
        out->stream = ctxc_settings_bool(s, CTXC_SETTING_STREAM);
        return CTXC_OK;
    }
    copy_str(out->profile, sizeof out->profile, name, strlen(name));
    size_t len = 0;
    ctxc_status_t st = read_compression_profile(s, out->profile, &len, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* a profile without the key: its registry default */
    out->stream =
        strcmp(ctxc_settings_registry[CTXC_SETTING_STREAM].default_text,
               "true") == 0;
    ref_visit_t rv = {out};
    (void)ctxc__settings_parse(CTXC__SETTINGS_BUF(s), len, visit_ref, &rv, NULL,
                               NULL);
    return CTXC_OK;
}
