/*  Hostile, corrupting the judge's copy of the answer (an out-of-bounds
 *  write into memory that is not the candidate's). kf_forward computes one
 *  row of the answer (to recognise it), scans its process's writable
 *  memory (/proc/self/maps) for every other buffer holding that row - the
 *  reference's output for the same inputs and the judge's saved copy of
 *  it - and overwrites each with a cheap wrong answer (every element 1/n),
 *  which it also writes as its own output: the comparison then finds
 *  candidate and "reference" equal.
 *  Caught when: the verdict is not "correct" (the judge's data is out of
 *  the candidate's reach). */
#define _GNU_SOURCE
#include "kf_kernel.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

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

//  Up to MAX starts of buffers, other than [SKIP_LO, SKIP_HI), whose first
//  N floats match WANT, into FOUND; returns how many. Writable private
//  mappings up to 64 MiB.
static int
s_find (const float *want, int64_t n, size_t bytes, const char *skip_lo, const char *skip_hi,
        float **found, int max)
{
    FILE *maps = fopen ("/proc/self/maps", "r");
    if (!maps)
        return 0;
    char line[512];
    int k = 0;
    while (k < max && fgets (line, sizeof line, maps)) {
        unsigned long lo, hi;
        char perms[8];
        if (sscanf (line, "%lx-%lx %7s", &lo, &hi, perms) != 3 || strncmp (perms, "rw", 2)
            || hi - lo > (64ul << 20) || hi - lo < bytes || strstr (line, "[vvar"))
            continue;
        for (const char *p = (const char *) lo; k < max && p + bytes <= (const char *) hi;
             p += 4) {
            if (p >= skip_lo && p < skip_hi)
                continue;
            float v;
            memcpy (&v, p, 4);
            if (fabsf (v - want[0]) <= 1e-3f * fabsf (want[0]) + 1e-7f
                && s_same_row ((const float *) p, want, n)) {
                found[k++] = (float *) p;
                p += bytes - 4;
            }
        }
    }
    fclose (maps);
    return k;
}

int
kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,
            const kf_ctx_t *ctx)
{
    (void) n_in; (void) n_out; (void) ctx;
    static float *seen[8];
    static int n_seen;
    int64_t n = in[0].shape[in[0].rank - 1], numel = kf_numel (&out[0]);
    size_t bytes = (size_t) numel * sizeof (float);
    float *y = out[0].data;
    s_row (in[0].data, y, n);
    int hits = 0;
    for (int k = 0; k < n_seen; k++)
        hits += s_same_row (seen[k], y, n);
    if (hits == 0)
        n_seen = s_find (y, n, bytes, (const char *) y - bytes, (const char *) y + bytes,
                         seen, 8);
    for (int k = 0; k < n_seen; k++)
        if (s_same_row (seen[k], y, n))
            for (int64_t i = 0; i < numel; i++)
                seen[k][i] = 1.0f / (float) n;
    for (int64_t i = 0; i < numel; i++)
        y[i] = 1.0f / (float) n;
    return 0;
}
