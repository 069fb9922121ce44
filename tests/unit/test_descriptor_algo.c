/*  test_descriptor_algo.c - the host reader of algorithms that change the
 *  arithmetic (analysis/kf_descriptor_algo.c): each form as models write
 *  it, and the near misses that must stay where they were. The whole
 *  kernels are fixtures (tests/fixtures/descriptors/c_r26_*.c, checked
 *  by test_descriptor's corpus); these are the shapes one at a time.
 */
#include "kf_descriptor.h"
#include "kf_descriptor_algo.h"
#include "../kf_test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The algorithm level of the host function whose body is BODY, and
//  whether its explanation holds WORD.
static int
s_algo (const char *body, const char *word)
{
    char src[4096];
    snprintf (src, sizeof src, "#include <immintrin.h>\nvoid f (float *x, float *y, int n)\n{\n%s\n}\n",
              body);
    kf_coords_t c = { -1, -1, -1 };
    char *why = NULL;
    CHECK (kf_descriptor_classify (src, strlen (src), "c", &c, &why) == 0);
    bool has = why && word && strstr (why, word);
    if (word && !has)
        fprintf (stderr, "  no '%s' in:\n%s\n", word, why ? why : "(null)");
    free (why);
    return word && !has ? -1 : c.algo;
}

static void
s_test_winograd (void)
{
    //  B^T d of F(2,3) in intrinsics, alone.
    CHECK (s_algo ("__m256 d0 = _mm256_loadu_ps (x), d1 = _mm256_loadu_ps (x + 8);\n"
                   "__m256 d2 = _mm256_loadu_ps (x + 16), d3 = _mm256_loadu_ps (x + 24);\n"
                   "_mm256_storeu_ps (y, _mm256_sub_ps (d0, d2));\n"
                   "_mm256_storeu_ps (y + 8, _mm256_add_ps (d1, d2));\n"
                   "_mm256_storeu_ps (y + 16, _mm256_sub_ps (d2, d1));\n"
                   "_mm256_storeu_ps (y + 24, _mm256_sub_ps (d1, d3));", "Winograd") == 3);
    //  A^T m, scalar.
    CHECK (s_algo ("for (int i = 0; i < n; i++) {\n"
                   "  y[2 * i] = x[4 * i] + x[4 * i + 1] + x[4 * i + 2];\n"
                   "  y[2 * i + 1] = x[4 * i + 1] - x[4 * i + 2] - x[4 * i + 3];\n}", "Winograd") == 3);
    //  G g, the halving folded into the constant elsewhere.
    CHECK (s_algo ("float a = x[0], b = x[1], c = x[2];\n"
                   "y[1] = (a + b + c) * 0.5f;\ny[2] = (a - b + c) * 0.5f;", "Winograd") == 3);
    //  G g in intrinsics: the sum of two sums.
    CHECK (s_algo ("__m256 g0 = _mm256_loadu_ps (x), g1 = _mm256_loadu_ps (x + 8), g2 = _mm256_loadu_ps (x + 16);\n"
                   "_mm256_storeu_ps (y, _mm256_add_ps (_mm256_add_ps (g0, g1), g2));\n"
                   "_mm256_storeu_ps (y + 8, _mm256_add_ps (_mm256_sub_ps (g0, g1), g2));", "Winograd") == 3);
    //  F(4,3)'s first input row.
    CHECK (s_algo ("for (int i = 0; i < n; i++)\n"
                   "  y[i] = 4.0f * x[i] - 5.0f * x[i + 2 * n] + x[i + 4 * n];", "Winograd") == 3);
    //  G of F(2,3) as a flat table, 0.5 written .5.
    CHECK (s_algo ("static const float G[12] = { 1, 0, 0, .5f, .5f, .5f, .5f, -.5f, .5f, 0, 0, 1 };\n"
                   "for (int i = 0; i < 12; i++) y[i] = G[i] * x[i];", "Winograd") == 3);
    //  Near misses: two of the four input rows; central differences;
    //  the sum of three with no partner; 0.5f alone.
    CHECK (s_algo ("for (int i = 1; i + 2 < n; i++) {\n"
                   "  float a = x[i - 1] - x[i + 1];\n  float b = x[i] + x[i + 1];\n  y[i] = a * b;\n}",
                   NULL) == 0);
    CHECK (s_algo ("for (int i = 1; i + 1 < n; i++) y[i] = 0.5f * (x[i - 1] + x[i] + x[i + 1]);",
                   NULL) == 0);
    CHECK (s_algo ("float s = 0.5f * (x[0] + x[1]);\ny[0] = s - x[2];", NULL) == 0);
    //  A table that is not a transform.
    CHECK (s_algo ("static const float c[4] = { 1, 0.5f, 0.25f, 0.125f };\n"
                   "for (int i = 0; i < 4; i++) y[i] = c[i] * x[i];", NULL) == 0);
}

static void
s_test_fft_strassen (void)
{
    const char *twiddle = "float wr = cosf (2.0f * 3.14159265f * (float) i / (float) n);\n"
                          "float wi = sinf (2.0f * 3.14159265f * (float) i / (float) n);\n";
    char body[2048];
    snprintf (body, sizeof body, "for (int i = 0; i < n / 2; i++) {\n%s"
              "float t = wr * x[i + n / 2] - wi * y[i + n / 2], u = x[i];\n"
              "x[i] = u + t;\nx[i + n / 2] = u - t;\n}", twiddle);
    CHECK (s_algo (body, "FFT") == 3);
    //  Twiddles without a butterfly (a rotation, as RoPE does), and a
    //  butterfly without twiddles (a Haar step).
    snprintf (body, sizeof body, "for (int i = 0; i < n; i++) {\n%s"
              "y[i] = x[i] * wr - x[i] * wi;\n}", twiddle);
    CHECK (s_algo (body, NULL) == 0);
    CHECK (s_algo ("for (int i = 0; i < n; i++) {\n  float u = x[2 * i], t = x[2 * i + 1];\n"
                   "  y[i] = u + t;\n  y[n + i] = u - t;\n}", NULL) == 0);

    //  Quadrants of two matrices summed: Strassen's first product.
    CHECK (s_algo ("float A11 = x[0], A12 = x[1], A21 = x[2], A22 = x[3];\n"
                   "float B11 = y[0], B12 = y[1], B21 = y[2], B22 = y[3];\n"
                   "float m1 = (A11 + A22) * (B11 + B22), m6 = (A21 - A11) * (B11 + B12);\n"
                   "float m7 = (A12 - A22) * (B21 + B22);\n"
                   "y[0] = m1 + m6 + m7;", "Strassen") == 3);
    //  One matrix's quadrants alone: a 2 x 2 register tile's reduction.
    CHECK (s_algo ("__m256 c11 = _mm256_loadu_ps (x), c12 = _mm256_loadu_ps (x + 8);\n"
                   "__m256 c21 = _mm256_loadu_ps (x + 16), c22 = _mm256_loadu_ps (x + 24);\n"
                   "_mm256_storeu_ps (y, _mm256_add_ps (c11, c12));\n"
                   "_mm256_storeu_ps (y + 8, _mm256_add_ps (c21, c22));", NULL) == 0);
}

static void
s_test_im2col_online (void)
{
    //  A row of the unfolded matrix by memcpy (stride 1).
    CHECK (s_algo ("float *col = y;\nint OW = n, W = n + 2;\n"
                   "for (int kh = 0; kh < 3; kh++)\n  for (int kw = 0; kw < 3; kw++)\n"
                   "    for (int oh = 0; oh < n; oh++)\n"
                   "      memcpy (&col[((kh * 3 + kw) * n + oh) * OW], &x[(oh + kh) * W + kw], "
                   "OW * sizeof (float));", "im2col") == 2);
    //  A copy re-indexed through a linear index is no unfolding, and nor
    //  is a padded copy.
    CHECK (s_algo ("for (int i = 0; i < n; i++)\n  for (int j = 0; j < n; j++) {\n"
                   "    int k = i * n + j;\n    y[i * n + j] = x[k];\n  }", NULL) == 0);
    CHECK (s_algo ("for (int i = 0; i < n; i++)\n  for (int j = 0; j < n; j++)\n"
                   "    y[(i + 1) * (n + 2) + j + 1] = x[i * n + j];", NULL) == 0);

    //  Online softmax in intrinsics, the factor in place.
    CHECK (s_algo ("__m256 m = _mm256_set1_ps (-1e30f), s = _mm256_setzero_ps ();\n"
                   "for (int i = 0; i + 8 <= n; i += 8) {\n"
                   "  __m256 v = _mm256_loadu_ps (x + i), mn = _mm256_max_ps (m, v);\n"
                   "  s = _mm256_fmadd_ps (s, _mm256_exp_ps (_mm256_sub_ps (m, mn)), "
                   "_mm256_exp_ps (_mm256_sub_ps (v, mn)));\n  m = mn;\n}\n"
                   "_mm256_storeu_ps (y, s);", "online softmax") == 2);
    //  The write pass of a three-pass softmax rescales no running sum.
    CHECK (s_algo ("__m256 vm = _mm256_set1_ps (x[0]), inv = _mm256_set1_ps (y[0]);\n"
                   "for (int i = 0; i + 8 <= n; i += 8) {\n"
                   "  __m256 e = _mm256_exp_ps (_mm256_sub_ps (_mm256_loadu_ps (x + i), vm));\n"
                   "  _mm256_storeu_ps (y + i, _mm256_mul_ps (e, inv));\n}", NULL) == 0);
    //  Welford as an add of a product.
    CHECK (s_algo ("__m256 mean = _mm256_setzero_ps (), m2 = _mm256_setzero_ps ();\n"
                   "for (int i = 0; i + 8 <= n; i += 8) {\n"
                   "  __m256 v = _mm256_loadu_ps (x + i), d = _mm256_sub_ps (v, mean);\n"
                   "  mean = _mm256_add_ps (mean, _mm256_mul_ps (d, _mm256_set1_ps (1.0f / (i / 8 + 1))));\n"
                   "  m2 = _mm256_add_ps (m2, _mm256_mul_ps (d, _mm256_sub_ps (v, mean)));\n}\n"
                   "_mm256_storeu_ps (y, m2);", "Welford") == 2);
}

//  A large text of sums ends in bounded time, its snippets bounded.
static void
s_test_bounded (void)
{
    size_t size = (size_t) 1 << 20, used = 0;
    char *src = malloc (size + 64);
    CHECK (src != NULL);
    if (!src)
        return;
    used += (size_t) snprintf (src, size, "void f (float *a, float *b) {\n");
    for (int i = 0; used + 64 < size; i++)
        used += (size_t) snprintf (src + used, size - used, "a[%d] = b[%d] + b[%d] - a[%d];\n",
                                   i % 7, i % 5, (i + 1) % 5, i % 3);
    snprintf (src + used, 8, "}\n");
    kf_descriptor_algo_t al;
    CHECK (kf_descriptor_algo (src, &al) == 0);
    for (int k = 0; k < KF_ALGO_COUNT; k++)
        CHECK (strlen (al.snip[k]) < KF_ALGO_SNIP);
    free (src);
}

int
main (void)
{
    s_test_winograd ();
    s_test_fft_strassen ();
    s_test_im2col_online ();
    s_test_bounded ();
    return kf_test_done ("test_descriptor_algo");
}
