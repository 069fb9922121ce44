/*  test_epilogue_round16.c - what round 16 of the model in the loop
 *  (docs/search.md "Sixteenth round") found in the prompts of
 *  tests/fixtures/pytorch/bmm_bt_softmax.py, softmax(q @ k^T / 8) over 8
 *  batches of 512 x 512 scores, K = 64:
 *
 *  1. "68% of one core's peak" counted the product's flops alone: the
 *     softmax after it is counted per output (one exp, a maximum and a
 *     sum pass, a multiply, the / 8) and its time estimated at the FMA
 *     peak, with the product's share of the estimated floor, in the
 *     Target section, the position line and the meta round's outcomes;
 *  2. the product's ideas spoke of a "bias, activation" epilogue and of
 *     blocking over k at K = 64: the epilogue idea names the softmax,
 *     blocking leaves k alone where a tile's rows over all of k fit half
 *     of L1, and the Target section sets one product's working set
 *     against the host's L1d and L2;
 *  3. "an approximation of exp ... with relative error well below 0.001"
 *     for an output that is a softmax, whose probabilities tolerate about
 *     half the relative bound in each exp;
 *  4. the same for round 17's linear_layernorm.py: a layer norm after
 *     nn.Linear is counted (two sums, a subtraction, a multiply; no exp)
 *     and its idea names it.
 */
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include "kf_file.h"
#include "kf_str.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

//  The fixture as kfctl submits it (op "pytorch"), with K = KDIM and the
//  forward's return expression RET (NULL: the fixture's own).
static json_t *
s_task (int kdim, const char *ret)
{
    size_t n = 0;
    char *src = kf_file_read ("tests/fixtures/pytorch/bmm_bt_softmax.py", 1 << 20, &n);
    CHECK (src != NULL);
    if (!src)
        src = strdup ("");
    if (ret) {
        char *at = strstr (src, "return torch.softmax");
        char *eol = at ? strchr (at, '\n') : NULL;
        if (at && eol) {
            char *next = kf_strdupf ("%.*sreturn %s%s", (int) (at - src), src, ret, eol);
            free (src);
            src = next;
        }
    }
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i,i], s:s}, {s:s, s:[i,i,i], s:s}],"
                              " s:[{s:s, s:[i,i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "bmm_bt_softmax", "op", "pytorch", "description", "scores",
                              "inputs", "name", "in0", "shape", 8, 512, kdim, "dtype", "f32",
                              "name", "in1", "shape", 8, 512, kdim, "dtype", "f32", "outputs",
                              "name", "out0", "shape", 8, 512, 512, "dtype", "f32", "reference",
                              "language", "pytorch", "source", src, "tolerance", "rtol", 0.01,
                              "atol", 1e-5);
    free (src);
    return spec;
}

//  Round 16's host: 228 GFLOP/s on one core, 400 on both, 48 KiB L1d, 1
//  MiB L2.
static json_t *
s_device (void)
{
    return json_pack ("{s:s, s:f, s:f, s:i, s:i, s:i, s:f}", "name", "host", "peak_gflops",
                      400.0, "peak_gflops_one_core", 228.0, "cores", 2, "l1d_bytes", 49152,
                      "l2_bytes", 1048576, "clock_mhz", 3000.0);
}

static char *
s_text (void (*write) (FILE *, json_t *, json_t *), json_t *spec, json_t *d)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    write (f, spec, d);
    fclose (f);
    return text;
}

static void
test_count (void)
{
    json_t *spec = s_task (64, NULL), *d = s_device ();
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm));
    CHECK (!strcmp (fm.row, "softmax") && fm.row_outer);
    //  The / 8; not the sign of dim=-1.
    CHECK (fm.epi_ops == 1);
    kf_epilogue_t e;
    double product, epi;
    CHECK (kf_prompt_epilogue_ms (spec, d, &e, &product, &epi));
    CHECK (e.ops == 5 && e.calls == 1 && e.vector_ops == 5 + KF_PROMPT_EXP_OPS);
    CHECK (fabs (product - 2.0 * 8 * 512 * 512 * 64 / 228e6) < 1e-9);
    CHECK (fabs (epi - 8.0 * 512 * 512 * 15 * 2 / 228e6) < 1e-9);
    char *p = s_text (kf_prompt_task_product_line, spec, d);
    printf ("%s", p);
    CHECK (kf_test_has (p, "Epilogue: the softmax after the product is not in that count: "
                           "per output element it does one exp, a maximum and a sum pass over "
                           "its row and a multiply by the row's reciprocal sum, and 1 operation "
                           "forward writes after the product besides: 5 operations and 1 call "
                           "in all, each call taken as about 10 operations an element"));
    CHECK (kf_test_has (p, "no exp rate is measured on this host"));
    CHECK (kf_test_has (p, "about 15 an element over 2097152 outputs, each operation one lane "
                           "of a vector instruction: about 0.276 ms at one core's measured FMA "
                           "peak (228 GFLOP/s"));
    CHECK (kf_test_has (p, "a row of 512 outputs is 2048 bytes and stays in L1"));
    CHECK (kf_test_has (p, "With the product's 1.18 ms at one core's FMA peak, the estimated "
                           "one-core "
                           "floor is 1.45 ms, of which the product is 81%: a kernel at that "
                           "floor would show 81% of one core's peak in the product's figures, "
                           "and the percent of the peak given for a kernel excludes this work."));
    //  The working set against the caches, and no blocking over k.
    CHECK (kf_test_has (p, "Working set of one product (one batch): the first operand in0 (q in "
                           "its code) is M x K = 512 x 64, 128 KiB; the second in1 (k in its "
                           "code) N x K = 512 x 64, 128 KiB; its output M x N = 512 x 512, 1.0 "
                           "MiB. Against this host's L1d of 48 KiB and L2 of 1.0 MiB: both "
                           "operands fit L2 together with room to spare"));
    CHECK (kf_test_has (p, "a row along k is 256 bytes, so a 32 x 32 tile's rows of both over "
                           "all of k (16 KiB) fit half of L1 and blocking over k has nothing "
                           "to gain."));
    free (p);
    //  The position line of candidate 18 (1722.8 us): the product's
    //  shares, then the softmax said to be outside them.
    json_t *k = json_pack ("{s:f, s:f, s:s}", "candidate_ns", 1722800.0, "reference_ns",
                           84007600.0, "source", "void kf_forward (void) {}");
    json_t *hw = json_pack ("{s:[O]}", "devices", d);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_position_line (f, k, spec, hw, KF_TARGET_HOST);
    fclose (f);
    printf ("%s", text);
    CHECK (kf_test_has (text, "against one core's peak (228.0 GFLOP/s) this kernel is at 68%"));
    CHECK (kf_test_has (text, "derived from the shapes (the task states no count). Those shares "
                              "are the product's alone: the softmax after it is not counted "
                              "(estimated at 0.276 ms of one core, the Target section's Epilogue "
                              "line). With the product's 1.18 ms at one core's FMA peak, the "
                              "estimated "
                              "one-core floor is 1.45 ms, of which the product is 81%"));
    CHECK (!kf_test_has (text, "the other work is not counted"));
    free (text);
    //  A product with nothing after it keeps the old words.
    json_t *plain = s_task (64, "torch.bmm(q, k.transpose(1, 2))");
    CHECK (!kf_prompt_epilogue (plain, &e));
    f = open_memstream (&text, &size);
    kf_prompt_position_line (f, k, plain, hw, KF_TARGET_HOST);
    fclose (f);
    CHECK (kf_test_has (text, "the other work is not counted)."));
    CHECK (!kf_test_has (text, "Those shares"));
    free (text);
    //  Other spellings: the method form, an @ with a scale after it.
    json_decref (plain);
    plain = s_task (64, "(q @ k.transpose(-2, -1) / 8.0).softmax(dim=-1)");
    CHECK (kf_prompt_formula (plain, &fm) && !strcmp (fm.row, "softmax") && fm.epi_ops == 1
           && fm.row_outer);
    json_decref (plain);
    plain = s_task (64, "torch.tanh(q @ k.transpose(1, 2) * 0.125 + 1)");
    CHECK (kf_prompt_formula (plain, &fm) && !*fm.row && fm.epi_ops == 2
           && fm.after_product == 1);
    CHECK (kf_prompt_epilogue (plain, &e) && e.ops == 2 && e.calls == 1);
    json_decref (plain);
    //  A softmax whose result is used again is not the output.
    plain = s_task (64, "torch.softmax(q @ k.transpose(1, 2), dim=-1) * 2");
    CHECK (kf_prompt_formula (plain, &fm) && !strcmp (fm.row, "softmax") && !fm.row_outer);
    json_decref (plain);
    json_decref (hw);
    json_decref (k);
    json_decref (d);
    json_decref (spec);
}

//  The index of the idea holding WORD, or N.
static size_t
s_index (const char *const *ideas, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++)
        if (strstr (ideas[i], word))
            return i;
    return n;
}

static void
test_ideas (void)
{
    json_t *spec = s_task (64, NULL);
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    for (size_t i = 0; i < n; i++)
        printf ("idea %zu: %s\n", i + 1, ideas[i]);
    CHECK (s_index (ideas, n, "bias, activation") == n);
    size_t epi = s_index (ideas, n, "by fusing the epilogue (the softmax over each row)");
    CHECK (epi < n && kf_prompt_idea_feature (ideas[epi]) == KF_IDEA_EPILOGUE);
    if (epi < n) {
        CHECK (strstr (ideas[epi], "while they sit in registers"));
        CHECK (strstr (ideas[epi], "the row's maximum and sum kept in one pass"));
        CHECK (strstr (ideas[epi], "an exp cheaper than libm's that stays within the task's "
                                   "tolerance (rtol 0.01, atol 1e-05)"));
    }
    CHECK (s_index (ideas, n, "over k") == n || s_index (ideas, n, "not over k") < n);
    size_t block = s_index (ideas, n, "by cache blocking");
    CHECK (block < n && strstr (ideas[block], "by cache blocking over the rows of both, not "
                                              "over k: a row of in0 or in1 along k is 256 "
                                              "bytes (K = 64)"));
    CHECK (block < n && kf_prompt_idea_feature (ideas[block]) == KF_IDEA_BLOCK);
    json_decref (spec);
    //  At K = 512 a tile's rows over all of k (128 KiB) do not fit L1:
    //  blocking over k stays.
    spec = s_task (512, NULL);
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_index (ideas, n, "by cache blocking over the rows of both and over k") < n);
    json_t *d = s_device ();
    char *p = s_text (kf_prompt_task_product_line, spec, d);
    //  Round 17: 128 KiB beside a 48 KiB L1 was "more than half of L1".
    CHECK (kf_test_has (p, "over all of k (128 KiB) do not fit L1: blocking over k keeps a "
                           "slice of them there."));
    free (p);
    json_decref (d);
    json_decref (spec);
    //  A product whose layout is not read (einsum) gets the class list,
    //  with the same two texts.
    spec = s_task (64, "torch.softmax(torch.einsum('bik,bjk->bij', q, k) / 8, dim=-1)");
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_index (ideas, n, "bias, activation") == n
           && s_index (ideas, n, "(the softmax over each row)") < n);
    CHECK (s_index (ideas, n, "all three loops") == n && s_index (ideas, n, "not over k") < n);
    json_decref (spec);
}

static void
test_meta (void)
{
    json_t *spec = s_task (64, NULL), *d = s_device ();
    json_t *run = json_pack ("{s:s, s:s, s:O}", "language", "c", "target", "host", "spec",
                             spec);
    json_t *hw = json_pack ("{s:[O]}", "devices", d);
    json_t *outcomes = json_pack ("[{s:i, s:i, s:i, s:s, s:f, s:s, s:f, s:i}]", "candidate_id",
                                  4, "generation", 0, "prompt_version", 1, "status", "correct",
                                  "speedup", 40.92, "fidelity", "full", "candidate_ns",
                                  2053000.0, "features", 0);
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "A product.",
                                  "strategies", "Tile it.", "pitfalls", "None.", "analysis",
                                  "Count.");
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3, .hardware = hw };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 1, NULL, NULL, NULL, NULL);
    CHECK (kf_test_has (p, "counting the product's 2*M*N*K from the shapes; the softmax after "
                           "the product is not counted (estimated at 0.276 ms of one core from "
                           "its 15 operations an element, an exp as 10; the product is 81% of "
                           "the estimated 1.45 ms one-core floor)"));
    free (p);
    json_decref (hw);
    json_decref (sections);
    json_decref (outcomes);
    json_decref (run);
    json_decref (d);
    json_decref (spec);
}

static char *
s_tolerance (json_t *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_tolerance_section (f, spec, NULL);
    fclose (f);
    return text;
}

static void
test_tolerance (void)
{
    json_t *spec = s_task (64, NULL);
    char *p = s_tolerance (spec);
    CHECK (kf_test_has (p, "So: the output is a softmax, e^(x - max) / sum over its row. An "
                           "exp with relative error up to e moves each probability by at most "
                           "about 2e relative"));
    CHECK (kf_test_has (p, "an exp approximation with relative error below 0.0025 (rtol / 4"));
    CHECK (!kf_test_has (p, "well below 0.001"));
    free (p);
    json_decref (spec);
    //  A softmax whose result is scaled again keeps the general rule.
    spec = s_task (64, "torch.softmax(q @ k.transpose(1, 2), dim=-1) * 2");
    p = s_tolerance (spec);
    //  Round 17: the budget as a number (generation 0 kept libm's 1.1e-6
    //  against 1e-2 under "well below 0.001").
    CHECK (!kf_test_has (p, "well below 0.001"));
    CHECK (kf_test_has (p, "whose own relative error is up to 0.001 (rtol / 10, about 10 correct "
                           "bits of a float's 24) passes with a tenfold margin"));
    CHECK (kf_test_has (p, "libm's accuracy (about 1e-7) is 10000 times tighter than that"));
    CHECK (kf_test_has (p, "A reordered summation is fine too; lower-precision"));
    CHECK (!kf_test_has (p, "the output is a softmax"));
    free (p);
    json_decref (spec);
}

static void
test_layer_norm (void)
{
    size_t n = 0;
    char *src = kf_file_read ("tests/fixtures/pytorch/linear_layernorm.py", 1 << 20, &n);
    CHECK (src != NULL);
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                              " {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                              " s:{s:f, s:f}}", "name", "linear_layernorm", "op", "pytorch",
                              "description", "a layer", "inputs", "name", "in0", "shape", 2048,
                              512, "dtype", "f32", "name", "linear.weight", "shape", 256, 512,
                              "dtype", "f32", "name", "linear.bias", "shape", 256, "dtype", "f32",
                              "outputs", "name", "out0", "shape", 2048, 256, "dtype", "f32",
                              "reference", "language", "pytorch", "source", src ? src : "",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    free (src);
    json_t *d = s_device ();
    kf_epilogue_t e;
    CHECK (kf_prompt_epilogue (spec, &e) && !strcmp (e.row, "layer_norm") && e.ops == 4
           && e.calls == 0 && e.vector_ops == 4);
    char *p = s_text (kf_prompt_epilogue_line, spec, d);
    printf ("%s", p);
    CHECK (kf_test_has (p, "Epilogue: the layer_norm after the product is not in that count: "
                           "per output element it does a sum and a sum-of-squares pass over "
                           "its row (its mean and variance), a subtraction of the mean and a "
                           "multiply by the row's reciprocal standard deviation: 4 operations "
                           "in all, so about 4 an element over 524288 outputs"));
    CHECK (!kf_test_has (p, "each call taken"));
    free (p);
    //  Round 17: the meta round's brief spoke of "an exp as 10" for it.
    p = s_text (kf_prompt_epilogue_brief, spec, d);
    CHECK (kf_test_has (p, "from its 4 operations an element; the product is"));
    CHECK (!kf_test_has (p, "an exp"));
    free (p);
    size_t count = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    size_t epi = s_index (ideas, count, "by fusing the epilogue (the layer_norm over each row)");
    CHECK (epi < count && s_index (ideas, count, "bias, activation") == count);
    if (epi < count) {
        printf ("%s\n", ideas[epi]);
        CHECK (strstr (ideas[epi], "keep each row's sum and sum of squares") && !strstr (ideas[epi],
                                                                                        "exp"));
    }
    p = s_tolerance (spec);
    CHECK (!kf_test_has (p, "softmax"));
    free (p);
    json_decref (d);
    json_decref (spec);
}

int
main (void)
{
    test_count ();
    test_ideas ();
    test_meta ();
    test_tolerance ();
    test_layer_norm ();
    return kf_test_done ("test_epilogue_round16");
}
