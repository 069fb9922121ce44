/*  kf_host_timing.c - the host judge's samples under the judges' one
 *  timing protocol (kf_eval_protocol.h: warm-up, calls per sample, the
 *  paired sample loop, failure attribution; kf_host_eval.h).
 *
 *  Reference and candidate samples alternate, their tensors flushed from
 *  the caches before each, so the speedup is a paired ratio that host
 *  noise affects equally. The judge's clock times both: the
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
 *
 *  Around each timed batch, outside its clock, the judge reads how long
 *  the batch's side waited for a CPU (kf_host_wait.h) and tells the
 *  protocol, which prefers the pairs in which neither side waited.
 */
#include "kf_host_eval.h"
#include "kf_host_wait.h"
#include "kf_perf_gate.h"
#include "kf_task.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

//  A sample's window: long enough that the round trip to the candidate's
//  process (tens of microseconds) is under 1% of it.
#define S_WINDOW_S 4e-3

//  A warm-up call on one CPU past this many times the kernel's time on
//  every CPU ends the one-core timing (kf_host_time_one_core).
#define S_ONE_CORE_LIMIT 20.0

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

//  The host's side of the protocol: its buffers for one timing.
typedef struct {
    kf_host_eval_t *e;
    kf_host_timing_t *t;
    unsigned char *flush;
    size_t flush_size;
    kf_perf_gate_t gate;
    const char *proc_stat;
    //  Timing on one CPU (kf_host_time_one_core): the candidate alone,
    //  on one set of inputs whose right answers are made once.
    bool one_core, ready;
    int ready_used;
    double limit_ns;         // a warm-up call past this ends it
    void *expect[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    const void *ref[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
} s_timer_t;

//  Sample N's inputs for the USED variants its batches reach, each
//  candidate output poisoned (and the reference's, when it runs).
static void
s_sample_inputs (s_timer_t *h, int n, int used, bool paired)
{
    kf_host_eval_t *e = h->e;
    bool fresh = true;
    for (int v = 0; v < used; v++) {
        fresh &= s_variant_inputs (e, n, v, h->expect[v], h->ref[v]);
        for (int o = 0; o < e->n_out; o++) {
            kf_eval_poison (e->out[o].dtype, e->cand_buf[v][o].data, e->out[o].numel);
            if (paired)
                kf_eval_poison (e->out[o].dtype, e->ref_var[v][o], e->out[o].numel);
        }
    }
    h->t->fresh_inputs += fresh;
}

//  The reference's batch of sample N: CALLS calls timed (*WAIT_NS the
//  judge's wait for a CPU meanwhile, when asked), then, untimed, the
//  right answers of the variants the batch did not reach, and the inputs
//  as they were.
static int
s_ref_batch (s_timer_t *h, int calls, int used, unsigned salt, double *ns, double *wait_ns)
{
    kf_host_eval_t *e = h->e;
    s_flush (e, used, h->flush, h->flush_size, salt);
    kf_host_wait_t w;
    if (wait_ns)
        kf_host_wait_begin (&w, 0);
    double t0 = kf_eval_now ();
    for (int k = 0; k < calls; k++)
        if (kf_host_ref_call (e, k))
            return KF_HOST_REF_FAILED;
    *ns = (kf_eval_now () - t0) * 1e9;
    if (wait_ns)
        *wait_ns = kf_host_wait_end (&w);
    for (int v = calls; v < used; v++)
        if (kf_host_ref_call (e, v))
            return KF_HOST_REF_FAILED;
    for (int v = 0; v < used; v++) {
        for (int o = 0; o < e->n_out; o++)
            h->ref[v][o] = e->ref_var[v][o];
        for (int i = 0; i < e->n_in; i++)
            memcpy (e->in_buf[v][i].data, h->expect[v][i], e->in[i].bytes);
    }
    return KF_HOST_OK;
}

//  The candidate's batch of sample N: CALLS calls in its process, the
//  perf counters on around them (*WAIT_NS its threads' and the judge's
//  wait for a CPU meanwhile), then every variant it used checked.
static int
s_cand_batch (s_timer_t *h, int n, int calls, int used, unsigned salt, double *ns,
              double *wait_ns)
{
    kf_host_eval_t *e = h->e;
    char when[64];
    snprintf (when, sizeof when, "timing sample %d", n);
    s_flush (e, used, h->flush, h->flush_size, salt);
    double wall;
    kf_perf_gate_set (&h->gate, true);
    int st = kf_host_cand_call (e, calls, &wall, when);
    kf_perf_gate_set (&h->gate, false);
    *wait_ns = kf_runner_wait_ns (e->runner);
    if (st != KF_HOST_OK)
        return st;
    *ns = wall * 1e9;
    //  Who else ran meanwhile: the runnable tasks beside the judge,
    //  read between samples (kf_host_load.h).
    kf_host_load_note (&h->t->load, h->proc_stat);
    for (int v = 0; v < calls; v++) {
        if ((st = kf_host_check_memory (e, v, h->expect[v], when)) != KF_HOST_OK)
            return st;
        if (kf_host_compare (e, v, (void *const *) h->ref[v], when))
            return KF_HOST_INCORRECT;
    }
    return KF_HOST_OK;
}

//  A sample on one CPU: the inputs of one sample of its own and their
//  right answers made before the first (untimed, the reference's calls
//  on every CPU), each later one on them again with its outputs
//  poisoned. The figure is no verdict, so the inputs need not be new
//  to every call; the answers are still checked.
static int
s_one_core_batch (s_timer_t *h, kf_eval_sample_t *s, int used)
{
    kf_host_eval_t *e = h->e;
    if (!h->ready || used > h->ready_used) {
        s_sample_inputs (h, KF_HOST_ONE_CORE_SAMPLE, used, false);
        double ignored;
        if (e->ref_fn && s_ref_batch (h, 0, used, s->salt, &ignored, NULL) != KF_HOST_OK) {
            snprintf (s->why, sizeof s->why, "kf_forward returned non-zero");
            return KF_HOST_REF_FAILED;
        }
        h->ready = true;
        h->ready_used = used;
    }
    else
        for (int v = 0; v < used; v++)
            for (int o = 0; o < e->n_out; o++)
                kf_eval_poison (e->out[o].dtype, e->cand_buf[v][o].data, e->out[o].numel);
    return KF_HOST_OK;
}

//  One sample (kf_eval_timer_t): in the warm-up one call of the last
//  correctness set (variant 0); then a batch on inputs of the sample's
//  own, set up before the reference's batch (or the candidate's, timed
//  alone).
static int
s_timer_sample (void *arg, const kf_eval_timing_t *t, kf_eval_sample_t *s)
{
    s_timer_t *h = arg;
    kf_host_eval_t *e = h->e;
    bool paired = e->ref_fn != NULL;
    if (s->sample == KF_EVAL_WARMUP) {
        if (s->side == KF_EVAL_REF) {
            double t0 = kf_eval_now ();
            if (kf_host_ref_call (e, 0)) {
                snprintf (s->why, sizeof s->why, "kf_forward returned non-zero in the warm-up");
                return KF_HOST_REF_FAILED;
            }
            s->ns = (kf_eval_now () - t0) * 1e9;
            return KF_HOST_OK;
        }
        double wall;
        int st = kf_host_cand_call (e, 1, &wall, "warm-up");
        s->ns = wall * 1e9;
        //  On one CPU a kernel whose threads wait for each other can
        //  take far longer than in full: it is not timed further.
        if (st == KF_HOST_OK && h->one_core && h->limit_ns > 0 && s->ns > h->limit_ns) {
            snprintf (e->detail, sizeof e->detail, "a call took %.1f ms on one CPU, more than "
                      "%.0f times its time on every CPU", s->ns * 1e-6, S_ONE_CORE_LIMIT);
            return KF_HOST_CRASHED;
        }
        return st;
    }
    int used = t->ref_calls > t->cand_calls ? t->ref_calls : t->cand_calls;
    if (h->one_core) {
        int st = s_one_core_batch (h, s, t->cand_calls);
        if (st != KF_HOST_OK)
            return st;
        used = t->cand_calls;
    }
    else if (s->side == KF_EVAL_REF || !paired)
        s_sample_inputs (h, s->sample, used, paired);
    if (s->side == KF_EVAL_CAND) {
        //  Its process's page faults over the timed calls (round 10: a
        //  kernel that took fresh scratch memory in every call lost half
        //  its time to faults, and nothing said so).
        long long f0 = kf_runner_minor_faults (e->runner);
        double cpu0 = kf_runner_cpu_s (e->runner);
        int st = s_cand_batch (h, s->sample, s->calls, used, s->salt, &s->ns, &s->wait_ns);
        long long f1 = kf_runner_minor_faults (e->runner);
        kf_host_timing_t *t = h->t;
        //  Its process's CPU time against the clock over the timed
        //  calls: above 1, its threads ran side by side.
        if (st == KF_HOST_OK && s->sample >= 0) {
            double cpu = kf_runner_cpu_s (e->runner) - cpu0;
            t->cand_cpu_s += cpu;
            t->cand_wall_s += s->ns * 1e-9;
            if (!kf_eval_disturbed (s->wait_ns, s->ns)) {
                t->quiet_cpu_s += cpu;
                t->quiet_wall_s += s->ns * 1e-9;
            }
        }
        if (f0 < 0 || f1 < f0 || s->calls < 1)
            t->faults_unknown = true;
        else if (!t->faults_unknown) {
            if (t->n_fault_rates == t->cap_fault_rates) {
                int cap = t->cap_fault_rates ? 2 * t->cap_fault_rates : 64;
                double *more = realloc (t->fault_rates, (size_t) cap * sizeof *more);
                if (!more) {
                    t->faults_unknown = true;
                    return st;
                }
                t->fault_rates = more;
                t->cap_fault_rates = cap;
            }
            t->fault_rates[t->n_fault_rates++] = (double) (f1 - f0) / s->calls;
        }
        return st;
    }
    int st = s_ref_batch (h, s->calls, used, s->salt, &s->ns, &s->wait_ns);
    if (st)
        snprintf (s->why, sizeof s->why, "kf_forward returned non-zero");
    return st;
}

//  The CPU seconds the judge (all its threads) and the candidate's
//  process have used so far.
static double
s_own_cpu_s (kf_host_eval_t *e)
{
    struct timespec c;
    double own = clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &c) == 0
                     ? (double) c.tv_sec + (double) c.tv_nsec * 1e-9
                     : 0;
    return own + (e->runner ? kf_runner_cpu_s (e->runner) : 0);
}

//  The timing of kf_host_time, or on one CPU (ONE_CORE, LIMIT_NS the
//  warm-up's limit) that of kf_host_time_one_core.
static int
s_time (kf_host_eval_t *e, json_t *timing, kf_host_timing_t *t, bool one_core, double limit_ns)
{
    s_timer_t *h = calloc (1, sizeof *h);
    if (!h) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for the timing");
        return KF_HOST_CRASHED;
    }
    h->e = e;
    h->t = t;
    h->one_core = one_core;
    h->limit_ns = limit_ns;
#if defined(__x86_64__)
    h->flush_size = 1;              // clflush needs no buffer
#else
    long llc = sysconf (_SC_LEVEL3_CACHE_SIZE);
    h->flush_size = 2 * (size_t) (llc > 0 ? llc : 32 << 20);
#endif
    h->flush = malloc (h->flush_size);
    bool ok = h->flush != NULL;
    //  A profile's counters, on only around the candidate's timed batches
    //  (kf_perf_gate.h); without perf_control, nothing.
    kf_perf_gate_open (&h->gate, one_core ? NULL : json_object_get (timing, "perf_control"));
    for (int v = 0; ok && v < e->variants; v++)
        for (int i = 0; ok && i < e->n_in; i++)
            ok = (h->expect[v][i] = malloc (e->in[i].bytes ? e->in[i].bytes : 1)) != NULL;
    int st;
    if (!ok) {
        snprintf (e->detail, sizeof e->detail, "harness: out of memory for the timing");
        st = KF_HOST_CRASHED;
    }
    else {
        //  Batches of about S_WINDOW_S, at most one call per variant; no
        //  trial sample (a call costs the same in a loop on the host).
        kf_eval_timer_t p = {
            .sample = s_timer_sample, .arg = h, .paired = e->ref_fn != NULL && !one_core,
            .trial = false, .target_ns = { S_WINDOW_S * 1e9, S_WINDOW_S * 1e9 },
            .max_calls = { e->variants, e->variants }, .max_samples = 100000,
            .undisturbed = true,
            .warm = one_core ? NULL : &e->warm, .harness_st = KF_HOST_CRASHED, .detail = e->detail,
            .detail_size = sizeof e->detail
        };
        //  The host's load over the whole timing (kf_host_load.h):
        //  what every CPU did, less the judge's and the candidate's part.
        h->proc_stat = "/proc/stat";
        kf_host_load_t *l = &t->load;
        double own0 = s_own_cpu_s (e), t0 = kf_eval_now ();
        kf_host_load_snap (h->proc_stat, &l->before);
        st = kf_eval_time (&p, timing, &t->p);
        kf_host_load_snap (h->proc_stat, &l->after);
        l->wall_s = kf_eval_now () - t0;
        l->own_cpu_s = s_own_cpu_s (e) - own0;
        l->cpus_allowed = kf_host_load_allowed ();
        l->waits_known = t->p.waits_known;
        l->undisturbed_only = t->p.undisturbed_only;
        l->cand_wait_share = t->p.cand_wall_s > 0 ? t->p.cand_wait_s / t->p.cand_wall_s : 0;
    }
    kf_perf_gate_close (&h->gate);
    for (int v = 0; v < KF_RUN_MAX_VARIANTS; v++)
        for (int i = 0; i < e->n_in; i++)
            free (h->expect[v][i]);
    free (h->flush);
    free (h);
    return st;
}

int
kf_host_time (kf_host_eval_t *e, json_t *timing, kf_host_timing_t *t)
{
    return s_time (e, timing, t, false, 0);
}

int
kf_host_time_one_core (kf_host_eval_t *e, json_t *timing, const kf_host_timing_t *full,
                       bool starts, kf_host_one_core_t *oc)
{
    memset (oc, 0, sizeof *oc);
    double full_ns = full->p.samples > 0 ? kf_eval_median (full->p.cand_ns, full->p.samples) : 0;
    //  Round 37: a kernel at 151 GFLOP/s, past one core's 118, read "used
    //  1.00 CPU-seconds a second": its figures were over the samples in
    //  which its threads waited for no CPU, its CPU time over them all
    //  (in nearly half of its time they waited). Both over the same ones.
    bool quiet = full->p.undisturbed_only && full->quiet_wall_s > 0;
    oc->cpu_per_wall = quiet ? full->quiet_cpu_s / full->quiet_wall_s
                       : full->cand_wall_s > 0 ? full->cand_cpu_s / full->cand_wall_s : 0;
    if (!e->runner || full->load.cpus_allowed < 2 || !(full_ns > 0))
        return 1;
    if (!starts && oc->cpu_per_wall < KF_HOST_THREADED_CPU)
        return 1;
    oc->tried = true;
    //  The same protocol with fewer repeats: a quarter of the samples'
    //  time and at most 5 samples' floor, 2 warm-up calls, no reference
    //  timed beside it. A threaded kernel takes about twice as long on
    //  one CPU, so this costs about half the full timing's candidate part.
    json_t *t1 = json_is_object (timing) ? json_deep_copy (timing) : json_object ();
    kf_eval_floors_t fl;
    kf_eval_floors (timing, &fl);
    json_object_set_new (t1, "min_time_s", json_real (fl.min_time_s / 4));
    json_object_set_new (t1, "min_samples", json_integer (fl.min_samples < 5 ? fl.min_samples : 5));
    json_object_set_new (t1, "warmup_s", json_real (0));
    json_object_set_new (t1, "warmup_calls", json_integer (2));
    char detail[sizeof e->detail];
    snprintf (detail, sizeof detail, "%s", e->detail);
    kf_host_timing_t one = { 0 };
    int st = -1;
    if (kf_runner_one_cpu (e->runner, true) == 0) {
        st = s_time (e, t1, &one, true, S_ONE_CORE_LIMIT * full_ns);
        if (kf_runner_one_cpu (e->runner, false) != 0 && st == KF_HOST_OK) {
            snprintf (e->detail, sizeof e->detail, "harness: the CPUs could not be given back");
            st = KF_HOST_CRASHED;
        }
    }
    else
        snprintf (e->detail, sizeof e->detail, "harness: one CPU could not be set");
    json_decref (t1);
    if (st == KF_HOST_OK && one.cand_cpu_s > 1.1 * one.cand_wall_s + 2e-3) {
        //  Its process used more than one CPU's time: it left the CPU.
        snprintf (e->detail, sizeof e->detail, "its process used %.2f s of CPU in %.2f s on one "
                  "CPU", one.cand_cpu_s, one.cand_wall_s);
        st = KF_HOST_CRASHED;
    }
    if (st == KF_HOST_OK && one.p.samples > 0) {
        oc->ns = kf_eval_median (one.p.cand_ns, one.p.samples);
        oc->samples = one.p.samples;
        oc->calls = one.p.cand_calls;
        oc->took_s = one.load.wall_s;
    }
    else
        snprintf (oc->why, sizeof oc->why, "%s", e->detail);
    snprintf (e->detail, sizeof e->detail, "%s", detail);
    kf_host_timing_free (&one);
    return oc->ns > 0 ? 0 : -1;
}

void
kf_host_timing_free (kf_host_timing_t *t)
{
    kf_eval_timing_free (&t->p);
    free (t->fault_rates);
    t->fault_rates = NULL;
    t->n_fault_rates = t->cap_fault_rates = 0;
}

double
kf_host_timing_faults (const kf_host_timing_t *t)
{
    if (t->faults_unknown || t->n_fault_rates < 1)
        return -1;
    return kf_eval_median (t->fault_rates, t->n_fault_rates);
}
