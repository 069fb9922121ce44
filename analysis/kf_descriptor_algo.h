/*  kf_descriptor_algo.h - algorithms that change the arithmetic of a host
 *  (C) kernel, read by code for the algorithm axis (kf_descriptor.c).
 *
 *  Issue 15, round 26: a Winograd F(2x2,3x3) convolution (filter, input
 *  and output transforms, elementwise products in the transformed domain)
 *  was filed "direct translation": only an identifier containing
 *  "winograd" or "fft" moved a kernel, and the model's code named
 *  neither. Models write these algorithms in a few recognisable shapes,
 *  which this reader looks for:
 *  - Winograd minimal filtering: the F(2,3) transforms as arithmetic
 *    (the filter's halved sums g0 + g1 + g2 and g0 - g1 + g2, the input
 *    tile's d0 - d2, d1 + d2, d2 - d1, d1 - d3, the output's
 *    m0 + m1 + m2 and m1 - m2 - m3; scalar or _mm*_add/sub_p[sd]), the
 *    F(4,3) input row 4 d0 - 5 d2 + d4, or the transform matrices
 *    (G, B^T, A^T of F(2,3) or F(4,3), or their transposes) as constant
 *    tables;
 *  - FFT: twiddle factors (cos and sin, or cexp / sincos, in a file
 *    that writes 2 pi) with a butterfly (u + t and u - t of the same two
 *    values);
 *  - Strassen-like splits: quadrants of one matrix (A11, A22, b_21 ...)
 *    added or subtracted, or handed together to a helper, for two
 *    matrices at least;
 *  - im2col: a buffer filled element by element (or by memcpy) from an
 *    input whose position adds two names that both index the buffer
 *    (oh + kh, with oh and kh in the buffer's row and column); a window
 *    gathered per output (the tap alone in the buffer's index) is not;
 *  - the online softmax and Welford update in intrinsics, which the
 *    shared scalar rules do not see: a running sum multiplied by the
 *    exponential of a difference (`s = _mm256_mul_ps (s, scale)` with
 *    `scale = exp256_ps (_mm256_sub_ps (m, mn))`), and
 *    `m2 = _mm256_fmadd_ps (d, _mm256_sub_ps (x, mean), m2)`.
 *  Pattern reading, not semantics: docs/descriptors.md lists the limits.
 */
#ifndef KF_DESCRIPTOR_ALGO_H
#define KF_DESCRIPTOR_ALGO_H

#define KF_ALGO_SNIP 48

enum {
    KF_ALGO_WINOGRAD,
    KF_ALGO_FFT,
    KF_ALGO_STRASSEN,
    KF_ALGO_IM2COL,
    KF_ALGO_ONLINE,
    KF_ALGO_WELFORD,
    KF_ALGO_COUNT
};

typedef struct {
    int count[KF_ALGO_COUNT];            /* pieces of evidence of each */
    char snip[KF_ALGO_COUNT][KF_ALGO_SNIP];  /* the first, white space squeezed */
} kf_descriptor_algo_t;

/* Reads CODE (a host C source with comments and strings blanked) into
 * OUT. Returns 0, -1 when its patterns cannot be compiled (OUT zeroed). */
int kf_descriptor_algo (const char *code, kf_descriptor_algo_t *out);

#endif
