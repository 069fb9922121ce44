/*  kf-llm-gateway - turns generate jobs into candidate sources.
 *
 *  Thin by design: load the configuration, advertise the generators and
 *  languages this gateway serves, and hand generate jobs to
 *  kf_gateway_handle through the shared worker loop until SIGINT or
 *  SIGTERM. The only generator so far is the built-in offline one, which
 *  is not a language model (docs/offline-generator.md).
 */
#include "kf_config.h"
#include "kf_gateway.h"
#include "kf_log.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>

static const kf_cfg_entry_t s_table[] = {
    { "coordinator", KF_CFG_STR, "ipc:///tmp/kf-workers.sock", 0, -1,
      "coordinator's worker endpoint" },
    { "credits", KF_CFG_INT, "4", 1, 256, "generate jobs at once" },
    { "heartbeat_ms", KF_CFG_INT, "1000", 50, 60000, "heartbeat interval" },
    { "name", KF_CFG_STR, NULL, 0, -1, "display name (default: the worker id)" },
    { "verbose", KF_CFG_BOOL, "false", 0, -1, "log debug lines" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    bool help = false;
    char *err = NULL;
    kf_config_t *config = kf_config_load ("kf-llm-gateway", "kf-llm-gateway [options]",
                                          s_table, &argc, argv, &help, &err);
    if (help) {
        kf_config_destroy (&config);
        free (err);
        return 0;
    }
    if (!config) {
        fprintf (stderr, "kf-llm-gateway: %s\n", err ? err : "bad configuration");
        free (err);
        return 2;
    }
    kf_log_init ("kf-llm-gateway", kf_config_bool (config, "verbose"));
    json_t *caps = kf_gateway_capabilities ();
    kf_info ("generators: offline (built-in templates, not an LLM); coordinator %s",
             kf_config_str (config, "coordinator"));

    kf_worker_config_t cfg = {
        .endpoint = kf_config_str (config, "coordinator"),
        .role = "generate",
        .name = kf_config_str (config, "name"),
        .credits = (int) kf_config_int (config, "credits"),
        .capabilities = caps,
        .handler = kf_gateway_handle,
        .handler_arg = NULL,
        .heartbeat_ms = (int) kf_config_int (config, "heartbeat_ms"),
    };
    static volatile sig_atomic_t stop = 0;
    kf_worker_catch_signals (&stop);
    int rc = kf_worker_run (&cfg, &stop);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc == 0 ? 0 : 1;
}
