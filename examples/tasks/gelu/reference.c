/*  Reference GELU, tanh form, elementwise in float with the C library's
 *  tanhf. */
#include "kf_kernel.h"
#include <math.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) ctx;
    if (n_in < 1 || n_out < 1 || in[0].dtype != KF_F32 || out[0].dtype != KF_F32
        || kf_numel (&in[0]) != kf_numel (&out[0]))
        return 1;
    int64_t n = kf_numel (&in[0]);
    const float *x = in[0].data;
    float *y = out[0].data;
    const float c = 0.7978845608f;     /* sqrt(2/pi) */
    for (int64_t i = 0; i < n; i++) {
        float v = x[i];
        y[i] = 0.5f * v * (1.0f + tanhf (c * (v + 0.044715f * v * v * v)));
    }
    return 0;
}
