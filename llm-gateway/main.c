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
    KF_WORKER_CFG_KEYS ("4", "generate jobs at once"),
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    int code;
    kf_config_t *config = kf_config_daemon ("kf-llm-gateway", s_table, argc, argv, &code);
    if (!config)
        return code;
    json_t *caps = kf_gateway_capabilities ();
    kf_info ("generators: offline (built-in templates, not an LLM); coordinator %s",
             kf_config_str (config, "coordinator"));

    int rc = kf_worker_main (config, "generate", caps, kf_gateway_handle, NULL);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc;
}
