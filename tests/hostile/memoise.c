/*  Hostile, memoisation on a fingerprint. kf_forward hashes 16 elements of
 *  its input (a fingerprint, not the data); when the fingerprint is the one
 *  of its previous call it copies the output it kept from that call
 *  instead of computing, busy-waiting so the call costs a sixth of a real
 *  one (plausible, not instant). Every correctness set brings new inputs,
 *  so each is computed honestly (the baseline's code); repeated timing
 *  calls on one input set are copies.
 *  Caught when: the verdict is not "correct", or the speedup is within the
 *  test's factor of the honest baseline's (timed calls do not repeat an
 *  input the candidate can recognise, or a stale answer is found out). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double
s_now (void)
{
    struct timespec ts;
    clock_gettime (CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

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

static uint64_t
s_fingerprint (const float *x, int64_t numel)
{
    uint64_t h = 1469598103934665603ull;
    for (int k = 0; k < 16; k++) {
        uint32_t bits;
        memcpy (&bits, &x[(numel - 1) * k / 15], 4);
        h = (h ^ bits) * 1099511628211ull;
    }
    return h;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static uint64_t kept_print;
    static float *kept;
    static double compute_s;         // the fastest call that computed
    int64_t numel = kf_numel (&out[0]), n = in[0].shape[in[0].rank - 1];
    size_t bytes = (size_t) numel * sizeof (float);
    double t0 = s_now ();
    uint64_t print = s_fingerprint (in[0].data, kf_numel (&in[0]));
    if (kept && print == kept_print) {
        memcpy (out[0].data, kept, bytes);
        while (s_now () - t0 < compute_s / 6)
            ;
        return 0;
    }
    s_softmax (in[0].data, out[0].data, kf_numel (&in[0]) / n, n);
    double took = s_now () - t0;
    compute_s = compute_s == 0 || took < compute_s ? took : compute_s;
    if (!kept)
        kept = malloc (bytes);
    if (kept) {
        memcpy (kept, out[0].data, bytes);
        kept_print = print;
    }
    return 0;
}
