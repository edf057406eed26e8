/*
 * ctxc — settings: the store (see include/ctxc/settings.h). Its two layers,
 * how a value resolves through them, the typed accessors, /set on the
 * ephemeral layer and the persistent layer kept in settings.json (read and
 * written through the file format of settings_file.c).
 */
#include <string.h>

#include "compiler.h"
#include "error.h"
#include "settings_file.h"
#include "settings_registry.h"
#include "settings_store.h"
#include "sink.h"

/* ---- layers -------------------------------------------------------------- */

static void layer_clear(ctxc_settings_layer_t *l) {
    l->set = 0;
    memset(l->num, 0, sizeof l->num);
    for (size_t i = 0; i < sizeof l->str / sizeof l->str[0]; i++) {
        l->str[i][0] = '\0';
    }
}

void ctxc__layer_put(ctxc_settings_layer_t *l, ctxc_setting_id_t id,
                     uint32_t num, const char *p, size_t n) {
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    l->num[id] = num;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        char *dst = l->str[sp->str_slot];
        memmove(dst, p, n);
        dst[n] = '\0';
    }
    l->set |= ctxc__setting_bit(id);
}

void ctxc__layer_unset(ctxc_settings_layer_t *l, ctxc_setting_id_t id) {
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    l->set &= ~ctxc__setting_bit(id);
    l->num[id] = 0;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        l->str[sp->str_slot][0] = '\0';
    }
}

bool ctxc__layer_get(const ctxc_settings_layer_t *l, ctxc_setting_id_t id,
                     ctxc_setting_value_t *out) {
    if ((l->set & ctxc__setting_bit(id)) == 0) {
        return false;
    }
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    out->num = l->num[id];
    out->str = NULL;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        out->str = l->str[sp->str_slot];
    } else if (sp->type == CTXC_SETTING_TYPE_ENUM) {
        out->str = sp->values[out->num];
    }
    return true;
}

void ctxc__layer_visit(void *user, ctxc_setting_id_t id, uint32_t num,
                       const char *p, size_t n) {
    ctxc__layer_put((ctxc_settings_layer_t *)user, id, num, p, n);
}

static bool default_get(ctxc_setting_id_t id, ctxc_setting_value_t *out) {
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    if (sp->default_text == NULL) {
        return false;
    }
    uint32_t num;
    if (!ctxc__setting_default_num(sp, &num) &&
        ctxc__setting_parse(id, sp->default_text, strlen(sp->default_text),
                            &num, NULL) != CTXC_OK) {
        return false; /* a bad table; test_settings checks every default */
    }
    out->num = num;
    out->str = NULL;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        out->str = sp->default_text;
    } else if (sp->type == CTXC_SETTING_TYPE_ENUM) {
        out->str = sp->values[num];
    }
    return true;
}

const char *ctxc_setting_source_name(ctxc_setting_source_t source) {
    switch (source) {
    case CTXC_SOURCE_DEFAULT:
        return "default";
    case CTXC_SOURCE_PERSISTENT:
        return "settings file";
    case CTXC_SOURCE_EPHEMERAL:
        return "session";
    case CTXC_SOURCE_UNSET:
        break;
    }
    return "not set";
}

bool ctxc_settings_get_layer(const ctxc_settings_store_t *s,
                             ctxc_setting_id_t id, ctxc_setting_source_t layer,
                             ctxc_setting_value_t *out) {
    if (s == NULL || out == NULL ||
        (unsigned)id >= (unsigned)CTXC_SETTING_COUNT) {
        return false;
    }
    bool ok = false;
    switch (layer) {
    case CTXC_SOURCE_EPHEMERAL:
        ok = ctxc__layer_get(&s->ephemeral, id, out);
        break;
    case CTXC_SOURCE_PERSISTENT:
        ok = ctxc__layer_get(&s->persistent, id, out);
        break;
    case CTXC_SOURCE_DEFAULT:
        ok = default_get(id, out);
        break;
    case CTXC_SOURCE_UNSET:
        break;
    }
    out->source = ok ? layer : CTXC_SOURCE_UNSET;
    return ok;
}

ctxc_setting_source_t ctxc_settings_get(const ctxc_settings_store_t *s,
                                        ctxc_setting_id_t id,
                                        ctxc_setting_value_t *out) {
    ctxc_setting_value_t tmp;
    if (out == NULL) {
        out = &tmp;
    }
    /* the layers in order, each a bit test (the session reads a dozen
     * settings a turn) */
    if (s != NULL && (unsigned)id < (unsigned)CTXC_SETTING_COUNT) {
        ctxc_setting_bits_t bit = ctxc__setting_bit(id);
        if ((s->ephemeral.set & bit) != 0 &&
            ctxc__layer_get(&s->ephemeral, id, out)) {
            out->source = CTXC_SOURCE_EPHEMERAL;
            return out->source;
        }
        if ((s->persistent.set & bit) != 0 &&
            ctxc__layer_get(&s->persistent, id, out)) {
            out->source = CTXC_SOURCE_PERSISTENT;
            return out->source;
        }
        if (default_get(id, out)) {
            out->source = CTXC_SOURCE_DEFAULT;
            return out->source;
        }
    }
    out->source = CTXC_SOURCE_UNSET;
    out->num = 0;
    out->str = NULL;
    return CTXC_SOURCE_UNSET;
}

/* ---- typed accessors ----------------------------------------------------- */

/* The resolved number of a setting of type `type`; false when id is not
 * of that type or nothing resolves. */
static bool get_number(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                       ctxc_setting_type_t type, uint32_t *out) {
    ctxc_setting_value_t v;
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT ||
        ctxc__spec(id)->type != type ||
        ctxc_settings_get(s, id, &v) == CTXC_SOURCE_UNSET) {
        return false;
    }
    *out = v.num;
    return true;
}

bool ctxc_settings_ratio(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                         uint16_t *out) {
    uint32_t n = 0;
    if (!get_number(s, id, CTXC_SETTING_TYPE_RATIO, &n)) {
        return false;
    }
    *out = (uint16_t)n;
    return true;
}

uint16_t ctxc_settings_preserve_threshold(const ctxc_settings_store_t *s) {
    uint16_t v = 0;
    (void)ctxc_settings_ratio(s, CTXC_SETTING_COMPRESSION_PRESERVE_THRESHOLD,
                              &v);
    return v;
}

uint16_t ctxc_settings_top_preserve_threshold(const ctxc_settings_store_t *s) {
    uint16_t v = 0;
    (void)ctxc_settings_ratio(
        s, CTXC_SETTING_COMPRESSION_TOP_PRESERVE_THRESHOLD, &v);
    return v;
}

bool ctxc_settings_int(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                       uint32_t *out) {
    return get_number(s, id, CTXC_SETTING_TYPE_INT, out);
}

uint64_t ctxc_settings_context_limit(const ctxc_settings_store_t *s) {
    uint32_t v = 0;
    return ctxc_settings_int(s, CTXC_SETTING_CONTEXT_LIMIT, &v) ? v : 0u;
}

bool ctxc_settings_bool(const ctxc_settings_store_t *s, ctxc_setting_id_t id) {
    ctxc_setting_value_t v;
    return (unsigned)id < (unsigned)CTXC_SETTING_COUNT &&
           ctxc__spec(id)->type == CTXC_SETTING_TYPE_BOOL &&
           ctxc_settings_get(s, id, &v) != CTXC_SOURCE_UNSET && v.num != 0u;
}

bool ctxc_settings_enum(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                        uint32_t *out) {
    return get_number(s, id, CTXC_SETTING_TYPE_ENUM, out);
}

const char *ctxc_settings_string(const ctxc_settings_store_t *s,
                                 ctxc_setting_id_t id) {
    ctxc_setting_value_t v;
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT) {
        return NULL;
    }
    (void)ctxc_settings_get(s, id, &v);
    return v.str;
}

/* ---- the persistent layer: settings.json ----------------------------------
 */

static void copy_error(ctxc_error_t *dst, const ctxc_error_t *src) {
    if (dst != NULL) {
        *dst = *src;
    }
}

/* Re-reads settings.json into the persistent layer; keeps file_bad and
 * file_error up to date. */
static ctxc_status_t refresh(ctxc_settings_store_t *s) {
    size_t len = 0;
    ctxc_error_t e;
    memset(&e, 0, sizeof e);
    ctxc_status_t st =
        ctxc__settings_read(s, CTXC_SETTINGS_FILE, &len, NULL, &e);
    layer_clear(&s->persistent);
    if (st == CTXC_E_NOT_FOUND) {
        s->file_bad = false;
        return CTXC_OK;
    }
    if (st != CTXC_OK) {
        s->file_bad = true;
        s->file_error = e;
        return st;
    }
    (void)ctxc__settings_parse(CTXC__SETTINGS_BUF(s), len, ctxc__layer_visit,
                               &s->persistent, NULL, NULL);
    s->file_bad = false;
    return CTXC_OK;
}

void ctxc_settings_init(ctxc_settings_store_t *s, const ctxc_fs_t *fs) {
    memset(s, 0, sizeof *s);
#if CTXC_CFG_SETTINGS_FILE_BYTES > 0
    if (fs != NULL) {
        s->fs = *fs;
    }
#else
    (void)fs; /* no file buffer: no settings file, no profiles */
#endif
}

ctxc_status_t ctxc_settings_load(ctxc_settings_store_t *s, ctxc_error_t *err) {
    if (s == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings store is NULL");
    }
    ctxc_status_t st = refresh(s);
    if (st != CTXC_OK) {
        copy_error(err, &s->file_error);
    }
    return st;
}

/* Turns "settings.json: reason" into "refusing to overwrite unusable
 * settings.json: reason". */
static void refusal(ctxc_error_t *err, const char *path) {
#if CTXC_CFG_ERROR_MESSAGE_LEN > 0
    if (err == NULL) {
        return;
    }
    size_t pn = strlen(path);
    /* pn < 32 <= the message array: memcmp stays inside it */
    if (memcmp(err->message, path, pn) == 0 && err->message[pn] == ':' &&
        err->message[pn + 1] == ' ') {
        size_t rest = strlen(err->message + pn + 2);
        memmove(err->message, err->message + pn + 2, rest + 1);
    }
#endif
    ctxc__err_prefix(err, "refusing to overwrite unusable %s", path);
}

/* The persistent layer with one change: key `id` set to num/value, or
 * removed when value is NULL (the values ctxc__settings_format writes). */
typedef struct {
    const ctxc_settings_layer_t *layer;
    ctxc_setting_id_t id;
    uint32_t num;
    const char *value;
} change_t;

static bool changed_value(const void *user, ctxc_setting_id_t id,
                          ctxc_setting_value_t *v) {
    const change_t *c = user;
    if (id != c->id) {
        return ctxc__layer_get(c->layer, id, v);
    }
    if (c->value == NULL) {
        return false;
    }
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    v->num = c->num;
    v->str = sp->type == CTXC_SETTING_TYPE_ENUM ? sp->values[c->num] : c->value;
    return true;
}

static ctxc_status_t persist_change(ctxc_settings_store_t *s, const char *key,
                                    const char *value, ctxc_error_t *err) {
    if (s == NULL || key == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings: NULL argument");
    }
    ctxc_setting_id_t id;
    ctxc_status_t st = ctxc_setting_find(key, &id, err);
    uint32_t num = 0;
    size_t vn = value != NULL ? strlen(value) : 0;
    if (st == CTXC_OK && value != NULL) {
        st = ctxc__setting_parse(id, value, vn, &num, err);
        if (st == CTXC_OK) {
            st = ctxc__strategy_guard(s, id, num, err);
        }
    }
    if (st != CTXC_OK) {
        return st;
    }
    st = refresh(s);
    if (st != CTXC_OK) {
        copy_error(err, &s->file_error);
        refusal(err, CTXC_SETTINGS_FILE);
        return st;
    }
    if (value == NULL && (s->persistent.set & ctxc__setting_bit(id)) == 0) {
        return CTXC_OK; /* nothing to remove: the file stays as it is */
    }
    change_t c = {&s->persistent, id, num, value};
    size_t len = 0;
    st = ctxc__settings_format(s, changed_value, &c, &len, NULL, err);
    if (st == CTXC_OK) {
        st = ctxc_fs_write_atomic(&s->fs, CTXC_SETTINGS_FILE,
                                  CTXC__SETTINGS_BUF(s), len, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    if (value == NULL) {
        ctxc__layer_unset(&s->persistent, id);
    } else {
        ctxc__layer_put(&s->persistent, id, num, value, vn);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_settings_persist_set(ctxc_settings_store_t *s,
                                        const char *key, const char *value,
                                        ctxc_error_t *err) {
    if (value == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings: value is NULL");
    }
    return persist_change(s, key, value, err);
}

ctxc_status_t ctxc_settings_persist_unset(ctxc_settings_store_t *s,
                                          const char *key, ctxc_error_t *err) {
    return persist_change(s, key, NULL, err);
}

/* Sets a checked value in the ephemeral layer, after the strategy guard. */
CTXC__NOINLINE static ctxc_status_t put_ephemeral(ctxc_settings_store_t *s,
                                                  ctxc_setting_id_t id,
                                                  uint32_t num, const char *p,
                                                  size_t n, ctxc_error_t *err) {
    ctxc_status_t st = ctxc__strategy_guard(s, id, num, err);
    if (st == CTXC_OK) {
        ctxc__layer_put(&s->ephemeral, id, num, p, n);
        s->from_profile &= ~ctxc__setting_bit(id);
    }
    return st;
}

ctxc_status_t ctxc_settings_set(ctxc_settings_store_t *s, const char *key,
                                const char *value, ctxc_error_t *err) {
    if (s == NULL || value == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings: NULL argument");
    }
    ctxc_setting_id_t id;
    ctxc_status_t st = ctxc_setting_find(key, &id, err);
    uint32_t num = 0;
    size_t n = strlen(value);
    if (st == CTXC_OK) {
        st = ctxc__setting_parse(id, value, n, &num, err);
    }
    if (st == CTXC_OK) {
        st = put_ephemeral(s, id, num, value, n, err);
    }
    return st;
}

/* ---- the strategy guard and the typed setters ---------------------------- */

void ctxc_settings_set_strategy_guard(ctxc_settings_store_t *s,
                                      ctxc_settings_strategy_guard_fn fn,
                                      void *user) {
    s->guard_ = fn;
    s->guard_user_ = fn != NULL ? user : NULL;
}

ctxc_status_t ctxc__strategy_guard(const ctxc_settings_store_t *s,
                                   ctxc_setting_id_t id, uint32_t num,
                                   ctxc_error_t *err) {
    if (id != CTXC_SETTING_COMPRESSION_STRATEGY || s->guard_ == NULL) {
        return CTXC_OK;
    }
    return s->guard_(s->guard_user_, num, err);
}

static const char *type_name(ctxc_setting_type_t t) {
    switch (t) {
    case CTXC_SETTING_TYPE_ENUM:
        return "an enum";
    case CTXC_SETTING_TYPE_STRING:
        return "a string";
    case CTXC_SETTING_TYPE_BOOL:
        return "a boolean";
    case CTXC_SETTING_TYPE_RATIO:
        return "a ratio";
    case CTXC_SETTING_TYPE_INT:
        break;
    }
    return "an integer";
}

static const char *setter_name(ctxc_setting_type_t t) {
    switch (t) {
    case CTXC_SETTING_TYPE_ENUM:
        return "ctxc_settings_set_enum";
    case CTXC_SETTING_TYPE_STRING:
        return "ctxc_settings_set_str";
    case CTXC_SETTING_TYPE_BOOL:
        return "ctxc_settings_set_bool";
    case CTXC_SETTING_TYPE_RATIO:
        return "ctxc_settings_set_ratio";
    case CTXC_SETTING_TYPE_INT:
        break;
    }
    return "ctxc_settings_set_u32";
}

/* The arguments of a typed setter: a store, an id in range, of `type`. */
static ctxc_status_t typed_args(const ctxc_settings_store_t *s,
                                ctxc_setting_id_t id, ctxc_setting_type_t type,
                                ctxc_error_t *err) {
    if (s == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings store is NULL");
    }
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "setting id %u is not a setting (0 to %u)",
                          (unsigned)id, (unsigned)CTXC_SETTING_COUNT - 1u);
    }
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    if (sp->type != type) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s is %s setting (set it with %s), not %s", sp->key,
                          type_name(sp->type), setter_name(sp->type),
                          type_name(type));
    }
    return CTXC_OK;
}

/* A typed value as its text: checked and set like ctxc_settings_set. */
static ctxc_status_t set_text(ctxc_settings_store_t *s, ctxc_setting_id_t id,
                              const char *p, size_t n, ctxc_error_t *err) {
    uint32_t num = 0;
    ctxc_status_t st = ctxc__setting_parse(id, p, n, &num, err);
    if (st == CTXC_OK) {
        st = put_ephemeral(s, id, num, p, n, err);
    }
    return st;
}

ctxc_status_t ctxc_settings_set_u32(ctxc_settings_store_t *s,
                                    ctxc_setting_id_t id, uint32_t value,
                                    ctxc_error_t *err) {
    ctxc_status_t st = typed_args(s, id, CTXC_SETTING_TYPE_INT, err);
    if (st != CTXC_OK) {
        return st;
    }
    char text[12];
    ctxc__sink_t o = {text, sizeof text, 0};
    ctxc__put_uint(&o, value);
    return set_text(s, id, text, o.len, err);
}

ctxc_status_t ctxc_settings_set_ratio(ctxc_settings_store_t *s,
                                      ctxc_setting_id_t id, uint16_t permille,
                                      ctxc_error_t *err) {
    ctxc_status_t st = typed_args(s, id, CTXC_SETTING_TYPE_RATIO, err);
    if (st != CTXC_OK) {
        return st;
    }
    /* whole.fraction, so that a value above 1000 gets the text path's
     * "is above 1" */
    char text[12];
    ctxc__sink_t o = {text, sizeof text, 0};
    ctxc__put_uint(&o, permille / 1000u);
    unsigned frac = permille % 1000u;
    if (frac != 0u) {
        char d[4] = {'.', (char)('0' + frac / 100u),
                     (char)('0' + frac / 10u % 10u), (char)('0' + frac % 10u)};
        size_t k = 4;
        while (d[k - 1] == '0') {
            k--;
        }
        ctxc__put(&o, d, k);
    }
    return set_text(s, id, text, o.len, err);
}

ctxc_status_t ctxc_settings_set_bool(ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, bool value,
                                     ctxc_error_t *err) {
    ctxc_status_t st = typed_args(s, id, CTXC_SETTING_TYPE_BOOL, err);
    if (st != CTXC_OK) {
        return st;
    }
    return set_text(s, id, value ? "true" : "false", value ? 4u : 5u, err);
}

/* A NUL-terminated value of a setting of type `type` through the text path. */
static ctxc_status_t set_cstr(ctxc_settings_store_t *s, ctxc_setting_id_t id,
                              ctxc_setting_type_t type, const char *text,
                              ctxc_error_t *err) {
    ctxc_status_t st = typed_args(s, id, type, err);
    if (st == CTXC_OK && text == NULL) {
        st = ctxc__fail(err, CTXC_E_INVALID_ARG, "%s: the value is NULL",
                        ctxc__spec(id)->key);
    }
    if (st != CTXC_OK) {
        return st;
    }
    return set_text(s, id, text, strlen(text), err);
}

ctxc_status_t ctxc_settings_set_enum(ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, const char *name,
                                     ctxc_error_t *err) {
    return set_cstr(s, id, CTXC_SETTING_TYPE_ENUM, name, err);
}

ctxc_status_t ctxc_settings_set_enum_index(ctxc_settings_store_t *s,
                                           ctxc_setting_id_t id, uint32_t index,
                                           ctxc_error_t *err) {
    ctxc_status_t st = typed_args(s, id, CTXC_SETTING_TYPE_ENUM, err);
    if (st != CTXC_OK) {
        return st;
    }
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    uint32_t count = 0;
    while (sp->values[count] != NULL) {
        count++;
    }
    if (index >= count) {
        char allowed[96];
        ctxc__setting_allowed(sp, allowed, sizeof allowed);
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: value index %u is out of range (allowed: %s)",
                          sp->key, (unsigned)index, allowed);
    }
    const char *name = sp->values[index];
    return set_text(s, id, name, strlen(name), err);
}

ctxc_status_t ctxc_settings_set_str(ctxc_settings_store_t *s,
                                    ctxc_setting_id_t id, const char *text,
                                    ctxc_error_t *err) {
    return set_cstr(s, id, CTXC_SETTING_TYPE_STRING, text, err);
}

ctxc_status_t ctxc_settings_unset_id(ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, ctxc_error_t *err) {
    if (s == NULL || (unsigned)id >= (unsigned)CTXC_SETTING_COUNT) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "settings: NULL store or setting id out of range");
    }
    ctxc__layer_unset(&s->ephemeral, id);
    s->from_profile &= ~ctxc__setting_bit(id);
    return CTXC_OK;
}

ctxc_status_t ctxc_settings_unset(ctxc_settings_store_t *s, const char *key,
                                  ctxc_error_t *err) {
    if (s == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings: NULL argument");
    }
    ctxc_setting_id_t id;
    ctxc_status_t st = ctxc_setting_find(key, &id, err);
    if (st == CTXC_OK) {
        ctxc__layer_unset(&s->ephemeral, id);
        s->from_profile &= ~ctxc__setting_bit(id);
    }
    return st;
}
