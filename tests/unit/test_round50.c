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
 *     the kernels' 6% to win by prefetching (s_epilogue_inputs).
 */
#include "../../coordinator/kf_prompt_arith.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../common/kf_json.h"
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

int
main (void)
{
    test_broadcast_call ();
    test_epilogue_input ();
    return kf_test_done ("test_round50");
}
