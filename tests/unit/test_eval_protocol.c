/*  test_eval_protocol.c - the timing protocol every judge shares
 *  (exec-worker/kf_eval_protocol.c), through its interface: a backend
 *  whose samples take a known time per call, a known fixed cost, and a
 *  first call dearer than the rest (a cold call), as a device's do. The
 *  warm-up tops up the correctness pass's calls, the call counts follow
 *  the windows and caps, the trial sample corrects a count a cold call
 *  overstated, samples alternate with their salts, the fixed cost is
 *  taken off but never more than 99.9% of a sample, and a failed sample
 *  is blamed on the side that ran. The backends' own samples are proved
 *  by test_eval, test_cuda, test_ocl, test_ze and test_hostile. */
#include "../../exec-worker/kf_eval_protocol.h"
#include "../kf_test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//  A backend whose calls cost PER_CALL_NS each (COLD_NS for a warm-up
//  call, which runs alone), plus FIXED_NS a sample; FAIL_SIDE fails at
//  sample FAIL_AT with FAIL_ST. It records what it was asked.
typedef struct {
    double per_call_ns, cold_ns, fixed_ns[2];
    int fail_side, fail_at, fail_st;
    int asked[2], warmups[2], trials[2];
    int order[64], n_order;          // 2 * side + (salt == sample + side) of each sample
    char detail[256];
} s_backend_t;

static int
s_sample (void *arg, const kf_eval_timing_t *t, kf_eval_sample_t *s)
{
    s_backend_t *b = arg;
    (void) t;
    b->asked[s->side]++;
    if (s->sample == KF_EVAL_WARMUP)
        b->warmups[s->side]++;
    if (s->sample == KF_EVAL_TRIAL)
        b->trials[s->side]++;
    if (s->sample >= 0 && b->n_order < 64)
        b->order[b->n_order++] = 2 * s->side + (s->salt == (unsigned) (s->sample + s->side));
    if (s->side == b->fail_side && s->sample == b->fail_at) {
        if (s->side == KF_EVAL_REF)
            snprintf (s->why, sizeof s->why, "device lost");
        else
            snprintf (b->detail, sizeof b->detail, "timing sample %d: the candidate's account",
                      s->sample);
        return b->fail_st;
    }
    s->ns = b->fixed_ns[s->side]
            + (s->sample == KF_EVAL_WARMUP ? b->cold_ns : s->calls * b->per_call_ns);
    return KF_EVAL_ST_OK;
}

static kf_eval_timer_t
s_timer (s_backend_t *b, bool paired, bool trial, kf_eval_warm_t *warm)
{
    kf_eval_timer_t p = {
        .sample = s_sample, .arg = b, .paired = paired, .trial = trial,
        .target_ns = { 1e6, 4e6 }, .max_calls = { 100000, 100000 }, .max_samples = 10000,
        .warm = warm, .harness_st = KF_EVAL_ST_HARNESS, .detail = b->detail,
        .detail_size = sizeof b->detail
    };
    return p;
}

static json_t *
s_floors (int min_samples, int warmup_calls)
{
    return json_pack ("{s:f, s:i, s:f, s:i}", "min_time_s", 0.0, "min_samples", min_samples,
                      "warmup_s", 0.0, "warmup_calls", warmup_calls);
}

//  Paired, with a trial: the counts, the top-up, the order, the figures.
static void
s_paired (void)
{
    s_backend_t b = { .per_call_ns = 1000, .cold_ns = 5000, .fixed_ns = { 200, 50000 },
                      .fail_side = -1 };
    kf_eval_warm_t warm = { .since = kf_eval_now (), .ref_calls = 7, .cand_calls = 7 };
    kf_eval_timer_t p = s_timer (&b, true, true, &warm);
    kf_eval_timing_t t = { .overhead_ns = 200, .cand_overhead_ns = 50000 };
    json_t *floors = s_floors (5, 10);
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_OK);
    //  7 correctness calls counted: 3 rounds top up to the floor of 10.
    CHECK (t.counted == 7 && t.topup == 3);
    CHECK (b.warmups[0] == 3 && b.warmups[1] == 3);
    //  The cold call said 5 us a call; the trial found 1 us, and the
    //  counts fill each side's window.
    CHECK (b.trials[0] == 1 && b.trials[1] == 1);
    CHECK (t.ref_calls == 1000 && t.cand_calls == 4000);
    //  Five pairs, reference first, each with its salt.
    CHECK (t.samples == 5 && b.n_order == 10);
    for (int k = 0; k < b.n_order; k++)
        CHECK (b.order[k] == (k % 2 ? 3 : 1));
    //  The fixed cost taken off: exactly a microsecond a call each.
    for (int k = 0; k < t.samples; k++)
        CHECK (fabs (t.ref_ns[k] - 1000) < 1e-6 && fabs (t.cand_ns[k] - 1000) < 1e-6);
    CHECK (fabs (t.measured_s - 5 * (1e-3 + 4e-3 + 50e-6 + 200e-9)) < 1e-9);
    CHECK (fabs (t.cand_s - 5 * (4e-3 + 50e-6)) < 1e-9);
    json_t *j = kf_eval_protocol_json (&t);
    CHECK (json_integer_value (json_object_get (j, "warmup_calls")) == 10
           && json_integer_value (json_object_get (j, "correctness_calls")) == 7
           && json_integer_value (json_object_get (j, "topup_calls")) == 3);
    json_decref (j);
    kf_eval_timing_free (&t);
    json_decref (floors);
}

//  No trial (the host's): the cold call's count stands. No reference
//  (exported data): the candidate alone, the reference's figures 0.
static void
s_alone (void)
{
    s_backend_t b = { .per_call_ns = 1000, .cold_ns = 4000, .fail_side = -1 };
    kf_eval_timer_t p = s_timer (&b, false, false, NULL);
    p.max_calls[1] = 64;
    kf_eval_timing_t t = { 0 };
    json_t *floors = s_floors (3, 2);
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_OK);
    CHECK (b.asked[0] == 0 && b.trials[1] == 0 && t.topup == 2 && t.counted == 0);
    CHECK (t.cand_calls == 64);     // 4e6 / 4000 = 1000, capped
    CHECK (t.samples == 3 && t.ref_ns[0] == 0 && fabs (t.cand_ns[2] - 1000) < 1e-6);
    kf_eval_timing_free (&t);
    json_decref (floors);
}

//  A fixed cost above the sample: a floor of 0.1% of it, never zero or
//  less; and more samples than the first arrays hold.
static void
s_floor_and_growth (void)
{
    s_backend_t b = { .per_call_ns = 10, .cold_ns = 10, .fixed_ns = { 0, 0 }, .fail_side = -1 };
    kf_eval_timer_t p = s_timer (&b, true, false, NULL);
    p.max_calls[0] = p.max_calls[1] = 1;
    kf_eval_timing_t t = { .overhead_ns = 1000, .cand_overhead_ns = 1000 };
    json_t *floors = s_floors (150, 1);
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_OK);
    CHECK (t.samples == 150 && fabs (t.ref_ns[149] - 0.01) < 1e-9
           && fabs (t.cand_ns[100] - 0.01) < 1e-9);
    kf_eval_timing_free (&t);
    p.max_samples = 7;
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_OK && t.samples == 7);
    kf_eval_timing_free (&t);
    json_decref (floors);
}

//  Who a failure is blamed on: the reference for its own, with its
//  device's error; the candidate's account as it wrote it; the harness
//  as it said.
static void
s_blame (void)
{
    json_t *floors = s_floors (5, 1);
    s_backend_t b = { .per_call_ns = 1000, .cold_ns = 1000, .fail_side = KF_EVAL_REF,
                      .fail_at = 2, .fail_st = KF_EVAL_ST_CRASHED };
    kf_eval_timer_t p = s_timer (&b, true, true, NULL);
    kf_eval_timing_t t = { 0 };
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_REF_FAILED);
    CHECK (!strcmp (b.detail, "reference failed during timing: device lost"));
    kf_eval_timing_free (&t);

    s_backend_t c = { .per_call_ns = 1000, .cold_ns = 1000, .fail_side = KF_EVAL_CAND,
                      .fail_at = 3, .fail_st = KF_EVAL_ST_INCORRECT };
    p = s_timer (&c, true, true, NULL);
    memset (&t, 0, sizeof t);
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_INCORRECT);
    CHECK (!strcmp (c.detail, "timing sample 3: the candidate's account"));
    kf_eval_timing_free (&t);

    s_backend_t h = { .per_call_ns = 1000, .cold_ns = 1000, .fail_side = KF_EVAL_REF,
                      .fail_at = KF_EVAL_WARMUP, .fail_st = KF_EVAL_ST_HARNESS };
    snprintf (h.detail, sizeof h.detail, "harness: flushing the cache");
    p = s_timer (&h, true, true, NULL);
    memset (&t, 0, sizeof t);
    CHECK (kf_eval_time (&p, floors, &t) == KF_EVAL_ST_HARNESS);
    CHECK (!strcmp (h.detail, "harness: flushing the cache") && t.ref_ns == NULL);
    kf_eval_timing_free (&t);
    json_decref (floors);
}

int
main (void)
{
    s_paired ();
    s_alone ();
    s_floor_and_growth ();
    s_blame ();
    return kf_test_done ("test_eval_protocol");
}
