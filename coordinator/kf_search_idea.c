/*  kf_search_idea.c - the idea each attempt is handed, and the kernel it
 *  starts from (kf_search_idea.h).
 */
#include "kf_search_idea.h"
#include "kf_hash.h"
#include "kf_json.h"
#include "kf_meta_ideas.h"
#include "kf_prompt.h"
#include "kf_prompt_class.h"
#include "kf_prompt_history.h"
#include "kf_prompt_target.h"
#include "kf_prompt_threads.h"
#include "kf_str.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  An idea never trades a parent at the reference's speed or better for
//  one below it (round 7 of issue 15: a 0.25x kernel lacked every idea
//  the 5x ones did, so ideas kept handing it children; kf_select.h).
static bool
s_slower (const kf_elite_t *other, const kf_elite_t *chosen)
{
    return chosen->speedup >= KF_SELECT_PARITY && other->speedup < KF_SELECT_PARITY;
}

int
kf_search_idea_pick (const char *idea, const char *language, const kf_elite_t *elites,
                     const char *const *sources, size_t n, int island,
                     const kf_elite_t *chosen, const char *chosen_source)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (idea);
    if (!chosen || f == KF_IDEA_OTHER || !kf_prompt_source_does (chosen_source, language, f))
        return -1;
    for (size_t i = 0; i < n; i++)
        if (elites[i].candidate_id != chosen->candidate_id && sources[i]
            && (island < 0 || elites[i].island == island) && !s_slower (&elites[i], chosen)
            && !kf_prompt_source_does (sources[i], language, f))
            return (int) i;
    return -1;
}

void
kf_search_idea_order (size_t n, size_t start, const bool *aside, size_t *order)
{
    size_t k = 0;
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < n; i++) {
            size_t idx = (start + i) % n;
            if (aside[idx] == (pass == 1))
                order[k++] = idx;
        }
}

size_t
kf_search_idea_fit (const char *const *ideas, size_t n, const size_t *order,
                    const bool *aside, int population, int slot,
                    const kf_elite_t *elites, const unsigned *features, size_t n_elites,
                    int island, const kf_elite_t *chosen, unsigned chosen_features, int *pick)
{
    return kf_search_idea_fit_known (ideas, n, order, aside, population, slot, elites, features,
                                     n_elites, island, chosen, chosen_features, NULL, pick);
}

//  What makes an idea unfit for a kernel, beyond having it (s_has's
//  UNFIT): in the low word the premises it lacks (kf_prompt_idea_premise:
//  the features its code does not do, and since round 20 vectorised math
//  where it is scalar); threads predicted to lose there; (round 21) a
//  kernel bound by its arithmetic, for streaming stores.
#define S_UNFIT_THREADS (1ull << 32)
#define S_UNFIT_ARITH (1ull << 33)

static uint64_t
s_lacks (unsigned features, bool scalar)
{
    return (~features & ~KF_PREMISE_VECTORS) | (scalar ? KF_PREMISE_VECTORS : 0);
}

static uint64_t
s_unfit_chosen (const kf_search_idea_known_t *known, unsigned features)
{
    return !known ? 0
                  : s_lacks (features, known->chosen_scalar)
                        | (known->chosen_threads_lose ? S_UNFIT_THREADS : 0)
                        | (known->chosen_arith ? S_UNFIT_ARITH : 0);
}

static uint64_t
s_unfit_elite (const kf_search_idea_known_t *known, size_t e, unsigned features)
{
    return !known ? 0
                  : s_lacks (features, known->scalar && known->scalar[e])
                        | (known->threads_lose && known->threads_lose[e] ? S_UNFIT_THREADS : 0)
                        | (known->arith && known->arith[e] ? S_UNFIT_ARITH : 0);
}

//  Whether the kernel ID (with FEATURES, built from the idea BUILT) has
//  idea IDX: its source shows it, or it was built from it, or a sibling
//  takes it from that kernel (round 10: two siblings from candidate 4
//  both took cache blocking, and candidate 1 was handed the loop order
//  it was written to).
//  Round 11: and a kernel the threads idea is predicted to lose on
//  (UNFIT: kf_prompt_threads_lose) counts as having it. Round 20: so
//  does a kernel whose math is scalar for an idea that takes vectorised
//  math as given (three ideas "once each element's math is vectorised"
//  went to the plain-C first kernel in one generation, and each try had
//  to vectorise it as well: the siblings came out near-identical).
//  Round 21: so does a kernel bound by its arithmetic for streaming
//  stores (kf_search_idea_arith_bound).
//  Round 22: and why, for the prompt ("that kernel has this attempt's
//  idea already, a sibling ..., or it is predicted not to pay there"
//  named three reasons where one held): "code", "built", "threads",
//  "scalar", "premise", "arith", "cited", "inherited", "tried" or
//  "sibling"; NULL when it lacks the idea.
//  Round 25's notes: an idea whose text takes any other feature as given
//  (packing "inside the cache blocks", a meta round's "keep the streaming
//  stores but ...") goes the way of vectorised math: "premise".
static const char *
s_has_why (const char *const *ideas, size_t idx, int64_t id, unsigned features, int built,
           uint64_t unfit, const kf_search_idea_known_t *known)
{
    //  Every part of an idea of several (round 37: a register tile read
    //  as "blocking, packing and micro-kernel as one change" done).
    kf_idea_feature_t f = kf_prompt_idea_feature (ideas[idx]);
    unsigned need = kf_prompt_idea_bits (ideas[idx]);
    if (need && (features & need) == need)
        return "code";
    if (built == (int) idx)
        return "built";
    if (kf_prompt_idea_cites (ideas[idx], id))
        return "cited";
    if (kf_search_idea_inherited (known, id, idx))
        return "inherited";
    for (size_t t = 0; known && t < known->n_tried; t++)
        if (known->tried[t].parent_id == id && known->tried[t].idea == idx)
            return "tried";
    if ((unfit & S_UNFIT_THREADS) && f == KF_IDEA_THREADS)
        return "threads";
    //  Round 52: "remove the per-element overhead, by the simplest loop
    //  the compiler vectorises fully" went to a kernel that is that loop
    //  (its build's report: vectorised; no intrinsics). Known readings
    //  only: without them every kernel would read as vectorised.
    if (known && strstr (ideas[idx], KF_PROMPT_IDEA_SIMPLEST_LOOP)
        && !(unfit & KF_PREMISE_VECTORS) && !(features & (1u << KF_IDEA_SIMD)))
        return "code";
    unsigned lacks = kf_prompt_idea_premise (ideas[idx]) & (unsigned) unfit;
    if (lacks)
        return lacks == KF_PREMISE_VECTORS ? "scalar" : "premise";
    if ((unfit & S_UNFIT_ARITH) && f == KF_IDEA_STREAM)
        return "arith";
    for (size_t s = 0; known && s < known->n_siblings; s++)
        if (known->siblings[s].parent_id == id && known->siblings[s].idea == idx)
            return "sibling";
    return NULL;
}

static bool
s_has (const char *const *ideas, size_t idx, int64_t id, unsigned features, int built,
       uint64_t unfit, const kf_search_idea_known_t *known)
{
    return s_has_why (ideas, idx, id, features, built, unfit, known) != NULL;
}

//  Round 15: whether idea IDX taken from a kernel with FEATURES makes the
//  kernel a sibling of the generation is making already (threads on the
//  streaming parent, streaming on the threaded one): the same features
//  in all, or (round 30) the two ideas crossed.
static bool
s_converges (const char *const *ideas, size_t idx, unsigned features,
             const kf_search_idea_known_t *known)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (ideas[idx]);
    //  How threads split the work does not make another kernel (round 24).
    unsigned split = 1u << KF_IDEA_DYNAMIC;
    for (size_t s = 0; f != KF_IDEA_OTHER && known && s < known->n_siblings; s++) {
        const kf_search_idea_sibling_t *sib = &known->siblings[s];
        if (!sib->made_known)
            continue;
        if ((sib->made & ~split) == ((features | 1u << f) & ~split))
            return true;
        //  Round 30: the two ideas crossed, each added to a kernel that
        //  has the other (threads from the outer-product kernel while the
        //  outer product from the threaded one was in flight): both make
        //  a kernel with the two, whatever else their parents differ in.
        kf_idea_feature_t g = kf_prompt_idea_feature (ideas[sib->idea]);
        if (g != KF_IDEA_OTHER && g != f && g != KF_IDEA_DYNAMIC && f != KF_IDEA_DYNAMIC
            && ((sib->made >> f) & 1u) && ((features >> g) & 1u))
            return true;
    }
    return false;
}

//  Whether idea IDX is not to be taken from the kernel ID: it has it
//  (s_has), or it would make a sibling's kernel (s_converges).
static bool
s_taken (const char *const *ideas, size_t idx, int64_t id, unsigned features, int built,
         uint64_t unfit, const kf_search_idea_known_t *known)
{
    return s_has (ideas, idx, id, features, built, unfit, known)
           || s_converges (ideas, idx, features, known);
}

size_t
kf_search_idea_fit_known (const char *const *ideas, size_t n, const size_t *order,
                          const bool *aside, int population, int slot,
                          const kf_elite_t *elites, const unsigned *features, size_t n_elites,
                          int island, const kf_elite_t *chosen, unsigned chosen_features,
                          const kf_search_idea_known_t *known, int *pick)
{
    *pick = -1;
    size_t k = (size_t) (slot > 0 ? slot : 0) % n;
    //  This slot's own place first, then the places no sibling leans
    //  towards, then the siblings' (a repeat beats an idea that lost).
    size_t apart = population > 0 && (size_t) population < n ? (size_t) population : n;
    size_t places[64], m = 0;
    places[m++] = k;
    for (size_t j = apart; j < n && m < 64; j++)
        places[m++] = j;
    for (size_t j = 0; j < apart && m < 64; j++)
        if (j != k)
            places[m++] = j;
    int chosen_built = known ? known->chosen_built : -1;
    const bool *spent = known ? known->spent : NULL;
    //  Tiers: ideas free of tries in flight, the slot's own and the
    //  places no sibling leans towards first, then the siblings' places;
    //  then ideas held back for a try in flight (not LOST), in the same
    //  order; then those set aside. Round 14 put a held idea before the
    //  siblings' places (packing went to two attempts of a generation
    //  while threads waited); round 16 found held ideas handed out while
    //  free ones were left (cache blocking and threads each to a second
    //  attempt before the first was judged), so a free idea in a
    //  sibling's place, which that sibling has not taken yet (planned
    //  siblings' ideas are in flight), now comes first.
    size_t first_sibling = 1 + (n - apart);
    for (int tier = 0; tier < 5; tier++)
        for (size_t s = 0; s < m; s++) {
            size_t idx = order[places[s]];
            bool sib = s >= first_sibling;
            bool lost = !known || !known->lost || known->lost[idx];
            int t = !aside[idx] ? (sib ? 1 : 0) : lost ? 4 : sib ? 3 : 2;
            if (t != tier || (spent && spent[idx]))
                continue;
            //  Round 44: "spend fewer instructions" from scratch, beside a
            //  sibling's cheapest approximation, made one idea twice in
            //  two wordings: it cuts what a kernel's code costs, so it
            //  waits for a kernel to cut.
            if (!chosen && kf_prompt_idea_cuts_code (ideas[idx]))
                continue;
            if (!chosen
                || !s_taken (ideas, idx, chosen->candidate_id, chosen_features, chosen_built,
                             s_unfit_chosen (known, chosen_features), known))
                return idx;
            for (size_t e = 0; e < n_elites; e++)
                if (elites[e].candidate_id != chosen->candidate_id
                    && (island < 0 || elites[e].island == island) && !s_slower (&elites[e], chosen)
                    && !s_taken (ideas, idx, elites[e].candidate_id, features[e],
                                 known && known->built ? known->built[e] : -1,
                                 s_unfit_elite (known, e, features[e]), known)) {
                    *pick = (int) e;
                    return idx;
                }
        }
    //  Every kernel of the pool has every idea: the slot's own, kept from
    //  the selected parent, unless a sibling takes it from that kernel;
    //  then the first a sibling does not take from it.
    for (int pass = 0; chosen && known && pass < 2; pass++)
        for (size_t s = 0; s < m; s++) {
            size_t idx = order[places[s]];
            if ((s > 0 && aside[idx] != (pass == 1)) || (s == 0 && pass == 1)
                || (spent && spent[idx]))
                continue;
            if (!s_has (ideas, idx, chosen->candidate_id, 0, -1,
                        s_unfit_chosen (known, chosen_features), known)
                && !s_converges (ideas, idx, chosen_features, known))
                return idx;
        }
    //  Siblings take every idea left from CHOSEN: the first another
    //  kernel of the pool can take that no sibling takes from it (round
    //  11: never one idea from one parent twice in a generation).
    for (size_t s = 0; chosen && known && s < m; s++)
        for (size_t e = 0; e < n_elites; e++) {
            size_t idx = order[places[s]];
            if (elites[e].candidate_id != chosen->candidate_id
                && (island < 0 || elites[e].island == island) && !s_slower (&elites[e], chosen)
                && !(spent && spent[idx])
                && !s_has (ideas, idx, elites[e].candidate_id, 0, -1,
                           s_unfit_elite (known, e, features[e]), known)
                && !s_converges (ideas, idx, features[e], known)) {
                *pick = (int) e;
                return idx;
            }
        }
    //  Nothing left but repeats: the slot's own, or the first not spent.
    for (size_t s = 0; spent && spent[order[k]] && s < m; s++)
        if (!spent[order[places[s]]])
            return order[places[s]];
    return order[k];
}

//  ---------------------------------------------------------------------
//  What the database holds

//  Whether one of IDEAS (N) is about FEATURE.
static bool
s_listed (const char *const *ideas, size_t n, kf_idea_feature_t feature)
{
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == feature)
            return true;
    return false;
}

int
kf_search_idea_choose (kf_db_t *db, kf_search_idea_cache_t *cache, json_t *run,
                       json_t *sections, int population, int generation, int slot,
                       const kf_elite_t *elites, size_t n, int island,
                       const kf_elite_t *chosen, const char *fingerprint,
                       json_t *hardware, kf_search_idea_t *out)
{
    memset (out, 0, sizeof *out);
    out->parent = chosen;
    snprintf (out->archive, sizeof out->archive, "%s", fingerprint ? fingerprint : "");
    kf_prompt_in_t in = { .spec = json_object_get (run, "spec"),
                          .language = kf_jstr (run, "language"),
                          .target = kf_jstr (run, "target"), .population = population };
    size_t count = 0;
    //  The list of the sections' version (kf_meta_ideas.h); freed below.
    const char **ideas = population > 0 && generation >= 0 && slot >= 0
                         ? kf_meta_ideas (sections, in.spec,
                                          kf_prompt_target_kind (in.target, in.language), &count)
                         : NULL;
    if (!count)
        return 0;
    json_t *tries = kf_search_idea_tries (db, run, &in);
    kf_meta_ideas_canon (sections, tries);
    //  Set aside (judged tries), held (tries in flight), and either.
    bool *aside = calloc (4 * count, sizeof *aside);
    size_t *order = calloc (2 * count, sizeof *order);
    unsigned *features = calloc (n + 1, sizeof *features);
    //  What the pool's kernels were built from, what the siblings planned
    //  so far took from which kernel (round 10), what is in flight, and
    //  where threads are predicted to lose (round 11).
    kf_search_idea_known_t known = { .chosen_built = -1 };
    json_t *rows = tries && aside && order && features
                   ? kf_search_idea_known_rows (db, kf_jint (run, "id"))
                   : NULL;
    kf_meta_ideas_canon (sections, rows);
    json_t *threads = NULL;
    int rc = rows && !kf_search_idea_known_read (rows, ideas, count, elites, n, chosen,
                                                 generation, slot, &known)
             ? 0 : -1;
    if (rc == 0 && (s_listed (ideas, count, KF_IDEA_THREADS)
                    || s_listed (ideas, count, KF_IDEA_STREAM)))
        rc = kf_search_idea_timings (db, cache, run, hardware, in.language, elites, n, chosen,
                                     &known, &threads);
    if (!s_listed (ideas, count, KF_IDEA_THREADS)) {
        json_decref (threads);    //  the threads paragraph's, of no idea here
        threads = NULL;
    }
    json_decref (rows);
    if (rc) {
        json_decref (tries);
        json_decref (threads);
        kf_search_idea_known_free (&known);
        free (aside);
        free (order);
        free (features);
        free (ideas);
        return -1;
    }
    bool *held = aside + count, *back = aside + 2 * count, *spent = aside + 3 * count;
    size_t *plain_order = order + count;
    json_t *notes = kf_search_idea_record (ideas, count, tries, aside);
    //  Each counted try's verdict by its id, for the prompt's words on
    //  the run's best (round 19: "won there" beside "within noise").
    json_t *verdicts = json_object ();
    size_t ti;
    json_t *tv;
    json_array_foreach (tries, ti, tv) {
        char key[24];
        snprintf (key, sizeof key, "%lld", (long long) kf_jint (tv, "id"));
        json_object_set_new (verdicts, key,
                             json_integer (kf_search_idea_try_verdict (tv, kf_jstr (tv, "idea"))));
    }
    kf_search_idea_held (count, known.pending, aside, held);
    kf_search_idea_spent (ideas, count, tries, spent);
    //  Round 17: an epilogue too small to pay for its fusion waits as a
    //  spent idea does (kf_search_idea_small.c).
    double small_share;
    int small = kf_search_idea_small (ideas, count, in.spec, hardware, &small_share);
    if (small >= 0)
        spent[small] = true;
    //  Round 25's notes: so does threads where all cores gave no more
    //  than one at the exec worker's start (kf_search_idea_small.c).
    kf_search_idea_idle_cores (ideas, count, in.spec, hardware, spent);
    known.spent = spent;
    json_decref (tries);
    for (size_t k = 0; k < count; k++)
        back[k] = aside[k] || held[k];
    known.lost = aside;
    size_t start = ((size_t) generation * (size_t) population) % count;
    kf_search_idea_order (count, start, back, order);
    kf_search_idea_order (count, start, aside, plain_order);
    //  The pool's sources are read only when the selected kernel has its
    //  slot's idea already (as before: most plans read one source).
    int64_t run_id = kf_jint (run, "id");
    unsigned own = chosen ? kf_search_idea_features (db, cache, run_id, chosen->candidate_id,
                                                     in.language)
                          : 0;
    known.chosen_scalar = chosen && kf_search_idea_scalar (db, chosen->candidate_id, own);
    size_t here = order[(size_t) slot % count], plain_here = plain_order[(size_t) slot % count];
    if (chosen && (back[here] || aside[plain_here]
                   || s_taken (ideas, here, chosen->candidate_id, own, known.chosen_built,
                               s_unfit_chosen (&known, own), &known)
                   || s_has (ideas, plain_here, chosen->candidate_id, own, -1, 0, NULL))) {
        known.scalar = calloc (n + 1, sizeof *known.scalar);
        kf_search_idea_pool (db, cache, run_id, in.language, elites, n, island, chosen, own,
                             &known, features);
    }
    int pick = -1, plain_pick = -1;
    size_t idx = kf_search_idea_fit_known (ideas, count, order, back, population, slot, elites,
                                           features, n, island, chosen, own, &known, &pick);
    size_t plain = kf_search_idea_fit (ideas, count, plain_order, aside, population, slot,
                                       elites, features, n, island, chosen, own, &plain_pick);
    out->idea = ideas[idx];
    out->parent = pick >= 0 ? &elites[pick] : chosen;
    //  Round 16: an idea that moves no fewer bytes goes to a parent at the
    //  memory bound only with one that does (kf_search_idea_bound.c).
    int with = -1;
    kf_share_t share = { .share = 0 };
    json_t *from = out->parent && !kf_search_idea_cuts_bytes (out->idea)
                   ? kf_prompt_kernel (db, out->parent->candidate_id) : NULL;
    double cycles = 0, budget = 0, at = 0;
    if (from) {
        double bound = kf_search_idea_bound_share (from, in.spec, hardware,
                                                   kf_prompt_target_kind (in.target, in.language),
                                                   &share, &cycles, &budget);
        at = cycles > 0 && budget > 0 ? budget / cycles : 0;
        int built = pick < 0 ? known.chosen_built : known.built ? known.built[pick] : -1;
        with = kf_search_idea_pair (ideas, count, idx, bound,
                                    kf_prompt_source_features (kf_jstr (from, "source"),
                                                               in.language),
                                    built, spent, held);
        json_decref (from);
    }
    out->with = with >= 0 ? ideas[with] : NULL;
    json_t *listed = json_array (), *set_aside = json_array ();
    char folded[400] = "";
    for (size_t k = 0; k < count; k++) {
        json_array_append_new (listed, json_string (ideas[order[k]]));
        if (aside[k]) {
            json_array_append_new (set_aside, json_string (ideas[k]));
            size_t used = strlen (folded);
            snprintf (folded + used, sizeof folded - used, "%s%zu", *folded ? "," : "|aside:",
                      k);
        }
    }
    out->prompt = json_pack ("{s:s, s:o, s:o, s:o, s:o}", "mine", out->idea, "order", listed,
                             "notes", notes, "aside", set_aside, "verdicts", verdicts);
    //  The prompt's "Tried before" credits as the record does.
    if (json_is_false (json_object_get (json_object_get (run, "config"), "idea_credit")))
        json_object_set_new (out->prompt, "by_change", json_false ());
    if (threads)
        json_object_set_new (out->prompt, "threads", threads);
    //  Round 20: why the attempt starts elsewhere than the archive chose.
    if (pick >= 0 && chosen) {
        const char *why = s_has_why (ideas, idx, chosen->candidate_id, own, known.chosen_built,
                                     s_unfit_chosen (&known, own), &known);
        if (!why && s_converges (ideas, idx, own, &known))
            why = "converges";
        //  Round 25's notes: what of the idea's premise that kernel lacks.
        unsigned lacks = kf_prompt_idea_premise (ideas[idx])
                         & (unsigned) s_unfit_chosen (&known, own);
        json_object_set_new (out->prompt, "moved",
                             json_pack ("{s:I, s:s, s:I}", "from",
                                        (json_int_t) chosen->candidate_id, "why", why ? why : "",
                                        "lacks", (json_int_t) lacks));
    }
    json_t *held_in_flight = json_object ();
    for (size_t k = 0; k < count; k++)
        if (held[k])
            json_object_set_new (held_in_flight, ideas[k], json_integer (known.pending[k]));
    json_object_set_new (out->prompt, "held", held_in_flight);
    if (small >= 0)
        json_object_set_new (out->prompt, "small",
                             json_pack ("{s:s, s:f, s:f}", "idea", ideas[small], "share",
                                        small_share, "bound", KF_SEARCH_IDEA_SMALL));
    //  Round 17: what the generation's later slots would be handed from
    //  the same kernel, so each prompt of it names the same siblings.
    //  Round 40: from the pool's read features (unread, every kernel
    //  looked free of every idea, and explicit SIMD was predicted for a
    //  later sibling where every kernel had it).
    if (chosen && !known.scalar) {
        known.scalar = calloc (n + 1, sizeof *known.scalar);
        kf_search_idea_pool (db, cache, run_id, in.language, elites, n, island, chosen, own,
                             &known, features);
    }
    json_t *later = kf_search_idea_later (ideas, count, start, aside, &known, population, slot,
                                          idx, with, pick, elites, features, n, island, chosen,
                                          own);
    if (later)
        json_object_set_new (out->prompt, "later", later);
    kf_search_idea_with_note (out->prompt, out->with, &share, at, cycles, budget);
    //  Ideas set aside change what a candidate is handed: two candidates
    //  on equal fingerprints must have seen the same ones. So do what the
    //  kernels were built from and what the siblings took, which the
    //  archive's cells and sources do not say, and (round 11) the tries
    //  in flight and the kernels' times; they are folded in only where
    //  they changed the plan (equal fingerprints still give equal plans:
    //  either both plans are the plain one of the cells and sources, or
    //  both saw the same), so that two runs whose siblings or timings
    //  differed to no effect still compare (test_search_switches).
    bool changed = idx != plain || pick != plain_pick || with >= 0;
    char *seen = changed ? kf_search_idea_known_text (&known, elites, n) : NULL;
    char *more = NULL;
    size_t more_size = 0;
    FILE *mf = changed ? open_memstream (&more, &more_size) : NULL;
    if (mf) {
        kf_search_idea_known_more (mf, held, spent, count, &known, n);
        if (with >= 0)
            fprintf (mf, "|with:%d", with);
        if (fclose (mf)) {
            free (more);
            more = NULL;
        }
    }
    char *text = kf_strdupf ("%s%s%s%s", out->archive, folded, seen ? seen : "",
                             more ? more : "");
    rc = (changed && (!seen || !more)) || !text ? -1 : 0;
    if (rc == 0 && (*folded || seen)) {
        char digest[65];
        kf_sha256_hex (text, strlen (text), digest);
        snprintf (out->archive, sizeof out->archive, "%.16s", digest);
    }
    free (text);
    free (seen);
    free (more);
    kf_search_idea_known_free (&known);
    free (aside);
    free (order);
    free (features);
    free (ideas);
    if (rc) {
        json_decref (out->prompt);
        out->prompt = NULL;
    }
    return rc;
}
