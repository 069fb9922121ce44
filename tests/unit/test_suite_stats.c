/*  test_suite_stats.c - a suite's figures (kfctl/kfctl_suite_stats.c):
 *  fast_p as KernelBench defines it (the share of ALL problems correct and
 *  more than p times faster; fast_0 the share correct), the geometric
 *  mean over the correct problems, and the edges: an empty suite, no
 *  correct problem, a failed run, a baseline that is missing for some
 *  problems or for all (n/a), a figure exactly at p, and the run objects
 *  of a SUITE reply read into problems. */
#include "../kf_test.h"
#include "../../kfctl/kfctl_suite.h"

#include <math.h>
#include <string.h>

#define NEAR(a, b) (fabs ((a) - (b)) < 1e-9)

/* A run object as SUITE returns it. BEST < 0: no best; EAGER, COMPILED
 * <= 0: that reference time is null. */
static json_t *
s_run (int id, const char *status, double best, double eager, double compiled)
{
    json_t *run = json_pack ("{s:i, s:s, s:s}", "id", id, "status", status, "suite_problem",
                             "p.py");
    json_object_set_new (run, "best_speedup", best >= 0 ? json_real (best) : json_null ());
    json_object_set_new (run, "best_candidate_id", best >= 0 ? json_integer (100 + id)
                                                             : json_null ());
    json_object_set_new (run, "ref_eager_ns", eager > 0 ? json_real (eager) : json_null ());
    json_object_set_new (run, "ref_compiled_ns", compiled > 0 ? json_real (compiled)
                                                              : json_null ());
    return run;
}

static double
s_get (json_t *figures, const char *baseline, const char *key)
{
    json_t *v = json_object_get (json_object_get (figures, baseline), key);
    return json_is_number (v) ? json_number_value (v) : -1;
}

static bool
s_null (json_t *figures, const char *baseline, const char *key)
{
    return json_is_null (json_object_get (json_object_get (figures, baseline), key));
}

int
main (void)
{
    /* An empty suite has no figures. */
    CHECK (kf_ctl_suite_fast_p (NULL, 0, KF_CTL_SUITE_EAGER, 0) < 0);
    CHECK (kf_ctl_suite_geomean (NULL, 0, KF_CTL_SUITE_EAGER) < 0);

    /* Four problems against eager: 2.5x, 0.8x, exactly 1.5x, and one
     * that found no correct kernel. */
    kf_ctl_suite_problem_t four[4] = {
        { true, { 2.5, 1.25 } },
        { true, { 0.8, -1 } },   /* torch.compile failed for it */
        { true, { 1.5, 3.0 } },
        { false, { 0, 0 } },
    };
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_EAGER, 0), 0.75));
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_EAGER, 1), 0.5));
    /* "more than p": 1.5x is not faster than 1.5 */
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_EAGER, 1.5), 0.25));
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_EAGER, 2), 0.25));
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_EAGER, 2.5), 0));
    CHECK (NEAR (kf_ctl_suite_geomean (four, 4, KF_CTL_SUITE_EAGER), cbrt (2.5 * 0.8 * 1.5)));
    /* Against torch.compile the problem without it counts for fast_0
     * only, and the denominator stays all four. */
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_COMPILED, 0), 0.75));
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_COMPILED, 1), 0.5));
    CHECK (NEAR (kf_ctl_suite_fast_p (four, 4, KF_CTL_SUITE_COMPILED, 2), 0.25));
    CHECK (NEAR (kf_ctl_suite_geomean (four, 4, KF_CTL_SUITE_COMPILED), sqrt (1.25 * 3.0)));

    /* No correct problem: every fast_p is 0, the geomean does not apply. */
    kf_ctl_suite_problem_t none[2] = { { false, { 0, 0 } }, { false, { 0, -1 } } };
    CHECK (NEAR (kf_ctl_suite_fast_p (none, 2, KF_CTL_SUITE_EAGER, 0), 0));
    CHECK (NEAR (kf_ctl_suite_fast_p (none, 2, KF_CTL_SUITE_EAGER, 1), 0));
    CHECK (kf_ctl_suite_geomean (none, 2, KF_CTL_SUITE_EAGER) < 0);

    /* Native tasks only: no baseline, so nothing applies. */
    kf_ctl_suite_problem_t native[2] = { { true, { -1, -1 } }, { false, { -1, -1 } } };
    CHECK (kf_ctl_suite_fast_p (native, 2, KF_CTL_SUITE_EAGER, 0) < 0);
    CHECK (kf_ctl_suite_fast_p (native, 2, KF_CTL_SUITE_COMPILED, 1) < 0);
    CHECK (kf_ctl_suite_geomean (native, 2, KF_CTL_SUITE_EAGER) < 0);

    /* The same through run objects: a PyTorch run done at 3x eager with
     * torch.compile twice as fast as eager (so 1.5x against it), one done
     * at 1.2x without a torch.compile time, a failed run that never timed
     * its reference, and a native task at 4x against its own reference. */
    json_t *runs = json_array ();
    json_array_append_new (runs, s_run (1, "done", 3.0, 2000, 1000));
    json_array_append_new (runs, s_run (2, "done", 1.2, 1000, 0));
    json_array_append_new (runs, s_run (3, "failed", -1, 0, 0));
    json_array_append_new (runs, s_run (4, "done", 4.0, 0, 0));
    kf_ctl_suite_problem_t p;
    kf_ctl_suite_problem_of (json_array_get (runs, 0), &p);
    CHECK (p.correct && NEAR (p.speedup[KF_CTL_SUITE_EAGER], 3.0)
           && NEAR (p.speedup[KF_CTL_SUITE_COMPILED], 1.5));
    kf_ctl_suite_problem_of (json_array_get (runs, 2), &p);
    CHECK (!p.correct && p.speedup[KF_CTL_SUITE_EAGER] < 0);
    kf_ctl_suite_problem_of (json_array_get (runs, 3), &p);
    CHECK (p.correct && p.speedup[KF_CTL_SUITE_EAGER] < 0 && p.speedup[KF_CTL_SUITE_COMPILED] < 0);
    json_t *fig = kf_ctl_suite_figures (runs);
    CHECK (fig != NULL);
    CHECK (json_integer_value (json_object_get (fig, "problems")) == 4);
    CHECK (json_integer_value (json_object_get (fig, "correct")) == 3);
    CHECK (NEAR (s_get (fig, "eager", "fast_0"), 0.75));
    CHECK (NEAR (s_get (fig, "eager", "fast_1"), 0.5));      /* 3x and 1.2x; 4x is native */
    CHECK (NEAR (s_get (fig, "eager", "fast_1.5"), 0.25));
    CHECK (NEAR (s_get (fig, "eager", "fast_2"), 0.25));
    CHECK (NEAR (s_get (fig, "eager", "geomean"), sqrt (3.0 * 1.2)));
    CHECK (json_integer_value (json_object_get (json_object_get (fig, "eager"),
                                                "with_baseline")) == 2);
    CHECK (NEAR (s_get (fig, "compiled", "fast_1"), 0.25));
    CHECK (NEAR (s_get (fig, "compiled", "fast_1.5"), 0));
    CHECK (NEAR (s_get (fig, "compiled", "geomean"), 1.5));
    json_decref (fig);

    /* A best without a best candidate is no correct problem (a reply of
     * another version, or a run whose best was rejected). */
    json_object_set_new (json_array_get (runs, 1), "best_candidate_id", json_null ());
    kf_ctl_suite_problem_of (json_array_get (runs, 1), &p);
    CHECK (!p.correct);
    json_decref (runs);

    /* Native tasks only, through JSON: n/a is null, fast_0 too. */
    runs = json_array ();
    json_array_append_new (runs, s_run (1, "done", 2.0, 0, 0));
    json_array_append_new (runs, s_run (2, "running", -1, 0, 0));
    fig = kf_ctl_suite_figures (runs);
    CHECK (s_null (fig, "eager", "fast_0") && s_null (fig, "eager", "geomean"));
    CHECK (s_null (fig, "compiled", "fast_2"));
    CHECK (json_integer_value (json_object_get (fig, "running")) == 1);
    json_decref (fig);
    json_decref (runs);

    /* An empty suite through JSON. */
    runs = json_array ();
    fig = kf_ctl_suite_figures (runs);
    CHECK (fig && s_null (fig, "eager", "fast_0")
           && json_integer_value (json_object_get (fig, "problems")) == 0);
    json_decref (fig);
    json_decref (runs);
    return kf_test_done ("test_suite_stats");
}
