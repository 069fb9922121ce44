/*  test_meta_round4.c - the meta-prompt findings of round 4 of the model
 *  in the loop (issue 15): the version a meta round edits is the one the
 *  search writes kernels with (kf_meta_pick: a version on trial, not the
 *  fittest older one, so its accepted edits are never dropped), the
 *  prompt says which and why and marks a sibling version as not in the
 *  sections shown, says when a new version takes effect, cuts a long
 *  kernel at a whole line and says so, asks for diagnoses as hypotheses
 *  and no philosophy rewrite from fewer than KF_META_PHILOSOPHY_MIN full
 *  outcomes, and gives each outcome its share of the measured peaks.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_meta_score.h"
#include <stdlib.h>
#include <string.h>

static void
test_pick (void)
{
    /* Round 4: v2 (from v1) accepted, none of its kernels finished; v1
     * has 6 at mean 0.8. The round's old parent query ("fitness, 0 for
     * none, highest first") picked v1, and its edits made v3 from v1:
     * v2's edits were lost. The search draws v2 (on trial), and so must
     * the round. */
    json_t *versions = json_pack ("[{s:i, s:i, s:n, s:i}, {s:i, s:i, s:f, s:i}]", "id", 20,
                                  "number", 2, "fitness", "used", 1, "id", 10, "number", 1,
                                  "fitness", 0.8, "used", 6);
    char why[400];
    json_t *pick = kf_meta_pick (versions, 3, why, sizeof why);
    CHECK (pick && json_integer_value (json_object_get (pick, "number")) == 2);
    printf ("why: %s\n", why);
    CHECK (kf_test_has (why, "v2 is on trial: the newest version, 1 of its first 3 kernels written"));
    json_decref (versions);
    /* Both tried: the score decides, and the reason names the newer
     * version passed over with its figures. */
    versions = json_pack ("[{s:i, s:i, s:f, s:i}, {s:i, s:i, s:f, s:i}]", "id", 20, "number",
                          2, "fitness", 0.3, "used", 5, "id", 10, "number", 1, "fitness", 0.9,
                          "used", 6);
    pick = kf_meta_pick (versions, 3, why, sizeof why);
    CHECK (pick && json_integer_value (json_object_get (pick, "number")) == 1);
    printf ("why: %s\n", why);
    CHECK (kf_test_has (why, "v1 has the highest draw: version score 0.900, the mean over its "
                             "latest finished kernels (6 kernels written with it, finished or not)"));
    CHECK (kf_test_has (why, "chosen over the newer v2 (version score 0.300; 5 kernels written with "
                             "it, finished or not)"));
    json_decref (versions);
    versions = json_array ();
    CHECK (kf_meta_pick (versions, 3, why, sizeof why) == NULL);
    json_decref (versions);
}

static void
test_prompt (void)
{
    json_t *run = json_pack ("{s:s, s:s, s:{s:s}}", "language", "c", "target", "host", "spec",
                             "name", "gemm");
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "P", "strategies", "S",
                                  "pitfalls", "F", "analysis", "A");
    /* v1 the defaults; v2 and v3 both from v1; the round edits v3, so v2
     * is a sibling whose edits are not in the sections shown. */
    json_t *history = json_pack (
        "[{s:i, s:i, s:i}, {s:i, s:i, s:i, s:[{s:s, s:s, s:s}], s:i},"
        " {s:i, s:i, s:i, s:[{s:s, s:s, s:s}], s:i}]",
        "number", 1, "generation", 0, "candidates", 6,
        "number", 2, "parent", 1, "generation", 2, "edits", "section", "strategies", "search",
        "", "replace", "Pack W.", "candidates", 2,
        "number", 3, "parent", 1, "generation", 3, "edits", "section", "pitfalls", "search",
        "", "replace", "No fusing.", "candidates", 0);
    /* Three outcomes, two with full figures: fewer than the minimum. */
    json_t *outcomes = json_pack (
        "[{s:i, s:i, s:i, s:s, s:f, s:s, s:{s:f, s:f}, s:{s:f, s:f}},"
        " {s:i, s:i, s:i, s:s, s:f, s:s}, {s:i, s:i, s:i, s:s, s:f, s:s}]",
        "candidate_id", 7, "generation", 1, "prompt_version", 1, "status", "correct", "speedup",
        4.2, "fidelity", "full", "bandwidth", "candidate_gbs", 4.3, "copy_gbs", 17.2, "compute",
        "candidate_gflops", 55.0, "peak_gflops", 110.0,
        "candidate_id", 8, "generation", 1, "prompt_version", 1, "status", "correct", "speedup",
        3.1, "fidelity", "full",
        "candidate_id", 9, "generation", 2, "prompt_version", 1, "status", "correct", "speedup",
        5.0, "fidelity", "screen");
    /* A worst kernel longer than the limit, whose cut falls mid-line. */
    size_t line = 39, lines = KF_META_SOURCE_MAX / line + 20;
    char *src = malloc (lines * line + 1);
    for (size_t i = 0; i < lines; i++)
        snprintf (src + i * line, line + 1, "    acc += xr[r * K + k] * wr[k];  %03zu\n",
                  i % 1000);
    json_t *worst = json_pack ("{s:i, s:s, s:f, s:s, s:s}", "id", 8, "status", "correct",
                               "speedup", 3.1, "fidelity", "full", "source", src);
    json_t *best = json_pack ("{s:i, s:s, s:f, s:s, s:s}", "id", 7, "status", "correct",
                              "speedup", 4.2, "fidelity", "full", "source", "int x;");
    kf_meta_base_t base = { .number = 3,
                            .why = "v3 is on trial: the newest version, 0 of its first 3 "
                                   "kernels written",
                            .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, best, worst,
                                   history);
    CHECK (p != NULL);
    printf ("%s", p ? p : "");
    /* Which version is edited, and why. */
    CHECK (kf_test_has (p, "Below are the sections of prompt version v3, the version new kernels are "
                           "written with now (v3 is on trial: the newest version, 0 of its first 3 "
                           "kernels written); your edits apply to this text and make a new version "
                           "from v3."));
    /* The sibling is marked; the base and its ancestor are not. */
    CHECK (kf_test_has (p, "- v2 (from v1 at generation 2; edits: strategies: appended \"Pack W.\"): "
                           "2 kernels finished (), version score 0.000; not the base you edit: its "
                           "edits are NOT in the sections shown (v3's)"));
    CHECK (kf_test_has (p, "- v3 (from v1 at generation 3; edits: pitfalls: appended \"No fusing."
                           "\"): no kernel finished under it yet; the version you edit"));
    CHECK (!kf_test_has (p, "- v1 (the default sections): 6 kernels finished (), version score "
                            "0.000; not"));
    /* When a new version takes effect. */
    CHECK (kf_test_has (p, "used from the next kernel planned after this reply is judged: the "
                           "kernels already planned keep the version they were planned with"));
    CHECK (kf_test_has (p, "The new version is then tried on 3 kernels"));
    /* Hypotheses, and no philosophy rewrite from 2 full outcomes. */
    CHECK (kf_test_has (p, "State each diagnosis as a hypothesis and name the outcomes it rests on"));
    CHECK (kf_test_has (p, "Do not rewrite the philosophy from fewer than 4 outcomes with a "
                           "full-protocol figure: this round has 2, so leave the philosophy's claims"));
    CHECK (kf_test_has (p, "A strategy or pitfall that says what works or what loses names at least "
                           "two full-protocol outcomes that show it, or says it is a guess to test"));
    /* Shares of the measured peaks. */
    CHECK (kf_test_has (p, "- candidate 7 (generation 1, prompt v1): correct, 4.200x the reference "
                           "(full protocol); memory 4.3 GB/s = 25% of the measured copy bandwidth; "
                           "compute 55.0 GFLOP/s = 50% of the measured peak"));
    /* The long kernel is cut at a whole line, the cut said. */
    CHECK (kf_test_has (p, " more lines)\n```\n"));
    const char *mark = p ? strstr (p, " more lines)\n```\n") : NULL;
    if (mark) {
        const char *start = mark;
        while (start > p && start[-1] != '\n')
            start--;
        CHECK (*start == '(');
        /* The line before the mark is whole. */
        const char *prev = start - 1;
        while (prev > p && prev[-1] != '\n')
            prev--;
        CHECK (!strncmp (prev, "    acc += xr[r * K + k] * wr[k];  ", 35));
        CHECK (start - prev == (long) line);
    }
    free (p);
    free (src);
    json_decref (best);
    json_decref (worst);
    json_decref (outcomes);
    json_decref (history);
    json_decref (sections);
    json_decref (run);
}

/* Round 10: a matrix product's outcome with no compute figure of its
 * own reads the 2*M*N*K the shapes give, against every core's peak and
 * one core's (the kernel prompts did; the meta prompt gave memory only). */
static void
test_derived_compute (void)
{
    json_t *run = json_pack (
        "{s:s, s:s, s:{s:s, s:s, s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
        " s:[{s:s, s:[i,i], s:s}]}}",
        "language", "c", "target", "host", "spec", "name", "linear_gelu", "op", "matmul",
        "description", "Linear then GELU.", "inputs", "name", "x", "shape", 64, 384, "dtype",
        "f32", "name", "weight", "shape", 256, 384, "dtype", "f32", "outputs", "name", "y",
        "shape", 64, 256, "dtype", "f32");
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "P", "strategies", "S",
                                  "pitfalls", "F", "analysis", "A");
    /* 2*64*256*384 = 12.58 million operations in 100 us: 125.8 GFLOP/s. */
    json_t *outcomes = json_pack ("[{s:i, s:i, s:i, s:s, s:f, s:s, s:f, s:f, s:{s:f, s:f}}]",
                                  "candidate_id", 4, "generation", 0, "prompt_version", 1,
                                  "status", "correct", "speedup", 42.1, "fidelity", "full",
                                  "candidate_ns", 100000.0, "reference_ns", 4210000.0,
                                  "bandwidth", "candidate_gbs", 2.2, "copy_gbs", 62.0);
    json_t *hw = json_pack ("{s:[{s:s, s:i, s:f, s:f, s:f}]}", "devices", "name", "Xeon VM",
                            "cores", 2, "peak_gflops", 462.0, "peak_gflops_one_core", 229.1,
                            "copy_bandwidth_gbs", 62.0);
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3, .hardware = hw };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (kf_test_has (p, "memory 2.2 GB/s = 4% of the measured copy bandwidth; compute 125.8 "
                           "GFLOP/s = 27% of the measured peak (55% of one core's peak, all its "
                           "threads' work set against one core), counting the product's 2*M*N*K "
                           "from the shapes"));
    CHECK (p && !strstr (p, "on one core the same code takes"));
    free (p);
    /* Round 20: a threaded kernel's time on one core, as the kernel
     * prompts give it. */
    json_object_set_new (json_array_get (outcomes, 0), "one_core",
                         json_pack ("{s:f}", "median_ns", 180000.0));
    p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (kf_test_has (p, "from the shapes; on one core the same code takes "));
    CHECK (kf_test_has (p, "its threads buy 44% of the call"));
    free (p);
    /* Not a matrix product: no compute share is made up. */
    json_object_set_new (json_object_get (run, "spec"), "op", json_string ("softmax"));
    json_array_remove (json_object_get (json_object_get (run, "spec"), "inputs"), 1);
    p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (p && !kf_test_has (p, "GFLOP/s = "));
    free (p);
    json_decref (hw);
    json_decref (outcomes);
    json_decref (sections);
    json_decref (run);
}

int
main (void)
{
    test_pick ();
    test_prompt ();
    test_derived_compute ();
    return kf_test_done ("test_meta_round4");
}
