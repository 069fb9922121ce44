/*  kf_worker_start.c - a worker daemon's start (kf_worker.h): its own
 *  arguments taken out of the command line, its configuration loaded
 *  with its usage text, the log started. The compile and exec workers'
 *  mains each carried a copy of this; the coordinator and the gateway,
 *  which take no argument of their own, use kf_config_daemon.
 */
#include "kf_worker.h"
#include "kf_config.h"
#include "kf_log.h"
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
    bool help = false;
    char *err = NULL;
    kf_config_t *config = kf_config_load (program, usage, table, argc, argv, &help, &err);
    if (!config) {
        if (!help)
            fprintf (stderr, "%s: %s\n", program, err ? err : "bad configuration");
        free (err);
        *exit_code = help ? 0 : 2;
        return NULL;
    }
    if (*argc > 1) {
        kf_config_destroy (&config);
        *exit_code = kf_worker_usage_error (program, "unexpected argument '%s' (see --help)",
                                            argv[1]);
        return NULL;
    }
    kf_log_init (program, kf_config_bool (config, "verbose"));
    return config;
}
