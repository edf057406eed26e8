/*
 * The consumer application of the consumption tests (test/consume): a
 * program of someone else's that uses ctxc from outside its tree. It
 * imports a short history (history_data.c, written at test time from the
 * first lines of boards/host/examples/coding-session.jsonl), compresses it
 * with top-down-truncation for a 1000-token context window and prints
 *
 *   consume: imported <n> entries, <t> tokens; top-down-truncation, context
 *   limit 1000: <n> entries, <t> tokens
 *
 * (one line), which the test compares with what the ctxc CLI prints for the
 * same file, then the configuration it was compiled with,
 *
 *   consume: config: CTXC_CFG_ERROR_MESSAGE_LEN <n>,
 *   CTXC_CFG_HISTORY_ARENA_BYTES <n>
 *
 * (one line), which the add_subdirectory tests compare with the
 * configuration they give (the library has the same, or the link-time
 * guard stops the link). Host: stdout and exit status. Cortex-M4
 * (__arm__): the board's semihosting console (board.h, startup.c of the
 * image).
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "ctxc/ctxc.h"

#if defined(__arm__)
#include "board.h"
static void out(const char *s) { board_write(s, strlen(s)); }
#else
#include <stdio.h>
static void out(const char *s) { fputs(s, stdout); }
#endif

#define CONTEXT_LIMIT "1000"

extern const unsigned char consume_history[];
extern const size_t consume_history_len;

CTXC_HISTORY_DEFINE_DEFAULT(history);
CTXC_WORK_DEFINE_DEFAULT(work);
static ctxc_import_t importer;
static ctxc_settings_store_t settings;
static ctxc_session_t session;

static void out_u64(uint64_t v) {
    char buf[24];
    size_t i = sizeof buf - 1;
    buf[i] = '\0';
    do {
        buf[--i] = (char)('0' + (char)(v % 10u));
        v /= 10u;
    } while (v != 0u);
    out(&buf[i]);
}

static int fail(const char *what, const ctxc_error_t *err) {
    out("consume: FAIL: ");
    out(what);
    out(": ");
    out(ctxc_error_message(err));
    out("\n");
    return 1;
}

static void counts(void) {
    out_u64((uint64_t)ctxc_history_count(&history));
    out(" entries, ");
    out_u64(ctxc_history_tokens(&history));
    out(" tokens");
}

int main(int argc, char **argv) {
    (void)argc;
    (void)argv;
    ctxc_error_t err;
    if (ctxc_import_text(&importer, &history, (const char *)consume_history,
                         consume_history_len, CTXC_FORMAT_AUTO,
                         &err) != CTXC_OK) {
        return fail("import", &err);
    }
    out("consume: imported ");
    counts();
    ctxc_settings_init(&settings, NULL);
    if (ctxc_settings_set(&settings, "compression.strategy",
                          "top-down-truncation", &err) != CTXC_OK ||
        ctxc_settings_set(&settings, "context-limit", CONTEXT_LIMIT, &err) !=
            CTXC_OK) {
        out("\n");
        return fail("settings", &err);
    }
    if (ctxc_session_init(&session, &history, &work, &settings, &err) !=
            CTXC_OK ||
        ctxc_session_compress(&session, &err) != CTXC_OK) {
        out("\n");
        return fail("compress", &err);
    }
    out("; top-down-truncation, context limit " CONTEXT_LIMIT ": ");
    counts();
    out("\nconsume: config: CTXC_CFG_ERROR_MESSAGE_LEN ");
    out_u64((uint64_t)CTXC_CFG_ERROR_MESSAGE_LEN);
    out(", CTXC_CFG_HISTORY_ARENA_BYTES ");
    out_u64((uint64_t)CTXC_CFG_HISTORY_ARENA_BYTES);
    out("\n");
    return 0;
}
