/*  Reference for the softmax_cuda task: one thread block per row, three
 *  passes over global memory (row maximum, sum of exponentials, output),
 *  each reduction through shared memory. Plain and correct, not tuned. */
#include "kf_kernel.h"
#include <cuda_runtime.h>

#define THREADS 128

/* Tree reduction of one value per thread; every thread gets the result. */
__device__ static float
reduce_block (float value, float *scratch, int take_max)
{
    scratch[threadIdx.x] = value;
    __syncthreads ();
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half) {
            float other = scratch[threadIdx.x + half];
            float mine = scratch[threadIdx.x];
            scratch[threadIdx.x] = take_max ? fmaxf (mine, other) : mine + other;
        }
        __syncthreads ();
    }
    float result = scratch[0];
    __syncthreads ();
    return result;
}

__global__ static void
row_softmax (const float *x, float *y, long cols)
{
    __shared__ float scratch[THREADS];
    const float *in = x + (long) blockIdx.x * cols;
    float *out = y + (long) blockIdx.x * cols;
    float top = -INFINITY;
    for (long c = threadIdx.x; c < cols; c += THREADS)
        top = fmaxf (top, in[c]);
    top = reduce_block (top, scratch, 1);
    float total = 0.0f;
    for (long c = threadIdx.x; c < cols; c += THREADS)
        total += expf (in[c] - top);
    total = reduce_block (total, scratch, 0);
    for (long c = threadIdx.x; c < cols; c += THREADS)
        out[c] = expf (in[c] - top) / total;
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in != 1 || n_out != 1 || ctx->backend != KF_BACKEND_CUDA)
        return 1;
    long cols = in[0].shape[in[0].rank - 1];
    long rows = kf_numel (&in[0]) / cols;
    row_softmax<<<(unsigned) rows, THREADS, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (float *) out[0].data, cols);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
