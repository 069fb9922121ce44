/*  kf_host_measure.h - the host's f32 FMA peak, measured once per process
 *  (kf_host_measure.c), for the capabilities (kf_host_caps_measure) and
 *  the all-core ceiling evaluations are judged against
 *  (kf_eval_host_ceilings): one measurement, not two that disagree.
 */
#ifndef KF_HOST_MEASURE_H
#define KF_HOST_MEASURE_H

#include "kf_host_caps.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A measured loop: never instrumented (a sanitized build measured 7
 * GFLOP/s in round 2) and never inlined into its timing. */
#define KF_HOST_MEASURED __attribute__ ((no_sanitize ("address", "undefined"), noinline))

/* STEPS dependent loads from P, each the address of the next (the
 * latency and TLB chases, kf_host_latency.c, kf_host_tlb.c); returns
 * where the chain stopped, the next run's start, so no load is dropped. */
KF_HOST_MEASURED void *kf_host_chase (void *p, long steps);

/* xorshift64* from *STATE: the chases' fixed-seed orders. */
uint64_t kf_host_rand (uint64_t *state);

/* The measuring threads wait for a go, so a loop starts on all of them at
 * once; a failed pthread_create still lets those started finish. */
typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    bool go;
} kf_host_start_t;

typedef struct {
    double one_core;      /* one thread alone, flops per second: the best run */
    double all_threads;   /* one thread per logical CPU at once: all flops over
                           * the time to the last join */
    double summed;        /* each of those threads' best run summed, never
                           * below one_core: the ceiling */
    const char *isa;      /* the loop one_core was best with: "avx512f",
                           * "avx2+fma" or "sse"; threads run the same one */
} kf_host_fma_peaks_t;

/* The figures above, measured at the first call (make it at start, with
 * nothing else running: about 0.1 s per logical CPU of CPU time); later
 * calls copy them. A figure that could not be measured is 0. */
void kf_host_fma_peaks (kf_host_fma_peaks_t *p);

/* Measures the FMA figures anew: kf_host_fma_peaks gives the new ones
 * from then on (the first were taken beside other work,
 * kf_host_figures_again). */
void kf_host_fma_peaks_again (void);

/* One core's FMA rate measured now, in flops per second: after a 20 ms
 * warm-up (a core's clock rises under load), the best of runs of about
 * 3 ms (until 7 in a row did not better it by 1%, at most 40) of each
 * loop this CPU has (24 chains of 512-bit FMA in registers,
 * 12 of 256-bit; plain C elsewhere), the highest. *ISA (when not NULL)
 * names the loop that reached it. */
double kf_host_fma_one_core (const char **isa);

/* The capabilities' figures of one core (kf_host_caps_measure lists
 * them), measured now: a new object (caller owns), NULL without memory.
 * The FMA ones are kf_host_fma_peaks'. */
json_t *kf_host_measure_caps (void);

/* What starting and joining a thread that returns at once takes here,
 * in seconds: the lowest of five medians of 51 (other work only adds a
 * wait for a CPU to it); 0 when no thread starts. A few milliseconds. */
double kf_host_measure_spawn_s (void);

/* Sets DEVICE's copy, read and write figures (kf_host_reads.c): one
 * core's copy with ordinary and with streaming stores, one core's and all
 * cores' read from memory with cold caches, one core's and all cores'
 * write of memory with streaming stores alone, and one core's and all
 * cores' read from L2, each with the bytes it moved. */
void kf_host_measure_memory (json_t *device);

/* The sizes in bytes of cpu0's L1 data cache, L2 and L3 into SIZES[0..2]
 * (sysfs, else what the C library reads from the CPU:
 * kf_host_caps_cpuid_caches); 0 for one not known. */
void kf_host_cache_sizes (double sizes[3]);

/* Sets DEVICE's load latencies (kf_host_latency.c): "mem_latency_ns",
 * one core's dependent loads of random lines of a buffer past the last
 * level cache, flushed from the caches first, and "l2_latency_ns", of a
 * buffer of half the L2, warm (where the L2's size is known and its half
 * is well past the L1d); each also in cycles ("mem_latency_cycles",
 * "l2_latency_cycles") where DEVICE has "clock_mhz_measured". A figure
 * that could not be measured is left out. */
void kf_host_measure_latency (json_t *device);

/* Sets DEVICE's data TLB reach (kf_host_tlb.c): "dtlb_l1_pages", how
 * many 4 KiB pages one core's first-level data TLB covers, the last count
 * of a sweep (16 to 384 pages, one line on each, the lines in L1) before
 * the dependent loads' time steps up by at least 3 cycles (1 ns without
 * "clock_mhz_measured"), and "dtlb_l2_pages", the second level's, from a
 * sweep from twice the L1d's lines to 4096 pages (as many as half the L2
 * holds lines of), by at least 12 cycles (4 ns), where each shows a
 * clear step; left out where none shows (a virtual machine may blur it),
 * the second also where the first is. About 0.1 s. */
void kf_host_measure_tlb (json_t *device);

/* The step of a sweep: COST[i] the time a load at PAGES[i] pages (N
 * points, PAGES rising). The last PAGES before the first point that
 * stands at least JUMP above the lowest cost before it, with every point
 * before it within JUMP / 2 of that lowest (at least two) and every
 * point after it as high; 0 where there is no such point. */
int kf_host_tlb_step (const int *pages, const double *cost, int n, double jump);

/* Sets DEVICE's KEY to VALUE * SCALE to one decimal, where VALUE > 0. */
void kf_host_set_figure (json_t *device, const char *key, double value, double scale);

/* The CPUs online, from 1 to 256: how many threads the measurements run. */
long kf_host_cpus (void);

#endif
