/*  kf_dev_ops.h - one device-operations interface under the OpenCL and
 *  Level Zero judges (kf_backend_ocl.c, kf_backend_ze.c), and what the
 *  two judge alike written once above it: a set's reference run, the
 *  candidate's call in its own process and every check after it
 *  (kf_dev_check.c), their samples under the timing protocol every
 *  judge shares (kf_dev_timing.c beneath kf_eval_protocol.c), and the
 *  timed part of the result.
 *
 *  Each backend fills one kf_dev_ops_t with its device's calls and one
 *  kf_dev_judge_t that points at its host buffers; the checks themselves
 *  are kf_eval_check.h's, the candidate's process kf_dev_share.h's.
 */
#ifndef KF_DEV_OPS_H
#define KF_DEV_OPS_H

#include "kf_dev_share.h"
#include "kf_eval_check.h"
#include "kf_eval_protocol.h"
#include "kf_kernel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef int (kf_dev_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                                 const kf_ctx_t *);

/* The device's side of the reference. DEV is the backend's own state;
 * an error code RC is the API's (cl_int, ze_result_t), 0 for none. */
typedef struct {
    /* BYTES from host memory SRC into the reference's tensor T (its
     * inputs, then its outputs), waited for; 0 or RC. */
    long (*copy_in) (void *dev, int t, const void *src, size_t bytes);
    /* BYTES of the reference's tensor T into host memory DST; 0 or RC. */
    long (*copy_out) (void *dev, int t, void *dst, size_t bytes);
    /* CALLS calls of the device reference (every launch, in order),
     * synchronised, under the reference's phase. KF_DEV_OK;
     * KF_DEV_REF_FAILED with the detail set (a launch refused); or
     * another status with *RC the API's error. */
    int (*launch_ref) (void *dev, int calls, long *rc);
    /* The cache flush before a timed sample (a fill of twice the
     * device's largest cache with a pattern from SALT), waited for. */
    long (*flush) (void *dev, unsigned salt);
    /* The work of an empty sample: one 256-byte fill, waited for. */
    long (*tiny) (void *dev);
    /* RC's name ("CL_OUT_OF_RESOURCES", "ZE_RESULT_ERROR_DEVICE_LOST (...)"). */
    const char *(*err) (long rc);
} kf_dev_ops_t;

/* A judge's view of its evaluation: the backend's buffers, borrowed. */
typedef struct {
    const kf_dev_ops_t *ops;
    void *dev;
    int n_in, n_out;
    const kf_eval_spec_t *in, *out;
    void **in_h;                  // this set's inputs
    void **back_h;                // a host reference's copy of them
    void **ref_h;                 // the reference's outputs
    void **cand_h;                // the candidate's, read from the shared file
    void **poison_h;
    kf_dev_forward_fn *ref_fn;    // not NULL: a host reference, on IN_T and REF_T
    kf_tensor_t *in_t, *ref_t;
    const kf_ctx_t *host_ctx;
    const kf_eval_tol_t *tol;
    kf_eval_worst_t *worst;
    kf_dev_share_t *share;        // the candidate's process
    char *detail;
    size_t detail_size;
    double ref_s;                 // the reference's calls so far, seconds
    int ref_calls;
} kf_dev_judge_t;

/* TASK's inputs and outputs read into IN and OUT (J's IN and OUT must
 * be them) and J's N_IN and N_OUT; the host buffers J points at
 * allocated (IN_H, BACK_H; REF_H, CAND_H, POISON_H, the poison images
 * made; IN_T over BACK_H and REF_T over REF_H, a host reference's view);
 * the scalars into *NAMES and *VALUES (the caller frees both) and CTX,
 * a host reference's context. KF_DEV_OK, or KF_DEV_REF_FAILED (a task
 * the judge cannot take) / _HARNESS with the detail. */
int kf_dev_host_tensors (kf_dev_judge_t *j, json_t *task, kf_eval_spec_t *in, kf_eval_spec_t *out,
                         const char ***names, double **values, kf_ctx_t *ctx);

/* Set SET's inputs drawn (SEED), the reference run on them (on the host
 * over a copy, or on the device with its outputs poisoned first), its
 * outputs read into REF_H. KF_DEV_OK, or KF_DEV_REF_FAILED / _HARNESS
 * with the detail. */
int kf_dev_reference_set (kf_dev_judge_t *j, uint64_t seed, int set);

/* The candidate on set SET's inputs: inputs and poisoned outputs
 * written to the shared file, one call in its process, the tensors
 * handed back, then kf_dev_candidate_checks. */
int kf_dev_candidate_set (kf_dev_judge_t *j, int set);

/* After a candidate call, the tensors on the host: inputs unchanged,
 * canaries intact, the outputs against the reference's. KF_DEV_OK, or
 * _INCORRECT / _CRASHED with the detail (WHEN names the step). */
int kf_dev_candidate_checks (kf_dev_judge_t *j, const char *when);

/* The timed part of RESULT from T (kf_dev_time's): speedup (null when
 * there is none), candidate and reference timings, sync_overhead_ns,
 * the protocol as run, bandwidth (against COPY_GBS, the roofline
 * applying above CACHE_BYTES) and the audit. */
void kf_dev_timing_result (const kf_dev_judge_t *j, const kf_eval_timing_t *t, double copy_gbs,
                           uint64_t cache_bytes, json_t *result);

/* --- kf_dev_timing.c */

/* Times reference and candidate on the last set's inputs (the
 * candidate's in its process, its tensors in the shared file, handed to
 * the device for the loop and back after it) by the judges' one
 * protocol (kf_eval_protocol.h) as TIMING's floors say, the samples
 * this file's. KF_DEV_OK, or another KF_DEV_* with the detail. */
int kf_dev_time (kf_dev_judge_t *j, json_t *timing, kf_eval_timing_t *t);

#endif
