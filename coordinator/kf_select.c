/*  kf_select.c - parent and inspiration selection over a run's archive.
 *
 *  A strategy is drawn first (by the run's ratios), then a parent by that
 *  strategy's weights; each draw is the next number of a splitmix64
 *  stream keyed by (run seed, candidate sequence, stream), so nothing
 *  depends on the order in which candidates happen to finish, only on
 *  which elites the archive holds when the candidate is planned.
 */
#include "kf_select.h"
#include "kf_descriptor.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *s_names[KF_SELECT_N] = { "uniform", "fitness", "curiosity", "island" };

const char *
kf_select_strategy_name (kf_select_strategy_t strategy)
{
    return strategy >= 0 && strategy < KF_SELECT_N ? s_names[strategy] : "?";
}

/* splitmix64's finaliser: a bijection that scatters nearby inputs. */
static uint64_t
s_mix (uint64_t z)
{
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

uint64_t
kf_select_stream (int64_t run_seed, int64_t seq, uint32_t stream)
{
    uint64_t s = s_mix ((uint64_t) run_seed + 0x9e3779b97f4a7c15ULL);
    s = s_mix (s ^ ((uint64_t) seq * 0xd1b54a32d192ed03ULL + 1));
    return s_mix (s ^ ((uint64_t) stream * 0x8cb92ba72f3d8dd7ULL + 2));
}

double
kf_select_next (uint64_t *state)
{
    *state += 0x9e3779b97f4a7c15ULL;
    return (double) (s_mix (*state) >> 11) * 0x1.0p-53;
}

/* The index that U (in [0,1)) falls on when the N WEIGHTS are laid end
 * to end; -1 when no weight is positive. Non-positive and non-finite
 * weights count as zero. */
static int
s_pick (const double *weights, size_t n, double u)
{
    double total = 0;
    for (size_t i = 0; i < n; i++)
        if (weights[i] > 0 && isfinite (weights[i]))
            total += weights[i];
    if (!(total > 0))
        return -1;
    double target = u * total, sum = 0;
    int last = -1;
    for (size_t i = 0; i < n; i++) {
        if (!(weights[i] > 0 && isfinite (weights[i])))
            continue;
        sum += weights[i];
        last = (int) i;
        if (target < sum)
            return (int) i;
    }
    return last;   /* rounding at the very end */
}

/* Better elite first: fitness, then speedup, then the lower index. */
static int
s_better (const kf_elite_t *elites, int a, int b)
{
    if (elites[a].fitness != elites[b].fitness)
        return elites[a].fitness > elites[b].fitness;
    if (elites[a].speedup != elites[b].speedup)
        return elites[a].speedup > elites[b].speedup;
    return a < b;
}

int
kf_select_best (const kf_elite_t *elites, size_t n, int *out, int max)
{
    if (!elites || !out || max <= 0)
        return 0;
    int count = 0;
    /* Insertion into a short sorted list: MAX is small (a population). */
    for (size_t i = 0; i < n; i++) {
        int pos = count < max ? count : max;
        while (pos > 0 && s_better (elites, (int) i, out[pos - 1]))
            pos--;
        if (pos >= max)
            continue;
        int end = count < max ? count : max - 1;
        memmove (out + pos + 1, out + pos, (size_t) (end - pos) * sizeof *out);
        out[pos] = (int) i;
        if (count < max)
            count++;
    }
    return count;
}

/* Inspirations: the best elite of another cell first (what works best
 * elsewhere), then others drawn uniformly without replacement. A parent
 * from an island's archive is left out by its candidate: the grid may
 * hold a better kernel of its cell, found on another island, and that is
 * worth showing. */
static void
s_inspirations (const kf_select_config_t *cfg, size_t n, const kf_elite_t *elites,
                int64_t parent_id, uint64_t *state, kf_selection_t *out)
{
    int want = cfg->inspirations;
    if (want > KF_SELECT_MAX_INSPIRATIONS)
        want = KF_SELECT_MAX_INSPIRATIONS;
    if (want <= 0 || out->parent < 0 || n < 1)
        return;
    int *pool = malloc (n * sizeof *pool);
    if (!pool)
        return;
    size_t m = 0;
    for (size_t i = 0; i < n; i++)
        if (out->from_island ? elites[i].candidate_id != parent_id : (int) i != out->parent)
            pool[m++] = (int) i;
    if (m == 0) {
        free (pool);
        return;
    }
    size_t best = 0;
    for (size_t k = 1; k < m; k++)
        if (s_better (elites, pool[k], pool[best]))
            best = k;
    out->inspirations[out->n_inspirations++] = pool[best];
    pool[best] = pool[--m];
    while (out->n_inspirations < want && m > 0) {
        size_t k = (size_t) (kf_select_next (state) * (double) m);
        if (k >= m)
            k = m - 1;
        out->inspirations[out->n_inspirations++] = pool[k];
        pool[k] = pool[--m];
    }
    free (pool);
}

int
kf_select_in (const kf_select_config_t *cfg, const kf_elite_t *elites, size_t n,
              const kf_elite_t *pool, size_t n_pool, int64_t run_seed, int64_t seq,
              int island, kf_selection_t *out)
{
    if (!cfg || !out || (n && !elites) || (n_pool && !pool))
        return -1;
    memset (out, 0, sizeof *out);
    out->parent = -1;
    out->strategy = KF_SELECT_UNIFORM;
    uint64_t state = kf_select_stream (run_seed, seq, 0);
    /* The strategy draw is made even for an empty archive, so the draws
     * of a candidate do not depend on what the archive held. */
    double ratio[KF_SELECT_N];
    for (int i = 0; i < KF_SELECT_N; i++)
        ratio[i] = cfg->ratio[i] > 0 ? cfg->ratio[i] : 0;
    if (cfg->islands <= 1)
        ratio[KF_SELECT_ISLAND] = 0;
    double u = kf_select_next (&state);
    int strategy = s_pick (ratio, KF_SELECT_N, u);
    out->strategy = strategy < 0 ? KF_SELECT_UNIFORM : (kf_select_strategy_t) strategy;
    out->draw = u;
    double v = kf_select_next (&state);
    if (n == 0)
        return 0;
    /* Below the reference is no parent while the grid has one at parity. */
    double least = kf_select_has_parity (elites, n) ? KF_SELECT_PARITY : -INFINITY;
    int parent = -1;
    if (out->strategy == KF_SELECT_ISLAND) {
        /* The island's own archive, fitness-weighted. */
        double *w = n_pool ? malloc (n_pool * sizeof *w) : NULL;
        if (n_pool && !w)
            return -1;
        for (size_t i = 0; i < n_pool; i++)
            w[i] = island >= 0 && island < KF_SELECT_MAX_ISLANDS
                           && (pool[i].islands >> island & 1u) && !(pool[i].speedup < least)
                       ? pool[i].fitness
                       : 0;
        parent = w ? s_pick (w, n_pool, v) : -1;
        free (w);
        out->from_island = parent >= 0;
    }
    else {
        double *w = malloc (n * sizeof *w);
        if (!w)
            return -1;
        for (size_t i = 0; i < n; i++)
            w[i] = elites[i].speedup < least               ? 0
                   : out->strategy == KF_SELECT_FITNESS   ? elites[i].fitness
                   : out->strategy == KF_SELECT_CURIOSITY ? elites[i].curiosity
                                                          : 1;
        parent = s_pick (w, n, v);
        free (w);
    }
    if (parent < 0) {
        /* Nothing to weigh (an island with no elite yet, no curiosity
         * weights): the same draw picks uniformly among the grid's elites
         * that may be parents (all of them when none is below the floor,
         * so the draw is what it always was). */
        out->fallback = true;
        size_t eligible = 0;
        for (size_t i = 0; i < n; i++)
            eligible += !(elites[i].speedup < least);
        size_t k = (size_t) (v * (double) eligible);
        if (k >= eligible)
            k = eligible - 1;
        for (size_t i = 0; i < n && parent < 0; i++)
            if (!(elites[i].speedup < least) && k-- == 0)
                parent = (int) i;
    }
    out->parent = parent;
    int64_t parent_id = out->from_island ? pool[parent].candidate_id : elites[parent].candidate_id;
    uint64_t istate = kf_select_stream (run_seed, seq, 1);
    s_inspirations (cfg, n, elites, parent_id, &istate, out);
    return 0;
}

bool
kf_select_has_parity (const kf_elite_t *elites, size_t n)
{
    for (size_t i = 0; elites && i < n; i++)
        if (elites[i].speedup >= KF_SELECT_PARITY)
            return true;
    return false;
}

bool
kf_select_hold (const kf_elite_t *elites, size_t n, int generation, int population,
                int64_t judged)
{
    return generation > 0 && population > 0 && !kf_select_has_parity (elites, n)
           && judged * 2 <= population;
}

int
kf_select_near_best (const kf_elite_t *elites, size_t n, double within, int *out, int max)
{
    if (!elites || !out || max <= 0)
        return 0;
    double top = 0;
    for (size_t i = 0; i < n; i++)
        if (elites[i].speedup > top)
            top = elites[i].speedup;
    /* kf_select_best over the elites near the best, indexes mapped back
     * (in the same order, so ties break as they did). */
    kf_elite_t *near = malloc ((n + 1) * sizeof *near);
    int *at = malloc ((n + 1) * sizeof *at);
    int count = 0;
    if (near && at) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++)
            if (!(within > 0) || elites[i].speedup >= within * top) {
                near[m] = elites[i];
                at[m++] = (int) i;
            }
        count = kf_select_best (near, m, out, max);
        for (int k = 0; k < count; k++)
            out[k] = at[out[k]];
    }
    free (near);
    free (at);
    return count;
}

int
kf_select (const kf_select_config_t *cfg, const kf_elite_t *elites, size_t n,
           int64_t run_seed, int64_t seq, int island, kf_selection_t *out)
{
    return kf_select_in (cfg, elites, n, elites, n, run_seed, seq, island, out);
}

/* Cells of the archive: four bins at most per dimension. */
#define S_CELLS (KF_DESCRIPTOR_LEVELS * KF_DESCRIPTOR_LEVELS * KF_DESCRIPTOR_LEVELS)

size_t
kf_select_island_archives (const kf_elite_t *members, size_t n, int bins, int islands,
                           kf_elite_t *out)
{
    if (!members || !out || islands < 1)
        return 0;
    if (islands > KF_SELECT_MAX_ISLANDS)
        islands = KF_SELECT_MAX_ISLANDS;
    size_t count = 0;
    for (int k = 0; k < islands; k++) {
        int best[S_CELLS];
        for (int c = 0; c < S_CELLS; c++)
            best[c] = -1;
        for (size_t i = 0; i < n; i++) {
            if (!(members[i].islands >> k & 1u))
                continue;
            int b[3];
            for (int d = 0; d < 3; d++)
                b[d] = kf_descriptor_bin (members[i].coords[d], bins);
            if (b[0] < 0 || b[1] < 0 || b[2] < 0)
                continue;
            int c = (b[0] * KF_DESCRIPTOR_LEVELS + b[1]) * KF_DESCRIPTOR_LEVELS + b[2];
            /* The grid's rule: a newcomer takes the cell only when it is
             * fitter, or as fit and faster. */
            if (best[c] < 0 || members[i].fitness > members[best[c]].fitness
                || (members[i].fitness == members[best[c]].fitness
                    && members[i].speedup > members[best[c]].speedup))
                best[c] = (int) i;
        }
        for (int c = 0; c < S_CELLS; c++)
            if (best[c] >= 0) {
                out[count] = members[best[c]];
                out[count].island = k;
                out[count].islands = 1u << k;
                count++;
            }
    }
    return count;
}
