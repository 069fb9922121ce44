/*  Reference softmax over the last dimension, in float, the textbook three
 *  passes: row maximum, sum of shifted exponentials, normalise. */
#include "kf_kernel.h"
#include <math.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) ctx;
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || in[0].rank < 1 || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    int64_t n = in[0].shape[in[0].rank - 1];
    int64_t rows = kf_numel (&in[0]) / n;
    const float *x = in[0].data;
    float *y = out[0].data;
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            if (xr[i] > mx)
                mx = xr[i];
        double sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += expf (xr[i] - mx);
        for (int64_t i = 0; i < n; i++)
            yr[i] = (float) (expf (xr[i] - mx) / sum);
    }
    return 0;
}
