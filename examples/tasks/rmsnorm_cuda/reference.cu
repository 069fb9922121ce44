/*  Reference for the rmsnorm_cuda task: one thread block per row, the sum
 *  of squares accumulated in double and reduced through shared memory,
 *  then y = x / sqrt(mean(x^2) + eps) * weight. Plain and correct, not
 *  tuned. */
#include "kf_kernel.h"
#include <cuda_runtime.h>

#define THREADS 128

/* Tree sum of one value per thread; every thread gets the result. */
__device__ static double
sum_block (double value, double *scratch)
{
    scratch[threadIdx.x] = value;
    __syncthreads ();
    for (int half = THREADS / 2; half > 0; half >>= 1) {
        if (threadIdx.x < half)
            scratch[threadIdx.x] += scratch[threadIdx.x + half];
        __syncthreads ();
    }
    double result = scratch[0];
    __syncthreads ();
    return result;
}

__global__ static void
row_rmsnorm (const float *x, const float *weight, float *y, long cols, float eps)
{
    __shared__ double scratch[THREADS];
    const float *in = x + (long) blockIdx.x * cols;
    float *out = y + (long) blockIdx.x * cols;
    double squares = 0.0;
    for (long c = threadIdx.x; c < cols; c += THREADS)
        squares += (double) in[c] * in[c];
    squares = sum_block (squares, scratch);
    double scale = 1.0 / sqrt (squares / cols + eps);
    for (long c = threadIdx.x; c < cols; c += THREADS)
        out[c] = (float) (in[c] * scale * weight[c]);
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in != 2 || n_out != 1 || ctx->backend != KF_BACKEND_CUDA)
        return 1;
    long cols = in[0].shape[in[0].rank - 1];
    long rows = kf_numel (&in[0]) / cols;
    if (kf_numel (&in[1]) != cols || kf_numel (&out[0]) != rows * cols)
        return 1;
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    row_rmsnorm<<<(unsigned) rows, THREADS, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (const float *) in[1].data, (float *) out[0].data, cols, eps);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
