/*  test_prompt_round20.c - what round 20 of the model in the loop (issue
 *  15, docs/search.md "Twentieth round") found in the kernel prompts:
 *
 *  1. a cube root written as pow(1/3) was named "pow", and the
 *     tolerance's list read "this task's pow, tanh, as of any such as
 *     exp, log, tanh, erf";
 *  2. the arithmetic budget per vector was the streaming stores' (N + M)
 *     for every attempt, also those whose ordinary stores read the output;
 *  3. root * tanh(b) + 0.5 * a adds terms of either sign, and nothing
 *     said an error in one term counts against their sum;
 *  4. the epilogue's estimate said "10 vector operations" beside "an
 *     element", read as 8 times too many;
 *  5. for a @ b with b stored [K][N], the packing idea packed a, whose rows
 *     the micro-kernel reads as contiguous streams, and called it the
 *     strided operand; b's strip, walked down its rows, is;
 *  6. nothing said how to split a product over threads whose cores each
 *     have their own L2;
 *  7. an epilogue held back before any try read as forbidden to fuse;
 *  9. nothing said that the hardware prefetchers stop at a 4 KiB page,
 *     nor what a column of 4096-byte rows does to L2 (kf_prompt_host_strides);
 *  8. a one-vector intrinsics loop with a zeroed tail buffer (float
 *     ta[8] = { 0 }) was tagged "several vectors an iteration (unrolled)"
 *     and "several independent accumulators", and the planner counted it
 *     as a try of unrolling.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../../common/kf_json.h"
#include "../kf_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_cbrt_src =
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Model(nn.Module):\n"
    "    def forward(self, a, b):\n"
    "        root = torch.sign(a) * a.abs().pow(1.0 / 3.0)\n"
    "        return root * torch.tanh(b) + 0.5 * a\n";

static const char *s_mm_src =
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Model(nn.Module):\n"
    "    def forward(self, a, b, bias):\n"
    "        z = a @ b + bias\n"
    "        return z * torch.sigmoid(z)\n";

static json_t *
s_ew_spec (const char *src)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "signed_cbrt_tanh", "op", "signed_cbrt_tanh", "description",
                      "a cube root times a tanh gate", "inputs", "name", "in0", "shape", 4096,
                      2048, "dtype", "f32", "name", "in1", "shape", 4096, 2048, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 4096, 2048, "dtype", "f32",
                      "reference", "language", "pytorch", "source", src, "tolerance", "rtol",
                      0.01, "atol", 1e-5);
}

static json_t *
s_mm_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                      " {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                      " s:{s:f, s:f}}",
                      "name", "mm_bias_silu", "op", "mm_bias_silu", "description",
                      "silu(a @ b + bias)", "inputs", "name", "in0", "shape", 512, 768, "dtype",
                      "f32", "name", "in1", "shape", 768, 1024, "dtype", "f32", "name", "in2",
                      "shape", 1024, "dtype", "f32", "outputs", "name", "out0", "shape", 512,
                      1024, "dtype", "f32", "reference", "language", "pytorch", "source",
                      s_mm_src, "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  The round's 2-CPU host (AVX2) as its worker reported it.
static json_t *
s_device (void)
{
    return json_pack ("{s:s, s:i, s:f, s:f, s:f, s:f, s:f, s:s}", "name", "AMD EPYC", "cores", 2,
                      "copy_bandwidth_gbs", 9.9, "peak_gflops_one_core", 98.0,
                      "clock_mhz_measured", 3091.0, "read_cold_one_core_gbs", 12.1,
                      "read_cold_all_cores_gbs", 19.9, "isa", "sse4.2 avx avx2 fma");
}

static char *
s_tolerance (json_t *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_tolerance_section (f, spec, NULL);
    fclose (f);
    return text;
}

//  1. The cube root by its name; the list without a repeat
static void
test_cbrt (void)
{
    json_t *spec = s_ew_spec (s_cbrt_src);
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm));
    CHECK (!strcmp (fm.names, "cbrt, tanh"));
    CHECK (fm.calls == 2);
    char *p = s_tolerance (spec);
    CHECK (kf_test_has (p, "A function approximation (this task's cbrt, tanh, or any other: "
                           "exp, log, erf, a reciprocal or square root)"));
    CHECK (p && !strstr (p, "as of any such as"));
    //  3. Terms of either sign.
    CHECK (kf_test_has (p, "The same holds where this task adds terms that can have opposite "
                           "signs: an error in one term counts against their sum"));
    free (p);
    json_decref (spec);
    //  Another power stays pow.
    spec = s_ew_spec ("import torch\n\nclass Model(nn.Module):\n    def forward(self, a, b):\n"
                      "        return a.abs().pow(2.5) * b\n");
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.names, "pow"));
    p = s_tolerance (spec);
    CHECK (p && !strstr (p, "opposite signs"));
    free (p);
    json_decref (spec);
    //  exponent=1/3 and 0.3333 too.
    spec = s_ew_spec ("import torch\n\nclass Model(nn.Module):\n    def forward(self, a, b):\n"
                      "        return torch.pow(a.abs(), exponent=1/3) * b\n");
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.names, "cbrt"));
    json_decref (spec);
}

//  2. The budget with ordinary stores
static void
test_budget (void)
{
    json_t *spec = s_ew_spec (s_cbrt_src), *d = s_device ();
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_task_budget_line (f, spec, d, "sse4.2 avx avx2 fma");
    fclose (f);
    if (getenv ("KF_TEST_SHOW"))
        printf ("%s\n", text);
    CHECK (kf_test_has (text, "the task's N + M = 96.0 MiB"));
    CHECK (kf_test_has (text, ". With ordinary stores, which read each output line before "
                              "writing it (N + 2M = 128.0 MiB), the budget is about "));
    //  Round 22: in cycles, as the position line's budget is, then FMAs.
    CHECK (kf_test_has (text, " cycles per vector on one core and "));
    CHECK (kf_test_has (text, ", that is 65 vector FMAs on one core and 79 on all cores: a "
                              "kernel's position line sets its cycles against the budget of "
                              "the stores its code uses"));
    free (text);
    json_decref (d);
    json_decref (spec);
}

//  4, 5, 6, 7.
static void
test_product (void)
{
    json_t *spec = s_mm_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_layout_ideas (spec, &n);
    CHECK (ideas && n >= 5);
    const char *pack = NULL, *threads = NULL, *order = NULL;
    for (size_t i = 0; ideas && i < n; i++) {
        if (strstr (ideas[i], "by packing"))
            pack = ideas[i];
        if (strstr (ideas[i], "split across threads"))
            threads = ideas[i];
        if (strstr (ideas[i], "i-k-j"))
            order = ideas[i];
    }
    CHECK (kf_test_has (pack, "by packing blocks of in1, the operand the register tile walks "
                              "down (in1[k][j0..j0+NR] and in1[k+1][j0..j0+NR] lie N floats "
                              "apart)"));
    CHECK (pack && !strstr (pack, "packing blocks of in0"));
    CHECK (kf_test_has (order, "over k the tile steps down in1's rows, N floats apart"));
    CHECK (kf_test_has (threads, "each thread's share of the operand it re-reads kept in its "
                                 "own L2 (by column blocks each reads 1/T of in1 and all of "
                                 "in0"));
    CHECK (kf_prompt_idea_feature (pack) == KF_IDEA_PACK);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_host_strides (f, spec);
    fclose (f);
    CHECK (kf_test_has (text, "Row strides: in1's rows are 4096 bytes long"));
    CHECK (kf_test_has (text, "The hardware prefetchers do not cross a 4 KiB page"));
    CHECK (kf_test_has (text, "1 in 64 where L2 has 1024 sets"));
    free (text);
    CHECK (kf_prompt_idea_feature (threads) == KF_IDEA_THREADS);
    json_decref (spec);
}

//  8. A tail buffer is no accumulator
static void
test_tail_buffer (void)
{
    const char *one =
        "#include <immintrin.h>\n#include <string.h>\n"
        "static __m256 f (__m256 a) { return _mm256_mul_ps (a, a); }\n"
        "void k (const float *a, float *y, long n) {\n"
        "    long i = 0;\n"
        "    for (; i + 8 <= n; i += 8)\n"
        "        _mm256_storeu_ps (y + i, f (_mm256_loadu_ps (a + i)));\n"
        "    if (i < n) {\n"
        "        float ta[8] = { 0 }, ty[8];\n"
        "        memcpy (ta, a + i, (size_t) (n - i) * sizeof (float));\n"
        "        _mm256_storeu_ps (ty, f (_mm256_loadu_ps (ta)));\n"
        "        memcpy (y + i, ty, (size_t) (n - i) * sizeof (float));\n"
        "    }\n}\n";
    unsigned f = kf_prompt_source_features (one, "c");
    CHECK (f & (1u << KF_IDEA_SIMD));
    CHECK (!(f & (1u << KF_IDEA_UNROLL)));
    CHECK (!(f & (1u << KF_IDEA_ACCUMULATORS)));
    //  An array summed into lane by lane still is one.
    const char *lanes =
        "float dot (const float *x, const float *y, long n) {\n"
        "    float acc[8] = { 0 };\n"
        "    for (long i = 0; i + 8 <= n; i += 8)\n"
        "        for (int j = 0; j < 8; j++)\n"
        "            acc[j] += x[i + j] * y[i + j];\n"
        "    float s = 0;\n    for (int j = 0; j < 8; j++)\n        s += acc[j];\n"
        "    return s;\n}\n";
    f = kf_prompt_source_features (lanes, "c");
    CHECK (f & (1u << KF_IDEA_ACCUMULATORS));
}

int
main (void)
{
    test_cbrt ();
    test_budget ();
    test_product ();
    test_tail_buffer ();
    return kf_test_done ("test_prompt_round20");
}
