/*  kf_meta_code.c - the code a meta prompt shows (kf_meta_code.h).
 */
#include "kf_meta_code.h"
#include "kf_meta_prompt.h"
#include "kf_json.h"
#include "kf_prompt_diff.h"
#include "kf_text.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

const char *
kf_meta_uncounted (json_t *o)
{
    const char *standing = kf_jstr (o, "standing");
    if (!strcmp (standing, "being re-verified"))
        return "timed again before it counts (a second full-protocol timing on fresh inputs, "
               "for a would-be new best or a figure too good to believe)";
    if (!strcmp (standing, "full timing pending"))
        return "waiting for its full-protocol timing";
    if (!strcmp (standing, "held for audit"))
        return "held for a person's audit (its second timing did not confirm it)";
    return NULL;
}

bool
kf_meta_unconfirmed (json_t *outcomes, long long id)
{
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        if (kf_jint (o, "candidate_id") == id && json_is_number (json_object_get (o, "speedup"))
            && !strcmp (kf_jstr (o, "fidelity"), "full") && kf_meta_uncounted (o))
            return true;
    return false;
}

//  TEXT in a code block of LANGUAGE ("" for none), at most
//  KF_META_SOURCE_MAX bytes, cut at a whole line with "(N more lines)"
//  after it (round 4: the worst kernel ended mid-expression,
//  "xr[r * K + ", read as broken).
static void
s_block (FILE *f, const char *language, const char *text)
{
    char *head = kf_text_head (text, KF_META_SOURCE_MAX);
    fprintf (f, "```%s\n%s\n```\n", language, head ? head : "");
    free (head);
}

void
kf_meta_source (FILE *f, const char *source)
{
    s_block (f, "", source);
}

//  SOURCE whole, or as its diff against one of the N kernels SHOWN above
//  where that is shorter (round 21), WHO starting the sentence that says
//  so.
static void
s_code (FILE *f, const char *source, const kf_prompt_shown_t *shown, int n, const char *who)
{
    int which, common, lines;
    char *diff = kf_prompt_diff_shortest (source, shown, n, who, &which, &common, &lines);
    if (diff)
        kf_prompt_diff_intro (f, who, &shown[which], common, lines);
    s_block (f, diff ? "diff" : "", diff ? diff : source);
    free (diff);
}

//  Which rule makes the best kernel the one that counts, with the
//  OUTCOMES above COUNTED that do not count yet (round 15: "The best
//  kernel so far (candidate 5, 25.574x ...)" beside candidate 6 at 41.078x
//  full-protocol, waiting for its second timing, and nothing said why).
static void
s_counts_rule (FILE *f, json_t *outcomes, double counted)
{
    fputs ("A figure counts once the full protocol has timed it and, where the run times it a "
           "second time (a would-be new best, or a figure too good to believe), once that "
           "timing has confirmed it; a screen figure never counts.", f);
    int n = 0;
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        if (kf_meta_uncounted (o) && kf_jnum (o, "speedup", 0) > counted)
            fprintf (f, "%s candidate %lld (%.3fx, %s)", n++ ? ";" : " Faster, not counted yet:",
                     (long long) kf_jint (o, "candidate_id"), kf_jnum (o, "speedup", 0),
                     kf_jstr (o, "standing"));
    fputs (n ? ".\n" : "\n", f);
}

//  Round 21: "The best of these outcomes (candidate 6: correct, 38.491x
//  ...)" and then "The best kernel so far (candidate 5, 29.660x: the
//  run's best figure that counts)": which of the two counts was said
//  only under the second. A full-protocol outcome K above the run's best
//  that counts (BEST, its speedup COUNTED) that is not that kernel says
//  so where it is introduced, with its standing's reason where OUTCOMES
//  give one.
static void
s_awaits (FILE *f, json_t *k, json_t *outcomes, json_t *best, double counted)
{
    bool faster = kf_jnum (k, "speedup", 0) > counted;
    const char *why = NULL, *standing = "";
    size_t i;
    json_t *o;
    json_array_foreach (outcomes, i, o)
        if (kf_jint (o, "candidate_id") == kf_jint (k, "id")) {
            why = kf_meta_uncounted (o);
            standing = kf_jstr (o, "standing");
        }
    bool other = best && kf_jint (k, "id") != kf_jint (best, "id") && faster;
    if (!(why && faster) && !other)
        return;
    //  Round 22: a full-protocol figure reads "counted" until its second
    //  timing is queued, and candidate 6 at 18.185x stood beside "the
    //  run's best figure that counts is candidate 5's, 12.891x" with no
    //  reason: a would-be new best awaits that timing whatever it reads.
    if (strcmp (standing, "counted") || other)
        fprintf (f, "; it awaits confirmation: its figure does not count yet, %s",
                 why ? why
                     : "as a would-be new best is timed a second time, on fresh inputs, before "
                       "it counts");
    if (other)
        fprintf (f, "; the run's best figure that counts is candidate %lld's, %.3fx%s",
                 (long long) kf_jint (best, "id"), counted,
                 *kf_jstr (best, "source") ? " (its code below)" : "");
}

//  The code behind one of the outcomes shown, under TITLE: what the
//  evaluation said of it, and its source, as a diff where that is
//  shorter (the N kernels SHOWN before it; WHO starts the sentence).
static void
s_outcome_kernel (FILE *f, const char *title, json_t *k, json_t *outcomes, json_t *best,
                  double counted, const kf_prompt_shown_t *shown, int n, const char *who)
{
    fprintf (f, "\n## %s (candidate %lld: %s", title, (long long) kf_jint (k, "id"),
             kf_jstr (k, "status"));
    if (json_is_number (json_object_get (k, "speedup")))
        fprintf (f, ", %.3fx the reference", json_number_value (json_object_get (k, "speedup")));
    //  A screen figure is short and noisy and never the run's best: said,
    //  so it is not read against the best kernel's full-protocol figure
    //  (the round-3 model saw two "bests" in one prompt).
    const char *fid = kf_jstr (k, "fidelity");
    if (!strcmp (fid, "screen") || !strcmp (fid, "pending"))
        fputs (", on the short screen timing only: not comparable with a full-protocol "
               "figure, and never counted as the run's best", f);
    else {
        if (!strcmp (fid, "full"))
            fputs (", full protocol", f);
        s_awaits (f, k, outcomes, best, counted);
    }
    fputs (")\n", f);
    if (*kf_jstr (k, "detail"))
        fprintf (f, "verdict: %.600s\n", kf_jstr (k, "detail"));
    if (!strcmp (kf_jstr (k, "status"), "compile_failed") && *kf_jstr (k, "log"))
        fprintf (f, "compiler:\n```\n%.1500s\n```\n", kf_jstr (k, "log"));
    s_code (f, kf_jstr (k, "source"), shown, n, who);
}

void
kf_meta_code (FILE *f, json_t *outcomes, json_t *best_kernel, json_t *best_outcome,
              json_t *worst_outcome, double counted)
{
    kf_prompt_shown_t shown[2] = { { NULL, 0, NULL }, { NULL, 0, NULL } };
    int n = 0;
    if (best_outcome) {
        s_outcome_kernel (f, worst_outcome ? "The best of these outcomes"
                                           : "The code behind these outcomes",
                          best_outcome, outcomes, best_kernel, counted, shown, 0, "");
        shown[n++] = (kf_prompt_shown_t) { kf_jstr (best_outcome, "source"),
                                           (long long) kf_jint (best_outcome, "id"),
                                           worst_outcome ? "the best outcome's kernel"
                                                         : "the outcomes' kernel" };
    }
    if (worst_outcome) {
        s_outcome_kernel (f, "The worst of these outcomes", worst_outcome, outcomes, best_kernel,
                          counted, shown, n, "The worst outcome's kernel");
        shown[n++] = (kf_prompt_shown_t) { kf_jstr (worst_outcome, "source"),
                                           (long long) kf_jint (worst_outcome, "id"),
                                           "the worst outcome's kernel" };
    }
    //  Round 33: the best kernel was shown again, as a diff, after its
    //  code had been shown in full as the worst outcome's.
    if (best_kernel && worst_outcome && kf_jint (best_kernel, "id") == kf_jint (worst_outcome, "id")
        && kf_jint (best_kernel, "id") != kf_jint (best_outcome, "id"))
        fprintf (f, "\nThe best kernel so far (candidate %lld, %.3fx: the run's best figure that "
                 "counts) is the worst outcome's kernel above.\n",
                 (long long) kf_jint (best_kernel, "id"),
                 json_number_value (json_object_get (best_kernel, "speedup")));
    else if (best_kernel && *kf_jstr (best_kernel, "source")
             && kf_jint (best_kernel, "id") != kf_jint (best_outcome, "id")) {
        fprintf (f, "\n## The best kernel so far (candidate %lld, %.3fx: the run's best figure "
                    "that counts)\n",
                 (long long) kf_jint (best_kernel, "id"),
                 json_number_value (json_object_get (best_kernel, "speedup")));
        s_counts_rule (f, outcomes, counted);
        s_code (f, kf_jstr (best_kernel, "source"), shown, n, "The best kernel so far");
    }
}
