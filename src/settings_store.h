/*
 * ctxc — the layer operations of the settings store (settings_store.c) that
 * the profiles (settings_profile.c) use. Private; not installed.
 */
#ifndef CTXC_SETTINGS_STORE_H
#define CTXC_SETTINGS_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/settings.h"

/* Sets `id` in layer l to num and, for a STRING, the text p[0..n) (n below
 * CTXC_CFG_SETTINGS_VALUE_BYTES; checked by the caller). */
void ctxc__layer_put(ctxc_settings_layer_t *l, ctxc_setting_id_t id,
                     uint32_t num, const char *p, size_t n);

/* Clears `id` in layer l. */
void ctxc__layer_unset(ctxc_settings_layer_t *l, ctxc_setting_id_t id);

/* The value of `id` in layer l (out->source is not set); false when l does
 * not hold it. */
bool ctxc__layer_get(const ctxc_settings_layer_t *l, ctxc_setting_id_t id,
                     ctxc_setting_value_t *out);

/* A ctxc__settings_visit_fn (settings_file.h) that puts each value of a
 * file into the layer `user` points to. */
void ctxc__layer_visit(void *user, ctxc_setting_id_t id, uint32_t num,
                       const char *p, size_t n);

/* The store's strategy guard (ctxc_settings_set_strategy_guard) for a
 * change that sets `id` to the checked value num: CTXC_OK when id is not
 * compression.strategy or no guard is installed, else the guard's answer. */
ctxc_status_t ctxc__strategy_guard(const ctxc_settings_store_t *s,
                                   ctxc_setting_id_t id, uint32_t num,
                                   ctxc_error_t *err);

#endif /* CTXC_SETTINGS_STORE_H */
