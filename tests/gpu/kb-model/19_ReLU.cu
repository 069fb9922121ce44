/* KernelBench level 1, problem 19 (ReLU) at its published size:
 * x [4096, 393216] f32 -> out0 = relu(x), 1.6 G elements, 6.4 GB each way.
 *
 * Pure bandwidth: one read and one write per element, no reuse, so the
 * only things that matter are full-width memory transactions and enough
 * bytes in flight. Each thread moves UNROLL float4s spaced a block apart
 * (every warp access is 512 contiguous bytes), all loads issued before the
 * first store; streaming cache hints (__ldcs/__stcs) because nothing is
 * read again. Indexing is 64-bit (6.4 GB per tensor). NaN passes through
 * as torch.relu lets it (x < 0 ? 0 : x, not fmaxf). A scalar kernel takes
 * sizes that are not a multiple of 4 or pointers not 16-byte aligned.
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
relu1 (float v)
{
    return v < 0.0f ? 0.0f : v;
}

__global__ void __launch_bounds__ (BLOCK)
relu_vec4 (const float4 *__restrict__ x, float4 *__restrict__ y, int64_t n4)
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
            r.x = relu1 (v[k].x);
            r.y = relu1 (v[k].y);
            r.z = relu1 (v[k].z);
            r.w = relu1 (v[k].w);
            __stcs (y + i, r);
        }
    }
}

__global__ void __launch_bounds__ (BLOCK)
relu_scalar (const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    int64_t stride = (int64_t) gridDim.x * BLOCK;
    for (int64_t i = (int64_t) blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = relu1 (x[i]);
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
        relu_vec4<<<(unsigned) blocks, BLOCK, 0, stream>>> ((const float4 *) x, (float4 *) y,
                                                            n4);
    }
    else {
        int64_t blocks = (n + BLOCK - 1) / BLOCK;
        if (blocks > 65536)
            blocks = 65536;
        relu_scalar<<<(unsigned) blocks, BLOCK, 0, stream>>> (x, y, n);
    }
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
