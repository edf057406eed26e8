/*
 * The tokenise-only baseline of the import rows: a JSON tokenizer run over
 * a line and nothing else (no validation of our own, no decoding, no
 * store). The import target is "import <= 2 x tokenise".
 *
 * Today it is jsmn, the system header of Debian's libjsmn-dev, configured
 * as the library used it (strict, parent links, the same token limit). It
 * is included here only, so the bench does not depend on the library using
 * jsmn; without the header the tokenise rows are left out and the reports
 * say so. To time another tokenizer (the project's own), write an adapter
 * with the signature of bench_tokeniser_t.tokenise and point
 * `bench_tokeniser` at it: that one line is the switch.
 */
#include <stddef.h>

#include "bench.h"
#include "ctxc/ctxc.h"

/* BENCH_HAVE_JSMN: 1 when CMake found jsmn.h at configure time (see
 * test/bench/CMakeLists.txt); a build without CMake asks the compiler. */
#ifndef BENCH_HAVE_JSMN
#if defined(__has_include)
#if __has_include(<jsmn.h>)
#define BENCH_HAVE_JSMN 1
#endif
#endif
#endif

#if defined(BENCH_HAVE_JSMN) && BENCH_HAVE_JSMN
#define JSMN_STATIC
#define JSMN_STRICT
#define JSMN_PARENT_LINKS
#include <jsmn.h>

static jsmntok_t jsmn_tokens[CTXC_CFG_JSON_MAX_TOKENS];

static long tokenise_jsmn(const char *json, size_t len) {
    jsmn_parser p;
    jsmn_init(&p);
    return jsmn_parse(&p, json, len, jsmn_tokens, CTXC_CFG_JSON_MAX_TOKENS);
}

#define BENCH_JSMN                                                             \
    { "jsmn", tokenise_jsmn }
#else
#define BENCH_JSMN                                                             \
    { "jsmn (jsmn.h not found: install libjsmn-dev)", NULL }
#endif

const bench_tokeniser_t bench_tokeniser = BENCH_JSMN;
