/*  kf_host_timing.c - the host judge's timing protocol (kf_host_eval.h).
 *
 *  Reference and candidate samples are interleaved with the same protocol
 *  and their tensors flushed from the caches before each, so the speedup is a paired ratio that
 *  host noise affects equally. The judge's clock times both: the
 *  reference's calls in the judge, the candidate's from resuming its
 *  process to its answer (kf_runner.h), so the candidate's own clock,
 *  whatever it does to it, is never asked.
 *
 *  Every call of every sample runs on inputs no call has seen before -
 *  the last correctness set with each tensor rotated by an offset of its
 *  own, a permutation of the same independent draws, in a copy of the
 *  tensors of its own (kf_run_layout_t's variants) - so a kernel that
 *  remembers answers by a fingerprint of its inputs has nothing to
 *  remember, and one that skips work when its output already holds an
 *  answer never finds one. The reference's batch gives the right answers
 *  for those inputs; the candidate's outputs are poisoned before its
 *  batch and every one checked after it, its inputs too. A batch has at
 *  most as many calls as there are copies. With exported PyTorch data (no
 *  reference kernel to run) the calls go through the exported sets
 *  instead.
 */
#include "kf_host_eval.h"
#include "kf_perf_gate.h"
#include "kf_task.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

//  A sample's window: long enough that the round trip to the candidate's
//  process (tens of microseconds) is under 1% of it.
#define S_WINDOW_S 4e-3

//  Each sample starts cold, like the first call of a real model step,
//  for both sides alike: the lines of every tensor of the batch (inputs,
//  the candidate's and the reference's outputs, every copy used) are
//  flushed from every cache level with clflush, which reaches the same
//  memory as the candidate's process maps it. That costs what the tensors
//  take, where writing a buffer twice the last-level cache costs what the
//  cache takes (0.2 s a sample on a host that reports 480 MiB). Elsewhere
//  than x86 the buffer is written.
static void
s_evict_range (const void *p, size_t bytes)
{
#if defined(__x86_64__)
    const char *c = (const char *) ((uintptr_t) p & ~(uintptr_t) 63);
    for (const char *end = (const char *) p + bytes; c < end; c += 64)
        _mm_clflush (c);
#else
    (void) p;
    (void) bytes;
#endif
}

static void
s_flush (kf_host_eval_t *e, int used, unsigned char *buf, size_t size, unsigned salt)
{
#if defined(__x86_64__)
    (void) buf;
    (void) size;
    (void) salt;
    for (int v = 0; v < used; v++) {
        for (int i = 0; i < e->n_in; i++)
            s_evict_range (e->in_buf[v][i].data, e->in[i].bytes);
        for (int o = 0; o < e->n_out; o++) {
            s_evict_range (e->cand_buf[v][o].data, e->out[o].bytes);
            if (e->ref_var[v][o])
                s_evict_range (e->ref_var[v][o], e->out[o].bytes);
        }
    }
    _mm_mfence ();
#else
    (void) e;
    (void) used;
    memset (buf, (int) (salt & 0xff), size);
    volatile unsigned char sink = buf[size / 2];
    (void) sink;
#endif
}

static uint64_t
s_mix (uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

//  Variant V of sample SAMPLE's inputs into EXPECT (the judge's copies)
//  and the shared buffers; REF the right outputs when they are known in
//  advance (the exported data), else left alone. Returns whether the
//  inputs are new to every call.
static bool
s_variant_inputs (kf_host_eval_t *e, int sample, int v, void **expect, const void **ref)
{
    const kf_eval_refdata_t *rd = e->rd;
    bool fresh = false;
    if (rd) {
        int set = (sample * e->variants + v) % rd->n_sets;
        for (int i = 0; i < e->n_in; i++)
            memcpy (expect[i], e->data + rd->in_off[set * rd->n_in + i], e->in[i].bytes);
        for (int o = 0; o < e->n_out; o++)
            ref[o] = e->data + rd->out_off[set * rd->n_out + o];
        e->ctx.scalars = rd->values + (size_t) set * (size_t) rd->n_scalars;
    }
    else
        for (int i = 0; i < e->n_in; i++) {
            size_t n = e->in[i].numel, es = kf_dtype_size (e->in[i].dtype);
            uint64_t key = e->seed ^ ((uint64_t) sample << 24 | (uint64_t) v << 12 | (uint64_t) i);
            size_t r = n > 1 ? (size_t) (s_mix (key) % (n - 1)) + 1 : 0;
            const char *base = e->in_clone[i];
            memcpy (expect[i], base + r * es, (n - r) * es);
            memcpy ((char *) expect[i] + (n - r) * es, base, r * es);
            fresh |= r != 0;
        }
    for (int i = 0; i < e->n_in; i++)
        memcpy (e->in_buf[v][i].data, expect[i], e->in[i].bytes);
    return fresh;
}

//  Calls of a batch: about S_WINDOW_S of them, at most one per variant.
static int
s_calls_for (double per_call, int variants)
{
    int calls = per_call > 0 ? (int) ceil (S_WINDOW_S / per_call) : variants;
    return calls < 1 ? 1 : calls > variants ? variants : calls;
}

int
kf_host_time (kf_host_eval_t *e, json_t *timing, kf_host_timing_t *t)
{
    kf_eval_floors_t fl;
    kf_eval_floors (timing, &fl);
    double min_time = fl.min_time_s, warmup_s = fl.warmup_s;
    int min_samples = fl.min_samples, warmup_calls = fl.warmup_calls;
    const int max_samples = 100000;
    bool paired = e->ref_fn != NULL;

#if defined(__x86_64__)
    size_t flush_size = 1;          // clflush needs no buffer
#else
    long llc = sysconf (_SC_LEVEL3_CACHE_SIZE);
    size_t flush_size = 2 * (size_t) (llc > 0 ? llc : 32 << 20);
#endif
    unsigned char *flush = malloc (flush_size);
    void *expect[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    const void *ref[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    memset (expect, 0, sizeof expect);
    memset (ref, 0, sizeof ref);
    int st = KF_HOST_OK;
    bool ok = flush != NULL;
    //  A profile's counters, on only around the candidate's timed batches
    //  (kf_perf_gate.h); without perf_control, nothing.
    kf_perf_gate_t gate;
    kf_perf_gate_open (&gate, json_object_get (timing, "perf_control"));
    for (int v = 0; ok && v < e->variants; v++)
        for (int i = 0; ok && i < e->n_in; i++)
            ok = (expect[v][i] = malloc (e->in[i].bytes ? e->in[i].bytes : 1)) != NULL;
    if (!ok) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for the timing");
        st = KF_HOST_CRASHED;
        goto done;
    }

    //  Warm-up, interleaved, on the last set (variant 0), measuring each
    //  side's cost per call: what the correctness pass's calls left of
    //  the floor.
    double ref_total = 0, cand_total = 0;
    int calls = 0;
    double topup_from = kf_eval_now ();
    if (e->warm.since <= 0)
        e->warm.since = topup_from;
    while (kf_eval_warm_more (&e->warm, paired, calls, kf_eval_now (), warmup_s, warmup_calls)) {
        double t0 = kf_eval_now ();
        if (paired && kf_host_ref_call (e, 0)) {
            snprintf (e->detail, sizeof e->detail, "reference kf_forward failed during the warm-up");
            st = KF_HOST_REF_FAILED;
            goto done;
        }
        ref_total += kf_eval_now () - t0;
        double wall;
        if ((st = kf_host_cand_call (e, 1, &wall, "warm-up")) != KF_HOST_OK)
            goto done;
        cand_total += wall;
        calls++;
    }
    double sampling_from = kf_eval_now ();
    t->warmup_s = sampling_from - e->warm.since;
    t->topup_s = sampling_from - topup_from;
    t->counted = kf_eval_warm_counted (&e->warm, paired);
    t->topup = calls;
    t->ref_calls = s_calls_for (ref_total / calls, e->variants);
    t->cand_calls = s_calls_for (cand_total / calls, e->variants);
    int used = t->ref_calls > t->cand_calls ? t->ref_calls : t->cand_calls;

    int cap = 64;
    t->ref_ns = malloc ((size_t) cap * sizeof (double));
    t->cand_ns = malloc ((size_t) cap * sizeof (double));
    double measured = 0;
    t->samples = 0;
    while ((t->samples < min_samples || measured < min_time) && t->samples < max_samples) {
        if (!t->ref_ns || !t->cand_ns) {
            snprintf (e->detail, sizeof e->detail, "harness: out of memory for samples");
            st = KF_HOST_CRASHED;
            goto done;
        }
        char when[64];
        snprintf (when, sizeof when, "timing sample %d", t->samples);
        bool fresh = true;
        for (int v = 0; v < used; v++) {
            fresh &= s_variant_inputs (e, t->samples, v, expect[v], ref[v]);
            for (int o = 0; o < e->n_out; o++) {
                kf_eval_poison (e->out[o].dtype, e->cand_buf[v][o].data, e->out[o].numel);
                if (paired)
                    kf_eval_poison (e->out[o].dtype, e->ref_var[v][o], e->out[o].numel);
            }
        }
        t->fresh_inputs += fresh;
        //  Without a reference kernel (PyTorch data) the candidate is
        //  timed alone, by the same protocol.
        double ref_s = 0;
        if (paired) {
            s_flush (e, used, flush, flush_size, (unsigned) t->samples);
            double t0 = kf_eval_now ();
            for (int k = 0; k < t->ref_calls; k++)
                if (kf_host_ref_call (e, k)) {
                    snprintf (e->detail, sizeof e->detail, "reference kf_forward failed during timing");
                    st = KF_HOST_REF_FAILED;
                    goto done;
                }
            ref_s = kf_eval_now () - t0;
            //  The right answers of the variants the reference's batch
            //  did not reach, untimed; then the inputs as they were.
            for (int v = t->ref_calls; v < used; v++)
                if (kf_host_ref_call (e, v)) {
                    snprintf (e->detail, sizeof e->detail, "reference kf_forward failed during timing");
                    st = KF_HOST_REF_FAILED;
                    goto done;
                }
            for (int v = 0; v < used; v++) {
                for (int o = 0; o < e->n_out; o++)
                    ref[v][o] = e->ref_var[v][o];
                for (int i = 0; i < e->n_in; i++)
                    memcpy (e->in_buf[v][i].data, expect[v][i], e->in[i].bytes);
            }
        }
        s_flush (e, used, flush, flush_size, (unsigned) t->samples + 1);
        double cand_s;
        kf_perf_gate_set (&gate, true);
        st = kf_host_cand_call (e, t->cand_calls, &cand_s, when);
        kf_perf_gate_set (&gate, false);
        if (st != KF_HOST_OK)
            goto done;
        for (int v = 0; v < t->cand_calls; v++) {
            if ((st = kf_host_check_memory (e, v, expect[v], when)) != KF_HOST_OK)
                goto done;
            if (kf_host_compare (e, v, (void *const *) ref[v], when)) {
                st = KF_HOST_INCORRECT;
                goto done;
            }
        }
        t->ref_ns[t->samples] = ref_s * 1e9 / t->ref_calls;
        t->cand_ns[t->samples] = cand_s * 1e9 / t->cand_calls;
        t->cand_wall_s += cand_s;
        t->samples++;
        measured += ref_s + cand_s;
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
            if (!r || !c)
                break;
        }
    }
done:
    kf_perf_gate_close (&gate);
    for (int v = 0; v < KF_RUN_MAX_VARIANTS; v++)
        for (int i = 0; i < e->n_in; i++)
            free (expect[v][i]);
    free (flush);
    return st;
}
