/*  kf_gradient.c - descriptor-space gradients from parent->child
 *  transitions, turned into curiosity weights and mutation hints.
 *
 *  The estimates are deliberately simple and bounded: a handful of
 *  transitions must not swing selection to one cell for good, so every
 *  rate carries a Laplace prior and every component is scaled to [-1, 1]
 *  before they are averaged. Hints quote plain counts ("3 of 4 moves")
 *  because a model can weigh a count; it cannot weigh an unexplained
 *  score.
 */
#include "kf_gradient.h"
#include "kf_descriptor.h"
#include "kf_lineage.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_LEVELS KF_DESCRIPTOR_LEVELS

/* The words of a hint. The descriptor's level names ("global
 * coordination", "shared/local tiling") are a glossary of ours; a hint
 * says instead what the code does, in the words a kernel engineer of the
 * target would use, so it reads without docs/descriptors.md. Index 0 is a
 * GPU target, 1 the host, whose levels mean other things (SIMD width,
 * cache blocking, threads: analysis/kf_descriptor.c). */
static const char *s_dim_names[2][KF_GRADIENT_DIMS] = {
    { "memory access", "algorithm", "cooperation between threads" },
    { "memory access", "algorithm", "threading" },
};

/* What the code at each level does, for "from ... to ..." (the move
 * hints). */
static const char *s_plain[2][KF_GRADIENT_DIMS][S_LEVELS] = {
    { { "plain loads and stores of one element each",
        "coalesced or vectorised loads and stores",
        "tiles staged in shared/local memory",
        "register tiles over shared-memory tiles" },
      { "a direct translation of the reference",
        "the operations fused into one pass",
        "a reformulated algorithm (online or single-pass statistics)",
        "a different algorithm or matrix hardware (tensor cores, matrix engines)" },
      { "threads that never wait for each other",
        "threads of a block meeting at barriers",
        "warp or sub-group shuffles and reductions",
        "atomics or several launches combining partial results across blocks" } },
    { { "scalar loads and stores, one element at a time",
        "SIMD-vectorised loads and stores over contiguous data",
        "loops blocked so each block of data is reused while it is in cache",
        "register blocks inside cache blocks" },
      { "a direct translation of the reference",
        "the operations fused into one pass",
        "a reformulated algorithm (online or single-pass statistics)",
        "a different algorithm or FMA micro-kernels (AMX or VNNI where present)" },
      { "a single thread",
        "several threads, each on its own share of the work, started and joined",
        "threads that cooperate (barriers, condition variables) or take work as it "
        "comes (an atomic counter handing out blocks, dynamic schedules)",
        "threads that update shared data with atomics, locks or critical sections" } },
};

/* What reaching each level of each dimension means in practice, for the
 * hint that points along a gradient (level 0 is never a target up). */
static const char *s_advice[2][KF_GRADIENT_DIMS][S_LEVELS] = {
    { { "plain element-wise loads and stores",
        "coalesced or vectorised loads and stores (wide types, aligned, contiguous accesses)",
        "tiling through shared/local memory so each value is read from global memory once",
        "a multi-level hierarchy: register tiles over shared tiles, double buffering or "
        "asynchronous copies" },
      { "a direct translation of the reference",
        "fusing the operations into a single pass over the data",
        "a reformulated algorithm (the same result by another route: an identity, fewer "
        "passes over the data, another order of the operations)",
        "an asymptotically better or hardware-specific algorithm (tensor cores, matrix engines)" },
      { "no synchronisation at all (each thread independent)",
        "block/work-group barriers so threads cooperate through shared memory",
        "warp/sub-group primitives (shuffles, sub-group reductions) in place of barriers",
        "global coordination (atomics or several launches) to spread one row over many blocks" } },
    { { "scalar loads and stores",
        "SIMD-vectorised loads and stores over contiguous, aligned data",
        "cache blocking, so each block of data is reused while it is in cache",
        "register blocks inside cache blocks, with prefetching" },
      { "a direct translation of the reference",
        "fusing the operations into a single pass over the data",
        "a reformulated algorithm (the same result by another route: an identity, fewer "
        "passes over the data, another order of the operations)",
        "an asymptotically better algorithm or FMA micro-kernels (AMX or VNNI where present)" },
      { "a single thread",
        "splitting the work over several threads, each on its own share, started and "
        "joined within the call",
        "threads that cooperate (barriers, condition variables) or take work as it "
        "comes (an atomic counter handing out blocks, dynamic schedules)",
        "threads that update shared data with atomics, locks or critical sections" } },
};

static double
s_sign (int x)
{
    return x > 0 ? 1.0 : x < 0 ? -1.0 : 0.0;
}

static double
s_weight (size_t i, size_t n, double decay)
{
    return pow (decay, (double) (n - 1 - i));
}

static bool
s_failed (const kf_transition_t *t)
{
    return !(t->child_fitness >= KF_GRADIENT_CORRECT);
}

static double s_speedup (double fitness);

/* How T's child compares with its parent: 1 better, -1 worse, 0 within
 * BAND (kf_lineage_verdict) or the same fitness; by the fitness alone
 * where BAND is 0 or a speedup cannot be read back. */
static int
s_told (const kf_transition_t *t, double band)
{
    double sc = s_speedup (t->child_fitness), sp = s_speedup (t->parent_fitness);
    if (band > 0 && sc > 0 && sp > 0) {
        int v = kf_lineage_verdict (sc, sp, band);
        return v == 2 ? 0 : v;
    }
    double df = t->child_fitness - t->parent_fitness;
    return df > 0 ? 1 : df < 0 ? -1 : 0;
}

void
kf_gradient_estimate (const kf_transition_t *t, size_t n, double decay,
                      kf_gradient_t *out)
{
    kf_gradient_estimate_within (t, n, decay, 0, out);
}

void
kf_gradient_estimate_within (const kf_transition_t *t, size_t n, double decay, double band,
                             kf_gradient_t *out)
{
    memset (out, 0, sizeof *out);
    out->band = band > 0 ? band : 0;
    for (int d = 0; d < KF_GRADIENT_DIMS; d++)
        out->risk[d][0] = out->risk[d][1] = 0.5;   /* the prior alone */
    if (!t || !n)
        return;
    if (!(decay > 0 && decay <= 1))
        decay = 1;
    out->n = n;
    double wsum = 0, wabs = 0;
    double f[KF_GRADIENT_DIMS] = { 0 };
    /* up/down: weight moved, weight improved, weight novel, weight told
     * (beyond the band, or any with no band) (correct children only);
     * tried/failed: every child that moved */
    double up[KF_GRADIENT_DIMS][4] = { { 0 } }, down[KF_GRADIENT_DIMS][4] = { { 0 } };
    double tried[KF_GRADIENT_DIMS][2] = { { 0 } }, failed[KF_GRADIENT_DIMS][2] = { { 0 } };
    for (size_t i = 0; i < n; i++) {
        double w = s_weight (i, n, decay);
        bool bad = s_failed (&t[i]);
        for (int d = 0; d < KF_GRADIENT_DIMS; d++) {
            int move = t[i].child[d] - t[i].parent[d];
            if (!move)
                continue;
            int dir = move > 0 ? 0 : 1;
            out->tries[d][dir]++;
            tried[d][dir] += w;
            if (bad) {
                out->failures[d][dir]++;
                failed[d][dir] += w;
            }
        }
        /* A child that failed says nothing of which way is faster: its
         * fitness (0 or 0.1) measures the breakage, not the direction. */
        if (bad)
            continue;
        out->correct++;
        int told = s_told (&t[i], out->band);
        double df = told ? t[i].child_fitness - t[i].parent_fitness : 0;
        wsum += w;
        wabs += w * fabs (df);
        for (int d = 0; d < KF_GRADIENT_DIMS; d++) {
            int move = t[i].child[d] - t[i].parent[d];
            f[d] += w * df * s_sign (move);
            if (!move)
                continue;
            out->moves[d]++;
            double *acc = move > 0 ? up[d] : down[d];
            acc[0] += w;
            acc[1] += told > 0 ? w : 0;
            acc[2] += t[i].novel ? w : 0;
            acc[3] += told || out->band == 0 ? w : 0;
        }
    }
    for (int d = 0; d < KF_GRADIENT_DIMS; d++) {
        out->fitness[d] = wsum > 0 ? f[d] / wsum : 0;
        out->fitness_n[d] = wabs > 0 ? f[d] / wabs : 0;
        out->rate[d] = (up[d][1] + 1) / (up[d][3] + 2) - (down[d][1] + 1) / (down[d][3] + 2);
        out->explore[d] = (up[d][2] + 1) / (up[d][0] + 2) - (down[d][2] + 1) / (down[d][0] + 2);
        out->combined[d] = (out->fitness_n[d] + out->rate[d] + out->explore[d]) / 3;
        for (int dir = 0; dir < 2; dir++)
            out->risk[d][dir] = (failed[d][dir] + 1) / (tried[d][dir] + 2);
    }
}

static bool
s_same (const int a[KF_GRADIENT_DIMS], const int b[KF_GRADIENT_DIMS])
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

double
kf_gradient_weight (const kf_gradient_t *g, const kf_transition_t *t, size_t n,
                    double decay, const int coords[KF_GRADIENT_DIMS])
{
    if (!(decay > 0 && decay <= 1))
        decay = 1;
    double children = 0, improved = 0;
    for (size_t i = 0; t && i < n; i++)
        if (s_same (t[i].parent, coords)) {
            double w = s_weight (i, n, decay);
            double band = g ? g->band : 0;
            int told = s_told (&t[i], band);
            children += told || band == 0 ? w : 0;
            improved += told > 0 ? w : 0;
        }
    /* The cell's own record, and a smaller bonus for cells rarely tried
     * (it must not outweigh a record of improving children). */
    double weight = (improved + 1) / (children + 2) + 0.5 / sqrt (1 + children);
    /* Room to move the way children have done better. */
    for (int d = 0; g && d < KF_GRADIENT_DIMS; d++) {
        double gd = g->combined[d];
        if (gd > 0 && coords[d] < S_LEVELS - 1)
            weight += gd;
        else if (gd < 0 && coords[d] > 0)
            weight += -gd;
    }
    return weight;
}

typedef struct {
    int dim, from, to;
    int n, improved, worse;  /* correct children; the rest were within noise */
    int tries, failed;       /* every child that made the move */
    double sum_df;
    double sum_log;          /* log of child/parent speedup, over n_ratio */
    int n_ratio;
    double score;
    bool folded;             /* quoted inside the gradient's hint already */
} s_group_t;

static int
s_group_cmp (const void *a, const void *b)
{
    const s_group_t *x = a, *y = b;
    if (x->score != y->score)
        return x->score > y->score ? -1 : 1;
    if (x->dim != y->dim)
        return x->dim - y->dim;
    if (x->from != y->from)
        return x->from - y->from;
    return x->to - y->to;
}

/* "risk: 1 of 5 attempts failed (...)": the failures quoted as counts,
 * like every figure in a hint; a direction the gradient points in only
 * because the opposite one did badly has no attempts to quote. */
static void
s_risk (FILE *f, int failed, int tries)
{
    if (tries == 0)
        fprintf (f, "risk: unknown, no child has gone this way yet");
    else if (failed)
        fprintf (f, "risk: %d of %d attempts failed (did not compile, gave wrong results, "
                    "crashed or timed out)", failed, tries);
    else
        fprintf (f, "risk: none of %d attempts failed", tries);
}

/* The speedup behind a correct fitness (docs/search.md: 0.5 + 0.5 s/(1 +
 * s)), or 0 where it cannot be read back. */
static double
s_speedup (double fitness)
{
    if (!(fitness > KF_GRADIENT_CORRECT) || !(fitness < 0.9999))
        return 0;
    return (2 * fitness - 1) / (2 - 2 * fitness);
}

/* Whether group GR has a record of correct children that is not a tie
 * (what a "raised the speedup in X of N moves" line quotes). Round 14:
 * "raised fitness in 2 of 2 moves (mean change +0.001)" was quoted as a
 * hint of strength 0.41: near 80x, fitness hardly moves whatever the
 * kernels do, and two moves within the timing noise counted as wins. A
 * record whose children's speedups are, on geometric mean, within
 * KF_GRADIENT_SAME of their parents' is a tie too. */
static bool
s_record (const s_group_t *gr, int min_moves)
{
    return gr && gr->n >= min_moves && gr->improved != gr->worse
           && (!gr->n_ratio || fabs (gr->sum_log / gr->n_ratio) > log1p (KF_GRADIENT_SAME));
}

/* The level moves worth quoting into GROUPS (KF_GRADIENT_DIMS * S_LEVELS
 * * S_LEVELS of them), strongest first; returns how many. A move is
 * quoted once MIN_MOVES correct children made it (did it pay?) or once
 * MIN_MOVES attempts at it failed, most of them (is it a trap?); the
 * parent's own level comes first: what happened when others made the
 * move it could make. */
static size_t
s_groups (const kf_transition_t *t, size_t n, const int parent[KF_GRADIENT_DIMS],
          int min_moves, double band, s_group_t *groups)
{
    memset (groups, 0, sizeof (s_group_t) * KF_GRADIENT_DIMS * S_LEVELS * S_LEVELS);
    size_t ng = 0;
    for (int d = 0; d < KF_GRADIENT_DIMS; d++)
        for (int a = 0; a < S_LEVELS; a++)
            for (int b = 0; b < S_LEVELS; b++) {
                if (a == b)
                    continue;
                s_group_t *gr = &groups[ng];
                memset (gr, 0, sizeof *gr);
                gr->dim = d;
                gr->from = a;
                gr->to = b;
                for (size_t i = 0; i < n; i++)
                    if (t[i].parent[d] == a && t[i].child[d] == b) {
                        gr->tries++;
                        if (s_failed (&t[i])) {
                            gr->failed++;
                            continue;
                        }
                        double df = t[i].child_fitness - t[i].parent_fitness;
                        gr->n++;
                        int told = s_told (&t[i], band);
                        gr->improved += told > 0;
                        gr->worse += told < 0;
                        gr->sum_df += df;
                        double sc = s_speedup (t[i].child_fitness);
                        double sp = s_speedup (t[i].parent_fitness);
                        if (sc > 0 && sp > 0) {
                            gr->sum_log += log (sc / sp);
                            gr->n_ratio++;
                        }
                    }
                double own = a == parent[d] ? 2.0 : 1.0;
                bool record = s_record (gr, min_moves);
                bool trap = gr->failed >= min_moves && 2 * gr->failed > gr->tries;
                if (!record && !trap)
                    continue;
                double score = 0;
                if (record)
                    score = fabs ((double) (gr->improved - gr->worse) / (2.0 * gr->n))
                            * sqrt ((double) gr->n);
                if (trap) {
                    double s = ((double) gr->failed / gr->tries - 0.5) * sqrt ((double) gr->tries);
                    score = s > score ? s : score;
                }
                gr->score = score * own;
                ng++;
            }
    qsort (groups, ng, sizeof groups[0], s_group_cmp);
    return ng;
}

/* What GR's correct children did to the speedup, in words: "speedups
 * 1.35x their parents' on geometric mean", or the mean fitness change
 * where no speedup can be read back. */
static const char *
s_change (const s_group_t *gr, char *buf, size_t size)
{
    if (gr->n_ratio)
        snprintf (buf, size, "the children's speedups %.2fx their parents' on geometric mean",
                  exp (gr->sum_log / gr->n_ratio));
    else
        snprintf (buf, size, "mean change %+.3f", gr->n ? gr->sum_df / gr->n : 0);
    return buf;
}

/* The quoted group of the move from level FROM to TO of DIM, or NULL. */
static s_group_t *
s_find (s_group_t *groups, size_t ng, int dim, int from, int to)
{
    for (size_t i = 0; i < ng; i++)
        if (groups[i].dim == dim && groups[i].from == from && groups[i].to == to)
            return &groups[i];
    return NULL;
}

/* Round 13: whether a record of dimension DIM that the lines below quote
 * points against the gradient's direction (UP: more elaborate), from any
 * level to any other: a step that way that mostly did not pay, or a step
 * the other way that mostly did ("consider scalar loads and stores" over
 * "going from scalar access to SIMD-vectorised raised fitness in 2 of 2
 * moves", when the parent's level was neither end of that record). */
static bool
s_against (const s_group_t *groups, size_t ng, int dim, bool up, int min_moves)
{
    for (size_t i = 0; i < ng; i++) {
        const s_group_t *gr = &groups[i];
        if (gr->dim != dim || !s_record (gr, min_moves))
            continue;
        bool along = (gr->to > gr->from) == up, paid = gr->improved > gr->worse;
        if (along != paid)
            return true;
    }
    return false;
}

char *
kf_gradient_hints (const kf_gradient_t *g, const kf_transition_t *t, size_t n,
                   int64_t parent_id, const int parent[KF_GRADIENT_DIMS], int max_hints,
                   int min_moves, bool host)
{
    int w = host ? 1 : 0;
    if (!g || !t || !n || max_hints <= 0)
        return NULL;
    if (min_moves < 1)
        min_moves = 1;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    int hints = 0;
    s_group_t groups[KF_GRADIENT_DIMS * S_LEVELS * S_LEVELS];
    size_t ng = s_groups (t, n, parent, min_moves, g->band, groups);

    /* 1. Along the strongest gradient the parent can still follow, with
     *    how often children that went that way broke. */
    int best = -1;
    double best_abs = 0.1;   /* below this the signal is noise */
    for (int d = 0; d < KF_GRADIENT_DIMS; d++) {
        double gd = g->combined[d];
        bool room = gd > 0 ? parent[d] < S_LEVELS - 1 : parent[d] > 0;
        if (g->moves[d] >= min_moves && room && fabs (gd) > best_abs) {
            best = d;
            best_abs = fabs (gd);
        }
    }
    /* Round 11: the gradient's hint and a move's record must not say
     * opposite things in consecutive lines. The gradient sums every
     * level of a dimension; the record of the very step it advises (the
     * parent's level to the next) is the more specific evidence, so
     * where that step mostly did not pay, or the step back from the
     * target to the parent's level mostly did, the gradient's hint is
     * left out and the record speaks. Round 13: so it is where any
     * record of that dimension, between any two levels, points the
     * other way (s_against). */
    s_group_t *back = NULL;
    if (best >= 0) {
        int target = g->combined[best] > 0 ? parent[best] + 1 : parent[best] - 1;
        back = s_find (groups, ng, best, target, parent[best]);
        if (s_against (groups, ng, best, g->combined[best] > 0, min_moves))
            best = -1;
        if (!s_record (back, min_moves))
            back = NULL;
    }
    if (best >= 0) {
        double gd = g->combined[best];
        int target = gd > 0 ? parent[best] + 1 : parent[best] - 1;
        int dir = gd > 0 ? 0 : 1;
        const char *way = gd > 0 ? "more elaborate" : "simpler";
        const char *other = gd > 0 ? "simpler" : "more elaborate";
        /* Say what was seen: the gradient leans one way when children
         * that went that way did better, or when those that went the
         * other way did worse; only the first is "done better". The
         * strength is the gradient's size, 0 (no lean) to 1. */
        if (g->tries[best][dir] > 0)
            fprintf (f, "- Children that made their %s %s have done better so far "
                        "(strength %.2f on a scale of 0 to 1, over %d moves; ",
                     s_dim_names[w][best], way, fabs (gd), g->moves[best]);
        else
            fprintf (f, "- Children that made their %s %s have done worse so far, and none "
                        "has made it %s yet (strength %.2f on a scale of 0 to 1, over %d "
                        "moves; ",
                     s_dim_names[w][best], other, way, fabs (gd), g->moves[best]);
        s_risk (f, g->failures[best][dir], g->tries[best][dir]);
        fprintf (f, "): consider %s, one step %s than the parent's",
                 s_advice[w][best][target], way);
        /* The parent's own children that went that way, correct ones. */
        int own = 0, own_better = 0;
        for (size_t i = 0; parent_id && i < n; i++)
            if (t[i].parent_id == parent_id && !s_failed (&t[i])
                && (gd > 0 ? t[i].child[best] > t[i].parent[best]
                           : t[i].child[best] < t[i].parent[best])) {
                own++;
                own_better += t[i].child_fitness > t[i].parent_fitness;
            }
        if (own && !own_better)
            fprintf (f, "; but %s of this parent's own children that made that move "
                        "measured better than the parent, so if you take this step, take it "
                        "another way than %s",
                     own == 1 ? "the one" : own == 2 ? "neither" : "none",
                     own == 1 ? "that child did" : "they did");
        /* The opposite step, from the target to the parent's level,
         * which mostly lost: it agrees, but on a line of its own ("Going
         * from register blocks inside cache blocks to loops blocked ...
         * only 0 of 2") it read as a verdict on the step advised here. */
        if (back) {
            char change[120];
            fprintf (f, "; this agrees with the record of the opposite step, from %s to %s, "
                        "which raised fitness in only %d of %d moves (%s)",
                     s_plain[w][best][target], s_plain[w][best][parent[best]], back->improved,
                     back->n, s_change (back, change, sizeof change));
            back->folded = true;
        }
        fputs (".\n", f);
        hints++;
    }

    for (size_t i = 0; i < ng && hints < max_hints; i++) {
        const s_group_t *gr = &groups[i];
        if (gr->folded)
            continue;
        const char *from = s_plain[w][gr->dim][gr->from];
        const char *to = s_plain[w][gr->dim][gr->to];
        if (s_record (gr, min_moves)) {
            bool good = gr->improved > gr->worse;
            char change[120], ties[64] = "";
            int even = gr->n - gr->improved - gr->worse;
            if (even > 0)
                snprintf (ties, sizeof ties, ", %d within the timing noise", even);
            fprintf (f, "- Going from %s to %s (%s) raised fitness in %s%d of %d moves "
                        "(%s%s)%s; ",
                     from, to, s_dim_names[w][gr->dim], good ? "" : "only ", gr->improved, gr->n,
                     s_change (gr, change, sizeof change), ties,
                     good ? "" : "; it has mostly not paid off here");
            s_risk (f, gr->failed, gr->tries);
            fputs (".\n", f);
        }
        else
            fprintf (f, "- Going from %s to %s (%s) failed in %d of %d attempts (did not "
                        "compile, gave wrong results, crashed or timed out): a risky move "
                        "here; if you make it, check it against the pitfalls.\n",
                     from, to, s_dim_names[w][gr->dim], gr->failed, gr->tries);
        hints++;
    }
    fclose (f);
    if (!hints) {
        free (text);
        return NULL;
    }
    return text;
}
