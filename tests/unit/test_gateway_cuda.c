/*  test_gateway_cuda.c - the offline generator's CUDA starters compile.
 *
 *  For every op class in examples/tasks/, the baseline CUDA source is
 *  generated and compiled with nvcc as the compile worker does (-arch=sm_90
 *  -shared -Xcompiler -fPIC -cudart shared), and its device code once per
 *  value of every tuning parameter (the value set with -DNAME=VALUE, as
 *  the tuning sweep does, the others at their baseline; -cubin, so every
 *  kernel instance the host code picks is built without the host half,
 *  which took two thirds of each build and reads the parameters only as
 *  launch constants), so every branch of every template is compiled. The row kernels (softmax, rmsnorm, layernorm) keep their
 *  register-held path behind HOLD (0 at the baseline), so they are also
 *  compiled in five combinations with HOLD above 0 that between them take
 *  every value of VEC, STREAM, ROW, RED and ALGO, and build every kernel
 *  instance up to HOLD=128, each a whole build. The native CUDA tasks' references
 *  (softmax_cuda, rmsnorm_cuda, layernorm_cuda) are compiled too, and their tasks load and get
 *  CUDA starters. Compile-only: no GPU is needed. Skipped (passing) when
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
static const char *s_cuda_tasks[] = { "softmax_cuda", "rmsnorm_cuda", "layernorm_cuda" };

//  Writes the whole build of FILE at its own values, then one device-code
//  job per value of every parameter on the kf-tune line TUNE (its text
//  after "kf-tune:"), the others at the source's own values. Returns the
//  number of jobs written.
static int
s_jobs (FILE *jobs, const char *tune, const char *file, const char *tmp, const char *op)
{
    char line[512] = "";
    sscanf (tune, " %511[^*]", line);
    fprintf (jobs, "so %s -o %s/%s.so\n", file, tmp, op);
    int n = 1;
    char *save = NULL;
    for (char *tok = strtok_r (line, " ", &save); tok; tok = strtok_r (NULL, " ", &save)) {
        char *eq = strchr (tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        char *vsave = NULL;
        for (char *v = strtok_r (eq + 1, ",", &vsave); v; v = strtok_r (NULL, ",", &vsave)) {
            fprintf (jobs, "cubin %s -D%s=%s -o %s/%s-%s-%s.cubin\n", file, tok, v, tmp, op, tok,
                     v);
            n++;
        }
    }
    return n;
}

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
        bool rows = o < 3;
        CHECK (src && strstr (src, rows ? "kf-tune: BLOCK=256,512,128,1024 VEC=1,4,2 HOLD=0,32,128 "
                                          "ROW=block,warp STREAM=0,1 RED=smem,shfl"
                                        : "kf-tune: BLOCK=256,128,512,1024 VEC=1,2,4"));
        CHECK (src && strstr (src, rows ? "kf-params: BLOCK=256 VEC=1 HOLD=0 ROW=block STREAM=0 "
                                          "RED=smem"
                                        : "kf-params: BLOCK=256 VEC=1"));
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
        if (tune) {
            n_jobs += s_jobs (jobs, tune + 8, file, tmp, s_ops[o]);
            //  The register-held path (HOLD above 0; every kernel instance
            //  up to HOLD=128), in combinations that between them take
            //  each value of VEC, STREAM, ROW, RED and ALGO.
            if (rows) {
                char algo[2][32] = { "", "" };
                const char *at = strstr (tune, "ALGO=");
                if (at && sscanf (at + 5, "%31[^,],%31[^ *]", algo[0], algo[1]) != 2)
                    algo[0][0] = algo[1][0] = 0;
                static const char *const held[] = {
                    "-DHOLD=128 -DVEC=1 -DSTREAM=1 -DROW=block -DRED=smem",
                    "-DHOLD=128 -DVEC=2 -DSTREAM=0 -DROW=block -DRED=shfl",
                    "-DHOLD=32 -DVEC=4 -DSTREAM=1 -DROW=warp -DRED=smem",
                    "-DHOLD=32 -DVEC=4 -DSTREAM=0 -DROW=block -DRED=shfl",
                    "-DHOLD=128 -DVEC=4 -DSTREAM=1 -DROW=warp -DRED=shfl",
                };
                static const int which[] = { 1, 0, 1, 1, 0 };
                for (int h = 0; h < 5; h++) {
                    const char *a = algo[which[h]];
                    fprintf (jobs, "so %s %s%s%s -o %s/%s-held%d.so\n", file, held[h],
                             *a ? " -DALGO=" : "", a, tmp, s_ops[o], h);
                    n_jobs++;
                }
            }
        }
        free (src);
        json_decref (payload);
        json_decref (task);
    }
    //  The native CUDA tasks load, get a CUDA starter, and their references
    //  compile (references are never swept: one build each).
    for (size_t k = 0; k < sizeof s_cuda_tasks / sizeof s_cuda_tasks[0]; k++) {
        char path[128];
        snprintf (path, sizeof path, "examples/tasks/%s/task.json", s_cuda_tasks[k]);
        char *err = NULL;
        json_t *task = kf_task_load (path, &err);
        CHECK (task != NULL);
        if (!task) {
            fprintf (stderr, "%s: %s\n", path, err);
            free (err);
            continue;
        }
        const char *ref = json_string_value (
            json_object_get (json_object_get (task, "reference"), "source"));
        CHECK (ref && strcmp (json_string_value (json_object_get (
                                  json_object_get (task, "reference"), "language")), "cuda") == 0);
        json_t *payload = json_pack ("{s:O, s:s, s:i}", "task", task, "language", "cuda",
                                     "seed", 5);
        char *src = kf_offline_generate (payload, &err);
        CHECK (src && strstr (src, "for the CUDA backend"));
        if (!src) {
            fprintf (stderr, "%s: %s\n", s_cuda_tasks[k], err);
            free (err);
        }
        free (src);
        char file[160];
        snprintf (file, sizeof file, "%s/%s-reference.cu", tmp, s_cuda_tasks[k]);
        FILE *f = ref ? fopen (file, "w") : NULL;
        if (f) {
            fputs (ref, f);
            fclose (f);
            fprintf (jobs, "so %s -o %s/%s-reference.so\n", file, tmp, s_cuda_tasks[k]);
            n_jobs++;
        }
        json_decref (payload);
        json_decref (task);
    }
    fclose (jobs);
    CHECK (n_jobs >= 6 * 8);
    if (!nvcc)
        printf ("nvcc not found: compile checks skipped\n");
    else {
        //  Two compiles at a time: nvcc is slow, and the machines that run
        //  the suite have few cores. A job's first word: "so", the whole
        //  build; "cubin", the device code alone.
        char *cmd = NULL;
        if (asprintf (&cmd,
                      "xargs -P 2 -L 1 sh -c 'm=$1; shift; if [ \"$m\" = so ]; then "
                      "%s -arch=sm_90 -shared -Xcompiler -fPIC -cudart shared -Icommon \"$@\"; "
                      "else %s -arch=sm_90 -cubin -Icommon \"$@\"; fi 2>&1 "
                      "|| echo \"FAILED: $*\"' nvcc < %s > %s/nvcc.log 2>&1",
                      nvcc, nvcc, jobs_path, tmp) < 0)
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
        snprintf (probe, sizeof probe, "ls %s/*.so %s/*.cubin 2>/dev/null | wc -l", tmp, tmp);
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
