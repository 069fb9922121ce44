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
    { "coordinator", KF_CFG_STR, "ipc:///tmp/kf-workers.sock", 0, -1,
      "coordinator's worker endpoint" },
    { "credits", KF_CFG_INT, "2", 1, 256, "compiles run at once" },
    { "heartbeat_ms", KF_CFG_INT, "1000", 50, 60000, "heartbeat interval" },
    { "name", KF_CFG_STR, NULL, 0, -1, "display name (default: the worker id)" },
    { "verbose", KF_CFG_BOOL, "false", 0, -1, "log debug lines" },
    { "compile_time_limit_s", KF_CFG_DOUBLE, "60", 1, 3600,
      "wall-clock limit of one compiler run" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    bool help = false;
    char *err = NULL;
    kf_config_t *config = kf_config_load ("kf-compile-worker",
        "kf-compile-worker [options]", s_table, &argc, argv, &help, &err);
    if (help) {
        kf_config_destroy (&config);
        free (err);
        return 0;
    }
    if (!config) {
        fprintf (stderr, "kf-compile-worker: %s\n", err ? err : "bad configuration");
        free (err);
        return 2;
    }
    kf_log_init ("kf-compile-worker", kf_config_bool (config, "verbose"));

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

    kf_worker_config_t cfg = {
        .endpoint = kf_config_str (config, "coordinator"),
        .role = "compile",
        .name = kf_config_str (config, "name"),
        .credits = (int) kf_config_int (config, "credits"),
        .capabilities = caps,
        .handler = kf_compile_handle,
        .handler_arg = &compile,
        .heartbeat_ms = (int) kf_config_int (config, "heartbeat_ms"),
    };
    static volatile sig_atomic_t stop = 0;
    kf_worker_catch_signals (&stop);
    int rc = kf_worker_run (&cfg, &stop);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc == 0 ? 0 : 1;
}
