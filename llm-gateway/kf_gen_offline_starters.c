/*  kf_gen_offline_starters.c - the offline generator's starters: for each
 *  language, which template serves which op and the parameters it tunes.
 *
 *  The templates themselves are files of llm-gateway/templates/, embedded
 *  at build time (common/embed.sh) as kf_tmpl_NAME_EXT; the README there
 *  says what each placeholder becomes. Every point of every space computes
 *  the same function within the evaluation tolerance; only the speed
 *  differs, which is what gives the search something to find.
 */
#include "kf_gen_offline_starter.h"

extern const char kf_tmpl_prelude_c[], kf_tmpl_softmax_c[], kf_tmpl_rmsnorm_c[],
    kf_tmpl_layernorm_c[], kf_tmpl_gelu_c[], kf_tmpl_row_reduce_c[];
extern const char kf_tmpl_prelude_cu[], kf_tmpl_rows_cu[], kf_tmpl_softmax_cu[],
    kf_tmpl_rmsnorm_cu[], kf_tmpl_layernorm_cu[], kf_tmpl_gelu_cu[], kf_tmpl_row_reduce_cu[];
extern const char kf_tmpl_prelude_cl[], kf_tmpl_softmax_cl[], kf_tmpl_rmsnorm_cl[],
    kf_tmpl_layernorm_cl[], kf_tmpl_gelu_cl[], kf_tmpl_row_reduce_cl[];

//  C for the host backend: accumulator lanes, single- or multi-pass
//  algorithms, C library or polynomial exponentials, reciprocal or
//  division; RMSNorm's rows also on threads started and joined in the
//  call.
static const kf_offline_starter_t s_host_starters[] = {
    { "softmax", "row softmax over the last dimension", 1, "x", NULL, kf_tmpl_softmax_c,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ALGO", { "threepass", "twopass", "online", NULL } },
        { "EXP", { "libm", "poly", NULL } },
        { "RECIP", { "0", "1", NULL } } } },
    { "rmsnorm", "RMS norm over the last dimension, times weight", 2, "x, weight", NULL,
      kf_tmpl_rmsnorm_c,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ACC", { "double", "float", NULL } },
        { "RECIP", { "0", "1", NULL } },
        { "THREADS", { "1", "2", NULL } } } },
    { "layernorm", "layer norm over the last dimension, times gamma plus beta", 3,
      "x, gamma, beta", NULL, kf_tmpl_layernorm_c,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ALGO", { "twopass", "welford", "sumsq", NULL } },
        { "RECIP", { "0", "1", NULL } } } },
    { "gelu", "GELU (tanh form), elementwise", 1, "x", NULL, kf_tmpl_gelu_c,
      { { "IMPL", { "libm_tanh", "libm_exp", "poly_exp", NULL } },
        { "UNROLL", { "1", "2", "4", "8", NULL } } } },
    { "row_sum", "sum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 0\n", kf_tmpl_row_reduce_c,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } },
        { "ACC", { "double", "float", NULL } } } },
    { "row_max", "maximum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 1\n", kf_tmpl_row_reduce_c,
      { { "LANES", { "1", "2", "4", "8", "16", NULL } } } },
};

//  CUDA. GELU and the row reductions give a block to each row (a
//  grid-stride loop for GELU) and tune the block size, the vector width
//  and the reduction (warp shuffles or a shared-memory tree). BLOCK must
//  stay a power of two from 64 up (the reductions halve it and count
//  warps); the plain baseline is 256 threads, scalar loads and the
//  shared-memory tree.
#define KF_CUDA_BLOCK { "BLOCK", { "256", "128", "512", "1024", NULL } }
#define KF_CUDA_VEC { "VEC", { "1", "2", "4", NULL } }
#define KF_CUDA_RED { "RED", { "smem", "shfl", NULL } }

//  Softmax, RMSNorm and LayerNorm (templates/rows.cu) add what matters for
//  rows of thousands of floats at sizes far beyond the caches: whether a
//  thread keeps its share of the row in registers (HOLD), whether a row
//  belongs to a block or to a warp (ROW), and whether rows and results
//  move with the streaming cache hints (STREAM). The baseline (first
//  values) is the plain kernel: a block per row, scalar loads, no row in
//  registers, no hints, the shared-memory tree. The values after it are in
//  the order that matters at 16384 x 4096: the tuning sweep's
//  one-parameter moves take a candidate's next value of each parameter
//  first. At that size HOLD=32 or 128 with VEC=4 and BLOCK=256 or 512
//  holds every row in registers (16 or 8 floats a thread); BLOCK=1024
//  leaves too few rows in flight on an SM, and ROW=warp needs HOLD=128
//  (128 floats a lane).
#define KF_CUDA_ROW_BLOCK { "BLOCK", { "256", "512", "128", "1024", NULL } }
#define KF_CUDA_ROW_VEC { "VEC", { "1", "4", "2", NULL } }
#define KF_CUDA_HOLD { "HOLD", { "0", "32", "128", NULL } }
#define KF_CUDA_ROW { "ROW", { "block", "warp", NULL } }
#define KF_CUDA_STREAM { "STREAM", { "0", "1", NULL } }
#define KF_CUDA_ROW_PARAMS KF_CUDA_ROW_BLOCK, KF_CUDA_ROW_VEC, KF_CUDA_HOLD, KF_CUDA_ROW, \
    KF_CUDA_STREAM, KF_CUDA_RED

static const kf_offline_starter_t s_cuda_starters[] = {
    { "softmax", "row softmax over the last dimension", 1, "x", NULL, kf_tmpl_softmax_cu,
      { KF_CUDA_ROW_PARAMS, { "ALGO", { "threepass", "online", NULL } } } },
    { "rmsnorm", "RMS norm over the last dimension, times weight", 2, "x, weight", NULL,
      kf_tmpl_rmsnorm_cu, { KF_CUDA_ROW_PARAMS } },
    { "layernorm", "layer norm over the last dimension, times gamma plus beta", 3,
      "x, gamma, beta", NULL, kf_tmpl_layernorm_cu,
      { KF_CUDA_ROW_PARAMS, { "ALGO", { "twopass", "sumsq", NULL } } } },
    { "gelu", "GELU (tanh form), elementwise", 1, "x", NULL, kf_tmpl_gelu_cu,
      { KF_CUDA_BLOCK, KF_CUDA_VEC, { "IMPL", { "tanh", "fastexp", NULL } } } },
    { "row_sum", "sum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 0\n", kf_tmpl_row_reduce_cu,
      { KF_CUDA_BLOCK, KF_CUDA_VEC, KF_CUDA_RED } },
    { "row_max", "maximum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 1\n", kf_tmpl_row_reduce_cu,
      { KF_CUDA_BLOCK, KF_CUDA_VEC, KF_CUDA_RED } },
};

//  OpenCL C for Level Zero: kernels only, launched by the exec worker as
//  their kf-launch line says (docs/intel.md). One work-group per row (a
//  flat range for GELU), with the work-group size, the vector width of
//  loads and stores, and how a work-group reduces (local-memory tree, the
//  OpenCL 2.0 collective, or sub-group reductions) as parameters. WG is a
//  power of two from 64 up (the tree halves it); the plain baseline is 256
//  work-items, scalar loads and the local-memory tree.
#define KF_CL_WG { "WG", { "256", "64", "128", "512", NULL } }
#define KF_CL_VEC { "VEC", { "1", "2", "4", NULL } }
#define KF_CL_RED { "RED", { "tree", "builtin", "subgroup", NULL } }

static const kf_offline_starter_t s_opencl_starters[] = {
    { "softmax", "row softmax over the last dimension", 1, "x", NULL, kf_tmpl_softmax_cl,
      { KF_CL_WG, KF_CL_VEC, KF_CL_RED, { "ALGO", { "threepass", "online", NULL } } } },
    { "rmsnorm", "RMS norm over the last dimension, times weight", 2, "x, weight", NULL,
      kf_tmpl_rmsnorm_cl, { KF_CL_WG, KF_CL_VEC, KF_CL_RED } },
    { "layernorm", "layer norm over the last dimension, times gamma plus beta", 3,
      "x, gamma, beta", NULL, kf_tmpl_layernorm_cl,
      { KF_CL_WG, KF_CL_VEC, KF_CL_RED, { "ALGO", { "twopass", "sumsq", NULL } } } },
    { "gelu", "GELU (tanh form), elementwise", 1, "x", NULL, kf_tmpl_gelu_cl,
      { KF_CL_WG, KF_CL_VEC, { "IMPL", { "tanh", "exp", "native", NULL } } } },
    { "row_sum", "sum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 0\n", kf_tmpl_row_reduce_cl, { KF_CL_WG, KF_CL_VEC, KF_CL_RED } },
    { "row_max", "maximum of each row over the last dimension", 1, "x",
      "#define KF_REDUCE_MAX 1\n", kf_tmpl_row_reduce_cl, { KF_CL_WG, KF_CL_VEC, KF_CL_RED } },
};

#define KF_N(table) (sizeof table / sizeof table[0])

const kf_offline_lang_t kf_offline_langs[] = {
    { "c", "host", kf_tmpl_prelude_c, NULL, s_host_starters, KF_N (s_host_starters) },
    { "cuda", "CUDA", kf_tmpl_prelude_cu, kf_tmpl_rows_cu, s_cuda_starters,
      KF_N (s_cuda_starters) },
    { "opencl", "Level Zero (OpenCL C)", kf_tmpl_prelude_cl, NULL, s_opencl_starters,
      KF_N (s_opencl_starters) },
};

const size_t kf_offline_n_langs = KF_N (kf_offline_langs);
