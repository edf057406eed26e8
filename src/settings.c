/*
 * ctxc — settings: the registry, value checks, the two layers of the store,
 * settings.json and profiles/<name>.json (see include/ctxc/settings.h).
 *
 * Files are read into the store's buffer and parsed twice: a first pass
 * checks everything (JSON through ctxc__json_canon, then every key and
 * value), a second pass, which cannot fail, applies the values. So a bad
 * file never changes a layer half-way, and no second layer is needed.
 */
#include <string.h>

#include "ctxc/settings.h"
#include "ctxc_internal.h"

/* ---- the registry -------------------------------------------------------- */

#define T_ENUM CTXC_SETTING_TYPE_ENUM
#define T_STRING CTXC_SETTING_TYPE_STRING
#define T_BOOL CTXC_SETTING_TYPE_BOOL
#define T_RATIO CTXC_SETTING_TYPE_RATIO
#define T_INT CTXC_SETTING_TYPE_INT

#define SLOTV_ENUM(id) 0xFFu
#define SLOTV_BOOL(id) 0xFFu
#define SLOTV_RATIO(id) 0xFFu
#define SLOTV_INT(id) 0xFFu
#define SLOTV_STRING(id) CTXC__STR_##id

const ctxc_setting_spec_t ctxc_settings_registry[CTXC_SETTING_COUNT] = {
#define SPEC_(id, key, type, values, dflt, min, max, check, persist, cat,      \
              hint, desc)                                                      \
    {key,                                                                      \
     T_##type,                                                                 \
     values,                                                                   \
     dflt,                                                                     \
     min,                                                                      \
     max,                                                                      \
     CTXC_SETTING_CHECK_##check,                                               \
     persist,                                                                  \
     (uint8_t)SLOTV_##type(id),                                                \
     cat,                                                                      \
     hint,                                                                     \
     desc},
    CTXC_SETTINGS_LIST(SPEC_)
#undef SPEC_
};

_Static_assert(CTXC_SETTING_COUNT <= 32,
               "a layer keeps its set keys in 32 bits");
_Static_assert(CTXC_SETTINGS_STRING_COUNT < 0xFF, "string slots fit 8 bits");

/* The longest a value is written in a file: strings are printable ASCII
 * without quotes or backslashes (no escapes), strategy names are short. */
#define WMAX_ENUM 32u
#define WMAX_STRING ((size_t)CTXC_CFG_SETTINGS_VALUE_BYTES + 1u)
#define WMAX_BOOL 5u
#define WMAX_RATIO 5u
#define WMAX_INT 10u
#define WORST_(id, key, type, ...) +(sizeof(key) + 7u + WMAX_##type)
_Static_assert(4u CTXC_SETTINGS_LIST(WORST_) <= CTXC_CFG_SETTINGS_FILE_BYTES,
               "CTXC_CFG_SETTINGS_FILE_BYTES is too small for a settings file "
               "with every setting at its longest value");
#undef WORST_
#define STRATEGY_NAME_FITS_(id, cfg, name)                                     \
    _Static_assert(sizeof(name) + 2u <= WMAX_ENUM, "strategy name too long");
CTXC_STRATEGY_LIST(STRATEGY_NAME_FITS_)
#undef STRATEGY_NAME_FITS_

const ctxc_setting_spec_t *ctxc_setting_spec(ctxc_setting_id_t id) {
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT) {
        return NULL;
    }
    return &ctxc_settings_registry[id];
}

static const ctxc_setting_spec_t *spec_of(ctxc_setting_id_t id) {
    return &ctxc_settings_registry[id];
}

static uint32_t bit(ctxc_setting_id_t id) { return (uint32_t)1u << id; }

/* ---- suggestions: optimal string alignment distance, ASCII case folded --- */

#define SUGGEST_MAX 64u /* longest candidate / typed text compared */

static char fold(char c) {
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static unsigned min3(unsigned a, unsigned b, unsigned c) {
    unsigned m = a < b ? a : b;
    return m < c ? m : c;
}

static unsigned edit_distance(const char *a, size_t an, const char *b,
                              size_t bn) {
    uint8_t rows[3][SUGGEST_MAX + 1];
    uint8_t *pp = rows[0], *prev = rows[1], *cur = rows[2];
    for (size_t j = 0; j <= bn; j++) {
        prev[j] = (uint8_t)j;
    }
    for (size_t i = 1; i <= an; i++) {
        cur[0] = (uint8_t)i;
        for (size_t j = 1; j <= bn; j++) {
            unsigned cost = fold(a[i - 1]) != fold(b[j - 1]);
            unsigned d =
                min3(prev[j] + 1u, cur[j - 1] + 1u, prev[j - 1] + cost);
            if (i > 1 && j > 1 && fold(a[i - 1]) == fold(b[j - 2]) &&
                fold(a[i - 2]) == fold(b[j - 1]) && pp[j - 2] + 1u < d) {
                d = pp[j - 2] + 1u;
            }
            cur[j] = (uint8_t)(d > 250u ? 250u : d);
        }
        uint8_t *t = pp;
        pp = prev;
        prev = cur;
        cur = t;
    }
    return prev[bn];
}

typedef const char *(*cand_fn)(const void *set, size_t i);

/* The candidate closest to typed[0..n): the smallest distance within a
 * limit that grows with the candidate's length, else the one candidate
 * that typed is a prefix of (at least 3 characters typed). */
static const char *closest(const char *typed, size_t n, cand_fn cand,
                           const void *set) {
    if (n == 0 || n > SUGGEST_MAX) {
        return NULL;
    }
    const char *best = NULL;
    unsigned best_d = 0;
    const char *prefix = NULL;
    size_t prefixes = 0;
    const char *c;
    for (size_t i = 0; (c = cand(set, i)) != NULL; i++) {
        size_t cn = strlen(c);
        if (cn > SUGGEST_MAX) {
            continue;
        }
        if (cn >= n && memcmp(c, typed, n) == 0) {
            prefix = c;
            prefixes++;
        }
        unsigned d = edit_distance(typed, n, c, cn);
        unsigned limit = cn <= 4 ? 1u : cn <= 10 ? 2u : 3u;
        if (d <= limit && d < n && (best == NULL || d < best_d)) {
            best = c;
            best_d = d;
        }
    }
    if (best == NULL && prefixes == 1 && n >= 3) {
        best = prefix;
    }
    return best;
}

/* A NUL-terminated text builder that keeps what fits (for messages). */
typedef struct {
    char *b;
    size_t cap; /* including the NUL */
    size_t n;
} sb_t;

static void sb_add(sb_t *s, const char *p) {
    while (*p != '\0' && s->n + 1 < s->cap) {
        s->b[s->n++] = *p++;
    }
    s->b[s->n] = '\0';
}

static const char *key_cand(const void *set, size_t i) {
    (void)set;
    return i < CTXC_SETTING_COUNT ? ctxc_settings_registry[i].key : NULL;
}

static const char *list_cand(const void *set, size_t i) {
    return ((const char *const *)set)[i];
}

const char *ctxc_setting_suggest(const char *typed) {
    if (typed == NULL) {
        return NULL;
    }
    return closest(typed, strlen(typed), key_cand, NULL);
}

/* Looks up a key given as a span of `kind` (raw or a JSON string body). */
static bool find_key(const char *p, size_t n, ctxc__src_kind_t kind,
                     ctxc_setting_id_t *id) {
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        const char *k = ctxc_settings_registry[i].key;
        if (ctxc__src_equals(p, n, kind, k, strlen(k))) {
            *id = (ctxc_setting_id_t)i;
            return true;
        }
    }
    return false;
}

static ctxc_status_t unknown_key(const char *p, size_t n, ctxc_error_t *err) {
    const char *near = closest(p, n, key_cand, NULL);
    if (near != NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "unknown setting %q; did you mean '%s'?", p, n, near);
    }
    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                      "unknown setting %q (/settings lists them)", p, n);
}

ctxc_status_t ctxc_setting_find(const char *key, ctxc_setting_id_t *id,
                                ctxc_error_t *err) {
    if (key == NULL || id == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "setting key is NULL");
    }
    size_t n = strlen(key);
    if (!find_key(key, n, CTXC__SRC_RAW, id)) {
        return unknown_key(key, n, err);
    }
    return CTXC_OK;
}

/* ---- value checks -------------------------------------------------------- */

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

ctxc_status_t ctxc_parse_ratio(const char *text, size_t len, uint16_t *out,
                               ctxc_error_t *err) {
    if (text == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "ratio: NULL argument");
    }
    size_t i = 0;
    uint32_t whole = 0;
    size_t int_digits = 0;
    while (i < len && is_digit(text[i])) {
        if (int_digits < 9) {
            whole = whole * 10u + (uint32_t)(text[i] - '0');
        }
        int_digits++;
        i++;
    }
    uint32_t frac = 0;
    size_t frac_digits = 0;
    bool extra = false; /* a non-zero digit after the third */
    if (i < len && text[i] == '.') {
        i++;
        while (i < len && is_digit(text[i])) {
            if (frac_digits < 3) {
                frac = frac * 10u + (uint32_t)(text[i] - '0');
            } else if (text[i] != '0') {
                extra = true;
            }
            frac_digits++;
            i++;
        }
        if (frac_digits == 0) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%q is not a number from 0 to 1 (a digit must "
                              "follow the decimal point)",
                              text, len);
        }
    }
    if (i != len || (int_digits == 0 && frac_digits == 0)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%q is not a number from 0 to 1 (write it like "
                          "0.75)",
                          text, len);
    }
    if (int_digits > 1 && text[0] == '0') {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%q: leading zeros are not allowed (write it like "
                          "0.75)",
                          text, len);
    }
    if (extra) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%q has more than 3 decimal places (the resolution "
                          "is 0.001)",
                          text, len);
    }
    for (size_t k = frac_digits; k < 3; k++) {
        frac *= 10u;
    }
    if (int_digits > 1 || whole > 1u || (whole == 1u && frac > 0u)) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%q is above 1 (a number from 0 to 1 is needed)",
                          text, len);
    }
    *out = (uint16_t)(whole * 1000u + frac);
    return CTXC_OK;
}

static ctxc_status_t parse_uint(const char *p, size_t n, uint32_t *out) {
    if (n == 0 || n > 10 || (n > 1 && p[0] == '0')) {
        return CTXC_E_INVALID_ARG;
    }
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) {
        if (!is_digit(p[i])) {
            return CTXC_E_INVALID_ARG;
        }
        v = v * 10u + (uint64_t)(p[i] - '0');
    }
    if (v > UINT32_MAX) {
        return CTXC_E_INVALID_ARG;
    }
    *out = (uint32_t)v;
    return CTXC_OK;
}

static bool name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           c == '.' || c == '_' || c == '-';
}

static bool valid_name(const char *p, size_t n, size_t max) {
    if (n == 0 || n > max || (n == 1 && p[0] == '.') ||
        (n == 2 && p[0] == '.' && p[1] == '.')) {
        return false;
    }
    for (size_t i = 0; i < n; i++) {
        if (!name_char(p[i])) {
            return false;
        }
    }
    return true;
}

static ctxc_status_t name_error(const char *what, const char *p, size_t n,
                                ctxc_error_t *err) {
    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                      "%s %q is not valid: use 1 to %u of A-Z a-z 0-9 . _ - "
                      "(not . or ..)",
                      what, p, n, (unsigned)CTXC_CFG_SETTINGS_PROFILE_NAME_MAX);
}

ctxc_status_t ctxc_profile_name_check(const char *name, ctxc_error_t *err) {
    if (name == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "profile name is NULL");
    }
    size_t n = strlen(name);
    if (!valid_name(name, n, CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)) {
        return name_error("profile name", name, n, err);
    }
    return CTXC_OK;
}

/* Prefixes of API keys as providers issue them: a value starting with one of
 * these is a key, not the name of where a key is kept. */
static const char *const SECRET_PREFIXES[] = {
    "sk-", "sk_", "AIza", "xai-", "gsk_", "ghp_", "github_pat_", "hf_", NULL};

static bool looks_like_secret(const char *p, size_t n) {
    for (size_t i = 0; SECRET_PREFIXES[i] != NULL; i++) {
        size_t k = strlen(SECRET_PREFIXES[i]);
        if (n > k && memcmp(p, SECRET_PREFIXES[i], k) == 0) {
            return true;
        }
    }
    /* long, random-looking: mixed case and digits, no separators */
    bool lower = false, upper = false, digit = false, sep = false;
    for (size_t i = 0; i < n; i++) {
        char c = p[i];
        lower |= c >= 'a' && c <= 'z';
        upper |= c >= 'A' && c <= 'Z';
        digit |= is_digit(c);
        sep |= c == '_' || c == '.';
    }
    return n >= 24 && lower && upper && digit && !sep;
}

static bool text_char(char c) {
    return c > ' ' && c < 0x7F && c != '"' && c != '\\';
}

static bool enum_index(const ctxc_setting_spec_t *sp, const char *p, size_t n,
                       uint32_t *out) {
    for (uint32_t i = 0; sp->values[i] != NULL; i++) {
        if (strlen(sp->values[i]) == n && memcmp(sp->values[i], p, n) == 0) {
            *out = i;
            return true;
        }
    }
    return false;
}

static ctxc_status_t enum_error(const ctxc_setting_spec_t *sp, const char *p,
                                size_t n, ctxc_error_t *err) {
    char allowed[96];
    sb_t o = {allowed, sizeof allowed, 0};
    allowed[0] = '\0';
    for (size_t i = 0; sp->values[i] != NULL; i++) {
        sb_add(&o, i > 0 ? ", " : "");
        sb_add(&o, sp->values[i]);
    }
    const char *near = closest(p, n, list_cand, sp->values);
    if (near != NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: invalid value %q; did you mean '%s'? (allowed: "
                          "%s)",
                          sp->key, p, n, near, allowed);
    }
    return ctxc__fail(err, CTXC_E_INVALID_ARG,
                      "%s: invalid value %q (allowed: %s)", sp->key, p, n,
                      allowed);
}

/* Checks text p[0..n) as a value of id; *num gets the number (ENUM index,
 * BOOL 0/1, RATIO thousandths, INT). Strings are not copied. */
static ctxc_status_t check_value(ctxc_setting_id_t id, const char *p, size_t n,
                                 uint32_t *num, ctxc_error_t *err) {
    const ctxc_setting_spec_t *sp = spec_of(id);
    *num = 0;
    switch (sp->type) {
    case CTXC_SETTING_TYPE_ENUM:
        if (!enum_index(sp, p, n, num)) {
            return enum_error(sp, p, n, err);
        }
        return CTXC_OK;
    case CTXC_SETTING_TYPE_BOOL:
        if (n == 4 && memcmp(p, "true", 4) == 0) {
            *num = 1;
            return CTXC_OK;
        }
        if (n == 5 && memcmp(p, "false", 5) == 0) {
            return CTXC_OK;
        }
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: invalid value %q (allowed: true, false)",
                          sp->key, p, n);
    case CTXC_SETTING_TYPE_RATIO: {
        uint16_t v = 0;
        ctxc_status_t st = ctxc_parse_ratio(p, n, &v, err);
        if (st == CTXC_OK && (v < sp->min || v > sp->max)) {
            st =
                ctxc__fail(err, CTXC_E_INVALID_ARG, "%q is out of range", p, n);
        }
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "%s", sp->key);
            return st;
        }
        *num = v;
        return CTXC_OK;
    }
    case CTXC_SETTING_TYPE_INT:
        if (parse_uint(p, n, num) != CTXC_OK || *num < sp->min ||
            *num > sp->max) {
            *num = 0;
            if (sp->max == UINT32_MAX) {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "%s: %q is not a whole number >= %u", sp->key,
                                  p, n, (unsigned)sp->min);
            }
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: %q is not a whole number from %u to %u",
                              sp->key, p, n, (unsigned)sp->min,
                              (unsigned)sp->max);
        }
        return CTXC_OK;
    case CTXC_SETTING_TYPE_STRING:
        break;
    }
    /* strings (a value of auth-key-name is never echoed: it may be a key) */
    if (n == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: the value is empty (to clear it, unset it)",
                          sp->key);
    }
    if (n >= CTXC_CFG_SETTINGS_VALUE_BYTES) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%s: the value is %z characters, longer than the "
                          "limit of %z",
                          sp->key, n,
                          (size_t)CTXC_CFG_SETTINGS_VALUE_BYTES - 1u);
    }
    switch (sp->check) {
    case CTXC_SETTING_CHECK_NAME:
        if (!valid_name(p, n, CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)) {
            ctxc_status_t st = name_error("profile name", p, n, err);
            ctxc__err_prefix(err, "%s", sp->key);
            return st;
        }
        return CTXC_OK;
    case CTXC_SETTING_CHECK_KEY_NAME:
        if (!valid_name(p, n, CTXC_CFG_SETTINGS_VALUE_BYTES - 1u)) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: give the name of an environment variable "
                              "or key file (A-Z a-z 0-9 _ . -); the value was "
                              "not stored",
                              sp->key);
        }
        if (looks_like_secret(p, n)) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: the value looks like an API key; give the "
                              "NAME of the environment variable or key file "
                              "holding it (the value was not stored)",
                              sp->key);
        }
        return CTXC_OK;
    case CTXC_SETTING_CHECK_URL:
    case CTXC_SETTING_CHECK_TEXT:
    case CTXC_SETTING_CHECK_NONE:
        break;
    }
    for (size_t i = 0; i < n; i++) {
        if (!text_char(p[i])) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: %q contains a space, quote, backslash, "
                              "control or non-ASCII character",
                              sp->key, p, n);
        }
    }
    if (sp->check == CTXC_SETTING_CHECK_URL) {
        bool http = n > 7 && memcmp(p, "http://", 7) == 0;
        bool https = n > 8 && memcmp(p, "https://", 8) == 0;
        if (!http && !https) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: %q must start with https:// or http:// "
                              "and name a host",
                              sp->key, p, n);
        }
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_setting_check(ctxc_setting_id_t id, const char *text,
                                 ctxc_error_t *err) {
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT || text == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "setting: bad argument");
    }
    uint32_t num;
    return check_value(id, text, strlen(text), &num, err);
}

/* ---- layers -------------------------------------------------------------- */

static void layer_clear(ctxc_settings_layer_t *l) {
    l->set = 0;
    memset(l->num, 0, sizeof l->num);
    for (size_t i = 0; i < sizeof l->str / sizeof l->str[0]; i++) {
        l->str[i][0] = '\0';
    }
}

static void layer_put(ctxc_settings_layer_t *l, ctxc_setting_id_t id,
                      uint32_t num, const char *p, size_t n) {
    const ctxc_setting_spec_t *sp = spec_of(id);
    l->num[id] = num;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        char *dst = l->str[sp->str_slot];
        memmove(dst, p, n);
        dst[n] = '\0';
    }
    l->set |= bit(id);
}

static void layer_unset(ctxc_settings_layer_t *l, ctxc_setting_id_t id) {
    const ctxc_setting_spec_t *sp = spec_of(id);
    l->set &= ~bit(id);
    l->num[id] = 0;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        l->str[sp->str_slot][0] = '\0';
    }
}

static bool layer_get(const ctxc_settings_layer_t *l, ctxc_setting_id_t id,
                      ctxc_setting_value_t *out) {
    if ((l->set & bit(id)) == 0) {
        return false;
    }
    const ctxc_setting_spec_t *sp = spec_of(id);
    out->num = l->num[id];
    out->str = NULL;
    if (sp->type == CTXC_SETTING_TYPE_STRING) {
        out->str = l->str[sp->str_slot];
    } else if (sp->type == CTXC_SETTING_TYPE_ENUM) {
        out->str = sp->values[out->num];
    }
    return true;
}

static bool default_get(ctxc_setting_id_t id, ctxc_setting_value_t *out) {
    const ctxc_setting_spec_t *sp = spec_of(id);
    if (sp->default_text == NULL) {
        return false;
    }
    uint32_t num;
    if (check_value(id, sp->default_text, strlen(sp->default_text), &num,
                    NULL) != CTXC_OK) {
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
        ok = layer_get(&s->ephemeral, id, out);
        break;
    case CTXC_SOURCE_PERSISTENT:
        ok = layer_get(&s->persistent, id, out);
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
    static const ctxc_setting_source_t order[] = {
        CTXC_SOURCE_EPHEMERAL, CTXC_SOURCE_PERSISTENT, CTXC_SOURCE_DEFAULT};
    for (size_t i = 0; i < sizeof order / sizeof order[0]; i++) {
        if (ctxc_settings_get_layer(s, id, order[i], out)) {
            return out->source;
        }
    }
    out->source = CTXC_SOURCE_UNSET;
    out->num = 0;
    out->str = NULL;
    return CTXC_SOURCE_UNSET;
}

static void put_uint(ctxc__sink_t *o, uint32_t v) {
    char tmp[10];
    size_t n = 0;
    do {
        tmp[n++] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v != 0u);
    while (n > 0) {
        ctxc__putc(o, tmp[--n]);
    }
}

static void put_ratio(ctxc__sink_t *o, uint32_t v) {
    if (v >= 1000u) {
        ctxc__putc(o, '1');
        return;
    }
    ctxc__putc(o, '0');
    if (v == 0u) {
        return;
    }
    char d[3] = {(char)('0' + v / 100u), (char)('0' + v / 10u % 10u),
                 (char)('0' + v % 10u)};
    size_t k = 3;
    while (d[k - 1] == '0') {
        k--;
    }
    ctxc__putc(o, '.');
    ctxc__put(o, d, k);
}

/* Writes the value as /set takes it (strings and enum values unquoted). */
static void put_value(ctxc__sink_t *o, ctxc_setting_id_t id, uint32_t num,
                      const char *str) {
    switch (spec_of(id)->type) {
    case CTXC_SETTING_TYPE_ENUM:
    case CTXC_SETTING_TYPE_STRING:
        if (str != NULL) {
            ctxc__put(o, str, strlen(str));
        }
        break;
    case CTXC_SETTING_TYPE_BOOL:
        if (num != 0u) {
            ctxc__put(o, "true", 4);
        } else {
            ctxc__put(o, "false", 5);
        }
        break;
    case CTXC_SETTING_TYPE_RATIO:
        put_ratio(o, num);
        break;
    case CTXC_SETTING_TYPE_INT:
        put_uint(o, num);
        break;
    }
}

size_t ctxc_setting_format(ctxc_setting_id_t id, const ctxc_setting_value_t *v,
                           char *buf, size_t cap) {
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT || v == NULL) {
        if (buf != NULL && cap > 0) {
            buf[0] = '\0';
        }
        return 0;
    }
    char tmp[CTXC_CFG_SETTINGS_VALUE_BYTES + 16];
    ctxc__sink_t o = {tmp, sizeof tmp, 0};
    put_value(&o, id, v->num, v->str);
    if (o.len > sizeof tmp) { /* a value longer than any stored one */
        o.len = 0;
    }
    if (buf != NULL && cap > 0) {
        size_t k = o.len < cap ? o.len : cap - 1;
        memcpy(buf, tmp, k);
        buf[k] = '\0';
    }
    return o.len;
}

/* ---- typed accessors ----------------------------------------------------- */

static void compiled_in(char *buf, size_t cap) {
    sb_t o = {buf, cap, 0};
    buf[0] = '\0';
    for (size_t i = 0; i < CTXC_STRATEGY_COUNT; i++) {
        const ctxc_strategy_t *st = ctxc_strategy_get((ctxc_strategy_id_t)i);
        if (st != NULL) {
            sb_add(&o, o.n > 0 ? ", " : "");
            sb_add(&o, st->name);
        }
    }
}

ctxc_status_t ctxc_settings_strategy(const ctxc_settings_store_t *s,
                                     const ctxc_strategy_t **out,
                                     ctxc_error_t *err) {
    if (s == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "strategy: NULL argument");
    }
    ctxc_setting_value_t v;
    char avail[96];
    ctxc_setting_source_t src =
        ctxc_settings_get(s, CTXC_SETTING_COMPRESSION_STRATEGY, &v);
    if (src != CTXC_SOURCE_UNSET &&
        ctxc_strategy_find(v.str, out, NULL) == CTXC_OK) {
        return CTXC_OK;
    }
    compiled_in(avail, sizeof avail);
    if (src == CTXC_SOURCE_UNSET) {
        return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                          "compression.strategy is not set (strategies of "
                          "this build: %s)",
                          avail);
    }
    return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                      "compression.strategy %q (%s) is not a strategy of "
                      "this build (available: %s)",
                      v.str, strlen(v.str), ctxc_setting_source_name(src),
                      avail);
}

/* The resolved number of a setting of type `type`; false when id is not
 * of that type or nothing resolves. */
static bool get_number(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                       ctxc_setting_type_t type, uint32_t *out) {
    ctxc_setting_value_t v;
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT ||
        spec_of(id)->type != type ||
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

uint16_t ctxc_settings_threshold(const ctxc_settings_store_t *s,
                                 const ctxc_strategy_t *strategy) {
    uint16_t v = 0;
    if (ctxc_settings_ratio(s, CTXC_SETTING_COMPRESSION_THRESHOLD, &v)) {
        return v;
    }
    return strategy != NULL ? strategy->trigger.default_threshold : 0;
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
           spec_of(id)->type == CTXC_SETTING_TYPE_BOOL &&
           ctxc_settings_get(s, id, &v) != CTXC_SOURCE_UNSET && v.num != 0u;
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

void ctxc_settings_density(const ctxc_settings_store_t *s,
                           ctxc_density_config_t *cfg) {
    uint32_t retention = 1;
    cfg->read_write_pruning =
        ctxc_settings_bool(s, CTXC_SETTING_DENSITY_READ_WRITE_PRUNING);
    cfg->file_dedupe = ctxc_settings_bool(s, CTXC_SETTING_DENSITY_FILE_DEDUPE);
    cfg->recency_pruning =
        ctxc_settings_bool(s, CTXC_SETTING_DENSITY_RECENCY_PRUNING);
    (void)ctxc_settings_int(s, CTXC_SETTING_DENSITY_RECENCY_RETENTION,
                            &retention);
    cfg->recency_retention = retention;
}

void ctxc_settings_strategy_values(const ctxc_settings_store_t *s,
                                   const ctxc_strategy_t *strategy,
                                   ctxc_strategy_values_t *out) {
    out->context_limit = ctxc_settings_context_limit(s);
    out->threshold = ctxc_settings_threshold(s, strategy);
    out->preserve_threshold = ctxc_settings_preserve_threshold(s);
    out->top_preserve_threshold = ctxc_settings_top_preserve_threshold(s);
    ctxc_settings_density(s, &out->density);
}

/* ---- files --------------------------------------------------------------- */

typedef void (*visit_fn)(void *user, ctxc_setting_id_t id, uint32_t num,
                         const char *p, size_t n);

static bool json_ws(char c) {
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static size_t skip_ws(const char *b, size_t len, size_t i) {
    while (i < len && json_ws(b[i])) {
        i++;
    }
    return i;
}

static const char *json_kind(char c) {
    switch (c) {
    case '"':
        return "a string";
    case '{':
        return "an object";
    case '[':
        return "an array";
    case 'n':
        return "null";
    case 't':
    case 'f':
        return "a boolean";
    default:
        return "a number";
    }
}

/* One value of a file: v[0..n) is the JSON value text (trimmed). */
static ctxc_status_t file_value(ctxc_setting_id_t id, const char *v, size_t n,
                                char *tmp, uint32_t *num, size_t *slen,
                                ctxc_error_t *err) {
    const ctxc_setting_spec_t *sp = spec_of(id);
    const char *want = NULL;
    switch (sp->type) {
    case CTXC_SETTING_TYPE_ENUM:
    case CTXC_SETTING_TYPE_STRING: {
        if (v[0] != '"') {
            want = "a string";
            break;
        }
        ctxc__sink_t o = {tmp, CTXC_CFG_SETTINGS_VALUE_BYTES - 1u, 0};
        ctxc_status_t st =
            ctxc__write_decoded(&o, v + 1, n - 2, CTXC__SRC_JSTR, err);
        if (st != CTXC_OK) {
            return st;
        }
        if (o.len > o.cap) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%s: the value is %z bytes, longer than the "
                              "limit of %z",
                              sp->key, o.len, o.cap);
        }
        *slen = o.len;
        return check_value(id, tmp, o.len, num, err);
    }
    case CTXC_SETTING_TYPE_BOOL:
        if (v[0] != 't' && v[0] != 'f') {
            want = "true or false";
            break;
        }
        return check_value(id, v, n, num, err);
    case CTXC_SETTING_TYPE_RATIO:
    case CTXC_SETTING_TYPE_INT:
        if (v[0] != '-' && !is_digit(v[0])) {
            want = "a number";
            break;
        }
        return check_value(id, v, n, num, err);
    }
    return ctxc__fail(err, CTXC_E_INVALID_ARG, "%s: expected %s, got %s",
                      sp->key, want, json_kind(v[0]));
}

static ctxc_status_t as_parse_error(ctxc_status_t st, ctxc_error_t *err) {
    if (st == CTXC_E_INVALID_ARG) {
        st = CTXC_E_PARSE;
        if (err != NULL) {
            err->status = st;
        }
    }
    return st;
}

/* Parses a settings or profile file: a flat JSON object of registered keys.
 * With visit == NULL it only checks; *present gets the keys it holds. */
static ctxc_status_t parse_file(const char *b, size_t len, visit_fn visit,
                                void *user, uint32_t *present,
                                ctxc_error_t *err) {
    ctxc__sink_t none = {NULL, 0, 0};
    ctxc_status_t st = ctxc__json_canon(b, len, CTXC__SRC_RAW,
                                        CTXC_CFG_JSON_MAX_DEPTH, &none, err);
    if (st != CTXC_OK) {
        return st;
    }
    uint32_t seen = 0;
    size_t i = skip_ws(b, len, 0);
    if (b[i] != '{') {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "expected a JSON object {\"key\": value, ...}, got "
                          "%s",
                          json_kind(b[i]));
    }
    i = skip_ws(b, len, i + 1);
    while (b[i] != '}') {
        /* the JSON is valid: b[i] opens a key string */
        size_t kend = ctxc__json_skip_value(b, len, i);
        const char *kp = b + i + 1;
        size_t kn = kend - i - 2;
        i = skip_ws(b, len, kend);  /* ':' */
        i = skip_ws(b, len, i + 1); /* the value */
        size_t vend = ctxc__json_skip_value(b, len, i);
        size_t vn = vend - i;
        while (vn > 0 && json_ws(b[i + vn - 1])) {
            vn--;
        }
        ctxc_setting_id_t id;
        if (!find_key(kp, kn, CTXC__SRC_JSTR, &id)) {
            return as_parse_error(unknown_key(kp, kn, err), err);
        }
        if ((seen & bit(id)) != 0) {
            return ctxc__fail(err, CTXC_E_PARSE, "key '%s' appears twice",
                              spec_of(id)->key);
        }
        char tmp[CTXC_CFG_SETTINGS_VALUE_BYTES];
        uint32_t num = 0;
        size_t slen = 0;
        st = file_value(id, b + i, vn, tmp, &num, &slen, err);
        if (st != CTXC_OK) {
            return as_parse_error(st, err);
        }
        seen |= bit(id);
        if (visit != NULL) {
            visit(user, id, num, tmp, slen);
        }
        i = skip_ws(b, len, vend);
        if (b[i] == ',') {
            i = skip_ws(b, len, i + 1);
        }
    }
    if (present != NULL) {
        *present = seen;
    }
    return CTXC_OK;
}

static void visit_layer(void *user, ctxc_setting_id_t id, uint32_t num,
                        const char *p, size_t n) {
    layer_put((ctxc_settings_layer_t *)user, id, num, p, n);
}

/* Reads `path` into s->buf. The port's CTXC_E_NO_SPACE becomes
 * CTXC_E_TOO_LARGE naming the limit. */
static ctxc_status_t read_text(ctxc_settings_store_t *s, const char *path,
                               size_t *len, ctxc_error_t *err) {
    ctxc_status_t st =
        ctxc_fs_read(&s->fs, path, s->buf, sizeof s->buf, len, err);
    if (st == CTXC_E_NO_SPACE) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "%s: larger than the %z bytes of "
                          "CTXC_CFG_SETTINGS_FILE_BYTES",
                          path, sizeof s->buf);
    }
    return st;
}

/* Reads and checks a file; CTXC_OK leaves the text in s->buf[0..*len). */
static ctxc_status_t read_checked(ctxc_settings_store_t *s, const char *path,
                                  size_t *len, uint32_t *present,
                                  ctxc_error_t *err) {
    ctxc_status_t st = read_text(s, path, len, err);
    if (st == CTXC_OK) {
        st = parse_file(s->buf, *len, NULL, NULL, present, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "%s", path);
        }
    }
    return st;
}

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
    ctxc_status_t st = read_checked(s, CTXC_SETTINGS_FILE, &len, NULL, &e);
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
    (void)parse_file(s->buf, len, visit_layer, &s->persistent, NULL, NULL);
    s->file_bad = false;
    return CTXC_OK;
}

void ctxc_settings_init(ctxc_settings_store_t *s, const ctxc_fs_t *fs) {
    memset(s, 0, sizeof *s);
    if (fs != NULL) {
        s->fs = *fs;
    }
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

/* Writes the layered values as a file into s->buf: for each key in `mask`,
 * the value of `a`, else of `b` (may be NULL); key `ov` (or
 * CTXC_SETTING_COUNT for none) takes num/str instead, or is left out when
 * ov_unset. */
typedef struct {
    const ctxc_settings_layer_t *a, *b;
    uint32_t mask;
    ctxc_setting_id_t ov;
    bool ov_unset;
    uint32_t ov_num;
    const char *ov_str;
} ser_t;

static ctxc_status_t serialize(ctxc_settings_store_t *s, const ser_t *w,
                               size_t *len, size_t *count, ctxc_error_t *err) {
    ctxc__sink_t o = {s->buf, sizeof s->buf, 0};
    size_t n = 0;
    ctxc__putc(&o, '{');
    for (size_t k = 0; k < CTXC_SETTING_COUNT; k++) {
        ctxc_setting_id_t id = (ctxc_setting_id_t)k;
        ctxc_setting_value_t v;
        if (id == w->ov) {
            if (w->ov_unset) {
                continue;
            }
            v.num = w->ov_num;
            v.str = w->ov_str;
            if (spec_of(id)->type == CTXC_SETTING_TYPE_ENUM) {
                v.str = spec_of(id)->values[v.num];
            }
        } else if ((w->mask & bit(id)) == 0 ||
                   !(layer_get(w->a, id, &v) ||
                     (w->b != NULL && layer_get(w->b, id, &v)))) {
            continue;
        }
        const ctxc_setting_spec_t *sp = spec_of(id);
        ctxc__put(&o, n == 0 ? "\n  " : ",\n  ", n == 0 ? 3 : 4);
        (void)ctxc__json_write_string(&o, sp->key, strlen(sp->key),
                                      CTXC__SRC_RAW, NULL);
        ctxc__put(&o, ": ", 2);
        if (sp->type == CTXC_SETTING_TYPE_ENUM ||
            sp->type == CTXC_SETTING_TYPE_STRING) {
            (void)ctxc__json_write_string(&o, v.str, strlen(v.str),
                                          CTXC__SRC_RAW, NULL);
        } else {
            put_value(&o, id, v.num, NULL);
        }
        n++;
    }
    ctxc__put(&o, n == 0 ? "}\n" : "\n}\n", n == 0 ? 2 : 3);
    if (o.len > o.cap) {
        return ctxc__fail_space(err, o.len - o.cap,
                                "the file text needs %z bytes, more than the "
                                "%z of CTXC_CFG_SETTINGS_FILE_BYTES",
                                o.len, o.cap);
    }
    *len = o.len;
    if (count != NULL) {
        *count = n;
    }
    return CTXC_OK;
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
        st = check_value(id, value, vn, &num, err);
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
    if (value == NULL && (s->persistent.set & bit(id)) == 0) {
        return CTXC_OK; /* nothing to remove: the file stays as it is */
    }
    ser_t w = {&s->persistent, NULL, UINT32_MAX, id, value == NULL, num, value};
    size_t len = 0;
    st = serialize(s, &w, &len, NULL, err);
    if (st == CTXC_OK) {
        st = ctxc_fs_write_atomic(&s->fs, CTXC_SETTINGS_FILE, s->buf, len, err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    if (value == NULL) {
        layer_unset(&s->persistent, id);
    } else {
        layer_put(&s->persistent, id, num, value, vn);
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
        st = check_value(id, value, n, &num, err);
    }
    if (st == CTXC_OK) {
        layer_put(&s->ephemeral, id, num, value, n);
        s->from_profile &= ~bit(id);
    }
    return st;
}

ctxc_status_t ctxc_settings_unset(ctxc_settings_store_t *s, const char *key,
                                  ctxc_error_t *err) {
    if (s == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "settings: NULL argument");
    }
    ctxc_setting_id_t id;
    ctxc_status_t st = ctxc_setting_find(key, &id, err);
    if (st == CTXC_OK) {
        layer_unset(&s->ephemeral, id);
        s->from_profile &= ~bit(id);
    }
    return st;
}

/* ---- profiles ------------------------------------------------------------ */

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
    path[o.len] = '\0';
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

static uint32_t persist_mask(void) {
    uint32_t m = 0;
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        if (ctxc_settings_registry[i].persist_to_profile) {
            m |= bit((ctxc_setting_id_t)i);
        }
    }
    return m;
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
    st = read_checked(s, path, &len, NULL, err);
    if (st != CTXC_OK && st != CTXC_E_NOT_FOUND) {
        ctxc__err_prefix(err, "not overwriting it (delete the profile first)");
        if (err != NULL) {
            err->status = CTXC_E_EXISTS;
        }
        return CTXC_E_EXISTS;
    }
    ser_t w = {&s->ephemeral,
               &s->persistent,
               persist_mask(),
               CTXC_SETTING_COUNT,
               false,
               0,
               NULL};
    st = serialize(s, &w, &len, count, err);
    if (st == CTXC_OK) {
        st = ctxc_fs_write_atomic(&s->fs, path, s->buf, len, err);
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

ctxc_status_t ctxc_settings_profile_load(ctxc_settings_store_t *s,
                                         const char *name, ctxc_error_t *err) {
    char path[PROFILE_PATH_MAX];
    ctxc_status_t st = profile_target(s, name, path, err);
    if (st != CTXC_OK) {
        return st;
    }
    size_t len = 0;
    uint32_t present = 0;
    st = read_checked(s, path, &len, &present, err);
    if (st == CTXC_E_NOT_FOUND) {
        return profile_not_found(name, path, "", err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    uint32_t pm = persist_mask();
    for (size_t i = 0; i < CTXC_SETTING_COUNT; i++) {
        if ((pm & bit((ctxc_setting_id_t)i)) != 0) {
            layer_unset(&s->ephemeral, (ctxc_setting_id_t)i);
        }
    }
    (void)parse_file(s->buf, len, visit_layer, &s->ephemeral, NULL, NULL);
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
    if (!valid_name(name, n, CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)) {
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
            copy_error(err, &e);
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

static char *ref_field(ctxc_provider_ref_t *r, ctxc_setting_id_t id) {
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
    (void)num;
    char *dst = ref_field(((ref_visit_t *)user)->out, id);
    if (dst != NULL) {
        copy_str(dst, CTXC_CFG_SETTINGS_VALUE_BYTES, p, n);
    }
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
        return CTXC_OK;
    }
    copy_str(out->profile, sizeof out->profile, name, strlen(name));
    char path[PROFILE_PATH_MAX];
    ctxc_status_t st = profile_path(out->profile, path, err);
    size_t len = 0;
    if (st == CTXC_OK) {
        st = read_checked(s, path, &len, NULL, err);
    }
    if (st == CTXC_E_NOT_FOUND) {
        return profile_not_found(out->profile, path,
                                 "compression.profile: ", err);
    }
    if (st != CTXC_OK) {
        return st;
    }
    ref_visit_t rv = {out};
    (void)parse_file(s->buf, len, visit_ref, &rv, NULL, NULL);
    return CTXC_OK;
}
