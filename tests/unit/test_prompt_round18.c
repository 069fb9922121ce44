/*  test_prompt_round18.c - what round 18 of the model in the loop found
 *  in the prompts of atan2_hypot_mix (tests/fixtures/pytorch):
 *
 *  1. torch.atan2 was not read as a libm call: the philosophy said "the
 *     formula here calls no exp, tanh, erf or log. The work is bound by
 *     memory traffic", the strategies told the compiler to vectorise a
 *     plain loop (GCC makes a scalar atan2f call of each element), and
 *     no line costed the calls;
 *  2. the tolerance section named "exp, log, tanh, erf" as what an
 *     approximation may replace, not the task's own function;
 *  3. the saving of streaming stores by the measured copies (11%) and by
 *     the cold floors (25%) stood side by side with no word on which to
 *     take for what;
 *
 *  and in those of mm_plain_rmsnorm:
 *
 *  4. y.pow(2) was read as a libm call (524288 of them, "164% of that
 *     bound", "compute pow in SIMD registers ... by a polynomial");
 *  5. the RMS norm's mean over each row was not seen: the epilogue's
 *     fusion was told to finish each tile in registers;
 *  6. the working set called b, stored [K][N], "N x K" with "a row along
 *     k" of both operands.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../common/kf_json.h"
#include "../../common/kf_str.h"
#include "../kf_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *s_src =
    "import torch\nimport torch.nn as nn\n\nrows = 4096\ncols = 2048\n\n\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n\n"
    "    def forward(self, a, b):\n"
    "        return torch.atan2(a, b) * torch.sqrt(a * a + b * b + 1.0)\n\n\n"
    "def get_inputs():\n    return [torch.randn(rows, cols), torch.randn(rows, cols) + 0.5]\n";

static const char *s_mm_src =
    "import torch\nimport torch.nn as nn\n\nrows = 1024\ninner = 768\ncols = 512\n\n\n"
    "class Model(nn.Module):\n"
    "    def __init__(self):\n        super().__init__()\n"
    "        self.gain = nn.Parameter(1.0 + 0.1 * torch.randn(cols))\n\n"
    "    def forward(self, a, b):\n"
    "        y = a @ b\n"
    "        scale = torch.rsqrt(y.pow(2).mean(dim=-1, keepdim=True) + 1e-6)\n"
    "        return y * scale * self.gain\n\n\n"
    "def get_inputs():\n    return [torch.randn(rows, inner), torch.randn(inner, cols)]\n";

static json_t *
s_mm_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "mm_plain_rmsnorm", "op", "mm_plain_rmsnorm", "description",
                      "a product, then an RMS norm", "inputs", "name", "in0", "shape", 1024,
                      768, "dtype", "f32", "name", "in1", "shape", 768, 512, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 1024, 512, "dtype", "f32",
                      "reference", "language", "pytorch", "source", s_mm_src, "tolerance",
                      "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "atan2_hypot_mix", "op", "atan2_hypot_mix", "description",
                      "an angle times a softened length", "inputs", "name", "in0", "shape",
                      4096, 2048, "dtype", "f32", "name", "in1", "shape", 4096, 2048, "dtype",
                      "f32", "outputs", "name", "out0", "shape", 4096, 2048, "dtype", "f32",
                      "reference", "language", "pytorch", "source", s_src, "tolerance", "rtol",
                      0.01, "atol", 1e-5);
}

//  Round 18's exec host, as its worker reported it, with the run's TASK.
static json_t *
s_hw (json_t *task)
{
    json_t *hw = json_pack (
        "{s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:f, s:I, s:f,"
        " s:f, s:i, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f}], s:O}",
        "backend", "host", "arch", "x86_64", "devices", "name", "AMD EPYC", "cores", 2,
        "copy_bandwidth_gbs", 64.1, "peak_gflops", 459.2, "peak_source", "avx512f",
        "peak_gflops_one_core", 227.9, "peak_gflops_all_threads", 400.4,
        "thread_start_join_us", 25.2, "copy_one_core_gbs", 42.7, "copy_one_core_traffic_gbs",
        64.1, "copy_stream_one_core_gbs", 54.0, "copy_one_core_bytes", (json_int_t) 33554432,
        "clock_mhz", 2096.0, "clock_mhz_measured", 3624.9, "logical_cpus", 2,
        "physical_cores", 2, "threads_per_core", 1, "read_cold_one_core_gbs", 46.4,
        "read_cold_all_cores_gbs", 86.2, "l1d_bytes", 49152.0, "l2_bytes", 1048576.0,
        "l1d_ways", 12.0, "l1d_line_bytes", 64.0, "copy_stream_all_cores_gbs", 71.3, "task",
        task);
    return hw;
}

static char *
s_text (int which, json_t *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    if (which == 0) {
        json_t *sections = kf_prompt_default_sections_for ("c", "host", spec);
        fprintf (f, "%s\n%s", kf_jstr (sections, "philosophy"), kf_jstr (sections, "strategies"));
        json_decref (sections);
    }
    else if (which == 1) {
        json_t *hw = s_hw (spec);
        kf_prompt_target_section (f, "host", "c", hw, NULL);
        json_decref (hw);
    }
    else
        kf_prompt_tolerance_section (f, spec, NULL);
    fclose (f);
    return text;
}

int
main (void)
{
    json_t *spec = s_spec ();
    //  1. atan2 is a libm call: costly math, counted, costed.
    CHECK (kf_prompt_costly_math (spec));
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm) && fm.calls == 1 && strstr (fm.names, "atan2"));
    char *p = s_text (0, spec);
    CHECK (p && !strstr (p, "calls no exp"));
    CHECK (p && !strstr (p, "The work is bound by memory traffic"));
    CHECK (kf_test_has (p, "atan2f and every other libm function are not"));
    CHECK (kf_test_has (p, "nor is sqrtf, which may set errno here"));
    //  ... nor does an attribute, a pragma or a builtin change that (the
    //  meta round's false claim; kf_meta_claims.h).
    CHECK (kf_test_has (p, "neither __attribute__((optimize(\"no-math-errno\"))), #pragma GCC "
                           "optimize nor __builtin_sqrtf changes that with this compiler"));
    free (p);
    p = s_text (1, spec);
    CHECK (kf_test_has (p, "  Calls of atan2: the formula makes 1 libm call per output element"));
    CHECK (kf_test_has (p, "compute atan2 in SIMD registers instead"));
    //  3. The two savings told apart.
    CHECK (kf_test_has (p, "streaming stores save about 11% of the time here"));
    CHECK (kf_test_has (p, " The two savings differ because the cold estimates count bytes alone"));
    if (getenv ("KF_TEST_SHOW"))
        fputs (p ? p : "", stdout);
    free (p);
    //  The position line says why compute is not known.
    {
        json_t *hw = s_hw (spec);
        json_t *k = json_pack ("{s:f, s:f, s:{s:f, s:f, s:f}}", "candidate_ns", 2.9e6,
                               "reference_ns", 8.98e8, "bandwidth", "bytes", 100663296.0,
                               "candidate_gbs", 34.7, "copy_gbs", 64.1);
        char *text = NULL;
        size_t size = 0;
        FILE *f = open_memstream (&text, &size);
        if (f) {
            kf_prompt_position_line (f, k, spec, hw, KF_TARGET_HOST);
            fclose (f);
        }
        CHECK (kf_test_has (text, "compute: not known (the formula calls atan2, whose operations "
                                  "depend on how the kernel computes it"));
        free (text);
        json_decref (k);
        json_decref (hw);
    }
    //  2. The task's own function named in the budget.
    p = s_text (2, spec);
    CHECK (kf_test_has (p, "A function approximation (this task's atan2, or any other: exp, "
                           "log, tanh, erf, a reciprocal or square root) whose own relative "
                           "error is up to 0.001"));
    free (p);
    //  A task of no libm call keeps the plain list, and its philosophy.
    json_object_set_new (json_object_get (spec, "reference"), "source",
                         json_string ("class Model(nn.Module):\n    def forward(self, a, b):\n"
                                      "        return a * b + 1.0\n"));
    CHECK (!kf_prompt_costly_math (spec));
    p = s_text (2, spec);
    //  Round 36: nor any approximation to make.
    //  Round 51: and, summing nothing, no order of sums to speak of.
    CHECK (kf_test_has (p, "So: this task calls no function, takes no root or reciprocal and "
                           "sums nothing, so it has no approximation to make"));
    CHECK (p && !strstr (p, "order of its sums") && !strstr (p, "reordered summation"));
    CHECK (p && !strstr (p, "A function approximation (") && !strstr (p, "erfc(-x)"));
    free (p);
    p = s_text (0, spec);
    CHECK (kf_test_has (p, "calls no exp, tanh, erf or log"));
    free (p);
    json_decref (spec);

    spec = s_mm_spec ();
    //  4. A square is a product, no libm call.
    CHECK (kf_prompt_formula (spec, &fm) && fm.calls == 0 && fm.after_product == 0);
    CHECK (!strstr (fm.names, "pow"));
    //  5. The row's mean is a row function.
    CHECK (!strcmp (fm.row, "mean"));
    //  ... over the last dimension only: a mean over another dimension or
    //  the whole tensor is no row function (round 18's open item).
    const char *means[][2] = { { "mean(-1, keepdim=True)", "mean" },
                               { "mean( dim = -1 )", "mean" },
                               { "mean(axis=-1)", "mean" },
                               { "mean(dim=0, keepdim=True)", "" },
                               { "mean()", "" } };
    for (size_t i = 0; i < sizeof means / sizeof means[0]; i++) {
        const char *at = strstr (s_mm_src, "mean(dim=-1, keepdim=True)");
        char *src = kf_strdupf ("%.*s%s%s", (int) (at - s_mm_src), s_mm_src, means[i][0],
                                at + strlen ("mean(dim=-1, keepdim=True)"));
        json_t *other = s_mm_spec ();
        json_object_set_new (json_object_get (other, "reference"), "source", json_string (src));
        kf_formula_t mf;
        bool read = kf_prompt_formula (other, &mf);
        printf ("%s: row function '%s'\n", means[i][0], read ? mf.row : "(not read)");
        CHECK (read && !strcmp (mf.row, means[i][1]));
        json_decref (other);
        free (src);
    }
    p = s_text (1, spec);
    CHECK (p && !strstr (p, "Calls of pow"));
    CHECK (p && !strstr (p, "libm call (pow)"));
    CHECK (kf_test_has (p, "the row's mean and its factor or shift after the product are not in that "
                           "count: per output element it does a pass over its row for the "
                           "row's mean"));
    //  6. Each operand by its own layout.
    CHECK (kf_test_has (p, "the second in1 (b in its code) is stored K x N = 768 x 512 (along "
                           "n), 1.5 MiB"));
    CHECK (kf_test_has (p, "a 32 x 32 tile's operands over all of k, 32 rows of the first along "
                           "k (3072 bytes each) and 32 columns of the second (128 bytes of each "
                           "of its 768 rows along n, 2048 bytes apart), take 192 KiB, do not fit "
                           "L1"));
    CHECK (p && !strstr (p, "N x K = 512 x 768"));
    //  What reads and streaming writes reach on all cores together.
    CHECK (kf_test_has (p, "every logical CPU at once, each copying its own cold share with "
                           "streaming stores, 71.3 GB/s read plus written"));
    //  The L1's geometry, from which the sets a panel falls in follow.
    CHECK (kf_test_has (p, "48 KiB L1d (12-way, 64 sets of 64-byte lines: addresses 4 KiB "
                           "apart fall in one set, so at most 12 lines at that stride stay in "
                           "L1 at once)"));
    if (getenv ("KF_TEST_SHOW"))
        fputs (p ? p : "", stdout);
    free (p);
    char *idea = kf_prompt_epilogue_idea (spec);
    CHECK (kf_test_has (idea, "no element can be finished before its whole row's sum is known"));
    CHECK (idea && !strstr (idea, "while they sit in registers, with the scaling"));
    free (idea);
    //  7. A product's threads attempt in generation 0 is told to build on
    //  a register tile, not on the simplest vectorised form (round 18:
    //  such a base re-read b from L2 for every row, 2-3 times too slow).
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *threads = NULL;
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS)
            threads = ideas[i];
    CHECK (threads != NULL);
    json_t *plan = json_pack ("{s:s}", "mine", threads ? threads : "");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 1, .population = 3, .ideas = plan };
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "No kernel exists yet for this idea to build on: first write a sound "
                           "vectorised product (a small register tile of outputs held in vector "
                           "registers over k"));
    CHECK (p && !strstr (p, "the simplest correct vectorised form"));
    free (p);
    json_decref (plan);
    json_decref (spec);
    return kf_test_done ("test_prompt_round18");
}
