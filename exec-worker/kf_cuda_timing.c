/*  kf_cuda_timing.c - the CUDA judge's timing protocol (kf_cuda_eval.h).
 *
 *  Timing: each sample is CALLS back-to-back calls between two CUDA
 *  events; the end event is recorded only after cudaDeviceSynchronize, so
 *  a kernel the candidate put on a stream of its own is inside the
 *  interval. The fixed cost of that synchronisation and of the event
 *  records is measured with empty samples and subtracted. L2 is flushed
 *  before every sample by a memset of twice its size, and reference and
 *  candidate samples alternate, so the speedup is a paired ratio. The
 *  correctness pass's calls of the main shape count towards the warm-up
 *  floor (kf_eval_warm_t): the warm-up then only tops up what is missing.
 */
#include "kf_cuda_eval.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define S_MAX_SAMPLES 10000

//  One sample: flush L2, wait for the device, CALLS calls between two
//  events, the second recorded after a device-wide synchronisation.
//  FN NULL times an empty sample. Returns KF_CUDA_OK with *NS for the whole
//  interval; KF_CUDA_INCORRECT when kf_forward failed; KF_CUDA_CRASHED on a CUDA
//  error after the calls (*CUDA_RC); KF_CUDA_HARNESS otherwise.
static int
s_sample (kf_cuda_eval_t *e, kf_cuda_forward_fn *fn, kf_tensor_t *out_t, int calls, char phase,
          unsigned salt, double *ns, int *cuda_rc)
{
    *cuda_rc = 0;
    int rc = kf_cuda_eval_api->MemsetAsync (e->flush, (int) (salt & 0x7f), e->flush_bytes, e->stream);
    if (!rc) rc = kf_cuda_eval_api->DeviceSynchronize ();
    if (!rc) rc = kf_cuda_eval_api->EventRecord (e->ev0, e->stream);
    if (rc)
        return kf_cuda_harness (e, rc, "starting a sample");
    kf_eval_set_phase (phase);
    for (int k = 0; fn && k < calls; k++) {
        e->scratch.used = 0;
        if (fn (e->in_t, e->n_in, out_t, e->n_out, &e->ctx)) {
            *cuda_rc = kf_cuda_settle ();
            kf_eval_set_phase ('H');
            return *cuda_rc ? KF_CUDA_CRASHED : KF_CUDA_INCORRECT;
        }
    }
    *cuda_rc = kf_cuda_settle ();
    if (*cuda_rc) {
        kf_eval_set_phase ('H');
        return KF_CUDA_CRASHED;
    }
    rc = kf_cuda_eval_api->EventRecord (e->ev1, e->stream);
    if (!rc) rc = kf_cuda_eval_api->EventSynchronize (e->ev1);
    kf_eval_set_phase ('H');
    float ms = 0;
    if (!rc) rc = kf_cuda_eval_api->EventElapsedTime (&ms, e->ev0, e->ev1);
    if (rc)
        return kf_cuda_harness (e, rc, "reading sample events");
    *ns = ms * 1e6;
    return KF_CUDA_OK;
}

//  A failed sample as a verdict step, blaming the side that ran.
static int
s_sample_failed (kf_cuda_eval_t *e, int st, int is_ref, int cuda_rc)
{
    if (st == KF_CUDA_HARNESS)
        return st;
    if (is_ref) {
        snprintf (e->detail, sizeof e->detail, "reference failed during timing%s%s",
                  cuda_rc ? ": " : "", cuda_rc ? kf_cuda_err (cuda_rc) : "");
        return KF_CUDA_REF_FAILED;
    }
    if (st == KF_CUDA_CRASHED)
        snprintf (e->detail, sizeof e->detail, "timing: CUDA error in the candidate: %s",
                  kf_cuda_err (cuda_rc));
    else
        snprintf (e->detail, sizeof e->detail, "timing: candidate kf_forward returned non-zero");
    return st;
}

static int
s_calls_for (double per_call_ns)
{
    //  Samples of about a millisecond: far above the event resolution
    //  (about half a microsecond) and the subtracted overhead.
    double calls = per_call_ns > 0 ? ceil (1e6 / per_call_ns) : 1000;
    return calls < 1 ? 1 : calls > 100000 ? 100000 : (int) calls;
}

int
kf_cuda_time (kf_cuda_eval_t *e, json_t *timing, kf_cuda_timing_t *t)
{
    double min_time = kf_eval_num (timing, "min_time_s", 1);
    int min_samples = (int) kf_eval_num (timing, "min_samples", 10);
    double warmup_s = kf_eval_num (timing, "warmup_s", 1);
    int warmup_calls = (int) kf_eval_num (timing, "warmup_calls", 10);
    if (min_samples < 3)
        min_samples = 3;
    int cuda_rc, st;
    double ns;

    //  The fixed cost of a sample: synchronise, record, read back.
    double null_ns[16];
    for (int k = 0; k < 20; k++) {
        if ((st = s_sample (e, NULL, NULL, 0, 'H', (unsigned) k, &ns, &cuda_rc)))
            return st == KF_CUDA_HARNESS ? st : kf_cuda_harness (e, cuda_rc, "empty sample");
        if (k >= 4)
            null_ns[k - 4] = ns;
    }
    t->overhead_ns = kf_eval_median (null_ns, 16);

    //  Warm-up, interleaved, one call per sample, measuring each side's
    //  cost per call: what the correctness pass's calls left of the floor
    //  (kf_eval_warm_more). Without a reference kernel (PyTorch data) the
    //  candidate is timed alone, by the same protocol.
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double topup_from = kf_eval_now ();
    if (e->warm.since <= 0)
        e->warm.since = topup_from;
    while (kf_eval_warm_more (&e->warm, e->ref_fn != NULL, calls, kf_eval_now (), warmup_s,
                              warmup_calls)) {
        if (e->ref_fn) {
            if ((st = s_sample (e, e->ref_fn, e->ref_t, 1, 'R', (unsigned) calls, &ns, &cuda_rc)))
                return s_sample_failed (e, st, 1, cuda_rc);
            ref_total += fmax (ns - t->overhead_ns, 0);
        }
        if ((st = s_sample (e, e->cand_fn, e->cand_t, 1, 'C', (unsigned) calls, &ns, &cuda_rc)))
            return s_sample_failed (e, st, 0, cuda_rc);
        cand_total += fmax (ns - t->overhead_ns, 0);
        calls++;
    }
    double sampling_from = kf_eval_now ();
    t->warmup_s = sampling_from - e->warm.since;
    t->topup_s = sampling_from - topup_from;
    t->counted = kf_eval_warm_counted (&e->warm, e->ref_fn != NULL);
    t->topup = calls;
    t->ref_calls = s_calls_for (ref_total / calls);
    t->cand_calls = s_calls_for (cand_total / calls);
    //  A single cold call overstates the cost of calls in a loop; one
    //  trial sample each corrects the count.
    for (int side = e->ref_fn ? 0 : 1; side < 2; side++) {
        int *n = side ? &t->cand_calls : &t->ref_calls;
        if ((st = s_sample (e, side ? e->cand_fn : e->ref_fn, side ? e->cand_t : e->ref_t,
                            *n, side ? 'C' : 'R', 0, &ns, &cuda_rc)))
            return s_sample_failed (e, st, !side, cuda_rc);
        double net = ns - t->overhead_ns;
        if (net < 0.9e6)
            *n = s_calls_for (fmax (net, 1) / *n);
    }

    t->ref_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    t->cand_ns = malloc (S_MAX_SAMPLES * sizeof (double));
    if (!t->ref_ns || !t->cand_ns) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
        return KF_CUDA_HARNESS;
    }
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < S_MAX_SAMPLES) {
        unsigned salt = (unsigned) t->samples;
        double ref_ns = 0, cand_ns;
        if (e->ref_fn
            && (st = s_sample (e, e->ref_fn, e->ref_t, t->ref_calls, 'R', salt, &ref_ns, &cuda_rc)))
            return s_sample_failed (e, st, 1, cuda_rc);
        if ((st = s_sample (e, e->cand_fn, e->cand_t, t->cand_calls, 'C', salt + 1, &cand_ns, &cuda_rc)))
            return s_sample_failed (e, st, 0, cuda_rc);
        //  Never let the subtraction eat a sample: a floor of 0.1% of it.
        t->ref_ns[t->samples] = e->ref_fn ? fmax (ref_ns - t->overhead_ns, ref_ns * 1e-3) / t->ref_calls : 0;
        t->cand_ns[t->samples] = fmax (cand_ns - t->overhead_ns, cand_ns * 1e-3) / t->cand_calls;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
    }
    t->measured_s = measured;
    t->sampling_s = kf_eval_now () - sampling_from;
    return KF_CUDA_OK;
}
