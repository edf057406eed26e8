/** @file
 * ctxc — settings: the registry of setting specs, the layers a value
 * resolves through, the settings file, named profiles, the /set /settings
 * /profile commands and their completion.
 *
 * Registry: CTXC_SETTINGS_LIST below is the one table of settings (key,
 * type, allowed values, default, range, check, persist-to-profile, category,
 * hint, description). A default is written there and nowhere else.
 *
 * Resolution of a value:
 *   ephemeral layer   /set KEY VALUE, or the values of a loaded profile
 *   persistent layer  the settings file (settings.json at the fs root)
 *   registry default  the table (some keys have none: see each key)
 *
 * Storage, through the port filesystem (include/ctxc/port.h):
 *   settings.json            the persistent layer
 *   `profiles/<name>.json`     one file per profile
 * Both are flat JSON objects {"key": value}: strings quoted, booleans,
 * numbers as plain decimals (0.75, 32000). Files are written with
 * ctxc_fs_write_atomic(), so a reader or a crash never sees a torn file and
 * concurrent writers never mix their bytes.
 *
 * A file is valid only when every key is a registered setting, listed once,
 * with a value of the right type that passes the setting's checks. Unknown
 * keys make the file invalid: a typo in a hand-edited file is reported
 * instead of silently ignored, and keys of a newer version are never dropped
 * by an older one rewriting the file. An invalid or unreadable file is
 * reported with its path and the reason, never overwritten or deleted by the
 * store (changes to the persistent layer are refused while settings.json is
 * unusable), and the store goes on with the other layers.
 *
 * Memory: everything lives in the caller's ctxc_settings_store_t (declare it
 * as static storage); nothing is allocated. Strings a getter returns point
 * into the store and stay valid until the next call that changes it. The
 * store is not locked: use it from one task at a time.
 *
 * Stack (Cortex-M4, -Os, the board's configuration; static worst case of
 * the call graph, test/embedded/stack_static.py, docs/footprint.md "Stack"): the
 * getters (ctxc_settings_get, _int, _ratio, _bool, _enum, _string) 536 to
 * 600 bytes (resolving a default runs the value checker, whose error path
 * with its suggestions is the deepest); ctxc_settings_set and the typed
 * setters 496 to 624, plus the strategy guard's own stack when a session
 * installed one; ctxc_settings_load 1800, persist_set/unset about 1860,
 * profile save/load about 1750, ctxc_settings_command 2340 (measured on
 * the target: 1451), most of it the path buffers of ctxc_fs_write_atomic()
 * (2 x CTXC_CFG_PATH_MAX); one value of CTXC_CFG_SETTINGS_VALUE_BYTES is on
 * the stack while a file is parsed. Port hooks (the filesystem) come on top.
 * No recursion.
 */
#ifndef CTXC_SETTINGS_H
#define CTXC_SETTINGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ctxc/ctxc_config_defaults.h"
#include "ctxc/jsonl.h"
#include "ctxc/port.h"
#include "ctxc/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the registry -----------------------------------------------------------
 *
 * X(ID, "key", TYPE, values, default, min, max, CHECK, persist, category,
 *   hint, description)
 *
 *   TYPE     ENUM (one of `values`), STRING, BOOL (true/false), RATIO (a
 *            number from 0 to 1, kept in thousandths), INT (an integer)
 *   values   ENUM: NULL-terminated list of the allowed values; else NULL
 *   default  the default as the text /set would take, or NULL for none
 *   min/max  RATIO: thousandths; INT: the inclusive range
 *   CHECK    what a STRING must look like: NAME (a profile name), KEY_NAME
 *            (the name of an environment variable or key file, never the
 *            key itself), URL (http:// or https://), TEXT (printable, no
 *            spaces), PATH (an absolute path: TEXT starting with '/'),
 *            PROVIDER (a provider API compiled into this build: a name
 *            of another build is refused with the list of this one's);
 *            NONE for the other types
 *   persist  1: stored by /profile save
 *
 * compression-threshold has no default: unset, the strategy's
 * trigger.default_threshold applies. context-limit has none
 * either (the model's window is not something a library can guess).
 *
 * The values of compression.strategy are the strategy names of
 * ctxc/strategy.h (their indexes are the ctxc_strategy_id_t values). Only
 * the strategies of this build are accepted: a value naming one that is
 * left out (CTXC_CFG_STRATEGY_<NAME> = 0) is refused wherever it comes from
 * (set, the typed setters, the settings file, a profile) with
 * CTXC_E_UNKNOWN_STRATEGY naming it and the strategies of this build. Its
 * default is CTXC_CFG_DEFAULT_STRATEGY (ctxc_config_defaults.h: middle-out,
 * or in a build without it the first compiled-in strategy that needs no
 * LLM). The accessors that look a strategy up or fill the strategies'
 * values are below (with the typed accessors). */
extern const char *const ctxc_strategy_names[]; /**< the values of compression.strategy (see the comment above) */

/** The values of compression.on-limit, NULL-terminated: "wait",
 * "top-down-truncation", "high-density" (ctxc/session.h, before_send). */
extern const char *const ctxc_on_limit_names[];

/** The longest value of an ENUM setting in bytes (the size bound of the
 * settings file counts with it; src/session.c checks the strategy names). */
#define CTXC_SETTINGS_ENUM_VALUE_MAX 29u

/** The settings registry as an X-macro: one X(ID, key, type, values, default, min, max, check, persist, category, hint, description) per setting (columns explained in the file comment). It makes ctxc_setting_id_t and ctxc_settings_registry[]. */
#define CTXC_SETTINGS_LIST(X)                                                  \
    X(COMPRESSION_STRATEGY, "compression.strategy", ENUM, ctxc_strategy_names, \
      CTXC_CFG_DEFAULT_STRATEGY, 0, 0, NONE, 1, "Chat Compression",            \
      "strategy",                                                              \
      "how the history is compressed when it outgrows the threshold")          \
    X(COMPRESSION_PROFILE, "compression.profile", STRING, NULL, NULL, 0, 0,    \
      NAME, 1, "Chat Compression", "profile name",                             \
      "saved profile whose provider and model write the summaries (unset: "    \
      "the active provider)")                                                  \
    X(COMPRESSION_RETRIES, "compression.retries", INT, NULL, "2", 0, 10, NONE, \
      1, "Chat Compression", "count",                                          \
      "retries of a failed summary call (429, 5xx, timeouts, resets) on the "  \
      "same provider, after Retry-After")                                      \
    X(COMPRESSION_FACT_CHECK, "compression.factCheck", ENUM,                   \
      ctxc_fact_check_modes, "append", 0, 0, NONE, 1, "Chat Compression",      \
      "off|append|retry",                                                      \
      "check an LLM summary for the paths, failed commands, URLs, "            \
      "identifiers and todos of what it replaces: append the missing ones, "   \
      "or ask the model once more first (retry)")                              \
    X(COMPRESSION_THRESHOLD, "compression-threshold", RATIO, NULL, NULL, 0,    \
      1000, NONE, 1, "Chat Compression", "0-1",                                \
      "fraction of the context limit at which compression runs (unset: the "   \
      "strategy's default)")                                                   \
    X(COMPRESSION_PREFETCH_THRESHOLD, "compression.prefetch-threshold",       \
      RATIO, NULL, NULL, 0, 1000, NONE, 1, "Chat Compression", "0-1",          \
      "fraction of the context limit at which before_send starts a "           \
      "compression job and returns at once (unset: off)")                      \
    X(COMPRESSION_ON_LIMIT, "compression.on-limit", ENUM,                      \
      ctxc_on_limit_names, "wait", 0, 0, NONE, 1, "Chat Compression",          \
      "wait|top-down-truncation|high-density",                                 \
      "at compression-threshold with a job's summary not yet there: wait "     \
      "for it, or cancel it and compress now without the network")             \
    X(COMPRESSION_FAILURE_LIMIT, "compression.failure-limit", INT, NULL, "3", \
      1, 100, NONE, 1, "Chat Compression", "count",                            \
      "failed summary jobs in a row after which the model is left alone for " \
      "compression.cooldown-ms (the LLM-free fallback keeps the limits)")     \
    X(COMPRESSION_COOLDOWN_MS, "compression.cooldown-ms", INT, NULL,          \
      "300000", 0, 86400000, NONE, 1, "Chat Compression", "ms",               \
      "how long the model is left alone after compression.failure-limit "    \
      "failed jobs")                                                          \
    X(COMPRESSION_ENTRIES_THRESHOLD, "compression.entries-threshold", RATIO,  \
      NULL, "0.9", 0, 1000, NONE, 1, "Chat Compression", "0-1",               \
      "fraction of the history's entry slots at which compression runs "      \
      "(with compression.reserve-entries counted as used)")                   \
    X(COMPRESSION_BYTES_THRESHOLD, "compression.bytes-threshold", RATIO, NULL, \
      "0.9", 0, 1000, NONE, 1, "Chat Compression", "0-1",                      \
      "fraction of the history's arena bytes at which compression runs "      \
      "(with compression.reserve-bytes counted as used)")                     \
    X(COMPRESSION_RESERVE_ENTRIES, "compression.reserve-entries", INT, NULL,   \
      "4", 0, 65535, NONE, 1, "Chat Compression", "entries",                   \
      "entry slots before_send keeps free for the turn appended after it")    \
    X(COMPRESSION_RESERVE_BYTES, "compression.reserve-bytes", INT, NULL,       \
      "2048", 0, UINT32_MAX, NONE, 1, "Chat Compression", "bytes",             \
      "arena bytes before_send keeps free for the turn appended after it")    \
    X(COMPRESSION_PRESERVE_THRESHOLD, "compression-preserve-threshold", RATIO, \
      NULL, "0.2", 0, 1000, NONE, 1, "Chat Compression", "0-1",                \
      "fraction of the history kept verbatim at the end")                      \
    X(COMPRESSION_TOP_PRESERVE_THRESHOLD,                                      \
      "compression-top-preserve-threshold", RATIO, NULL, "0.2", 0, 1000, NONE, \
      1, "Chat Compression", "0-1",                                            \
      "fraction of the history kept verbatim at the start (middle-out)")       \
    X(CONTEXT_LIMIT, "context-limit", INT, NULL, NULL, 1, UINT32_MAX, NONE, 1, \
      "Context", "tokens", "the model's context window, in tokens")            \
    X(DENSITY_READ_WRITE_PRUNING, "compression.density.readWritePruning",      \
      BOOL, NULL, "true", 0, 1, NONE, 1, "Density", "true|false",              \
      "high-density: drop reads of files that are written later")              \
    X(DENSITY_FILE_DEDUPE, "compression.density.fileDedupe", BOOL, NULL,       \
      "true", 0, 1, NONE, 1, "Density", "true|false",                          \
      "high-density: keep only the latest @file inclusion of a path")          \
    X(DENSITY_RECENCY_PRUNING, "compression.density.recencyPruning", BOOL,     \
      NULL, "false", 0, 1, NONE, 1, "Density", "true|false",                   \
      "high-density: keep only the newest results of each tool")               \
    X(DENSITY_RECENCY_RETENTION, "compression.density.recencyRetention", INT,  \
      NULL, "3", 1, UINT32_MAX, NONE, 1, "Density", "count",                   \
      "high-density: results kept per tool by recency pruning")                \
    X(DENSITY_VOCABULARIES, "compression.density.vocabularies", STRING, NULL,  \
      NULL, 0, 0, VOCABS, 1, "Density", "name,name,...|none",                  \
      "high-density: tool vocabularies the density step and the summaries "    \
      "know (spec, claude-code, openhands, swe-agent, codex, pi, cline; "      \
      "unset: every one compiled in)")                                         \
    X(DENSITY_READ_TOOLS, "compression.density.readTools", STRING, NULL, NULL, \
      0, 0, TOOLS, 1, "Density", "name[:pathKey],...",                         \
      "high-density: more read tools (path key default: file_path, "           \
      "absolute_path, path)")                                                  \
    X(DENSITY_WRITE_TOOLS, "compression.density.writeTools", STRING, NULL,     \
      NULL, 0, 0, TOOLS, 1, "Density", "name[:pathKey],...",                   \
      "high-density: more write tools (path key default: file_path, "          \
      "absolute_path, path)")                                                  \
    X(DENSITY_SPILL_DIR, "compression.density.spillDir", STRING, NULL, NULL,   \
      0, 0, TEXT, 1, "Density", "directory",                                   \
      "high-density: store what the density step prunes in this directory "    \
      "of the port's filesystem, restorable by the id its pointer carries "    \
      "(unset: not stored)")                                                   \
    X(DENSITY_SPILL_BUDGET, "compression.density.spillBudget", INT, NULL,     \
      "1048576", 4096, UINT32_MAX, NONE, 1, "Density", "bytes",                \
      "high-density: most bytes the spill store keeps (oldest evicted "        \
      "first)")                                                                \
    X(PROVIDER, "provider", STRING, NULL, NULL, 0, 0, PROVIDER, 1, "Provider", \
      "provider name", "LLM provider (one of this build's: openai, "          \
      "anthropic, gemini)")                                                    \
    X(MODEL, "model", STRING, NULL, NULL, 0, 0, TEXT, 1, "Provider",           \
      "model name", "model of the provider")                                   \
    X(BASE_URL, "base-url", STRING, NULL, NULL, 0, 0, URL, 1, "Provider",      \
      "URL", "API base URL (http:// or https://)")                             \
    X(AUTH_KEY_NAME, "auth-key-name", STRING, NULL, NULL, 0, 0, KEY_NAME, 1,   \
      "Provider", "variable or key file name",                                 \
      "name of the environment variable or key file holding the API key "      \
      "(never the key itself)")                                                \
    X(STREAM, "stream", BOOL, NULL, "true", 0, 1, NONE, 1, "Provider",         \
      "true|false",                                                            \
      "ask for a streamed answer (false: one JSON answer, for servers and "    \
      "proxies that do not stream)")                                           \
    X(NETWORK_CA_FILE, "network.ca-file", STRING, NULL, NULL, 0, 0, PATH, 1,   \
      "Network", "absolute path of a PEM file",                                \
      "CA certificates TLS trusts (unset: the system bundle, "                 \
      "/etc/ssl/certs/ca-certificates.crt on POSIX hosts)")                    \
    X(NETWORK_CONNECT_TIMEOUT_MS, "network.connect-timeout-ms", INT, NULL,     \
      "10000", 100, 600000, NONE, 1, "Network", "milliseconds",                \
      "longest wait for a connection, TLS handshake included")                 \
    X(NETWORK_READ_TIMEOUT_MS, "network.read-timeout-ms", INT, NULL, "60000",  \
      100, 3600000, NONE, 1, "Network", "milliseconds",                        \
      "longest wait for the next bytes of an answer")                          \
    X(NETWORK_CALL_DEADLINE_MS, "network.call-deadline-ms", INT, NULL,         \
      "300000", 1000, 3600000, NONE, 1, "Network", "milliseconds",             \
      "longest time one model call may take, every retry and wait included")

/** Setting ids, CTXC_SETTING_<ID> in registry order, then CTXC_SETTING_COUNT. */
typedef enum {
#define CTXC_SETTING_ENUM_(id, ...) CTXC_SETTING_##id,
    CTXC_SETTINGS_LIST(CTXC_SETTING_ENUM_)
#undef CTXC_SETTING_ENUM_
        CTXC_SETTING_COUNT
} ctxc_setting_id_t;

/** The value type of a setting. */
typedef enum {
    CTXC_SETTING_TYPE_ENUM = 0,
    CTXC_SETTING_TYPE_STRING,
    CTXC_SETTING_TYPE_BOOL,
    CTXC_SETTING_TYPE_RATIO,
    CTXC_SETTING_TYPE_INT
} ctxc_setting_type_t;

/** The extra check a STRING setting's value goes through. */
typedef enum {
    CTXC_SETTING_CHECK_NONE = 0,
    CTXC_SETTING_CHECK_NAME,     /**< a profile name */
    CTXC_SETTING_CHECK_KEY_NAME, /**< [A-Za-z0-9_.-]+ and not a secret */
    CTXC_SETTING_CHECK_URL,      /**< http:// or https:// + TEXT */
    CTXC_SETTING_CHECK_TEXT,     /**< printable ASCII, no space, " or \ */
    CTXC_SETTING_CHECK_PATH,     /**< TEXT starting with '/' */
    CTXC_SETTING_CHECK_VOCABS,   /**< tool vocabulary names (src/tool_roles.h) */
    CTXC_SETTING_CHECK_TOOLS,    /**< user tools: name[:pathKey],... */
    CTXC_SETTING_CHECK_PROVIDER  /**< a provider API of this build
                                    (CTXC_CFG_PROVIDER_<NAME> = 1) */
} ctxc_setting_check_t;

/** Slots of the string settings in a layer (internal numbering). */
#define CTXC__SLOT_ENUM(id)
#define CTXC__SLOT_BOOL(id)
#define CTXC__SLOT_RATIO(id)
#define CTXC__SLOT_INT(id)
#define CTXC__SLOT_STRING(id) CTXC__STR_##id,
enum {
#define CTXC__SLOT_(id, key, type, ...) CTXC__SLOT_##type(id)
    CTXC_SETTINGS_LIST(CTXC__SLOT_)
#undef CTXC__SLOT_
        CTXC_SETTINGS_STRING_COUNT
};

/** One row of the registry: a setting's key, type, limits, default and help texts. */
typedef struct {
    const char *key; /**< its key ("compression.strategy", ...) */
    ctxc_setting_type_t type; /**< its value type */
    const char *const *values; /**< ENUM: NULL-terminated; else NULL */
    const char *default_text;  /**< NULL: no default */
    /** @{ lowest and highest value (RATIO: thousandths; INT: inclusive) */
    uint32_t min, max;         /**< RATIO: thousandths; INT: inclusive */
    /** @} */
    ctxc_setting_check_t check; /**< STRING: the extra value check */
    bool persist_to_profile; /**< whether /profile save stores it */
    uint8_t str_slot; /**< STRING: its slot in a layer; else 0xFF */
    const char *category; /**< /settings groups keys by it */
    const char *hint; /**< short form of the value for help ("milliseconds") */
    const char *description; /**< one line of help (NULL with CTXC_CFG_COMMANDS=0) */
} ctxc_setting_spec_t;

/** The registry, in CTXC_SETTINGS_LIST order (ctxc_settings_registry[id]). */
extern const ctxc_setting_spec_t ctxc_settings_registry[CTXC_SETTING_COUNT];

/** The spec of `id`, or NULL when out of range. */
const ctxc_setting_spec_t *ctxc_setting_spec(ctxc_setting_id_t id);

/** Looks a key up. Errors: CTXC_E_INVALID_ARG "unknown setting 'x'", with
 * "; did you mean 'y'?" when a registered key is close (edit distance, case
 * folded, or a unique prefix). */
ctxc_status_t ctxc_setting_find(const char *key, ctxc_setting_id_t *id,
                                ctxc_error_t *err);

/** The registered key closest to `typed` (see ctxc_setting_find), or NULL
 * when none is close. */
const char *ctxc_setting_suggest(const char *typed);

/** Checks `text` as a value of `id` (what /set accepts). Errors:
 * CTXC_E_INVALID_ARG naming the key and the allowed values or range. A value
 * of auth-key-name that looks like a secret is refused without being echoed.
 */
ctxc_status_t ctxc_setting_check(ctxc_setting_id_t id, const char *text,
                                 ctxc_error_t *err);

/** Profile names: 1..CTXC_CFG_SETTINGS_PROFILE_NAME_MAX characters of
 * [A-Za-z0-9._-], not "." or "..". Errors: CTXC_E_INVALID_ARG. */
ctxc_status_t ctxc_profile_name_check(const char *name, ctxc_error_t *err);

/** Parses a ratio: "0", "1", "0.75", ".5", "1.000" (at most three decimals
 * that are not zero; no sign, exponent or spaces) into thousandths.
 * Errors: CTXC_E_INVALID_ARG (the message says why; it does not name a key).
 */
ctxc_status_t ctxc_parse_ratio(const char *text, size_t len, uint16_t *out,
                               ctxc_error_t *err);

/* ---- the store ----------------------------------------------------------- */

/** Name of the settings file under the port filesystem's root. */
#define CTXC_SETTINGS_FILE "settings.json"
/** Directory of the saved profiles (profiles/NAME.json) under the root. */
#define CTXC_PROFILES_DIR "profiles"

/** A set of setting ids, one bit each (bit id: setting id). */
typedef uint64_t ctxc_setting_bits_t;

/** One layer: which keys are set and their values. */
typedef struct {
    ctxc_setting_bits_t set;          /**< bit id: key id is set */
    uint32_t num[CTXC_SETTING_COUNT]; /**< ENUM index, BOOL 0/1, RATIO
                                         thousandths, INT */
    /** STRING values, one NUL-terminated slot each. */
    char str[CTXC_SETTINGS_STRING_COUNT > 0 ? CTXC_SETTINGS_STRING_COUNT : 1]
            [CTXC_CFG_SETTINGS_VALUE_BYTES];
} ctxc_settings_layer_t;

/** A check of a strategy about to be selected: `index` is its index in
 * compression.strategy's values (a ctxc_strategy_id_t). Return CTXC_OK to
 * allow it, or an error (with its message in *err) to refuse the change. */
typedef ctxc_status_t (*ctxc_settings_strategy_guard_fn)(void *user,
                                                         uint32_t index,
                                                         ctxc_error_t *err);

/** Caller-owned store: two layers (each 4 + 4 x keys + 9 x
 * CTXC_CFG_SETTINGS_VALUE_BYTES), the file buffer
 * (CTXC_CFG_SETTINGS_FILE_BYTES; none when it is 0) and an error struct:
 * 4708 bytes on the Cortex-M4 board, 2660 with CTXC_CFG_SETTINGS_FILE_BYTES
 * 0. Treat the fields as read-only; for storage you place by hand (any
 * section), ctxc_settings_init() is its init function. */
typedef struct {
    ctxc_fs_t fs; /**< ops NULL: no filesystem */
    ctxc_settings_layer_t ephemeral; /**< /set, a loaded profile, command-line options */
    ctxc_settings_layer_t persistent; /**< the settings file */
    ctxc_setting_bits_t from_profile; /**< ephemeral keys the loaded
                                           profile set */
    char profile[CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1]; /**< loaded, or "" */
    bool file_bad;           /**< settings.json exists but is unusable */
    ctxc_error_t file_error; /**< why (path and reason), when file_bad */
#if CTXC_CFG_SETTINGS_FILE_BYTES > 0
    char buf[CTXC_CFG_SETTINGS_FILE_BYTES]; /**< file text (read and write) */
#endif
    /** the check a session attached (ctxc_session_init): asked before a
     * change selects a strategy (ctxc_settings_set_strategy_guard) */
    ctxc_settings_strategy_guard_fn guard_;
    void *guard_user_;
} ctxc_settings_store_t;

#define CTXC__FILE_WMAX_ENUM (CTXC_SETTINGS_ENUM_VALUE_MAX + 3u)
#define CTXC__FILE_WMAX_STRING ((size_t)CTXC_CFG_SETTINGS_VALUE_BYTES + 1u)
#define CTXC__FILE_WMAX_BOOL 5u
#define CTXC__FILE_WMAX_RATIO 5u
#define CTXC__FILE_WMAX_INT 10u
#define CTXC__FILE_WORST_(id, key, type, ...)                                  \
    +(sizeof(key) + 7u + CTXC__FILE_WMAX_##type)
/** The smallest CTXC_CFG_SETTINGS_FILE_BYTES but 0: a settings file with
 * every setting at its longest value, 1339 + 10 x CTXC_CFG_SETTINGS_VALUE_BYTES
 * bytes (2619 with the default 128). 0 is allowed: no file buffer, no
 * settings file, no profiles (a device without a filesystem). */
#define CTXC_SETTINGS_FILE_MIN_BYTES                                           \
    (4u CTXC_SETTINGS_LIST(CTXC__FILE_WORST_))
#ifndef __cplusplus
_Static_assert(CTXC_CFG_SETTINGS_FILE_BYTES == 0 ||
                   CTXC_CFG_SETTINGS_FILE_BYTES >= CTXC_SETTINGS_FILE_MIN_BYTES,
               "CTXC_CFG_SETTINGS_FILE_BYTES must be 0 (no settings file) or "
               "at least CTXC_SETTINGS_FILE_MIN_BYTES = 1339 + 10 x "
               "CTXC_CFG_SETTINGS_VALUE_BYTES (2619 with the default 128)");
#endif

/** Empties both layers and keeps a copy of *fs (NULL: no filesystem; then the
 * persistent layer stays empty, profiles are not found and writes answer
 * CTXC_E_READ_ONLY). Does not read anything. */
void ctxc_settings_init(ctxc_settings_store_t *s, const ctxc_fs_t *fs);

/** (Re)reads settings.json into the persistent layer. No file: an empty
 * layer, CTXC_OK. An unusable file (bad JSON, unknown or repeated key, wrong
 * type, invalid value, unreadable, larger than CTXC_CFG_SETTINGS_FILE_BYTES)
 * leaves the persistent layer empty, sets s->file_bad and s->file_error and
 * returns the error (message "settings.json: `<reason>"`): CTXC_E_PARSE or
 * CTXC_E_UTF8 (content), CTXC_E_TOO_LARGE, CTXC_E_IO or the port's own code.
 * The store stays usable either way. */
ctxc_status_t ctxc_settings_load(ctxc_settings_store_t *s, ctxc_error_t *err);

/** Ephemeral layer. set: validates, then sets (an invalid key or value
 * changes nothing; errors as ctxc_setting_find / ctxc_setting_check).
 * unset: CTXC_OK also when it was not set. */
ctxc_status_t ctxc_settings_set(ctxc_settings_store_t *s, const char *key,
                                const char *value, ctxc_error_t *err);
/** Unsets `key` in the ephemeral layer (CTXC_OK also when it was not set). */
ctxc_status_t ctxc_settings_unset(ctxc_settings_store_t *s, const char *key,
                                  ctxc_error_t *err);

/** Persistent layer: re-reads settings.json (so changes made meanwhile by
 * another writer are kept), applies the change, writes the file atomically,
 * and only then changes the layer. Errors: those of set/unset; when the file
 * is unusable the change is refused with its error ("refusing to overwrite
 * settings.json: ...") and the file is left as it is; write errors of
 * ctxc_fs_write_atomic() (the old file stays). */
ctxc_status_t ctxc_settings_persist_set(ctxc_settings_store_t *s,
                                        const char *key, const char *value,
                                        ctxc_error_t *err);
/** Unsets `key` in the persistent layer, as ctxc_settings_persist_set() does a change. */
ctxc_status_t ctxc_settings_persist_unset(ctxc_settings_store_t *s,
                                          const char *key, ctxc_error_t *err);

/** Installs (fn NULL: removes) the check every change that sets
 * compression.strategy runs before it changes anything: ctxc_settings_set,
 * ctxc_settings_set_enum / _enum_index, ctxc_settings_persist_set and
 * ctxc_settings_profile_load of a profile that sets it. The session
 * installs its own (ctxc_session_init): a store serves one session. Unset
 * and ctxc_settings_load are not checked (the session checks the strategy
 * in force at every call). */
void ctxc_settings_set_strategy_guard(ctxc_settings_store_t *s,
                                      ctxc_settings_strategy_guard_fn fn,
                                      void *user);

/* ---- the typed API --------------------------------------------------------
 * For firmware without a console: set the ephemeral layer by setting id
 * (CTXC_SETTING_CONTEXT_LIMIT...) and a C value, with the checks of the
 * text path (ctxc_settings_set): the same range, allowed values and error
 * messages, an invalid value changes nothing. These work with
 * CTXC_CFG_COMMANDS=0 and never look a key up by name.
 *
 *   setter                          setting type   value
 *   ctxc_settings_set_u32           INT            the integer
 *   ctxc_settings_set_ratio         RATIO          thousandths (750 = 0.75)
 *   ctxc_settings_set_bool          BOOL           true / false
 *   ctxc_settings_set_enum          ENUM           a value's name
 *   ctxc_settings_set_enum_index    ENUM           a value's index (for
 *                                                  compression.strategy a
 *                                                  ctxc_strategy_id_t)
 *   ctxc_settings_set_str           STRING         the text
 *
 * Errors: CTXC_E_INVALID_ARG for an id out of range, a NULL text, a setter
 * of another type than the setting's ("context-limit is an integer setting
 * (ctxc_settings_set_u32), not a boolean") or a value out of range / not
 * allowed; CTXC_E_UNKNOWN_STRATEGY for a strategy left out of the build;
 * the error of the strategy guard (ctxc_settings_set_strategy_guard). The
 * getters are the typed accessors below, one per setter: set_u32 ->
 * ctxc_settings_u32 (or ctxc_settings_int, the same), set_ratio -> _ratio,
 * set_bool -> _bool, set_enum / set_enum_index -> _enum or _string,
 * set_str -> _string. */
/** Sets an INT setting (see the table above). */
ctxc_status_t ctxc_settings_set_u32(ctxc_settings_store_t *s,
                                    ctxc_setting_id_t id, uint32_t value,
                                    ctxc_error_t *err);
/** Sets a RATIO setting, in thousandths (750 = 0.75). */
ctxc_status_t ctxc_settings_set_ratio(ctxc_settings_store_t *s,
                                      ctxc_setting_id_t id, uint16_t permille,
                                      ctxc_error_t *err);
/** Sets a BOOL setting. */
ctxc_status_t ctxc_settings_set_bool(ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, bool value,
                                     ctxc_error_t *err);
/** Sets an ENUM setting by a value's name. */
ctxc_status_t ctxc_settings_set_enum(ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, const char *name,
                                     ctxc_error_t *err);
/** Sets an ENUM setting by a value's index. */
ctxc_status_t ctxc_settings_set_enum_index(ctxc_settings_store_t *s,
                                           ctxc_setting_id_t id, uint32_t index,
                                           ctxc_error_t *err);
/** Sets a STRING setting. */
ctxc_status_t ctxc_settings_set_str(ctxc_settings_store_t *s,
                                    ctxc_setting_id_t id, const char *text,
                                    ctxc_error_t *err);
/** Unsets `id` in the ephemeral layer (CTXC_OK also when it was not set).
 * Errors: CTXC_E_INVALID_ARG (id out of range). */
ctxc_status_t ctxc_settings_unset_id(ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, ctxc_error_t *err);

/* ---- reading values ------------------------------------------------------ */

/** Where a resolved value came from. */
typedef enum {
    CTXC_SOURCE_UNSET = 0,  /**< no layer holds it and there is no default */
    CTXC_SOURCE_DEFAULT,    /**< the registry default */
    CTXC_SOURCE_PERSISTENT, /**< the settings file */
    CTXC_SOURCE_EPHEMERAL   /**< /set or a loaded profile */
} ctxc_setting_source_t;

/** "not set", "default", "settings file", "session". */
const char *ctxc_setting_source_name(ctxc_setting_source_t source);

/** A resolved value. */
typedef struct {
    ctxc_setting_source_t source; /**< the layer it came from */
    uint32_t num;    /**< ENUM index, BOOL 0/1, RATIO thousandths, INT */
    const char *str; /**< ENUM: the value's name; STRING: the text; else NULL */
} ctxc_setting_value_t;

/** The resolved value of `id` and the layer it came from (also returned).
 * CTXC_SOURCE_UNSET: out->num 0, out->str NULL. */
ctxc_setting_source_t ctxc_settings_get(const ctxc_settings_store_t *s,
                                        ctxc_setting_id_t id,
                                        ctxc_setting_value_t *out);

/** The value of `id` in one layer only (CTXC_SOURCE_PERSISTENT,
 * CTXC_SOURCE_EPHEMERAL or CTXC_SOURCE_DEFAULT); false when it has none. */
bool ctxc_settings_get_layer(const ctxc_settings_store_t *s,
                             ctxc_setting_id_t id, ctxc_setting_source_t layer,
                             ctxc_setting_value_t *out);

/** Writes a value as text, as /set takes it ("0.75", "true", "32000",
 * "high-density"); NUL-terminated, cut to fit. Returns the full length. */
size_t ctxc_setting_format(ctxc_setting_id_t id, const ctxc_setting_value_t *v,
                           char *buf, size_t cap);

/* Typed accessors. */

/* ---- the settings as the strategies read them ---------------------------
 * The accessors of the settings store that need the strategy table. Their
 * types are those of ctxc/strategy.h (ctxc_strategy_t is struct
 * ctxc_strategy, ...), named here by their tags so that this header does
 * not bring in the strategies. */
struct ctxc_strategy;
struct ctxc_density_config;
struct ctxc_strategy_values;
struct ctxc_fact_check;

/** compression.strategy, looked up. Errors: CTXC_E_UNKNOWN_STRATEGY naming
 * the value, where it came from and the strategies of this build, when it
 * is not set or not compiled in. */
ctxc_status_t ctxc_settings_strategy(const ctxc_settings_store_t *s,
                                     const struct ctxc_strategy **out,
                                     ctxc_error_t *err);

/** compression-threshold in force: the setting, else the default threshold
 * of `strategy`. */
uint16_t ctxc_settings_threshold(const ctxc_settings_store_t *s,
                                 const struct ctxc_strategy *strategy);

/** The four compression.density.* settings into cfg;
 * cfg->workspace_root is not a setting and is left as it is. */
void ctxc_settings_density(const ctxc_settings_store_t *s,
                           struct ctxc_density_config *cfg);

/** Every value a strategy reads: context limit, threshold (of `strategy`),
 * preserve fractions and density settings (out->density.workspace_root is
 * left as it is). */
void ctxc_settings_strategy_values(const ctxc_settings_store_t *s,
                                   const struct ctxc_strategy *strategy,
                                   struct ctxc_strategy_values *out);

/** The fact check of LLM summaries: the mode from compression.factCheck,
 * the bounds from CTXC_CFG_FACT_CHECK_MAX_ITEMS / _MAX_BYTES. */
void ctxc_settings_fact_check(const ctxc_settings_store_t *s,
                              struct ctxc_fact_check *out);


/** A RATIO setting in thousandths; false (and *out untouched) when unset. */
bool ctxc_settings_ratio(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                         uint16_t *out);

/** compression-preserve-threshold / compression-top-preserve-threshold
 * (thousandths; they have registry defaults). */
uint16_t ctxc_settings_preserve_threshold(const ctxc_settings_store_t *s);
/** compression-top-preserve-threshold in thousandths. */
uint16_t ctxc_settings_top_preserve_threshold(const ctxc_settings_store_t *s);

/** context-limit in tokens; 0 when unset. */
uint64_t ctxc_settings_context_limit(const ctxc_settings_store_t *s);

/** A BOOL setting (false when unset without a default). */
bool ctxc_settings_bool(const ctxc_settings_store_t *s, ctxc_setting_id_t id);

/** An INT setting; false (and *out untouched) when unset. */
bool ctxc_settings_int(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                       uint32_t *out);

/** The getter named after its setter (ctxc_settings_set_u32): the same as
 * ctxc_settings_int. */
static inline bool ctxc_settings_u32(const ctxc_settings_store_t *s,
                                     ctxc_setting_id_t id, uint32_t *out) {
    return ctxc_settings_int(s, id, out);
}

/** An ENUM setting's index in its values (for compression.strategy a
 * ctxc_strategy_id_t); false (and *out untouched) when unset or not an
 * ENUM. */
bool ctxc_settings_enum(const ctxc_settings_store_t *s, ctxc_setting_id_t id,
                        uint32_t *out);

/** A STRING or ENUM setting's text, or NULL when unset. */
const char *ctxc_settings_string(const ctxc_settings_store_t *s,
                                 ctxc_setting_id_t id);

/* ---- profiles ------------------------------------------------------------ */

/** Saves every persist-to-profile key that is set (ephemeral, else
 * persistent; defaults are not stored) as `profiles/<name>.json`;
 * *count (may be NULL) = the number of keys saved. An
 * existing valid profile of that name is replaced; an existing unusable one
 * is not (CTXC_E_EXISTS: delete it first). Errors: CTXC_E_INVALID_ARG
 * (name), CTXC_E_EXISTS, write errors. */
ctxc_status_t ctxc_settings_profile_save(ctxc_settings_store_t *s,
                                         const char *name, size_t *count,
                                         ctxc_error_t *err);

/** Loads `profiles/<name>.json` into the ephemeral layer: the keys it holds
 * are set, the other persist-to-profile keys are unset there (so the
 * profile's settings are what is in force, over the settings file and the
 * defaults). The whole file is checked first; on any error the layer is
 * unchanged. Errors: CTXC_E_INVALID_ARG (name), CTXC_E_PROFILE_NOT_FOUND,
 * the file's error with its path (as ctxc_settings_load). */
ctxc_status_t ctxc_settings_profile_load(ctxc_settings_store_t *s,
                                         const char *name, ctxc_error_t *err);

/** Removes `profiles/<name>.json` (also an unusable one: this is explicit).
 * Errors: CTXC_E_INVALID_ARG (name), CTXC_E_PROFILE_NOT_FOUND, the port's. */
ctxc_status_t ctxc_settings_profile_delete(ctxc_settings_store_t *s,
                                           const char *name, ctxc_error_t *err);

/** Calls fn for each saved profile name, in byte order (names of files
 * `profiles/<name>.json` with a valid name; temporary files skipped). Return
 * false from fn to stop. No profiles directory: no calls, CTXC_OK. Takes
 * O(n^2) name comparisons and n + 1 directory listings (no storage). */
typedef bool (*ctxc_name_fn)(void *user, const char *name);
/** Lists the saved profiles (see ctxc_name_fn above). */
ctxc_status_t ctxc_settings_profile_list(const ctxc_settings_store_t *s,
                                         ctxc_name_fn fn, void *user,
                                         ctxc_error_t *err);

/** The provider the LLM strategies use for the summary call:
 * when compression.profile is set, the provider, model, base-url,
 * auth-key-name and stream saved in that profile ("" for the strings it does
 * not set, stream's default true when it lacks that key); otherwise the
 * values in force in the store. Errors:
 * CTXC_E_PROFILE_NOT_FOUND naming the profile when it does not exist, the
 * profile file's error with its path when it is unusable. */
typedef struct {
    char profile[CTXC_CFG_SETTINGS_PROFILE_NAME_MAX + 1]; /**< "" : active */
    char provider[CTXC_CFG_SETTINGS_VALUE_BYTES]; /**< "" when not set */
    char model[CTXC_CFG_SETTINGS_VALUE_BYTES]; /**< "" when not set */
    char base_url[CTXC_CFG_SETTINGS_VALUE_BYTES]; /**< "" when not set (the provider's default URL applies) */
    char auth_key_name[CTXC_CFG_SETTINGS_VALUE_BYTES]; /**< name of the key (an environment variable, a key slot), never the key */
    bool stream; /**< setting stream: ask for a streamed answer */
} ctxc_provider_ref_t;
/** Fills `out` with the summary call's provider (see ctxc_provider_ref_t above). */
ctxc_status_t ctxc_settings_compression_provider(ctxc_settings_store_t *s,
                                                 ctxc_provider_ref_t *out,
                                                 ctxc_error_t *err);

/** The check of compression.profile alone, without filling a
 * ctxc_provider_ref_t (what the session runs before an LLM strategy; its
 * stack is the file
 * read's, not the 545-byte reference's): CTXC_OK when compression.profile
 * is unset or names a profile that exists and is usable; else the errors
 * of ctxc_settings_compression_provider. */
ctxc_status_t ctxc_settings_compression_profile_check(ctxc_settings_store_t *s,
                                                      ctxc_error_t *err);

/* ---- commands and completion --------------------------------------------- */

/** Runs one command line:
 *   /set KEY VALUE | /set unset KEY        ephemeral layer
 *   /settings                              every setting by category: value
 *                                          in force, where it comes from,
 *                                          allowed values or hint
 *   /settings set KEY VALUE | unset KEY    persistent layer (file saved)
 *   /profile save|load|delete NAME | list
 * Human-readable output (lines ending in `"\n"`) goes to `write`. A usage,
 * key, value or file error writes nothing (a directory listing that fails
 * half-way through /profile list may leave the names listed so far). Errors:
 * CTXC_E_NOT_FOUND when the command word is not one of these (so a caller can
 * run its own commands), CTXC_E_INVALID_ARG for usage errors (the message shows
 * the usage) and invalid keys or values, the errors of the functions above, or
 * what `write` returns. */
ctxc_status_t ctxc_settings_command(ctxc_settings_store_t *s, const char *line,
                                    ctxc_write_fn write, void *user,
                                    ctxc_error_t *err);

/** Completion of the last word of `line` (the cursor at its end; the line
 * ends at its first CR or LF, as for ctxc_settings_command): calls fn
 * with each full candidate word that starts with the partial word, and sets
 * *word_start (may be NULL) to the offset where that word begins:
 *   "/"..., "/se"                 /set /settings /profile
 *   /set | /settings set|unset    keys (/set also "unset")
 *   /set KEY | /settings set KEY  ENUM values (the strategies of this build
 *                                 for compression.strategy), true/false,
 *                                 saved profile names for
 *                                 compression.profile
 *   /settings                     set unset
 *   /profile                      save load list delete
 *   /profile load|delete          saved profile names
 * Return false from fn to stop. Errors: those of listing the profiles. */
typedef bool (*ctxc_complete_fn)(void *user, const char *candidate);
/** Completes the word of `line` under the cursor at its end: calls fn for each candidate and sets *word_start to where that word starts (see the table above). */
ctxc_status_t ctxc_settings_complete(const ctxc_settings_store_t *s,
                                     const char *line, size_t *word_start,
                                     ctxc_complete_fn fn, void *user,
                                     ctxc_error_t *err);

#ifdef __cplusplus
}
#endif

#endif /* CTXC_SETTINGS_H */
