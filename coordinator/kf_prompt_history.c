/*  kf_prompt_history.c - this attempt among the run's others: the run's
 *  candidates in words, and "Other results so far" (kf_prompt_history.h;
 *  the section "This attempt" is kf_prompt_attempt.c).
 */
#include "kf_prompt_history.h"
#include "kf_lineage.h"
#include "kf_prompt_changed.h"
#include "kf_prompt_target.h"
#include "kf_json.h"
#include "kf_str.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  Writers

const char *
kf_prompt_idea_at (const kf_prompt_in_t *in, int generation, int slot)
{
    if (in->population <= 0 || generation < 0 || slot < 0)
        return NULL;
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (in->spec,
                                                    kf_prompt_target_kind (in->target,
                                                                           in->language),
                                                    &n);
    if (!n)
        return NULL;
    size_t start = (size_t) generation * (size_t) in->population;
    return ideas[(start + (size_t) slot) % n];
}

//  The idea candidate C was handed: as stored with it (kf_search_idea.h),
//  else its slot's place.
const char *
kf_prompt_idea_of (const kf_prompt_in_t *in, json_t *c)
{
    const char *stored = json_string_value (json_object_get (c, "idea"));
    return stored ? stored : kf_prompt_idea_at (in, (int) kf_jint (c, "generation"),
                                                (int) kf_jint (c, "slot"));
}

//  "; its code added to its parent's: threads, ..." for candidate C, or
//  nothing.
void
kf_prompt_added_text (json_t *c, char *buf, size_t size)
{
    //  Every feature's words fit (round 19: "... a permu." cut mid-word).
    char words[KF_PROMPT_FEATURE_WORDS_MAX];
    kf_prompt_feature_words (kf_prompt_features_added (c), words, sizeof words);
    char counts[KF_PROMPT_CHANGED_TEXT_MAX], said[KF_PROMPT_SAID_TEXT_MAX];
    kf_prompt_said_text (c, said, sizeof said);
    if (*words)
        snprintf (buf, size, "; its code added %s: %s%s",
                  kf_jint (c, "parent_id") ? "to its parent's" : "(written from scratch)", words,
                  said);
    //  Round 15: "regressed" said nothing of what such a try changed.
    else if (*kf_prompt_changed_text (c, counts, sizeof counts))
        snprintf (buf, size, "; its code added no feature this reading knows: it %s%s", counts,
                  said);
    else
        snprintf (buf, size, "%s", said);
}

//  One candidate's outcome in a line: "correct, 4.58 ms (2.10x), screen
//  timing only" or "did not compile: error: ...".
const char *
kf_prompt_outcome (json_t *c, bool in_changed, char *buf, size_t size)
{
    if (json_is_false (json_object_get (c, "finished"))) {
        snprintf (buf, size, "not judged yet (still being written, compiled or timed)");
        return buf;
    }
    //  A failure's first line, or a repeated source (kf_lineage.c's
    //  words for both).
    if (strcmp (kf_jstr (c, "status"), "correct")
        || !strncmp (kf_jstr (c, "detail"), "the same source as candidate ", 29))
        return kf_lineage_reason (c, 0, buf, size);
    char t[32] = "";
    if (kf_jnum (c, "candidate_ns", 0) > 0)
        kf_prompt_time_text (kf_jnum (c, "candidate_ns", 0), t, sizeof t);
    const char *fid = kf_jstr (c, "fidelity");
    //  Round 14: a screen figure with a +/-30% spread was quoted like a
    //  full one; its spread is said beside it.
    char how[320];
    double noise = kf_lineage_noise (json_object_get (c, "tc"), json_object_get (c, "tr"));
    char spread[96] = "";
    if (noise > 0)
        snprintf (spread, sizeof spread, " (+/-%.0f%%, a short timing: not a verdict)",
                  100 * noise);
    //  Round 17: a tuning screen is the best of its sweep's points.
    char best[120] = "";
    if (kf_lineage_screen_points (c) > 1) {
        strcpy (best, ": ");
        snprintf (best + 2, sizeof best - 2, KF_LINEAGE_BEST_OF, kf_lineage_screen_points (c));
    }
    snprintf (how, sizeof how, "%s%s%s",
              !strcmp (fid, "screen") ? ", screen timing only"
              : !strcmp (fid, "pending") ? ", screen timing, the full one pending"
              : !strcmp (fid, "full") ? ", full protocol" : "",
              !strcmp (fid, "screen") || !strcmp (fid, "pending") ? best : "",
              !strcmp (fid, "screen") || !strcmp (fid, "pending") ? spread : "");
    int n;
    if (json_is_number (json_object_get (c, "speedup")))
        n = snprintf (buf, size, "correct, %s%s%.2fx%s%s", t, *t ? " (" : "",
                      kf_jnum (c, "speedup", 0), *t ? ")" : "", how);
    else
        n = snprintf (buf, size, "correct%s%s%s", *t ? ", " : "", t, how);
    //  Round 5: an outcome timed beside other work says so
    //  (kf_prompt_load_text), and so does one timed on a host whose
    //  registered workers differ from the run's other timings.
    //  Round 45: 300 bytes cut the host's condition mid-clause ("the exec
    //  host shared with 1 compile and").
    char load[640];
    bool loaded = kf_prompt_load_text (json_object_get (c, "host_load"),
                                       json_object_get (c, "host_condition"), load, sizeof load);
    //  Round 28: a timing over undisturbed samples beside 5.9 other
    //  runnable tasks read "timed on a quiet host": the load is said, and
    //  how the figures kept clear of it.
    bool clean = kf_prompt_load_undisturbed (json_object_get (c, "host_load"));
    if ((loaded || in_changed || clean) && *load && n >= 0 && (size_t) n < size)
        snprintf (buf + n, size - (size_t) n, "; %s", load);
    //  Round 11: quiet timings said nothing, so a reader could not tell a
    //  quiet host from an unknown one, nor set two outcomes side by side.
    else if (kf_jnum (json_object_get (c, "host_load"), "runnable_others", -1) >= 0 && n >= 0
             && (size_t) n < size)
        snprintf (buf + n, size - (size_t) n, "; timed on a quiet host (%.1f other runnable "
                  "tasks)", kf_jnum (json_object_get (c, "host_load"), "runnable_others", 0));
    //  Round 20: the exec worker takes a full timing beside other work
    //  again after a quiet moment (its result's "retimed"); which stands.
    json_t *again = json_object_get (c, "retimed");
    size_t used = strlen (buf);
    if (json_is_object (again) && used < size)
        snprintf (buf + used, size - used, "; timed twice, the first time beside other work: "
                  "the exec worker waited %.1f s for a quiet host%s, and the %s timing, the "
                  "less disturbed, stands", kf_jnum (again, "waited_s", 0),
                  json_is_true (json_object_get (again, "quiet")) ? "" : " (none came)",
                  strcmp (kf_jstr (again, "kept"), "second") ? "first" : "second");
    return buf;
}

//  Where candidate C came from: "generation 0, attempt 3: packing" or
//  "tuning round: a template of candidate 3".
static void
s_origin (const kf_prompt_in_t *in, json_t *c, char *buf, size_t size)
{
    int gen = (int) kf_jint (c, "generation"), slot = (int) kf_jint (c, "slot");
    if (!strcmp (kf_jstr (c, "phase"), "tuning")) {
        snprintf (buf, size, "tuning round: a template of candidate %lld",
                  (long long) kf_jint (c, "parent_id"));
        return;
    }
    //  The words it was handed, where a meta round reworded the idea
    //  since (kf_meta_ideas_canon keeps them).
    const char *idea = json_string_value (json_object_get (c, "idea_handed"));
    if (!idea)
        idea = kf_prompt_idea_of (in, c);
    char added[KF_PROMPT_ADDED_MAX];
    kf_prompt_added_text (c, added, sizeof added);
    //  Round 36: each line gave its idea in full (600 bytes, with a TLB
    //  figure "not measured" beside the Target's measured one): its head.
    char head[KF_PROMPT_IDEA_HEAD_MAX + 8];
    if (idea)
        idea = kf_prompt_idea_head (idea, head, sizeof head);
    if (kf_jint (c, "parent_id"))
        snprintf (buf, size, "generation %d, attempt %d%s%s; from candidate %lld%s", gen,
                  slot + 1, idea ? ": " : "", idea ? idea : "",
                  (long long) kf_jint (c, "parent_id"), added);
    else
        snprintf (buf, size, "generation %d, attempt %d%s%s; written from scratch%s", gen,
                  slot + 1, idea ? ": " : "", idea ? idea : "", added);
}

bool
kf_prompt_same_candidate (json_t *a, json_t *b)
{
    if (!a || !b)
        return false;
    if (kf_jint (a, "id") && kf_jint (a, "id") == kf_jint (b, "id"))
        return true;
    const char *x = kf_jstr (a, "norm_hash"), *y = kf_jstr (b, "norm_hash");
    return *x && !strcmp (x, y);
}

static bool
s_in (json_t *list, json_t *c)
{
    size_t i;
    json_t *k;
    json_array_foreach (list, i, k)
        if (kf_prompt_same_candidate (k, c))
            return true;
    return false;
}

//  Whether the prompt shows candidate C already, with its figures.
static bool
s_shown (const kf_prompt_in_t *in, json_t *c)
{
    return kf_prompt_same_candidate (in->base, c) || kf_prompt_same_candidate (in->best, c) || kf_prompt_same_candidate (in->last, c)
           || s_in (in->children, c) || s_in (in->inspirations, c);
}

//  Candidate C is not judged yet and of this generation or a later one:
//  a sibling (the section "This attempt" says where it starts), not a
//  result.
bool
kf_prompt_pending_here (const kf_prompt_in_t *in, json_t *c)
{
    return json_is_false (json_object_get (c, "finished"))
           && kf_jint (c, "generation") >= in->generation;
}

//  Whether the run's timings were taken under different host
//  conditions: some with other workers registered on the exec host,
//  some with none.
bool
kf_prompt_conditions_differ (json_t *history)
{
    bool shared = false, alone = false;
    size_t i;
    json_t *c;
    json_array_foreach (history, i, c) {
        json_t *cond = json_object_get (c, "host_condition");
        if (!json_is_object (cond))
            continue;
        double beside = kf_jnum (cond, "compile_workers_beside", 0)
                        + kf_jnum (cond, "exec_workers_beside", 0);
        shared |= beside >= 1;
        alone |= beside < 1;
    }
    return shared && alone;
}

void
kf_prompt_other_results (FILE *f, const kf_prompt_in_t *in)
{
    if (in->templated)
        return;
    int shown = 0;
    size_t i;
    json_t *c;
    json_array_foreach (in->history, i, c) {
        if (shown >= KF_PROMPT_OTHER_RESULTS)
            break;
        if (s_shown (in, c) || kf_prompt_pending_here (in, c))
            continue;
        if (!shown++)
            fputs ("\n## Other results so far\nThe run's other candidates, newest first (those "
                   "not judged yet on top), that this prompt does not show above (one line each; their code is "
                   "not shown). Do not repeat an approach that failed or lost here unless you "
                   "know why it did and change that.\n", f);
        char origin[KF_PROMPT_ADDED_MAX + 600], outcome[KF_PROMPT_OUTCOME_MAX];
        s_origin (in, c, origin, sizeof origin);
        kf_prompt_outcome (c, kf_prompt_conditions_differ (in->history), outcome, sizeof outcome);
        fprintf (f, "- candidate %lld (%s): %s\n", (long long) kf_jint (c, "id"), origin,
                 outcome);
    }
}

//  Round 6: an idea that had lost was offered again with no word of it.
const char *
kf_prompt_idea_head (const char *text, char *buf, size_t size)
{
    size_t n = strlen (text), stop = n;
    for (size_t i = 24; i < n; i++) {
        //  Round 39: "by non-temporal (streaming) stores" read "by
        //  non-temporal": a bracketed word inside a phrase is kept.
        const char *close = text[i] == '(' ? strchr (text + i, ')') : NULL;
        size_t inner = close ? (size_t) (close - text) - i : 0;
        if (close && inner < 24 && !memchr (text + i, ' ', inner) && close[1] == ' ' && close[2]
            && close[2] != '(') {
            i = (size_t) (close - text);
            continue;
        }
        if (text[i] == ':' || text[i] == ';' || (text[i] == '(' && text[i - 1] == ' ')) {
            stop = i - (text[i] == '(');
            break;
        }
    }
    //  Round 38: "... in plain code the compiler can vectorise or in
    //  [cut]" read as a broken sentence: a long head ends at its last
    //  clause (a comma) within the limit, else at a word, with "...".
    bool cut = false;
    if (stop > KF_PROMPT_IDEA_HEAD_MAX) {
        size_t comma = KF_PROMPT_IDEA_HEAD_MAX;
        while (comma > 24 && text[comma] != ',')
            comma--;
        stop = comma;
        if (comma <= 24) {
            stop = KF_PROMPT_IDEA_HEAD_MAX;
            while (stop > 24 && text[stop] != ' ')
                stop--;
            cut = true;
        }
    }
    snprintf (buf, size, "%.*s%s", (int) stop, text, cut ? " ..." : "");
    return buf;
}
