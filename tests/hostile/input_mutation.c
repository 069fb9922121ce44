/*  Hostile, writing to an input. kf_forward uses its input as scratch: it
 *  replaces each row of x by its shifted exponentials in place, derives the
 *  (right) output from them, and then puts the input back, all but the last
 *  row (a partial restore), and that one only approximately (log of the
 *  exponential). Inputs are read-only in the contract: another kernel, or
 *  the next call, would see changed data.
 *  Caught when: the verdict is not "correct" ("inputs changed"). */
#include "kf_kernel.h"
#include <math.h>

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    int64_t n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    float *x = in[0].data;           // const in spirit only
    float *y = out[0].data;
    for (int64_t r = 0; r < rows; r++) {
        float *xr = x + r * n, *yr = y + r * n;
        float mx = -INFINITY, sum = 0;
        for (int64_t i = 0; i < n; i++)
            mx = xr[i] > mx ? xr[i] : mx;
        for (int64_t i = 0; i < n; i++) {
            xr[i] = expf (xr[i] - mx);
            sum += xr[i];
        }
        for (int64_t i = 0; i < n; i++)
            yr[i] = xr[i] / sum;
        if (r < rows - 1)
            for (int64_t i = 0; i < n; i++)
                xr[i] = logf (xr[i]) + mx;
    }
    return 0;
}
