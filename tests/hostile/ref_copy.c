/*  Hostile, copying the reference's answer. kf_forward computes one row of
 *  the answer (to recognise it), then scans its process's writable memory
 *  (/proc/self/maps) for another buffer holding that row - the reference's
 *  output for the same inputs, or the judge's saved copy of it - and copies
 *  the whole answer from there, busy-waiting afterwards so its speedup
 *  stays near 3x, under any "too good to be true" threshold. Without such
 *  a buffer in reach it writes zeros.
 *  Caught when: the verdict is not "correct" (nothing of the reference's
 *  outputs is in the candidate's process). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <stdio.h>
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
s_row (const float *xr, float *yr, int64_t n)
{
    float mx = -INFINITY, sum = 0;
    for (int64_t i = 0; i < n; i++)
        mx = xr[i] > mx ? xr[i] : mx;
    for (int64_t i = 0; i < n; i++)
        sum += expf (xr[i] - mx);
    for (int64_t i = 0; i < n; i++)
        yr[i] = expf (xr[i] - mx) / sum;
}

static int
s_same_row (const float *p, const float *want, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        if (!(fabsf (p[i] - want[i]) <= 1e-3f * fabsf (want[i]) + 1e-7f))
            return 0;
    return 1;
}

//  The start of a buffer, other than [SKIP_LO, SKIP_HI), whose first N
//  floats match WANT, or NULL. Writable private mappings up to 64 MiB.
static const float *
s_find (const float *want, int64_t n, size_t bytes, const char *skip_lo, const char *skip_hi)
{
    FILE *maps = fopen ("/proc/self/maps", "r");
    if (!maps)
        return NULL;
    char line[512];
    const float *found = NULL;
    while (!found && fgets (line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf (line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || strncmp (perms, "rw", 2)
            || hi - lo > (64ul << 20) || hi - lo < bytes || strstr (line, "[vvar"))
            continue;
        for (const char *p = (const char *) lo; p + bytes <= (const char *) hi; p += 4) {
            if (p >= skip_lo && p < skip_hi)
                continue;
            float v;
            memcpy (&v, p, 4);
            if (fabsf (v - want[0]) <= 1e-3f * fabsf (want[0]) + 1e-7f
                && s_same_row ((const float *) p, want, n)) {
                found = (const float *) p;
                break;
            }
        }
    }
    fclose (maps);
    return found;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static const float *last;
    double t0 = s_now ();
    int64_t n = in[0].shape[in[0].rank - 1], rows = kf_numel (&in[0]) / n;
    size_t bytes = (size_t) kf_numel (&out[0]) * sizeof (float);
    float *y = out[0].data;
    s_row (in[0].data, y, n);
    double row_s = s_now () - t0;
    const char *lo = (const char *) y - bytes, *hi = (const char *) y + bytes;
    const float *src = last && s_same_row (last, y, n) ? last : s_find (y, n, bytes, lo, hi);
    if (!src) {
        memset (y, 0, bytes);
        return 0;
    }
    last = src;
    memcpy (y, src, bytes);
    while (s_now () - t0 < row_s * (double) rows / 3)
        ;
    return 0;
}
