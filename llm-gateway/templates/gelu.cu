@BANNER@
@DEFINES@

@PRELUDE@

#define KF_tanh 0
#define KF_fastexp 1
#define KF_IMPL KF_CAT (KF_, IMPL)

/* GELU, tanh form. fastexp rewrites 0.5 v (1 + tanh u) as
 * v / (1 + e^(-2u)) with the hardware exponential (__expf), one special-
 * function op instead of tanhf's longer sequence. */
__device__ __forceinline__ float
kf_gelu (float v)
{
    float u = 0.7978845608f * (v + 0.044715f * v * v * v);
#if KF_IMPL == KF_fastexp
    return v / (1.0f + __expf (-2.0f * u));
#else
    return 0.5f * v * (1.0f + tanhf (u));
#endif
}

/* Grid-stride over the whole tensor, VEC elements per thread step. */
__global__ void __launch_bounds__ (BLOCK)
kf_gelu_all (const float *__restrict__ x, float *__restrict__ y, int64_t total)
{
    int64_t stride = (int64_t) gridDim.x * BLOCK * VEC;
    int64_t vec_end = total - total % VEC;
    for (int64_t i = ((int64_t) blockIdx.x * BLOCK + threadIdx.x) * VEC; i < vec_end; i += stride) {
        float v[VEC];
        kf_load (x + i, v);
        for (int k = 0; k < VEC; k++)
            v[k] = kf_gelu (v[k]);
        kf_store (y + i, v);
    }
    for (int64_t i = vec_end + (int64_t) blockIdx.x * BLOCK + threadIdx.x; i < total;
         i += (int64_t) gridDim.x * BLOCK)
        y[i] = kf_gelu (x[i]);
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n;
    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)
        return 1;
    int64_t total = rows * n;
    if (total == 0)
        return 0;
    int64_t blocks = (total / VEC + BLOCK - 1) / BLOCK;
    if (blocks > 65536)
        blocks = 65536;
    if (blocks < 1)
        blocks = 1;
    kf_gelu_all<<<(unsigned) blocks, BLOCK, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (float *) out[0].data, total);
    KF_LAUNCH_CHECK ();
}
