/*
 * ctxc — settings: the registry (CTXC_SETTINGS_LIST expanded into specs),
 * key lookup with suggestions, and the text of a value: parsing, checking
 * and formatting it (see include/ctxc/settings.h). Nothing here knows of a
 * store, a file or the strategies.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/provider.h"
#include "ctxc/strategy.h"
#include "error.h"
#include "json.h"
#include "settings_registry.h"
#include "sink.h"
#include "tool_roles.h"

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

#if CTXC_CFG_COMMANDS
#define TEXT_(t) t
#else
#define TEXT_(t) NULL /* the help texts are for the command layer only */
#endif

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
     TEXT_(cat),                                                               \
     TEXT_(hint),                                                              \
     TEXT_(desc)},
    CTXC_SETTINGS_LIST(SPEC_)
#undef SPEC_
};

_Static_assert(CTXC_SETTING_COUNT <= 64,
               "a layer keeps its set keys in 64 bits");
_Static_assert(CTXC_SETTINGS_STRING_COUNT < 0xFF, "string slots fit 8 bits");

const ctxc_setting_spec_t *ctxc_setting_spec(ctxc_setting_id_t id) {
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT) {
        return NULL;
    }
    return &ctxc_settings_registry[id];
}

/* ---- suggestions: optimal string alignment distance, ASCII case folded --- */

#define SUGGEST_MAX 64u /* longest candidate / typed text compared */

CTXC__NOINLINE static char fold(char c) {
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
bool ctxc__setting_lookup(const char *p, size_t n, ctxc__src_kind_t kind,
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

ctxc_status_t ctxc__setting_unknown(const char *p, size_t n,
                                    ctxc_error_t *err) {
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
    if (!ctxc__setting_lookup(key, n, CTXC__SRC_RAW, id)) {
        return ctxc__setting_unknown(key, n, err);
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

bool ctxc__setting_name_valid(const char *p, size_t n, size_t max) {
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
    if (!ctxc__setting_name_valid(name, n,
                                  CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)) {
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

/* Which strategies this build has, by ctxc_strategy_id_t (the indexes of
 * compression.strategy's values). */
static const bool strategy_in_build[CTXC_STRATEGY_COUNT] = {
#define IN_BUILD_(id, cfg, name) (cfg) != 0,
    CTXC_STRATEGY_LIST(IN_BUILD_)
#undef IN_BUILD_
};

/* Value i of sp is one this build has (every value but a strategy's that
 * is left out). */
CTXC__NOINLINE static bool value_in_build(const ctxc_setting_spec_t *sp,
                                          uint32_t i) {
    return sp->values != ctxc_strategy_names || i >= CTXC_STRATEGY_COUNT ||
           strategy_in_build[i];
}

void ctxc__setting_allowed(const ctxc_setting_spec_t *sp, char *buf,
                           size_t cap) {
    ctxc__sink_t o = {buf, cap - 1u, 0};
    for (uint32_t i = 0; sp->values[i] != NULL; i++) {
        if (value_in_build(sp, i)) {
            ctxc__puts(&o, o.len > 0 ? ", " : "");
            ctxc__puts(&o, sp->values[i]);
        }
    }
    (void)ctxc__sink_cstr(&o);
}

static ctxc_status_t enum_error(const ctxc_setting_spec_t *sp, const char *p,
                                size_t n, ctxc_error_t *err) {
    char allowed[96];
    ctxc__setting_allowed(sp, allowed, sizeof allowed);
    const char *near = closest(p, n, list_cand, sp->values);
    if (near != NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "invalid value %q; did you mean '%s'? (allowed: "
                          "%s)",
                          p, n, near, allowed);
    }
    return ctxc__fail(err, CTXC_E_INVALID_ARG, "invalid value %q (allowed: %s)",
                      p, n, allowed);
}

/* " openai anthropic gemini": the providers of this build (a space before
 * each name; "" when there is none). */
#define CTXC_PV_NAME_(id, cfg, name) CTXC_PV_STR_(cfg, " " name)
#define CTXC_PV_STR_(cfg, s) CTXC_PV_STR2_(cfg, s)
#define CTXC_PV_STR2_(cfg, s) CTXC_PV_STR_##cfg(s)
#define CTXC_PV_STR_0(s)
#define CTXC_PV_STR_1(s) s
static const char provider_names[] = "" CTXC_PROVIDER_LIST(CTXC_PV_NAME_);
#undef CTXC_PV_NAME_

const char *ctxc__setting_providers(void) { return provider_names; }

/* ctxc__setting_parse() but its messages without the "KEY: " prefix the
 * caller adds. */
CTXC__NOINLINE static ctxc_status_t parse_value(const ctxc_setting_spec_t *sp,
                                                const char *p, size_t n,
                                                uint32_t *num,
                                                ctxc_error_t *err) {
    switch (sp->type) {
    case CTXC_SETTING_TYPE_ENUM:
        if (!enum_index(sp, p, n, num)) {
            return enum_error(sp, p, n, err);
        }
        if (!value_in_build(sp, *num)) {
            /* the list first: a short message buffer cuts the end */
#define CTXC_STRATEGY_CFG_(id, cfg, name) #cfg,
            static const char *const cfg_names[] = {
                CTXC_STRATEGY_LIST(CTXC_STRATEGY_CFG_)};
#undef CTXC_STRATEGY_CFG_
            char allowed[96];
            ctxc__setting_allowed(sp, allowed, sizeof allowed);
            const char *cfg =
                *num < sizeof cfg_names / sizeof cfg_names[0] ? cfg_names[*num]
                                                              : "?";
            *num = 0;
            /* 118 bytes with the key for the longest case of a default
             * build: whole in a 128-byte message */
            return ctxc__fail(err, CTXC_E_UNKNOWN_STRATEGY,
                              "%q is not built in (built: %s; %s=0)", p, n,
                              allowed, cfg);
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
                          "invalid value %q (allowed: true, false)", p, n);
    case CTXC_SETTING_TYPE_RATIO: {
        uint16_t v = 0;
        ctxc_status_t st = ctxc_parse_ratio(p, n, &v, err);
        if (st == CTXC_OK && (v < sp->min || v > sp->max)) {
            st =
                ctxc__fail(err, CTXC_E_INVALID_ARG, "%q is out of range", p, n);
        }
        if (st != CTXC_OK) {
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
                                  "%q is not a whole number >= %u", p, n,
                                  (unsigned)sp->min);
            }
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%q is not a whole number from %u to %u", p, n,
                              (unsigned)sp->min, (unsigned)sp->max);
        }
        return CTXC_OK;
    case CTXC_SETTING_TYPE_STRING:
        break;
    }
    /* strings (a value of auth-key-name is never echoed: it may be a key) */
    if (n == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "the value is empty (to clear it, unset it)");
    }
    if (n >= CTXC_CFG_SETTINGS_VALUE_BYTES) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "the value is %z characters, longer than the "
                          "limit of %z",
                          n, (size_t)CTXC_CFG_SETTINGS_VALUE_BYTES - 1u);
    }
    switch (sp->check) {
    case CTXC_SETTING_CHECK_NAME:
        if (!ctxc__setting_name_valid(p, n,
                                      CTXC_CFG_SETTINGS_PROFILE_NAME_MAX)) {
            return name_error("profile name", p, n, err);
        }
        return CTXC_OK;
    case CTXC_SETTING_CHECK_KEY_NAME:
        if (!ctxc__setting_name_valid(p, n,
                                      CTXC_CFG_SETTINGS_VALUE_BYTES - 1u)) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "give the name of an environment variable "
                              "or key file (A-Z a-z 0-9 _ . -); the value was "
                              "not stored");
        }
        if (looks_like_secret(p, n)) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "the value looks like an API key; give the "
                              "NAME of the environment variable or key file "
                              "holding it (the value was not stored)");
        }
        return CTXC_OK;
    case CTXC_SETTING_CHECK_VOCABS:
    case CTXC_SETTING_CHECK_TOOLS:
        return CTXC_OK; /* ctxc__setting_parse() checks them */
    case CTXC_SETTING_CHECK_PROVIDER: {
        const char *names = ctxc__setting_providers();
        for (const char *q = names; (q = strchr(q, ' ')) != NULL;) {
            q++;
            size_t k = strcspn(q, " ");
            if (k == n && memcmp(q, p, n) == 0) {
                return CTXC_OK;
            }
        }
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%q is not a provider of this build (compiled "
                          "in:%s)",
                          p, n, names[0] != '\0' ? names : " none");
    }
    case CTXC_SETTING_CHECK_URL:
    case CTXC_SETTING_CHECK_TEXT:
    case CTXC_SETTING_CHECK_PATH:
    case CTXC_SETTING_CHECK_NONE:
        break;
    }
    for (size_t i = 0; i < n; i++) {
        if (!text_char(p[i])) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%q contains a space, quote, backslash, "
                              "control or non-ASCII character",
                              p, n);
        }
    }
    if (sp->check == CTXC_SETTING_CHECK_PATH && p[0] != '/') {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "%q must be an absolute path (starting with /)", p,
                          n);
    }
    if (sp->check == CTXC_SETTING_CHECK_URL) {
        bool http = n > 7 && memcmp(p, "http://", 7) == 0;
        bool https = n > 8 && memcmp(p, "https://", 8) == 0;
        if (!http && !https) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "%q must start with https:// or http:// "
                              "and name a host",
                              p, n);
        }
    }
    return CTXC_OK;
}

/* The "KEY: " prefix of a value's messages. An array, not a literal: GNU
 * ld's map lists this function's string section with the size of
 * parse_value's merged strings, which minimal_size.py would count twice. */
static const char KEY_PREFIX[] = "%s";

/* Checks text p[0..n) as a value of id; *num gets the number (ENUM index,
 * BOOL 0/1, RATIO thousandths, INT). Strings are not copied. */
bool ctxc__setting_default_num(const ctxc_setting_spec_t *sp, uint32_t *num) {
    const char *p = sp->default_text;
    size_t n = strlen(p);
    uint16_t v = 0;
    switch (sp->type) {
    case CTXC_SETTING_TYPE_BOOL:
        *num = p[0] == 't';
        return true;
    case CTXC_SETTING_TYPE_INT:
        return parse_uint(p, n, num) == CTXC_OK;
    case CTXC_SETTING_TYPE_RATIO:
        *num = 0;
        if (ctxc_parse_ratio(p, n, &v, NULL) != CTXC_OK) {
            return false;
        }
        *num = v;
        return true;
    case CTXC_SETTING_TYPE_ENUM:
    case CTXC_SETTING_TYPE_STRING:
        break;
    }
    return false;
}

ctxc_status_t ctxc__setting_parse(ctxc_setting_id_t id, const char *p, size_t n,
                                  uint32_t *num, ctxc_error_t *err) {
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    *num = 0;
    ctxc_status_t st = parse_value(sp, p, n, num, err);
    if (st != CTXC_OK) {
        ctxc__err_prefix(err, KEY_PREFIX, sp->key);
        return st;
    }
    /* the checks whose messages name the key themselves (or need none) */
    if (sp->check == CTXC_SETTING_CHECK_VOCABS) {
        uint32_t off;
        return ctxc__tool_vocabs_parse(p, n, &off, err);
    }
    if (sp->check == CTXC_SETTING_CHECK_TOOLS) {
        return ctxc__tool_user_check(sp->key, p, n, err);
    }
    return CTXC_OK;
}

ctxc_status_t ctxc_setting_check(ctxc_setting_id_t id, const char *text,
                                 ctxc_error_t *err) {
    if ((unsigned)id >= (unsigned)CTXC_SETTING_COUNT || text == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "setting: bad argument");
    }
    uint32_t num;
    return ctxc__setting_parse(id, text, strlen(text), &num, err);
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
void ctxc__setting_put(ctxc__sink_t *o, ctxc_setting_id_t id, uint32_t num,
                       const char *str) {
    switch (ctxc__spec(id)->type) {
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
        ctxc__put_uint(o, num);
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
    ctxc__setting_put(&o, id, v->num, v->str);
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
