/*  kf_dev_timing.c - the OpenCL and Level Zero judges' samples under the
 *  judges' one timing protocol (kf_eval_protocol.h: warm-up, calls per
 *  sample, the paired sample loop, failure attribution), written once
 *  above their device operations (kf_dev_ops.h).
 *
 *  Every sample is timed on the judge's clock, never on anything the
 *  candidate's process reports. Before each, the cache is flushed
 *  (ops->flush: a fill of twice the largest cache the device reports),
 *  waited for. The reference's sample (on the device) is the wall time
 *  of launching CALLS calls and waiting for them (ops->launch_ref); the
 *  cost of an empty sample (ops->tiny: one 256-byte fill and its wait,
 *  the median of 16: sync_overhead_ns) is taken off. The candidate's is
 *  the wall time from resuming its process to its answer, given after
 *  its own queue was drained; the round trip the judge measured before
 *  the candidate was built (a ping whose work is the same tiny fill and
 *  wait) is taken off. Calls per sample are chosen for about a
 *  millisecond (the reference) and four (the candidate, so its round
 *  trip stays small beside it). A host reference is timed on the host
 *  clock with nothing taken off.
 *
 *  The candidate's calls cycle through the sets it was judged correct on
 *  first, one in each variant of the shared file (kf_dev_share.h): call
 *  K of a sample on variant K modulo their number. Before each of its
 *  samples every variant's outputs are poisoned and the tensors handed
 *  to the device; after it they are handed back and each variant the
 *  sample reached is checked: inputs as kept, canaries, outputs against
 *  that set's right ones. So a kernel that answers a call from what an
 *  earlier call on other buffers computed is incorrect ("timing sample
 *  N, input set 2 of 4: ..."), and one that skips the work of a call
 *  leaves its poison. No copy of the tensors is in any sample.
 */
#include "kf_dev_ops.h"
#include "kf_eval_channel.h"

#include <stdio.h>
#include <stdlib.h>

#define S_MAX_SAMPLES 10000

//  One sample of CALLS calls of the reference (IS_REF) or the
//  candidate, in nanoseconds on the judge's clock, the fixed cost
//  included (the protocol takes it off).
static int
s_sample (kf_dev_judge_t *j, bool is_ref, int calls, unsigned salt, const char *when, double *ns,
          long *rc)
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
        int st = kf_dev_share_call (j->share, (uint32_t) calls, &wall, when);
        if (st)
            return st;
        *ns = wall * 1e9;
        return KF_DEV_OK;
    }
    double t0 = kf_eval_now ();
    int st = j->ops->launch_ref (j->dev, calls, rc);
    double t1 = kf_eval_now ();
    if (st)
        return st;
    *ns = (t1 - t0) * 1e9;
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

//  Before a candidate sample: every variant's outputs poisoned, the
//  tensors handed to the device.
static int
s_stage (kf_dev_judge_t *j, const char *when)
{
    for (int v = 0; v < j->variants; v++)
        kf_dev_share_fill (j->share, v, NULL, j->poison_h);
    return kf_dev_share_hand (j->share, false, when);
}

//  One sample for the protocol (kf_eval_timer_t), a candidate's between
//  its poisoning and its checks; a failed device reference says the
//  API's error.
static int
s_timer_sample (void *arg, const kf_eval_timing_t *t, kf_eval_sample_t *s)
{
    kf_dev_judge_t *j = arg;
    (void) t;
    long rc = 0;
    char when[64];
    if (s->sample == KF_EVAL_WARMUP || s->sample == KF_EVAL_TRIAL)
        snprintf (when, sizeof when, "timing, %s", s->sample == KF_EVAL_WARMUP ? "warm-up"
                                                                            : "trial sample");
    else
        snprintf (when, sizeof when, "timing sample %d", s->sample);
    bool is_ref = s->side == KF_EVAL_REF;
    int n = j->variants, st = is_ref ? KF_DEV_OK : s_stage (j, when);
    if (!st)
        st = s_sample (j, is_ref, s->calls, s->salt, when, &s->ns, &rc);
    if (st && rc && is_ref)
        snprintf (s->why, sizeof s->why, "%s", j->ops->err (rc));
    if (st || is_ref || (st = kf_dev_share_hand (j->share, true, when)))
        return st;
    for (int v = 0; v < n && v < s->calls && !st; v++) {
        char where[128];
        snprintf (where, sizeof where, "%s, input set %d of %d", when, v + 1, n);
        st = kf_dev_candidate_checks (j, v, j->var_in[v], j->var_ref[v], where);
    }
    return st;
}

int
kf_dev_time (kf_dev_judge_t *j, json_t *timing, kf_eval_timing_t *t)
{
    t->overhead_ns = j->ref_fn ? 0 : s_overhead_ns (j);
    t->cand_overhead_ns = kf_dev_share_round_trip_s (j->share) * 1e9;
    //  Each kept set's inputs in its variant (the tensors are on the host).
    for (int v = 0; v < j->variants; v++)
        kf_dev_share_fill (j->share, v, j->var_in[v], j->poison_h);
    kf_eval_timer_t p = {
        .sample = s_timer_sample, .arg = j, .paired = true, .trial = false,
        .target_ns = { 1e6, 4e6 }, .max_calls = { 10000, 10000 },
        .max_samples = S_MAX_SAMPLES, .warm = NULL, .harness_st = KF_DEV_HARNESS,
        .detail = j->detail, .detail_size = j->detail_size
    };
    return kf_eval_time (&p, timing, t);
}
