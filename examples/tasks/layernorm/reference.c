/*  Reference layer norm over the last dimension, two passes in double:
 *  mean, then the biased variance of the deviations. */
#include "kf_kernel.h"
#include <math.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    if (n_in < 3 || n_out < 1 || in[0].dtype != KF_F32 || in[1].dtype != KF_F32
        || in[2].dtype != KF_F32 || out[0].dtype != KF_F32 || in[0].rank < 1
        || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    int64_t n = in[0].shape[in[0].rank - 1];
    if (kf_numel (&in[1]) != n || kf_numel (&in[2]) != n)
        return 1;
    int64_t rows = kf_numel (&in[0]) / n;
    double eps = kf_scalar (ctx, "eps", 1e-5);
    const float *x = in[0].data;
    const float *g = in[1].data;
    const float *b = in[2].data;
    float *y = out[0].data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        double mean = 0;
        for (int64_t i = 0; i < n; i++)
            mean += xr[i];
        mean /= n;
        double var = 0;
        for (int64_t i = 0; i < n; i++)
            var += (xr[i] - mean) * (xr[i] - mean);
        var /= n;
        double inv = 1.0 / sqrt (var + eps);
        for (int64_t i = 0; i < n; i++)
            yr[i] = (float) ((xr[i] - mean) * inv * g[i] + b[i]);
    }
    return 0;
}
