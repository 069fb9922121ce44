/*  kf_host_measure.c - what one core of the host can do, measured once at
 *  start (kf_host_caps.h): its FMA peak alone, the same loop on every
 *  logical CPU at once, the cost of starting and joining a thread, a
 *  copy with ordinary against streaming stores, and a cold-cache read.
 *
 *  The all-core ceiling that evaluations are judged against stays
 *  kf_eval_roofline.c's; these figures are for the model (round 3 of the
 *  model in the loop: "the all-core figure is one core's", "no thread
 *  start cost", "the copy figure is silent on the write-allocate read").
 *  Each is small: well under a second in all.
 */
#include "kf_host_caps.h"

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

#define S_CHAINS 12
#define S_FMA_ITERS 100000
#define S_SPAWNS 51
//  Each copy buffer: past a typical L2, so the copy leaves the core.
#define S_COPY_BYTES ((size_t) 32 << 20)

static double
s_now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

//  Independent FMA chains in the widest vector unit, so the loop is
//  bound by FMA throughput, not latency. Each returns the flops it did.
//  Never instrumented: a sanitized build kept the chains in checked
//  memory and measured 7 GFLOP/s where the CPU does 60 (round 2's
//  "compute peak 7 GFLOP/s with AVX-512").
#define S_MEASURED __attribute__ ((no_sanitize ("address", "undefined")))
#if defined(__x86_64__)
__attribute__ ((target ("avx512f"))) S_MEASURED static double
s_fma_avx512 (long iters, float *sink)
{
    __m512 acc[S_CHAINS], a = _mm512_set1_ps (0.999999f), b = _mm512_set1_ps (1e-7f);
    for (int k = 0; k < S_CHAINS; k++)
        acc[k] = _mm512_set1_ps ((float) k);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_CHAINS; k++)
            acc[k] = _mm512_fmadd_ps (acc[k], a, b);
    for (int k = 1; k < S_CHAINS; k++)
        acc[0] = _mm512_add_ps (acc[0], acc[k]);
    *sink += _mm512_reduce_add_ps (acc[0]);
    return 2.0 * 16 * S_CHAINS * (double) iters;
}

__attribute__ ((target ("avx2,fma"))) S_MEASURED static double
s_fma_avx2 (long iters, float *sink)
{
    __m256 acc[S_CHAINS], a = _mm256_set1_ps (0.999999f), b = _mm256_set1_ps (1e-7f);
    for (int k = 0; k < S_CHAINS; k++)
        acc[k] = _mm256_set1_ps ((float) k);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_CHAINS; k++)
            acc[k] = _mm256_fmadd_ps (acc[k], a, b);
    float out[8];
    for (int k = 1; k < S_CHAINS; k++)
        acc[0] = _mm256_add_ps (acc[0], acc[k]);
    _mm256_storeu_ps (out, acc[0]);
    *sink += out[0];
    return 2.0 * 8 * S_CHAINS * (double) iters;
}
#endif

S_MEASURED static double
s_fma_plain (long iters, float *sink)
{
    float acc[S_CHAINS][4];
    for (int k = 0; k < S_CHAINS; k++)
        for (int l = 0; l < 4; l++)
            acc[k][l] = (float) (k + l);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_CHAINS; k++)
            for (int l = 0; l < 4; l++)
                acc[k][l] = acc[k][l] * 0.999999f + 1e-7f;
    for (int k = 0; k < S_CHAINS; k++)
        *sink += acc[k][0];
    return 2.0 * 4 * S_CHAINS * (double) iters;
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

//  Extra loops for one core's peak (round 5: a one-thread GEMM reached
//  88.4 GFLOP/s against a measured one-core peak of 72): sixteen chains,
//  so two FMA ports of latency 4 to 5 stay busy with room to spare, in
//  both vector widths (a core may issue 256-bit FMAs on more ports than
//  512-bit ones, or run them at a higher clock).
#define S_CHAINS_WIDE 16
#if defined(__x86_64__)
__attribute__ ((target ("avx512f"))) S_MEASURED static double
s_fma_avx512_16 (long iters, float *sink)
{
    __m512 acc[S_CHAINS_WIDE], a = _mm512_set1_ps (0.999999f), b = _mm512_set1_ps (1e-7f);
    for (int k = 0; k < S_CHAINS_WIDE; k++)
        acc[k] = _mm512_set1_ps ((float) k);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_CHAINS_WIDE; k++)
            acc[k] = _mm512_fmadd_ps (acc[k], a, b);
    for (int k = 1; k < S_CHAINS_WIDE; k++)
        acc[0] = _mm512_add_ps (acc[0], acc[k]);
    *sink += _mm512_reduce_add_ps (acc[0]);
    return 2.0 * 16 * S_CHAINS_WIDE * (double) iters;
}

__attribute__ ((target ("avx2,fma"))) S_MEASURED static double
s_fma_avx2_16 (long iters, float *sink)
{
    __m256 acc[S_CHAINS_WIDE], a = _mm256_set1_ps (0.999999f), b = _mm256_set1_ps (1e-7f);
    for (int k = 0; k < S_CHAINS_WIDE; k++)
        acc[k] = _mm256_set1_ps ((float) k);
    for (long i = 0; i < iters; i++)
        for (int k = 0; k < S_CHAINS_WIDE; k++)
            acc[k] = _mm256_fmadd_ps (acc[k], a, b);
    float out[8];
    for (int k = 1; k < S_CHAINS_WIDE; k++)
        acc[0] = _mm256_add_ps (acc[0], acc[k]);
    _mm256_storeu_ps (out, acc[0]);
    *sink += out[0];
    return 2.0 * 8 * S_CHAINS_WIDE * (double) iters;
}
#endif

//  One core's peak: every FMA loop this CPU runs (the shared one of
//  kf_host_fma_pick, and the sixteen-chain ones), each the best of
//  S_FMA_RUNS runs of a few milliseconds, the highest rate of all, in
//  flops per second. A run that another process interrupted is slower,
//  never faster, so the best of several is the figure least touched by
//  the host's load.
#define S_FMA_RUNS 5
#define S_FMA_RUN_ITERS 250000L
static double
s_fma_rate (void)
{
    kf_host_fma_fn loops[3] = { kf_host_fma_pick (NULL), NULL, NULL };
#if defined(__x86_64__)
    if (__builtin_cpu_supports ("avx512f"))
        loops[1] = s_fma_avx512_16;
    if (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"))
        loops[2] = s_fma_avx2_16;
#endif
    float sink = 0;
    double best = 0;
    for (int l = 0; l < 3; l++)
        for (int r = 0; loops[l] && r < S_FMA_RUNS; r++) {
            double t0 = s_now ();
            double flops = loops[l] (S_FMA_RUN_ITERS, &sink);
            double t = s_now () - t0;
            if (t > 0 && flops / t > best)
                best = flops / t;
        }
    volatile float keep = sink;
    (void) keep;
    return best;
}

//  The threads wait for a go, so the loop starts on all of them at once;
//  a failed pthread_create still lets those started finish.
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool go;
} s_start_t;

typedef struct {
    pthread_t thread;
    s_start_t *start;
    double flops;
} s_fma_job_t;

static void *
s_fma_thread (void *arg)
{
    s_fma_job_t *job = arg;
    kf_host_fma_fn fma = kf_host_fma_pick (NULL);
    float sink = 0;
    pthread_mutex_lock (&job->start->lock);
    while (!job->start->go)
        pthread_cond_wait (&job->start->cond, &job->start->lock);
    pthread_mutex_unlock (&job->start->lock);
    //  Three rounds, as one core's best of three had.
    for (int r = 0; r < 3; r++)
        job->flops += fma (S_FMA_ITERS, &sink);
    volatile float keep = sink;
    (void) keep;
    return NULL;
}

//  Every logical CPU's thread runs the loop at once: all the flops over
//  the time from the common start to the last join. 0 when a thread
//  could not start.
static double
s_fma_all (long cpus)
{
    s_fma_job_t *jobs = calloc ((size_t) cpus, sizeof *jobs);
    if (!jobs)
        return 0;
    s_start_t start = { .go = false };
    pthread_mutex_init (&start.lock, NULL);
    pthread_cond_init (&start.cond, NULL);
    long started = 0;
    for (; started < cpus; started++) {
        jobs[started].start = &start;
        if (pthread_create (&jobs[started].thread, NULL, s_fma_thread, &jobs[started]) != 0)
            break;
    }
    //  The clock starts before the go: a thread may finish before this
    //  one runs again.
    double t0 = s_now (), flops = 0;
    pthread_mutex_lock (&start.lock);
    start.go = true;
    pthread_cond_broadcast (&start.cond);
    pthread_mutex_unlock (&start.lock);
    for (long i = 0; i < started; i++) {
        pthread_join (jobs[i].thread, NULL);
        flops += jobs[i].flops;
    }
    double t = s_now () - t0;
    pthread_cond_destroy (&start.cond);
    pthread_mutex_destroy (&start.lock);
    free (jobs);
    return started == cpus && t > 0 ? flops / t : 0;
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

//  The median time of pthread_create then pthread_join of a thread that
//  returns at once, in seconds; 0 when no thread starts.
static double
s_spawn_cost (void)
{
    double t[S_SPAWNS];
    int n = 0;
    for (int i = 0; i < S_SPAWNS; i++) {
        pthread_t th;
        double t0 = s_now ();
        if (pthread_create (&th, NULL, s_nothing, NULL) != 0)
            break;
        pthread_join (th, NULL);
        t[n++] = s_now () - t0;
    }
    if (n == 0)
        return 0;
    qsort (t, (size_t) n, sizeof t[0], s_cmp);
    return t[n / 2];
}

//  A copy of N bytes with ordinary stores (each destination line is
//  read into the cache before it is written: the write-allocate read) or
//  with streaming stores that bypass the cache (no such read). Explicit
//  loops: the C library's memcpy picks streaming stores by size itself.
#if defined(__x86_64__)
__attribute__ ((target ("avx2"))) S_MEASURED static void
s_copy_plain (char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i + 32 <= n; i += 32)
        _mm256_store_si256 ((__m256i *) (dst + i), _mm256_load_si256 ((const __m256i *) (src + i)));
}

__attribute__ ((target ("avx2"))) S_MEASURED static void
s_copy_stream (char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i + 32 <= n; i += 32)
        _mm256_stream_si256 ((__m256i *) (dst + i), _mm256_load_si256 ((const __m256i *) (src + i)));
    _mm_sfence ();
}

//  Every line of N bytes at P out of every cache level.
S_MEASURED static void
s_flush (const char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        _mm_clflush (p + i);
    _mm_mfence ();
}

//  A read of N bytes, four independent sums, returned so it is not
//  dropped.
__attribute__ ((target ("avx2"))) S_MEASURED static double
s_read (const char *p, size_t n)
{
    __m256i acc[4] = { _mm256_setzero_si256 (), _mm256_setzero_si256 (), _mm256_setzero_si256 (),
                       _mm256_setzero_si256 () };
    for (size_t i = 0; i + 128 <= n; i += 128)
        for (int k = 0; k < 4; k++)
            acc[k] = _mm256_add_epi64 (acc[k],
                                       _mm256_load_si256 ((const __m256i *) (p + i + 32 * k)));
    unsigned long long out[4];
    _mm256_storeu_si256 ((__m256i *) out, _mm256_add_epi64 (_mm256_add_epi64 (acc[0], acc[1]),
                                                             _mm256_add_epi64 (acc[2], acc[3])));
    return (double) (out[0] + out[1] + out[2] + out[3]);
}
#endif

//  One core reading N bytes at BUF from memory with cold caches (round
//  5: the model had to guess it): the buffer flushed from every cache
//  level before each of three reads, the best, in bytes per second.
#if defined(__x86_64__)
static double
s_read_cold (const char *buf, size_t n)
{
    double best = 0, sum = 0;
    for (int r = 0; r < 3; r++) {
        s_flush (buf, n);
        double t0 = s_now ();
        sum += s_read (buf, n);
        double t = s_now () - t0;
        if (t > 0 && n / t > best)
            best = n / t;
    }
    volatile double keep = sum;
    (void) keep;
    return best;
}
#endif

//  One core's copy rates, the best of three of each kind: ORDINARY and
//  STREAM as bytes read plus bytes written per second (2 per byte
//  copied); *TRAFFIC the ordinary copy's whole memory traffic, the
//  write-allocate read of each destination line counted too (3 per byte
//  copied); *COLD one core's cold-cache read of the source (s_read_cold).
//  0 where AVX2 is not available here.
static void
s_copy_rates (double *ordinary, double *traffic, double *stream, double *cold)
{
    *ordinary = *traffic = *stream = *cold = 0;
#if defined(__x86_64__)
    if (!__builtin_cpu_supports ("avx2"))
        return;
    char *src = aligned_alloc (64, S_COPY_BYTES), *dst = aligned_alloc (64, S_COPY_BYTES);
    if (src && dst) {
        memset (src, 1, S_COPY_BYTES);
        memset (dst, 2, S_COPY_BYTES);
        for (int r = 0; r < 3; r++) {
            double t0 = s_now ();
            s_copy_plain (dst, src, S_COPY_BYTES);
            double t = s_now () - t0;
            if (t > 0 && 2.0 * S_COPY_BYTES / t > *ordinary) {
                *ordinary = 2.0 * S_COPY_BYTES / t;
                *traffic = 3.0 * S_COPY_BYTES / t;
            }
            t0 = s_now ();
            s_copy_stream (dst, src, S_COPY_BYTES);
            t = s_now () - t0;
            if (t > 0 && 2.0 * S_COPY_BYTES / t > *stream)
                *stream = 2.0 * S_COPY_BYTES / t;
        }
        volatile char keep = dst[S_COPY_BYTES - 1];
        (void) keep;
        *cold = s_read_cold (src, S_COPY_BYTES);
    }
    free (src);
    free (dst);
#endif
}

//  The core's clock, measured: a chain of dependent register-to-register
//  integer adds, each waiting for the one before, runs one add per cycle
//  on x86 cores, so adds per second are cycles per second
//  (round 4: no clock was given, and a model could not turn a runtime
//  into cycles per element). The best of five, at whatever frequency
//  the core runs under load; 0 elsewhere.
#define S_CLOCK_ITERS 2000000L
static double
s_clock_hz (void)
{
    double best = 0;
#if defined(__x86_64__)
    for (int r = 0; r < 5; r++) {
        //  A register operand, not an immediate: recent cores fold chains
        //  of add-immediate in the renamer (16 "GHz" measured that way).
        uint64_t x = 0, one = 1;
        double t0 = s_now ();
        for (long i = 0; i < S_CLOCK_ITERS; i++)
            __asm__ volatile ("add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                              "add %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\tadd %1, %0\n\t"
                              "add %1, %0\n\tadd %1, %0\n\t"
                              : "+r"(x)
                              : "r"(one));
        double t = s_now () - t0;
        if (t > 0 && x == 10 * (uint64_t) S_CLOCK_ITERS && 10.0 * S_CLOCK_ITERS / t > best)
            best = 10.0 * S_CLOCK_ITERS / t;
    }
#endif
    return best;
}

static void
s_set (json_t *device, const char *key, double value, double scale)
{
    if (!(value > 0))
        return;
    json_object_set_new (device, key, json_real (round (value * scale * 10) / 10));
}

//  Measured once per process: a second HELLO's capabilities repeat the
//  first figures rather than take new ones beside running evaluations.
static json_t *s_figures;
static pthread_once_t s_figures_once = PTHREAD_ONCE_INIT;

static void
s_measure (void)
{
    json_t *d = json_object ();
    if (!d)
        return;
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    if (cpus < 1)
        cpus = 1;
    if (cpus > 256)
        cpus = 256;
    s_set (d, "peak_gflops_one_core", s_fma_rate (), 1e-9);
    //  The best of three starts, as one core's figure is.
    double all = 0;
    for (int r = 0; r < 3; r++)
        all = fmax (all, s_fma_all (cpus));
    s_set (d, "peak_gflops_all_threads", all, 1e-9);
    s_set (d, "thread_start_join_us", s_spawn_cost (), 1e6);
    s_set (d, "clock_mhz_measured", s_clock_hz (), 1e-6);
    double ordinary, traffic, stream, cold;
    s_copy_rates (&ordinary, &traffic, &stream, &cold);
    s_set (d, "copy_one_core_gbs", ordinary, 1e-9);
    s_set (d, "copy_one_core_traffic_gbs", traffic, 1e-9);
    s_set (d, "copy_stream_one_core_gbs", stream, 1e-9);
    if (ordinary > 0)
        json_object_set_new (d, "copy_one_core_bytes", json_integer ((json_int_t) S_COPY_BYTES));
    s_set (d, "read_cold_one_core_gbs", cold, 1e-9);
    if (cold > 0)
        json_object_set_new (d, "read_cold_one_core_bytes", json_integer ((json_int_t) S_COPY_BYTES));
    s_figures = d;
}

int
kf_host_caps_measure (json_t *device)
{
    if (!json_is_object (device))
        return 0;
    pthread_once (&s_figures_once, s_measure);
    if (!s_figures)
        return 0;
    json_object_update (device, s_figures);
    return (int) json_object_size (s_figures);
}
