/*  kf_task.h - the task format (docs/task-format.md).
 *
 *  A task file is JSON. kf_task_load reads it, inlines the sources it names
 *  by file (relative to the task file), and validates it; the result is the
 *  canonical task object that travels in SUBMIT, generate and evaluate
 *  payloads. Errors name the file and the field: "softmax.json: inputs[0].dtype:
 *  unknown dtype 'f8'".
 */
#ifndef KF_TASK_H
#define KF_TASK_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

/* Loads PATH. Returns the canonical task (caller's) or NULL with *ERR set
 * to a one-line message the caller frees. */
json_t *kf_task_load (const char *path, char **err);

/* Validates a canonical task (sources inlined). Returns 0, or -1 with
 * *ERR ("field: message", caller frees). */
int kf_task_validate (json_t *task, char **err);

/* Dtype name ("f32") to kf_dtype_t, or -1. Size in bytes, or 0. */
/* Whether NAME is a library a task may allow its CUDA kernels to call
 * ("libraries": cublas, cublasLt, cudnn); the compile worker links them. */
bool kf_task_library_known (const char *name);
/* How a prompt names library NAME ("cuBLAS (cublas_v2.h)"), or NULL when
 * it is not one. */
const char *kf_task_library_label (const char *name);

int kf_dtype_from_name (const char *name);
const char *kf_dtype_name (int dtype);
size_t kf_dtype_size (int dtype);

/* The absolute bound of the element test for DTYPE under TASK's
 * tolerance: tolerance.atol when it is a number, its entry for DTYPE when
 * it is an object, else the dtype's default (f32 1e-5, f64 1e-8, f16
 * 1e-3, bf16 1e-2, integers 0). */
double kf_task_atol (json_t *task, int dtype);

/* SHA-256 of the task's canonical JSON (sorted keys), 64 hex chars + NUL. */
void kf_task_hash (json_t *task, char out[65]);

#endif
