/* KernelBench level 1, problem 1 (square matmul) at its published size:
 * A, B [4096, 4096] f32 -> out0 = A @ B, 137 GFLOP per call.
 *
 * PyTorch runs this as cuBLAS SGEMM on the FP32 pipes (TF32 is off by
 * default for matmul), about 50 TFLOP/s on an H200. The tensor cores are
 * several times faster but take TF32 (10-bit mantissa); plain TF32 would
 * move every product by up to 5e-4 relative. This kernel keeps FP32
 * accuracy on the tensor cores with the 3xTF32 split: each operand is
 * hi = tf32(x) plus lo = tf32(x - hi), and A.B = hi.hi + hi.lo + lo.hi
 * (the lo.lo term is below FP32 rounding), accumulated in FP32, so the
 * result differs from SGEMM's by reordering only (~1e-6 relative).
 *
 * Tiling: 128 x 128 block tiles, K in steps of 32, 8 warps each owning a
 * 64 x 32 tile (4 x 2 WMMA 16x16x8 fragments, 64 FP32 accumulators per
 * thread). Tiles move global -> shared with cp.async (16-byte, L2 only)
 * through a 3-stage ring, so loads for step k+2 are in flight while step
 * k computes; rows are padded by 4 floats against bank conflicts. 104 KB
 * of shared memory per block, two blocks per SM. The hi/lo split happens
 * in registers as fragments are loaded. TF32_PASSES=1 (-D) gives plain
 * TF32 (faster, less accurate). Shapes that are not multiples of the
 * tiles, or other ranks, take a simple shared-memory FP32 kernel.
 */
#include "kf_kernel.h"
#include <cuda_runtime.h>
#include <mma.h>

using namespace nvcuda;

#ifndef TF32_PASSES
#define TF32_PASSES 3
#endif

#define BM 128
#define BN 128
#define BK 32
#define STAGES 3
#define LDA (BK + 4)                    /* padded row of the A tile */
#define LDB (BN + 4)                    /* padded row of the B tile */
#define WARPS_M 2
#define WARPS_N 4
#define WM (BM / WARPS_M)               /* 64 */
#define WN (BN / WARPS_N)               /* 32 */
#define FM (WM / 16)                    /* 4 */
#define FN (WN / 16)                    /* 2 */
#define THREADS (32 * WARPS_M * WARPS_N)
#define A_STAGE (BM * LDA)              /* floats */
#define B_STAGE (BK * LDB)
#define SMEM_BYTES (STAGES * (A_STAGE + B_STAGE) * (int) sizeof (float))

typedef wmma::fragment<wmma::matrix_a, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_a;
typedef wmma::fragment<wmma::matrix_b, 16, 16, 8, wmma::precision::tf32, wmma::row_major> frag_b;
typedef wmma::fragment<wmma::accumulator, 16, 16, 8, float> frag_c;

__device__ __forceinline__ void
cp_async16 (void *smem, const void *gmem)
{
    unsigned s = (unsigned) __cvta_generic_to_shared (smem);
    asm volatile ("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gmem));
}

__device__ __forceinline__ void
cp_async_commit ()
{
    asm volatile ("cp.async.commit_group;\n" ::);
}

template <int N>
__device__ __forceinline__ void
cp_async_wait ()
{
    asm volatile ("cp.async.wait_group %0;\n" ::"n"(N));
}

/* K-step KT of the block's tiles into ring slot STAGE. */
__device__ __forceinline__ void
load_tile (float *As, float *Bs, const float *__restrict__ A, const float *__restrict__ B,
           int m0, int n0, int K, int N, int stage, int kt)
{
    int tid = threadIdx.x;
    int k0 = kt * BK;
    float *as = As + stage * A_STAGE;
    float *bs = Bs + stage * B_STAGE;
#pragma unroll
    for (int i = 0; i < BM * BK / 4 / THREADS; i++) {
        int c = tid + i * THREADS;
        int r = c / (BK / 4), c4 = c % (BK / 4);
        cp_async16 (as + r * LDA + c4 * 4, A + (size_t) (m0 + r) * K + k0 + c4 * 4);
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / THREADS; i++) {
        int c = tid + i * THREADS;
        int r = c / (BN / 4), c4 = c % (BN / 4);
        cp_async16 (bs + r * LDB + c4 * 4, B + (size_t) (k0 + r) * N + n0 + c4 * 4);
    }
}

/* grid (N / BN, M / BM); M % BM == N % BN == K % BK == 0, 16-byte aligned
 * rows. */
__global__ void __launch_bounds__ (THREADS, 2)
gemm_tf32x3 (const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
             int M, int N, int K)
{
    extern __shared__ __align__ (128) float smem[];
    float *As = smem;
    float *Bs = smem + STAGES * A_STAGE;
    int warp = threadIdx.x >> 5;
    int wm = warp / WARPS_N, wn = warp % WARPS_N;
    int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;

    frag_c acc[FM][FN];
#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::fill_fragment (acc[i][j], 0.0f);

    int KT = K / BK;
#pragma unroll
    for (int s = 0; s < STAGES - 1; s++) {
        if (s < KT)
            load_tile (As, Bs, A, B, m0, n0, K, N, s, s);
        cp_async_commit ();
    }

    for (int kt = 0; kt < KT; kt++) {
        /* Step kt has landed (at most STAGES - 2 younger groups pending),
         * and every warp is past step kt - 1, whose slot is refilled now. */
        cp_async_wait<STAGES - 2> ();
        __syncthreads ();
        int next = kt + STAGES - 1;
        if (next < KT)
            load_tile (As, Bs, A, B, m0, n0, K, N, next % STAGES, next);
        cp_async_commit ();

        const float *as = As + (kt % STAGES) * A_STAGE + wm * WM * LDA;
        const float *bs = Bs + (kt % STAGES) * B_STAGE + wn * WN;
#pragma unroll
        for (int kk = 0; kk < BK; kk += 8) {
            frag_b bh[FN];
#if TF32_PASSES >= 3
            frag_b bl[FN];
#endif
#pragma unroll
            for (int j = 0; j < FN; j++) {
                wmma::load_matrix_sync (bh[j], bs + kk * LDB + j * 16, LDB);
#pragma unroll
                for (int t = 0; t < bh[j].num_elements; t++) {
                    float v = bh[j].x[t];
                    float h = wmma::__float_to_tf32 (v);
                    bh[j].x[t] = h;
#if TF32_PASSES >= 3
                    bl[j].x[t] = wmma::__float_to_tf32 (v - h);
#endif
                }
            }
#pragma unroll
            for (int i = 0; i < FM; i++) {
                frag_a ah;
#if TF32_PASSES >= 3
                frag_a al;
#endif
                wmma::load_matrix_sync (ah, as + i * 16 * LDA + kk, LDA);
#pragma unroll
                for (int t = 0; t < ah.num_elements; t++) {
                    float v = ah.x[t];
                    float h = wmma::__float_to_tf32 (v);
                    ah.x[t] = h;
#if TF32_PASSES >= 3
                    al.x[t] = wmma::__float_to_tf32 (v - h);
#endif
                }
#pragma unroll
                for (int j = 0; j < FN; j++) {
#if TF32_PASSES >= 3
                    wmma::mma_sync (acc[i][j], al, bh[j], acc[i][j]);
                    wmma::mma_sync (acc[i][j], ah, bl[j], acc[i][j]);
#endif
                    wmma::mma_sync (acc[i][j], ah, bh[j], acc[i][j]);
                }
            }
        }
    }
    cp_async_wait<0> ();

#pragma unroll
    for (int i = 0; i < FM; i++)
#pragma unroll
        for (int j = 0; j < FN; j++)
            wmma::store_matrix_sync (C + (size_t) (m0 + wm * WM + i * 16) * N + n0 + wn * WN
                                         + j * 16,
                                     acc[i][j], N, wmma::mem_row_major);
}

/* Any shape: 32 x 32 tiles through shared memory, FP32 FMA. */
#define ST 32
__global__ void __launch_bounds__ (ST * 8)
gemm_simple (const float *__restrict__ A, const float *__restrict__ B, float *__restrict__ C,
             int64_t M, int64_t N, int64_t K)
{
    __shared__ float as[ST][ST + 1], bs[ST][ST + 1];
    int tx = threadIdx.x, ty = threadIdx.y;           /* 32 x 8; 4 rows each */
    int64_t row0 = (int64_t) blockIdx.y * ST, col = (int64_t) blockIdx.x * ST + tx;
    float acc[4] = { 0.0f, 0.0f, 0.0f, 0.0f };
    for (int64_t k0 = 0; k0 < K; k0 += ST) {
#pragma unroll
        for (int q = 0; q < 4; q++) {
            int r = ty + 8 * q;
            as[r][tx] = row0 + r < M && k0 + tx < K ? A[(row0 + r) * K + k0 + tx] : 0.0f;
            bs[r][tx] = k0 + r < K && col < N ? B[(k0 + r) * N + col] : 0.0f;
        }
        __syncthreads ();
#pragma unroll 8
        for (int k = 0; k < ST; k++) {
            float b = bs[k][tx];
#pragma unroll
            for (int q = 0; q < 4; q++)
                acc[q] = fmaf (as[ty + 8 * q][k], b, acc[q]);
        }
        __syncthreads ();
    }
#pragma unroll
    for (int q = 0; q < 4; q++) {
        int64_t r = row0 + ty + 8 * q;
        if (r < M && col < N)
            C[r * N + col] = acc[q];
    }
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 2 || n_out < 1 || in[0].dtype != KF_F32 || in[1].dtype != KF_F32
        || out[0].dtype != KF_F32 || in[0].rank != 2 || in[1].rank != 2 || out[0].rank != 2)
        return 1;
    int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];
    if (in[1].shape[0] != K || out[0].shape[0] != M || out[0].shape[1] != N)
        return 1;
    if (M == 0 || N == 0)
        return 0;
    cudaStream_t stream = (cudaStream_t) ctx->stream;
    const float *A = (const float *) in[0].data;
    const float *B = (const float *) in[1].data;
    float *C = (float *) out[0].data;
    bool aligned = ((uintptr_t) A | (uintptr_t) B | (uintptr_t) C) % 32 == 0;
    if (aligned && M % BM == 0 && N % BN == 0 && K % BK == 0 && K > 0 && M <= 0x7fffffff
        && N <= 0x7fffffff && K <= 0x7fffffff && M / BM <= 65535) {
        static bool attr_set = false;
        if (!attr_set) {
            if (cudaFuncSetAttribute (gemm_tf32x3, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                      SMEM_BYTES) != cudaSuccess)
                return 1;
            attr_set = true;
        }
        gemm_tf32x3<<<dim3 ((unsigned) (N / BN), (unsigned) (M / BM)), THREADS, SMEM_BYTES,
                      stream>>> (A, B, C, (int) M, (int) N, (int) K);
    }
    else {
        if ((M + ST - 1) / ST > 65535)
            return 1;
        gemm_simple<<<dim3 ((unsigned) ((N + ST - 1) / ST), (unsigned) ((M + ST - 1) / ST)),
                      dim3 (ST, 8), 0, stream>>> (A, B, C, M, N, K);
    }
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
