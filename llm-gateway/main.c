/*  kf-llm-gateway - turns generate jobs into candidate sources.
 *
 *  Thin by design: load the configuration, build the gateway (backends,
 *  HTTP engine, limits, prices, keys), and run the shared worker loop in
 *  its asynchronous mode with the gateway's hooks until SIGINT or
 *  SIGTERM. API keys are read from the environment (OPENAI_API_KEY,
 *  ANTHROPIC_API_KEY) or a key file, never from a flag or the
 *  configuration file, where they would show in process lists and backups.
 */
#include "kf_config.h"
#include "kf_gateway.h"
#include "kf_log.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>

static const kf_cfg_entry_t s_table[] = {
    KF_WORKER_CFG_KEYS ("64", "generate jobs at once (requests in flight and queued)"),
    { "openai_base_url", KF_CFG_STR, NULL, 0, -1,
      "OpenAI-compatible base URL with /v1 (default: $OPENAI_BASE_URL, then OpenAI's)" },
    { "openai_key_file", KF_CFG_STR, NULL, 0, -1,
      "file holding the OpenAI key (default: $OPENAI_API_KEY)" },
    { "anthropic_base_url", KF_CFG_STR, NULL, 0, -1,
      "Anthropic base URL with /v1 (default: $ANTHROPIC_BASE_URL, then Anthropic's)" },
    { "anthropic_key_file", KF_CFG_STR, NULL, 0, -1,
      "file holding the Anthropic key (default: $ANTHROPIC_API_KEY)" },
    { "anthropic_version", KF_CFG_STR, "2023-06-01", 0, -1, "anthropic-version header" },
    { "models_file", KF_CFG_STR, NULL, 0, -1,
      "named commands (command_NAME = ...) and limits (limits_MODEL = rpm=N tpm=N)" },
    { "prices_file", KF_CFG_STR, NULL, 0, -1,
      "price table: MODEL INPUT OUTPUT [CACHED] in USD per million tokens" },
    { "concurrency_openai", KF_CFG_INT, "64", 1, 4096, "OpenAI-compatible requests in flight" },
    { "concurrency_anthropic", KF_CFG_INT, "16", 1, 4096, "Anthropic requests in flight" },
    { "concurrency_command", KF_CFG_INT, "2", 1, 256, "commands running at once" },
    { "max_attempts", KF_CFG_INT, "5", 1, 100, "attempts per job (429, 5xx, timeouts)" },
    { "backoff_base_ms", KF_CFG_INT, "1000", 1, 600000, "first retry delay (doubles)" },
    { "backoff_max_ms", KF_CFG_INT, "60000", 1, 3600000, "cap on the retry delay" },
    { "retry_after_max_ms", KF_CFG_INT, "300000", 1, 3600000, "cap on a server's Retry-After" },
    { "connect_timeout_ms", KF_CFG_INT, "10000", 1, 600000, "HTTP connect timeout" },
    { "request_timeout_ms", KF_CFG_INT, "600000", 1, 86400000, "HTTP request timeout, all in" },
    { "low_speed_bytes", KF_CFG_INT, "1", 1, 1000000000, "abort below this many bytes/s ..." },
    { "low_speed_s", KF_CFG_INT, "0", 0, 86400, "... for this long (0: never)" },
    { "command_timeout_s", KF_CFG_DOUBLE, "300", 0.1, 86400, "time limit of a command" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    int code;
    kf_config_t *config = kf_config_daemon ("kf-llm-gateway", s_table, argc, argv, &code);
    if (!config)
        return code;
    kf_gateway_config_t gc = {
        .openai_base_url = kf_config_str (config, "openai_base_url"),
        .openai_key_file = kf_config_str (config, "openai_key_file"),
        .anthropic_base_url = kf_config_str (config, "anthropic_base_url"),
        .anthropic_key_file = kf_config_str (config, "anthropic_key_file"),
        .anthropic_version = kf_config_str (config, "anthropic_version"),
        .models_file = kf_config_str (config, "models_file"),
        .prices_file = kf_config_str (config, "prices_file"),
        .concurrency_openai = (int) kf_config_int (config, "concurrency_openai"),
        .concurrency_anthropic = (int) kf_config_int (config, "concurrency_anthropic"),
        .concurrency_command = (int) kf_config_int (config, "concurrency_command"),
        .max_attempts = (int) kf_config_int (config, "max_attempts"),
        .backoff_base_ms = (int) kf_config_int (config, "backoff_base_ms"),
        .backoff_max_ms = (int) kf_config_int (config, "backoff_max_ms"),
        .retry_after_max_ms = (int) kf_config_int (config, "retry_after_max_ms"),
        .command_timeout_s = kf_config_double (config, "command_timeout_s"),
        .http = { .connect_timeout_ms = (long) kf_config_int (config, "connect_timeout_ms"),
                  .timeout_ms = (long) kf_config_int (config, "request_timeout_ms"),
                  .low_speed_bytes = (long) kf_config_int (config, "low_speed_bytes"),
                  .low_speed_s = (long) kf_config_int (config, "low_speed_s") },
    };
    char *err = NULL;
    kf_gateway_t *gw = kf_gateway_new (&gc, &err);
    if (!gw) {
        fprintf (stderr, "kf-llm-gateway: %s\n", err ? err : "cannot start");
        free (err);
        kf_config_destroy (&config);
        return 2;
    }
    json_t *caps = kf_gateway_caps (gw);
    kf_info ("generators: offline (built-in templates, not an LLM), openai, anthropic, "
             "command; coordinator %s", kf_config_str (config, "coordinator"));
    int rc = kf_worker_main_async (config, "generate", caps, kf_gateway_start,
                                   &kf_gateway_hooks, gw);
    kf_gateway_destroy (&gw);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc;
}
