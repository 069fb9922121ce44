/*  kf_runner.h - the candidate's own process, and the judge's hold on it.
 *
 *  A host evaluation is two processes. The judge (the evaluation child,
 *  kf_backend_host.c) loads the reference, draws the inputs, keeps the
 *  right answers, owns the clock and the verdict channel. The runner
 *  (`worker --eval-runner CANDIDATE.so`, started by the judge with a fresh
 *  exec, so it inherits none of the judge's memory) loads the candidate
 *  and calls its kf_forward when told to, on tensors in a shared memory
 *  file that holds the candidate's inputs and outputs and nothing else.
 *
 *  Before it loads the candidate the runner confines itself
 *  (kf_confine.h): no new processes, no exec, signals to itself only, and
 *  where the kernel has Landlock no files but the system's libraries, the
 *  candidate and its own working directory. Between calls the judge stops
 *  it (SIGSTOP, waited for), so work a kernel leaves to a thread after
 *  returning is not done when its outputs are checked, and is counted as
 *  the runner's CPU time outside the timed calls.
 *
 *  The judge talks to it over a SOCK_SEQPACKET socket pair (the runner's
 *  fd 3): pings while it is still only our code (the cost of a round
 *  trip, taken off every timed batch), the load, one setup per shape case (the tensors' layout in a memfd passed
 *  with SCM_RIGHTS), then calls; each answered by a kf_run_reply_t.
 *  Nothing the runner says is believed beyond "I am done" or "this went
 *  wrong": the judge checks every output itself.
 */
#ifndef KF_RUNNER_H
#define KF_RUNNER_H

#include "kf_kernel.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define KF_RUN_MAX_TENSORS 64
#define KF_RUN_MAX_VARIANTS 64
#define KF_RUN_MAX_SCALARS 64
#define KF_RUN_NAME 64
#define KF_RUN_CANARY 64

/* One tensor in the shared file: its region starts at OFFSET (a page
 * multiple) and is REGION bytes; the data is its last BYTES bytes, with
 * KF_RUN_CANARY bytes of canary before it. The runner maps each region
 * with an inaccessible page after it. */
typedef struct {
    int32_t dtype, rank;
    int64_t shape[KF_MAX_RANK];
    uint64_t offset, region, bytes;
} kf_run_tensor_t;

typedef struct {
    uint32_t n_in, n_out, n_names;
    /* VARIANTS copies of every tensor, variant V's at V * VARIANT_BYTES
     * past the offsets below; call K of a batch uses variant K % VARIANTS,
     * so no call of a batch finds the inputs or the outputs of another. */
    uint32_t variants;
    uint64_t variant_bytes;
    uint64_t file_bytes;
    kf_run_tensor_t t[KF_RUN_MAX_TENSORS];        /* inputs, then outputs */
    char names[KF_RUN_MAX_SCALARS][KF_RUN_NAME];  /* scalar names */
} kf_run_layout_t;

enum { KF_RUN_OK = 0,           /* every call returned 0 */
       KF_RUN_RETURNED = 1,     /* a call returned RC */
       KF_RUN_CRASHED = 2,      /* a fault: DETAIL names it */
       KF_RUN_FAILED = 3 };     /* load or setup failed: DETAIL */

/* The judge's messages. */
enum { KF_RUN_OP_SETUP = 1, KF_RUN_OP_CALL = 2,
       KF_RUN_OP_PING = 3,      /* answered at once: the round trip's cost */
       KF_RUN_OP_LOAD = 4 };    /* load the candidate now */
typedef struct {
    uint32_t op, pad;        /* KF_RUN_OP_SETUP; the file comes with it */
    kf_run_layout_t layout;
} kf_run_setup_msg_t;
typedef struct {
    uint32_t op, calls, n;        /* KF_RUN_OP_CALL */
    uint32_t one_cpu;             /* 1: the calls keep the one CPU the judge set */
    double values[KF_RUN_MAX_SCALARS];
} kf_run_call_msg_t;

typedef struct {
    int32_t status, rc;
    uint32_t calls;
    char detail[240];
} kf_run_reply_t;

/* --- The runner: what `worker --eval-runner CANDIDATE.so` runs. */
int kf_runner_main (int argc, char **argv);

/* In the runner: one reply (STATUS, RC, CALLS, DETAIL cut to fit) on
 * SOCK, the judge's end of the channel. Only memset and send(2), so a
 * signal handler may call it. */
void kf_runner_send_reply (int sock, int status, int rc, uint32_t calls, const char *detail);

/* The runner's side: one message from the judge on SOCK into BUF (SIZE
 * bytes); *FD a file that came with it, or -1. What recvmsg returns: 0
 * or less when the judge is gone. */
ssize_t kf_runner_recv (int sock, void *buf, size_t size, int *fd);

/* --- The judge's side. */
typedef struct kf_runner kf_runner_t;

/* How a runner is started: SHARED, when not NULL, is a second writable
 * directory (the worker's eval_shared_dir, for tests); CUDA_DEVICE >= 0
 * has it open that CUDA device before it confines itself (its tensors
 * are then device memory the judge shares, kf_cuda_share.h, and each
 * answer waits for the device); BEFORE_PING, when set, runs before each
 * round trip that is timed, so the judge can put its device in the state
 * a timed call finds it in, and AFTER_PING after each. */
typedef struct {
    const char *shared;
    int cuda_device;
    /* Not NULL: a device runner's argument, "opencl:SEL" (kf_runner_ocl.h)
     * or "level-zero:N" (kf_runner_ze.h); the tensors are then shared as
     * kf_dev_share.h says. */
    const char *device;
    void (*before_ping) (void *arg);
    void (*after_ping) (void *arg);      /* and after its answer */
    void *arg;
} kf_run_start_t;

/* Starts the runner of CANDIDATE (a path) in RUN_DIR (its working and
 * only writable directory) as OPTS says and waits until it has loaded
 * it. NULL with
 * REPLY filled when it could not: status KF_RUN_FAILED (the candidate
 * does not load: DETAIL says why) or KF_RUN_CRASHED (its constructors
 * crashed); errno-style trouble of our own reads "harness: ...". */
kf_runner_t *kf_runner_start (const char *candidate, const char *run_dir,
                              const kf_run_start_t *opts, kf_run_reply_t *reply);

/* kf_runner_start in two halves, so the judge can do its own set-up
 * while the runner starts its device context: kf_runner_spawn starts the
 * process (only the harness's code runs in it until kf_runner_ready
 * says LOAD; its device's context is made before it answers), and
 * kf_runner_ready waits for it, times the round trip (OPTS's ping
 * hooks) and has it load the candidate: 0, or -1 with *SELF_P destroyed
 * and REPLY filled as kf_runner_start's. */
kf_runner_t *kf_runner_spawn (const char *candidate, const char *run_dir,
                              const kf_run_start_t *opts, kf_run_reply_t *reply);
int kf_runner_ready (kf_runner_t **self_p, const kf_run_start_t *opts, kf_run_reply_t *reply);

/* Gives the runner the shared file FD laid out as LAYOUT. 0, or -1 with
 * REPLY. The runner is stopped when this returns 0. */
int kf_runner_setup (kf_runner_t *self, int fd, const kf_run_layout_t *layout,
                     kf_run_reply_t *reply);

/* CALLS calls of kf_forward with the N scalars VALUES; *WALL_S is the
 * judge's clock from resuming the runner to its answer. The runner is
 * stopped again (and that waited for) before this returns, also when a
 * call failed. 0 when every call returned 0; -1 with REPLY otherwise
 * (a runner that ended is KF_RUN_CRASHED, with its signal). */
int kf_runner_call (kf_runner_t *self, uint32_t calls, const double *values, int n,
                    double *wall_s, kf_run_reply_t *reply);

/* ONE true: the calls that follow run with every thread of the runner,
 * and every thread its calls start, allowed one CPU only (the judge's
 * when this is called), the runner told to keep it (kf_run_call_msg_t's
 * ONE_CPU), so a threaded kernel's threads share one core. ONE false:
 * every thread allowed the CPUs the judge has again. 0, or -1 when the
 * affinity could not be set (nothing is then changed for the calls). */
int kf_runner_one_cpu (kf_runner_t *self, bool one);

/* A bare message OP (a device runner's own, kf_dev_share.h) and its answer,
 * as kf_runner_call: *WALL_S the judge's clock around it. */
int kf_runner_op (kf_runner_t *self, uint32_t op, double *wall_s, kf_run_reply_t *reply);

/* The judge's round trip to the runner (resume, message, answer),
 * measured before the candidate was loaded, so the candidate cannot
 * bend it: the median of 32. It is taken off each timed batch. */
double kf_runner_round_trip_s (kf_runner_t *self);

/* CPU seconds the runner has used, all its threads; and of those, the
 * seconds used while no call was being timed: from the answer of each
 * exchange since the pings to the stop that follows it (taken from when
 * the runner is quiet, if it is right after its answer), less what the
 * pings' stops cost the runner. */
double kf_runner_cpu_s (kf_runner_t *self);
double kf_runner_cpu_outside_s (kf_runner_t *self);

/* The minor page faults the runner's process has taken so far, read by
 * the judge from /proc (the candidate cannot bend the kernel's count);
 * -1 when it cannot be read. */
long long kf_runner_minor_faults (kf_runner_t *self);

/* The runner's process id; 0 when it has ended. */
int kf_runner_pid (kf_runner_t *self);

/* How long the runner's threads and the judge's waited for a CPU over the
 * last exchange, from before the resume to the stop at the answer (not
 * the window after it), ns (kf_host_wait.h); -1 when not read. */
double kf_runner_wait_ns (kf_runner_t *self);

/* The runner's confinement, as it reported it ("seccomp, landlock abi 7"). */
const char *kf_runner_confinement (kf_runner_t *self);

/* For an evaluation job in DIR (JOB its payload): deletes what the
 * candidate's process must not find there once the judge holds it (the
 * reference, its data, the job). */
void kf_runner_hide_job (const char *dir, json_t *job);

/* The candidate's process for the job in DIR, started in DIR/run with
 * OPTS (its SHARED is taken from the job). NULL with the verdict written
 * to DIR when it could not be had (load_failed, crashed,
 * harness_failed). */
kf_runner_t *kf_runner_for_job (const char *dir, json_t *job, const kf_run_start_t *opts);

/* kf_runner_for_job in the two halves of kf_runner_spawn and
 * kf_runner_ready; each writes the verdict when it fails (the second
 * then destroys *RUNNER_P). The job must be hidden (kf_runner_hide_job)
 * before the second: the candidate loads in it. */
kf_runner_t *kf_runner_spawn_for_job (const char *dir, json_t *job, const kf_run_start_t *opts);
int kf_runner_ready_for_job (const char *dir, kf_runner_t **runner_p, const kf_run_start_t *opts);

/* Kills and reaps the runner; nulls *SELF_P. */
void kf_runner_destroy (kf_runner_t **self_p);

/* KT: a contiguous row-major view of T's shape over DATA (the runner's
 * side, host or CUDA). */
void kf_run_tensor_view (kf_tensor_t *kt, const kf_run_tensor_t *t, void *data);

/* A layout's region size for BYTES of data (page multiple, canary
 * included). */
uint64_t kf_run_region (uint64_t bytes);

#endif
