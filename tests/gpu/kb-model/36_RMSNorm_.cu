/* KernelBench level 1, problem 36 (RMSNorm over dim 1) at its published
 * size: x [112, 64, 512, 512] f32 -> out0 = x / sqrt(mean(x^2 over the 64
 * features) + eps), eps = 1e-5 (the module's default; get_init_inputs
 * passes only num_features, which is in ctx as init0 and equals shape[1]).
 * 1.9 G elements, 7.5 GB each way.
 *
 * The reduction runs across dim 1, whose stride is 512 * 512 elements,
 * so each output position (b, h, w) is its own small reduction of 64
 * values lying 1 MB apart. One thread per position: the warp's 32
 * threads take 32 neighbouring positions, so every one of the 64 loads
 * is a full 128-byte line; the 64 values stay in registers (the channel
 * count is a template argument) for the sum of squares and the scaled
 * write, so x is read exactly once. The reference makes x**2, the mean,
 * the sqrt and the division separate kernels (about 37 GB of traffic);
 * this moves 15 GB. Sums in float over 64 terms of the same sign: error
 * ~1e-7 relative. Other channel counts take a two-pass loop kernel.
 */
#include "kf_kernel.h"
#include <cuda_runtime.h>
#include <math.h>

/* kf-tune: BLOCK=256,128,512 */
#ifndef BLOCK
#define BLOCK 256
#endif

#define EPS 1e-5f

/* x as [outer, C, inner]; one thread per (outer, inner) position. */
template <int C>
__global__ void __launch_bounds__ (BLOCK)
rmsnorm_regs (const float *__restrict__ x, float *__restrict__ y, int64_t inner,
              int64_t positions)
{
    int64_t p = (int64_t) blockIdx.x * BLOCK + threadIdx.x;
    if (p >= positions)
        return;
    int64_t o = p / inner, i = p - o * inner;
    const float *xp = x + o * C * inner + i;
    float *yp = y + o * C * inner + i;
    float v[C];
#pragma unroll
    for (int c = 0; c < C; c++)
        v[c] = __ldcs (xp + (int64_t) c * inner);
    float ss = 0.0f;
#pragma unroll
    for (int c = 0; c < C; c++)
        ss = fmaf (v[c], v[c], ss);
    float inv = 1.0f / sqrtf (ss / (float) C + EPS);
#pragma unroll
    for (int c = 0; c < C; c++)
        __stcs (yp + (int64_t) c * inner, v[c] * inv);
}

/* Any channel count: the sum of squares, then a second read to write. */
__global__ void __launch_bounds__ (BLOCK)
rmsnorm_loop (const float *__restrict__ x, float *__restrict__ y, int64_t channels,
              int64_t inner, int64_t positions)
{
    int64_t p = (int64_t) blockIdx.x * BLOCK + threadIdx.x;
    if (p >= positions)
        return;
    int64_t o = p / inner, i = p - o * inner;
    const float *xp = x + o * channels * inner + i;
    float *yp = y + o * channels * inner + i;
    float ss = 0.0f;
    for (int64_t c = 0; c < channels; c++) {
        float v = xp[c * inner];
        ss = fmaf (v, v, ss);
    }
    float inv = 1.0f / sqrtf (ss / (float) channels + EPS);
    for (int64_t c = 0; c < channels; c++)
        yp[c * inner] = xp[c * inner] * inv;
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || in[0].rank < 2 || kf_numel (&out[0]) != kf_numel (&in[0]))
        return 1;
    int64_t n = kf_numel (&in[0]);
    if (n == 0)
        return 0;
    int64_t channels = in[0].shape[1];
    int64_t outer = in[0].shape[0];
    int64_t inner = 1;
    for (int d = 2; d < in[0].rank; d++)
        inner *= in[0].shape[d];
    int64_t positions = outer * inner;
    int64_t blocks = (positions + BLOCK - 1) / BLOCK;
    if (blocks > 0x7fffffff)
        return 1;
    cudaStream_t stream = (cudaStream_t) ctx->stream;
    const float *x = (const float *) in[0].data;
    float *y = (float *) out[0].data;
    if (channels == 64)
        rmsnorm_regs<64><<<(unsigned) blocks, BLOCK, 0, stream>>> (x, y, inner, positions);
    else if (channels == 32)
        rmsnorm_regs<32><<<(unsigned) blocks, BLOCK, 0, stream>>> (x, y, inner, positions);
    else
        rmsnorm_loop<<<(unsigned) blocks, BLOCK, 0, stream>>> (x, y, channels, inner,
                                                               positions);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
