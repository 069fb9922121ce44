/*  kf-exec-worker - judges and times candidate kernels for the coordinator.
 *
 *  The same binary is the evaluation child: "--eval-child DIR" is handled
 *  before anything else (no configuration, no sockets), because the
 *  handler re-executes this program in the sandbox for every evaluation.
 */
#include "kf_config.h"
#include "kf_exec.h"
#include "kf_log.h"
#include "kf_worker.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const kf_cfg_entry_t s_table[] = {
    { "coordinator", KF_CFG_STR, "ipc:///tmp/kf-workers.sock", 0, -1,
      "coordinator's worker endpoint" },
    { "credits", KF_CFG_INT, "1", 1, 64,
      "evaluations at once (1: timings do not disturb each other)" },
    { "backend", KF_CFG_STR, "host", 0, -1, "where kernels run: host" },
    { "heartbeat_ms", KF_CFG_INT, "1000", 50, 60000, "heartbeat interval" },
    { "name", KF_CFG_STR, NULL, 0, -1, "display name (default: the worker id)" },
    { "verbose", KF_CFG_BOOL, "false", 0, -1, "log debug lines" },
    { "eval_time_limit_s", KF_CFG_DOUBLE, "120", 1, 3600,
      "wall-clock limit of one evaluation" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);

    bool help = false;
    char *err = NULL;
    kf_config_t *config = kf_config_load ("kf-exec-worker",
        "kf-exec-worker [options]", s_table, &argc, argv, &help, &err);
    if (help) {
        kf_config_destroy (&config);
        free (err);
        return 0;
    }
    if (!config) {
        fprintf (stderr, "kf-exec-worker: %s\n", err ? err : "bad configuration");
        free (err);
        return 2;
    }
    kf_log_init ("kf-exec-worker", kf_config_bool (config, "verbose"));

    const char *backend = kf_config_str (config, "backend");
    json_t *caps = kf_exec_capabilities (backend);
    if (json_array_size (json_object_get (caps, "backends")) == 0) {
        fprintf (stderr, "kf-exec-worker: backend: unknown backend '%s' (host)\n", backend);
        json_decref (caps);
        kf_config_destroy (&config);
        return 2;
    }
    kf_exec_config_t exec = {
        .worker_path = NULL,
        .backend = backend,
        .time_limit_s = kf_config_double (config, "eval_time_limit_s"),
    };
    kf_worker_config_t cfg = {
        .endpoint = kf_config_str (config, "coordinator"),
        .role = "execute",
        .name = kf_config_str (config, "name"),
        .credits = (int) kf_config_int (config, "credits"),
        .capabilities = caps,
        .handler = kf_exec_handle,
        .handler_arg = &exec,
        .heartbeat_ms = (int) kf_config_int (config, "heartbeat_ms"),
    };
    static volatile sig_atomic_t stop = 0;
    kf_worker_catch_signals (&stop);
    int rc = kf_worker_run (&cfg, &stop);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc == 0 ? 0 : 1;
}
