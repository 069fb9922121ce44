/*  test_prompt_layout.c - round 14 of the model in the loop: the task
 *  mm_bt_scale_bias (tests/fixtures/pytorch) computes
 *  torch.matmul(a, b.T) * s + c with b [768][1024], both operands
 *  contiguous along k, yet its prompt gave the ideas for a row-major
 *  [K][N] operand (i-k-j order, packing the strided operand) and no
 *  layout note: only nn.Linear was known to read both operands along k.
 *
 *  1. each common spelling of a product against an operand used
 *     transposed (x @ w.T, w.t(), w.mT, w.transpose(0, 1) or (-1, -2),
 *     torch.matmul, torch.mm, torch.bmm, torch.addmm, a.matmul(b.T))
 *     is read as such, and nn.Linear / F.linear as before;
 *  2. a transposed first operand (a.T @ b), a plain a @ b, attention's
 *     q @ k^T then @ v, a transpose of other dimensions, words in a
 *     docstring or a comment are not;
 *  3. the Data section's note names the operand by its in[] name, its
 *     name in the code and its shape; the ideas and strategies follow.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

//  A PyTorch product task of inputs in0 [M][K] and in1 (SHAPE1 of RANK
//  dimensions), whose forward is `def forward(self, ARGS):` then BODY.
static json_t *
s_task (const char *args, const char *body, int rank)
{
    char *src = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&src, &size);
    fprintf (f, "\"\"\"A product.\"\"\"\nimport torch\n\n\nclass Model(nn.Module):\n"
                "    def __init__(self):\n        super().__init__()\n\n"
                "    def forward(self, %s):\n        %s\n\n\n"
                "def get_inputs():\n    return [torch.randn(384, 1024)]\n", args, body);
    fclose (f);
    json_t *in1 = rank == 3 ? json_pack ("[i,i,i]", 4, 768, 1024) : json_pack ("[i,i]", 768, 1024);
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:o, s:s}],"
                              " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm", "op", "matmul", "description", "a task", "inputs",
                              "name", "in0", "shape", 384, 1024, "dtype", "f32", "name", "in1",
                              "shape", in1, "dtype", "f32", "outputs", "name", "out0", "shape",
                              384, 768, "dtype", "f32", "reference", "language", "pytorch",
                              "source", src, "tolerance", "rtol", 0.01, "atol", 1e-5);
    free (src);
    return spec;
}

static kf_product_layout_t
s_layout (const char *args, const char *body, int rank, char *name, size_t size)
{
    json_t *spec = s_task (args, body, rank);
    kf_product_layout_t kind = kf_prompt_product_layout (spec, name, size);
    CHECK (kf_prompt_rows_along_k (spec) == (kind != KF_PRODUCT_OTHER));
    json_decref (spec);
    return kind;
}

static char *
s_note (json_t *spec)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_layout_note (f, spec);
    fclose (f);
    return text;
}

static void
s_test_spellings (void)
{
    static const char *const yes[] = {
        "return x @ w.T",
        "return (x @ w.t()) * 2.0",
        "return torch.matmul(x, w.T) * s + c",
        "return torch.mm(x, w.t())",
        "y = torch.relu(x @ w.transpose(0, 1))\n        return y",
        "return x @ w.transpose(-1, -2)",
        "return torch.matmul(x, w.transpose(1, 0).contiguous())",
        "return x @ w.mT",
        "return x.matmul(w.T)",
        "return torch.addmm(c, x, w.t())",
        "return x @ (w.T) + 1.0  # x @ w",
        NULL };
    for (int i = 0; yes[i]; i++) {
        char name[64] = "?";
        kf_product_layout_t kind = s_layout ("x, w", yes[i], 2, name, sizeof name);
        if (kind != KF_PRODUCT_TRANSPOSED)
            fprintf (stderr, "  not read as x @ w^T: %s\n", yes[i]);
        CHECK (kind == KF_PRODUCT_TRANSPOSED && !strcmp (name, "w"));
    }
    //  A batched product, transposing the last two of three dimensions.
    CHECK (s_layout ("x, w", "return torch.bmm(x, w.transpose(1, 2))", 3, NULL, 0)
           == KF_PRODUCT_TRANSPOSED);
    CHECK (s_layout ("x, w", "return x @ w.mT", 3, NULL, 0) == KF_PRODUCT_TRANSPOSED);
    //  A module's own tensor.
    char name[64];
    CHECK (s_layout ("x", "return x @ self.weight.t()", 2, name, sizeof name)
           == KF_PRODUCT_TRANSPOSED && !strcmp (name, "self.weight"));
    //  nn.Linear and F.linear, as before.
    CHECK (s_layout ("x", "return self.fc(x)\n    fc = nn.Linear(1024, 768)", 2, NULL, 0)
           == KF_PRODUCT_LINEAR);
    CHECK (s_layout ("x, w", "return F.linear(x, w)", 2, NULL, 0) == KF_PRODUCT_LINEAR);
}

static void
s_test_not (void)
{
    static const char *const no[] = {
        "return a.T @ b",
        "return a.T @ b.T",
        "return torch.matmul(a.t(), b)",
        "return torch.matmul(a.transpose(0, 1), b.T)",
        "return a @ b",
        "return torch.matmul(a, b)",
        "return a @ b.T.T",
        "return torch.softmax(a @ b.transpose(-2, -1), dim=-1) @ a",
        "return a @ b.T[:, :512]",
        "return torch.matmul(input=a, other=b.T)",
        "return torch.einsum('ik,jk->ij', a, b)",
        "return a @ b  # a @ b.T",
        "\"\"\"a @ b.T\"\"\"\n        return a @ b",
        "return a @ b.transpose(0, 1)",
        NULL };
    for (int i = 0; no[i]; i++) {
        //  The last: of three dimensions, (0, 1) swaps a batch dimension.
        int rank = no[i + 1] ? 2 : 3;
        kf_product_layout_t kind = s_layout ("a, b", no[i], rank, NULL, 0);
        if (kind != KF_PRODUCT_OTHER)
            fprintf (stderr, "  read as a @ b^T: %s\n", no[i]);
        CHECK (kind == KF_PRODUCT_OTHER);
    }
    //  .T of three dimensions reverses them all.
    CHECK (s_layout ("a, b", "return a @ b.T", 3, NULL, 0) == KF_PRODUCT_OTHER);
    //  No product at all.
    CHECK (s_layout ("a, b", "return a * b", 2, NULL, 0) == KF_PRODUCT_OTHER);
}

static void
s_test_fixture (void)
{
    FILE *f = fopen ("tests/fixtures/pytorch/mm_bt_scale_bias.py", "r");
    CHECK (f);
    if (!f)
        return;
    char src[4096];
    size_t n = fread (src, 1, sizeof src - 1, f);
    src[n] = 0;
    fclose (f);
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                              " {s:s, s:[i], s:s}, {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                              " s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm_bt_scale_bias", "op", "mm_bt_scale_bias",
                              "description", "a task", "inputs", "name", "in0", "shape", 384,
                              1024, "dtype", "f32", "name", "in1", "shape", 768, 1024, "dtype",
                              "f32", "name", "in2", "shape", 768, "dtype", "f32", "name", "in3",
                              "shape", 768, "dtype", "f32", "outputs", "name", "out0", "shape",
                              384, 768, "dtype", "f32", "reference", "language", "pytorch",
                              "source", src, "tolerance", "rtol", 0.01, "atol", 1e-5);
    CHECK (kf_prompt_rows_along_k (spec));
    char *note = s_note (spec);
    printf ("%s", note ? note : "(none)\n");
    CHECK (note && strstr (note, "Layout of the product: the reference multiplies by in1 (b in "
                                 "its code) transposed. in1 is [768][1024], stored row-major "
                                 "as [N][K]: N = 768 output columns, K = 1024 the reduction "
                                 "dimension. So the rows of both operands are contiguous "
                                 "along k: read in1 along k as stored"));
    CHECK (note && strstr (note, "neither operand needs a transpose or a packed copy to be "
                                 "read contiguously. It is the x @ W^T of the strategies and "
                                 "ideas, with W = in1.\n"));
    CHECK (note && !strstr (note, "nn.Linear"));
    free (note);
    //  The Data section carries it.
    f = open_memstream (&note, &n);
    kf_prompt_data_section (f, spec, NULL);
    fclose (f);
    CHECK (note && strstr (note, "Layout of the product: the reference multiplies by in1"));
    free (note);
    //  Its ideas and strategies follow the layout: no [K][N] operand, no
    //  packing of a strided one.
    size_t count = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    CHECK (count >= KF_PROMPT_IDEAS_APART);
    for (size_t i = 0; i < count; i++) {
        CHECK (!strstr (ideas[i], "[K][N]") && !strstr (ideas[i], "strided"));
    }
    json_t *sections = kf_prompt_default_sections_for ("c", "host", spec);
    const char *strategies = json_string_value (json_object_get (sections, "strategies"));
    CHECK (strategies && strstr (strategies, "no transpose or packing is needed for unit "
                                             "stride"));
    json_decref (sections);
    json_decref (spec);
}

static void
s_test_notes (void)
{
    //  A module's weight used transposed: its in[] name is its own.
    json_t *spec = s_task ("x", "return x @ self.in1.T", 2);
    char *note = s_note (spec);
    CHECK (note && strstr (note, "multiplies by in1 (self.in1 in its code) transposed. in1 is "
                                 "[768][1024]"));
    free (note);
    json_decref (spec);
    //  A name the task does not know: no shape, still the layout.
    spec = s_task ("x", "w = self.w\n        return x @ w.T", 2);
    note = s_note (spec);
    CHECK (note && strstr (note, "multiplies by w transposed. w is stored row-major as [N][K] "
                                 "(N the output columns, K the reduction dimension)."));
    free (note);
    json_decref (spec);
    //  Of three dimensions, each matrix.
    spec = s_task ("x, w", "return torch.bmm(x, w.transpose(-1, -2))", 3);
    note = s_note (spec);
    CHECK (note && strstr (note, "in1 is [4][768][1024], each of its matrices stored row-major "
                                 "as [N][K]: N = 768"));
    free (note);
    json_decref (spec);
    //  A plain product gets no note.
    spec = s_task ("a, b", "return a @ b", 2);
    note = s_note (spec);
    CHECK (note && !*note);
    free (note);
    json_decref (spec);
}

int
main (void)
{
    s_test_spellings ();
    s_test_not ();
    s_test_fixture ();
    s_test_notes ();
    return kf_test_done ("test_prompt_layout");
}
