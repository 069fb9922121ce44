/*  kf_scratch.h - the host's scratch memory: what ctx->scratch_alloc
 *  hands a kernel (kf_kernel.h), the candidate's in its runner
 *  (kf_runner.c) and the reference's in the judge (kf_host_tensors.c).
 *
 *  An arena kept for as long as a shape case's tensors, reset (not
 *  freed) after every call: blocks are carved in call order out of a few
 *  anonymous mappings, each block 64-byte aligned, so a kernel that asks
 *  for the same sizes in the same order gets the same addresses in every
 *  call, and from the second call on their pages are already resident.
 *  malloc did not promise that: glibc maps a block above its mmap
 *  threshold (which freed blocks raise, up to 32 MiB) anew in every
 *  call, and gives the top of its heap back when blocks are freed, so
 *  a kernel took its scratch's page faults again in every timed call
 *  (round 20: candidate 17, 96 a call).
 *
 *  A call that needs more than the arena holds gets a new mapping for
 *  what does not fit, kept for the calls after it, so growth costs the
 *  faults of one call and the calls after it map nothing. A reset folds
 *  the mappings into one, as large as the most a call has taken, only
 *  when sizes that change from call to call have left far more mapped
 *  than that, or more than 64 mappings.
 *
 *  Device scratch is not this: the CUDA runner keeps one cudaMalloc per
 *  block position (kf_cuda_tensors.c), which already survives calls and
 *  keeps the 256-byte alignment cudaMalloc gives.
 */
#ifndef KF_SCRATCH_H
#define KF_SCRATCH_H

#include <stddef.h>

/* Every block starts on a cache line, the width of an AVX-512 vector. */
#define KF_SCRATCH_ALIGN 64
/* Blocks a call may take; the 65th is refused. */
#define KF_SCRATCH_MAX_BLOCKS 64
/* Bytes a call may take in all, each block counted 64-byte rounded:
 * half a host evaluation's default memory limit (memory_bytes, 16 GiB,
 * kf_exec.c), the other half being what a task's tensors may take
 * there. A refusal, like any mapping the system refuses (the
 * evaluation's RLIMIT_AS), is a NULL from kf_scratch_alloc. */
#define KF_SCRATCH_MAX_BYTES ((size_t) 8 << 30)

typedef struct kf_scratch kf_scratch_t;

/* An empty arena whose calls may take LIMIT bytes each (0, or more than
 * KF_SCRATCH_MAX_BYTES: that). Nothing is mapped until a block is asked
 * for. NULL when out of memory. */
kf_scratch_t *kf_scratch_new (size_t limit);

/* Unmaps every block and frees the arena; nulls *SELF_P. */
void kf_scratch_destroy (kf_scratch_t **self_p);

/* kf_ctx_t's scratch_alloc: BYTES (0 taken as 1) of uninitialised
 * memory from STATE, a kf_scratch_t, valid until the next reset; NULL
 * when STATE is NULL, this call has had its KF_SCRATCH_MAX_BLOCKS
 * blocks, the call's bytes would pass the limit, or the system refuses
 * a mapping. */
void *kf_scratch_alloc (void *state, size_t bytes);

/* After a call: every block may be handed out again. The memory stays
 * mapped; its contents are left as the call left them. */
void kf_scratch_reset (kf_scratch_t *self);

/* Bytes the arena has mapped, and in how many mappings. */
size_t kf_scratch_mapped (const kf_scratch_t *self);
int kf_scratch_regions (const kf_scratch_t *self);

#endif
