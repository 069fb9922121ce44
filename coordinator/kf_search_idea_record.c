/*  kf_search_idea_record.c - how the run's tries of each idea went, and
 *  which ideas that sets aside (kf_search_idea.h): each try judged as the
 *  children's lines judge it (kf_lineage.h), by its own one-core time
 *  where its threads are the idea, inconclusive where load or threads
 *  that hardly ran side by side make the two timings unlike.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_lineage.h"
#include "kf_prompt_class.h"
#include "kf_prompt_credit.h"
#include "kf_prompt_history.h"
#include <stdio.h>
#include <string.h>

int
kf_search_idea_verdict (double speedup, double parent_speedup, double noise)
{
    //  The children's lines' rule (kf_lineage_verdict), so a try and its
    //  line never disagree (round 16).
    return kf_lineage_verdict (speedup, parent_speedup, kf_lineage_band (noise, 0));
}

//  Round 21: whether try T is judged for IDEA by its own one-core time
//  (s_tries' one_core_gain): a threads idea, and a try timed beside other
//  work whose evaluation timed the same kernel on one CPU as well, under
//  the load its full timing saw ("its threads buy 28%" beside "this idea
//  has not shown a gain of its own yet").
static bool
s_by_one_core (json_t *t, const char *idea)
{
    return json_is_true (json_object_get (t, "loaded"))
           && kf_jnum (t, "one_core_gain", 0) > 0
           && kf_prompt_idea_feature (idea) == KF_IDEA_THREADS;
}

//  A try's verdict for IDEA (kf_search_idea_verdict), or 3 when the
//  child or its parent was timed beside other work (round 13: ideas were
//  set aside as "lost" by children timed with 43-63% of the CPUs taken,
//  against parents timed on a quiet host, and both ideas won later),
//  unless the threads idea's try can be judged by its one-core time, or
//  the gap is past what the load could account for (round 22: a packing
//  try twice as fast under more load than its parent's was called
//  inconclusive; kf_lineage_verdict_loaded).
static int
s_try_verdict_timed (json_t *t, const char *idea)
{
    if (s_by_one_core (t, idea))
        return kf_search_idea_verdict (kf_jnum (t, "one_core_gain", 0), 1.0,
                                       kf_jnum (t, "own_noise", 0));
    return kf_lineage_verdict_loaded (kf_jnum (t, "speedup", 0), kf_jnum (t, "parent_speedup", 0),
                                      kf_lineage_band (kf_jnum (t, "noise", 0), 0),
                                      json_is_true (json_object_get (t, "loaded")),
                                      json_object_get (t, "tl"), json_object_get (t, "pl"));
}

//  The same, or 4 where the loss of a child whose threads hardly ran side by
//  side in its full timing, any try of the threads idea by such a child,
//  or the gain over such a parent is not like for like (the children's
//  lines say so: kf_lineage_reason).
int
kf_search_idea_try_verdict (json_t *t, const char *idea)
{
    int v = s_try_verdict_timed (t, idea);
    bool threads = kf_prompt_idea_feature (idea) == KF_IDEA_THREADS;
    if (json_is_true (json_object_get (t, "apart")) && (v < 0 || threads))
        return 4;
    if (json_is_true (json_object_get (t, "parent_apart")) && v == 1)
        return 4;
    return v;
}

//  Round 39: whether try T, within the noise of its parent, still came
//  out above it by more than the run's median repeat gap (T's "lean",
//  kf_search_idea_tries): more likely a gain than not.
static bool
s_leans_up (json_t *t)
{
    double lean = kf_jnum (t, "lean", 0), parent = kf_jnum (t, "parent_speedup", 0);
    return lean > 0 && parent > 0 && kf_jnum (t, "speedup", 0) > parent * (1 + lean);
}

//  How try T counts for IDEA (kf_prompt_try_credit): by what its code
//  changed, unless the run's idea_credit is off (kf_search_idea_tries'
//  "by_change").
static kf_credit_t
s_credit (json_t *t, const char *idea)
{
    return kf_prompt_try_credit (t, kf_jstr (t, "idea"), idea,
                                 !json_is_false (json_object_get (t, "by_change")));
}

//  Whether try T counts for IDEA, *BY_CODE (may be NULL) set where it
//  was handed another idea.
static bool
s_counts (json_t *t, const char *idea, bool *by_code)
{
    kf_credit_t c = s_credit (t, idea);
    if (by_code)
        *by_code = c == KF_CREDIT_CODE;
    return kf_prompt_credit_counts (c);
}

//  Round 24: the tries handed IDEA whose code did not do it, newest
//  first, into NOTE (at its end, USED bytes in, SIZE in all): "handed,
//  not seen done: candidate 7 (the reading of its code sees no change
//  of it)". They count
//  neither way.
static void
s_not_done (json_t *tries, const char *idea, char *note, size_t used, size_t size)
{
    int n = 0, said = 0;
    char ids[96] = "";
    for (size_t k = json_array_size (tries); k-- > 0;) {
        json_t *t = json_array_get (tries, k);
        if (s_credit (t, idea) != KF_CREDIT_NOT_DONE)
            continue;
        if (n++ < KF_SEARCH_IDEA_NOTED) {
            size_t at = strlen (ids);
            snprintf (ids + at, sizeof ids - at, "%s%lld", said++ ? ", " : "",
                      (long long) kf_jint (t, "id"));
        }
    }
    if (!n || used >= size)
        return;
    snprintf (note + used, size - used, "%shanded, not seen done: candidate%s %s%s (%s)",
              used ? "; " : "", n > 1 ? "s" : "", ids, n > said ? " and earlier" : "",
              kf_prompt_idea_bits (idea) ? "the reading of its code sees no change of it"
                                         : "the code changed what other ideas are about");
}

json_t *
kf_search_idea_record (const char *const *ideas, size_t n, json_t *tries, bool *aside)
{
    json_t *notes = json_object ();
    for (size_t i = 0; i < n; i++) {
        aside[i] = false;
        int tried = 0, told = 0, lost = 0, won = 0, loaded = 0, up = 0;
        size_t j;
        json_t *t;
        json_array_foreach (tries, j, t)
            if (s_counts (t, ideas[i], NULL)) {
                tried++;
                int v = kf_search_idea_try_verdict (t, ideas[i]);
                told += v < 2;
                lost += v < 0;
                won += v == 1;
                loaded += v == 3;
                up += v == 0 && s_leans_up (t);
            }
        if (!tried) {
            char note[320] = "";
            s_not_done (tries, ideas[i], note, 0, sizeof note);
            if (*note)
                json_object_set_new (notes, ideas[i], json_string (note));
            continue;
        }
        //  Every try lost; or two or more and none won (round 9: on a
        //  loaded host every try fell within a +/-25% band, and threads
        //  were handed out four times in three generations). Round 22:
        //  threads went out four times more while other work held the
        //  second core, every try "inconclusive, timed beside other work":
        //  threads gain only from cores the load holds, so two such tries
        //  and no win set the threads idea aside too (it comes back to the
        //  front once a try of it wins). Another idea's loaded tries set
        //  nothing aside (round 13: ideas set aside so won later).
        //  Round 39: not where a try within the noise still came out above
        //  its parent by more than the run's median repeat gap (a +25%
        //  tile within +/-29% was set aside twice over).
        aside[i] = (told > 0
                    && (lost == told || (told >= KF_SEARCH_IDEA_NO_WIN && won == 0 && up == 0)))
                   || (kf_prompt_idea_feature (ideas[i]) == KF_IDEA_THREADS
                       && loaded >= KF_SEARCH_IDEA_NO_WIN && won == 0);
        //  The newest tries first, each with both figures.
        char note[1024] = "tried:";
        size_t used = strlen (note);
        int said = 0;
        for (size_t k = json_array_size (tries); k-- > 0 && said < KF_SEARCH_IDEA_NOTED;) {
            t = json_array_get (tries, k);
            bool by_code;
            if (!s_counts (t, ideas[i], &by_code))
                continue;
            double s = kf_jnum (t, "speedup", 0), p = kf_jnum (t, "parent_speedup", 0);
            bool one = s_by_one_core (t, ideas[i]);
            double noise = kf_jnum (t, one ? "own_noise" : "noise", 0);
            int v = kf_search_idea_try_verdict (t, ideas[i]);
            //  Round 9: "within noise (4.01x vs parent 4.53x)" read as a
            //  13% loss called even; the band that made it so is said.
            char band[160] = "";
            if (v == 0 || v == 2)
                //  Round 41: one try read +/-7% in one prompt and +/-19% in
                //  a later one: the band moves as confirmations come.
                snprintf (band, sizeof band, " of +/-%.0f%%%s%s",
                          100 * (noise > KF_LINEAGE_SAME_BAND ? noise : KF_LINEAGE_SAME_BAND),
                          v == 0 ? " as the run's repeats now stand" : "",
                          v == 0 && s_leans_up (t) ? " but above its parent by more than the run's "
                                                     "median repeat gap" : "");
            //  Round 51: "within noise of +/-35% ... in candidate 9, handed
            //  another idea (152.15x ...), within noise ..." read as one
            //  try: a try done under another idea is named first, and
            //  tries are parted by semicolons.
            char whose[96] = "";
            if (by_code)
                snprintf (whose, sizeof whose, " candidate %lld, handed another idea:",
                          (long long) kf_jint (t, "id"));
            //  Round 30: "won (267.95x vs parent 231.03x)" for a prefetch
            //  whose try also added streaming stores, which alone (in
            //  another candidate) were faster still: the gain is the
            //  pair's, and the note says what else the code added (a try
            //  handed another idea says so already).
            unsigned others = by_code ? 0
                                      : (unsigned) kf_jint (t, "added")
                                            & ~kf_prompt_idea_bits (ideas[i]);
            char words[KF_PROMPT_FEATURE_WORDS_MAX] = "";
            char also[KF_PROMPT_FEATURE_WORDS_MAX + 48] = "";
            if (others && *kf_prompt_feature_words (others, words, sizeof words))
                snprintf (also, sizeof also, ", its code adding %s too", words);
            const char *word = v < 0 ? "lost" : v == 1 ? "won" : v == 2
                               ? "inconclusive, timings spread"
                               : v == 3 ? "inconclusive, timed beside other work"
                               : v == 4 ? "inconclusive, threads that hardly ran side by side"
                                        : "within noise";
            if (one)
                snprintf (note + used, sizeof note - used, "%s%s %s%s against its own one-core "
                          "time, timed beside other work (its threads bought %+.0f%%; %.2fx vs "
                          "parent %.2fx not like for like%s)", said++ ? ";" : "", whose, word,
                          band, 100 * (kf_jnum (t, "one_core_gain", 1) - 1), s, p, also);
            else {
                //  Told beside other work: the load worked against the gap
                //  (factor 1), or could account for less than it.
                char why[160] = "";
                double f = json_is_true (json_object_get (t, "loaded"))
                               ? kf_lineage_load_factor (v, json_object_get (t, "tl"),
                                                         json_object_get (t, "pl"))
                               : 0;
                if (f > 1.005)
                    snprintf (why, sizeof why, ", timed beside other work that could account "
                              "for %.2fx of it at most", f);
                else if (f > 0)
                    snprintf (why, sizeof why, v == 1 ? ", timed beside at least as much other "
                              "work as its parent" : ", timed beside no more other work than "
                              "its parent");
                snprintf (note + used, sizeof note - used, "%s%s %s%s (%.2fx vs parent %.2fx%s%s)",
                          said++ ? ";" : "", whose, word, band, s, p, why, also);
            }
            used = strlen (note);
        }
        if (tried > said)
            snprintf (note + used, sizeof note - used, "; and %d earlier tr%s", tried - said,
                      tried - said == 1 ? "y" : "ies");
        s_not_done (tries, ideas[i], note, strlen (note), sizeof note);
        json_object_set_new (notes, ideas[i], json_string (note));
    }
    return notes;
}

//  The judged tries of IDEA in TRIES into *TOLD, the won ones into *WON.
static void
s_tally (json_t *tries, const char *idea, int *told, int *won)
{
    *told = *won = 0;
    size_t j;
    json_t *t;
    json_array_foreach (tries, j, t)
        if (s_counts (t, idea, NULL)) {
            int v = kf_search_idea_try_verdict (t, idea);
            *told += v < 2;
            *won += v == 1;
        }
}

void
kf_search_idea_held (size_t n, const int *pending, const bool *aside, bool *held)
{
    for (size_t i = 0; i < n; i++)
        held[i] = pending && pending[i] > 0 && !aside[i];
}

void
kf_search_idea_spent (const char *const *ideas, size_t n, json_t *tries, bool *spent)
{
    for (size_t i = 0; i < n; i++) {
        int told, won;
        s_tally (tries, ideas[i], &told, &won);
        spent[i] = told >= KF_SEARCH_IDEA_NO_WIN && won == 0;
    }
}
