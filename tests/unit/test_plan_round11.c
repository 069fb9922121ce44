/*  test_plan_round11.c - what round 11 of the model in the loop
 *  (docs/search.md "Eleventh round") found about the idea planner and
 *  the prompt text around it:
 *
 *  1. threads went to softsign kernels of 944 us four times while the
 *     thread-cost paragraph said "threads started in each call lose here":
 *     one prediction (kf_prompt_threads_lose) now drives both;
 *  2. cache blocking went out four times before its tries were judged:
 *     tries in flight count towards holding an idea back, and one in
 *     flight from a kernel counts as taken from it;
 *  3. the thread paragraph applied the one-thread break-even to a
 *     threaded parent, and said nothing of every threaded kernel losing;
 *  4. "take the idea another way than that try" of a try whose code no
 *     prompt shows, and a sibling with the same idea left out of the list.
 */
#include "../../coordinator/kf_prompt_history.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_threads.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                      " s:{s:s, s:s}, s:{s:f, s:f}}",
                      "name", "t", "op", "matmul", "description", "a task", "inputs", "name",
                      "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0", "shape",
                      4096, "dtype", "f32", "reference", "language", "pytorch", "source",
                      "return torch.matmul(a, b)", "tolerance", "rtol", 0.01, "atol", 1e-5);
}

static size_t
s_index (const char *const *ideas, size_t n, const char *word)
{
    for (size_t i = 0; i < n; i++)
        if (strstr (ideas[i], word))
            return i;
    return n;
}

//  Round 11's exec host: one thread's start and join 700.5 us, 2 cores.
static json_t *
s_host (void)
{
    return json_pack ("{s:[{s:f, s:f}]}", "devices", "cores", 2.0, "thread_start_join_us",
                      700.5);
}

static const char *s_threaded_source =
    "#include <pthread.h>\nstatic void *w (void *a) { return a; }\n"
    "int kf_forward (void) { pthread_t t; pthread_create (&t, 0, w, 0);"
    " pthread_join (t, 0); return 0; }";

//  ---------------------------------------------------------------------
//  1. The planner follows the paragraph's prediction

static void
s_test_prediction (void)
{
    json_t *spec = s_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t threads = s_index (ideas, n, "split across threads");
    CHECK (n >= 3 && threads < n);
    if (n < 3 || threads >= n || n > 16) {
        json_decref (spec);
        return;
    }
    //  The break-even: 2 x 700.5 us; 944 us below it, 3.4 ms above it;
    //  nothing predicted for a threaded kernel or an unknown time.
    CHECK (kf_prompt_threads_even_ns (700.5, 2) == 1401000.0);
    CHECK (kf_prompt_threads_lose (700.5, 2, 944e3, false));
    CHECK (!kf_prompt_threads_lose (700.5, 2, 3.4e6, false));
    CHECK (!kf_prompt_threads_lose (700.5, 2, 944e3, true));
    CHECK (!kf_prompt_threads_lose (700.5, 2, 0, false));
    CHECK (!kf_prompt_threads_lose (700.5, 1, 944e3, false));
    double start_us = 0, cores = 0;
    json_t *hw = s_host ();
    CHECK (kf_prompt_threads_host (hw, &start_us, &cores) && start_us == 700.5 && cores == 2);
    //  Slot 0 leans towards threads; candidate 3 (944 us, one thread,
    //  4.07x) is selected and lacks them.
    size_t order[16];
    bool none[16] = { false };
    kf_search_idea_order (n, threads, none, order);
    kf_elite_t elites[2] = { { .candidate_id = 3, .speedup = 4.07 },
                             { .candidate_id = 2, .speedup = 1.5 } };
    unsigned features[2] = { 0, 0 };
    kf_search_idea_known_t known = { .chosen_built = -1 };
    int pick = 7;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, none, 3, 0, elites, features, 1, -1,
                                           &elites[0], 0, &known, &pick);
    CHECK (idx == threads && pick == -1);   //  nothing predicted: as before
    //  Predicted to lose there: the next idea, not threads.
    known.chosen_threads_lose = true;
    idx = kf_search_idea_fit_known (ideas, n, order, none, 3, 0, elites, features, 1, -1,
                                    &elites[0], 0, &known, &pick);
    CHECK (idx != threads);
    //  Another kernel of the pool above the break-even (no loss
    //  predicted) takes it instead.
    bool lose[2] = { true, false };
    known.threads_lose = lose;
    idx = kf_search_idea_fit_known (ideas, n, order, none, 3, 0, elites, features, 2, -1,
                                    &elites[0], 0, &known, &pick);
    CHECK (idx == threads && pick == 1);
    //  ... but not one predicted to lose too.
    lose[1] = true;
    idx = kf_search_idea_fit_known (ideas, n, order, none, 3, 0, elites, features, 2, -1,
                                    &elites[0], 0, &known, &pick);
    CHECK (idx != threads);
    //  Even when siblings took every other idea from candidate 3.
    kf_search_idea_sibling_t took[16];
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (i != threads)
            took[m++] = (kf_search_idea_sibling_t) { .parent_id = 3, .idea = i };
    kf_search_idea_known_t all = { .chosen_built = -1, .siblings = took, .n_siblings = m,
                                   .threads_lose = lose, .chosen_threads_lose = true };
    features[0] = ~0u;
    features[1] = ~0u;
    idx = kf_search_idea_fit_known (ideas, n, order, none, 3, 0, elites, features, 2, -1,
                                    &elites[0], ~0u, &all, &pick);
    CHECK (!(idx == threads && pick < 0));
    //  The paragraph says the same of the same kernel: below, so a loss.
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 3, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 4.07, "candidate_ns", 944e3);
    json_t *plan = json_pack ("{s:s}", "mine", ideas[threads]);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .hardware = hw, .generation = 1, .slot = 0, .population = 3,
                          .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "takes 944 us a call: below that, so threads started in each call "
                           "lose here"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

//  ---------------------------------------------------------------------
//  2. Tries in flight

static void
s_test_in_flight (void)
{
    json_t *spec = s_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t block = s_index (ideas, n, "by cache blocking");
    size_t threads = s_index (ideas, n, "split across threads");
    CHECK (block < n && threads < n && n <= 16);
    if (block >= n || threads >= n || n > 16) {
        json_decref (spec);
        return;
    }
    //  Matmul's run: candidate 5 (generation 0, cache blocking, from
    //  scratch) and generation 1's attempt 1 (cache blocking from
    //  candidate 4) not judged yet when attempt 3 is planned from
    //  candidate 6; candidate 7 (threads) judged.
    json_t *rows = json_pack ("[{s:i, s:i, s:i, s:s, s:s, s:s, s:b},"
                              " {s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:b},"
                              " {s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:b}]",
                              "id", 5, "generation", 0, "slot", 1, "phase", "search",
                              "generator", "model", "idea", ideas[block], "pending", 1,
                              "id", 9, "generation", 1, "slot", 0, "parent_id", 4, "phase",
                              "search", "generator", "model", "idea", ideas[block], "pending", 1,
                              "id", 7, "generation", 0, "slot", 2, "parent_id", 2, "phase",
                              "search", "generator", "model", "idea", ideas[threads], "pending",
                              0);
    kf_elite_t elites[3] = { { .candidate_id = 4, .speedup = 32.9 },
                             { .candidate_id = 6, .speedup = 32.3 },
                             { .candidate_id = 7, .speedup = 20.0 } };
    kf_search_idea_known_t known;
    CHECK (kf_search_idea_known_read (rows, ideas, n, elites, 3, &elites[1], 1, 2, &known) == 0);
    CHECK (known.pending && known.pending[block] == 2 && known.pending[threads] == 0);
    //  The sibling, and candidate 5 in flight from no kernel.
    CHECK (known.n_siblings == 2);
    //  Two in flight, none judged: held back, as one set aside is.
    bool aside[16] = { false }, held[16];
    kf_search_idea_held (n, known.pending, aside, held);
    CHECK (held[block] && !held[threads]);
    //  Round 16: one in flight holds it too; one set aside is not held.
    int one[16] = { 0 };
    one[block] = 1;
    kf_search_idea_held (n, one, aside, held);
    CHECK (held[block]);
    aside[block] = true;
    kf_search_idea_held (n, one, aside, held);
    CHECK (!held[block]);
    aside[block] = false;
    //  The plan's order puts a held idea last, so slot 2 leaning towards
    //  cache blocking passes to another.
    size_t order[16];
    bool back[16] = { false };
    back[block] = true;
    kf_search_idea_order (n, (block + n - 2) % n, back, order);
    unsigned features[3] = { 0, 0, 0 };
    int pick = 7;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, back, 3, 2, elites, features, 3, -1,
                                           &elites[1], 0, &known, &pick);
    CHECK (idx != block);
    kf_search_idea_known_free (&known);
    //  Generation 2, attempt 1, from candidate 6 while candidate 12 (of
    //  generation 1: cache blocking from candidate 6) is in flight: not
    //  that idea from that kernel again.
    json_t *later = json_pack ("[{s:i, s:i, s:i, s:i, s:s, s:s, s:s, s:b}]", "id", 12,
                               "generation", 1, "slot", 2, "parent_id", 6, "phase", "search",
                               "generator", "model", "idea", ideas[block], "pending", 1);
    CHECK (kf_search_idea_known_read (later, ideas, n, elites, 3, &elites[1], 2, 0, &known) == 0);
    bool none[16] = { false };
    kf_search_idea_order (n, block, none, order);
    idx = kf_search_idea_fit_known (ideas, n, order, none, 3, 0, elites, features, 3, -1,
                                    &elites[1], 0, &known, &pick);
    CHECK (!(idx == block && pick < 0));
    kf_search_idea_known_free (&known);
    //  Siblings take every idea from candidate 6, and every kernel does
    //  every idea: still never one of theirs from candidate 6.
    //  (The ideas no source feature shows are taken from the other
    //  kernels too, so only this last resort is left.)
    kf_search_idea_sibling_t took[64];
    size_t m = 0;
    for (size_t i = 0; i < n; i++) {
        took[m++] = (kf_search_idea_sibling_t) { .parent_id = 6, .idea = i };
        if (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_OTHER) {
            took[m++] = (kf_search_idea_sibling_t) { .parent_id = 4, .idea = i };
            took[m++] = (kf_search_idea_sibling_t) { .parent_id = 7, .idea = i };
        }
    }
    kf_search_idea_known_t full = { .chosen_built = -1, .siblings = took, .n_siblings = m };
    unsigned every[3] = { ~0u, ~0u, ~0u };
    idx = kf_search_idea_fit_known (ideas, n, order, none, 16, 0, elites, every, 3, -1,
                                    &elites[1], ~0u, &full, &pick);
    CHECK (pick >= 0 && elites[pick].candidate_id != 6);
    for (size_t s = 0; pick >= 0 && s < m; s++)
        CHECK (!(took[s].parent_id == elites[pick].candidate_id && took[s].idea == idx));
    json_decref (later);
    json_decref (rows);
    json_decref (spec);
}

//  ---------------------------------------------------------------------
//  3. The thread paragraph follows the ratio and a threaded parent

static void
s_test_paragraph (void)
{
    json_t *spec = s_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t threads = s_index (ideas, n, "split across threads");
    size_t block = s_index (ideas, n, "by cache blocking");
    CHECK (threads < n && block < n);
    if (threads >= n || block >= n) {
        json_decref (spec);
        return;
    }
    json_t *hw = s_host ();
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 1, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 1.13, "candidate_ns", 3.4e6);
    json_t *plan = json_pack ("{s:s, s:{s:i, s:i, s:f, s:i, s:f}}", "mine", ideas[threads],
                              "threads", "threaded", 2, "single_id", 5, "single_ns", 1.71e6,
                              "threaded_id", 6, "threaded_ns", 1.84e6);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .hardware = hw, .generation = 1, .slot = 0, .population = 3,
                          .ideas = plan };
    //  A one-thread kernel of 3.4 ms: the ratio to the 1.4 ms break-even.
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "The kernel to improve takes 3.4 ms a call, 2.4 times that: threads "
                           "save at most 1.7 ms"));
    CHECK (p && !strstr (p, "not far above"));
    //  Every threaded kernel slower than the single-thread best: said.
    //  Round 17: as designs against each other, not as what threads buy.
    CHECK (p && strstr (p, "No kernel of this run is timed both with and without its threads "
                           "yet. Across designs: the 2 kernels of this run that start threads, "
                           "timed in full, were all slower than its fastest single-thread "
                           "kernel (candidate 5, 1.71 ms a call); the fastest of them, "
                           "candidate 6, takes 1.84 ms. That sets different designs against "
                           "each other: it does not say what a second thread costs one "
                           "kernel."));
    CHECK (p && !strstr (p, "threads have bought nothing so far"));
    free (p);
    json_object_set_new (json_object_get (plan, "threads"), "threaded", json_integer (1));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "the 1 kernel of this run that starts threads, timed in full, was "
                           "slower than its fastest single-thread kernel (candidate 5, 1.71 ms "
                           "a call); that one, candidate 6, takes 1.84 ms."));
    free (p);
    //  A threaded parent of 1.84 ms: against the single-thread best, not
    //  the break-even.
    json_object_set_new (base, "source", json_string (s_threaded_source));
    json_object_set_new (base, "candidate_ns", json_real (1.84e6));
    json_object_set_new (plan, "mine", json_string (ideas[block]));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "The kernel to improve takes 1.84 ms a call, its own thread starts "
                           "included: it is no faster than the run's fastest single-thread "
                           "kernel, 1.84 ms against 1.71 ms (candidate 5, which may differ in "
                           "more than threads), 8% slower."));
    CHECK (p && !strstr (p, "threads save at most"));
    free (p);
    //  Round 12: like for like, against its own one-thread parent.
    json_t *history_kept = in.history;
    json_t *one = json_pack ("[{s:i, s:i, s:s, s:s, s:b}]", "id", 6, "parent_id", 4, "status",
                             "correct", "phase", "search", "finished", 1);
    in.history = one;
    json_object_set_new (base, "id", json_integer (6));
    json_object_set_new (json_object_get (plan, "threads"), "one_thread",
                         json_pack ("{s:f, s:f}", "4", 3.44e6, "5", 1.71e6));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "The kernel to improve takes 1.84 ms a call, its own thread starts "
                           "included, against 3.44 ms for its parent, candidate 4, on one "
                           "thread: 47% less time, its threads and any other change together; "
                           "the run's fastest single-thread kernel, candidate 5, takes 1.71 ms."));
    free (p);
    json_object_set_new (json_object_get (plan, "threads"), "one_thread",
                         json_pack ("{s:f}", "4", 1.70e6));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "against 1.7 ms for its parent, candidate 4, on one thread: 8% more "
                           "time, so its threads have not paid here"));
    free (p);
    json_object_del (json_object_get (plan, "threads"), "one_thread");
    in.history = history_kept;
    json_decref (one);
    //  One faster than the single-thread best: what it bought.
    json_object_set_new (base, "candidate_ns", json_real (1.2e6));
    json_object_set_new (json_object_get (plan, "threads"), "threaded_ns", json_real (1.2e6));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "1.2 ms against the run's fastest single-thread kernel's 1.71 ms "
                           "(candidate 5), 30% less, a gap of two kernels that may differ in "
                           "more than threads"));
    CHECK (p && !strstr (p, "threads have bought nothing so far"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (hw);
    json_decref (spec);
}

//  ---------------------------------------------------------------------
//  4. Tries and siblings whose code is not shown

static void
s_test_unjudged (void)
{
    json_t *spec = s_spec ();
    size_t n = 0;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t block = s_index (ideas, n, "by cache blocking");
    size_t threads = s_index (ideas, n, "split across threads");
    CHECK (block < n && threads < n);
    if (block >= n || threads >= n) {
        json_decref (spec);
        return;
    }
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 4, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 32.9, "candidate_ns", 1.8e6);
    //  Candidate 5, generation 0, cache blocking from scratch, in flight.
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:s, s:b}]", "id", 5, "generation", 0,
                                 "slot", 1, "phase", "search", "idea", ideas[block], "finished",
                                 0);
    json_t *plan = json_pack ("{s:s}", "mine", ideas[block]);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .generation = 1, .slot = 0, .population = 3, .ideas = plan,
                          .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Tried before in this run (newest first): candidate 5 (generation 0, "
                           "written from scratch): not judged yet"));
    CHECK (p && !strstr (p, "another way than that try"));
    CHECK (p && strstr (p, "How that went is not known yet, and its code is not shown"));
    free (p);
    //  From a kernel: named.
    json_object_set_new (json_array_get (history, 0), "parent_id", json_integer (2));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "candidate 5 (generation 0, from candidate 2): not judged yet"));
    free (p);
    //  Attempt 3 of generation 1 from candidate 6, cache blocking; attempt
    //  1 took it from candidate 4 and attempt 2 took threads: both are
    //  listed, the first as this attempt's idea too, with no demand to
    //  differ from code no prompt shows (req ...29403).
    json_object_set_new (base, "id", json_integer (6));
    in.slot = 2;
    json_t *siblings = json_pack ("[{s:i, s:i, s:s}, {s:i, s:i, s:s}]", "slot", 0, "parent_id",
                                  4, "idea", ideas[block], "slot", 1, "parent_id", 6, "idea",
                                  ideas[threads]);
    in.siblings = siblings;
    p = kf_prompt_build (&in);
    char want[1200], h1[KF_PROMPT_IDEA_HEAD_MAX + 8], h2[KF_PROMPT_IDEA_HEAD_MAX + 8];
    snprintf (want, sizeof want, "The sibling attempts of this generation take: %s (this "
              "attempt's idea too: attempt 1 takes it, from candidate 4; it is in flight, not "
              "judged yet, and its code is not shown); %s.",
              kf_prompt_idea_head (ideas[block], h1, sizeof h1),
              kf_prompt_idea_head (ideas[threads], h2, sizeof h2));
    CHECK (p && strstr (p, want));
    CHECK (p && !strstr (p, "build yours another way"));
    //  Round 14: "leave that idea" beside a sibling taking this idea
    //  read as "leave your own idea"; the other one is named as such.
    CHECK (p && strstr (p, "leave the other idea listed to the sibling that takes it"));
    free (p);
    //  An idea held back for its tries in flight is named, with how many.
    json_object_set_new (plan, "held", json_pack ("{s:i}", ideas[threads], 2));
    p = kf_prompt_build (&in);
    //  Round 19: by what the idea is about, not its whole text again.
    char about[200];
    kf_prompt_feature_words (1u << kf_prompt_idea_feature (ideas[threads]), about, sizeof about);
    snprintf (want, sizeof want, " Held back while an idea without a try in flight is left, "
              "its tries (a sibling's of this generation, or earlier candidates) not judged "
              "yet: %s (2 tries in flight).", about);
    CHECK (p && strstr (p, want));
    free (p);
    //  Round 18: its one try in flight is attempt 2's, named in the
    //  siblings' sentence already: not listed a second time.
    json_object_set_new (plan, "held", json_pack ("{s:i}", ideas[threads], 1));
    p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, "Held back while an idea"));
    CHECK (p && strstr (p, h2));
    free (p);
    json_decref (siblings);
    json_decref (plan);
    json_decref (history);
    json_decref (base);
    json_decref (spec);
}

int
main (void)
{
    s_test_prediction ();
    s_test_in_flight ();
    s_test_paragraph ();
    s_test_unjudged ();
    return kf_test_done ("test_plan_round11");
}
