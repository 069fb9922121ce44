/*  test_meta_score.c - how prompt versions are judged and when the
 *  meta-prompter is asked (coordinator/kf_meta_score.c): a version scores
 *  the mean fitness of its recent kernels plus an exploration bonus that
 *  shrinks with use, so one lucky kernel among failures does not lead and
 *  a little-used version gets tried, and a kernel's part in that mean is
 *  its speedup on a log scale against the run's best, so 25x and 60x
 *  versions are told apart (round 6); meta rounds come every meta_every
 *  generations but at least every quarter of the run, so a run of the
 *  built-in defaults and the short runs people make both get them. */
#include "../kf_test.h"
#include "../../coordinator/kf_meta_score.h"
#include "../../coordinator/kf_search.h"
#include <math.h>
#include <stdint.h>
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

/* Round 6 of issue 15: versions whose kernels ran at 25x and 60x scored
 * 0.981 and 0.992 by the search's fitness, so the exploration bonus and
 * timing noise decided between them. A kernel's value to its version is
 * its speedup on a log scale against the run's best. */
static void
test_value (void)
{
    double f25 = kf_search_fitness ("correct", 25), f60 = kf_search_fitness ("correct", 60);
    double v25 = kf_meta_value (f25, 25, 60), v60 = kf_meta_value (f60, 60, 60);
    printf ("value at 25x %.3f, at 60x %.3f (best 60x)\n", v25, v60);
    CHECK (fabs (v60 - 1.0) < 1e-12);
    CHECK (v60 - v25 > 0.08);
    CHECK (fabs (v25 - (0.5 + 0.5 * log (26.0) / log (61.0))) < 1e-12);
    /* The same ratio costs about the same at a small scale: 1x against
     * 2.4x, 25x against 60x. */
    CHECK (kf_meta_value (kf_search_fitness ("correct", 2.4), 2.4, 2.4)
           - kf_meta_value (kf_search_fitness ("correct", 1), 1, 2.4) > 0.08);
    /* Failures keep their weight: below any correct kernel, however
     * slow; a wrong one above one that did not compile. */
    CHECK (kf_meta_value (kf_search_fitness ("compile_failed", 0), 0, 60) == 0.0);
    CHECK (kf_meta_value (kf_search_fitness ("incorrect", 30), 30, 60) == 0.1);
    CHECK (kf_meta_value (kf_search_fitness ("correct", 0.05), 0.05, 60) > 0.5);
    /* A best below the kernel's own (a screen figure above the counted
     * best): the kernel is the best. */
    CHECK (kf_meta_value (f60, 60, 30) == 1.0);
    CHECK (isnan (kf_meta_value (NAN, 3, 60)));
    /* A version's fitness: the mean of those with a fitness. */
    json_t *k = json_pack ("[[f, f], [f, f], [n, n], [f, n]]", f60, 60.0, f25, 25.0, 0.0);
    double mean = -1;
    CHECK (kf_meta_fitness (k, 60, &mean));
    CHECK (fabs (mean - (1.0 + v25 + 0.0) / 3) < 1e-12);
    json_decref (k);
    k = json_pack ("[[n, n]]");
    mean = -1;
    CHECK (!kf_meta_fitness (k, 60, &mean) && mean == -1);
    CHECK (!kf_meta_fitness (NULL, 60, &mean));
    json_decref (k);
    /* A fast version that fails half the time stays below a steady one
     * at 25x. */
    json_t *risky = json_pack ("[[f, f], [f, f], [f, n], [f, n]]", f60, 60.0, f60, 60.0, 0.0, 0.0);
    json_t *steady = json_pack ("[[f, f], [f, f], [f, f], [f, f]]", f25, 25.0, f25, 25.0, f25,
                                25.0, f25, 25.0);
    double mr = 0, ms = 0;
    CHECK (kf_meta_fitness (risky, 60, &mr) && kf_meta_fitness (steady, 60, &ms) && mr < ms);
    json_decref (risky);
    json_decref (steady);
}

/* Draws A 60x and a 25x version over 60 kernels as the search does
 * (kf_meta_pick, each drawn version's next kernel timed with +/-30%
 * noise from a fixed seed, fitness recomputed against the run's best
 * after each): the 60x version must be drawn clearly more often, and
 * the 25x one still now and then (the exploration bonus). */
static void
test_pick_by_speed (void)
{
    const double speed[2] = { 25, 60 };
    json_t *window = json_array ();   /* [0] v2, the newer, [1] v1 */
    json_t *kernels[2] = { json_array (), json_array () };
    int picks[2] = { 0, 0 };
    uint64_t seed = 6;
    double best = 0;
    for (int step = 0; step < 66; step++) {
        int which;
        if (step < 6)
            which = step % 2;   /* both past their trial of 3 */
        else {
            json_t *versions = json_array ();
            for (int v = 0; v < 2; v++) {
                /* The latest KF_META_WINDOW, as kf_meta.c reads them. */
                json_array_clear (window);
                size_t n = json_array_size (kernels[v]);
                for (size_t i = n > KF_META_WINDOW ? n - KF_META_WINDOW : 0; i < n; i++)
                    json_array_append (window, json_array_get (kernels[v], i));
                double mean = 0;
                json_t *fit = kf_meta_fitness (window, best, &mean) ? json_real (mean)
                                                                    : json_null ();
                json_array_append_new (versions,
                                       json_pack ("{s:i, s:i, s:o, s:I}", "id", 20 - 10 * v,
                                                  "number", 2 - v, "fitness", fit, "used",
                                                  (json_int_t) json_array_size (kernels[v])));
            }
            json_t *pick = kf_meta_pick (versions, 3, NULL, 0);
            which = json_integer_value (json_object_get (pick, "number")) == 2 ? 0 : 1;
            json_decref (versions);
            picks[which]++;
        }
        seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double) (seed >> 11) / 9007199254740992.0;
        double s = speed[which] * (0.7 + 0.6 * u);
        if (s > best)
            best = s;
        json_array_append_new (kernels[which],
                               json_pack ("[f, f]", kf_search_fitness ("correct", s), s));
    }
    double m25 = 0, m60 = 0;
    kf_meta_fitness (kernels[0], best, &m25);
    kf_meta_fitness (kernels[1], best, &m60);
    printf ("60 draws: 60x version %d, 25x version %d; fitness %.3f against %.3f (best %.1fx)\n",
            picks[1], picks[0], m60, m25, best);
    CHECK (m60 - m25 > 0.05);
    CHECK (picks[1] >= 2 * picks[0]);
    CHECK (picks[0] >= 2);
    json_decref (kernels[0]);
    json_decref (kernels[1]);
    json_decref (window);
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
     * scripts' 6 x 4, the tests' 3 x 3; with meta_every alone
     * (10) none of them would have any. */
    CHECK (s_rounds (5, 4, 4, m) >= 1);
    CHECK (s_rounds (6, 4, 4, m) >= 1);
    CHECK (s_rounds (3, 3, 3, m) >= 1);
    /* Round 50: in a 3 x 2 run the round came as the last kernel was
     * planned, and no kernel used its version; a 2 x 8 run has planned
     * all of generation 1 once generation 0 has finished. */
    CHECK (!kf_meta_due (0, 3, 5, 6, 1, 3));
    CHECK (s_rounds (2, 3, 3, m) == 0);
    CHECK (s_rounds (2, 8, 8, m) == 0);
    CHECK (s_rounds (3, 3, 3, m) == 1);
    CHECK (s_rounds (2, 8, 1, m) >= 1);
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
    test_value ();
    test_pick_by_speed ();
    test_interval ();
    test_schedule ();
    return kf_test_done ("test_meta_score");
}
