@BANNER@
@DEFINES@

@PRELUDE@

@ROWS@
#define KF_threepass 0
#define KF_online 1
#define KF_ALGO KF_CAT (KF_, ALGO)

#if KF_ALGO == KF_online
/* Online softmax's merge: two (maximum, sum of exponentials relative to
 * it) pairs become one, each sum rescaled to the larger maximum. */
struct kf_maxsum {
    static __device__ __forceinline__ float id_a () { return -INFINITY; }
    static __device__ __forceinline__ float id_b () { return 0.0f; }
    static __device__ __forceinline__ void
    merge (float &m, float &s, float m2, float s2)
    {
        float mx = fmaxf (m, m2);
        s = (m == -INFINITY ? 0.0f : s * __expf (m - mx))
            + (m2 == -INFINITY ? 0.0f : s2 * __expf (m2 - mx));
        m = mx;
    }
};
#endif

/* threepass: the row maximum, then the sum of exponentials, then the
 * output, each its own reduction; online: a thread's maximum and sum are
 * found together and merged as pairs, one reduction. A row held in
 * registers is read once either way (online then keeps the exponentials
 * relative to the thread's own maximum and rescales them once); the
 * loops read it two or three times. */
template <int C>
__global__ void __launch_bounds__ (BLOCK)
kf_softmax_rows (const float *__restrict__ x, float *__restrict__ y, int64_t rows,
                 int64_t n, int vw)
{
    KF_FOR_ROWS (rows) {
        const float *row = x + r * n;
        float *out = y + r * n;
        if (C > 0) {
            float v[(C > 0 ? C : 1) * VEC];
#pragma unroll
            for (int c = 0; c < C; c++) {
                if (KF_CHUNK (c) < n)
                    kf_load_last (row + KF_CHUNK (c), v + c * VEC);
                else
                    for (int k = 0; k < VEC; k++)
                        v[c * VEC + k] = -INFINITY;
            }
            float m = -INFINITY, s = 0.0f;
#pragma unroll
            for (int k = 0; k < C * VEC; k++)
                m = fmaxf (m, v[k]);
#if KF_ALGO == KF_online
#pragma unroll
            for (int k = 0; k < C * VEC; k++) {
                v[k] = __expf (v[k] - m);
                s += v[k];
            }
            float mx = m;
            kf_row_reduce2<kf_maxsum> (mx, s);
            float scale = m == -INFINITY ? 0.0f : __expf (m - mx) / s;
#else
            float mx = kf_row_reduce<true> (m);
#pragma unroll
            for (int k = 0; k < C * VEC; k++) {
                v[k] = __expf (v[k] - mx);
                s += v[k];
            }
            float scale = 1.0f / kf_row_reduce<false> (s);
#endif
#pragma unroll
            for (int c = 0; c < C; c++) {
                if (KF_CHUNK (c) < n) {
                    for (int k = 0; k < VEC; k++)
                        v[c * VEC + k] *= scale;
                    kf_store_last (out + KF_CHUNK (c), v + c * VEC);
                }
            }
            continue;
        }
        float m = -INFINITY, s = 0.0f;
#if KF_ALGO == KF_online
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];
            for (int k = 0; k < w; k++) {
                if (u[k] > m) {
                    s = s * __expf (m - u[k]) + 1.0f;
                    m = u[k];
                }
                else
                    s += __expf (u[k] - m);
            }
        })
        float mx = m;
        kf_row_reduce2<kf_maxsum> (mx, s);
        float inv = 1.0f / s;
#else
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];
            for (int k = 0; k < w; k++)
                m = fmaxf (m, u[k]);
        })
        float mx = kf_row_reduce<true> (m);
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];
            for (int k = 0; k < w; k++)
                s += __expf (u[k] - mx);
        })
        float inv = 1.0f / kf_row_reduce<false> (s);
#endif
        KF_ROW_FOR (n, vw, {
            float u[VEC];
            if (w == VEC) kf_load_last (row + i, u); else u[0] = KF_LDS (row + i);
            for (int k = 0; k < w; k++)
                u[k] = __expf (u[k] - mx) * inv;
            if (w == VEC) kf_store_last (out + i, u); else KF_STS (out + i, u[0]);
        })
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    int64_t rows, n, out_rows, out_n;
    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)
        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)
        return 1;
    if (rows == 0)
        return 0;
    const float *x = (const float *) in[0].data;
    float *y = (float *) out[0].data;
    int vw = n % VEC == 0 && kf_aligned (x) && kf_aligned (y);
    void (*kern) (const float *, float *, int64_t, int64_t, int);
    KF_PICK (kern, kf_softmax_rows, kf_chunks (n, vw))
    kern<<<kf_grid (rows), BLOCK, 0, (cudaStream_t) ctx->stream>>> (x, y, rows, n, vw);
    KF_LAUNCH_CHECK ();
}
