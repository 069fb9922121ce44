/*  kf_host_latency.c - how long one core's load waits for memory and for
 *  its L2, measured once at start (kf_host_measure.h): a chain of
 *  dependent loads, each the address of the next, through lines in a
 *  random cyclic order, so neither the out-of-order core nor a
 *  prefetcher can start a load before the one before has arrived.
 *
 *  A model in the loop (host target, AVX2 2-CPU VM) had read rates but
 *  no latency, so it could not size a software prefetch distance: the
 *  bytes a core must have in flight are its latency times its read rate.
 *
 *  Memory: lines of a buffer of 4x the L3 (64 to 256 MiB), flushed from
 *  every cache level after it is written, so each load of a run reaches
 *  a line no cache holds; huge pages asked for (madvise), so a load's
 *  time is the memory's more than a page walk's where the kernel grants
 *  them. L2: lines of half the L2, read through twice first, so each
 *  load hits L2 (the buffer is well past the L1d), in one huge page where
 *  granted. Each figure the best of runs of thousands of loads, until
 *  several in a row did not better it: other work only adds to a load's
 *  time.
 *  Well under a second in all, most of it writing the memory buffer.
 */
#include "kf_clock.h"
#include "kf_host_caps.h"
#include "kf_host_measure.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#if defined(__x86_64__)
#include <immintrin.h>
#endif

#define S_LINE 64
#define S_MEM_MIN ((size_t) 64 << 20)
#define S_MEM_MAX ((size_t) 256 << 20)
#define S_HUGE ((size_t) 2 << 20)
//  Runs from memory: 4096 loads, about half a millisecond at 100 ns,
//  until 8 in a row have not bettered the best by 1%, at most 40; a run
//  goes on along the cycle, so they load at most 163840 distinct lines
//  of the at least 1048576 (64 MiB).
#define S_MEM_STEPS 4096L
#define S_MEM_RUNS 8
#define S_MEM_RUNS_MAX 40
//  Runs from L2: 16384 loads, about 70 us at 4 ns, short beside a
//  scheduler's slice, until 20 in a row have not bettered the best.
#define S_L2_STEPS 16384L
#define S_L2_RUNS 20
#define S_L2_RUNS_MAX 400

KF_HOST_MEASURED void *
kf_host_chase (void *p, long steps)
{
    void **q = p;
    for (long i = 0; i < steps; i++)
        q = (void **) *q;
    return q;
}

uint64_t
kf_host_rand (uint64_t *state)
{
    //  xorshift64*: a fixed seed, the same order at every start.
    *state ^= *state >> 12;
    *state ^= *state << 25;
    *state ^= *state >> 27;
    return *state * 0x2545F4914F6CDD1DULL;
}

//  Writes into each of the N lines at BUF the address of the line after
//  it in one random cycle through all N. Written line after line (a
//  random order of writes over 256 MiB would take longer than the
//  measurement): ORDER is the cycle, POS each line's place in it.
//  Returns -1 without memory.
static int
s_cycle (char *buf, size_t n)
{
    uint32_t *order = malloc (n * sizeof *order), *pos = malloc (n * sizeof *pos);
    if (!order || !pos || n < 2 || n > UINT32_MAX) {
        free (order);
        free (pos);
        return -1;
    }
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    for (size_t i = 0; i < n; i++)
        order[i] = (uint32_t) i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t) (kf_host_rand (&seed) % (i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    for (size_t i = 0; i < n; i++)
        pos[order[i]] = (uint32_t) i;
    for (size_t l = 0; l < n; l++) {
        size_t next = order[pos[l] + 1 == n ? 0 : pos[l] + 1];
        *(void **) (buf + l * S_LINE) = buf + next * S_LINE;
    }
    free (order);
    free (pos);
    return 0;
}

//  The best of runs of STEPS loads along the cycle from P, in seconds a
//  load, the runs going on until RUNS in a row have not bettered the best
//  by 1%, at most RUNS_MAX; *P left where the last run stopped.
static double
s_best (void **p, long steps, int runs, int runs_max)
{
    double best = 0;
    for (int r = 0, since = 0; r < runs_max && since < runs; r++, since++) {
        double t0 = kf_clock_now ();
        *p = kf_host_chase (*p, steps);
        double t = (kf_clock_now () - t0) / (double) steps;
        if (t > 0 && (best == 0 || t < 0.99 * best))
            since = -1;
        if (t > 0 && (best == 0 || t < best))
            best = t;
    }
    return best;
}

//  One core's load latency from memory, in seconds; 0 where it could not
//  be measured.
static double
s_mem_latency (double l3)
{
    size_t bytes = l3 > 0 && 4 * l3 < (double) S_MEM_MAX ? (size_t) (4 * l3) : S_MEM_MAX;
    bytes = (bytes < S_MEM_MIN ? S_MEM_MIN : bytes) / S_HUGE * S_HUGE;
    char *buf = aligned_alloc (S_HUGE, bytes);
    if (!buf)
        return 0;
    madvise (buf, bytes, MADV_HUGEPAGE);
    double best = 0;
    if (s_cycle (buf, bytes / S_LINE) == 0) {
#if defined(__x86_64__)
        for (size_t i = 0; i < bytes; i += S_LINE)
            _mm_clflush (buf + i);
        _mm_mfence ();
#endif
        void *p = buf;
        best = s_best (&p, S_MEM_STEPS, S_MEM_RUNS, S_MEM_RUNS_MAX);
    }
    free (buf);
    return best;
}

//  One core's load latency from its L2, in seconds: half of L2 bytes,
//  where that is well past the L1d (L1 bytes); 0 otherwise.
static double
s_l2_latency (double l1, double l2)
{
    size_t bytes = (size_t) (l2 / 2) / 4096 * 4096;
    if (!(l1 > 0) || bytes < 4096 || (double) bytes < 2 * l1 || bytes > S_MEM_MIN)
        return 0;
    //  Within one huge page where the kernel grants it: 64 pages of 4
    //  KiB would take a second-level TLB lookup on some of the loads.
    size_t whole = (bytes + S_HUGE - 1) / S_HUGE * S_HUGE;
    char *buf = aligned_alloc (S_HUGE, whole);
    if (!buf)
        return 0;
    madvise (buf, whole, MADV_HUGEPAGE);
    double best = 0;
    size_t n = bytes / S_LINE;
    if (s_cycle (buf, n) == 0) {
        void *p = kf_host_chase (buf, 2 * (long) n);
        best = s_best (&p, S_L2_STEPS, S_L2_RUNS, S_L2_RUNS_MAX);
    }
    free (buf);
    return best;
}

//  KEY_ns and, at the measured clock, KEY_cycles, for a latency of S
//  seconds; nothing where S is not a finite positive figure.
static void
s_set (json_t *d, const char *key, double s)
{
    if (!(s > 0) || !isfinite (s))
        return;
    char name[64];
    snprintf (name, sizeof name, "%s_ns", key);
    kf_host_set_figure (d, name, s, 1e9);
    double mhz = json_number_value (json_object_get (d, "clock_mhz_measured"));
    snprintf (name, sizeof name, "%s_cycles", key);
    if (mhz > 0 && isfinite (mhz))
        kf_host_set_figure (d, name, s * mhz, 1e6);
}

void
kf_host_measure_latency (json_t *d)
{
    double sizes[3];
    kf_host_cache_sizes (sizes);
    s_set (d, "mem_latency", s_mem_latency (sizes[2]));
    s_set (d, "l2_latency", s_l2_latency (sizes[0], sizes[1]));
}
