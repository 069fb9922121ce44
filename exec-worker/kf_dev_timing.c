/*  kf_dev_timing.c - the timing protocol of the OpenCL and Level Zero
 *  judges (kf_dev_ops.h), written once above their device operations.
 *
 *  Every sample is timed on the judge's clock, never on anything the
 *  candidate's process reports. Before each, the cache is flushed
 *  (ops->flush: a fill of twice the largest cache the device reports),
 *  waited for. The reference's sample (on the device) is the wall time
 *  of launching CALLS calls and waiting for them (ops->launch_ref), less
 *  the cost of an empty sample (ops->tiny: one 256-byte fill and its
 *  wait, the median of 16: sync_overhead_ns). The candidate's is the
 *  wall time from resuming its process to its answer, given after its
 *  own queue was drained, less the round trip the judge measured before
 *  the candidate was built (a ping whose work is the same tiny fill and
 *  wait). The tensors are handed to the device before the first timed
 *  call and back after the last, so no copy of them is in any sample.
 *  Calls per sample are chosen for about a millisecond (the reference)
 *  and four (the candidate, so its round trip stays small beside it);
 *  samples alternate, and the speedup is a paired ratio, as for CUDA. A
 *  host reference is timed on the host clock with nothing subtracted.
 */
#include "kf_dev_ops.h"
#include "kf_eval_channel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define S_MAX_SAMPLES 10000

//  One sample of CALLS calls of the reference (IS_REF) or the
//  candidate, in nanoseconds on the judge's clock, the fixed cost taken
//  off.
static int
s_sample (kf_dev_judge_t *j, bool is_ref, int calls, unsigned salt, double overhead_ns,
          double *ns, long *rc)
{
    *rc = 0;
    if (is_ref && j->ref_fn) {
        double t0 = kf_eval_now ();
        kf_eval_set_phase ('R');
        for (int k = 0; k < calls; k++)
            if (j->ref_fn (j->in_t, j->n_in, j->ref_t, j->n_out, j->host_ctx)) {
                kf_eval_set_phase ('H');
                return KF_DEV_REF_FAILED;
            }
        kf_eval_set_phase ('H');
        *ns = (kf_eval_now () - t0) * 1e9;
        return KF_DEV_OK;
    }
    long flushed = j->ops->flush (j->dev, salt);
    if (flushed) {
        snprintf (j->detail, j->detail_size, "harness: flushing the cache: %s",
                  j->ops->err (flushed));
        return KF_DEV_HARNESS;
    }
    if (!is_ref) {
        double wall;
        int st = kf_dev_share_call (j->share, (uint32_t) calls, &wall, "timing");
        if (st)
            return st;
        *ns = (wall - kf_dev_share_round_trip_s (j->share)) * 1e9;
        return KF_DEV_OK;
    }
    double t0 = kf_eval_now ();
    int st = j->ops->launch_ref (j->dev, calls, rc);
    double t1 = kf_eval_now ();
    if (st)
        return st;
    *ns = (t1 - t0) * 1e9 - overhead_ns;
    return KF_DEV_OK;
}

//  The fixed cost of a device sample on the judge's clock: one tiny
//  fill and the wait for it, the median of 16.
static double
s_overhead_ns (kf_dev_judge_t *j)
{
    double t[16];
    for (int k = 0; k < 16; k++) {
        double t0 = kf_eval_now ();
        j->ops->tiny (j->dev);
        t[k] = (kf_eval_now () - t0) * 1e9;
    }
    return kf_eval_median (t, 16);
}

static int
s_sample_failed (kf_dev_judge_t *j, int st, bool is_ref, long rc)
{
    if (st == KF_DEV_HARNESS || st == KF_DEV_LOAD_FAILED)
        return st;
    if (is_ref) {
        snprintf (j->detail, j->detail_size, "reference failed during timing%s%s",
                  rc ? ": " : "", rc ? j->ops->err (rc) : "");
        return KF_DEV_REF_FAILED;
    }
    return st;                       // the candidate's process said what, in the detail
}

int
kf_dev_time (kf_dev_judge_t *j, json_t *timing, kf_dev_timing_t *t)
{
    kf_eval_floors_t fl;
    kf_eval_floors (timing, &fl);
    double min_time = fl.min_time_s, warmup_s = fl.warmup_s;
    int min_samples = fl.min_samples, warmup_calls = fl.warmup_calls;
    int st;
    long rc;
    double ns = 0, oh = t->overhead_ns = j->ref_fn ? 0 : s_overhead_ns (j);
    //  The tensors on the device for the whole loop: no copy is timed.
    if ((st = kf_dev_share_hand (j->share, false, "timing")))
        return st;

    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = kf_eval_now ();
    while (calls < warmup_calls || kf_eval_now () - start < warmup_s) {
        if ((st = s_sample (j, true, 1, (unsigned) calls, oh, &ns, &rc)))
            return s_sample_failed (j, st, true, rc);
        ref_total += fmax (ns, 1);
        if ((st = s_sample (j, false, 1, (unsigned) calls, oh, &ns, &rc)))
            return s_sample_failed (j, st, false, rc);
        cand_total += fmax (ns, 1);
        calls++;
    }
    t->ref_calls = kf_eval_calls_for (ref_total / calls, 1e6, 10000);
    t->cand_calls = kf_eval_calls_for (cand_total / calls, 4e6, 10000);
    t->ref_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    t->cand_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    if (!t->ref_ns || !t->cand_ns) {
        snprintf (j->detail, j->detail_size, "harness: out of memory for samples");
        return KF_DEV_HARNESS;
    }
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < S_MAX_SAMPLES) {
        unsigned salt = (unsigned) t->samples;
        double ref_ns, cand_ns;
        if ((st = s_sample (j, true, t->ref_calls, salt, oh, &ref_ns, &rc)))
            return s_sample_failed (j, st, true, rc);
        if ((st = s_sample (j, false, t->cand_calls, salt + 1, oh, &cand_ns, &rc)))
            return s_sample_failed (j, st, false, rc);
        t->ref_ns[t->samples] = fmax (ref_ns, 1) / t->ref_calls;
        t->cand_ns[t->samples] = fmax (cand_ns, 1) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    //  Back to the host, where the judge checks what the loop left.
    return kf_dev_share_hand (j->share, true, "timing");
}
