/*  kf_host_tlb.c - how many 4 KiB pages one core's data TLBs cover,
 *  measured once at start (kf_host_measure.h).
 *
 *  Round 23's best product kernel came from a k block of 64 rows 2 KiB
 *  apart, and the prompt could only say that 64 entries is what a
 *  first-level data TLB commonly holds. Here a chain of dependent loads
 *  (as kf_host_latency.c's) touches one line on each of N pages, the
 *  lines kept in the caches, so only a page's translation can miss: while
 *  N pages fit the first-level TLB a load takes an L1 hit's time; past
 *  them each load adds a second-level TLB lookup, and past that a page
 *  walk. The count is the last N of a sweep before a clear step up.
 *
 *  The pages. A 4 KiB-paged mapping is forced (huge pages would hold the
 *  whole buffer in one entry): each virtual page is mapped on its own
 *  from a small memfd of S_PHYS pages, in a random order of its pages,
 *  so the physical memory written is 256 KiB whatever N (a virtual
 *  machine's first touch runs at 40-200 MB/s: 4096 pages of their own
 *  would take up to 0.4 s), and no two neighbouring virtual pages are
 *  neighbours in memory (AMD's cores join four contiguous pages in one
 *  TLB entry; the count would read four times too high). The pages are
 *  neighbours in virtual memory, so a set-associative TLB's sets are
 *  filled evenly. Page i holds its line at line (i + i / S_PHYS) mod 64:
 *  distinct lines for up to 64 x S_PHYS pages, spread over every L1 set.
 *
 *  Sweep 1 (the first level): 16 to 384 pages, whose lines (24 KiB at
 *  most) stay in a 32 KiB L1d. Sweep 2 (the second level): from twice
 *  as many pages as the L1d holds lines (1024 for 32 KiB: a random cycle
 *  over more lines than a cache holds misses it on nearly every load, so
 *  the lines come from L2 throughout; from 512 the L1d's own step at 512
 *  to 768 lines, 10.8 to 19.3 cycles, read as the TLB's) up to 4096, or
 *  as many lines as half the L2 holds; the page-table lines a walk reads
 *  sit in the caches too, so the step is the walks'.
 *  Each point the best of runs, until several in a row did not better
 *  it: other work only adds to a load's time. About 0.1 s in all.
 */
#include "kf_clock.h"
#include "kf_host_measure.h"

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#define S_PAGE 4096
#define S_LINE 64
#define S_PHYS 64
#define S_PAGES_MAX (64 * S_PHYS)
//  Runs: at least 4096 loads and two trips around the cycle, until 8 in
//  a row have not bettered the best by 1%, at most 40.
#define S_STEPS_MIN 4096L
#define S_RUNS 8
#define S_RUNS_MAX 40
//  A step is a rise of at least this many cycles a load: a second-level
//  TLB hit adds about 7 on Zen 3 and Intel's cores (3.8 to 10.4 cycles on
//  this project's Zen 3 VM); past the second level a walk adds tens (19
//  to 38-50 there). The second's step is asked to be larger: the point
//  at exactly its count already reads 2.5-5.4 cycles above the plateau
//  there. 1 ns and 4 ns where no clock was measured.
#define S_JUMP_CYCLES 3.0
#define S_JUMP2_CYCLES 12.0

static const int s_first[] = { 16, 24, 32, 40, 48, 56, 64, 72, 80, 96, 112, 128, 160, 192,
                               256, 320, 384 };
static const int s_second[] = { 512, 768, 1024, 1280, 1536, 1792, 2048, 2560, 3072, 3584,
                                4096 };
#define S_FIRST ((int) (sizeof s_first / sizeof *s_first))
#define S_SECOND ((int) (sizeof s_second / sizeof *s_second))

int
kf_host_tlb_step (const int *pages, const double *cost, int n, double jump)
{
    //  The first point that stands JUMP above the lowest before it, with
    //  every point after it as high (the curve does not come back down:
    //  not a noisy run) and every point before it within half a JUMP of
    //  that lowest (a plateau, not a ramp whose start is unclear).
    if (!pages || !cost || !(jump > 0))
        return 0;
    for (int i = 2; i < n; i++) {
        double low = cost[0], high = cost[0];
        for (int j = 1; j < i; j++) {
            low = fmin (low, cost[j]);
            high = fmax (high, cost[j]);
        }
        if (!(low > 0) || !(high < low + jump / 2) || !(cost[i] >= low + jump))
            continue;
        bool stays = true;
        for (int j = i + 1; j < n && stays; j++)
            stays = cost[j] >= low + jump;
        if (stays)
            return pages[i - 1];
        //  A point above the plateau that comes back down is noise; the
        //  plateau check above then refuses every later step, rightly:
        //  the curve is not clean.
    }
    return 0;
}

//  ORDER[0..N-1] a random order of 0..N-1.
static void
s_shuffle (uint32_t *order, int n, uint64_t *seed)
{
    for (int i = 0; i < n; i++)
        order[i] = (uint32_t) i;
    for (int i = n - 1; i > 0; i--) {
        int j = (int) (kf_host_rand (seed) % (uint64_t) (i + 1));
        uint32_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
}

//  The line page I holds.
static char *
s_line (char *base, int i)
{
    return base + (size_t) i * S_PAGE + (size_t) ((i + i / S_PHYS) % 64) * S_LINE;
}

//  The best of runs through one random cycle over the lines of pages 0
//  to N-1 at BASE, in seconds a load. ORDER has room for N.
static double
s_point (char *base, int n, uint32_t *order, uint64_t *seed)
{
    s_shuffle (order, n, seed);
    for (int i = 0; i < n; i++)
        *(void **) s_line (base, (int) order[i]) = s_line (base, (int) order[(i + 1) % n]);
    long steps = 2L * n > S_STEPS_MIN ? 2L * n : S_STEPS_MIN;
    void *p = kf_host_chase (s_line (base, (int) order[0]), 2L * n);
    double best = 0;
    for (int r = 0, since = 0; r < S_RUNS_MAX && since < S_RUNS; r++, since++) {
        double t0 = kf_clock_now ();
        p = kf_host_chase (p, steps);
        double t = (kf_clock_now () - t0) / (double) steps;
        if (t > 0 && (best == 0 || t < 0.99 * best))
            since = -1;
        if (t > 0 && (best == 0 || t < best))
            best = t;
    }
    return p ? best : 0;
}

//  PAGES virtual pages, each mapped on its own from FD's S_PHYS pages in
//  a random order; NULL on failure. munmap (result, PAGES * S_PAGE).
static char *
s_map (int fd, int pages, uint64_t *seed)
{
    size_t bytes = (size_t) pages * S_PAGE;
    char *base = mmap (NULL, bytes, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        return NULL;
    uint32_t perm[S_PHYS];
    s_shuffle (perm, S_PHYS, seed);
    for (int i = 0; i < pages; i++) {
        void *at = mmap (base + (size_t) i * S_PAGE, S_PAGE, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_FIXED, fd, (off_t) perm[i % S_PHYS] * S_PAGE);
        if (at == MAP_FAILED) {
            munmap (base, bytes);
            return NULL;
        }
    }
    //  A shared memory file's huge pages are off by default
    //  (shmem_enabled), and each page is a mapping of its own; asked all
    //  the same.
    madvise (base, bytes, MADV_NOHUGEPAGE);
    return base;
}

//  Sweeps the N counts of SWEEP (those up to MAX) at BASE into COST in
//  UNIT a load; returns how many were measured.
static int
s_sweep (char *base, const int *sweep, int n, int max, double *cost, double unit,
         uint32_t *order, uint64_t *seed)
{
    int done = 0;
    for (; done < n && sweep[done] <= max; done++) {
        cost[done] = s_point (base, sweep[done], order, seed) * unit;
        if (!(cost[done] > 0))
            return 0;
    }
    return done;
}

void
kf_host_measure_tlb (json_t *d)
{
    double sizes[3];
    kf_host_cache_sizes (sizes);
    //  The first sweep's lines must stay in L1d, the second's in half
    //  the L2.
    if (!(sizes[0] >= 384.0 * S_LINE * 4 / 3))
        return;
    int max2 = sizes[1] > 0 ? (int) fmin (S_PAGES_MAX, sizes[1] / 2 / S_LINE) : 0;
    int pages = max2 > s_first[S_FIRST - 1] ? max2 : s_first[S_FIRST - 1];
    int fd = memfd_create ("kf-tlb", MFD_CLOEXEC);
    if (fd < 0)
        return;
    uint64_t seed = 0x9E3779B97F4A7C15ULL;
    uint32_t *order = malloc ((size_t) pages * sizeof *order);
    char *base = order && ftruncate (fd, S_PHYS * S_PAGE) == 0 ? s_map (fd, pages, &seed)
                                                               : NULL;
    close (fd);
    if (base) {
        double mhz = json_number_value (json_object_get (d, "clock_mhz_measured"));
        //  In cycles where the clock is known, else in ns with a 1 ns step.
        double unit = mhz > 0 && isfinite (mhz) ? mhz * 1e6 : 1e9;
        bool cycles = mhz > 0 && isfinite (mhz);
        double c1[S_FIRST], c2[S_SECOND];
        int n1 = s_sweep (base, s_first, S_FIRST, pages, c1, unit, order, &seed);
        int from = 0;
        while (from < S_SECOND && s_second[from] * S_LINE < 2 * sizes[0])
            from++;
        int n2 = s_sweep (base, s_second + from, S_SECOND - from, max2, c2, unit, order, &seed);
        int l1 = kf_host_tlb_step (s_first, c1, n1, cycles ? S_JUMP_CYCLES : 1.0);
        int l2 = kf_host_tlb_step (s_second + from, c2, n2, cycles ? S_JUMP2_CYCLES : 4.0);
        if (l1 > 0)
            json_object_set_new (d, "dtlb_l1_pages", json_integer (l1));
        //  Only above the first level's reach.
        if (l1 > 0 && l2 > l1)
            json_object_set_new (d, "dtlb_l2_pages", json_integer (l2));
        munmap (base, (size_t) pages * S_PAGE);
    }
    free (order);
}
