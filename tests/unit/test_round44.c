/*  test_round44.c - what rounds 41-43 of the model in the loop (issue 15,
 *  docs/search.md "Forty-third round, a check") left open, fixed beside
 *  round 44:
 *
 *  1. one outlying screen-against-full pair (82.93x against 121.34x,
 *     beside pairs a median 2% apart) set a +/-18% band for every
 *     verdict: below ten pairs one pair cannot set the band, two can
 *     (kf_lineage_repeat_gaps), and the texts say the band is an
 *     estimate (kf_lineage.c, kf_prompt_noise.c);
 *  2. "Held back ...: approximate math (a polynomial or bit tricks)"
 *     beside this attempt's own idea, "spend fewer instructions ... a
 *     polynomial or rational form of lower degree" (kf_prompt_attempt.c);
 *  3. the approximation idea spoke of a log's bits, frexpf and sqrtf to
 *     sigmoid and tanh tasks: the attempt reads the range reductions of
 *     its own functions (kf_prompt_approx_on_host);
 *  4. "MC = 1484 ... NC = 23808" for M = N = 1024, taken back at the
 *     line's end, is said as the whole dimension (test_round32 and
 *     test_prompt_latency check the line);
 *  5. rounds 42-43: one generation of x @ x.t() handed cache blocking to
 *     the triangle kernel and the triangle to the blocked one, and both
 *     came back as one kernel: the triangle is a feature the code's
 *     reading knows (kf_descriptor_triangle), so the planner sees the
 *     two ideas crossed (s_converges);
 *  6. round 43: a kernel computing every output of x @ x.t() was set
 *     against the triangle's count ("49.3 GFLOP/s ... a kernel that
 *     computes every output runs at twice these figures"): the kernel
 *     prompts and the meta prompt count what its loops do
 *     (kf_prompt_product_every_output);
 *  7. round 42's open item: the children's lines call a loss of a child
 *     whose threads hardly ran side by side not like for like, while the
 *     idea records counted it lost: they judge as the lines do
 *     (s_try_verdict's 4, kf_search_idea_record);
 *  8. round 44's generation 0: "spend fewer instructions" from scratch
 *     beside a sibling's cheapest approximation was one idea twice: it
 *     waits for a kernel to cut (kf_search_idea_fit_known);
 *  9. round 44: a try handed an idea of no feature, named in full in
 *     "Tried before", was cut mid-clause ("a reciprocal or reciprocal ):
 *     not judged yet"): its head is named (kf_prompt_attempt.c);
 * 10. round 44's candidate 10: a 4 x 4 register tile written through a
 *     ROW(i) macro (`c##i##0 = _mm512_fmadd_ps (...)`) read as no
 *     feature: the reading expands the function-like macros a kernel
 *     defines, bounded (kf_descriptor_macros);
 * 11. round 45: an outcome's load was cut mid-clause ("the exec host
 *     shared with 1 compile and; timed twice, ... the exec ;");
 * 12. round 45: log1p(exp(a)) * sin(b) was offered other tasks'
 *     identities alone, and an elementwise sweep a product's choices
 *     (tile shape, block size, loop order).
 */
#include "../../common/kf_json.h"
#include "../../coordinator/kf_lineage.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_history.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../analysis/kf_descriptor_macro.h"
#include "../../analysis/kf_descriptor_triangle.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test_text.h"
#include "../kf_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  1.
static void
test_outlier_band (void)
{
    //  Round 43's six screen-against-full pairs: five within 3%, and
    //  candidate 10's 82.93x screen against its 121.34x in full.
    static const double ratios[6] = { 1.01, 1.015, 1.02, 1.025, 1.03, 121.34 / 82.93 };
    double gaps[6], median = 0;
    for (int i = 0; i < 6; i++)
        gaps[i] = log (ratios[i]);
    double band = kf_lineage_repeat_gaps (gaps, 6, &median);
    printf ("one outlier: band %.3f, median %.3f\n", band, median);
    //  Before: the 0.9 quantile, halfway to the outlier (+23%).
    CHECK (band > 0.03 && band < 0.06);
    CHECK (fabs (median - 0.0225) < 0.001);
    //  Two outliers among six set it.
    static const double two[6] = { 1.01, 1.015, 1.02, 1.025, 1.40, 121.34 / 82.93 };
    for (int i = 0; i < 6; i++)
        gaps[i] = log (two[i]);
    band = kf_lineage_repeat_gaps (gaps, 6, &median);
    printf ("two outliers: band %.3f\n", band);
    CHECK (band > 0.2);
    //  Ten pairs or more: the quantile as it is.
    double ten[10];
    for (int i = 0; i < 10; i++)
        ten[i] = log (i < 9 ? 1.02 : 1.5);
    band = kf_lineage_repeat_gaps (ten, 10, &median);
    CHECK (band > 0.06);
    //  The child's line says the band is an estimate of few pairs.
    json_t *c = json_pack ("{s:s, s:f, s:s, s:s, s:f, s:f, s:f, s:i}", "status", "correct",
                           "speedup", 110.0, "fidelity", "full", "parent_fidelity", "full",
                           "noise", 0.01, "repeat", 0.05, "repeat_median", 0.02,
                           "repeat_count", 6);
    char buf[600];
    kf_lineage_reason (c, 100.0, buf, sizeof buf);
    printf ("%s\n", buf);
    CHECK (kf_test_has (buf, "improved beyond the timing noise: 110.00x against the parent's "
                             "100.00x; timing noise about +/-5% (the same kernel timed twice in "
                             "this run came out within 5% of itself 9 times in 10 (as its 6 "
                             "pairs so far put it, one outlying pair not setting it), a median "
                             "2% apart)"));
    json_object_set_new (c, "repeat_count", json_integer (12));
    kf_lineage_reason (c, 100.0, buf, sizeof buf);
    CHECK (!kf_test_has (buf, "so far put it"));
    json_decref (c);
    //  Round 44's candidate 8: 24.42x against 31.03x within a wide band,
    //  its threads on about one CPU: the line says so.
    c = json_pack ("{s:s, s:f, s:s, s:s, s:f, s:f, s:f, s:i, s:{s:f, s:b}}", "status", "correct",
                   "speedup", 24.42, "fidelity", "full", "parent_fidelity", "full", "noise", 0.05,
                   "repeat", 0.54, "repeat_median", 0.19, "repeat_count", 9, "oc",
                   "cpu_per_wall", 1.12, "tried", 1);
    kf_lineage_reason (c, 31.03, buf, sizeof buf);
    printf ("%s\n", buf);
    CHECK (kf_test_has (buf, "correct at 24.42x against the parent's 31.03x, but the timings "
                             "are too spread to tell the two apart"));
    CHECK (kf_test_has (buf, "; its threads hardly ran side by side in its full timing (1.12 "
                             "CPU-seconds a second of its calls)"));
    json_decref (c);
    //  The tuning prompt separates points by the band, not by the
    //  largest pair.
    json_t *hw = json_pack ("{s:f, s:i, s:f, s:f}", "screen_full_gap", 1.4632,
                            "screen_full_count", 6, "screen_full_typical", 1.0225,
                            "screen_full_band", 1.056);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_screen_sweep (f, hw));
    printf ("%s", text);
    CHECK (kf_test_has (text, "so points whose screen figures lie within 1.06x of each other "
                              "(the ratio 9 in 10 of those pairs stayed within) are not "
                              "separated"));
    free (text);
    //  Round 44: a +/-54% band beside a median of 1.19x asks for larger
    //  moves (it went by the median, under 1.25x).
    json_object_set_new (hw, "screen_full_gap", json_real (2.40));
    json_object_set_new (hw, "screen_full_count", json_integer (9));
    json_object_set_new (hw, "screen_full_typical", json_real (1.19));
    json_object_set_new (hw, "screen_full_band", json_real (1.54));
    KF_TEST_CAPTURE (text, f, kf_prompt_screen_sweep (f, hw));
    CHECK (kf_test_has (text, "So spend the points on choices that could move the time by more "
                              "than 54%"));
    free (text);
    json_decref (hw);
}

//  2.
static void
test_held_cut (void)
{
    json_t *spec = kf_test_cell_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t approx = kf_test_idea_index (ideas, n, KF_IDEA_APPROX);
    size_t cut = kf_test_cut_index (ideas, n);
    size_t stream = kf_test_idea_index (ideas, n, KF_IDEA_STREAM);
    CHECK (approx < n && cut < n && stream < n);
    if (approx >= n || cut >= n || stream >= n) {
        json_decref (spec);
        return;
    }
    json_t *prompt = json_pack ("{s:s, s:{s:i, s:i}}", "mine", ideas[cut], "held",
                                ideas[approx], 1, ideas[stream], 1);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .ideas = prompt,
                          .generation = 1, .slot = 0, .population = 1 };
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_direction (f, &in));
    printf ("%s", text);
    //  The streaming stores are held back; the approximation, which this
    //  attempt's own cheaper forms are, is not listed against it.
    CHECK (kf_test_has (text, "Held back while an idea without a try in flight is left"));
    CHECK (text && !strstr (text, "approximate math (a polynomial or bit tricks) (1 try"));
    free (text);
    //  Another attempt's reading lists it.
    json_object_set_new (prompt, "mine", json_string (ideas[stream]));
    json_object_del (json_object_get (prompt, "held"), ideas[stream]);
    KF_TEST_CAPTURE (text, f, kf_prompt_direction (f, &in));
    CHECK (kf_test_has (text, "approximate math (a polynomial or bit tricks) (1 try in flight)"));
    free (text);
    json_decref (prompt);
    json_decref (spec);
}

//  The approximation idea as an attempt on the host reads it for a task
//  whose forward returns RET (kf_test_ew_spec).
static char *
s_approx_read (const char *ret)
{
    json_t *spec = kf_test_ew_spec (ret);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t approx = kf_test_idea_index (ideas, n, KF_IDEA_APPROX);
    char *text = approx < n ? kf_prompt_idea_on_host (ideas[approx], spec, NULL) : NULL;
    //  The list's text, the key of the idea's tries, stays the generic one.
    CHECK (approx < n && strstr (ideas[approx], "frexpf and ldexpf stay calls"));
    json_decref (spec);
    return text;
}

//  3.
static void
test_approx_families (void)
{
    char *t = s_approx_read ("torch.sigmoid(x) * torch.tanh(2.0 * x)");
    printf ("%s\n", t ? t : "(none)");
    CHECK (kf_test_has (t, "(the idea is the cheaper formula; an exp's range reduction takes "
                           "x = k ln2 + r, a short polynomial for e^r, and 2^k written into "
                           "the float's exponent field"));
    CHECK (kf_test_has (t, "; a choice between two computed values is a blend of their bits by "
                           "a mask"));
    CHECK (kf_test_has (t, "whether the loop vectorised is the compiler's report to read)"));
    CHECK (t && !strstr (t, "frexpf") && !strstr (t, "sqrtf") && !strstr (t, "a log's"));
    free (t);
    t = s_approx_read ("torch.log1p(x * x)");
    CHECK (kf_test_has (t, "a log's range reduction takes the exponent and the mantissa from "
                           "the float's bits (in plain code through memcpy into a uint32_t, "
                           "where frexpf stays a call)"));
    CHECK (t && !strstr (t, "ldexpf") && !strstr (t, "sqrtf"));
    free (t);
    t = s_approx_read ("torch.sqrt(x * x + 1.0) * torch.exp(-x)");
    CHECK (kf_test_has (t, "an exp's range reduction"));
    CHECK (kf_test_has (t, "sqrtf keeps a plain loop scalar"));
    free (t);
    //  Round 44: the sine's own reduction by pi beside the quadrants'.
    t = s_approx_read ("torch.log1p(torch.exp(x)) * torch.sin(x)");
    CHECK (kf_test_has (t, "a sine alone can take k = x/pi rounded, r = x - k pi in [-pi/2, "
                           "pi/2], one odd polynomial in r and the sign from k's low bit"));
    CHECK (kf_test_has (t, "an exp's range reduction") && kf_test_has (t, "a log's range "
                                                                       "reduction"));
    free (t);
    //  Round 45: a kernel's position line names the Target's estimate by
    //  its figure, not in full again.
    json_t *spec = kf_test_ew_spec ("torch.log1p(torch.exp(x)) * torch.sin(x)");
    json_t *hw = kf_test_epyc_host ();
    json_object_set_new (json_array_get (json_object_get (hw, "devices"), 0), "vec_fma_cycles",
                         json_real (1.0));
    json_t *k = json_pack ("{s:i, s:s, s:f, s:{s:f, s:f, s:f}}", "id", 1, "source",
                           "int kf_forward (void) { return 0; }", "candidate_ns", 9.0e6,
                           "bandwidth", "candidate_gbs", 14.9, "bytes", 134217728.0,
                           "copy_gbs", 39.8);
    KF_TEST_CAPTURE (t, f, kf_prompt_position_line (f, k, spec, hw, KF_TARGET_HOST));
    printf ("%s", t ? t : "");
    CHECK (kf_test_has (t, "the Target section estimates them at about "));
    CHECK (kf_test_has (t, "cycles of one core a vector of outputs (an upper figure)"));
    CHECK (t && !strstr (t, "vector instructions a vector of outputs"));
    free (t);
    json_decref (k);
    json_decref (hw);
    json_decref (spec);
    t = s_approx_read ("torch.erf(x) * 0.5");
    CHECK (kf_test_has (t, "erf is +/-1 to within f32's rounding past |x| of about 4"));
    free (t);
    //  A function of no family keeps the general text.
    t = s_approx_read ("torch.atan(x) * 0.5");
    CHECK (kf_test_has (t, "frexpf and ldexpf stay calls"));
    free (t);
}

static bool
s_tri (const char *code)
{
    return kf_descriptor_triangle (code, NULL, 0);
}

//  5.
static void
test_triangle (void)
{
    //  Round 43's triangle kernel (candidate 4's loops), round 41's
    //  mirror of the blocks below the diagonal, and a lower triangle.
    char snip[96];
    CHECK (kf_descriptor_triangle ("for (int64_t I = 0; I < nb; I++)\n"
                                   "  for (int64_t s = 0; s < BS / MR; s++)\n"
                                   "    for (int64_t J = I; J < nb; J++) { }",
                                   snip, sizeof snip));
    CHECK (!strcmp (snip, "for (J = I; J < nb; ...)"));
    CHECK (s_tri ("for (int64_t bi = 16; bi < N; bi += 16)\n"
                  "  for (int64_t bj = 0; bj < bi; bj += 16) mirror (bi, bj);"));
    CHECK (s_tri ("for (i = 0; i < n; i++) for (j = 0; j <= i; j++) { }"));
    //  Round 44's candidate 4: I from a list of row pairs, and the
    //  diagonal's test.
    CHECK (s_tri ("int I = rows[q];\n"
                  "for (int J = I; J < nb; J++) {\n"
                  "  if (I != J) mirror (I, J); }"));
    CHECK (!s_tri ("int I = rows[q];\n"
                   "for (int J = I; J < nb; J++) { store (I, J); }"));
    //  Round 45's candidate 4: i0 from a block's column, the tile stored
    //  as itself and as its mirror; candidate 10: a second clause.
    CHECK (s_tri ("int64_t j0 = b * NR;\n"
                  "for (int64_t i0 = j0; i0 < n; i0 += MR) {\n"
                  "  _mm512_storeu_ps (y + (i0 + r) * n + j0, v0);\n"
                  "  _mm256_storeu_ps (y + (j0 + c) * n + i0, m); }"));
    CHECK (!s_tri ("int64_t j0 = b * NR;\n"
                   "for (int64_t i0 = j0; i0 < n; i0 += MR) {\n"
                   "  _mm512_storeu_ps (y + (i0 + r) * n + j0, v0); }"));
    CHECK (s_tri ("for (int64_t i0 = J0; i0 < n; i0 += TR)\n"
                  "  for (int64_t j0 = J0; j0 < J0 + GB && j0 <= i0; j0 += TR) { }"));
    //  A cache block's inner loop, and round 35's sum over earlier
    //  threads' totals, are not.
    CHECK (!s_tri ("for (int64_t jb = 0; jb < M; jb += NC) {\n"
                   "  int64_t je = jb + NC < M ? jb + NC : M;\n"
                   "  for (int64_t j0 = jb; j0 < je; j0 += NR) { } }"));
    CHECK (!s_tri ("for (int t = 0; t < nt; t++)\n"
                   "  for (int u = 0; u < t; u++) off += tot[u];"));
    CHECK (!s_tri ("for (;;) { }") && !s_tri (""));
    unsigned f = kf_prompt_source_features ("void f (float *o, int n) {\n"
                                            "  for (int i = 0; i < n; i++)\n"
                                            "    for (int j = i; j < n; j++) o[i * n + j] = 0; }",
                                            "c");
    CHECK ((f >> KF_IDEA_TRIANGLE) & 1u);
    char words[KF_PROMPT_FEATURE_WORDS_MAX];
    kf_prompt_feature_words (1u << KF_IDEA_TRIANGLE | 1u << KF_IDEA_UNROLL, words, sizeof words);
    CHECK (kf_test_has (words, "unrolled loops (several vectors, or several steps of k, an "
                               "iteration)"));
    CHECK (kf_test_has (words, "one triangle of a symmetric product"));
    //  The planner: the triangle idea from the blocked kernel, while a
    //  sibling takes blocking from the triangle kernel, makes one kernel
    //  twice.
    json_t *spec = kf_test_gram_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t tri = kf_test_idea_index (ideas, n, KF_IDEA_TRIANGLE);
    size_t block = kf_test_idea_index (ideas, n, KF_IDEA_BLOCK);
    CHECK (n >= 3 && n <= 16 && tri < n && block < n);
    //  Round 44: the unrolling idea says it is the dot-product order's.
    size_t unroll = kf_test_idea_index (ideas, n, KF_IDEA_UNROLL);
    CHECK (unroll < n && kf_test_has (ideas[unroll], "(in the dot-product order, where a tile "
                                                     "of few outputs has fewer chains"));
    if (!(n >= 3 && n <= 16 && tri < n && block < n)) {
        json_decref (spec);
        return;
    }
    unsigned tile = 1u << KF_IDEA_SIMD | 1u << KF_IDEA_MICRO;
    kf_elite_t elites[2] = { { .candidate_id = 4, .speedup = 60 },
                             { .candidate_id = 5, .speedup = 50 } };
    unsigned features[2] = { tile | 1u << KF_IDEA_TRIANGLE, tile | 1u << KF_IDEA_BLOCK };
    kf_search_idea_sibling_t sibling = { .parent_id = 4, .idea = block,
                                         .made = features[0] | 1u << KF_IDEA_BLOCK,
                                         .made_known = true };
    kf_search_idea_known_t known = { .chosen_built = -1, .siblings = &sibling,
                                     .n_siblings = 1 };
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n; k++)
        order[k] = (tri + k) % n;
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, elites, features, 2, -1,
                                           &elites[1], features[1], &known, &pick);
    printf ("crossed: idea %zu (triangle %zu), pick %d\n", idx, tri, pick);
    CHECK (!(idx == tri && (pick < 0 || pick == 1)));
    json_decref (spec);
}

//  6.
#define S_FULL_SRC                                                                         \
    "void kf_forward (const float *x, float *o, int m, int k) {\n"                        \
    "  for (int i = 0; i < m; i++)\n"                                                     \
    "    for (int j = 0; j < m; j++) o[i * m + j] = x[i * k] * x[j * k]; }\n"
#define S_TRI_SRC                                                                          \
    "void kf_forward (const float *x, float *o, int m, int k) {\n"                        \
    "  for (int i = 0; i < m; i++)\n"                                                     \
    "    for (int j = i; j < m; j++) o[i * m + j] = o[j * m + i] = x[i * k] * x[j * k]; }\n"
static void
test_count_per_kernel (void)
{
    json_t *gram = kf_test_gram_spec ();
    json_t *d = json_pack ("{s:i, s:f, s:f, s:f, s:f, s:s}", "cores", 2, "peak_gflops", 230.0,
                           "peak_gflops_one_core", 118.0, "l1d_bytes", 49152.0, "l2_bytes",
                           1048576.0, "isa", "avx512f");
    json_t *hw = json_pack ("{s:[o]}", "devices", d);
    //  Round 43's candidate 5, every output at 10.9 ms.
    json_t *k = json_pack ("{s:f, s:f, s:s}", "candidate_ns", 10900000.0, "reference_ns",
                           414000000.0, "source", S_FULL_SRC);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_position_line (f, k, gram, hw, KF_TARGET_HOST));
    printf ("%s", text);
    CHECK (kf_test_has (text, "compute: 98.5 GFLOP/s"));
    CHECK (kf_test_has (text, "The compute figures count the full product's 2*M*N*K = "
                              "2*1024*1024*512 = 1.07 billion operations, derived from the "
                              "shapes: the product is symmetric, but this kernel's loops walk "
                              "no triangle as its code reads, so it computes every output"));
    free (text);
    //  A triangle kernel: its own count, no "twice".
    json_object_set_new (k, "source", json_string (S_TRI_SRC));
    json_object_set_new (k, "candidate_ns", json_real (4150000.0));
    KF_TEST_CAPTURE (text, f, kf_prompt_position_line (f, k, gram, hw, KF_TARGET_HOST));
    CHECK (kf_test_has (text, "= 537 million operations, derived from the shapes: half the full "
                              "product's 2*M*N*K; this kernel's loops walk one triangle, as its "
                              "code reads"));
    CHECK (text && !strstr (text, "twice those above"));
    free (text);
    //  Round 45's candidate 4: a triangle the reading missed, at 6.69 ms on
    //  1.05 CPU-seconds a second: the full count would be 136% of one
    //  core's peak, so the triangle's is taken.
    json_object_set_new (k, "source", json_string (S_FULL_SRC));
    json_object_set_new (k, "candidate_ns", json_real (6690000.0));
    KF_TEST_CAPTURE (text, f, kf_prompt_position_line (f, k, gram, hw, KF_TARGET_HOST));
    CHECK (kf_test_has (text, "The compute figures count the full product's"));
    free (text);
    json_object_set_new (k, "one_core", json_pack ("{s:f, s:b}", "cpu_per_wall", 1.05,
                                                   "tried", 1));
    KF_TEST_CAPTURE (text, f, kf_prompt_position_line (f, k, gram, hw, KF_TARGET_HOST));
    CHECK (kf_test_has (text, "537 million operations")
           && !kf_test_has (text, "The compute figures count the full product's"));
    free (text);
    json_object_del (k, "one_core");
    json_object_set_new (k, "candidate_ns", json_real (4150000.0));
    //  A full count past every core's peak: a triangle the reading missed.
    json_object_set_new (k, "source", json_string (S_FULL_SRC));
    KF_TEST_CAPTURE (text, f, kf_prompt_position_line (f, k, gram, hw, KF_TARGET_HOST));
    CHECK (kf_test_has (text, "537 million operations") && !strstr (text, "lower bound"));
    free (text);
    json_decref (k);
    //  Round 45: the libm line's bound names the triangle's count.
    json_object_set_new (d, "clock_mhz_measured", json_real (3693.0));
    KF_TEST_CAPTURE (text, f, kf_prompt_task_libm_line (f, gram, d));
    printf ("%s", text);
    CHECK (kf_test_has (text, "for the matrix product's 537 million operations (its diagonal and "
                              "one triangle) at one core's measured FMA peak"));
    free (text);
    //  The meta prompt's outcome lines, by each kernel's features.
    json_t *run = json_pack ("{s:s, s:s, s:O}", "language", "c", "target", "host", "spec", gram);
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "P", "strategies", "S",
                                  "pitfalls", "F", "analysis", "A");
    json_t *outcomes = json_pack ("[{s:i, s:i, s:i, s:s, s:f, s:s, s:f, s:i},"
                                  " {s:i, s:i, s:i, s:s, s:f, s:s, s:f, s:i}]",
                                  "candidate_id", 5, "generation", 1, "prompt_version", 1,
                                  "status", "correct", "speedup", 38.0, "fidelity", "full",
                                  "candidate_ns", 10900000.0, "features",
                                  (int) kf_prompt_source_features (S_FULL_SRC, "c"),
                                  "candidate_id", 4, "generation", 1, "prompt_version", 1,
                                  "status", "correct", "speedup", 99.0, "fidelity", "full",
                                  "candidate_ns", 4150000.0, "features",
                                  (int) kf_prompt_source_features (S_TRI_SRC, "c"));
    kf_meta_base_t base = { .number = 1, .why = "v1", .population = 3, .hardware = hw };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    const char *c5 = p ? strstr (p, "- candidate 5 ") : NULL;
    const char *c4 = p ? strstr (p, "- candidate 4 ") : NULL;
    printf ("%.*s", c5 ? (int) (strchr (c5, '\n') + 1 - c5) : 0, c5 ? c5 : "");
    CHECK (kf_test_has (c5, "compute 98.5 GFLOP/s") && kf_test_has (c5, "counting the full "
                                                                        "product's 2*M*N*K"));
    CHECK (kf_test_has (c4, "compute 129.5 GFLOP/s")
           && kf_test_has (c4, "the work of this kernel's loops (they walk one triangle"));
    free (p);
    json_decref (outcomes);
    json_decref (sections);
    json_decref (run);
    json_decref (hw);
    json_decref (gram);
}

//  7.
static void
test_records_side_by_side (void)
{
    const char *ideas[] = { "use every core, by threads over contiguous ranges",
                            "skip the output's write-allocate read, by non-temporal "
                            "(streaming) stores" };
    //  Round 42's candidate 10: 55.00x against its parent's 71.14x, its
    //  threads at 0.83 CPU-seconds a second, on a quiet host.
    json_t *tries = json_pack ("[{s:s, s:f, s:f, s:f, s:b, s:b}]", "idea", ideas[0], "speedup",
                               55.0, "parent_speedup", 71.14, "noise", 0.05, "loaded", 0,
                               "apart", 1);
    bool aside[2] = { true, true };
    json_t *notes = kf_search_idea_record (ideas, 2, tries, aside);
    printf ("%s\n", json_string_value (json_object_get (notes, ideas[0])));
    CHECK (!aside[0]);
    CHECK (kf_test_has (json_string_value (json_object_get (notes, ideas[0])),
                        "tried: inconclusive, threads that hardly ran side by side (55.00x vs "
                        "parent 71.14x)"));
    json_decref (notes);
    //  Timed side by side, the same try is a loss.
    json_object_set_new (json_array_get (tries, 0), "apart", json_false ());
    notes = kf_search_idea_record (ideas, 2, tries, aside);
    CHECK (aside[0]);
    json_decref (notes);
    //  A gain over a parent whose threads hardly ran side by side is not
    //  a win of the streaming stores.
    json_t *gain = json_pack ("{s:s, s:f, s:f, s:f, s:b, s:b}", "idea", ideas[1], "speedup",
                              90.0, "parent_speedup", 55.0, "noise", 0.05, "loaded", 0,
                              "parent_apart", 1);
    json_array_append_new (tries, gain);
    notes = kf_search_idea_record (ideas, 2, tries, aside);
    CHECK (kf_test_has (json_string_value (json_object_get (notes, ideas[1])),
                        "inconclusive, threads that hardly ran side by side"));
    json_decref (notes);
    json_decref (tries);
}

//  8.
static void
test_cut_needs_kernel (void)
{
    json_t *spec = kf_test_cell_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t cut = kf_test_cut_index (ideas, n);
    CHECK (cut < n && n <= 16);
    if (!(cut < n && n <= 16)) {
        json_decref (spec);
        return;
    }
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n; k++)
        order[k] = (cut + k) % n;
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, NULL, NULL, 0, -1, NULL,
                                           0, NULL, &pick);
    CHECK (idx < n && idx != cut);
    //  From a kernel, it is handed.
    kf_elite_t parent = { .candidate_id = 1, .speedup = 30 };
    unsigned simd = 1u << KF_IDEA_SIMD | 1u << KF_IDEA_APPROX;
    idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, &parent, &simd, 1, -1, &parent,
                                    simd, NULL, &pick);
    CHECK (idx == cut);
    json_decref (spec);
}

//  9.
static void
test_handed_head (void)
{
    json_t *spec = kf_test_cell_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t cut = kf_test_cut_index (ideas, n);
    size_t threads = kf_test_idea_index (ideas, n, KF_IDEA_THREADS);
    CHECK (cut < n && threads < n);
    if (!(cut < n && threads < n)) {
        json_decref (spec);
        return;
    }
    //  Round 44's candidate 3: handed the cut idea, its code starting
    //  threads, not judged yet.
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:s, s:b, s:i}]", "id", 3,
                                 "generation", 0, "slot", 2, "idea", ideas[cut], "phase",
                                 "search", "finished", 0, "added",
                                 1 << KF_IDEA_THREADS | 1 << KF_IDEA_SIMD);
    json_t *prompt = json_pack ("{s:s}", "mine", ideas[threads]);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .ideas = prompt,
                          .history = history, .generation = 1, .slot = 1, .population = 3 };
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_direction (f, &in));
    const char *at = text ? strstr (text, "handed another idea (") : NULL;
    printf ("%.400s\n", at ? at : "(none)");
    CHECK (kf_test_has (at, "handed another idea (spend fewer instructions an element on its "
                            "sigmoid, tanh once they are computed in vector registers), "
                            "though its code does this one too)"));
    CHECK (at && !strstr (at, "a reciprocal or reciprocal )"));
    free (text);
    json_decref (prompt);
    json_decref (history);
    json_decref (spec);
}

//  10.
#define S_MACRO_TILE                                                                      \
    "#include <immintrin.h>\n"                                                            \
    "void tile (const float *a0, const float *a1, const float *b0, const float *b1,\n"    \
    "           int K, float *C) {\n"                                                     \
    "  __m512 z = _mm512_setzero_ps ();\n"                                                \
    "  __m512 c00 = z, c01 = z, c10 = z, c11 = z;\n"                                      \
    "  for (int k = 0; k < K; k += 16) {\n"                                               \
    "    __m512 vb0 = _mm512_loadu_ps (b0 + k), vb1 = _mm512_loadu_ps (b1 + k), va;\n"    \
    "#define ROW(i) va = _mm512_loadu_ps (a##i + k); \\\n"                               \
    "    c##i##0 = _mm512_fmadd_ps (va, vb0, c##i##0); \\\n"                             \
    "    c##i##1 = _mm512_fmadd_ps (va, vb1, c##i##1);\n"                                  \
    "    ROW (0) ROW (1)\n"                                                               \
    "  }\n"                                                                               \
    "  C[0] = _mm512_reduce_add_ps (c00); C[1] = _mm512_reduce_add_ps (c01);\n"           \
    "  C[2] = _mm512_reduce_add_ps (c10); C[3] = _mm512_reduce_add_ps (c11);\n"           \
    "}\n"
static void
test_macros (void)
{
    char *t = kf_descriptor_macros (S_MACRO_TILE);
    printf ("%s", t ? t : "(none)\n");
    CHECK (kf_test_has (t, "va = _mm512_loadu_ps (a0 + k);"));
    CHECK (kf_test_has (t, "c00 = _mm512_fmadd_ps (va, vb0, c00);"));
    CHECK (kf_test_has (t, "c11 = _mm512_fmadd_ps (va, vb1, c11);"));
    CHECK (t && !strstr (t, "##") && !strstr (t, "ROW"));
    free (t);
    unsigned f = kf_prompt_source_features (S_MACRO_TILE, "c");
    CHECK ((f >> KF_IDEA_MICRO) & 1u);
    //  Object-like macros stay, as do texts with no function-like one.
    CHECK (kf_descriptor_macros ("#define NB 64\nfor (i = 0; i < n; i += NB) { }\n") == NULL);
    t = kf_descriptor_macros ("#define NB 64\n#define SQ(x) ((x) * (x))\nint y = SQ (NB);\n");
    CHECK (kf_test_has (t, "int y = ((NB) * (NB));"));
    free (t);
    //  Bounded: a macro that multiplies its text each pass stops at its
    //  bound and the reading takes the text as it is; a call left open
    //  and a call of the wrong arity are left as written.
    CHECK (kf_descriptor_macros ("#define A(x) x x x x x x x x x x x x x x x x\n"
                                 "int y = A (A (A (A (A (A (z))))));\n") == NULL);
    t = kf_descriptor_macros ("#define F(a, b) a + b\nint y = F (1, 2) + F (3) + F (4, 5;\n");
    CHECK (kf_test_has (t, "int y = 1 + 2 + F (3) + F (4, 5;"));
    free (t);
    CHECK (kf_descriptor_macros (NULL) == NULL);
}

//  11.
static void
test_outcome_whole (void)
{
    json_t *c = json_pack ("{s:s, s:f, s:s, s:{s:f, s:f, s:f, s:f, s:f}, s:{s:i, s:i},"
                           " s:{s:f, s:b, s:s}}", "status", "correct", "speedup", 32.79,
                           "fidelity", "full", "host_load", "cpus", 2.0, "runnable_others", 1.2,
                           "others_cpu_share", 0.55, "cand_wait_share", 0.31, "wall_s", 2.0,
                           "host_condition", "compile_workers_beside", 1,
                           "exec_workers_beside", 0, "retimed", "waited_s", 12.5, "quiet", 0,
                           "kept", "second");
    char buf[KF_PROMPT_OUTCOME_MAX];
    kf_prompt_outcome (c, true, buf, sizeof buf);
    printf ("%s\n", buf);
    CHECK (kf_test_has (buf, "the exec host shared with 1 compile and 0 other exec workers"));
    CHECK (kf_test_has (buf, "and the second timing, the less disturbed, stands"));
    json_decref (c);
}

//  12.
static void
test_round45_text (void)
{
    const char *idea = kf_test_identity_idea ("torch.log1p(torch.exp(x)) * torch.sin(x)");
    printf ("%s\n", idea ? idea : "(none)");
    CHECK (kf_test_has (idea, "for this task's log1p, exp, sin: log1p(e^a) = max(a, 0) + "
                              "log1p(e^-|a|)"));
    json_t *hw = json_pack ("{s:f, s:i, s:f, s:f, s:o}", "screen_full_gap", 2.40,
                            "screen_full_count", 9, "screen_full_typical", 1.19,
                            "screen_full_band", 1.64, "task",
                            kf_test_ew_spec ("torch.log1p(torch.exp(x)) * torch.sin(x)"));
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_screen_sweep (f, hw));
    CHECK (kf_test_has (text, "more than 64% (another thread count, fixed shares against chunks "
                              "taken as they go, streaming stores on or off)"));
    CHECK (text && !strstr (text, "tile shape"));
    free (text);
    json_object_set_new (hw, "task", kf_test_gram_spec ());
    KF_TEST_CAPTURE (text, f, kf_prompt_screen_sweep (f, hw));
    CHECK (kf_test_has (text, "(another tile shape or block size, another thread count, another "
                              "loop order)"));
    free (text);
    json_decref (hw);
}

int
main (void)
{
    test_outlier_band ();
    test_held_cut ();
    test_approx_families ();
    test_triangle ();
    test_count_per_kernel ();
    test_records_side_by_side ();
    test_cut_needs_kernel ();
    test_handed_head ();
    test_macros ();
    test_outcome_whole ();
    test_round45_text ();
    return kf_test_done ("test_round44");
}
