/*  test_round30.c - what round 30 of the model in the loop (issue 15,
 *  docs/search.md "Thirtieth round") found in a product's prompts:
 *
 *  1. F.normalize(a @ w.t(), dim=1), each row of the product scaled to
 *     unit length, was not read as a row's epilogue: its fusion idea
 *     said "(bias, activation)" three prompts running;
 *  2. the threads idea offered column blocks and row blocks as equals,
 *     where column blocks split each row's sum of squares across threads.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../../common/kf_json.h"
#include "../../common/kf_str.h"
#include "../kf_test.h"
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
    json_decref (spec);
    //  A product with no row's epilogue keeps the general threads text.
    spec = s_spec ("a @ w.t()", 2);
    CHECK (!kf_prompt_epilogue_threads_idea (spec, "x", "W"));
    json_decref (spec);
}

int
main (void)
{
    test_normalize_read ();
    test_normalize_ideas ();
    return kf_test_done ("test_round30");
}
