@BANNER@
@DEFINES@

@PRELUDE@

/* KF_REDUCE_MAX is fixed by the task (sum or max), not a tuning choice.
 * One block per row; each thread reduces its strided share, then the
 * block reduces the partial results. */
__global__ void __launch_bounds__ (BLOCK)
kf_reduce_rows (const float *__restrict__ x, float *__restrict__ y, int64_t n)
{
    const float *row = x + (int64_t) blockIdx.x * n;
    float acc = KF_REDUCE_MAX ? -INFINITY : 0.0f;
    KF_ROW_LOOP (n, {
        float v[VEC];
        if (w == VEC) kf_load (row + i, v); else v[0] = row[i];
        for (int k = 0; k < w; k++)
            acc = kf_op<KF_REDUCE_MAX> (acc, v[k]);
    })
    float r = kf_block_reduce<KF_REDUCE_MAX> (acc);
    if (threadIdx.x == 0)
        y[blockIdx.x] = r;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n;
    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&out[0], &out_rows, &out_n) || out_rows * out_n != rows)
        return 1;
    if (rows == 0)
        return 0;
    kf_reduce_rows<<<(unsigned) rows, BLOCK, 0, (cudaStream_t) ctx->stream>>> (
        (const float *) in[0].data, (float *) out[0].data, n);
    KF_LAUNCH_CHECK ();
}
