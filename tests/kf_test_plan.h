/*  kf_test_plan.h - the plan of one slot for the round tests of the
 *  planner (test_plan_round20.c, test_plan_round21.c): slot 0 of a
 *  generation of 3 whose order starts at IDEA, from ELITES[0], with one
 *  per-elite flag of the pool's knowledge set as the test says; and
 *  where in a list of ideas the one about a feature is.
 */
#ifndef KF_TEST_PLAN_H
#define KF_TEST_PLAN_H

#include "../coordinator/kf_prompt_class.h"
#include "../coordinator/kf_search_idea.h"
#include <stdbool.h>
#include <string.h>

/* The index of the first of IDEAS (N) about feature F, or N. */
static inline size_t
kf_test_plan_index (const char *const *ideas, size_t n, kf_idea_feature_t f)
{
    for (size_t i = 0; i < n; i++)
        if (kf_prompt_idea_feature (ideas[i]) == f)
            return i;
    return n;
}

/* Which flag of kf_search_idea_known_t FLAGS sets. */
typedef enum { KF_TEST_PLAN_SCALAR, KF_TEST_PLAN_ARITH } kf_test_plan_flag_t;

/* The idea slot 0 takes (kf_search_idea_fit_known), *PICK the elite it
 * moves to or -1; FLAGS (N_ELITES of them, at most 8; NULL: none known,
 * the plan before the rule) set as WHICH says, ELITES[0] the chosen. */
static inline size_t
kf_test_plan (const char *const *ideas, size_t n, size_t idea, const kf_elite_t *elites,
              const unsigned *features, size_t n_elites, kf_test_plan_flag_t which,
              const bool *flags, int *pick)
{
    size_t order[16];
    bool aside[16] = { false };
    for (size_t k = 0; k < n && k < 16; k++)
        order[k] = (idea + k) % n;
    kf_search_idea_known_t known = { .chosen_built = -1 };
    bool copy[8] = { false };
    if (flags) {
        memcpy (copy, flags, (n_elites < 8 ? n_elites : 8) * sizeof *copy);
        if (which == KF_TEST_PLAN_SCALAR) {
            known.scalar = copy;
            known.chosen_scalar = copy[0];
        }
        else {
            known.arith = copy;
            known.chosen_arith = copy[0];
        }
    }
    return kf_search_idea_fit_known (ideas, n, order, aside, 3, 0, elites, features, n_elites,
                                     -1, &elites[0], features[0], &known, pick);
}

#endif
