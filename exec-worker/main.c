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
    KF_WORKER_CFG_KEYS ("1", "evaluations at once (1: timings do not disturb each other)"),
    { "backend", KF_CFG_STR, "host", 0, -1, "where kernels run: host or cuda" },
    { "device", KF_CFG_INT, "0", 0, 63, "GPU this worker serves (cuda; one worker process per GPU)" },
    { "eval_time_limit_s", KF_CFG_DOUBLE, "120", 1, 3600,
      "wall-clock limit of one evaluation" },
    KF_CFG_END
};

int
main (int argc, char **argv)
{
    if (argc >= 3 && strcmp (argv[1], "--eval-child") == 0)
        return kf_exec_child_main (argv[2]);

    int code;
    kf_config_t *config = kf_config_daemon ("kf-exec-worker", s_table, argc, argv, &code);
    if (!config)
        return code;

    const char *backend = kf_config_str (config, "backend");
    int device = (int) kf_config_int (config, "device");
    char *error = NULL;
    json_t *caps = kf_exec_probe (backend, device, &error);
    if (!caps) {
        fprintf (stderr, "kf-exec-worker: %s\n", error);
        free (error);
        kf_config_destroy (&config);
        return 2;
    }
    kf_exec_config_t exec = {
        .worker_path = NULL,
        .backend = backend,
        .device = device,
        .time_limit_s = kf_config_double (config, "eval_time_limit_s"),
    };
    int rc = kf_worker_main (config, "execute", caps, kf_exec_handle, &exec);
    json_decref (caps);
    kf_config_destroy (&config);
    return rc;
}
