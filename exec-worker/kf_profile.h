/*  kf_profile.h - the exec worker's "profile" job: one correct candidate
 *  run under NVIDIA Nsight Compute (ncu), its report condensed into a few
 *  lines a prompt can carry.
 *
 *  Timing says how fast a kernel is; the profile says why: how close it
 *  comes to the DRAM and compute peaks, how many warps it keeps resident,
 *  and what its warps wait on. The model that wrote the kernel can act on
 *  that ("long scoreboard stalls at 40% occupancy") where a bare speedup
 *  tells it nothing.
 *
 *  ncu is found at start-up (never assumed) and runs in the same sandbox
 *  as an evaluation, launching the evaluation child on the candidate
 *  (docs/evaluation.md, "Profiling").
 */
#ifndef KF_PROFILE_H
#define KF_PROFILE_H

#include "kf_exec.h"
#include "kf_worker.h"

#include <jansson.h>
#include <stddef.h>

typedef struct {
    const char *ncu;           /* ncu to use; NULL or "": search; "off": none */
    const char *backend;       /* the worker's backend; only "cuda" profiles */
    int launches;              /* kernel launches profiled; 0: 4 */
    double time_limit_s;       /* one profile's child, wall clock; 0: 300 */
} kf_profile_config_t;

typedef struct _kf_profile_t kf_profile_t;

/* Copies CONFIG and probes: finds ncu (CONFIG->ncu alone when set, else
 * ncu on PATH, /usr/local/cuda/bin/ncu, /opt/nvidia/nsight-compute/
 * VERSION/ncu) and asks its version. Not finding one is no error (see
 * kf_profile_unavailable). Returns NULL only when out of memory. */
kf_profile_t *kf_profile_new (const kf_profile_config_t *config);

/* Idempotent; nulls *SELF_P. */
void kf_profile_destroy (kf_profile_t **self_p);

/* NULL when profiling works here, else why not, one line (borrowed). */
const char *kf_profile_unavailable (kf_profile_t *self);

/* {ncu, version} for the worker's capabilities, or NULL when profiling
 * is unavailable. Caller owns it. */
json_t *kf_profile_capability (kf_profile_t *self);

/* kf_job_fn body for kind "profile": payload as for "evaluate" (task,
 * seed), frame 0 the candidate's artifact (a reference frame after it is
 * allowed and not used). Uses the shared instance (kf_profile_set_shared);
 * without one, or without ncu, the job fails "profiling unavailable: ...".
 * Result: {summary, metrics, kernels, launches, ncu, wall_s}. */
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

#endif
