/*  kf_meta_score.c - prompt versions' scores and the meta rounds' schedule
 *  (kf_meta_score.h has the formulas and why).
 */
#include "kf_meta_score.h"
#include <math.h>
#include <stdio.h>

double
kf_meta_value (double fitness, double speedup, double best)
{
    if (!isfinite (fitness))
        return NAN;
    if (fitness < KF_META_CORRECT || !(speedup > 0) || !isfinite (speedup))
        return fitness;
    if (!(best >= speedup))
        best = speedup;
    //  log1p: a kernel at a tenth of the reference still scores above 0.5
    //  (above every failure) and below one at parity.
    return 0.5 + 0.5 * log1p (speedup) / log1p (best);
}

bool
kf_meta_fitness (json_t *kernels, double best, double *mean)
{
    double sum = 0;
    int n = 0;
    size_t i;
    json_t *k;
    json_array_foreach (kernels, i, k) {
        json_t *f = json_array_get (k, 0), *s = json_array_get (k, 1);
        if (!json_is_number (f))
            continue;
        double v = kf_meta_value (json_number_value (f),
                                  json_is_number (s) ? json_number_value (s) : NAN, best);
        if (isfinite (v)) {
            sum += v;
            n++;
        }
    }
    if (n == 0)
        return false;
    *mean = sum / n;
    return true;
}

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
    //  The finish that calls this plans the next candidate in the same
    //  step, before any reply: a round pays only where one more is left.
    return finished >= (int64_t) (round + 1) * per_round && planned + 1 < total;
}

//  "5 kernels written with it: 3 finished, 2 not finished yet" for
//  VERSION ({used, finished}; without finished: "..., finished or not").
static const char *
s_counts (json_t *version, char *buf, size_t size)
{
    json_int_t used = json_integer_value (json_object_get (version, "used"));
    json_t *done = json_object_get (version, "finished");
    int n = snprintf (buf, size, "%lld kernel%s written with it", (long long) used,
                      used == 1 ? "" : "s");
    if (n < 0 || (size_t) n >= size)
        return buf;
    if (json_is_integer (done))
        snprintf (buf + n, size - (size_t) n, ": %lld finished, %lld not finished yet",
                  (long long) json_integer_value (done),
                  (long long) (used - json_integer_value (done)));
    else
        snprintf (buf + n, size - (size_t) n, ", finished or not");
    return buf;
}

json_t *
kf_meta_pick (json_t *versions, int64_t population, char *why, size_t size)
{
    if (why && size)
        *why = 0;
    json_t *pick = NULL;
    size_t i;
    json_t *v;
    int64_t total = 0;
    json_array_foreach (versions, i, v) {
        int64_t used = json_integer_value (json_object_get (v, "used"));
        total += used;
        if (!pick && used < population)
            pick = v;
    }
    if (pick) {
        if (why && size)
            snprintf (why, size, "v%lld is on trial: the newest version, %lld of its first "
                      "%lld kernels written (a new version is tried on a generation's worth "
                      "before versions are compared by score)",
                      (long long) json_integer_value (json_object_get (pick, "number")),
                      (long long) json_integer_value (json_object_get (pick, "used")),
                      (long long) population);
        return pick;
    }
    double top = -INFINITY;
    json_array_foreach (versions, i, v) {
        json_t *fit = json_object_get (v, "fitness");
        double score = kf_meta_score (json_is_number (fit), json_number_value (fit),
                                      json_integer_value (json_object_get (v, "used")), total);
        if (score > top) {
            top = score;
            pick = v;
        }
    }
    if (!pick || !why || !size)
        return pick;
    json_t *fit = json_object_get (pick, "fitness");
    //  "Written" counts every kernel planned with a version, open ones
    //  too; the history's counts are of finished kernels (round 5 read
    //  "5 written" and "3 kernels" of one version as a contradiction;
    //  round 11 still did, so the pending ones are counted apart). The
    //  mean is the "version score", named apart from the archive's
    //  fitness of the kernel prompts (round 11: two formulas, one name).
    char counts[96];
    int n = snprintf (why, size, "v%lld has the highest draw: version score %.3f, the mean "
                      "over its latest finished kernels (%s), plus a bonus for versions used "
                      "less",
                      (long long) json_integer_value (json_object_get (pick, "number")),
                      json_is_number (fit) ? json_number_value (fit) : KF_META_PRIOR,
                      s_counts (pick, counts, sizeof counts));
    //  The newest version passed over, named with its own figures, so a
    //  reader who knows of it knows why it is not the one shown.
    json_t *newer = json_array_get (versions, 0);
    if (newer && newer != pick && n > 0 && (size_t) n < size) {
        json_t *nf = json_object_get (newer, "fitness");
        snprintf (why + n, size - (size_t) n, "; chosen over the newer v%lld (version score "
                  "%.3f; %s)",
                  (long long) json_integer_value (json_object_get (newer, "number")),
                  json_is_number (nf) ? json_number_value (nf) : KF_META_PRIOR,
                  s_counts (newer, counts, sizeof counts));
    }
    return pick;
}

bool
kf_meta_judged (json_t *version)
{
    return json_integer_value (json_object_get (version, "finished")) > 0;
}

bool
kf_meta_waits (int round, int64_t finished, int interval, int population, int64_t pending)
{
    if (pending <= 0 || round < 0 || interval <= 0 || population <= 0)
        return false;
    int64_t due = (int64_t) (round + 1) * interval * population;
    return finished < due + population;
}
