/*  test_gateway_cuda.c - the offline generator's CUDA starters compile.
 *
 *  For every op class in examples/tasks/, the baseline CUDA source is
 *  generated and compiled with nvcc as the compile worker does (-arch=sm_90
 *  -shared -Xcompiler -fPIC -cudart shared), once per value of every
 *  tuning parameter (the value set with -DNAME=VALUE, as the tuning sweep
 *  does, the others at their baseline), so every branch of every template
 *  is compiled. Compile-only: no GPU is needed. Skipped (passing) when
 *  nvcc is not installed. Also checks the generated source declares its
 *  space on a kf-tune line and names the CUDA backend.
 */
#include "../../llm-gateway/kf_gen_offline.h"
#include "kf_task.h"
#include "../kf_test.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *s_ops[] = { "softmax", "rmsnorm", "layernorm", "gelu", "row_sum",
                               "row_max" };

static char *
s_nvcc (void)
{
    const char *env = getenv ("NVCC");
    if (env && access (env, X_OK) == 0)
        return strdup (env);
    if (access ("/usr/local/cuda/bin/nvcc", X_OK) == 0)
        return strdup ("/usr/local/cuda/bin/nvcc");
    return system ("command -v nvcc >/dev/null 2>&1") == 0 ? strdup ("nvcc") : NULL;
}

int
main (void)
{
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0)
        return 1;
    char *nvcc = s_nvcc ();
    char tmp[] = "/tmp/kf-cuda-starters.XXXXXX";
    CHECK (mkdtemp (tmp) != NULL);
    FILE *jobs = NULL;
    char jobs_path[128];
    snprintf (jobs_path, sizeof jobs_path, "%s/jobs.txt", tmp);
    jobs = fopen (jobs_path, "w");
    int n_jobs = 0;
    for (size_t o = 0; o < sizeof s_ops / sizeof s_ops[0]; o++) {
        char path[128];
        snprintf (path, sizeof path, "examples/tasks/%s/task.json", s_ops[o]);
        char *err = NULL;
        json_t *task = kf_task_load (path, &err);
        CHECK (task != NULL);
        if (!task) {
            fprintf (stderr, "%s: %s\n", path, err);
            free (err);
            continue;
        }
        json_t *payload = json_pack ("{s:O, s:s, s:i, s:b}", "task", task, "language", "cuda",
                                     "seed", 1, "baseline", 1);
        char *src = kf_offline_generate (payload, &err);
        CHECK (src != NULL);
        if (!src) {
            fprintf (stderr, "%s: %s\n", s_ops[o], err);
            free (err);
        }
        CHECK (src && strstr (src, "for the CUDA backend"));
        CHECK (src && strstr (src, "__global__"));
        CHECK (src && strstr (src, "kf-tune: BLOCK=256,128,512,1024 VEC=1,2,4"));
        //  Another seed proposes another point of the same space.
        json_object_set_new (payload, "baseline", json_false ());
        json_object_set_new (payload, "seed", json_integer (3));
        char *other = kf_offline_generate (payload, &err);
        CHECK (other && strstr (other, "kf-params: BLOCK="));
        free (other);
        char file[160];
        snprintf (file, sizeof file, "%s/%s.cu", tmp, s_ops[o]);
        FILE *f = src ? fopen (file, "w") : NULL;
        if (f) {
            fputs (src, f);
            fclose (f);
        }
        //  One compile per value of each parameter, read from kf-tune.
        char *tune = src ? strstr (src, "kf-tune:") : NULL;
        char line[256] = "";
        if (tune)
            sscanf (tune + 8, " %255[^*]", line);
        char *save = NULL;
        for (char *tok = strtok_r (line, " ", &save); tok; tok = strtok_r (NULL, " ", &save)) {
            char *eq = strchr (tok, '=');
            if (!eq)
                continue;
            *eq = 0;
            char *vsave = NULL;
            for (char *v = strtok_r (eq + 1, ",", &vsave); v; v = strtok_r (NULL, ",", &vsave)) {
                fprintf (jobs, "%s -D%s=%s -o %s/%s-%s-%s.so\n", file, tok, v, tmp, s_ops[o],
                         tok, v);
                n_jobs++;
            }
        }
        free (src);
        json_decref (payload);
        json_decref (task);
    }
    fclose (jobs);
    CHECK (n_jobs >= 6 * 8);
    if (!nvcc)
        printf ("nvcc not found: compile checks skipped\n");
    else {
        //  Two compiles at a time: nvcc is slow, and the machines that run
        //  the suite have few cores.
        char *cmd = NULL;
        if (asprintf (&cmd,
                      "xargs -P 2 -L 1 sh -c '%s -arch=sm_90 -shared -Xcompiler -fPIC "
                      "-cudart shared -Icommon \"$@\" 2>&1 || echo \"FAILED: $*\"' nvcc "
                      "< %s > %s/nvcc.log 2>&1",
                      nvcc, jobs_path, tmp) < 0)
            cmd = NULL;
        CHECK (cmd && system (cmd) == 0);
        free (cmd);
        char log[160];
        snprintf (log, sizeof log, "%s/nvcc.log", tmp);
        FILE *lf = fopen (log, "r");
        char buf[512];
        int failures = 0, warnings = 0;
        while (lf && fgets (buf, sizeof buf, lf)) {
            failures += strstr (buf, "FAILED:") != NULL;
            warnings += strstr (buf, "warning") != NULL;
            fputs (buf, stderr);
        }
        if (lf)
            fclose (lf);
        printf ("%d CUDA variants compiled with nvcc, %d failed, %d warnings\n", n_jobs,
                failures, warnings);
        CHECK (failures == 0);
        CHECK (warnings == 0);
        int built = 0;
        char probe[600];
        snprintf (probe, sizeof probe, "ls %s/*.so 2>/dev/null | wc -l", tmp);
        FILE *p = popen (probe, "r");
        if (p && fscanf (p, "%d", &built) != 1)
            built = 0;
        if (p)
            pclose (p);
        CHECK (built == n_jobs);
    }
    char rm[160];
    snprintf (rm, sizeof rm, "rm -rf %s", tmp);
    if (system (rm) != 0)
        fprintf (stderr, "cannot remove %s\n", tmp);
    free (nvcc);
    return kf_test_done ("test_gateway_cuda");
}
