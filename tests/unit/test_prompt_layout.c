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
 *  2. round 15: a transposed first operand (a.T @ b), both, a plain
 *     a @ b are read as such; attention's q @ k^T then @ v, a transpose
 *     of other dimensions, an operand not read are not; words in a
 *     docstring or a comment are not the code;
 *  3. the Data section's note names the operand by its in[] name, its
 *     name in the code and its shape; the ideas and strategies follow;
 *  4. round 15: relu(a.T @ b + bias) (tests/fixtures/pytorch
 *     mm_at_relu_bias) had no note and got "dot products along k where
 *     both operands are contiguous along k": its note names a [K][M] and
 *     the outer-product order, its ideas that order, by in0 and in1.
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
    CHECK (kf_prompt_rows_along_k (spec)
           == (kind == KF_PRODUCT_LINEAR || kind == KF_PRODUCT_TRANSPOSED));
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

//  Round 15: a first operand used transposed (a.T @ b, a stored [K][M]),
//  both, and a plain a @ b are read as such; what is not read stays
//  KF_PRODUCT_OTHER.
static void
s_test_not (void)
{
    static const struct { const char *code; kf_product_layout_t kind; const char *name; } cases[] = {
        { "return a.T @ b", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return torch.matmul(a.t(), b)", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return torch.relu(a.mT @ b + 1.0)", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return torch.mm(a.transpose(0, 1), b)", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return a.transpose(-1, -2).contiguous() @ b", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return torch.addmm(c, a.T, b)", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return a.T.matmul(b)", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return (a.T) @ b", KF_PRODUCT_FIRST_TRANSPOSED, "a" },
        { "return a.T @ b.T", KF_PRODUCT_BOTH_TRANSPOSED, "b" },
        { "return torch.matmul(a.transpose(0, 1), b.T)", KF_PRODUCT_BOTH_TRANSPOSED, "b" },
        { "return a @ b", KF_PRODUCT_PLAIN, "" },
        { "return torch.matmul(a, b)", KF_PRODUCT_PLAIN, "" },
        { "return a @ b.T.T", KF_PRODUCT_PLAIN, "" },
        { "return a.T.T @ b", KF_PRODUCT_PLAIN, "" },
        { "return a @ b  # a @ b.T", KF_PRODUCT_PLAIN, "" },
        { "\"\"\"a @ b.T\"\"\"\n        return a @ b", KF_PRODUCT_PLAIN, "" },
        //  Products of two layouts, or an operand not read.
        { "return torch.softmax(a @ b.transpose(-2, -1), dim=-1) @ a", KF_PRODUCT_OTHER, "" },
        { "return a.T @ b + a @ b", KF_PRODUCT_OTHER, "" },
        { "return a @ b.T[:, :512]", KF_PRODUCT_OTHER, "" },
        { "return a[:, :512].T @ b", KF_PRODUCT_OTHER, "" },
        { "return torch.matmul(input=a, other=b.T)", KF_PRODUCT_OTHER, "" },
        { "return torch.einsum('ik,jk->ij', a, b)", KF_PRODUCT_OTHER, "" },
        { "return a.permute(1, 0) @ b", KF_PRODUCT_OTHER, "" },
        { NULL, KF_PRODUCT_OTHER, NULL } };
    for (int i = 0; cases[i].code; i++) {
        char name[64] = "?";
        kf_product_layout_t kind = s_layout ("a, b", cases[i].code, 2, name, sizeof name);
        if (kind != cases[i].kind || strcmp (name, cases[i].name))
            fprintf (stderr, "  read as %d (%s), not %d: %s\n", (int) kind, name,
                     (int) cases[i].kind, cases[i].code);
        CHECK (kind == cases[i].kind && !strcmp (name, cases[i].name));
    }
    //  Of three dimensions, (0, 1) swaps a batch dimension and .T
    //  reverses them all; the last two are the matrices'.
    CHECK (s_layout ("a, b", "return a @ b.transpose(0, 1)", 3, NULL, 0) == KF_PRODUCT_OTHER);
    CHECK (s_layout ("a, b", "return a @ b.T", 3, NULL, 0) == KF_PRODUCT_OTHER);
    CHECK (s_layout ("x, a", "return a.T @ x", 3, NULL, 0) == KF_PRODUCT_OTHER);
    CHECK (s_layout ("x, a", "return torch.bmm(a.transpose(1, 2), x)", 3, NULL, 0)
           == KF_PRODUCT_FIRST_TRANSPOSED);
    CHECK (s_layout ("x, a", "return torch.baddbmm(x, a.mT, x)", 3, NULL, 0)
           == KF_PRODUCT_FIRST_TRANSPOSED);
    //  No product at all.
    CHECK (s_layout ("a, b", "return a * b", 2, NULL, 0) == KF_PRODUCT_OTHER);
}

//  Round 16: q @ k^T with K = 64 (bmm_bt_softmax) was told dot products
//  along k, each 4 vectors then summed across lanes; the note now says
//  what a short k costs that way, and names the broadcast form to time.
static void
s_test_short_k (void)
{
    FILE *f = fopen ("tests/fixtures/pytorch/bmm_bt_softmax.py", "r");
    CHECK (f);
    if (!f)
        return;
    char src[4096];
    size_t n = fread (src, 1, sizeof src - 1, f);
    src[n] = 0;
    fclose (f);
    json_t *spec = json_pack ("{s:s, s:s, s:[{s:s, s:[i,i,i], s:s}, {s:s, s:[i,i,i], s:s}],"
                              " s:[{s:s, s:[i,i,i], s:s}], s:{s:s, s:s}}",
                              "name", "bmm_bt_softmax", "description", "a task", "inputs",
                              "name", "in0", "shape", 8, 512, 64, "dtype", "f32", "name", "in1",
                              "shape", 8, 512, 64, "dtype", "f32", "outputs", "name", "out0",
                              "shape", 8, 512, 512, "dtype", "f32", "reference", "language",
                              "pytorch", "source", src);
    char *note = s_note (spec);
    CHECK (note && strstr (note, "K is short here (64): a dot product of 64 f32 is 4 AVX-512 "
                                 "vectors (8 AVX2), and summing its vector accumulator across "
                                 "the lanes at the end costs about as much as its FMAs"));
    CHECK (note && strstr (note, "transposed copy of in1's block (the outer-product order"));
    free (note);
    json_decref (spec);
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
                                 "ideas, with W = in1. A dot product ends in a sum across its "
                                 "vector's lanes, one per output; the outer-product order "
                                 "needs none, at the price of a copy of in1's block transposed "
                                 "to [K][NR] panels.\n"));
    CHECK (note && !strstr (note, "nn.Linear"));
    //  K = 1024 is no short k.
    CHECK (note && !strstr (note, "K is short here"));
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
    //  Round 17: the strategies told only the dot-product form, with a
    //  lane sum per output; the outer-product order is the other to time.
    CHECK (strategies && strstr (strategies, "or the outer-product order, a tile of outputs in "
                                             "registers fed by broadcasts of x"));
    bool outer = false;
    for (size_t i = 0; i < count; i++)
        outer |= strstr (ideas[i], "by the outer-product order over a copy of in1's block "
                                   "transposed to [K][NR] panels") != NULL;
    CHECK (outer);
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

//  Round 15: relu(a.T @ b + bias), a stored [1024][384] (k by m): the note
//  names the operand used transposed, its shape, the loop order that
//  reads both along rows and that packing it needs no transpose; the
//  ideas follow the layout and name in0 and in1.
static void
s_test_first_fixture (void)
{
    FILE *f = fopen ("tests/fixtures/pytorch/mm_at_relu_bias.py", "r");
    CHECK (f);
    if (!f)
        return;
    char src[4096];
    size_t n = fread (src, 1, sizeof src - 1, f);
    src[n] = 0;
    fclose (f);
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                              " {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}],"
                              " s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm_at_relu_bias", "op", "", "description", "a task",
                              "inputs", "name", "in0", "shape", 1024, 384, "dtype", "f32",
                              "name", "in1", "shape", 1024, 768, "dtype", "f32", "name", "in2",
                              "shape", 768, "dtype", "f32", "outputs", "name", "out0", "shape",
                              384, 768, "dtype", "f32", "reference", "language", "pytorch",
                              "source", src, "tolerance", "rtol", 0.01, "atol", 1e-5);
    char name[64];
    CHECK (kf_prompt_product_layout (spec, name, sizeof name) == KF_PRODUCT_FIRST_TRANSPOSED
           && !strcmp (name, "a"));
    CHECK (!kf_prompt_rows_along_k (spec));
    char *note = s_note (spec);
    printf ("%s", note ? note : "(none)\n");
    CHECK (note && strstr (note, "Layout of the product: the reference multiplies in0 (a in its "
                                 "code) transposed by in1 (b in its code). in0 is [1024][384], "
                                 "stored row-major as [K][M]: K = 1024 the reduction "
                                 "dimension, M = 384 output rows. in1 is [1024][768], stored "
                                 "row-major as [K][N]: K = 1024 the reduction dimension, N = "
                                 "768 output columns."));
    CHECK (note && strstr (note, "So for each k, in0[k][i0..i0+MR] is a contiguous run of "
                                 "in0's row k, as in1[k][j0..j0+NR] is of in1's row k; "
                                 "neither operand is contiguous along k"));
    CHECK (note && strstr (note, "The outer-product order reads both along their rows"));
    CHECK (note && strstr (note, "Packing in0 for it is a plain strided copy of those runs"));
    CHECK (note && strstr (note, "with no transpose.\n"));
    free (note);
    f = open_memstream (&note, &n);
    kf_prompt_data_section (f, spec, NULL);
    fclose (f);
    CHECK (note && strstr (note, "Layout of the product: the reference multiplies in0"));
    free (note);
    //  No "dot products along k", no rows of x or W: the outer-product
    //  order of in0's and in1's rows, and packing without a transpose.
    size_t count = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    CHECK (count >= KF_PROMPT_IDEAS_APART);
    for (size_t i = 0; i < count; i++) {
        CHECK (!strstr (ideas[i], "where both operands are contiguous along k")
               && !strstr (ideas[i], "rows of x") && !strstr (ideas[i], "[K][N] operand"));
    }
    CHECK (count && strstr (ideas[0], "by the outer-product order")
           && strstr (ideas[0], "in0[k][i0..i0+MR] (a contiguous run of in0's row k)")
           && strstr (ideas[0], "in1[k][j0..j0+NR]")
           && strstr (ideas[0], "neither operand is contiguous along k, so dot products along k "
                                "do not fit"));
    CHECK (count > 1 && strstr (ideas[1], "a plain strided copy with no transpose"));
    //  The same list each time (callers keep the pointers).
    size_t again = 0;
    CHECK (kf_prompt_ideas_for (spec, KF_TARGET_HOST, &again) == ideas && again == count);
    json_decref (spec);
    //  Both used transposed: the note says so, and the ideas do not read
    //  it as a.T @ b.
    spec = s_task ("a, b", "return a.T @ b.T", 2);
    note = s_note (spec);
    CHECK (note && strstr (note, "multiplies in0 (a in its code) transposed by in1 (b in its "
                                 "code) transposed. in0 is [384][1024], stored row-major as "
                                 "[K][M]"));
    CHECK (note && strstr (note, "in1 is [768][1024], stored row-major as [N][K]"));
    CHECK (note && strstr (note, "The product is (in1 @ in0) transposed"));
    free (note);
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    CHECK (count && strstr (ideas[0], "C^T = in1 @ in0"));
    json_decref (spec);
    //  Round 15: a @ b.T's ideas name its operands, not x and W.
    spec = s_task ("a, b", "return a @ b.T", 2);
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    CHECK (count && strstr (ideas[0], "a few rows of in0 against a few rows of in1 at a time"));
    CHECK (count > 1 && strstr (ideas[1], "the rows of in0 and in1 that are reused"));
    json_decref (spec);
    //  A linear layer keeps x and W, the names of its note's y = x @ W^T.
    spec = s_task ("x", "return F.linear(x, self.w)", 2);
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    CHECK (count && strstr (ideas[0], "a few rows of x against a few rows of W"));
    json_decref (spec);
    //  A plain a @ b: i-k-j over in1's rows, packing in1 (round 20).
    spec = s_task ("a, b", "return a @ b", 2);
    ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &count);
    CHECK (count && strstr (ideas[0], "i-k-j, each in0[i][k] broadcast against the vectors of "
                                      "in1's row k"));
    CHECK (count > 4 && strstr (ideas[4], "by packing blocks of in1"));
    json_decref (spec);
}

int
main (void)
{
    s_test_spellings ();
    s_test_not ();
    s_test_fixture ();
    s_test_short_k ();
    s_test_notes ();
    s_test_first_fixture ();
    return kf_test_done ("test_prompt_layout");
}
