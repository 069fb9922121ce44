@BANNER@
@DEFINES@

@PRELUDE@

@ROWS@
/* The sum of squares reduced over the row's threads, then every element
 * scaled by the reciprocal root and the weight. A row held in registers is
 * read once; the weight, the same for every row and so found in the
 * caches, is fetched with the row when registers allow, its latency then
 * hidden behind the row's. */
template <int C>
__global__ void __launch_bounds__ (BLOCK)
kf_rmsnorm_rows (const float *__restrict__ x, const float *__restrict__ wt,
                 float *__restrict__ y, int64_t rows, int64_t n, float eps, int vw)
{
    KF_FOR_ROWS (rows) {
        const float *row = x + r * n;
        float *out = y + r * n;
        if (C > 0) {
            const bool early = C * VEC <= 32;
            float v[(C > 0 ? C : 1) * VEC], g[(C > 0 && C * VEC <= 32 ? C : 1) * VEC];
#pragma unroll
            for (int c = 0; c < C; c++) {
                if (KF_CHUNK (c) < n) {
                    kf_load_last (row + KF_CHUNK (c), v + c * VEC);
                    if (early)
                        kf_load (wt + KF_CHUNK (c), g + c * VEC);
                }
                else
                    for (int k = 0; k < VEC; k++)
                        v[c * VEC + k] = 0.0f;
            }
            float ss = 0.0f;
#pragma unroll
            for (int k = 0; k < C * VEC; k++)
                ss += v[k] * v[k];
            float inv = rsqrtf (kf_row_reduce<false> (ss) / (float) n + eps);
#pragma unroll
            for (int c = 0; c < C; c++) {
                if (KF_CHUNK (c) < n) {
                    float gg[VEC];
                    if (early)
                        for (int k = 0; k < VEC; k++)
                            gg[k] = g[c * VEC + k];
                    else
                        kf_load (wt + KF_CHUNK (c), gg);
                    for (int k = 0; k < VEC; k++)
                        gg[k] *= v[c * VEC + k] * inv;
                    kf_store_last (out + KF_CHUNK (c), gg);
                }
            }
            continue;
        }
        float ss = 0.0f;
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];
            for (int k = 0; k < w; k++)
                ss += u[k] * u[k];
        })
        float inv = rsqrtf (kf_row_reduce<false> (ss) / (float) n + eps);
        KF_ROW_FOR (n, vw, {
            float u[VEC], gg[VEC];
            if (w == VEC) { kf_load_last (row + i, u); kf_load (wt + i, gg); }
            else { u[0] = KF_LDS (row + i); gg[0] = wt[i]; }
            for (int k = 0; k < w; k++)
                u[k] = u[k] * inv * gg[k];
            if (w == VEC) kf_store_last (out + i, u); else KF_STS (out + i, u[0]);
        })
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n, w_rows, w_n;
    if (n_in < 2 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&in[1], &w_rows, &w_n) || w_rows * w_n != n
        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)
        return 1;
    if (rows == 0)
        return 0;
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    const float *x = (const float *) in[0].data;
    const float *wt = (const float *) in[1].data;
    float *y = (float *) out[0].data;
    int vw = n % VEC == 0 && kf_aligned (x) && kf_aligned (wt) && kf_aligned (y);
    void (*kern) (const float *, const float *, float *, int64_t, int64_t, float, int);
    KF_PICK (kern, kf_rmsnorm_rows, kf_chunks (n, vw))
    kern<<<kf_grid (rows), BLOCK, 0, (cudaStream_t) ctx->stream>>> (x, wt, y, rows, n, eps, vw);
    KF_LAUNCH_CHECK ();
}
