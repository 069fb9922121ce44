/*  kf_dev_share.h - the candidate's tensors shared with its process, for
 *  the device backends whose runtime has no standard way to hand a buffer
 *  to another process: OpenCL (kf_runner_ocl.c) and Level Zero
 *  (kf_runner_ze.c).
 *
 *  The judge (kf_backend_ocl.c, kf_backend_ze.c) keeps the reference, its
 *  inputs and outputs, the right answers, its clock and the verdict
 *  channel; the candidate's kernels run in the runner, a process of its
 *  own started with a fresh exec (kf_runner.h) and confined. What the two
 *  share is one memfd holding the candidate's inputs and outputs and
 *  nothing else, each tensor in a page-aligned region:
 *
 *      [pad canary][data, rounded up to pad][pad canary, to the page]
 *
 *  pad is the device's (OpenCL: its base alignment, at least 256 bytes;
 *  Level Zero: KF_ZE_PAD); every canary byte is 0xA5 and is read back by
 *  the judge after every call. The file holds up to KF_DEV_MAX_VARIANTS
 *  copies of every tensor (kf_run_layout_t's variants), one for each
 *  input set the timed calls cycle through: call K of a batch runs on
 *  variant K modulo their number, a correctness call on variant 0. Who may touch the bytes is handed over
 *  explicitly: while the tensors are "on the host" the judge writes
 *  inputs and poison and reads results; before the candidate's launches
 *  the runner takes them to the device (OpenCL: unmaps its buffers made
 *  over the file; Level Zero: copies each region, canaries included, to
 *  device memory of its own context) and back when told, or before it
 *  answers a message that hands them to the host.
 *
 *  The judge's side is kf_dev_share.c, the runners' common side
 *  kf_dev_runner.c.
 */
#ifndef KF_DEV_SHARE_H
#define KF_DEV_SHARE_H

#include "kf_eval_check.h"
#include "kf_runner.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KF_DEV_MAX_TENSORS 32
#define KF_DEV_MAX_VARIANTS 4
#define KF_DEV_SHARE_MAX ((uint64_t) 1 << 30)

/* The judge's extra messages (beside kf_runner.h's), each answered by a
 * kf_run_reply_t: the tensors handed to the host (the judge may read and
 * write them in the file), or to the device. A call finds them on the
 * device itself when they are not. */
enum { KF_RUN_OP_HOST = 16, KF_RUN_OP_DEVICE = 17 };

/* The runner's file: the candidate's load failure in full (a platform's
 * build log), in its working directory; the reply's detail is short. */
#define KF_RUN_LOAD_LOG "load.log"
/* The task's tensors and scalars (JSON), written there by the judge. */
#define KF_RUN_TASK "task.json"

/* What a step found, in the values of KF_OCL_* and KF_ZE_*. */
enum { KF_DEV_OK = 0, KF_DEV_INCORRECT, KF_DEV_CRASHED, KF_DEV_REF_FAILED, KF_DEV_HARNESS,
       KF_DEV_LOAD_FAILED };

/* --- The judge's side (kf_dev_share.c). */
typedef struct {
    int n_in, n_out;
    const kf_eval_spec_t *in, *out;      // the task's tensors (borrowed)
    size_t pad;
    uint64_t device_bytes;               // the device's memory (0: unknown)
    char *detail;                        // where a failure is said (borrowed)
    size_t detail_size;
    kf_runner_t *runner;
    int fd;
    unsigned char *map;
    size_t bytes;
    kf_run_layout_t layout;              // layout.variants: the copies in the file
    unsigned char *cand_in[KF_DEV_MAX_VARIANTS][KF_DEV_MAX_TENSORS];
    unsigned char *cand_out[KF_DEV_MAX_VARIANTS][KF_DEV_MAX_TENSORS];
} kf_dev_share_t;

/* An idle share of the task's N_IN inputs IN and N_OUT outputs OUT
 * (kept borrowed), canaries of PAD bytes, failures said in DETAIL; as
 * many variants (at least 1, at most KF_DEV_MAX_VARIANTS) as keep the
 * file within an eighth of DEVICE_BYTES (the device's memory, 0 when
 * unknown) and KF_DEV_SHARE_MAX: the runner may hold each variant in
 * device memory, the judge a copy of each set. */
void kf_dev_share_init (kf_dev_share_t *s, int n_in, const kf_eval_spec_t *in, int n_out,
                        const kf_eval_spec_t *out, size_t pad, uint64_t device_bytes,
                        char *detail, size_t detail_size);

/* Lays out and fills the shared file (canaries 0xA5), writes the
 * runner's task file, hides the job from the runner and starts it as
 * DEVICE says ("opencl:SEL", "level-zero:N"), loaded, set up and
 * stopped. KF_DEV_OK, or KF_DEV_LOAD_FAILED, _CRASHED or _HARNESS with
 * the detail. BEFORE_PING, when set, runs before each of the runner's
 * timed round trips (the judge's cache flush). */
int kf_dev_share_start (kf_dev_share_t *s, const char *dir, json_t *job, json_t *task,
                        const char *device, void (*before_ping) (void *), void *arg);

/* Variant V's inputs IN_H (NULL: left as they are) and poisoned outputs
 * POISON_H written to the file (the tensors must be on the host). */
void kf_dev_share_fill (kf_dev_share_t *s, int v, void *const *in_h, void *const *poison_h);

/* After the tensors came back to the host: variant V's inputs as IN_H
 * holds them, its every canary intact. KF_DEV_OK, _INCORRECT (an input
 * changed) or _CRASHED (an out-of-bounds write), with the detail; WHEN
 * names the step. */
int kf_dev_share_check (kf_dev_share_t *s, int v, void *const *in_h, const char *when);

/* Variant V's outputs copied to OUT_H. */
void kf_dev_share_outputs (kf_dev_share_t *s, int v, void *const *out_h);

/* CALLS calls of the candidate in its process; *WALL_S on the judge's
 * clock from resuming it to its answer. KF_DEV_OK, or _CRASHED /
 * _LOAD_FAILED / _HARNESS with the detail (WHEN names the step). */
int kf_dev_share_call (kf_dev_share_t *s, uint32_t calls, double *wall_s, const char *when);

/* The tensors handed to the host (TO_HOST) or to the device. As
 * kf_dev_share_call. */
int kf_dev_share_hand (kf_dev_share_t *s, bool to_host, const char *when);

/* The judge's round trip to the runner, taken off each timed batch. */
double kf_dev_share_round_trip_s (kf_dev_share_t *s);

/* The runner's isolation figures for the result. */
json_t *kf_dev_share_isolation (kf_dev_share_t *s);

/* Ends the runner, unmaps and closes the file. */
void kf_dev_share_end (kf_dev_share_t *s);

/* --- The runners' side (kf_dev_runner.c); the judge is at fd 3. */

/* What a runner holds alike (kf_dev_runner.c): the task, its tensors'
 * specs and canaries, the judge's file mapped, and who holds the
 * tensors. A runner fills the first fields before kf_dev_runner_serve;
 * the rest is the serve's. */
typedef struct {
    json_t *task;                        // the task file's JSON (kf_dev_runner_task)
    int n_in, n_out;
    const kf_eval_spec_t *in, *out;      // the task's tensors (borrowed)
    size_t pad;                          // the device's canary bytes
    const char *detail;                  // where the device says a refusal (borrowed)
    unsigned char *map;                  // the judge's file, mapped at setup
    size_t map_bytes;
    int n;                               // tensors: inputs, then outputs
    size_t offset[KF_DEV_MAX_TENSORS * 2];   // of each tensor's region in variant 0
    int variants;                        // copies of them, VARIANT_BYTES apart
    size_t variant_bytes;
    bool on_host;
} kf_dev_runner_t;

/* A runner's device work, for kf_dev_runner_serve; D is its state, R
 * the shared part. An error code RC is the API's (cl_int, ze_result_t),
 * 0 for none. What the two runners do alike (the file mapped, the
 * judge's layout checked, the calls counted, errors worded, the
 * tensors' holder tracked) is kf_dev_runner.c's. */
typedef struct {
    const char *api;                     // "OpenCL": "OpenCL error in the candidate: ..."
    /* RC's name. */
    const char *(*err) (long rc);
    /* A ping's work before the candidate is loaded: what a timed call
     * costs beside the candidate's launches (a tiny fill, waited for). */
    void (*ping) (void *d);
    /* The candidate's KF-SPIRV bundle BYTES (SIZE of them; the runner's
     * to keep: its plan borrows them) planned against TASK and built. 0,
     * or -1 with R's detail: the candidate's load failure. */
    int (*build) (void *d, void *bytes, size_t size, json_t *task);
    /* A device buffer for each tensor's region of each variant of R's
     * file (R->map, laid out as L; R->n, R->offset, R->variants and
     * R->variant_bytes set), R->on_host saying who holds them. 0, or -1
     * with WHY ("harness: ..."). */
    int (*buffers) (void *d, kf_dev_runner_t *r, const kf_run_layout_t *l, char *why,
                    size_t why_size);
    /* Every kernel argument once (on variant 0). 0, or -1 with R's
     * detail: a kf-launch line the kernel refuses, the candidate's load
     * failure. */
    int (*bind) (void *d);
    /* Every tensor of every variant handed to the host (TO_HOST) or to
     * the device; 0 or RC. Called only when they are on the other side. */
    long (*hand) (void *d, kf_dev_runner_t *r, bool to_host);
    /* One call of the candidate on variant V's tensors, every launch in
     * order, queued. 0, or -1 with R's detail: a launch refused (the
     * candidate's load failure). */
    int (*launch) (void *d, int v);
    /* What was queued submitted and waited for; 0 or RC. */
    long (*wait) (void *d);
} kf_dev_runner_ops_t;

/* The start of a runner's main: dies with the judge, takes the
 * sandbox's file-size limit, checks that its device argument (ARGV[4])
 * starts with PREFIX ("opencl:") and finds its working directory (CWD).
 * 0, or -1: the runner ends (exit code 2). */
int kf_dev_runner_begin (int argc, char **argv, const char *prefix, char *cwd, size_t cwd_size);

/* Confined and ready: the fault handler installed (a fault in the
 * candidate's code is a KF_RUN_CRASHED reply, then the end) and the
 * judge told, REPORT the confinement. */
void kf_dev_runner_ready (const char *report);

/* Answers the judge's messages with OPS on D (R its shared part) until
 * the judge is done (0) or the runner must end (2: its load failed, a
 * setup refused). A device error after the candidate's launches ends
 * the process (exit code 3) after its KF_RUN_CRASHED reply: the context
 * may be lost. */
int kf_dev_runner_serve (const kf_dev_runner_ops_t *ops, void *d, kf_dev_runner_t *r,
                         const char *candidate);

/* One message from the judge into BUF; *FD a file that came with it, or
 * -1. What recvmsg returns: 0 or less when the judge is gone. */
ssize_t kf_dev_runner_recv (void *buf, size_t size, int *fd);

/* One reply to the judge (kf_runner_send_reply). */
void kf_dev_runner_reply (int status, int rc, uint32_t calls, const char *detail);

/* A load failure: in full in KF_RUN_LOAD_LOG, where the judge reads it,
 * and the start of it in a KF_RUN_FAILED reply. */
void kf_dev_runner_load_failed (const char *detail);

/* The task file the judge wrote (KF_RUN_TASK): R's task (the runner's,
 * it holds the specs' JSON), the specs of its inputs and outputs (at
 * most KF_DEV_MAX_TENSORS each) into *N_IN, IN, *N_OUT and OUT, which R
 * then borrows. 0, or -1 with WHY. */
int kf_dev_runner_task (kf_dev_runner_t *r, int *n_in, kf_eval_spec_t *in, int *n_out,
                        kf_eval_spec_t *out, char *why, size_t why_size);

/* 0 when layout L fits the tensors IN and OUT with canaries of PAD
 * bytes (1 to KF_DEV_MAX_VARIANTS variants, page-aligned regions inside
 * each); -1 with WHY. */
int kf_dev_runner_layout_ok (const kf_run_layout_t *l, int n_in, const kf_eval_spec_t *in,
                             int n_out, const kf_eval_spec_t *out, size_t pad, char *why,
                             size_t why_size);

/* 0 when every thread of this process runs under the seccomp filter;
 * -1 with WHY naming the first that does not (WHO started it). */
int kf_dev_runner_threads_confined (const char *who, char *why, size_t why_size);

#endif
