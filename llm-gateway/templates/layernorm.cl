@BANNER@
/* kf-launch: kf_layernorm_rows(@X@, @W@, @B@, @Y@, cols(@X@), @EPS@) global=rows(@X@) * WG local=WG */
@DEFINES@

@PRELUDE@

#define KF_twopass 0
#define KF_sumsq 1
#define KF_ALGO KF_CAT (KF_, ALGO)

/* One work-group per row. twopass: the mean, then the variance of the
 * deviations (two reads, no cancellation); sumsq: sum and sum of squares
 * in one read (cancels when the mean is large against the spread). */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
kf_layernorm_rows (const __global float *restrict x, const __global float *restrict gamma,
                   const __global float *restrict beta, __global float *restrict y, int n,
                   float eps)
{
    __local float part[WG];
    const __global float *row = x + (long) get_group_id (0) * n;
    __global float *out = y + (long) get_group_id (0) * n;
    float s = 0.0f, q = 0.0f;
#if KF_ALGO == KF_sumsq
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++) {
            s += v[k];
            q += v[k] * v[k];
        })
    float mean = kf_group_reduce (s, 0, part) / (float) n;
    float var = fmax (kf_group_reduce (q, 0, part) / (float) n - mean * mean, 0.0f);
#else
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            s += v[k];)
    float mean = kf_group_reduce (s, 0, part) / (float) n;
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            q += (v[k] - mean) * (v[k] - mean);)
    float var = kf_group_reduce (q, 0, part) / (float) n;
#endif
    float inv = rsqrt (var + eps);
    KF_ROW_LOOP (row, n,
        float g[VEC], b[VEC];
        if (w == VEC) {
            kf_load (gamma, i, g);
            kf_load (beta, i, b);
        }
        else {
            g[0] = gamma[i];
            b[0] = beta[i];
        }
        for (int k = 0; k < w; k++)
            v[k] = (v[k] - mean) * inv * g[k] + b[k];
        KF_ROW_STORE (out))
}
