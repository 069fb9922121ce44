/*  test_meta_score.c - how prompt versions are judged and when the
 *  meta-prompter is asked (coordinator/kf_meta_score.c): a version scores
 *  the mean fitness of its recent kernels plus an exploration bonus that
 *  shrinks with use, so one lucky kernel among failures does not lead and
 *  a little-used version gets tried; meta rounds come every meta_every
 *  generations but at least every quarter of the run, so a run of the
 *  built-in defaults and the short runs people make both get them. */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_score.h"
#include "../../coordinator/kf_search.h"
#include <math.h>
#include <stdlib.h>

static void
test_score (void)
{
    /* Untried first. */
    CHECK (isinf (kf_meta_score (false, 0, 0, 10)));
    /* Equal use: the higher mean leads; a steady version (mean 0.8) above
     * one whose best kernel was lucky among failures (mean 0.3). */
    CHECK (kf_meta_score (true, 0.8, 20, 40) > kf_meta_score (true, 0.3, 20, 40));
    /* The bonus shrinks with use and grows with the archive's total. */
    CHECK (kf_meta_score (true, 0.6, 4, 40) > kf_meta_score (true, 0.6, 20, 40));
    CHECK (kf_meta_score (true, 0.6, 4, 400) > kf_meta_score (true, 0.6, 4, 40));
    /* UCB1: 0.6 + 0.2 * sqrt (ln 33 / 30). */
    CHECK (fabs (kf_meta_score (true, 0.6, 30, 32) - (0.6 + KF_META_EXPLORE * sqrt (log (33.0) / 30)))
           < 1e-12);
    /* A little-used version outranks a much-used one a little better. */
    CHECK (kf_meta_score (true, 0.55, 2, 32) > kf_meta_score (true, 0.6, 30, 32));
    /* ... but not one far better. */
    CHECK (kf_meta_score (true, 0.3, 2, 32) < kf_meta_score (true, 0.9, 30, 32));
    /* Nothing finished yet: the prior. */
    CHECK (kf_meta_score (false, 0.99, 5, 10) == kf_meta_score (true, KF_META_PRIOR, 5, 10));
    CHECK (kf_meta_score (true, NAN, 5, 10) == kf_meta_score (true, KF_META_PRIOR, 5, 10));
    /* A total below the version's own use is its own use. */
    CHECK (kf_meta_score (true, 0.6, 5, 1) == kf_meta_score (true, 0.6, 5, 5));
}

static void
test_interval (void)
{
    CHECK (kf_meta_interval (10, 40) == 10);    /* the paper's schedule */
    CHECK (kf_meta_interval (10, 100) == 10);
    CHECK (kf_meta_interval (2, 40) == 2);
    CHECK (kf_meta_interval (10, 6) == 2);      /* a quarter of 6, rounded up */
    CHECK (kf_meta_interval (10, 5) == 2);
    CHECK (kf_meta_interval (10, 3) == 1);
    CHECK (kf_meta_interval (10, 1) == 1);
    CHECK (kf_meta_interval (0, 40) == 10);
    CHECK (kf_meta_interval (10, 0) == 1);
    /* Due: enough finished, something left to plan. */
    CHECK (!kf_meta_due (0, 79, 87, 320, 10, 8));
    CHECK (kf_meta_due (0, 80, 87, 320, 10, 8));
    CHECK (!kf_meta_due (1, 80, 87, 320, 10, 8));
    CHECK (!kf_meta_due (0, 80, 320, 320, 10, 8));
    CHECK (!kf_meta_due (0, 80, 87, 320, 0, 8));
}

/* Meta rounds in a steady-state run of GENERATIONS x POPULATION with
 * IN_FLIGHT open at most and META_EVERY, as kf_meta_after_candidate and
 * kf_search_fill take turns: each finished candidate is credited (a round
 * may be queued, and is taken to be answered before the next finishes),
 * then the next is planned. */
static int
s_rounds (int generations, int population, int in_flight, int meta_every)
{
    int64_t total = (int64_t) generations * population;
    int64_t planned = in_flight < total ? in_flight : total;
    int interval = kf_meta_interval (meta_every, generations);
    int round = 0;
    for (int64_t finished = 1; finished <= total; finished++) {
        if (kf_meta_due (round, finished, planned, total, interval, population))
            round++;
        if (planned < total)
            planned++;
    }
    return round;
}

static void
test_schedule (void)
{
    /* A run of the built-in defaults. */
    char *why = NULL;
    json_t *d = kf_search_defaults_load (NULL, &why);
    CHECK (d != NULL);
    free (why);
    int g = (int) json_integer_value (json_object_get (d, "generations"));
    int p = (int) json_integer_value (json_object_get (d, "population"));
    int f = (int) json_integer_value (json_object_get (d, "max_in_flight"));
    int m = (int) json_integer_value (json_object_get (d, "meta_every"));
    json_decref (d);
    int rounds = s_rounds (g, p, f > 0 ? f : p, m);
    printf ("defaults: %d x %d, meta_every %d: %d meta rounds\n", g, p, m, rounds);
    CHECK (rounds >= 1);
    CHECK (rounds == 3);   /* after generations 10, 20 and 30 */
    /* The short runs people make: the quickstart's 5 x 4, the GPU
     * scripts' 6 x 4, the tests' 3 x 3, a 2 x 8; with meta_every alone
     * (10) none of them would have any. */
    CHECK (s_rounds (5, 4, 4, m) >= 1);
    CHECK (s_rounds (6, 4, 4, m) >= 1);
    CHECK (s_rounds (3, 3, 3, m) >= 1);
    CHECK (s_rounds (2, 8, 8, m) >= 1);
    CHECK (s_rounds (3, 3, 1, m) >= 1);
    /* One generation: nothing left to write with a new version. */
    CHECK (s_rounds (1, 8, 8, m) == 0);
    /* A long run keeps the paper's interval. */
    CHECK (s_rounds (100, 8, 8, m) == 9);
}

int
main (void)
{
    test_score ();
    test_interval ();
    test_schedule ();
    return kf_test_done ("test_meta_score");
}
