/*  test_meta_prompt.c - what the meta-prompter is told
 *  (coordinator/kf_meta_prompt.c), flagged by the model in the loop
 *  (issue 15): the fate of its earlier edits (which version each round
 *  made, from which, with which edits, and the verdicts, mean fitness and
 *  best speedup of the kernels written under it, with rejected edits and
 *  why), the axes of the coordinates named, and the protocol of each
 *  figure; and (round 6) the load each outcome was timed under and what
 *  each kernel did: its idea, where it left its parent's cell, the point
 *  a sweep chose.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_prompt_history.h"
#include "kf_json.h"
#include <stdlib.h>
#include <string.h>

/* Round 6 of issue 15: the outcomes carried no load and no word of what
 * each kernel did (coordinates only, nearly the same for all). Each
 * names the load it was timed under, the idea its attempt was asked to
 * try, where it left its parent's cell, and the point a sweep chose. */
static void
s_round6 (json_t *run, json_t *sections)
{
    json_t *outcomes = json_pack (
        "[{s:i, s:i, s:i, s:i, s:s, s:s, s:f, s:s, s:s, s:s, s:i,"
        "  s:{s:f, s:f, s:f}, s:{s:i, s:i}},"
        " {s:i, s:i, s:i, s:s, s:s, s:f, s:s, s:s, s:s, s:i, s:{s:i, s:i}},"
        " {s:i, s:i, s:i, s:i, s:s, s:s, s:s}]",
        "candidate_id", 17, "generation", 1, "slot", 0, "prompt_version", 1, "phase", "search",
        "status", "correct", "speedup", 64.5, "fidelity", "screen", "coords", "{2,1,0}",
        "parent_coords", "{1,1,1}", "parent_id", 6, "host_load", "cpus", 2.0,
        "runnable_others", 3.5, "others_cpu_share", 0.4, "host_condition",
        "compile_workers_beside", 1, "exec_workers_beside", 0,
        "candidate_id", 25, "generation", 3, "prompt_version", 1, "phase", "tuning", "status",
        "correct", "speedup", 28.27, "fidelity", "full", "coords", "{1,1,0}", "parent_coords",
        "{1,1,0}", "parent_id", 8, "best_config", "UNROLL", 2, "NTHREADS", 1,
        "candidate_id", 5, "generation", 0, "slot", 1, "prompt_version", 1, "phase", "search",
        "status", "compile_failed", "coords", "{1,0,0}");
    json_object_set_new (json_array_get (outcomes, 0), "idea",
                         json_string ("pack B into panels"));
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    printf ("%s", p ? p : "");
    CHECK (kf_test_has (p, "- candidate 17 (generation 1, prompt v1): correct, 64.500x the reference "
                           "(screen timing only: a short, noisy figure; not one to cite in a "
                           "section)"));
    CHECK (kf_test_has (p, "; timed with 3.5 other runnable tasks on 2 CPUs (other processes took "
                           "40% of the CPUs' time while it was timed); the exec host shared with 1 "
                           "compile and 0 other exec workers\n"));
    CHECK (kf_test_has (p, "\n  what it did: asked to try \"pack B into panels\"; from candidate 6, "
                           "it moved memory (SIMD width, cache blocking) 1 SIMD vectorised -> 2 "));
    CHECK (kf_test_has (p, ", threads 1 threads (fork-join) -> 0 single thread\n"));
    CHECK (kf_test_has (p, "\n  what it did: a tuning template of candidate 8; the sweep chose "
                           "UNROLL=2 NTHREADS=1\n"));
    /* Written from scratch, no evaluation: no load said. */
    CHECK (kf_test_has (p, "\n  what it did: written from scratch\n"));
    /* Bounded: an idea of any length is cut. */
    char longidea[2000];
    memset (longidea, 'x', sizeof longidea - 1);
    longidea[sizeof longidea - 1] = 0;
    json_object_set_new (json_array_get (outcomes, 0), "idea", json_string (longidea));
    char *q = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (p && q && strlen (q) < strlen (p) + 200);
    free (q);
    free (p);
    /* Round 9: the target's figures, as the kernel prompts give them,
     * where the worker's are known; nothing where they are not. */
    CHECK (!kf_test_has (p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL,
                                            NULL), "## The target"));
    free (p);
    base.hardware = json_pack ("{s:[{s:s, s:i, s:f, s:f, s:f, s:f, s:f}]}", "devices", "name",
                               "AMD EPYC", "cores", 2, "clock_mhz_measured", 3630.0,
                               "peak_gflops_one_core", 226.0, "peak_gflops_all_threads", 450.0,
                               "copy_bandwidth_gbs", 40.2, "thread_start_join_us", 488.7);
    p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (kf_test_has (p, "\n## The target (fixed; what the outcomes were measured on)\n- AMD EPYC, "
                           "2 logical CPUs, 3630 MHz measured; f32 FMA peak 226 GFLOP/s on one core, "
                           "450 with every CPU; copy bandwidth 40.2 GB/s; starting and joining one "
                           "thread 488.7 us, paid in every timed call that starts threads.\n"));
    free (p);
    json_decref (base.hardware);
    base.hardware = NULL;
    /* The idea the planner stored (selection.idea) is kept; without one
     * (planned before it was stored), the one the attempt's slot was given
     * (kf_prompt_idea_at), for search candidates only. */
    json_object_set_new (json_array_get (outcomes, 2), "idea", json_string ("stored idea"));
    json_t *grun = json_pack ("{s:s, s:s, s:{s:s, s:s}, s:i}", "language", "c", "target",
                              "host", "spec", "name", "gemm", "op", "gemm", "population", 3);
    json_object_del (json_array_get (outcomes, 0), "idea");
    kf_meta_outcome_ideas (grun, outcomes);
    CHECK (!strcmp (kf_jstr (json_array_get (outcomes, 2), "idea"), "stored idea"));
    kf_prompt_in_t in = { .spec = json_object_get (grun, "spec"), .language = "c",
                          .target = "host", .population = 3 };
    const char *want = kf_prompt_idea_at (&in, 1, 0);
    CHECK (want != NULL);
    CHECK (want && !strcmp (kf_jstr (json_array_get (outcomes, 0), "idea"), want));
    CHECK (!json_object_get (json_array_get (outcomes, 1), "idea"));
    json_decref (grun);
    json_decref (outcomes);
}

int
main (void)
{
    json_t *run = json_pack ("{s:s, s:s, s:{s:s}}", "language", "c", "target", "host", "spec",
                             "name", "gelu");
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "P", "strategies", "S",
                                  "pitfalls", "F", "analysis", "A");
    json_t *outcomes = json_pack (
        "[{s:i, s:i, s:i, s:s, s:f, s:s, s:s}]", "candidate_id", 12, "generation", 4,
        "prompt_version", 2, "status", "correct", "speedup", 6.41, "fidelity", "screen",
        "coords", "{1,2,3}");
    json_t *history = json_pack (
        "[{s:i, s:i, s:b, s:i, s:f, s:f, s:{s:i, s:i}},"
        " {s:i, s:i, s:i, s:[{s:s, s:s, s:s}], s:b, s:i, s:f, s:{s:i, s:i},"
        "  s:[{s:s, s:s}]},"
        " {s:i, s:[{s:s, s:s}]}]",
        "number", 1, "generation", 0, "in_archive", 1, "candidates", 6, "mean_fitness", 0.81,
        "best_speedup", 3.1, "verdicts", "correct", 5, "incorrect", 1,
        "number", 2, "parent", 1, "generation", 3, "edits", "section", "strategies", "search",
        "", "replace", "Pack the weights once.", "in_archive", 0, "candidates", 3,
        "mean_fitness", 0.42, "verdicts", "correct", 1, "compile_failed", 2, "rejected",
        "section", "analysis", "reason", "search text not found",
        "round_job", 77, "rejected", "section", "philosophy", "reason",
        "section would grow past its limit");
    kf_meta_base_t base2 = { .number = 2, .why = "", .population = 3 };
    kf_meta_base_t base1 = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base2, outcomes, 3, NULL, NULL, NULL, history);
    CHECK (p != NULL);
    printf ("%s", p ? p : "");
    //  Which version is shown, and what became of each.
    CHECK (kf_test_has (p, "Below are the sections of prompt version v2, the version new kernels are "
                           "written with now; your edits apply to this text and make a new version "
                           "from v2."));
    CHECK (kf_test_has (p, "## What became of your earlier edits"));
    /* Round 7: the version's measure and the archive's fitness of the
     * kernel prompts' hints are two formulas; the model read them as one
     * contradicting the other. */
    CHECK (kf_test_has (p, "not the archive's fitness that kernel prompts quote"));
    CHECK (kf_test_has (p, "- v1 (the default sections): 6 kernels finished (5 correct, 1 "
                           "incorrect), version score 0.810, best full-protocol 3.100x"));
    CHECK (kf_test_has (p, "- v2 (from v1 at generation 3; edits: strategies: appended \"Pack the "
                           "weights once.\"): 3 kernels finished (1 correct, 2 compile_failed), "
                           "version score 0.420; no longer in the archive of versions (outscored)"));
    CHECK (kf_test_has (p, "rejected in the same round: analysis: search text not found"));
    CHECK (kf_test_has (p, "- a round that made no version; rejected: philosophy: section would grow "
                           "past its limit"));
    //  The axes named, once and on each outcome, in the host's words.
    CHECK (kf_test_has (p, "{memory, algorithm, threads} below, each level 0 to 3"));
    CHECK (kf_test_has (p, "3. threads: 0 single thread, 1 threads (fork-join)"));
    CHECK (kf_test_has (p, "coordinates {1,2,3} (memory (SIMD width, cache blocking) 1: SIMD "
                           "vectorised, algorithm 2: reformulated, threads 3: atomics/locks across "
                           "threads)"));
    //  A figure names its protocol.
    CHECK (kf_test_has (p, "6.410x the reference (screen timing only"));
    free (p);
    //  The best outcome's figure is a screen above the run's counted best
    //  (round 3 of the model in the loop: "two bests in one prompt"): its
    //  heading says it is a screen figure that never counts, and the run's
    //  best says it is the best figure that counts.
    json_t *best_outcome = json_pack ("{s:i, s:s, s:f, s:s, s:s}", "id", 4, "status", "correct",
                                      "speedup", 49.761, "fidelity", "screen", "source",
                                      "int kf_forward (void) { return 0; }");
    json_t *worst_outcome = json_pack ("{s:i, s:s, s:f, s:s, s:s}", "id", 3, "status",
                                       "correct", "speedup", 44.876, "fidelity", "full",
                                       "source", "int kf_forward (void) { return 1; }");
    json_t *best_kernel = json_pack ("{s:i, s:f, s:s}", "id", 5, "speedup", 46.2, "source",
                                     "int kf_forward (void) { return 2; }");
    p = kf_meta_prompt_text (run, sections, &base2, outcomes, 3, best_kernel, best_outcome,
                             worst_outcome, history);
    CHECK (kf_test_has (p, "## The best of these outcomes (candidate 4: correct, 49.761x the "
                           "reference, on the short screen timing only: not comparable with a "
                           "full-protocol figure, and never counted as the run's best)"));
    CHECK (kf_test_has (p, "## The worst of these outcomes (candidate 3: correct, 44.876x the "
                           "reference, full protocol)"));
    CHECK (kf_test_has (p, "## The best kernel so far (candidate 5, 46.200x: the run's best figure "
                           "that counts)"));
    free (p);
    json_decref (best_kernel);
    json_decref (worst_outcome);
    json_decref (best_outcome);
    //  No history yet: no section for it.
    p = kf_meta_prompt_text (run, sections, &base1, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (p && !kf_test_has (p, "What became of your earlier edits"));
    free (p);
    json_decref (history);
    json_decref (outcomes);
    s_round6 (run, sections);
    json_decref (sections);
    json_decref (run);
    return kf_test_done ("test_meta_prompt");
}
