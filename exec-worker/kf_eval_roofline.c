/*  kf_eval_roofline.c - ceilings and the roofline (kf_eval_check.h): the
 *  host's copy bandwidth, measured once per boot (kf_host_figures.c), with its FMA peak
 *  (kf_host_measure.c's: the one measurement of it), and the achieved
 *  rates of a candidate set against a device's ceilings in the result,
 *  flagged for audit past them.
 */
#include "kf_eval_check.h"
#include "kf_host_measure.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

//  Each thread copies up to 64 MiB, all of them together at most about
//  1 GiB of buffers (source and destination), so a many-core host does not
//  pay gigabytes for its start-up measurement; never under 8 MiB, so the
//  copy still runs from memory, not from a core's cache.
#define S_CEIL_COPY_MAX ((size_t) 64 << 20)
#define S_CEIL_COPY_MIN ((size_t) 8 << 20)
static size_t s_ceil_copy = S_CEIL_COPY_MAX;
#define S_CEIL_COPY s_ceil_copy

typedef struct {
    pthread_t thread;
    char *src, *dst;
    double copy_s;
} s_ceil_worker_t;

static pthread_barrier_t s_ceil_barrier;

static void *
s_ceil_run (void *arg)
{
    s_ceil_worker_t *w = arg;
    //  Every thread copies at once (the memory system's ceiling, not one
    //  core's), the best of three.
    w->copy_s = INFINITY;
    for (int r = 0; r < 3; r++) {
        pthread_barrier_wait (&s_ceil_barrier);
        double t0 = kf_eval_now ();
        if (w->src)
            memcpy (w->dst, w->src, S_CEIL_COPY);
        double t = kf_eval_now () - t0;
        if (t < w->copy_s)
            w->copy_s = t;
    }
    return NULL;
}

double
kf_eval_measure_copy_gbs (void)
{
    long cores = kf_host_cpus ();
    s_ceil_worker_t *w = calloc ((size_t) cores, sizeof *w);
    double gbs = 0;
    if (!w)
        return 0;
    s_ceil_copy = ((size_t) 512 << 20) / (size_t) cores;
    if (s_ceil_copy > S_CEIL_COPY_MAX)
        s_ceil_copy = S_CEIL_COPY_MAX;
    if (s_ceil_copy < S_CEIL_COPY_MIN)
        s_ceil_copy = S_CEIL_COPY_MIN;
    pthread_barrier_init (&s_ceil_barrier, NULL, (unsigned) cores);
    long started = 0;
    for (long i = 0; i < cores; i++) {
        w[i].src = malloc (S_CEIL_COPY);
        w[i].dst = malloc (S_CEIL_COPY);
        if (!w[i].src || !w[i].dst) {
            free (w[i].src);
            free (w[i].dst);
            w[i].src = w[i].dst = NULL;
        }
        else {
            memset (w[i].src, 1, S_CEIL_COPY);
            memset (w[i].dst, 2, S_CEIL_COPY);
        }
    }
    //  Thread 0 is this one, so a failed pthread_create cannot leave the
    //  barrier waiting for a thread that never came.
    for (long i = 1; i < cores; i++) {
        if (pthread_create (&w[i].thread, NULL, s_ceil_run, &w[i]) != 0)
            break;
        started = i;
    }
    if (started == cores - 1) {
        s_ceil_run (&w[0]);
        double bytes = 0, copy_s = 0;
        for (long i = 0; i < cores; i++) {
            if (w[i].src)
                bytes += 2.0 * S_CEIL_COPY;
            copy_s = w[i].copy_s > copy_s ? w[i].copy_s : copy_s;
        }
        gbs = copy_s > 0 ? bytes / copy_s / 1e9 : 0;
    }
    else {
        //  No threads: nothing measured; callers see zeros and skip the
        //  ceilings rather than judge against a wrong one.
        for (long i = 1; i <= started; i++)
            pthread_cancel (w[i].thread);
    }
    for (long i = 1; i <= started; i++)
        pthread_join (w[i].thread, NULL);
    for (long i = 0; i < cores; i++) {
        free (w[i].src);
        free (w[i].dst);
    }
    pthread_barrier_destroy (&s_ceil_barrier);
    free (w);
    return gbs;
}


//  The plausibility rules are common/kf_plausible.c's, which the
//  coordinator decides by; this is the worker's report of them.
#include "kf_plausible.h"

void
kf_eval_roofline (json_t *result, double bytes, double read_bytes, double flops,
                  double cand_ns, double ref_ns, const kf_eval_ceilings_t *c, bool bw_applies,
                  double speedup)
{
    //  Speed against the reference is no sign of anything by itself: a
    //  slow reference (PyTorch eager on a CPU) is honestly beaten 50x. The
    //  run's distribution, the other rule, is the coordinator's to judge.
    (void) speedup;
    kf_plausible_figures_t f = { .bytes = bytes, .read_bytes = read_bytes, .flops = flops,
                                 .cand_ns = cand_ns, .copy_gbs = c->copy_gbs,
                                 .read_gbs = c->read_gbs, .stream_gbs = c->stream_gbs,
                                 .write_gbs = c->write_gbs,
                                 .peak_gflops = c->peak_gflops,
                                 .bw_applies = bw_applies, .ceilings_busy = c->busy };
    double cand_gbs = kf_plausible_gbs (&f);
    double ref_gbs = ref_ns > 0 ? bytes / ref_ns : 0;   // bytes per ns = GB/s
    json_object_set_new (result, "bandwidth", json_pack (
        "{s:f, s:f, s:f, s:f, s:b, s:f}", "bytes", bytes,
        "candidate_gbs", cand_gbs, "reference_gbs", ref_gbs,
        "copy_gbs", c->copy_gbs, "roofline_applies", bw_applies,
        "candidate_fraction_of_copy", c->copy_gbs > 0 ? cand_gbs / c->copy_gbs : 0));
    double cand_gf = kf_plausible_gflops (&f);
    double ref_gf = flops > 0 && ref_ns > 0 ? flops / ref_ns : 0;   // flops per ns = GFLOP/s
    json_t *compute = json_object ();
    json_object_set_new (compute, "flops", flops > 0 ? json_real (flops) : json_null ());
    json_object_set_new (compute, "candidate_gflops", flops > 0 ? json_real (cand_gf) : json_null ());
    json_object_set_new (compute, "reference_gflops",
                         flops > 0 && ref_ns > 0 ? json_real (ref_gf) : json_null ());
    json_object_set_new (compute, "peak_gflops", json_real (c->peak_gflops));
    json_object_set_new (compute, "peak_source", json_string (c->peak_source ? c->peak_source : "none"));
    json_object_set_new (compute, "candidate_fraction_of_peak",
                         flops > 0 && c->peak_gflops > 0 ? json_real (cand_gf / c->peak_gflops)
                                                         : json_null ());
    json_object_set_new (result, "compute", compute);
    char reason[256] = "";
    bool suspect = kf_plausible_ceiling (&f, KF_PLAUSIBLE_MARGIN, reason, sizeof reason);
    json_object_set_new (result, "audit", json_boolean (suspect));
    if (suspect) {
        json_object_set_new (result, "audit_reason", json_string (reason));
        //  Into the detail too, which the coordinator stores as the
        //  candidate's verdict line: a flagged speedup is never silent.
        const char *was = json_string_value (json_object_get (result, "detail"));
        char detail[512];
        snprintf (detail, sizeof detail, "%s; flagged for audit: %s", was ? was : "", reason);
        json_object_set_new (result, "detail", json_string (detail));
    }
}
