/*  kf_search_idea_later.c - the ideas the plan would hand a generation's
 *  later attempts (kf_search_idea_later, kf_search_idea.h), so that each
 *  prompt of a generation names the same siblings.
 *
 *  Round 17 of the model in the loop: an attempt's prompt named a later
 *  sibling by that slot's place in the order of ideas, while the plan
 *  moves the ideas in flight (this attempt's own among them) to the back
 *  of that order before it fills the later slot. Attempt 1 of generation
 *  0 named "explicit SIMD intrinsics" and "use every core" as its
 *  siblings; attempt 2 was handed threads and attempt 3 streaming
 *  stores, and no attempt got SIMD. The plan for each later slot is run
 *  here as that slot's own plan will be run, from the same kernel, with
 *  this attempt's idea in flight and each slot's predicted idea after.
 */
#include "kf_search_idea.h"
#include "kf_json.h"
#include "kf_prompt_class.h"
#include <stdlib.h>
#include <string.h>

//  IDX (from PARENT_ID, whose features are OWN where KNOWN_OWN) in
//  flight and taken by a sibling of the generation, as
//  kf_search_idea_known_read counts a planned sibling's row.
static void
s_take (kf_search_idea_known_t *k, const char *const *ideas, size_t idx, int64_t parent_id,
        unsigned own, bool known_own)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (ideas[idx]);
    bool made = known_own && f != KF_IDEA_OTHER;
    k->pending[idx]++;
    k->siblings[k->n_siblings++] = (kf_search_idea_sibling_t) {
        .parent_id = parent_id, .idea = idx, .made = made ? own | 1u << f : 0,
        .made_known = made };
}

json_t *
kf_search_idea_later (const char *const *ideas, size_t count, size_t start, const bool *aside,
                      const kf_search_idea_known_t *known, int population, int slot,
                      size_t idx, int with, int pick, const kf_elite_t *elites,
                      const unsigned *features, size_t n, int island, const kf_elite_t *chosen,
                      unsigned own)
{
    json_t *later = json_array ();
    size_t cap = known->n_siblings + 2 * (size_t) (population > 0 ? population : 0) + 2;
    kf_search_idea_known_t k = *known;
    k.pending = calloc (count + 1, sizeof *k.pending);
    k.siblings = calloc (cap, sizeof *k.siblings);
    bool *back = calloc (2 * count + 2, sizeof *back), *held = back ? back + count + 1 : NULL;
    size_t *order = calloc (count + 1, sizeof *order);
    if (!later || !k.pending || !k.siblings || !back || !order) {
        json_decref (later);
        later = NULL;
    }
    for (size_t i = 0; later && known->pending && i < count; i++)
        k.pending[i] = known->pending[i];
    if (later && known->n_siblings)
        memcpy (k.siblings, known->siblings, known->n_siblings * sizeof *k.siblings);
    //  This attempt's idea, and the one paired with it, from the kernel
    //  it was handed (PICK's where the plan moved it off CHOSEN).
    int64_t from = chosen ? chosen->candidate_id : 0;
    if (later) {
        int64_t mine = pick >= 0 ? elites[pick].candidate_id : from;
        unsigned its = pick >= 0 ? features[pick] : own;
        s_take (&k, ideas, idx, mine, its, chosen != NULL);
        if (with >= 0)
            s_take (&k, ideas, (size_t) with, mine, its, chosen != NULL);
    }
    for (int s = slot + 1; later && s < population; s++) {
        kf_search_idea_held (count, k.pending, aside, held);
        for (size_t i = 0; i < count; i++)
            back[i] = aside[i] || held[i];
        kf_search_idea_order (count, start, back, order);
        int moved = -1;
        size_t next = kf_search_idea_fit_known (ideas, count, order, back, population, s,
                                                elites, features, n, island, chosen, own, &k,
                                                &moved);
        json_array_append_new (later, json_pack ("{s:i, s:s, s:b}", "slot", s, "idea",
                                                 ideas[next], "moved", moved >= 0));
        s_take (&k, ideas, next, moved >= 0 ? elites[moved].candidate_id : from,
                moved >= 0 ? features[moved] : own, chosen != NULL);
    }
    free (k.pending);
    free (k.siblings);
    free (back);
    free (order);
    return later;
}
