/*
 * ctxc — the settings file format (settings_file.c) as the store
 * (settings_store.c) and the profiles (settings_profile.c) use it: read and
 * check a file, hand its values to a visitor, write values as a file. All
 * text goes through the store's buffer s->buf. Private; not installed.
 */
#ifndef CTXC_SETTINGS_FILE_H
#define CTXC_SETTINGS_FILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/settings.h"

/* Receives one checked value of a file: num as ctxc_setting_value_t.num;
 * p[0..n) the decoded text of a STRING or ENUM value (not NUL-terminated). */
typedef void (*ctxc__settings_visit_fn)(void *user, ctxc_setting_id_t id,
                                        uint32_t num, const char *p, size_t n);

/* Parses the text of a settings or profile file b[0..len): a flat JSON
 * object of registered keys, each once, with valid values. Checks all of it
 * first, then (visit != NULL) calls visit for each value in file order.
 * *present (may be NULL) gets the keys it holds. Errors: CTXC_E_PARSE
 * (JSON, unknown or repeated key, wrong type, invalid value), CTXC_E_UTF8,
 * CTXC_E_TOO_DEEP; nothing is visited then. */
ctxc_status_t ctxc__settings_parse(const char *b, size_t len,
                                   ctxc__settings_visit_fn visit, void *user,
                                   ctxc_setting_bits_t *present,
                                   ctxc_error_t *err);

/* Reads `path` into s->buf and checks it (as ctxc__settings_parse, no
 * visit); CTXC_OK leaves the text in s->buf[0..*len). Errors: the port's
 * (CTXC_E_NOT_FOUND when there is no file), CTXC_E_TOO_LARGE (larger than
 * the buffer), the parse errors prefixed with the path. */
ctxc_status_t ctxc__settings_read(ctxc_settings_store_t *s, const char *path,
                                  size_t *len, ctxc_setting_bits_t *present,
                                  ctxc_error_t *err);

/* The value of `id` to write, or false to leave the key out. */
typedef bool (*ctxc__settings_value_fn)(const void *user, ctxc_setting_id_t id,
                                        ctxc_setting_value_t *v);

/* Writes the text of a file into s->buf[0..*len): every key, in registry
 * order, for which value() answers true. *count (may be NULL) = the keys
 * written. Errors: CTXC_E_NO_SPACE (larger than the buffer). */
ctxc_status_t ctxc__settings_format(ctxc_settings_store_t *s,
                                    ctxc__settings_value_fn value,
                                    const void *user, size_t *len,
                                    size_t *count, ctxc_error_t *err);

/* The store's file buffer: none when CTXC_CFG_SETTINGS_FILE_BYTES is 0 (a
 * store without files, whose filesystem is never used). */
#if CTXC_CFG_SETTINGS_FILE_BYTES > 0
#define CTXC__SETTINGS_BUF(s) ((s)->buf)
#else
#define CTXC__SETTINGS_BUF(s) ((void)(s), (char *)NULL)
#endif
#define CTXC__SETTINGS_BUF_BYTES ((size_t)CTXC_CFG_SETTINGS_FILE_BYTES)

#endif /* CTXC_SETTINGS_FILE_H */
