/*  kf_gen_offline.c - the built-in offline generator (not an LLM).
 *
 *  Each starter is one C template: a shared prelude, a body with #if
 *  branches, and a table of parameters whose values pick real
 *  implementation choices (accumulator lanes, single- or multi-pass
 *  algorithms, C library or polynomial exponentials, reciprocal or
 *  division). A candidate is the template with its parameters written as
 *  #defines under #ifndef guards, so the compile worker's tuning phase can
 *  still override them with -DNAME=VALUE from the kf-tune line. The CUDA
 *  variants (language "cuda", in kf_gen_offline_cuda.c) tune block size,
 *  vector width and the reduction (warp shuffles or a shared-memory tree),
 *  and for the row kernels also the row held in registers, rows per block
 *  and streaming loads and stores; the OpenCL C ones
 *  (language "opencl", for Level Zero) work-group size, vector width and
 *  the reduction (local tree, work-group collective or sub-groups), and
 *  carry the kf-launch line the exec worker runs them by. Every point
 *  of every space computes the same function within the evaluation
 *  tolerance; only the speed differs, which is what gives the search
 *  something to find. tests/unit/test_offline.c compiles and checks the C
 *  ones; tests/unit/test_gateway_cuda.c compiles every CUDA branch and
 *  tests/unit/test_spirv.c every OpenCL C branch, to SPIR-V.
 */
#include "kf_str.h"
#include "kf_gen_offline.h"
#include "kf_gen_offline_starter.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  With no parent, one seed in this many proposes the plain baseline, so a
//  run always has the simplest variant to compare the others against.
#define KF_OFFLINE_BASELINE_EVERY 8

typedef kf_offline_param_t s_param_t;
typedef kf_offline_starter_t s_starter_t;

static const char *s_prelude_text =
    "#include \"kf_kernel.h\"\n"
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "#include <string.h>\n"
    "\n"
    "/* Named parameter values (ALGO=online) become numbers through these, so\n"
    " * -DALGO=online on the compiler's command line works as well. */\n"
    "#define KF_CAT_(a, b) a##b\n"
    "#define KF_CAT(a, b) KF_CAT_ (a, b)\n"
    "\n"
    "/* Rows of a contiguous f32 tensor: the last dimension is the row, every\n"
    " * dimension before it counts rows. Returns -1 for anything else. */\n"
    "static inline int\n"
    "kf_rows (const kf_tensor_t *t, int64_t *rows, int64_t *n)\n"
    "{\n"
    "    if (t->dtype != KF_F32 || t->rank < 1 || t->rank > KF_MAX_RANK)\n"
    "        return -1;\n"
    "    int64_t expect = 1;\n"
    "    for (int d = t->rank - 1; d >= 0; d--) {\n"
    "        if (t->shape[d] > 1 && t->strides[d] != expect)\n"
    "            return -1;\n"
    "        expect *= t->shape[d];\n"
    "    }\n"
    "    *n = t->shape[t->rank - 1];\n"
    "    *rows = *n > 0 ? expect / *n : 0;\n"
    "    return *n > 0 ? 0 : -1;\n"
    "}\n"
    "\n"
    "/* e^x for float without the C library: x = k ln2 + r with |r| <= ln2/2,\n"
    " * e^r by a degree-6 polynomial (relative error about 2e-7), 2^k built in\n"
    " * the exponent bits. Branch-free, so loops calling it vectorise. */\n"
    "static inline float\n"
    "kf_exp_poly (float x)\n"
    "{\n"
    "    x = x < -87.0f ? -87.0f : x;\n"
    "    x = x > 88.0f ? 88.0f : x;\n"
    "    /* Adding and removing 1.5 * 2^23 rounds to the nearest integer. */\n"
    "    float k = (x * 1.44269504f + 12582912.0f) - 12582912.0f;\n"
    "    float r = x - k * 0.693145752f;\n"
    "    r = r - k * 1.42860682e-6f;\n"
    "    float p = 1.0f / 720.0f;\n"
    "    p = p * r + 1.0f / 120.0f;\n"
    "    p = p * r + 1.0f / 24.0f;\n"
    "    p = p * r + 1.0f / 6.0f;\n"
    "    p = p * r + 0.5f;\n"
    "    p = p * r + 1.0f;\n"
    "    p = p * r + 1.0f;\n"
    "    int32_t bits = ((int32_t) k + 127) << 23;\n"
    "    float scale;\n"
    "    memcpy (&scale, &bits, sizeof scale);\n"
    "    return p * scale;\n"
    "}\n"
    "\n"
    "#if RECIP\n"
    "#define KF_SCALE(v, s, inv) ((v) * (inv))\n"
    "#else\n"
    "#define KF_SCALE(v, s, inv) ((v) / (s))\n"
    "#endif\n"
    ;

static const char *s_softmax_text =
    "#define KF_twopass 0\n"
    "#define KF_online 1\n"
    "#define KF_threepass 2\n"
    "#define KF_libm 0\n"
    "#define KF_poly 1\n"
    "#define KF_ALGO KF_CAT (KF_, ALGO)\n"
    "#define KF_EXP KF_CAT (KF_, EXP)\n"
    "\n"
    "static inline float\n"
    "kf_exp (float x)\n"
    "{\n"
    "#if KF_EXP == KF_poly\n"
    "    return kf_exp_poly (x);\n"
    "#else\n"
    "    return expf (x);\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* One row. LANES independent accumulators break the dependency chain of\n"
    " * the reductions, which is what lets the compiler use vector registers\n"
    " * without being allowed to reassociate float additions. */\n"
    "static void\n"
    "kf_softmax_row (const float *restrict x, float *restrict y, int64_t n)\n"
    "{\n"
    "    float mx = -INFINITY, sum = 0.0f;\n"
    "    int64_t i;\n"
    "#if KF_ALGO == KF_online\n"
    "    /* Online: one read of the row finds maximum and sum together; a lane\n"
    "     * rescales its partial sum whenever its maximum grows. */\n"
    "    float m[LANES], s[LANES];\n"
    "    for (int l = 0; l < LANES; l++) {\n"
    "        m[l] = -INFINITY;\n"
    "        s[l] = 0.0f;\n"
    "    }\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++) {\n"
    "            float v = x[i + l];\n"
    "            if (v > m[l]) {\n"
    "                s[l] = s[l] * kf_exp (m[l] - v) + 1.0f;\n"
    "                m[l] = v;\n"
    "            }\n"
    "            else\n"
    "                s[l] += kf_exp (v - m[l]);\n"
    "        }\n"
    "    for (; i < n; i++) {\n"
    "        float v = x[i];\n"
    "        if (v > m[0]) {\n"
    "            s[0] = s[0] * kf_exp (m[0] - v) + 1.0f;\n"
    "            m[0] = v;\n"
    "        }\n"
    "        else\n"
    "            s[0] += kf_exp (v - m[0]);\n"
    "    }\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        mx = m[l] > mx ? m[l] : mx;\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        if (s[l] > 0.0f)\n"
    "            sum += s[l] * kf_exp (m[l] - mx);\n"
    "#else\n"
    "    float mv[LANES];\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        mv[l] = -INFINITY;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++)\n"
    "            mv[l] = x[i + l] > mv[l] ? x[i + l] : mv[l];\n"
    "    for (; i < n; i++)\n"
    "        mv[0] = x[i] > mv[0] ? x[i] : mv[0];\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        mx = mv[l] > mx ? mv[l] : mx;\n"
    "    float sv[LANES];\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        sv[l] = 0.0f;\n"
    "#if KF_ALGO == KF_twopass\n"
    "    /* Two passes: the exponentials are stored in Y on the way and only\n"
    "     * scaled afterwards, so each is computed once. */\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++) {\n"
    "            float e = kf_exp (x[i + l] - mx);\n"
    "            y[i + l] = e;\n"
    "            sv[l] += e;\n"
    "        }\n"
    "    for (; i < n; i++) {\n"
    "        float e = kf_exp (x[i] - mx);\n"
    "        y[i] = e;\n"
    "        sv[0] += e;\n"
    "    }\n"
    "#else\n"
    "    /* Three passes: the sum pass writes nothing and the last pass\n"
    "     * recomputes the exponentials, trading arithmetic for stores. */\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++)\n"
    "            sv[l] += kf_exp (x[i + l] - mx);\n"
    "    for (; i < n; i++)\n"
    "        sv[0] += kf_exp (x[i] - mx);\n"
    "#endif\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        sum += sv[l];\n"
    "#endif\n"
    "    float inv = 1.0f / sum;\n"
    "    (void) inv;\n"
    "#if KF_ALGO == KF_twopass\n"
    "    for (i = 0; i < n; i++)\n"
    "        y[i] = KF_SCALE (y[i], sum, inv);\n"
    "#else\n"
    "    for (i = 0; i < n; i++)\n"
    "        y[i] = KF_SCALE (kf_exp (x[i] - mx), sum, inv);\n"
    "#endif\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n;\n"
    "    (void) ctx;\n"
    "    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)\n"
    "        return 1;\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    for (int64_t r = 0; r < rows; r++)\n"
    "        kf_softmax_row (x + r * n, y + r * n, n);\n"
    "    return 0;\n"
    "}\n"
    ;

static const char *s_rmsnorm_text =
    "/* ACC is the accumulator type itself: float keeps twice as many values\n"
    " * per vector register, double keeps more bits for long rows. */\n"
    "static void\n"
    "kf_rmsnorm_row (const float *restrict x, const float *restrict w,\n"
    "                float *restrict y, int64_t n, float eps)\n"
    "{\n"
    "    ACC acc[LANES];\n"
    "    int64_t i;\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        acc[l] = 0;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++)\n"
    "            acc[l] += (ACC) x[i + l] * x[i + l];\n"
    "    for (; i < n; i++)\n"
    "        acc[0] += (ACC) x[i] * x[i];\n"
    "    ACC ss = 0;\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        ss += acc[l];\n"
    "    float rms = sqrtf ((float) (ss / (ACC) n) + eps);\n"
    "    float inv = 1.0f / rms;\n"
    "    (void) inv;\n"
    "    for (i = 0; i < n; i++)\n"
    "        y[i] = KF_SCALE (x[i], rms, inv) * w[i];\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n, w_rows, w_n;\n"
    "    if (n_in < 2 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&in[1], &w_rows, &w_n) || w_rows * w_n != n\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)\n"
    "        return 1;\n"
    "    float eps = (float) kf_scalar (ctx, \"eps\", 1e-5);\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    const float *w = (const float *) in[1].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    for (int64_t r = 0; r < rows; r++)\n"
    "        kf_rmsnorm_row (x + r * n, w, y + r * n, n, eps);\n"
    "    return 0;\n"
    "}\n"
    ;

static const char *s_layernorm_text =
    "#define KF_twopass 0\n"
    "#define KF_welford 1\n"
    "#define KF_sumsq 2\n"
    "#define KF_ALGO KF_CAT (KF_, ALGO)\n"
    "\n"
    "static void\n"
    "kf_layernorm_row (const float *restrict x, const float *restrict g,\n"
    "                  const float *restrict b, float *restrict y, int64_t n,\n"
    "                  float eps)\n"
    "{\n"
    "    float mean, var;\n"
    "    int64_t i;\n"
    "#if KF_ALGO == KF_twopass\n"
    "    /* Mean first, then the variance of the deviations: two reads of the\n"
    "     * row, no cancellation when the mean is large. */\n"
    "    float s[LANES], q[LANES];\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        s[l] = q[l] = 0.0f;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++)\n"
    "            s[l] += x[i + l];\n"
    "    for (; i < n; i++)\n"
    "        s[0] += x[i];\n"
    "    float tot = 0.0f;\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        tot += s[l];\n"
    "    mean = tot / (float) n;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++) {\n"
    "            float d = x[i + l] - mean;\n"
    "            q[l] += d * d;\n"
    "        }\n"
    "    for (; i < n; i++) {\n"
    "        float d = x[i] - mean;\n"
    "        q[0] += d * d;\n"
    "    }\n"
    "    float qq = 0.0f;\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        qq += q[l];\n"
    "    var = qq / (float) n;\n"
    "#elif KF_ALGO == KF_welford\n"
    "    /* Welford: one read, stable, but a division per element; lanes are\n"
    "     * merged with Chan's pairwise formula. */\n"
    "    float c[LANES], mu[LANES], m2[LANES];\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        c[l] = mu[l] = m2[l] = 0.0f;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++) {\n"
    "            float v = x[i + l];\n"
    "            c[l] += 1.0f;\n"
    "            float d = v - mu[l];\n"
    "            mu[l] += d / c[l];\n"
    "            m2[l] += d * (v - mu[l]);\n"
    "        }\n"
    "    for (; i < n; i++) {\n"
    "        float v = x[i];\n"
    "        c[0] += 1.0f;\n"
    "        float d = v - mu[0];\n"
    "        mu[0] += d / c[0];\n"
    "        m2[0] += d * (v - mu[0]);\n"
    "    }\n"
    "    float cc = c[0], mm = mu[0], qq = m2[0];\n"
    "    for (int l = 1; l < LANES; l++) {\n"
    "        if (c[l] == 0.0f)\n"
    "            continue;\n"
    "        float nc = cc + c[l];\n"
    "        float d = mu[l] - mm;\n"
    "        mm += d * c[l] / nc;\n"
    "        qq += m2[l] + d * d * cc * c[l] / nc;\n"
    "        cc = nc;\n"
    "    }\n"
    "    mean = mm;\n"
    "    var = qq / (float) n;\n"
    "#else\n"
    "    /* Sum and sum of squares in one read; double accumulators keep the\n"
    "     * E[x^2] - E[x]^2 cancellation harmless for inputs of moderate mean. */\n"
    "    double s[LANES], q[LANES];\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        s[l] = q[l] = 0.0;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++) {\n"
    "            double v = x[i + l];\n"
    "            s[l] += v;\n"
    "            q[l] += v * v;\n"
    "        }\n"
    "    for (; i < n; i++) {\n"
    "        double v = x[i];\n"
    "        s[0] += v;\n"
    "        q[0] += v * v;\n"
    "    }\n"
    "    double ts = 0.0, tq = 0.0;\n"
    "    for (int l = 0; l < LANES; l++) {\n"
    "        ts += s[l];\n"
    "        tq += q[l];\n"
    "    }\n"
    "    double dm = ts / (double) n;\n"
    "    double dv = tq / (double) n - dm * dm;\n"
    "    mean = (float) dm;\n"
    "    var = dv > 0.0 ? (float) dv : 0.0f;\n"
    "#endif\n"
    "    float sd = sqrtf (var + eps);\n"
    "    float inv = 1.0f / sd;\n"
    "    (void) inv;\n"
    "    for (i = 0; i < n; i++)\n"
    "        y[i] = KF_SCALE (x[i] - mean, sd, inv) * g[i] + b[i];\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n, g_rows, g_n, b_rows, b_n;\n"
    "    if (n_in < 3 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&in[1], &g_rows, &g_n) || g_rows * g_n != n\n"
    "        || kf_rows (&in[2], &b_rows, &b_n) || b_rows * b_n != n\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)\n"
    "        return 1;\n"
    "    float eps = (float) kf_scalar (ctx, \"eps\", 1e-5);\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    const float *g = (const float *) in[1].data;\n"
    "    const float *b = (const float *) in[2].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    for (int64_t r = 0; r < rows; r++)\n"
    "        kf_layernorm_row (x + r * n, g, b, y + r * n, n, eps);\n"
    "    return 0;\n"
    "}\n"
    ;

static const char *s_gelu_text =
    "#define KF_libm_tanh 0\n"
    "#define KF_libm_exp 1\n"
    "#define KF_poly_exp 2\n"
    "#define KF_IMPL KF_CAT (KF_, IMPL)\n"
    "\n"
    "/* GELU, tanh form. 0.5 x (1 + tanh(u)) equals x / (1 + e^(-2u)), which\n"
    " * needs one exponential instead of tanh and has no cancellation for\n"
    " * large negative x. */\n"
    "static inline float\n"
    "kf_gelu (float v)\n"
    "{\n"
    "    float u = 0.7978845608f * (v + 0.044715f * v * v * v);\n"
    "#if KF_IMPL == KF_libm_tanh\n"
    "    return 0.5f * v * (1.0f + tanhf (u));\n"
    "#elif KF_IMPL == KF_libm_exp\n"
    "    return v / (1.0f + expf (-2.0f * u));\n"
    "#else\n"
    "    return v / (1.0f + kf_exp_poly (-2.0f * u));\n"
    "#endif\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n;\n"
    "    (void) ctx;\n"
    "    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)\n"
    "        return 1;\n"
    "    const float *restrict x = (const float *) in[0].data;\n"
    "    float *restrict y = (float *) out[0].data;\n"
    "    int64_t total = rows * n, i;\n"
    "    for (i = 0; i + UNROLL <= total; i += UNROLL)\n"
    "        for (int u = 0; u < UNROLL; u++)\n"
    "            y[i + u] = kf_gelu (x[i + u]);\n"
    "    for (; i < total; i++)\n"
    "        y[i] = kf_gelu (x[i]);\n"
    "    return 0;\n"
    "}\n"
    ;

static const char *s_rowred_text =
    "/* KF_REDUCE_MAX is fixed by the task (sum or max), not a tuning choice. */\n"
    "#if KF_REDUCE_MAX\n"
    "#define KF_ACC float\n"
    "#define KF_INIT (-INFINITY)\n"
    "#define KF_STEP(a, v) ((v) > (a) ? (v) : (a))\n"
    "#else\n"
    "#define KF_ACC ACC\n"
    "#define KF_INIT 0\n"
    "#define KF_STEP(a, v) ((a) + (KF_ACC) (v))\n"
    "#endif\n"
    "\n"
    "/* LANES partial results per row: the only way to get vector code for a\n"
    " * float reduction from a compiler that must not reorder additions. */\n"
    "static float\n"
    "kf_reduce_row (const float *restrict x, int64_t n)\n"
    "{\n"
    "    KF_ACC acc[LANES];\n"
    "    int64_t i;\n"
    "    for (int l = 0; l < LANES; l++)\n"
    "        acc[l] = KF_INIT;\n"
    "    for (i = 0; i + LANES <= n; i += LANES)\n"
    "        for (int l = 0; l < LANES; l++)\n"
    "            acc[l] = KF_STEP (acc[l], x[i + l]);\n"
    "    for (; i < n; i++)\n"
    "        acc[0] = KF_STEP (acc[0], x[i]);\n"
    "    KF_ACC r = acc[0];\n"
    "    for (int l = 1; l < LANES; l++)\n"
    "        r = KF_STEP (r, acc[l]);\n"
    "    return (float) r;\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n;\n"
    "    (void) ctx;\n"
    "    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || out_rows * out_n != rows)\n"
    "        return 1;\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    for (int64_t r = 0; r < rows; r++)\n"
    "        y[r] = kf_reduce_row (x + r * n, n);\n"
    "    return 0;\n"
    "}\n"
    ;

//  OpenCL C variants, for Level Zero (language "opencl"): kernels only,
//  launched by the exec worker as their kf-launch line says (docs/intel.md).
//  One work-group per row (a flat range for GELU), with the work-group
//  size, the vector width of loads and stores, and how a work-group
//  reduces (local-memory tree, the OpenCL 2.0 collective, or sub-group
//  reductions) as parameters. The @X@-style names in the launch lines are
//  the task's own tensor names, filled in when the source is written.

static const char *s_opencl_prelude_text =
    "/* Named parameter values (RED=subgroup) become numbers through these, so\n"
    " * -DRED=tree on the compiler's command line works as well. */\n"
    "#define KF_CAT_(a, b) a##b\n"
    "#define KF_CAT(a, b) KF_CAT_ (a, b)\n"
    "#define KF_tree 0\n"
    "#define KF_builtin 1\n"
    "#define KF_subgroup 2\n"
    "#define KF_RED KF_CAT (KF_, RED)\n"
    "\n"
    "#pragma OPENCL EXTENSION cl_khr_subgroups : enable\n"
    "\n"
    "static float\n"
    "kf_op (float a, float b, int is_max)\n"
    "{\n"
    "    return is_max ? fmax (a, b) : a + b;\n"
    "}\n"
    "\n"
    "/* A sum (IS_MAX 0) or maximum over the work-group's WG work-items,\n"
    " * returned to all of them; PART is WG floats of local memory. RED=tree is\n"
    " * the classic local-memory tree, a barrier per halving; RED=builtin the\n"
    " * OpenCL 2.0 work-group collective, which the driver implements as it\n"
    " * sees fit; RED=subgroup reduces each sub-group in registers and only\n"
    " * the sub-group results through local memory. */\n"
    "static float\n"
    "kf_group_reduce (float v, int is_max, __local float *part)\n"
    "{\n"
    "#if KF_RED == KF_builtin\n"
    "    return is_max ? work_group_reduce_max (v) : work_group_reduce_add (v);\n"
    "#elif KF_RED == KF_subgroup\n"
    "    v = is_max ? sub_group_reduce_max (v) : sub_group_reduce_add (v);\n"
    "    if (get_sub_group_local_id () == 0)\n"
    "        part[get_sub_group_id ()] = v;\n"
    "    barrier (CLK_LOCAL_MEM_FENCE);\n"
    "    float r = part[0];\n"
    "    for (uint i = 1; i < get_num_sub_groups (); i++)\n"
    "        r = kf_op (r, part[i], is_max);\n"
    "    barrier (CLK_LOCAL_MEM_FENCE);    /* PART is reused by the next reduction */\n"
    "    return r;\n"
    "#else\n"
    "    uint lid = get_local_id (0);\n"
    "    part[lid] = v;\n"
    "    barrier (CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint s = WG / 2; s > 0; s >>= 1) {\n"
    "        if (lid < s)\n"
    "            part[lid] = kf_op (part[lid], part[lid + s], is_max);\n"
    "        barrier (CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    float r = part[0];\n"
    "    barrier (CLK_LOCAL_MEM_FENCE);    /* PART is reused by the next reduction */\n"
    "    return r;\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* VEC consecutive floats at P + I, and back. vloadn needs only float\n"
    " * alignment, so any row start works. */\n"
    "static void\n"
    "kf_load (const __global float *p, long i, float *v)\n"
    "{\n"
    "#if VEC == 4\n"
    "    float4 t = vload4 (0, p + i);\n"
    "    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;\n"
    "#elif VEC == 2\n"
    "    float2 t = vload2 (0, p + i);\n"
    "    v[0] = t.x; v[1] = t.y;\n"
    "#else\n"
    "    v[0] = p[i];\n"
    "#endif\n"
    "}\n"
    "\n"
    "static void\n"
    "kf_store (__global float *p, long i, const float *v)\n"
    "{\n"
    "#if VEC == 4\n"
    "    vstore4 ((float4) (v[0], v[1], v[2], v[3]), 0, p + i);\n"
    "#elif VEC == 2\n"
    "    vstore2 ((float2) (v[0], v[1]), 0, p + i);\n"
    "#else\n"
    "    p[i] = v[0];\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* Loops a work-group over the N floats of row SRC: VEC at a time while\n"
    " * they fit, then the rest one by one. The body sees v[0..w-1] for the\n"
    " * elements from index i; w is VEC or 1. Variadic because a body has\n"
    " * commas of its own. */\n"
    "#define KF_ROW_LOOP(src, n, ...)                                           \\\n"
    "    for (long i = (long) get_local_id (0) * VEC; i + VEC <= (n);           \\\n"
    "         i += (long) WG * VEC) {                                           \\\n"
    "        const int w = VEC;                                                 \\\n"
    "        float v[VEC];                                                      \\\n"
    "        kf_load ((src), i, v);                                             \\\n"
    "        __VA_ARGS__                                                        \\\n"
    "    }                                                                      \\\n"
    "    for (long i = (n) / VEC * VEC + get_local_id (0); i < (n); i += WG) {  \\\n"
    "        const int w = 1;                                                   \\\n"
    "        float v[VEC];                                                      \\\n"
    "        v[0] = (src)[i];                                                   \\\n"
    "        __VA_ARGS__                                                        \\\n"
    "    }\n"
    "\n"
    "/* Writes v[0..w-1] back to DST at index i, inside KF_ROW_LOOP. */\n"
    "#define KF_ROW_STORE(dst)                                                  \\\n"
    "    if (w == VEC)                                                          \\\n"
    "        kf_store ((dst), i, v);                                            \\\n"
    "    else                                                                   \\\n"
    "        (dst)[i] = v[0];\n"
    ;

static const char *s_opencl_softmax_text =
    "#define KF_threepass 0\n"
    "#define KF_online 1\n"
    "#define KF_ALGO KF_CAT (KF_, ALGO)\n"
    "\n"
    "/* One work-group per row. threepass: maximum, sum of exponentials,\n"
    " * write, three reads of the row; online: each work-item keeps a running\n"
    " * maximum and a sum rescaled when the maximum grows, so one read finds\n"
    " * both. */\n"
    "__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void\n"
    "kf_softmax_rows (const __global float *restrict x, __global float *restrict y, int n)\n"
    "{\n"
    "    __local float part[WG];\n"
    "    const __global float *row = x + (long) get_group_id (0) * n;\n"
    "    __global float *out = y + (long) get_group_id (0) * n;\n"
    "    float m = -INFINITY, s = 0.0f;\n"
    "#if KF_ALGO == KF_online\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++) {\n"
    "            if (v[k] > m) {\n"
    "                s = s * exp (m - v[k]) + 1.0f;\n"
    "                m = v[k];\n"
    "            }\n"
    "            else\n"
    "                s += exp (v[k] - m);\n"
    "        })\n"
    "    float mx = kf_group_reduce (m, 1, part);\n"
    "    float sum = kf_group_reduce (m == -INFINITY ? 0.0f : s * exp (m - mx), 0, part);\n"
    "#else\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            m = fmax (m, v[k]);)\n"
    "    float mx = kf_group_reduce (m, 1, part);\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            s += exp (v[k] - mx);)\n"
    "    float sum = kf_group_reduce (s, 0, part);\n"
    "#endif\n"
    "    float inv = 1.0f / sum;\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            v[k] = exp (v[k] - mx) * inv;\n"
    "        KF_ROW_STORE (out))\n"
    "}\n"
    ;

static const char *s_opencl_rmsnorm_text =
    "/* One work-group per row: the sum of squares, then y = x * rsqrt(mean + eps) * weight. */\n"
    "__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void\n"
    "kf_rmsnorm_rows (const __global float *restrict x, const __global float *restrict weight,\n"
    "                 __global float *restrict y, int n, float eps)\n"
    "{\n"
    "    __local float part[WG];\n"
    "    const __global float *row = x + (long) get_group_id (0) * n;\n"
    "    __global float *out = y + (long) get_group_id (0) * n;\n"
    "    float acc = 0.0f;\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            acc += v[k] * v[k];)\n"
    "    float inv = rsqrt (kf_group_reduce (acc, 0, part) / (float) n + eps);\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        float g[VEC];\n"
    "        if (w == VEC)\n"
    "            kf_load (weight, i, g);\n"
    "        else\n"
    "            g[0] = weight[i];\n"
    "        for (int k = 0; k < w; k++)\n"
    "            v[k] = v[k] * inv * g[k];\n"
    "        KF_ROW_STORE (out))\n"
    "}\n"
    ;

static const char *s_opencl_layernorm_text =
    "#define KF_twopass 0\n"
    "#define KF_sumsq 1\n"
    "#define KF_ALGO KF_CAT (KF_, ALGO)\n"
    "\n"
    "/* One work-group per row. twopass: the mean, then the variance of the\n"
    " * deviations (two reads, no cancellation); sumsq: sum and sum of squares\n"
    " * in one read (cancels when the mean is large against the spread). */\n"
    "__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void\n"
    "kf_layernorm_rows (const __global float *restrict x, const __global float *restrict gamma,\n"
    "                   const __global float *restrict beta, __global float *restrict y, int n,\n"
    "                   float eps)\n"
    "{\n"
    "    __local float part[WG];\n"
    "    const __global float *row = x + (long) get_group_id (0) * n;\n"
    "    __global float *out = y + (long) get_group_id (0) * n;\n"
    "    float s = 0.0f, q = 0.0f;\n"
    "#if KF_ALGO == KF_sumsq\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++) {\n"
    "            s += v[k];\n"
    "            q += v[k] * v[k];\n"
    "        })\n"
    "    float mean = kf_group_reduce (s, 0, part) / (float) n;\n"
    "    float var = fmax (kf_group_reduce (q, 0, part) / (float) n - mean * mean, 0.0f);\n"
    "#else\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            s += v[k];)\n"
    "    float mean = kf_group_reduce (s, 0, part) / (float) n;\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            q += (v[k] - mean) * (v[k] - mean);)\n"
    "    float var = kf_group_reduce (q, 0, part) / (float) n;\n"
    "#endif\n"
    "    float inv = rsqrt (var + eps);\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        float g[VEC], b[VEC];\n"
    "        if (w == VEC) {\n"
    "            kf_load (gamma, i, g);\n"
    "            kf_load (beta, i, b);\n"
    "        }\n"
    "        else {\n"
    "            g[0] = gamma[i];\n"
    "            b[0] = beta[i];\n"
    "        }\n"
    "        for (int k = 0; k < w; k++)\n"
    "            v[k] = (v[k] - mean) * inv * g[k] + b[k];\n"
    "        KF_ROW_STORE (out))\n"
    "}\n"
    ;

static const char *s_opencl_gelu_text =
    "#define KF_tanh 0\n"
    "#define KF_exp 1\n"
    "#define KF_native 2\n"
    "#define KF_IMPL KF_CAT (KF_, IMPL)\n"
    "\n"
    "/* GELU, tanh form. 0.5 v (1 + tanh(u)) equals v / (1 + e^(-2u)): one\n"
    " * exponential instead of tanh; IMPL=native uses the device's fast\n"
    " * native_exp, accurate to a few ulp on Intel GPUs. */\n"
    "static float\n"
    "kf_gelu (float v)\n"
    "{\n"
    "    float u = 0.7978845608f * (v + 0.044715f * v * v * v);\n"
    "#if KF_IMPL == KF_tanh\n"
    "    return 0.5f * v * (1.0f + tanh (u));\n"
    "#elif KF_IMPL == KF_exp\n"
    "    return v / (1.0f + exp (-2.0f * u));\n"
    "#else\n"
    "    return v / (1.0f + native_exp (-2.0f * u));\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* VEC elements per work-item; the last work-items take the tail one by one. */\n"
    "__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void\n"
    "kf_gelu_all (const __global float *restrict x, __global float *restrict y, long total)\n"
    "{\n"
    "    long i = (long) get_global_id (0) * VEC;\n"
    "    if (i + VEC <= total) {\n"
    "        float v[VEC];\n"
    "        kf_load (x, i, v);\n"
    "        for (int k = 0; k < VEC; k++)\n"
    "            v[k] = kf_gelu (v[k]);\n"
    "        kf_store (y, i, v);\n"
    "    }\n"
    "    else\n"
    "        for (; i < total; i++)\n"
    "            y[i] = kf_gelu (x[i]);\n"
    "}\n"
    ;

static const char *s_opencl_rowred_text =
    "/* KF_REDUCE_MAX is fixed by the task (sum or max), not a tuning choice.\n"
    " * One work-group per row; work-item 0 writes the row's result. */\n"
    "__kernel __attribute__ ((reqd_work_group_size (WG, 1, 1))) void\n"
    "kf_reduce_rows (const __global float *restrict x, __global float *restrict y, int n)\n"
    "{\n"
    "    __local float part[WG];\n"
    "    const __global float *row = x + (long) get_group_id (0) * n;\n"
    "    float acc = KF_REDUCE_MAX ? -INFINITY : 0.0f;\n"
    "    KF_ROW_LOOP (row, n,\n"
    "        for (int k = 0; k < w; k++)\n"
    "            acc = kf_op (acc, v[k], KF_REDUCE_MAX);)\n"
    "    float r = kf_group_reduce (acc, KF_REDUCE_MAX, part);\n"
    "    if (get_local_id (0) == 0)\n"
    "        y[get_group_id (0)] = r;\n"
    "}\n"
    ;

static const s_starter_t s_starters[] = {
    { "softmax", "row softmax over the last dimension", 1, "x", NULL, &s_softmax_text,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ALGO", { "threepass", "twopass", "online", NULL } },
        { "EXP", { "libm", "poly", NULL } },
        { "RECIP", { "0", "1", NULL } } } },
    { "rmsnorm", "RMS norm over the last dimension, times weight", 2, "x, weight", NULL,
      &s_rmsnorm_text,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ACC", { "double", "float", NULL } },
        { "RECIP", { "0", "1", NULL } } } },
    { "layernorm", "layer norm over the last dimension, times gamma plus beta", 3,
      "x, gamma, beta", NULL, &s_layernorm_text,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ALGO", { "twopass", "welford", "sumsq", NULL } },
        { "RECIP", { "0", "1", NULL } } } },
    { "gelu", "GELU (tanh form), elementwise", 1, "x", NULL, &s_gelu_text,
      { { "IMPL", { "libm_tanh", "libm_exp", "poly_exp", NULL } },
        { "UNROLL", { "1", "2", "4", "8", NULL } } } },
    { "row_sum", "sum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 0\n", &s_rowred_text,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ACC", { "double", "float", NULL } } } },
    { "row_max", "maximum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 1\n", &s_rowred_text,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } } } },
};

//  The same ops in OpenCL C. WG is a power of two from 64 up (the tree
//  halves it); the plain baseline is 256 work-items, scalar loads and the
//  local-memory tree. Launch lines: X, W, B are the task's first three
//  inputs, Y its first output, EPS its scalar eps (or 1e-5 without one).
#define KF_CL_WG { "WG", { "256", "64", "128", "512", NULL } }
#define KF_CL_VEC { "VEC", { "1", "2", "4", NULL } }
#define KF_CL_RED { "RED", { "tree", "builtin", "subgroup", NULL } }
#define KF_CL_ROWS "global=rows(@X@) * WG local=WG"

static const s_starter_t s_opencl_starters[] = {
    { "softmax", "row softmax over the last dimension", 1, "x", NULL, &s_opencl_softmax_text,
      { KF_CL_WG, KF_CL_VEC, KF_CL_RED, { "ALGO", { "threepass", "online", NULL } } } },
    { "rmsnorm", "RMS norm over the last dimension, times weight", 2, "x, weight", NULL,
      &s_opencl_rmsnorm_text, { KF_CL_WG, KF_CL_VEC, KF_CL_RED } },
    { "layernorm", "layer norm over the last dimension, times gamma plus beta", 3,
      "x, gamma, beta", NULL, &s_opencl_layernorm_text,
      { KF_CL_WG, KF_CL_VEC, KF_CL_RED, { "ALGO", { "twopass", "sumsq", NULL } } } },
    { "gelu", "GELU (tanh form), elementwise", 1, "x", NULL, &s_opencl_gelu_text,
      { KF_CL_WG, KF_CL_VEC, { "IMPL", { "tanh", "exp", "native", NULL } } } },
    { "row_sum", "sum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 0\n", &s_opencl_rowred_text, { KF_CL_WG, KF_CL_VEC, KF_CL_RED } },
    { "row_max", "maximum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 1\n", &s_opencl_rowred_text, { KF_CL_WG, KF_CL_VEC, KF_CL_RED } },
};

//  The kf-launch line of each OpenCL starter, in the order of the table.
static const char *const s_opencl_launch[] = {
    "kf_softmax_rows(@X@, @Y@, cols(@X@)) " KF_CL_ROWS,
    "kf_rmsnorm_rows(@X@, @W@, @Y@, cols(@X@), @EPS@) " KF_CL_ROWS,
    "kf_layernorm_rows(@X@, @W@, @B@, @Y@, cols(@X@), @EPS@) " KF_CL_ROWS,
    "kf_gelu_all(@X@, @Y@, numel(@X@):long) global=round_up(cdiv(numel(@X@), VEC), WG)"
    " local=WG",
    "kf_reduce_rows(@X@, @Y@, cols(@X@)) " KF_CL_ROWS,
    "kf_reduce_rows(@X@, @Y@, cols(@X@)) " KF_CL_ROWS,
};

static int
s_n_params (const s_starter_t *st)
{
    int n = 0;
    while (n < KF_OFFLINE_MAX_PARAMS && st->params[n].name)
        n++;
    return n;
}

static int
s_n_values (const s_param_t *p)
{
    int n = 0;
    while (n < KF_OFFLINE_MAX_VALUES && p->values[n])
        n++;
    return n;
}

static bool
s_is_cuda (const char *language)
{
    return language && strcmp (language, "cuda") == 0;
}

static bool
s_is_opencl (const char *language)
{
    return language && strcmp (language, "opencl") == 0;
}

static const s_starter_t *
s_find_starter (const char *key, const char *language)
{
    const s_starter_t *table = s_is_cuda (language) ? kf_offline_cuda_starters
                               : s_is_opencl (language) ? s_opencl_starters : s_starters;
    size_t n = s_is_cuda (language) ? kf_offline_cuda_n_starters
               : s_is_opencl (language) ? sizeof s_opencl_starters / sizeof s_opencl_starters[0]
                                        : sizeof s_starters / sizeof s_starters[0];
    for (size_t i = 0; i < n; i++)
        if (strcmp (table[i].key, key) == 0)
            return &table[i];
    return NULL;
}

//  The starter for a task: by op, refined by the op's attributes (which
//  activation, which reduction).
static const s_starter_t *
s_starter_for (json_t *task, const char *language, char **err)
{
    const char *op = json_string_value (json_object_get (task, "op"));
    if (!op) {
        kf_fail (err, "offline generator: the task has no op");
        return NULL;
    }
    json_t *attrs = json_object_get (task, "attributes");
    const char *key = op;
    if (strcmp (op, "activation") == 0) {
        key = json_string_value (json_object_get (attrs, "fn"));
        if (!key) {
            kf_fail (err, "offline generator: an activation task needs attributes.fn "
                         "(the offline generator knows gelu)");
            return NULL;
        }
        if (strcmp (key, "gelu") != 0) {
            kf_fail (err, "offline generator has no starter kernel for activation '%s'", key);
            return NULL;
        }
    }
    else if (strcmp (op, "row_reduction") == 0) {
        const char *reduce = json_string_value (json_object_get (attrs, "reduce"));
        if (!reduce || strcmp (reduce, "sum") == 0)
            key = "row_sum";
        else if (strcmp (reduce, "max") == 0)
            key = "row_max";
        else {
            kf_fail (err, "offline generator has no starter kernel for row_reduction '%s'",
                    reduce);
            return NULL;
        }
    }
    const s_starter_t *st = s_find_starter (key, language);
    if (!st)
        kf_fail (err, "offline generator has no starter kernel for op '%s'", op);
    return st;
}

//  The starters read f32 tensors in a fixed order; refuse a task they
//  would misread, rather than propose kernels that can only fail.
static int
s_check_task (const s_starter_t *st, json_t *task, char **err)
{
    json_t *inputs = json_object_get (task, "inputs");
    json_t *outputs = json_object_get (task, "outputs");
    if ((int) json_array_size (inputs) < st->n_inputs || json_array_size (outputs) < 1)
        return kf_fail (err, "offline generator: the %s starter needs inputs (%s) and one output",
                       st->key, st->inputs_help);
    const char *lists[] = { "inputs", "outputs" };
    for (int k = 0; k < 2; k++) {
        json_t *list = json_object_get (task, lists[k]);
        for (size_t i = 0; i < json_array_size (list); i++) {
            const char *dt = json_string_value (json_object_get (json_array_get (list, i), "dtype"));
            if (!dt || strcmp (dt, "f32") != 0)
                return kf_fail (err, "offline generator: %s[%zu] is %s; its starters are f32 only",
                               lists[k], i, dt ? dt : "untyped");
        }
    }
    return 0;
}

//  splitmix64: small, fast, and the same on every platform, which the
//  determinism promise needs (rand() is not).
static uint64_t
s_next (uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static uint64_t
s_fnv (const char *s, uint64_t h)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char) *s) * 0x100000001b3ULL;
    return h;
}

//  Finds the kf-params line of SOURCE; returns its text after the colon
//  and sets *LEN to its length up to the closing comment, or NULL.
static const char *
s_params_span (const char *source, size_t *len)
{
    const char *p = source ? strstr (source, "kf-params:") : NULL;
    if (!p)
        return NULL;
    p += strlen ("kf-params:");
    while (*p == ' ' || *p == '\t')
        p++;
    const char *end = p;
    while (*end && *end != '\n' && strncmp (end, "*/", 2) != 0)
        end++;
    while (end > p && (end[-1] == ' ' || end[-1] == '\t'))
        end--;
    *len = (size_t) (end - p);
    return p;
}

char *
kf_offline_params (const char *source)
{
    size_t len;
    const char *p = s_params_span (source, &len);
    return p ? strndup (p, len) : NULL;
}

//  Reads the parent's parameter values into CHOICE. Returns the number of
//  parameters recognised; unknown names and values are skipped, leaving
//  the baseline there.
static int
s_parse_params (const s_starter_t *st, const char *source, int choice[])
{
    char *text = kf_offline_params (source);
    if (!text)
        return 0;
    int found = 0;
    char *save = NULL;
    for (char *tok = strtok_r (text, " \t", &save); tok; tok = strtok_r (NULL, " \t", &save)) {
        char *eq = strchr (tok, '=');
        if (!eq)
            continue;
        *eq = 0;
        for (int i = 0; i < s_n_params (st); i++) {
            if (strcmp (st->params[i].name, tok) != 0)
                continue;
            for (int v = 0; v < s_n_values (&st->params[i]); v++)
                if (strcmp (st->params[i].values[v], eq + 1) == 0) {
                    choice[i] = v;
                    found++;
                }
        }
    }
    free (text);
    return found;
}

//  Changes one or two parameters of CHOICE, each to a different value.
static void
s_mutate (const s_starter_t *st, int choice[], uint64_t *rng)
{
    int movable[KF_OFFLINE_MAX_PARAMS], n = 0;
    for (int i = 0; i < s_n_params (st); i++)
        if (s_n_values (&st->params[i]) > 1)
            movable[n++] = i;
    if (n == 0)
        return;
    int k = 1 + (int) (s_next (rng) % 2);
    if (k > n)
        k = n;
    for (int j = 0; j < k; j++) {
        //  Partial Fisher-Yates: the j-th mutated parameter is distinct.
        int pick = j + (int) (s_next (rng) % (uint64_t) (n - j));
        int tmp = movable[j];
        movable[j] = movable[pick];
        movable[pick] = tmp;
        int i = movable[j];
        int nv = s_n_values (&st->params[i]);
        choice[i] = (choice[i] + 1 + (int) (s_next (rng) % (uint64_t) (nv - 1))) % nv;
    }
}

//  Writes ST's kf-launch line with the task's own names: @X@ @W@ @B@ the
//  first three inputs, @Y@ the first output, @EPS@ the scalar eps, or the
//  C starters' default 1e-5 when the task has none.
static void
s_emit_launch (FILE *f, const s_starter_t *st, json_t *task)
{
    json_t *inputs = json_object_get (task, "inputs");
    const char *x = json_string_value (json_object_get (json_array_get (inputs, 0), "name"));
    const char *w = json_string_value (json_object_get (json_array_get (inputs, 1), "name"));
    const char *b = json_string_value (json_object_get (json_array_get (inputs, 2), "name"));
    const char *y = json_string_value (json_object_get (
        json_array_get (json_object_get (task, "outputs"), 0), "name"));
    bool eps = json_is_number (json_object_get (json_object_get (task, "scalars"), "eps"));
    fputs ("/* kf-launch: ", f);
    for (const char *p = s_opencl_launch[st - s_opencl_starters]; *p; p++) {
        const char *name = NULL;
        size_t skip = 0;
        if (!strncmp (p, "@X@", 3))
            name = x, skip = 3;
        else if (!strncmp (p, "@W@", 3))
            name = w, skip = 3;
        else if (!strncmp (p, "@B@", 3))
            name = b, skip = 3;
        else if (!strncmp (p, "@Y@", 3))
            name = y, skip = 3;
        else if (!strncmp (p, "@EPS@", 5))
            name = eps ? "eps" : "1e-5:float", skip = 5;
        if (skip) {
            fputs (name ? name : "?", f);
            p += skip - 1;
        }
        else
            fputc (*p, f);
    }
    fputs (" */\n", f);
}

static char *
s_emit (const s_starter_t *st, const int choice[], const char *language, json_t *task)
{
    char *buf = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&buf, &size);
    if (!f)
        return NULL;
    int np = s_n_params (st);
    fprintf (f, "/*  %s: %s, for the %s backend.\n"
                " *  Written by the KernelFoundry offline generator, a built-in template\n"
                " *  library, not a language model. The parameters below choose between\n"
                " *  real implementations; each may be overridden with -DNAME=VALUE. */\n",
             st->key, st->title, s_is_cuda (language) ? "CUDA"
                                 : s_is_opencl (language) ? "Level Zero (OpenCL C)" : "host");
    fprintf (f, "/* kf-params:");
    for (int i = 0; i < np; i++)
        fprintf (f, " %s=%s", st->params[i].name, st->params[i].values[choice[i]]);
    fprintf (f, " */\n/* kf-tune:");
    for (int i = 0; i < np; i++) {
        fprintf (f, " %s=", st->params[i].name);
        for (int v = 0; v < s_n_values (&st->params[i]); v++)
            fprintf (f, "%s%s", v ? "," : "", st->params[i].values[v]);
    }
    fprintf (f, " */\n");
    if (s_is_opencl (language))
        s_emit_launch (f, st, task);
    for (int i = 0; i < np; i++)
        fprintf (f, "#ifndef %s\n#define %s %s\n#endif\n", st->params[i].name,
                 st->params[i].name, st->params[i].values[choice[i]]);
    if (st->fixed)
        fputs (st->fixed, f);
    fputs ("\n", f);
    fputs (s_is_cuda (language) ? kf_offline_cuda_prelude_text ()
           : s_is_opencl (language) ? s_opencl_prelude_text : s_prelude_text, f);
    fputs ("\n", f);
    fputs (*st->body, f);
    if (fclose (f) != 0) {
        free (buf);
        return NULL;
    }
    return buf;
}

int
kf_offline_space_size (json_t *task)
{
    const s_starter_t *st = s_starter_for (task, "c", NULL);
    if (!st)
        return -1;
    int size = 1;
    for (int i = 0; i < s_n_params (st); i++)
        size *= s_n_values (&st->params[i]);
    return size;
}

char *
kf_offline_generate (json_t *payload, char **err)
{
    if (err)
        *err = NULL;
    if (!json_is_object (payload)) {
        kf_fail (err, "offline generator: the payload is not an object");
        return NULL;
    }
    json_t *task = json_object_get (payload, "task");
    if (!json_is_object (task)) {
        kf_fail (err, "offline generator: the payload has no task object");
        return NULL;
    }
    const char *language = json_string_value (json_object_get (payload, "language"));
    if (language && strcmp (language, "c") != 0 && !s_is_cuda (language)
        && !s_is_opencl (language)) {
        kf_fail (err, "offline generator writes C (host), CUDA and OpenCL C only, not '%s'",
                 language);
        return NULL;
    }
    json_t *seed_json = json_object_get (payload, "seed");
    if (seed_json && !json_is_integer (seed_json)) {
        kf_fail (err, "offline generator: seed must be an integer");
        return NULL;
    }
    uint64_t seed = (uint64_t) json_integer_value (seed_json);
    const s_starter_t *st = s_starter_for (task, language, err);
    if (!st || s_check_task (st, task, err))
        return NULL;

    int choice[KF_OFFLINE_MAX_PARAMS] = { 0 };
    const char *parent = json_string_value (
        json_object_get (json_object_get (payload, "parent"), "source"));
    char *parent_params = kf_offline_params (parent);
    uint64_t rng = seed ^ s_fnv (st->key, 0xcbf29ce484222325ULL);
    rng ^= s_fnv (parent_params, 0x84222325cbf29ce4ULL);
    free (parent_params);

    //  A parent written by someone else (an LLM, the task's initial
    //  kernel) has no kf-params we know: start afresh from the seed then.
    //  Asked for the baseline (a run's first candidate): every parameter
    //  at its plainest, the point the search has to improve on.
    bool baseline = json_is_true (json_object_get (payload, "baseline"));
    if (baseline)
        ;
    else if (parent && s_parse_params (st, parent, choice) > 0)
        s_mutate (st, choice, &rng);
    else if (seed % KF_OFFLINE_BASELINE_EVERY != 0) {
        for (int i = 0; i < s_n_params (st); i++)
            choice[i] = (int) (s_next (&rng) % (uint64_t) s_n_values (&st->params[i]));
    }
    char *source = s_emit (st, choice, language, task);
    if (!source)
        kf_fail (err, "offline generator: out of memory");
    return source;
}
