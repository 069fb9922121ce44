/*  test_plan_round15.c - what round 15 of the model in the loop (issue
 *  15, docs/search.md "Fifteenth round") found about the plan and how
 *  tries are told:
 *
 *  1. two attempts of one generation wrote one kernel from two parents
 *     (streaming stores on the threaded parent, threads on the streaming
 *     one); and streaming was handed out again after two tries within the
 *     noise of their parents;
 *  2. "this idea won there" of a best kernel handed threads whose code,
 *     written from scratch, unrolled too;
 *  3. tries said "regressed" with nothing of what they changed when their
 *     code added no feature the reading knows: they say how many of their
 *     parent's lines they changed.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_changed.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include "../kf_test_plan.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "t", "op", "logsigmoid_gate", "description", "a task", "inputs",
                      "name", "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 4096, "dtype", "f32", "reference", "language", "pytorch",
                      "source", "def forward(self, x):\n    return F.logsigmoid(x) * 2\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

#define S_BIT(f) (1u << (f))

//  1a. Two parents, one kernel
static void
test_converge (const char *const *ideas, size_t n, size_t threads, size_t stream)
{
    //  Generation 1: attempt 2 took streaming from candidate 1 (threads);
    //  attempt 3's slot leans towards threads, from candidate 2
    //  (streaming). Both would write threads with streaming.
    json_t *rows = json_pack ("[{s:i, s:i, s:i, s:i, s:I, s:s, s:s, s:s, s:b},"
                              " {s:i, s:i, s:i, s:i, s:I, s:s, s:s, s:s, s:b}]",
                              "id", 8, "generation", 1, "slot", 1, "parent_id", 1,
                              "parent_features", (json_int_t) S_BIT (KF_IDEA_THREADS),
                              "phase", "search", "generator", "model", "idea", ideas[stream],
                              "pending", 1,
                              //  An earlier generation's try in flight.
                              "id", 5, "generation", 0, "slot", 1, "parent_id", 1,
                              "parent_features", (json_int_t) 0, "phase", "search",
                              "generator", "model", "idea", ideas[threads], "pending", 1);
    kf_elite_t elites[2] = { { .candidate_id = 1, .speedup = 400 },
                             { .candidate_id = 2, .speedup = 300 } };
    unsigned features[2] = { S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD),
                             S_BIT (KF_IDEA_STREAM) | S_BIT (KF_IDEA_SIMD) };
    kf_search_idea_known_t known;
    CHECK (kf_search_idea_known_read (rows, ideas, n, elites, 2, &elites[1], 1, 2, &known) == 0);
    CHECK (known.n_siblings == 2);
    CHECK (known.siblings[0].made_known
           && known.siblings[0].made == (S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_STREAM)));
    //  Round 19: an earlier generation's try in flight makes a kernel too.
    CHECK (known.siblings[1].made_known && known.siblings[1].made == S_BIT (KF_IDEA_THREADS));
    //  The pool's features read as the plan stores them: with SIMD both.
    known.siblings[0].made |= S_BIT (KF_IDEA_SIMD);
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n; k++)
        order[k] = (threads + n - 2 + k) % n;    //  slot 2 leans towards threads
    CHECK (order[2] == threads);
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 2, elites, features, 2, -1,
                                           &elites[1], features[1], &known, &pick);
    const kf_elite_t *from = pick >= 0 ? &elites[pick] : &elites[1];
    unsigned made = (from == &elites[0] ? features[0] : features[1])
                    | (kf_prompt_idea_feature (ideas[idx]) == KF_IDEA_OTHER
                           ? 0 : S_BIT (kf_prompt_idea_feature (ideas[idx])));
    CHECK (made != known.siblings[0].made);
    CHECK (!(idx == threads && from == &elites[1]));
    //  The sibling's kernel folds into the fingerprint.
    char *text = kf_search_idea_known_text (&known, elites, 2);
    char want[64];
    snprintf (want, sizeof want, "s0=%zu:%x,", stream, known.siblings[0].made);
    CHECK (text && strstr (text, want));
    free (text);
    //  Unknown parent features: no such rule, threads from candidate 2.
    known.siblings[0].made_known = false;
    idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 2, elites, features, 2, -1,
                                    &elites[1], features[1], &known, &pick);
    CHECK (idx == threads && pick == -1);
    kf_search_idea_known_free (&known);
    json_decref (rows);
}

//  1b. Two tries within the noise
static void
test_spent (const char *const *ideas, size_t n, size_t threads, size_t stream)
{
    //  Candidates 8 (+1%) and 12 (-2%), both streaming, both within a
    //  +/-9% noise of their parents.
    json_t *tries = json_pack ("[{s:i, s:s, s:I, s:f, s:f, s:f}, {s:i, s:s, s:I, s:f, s:f, s:f}]",
                               "id", 8, "idea", ideas[stream], "added",
                               (json_int_t) S_BIT (KF_IDEA_STREAM), "speedup", 410.6,
                               "parent_speedup", 414.96, "noise", 0.09, "id", 12, "idea",
                               ideas[threads], "added", (json_int_t) S_BIT (KF_IDEA_STREAM),
                               "speedup", 420.0, "parent_speedup", 414.96, "noise", 0.09);
    bool aside[16], spent[16];
    json_t *notes = kf_search_idea_record (ideas, n, tries, aside);
    kf_search_idea_spent (ideas, n, tries, spent);
    CHECK (aside[stream] && spent[stream]);
    CHECK (!spent[(stream + 1) % n]);
    //  Every other idea is taken from candidate 1 by a sibling, or lost:
    //  the plan used to hand streaming out as the slot's own.
    kf_search_idea_sibling_t took[16];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != stream)
            took[m++] = (kf_search_idea_sibling_t) { .parent_id = 1, .idea = i };
    kf_search_idea_known_t known = { .chosen_built = -1, .siblings = took, .n_siblings = m,
                                     .lost = aside, .spent = spent };
    size_t order[16];
    kf_search_idea_order (n, 0, aside, order);
    size_t slot = 0;
    while (order[slot] != stream)
        slot++;
    kf_elite_t elites[1] = { { .candidate_id = 1, .speedup = 400 } };
    unsigned features[1] = { 0 };
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, (int) n, (int) slot, elites,
                                           features, 1, -1, &elites[0], 0, &known, &pick);
    CHECK (idx != stream);
    //  One within the noise, one won: not spent.
    json_object_set_new (json_array_get (tries, 1), "speedup", json_real (480.0));
    kf_search_idea_spent (ideas, n, tries, spent);
    CHECK (!spent[stream]);
    json_decref (notes);
    json_decref (tries);
}

//  2 and 3. The prompt
static void
test_prompt (json_t *spec, const char *const *ideas, size_t threads, size_t unroll)
{
    //  Candidate 1: generation 0, handed threads, written from scratch
    //  (its code unrolls too), the run's best. Candidate 7: handed
    //  unrolling, from candidate 1, regressed, added no known feature.
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:b, s:I, s:I,"
                                 "   s:i, s:i, s:i},"
                                 " {s:i, s:i, s:i, s:s, s:s, s:f, s:s, s:s, s:b, s:I}]",
                                 "id", 7, "generation", 1, "slot", 2, "phase", "search",
                                 "parent_id", 1, "status", "correct", "speedup", 300.0,
                                 "fidelity", "full", "idea", ideas[unroll], "finished", 1,
                                 "features", (json_int_t) S_BIT (KF_IDEA_THREADS),
                                 "parent_features", (json_int_t) S_BIT (KF_IDEA_THREADS),
                                 "changed", 34, "parent_lines", 120, "lines", 126,
                                 "id", 1, "generation", 0, "slot", 0, "phase", "search",
                                 "status", "correct", "speedup", 414.96, "fidelity", "full",
                                 "idea", ideas[threads], "finished", 1, "features",
                                 (json_int_t) (S_BIT (KF_IDEA_THREADS)
                                               | S_BIT (KF_IDEA_UNROLL)));
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 1, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 414.96);
    json_t *plan = json_pack ("{s:s, s:{}, s:[]}", "mine", ideas[unroll], "notes", "aside");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 2, .slot = 2, .population = 3,
                          .ideas = plan, .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (p != NULL);
    if (p) {
        CHECK (strstr (p, "this idea won there") == NULL);
        CHECK (strstr (p, "Candidate 1 is the run's best kernel so far and does this too, but "
                          "it was handed another idea (threads)") != NULL);
        //  Round 24: handed unrolling, its code shows none: no try of
        //  unrolling, said apart with what its code did.
        CHECK (strstr (p, "Handed this idea, not seen done (the reading of its code, which "
                          "knows each feature's usual forms but not every way to write them, "
                          "sees no change of it, so it is not counted as a try of it): "
                          "candidate 7 (generation 1; its code added no feature this reading "
                          "knows: it changed 34 of its parent's 120 lines") != NULL);
        CHECK (strstr (p, "its code added no feature this reading knows: it changed 34 of "
                          "its parent's 120 lines and wrote 6 lines new (its own has 126)")
               != NULL);
    }
    free (p);
    //  Handed the idea: the lead is its, but of generation 0, with no
    //  parent, it won nothing (round 49).
    json_object_set_new (json_array_get (history, 1), "idea", json_string (ideas[unroll]));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Candidate 1 is the run's best kernel so far: it was written for this "
                           "idea with no kernel before it, so it leads by rank, not by a gain "
                           "this idea was measured to make"));
    free (p);
    //  Written from a parent, adding the idea's feature: the win is its too.
    json_object_set_new (json_array_get (history, 1), "idea", json_string (ideas[threads]));
    json_object_set_new (json_array_get (history, 1), "parent_id", json_integer (9));
    json_object_set_new (json_array_get (history, 1), "parent_features",
                         json_integer (S_BIT (KF_IDEA_THREADS)));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Candidate 1 is the run's best kernel so far: this idea won there"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (history);
}

//  3. The counts, by kf_prompt_diff's lines
static void
test_counts (void)
{
    int changed, parent_lines, lines;
    CHECK (kf_prompt_changed_counts ("a\nb\nc\nd\n", "a\nB\nc\nd\ne\n", &changed, &parent_lines,
                                     &lines));
    CHECK (changed == 1 && parent_lines == 4 && lines == 5);
    CHECK (kf_prompt_changed_counts ("a\nb", "a\nb", &changed, &parent_lines, &lines));
    CHECK (changed == 0 && parent_lines == 2 && lines == 2);
    CHECK (!kf_prompt_changed_counts (NULL, "a\n", &changed, &parent_lines, &lines));
    json_t *row = json_pack ("{s:i, s:i, s:i}", "changed", 34, "parent_lines", 120, "lines",
                             126);
    char buf[120];
    CHECK (!strcmp (kf_prompt_changed_text (row, buf, sizeof buf),
                    "changed 34 of its parent's 120 lines and wrote 6 lines new (its own "
                    "has 126)"));
    json_object_del (row, "changed");
    CHECK (!*kf_prompt_changed_text (row, buf, sizeof buf));
    json_decref (row);
}

int
main (void)
{
    json_t *spec = s_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t threads = kf_test_plan_index (ideas, n, KF_IDEA_THREADS);
    size_t stream = kf_test_plan_index (ideas, n, KF_IDEA_STREAM);
    size_t unroll = kf_test_plan_index (ideas, n, KF_IDEA_UNROLL);
    CHECK (n >= 3 && n <= 16 && threads < n && stream < n && unroll < n);
    if (n >= 3 && n <= 16 && threads < n && stream < n && unroll < n) {
        test_converge (ideas, n, threads, stream);
        test_spent (ideas, n, threads, stream);
        test_prompt (spec, ideas, threads, unroll);
    }
    test_counts ();
    json_decref (spec);
    return kf_test_done ("test_plan_round15");
}
