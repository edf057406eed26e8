/*
 * ctxc — what the settings registry (settings_registry.c) gives the other
 * settings files: spans of key text looked up, values parsed from and
 * written as text. Private; not installed.
 */
#ifndef CTXC_SETTINGS_REGISTRY_H
#define CTXC_SETTINGS_REGISTRY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/settings.h"
#include "json.h"
#include "sink.h"

/* The spec of a valid id (no range check). */
static inline const ctxc_setting_spec_t *ctxc__spec(ctxc_setting_id_t id) {
    return &ctxc_settings_registry[id];
}

/* The bit of `id` in a set of keys (a layer's `set`, a file's keys). */
_Static_assert(CTXC_SETTING_COUNT <= 64,
               "a settings layer keeps one bit per setting in a "
               "ctxc_setting_bits_t: 64 settings at most");
static inline ctxc_setting_bits_t ctxc__setting_bit(ctxc_setting_id_t id) {
    return (ctxc_setting_bits_t)1u << id;
}

/* Looks up a key given as the span p[0..n) of `kind` (raw or a JSON string
 * body); false when it is not a registered key. */
bool ctxc__setting_lookup(const char *p, size_t n, ctxc__src_kind_t kind,
                          ctxc_setting_id_t *id);

/* The error for an unknown key p[0..n): CTXC_E_INVALID_ARG, with the
 * closest registered key when there is one. */
ctxc_status_t ctxc__setting_unknown(const char *p, size_t n, ctxc_error_t *err);

/* The number of sp's default (a whole number, ratio or boolean), what
 * ctxc__setting_parse() gives for it without its checks, messages and
 * dispatch: the session reads a dozen settings a turn, most of them
 * defaults, and the full parse of each was a third of a short turn's
 * instructions. The registry's own texts only (test_settings compares
 * every default with the full parse); false for another type. */
bool ctxc__setting_default_num(const ctxc_setting_spec_t *sp, uint32_t *num);

/* Checks text p[0..n) as a value of id; *num gets the number (ENUM index,
 * BOOL 0/1, RATIO thousandths, INT). Strings are not copied. Errors: as
 * ctxc_setting_check(). */
ctxc_status_t ctxc__setting_parse(ctxc_setting_id_t id, const char *p, size_t n,
                                  uint32_t *num, ctxc_error_t *err);

/* Writes a value as /set takes it (strings and enum values unquoted; `str`
 * is read for ENUM and STRING only). */
void ctxc__setting_put(ctxc__sink_t *o, ctxc_setting_id_t id, uint32_t num,
                       const char *str);

/* The values of ENUM setting sp this build accepts (a strategy left out of
 * the build is not), ", "-separated, NUL-terminated, cut to cap. */
void ctxc__setting_allowed(const ctxc_setting_spec_t *sp, char *buf,
                           size_t cap);

/* p[0..n) is 1..max characters of [A-Za-z0-9._-], not "." or "..". */
bool ctxc__setting_name_valid(const char *p, size_t n, size_t max);

/* " openai anthropic gemini": the provider APIs of this build, each name
 * after a space ("" when the build has none). */
const char *ctxc__setting_providers(void);

#endif /* CTXC_SETTINGS_REGISTRY_H */
