/*  test_prompt_round21.c - what round 21 of the model in the loop (issue
 *  15, docs/search.md "Twenty-first round") found in the prompts:
 *
 *  1. gelu(a @ b.T) + r read "compute: not known (the task gives no
 *     operation count)": a residual of the output's shape beside the two
 *     operands hid the product's 2*M*N*K;
 *  2. whether more threads than CPUs, to win CPU time from a busy host's
 *     other work, is allowed or gaming was not said.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_in (const char *name, long long rows, long long cols)
{
    return json_pack ("{s:s, s:[I, I], s:s}", "name", name, "shape", (json_int_t) rows,
                      (json_int_t) cols, "dtype", "f32");
}

//  mm_bt_gelu_residual: a [384][1024], b [768][1024] (nn.Linear's layout),
//  r [384][768], out [384][768].
static json_t *
s_spec (void)
{
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[o, o, o], s:[o], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm_bt_gelu_residual", "op", "mm_bt_gelu_residual",
                              "description", "gelu(a @ b.T) + r", "inputs", s_in ("in0", 384, 1024),
                              s_in ("in1", 768, 1024), s_in ("in2", 384, 768), "outputs",
                              s_in ("out0", 384, 768), "reference", "language", "pytorch",
                              "source",
                              "import torch\nimport torch.nn as nn\nimport torch.nn.functional "
                              "as F\n\n\nclass Model(nn.Module):\n    def forward(self, a, b, r):"
                              "\n        return F.gelu(a @ b.t()) + r\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    return spec;
}

static void
test_flops (void)
{
    json_t *spec = s_spec ();
    CHECK (kf_prompt_task_class (spec) == KF_CLASS_MATMUL);
    long long mnk[3] = { 0, 0, 0 };
    double flops = kf_prompt_matmul_flops (spec, mnk);
    printf ("flops %.0f, m %lld n %lld k %lld\n", flops, mnk[0], mnk[1], mnk[2]);
    CHECK (flops == 2.0 * 384 * 768 * 1024);
    CHECK (mnk[0] == 384 && mnk[1] == 768 && mnk[2] == 1024);
    //  The prompt of a timed kernel counts it.
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f, s:f}", "id", 4, "source", "CODE",
                              "status", "correct", "speedup", 29.66, "candidate_ns", 10.9e6,
                              "reference_ns", 323.3e6);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base };
    char *p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, "compute: not known"));
    CHECK (p && strstr (p, "2*M*N*K = 2*384*768*1024"));
    free (p);
    json_decref (base);
    //  A third matrix of another shape (two layers?): no count.
    json_t *inputs = json_object_get (spec, "inputs");
    json_array_append_new (inputs, s_in ("w2", 768, 768));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 0);
    json_array_remove (inputs, 3);
    //  Square: every matrix the output's shape; one count from every pair.
    for (size_t i = 0; i < 3; i++)
        json_object_set_new (json_array_get (inputs, i), "shape", json_pack ("[i, i]", 512, 512));
    json_object_set_new (json_array_get (json_object_get (spec, "outputs"), 0), "shape",
                         json_pack ("[i, i]", 512, 512));
    CHECK (kf_prompt_matmul_flops (spec, NULL) == 2.0 * 512 * 512 * 512);
    json_decref (spec);
}

static void
test_threads_beyond (void)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_host_call_facts (f);
    fclose (f);
    CHECK (text && strstr (text, "Threads beyond the CPUs the kernel may use (the Target "
                                 "section's count) are allowed"));
    CHECK (text && strstr (text, "size the threads to the CPUs rather than to the host's other "
                                 "work"));
    free (text);
}

int
main (void)
{
    test_flops ();
    test_threads_beyond ();
    return kf_test_done ("test_prompt_round21");
}
