/*  kf_rates.h - a timed kernel's rates against the measured ceilings, in
 *  the words a model reads.
 *
 *  Two places say where a kernel stands: the prompt's position line
 *  (coordinator, from an evaluation's figures) and a host profile's
 *  summary (exec worker, from the profiled run). Both state memory (bytes
 *  a second against the measured copy bandwidth) and compute (FLOP/s
 *  against the measured FMA peak), so a compute-bound GEMM is not
 *  described by its bytes alone, and both keep the same rules about
 *  caches, which live here once:
 *  - a rate above the copy bandwidth is never printed as a share over
 *    100%; it is explained: served from the cache that keeps the working
 *    set between calls, where it fits there;
 *  - a working set is said to fit a cache only when it is no larger than
 *    that cache (a 64 MiB working set never "fits" a 50 MiB L2), and
 *    where every call starts with its data out of the caches (the host's
 *    protocol) nothing is said to be served from them;
 *  - where the rate is above the copy figure and no cache can explain it,
 *    the words say so: the copy figure understates what this memory
 *    delivers to this kernel.
 */
#ifndef KF_RATES_H
#define KF_RATES_H

#include <stdbool.h>
#include <stdio.h>

/* The name of a device's copy figure where nothing names a faster copy:
 * the position line's default and the prompts' copy yardstick's. */
#define KF_RATES_COPY_NAME "the measured copy bandwidth"

typedef struct {
    double bytes;            /* least bytes one call moves (inputs read, outputs
                              * written); 0: unknown */
    const char *traffic;     /* what BYTES and GBS count ("N + M"), said beside
                              * the bytes; NULL: nothing said */
    double gbs;              /* achieved GB/s (bytes / ns); 0: not measured */
    double copy_gbs;         /* the device's measured copy bandwidth; 0: unknown */
    const char *copy_name;   /* what COPY_GBS is, where not the device's copy
                              * figure; NULL: KF_RATES_COPY_NAME */
    double ref_gbs;          /* the reference's GB/s; 0: not stated */
    double gflops;           /* achieved GFLOP/s; 0: the task gives no count */
    double peak_gflops;      /* the measured FMA peak; 0: unknown */
    double ref_gflops;       /* the reference's GFLOP/s; 0: not stated */
    double cache_bytes;      /* the cache that can keep the working set between
                              * calls (a GPU's L2); 0: size unknown */
    const char *cache_name;  /* its name ("L2"); NULL: "cache" */
    int held;                /* the evaluation's judgement where the size is
                              * unknown: 1 the data stays cached between
                              * calls, 0 it does not, -1 not known */
    bool cold;               /* every call starts with its data flushed from
                              * every cache (the host's timing protocol) */
    bool mix_after;          /* the caller sets the kernel's reads and writes,
                              * each at its own measured rate, against its
                              * bytes after this line (round 47) */
    const char *uncounted;   /* why no operation count, where GFLOPS is 0 (a
                              * clause); NULL: "the task gives no operation
                              * count" */
    bool estimated;          /* UNCOUNTED holds an estimate instead: "compute:
                              * estimated, not counted (...)" (round 39: "not
                              * known" before an estimate read as a
                              * contradiction) */
} kf_rates_t;

/* Whether R's working set stays in cache between calls: 1, 0, or -1 when
 * nothing tells. A known size decides (bytes <= cache_bytes); a cold
 * protocol never keeps it; else R->held. */
int kf_rates_fits (const kf_rates_t *r);

/* Writes " memory: ...; compute: ...." (a leading space, no newline):
 * both rates with their shares of the ceilings, the reference's rates
 * where given, and which ceiling the kernel is nearer. Writes nothing when
 * neither rate is known. Returns whether it wrote. */
bool kf_rates_write (FILE *f, const kf_rates_t *r);

/* A byte count as people read it: "8.0 MiB", "512 KiB" (into BUF). */
const char *kf_rates_bytes (double bytes, char *buf, size_t size);

#endif
