/*  Reference row sum over the last dimension, accumulated in double so
 *  the reference is the accurate side of the comparison. */
#include "kf_kernel.h"

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) ctx;
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || in[0].rank < 1)
        return 1;
    int64_t n = in[0].shape[in[0].rank - 1];
    int64_t rows = kf_numel (&in[0]) / n;
    if (kf_numel (&out[0]) != rows)
        return 1;
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t r = 0; r < rows; r++) {
        double s = 0;
        for (int64_t i = 0; i < n; i++)
            s += x[r * n + i];
        y[r] = (float) s;
    }
    return 0;
}
