@BANNER@
@DEFINES@

@PRELUDE@
@EXP_POLY@

#define KF_libm_tanh 0
#define KF_libm_exp 1
#define KF_poly_exp 2
#define KF_IMPL KF_CAT (KF_, IMPL)

/* GELU, tanh form. 0.5 x (1 + tanh(u)) equals x / (1 + e^(-2u)), which
 * needs one exponential instead of tanh and has no cancellation for
 * large negative x. */
static inline float
kf_gelu (float v)
{
    float u = 0.7978845608f * (v + 0.044715f * v * v * v);
#if KF_IMPL == KF_libm_tanh
    return 0.5f * v * (1.0f + tanhf (u));
#elif KF_IMPL == KF_libm_exp
    return v / (1.0f + expf (-2.0f * u));
#else
    return v / (1.0f + kf_exp_poly (-2.0f * u));
#endif
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n;
    (void) ctx;
    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)
        return 1;
    const float *restrict x = (const float *) in[0].data;
    float *restrict y = (float *) out[0].data;
    int64_t total = rows * n, i;
    for (i = 0; i + UNROLL <= total; i += UNROLL)
        for (int u = 0; u < UNROLL; u++)
            y[i + u] = kf_gelu (x[i + u]);
    for (; i < total; i++)
        y[i] = kf_gelu (x[i]);
    return 0;
}
