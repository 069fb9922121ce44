/*  kf_gradient.h - gradients over the descriptor space, estimated from the
 *  run's parent->child transitions, and what the search does with them.
 *
 *  Per dimension d (memory, algorithm, synchronisation), over the most
 *  recent transitions whose child is correct, each weighted by recency
 *  (decay^age):
 *
 *    fitness gradient   F_d = sum w*df*sign(child_d - parent_d) / sum w
 *                       (the paper's estimator, section 3.3), reported
 *                       raw and normalised by the mean |df| to [-1, 1];
 *    improvement rate   R_d = P(improved | moved up in d)
 *                           - P(improved | moved down in d),
 *                       each with a +1/+2 (Laplace) prior;
 *    exploration        E_d = P(new cell | moved up in d)
 *                           - P(new cell | moved down in d), same prior.
 *
 *  Their mean G_d = (F_d/|df| + R_d + E_d) / 3 in [-1, 1] says which way
 *  along d correct children have done better. Whether a move works at all
 *  is estimated apart from that: the risk of moving up (down) in d is the
 *  share of the children that did so and failed (did not compile, gave
 *  wrong results, crashed or timed out), with the same prior, so a
 *  direction that pays when it works but mostly breaks the kernel says
 *  both instead of averaging them away. G becomes a sampling weight per
 *  archive cell (curiosity selection: room to move along positive G,
 *  the cell's own record of improving children, fewer children tried)
 *  and natural-language mutation hints for the next prompt. Pure
 *  functions; docs/search.md has the formulas with their reasons.
 */
#ifndef KF_GRADIENT_H
#define KF_GRADIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_GRADIENT_DIMS 3

/* A child of at least this fitness is correct (docs/search.md: a correct
 * kernel with a positive speedup scores above 0.5, anything else 0.1 or
 * 0); below it, the move failed. */
#define KF_GRADIENT_CORRECT 0.5

/* A record of moves whose children's speedups are within this share of
 * their parents' (geometric mean) is quoted as no record: the timing
 * noise of one kernel's two figures is of this order (kf_lineage.h's
 * KF_LINEAGE_SAME_BAND is the least band). */
#define KF_GRADIENT_SAME 0.03

/* One parent->child move, oldest first in the arrays below. */
typedef struct {
    int parent[KF_GRADIENT_DIMS];   /* levels 0..3 */
    int child[KF_GRADIENT_DIMS];
    double parent_fitness;
    double child_fitness;
    bool novel;                     /* the child's coordinates were new to the run */
    int64_t parent_id;              /* the parent candidate, 0: not known */
} kf_transition_t;

typedef struct {
    double fitness[KF_GRADIENT_DIMS];     /* F_d, raw */
    double fitness_n[KF_GRADIENT_DIMS];   /* F_d / mean |df| */
    double rate[KF_GRADIENT_DIMS];        /* R_d */
    double explore[KF_GRADIENT_DIMS];     /* E_d */
    double combined[KF_GRADIENT_DIMS];    /* G_d */
    int moves[KF_GRADIENT_DIMS];          /* correct children that changed level d */
    /* Failure apart from gain: [d][0] moving up in d, [d][1] moving down. */
    int tries[KF_GRADIENT_DIMS][2];       /* children, correct or not */
    int failures[KF_GRADIENT_DIMS][2];    /* of them, children that failed */
    double risk[KF_GRADIENT_DIMS][2];     /* weighted failure rate, +1/+2 prior */
    size_t n;                             /* transitions seen */
    size_t correct;                       /* of them, with a correct child (used
                                             for F, R, E) */
    double band;                          /* the timing noise the estimate was told
                                             (kf_gradient_estimate_within); 0: none */
} kf_gradient_t;

/* Estimates from the N transitions T (oldest first); DECAY in (0, 1]
 * weighs a transition AGE places from the newest by DECAY^AGE. F, R and E
 * read the transitions with a correct child only; the risks read all. */
void kf_gradient_estimate (const kf_transition_t *t, size_t n, double decay,
                           kf_gradient_t *out);

/* The same, where a correct child whose speedup is within BAND of its
 * parent's (kf_lineage_verdict: "within noise") counts as neither better
 * nor worse: its change adds nothing to F, and R, the curiosity weight
 * (kf_gradient_weight) and the hints' records (kf_gradient_hints) count
 * it as no improvement and no loss, as its prompt line says. BAND is
 * kept in OUT->band for those. Round 16: a child its parent outran 1.20
 * times, where one kernel's two timings came up to 24% apart, counted
 * as a loss. */
void kf_gradient_estimate_within (const kf_transition_t *t, size_t n, double decay,
                                  double band, kf_gradient_t *out);

/* The curiosity weight (> 0) of an elite at COORDS: how promising the
 * gradients and the cell's own children say it is to mutate it. */
double kf_gradient_weight (const kf_gradient_t *g, const kf_transition_t *t, size_t n,
                           double decay, const int coords[KF_GRADIENT_DIMS]);

/* Mutation hints for a child of PARENT_ID (0: not known) at PARENT (levels), one sentence
 * a line, at most MAX_HINTS; a level move counts only once MIN_MOVES
 * correct children made it, and each hint says how often the move failed
 * ("risk: 1 of 5 attempts failed ..."); a move that failed in most of at
 * least MIN_MOVES attempts is a hint of its own. NULL when the transitions
 * support no hint. The hints say what the code does in plain words
 * (no level names of the descriptor's), a GPU's words or, when HOST,
 * a CPU's. Where the parent's own correct children made the move the
 * strongest gradient asks for and none measured better than it, that
 * hint says so (round 10: "more elaborate memory access has done better"
 * beside the parent's two children that had done it and lost). Caller
 * frees. */
char *kf_gradient_hints (const kf_gradient_t *g, const kf_transition_t *t, size_t n,
                         int64_t parent_id, const int parent[KF_GRADIENT_DIMS],
                         int max_hints, int min_moves, bool host);

#endif
