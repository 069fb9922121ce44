/*  test_round51.c - what round 51 of the model in the loop (issue 15,
 *  docs/search.md "Fifty-first round") found in (x @ u) @ v, a rank-64
 *  chain of two products:
 *
 *  1. its prompts read "compute: not known (the task gives no operation
 *     count)": a chain's operations are 2 M R (K + N)
 *     (kf_prompt_chain_flops), and the Target section's compute floor
 *     says both products;
 *  2. its ideas spoke of one product of in0 by in1, where in1 is 64
 *     floats wide and in2 is the operand the output's tile walks down:
 *     the floor line says whose place each takes;
 *  3. it was handed "fusing the epilogue (bias, activation)", which it
 *     has not: its own fusion, the chain's, takes that idea's place.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../common/kf_json.h"
#include "../kf_test.h"
#include "../kf_test_text.h"

#include <stdlib.h>
#include <string.h>

static json_t *
s_chain (const char *forward)
{
    return json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name", "ch",
                      "inputs", "name", "in0", "shape", 2048, 512, "dtype", "f32", "name", "in1",
                      "shape", 512, 64, "dtype", "f32", "name", "in2", "shape", 64, 1024,
                      "dtype", "f32", "outputs", "name", "out0", "shape", 2048, 1024, "dtype",
                      "f32", "reference", "language", "pytorch", "source", forward, "tolerance",
                      "rtol", 0.01, "atol", 1e-5);
}

static void
test_chain (void)
{
    json_t *host = kf_test_epyc_host ();
    json_t *d = json_array_get (json_object_get (host, "devices"), 0);
    json_t *spec = s_chain ("    def forward(self, x, u, v):\n"
                            "        return (x @ u) @ v\n");
    long long c[4] = { 0, 0, 0, 0 }, mnk[3] = { 0, 0, 0 };
    double flops = kf_prompt_chain_flops (spec, c);
    printf ("chain: %.0f operations, M %lld K %lld R %lld N %lld\n", flops, c[0], c[1], c[2],
            c[3]);
    CHECK (flops == 2.0 * 2048 * 64 * (512 + 1024));
    CHECK (c[0] == 2048 && c[1] == 512 && c[2] == 64 && c[3] == 1024);
    CHECK (kf_prompt_product_flops (spec, mnk) == flops && mnk[0] == 2048 && mnk[1] == 1024
           && mnk[2] == 64);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_task_product_line (f, spec, d));
    printf ("%s\n", text ? text : "(none)");
    CHECK (kf_test_has (text, "Compute floor: the chain's two products, 2 x M x K x R for the "
                              "[M][R] intermediate (M = 2048, K = 512, R = 64: 134.2 million) "
                              "and 2 x M x R x N for the output (N = 1024: 268.4 million), "
                              "402.7 million operations in all"));
    CHECK (kf_test_has (text, "for this chain's second product the intermediate takes in0's "
                              "place and in2 (rows of 1024 floats) in1's; the first product's "
                              "in1 is only 64 floats wide"));
    free (text);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    bool chained = false, bias = false;
    for (size_t i = 0; i < n; i++) {
        chained |= kf_test_has (ideas[i], "by chaining the two products a block of rows at a "
                                          "time") && kf_test_has (ideas[i], "the [2048][64] "
                                                                            "intermediate (512 KiB)");
        bias |= strstr (ideas[i], "(bias, activation)") != NULL;
    }
    CHECK (chained && !bias);
    json_decref (spec);
    //  One product with an epilogue input of the output's shape is no
    //  chain, nor are two products of one operand.
    spec = s_chain ("    def forward(self, x, u, v):\n"
                    "        return x @ u\n");
    CHECK (kf_prompt_chain_flops (spec, NULL) == 0);
    json_decref (spec);
    json_decref (host);
}

int
main (void)
{
    test_chain ();
    return kf_test_done ("test_round51");
}
