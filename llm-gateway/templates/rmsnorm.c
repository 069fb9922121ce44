@BANNER@
@DEFINES@

@PRELUDE@

/* ACC is the accumulator type itself: float keeps twice as many values
 * per vector register, double keeps more bits for long rows. */
static void
kf_rmsnorm_row (const float *restrict x, const float *restrict w,
                float *restrict y, int64_t n, float eps)
{
    ACC acc[LANES];
    int64_t i;
    for (int l = 0; l < LANES; l++)
        acc[l] = 0;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] += (ACC) x[i + l] * x[i + l];
    for (; i < n; i++)
        acc[0] += (ACC) x[i] * x[i];
    ACC ss = 0;
    for (int l = 0; l < LANES; l++)
        ss += acc[l];
    float rms = sqrtf ((float) (ss / (ACC) n) + eps);
    float inv = 1.0f / rms;
    (void) inv;
    for (i = 0; i < n; i++)
        y[i] = KF_SCALE (x[i], rms, inv) * w[i];
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
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    const float *x = (const float *) in[0].data;
    const float *w = (const float *) in[1].data;
    float *y = (float *) out[0].data;
    for (int64_t r = 0; r < rows; r++)
        kf_rmsnorm_row (x + r * n, w, y + r * n, n, eps);
    return 0;
}
