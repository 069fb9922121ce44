/*  kf_exec.h - the exec worker's "evaluate" job handler.
 *
 *  The handler never loads a candidate itself: it writes the artifacts
 *  and the payload into a private directory and runs the worker binary
 *  again as "--eval-child DIR" in the sandbox, so a crash, hang or fork
 *  bomb ends that child only. The child's result.json, its signal or its
 *  timeout become the verdict.
 *
 *  An evaluate payload with `configs` ([{params, frame}], frames: the
 *  candidate artifacts, then the reference last) is a tuning sweep
 *  (kf_sweep.h): every config is screened in a child of its own under a
 *  limit that follows from the first correct config's time, the best few
 *  are timed again with the full protocol and the best of those gives
 *  the top-level fields, and the result adds `configs` (one row per
 *  config: params, frame, ran, fidelity, verdict, speedup, median_ns,
 *  reference_ns, detail, skipped_reason), `best_config` (params, null
 *  when none was correct: the verdict is then the first config's, the
 *  source as written) and `tuning`.
 *
 *  With `reference_data` (a PyTorch reference job's manifest, sets and
 *  eager/compiled times) the last frame is that job's data frame instead
 *  of a reference artifact: the candidate is checked against the exported
 *  outputs and timed alone, speedup = eager_ns / its median. With
 *  `probe: true` and one frame (a native reference) only the reference
 *  runs, on every set and shape case, and the result is {ok, degenerate,
 *  reference_ms}. Every result carries phases_s. docs/evaluation.md.
 */
#ifndef KF_EXEC_H
#define KF_EXEC_H

#include "kf_worker.h"

#include <jansson.h>
#include <stddef.h>

/* Most frames (configs plus the reference) of one evaluate job. */
#define KF_EXEC_MAX_FRAMES 16

typedef struct {
    const char *worker_path; /* binary that handles --eval-child; NULL: /proc/self/exe */
    const char *backend;     /* NULL: "host" */
    int device;              /* device index for "cuda" (--device N) */
    double time_limit_s;     /* whole evaluation; 0: 120 */
    size_t memory_bytes;     /* child RLIMIT_AS; 0: 16 GiB (none under ASan) */
    double sweep_time_limit_s;   /* a whole tuning sweep; 0: 300 */
    double sweep_limit_factor;   /* k of a config's limit; 0: 3 */
    double sweep_limit_floor_s;  /* floor of a config's limit; 0: 10 */
    int sweep_full_configs;      /* configs fully timed; 0: 2 */
    const char *shared_dir;      /* eval_shared_dir: a folder every candidate
                                  * may read and write (tests); NULL: none */
} kf_exec_config_t;

/* kf_job_fn; ARG is a kf_exec_config_t * or NULL for the defaults. */
/* The binary a sandboxed child runs (--eval-child): CFG's worker_path, or
 * this process's own, resolved into BUF now because after the drop to the
 * sandbox user the child may not read /proc/self. NULL with errno set when
 * it cannot be resolved. */
const char *kf_exec_worker_binary (const kf_exec_config_t *cfg, char *buf, size_t size);

void kf_exec_handle (void *arg, const kf_job_t *job, kf_job_result_t *res);

/* A command an evaluation child runs under (a profiler: perf stat), and
 * what that command needs of the child's directory. */
#define KF_EXEC_WRAP_MAX 24
typedef struct {
    /* Before the child starts, with its directory DIR and its job PAYLOAD
     * (which it may add to): writes the command prefix into ARGV, at most
     * MAX entries, NULL after the last (the strings stay ARG's until the
     * run ends). Returns 0, or -1 with errno. */
    int (*prepare) (void *arg, const char *dir, json_t *payload, char **argv, int max);
    /* After the child ended, before DIR is removed; OUTPUT is what the
     * command printed (stdout and stderr, capped). May be NULL. */
    void (*finish) (void *arg, const char *dir, const char *output);
    void *arg;
} kf_exec_wrap_t;

/* An evaluation of one candidate (JOB's payload and frames as for
 * "evaluate", without configs or probe) whose child runs under WRAP:
 * the same sandbox, limits, verdict channel and result. */
void kf_exec_evaluate_wrapped (const kf_exec_config_t *cfg, const kf_job_t *job,
                               const kf_exec_wrap_t *wrap, kf_job_result_t *res);

/* The evaluation child: what `worker --eval-child DIR` runs. Returns the
 * process exit code. */
int kf_exec_child_main (const char *dir);

/* {backends, arch, devices} for HELLO. Caller owns the result. */
json_t *kf_exec_capabilities (const char *backend);

/* The same for device DEVICE, or NULL with *ERROR (one line, caller
 * frees) when the backend is unknown or has no usable device. */
json_t *kf_exec_probe (const char *backend, int device, char **error);

#endif
