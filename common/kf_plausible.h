/*  kf_plausible.h - whether a correct result's speed is believable: the
 *  rules the exec worker reports against and the coordinator decides by.
 *
 *  Two rules make a result suspicious (docs/evaluation.md, "Plausibility
 *  and re-verification"):
 *  - physics: the candidate moves its bytes faster than the device's
 *    measured copy bandwidth (only where that ceiling binds: the data is
 *    larger than the cache), or computes faster than its measured FMA
 *    peak, by more than a margin;
 *  - the run's distribution: its speedup is more than a factor above the
 *    run's best counted speedup (never below 1x), once the run has enough
 *    counted correct candidates.
 *  A third, the confirmation rule, suspects nothing: a result that would
 *  become the run's new best is timed once more (kf_plausible_new_best).
 *  Speed against the reference alone is never suspicious: a slow baseline
 *  (PyTorch eager on a CPU) is easily beaten 50x by an honest kernel.
 *  A suspicious result is evaluated again; it counts when that evaluation
 *  is correct, within the ceilings, and its speedup holds
 *  (kf_plausible_holds). One place for the arithmetic, so the worker's
 *  report and the coordinator's decision cannot drift apart.
 */
#ifndef KF_PLAUSIBLE_H
#define KF_PLAUSIBLE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Defaults of the rules (the coordinator's plausible_* and verify_* keys). */
#define KF_PLAUSIBLE_MARGIN 1.1        /* above 1.1x a ceiling */
#define KF_PLAUSIBLE_OUTLIER 8.0       /* above 8x the run's best counted speedup */
#define KF_PLAUSIBLE_MIN_COUNTED 3     /* ... once 3 correct candidates count */
#define KF_PLAUSIBLE_TOLERANCE 0.5     /* re-verified at least (1 - 0.5) x the first */
/* Round 23: an exec worker started while other work ran measured every
 * core's cold read at 22 GB/s (39 on a quiet host) and kept it as its
 * ceiling, and two honest kernels at 26 GB/s were held for audit. Such
 * figures are kept by no file (kf_host_figures.h) but the worker judges
 * by them; a measurement beside other work can only read low, so a
 * ceiling the worker says it measured so binds at this margin or more. */
#define KF_PLAUSIBLE_MARGIN_BUSY 2.0

/* Round 39: a kernel that streamed its outputs from two threads moved
 * 44 GB/s against a streaming copy measured at 40, on its first timing
 * and again on fresh inputs in another process, correct both times, and
 * was held for audit at 1.10x the ceiling. A copy loop is one way to
 * move bytes, not the machine's limit; the first figure past MARGIN is
 * timed again, and the second binds at this margin or more: a cheat
 * that skips work or keeps data between calls comes out far past it. */
#define KF_PLAUSIBLE_MARGIN_AGAIN 1.25
double kf_plausible_margin_again (double margin);

typedef struct {
    double margin;           /* a rate above margin x its ceiling is suspicious (>= 1) */
    double outlier_factor;   /* speedup above factor x max(run's best, 1) is
                              * suspicious (0: every correct result) */
    int min_counted;         /* counted correct candidates before the outlier rule */
    double tolerance;        /* the re-verified speedup must be >= (1 - tolerance) x the first */
} kf_plausible_rules_t;

/* The figures of one timed, correct call, and the ceilings of the device
 * that timed it. */
typedef struct {
    double bytes;            /* least traffic of one call: inputs read + outputs written */
    double flops;            /* declared work of one call (0: not declared) */
    double cand_ns;          /* the candidate's median time per call */
    double copy_gbs;         /* measured copy bandwidth, read + write (0: unknown) */
    double read_gbs;         /* measured rate of every core reading cold data at once
                              * (0: unknown): no mix of reads and writes arrives faster,
                              * and a kernel that reads more than it writes may pass the
                              * copy's rate (round 19: 12 GB/s against a 10 GB/s copy,
                              * with reads at 19.9 GB/s) */
    double stream_gbs;       /* measured copy with streaming stores, read + write, the
                              * faster of one core's and every core's (0: unknown): a
                              * kernel that streams its outputs moves N + M bytes at up
                              * to this (round 26: honest kernels at 25-30 GB/s held
                              * against a 22 GB/s copy, with streaming copies at
                              * 29-32 GB/s) */
    double read_bytes;       /* of BYTES, the inputs read (0: unknown) */
    double write_gbs;        /* measured rate of every core writing with streaming
                              * stores alone, nothing read (0: unknown): with READ_GBS
                              * it bounds a kernel whose reads and writes are not
                              * even, each at its own rate (kf_plausible_mix_gbs) */
    double peak_gflops;      /* measured FMA peak (0: unknown) */
    bool bw_applies;         /* the data is larger than the cache, so the
                              * copy bandwidth binds */
    bool ceilings_busy;      /* the ceilings were measured while other work ran
                              * (KF_PLAUSIBLE_MARGIN_BUSY) */
} kf_plausible_figures_t;

/* The defaults above. */
void kf_plausible_rules_default (kf_plausible_rules_t *rules);

/* Achieved rates of F: GB/s and GFLOP/s (0 when not known). */
double kf_plausible_gbs (const kf_plausible_figures_t *f);
double kf_plausible_gflops (const kf_plausible_figures_t *f);

/* Round 44: kernels reading two inputs and writing one moved 50-51 GB/s,
 * correct on their first timing and again on fresh inputs, against a
 * streaming copy of 39.8, every core's cold read at 36.9 and their
 * streaming writes at 27.8 GB/s, and were held for audit: on two cores a
 * core's reads and its streaming writes wait on different buffers, so a
 * mix of them passes both the copy and the read alone. The bound of F's
 * mix: its reads at READ_GBS alongside its writes at WRITE_GBS, each
 * stream at its own measured rate, whichever takes longer; GB/s of its
 * BYTES, or 0 where a figure is unknown. */
double kf_plausible_mix_gbs (const kf_plausible_figures_t *f);

/* The same bound of READS and WRITES bytes (any positive unit) at
 * READ_GBS and WRITE_GBS: GB/s of READS + WRITES, or 0 where any figure is
 * not positive (the prompts' shares take it too, kf_prompt_share.c). */
double kf_plausible_mix (double reads, double writes, double read_gbs, double write_gbs);

/* The physics rule. True when F's bandwidth (where it applies) or FLOP
 * rate is above MARGIN times its ceiling (KF_PLAUSIBLE_MARGIN_BUSY times
 * at least where F's ceilings were measured beside other work); then
 * REASON (SIZE bytes) says which, with the figures. A ceiling of 0 (not measured) or work of 0
 * (not declared) judges nothing. */
bool kf_plausible_ceiling (const kf_plausible_figures_t *f, double margin, char *reason,
                           size_t size);

/* The distribution rule: SPEEDUP against the run's best counted speedup
 * RUN_BEST among COUNTED counted correct candidates (this one not among
 * them). True, with REASON, when COUNTED >= min_counted and SPEEDUP >
 * outlier_factor x max(RUN_BEST, 1); so a factor of 0 (with min_counted
 * 0) re-verifies every correct result. */
bool kf_plausible_outlier (double speedup, double run_best, long counted,
                           const kf_plausible_rules_t *rules, char *reason, size_t size);

/* The confirmation rule (a run's `confirm_best` switch): a correct
 * result that would become the run's new best is timed once more before
 * it counts, and counts at the lower of its two figures. One timing of a
 * kernel can be far from the next (round 15: the same source took 1531.6
 * and 3290.7 us on one host), and the run's best is the figure a search
 * is judged by. True, with REASON (which begins KF_PLAUSIBLE_CONFIRM),
 * when COUNTED >= 1 and SPEEDUP > RUN_BEST: the run's first counted
 * figure has nothing to beat. */
#define KF_PLAUSIBLE_CONFIRM "a new best"
bool kf_plausible_new_best (double speedup, double run_best, long counted, char *reason,
                            size_t size);

/* Round 36: a would-be best read 90.56x on its full timing and 63.84x
 * timed again beside other work, and the lower counted: the load chose
 * the figure. Where the second timing of a confirmation is below the
 * first by more than KF_PLAUSIBLE_DISAGREE times, a third timing decides,
 * and the middle of the three counts: one fast timing alone never counts,
 * and one slowed by a neighbour no longer does either. The middle is
 * never above the first (a second above it counts the first, as the
 * lower of two), so nothing counts higher than its first figure. */
#define KF_PLAUSIBLE_DISAGREE 1.1
bool kf_plausible_disagree (double first, double again);

/* The middle of three figures. */
double kf_plausible_middle (double a, double b, double c);

/* Whether a re-verified speedup AGAIN holds the first figure FIRST:
 * AGAIN >= (1 - TOLERANCE) x FIRST. False, with REASON, when not. */
bool kf_plausible_holds (double first, double again, double tolerance, char *reason,
                         size_t size);

/* Least bytes one call of TASK moves: every input read once and every
 * output written once, from the canonical task's shapes and dtypes (0
 * when it names no tensors). */
double kf_plausible_task_bytes (json_t *task);

/* Of those, the inputs' bytes alone. */
double kf_plausible_task_read_bytes (json_t *task);

/* TASK's declared work of one call on the main shape (flops: a number,
 * or the first of a per-case list), or 0. */
double kf_plausible_task_flops (json_t *task);

#endif
