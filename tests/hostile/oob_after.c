/*  Hostile, an out-of-bounds write past the end. kf_forward computes
 *  the right answer (the baseline's code) and also writes one element just
 *  past the end of its output buffer (y[numel]), where a neighbour's data
 *  could live.
 *  Caught when: the verdict is not "correct" (crashed: "out-of-bounds
 *  access"). */
#include "kf_kernel.h"
#include <math.h>

static void
s_softmax (const float *x, float *y, int64_t rows, int64_t n)
{
    for (int64_t r = 0; r < rows; r++) {
        const float *xr = x + r * n;
        float *yr = y + r * n;
        float mx = -INFINITY;
        for (int64_t i = 0; i < n; i++)
            mx = xr[i] > mx ? xr[i] : mx;
        float sum = 0;
        for (int64_t i = 0; i < n; i++)
            sum += expf (xr[i] - mx);
        for (int64_t i = 0; i < n; i++)
            yr[i] = expf (xr[i] - mx) / sum;
    }
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    int64_t n = in[0].shape[in[0].rank - 1];
    float *y = out[0].data;
    s_softmax (in[0].data, y, kf_numel (&in[0]) / n, n);
    ((volatile float *) y)[kf_numel (&out[0])] = 0.5f;
    return 0;
}
