@BANNER@
/* kf-launch: kf_reduce_rows(@X@, @Y@, cols(@X@)) global=rows(@X@) * WG local=WG */
@DEFINES@

@PRELUDE@

/* KF_REDUCE_MAX is fixed by the task (sum or max), not a tuning choice.
 * One work-group per row; work-item 0 writes the row's result. */
__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void
kf_reduce_rows (const __global float *restrict x, __global float *restrict y, int n)
{
    __local float part[WG];
    const __global float *row = x + (long) get_group_id (0) * n;
    float acc = KF_REDUCE_MAX ? -INFINITY : 0.0f;
    KF_ROW_LOOP (row, n,
        for (int k = 0; k < w; k++)
            acc = kf_op (acc, v[k], KF_REDUCE_MAX);)
    float r = kf_group_reduce (acc, KF_REDUCE_MAX, part);
    if (get_local_id (0) == 0)
        y[get_group_id (0)] = r;
}
