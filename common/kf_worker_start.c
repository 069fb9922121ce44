/*  kf_worker_start.c - a worker daemon's start (kf_worker.h): its own
 *  arguments taken out of the command line, its configuration loaded
 *  with its usage text, the log started. The compile and exec workers'
 *  mains each carried a copy of this. The loading itself is
 *  kf_config_program's, the one loader the coordinator and the gateway
 *  (kf_config_daemon) use too.
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
