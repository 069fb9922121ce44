/*  kf_eval_set.h - one set of the correctness pass, written once for
 *  every judge (host and CUDA in their backends, OpenCL and Level Zero
 *  through kf_dev_check.c), above a small per-backend interface; and the
 *  merge of a shape case's worst figures into the evaluation's.
 *
 *  A set: its inputs (drawn, or the exported ones), the right outputs
 *  (the reference's call on them, or the exported ones), a probe's
 *  fingerprints, then the candidate on the same inputs and every check,
 *  the first failure deciding: a crash, changed inputs or a canary, the
 *  candidate's own non-zero return, then the outputs. Each step's time
 *  goes to the harness's split (kf_eval_split_add); the calls of the
 *  main case count towards the timing's warm-up floor (kf_eval_warm_t).
 *  The backend says how each step is done on its device.
 */
#ifndef KF_EVAL_SET_H
#define KF_EVAL_SET_H

#include "kf_eval_check.h"
#include "kf_eval_protocol.h"

#include <stdbool.h>

/* A backend's steps of one set. Each returns KF_EVAL_ST_OK or a status
 * (kf_eval_protocol.h's values) with the backend's detail said; WHEN
 * names the set in it. */
typedef struct {
    void *arg;
    /* Set SET's inputs where both sides take them from; with exported
     * data the right outputs and the scalars too. */
    int (*inputs) (void *arg, int set);
    /* The reference's outputs poisoned, its inputs in place. */
    int (*ref_stage) (void *arg);
    /* One call of the reference and the wait for it: KF_EVAL_ST_OK, or
     * KF_EVAL_ST_REF_FAILED with the detail. */
    int (*ref_call) (void *arg, const char *when);
    /* After it: its outputs kept as the right ones, the inputs as they
     * were drawn. NULL: nothing to do. */
    int (*ref_keep) (void *arg);
    /* A probe's fingerprints of the set (inputs and right outputs). */
    int (*fingerprint) (void *arg);
    /* The candidate's inputs in place, its outputs poisoned. */
    int (*cand_stage) (void *arg);
    /* One call of the candidate and the wait for it: KF_EVAL_ST_OK,
     * KF_EVAL_ST_INCORRECT (it returned non-zero, or left work running),
     * KF_EVAL_ST_CRASHED or a harness status, with the detail. */
    int (*cand_call) (void *arg, const char *when);
    /* Inputs unchanged, canaries intact; then the outputs against the
     * right ones. */
    int (*check_memory) (void *arg, const char *when);
    int (*compare) (void *arg, const char *when);
} kf_eval_set_ops_t;

/* What a set runs against, and what it counts. */
typedef struct {
    const kf_eval_set_ops_t *ops;
    bool exported;           /* right answers from exported data: no reference call */
    bool fingerprint;        /* a reference probe: fingerprint each set */
    bool candidate;          /* false: a probe, the reference alone */
    bool count_warm;         /* the main case of a timed evaluation */
    kf_eval_warm_t *warm;    /* its calls, for the warm-up floor */
    double *ref_s;           /* the reference's calls: seconds and count */
    int *ref_calls;
    kf_eval_worst_t *worst;  /* ->sets counts the candidate's calls */
} kf_eval_set_t;

/* Runs set SET (WHEN names it in a detail). KF_EVAL_ST_OK, or the first
 * failing step's status. */
int kf_eval_set_run (const kf_eval_set_t *s, int set, const char *when);

/* Folds the figures of a shape case W into the evaluation's INTO. */
void kf_eval_worst_merge (kf_eval_worst_t *into, const kf_eval_worst_t *w);

#endif
