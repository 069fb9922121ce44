/*  kf_torch_ref.h - the exec worker's "reference" job: a PyTorch problem in
 *  the KernelBench format (class Model, get_inputs, get_init_inputs) run
 *  with a fixed seed, its inputs, parameters, buffers and outputs exported
 *  and its eager and torch.compile times measured.
 *
 *  The Python side is exec-worker/kf_torch_ref.py, built into the binary
 *  and written into each job's private directory, so a deployed worker
 *  needs no repository. The interpreter is found, never assumed: the
 *  python3 first on PATH often lacks torch. The job, the file format and
 *  what the coordinator does with it are in docs/pytorch-references.md.
 */
#ifndef KF_TORCH_REF_H
#define KF_TORCH_REF_H

#include "kf_worker.h"

#include <jansson.h>
#include <stddef.h>

typedef struct {
    const char *python;          /* interpreter; NULL or "": discover one */
    const char *found_file;      /* where the one found is kept for the boot
                                  * (kf_torch_probe.h); NULL: asked anew */
    const char *cache_dir;       /* the reference store (kf_refcache.h): the
                                  * data, and results asked again; NULL: a
                                  * private folder for the data, removed at
                                  * destroy, and no result is reused */
    size_t cache_max_bytes;      /* trimmed past this, least recently used
                                  * first; also the cap on one reference's
                                  * data (over it the job fails, final);
                                  * 0: 4 GiB */
    const char *default_device;  /* for a payload without device; NULL: "cpu" */
    double time_limit_s;         /* one job's child, wall clock; 0: 600 */
    size_t memory_bytes;         /* child RLIMIT_AS; 0: none (torch threads
                                  * and CUDA reserve far more than they use) */
} kf_torch_ref_config_t;

typedef struct _kf_torch_ref_t kf_torch_ref_t;

/* Copies CONFIG and finds the interpreter: CONFIG->python alone when set,
 * else $KF_PYTHON, /opt/torch/.venv/bin/python3, /usr/bin/python3 and
 * python3 on PATH, the first that imports torch in the sandbox the jobs
 * run in. Finding none is not an error (see kf_torch_ref_python). Returns
 * NULL only when out of memory. */
kf_torch_ref_t *kf_torch_ref_new (const kf_torch_ref_config_t *config);

/* Idempotent; nulls *SELF_P. */
void kf_torch_ref_destroy (kf_torch_ref_t **self_p);

/* The interpreter found (borrowed), or NULL when none has torch. */
const char *kf_torch_ref_python (kf_torch_ref_t *self);

/* What was tried and why each failed, "A (why), B (why)" (borrowed). */
const char *kf_torch_ref_tried (kf_torch_ref_t *self);

/* {python, version (torch's), cuda (bool)} for the worker's capabilities
 * under "torch", or NULL when no interpreter has torch. Caller owns it. */
json_t *kf_torch_ref_capability (kf_torch_ref_t *self);

/* kf_job_fn for kind "reference"; SELF is a kf_torch_ref_t * (NULL: the
 * job fails, saying the worker has no reference runner). Thread-safe.
 * The data goes into the store; the result has the manifest and
 * data_key, data_bytes, data_hash (XXH3-128) and inputs_hash, no frame. */
void kf_torch_ref_handle (void *self, const kf_job_t *job, kf_job_result_t *res);

/* Gives the reference data that REFDATA (an evaluate payload's
 * "reference_data": sets, and data {key, hash, inputs_hash, bytes, seed})
 * describes the name DEST, from the store, or made again here from
 * SOURCE (the task's reference.source) with the same seed when this
 * worker lacks it. Returns 0 with *NOTE (caller's: {key, from: "cache" or
 * "regenerated", bytes, hash, matches, inputs_match, wall_s [, warning]}:
 * outputs that differ bit-wise from the run's are used, and said so), or
 * -1 with *ERROR (caller frees), also when the inputs differ from the
 * run's. Thread-safe. */
int kf_torch_ref_data_link (kf_torch_ref_t *self, json_t *refdata, const char *source,
                            const char *dest, json_t **note, char **error);

/* The instance kf_exec_handle hands "reference" jobs to. Set once by the
 * worker's main (or a test) before any job runs; not owned here. */
void kf_torch_ref_set_shared (kf_torch_ref_t *self);
kf_torch_ref_t *kf_torch_ref_shared (void);

#endif
