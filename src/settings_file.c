/*
 * ctxc — settings: the file format of settings.json and
 * profiles/<name>.json (see include/ctxc/settings.h): a flat JSON object
 * {"key": value} of registered keys, read, checked and written.
 *
 * Files are read into the store's buffer and parsed twice: a first pass
 * checks everything (JSON through ctxc__json_canon, then every key and
 * value), a second pass, which cannot fail, hands the values to a visitor.
 * So a bad file never changes a layer half-way, and no second layer is
 * needed. Nothing here knows of layers or profiles.
 */
#include <string.h>

#include "error.h"
#include "json.h"
#include "settings_file.h"
#include "settings_registry.h"
#include "sink.h"

/* The longest a value is written in a file: strings are printable ASCII
 * without quotes or backslashes (no escapes), enum values are quoted. */
#define WMAX_ENUM (CTXC_SETTINGS_ENUM_VALUE_MAX + 3u)
#define WMAX_STRING ((size_t)CTXC_CFG_SETTINGS_VALUE_BYTES + 1u)
#define WMAX_BOOL 5u
#define WMAX_RATIO 5u
#define WMAX_INT 10u
#define WORST_(id, key, type, ...) +(sizeof(key) + 7u + WMAX_##type)
_Static_assert(4u CTXC_SETTINGS_LIST(WORST_) <= CTXC_CFG_SETTINGS_FILE_BYTES,
               "CTXC_CFG_SETTINGS_FILE_BYTES is too small for a settings file "
               "with every setting at its longest value");
#undef WORST_

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

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
    const ctxc_setting_spec_t *sp = ctxc__spec(id);
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
        return ctxc__setting_parse(id, tmp, o.len, num, err);
    }
    case CTXC_SETTING_TYPE_BOOL:
        if (v[0] != 't' && v[0] != 'f') {
            want = "true or false";
            break;
        }
        return ctxc__setting_parse(id, v, n, num, err);
    case CTXC_SETTING_TYPE_RATIO:
    case CTXC_SETTING_TYPE_INT:
        if (v[0] != '-' && !is_digit(v[0])) {
            want = "a number";
            break;
        }
        return ctxc__setting_parse(id, v, n, num, err);
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

ctxc_status_t ctxc__settings_parse(const char *b, size_t len,
                                   ctxc__settings_visit_fn visit, void *user,
                                   uint32_t *present, ctxc_error_t *err) {
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
        if (!ctxc__setting_lookup(kp, kn, CTXC__SRC_JSTR, &id)) {
            return as_parse_error(ctxc__setting_unknown(kp, kn, err), err);
        }
        if ((seen & ctxc__setting_bit(id)) != 0) {
            return ctxc__fail(err, CTXC_E_PARSE, "key '%s' appears twice",
                              ctxc__spec(id)->key);
        }
        char tmp[CTXC_CFG_SETTINGS_VALUE_BYTES];
        uint32_t num = 0;
        size_t slen = 0;
        st = file_value(id, b + i, vn, tmp, &num, &slen, err);
        if (st != CTXC_OK) {
            return as_parse_error(st, err);
        }
        seen |= ctxc__setting_bit(id);
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

ctxc_status_t ctxc__settings_read(ctxc_settings_store_t *s, const char *path,
                                  size_t *len, uint32_t *present,
                                  ctxc_error_t *err) {
    ctxc_status_t st = read_text(s, path, len, err);
    if (st == CTXC_OK) {
        st = ctxc__settings_parse(s->buf, *len, NULL, NULL, present, err);
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
    ctxc__sink_t o = {s->buf, sizeof s->buf, 0};
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
