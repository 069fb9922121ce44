/*  kfctl_suite_stats.c - the figures of a suite (kfctl_suite.h), as
 *  KernelBench defines them.
 *
 *  fast_p is the share of ALL problems of the suite that are correct and
 *  faster than the baseline by more than a factor p; fast_0 is the share
 *  correct. The denominator stays every problem: a problem that failed,
 *  or whose run is still looking, counts against the suite rather than
 *  vanishing from it. A problem without the baseline (a native task has
 *  no PyTorch eager time; torch.compile may have failed) cannot be shown
 *  faster than it, so it counts for fast_0 only; when no problem has the
 *  baseline the figures against it are not applicable (null, "n/a").
 *  The geometric mean is over the correct problems with the baseline.
 */
#include "kfctl_fields.h"
#include "kfctl_suite.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *
kf_ctl_suite_baseline_name (kf_ctl_suite_baseline_t baseline)
{
    return baseline == KF_CTL_SUITE_COMPILED ? "compiled" : "eager";
}

/* Whether any of the N problems has a figure against BASELINE. */
static bool
s_has_baseline (const kf_ctl_suite_problem_t *problems, size_t n, kf_ctl_suite_baseline_t baseline)
{
    for (size_t i = 0; i < n; i++)
        if (problems[i].speedup[baseline] >= 0)
            return true;
    return false;
}

double
kf_ctl_suite_fast_p (const kf_ctl_suite_problem_t *problems, size_t n,
                     kf_ctl_suite_baseline_t baseline, double p)
{
    if (n == 0 || baseline < 0 || baseline >= KF_CTL_SUITE_N_BASELINES
        || !s_has_baseline (problems, n, baseline))
        return -1;
    size_t fast = 0;
    for (size_t i = 0; i < n; i++) {
        if (!problems[i].correct)
            continue;
        double s = problems[i].speedup[baseline];
        if (p <= 0 || (s >= 0 && s > p))
            fast++;
    }
    return (double) fast / (double) n;
}

double
kf_ctl_suite_geomean (const kf_ctl_suite_problem_t *problems, size_t n,
                      kf_ctl_suite_baseline_t baseline)
{
    if (baseline < 0 || baseline >= KF_CTL_SUITE_N_BASELINES)
        return -1;
    double log_sum = 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        double s = problems[i].speedup[baseline];
        if (problems[i].correct && s > 0 && isfinite (s)) {
            log_sum += log (s);
            k++;
        }
    }
    return k ? exp (log_sum / (double) k) : -1;
}

void
kf_ctl_suite_problem_of (json_t *run, kf_ctl_suite_problem_t *p)
{
    double best = 0, eager = 0, compiled = 0;
    bool has_best = kf_ctl_real (run, "best_speedup", &best) && best > 0 && isfinite (best);
    p->correct = has_best && json_is_integer (json_object_get (run, "best_candidate_id"));
    p->speedup[KF_CTL_SUITE_EAGER] = -1;
    p->speedup[KF_CTL_SUITE_COMPILED] = -1;
    if (!kf_ctl_real (run, "ref_eager_ns", &eager) || !(eager > 0))
        return;
    /* The run's speedups are against eager (docs/pytorch-references.md);
     * the same candidate time against torch.compile's median is the best
     * scaled by compiled / eager. */
    if (p->correct)
        p->speedup[KF_CTL_SUITE_EAGER] = best;
    else
        p->speedup[KF_CTL_SUITE_EAGER] = 0;   /* the baseline exists; no figure beats it */
    if (kf_ctl_real (run, "ref_compiled_ns", &compiled) && compiled > 0)
        p->speedup[KF_CTL_SUITE_COMPILED] = p->correct ? best * compiled / eager : 0;
}

/* A figure, or null when it does not apply (< 0). */
static json_t *
s_figure (double v)
{
    return v < 0 ? json_null () : json_real (v);
}

json_t *
kf_ctl_suite_figures (json_t *runs)
{
    size_t n = json_array_size (runs);
    kf_ctl_suite_problem_t *problems = calloc (n ? n : 1, sizeof *problems);
    if (!problems)
        return NULL;
    size_t correct = 0, running = 0;
    for (size_t i = 0; i < n; i++) {
        json_t *run = json_array_get (runs, i);
        kf_ctl_suite_problem_of (run, &problems[i]);
        correct += problems[i].correct;
        running += json_is_string (json_object_get (run, "status"))
                   && !strcmp (json_string_value (json_object_get (run, "status")), "running");
    }
    json_t *out = json_pack ("{s:I, s:I, s:I}", "problems", (json_int_t) n, "correct",
                             (json_int_t) correct, "running", (json_int_t) running);
    static const struct {
        const char *key;
        double p;
    } levels[] = { { "fast_0", 0 }, { "fast_1", 1 }, { "fast_1.5", 1.5 }, { "fast_2", 2 } };
    for (int b = 0; b < KF_CTL_SUITE_N_BASELINES; b++) {
        json_t *obj = json_object ();
        for (size_t k = 0; k < sizeof levels / sizeof levels[0]; k++)
            json_object_set_new (obj, levels[k].key,
                                 s_figure (kf_ctl_suite_fast_p (problems, n, b, levels[k].p)));
        json_object_set_new (obj, "geomean", s_figure (kf_ctl_suite_geomean (problems, n, b)));
        size_t with = 0;
        for (size_t i = 0; i < n; i++)
            with += problems[i].speedup[b] >= 0;
        json_object_set_new (obj, "with_baseline", json_integer ((json_int_t) with));
        json_object_set_new (out, kf_ctl_suite_baseline_name (b), obj);
    }
    free (problems);
    return out;
}
