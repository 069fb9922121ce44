/*  kf_eval_elem.h - the rules for one element: how an input is drawn, how
 *  an output is read, what counts as unwritten, and how a candidate's
 *  value is compared with the reference's.
 *
 *  Compiled twice: as C into the host's checks (kf_eval_check.c) and as
 *  CUDA into the device judge (kf_cuda_judge.cu), so the inputs drawn on
 *  a GPU are the host's inputs (the same counter-based sequence; the
 *  transcendental functions of a normal draw may differ in their last
 *  bit, so float tensors agree exactly for uniform and constant draws and
 *  almost always for normal ones) and "within tolerance" means one thing
 *  wherever it is computed.
 *
 *  Element I of a tensor starts at state SEED + I * DRAWS * golden of
 *  splitmix64, so any element can be drawn without drawing those before
 *  it: the fill runs in blocks on host threads, or a thread an element
 *  on the device.
 */
#ifndef KF_EVAL_ELEM_H
#define KF_EVAL_ELEM_H

#include "kf_kernel.h"
#include "kf_splitmix.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#ifdef __CUDACC__
#define KF_ELEM static __host__ __device__ __forceinline__
#else
#define KF_ELEM static inline
#endif

#define KF_ELEM_GOLDEN KF_SPLITMIX_GOLDEN

//  A distribution, read from its JSON once (kf_eval_dist) rather than per
//  element. Plain numbers only: it is passed to a device kernel by value.
typedef enum { KF_DIST_NORMAL, KF_DIST_UNIFORM, KF_DIST_CONSTANT, KF_DIST_HEAVY } kf_dist_kind_t;

typedef struct {
    int kind;                // kf_dist_kind_t
    int dof;                 // heavy_tail: degrees of freedom, 1..64
    double a, b;             // mean, std | low, high | value | scale
    uint64_t draws;          // generator draws per element
} kf_elem_dist_t;

//  What a comparison found over some elements; parts are merged by adding
//  counts and sums and taking maxima.
typedef struct {
    uint64_t matched, unwritten, nonfinite;
    double dot, nr, nc, max_abs, max_rel;
} kf_elem_part_t;

KF_ELEM double
kf_elem_uniform01 (uint64_t *state)
{
    return ((double) (kf_splitmix_next (state) >> 11) + 0.5) * (1.0 / 9007199254740992.0);
}

KF_ELEM double
kf_elem_normal (uint64_t *state)
{
    double u = kf_elem_uniform01 (state), v = kf_elem_uniform01 (state);
    return sqrt (-2 * log (u)) * cos (6.283185307179586476925 * v);
}

//  Element I of a tensor drawn from D with SEED.
KF_ELEM double
kf_elem_draw (const kf_elem_dist_t *d, uint64_t seed, uint64_t i)
{
    uint64_t st = seed + i * d->draws * KF_ELEM_GOLDEN;
    if (d->kind == KF_DIST_UNIFORM)
        return d->a + (d->b - d->a) * kf_elem_uniform01 (&st);
    if (d->kind == KF_DIST_CONSTANT)
        return d->a;
    if (d->kind == KF_DIST_HEAVY) {
        //  Student's t with `dof` degrees of freedom: rare huge values
        //  that expose overflow and cancellation.
        double chi = 0;
        for (int k = 0; k < d->dof; k++) {
            double z = kf_elem_normal (&st);
            chi += z * z;
        }
        return d->a * kf_elem_normal (&st) / sqrt (chi / d->dof);
    }
    return d->a + d->b * kf_elem_normal (&st);
}

KF_ELEM float
kf_elem_half_to_float (uint16_t h)
{
    int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0)
        v = ldexpf ((float) man, -24);
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf ((float) (man | 1024), exp - 25);
    return sign ? -v : v;
}

KF_ELEM uint16_t
kf_elem_float_to_half (float f)
{
    uint32_t x;
    memcpy (&x, &f, 4);
    uint16_t sign = (x >> 16) & 0x8000;
    if (isnan (f))
        return sign | 0x7e00;
    float a = fabsf (f);
    if (a >= 65520.0f)
        return sign | 0x7c00;
    if (a < 6.103515625e-05f)       // subnormal: units of 2^-24
        return sign | (uint16_t) lrintf (a * 16777216.0f);
    int e;
    float m = frexpf (a, &e);       // a = m * 2^e, m in [0.5, 1)
    uint32_t man = (uint32_t) lrintf ((m * 2 - 1) * 1024);
    int exp = e - 1 + 15;
    if (man == 1024) {
        man = 0;
        exp++;
    }
    if (exp >= 31)
        return sign | 0x7c00;
    return sign | (uint16_t) (exp << 10) | (uint16_t) man;
}

KF_ELEM double
kf_elem_get (int dtype, const void *p, uint64_t i)
{
    switch (dtype) {
        case KF_F32: return ((const float *) p)[i];
        case KF_F64: return ((const double *) p)[i];
        case KF_F16: return kf_elem_half_to_float (((const uint16_t *) p)[i]);
        case KF_BF16: {
            uint32_t x = (uint32_t) ((const uint16_t *) p)[i] << 16;
            float f;
            memcpy (&f, &x, 4);
            return f;
        }
        case KF_I32: return ((const int32_t *) p)[i];
        case KF_I64: return (double) ((const int64_t *) p)[i];
    }
    return 0;
}

KF_ELEM void
kf_elem_set (int dtype, void *p, uint64_t i, double v)
{
    switch (dtype) {
        case KF_F32: ((float *) p)[i] = (float) v; break;
        case KF_F64: ((double *) p)[i] = v; break;
        case KF_F16: ((uint16_t *) p)[i] = kf_elem_float_to_half ((float) v); break;
        case KF_BF16: {
            float f = (float) v;
            uint32_t x;
            memcpy (&x, &f, 4);
            x += 0x7fff + ((x >> 16) & 1);     // round to nearest even
            ((uint16_t *) p)[i] = (uint16_t) (x >> 16);
            break;
        }
        case KF_I32: ((int32_t *) p)[i] = (int32_t) llround (v); break;
        case KF_I64: ((int64_t *) p)[i] = (int64_t) llround (v); break;
    }
}

//  Poison: a quiet NaN with a distinctive payload for floats (no kernel
//  computes it by accident), a fixed odd pattern for integers.
KF_ELEM int
kf_elem_is_poison (int dtype, const void *p, uint64_t i)
{
    switch (dtype) {
        case KF_F32: return ((const uint32_t *) p)[i] == 0x7fc0deadU;
        case KF_F64: return ((const uint64_t *) p)[i] == 0x7ff8deaddeaddeadULL;
        case KF_F16: return ((const uint16_t *) p)[i] == 0x7ead;
        case KF_BF16: return ((const uint16_t *) p)[i] == 0x7fad;
        case KF_I32: return ((const uint32_t *) p)[i] == 0xdeadbeefU;
        case KF_I64: return ((const uint64_t *) p)[i] == 0xdeadbeefdeadbeefULL;
    }
    return 0;
}

//  One element of a written output: candidate CV against reference RV.
KF_ELEM void
kf_elem_compare (kf_elem_part_t *p, double cv, double rv, double rtol, double atol)
{
    if (!isfinite (rv) || !isfinite (cv)) {
        int same = (isnan (rv) && isnan (cv)) || (isinf (rv) && cv == rv);
        if (same)
            p->matched++;
        else
            p->nonfinite++;
        return;
    }
    double abs_err = fabs (cv - rv);
    double rel_err = rv != 0 ? abs_err / fabs (rv) : (abs_err != 0 ? INFINITY : 0);
    if (abs_err > p->max_abs)
        p->max_abs = abs_err;
    if (rel_err > p->max_rel)
        p->max_rel = rel_err;
    if (rel_err < rtol || abs_err <= atol)
        p->matched++;
    p->dot += cv * rv;
    p->nr += rv * rv;
    p->nc += cv * cv;
}

//  Element I of output C against REF: unwritten (poison where the
//  reference has a value) or compared.
KF_ELEM void
kf_elem_check (kf_elem_part_t *p, int dtype, const void *c, const void *ref, uint64_t i,
               double rtol, double atol)
{
    if (kf_elem_is_poison (dtype, c, i) && !kf_elem_is_poison (dtype, ref, i))
        p->unwritten++;
    else
        kf_elem_compare (p, kf_elem_get (dtype, c, i), kf_elem_get (dtype, ref, i), rtol, atol);
}

KF_ELEM void
kf_elem_merge (kf_elem_part_t *sum, const kf_elem_part_t *p)
{
    sum->matched += p->matched;
    sum->unwritten += p->unwritten;
    sum->nonfinite += p->nonfinite;
    sum->dot += p->dot;
    sum->nr += p->nr;
    sum->nc += p->nc;
    if (p->max_abs > sum->max_abs)
        sum->max_abs = p->max_abs;
    if (p->max_rel > sum->max_rel)
        sum->max_rel = p->max_rel;
}

#endif
