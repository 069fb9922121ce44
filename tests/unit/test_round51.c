/*  test_round51.c - what round 51 of the model in the loop (issue 15,
 *  docs/search.md "Fifty-first round") found in (x @ u) @ v, a rank-64
 *  chain of two products:
 *
 *  1. its prompts read "compute: not known (the task gives no operation
 *     count)": a chain's operations are 2 M R (K + N)
 *     (kf_prompt_chain_flops), and the Target section's compute floor
 *     says both products;
 *  2. its ideas spoke of one product of in0 by in1, where in1 is 64
 *     floats wide and in2 is the operand the output's tile walks down:
 *     the floor line says whose place each takes;
 *  3. it was handed "fusing the epilogue (bias, activation)", which it
 *     has not: its own fusion, the chain's, takes that idea's place;
 *  4. kernels that packed v into 64-column panels by vector copies
 *     (`dst = pk + ...; _mm512_store_ps (dst, _mm512_loadu_ps (...))`)
 *     read as not packing, and the packing idea went out again to them
 *     (kf_descriptor_host's s_vector_fill, rule set 19);
 *  6. (left open by rounds 49-50) a block number claimed in one
 *     statement and scaled in another (`b = atomic_fetch_add (next, 1);
 *     i0 = b * RB`) read as no cache blocking, and an elementwise
 *     kernel's claimed chunk of rows (`r0 = atomic_fetch_add (next, 1) *
 *     CHUNK`, a loop over each row's columns and no more) as cache
 *     blocking: a claimed block is one where the rest of its code reuses
 *     it (kf_descriptor_host's s_block_reused);
 *  5. generation 0's threads attempt of the Huber loss was told that
 *     "where a function has no vector form, an approximation ... is part
 *     of this base": it calls none.
 */
#include "../../analysis/kf_descriptor.h"
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_budget.h"
#include "../../coordinator/kf_prompt_layout.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../../common/kf_json.h"
#include "../../common/kf_str.h"
#include "../kf_test.h"
#include "../kf_test_text.h"

#include <stdlib.h>
#include <string.h>

static json_t *
s_chain (const char *forward)
{
    return json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                      " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name", "ch",
                      "inputs", "name", "in0", "shape", 2048, 512, "dtype", "f32", "name", "in1",
                      "shape", 512, 64, "dtype", "f32", "name", "in2", "shape", 64, 1024,
                      "dtype", "f32", "outputs", "name", "out0", "shape", 2048, 1024, "dtype",
                      "f32", "reference", "language", "pytorch", "source", forward, "tolerance",
                      "rtol", 0.01, "atol", 1e-5);
}

static void
test_chain (void)
{
    json_t *host = kf_test_epyc_host ();
    json_t *d = json_array_get (json_object_get (host, "devices"), 0);
    json_t *spec = s_chain ("    def forward(self, x, u, v):\n"
                            "        return (x @ u) @ v\n");
    long long c[4] = { 0, 0, 0, 0 }, mnk[3] = { 0, 0, 0 };
    double flops = kf_prompt_chain_flops (spec, c);
    printf ("chain: %.0f operations, M %lld K %lld R %lld N %lld\n", flops, c[0], c[1], c[2],
            c[3]);
    CHECK (flops == 2.0 * 2048 * 64 * (512 + 1024));
    CHECK (c[0] == 2048 && c[1] == 512 && c[2] == 64 && c[3] == 1024);
    CHECK (kf_prompt_product_flops (spec, mnk) == flops && mnk[0] == 2048 && mnk[1] == 1024
           && mnk[2] == 64);
    char *text;
    KF_TEST_CAPTURE (text, f, kf_prompt_task_product_line (f, spec, d));
    printf ("%s\n", text ? text : "(none)");
    CHECK (kf_test_has (text, "Compute floor: the chain's two products, 2 x M x K x R for the "
                              "[M][R] intermediate (M = 2048, K = 512, R = 64: 134.2 million) "
                              "and 2 x M x R x N for the output (N = 1024: 268.4 million), "
                              "402.7 million operations in all"));
    CHECK (kf_test_has (text, "The product ideas below speak of the one that makes the output, "
                              "tmp @ in2, tmp being the intermediate in0 @ in1 ([2048][64]) and "
                              "in2 the operand whose rows (1024 floats) the output's tile walks "
                              "down; the first product's in1 is only 64 floats wide."));
    free (text);
    //  Round 52: the working set named the second product's operands by
    //  the first's ("in0 (x in its code) is M x K = 2048 x 64"), and the
    //  position line gave one product's formula for the chain's count.
    json_object_set_new (d, "l1d_bytes", json_real (32768.0));
    json_object_set_new (d, "l2_bytes", json_real (1048576.0));
    KF_TEST_CAPTURE (text, f, kf_prompt_working_set_line (f, spec, d));
    printf ("%s", text ? text : "(none)\n");
    CHECK (kf_test_has (text, "Working set of one product (the chain's second, which makes the "
                              "output): the first operand tmp (the intermediate, in0 @ in1) is M x "
                              "K = 2048 x 64"));
    CHECK (kf_test_has (text, "; the second in2 "));
    free (text);
    json_t *k = json_pack ("{s:i, s:s, s:s, s:f, s:f}", "id", 4, "source",
                           "int kf_forward (void) { return 0; }", "status", "correct",
                           "speedup", 30.75, "candidate_ns", 2.08e6);
    KF_TEST_CAPTURE (text, f, kf_prompt_position_line (f, k, spec, host, KF_TARGET_HOST));
    printf ("%s\n", text ? text : "(none)");
    CHECK (kf_test_has (text, "The compute figures count the chain's two products, 2*M*R*(K + N) "
                              "= 2*2048*64*(512 + 1024) = 403 million operations"));
    free (text);
    json_decref (k);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    bool chained = false, bias = false;
    for (size_t i = 0; i < n; i++) {
        chained |= kf_test_has (ideas[i], "by chaining the two products a block of rows at a "
                                          "time") && kf_test_has (ideas[i], "the [2048][64] "
                                                                            "intermediate tmp (512 KiB)");
        bias |= strstr (ideas[i], "(bias, activation)") != NULL;
    }
    CHECK (chained && !bias);
    //  Round 52: the one-product ideas name tmp and in2, never in1.
    for (size_t i = 0; i < n; i++)
        CHECK (ideas[i] && (strstr (ideas[i], "by chaining") || !strstr (ideas[i], "in1")));
    CHECK (kf_test_idea_index (ideas, n, KF_IDEA_PACK) < n
           && kf_test_has (ideas[kf_test_idea_index (ideas, n, KF_IDEA_PACK)],
                           "by packing blocks of in2, the operand the register tile walks down"));
    json_decref (spec);
    //  One product with an epilogue input of the output's shape is no
    //  chain, nor are two products of one operand.
    spec = s_chain ("    def forward(self, x, u, v):\n"
                    "        return x @ u\n");
    CHECK (kf_prompt_chain_flops (spec, NULL) == 0);
    json_decref (spec);
    json_decref (host);
}

//  Round 51's candidate 6, cut down: v packed into panels of 64 columns
//  by vector copies through a pointer into the buffer, a register tile
//  of 6 rows by 64 columns reading the panels.
static const char s_vecpack[] =
    "#include <immintrin.h>\n"
    "#include <stdint.h>\n"
    "#define MR 6\n"
    "static void tile (int rows, const float *A, int64_t lda, const float *B, int64_t K,\n"
    "                  float *C, int64_t ldc)\n"
    "{ __m512 acc[MR][4];\n"
    "  for (int r = 0; r < MR; r++) for (int q = 0; q < 4; q++) acc[r][q] = _mm512_setzero_ps ();\n"
    "  for (int64_t k = 0; k < K; k++) { const float *b = B + k * 64;\n"
    "    for (int r = 0; r < rows; r++) { __m512 a = _mm512_set1_ps (A[r * lda + k]);\n"
    "      for (int q = 0; q < 4; q++)\n"
    "        acc[r][q] = _mm512_fmadd_ps (a, _mm512_loadu_ps (b + 16 * q), acc[r][q]); } }\n"
    "  for (int r = 0; r < rows; r++) for (int q = 0; q < 4; q++)\n"
    "    _mm512_storeu_ps (C + r * ldc + 16 * q, acc[r][q]); }\n"
    "void run (const float *t, const float *v, float *y, int64_t M, int64_t R, int64_t N,\n"
    "          float *(*scratch_alloc) (void *, unsigned long), void *st)\n"
    "{\n"
    "    float *pk = scratch_alloc (st, (unsigned long) (R * N) * 4);\n"
    "    for (int64_t r = 0; r < R; r++)\n"
    "        for (int64_t j = 0, p = 0; j < N; j += 64, p++) {\n"
    "            float *dst = pk + p * R * 64 + r * 64;\n"
    "            _mm512_store_ps (dst, _mm512_loadu_ps (v + r * N + j));\n"
    "        }\n"
    "    for (int64_t i0 = 0; i0 < M; i0 += 48)\n"
    "        for (int64_t p = 0; p < N / 64; p++)\n"
    "            for (int64_t i = i0; i < i0 + 48 && i < M; i += MR)\n"
    "                tile (MR, t + i * R, R, pk + p * R * 64, R, y + i * N + p * 64, N);\n"
    "}\n";

static void
test_vector_pack (void)
{
    kf_coords_t c;
    char *why = NULL;
    CHECK (kf_descriptor_classify (s_vecpack, strlen (s_vecpack), "c", &c, &why) == 0);
    printf ("%s\n", why ? why : "");
    CHECK (c.mem == 3 && kf_test_has (why, "operand packed into a contiguous local buffer "
                                           "`_mm512_store_ps (dst, _mm512_loadu_ps"));
    free (why);
    //  A store of computed values into the buffer is no copy of an operand.
    char *calc = kf_strdupf ("%s", s_vecpack);
    char *at = strstr (calc, "_mm512_loadu_ps (v + r * N + j)");
    memcpy (at, "_mm512_set1_ps ((float)    r * N + j)", strlen ("_mm512_loadu_ps (v + r * N + j)"));
    why = NULL;
    CHECK (kf_descriptor_classify (calc, strlen (calc), "c", &c, &why) == 0);
    CHECK (!kf_test_has (why, "operand packed into"));
    free (why);
    free (calc);
}

static void
test_no_function_base (void)
{
    json_t *spec = json_pack ("{s:s, s:[{s:s, s:[i,i], s:s}, {s:s, s:[i,i], s:s}],"
                              " s:[{s:s, s:[i,i], s:s}], s:{s:s, s:s}, s:{s:f, s:f}}", "name",
                              "hu", "inputs", "name", "in0", "shape", 4096, 2048, "dtype", "f32",
                              "name", "in1", "shape", 4096, 2048, "dtype", "f32", "outputs",
                              "name", "out0", "shape", 4096, 2048, "dtype", "f32", "reference",
                              "language", "pytorch", "source",
                              "    def forward(self, a, b):\n"
                              "        d = (a - b).abs()\n"
                              "        return torch.where(d < 1.0, 0.5 * d * d, d - 0.5)\n",
                              "tolerance", "rtol", 0.01, "atol", 1e-5);
    size_t n;
    const char *const *ideas = kf_prompt_ideas_for (spec, KF_TARGET_HOST, &n);
    size_t th = kf_test_idea_index (ideas, n, KF_IDEA_THREADS);
    CHECK (th < n);
    json_t *plan = json_pack ("{s:s}", "mine", th < n ? ideas[th] : "use every core, by threads");
    kf_prompt_in_t in = { .spec = spec, .language = "c", .target = "host", .generation = 0,
                          .slot = 0, .population = 3, .ideas = plan };
    char *p = kf_prompt_build (&in);
    CHECK (kf_test_has (p, "No kernel exists yet for this idea to build on: first write the "
                           "simplest correct vectorised form of the whole computation (each "
                           "element's math in vector registers, by the compiler or by "
                           "intrinsics, with no other idea's tricks), then add this idea"));
    CHECK (p && !strstr (p, "where a function has no vector form"));
    free (p);
    json_decref (plan);
    json_decref (spec);
}

//  A product's rows claimed a block at a time, each block read again for
//  every column (FORM 0), and an elementwise kernel's rows
//  claimed a chunk at a time, in two statements (FORM 1) or one (FORM 2).
static char *
s_claimed (int form)
{
    const char *head = "#include <stdatomic.h>\n#define RB 32\n#define CHUNK 64\n"
                       "void run (atomic_long *next, const float *X, const float *W, float *Y,\n"
                       "          long M, long N, long K)\n{\n";
    if (form == 0)
        return kf_strdupf ("%s    long b;\n"
                           "    while ((b = atomic_fetch_add (next, 1)) * RB < M) {\n"
                           "        long i0 = b * RB;\n"
                           "        long i1 = i0 + RB < M ? i0 + RB : M;\n"
                           "        for (long j = 0; j < N; j++)\n"
                           "            for (long i = i0; i < i1; i++) {\n"
                           "                float s = 0;\n"
                           "                for (long k = 0; k < K; k++) s += X[i * K + k] * W[j * K + k];\n"
                           "                Y[i * N + j] = s; }\n"
                           "    }\n}\n", head);
    return kf_strdupf ("%s    for (;;) {\n%s"
                       "        long r1 = r0 + CHUNK < M ? r0 + CHUNK : M;\n"
                       "        if (r0 >= M) break;\n"
                       "        for (long r = r0; r < r1; r++)\n"
                       "            for (long j = 0; j < N; j++)\n"
                       "                Y[r * N + j] = X[r * N + j] * W[j];\n"
                       "    }\n}\n", head,
                       form == 1 ? "        long c = atomic_fetch_add (next, 1);\n"
                                   "        long r0 = c * CHUNK;\n"
                                 : "        long r0 = atomic_fetch_add (next, 1) * CHUNK;\n");
}

static void
test_claimed_blocks (void)
{
    for (int form = 0; form < 3; form++) {
        char *src = s_claimed (form), *why = NULL;
        kf_coords_t c;
        CHECK (kf_descriptor_classify (src, strlen (src), "c", &c, &why) == 0);
        printf ("form %d: %s\n", form, why ? why : "");
        if (form == 0)
            CHECK (c.mem == 2 && kf_test_has (why, "(cache blocking) `b = atomic_fetch_add"));
        else
            CHECK (!kf_test_has (why, "(cache blocking)"));
        free (why);
        free (src);
    }
}

int
main (void)
{
    test_claimed_blocks ();
    test_no_function_base ();
    test_chain ();
    test_vector_pack ();
    return kf_test_done ("test_round51");
}
