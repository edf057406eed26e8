/** @file
 * ctxc — token estimation.
 *
 * The default estimator gives each block
 *     round(max(words * 1.3, utf16_len / 4))
 * where, for non-empty text, `words` is the number of pieces that splitting
 * on runs of whitespace gives, counting the empty piece before leading and
 * after trailing whitespace (JavaScript: `text.split(/\s+/).length`;
 * whitespace is the ECMAScript `\s` set: `\t` `\n` `\v` `\f` `\r`, space, U+00A0,
 * U+1680, U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000, U+FEFF),
 * so `"done\n"` is 2 pieces -> 3 tokens and " " is 3 tokens; empty text is 0
 * tokens. `utf16_len` is the length in UTF-16 code units
 * (a character outside the BMP counts 2). round() rounds halves up, like
 * JavaScript's Math.round. It is computed in integers:
 *     max((13 * words + 5) / 10, (utf16_len + 2) / 4)
 * which equals the floating-point formula for every length below 2^50.
 *
 * The text of a block:
 *   text          text
 *   tool_call     compact JSON `{"name":<name>,"parameters":<parameters>}`
 *   tool_response error + `"\n"` + result when error is present, else result,
 *                 where result is the string itself when the result is a JSON
 *                 string and its canonical JSON text otherwise
 *   thinking      thought
 *   code          code
 *   media         caption ("" when absent)
 *
 * A real tokenizer replaces this through ctxc_history_set_estimator().
 */
#ifndef CTXC_ESTIMATE_H
#define CTXC_ESTIMATE_H

#include <stddef.h>
#include <stdint.h>

#include "ctxc/history.h"

#ifdef __cplusplus
extern "C" {
#endif

/** round(max(words * 1.3, utf16_len / 4)) of one UTF-8 string. Bytes that are
 * not valid UTF-8 count as one code unit each. */
uint32_t ctxc_estimate_text(const char *text, size_t len);

/** The two inputs of the formula, for inspection and tests. */
void ctxc_estimate_measure(const char *text, size_t len, uint64_t *words,
                           uint64_t *utf16_len);

/** The formula itself. */
uint32_t ctxc_estimate_formula(uint64_t words, uint64_t utf16_len);

/* ctxc_estimate_block_default() is declared in history.h. */

#ifdef __cplusplus
}
#endif

#endif /* CTXC_ESTIMATE_H */
