/*  test_meta_prompt.c - what the meta-prompter is told
 *  (coordinator/kf_meta_prompt.c), flagged by the model in the loop
 *  (issue 15): the fate of its earlier edits (which version each round
 *  made, from which, with which edits, and the verdicts, mean fitness and
 *  best speedup of the kernels written under it, with rejected edits and
 *  why), the axes of the coordinates named, and the protocol of each
 *  figure.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_prompt.h"
#include <stdlib.h>
#include <string.h>

static bool
s_has (const char *text, const char *what)
{
    return text && strstr (text, what) != NULL;
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
    CHECK (s_has (p, "Below are the sections of prompt version v2, the version new kernels are "
                     "written with now; your edits apply to this text and make a new version "
                     "from v2."));
    CHECK (s_has (p, "## What became of your earlier edits"));
    CHECK (s_has (p, "- v1 (the default sections): 6 kernels (5 correct, 1 incorrect), mean "
                     "fitness 0.810, best 3.100x"));
    CHECK (s_has (p, "- v2 (from v1 at generation 3; edits: strategies: appended \"Pack the "
                     "weights once.\"): 3 kernels (1 correct, 2 compile_failed), mean fitness "
                     "0.420; no longer in the archive of versions (outscored)"));
    CHECK (s_has (p, "rejected in the same round: analysis: search text not found"));
    CHECK (s_has (p, "- a round that made no version; rejected: philosophy: section would grow "
                     "past its limit"));
    //  The axes named, once and on each outcome, in the host's words.
    CHECK (s_has (p, "{memory, algorithm, threads} below, each level 0 to 3"));
    CHECK (s_has (p, "3. threads: 0 single thread, 1 threads (fork-join)"));
    CHECK (s_has (p, "coordinates {1,2,3} (memory (SIMD width, cache blocking) 1: SIMD "
                     "vectorised, algorithm 2: reformulated, threads 3: atomics/locks across "
                     "threads)"));
    //  A figure names its protocol.
    CHECK (s_has (p, "6.410x the reference (screen timing)"));
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
    CHECK (s_has (p, "## The best of these outcomes (candidate 4: correct, 49.761x the "
                     "reference, on the short screen timing only: not comparable with a "
                     "full-protocol figure, and never counted as the run's best)"));
    CHECK (s_has (p, "## The worst of these outcomes (candidate 3: correct, 44.876x the "
                     "reference, full protocol)"));
    CHECK (s_has (p, "## The best kernel so far (candidate 5, 46.200x: the run's best figure "
                     "that counts)"));
    free (p);
    json_decref (best_kernel);
    json_decref (worst_outcome);
    json_decref (best_outcome);
    //  No history yet: no section for it.
    p = kf_meta_prompt_text (run, sections, &base1, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (p && !s_has (p, "What became of your earlier edits"));
    free (p);
    json_decref (history);
    json_decref (outcomes);
    json_decref (sections);
    json_decref (run);
    return kf_test_done ("test_meta_prompt");
}
