/*  kf_gen_offline_cuda.c - the offline generator's CUDA starters.
 *
 *  The text of each CUDA template and the table of its parameters; the
 *  generator (kf_gen_offline.c) picks a point and writes it out. GELU and
 *  the row reductions give a block to each row (a grid-stride loop for
 *  GELU) and tune the block size, the vector width and the reduction.
 *  Softmax, RMSNorm and LayerNorm add what matters for rows of thousands
 *  of floats at sizes far beyond the caches: whether a thread keeps its
 *  share of the row in registers (HOLD; then the row is read from memory
 *  once and written once, every load issued before the first is used),
 *  whether a row belongs to a block or to a warp (ROW), and whether rows
 *  and results move with the streaming cache hints (STREAM). Every point
 *  computes the same function for any row length and row count; a row that
 *  does not fit the registers, or whose length or pointers do not allow
 *  vector access, takes loops that read it again from the caches.
 *  tests/unit/test_gateway_cuda.c compiles every value of every parameter.
 */
#include "kf_gen_offline_starter.h"

#include <stddef.h>

static const char *s_cuda_prelude_text =
    "#include \"kf_kernel.h\"\n"
    "#include <cuda_runtime.h>\n"
    "#include <math.h>\n"
    "#include <stdint.h>\n"
    "\n"
    "/* Named parameter values (RED=shfl) become numbers through these, so\n"
    " * -DRED=smem on the compiler's command line works as well. */\n"
    "#define KF_CAT_(a, b) a##b\n"
    "#define KF_CAT(a, b) KF_CAT_ (a, b)\n"
    "#define KF_shfl 0\n"
    "#define KF_smem 1\n"
    "#define KF_RED KF_CAT (KF_, RED)\n"
    "\n"
    "/* Rows of a contiguous f32 tensor: the last dimension is the row, every\n"
    " * dimension before it counts rows. Returns -1 for anything else. */\n"
    "static int\n"
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
    "template <bool IS_MAX>\n"
    "__device__ __forceinline__ float\n"
    "kf_op (float a, float b)\n"
    "{\n"
    "    return IS_MAX ? fmaxf (a, b) : a + b;\n"
    "}\n"
    "\n"
    "/* A sum or maximum over the block's BLOCK threads, returned to all of\n"
    " * them. RED=shfl reduces each warp in registers with shuffles and only\n"
    " * the 32 warp results through shared memory; RED=smem is the classic\n"
    " * shared-memory tree, a barrier per halving. */\n"
    "template <bool IS_MAX>\n"
    "__device__ float\n"
    "kf_block_reduce (float v)\n"
    "{\n"
    "    __shared__ float part[BLOCK];\n"
    "#if KF_RED == KF_shfl\n"
    "    for (int off = 16; off > 0; off >>= 1)\n"
    "        v = kf_op<IS_MAX> (v, __shfl_xor_sync (0xffffffffu, v, off));\n"
    "    if ((threadIdx.x & 31) == 0)\n"
    "        part[threadIdx.x >> 5] = v;\n"
    "    __syncthreads ();\n"
    "    if (threadIdx.x < 32) {\n"
    "        float w = threadIdx.x < BLOCK / 32 ? part[threadIdx.x] : (IS_MAX ? -INFINITY : 0.0f);\n"
    "        for (int off = 16; off > 0; off >>= 1)\n"
    "            w = kf_op<IS_MAX> (w, __shfl_xor_sync (0xffffffffu, w, off));\n"
    "        if (threadIdx.x == 0)\n"
    "            part[0] = w;\n"
    "    }\n"
    "#else\n"
    "    part[threadIdx.x] = v;\n"
    "    __syncthreads ();\n"
    "    for (int s = BLOCK / 2; s > 0; s >>= 1) {\n"
    "        if (threadIdx.x < s)\n"
    "            part[threadIdx.x] = kf_op<IS_MAX> (part[threadIdx.x], part[threadIdx.x + s]);\n"
    "        __syncthreads ();\n"
    "    }\n"
    "#endif\n"
    "    __syncthreads ();\n"
    "    float r = part[0];\n"
    "    __syncthreads ();    /* part is reused by the next reduction */\n"
    "    return r;\n"
    "}\n"
    "\n"
    "/* VEC consecutive floats at P (P aligned to VEC floats). */\n"
    "__device__ __forceinline__ void\n"
    "kf_load (const float *p, float *v)\n"
    "{\n"
    "#if VEC == 4\n"
    "    float4 t = *(const float4 *) p;\n"
    "    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;\n"
    "#elif VEC == 2\n"
    "    float2 t = *(const float2 *) p;\n"
    "    v[0] = t.x; v[1] = t.y;\n"
    "#else\n"
    "    v[0] = p[0];\n"
    "#endif\n"
    "}\n"
    "\n"
    "__device__ __forceinline__ void\n"
    "kf_store (float *p, const float *v)\n"
    "{\n"
    "#if VEC == 4\n"
    "    *(float4 *) p = make_float4 (v[0], v[1], v[2], v[3]);\n"
    "#elif VEC == 2\n"
    "    *(float2 *) p = make_float2 (v[0], v[1]);\n"
    "#else\n"
    "    p[0] = v[0];\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* Loops over a row: vector loads when the row length allows (every row\n"
    " * then starts aligned), one element at a time otherwise. The body sees\n"
    " * v[0..w-1] at index i; W is VEC or 1. Variadic because a body has\n"
    " * commas of its own. */\n"
    "#define KF_ROW_LOOP(n, ...)                                                \\\n"
    "    if ((n) % VEC == 0) {                                                  \\\n"
    "        for (int64_t i = (int64_t) threadIdx.x * VEC; i < (n); i += (int64_t) BLOCK * VEC) { \\\n"
    "            const int w = VEC;                                             \\\n"
    "            __VA_ARGS__                                                    \\\n"
    "        }                                                                  \\\n"
    "    }                                                                      \\\n"
    "    else {                                                                 \\\n"
    "        for (int64_t i = threadIdx.x; i < (n); i += BLOCK) {               \\\n"
    "            const int w = 1;                                               \\\n"
    "            __VA_ARGS__                                                    \\\n"
    "        }                                                                  \\\n"
    "    }\n"
    "\n"
    "#define KF_LAUNCH_CHECK()                                                  \\\n"
    "    return cudaGetLastError () == cudaSuccess ? 0 : 1\n"
    ;

static const char *s_cuda_gelu_text =
    "#define KF_tanh 0\n"
    "#define KF_fastexp 1\n"
    "#define KF_IMPL KF_CAT (KF_, IMPL)\n"
    "\n"
    "/* GELU, tanh form. fastexp rewrites 0.5 v (1 + tanh u) as\n"
    " * v / (1 + e^(-2u)) with the hardware exponential (__expf), one special-\n"
    " * function op instead of tanhf's longer sequence. */\n"
    "__device__ __forceinline__ float\n"
    "kf_gelu (float v)\n"
    "{\n"
    "    float u = 0.7978845608f * (v + 0.044715f * v * v * v);\n"
    "#if KF_IMPL == KF_fastexp\n"
    "    return v / (1.0f + __expf (-2.0f * u));\n"
    "#else\n"
    "    return 0.5f * v * (1.0f + tanhf (u));\n"
    "#endif\n"
    "}\n"
    "\n"
    "/* Grid-stride over the whole tensor, VEC elements per thread step. */\n"
    "__global__ void __launch_bounds__ (BLOCK)\n"
    "kf_gelu_all (const float *__restrict__ x, float *__restrict__ y, int64_t total)\n"
    "{\n"
    "    int64_t stride = (int64_t) gridDim.x * BLOCK * VEC;\n"
    "    int64_t vec_end = total - total % VEC;\n"
    "    for (int64_t i = ((int64_t) blockIdx.x * BLOCK + threadIdx.x) * VEC; i < vec_end; i += stride) {\n"
    "        float v[VEC];\n"
    "        kf_load (x + i, v);\n"
    "        for (int k = 0; k < VEC; k++)\n"
    "            v[k] = kf_gelu (v[k]);\n"
    "        kf_store (y + i, v);\n"
    "    }\n"
    "    for (int64_t i = vec_end + (int64_t) blockIdx.x * BLOCK + threadIdx.x; i < total;\n"
    "         i += (int64_t) gridDim.x * BLOCK)\n"
    "        y[i] = kf_gelu (x[i]);\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n;\n"
    "    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || rows * n != out_rows * out_n)\n"
    "        return 1;\n"
    "    int64_t total = rows * n;\n"
    "    if (total == 0)\n"
    "        return 0;\n"
    "    int64_t blocks = (total / VEC + BLOCK - 1) / BLOCK;\n"
    "    if (blocks > 65536)\n"
    "        blocks = 65536;\n"
    "    if (blocks < 1)\n"
    "        blocks = 1;\n"
    "    kf_gelu_all<<<(unsigned) blocks, BLOCK, 0, (cudaStream_t) ctx->stream>>> (\n"
    "        (const float *) in[0].data, (float *) out[0].data, total);\n"
    "    KF_LAUNCH_CHECK ();\n"
    "}\n"
    ;

static const char *s_cuda_rowred_text =
    "/* KF_REDUCE_MAX is fixed by the task (sum or max), not a tuning choice.\n"
    " * One block per row; each thread reduces its strided share, then the\n"
    " * block reduces the partial results. */\n"
    "__global__ void __launch_bounds__ (BLOCK)\n"
    "kf_reduce_rows (const float *__restrict__ x, float *__restrict__ y, int64_t n)\n"
    "{\n"
    "    const float *row = x + (int64_t) blockIdx.x * n;\n"
    "    float acc = KF_REDUCE_MAX ? -INFINITY : 0.0f;\n"
    "    KF_ROW_LOOP (n, {\n"
    "        float v[VEC];\n"
    "        if (w == VEC) kf_load (row + i, v); else v[0] = row[i];\n"
    "        for (int k = 0; k < w; k++)\n"
    "            acc = kf_op<KF_REDUCE_MAX> (acc, v[k]);\n"
    "    })\n"
    "    float r = kf_block_reduce<KF_REDUCE_MAX> (acc);\n"
    "    if (threadIdx.x == 0)\n"
    "        y[blockIdx.x] = r;\n"
    "}\n"
    "\n"
    "int\n"
    "kf_forward (const kf_tensor_t *in, int n_in, kf_tensor_t *out, int n_out,\n"
    "            const kf_ctx_t *ctx)\n"
    "{\n"
    "    int64_t rows, n, out_rows, out_n;\n"
    "    if (n_in < 1 || n_out < 1 || kf_rows (&in[0], &rows, &n)\n"
    "        || kf_rows (&out[0], &out_rows, &out_n) || out_rows * out_n != rows)\n"
    "        return 1;\n"
    "    if (rows == 0)\n"
    "        return 0;\n"
    "    kf_reduce_rows<<<(unsigned) rows, BLOCK, 0, (cudaStream_t) ctx->stream>>> (\n"
    "        (const float *) in[0].data, (float *) out[0].data, n);\n"
    "    KF_LAUNCH_CHECK ();\n"
    "}\n"
    ;

//  BLOCK must stay a power of two from 64 up (the reductions halve it and
//  count warps); the plain baseline is 256 threads, scalar loads and the
//  shared-memory tree.
#define KF_CUDA_BLOCK { "BLOCK", { "256", "128", "512", "1024", NULL } }
#define KF_CUDA_VEC { "VEC", { "1", "2", "4", NULL } }
#define KF_CUDA_RED { "RED", { "smem", "shfl", NULL } }

//  The row starters' parameters. The baseline (first values) is the plain
//  kernel: a block per row, scalar loads, no row in registers, no hints,
//  the shared-memory tree. The values after it are in the order that
//  matters at 16384 x 4096: the tuning sweep's one-parameter moves take a
//  candidate's next value of each parameter first. At that size HOLD=32
//  or 128 with VEC=4 and BLOCK=256 or 512 holds every row in registers
//  (16 or 8 floats a thread); BLOCK=1024 leaves too few rows in flight on
//  an SM, and ROW=warp needs HOLD=128 (128 floats a lane).
#define KF_CUDA_ROW_BLOCK { "BLOCK", { "256", "512", "128", "1024", NULL } }
#define KF_CUDA_ROW_VEC { "VEC", { "1", "4", "2", NULL } }
#define KF_CUDA_HOLD { "HOLD", { "0", "32", "128", NULL } }
#define KF_CUDA_ROW { "ROW", { "block", "warp", NULL } }
#define KF_CUDA_STREAM { "STREAM", { "0", "1", NULL } }
#define KF_CUDA_ROW_PARAMS KF_CUDA_ROW_BLOCK, KF_CUDA_ROW_VEC, KF_CUDA_HOLD, KF_CUDA_ROW, \
    KF_CUDA_STREAM, KF_CUDA_RED

const kf_offline_starter_t kf_offline_cuda_starters[] = {
    { "softmax", "row softmax over the last dimension", 1, "x", NULL, &kf_offline_cuda_softmax_text,
      { KF_CUDA_ROW_PARAMS, { "ALGO", { "threepass", "online", NULL } } } },
    { "rmsnorm", "RMS norm over the last dimension, times weight", 2, "x, weight", NULL,
      &kf_offline_cuda_rmsnorm_text, { KF_CUDA_ROW_PARAMS } },
    { "layernorm", "layer norm over the last dimension, times gamma plus beta", 3,
      "x, gamma, beta", NULL, &kf_offline_cuda_layernorm_text,
      { KF_CUDA_ROW_PARAMS, { "ALGO", { "twopass", "sumsq", NULL } } } },
    { "gelu", "GELU (tanh form), elementwise", 1, "x", NULL, &s_cuda_gelu_text,
      { KF_CUDA_BLOCK, KF_CUDA_VEC, { "IMPL", { "tanh", "fastexp", NULL } } } },
    { "row_sum", "sum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 0\n", &s_cuda_rowred_text,
      { KF_CUDA_BLOCK, KF_CUDA_VEC, KF_CUDA_RED } },
    { "row_max", "maximum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 1\n", &s_cuda_rowred_text,
      { KF_CUDA_BLOCK, KF_CUDA_VEC, KF_CUDA_RED } },
};

const size_t kf_offline_cuda_n_starters =
    sizeof kf_offline_cuda_starters / sizeof kf_offline_cuda_starters[0];

const char *
kf_offline_cuda_prelude_text (void)
{
    return s_cuda_prelude_text;
}
