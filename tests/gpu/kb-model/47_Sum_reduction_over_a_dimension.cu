/* KernelBench level 1, problem 47 (sum over one dimension, keepdim) at its
 * published size: x [128, 4096, 4095] f32, dim = init0 = 1 -> out0
 * [128, 1, 4095]. 2.1 G elements (8.6 GB) read, 2 MB written.
 *
 * Seen as [outer, R, inner] around the reduced dimension (outer 128,
 * R 4096, inner 4095), every output sums R values spaced inner apart, and
 * neighbouring outputs are neighbours in memory, so threads run along
 * inner (coalesced) and loop over R. A block of 8 warps owns 128 outputs
 * of one outer index: lane l of warp w sums columns l, l+32, l+64, l+96
 * over rows w, w+8, w+16, ... (4 rows unrolled: 16 independent loads in
 * flight per thread), then the 8 warps' partial sums are added through
 * shared memory. 4096 blocks keep every SM streaming. Rows of 4095
 * floats are not 16-byte aligned, so the loads are scalar; each warp
 * access is still 128 contiguous bytes. The result is a pure HBM read at
 * close to copy bandwidth. Float sums of 512 same-signed terms per thread,
 * then 8: error about 1e-6 relative. Works for any dim and any shape.
 */
#include "kf_kernel.h"
#include <cuda_runtime.h>

#define WARPS 8
#define COLS_PER_LANE 4
#define TILE (32 * COLS_PER_LANE)       /* outputs per block */
#define ROW_UNROLL 4

/* grid (ceil(inner / TILE), outer), block (32, WARPS). */
__global__ void __launch_bounds__ (32 * WARPS)
sum_dim (const float *__restrict__ x, float *__restrict__ y, int64_t rows, int64_t inner)
{
    __shared__ float part[WARPS][TILE];
    int lane = threadIdx.x, warp = threadIdx.y;
    int64_t o = blockIdx.y;
    int64_t j0 = (int64_t) blockIdx.x * TILE + lane;
    const float *xo = x + o * rows * inner;
    float acc[COLS_PER_LANE];
    bool ok[COLS_PER_LANE];
#pragma unroll
    for (int q = 0; q < COLS_PER_LANE; q++) {
        acc[q] = 0.0f;
        ok[q] = j0 + 32 * q < inner;
    }
    int64_t r = warp;
    for (; r + (ROW_UNROLL - 1) * WARPS < rows; r += ROW_UNROLL * WARPS) {
        float v[ROW_UNROLL][COLS_PER_LANE];
#pragma unroll
        for (int u = 0; u < ROW_UNROLL; u++) {
            const float *p = xo + (r + u * WARPS) * inner + j0;
#pragma unroll
            for (int q = 0; q < COLS_PER_LANE; q++)
                v[u][q] = ok[q] ? __ldcs (p + 32 * q) : 0.0f;
        }
#pragma unroll
        for (int u = 0; u < ROW_UNROLL; u++)
#pragma unroll
            for (int q = 0; q < COLS_PER_LANE; q++)
                acc[q] += v[u][q];
    }
    for (; r < rows; r += WARPS) {
        const float *p = xo + r * inner + j0;
#pragma unroll
        for (int q = 0; q < COLS_PER_LANE; q++)
            if (ok[q])
                acc[q] += __ldcs (p + 32 * q);
    }
#pragma unroll
    for (int q = 0; q < COLS_PER_LANE; q++)
        part[warp][lane + 32 * q] = acc[q];
    __syncthreads ();
    int t = warp * 32 + lane;
    if (t < TILE) {
        int64_t j = (int64_t) blockIdx.x * TILE + t;
        if (j < inner) {
            float s = 0.0f;
#pragma unroll
            for (int w = 0; w < WARPS; w++)
                s += part[w][t];
            y[o * inner + j] = s;
        }
    }
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || in[0].rank < 1)
        return 1;
    int rank = in[0].rank;
    int dim = (int) kf_scalar (ctx, "init0", 1);
    if (dim < 0)
        dim += rank;
    if (dim < 0 || dim >= rank)
        return 1;
    int64_t outer = 1, inner = 1, rows = in[0].shape[dim];
    for (int d = 0; d < dim; d++)
        outer *= in[0].shape[d];
    for (int d = dim + 1; d < rank; d++)
        inner *= in[0].shape[d];
    if (kf_numel (&out[0]) != outer * inner)
        return 1;
    if (outer * inner == 0)
        return 0;
    if (outer > 65535)
        return 1;
    int64_t tiles = (inner + TILE - 1) / TILE;
    if (tiles > 0x7fffffff)
        return 1;
    /* An empty reduced dimension sums to zero: the kernel writes 0. */
    sum_dim<<<dim3 ((unsigned) tiles, (unsigned) outer), dim3 (32, WARPS), 0,
              (cudaStream_t) ctx->stream>>> ((const float *) in[0].data, (float *) out[0].data,
                                            rows, inner);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
