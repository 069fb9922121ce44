/*  kf_ocl_eval.h - the OpenCL judge's state, shared by its files:
 *  kf_backend_ocl.c (the evaluation child: buffers, the device
 *  operations, the result), kf_ocl_program.c (a bundle side's program, kernels
 *  and launches), kf_ocl_device.c (platform and device chosen, context
 *  and queue, copies, the capabilities and the worker's probe),
 *  and, through the device operations it gives them (kf_dev_ops.h), the
 *  correctness pass and timing samples it shares with Level Zero
 *  (kf_dev_check.c, kf_dev_timing.c; the timing protocol itself is every
 *  judge's, kf_eval_protocol.c). The candidate's process
 *  (kf_runner_ocl.c) uses the same state for its side; the judge shares
 *  the candidate's tensors with it as kf_dev_share.h says, as the Level
 *  Zero judge does.
 *
 *  OpenCL is reached only through kf_ocl_api (dlopen), so none of these
 *  files needs the ICD loader to build. A candidate is the same KF-SPIRV
 *  bundle the Level Zero backend takes, planned by the same kf-launch
 *  reader (kf_ze_launch.h); this backend builds the bundle's OpenCL C
 *  source with its -D flags through clBuildProgram.
 */
#ifndef KF_OCL_EVAL_H
#define KF_OCL_EVAL_H

#include "kf_dev_ops.h"
#include "kf_dev_share.h"
#include "kf_eval_check.h"
#include "kf_kernel.h"
#include "kf_ocl_api.h"
#include "kf_ze_launch.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define KF_OCL_MAX_TENSORS KF_DEV_MAX_TENSORS

typedef int (kf_ocl_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                                 const kf_ctx_t *);

//  The device this process opened.
typedef struct {
    kf_ocl_api_t *api;
    kf_cl_handle platform, device, context, queue;
    char platform_name[128], name[256], version[128], driver[128];
    kf_cl_uint compute_units, clock_mhz;
    size_t max_group_size;
    uint64_t memory_bytes, cache_bytes, max_alloc;
    size_t pad;                          // canary bytes: a multiple of the base alignment
    int index;                           // among every platform's devices
    bool il;                             // accepts SPIR-V (CL_DEVICE_IL_VERSION)
} kf_ocl_dev_t;

extern kf_ocl_dev_t kf_ocl_dev;

// Device buffers between canaries: DATA is a sub-buffer of BASE.
typedef struct {
    kf_cl_handle base, data;
    size_t alloc, bytes;
} kf_ocl_dbuf_t;

typedef struct {
    const char *what;                    // "candidate", "reference"
    bool host;                           // a host .so: FN on host memory
    kf_ocl_forward_fn *fn;
    void *bytes;                         // the artifact, kept: the bundle borrows it
    kf_ze_bundle_t bundle;
    kf_ze_plan_t plan;
    kf_cl_handle program;
    char how[200];                       // "spirv", or "source (why not the SPIR-V)"
    kf_cl_handle kernels[KF_ZE_MAX_LAUNCHES];
    kf_cl_handle scratch[KF_ZE_MAX_SCRATCH];
} kf_ocl_side_t;

typedef struct {
    int n_in, n_out;
    kf_eval_spec_t in[KF_OCL_MAX_TENSORS], out[KF_OCL_MAX_TENSORS];
    //  In the judge: in_d the reference's inputs, ref_d its outputs. In
    //  the runner: in_d and cand_d the candidate's, over the shared file.
    kf_ocl_dbuf_t in_d[KF_OCL_MAX_TENSORS], ref_d[KF_OCL_MAX_TENSORS], cand_d[KF_OCL_MAX_TENSORS];
    void *in_h[KF_OCL_MAX_TENSORS];          // this set's inputs
    void *back_h[KF_OCL_MAX_TENSORS];        // inputs read back
    void *ref_h[KF_OCL_MAX_TENSORS];         // the reference's outputs
    void *cand_h[KF_OCL_MAX_TENSORS];        // the candidate's outputs, read back
    void *poison_h[KF_OCL_MAX_TENSORS];
    kf_tensor_t in_t[KF_OCL_MAX_TENSORS], ref_t[KF_OCL_MAX_TENSORS];   // host reference's view
    kf_ctx_t host_ctx;
    const char **scalar_names;
    double *scalars;
    kf_ocl_side_t ref, cand;
    kf_cl_handle flush;
    size_t flush_bytes;
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;
    bool probe;                              // the reference alone (no candidate)
    kf_eval_degen_t degen;                   // a probe's checks of its outputs
    char detail[2048];                       // a build log fits
    //  The candidate's process and the memfd of its inputs and outputs
    //  the judge shares with it (kf_dev_share.h).
    kf_dev_share_t share;
    //  The shared correctness pass's view of this (kf_dev_ops.h).
    kf_dev_judge_t judge;
} kf_ocl_eval_t;

//  What a step found; the first non-KF_OCL_OK ends the evaluation.
enum { KF_OCL_OK = KF_DEV_OK, KF_OCL_INCORRECT = KF_DEV_INCORRECT,
       KF_OCL_CRASHED = KF_DEV_CRASHED, KF_OCL_REF_FAILED = KF_DEV_REF_FAILED,
       KF_OCL_HARNESS = KF_DEV_HARNESS, KF_OCL_LOAD_FAILED = KF_DEV_LOAD_FAILED };

/* --- kf_ocl_device.c */

/* Loads the ICD loader and finds the device SELECT names into kf_ocl_dev:
 * NULL or "" or digits: the index among every platform's devices, in
 * platform order; else the first device whose platform or device name
 * holds SELECT (case-insensitive). Opens its context and an in-order,
 * profiling queue. -1 with WHY ("no OpenCL device: ..."). */
int kf_ocl_open (const char *select, char *why, size_t why_size);
/* Loads the ICD loader and has it read its platforms, opening no
 * device (the runner, before it confines itself). -1 with WHY. */
int kf_ocl_preload (char *why, size_t why_size);
/* Gives the context and queue back. */
void kf_ocl_close (void);
kf_cl_int kf_ocl_alloc (kf_cl_handle *mem, size_t bytes);
kf_cl_int kf_ocl_upload (kf_cl_handle dst, const void *src, size_t offset, size_t bytes);
kf_cl_int kf_ocl_download (void *dst, kf_cl_handle src, size_t offset, size_t bytes);
/* Copy bandwidth (read + write) in *GBS and the FMA peak in *GFLOPS,
 * measured; -1 with WHY. */
int kf_ocl_measure (double *gbs, double *gflops, char *why, size_t why_size);
/* The device SELECT names (the worker's --device) for the worker's
 * capabilities, {arch, devices: [...]}, or NULL with WHY. */
json_t *kf_ocl_describe (const char *select, char *why, size_t why_size);
/* The selection for device DEVICE: KF_OPENCL_DEVICE when set (a name or
 * an index given to the worker), else DEVICE's digits in BUF. */
const char *kf_ocl_selection (int device, char *buf, size_t size);

/* --- kf_backend_ocl.c */

/* KF_OCL_OK when RC is 0, else KF_OCL_HARNESS with E->detail. */
int kf_ocl_harness (kf_ocl_eval_t *e, kf_cl_int rc, const char *what);

/* --- kf_ocl_program.c */
/* Enqueues one call of SIDE (every launch, in order) writing OUTS; with
 * FIRST and LAST not NULL, the events of the first and last launch.
 * KF_OCL_OK, or the side's failure with E->detail. */
int kf_ocl_enqueue_call (kf_ocl_eval_t *e, kf_ocl_side_t *side, kf_ocl_dbuf_t *outs,
                         kf_cl_handle *first, kf_cl_handle *last);

/* The program, kernels and scratch of the bundle side SIDE, whose
 * artifact (SIZE bytes) is in SIDE->bytes, planned against TASK and
 * built on kf_ocl_dev. KF_OCL_OK, or the side's failure with E->detail
 * (the platform's build log when the build failed). */
int kf_ocl_side_build (kf_ocl_eval_t *e, kf_ocl_side_t *side, size_t size, json_t *task);
/* Sets every launch's arguments of SIDE once, OUTS as the outputs, so a
 * kf-launch line the kernel refuses is known before a call. KF_OCL_OK,
 * or the side's failure with E->detail. */
int kf_ocl_bind (kf_ocl_eval_t *e, kf_ocl_side_t *side, kf_ocl_dbuf_t *outs);

#endif
