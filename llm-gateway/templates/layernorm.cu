@BANNER@
@DEFINES@

@PRELUDE@

@ROWS@
#define KF_twopass 0
#define KF_sumsq 1
#define KF_ALGO KF_CAT (KF_, ALGO)

/* twopass: the mean, then the variance of the deviations, two
 * reductions; sumsq: the sum and the sum of squares of the deviations
 * from the row's first element, reduced together in one round (the shift
 * keeps a large mean from cancelling the variance away). A row held in
 * registers is read once either way; the loops read it two or three
 * times. gamma and beta, the same for every row and so found in the
 * caches, are fetched with the row only when a thread holds at most 4
 * floats of it: more registers would cost rows in flight. */
template <int C>
__global__ void __launch_bounds__ (BLOCK)
kf_layernorm_rows (const float *__restrict__ x, const float *__restrict__ g,
                   const float *__restrict__ b, float *__restrict__ y, int64_t rows,
                   int64_t n, float eps, int vw)
{
    KF_FOR_ROWS (rows) {
        const float *row = x + r * n;
        float *out = y + r * n;
        float mean, var;
#if KF_ALGO == KF_sumsq
        const float shift = row[0];
#endif
        if (C > 0) {
            const bool early = C * VEC <= 4;
            float v[(C > 0 ? C : 1) * VEC];
            float ge[(C > 0 && C * VEC <= 4 ? C : 1) * VEC];
            float be[(C > 0 && C * VEC <= 4 ? C : 1) * VEC];
#pragma unroll
            for (int c = 0; c < C; c++) {
                if (KF_CHUNK (c) < n) {
                    kf_load_last (row + KF_CHUNK (c), v + c * VEC);
                    if (early) {
                        kf_load (g + KF_CHUNK (c), ge + c * VEC);
                        kf_load (b + KF_CHUNK (c), be + c * VEC);
                    }
                }
            }
#if KF_ALGO == KF_sumsq
            float s = 0.0f, q = 0.0f;
#pragma unroll
            for (int c = 0; c < C; c++)
                if (KF_CHUNK (c) < n)
                    for (int k = 0; k < VEC; k++) {
                        float d = v[c * VEC + k] - shift;
                        s += d;
                        q += d * d;
                    }
            kf_row_reduce2<kf_sum2> (s, q);
            float dm = s / (float) n;
            mean = shift + dm;
            var = fmaxf (q / (float) n - dm * dm, 0.0f);
#else
            float s = 0.0f, q = 0.0f;
#pragma unroll
            for (int c = 0; c < C; c++)
                if (KF_CHUNK (c) < n)
                    for (int k = 0; k < VEC; k++)
                        s += v[c * VEC + k];
            mean = kf_row_reduce<false> (s) / (float) n;
#pragma unroll
            for (int c = 0; c < C; c++)
                if (KF_CHUNK (c) < n)
                    for (int k = 0; k < VEC; k++)
                        q += (v[c * VEC + k] - mean) * (v[c * VEC + k] - mean);
            var = kf_row_reduce<false> (q) / (float) n;
#endif
            float inv = rsqrtf (var + eps);
#pragma unroll
            for (int c = 0; c < C; c++) {
                if (KF_CHUNK (c) < n) {
                    float gg[VEC], bb[VEC];
                    if (early)
                        for (int k = 0; k < VEC; k++) {
                            gg[k] = ge[c * VEC + k];
                            bb[k] = be[c * VEC + k];
                        }
                    else {
                        kf_load (g + KF_CHUNK (c), gg);
                        kf_load (b + KF_CHUNK (c), bb);
                    }
                    for (int k = 0; k < VEC; k++)
                        gg[k] = (v[c * VEC + k] - mean) * inv * gg[k] + bb[k];
                    kf_store_last (out + KF_CHUNK (c), gg);
                }
            }
            continue;
        }
        float s = 0.0f, q = 0.0f;
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];
            for (int k = 0; k < w; k++) {
#if KF_ALGO == KF_sumsq
                float d = u[k] - shift;
                s += d;
                q += d * d;
#else
                s += u[k];
#endif
            }
        })
#if KF_ALGO == KF_sumsq
        kf_row_reduce2<kf_sum2> (s, q);
        float dm = s / (float) n;
        mean = shift + dm;
        var = fmaxf (q / (float) n - dm * dm, 0.0f);
#else
        mean = kf_row_reduce<false> (s) / (float) n;
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];
            for (int k = 0; k < w; k++)
                q += (u[k] - mean) * (u[k] - mean);
        })
        var = kf_row_reduce<false> (q) / (float) n;
#endif
        float inv = rsqrtf (var + eps);
        KF_ROW_FOR (n, vw, {
            float u[VEC], gg[VEC], bb[VEC];
            if (w == VEC) { kf_load_last (row + i, u); kf_load (g + i, gg); kf_load (b + i, bb); }
            else { u[0] = KF_LDS (row + i); gg[0] = g[i]; bb[0] = b[i]; }
            for (int k = 0; k < w; k++)
                u[k] = (u[k] - mean) * inv * gg[k] + bb[k];
            if (w == VEC) kf_store_last (out + i, u); else KF_STS (out + i, u[0]);
        })
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n, g_rows, g_n, b_rows, b_n;
    if (n_in < 3 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&in[1], &g_rows, &g_n) || g_rows * g_n != n
        || kf_rows (&in[2], &b_rows, &b_n) || b_rows * b_n != n
        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)
        return 1;
    if (rows == 0)
        return 0;
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    const float *x = (const float *) in[0].data;
    const float *g = (const float *) in[1].data;
    const float *b = (const float *) in[2].data;
    float *y = (float *) out[0].data;
    int vw = n % VEC == 0 && kf_aligned (x) && kf_aligned (g) && kf_aligned (b)
             && kf_aligned (y);
    void (*kern) (const float *, const float *, const float *, float *, int64_t, int64_t,
                  float, int);
    KF_PICK (kern, kf_layernorm_rows, kf_chunks (n, vw))
    kern<<<kf_grid (rows), BLOCK, 0, (cudaStream_t) ctx->stream>>> (x, g, b, y, rows, n, eps, vw);
    KF_LAUNCH_CHECK ();
}
