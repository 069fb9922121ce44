/*  kf_ze_eval.h - the Level Zero judge's state, shared by its files:
 *  kf_backend_ze.c (the evaluation child: buffers, the device operations,
 *  the result), kf_ze_program.c (a bundle side's module, kernels and
 *  launches), kf_ze_device.c (the device opened, its queue, host-visible
 *  staging, the copy bandwidth, the worker's probe) and, through the
 *  device operations it gives them (kf_dev_ops.h), the correctness pass
 *  and timing samples it shares with OpenCL (kf_dev_check.c,
 *  kf_dev_timing.c; the timing protocol itself is every judge's,
 *  kf_eval_protocol.c). The candidate's process (kf_runner_ze.c) uses
 *  the same state for its side; the judge shares the candidate's tensors
 *  with it as kf_dev_share.h says, as the OpenCL judge does.
 *
 *  Level Zero is reached only through kf_ze_api (dlopen), so none of these
 *  files needs the loader to build.
 */
#ifndef KF_ZE_EVAL_H
#define KF_ZE_EVAL_H

#include "kf_dev_ops.h"
#include "kf_dev_share.h"
#include "kf_eval_check.h"
#include "kf_kernel.h"
#include "kf_ze_api.h"
#include "kf_ze_launch.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_ZE_MAX_TENSORS KF_DEV_MAX_TENSORS
#define KF_ZE_PAD 256                   // canary bytes around device buffers

typedef int (kf_ze_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                                const kf_ctx_t *);

//  The device this process opened.
typedef struct {
    kf_ze_api_t *api;
    kf_ze_handle_t driver, device, context, queue, list;
    kf_ze_device_properties_t props;
    kf_ze_device_compute_properties_t compute;
    uint64_t memory_bytes, cache_bytes;
    int gpus;
} kf_ze_dev_t;

extern kf_ze_dev_t kf_ze_dev;

/* Host-visible staging (kf_ze_device.c): device memory is reached by
 * copies from memory the device can read. */
typedef struct {
    unsigned char *host;
    size_t size;
    uint64_t *stamps;                   // two global timestamps
} kf_ze_stage_t;

extern kf_ze_stage_t kf_ze_stage;

// Device buffers between canaries: DATA is KF_ZE_PAD bytes into BASE.
typedef struct {
    char *base;
    size_t alloc;
    char *data;
    size_t bytes;
} kf_ze_dbuf_t;

// --------------------------------------------------------------------------
//  A side: the candidate (always a bundle) or the reference (a bundle, or
//  a host shared object).

typedef struct {
    const char *what;                   // "candidate", "reference"
    bool host;                          // a host .so: FN on host memory
    kf_ze_forward_fn *fn;
    void *bytes;                        // the artifact, kept: the bundle borrows it
    kf_ze_bundle_t bundle;
    kf_ze_plan_t plan;
    kf_ze_handle_t module;
    kf_ze_handle_t kernels[KF_ZE_MAX_LAUNCHES];
    void *scratch[KF_ZE_MAX_SCRATCH];
} kf_ze_side_t;

typedef struct {
    int n_in, n_out;
    kf_eval_spec_t in[KF_ZE_MAX_TENSORS], out[KF_ZE_MAX_TENSORS];
    //  In the judge: in_d the reference's inputs, ref_d its outputs. In
    //  the runner: in_d and cand_d the candidate's tensor regions.
    kf_ze_dbuf_t in_d[KF_ZE_MAX_TENSORS], ref_d[KF_ZE_MAX_TENSORS], cand_d[KF_ZE_MAX_TENSORS];
    void *in_h[KF_ZE_MAX_TENSORS];          // this set's inputs
    void *back_h[KF_ZE_MAX_TENSORS];        // inputs read back
    void *ref_h[KF_ZE_MAX_TENSORS];         // the reference's outputs
    void *cand_h[KF_ZE_MAX_TENSORS];        // the candidate's outputs, read back
    void *poison_h[KF_ZE_MAX_TENSORS];
    kf_tensor_t in_t[KF_ZE_MAX_TENSORS], ref_t[KF_ZE_MAX_TENSORS];   // host reference's view
    kf_ctx_t host_ctx;
    const char **scalar_names;
    double *scalars;
    kf_ze_side_t ref, cand;
    void *flush;
    size_t flush_bytes;
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;
    char detail[2048];                      // a build log fits
    //  The candidate's process and the memfd of its inputs and outputs
    //  the judge shares with it (kf_dev_share.h).
    kf_dev_share_t share;
    //  The shared correctness pass's view of this (kf_dev_ops.h).
    kf_dev_judge_t judge;
} kf_ze_eval_t;

//  What a step found; the first non-KF_ZE_OK ends the evaluation.
enum { KF_ZE_OK = KF_DEV_OK, KF_ZE_INCORRECT = KF_DEV_INCORRECT, KF_ZE_CRASHED = KF_DEV_CRASHED,
       KF_ZE_REF_FAILED = KF_DEV_REF_FAILED, KF_ZE_HARNESS = KF_DEV_HARNESS,
       KF_ZE_LOAD_FAILED = KF_DEV_LOAD_FAILED };

/* --- kf_ze_device.c */

/* RC's message (a static buffer, overwritten by the next call). */
const char *kf_ze_err (uint32_t rc);
/* Loads the loader and finds GPU DEVICE into kf_ze_dev; -1 with WHY. */
int kf_ze_find_device (int device, char *why, size_t why_size);
/* The context, a compute queue and the one command list; -1 with WHY. */
int kf_ze_open_queue (char *why, size_t why_size);
/* Runs what was appended to the list and waits for it. */
uint32_t kf_ze_submit (void);
/* Device ticks between two global timestamps, in nanoseconds. */
double kf_ze_ticks_ns (uint64_t t0, uint64_t t1);
/* Staging of at least BYTES, and the two timestamps. */
uint32_t kf_ze_stage_reserve (size_t bytes);
/* BYTES between host memory and device memory, through the staging. */
uint32_t kf_ze_upload (void *dst, const void *src, size_t bytes);
uint32_t kf_ze_download (void *dst, const void *src, size_t bytes);
uint32_t kf_ze_device_alloc (void **ptr, size_t bytes);
/* Device-to-device copy bandwidth in *GBS (read + write); -1 with WHY. */
int kf_ze_copy_bandwidth (double *gbs, char *why, size_t why_size);
/* The worker's description of DEVICE ({arch, devices: [...]}), or NULL
 * with WHY; the context is given back after. */
json_t *kf_ze_probe (int device, char *why, size_t why_size);

/* --- kf_backend_ze.c */

/* KF_ZE_OK when RC is 0, else KF_ZE_HARNESS with E->detail. */
int kf_ze_harness (kf_ze_eval_t *e, uint32_t rc, const char *what);

/* --- kf_ze_program.c */

/* The module, kernels and scratch of the bundle side SIDE, whose
 * artifact (SIZE bytes) is in SIDE->bytes, planned against TASK and
 * built on kf_ze_dev. KF_ZE_OK, or the side's failure with E->detail:
 * KF_ZE_LOAD_FAILED for the candidate, KF_ZE_REF_FAILED for the
 * reference. */
int kf_ze_side_build (kf_ze_eval_t *e, kf_ze_side_t *side, size_t size, json_t *task);
/* Appends one call of SIDE (every launch, a barrier after each) writing
 * OUTS; KF_ZE_OK, or the side's failure with E->detail. */
int kf_ze_append_call (kf_ze_eval_t *e, kf_ze_side_t *side, kf_ze_dbuf_t *outs);
/* Sets every launch's arguments of SIDE once, OUTS as the outputs,
 * appending nothing, so a kf-launch line the kernel refuses is known
 * before a call. As kf_ze_append_call. */
int kf_ze_bind (kf_ze_eval_t *e, kf_ze_side_t *side, kf_ze_dbuf_t *outs);
/* Gives back the kernels and module of SIDE. */
void kf_ze_side_free (kf_ze_side_t *side);

#endif
