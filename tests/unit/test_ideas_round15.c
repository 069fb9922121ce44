/*  test_ideas_round15.c - what round 15 of the model in the loop (issue
 *  15, docs/search.md "Fifteenth round") found in the idea catalogue:
 *
 *  1. atan(x) * rsqrt(x * x + 1) was bound by its arithmetic on one core
 *     once its atan was in SIMD code, and no idea cut that arithmetic:
 *     the host list of a costly elementwise formula now has one, naming
 *     the formula's functions and the task's tolerance, after threads;
 *  2. an op of parts with an activation in it ("mm_at_relu_bias") was
 *     classed elementwise: the product's and the reduction's parts come
 *     first.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (const char *op, const char *forward)
{
    char src[512];
    snprintf (src, sizeof src, "class Model(nn.Module):\n    def forward(self, x, y0):\n"
                               "        %s\n", forward);
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}, {s:s, s:[i], s:s}],"
                      " s:[{s:s, s:[i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name", "t", "op",
                      op, "description", "a task", "inputs", "name", "in0", "shape", 4096,
                      "dtype", "f32", "name", "in1", "shape", 4096, "dtype", "f32", "outputs",
                      "name", "out0", "shape", 4096, "dtype", "f32", "reference", "language",
                      "pytorch", "source", src, "tolerance", "rtol", 0.001, "atol", 1e-5);
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
test_cut (void)
{
    json_t *spec = s_spec ("atan_rsqrt",
                           "return torch.atan(x) * torch.rsqrt(x * x + 1) + 0.5 * y0");
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t cut = s_index (ideas, n, "spend fewer instructions an element on");
    CHECK (cut < n);
    if (cut < n) {
        printf ("%s\n", ideas[cut]);
        CHECK (strstr (ideas[cut], "on its atan, divisions and square roots once they are "
                                   "computed in vector registers"));
        CHECK (strstr (ideas[cut], "within the task's tolerance (rtol 0.001, atol 1e-05)"));
        CHECK (strstr (ideas[cut], "refined by one Newton step in place of a divide or square "
                                   "root"));
        //  An add-on after the stand-alone ones, right after threads; no
        //  feature of another idea is read into it.
        CHECK (cut >= KF_PROMPT_IDEAS_APART && cut > 0
               && kf_prompt_idea_feature (ideas[cut - 1]) == KF_IDEA_THREADS);
        CHECK (kf_prompt_idea_feature (ideas[cut]) == KF_IDEA_OTHER);
    }
    //  One list for the task, the same pointers each time.
    size_t again = 0;
    CHECK (kf_prompt_ideas_for (spec, KF_TARGET_HOST, &again) == ideas && again == n);
    //  The other ideas are those of one libm call, unchanged.
    CHECK (s_index (ideas, n, "by a branch-free approximation") == 0);
    json_decref (spec);
    //  Several calls of one argument: each named, the identity idea kept.
    spec = s_spec ("t", "return torch.exp(x) * torch.tanh(x)");
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    cut = s_index (ideas, n, "spend fewer instructions an element on its exp, tanh once");
    CHECK (cut < n && s_index (ideas, n, "by an exact identity") < n);
    json_decref (spec);
    //  Round 16: calls no identity relates (other arguments, neither inside
    //  the other) get no identity idea; one inside another, or a function
    //  of several calls, does.
    static const struct { const char *code; bool identity; } related[] = {
        { "return torch.exp(-x * x / 2) * torch.cos(3 * x) + y0 / 4", false },
        { "return torch.exp(x) * torch.tanh(y0)", false },
        { "return x * torch.tanh(torch.log1p(torch.exp(x)))", true },
        { "return torch.sigmoid(x) * F.softplus(y0)", true },
        { "return torch.sin(x) + torch.cos(x)", true },
    };
    for (size_t i = 0; i < sizeof related / sizeof related[0]; i++) {
        spec = s_spec ("t", related[i].code);
        ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
        CHECK ((s_index (ideas, n, "by an exact identity") < n) == related[i].identity);
        json_decref (spec);
    }
    //  A formula without costly math, or a GPU, has none.
    spec = s_spec ("t", "return x * 2.0 + y0");
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (s_index (ideas, n, "spend fewer instructions") == n);
    json_decref (spec);
    spec = s_spec ("t", "return torch.atan(x)");
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_CUDA, &n);
    CHECK (n && s_index (ideas, n, "spend fewer instructions") == n);
    json_decref (spec);
}

static void
test_class (void)
{
    static const struct { const char *op; kf_task_class_t c; } cases[] = {
        { "mm_at_relu_bias", KF_CLASS_MATMUL }, { "matmul_relu", KF_CLASS_MATMUL },
        { "bmm_gelu", KF_CLASS_MATMUL }, { "addmm_tanh", KF_CLASS_MATMUL },
        { "gemm_sigmoid_residual", KF_CLASS_MATMUL }, { "linear_silu", KF_CLASS_MATMUL },
        { "conv2d_relu", KF_CLASS_MATMUL }, { "relu_mm", KF_CLASS_MATMUL },
        { "row_sum_relu", KF_CLASS_ROW_REDUCTION }, { "relu_mean", KF_CLASS_ROW_REDUCTION },
        { "relu", KF_CLASS_ELEMENTWISE }, { "comm_relu", KF_CLASS_ELEMENTWISE },
        { "summary_relu", KF_CLASS_ELEMENTWISE }, { NULL, KF_CLASS_OTHER } };
    for (int i = 0; cases[i].op; i++) {
        json_t *spec = s_spec (cases[i].op, "return x");
        kf_task_class_t c = kf_prompt_task_class (spec);
        if (c != cases[i].c)
            fprintf (stderr, "  %s: %s\n", cases[i].op, kf_prompt_class_name (c));
        CHECK (c == cases[i].c);
        json_decref (spec);
    }
}

int
main (void)
{
    test_cut ();
    test_class ();
    return kf_test_done ("test_ideas_round15");
}
