/*  test_descriptor.c - the descriptor classifier against its corpus.
 *
 *  Every file in tests/fixtures/descriptors/ opens with a line
 *  "// expect: mem=M algo=A sync=S" (the coordinates a kernel engineer
 *  gives it); its language follows from the extension (.cu CUDA, .cl
 *  OpenCL C, .cpp SYCL, .c host C). Each must classify exactly; the
 *  mismatches are printed as a table, and KF_TEST_VERBOSE=1 prints every
 *  row with the classifier's explanation. The expect line is itself a
 *  comment, so a correct result also shows that stripping works. Unit
 *  tests of strip and bin follow. Run from the repository root (or set
 *  KF_ROOT to it).
 */
#include "kf_descriptor.h"
#include "../kf_test.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FIX "tests/fixtures/descriptors"

static bool s_verbose;

static char *
s_slurp (const char *path, size_t *size)
{
    FILE *f = fopen (path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, len = 0;
    char *data = malloc (cap);
    size_t n;
    while (data && (n = fread (data + len, 1, cap - len, f)) > 0) {
        len += n;
        if (len == cap) {
            char *grown = realloc (data, cap * 2);
            if (!grown) {
                free (data);
                data = NULL;
                break;
            }
            data = grown;
            cap *= 2;
        }
    }
    fclose (f);
    *size = len;
    return data;
}

static const char *
s_language (const char *name)
{
    const char *dot = strrchr (name, '.');
    if (!dot)
        return NULL;
    if (strcmp (dot, ".cu") == 0)
        return "cuda";
    if (strcmp (dot, ".cl") == 0)
        return "opencl";
    if (strcmp (dot, ".cpp") == 0)
        return "sycl";
    if (strcmp (dot, ".c") == 0)
        return "c";
    return NULL;
}

static int
s_by_name (const void *a, const void *b)
{
    return strcmp (*(char *const *) a, *(char *const *) b);
}

static void
s_test_corpus (void)
{
    DIR *dir = opendir (FIX);
    CHECK (dir != NULL);
    if (!dir) {
        fprintf (stderr, "  cannot open %s: run from the repository root\n", FIX);
        return;
    }
    char *names[256];
    size_t n_names = 0;
    struct dirent *e;
    while ((e = readdir (dir)) && n_names < 256)
        if (s_language (e->d_name))
            names[n_names++] = strdup (e->d_name);
    closedir (dir);
    qsort (names, n_names, sizeof names[0], s_by_name);

    int counts[3][4] = { { 0 } };
    int per_lang[4] = { 0 }, mismatches = 0;
    const char *langs[4] = { "cuda", "opencl", "sycl", "c" };
    char table[16384];
    size_t tlen = 0;
    table[0] = 0;
    for (size_t i = 0; i < n_names; i++) {
        char path[512];
        snprintf (path, sizeof path, "%s/%s", FIX, names[i]);
        size_t size = 0;
        char *src = s_slurp (path, &size);
        CHECK (src != NULL);
        if (!src)
            continue;
        kf_coords_t want;
        int got_expect = size > 0
            && sscanf (src, "// expect: mem=%d algo=%d sync=%d", &want.mem, &want.algo, &want.sync) == 3;
        if (!got_expect)
            fprintf (stderr, "  %s: no '// expect: mem=M algo=A sync=S' first line\n", names[i]);
        CHECK (got_expect);
        const char *lang = s_language (names[i]);
        kf_coords_t got = { -1, -1, -1 };
        char *why = NULL;
        CHECK (kf_descriptor_classify (src, size, lang, &got, &why) == 0);
        CHECK (why != NULL);
        bool ok = got_expect && got.mem == want.mem && got.algo == want.algo && got.sync == want.sync;
        CHECK (ok);
        if (got_expect) {
            counts[0][want.mem & 3]++;
            counts[1][want.algo & 3]++;
            counts[2][want.sync & 3]++;
        }
        for (int l = 0; l < 4; l++)
            per_lang[l] += strcmp (lang, langs[l]) == 0;
        if (!ok || s_verbose) {
            if (!ok)
                mismatches++;
            int n = snprintf (table + tlen, sizeof table - tlen,
                              "  %-4s %-40s want %d/%d/%d got %d/%d/%d\n", ok ? "ok" : "MISS",
                              names[i], want.mem, want.algo, want.sync, got.mem, got.algo, got.sync);
            if (n > 0 && (size_t) n < sizeof table - tlen)
                tlen += (size_t) n;
            if (!ok || s_verbose) {
                //  The explanation, indented, under its row.
                for (char *line = why; line && *line;) {
                    char *eol = strchr (line, '\n');
                    int len = eol ? (int) (eol - line) : (int) strlen (line);
                    n = snprintf (table + tlen, sizeof table - tlen, "         %.*s\n", len, line);
                    if (n > 0 && (size_t) n < sizeof table - tlen)
                        tlen += (size_t) n;
                    line = eol ? eol + 1 : line + len;
                }
            }
        }
        free (why);
        free (src);
    }
    if (tlen)
        fprintf (mismatches ? stderr : stdout, "%s%s", mismatches ? "corpus mismatches (mem/algo/sync):\n" : "", table);
    printf ("  corpus: %zu kernels (cuda %d, opencl %d, sycl %d, c %d), %d mismatched\n",
            n_names, per_lang[0], per_lang[1], per_lang[2], per_lang[3], mismatches);
    const char *dims[3] = { "mem", "algo", "sync" };
    for (int d = 0; d < 3; d++) {
        printf ("  %-4s levels 0..3: %d %d %d %d\n", dims[d], counts[d][0], counts[d][1],
                counts[d][2], counts[d][3]);
        for (int l = 0; l < 4; l++)
            CHECK (counts[d][l] > 0);       //  every level of every dimension covered
    }
    CHECK (n_names >= 40);
    for (size_t i = 0; i < n_names; i++)
        free (names[i]);
}

//  Strips a copy of IN and compares with WANT.
static void
s_expect_strip (const char *in, const char *want)
{
    char *t = strdup (in);
    kf_descriptor_strip (t);
    bool ok = strcmp (t, want) == 0;
    if (!ok)
        fprintf (stderr, "  strip:\n    in:   [%s]\n    got:  [%s]\n    want: [%s]\n", in, t, want);
    CHECK (ok);
    CHECK (strlen (t) == strlen (in));
    free (t);
}

static void
s_test_strip (void)
{
    s_expect_strip ("a = 1; // note\nb = 2;", "a = 1;        \nb = 2;");
    s_expect_strip ("x /* one\n two */ y", "x       \n        y");
    //  Comment markers inside strings are text, not comments.
    s_expect_strip ("s = \"// not a comment\"; t = 1;", "s = \"                \"; t = 1;");
    s_expect_strip ("s = \"/* no */\"; u;", "s = \"        \"; u;");
    //  Escaped quotes and backslashes inside strings.
    s_expect_strip ("p(\"a\\\"b // c\"); q;", "p(\"         \"); q;");
    s_expect_strip ("p(\"a\\\\\"); /* c */ r;", "p(\"   \");         r;");
    //  Quotes inside comments do not open strings.
    s_expect_strip ("// don't \"\nk = 1;", "          \nk = 1;");
    s_expect_strip ("/* it's \" */ k;", "             k;");
    //  Character literals, including quote and escaped quote.
    s_expect_strip ("c = '\"'; d = '\\''; e;", "c = ' '; d = '  '; e;");
    s_expect_strip ("c = '/'; d = '*'; e;", "c = ' '; d = ' '; e;");
    //  Digit separators are not character literals.
    s_expect_strip ("n = 1'000'000; // x", "n = 1'000'000;     ");
    //  A spliced line continues a // comment.
    s_expect_strip ("// a \\\n__syncthreads();\nz;", "      \n                \nz;");
    //  A string spliced over two lines keeps its newline.
    s_expect_strip ("s = \"ab\\\ncd\"; w;", "s = \"   \n  \"; w;");
    //  An unterminated literal ends with its line.
    s_expect_strip ("#error don't\n__syncthreads();", "#error don' \n__syncthreads();");
    //  Raw strings (SYCL is C++).
    s_expect_strip ("r = R\"x(a \" // b)x\"; m;", "r = R\"            \"; m;");
    //  Division and stars are untouched.
    s_expect_strip ("a = b / c * d; e = *p;", "a = b / c * d; e = *p;");
    //  Unterminated block comment runs to the end.
    s_expect_strip ("a; /* open\nb;", "a;        \n  ");
    //  Empty text and NULL do nothing harmful.
    s_expect_strip ("", "");
    kf_descriptor_strip (NULL);
}

static void
s_test_bin (void)
{
    for (int bins = 1; bins <= 4; bins++) {
        int prev = 0;
        for (int l = 0; l < 4; l++) {
            int b = kf_descriptor_bin (l, bins);
            CHECK (b >= prev && b < bins);
            prev = b;
        }
        CHECK (kf_descriptor_bin (0, bins) == 0);
        CHECK (kf_descriptor_bin (3, bins) == bins - 1);
    }
    for (int l = 0; l < 4; l++)
        CHECK (kf_descriptor_bin (l, 4) == l);
    CHECK (kf_descriptor_bin (1, 2) == 0 && kf_descriptor_bin (2, 2) == 1);
    CHECK (kf_descriptor_bin (1, 3) == 1 && kf_descriptor_bin (2, 3) == 1);
    CHECK (kf_descriptor_bin (-1, 4) == -1);
    CHECK (kf_descriptor_bin (4, 4) == -1);
    CHECK (kf_descriptor_bin (0, 0) == -1);
    CHECK (kf_descriptor_bin (0, 5) == -1);
}

static void
s_test_api (void)
{
    kf_coords_t c = { 7, 7, 7 };
    char *why = NULL;
    const char *src = "__global__ void k(float *x) { x[threadIdx.x] = 0; }";
    CHECK (kf_descriptor_classify (src, strlen (src), "fortran", &c, &why) == -1);
    CHECK (c.mem == 7 && why == NULL);
    CHECK (kf_descriptor_classify (NULL, 0, "cuda", &c, NULL) == -1);
    CHECK (kf_descriptor_classify (src, strlen (src), NULL, &c, NULL) == -1);
    CHECK (kf_descriptor_classify (src, strlen (src), "cuda", NULL, NULL) == -1);
    CHECK (kf_descriptor_classify (src, strlen (src), "cuda", &c, NULL) == 0);
    CHECK (c.mem == 0 && c.algo == 0 && c.sync == 0);
    CHECK (kf_descriptor_classify ("", 0, "c", &c, &why) == 0);
    CHECK (c.mem == 0 && c.algo == 0 && c.sync == 0);
    CHECK (why && strstr (why, "no evidence"));
    free (why);

    //  SIZE bounds the text: what lies past it is not read; a NUL inside
    //  does not end it.
    const char two[] = "__syncthreads();\0__shfl_xor_sync(0,0,1);";
    CHECK (kf_descriptor_classify (two, 16, "cuda", &c, NULL) == 0);
    CHECK (c.sync == 1);
    CHECK (kf_descriptor_classify (two, sizeof two - 1, "cuda", &c, NULL) == 0);
    CHECK (c.sync == 2);

    //  The explanation names the evidence per dimension.
    const char *k = "__shared__ float t[32]; t[threadIdx.x] = x[i]; __syncthreads(); atomicAdd(p, t[1]);";
    CHECK (kf_descriptor_classify (k, strlen (k), "cuda", &c, &why) == 0);
    CHECK (c.mem == 2 && c.algo == 0 && c.sync == 3);
    CHECK (why && strstr (why, "memory 2") && strstr (why, "input tile") && strstr (why, "`t`"));
    CHECK (why && strstr (why, "synchronisation 3") && strstr (why, "atomicAdd"));
    CHECK (why && strstr (why, "__syncthreads"));
    if (s_verbose && why)
        printf ("%s\n", why);
    free (why);

    //  Dead code under #if 0 is no evidence; the #else branch is.
    const char *dead = "#if 0\n__shared__ float t[4];\n#if 1\natomicAdd(p,1);\n#endif\n#else\n__syncthreads();\n#endif\n";
    CHECK (kf_descriptor_classify (dead, strlen (dead), "cuda", &c, NULL) == 0);
    CHECK (c.mem == 0 && c.sync == 1);

    CHECK (strcmp (kf_descriptor_level_name (0, 2), "shared/local tiling") == 0);
    CHECK (strcmp (kf_descriptor_level_name (3, 0), "?") == 0);
}

//  Classifies fixture NAME and checks its coordinates and explanation:
//  WANT_IN must appear in it, WANT_OUT (NULL: nothing) must not.
static void
s_expect_fixture (const char *name, int mem, int algo, int sync, const char *want_in,
                  const char *want_out)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", FIX, name);
    size_t size = 0;
    char *src = s_slurp (path, &size);
    CHECK (src != NULL);
    if (!src)
        return;
    kf_coords_t c = { -1, -1, -1 };
    char *why = NULL;
    CHECK (kf_descriptor_classify (src, size, s_language (name), &c, &why) == 0);
    bool ok = c.mem == mem && c.algo == algo && c.sync == sync && why
              && (!want_in || strstr (why, want_in)) && (!want_out || !strstr (why, want_out));
    printf ("  %-4s %-34s {%d,%d,%d} want {%d,%d,%d}\n", ok ? "ok" : "MISS", name, c.mem, c.algo,
            c.sync, mem, algo, sync);
    if (!ok)
        fprintf (stderr, "  %s: want \"%s\" in and \"%s\" out of:\n%s\n", name,
                 want_in ? want_in : "", want_out ? want_out : "", why ? why : "(none)");
    CHECK (ok);
    free (why);
    free (src);
}

//  Issue 15's misreadings, one fixture each, and the kernels the narrowed
//  rules must still recognise.
static void
s_test_misreadings (void)
{
    //  Sigmoid and SiLU are the reference written directly; GELU's tanh
    //  as a logistic of 2u is the rewrite.
    s_expect_fixture ("c_sigmoid.c", 0, 0, 0, NULL, "tanh rewritten");
    s_expect_fixture ("cuda_silu.cu", 0, 0, 0, NULL, "tanh rewritten");
    s_expect_fixture ("cuda_gelu_tanh_logistic.cu", 0, 2, 0, "tanh rewritten", NULL);
    //  Softplus is not a log-sum-exp; a row's max + log(sum) is.
    s_expect_fixture ("c_softplus.c", 0, 0, 0, NULL, "log-sum-exp");
    s_expect_fixture ("cuda_logsumexp_warp.cu", 0, 2, 2, "log-sum-exp", NULL);
    //  Three passes are not online; a rescaled running sum is.
    s_expect_fixture ("c_softmax_threepass.c", 0, 0, 0, NULL, "online");
    s_expect_fixture ("cuda_softmax_threepass_warp.cu", 0, 0, 2, NULL, "online");
    s_expect_fixture ("c_softmax_online_simd.c", 1, 2, 0, "online", NULL);
    s_expect_fixture ("cuda_flash_attention_tile.cu", 2, 2, 1, "online", NULL);
    //  Shared memory holding partial sums is scratch; a staged input tile,
    //  also one reached through a pointer into dynamic shared memory, is
    //  tiling.
    s_expect_fixture ("cuda_sum_shared_scratch.cu", 0, 0, 1, "scratch", "tile staged");
    s_expect_fixture ("cuda_softmax_block_shared.cu", 0, 0, 1, "scratch", NULL);
    s_expect_fixture ("ocl_softmax_local.cl", 0, 0, 1, "scratch", NULL);
    s_expect_fixture ("sycl_softmax_local_barrier.cpp", 0, 0, 1, "scratch", NULL);
    s_expect_fixture ("cuda_transpose_dynamic_tile.cu", 2, 0, 1, "input tile staged", NULL);
    s_expect_fixture ("cuda_matmul_tiled.cu", 2, 0, 1, "input tile staged", NULL);
    s_expect_fixture ("ocl_matmul_regtile.cl", 3, 0, 1, "input tile staged", NULL);
    //  A single thread's SIMD shuffles are SIMD, not synchronisation, and
    //  the host's explanation speaks of SIMD, cache blocking and threads.
    s_expect_fixture ("c_row_sum_avx_shuffle.c", 1, 0, 0, "threads 0 (single thread)", "warp");
    s_expect_fixture ("c_row_max_avx.c", 1, 0, 0, "memory (SIMD width, cache blocking) 1 (SIMD vectorised)",
                      "warp");
    s_expect_fixture ("c_dot_omp_reduction.c", 1, 0, 2, "threads 2 (cooperating threads)", NULL);
    s_expect_fixture ("c_matmul_blocked.c", 2, 0, 0, "2 (cache- or register-blocked)", "shared");
    s_expect_fixture ("c_row_sum_omp_atomic.c", 0, 0, 3, "threads 3 (atomics/locks across threads)", NULL);
    s_expect_fixture ("c_gelu_bias_omp.c", 0, 1, 1, "threads 1 (threads (fork-join))", NULL);

    //  Shuffle intrinsics alone, inline: no synchronisation on the host.
    const char *shuf = "__m256 s = _mm256_shuffle_ps (v, v, 0x4e); __m128 t = _mm_movehl_ps (a, a);\n"
                       "v4 w = __builtin_shufflevector (x, x, 1, 0, 3, 2);";
    kf_coords_t c = { -1, -1, -1 };
    CHECK (kf_descriptor_classify (shuf, strlen (shuf), "c", &c, NULL) == 0);
    CHECK (c.mem == 1 && c.sync == 0);
    const char *shuf2 = "v4 w = __builtin_shufflevector (x, x, 1, 0, 3, 2);";
    CHECK (kf_descriptor_classify (shuf2, strlen (shuf2), "c", &c, NULL) == 0);
    CHECK (c.mem == 1 && c.sync == 0);

    //  No host explanation in the corpus uses a GPU word.
    static const char *const host[] = { "c_gelu_bias_omp.c", "c_layernorm_welford.c",
        "c_matmul_blocked.c", "c_matmul_multilevel.c", "c_rmsnorm_lanes.c", "c_row_max_avx.c",
        "c_row_sum_omp_atomic.c", "c_softmax_naive.c", "c_softmax_online_simd.c", "c_sigmoid.c",
        "c_softplus.c", "c_softmax_threepass.c", "c_row_sum_avx_shuffle.c", "c_dot_omp_reduction.c",
        "c_r4_mish_autovec.c", "c_r4_mish_threads.c", "c_r4_mish_avx512.c", "c_r4_gemm_blocked.c",
        "c_r4_gemm_regtile.c", "c_r4_gemm_packed.c", "c_r4_gemm_dynamic.c", "c_r5_gemm_cacheblock.c",
        "c_r5_gemm_atomic_ptr.c", "c_r5_gemm_atomic_int.c", "c_r5_gemm_mutex_next.c",
        "c_r7_gemm_dot.c", "c_r7_gemm_named_tile.c", "c_r7_mish_vecmath.c", "c_r7_mish_chunk_counter.c",
        "c_r10_linear_tile4x4.c", "c_r10_linear_packed.c", "c_r10_logcosh_table.c", NULL };
    static const char *const gpu_words[] = { "warp", "shared", "coalesc", "block barrier",
                                             "sub-group", "global coordination", NULL };
    for (size_t i = 0; host[i]; i++) {
        char path[512];
        snprintf (path, sizeof path, "%s/%s", FIX, host[i]);
        size_t size = 0;
        char *src = s_slurp (path, &size);
        char *why = NULL;
        CHECK (src && kf_descriptor_classify (src, size, "c", &c, &why) == 0 && why);
        for (size_t w = 0; why && gpu_words[w]; w++) {
            bool clean = !strstr (why, gpu_words[w]);
            if (!clean)
                fprintf (stderr, "  %s: GPU word \"%s\" in:\n%s\n", host[i], gpu_words[w], why);
            CHECK (clean);
        }
        free (why);
        free (src);
    }

    //  Level names by target; the numbers are the same for every target.
    CHECK (strcmp (kf_descriptor_level_name_for ("c", 0, 1), "SIMD vectorised") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for ("c", 0, 2), "cache- or register-blocked") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for ("c", 2, 0), "single thread") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for ("c", 2, 1), "threads (fork-join)") == 0);
    CHECK (strcmp (kf_descriptor_dim_name_for ("c", 2), "threads") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for ("cuda", 0, 2), "shared/local tiling") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for (NULL, 2, 2), "warp/sub-group primitives") == 0);
    CHECK (strcmp (kf_descriptor_dim_name_for ("opencl", 2), "synchronisation") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for ("c", 3, 0), "?") == 0);
    CHECK (strcmp (kf_descriptor_level_name_for ("c", 0, 4), "?") == 0);
    CHECK (strcmp (kf_descriptor_dim_name_for ("c", -1), "?") == 0);
}

//  Classifies an inline host snippet and checks its coordinates and the
//  words its explanation must (and must not) contain.
static void
s_expect_host (const char *label, const char *src, int mem, int algo, int sync,
               const char *want_in, const char *want_out)
{
    kf_coords_t c = { -1, -1, -1 };
    char *why = NULL;
    CHECK (kf_descriptor_classify (src, strlen (src), "c", &c, &why) == 0);
    bool ok = c.mem == mem && c.algo == algo && c.sync == sync && why
              && (!want_in || strstr (why, want_in)) && (!want_out || !strstr (why, want_out));
    if (!ok)
        fprintf (stderr, "  %s: {%d,%d,%d} want {%d,%d,%d}:\n%s\n", label, c.mem, c.algo, c.sync,
                 mem, algo, sync, why ? why : "(none)");
    CHECK (ok);
    free (why);
}

//  Round 4 (issue 15): the model's own kernels, misread by rule set 3,
//  and the shapes each new rule must leave alone.
static void
s_test_round4 (void)
{
    //  1. A plain loop GCC -O3 vectorises is SIMD; 2. n / (n + 2), a
    //  polynomial exp, 2^k in the exponent field, rcp14 are reformulated.
    s_expect_fixture ("c_r4_mish_autovec.c", 1, 2, 0, "GCC -O3 vectorises", "0 (scalar)");
    s_expect_fixture ("c_r4_mish_autovec.c", 1, 2, 0, "identity n / (n + 2)", NULL);
    s_expect_fixture ("c_r4_mish_threads.c", 1, 2, 1, "Horner", NULL);
    //  Round 7: approximate math is a note, no level (algorithm 0).
    s_expect_fixture ("c_r4_mish_avx512.c", 1, 0, 0, "exponent field", NULL);
    //  3. One atomic counter handing out blocks is dynamic distribution.
    s_expect_fixture ("c_r4_gemm_dynamic.c", 3, 0, 2, "dynamic work distribution", "atomics/locks");
    //  4. Cache blocks around a register tile, a register tile alone, and
    //  packing into a local panel.
    s_expect_fixture ("c_r4_gemm_blocked.c", 3, 0, 1, "[2] loop stepping by a block size", NULL);
    s_expect_fixture ("c_r4_gemm_regtile.c", 2, 0, 1, "register blocking", "inside cache blocks");
    //  Round 10: its sigmoid on the last k-block's accumulators, before
    //  their store, is a fused epilogue (algorithm 1, rule set 8).
    s_expect_fixture ("c_r4_gemm_packed.c", 3, 1, 1, "packed into a contiguous local buffer", NULL);

    //  What stays as it was.
    s_expect_host ("libm in the loop", "void f (float *restrict y, const float *restrict x, long n)\n"
                   "{ for (long i = 0; i < n; i++) y[i] = expf (x[i]); }", 0, 0, 0, NULL, "vectorises");
    s_expect_host ("float sum", "float f (const float *x, long n)\n"
                   "{ float s = 0; for (long i = 0; i < n; i++) s += x[i]; return s; }", 0, 0, 0, NULL, NULL);
    s_expect_host ("recurrence", "void f (float *y, const float *x, long n)\n"
                   "{ for (long i = 1; i < n; i++) y[i] = y[i - 1] + x[i]; }", 0, 0, 0, NULL, NULL);
    s_expect_host ("plain loop", "void f (float *y, const float *x, long n)\n"
                   "{ for (long i = 0; i < n; i++) { float v = x[i]; y[i] = v > 0 ? v : 0; } }",
                   1, 0, 0, "vectorises", NULL);
    s_expect_host ("two Horner steps", "float p = c0; p = p * r + 0.5f; p = p * r + 1.0f;", 0, 0, 0, NULL,
                   "Horner");
    s_expect_host ("atomic accumulation", "#include <pthread.h>\nvoid *w (void *a) {\n"
                   "  __atomic_fetch_add (&y[i], v, __ATOMIC_RELAXED); return 0; }\n"
                   "void g (void) { pthread_create (&t, 0, w, 0); }", 0, 0, 3, "shared data", "dynamic");
    s_expect_host ("atomic sum", "_Atomic long total; void w (void) { atomic_fetch_add (&total, part); }",
                   0, 0, 3, "shared data", "dynamic");
    s_expect_host ("counter and CAS", "void w (void) { long b = atomic_fetch_add (&next, 1);\n"
                   "  atomic_compare_exchange_strong (&best, &old, b); }", 0, 0, 3, "shared data", NULL);
    s_expect_host ("counter and mutex", "void w (void) { long b = atomic_fetch_add (&next, 1);\n"
                   "  pthread_mutex_lock (&m); }", 0, 0, 3, "lock across threads", NULL);
    s_expect_host ("operators on _Atomic", "_Atomic int n; void w (void) { n += 1; }", 0, 0, 3, NULL, NULL);
    s_expect_host ("omp dynamic", "#pragma omp parallel for schedule(dynamic, 4)\nfor (i = 0; i < n; i++) g (i);",
                   0, 0, 2, "schedule dynamic", NULL);
    s_expect_host ("scalar register tile", "float acc[4][4];", 0, 0, 0, NULL, NULL);
    s_expect_host ("buffer copy unblocked", "float buf[256];\n for (k = 0; k < kc; k++) buf[k] = w[k * K + j];",
                   1, 0, 0, NULL, "packed");
    //  The step names of BLAS blocking.
    s_expect_host ("NB step", "for (jb = 0; jb < n; jb += NB) g (jb);", 2, 0, 0, "block size", NULL);
    s_expect_host ("plain 64 step", "for (jb = 0; jb < n; jb += 64) g (jb);", 0, 0, 0, NULL, NULL);
}

//  Round 5 (issue 15): cache blocking by block sizes of any name, and a
//  work counter claimed by threads however it is written (an __atomic
//  builtin through a pointer, atomic_int with the _explicit calls, a
//  `next` index under a mutex) is dynamic scheduling, not a lock.
static void
s_test_round5 (void)
{
    //  Round 10 (rule set 8): the three with the sigmoid on the sum before
    //  their one store are fused (algorithm 1); the blocked one keeps its
    //  sums in the output and applies it in a pass of its own.
    s_expect_fixture ("c_r5_gemm_cacheblock.c", 2, 0, 0, "loops over blocks of a constant size", "epilogue");
    s_expect_fixture ("c_r5_gemm_atomic_ptr.c", 1, 1, 2, "dynamic work distribution", "atomics");
    s_expect_fixture ("c_r5_gemm_atomic_int.c", 1, 1, 2, "dynamic work distribution", "atomics");
    s_expect_fixture ("c_r5_gemm_mutex_next.c", 1, 1, 2, "dynamic work distribution", "lock across");
    //  What stays: a chunked elementwise loop is no cache blocking, a
    //  vector strip is none either; a lock around an accumulation, a dropped
    //  fetch-add result and a counter beside a flag are synchronisation.
    s_expect_host ("chunked elementwise", "void f (float *y, const float *x, long n)\n"
                   "{ for (long i0 = 0; i0 < n; i0 += CHUNK) { long e = i0 + CHUNK < n ? i0 + CHUNK : n;\n"
                   "  for (long i = i0; i < e; i++) y[i] = x[i] * 2; } }", 1, 0, 0, NULL, "blocks");
    s_expect_host ("vector strip", "for (i = 0; i < n; i += 16) { for (k = 0; k < K; k++) for (l = 0; l < 16; l++) y[i + l] += x[k]; }",
                   0, 0, 0, NULL, "blocks");
    s_expect_host ("literal blocks", "for (j0 = 0; j0 < N; j0 += 48)\n for (i = 0; i < M; i++)\n"
                   "  for (j = j0; j < j0 + 48 && j < N; j++) for (k = 0; k < K; k++) z[i * N + j] += x[i * K + k] * w[j * K + k];",
                   2, 0, 0, "loops over blocks of a constant size", NULL);
    s_expect_host ("lock around a sum", "void *w (void *a) { pthread_mutex_lock (&m); total += part;\n"
                   "  out[0] = total; pthread_mutex_unlock (&m); return 0; }\n"
                   "void g (void) { pthread_create (&t, 0, w, 0); }", 0, 0, 3, "lock across threads", "dynamic");
    s_expect_host ("lock around a call", "void *w (void *a) { pthread_mutex_lock (&m); n++; push (q, v);\n"
                   "  pthread_mutex_unlock (&m); return 0; }", 0, 0, 3, "lock across threads", "dynamic");
    s_expect_host ("dropped fetch-add", "void w (void) { atomic_fetch_add (&done, 1); }", 0, 0, 3,
                   "shared data", "dynamic");
    s_expect_host ("counter and flag", "void w (void) { long b = __atomic_fetch_add (p->next, 1, 0);\n"
                   "  if (__atomic_load_n (&stop, 0)) return; }", 0, 0, 3, "shared data", NULL);
    s_expect_host ("counter tested and claimed", "void w (void) { while (atomic_load (&next) < n\n"
                   "  && (b = atomic_fetch_add (&next, step)) < n) g (b); }", 0, 0, 2, "dynamic", NULL);
}

//  Round 7 (issue 15): register blocking in the forms models write is a
//  level of its own, on the host and per GPU thread; approximate math is
//  a note, not "reformulated" (every vectorised kernel of both runs read
//  so); a chunk counter claimed through a cast is work distribution.
static void
s_test_round7 (void)
{
    //  1. The parent (one accumulator per output) and its register-blocked
    //  child: two cells, and the child's level says register blocking.
    s_expect_fixture ("c_r7_gemm_dot.c", 1, 0, 1, NULL, "register");
    s_expect_fixture ("c_r7_gemm_named_tile.c", 2, 0, 1, "register tile of accumulators (register "
                      "blocking) `c00`", NULL);
    s_expect_fixture ("cuda_matmul_regtile_global.cu", 2, 0, 0, "register tile per thread", NULL);
    s_expect_fixture ("cuda_matmul_naive_2d.cu", 0, 0, 0, NULL, "register");
    s_expect_fixture ("cuda_matmul_regtile.cu", 3, 0, 1, "register tile with shared tiles", NULL);
    //  Named accumulators inside cache blocks: the level above.
    s_expect_host ("named tile in blocks", "__m512 c00, c01, c10, c11, a0, a1, b0, b1;\n"
                   "for (kb = 0; kb < K; kb += KB) for (i = 0; i < M; i += 2) for (k = kb; k < kb + KB; k++) {\n"
                   " c00 = _mm512_fmadd_ps (a0, b0, c00); c01 = _mm512_fmadd_ps (a0, b1, c01);\n"
                   " c10 = _mm512_fmadd_ps (a1, b0, c10); c11 = _mm512_fmadd_ps (a1, b1, c11); }",
                   3, 0, 0, "register tile inside cache blocks", NULL);
    //  What a tile is not: unrolled sums each with its own factors, one
    //  shared scale, scalar accumulators without SIMD on the host.
    s_expect_host ("unrolled k", "__m512 s0, s1, s2, s3;\n"
                   "s0 = _mm512_fmadd_ps (x0, y0, s0); s1 = _mm512_fmadd_ps (x1, y1, s1);\n"
                   "s2 = _mm512_fmadd_ps (x2, y2, s2); s3 = _mm512_fmadd_ps (x3, y3, s3);",
                   1, 0, 0, NULL, "register");
    s_expect_host ("shared scale", "__m512 s0, s1, s2, s3;\n"
                   "s0 = _mm512_fmadd_ps (x0, w, s0); s1 = _mm512_fmadd_ps (x1, w, s1);\n"
                   "s2 = _mm512_fmadd_ps (x2, w, s2); s3 = _mm512_fmadd_ps (x3, w, s3);",
                   1, 0, 0, NULL, "register");
    s_expect_host ("scalar named tile", "float c00, c01, c10, c11;\n"
                   "c00 += a0 * b0; c01 += a0 * b1; c10 += a1 * b0; c11 += a1 * b1;", 0, 0, 0, NULL, NULL);

    //  2. Approximate math is a note; an identity that changes the formula
    //  is still reformulated: both outcomes on one task (mish).
    s_expect_fixture ("c_r7_mish_vecmath.c", 1, 0, 0, "approximate math", "reformulated");
    s_expect_fixture ("c_r4_mish_autovec.c", 1, 2, 0, "identity n / (n + 2)", NULL);
    //  The planner's forms are the descriptors' notes too: coefficients
    //  named as constants, 2^k by a vector shift by 23.
    s_expect_host ("named coefficients", "p = _mm512_fmadd_ps (p, t, c3); p = _mm512_fmadd_ps (p, t, c2);\n"
                   "p = _mm512_fmadd_ps (p, t, c1);", 1, 0, 0, "polynomial (Horner steps)", NULL);
    s_expect_host ("vector shift by 23", "__m512i e = _mm512_slli_epi32 (_mm512_add_epi32 (k, b), 23);",
                   1, 0, 0, "exponent field", NULL);

    //  3. A claimed chunk through a cast is work distribution; a (void)
    //  cast or a condition in front of a fetch-add is no claim.
    s_expect_fixture ("c_r7_mish_chunk_counter.c", 0, 0, 2, "dynamic work distribution", "atomics");
    //  Round 9: the same counter as a struct member, claimed through a
    //  pointer (`&s->next`) and set up on the struct (`atomic_init
    //  (&s.next, 0)`), with memory_order_relaxed.
    s_expect_fixture ("c_r9_mish_chunk_relaxed.c", 1, 0, 2, "dynamic work distribution", "atomics");
    //  ... and as the compile worker reads it, preprocessed: the macros'
    //  wrapped argument and their temporaries (gcc 12's <stdatomic.h>).
    s_expect_host ("expanded counter",
                   "void *w (void *a) { shared_t *s = a; for (;;) { long long c =\n"
                   "  __atomic_fetch_add ((\n &s->next\n ), 1, 0); if (c >= s->n) break; }\n"
                   "  return 0; }\n"
                   "void f (void) { shared_t s; __extension__ ({ __auto_type __atomic_store_ptr = (\n"
                   "  &s.next\n ); __typeof__ ((void)0, *__atomic_store_ptr) __atomic_store_tmp = (\n"
                   "  0\n ); __atomic_store (__atomic_store_ptr, &__atomic_store_tmp, (0)); });\n"
                   "  pthread_t t; pthread_create (&t, 0, w, &s); w (&s); pthread_join (t, 0); }\n",
                   0, 0, 2, "dynamic work distribution", "atomics on shared");
    s_expect_host ("return of a cast claim", "long claim (void) { return (long) atomic_fetch_add (&next, 64); }",
                   0, 0, 2, "dynamic", NULL);
    s_expect_host ("void cast", "void w (void) { (void) atomic_fetch_add (&done, 1); }", 0, 0, 3,
                   "shared data", "dynamic");
    s_expect_host ("if before a fetch-add", "void w (int last) { if (last) atomic_fetch_add (&done, 1); }",
                   0, 0, 3, "shared data", "dynamic");
}

//  Round 10 (issue 15): a packed, k-blocked GEMM whose k-block holds its
//  loop nest in a called micro-kernel and whose 8 x 32 register block is
//  two 1-D arrays of vectors (built: {1,0,0}); a 4 x 4 tile and that GEMM,
//  each applying bias + GELU to its accumulators before the store
//  (algorithm 0); a log-cosh as |x| - ln 2 + log1p(exp(-2|x|)) with a
//  coefficient table (memory 2 by the table's 2-D array, algorithm 0).
static void
s_test_round10 (void)
{
    s_expect_fixture ("c_r10_linear_tile4x4.c", 2, 1, 0, "(fused epilogue) `s`", "inside cache blocks");
    s_expect_fixture ("c_r10_linear_packed.c", 3, 1, 0, "register tile inside cache blocks", NULL);
    s_expect_fixture ("c_r10_linear_packed.c", 3, 1, 0, "(fused epilogue) `v0`", NULL);
    s_expect_fixture ("c_r10_logcosh_table.c", 1, 2, 0, "log1p(exp(-2|x|))", "register");
    //  1. A k-block whose loop nest is in the function it calls; two 1-D
    //  arrays of vector accumulators sharing a row and a broadcast.
    s_expect_host ("block around a call", "static void micro (const float *x, float *y, long k0, long k1)\n"
                   "{ for (long k = k0; k < k1; k++) for (int r = 0; r < 8; r++) y[r] += x[r * 512 + k]; }\n"
                   "void f (const float *x, float *y, long K, long M) { for (long kc = 0; kc < K; kc += 256) {\n"
                   "  long k1 = kc + 256 < K ? kc + 256 : K;\n"
                   "  for (long i0 = 0; i0 < M; i0 += 8) micro (x + i0, y + i0, kc, k1); } }",
                   2, 0, 0, "loops over blocks of a constant size", NULL);
    s_expect_host ("rows of accumulators", "__m512 c0[8], c1[8];\n"
                   "for (k = 0; k < K; k++) { __m512 b0 = _mm512_load_ps (p + 32 * k), b1 = _mm512_load_ps (p + 32 * k + 16);\n"
                   "  for (r = 0; r < 8; r++) { __m512 a = _mm512_set1_ps (x[r * K + k]);\n"
                   "    c0[r] = _mm512_fmadd_ps (a, b0, c0[r]); c1[r] = _mm512_fmadd_ps (a, b1, c1[r]); } }",
                   2, 0, 0, "register tile of accumulators", NULL);
    //  What stays: a chunk calling a one-loop function is no block, a
    //  function calling itself ends; one row of accumulators is 1 x N, a
    //  coefficient table in a 2-D array no tile.
    s_expect_host ("chunk around a call", "static void run (const float *x, float *y, long a, long b)\n"
                   "{ for (long i = a; i < b; i++) y[i] = expf (x[i]); }\n"
                   "static int deep (int d) { return d > 0 ? deep (d - 1) : 0; }\n"
                   "void f (const float *x, float *y, long n) { for (long i0 = 0; i0 < n; i0 += 4096)\n"
                   "  { run (x, y, i0, i0 + 4096 < n ? i0 + 4096 : n); deep (2); } }", 0, 0, 0, NULL, "blocks");
    s_expect_host ("one row of accumulators", "__m512 c0[8];\n"
                   "for (k = 0; k < K; k++) { __m512 b0 = _mm512_load_ps (p + 16 * k);\n"
                   "  for (r = 0; r < 8; r++) c0[r] = _mm512_fmadd_ps (_mm512_set1_ps (x[r * K + k]), b0, c0[r]); }",
                   1, 0, 0, NULL, "register tile");
    s_expect_host ("coefficient table", "float tab[4][16]; __m512 v = _mm512_load_ps (tab[0]);\n"
                   "for (int s = 0; s < 16; s++) { tab[0][s] = c0 * s + 1.0f; tab[1][s] = c1 * s * s; }",
                   1, 0, 0, NULL, "register");
    //  2. An epilogue on the accumulators before the store: scalar, with a
    //  sigmoid written out. Not an epilogue: a pass of its own over the
    //  output, a bias alone, sums kept in the output.
    s_expect_host ("scalar fused epilogue", "void f (float *z, const float *x, const float *w, const float *b, int N, int K)\n"
                   "{ for (int j = 0; j < N; j++) { __m512 acc = _mm512_setzero_ps ();\n"
                   "  for (int k = 0; k < K; k += 16) acc = _mm512_fmadd_ps (_mm512_loadu_ps (x + k), _mm512_loadu_ps (w + j * K + k), acc);\n"
                   "  float v = _mm512_reduce_add_ps (acc) + b[j]; z[j] = 2.5f / (1.0f + expf (-v)) + v; } }",
                   1, 1, 0, "(fused epilogue) `v`", NULL);
    s_expect_host ("epilogue pass", "void f (float *z, const float *x, const float *w, const float *b, int N, int K)\n"
                   "{ for (int j = 0; j < N; j++) { __m512 acc = _mm512_setzero_ps ();\n"
                   "  for (int k = 0; k < K; k += 16) acc = _mm512_fmadd_ps (_mm512_loadu_ps (x + k), _mm512_loadu_ps (w + j * K + k), acc);\n"
                   "  z[j] = _mm512_reduce_add_ps (acc) + b[j]; }\n"
                   "  for (int j = 0; j < N; j++) z[j] = 1.0f / (1.0f + expf (-z[j])); }", 1, 0, 0, NULL, "epilogue");
    s_expect_host ("bias alone", "void f (float *z, const float *x, const float *w, const float *b, int N, int K)\n"
                   "{ for (int j = 0; j < N; j++) { __m512 acc = _mm512_setzero_ps ();\n"
                   "  for (int k = 0; k < K; k += 16) acc = _mm512_fmadd_ps (_mm512_loadu_ps (x + k), _mm512_loadu_ps (w + j * K + k), acc);\n"
                   "  float v = _mm512_reduce_add_ps (acc) + b[j]; z[j] = v; } }", 1, 0, 0, NULL, "epilogue");
    s_expect_host ("sums in the output", "void f (float *z, const float *x, const float *w, const float *b, int N, int K)\n"
                   "{ for (int j = 0; j < N; j++) for (int k = 0; k < K; k++) z[j] += x[k] * w[j * K + k];\n"
                   "  for (int j = 0; j < N; j++) { float v = z[j] + b[j]; z[j] = 1.0f / (1.0f + expf (-v)); } }",
                   0, 0, 0, NULL, "epilogue");
    //  3. The log-cosh identity, scalar and with a natural exp; not it: a
    //  tanh from exp(-2|u|) (nothing added back), log(cosh(x)) itself.
    s_expect_host ("scalar log cosh", "void f (float *y, const float *x, long n) { for (long i = 0; i < n; i++) {\n"
                   "  float a = fabsf (x[i]); y[i] = a + log1pf (expf (-2.0f * a)) - 0.6931472f; } }",
                   0, 2, 0, "log1p(exp(-2|x|))", NULL);
    s_expect_host ("log cosh, natural exp", "__m512 a = _mm512_and_ps (x, mask);\n"
                   "__m512 t = exp16 (_mm512_mul_ps (_mm512_set1_ps (-2.0f), a));\n"
                   "__m512 y = _mm512_add_ps (a, log1p16 (t));", 1, 2, 0, "log1p(exp(-2|x|))", NULL);
    s_expect_host ("tanh from exp(-2|u|)", "__m512 a = _mm512_abs_ps (u);\n"
                   "__m512 e = exp16 (_mm512_mul_ps (a, _mm512_set1_ps (-2.0f)));\n"
                   "__m512 t = _mm512_div_ps (_mm512_sub_ps (one, e), _mm512_add_ps (one, e));", 1, 0, 0, NULL,
                   "log1p");
    s_expect_host ("log of cosh", "void f (float *y, const float *x, long n) { for (long i = 0; i < n; i++)\n"
                   "  y[i] = logf (coshf (x[i])) * 0.8f; }", 0, 0, 0, NULL, "log1p");
}

int
main (void)
{
    const char *root = getenv ("KF_ROOT");
    if (root && chdir (root) != 0) {
        fprintf (stderr, "test_descriptor: cannot enter KF_ROOT %s\n", root);
        return 1;
    }
    s_verbose = getenv ("KF_TEST_VERBOSE") != NULL;
    s_test_strip ();
    s_test_bin ();
    s_test_api ();
    s_test_corpus ();
    s_test_misreadings ();
    s_test_round4 ();
    s_test_round5 ();
    s_test_round7 ();
    s_test_round10 ();
    return kf_test_done ("test_descriptor");
}
