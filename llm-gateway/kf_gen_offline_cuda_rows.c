/*  kf_gen_offline_cuda_rows.c - the offline generator's CUDA row kernels.
 *
 *  Softmax, RMSNorm and LayerNorm for CUDA, the templates the table in
 *  kf_gen_offline_cuda.c points at. Besides the block size, the vector
 *  width and the reduction they tune what matters for rows of thousands
 *  of floats at sizes far beyond the caches:
 *
 *  - HOLD: how many floats of its row a thread may keep in registers. A
 *    row that fits is read from memory once and written once, and all of
 *    a thread's loads are issued before the first is used (bytes in flight
 *    grow with the row: 64 bytes a thread for a 4096-float row at BLOCK
 *    256). The kernel is instantiated for every power-of-two register
 *    count up to HOLD / VEC and the launch picks the smallest that holds
 *    the row. 0 keeps nothing: the loops read the row two or three times.
 *  - ROW: a block per row, or a warp per row (BLOCK / 32 rows a block, the
 *    reductions in shuffles only), for short rows.
 *  - STREAM: the row's last read and the results' stores with the
 *    streaming hints (ld.global.cs / st.global.cs), so what is used once
 *    does not push other data out of L2.
 *
 *  Every point computes the same function for any row length and row
 *  count: a row too long for the registers, or whose length or pointers
 *  do not allow VEC-wide access, takes the loops.
 */
#include "kf_gen_offline_starter.h"

//  Shared by softmax, RMSNorm and LayerNorm, written after the prelude.
#define KF_CUDA_ROWS_TEXT \
    "/* Rows for softmax and the norms. ROW=block gives a row to each block,\n" \
    " * ROW=warp a row to each warp (BLOCK / 32 rows a block), for short rows.\n" \
    " * HOLD is how many floats of its row a thread may keep in registers: a\n" \
    " * row that fits is read from memory once and written once, with all of a\n" \
    " * thread's loads issued before the first is used; a longer row, or one\n" \
    " * whose length or pointers do not allow VEC-wide access, takes the loops\n" \
    " * that read it again from the caches. STREAM=1 reads the rows and writes\n" \
    " * the results with the streaming hints (ld.global.cs / st.global.cs), so\n" \
    " * neither stays in L2 at the expense of the other. */\n" \
    "#define KF_block 0\n" \
    "#define KF_warp 1\n" \
    "#define KF_ROW KF_CAT (KF_, ROW)\n" \
    "#if KF_ROW == KF_warp\n" \
    "#define KF_TPR 32\n" \
    "#else\n" \
    "#define KF_TPR BLOCK\n" \
    "#endif\n" \
    "#define KF_RPB (BLOCK / KF_TPR)\n" \
    "#define KF_MAXC (HOLD / VEC)\n" \
    "#define KF_CLAMP(c) ((c) <= KF_MAXC ? (c) : 0)\n" \
    "\n" \
    "#if STREAM\n" \
    "#define KF_LDS(p) __ldcs (p)\n" \
    "#define KF_STS(p, v) __stcs (p, v)\n" \
    "#else\n" \
    "#define KF_LDS(p) (*(p))\n" \
    "#define KF_STS(p, v) (*(p) = (v))\n" \
    "#endif\n" \
    "\n" \
    "/* VEC floats of a row at P, read or written for the last time. */\n" \
    "__device__ __forceinline__ void\n" \
    "kf_load_last (const float *p, float *v)\n" \
    "{\n" \
    "#if VEC == 4\n" \
    "    float4 t = KF_LDS ((const float4 *) p);\n" \
    "    v[0] = t.x; v[1] = t.y; v[2] = t.z; v[3] = t.w;\n" \
    "#elif VEC == 2\n" \
    "    float2 t = KF_LDS ((const float2 *) p);\n" \
    "    v[0] = t.x; v[1] = t.y;\n" \
    "#else\n" \
    "    v[0] = KF_LDS (p);\n" \
    "#endif\n" \
    "}\n" \
    "\n" \
    "__device__ __forceinline__ void\n" \
    "kf_store_last (float *p, const float *v)\n" \
    "{\n" \
    "#if VEC == 4\n" \
    "    KF_STS ((float4 *) p, make_float4 (v[0], v[1], v[2], v[3]));\n" \
    "#elif VEC == 2\n" \
    "    KF_STS ((float2 *) p, make_float2 (v[0], v[1]));\n" \
    "#else\n" \
    "    KF_STS (p, v[0]);\n" \
    "#endif\n" \
    "}\n" \
    "\n" \
    "/* A sum or maximum over the threads of one row. */\n" \
    "template <bool IS_MAX>\n" \
    "__device__ __forceinline__ float\n" \
    "kf_row_reduce (float v)\n" \
    "{\n" \
    "#if KF_ROW == KF_warp\n" \
    "    for (int off = 16; off > 0; off >>= 1)\n" \
    "        v = kf_op<IS_MAX> (v, __shfl_xor_sync (0xffffffffu, v, off));\n" \
    "    return v;\n" \
    "#else\n" \
    "    return kf_block_reduce<IS_MAX> (v);\n" \
    "#endif\n" \
    "}\n" \
    "\n" \
    "/* Two values reduced together over the threads of one row, one round of\n" \
    " * barriers for both; OP merges a pair into another. */\n" \
    "#if KF_ROW == KF_block && KF_RED == KF_smem\n" \
    "#define KF_PAIR_SLOTS BLOCK\n" \
    "#else\n" \
    "#define KF_PAIR_SLOTS 32\n" \
    "#endif\n" \
    "template <class OP>\n" \
    "__device__ __forceinline__ void\n" \
    "kf_row_reduce2 (float &a, float &b)\n" \
    "{\n" \
    "#if KF_ROW == KF_warp || KF_RED == KF_shfl\n" \
    "    for (int off = 16; off > 0; off >>= 1) {\n" \
    "        float a2 = __shfl_xor_sync (0xffffffffu, a, off);\n" \
    "        float b2 = __shfl_xor_sync (0xffffffffu, b, off);\n" \
    "        OP::merge (a, b, a2, b2);\n" \
    "    }\n" \
    "#endif\n" \
    "#if KF_ROW == KF_block\n" \
    "    __shared__ float pa[KF_PAIR_SLOTS], pb[KF_PAIR_SLOTS];\n" \
    "#if KF_RED == KF_shfl\n" \
    "    if ((threadIdx.x & 31) == 0) {\n" \
    "        pa[threadIdx.x >> 5] = a;\n" \
    "        pb[threadIdx.x >> 5] = b;\n" \
    "    }\n" \
    "    __syncthreads ();\n" \
    "    if (threadIdx.x < 32) {\n" \
    "        a = threadIdx.x < BLOCK / 32 ? pa[threadIdx.x] : OP::id_a ();\n" \
    "        b = threadIdx.x < BLOCK / 32 ? pb[threadIdx.x] : OP::id_b ();\n" \
    "        for (int off = 16; off > 0; off >>= 1) {\n" \
    "            float a2 = __shfl_xor_sync (0xffffffffu, a, off);\n" \
    "            float b2 = __shfl_xor_sync (0xffffffffu, b, off);\n" \
    "            OP::merge (a, b, a2, b2);\n" \
    "        }\n" \
    "        if (threadIdx.x == 0) {\n" \
    "            pa[0] = a;\n" \
    "            pb[0] = b;\n" \
    "        }\n" \
    "    }\n" \
    "#else\n" \
    "    pa[threadIdx.x] = a;\n" \
    "    pb[threadIdx.x] = b;\n" \
    "    __syncthreads ();\n" \
    "    for (int s = BLOCK / 2; s > 0; s >>= 1) {\n" \
    "        if (threadIdx.x < s) {\n" \
    "            float x = pa[threadIdx.x], y = pb[threadIdx.x];\n" \
    "            OP::merge (x, y, pa[threadIdx.x + s], pb[threadIdx.x + s]);\n" \
    "            pa[threadIdx.x] = x;\n" \
    "            pb[threadIdx.x] = y;\n" \
    "        }\n" \
    "        __syncthreads ();\n" \
    "    }\n" \
    "#endif\n" \
    "    __syncthreads ();\n" \
    "    a = pa[0];\n" \
    "    b = pb[0];\n" \
    "    __syncthreads ();    /* pa and pb are reused by the next row */\n" \
    "#endif\n" \
    "}\n" \
    "\n" \
    "struct kf_sum2 {\n" \
    "    static __device__ __forceinline__ float id_a () { return 0.0f; }\n" \
    "    static __device__ __forceinline__ float id_b () { return 0.0f; }\n" \
    "    static __device__ __forceinline__ void\n" \
    "    merge (float &a, float &b, float a2, float b2) { a += a2; b += b2; }\n" \
    "};\n" \
    "\n" \
    "/* Loops over the row of this thread's group: vector steps when VEC-wide\n" \
    " * access is allowed (VW nonzero), single floats otherwise. */\n" \
    "#define KF_ROW_FOR(n, vw, ...)                                             \\\n" \
    "    if (vw) {                                                              \\\n" \
    "        for (int64_t i = (int64_t) t * VEC; i < (n); i += (int64_t) KF_TPR * VEC) { \\\n" \
    "            const int w = VEC;                                             \\\n" \
    "            __VA_ARGS__                                                    \\\n" \
    "        }                                                                  \\\n" \
    "    }                                                                      \\\n" \
    "    else {                                                                 \\\n" \
    "        for (int64_t i = t; i < (n); i += KF_TPR) {                        \\\n" \
    "            const int w = 1;                                               \\\n" \
    "            __VA_ARGS__                                                    \\\n" \
    "        }                                                                  \\\n" \
    "    }\n" \
    "\n" \
    "/* The rows of this block (or of this warp), grid-stride: T is the\n" \
    " * thread's place in its row's group, R the row. */\n" \
    "#define KF_FOR_ROWS(rows)                                                  \\\n" \
    "    const int t = threadIdx.x % KF_TPR;                                    \\\n" \
    "    for (int64_t r = (int64_t) blockIdx.x * KF_RPB + threadIdx.x / KF_TPR; r < (rows); \\\n" \
    "         r += (int64_t) gridDim.x * KF_RPB)\n" \
    "\n" \
    "/* Chunk c of this thread's share of a row held in registers starts at\n" \
    " * float (c * KF_TPR + t) * VEC: neighbouring threads read neighbouring\n" \
    " * vectors. */\n" \
    "#define KF_CHUNK(c) (((c) * KF_TPR + t) * VEC)\n" \
    "\n" \
    "static int\n" \
    "kf_aligned (const void *p)\n" \
    "{\n" \
    "    return (uintptr_t) p % (VEC * sizeof (float)) == 0;\n" \
    "}\n" \
    "\n" \
    "/* Registers for a row of N floats: the smallest power of two C up to\n" \
    " * HOLD / VEC with KF_TPR * VEC * C >= N, or 0 when it does not fit or VEC-\n" \
    " * wide access is not allowed (the loops then). */\n" \
    "static int\n" \
    "kf_chunks (int64_t n, int vw)\n" \
    "{\n" \
    "    for (int c = 1; vw && c <= KF_MAXC; c *= 2)\n" \
    "        if ((int64_t) KF_TPR * VEC * c >= n)\n" \
    "            return c;\n" \
    "    return 0;\n" \
    "}\n" \
    "\n" \
    "/* The kernel instance for C chunks; one launch site, whatever C is. */\n" \
    "#define KF_PICK(kern, K, c)                                                \\\n" \
    "    switch (c) {                                                           \\\n" \
    "    case 1: kern = K<KF_CLAMP (1)>; break;                                 \\\n" \
    "    case 2: kern = K<KF_CLAMP (2)>; break;                                 \\\n" \
    "    case 4: kern = K<KF_CLAMP (4)>; break;                                 \\\n" \
    "    case 8: kern = K<KF_CLAMP (8)>; break;                                 \\\n" \
    "    case 16: kern = K<KF_CLAMP (16)>; break;                               \\\n" \
    "    case 32: kern = K<KF_CLAMP (32)>; break;                               \\\n" \
    "    case 64: kern = K<KF_CLAMP (64)>; break;                               \\\n" \
    "    case 128: kern = K<KF_CLAMP (128)>; break;                             \\\n" \
    "    default: kern = K<0>; break;                                           \\\n" \
    "    }\n" \
    "\n" \
    "static unsigned\n" \
    "kf_grid (int64_t rows)\n" \
    "{\n" \
    "    int64_t groups = (rows + KF_RPB - 1) / KF_RPB;\n" \
    "    return (unsigned) (groups < 0x7fffffff ? groups : 0x7fffffff);\n" \
    "}\n"

const char *const kf_offline_cuda_softmax_text =
    KF_CUDA_ROWS_TEXT
    "#define KF_threepass 0\n"
    "#define KF_online 1\n"
    "#define KF_ALGO KF_CAT (KF_, ALGO)\n"
    "\n"
    "#if KF_ALGO == KF_online\n"
    "/* Online softmax's merge: two (maximum, sum of exponentials relative to\n"
    " * it) pairs become one, each sum rescaled to the larger maximum. */\n"
    "struct kf_maxsum {\n"
    "    static __device__ __forceinline__ float id_a () { return -INFINITY; }\n"
    "    static __device__ __forceinline__ float id_b () { return 0.0f; }\n"
    "    static __device__ __forceinline__ void\n"
    "    merge (float &m, float &s, float m2, float s2)\n"
    "    {\n"
    "        float mx = fmaxf (m, m2);\n"
    "        s = (m == -INFINITY ? 0.0f : s * __expf (m - mx))\n"
    "            + (m2 == -INFINITY ? 0.0f : s2 * __expf (m2 - mx));\n"
    "        m = mx;\n"
    "    }\n"
    "};\n"
    "#endif\n"
    "\n"
    "/* threepass: the row maximum, then the sum of exponentials, then the\n"
    " * output, each its own reduction; online: a thread's maximum and sum are\n"
    " * found together and merged as pairs, one reduction. A row held in\n"
    " * registers is read once either way (online then keeps the exponentials\n"
    " * relative to the thread's own maximum and rescales them once); the\n"
    " * loops read it two or three times. */\n"
    "template <int C>\n"
    "__global__ void __launch_bounds__ (BLOCK)\n"
    "kf_softmax_rows (const float *__restrict__ x, float *__restrict__ y, int64_t rows,\n"
    "                 int64_t n, int vw)\n"
    "{\n"
    "    KF_FOR_ROWS (rows) {\n"
    "        const float *row = x + r * n;\n"
    "        float *out = y + r * n;\n"
    "        if (C > 0) {\n"
    "            float v[(C > 0 ? C : 1) * VEC];\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++) {\n"
    "                if (KF_CHUNK (c) < n)\n"
    "                    kf_load_last (row + KF_CHUNK (c), v + c * VEC);\n"
    "                else\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        v[c * VEC + k] = -INFINITY;\n"
    "            }\n"
    "            float m = -INFINITY, s = 0.0f;\n"
    "#pragma unroll\n"
    "            for (int k = 0; k < C * VEC; k++)\n"
    "                m = fmaxf (m, v[k]);\n"
    "#if KF_ALGO == KF_online\n"
    "#pragma unroll\n"
    "            for (int k = 0; k < C * VEC; k++) {\n"
    "                v[k] = __expf (v[k] - m);\n"
    "                s += v[k];\n"
    "            }\n"
    "            float mx = m;\n"
    "            kf_row_reduce2<kf_maxsum> (mx, s);\n"
    "            float scale = m == -INFINITY ? 0.0f : __expf (m - mx) / s;\n"
    "#else\n"
    "            float mx = kf_row_reduce<true> (m);\n"
    "#pragma unroll\n"
    "            for (int k = 0; k < C * VEC; k++) {\n"
    "                v[k] = __expf (v[k] - mx);\n"
    "                s += v[k];\n"
    "            }\n"
    "            float scale = 1.0f / kf_row_reduce<false> (s);\n"
    "#endif\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++) {\n"
    "                if (KF_CHUNK (c) < n) {\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        v[c * VEC + k] *= scale;\n"
    "                    kf_store_last (out + KF_CHUNK (c), v + c * VEC);\n"
    "                }\n"
    "            }\n"
    "            continue;\n"
    "        }\n"
    "        float m = -INFINITY, s = 0.0f;\n"
    "#if KF_ALGO == KF_online\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];\n"
    "            for (int k = 0; k < w; k++) {\n"
    "                if (u[k] > m) {\n"
    "                    s = s * __expf (m - u[k]) + 1.0f;\n"
    "                    m = u[k];\n"
    "                }\n"
    "                else\n"
    "                    s += __expf (u[k] - m);\n"
    "            }\n"
    "        })\n"
    "        float mx = m;\n"
    "        kf_row_reduce2<kf_maxsum> (mx, s);\n"
    "        float inv = 1.0f / s;\n"
    "#else\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];\n"
    "            for (int k = 0; k < w; k++)\n"
    "                m = fmaxf (m, u[k]);\n"
    "        })\n"
    "        float mx = kf_row_reduce<true> (m);\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];\n"
    "            for (int k = 0; k < w; k++)\n"
    "                s += __expf (u[k] - mx);\n"
    "        })\n"
    "        float inv = 1.0f / kf_row_reduce<false> (s);\n"
    "#endif\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load_last (row + i, u); else u[0] = KF_LDS (row + i);\n"
    "            for (int k = 0; k < w; k++)\n"
    "                u[k] = __expf (u[k] - mx) * inv;\n"
    "            if (w == VEC) kf_store_last (out + i, u); else KF_STS (out + i, u[0]);\n"
    "        })\n"
    "    }\n"
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
    "    if (rows == 0)\n"
    "        return 0;\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    int vw = n % VEC == 0 && kf_aligned (x) && kf_aligned (y);\n"
    "    void (*kern) (const float *, float *, int64_t, int64_t, int);\n"
    "    KF_PICK (kern, kf_softmax_rows, kf_chunks (n, vw))\n"
    "    kern<<<kf_grid (rows), BLOCK, 0, (cudaStream_t) ctx->stream>>> (x, y, rows, n, vw);\n"
    "    KF_LAUNCH_CHECK ();\n"
    "}\n"
    ;

const char *const kf_offline_cuda_rmsnorm_text =
    KF_CUDA_ROWS_TEXT
    "/* The sum of squares reduced over the row's threads, then every element\n"
    " * scaled by the reciprocal root and the weight. A row held in registers is\n"
    " * read once; the weight, the same for every row and so found in the\n"
    " * caches, is fetched with the row when registers allow, its latency then\n"
    " * hidden behind the row's. */\n"
    "template <int C>\n"
    "__global__ void __launch_bounds__ (BLOCK)\n"
    "kf_rmsnorm_rows (const float *__restrict__ x, const float *__restrict__ wt,\n"
    "                 float *__restrict__ y, int64_t rows, int64_t n, float eps, int vw)\n"
    "{\n"
    "    KF_FOR_ROWS (rows) {\n"
    "        const float *row = x + r * n;\n"
    "        float *out = y + r * n;\n"
    "        if (C > 0) {\n"
    "            const bool early = C * VEC <= 32;\n"
    "            float v[(C > 0 ? C : 1) * VEC], g[(C > 0 && C * VEC <= 32 ? C : 1) * VEC];\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++) {\n"
    "                if (KF_CHUNK (c) < n) {\n"
    "                    kf_load_last (row + KF_CHUNK (c), v + c * VEC);\n"
    "                    if (early)\n"
    "                        kf_load (wt + KF_CHUNK (c), g + c * VEC);\n"
    "                }\n"
    "                else\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        v[c * VEC + k] = 0.0f;\n"
    "            }\n"
    "            float ss = 0.0f;\n"
    "#pragma unroll\n"
    "            for (int k = 0; k < C * VEC; k++)\n"
    "                ss += v[k] * v[k];\n"
    "            float inv = rsqrtf (kf_row_reduce<false> (ss) / (float) n + eps);\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++) {\n"
    "                if (KF_CHUNK (c) < n) {\n"
    "                    float gg[VEC];\n"
    "                    if (early)\n"
    "                        for (int k = 0; k < VEC; k++)\n"
    "                            gg[k] = g[c * VEC + k];\n"
    "                    else\n"
    "                        kf_load (wt + KF_CHUNK (c), gg);\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        gg[k] *= v[c * VEC + k] * inv;\n"
    "                    kf_store_last (out + KF_CHUNK (c), gg);\n"
    "                }\n"
    "            }\n"
    "            continue;\n"
    "        }\n"
    "        float ss = 0.0f;\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];\n"
    "            for (int k = 0; k < w; k++)\n"
    "                ss += u[k] * u[k];\n"
    "        })\n"
    "        float inv = rsqrtf (kf_row_reduce<false> (ss) / (float) n + eps);\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC], gg[VEC];\n"
    "            if (w == VEC) { kf_load_last (row + i, u); kf_load (wt + i, gg); }\n"
    "            else { u[0] = KF_LDS (row + i); gg[0] = wt[i]; }\n"
    "            for (int k = 0; k < w; k++)\n"
    "                u[k] = u[k] * inv * gg[k];\n"
    "            if (w == VEC) kf_store_last (out + i, u); else KF_STS (out + i, u[0]);\n"
    "        })\n"
    "    }\n"
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
    "    if (rows == 0)\n"
    "        return 0;\n"
    "    float eps = (float) kf_scalar (ctx, \"eps\", 1e-5);\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    const float *wt = (const float *) in[1].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    int vw = n % VEC == 0 && kf_aligned (x) && kf_aligned (wt) && kf_aligned (y);\n"
    "    void (*kern) (const float *, const float *, float *, int64_t, int64_t, float, int);\n"
    "    KF_PICK (kern, kf_rmsnorm_rows, kf_chunks (n, vw))\n"
    "    kern<<<kf_grid (rows), BLOCK, 0, (cudaStream_t) ctx->stream>>> (x, wt, y, rows, n, eps, vw);\n"
    "    KF_LAUNCH_CHECK ();\n"
    "}\n"
    ;

const char *const kf_offline_cuda_layernorm_text =
    KF_CUDA_ROWS_TEXT
    "#define KF_twopass 0\n"
    "#define KF_sumsq 1\n"
    "#define KF_ALGO KF_CAT (KF_, ALGO)\n"
    "\n"
    "/* twopass: the mean, then the variance of the deviations, two\n"
    " * reductions; sumsq: the sum and the sum of squares of the deviations\n"
    " * from the row's first element, reduced together in one round (the shift\n"
    " * keeps a large mean from cancelling the variance away). A row held in\n"
    " * registers is read once either way; the loops read it two or three\n"
    " * times. gamma and beta, the same for every row and so found in the\n"
    " * caches, are fetched with the row only when a thread holds at most 4\n"
    " * floats of it: more registers would cost rows in flight. */\n"
    "template <int C>\n"
    "__global__ void __launch_bounds__ (BLOCK)\n"
    "kf_layernorm_rows (const float *__restrict__ x, const float *__restrict__ g,\n"
    "                   const float *__restrict__ b, float *__restrict__ y, int64_t rows,\n"
    "                   int64_t n, float eps, int vw)\n"
    "{\n"
    "    KF_FOR_ROWS (rows) {\n"
    "        const float *row = x + r * n;\n"
    "        float *out = y + r * n;\n"
    "        float mean, var;\n"
    "#if KF_ALGO == KF_sumsq\n"
    "        const float shift = row[0];\n"
    "#endif\n"
    "        if (C > 0) {\n"
    "            const bool early = C * VEC <= 4;\n"
    "            float v[(C > 0 ? C : 1) * VEC];\n"
    "            float ge[(C > 0 && C * VEC <= 4 ? C : 1) * VEC];\n"
    "            float be[(C > 0 && C * VEC <= 4 ? C : 1) * VEC];\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++) {\n"
    "                if (KF_CHUNK (c) < n) {\n"
    "                    kf_load_last (row + KF_CHUNK (c), v + c * VEC);\n"
    "                    if (early) {\n"
    "                        kf_load (g + KF_CHUNK (c), ge + c * VEC);\n"
    "                        kf_load (b + KF_CHUNK (c), be + c * VEC);\n"
    "                    }\n"
    "                }\n"
    "            }\n"
    "#if KF_ALGO == KF_sumsq\n"
    "            float s = 0.0f, q = 0.0f;\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++)\n"
    "                if (KF_CHUNK (c) < n)\n"
    "                    for (int k = 0; k < VEC; k++) {\n"
    "                        float d = v[c * VEC + k] - shift;\n"
    "                        s += d;\n"
    "                        q += d * d;\n"
    "                    }\n"
    "            kf_row_reduce2<kf_sum2> (s, q);\n"
    "            float dm = s / (float) n;\n"
    "            mean = shift + dm;\n"
    "            var = fmaxf (q / (float) n - dm * dm, 0.0f);\n"
    "#else\n"
    "            float s = 0.0f, q = 0.0f;\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++)\n"
    "                if (KF_CHUNK (c) < n)\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        s += v[c * VEC + k];\n"
    "            mean = kf_row_reduce<false> (s) / (float) n;\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++)\n"
    "                if (KF_CHUNK (c) < n)\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        q += (v[c * VEC + k] - mean) * (v[c * VEC + k] - mean);\n"
    "            var = kf_row_reduce<false> (q) / (float) n;\n"
    "#endif\n"
    "            float inv = rsqrtf (var + eps);\n"
    "#pragma unroll\n"
    "            for (int c = 0; c < C; c++) {\n"
    "                if (KF_CHUNK (c) < n) {\n"
    "                    float gg[VEC], bb[VEC];\n"
    "                    if (early)\n"
    "                        for (int k = 0; k < VEC; k++) {\n"
    "                            gg[k] = ge[c * VEC + k];\n"
    "                            bb[k] = be[c * VEC + k];\n"
    "                        }\n"
    "                    else {\n"
    "                        kf_load (g + KF_CHUNK (c), gg);\n"
    "                        kf_load (b + KF_CHUNK (c), bb);\n"
    "                    }\n"
    "                    for (int k = 0; k < VEC; k++)\n"
    "                        gg[k] = (v[c * VEC + k] - mean) * inv * gg[k] + bb[k];\n"
    "                    kf_store_last (out + KF_CHUNK (c), gg);\n"
    "                }\n"
    "            }\n"
    "            continue;\n"
    "        }\n"
    "        float s = 0.0f, q = 0.0f;\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];\n"
    "            for (int k = 0; k < w; k++) {\n"
    "#if KF_ALGO == KF_sumsq\n"
    "                float d = u[k] - shift;\n"
    "                s += d;\n"
    "                q += d * d;\n"
    "#else\n"
    "                s += u[k];\n"
    "#endif\n"
    "            }\n"
    "        })\n"
    "#if KF_ALGO == KF_sumsq\n"
    "        kf_row_reduce2<kf_sum2> (s, q);\n"
    "        float dm = s / (float) n;\n"
    "        mean = shift + dm;\n"
    "        var = fmaxf (q / (float) n - dm * dm, 0.0f);\n"
    "#else\n"
    "        mean = kf_row_reduce<false> (s) / (float) n;\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC];\n"
    "            if (w == VEC) kf_load (row + i, u); else u[0] = row[i];\n"
    "            for (int k = 0; k < w; k++)\n"
    "                q += (u[k] - mean) * (u[k] - mean);\n"
    "        })\n"
    "        var = kf_row_reduce<false> (q) / (float) n;\n"
    "#endif\n"
    "        float inv = rsqrtf (var + eps);\n"
    "        KF_ROW_FOR (n, vw, {\n"
    "            float u[VEC], gg[VEC], bb[VEC];\n"
    "            if (w == VEC) { kf_load_last (row + i, u); kf_load (g + i, gg); kf_load (b + i, bb); }\n"
    "            else { u[0] = KF_LDS (row + i); gg[0] = g[i]; bb[0] = b[i]; }\n"
    "            for (int k = 0; k < w; k++)\n"
    "                u[k] = (u[k] - mean) * inv * gg[k] + bb[k];\n"
    "            if (w == VEC) kf_store_last (out + i, u); else KF_STS (out + i, u[0]);\n"
    "        })\n"
    "    }\n"
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
    "    if (rows == 0)\n"
    "        return 0;\n"
    "    float eps = (float) kf_scalar (ctx, \"eps\", 1e-5);\n"
    "    const float *x = (const float *) in[0].data;\n"
    "    const float *g = (const float *) in[1].data;\n"
    "    const float *b = (const float *) in[2].data;\n"
    "    float *y = (float *) out[0].data;\n"
    "    int vw = n % VEC == 0 && kf_aligned (x) && kf_aligned (g) && kf_aligned (b)\n"
    "             && kf_aligned (y);\n"
    "    void (*kern) (const float *, const float *, const float *, float *, int64_t, int64_t,\n"
    "                  float, int);\n"
    "    KF_PICK (kern, kf_layernorm_rows, kf_chunks (n, vw))\n"
    "    kern<<<kf_grid (rows), BLOCK, 0, (cudaStream_t) ctx->stream>>> (x, g, b, y, rows, n, eps, vw);\n"
    "    KF_LAUNCH_CHECK ();\n"
    "}\n"
    ;
