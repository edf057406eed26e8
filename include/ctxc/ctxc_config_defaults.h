/** @file
 * ctxc — compile-time configuration defaults.
 *
 * How configuration works (lwIP / mbedTLS style). The configuration header
 * is looked up in this order, the first found is the only one read:
 *   1. The integrator's header: if CTXC_CONFIG_FILE is defined, that file.
 *      The CMake build defines it for the library and every target linked
 *      to it from the cache variable of the same name
 *      (cmake -DCTXC_CONFIG_FILE=/path/to/my_ctxc_config.h); other build
 *      systems pass -DCTXC_CONFIG_FILE='"/path/to/my_ctxc_config.h"' to
 *      every compile of the library and of the application alike.
 *   2. Otherwise the first ctxc_config.h on the include path: in the CMake
 *      build the board's (`boards/<board>/ctxc_config.h`, the board folder is
 *      the last include directory of the library). It is only the default:
 *      a ctxc_config.h in your application's own include directories is
 *      seen by your code but not by the library, so use 1.
 *   3. Every option not defined by then gets the default below.
 * Options may also come from -D flags; whatever the way, the library and
 * everything that includes its headers must see the same values; the
 * options that size public structs are checked at link time (below).
 *
 * Defaults that are part of the project manifest (project.yml: default arena
 * sizes, limits, compiled-in strategies) are not written here: they come from
 * ctxc_manifest.h, which the build generates from project.yml. Every other
 * default is written here, once.
 *
 * Impossible combinations stop the build with #error.
 */
#ifndef CTXC_CONFIG_DEFAULTS_H
#define CTXC_CONFIG_DEFAULTS_H

#if defined(CTXC_CONFIG_FILE)
#include CTXC_CONFIG_FILE
#elif defined(__has_include)
#if __has_include("ctxc_config.h")
#include "ctxc_config.h"
#endif
#endif

/* Generated from project.yml by the build (build/<target>/gen/ctxc_manifest.h).
 */
#include "ctxc_manifest.h"

/* --- History store ------------------------------------------------------ */

/** CTXC_CFG_HISTORY_MAX_ENTRIES: entries a history declared with
 * CTXC_HISTORY_DEFINE_DEFAULT() can hold. Each entry costs
 * sizeof(ctxc_slot_t) (16 bytes) of index memory.
 * Default: project.yml defaults.history_max_entries. */
#ifndef CTXC_CFG_HISTORY_MAX_ENTRIES
#define CTXC_CFG_HISTORY_MAX_ENTRIES CTXC_MANIFEST_HISTORY_MAX_ENTRIES
#endif

/** CTXC_CFG_HISTORY_ARENA_BYTES: byte arena of a default history; holds the
 * text, JSON values and metadata of every entry.
 * Default: project.yml defaults.history_arena_bytes. */
#ifndef CTXC_CFG_HISTORY_ARENA_BYTES
#define CTXC_CFG_HISTORY_ARENA_BYTES CTXC_MANIFEST_HISTORY_ARENA_BYTES
#endif

/* --- JSON codec ----------------------------------------------------------- */

/** CTXC_CFG_JSON_MAX_TOKENS: JSON tokens one JSONL line may hold; sizes the
 * token array of ctxc_import_t: 4 x CTXC_JSON_TOKEN_WORDS bytes per token,
 * 20 on 32-bit targets (Cortex-M4), 24 on 64-bit little-endian hosts.
 * Default: project.yml defaults.json_max_tokens. */
#ifndef CTXC_CFG_JSON_MAX_TOKENS
#define CTXC_CFG_JSON_MAX_TOKENS CTXC_MANIFEST_JSON_MAX_TOKENS
#endif

/** CTXC_CFG_JSON_MAX_DEPTH: deepest nesting of arrays/objects accepted in any
 * JSON value (a line counts as depth 1). Deeper input is rejected with
 * CTXC_E_TOO_DEEP. Default: project.yml defaults.json_max_depth. */
#ifndef CTXC_CFG_JSON_MAX_DEPTH
#define CTXC_CFG_JSON_MAX_DEPTH CTXC_MANIFEST_JSON_MAX_DEPTH
#endif

/* --- Compression work area ---------------------------------------------- */

/** CTXC_CFG_WORK_SCRATCH_BYTES: bytes a work area declared with
 * CTXC_WORK_DEFINE_DEFAULT() has for the entries a plan or a density step
 * inserts (summaries, replacements). A plan that needs more fails with
 * CTXC_E_NO_SPACE and changes nothing.
 * Default: project.yml defaults.work_scratch_bytes. */
#ifndef CTXC_CFG_WORK_SCRATCH_BYTES
#define CTXC_CFG_WORK_SCRATCH_BYTES CTXC_MANIFEST_WORK_SCRATCH_BYTES
#endif

/** CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY: hash-table slots per history entry
 * in each of the two index tables of a work area declared with
 * CTXC_WORK_DEFINE() (16 bytes a slot, the total rounded up to a power of
 * two). A table holds keys (tool call ids; written paths, paths of file inclusions and
 * tool names) up to 3/4 of its slots; with them the density step and the
 * tool-call boundaries are linear in the history. A history with more keys
 * takes a slower path (quadratic) with the same result; 0 always does and
 * compiles the indexed paths out (less flash and RAM: for small histories
 * on small targets; boards/mps2-an386/ctxc_config.h sets 0 and says what
 * the scans cost at its 256 entries). Default: 2 (1.5 tool calls per entry
 * of a full history). */
#ifndef CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY
#define CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY 2
#endif

/** CTXC_CFG_PATH_MAX: longest file path (after resolving against the
 * workspace root) the density step compares; longer paths are skipped like
 * malformed parameters. Default: 512. */
#ifndef CTXC_CFG_PATH_MAX
#define CTXC_CFG_PATH_MAX 512
#endif

/** CTXC_CFG_DENSITY_FILTER_BYTES: bytes of each of the two filters in
 * which a session keeps what its density step learned between calls (the
 * paths of the read calls and of the file inclusions it has seen; a
 * Bloom filter of 8 x bytes bits, two probes a key). With them a step after
 * an append reads only the entries appended since the last one, unless
 * one of them can change an earlier entry's fate (a write of a path read
 * before, an inclusion of a path included before, a result of a call made
 * before, any result with recency pruning on); then, or after any other
 * edit of the history, it reads all of it, with the same result either
 * way (docs/design.md, "The density step between calls"). Costs 2 x bytes
 * of ctxc_session_t. 0: every step reads the whole history. Default: 64
 * (about 1 % false "can change" at 40 distinct paths). */
#ifndef CTXC_CFG_DENSITY_FILTER_BYTES
#define CTXC_CFG_DENSITY_FILTER_BYTES 64
#endif

/* --- Storage placement ------------------------------------------------- */

/** CTXC_STORAGE_ATTR: attributes every CTXC_*_DEFINE() macro puts on the
 * objects it declares (history slots and arena, the work area's arrays,
 * the HTTP work area), e.g. to put them all in another RAM bank:
 *   #define CTXC_STORAGE_ATTR __attribute__((section(".ram2")))
 * Empty by default. For one object only, use the *_DEFINE_ATTR() form of
 * each macro (its last argument is the attribute list, which may be empty
 * and is applied after CTXC_STORAGE_ATTR); for memory you place entirely by
 * hand, each storage object has an init function (docs/design.md "Storage
 * placement"). Not part of the layout: the library does not need it. */
#ifndef CTXC_STORAGE_ATTR
#define CTXC_STORAGE_ATTR
#endif

/* --- Errors ------------------------------------------------------------- */

/** CTXC_CFG_ERROR_MESSAGE_LEN: bytes of the human-readable message kept in
 * ctxc_error_t (including the terminating NUL). 0 keeps no message text at
 * all (saves flash and RAM; status, line and bytes-needed are still set).
 * Default: 160. */
#ifndef CTXC_CFG_ERROR_MESSAGE_LEN
#define CTXC_CFG_ERROR_MESSAGE_LEN 160
#endif

/* --- Port ---------------------------------------------------------------- */

/** CTXC_CFG_LOG_LINE_LEN: bytes of the stack buffer a log line is built in
 * (ctxc_port_log; longer lines are cut). Default: 128. */
#ifndef CTXC_CFG_LOG_LINE_LEN
#define CTXC_CFG_LOG_LINE_LEN 128
#endif

/* --- HTTP client and SSE reader (include/ctxc/http.h) ------------------- *
 * Every buffer lives in the caller's work area of CTXC_HTTP_WORK_BYTES
 * (the sum of the buffers below plus the client's state). */

/** CTXC_CFG_HTTP_IO_BUFFER_BYTES: bytes of the buffer the request (head and
 * body) is sent through in slices, then reused for the response bytes
 * received per recv() call. A request body of any size goes through it.
 * Default: 512. */
#ifndef CTXC_CFG_HTTP_IO_BUFFER_BYTES
#define CTXC_CFG_HTTP_IO_BUFFER_BYTES 512
#endif

/** CTXC_CFG_HTTP_LINE_MAX: longest response line the client accepts: the
 * status line, one header line, a chunk-size line or a trailer line (bytes,
 * without the line end). A longer one fails with CTXC_E_TOO_LARGE naming
 * this option. Default: 1024. */
#ifndef CTXC_CFG_HTTP_LINE_MAX
#define CTXC_CFG_HTTP_LINE_MAX 1024
#endif

/** CTXC_CFG_HTTP_MAX_HEADERS: most header (and trailer) lines one response
 * may have; more fail with CTXC_E_TOO_LARGE naming this option.
 * Default: 64. */
#ifndef CTXC_CFG_HTTP_MAX_HEADERS
#define CTXC_CFG_HTTP_MAX_HEADERS 64
#endif

/** CTXC_CFG_HTTP_SSE_BUFFER_BYTES: bytes of the Server-Sent Events buffer:
 * the data of one event (its data lines joined with `"\n"`, plus a NUL) and
 * the line being read must fit together. More fails with
 * CTXC_E_TOO_LARGE naming this option. Default: 4096. */
#ifndef CTXC_CFG_HTTP_SSE_BUFFER_BYTES
#define CTXC_CFG_HTTP_SSE_BUFFER_BYTES 4096
#endif

/** CTXC_CFG_HTTP_SSE_FIELD_MAX: bytes kept for an SSE event's type (the
 * `event:` field) and for its last event id (the `id:` field), each
 * including a NUL. Longer values fail with CTXC_E_TOO_LARGE. Default: 64. */
#ifndef CTXC_CFG_HTTP_SSE_FIELD_MAX
#define CTXC_CFG_HTTP_SSE_FIELD_MAX 64
#endif

/** CTXC_CFG_HTTP_ERROR_BODY_MAX: bytes of the body of an HTTP error status
 * (>= 400) kept, made printable, as the excerpt that the error message and
 * ctxc_http_response_t.error_body show (including a NUL; the message is
 * also cut to CTXC_CFG_ERROR_MESSAGE_LEN). It also holds the Location of a
 * redirect. Default: 256. */
#ifndef CTXC_CFG_HTTP_ERROR_BODY_MAX
#define CTXC_CFG_HTTP_ERROR_BODY_MAX 256
#endif

/** CTXC_CFG_HTTP_TIMEOUT_MS: the read timeout (ms without progress while
 * sending or receiving) of a request that gives 0. Default: 60000. */
#ifndef CTXC_CFG_HTTP_TIMEOUT_MS
#define CTXC_CFG_HTTP_TIMEOUT_MS 60000
#endif

/** CTXC_CFG_HTTP_IDLE_POLLS_MAX: without a clock in the port, this many
 * consecutive "try again" (0) answers of the transport's send or recv count
 * as a timeout (CTXC_E_TIMEOUT), so a stalled peer never makes the client
 * spin forever. With a clock the read timeout is measured instead.
 * Default: 1000. */
#ifndef CTXC_CFG_HTTP_IDLE_POLLS_MAX
#define CTXC_CFG_HTTP_IDLE_POLLS_MAX 1000
#endif

/* --- LLM providers (include/ctxc/provider.h) ---------------------------- *
 * CTXC_CFG_PROVIDER_<NAME> (0/1) leaves a provider API out of / in the
 * build (OPENAI: the OpenAI-compatible chat completions API; ANTHROPIC: the
 * Messages API; GEMINI: generateContent). Default: 1 each. */
/** CTXC_CFG_PROVIDER_OPENAI: the OpenAI-compatible chat completions API in the build (1) or left out (0). */
#ifndef CTXC_CFG_PROVIDER_OPENAI
#define CTXC_CFG_PROVIDER_OPENAI 1
#endif
/** CTXC_CFG_PROVIDER_ANTHROPIC: the Anthropic Messages API in the build (1) or left out (0). */
#ifndef CTXC_CFG_PROVIDER_ANTHROPIC
#define CTXC_CFG_PROVIDER_ANTHROPIC 1
#endif
/** CTXC_CFG_PROVIDER_GEMINI: the Gemini generateContent API in the build (1) or left out (0). */
#ifndef CTXC_CFG_PROVIDER_GEMINI
#define CTXC_CFG_PROVIDER_GEMINI 1
#endif

/** CTXC_CFG_PROVIDER_KEY_BYTES: bytes of the API key buffer in
 * ctxc_provider_client_t (the auth header value: "Bearer " + key + NUL for
 * OpenAI). A longer key fails with CTXC_E_TOO_LARGE. Default: 256. */
#ifndef CTXC_CFG_PROVIDER_KEY_BYTES
#define CTXC_CFG_PROVIDER_KEY_BYTES 256
#endif

/** CTXC_CFG_PROVIDER_JSON_TOKENS and CTXC_CFG_PROVIDER_ERROR_BYTES are gone:
 * answers and error bodies are read by a resumable JSON reader in a fixed
 * ~450 bytes of the client, whatever their size or number of values. A
 * configuration that still sets them is told so. */
#if defined(CTXC_CFG_PROVIDER_JSON_TOKENS) || defined(CTXC_CFG_PROVIDER_ERROR_BYTES)
#error "CTXC_CFG_PROVIDER_JSON_TOKENS / CTXC_CFG_PROVIDER_ERROR_BYTES were removed: answers are read in fixed memory whatever their size; drop them from your ctxc_config.h"
#endif

/** CTXC_CFG_PROVIDER_MAX_TOKENS: max_tokens sent to the Anthropic API (where
 * it is required) when the request leaves it 0. Default: 8192. */
#ifndef CTXC_CFG_PROVIDER_MAX_TOKENS
#define CTXC_CFG_PROVIDER_MAX_TOKENS 8192
#endif

/** CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS: longest wait before a retry (a
 * larger Retry-After is cut to it). Without Retry-After the wait is 500 ms,
 * doubled per retry, up to this. Default: 60000. */
#ifndef CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS
#define CTXC_CFG_PROVIDER_RETRY_WAIT_MAX_MS 60000
#endif

/* --- Settings and profiles (include/ctxc/settings.h) -------------------- */

/** CTXC_CFG_SETTINGS_VALUE_BYTES: bytes of one string setting (the ten of
 * the registry: provider, model, base-url, auth-key-name, network.ca-file,
 * compression.profile, compression.density.vocabularies, .readTools,
 * .writeTools, .spillDir), including the terminating NUL. Each string setting costs this much per layer (two layers
 * in ctxc_settings_store_t). Longer values are rejected by /set and make a
 * settings or profile file invalid. Default: 128. */
#ifndef CTXC_CFG_SETTINGS_VALUE_BYTES
#define CTXC_CFG_SETTINGS_VALUE_BYTES 128
#endif

/** CTXC_CFG_FACT_CHECK_MAX_ITEMS, CTXC_CFG_FACT_CHECK_MAX_BYTES: the bounds
 * of the section of missing facts that the fact check of an LLM summary
 * (setting compression.factCheck) appends: items listed at most, and bytes
 * at most, header and footer included (< 256: no section is written; the
 * check still counts). The section and the check's scratch (512 bytes) are
 * taken from the top of the summary's answer buffer (work scratch). */
#ifndef CTXC_CFG_FACT_CHECK_MAX_ITEMS
#define CTXC_CFG_FACT_CHECK_MAX_ITEMS 12
#endif
/** CTXC_CFG_FACT_CHECK_MAX_BYTES: bytes of that section at most (see
 * CTXC_CFG_FACT_CHECK_MAX_ITEMS). Default: 1024. */
#ifndef CTXC_CFG_FACT_CHECK_MAX_BYTES
#define CTXC_CFG_FACT_CHECK_MAX_BYTES 1024
#endif

/** CTXC_CFG_SETTINGS_FILE_BYTES: bytes of the buffer in ctxc_settings_store_t
 * that settings.json and `profiles/<name>.json` are read into and written
 * from. A file larger than this is reported as unusable (never
 * overwritten). The build checks that a file holding every setting at its
 * longest value fits: at least 1339 + 10 x CTXC_CFG_SETTINGS_VALUE_BYTES (2619
 * with the default 128; CTXC_SETTINGS_FILE_MIN_BYTES in ctxc/settings.h).
 * 0: no buffer, and the store uses no filesystem (no settings.json, no
 * profiles; ctxc_settings_init ignores its fs argument), for a device
 * without one. Default: 2688 (a file with every setting at its longest
 * needs 2619). */
#ifndef CTXC_CFG_SETTINGS_FILE_BYTES
#define CTXC_CFG_SETTINGS_FILE_BYTES 2688
#endif

/** CTXC_CFG_SETTINGS_PROFILE_NAME_MAX: longest profile name, in characters
 * ([A-Za-z0-9._-]; the file is `profiles/<name>.json`). Default: 32. */
#ifndef CTXC_CFG_SETTINGS_PROFILE_NAME_MAX
#define CTXC_CFG_SETTINGS_PROFILE_NAME_MAX 32
#endif

/** CTXC_CFG_COMMANDS (0/1): the text command layer of the settings —
 * ctxc_settings_command (/set, /settings, /profile), ctxc_settings_complete
 * and the registry's hints and descriptions — is in the build (1, default)
 * or left out (0: a headless firmware that sets values with
 * ctxc_settings_set / the typed accessors; both functions then answer
 * CTXC_E_UNAVAILABLE, and the registry keeps keys, types, defaults and
 * ranges only). */
#ifndef CTXC_CFG_COMMANDS
#define CTXC_CFG_COMMANDS 1
#endif

/* --- Strategies ------------------------------------------------------------
 * CTXC_CFG_STRATEGY_<NAME> (0/1) leaves a strategy out of / in the build.
 * Defaults: project.yml strategies.<name>. */
/** CTXC_CFG_STRATEGY_MIDDLE_OUT: middle-out (LLM) in the build (1) or left out (0). */
#ifndef CTXC_CFG_STRATEGY_MIDDLE_OUT
#define CTXC_CFG_STRATEGY_MIDDLE_OUT CTXC_MANIFEST_STRATEGY_MIDDLE_OUT
#endif
/** CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION: top-down-truncation (LLM-free) in the build (1) or left out (0). */
#ifndef CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
#define CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION                                  \
    CTXC_MANIFEST_STRATEGY_TOP_DOWN_TRUNCATION
#endif
/** CTXC_CFG_STRATEGY_ONE_SHOT: one-shot (LLM) in the build (1) or left out (0). */
#ifndef CTXC_CFG_STRATEGY_ONE_SHOT
#define CTXC_CFG_STRATEGY_ONE_SHOT CTXC_MANIFEST_STRATEGY_ONE_SHOT
#endif
/** CTXC_CFG_STRATEGY_HIGH_DENSITY: high-density (LLM-free) in the build (1) or left out (0). */
#ifndef CTXC_CFG_STRATEGY_HIGH_DENSITY
#define CTXC_CFG_STRATEGY_HIGH_DENSITY CTXC_MANIFEST_STRATEGY_HIGH_DENSITY
#endif

/** CTXC_CFG_DEFAULT_STRATEGY: the registry default of compression.strategy
 * (a string literal), always a strategy of this build. Default: the
 * manifest's (ctxc_manifest.h CTXC_MANIFEST_DEFAULT_STRATEGY: middle-out when
 * it is compiled in, else the first of high-density, top-down-truncation,
 * one-shot that is) when the `CTXC_CFG_STRATEGY_<NAME>` switches are the
 * manifest's; when a configuration changes them, the same rule applied to
 * the switches. Set it yourself to pick another one of the build. */
#ifndef CTXC_CFG_DEFAULT_STRATEGY
#if CTXC_CFG_STRATEGY_MIDDLE_OUT == CTXC_MANIFEST_STRATEGY_MIDDLE_OUT &&       \
    CTXC_CFG_STRATEGY_HIGH_DENSITY == CTXC_MANIFEST_STRATEGY_HIGH_DENSITY &&   \
    CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION ==                                   \
        CTXC_MANIFEST_STRATEGY_TOP_DOWN_TRUNCATION &&                          \
    CTXC_CFG_STRATEGY_ONE_SHOT == CTXC_MANIFEST_STRATEGY_ONE_SHOT
#define CTXC_CFG_DEFAULT_STRATEGY CTXC_MANIFEST_DEFAULT_STRATEGY
#elif CTXC_CFG_STRATEGY_MIDDLE_OUT
#define CTXC_CFG_DEFAULT_STRATEGY "middle-out"
#elif CTXC_CFG_STRATEGY_HIGH_DENSITY
#define CTXC_CFG_DEFAULT_STRATEGY "high-density"
#elif CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION
#define CTXC_CFG_DEFAULT_STRATEGY "top-down-truncation"
#elif CTXC_CFG_STRATEGY_ONE_SHOT
#define CTXC_CFG_DEFAULT_STRATEGY "one-shot"
#endif
#endif

/* --- Tool vocabularies of the density step -------------------------------
 * CTXC_CFG_TOOLS_<VOCAB> (0/1): the rows of one vocabulary in the
 * tool-role table of high-density (src/tool_roles.h says which tools and
 * parameters each follows): SPEC (the spec's read_file, write_file,
 * replace, ...), CLAUDE_CODE (Read, Write, Edit, MultiEdit, NotebookEdit,
 * Bash, Glob, Grep), OPENHANDS (str_replace_editor, execute_bash),
 * SWE_AGENT (str_replace_editor, bash), CODEX (apply_patch, shell), PI
 * (read, write, edit, bash), CLINE (read_file, write_to_file,
 * replace_in_file, execute_command). The setting
 * compression.density.vocabularies picks among the compiled-in ones.
 * Default: 1 when high-density is compiled in (CTXC_CFG_STRATEGY_HIGH_DENSITY),
 * else 0 (the setting then takes only "none"). */
/** CTXC_CFG_TOOLS_SPEC: the interchange spec's tool names (read_file, write_file, replace, ...) in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_SPEC
#define CTXC_CFG_TOOLS_SPEC CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif
/** CTXC_CFG_TOOLS_CLAUDE_CODE: Claude Code's tools in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_CLAUDE_CODE
#define CTXC_CFG_TOOLS_CLAUDE_CODE CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif
/** CTXC_CFG_TOOLS_OPENHANDS: OpenHands' tools in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_OPENHANDS
#define CTXC_CFG_TOOLS_OPENHANDS CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif
/** CTXC_CFG_TOOLS_SWE_AGENT: SWE-agent's function-calling tools in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_SWE_AGENT
#define CTXC_CFG_TOOLS_SWE_AGENT CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif
/** CTXC_CFG_TOOLS_CODEX: Codex CLI's tools in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_CODEX
#define CTXC_CFG_TOOLS_CODEX CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif
/** CTXC_CFG_TOOLS_PI: pi's tools in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_PI
#define CTXC_CFG_TOOLS_PI CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif
/** CTXC_CFG_TOOLS_CLINE: Cline's tools in the tool-role table (1) or not (0). */
#ifndef CTXC_CFG_TOOLS_CLINE
#define CTXC_CFG_TOOLS_CLINE CTXC_CFG_STRATEGY_HIGH_DENSITY
#endif

/** CTXC_CFG_DENSITY_USER_TOOLS_MAX: most entries in each of the settings
 * compression.density.readTools and compression.density.writeTools (user
 * tools of in-house agents, `name` or `name:pathKey`); a longer list is
 * refused when set. 1 .. 64. Default 8. */
#ifndef CTXC_CFG_DENSITY_USER_TOOLS_MAX
#define CTXC_CFG_DENSITY_USER_TOOLS_MAX 8
#endif

/* --- Prompts ---------------------------------------------------------------
 * CTXC_CFG_PROMPT_<CATEGORY>_<NAME> (0/1): the built-in copy of
 * prompts/<category>/<name>.md is in the build (1) or left out (0, saves its
 * flash; the prompt must then come from the filesystem, else resolving it
 * fails with CTXC_E_PROMPT_NOT_FOUND). Every prompt defaults to 1, except
 * that the compression prompts follow their strategy's switch. */
/** CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT: built-in copy of prompts/compression/middle-out.md in (1) or out (0); follows CTXC_CFG_STRATEGY_MIDDLE_OUT. */
#ifndef CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT
#define CTXC_CFG_PROMPT_COMPRESSION_MIDDLE_OUT CTXC_CFG_STRATEGY_MIDDLE_OUT
#endif
/** CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT: built-in copy of prompts/compression/one-shot.md in (1) or out (0); follows CTXC_CFG_STRATEGY_ONE_SHOT. */
#ifndef CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT
#define CTXC_CFG_PROMPT_COMPRESSION_ONE_SHOT CTXC_CFG_STRATEGY_ONE_SHOT
#endif

/* --- Impossible combinations -------------------------------------------- */

#if !CTXC_CFG_STRATEGY_MIDDLE_OUT && !CTXC_CFG_STRATEGY_HIGH_DENSITY &&       \
    !CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && !CTXC_CFG_STRATEGY_ONE_SHOT
#error "at least one CTXC_CFG_STRATEGY_<NAME> must be 1"
#endif
#if CTXC_CFG_HISTORY_MAX_ENTRIES < 2
#error                                                                         \
    "CTXC_CFG_HISTORY_MAX_ENTRIES must be at least 2 (a tool call and its response)"
#endif
#if CTXC_CFG_HISTORY_MAX_ENTRIES > 65535
#error "CTXC_CFG_HISTORY_MAX_ENTRIES must be at most 65535"
#endif
#if CTXC_CFG_HISTORY_ARENA_BYTES < 256
#error "CTXC_CFG_HISTORY_ARENA_BYTES must be at least 256"
#endif
#if CTXC_CFG_HISTORY_ARENA_BYTES > 0x7FFFFFFF
#error "CTXC_CFG_HISTORY_ARENA_BYTES must be below 2 GiB"
#endif
#if CTXC_CFG_JSON_MAX_DEPTH < 4
#error                                                                         \
    "CTXC_CFG_JSON_MAX_DEPTH must be at least 4 (entry, blocks, block, value)"
#endif
#if CTXC_CFG_JSON_MAX_DEPTH > 64
#error                                                                         \
    "CTXC_CFG_JSON_MAX_DEPTH must be at most 64 (the validator tracks nesting in a 64-bit mask)"
#endif
#if CTXC_CFG_JSON_MAX_TOKENS < 16
#error "CTXC_CFG_JSON_MAX_TOKENS must be at least 16"
#endif
#if CTXC_CFG_WORK_SCRATCH_BYTES < 256
#error "CTXC_CFG_WORK_SCRATCH_BYTES must be at least 256"
#endif
#if CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY < 0 ||                                 \
    CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY > 64
#error "CTXC_CFG_WORK_INDEX_SLOTS_PER_ENTRY must be 0 .. 64"
#endif
#if CTXC_CFG_PATH_MAX < 64
#error "CTXC_CFG_PATH_MAX must be at least 64"
#endif
#if CTXC_CFG_DENSITY_FILTER_BYTES < 0 || CTXC_CFG_DENSITY_FILTER_BYTES > 4096
#error "CTXC_CFG_DENSITY_FILTER_BYTES must be 0 .. 4096"
#endif
#if CTXC_CFG_LOG_LINE_LEN < 16
#error "CTXC_CFG_LOG_LINE_LEN must be at least 16"
#endif
#if CTXC_CFG_ERROR_MESSAGE_LEN != 0 && CTXC_CFG_ERROR_MESSAGE_LEN < 32
#error "CTXC_CFG_ERROR_MESSAGE_LEN must be 0 (no text) or at least 32"
#endif
#if CTXC_CFG_SETTINGS_VALUE_BYTES < 32
#error "CTXC_CFG_SETTINGS_VALUE_BYTES must be at least 32"
#endif
#if CTXC_CFG_SETTINGS_VALUE_BYTES > 4096
#error "CTXC_CFG_SETTINGS_VALUE_BYTES must be at most 4096"
#endif
/* CTXC_CFG_SETTINGS_FILE_BYTES: 0, or at least CTXC_SETTINGS_FILE_MIN_BYTES
 * (checked in ctxc/settings.h, which knows the settings) */
#if CTXC_CFG_SETTINGS_PROFILE_NAME_MAX < 1
#error "CTXC_CFG_SETTINGS_PROFILE_NAME_MAX must be at least 1"
#endif
#if CTXC_CFG_SETTINGS_PROFILE_NAME_MAX >= CTXC_CFG_SETTINGS_VALUE_BYTES
#error                                                                         \
    "CTXC_CFG_SETTINGS_PROFILE_NAME_MAX must be below CTXC_CFG_SETTINGS_VALUE_BYTES (compression.profile holds a profile name)"
#endif
#if CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 21 > CTXC_CFG_PATH_MAX
#error                                                                         \
    "CTXC_CFG_SETTINGS_PROFILE_NAME_MAX is too long for CTXC_CFG_PATH_MAX (profiles/<name>.json.tmpNN must fit)"
#endif
#if CTXC_CFG_HTTP_IO_BUFFER_BYTES < 64
#error "CTXC_CFG_HTTP_IO_BUFFER_BYTES must be at least 64"
#endif
#if CTXC_CFG_HTTP_LINE_MAX < 64
#error "CTXC_CFG_HTTP_LINE_MAX must be at least 64"
#endif
#if CTXC_CFG_HTTP_MAX_HEADERS < 1
#error "CTXC_CFG_HTTP_MAX_HEADERS must be at least 1"
#endif
#if CTXC_CFG_HTTP_SSE_BUFFER_BYTES < 64
#error "CTXC_CFG_HTTP_SSE_BUFFER_BYTES must be at least 64"
#endif
#if CTXC_CFG_HTTP_SSE_FIELD_MAX < 8
#error "CTXC_CFG_HTTP_SSE_FIELD_MAX must be at least 8"
#endif
#if CTXC_CFG_HTTP_ERROR_BODY_MAX < 16
#error "CTXC_CFG_HTTP_ERROR_BODY_MAX must be at least 16"
#endif
#if CTXC_CFG_HTTP_TIMEOUT_MS < 1
#error "CTXC_CFG_HTTP_TIMEOUT_MS must be at least 1"
#endif
#if CTXC_CFG_HTTP_IDLE_POLLS_MAX < 1
#error "CTXC_CFG_HTTP_IDLE_POLLS_MAX must be at least 1"
#endif
#if !CTXC_CFG_STRATEGY_MIDDLE_OUT && !CTXC_CFG_STRATEGY_TOP_DOWN_TRUNCATION && \
    !CTXC_CFG_STRATEGY_ONE_SHOT && !CTXC_CFG_STRATEGY_HIGH_DENSITY
#error "at least one CTXC_CFG_STRATEGY_<NAME> must be 1"
#endif

#if CTXC_CFG_DENSITY_USER_TOOLS_MAX < 1 || CTXC_CFG_DENSITY_USER_TOOLS_MAX > 64
#error "CTXC_CFG_DENSITY_USER_TOOLS_MAX must be 1 .. 64"
#endif

/* --- Link-time guard -------------------------------------------------------
 * The options that size public structs and work areas become symbol names
 * (ctxc_cfg_<OPTION>_<value>) that the library defines and every
 * translation unit including a ctxc header references: an application
 * built with other values fails to link, naming the option and its value.
 * See ctxc/config_guard.h; CTXC_CONFIG_GUARD 0 turns it off. */
#include "ctxc/config_guard.h"

#endif /* CTXC_CONFIG_DEFAULTS_H */
