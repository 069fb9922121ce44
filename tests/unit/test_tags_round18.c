/*  test_tags_round18.c - what round 18 of the model in the loop (issue
 *  15, docs/search.md "Eighteenth round") found about the code tags
 *  (kf_prompt_source_features), which say what a kernel's code did:
 *
 *  1. "the output written once (no read back)" was said of every
 *     elementwise kernel: each writes its output once, having no product
 *     whose epilogue it could fuse. The tag now needs a product: a
 *     register tile, or a multiply-add of two values read from memory;
 *  2. "one fused pass per row" was said of a product whose RMS norm ran
 *     in a pass of its own: a product's kernel is "fused" by its epilogue
 *     (the tag above), not by a row's passes;
 *  3. "multi-level blocking", the host's memory level 3, was read as
 *     packing: its name now says what its two levels are;
 *  4. round 19: a kernel's feature words were cut mid-word ("a permu.")
 *     by a caller's buffer;
 *  5. round 19: "packed operands" for a kernel that packs nothing (read
 *     from the level-3 name of 3.), and "the output written once" for one
 *     that hands its output to a job struct by position and reads it back
 *     through the struct's field.
 *
 *  The kernels below are trimmed from the round's answers.
 */
#include "../../coordinator/kf_prompt_class.h"
#include "../../analysis/kf_descriptor.h"
#include "../kf_test.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BIT(f) (1u << (f))

//  Round 18's atan2 kernel in short: a polynomial in Horner steps over
//  vectors of both inputs, one store an element.
static const char s_poly[] =
    "#include \"kf_kernel.h\"\n#include <immintrin.h>\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx) {\n"
    "  const float *a = in[0].data, *b = in[1].data;\n  float *y = out[0].data;\n"
    "  int64_t n = kf_numel (&out[0]);\n"
    "  for (int64_t i = 0; i + 16 <= n; i += 16) {\n"
    "    __m512 x = _mm512_loadu_ps (a + i), z = _mm512_loadu_ps (b + i);\n"
    "    __m512 t = _mm512_div_ps (x, z), t2 = _mm512_mul_ps (t, t);\n"
    "    __m512 p = _mm512_set1_ps (-0.0117f);\n"
    "    p = _mm512_fmadd_ps (p, t2, _mm512_set1_ps (0.0526f));\n"
    "    p = _mm512_fmadd_ps (p, t2, _mm512_set1_ps (-0.1164f));\n"
    "    p = _mm512_fmadd_ps (p, t2, _mm512_set1_ps (0.1935f));\n"
    "    p = _mm512_fmadd_ps (p, t2, _mm512_set1_ps (-0.3326f));\n"
    "    p = _mm512_fmadd_ps (p, t2, _mm512_set1_ps (0.9999f));\n"
    "    __m512 r = _mm512_sqrt_ps (_mm512_fmadd_ps (x, x, _mm512_fmadd_ps (z, z, "
    "_mm512_set1_ps (1.0f))));\n"
    "    _mm512_storeu_ps (y + i, _mm512_mul_ps (_mm512_mul_ps (p, t), r));\n"
    "  }\n  return 0;\n}\n";

//  A plain loop of the same work, with a sum of squares.
static const char s_scalar[] =
    "#include \"kf_kernel.h\"\n#include <math.h>\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx) {\n"
    "  const float *a = in[0].data, *b = in[1].data;\n  float *y = out[0].data;\n"
    "  for (int64_t i = 0; i < kf_numel (&out[0]); i++) {\n"
    "    float s = 1.0f;\n    s += a[i] * a[i];\n    s += b[i] * b[i];\n"
    "    y[i] = atan2f (a[i], b[i]) * sqrtf (s);\n  }\n  return 0;\n}\n";

//  Round 18's product and norm in short: a dot product an output, its
//  row's sum and sum of squares gathered before its store (the
//  descriptors' "fused reductions", algorithm level 1), then the scaling
//  in a pass of its own that reads each row of the output back.
static const char s_two_passes[] =
    "#include \"kf_kernel.h\"\n#include <math.h>\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx) {\n"
    "  const float *a = in[0].data, *b = in[1].data, *g = in[2].data;\n"
    "  float *y = out[0].data;\n"
    "  int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[1];\n"
    "  for (int64_t i = 0; i < M; i++) {\n    float s = 0.0f, ss = 0.0f;\n"
    "    for (int64_t j = 0; j < N; j++) {\n"
    "      float acc = 0.0f;\n"
    "      for (int64_t k = 0; k < K; k++)\n        acc += a[i * K + k] * b[k * N + j];\n"
    "      y[i * N + j] = acc;\n      s += acc;\n      ss += acc * acc;\n    }\n"
    "    float r = 1.0f / sqrtf (ss / (float) N + 1e-6f);\n"
    "    for (int64_t j = 0; j < N; j++)\n      y[i * N + j] *= r * g[j];\n  }\n"
    "  return 0;\n}\n";

//  The same product with its epilogue applied before each store (round
//  6's fused kernel in short): the output written once.
static const char s_fused[] =
    "#include \"kf_kernel.h\"\n#include <immintrin.h>\n#include <math.h>\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx) {\n"
    "  const float *x = in[0].data, *w = in[1].data;\n  float *o = out[0].data;\n"
    "  int64_t M = in[0].shape[0], K = in[0].shape[1], N = out[0].shape[1];\n"
    "  for (int64_t i = 0; i < M; i++)\n    for (int64_t j = 0; j < N; j++) {\n"
    "      __m512 acc = _mm512_setzero_ps ();\n"
    "      for (int64_t k = 0; k < K; k += 16)\n"
    "        acc = _mm512_fmadd_ps (_mm512_loadu_ps (x + i * K + k),\n"
    "                               _mm512_loadu_ps (w + j * K + k), acc);\n"
    "      float z = _mm512_reduce_add_ps (acc);\n"
    "      o[i * N + j] = z / (1.0f + expf (-z));\n    }\n"
    "  return 0;\n}\n";

//  Round 19's candidate 4 in short: a register tile inside cache blocks,
//  nothing packed (memory level 3, whose name says "packed or not").
static const char s_tile_in_blocks[] =
    "#include \"kf_kernel.h\"\n#include <immintrin.h>\n#define KF_NC 96\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx) {\n"
    "  const float *A = in[0].data, *B = in[1].data;\n  float *Y = out[0].data;\n"
    "  int64_t M = in[0].shape[0], K = in[0].shape[1], N = in[1].shape[0];\n"
    "  for (int64_t jb = 0; jb < N; jb += KF_NC)\n"
    "    for (int64_t i = 0; i + 2 <= M; i += 2)\n"
    "      for (int64_t j = jb; j + 2 <= jb + KF_NC && j + 2 <= N; j += 2) {\n"
    "        __m256 c00 = _mm256_setzero_ps (), c01 = _mm256_setzero_ps ();\n"
    "        __m256 c10 = _mm256_setzero_ps (), c11 = _mm256_setzero_ps ();\n"
    "        for (int64_t k = 0; k + 8 <= K; k += 8) {\n"
    "          __m256 a0 = _mm256_loadu_ps (A + i * K + k), a1 = _mm256_loadu_ps (A + (i + 1) "
    "* K + k);\n"
    "          __m256 b0 = _mm256_loadu_ps (B + j * K + k), b1 = _mm256_loadu_ps (B + (j + 1) "
    "* K + k);\n"
    "          c00 = _mm256_fmadd_ps (a0, b0, c00);\n          c01 = _mm256_fmadd_ps (a0, b1, c01);\n"
    "          c10 = _mm256_fmadd_ps (a1, b0, c10);\n          c11 = _mm256_fmadd_ps (a1, b1, c11);\n"
    "        }\n        Y[i * N + j] = _mm256_reduce_add_ps (c00);\n      }\n  return 0;\n}\n";

//  Round 19's candidate 5 in short: the output handed to a job struct by
//  position, its field Y read back by the epilogue pass.
static const char s_job_reads_back[] =
    "#include \"kf_kernel.h\"\n#include <pthread.h>\n"
    "typedef struct { const float *A, *B; float *Y; int64_t M, N, K; } kf_job_t;\n"
    "static void *kf_run (void *arg) {\n  const kf_job_t *jb = arg;\n"
    "  const float *A = jb->A, *B = jb->B;\n  float *Y = jb->Y;\n"
    "  for (int64_t i = 0; i < jb->M; i++) {\n"
    "    for (int64_t j = 0; j < jb->N; j++) {\n      float acc = 0.0f;\n"
    "      for (int64_t k = 0; k < jb->K; k++)\n"
    "        acc += A[i * jb->K + k] * B[j * jb->K + k];\n"
    "      Y[i * jb->N + j] = acc;\n    }\n"
    "    float *row = Y + i * jb->N, mx = 0.0f;\n"
    "    for (int64_t j = 0; j < jb->N; j++)\n      mx = row[j] > mx ? row[j] : mx;\n"
    "    for (int64_t j = 0; j < jb->N; j++)\n      row[j] /= mx + 1e-5f;\n  }\n"
    "  return NULL;\n}\n"
    "int kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "                const kf_ctx_t *ctx) {\n"
    "  kf_job_t j0 = { (const float *) in[0].data, (const float *) in[1].data,\n"
    "                  (float *) out[0].data, in[0].shape[0], in[1].shape[0], in[0].shape[1] };\n"
    "  kf_run (&j0);\n  return 0;\n}\n";

static unsigned
s_features (const char *name, const char *source)
{
    unsigned f = kf_prompt_source_features (source, "c");
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL;
    kf_descriptor_classify (source, strlen (source), "c", &c, &why);
    char words[512];
    printf ("%s: cell {%d,%d,%d}; %s\n", name, c.mem, c.algo, c.sync,
            kf_prompt_feature_words (f, words, sizeof words));
    free (why);
    return f;
}

int
main (void)
{
    //  1. No product, nothing to fuse: the tag is not given.
    CHECK (!(s_features ("polynomial", s_poly) & BIT (KF_IDEA_EPILOGUE)));
    CHECK (!(s_features ("scalar", s_scalar) & BIT (KF_IDEA_EPILOGUE)));
    //  ... and it still is where a product's epilogue is fused.
    CHECK (s_features ("fused", s_fused) & BIT (KF_IDEA_EPILOGUE));

    //  2. A product whose norm reads the output back: neither its output
    //  written once nor one fused pass per row.
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL;
    CHECK (kf_descriptor_classify (s_two_passes, strlen (s_two_passes), "c", &c, &why) == 0);
    CHECK (c.algo == 1);   /* the premise: the level the tag was read from */
    free (why);
    unsigned f = s_features ("two passes", s_two_passes);
    CHECK (!(f & BIT (KF_IDEA_EPILOGUE)));
    CHECK (!(f & BIT (KF_IDEA_FUSED_ROW)));

    //  3. The host's memory level 3 says what its two levels are, and that
    //  packing is not one of them (round 18 read it as packed operands).
    const char *level3 = kf_descriptor_level_name_for ("c", 0, 3);
    printf ("host memory level 3: %s\n", level3);
    CHECK (kf_test_has (level3, "a register tile inside cache blocks, or nested cache blocks; "
                                "packed or not"));
    //  5. Round 19: a register tile inside cache blocks, nothing packed,
    //  was tagged "packed operands" (the level's name says "packed or
    //  not"); an output handed to a job struct by position and read back
    //  through its field was "written once".
    CHECK (!(s_features ("tile in blocks", s_tile_in_blocks) & BIT (KF_IDEA_PACK)));
    CHECK (s_features ("tile in blocks", s_tile_in_blocks) & BIT (KF_IDEA_BLOCK));
    CHECK (!(s_features ("job reads back", s_job_reads_back) & BIT (KF_IDEA_EPILOGUE)));

    //  4. Every feature's words fit the size callers keep for them (round
    //  19: "... getexp/getmant, a permu." was cut mid-word).
    char all[4096];
    size_t n = strlen (kf_prompt_feature_words (~0u, all, sizeof all));
    printf ("every feature in words: %zu bytes\n", n);
    CHECK (n > 0 && n + 1 < KF_PROMPT_FEATURE_WORDS_MAX);
    return kf_test_done ("test_tags_round18");
}
