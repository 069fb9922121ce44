/*  kf_worker_start.c - a worker daemon's start (kf_worker.h): its own
 *  arguments taken out of the command line, its configuration loaded
 *  with its usage text, the log started. The compile and exec workers'
 *  mains each carried a copy of this. The loading itself is
 *  kf_config_program's, the one loader the coordinator and the gateway
 *  (kf_config_daemon) use too. Then its loop (kf_worker_run) with the
 *  common keys, until SIGINT or SIGTERM.
 */
#include "kf_worker.h"
#include "kf_config.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
kf_worker_take_arg (int *argc, char **argv, const char *name, bool flag, bool *missing)
{
    for (int i = 1; i < *argc; i++)
        if (!strcmp (argv[i], name)) {
            int n = flag ? 1 : 2;
            if (i + n > *argc) {
                *missing = true;
                return NULL;
            }
            char *value = argv[i + n - 1];
            memmove (argv + i, argv + i + n, sizeof *argv * (size_t) (*argc - i - n + 1));
            *argc -= n;
            return value;
        }
    return NULL;
}

int
kf_worker_usage_error (const char *program, const char *fmt, const char *arg)
{
    fprintf (stderr, "%s: ", program);
    fprintf (stderr, fmt, arg);
    fprintf (stderr, "\n");
    return 2;
}

kf_config_t *
kf_worker_load_config (const char *program, const char *usage, const kf_cfg_entry_t *table,
                       int *argc, char **argv, int *exit_code)
{
    return kf_config_program (program, usage, table, argc, argv, exit_code);
}

static int
s_main (const kf_config_t *config, const char *role, json_t *caps, kf_job_fn *handler,
        kf_job_start_fn *start, const kf_worker_hooks_t *hooks, void *handler_arg,
        const kf_worker_idle_t *idle)
{
    kf_worker_config_t cfg = {
        .endpoint = kf_config_str (config, "coordinator"),
        .role = role,
        .name = kf_config_str (config, "name"),
        .credits = (int) kf_config_int (config, "credits"),
        .capabilities = caps,
        .handler = handler,
        .start = start,
        .hooks = hooks,
        .handler_arg = handler_arg,
        .idle = idle,
        .heartbeat_ms = (int) kf_config_int (config, "heartbeat_ms"),
        .liveness = (int) kf_config_int (config, "liveness"),
        .drain_ms = (int) kf_config_int (config, "drain_s") * 1000,
        .curve_cert = kf_config_str (config, "curve_cert"),
        .curve_server_key = kf_config_str (config, "curve_server_key"),
        .allow_plain_tcp = kf_config_bool (config, "allow_plain_tcp"),
    };
    static volatile sig_atomic_t stop = 0;
    kf_worker_catch_signals (&stop);
    return kf_worker_run (&cfg, &stop) == 0 ? 0 : 1;
}

int
kf_worker_main (const kf_config_t *config, const char *role, json_t *caps,
                kf_job_fn *handler, void *handler_arg)
{
    return s_main (config, role, caps, handler, NULL, NULL, handler_arg, NULL);
}

int
kf_worker_main_idle (const kf_config_t *config, const char *role, json_t *caps,
                     kf_job_fn *handler, void *handler_arg, const kf_worker_idle_t *idle)
{
    return s_main (config, role, caps, handler, NULL, NULL, handler_arg, idle);
}

int
kf_worker_main_async (const kf_config_t *config, const char *role, json_t *caps,
                      kf_job_start_fn *start, const kf_worker_hooks_t *hooks, void *arg)
{
    return s_main (config, role, caps, NULL, start, hooks, arg, NULL);
}
