/*  kf_host_eval.h - the host judge's state, shared by its files:
 *  kf_backend_host.c (correctness - its sets run by kf_eval_set.c
 *  through that file's steps - and the result), kf_host_tensors.c (the
 *  tensors, the candidate's calls and checks) and kf_host_timing.c (its
 *  side of the timing protocol, kf_eval_protocol.h).
 *
 *  The judge holds the reference (its kf_forward, or exported PyTorch
 *  data), the right answers and the clock; the candidate runs in its own
 *  process (kf_runner.h) and sees only the inputs and its outputs, in a
 *  shared memory file laid out per shape case (kf_host_arena_t).
 */
#ifndef KF_HOST_EVAL_H
#define KF_HOST_EVAL_H

#include "kf_eval_check.h"
#include "kf_eval_protocol.h"
#include "kf_host_load.h"
#include "kf_kernel.h"
#include "kf_runner.h"
#include "kf_scratch.h"

#include <jansson.h>
#include <stdbool.h>

#define KF_HOST_MAX_TENSORS 32

typedef int (kf_host_forward_fn) (const kf_tensor_t *, int, kf_tensor_t *, int,
                                  const kf_ctx_t *);

/* A tensor buffer: in the judge's own memory (the reference's outputs,
 * ending at a PROT_NONE page, MAP set), or a view of the shared file
 * (inputs and the candidate's outputs, MAP NULL). Either way a canary of
 * KF_RUN_CANARY bytes sits before DATA. */
typedef struct {
    char *map;
    size_t map_len;
    char *data;
    size_t bytes;
} kf_host_buf_t;

/* The shared file of one shape case. */
typedef struct {
    int fd;
    char *base;
    size_t bytes;
    kf_run_layout_t layout;
} kf_host_arena_t;

typedef struct {
    kf_host_forward_fn *ref_fn;
    kf_runner_t *runner;     /* the candidate's process; NULL for a probe */
    int n_in, n_out;
    kf_eval_spec_t in[KF_HOST_MAX_TENSORS], out[KF_HOST_MAX_TENSORS];
    /* Variant V of the inputs and of the candidate's outputs (the shared
     * file's; kf_run_layout_t), and of the reference's outputs (variant 0
     * guarded, the others plain). Correctness uses variant 0. */
    int variants;
    kf_host_buf_t in_buf[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    kf_host_buf_t cand_buf[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    kf_host_buf_t ref_buf[KF_HOST_MAX_TENSORS];
    void *ref_var[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    kf_tensor_t in_t[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    kf_tensor_t ref_t[KF_RUN_MAX_VARIANTS][KF_HOST_MAX_TENSORS];
    void *in_clone[KF_HOST_MAX_TENSORS], *ref_saved[KF_HOST_MAX_TENSORS];
    kf_host_arena_t arena;
    kf_ctx_t ctx;
    const char **scalar_names;
    double *scalars;
    kf_scratch_t *scratch;   /* the reference's ctx->scratch_alloc, reset each call */
    kf_eval_tol_t tol;
    kf_eval_worst_t worst;   /* correctness figures, worst over the sets */
    char detail[512];
    /* Where the right answers come from: the reference's kf_forward
     * (REF_FN), or exported PyTorch data (RD over DATA, no REF_FN). */
    const kf_eval_refdata_t *rd;
    const char *data;
    uint64_t seed;
    kf_eval_degen_t *degen;  /* a reference probe: fold the main case's sets */
    double ref_s;            /* reference wall time over the correctness calls */
    int ref_calls;
    bool count_warm;         /* the main case of a timed evaluation */
    kf_eval_warm_t warm;     /* its correctness calls, for the warm-up floor */
} kf_host_eval_t;

/* What a check found; the first that is not KF_HOST_OK ends the
 * evaluation. */
enum { KF_HOST_OK = 0, KF_HOST_INCORRECT, KF_HOST_CRASHED, KF_HOST_REF_FAILED };

/* --- kf_host_tensors.c */

/* E's tensors for TASK (a shape case): the specs, the scalars, the
 * reference's outputs, and the shared file with up to VARIANTS copies of
 * the candidate's inputs and outputs (as many as fit 64 MiB). 0, or -1
 * with E->detail. */
int kf_host_setup (kf_host_eval_t *e, json_t *task, int variants);
void kf_host_teardown (kf_host_eval_t *e);

/* The reference's kf_forward on variant V of E's inputs into its own
 * outputs of variant V, PHASE 'R' kept for the parent. Returns its return
 * code. */
int kf_host_ref_call (kf_host_eval_t *e, int v);

/* CALLS calls of the candidate in its process, call K on variant
 * K % E->variants; *WALL_S on the judge's clock, the round trip to the
 * process taken off. KF_HOST_OK, or KF_HOST_INCORRECT (it returned non-zero) or
 * KF_HOST_CRASHED with E->detail ("WHEN: ..."). */
int kf_host_cand_call (kf_host_eval_t *e, int calls, double *wall_s, const char *when);

/* Variant V's inputs equal to EXPECT (the judge's copies) and every
 * canary of V intact after a candidate call: KF_HOST_OK,
 * KF_HOST_INCORRECT or KF_HOST_CRASHED with E->detail. */
int kf_host_check_memory (kf_host_eval_t *e, int v, void *const *expect, const char *when);

/* The candidate's outputs of variant V against REF (host copies): 0, or
 * -1 with E->detail. */
int kf_host_compare (kf_host_eval_t *e, int v, void *const *ref, const char *when);

/* --- kf_host_timing.c */

typedef struct {
    kf_eval_timing_t p;      /* the protocol's figures (kf_eval_protocol.h) */
    int fresh_inputs;        /* samples on inputs no call had seen before */
    kf_host_load_t load;     /* the host's load over the samples (kf_host_load.h) */
    double *fault_rates;     /* per timed candidate sample (not the warm-up), the minor */
    int n_fault_rates;       /*   page faults of its process per call; freed by */
    int cap_fault_rates;     /*   kf_host_timing_free */
    bool faults_unknown;     /* a count could not be read: no figure */
    double cand_cpu_s;       /* the candidate's process's CPU time over its timed */
    double cand_wall_s;      /*   calls, and those calls' time on the judge's clock */
    double quiet_cpu_s;      /* the same over the samples in which its threads did */
    double quiet_wall_s;     /*   not wait for a CPU (not kf_eval_disturbed) */
} kf_host_timing_t;

/* A kernel's own one-core figure (kf_host_time_one_core). */
typedef struct {
    double cpu_per_wall;     /* the full timing's CPU time per second of calls: over
                                the samples its threads did not wait in where its
                                figures are over undisturbed samples (round 37) */
    bool tried;              /* it starts threads: timed on one CPU */
    double ns;               /* the median per call on one CPU; 0: none */
    int samples, calls;
    double took_s;
    char why[512];           /* tried and no figure: why */
} kf_host_one_core_t;

/* A full timing whose candidate used this many CPU seconds a second of
 * its calls or more ran threads side by side. */
#define KF_HOST_THREADED_CPU 1.2

/* The longest wait for a quiet host before a full timing beside other
 * work is taken again (the job's timing.retime_wait_s, capped here: the
 * evaluation's lease runs meanwhile). */
#define KF_HOST_RETIME_WAIT_MAX_S 60.0

/* The sample number of the one-core timing's inputs: none of the full
 * timing's. */
#define KF_HOST_ONE_CORE_SAMPLE (1 << 20)

/* --- kf_host_threads.c */

/* Whether the shared object at PATH imports what starts threads
 * (pthread_create, thrd_create, GOMP_parallel*, __kmpc_fork_call, clone),
 * read from its dynamic symbols without loading it. */
bool kf_host_so_starts_threads (const char *path);

/* After a full timing FULL of E: where the candidate starts threads
 * (STARTS, kf_host_so_starts_threads) or its process used
 * KF_HOST_THREADED_CPU CPU seconds a second of its calls or more (its
 * threads ran side by side), and it may use two CPUs or more, the same
 * kernel timed again with its process, every thread of it, allowed one
 * CPU (kf_runner_one_cpu, the CPUs given back after), by the same
 * protocol with fewer repeats (TIMING's floors: a quarter of the
 * samples' time, at most 5 samples, 2 warm-up calls) and no reference
 * timed beside it, its outputs checked. 0 with OC->ns; 1 when not tried
 * (OC->cpu_per_wall says why); -1 when tried and no figure came (OC->why:
 * a check failed, a warm-up call took 20 times its full time or more, or
 * its process used more than one CPU's time). E's detail is left as it
 * was. */
int kf_host_time_one_core (kf_host_eval_t *e, json_t *timing, const kf_host_timing_t *full,
                           bool starts, kf_host_one_core_t *oc);

/* Frees what T holds. */
void kf_host_timing_free (kf_host_timing_t *t);

/* The median of T's per-sample page faults per call (the steady state:
 * the first samples also touch input copies the harness made); -1 when
 * they were not counted. */
double kf_host_timing_faults (const kf_host_timing_t *t);

/* Times reference and candidate on the main case (E's variant 0 holds
 * its last correctness set) by the judges' one protocol
 * (kf_eval_protocol.h), T->p its figures. Every call of every sample runs on inputs
 * of its own (the last set's, each tensor rotated by a fresh offset; with
 * exported data, the sets in turn) into outputs poisoned before the
 * sample and checked after it against the reference's on those inputs.
 * Returns KF_HOST_OK, or another KF_HOST_* with E->detail. */
int kf_host_time (kf_host_eval_t *e, json_t *timing, kf_host_timing_t *t);

#endif
