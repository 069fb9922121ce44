/*  kf_ze_timing.c - the Level Zero judge's timing protocol
 *  (kf_ze_eval.h).
 *
 *  Timing: each sample is one command list: the L2 flushed by a fill of
 *  twice the largest cache the device reports, a barrier, a global
 *  timestamp, CALLS calls, a barrier, a global timestamp. The barriers
 *  wait for everything before them on the queue, so the interval holds
 *  the whole of every call. The fixed cost of an empty sample is measured
 *  and subtracted, calls per sample are chosen for about a millisecond,
 *  and reference and candidate samples alternate (a host reference is
 *  timed on the host clock), so the speedup is a paired ratio.
 */
#include "kf_ze_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define S_MAX_SAMPLES 10000

//  One sample of CALLS calls of SIDE (NULL: an empty sample).
static int
s_sample (kf_ze_eval_t *e, kf_ze_side_t *side, int calls, unsigned salt, double *ns, uint32_t *rc_out)
{
    *rc_out = 0;
    if (side && side->host) {
        double t0 = kf_eval_now ();
        kf_eval_set_phase ('R');
        for (int k = 0; k < calls; k++)
            if (side->fn (e->in_t, e->n_in, e->ref_t, e->n_out, &e->host_ctx)) {
                kf_eval_set_phase ('H');
                return KF_ZE_REF_FAILED;
            }
        kf_eval_set_phase ('H');
        *ns = (kf_eval_now () - t0) * 1e9;
        return KF_ZE_OK;
    }
    unsigned char pattern = (unsigned char) (salt & 0x7f);
    uint32_t rc = kf_ze_dev.api->CommandListAppendMemoryFill (kf_ze_dev.list, e->flush, &pattern, 1,
                                                         e->flush_bytes, NULL, 0, NULL);
    if (!rc) rc = kf_ze_dev.api->CommandListAppendBarrier (kf_ze_dev.list, NULL, 0, NULL);
    if (!rc) rc = kf_ze_dev.api->CommandListAppendWriteGlobalTimestamp (kf_ze_dev.list, &kf_ze_stage.stamps[0],
                                                                   NULL, 0, NULL);
    if (rc) {
        kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
        return kf_ze_harness (e, rc, "starting a sample");
    }
    for (int k = 0; side && k < calls; k++) {
        int st = kf_ze_append_call (e, side, side == &e->cand ? e->cand_d : e->ref_d);
        if (st)
            return st;
    }
    rc = kf_ze_dev.api->CommandListAppendBarrier (kf_ze_dev.list, NULL, 0, NULL);
    if (!rc) rc = kf_ze_dev.api->CommandListAppendWriteGlobalTimestamp (kf_ze_dev.list, &kf_ze_stage.stamps[1],
                                                                   NULL, 0, NULL);
    if (rc) {
        kf_ze_dev.api->CommandListReset (kf_ze_dev.list);
        return kf_ze_harness (e, rc, "ending a sample");
    }
    kf_eval_set_phase (side == &e->cand ? 'C' : side ? 'R' : 'H');
    rc = kf_ze_submit ();
    kf_eval_set_phase ('H');
    if (rc) {
        *rc_out = rc;
        return side ? KF_ZE_CRASHED : kf_ze_harness (e, rc, "an empty sample");
    }
    *ns = kf_ze_ticks_ns (kf_ze_stage.stamps[0], kf_ze_stage.stamps[1]);
    return KF_ZE_OK;
}

static int
s_sample_failed (kf_ze_eval_t *e, int st, bool is_ref, uint32_t rc)
{
    if (st == KF_ZE_HARNESS || st == KF_ZE_LOAD_FAILED)
        return st;
    if (is_ref) {
        snprintf (e->detail, sizeof e->detail, "reference failed during timing%s%s",
                  rc ? ": " : "", rc ? kf_ze_err (rc) : "");
        return KF_ZE_REF_FAILED;
    }
    snprintf (e->detail, sizeof e->detail, "timing: Level Zero error in the candidate: %s",
              kf_ze_err (rc));
    return st;
}

static int
s_calls_for (double per_call_ns)
{
    return kf_eval_calls_for (per_call_ns, 1e6, 10000);
}

int
kf_ze_time (kf_ze_eval_t *e, json_t *timing, kf_ze_timing_t *t)
{
    kf_eval_floors_t fl;
    kf_eval_floors (timing, &fl);
    double min_time = fl.min_time_s, warmup_s = fl.warmup_s;
    int min_samples = fl.min_samples, warmup_calls = fl.warmup_calls;
    int st;
    uint32_t rc;
    double ns = 0;

    double null_ns[16];
    for (int k = 0; k < 20; k++) {
        if ((st = s_sample (e, NULL, 0, (unsigned) k, &ns, &rc)))
            return st;
        if (k >= 4)
            null_ns[k - 4] = ns;
    }
    t->overhead_ns = kf_eval_median (null_ns, 16);
    //  A host reference's samples have no device overhead in them.
    double ref_overhead = e->ref.host ? 0 : t->overhead_ns;

    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double start = kf_eval_now ();
    while (calls < warmup_calls || kf_eval_now () - start < warmup_s) {
        if ((st = s_sample (e, &e->ref, 1, (unsigned) calls, &ns, &rc)))
            return s_sample_failed (e, st, true, rc);
        ref_total += fmax (ns - ref_overhead, 0);
        if ((st = s_sample (e, &e->cand, 1, (unsigned) calls, &ns, &rc)))
            return s_sample_failed (e, st, false, rc);
        cand_total += fmax (ns - t->overhead_ns, 0);
        calls++;
    }
    t->ref_calls = s_calls_for (ref_total / calls);
    t->cand_calls = s_calls_for (cand_total / calls);
    t->ref_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    t->cand_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    if (!t->ref_ns || !t->cand_ns) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
        return KF_ZE_HARNESS;
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
        t->ref_ns[t->samples] = fmax (ref_ns - ref_overhead, ref_ns * 1e-3) / t->ref_calls;
        t->cand_ns[t->samples] = fmax (cand_ns - t->overhead_ns, cand_ns * 1e-3) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    return KF_ZE_OK;
}
