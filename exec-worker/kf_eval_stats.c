/*  kf_eval_stats.c - the timing figures every backend reports the same
 *  way (kf_eval_check.h): median and quantiles of the samples, the paired
 *  speedup, the phases of the child's life, the harness's own time per
 *  step, and the warm-up floor that counts the correctness pass's calls.
 */
#include "kf_eval_check.h"
#include "kf_floors.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

// --------------------------------------------------------------------------
//  Timing statistics

static int
s_cmp_double (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return (x > y) - (x < y);
}

static double
s_quantile (const double *sorted, int n, double q)
{
    if (n == 0)
        return 0;
    double pos = q * (n - 1);
    int lo = (int) pos;
    int hi = lo + 1 < n ? lo + 1 : lo;
    return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

double
kf_eval_median (const double *v, int n)
{
    double *sorted = malloc ((size_t) (n > 0 ? n : 1) * sizeof *sorted);
    if (!sorted)
        return 0;
    memcpy (sorted, v, (size_t) (n > 0 ? n : 0) * sizeof *sorted);
    qsort (sorted, (size_t) (n > 0 ? n : 0), sizeof *sorted, s_cmp_double);
    double m = s_quantile (sorted, n, 0.5);
    free (sorted);
    return m;
}

json_t *
kf_eval_timing_json (const double *ns, int n, int calls)
{
    double *sorted = malloc ((size_t) (n ? n : 1) * sizeof *sorted);
    if (!sorted)
        return json_object ();
    memcpy (sorted, ns, (size_t) n * sizeof *sorted);
    qsort (sorted, (size_t) n, sizeof *sorted, s_cmp_double);
    json_t *o = json_pack ("{s:f, s:f, s:f, s:i, s:i}",
                           "median_ns", s_quantile (sorted, n, 0.5),
                           "p10_ns", s_quantile (sorted, n, 0.1),
                           "p90_ns", s_quantile (sorted, n, 0.9),
                           "samples", n, "calls_per_sample", calls);
    free (sorted);
    return o;
}

double
kf_eval_paired_speedup (const double *ref, const double *cand, int n)
{
    double *ratio = malloc ((size_t) (n ? n : 1) * sizeof *ratio);
    if (!ratio)
        return -1;
    for (int i = 0; i < n; i++)
        ratio[i] = cand[i] > 0 ? ref[i] / cand[i] : 0;
    qsort (ratio, (size_t) n, sizeof *ratio, s_cmp_double);
    double m = s_quantile (ratio, n, 0.5);
    free (ratio);
    return m;
}

json_t *
kf_eval_phases_json (double spawn, const double stamps[KF_EVAL_T_N], double end)
{
    static const char *const names[] = { "child_start", "load", "correctness", "timing",
                                         "report" };
    //  Phase k runs from the end of phase k-1 (the spawn for the first) to
    //  its own stamp; one the child died in runs to END.
    json_t *o = json_object ();
    double from = spawn;
    for (int k = 0; k < KF_EVAL_T_N; k++) {
        double to = stamps[k] > 0 ? stamps[k] : 0;
        double took = 0;
        if (from > 0) {
            bool next_started = false;
            for (int j = k + 1; j < KF_EVAL_T_N; j++)
                next_started |= stamps[j] > 0;
            took = to > 0 ? to - from : next_started ? 0 : end - from;
        }
        json_object_set_new (o, names[k], json_real (took > 0 ? round (took * 1e6) / 1e6 : 0));
        from = to > 0 ? to : 0;
    }
    double reported = stamps[KF_EVAL_T_REPORTED];
    double exit_s = reported > 0 && end > reported ? end - reported : 0;
    json_object_set_new (o, "exit", json_real (round (exit_s * 1e6) / 1e6));
    return o;
}

// --------------------------------------------------------------------------
//  The harness's own time, per step

static double s_split[KF_EVAL_S_N];

void
kf_eval_split_add (int which, double seconds)
{
    if (which >= 0 && which < KF_EVAL_S_N && seconds > 0)
        s_split[which] += seconds;
}

json_t *
kf_eval_split_json (void)
{
    static const char *const names[KF_EVAL_S_N] = { "context", "modules", "device", "ceilings",
                                                    "inputs", "copies", "calls", "compare" };
    json_t *o = json_object ();
    for (int k = 0; k < KF_EVAL_S_N; k++)
        json_object_set_new (o, names[k], json_real (round (s_split[k] * 1e6) / 1e6));
    return o;
}

// --------------------------------------------------------------------------
//  The warm-up floor, counting the correctness pass's calls

void
kf_eval_warm_count (kf_eval_warm_t *w, bool ref, double started)
{
    if (w->since <= 0)
        w->since = started;
    if (ref)
        w->ref_calls++;
    else
        w->cand_calls++;
}

int
kf_eval_warm_counted (const kf_eval_warm_t *w, bool paired)
{
    if (!paired)
        return w->cand_calls;
    return w->ref_calls < w->cand_calls ? w->ref_calls : w->cand_calls;
}

void
kf_eval_floors (json_t *timing, kf_eval_floors_t *f)
{
    f->min_time_s = kf_eval_num (timing, "min_time_s", KF_FULL_MIN_TIME_S);
    f->min_samples = (int) kf_eval_num (timing, "min_samples", KF_FULL_MIN_SAMPLES);
    f->warmup_s = kf_eval_num (timing, "warmup_s", KF_FULL_WARMUP_S);
    f->warmup_calls = (int) kf_eval_num (timing, "warmup_calls", KF_FULL_WARMUP_CALLS);
    if (f->min_samples < 3)
        f->min_samples = 3;
}

int
kf_eval_calls_for (double per_call_ns, double target_ns, int max)
{
    double calls = per_call_ns > 0 ? ceil (target_ns / per_call_ns) : 1000;
    return calls < 1 ? 1 : calls > max ? max : (int) calls;
}

bool
kf_eval_warm_more (const kf_eval_warm_t *w, bool paired, int topup, double now,
                   double warmup_s, int warmup_calls)
{
    if (topup < 1)
        return true;
    int calls = kf_eval_warm_counted (w, paired) + topup;
    return calls < warmup_calls || now - w->since < warmup_s;
}
