/*  kf_ocl_timing.c - the OpenCL judge's timing protocol (kf_ocl_eval.h).
 *
 *  Every sample is timed on the judge's clock, never on anything the
 *  candidate's process reports. Before each, the cache is flushed by a
 *  fill of twice the largest cache the device reports, waited for.
 *  The reference's sample (on the device) is the wall time of enqueuing
 *  CALLS calls and waiting for them, less the cost of an empty sample
 *  (one tiny fill and its wait, the median of 16: sync_overhead_ns). The
 *  candidate's is the wall time from resuming its process to its answer,
 *  given after clFinish of its queue, less the round trip the judge
 *  measured before the candidate was built (a ping whose work is the
 *  same tiny fill and wait). The tensors are handed to the device before
 *  the first timed call and back after the last, so on a discrete GPU
 *  no copy of them is in any sample. Calls per sample are chosen for
 *  about a millisecond (the reference) and four (the candidate, so its
 *  round trip stays small beside it); samples alternate, and the speedup
 *  is a paired ratio, as for CUDA and Level Zero. A host reference is
 *  timed on the host clock with nothing subtracted.
 */
#include "kf_ocl_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define S_MAX_SAMPLES 10000

static void
s_flush (kf_ocl_eval_t *e, unsigned salt, kf_cl_int *rc)
{
    unsigned char pattern = (unsigned char) (salt & 0x7f);
    *rc = kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, e->flush, &pattern, 1, 0,
                                             e->flush_bytes, 0, NULL, NULL);
    if (!*rc)
        *rc = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
}

//  One sample of CALLS calls of SIDE, in nanoseconds on the judge's
//  clock, the fixed cost taken off.
static int
s_sample (kf_ocl_eval_t *e, kf_ocl_side_t *side, int calls, unsigned salt, double overhead_ns,
          double *ns, kf_cl_int *rc_out)
{
    *rc_out = 0;
    if (side->host) {
        double t0 = kf_eval_now ();
        kf_eval_set_phase ('R');
        for (int k = 0; k < calls; k++)
            if (side->fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->host_ctx)) {
                kf_eval_set_phase ('H');
                return KF_OCL_REF_FAILED;
            }
        kf_eval_set_phase ('H');
        *ns = (kf_eval_now () - t0) * 1e9;
        return KF_OCL_OK;
    }
    kf_cl_int rc;
    s_flush (e, salt, &rc);
    if (rc)
        return kf_ocl_harness (e, rc, "flushing the cache");
    if (side == &e->cand) {
        double wall;
        int st = kf_ocl_share_call (e, (uint32_t) calls, &wall, "timing");
        if (st)
            return st;
        *ns = (wall - kf_ocl_share_round_trip_s (e)) * 1e9;
        return KF_OCL_OK;
    }
    int st = KF_OCL_OK;
    kf_eval_set_phase ('R');
    double t0 = kf_eval_now ();
    for (int k = 0; k < calls && !st; k++)
        st = kf_ocl_enqueue_call (e, side, e->ref_d, NULL, NULL);
    if (!st)
        rc = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
    double t1 = kf_eval_now ();
    kf_eval_set_phase ('H');
    if (st)
        return st;
    if (rc) {
        *rc_out = rc;
        return KF_OCL_REF_FAILED;
    }
    *ns = (t1 - t0) * 1e9 - overhead_ns;
    return KF_OCL_OK;
}

//  The fixed cost of a device sample on the judge's clock: one tiny
//  fill and the wait for it, the median of 16.
static double
s_overhead_ns (kf_ocl_eval_t *e)
{
    double t[16];
    unsigned char zero = 0;
    for (int k = 0; k < 16; k++) {
        double t0 = kf_eval_now ();
        if (kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, e->flush, &zero, 1, 0, 256, 0,
                                               NULL, NULL) == 0)
            kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
        t[k] = (kf_eval_now () - t0) * 1e9;
    }
    return kf_eval_median (t, 16);
}

static int
s_sample_failed (kf_ocl_eval_t *e, int st, bool is_ref, kf_cl_int rc)
{
    if (st == KF_OCL_HARNESS || st == KF_OCL_LOAD_FAILED)
        return st;
    if (is_ref) {
        snprintf (e->detail, sizeof e->detail, "reference failed during timing%s%s",
                  rc ? ": " : "", rc ? kf_ocl_err (rc) : "");
        return KF_OCL_REF_FAILED;
    }
    return st;                       // the candidate's process said what, in E->detail
}

static int
s_calls_for (double per_call_ns, double target_ns)
{
    return kf_eval_calls_for (per_call_ns, target_ns, 10000);
}

int
kf_ocl_time (kf_ocl_eval_t *e, json_t *timing, kf_ocl_timing_t *t)
{
    kf_eval_floors_t fl;
    kf_eval_floors (timing, &fl);
    double min_time = fl.min_time_s, warmup_s = fl.warmup_s;
    int min_samples = fl.min_samples, warmup_calls = fl.warmup_calls;
    int st;
    kf_cl_int rc;
    double ns = 0, oh = t->overhead_ns = e->ref.host ? 0 : s_overhead_ns (e);
    //  The tensors on the device for the whole loop: no copy is timed.
    if ((st = kf_ocl_share_hand (e, false, "timing")))
        return st;

    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = kf_eval_now ();
    while (calls < warmup_calls || kf_eval_now () - start < warmup_s) {
        if ((st = s_sample (e, &e->ref, 1, (unsigned) calls, oh, &ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        ref_total += fmax (ns, 1);
        if ((st = s_sample (e, &e->cand, 1, (unsigned) calls, oh, &ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        cand_total += fmax (ns, 1);
        calls++;
    }
    t->ref_calls = s_calls_for (ref_total / calls, 1e6);
    t->cand_calls = s_calls_for (cand_total / calls, 4e6);
    t->ref_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    t->cand_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    if (!t->ref_ns || !t->cand_ns) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
        return KF_OCL_HARNESS;
    }
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < S_MAX_SAMPLES) {
        unsigned salt = (unsigned) t->samples;
        double ref_ns, cand_ns;
        if ((st = s_sample (e, &e->ref, t->ref_calls, salt, oh, &ref_ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        if ((st = s_sample (e, &e->cand, t->cand_calls, salt + 1, oh, &cand_ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        t->ref_ns[t->samples] = fmax (ref_ns, 1) / t->ref_calls;
        t->cand_ns[t->samples] = fmax (cand_ns, 1) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    //  Back to the host, where the judge checks what the loop left.
    return kf_ocl_share_hand (e, true, "timing");
}
