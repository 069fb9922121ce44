#include "kf_kernel.h"
#include <cuda_runtime.h>
#include <math.h>
#include <stdint.h>

/* Named parameter values (RED=shfl) become numbers through these, so
 * -DRED=smem on the compiler's command line works as well. */
#define KF_CAT_(a, b) a##b
#define KF_CAT(a, b) KF_CAT_ (a, b)
#define KF_shfl 0
#define KF_smem 1
#define KF_RED KF_CAT (KF_, RED)

/* Rows of a contiguous f32 tensor: the last dimension is the row, every
 * dimension before it counts rows. Returns -1 for anything else. */
static int
kf_rows (const kf_tensor_t *t, int64_t *rows, int64_t *n)
{
    if (t->dtype != KF_F32 || t->rank < 1 || t->rank > KF_MAX_RANK)
        return -1;
    int64_t expect = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->shape[d] > 1 && t->strides[d] != expect)
            return -1;
        expect *= t->shape[d];
    }
    *n = t->shape[t->rank - 1];
    *rows = *n > 0 ? expect / *n : 0;
    return *n > 0 ? 0 : -1;
}

template <bool IS_MAX>
__device__ __forceinline__ float
kf_op (float a, float b)
{
    return IS_MAX ? fmaxf (a, b) : a + b;
}

/* A sum or maximum over the block's BLOCK threads, returned to all of
 * them. RED=shfl reduces each warp in registers with shuffles and only
 * the 32 warp results through shared memory; RED=smem is the classic
 * shared-memory tree, a barrier per halving. */
template <bool IS_MAX>
__device__ float
kf_block_reduce (float v)
{
    __shared__ float part[BLOCK];
#if KF_RED == KF_shfl
    for (int off = 16; off > 0; off >>= 1)
        v = kf_op<IS_MAX> (v, __shfl_xor_sync (0xffffffffu, v, off));
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = v;
    __syncthreads ();
    if (threadIdx.x < 32) {
        float w = threadIdx.x < BLOCK / 32 ? part[threadIdx.x] : (IS_MAX ? -INFINITY : 0.0f);
        for (int off = 16; off > 0; off >>= 1)
            w = kf_op<IS_MAX> (w, __shfl_xor_sync (0xffffffffu, w, off));
        if (threadIdx.x == 0)
            part[0] = w;
    }
#else
    part[threadIdx.x] = v;
    __syncthreads ();
    for (int s = BLOCK / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s)
            part[threadIdx.x] = kf_op<IS_MAX> (part[threadIdx.x], part[threadIdx.x + s]);
        __syncthreads ();
    }
#endif
    __syncthreads ();
    float r = part[0];
    __syncthreads ();    /* part is reused by the next reduction */
    return r;
}

/* VEC consecutive floats at P (P aligned to VEC floats). */
__device__ __forceinline__ void
kf_load (const float *p, float *v)
{
#if VEC == 4
    float4 t = *(const float4 *) p;
    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;
#elif VEC == 2
    float2 t = *(const float2 *) p;
    v[0] = t.x; v[1] = t.y;
#else
    v[0] = p[0];
#endif
}

__device__ __forceinline__ void
kf_store (float *p, const float *v)
{
#if VEC == 4
    *(float4 *) p = make_float4 (v[0], v[1], v[2], v[3]);
#elif VEC == 2
    *(float2 *) p = make_float2 (v[0], v[1]);
#else
    p[0] = v[0];
#endif
}

/* Loops over a row: vector loads when the row length allows (every row
 * then starts aligned), one element at a time otherwise. The body sees
 * v[0..w-1] at index i; W is VEC or 1. Variadic because a body has
 * commas of its own. */
#define KF_ROW_LOOP(n, ...)                                                \
    if ((n) % VEC == 0) {                                                  \
        for (int64_t i = (int64_t) threadIdx.x * VEC; i < (n); i += (int64_t) BLOCK * VEC) { \
            const int w = VEC;                                             \
            __VA_ARGS__                                                    \
        }                                                                  \
    }                                                                      \
    else {                                                                 \
        for (int64_t i = threadIdx.x; i < (n); i += BLOCK) {               \
            const int w = 1;                                               \
            __VA_ARGS__                                                    \
        }                                                                  \
    }

#define KF_LAUNCH_CHECK()                                                  \
    return cudaGetLastError () == cudaSuccess ? 0 : 1
