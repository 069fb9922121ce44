/*  kf-compile-worker - builds candidate kernels for the coordinator.
 *
 *  Thin by design: load the configuration, describe what this host can
 *  build, and hand compile jobs to kf_compile_handle through the shared
 *  worker loop until SIGINT or SIGTERM.
 */
#include "kf_compile.h"
#include "kf_config.h"
#include "kf_log.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>

static const kf_cfg_entry_t s_table[] = {
    KF_WORKER_CFG_KEYS ("2", "compiles run at once"),
    { "compile_time_limit_s", KF_CFG_DOUBLE, "60", 1, 3600,
      "wall-clock limit of one compiler run" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    int code;
    kf_config_t *config = kf_config_daemon ("kf-compile-worker", s_table, argc, argv, &code);
    if (!config)
        return code;

    kf_compile_config_t compile = {
        .time_limit_s = kf_config_double (config, "compile_time_limit_s"),
        .output_cap = 64 * 1024,
    };
    json_t *caps = kf_compile_capabilities ();
    kf_info ("capabilities: backends %zu, cc %s, nvcc %s",
             json_array_size (json_object_get (caps, "backends")),
             json_string_value (json_object_get (json_object_get (caps, "toolchains"), "cc"))
                 ? "found" : "missing",
             json_string_value (json_object_get (json_object_get (caps, "toolchains"), "nvcc"))
                 ? "found" : "missing");

    int rc = kf_worker_main (config, "compile", caps, kf_compile_handle, &compile);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc;
}
