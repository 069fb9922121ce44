/*  test_meta_round17.c - what the model in the loop found in the meta
 *  rounds of round 17 (/work/notes/round17-notes.md, finding 11; docs/
 *  search.md "Seventeenth round"), fixed:
 *  1. v2's guess that chunks from an atomic counter keep both cores busy
 *     stayed after the outcomes refuted it: the meta prompt lists each
 *     guess line beside the outcomes since the version that added it that
 *     bear on it (handed or adding threads, against their parents), and a
 *     "RETRACT GUESS N: why" line removes it, logged like other edits;
 *  2. the target line gave the copy bandwidth only: the cold read rates of
 *     one core and of all cores now stand beside it.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_guess.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_prompt_class.h"
#include "kf_json.h"
#include <stdlib.h>
#include <string.h>

//  Run 1's v2 strategies (trimmed): the threads line with its guess, the
//  tolerance line, and a line that is no guess.
#define S_THREADS "- Split large tensors across cores with a few threads, each on a " \
                  "contiguous range. On this shared 2-CPU host a fixed half per thread " \
                  "waits for whichever half is delayed (a guess to test: candidate 2, 2.32 " \
                  "ms full protocol). Handing out contiguous chunks of ~32K elements from " \
                  "an atomic counter keeps both cores busy to the end."
#define S_SLACK "- Spend the tolerance (a guess to test): vrcp14ps for the divide, shorter " \
                "polynomials."
#define S_IDEA "use every core, by threads over contiguous ranges once each element's math " \
               "is vectorised"

static json_t *
s_sections (void)
{
    return json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "Elementwise.", "strategies",
                      "- Vectorise the loop.\n" S_THREADS "\n" S_SLACK "\n- Fuse the two "
                      "functions.",
                      "pitfalls", "- Tails.", "analysis", "1. Is it a guess what binds?");
}

//  v1 (the defaults) and v2, made at t = 1000 by the edit that wrote the
//  threads line.
static json_t *
s_history (void)
{
    return json_pack ("[{s:i, s:f, s:[]}, {s:i, s:i, s:f, s:[{s:s, s:s, s:s}]}]", "number", 1,
                      "made_s", 10.0, "edits", "number", 2, "parent", 1, "made_s", 1000.0,
                      "edits", "section", "strategies", "search", "- Split large tensors.",
                      "replace", S_THREADS);
}

//  Candidate 8 (atomic chunks from candidate 1) finished before v2;
//  candidate 14 (threads from candidate 7) and 15 (candidate 8's threads,
//  its code adding intrinsics only) after; candidate 16 added threads by
//  its code, handed another idea.
static json_t *
s_outcomes (void)
{
    unsigned simd = 1u << KF_IDEA_SIMD, thr = 1u << KF_IDEA_THREADS;
    return json_pack (
        "[{s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:f, s:s, s:f},"
        " {s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:f, s:s, s:f},"
        " {s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:f, s:s, s:f, s:i, s:i},"
        " {s:i, s:i, s:s, s:i, s:s, s:f, s:s, s:s, s:f, s:s, s:f, s:i, s:i}]",
        "candidate_id", 8, "generation", 1, "phase", "search", "parent_id", 1, "status",
        "correct", "speedup", 151.0, "fidelity", "full", "idea", S_IDEA, "parent_speedup",
        115.43, "parent_fidelity", "full", "finished_s", 900.0,
        "candidate_id", 14, "generation", 2, "phase", "search", "parent_id", 7, "status",
        "correct", "speedup", 122.69, "fidelity", "screen", "idea", S_IDEA, "parent_speedup",
        125.50, "parent_fidelity", "full", "finished_s", 1100.0,
        "candidate_id", 15, "generation", 2, "phase", "search", "parent_id", 8, "status",
        "correct", "speedup", 128.97, "fidelity", "full", "idea",
        "process 16 elements per instruction, by explicit SIMD intrinsics", "parent_speedup",
        151.0, "parent_fidelity", "full", "finished_s", 1200.0, "features", simd | thr,
        "parent_features", thr,
        "candidate_id", 16, "generation", 2, "phase", "search", "parent_id", 3, "status",
        "correct", "speedup", 130.0, "fidelity", "full", "idea", "fuse the two functions",
        "parent_speedup", 120.0, "parent_fidelity", "full", "finished_s", 1300.0, "features",
        thr, "parent_features", 0);
}

static void
s_lines (void)
{
    json_t *sections = s_sections ();
    json_t *lines = kf_meta_guess_lines (sections);
    //  Two guesses, in the strategies; the analysis question is none.
    CHECK (json_array_size (lines) == 2);
    CHECK (!strcmp (kf_jstr (json_array_get (lines, 0), "line"), S_THREADS));
    CHECK (!strcmp (kf_jstr (json_array_get (lines, 1), "section"), "strategies"));
    CHECK (kf_meta_guess_features (S_THREADS) == 1u << KF_IDEA_THREADS);
    CHECK (kf_meta_guess_features (S_SLACK) == 1u << KF_IDEA_APPROX);
    CHECK (kf_meta_guess_features ("- Keep it simple.") == 0);
    json_decref (lines);
    json_decref (sections);
}

static void
s_prompt (void)
{
    json_t *run = json_pack ("{s:s, s:s, s:{s:s}}", "language", "c", "target", "host", "spec",
                             "name", "log1p_tanh_gate");
    json_t *hardware = json_pack ("{s:[{s:s, s:f, s:f, s:f, s:f}]}", "devices", "name", "cpu",
                                  "cores", 2.0, "copy_bandwidth_gbs", 64.1,
                                  "read_cold_one_core_gbs", 46.4, "read_cold_all_cores_gbs",
                                  86.2);
    json_t *sections = s_sections (), *history = s_history (), *outcomes = s_outcomes ();
    kf_meta_base_t base = { .number = 2, .why = "", .population = 3, .hardware = hardware };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL,
                                   history);
    //  1: the guess, who added it, and the outcomes since that bear on it.
    CHECK (kf_test_has (p, "## Guesses the sections hold, and the outcomes since that bear on "
                           "them\n"));
    CHECK (kf_test_has (p, "Guess 1 (strategies, added by v2): \"- Split large tensors"));
    CHECK (kf_test_has (p, "About: threads. Outcomes since that version was made that bear on "
                           "it:\n  - candidate 14 (generation 2, from candidate 7; handed \"use "
                           "every core, by threads"));
    CHECK (kf_test_has (p, "122.69x (screen timing only) against its parent's 125.50x (full "
                           "protocol), 0.98 times the parent's"));
    CHECK (kf_test_has (p, "candidate 16 (generation 2, from candidate 3; its code added "
                           "threads): 130.00x (full protocol)"));
    //  Candidate 8 finished before v2; candidate 15 added intrinsics only.
    const char *g2 = p ? strstr (p, "Guess 2") : NULL;
    const char *g1 = p ? strstr (p, "Guess 1") : NULL;
    CHECK (g1 && g2 && !strstr (g1, "- candidate 8 ") && !strstr (g1, "- candidate 15 "));
    //  The tolerance line is in no edit of v2: the defaults', none since.
    CHECK (kf_test_has (p, "Guess 2 (strategies, in the default sections): \"- Spend the "
                           "tolerance"));
    CHECK (kf_test_has (p, "About: approximate math (a polynomial or bit tricks). No outcome "
                           "shown here finished since the run began was handed or added "
                           "that.\n"));
    CHECK (kf_test_has (p, "RETRACT GUESS <number>: <why, naming the outcomes that refute it"));
    //  2: the cold read rates beside the copy figure.
    CHECK (kf_test_has (p, "; copy bandwidth 64.1 GB/s; memory read with cold caches (the rate "
                           "the timing's inputs arrive at, bytes read) 46.4 GB/s by one core (a "
                           "one-thread kernel), 86.2 GB/s by all cores at once (a threaded "
                           "kernel)"));
    if (getenv ("KF_TEST_SHOW"))
        fputs (p, stdout);
    free (p);
    //  Without guesses, neither the section nor the offer.
    json_t *plain = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "x.", "strategies",
                               "- Vectorise.", "pitfalls", "- Tails.", "analysis", "1. What?");
    p = kf_meta_prompt_text (run, plain, &base, outcomes, 3, NULL, NULL, NULL, history);
    CHECK (p && !kf_test_has (p, "## Guesses") && !kf_test_has (p, "RETRACT GUESS"));
    free (p);
    json_decref (plain);
    json_decref (outcomes);
    json_decref (history);
    json_decref (sections);
    json_decref (hardware);
    json_decref (run);
}

static void
s_retract (void)
{
    json_t *r = kf_meta_parse_retractions (
        "Diagnosis: ...\n"
        "<<<<<<< SEARCH\nRETRACT GUESS 2: inside a block\n=======\nx\n>>>>>>> REPLACE\n"
        "- **RETRACT GUESS 1:** candidates 8 (151.00x) and 15 refute it; fixed halves won\n"
        "RETRACT GUESS 2:\n"
        "RETRACT GUESS 2: it was never measured\n"
        "RETRACT GUESS 7: candidate 3\n"
        "RETRACT GUESS 1: candidate 8 again\n");
    CHECK (json_array_size (r) == 5);
    CHECK (json_integer_value (json_object_get (json_array_get (r, 0), "guess")) == 1);
    CHECK (!strcmp (kf_jstr (json_array_get (r, 0), "text"),
                    "candidates 8 (151.00x) and 15 refute it; fixed halves won"));
    json_t *sections = s_sections ();
    json_t *log = json_array ();
    int accepted = -1;
    json_t *out = kf_meta_apply_retractions (sections, sections, r, 3, log, &accepted);
    CHECK (accepted == 1);
    CHECK (json_array_size (log) == 5);
    //  The line is gone, the rest of the section kept whole.
    CHECK (!strcmp (kf_jstr (out, "strategies"), "- Vectorise the loop.\n" S_SLACK "\n- Fuse "
                                                 "the two functions."));
    json_t *e = json_array_get (log, 0);
    CHECK (json_is_true (json_object_get (e, "accepted")));
    CHECK (!strcmp (kf_jstr (e, "section"), "strategies") && !strcmp (kf_jstr (e, "search"),
                                                                       S_THREADS));
    CHECK (!strcmp (kf_jstr (e, "replace"), ""));
    CHECK (kf_test_has (kf_jstr (e, "reason"), "retracted: candidates 8 (151.00x)"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 1), "reason"), "needs its reason"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 2), "reason"), "names no outcome"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 3), "reason"), "no guess 7: the sections "
                                                                     "hold 2"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 4), "reason"), "retracted or changed"));
    CHECK (!json_is_true (json_object_get (json_array_get (log, 4), "accepted")));
    //  The last line of a section goes with the newline before it.
    json_t *last = json_pack ("{s:s}", "strategies", "- A.\n" S_SLACK);
    json_t *one = json_pack ("[{s:i, s:s}]", "guess", 1, "text", "candidate 9: 2 ms");
    json_t *out2 = kf_meta_apply_retractions (last, last, one, 3, log, &accepted);
    CHECK (accepted == 1 && !strcmp (kf_jstr (out2, "strategies"), "- A."));
    json_decref (out2);
    json_decref (one);
    json_decref (last);
    json_decref (out);
    json_decref (log);
    json_decref (sections);
    json_decref (r);
}

//  A version made by a retraction says what it removed.
static void
s_removed (void)
{
    json_t *history = json_pack ("[{s:i, s:i, s:i, s:[{s:s, s:s, s:s}]}]", "number", 3,
                                 "parent", 2, "generation", 2, "edits", "section",
                                 "strategies", "search", S_SLACK, "replace", "");
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_meta_history_text (f, history, 3);
    fclose (f);
    CHECK (kf_test_has (text, "- v3 (from v2 at generation 2; edits: strategies: removed \"- "
                              "Spend the tolerance"));
    CHECK (!kf_test_has (text, "replaced"));
    free (text);
    json_decref (history);
}

int
main (void)
{
    s_lines ();
    s_prompt ();
    s_retract ();
    s_removed ();
    return kf_test_done ("test_meta_round17");
}
