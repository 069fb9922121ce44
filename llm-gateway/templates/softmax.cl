@BANNER@
/* kf-launch: kf_softmax_rows(@X@, @Y@, cols(@X@)) global=rows(@X@) * WG local=WG */
@DEFINES@

@PRELUDE@

#define KF_threepass 0
#define KF_online 1
#define KF_ALGO KF_CAT (KF_, ALGO)

/* One work-group per row. threepass: maximum, sum of exponentials,
 * write, three reads of the row; online: each work-item keeps a running
 * maximum and a sum rescaled when the maximum grows, so one read finds
 * both. */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
kf_softmax_rows (const __global float *restrict x, __global float *restrict y, int n)
{
    __local float part[WG];
    const __global float *row = x + (long) get_group_id (0) * n;
    __global float *out = y + (long) get_group_id (0) * n;
    float m = -INFINITY, s = 0.0f;
#if KF_ALGO == KF_online
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++) {
            if (v[k] > m) {
                s = s * exp (m - v[k]) + 1.0f;
                m = v[k];
            }
            else
                s += exp (v[k] - m);
        })
    float mx = kf_group_reduce (m, 1, part);
    float sum = kf_group_reduce (m == -INFINITY ? 0.0f : s * exp (m - mx), 0, part);
#else
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            m = fmax (m, v[k]);)
    float mx = kf_group_reduce (m, 1, part);
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            s += exp (v[k] - mx);)
    float sum = kf_group_reduce (s, 0, part);
#endif
    float inv = 1.0f / sum;
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            v[k] = exp (v[k] - mx) * inv;
        KF_ROW_STORE (out))
}
