/*  test_round30.c - what round 30 of the model in the loop (issue 15,
 *  docs/search.md "Thirtieth round") found in a product's prompts:
 *
 *  1. F.normalize(a @ w.t(), dim=1), each row of the product scaled to
 *     unit length, was not read as a row's epilogue: its fusion idea
 *     said "(bias, activation)" three prompts running;
 *  2. the threads idea offered column blocks and row blocks as equals,
 *     where column blocks split each row's sum of squares across threads;
 *  3. threads were handed from the one-thread outer-product kernel
 *     (candidate 6) while the outer product from the threaded kernel
 *     (candidate 5) was in flight: two tries of one kernel;
 *  4. candidate 22's sweep, timed while other processes took 59-72% of
 *     the CPUs, was taken as "none faster than its own defaults" and not
 *     swept again (the plan now sweeps such a template once more:
 *     kf_retune_sweep_busy; test_search_reuse where the load makes one);
 *  5. candidate 7, handed cheaper math over a parent with a polynomial,
 *     cut it from 21 to 17 instructions a vector (16 to 12 vector
 *     arithmetic calls as written), and read "Handed this idea, not seen
 *     done": its features changed only by streaming stores;
 *  6. (round 31) logsumexp(a @ w.t(), dim=1), each row of the product
 *     reduced to one value, read no compute floor and no epilogue: the
 *     product's shape was taken from the output's, [512].
 */
#include "../../coordinator/kf_prompt_changed.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_credit.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_retune.h"
#include "../../coordinator/kf_search_idea.h"
#include "../../common/kf_json.h"
#include "../../common/kf_str.h"
#include "../kf_test.h"
#include "../kf_test_plan.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The round's fixture (tests/fixtures/pytorch/mm_bt_rownorm.py) with
//  forward's return line RET and an output of RANK dimensions.
static json_t *
s_spec (const char *ret, int rank)
{
    char *src = kf_strdupf ("import torch\nimport torch.nn as nn\nimport torch.nn.functional "
                            "as F\n\n\nclass Model(nn.Module):\n"
                            "    def __init__(self):\n        super().__init__()\n\n"
                            "    def forward(self, a, w):\n        return %s\n\n\n"
                            "def get_inputs():\n    return [torch.randn(384, 512), "
                            "torch.randn(768, 512) / 512 ** 0.5]\n", ret);
    json_t *out = rank == 2 ? json_pack ("[i,i]", 384, 768) : json_pack ("[i,i,i]", 2, 192, 768);
    json_t *spec = json_pack ("{s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                              " s:[{s:s, s:o, s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm_bt_rownorm", "op", "mm_bt_rownorm", "inputs", "name",
                              "a", "shape", 384, 512, "dtype", "f32", "name", "w", "shape", 768,
                              512, "dtype", "f32", "outputs", "name", "out0", "shape", out,
                              "dtype", "f32", "reference", "language", "pytorch", "source", src,
                              "tolerance", "rtol", 1e-3, "atol", 1e-5);
    free (src);
    return spec;
}

static bool
s_row_is (const char *ret, int rank, const char *row)
{
    json_t *spec = s_spec (ret, rank);
    kf_formula_t fm;
    bool ok = kf_prompt_formula (spec, &fm) && fm.product && !strcmp (fm.row, row);
    json_decref (spec);
    return ok;
}

static void
test_normalize_read (void)
{
    //  1. The round's form, and the other ways to say the last dimension.
    CHECK (s_row_is ("F.normalize(a @ w.t(), dim=1)", 2, "normalize"));
    CHECK (s_row_is ("F.normalize(a @ w.t())", 2, "normalize"));
    CHECK (s_row_is ("F.normalize(a @ w.t(), p=2.0, dim=-1, eps=1e-12)", 3, "normalize"));
    CHECK (s_row_is ("F.normalize(a @ w.t(), 2, -1)", 3, "normalize"));
    //  Not a row's length: another dimension, another norm.
    CHECK (s_row_is ("F.normalize(a @ w.t(), dim=0)", 2, ""));
    CHECK (s_row_is ("F.normalize(a @ w.t(), dim=1)", 3, ""));
    CHECK (s_row_is ("F.normalize(a @ w.t(), p=1, dim=1)", 2, ""));
}

static void
test_normalize_ideas (void)
{
    json_t *spec = s_spec ("F.normalize(a @ w.t(), dim=1)", 2);
    char *idea = kf_prompt_epilogue_idea (spec);
    if (getenv ("KF_TEST_SHOW"))
        printf ("idea: %s\n", idea ? idea : "(none)");
    CHECK (idea && !strstr (idea, "bias"));
    CHECK (kf_test_has (idea, "the row's length and its factor"));
    CHECK (kf_test_has (idea, "fold each tile into its rows' sums of squares"));
    CHECK (kf_test_has (idea, "no element can be finished before its whole row's sum of squares "
                              "is known"));
    free (idea);
    //  2. Threads by row blocks, each owning whole rows.
    char *threads = kf_prompt_epilogue_threads_idea (spec, "x", "W");
    if (getenv ("KF_TEST_SHOW"))
        printf ("threads: %s\n", threads ? threads : "(none)");
    CHECK (kf_test_has (threads, "by row blocks of the output split across threads, each thread "
                                 "owning whole rows over all 768 columns"));
    CHECK (kf_test_has (threads, "its 1/T of x and all of W"));
    free (threads);
    //  The task's whole list carries both, and no general text for them.
    size_t n = 0;
    const char *const *list = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    int row_threads = 0, fused = 0;
    for (size_t i = 0; list && i < n; i++) {
        if (getenv ("KF_TEST_SHOW"))
            printf ("list %zu: %s\n", i, list[i]);
        CHECK (!strstr (list[i], "(bias, activation)"));
        row_threads += strstr (list[i], "by row blocks of the output") != NULL;
        fused += strstr (list[i], "into its rows' sums of squares") != NULL;
    }
    CHECK (n > 0 && row_threads == 1 && fused == 1);
    //  The split clause says why.
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_epilogue_split (f, spec);
    fclose (f);
    CHECK (kf_test_has (text, "by column blocks the threads would combine each row's partial "
                              "sums of squares across threads"));
    free (text);
    //  The Target section's Epilogue line now costs it beside the
    //  product's floor (1.38 ms at the round's one-core peak).
    json_t *d = json_pack ("{s:f}", "peak_gflops_one_core", 218.0);
    text = NULL;
    f = open_memstream (&text, &size);
    kf_prompt_epilogue_line (f, spec, d);
    fclose (f);
    if (getenv ("KF_TEST_SHOW"))
        printf ("epilogue line: %s\n", text);
    CHECK (kf_test_has (text, "Epilogue: "));
    kf_epilogue_t e;
    double product = 0, epi = 0;
    CHECK (kf_prompt_epilogue_ms (spec, d, &e, &product, &epi) && product > 1.3 && product < 1.5
           && epi > 0 && epi < product);
    free (text);
    json_decref (d);
    json_decref (spec);
    //  A product with no row's epilogue keeps the general threads text.
    spec = s_spec ("a @ w.t()", 2);
    CHECK (!kf_prompt_epilogue_threads_idea (spec, "x", "W"));
    json_decref (spec);
}

#define S_BIT(f) (1u << (f))

//  3. The round's candidates 5, 6 and 12, their features as stored.
static void
test_crossed (void)
{
    json_t *spec = s_spec ("F.normalize(a @ w.t(), dim=1)", 2);
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t threads = kf_test_plan_index (ideas, n, KF_IDEA_THREADS);
    size_t outer = kf_test_plan_index (ideas, n, KF_IDEA_OUTER);
    CHECK (threads < n && outer < n);
    if (threads >= n || outer >= n) {
        json_decref (spec);
        return;
    }
    unsigned common = S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_MICRO) | S_BIT (KF_IDEA_BLOCK)
                      | S_BIT (KF_IDEA_UNROLL);
    unsigned f5 = common | S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_ACCUMULATORS);
    unsigned f6 = common | S_BIT (KF_IDEA_OUTER) | S_BIT (KF_IDEA_PACK)
                  | S_BIT (KF_IDEA_EPILOGUE);
    //  Candidate 12 (generation 1, in flight): the outer product from 5.
    json_t *rows = json_pack ("[{s:i, s:i, s:i, s:i, s:I, s:s, s:s, s:s, s:b}]", "id", 12,
                              "generation", 1, "slot", 2, "parent_id", 5, "parent_features",
                              (json_int_t) f5, "phase", "search", "generator", "model", "idea",
                              ideas[outer], "pending", 1);
    kf_elite_t elites[2] = { { .candidate_id = 5, .speedup = 66.48 },
                             { .candidate_id = 6, .speedup = 50.36 } };
    unsigned features[2] = { f5, f6 };
    kf_search_idea_known_t known;
    CHECK (kf_search_idea_known_read (rows, ideas, n, elites, 2, &elites[1], 2, 0, &known) == 0);
    //  Generation 2, attempt 1 leans towards threads, from candidate 6.
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n && k < 16; k++)
        order[k] = (threads + k) % n;
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, elites, features, 2, -1,
                                           &elites[1], f6, &known, &pick);
    const kf_elite_t *from = pick >= 0 ? &elites[pick] : &elites[1];
    if (getenv ("KF_TEST_SHOW"))
        printf ("handed: %s, from candidate %lld\n", ideas[idx],
                (long long) from->candidate_id);
    CHECK (!(idx == threads && from == &elites[1]));
    kf_search_idea_known_free (&known);
    json_decref (rows);
    //  With no such try in flight, threads from candidate 6 it is.
    rows = json_array ();
    CHECK (kf_search_idea_known_read (rows, ideas, n, elites, 2, &elites[1], 2, 0, &known) == 0);
    pick = -1;
    idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, elites, features, 2, -1,
                                    &elites[1], f6, &known, &pick);
    CHECK (idx == threads && pick < 0);
    kf_search_idea_known_free (&known);
    json_decref (rows);
    json_decref (spec);
}

//  4. The sweep's load, point by point.
static void
test_sweep_busy (void)
{
    json_t *busy = json_pack ("[{s:{s:i}, s:{s:f}}, {s:{s:i}, s:{s:f}}]", "params", "TASK_ROWS",
                              48, "host_load", "others_cpu_share", 0.59, "params", "TASK_ROWS",
                              24, "host_load", "others_cpu_share", 0.72);
    double lo = 0, hi = 0;
    CHECK (kf_retune_sweep_busy (busy, &lo, &hi) && lo == 0.59 && hi == 0.72);
    //  Timed over undisturbed samples: the load did not reach the figures.
    json_t *clean = json_pack ("[{s:{s:i}, s:{s:f, s:b}}]", "params", "TASK_ROWS", 48,
                               "host_load", "others_cpu_share", 0.70, "undisturbed_only", 1);
    CHECK (!kf_retune_sweep_busy (clean, &lo, &hi) && hi < 0);
    json_t *quiet = json_pack ("[{s:{s:i}, s:{s:f}}]", "params", "TASK_ROWS", 48, "host_load",
                               "others_cpu_share", 0.02);
    CHECK (!kf_retune_sweep_busy (quiet, NULL, NULL));
    CHECK (!kf_retune_sweep_busy (NULL, NULL, NULL));
    json_decref (busy);
    json_decref (clean);
    json_decref (quiet);
}

//  5. The round's expm1_rational and its candidates 1 and 7, their
//  features as stored.
static void
test_cheaper_math (void)
{
    const char *deg6 = "__m256 p = _mm256_fmadd_ps (c6, r, c5);\n"
                       "p = _mm256_fmadd_ps (p, r, c4); p = _mm256_fmadd_ps (p, r, c3);\n"
                       "p = _mm256_fmadd_ps (p, r, c2); p = _mm256_fmadd_ps (p, r, c1);\n"
                       "p = _mm256_mul_ps (p, r); /* _mm256_div_ps in a comment */\n";
    const char *deg4 = "// change: degree 4, not 6\n__m256 p = _mm256_fmadd_ps (c4, r, c3);\n"
                       "p = _mm256_fmadd_ps (p, r, c2); p = _mm256_fmadd_ps (p, r, c1);\n"
                       "p = _mm256_mul_ps (p, r);\n_mm256_stream_ps (y, p);\n";
    CHECK (kf_prompt_source_arith (deg6) == 6 && kf_prompt_source_arith (deg4) == 4);
    CHECK (kf_prompt_source_arith (NULL) == -1);
    char *src = kf_strdupf ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                            "    def forward(self, x):\n"
                            "        return torch.expm1(x / 2) / (1 + x * x)\n");
    json_t *spec = json_pack ("{s:s, s:s, s:[{s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                              " s:{s:s, s:s}, s:{s:f, s:f}}", "name", "expm1_rational", "op",
                              "expm1_rational", "inputs", "name", "x", "shape", 2048, 8192,
                              "dtype", "f32", "outputs", "name", "out0", "shape", 2048, 8192,
                              "dtype", "f32", "reference", "language", "pytorch", "source", src,
                              "tolerance", "rtol", 1e-3, "atol", 1e-5);
    free (src);
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t approx = kf_test_plan_index (ideas, n, KF_IDEA_APPROX);
    CHECK (approx < n);
    if (approx < n) {
        json_t *row = json_pack ("{s:i, s:i, s:i, s:i, s:i}", "parent_id", 1, "features", 4156,
                                 "parent_features", 4148, "arith", 12, "parent_arith", 16);
        CHECK (kf_prompt_try_credit (row, ideas[approx], ideas[approx], true)
               == KF_CREDIT_HANDED);
        //  As many calls as its parent's, or no count kept: not seen done.
        json_object_set_new (row, "arith", json_integer (16));
        CHECK (kf_prompt_try_credit (row, ideas[approx], ideas[approx], true)
               == KF_CREDIT_NOT_DONE);
        json_object_del (row, "arith");
        CHECK (kf_prompt_try_credit (row, ideas[approx], ideas[approx], true)
               == KF_CREDIT_NOT_DONE);
        //  Fewer calls count for the approximation only: streaming stores
        //  handed, the same code is a try of them by its features.
        json_object_set_new (row, "arith", json_integer (12));
        size_t stream = kf_test_plan_index (ideas, n, KF_IDEA_STREAM);
        CHECK (stream < n && kf_prompt_try_credit (row, ideas[stream], ideas[approx], true)
                                 == KF_CREDIT_NONE);
        json_decref (row);
    }
    json_decref (spec);
}

//  6. The round-31 fixture (tests/fixtures/pytorch/mm_bt_logsumexp.py),
//  its forward returning RET over an output of OUT_N values.
static json_t *
s_lse_spec (const char *ret, int out_n)
{
    char *src = kf_strdupf ("import torch\nimport torch.nn as nn\n\n\nclass Model(nn.Module):\n"
                            "    def forward(self, a, w):\n        return %s\n", ret);
    json_t *spec = json_pack ("{s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                              " s:[{s:s, s:[i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm_bt_logsumexp", "op", "mm_bt_logsumexp", "inputs",
                              "name", "a", "shape", 512, 256, "dtype", "f32", "name", "w",
                              "shape", 1024, 256, "dtype", "f32", "outputs", "name", "out0",
                              "shape", out_n, "dtype", "f32", "reference", "language",
                              "pytorch", "source", src, "tolerance", "rtol", 1e-3, "atol", 1e-5);
    free (src);
    return spec;
}

static void
test_logsumexp (void)
{
    json_t *spec = s_lse_spec ("torch.logsumexp(a @ w.t(), dim=1)", 512);
    long long mnk[3] = { 0, 0, 0 };
    CHECK (kf_prompt_matmul_flops (spec, mnk) == 2.0 * 512 * 1024 * 256 && mnk[0] == 512
           && mnk[1] == 1024 && mnk[2] == 256);
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm) && fm.product && !strcmp (fm.row, "logsumexp"));
    char *idea = kf_prompt_epilogue_idea (spec);
    if (getenv ("KF_TEST_SHOW"))
        printf ("lse idea: %s\n", idea ? idea : "(none)");
    CHECK (kf_test_has (idea, "never store the product, by fusing the epilogue (the logsumexp "
                              "over each row) into the product"));
    CHECK (kf_test_has (idea, "write each row's one value once its last tile is folded"));
    free (idea);
    json_t *d = json_pack ("{s:f}", "peak_gflops_one_core", 219.0);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_epilogue_line (f, spec, d);
    fclose (f);
    if (getenv ("KF_TEST_SHOW"))
        printf ("lse line: %s\n", text);
    CHECK (kf_test_has (text, "over 524288 elements of the product (one value a row is output)"));
    CHECK (kf_test_has (text, "a row of 1024 products is 4096 bytes"));
    free (text);
    json_decref (d);
    json_decref (spec);
    //  Over the columns ([1024] out): no row's epilogue; the product's
    //  count is the same (read as w @ a.t(), each of its rows reduced).
    spec = s_lse_spec ("torch.logsumexp(a @ w.t(), dim=0)", 1024);
    CHECK (kf_prompt_formula (spec, &fm) && !*fm.row);
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 2.0 * 512 * 1024 * 256);
    json_decref (spec);
}

int
main (void)
{
    test_logsumexp ();
    test_cheaper_math ();
    test_sweep_busy ();
    test_normalize_read ();
    test_normalize_ideas ();
    test_crossed ();
    return kf_test_done ("test_round30");
}
