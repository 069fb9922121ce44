/*  kf_eval_protocol.c - the timing protocol of every judge
 *  (kf_eval_protocol.h), written once.
 *
 *  Warm-up: interleaved rounds of one call of each side (of the
 *  candidate alone when no reference runs beside it), each measuring
 *  that side's cost per call, until the floors are met; the correctness
 *  pass's calls of the main shape count towards them, so the warm-up
 *  only tops up what they left (kf_eval_warm_t). The calls per sample
 *  follow from that cost and each side's window; a single cold call
 *  overstates the cost of calls in a loop, so where the backend asks
 *  for it one trial sample of each side corrects the count. Then
 *  samples alternate, reference then candidate, with the same calls
 *  each time, until there are min_samples of them and min_time of
 *  measured time: the speedup is a paired ratio that noise on the host
 *  or the device affects on both sides alike.
 *
 *  Each sample's fixed cost (the backend's overhead_ns, cand_overhead_ns)
 *  is taken off, never more than 99.9% of it. Where a sample fails, the
 *  reference is blamed for its own ("reference failed during timing"),
 *  the candidate's account stays as its sample wrote it, and a failure
 *  of the harness is no side's.
 *
 *  A sample whose side waited for a CPU past kf_eval_disturbed's share
 *  of its time measured the host's other work as much as the kernel
 *  (round 25: 5.6 and 13.4 ms for one kernel in two evaluations). Where
 *  the backend measures that wait, the pair is marked; past the floors
 *  the samples go on, for at most KF_EVAL_EXTRA_SHARE of the time the
 *  floors took again, until min_samples pairs are undisturbed, and the
 *  figures are taken over those alone (kf_eval_undisturbed); when they
 *  do not come, over every pair, and the result says which.
 */
#include "kf_eval_protocol.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  One sample of SIDE, CALLS calls, number N, SALT.
static int
s_sample (const kf_eval_timer_t *p, const kf_eval_timing_t *t, kf_eval_sample_t *s, int side,
          int calls, int n, unsigned salt)
{
    s->side = side;
    s->calls = calls;
    s->sample = n;
    s->salt = salt;
    s->ns = 0;
    s->wait_ns = -1;
    s->why[0] = 0;
    return p->sample (p->arg, t, s);
}

//  A failed sample as a verdict step, blaming the side that ran.
static int
s_failed (const kf_eval_timer_t *p, const kf_eval_sample_t *s, int st)
{
    if (st >= KF_EVAL_ST_HARNESS)
        return st;
    if (s->side == KF_EVAL_CAND)
        return st;                      // the candidate's own account is in the detail
    snprintf (p->detail, p->detail_size, "reference failed during timing%s%s",
              s->why[0] ? ": " : "", s->why);
    return KF_EVAL_ST_REF_FAILED;
}

//  Sample S's wait for a CPU, where its backend measured one, into T's
//  sums; *DISTURBED set when it was past kf_eval_disturbed's share.
static void
s_note_wait (kf_eval_timing_t *t, const kf_eval_sample_t *s, bool *disturbed)
{
    if (!(s->wait_ns >= 0))
        return;
    t->waits_known = true;
    t->wait_s += s->wait_ns * 1e-9;
    t->wall_s += s->ns * 1e-9;
    if (s->side == KF_EVAL_CAND) {
        t->cand_wait_s += s->wait_ns * 1e-9;
        t->cand_wall_s += s->ns * 1e-9;
    }
    *disturbed |= kf_eval_disturbed (s->wait_ns, s->ns);
}

static int
s_out_of_memory (const kf_eval_timer_t *p)
{
    snprintf (p->detail, p->detail_size, "harness: out of memory for samples");
    return p->harness_st;
}

int
kf_eval_time (const kf_eval_timer_t *p, json_t *timing, kf_eval_timing_t *t)
{
    kf_eval_floors_t fl;
    kf_eval_floors (timing, &fl);
    bool prefer = p->undisturbed
                  && !json_is_false (json_object_get (timing, "prefer_undisturbed"));
    kf_eval_warm_t none = { 0 }, *warm = p->warm ? p->warm : &none;
    kf_eval_sample_t s;
    int st;

    //  Warm-up, interleaved, one call per sample, measuring each side's
    //  cost per call: what the correctness pass's calls left of the floor
    //  (kf_eval_warm_more). Without a reference (PyTorch data) the
    //  candidate is timed alone, by the same protocol.
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double topup_from = kf_eval_now ();
    if (warm->since <= 0)
        warm->since = topup_from;
    while (kf_eval_warm_more (warm, p->paired, calls, kf_eval_now (), fl.warmup_s,
                              fl.warmup_calls)) {
        if (p->paired) {
            if ((st = s_sample (p, t, &s, KF_EVAL_REF, 1, KF_EVAL_WARMUP, (unsigned) calls)))
                return s_failed (p, &s, st);
            ref_total += fmax (s.ns - t->overhead_ns, 0);
        }
        if ((st = s_sample (p, t, &s, KF_EVAL_CAND, 1, KF_EVAL_WARMUP, (unsigned) calls)))
            return s_failed (p, &s, st);
        cand_total += fmax (s.ns - t->cand_overhead_ns, 0);
        calls++;
    }
    double sampling_from = kf_eval_now ();
    t->warmup_s = sampling_from - warm->since;
    t->topup_s = sampling_from - topup_from;
    t->counted = kf_eval_warm_counted (warm, p->paired);
    t->topup = calls;
    t->ref_calls = kf_eval_calls_for (ref_total / calls, p->target_ns[0], p->max_calls[0]);
    t->cand_calls = kf_eval_calls_for (cand_total / calls, p->target_ns[1], p->max_calls[1]);
    //  A single cold call overstates the cost of calls in a loop; one
    //  trial sample each corrects the count.
    for (int side = p->paired ? KF_EVAL_REF : KF_EVAL_CAND; p->trial && side <= KF_EVAL_CAND;
         side++) {
        int *n = side ? &t->cand_calls : &t->ref_calls;
        if ((st = s_sample (p, t, &s, side, *n, KF_EVAL_TRIAL, 0)))
            return s_failed (p, &s, st);
        double net = s.ns - (side ? t->cand_overhead_ns : t->overhead_ns);
        if (net < 0.9 * p->target_ns[side])
            *n = kf_eval_calls_for (fmax (net, 1) / *n, p->target_ns[side], p->max_calls[side]);
    }

    int cap = 64;
    t->ref_ns = malloc ((size_t) cap * sizeof (double));
    t->cand_ns = malloc ((size_t) cap * sizeof (double));
    t->disturbed = malloc ((size_t) cap);
    if (!t->ref_ns || !t->cand_ns || !t->disturbed)
        return s_out_of_memory (p);
    double measured = 0, floors_took = -1;
    t->samples = 0;
    while (t->samples < p->max_samples) {
        if (t->samples >= fl.min_samples && measured >= fl.min_time_s) {
            //  The floors are met: more samples only while too few pairs
            //  are undisturbed, for a bounded time.
            if (floors_took < 0)
                floors_took = measured;
            //  None of the floors' pairs clean: the host is busy all
            //  along, and more samples would only measure its load again
            //  (the suite's hosts: every sample waits, and every timing
            //  doubled its sampling for nothing).
            if (!prefer || t->samples - t->disturbed_n >= fl.min_samples
                || measured >= floors_took * (1 + KF_EVAL_EXTRA_SHARE)
                || t->disturbed_n == t->samples)
                break;
        }
        unsigned salt = (unsigned) t->samples;
        double ref_ns = 0, cand_ns;
        bool disturbed = false;
        if (p->paired) {
            if ((st = s_sample (p, t, &s, KF_EVAL_REF, t->ref_calls, t->samples, salt)))
                return s_failed (p, &s, st);
            ref_ns = s.ns;
            s_note_wait (t, &s, &disturbed);
        }
        if ((st = s_sample (p, t, &s, KF_EVAL_CAND, t->cand_calls, t->samples, salt + 1)))
            return s_failed (p, &s, st);
        cand_ns = s.ns;
        s_note_wait (t, &s, &disturbed);
        t->disturbed[t->samples] = disturbed;
        t->disturbed_n += disturbed;
        //  Never let the subtraction eat a sample: a floor of 0.1% of it.
        t->ref_ns[t->samples] = p->paired ? fmax (ref_ns - t->overhead_ns, ref_ns * 1e-3)
                                            / t->ref_calls : 0;
        t->cand_ns[t->samples] = fmax (cand_ns - t->cand_overhead_ns, cand_ns * 1e-3)
                                 / t->cand_calls;
        t->cand_s += cand_ns * 1e-9;
        t->samples++;
        measured += (ref_ns + cand_ns) * 1e-9;
        t->measured_s = measured;
        t->sampling_s = kf_eval_now () - sampling_from;
        if (t->samples == cap) {
            cap *= 2;
            double *r = realloc (t->ref_ns, (size_t) cap * sizeof (double));
            if (r)
                t->ref_ns = r;
            double *c = realloc (t->cand_ns, (size_t) cap * sizeof (double));
            if (c)
                t->cand_ns = c;
            unsigned char *d = realloc (t->disturbed, (size_t) cap);
            if (d)
                t->disturbed = d;
            if (!r || !c || !d)
                break;
        }
    }
    t->measured_s = measured;
    t->sampling_s = kf_eval_now () - sampling_from;
    t->taken = t->samples;
    kf_eval_undisturbed (t, fl.min_samples, prefer);
    return KF_EVAL_ST_OK;
}

bool
kf_eval_disturbed (double wait_ns, double wall_ns)
{
    return wait_ns >= 0 && wait_ns > KF_EVAL_WAIT_SHARE * fmax (wall_ns, 0) + KF_EVAL_WAIT_FLOOR_NS;
}

void
kf_eval_undisturbed (kf_eval_timing_t *t, int min_samples, bool prefer)
{
    t->undisturbed_only = t->disturbed_n == 0;
    if (!prefer || t->disturbed_n == 0 || !t->disturbed || t->taken - t->disturbed_n < min_samples)
        return;
    int kept = 0;
    for (int i = 0; i < t->taken; i++)
        if (!t->disturbed[i]) {
            t->ref_ns[kept] = t->ref_ns[i];
            t->cand_ns[kept] = t->cand_ns[i];
            kept++;
        }
    t->samples = kept;
    t->undisturbed_only = true;
}

void
kf_eval_timing_free (kf_eval_timing_t *t)
{
    free (t->ref_ns);
    free (t->cand_ns);
    free (t->disturbed);
    t->ref_ns = t->cand_ns = NULL;
    t->disturbed = NULL;
}

json_t *
kf_eval_protocol_json (const kf_eval_timing_t *t)
{
    json_t *o = json_pack ("{s:f, s:i, s:i, s:i, s:f, s:f, s:f}", "warmup_s", t->warmup_s,
                           "warmup_calls", t->counted + t->topup, "correctness_calls",
                           t->counted, "topup_calls", t->topup, "topup_s", t->topup_s,
                           "sampling_s", t->sampling_s, "measured_s", t->measured_s);
    if (o && t->waits_known) {
        double share = t->wall_s > 0 ? t->wait_s / t->wall_s : 0;
        json_object_set_new (o, "samples", json_integer (t->taken));
        json_object_set_new (o, "samples_disturbed", json_integer (t->disturbed_n));
        json_object_set_new (o, "run_delay_share", json_real (round (share * 1e4) / 1e4));
        json_object_set_new (o, "undisturbed_only", json_boolean (t->undisturbed_only));
    }
    return o;
}
