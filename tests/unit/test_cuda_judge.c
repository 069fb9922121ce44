/*  test_cuda_judge.c - the CUDA judge's device checks against the host's.
 *
 *  Everywhere: the exec worker carries the judge's kernels when it was
 *  built with nvcc (the build prints which).
 *
 *  Where a GPU answers: inputs drawn on the device are the host's inputs
 *  (uniform, constant and integer draws bit for bit; normal and heavy-
 *  tailed float draws within one unit in the last place, from the
 *  device's own log and cos), a comparison on the device finds the same
 *  matches, unwritten elements, NaN mismatches and worst errors as the
 *  host's over the same tensors, and a write to an input is counted.
 */
#include "../../exec-worker/kf_cuda_api.h"
#include "../../exec-worker/kf_cuda_judge.h"
#include "../../exec-worker/kf_eval_check.h"
#include "../kf_test.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const size_t kf_cuda_judge_image_size;

static kf_cuda_api_t *s_api;
static kf_cuda_judge_t *s_judge;

//  Device copy of N bytes at HOST.
static void *
s_up (const void *host, size_t n)
{
    void *d = NULL;
    CHECK (s_api->Malloc (&d, n ? n : 1) == 0);
    if (d && n)
        CHECK (s_api->Memcpy (d, host, n, KF_CUDA_H2D) == 0);
    return d;
}

//  Draws N elements of DTYPE from DIST on both sides; returns how many
//  differ and the largest difference in units of the last place (for
//  floats as ordered integers).
static size_t
s_fill_differs (const char *dist_json, int dtype, size_t esz, size_t n, uint64_t *max_ulp)
{
    json_t *dist = json_loads (dist_json, 0, NULL);
    unsigned char *host = malloc (n * esz), *back = malloc (n * esz);
    kf_eval_fill (dist, dtype, host, n, 77);
    kf_elem_dist_t d;
    kf_eval_dist (dist, &d);
    void *dev = NULL;
    CHECK (s_api->Malloc (&dev, n * esz) == 0);
    CHECK (kf_cuda_judge_fill (s_judge, &d, dtype, dev, n, 77) == 0);
    CHECK (s_api->Memcpy (back, dev, n * esz, KF_CUDA_D2H) == 0);
    size_t differ = 0;
    *max_ulp = 0;
    for (size_t i = 0; i < n; i++) {
        int64_t a = 0, b = 0;
        memcpy (&a, host + i * esz, esz);
        memcpy (&b, back + i * esz, esz);
        if (a != b) {
            differ++;
            uint64_t ulp = (uint64_t) (a > b ? a - b : b - a);
            if (ulp > *max_ulp)
                *max_ulp = ulp;
        }
    }
    s_api->Free (dev);
    free (host);
    free (back);
    json_decref (dist);
    return differ;
}

static void
s_fills (void)
{
    const size_t n = 1000003;       // odd: the last block is partial
    uint64_t ulp;
    CHECK (s_fill_differs ("{\"kind\":\"uniform\",\"low\":-3,\"high\":5}", KF_F32, 4, n, &ulp) == 0);
    CHECK (s_fill_differs ("{\"kind\":\"uniform\"}", KF_F64, 8, n, &ulp) == 0);
    CHECK (s_fill_differs ("{\"kind\":\"uniform\",\"low\":-100,\"high\":100}", KF_I32, 4, n, &ulp) == 0);
    CHECK (s_fill_differs ("{\"kind\":\"constant\",\"value\":2.5}", KF_BF16, 2, n, &ulp) == 0);
    CHECK (s_fill_differs ("{\"kind\":\"uniform\"}", KF_F16, 2, n, &ulp) == 0);
    size_t d = s_fill_differs ("{\"kind\":\"normal\",\"mean\":1,\"std\":2}", KF_F32, 4, n, &ulp);
    printf ("  normal f32: %zu of %zu elements differ from the host's, by at most %llu ulp\n",
            d, n, (unsigned long long) ulp);
    CHECK (d <= n / 1000 && ulp <= 1);
    d = s_fill_differs ("{\"kind\":\"heavy_tail\",\"dof\":3}", KF_F32, 4, n, &ulp);
    printf ("  heavy_tail f32: %zu of %zu elements differ, by at most %llu ulp\n",
            d, n, (unsigned long long) ulp);
    CHECK (d <= n / 1000 && ulp <= 1);
    d = s_fill_differs ("{\"kind\":\"normal\"}", KF_F16, 2, n, &ulp);
    CHECK (d <= n / 1000 && ulp <= 1);
}

//  One output compared on both sides: the verdict and every figure agree.
static void
s_compare_one (int dtype, size_t esz, size_t n, void (*spoil) (void *c, size_t n))
{
    json_t *dist = json_loads ("{\"kind\":\"normal\"}", 0, NULL);
    void *ref = malloc (n * esz), *cand = malloc (n * esz);
    kf_eval_fill (dist, dtype, ref, n, 5);
    memcpy (cand, ref, n * esz);
    spoil (cand, n);
    json_t *task = json_loads ("{\"tolerance\":{\"rtol\":0.01,\"atol\":0.001}}", 0, NULL);
    kf_eval_tol_t tol;
    kf_eval_worst_t wh, wd;
    kf_eval_tol_from_task (task, &tol, &wh);
    wd = wh;
    kf_eval_spec_t spec = { .name = "y", .dtype = dtype, .numel = n, .bytes = n * esz };
    char dh[512] = "", dd[512] = "";
    int vh = kf_eval_compare_output (&tol, &wh, &spec, cand, ref, "set 0", dh, sizeof dh);
    void *cd = s_up (cand, n * esz), *rd = s_up (ref, n * esz);
    kf_elem_part_t sum;
    CHECK (kf_cuda_judge_compare (s_judge, dtype, cd, rd, n, tol.rtol, kf_eval_atol (&tol, dtype),
                                  &sum) == 0);
    int vd = kf_eval_judge_output (&tol, &wd, &spec, &sum, "set 0", dd, sizeof dd);
    printf ("  host: %s\n  device: %s\n", vh ? dh : "passes", vd ? dd : "passes");
    CHECK (vh == vd);
    CHECK (strcmp (dh, dd) == 0);
    CHECK (wh.match_fraction == wd.match_fraction);
    CHECK (wh.max_abs == wd.max_abs && wh.max_rel == wd.max_rel);
    CHECK (wh.nonfinite_mismatch == wd.nonfinite_mismatch);
    CHECK (fabs (wh.cosine - wd.cosine) <= 1e-12);
    s_api->Free (cd);
    s_api->Free (rd);
    free (ref);
    free (cand);
    json_decref (task);
    json_decref (dist);
}

static void s_spoil_none (void *c, size_t n) { (void) c; (void) n; }

static void
s_spoil_f32 (void *c, size_t n)
{
    float *f = c;
    for (size_t i = 0; i < n; i += 97)
        f[i] *= 1.5f;                   // out of tolerance
    kf_eval_poison (KF_F32, f + n / 2, 1000);   // unwritten
    f[7] = NAN;                         // a NaN the reference lacks
}

static void
s_spoil_few (void *c, size_t n)
{
    float *f = c;
    for (size_t i = 0; i < n; i += 5000)
        f[i] += 1e-6f;                  // within tolerance
}

static void
s_spoil_f16 (void *c, size_t n)
{
    unsigned short *h = c;
    for (size_t i = 0; i < n; i += 3)
        h[i] ^= 0x0200;                 // one mantissa bit: out of tolerance
}

static void
s_differ (void)
{
    size_t bytes = (1 << 20) + 5;       // a tail of five bytes
    unsigned char *a = calloc (1, bytes);
    void *da = s_up (a, bytes), *db = s_up (a, bytes);
    uint64_t count = 99;
    CHECK (kf_cuda_judge_differ (s_judge, da, db, bytes, &count) == 0 && count == 0);
    unsigned char one = 1;
    CHECK (s_api->Memcpy ((char *) db + 4096, &one, 1, KF_CUDA_H2D) == 0);
    CHECK (s_api->Memcpy ((char *) db + 8192 + 3, &one, 1, KF_CUDA_H2D) == 0);
    CHECK (s_api->Memcpy ((char *) db + bytes - 1, &one, 1, KF_CUDA_H2D) == 0);
    CHECK (kf_cuda_judge_differ (s_judge, da, db, bytes, &count) == 0);
    printf ("  three bytes written: %llu units differ\n", (unsigned long long) count);
    CHECK (count == 3);
    s_api->Free (da);
    s_api->Free (db);
    free (a);
}

int
main (void)
{
    printf ("  judge image: %zu bytes%s\n", kf_cuda_judge_image_size,
            kf_cuda_judge_image_size ? "" : " (built without nvcc)");
    char why[512];
    s_api = kf_cuda_api_new (why, sizeof why);
    if (!s_api || kf_cuda_api_open_device (s_api, 0, why, sizeof why)) {
        printf ("  skipped the device checks: %s\n", why);
        return kf_test_done ("test_cuda_judge");
    }
    CHECK (kf_cuda_judge_image_size > 0);
    s_judge = kf_cuda_judge_new (s_api, why, sizeof why);
    CHECK (s_judge != NULL);
    if (!s_judge) {
        printf ("  judge: %s\n", why);
        return kf_test_done ("test_cuda_judge");
    }
    s_fills ();
    s_compare_one (KF_F32, 4, 3000017, s_spoil_none);
    s_compare_one (KF_F32, 4, 3000017, s_spoil_f32);
    s_compare_one (KF_F32, 4, 3000017, s_spoil_few);
    s_compare_one (KF_F16, 2, 100003, s_spoil_f16);
    s_differ ();
    kf_cuda_judge_destroy (&s_judge);
    return kf_test_done ("test_cuda_judge");
}
