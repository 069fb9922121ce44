/*  kf_cuda_judge.cu - the judge's own kernels: inputs drawn on the device,
 *  outputs compared there, inputs checked for writes, so only figures
 *  cross the bus (issue 12, item 5).
 *
 *  Built by the Makefile with nvcc, when there is one, into a fat binary
 *  (machine code for the common architectures, PTX for the rest) that is
 *  embedded in the exec worker and loaded through the driver API
 *  (kf_cuda_judge.c). Every rule for one element is kf_eval_elem.h, the
 *  host's own.
 */
#include "kf_eval_elem.h"

#define KF_JUDGE_THREADS 256

//  N elements of DTYPE at P, drawn from DIST with SEED: element I is the
//  host's element I.
extern "C" __global__ void
kf_judge_fill (void *p, unsigned long long n, int dtype, kf_elem_dist_t dist,
               unsigned long long seed)
{
    uint64_t stride = (uint64_t) gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += stride)
        kf_elem_set (dtype, p, i, kf_elem_draw (&dist, seed, i));
}

//  Output C against REF over N elements: each block's merged figures into
//  PARTS[blockIdx.x], in a fixed order (thread I takes elements I,
//  I + stride, ...; the block adds in a fixed tree), so the sums do not
//  depend on scheduling.
extern "C" __global__ void __launch_bounds__ (KF_JUDGE_THREADS)
kf_judge_compare (const void *c, const void *ref, unsigned long long n, int dtype,
                  double rtol, double atol, kf_elem_part_t *parts)
{
    __shared__ kf_elem_part_t sh[KF_JUDGE_THREADS];
    kf_elem_part_t p;
    memset (&p, 0, sizeof p);
    uint64_t stride = (uint64_t) gridDim.x * blockDim.x;
    for (uint64_t i = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x; i < n; i += stride)
        kf_elem_check (&p, dtype, c, ref, i, rtol, atol);
    sh[threadIdx.x] = p;
    __syncthreads ();
    for (unsigned s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            kf_elem_merge (&sh[threadIdx.x], &sh[threadIdx.x + s]);
        __syncthreads ();
    }
    if (threadIdx.x == 0)
        parts[blockIdx.x] = sh[0];
}

//  How many of BYTES bytes differ between A and B (both 8-byte aligned),
//  counted per 8-byte word and added to *COUNT.
extern "C" __global__ void
kf_judge_differ (const unsigned char *a, const unsigned char *b, unsigned long long bytes,
                 unsigned long long *count)
{
    const uint64_t *wa = (const uint64_t *) a, *wb = (const uint64_t *) b;
    uint64_t words = bytes / 8, stride = (uint64_t) gridDim.x * blockDim.x;
    unsigned long long local = 0;
    uint64_t first = blockIdx.x * (uint64_t) blockDim.x + threadIdx.x;
    for (uint64_t i = first; i < words; i += stride)
        local += wa[i] != wb[i];
    if (first == 0)
        for (uint64_t i = words * 8; i < bytes; i++)
            local += a[i] != b[i];
    if (local)
        atomicAdd (count, local);
}
