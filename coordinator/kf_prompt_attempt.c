/*  kf_prompt_attempt.c - the section "This attempt": this attempt's idea,
 *  how the run's earlier tries of it went, the siblings' ideas and where
 *  they start (kf_prompt_direction, kf_prompt_history.h). The run's
 *  candidates are put in words by kf_prompt_history.c.
 */
#include "kf_prompt_arith.h"
#include "kf_prompt_history.h"
#include "kf_prompt_credit.h"
#include "kf_prompt_layout.h"
#include "kf_prompt_slim.h"
#include "kf_meta_ideas.h"
#include "kf_prompt_threads.h"
#include "kf_json.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

//  How the prompt shows candidate C above with its figures and code, as
//  a kernel other than the kernel to improve or the best (whose lines
//  here say what the try was to them, round 4), or NULL
//  (kf_prompt_standing).
static const char *
s_shown_as (const kf_prompt_in_t *in, json_t *c)
{
    if (in->templated || kf_prompt_same_candidate (in->base, c) || kf_prompt_same_candidate (in->best, c))
        return NULL;
    return kf_prompt_same_candidate (in->last, c) ? "the last kernel tried"
           : kf_prompt_inspiration_whole (in, c) ? "an inspiration" : NULL;
}

//  Where candidate C starts, for a try or sibling whose code is not
//  shown: ", from candidate 6", ", from this same kernel (candidate 6)"
//  or ", written from scratch".
static void
s_from (const kf_prompt_in_t *in, json_t *c, char *buf, size_t size)
{
    int64_t p = kf_jint (c, "parent_id");
    if (!p)
        snprintf (buf, size, ", written from scratch");
    else if (p == kf_jint (in->base, "id"))
        snprintf (buf, size, ", from this same kernel (candidate %lld)", (long long) p);
    else
        snprintf (buf, size, ", from candidate %lld", (long long) p);
}

//  What the try of this idea that is the run's best, candidate BEST,
//  showed against its parent, by the verdict the planner gave it
//  (kf_search_idea_choose's "verdicts"; round 19: "this idea won there"
//  of a try the same prompt called within noise of its parent).
static const char *
s_best_words (const kf_prompt_in_t *in, int64_t best, bool *won)
{
    char key[24];
    snprintf (key, sizeof key, "%lld", (long long) best);
    json_t *v = json_object_get (json_object_get (in->ideas, "verdicts"), key);
    *won = !json_is_integer (v) || json_integer_value (v) == 1;
    if (!json_is_integer (v))
        return ": this idea won there";
    switch (json_integer_value (v)) {
    case 1: return ": this idea won there against its parent";
    case 0: return ", but that try came out within noise of its parent";
    case 2: return ", but that try's timings were too spread to tell it from its parent";
    case 3: return ", but that try or its parent was timed beside other work";
    case 4: return ", but the threads of that try or of its parent hardly ran side by side";
    default: return ", though that try came out below its parent";
    }
}

//  Round 24: the run's candidates handed IDEA whose code did not do it
//  (kf_prompt_credit.h), newest first, KF_PROMPT_IDEA_TRIES at most:
//  no tries of it, each with what its code did instead.
static void
s_not_done (FILE *f, const kf_prompt_in_t *in, const char *idea, bool by_change)
{
    int said = 0;
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c) {
        if (said >= KF_PROMPT_IDEA_TRIES)
            break;
        if (strcmp (kf_jstr (c, "phase"), "search") || kf_prompt_pending_here (in, c)
            || kf_prompt_try_credit (c, kf_prompt_idea_of (in, c), idea, by_change)
                   != KF_CREDIT_NOT_DONE)
            continue;
        char added[KF_PROMPT_ADDED_MAX];
        kf_prompt_added_text (c, added, sizeof added);
        fprintf (f, "%s candidate %lld (generation %lld%s)", said++ ? ";" : " Handed this idea, "
                 "not seen done (the reading of its code, which knows each feature's usual forms but "
                 "not every way to write them, sees no change of it, so it is not counted as a "
                 "try of it):",
                 (long long) kf_jint (c, "id"), (long long) kf_jint (c, "generation"), added);
    }
    if (said)
        fputs (".", f);
}

//  Where the run tried this attempt's idea before, and how it went.
//  Round 41: "spend fewer instructions" went to the child of a kernel
//  written for the approximation idea, which since round 39 asks for the
//  cheapest form, as untried: the helper read it as that idea again. Said
//  where the kernel to improve was handed the approximation idea.
static void
s_after_approx (FILE *f, const kf_prompt_in_t *in, const char *mine)
{
    if (!kf_prompt_idea_cuts_code (mine) || !in->base)
        return;
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c)
        if (kf_prompt_same_candidate (in->base, c)) {
            const char *its = kf_prompt_idea_of (in, c);
            if (its && kf_prompt_idea_feature (its) == KF_IDEA_APPROX)
                fprintf (f, " The kernel to improve (candidate %lld) was written for the "
                         "approximation idea, the cheapest form the tolerance allows: this "
                         "attempt counts what an element still costs in its code and cuts "
                         "that, not the same approximation again.",
                         (long long) kf_jint (c, "id"));
            return;
        }
}

static void
s_idea_tries (FILE *f, const kf_prompt_in_t *in, const char *mine)
{
    if (!in->history)
        return;
    int listed = 0, judged = 0;
    bool know_code = false;
    bool by_change = !json_is_false (json_object_get (in->ideas, "by_change"));
    int64_t best = -1;
    //  Round 15: "this idea won there" of a best kernel handed threads,
    //  whose code written from scratch unrolled too. The win is this
    //  idea's when the best was handed it or its code added it to its own
    //  parent's; else the best does it too, and CREDIT is false.
    bool credit = true;
    int best_judged = 0;
    int64_t best_parent = 0;
    char best_other[200] = "";
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c) {
        if (listed >= KF_PROMPT_IDEA_TRIES)
            break;
        if (strcmp (kf_jstr (c, "phase"), "search") || kf_prompt_pending_here (in, c))
            continue;
        const char *idea = kf_prompt_idea_of (in, c);
        //  Round 14: a try of another idea whose code did this one too
        //  (candidate 3's streaming stores under the intrinsics idea).
        //  Round 24: one handed this idea whose code did not do it is no
        //  try of it (kf_prompt_credit.h), said apart below.
        kf_credit_t cr = kf_prompt_try_credit (c, idea, mine, by_change);
        if (!kf_prompt_credit_counts (cr))
            continue;
        bool by_code = cr == KF_CREDIT_CODE;
        judged += !json_is_false (json_object_get (c, "finished"));
        if (in->best && kf_prompt_same_candidate (in->best, c)) {
            best = kf_jint (c, "id");
            best_parent = kf_jint (c, "parent_id");
            credit = !by_code || best_parent;
            best_judged = !json_is_false (json_object_get (c, "finished"));
        }
        char outcome[KF_PROMPT_OUTCOME_MAX], from[80] = "", added[KF_PROMPT_ADDED_MAX],
            handed[300] = "";
        //  Round 21: a try this prompt shows above with its figures and
        //  code (an inspiration, most often) came twice, its figures here
        //  again: named here, shown there once.
        const char *where = s_shown_as (in, c);
        if (where)
            snprintf (outcome, sizeof outcome, "its figures and code are shown above, as %s",
                      where);
        else
            kf_prompt_outcome (c, kf_prompt_conditions_differ (in->history), outcome, sizeof outcome);
        //  Round 11: "another way than that try" of a try whose code no
        //  prompt shows; what the coordinator knows of it is where it
        //  starts.
        if (json_is_false (json_object_get (c, "finished")))
            s_from (in, c, from, sizeof from);
        kf_prompt_added_text (c, added, sizeof added);
        if (by_code) {
            //  The other idea by what it is about, not its whole text.
            char other[200];
            kf_idea_feature_t of = kf_prompt_idea_feature (idea);
            kf_prompt_feature_words (of == KF_IDEA_OTHER ? 0 : 1u << of, other, sizeof other);
            //  Round 44: an idea of no feature in full was cut mid-clause
            //  ("a reciprocal or reciprocal ): not judged yet"): its head.
            char head[KF_PROMPT_IDEA_HEAD_MAX + 8];
            const char *name = *other ? other
                               : idea ? kf_prompt_idea_head (idea, head, sizeof head)
                                      : "unknown";
            snprintf (handed, sizeof handed, ", handed another idea (%s), though its code "
                      "does this one too", name);
            if (in->best && kf_prompt_same_candidate (in->best, c))
                snprintf (best_other, sizeof best_other, "%s", name);
        }
        fprintf (f, "%s candidate %lld (generation %lld%s%s): %s%s", listed++ ? ";"
                 : " Tried before in this run (newest first):", (long long) kf_jint (c, "id"),
                 (long long) kf_jint (c, "generation"), from, handed, outcome, added);
        know_code |= *added != '\0';
    }
    //  Round 10: "learn from how that went" after a try not judged yet;
    //  and "if it failed or lost" when that try is the run's best.
    bool won = true;
    //  Round 49: "this idea won there" of a best of generation 0, which
    //  had no parent to win against.
    const char *how = best < 0 ? ""
                      : best_parent ? s_best_words (in, best, &won)
                                    : ": it was written for this idea with no kernel before it, "
                                      "so it leads by rank, not by a gain this idea was measured "
                                      "to make";
    if (best >= 0 && credit)
        fprintf (f, ". Candidate %lld is the run's best kernel so far%s%s take it further than "
                 "that try did (another width, depth or split)%s, or combine it with what the "
                 "best does not do yet.", (long long) best, how,
                 won ? ", so" : ": this idea has not shown a gain of its own yet, so",
                 won ? "" : " only with a reason it should pay now");
    else if (best >= 0)
        fprintf (f, ". Candidate %lld is the run's best kernel so far and does this too, but "
                 "it was handed another idea (%s) and wrote this one with the rest from "
                 "scratch, so its win does not say what this idea is worth here%s",
                 (long long) best, best_other,
                 judged > best_judged ? ". Learn from how the other tries went: if one failed "
                                        "or lost, do it differently or say why it should pay "
                                        "now; if one won, take it further than it did."
                                      : ": make this idea this attempt's main change, "
                                        "in the kernel to improve.");
    else if (judged)
        fputs (". Learn from how that went: if it failed or lost, do it differently or say "
               "why it should pay now; if it won, take it further than that try did.", f);
    else if (listed)
        fprintf (f, ". How that went is not known yet, and its code is not shown: nothing here "
                 "says how it was built beyond %s, so build yours as this "
                 "attempt's idea reads for the kernel to improve; a later attempt will read how "
                 "both went.", know_code ? "the kernel it starts from and what its code added"
                                         : "the kernel it starts from");
    else {
        fputs (" No earlier candidate of this run has tried it yet.", f);
        s_after_approx (f, in, mine);
    }
    s_not_done (f, in, mine, by_change);
}

//  Which kernel each sibling starts from, as far as the plan knows: the
//  siblings planned before this attempt have their parents; the later
//  ones draw theirs when they are planned.
static void
s_sibling_parents (FILE *f, const kf_prompt_in_t *in)
{
    if (!in->siblings) {
        fputs (" Each attempt of this generation draws its own kernel to improve from the "
               "archive's cells, so a sibling may start from this same kernel or from "
               "another.", f);
        return;
    }
    int64_t mine = kf_jint (in->base, "id");
    int later = 0, told = 0;
    for (int k = 0; k < in->population; k++) {
        if (k == in->slot)
            continue;
        json_t *row = NULL, *r;
        size_t i;
        json_array_foreach (in->siblings, i, r)
            if (kf_jint (r, "slot") == k)
                row = r;
        if (!row) {
            later++;
            continue;
        }
        int64_t p = kf_jint (row, "parent_id");
        fprintf (f, "%s attempt %d ", told++ ? ";" : " Where the siblings start:", k + 1);
        if (!p)
            fputs ("writes its kernel from scratch", f);
        else if (p == mine)
            fprintf (f, "starts from candidate %lld, the same kernel as this attempt",
                     (long long) p);
        else
            fprintf (f, "starts from candidate %lld", (long long) p);
    }
    if (told)
        fputs (".", f);
    if (later)
        fprintf (f, " %s planned after this one and draw%s %s kernel to improve from the "
                 "archive's cells when %s, possibly this same kernel.",
                 later == 1 ? "One sibling is" : "The other siblings are",
                 later == 1 ? "s" : "", later == 1 ? "its" : "their",
                 later == 1 ? "it is" : "they are");
    if (told || later)
        fputs (" Siblings that share a kernel to improve still follow different ideas.", f);
}

//  Sibling slot K's row among the candidates planned so far; NULL when
//  K is planned later.
static json_t *
s_sibling_planned (const kf_prompt_in_t *in, int k)
{
    size_t i;
    json_t *r;
    json_array_foreach (in->siblings, i, r)
        if (kf_jint (r, "slot") == k)
            return r;
    return NULL;
}

//  Round 17: the plan's prediction for later sibling slot K
//  (kf_search_idea_later), or NULL.
static json_t *
s_sibling_later (const kf_prompt_in_t *in, int k)
{
    size_t i;
    json_t *r;
    json_array_foreach (json_object_get (in->ideas, "later"), i, r)
        if (kf_jint (r, "slot") == k && json_is_string (json_object_get (r, "idea")))
            return r;
    return NULL;
}

//  The idea sibling slot K leans towards: as planned (stored with it),
//  else as the plan predicts it (round 17: by the slot's place in the
//  order, three prompts of one generation named three sets of
//  siblings), else its place in the run's order of ideas (IN->ideas),
//  else its slot's place.
static const char *
s_sibling_idea (const kf_prompt_in_t *in, const char *const *ideas, size_t n, int k)
{
    json_t *r = s_sibling_planned (in, k);
    if (json_is_string (json_object_get (r, "idea")))
        return json_string_value (json_object_get (r, "idea"));
    if ((r = s_sibling_later (in, k)))
        return kf_jstr (r, "idea");
    json_t *order = json_object_get (in->ideas, "order");
    if (json_array_size (order))
        return json_string_value (json_array_get (order, (size_t) k % json_array_size (order)));
    return ideas[((size_t) in->generation * (size_t) in->population + (size_t) k) % n];
}

//  How the run's counted tries of IDEA went, in brackets: " (tried: lost
//  (20.10x vs parent 36.20x))" (kf_search_idea_record), or nothing.
static void
s_note (FILE *f, const kf_prompt_in_t *in, const char *idea)
{
    const char *note = json_string_value (json_object_get (json_object_get (in->ideas, "notes"),
                                                           idea));
    if (note)
        fprintf (f, " (%s)", note);
}

//  Round 19: "do it another way than the try in flight" did not say
//  what that try did. The run's candidates handed IDEA and not judged
//  yet, this attempt aside: where each starts and what its code added,
//  when it is written.
static void
s_own_in_flight (FILE *f, const kf_prompt_in_t *in, const char *idea)
{
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c) {
        if (!json_is_false (json_object_get (c, "finished"))
            || strcmp (kf_jstr (c, "phase"), "search")
            || (kf_jint (c, "generation") == in->generation && kf_jint (c, "slot") == in->slot))
            continue;
        const char *its = kf_prompt_idea_of (in, c);
        if (!its || !kf_prompt_try_counts (its, 0, idea, NULL))
            continue;
        char from[80] = "", added[KF_PROMPT_ADDED_MAX] = "";
        s_from (in, c, from, sizeof from);
        //  With its author's words for it where written (round 32: "do it
        //  another way (another tile shape ...)" beside no word of the
        //  shape the try in flight took).
        kf_prompt_added_text (c, added, sizeof added);
        fprintf (f, " Candidate %lld (generation %lld%s) has it in flight%s.",
                 (long long) kf_jint (c, "id"), (long long) kf_jint (c, "generation"), from,
                 *added ? added : json_is_integer (json_object_get (c, "features"))
                                  ? "; its code adds no feature this reading knows"
                                  : "; its code was not written when this prompt was "
                                    "made");
    }
}

void
kf_prompt_direction (FILE *f, const kf_prompt_in_t *in)
{
    if (in->population <= 0 || in->templated)
        return;
    size_t n;
    //  The ideas of the sections' version, as the planner had them
    //  (kf_meta_ideas.h).
    const char **ideas = kf_meta_ideas (in->sections, in->spec,
                                        kf_prompt_target_kind (in->target, in->language), &n);
    if (!n)
        return;
    size_t start = (size_t) in->generation * (size_t) in->population;
    const char *mine = json_string_value (json_object_get (in->ideas, "mine"));
    if (!mine)
        mine = ideas[(start + (size_t) in->slot) % n];
    //  Round 3: "lean towards X ... explore a different idea from those"
    //  read as excluding X itself. X is this attempt's main idea; the
    //  siblings' ideas are theirs, usable here only as a means to X.
    //  Round 23: with this host's measured data TLB (kf_prompt_idea_on_host).
    json_t *device = json_array_get (json_object_get (in->hardware, "devices"), 0);
    char *shown = kf_prompt_idea_on_host (mine, in->spec, device);
    //  Round 25's notes: without a clause that holds only where the kernel
    //  to improve has a feature it lacks ("at the last k chunk's store"
    //  for a kernel that blocks nothing; kf_prompt_idea_for_parent). A
    //  kernel written from scratch may have it: the clause stays.
    const char *base = kf_jstr (in->base, "source");
    unsigned has = *base ? kf_prompt_source_features (base, in->language) : ~0u;
    char *worded = kf_prompt_idea_for_parent (shown ? shown : mine, has);
    fprintf (f, "\n## This attempt\nAttempt %d of %d in generation %d. This attempt's idea: "
             "%s", in->slot + 1, in->population, in->generation,
             worded ? worded : shown ? shown : mine);
    free (worded);
    free (shown);
    s_note (f, in, mine);
    fputs (".", f);
    //  Round 16: SIMD and streaming stores went to two attempts from a
    //  kernel at the copy bandwidth; the planner pairs them
    //  (kf_search_idea_pair). Round 17: the figure names its traffic
    //  and the rate it is set against (kf_search_idea_memory_share); a
    //  plan made before counted N + 2M against the copy figure.
    json_t *with = json_object_get (in->ideas, "with");
    if (json_is_string (json_object_get (with, "idea"))) {
        worded = kf_prompt_idea_for_parent (kf_jstr (with, "idea"), has);
        fprintf (f, " Together with it, in the same kernel: %s. The kernel to improve ",
                 worded ? worded : kf_jstr (with, "idea"));
        free (worded);
        //  Round 22: by its cycles a vector against the budget for the
        //  cores it runs on (kf_search_idea.c).
        //  Round 37: "23 cycles a vector against a memory budget of 27
        //  ... so its bytes take 100% of its time" read as an arithmetic
        //  slip: under the budget, the bytes take all of its time by it.
        double cycles = kf_jnum (with, "cycles", 0), budget = kf_jnum (with, "budget", 0);
        if (cycles > 0 && budget >= cycles)
            fprintf (f, "takes about %.0f cycles a vector, within the memory budget of about "
                     "%.0f for the cores it runs on (its position line): by that budget its "
                     "bytes take all of its time (it moves them a little faster than the "
                     "budget reckons)", cycles, budget);
        else if (cycles > 0)
            fprintf (f, "takes about %.0f cycles a vector against a memory budget of about %.0f "
                     "for the cores it runs on (its position line), so its bytes take %.0f%% "
                     "of its time", cycles, budget, 100 * kf_jnum (with, "share", 0));
        else if (*kf_jstr (with, "traffic") && kf_jnum (with, "rate_gbs", 0) > 0)
            fprintf (f, "moves %s at %.0f%% of the %.1f GB/s of %s", kf_jstr (with, "traffic"),
                     100 * kf_jnum (with, "share", 0), kf_jnum (with, "rate_gbs", 0),
                     kf_jstr (with, "against"));
        else
            fprintf (f, "moves its bytes (N + 2M where its stores are ordinary) at %.0f%% of the "
                     "measured copy bandwidth", 100 * kf_jnum (with, "share", 0));
        //  Round 51: why the pair (read as undercutting a prefetch);
        //  round 52: and not against threads, which raise the rate.
        fprintf (f, ", at or above the %.0f%% at which the planner takes a kernel to be bound "
                 "by memory: ", 100 * kf_jnum (with, "bound", 0));
        if (kf_prompt_idea_feature (mine) == KF_IDEA_THREADS)
            fputs ("threads raise the rate the bytes move at (every core's share of the "
                   "memory, not one core's), and the one above cuts the bytes moved too.", f);
        else
            fprintf (f, "there an idea that does not cut the bytes moved can change nothing "
                     "measurable alone, so it comes with the one above, which %s.",
                     kf_prompt_idea_feature (kf_jstr (with, "idea")) == KF_IDEA_THREADS
                         ? "raises the rate the bytes move at (every core's share of the "
                           "memory, not one core's)"
                         : "cuts the bytes moved");
    }
    //  Round 40: at the bound with no idea that cuts bytes free to pair.
    //  Round 41: "none is free ... so cut bytes as well" read as a
    //  contradiction: whether the held ones may be added is said.
    json_t *alone = json_object_get (in->ideas, "alone");
    if (json_is_object (alone) && !json_is_string (json_object_get (with, "idea")))
        fprintf (f, " The kernel to improve moves %s at %.0f%% of the %.1f GB/s of %s (its "
                 "position line), at or above the %.0f%% at which the planner takes a kernel "
                 "to be bound by memory, and no idea that cuts the bytes moved is free to go "
                 "with this one (each is done by this kernel already, set aside, or another "
                 "attempt's or a try in flight's): alone this idea may change little "
                 "measurable. Leave those ideas to their attempts; where this idea's own change "
                 "also moves fewer bytes, take that.", kf_jstr (alone, "traffic"),
                 100 * kf_jnum (alone, "share", 0), kf_jnum (alone, "rate_gbs", 0),
                 kf_jstr (alone, "against"), 100 * kf_jnum (alone, "bound", 0));
    //  Round 17: threads "once each element's math is vectorised" and
    //  streaming stores went to generation 0, where no kernel is
    //  vectorised yet: the attempt is to write that base as well.
    kf_idea_feature_t feat = kf_prompt_idea_feature (mine);
    //  Round 18: a product's simplest vectorised form, with no register
    //  tile, re-reads the second operand from L2 for every row (about 9
    //  ms against a 3.53 ms FMA floor), so its threads were timed on a
    //  base 2-3 times too slow to judge them by.
    if ((feat == KF_IDEA_THREADS || feat == KF_IDEA_STREAM)
        && !(in->base && *kf_jstr (in->base, "source"))) {
        if (kf_prompt_task_class (in->spec) == KF_CLASS_MATMUL)
            fputs (" No kernel exists yet for this idea to build on: first write a sound "
                   "vectorised product (a small register tile of outputs held in vector "
                   "registers over k, as the strategies describe; without one every row "
                   "reads the second operand again from L2, far below the FMA floor), then add "
                   "this idea to it. That base is part of this attempt, not a sibling's idea "
                   "taken.", f);
        else
            //  Round 22: "with no other idea's tricks" for a tanh, which has
            //  no vector form without an approximation (a sibling's idea).
            //  Round 38's notes: and that approximation read as the
            //  approximation idea itself, so all three kernels of
            //  generation 0 had one math: the base's is near f32
            //  precision, the idea's the cheapest the tolerance allows.
            //  Round 51: no function clause where the task calls none.
            fprintf (f, " No kernel exists yet for this idea to build on: first write the "
                     "simplest correct vectorised form of the whole computation (each "
                     "element's math in vector registers, by the compiler or by intrinsics, "
                     "with no other idea's tricks%s), then add this idea to it. That base is "
                     "part of this attempt, not a sibling's idea taken.",
                     kf_prompt_costly_math (in->spec)
                         ? "; where a function has no vector form, an approximation near f32 "
                           "precision that gives it one is part of this base, while one cheaper "
                           "than that, within the tolerance, is the approximation idea's" : "");
    }
    else if (feat == KF_IDEA_APPROX && !(in->base && *kf_jstr (in->base, "source"))
             && kf_prompt_task_class (in->spec) == KF_CLASS_ELEMENTWISE) {
        fputs (" Siblings that start from scratch compute these functions in vector registers "
               "too, by an approximation near f32 precision (the base each needs); this "
               "attempt's idea is what goes beyond that: the cheapest approximation the "
               "tolerance leaves room for (fewer polynomial terms, a coarser reduction, a "
               "reciprocal estimate in place of a division), set against the limits in What "
               "counts as correct.", f);
        //  Round 48: handed beside estimates that put near-f32 math below
        //  the memory's budget, which the prompt left unsaid.
        kf_arith_t a;
        double budget = kf_prompt_arith_under_memory (in->spec, device, &a);
        if (budget > 0)
            fprintf (f, " By the Target section's estimates the math near f32 precision takes "
                     "about %.0f cycles a vector of one core, under the %.0f its bytes take "
                     "there (the Arithmetic budget line): if both hold, one core is bound by "
                     "memory already and cheaper math saves little. Both are estimates, and a "
                     "core's loads and arithmetic need not overlap fully, so this attempt is "
                     "the test: its timing against the siblings' near-f32 kernels says "
                     "whether cheaper math pays on this host.", a.cycles, budget);
    }
    //  What threads cost here (kf_prompt_threads.h).
    kf_prompt_thread_cost (f, in, mine);
    //  Round 4: the run tried this idea before and the prompt said
    //  nothing of how it went.
    s_idea_tries (f, in, mine);
    //  Round 11: a sibling that took this very idea was left out of the
    //  list (req ...29403); it is listed as what it is, with where it
    //  starts, and no demand to differ from code no prompt shows.
    const char *told[64];
    int listed = 0, others = 0, twin = -1, predicted = 0, meant = 0;
    for (int k = 0; k < in->population && listed < 64; k++) {
        const char *other = k == in->slot ? NULL : s_sibling_idea (in, ideas, n, k);
        json_t *planned = s_sibling_planned (in, k);
        bool same = other && !strcmp (other, mine);
        bool again = !other || (same && !planned);
        for (int j = 0; !again && !same && j < listed; j++)
            again = !strcmp (told[j], other);
        if (again)
            continue;
        //  Round 34: a sibling's idea read "64 entries a first-level data
        //  TLB commonly holds" beside this attempt's "the 72 entries this
        //  host's ... holds, measured": each as on this host.
        //  Round 34's notes: each sibling's idea in full, about 1.5 KB of
        //  every "This attempt": its head says which it is.
        char *on_host = kf_prompt_idea_on_host (other, in->spec, device);
        char head[KF_PROMPT_IDEA_HEAD_MAX + 8];
        fprintf (f, "%s%s", listed ? "; " : " The sibling attempts of this generation take: ",
                 kf_prompt_idea_head (on_host ? on_host : other, head, sizeof head));
        free (on_host);
        if (same) {
            char from[80];
            twin = k;
            s_from (in, planned, from, sizeof from);
            fprintf (f, " (this attempt's idea too: attempt %d takes it%s; it is in flight, "
                     "not judged yet, and its code is not shown)", k + 1, from);
            told[listed++] = "";
            continue;
        }
        s_note (f, in, other);
        //  Round 10: a sibling planned later was said to "take" the idea
        //  its slot leans towards, and the planner may pass it over.
        //  Round 17: a prediction says what the plan hands that slot from
        //  this attempt's kernel (or from scratch).
        //  Round 19: what "planned after this one" means is said once,
        //  after the list (it was said for every such sibling, part of
        //  over 2,000 characters of planner bookkeeping).
        if (!planned) {
            fputs (" (planned after this one)", f);
            predicted += s_sibling_later (in, k) != NULL;
            meant += s_sibling_later (in, k) == NULL;
        }
        told[listed++] = other;
        others++;
    }
    //  Round 14: "leave that idea to the sibling" beside a sibling that
    //  takes this attempt's own idea read as "leave your own idea".
    if (others && twin >= 0)
        fprintf (f, ". Build this kernel around this attempt's idea (done another way than "
                 "the sibling that takes it too) and leave %s to the %s: use %s only where "
                 "your idea needs it, not as the main idea.",
                 others > 1 ? "the other ideas listed" : "the other idea listed",
                 others > 1 ? "siblings that take them" : "sibling that takes it",
                 others > 1 ? "one of them" : "it");
    else if (others)
        fputs (others > 1 ? ". Build this kernel around this attempt's idea and leave those "
                            "ideas to the siblings: use one of them only where your idea needs "
                            "it, not as the main idea."
                          : ". Build this kernel around this attempt's idea and leave that idea "
                            "to the sibling: use it only where your idea needs it, not as the "
                            "main idea.", f);
    else if (listed)
        fputs (".", f);
    //  Round 14: "leans towards it ... if its kernel" read as unclear
    //  about whose kernel.
    if (predicted)
        fprintf (f, " A sibling planned after this one is handed the idea listed for it if it "
                 "%s, and may be handed another if it draws a kernel that does that idea "
                 "already.", in->base && *kf_jstr (in->base, "source")
                             ? "starts from the same kernel as this attempt"
                             : "is written from scratch too");
    else if (meant)
        fputs (" A sibling planned after this one is meant for the idea listed for it, but "
               "takes another if the kernel it starts from does that idea already.", f);
    json_t *aside = json_object_get (in->ideas, "aside");
    size_t i;
    json_t *a;
    int set = 0;
    //  Round 35: the epilogue's fusion read "Held back before any try"
    //  and "Set aside in this run" in one prompt: held back, it is said
    //  once, below.
    const char *small_idea = kf_jstr (json_object_get (in->ideas, "small"), "idea");
    json_array_foreach (aside, i, a) {
        if (*small_idea && !strcmp (json_string_value (a), small_idea))
            continue;
        //  Round 14: an idea both handed to this attempt and listed as set
        //  aside read as a contradiction; the planner hands one out only
        //  when it has none other left for the slot (kf_search_idea_fit).
        if (!strcmp (json_string_value (a), mine)) {
            fputs (" This attempt's idea was set aside in this run (no try of it timed in full "
                   "beat its parent beyond the timing noise) and comes back here only because "
                   "the planner had no other idea left for this attempt: the others are taken "
                   "by siblings, held back, set aside too, or done already by the kernels to "
                   "improve. Do it another way than the tries of it above, for a reason it "
                   "should pay now.", f);
            continue;
        }
        fprintf (f, "%s%s", set++ ? "; " : " Set aside in this run, since no try of it timed in "
                 "full beat its parent beyond the timing noise (every try lost, or two or more "
                 "did not win): ", json_string_value (a));
        s_note (f, in, json_string_value (a));
    }
    if (set)
        fputs (". Take such an idea up again only with a reason it should pay now.", f);
    //  Round 17: the epilogue's fusion went to generation 0 beside an
    //  Epilogue line putting the epilogue at 1% of the floor
    //  (kf_search_idea_small).
    json_t *small = json_object_get (in->ideas, "small");
    if (json_is_string (json_object_get (small, "idea"))) {
        //  Round 39's notes: about 110 words, the idea in full, in every
        //  prompt of the run, for a 0.8% effect: its head and one clause.
        char head[KF_PROMPT_IDEA_HEAD_MAX + 8];
        //  Round 47: said beside a kernel to improve whose code fuses its
        //  epilogue already ("tanh+row sum fused in registers").
        kf_idea_feature_t sf = kf_prompt_idea_feature (kf_jstr (small, "idea"));
        bool done = in->base && sf != KF_IDEA_OTHER
                    && kf_prompt_source_does (kf_jstr (in->base, "source"), in->language, sf);
        if (strcmp (kf_jstr (small, "idea"), mine) && !done)
            fprintf (f, " Held back before any try: %s (the Target section's Epilogue line "
                     "estimates that work at about %.1f%% of the one-core floor, below the "
                     "%.0f%% under which the planner hands out its fusion only when no other "
                     "idea is left; fuse it where it costs your kernel nothing else).",
                     kf_prompt_idea_head (kf_jstr (small, "idea"), head, sizeof head),
                     100 * kf_jnum (small, "share", 0), 100 * kf_jnum (small, "bound", 0));
        else if (!strcmp (kf_jstr (small, "idea"), mine))
            fprintf (f, " This attempt's idea comes here only because no other idea is left "
                     "for it: the Epilogue line of the Target section estimates that work at "
                     "about %.1f%% of the one-core floor, so fusing it can save no more than "
                     "that share; make the product itself faster as well.",
                     100 * kf_jnum (small, "share", 0));
    }
    //  Round 11: an idea with tries in flight is held back by the
    //  planner (kf_search_idea_held) until they are judged.
    json_t *held = json_object_get (in->ideas, "held");
    const char *h;
    json_t *in_flight;
    int said = 0;
    long long own_tries = 0;
    json_object_foreach (held, h, in_flight) {
        long long tries = (long long) json_integer_value (in_flight);
        //  Round 16: this attempt's own idea listed as "not given to
        //  another attempt (1 try in flight)" read as a contradiction.
        //  Round 19: said after the list of the others, which it broke
        //  (a missing full stop, then a doubled one).
        if (!strcmp (h, mine)) {
            own_tries = tries;
            continue;
        }
        //  Round 23: the idea handed with this one ("Together with it, in
        //  the same kernel") was listed as held back in the same paragraph.
        if (!strcmp (h, kf_jstr (json_object_get (in->ideas, "with"), "idea")))
            continue;
        //  Round 43: "Held back ...: approximate math (a polynomial or bit
        //  tricks)" beside this attempt's own "a polynomial or rational
        //  form of lower degree" read as a contradiction: cutting an
        //  element's instructions takes cheaper math too.
        if (kf_prompt_idea_cuts_code (mine) && kf_prompt_idea_feature (h) == KF_IDEA_APPROX)
            continue;
        //  Round 18: tries that are all this generation's siblings',
        //  named in their sentence already, made a second list of the
        //  same ideas, read as planner noise.
        //  Round 37: "Held back ... software prefetch" beside a later
        //  sibling named as taking it (the plan runs out of free ideas by
        //  then): not held back from this generation, so not said.
        int mates = 0;
        bool later = false;
        unsigned hb = kf_prompt_idea_bits (h);
        for (int k = 0; k < in->population; k++) {
            const char *other = k == in->slot ? NULL : s_sibling_idea (in, ideas, n, k);
            bool same = other && !strcmp (other, h);
            mates += same && s_sibling_planned (in, k);
            //  Round 38: or an idea of several parts that holds it
            //  ("packed operands" beside a micro-kernel "over panels
            //  packed ...").
            bool part = other && hb && (kf_prompt_idea_bits (other) & hb) == hb;
            later |= (same || part) && k > in->slot && !s_sibling_planned (in, k);
        }
        if (tries <= mates || later)
            continue;
        //  Round 12: "held back" read as a contradiction beside a
        //  sibling of this generation that takes the idea: say where the
        //  tries are.
        //  Round 19: by what each is about, not its whole text again.
        char about[200];
        kf_idea_feature_t hf = kf_prompt_idea_feature (h);
        kf_prompt_feature_words (hf == KF_IDEA_OTHER ? 0 : 1u << hf, about, sizeof about);
        fprintf (f, "%s%s (%lld tr%s in flight)", said++ ? "; " : " Held back while an idea "
                 "without a try in flight is left, its tries (a sibling's of this generation, "
                 "or earlier candidates) not judged yet: ", *about ? about : h, tries,
                 tries == 1 ? "y" : "ies");
    }
    if (said)
        fputs (".", f);
    if (own_tries > 0) {
        fprintf (f, " This attempt's idea has %lld tr%s in flight elsewhere, not judged "
                 "yet, and comes here only because the planner had no idea without a try "
                 "in flight left for this attempt: the others are taken by siblings, set "
                 "aside, or done already by the kernels to improve.", own_tries,
                 own_tries == 1 ? "y" : "ies");
        s_own_in_flight (f, in, mine);
        fprintf (f, " Do it another way than the tr%s in flight (%s).",
                 own_tries == 1 ? "y" : "ies", kf_prompt_feature_other_way (kf_prompt_idea_feature (mine)));
        //  Round 25: all three attempts of a generation were handed one
        //  idea the kernels had done already; the model re-derived it
        //  twice. A try counts for what its code changed
        //  (kf_prompt_credit.h), so another change is no lost slot.
        fputs (" Where the kernel to improve does this idea already and a larger cost is left "
               "elsewhere (its position against the figures above), cut that cost instead and "
               "say which in your analysis: the run counts a try for the ideas its code shows "
               "it changed (threads, SIMD, blocking and the like), not only for the one it was "
               "handed.", f);
    }
    //  Round 3 said siblings "usually" start from other kernels; round 4
    //  found two with the same parent. Say what the plan knows.
    if (listed && in->base && *kf_jstr (in->base, "source"))
        s_sibling_parents (f, in);
    if (in->base && *kf_jstr (in->base, "source"))
        fputs (" If the kernel to improve already does what this attempt's idea says, change "
               "how it does it (another split, order or width) rather than keeping it as it "
               "is.", f);
    fputs ("\n", f);
    free (ideas);
}
