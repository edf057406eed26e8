/*
 * ctxc — the fact check of an LLM summary (anchors.h).
 */
#include <string.h>

#include "anchors.h"
#include "ctxc/ctxc.h"
#include "json.h"
#include "sink.h"
#include "tool_roles.h"

#if CTXC_CFG_STRATEGY_MIDDLE_OUT || CTXC_CFG_STRATEGY_ONE_SHOT

#define ITEM_MAX 200u /* bytes of an anchor shown in an item */
#define CMD_SHOW                                                               \
    96u                 /* bytes of a failed command shown (its start names    \
                           it; a long one would take the bytes of three        \
                           items of the 1024-byte section) */
#define DETAIL_MAX 60u  /* bytes of a failed command's detail shown */
#define CMD_MATCH 40u   /* bytes of a command looked for */
#define TODO_MATCH 120u /* bytes of a todo looked for */
#define IDENT_MAX 64u   /* bytes of a backticked identifier */
#define URL_MAX 240u    /* longer URLs are not anchors */
#define HALF (CTXC__FACTS_SCRATCH / 2u)

/* The classes of anchors, in the order their missing items take the
 * section's slots: what the range changed or broke first (a written file
 * or a failed command is state the summary must carry), then files only
 * read or searched, then the todos, URLs, and backticked identifiers
 * (the cheapest to find again). Newest first within a class. */
enum { RANK_CHANGED, RANK_READ, RANK_TODO, RANK_URL, RANK_IDENT, RANKS };

#define STOP_EVERY 32u /* anchors between two questions to the stop hook */

static const char HEADER[] =
    "\n\n<ctxc_facts>\nAdded by ctxc, not by the model: facts of the "
    "summarised messages that the snapshot above does not mention, most "
    "important first.\n";
static const char FOOTER[] = "</ctxc_facts>";
#define MORE_RESERVE 96u /* the "and N more" line and the footer */

typedef struct {
    ctxc__facts_t *f;
    ctxc_str_t sum;
    char *tmp; /* CTXC__FACTS_SCRATCH bytes: [0, HALF) raw, [HALF, ..) out */
    uint8_t *pairs; /* the summary's byte pairs (BIGRAM_BITS bits), or NULL */
    uint32_t *seen; /* the set of anchors seen (seen_before) */
    size_t seen_slots, seen_len;
    int cls;      /* the class of anchors this walk looks at (RANK_*) */
    size_t steps; /* anchors looked at since the stop hook was asked */
    ctxc__sink_t sec;
    size_t items_at, left_out;
    const char *root;
    size_t rlen;
} fc_t;

static char lower(char c) {
    return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool same(char a, char b, bool icase) {
    return icase ? lower(a) == lower(b) : a == b;
}

/* Whether hay holds n[0..len): Knuth-Morris-Pratt, so every byte of hay is
 * looked at a bounded number of times whatever the text (a crafted answer
 * cannot make it quadratic), with memchr to the next candidate first byte
 * when nothing is matched yet. Needles are at most FIND_MAX bytes (longer
 * ones: their first FIND_MAX bytes). */
#define FIND_MAX 256u
/* The bit of a byte pair in the summary's pair set (BIGRAM_BITS bits). */
#define BIGRAM_BITS 4096u
static size_t pair_bit(uint8_t a, uint8_t b) {
    return (((size_t)a * 31u) ^ ((size_t)b * 131u) ^ (size_t)b >> 3) %
           BIGRAM_BITS;
}

static bool has(const fc_t *fc, const char *n, size_t len, bool icase) {
    ctxc_str_t hay = fc->sum;
    if (len == 0 || hay.ptr == NULL || len > hay.len) {
        return false;
    }
    /* the filter: a byte pair of the needle that the summary lacks (the
     * pair set of the summary, made once) rules it out in len steps */
    for (size_t i = 0; fc->pairs != NULL && !icase && i + 1u < len; i++) {
        size_t bit = pair_bit((uint8_t)n[i], (uint8_t)n[i + 1u]);
        if ((fc->pairs[bit / 8u] & (1u << (bit % 8u))) == 0) {
            return false;
        }
    }
    if (len > FIND_MAX) {
        len = FIND_MAX;
    }
    uint8_t fail[FIND_MAX]; /* the longest proper border of n[0..i] */
    fail[0] = 0;
    for (size_t i = 1, k = 0; i < len; i++) {
        while (k > 0 && !same(n[i], n[k], icase)) {
            k = fail[k - 1u];
        }
        if (same(n[i], n[k], icase)) {
            k++;
        }
        fail[i] = (uint8_t)k;
    }
    bool lead_alpha = (n[0] | 0x20) >= 'a' && (n[0] | 0x20) <= 'z';
    for (size_t i = 0, k = 0; i < hay.len; i++) {
        if (k == 0 && !(icase && lead_alpha)) {
            const char *p = memchr(hay.ptr + i, n[0], hay.len - i);
            if (p == NULL) {
                return false;
            }
            i = (size_t)(p - hay.ptr);
        }
        char c = hay.ptr[i];
        while (k > 0 && !same(c, n[k], icase)) {
            k = fail[k - 1u];
        }
        if (same(c, n[k], icase)) {
            k++;
        }
        if (k == len) {
            return true;
        }
    }
    return false;
}

/* Whether kind+text was seen; notes it when not, while the set has room.
 * The set is open addressing over 32-bit FNV-1a keys of kind+text in the
 * check's memory (4 bytes an anchor, filled to three quarters): constant
 * time per anchor. Two anchors of one key count as one (a 32-bit
 * collision: the second is taken as seen). */
static bool seen_before(fc_t *fc, char kind, const char *t, size_t n) {
    uint32_t h = 2166136261u;
    h = (h ^ (uint8_t)kind) * 16777619u;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ (uint8_t)t[i]) * 16777619u;
    }
    h = h != 0 ? h : 1u;
    size_t slots = fc->seen_slots;
    if (slots == 0) {
        return false;
    }
    for (size_t i = h % slots;; i = i + 1u < slots ? i + 1u : 0u) {
        if (fc->seen[i] == h) {
            return true;
        }
        if (fc->seen[i] == 0) {
            if (fc->seen_len < slots - slots / 4u) {
                fc->seen[i] = h;
                fc->seen_len++;
            }
            return false;
        }
    }
}

/* Bytes of s (at most max) cut on a UTF-8 boundary. */
static size_t clip(const char *s, size_t n, size_t max) {
    if (n <= max) {
        return n;
    }
    while (max > 0 && ((uint8_t)s[max] & 0xC0u) == 0x80u) {
        max--;
    }
    return max;
}

static void put_line_text(ctxc__sink_t *o, const char *s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        ctxc__putc(o, c == '\n' || c == '\r' || c == '\t' ? ' ' : c);
    }
}

/* Whether the check is to end now: the stop hook, asked every STOP_EVERY
 * anchors, said so (then or before). */
static bool halt(fc_t *fc) {
    ctxc__facts_t *f = fc->f;
    if (f->stopped) {
        return true;
    }
    if (++fc->steps >= STOP_EVERY) {
        fc->steps = 0;
        f->stopped = f->stop != NULL && f->stop(f->stop_ctx);
    }
    return f->stopped;
}

/* One missing anchor: an item "- <label><text><detail>\n" when it fits. */
static void missing(fc_t *fc, const char *label, const char *t, size_t n,
                    const char *quote, const char *detail, size_t dn) {
    ctxc__facts_t *f = fc->f;
    f->missing++;
    size_t tn = clip(t, n, detail != NULL ? CMD_SHOW : ITEM_MAX);
    size_t dl = clip(detail != NULL ? detail : "", dn, DETAIL_MAX);
    size_t ql = strlen(quote);
    size_t item = 2u + strlen(label) + 2u * ql + tn + (tn < n ? 3u : 0u) +
                  (dl > 0 ? 3u + dl + (dl < dn ? 3u : 0u) + 1u : 0u) + 1u;
    size_t head = fc->sec.len == 0 ? sizeof HEADER - 1u : 0u;
    if (f->added >= f->max_items ||
        fc->sec.len + head + item + MORE_RESERVE > f->max_bytes) {
        fc->left_out++;
        return;
    }
    if (head > 0) {
        ctxc__puts(&fc->sec, HEADER);
        fc->items_at = fc->sec.len;
    }
    ctxc__puts(&fc->sec, "- ");
    ctxc__puts(&fc->sec, label);
    ctxc__puts(&fc->sec, quote);
    put_line_text(&fc->sec, t, tn);
    ctxc__puts(&fc->sec, tn < n ? "..." : "");
    ctxc__puts(&fc->sec, quote);
    if (dl > 0) {
        ctxc__puts(&fc->sec, " (");
        put_line_text(&fc->sec, detail, dl);
        ctxc__puts(&fc->sec, dl < dn ? "..." : "");
        ctxc__puts(&fc->sec, ")");
    }
    ctxc__puts(&fc->sec, "\n");
    f->added++;
}

/* ---- paths --------------------------------------------------------------- */

/* Normalises p[0..n) in place ("." and ".." segments, "//"); its length.
 * Every byte is written at or before where it is read. */
static size_t normalise(char *p, size_t n) {
    bool abs = n > 0 && p[0] == '/';
    size_t o = abs ? 1u : 0u, floor = o;
    for (size_t i = o; i < n;) {
        size_t s = i;
        while (i < n && p[i] != '/') {
            i++;
        }
        size_t seg = i - s;
        i++;
        bool dot = seg == 1 && p[s] == '.';
        bool dotdot = seg == 2 && p[s] == '.' && p[s + 1] == '.';
        if (seg == 0 || dot) {
            continue;
        }
        if (dotdot && o > floor) { /* pop the last segment */
            while (o > floor && p[o - 1] != '/') {
                o--;
            }
            if (o > floor) {
                o--;
            }
            continue;
        }
        if (dotdot && abs) {
            continue; /* "/.." is "/" */
        }
        if (o > 0 && p[o - 1] != '/') {
            p[o++] = '/';
        }
        memmove(p + o, p + s, seg);
        o += seg;
        if (dotdot) {
            floor = o; /* a kept leading ".." */
        }
    }
    return o;
}

/* A path anchor from the escaped JSON string body b[0..n). */
static void path_anchor(fc_t *fc, const char *b, size_t n) {
    if (halt(fc)) {
        return;
    }
    ctxc__sink_t raw = {fc->tmp, HALF - 1u, 0};
    if (ctxc__write_decoded(&raw, b, n, CTXC__SRC_JSTR, NULL) != CTXC_OK ||
        raw.len == 0 || raw.len > raw.cap) {
        return;
    }
    char *out = fc->tmp + HALF;
    size_t cap = CTXC__FACTS_SCRATCH - HALF - 1u, len = 0;
    if (fc->tmp[0] != '/' && fc->rlen > 0) {
        if (fc->rlen + 1u + raw.len > cap) {
            return;
        }
        memcpy(out, fc->root, fc->rlen);
        out[fc->rlen] = '/';
        memcpy(out + fc->rlen + 1u, fc->tmp, raw.len);
        len = fc->rlen + 1u + raw.len;
    } else {
        memcpy(out, fc->tmp, raw.len);
        len = raw.len;
    }
    len = normalise(out, len);
    if (len == 0 || seen_before(fc, 'f', out, len)) {
        return;
    }
    /* relative to the root when under it */
    const char *rel = out;
    size_t rn = len;
    size_t rl = fc->rlen;
    while (rl > 1 && fc->root[rl - 1] == '/') {
        rl--;
    }
    if (rl > 0 && len > rl + 1u && memcmp(out, fc->root, rl) == 0 &&
        out[rl] == '/') {
        rel = out + rl + 1u;
        rn = len - rl - 1u;
    }
    /* the last two components */
    const char *tail = out + len;
    int slashes = 0;
    while (tail > out && slashes < 2) {
        tail--;
        if (*tail == '/') {
            slashes++;
        }
    }
    if (*tail == '/') {
        tail++;
    }
    size_t tn = (size_t)(out + len - tail);
    if (has(fc, out, len, false) || has(fc, rel, rn, false) ||
        has(fc, tail, tn, false)) {
        fc->f->found++;
        return;
    }
    missing(fc, "file: ", rel, rn, "", NULL, 0);
}

/* The path (a string) or paths (an array of strings) at `key` of params. */
static void paths_array(fc_t *fc, ctxc_str_t params, const char *key) {
    ctxc_str_t v;
    if (params.ptr == NULL ||
        !ctxc__json_find_key(params.ptr, params.len, key, &v) || v.len < 2) {
        return;
    }
    if (v.ptr[0] == '"') {
        path_anchor(fc, v.ptr + 1, v.len - 2u);
        return;
    }
    if (v.ptr[0] != '[') {
        return;
    }
    for (size_t pos = 1; pos < v.len && v.ptr[pos] != ']';) {
        size_t end = ctxc__json_skip_value(v.ptr, v.len, pos);
        if (end <= pos || end > v.len) {
            return;
        }
        if (v.ptr[pos] == '"' && end - pos >= 2u) {
            path_anchor(fc, v.ptr + pos + 1, end - pos - 2u);
        }
        pos = end < v.len && v.ptr[end] == ',' ? end + 1u : end;
    }
}

/* ---- failed commands ---------------------------------------------------- */

/* A nonzero exit status in a result (an object's exit key, or "exit code"
 * / "exit status" in its text): true and the status text. */
static bool exit_status(ctxc_str_t result, const char **num, size_t *nlen) {
    static const char *const keys[] = {"exit_code", "exitCode", "exit_status",
                                       "returncode", "exit"};
    ctxc_str_t v;
    for (size_t k = 0; result.ptr != NULL && result.ptr[0] == '{' && k < 5;
         k++) {
        if (ctxc__json_find_key(result.ptr, result.len, keys[k], &v) &&
            v.len > 0 &&
            (v.ptr[0] == '-' || (v.ptr[0] >= '1' && v.ptr[0] <= '9'))) {
            *num = v.ptr;
            *nlen = v.len;
            return true;
        }
    }
    static const char *const words[] = {"exit code", "exit status"};
    for (size_t k = 0; result.ptr != NULL && k < 2; k++) {
        size_t wl = strlen(words[k]);
        for (size_t i = 0; i + wl < result.len; i++) {
            size_t j = 0;
            while (j < wl && lower(result.ptr[i + j]) == words[k][j]) {
                j++;
            }
            if (j < wl) {
                continue;
            }
            size_t p = i + wl;
            while (p < result.len &&
                   (result.ptr[p] == ':' || result.ptr[p] == ' ' ||
                    result.ptr[p] == '=')) {
                p++;
            }
            size_t s = p;
            if (p < result.len && result.ptr[p] == '-') {
                p++;
            }
            while (p < result.len && result.ptr[p] >= '0' &&
                   result.ptr[p] <= '9') {
                p++;
            }
            if (p > s && !(p == s + 1 && result.ptr[s] == '0')) {
                *num = result.ptr + s;
                *nlen = p - s;
                return true;
            }
        }
    }
    return false;
}

/* The first line of s (at most ITEM_MAX bytes). */
static size_t first_line(const char *s, size_t n) {
    size_t i = 0;
    while (i < n && s[i] != '\n' && s[i] != '\r') {
        i++;
    }
    return i;
}

static void failed_anchor(fc_t *fc, const ctxc__tool_t *t, ctxc_str_t params,
                          const ctxc_block_t *resp) {
    if (halt(fc)) {
        return;
    }
    const char *num = NULL;
    size_t nlen = 0;
    ctxc_str_t err = resp->u.tool_response.error;
    bool failed = (err.ptr != NULL && err.len > 0) ||
                  exit_status(resp->u.tool_response.result, &num, &nlen);
    if (!failed) {
        return;
    }
    size_t clen = 0;
    if (!ctxc__tool_command(t, params, fc->tmp, HALF - 1u, 4096u, &clen) ||
        clen == 0) {
        return;
    }
    if (clen > HALF - 1u) {
        clen = HALF - 1u;
    }
    const char *cmd = fc->tmp;
    while (clen > 0 && (*cmd == ' ' || *cmd == '\n')) {
        cmd++;
        clen--;
    }
    if (clen == 0 || seen_before(fc, 'c', cmd, clen)) {
        return;
    }
    size_t look = clip(cmd, clen, CMD_MATCH);
    if (has(fc, cmd, look, false)) {
        fc->f->found++;
        return;
    }
    /* the detail: the exit status, then the first error line */
    ctxc__sink_t d = {fc->tmp + HALF, CTXC__FACTS_SCRATCH - HALF - 1u, 0};
    if (num != NULL) {
        ctxc__puts(&d, "exit ");
        ctxc__put(&d, num, nlen);
    }
    if (err.ptr != NULL && err.len > 0) {
        ctxc__puts(&d, d.len > 0 ? ": " : "");
        ctxc__put(&d, err.ptr, first_line(err.ptr, err.len));
    }
    missing(fc, "failed command: ", cmd, clen, "`", d.buf,
            d.len < d.cap ? d.len : d.cap);
}

/* ---- urls, identifiers --------------------------------------------------- */

static bool url_end(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '"' ||
           c == '\'' || c == '<' || c == '>' || c == ')' || c == ']' ||
           c == '`' || c == '\\' || c == '}' || c == '|';
}

static void urls(fc_t *fc, ctxc_str_t s) {
    for (size_t i = 0; s.ptr != NULL && i + 8 <= s.len; i++) {
        if (s.ptr[i] != 'h' || (memcmp(s.ptr + i, "http://", 7) != 0 &&
                                memcmp(s.ptr + i, "https://", 8) != 0)) {
            continue;
        }
        size_t e = i;
        while (e < s.len && !url_end(s.ptr[e])) {
            e++;
        }
        size_t end = e;
        while (end > i && strchr(".,;:!?", s.ptr[end - 1]) != NULL) {
            end--;
        }
        size_t n = end - i;
        if (n > 8 && n <= URL_MAX && !halt(fc) &&
            !seen_before(fc, 'u', s.ptr + i, n)) {
            if (has(fc, s.ptr + i, n, false)) {
                fc->f->found++;
            } else {
                missing(fc, "url: ", s.ptr + i, n, "", NULL, 0);
            }
        }
        i = e;
    }
}

static bool space(char c) {
    return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' ||
           c == '\f';
}

static void identifiers(fc_t *fc, ctxc_str_t s) {
    for (size_t i = 0; s.ptr != NULL && i < s.len; i++) {
        if (s.ptr[i] != '`') {
            continue;
        }
        size_t run = 0;
        while (i + run < s.len && s.ptr[i + run] == '`') {
            run++;
        }
        if (run > 1) { /* a fence or ``code``: to the same run again */
            size_t j = i + run;
            while (
                j + run <= s.len &&
                !(s.ptr[j] == '`' && memcmp(s.ptr + j, s.ptr + i, run) == 0)) {
                j++;
            }
            i = j + run - 1u;
            continue;
        }
        size_t j = i + 1;
        while (j < s.len && j - i - 1u <= IDENT_MAX && s.ptr[j] != '`' &&
               !space(s.ptr[j])) {
            j++;
        }
        if (j >= s.len || s.ptr[j] != '`') {
            continue; /* no identifier here; go on after the backtick */
        }
        size_t n = j - i - 1u;
        if (n > 0 && n <= IDENT_MAX && !halt(fc) &&
            !seen_before(fc, 'i', s.ptr + i + 1, n)) {
            if (has(fc, s.ptr + i + 1, n, false)) {
                fc->f->found++;
            } else {
                missing(fc, "identifier: ", s.ptr + i + 1, n, "`", NULL, 0);
            }
        }
        i = j;
    }
}

/* ---- the check ------------------------------------------------------------
 */

static void todos(fc_t *fc) {
    const ctxc_compress_ctx_t *ctx = fc->f->ctx;
    for (int k = 0; k < 2; k++) {
        ctxc_todo_status_t want =
            k == 0 ? CTXC_TODO_IN_PROGRESS : CTXC_TODO_PENDING;
        for (size_t i = 0; ctx->todos != NULL && i < ctx->todo_count; i++) {
            const ctxc_todo_t *t = &ctx->todos[i];
            if (t->status != want || t->content == NULL) {
                continue;
            }
            size_t n = strlen(t->content);
            if (n == 0 || halt(fc) || seen_before(fc, 't', t->content, n)) {
                continue;
            }
            if (has(fc, t->content, clip(t->content, n, TODO_MATCH), true)) {
                fc->f->found++;
            } else {
                missing(fc,
                        k == 0 ? "todo (in progress): " : "todo: ", t->content,
                        n, "", NULL, 0);
            }
        }
    }
}

static void calls(fc_t *fc, size_t p, const ctxc_block_t *b) {
    const ctxc_compress_ctx_t *ctx = fc->f->ctx;
    ctxc_str_t params = b->u.tool_call.parameters;
    if (fc->cls == RANK_URL) {
        urls(fc, params);
        return;
    }
    ctxc__tool_t t;
    (void)ctxc__tool_resolve(&ctx->values.density, b->u.tool_call.name, params,
                             &t);
    int cls = t.role == CTXC__ROLE_WRITE || t.role == CTXC__ROLE_SHELL
                  ? RANK_CHANGED
                  : RANK_READ;
    if (cls != fc->cls) {
        return;
    }
    switch (t.role) {
    case CTXC__ROLE_READ:
    case CTXC__ROLE_WRITE: {
        ctxc_str_t body;
        size_t pos = 0;
        while (ctxc__tool_next_path(&t, params, &pos, &body)) {
            path_anchor(fc, body.ptr, body.len);
            if (t.at != CTXC__AT_PATCH) {
                break;
            }
        }
        break;
    }
    case CTXC__ROLE_READ_MANY:
        paths_array(fc, params, "paths");
        break;
    case CTXC__ROLE_SEARCH:
        paths_array(fc, params, "path");
        break;
    case CTXC__ROLE_SHELL: {
        size_t q, k;
        ctxc_block_t resp;
        if (ctxc__pairs_seek(fc->f->pairs, p, b->u.tool_call.id, false,
                             CTXC__PAIR_WINDOW, &q, &k, &resp)) {
            failed_anchor(fc, &t, params, &resp);
        }
        break;
    }
    default:
        break;
    }
}

void ctxc__facts_check(ctxc__facts_t *f, ctxc_str_t summary) {
    f->found = f->missing = f->added = 0;
    f->stopped = false;
    f->section = NULL;
    f->section_len = 0;
    f->items = NULL;
    f->items_len = 0;
    if (f->mem == NULL || f->mem_cap < CTXC__FACTS_MIN(f->max_bytes)) {
        return;
    }
    fc_t fc;
    memset(&fc, 0, sizeof fc);
    fc.f = f;
    fc.sum = summary;
    fc.steps = STOP_EVERY - 1u; /* the hook is asked at the first anchor */
    fc.sec = (ctxc__sink_t){f->mem, f->max_bytes, 0};
    fc.tmp = f->mem + f->max_bytes;
    /* the set of anchors seen: the rest of the memory, 4-byte aligned */
    char *sm = fc.tmp + CTXC__FACTS_SCRATCH;
    size_t pad = (4u - ((uintptr_t)sm & 3u)) & 3u;
    size_t rest = f->mem_cap - CTXC__FACTS_MIN(f->max_bytes);
    if (rest >= 2u * (BIGRAM_BITS / 8u)) { /* the pair set first */
        fc.pairs = (uint8_t *)sm;
        memset(fc.pairs, 0, BIGRAM_BITS / 8u);
        for (size_t i = 0; summary.ptr != NULL && i + 1u < summary.len; i++) {
            size_t bit =
                pair_bit((uint8_t)summary.ptr[i], (uint8_t)summary.ptr[i + 1u]);
            fc.pairs[bit / 8u] |= (uint8_t)(1u << (bit % 8u));
        }
        sm += BIGRAM_BITS / 8u;
        rest -= BIGRAM_BITS / 8u;
        pad = (4u - ((uintptr_t)sm & 3u)) & 3u;
    }
    fc.seen = (uint32_t *)(void *)(sm + pad);
    fc.seen_slots = rest > pad ? (rest - pad) / sizeof(uint32_t) : 0u;
    memset(fc.seen, 0, fc.seen_slots * sizeof(uint32_t));
    const char *root = f->ctx->values.density.workspace_root;
    fc.root = root != NULL ? root : "";
    fc.rlen = strlen(fc.root);
    const ctxc_view_t *v = &f->ctx->view;
    for (fc.cls = 0; fc.cls < RANKS && !f->stopped; fc.cls++) {
        if (fc.cls == RANK_TODO) {
            todos(&fc);
            continue;
        }
        for (size_t p = f->to; p-- > f->from && !f->stopped;) {
            if (f->pin != NULL && f->pin[p]) {
                continue;
            }
            ctxc_entry_t e;
            ctxc_view_get(v, p, &e);
            if (e.speaker == CTXC_SPEAKER_TOOL ||
                (fc.cls == RANK_IDENT && e.speaker != CTXC_SPEAKER_HUMAN)) {
                continue;
            }
            const uint8_t *cur = NULL;
            ctxc_block_t b;
            while (ctxc_entry_next_block(&e, &cur, &b)) {
                if (b.type == CTXC_BLOCK_TEXT && fc.cls == RANK_URL) {
                    urls(&fc, b.u.text.text);
                } else if (b.type == CTXC_BLOCK_TEXT && fc.cls == RANK_IDENT) {
                    identifiers(&fc, b.u.text.text);
                } else if (b.type == CTXC_BLOCK_TOOL_CALL &&
                           fc.cls != RANK_IDENT) {
                    calls(&fc, p, &b);
                }
            }
        }
    }
    if (f->stopped) {
        f->found = f->missing = f->added = 0;
        return;
    }
    if (fc.sec.len == 0 && fc.left_out == 0) {
        return;
    }
    if (fc.sec.len == 0) {
        ctxc__puts(&fc.sec, HEADER);
        fc.items_at = fc.sec.len;
    }
    size_t items_end = fc.sec.len;
    if (fc.left_out > 0) {
        char num[24];
        size_t n = 0, x = fc.left_out;
        do {
            num[sizeof num - 1u - n++] = (char)('0' + x % 10u);
            x /= 10u;
        } while (x > 0 && n < sizeof num);
        ctxc__puts(&fc.sec, "- and ");
        ctxc__put(&fc.sec, num + sizeof num - n, n);
        ctxc__puts(&fc.sec, " more not listed (CTXC_CFG_FACT_CHECK_MAX_ITEMS / "
                            "_MAX_BYTES)\n");
    }
    ctxc__puts(&fc.sec, FOOTER);
    if (fc.sec.len > fc.sec.cap) { /* cannot happen: room was reserved */
        f->added = 0;
        return;
    }
    f->section = f->mem;
    f->section_len = fc.sec.len;
    f->items = f->mem + fc.items_at;
    f->items_len = items_end - fc.items_at;
}

#endif
