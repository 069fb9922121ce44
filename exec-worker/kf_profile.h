/*  kf_profile.h - the exec worker's "profile" job: one correct candidate
 *  run under its target's profiler, NVIDIA Nsight Compute (ncu) for CUDA
 *  or perf stat's hardware counters on the host, its report condensed
 *  into a few lines a prompt can carry.
 *
 *  Timing says how fast a kernel is; the profile says why: how close it
 *  comes to the DRAM and compute peaks, how many warps it keeps resident,
 *  and what its warps wait on. The model that wrote the kernel can act on
 *  that ("long scoreboard stalls at 40% occupancy") where a bare speedup
 *  tells it nothing.
 *
 *  On the host the counters say it: instructions per cycle, cache and
 *  branch misses per thousand instructions, how many cores were busy,
 *  beside the rates against the measured ceilings (kf_rates.h).
 *
 *  The profiler is found and tried at start-up (never assumed): ncu must
 *  answer --version; perf must count the events it will be asked for in
 *  a trial run under the same sandbox as a profile (the kernel's
 *  perf_event_paranoid, a VM without a virtual PMU and a container's
 *  seccomp profile all refuse them). Either runs the evaluation child on
 *  the candidate in the same sandbox as an evaluation (docs/evaluation.md,
 *  "Profiling").
 */
#ifndef KF_PROFILE_H
#define KF_PROFILE_H

#include "kf_exec.h"
#include "kf_worker.h"

#include <jansson.h>
#include <stddef.h>

/* perf's events by default: the hardware counters the summary reads. */
#define KF_PROFILE_PERF_EVENTS \
    "cycles,instructions,cache-references,cache-misses,branches,branch-misses"

typedef struct {
    const char *ncu;           /* ncu to use; NULL or "": search; "off": none */
    const char *perf;          /* perf to use (host); NULL or "": perf on PATH; "off": none */
    const char *perf_events;   /* perf's events, comma-separated; NULL or "":
                                  KF_PROFILE_PERF_EVENTS (task-clock is always added) */
    const char *backend;       /* the worker's backend: "cuda" (ncu), "host" (perf) */
    int launches;              /* kernel launches profiled; 0: 4 */
    double time_limit_s;       /* one profile's child, wall clock; 0: 300 */
} kf_profile_config_t;

typedef struct _kf_profile_t kf_profile_t;

/* Copies CONFIG and probes: for cuda finds ncu (CONFIG->ncu alone when
 * set, else ncu on PATH, /usr/local/cuda/bin/ncu, /opt/nvidia/
 * nsight-compute/VERSION/ncu) and asks its version; for the host finds
 * perf and tries its events (kf_profile_perf_probe). Not finding one is
 * no error (see kf_profile_unavailable). Returns NULL only when out of
 * memory. */
kf_profile_t *kf_profile_new (const kf_profile_config_t *config);

/* Idempotent; nulls *SELF_P. */
void kf_profile_destroy (kf_profile_t **self_p);

/* NULL when profiling works here, else why not, one line (borrowed). */
const char *kf_profile_unavailable (kf_profile_t *self);

/* For the worker's capabilities ("profiler"), or NULL when profiling is
 * unavailable: {profiler: "ncu", ncu, version, launches} or {profiler:
 * "perf", perf, version, events, perf_event_paranoid}. Caller owns it. */
json_t *kf_profile_capability (kf_profile_t *self);

/* kf_job_fn body for kind "profile": payload as for "evaluate" (task,
 * seed, reference_data), frame 0 the candidate's artifact, then the
 * reference's (ncu ignores it; perf's run needs it unless reference_data
 * is given). Uses the shared instance (kf_profile_set_shared); without
 * one, or without a profiler, the job fails "profiling unavailable: ...".
 * Result: {summary, metrics, profiler, wall_s} and ncu's {launches, ncu}
 * or perf's {perf, events, calls}. */
void kf_profile_handle (const kf_exec_config_t *cfg, const kf_job_t *job,
                        kf_job_result_t *res);

/* The instance kf_exec_handle hands "profile" jobs to; set once by the
 * worker's main (or a test) before any job runs; not owned here. */
void kf_profile_set_shared (kf_profile_t *self);
kf_profile_t *kf_profile_shared (void);

/* Condenses ncu's raw-page CSV (`ncu --csv --page raw`, with ncu's own
 * "==PROF==" lines allowed around it) into *METRICS (per kernel and the
 * headline figures) and *SUMMARY (a few lines of text). Returns 0, or -1
 * with *ERROR (caller frees) when the text holds no profiled kernel. */
int kf_profile_condense (const char *csv, size_t size, json_t **metrics, char **summary,
                         char **error);

/* NAME's path in a directory of PATH (caller frees), or NULL. */
char *kf_profile_on_path (const char *name);

/* --- perf stat on the host (kf_profile_perf.c) */

/* Finds perf (WANT alone when set; "off": none) and tries EVENTS (NULL or
 * "": the default) as a profile would use them: perf stat of a trivial
 * program under the sandbox. NULL when they count, with *PERF, *VERSION
 * and *EVENTS_OUT (the list used, task-clock added) set; else why not,
 * one line. *PARANOID gets kernel.perf_event_paranoid (-99: unreadable)
 * either way. Caller frees all strings. */
char *kf_profile_perf_probe (const char *want, const char *events, char **perf, char **version,
                             char **events_out, int *paranoid);

/* The profile job on the host: JOB's candidate evaluated as usual (frames
 * and payload as for "evaluate") with its child under `perf stat` whose
 * counters are on only while the candidate's timed batches run
 * (kf_perf_gate.h); the counts and the evaluation's rates condensed. */
void kf_profile_perf_run (const kf_exec_config_t *cfg, const kf_job_t *job, const char *perf,
                          const char *version, const char *events, kf_job_result_t *res);

/* Condenses perf stat's CSV output (`-x,`: value, unit, event, run time,
 * share of time counted, ...) over the profiled run, whose evaluation
 * result EVAL gives the calls counted (candidate.samples x
 * calls_per_sample), their time and the rates: *METRICS and *SUMMARY as
 * kf_profile_condense's. Returns 0, or -1 with *ERROR (caller frees) when
 * nothing was counted. */
int kf_profile_perf_condense (const char *text, size_t size, json_t *eval, json_t **metrics,
                              char **summary, char **error);

#endif
