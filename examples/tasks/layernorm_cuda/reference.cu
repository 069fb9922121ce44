/*  Reference for the layernorm_cuda task: one thread block per row, two
 *  passes in double (the mean, then the biased variance of the
 *  deviations), each reduced through shared memory, then
 *  y = (x - mean) / sqrt(var + eps) * gamma + beta. Plain and correct, not
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
row_layernorm (const float *x, const float *gamma, const float *beta, float *y, long cols,
               float eps)
{
    __shared__ double scratch[THREADS];
    const float *in = x + (long) blockIdx.x * cols;
    float *out = y + (long) blockIdx.x * cols;
    double total = 0.0;
    for (long c = threadIdx.x; c < cols; c += THREADS)
        total += in[c];
    double mean = sum_block (total, scratch) / cols;
    double squares = 0.0;
    for (long c = threadIdx.x; c < cols; c += THREADS)
        squares += (in[c] - mean) * (in[c] - mean);
    double var = sum_block (squares, scratch) / cols;
    double inv = 1.0 / sqrt (var + eps);
    for (long c = threadIdx.x; c < cols; c += THREADS)
        out[c] = (float) ((in[c] - mean) * inv * gamma[c] + beta[c]);
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in != 3 || n_out != 1 || ctx->backend != KF_BACKEND_CUDA)
        return 1;
    long cols = in[0].shape[in[0].rank - 1];
    long rows = kf_numel (&in[0]) / cols;
    if (kf_numel (&in[1]) != cols || kf_numel (&in[2]) != cols
        || kf_numel (&out[0]) != rows * cols)
        return 1;
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    row_layernorm<<<(unsigned) rows, THREADS, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (const float *) in[1].data, (const float *) in[2].data,
        (float *) out[0].data, cols, eps);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}
