/*  test_prompt_round21.c - what round 21 of the model in the loop (issue
 *  15, docs/search.md "Twenty-first round") found in the prompts:
 *
 *  1. gelu(a @ b.T) + r read "compute: not known (the task gives no
 *     operation count)": a residual of the output's shape beside the two
 *     operands hid the product's 2*M*N*K;
 *  2. whether more threads than CPUs, to win CPU time from a busy host's
 *     other work, is allowed or gaming was not said;
 *  3. a threads try timed beside other work stayed "inconclusive" though
 *     its own one-core time, taken in the same evaluation, showed what its
 *     threads bought ("its threads buy 28%").
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_facts.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../coordinator/kf_search_idea.h"
#include "kf_json.h"
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
    //  Round 22: as a rule one a CPU, as the tuning prompt says too.
    CHECK (text && strstr (text, "As a rule start one thread a CPU; more pay only while other "
                                 "work takes CPU time"));
    free (text);
}

static void
test_one_core_verdict (void)
{
    const char *ideas[2] = { "use every core, by threads over contiguous ranges",
                             "skip the output's write-allocate read, by non-temporal "
                             "(streaming) stores" };
    //  Candidate 11: threads from candidate 4, both timed beside other
    //  work; on one CPU its own code took 28% longer than with its threads.
    json_t *tries = json_pack ("[{s:i, s:s, s:i, s:f, s:f, s:f, s:b, s:f, s:f}]", "id", 11,
                               "idea", ideas[0], "added", 1 << KF_IDEA_THREADS, "speedup", 40.69,
                               "parent_speedup", 26.66, "noise", 0.22, "loaded", 1,
                               "one_core_gain", 1.28, "own_noise", 0.05);
    bool aside[2];
    json_t *notes = kf_search_idea_record (ideas, 2, tries, aside);
    const char *note = kf_jstr (notes, ideas[0]);
    printf ("%s\n", note);
    CHECK (strstr (note, "tried: won against its own one-core time, timed beside other work "
                         "(its threads bought +28%; 40.69x vs parent 26.66x not like for like)"));
    CHECK (!aside[0]);
    json_decref (notes);
    //  Within its own noise: within noise, and the band said.
    json_object_set_new (json_array_get (tries, 0), "one_core_gain", json_real (1.02));
    notes = kf_search_idea_record (ideas, 2, tries, aside);
    CHECK (strstr (kf_jstr (notes, ideas[0]), "tried: within noise of +/-"));
    json_decref (notes);
    //  No one-core figure: inconclusive, as before.
    json_object_del (json_array_get (tries, 0), "one_core_gain");
    notes = kf_search_idea_record (ideas, 2, tries, aside);
    CHECK (strstr (kf_jstr (notes, ideas[0]), "inconclusive, timed beside other work"));
    json_decref (notes);
    //  Another idea the same try counts for is not judged by its threads.
    json_object_set_new (json_array_get (tries, 0), "one_core_gain", json_real (1.28));
    json_object_set_new (json_array_get (tries, 0), "idea", json_string (ideas[1]));
    notes = kf_search_idea_record (ideas, 2, tries, aside);
    CHECK (strstr (kf_jstr (notes, ideas[1]), "inconclusive, timed beside other work"));
    json_decref (notes);
    json_decref (tries);
}

int
main (void)
{
    test_flops ();
    test_threads_beyond ();
    test_one_core_verdict ();
    return kf_test_done ("test_prompt_round21");
}
