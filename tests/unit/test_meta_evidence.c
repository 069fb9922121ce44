/*  test_meta_evidence.c - the meta prompt's evidence rules held, not only
 *  stated (coordinator/kf_meta_edits.c, kf_meta_edits_judged; issue 15,
 *  round 6): the philosophy is not rewritten from fewer than
 *  KF_META_PHILOSOPHY_MIN outcomes with a full-protocol figure, and a
 *  strategy that names fewer than two of them, and does not call itself a
 *  guess, is kept marked as a guess to test. The outcomes are those the
 *  round was shown, so each one's protocol is known.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_edits.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "kf_json.h"
#include <stdlib.h>
#include <string.h>

//  One edit judged against OUTCOMES: its log entry (caller's) and the
//  new sections in *OUT (caller's).
static json_t *
s_judge (json_t *sections, const char *section, const char *search, const char *replace,
         json_t *outcomes, json_t **out)
{
    json_t *edits = json_pack ("[{s:s, s:s, s:s}]", "section", section, "search", search,
                               "replace", replace);
    json_t *log = NULL;
    *out = kf_meta_apply_edits_judged (sections, edits, 3, NULL, outcomes, &log);
    json_t *entry = json_incref (json_array_get (log, 0));
    json_decref (log);
    json_decref (edits);
    return entry;
}

int
main (void)
{
    json_t *sections = json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "Memory bound.",
                                  "strategies", "- Vectorise.", "pitfalls", "- Tails.",
                                  "analysis", "What binds?");
    //  Three full-protocol figures (12, 14, 17), two screens (20, 21), a
    //  failure (22).
    json_t *outcomes = json_pack (
        "[{s:i, s:s, s:f}, {s:i, s:s, s:f}, {s:i, s:s, s:f}, {s:i, s:s, s:f},"
        " {s:i, s:s, s:f}, {s:i, s:s}]",
        "candidate_id", 12, "fidelity", "full", "speedup", 25.0,
        "candidate_id", 14, "fidelity", "full", "speedup", 60.0,
        "candidate_id", 17, "fidelity", "full", "speedup", 28.4,
        "candidate_id", 20, "fidelity", "screen", "speedup", 64.5,
        "candidate_id", 21, "fidelity", "screen", "speedup", 30.0,
        "candidate_id", 22, "status", "compile_failed");
    json_t *out = NULL;

    /* The philosophy from 3 full figures: rejected, and why. */
    json_t *e = s_judge (sections, "philosophy", "Memory bound.", "The math binds.", outcomes,
                         &out);
    printf ("philosophy: %s\n", kf_jstr (e, "reason"));
    CHECK (json_is_false (json_object_get (e, "accepted")));
    CHECK (kf_test_has (kf_jstr (e, "reason"), "edits the philosophy from 3 outcomes with a "
                                               "full-protocol figure (at least 4 needed)"));
    CHECK (!strcmp (kf_jstr (out, "philosophy"), "Memory bound."));
    json_decref (e);
    json_decref (out);
    /* ... accepted once a fourth full figure is in. */
    json_t *more = json_deep_copy (outcomes);
    json_array_append_new (more, json_pack ("{s:i, s:s, s:f}", "candidate_id", 23, "fidelity",
                                            "full", "speedup", 20.0));
    e = s_judge (sections, "philosophy", "Memory bound.", "The math binds.", more, &out);
    CHECK (json_is_true (json_object_get (e, "accepted")));
    CHECK (!strcmp (kf_jstr (out, "philosophy"), "The math binds."));
    json_decref (e);
    json_decref (out);
    json_decref (more);

    /* A strategy naming two full-protocol outcomes: as written. */
    const char *lists[] = { "- Pack B into panels: candidates 12 and 14 gained 2x.",
                            "- Pack B into panels (candidates 12, 14).",
                            "- Pack B into panels (#12 and #17).",
                            "- Pack B into panels: candidate 12 (25x), candidate 17 (28x).",
                            /* Round 11: figures in brackets between the numbers. */
                            "- Read b along n: Candidates 12 (1.80 ms, full (p10 1.7)) and 14 "
                            "(1.71 ms) agree.",
                            /* Round 51: a figure after each number's comma. */
                            "- Pack B into panels (candidates 12, 2.08 ms, and 14, 2.39 ms, "
                            "full protocol).",
                            "- Pack B into panels: candidates 12, 31x, and 17.",
                            NULL };
    for (int i = 0; lists[i]; i++) {
        e = s_judge (sections, "strategies", "", lists[i], outcomes, &out);
        CHECK (json_is_true (json_object_get (e, "accepted")));
        CHECK (!json_object_get (e, "reason"));
        CHECK (!kf_test_has (kf_jstr (out, "strategies"), "a guess to test"));
        json_decref (e);
        json_decref (out);
    }
    /* Naming screens only, one full figure, or nothing: kept, marked. */
    const char *thin[] = { "- Pack B into panels: candidates 20 and 21 gained 2x.",
                           "- Pack B into panels (candidate 12).",
                           "- Pack B into panels (candidates 12 and 22).",
                           /* ... but a plain number after a comma is a candidate. */
                           "- Pack B into panels (candidates 12, 22 and 20).",
                           "- Pack B into panels.", NULL };
    for (int i = 0; thin[i]; i++) {
        e = s_judge (sections, "strategies", "", thin[i], outcomes, &out);
        printf ("strategy %d: %s\n", i, kf_jstr (e, "reason"));
        CHECK (json_is_true (json_object_get (e, "accepted")));
        CHECK (kf_test_has (kf_jstr (e, "reason"), "accepted, marked as a guess to test: names "));
        CHECK (kf_test_has (kf_jstr (out, "strategies"), KF_META_GUESS_MARK));
        CHECK (kf_test_has (kf_jstr (e, "replace"), KF_META_GUESS_MARK));
        json_decref (e);
        json_decref (out);
    }
    e = s_judge (sections, "strategies", "", "- Pack B into panels.\n", outcomes, &out);
    CHECK (kf_test_has (kf_jstr (out, "strategies"), "- Pack B into panels." KF_META_GUESS_MARK));
    json_decref (e);
    json_decref (out);
    /* One that says it is a guess: as written. */
    e = s_judge (sections, "strategies", "- Vectorise.", "- Prefetch ahead (a guess to test).",
                 outcomes, &out);
    CHECK (json_is_true (json_object_get (e, "accepted")) && !json_object_get (e, "reason"));
    CHECK (!strcmp (kf_jstr (out, "strategies"), "- Prefetch ahead (a guess to test)."));
    json_decref (e);
    json_decref (out);
    /* Pitfalls and analysis are not held to it. */
    e = s_judge (sections, "pitfalls", "", "- Wrong tails in 2 of 5.", outcomes, &out);
    CHECK (json_is_true (json_object_get (e, "accepted")) && !json_object_get (e, "reason"));
    json_decref (e);
    json_decref (out);
    /* Without the outcomes (kf_meta_apply_edits): no rule, as before. */
    json_t *edits = json_pack ("[{s:s, s:s, s:s}]", "section", "philosophy", "search",
                               "Memory bound.", "replace", "The math binds.");
    json_t *log = NULL;
    out = kf_meta_apply_edits (sections, edits, 3, NULL, &log);
    CHECK (json_is_true (json_object_get (json_array_get (log, 0), "accepted")));
    json_decref (out);
    json_decref (log);
    json_decref (edits);

    /* The prompt says the rules are checked. */
    json_t *run = json_pack ("{s:s, s:s, s:{s:s}}", "language", "c", "target", "host", "spec",
                             "name", "gemm");
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (kf_test_has (p, "These rules are checked: a philosophy edit with fewer than 4 "
                           "full-protocol outcomes is rejected, and a new strategy that names fewer "
                           "than 2 of them as \"candidate N\" and does not call itself a guess is "
                           "kept, marked \"(a guess to test: fewer than two full-protocol outcomes "
                           "show it)\"."));
    free (p);
    json_decref (run);
    json_decref (outcomes);
    json_decref (sections);
    return kf_test_done ("test_meta_evidence");
}
