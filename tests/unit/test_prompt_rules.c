/*  test_prompt_rules.c - the rules of issue 15 for what a prompt says
 *  (items 2, 4 and 6), one block each:
 *
 *  - the fastest kernel the search holds is shown, marked when it does
 *    not count yet, and no kernel is printed twice;
 *  - the tolerance in numbers, with what it allows, and the parent's
 *    measured error and cosine;
 *  - every shape case; inputs as they are drawn (a PyTorch task's by its
 *    get_inputs, never the derived task's default dist), measured
 *    statistics when the reference job reported them; scalars named;
 *  - the target's compiler, flags, peaks, and the kernel's position
 *    against both peaks (no percentage of the copy bandwidth above 100);
 *    the noise of a speedup;
 *  - sections and hints chosen by task class and target (no GPU advice
 *    on the host, no row maximum for GELU);
 *  - no question about a last kernel before there is one; sibling
 *    prompts differ;
 *  - lineage: children's one-line reasons, the last kernel tried, the
 *    normalised hash;
 *  - tuning prompts: the kernel named, the point limit, the agreement,
 *    target examples, the previous round's whole table;
 *  - the build flags the prompt states are the compile worker's.
 */
#include "../../coordinator/kf_lineage.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../compile-worker/kf_toolchain.h"
#include "../kf_test.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//  Case-insensitive search.
static bool
s_has_ci (const char *hay, const char *needle)
{
    return hay && strcasestr (hay, needle);
}

static json_t *
s_gelu (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s, s:{s:s, s:f, s:f}}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                      " s:{s:f, s:f, s:f, s:f},"
                      " s:[{s:[i,i], s:[i,i]}, {s:[i,i], s:[i,i]}]}",
                      "name", "gelu", "op", "activation", "description", "GELU.", "inputs",
                      "name", "x", "shape", 512, 2048, "dtype", "f32", "dist", "kind",
                      "heavy_tail", "scale", 2.0, "dof", 4.0, "outputs", "name", "y", "shape",
                      512, 2048, "dtype", "f32", "reference", "language", "c", "source",
                      "int kf_forward (void) { return 0; }", "tolerance", "rtol", 0.01,
                      "atol", 1e-5, "min_match", 0.99, "min_cosine", 0.99985, "shapes", "x",
                      64, 1000, "y", 64, 1000, "x", 3, 17, "y", 3, 17);
}

static json_t *
s_host_hw (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:i, s:I, s:f, s:f, s:s}]}", "worker", "e1",
                      "backend", "host", "arch", "x86_64", "devices", "name", "Xeon Test CPU",
                      "cores", 16, "memory_bytes", (json_int_t) 68719476736LL,
                      "copy_bandwidth_gbs", 40.5, "peak_gflops", 1210.0, "peak_source",
                      "avx512f");
}

static json_t *
s_kernel (int id, const char *source, double speedup)
{
    return json_pack ("{s:i, s:s, s:s, s:f, s:f, s:f}", "id", id, "source", source, "status",
                      "correct", "speedup", speedup, "candidate_ns", 1e6 / speedup,
                      "reference_ns", 1e6);
}

//  The best kernel, its standing, nothing twice.
static void
s_best (void)
{
    json_t *spec = s_gelu ();
    json_t *best = s_kernel (12, "FASTEST_HELD_CODE", 26.0);
    json_object_set_new (best, "standing", json_string ("held for audit"));
    json_t *base = s_kernel (7, "PARENT_CODE", 7.4);
    json_t *insp = json_pack ("[O, {s:i, s:s, s:f}]", best, "id", 9, "source", "OTHER_CODE",
                              "speedup", 3.0);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = best, .inspirations = insp };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "## Best kernel so far (candidate 12) (held for audit"));
    CHECK (kf_test_has (p, "FASTEST_HELD_CODE"));
    CHECK (kf_test_has (p, "## Kernel to improve (candidate 7)"));
    //  The best is shown once, not again as an inspiration.
    const char *first = strstr (p, "FASTEST_HELD_CODE");
    CHECK (first && !strstr (first + 1, "FASTEST_HELD_CODE"));
    CHECK (kf_test_has (p, "OTHER_CODE"));
    free (p);
    //  The parent is the best: one section, called so, marked if held.
    in.base = best;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "## Kernel to improve: the best kernel so far (candidate 12) (held for audit"));
    CHECK (!kf_test_has (p, "not the fastest kernel found so far"));
    free (p);
    json_decref (insp);
    json_decref (base);
    json_decref (best);
    json_decref (spec);
    //  The standing of each state.
    CHECK (!strcmp (kf_lineage_standing ("full", NULL, NULL, NULL), "counted"));
    CHECK (!strcmp (kf_lineage_standing (NULL, NULL, NULL, NULL), "counted"));
    CHECK (!strcmp (kf_lineage_standing ("full", NULL, "too fast", NULL), "held for audit"));
    CHECK (!strcmp (kf_lineage_standing ("full", NULL, "too fast", "accepted"), "counted"));
    CHECK (!strcmp (kf_lineage_standing ("full", "pending", NULL, NULL), "being re-verified"));
    CHECK (!strcmp (kf_lineage_standing ("pending", NULL, NULL, NULL), "full timing pending"));
    CHECK (!strcmp (kf_lineage_standing ("screen", NULL, NULL, NULL), "screen figure"));
}

//  Tolerance, shapes, data, scalars.
static void
s_facts (void)
{
    json_t *spec = s_gelu ();
    json_t *base = s_kernel (7, "PARENT_CODE", 2.0);
    json_object_set_new (base, "correctness",
                         json_pack ("{s:i, s:f, s:f, s:f, s:f}", "sets", 5, "match_fraction",
                                    0.9995, "max_abs_err", 3.1e-4, "max_rel_err", 2.2e-3,
                                    "cosine", 0.999991));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "relative error |got - want| / |want| is below 0.01"));
    CHECK (kf_test_has (p, "at most 1e-05 (f32)"));
    CHECK (kf_test_has (p, "At least 99% of each output's elements"));
    CHECK (kf_test_has (p, "at least 0.99985"));
    CHECK (kf_test_has (p, "Results need not be bit-identical"));
    //  The parent's measured error and cosine, though it is correct.
    CHECK (kf_test_has (p, "max abs error 0.00031") && kf_test_has (p, "cosine similarity 0.999991"));
    //  Every shape case.
    CHECK (kf_test_has (p, "- case 1: x [64, 1000], y [64, 1000]"));
    CHECK (kf_test_has (p, "- case 2: x [3, 17], y [3, 17]"));
    CHECK (kf_test_has (p, "2 of each shape case"));
    //  A native input as declared.
    CHECK (kf_test_has (p, "x: f32 [512, 2048]; values: 2 x Student-t with 4 degrees of freedom"));
    free (p);
    //  A PyTorch task: the derived default dist is not the truth.
    json_t *torch = json_pack (
        "{s:s, s:s, s:[{s:s, s:[i,i], s:s, s:{s:s, s:f, s:f}}, {s:s, s:[i,i], s:s, s:{s:s, s:f, s:f}}],"
        " s:[{s:s, s:[i,i], s:s}], s:{s:f, s:f}, s:{s:s, s:s}}",
        "name", "swiglu", "description", "SwiGLU.", "inputs", "name", "in0", "shape", 64, 256,
        "dtype", "f32", "dist", "kind", "normal", "mean", 0.0, "std", 1.0, "name",
        "gate_weight", "shape", 512, 256, "dtype", "f32", "dist", "kind", "normal", "mean", 0.0,
        "std", 1.0, "outputs", "name", "out0", "shape", 64, 256, "dtype", "f32", "scalars",
        "init0", 256.0, "init1", 512.0, "reference", "language", "pytorch", "source",
        "class Model(nn.Module):\n    def __init__(self, dim: int, hidden=512):\n"
        "        self.gate = nn.Linear(dim, hidden)\n"
        "    def forward(self, x):\n        return x\n"
        "def get_inputs():\n    return [torch.randn(64, 256) * 2.0]\n");
    json_t *stats = json_pack ("[{s:f, s:f, s:f, s:f, s:f}, n]", "min", -8.25, "max", 8.5,
                               "mean", 0.003, "std", 2.0, "zero_fraction", 0.0);
    kf_prompt_in_t tin = { .spec = torch, .language = "c", .target = "host",
                           .input_stats = stats };
    p = kf_prompt_build (&tin);
    CHECK (!kf_test_has (p, "normal, mean 0, std 1"));
    CHECK (kf_test_has (p, "in0: f32 [64, 256]; values: as the reference's get_inputs() draws them"));
    CHECK (kf_test_has (p, "measured in the first exported set: min -8.25, max 8.5, mean 0.003, std 2"));
    CHECK (kf_test_has (p, "gate_weight: f32 [512, 256]; values: the module's own tensor"));
    CHECK (kf_test_has (p, "init0 = 256: get_init_inputs()[0], the module constructor's argument 'dim'"));
    CHECK (kf_test_has (p, "init1 = 512: get_init_inputs()[1], the module constructor's argument 'hidden'"));
    free (p);
    json_decref (stats);
    json_decref (torch);
    json_decref (base);
    json_decref (spec);
}

//  The target, the position against both peaks, the noise.
static void
s_target (void)
{
    json_t *spec = s_gelu ();
    json_t *hw = s_host_hw ();
    json_t *cc = json_pack ("{s:{s:s}, s:s}", "toolchains", "cc",
                            "cc (Debian 12.2.0-14) 12.2.0\nCopyright", "arch", "x86_64");
    json_t *base = s_kernel (7, "PARENT_CODE", 2.0);
    json_object_set_new (base, "bandwidth",
                         json_pack ("{s:f, s:f, s:f, s:f, s:b}", "bytes", 8388608.0,
                                    "candidate_gbs", 81.0, "copy_gbs", 40.5,
                                    "candidate_fraction_of_copy", 2.0, "roofline_applies", 0));
    json_object_set_new (base, "compute",
                         json_pack ("{s:f, s:f, s:f, s:f}", "flops", 2e9, "candidate_gflops",
                                    605.0, "peak_gflops", 1210.0, "candidate_fraction_of_peak",
                                    0.5));
    json_object_set_new (base, "timing_candidate",
                         json_pack ("{s:f, s:f, s:f}", "median_ns", 1000.0, "p10_ns", 980.0,
                                    "p90_ns", 1040.0));
    json_object_set_new (base, "timing_reference",
                         json_pack ("{s:f, s:f, s:f}", "median_ns", 2000.0, "p10_ns", 1960.0,
                                    "p90_ns", 2040.0));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .hardware = hw,
                          .compiler = cc, .base = base };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "Xeon Test CPU, 16 cores"));
    CHECK (kf_test_has (p, "Memory peak: 40 GB/s") || kf_test_has (p, "Memory peak: 41 GB/s"));
    CHECK (kf_test_has (p, "Compute peak: 1210 GFLOP/s in f32 FMA"));
    CHECK (kf_test_has (p, "Build: cc (cc (Debian 12.2.0-14) 12.2.0) with -O3 -march=native"));
    CHECK (!kf_test_has (p, "Copyright"));
    CHECK (kf_test_has (p, "__AVX512F__"));
    //  The peak's source names instructions the CPU has.
    CHECK (kf_test_has (p, "measured its FMA peak with avx512f instructions, so the CPU has them"));
    CHECK (kf_test_has (p, "cold caches"));
    //  Above the copy figure on the host, whose every call starts with
    //  cold caches: never as 200%, never as served from a cache (the
    //  worker's roofline_applies false notwithstanding), both rates.
    //  Round 15: the worker's 8 MiB (N + M) and the read each ordinary
    //  store makes of its line first (M = 4 MiB), 12 MiB. Round 17:
    //  against the copy figure, which counts N + M, the kernel does too.
    CHECK (kf_test_has (p, "memory: moves at least 8.0 MiB (N + M) at 81 GB/s, above the measured "
                           "copy bandwidth (40 GB/s) although every call starts with its data "
                           "flushed"));
    CHECK (kf_test_has (p, "Counting N + 2M = 12.0 MiB, as it crosses the memory bus"));
    CHECK (!kf_test_has (p, "200%") && !kf_test_has (p, "served from cache") && !kf_test_has (p, "fits"));
    CHECK (kf_test_has (p, "compute: 605 GFLOP/s, 50.0% of the measured peak (1210 GFLOP/s)"));
    //  +/-3% and +/-2%: about +/-3.6% together.
    CHECK (kf_test_has (p, "spread by +/-3.0%") && kf_test_has (p, "+/-2.0%") && kf_test_has (p, "+/-3.6%"));
    free (p);
    //  Facts the worker reports are printed; the ISA advice then goes.
    json_t *d = json_array_get (json_object_get (hw, "devices"), 0);
    json_object_set_new (d, "isa", json_string ("avx512f avx512bw fma"));
    json_object_set_new (d, "clock_mhz", json_real (3100));
    json_object_set_new (d, "l2_bytes", json_integer (2097152));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "3100 MHz") && kf_test_has (p, "2.0 MiB L2") && kf_test_has (p, "ISA avx512f"));
    CHECK (!kf_test_has (p, "no full list is reported"));
    //  Not even with a cache size: 8 MiB is larger than a 2 MiB L2.
    CHECK (!kf_test_has (p, "fits"));
    free (p);
    //  The ISA the code is compiled for: the exec hosts' shared list, as
    //  the cc toolchain builds it, not -march=native (issue 15).
    json_object_set_new (hw, "compile_isa", json_string ("sse4.2 avx avx2 fma avx512f"));
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "with -O3 -march=x86-64 -msse4.2 -mavx -mavx2 -mfma -mavx512f -std=c11 "
                           "-g -shared -fPIC"));
    CHECK (kf_test_has (p, "The code is compiled for the instruction sets the flags above enable "
                           "(sse4.2 avx avx2 fma avx512f), which every exec host of this target has, "
                           "not for the compile host"));
    CHECK (!kf_test_has (p, "-march=native"));
    free (p);
    json_object_del (hw, "compile_isa");
    //  A GPU keeps data in its L2 between the calls of a sample: 8 MiB
    //  fits a 50 MiB L2 and is said to; 64 MiB is never said to fit,
    //  whatever the worker judged, and neither is a share over 100%.
    json_t *gpu = json_pack ("{s:s, s:s, s:[{s:s, s:I, s:f, s:f}]}", "backend", "cuda", "arch",
                             "sm_90", "devices", "name", "H200", "l2_bytes",
                             (json_int_t) 52428800, "copy_bandwidth_gbs", 4000.0,
                             "peak_gflops", 60000.0);
    json_t *gbase = s_kernel (8, "GPU_CODE", 2.0);
    json_object_set_new (gbase, "bandwidth",
                         json_pack ("{s:f, s:f, s:f, s:b}", "bytes", 8388608.0, "candidate_gbs",
                                    8080.0, "copy_gbs", 4000.0, "roofline_applies", 1));
    kf_prompt_in_t gin = { .spec = spec, .language = "cuda", .target = "cuda:sm_90",
                           .hardware = gpu, .base = gbase };
    p = kf_prompt_build (&gin);
    CHECK (kf_test_has (p, "8080 GB/s, above the measured copy bandwidth (4000 GB/s): the working set "
                           "(8.0 MiB) fits in the 50.0 MiB L2"));
    CHECK (!kf_test_has (p, "202%"));
    CHECK (kf_test_has (p, "compute: not known (the task gives no operation count)"));
    free (p);
    json_object_set_new (gbase, "bandwidth",
                         json_pack ("{s:f, s:f, s:f, s:b}", "bytes", 67108864.0, "candidate_gbs",
                                    4400.0, "copy_gbs", 4000.0, "roofline_applies", 0));
    p = kf_prompt_build (&gin);
    CHECK (kf_test_has (p, "although the working set (64.0 MiB) is larger than the 50.0 MiB L2"));
    CHECK (!kf_test_has (p, "fits") && !kf_test_has (p, "110%"));
    free (p);
    json_decref (gbase);
    json_decref (gpu);
    json_decref (base);
    json_decref (cc);
    json_decref (hw);
    json_decref (spec);
}

//  The flags a prompt states are those the compile worker passes.
static void
s_flags (void)
{
    char *argv[40];
    char buf[512];
    kf_toolchain_args_t args = { .source = "kernel.c", .output = "k.so", .include_dir = "/i",
                                 .arch = "sm_90" };
    const kf_toolchain_t *tcs[2] = { &kf_toolchain_cc, &kf_toolchain_nvcc };
    const char *langs[2] = { "c", "cuda" };
    for (int t = 0; t < 2; t++) {
        CHECK (tcs[t]->command ("prog", &args, argv, 40, buf, sizeof buf) == 0);
        const char *flags = kf_prompt_build_flags (langs[t]);
        CHECK (flags != NULL);
        //  Every flag the prompt names is on the command line.
        char *copy = strdup (flags ? flags : "");
        char *save = NULL;
        for (char *w = strtok_r (copy, " ()", &save); w; w = strtok_r (NULL, " ()", &save)) {
            if (!strcmp (w, "linked") || !strcmp (w, "with"))
                continue;
            bool found = false;
            for (int i = 0; argv[i]; i++)
                if (!strcmp (argv[i], w) || (!strncmp (w, "-arch=", 6)
                                             && !strncmp (argv[i], "-arch=", 6)))
                    found = true;
            if (!found)
                fprintf (stderr, "%s: flag %s not in the build\n", langs[t], w);
            CHECK (found);
        }
        free (copy);
    }
}

//  Classes, sections and hints by class and target.
static void
s_classes (void)
{
    json_t *gelu = s_gelu ();
    CHECK (kf_prompt_task_class (gelu) == KF_CLASS_ELEMENTWISE);
    json_t *t = json_pack ("{s:s, s:{s:s, s:s}}", "op", "softmax", "reference", "language", "c",
                           "source", "");
    CHECK (kf_prompt_task_class (t) == KF_CLASS_ROW_REDUCTION);
    json_t *mm = json_pack ("{s:s, s:{s:s, s:s}}", "name", "swiglu", "reference", "language",
                            "pytorch", "source", "self.up = nn.Linear(d, h)\n");
    CHECK (kf_prompt_task_class (mm) == KF_CLASS_MATMUL);
    json_t *att = json_pack ("{s:{s:s, s:s}}", "reference", "language", "pytorch", "source",
                             "F.scaled_dot_product_attention(q, k, v)");
    CHECK (kf_prompt_task_class (att) == KF_CLASS_ATTENTION);
    //  Round 27: attention written out, under a name with "softmax" in
    //  it; one product before a softmax stays a product.
    json_t *att2 = json_pack ("{s:s, s:{s:s, s:s}}", "op", "heads_softmax_av", "reference",
                              "language", "pytorch", "source",
                              "scores = q @ k.transpose(-2, -1) * s\n"
                              "return torch.softmax(scores, dim=-1) @ v\n");
    CHECK (kf_prompt_task_class (att2) == KF_CLASS_ATTENTION);
    json_t *bmm_sm = json_pack ("{s:s, s:{s:s, s:s}}", "op", "bmm_bt_softmax", "reference",
                                "language", "pytorch", "source",
                                "\"\"\"softmax(q @ k^T / 8)\"\"\"\n    def forward(self, a, b):\n"
                                "return torch.softmax(torch.bmm(a, b.transpose(1, 2)), dim=-1)\n");
    CHECK (kf_prompt_task_class (bmm_sm) == KF_CLASS_MATMUL);
    json_t *scan = json_pack ("{s:{s:s, s:s}}", "reference", "language", "pytorch", "source",
                              "torch.cumsum(x, dim=1)");
    CHECK (kf_prompt_task_class (scan) == KF_CLASS_SCAN);
    //  Round 27: a scan and attention have idea lists of their own; a
    //  scan of an expensive function gets the approximation second.
    size_t n_ideas = 0;
    const char *const *ideas = kf_prompt_ideas_for (scan, KF_TARGET_HOST, &n_ideas);
    CHECK (n_ideas >= 4 && strstr (ideas[0], "prefix sum"));
    for (size_t i = 0; i < n_ideas; i++)
        CHECK (!strstr (ideas[i], "online maximum") && !strstr (ideas[i], "by a branch-free"));
    json_t *scan_sig = json_pack ("{s:{s:s, s:s}}", "reference", "language", "pytorch", "source",
                                  "torch.cumsum(x * torch.sigmoid(g), dim=1)");
    ideas = kf_prompt_ideas_for (scan_sig, KF_TARGET_HOST, &n_ideas);
    CHECK (n_ideas >= 5 && strstr (ideas[0], "prefix sum")
           && strstr (ideas[1], "by a branch-free approximation"));
    ideas = kf_prompt_ideas_for (att2, KF_TARGET_HOST, &n_ideas);
    CHECK (n_ideas >= 4 && strstr (ideas[0], "online softmax"));
    CHECK (kf_prompt_idea_feature (ideas[0]) == KF_IDEA_FUSED_ROW);
    json_decref (scan_sig);
    //  Round 10: words of a docstring are no layers. Log-cosh "with a
    //  small linear term" is elementwise, and so is a formula on inputs
    //  drawn from a normal distribution; the calls still decide.
    json_t *logcosh = json_pack (
        "{s:s, s:{s:s, s:s}, s:[{s:s, s:[i, i]}], s:[{s:s, s:[i, i]}]}", "name", "logcosh_scale",
        "reference", "language", "pytorch", "source",
        "\"\"\"log(cosh(x)) * 0.8 + 0.1 * x: the log-cosh of a smooth loss, scaled,\n"
        "with a small linear term; x drawn from a normal distribution.\"\"\"\n"
        "    def forward(self, x):\n        return torch.log(torch.cosh(x)) * 0.8 + 0.1 * x\n",
        "inputs", "name", "x", "shape", 2048, 1024, "outputs", "name", "y", "shape", 2048, 1024);
    CHECK (kf_prompt_task_class (logcosh) == KF_CLASS_ELEMENTWISE);
    json_t *conv = json_pack ("{s:{s:s, s:s}}", "reference", "language", "pytorch", "source",
                              "return F.conv2d(x, self.w) + self.convert_bias");
    CHECK (kf_prompt_task_class (conv) == KF_CLASS_MATMUL);
    json_t *ln = json_pack ("{s:{s:s, s:s}}", "reference", "language", "pytorch", "source",
                            "return F.layer_norm(x, (512,))");
    CHECK (kf_prompt_task_class (ln) == KF_CLASS_ROW_REDUCTION);
    json_decref (logcosh);
    json_decref (conv);
    json_decref (ln);
    CHECK (kf_prompt_target_kind ("host", "c") == KF_TARGET_HOST);
    CHECK (kf_prompt_target_kind ("cuda:sm_90", "cuda") == KF_TARGET_CUDA);
    CHECK (kf_prompt_target_kind ("level-zero", "opencl") == KF_TARGET_INTEL);

    //  GELU on the host: no softmax rule, no GPU words anywhere in the
    //  sections; a matrix product is not called memory-bound.
    json_t *s = kf_prompt_default_sections_for ("c", "host", gelu);
    char *all = json_dumps (s, 0);
    CHECK (!s_has_ci (all, "row maximum") && !s_has_ci (all, "sum of exponentials"));
    CHECK (!s_has_ci (all, "coalesc") && !s_has_ci (all, "shared memory")
           && !s_has_ci (all, "warp") && !s_has_ci (all, "threads per block"));
    free (all);
    json_decref (s);
    s = kf_prompt_default_sections_for ("c", "host", t);
    CHECK (kf_test_has (json_string_value (json_object_get (s, "pitfalls")),
                        "Subtract the maximum of the values a sum of exponentials runs over"));
    json_decref (s);
    s = kf_prompt_default_sections_for ("c", "host", mm);
    CHECK (kf_test_has (json_string_value (json_object_get (s, "philosophy")), "bound by arithmetic"));
    CHECK (!s_has_ci (json_string_value (json_object_get (s, "philosophy")),
                      "bound by memory traffic unless"));
    json_decref (s);
    s = kf_prompt_default_sections_for ("cuda", "cuda:sm_90", t);
    CHECK (s_has_ci (json_string_value (json_object_get (s, "strategies")), "warp"));
    json_decref (s);
    //  The gradient's GPU vocabulary, in the host's words.
    const char *hint = "- Children that raised their memory access level have done better so "
                       "far (gradient +0.28 over 4 moves): consider tiling through "
                       "shared/local memory (or cache blocking on the host) so each value is "
                       "read from global memory once.\n- Moving synchronisation from none to "
                       "warp/sub-group primitives raised fitness in 3 of 4 moves.\n";
    char *h = kf_prompt_hints_for_target (hint, KF_TARGET_HOST);
    CHECK (h && !kf_test_has (h, "shared/local") && !kf_test_has (h, "warp") && kf_test_has (h, "cache blocking")
           && kf_test_has (h, "none to threads that wait for each other")
           && !kf_test_has (h, "SIMD lane operations"));
    free (h);
    //  The host's levels in plain words of what the threads do (the
    //  model in the loop could not read "cross-thread combining").
    h = kf_prompt_hints_for_target ("- Moving synchronisation from none to global coordination "
                                    "raised fitness in 2 of 3 moves.\n", KF_TARGET_HOST);
    CHECK (h && !kf_test_has (h, "cross-thread combining") && !kf_test_has (h, "global coordination")
           && kf_test_has (h, "threads sharing results through atomics or locks"));
    free (h);
    h = kf_prompt_hints_for_target (hint, KF_TARGET_CUDA);
    CHECK (h && !strcmp (h, hint));
    free (h);
    kf_prompt_in_t in = { .spec = gelu, .language = "c", .target = "host", .hints = hint };
    char *p = kf_prompt_build (&in);
    CHECK (!kf_test_has (p, "warp/sub-group") && kf_test_has (p, "## Hints from the search so far"));
    free (p);
    json_decref (scan);
    json_decref (att);
    json_decref (att2);
    json_decref (bmm_sm);
    json_decref (mm);
    json_decref (t);
    json_decref (gelu);
}

//  Generation 0: nothing asked that has no answer; siblings differ.
static void
s_generation0 (void)
{
    json_t *spec = s_gelu ();
    char *prompts[8];
    for (int slot = 0; slot < 8; slot++) {
        kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host",
                              .generation = 0, .slot = slot, .population = 8 };
        prompts[slot] = kf_prompt_build (&in);
        CHECK (!s_has_ci (prompts[slot], "last kernel"));
        CHECK (kf_test_has (prompts[slot], "## This attempt"));
        CHECK (kf_test_has (prompts[slot], "say briefly which approach you take and why"));
    }
    for (int a = 0; a < 8; a++)
        for (int b = a + 1; b < 8; b++)
            CHECK (strcmp (prompts[a], prompts[b]) != 0);
    //  Two neighbours lean different ways, and each names the other's.
    const char *lean0 = strstr (prompts[0], "This attempt's idea: ");
    const char *lean1 = strstr (prompts[1], "This attempt's idea: ");
    CHECK (lean0 && lean1 && strncmp (lean0, lean1, 40) != 0);
    CHECK (kf_test_has (prompts[0], "leave those ideas to the siblings"));
    for (int i = 0; i < 8; i++)
        free (prompts[i]);
    json_decref (spec);
}

//  Lineage: reasons, the children in the prompt, the normalised hash.
static void
s_lineage (void)
{
    char buf[400];
    json_t *c = json_pack ("{s:s, s:s}", "status", "compile_failed", "log",
                           "kernel.c: In function 'kf_forward':\nkernel.c:9:5: error: "
                           "'n' undeclared\n    9 | n++;\n");
    CHECK (!strcmp (kf_lineage_reason (c, 2.0, buf, sizeof buf),
                    "did not compile: kernel.c:9:5: error: 'n' undeclared"));
    json_decref (c);
    c = json_pack ("{s:s, s:f}", "status", "correct", "speedup", 1.2);
    CHECK (kf_test_has (kf_lineage_reason (c, 2.0, buf, sizeof buf), "regressed beyond the timing "
                                                                     "noise: 1.20x against the "
                                                                     "parent's 2.00x"));
    json_decref (c);
    c = json_pack ("{s:s, s:s}", "status", "incorrect", "detail",
                   "set 2: output 'y': 97.10% of elements within tolerance (need 99%)\nmore");
    CHECK (!strcmp (kf_lineage_reason (c, 2.0, buf, sizeof buf),
                    "wrong results: set 2: output 'y': 97.10% of elements within tolerance "
                    "(need 99%)"));
    json_decref (c);
    //  A repeat says whose source it was, and that verdict.
    c = json_pack ("{s:s, s:f, s:s}", "status", "correct", "speedup", 1.52, "detail",
                   "the same source as candidate 5 once comments and spacing are removed: "
                   "not compiled or timed again; its verdict (correct): all checks passed");
    CHECK (!strcmp (kf_lineage_reason (c, 1.0, buf, sizeof buf),
                    "repeated candidate 5's source (not judged again; its verdict: improved beyond "
                    "the timing noise: 1.52x against the parent's 1.00x)"));
    json_decref (c);

    json_t *spec = s_gelu ();
    json_t *base = s_kernel (7, "PARENT_CODE", 2.0);
    json_t *last = json_pack ("{s:i, s:s, s:s, s:s}", "id", 21, "source", "LAST_CHILD_CODE",
                              "status", "incorrect", "detail", "set 1: bad");
    json_t *children = json_pack ("[{s:i, s:i, s:s}, {s:i, s:i, s:s}]", "id", 21,
                                  "generation", 3, "reason", "wrong results: set 1: bad",
                                  "id", 19, "generation", 2, "reason",
                                  "correct but regressed: 1.20x against the parent's 2.00x");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .last = last, .children = children };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "## Recent attempts from the kernel to improve"));
    CHECK (kf_test_has (p, "- candidate 21 (generation 3): wrong results: set 1: bad"));
    CHECK (kf_test_has (p, "- candidate 19 (generation 2): correct but regressed"));
    CHECK (kf_test_has (p, "## Last kernel tried from the kernel to improve (candidate 21)"));
    CHECK (kf_test_has (p, "say briefly what limited the last kernel tried"));
    free (p);
    json_decref (children);
    json_decref (last);
    json_decref (base);
    json_decref (spec);

    //  Comments and spacing do not make a new kernel; code does.
    char a[65], b[65], d[65], e[65];
    const char *s1 = "int f (int x) {\n    return x + 1; // one\n}\n";
    const char *s2 = "/* header */ int f(int x)\n{ return x+1;\n}";
    const char *s3 = "int f (int x) {\n\treturn x + 1; /* one */\n}   \n";
    const char *s4 = "int f (int x) { return x + 2; }";
    kf_lineage_norm_hash (s1, strlen (s1), a);
    kf_lineage_norm_hash (s3, strlen (s3), b);
    kf_lineage_norm_hash (s4, strlen (s4), d);
    CHECK (!strcmp (a, b));
    CHECK (strcmp (a, d));
    //  Spacing inside tokens' neighbourhood matters ("x+1" vs "x + 1"
    //  are kept apart: only runs of white space collapse), and string
    //  literals are kept: a comment marker inside one is not a comment.
    kf_lineage_norm_hash (s2, strlen (s2), e);
    CHECK (strcmp (a, e));
    //  A directive in a comment is code: a templated kernel is not its
    //  untemplated parent, nor one with another tuning space.
    const char *t0 = "#ifndef B\n#define B 64\n#endif\nint f (void) { return B; }\n";
    const char *t1 = "/* kf-tune: B=64,128 */\n#ifndef B\n#define B 64\n#endif\n"
                     "int f (void) { return B; }\n";
    const char *t2 = "/*   kf-tune:   B=64,128 */\n#ifndef B\n#define B 64\n#endif\n"
                     "int f (void) { return B; } // tuned\n";
    const char *t3 = "// kf-tune: B=64,256\n#ifndef B\n#define B 64\n#endif\n"
                     "int f (void) { return B; }\n";
    char h0[65], h1[65], h2[65], h3[65];
    kf_lineage_norm_hash (t0, strlen (t0), h0);
    kf_lineage_norm_hash (t1, strlen (t1), h1);
    kf_lineage_norm_hash (t2, strlen (t2), h2);
    kf_lineage_norm_hash (t3, strlen (t3), h3);
    CHECK (strcmp (h0, h1) && !strcmp (h1, h2) && strcmp (h1, h3));
    const char *q1 = "char *s = \"a // b\";", *q2 = "char *s = \"a // c\";";
    kf_lineage_norm_hash (q1, strlen (q1), a);
    kf_lineage_norm_hash (q2, strlen (q2), b);
    CHECK (strcmp (a, b));
}

//  Tuning prompts.
static void
s_tuning (void)
{
    json_t *spec = s_gelu ();
    json_t *base = s_kernel (7, "PARENT_CODE", 2.0);
    json_object_set_new (base, "configs", json_pack (
        "[{s:{s:i}, s:s, s:f, s:f, s:s}, {s:{s:i}, s:s, s:f, s:f, s:s},"
        " {s:{s:i}, s:s, s:s}, {s:{s:i}, s:s, s:s}]",
        "params", "UNROLL", 1, "verdict", "correct", "speedup", 2.0, "median_ns", 1000.0,
        "fidelity", "full",
        "params", "UNROLL", 2, "verdict", "correct", "speedup", 2.6, "median_ns", 770.0,
        "fidelity", "full",
        "params", "UNROLL", 4, "verdict", "incorrect", "detail", "set 1: bad",
        "params", "UNROLL", 8, "verdict", "not_run", "skipped_reason", "over the time limit"));
    json_t *last = json_pack ("{s:i, s:s, s:s}", "id", 30, "source", "LAST_CODE", "status",
                              "correct");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .last = last, .templated = true, .tune_points = 8 };
    char *p = kf_prompt_build (&in);
    //  Swept before: named by id and figure, refined around its winner.
    CHECK (kf_test_has (p, "The kernel under \"Kernel to improve\" (candidate 7, 2.000x) is a "
                           "template already"));
    CHECK (kf_test_has (p, "not the point that won (UNROLL=2)"));
    CHECK (kf_test_has (p, "At most 8 points are built and timed"));
    CHECK (kf_test_has (p, "within the tolerance above (relative error below 0.01, 99% of elements, "
                           "cosine at least 0.99985), not the other points bit for bit"));
    CHECK (!s_has_ci (p, "threads per block"));
    CHECK (kf_test_has (p, "kf-tune: ROWS_PER_STEP="));
    //  The whole previous table, not only the winner.
    CHECK (kf_test_has (p, "measured 4 points"));
    CHECK (kf_test_has (p, "- UNROLL=1: correct, 2.000x, 1 us per call (full timing)"));
    CHECK (kf_test_has (p, "- UNROLL=2: correct, 2.600x, 0.77 us per call (full timing)"));
    CHECK (kf_test_has (p, "- UNROLL=4: incorrect: set 1: bad"));
    CHECK (kf_test_has (p, "- UNROLL=8: not run (over the time limit"));
    CHECK (!kf_test_has (p, "## This attempt"));
    free (p);
    in.target = "cuda:sm_90";
    in.language = "cuda";
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "threads per block"));
    free (p);
    json_decref (last);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    s_best ();
    s_facts ();
    s_target ();
    s_flags ();
    s_classes ();
    s_generation0 ();
    s_lineage ();
    s_tuning ();
    return kf_test_done ("test_prompt_rules");
}
