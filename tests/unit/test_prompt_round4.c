/*  test_prompt_round4.c - what the model of round 4 flagged as missing or
 *  wrong in the kernel and tuning prompts (docs/prompts.md, "Fourth
 *  round"), one block each:
 *
 *  - the run's other finished candidates, not shown otherwise, are listed
 *    one line each (idea, verdict, time, protocol, failure line);
 *  - this attempt's idea says where the run tried it before and how;
 *  - which kernels the siblings start from, as far as the plan knows;
 *  - the version of the evolvable sections;
 *  - the coordinates' axes in the target's words;
 *  - outputs resident, the stack sizes, ns per output element, the
 *    nn.Linear weight layout, the kf-tune line grammar, and the sections
 *    marked as background in a tuning prompt.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_history.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static long
s_at (const char *hay, const char *needle)
{
    const char *p = hay ? strstr (hay, needle) : NULL;
    return p ? (long) (p - hay) : -1;
}

static int
s_count (const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = hay; p && (p = strstr (p, needle)); p += strlen (needle))
        n++;
    return n;
}

//  The gemm of round 4: an nn.Linear, then sigmoid * scale + residual.
static json_t *
s_gemm (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                      " {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                      " s:{s:f, s:f}}",
                      "name", "gsr", "op", "linear", "description", "Linear, sigmoid, residual.",
                      "inputs", "name", "in0", "shape", 128, 512, "dtype", "f32", "name",
                      "linear_weight", "shape", 768, 512, "dtype", "f32", "name", "linear_bias",
                      "shape", 768, "dtype", "f32", "outputs", "name", "out0", "shape", 128, 768,
                      "dtype", "f32", "reference", "language", "pytorch", "source",
                      "class Model(nn.Module):\n    def __init__(self):\n        self.linear = "
                      "nn.Linear(512, 768)\n", "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_mish (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "mish", "op", "elementwise", "description", "Mish, then clamp.",
                      "inputs", "name", "in0", "shape", 4096, "dtype", "f32", "outputs",
                      "name", "out0", "shape", 4096, "dtype", "f32", "reference", "language",
                      "pytorch", "source", "return torch.clamp(F.mish(x), -1, 1)", "tolerance",
                      "rtol", 0.01, "atol", 1e-5);
}

static json_t *
s_kernel (int id, double speedup, const char *coords)
{
    return json_pack ("{s:i, s:s, s:s, s:f, s:s, s:f, s:f, s:s}", "id", id, "source",
                      "int kf_forward (void) { return 0; }", "status", "correct", "speedup",
                      speedup, "coords", coords, "candidate_ns", 4.06e6, "reference_ns", 15e6,
                      "fidelity", "full");
}

//  A finished candidate as kf_prompt_history reads it.
static json_t *
s_done (int id, int gen, int slot, const char *status, double ns, const char *fidelity)
{
    json_t *c = json_pack ("{s:i, s:i, s:i, s:s, s:i, s:s}", "id", id, "generation", gen,
                           "slot", slot, "phase", "search", "parent_id", 1, "status", status);
    if (!strcmp (status, "correct")) {
        json_object_set_new (c, "candidate_ns", json_real (ns));
        json_object_set_new (c, "speedup", json_real (15e6 / ns));
        json_object_set_new (c, "fidelity", json_string (fidelity));
    }
    return c;
}

//  1: the run's other results, bounded, without what is shown already.
static void
s_other_results (void)
{
    json_t *spec = s_gemm (), *base = s_kernel (2, 3.7, "{1,0,1}");
    json_t *history = json_array ();
    //  Not judged yet: one of generation 0 (a result to wait for), one of
    //  this generation (a sibling: not a result).
    json_t *open0 = s_done (12, 0, 0, "pending", 0, NULL);
    json_object_set_new (open0, "finished", json_false ());
    json_array_append_new (history, open0);
    json_t *open2 = s_done (13, 2, 1, "pending", 0, NULL);
    json_object_set_new (open2, "finished", json_false ());
    json_array_append_new (history, open2);
    json_array_append_new (history, s_done (2, 0, 1, "correct", 4.06e6, "full"));
    json_array_append_new (history, s_done (6, 0, 2, "correct", 4.58e6, "screen"));
    json_t *bad = s_done (7, 1, 0, "compile_failed", 0, NULL);
    json_object_set_new (bad, "log", json_string ("k.c: In function 'kf_forward':\n"
                                                  "k.c:3:5: error: expected ';' before '}'\n"
                                                  "more\n"));
    json_array_append_new (history, bad);
    json_t *wrong = s_done (9, 1, 1, "incorrect", 0, NULL);
    json_object_set_new (wrong, "detail", json_string ("out0: 12.5% of elements off\nsecond"));
    json_array_append_new (history, wrong);
    json_t *again = s_done (11, 1, 2, "correct", 4.06e6, "full");
    json_object_set_new (again, "detail", json_string ("the same source as candidate 2 once "
                                                       "comments and spacing are removed"));
    json_array_append_new (history, again);
    for (int i = 0; i < 10; i++)
        json_array_append_new (history, s_done (20 + i, 0, 0, "correct", 5e6, "full"));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .generation = 2, .slot = 0, .population = 3, .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "\n## Other results so far\nThe run's other candidates, newest first "
                           "(those not judged yet on top), that this prompt does not show above"));
    CHECK (kf_test_has (p, "- candidate 12 (generation 0, attempt 1: use each loaded value several "
                           "times from registers, by a register-blocked micro-kernel of dot products "
                           "along k"));
    CHECK (kf_test_has (p, "; from candidate 1): not judged yet (still being written, compiled "
                           "or timed)\n"));
    CHECK (!kf_test_has (p, "- candidate 13 ("));
    CHECK (kf_test_has (p, "- candidate 6 (generation 0, attempt 3: use every core, by output blocks "
                           "split across threads, each thread's share of the operand it "
                           "re-reads kept in its own L2"));
    CHECK (kf_test_has (p, "; from candidate 1): correct, 4.58 ms (3.28x), screen timing only\n"));
    CHECK (kf_test_has (p, "- candidate 7 (generation 1, attempt 1: "));
    CHECK (kf_test_has (p, "did not compile: k.c:3:5: error: expected ';' before '}'\n"));
    CHECK (kf_test_has (p, "- candidate 9 (generation 1, attempt 2: "));
    CHECK (kf_test_has (p, "wrong results: out0: 12.5% of elements off\n"));
    CHECK (kf_test_has (p, "- candidate 11 (generation 1, attempt 3: "));
    CHECK (kf_test_has (p, "repeated candidate 2's source (not judged again; its verdict: correct at "
                           "3.69x)\n"));
    CHECK (!kf_test_has (p, "- candidate 2 ("));          //  the kernel to improve, shown above
    CHECK (s_count (p, "\n- candidate ") == KF_PROMPT_OTHER_RESULTS);
    CHECK (s_at (p, "## Other results so far") > s_at (p, "## Kernel to improve"));
    CHECK (s_at (p, "## Other results so far") > 0
           && s_at (p, "## Other results so far") < s_at (p, "## This attempt"));
    free (p);
    //  Without a history (or in a tuning prompt) there is no section.
    in.history = NULL;
    p = kf_prompt_build (&in);
    CHECK (!kf_test_has (p, "## Other results so far"));
    free (p);
    json_decref (history);
    json_decref (base);
    json_decref (spec);
}

//  2: this attempt's idea, with where the run tried it before.
static void
s_idea_tried (void)
{
    json_t *spec = s_gemm (), *base = s_kernel (10, 6.4, "{1,0,1}");
    json_t *history = json_array ();
    json_array_append_new (history, s_done (5, 0, 1, "correct", 2.45e6, "full"));
    json_array_append_new (history, s_done (6, 0, 2, "correct", 4.58e6, "screen"));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .generation = 2, .slot = 1, .population = 3, .history = history };
    //  The premise: gen 2 slot 1 and gen 0 slot 1 share an idea (six
    //  ideas: gen 2 starts again at the first).
    CHECK (!strcmp (kf_prompt_idea_at (&in, 2, 1), kf_prompt_idea_at (&in, 0, 1)));
    CHECK (strcmp (kf_prompt_idea_at (&in, 2, 1), kf_prompt_idea_at (&in, 0, 2)));
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "This attempt's idea: keep the rows of x and W that are reused in L1/L2, "
                           "by cache blocking over the rows of both and over k. Tried before in this "
                           "run (newest first): candidate 5 (generation 0): correct, "
                           "2.45 ms (6.12x), full protocol. Learn from how that went"));
    //  The parent-already-does-it clause stays.
    CHECK (kf_test_has (p, "If the kernel to improve already does what this attempt's idea says, "
                           "change how it does it"));
    free (p);
    //  Round 10: a try not judged yet has nothing to learn from yet.
    json_object_set_new (json_array_get (history, 0), "finished", json_false ());
    p = kf_prompt_build (&in);
    //  Round 11: nor a way to differ from code no prompt shows.
    CHECK (kf_test_has (p, "How that went is not known yet, and its code is not shown"));
    CHECK (!kf_test_has (p, "another way than that try"));
    CHECK (!kf_test_has (p, "Learn from how that went"));
    free (p);
    json_object_del (json_array_get (history, 0), "finished");
    //  Round 10: "if it failed or lost" when the try is the run's best.
    in.best = json_array_get (history, 0);
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "2.45 ms (6.12x), full protocol. Candidate 5 is the run's best kernel so "
                           "far: this idea won there, so take it further than that try did"));
    CHECK (!kf_test_has (p, "if it failed or lost"));
    free (p);
    in.best = NULL;
    //  A new idea says so (gen 1 slot 0: the fourth idea; gen 0 took the
    //  first three).
    in.generation = 1;
    in.slot = 0;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "No earlier candidate of this run has tried it yet."));
    free (p);
    json_decref (history);
    json_decref (base);
    json_decref (spec);
}

//  3: which kernels the siblings start from.
static void
s_sibling_parents (void)
{
    json_t *spec = s_mish (), *base = s_kernel (2, 3.7, "{1,0,1}");
    json_t *siblings = json_pack ("[{s:i, s:i}]", "slot", 0, "parent_id", 2);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .generation = 1, .slot = 1, .population = 3, .siblings = siblings };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, " Where the siblings start: attempt 1 starts from candidate 2, the same "
                           "kernel as this attempt. One sibling is planned after this one and draws "
                           "its kernel to improve from the archive's cells when it is, possibly this "
                           "same kernel."));
    CHECK (!kf_test_has (p, "usually starts from"));
    free (p);
    json_decref (siblings);
    siblings = json_pack ("[{s:i, s:i}, {s:i}]", "slot", 0, "parent_id", 1, "slot", 2);
    in.siblings = siblings;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, " Where the siblings start: attempt 1 starts from candidate 1; attempt 3 "
                           "writes its kernel from scratch. Siblings that share"));
    CHECK (!kf_test_has (p, "planned after this one"));
    free (p);
    json_decref (siblings);
    json_decref (base);
    json_decref (spec);
}

//  4: the sections' version.
static void
s_version (void)
{
    json_t *spec = s_mish ();
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host",
                          .prompt_version = 2, .prompt_version_generation = 2 };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "(The four sections below are of prompt version v2, rewritten by the "
                           "meta-prompter at generation 2 from the outcomes so far.)"));
    CHECK (s_at (p, "prompt version v2") > 0
           && s_at (p, "prompt version v2") < s_at (p, "## Optimisation philosophy"));
    free (p);
    in.prompt_version = 1;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "(The four sections below are the original ones, prompt version v1"));
    free (p);
    json_decref (spec);
}

//  5: the axes in the target's words.
static void
s_axes (void)
{
    json_t *spec = s_mish (), *base = s_kernel (2, 3.7, "{1,0,1}");
    json_t *insp = json_pack ("[o]", s_kernel (4, 2.0, "{0,0,0}"));
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .inspirations = insp };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "### Inspiration 1, of the archive's cell {0,0,0}: memory scalar, algorithm direct, threads one thread"));
    CHECK (!kf_test_has (p, "sync)"));
    free (p);
    in.templated = true;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "this one's cell is {1,0,1}: memory SIMD, algorithm direct, threads fork-join"));
    free (p);
    json_decref (insp);
    json_decref (base);
    json_decref (spec);
}

//  6: the small facts.
static void
s_facts (void)
{
    json_t *spec = s_mish (), *base = s_kernel (2, 3.7, "{1,0,1}");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "Outputs are written by the judge before every call (a NaN pattern, so a "
                           "stale result is caught), so their pages are resident when kf_forward "
                           "starts"));
    CHECK (kf_test_has (p, "kf_forward runs on the main thread of the candidate's own process, whose "
                           "stack is the exec host's stack limit (RLIMIT_STACK"));
    CHECK (kf_test_has (p, "threads you start get glibc's default stack"));
    //  Round 6: a stack buffer of a thread started per call faults its
    //  pages in again on every call (2x slower); where to keep it instead.
    CHECK (kf_test_has (p, "A thread's stack is released when the thread exits"));
    CHECK (kf_test_has (p, "a large buffer on the stack of a thread created in each call is faulted "
                           "in again"));
    CHECK (kf_test_has (p, "on the calling thread's stack (kf_forward's own), in blocks kf_forward "
                           "takes from ctx->scratch_alloc and hands to the threads, or in a "
                           "static scratch buffer allocated once and reused"));
    //  4.06 ms over 4096 elements.
    CHECK (kf_test_has (p, "Per output element: 991 ns (4096 output elements at the main shape); the "
                           "reference 3.66e+03 ns."));
    CHECK (!kf_test_has (p, "Layout of the linear layer"));
    //  Round 9: no hardware known here, so no cycles; with the host's
    //  measured clock and one core's peak, the element's time in both.
    CHECK (!kf_test_has (p, "cycles an element"));
    free (p);
    in.hardware = json_pack ("{s:[{s:f, s:f}]}", "devices", "clock_mhz_measured", 3630.0,
                             "peak_gflops_one_core", 226.0);
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "the reference 3.66e+03 ns. That is 3.6e+03 cycles an element at the "
                           "measured clock (3630 MHz), time in which one core at its measured FMA "
                           "peak does 224014 f32 flops"));
    json_decref (in.hardware);
    in.hardware = NULL;
    //  Not a tuning prompt: the sections are not background.
    CHECK (!kf_test_has (p, "they are background"));
    free (p);
    //  On a GPU none of the host's call facts.
    kf_prompt_in_t gpu = { .spec = spec, .language = "cuda", .target = "cuda:sm_90" };
    p = kf_prompt_build (&gpu);
    CHECK (!kf_test_has (p, "RLIMIT_STACK"));
    CHECK (!kf_test_has (p, "A thread's stack is released"));
    free (p);
    json_decref (spec);

    //  A GEMM has a derived operation count: no per-element line; the
    //  weight's layout is said.
    spec = s_gemm ();
    in.spec = spec;
    p = kf_prompt_build (&in);
    CHECK (!kf_test_has (p, "Per output element"));
    CHECK (kf_test_has (p, "Layout of the linear layer: nn.Linear and F.linear store the weight as "
                           "[out_features][in_features] (row-major), here linear_weight [768][512]: "
                           "in y = x @ W^T both x's rows and W's rows are contiguous along the "
                           "reduction dimension (in_features), so neither operand needs a "
                           "transpose"));
    free (p);

    //  The tuning prompt: the kf-tune grammar, code paths, background.
    in.templated = true;
    in.tune_points = 8;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "A line is read as a kf-tune line when \"kf-tune:\" is preceded on it "
                           "only by blanks, '/' and '*': `/* kf-tune: A=1,2 B=4,8 */` on a line of "
                           "its own, `// kf-tune: A=1,2` and ` * kf-tune: A=1,2` inside a block "
                           "comment all count"));
    CHECK (kf_test_has (p, "a template may add code that follows a parameter"));
    //  Round 12: the kernel-writing sections and the other task's
    //  example cost a tuning prompt tokens and say nothing to it.
    CHECK (!kf_test_has (p, "## Optimisation philosophy") && !kf_test_has (p, "## Common pitfalls")
           && !kf_test_has (p, "## Before you write code") && !kf_test_has (p, "## Example"));
    CHECK (!kf_test_has (p, "prompt version v"));
    free (p);
    in.templated = false;
    p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "## Optimisation philosophy") && kf_test_has (p, "## Example"));
    free (p);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    s_other_results ();
    s_idea_tried ();
    s_sibling_parents ();
    s_version ();
    s_axes ();
    s_facts ();
    return kf_test_done ("test_prompt_round4");
}
