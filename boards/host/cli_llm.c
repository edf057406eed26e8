/*
 * ctxc host CLI — the model behind the LLM strategies (middle-out,
 * one-shot) and `ctxc chat`: the POSIX port (prompts under $CTXC_HOME,
 * clock, stderr log, key from the environment, delays), the TLS transport
 * from the network.* settings, one provider client bound to the settings.
 */
#define _POSIX_C_SOURCE 200809L

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "ctxc/ctxc.h"
#include "ctxc/provider.h"
#include "ctxc_port_posix.h"
#include "ctxc_transport_posix.h"

static ctxc_posix_port_t llm_port;
static ctxc_posix_transport_t llm_net;
/* the chat's replies: a second connection, so a reply can be fetched while
 * a compression job holds the first one across its polls */
static ctxc_posix_transport_t chat_net;
static ctxc_port_t chat_port;
static ctxc_provider_client_t llm_client;
static ctxc_provider_binding_t llm_binding;
static bool llm_up;
static const ctxc_llm_t *llm_used; /* the model of the last summary call */

/* ---- keys as people keep them, base URLs as people write them ----------- */

/* The variable each provider's own tools read for its key, in order. */
static const struct {
    const char *provider;
    const char *vars[2];
} default_keys[] = {
    {"openai", {"OPENAI_API_KEY", NULL}},
    {"anthropic", {"ANTHROPIC_API_KEY", NULL}},
    {"gemini", {"GEMINI_API_KEY", "GOOGLE_API_KEY"}},
};

const char *cli_default_key_env(const char *provider) {
    for (size_t i = 0; i < sizeof default_keys / sizeof default_keys[0]; i++) {
        if (strcmp(provider, default_keys[i].provider) != 0) {
            continue;
        }
        for (size_t k = 0; k < 2 && default_keys[i].vars[k] != NULL; k++) {
            const char *v = getenv(default_keys[i].vars[k]);
            if (v != NULL && v[0] != '\0') {
                return default_keys[i].vars[k];
            }
        }
    }
    return NULL;
}

const char *cli_default_key_names(const char *provider) {
    for (size_t i = 0; i < sizeof default_keys / sizeof default_keys[0]; i++) {
        if (strcmp(provider, default_keys[i].provider) == 0) {
            return default_keys[i].vars[1] != NULL ? "GEMINI_API_KEY or "
                                                     "GOOGLE_API_KEY"
                                                   : default_keys[i].vars[0];
        }
    }
    return NULL;
}

/* Whether a key may go to the provider's URL (https, or plain http to a
 * loopback host: the library's own rule). */
static bool key_may_go(const ctxc_provider_ref_t *ref) {
    if (ref->base_url[0] == '\0') {
        return true; /* the providers' own URLs are https */
    }
    ctxc_url_t url;
    if (ctxc_url_parse(ref->base_url, &url, NULL) != CTXC_OK) {
        return true; /* the call reports the URL itself */
    }
    return url.tls || ctxc_http_host_is_loopback(url.host, url.host_len);
}

const char *cli_provider_ref_ready(ctxc_provider_ref_t *ref) {
    /* Anthropic's path is /v1/messages: a base URL given as .../v1 (as
     * for OpenAI-compatible servers) would make it /v1/v1/messages */
    if (strcmp(ref->provider, "anthropic") == 0) {
        size_t n = strlen(ref->base_url);
        while (n > 0 && ref->base_url[n - 1] == '/') {
            n--;
        }
        if (n >= 3 && strncmp(ref->base_url + n - 3, "/v1", 3) == 0) {
            ref->base_url[n - 3] = '\0';
        }
    }
    if (ref->auth_key_name[0] != '\0') {
        return NULL;
    }
    const char *var = cli_default_key_env(ref->provider);
    if (var == NULL || !key_may_go(ref)) {
        return NULL;
    }
    snprintf(ref->auth_key_name, sizeof ref->auth_key_name, "%s", var);
    static char noted[sizeof default_keys / sizeof default_keys[0]];
    for (size_t i = 0; i < sizeof default_keys / sizeof default_keys[0]; i++) {
        if (strcmp(ref->provider, default_keys[i].provider) == 0 &&
            !noted[i]) {
            noted[i] = 1;
            if (cli_quiet) {
                continue;
            }
            fflush(stdout); /* what came before stays before */
            fprintf(stderr,
                    "note: %s: the API key from %s (no --key-env or "
                    "auth-key-name given)\n",
                    ref->provider, var);
        }
    }
    return var;
}

/* ctxc_provider_resolve, remembering which model it handed out; its
 * reference made ready as the chat's is (cli_provider_ref_ready): the
 * provider's usual key variable, Anthropic's base URL */
static ctxc_provider_ref_t res_ref;
static ctxc_llm_t res_llm;
static ctxc_status_t cli_resolve(void *user, const char *profile,
                                 const ctxc_llm_t **llm, ctxc_error_t *err) {
    ctxc_provider_binding_t *b = user;
    ctxc_status_t st = ctxc_provider_resolve(user, profile, llm, err);
    llm_used = NULL;
    if (st != CTXC_OK) {
        return st;
    }
    if (ctxc_settings_compression_provider(b->settings, &res_ref, NULL) ==
        CTXC_OK) {
        char url[sizeof res_ref.base_url];
        memcpy(url, res_ref.base_url, sizeof url);
        bool keyed = cli_provider_ref_ready(&res_ref) != NULL;
        if (keyed || strcmp(url, res_ref.base_url) != 0) {
            uint32_t retries = 2, timeout = 0, deadline = 0;
            (void)ctxc_settings_int(b->settings,
                                    CTXC_SETTING_COMPRESSION_RETRIES, &retries);
            (void)ctxc_settings_int(b->settings,
                                    CTXC_SETTING_NETWORK_READ_TIMEOUT_MS,
                                    &timeout);
            (void)ctxc_settings_int(b->settings,
                                    CTXC_SETTING_NETWORK_CALL_DEADLINE_MS,
                                    &deadline);
            st = ctxc_provider_llm(b->client, &res_ref, b->port, retries,
                                   b->stream && res_ref.stream, &res_llm, err);
            if (st != CTXC_OK) {
                return st;
            }
            b->client->timeout_ms = timeout;
            b->client->deadline_ms = deadline;
            *llm = &res_llm;
        }
    }
    llm_used = *llm;
    return CTXC_OK;
}

const ctxc_llm_t *cli_llm_used(void) { return llm_used; }

bool cli_verbose;
bool cli_quiet;

const char *cli_provider_hint(const char *value, bool flags) {
    static const char *const known[] = {"openai", "anthropic", "gemini",
                                        NULL};
    char close[160];
    if (value == NULL || ctxc_provider_find(value) != NULL ||
        cli_suggest(value, known, close, sizeof close) > 0) {
        return NULL; /* a typo of a provider: the error lists them */
    }
    return flags ? "an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM "
                   "Studio) is --provider openai --base-url URL (Ollama: "
                   "http://127.0.0.1:11434/v1)"
                 : "an OpenAI-compatible server (Ollama, llama.cpp, vLLM, LM "
                   "Studio) is /set provider openai and /set base-url URL "
                   "(Ollama: http://127.0.0.1:11434/v1)";
}

const char *cli_net_hint(const ctxc_error_t *err) {
    const char *m = ctxc_error_message(err);
    if (err->status == CTXC_E_TLS && strstr(m, "CA file") == NULL &&
        (strstr(m, "certificate") != NULL || strstr(m, "verif") != NULL)) {
        return "the server's certificate is not signed by a CA this host "
               "trusts: give its CA with --ca-file FILE (PEM), or set "
               "network.ca-file";
    }
    return NULL;
}

const char *cli_provider_list(const char *sep) {
    static char list[128];
    size_t o = 0;
    list[0] = '\0';
#define CLI_PV_(id, cfg, name)                                                  \
    if (ctxc_provider_find(name) != NULL && o < sizeof list) {                 \
        o += (size_t)snprintf(list + o, sizeof list - o, "%s%s",               \
                              o > 0 ? sep : "", name);                         \
    }
    CTXC_PROVIDER_LIST(CLI_PV_)
#undef CLI_PV_
    return list[0] != '\0' ? list : "(none in this build)";
}

const char *cli_summary_model_missing(const ctxc_settings_store_t *s,
                                      const ctxc_strategy_t *st,
                                      const char *provider, const char *model) {
    static char what[256];
    if (st == NULL || !st->requires_llm ||
        ctxc_settings_string(s, CTXC_SETTING_COMPRESSION_PROFILE) != NULL) {
        return NULL;
    }
    bool no_pv = ctxc_settings_string(s, CTXC_SETTING_PROVIDER) == NULL;
    bool no_md = ctxc_settings_string(s, CTXC_SETTING_MODEL) == NULL;
    if (!no_pv && !no_md) {
        return NULL;
    }
    if (no_pv) {
        snprintf(what, sizeof what, "%s (%s)%s%s", provider,
                 cli_provider_list(", "), no_md ? " and " : "",
                 no_md ? model : "");
    } else {
        snprintf(what, sizeof what, "%s", model);
    }
    return what;
}

/* todos of --todos FILE */
static ctxc_todo_t llm_todos[64];
static char llm_todo_text[16384];

bool cli_llm_setup(ctxc_session_t *s, ctxc_settings_store_t *settings,
                   const char *who) {
    ctxc_error_t err;
    if (!llm_up) {
        /* the errors come back to the command, which reports each once:
         * the library's log only with --verbose */
        if (ctxc_posix_port_init(&llm_port, NULL,
                                 cli_verbose ? CTXC_LOG_INFO : CTXC_LOG_ERROR,
                                 &err) != CTXC_OK) {
            fprintf(stderr, "%s: %s\n", who, ctxc_error_message(&err));
            return false;
        }
        ctxc_posix_transport_config_t cfg =
            ctxc_posix_transport_config(settings, &llm_port.port);
        if (ctxc_posix_transport_init(&llm_net, &cfg, &err) != CTXC_OK) {
            fprintf(stderr, "%s: %s\n", who, ctxc_error_message(&err));
            ctxc_posix_port_deinit(&llm_port);
            return false;
        }
        llm_port.port.transport = ctxc_posix_transport(&llm_net);
        /* Ctrl-C and the status line between the steps of a call */
        llm_port.port.stop = cli_stop_hook;
        llm_port.port.stop_ctx = NULL;
        if (ctxc_posix_transport_init(&chat_net, &cfg, &err) != CTXC_OK) {
            fprintf(stderr, "%s: %s\n", who, ctxc_error_message(&err));
            ctxc_posix_transport_deinit(&llm_net);
            ctxc_posix_port_deinit(&llm_port);
            return false;
        }
        chat_port = llm_port.port;
        chat_port.transport = ctxc_posix_transport(&chat_net);
        llm_up = true;
    }
    ctxc_provider_bind(&llm_binding, &llm_client, settings, &llm_port.port,
                       true);
    ctxc_session_set_port(s, &llm_port.port);
    ctxc_session_set_llm_resolver(s, cli_resolve, &llm_binding);
    return true;
}

const ctxc_provider_client_t *cli_llm_client(void) { return &llm_client; }

const ctxc_port_t *cli_llm_port(void) { return llm_up ? &llm_port.port : NULL; }

const ctxc_port_t *cli_chat_port(void) { return llm_up ? &chat_port : NULL; }

void cli_llm_teardown(void) {
    if (llm_up) {
        ctxc_posix_transport_deinit(&chat_net);
        ctxc_posix_transport_deinit(&llm_net);
        ctxc_posix_port_deinit(&llm_port);
        llm_up = false;
    }
}

bool cli_llm_todos(ctxc_session_t *s, const char *path, const char *who) {
    static char json[65536];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        fprintf(stderr, "%s: --todos %s: cannot open\n", who, path);
        return false;
    }
    size_t n = fread(json, 1, sizeof json, f);
    bool too_big = n == sizeof json;
    fclose(f);
    if (too_big) {
        fprintf(stderr, "%s: --todos %s: larger than %zu bytes\n", who, path,
                sizeof json - 1);
        return false;
    }
    size_t count = 0;
    ctxc_error_t err;
    if (ctxc_todos_parse(
            json, n, llm_todos, sizeof llm_todos / sizeof llm_todos[0], &count,
            llm_todo_text, sizeof llm_todo_text, &err) != CTXC_OK) {
        fprintf(stderr, "%s: --todos %s: %s\n", who, path,
                ctxc_error_message(&err));
        return false;
    }
    ctxc_session_set_todos(s, llm_todos, count);
    return true;
}
