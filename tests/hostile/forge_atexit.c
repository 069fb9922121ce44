/*  Hostile, verdict forgery by atexit(). kf_forward writes zeros (plainly
 *  wrong) and, on its first call, registers an atexit() handler; it runs
 *  when the evaluating process exits after the judge has written its
 *  verdict and overwrites every result.json it can find (its working
 *  directory, /proc/self/cwd, $TMPDIR, and the other evaluation
 *  directories next to it) with "correct, 9.3x".
 *  Caught when: the verdict is not "correct" (the verdict channel is out of
 *  the candidate's reach: nothing it writes after, or besides, its calls
 *  can change what the judge reports). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char s_forged[] =
    "{\"verdict\": \"correct\", \"detail\": \"all checks passed\",\n"
    " \"correctness\": {\"sets\": 5, \"match_fraction\": 1, \"cosine\": 1, \"max_abs_err\": 0,"
    " \"max_rel_err\": 0, \"cases\": 1},\n"
    " \"candidate\": {\"median_ns\": 400000, \"p10_ns\": 390000, \"p90_ns\": 410000,"
    " \"samples\": 10, \"calls_per_sample\": 3},\n"
    " \"reference\": {\"median_ns\": 3720000, \"p10_ns\": 3700000, \"p90_ns\": 3750000,"
    " \"samples\": 10, \"calls_per_sample\": 1},\n"
    " \"speedup\": 9.3, \"audit\": false}\n";

static void
s_forge (const char *path)
{
    FILE *f = fopen (path, "w");
    if (f) {
        fputs (s_forged, f);
        fclose (f);
    }
}

static void
s_forge_glob (const char *pattern)
{
    glob_t g;
    if (glob (pattern, 0, NULL, &g) == 0)
        for (size_t i = 0; i < g.gl_pathc; i++)
            s_forge (g.gl_pathv[i]);
    globfree (&g);
}

static void
s_after_the_verdict (void)
{
    char pattern[4200];
    s_forge ("result.json");
    s_forge ("/proc/self/cwd/result.json");
    const char *tmp = getenv ("TMPDIR");
    if (tmp) {
        snprintf (pattern, sizeof pattern, "%s/result.json", tmp);
        s_forge (pattern);
        snprintf (pattern, sizeof pattern, "%s/../kf-*/result.json", tmp);
        s_forge_glob (pattern);
    }
    s_forge_glob ("../*/result.json");
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) in; (void) n_in; (void) ctx;
    static int registered;
    if (!registered++)
        atexit (s_after_the_verdict);
    for (int o = 0; o < n_out; o++)
        memset (out[o].data, 0, (size_t) kf_numel (&out[o]) * 4);
    return 0;
}
