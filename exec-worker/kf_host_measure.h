/*  kf_host_measure.h - the host's f32 FMA peak, measured once per process
 *  (kf_host_measure.c), for the capabilities (kf_host_caps_measure) and
 *  the all-core ceiling evaluations are judged against
 *  (kf_eval_host_ceilings): one measurement, not two that disagree.
 */
#ifndef KF_HOST_MEASURE_H
#define KF_HOST_MEASURE_H

#include "kf_host_caps.h"

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

/* The CPUs online, from 1 to 256: how many threads the measurements run. */
long kf_host_cpus (void);

#endif
