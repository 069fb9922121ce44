/*  test_round50.c - what round 50 of the model in the loop (issue 15,
 *  docs/search.md "Fiftieth round") found:
 *
 *  1. a * tanh(b) + 0.05 * a * a, b one value a column broadcast along
 *     the rows, was said to make "1 libm call per output element, so 16.8
 *     million": tanh(b) reads the broadcast input alone, so it is made
 *     once a value, 4096 calls (kf_formula_t's hoist_calls), and the
 *     arithmetic an output costs leaves it out (kf_prompt_formula_arith),
 *     and such a task's math is no costly math (kf_prompt_costly_math:
 *     no approximation idea for it);
 *  2. (x @ w) * sigmoid(g), g as large as the output, was costed by its
 *     epilogue's arithmetic alone; g's cold reads at each tile's end were
 *     the kernels' 6% to win by prefetching (s_epilogue_inputs);
 *  3. (left open by rounds 49-50) a block number claimed from a counter
 *     in one statement and scaled to the block's start in another
 *     (`b = atomic_fetch_add (next, 1); ... i0 = b * RB`) read as no
 *     cache blocking (kf_descriptor_host's s_claimed_number).
 */
#include "../../analysis/kf_descriptor.h"
#include "../../coordinator/kf_prompt_arith.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../common/kf_json.h"
#include "../../common/kf_str.h"
#include "../kf_test.h"
#include "../kf_test_text.h"

#include <stdlib.h>
#include <string.h>

static json_t *
s_colgate (const char *forward, int b_len)
{
    return json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name", "cg",
                      "inputs", "name", "in0", "shape", 4096, 4096, "dtype", "f32", "name", "in1",
                      "shape", b_len, "dtype", "f32", "outputs", "name", "out0", "shape", 4096,
                      4096, "dtype", "f32", "reference", "language", "pytorch", "source",
                      forward, "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static void
test_broadcast_call (void)
{
    json_t *host = kf_test_epyc_host ();
    json_t *d = json_array_get (json_object_get (host, "devices"), 0);
    json_t *spec = s_colgate ("    def forward(self, a, b):\n"
                              "        return a * torch.tanh(b) + 0.05 * a * a\n", 4096);
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm) && fm.calls == 1 && fm.hoist_calls == 1
           && fm.hoist_values == 4096 && !strcmp (fm.hoist_names, "tanh"));
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_task_libm_line (f, spec, d));
    printf ("%s", text);
    CHECK (kf_test_has (text, "Calls of tanh: its argument reads only an input broadcast across "
                              "the output, 4096 values, so it can be made once a value, 4096 "
                              "calls in all"));
    CHECK (!kf_test_has (text, "16.8 million"));
    free (text);
    kf_arith_t a;
    CHECK (kf_prompt_formula_arith (spec, d, &a) && a.calls == 0 && a.call_vops == 0);
    CHECK (!kf_prompt_costly_math (spec));
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (kf_test_idea_index (ideas, n, KF_IDEA_APPROX) >= n);
    json_decref (spec);
    //  A call of the large input stays per element; one of both, too.
    spec = s_colgate ("    def forward(self, a, b):\n"
                      "        return torch.tanh(a) * b\n", 4096);
    CHECK (kf_prompt_formula (spec, &fm) && fm.hoist_calls == 0);
    CHECK (kf_prompt_costly_math (spec));
    json_decref (spec);
    spec = s_colgate ("    def forward(self, a, b):\n"
                      "        return torch.tanh(a * b)\n", 4096);
    CHECK (kf_prompt_formula (spec, &fm) && fm.hoist_calls == 0);
    json_decref (spec);
    json_decref (host);
}

static void
test_epilogue_input (void)
{
    json_t *host = kf_test_epyc_host ();
    json_t *d = json_array_get (json_object_get (host, "devices"), 0);
    json_t *spec = json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                              " {s:s, s:[i,i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                              " s:{s:f, s:f}}", "name", "g", "inputs", "name", "in0", "shape",
                              1024, 512, "dtype", "f32", "name", "in1", "shape", 512, 1024,
                              "dtype", "f32", "name", "in2", "shape", 1024, 1024, "dtype", "f32",
                              "outputs", "name", "out0", "shape", 1024, 1024, "dtype", "f32",
                              "reference", "language", "pytorch", "source",
                              "    def forward(self, x, w, g):\n"
                              "        return (x @ w) * torch.sigmoid(g)\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_text (f, spec, d));
    printf ("%s\n", text);
    CHECK (kf_test_has (text, "The epilogue also reads in2, one as large as the output (4.0 MiB)"));
    CHECK (kf_test_has (text, "fusing the epilogue does not remove it"));
    free (text);
    json_decref (spec);
    //  An epilogue of the product alone reads nothing more.
    spec = json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name", "t",
                      "inputs", "name", "in0", "shape", 1024, 512, "dtype", "f32", "name", "in1",
                      "shape", 512, 1024, "dtype", "f32", "outputs", "name", "out0", "shape",
                      1024, 1024, "dtype", "f32", "reference", "language", "pytorch", "source",
                      "    def forward(self, x, w):\n        return torch.sigmoid(x @ w)\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_text (f, spec, d));
    CHECK (text && *text && !kf_test_has (text, "also reads"));
    free (text);
    json_decref (spec);
    json_decref (host);
}

static const char s_claimed_number[] =
    "#include <stdatomic.h>\n"
    "#define RB 32\n"
    "static void row_tile (const float *x, const float *w, long K, float *y, long N)\n"
    "{ for (long j = 0; j < N; j++) { float s = 0; for (long k = 0; k < K; k++)\n"
    "    s += x[k] * w[j * K + k]; y[j] = s; } }\n"
    "static void run_job (atomic_long *next, const float *X, const float *W, float *Y,\n"
    "                     long M, long N, long K)\n"
    "{\n"
    "    long b;\n"
    "    while ((b = atomic_fetch_add (next, 1)) * RB < M) {\n"
    "        long i0 = b * RB;\n"
    "        long i1 = i0 + RB < M ? i0 + RB : M;\n"
    "        for (long i = i0; i < i1; i++)\n"
    "            row_tile (X + i * K, W, K, Y + i * N, N);\n"
    "    }\n"
    "}\n";

static void
test_claimed_number (void)
{
    kf_coords_t c;
    char *why = NULL;
    CHECK (kf_descriptor_classify (s_claimed_number, strlen (s_claimed_number), "c", &c,
                                   &why) == 0);
    printf ("%s\n", why ? why : "");
    CHECK (c.mem == 2 && kf_test_has (why, "(cache blocking) `b = atomic_fetch_add"));
    free (why);
    //  A claimed row number used as a row's offset alone (no block end)
    //  is no block.
    char *one = kf_strdupf ("%s", s_claimed_number);
    char *at = strstr (one, "        long i1 = i0 + RB < M ? i0 + RB : M;\n");
    memcpy (at, "        long i1 = M;", strlen ("        long i1 = M;"));
    memset (at + strlen ("        long i1 = M;"), ' ',
            strlen ("        long i1 = i0 + RB < M ? i0 + RB : M;") - strlen ("        long i1 = M;"));
    why = NULL;
    CHECK (kf_descriptor_classify (one, strlen (one), "c", &c, &why) == 0);
    printf ("%s\n", why ? why : "");
    CHECK (c.mem != 2 && !kf_test_has (why, "(cache blocking)"));
    free (why);
    free (one);
}

int
main (void)
{
    test_broadcast_call ();
    test_epilogue_input ();
    test_claimed_number ();
    return kf_test_done ("test_round50");
}
