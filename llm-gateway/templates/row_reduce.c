@BANNER@
@DEFINES@

@PRELUDE@

/* KF_REDUCE_MAX is fixed by the task (sum or max), not a tuning choice. */
#if KF_REDUCE_MAX
#define KF_ACC float
#define KF_INIT (-INFINITY)
#define KF_STEP(a, v) ((v) > (a) ? (v) : (a))
#else
#define KF_ACC ACC
#define KF_INIT 0
#define KF_STEP(a, v) ((a) + (KF_ACC) (v))
#endif

/* LANES partial results per row: the only way to get vector code for a
 * float reduction from a compiler that must not reorder additions. */
static float
kf_reduce_row (const float *restrict x, int64_t n)
{
    KF_ACC acc[LANES];
    int64_t i;
    for (int l = 0; l < LANES; l++)
        acc[l] = KF_INIT;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            acc[l] = KF_STEP (acc[l], x[i + l]);
    for (; i < n; i++)
        acc[0] = KF_STEP (acc[0], x[i]);
    KF_ACC r = acc[0];
    for (int l = 1; l < LANES; l++)
        r = KF_STEP (r, acc[l]);
    return (float) r;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n;
    (void) ctx;
    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&out[0], &out_rows, &out_n) || out_rows * out_n != rows)
        return 1;
    const float *x = (const float *) in[0].data;
    float *y = (float *) out[0].data;
    for (int64_t r = 0; r < rows; r++)
        y[r] = kf_reduce_row (x + r * n, n);
    return 0;
}
