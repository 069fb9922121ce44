@BANNER@
@DEFINES@

@PRELUDE@

#define KF_twopass 0
#define KF_welford 1
#define KF_sumsq 2
#define KF_ALGO KF_CAT (KF_, ALGO)

static void
kf_layernorm_row (const float *restrict x, const float *restrict g,
                  const float *restrict b, float *restrict y, int64_t n,
                  float eps)
{
    float mean, var;
    int64_t i;
#if KF_ALGO == KF_twopass
    /* Mean first, then the variance of the deviations: two reads of the
     * row, no cancellation when the mean is large. */
    float s[LANES], q[LANES];
    for (int l = 0; l < LANES; l++)
        s[l] = q[l] = 0.0f;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++)
            s[l] += x[i + l];
    for (; i < n; i++)
        s[0] += x[i];
    float tot = 0.0f;
    for (int l = 0; l < LANES; l++)
        tot += s[l];
    mean = tot / (float) n;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            float d = x[i + l] - mean;
            q[l] += d * d;
        }
    for (; i < n; i++) {
        float d = x[i] - mean;
        q[0] += d * d;
    }
    float qq = 0.0f;
    for (int l = 0; l < LANES; l++)
        qq += q[l];
    var = qq / (float) n;
#elif KF_ALGO == KF_welford
    /* Welford: one read, stable, but a division per element; lanes are
     * merged with Chan's pairwise formula. */
    float c[LANES], mu[LANES], m2[LANES];
    for (int l = 0; l < LANES; l++)
        c[l] = mu[l] = m2[l] = 0.0f;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            float v = x[i + l];
            c[l] += 1.0f;
            float d = v - mu[l];
            mu[l] += d / c[l];
            m2[l] += d * (v - mu[l]);
        }
    for (; i < n; i++) {
        float v = x[i];
        c[0] += 1.0f;
        float d = v - mu[0];
        mu[0] += d / c[0];
        m2[0] += d * (v - mu[0]);
    }
    float cc = c[0], mm = mu[0], qq = m2[0];
    for (int l = 1; l < LANES; l++) {
        if (c[l] == 0.0f)
            continue;
        float nc = cc + c[l];
        float d = mu[l] - mm;
        mm += d * c[l] / nc;
        qq += m2[l] + d * d * cc * c[l] / nc;
        cc = nc;
    }
    mean = mm;
    var = qq / (float) n;
#else
    /* Sum and sum of squares in one read; double accumulators keep the
     * E[x^2] - E[x]^2 cancellation harmless for inputs of moderate mean. */
    double s[LANES], q[LANES];
    for (int l = 0; l < LANES; l++)
        s[l] = q[l] = 0.0;
    for (i = 0; i + LANES <= n; i += LANES)
        for (int l = 0; l < LANES; l++) {
            double v = x[i + l];
            s[l] += v;
            q[l] += v * v;
        }
    for (; i < n; i++) {
        double v = x[i];
        s[0] += v;
        q[0] += v * v;
    }
    double ts = 0.0, tq = 0.0;
    for (int l = 0; l < LANES; l++) {
        ts += s[l];
        tq += q[l];
    }
    double dm = ts / (double) n;
    double dv = tq / (double) n - dm * dm;
    mean = (float) dm;
    var = dv > 0.0 ? (float) dv : 0.0f;
#endif
    float sd = sqrtf (var + eps);
    float inv = 1.0f / sd;
    (void) inv;
    for (i = 0; i < n; i++)
        y[i] = KF_SCALE (x[i] - mean, sd, inv) * g[i] + b[i];
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
    float eps = (float) kf_scalar (ctx, "eps", 1e-5);
    const float *x = (const float *) in[0].data;
    const float *g = (const float *) in[1].data;
    const float *b = (const float *) in[2].data;
    float *y = (float *) out[0].data;
    for (int64_t r = 0; r < rows; r++)
        kf_layernorm_row (x + r * n, g, b, y + r * n, n, eps);
    return 0;
}
