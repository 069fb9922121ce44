@BANNER@
@DEFINES@

@PRELUDE@
@EXP_POLY@

#define KF_twopass 0
#define KF_online 1
#define KF_threepass 2
#define KF_libm 0
#define KF_poly 1
#define KF_ALGO KF_CAT (KF_, ALGO)
#define KF_EXP KF_CAT (KF_, EXP)

static inline float
kf_exp (float x)
{
#if KF_EXP == KF_poly
    return kf_exp_poly (x);
#else
    return expf (x);
#endif
}

/* One row. LANES independent accumulators break the dependency chain of
 * the reductions, which is what lets the compiler use vector registers
 * without being allowed to reassociate float additions. */
static void
kf_softmax_row (const float *restrict x, float *restrict y, int64_t n)
{
    float mx = -INFINITY, sum = 0.0f;
    int64_t i;
#if KF_ALGO == KF_online
    /* Online: one read of the row finds maximum and sum together; a lane
     * rescales its partial sum whenever its maximum grows. */
    float m[LANES], s[LANES];
    for (int l = 0; l < LANES; l++) {
        m[l] = -INFINITY;
        s[l] = 0.0f;
    }
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            float v = x[i + l];
            if (v > m[l]) {
                s[l] = s[l] * kf_exp (m[l] - v) + 1.0f;
                m[l] = v;
            }
            else
                s[l] += kf_exp (v - m[l]);
        }
    for (; i < n; i++) {
        float v = x[i];
        if (v > m[0]) {
            s[0] = s[0] * kf_exp (m[0] - v) + 1.0f;
            m[0] = v;
        }
        else
            s[0] += kf_exp (v - m[0]);
    }
    for (int l = 0; l < LANES; l++)
        mx = m[l] > mx ? m[l] : mx;
    for (int l = 0; l < LANES; l++)
        if (s[l] > 0.0f)
            sum += s[l] * kf_exp (m[l] - mx);
#else
    float mv[LANES];
    for (int l = 0; l < LANES; l++)
        mv[l] = -INFINITY;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            mv[l] = x[i + l] > mv[l] ? x[i + l] : mv[l];
    for (; i < n; i++)
        mv[0] = x[i] > mv[0] ? x[i] : mv[0];
    for (int l = 0; l < LANES; l++)
        mx = mv[l] > mx ? mv[l] : mx;
    float sv[LANES];
    for (int l = 0; l < LANES; l++)
        sv[l] = 0.0f;
#if KF_ALGO == KF_twopass
    /* Two passes: the exponentials are stored in Y on the way and only
     * scaled afterwards, so each is computed once. */
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            float e = kf_exp (x[i + l] - mx);
            y[i + l] = e;
            sv[l] += e;
        }
    for (; i < n; i++) {
        float e = kf_exp (x[i] - mx);
        y[i] = e;
        sv[0] += e;
    }
#else
    /* Three passes: the sum pass writes nothing and the last pass
     * recomputes the exponentials, trading arithmetic for stores. */
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            sv[l] += kf_exp (x[i + l] - mx);
    for (; i < n; i++)
        sv[0] += kf_exp (x[i] - mx);
#endif
    for (int l = 0; l < LANES; l++)
        sum += sv[l];
#endif
    float inv = 1.0f / sum;
    (void) inv;
#if KF_ALGO == KF_twopass
    for (i = 0; i < n; i++)
        y[i] = KF_SCALE (y[i], sum, inv);
#else
    for (i = 0; i < n; i++)
        y[i] = KF_SCALE (kf_exp (x[i] - mx), sum, inv);
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
    const float *x = (const float *) in[0].data;
    float *y = (float *) out[0].data;
    for (int64_t r = 0; r < rows; r++)
        kf_softmax_row (x + r * n, y + r * n, n);
    return 0;
}
