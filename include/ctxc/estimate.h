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
 *   media         caption ("" when absent); an image (MIME type image/...)
 *                 adds its cost (below)
 *
 * An image costs what its provider charges for its size, read from the
 * header of its base64 data (PNG, GIF, JPEG, WebP), or a fixed default when
 * the size is not known (no base64 data, another format, a URL):
 *   default, anthropic  w x h / 750 (rounded up) of the image fitted in
 *                       1568 x 1568 pixels (Anthropic's rule, the dearest
 *                       of the three for most sizes, so an estimate errs
 *                       towards compressing early); unknown size: 1000
 *                       (default) or 1600 (anthropic, its largest image)
 *   openai              high detail: fitted in 2048 x 2048, the shorter
 *                       side to 768, 85 + 170 a 512-pixel tile; unknown: 765
 *   gemini              258 up to 384 x 384, else 258 a 768-pixel tile;
 *                       unknown: 1032
 * The default estimator uses `default`; ctxc_estimate_block_for() with a
 * ctxc_image_cost_t as user (ctxc_history_set_estimator) uses a
 * provider's rule.
 *
 * A real tokenizer replaces this through ctxc_history_set_estimator().
 */
#ifndef CTXC_ESTIMATE_H
#define CTXC_ESTIMATE_H

#include <stdbool.h>
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

/** Whose price an image's estimate follows (see above). */
typedef enum {
    CTXC_IMAGE_COST_DEFAULT = 0,
    CTXC_IMAGE_COST_ANTHROPIC,
    CTXC_IMAGE_COST_OPENAI,
    CTXC_IMAGE_COST_GEMINI
} ctxc_image_cost_t;

/** Tokens of an image of unknown size, the default rule. */
#define CTXC_IMAGE_TOKENS_DEFAULT 1000u
/** Tokens of an image of unknown size, Anthropic's rule. */
#define CTXC_IMAGE_TOKENS_ANTHROPIC 1600u
/** Tokens of an image of unknown size, OpenAI's rule (high detail). */
#define CTXC_IMAGE_TOKENS_OPENAI 765u
/** Tokens of an image of unknown size, Gemini's rule. */
#define CTXC_IMAGE_TOKENS_GEMINI 1032u

/** The width and height of a media block's image, from the header of its
 * base64 data (PNG, GIF, JPEG, WebP); false (and 0, 0) when not known. */
bool ctxc_estimate_image_size(const ctxc_block_t *b, uint32_t *w,
                              uint32_t *h);

/** The tokens an image of w x h pixels costs by `rule` (w or h 0: the
 * rule's cost of an image of unknown size). */
uint32_t ctxc_estimate_image_tokens(ctxc_image_cost_t rule, uint32_t w,
                                    uint32_t h);

/** The default estimator with a provider's image rule: user points to a
 * ctxc_image_cost_t (NULL: CTXC_IMAGE_COST_DEFAULT, the default
 * estimator). Install it with ctxc_history_set_estimator(h,
 * ctxc_estimate_block_for, &rule). */
uint32_t ctxc_estimate_block_for(void *user, const ctxc_block_t *block);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_ESTIMATE_H */
