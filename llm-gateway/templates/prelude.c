#include "kf_kernel.h"
#include <math.h>
#include <stdint.h>
#include <string.h>

/* Named parameter values (ALGO=online) become numbers through these, so
 * -DALGO=online on the compiler's command line works as well. */
#define KF_CAT_(a, b) a##b
#define KF_CAT(a, b) KF_CAT_ (a, b)

/* Rows of a contiguous f32 tensor: the last dimension is the row, every
 * dimension before it counts rows. Returns -1 for anything else. */
static inline int
kf_rows (const kf_tensor_t *t, int64_t *rows, int64_t *n)
{
    if (t->dtype != KF_F32 || t->rank < 1 || t->rank > KF_MAX_RANK)
        return -1;
    int64_t expect = 1;
    for (int d = t->rank - 1; d >= 0; d--) {
        if (t->shape[d] > 1 && t->strides[d] != expect)
            return -1;
        expect *= t->shape[d];
    }
    *n = t->shape[t->rank - 1];
    *rows = *n > 0 ? expect / *n : 0;
    return *n > 0 ? 0 : -1;
}

/* e^x for float without the C library: x = k ln2 + r with |r| <= ln2/2,
 * e^r by a degree-6 polynomial (relative error about 2e-7), 2^k built in
 * the exponent bits. Branch-free, so loops calling it vectorise. */
static inline float
kf_exp_poly (float x)
{
    x = x < -87.0f ? -87.0f : x;
    x = x > 88.0f ? 88.0f : x;
    /* Adding and removing 1.5 * 2^23 rounds to the nearest integer. */
    float k = (x * 1.44269504f + 12582912.0f) - 12582912.0f;
    float r = x - k * 0.693145752f;
    r = r - k * 1.42860682e-6f;
    float p = 1.0f / 720.0f;
    p = p * r + 1.0f / 120.0f;
    p = p * r + 1.0f / 24.0f;
    p = p * r + 1.0f / 6.0f;
    p = p * r + 0.5f;
    p = p * r + 1.0f;
    p = p * r + 1.0f;
    int32_t bits = ((int32_t) k + 127) << 23;
    float scale;
    memcpy (&scale, &bits, sizeof scale);
    return p * scale;
}

#if RECIP
#define KF_SCALE(v, s, inv) ((v) * (inv))
#else
#define KF_SCALE(v, s, inv) ((v) / (s))
#endif
