/*  kf_cuda_eval.h - the CUDA judge's state, shared by its files:
 *  kf_backend_cuda.c (the evaluation child: loading, the correctness
 *  pass, the result), kf_cuda_tensors.c (device buffers between canaries,
 *  scratch, staging, the checks on the device), kf_cuda_timing.c (its
 *  samples under the judges' one timing protocol, kf_eval_protocol.h) and kf_cuda_probe.c (the device, its ceilings, the
 *  worker's probe).
 *
 *  CUDA is reached only through kf_cuda_api (dlopen), so none of these
 *  files needs a toolkit to build.
 */
#ifndef KF_CUDA_EVAL_H
#define KF_CUDA_EVAL_H

#include "kf_cuda_api.h"
#include "kf_cuda_judge.h"
#include "kf_cuda_share.h"
#include "kf_runner.h"
#include "kf_eval_check.h"
#include "kf_eval_protocol.h"
#include "kf_kernel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define KF_CUDA_MAX_TENSORS 32
#define KF_CUDA_MAX_VARIANTS 4       // timing sets (kf_cuda_variants.c)
#define KF_CUDA_MAX_SCRATCH 64

typedef int (kf_cuda_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                                  const kf_ctx_t *);

/* The runtime, loaded by kf_cuda_load_api; NULL before. */
extern kf_cuda_api_t *kf_cuda_eval_api;

//  Name, compute capability, multiprocessors, memory and L2 of DEVICE.
typedef struct {
    char name[256];
    int cc_major, cc_minor, sms, l2_bytes;
    size_t memory_bytes;
} kf_cuda_devinfo_t;

// Device buffers between canaries (kf_cuda_tensors.c).
typedef struct {
    char *base;              // the allocation
    size_t alloc;
    char *data;              // base + S_PAD, 256-byte aligned
    size_t bytes;
    bool shared;             // part of the runner's shared allocation
} kf_cuda_dbuf_t;

// Scratch handed to the kernels (kf_cuda_tensors.c).
typedef struct {
    void *ptr[KF_CUDA_MAX_SCRATCH];
    size_t size[KF_CUDA_MAX_SCRATCH];
    int n, used;
} kf_cuda_scratch_t;

typedef struct {
    kf_cuda_forward_fn *ref_fn, *cand_fn;
    int n_in, n_out;
    kf_eval_spec_t in[KF_CUDA_MAX_TENSORS], out[KF_CUDA_MAX_TENSORS];
    kf_cuda_dbuf_t in_d[KF_CUDA_MAX_TENSORS], ref_d[KF_CUDA_MAX_TENSORS], cand_d[KF_CUDA_MAX_TENSORS];
    void *src_d[KF_CUDA_MAX_TENSORS];      // this set's inputs, uploaded once
    void *poison_d[KF_CUDA_MAX_TENSORS];   // poison image of each output
    void *in_h[KF_CUDA_MAX_TENSORS];       // a probe's inputs and reference outputs,
    void *ref_h[KF_CUDA_MAX_TENSORS];      //   read back for its fingerprints
    kf_cuda_judge_t *judge;          // draws, compares and checks on the device
    kf_tensor_t in_t[KF_CUDA_MAX_TENSORS], ref_t[KF_CUDA_MAX_TENSORS], cand_t[KF_CUDA_MAX_TENSORS];
    kf_ctx_t ctx;
    const char **scalar_names;
    double *scalars;
    kf_cuda_scratch_t scratch;
    void *stream, *ev0, *ev1, *flush;
    size_t flush_bytes;
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;
    char detail[512];
    //  Where the right answers come from: the reference's kf_forward
    //  (REF_FN), or exported PyTorch data (RD over DATA, no REF_FN).
    const kf_eval_refdata_t *rd;
    const char *data;
    kf_eval_degen_t *degen;  // a reference probe: fold the main case's sets
    double ref_s;            // reference time over the correctness calls
    int ref_calls;
    bool count_warm;         // the main case of a timed evaluation
    kf_eval_warm_t warm;     // its correctness calls, for the warm-up floor
    //  The candidate's seat: its own process, the runner, which sees
    //  only SHARE (this case's inputs and candidate outputs); or, for a
    //  profile only, CAND_FN in this process.
    kf_runner_t *runner;
    kf_cuda_share_t share;
    int device;
    double idle_ns;          // the judge's probe right after an idle
                             //   runner's answer, median
    double pings_ns[64];     // those probes, as the runner starts
    int n_pings;
    bool hidden;             // the last probe found work past the answer
    int hidden_retries;      // timing samples taken again for that
    double max_excess_ns;    // the most a probe found beyond idle_ns
    //  The timing's input sets in the runner's own allocation
    //  (kf_cuda_variants.c); NULL when timing uses the case's buffers.
    struct kf_cuda_variants_s *var;
} kf_cuda_eval_t;

//  What a step found; the first non-KF_CUDA_OK ends the evaluation.
enum { KF_CUDA_OK = 0, KF_CUDA_INCORRECT, KF_CUDA_CRASHED, KF_CUDA_REF_FAILED, KF_CUDA_HARNESS };

/* --- kf_backend_cuda.c */

/* RC's message (a static buffer, overwritten by the next call). */
const char *kf_cuda_err (int rc);
/* Waits for all work on the device; its error, sticky or not, or 0. */
int kf_cuda_settle (void);
/* KF_CUDA_OK when RC is 0, else KF_CUDA_HARNESS with E->detail ("harness:
 * WHAT: ..."). */
int kf_cuda_harness (kf_cuda_eval_t *e, int rc, const char *what);

/* --- kf_cuda_probe.c */

/* Loads the runtime (once) and opens DEVICE; -1 with WHY ("no CUDA
 * device: ..."). */
int kf_cuda_load_api (int device, char *why, size_t why_size);
int kf_cuda_devinfo (int device, kf_cuda_devinfo_t *d, char *why, size_t why_size);
/* Device-to-device copy bandwidth in *GBS (read + write); -1 with WHY. */
int kf_cuda_copy_bandwidth (double *gbs, char *why, size_t why_size);
int kf_cuda_fma_peak (int sms, double *gflops, const char **source, char *why, size_t why_size);
/* The worker's description of DEVICE ({arch, devices: [...]}), or NULL
 * with WHY; the context is given back after. */
json_t *kf_cuda_probe (int device, char *why, size_t why_size);

/* --- kf_cuda_variants.c: the timing's pre-checked input sets */

/* With the candidate in the runner: N sets (2 to KF_CUDA_MAX_VARIANTS,
 * as many as MEMORY_BYTES / 8 holds; none when not even 2 fit) of the
 * main case's inputs allocated, before the candidate's first call.
 * KF_CUDA_OK (E->var may stay NULL) or KF_CUDA_HARNESS with E->detail. */
int kf_cuda_variants_reserve (kf_cuda_eval_t *e, size_t memory_bytes);
/* The reserved sets filled, drawn fresh with SEED or the exported sets
 * in turn, their right outputs computed (the reference) or copied (the
 * exported data), the candidate's outputs beside each; the runner maps
 * them and its calls cycle through them. KF_CUDA_OK (nothing to do with
 * none reserved) or another KF_CUDA_* with E->detail. */
int kf_cuda_variants_setup (kf_cuda_eval_t *e, uint64_t seed);
/* Every set's candidate outputs poisoned; waits for the device. */
int kf_cuda_variants_poison (kf_cuda_eval_t *e);
/* After a sample of CALLS calls: the sets those calls used checked
 * (inputs unchanged, canaries, outputs against the right ones). */
int kf_cuda_variants_check (kf_cuda_eval_t *e, int calls, const char *when);
/* The number of sets (1 when E->var is NULL). */
int kf_cuda_variants_count (const kf_cuda_eval_t *e);
void kf_cuda_variants_free (kf_cuda_eval_t *e);

/* --- kf_cuda_tensors.c */

/* A case's tensors for TASK: device buffers, host images, scalars, the
 * kernels' context. KF_CUDA_OK or another KF_CUDA_* with E->detail. */
int kf_cuda_setup (kf_cuda_eval_t *e, json_t *task);
/* Device memory for a kernel's kf_ctx_t scratch_alloc (STATE a
 * kf_cuda_scratch_t): handed out in call order, kept between calls. */
void *kf_cuda_scratch_alloc (void *state, size_t bytes);
/* Has the runner map E's shared tensors (after a shape case had it map
 * its own). KF_CUDA_OK or another KF_CUDA_* with E->detail. */
int kf_cuda_share_with_runner (kf_cuda_eval_t *e);
/* Has the runner map SHARE: VARIANTS sets of VARIANT_BYTES each, laid
 * out as the first, whose inputs are IN_D and outputs OUT_D (E's
 * shapes), with E's scalars' names. */
int kf_cuda_runner_layout (kf_cuda_eval_t *e, const kf_cuda_share_t *share,
                           const kf_cuda_dbuf_t *in_d, const kf_cuda_dbuf_t *out_d, int variants,
                           size_t variant_bytes);
/* Frees a case's host images and scalars; DEVICE its buffers too. */
void kf_cuda_free_tensors (kf_cuda_eval_t *e, bool device);
/* Poisons BUFS (the outputs) and, with INPUTS, copies in the staged
 * inputs; waits for the device. */
int kf_cuda_stage (kf_cuda_eval_t *e, kf_cuda_dbuf_t *bufs, bool inputs);
int kf_cuda_poison_outputs (kf_cuda_eval_t *e, kf_cuda_dbuf_t *bufs);
/* SET's inputs into the staging buffers (exported, or drawn on the
 * device with SEED). */
int kf_cuda_draw_inputs (kf_cuda_eval_t *e, uint64_t seed, int set);
/* A probe's fingerprints of the set just run, folded into E->degen. */
int kf_cuda_fingerprint (kf_cuda_eval_t *e);
/* After a candidate call: inputs unchanged, canaries intact. */
int kf_cuda_check_memory (kf_cuda_eval_t *e, const char *when);
/* The same of other buffers of E's shapes: inputs IN_D as staged from
 * SRC_D, the candidate's outputs OUT_D. */
int kf_cuda_check_buffers (kf_cuda_eval_t *e, const kf_cuda_dbuf_t *in_d, void *const *src_d,
                           const kf_cuda_dbuf_t *out_d, const char *when);
/* The candidate's outputs against the right ones, on the device. */
int kf_cuda_compare (kf_cuda_eval_t *e, const char *when);
int kf_cuda_compare_buffers (kf_cuda_eval_t *e, const kf_cuda_dbuf_t *out_d,
                             const kf_cuda_dbuf_t *ref_d, const char *when);
/* A device buffer of BYTES between canaries: its own, or with SHARE
 * carved at *AT out of that allocation (*AT advanced); the canaries'
 * state (0 intact, 1 the one before written, 2 the one after, -1 with
 * *RC when unreadable); the bytes a buffer takes. */
int kf_cuda_dbuf_new (kf_cuda_dbuf_t *b, size_t bytes, const kf_cuda_share_t *share, size_t *at);
int kf_cuda_dbuf_canaries (const kf_cuda_dbuf_t *b, int *rc);
size_t kf_cuda_dbuf_size (size_t bytes);

/* One call of the candidate with the staged tensors, in its seat, and
 * the wait for its work. KF_CUDA_OK; KF_CUDA_INCORRECT when kf_forward
 * returned non-zero or work was left running past the answer;
 * KF_CUDA_CRASHED (E->detail says how); KF_CUDA_HARNESS. */
int kf_cuda_cand_call (kf_cuda_eval_t *e, const char *when);
/* CALLS calls in the runner and the judge's idle probe after its answer:
 * *NS is the judge's clock from resuming the runner to its answer plus
 * what the probe found left over. KF_CUDA_OK, or another KF_CUDA_* with
 * E->detail starting with WHEN. */
int kf_cuda_runner_calls (kf_cuda_eval_t *e, int calls, const char *when, double *ns);

/* --- kf_cuda_timing.c */

/* The judge's probe: one tiny operation on its own stream and the wait
 * for it, in *NS. On an idle device it takes E->idle_ns; work the
 * candidate's process left running delays it. */
int kf_cuda_idle_probe (kf_cuda_eval_t *e, double *ns);
/* After each of the runner's pings (kf_run_start_t after_ping, ARG the
 * kf_cuda_eval_t): the probe, kept for the baseline. */
void kf_cuda_idle_after_ping (void *arg);
/* The median of those probes into E->idle_ns: what the probe takes when
 * the device has just switched back from the runner's idle context. */
int kf_cuda_idle_baseline (kf_cuda_eval_t *e);
/* After the runner's answer: KF_CUDA_OK and *EXCESS_NS (how much longer
 * than that baseline the probe took; the caller counts it as the
 * candidate's time), or KF_CUDA_INCORRECT when the device was still busy
 * with the candidate's work long after it said it was done (more than
 * 1 ms plus 10% of WALL_NS). */
int kf_cuda_after_answer (kf_cuda_eval_t *e, double wall_ns, const char *when, double *excess_ns);

/* Times reference and candidate on the main case (its last correctness
 * set staged) by the judges' one protocol (kf_eval_protocol.h), this
 * file's samples beneath it; T's overhead_ns (an empty sample) and
 * cand_overhead_ns (the runner's round trip) measured first.
 * KF_CUDA_OK, or another KF_CUDA_* with E->detail. */
int kf_cuda_time (kf_cuda_eval_t *e, json_t *timing, kf_eval_timing_t *t);

#endif
