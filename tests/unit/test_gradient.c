/*  test_gradient.c - the gradient estimator (coordinator/kf_gradient.c):
 *  signs and magnitudes of the fitness, improvement-rate and exploration
 *  gradients from hand-made transitions, recency weighting, the curiosity
 *  weight of a cell, and mutation hints that quote the real counts; the
 *  gradient read over correct children only, with each move's failures
 *  counted apart and quoted as risk. */
#include "../kf_test.h"
#include "../../coordinator/kf_gradient.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

static kf_transition_t
s_move (int pm, int pa, int ps, int cm, int ca, int cs, double pf, double cf, bool novel)
{
    kf_transition_t t = { { pm, pa, ps }, { cm, ca, cs }, pf, cf, novel, 0 };
    return t;
}

static void
test_empty (void)
{
    kf_gradient_t g;
    kf_gradient_estimate (NULL, 0, 0.9, &g);
    for (int d = 0; d < KF_GRADIENT_DIMS; d++)
        CHECK (g.fitness[d] == 0 && g.rate[d] == 0 && g.explore[d] == 0 && g.combined[d] == 0);
    int parent[3] = { 1, 0, 0 };
    CHECK (kf_gradient_hints (&g, NULL, 0, 0, parent, 3, 2, false) == NULL);
    /* Every cell weighs the same with nothing known, and more than 0. */
    int a[3] = { 0, 0, 0 }, b[3] = { 3, 3, 3 };
    double wa = kf_gradient_weight (&g, NULL, 0, 0.9, a);
    CHECK (wa > 0 && wa == kf_gradient_weight (&g, NULL, 0, 0.9, b));
}

static void
test_memory_up (void)
{
    /* Memory 1 -> 2 raised fitness in 3 of 4 moves; algorithm and sync
     * never moved. */
    kf_transition_t t[4] = {
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.80, true),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.75, false),
        s_move (1, 0, 0, 2, 0, 0, 0.72, 0.70, false),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.78, false),
    };
    kf_gradient_t g;
    kf_gradient_estimate (t, 4, 1.0, &g);
    CHECK (g.n == 4);
    CHECK (g.moves[0] == 4 && g.moves[1] == 0 && g.moves[2] == 0);
    /* F = mean of df * sign = (0.10 + 0.05 - 0.02 + 0.08) / 4 */
    CHECK (fabs (g.fitness[0] - 0.0525) < 1e-9);
    CHECK (g.fitness_n[0] > 0 && g.fitness_n[0] <= 1);
    /* R = (3+1)/(4+2) - (0+1)/(0+2) */
    CHECK (fabs (g.rate[0] - (4.0 / 6 - 0.5)) < 1e-9);
    /* E = (1+1)/(4+2) - 1/2: one novel move in four is below the prior. */
    CHECK (fabs (g.explore[0] - (2.0 / 6 - 0.5)) < 1e-9);
    CHECK (g.combined[0] > 0);
    CHECK (g.fitness[1] == 0 && g.rate[1] == 0 && g.combined[1] == 0);

    int parent[3] = { 1, 0, 0 };
    char *hints = kf_gradient_hints (&g, t, 4, 0, parent, 3, 2, false);
    CHECK (hints != NULL);
    if (hints) {
        CHECK (strstr (hints, "Going from coalesced or vectorised loads and stores to tiles"
                              " staged in shared/local memory (memory access) raised fitness"
                              " in 3 of 4 moves") != NULL);
        CHECK (strstr (hints, "consider tiling through shared/local memory") != NULL);
        printf ("%s", hints);
    }
    free (hints);
    /* A parent already at the top of memory gets no advice to go up. */
    int top[3] = { 3, 0, 0 };
    hints = kf_gradient_hints (&g, t, 4, 0, top, 3, 2, false);
    CHECK (hints && !strstr (hints, "consider"));
    free (hints);
    /* Fewer moves than the minimum: no hint. */
    CHECK (kf_gradient_hints (&g, t, 4, 0, parent, 3, 5, false) == NULL);
    /* At most max_hints lines. */
    hints = kf_gradient_hints (&g, t, 4, 0, parent, 1, 2, false);
    CHECK (hints && strchr (hints, '\n') == hints + strlen (hints) - 1);
    free (hints);

    /* Curiosity: a memory-1 cell (room to go up, and its children did
     * well) outweighs a memory-3 cell with the same record. */
    int low[3] = { 1, 0, 0 }, high[3] = { 3, 0, 0 };
    CHECK (kf_gradient_weight (&g, t, 4, 1.0, low) > kf_gradient_weight (&g, t, 4, 1.0, high));
    /* A cell nobody has tried yet keeps an exploration bonus. */
    int fresh[3] = { 0, 2, 0 };
    double wf = kf_gradient_weight (&g, t, 4, 1.0, fresh);
    CHECK (wf > 1.0);
}

static void
test_sync_down (void)
{
    /* Adding barriers (sync 0 -> 1) mostly hurt: 1 of 3 improved. */
    kf_transition_t t[3] = {
        s_move (0, 1, 0, 0, 1, 1, 0.80, 0.70, true),
        s_move (0, 1, 0, 0, 1, 1, 0.80, 0.85, false),
        s_move (0, 1, 0, 0, 1, 1, 0.80, 0.60, false),
    };
    kf_gradient_t g;
    kf_gradient_estimate (t, 3, 1.0, &g);
    CHECK (g.fitness[2] < 0);
    CHECK (g.rate[2] < 0);
    int parent[3] = { 0, 1, 0 };
    char *hints = kf_gradient_hints (&g, t, 3, 0, parent, 3, 2, false);
    CHECK (hints && strstr (hints, "Going from threads that never wait for each other to"
                                   " threads of a block meeting at barriers (cooperation"
                                   " between threads) raised"
                                   " fitness in only 1 of 3 moves"));
    /* No advice to lower sync below 0. */
    CHECK (hints && !strstr (hints, "lowered"));
    free (hints);
    /* A parent already at sync 1 is pointed down: no child went down, so
     * it is told that those who went up did worse. */
    int at1[3] = { 0, 1, 1 };
    hints = kf_gradient_hints (&g, t, 3, 0, at1, 3, 2, false);
    CHECK (hints && strstr (hints, "made their cooperation between threads more elaborate have"
                                   " done worse so far, and none has made it simpler yet"));
    free (hints);
}

static void
test_recency (void)
{
    /* Old moves up in algorithm helped; the newest ones hurt. With no
     * decay the sum is positive; with a strong decay the recent harm
     * dominates. */
    kf_transition_t t[6] = {
        s_move (0, 0, 0, 0, 1, 0, 0.6, 0.9, false),
        s_move (0, 0, 0, 0, 1, 0, 0.6, 0.9, false),
        s_move (0, 0, 0, 0, 1, 0, 0.6, 0.9, false),
        s_move (0, 0, 0, 0, 1, 0, 0.8, 0.7, false),
        s_move (0, 0, 0, 0, 1, 0, 0.8, 0.7, false),
        s_move (0, 0, 0, 0, 1, 0, 0.8, 0.7, false),
    };
    kf_gradient_t flat, recent;
    kf_gradient_estimate (t, 6, 1.0, &flat);
    kf_gradient_estimate (t, 6, 0.3, &recent);
    CHECK (flat.fitness[1] > 0);
    CHECK (recent.fitness[1] < 0);
    /* A bad decay is treated as none. */
    kf_gradient_t bad;
    kf_gradient_estimate (t, 6, -2, &bad);
    CHECK (bad.fitness[1] == flat.fitness[1]);
}

static void
test_explore (void)
{
    /* Moving up in memory always found new cells, moving down never. */
    kf_transition_t t[4] = {
        s_move (1, 0, 0, 2, 0, 0, 0.7, 0.7, true),
        s_move (2, 0, 0, 3, 0, 0, 0.7, 0.7, true),
        s_move (2, 0, 0, 1, 0, 0, 0.7, 0.7, false),
        s_move (3, 0, 0, 2, 0, 0, 0.7, 0.7, false),
    };
    kf_gradient_t g;
    kf_gradient_estimate (t, 4, 1.0, &g);
    CHECK (g.fitness[0] == 0);
    CHECK (g.explore[0] > 0);
    /* Nothing improved: the move hints say so rather than praise. */
    int parent[3] = { 2, 0, 0 };
    char *hints = kf_gradient_hints (&g, t, 4, 0, parent, 3, 1, false);
    CHECK (hints == NULL || !strstr (hints, "raised fitness in 1"));
    free (hints);
}

static void
test_risk (void)
{
    /* Raising memory 1 -> 2: the two children that worked gained a lot;
     * three more broke (a compile failure at 0, two wrong at 0.1). The
     * gradient is read over the two that worked; the breakage is risk. */
    kf_transition_t t[5] = {
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.85, true),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.0, false),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.80, false),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.1, false),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.1, false),
    };
    kf_gradient_t g;
    kf_gradient_estimate (t, 5, 1.0, &g);
    CHECK (g.n == 5 && g.correct == 2);
    CHECK (g.moves[0] == 2);
    /* F over the correct children: (0.15 + 0.10) / 2, not dragged below
     * zero by the failures. */
    CHECK (fabs (g.fitness[0] - 0.125) < 1e-9);
    CHECK (g.combined[0] > 0);
    /* R = (2+1)/(2+2) - 1/2 */
    CHECK (fabs (g.rate[0] - 0.25) < 1e-9);
    /* Risk up = (3+1)/(5+2); nobody moved down: the prior. */
    CHECK (g.tries[0][0] == 5 && g.failures[0][0] == 3);
    CHECK (fabs (g.risk[0][0] - 4.0 / 7) < 1e-9 && g.risk[0][1] == 0.5);
    CHECK (g.tries[1][0] == 0 && g.failures[1][0] == 0);

    int parent[3] = { 1, 0, 0 };
    char *hints = kf_gradient_hints (&g, t, 5, 0, parent, 3, 2, false);
    CHECK (hints != NULL);
    if (hints) {
        printf ("%s", hints);
        CHECK (strstr (hints, "Children that made their memory access more elaborate have done"
                              " better so far (strength ") != NULL);
        CHECK (strstr (hints, "over 2 moves; risk: 3 of 5 attempts failed") != NULL);
        CHECK (strstr (hints, "raised fitness in 2 of 2 moves (the children's speedups 2.81x their parents' on "
                              "geometric mean); risk: 3 of"
                              " 5 attempts failed") != NULL);
    }
    free (hints);

    /* A move that mostly breaks and never worked twice is a hint of its
     * own: algorithm 0 -> 1 failed three times in four. */
    kf_transition_t u[4] = {
        s_move (0, 0, 0, 0, 1, 0, 0.70, 0.0, false),
        s_move (0, 0, 0, 0, 1, 0, 0.70, 0.1, false),
        s_move (0, 0, 0, 0, 1, 0, 0.70, 0.72, true),
        s_move (0, 0, 0, 0, 1, 0, 0.70, 0.0, false),
    };
    kf_gradient_estimate (u, 4, 1.0, &g);
    CHECK (g.correct == 1 && g.failures[1][0] == 3 && g.tries[1][0] == 4);
    int p0[3] = { 0, 0, 0 };
    hints = kf_gradient_hints (&g, u, 4, 0, p0, 3, 2, false);
    CHECK (hints && strstr (hints, "Going from a direct translation of the reference to the"
                                   " operations fused into one pass (algorithm) failed in 3 of"
                                   " 4 attempts"));
    CHECK (hints && !strstr (hints, "raised fitness"));
    if (hints)
        printf ("%s", hints);
    free (hints);
    /* Failures alone do not make a gradient. */
    CHECK (g.fitness[1] > 0 && g.moves[1] == 1);

    /* No failure: the hint says so. */
    kf_transition_t v[2] = {
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.80, true),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.78, false),
    };
    kf_gradient_estimate (v, 2, 1.0, &g);
    hints = kf_gradient_hints (&g, v, 2, 0, parent, 3, 2, false);
    CHECK (hints && strstr (hints, "risk: none of 2 attempts failed"));
    free (hints);

    /* Raising memory did worse, so the hint points down, a way no child
     * has gone: its risk is unknown, not "none of 0 attempts failed" (what
     * a model in the loop read in a prompt, issue 15). */
    kf_transition_t w[2] = {
        s_move (1, 0, 0, 2, 0, 0, 0.80, 0.60, true),
        s_move (1, 0, 0, 2, 0, 0, 0.80, 0.62, false),
    };
    kf_gradient_estimate (w, 2, 1.0, &g);
    CHECK (g.combined[0] < 0 && g.tries[0][1] == 0);
    int high[3] = { 2, 0, 0 };
    hints = kf_gradient_hints (&g, w, 2, 0, high, 3, 2, false);
    CHECK (hints && strstr (hints, "Children that made their memory access more elaborate have"
                                   " done worse so far, and none has made it simpler yet"));
    CHECK (hints && strstr (hints, "risk: unknown, no child has gone this way yet"));
    CHECK (hints && !strstr (hints, "of 0 attempts"));
    if (hints)
        printf ("%s", hints);
    free (hints);
}

/* The hints say what the code does in plain words, in the target's own
 * terms: none of the descriptor's level names ("global coordination",
 * "shared/local tiling", "cross-thread combining" once the host's words
 * were put in) that a model cannot read without our glossary (flagged by
 * the model in the loop, issue 15). */
static void
test_plain_words (void)
{
    /* Threads 0 -> 3 (atomics) paid off; memory 1 -> 2 did too. */
    kf_transition_t t[4] = {
        s_move (1, 0, 0, 2, 0, 3, 0.70, 0.80, true),
        s_move (1, 0, 0, 2, 0, 3, 0.70, 0.78, false),
        s_move (1, 0, 0, 2, 0, 3, 0.70, 0.79, false),
        s_move (1, 0, 0, 2, 0, 3, 0.70, 0.60, false),
    };
    kf_gradient_t g;
    kf_gradient_estimate (t, 4, 1.0, &g);
    int parent[3] = { 1, 0, 0 };
    static const char *const glossary[] = {
        "global coordination", "cross-thread combining", "shared/local tiling",
        "coalesced/vectorised", "block barriers", "warp/sub-group primitives",
        "synchronisation from none", " level ", "gradient +", "cache-blocked",
        "SIMD lane operations", "scalar global access",
    };
    for (int host = 0; host < 2; host++) {
        char *hints = kf_gradient_hints (&g, t, 4, 0, parent, 3, 2, host);
        CHECK (hints != NULL);
        if (!hints)
            continue;
        printf ("%s", hints);
        for (size_t i = 0; i < sizeof glossary / sizeof glossary[0]; i++)
            CHECK (!strstr (hints, glossary[i]));
        if (host) {
            CHECK (strstr (hints, "Going from a single thread to threads that update shared "
                                  "data with atomics, locks or critical sections (threading) "
                                  "raised fitness in 3 of 4 moves"));
            CHECK (strstr (hints, "loops blocked so each block of data is reused while it is "
                                  "in cache"));
            CHECK (!strstr (hints, "shared/local") && !strstr (hints, "warp"));
        }
        else
            CHECK (strstr (hints, "Going from threads that never wait for each other to "
                                  "atomics or several launches combining partial results "
                                  "across blocks (cooperation between threads)"));
        free (hints);
    }
}

/* The gradient leans "simpler" only because children that went the
 * other way did worse: the hint says that, not that simpler children
 * did better (the model in the loop read "simpler have done better (a
 * score of -0.21 ...; risk: unknown, no child has gone this way yet)" as
 * a contradiction), and host advice names no runtime the build lacks. */
static void
test_lean_from_worse (void)
{
    kf_transition_t t[3] = {
        s_move (0, 0, 2, 0, 0, 3, 0.80, 0.60, false),
        s_move (0, 0, 2, 0, 0, 3, 0.80, 0.65, false),
        s_move (0, 0, 2, 0, 0, 3, 0.78, 0.62, false),
    };
    kf_gradient_t g;
    kf_gradient_estimate (t, 3, 1.0, &g);
    CHECK (g.combined[2] < -0.1);
    int parent[3] = { 0, 0, 3 };
    char *hints = kf_gradient_hints (&g, t, 3, 0, parent, 3, 2, true);
    CHECK (hints != NULL);
    if (hints) {
        printf ("%s", hints);
        CHECK (strstr (hints, "Children that made their threading more elaborate have done "
                              "worse so far, and none has made it simpler yet") != NULL);
        CHECK (strstr (hints, "simpler have done better") == NULL);
        CHECK (strstr (hints, "strength 0.") != NULL && strstr (hints, "score of -") == NULL);
        CHECK (strstr (hints, "one step simpler than the parent's") != NULL);
        CHECK (strstr (hints, "OpenMP") == NULL);
    }
    free (hints);
}

/* Round 10: the hint leaned towards more elaborate memory access beside
 * the parent's own two children that had made that move and lost. */
static void
test_own_children (void)
{
    kf_transition_t t[5] = {
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.80, true),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.75, true),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.78, false),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.65, false),
        s_move (1, 0, 0, 2, 0, 0, 0.70, 0.68, false),
    };
    t[0].parent_id = 1;
    t[1].parent_id = 2;
    t[2].parent_id = 3;
    t[3].parent_id = t[4].parent_id = 7;
    kf_gradient_t g;
    kf_gradient_estimate (t, 5, 1.0, &g);
    CHECK (g.combined[0] > 0.1);
    int parent[3] = { 1, 0, 0 };
    char *hints = kf_gradient_hints (&g, t, 5, 7, parent, 1, 2, true);
    CHECK (hints && strstr (hints, "have done better so far"));
    CHECK (hints && strstr (hints, "one step more elaborate than the parent's; but neither of "
                                   "this parent's own children that made that move measured "
                                   "better than the parent, so if you take this step, take it "
                                   "another way than they did.\n"));
    printf ("%s", hints ? hints : "(none)\n");
    free (hints);
    /* Another parent, or one whose child won: the hint as before. */
    hints = kf_gradient_hints (&g, t, 5, 3, parent, 1, 2, true);
    CHECK (hints && !strstr (hints, "own children"));
    free (hints);
    hints = kf_gradient_hints (&g, t, 5, 0, parent, 1, 2, true);
    CHECK (hints && !strstr (hints, "own children"));
    free (hints);
}

int
main (void)
{
    test_empty ();
    test_plain_words ();
    test_memory_up ();
    test_sync_down ();
    test_recency ();
    test_explore ();
    test_risk ();
    test_lean_from_worse ();
    test_own_children ();
    return kf_test_done ("test_gradient");
}
