/*  test_tags_round17.c - what round 17 of the model in the loop (issue
 *  15, docs/search.md "Seventeenth round") found about the code tags
 *  (kf_prompt_source_features), which say what a kernel's code added and
 *  credit an idea with a child's win or loss:
 *
 *  1. `int started[MAX_THREADS] = { 0 };`, the bookkeeping of a kernel
 *     that starts threads, was read as a per-lane accumulator array, so
 *     kernels that only added threads were tagged "several vectors an
 *     iteration (unrolled)" and "several independent accumulators", and
 *     unrolling was credited with the threads' gain;
 *  2. a layer norm's one-pass variance (sum of squares / N - mean^2), a
 *     rewrite of a row's statistics, was tagged "approximate math".
 *
 *  The kernels below are trimmed from the round's answers.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../analysis/kf_descriptor.h"
#include "../kf_test.h"
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#define BIT(f) (1u << (f))

//  Candidate 1's math on two threads over halves (round 17's candidate 2).
static const char s_threads_only[] =
    "#define _GNU_SOURCE\n"
    "#include <pthread.h>\n#include <math.h>\n#include <unistd.h>\n"
    "#define MAX_THREADS 8\n"
    "typedef struct { const float *x, *g; float *y; long lo, hi; } job_t;\n"
    "static float s_log1p (float u) {\n"
    "    float f = u, p = 7.0376836292E-2f;\n"
    "    p = fmaf (p, f, -1.1514610310E-1f);\n"
    "    p = fmaf (p, f, 1.1676998740E-1f);\n"
    "    p = fmaf (p, f, -1.2420140846E-1f);\n"
    "    return p * f;\n}\n"
    "static void *s_work (void *arg) {\n"
    "    job_t *j = arg;\n"
    "    for (long i = j->lo; i < j->hi; i++)\n"
    "        j->y[i] = s_log1p (j->x[i] * j->x[i]) * tanhf (j->g[i]);\n"
    "    return NULL;\n}\n"
    "int kf_forward (const float *x, const float *g, float *y, long n) {\n"
    "    long t = sysconf (_SC_NPROCESSORS_ONLN);\n"
    "    if (t > MAX_THREADS) t = MAX_THREADS;\n"
    "    pthread_t th[MAX_THREADS];\n"
    "    job_t jobs[MAX_THREADS];\n"
    "    int started[MAX_THREADS] = { 0 };\n"
    "    for (long k = 0; k < t; k++) {\n"
    "        jobs[k] = (job_t) { x, g, y, n * k / t, n * (k + 1) / t };\n"
    "        started[k] = pthread_create (&th[k], NULL, s_work, &jobs[k]) == 0;\n"
    "    }\n"
    "    for (long k = 0; k < t; k++)\n"
    "        if (started[k]) pthread_join (th[k], NULL);\n"
    "    return 0;\n}\n";

//  Its parent: the same math on one thread (round 17's candidate 1).
static const char s_one_thread[] =
    "#include <math.h>\n"
    "static float s_log1p (float u) {\n"
    "    float f = u, p = 7.0376836292E-2f;\n"
    "    p = fmaf (p, f, -1.1514610310E-1f);\n"
    "    p = fmaf (p, f, 1.1676998740E-1f);\n"
    "    p = fmaf (p, f, -1.2420140846E-1f);\n"
    "    return p * f;\n}\n"
    "int kf_forward (const float *x, const float *g, float *y, long n) {\n"
    "    for (long i = 0; i < n; i++)\n"
    "        y[i] = s_log1p (x[i] * x[i]) * tanhf (g[i]);\n"
    "    return 0;\n}\n";

//  A row's mean and variance in one pass, in double (round 17's
//  candidate 6, its layer norm).
static const char s_layer_norm[] =
    "#include <math.h>\n"
    "int kf_forward (const float *x, float *y, long rows, long n) {\n"
    "    for (long i = 0; i < rows; i++) {\n"
    "        const float *xr = x + i * n;\n"
    "        float *yr = y + i * n;\n"
    "        double s = 0, ss = 0;\n"
    "        for (long j = 0; j < n; j++) {\n"
    "            s += xr[j];\n"
    "            ss += (double) xr[j] * xr[j];\n"
    "        }\n"
    "        double mean = s / (double) n;\n"
    "        double var = ss / (double) n - mean * mean;\n"
    "        float r = (float) (1.0 / sqrt (var + 1e-5));\n"
    "        for (long j = 0; j < n; j++)\n"
    "            yr[j] = (float) ((xr[j] - mean) * r);\n"
    "    }\n"
    "    return 0;\n}\n";

//  What the rules must still read: a float per-lane array, and tanh
//  rewritten as a logistic.
static const char s_lanes[] =
    "float kf_sum (const float *x, long n) {\n"
    "    float acc[8] = { 0 };\n"
    "    for (long i = 0; i + 8 <= n; i += 8)\n"
    "        for (int l = 0; l < 8; l++)\n"
    "            acc[l] += x[i + l];\n"
    "    return acc[0] + acc[1] + acc[2] + acc[3] + acc[4] + acc[5] + acc[6] + acc[7];\n}\n";
static const char s_logistic[] =
    "#include <math.h>\n"
    "int kf_forward (const float *x, float *y, long n) {\n"
    "    for (long i = 0; i < n; i++)\n"
    "        y[i] = 2.0f / (1.0f + expf (-2.0f * x[i])) - 1.0f;\n"
    "    return 0;\n}\n";

static char *
s_why (const char *source)
{
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL;
    if (kf_descriptor_classify (source, strlen (source), "c", &c, &why) != 0) {
        free (why);
        return NULL;
    }
    return why;
}

static void
test_threads_only (void)
{
    unsigned f = kf_prompt_source_features (s_threads_only, "c");
    CHECK (f & BIT (KF_IDEA_THREADS));
    CHECK (f & BIT (KF_IDEA_APPROX));
    CHECK (!(f & BIT (KF_IDEA_UNROLL)));
    CHECK (!(f & BIT (KF_IDEA_ACCUMULATORS)));
    char *why = s_why (s_threads_only);
    CHECK (why && !strstr (why, "per-lane accumulator"));
    free (why);
    //  What the child added over its one-thread parent: threads alone.
    unsigned parent = kf_prompt_source_features (s_one_thread, "c");
    json_t *row = json_pack ("{s:i, s:i, s:i}", "parent_id", 1, "features", (int) f,
                             "parent_features", (int) parent);
    CHECK (kf_prompt_features_added (row) == BIT (KF_IDEA_THREADS));
    char words[256];
    kf_prompt_feature_words (kf_prompt_features_added (row), words, sizeof words);
    CHECK (!strcmp (words, "threads"));
    //  So a win of this child is not credited to unrolling.
    bool by_code = false;
    CHECK (!kf_prompt_try_counts ("use every core, by output blocks split across threads",
                                  kf_prompt_features_added (row),
                                  "hide the FMA latency, by unrolling the loop", &by_code));
    json_decref (row);
}

static void
test_layer_norm (void)
{
    unsigned f = kf_prompt_source_features (s_layer_norm, "c");
    CHECK (!(f & BIT (KF_IDEA_APPROX)));
    CHECK (f & BIT (KF_IDEA_FUSED_ROW));
    //  The descriptors still call it a rewrite of the statistics.
    char *why = s_why (s_layer_norm);
    CHECK (why && strstr (why, "variance as E[x^2] - mean^2"));
    free (why);
}

static void
test_still_read (void)
{
    char *why = s_why (s_lanes);
    CHECK (why && strstr (why, "per-lane accumulator"));
    free (why);
    CHECK (kf_prompt_source_features (s_lanes, "c") & BIT (KF_IDEA_ACCUMULATORS));
    CHECK (kf_prompt_source_features (s_logistic, "c") & BIT (KF_IDEA_APPROX));
}

int
main (void)
{
    test_threads_only ();
    test_layer_norm ();
    test_still_read ();
    return kf_test_done ("test_tags_round17");
}
