/*  Reference RMS norm over the last dimension: y = x * weight / rms(x),
 *  rms = sqrt(mean(x^2) + eps). Accumulates in double so the reference
 *  is the more accurate side of any comparison. */
#include "kf_kernel.h"
#include <math.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 2 || n_out < 1 || in[0].dtype != KF_F32 || in[1].dtype != KF_F32
        || out[0].dtype != KF_F32 || in[0].rank < 1
        || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    int64_t n = in[0].shape[in[0].rank - 1];
    if (kf_numel (&in[1]) != n)
        return 1;
    int64_t rows = kf_numel (&in[0]) / n;
    double eps = kf_scalar (ctx, "eps", 1e-5);
    const float *x = in[0].data;
    const float *w = in[1].data;
    float *y = out[0].data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        double ss = 0;
        for (int64_t i = 0; i < n; i++)
            ss += (double) xr[i] * xr[i];
        double scale = 1.0 / sqrt (ss / n + eps);
        for (int64_t i = 0; i < n; i++)
            yr[i] = (float) (xr[i] * scale * w[i]);
    }
    return 0;
}
