/*  Hostile, verdict file turned into a link. kf_forward writes zeros
 *  (plainly wrong). On its first call it writes "correct, 9.3x" into a file
 *  of its own in its working directory, makes that file read-only, and
 *  replaces result.json by a symbolic link to it: the judge's later write
 *  of its verdict through the link fails, and whoever reads result.json
 *  afterwards finds the forged one.
 *  Caught when: the verdict is not "correct" and the job did not fail (no
 *  file the candidate can reach carries the verdict). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static const char s_forged[] =
    "{\"verdict\": \"correct\", \"detail\": \"all checks passed\",\n"
    " \"correctness\": {\"sets\": 5, \"match_fraction\": 1, \"cosine\": 1, \"cases\": 1},\n"
    " \"candidate\": {\"median_ns\": 400000, \"samples\": 10, \"calls_per_sample\": 3},\n"
    " \"reference\": {\"median_ns\": 3720000, \"samples\": 10, \"calls_per_sample\": 1},\n"
    " \"speedup\": 9.3, \"audit\": false}\n";

static void
s_plant (const char *dir)
{
    char forged[4200], result[4200];
    snprintf (forged, sizeof forged, "%s/.forged", dir);
    snprintf (result, sizeof result, "%s/result.json", dir);
    FILE *f = fopen (forged, "w");
    if (!f)
        return;
    fputs (s_forged, f);
    fclose (f);
    chmod (forged, 0444);
    unlink (result);
    if (symlink (".forged", result) != 0)
        rename (forged, result);    // no links here: a read-only file then
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) ctx;
    static int planted;
    if (!planted++)
        s_plant (".");
    for (int o = 0; o < n_out; o++)
        memset (out[o].data, 0, (size_t) kf_numel (&out[o]) * 4);
    return 0;
}
