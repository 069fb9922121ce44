/*  kf_plausible.c - the plausibility rules of a correct result's speed
 *  (kf_plausible.h): against the device's measured ceilings, against the
 *  run's distribution, and whether a re-verification holds the figure.
 */
#include "kf_plausible.h"
#include "kf_task.h"

#include <math.h>
#include <stdio.h>

void
kf_plausible_rules_default (kf_plausible_rules_t *rules)
{
    rules->margin = KF_PLAUSIBLE_MARGIN;
    rules->outlier_factor = KF_PLAUSIBLE_OUTLIER;
    rules->min_counted = KF_PLAUSIBLE_MIN_COUNTED;
    rules->tolerance = KF_PLAUSIBLE_TOLERANCE;
}

double
kf_plausible_gbs (const kf_plausible_figures_t *f)
{
    return f->cand_ns > 0 && f->bytes > 0 ? f->bytes / f->cand_ns : 0;   /* bytes/ns = GB/s */
}

double
kf_plausible_gflops (const kf_plausible_figures_t *f)
{
    return f->cand_ns > 0 && f->flops > 0 ? f->flops / f->cand_ns : 0;  /* flops/ns = GFLOP/s */
}

double
kf_plausible_mix (double reads, double writes, double read_gbs, double write_gbs)
{
    if (!(reads > 0 && writes > 0 && read_gbs > 0 && write_gbs > 0))
        return 0;
    return (reads + writes) / fmax (reads / read_gbs, writes / write_gbs);
}

double
kf_plausible_mix_gbs (const kf_plausible_figures_t *f)
{
    return kf_plausible_mix (f->read_bytes, f->bytes - f->read_bytes, f->read_gbs, f->write_gbs);
}

bool
kf_plausible_ceiling (const kf_plausible_figures_t *f, double margin, char *reason,
                      size_t size)
{
    if (!(margin >= 1))
        margin = 1;
    if (f->ceilings_busy && margin < KF_PLAUSIBLE_MARGIN_BUSY)
        margin = KF_PLAUSIBLE_MARGIN_BUSY;
    const char *busy = f->ceilings_busy ? ", measured beside other work" : "";
    double gbs = kf_plausible_gbs (f), gflops = kf_plausible_gflops (f);
    /* The margin is for what a measured ceiling is not: the exact best a
     * kernel can do. A copy loop is one way to move bytes, and an honest
     * streaming kernel may beat it by a few percent; a rate well above it
     * means the work was not done in the time measured. */
    /* The ceiling of traffic is the fastest of the copy, the copy with
     * streaming stores and the cold read: a copy writes as much as it
     * reads, and writes cost more, less so when they stream. */
    double copy = f->copy_gbs > f->stream_gbs ? f->copy_gbs : f->stream_gbs;
    double ceiling = f->read_gbs > copy ? f->read_gbs : copy;
    double mix = kf_plausible_mix_gbs (f);
    if (f->bw_applies && ceiling > 0 && gbs > margin * fmax (ceiling, mix)) {
        if (mix > ceiling)
            snprintf (reason, size,
                      "moves its inputs and outputs at %.0f GB/s, above the %.0f GB/s its"
                      " reads and writes allow each at its own measured rate (%.0f MB read"
                      " at every core's cold read, %.0f GB/s, and %.0f MB written at every"
                      " core's streaming write, %.0f GB/s; over %.2gx it; the copy: %.0f GB/s%s)",
                      gbs, mix, f->read_bytes / 1e6, f->read_gbs,
                      (f->bytes - f->read_bytes) / 1e6, f->write_gbs, margin, copy, busy);
        else if (f->stream_gbs > f->copy_gbs && f->stream_gbs >= f->read_gbs)
            snprintf (reason, size,
                      "moves its inputs and outputs at %.0f GB/s, above the measured copy"
                      " with streaming stores, %.0f GB/s (over %.2gx it; the plain copy:"
                      " %.0f GB/s%s)", gbs, f->stream_gbs, margin, f->copy_gbs, busy);
        else if (f->read_gbs > f->copy_gbs)
            snprintf (reason, size,
                      "moves its inputs and outputs at %.0f GB/s, above the measured rate of"
                      " every core reading cold data, %.0f GB/s (over %.2gx it; the copy"
                      " bandwidth: %.0f GB/s%s)", gbs, f->read_gbs, margin, f->copy_gbs, busy);
        else
            snprintf (reason, size,
                      "moves its inputs and outputs at %.0f GB/s, above the measured copy"
                      " bandwidth of %.0f GB/s (over %.2gx it%s)", gbs, f->copy_gbs, margin,
                      busy);
        return true;
    }
    if (f->peak_gflops > 0 && gflops > margin * f->peak_gflops) {
        snprintf (reason, size,
                  "computes at %.0f GFLOP/s, above the measured FMA peak of %.0f GFLOP/s"
                  " (over %.2gx it%s)", gflops, f->peak_gflops, margin, busy);
        return true;
    }
    return false;
}

double
kf_plausible_margin_again (double margin)
{
    return margin > KF_PLAUSIBLE_MARGIN_AGAIN ? margin : KF_PLAUSIBLE_MARGIN_AGAIN;
}

bool
kf_plausible_outlier (double speedup, double run_best, long counted,
                      const kf_plausible_rules_t *rules, char *reason, size_t size)
{
    /* Too few counted results make no distribution; and parity with the
     * reference is never implausible, so a run whose best is below 1x
     * measures a leap from 1x. A factor of 0 re-verifies every result. */
    if (counted < rules->min_counted)
        return false;
    double base = run_best > 1 ? run_best : 1;
    if (!(speedup > rules->outlier_factor * base))
        return false;
    if (rules->outlier_factor > 0)
        snprintf (reason, size,
                  "%.2fx is over %gx the run's best counted speedup of %.2fx (%ld counted)",
                  speedup, rules->outlier_factor, run_best, counted);
    else
        snprintf (reason, size, "%.2fx: every correct result is re-verified"
                  " (plausible_outlier_factor 0)", speedup);
    return true;
}

bool
kf_plausible_new_best (double speedup, double run_best, long counted, char *reason,
                       size_t size)
{
    if (counted < 1 || !(speedup > run_best))
        return false;
    snprintf (reason, size, KF_PLAUSIBLE_CONFIRM " (%.2fx against the run's best counted"
              " %.2fx): timed once more before it counts, at the lower figure (a third"
              " time where the second is far below the first, at the middle one)",
              speedup, run_best);
    return true;
}

bool
kf_plausible_holds (double first, double again, double tolerance, char *reason, size_t size)
{
    if (tolerance < 0)
        tolerance = 0;
    if (tolerance > 1)
        tolerance = 1;
    double floor = (1 - tolerance) * first;
    if (again >= floor && again > 0)
        return true;
    snprintf (reason, size, "its speedup did not hold: %.2fx against %.2fx first (at least"
              " %.2fx needed)", again, first, floor);
    return false;
}

bool
kf_plausible_disagree (double first, double again)
{
    return first > 0 && again > 0 && first > KF_PLAUSIBLE_DISAGREE * again;
}

double
kf_plausible_middle (double a, double b, double c)
{
    double lo = fmin (a, b), hi = fmax (a, b);
    return c < lo ? lo : c > hi ? hi : c;
}

static double
s_tensor_bytes (json_t *tensors)
{
    double total = 0;
    size_t i;
    json_t *t;
    json_array_foreach (tensors, i, t) {
        int dtype = kf_dtype_from_name (json_string_value (json_object_get (t, "dtype")));
        json_t *shape = json_object_get (t, "shape");
        if (dtype < 0 || !json_is_array (shape))
            continue;
        double n = 1;
        size_t k;
        json_t *d;
        json_array_foreach (shape, k, d)
            n *= (double) json_integer_value (d);
        total += n * (double) kf_dtype_size (dtype);
    }
    return total;
}

double
kf_plausible_task_bytes (json_t *task)
{
    return s_tensor_bytes (json_object_get (task, "inputs"))
           + s_tensor_bytes (json_object_get (task, "outputs"));
}

double
kf_plausible_task_read_bytes (json_t *task)
{
    return s_tensor_bytes (json_object_get (task, "inputs"));
}

double
kf_plausible_task_flops (json_t *task)
{
    json_t *fl = json_object_get (task, "flops");
    double v = json_is_array (fl) ? json_number_value (json_array_get (fl, 0))
                                  : json_number_value (fl);
    return v > 0 && isfinite (v) ? v : 0;
}
