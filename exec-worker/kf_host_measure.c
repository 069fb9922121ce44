/*  kf_host_measure.c - what one core of the host can do, measured once at
 *  start (kf_host_caps.h): its FMA peak alone, the same loop on every
 *  logical CPU at once, the cost of starting and joining a thread, its
 *  clock, (kf_host_reads.c) its copies and reads, (kf_host_vec.c)
 *  the cycles of a vector divide, square root, reciprocal and FMA, and
 *  (kf_host_latency.c) a load's latency from memory and from L2.
 *
 *  The FMA figures are measured once (kf_host_fma_peaks) for both the
 *  model's Target section and the all-core ceiling evaluations are
 *  judged against (kf_eval_roofline.c); the copy ceiling stays
 *  kf_eval_roofline.c's. Round 3 of the model in the loop: "the all-core
 *  figure is one core's", "no thread start cost", "the copy figure is
 *  silent on the write-allocate read". Each is small: well under a
 *  second in all.
 */
#include "kf_clock.h"
#include "kf_host_caps.h"
#include "kf_host_measure.h"
#include "kf_host_vec.h"

#include <math.h>
#include <stdbool.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define S_SPAWNS 51
#define S_SPAWN_ROUNDS 5

long
kf_host_cpus (void)
{
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    return cpus < 1 ? 1 : cpus > 256 ? 256 : cpus;
}

//  Independent FMA chains in each vector unit, so the loop is bound by
//  FMA throughput, not latency: a core needs latency x FMA pipes chains
//  in flight (4 x 2 on Zen 4/5 and recent Intel cores); 24 in the 32
//  AVX-512 registers leaves room for a core with more pipes, 12 in the
//  16 AVX2 ones. In assembly, each chain in its own register: written
//  as an array of __m512 in C, GCC at -O1 and -O2 kept the array in
//  memory (no complete unrolling there), each FMA waiting for a store
//  and a load of the one before, and measured 46 and 63 GFLOP/s on a
//  Zen 5 core that does 230 (round 6: a one-thread GEMM at 136 GFLOP/s
//  read as "98.7% of peak"). Never instrumented either: a sanitized
//  build measured 7 GFLOP/s in round 2.
#define S_MEASURED KF_HOST_MEASURED
#if defined(__x86_64__)
#define S_CHAINS_512 24
#define S_CHAINS_256 12
#define S_F512(r) "vfmadd213ps %%zmm31, %%zmm30, %%zmm" #r "\n\t"
#define S_M512(r) "vmovaps %%zmm31, %%zmm" #r "\n\t"
#define S_F256(r) "vfmadd213ps %%ymm15, %%ymm14, %%ymm" #r "\n\t"
#define S_M256(r) "vmovaps %%ymm15, %%ymm" #r "\n\t"
#define S_X4(m, a, b, c, d) m (a) m (b) m (c) m (d)

__attribute__ ((target ("avx512f"))) S_MEASURED static double
s_fma_avx512 (long iters, float *sink)
{
    if (iters < 1)
        return 0;
    const float ab[2] = { 0.999999f, 1e-7f };
    float out[16];
    long n = iters;
    //  acc = acc * a + b on each chain: stays near 0.1, never denormal.
    __asm__ volatile ("vbroadcastss 0(%[ab]), %%zmm30\n\t"
                      "vbroadcastss 4(%[ab]), %%zmm31\n\t"
                      S_X4 (S_M512, 0, 1, 2, 3) S_X4 (S_M512, 4, 5, 6, 7)
                      S_X4 (S_M512, 8, 9, 10, 11) S_X4 (S_M512, 12, 13, 14, 15)
                      S_X4 (S_M512, 16, 17, 18, 19) S_X4 (S_M512, 20, 21, 22, 23)
                      "1:\n\t"
                      S_X4 (S_F512, 0, 1, 2, 3) S_X4 (S_F512, 4, 5, 6, 7)
                      S_X4 (S_F512, 8, 9, 10, 11) S_X4 (S_F512, 12, 13, 14, 15)
                      S_X4 (S_F512, 16, 17, 18, 19) S_X4 (S_F512, 20, 21, 22, 23)
                      "dec %[n]\n\t"
                      "jnz 1b\n\t"
                      "vaddps %%zmm23, %%zmm0, %%zmm0\n\t"
                      "vmovups %%zmm0, (%[out])\n\t"
                      "vzeroupper\n\t"
                      : [n] "+r"(n)
                      : [ab] "r"(ab), [out] "r"(out)
                      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                        "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16",
                        "xmm17", "xmm18", "xmm19", "xmm20", "xmm21", "xmm22", "xmm23", "xmm30",
                        "xmm31", "cc", "memory");
    *sink += out[0];
    return 2.0 * 16 * S_CHAINS_512 * (double) iters;
}

__attribute__ ((target ("avx2,fma"))) S_MEASURED static double
s_fma_avx2 (long iters, float *sink)
{
    if (iters < 1)
        return 0;
    const float ab[2] = { 0.999999f, 1e-7f };
    float out[8];
    long n = iters;
    __asm__ volatile ("vbroadcastss 0(%[ab]), %%ymm14\n\t"
                      "vbroadcastss 4(%[ab]), %%ymm15\n\t"
                      S_X4 (S_M256, 0, 1, 2, 3) S_X4 (S_M256, 4, 5, 6, 7)
                      S_X4 (S_M256, 8, 9, 10, 11)
                      "1:\n\t"
                      S_X4 (S_F256, 0, 1, 2, 3) S_X4 (S_F256, 4, 5, 6, 7)
                      S_X4 (S_F256, 8, 9, 10, 11)
                      "dec %[n]\n\t"
                      "jnz 1b\n\t"
                      "vaddps %%ymm11, %%ymm0, %%ymm0\n\t"
                      "vmovups %%ymm0, (%[out])\n\t"
                      "vzeroupper\n\t"
                      : [n] "+r"(n)
                      : [ab] "r"(ab), [out] "r"(out)
                      : "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8",
                        "xmm9", "xmm10", "xmm11", "xmm14", "xmm15", "cc", "memory");
    *sink += out[0];
    return 2.0 * 8 * S_CHAINS_256 * (double) iters;
}
#endif

//  Elsewhere: plain code the compiler may vectorise, a lower bound.
#define S_CHAINS_PLAIN 12
S_MEASURED static double
s_fma_plain (long iters, float *sink)
{
    float acc[S_CHAINS_PLAIN][4];
    for (int k = 0; k < S_CHAINS_PLAIN; k++)
        for (int l = 0; l < 4; l++)
            acc[k][l] = (float) (k + l);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_CHAINS_PLAIN; k++)
            for (int l = 0; l < 4; l++)
                acc[k][l] = acc[k][l] * 0.999999f + 1e-7f;
    for (int k = 0; k < S_CHAINS_PLAIN; k++)
        *sink += acc[k][0];
    return 2.0 * 4 * S_CHAINS_PLAIN * (double) iters;
}

kf_host_fma_fn
kf_host_fma_pick (const char **isa)
{
    const char *name = "sse";
    kf_host_fma_fn fma = s_fma_plain;
#if defined(__x86_64__)
    __builtin_cpu_init ();
    if (__builtin_cpu_supports ("avx512f")) {
        fma = s_fma_avx512;
        name = "avx512f";
    }
    else if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")) {
        fma = s_fma_avx2;
        name = "avx2+fma";
    }
#endif
    if (isa)
        *isa = name;
    return fma;
}

//  Rounds of about 3 ms at 230 GFLOP/s (24 x 512-bit chains): long
//  beside the clock's resolution, short beside a scheduler's slice, so
//  the best of several is a run no other process interrupted. On a
//  loaded host most runs are (a third of the rate, measured beside test
//  builds): the runs go on until S_FMA_RUNS in a row have not bettered
//  the best by 1%, at most S_FMA_RUNS_MAX.
#define S_FMA_RUNS 7
#define S_FMA_RUNS_MAX 40
#define S_FMA_RUN_ITERS 1000000L
#define S_FMA_WARM_S 0.02

//  Runs FMA until S_FMA_WARM_S has passed: a core idle before may start
//  at a lower clock and take milliseconds to raise it.
static double
s_fma_warm (kf_host_fma_fn fma, float *sink)
{
    double t0 = kf_clock_now (), flops = 0;
    while (kf_clock_now () - t0 < S_FMA_WARM_S)
        flops += fma (S_FMA_RUN_ITERS / 10, sink);
    return flops;
}

//  The best of the timed runs of FMA, in flops per second; their flops
//  added to *FLOPS.
static double
s_fma_best (kf_host_fma_fn fma, float *sink, double *flops)
{
    double best = 0;
    for (int r = 0, since = 0; r < S_FMA_RUNS_MAX && since < S_FMA_RUNS; r++, since++) {
        double t0 = kf_clock_now ();
        double f = fma (S_FMA_RUN_ITERS, sink);
        double t = kf_clock_now () - t0;
        *flops += f;
        if (t > 0 && f / t > 1.01 * best)
            since = -1;
        if (t > 0 && f / t > best)
            best = f / t;
    }
    return best;
}

double
kf_host_fma_one_core (const char **isa)
{
    const char *names[2] = { NULL, NULL };
    kf_host_fma_fn loops[2] = { kf_host_fma_pick (&names[0]), NULL };
#if defined(__x86_64__)
    //  A core may issue 256-bit FMAs on more pipes than 512-bit ones, or
    //  run them at a higher clock: both widths, the faster counts.
    if (loops[0] == s_fma_avx512 && __builtin_cpu_supports ("fma")) {
        loops[1] = s_fma_avx2;
        names[1] = "avx2+fma";
    }
#endif
    float sink = 0;
    double best = 0, flops = 0;
    s_fma_warm (loops[0], &sink);
    if (isa)
        *isa = names[0];
    for (int l = 0; l < 2; l++) {
        double rate = loops[l] ? s_fma_best (loops[l], &sink, &flops) : 0;
        if (rate > best) {
            best = rate;
            if (isa)
                *isa = names[l];
        }
    }
    volatile float keep = sink;
    (void) keep;
    return best;
}


typedef struct {
    pthread_t thread;
    kf_host_start_t *start;
    kf_host_fma_fn fma;
    double flops, best;
} s_fma_job_t;

static void *
s_fma_thread (void *arg)
{
    s_fma_job_t *job = arg;
    float sink = 0;
    pthread_mutex_lock (&job->start->lock);
    while (!job->start->go)
        pthread_cond_wait (&job->start->cond, &job->start->lock);
    pthread_mutex_unlock (&job->start->lock);
    job->flops = s_fma_warm (job->fma, &sink);
    job->best = s_fma_best (job->fma, &sink, &job->flops);
    volatile float keep = sink;
    (void) keep;
    return NULL;
}

//  One thread per logical CPU runs the loop one core's figure was best
//  with, all started together: *ALL all their flops (the warm-up's too)
//  over the time from the common start to the last join, *SUMMED each thread's best
//  run summed (every core at its best at once: the ceiling). Both 0
//  when a thread could not start.
static void
s_fma_all (long cpus, kf_host_fma_fn fma, double *all, double *summed)
{
    *all = *summed = 0;
    s_fma_job_t *jobs = calloc ((size_t) cpus, sizeof *jobs);
    if (!jobs)
        return;
    kf_host_start_t start = { .go = false };
    pthread_mutex_init (&start.lock, NULL);
    pthread_cond_init (&start.cond, NULL);
    long started = 0;
    for (; started < cpus; started++) {
        jobs[started].start = &start;
        jobs[started].fma = fma;
        if (pthread_create (&jobs[started].thread, NULL, s_fma_thread, &jobs[started]) != 0)
            break;
    }
    //  The clock starts before the go: a thread may finish before this
    //  one runs again.
    double t0 = kf_clock_now (), flops = 0, best = 0;
    pthread_mutex_lock (&start.lock);
    start.go = true;
    pthread_cond_broadcast (&start.cond);
    pthread_mutex_unlock (&start.lock);
    for (long i = 0; i < started; i++) {
        pthread_join (jobs[i].thread, NULL);
        flops += jobs[i].flops;
        best += jobs[i].best;
    }
    double t = kf_clock_now () - t0;
    pthread_cond_destroy (&start.cond);
    pthread_mutex_destroy (&start.lock);
    free (jobs);
    if (started == cpus && t > 0) {
        *all = flops / t;
        *summed = best;
    }
}

//  The host's FMA figures, measured once per process (the capabilities'
//  figures and the roofline's ceiling are the same measurement: they
//  were two, with two loops, and disagreed), and again when the first
//  measurement was beside other work (kf_host_fma_peaks_again).
static kf_host_fma_peaks_t s_peaks;
static pthread_once_t s_peaks_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t s_peaks_lock = PTHREAD_MUTEX_INITIALIZER;

static void
s_measure_peaks (void)
{
    kf_host_fma_peaks_t p = { 0 };
    long cpus = kf_host_cpus ();
    const char *isa = NULL;
    p.one_core = kf_host_fma_one_core (&isa);
    p.isa = isa;
    kf_host_fma_fn fma = kf_host_fma_pick (NULL);
#if defined(__x86_64__)
    if (isa && !strcmp (isa, "avx2+fma"))
        fma = s_fma_avx2;
#endif
    s_fma_all (cpus, fma, &p.all_threads, &p.summed);
    //  No ceiling below what one core was seen to do: the threads ran
    //  beside the host's other work too.
    if (p.summed > 0 && p.summed < p.one_core)
        p.summed = p.one_core;
    pthread_mutex_lock (&s_peaks_lock);
    s_peaks = p;
    pthread_mutex_unlock (&s_peaks_lock);
}

void
kf_host_fma_peaks (kf_host_fma_peaks_t *p)
{
    pthread_once (&s_peaks_once, s_measure_peaks);
    pthread_mutex_lock (&s_peaks_lock);
    *p = s_peaks;
    pthread_mutex_unlock (&s_peaks_lock);
}

void
kf_host_fma_peaks_again (void)
{
    pthread_once (&s_peaks_once, s_measure_peaks);
    s_measure_peaks ();
}

static void *
s_nothing (void *arg)
{
    return arg;
}

static int
s_cmp (const void *a, const void *b)
{
    double x = *(const double *) a, y = *(const double *) b;
    return x < y ? -1 : x > y;
}

//  The time of pthread_create then pthread_join of a thread that returns
//  at once, in seconds: the lowest of S_SPAWN_ROUNDS medians of
//  S_SPAWNS each; 0 when no thread starts. A start is a fixed cost, and
//  what other work adds to it is a wait for a CPU (round 11: a figure of
//  700.5 us kept from one start, where 25-72 us is this host's when
//  quiet), so the lowest round's is the one that stands for the host.
double
kf_host_measure_spawn_s (void)
{
    double best = 0;
    for (int r = 0; r < S_SPAWN_ROUNDS; r++) {
        double t[S_SPAWNS];
        int n = 0;
        for (int i = 0; i < S_SPAWNS; i++) {
            pthread_t th;
            double t0 = kf_clock_now ();
            if (pthread_create (&th, NULL, s_nothing, NULL) != 0)
                break;
            pthread_join (th, NULL);
            t[n++] = kf_clock_now () - t0;
        }
        if (n == 0)
            break;
        qsort (t, (size_t) n, sizeof t[0], s_cmp);
        if (best == 0 || t[n / 2] < best)
            best = t[n / 2];
    }
    return best;
}

//  The core's clock, measured: a chain of dependent register-to-register
//  integer adds, each waiting for the one before, runs one add per cycle
//  on x86 cores, so adds per second are cycles per second
//  (round 4: no clock was given, and a model could not turn a runtime
//  into cycles per element). Runs of about 60 us, short beside a
//  scheduler's slice, until S_CLOCK_RUNS in a row have not bettered the
//  best by 0.1%: round 9 of issue 15 found 1922 MHz (the best of five
//  runs of 6 ms, each cut by another process on a 2-CPU VM) beside a
//  one-core FMA peak of 226 GFLOP/s, 117 flops a cycle where no core does
//  more than 64; short runs measured 3630 MHz there, the same under
//  load. 0 elsewhere.
#define S_CLOCK_ITERS 20000L
#define S_CLOCK_RUNS 30
#define S_CLOCK_RUNS_MAX 3000
static double
s_clock_hz (void)
{
    double best = 0;
#if defined(__x86_64__)
    for (int r = 0, since = 0; r < S_CLOCK_RUNS_MAX && since < S_CLOCK_RUNS; r++) {
        //  A register operand, not an immediate: recent cores fold chains
        //  of add-immediate in the renamer (16 "GHz" measured that way).
        uint64_t x = 0, one = 1;
        double t0 = kf_clock_now ();
        for (long i = 0; i < S_CLOCK_ITERS; i++)
            __asm__ volatile ("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                              "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                              "add %1, %0\n\tadd %1, %0\n\t"
                              : "+r"(x)
                              : "r"(one));
        double t = kf_clock_now () - t0;
        double hz = t > 0 && x == 10 * (uint64_t) S_CLOCK_ITERS ? 10.0 * S_CLOCK_ITERS / t : 0;
        since = hz > best * 1.001 ? 0 : since + 1;
        if (hz > best)
            best = hz;
    }
#endif
    return best;
}

void
kf_host_set_figure (json_t *device, const char *key, double value, double scale)
{
    if (!(value > 0))
        return;
    json_object_set_new (device, key, json_real (round (value * scale * 10) / 10));
}

json_t *
kf_host_measure_caps (void)
{
    json_t *d = json_object ();
    if (!d)
        return NULL;
    kf_host_fma_peaks_t peaks;
    kf_host_fma_peaks (&peaks);
    kf_host_set_figure (d, "peak_gflops_one_core", peaks.one_core, 1e-9);
    kf_host_set_figure (d, "peak_gflops_all_threads", peaks.all_threads, 1e-9);
    kf_host_set_figure (d, "thread_start_join_us", kf_host_measure_spawn_s (), 1e6);
    kf_host_set_figure (d, "clock_mhz_measured", s_clock_hz (), 1e-6);
    //  Divide, square root, reciprocal estimate and FMA in cycles
    //  (kf_host_vec.c).
    kf_host_vec_costs (d);
    //  The copy and the reads (kf_host_reads.c).
    kf_host_measure_memory (d);
    //  A load's latency from memory and from L2 (kf_host_latency.c),
    //  after the clock: in cycles too.
    kf_host_measure_latency (d);
    //  How many 4 KiB pages the data TLBs cover (kf_host_tlb.c): its
    //  step is in cycles.
    kf_host_measure_tlb (d);
    return d;
}
