/*  kf_meta_score.c - prompt versions' scores and the meta rounds' schedule
 *  (kf_meta_score.h has the formulas and why).
 */
#include "kf_meta_score.h"
#include <math.h>

double
kf_meta_score (bool has_mean, double mean, int64_t used, int64_t total)
{
    if (used <= 0)
        return INFINITY;   /* untried: nothing is known, so it goes first */
    if (total < used)
        total = used;
    double m = has_mean && isfinite (mean) ? mean : KF_META_PRIOR;
    return m + KF_META_EXPLORE * sqrt (log (1.0 + (double) total) / (double) used);
}

int
kf_meta_interval (int meta_every, int generations)
{
    int quarter = generations > 0 ? (generations + KF_META_SPLIT - 1) / KF_META_SPLIT : 1;
    int every = meta_every > 0 && meta_every < quarter ? meta_every : quarter;
    return every > 0 ? every : 1;
}

bool
kf_meta_due (int round, int64_t finished, int64_t planned, int64_t total, int interval,
             int population)
{
    if (round < 0 || interval <= 0 || population <= 0)
        return false;
    int64_t per_round = (int64_t) interval * population;
    return finished >= (int64_t) (round + 1) * per_round && planned < total;
}
