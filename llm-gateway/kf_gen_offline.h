/*  kf_gen_offline.h - the built-in offline generator.
 *
 *  Not a language model: a small library of starter kernels in C for the
 *  host backend, in CUDA (language "cuda") for NVIDIA GPUs and in OpenCL C
 *  (language "opencl") for Intel GPUs through Level Zero (softmax,
 *  rmsnorm, layernorm, gelu, row sum, row max), each
 *  a template with tuning parameters that are real implementation choices.
 *  Without a parent it proposes a seeded point of the parameter space; with
 *  a parent it mutates one or two of the parent's parameters. The same
 *  payload gives the same source, always. It lets the whole system run, and
 *  its search be tested, on a machine with no model at all.
 *  See docs/offline-generator.md.
 */
#ifndef KF_GEN_OFFLINE_H
#define KF_GEN_OFFLINE_H

#include <jansson.h>

/* PAYLOAD is a generate job's payload: {task, language, seed, prompt,
 * parent?: {source, speedup}}. Returns the candidate source (caller's), or
 * NULL with *ERR set (caller frees). */
char *kf_offline_generate (json_t *payload, char **err);

/* The parameters a source declares on its kf-params line, as
 * "LANES=4 ALGO=online" (caller's), or NULL when it has none. */
char *kf_offline_params (const char *source);

/* Number of parameter points of the starter for a task's op (for tests
 * and docs), or -1 when there is no starter. */
int kf_offline_space_size (json_t *task);

#endif
