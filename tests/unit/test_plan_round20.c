/*  test_plan_round20.c - what round 20 of the model in the loop (issue
 *  15, docs/search.md "Twentieth round") found in the plan: ideas whose
 *  text takes vectorised math as given ("threads ... once each element's
 *  math is vectorised", unrolling, streaming stores) were handed to the
 *  plain-C first kernel, whose loops the compiler had not vectorised,
 *  three times in one generation; each try vectorised it as well, and
 *  the siblings came out near-identical. Such an idea now goes to a
 *  kernel of the pool whose math is vectorised, and a scalar kernel is
 *  handed an idea without that premise, and the prompt says why the
 *  attempt starts elsewhere than the archive's choice.
 */
#include "../../coordinator/kf_lineage.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include "../kf_test_text.h"
#include "../kf_test_plan.h"
#include <stdlib.h>
#include <string.h>

#define S_BIT(f) (1u << (f))

//  Whether IDEA takes vectorised math as given (round 20's reading, now
//  the general premise's, kf_prompt_idea_premise).
static bool
s_needs_vectors (const char *idea)
{
    return kf_prompt_idea_premise (idea) & KF_PREMISE_VECTORS;
}

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "t", "op", "asinh_gate", "description", "a task", "inputs",
                      "name", "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 4096, "dtype", "f32", "reference", "language", "pytorch",
                      "source", "def forward(self, x):\n    return torch.asinh(x) * 2\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

//  The plan from candidate 1 (plain C) among ELITES, with the kernels'
//  scalar flags as SCALAR says (NULL: none known, the plan before round
//  20).
static size_t
s_plan (const char *const *ideas, size_t n, size_t idea, const kf_elite_t *elites,
        const unsigned *features, size_t n_elites, const bool *scalar, int *pick)
{
    return kf_test_plan (ideas, n, idea, elites, features, n_elites, KF_TEST_PLAN_SCALAR,
                         scalar, pick);
}

//  The prompt says why the attempt starts elsewhere than the archive's
//  choice ("Chosen from the archive" read as chance).
static void
s_moved_words (json_t *spec, const char *idea)
{
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 3, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 37.6);
    json_t *best = json_pack ("{s:i, s:s, s:s, s:f}", "id", 2, "source",
                              "int kf_forward (void) { return 1; }", "status", "correct",
                              "speedup", 60.25);
    json_t *plan = json_pack ("{s:s, s:{}, s:[], s:{s:I, s:s}}", "mine", idea, "notes", "aside",
                              "moved", "from", (json_int_t) 1, "why", "scalar");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = best, .generation = 1, .slot = 0, .population = 3,
                          .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "## Kernel to improve (candidate 3)\nIt is not the fastest kernel "
                           "found so far.\nThe archive offered candidate 1 for this attempt; "
                           "this attempt's idea takes vectorised math as given, and that "
                           "kernel's math is scalar (no explicit SIMD, and the compiler "
                           "vectorised none of its loops), so the attempt starts from this "
                           "kernel instead."));
    CHECK (p && !strstr (p, "Chosen from the archive"));
    free (p);
    //  Round 22: the one reason that held, not three joined by "or".
    json_object_set_new (json_object_get (plan, "moved"), "why", json_string ("code"));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "The archive offered candidate 1 for this attempt; that kernel's "
                           "code does this attempt's idea already, so the attempt starts"));
    CHECK (p && !strstr (p, "or it is predicted not to pay there"));
    free (p);
    json_object_set_new (json_object_get (plan, "moved"), "why", json_string ("sibling"));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "The archive offered candidate 1 for this attempt; a sibling of this "
                           "generation takes this idea from that kernel, so"));
    free (p);
    //  Not moved: the archive's choice, as before.
    json_object_del (plan, "moved");
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Chosen from the archive of distinct approaches"));
    CHECK (p && !strstr (p, "The archive offered"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (best);
}

//  The meta prompt's outcomes carry the vectoriser's report, which the
//  kernel prompts gave and the meta-prompter quoted from memory.
static void
s_meta_report (void)
{
    json_t *run = json_pack ("{s:s, s:s, s:{s:s}}", "language", "c", "target", "host", "spec",
                             "name", "signed_cbrt_tanh");
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "Elementwise.",
                                  "strategies", "- Vectorise the loop.", "pitfalls", "- Tails.",
                                  "analysis", "1. What binds?");
    json_t *outcomes = json_pack (
        "[{s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s},"
        " {s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s}]",
        "candidate_id", 1, "generation", 0, "phase", "search", "parent_id", 0, "status",
        "correct", "speedup", 4.35, "fidelity", "full", "vec_report",
        "Compiler report (GCC's vectoriser, -fopt-info-vec, on this build): 0 loops "
        "vectorised, 1 not.\n- line 102: not vectorised because of a branch in the loop "
        "(control flow in loop): an if `x`\n- line 120: not vectorised: it calls cbrtf\n"
        "- line 130: a third\n",
        "candidate_id", 2, "generation", 0, "phase", "search", "parent_id", 0, "status",
        "correct", "speedup", 60.25, "fidelity", "full", "vec_report",
        "Compiler report (GCC's vectoriser, -fopt-info-vec, on this build): 0 loops "
        "vectorised, 3 not.\nThis code is explicit SIMD (intrinsics or vector types): the "
        "report is about ...\n- line 40: not vectorised: loop of vectors\n");
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (p && strstr (p, "\n  vectoriser: 0 loops vectorised, 1 not; line 102: not "
                           "vectorised because of a branch in the loop (control flow in "
                           "loop): an if  x ; line 120: not vectorised: it calls cbrtf\n"));
    CHECK (p && !strstr (p, "a third"));
    CHECK (p && strstr (p, "\n  vectoriser: 0 loops vectorised, 3 not (explicit SIMD: the "
                           "report is of GCC's auto-vectoriser only); line 40: not "
                           "vectorised: loop of vectors\n"));
    free (p);
    json_decref (outcomes);
    json_decref (sections);
    json_decref (run);
}

//  A timing the exec worker took again after a quiet moment says so in
//  the outcome's line (kf_backend_host.c, s_time_again).
static void
s_retimed_words (json_t *spec, const char *idea)
{
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:b, s:f,"
                                 " s:{s:i, s:f, s:f}, s:{s:f, s:b, s:s}}]",
                                 "id", 8, "generation", 1, "slot", 1, "phase", "search",
                                 "parent_id", 3, "status", "correct", "speedup", 30.1,
                                 "fidelity", "full", "idea", idea, "finished", 1,
                                 "candidate_ns", 1.05e7, "host_load", "cpus", 2,
                                 "runnable_others", 0.0, "others_cpu_share", 0.02, "retimed",
                                 "waited_s", 1.02, "quiet", 1, "kept", "second");
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 3, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 37.6);
    json_t *plan = json_pack ("{s:s, s:{}, s:[]}", "mine", idea, "notes", "aside");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 2, .slot = 0, .population = 3,
                          .ideas = plan, .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "; timed twice, the first time beside other work: the exec worker "
                           "waited 1.0 s for a quiet host, and the second timing, the less "
                           "disturbed, stands"));
    free (p);
    json_object_set_new (json_object_get (json_array_get (history, 0), "retimed"), "quiet",
                         json_false ());
    json_object_set_new (json_object_get (json_array_get (history, 0), "retimed"), "kept",
                         json_string ("first"));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "waited 1.0 s for a quiet host (none came), and the first timing"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (history);
}

//  A kernel counts as doing an idea of several parts only where its code
//  added every part: candidate 5 (a register tile in cache blocks, no
//  packing) was said to do "blocking, packing and micro-kernel as one
//  change" too.
static void
s_parts (void)
{
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i, i], s:s}, {s:s, s:[i, i], s:s}],"
                              " s:[{s:s, s:[i, i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "mm", "op", "mm", "description", "a @ b",
                              "inputs", "name", "in0", "shape", 512, 768, "dtype", "f32",
                              "name", "in1", "shape", 768, 1024, "dtype", "f32",
                              "outputs", "name", "out0", "shape", 512, 1024, "dtype", "f32",
                              "reference", "language", "pytorch", "source",
                              "import torch\nimport torch.nn as nn\n\n\n"
                              "class Model(nn.Module):\n"
                              "    def forward(self, a, b):\n"
                              "        return a @ b\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *whole = NULL;
    //  A register tile on its own (a list whose operands' layout is not
    //  read has it apart).
    const char *tile = "use each loaded value several times from registers, by a "
                       "register-blocked micro-kernel";
    for (size_t i = 0; i < n; i++)
        if (strstr (ideas[i], "as one change"))
            whole = ideas[i];
    CHECK (whole != NULL);
    if (!whole) {
        json_decref (spec);
        return;
    }
    unsigned parts = S_BIT (KF_IDEA_MICRO) | S_BIT (KF_IDEA_BLOCK) | S_BIT (KF_IDEA_PACK);
    CHECK (kf_prompt_idea_bits (whole) == parts);
    CHECK (kf_prompt_idea_bits (tile) == S_BIT (KF_IDEA_MICRO));
    bool by_code = true;
    //  Candidate 5: a register tile and cache blocks, handed threads.
    CHECK (!kf_prompt_try_counts ("use every core, by threads", S_BIT (KF_IDEA_MICRO)
                                  | S_BIT (KF_IDEA_BLOCK), whole, &by_code));
    CHECK (!by_code);
    //  Every part added: it does.
    CHECK (kf_prompt_try_counts ("use every core, by threads", parts | S_BIT (KF_IDEA_THREADS),
                                 whole, &by_code));
    CHECK (by_code);
    //  The register tile alone is another idea than the three in one.
    CHECK (!kf_prompt_try_counts (tile, S_BIT (KF_IDEA_MICRO), whole, NULL));
    CHECK (kf_prompt_try_counts (whole, 0, tile, NULL) == false);
    //  One part's idea is counted by that part, as before.
    CHECK (kf_prompt_try_counts ("use every core, by threads", S_BIT (KF_IDEA_MICRO), tile,
                                 NULL));
    json_decref (spec);
}

//  Two elites of one design that differ in constants only have one
//  shape, so a tuning round templates one of them (kf_search_plan.c,
//  s_distinct_shapes): round 20 swept such cells once each.
static bool
s_same_shape (const char *a, const char *b)
{
    char x[65], y[65];
    kf_lineage_shape_hash (a, strlen (a), x);
    kf_lineage_shape_hash (b, strlen (b), y);
    return !strcmp (x, y);
}

static void
s_shapes (void)
{
    const char *kc128 = "#define KC 128\nfor (int i = 0; i < 0x40; i++) x2[i] = 2.5f * y[i] "
                        "+ 1e-3; // tile\n";
    const char *kc256 = "#define KC 256\nfor (int i = 0; i < 0x80; i++) x2[i] = 3.0f * y[i] "
                        "+ 2.5e-4; /* other words */\n";
    CHECK (s_same_shape (kc128, kc256));
    char a[65], b[65];
    kf_lineage_norm_hash (kc128, strlen (kc128), a);
    kf_lineage_norm_hash (kc256, strlen (kc256), b);
    CHECK (strcmp (a, b) != 0);   //  not one source: both are judged
    //  A digit inside a name is the name.
    CHECK (!s_same_shape ("x2[i] = 1;", "x3[i] = 1;"));
    CHECK (!s_same_shape ("a = b + 1;", "a = b - 1;"));
    //  A template's points and defaults are numbers too; its parameters
    //  are not.
    CHECK (s_same_shape ("// kf-tune: KC=64,128 MC=96\nint kc = KC;",
                         "// kf-tune: KC=32,256 MC=192\nint kc = KC;"));
    CHECK (!s_same_shape ("// kf-tune: KC=64,128\nint kc = KC;",
                          "// kf-tune: NC=64,128\nint kc = KC;"));
}

int
main (void)
{
    json_t *spec = s_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t threads = kf_test_idea_index (ideas, n, KF_IDEA_THREADS);
    size_t unroll = kf_test_idea_index (ideas, n, KF_IDEA_UNROLL);
    size_t stream = kf_test_idea_index (ideas, n, KF_IDEA_STREAM);
    size_t simd = kf_test_idea_index (ideas, n, KF_IDEA_SIMD);
    size_t approx = kf_test_idea_index (ideas, n, KF_IDEA_APPROX);
    CHECK (threads < n && unroll < n && stream < n && simd < n && approx < n);
    if (!(threads < n && unroll < n && stream < n && simd < n && approx < n))
        return kf_test_done ("test_plan_round20");

    //  Which texts take vectorised math as given.
    CHECK (s_needs_vectors (ideas[threads]));
    CHECK (s_needs_vectors (ideas[unroll]));
    CHECK (s_needs_vectors (ideas[stream]));
    CHECK (!s_needs_vectors (ideas[simd]));
    CHECK (!s_needs_vectors (ideas[approx]));
    CHECK (!s_needs_vectors (NULL));
    CHECK (s_needs_vectors ("cheaper math once vectorised: range reduction"));
    CHECK (!s_needs_vectors ("read each row once, by a single fused pass"));

    //  Round 20's generation 1 of signed_cbrt_tanh: candidate 1 plain C
    //  (not vectorised), candidate 2 threads with intrinsics, candidate 3
    //  streaming with intrinsics.
    kf_elite_t elites[3] = { { .candidate_id = 1, .speedup = 4.35 },
                             { .candidate_id = 2, .speedup = 60.25 },
                             { .candidate_id = 3, .speedup = 37.6 } };
    unsigned features[3] = { 0, S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD),
                             S_BIT (KF_IDEA_STREAM) | S_BIT (KF_IDEA_SIMD) };
    bool scalar[3] = { true, false, false };
    size_t premised[3] = { threads, unroll, stream };
    for (int i = 0; i < 3; i++) {
        size_t at = premised[i];
        int pick = -1;
        size_t idx = s_plan (ideas, n, at, elites, features, 3, scalar, &pick);
        const kf_elite_t *from = pick >= 0 ? &elites[pick] : &elites[0];
        printf ("slot at '%.40s...': '%.40s...' from candidate %lld\n", ideas[at], ideas[idx],
                (long long) from->candidate_id);
        //  Never an idea with that premise from the scalar kernel.
        CHECK (!(from == &elites[0] && s_needs_vectors (ideas[idx])));
        //  The slot keeps its idea, from a vectorised kernel that lacks it.
        CHECK (idx == at && from != &elites[0]);
        CHECK (!((features[from - elites] >> kf_prompt_idea_feature (ideas[idx])) & 1u));
    }
    //  The plan before round 20 (no scalar flags): threads from the
    //  plain-C kernel, what the round saw.
    {
        int pick = -1;
        size_t idx = s_plan (ideas, n, threads, elites, features, 3, NULL, &pick);
        CHECK (idx == threads && pick < 0);
    }
    //  A pool of scalar kernels only: the slot at threads gets an idea
    //  without the premise (vectorising it), from candidate 1.
    {
        bool all[3] = { true, true, true };
        unsigned none[3] = { 0, 0, 0 };
        int pick = -1;
        size_t idx = s_plan (ideas, n, threads, elites, none, 3, all, &pick);
        printf ("all scalar: '%.50s...' pick %d\n", ideas[idx], pick);
        CHECK (!s_needs_vectors (ideas[idx]));
    }
    s_moved_words (spec, ideas[threads]);
    s_meta_report ();
    s_retimed_words (spec, ideas[threads]);
    s_parts ();
    s_shapes ();
    json_decref (spec);
    return kf_test_done ("test_plan_round20");
}
