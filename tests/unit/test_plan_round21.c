/*  test_plan_round21.c - what round 21 of the model in the loop (issue
 *  15, docs/search.md "Twenty-first round") found in the plan: streaming
 *  stores went twice to kernels of signed log1p bound by their
 *  arithmetic (about 36 cycles a vector against a memory budget of about
 *  21). Stores that skip the read of their line save memory time only:
 *  such a kernel now counts as unfit for them (kf_search_idea_arith_bound),
 *  the idea moves to a kernel of the pool near its budget, or the slot
 *  passes to another idea, and the prompt says why.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include "../kf_test_plan.h"
#include <stdlib.h>
#include <string.h>

#define S_BIT(f) (1u << (f))

//  signed_log1p_gate: two 2048 x 4096 f32 inputs, one output.
static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s}],"
                      " s:[{s:s, s:[i, i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "signed_log1p_gate", "op", "signed_log1p_gate", "description",
                      "sign(a) log1p(|a|) sigmoid(b)", "inputs", "name", "in0", "shape", 2048,
                      4096, "dtype", "f32", "name", "in1", "shape", 2048, 4096, "dtype", "f32",
                      "outputs", "name", "out0", "shape", 2048, 4096, "dtype", "f32",
                      "reference", "language", "pytorch", "source",
                      "def forward(self, a, b):\n"
                      "    return torch.sign(a) * torch.log1p(a.abs()) * torch.sigmoid(b)\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  Round 21's host: 2 cores (AVX2) at 3000 MHz, one core's cold read
//  18.9 GB/s, its streaming writes 20 GB/s.
static json_t *
s_host (void)
{
    return json_pack ("{s:s, s:s, s:[{s:s, s:i, s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:s}]}",
                      "backend", "host", "compile_isa", "sse4.2 avx2", "devices", "name",
                      "AMD EPYC", "cores", 2, "physical_cores", 2, "clock_mhz_measured", 3000.0,
                      "read_cold_one_core_gbs", 18.9, "read_cold_all_cores_gbs", 30.0,
                      "write_stream_one_core_gbs", 20.0, "write_stream_all_cores_gbs", 25.0,
                      "thread_start_join_us", 25.2, "isa", "sse4.2 avx2");
}

static const char *s_one_thread =
    "#include <immintrin.h>\n"
    "int kf_forward (const float *a, const float *b, float *out, long n)\n"
    "{ for (long i = 0; i < n; i += 8) _mm256_storeu_ps (out + i, _mm256_loadu_ps (a + i));\n"
    "  return 0; }\n";

static json_t *
s_kernel (double ns)
{
    return json_pack ("{s:s, s:f}", "source", s_one_thread, "candidate_ns", ns);
}

static void
test_bound (void)
{
    json_t *spec = s_spec (), *hw = s_host ();
    double cycles, budget;
    //  Candidate 1: 11.5 ms on one core.
    json_t *k = s_kernel (11.5e6);
    CHECK (kf_search_idea_arith_bound (k, spec, hw, KF_TARGET_HOST, &cycles, &budget));
    printf ("11.5 ms: %.1f cycles a vector, budget %.1f\n", cycles, budget);
    CHECK (cycles > 32 && cycles < 34);
    CHECK (budget > 19 && budget < 21);
    json_decref (k);
    //  Candidate 7: 7.02 ms, at one core's cold read rate.
    k = s_kernel (7.02e6);
    CHECK (!kf_search_idea_arith_bound (k, spec, hw, KF_TARGET_HOST, &cycles, &budget));
    printf ("7.02 ms: %.1f cycles a vector, budget %.1f\n", cycles, budget);
    //  Not on a GPU, and not with no time.
    CHECK (!kf_search_idea_arith_bound (k, spec, hw, KF_TARGET_CUDA, &cycles, &budget));
    json_decref (k);
    k = json_pack ("{s:s}", "source", s_one_thread);
    CHECK (!kf_search_idea_arith_bound (k, spec, hw, KF_TARGET_HOST, &cycles, &budget));
    json_decref (k);
    json_decref (hw);
    json_decref (spec);
}

//  The plan from candidate 1 (elite 0) with the streaming idea in the
//  slot's place; ARITH the elites' flags (NULL: the plan before round 21).
static size_t
s_plan (const char *const *ideas, size_t n, size_t idea, const kf_elite_t *elites,
        const unsigned *features, size_t n_elites, const bool *arith, int *pick)
{
    return kf_test_plan (ideas, n, idea, elites, features, n_elites, KF_TEST_PLAN_ARITH, arith,
                         pick);
}

static void
test_plan (void)
{
    json_t *spec = s_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t stream = n;
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_STREAM)
            stream = i;
    CHECK (stream < n);
    if (stream >= n) {
        json_decref (spec);
        return;
    }
    kf_elite_t elites[2] = { { .candidate_id = 1, .speedup = 16.1, .island = 0 },
                             { .candidate_id = 7, .speedup = 26.5, .island = 0 } };
    unsigned simd = S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_APPROX);
    unsigned features[2] = { simd, simd };
    int pick = -1;
    //  Before: streaming stores on candidate 1, bound by its arithmetic.
    CHECK (s_plan (ideas, n, stream, elites, features, 2, NULL, &pick) == stream);
    CHECK (pick == -1);
    //  Now: on candidate 7, near its budget.
    bool one[2] = { true, false };
    CHECK (s_plan (ideas, n, stream, elites, features, 2, one, &pick) == stream);
    CHECK (pick == 1);
    //  Both bound by their arithmetic: another idea.
    bool both[2] = { true, true };
    size_t got = s_plan (ideas, n, stream, elites, features, 2, both, &pick);
    CHECK (got != stream);
    printf ("both arithmetic-bound: idea %zu (%s)\n", got, got < n ? ideas[got] : "?");
    json_decref (spec);
}

//  Why the attempt starts elsewhere, in the prompt.
static void
test_moved (void)
{
    json_t *spec = s_spec ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 7, "source", s_one_thread, "status",
                              "correct", "speedup", 26.5);
    json_t *plan = json_pack ("{s:s, s:{}, s:[], s:{s:I, s:s}}", "mine",
                              "cut the bytes with streaming stores", "notes", "aside", "moved",
                              "from", (json_int_t) 1, "why", "arith");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 1, .slot = 2, .population = 3,
                          .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "The archive offered candidate 1 for this attempt; that kernel's "
                           "time is its arithmetic"));
    CHECK (p && strstr (p, "streaming stores save memory time only, so the attempt starts "
                           "from this kernel instead."));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    test_bound ();
    test_plan ();
    test_moved ();
    return kf_test_done ("test_plan_round21");
}
