/* KernelBench level 1, problem 26 (GELU) at its published size:
 * x [4096, 393216] f32 -> out0 = gelu(x), the exact form
 * 0.5 x (1 + erf(x / sqrt 2)) that F.gelu computes by default
 * (approximate='none'), 1.6 G elements, 6.4 GB each way.
 *
 * Bandwidth-bound: erff is a short polynomial (no division, no table),
 * far below what the memory system leaves per element, so the kernel is
 * the ReLU one with a different element function: UNROLL float4s per
 * thread spaced a block apart, loads issued before stores, streaming
 * cache hints, 64-bit indexing. erff (not the tanh approximation, whose
 * error near |x| ~ 1-3 reaches 1e-3 relative) keeps the result within a
 * few ulp of PyTorch's. A scalar kernel takes unaligned or odd sizes.
 */
#include "kf_kernel.h"
#include <cuda_runtime.h>

/* kf-tune: BLOCK=256,128,512 UNROLL=4,2,8 */
#ifndef BLOCK
#define BLOCK 256
#endif
#ifndef UNROLL
#define UNROLL 4
#endif

__device__ __forceinline__ float
gelu1 (float v)
{
    return 0.5f * v * (1.0f + erff (v * 0.70710678118654752440f));
}

__global__ void __launch_bounds__ (BLOCK)
gelu_vec4 (const float4 *__restrict__ x, float4 *__restrict__ y, int64_t n4)
{
    int64_t base = (int64_t) blockIdx.x * (BLOCK * UNROLL) + threadIdx.x;
    float4 v[UNROLL];
#pragma unroll
    for (int k = 0; k < UNROLL; k++) {
        int64_t i = base + (int64_t) k * BLOCK;
        if (i < n4)
            v[k] = __ldcs (x + i);
    }
#pragma unroll
    for (int k = 0; k < UNROLL; k++) {
        int64_t i = base + (int64_t) k * BLOCK;
        if (i < n4) {
            float4 r;
            r.x = gelu1 (v[k].x);
            r.y = gelu1 (v[k].y);
            r.z = gelu1 (v[k].z);
            r.w = gelu1 (v[k].w);
            __stcs (y + i, r);
        }
    }
}

__global__ void __launch_bounds__ (BLOCK)
gelu_scalar (const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    int64_t stride = (int64_t) gridDim.x * BLOCK;
    for (int64_t i = (int64_t) blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = gelu1 (x[i]);
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32)
        return 1;
    int64_t n = kf_numel (&in[0]);
    if (kf_numel (&out[0]) != n)
        return 1;
    if (n == 0)
        return 0;
    cudaStream_t stream = (cudaStream_t) ctx->stream;
    const float *x = (const float *) in[0].data;
    float *y = (float *) out[0].data;
    bool aligned = ((uintptr_t) x % 16 == 0) && ((uintptr_t) y % 16 == 0);
    if (aligned && n % 4 == 0) {
        int64_t n4 = n / 4;
        int64_t blocks = (n4 + (int64_t) BLOCK * UNROLL - 1) / ((int64_t) BLOCK * UNROLL);
        if (blocks > 0x7fffffff)
            return 1;
        gelu_vec4<<<(unsigned) blocks, BLOCK, 0, stream>>> ((const float4 *) x, (float4 *) y,
                                                            n4);
    }
    else {
        int64_t blocks = (n + BLOCK - 1) / BLOCK;
        if (blocks > 65536)
            blocks = 65536;
        gelu_scalar<<<(unsigned) blocks, BLOCK, 0, stream>>> (x, y, n);
    }
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
