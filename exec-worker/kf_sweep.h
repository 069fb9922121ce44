/*  kf_sweep.h - a tuning sweep: the configs of one candidate checked and
 *  timed one evaluation child each, within the job's time.
 *
 *  Config 0 (the source as written) runs under a generous limit; the
 *  first config judged correct sets the limit of the others from what it
 *  took (wall and CPU time). Every config is screened (checked, timed
 *  with a short protocol); the best few by screened speedup are timed
 *  again with the job's own protocol, and the best of those gives the
 *  result's top level. When the time left cannot hold the next config at
 *  its limit the sweep stops and says why; no child's limit ever reaches
 *  past the job's. docs/evaluation.md, "Tuning".
 *
 *  The evaluation itself (an evaluation child, kf_exec.c) and the clock
 *  are the caller's, through kf_sweep_ops_t, so the plan can be tested
 *  with an evaluator of figures.
 */
#ifndef KF_SWEEP_H
#define KF_SWEEP_H

#include "kf_worker.h"

#include <jansson.h>

typedef struct {
    double job_limit_s;      /* the whole sweep, full timings included */
    double eval_limit_s;     /* one evaluation: config 0's and every full
                              * run's cap */
    double limit_factor;     /* k: a config's limit is k x the expected */
    double limit_floor_s;    /*   time plus this floor */
    int full_configs;        /* configs timed with the full protocol */
} kf_sweep_limits_t;

typedef struct {
    /* One evaluation child of the config whose candidate frame is FRAME,
     * with PAYLOAD (borrowed), under a wall-clock limit of LIMIT_S: its
     * verdict or the job's failure into RES (as kf_exec's evaluation),
     * the CPU seconds its processes used into *CPU_S (0: unknown). */
    void (*evaluate) (void *arg, json_t *payload, int frame, double limit_s,
                      kf_job_result_t *res, double *cpu_s);
    /* Seconds on a monotonic clock. */
    double (*now) (void *arg);
    void *arg;
} kf_sweep_ops_t;

/* Defaults: the job 300 s, one evaluation 120 s, k 3, floor 10 s, 2 full. */
void kf_sweep_limits_default (kf_sweep_limits_t *limits);

/* The screening protocol for a sweep of N configs, from the job's TIMING
 * (borrowed, may be NULL). Caller owns the result. */
json_t *kf_sweep_screen_timing (json_t *timing, int n);

/* Runs the sweep of CONFIGS ([{params, frame}], borrowed; a frame below
 * N_CANDS) with the evaluate PAYLOAD (borrowed, without configs). RES
 * gets the result (ok, with configs, best_config, tuning) or the job's
 * failure: a malformed config, or a child's reference or harness
 * failure. */
void kf_sweep_run (const kf_sweep_limits_t *limits, const kf_sweep_ops_t *ops,
                   json_t *payload, json_t *configs, int n_cands, kf_job_result_t *res);

#endif
