/* KernelBench level 1, problem 40 (LayerNorm over the last three dims) at
 * its published size: in0 = x [16, 64, 256, 256] f32, in1 = ln_weight and
 * in2 = ln_bias [64, 256, 256] (the module's parameters, after the
 * argument), out0 = (x - mean) / sqrt(var + eps) * weight + bias per row,
 * eps = 1e-5 (nn.LayerNorm's default), biased variance.
 *
 * 16 rows of 4 M elements (16 MB each): a kernel with a block per row,
 * the usual layer-norm shape, would keep 16 of 132 SMs busy. Instead each
 * row is spread over 256 blocks:
 *
 *   1. stats: each block reduces a 64 KB chunk of a row to (sum, sum of
 *      squares) of x - K, K the row's first element (the shift keeps a
 *      large mean from cancelling the variance away), float within the
 *      block, written as doubles to scratch;
 *   2. finish: a block per row folds its 256 partials, in double, into
 *      the mean and 1/sqrt(var + eps);
 *   3. normalise: each block writes a 64 KB chunk. Blocks are ordered
 *      chunk-major (the 16 rows of one chunk are consecutive), so each
 *      64 KB of weight and bias is fetched from HBM once and served to
 *      the other 15 rows from L2.
 *
 * Traffic: x twice, out once, weight and bias once: ~0.84 GB, float4
 * throughout. Rows whose length is not a multiple of 4, or unaligned
 * pointers, take the same three kernels with scalar accesses.
 */
#include "kf_kernel.h"
#include <cuda_runtime.h>
#include <math.h>

#define THREADS 256
#define PER_THREAD 16                   /* vectors per thread per chunk */
#define CHUNK (THREADS * PER_THREAD)    /* vectors per chunk            */
#define EPS 1e-5

template <int V> struct vec;
template <> struct vec<4> {
    typedef float4 t;
};
template <> struct vec<1> {
    typedef float t;
};

__device__ __forceinline__ void
acc (float4 v, float k, float &s, float &q)
{
    float a = v.x - k, b = v.y - k, c = v.z - k, d = v.w - k;
    s += (a + b) + (c + d);
    q = fmaf (a, a, fmaf (b, b, fmaf (c, c, fmaf (d, d, q))));
}

__device__ __forceinline__ void
acc (float v, float k, float &s, float &q)
{
    float a = v - k;
    s += a;
    q = fmaf (a, a, q);
}

__device__ __forceinline__ float4
norm (float4 v, float4 w, float4 b, float mean, float rstd)
{
    return make_float4 ((v.x - mean) * rstd * w.x + b.x, (v.y - mean) * rstd * w.y + b.y,
                        (v.z - mean) * rstd * w.z + b.z, (v.w - mean) * rstd * w.w + b.w);
}

__device__ __forceinline__ float
norm (float v, float w, float b, float mean, float rstd)
{
    return (v - mean) * rstd * w + b;
}

/* grid (chunks, rows). PART[row * chunks + chunk] = (sum, sumsq) of x - K. */
template <int V>
__global__ void __launch_bounds__ (THREADS)
ln_stats (const float *__restrict__ x, double2 *__restrict__ part, int64_t cols)
{
    typedef typename vec<V>::t T;
    __shared__ float red[2][THREADS / 32];
    int64_t row = blockIdx.y;
    int64_t nv = cols / V;
    const float *xr = x + row * cols;
    const T *xv = (const T *) xr;
    float k = __ldg (xr);
    float s = 0.0f, q = 0.0f;
    int64_t start = (int64_t) blockIdx.x * CHUNK + threadIdx.x;
#pragma unroll
    for (int j = 0; j < PER_THREAD; j++) {
        int64_t i = start + (int64_t) j * THREADS;
        if (i < nv)
            acc (xv[i], k, s, q);
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync (0xffffffffu, s, o);
        q += __shfl_xor_sync (0xffffffffu, q, o);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        red[0][warp] = s;
        red[1][warp] = q;
    }
    __syncthreads ();
    if (threadIdx.x == 0) {
        double ds = 0.0, dq = 0.0;
        for (int w = 0; w < THREADS / 32; w++) {
            ds += red[0][w];
            dq += red[1][w];
        }
        part[row * gridDim.x + blockIdx.x] = make_double2 (ds, dq);
    }
}

/* One block per row: its partials, in double, into (mean, 1/std). */
__global__ void __launch_bounds__ (THREADS)
ln_finish (const float *__restrict__ x, const double2 *__restrict__ part, float2 *__restrict__ stat,
           int64_t cols, int chunks)
{
    __shared__ double red[2][THREADS / 32];
    int64_t row = blockIdx.x;
    double s = 0.0, q = 0.0;
    for (int c = threadIdx.x; c < chunks; c += THREADS) {
        double2 p = part[row * chunks + c];
        s += p.x;
        q += p.y;
    }
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) {
        s += __shfl_xor_sync (0xffffffffu, s, o);
        q += __shfl_xor_sync (0xffffffffu, q, o);
    }
    int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
    if (lane == 0) {
        red[0][warp] = s;
        red[1][warp] = q;
    }
    __syncthreads ();
    if (threadIdx.x == 0) {
        double ds = 0.0, dq = 0.0;
        for (int i = 0; i < THREADS / 32; i++) {
            ds += red[0][i];
            dq += red[1][i];
        }
        double k = (double) x[row * cols];
        double ms = ds / (double) cols;                /* mean of x - K */
        double var = dq / (double) cols - ms * ms;     /* shift-invariant */
        if (var < 0.0)
            var = 0.0;
        stat[row] = make_float2 ((float) (k + ms), (float) (1.0 / sqrt (var + EPS)));
    }
}

/* grid (chunks * rows): block b is chunk b / rows of row b % rows, so the
 * rows of one chunk run together and share its weight and bias in L2. */
template <int V>
__global__ void __launch_bounds__ (THREADS, 3)
ln_norm (const float *__restrict__ x, const float *__restrict__ w, const float *__restrict__ bias,
         const float2 *__restrict__ stat, float *__restrict__ y, int64_t cols, int rows)
{
    typedef typename vec<V>::t T;
    int64_t row = blockIdx.x % rows;
    int64_t chunk = blockIdx.x / rows;
    float2 st = stat[row];
    int64_t nv = cols / V;
    const T *xv = (const T *) (x + row * cols);
    T *yv = (T *) (y + row * cols);
    const T *wv = (const T *) w;
    const T *bv = (const T *) bias;
    int64_t start = chunk * CHUNK + threadIdx.x;
#pragma unroll
    for (int j0 = 0; j0 < PER_THREAD; j0 += 4) {
        T xs[4], ws[4], bs[4];
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int64_t i = start + (int64_t) (j0 + j) * THREADS;
            if (i < nv) {
                xs[j] = __ldcs (xv + i);
                ws[j] = __ldg (wv + i);
                bs[j] = __ldg (bv + i);
            }
        }
#pragma unroll
        for (int j = 0; j < 4; j++) {
            int64_t i = start + (int64_t) (j0 + j) * THREADS;
            if (i < nv)
                __stcs (yv + i, norm (xs[j], ws[j], bs[j], st.x, st.y));
        }
    }
}

template <int V>
static int
s_run (const float *x, const float *w, const float *b, float *y, double2 *part, float2 *stat,
       int64_t rows, int64_t cols, cudaStream_t stream)
{
    int64_t chunks = (cols / V + CHUNK - 1) / CHUNK;
    ln_stats<V><<<dim3 ((unsigned) chunks, (unsigned) rows), THREADS, 0, stream>>> (x, part,
                                                                                    cols);
    ln_finish<<<(unsigned) rows, THREADS, 0, stream>>> (x, part, stat, cols, (int) chunks);
    ln_norm<V><<<(unsigned) (chunks * rows), THREADS, 0, stream>>> (x, w, b, stat, y, cols,
                                                                   (int) rows);
    return cudaGetLastError () == cudaSuccess ? 0 : 1;
}

extern "C" int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 3 || n_out < 1)
        return 1;
    for (int t = 0; t < 3; t++)
        if (in[t].dtype != KF_F32)
            return 1;
    if (out[0].dtype != KF_F32)
        return 1;
    int64_t n = kf_numel (&in[0]);
    int64_t cols = kf_numel (&in[1]);                 /* the normalised shape */
    if (cols <= 0 || kf_numel (&in[2]) != cols || n % cols != 0 || kf_numel (&out[0]) != n)
        return 1;
    int64_t rows = n / cols;
    if (rows == 0)
        return 0;
    const float *x = (const float *) in[0].data;
    const float *w = (const float *) in[1].data;
    const float *b = (const float *) in[2].data;
    float *y = (float *) out[0].data;
    bool aligned = ((uintptr_t) x | (uintptr_t) w | (uintptr_t) b | (uintptr_t) y) % 16 == 0;
    int v4 = cols % 4 == 0 && aligned;
    int64_t chunks = (cols / (v4 ? 4 : 1) + CHUNK - 1) / CHUNK;
    if (rows > 65535 || chunks * rows > 0x7fffffff)
        return 1;
    double2 *part = (double2 *) ctx->scratch_alloc (ctx->scratch_state,
                                                    (size_t) (rows * chunks) * sizeof (double2));
    float2 *stat = (float2 *) ctx->scratch_alloc (ctx->scratch_state,
                                                  (size_t) rows * sizeof (float2));
    if (!part || !stat)
        return 1;
    cudaStream_t stream = (cudaStream_t) ctx->stream;
    if (v4)
        return s_run<4> (x, w, b, y, part, stat, rows, cols, stream);
    return s_run<1> (x, w, b, y, part, stat, rows, cols, stream);
}
