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

#if RECIP
#define KF_SCALE(v, s, inv) ((v) * (inv))
#else
#define KF_SCALE(v, s, inv) ((v) / (s))
#endif
