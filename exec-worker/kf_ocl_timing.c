/*  kf_ocl_timing.c - the OpenCL judge's timing protocol (kf_ocl_eval.h).
 *
 *  Each sample: the cache flushed by a fill of twice the largest cache
 *  the device reports (enqueued before, so on the in-order queue it has
 *  ended before the first launch starts), then CALLS calls; the sample is
 *  the device's profiling clock from the start of the first launch to the
 *  end of the last, so the host's enqueue and wait costs stay outside it
 *  (sync_overhead_ns is 0: there is no timestamp command to subtract).
 *  Calls per sample are chosen for about a millisecond, and reference and
 *  candidate samples alternate (a host reference is timed on the host
 *  clock), so the speedup is a paired ratio, as for CUDA and Level Zero.
 */
#include "kf_ocl_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define S_MAX_SAMPLES 10000

static kf_cl_int
s_stamp (kf_cl_handle event, kf_cl_uint which, kf_cl_ulong *t)
{
    return kf_ocl_dev.api->GetEventProfilingInfo (event, which, sizeof *t, t, NULL);
}

//  One sample of CALLS calls of SIDE.
static int
s_sample (kf_ocl_eval_t *e, kf_ocl_side_t *side, int calls, unsigned salt, double *ns,
          kf_cl_int *rc_out)
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
    unsigned char pattern = (unsigned char) (salt & 0x7f);
    kf_cl_int rc = kf_ocl_dev.api->EnqueueFillBuffer (kf_ocl_dev.queue, e->flush, &pattern, 1, 0,
                                                      e->flush_bytes, 0, NULL, NULL);
    if (rc)
        return kf_ocl_harness (e, rc, "flushing the cache");
    kf_cl_handle first = NULL, last = NULL;
    kf_ocl_dbuf_t *outs = side == &e->cand ? e->cand_d : e->ref_d;
    int st = KF_OCL_OK;
    kf_eval_set_phase (side == &e->cand ? 'C' : 'R');
    for (int k = 0; k < calls && !st; k++) {
        //  Events only where a stamp is read: the first launch of the
        //  first call, the last launch of the last call.
        if (k == 0 || k == calls - 1) {
            kf_cl_handle a = NULL, b = NULL;
            st = kf_ocl_enqueue_call (e, side, outs, &a, &b);
            kf_cl_handle end = b ? b : a;          // one launch: its event is both
            if (k == 0)
                first = a;
            if (k == calls - 1)
                last = end;
            if (a && a != first && a != last)
                kf_ocl_dev.api->ReleaseEvent (a);
            if (b && b != last)
                kf_ocl_dev.api->ReleaseEvent (b);
        }
        else
            st = kf_ocl_enqueue_call (e, side, outs, NULL, NULL);
    }
    if (!st)
        rc = kf_ocl_dev.api->Finish (kf_ocl_dev.queue);
    kf_eval_set_phase ('H');
    kf_cl_ulong t0 = 0, t1 = 0;
    if (!st && !rc)
        rc = s_stamp (first, KF_CL_PROFILING_COMMAND_START, &t0);
    if (!st && !rc)
        rc = s_stamp (last, KF_CL_PROFILING_COMMAND_END, &t1);
    if (first)
        kf_ocl_dev.api->ReleaseEvent (first);
    if (last && last != first)
        kf_ocl_dev.api->ReleaseEvent (last);
    if (st)
        return st;
    if (rc) {
        *rc_out = rc;
        return KF_OCL_CRASHED;
    }
    *ns = t1 > t0 ? (double) (t1 - t0) : 0;
    return KF_OCL_OK;
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
    snprintf (e->detail, sizeof e->detail, "timing: OpenCL error in the candidate: %s",
              kf_ocl_err (rc));
    return st;
}

static int
s_calls_for (double per_call_ns)
{
    double calls = per_call_ns > 0 ? ceil (1e6 / per_call_ns) : 1000;
    return calls < 1 ? 1 : calls > 10000 ? 10000 : (int) calls;
}

int
kf_ocl_time (kf_ocl_eval_t *e, json_t *timing, kf_ocl_timing_t *t)
{
    double min_time = kf_eval_num (timing, "min_time_s", 1);
    int min_samples = (int) kf_eval_num (timing, "min_samples", 10);
    double warmup_s = kf_eval_num (timing, "warmup_s", 1);
    int warmup_calls = (int) kf_eval_num (timing, "warmup_calls", 10);
    if (min_samples < 3)
        min_samples = 3;
    int st;
    kf_cl_int rc;
    double ns = 0;
    t->overhead_ns = 0;

    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = kf_eval_now ();
    while (calls < warmup_calls || kf_eval_now () - start < warmup_s) {
        if ((st = s_sample (e, &e->ref, 1, (unsigned) calls, &ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        ref_total += ns;
        if ((st = s_sample (e, &e->cand, 1, (unsigned) calls, &ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        cand_total += ns;
        calls++;
    }
    t->ref_calls = s_calls_for (ref_total / calls);
    t->cand_calls = s_calls_for (cand_total / calls);
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
        if ((st = s_sample (e, &e->ref, t->ref_calls, salt, &ref_ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        if ((st = s_sample (e, &e->cand, t->cand_calls, salt + 1, &cand_ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        t->ref_ns[t->samples] = fmax (ref_ns, 1) / t->ref_calls;
        t->cand_ns[t->samples] = fmax (cand_ns, 1) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    return KF_OCL_OK;
}
