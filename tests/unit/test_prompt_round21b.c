/*  test_prompt_round21b.c - round 21's open items (issue 15,
 *  docs/search.md "Twenty-first round") in what the prompts say of a
 *  kernel's code:
 *
 *  1. an outer-product tile over packed panels read as "no feature this
 *     reading knows": its broadcasts were _mm256_broadcast_ss (a0 + k),
 *     a pointer sum with no '[', and its panels were written by a routine
 *     pack_b through a pointer named dst;
 *  2. a try that took its parent's divide out for an rcp estimate read
 *     "added no feature this reading knows: it changed 56 of its
 *     parent's 120 lines", nothing of what moved;
 *  3. rules that conflicted: "write the output once" for a kernel whose
 *     output holds its partial sums over k chunks; "plain code" for a
 *     log1p whose range reduction takes the float's bits; the threads
 *     idea's "share kept in its own L2" where no share fits; the
 *     elementwise "a call bound by memory saves at most 35%" in a GEMM's
 *     prompt. (The tuning prompt's "at most the 2 cores": test_prompt_clarity.)
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_changed.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include <stdlib.h>
#include <string.h>

//  The micro-kernel of round 21's candidate 12, cut down.
static const char *const s_outer_src =
    "#include <immintrin.h>\n"
    "static void pack_b (const float *B, long N, long K, float *Bp, long p0, long p1)\n"
    "{\n"
    "    for (long p = p0; p < p1; p++) {\n"
    "        float *dst = Bp + p * K * 16;\n"
    "        for (long k = 0; k < K; k++)\n"
    "            for (int jj = 0; jj < 16; jj++)\n"
    "                dst[k * 16 + jj] = B[(p * 16 + jj) * K + k];\n"
    "    }\n"
    "}\n"
    "static void kernel2x16 (const float *A, long lda, const float *Bp, long kc, float *C)\n"
    "{\n"
    "    const float *a0 = A, *a1 = A + lda;\n"
    "    __m256 c00 = _mm256_setzero_ps (), c01 = c00, c10 = c00, c11 = c00;\n"
    "    for (long k = 0; k < kc; k++) {\n"
    "        const __m256 b0 = _mm256_loadu_ps (Bp + k * 16);\n"
    "        const __m256 b1 = _mm256_loadu_ps (Bp + k * 16 + 8);\n"
    "        __m256 x;\n"
    "        x = _mm256_broadcast_ss (a0 + k);\n"
    "        c00 = _mm256_fmadd_ps (x, b0, c00); c01 = _mm256_fmadd_ps (x, b1, c01);\n"
    "        x = _mm256_broadcast_ss (a1 + k);\n"
    "        c10 = _mm256_fmadd_ps (x, b0, c10); c11 = _mm256_fmadd_ps (x, b1, c11);\n"
    "    }\n"
    "    _mm256_storeu_ps (C, c00); _mm256_storeu_ps (C + 8, c01);\n"
    "    _mm256_storeu_ps (C + 16, c10); _mm256_storeu_ps (C + 24, c11);\n"
    "}\n";

//  A dot product with a transpose of its lane sums and a polynomial:
//  neither an outer product nor packing.
static const char *const s_dot_src =
    "#include <immintrin.h>\n"
    "static __m256 poly (__m256 r)\n"
    "{\n"
    "    __m256 p = _mm256_set1_ps (1.98e-4f);\n"
    "    p = _mm256_fmadd_ps (p, r, _mm256_set1_ps (1.39e-3f));\n"
    "    return _mm256_fmadd_ps (_mm256_set1_ps (0.5f), r, p);\n"
    "}\n"
    "static void dot4 (const float *x, const float *w, long K, float *out)\n"
    "{\n"
    "    __m256 a0 = _mm256_setzero_ps (), a1 = a0;\n"
    "    for (long k = 0; k < K; k += 8) {\n"
    "        a0 = _mm256_fmadd_ps (_mm256_loadu_ps (x + k), _mm256_loadu_ps (w + k), a0);\n"
    "        a1 = _mm256_fmadd_ps (_mm256_loadu_ps (x + K + k), _mm256_loadu_ps (w + k), a1);\n"
    "    }\n"
    "    __m256 t = _mm256_unpacklo_ps (a0, a1);\n"
    "    _mm256_storeu_ps (out, poly (t));\n"
    "}\n";

static void
test_reader (void)
{
    unsigned f = kf_prompt_source_features (s_outer_src, "c");
    CHECK ((f >> KF_IDEA_OUTER) & 1u);
    CHECK ((f >> KF_IDEA_PACK) & 1u);
    unsigned g = kf_prompt_source_features (s_dot_src, "c");
    CHECK (!((g >> KF_IDEA_OUTER) & 1u));
    CHECK (!((g >> KF_IDEA_PACK) & 1u));
    char words[KF_PROMPT_FEATURE_WORDS_MAX];
    printf ("outer tile: %s\n", kf_prompt_feature_words (f, words, sizeof words));
}

//  log1p's parent: one divide and one rcp; the child: two rcp estimates,
//  no divide, fewer FMAs. A comment's intrinsic is not code.
static const char *const s_parent =
    "__m256 q = _mm256_div_ps (l, _mm256_add_ps (one, e));\n"
    "__m256 c = _mm256_mul_ps (d, _mm256_rcp_ps (u));\n"
    "p = _mm256_fmadd_ps (p, r, c1); p = _mm256_fmadd_ps (p, r, c2);\n"
    "p = _mm256_fmadd_ps (p, r, c3);\n";
static const char *const s_child =
    "/* no _mm256_div_ps here */\n"
    "__m256 q = _mm256_mul_ps (l, _mm256_rcp_ps (_mm256_add_ps (one, e)));\n"
    "__m256 c = _mm256_mul_ps (d, _mm256_rcp_ps (u));\n"
    "p = _mm256_fmadd_ps (p, r, c1);\n";

static void
test_ops (void)
{
    char buf[KF_PROMPT_CHANGED_OPS_MAX];
    kf_prompt_changed_ops (s_parent, s_child, buf, sizeof buf);
    printf ("ops: %s\n", buf);
    CHECK (strstr (buf, "FMAs 3 to 1"));
    CHECK (strstr (buf, "divides 1 to 0"));
    CHECK (strstr (buf, "rcp/rsqrt estimates 1 to 2"));
    CHECK (strstr (buf, "multiplies 1 to 2"));
    CHECK (!strstr (buf, "adds"));    //  one _mm256_add_ps each
    kf_prompt_changed_ops (s_parent, s_parent, buf, sizeof buf);
    CHECK (!*buf);
    //  Whole kinds only in a short buffer.
    char small[24];
    kf_prompt_changed_ops (s_parent, s_child, small, sizeof small);
    CHECK (!strcmp (small, "FMAs 3 to 1"));
    //  In the words a try is told by.
    json_t *row = json_pack ("{s:i, s:i, s:i, s:s}", "changed", 3, "parent_lines", 4, "lines",
                             4, "ops", "divides 1 to 0");
    char text[KF_PROMPT_CHANGED_TEXT_MAX];
    kf_prompt_changed_text (row, text, sizeof text);
    printf ("text: %s\n", text);
    CHECK (strstr (text, "changed 3 of its parent's 4 lines"));
    CHECK (strstr (text, "by kind (each call once, as written, not as it runs: a call in a loop "
                         "or a macro counts once): divides 1 to 0"));
    json_decref (row);
}


//  mm_bt_gelu_residual: a [384][1024], b [768][1024], r and out [384][768].
static json_t *
s_gemm (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s},"
                      " {s:s, s:[i, i], s:s}], s:[{s:s, s:[i, i], s:s}], s:{s:s, s:s},"
                      " s:{s:f, s:f}}",
                      "name", "mm_bt_gelu_residual", "op", "mm_bt_gelu_residual",
                      "description", "gelu(a @ b.T) + r", "inputs", "name", "in0", "shape", 384,
                      1024, "dtype", "f32", "name", "in1", "shape", 768, 1024, "dtype", "f32",
                      "name", "in2", "shape", 384, 768, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 384, 768, "dtype", "f32", "reference", "language", "pytorch",
                      "source",
                      "import torch.nn.functional as F\nclass Model(nn.Module):\n"
                      "    def forward(self, a, b, r):\n        return F.gelu(a @ b.t()) + r\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  Round 21's host: 2 cores, 32 KiB L1d and 512 KiB L2 each.
static json_t *
s_host (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:s}]}",
                      "backend", "host", "compile_isa", "sse4.2 avx2", "devices", "name",
                      "AMD EPYC", "cores", 2, "physical_cores", 2, "clock_mhz_measured", 3000.0,
                      "read_cold_one_core_gbs", 18.9, "read_cold_all_cores_gbs", 30.0,
                      "thread_start_join_us", 25.2, "l1d_bytes", 32768.0, "l2_bytes",
                      524288.0, "isa", "sse4.2 avx2");
}

static void
test_rules (void)
{
    json_t *spec = s_gemm (), *hw = s_host ();
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    //  The threads' shares against each core's L2.
    char *ws;
    KF_TEST_CAPTURE (ws, f, kf_prompt_working_set_line (f, spec, d));
    printf ("%s", ws ? ws : "(none)\n");
    CHECK (ws && strstr (ws, "Split over the 2 cores (an L2 of 512 KiB each): by column blocks "
                             "a thread re-reads its 1/2 of the second operand, 1.5 MiB, for "
                             "all of the first; by row blocks its 1/2 of the first, 768 KiB, "
                             "for all of the second: neither share fits its L2, so each "
                             "thread still blocks k"));
    free (ws);
    //  The product's epilogue idea says where the epilogue goes in a
    //  kernel of k chunks.
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *epi = NULL, *threads = NULL;
    for (size_t i = 0; i < n; i++) {
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_EPILOGUE)
            epi = ideas[i];
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS)
            threads = ideas[i];
    }
    CHECK (epi && strstr (epi, "at the last k chunk's store, so that no pass reads the output "
                               "back afterwards"));
    //  The thread-cost paragraph of a product: no memory bound.
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 4, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 29.66, "candidate_ns", 10.9e6);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .base = base };
    char *cost;
    KF_TEST_CAPTURE (cost, f,
                     kf_prompt_thread_cost (f, &in, threads ? threads : "use every core, by "
                                                                           "threads"));
    printf ("%s\n", cost ? cost : "(none)");
    CHECK (cost && strstr (cost, "A product's time is its multiply-adds, which divide over the "
                               "cores"));
    CHECK (cost && !strstr (cost, "a call bound by memory saves at most"));
    free (cost);
    //  Round 51: where all cores' FMA peak is 1.42 times one core's, a
    //  product's threads save at most what that allows, not half.
    json_object_set_new (d, "peak_gflops", json_real (459.0));
    json_object_set_new (d, "peak_gflops_all_threads", json_real (327.0));
    json_object_set_new (d, "peak_gflops_one_core", json_real (230.0));
    KF_TEST_CAPTURE (cost, f,
                     kf_prompt_thread_cost (f, &in, threads ? threads : "use every core, by "
                                                                           "threads"));
    printf ("%s\n", cost ? cost : "(none)");
    //  Round 52: by what all threads reached together, not the summed 459.
    CHECK (kf_test_has (cost, "which divide over the cores as far as the measured FMA peaks do: "
                              "all threads together reached 327 GFLOP/s against one core's 230 "
                              "(1.42x), so threads save at most about 30% of a call bound by "
                              "them"));
    CHECK (kf_test_has (cost, "(the FMA peaks above) and pay 25.2 us to start, a net gain of 29% "
                              "of the call at best"));
    free (cost);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
    //  An elementwise function's approximation may take the float's bits.
    json_t *ew = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                            " s:{s:s, s:s}, s:{s:f, s:f}}",
                            "name", "t", "op", "log1p_gate", "description", "log1p", "inputs",
                            "name", "in0", "shape", 4096, "dtype", "f32", "outputs", "name",
                            "out0", "shape", 4096, "dtype", "f32", "reference", "language",
                            "pytorch", "source", "def forward(self, x):\n    return torch.log1p(x)\n",
                            "tolerance", "rtol", 0.01, "atol", 1e-5);
    ideas = kf_prompt_ideas_for (ew, KF_TARGET_HOST, &n);
    const char *approx = NULL;
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_APPROX)
            approx = ideas[i];
    //  Round 24: no longer promised to vectorise (a loop of such casts with
    //  ternary clamps stayed scalar); the compiler's report tells.
    CHECK (approx && strstr (approx, "go through memcpy into a uint32_t and back, where "
                                     "frexpf and ldexpf stay calls"));
    json_decref (ew);
}

int
main (void)
{
    test_reader ();
    test_ops ();
    test_rules ();
    return kf_test_done ("test_prompt_round21b");
}
