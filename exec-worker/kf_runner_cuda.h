/*  kf_runner_cuda.h - the runner's CUDA side (kf_runner.h): the
 *  candidate's own context, the judge's tensors mapped into it, and the
 *  wait for the candidate's work before each answer.
 *
 *  The runner sets CUDA up before it confines itself and before it loads
 *  the candidate: the candidate's kernel library links the same shared
 *  runtime (`nvcc -cudart shared`), so it finds this context current.
 */
#ifndef KF_RUNNER_CUDA_H
#define KF_RUNNER_CUDA_H

#include "kf_kernel.h"
#include "kf_runner.h"

#include <stddef.h>

/* The runtime and a context on DEVICE, a stream for the kernels. 0, or
 * -1 with WHY. */
int kf_runner_cuda_init (int device, char *why, size_t why_size);

/* The judge's allocation FD (LAYOUT->file_bytes) mapped here; each
 * variant's tensors' data at LAYOUT's offsets from the variant's start
 * (variant V begins V * variant_bytes in; each tensor's OFFSET is where
 * its data begins). Fills IN[V], OUT[V] and CTX (the stream, scratch on
 * the device). Takes FD. 0, or -1 with WHY. */
int kf_runner_cuda_map (int fd, const kf_run_layout_t *layout,
                        kf_tensor_t (*in)[KF_RUN_MAX_TENSORS],
                        kf_tensor_t (*out)[KF_RUN_MAX_TENSORS], kf_ctx_t *ctx, char *why,
                        size_t why_size);

/* Before a call: the scratch handed out again from the start. */
void kf_runner_cuda_next_call (void);

/* Waits for all the work of this process's context and collects its
 * error. 0, or -1 with WHY ("CUDA error in the candidate: ..."). */
int kf_runner_cuda_settle (char *why, size_t why_size);

/* A ping's work: one tiny device operation and the wait for it, so the
 * judge's round trip includes what a call's synchronisation costs. */
void kf_runner_cuda_ping (void);

#endif
