/*  test_round48.c - what round 47 of the model in the loop (issue 15,
 *  docs/search.md "Forty-seventh round, a check") and the review of stop
 *  59 left open, and what round 48 found:
 *
 *  1. round 47: a tanh epilogue was counted as an exp's 10 operations an
 *     element, beside the Target section's 16 for a tanh: an epilogue's
 *     calls are counted each at its own SIMD cost (kf_formula_t's
 *     after_vops, kf_epilogue_t's call_vops).
 */
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_formula.h"
#include "../kf_test.h"
#include "../kf_test_text.h"

#include <math.h>
#include <string.h>

static json_t *
s_product_spec (const char *forward, int out_rank)
{
    return out_rank == 1
           ? json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                        " s:[{s:s, s:[i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                        "name", "p", "inputs", "name", "in0", "shape", 2048, 512, "dtype", "f32",
                        "name", "in1", "shape", 512, 1024, "dtype", "f32", "outputs", "name",
                        "out0", "shape", 2048, "dtype", "f32", "reference", "language",
                        "pytorch", "source", forward, "tolerance", "rtol", 0.01, "atol", 1e-5)
           : json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                        " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                        "name", "p", "inputs", "name", "in0", "shape", 2048, 512, "dtype", "f32",
                        "name", "in1", "shape", 512, 1024, "dtype", "f32", "outputs", "name",
                        "out0", "shape", 2048, 1024, "dtype", "f32", "reference", "language",
                        "pytorch", "source", forward, "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static void
test_epilogue_call_cost (void)
{
    json_t *host = kf_test_epyc_host ();
    json_t *d = json_array_get (json_object_get (host, "devices"), 0);
    //  Round 46-47's task: a tanh over the product, each row summed.
    json_t *spec = s_product_spec ("    def forward(self, x, w):\n"
                                   "        return torch.tanh(x @ w / inner ** 0.5).sum(dim=1)\n",
                                   1);
    kf_formula_t fm;
    CHECK (kf_prompt_formula (spec, &fm) && fm.after_product == 1 && fm.after_vops == 16);
    kf_epilogue_t e;
    CHECK (kf_prompt_epilogue (spec, &e) && e.call_vops == 16);
    CHECK (e.vector_ops == e.ops + 16);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_text (f, spec, d));
    printf ("%s\n", text);
    CHECK (kf_test_has (text, "the call taken as about 16 operations an element (tanh: "
                              "an estimate of SIMD code near f32 precision"));
    CHECK (!kf_test_has (text, "exp's operation count"));
    free (text);
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_brief (f, spec, d));
    CHECK (kf_test_has (text, ", tanh as 16 in all;"));
    CHECK (!kf_test_has (text, "an exp as"));
    free (text);
    json_decref (spec);
    //  A softmax's exp stays an exp's count.
    spec = s_product_spec ("    def forward(self, x, w):\n"
                           "        return torch.softmax(x @ w, dim=-1)\n", 2);
    CHECK (kf_prompt_epilogue (spec, &e) && e.call_vops == KF_PROMPT_EXP_OPS);
    KF_TEST_CAPTURE (text, f, kf_prompt_epilogue_text (f, spec, d));
    CHECK (kf_test_has (text, "each call taken as about 10 operations an element (an estimate "
                              "from an exp's operation count"));
    free (text);
    json_decref (spec);
    //  Two calls of different costs: their sum.
    spec = s_product_spec ("    def forward(self, x, w):\n"
                           "        return torch.erf(x @ w) * torch.sigmoid(x @ w)\n", 2);
    CHECK (kf_prompt_formula (spec, &fm) && fm.after_vops == 16 + 13);
    json_decref (spec);
    json_decref (host);
}

int
main (void)
{
    test_epilogue_call_cost ();
    return kf_test_done ("test_round48");
}
