/*  kf_host_reads.c - what the host's memory gives one core and all of
 *  them at once, measured once at start (kf_host_measure.h): a copy with
 *  ordinary against streaming stores, a read from memory with cold
 *  caches, a write with streaming stores alone, and a read from L2, each
 *  by one core and (all but the ordinary copy) by every logical CPU at
 *  once.
 *
 *  Round 17 of the model in the loop: two threads of a tile kernel whose
 *  operands stay in L2 scaled poorly on a 2-CPU host (3.07 ms against
 *  3.21 on one thread), and the prompt measured the L2 of one core only:
 *  a model could not tell whether two threads' L2 reads add up.
 */
#include "kf_clock.h"
#include "kf_host_caps.h"
#include "kf_host_measure.h"

#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

//  Each copy buffer: past a typical L2, so the copy leaves the core.
#define S_COPY_BYTES ((size_t) 32 << 20)

//  A copy of N bytes with ordinary stores (each destination line is
//  read into the cache before it is written: the write-allocate read) or
//  with streaming stores that bypass the cache (no such read). Explicit
//  loops: the C library's memcpy picks streaming stores by size itself.
#if defined(__x86_64__)
__attribute__ ((target ("avx2"))) KF_HOST_MEASURED static void
s_copy_plain (char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i + 32 <= n; i += 32)
        _mm256_store_si256 ((__m256i *) (dst + i), _mm256_load_si256 ((const __m256i *) (src + i)));
}

__attribute__ ((target ("avx2"))) KF_HOST_MEASURED static void
s_copy_stream (char *dst, const char *src, size_t n)
{
    for (size_t i = 0; i + 32 <= n; i += 32)
        _mm256_stream_si256 ((__m256i *) (dst + i), _mm256_load_si256 ((const __m256i *) (src + i)));
    _mm_sfence ();
}

//  N bytes at DST written with streaming stores alone, nothing read
//  (round 20: the floors counted a kernel's writes at the cold read
//  rate, for want of a write rate). Each line written whole, in order:
//  a write-combining buffer goes to memory once its line is full.
__attribute__ ((target ("avx2"))) KF_HOST_MEASURED static void
s_write_stream (char *dst, size_t n)
{
    __m256i v = _mm256_set1_epi32 (5);
    for (size_t i = 0; i + 32 <= n; i += 32)
        _mm256_stream_si256 ((__m256i *) (dst + i), v);
    _mm_sfence ();
}

//  Every line of N bytes at P out of every cache level.
KF_HOST_MEASURED static void
s_flush (const char *p, size_t n)
{
    for (size_t i = 0; i < n; i += 64)
        _mm_clflush (p + i);
    _mm_mfence ();
}

//  A read of N bytes (P 32-byte aligned), four independent sums,
//  returned so it is not dropped. Each sum a named variable: as an
//  array, GCC at -O1 kept them in memory, each add waiting for the store
//  of the one before, as it did the FMA chains. And loads as plain
//  dereferences: _mm256_load_si256, an inline function of its own, kept
//  UBSan's checks in a sanitized build, and their calls spilled the sums
//  too (11 bytes a cycle from L2, round 13).
#define S_LOAD(q) (*(const __m256i *) (q))
__attribute__ ((target ("avx2"))) KF_HOST_MEASURED static double
s_read (const char *p, size_t n)
{
    __m256i a0 = _mm256_setzero_si256 (), a1 = a0, a2 = a0, a3 = a0;
    for (size_t i = 0; i + 128 <= n; i += 128) {
        a0 = _mm256_add_epi64 (a0, S_LOAD (p + i));
        a1 = _mm256_add_epi64 (a1, S_LOAD (p + i + 32));
        a2 = _mm256_add_epi64 (a2, S_LOAD (p + i + 64));
        a3 = _mm256_add_epi64 (a3, S_LOAD (p + i + 96));
    }
    __m256i a = _mm256_add_epi64 (_mm256_add_epi64 (a0, a1), _mm256_add_epi64 (a2, a3));
    return (double) ((unsigned long long) _mm256_extract_epi64 (a, 0)
                     + (unsigned long long) _mm256_extract_epi64 (a, 1)
                     + (unsigned long long) _mm256_extract_epi64 (a, 2)
                     + (unsigned long long) _mm256_extract_epi64 (a, 3));
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
        double t0 = kf_clock_now ();
        sum += s_read (buf, n);
        double t = kf_clock_now () - t0;
        if (t > 0 && n / t > best)
            best = n / t;
    }
    volatile double keep = sum;
    (void) keep;
    return best;
}

//  One core writing N bytes at BUF with streaming stores, none of them in
//  a cache (flushed before each of three writes, as the cold read's: a
//  streaming store to a line a cache holds must take it out first), the
//  best, in bytes per second.
static double
s_write_cold (char *buf, size_t n)
{
    double best = 0;
    for (int r = 0; r < 3; r++) {
        s_flush (buf, n);
        double t0 = kf_clock_now ();
        s_write_stream (buf, n);
        double t = kf_clock_now () - t0;
        if (t > 0 && n / t > best)
            best = n / t;
    }
    return best;
}
#endif

//  Every logical CPU reading its own share of a buffer flushed from the
//  caches first (round 13: a threaded kernel's inputs arrive at the rate
//  all cores draw from memory at once, and only one core's cold rate was
//  measured). At least S_ALL_SHARE bytes a thread, so the threads' skew
//  leaving the barrier (tens of microseconds) stays small beside their
//  reads; at most S_ALL_BYTES_MAX in all (a fresh page on a virtual
//  machine can take microseconds to touch).
#define S_ALL_SHARE ((size_t) 2 << 20)
#define S_ALL_BYTES_MAX ((size_t) 128 << 20)

//  Half of N bytes, whole pages: a share split in two (a streaming copy's
//  source and destination) or half of an L2.
static size_t
s_half_pages (size_t n)
{
    return n / 2 / 4096 * 4096;
}

static size_t
s_read_all_bytes (long cpus)
{
    size_t n = (size_t) cpus * S_ALL_SHARE;
    return n < S_COPY_BYTES ? S_COPY_BYTES : n > S_ALL_BYTES_MAX ? S_ALL_BYTES_MAX : n;
}

#if defined(__x86_64__)
#define S_ROUNDS_MAX 10
//  What each thread of s_read_all does with its share.
typedef enum {
    S_READ,            //  reads it
    S_COPY_STREAM,     //  copies its first half to its second with streaming stores
    S_WRITE_STREAM     //  writes it with streaming stores
} s_all_t;

typedef struct {
    pthread_t thread;
    kf_host_start_t *start;
    pthread_barrier_t *barrier;   //  NULL at the go: stop (not every thread started)
    char *p, *dst;                //  dst: a streaming copy of p's N bytes there
    size_t n;
    bool write;                   //  p's N bytes written with streaming stores, not read
    int rounds, passes;           //  passes 0: flushed, one read (or copy) a round
    double t0[S_ROUNDS_MAX], t1[S_ROUNDS_MAX];
} s_read_job_t;

static void *
s_read_thread (void *arg)
{
    s_read_job_t *job = arg;
    pthread_mutex_lock (&job->start->lock);
    while (!job->start->go)
        pthread_cond_wait (&job->start->cond, &job->start->lock);
    pthread_mutex_unlock (&job->start->lock);
    if (!job->barrier)
        return NULL;
    //  Written by its own thread first: an untouched page would fault in
    //  inside the timed read, or read as the shared zero page, cached.
    memset (job->p, 3, job->n);
    if (job->dst)
        memset (job->dst, 4, job->n);
    double sum = job->passes ? s_read (job->p, job->n) : 0;
    for (int r = 0; r < job->rounds; r++) {
        if (!job->passes) {
            s_flush (job->p, job->n);
            if (job->dst)
                s_flush (job->dst, job->n);
        }
        pthread_barrier_wait (job->barrier);
        job->t0[r] = kf_clock_now ();
        for (int i = 0; i < (job->passes ? job->passes : 1); i++) {
            if (job->dst)
                s_copy_stream (job->dst, job->p, job->n);
            else if (job->write)
                s_write_stream (job->p, job->n);
            else
                sum += s_read (job->p, job->n);
            __asm__ volatile ("" ::: "memory");
        }
        job->t1[r] = kf_clock_now ();
        //  No thread flushes while another still reads.
        pthread_barrier_wait (job->barrier);
    }
    volatile double keep = sum;
    (void) keep;
    return NULL;
}

//  CPUS threads each reading SHARE bytes of BUF (WHAT S_READ), let go
//  together by a barrier, ROUNDS times: PASSES reads back to back of
//  bytes read once before (0: one read of bytes flushed from the caches
//  first). S_COPY_STREAM: each copies the first half of its share to the
//  second with streaming stores instead (round 18: two threads of an
//  elementwise kernel with streaming stores stopped near 46-50 GB/s
//  against 86.2 GB/s of cold reads, and no figure said what reads and
//  streaming writes together reach); S_WRITE_STREAM: each writes its
//  share with streaming stores, reading nothing (round 20: no cold write
//  rate). The bytes read (and written) over the time from the first
//  thread's start to the last one's finish, the best round, in bytes per
//  second; 0 when a thread could not start.
static double
s_read_all (char *buf, size_t share, long cpus, int rounds, int passes, s_all_t what)
{
    bool stream = what == S_COPY_STREAM;
    s_read_job_t *jobs = share > 0 ? calloc ((size_t) cpus, sizeof *jobs) : NULL;
    if (!jobs)
        return 0;
    kf_host_start_t start = { .go = false };
    pthread_mutex_init (&start.lock, NULL);
    pthread_cond_init (&start.cond, NULL);
    pthread_barrier_t barrier;
    long started = 0;
    for (; started < cpus; started++) {
        char *p = buf + (size_t) started * share;
        size_t half = s_half_pages (share);
        jobs[started] = (s_read_job_t) { .start = &start, .p = p, .dst = stream ? p + half : NULL,
                                         .n = stream ? half : share, .rounds = rounds,
                                         .passes = passes, .write = what == S_WRITE_STREAM };
        if (pthread_create (&jobs[started].thread, NULL, s_read_thread, &jobs[started]) != 0)
            break;
    }
    bool all = started == cpus && pthread_barrier_init (&barrier, NULL, (unsigned) cpus) == 0;
    pthread_mutex_lock (&start.lock);
    for (long i = 0; i < started; i++)
        jobs[i].barrier = all ? &barrier : NULL;
    start.go = true;
    pthread_cond_broadcast (&start.cond);
    pthread_mutex_unlock (&start.lock);
    for (long i = 0; i < started; i++)
        pthread_join (jobs[i].thread, NULL);
    double best = 0, bytes = (double) jobs[0].n * (stream ? 2 : 1) * (double) cpus
                             * (passes ? passes : 1);
    for (int r = 0; all && r < rounds; r++) {
        double first = jobs[0].t0[r], last = jobs[0].t1[r];
        for (long i = 1; i < cpus; i++) {
            first = fmin (first, jobs[i].t0[r]);
            last = fmax (last, jobs[i].t1[r]);
        }
        if (last > first && bytes / (last - first) > best)
            best = bytes / (last - first);
    }
    if (all)
        pthread_barrier_destroy (&barrier);
    pthread_cond_destroy (&start.cond);
    pthread_mutex_destroy (&start.lock);
    free (jobs);
    return best;
}

//  One core reading N bytes of BUF that stay in its L2 (round 13: a
//  matrix product's author had no L2 rate to size cache blocks by): one
//  read to bring them in, then runs of S_L2_PASSES reads back to back
//  (about half a millisecond), the best of S_L2_RUNS, in bytes per
//  second.
#define S_L2_PASSES 64
#define S_L2_RUNS 20
static double
s_read_l2 (const char *buf, size_t n)
{
    double best = 0, sum = s_read (buf, n);
    for (int r = 0; r < S_L2_RUNS; r++) {
        double t0 = kf_clock_now ();
        for (int i = 0; i < S_L2_PASSES; i++) {
            sum += s_read (buf, n);
            //  The same read of the same bytes: never merged into one.
            __asm__ volatile ("" ::: "memory");
        }
        double t = kf_clock_now () - t0;
        if (t > 0 && S_L2_PASSES * (double) n / t > best)
            best = S_L2_PASSES * (double) n / t;
    }
    volatile double keep = sum;
    (void) keep;
    return best;
}
#endif

//  The bytes the L2 read reads: half of cpu0's L2 (sysfs, else what the
//  C library reads from the CPU), the other half left to what else the
//  core keeps there; 0 where the L2 is unknown, or its half would not be
//  well past the L1d (it would measure the L1d).
void
kf_host_cache_sizes (double sizes[3])
{
    json_t *c = json_object ();
    kf_host_caps_read ("/sys/devices/system/cpu/cpu0/cache", NULL, c);
    const long cpuid[3] = { sysconf (_SC_LEVEL1_DCACHE_SIZE), sysconf (_SC_LEVEL2_CACHE_SIZE),
                            sysconf (_SC_LEVEL3_CACHE_SIZE) };
    kf_host_caps_cpuid_caches (c, cpuid);
    static const char *const keys[3] = { "l1d_bytes", "l2_bytes", "l3_bytes" };
    for (int i = 0; i < 3; i++)
        sizes[i] = json_number_value (json_object_get (c, keys[i]));
    json_decref (c);
}

static size_t
s_l2_read_bytes (void)
{
    double sizes[3];
    kf_host_cache_sizes (sizes);
    double l1 = sizes[0], l2 = sizes[1];
    size_t n = (size_t) (l2 / 2) / 4096 * 4096;
    return n >= 4096 && n >= 2 * l1 && n <= S_COPY_BYTES ? n : 0;
}

//  One core's copy rates from SRC to DST (S_COPY_BYTES each), the best
//  of three of each kind: ORDINARY and STREAM as bytes read plus bytes
//  written per second (2 per byte copied); *TRAFFIC the ordinary copy's
//  whole memory traffic, the write-allocate read of each destination line
//  counted too (3 per byte copied); *COLD one core's cold-cache read of
//  the source (s_read_cold). 0 where AVX2 is not available here.
static void
s_copy_rates (char *src, char *dst, double *ordinary, double *traffic, double *stream,
              double *cold)
{
    *ordinary = *traffic = *stream = *cold = 0;
#if defined(__x86_64__)
    if (!__builtin_cpu_supports ("avx2") || !src || !dst)
        return;
    memset (src, 1, S_COPY_BYTES);
    memset (dst, 2, S_COPY_BYTES);
    for (int r = 0; r < 3; r++) {
        double t0 = kf_clock_now ();
        s_copy_plain (dst, src, S_COPY_BYTES);
        double t = kf_clock_now () - t0;
        if (t > 0 && 2.0 * S_COPY_BYTES / t > *ordinary) {
            *ordinary = 2.0 * S_COPY_BYTES / t;
            *traffic = 3.0 * S_COPY_BYTES / t;
        }
        t0 = kf_clock_now ();
        s_copy_stream (dst, src, S_COPY_BYTES);
        t = kf_clock_now () - t0;
        if (t > 0 && 2.0 * S_COPY_BYTES / t > *stream)
            *stream = 2.0 * S_COPY_BYTES / t;
    }
    volatile char keep = dst[S_COPY_BYTES - 1];
    (void) keep;
    *cold = s_read_cold (src, S_COPY_BYTES);
#else
    (void) src;
    (void) dst;
#endif
}


//  All cores reading from their L2 at once: each thread N bytes of its
//  own, half the one-core read's (two logical CPUs may share one L2), the
//  same passes as one core's read, the best of S_ROUNDS_MAX rounds.
static double
s_read_l2_all (char *buf, size_t buf_bytes, size_t n, long cpus)
{
#if defined(__x86_64__)
    size_t share = s_half_pages (n);
    if (cpus < 2 || share < 4096 || share * (size_t) cpus > buf_bytes)
        return 0;
    return s_read_all (buf, share, cpus, S_ROUNDS_MAX, S_L2_PASSES, S_READ);
#else
    (void) buf;
    (void) buf_bytes;
    (void) n;
    (void) cpus;
    return 0;
#endif
}

static void
s_set_bytes (json_t *device, const char *key, double rate, size_t bytes)
{
    if (rate > 0)
        json_object_set_new (device, key, json_integer ((json_int_t) bytes));
}

void
kf_host_measure_memory (json_t *d)
{
    //  One source buffer for the copy and the reads: each first touch
    //  of a page costs (kf_host_figures.h), so it is paid once.
    long cpus = kf_host_cpus ();
    size_t all_bytes = s_read_all_bytes (cpus), l2_bytes = s_l2_read_bytes ();
    size_t cold_share = all_bytes / (size_t) cpus / 4096 * 4096;
    char *src = aligned_alloc (64, all_bytes), *dst = aligned_alloc (64, S_COPY_BYTES);
    double ordinary, traffic, stream, cold, cold_all = 0, l2 = 0, l2_all = 0, stream_all = 0;
    double write = 0, write_all = 0;
    s_copy_rates (src, dst, &ordinary, &traffic, &stream, &cold);
#if defined(__x86_64__)
    if (ordinary > 0) {
        cold_all = s_read_all (src, cold_share, cpus, 3, 0, S_READ);
        stream_all = s_read_all (src, cold_share, cpus, 3, 0, S_COPY_STREAM);
        write = s_write_cold (dst, S_COPY_BYTES);
        write_all = s_read_all (src, cold_share, cpus, 3, 0, S_WRITE_STREAM);
        l2 = l2_bytes > 0 ? s_read_l2 (src, l2_bytes) : 0;
        l2_all = l2 > 0 ? s_read_l2_all (src, all_bytes, l2_bytes, cpus) : 0;
    }
#endif
    free (src);
    free (dst);
    kf_host_set_figure (d, "copy_one_core_gbs", ordinary, 1e-9);
    kf_host_set_figure (d, "copy_one_core_traffic_gbs", traffic, 1e-9);
    kf_host_set_figure (d, "copy_stream_one_core_gbs", stream, 1e-9);
    s_set_bytes (d, "copy_one_core_bytes", ordinary, S_COPY_BYTES);
    kf_host_set_figure (d, "read_cold_one_core_gbs", cold, 1e-9);
    s_set_bytes (d, "read_cold_one_core_bytes", cold, S_COPY_BYTES);
    kf_host_set_figure (d, "read_cold_all_cores_gbs", cold_all, 1e-9);
    s_set_bytes (d, "read_cold_all_cores_bytes", cold_all, cold_share * (size_t) cpus);
    kf_host_set_figure (d, "copy_stream_all_cores_gbs", stream_all, 1e-9);
    s_set_bytes (d, "copy_stream_all_cores_bytes", stream_all,
                 s_half_pages (cold_share) * 2 * (size_t) cpus);
    kf_host_set_figure (d, "write_stream_one_core_gbs", write, 1e-9);
    s_set_bytes (d, "write_stream_one_core_bytes", write, S_COPY_BYTES);
    kf_host_set_figure (d, "write_stream_all_cores_gbs", write_all, 1e-9);
    s_set_bytes (d, "write_stream_all_cores_bytes", write_all, cold_share * (size_t) cpus);
    kf_host_set_figure (d, "read_l2_one_core_gbs", l2, 1e-9);
    s_set_bytes (d, "read_l2_one_core_bytes", l2, l2_bytes);
    kf_host_set_figure (d, "read_l2_all_cores_gbs", l2_all, 1e-9);
    s_set_bytes (d, "read_l2_all_cores_bytes", l2_all, s_half_pages (l2_bytes) * (size_t) cpus);
}
