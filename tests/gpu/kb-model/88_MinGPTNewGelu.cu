/* KernelBench level 1, problem 88 (MinGPT's "new GELU") at its published
 * size: x [8192, 8192] f32 -> out0 = 0.5 x (1 + tanh(sqrt(2/pi) (x +
 * 0.044715 x^3))), 67 M elements, 268 MB each way.
 *
 * The reference runs this as about eight separate elementwise PyTorch
 * kernels (pow, two multiplies, add, tanh, add, two multiplies), each
 * reading and writing the whole tensor: some 4.8 GB of traffic. Fused it
 * is one read and one write, 0.54 GB, so the win is the fusion; the
 * kernel then only has to run at bandwidth: UNROLL float4s per thread
 * spaced a block apart, loads before stores, streaming cache hints.
 * tanhf (accurate to a couple of ulp) rather than tanh.approx, and the
 * same float arithmetic as the reference's order, x^3 as x*x*x. A scalar
 * kernel takes unaligned or odd sizes.
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
newgelu1 (float v)
{
    const float k = 0.7978845608028654f;     /* sqrt(2 / pi) */
    float u = k * (v + 0.044715f * (v * v * v));
    return 0.5f * v * (1.0f + tanhf (u));
}

__global__ void __launch_bounds__ (BLOCK)
newgelu_vec4 (const float4 *__restrict__ x, float4 *__restrict__ y, int64_t n4)
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
            r.x = newgelu1 (v[k].x);
            r.y = newgelu1 (v[k].y);
            r.z = newgelu1 (v[k].z);
            r.w = newgelu1 (v[k].w);
            __stcs (y + i, r);
        }
    }
}

__global__ void __launch_bounds__ (BLOCK)
newgelu_scalar (const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    int64_t stride = (int64_t) gridDim.x * BLOCK;
    for (int64_t i = (int64_t) blockIdx.x * BLOCK + threadIdx.x; i < n; i += stride)
        y[i] = newgelu1 (x[i]);
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
        newgelu_vec4<<<(unsigned) blocks, BLOCK, 0, stream>>> ((const float4 *) x, (float4 *) y,
                                                            n4);
    }
    else {
        int64_t blocks = (n + BLOCK - 1) / BLOCK;
        if (blocks > 65536)
            blocks = 65536;
        newgelu_scalar<<<(unsigned) blocks, BLOCK, 0, stream>>> (x, y, n);
    }
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
