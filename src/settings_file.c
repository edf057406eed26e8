/*
 * ctxc — settings: the file format of settings.json and
 * profiles/<name>.json (see include/ctxc/settings.h): a flat JSON object
 * {"key": value} of registered keys, read, checked and written.
 *
 * Files are read into the store's buffer and parsed twice: a first pass
 * checks everything (the JSON through the one scanner, ctxc__json_scan,
 * into a fixed array of tokens on the stack, then every key and value), a
 * second pass, which cannot fail, hands the values to a visitor.
 * So a bad file never changes a layer half-way, and no second layer is
 * needed. Nothing here knows of layers or profiles.
 */
#include <string.h>

#include "error.h"
#include "json.h"
#include "json_tok.h"
#include "settings_file.h"
#include "settings_registry.h"
#include "sink.h"

/* The file buffer's minimum (CTXC_SETTINGS_FILE_MIN_BYTES) is checked in
 * ctxc/settings.h, where an application sees it too. */

/* Tokens a settings file is read into, on the stack (31 with the 14
 * settings of the registry: 620 bytes, 744 on 64-bit hosts). A file the
 * store accepts has the object, and a key and a scalar value per setting: at
 * most 1 + 2 * CTXC_SETTING_COUNT tokens. The walk below stops at the first
 * bad member; the members before it are good (registered keys, each once,
 * scalar values: two tokens each), so there are at most CTXC_SETTING_COUNT
 * of them and the bad member's key and value fit in two more tokens. A file
 * with more tokens than this (a container value, more keys than settings)
 * gets the message it gets when everything fits: "<path>: model: expected a
 * string, got an array", "<path>: key 'model' appears twice". The bound
 * check in the walk guards that argument. */
#define SETTINGS_TOKENS (3u + 2u * (size_t)CTXC_SETTING_COUNT)

static const char *json_kind(unsigned type) {
    switch (type) {
    case CTXC__JT_STRING:
        return "a string";
    case CTXC__JT_OBJECT:
        return "an object";
    case CTXC__JT_ARRAY:
        return "an array";
    case CTXC__JT_NULL:
        return "null";
    case CTXC__JT_TRUE:
    case CTXC__JT_FALSE:
        return "a boolean";
    default:
        return "a number";
    }
}

/* One value of a file: token t of the text b. */
static ctxc_status_t file_value(ctxc_setting_id_t id, const char *b,
                                const ctxc__jtok_t *t, char *tmp, uint32_t *num,
                                size_t *slen, ctxc_error_t *err) {
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
    const char *p = ctxc__jtok_p(b, t);
    size_t n = ctxc__jtok_n(t);
    unsigned want = CTXC__JT_NUMBER;
    switch (sp->type) {
    case CTXC_SETTING_TYPE_ENUM:
    case CTXC_SETTING_TYPE_STRING: {
        if (t->type != CTXC__JT_STRING) {
            want = CTXC__JT_STRING;
            break;
        }
        ctxc__sink_t o = {tmp, CTXC_CFG_SETTINGS_VALUE_BYTES - 1u, 0};
        ctxc_status_t st = ctxc__write_decoded(&o, p, n, CTXC__SRC_JSTR, err);
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
        return ctxc__setting_parse(id, tmp, o.len, num, err);
    }
    case CTXC_SETTING_TYPE_BOOL:
        if (t->type != CTXC__JT_TRUE && t->type != CTXC__JT_FALSE) {
            want = CTXC__JT_TRUE;
            break;
        }
        return ctxc__setting_parse(id, p, n, num, err);
    case CTXC_SETTING_TYPE_RATIO:
    case CTXC_SETTING_TYPE_INT:
        if (t->type != CTXC__JT_NUMBER) {
            break;
        }
        return ctxc__setting_parse(id, p, n, num, err);
    }
    return ctxc__fail(err, CTXC_E_INVALID_ARG, "%s: expected %s, got %s",
                      sp->key,
                      want == CTXC__JT_TRUE ? "true or false" : json_kind(want),
                      json_kind(t->type));
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

ctxc_status_t ctxc__settings_parse(const char *b, size_t len,
                                   ctxc__settings_visit_fn visit, void *user,
                                   ctxc_setting_bits_t *present,
                                   ctxc_error_t *err) {
    ctxc__jtok_t t[SETTINGS_TOKENS];
    ctxc_status_t st = ctxc__json_scan(b, len, CTXC_CFG_JSON_MAX_DEPTH, t,
                                       SETTINGS_TOKENS, NULL, NULL, err);
    if (st != CTXC_OK) {
        return st;
    }
    if (t[0].type != CTXC__JT_OBJECT) {
        return ctxc__fail(err, CTXC_E_PARSE,
                          "expected a JSON object {\"key\": value, ...}, got "
                          "%s",
                          json_kind(t[0].type));
    }
    ctxc_setting_bits_t seen = 0;
    size_t key = 1;
    for (uint32_t k = 0; k < t[0].size; k++) {
        if (key + 1u >= SETTINGS_TOKENS) { /* not reached: SETTINGS_TOKENS */
            return ctxc__fail(err, CTXC_E_PARSE,
                              "more than %z JSON tokens (settings file "
                              "limit)",
                              SETTINGS_TOKENS);
        }
        const char *kp = ctxc__jtok_p(b, &t[key]);
        size_t kn = ctxc__jtok_n(&t[key]);
        ctxc_setting_id_t id;
        if (!ctxc__setting_lookup(kp, kn, CTXC__SRC_JSTR, &id)) {
            return as_parse_error(ctxc__setting_unknown(kp, kn, err), err);
        }
        if ((seen & ctxc__setting_bit(id)) != 0) {
            return ctxc__fail(err, CTXC_E_PARSE, "key '%s' appears twice",
                              ctxc__spec(id)->key);
        }
        size_t val = key + 1u;
        char tmp[CTXC_CFG_SETTINGS_VALUE_BYTES];
        uint32_t num = 0;
        size_t slen = 0;
        st = file_value(id, b, &t[val], tmp, &num, &slen, err);
        if (st != CTXC_OK) {
            return as_parse_error(st, err);
        }
        seen |= ctxc__setting_bit(id);
        if (visit != NULL) {
            visit(user, id, num, tmp, slen);
        }
        key = t[val].next; /* a scalar: val + 1 */
    }
    if (present != NULL) {
        *present = seen;
    }
    return CTXC_OK;
}

/* Reads `path` into s->buf. The port's CTXC_E_NO_SPACE becomes
 * CTXC_E_TOO_LARGE naming the limit. */
static ctxc_status_t read_text(ctxc_settings_store_t *s, const char *path,
                               size_t *len, ctxc_error_t *err) {
    ctxc_status_t st = ctxc_fs_read(&s->fs, path, CTXC__SETTINGS_BUF(s),
                                    CTXC__SETTINGS_BUF_BYTES, len, err);
    if (st == CTXC_E_NO_SPACE) {
        return ctxc__fail(err, CTXC_E_TOO_LARGE,
                          "%s: larger than the %z bytes of "
                          "CTXC_CFG_SETTINGS_FILE_BYTES",
                          path, CTXC__SETTINGS_BUF_BYTES);
    }
    return st;
}

ctxc_status_t ctxc__settings_read(ctxc_settings_store_t *s, const char *path,
                                  size_t *len, ctxc_setting_bits_t *present,
                                  ctxc_error_t *err) {
    ctxc_status_t st = read_text(s, path, len, err);
    if (st == CTXC_OK) {
        st = ctxc__settings_parse(CTXC__SETTINGS_BUF(s), *len, NULL, NULL,
                                  present, err);
        if (st != CTXC_OK) {
            ctxc__err_prefix(err, "%s", path);
        }
    }
    return st;
}

ctxc_status_t ctxc__settings_format(ctxc_settings_store_t *s,
                                    ctxc__settings_value_fn value,
                                    const void *user, size_t *len,
                                    size_t *count, ctxc_error_t *err) {
    ctxc__sink_t o = {CTXC__SETTINGS_BUF(s), CTXC__SETTINGS_BUF_BYTES, 0};
    size_t n = 0;
    ctxc__putc(&o, '{');
    for (size_t k = 0; k < CTXC_SETTING_COUNT; k++) {
        ctxc_setting_id_t id = (ctxc_setting_id_t)k;
        ctxc_setting_value_t v;
        if (!value(user, id, &v)) {
            continue;
        }
        const ctxc_setting_spec_t *sp = ctxc__spec(id);
        ctxc__put(&o, n == 0 ? "\n  " : ",\n  ", n == 0 ? 3 : 4);
        (void)ctxc__json_write_string(&o, sp->key, strlen(sp->key),
                                      CTXC__SRC_RAW, NULL);
        ctxc__put(&o, ": ", 2);
        if (sp->type == CTXC_SETTING_TYPE_ENUM ||
            sp->type == CTXC_SETTING_TYPE_STRING) {
            (void)ctxc__json_write_string(&o, v.str, strlen(v.str),
                                          CTXC__SRC_RAW, NULL);
        } else {
            ctxc__setting_put(&o, id, v.num, NULL);
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
