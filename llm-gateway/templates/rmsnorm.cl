@BANNER@
/* kf-launch: kf_rmsnorm_rows(@X@, @W@, @Y@, cols(@X@), @EPS@) global=rows(@X@) * WG local=WG */
@DEFINES@

@PRELUDE@

/* One work-group per row: the sum of squares, then y = x * rsqrt(mean + eps) * weight. */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
kf_rmsnorm_rows (const __global float *restrict x, const __global float *restrict weight,
                 __global float *restrict y, int n, float eps)
{
    __local float part[WG];
    const __global float *row = x + (long) get_group_id (0) * n;
    __global float *out = y + (long) get_group_id (0) * n;
    float acc = 0.0f;
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            acc += v[k] * v[k];)
    float inv = rsqrt (kf_group_reduce (acc, 0, part) / (float) n + eps);
    KF_ROW_LOOP (row, n,
        float g[VEC];
        if (w == VEC)
            kf_load (weight, i, g);
        else
            g[0] = weight[i];
        for (int k = 0; k < w; k++)
            v[k] = v[k] * inv * g[k];
        KF_ROW_STORE (out))
}
