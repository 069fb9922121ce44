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
 *     rewrite of a row's statistics, was tagged "approximate math";
 *  3. a dot product over two chains (a0, a1: loads at k and k + 16) was
 *     tagged "unrolled" and "several independent accumulators", so the
 *     unrolling idea (4 chains or more hide a 4-cycle FMA) was withheld
 *     from it and credited with its result;
 *  4. candidate 7's cheaper math over candidate 1's polynomial (vrcp14ps
 *     for a divide, a vpermps table, getexp/getmant) read only as
 *     "explicit SIMD", and an approximation idea got no credit for it;
 *  5. the outer-product order of a product (an element of x broadcast
 *     against a vector of W's transposed row) had no tag, so its idea
 *     went to kernels that did it already.
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

//  Round 17's candidate 5's inner loop: one dot product, two chains.
static const char s_two_chains[] =
    "#include <immintrin.h>\n#include <stdint.h>\n"
    "static float dot1 (const float *x, const float *w, int64_t K) {\n"
    "    __m512 a0 = _mm512_setzero_ps (), a1 = _mm512_setzero_ps ();\n"
    "    int64_t k = 0;\n"
    "    for (; k + 32 <= K; k += 32) {\n"
    "        a0 = _mm512_fmadd_ps (_mm512_loadu_ps (x + k), _mm512_loadu_ps (w + k), a0);\n"
    "        a1 = _mm512_fmadd_ps (_mm512_loadu_ps (x + k + 16), _mm512_loadu_ps (w + k + 16), a1);\n"
    "    }\n"
    "    return _mm512_reduce_add_ps (_mm512_add_ps (a0, a1));\n}\n"
    "int kf_forward (const float *x, const float *w, float *y, int64_t M, int64_t N, int64_t K) {\n"
    "    for (int64_t i = 0; i < M; i++)\n"
    "        for (int64_t j = 0; j < N; j++)\n"
    "            y[i * N + j] = dot1 (x + i * K, w + j * K, K);\n"
    "    return 0;\n}\n";

//  Round 17's candidate 7 (parent candidate 1), trimmed: log1p by
//  getexp/getmant and a 16-entry table, tanh's divide by vrcp14ps.
static const char s_estimates[] =
    "#include <immintrin.h>\n#include <math.h>\n"
    "static __m512 gate16 (__m512 x, __m512 g, __m512 inv_tab, __m512 log_tab) {\n"
    "    const __m512 one = _mm512_set1_ps (1.0f);\n"
    "    __m512 w = _mm512_fmadd_ps (x, x, one);\n"
    "    __m512 e = _mm512_getexp_ps (w);\n"
    "    __m512 m = _mm512_getmant_ps (w, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_src);\n"
    "    __m512i idx = _mm512_srli_epi32 (_mm512_castps_si512 (w), 19);\n"
    "    __m512 inv = _mm512_permutexvar_ps (idx, inv_tab);\n"
    "    __m512 lc = _mm512_permutexvar_ps (idx, log_tab);\n"
    "    __m512 r = _mm512_fmsub_ps (m, inv, one);\n"
    "    __m512 p = _mm512_fmadd_ps (_mm512_set1_ps (-0.25f), r, _mm512_set1_ps (0.33333333f));\n"
    "    p = _mm512_fmadd_ps (p, r, _mm512_set1_ps (-0.5f));\n"
    "    __m512 lg = _mm512_fmadd_ps (e, _mm512_set1_ps (0.69314718f), _mm512_fmadd_ps (p, _mm512_mul_ps (r, r), _mm512_add_ps (r, lc)));\n"
    "    __m512 g2 = _mm512_mul_ps (g, g);\n"
    "    __m512 num = _mm512_set1_ps (-2.76076847742355e-16f);\n"
    "    num = _mm512_fmadd_ps (num, g2, _mm512_set1_ps (2.00018790482477e-13f));\n"
    "    num = _mm512_fmadd_ps (num, g2, _mm512_set1_ps (-8.60467152213735e-11f));\n"
    "    num = _mm512_fmadd_ps (num, g2, _mm512_set1_ps (5.12229709037114e-08f));\n"
    "    __m512 den = _mm512_fmadd_ps (g2, _mm512_set1_ps (1.18534705686654e-04f), _mm512_set1_ps (4.89352518554385e-03f));\n"
    "    return _mm512_mul_ps (lg, _mm512_mul_ps (_mm512_mul_ps (num, g), _mm512_rcp14_ps (den)));\n}\n"
    "int kf_forward (const float *x, const float *g, float *y, long n) {\n"
    "    float it[16], lt[16];\n"
    "    for (int k = 0; k < 16; k++) { it[k] = 16.0f / (16 + k); lt[k] = logf ((16 + k) / 16.0f); }\n"
    "    __m512 inv_tab = _mm512_loadu_ps (it), log_tab = _mm512_loadu_ps (lt);\n"
    "    for (long i = 0; i + 16 <= n; i += 16)\n"
    "        _mm512_storeu_ps (y + i, gate16 (_mm512_loadu_ps (x + i), _mm512_loadu_ps (g + i), inv_tab, log_tab));\n"
    "    return 0;\n}\n";

//  The outer-product order over W transposed to [K][16] panels: each x
//  element broadcast against the panel's row k, two rows of 16 outputs.
static const char s_outer_simd[] =
    "#include <immintrin.h>\n"
    "int kf_forward (const float *x, const float *w, float *y, long M, long N, long K) {\n"
    "    static float wt[512 * 16];\n"
    "    for (long j0 = 0; j0 < N; j0 += 16) {\n"
    "        for (long k = 0; k < K; k++)\n"
    "            for (long j = 0; j < 16; j++) wt[k * 16 + j] = w[(j0 + j) * K + k];\n"
    "        for (long i = 0; i < M; i += 2) {\n"
    "            __m512 c0 = _mm512_setzero_ps (), c1 = _mm512_setzero_ps ();\n"
    "            for (long k = 0; k < K; k++) {\n"
    "                __m512 b = _mm512_loadu_ps (wt + k * 16);\n"
    "                __m512 a0 = _mm512_set1_ps (x[i * K + k]);\n"
    "                c0 = _mm512_fmadd_ps (a0, b, c0);\n"
    "                c1 = _mm512_fmadd_ps (_mm512_set1_ps (x[(i + 1) * K + k]), b, c1);\n"
    "            }\n"
    "            _mm512_storeu_ps (y + i * N + j0, c0);\n"
    "            _mm512_storeu_ps (y + (i + 1) * N + j0, c1);\n"
    "        }\n    }\n    return 0;\n}\n";
//  The same order in plain C, for the compiler to vectorise over j.
static const char s_outer_c[] =
    "int kf_forward (const float *x, const float *wt, float *y, long M, long N, long K) {\n"
    "    for (long i = 0; i < M; i++)\n"
    "        for (long j0 = 0; j0 < N; j0 += 16) {\n"
    "            float acc[16] = { 0 };\n"
    "            for (long k = 0; k < K; k++) {\n"
    "                const float a = x[i * K + k];\n"
    "                for (int j = 0; j < 16; j++)\n"
    "                    acc[j] += a * wt[(j0 / 16 * K + k) * 16 + j];\n"
    "            }\n"
    "            for (int j = 0; j < 16; j++) y[i * N + j0 + j] = acc[j];\n"
    "        }\n    return 0;\n}\n";

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

static void
test_two_chains (void)
{
    unsigned f = kf_prompt_source_features (s_two_chains, "c");
    CHECK (f & BIT (KF_IDEA_SIMD));
    CHECK (!(f & BIT (KF_IDEA_UNROLL)));
    CHECK (!(f & BIT (KF_IDEA_ACCUMULATORS)));
    CHECK (!kf_prompt_source_does (s_two_chains, "c", KF_IDEA_UNROLL));
    //  The layer norm of candidate 6 keeps its two sums and chains alike.
    CHECK (!(kf_prompt_source_features (s_layer_norm, "c") & BIT (KF_IDEA_UNROLL)));
}

static void
test_estimates (void)
{
    unsigned f = kf_prompt_source_features (s_estimates, "c");
    unsigned parent = kf_prompt_source_features (s_one_thread, "c");
    CHECK (f & BIT (KF_IDEA_ESTIMATE));
    CHECK (!(parent & BIT (KF_IDEA_ESTIMATE)));
    CHECK (parent & BIT (KF_IDEA_APPROX));
    json_t *row = json_pack ("{s:i, s:i, s:i}", "parent_id", 1, "features", (int) f,
                             "parent_features", (int) parent);
    unsigned added = kf_prompt_features_added (row);
    CHECK (added == (BIT (KF_IDEA_SIMD) | BIT (KF_IDEA_ESTIMATE)));
    char words[512];
    kf_prompt_feature_words (added, words, sizeof words);
    CHECK (strstr (words, "rcp/rsqrt estimate") && strstr (words, "explicit SIMD"));
    //  The approximation idea is credited with the cheaper math.
    bool by_code = false;
    CHECK (kf_prompt_try_counts ("process 16 elements per instruction, by explicit SIMD "
                                 "intrinsics", added, "cut the cost of each element's expensive "
                                 "function, by a branch-free approximation", &by_code));
    CHECK (by_code);
    json_decref (row);
    //  Neither the elementwise threads nor the two chains hold estimates.
    CHECK (!(kf_prompt_source_features (s_threads_only, "c") & BIT (KF_IDEA_ESTIMATE)));
    CHECK (!(kf_prompt_source_features (s_two_chains, "c") & BIT (KF_IDEA_ESTIMATE)));
}

static void
test_outer (void)
{
    CHECK (kf_prompt_source_does (s_outer_simd, "c", KF_IDEA_OUTER));
    CHECK (kf_prompt_source_does (s_outer_c, "c", KF_IDEA_OUTER));
    //  A dot product, a polynomial's broadcast coefficients, a per-lane sum:
    //  no outer product.
    CHECK (!kf_prompt_source_does (s_two_chains, "c", KF_IDEA_OUTER));
    CHECK (!kf_prompt_source_does (s_estimates, "c", KF_IDEA_OUTER));
    CHECK (!kf_prompt_source_does (s_lanes, "c", KF_IDEA_OUTER));
    CHECK (!kf_prompt_source_does (s_layer_norm, "c", KF_IDEA_OUTER));
    //  The sixth idea of nn.Linear's list (kf_prompt_layout_ideas.c).
    const char *idea = "use each loaded value several times from registers with no sum across "
                       "lanes per output, by the outer-product order over a copy of W's block "
                       "transposed to [K][NR] panels (made once per call; not for unit stride, "
                       "which both already have): a tile of MR x NR outputs in vector registers "
                       "over all of k, each x[i][k] broadcast against the panel's row k";
    CHECK (kf_prompt_idea_feature (idea) == KF_IDEA_OUTER);
    char words[256];
    kf_prompt_feature_words (BIT (KF_IDEA_OUTER), words, sizeof words);
    CHECK (strstr (words, "outer-product order") != NULL);
}

int
main (void)
{
    test_threads_only ();
    test_layer_norm ();
    test_still_read ();
    test_two_chains ();
    test_estimates ();
    test_outer ();
    return kf_test_done ("test_tags_round17");
}
