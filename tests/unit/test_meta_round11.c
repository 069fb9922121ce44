/*  test_meta_round11.c - the meta-prompt findings of round 11 of the model
 *  in the loop (findings 11 and 12 and the two META notes):
 *  1. ranks go stale: the meta prompt asks for figures, not "the best",
 *     and an edit that calls a candidate the best/fastest is kept with a
 *     mark that says when it was ranked (KF_META_RANK_MARK);
 *  2. a kernel prompt says when a meta round is in flight (its version
 *     applies only to attempts planned after its reply), when a newer
 *     version was passed over, and why the last round's edits were
 *     rejected, in one line (kf_meta_note.c);
 *  3. a factual correction of the philosophy quoting the task's text is
 *     accepted from fewer than KF_META_PHILOSOPHY_MIN outcomes, and the
 *     meta prompt shows the task's text and says how to mark one;
 *  4. the meta prompt's measure of a version is the "version score", not
 *     a second "fitness";
 *  5. a version's kernels still pending are counted apart, and an idea
 *     is cut at a word with "...".
 */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_edits.h"
#include "../../coordinator/kf_meta_note.h"
#include "../../coordinator/kf_meta_prompt.h"
#include "../../coordinator/kf_meta_score.h"
#include "../../coordinator/kf_prompt.h"
#include "kf_json.h"
#include <stdlib.h>
#include <string.h>

//  The outcomes a round was shown: candidates 2, 3 and 9 full, 7 screen.
static json_t *
s_outcomes (void)
{
    return json_pack ("[{s:i, s:s, s:f}, {s:i, s:s, s:f}, {s:i, s:s, s:f}, {s:i, s:s, s:f}]",
                      "candidate_id", 2, "fidelity", "full", "speedup", 2.78,
                      "candidate_id", 3, "fidelity", "full", "speedup", 4.07,
                      "candidate_id", 7, "fidelity", "screen", "speedup", 2.91,
                      "candidate_id", 9, "fidelity", "pending", "speedup", 2.76);
}

static json_t *
s_sections (void)
{
    return json_pack ("{s:s, s:s, s:s, s:s}", "philosophy",
                      "The kernel uses additions, products, minima and maxima only.",
                      "strategies", "- Vectorise.", "pitfalls", "- Tails.", "analysis",
                      "1. Where does the time go?");
}

//  One edit under RULES: its log entry (caller's), the sections in *OUT.
static json_t *
s_judge (const char *section, const char *search, const char *replace,
         const kf_meta_rules_t *rules, json_t **out)
{
    json_t *sections = s_sections ();
    json_t *edits = json_pack ("[{s:s, s:s, s:s}]", "section", section, "search", search,
                               "replace", replace);
    json_t *log = NULL;
    *out = kf_meta_apply_edits_ruled (sections, edits, 3, NULL, rules, &log);
    json_t *entry = json_incref (json_array_get (log, 0));
    json_decref (log);
    json_decref (edits);
    json_decref (sections);
    return entry;
}

//  1: a rank beside a candidate is marked; figures are not.
static void
test_ranks (void)
{
    json_t *outcomes = s_outcomes ();
    kf_meta_rules_t rules = { .outcomes = outcomes };
    json_t *out = NULL;
    /* Round 11's v2 strategy, word for word in its stale part. */
    json_t *e = s_judge ("strategies", "",
                         "- Streaming stores: candidates 2 and 3 wrote the output once. "
                         "Candidate 2 did this (1.38 ms, the best full-protocol figure).\n",
                         &rules, &out);
    printf ("rank: %s\n%s\n", kf_jstr (e, "reason"), kf_jstr (out, "strategies"));
    CHECK (json_is_true (json_object_get (e, "accepted")));
    CHECK (kf_test_has (kf_jstr (out, "strategies"),
                        "Candidate 2 did this (1.38 ms, the best full-protocol figure) (ranked when "
                        "written, among the kernels up to number 9: a later one may be faster; "
                        "compare the figures).\n"));
    /* The first sentence names candidates and no rank: as written. */
    CHECK (kf_test_has (kf_jstr (out, "strategies"),
                        "candidates 2 and 3 wrote the output once. Candidate 2"));
    CHECK (kf_test_has (kf_jstr (e, "reason"), "1 sentence marked as ranked when written: \"best\""));
    json_decref (e);
    json_decref (out);
    /* Fastest, slowest, '#N', any section. */
    e = s_judge ("pitfalls", "", "- #3 is the fastest kernel; threads lost.", &rules, &out);
    CHECK (kf_test_has (kf_jstr (out, "pitfalls"), "- #3 is the fastest kernel (ranked when written"));
    CHECK (kf_test_has (kf_jstr (out, "pitfalls"), "compare the figures); threads lost."));
    json_decref (e);
    json_decref (out);
    e = s_judge ("analysis", "", "2. Why is candidate 7 the slowest?", &rules, &out);
    CHECK (kf_test_has (kf_jstr (out, "analysis"), "the slowest (ranked when written"));
    json_decref (e);
    json_decref (out);
    /* Figures without a rank, or a rank naming no candidate: not marked. */
    const char *plain[] = { "- Candidates 2 (1.38 ms) and 3 (944 us, full protocol) stream.",
                            "- Pick the best tile size by measuring it.",
                            "- Candidates 2 and 3: bestowed with streaming stores.", NULL };
    for (int i = 0; plain[i]; i++) {
        e = s_judge ("strategies", "", plain[i], &rules, &out);
        CHECK (json_is_true (json_object_get (e, "accepted")));
        CHECK (!kf_test_has (kf_jstr (out, "strategies"), "ranked when written"));
        json_decref (e);
        json_decref (out);
    }
    /* A later round that keeps the mark is not marked twice. */
    e = s_judge ("strategies", "",
                 "- Candidates 2 and 3: candidate 3 is the fastest (ranked when written, among "
                 "the kernels up to number 9: a later one may be faster; compare the figures).",
                 &rules, &out);
    const char *first = strstr (kf_jstr (out, "strategies"), "ranked when written");
    CHECK (first && !strstr (first + 1, "ranked when written"));
    json_decref (e);
    json_decref (out);
    /* Without the outcomes shown, no rules: as before. */
    e = s_judge ("strategies", "", "- Candidate 2 is the best.", NULL, &out);
    CHECK (!kf_test_has (kf_jstr (out, "strategies"), "ranked when written"));
    json_decref (e);
    json_decref (out);
    json_decref (outcomes);
}

//  3: a factual correction of the philosophy from 2 full outcomes.
static void
test_factual (void)
{
    json_t *outcomes = s_outcomes ();
    const char *task = "Softsign, then an affine map: y = a * x / (1 + |x|) + b.\n"
                       "return a * (x / (1 + torch.abs(x))) + b";
    kf_meta_rules_t rules = { .outcomes = outcomes, .task = task };
    const char *search = "The kernel uses additions, products, minima and maxima only.";
    json_t *out = NULL;
    json_t *e = s_judge ("philosophy", search,
                         "Factual correction: the task computes \"x / (1 + torch.abs(x))\", "
                         "one divide per element besides additions and products.",
                         &rules, &out);
    printf ("factual: %s\n", kf_jstr (e, "reason"));
    CHECK (json_is_true (json_object_get (e, "accepted")));
    CHECK (kf_test_has (kf_jstr (out, "philosophy"), "one divide per element"));
    CHECK (kf_test_has (kf_jstr (e, "reason"), "accepted as a factual correction from 2 "
                                               "full-protocol outcomes: it quotes the task's "
                                               "\"x / (1 + torch.abs(x))\""));
    json_decref (e);
    json_decref (out);
    /* Curly quotes, any case of the words. */
    e = s_judge ("philosophy", search,
                 "FACTUAL CORRECTION: \xe2\x80\x9cy = a * x / (1 + |x|) + b\xe2\x80\x9d divides.",
                 &rules, &out);
    CHECK (json_is_true (json_object_get (e, "accepted")));
    json_decref (e);
    json_decref (out);
    /* Round 32: a quote of a sentence the task's text breaks over two
     * lines, quoted as one. */
    e = s_judge ("philosophy", search,
                 "Factual correction: \"Softsign, then an affine map: y = a * x / (1 + |x|) + b. "
                 "return a * (x\" is the task.", &rules, &out);
    CHECK (json_is_true (json_object_get (e, "accepted")));
    json_decref (e);
    json_decref (out);
    /* Not a correction: no words, a quote not in the task, a short one,
     * or a quote of the philosophy itself. */
    const char *not_fact[] = {
        "The task computes \"x / (1 + torch.abs(x))\": the divide binds.",
        "Factual correction: the task computes \"x / (1 + x * x)\".",
        "Factual correction: it has \"/ (1\".",
        "Factual correction: \"additions, products, minima and maxima only\" is wrong.",
        NULL };
    for (int i = 0; not_fact[i]; i++) {
        e = s_judge ("philosophy", search, not_fact[i], &rules, &out);
        CHECK (!json_is_true (json_object_get (e, "accepted")));
        CHECK (!strcmp (kf_jstr (out, "philosophy"), search));
        CHECK (kf_test_has (kf_jstr (e, "reason"), "or say \"Factual correction:\" and quote the "
                                                   "task's text that shows the error"));
        json_decref (e);
        json_decref (out);
    }
    json_decref (outcomes);
}

//  The meta prompt of a softsign run: rules, task, history, outcomes.
static char *
s_meta_prompt (json_t *outcomes, json_t *history)
{
    json_t *run = json_pack ("{s:s, s:s, s:{s:s, s:s, s:{s:s, s:s}}}", "language", "c",
                             "target", "host", "spec", "name", "softsign_affine", "description",
                             "Softsign, then an affine map: y = a * x / (1 + |x|) + b.",
                             "reference", "language", "pytorch", "source",
                             "return a * (x / (1 + torch.abs(x))) + b");
    json_t *sections = s_sections ();
    kf_meta_base_t base = { .number = 1, .why = "", .population = 3 };
    char *p = kf_meta_prompt_text (run, sections, &base, outcomes, 3, NULL, NULL, NULL,
                                   history);
    json_decref (sections);
    json_decref (run);
    return p;
}

//  1, 3, 4, 5: the meta prompt's text.
static void
test_meta_prompt (void)
{
    /* Round 11's matmul idea, long enough that byte 160 falls in "time". */
    const char *idea = "register-blocked micro-kernel: dot products along k (the common "
                       "one), one vector accumulator per output, taking a few rows of x "
                       "against a few rows of W at a time so that each load feeds several "
                       "products";
    json_t *outcomes = json_pack ("[{s:i, s:i, s:i, s:s, s:s, s:f, s:s, s:s}]", "candidate_id",
                                  4, "generation", 0, "prompt_version", 1, "phase", "search",
                                  "status", "correct", "speedup", 32.9, "fidelity", "full",
                                  "idea", idea);
    json_t *history = json_pack ("[{s:i, s:i, s:b, s:i, s:i, s:f, s:f, s:{s:i}}]", "number", 1,
                                 "generation", 0, "in_archive", 1, "candidates", 3, "pending",
                                 2, "mean_fitness", 0.878, "best_speedup", 2.78, "verdicts",
                                 "correct", 3);
    char *p = s_meta_prompt (outcomes, history);
    CHECK (p != NULL);
    printf ("%s", p ? p : "");
    /* 1: figures, not ranks. */
    CHECK (kf_test_has (p, "Cite figures, not ranks: write \"candidate 3 (944 us, full protocol)\", "
                           "never that a candidate is the best, the fastest, the slowest or the "
                           "worst."));
    CHECK (kf_test_has (p, "is kept but marked \"(ranked when written, ...)\""));
    /* 3: the exception, how it is marked, and the task's text to quote. */
    CHECK (kf_test_has (p, "One exception: a plain factual error that the task's own text or "
                           "reference code contradicts"));
    CHECK (kf_test_has (p, "by an edit whose new text contains \"Factual correction:\" and quotes in "
                           "double quotes at least 8 characters copied exactly"));
    CHECK (kf_test_has (p, "A factual correction as above is accepted whatever the count."));
    CHECK (kf_test_has (p, "## The task (fixed; what a factual correction quotes)\nSoftsign, then an "
                           "affine map: y = a * x / (1 + |x|) + b.\nReference implementation "
                           "(pytorch):\n```\nreturn a * (x / (1 + torch.abs(x))) + b\n```"));
    /* 4: one name per formula. */
    CHECK (!kf_test_has (p, "mean fitness"));
    CHECK (kf_test_has (p, "A version's \"version score\" is its own measure, not the archive's "
                           "fitness that kernel prompts quote"));
    CHECK (kf_test_has (p, "compared by their version scores"));
    /* 5: finished and pending apart; the idea cut at a word. */
    CHECK (kf_test_has (p, "- v1 (the default sections): 3 kernels finished (3 correct), version "
                           "score 0.878, best full-protocol 2.780x; 2 more written with it and not finished yet"));
    CHECK (kf_test_has (p, "rows of W at a...\""));
    CHECK (!kf_test_has (p, "at a tim"));
    free (p);
    json_decref (history);
    /* Nothing finished yet, two pending. */
    history = json_pack ("[{s:i, s:i, s:i, s:i}]", "number", 1, "generation", 0, "candidates",
                         0, "pending", 2);
    p = s_meta_prompt (outcomes, history);
    CHECK (kf_test_has (p, "- v1 (the default sections): no kernel finished under it yet (2 more "
                           "written with it and not finished yet)"));
    free (p);
    json_decref (history);
    json_decref (outcomes);
}

//  4, 5: the reason a version is drawn.
static void
test_pick_reason (void)
{
    json_t *versions = json_pack ("[{s:i, s:i, s:f, s:i, s:i}, {s:i, s:i, s:f, s:i, s:i}]",
                                  "id", 20, "number", 2, "fitness", 0.3, "used", 5, "finished",
                                  4, "id", 10, "number", 1, "fitness", 0.878, "used", 5,
                                  "finished", 3);
    char why[400];
    json_t *pick = kf_meta_pick (versions, 3, why, sizeof why);
    printf ("why: %s\n", why);
    CHECK (pick && kf_jint (pick, "number") == 1);
    CHECK (kf_test_has (why, "v1 has the highest draw: version score 0.878, the mean over its latest "
                             "finished kernels (5 kernels written with it: 3 finished, 2 not "
                             "finished yet), plus a bonus for versions used less"));
    CHECK (kf_test_has (why, "chosen over the newer v2 (version score 0.300; 5 kernels written with "
                             "it: 4 finished, 1 not finished yet)"));
    CHECK (!kf_test_has (why, "fitness"));
    json_decref (versions);
}

//  5: kf_meta_word_cut.
static void
test_word_cut (void)
{
    CHECK (kf_meta_word_cut ("at a time", 9, 20) == 9);
    CHECK (kf_meta_word_cut ("rows of W at a time", 19, 17) == 14);    /* "rows of W at a" */
    CHECK (kf_meta_word_cut ("rows of W, at a time", 20, 11) == 9);    /* comma off */
    CHECK (kf_meta_word_cut ("abcdefghijklmnop", 16, 8) == 8);         /* one long word */
    CHECK (kf_meta_word_cut ("abcdef\xc3\xa9gh", 10, 7) == 6);         /* not inside 'é' */
}

//  The kernel prompt's version line under STATE (NULL: none) at VERSION.
static char *
s_kernel_prompt (json_t *state, int version, int generation)
{
    json_t *spec = json_pack ("{s:s, s:s, s:s, s:[{s:s, s:[i], s:s}], s:[{s:s, s:[i], s:s}],"
                              " s:{s:s, s:s}, s:{s:f, s:f}}",
                              "name", "softsign", "op", "elementwise", "description",
                              "Softsign.", "inputs", "name", "in0", "shape", 4096, "dtype",
                              "f32", "outputs", "name", "out0", "shape", 4096, "dtype", "f32",
                              "reference", "language", "pytorch", "source",
                              "return x / (1 + x.abs())", "tolerance", "rtol", 0.01, "atol",
                              1e-5);
    json_t *sections = s_sections ();
    if (state)
        json_object_set (sections, KF_META_NOTE_KEY, state);
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host",
                          .sections = sections, .prompt_version = version,
                          .prompt_version_generation = generation };
    char *p = kf_prompt_build (&in);
    json_decref (sections);
    json_decref (spec);
    return p;
}

//  The line of P that holds WHAT, copied (caller frees), or NULL.
static char *
s_line_of (const char *p, const char *what)
{
    const char *hit = p ? strstr (p, what) : NULL;
    if (!hit)
        return NULL;
    const char *start = hit;
    while (start > p && start[-1] != '\n')
        start--;
    return strndup (start, strcspn (start, "\n"));
}

//  2: the kernel prompt says where the meta rounds stand.
static void
test_kernel_prompt (void)
{
    /* Round 11: v1 while round 1 waited for its model. */
    json_t *state = json_pack ("{s:{s:i, s:i, s:i, s:s}}", "in_flight", "round", 1,
                               "generation", 1, "parent_version", 1, "since", "10:03 UTC");
    char *p = s_kernel_prompt (state, 1, 0);
    CHECK (kf_test_has (p, "(The four sections below are the original ones, prompt version v1: no "
                           "meta-prompter has rewritten them in this run yet. A meta round rewriting "
                           "these sections has been in flight since 10:03 UTC (round 1, queued at "
                           "generation 1): the version it makes, if its edits are accepted, applies "
                           "to the attempts planned after its reply is judged, not to this one.)"));
    free (p);
    json_decref (state);
    /* The last round's edits rejected: said, and why, in one line. */
    state = json_pack ("{s:{s:i, s:i, s:s, s:i, s:[{s:s, s:s}, {s:s, s:s}, {s:s, s:s}]}}",
                       "last_round", "round", 1, "generation", 1, "state", "done", "accepted",
                       0, "rejected", "section", "philosophy", "reason",
                       "edits the philosophy from 2 outcomes with a full-protocol figure (at "
                       "least 4 needed): put the suspicion in the analysis questions, or say "
                       "\"Factual correction:\" and quote the task's text",
                       "section", "strategies", "reason",
                       "search text not found in the named section", "section", "analysis",
                       "reason", "search text is ambiguous: found more than once");
    p = s_kernel_prompt (state, 1, 0);
    char *line = s_line_of (p, "(The last meta round");
    printf ("last round: %s\n", line ? line : "(none)");
    CHECK (kf_test_has (line, "(The last meta round, round 1, queued at generation 1, made no new "
                              "version: what it proposed was rejected: philosophy: edits the "
                              "philosophy from 2 outcomes with a full-protocol figure (at least 4 "
                              "needed)"));
    CHECK (kf_test_has (line, "...; strategies: search text not found in the named section; and 1 "
                              "more.)"));
    CHECK (line && strlen (line) < 400);
    free (line);
    free (p);
    json_decref (state);
    /* A version made with some edits rejected; a failed round. */
    state = json_pack ("{s:{s:i, s:i, s:s, s:i, s:i, s:[{s:s, s:s}]}}", "last_round", "round",
                       2, "generation", 3, "state", "done", "accepted", 2, "made", 3,
                       "rejected", "section", "analysis", "reason", "search text not found");
    p = s_kernel_prompt (state, 3, 3);
    CHECK (kf_test_has (p, "(The last meta round, round 2, queued at generation 3, made v3 from 2 "
                           "edits and had 1 rejected: analysis: search text not found.)"));
    free (p);
    json_decref (state);
    state = json_pack ("{s:{s:i, s:s, s:s}}", "last_round", "round", 1, "state", "failed",
                       "reason", "the gateway gave up after 3 attempts");
    p = s_kernel_prompt (state, 1, 0);
    CHECK (kf_test_has (p, "(The last meta round, round 1, failed and made no new version: the "
                           "gateway gave up after 3 attempts.)"));
    free (p);
    json_decref (state);
    /* A newer version passed over: v1 is no longer "not rewritten yet". */
    state = json_pack ("{s:{s:i, s:i, s:s}}", "newer", "number", 2, "generation", 3, "why",
                       "v1 has the highest draw: version score 0.900");
    p = s_kernel_prompt (state, 1, 0);
    CHECK (kf_test_has (p, "(The four sections below are the original ones, prompt version v1. v2, "
                           "written by the meta-prompter at generation 3, was passed over for this "
                           "attempt: v1 has the highest draw: version score 0.900.)"));
    CHECK (!kf_test_has (p, "no meta-prompter has rewritten them"));
    free (p);
    json_decref (state);
    /* A round in flight on another version than the one shown. */
    state = json_pack ("{s:{s:i, s:i, s:i}}", "in_flight", "round", 2, "generation", 4,
                       "parent_version", 2);
    p = s_kernel_prompt (state, 1, 0);
    CHECK (kf_test_has (p, " A meta round rewriting v2's sections has been in flight (round 2, "
                           "queued at generation 4)"));
    free (p);
    json_decref (state);
    /* No state: the lines as before, and no meta text. */
    p = s_kernel_prompt (NULL, 2, 2);
    CHECK (kf_test_has (p, "(The four sections below are of prompt version v2, rewritten by the "
                           "meta-prompter at generation 2 from the outcomes so far.)\n"));
    CHECK (!kf_test_has (p, "meta round"));
    CHECK (!kf_test_has (p, KF_META_NOTE_KEY));
    free (p);
}

int
main (void)
{
    test_ranks ();
    test_factual ();
    test_meta_prompt ();
    test_pick_reason ();
    test_word_cut ();
    test_kernel_prompt ();
    return kf_test_done ("test_meta_round11");
}
