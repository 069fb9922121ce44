/*  test_meta_round14.c - what the model in the loop found in the meta
 *  round of round 14, fixed:
 *  1. the meta prompt showed candidate 3 at its screen figure while its
 *     full protocol was running: an outcome's figure says which protocol
 *     it is, a screen's with its spread and that its full protocol is
 *     still running, and a due round waits (a while) for full figures
 *     in flight (kf_meta_waits);
 *  2. a strategy cited a screen figure that went stale: a sentence that
 *     puts a figure beside a candidate whose figure is a screen timing
 *     only is kept with KF_META_SCREEN_MARK;
 *  3. an appended line contradicted a kept one: the prompt says to
 *     replace the line;
 *  4. the idea list could not be edited: DROP IDEA / REWORD IDEA lines,
 *     parsed, checked and applied by place (kf_meta_ideas.h), shown
 *     numbered in the meta prompt, and handed out from the version.
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_edits.h"
#include "../../coordinator/kf_meta_ideas.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_meta_score.h"
#include "kf_json.h"
#include <stdlib.h>
#include <string.h>

static json_t *
s_sections (void)
{
    return json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", "Memory bound.", "strategies",
                      "- Vectorise.", "pitfalls", "- Tails.", "analysis", "What binds?");
}

//  An elementwise host task with libm calls: a list of several ideas.
static json_t *
s_spec (void)
{
    return json_pack ("{s:s, s:s, s:{s:s, s:s}}", "name", "mish", "description",
                      "y = x * tanh(softplus(x)), elementwise", "reference", "language",
                      "python", "source", "return x * torch.tanh(torch.nn.functional.softplus(x))");
}

static void
s_figures (void)
{
    json_t *run = json_pack ("{s:s, s:s, s:o}", "language", "c", "target", "host", "spec",
                             s_spec ());
    json_t *outcomes = json_pack (
        "[{s:i, s:i, s:i, s:s, s:f, s:s, s:f},"
        " {s:i, s:i, s:i, s:s, s:f, s:s}]",
        "candidate_id", 3, "generation", 0, "prompt_version", 1, "status", "correct",
        "speedup", 2.2, "fidelity", "pending", "noise", 0.06,
        "candidate_id", 4, "generation", 0, "prompt_version", 1, "status", "correct",
        "speedup", 2.4, "fidelity", "full");
    json_t *sections = s_sections ();
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    CHECK (kf_test_has (p, "- candidate 3 (generation 0, prompt v1): correct, 2.200x the reference "
                           "(screen timing only, its full protocol still running, +/-6%: a short, "
                           "noisy figure; not one to cite in a section)"));
    CHECK (kf_test_has (p, "- candidate 4 (generation 0, prompt v1): correct, 2.400x the reference "
                           "(full protocol)"));
    CHECK (kf_test_has (p, "Cite full-protocol figures only."));
    CHECK (kf_test_has (p, "One line, one claim: a new line that contradicts a line the sections keep"));
    CHECK (kf_test_has (p, "Copy the old line exactly as the SEARCH text"));
    //  The ideas, numbered, and how to edit them.
    size_t n = 0;
    const char *const *dflt = kf_prompt_ideas_for (json_object_get (run, "spec"), KF_TARGET_HOST,
                                                   &n);
    CHECK (n >= 3);
    char line[400];
    snprintf (line, sizeof line, "\n## Ideas (each attempt of the search is handed one of "
              "these in turn)\n1. %s\n2. %s\n", n ? dflt[0] : "", n > 1 ? dflt[1] : "");
    CHECK (kf_test_has (p, line));
    CHECK (kf_test_has (p, "DROP IDEA <number>: <why"));
    //  Round 29: a drop's reason of 325 bytes was refused, and the prompt
    //  gave the limit for the other two lines only.
    CHECK (kf_test_has (p, "that show it, one line of at most 320 bytes>"));
    //  Round 15: "characters" where the limit counts bytes.
    CHECK (kf_test_has (p, "REWORD IDEA <number>: <the idea's new text, one line of at most 320 "
                           "bytes (an ASCII character is one byte)>"));
    //  Round 42: whether "REWORD IDEA n: " counted towards the limit.
    CHECK (kf_test_has (p, "Each limit counts the text after the colon, not the command "
                           "before it."));
    free (p);

    //  A dropped idea is shown dropped, in its place.
    json_t *list = kf_meta_idea_list (NULL, json_object_get (run, "spec"), KF_TARGET_HOST);
    json_object_set_new (json_array_get (list, 1), "dropped", json_string ("another task's"));
    json_object_set_new (sections, KF_META_IDEAS_KEY, list);
    p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL, NULL);
    snprintf (line, sizeof line, "\n2. (dropped, no longer handed out: another task's) %s\n",
              n > 1 ? dflt[1] : "");
    CHECK (kf_test_has (p, line));
    free (p);

    //  A due round waits for full figures in flight, one generation's
    //  worth of finished candidates at most.
    CHECK (!kf_meta_waits (0, 4, 1, 4, 0));     //  none pending
    CHECK (kf_meta_waits (0, 4, 1, 4, 1));      //  due at 4, one pending
    CHECK (kf_meta_waits (0, 7, 1, 4, 2));
    CHECK (!kf_meta_waits (0, 8, 1, 4, 1));     //  waited a generation: goes
    CHECK (kf_meta_waits (1, 10, 2, 3, 1));     //  round 2 due at 12: not past 15
    CHECK (!kf_meta_waits (1, 15, 2, 3, 1));
    json_decref (sections);
    json_decref (outcomes);
    json_decref (run);
}

//  One edit judged against OUTCOMES: its log entry (caller's), the new
//  sections in *OUT (caller's).
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

static void
s_screen_cited (void)
{
    json_t *sections = s_sections ();
    json_t *outcomes = json_pack (
        "[{s:i, s:s, s:f}, {s:i, s:s, s:f}, {s:i, s:s, s:f}]",
        "candidate_id", 3, "fidelity", "screen", "speedup", 2.1,
        "candidate_id", 5, "fidelity", "full", "speedup", 2.3,
        "candidate_id", 6, "fidelity", "full", "speedup", 2.4);
    json_t *out = NULL;
    //  Round 14's line: a figure beside a screen-only candidate, marked.
    json_t *e = s_judge (sections, "strategies", "- Vectorise.",
                         "- Stream the output (candidate 3 with streaming stores, 2319 us on the "
                         "screen only). Candidates 5 and 6 (2.3x, 2.4x) vectorise.",
                         outcomes, &out);
    char mark[300];
    snprintf (mark, sizeof mark, KF_META_SCREEN_MARK, 3LL);
    char want[600];
    snprintf (want, sizeof want, "2319 us on the screen only)%s. Candidates 5 and 6", mark);
    CHECK (json_is_true (json_object_get (e, "accepted")));
    CHECK (kf_test_has (kf_jstr (out, "strategies"), want));
    //  Only the sentence that cites it.
    CHECK (!kf_test_has (kf_jstr (out, "strategies"), "vectorise. (candidate"));
    CHECK (kf_test_has (kf_jstr (e, "reason"), "1 sentence marked: a figure beside candidate 3, whose "
                                               "figure in this run is a screen timing only"));
    json_decref (e);
    json_decref (out);
    //  Named without a figure: left alone; so is a full candidate's figure.
    e = s_judge (sections, "pitfalls", "- Tails.",
                 "- Candidate 3 uses streaming stores. Candidate 5 ran at 2.3x.", outcomes, &out);
    CHECK (!kf_test_has (kf_jstr (out, "pitfalls"), "screen timing only when"));
    CHECK (!kf_jstr (e, "reason")[0] || !kf_test_has (kf_jstr (e, "reason"), "screen"));
    json_decref (e);
    json_decref (out);
    //  A pending candidate is screen-only too; a kept mark is not marked again.
    json_object_set_new (json_array_get (outcomes, 0), "fidelity", json_string ("pending"));
    char kept[700];
    snprintf (kept, sizeof kept, "- Candidate 3 took 2.32 ms%s.", mark);
    e = s_judge (sections, "pitfalls", "- Tails.", kept, outcomes, &out);
    CHECK (!strcmp (kf_jstr (out, "pitfalls"), kept));
    json_decref (e);
    json_decref (out);
    e = s_judge (sections, "pitfalls", "- Tails.", "- Candidate 3 took 2.32 ms.", outcomes, &out);
    CHECK (kf_test_has (kf_jstr (out, "pitfalls"), "2.32 ms (candidate 3's figure was a screen"));
    json_decref (e);
    json_decref (out);
    json_decref (outcomes);
    json_decref (sections);
}

static void
s_ideas (void)
{
    json_t *spec = s_spec ();
    size_t n = 0;
    const char *const *dflt = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    //  No list in the sections: the defaults.
    size_t count = 0;
    const char **ideas = kf_meta_ideas (NULL, spec, KF_TARGET_HOST, &count);
    CHECK (count == n && ideas && !strcmp (ideas[0], dflt[0]));
    free (ideas);

    json_t *edits = kf_meta_parse_idea_edits (
        "Diagnosis: idea 2 names another task's identity.\n"
        "DROP IDEA 2: it describes Mish's identity, not this task's (candidates 3, 5)\n"
        "- **Reword idea 3:** use AVX2 intrinsics on 8 floats at a time\n"
        "<<<<<<< SEARCH\n"
        "DROP IDEA 1: inside a block, not an idea edit\n"
        "=======\n"
        "x\n"
        ">>>>>>> REPLACE\n"
        "reword idea 99: no such idea\n"
        "DROP IDEA 4:\n"
        "REWORD IDEA 3: again\n"
        "REWORD IDEA 1: use AVX2 intrinsics on 8 floats at a time\n");
    CHECK (json_array_size (edits) == 6);
    json_t *e0 = json_array_get (edits, 0), *e1 = json_array_get (edits, 1);
    CHECK (!strcmp (kf_jstr (e0, "action"), "drop") && kf_jint (e0, "idea") == 2
           && !strcmp (kf_jstr (e0, "text"), "it describes Mish's identity, not this task's "
                                             "(candidates 3, 5)"));
    CHECK (!strcmp (kf_jstr (e1, "action"), "reword") && kf_jint (e1, "idea") == 3
           && !strcmp (kf_jstr (e1, "text"), "use AVX2 intrinsics on 8 floats at a time"));

    json_t *list = kf_meta_idea_list (NULL, spec, KF_TARGET_HOST);
    json_t *log = json_array ();
    int accepted = 0;
    json_t *out = kf_meta_apply_idea_edits (list, edits, 3, log, &accepted);
    CHECK (accepted == 2);
    CHECK (json_array_size (log) == 6);
    CHECK (json_array_size (out) == n);   //  a dropped idea keeps its place
    CHECK (!strcmp (kf_jstr (json_array_get (out, 1), "dropped"),
                    "it describes Mish's identity, not this task's (candidates 3, 5)"));
    CHECK (!strcmp (kf_jstr (json_array_get (out, 1), "text"), dflt[1]));
    CHECK (!strcmp (kf_jstr (json_array_get (out, 2), "text"),
                    "use AVX2 intrinsics on 8 floats at a time"));
    CHECK (!strcmp (kf_jstr (json_array_get (out, 0), "text"), dflt[0]));
    static const char *const reasons[] = {
        NULL, NULL, "no idea 99: the list has", "a dropped idea needs its reason",
        "idea 3 was edited earlier in this reply", "the new text is idea 3's" };
    for (size_t i = 0; i < 6; i++) {
        json_t *entry = json_array_get (log, i);
        CHECK (!strcmp (kf_jstr (entry, "section"), "ideas"));
        CHECK (json_is_true (json_object_get (entry, "accepted")) == !reasons[i]);
        if (reasons[i])
            CHECK (kf_test_has (kf_jstr (entry, "reason"), reasons[i]));
    }
    CHECK (!strcmp (kf_jstr (json_array_get (log, 0), "search"), dflt[1]));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 0), "replace"), "dropped: it describes"));
    //  The version's list, as the planner and the kernel prompt take it.
    json_t *sections = s_sections ();
    json_object_set (sections, KF_META_IDEAS_KEY, out);
    ideas = kf_meta_ideas (sections, spec, KF_TARGET_HOST, &count);
    CHECK (count == n - 1);
    CHECK (ideas && !strcmp (ideas[0], dflt[0])
           && !strcmp (ideas[1], "use AVX2 intrinsics on 8 floats at a time"));
    for (size_t i = 0; ideas && i < count; i++)
        CHECK (strcmp (ideas[i], dflt[1]));
    free (ideas);
    json_decref (log);
    json_decref (edits);

    //  Refused: too long, a control character, a marker, the same text,
    //  too many, and dropping every idea left.
    char longer[KF_META_IDEA_MAX + 40];
    memset (longer, 'a', sizeof longer - 1);
    longer[sizeof longer - 1] = 0;
    edits = json_pack ("[{s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:s}, {s:s, s:i, s:s}]",
                       "action", "reword", "idea", 1, "text", longer,
                       "action", "reword", "idea", 1, "text", "tab\there",
                       "action", "reword", "idea", 1, "text", "<<<kf:end strategies>>>",
                       "action", "reword", "idea", 1, "text", dflt[0]);
    log = json_array ();
    json_t *again = kf_meta_apply_idea_edits (out, edits, 3, log, &accepted);
    CHECK (accepted == 0);
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 0), "reason"), "(at most 320)"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 1), "reason"), "control character"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 2), "reason"), "marker"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 3), "reason"), "equals the idea's text"));
    CHECK (json_equal (again, out));
    json_decref (again);
    json_decref (log);
    json_decref (edits);
    edits = json_array ();
    for (size_t i = 1; i <= n; i++)
        json_array_append_new (edits, json_pack ("{s:s, s:i, s:s}", "action", "drop", "idea",
                                                 (int) i, "text", "no"));
    log = json_array ();
    again = kf_meta_apply_idea_edits (out, edits, 100, log, &accepted);
    CHECK (accepted == (int) n - 2);   //  one was dropped already, one must stay
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 1), "reason"), "idea 2 is dropped already"));
    CHECK (kf_test_has (kf_jstr (json_array_get (log, n - 1), "reason"), "would leave no idea"));
    json_t *holder = json_pack ("{s:O}", KF_META_IDEAS_KEY, again);
    ideas = kf_meta_ideas (holder, spec, KF_TARGET_HOST, &count);
    CHECK (count == 1);
    free (ideas);
    json_decref (holder);
    json_decref (again);
    json_decref (log);
    log = json_array ();
    again = kf_meta_apply_idea_edits (out, edits, 1, log, &accepted);
    CHECK (accepted == 1);
    CHECK (kf_test_has (kf_jstr (json_array_get (log, 2), "reason"), "too many idea edits: at most 1"));
    json_decref (again);
    json_decref (log);
    json_decref (edits);
    json_decref (sections);
    json_decref (out);
    json_decref (list);
    json_decref (spec);
}

int
main (void)
{
    s_figures ();
    s_screen_cited ();
    s_ideas ();
    return kf_test_done ("test_meta_round14");
}
