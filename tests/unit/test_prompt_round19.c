/*  test_prompt_round19.c - what round 19 of the model in the loop (issue
 *  15, docs/search.md "Nineteenth round") found in the kernel prompts:
 *
 *  1. a row divided by its largest magnitude, z / z.abs().amax(dim=-1),
 *     was read as elementwise work, and its fusion idea told the model to
 *     finish each tile of outputs in registers, where the whole row's
 *     maximum is needed first;
 *  2. "the 3 operations after the product is not in that count";
 *  3. "over 2 cores a call saves at most 50%" for a call bound by memory,
 *     where all cores read cold data 1.6 times as fast as one core;
 *  4. how many vector registers a register tile must fit in was not said;
 *  5. AVX-512 names on an AVX2 host: "process 16 elements per
 *     instruction", "_mm512_sqrt_ps", "such as AVX-512's rcp14" (named
 *     as within any budget), and an approximation "the compiler can
 *     vectorise" for a formula with a square root, which it keeps a
 *     scalar call;
 *  6. a kernel above the copy figure with its data cold was told "so
 *     treat memory bandwidth as the limit", beside 57 cycles a vector
 *     against an arithmetic budget of 39.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../../common/kf_json.h"
#include "../../common/kf_rates.h"
#include "../kf_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_mm_src =
    "import torch\nimport torch.nn as nn\n\nrows = 512\ninner = 1024\ncols = 768\n\n\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n\n"
    "    def forward(self, a, b):\n"
    "        z = a @ b.T\n"
    "        return z / (z.abs().amax(dim=-1, keepdim=True) + 1e-5)\n\n\n"
    "def get_inputs():\n"
    "    return [torch.randn(rows, inner), torch.randn(cols, inner) / inner ** 0.5]\n";

static const char *s_ew_src =
    "import torch\nimport torch.nn as nn\n\n\n"
    "class Model(nn.Module):\n"
    "    def forward(self, a, b):\n"
    "        return torch.asinh(a) + 0.25 * b * torch.rsqrt(1.0 + b * b)\n";

static json_t *
s_mm_spec (const char *src)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "mm_bt_rowmax_scale", "op", "mm_bt_rowmax_scale", "description",
                      "a product, then each row over its largest magnitude", "inputs", "name",
                      "in0", "shape", 512, 1024, "dtype", "f32", "name", "in1", "shape", 768,
                      1024, "dtype", "f32", "outputs", "name", "out0", "shape", 512, 768,
                      "dtype", "f32", "reference", "language", "pytorch", "source", src,
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_ew_spec (double rtol)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "asinh_rsqrt_clip", "op", "asinh_rsqrt_clip", "description",
                      "asinh beside a soft clip", "inputs", "name", "in0", "shape", 4096, 2048,
                      "dtype", "f32", "name", "in1", "shape", 4096, 2048, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 4096, 2048, "dtype", "f32",
                      "reference", "language", "pytorch", "source", s_ew_src, "tolerance",
                      "rtol", rtol, "atol", 1e-5);
}

//  The round's 2-CPU host (AVX2, no AVX-512) as its worker reported it.
static json_t *
s_hw (json_t *task, const char *isa)
{
    json_t *hw = json_pack (
        "{s:s, s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:s, s:f,"
        " s:f}], s:O}",
        "backend", "host", "arch", "x86_64", "compile_isa", isa, "devices", "name", "AMD EPYC",
        "cores", 2, "copy_bandwidth_gbs", 9.9, "peak_gflops", 180.0, "peak_source",
        "avx2+fma", "peak_gflops_one_core", 92.0, "peak_gflops_all_threads", 164.0,
        "thread_start_join_us", 44.9, "copy_one_core_gbs", 13.0, "clock_mhz_measured",
        3000.0, "isa", isa, "read_cold_one_core_gbs", 12.1, "read_cold_all_cores_gbs", 19.9,
        "task", task);
    return hw;
}

static char *
s_text (int which, json_t *spec, const char *isa)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    json_t *hw = s_hw (spec, isa);
    if (which == 0) {
        json_t *sections = kf_prompt_default_sections_for ("c", "host", spec);
        fprintf (f, "%s\n%s", kf_jstr (sections, "philosophy"), kf_jstr (sections, "strategies"));
        json_decref (sections);
    }
    else if (which == 1)
        kf_prompt_target_section (f, "host", "c", hw, NULL);
    else if (which == 2)
        kf_prompt_tolerance_section (f, spec, NULL);
    else {
        kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw };
        kf_prompt_thread_cost (f, &in, "use every core, by threads over contiguous ranges");
    }
    json_decref (hw);
    fclose (f);
    return text;
}

static void
test_amax (void)
{
    json_t *spec = s_mm_spec (s_mm_src);
    kf_formula_t fm;
    //  1. The row's maximum is a row function ...
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.row, "amax"));
    char *p = s_text (1, spec, "sse4.2 avx avx2 fma");
    if (getenv ("KF_TEST_SHOW"))
        printf ("%s\n", p);
    //  2. ... named with a verb that agrees.
    CHECK (kf_test_has (p, "the row's maximum and its factor after the product are not in that "
                           "count: per output element it does a pass over its row for the row's "
                           "largest value"));
    free (p);
    char *idea = kf_prompt_epilogue_idea (spec);
    printf ("idea: %s\n", idea ? idea : "(none)");
    CHECK (kf_test_has (idea, "fold each tile into its rows' largest magnitudes while the tile "
                              "sits in registers"));
    CHECK (kf_test_has (idea, "no element can be finished before its whole row's maximum is "
                              "known"));
    CHECK (idea && !strstr (idea, "apply it to each tile of outputs while it is in registers"));
    free (idea);
    json_decref (spec);
    //  ... over the last dimension only.
    const char *at = strstr (s_mm_src, "amax(dim=-1, keepdim=True)");
    char other[2048];
    snprintf (other, sizeof other, "%.*samax(dim=0, keepdim=True)%s", (int) (at - s_mm_src),
              s_mm_src, at + strlen ("amax(dim=-1, keepdim=True)"));
    spec = s_mm_spec (other);
    CHECK (kf_prompt_formula (spec, &fm) && !strcmp (fm.row, ""));
    json_decref (spec);
}

static void
test_host (void)
{
    json_t *spec = s_ew_spec (0.01);
    //  3. Threads over a call bound by memory.
    char *p = s_text (3, spec, "sse4.2 avx avx2 fma");
    printf ("threads: %s\n", p);
    CHECK (kf_test_has (p, "over 2 cores a call saves at most 50% of its time"));
    CHECK (kf_test_has (p, "a call bound by memory saves at most 39%, as all cores' cold read rate was "
                           "19.9 GB/s against one core's 12.1 (1.64x)"));
    free (p);
    //  4. The vector registers, by the flags.
    p = s_text (1, spec, "sse4.2 avx avx2 fma");
    CHECK (kf_test_has (p, "With AVX2 a kernel has 16 vector registers of 8 floats (ymm0-15)"));
    CHECK (p && !strstr (p, "zmm0-31"));
    free (p);
    p = s_text (1, spec, "sse4.2 avx avx2 fma avx512f");
    CHECK (kf_test_has (p, "With AVX-512 a kernel has 32 vector registers of 16 floats "
                           "(zmm0-31)"));
    free (p);
    //  5. The strategies and ideas name both widths, and a square root's
    //  intrinsic.
    p = s_text (0, spec, "sse4.2 avx avx2 fma");
    CHECK (kf_test_has (p, "(_mm256_sqrt_ps with AVX2, _mm512_sqrt_ps with AVX-512)"));
    free (p);
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    bool sixteen = false, full = false, sqrt_said = false;
    for (size_t i = 0; ideas && i < n; i++) {
        sixteen |= strstr (ideas[i], "process 16 elements per instruction") != NULL;
        full |= strstr (ideas[i], "(8 floats with AVX2, 16 with AVX-512, as the flags allow)")
                != NULL;
        sqrt_said |= strstr (ideas[i], "a square root is the intrinsic's, in a loop of "
                              "intrinsics") != NULL;
    }
    CHECK (n > 0 && !sixteen && full && sqrt_said);
    //  ... and the tolerance names the estimates that fit its budget.
    p = s_text (2, spec, "sse4.2 avx avx2 fma");
    CHECK (kf_test_has (p, "so do the hardware's reciprocal and reciprocal square root "
                           "estimates (AVX2's vrcpps and vrsqrtps, 1.5 x 2^-12 = 3.7e-04 "
                           "relative"));
    CHECK (p && !strstr (p, "such as AVX-512's rcp14"));
    free (p);
    json_decref (spec);
    spec = s_ew_spec (1e-4);
    p = s_text (2, spec, "sse4.2 avx avx2 fma");
    CHECK (kf_test_has (p, "no hardware reciprocal estimate does without a Newton step"));
    free (p);
    json_decref (spec);
}

//  6. Above the copy figure, cold: which ceiling binds is not said to be
//  memory's.
static void
test_above_copy (void)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_rates_t r = { .bytes = 100663296, .traffic = "N + M", .gbs = 10.1, .copy_gbs = 9.9,
                     .cold = true, .uncounted = "the formula calls asinh" };
    CHECK (f && kf_rates_write (f, &r));
    if (f)
        fclose (f);
    printf ("rates:%s\n", text ? text : "");
    CHECK (text && !strstr (text, "treat memory bandwidth as the limit"));
    CHECK (kf_test_has (text, "so it does not say which ceiling binds: set the call's time "
                              "against the Target section's floors"));
    free (text);
}

int
main (void)
{
    test_amax ();
    test_host ();
    test_above_copy ();
    return kf_test_done ("test_prompt_round19");
}
