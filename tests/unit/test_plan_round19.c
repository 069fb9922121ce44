/*  test_plan_round19.c - what round 19 of the model in the loop (issue
 *  15, docs/search.md "Nineteenth round") found in how the plan and the
 *  tries are told:
 *
 *  1. "(tried: within noise ...)" beside "this idea won there" of the
 *     same try, the run's best: the best's words follow the planner's
 *     verdict of that try;
 *  2. "correct but regressed beyond the timing noise" of a child the same
 *     prompt said was timed beside other work;
 *  3. this attempt's own idea held in flight, said inside the list of the
 *     other held ideas (a missing full stop, then a doubled one), and
 *     "do it another way than the try in flight" without a word of what
 *     that try did;
 *  4. what "planned after this one" means said again for every sibling,
 *     and held ideas given in full a second time: over 2,000 characters
 *     of planner bookkeeping;
 *  6. a meta round's rewording of an idea made the planner call it
 *     untried after two tries, and hand it beside its old words in one
 *     generation: the reworded idea keeps its old texts ("was") and rows
 *     in the old words read as the new (kf_meta_ideas_canon); an idea in
 *     other words on the same subject counts its tries
 *     (kf_prompt_try_counts);
 *  7. one combination handed from two parents: candidate 9, of an
 *     earlier generation and in flight, made threads with streaming from
 *     the threaded kernel, and this attempt was handed threads on the
 *     streaming one (kf_search_idea_known_read knew what a try in flight
 *     makes only for this generation's siblings);
 *  5. no figure for the rsqrt estimate, loads a cycle, the FMA with an
 *     operand from memory, or whether divide and square root share a
 *     unit (the vector cost line, kf_prompt_host_vec_line).
 */
#include "../../coordinator/kf_lineage.h"
#include "../../coordinator/kf_meta_ideas.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "../../coordinator/kf_prompt_core.h"
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
                      "name", "t", "op", "asinh_gate", "description", "a task", "inputs",
                      "name", "in0", "shape", 4096, "dtype", "f32", "outputs", "name", "out0",
                      "shape", 4096, "dtype", "f32", "reference", "language", "pytorch",
                      "source", "def forward(self, x):\n    return torch.asinh(x) * 2\n",
                      "tolerance", "rtol", 0.01, "atol", 1e-5);
}

#define S_BIT(f) (1u << (f))

//  1. The best's words by the verdict of its try
static void
test_best_words (json_t *spec, const char *const *ideas, size_t approx)
{
    //  Candidate 7, handed the approximation idea from candidate 2, the
    //  run's best; the planner called its try within noise of its parent.
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:b}]",
                                 "id", 7, "generation", 1, "slot", 0, "phase", "search",
                                 "parent_id", 2, "status", "correct", "speedup", 52.76,
                                 "fidelity", "full", "idea", ideas[approx], "finished", 1);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 7, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 52.76);
    json_t *plan = json_pack ("{s:s, s:{s:s}, s:[], s:{s:i}}", "mine", ideas[approx], "notes",
                              ideas[approx], "tried: within noise of +/-27% as the run's "
                              "repeats now stand (52.76x vs parent 48.23x)", "aside", "verdicts",
                              "7", 0);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .best = base, .generation = 2, .slot = 0, .population = 3,
                          .ideas = plan, .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, "won there"));
    CHECK (p && strstr (p, "Candidate 7 is the run's best kernel so far, but that try came out "
                           "within noise of its parent: this idea has not shown a gain of its "
                           "own yet, so take it further than that try did (another width, "
                           "depth or split) only with a reason it should pay now, or combine "
                           "it with what the best does not do yet."));
    free (p);
    //  Timed beside other work: not known.
    json_object_set_new (json_object_get (plan, "verdicts"), "7", json_integer (3));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Candidate 7 is the run's best kernel so far, but that try or its "
                           "parent was timed beside other work: this idea has not shown"));
    free (p);
    //  Beyond the noise: a win, said as one.
    json_object_set_new (json_object_get (plan, "verdicts"), "7", json_integer (1));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "Candidate 7 is the run's best kernel so far: this idea won there "
                           "against its parent, so take it further than that try did (another "
                           "width, depth or split), or combine"));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (history);
}

//  2. No verdict on a timing beside other work
static void
test_loaded_child (void)
{
    json_t *c = json_pack ("{s:s, s:f, s:s, s:f, s:b}", "status", "correct", "speedup", 29.73,
                           "fidelity", "full", "noise", 0.17, "loaded", 0);
    char buf[600];
    kf_lineage_reason (c, 42.24, buf, sizeof buf);
    CHECK (strstr (buf, "regressed beyond the timing noise") != NULL);
    json_object_set_new (c, "loaded", json_true ());
    kf_lineage_reason (c, 42.24, buf, sizeof buf);
    CHECK (strstr (buf, "regressed") == NULL);
    CHECK (strstr (buf, "correct at 29.73x against the parent's 42.24x, but it or its parent "
                        "was timed beside other work, so the two are not compared like for "
                        "like") != NULL);
    //  Within noise or improved: no verdict either.
    json_object_set_new (c, "speedup", json_real (60.0));
    kf_lineage_reason (c, 42.24, buf, sizeof buf);
    CHECK (strstr (buf, "improved") == NULL && strstr (buf, "not compared like for like"));
    json_decref (c);
}

//  3. This attempt's own idea in flight, after the list, with its try
static void
test_own_in_flight (json_t *spec, const char *const *ideas, size_t threads, size_t stream)
{
    //  Candidate 12 took the threads idea from candidate 5 and is not
    //  judged yet; its code splits the output by threads.
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:s, s:i, s:s, s:s, s:b, s:I, s:I}]",
                                 "id", 12, "generation", 1, "slot", 2, "phase", "search",
                                 "parent_id", 5, "status", "pending", "idea", ideas[threads],
                                 "finished", 0, "features", (json_int_t) S_BIT (KF_IDEA_THREADS),
                                 "parent_features", (json_int_t) 0);
    json_t *base = json_pack ("{s:i, s:s, s:s, s:f}", "id", 5, "source",
                              "int kf_forward (void) { return 0; }", "status", "correct",
                              "speedup", 27.3);
    //  Streaming is held too, listed first; then this attempt's own.
    json_t *plan = json_pack ("{s:s, s:{s:i, s:i}}", "mine", ideas[threads], "held",
                              ideas[stream], 1, ideas[threads], 1);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .base = base,
                          .generation = 2, .slot = 1, .population = 3, .ideas = plan,
                          .history = history };
    char *p = kf_prompt_build (&in);
    CHECK (p && !strstr (p, ".."));
    CHECK (p && !strstr (p, "in flight) This attempt"));
    CHECK (p && strstr (p, "(1 try in flight). This attempt's idea has 1 try in flight "
                           "elsewhere"));
    CHECK (p && strstr (p, " Candidate 12 (generation 1, from this same kernel (candidate 5)) "
                           "has it in flight; its code added to its parent's: "));
    //  Round 22: how, by what the idea is about.
    CHECK (p && strstr (p, "Do it another way than the try in flight (a split other than equal "
                           "contiguous ranges, such as chunks taken from a shared counter, or "
                           "another thread count)."));
    //  The held idea by what it is about, not its text.
    char about[200], want[400];
    kf_prompt_feature_words (S_BIT (kf_prompt_idea_feature (ideas[stream])), about,
                             sizeof about);
    snprintf (want, sizeof want, "not judged yet: %s (1 try in flight).", about);
    CHECK (p && strstr (p, want));
    free (p);
    //  Round 32: and its change line, where its author wrote one.
    json_object_set_new (json_array_get (history, 0), "said",
                         json_string ("rows dealt to 2 threads from a shared counter"));
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "; its author's words for it: \"rows dealt to 2 threads from a "
                           "shared counter\". Do it another way than the try in flight"));
    //  Once (round 34: it was said twice in one sentence).
    const char *flight = p ? strstr (p, " Candidate 12 (generation 1, from this same kernel")
                           : NULL;
    const char *words = flight ? strstr (flight, "its author's words for it: \"rows dealt")
                               : NULL;
    const char *again = words ? strstr (words + 1, "its author's words for it: \"rows dealt")
                              : NULL;
    const char *end = words ? strstr (words, "Do it another way") : NULL;
    CHECK (words && end && !(again && again < end));
    free (p);
    json_object_del (json_array_get (history, 0), "said");
    //  Not written yet: said so.
    json_object_del (json_array_get (history, 0), "features");
    p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "has it in flight; its code was not written when this prompt was "
                           "made."));
    free (p);
    json_decref (plan);
    json_decref (base);
    json_decref (history);
}

//  4. "planned after this one" explained once
static void
test_later_once (json_t *spec, const char *const *ideas, size_t n)
{
    json_t *order = json_array ();
    for (size_t i = 0; i < n; i++)
        json_array_append_new (order, json_string (ideas[i]));
    json_t *plan = json_pack ("{s:s, s:o}", "mine", ideas[0], "order", order);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 0, .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (p && strstr (p, "(planned after this one); "));
    const char *first = p ? strstr (p, "A sibling planned after this one") : NULL;
    CHECK (first && !strstr (first + 1, "A sibling planned after this one"));
    CHECK (p && !strstr (p, "that sibling is planned after this one"));
    free (p);
    json_decref (plan);
}

//  5. The vector cost line's new figures
static char *
s_vec_line (json_t *d)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_host_vec_line (f, d);
    fclose (f);
    return text;
}

static void
test_ports (void)
{
    //  This VM's figures (test_host_vec): AVX2, one divider.
    json_t *d = json_pack ("{s:i, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f, s:f,"
                           " s:f, s:f, s:f}", "vec_lanes", 8,
                           "vec_div_cycles", 3.5, "vec_div_latency_cycles", 10.5,
                           "vec_sqrt_cycles", 5.0, "vec_sqrt_latency_cycles", 14.9,
                           "vec_rcp_cycles", 0.5, "vec_rcp_latency_cycles", 3.0,
                           "vec_fma_cycles", 0.5, "vec_fma_latency_cycles", 4.0,
                           "vec_rsqrt_cycles", 0.5, "vec_rsqrt_latency_cycles", 3.0,
                           "vec_load_cycles", 0.5, "vec_bcast_cycles", 0.5,
                           "vec_fma_mem_cycles", 0.63, "vec_divsqrt_cycles", 4.24);
    CHECK (d != NULL);
    char *p = s_vec_line (d);
    CHECK (p && strstr (p, "reciprocal square root estimate (vrsqrtps, relative error at most "
                           "1.5 x 2^-12) 1 per 0.50 cycles, latency 3.0"));
    CHECK (p && strstr (p, "FMA with one operand from L1 (a whole vector) 1 per 0.63 cycles"));
    CHECK (p && strstr (p, "vector load from L1 (vmovups) 1 per 0.50 cycles"));
    CHECK (p && strstr (p, "broadcast of one float from L1 (vbroadcastss) 1 per 0.50 cycles"));
    CHECK (p && strstr (p, "A divide and a square root in turn come to 1 per 4.2 cycles each, "
                           "near the average of the two: one unit does both"));
    CHECK (p && strstr (p, "Per cycle one core starts about 2.0 vector loads from L1 and 2.0 "
                           "FMAs (fewer with an operand from memory"));
    free (p);
    //  Round 27's Zen 5: 4.5 in turn beside 2.5 and 4.5 alone.
    json_object_set_new (d, "vec_div_cycles", json_real (2.5));
    json_object_set_new (d, "vec_sqrt_cycles", json_real (4.5));
    json_object_set_new (d, "vec_divsqrt_cycles", json_real (4.5));
    p = s_vec_line (d);
    CHECK (p && strstr (p, "in turn come to 1 per 4.5 cycles each, above the average of the "
                           "two, near the slower one's alone"));
    free (p);
    json_object_set_new (d, "vec_div_cycles", json_real (3.5));
    json_object_set_new (d, "vec_sqrt_cycles", json_real (5.0));
    //  Side by side: half the slower one's.
    json_object_set_new (d, "vec_divsqrt_cycles", json_real (2.6));
    json_object_set_new (d, "vec_fma_mem_cycles", json_real (0.5));
    p = s_vec_line (d);
    CHECK (p && strstr (p, "near half the slower one's: they run side by side"));
    CHECK (p && strstr (p, "2.0 FMAs.") && !strstr (p, "fewer with an operand"));
    free (p);
    //  AVX-512's names where the vectors are 512 bits.
    json_object_set_new (d, "vec_lanes", json_integer (16));
    p = s_vec_line (d);
    CHECK (p && strstr (p, "(vrsqrt14ps, relative error at most 2^-14)")
           && strstr (p, "(a float broadcast by the instruction, {1to16})"));
    free (p);
    json_decref (d);
}

//  6. A reworded idea keeps its tries
static void
test_reword (const char *const *ideas, size_t threads)
{
    json_t *list = json_pack ("[{s:s}, {s:s}]", "text", "the first idea", "text", ideas[threads]);
    json_t *edits = kf_meta_parse_idea_edits ("REWORD IDEA 2: use every core, by threads over "
                                              "column blocks of the output\n");
    json_t *log = json_array ();
    int accepted = 0;
    json_t *out = kf_meta_apply_idea_edits (list, edits, 3, log, &accepted);
    CHECK (accepted == 1);
    json_t *two = json_array_get (out, 1);
    CHECK (!strcmp (json_string_value (json_object_get (two, "text")),
                    "use every core, by threads over column blocks of the output"));
    CHECK (json_array_size (json_object_get (two, "was")) == 1
           && !strcmp (json_string_value (json_array_get (json_object_get (two, "was"), 0)),
                       ideas[threads]));
    //  Rows in the old words read as the new; others stay.
    json_t *sections = json_pack ("{s:O}", KF_META_IDEAS_KEY, out);
    json_t *rows = json_pack ("[{s:i, s:s}, {s:i, s:s}, {s:i}]", "id", 6, "idea", ideas[threads],
                              "id", 7, "idea", "the first idea", "id", 8);
    kf_meta_ideas_canon (sections, rows);
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (rows, 0), "idea")),
                    "use every core, by threads over column blocks of the output"));
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (rows, 1), "idea")),
                    "the first idea"));
    CHECK (!json_object_get (json_array_get (rows, 2), "idea"));
    //  Round 25: the words a row was handed stay beside the new ones.
    const char *handed = json_string_value (json_object_get (json_array_get (rows, 0),
                                                             "idea_handed"));
    CHECK (handed && !strcmp (handed, ideas[threads]));
    CHECK (!json_object_get (json_array_get (rows, 1), "idea_handed"));
    //  No list, nothing changes.
    kf_meta_ideas_canon (NULL, rows);
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (rows, 1), "idea")),
                    "the first idea"));
    //  The same subject in other words counts; another subject does not.
    bool by_code = true;
    CHECK (kf_prompt_try_counts (ideas[threads], 0,
                                 "use every core, by threads over column blocks", &by_code));
    CHECK (!by_code);
    CHECK (!kf_prompt_try_counts ("use every core, by threads", 0, "hide latency by unrolling",
                                  NULL));
    CHECK (!kf_prompt_try_counts ("something else", 0, "another thing", NULL));
    json_decref (rows);
    json_decref (sections);
    json_decref (out);
    json_decref (log);
    json_decref (edits);
    json_decref (list);
}

//  7. Two parents, one kernel, across generations
static void
test_converge_earlier (const char *const *ideas, size_t n, size_t threads, size_t stream)
{
    //  Candidate 9 (generation 1, in flight): streaming from candidate 2,
    //  which has threads and SIMD. This is generation 2, attempt 1.
    json_t *rows = json_pack ("[{s:i, s:i, s:i, s:i, s:I, s:s, s:s, s:s, s:b}]",
                              "id", 9, "generation", 1, "slot", 2, "parent_id", 2,
                              "parent_features",
                              (json_int_t) (S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD)),
                              "phase", "search", "generator", "model", "idea", ideas[stream],
                              "pending", 1);
    kf_elite_t elites[2] = { { .candidate_id = 2, .speedup = 40 },
                             { .candidate_id = 3, .speedup = 38 } };
    unsigned features[2] = { S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD),
                             S_BIT (KF_IDEA_STREAM) | S_BIT (KF_IDEA_SIMD) };
    kf_search_idea_known_t known;
    CHECK (kf_search_idea_known_read (rows, ideas, n, elites, 2, &elites[1], 2, 0, &known) == 0);
    CHECK (known.n_siblings == 1 && known.siblings[0].made_known
           && known.siblings[0].made
                  == (S_BIT (KF_IDEA_THREADS) | S_BIT (KF_IDEA_SIMD) | S_BIT (KF_IDEA_STREAM)));
    //  The slot leans towards threads; from candidate 3 it would make
    //  candidate 9's kernel.
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n; k++)
        order[k] = (threads + k) % n;
    int pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, elites, features, 2, -1,
                                           &elites[1], features[1], &known, &pick);
    const kf_elite_t *from = pick >= 0 ? &elites[pick] : &elites[1];
    CHECK (!(idx == threads && from == &elites[1]));
    kf_search_idea_known_free (&known);
    json_decref (rows);
}

int
main (void)
{
    json_t *spec = s_spec ();
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t approx = kf_test_plan_index (ideas, n, KF_IDEA_APPROX);
    size_t threads = kf_test_plan_index (ideas, n, KF_IDEA_THREADS);
    size_t stream = kf_test_plan_index (ideas, n, KF_IDEA_STREAM);
    CHECK (approx < n && threads < n && stream < n);
    if (approx < n && threads < n && stream < n) {
        test_best_words (spec, ideas, approx);
        test_own_in_flight (spec, ideas, threads, stream);
        test_later_once (spec, ideas, n);
        test_reword (ideas, threads);
        test_converge_earlier (ideas, n, threads, stream);
    }
    test_loaded_child ();
    test_ports ();
    json_decref (spec);
    return kf_test_done ("test_plan_round19");
}
