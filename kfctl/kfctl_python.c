/*  kfctl_python.c - finding and running the Python with torch
 *  (kfctl_python.h).
 *
 *  These are the user's own programs on the user's own machine (the
 *  export's build and check, a model file the user wrote), so they run
 *  with the user's environment and view of the host, not in the
 *  evaluation sandbox; the child still gets its own process group, a
 *  wall-clock limit and a cap on what it prints (kf_subproc).
 */
#include "kfctl_python.h"
#include "kf_python.h"
#include "kf_subproc.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int
kf_ctl_python_run (char *const argv[], const char *dir, double limit_s, char **output)
{
    kf_subproc_limits_t limits;
    kf_subproc_limits_default (&limits);
    limits.time_limit_s = limit_s;
    limits.output_cap = 1 << 20;
    limits.memory_bytes = 0;      /* torch reserves far more than it uses */
    limits.file_bytes = 0;
    limits.max_procs = 0;
    limits.keep_env = true;
    limits.drop_privileges = false;
    limits.workdir = dir;
    kf_subproc_result_t run;
    *output = NULL;
    if (kf_subproc_run (argv, &limits, &run) != 0) {
        *output = strdup (errno == ENOENT ? "not found" : strerror (errno));
        return -1;
    }
    int rc = run.timed_out ? 124 : run.signal ? 128 + run.signal : run.exit_code;
    *output = run.output;
    run.output = NULL;
    kf_subproc_result_free (&run);
    return rc;
}

char *
kf_ctl_python_find (char *version, size_t version_size, char *tried, size_t tried_size)
{
    const char *candidates[KF_PYTHON_MAX];
    int n = kf_python_candidates (NULL, candidates);
    size_t used = 0;
    tried[0] = 0;
    for (int i = 0; i < n; i++) {
        char *argv[] = { (char *) candidates[i], "-B", "-s", "-c",
                         "import torch; print('KF-TORCH', torch.__version__)", NULL };
        char *out = NULL;
        int rc = kf_ctl_python_run (argv, NULL, 120, &out);
        const char *line = out ? strstr (out, "KF-TORCH ") : NULL;
        char v[64];
        if (rc == 0 && line && sscanf (line, "KF-TORCH %63s", v) == 1) {
            snprintf (version, version_size, "%s", v);
            free (out);
            return strdup (candidates[i]);
        }
        char why[256];
        kf_python_why (out, rc == 124, 120, why, sizeof why);
        int w = snprintf (tried + used, tried_size - used, "%s%s (%.150s)", used ? ", " : "",
                          candidates[i], why);
        if (w > 0 && (size_t) w < tried_size - used)
            used += (size_t) w;
        free (out);
    }
    return NULL;
}
