/*  kf_dev_ops.h - one device-operations interface under the OpenCL and
 *  Level Zero judges (kf_backend_ocl.c, kf_backend_ze.c), and what the
 *  two judge alike written once above it: a set's reference run, the
 *  candidate's call in its own process and every check after it
 *  (kf_dev_check.c), their samples under the timing protocol every
 *  judge shares (kf_dev_timing.c beneath kf_eval_protocol.c), and the
 *  timed part of the result.
 *
 *  Each backend fills one kf_dev_ops_t with its device's calls and one
 *  kf_dev_judge_t that points at its host buffers. A correctness set is
 *  the host's and CUDA's too (kf_eval_set.c), this interface giving its
 *  steps; the checks themselves are kf_eval_check.h's, the candidate's
 *  process kf_dev_share.h's.
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
    uint64_t seed;                // the job's: each set's inputs drawn from it
    bool probe;                   // the reference alone: no candidate, no share
    kf_eval_degen_t *degen;       // not NULL: a probe's checks of the reference's outputs
    double ref_s;                 // the reference's calls so far, seconds
    int ref_calls;
    //  The sets the timed calls cycle through (the share's variants):
    //  set V's inputs and right outputs, kept by kf_dev_correctness.
    int variants;
    void *var_in[KF_DEV_MAX_VARIANTS][KF_DEV_MAX_TENSORS];
    void *var_ref[KF_DEV_MAX_VARIANTS][KF_DEV_MAX_TENSORS];
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

/* SETS correctness sets (kf_eval_set_run over this interface): set S's
 * inputs drawn from J's seed, the reference run on them (on the host
 * over a copy, or on the device with its outputs poisoned first), its
 * outputs read into REF_H; a probe's fingerprints; then the candidate
 * on variant 0 of the shared file, one call in its process, and every
 * check. The first J->variants sets are kept for the timing. KF_DEV_OK,
 * or the first failure's KF_DEV_* with the detail. */
int kf_dev_correctness (kf_dev_judge_t *j, int sets);

/* After a candidate call, the tensors on the host: variant V's inputs
 * as IN holds them, its canaries intact, its outputs against REF.
 * KF_DEV_OK, or _INCORRECT / _CRASHED with the detail (WHEN names the
 * step). */
int kf_dev_candidate_checks (kf_dev_judge_t *j, int v, void *const *in, void *const *ref,
                             const char *when);

/* J's kept sets freed. */
void kf_dev_judge_free (kf_dev_judge_t *j);

/* The evaluation's end after status ST (the first failure, or KF_DEV_OK
 * after the timing T): a load, reference or harness failure written to
 * DIR as its verdict (NULL returned); else the result (the caller's, to
 * add its own fields to and write): verdict, detail, correctness, DEVICE
 * (taken), reference_on, isolation and, when correct, the timed part:
 * speedup, candidate and reference timings, sync_overhead_ns, the
 * protocol as run (input_sets: the variants), bandwidth (against
 * COPY_GBS, the roofline applying above CACHE_BYTES) and the audit. */
json_t *kf_dev_result (kf_dev_judge_t *j, int st, const kf_eval_timing_t *t, double copy_gbs,
                       uint64_t cache_bytes, json_t *device, const char *dir);

/* --- kf_dev_timing.c */

/* Times the reference on the last set's inputs and the candidate on the
 * kept sets, one in each variant of the shared file, call K of a sample
 * on variant K modulo their number, by the judges' one protocol
 * (kf_eval_protocol.h) as TIMING's floors say, the samples this file's.
 * Before each candidate sample every variant's outputs are poisoned;
 * after it each variant it reached is checked (kf_dev_candidate_checks).
 * KF_DEV_OK, or another KF_DEV_* with the detail. */
int kf_dev_time (kf_dev_judge_t *j, json_t *timing, kf_eval_timing_t *t);

#endif
