/*
 * ctxc — URLs, loopback hosts and HTTP dates for the HTTP client.
 */
#include <string.h>

#include "compiler.h"
#include "ctxc/http.h"
#include "error.h"

CTXC__SIZE_NOINLINE static char lower(char c) {
    return (c >= 'A' && c <= 'Z') ? (char)(c - 'A' + 'a') : c;
}

static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int hex_value(char c) {
    if (is_digit(c)) {
        return c - '0';
    }
    c = lower(c);
    return (c >= 'a' && c <= 'f') ? c - 'a' + 10 : -1;
}

/* Case-insensitive: s[0..n) starts with the lower-case literal lit. */
static bool starts_with_ci(const char *s, size_t n, const char *lit) {
    size_t k = strlen(lit);
    if (n < k) {
        return false;
    }
    for (size_t i = 0; i < k; i++) {
        if (lower(s[i]) != lit[i]) {
            return false;
        }
    }
    return true;
}

static bool host_name_char(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || is_digit(c) ||
           c == '-' || c == '.' || c == '_' || c == '~';
}

ctxc_status_t ctxc_url_parse(const char *url, ctxc_url_t *out,
                             ctxc_error_t *err) {
    if (url == NULL || out == NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "url: NULL argument");
    }
    memset(out, 0, sizeof *out);
    size_t n = strlen(url);
    size_t i;
    if (starts_with_ci(url, n, "https://")) {
        out->tls = true;
        out->port = 443;
        i = 8;
    } else if (starts_with_ci(url, n, "http://")) {
        out->port = 80;
        i = 7;
    } else {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "url: the scheme must be http:// or https:// (in "
                          "%q)",
                          url, n < 48 ? n : (size_t)48);
    }
    size_t auth = i; /* authority: up to '/', '?' or '#' */
    size_t end = auth;
    while (end < n && url[end] != '/' && url[end] != '?' && url[end] != '#') {
        end++;
    }
    if (memchr(url + auth, '@', end - auth) != NULL) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "url: user info (user:password@) is not supported; "
                          "put credentials in a secret header");
    }
    size_t h = auth;
    size_t hend;
    if (h < end && url[h] == '[') {
        hend = h + 1;
        while (hend < end && url[hend] != ']') {
            char c = url[hend];
            if (hex_value(c) < 0 && c != ':' && c != '.') {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "url: bad character in the IPv6 literal");
            }
            hend++;
        }
        if (hend >= end) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "url: IPv6 literal without its ']'");
        }
        out->ipv6 = true;
        out->host = url + h + 1;
        out->host_len = hend - h - 1;
        hend++; /* past ']' */
    } else {
        hend = h;
        while (hend < end && url[hend] != ':') {
            if (!host_name_char(url[hend])) {
                return ctxc__fail(err, CTXC_E_INVALID_ARG,
                                  "url: bad character in the host %q", url + h,
                                  end - h);
            }
            hend++;
        }
        out->host = url + h;
        out->host_len = hend - h;
    }
    if (out->host_len == 0) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG, "url: empty host");
    }
    if (out->host_len > CTXC_HTTP_HOST_MAX) {
        return ctxc__fail(err, CTXC_E_INVALID_ARG,
                          "url: host longer than %u bytes",
                          (unsigned)CTXC_HTTP_HOST_MAX);
    }
    if (hend < end) {
        if (url[hend] != ':') {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "url: unexpected text after the host");
        }
        uint32_t port = 0;
        size_t p = hend + 1;
        if (p == end) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "url: empty port after ':'");
        }
        while (p < end && is_digit(url[p]) && port <= 65535u) {
            port = port * 10u + (uint32_t)(url[p++] - '0');
        }
        if (p != end || port == 0 || port > 65535u) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "url: the port must be 1..65535");
        }
        out->port = (uint16_t)port;
    }
    size_t pend = end;
    while (pend < n && url[pend] != '#') {
        unsigned char c = (unsigned char)url[pend];
        if (c <= 0x20u || c == 0x7Fu) {
            return ctxc__fail(err, CTXC_E_INVALID_ARG,
                              "url: space or control character in the path "
                              "(percent-encode it)");
        }
        pend++;
    }
    if (pend == end) {
        out->path = "/";
        out->path_len = 1;
    } else { /* "http://h?q": the path is empty; the client sends "/?q" */
        out->path = url + end;
        out->path_len = pend - end;
    }
    return CTXC_OK;
}

/* ---- loopback ------------------------------------------------------------ */

/* "127.a.b.c" in canonical dotted decimal: exactly four parts, each 0..255
 * written without leading zeros (no octal, hex, short or other forms a
 * resolver might read differently). */
static bool ipv4_loopback(const char *s, size_t n) {
    size_t i = 0;
    for (unsigned part = 0; part < 4u; part++) {
        if (part > 0) {
            if (i >= n || s[i] != '.') {
                return false;
            }
            i++;
        }
        size_t start = i;
        unsigned v = 0;
        while (i < n && is_digit(s[i]) && i - start < 3u) {
            v = v * 10u + (unsigned)(s[i] - '0');
            i++;
        }
        size_t digits = i - start;
        if (digits == 0 || v > 255u || (digits > 1u && s[start] == '0') ||
            (part == 0 && v != 127u)) {
            return false;
        }
    }
    return i == n;
}

/* IPv6 text (no brackets, no zone, no embedded IPv4) equal to ::1: its
 * last group is 1 and lands in the last place (eight groups, or "::"
 * before it), every other group is 0. */
static bool ipv6_loopback(const char *s, size_t n) {
    size_t count = 0;
    size_t gap = 8; /* group index of "::", 8 = none */
    size_t i = 0;
    unsigned last = 0;
    bool zeros = true; /* the groups before the last one are 0 */
    if (n >= 2 && s[0] == ':' && s[1] == ':') {
        gap = 0;
        i = 2;
    }
    while (i < n) {
        unsigned v = 0;
        size_t digits = 0;
        while (i < n && hex_value(s[i]) >= 0 && digits < 4) {
            v = v * 16u + (unsigned)hex_value(s[i]);
            i++;
            digits++;
        }
        if (digits == 0 || count == 8) {
            return false;
        }
        zeros = zeros && (count == 0 || last == 0);
        last = v;
        count++;
        if (i == n) {
            break;
        }
        if (s[i] != ':') {
            return false;
        }
        i++;
        if (i < n && s[i] == ':') {
            if (gap != 8) {
                return false; /* a second "::" */
            }
            gap = count;
            i++;
        } else if (i == n) {
            return false; /* a trailing single ':' */
        }
    }
    if (gap == 8 ? count != 8 : count > 7) {
        return false;
    }
    return count > 0 && (gap == 8 || gap < count) && zeros && last == 1u;
}

bool ctxc_http_host_is_loopback(const char *host, size_t len) {
    if (host == NULL) {
        return false;
    }
    if (len == 9 && starts_with_ci(host, len, "localhost")) {
        return true; /* exactly: "localhost." goes to the resolver */
    }
    if (memchr(host, ':', len) != NULL) {
        return ipv6_loopback(host, len);
    }
    return ipv4_loopback(host, len);
}

/* ---- HTTP dates ---------------------------------------------------------- */

static const char month_names[] = "janfebmaraprmayjunjulaugsepoctnovdec";

/* Reads a month name of 3 letters at s; 1..12, 0 if none. */
static unsigned month_at(const char *s) {
    for (unsigned m = 0; m < 12; m++) {
        const char *name = month_names + 3u * m;
        if (lower(s[0]) == name[0] && lower(s[1]) == name[1] &&
            lower(s[2]) == name[2]) {
            return m + 1u;
        }
    }
    return 0;
}

/* Days from 1970-01-01 to y-m-d (proleptic Gregorian; 1970 <= y < 10000:
 * fits 32 bits). */
CTXC__SIZE_NOINLINE static uint32_t days_since_epoch(unsigned y, unsigned m,
                                                     unsigned d) {
    static const unsigned short before[12] = {0,   31,  59,  90,  120, 151,
                                              181, 212, 243, 273, 304, 334};
    /* leap days before year y, counted from year 1 */
    unsigned py = y - 1u;
    unsigned leaps = py / 4u - py / 100u + py / 400u;
    unsigned leaps_1970 = 1969u / 4u - 1969u / 100u + 1969u / 400u;
    uint32_t days = (y - 1970u) * 365u + (leaps - leaps_1970);
    days += before[m - 1u];
    bool leap = (y % 4u == 0 && y % 100u != 0) || y % 400u == 0;
    if (leap && m > 2u) {
        days++;
    }
    return days + d - 1u;
}

static bool day_ok(unsigned y, unsigned m, unsigned d) {
    static const unsigned char len[12] = {31, 29, 31, 30, 31, 30,
                                          31, 31, 30, 31, 30, 31};
    bool leap = (y % 4u == 0 && y % 100u != 0) || y % 400u == 0;
    if (d == 0 || d > len[m - 1u]) {
        return false;
    }
    return !(m == 2u && d == 29u && !leap);
}

/* The three date forms of HTTP after the weekday name, as templates: \1
 * day, \2 year, \3 hour, \4 minute, \5 second (a digit each), \6 the
 * month's three letters, \7 a space or the day's first digit (asctime's
 * " 6"); other characters stand for themselves. */
static const char *const date_forms[] = {
    ", \1\1 \6 \2\2\2\2 \3\3:\4\4:\5\5 GMT",
    ", \1\1-\6-\2\2 \3\3:\4\4:\5\5 GMT", " \6 \7\1 \3\3:\4\4:\5\5 \2\2\2\2"};

/* Matches s[0..n) against a template; v: day, year, hour, minute, second,
 * month. */
static bool date_form(const char *s, size_t n, const char *f, unsigned v[6]) {
    size_t i = 0;
    memset(v, 0, 6u * sizeof v[0]);
    for (; *f != '\0'; f++) {
        unsigned t = (unsigned char)*f;
        if (t == 6u) {
            if (n - i < 3u || (v[5] = month_at(s + i)) == 0) {
                return false;
            }
            i += 3;
            continue;
        }
        if (i >= n) {
            return false;
        }
        if (t > 7u) {
            if (s[i] != (char)t) {
                return false; /* a literal */
            }
        } else if (t == 7u && s[i] == ' ') {
            /* asctime's space before a one-digit day */
        } else if (!is_digit(s[i])) {
            return false;
        } else {
            unsigned k = t == 7u ? 0u : t - 1u;
            v[k] = v[k] * 10u + (unsigned)(s[i] - '0');
        }
        i++;
    }
    return i == n;
}

bool ctxc_http_parse_date(const char *s, size_t n, uint64_t *unix_time) {
    if (s == NULL || unix_time == NULL) {
        return false;
    }
    size_t i = 0;
    while (i < n &&
           ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z'))) {
        i++; /* the weekday name */
    }
    if (i < 3) {
        return false;
    }
    unsigned v[6];
    size_t form = 0;
    while (!date_form(s + i, n - i, date_forms[form], v)) {
        if (++form == sizeof date_forms / sizeof date_forms[0]) {
            return false;
        }
    }
    unsigned d = v[0], y = v[1], hh = v[2], mm = v[3], ss = v[4], m = v[5];
    if (form == 1) {
        y += y < 70u ? 2000u : 1900u;
    }
    if (hh >= 24u || mm >= 60u || ss >= 61u || y < 1970u || !day_ok(y, m, d)) {
        return false;
    }
    *unix_time = (uint64_t)days_since_epoch(y, m, d) * 86400u + hh * 3600u +
                 mm * 60u + ss;
    return true;
}
