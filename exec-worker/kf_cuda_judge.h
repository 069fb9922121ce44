/*  kf_cuda_judge.h - the CUDA judge's device checks: inputs drawn on the
 *  GPU, outputs compared there, inputs checked for writes there; only
 *  figures come back (a few kilobytes a comparison, whatever the size of
 *  the tensors).
 *
 *  The kernels are kf_cuda_judge.cu, built into the exec worker by the
 *  Makefile when nvcc is found; element rules are kf_eval_elem.h, shared
 *  with the host's checks. Every call works on the legacy default stream
 *  and returns only after the device has finished it.
 */
#ifndef KF_CUDA_JUDGE_H
#define KF_CUDA_JUDGE_H

#include "kf_cuda_api.h"
#include "kf_eval_elem.h"

#include <stddef.h>
#include <stdint.h>

typedef struct kf_cuda_judge kf_cuda_judge_t;

/* Loads the judge's kernels into API's current context. NULL with WHY
 * when this build has none (no nvcc when it was built), the driver API is
 * missing, or the driver refuses the image. */
kf_cuda_judge_t *kf_cuda_judge_new (kf_cuda_api_t *api, char *why, size_t why_size);
void kf_cuda_judge_destroy (kf_cuda_judge_t **self_p);

/* N elements of DTYPE at device address P drawn from D with SEED; the
 * host's kf_eval_fill would draw the same values. Returns a CUDA error
 * code (0 when done). */
int kf_cuda_judge_fill (kf_cuda_judge_t *self, const kf_elem_dist_t *d, int dtype, void *p,
                        size_t n, uint64_t seed);

/* Output C against REF (device addresses, N elements of DTYPE): every
 * element's figures merged into *SUM, for kf_eval_judge_output. */
int kf_cuda_judge_compare (kf_cuda_judge_t *self, int dtype, const void *c, const void *ref,
                           size_t n, double rtol, double atol, kf_elem_part_t *sum);

/* How many 8-byte words of BYTES bytes differ between device buffers A
 * and B (a tail of fewer than 8 counted by byte), into *DIFFERING. */
int kf_cuda_judge_differ (kf_cuda_judge_t *self, const void *a, const void *b, size_t bytes,
                          uint64_t *differing);

#endif
