/*  test_plan_round17.c - what round 17 of the model in the loop (docs/
 *  search.md "Seventeenth round", findings 9 and 10 of its notes) found
 *  about the plan and the hints:
 *
 *  1. the three prompts of one generation named three different sets of
 *     siblings: a later sibling was named by its slot's place in the
 *     order, while the plan moves the ideas in flight to the back first;
 *  2. threads "once each element's math is vectorised" and streaming
 *     stores went to generation 0, where no vectorised kernel exists;
 *  3. fusing a layer norm went to generation 0 though the Epilogue line
 *     put the layer norm at 1% of the floor;
 *  4. "consider cache blocking" (over 2 moves, one a loss) beside the
 *     plan's "Set aside ... cache blocking ... lost".
 */
#include "../../coordinator/kf_prompt_history.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_epilogue.h"
#include "../../coordinator/kf_prompt_hints.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include "kf_file.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_row (int id, int generation, int slot, int parent, const char *idea, bool pending)
{
    return json_pack ("{s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:b}", "id", id, "generation",
                      generation, "slot", slot, "parent_id", parent, "phase", "search",
                      "generator", "model", "idea", idea, "pending", pending);
}

//  Plans slot SLOT of GENERATION (population 3) as kf_search_idea_choose
//  does, from CHOSEN (ELITES, N; FEATURES each) or from scratch, given
//  ROWS and SPENT; the plan's prediction of the later slots into *LATER.
static size_t
s_plan (const char *const *ideas, size_t count, json_t *rows, int generation, int slot,
        const kf_elite_t *elites, const unsigned *features, size_t n,
        const kf_elite_t *chosen, const bool *spent, json_t **later)
{
    kf_search_idea_known_t known;
    if (kf_search_idea_known_read (rows, ideas, count, elites, n, chosen, generation, slot,
                                   &known))
        return count;
    bool aside[16] = { false }, held[16], back[16];
    kf_search_idea_held (count, known.pending, aside, held);
    for (size_t i = 0; i < count; i++)
        back[i] = aside[i] || held[i];
    known.lost = aside;
    known.spent = spent;
    size_t order[16], start = ((size_t) generation * 3) % count;
    kf_search_idea_order (count, start, back, order);
    unsigned own = chosen ? features[0] : 0;
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, count, order, back, 3, slot, elites, features,
                                           n, -1, chosen, own, &known, &pick);
    if (later)
        *later = kf_search_idea_later (ideas, count, start, aside, &known, 3, slot, idx, -1,
                                       pick, elites, features, n, -1, chosen, own);
    kf_search_idea_known_free (&known);
    return idx;
}

static const char *
s_later (json_t *later, int slot)
{
    size_t i;
    json_t *r;
    json_array_foreach (later, i, r)
        if (json_integer_value (json_object_get (r, "slot")) == slot)
            return json_string_value (json_object_get (r, "idea"));
    return "";
}

//  1. Generation 0 from scratch, then generation 1 from one kernel.
static void
test_siblings (json_t *spec)
{
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    CHECK (n >= 5 && n <= 16);
    if (n < 5 || n > 16)
        return;
    json_t *rows = json_array (), *later = NULL, *l1 = NULL;
    size_t first = s_plan (ideas, n, rows, 0, 0, NULL, NULL, 0, NULL, NULL, &later);
    CHECK (json_array_size (later) == 2);
    json_array_append_new (rows, s_row (1, 0, 0, 0, ideas[first], true));
    size_t second = s_plan (ideas, n, rows, 0, 1, NULL, NULL, 0, NULL, NULL, &l1);
    json_array_append_new (rows, s_row (2, 0, 1, 0, ideas[second], true));
    size_t third = s_plan (ideas, n, rows, 0, 2, NULL, NULL, 0, NULL, NULL, NULL);
    printf ("generation 0: %zu %zu %zu\n", first, second, third);
    //  The prediction is the plan: attempt 2 names attempt 3's idea as
    //  attempt 1 does.
    CHECK (!strcmp (s_later (later, 1), ideas[second]));
    CHECK (!strcmp (s_later (later, 2), ideas[third]));
    CHECK (!strcmp (s_later (l1, 2), ideas[third]));
    //  The prompt of attempt 1 names them, not the ideas at slots 2 and
    //  3's places in its order (round 17: explicit SIMD, never handed).
    json_t *order = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (order, json_string (ideas[i]));
    CHECK (second != 1);   //  the place of slot 2 in attempt 1's order
    json_t *plan = json_pack ("{s:s, s:o, s:O}", "mine", ideas[first], "order", order,
                              "later", later);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 0, .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    char want[2000];
    char head[KF_PROMPT_IDEA_HEAD_MAX + 8];
    snprintf (want, sizeof want, "The sibling attempts of this generation take: %s (planned "
              "after this one)", kf_prompt_idea_head (ideas[second], head, sizeof head));
    CHECK (p && strstr (p, want));
    snprintf (want, sizeof want, "; %s (planned after this one)",
              kf_prompt_idea_head (ideas[third], head, sizeof head));
    CHECK (p && strstr (p, want));
    CHECK (p && strstr (p, " A sibling planned after this one is handed the idea listed for it "
                           "if it is written from scratch too, and may be handed another if it "
                           "draws a kernel that does that idea already."));
    snprintf (want, sizeof want, "take: %s", ideas[1]);
    CHECK (p && !strstr (p, want));
    free (p);
    json_decref (plan);
    json_decref (later);
    json_decref (l1);
    //  Generation 1, every slot from candidate 1, which does nothing yet.
    json_object_set_new (json_array_get (rows, 0), "pending", json_false ());
    json_object_set_new (json_array_get (rows, 1), "pending", json_false ());
    json_array_append_new (rows, s_row (3, 0, 2, 0, ideas[third], false));
    kf_elite_t elites[1] = { { .candidate_id = 1, .speedup = 40.0 } };
    unsigned features[1] = { 0 };
    first = s_plan (ideas, n, rows, 1, 0, elites, features, 1, &elites[0], NULL, &later);
    json_array_append_new (rows, s_row (4, 1, 0, 1, ideas[first], true));
    second = s_plan (ideas, n, rows, 1, 1, elites, features, 1, &elites[0], NULL, NULL);
    json_array_append_new (rows, s_row (5, 1, 1, 1, ideas[second], true));
    third = s_plan (ideas, n, rows, 1, 2, elites, features, 1, &elites[0], NULL, NULL);
    printf ("generation 1: %zu %zu %zu\n", first, second, third);
    CHECK (!strcmp (s_later (later, 1), ideas[second]));
    CHECK (!strcmp (s_later (later, 2), ideas[third]));
    json_decref (later);
    json_decref (rows);
}

//  2. Threads or streaming stores with no kernel to build on.
static void
test_base (json_t *spec)
{
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *threads = NULL, *approx = NULL;
    for (size_t i = 0; i < n; i++) {
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS)
            threads = ideas[i];
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_APPROX)
            approx = ideas[i];
    }
    CHECK (threads && approx);
    if (!threads || !approx)
        return;
    const char *say = "No kernel exists yet for this idea to build on: first write the "
                      "simplest correct vectorised form of the whole computation";
    json_t *plan = json_pack ("{s:s}", "mine", threads);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 1, .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, say) && strstr (p, "then add this idea to it"));
    free (p);
    //  A kernel to improve is the base.
    json_t *base = json_pack ("{s:i, s:s, s:s}", "id", 7, "status", "correct", "source",
                              "void kf_forward (void) {}");
    in.base = base;
    in.generation = 1;
    p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, say));
    free (p);
    in.base = NULL;
    json_decref (base);
    //  An idea that is itself about the element's math needs no such word.
    json_object_set_new (plan, "mine", json_string (approx));
    in.generation = 0;
    p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, say));
    free (p);
    json_decref (plan);
}

//  Round 17's linear_layernorm.py as kfctl submits it.
static json_t *
s_layer_norm (void)
{
    size_t n = 0;
    char *src = kf_file_read ("tests/fixtures/pytorch/linear_layernorm.py", 1 << 20, &n);
    CHECK (src != NULL);
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s},"
                              " {s:s, s:[i], s:s}], s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s},"
                              " s:{s:f, s:f}}", "name", "linear_layernorm", "op", "pytorch",
                              "description", "a layer", "inputs", "name", "in0", "shape", 2048,
                              512, "dtype", "f32", "name", "linear.weight", "shape", 256, 512,
                              "dtype", "f32", "name", "linear.bias", "shape", 256, "dtype", "f32",
                              "outputs", "name", "out0", "shape", 2048, 256, "dtype", "f32",
                              "reference", "language", "pytorch", "source", src ? src : "",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    free (src);
    return spec;
}

//  3. The layer norm's fusion waits while other ideas are left.
static void
test_small_epilogue (void)
{
    json_t *spec = s_layer_norm ();
    json_t *hw = json_pack ("{s:[{s:s, s:f, s:f, s:i}]}", "devices", "name", "host",
                            "peak_gflops", 400.0, "peak_gflops_one_core", 228.0, "cores", 2);
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    double share = 0;
    int small = kf_search_idea_small (ideas, n, spec, hw, &share);
    CHECK (small >= 0 && kf_prompt_idea_feature (ideas[small]) == KF_IDEA_EPILOGUE);
    //  0.0184 ms of a 2.37 ms floor.
    CHECK (share > 0.0070 && share < 0.0085);
    if (small < 0 || n > 16) {
        json_decref (hw);
        json_decref (spec);
        return;
    }
    //  Generation 0 (round 17 handed it to attempt 3): not while others
    //  are left.
    bool spent[16] = { false };
    spent[small] = true;
    json_t *rows = json_array ();
    for (int s = 0; s < 3; s++) {
        size_t idx = s_plan (ideas, n, rows, 0, s, NULL, NULL, 0, NULL, spent, NULL);
        CHECK ((int) idx != small);
        json_array_append_new (rows, s_row (s + 1, 0, s, 0, ideas[idx], true));
    }
    json_decref (rows);
    //  The prompt says why it waits.
    json_t *plan = json_pack ("{s:s, s:{s:s, s:f, s:f}}", "mine", ideas[(small + 1) % n],
                              "small", "idea", ideas[small], "share", share, "bound",
                              KF_SEARCH_IDEA_SMALL);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 0, .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Held back before any try: "));
    CHECK (p && strstr (p, "estimates that work at about 0.8% of the one-core floor, below "
                           "the 5% under which the planner hands out its fusion only when no "
                           "other idea is left"));
    //  Round 39's notes: the idea by its head, not in full.
    CHECK (p && !strstr (p, ideas[small]));
    free (p);
    json_decref (plan);
    //  A softmax after q @ k^T with k = 64 (5 operations and an exp an
    //  output against 128 flops) is no small epilogue.
    json_t *wide = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i,i,i], s:s}, {s:s, s:[i,i,i], s:s}],"
                              " s:[{s:s, s:[i,i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "scores", "op", "pytorch", "description", "scores",
                              "inputs", "name", "q", "shape", 8, 512, 64, "dtype", "f32",
                              "name", "k", "shape", 8, 512, 64, "dtype", "f32", "outputs",
                              "name", "out0", "shape", 8, 512, 512, "dtype", "f32", "reference",
                              "language", "pytorch", "source",
                              "def forward(self, q, k):\n    return torch.softmax(q @ "
                              "k.transpose(1, 2) / 8, dim=-1)\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    const char *const *wi = kf_prompt_ideas_for (wide, KF_TARGET_HOST, &n);
    CHECK (kf_search_idea_small (wi, n, wide, hw, &share) == -1 && share == 0);
    json_decref (wide);
    json_decref (hw);
    json_decref (spec);
}

//  4. The hints against the plan.
static void
test_hints (void)
{
    const char *thin = "- Children that made their memory access more elaborate have done "
                       "better so far (strength 0.17 on a scale of 0 to 1, over 2 moves; risk: "
                       "none of 2 attempts failed): consider cache blocking, so each block of "
                       "data is reused while it is in cache, one step more elaborate than the "
                       "parent's.\n";
    CHECK (kf_prompt_hint_moves (thin) == 2 && kf_prompt_hint_feature (thin) == KF_IDEA_BLOCK);
    const char *record = "- Going from a single thread to several threads, each on its own "
                         "share of the work, started and joined (threading) raised fitness in "
                         "3 of 4 moves (the children's speedups 1.40x their parents' on "
                         "geometric mean); risk: none of 4 attempts failed.\n";
    CHECK (kf_prompt_hint_moves (record) == 4
           && kf_prompt_hint_feature (record) == KF_IDEA_THREADS);
    CHECK (kf_prompt_hint_feature ("- Going from a single thread to several threads, each on "
                                   "its own share (threading) raised fitness in only 1 of 4 "
                                   "moves.") == KF_IDEA_OTHER);
    CHECK (kf_prompt_hint_moves ("Consider warp shuffles.") == -1);
    json_t *spec = s_layer_norm ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    const char *block = NULL;
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_BLOCK)
            block = ideas[i];
    CHECK (block != NULL);
    //  Round 17: over 2 moves, left out; the section goes with it.
    json_t *base = json_pack ("{s:i, s:s, s:s}", "id", 5, "status", "correct", "source",
                              "void kf_forward (void) {}");
    json_t *plan = json_pack ("{s:s, s:[s]}", "mine", ideas[0], "aside", block ? block : "");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 2,
                          .slot = 1, .population = 3, .ideas = plan, .base = base,
                          .hints = thin };
    char *p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, "consider cache blocking")
           && !strstr (p, "## Hints from the search so far"));
    free (p);
    //  Over 4 moves, but cache blocking is set aside: left out, and said.
    char hints[1200];
    snprintf (hints, sizeof hints, "%s%s", record, "- Children that made their memory access "
              "more elaborate have done better so far (strength 0.30 on a scale of 0 to 1, "
              "over 4 moves; risk: none of 4 attempts failed): consider cache blocking, so "
              "each block of data is reused while it is in cache, one step more elaborate "
              "than the parent's.\n");
    in.hints = hints;
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "## Hints from the search so far") && strstr (p, "raised fitness in "
                                                                         "3 of 4 moves"));
    CHECK (p && !strstr (p, "consider cache blocking"));
    CHECK (p && strstr (p, "(Left out: a hint towards cache blocking, an idea the list under "
                           "\"This attempt\" sets aside"));
    free (p);
    //  Not set aside: kept.
    json_object_set_new (plan, "aside", json_array ());
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "consider cache blocking") && !strstr (p, "(Left out"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                              " s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "t", "op", "gauss_cos", "description", "a task", "inputs",
                              "name", "in0", "shape", 4096, "dtype", "f32", "outputs", "name",
                              "out0", "shape", 4096, "dtype", "f32", "reference", "language",
                              "pytorch", "source",
                              "def forward(self, x):\n    return torch.exp(-x * x / 2)\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    test_siblings (spec);
    test_base (spec);
    test_small_epilogue ();
    test_hints ();
    json_decref (spec);
    return kf_test_done ("test_plan_round17");
}
