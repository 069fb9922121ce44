/*  kf_meta_score.h - how a run's prompt versions are judged, and when the
 *  meta-prompter is asked again. Pure functions, used by kf_meta.c.
 *
 *  A version's fitness is the mean value of the last KF_META_WINDOW
 *  finished candidates written with it: the best one alone (the paper's
 *  measure) says more of the parent a candidate happened to get than of
 *  the prompt, and ranks versions that produced one lucky kernel among
 *  many failures above steady ones. A kernel's value (kf_meta_value) is
 *  its search fitness when it failed (0 did not compile or run, 0.1
 *  wrong), and when correct at speedup s
 *
 *      0.5 + 0.5 * ln (1 + s) / ln (1 + best)
 *
 *  best the run's best speedup so far: 1 for the best kernel, and the
 *  same ratio of speedups costs the same at any scale. The search's own
 *  fitness, 0.5 + 0.5 s / (1 + s), is 0.981 at 25x and 0.992 at 60x:
 *  round 6 of issue 15 compared versions on that 0.01, less than the
 *  timing noise of one kernel and far less than the exploration bonus.
 *  A version is drawn by its mean plus an exploration bonus that
 *  shrinks as it is used (UCB1):
 *
 *      score = mean + KF_META_EXPLORE * sqrt (ln (1 + N) / n)
 *
 *  n the candidates written with it so far (open ones included, so the
 *  candidates planned in one pass spread), N those of every version in
 *  the archive. A version none of whose candidates has finished counts
 *  at KF_META_PRIOR.
 *
 *  Meta rounds come every `meta_every` generations' worth of finished
 *  candidates, but never less often than every quarter of the run
 *  (rounded up): the paper's 10 in a run of 40 generations, and at least
 *  one round in any run of two generations or more.
 */
#ifndef KF_META_SCORE_H
#define KF_META_SCORE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_META_WINDOW 16      /* finished candidates a version's fitness is the mean of */
#define KF_META_EXPLORE 0.2    /* weight of the exploration bonus, in fitness units */
#define KF_META_PRIOR 0.5      /* the mean of a version with nothing finished yet */
#define KF_META_SPLIT 4        /* a round at least every 1/KF_META_SPLIT of the run */

/* A finished kernel's value to the version it was written with: FITNESS
 * (kf_search_fitness) when below KF_META_CORRECT or SPEEDUP is not
 * positive (a failure keeps its weight), else 0.5 + 0.5 ln (1 + SPEEDUP)
 * / ln (1 + BEST), BEST the run's best speedup (taken as SPEEDUP when
 * lower). NAN for a FITNESS that is not a number (not counted). */
#define KF_META_CORRECT 0.5    /* the least search fitness of a correct kernel */
double kf_meta_value (double fitness, double speedup, double best);

/* The fitness of a version from KERNELS, its latest finished ones, as
 * [[fitness, speedup], ...] (either null where unknown), BEST the run's
 * best speedup: the mean kf_meta_value of those with a fitness. False
 * (and *MEAN untouched) when none has one. */
bool kf_meta_fitness (json_t *kernels, double best, double *mean);

/* The score of a version whose last finished candidates have mean
 * fitness MEAN (HAS_MEAN false: none finished yet), USED candidates
 * written with it, TOTAL written with any version of the archive. A
 * version not used yet scores above any that was. */
double kf_meta_score (bool has_mean, double mean, int64_t used, int64_t total);

/* Generations between meta rounds for a run of GENERATIONS whose setting
 * is META_EVERY: the smaller of META_EVERY and GENERATIONS / KF_META_SPLIT
 * rounded up (at least 1). */
int kf_meta_interval (int meta_every, int generations);

/* Whether meta round ROUND (0 for the first) is due now that FINISHED
 * candidates have finished, PLANNED of the main search's TOTAL are
 * planned, with INTERVAL generations of POPULATION between rounds: enough
 * have finished, and some of the main search is still to be written with
 * what it proposes: more than the one candidate the same finish plans
 * at once (a 3 x 2 run's round came after its last kernel was planned,
 * and no kernel used its version). (One round at a time is the caller's
 * rule.) */
bool kf_meta_due (int round, int64_t finished, int64_t planned, int64_t total, int interval,
                  int population);

/* Whether a round that is due (kf_meta_due) waits for PENDING full-
 * protocol timings of the run (candidates whose screen asked for one):
 * while fewer than POPULATION candidates have finished past the point it
 * became due (ROUND, FINISHED, INTERVAL as there). Round 14: a round
 * queued as a kernel's screen came in showed it at the screen's 2.32 ms,
 * its full protocol said 2.21 ms a little later, and a strategy quoted
 * the screen figure. The wait is bounded so that a run whose kernels keep
 * asking for the full protocol still gets its rounds. */
bool kf_meta_waits (int round, int64_t finished, int interval, int population,
                    int64_t pending);

/* The version new kernels are written with now, from VERSIONS (the
 * run's archive, newest first: {id, number, fitness (absent or null
 * while none finished), used}), POPULATION a generation's size: the
 * newest with fewer than POPULATION kernels (its fair trial), else the
 * highest kf_meta_score (the newest of equals). Borrowed; NULL when
 * VERSIONS is empty. WHY (SIZE bytes) gets the reason in words, naming
 * a newer version passed over and why ("v1 has the highest draw: version
 * score ...; chosen over the newer v2 (version score ...)"), with the
 * kernels written with each, finished and not (FINISHED where the
 * entries have it). The meta round edits this same
 * version, so accepted edits are never lost by branching from an older
 * one (issue 15, round 4: v2's edits were dropped by a round that
 * edited v1). */
json_t *kf_meta_pick (json_t *versions, int64_t population, char *why, size_t size);

/* Whether a meta round may edit VERSION (as kf_meta_pick's, with
 * `finished`: its kernels that have finished): at least one has. Round 7
 * of issue 15 made v3 from v2 before any kernel written with v2 had
 * finished, so v2's edits were replaced without a verdict and the
 * meta-prompter was shown outcomes of v1 only. The round waits for one
 * (every candidate finishes, failed or not) rather than edit the older
 * judged version, which would drop v2's accepted edits (round 4). */
bool kf_meta_judged (json_t *version);
#endif
