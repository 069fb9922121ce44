/*  test_noise_round16.c - what round 16 of the model in the loop
 *  (/work/notes/round16-notes.md, docs/search.md "Sixteenth round") found
 *  in the verdicts on children: gauss_cos's candidate 13, a lower-degree
 *  approximation its writer measured 30% faster, came out at 307.07x
 *  against its parent's 368.50x and was judged "regressed beyond the
 *  timing noise" with the band at the median of the run's repeats (one
 *  kernel timed twice came out a median 17% apart), though pairs of one
 *  kernel had come up to 24% apart (candidate 2: 384.27x and 310.56x).
 *
 *  A band at the median calls half of such pairs changed. The band is now
 *  the ratio 9 in 10 repeats stayed within, applied the same way both
 *  ways (kf_lineage_verdict), and the child's line, the idea's try
 *  (kf_search_idea_verdict) and the gradients (kf_gradient.c) all read
 *  such a child as within noise: no loss, no win, no sign.
 */
#include "../../coordinator/kf_gradient.h"
#include "../../coordinator/kf_lineage.h"
#include "../../coordinator/kf_search_idea.h"
#include "../kf_test.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

//  The fitness of a correct kernel of speedup S (docs/search.md).
static double
s_fitness (double s)
{
    return 0.5 + 0.5 * s / (1 + s);
}

//  The rule itself: a ratio either way, the same band.
static void
s_test_verdict (void)
{
    //  Round 16: 368.50 / 307.07 = 1.20, within 1.24, past 1.17.
    CHECK (kf_lineage_verdict (307.07, 368.50, 0.24) == 0);
    CHECK (kf_lineage_verdict (307.07, 368.50, 0.17) == -1);
    CHECK (kf_lineage_verdict (368.50, 307.07, 0.24) == 0);
    CHECK (kf_lineage_verdict (368.50, 307.07, 0.17) == 1);
    //  Symmetric: a ratio of 1.20 either way is the same distance.
    CHECK (kf_lineage_verdict (100, 120, 0.19) == -1 && kf_lineage_verdict (120, 100, 0.19) == 1);
    CHECK (kf_lineage_verdict (100, 120, 0.21) == 0 && kf_lineage_verdict (120, 100, 0.21) == 0);
    CHECK (kf_lineage_verdict (1, 1.5, 0.6) == 2 && kf_lineage_verdict (1.5, 1, 0.6) == 2);
    //  Round 24: past the band a gap is told, however wide the band.
    CHECK (kf_lineage_verdict (1, 3, 0.6) == -1 && kf_lineage_verdict (12.41, 1.18, 0.86) == 1);
    //  The ideas' tries read the same rule.
    CHECK (kf_search_idea_verdict (307.07, 368.50, 0.24) == 0);
    CHECK (kf_search_idea_verdict (307.07, 368.50, 0.17) == -1);
}

//  The band from the run's repeats: gauss_cos's eight search kernels
//  timed on the screen and in full (screen, counted full figure).
static void
s_test_band (void)
{
    static const double pairs[8][2] = {
        { 380.33, 362.33 }, { 384.27, 310.56 }, { 369.65, 368.50 }, { 384.85, 332.73 },
        { 400.80, 341.23 }, { 287.96, 307.07 }, { 366.92, 305.74 }, { 393.61, 365.57 },
    };
    double gaps[8], median = -1;
    for (int i = 0; i < 8; i++)
        gaps[i] = fabs (log (pairs[i][0] / pairs[i][1]));
    double band = kf_lineage_repeat_gaps (gaps, 8, &median);
    printf ("repeats: median %.3f, 9 in 10 within %.3f\n", median, band);
    CHECK (fabs (median - 0.116) < 0.002);
    CHECK (fabs (band - 0.211) < 0.002);
    //  Candidate 13 (its parent 1.20 times as fast) is within that band,
    //  not within the median's.
    CHECK (kf_lineage_verdict (307.07, 368.50, kf_lineage_band (0.03, band)) == 0);
    CHECK (kf_lineage_verdict (307.07, 368.50, kf_lineage_band (0.03, median)) == -1);
    //  Too few repeats: no band of their own.
    CHECK (kf_lineage_repeat_gaps (gaps, KF_LINEAGE_REPEATS - 1, &median) == 0 && median == 0);
}

//  The child's line in the prompt.
static void
s_test_line (void)
{
    json_t *c = json_pack ("{s:s, s:f, s:s, s:s, s:f, s:f, s:f}", "status", "correct", "speedup",
                           307.07, "fidelity", "full", "parent_fidelity", "full", "noise", 0.03,
                           "repeat", 0.24, "repeat_median", 0.17);
    char buf[400];
    kf_lineage_reason (c, 368.50, buf, sizeof buf);
    printf ("%s\n", buf);
    CHECK (!strcmp (buf, "correct, within noise of the parent: 307.07x against the parent's "
                         "368.50x; timing noise about +/-24% (the same kernel timed twice in "
                         "this run came out within 24% of itself 9 times in 10, a median 17% "
                         "apart)"));
    json_decref (c);
}

//  The gradients: two children that moved up in memory access, each 20%
//  slower than its parent, within a band of 24%.
static void
s_test_gradient (void)
{
    kf_transition_t t[2];
    for (int k = 0; k < 2; k++)
        t[k] = (kf_transition_t) { { 1, 1, 0 }, { 2, 1, 0 }, s_fitness (368.50),
                                   s_fitness (307.07), false, 0 };
    kf_gradient_t g;
    //  Told nothing of the noise, they are two losses.
    kf_gradient_estimate (t, 2, 1.0, &g);
    CHECK (g.fitness[0] < 0 && g.rate[0] < 0 && g.band == 0);
    int parent[3] = { 1, 1, 0 };
    char *hints = kf_gradient_hints (&g, t, 2, 0, parent, 3, 2, true);
    CHECK (kf_test_has (hints, "raised fitness in only 0 of 2 moves"));
    free (hints);
    double w_loss = kf_gradient_weight (&g, t, 2, 1.0, parent);
    //  Within the band: no sign, no rate, no record, no mark on the cell.
    kf_gradient_estimate_within (t, 2, 1.0, 0.24, &g);
    printf ("within: F %.3f R %.3f G %.3f\n", g.fitness[0], g.rate[0], g.combined[0]);
    CHECK (g.fitness[0] == 0 && g.fitness_n[0] == 0 && g.rate[0] == 0 && g.band == 0.24);
    CHECK (g.moves[0] == 2 && g.correct == 2);
    hints = kf_gradient_hints (&g, t, 2, 0, parent, 3, 2, true);
    CHECK (!hints || !strstr (hints, "raised fitness"));
    free (hints);
    double w_even = kf_gradient_weight (&g, t, 2, 1.0, parent);
    CHECK (w_even > w_loss);
    //  One beyond the band (a third, 40% slower) makes a record of one
    //  loss, and the two within are said as such.
    kf_transition_t u[3] = { t[0], t[1], t[0] };
    u[2].child_fitness = s_fitness (263.0);
    kf_gradient_estimate_within (u, 3, 1.0, 0.24, &g);
    CHECK (g.fitness[0] < 0 && g.rate[0] < 0);
    hints = kf_gradient_hints (&g, u, 3, 0, parent, 3, 2, true);
    printf ("%s", hints ? hints : "(none)\n");
    CHECK (kf_test_has (hints, "raised fitness in only 0 of 3 moves (the children's speedups "));
    CHECK (kf_test_has (hints, "their parents' on geometric mean, 2 within the timing noise)"));
    free (hints);
}

int
main (void)
{
    s_test_verdict ();
    s_test_band ();
    s_test_line ();
    s_test_gradient ();
    return kf_test_done ("test_noise_round16");
}
