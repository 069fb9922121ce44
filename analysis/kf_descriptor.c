/*  kf_descriptor.c - behavioural coordinates (mem, algo, sync) of a kernel
 *  by static pattern matching, for the MAP-Elites archive.
 *
 *  The source is copied, comments and string literals are blanked (so a
 *  comment cannot move a kernel), `#if 0` regions are blanked too, and
 *  then every rule of the language's table and of the shared algorithm
 *  table is matched. A dimension's level is the highest level with
 *  evidence. Inline PTX lives in string literals, so the strings of `asm`
 *  statements are collected separately (from a copy with only comments
 *  removed) and matched by the rules marked as assembly rules. Shared /
 *  local memory is read by code, not by a pattern (s_tiles): an array
 *  that stages the input is a tile, one that holds partial sums is
 *  scratch. Host kernels are described in the host's words (SIMD width,
 *  cache blocking, threads) on the same numbered levels.
 *
 *  Patterns are POSIX extended regular expressions as glibc implements
 *  them (with \b, \w, \s and back-references). In the tables a single
 *  space means "optional white space", which keeps them readable; the
 *  translation happens once, when the patterns are compiled. This is
 *  pattern matching, not semantics: docs/descriptors.md lists the limits.
 */
#include "kf_descriptor.h"
#include "kf_descriptor_text.h"
#include "kf_descriptor_host.h"
#include "kf_descriptor_tiles.h"
#include "kf_descriptor_acc.h"
#include "kf_descriptor_flow.h"
#include "kf_descriptor_algo.h"
#include "kf_descriptor_triangle.h"
#include "kf_descriptor_chain.h"

#include <assert.h>
#include <ctype.h>
#include <pthread.h>
#include <regex.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { DIM_MEM = 0, DIM_ALGO = 1, DIM_SYNC = 2, DIM_COUNT = 3 };

typedef struct {
    int dim;
    int level;
    const char *pattern;    /* ERE; ' ' = optional white space */
    const char *label;      /* what the evidence is, for `why` */
    int min_count;          /* matches needed (0 = 1) */
    int needs;              /* also requires plain evidence at this level
                               of the same dimension (0 = nothing; -1 =
                               nothing, and no plain evidence for others) */
    bool in_asm;            /* matched on inline-assembly strings */
} s_rule_t;

//  Fragments shared by several patterns.
//  An exponential by any of its usual names: exp, expf, exp2f, __expf,
//  native_exp, std::exp, and helpers named after it (kf_exp, fast_exp,
//  exp_poly), but not words that merely start with "exp" (expect).
#define EXP  "\\b(\\w+::)?(\\w*_)?exp2?f?(_\\w+)?\\b"
#define LOG  "\\b(\\w+::)?(__|native_|half_)?log2?f?"
//  A variable, possibly a member (st.mean) or one lane of an accumulator
//  array (m[l]): an operand of the arithmetic shapes below.
#define VAR  "\\b[[:alpha:]_][[:alnum:]_.]*( \\[[^];]*\\])?"
//  An accumulator: a name, or one lane of an array of them (s[l]).
#define ACC  "\\b\\w+( \\[[^];]*\\])?"
//  The start of a statement, for declarations.
#define STMT "(^|[;{}\n])"
//  A private two-dimensional array declared at a statement start: a
//  register tile (a __shared__ or __local array starts with its qualifier,
//  so it does not match).
#define REG_TILE(types) STMT " (" types ")\\s+\\w+ \\[[^];]+\\] \\[[^];]+\\]"
//  A floating-point literal: 1.9875691500e-4f, 0.5, 2.
#define NUM "-?[0-9][0-9.]*([eE][-+]?[0-9]+)?f?"
//  The log-cosh identity, as the algorithm table and the code read it.
#define S_LOGCOSH "log cosh as |x| - ln 2 + log1p(exp(-2|x|)) (no cosh)"
//  The label of approximate math, a note on the algorithm axis.
#define S_APPROX "approximate math, how a function is computed (a note, no level): "

//  Algorithm rules: arithmetic shapes that read the same in every language.
static const s_rule_t s_algo_rules[] = {
    { DIM_ALGO, 1, ACC " \\+= ([[:alnum:]_.]+) ; " ACC " \\+= \\2 \\* \\2 ;",
      "sum and sum of squares in one loop (fused reductions)", 0, 0, false },
    { DIM_ALGO, 1, ACC " \\+= ([[:alnum:]_.]+) \\* \\2 ; " ACC " \\+= \\2 ;",
      "sum and sum of squares in one loop (fused reductions)", 0, 0, false },
    { DIM_ALGO, 1, "\\b(\\w+) = \\w+ \\[[^];]*\\] \\+ \\w+ \\[[^];]*\\] ;([^;]*;)? \\w+ \\+= \\1 \\* \\1 ;",
      "residual add fused with the reduction", 0, 0, false },
    { DIM_ALGO, 1, "\\b(\\w+::)?(fmaxf?|max|tanhf?|erff?|relu\\w*|gelu\\w*|silu\\w*|sigmoid\\w*) \\( \\w+ \\+ \\w+ \\[",
      "activation applied to accumulator + bias (fused epilogue)", 0, 0, false },
    //  Online softmax rescales the running sum it is updating (s = s *
    //  exp(m_old - m_new), s *= exp(...)), or merges two partial sums
    //  relative to one new maximum. A product with an exponential alone is
    //  not enough: a three-pass softmax writes inv * exp(x[i] - m).
    { DIM_ALGO, 2, "(\\b\\w+( \\[[^];]*\\])?) = \\1 \\* " EXP " \\( " VAR " - " VAR " \\)|\\*= " EXP " \\(",
      "running sum rescaled by exp of a max difference (online softmax)", 0, 0, false },
    { DIM_ALGO, 2, "\\b\\w+ \\* " EXP " \\( [[:alnum:]_.]+ - ([[:alnum:]_.]+) \\)[^;]*\\+[^;]*\\b\\w+ \\* " EXP " \\( [[:alnum:]_.]+ - \\4 \\)",
      "running sum rescaled by exp of a max difference (online softmax)", 0, 0, false },
    { DIM_ALGO, 2, "\\b(\\w+) = " EXP " \\( [[:alnum:]_.]+ - [[:alnum:]_.]+ \\) ;([^;]*;){0,3}[^;]*\\b(\\w+) (= \\6 \\* \\1|\\*= \\1)\\b",
      "running sum rescaled by exp of a max difference (online softmax)", 0, 0, false },
    //  max + log(sum): the logarithm of one accumulated sum. Softplus,
    //  log(1 + exp(x)) or log1p(exp(x)), takes the log of an expression.
    { DIM_ALGO, 2, "\\b\\w+ \\+ " LOG " \\( " ACC " \\)|" LOG " \\( " ACC " \\) \\+ \\w+",
      "max + log(sum) (log-sum-exp)", 0, 0, false },
    { DIM_ALGO, 2, VAR " \\+= " VAR " \\* \\( " VAR " - " VAR " \\)",
      "running second-moment update (Welford)", 0, 0, false },
    { DIM_ALGO, 2, VAR " \\* " VAR " \\* " VAR " \\* " VAR " / " VAR,
      "merge of partial moments (Welford/Chan)", 0, 0, false },
    { DIM_ALGO, 2, "[/*] (\\( \\w+ \\) )?" VAR " - (" VAR ") \\* \\3\\b",
      "variance as E[x^2] - mean^2 (single pass)", 0, 0, false },
    //  0.5 (1 + tanh u) = 1 / (1 + exp(-2u)): the logistic of a doubled
    //  argument (or of GELU's 2 sqrt(2/pi) = 1.5957...). A plain sigmoid
    //  or SiLU, 1 / (1 + exp(-x)), is the reference written directly.
    { DIM_ALGO, 2, "/ \\( 1(\\.0*)?f? \\+ " EXP " \\( - ?\\(? ?(2(\\.0*)?f? \\*|1\\.5957)",
      "tanh rewritten as a logistic of one exponential", 0, 0, false },
    //  log(cosh x) = |x| - ln 2 + log1p(exp(-2|x|)), written as calls (round
    //  10: the kernels' table builds); the hand-built exp of SIMD code is
    //  read by code (kf_descriptor_flow.c).
    { DIM_ALGO, 2, "\\b(\\w+::)?(__|native_)?log1pf? \\( " EXP " \\( - ?\\(? ?2(\\.0*)?f? \\*|"
                   LOG " \\( 1(\\.0*)?f? \\+ " EXP " \\( - ?\\(? ?2(\\.0*)?f? \\*",
      S_LOGCOSH, 0, 0, false },
    { DIM_ALGO, 3, "\\b\\w*([Ww]inograd|WINOGRAD|[Ff]ft|FFT)\\w*",
      "Winograd/FFT transform (by name: weak evidence)", 0, 0, false },
};

static const s_rule_t s_cuda_rules[] = {
    { DIM_MEM, 1, "\\b(float|double|int|uint|short|ushort|char|uchar|longlong|ulonglong)[24]\\b|\\b(__)?half2\\b|\\b__nv_bfloat162\\b",
      "vector type", 0, 0, false },
    { DIM_MEM, 1, "\\b__(ldg|ldcg|ldca|ldcs|ldlu|ldcv|stcg|stcs|stwt)\\b",
      "cache-hinted / read-only load", 0, 0, false },
    { DIM_MEM, 1, "\\bld\\.global(\\.\\w+)*\\.v[248]\\b|\\bld\\.global\\.nc\\b",
      "wide PTX load", 0, 0, true },
    { DIM_MEM, 3, "\\b__shared__\\b[^;]*\\[ 2 \\] \\[",
      "double-buffered shared tile", 0, 0, false },
    { DIM_MEM, 3, "\\b(memcpy_async|__pipeline_\\w+|pipeline_producer_commit)\\b|\\bcuda::pipeline\\b",
      "asynchronous copy into shared memory", 0, 0, false },
    { DIM_MEM, 3, "\\b(CUtensorMap|cuTensorMapEncode\\w*)\\b",
      "tensor memory accelerator (TMA)", 0, 0, false },
    { DIM_MEM, 3, "\\b(load_matrix_sync|fragment)\\b",
      "register fragments fed from shared tiles", 0, 2, false },
    { DIM_MEM, 3, REG_TILE ("float|double|half|__half|int|float2|float4"),
      "register tile with shared tiles", 0, 2, false },
    { DIM_MEM, 3, "\\bcp\\.async\\b",
      "cp.async copy into shared memory", 0, 0, true },
    { DIM_MEM, 3, "\\bldmatrix\\b|\\btcgen05\\.(ld|st|cp|alloc)\\b",
      "shared-to-register fragment loads (ldmatrix / tensor memory)", 0, 0, true },
    { DIM_ALGO, 3, "\\bwmma::|\\bmma_sync\\b",
      "tensor-core MMA (wmma)", 0, 0, false },
    { DIM_ALGO, 3, "\\b(mma\\.sync|wgmma|tcgen05\\.mma)\\b",
      "tensor-core MMA (PTX)", 0, 0, true },
    { DIM_SYNC, 1, "\\b__syncthreads(_count|_and|_or)?\\b",
      "block barrier (__syncthreads)", 0, 0, false },
    { DIM_SYNC, 1, "\\.sync \\( \\)|\\bcg::sync \\(|\\bcuda::barrier\\b",
      "cooperative-groups / cuda::barrier sync", 0, 0, false },
    { DIM_SYNC, 1, "\\bbar(rier)?\\.sync\\b",
      "PTX block barrier", 0, 0, true },
    { DIM_SYNC, 2, "\\b__shfl\\w*",
      "warp shuffle", 0, 0, false },
    { DIM_SYNC, 2, "\\b__(reduce_\\w+|ballot|any|all|uni|match_any|match_all)_sync\\b|\\b__syncwarp\\b",
      "warp vote / reduce / barrier", 0, 0, false },
    { DIM_SYNC, 2, "\\b(tiled_partition|thread_block_tile)\\b|\\bcg::reduce\\b",
      "cooperative-groups warp tile", 0, 0, false },
    { DIM_SYNC, 2, "\\b(shfl|redux|vote)\\.sync\\b",
      "PTX warp shuffle / vote", 0, 0, true },
    { DIM_SYNC, 3, "\\batomic[A-Z]\\w*|\\bcuda::atomic(_ref)?\\b",
      "atomic operation", 0, 0, false },
    { DIM_SYNC, 3, "\\b__threadfence(_system)?\\b",
      "memory fence across blocks", 0, 0, false },
    { DIM_SYNC, 3, "\\b(this_grid|grid_group|cudaLaunchCooperativeKernel\\w*)\\b",
      "grid-wide sync (cooperative launch)", 0, 0, false },
    { DIM_SYNC, 3, "<<<|\\bcudaLaunchKernel(Ex)?\\b",
      "several kernel launches", 2, 0, false },
    { DIM_SYNC, 3, "\\b(atom|red)\\.|\\bmembar\\.gl\\b|\\bfence\\.",
      "PTX atomic / fence", 0, 0, true },
};

static const s_rule_t s_opencl_rules[] = {
    { DIM_MEM, 1, "\\b(float|double|int|uint|short|ushort|char|uchar|long|ulong|half)(2|4|8|16)\\b",
      "vector type", 0, 0, false },
    { DIM_MEM, 1, "\\b(vload|vstore)(a?_half)?[0-9]+\\w*|\\bintel_sub_group_block_(read|write)\\w*",
      "vector / block load", 0, 0, false },
    { DIM_MEM, 3, "\\basync_work_group(_strided)?_copy\\b",
      "asynchronous copy into local memory", 0, 0, false },
    { DIM_MEM, 3, "\\b(__)?local\\b[^;]*\\[ 2 \\] \\[",
      "double-buffered local tile", 0, 0, false },
    { DIM_MEM, 3, "\\bprefetch \\(",
      "prefetch with local tiles", 0, 2, false },
    { DIM_MEM, 3, REG_TILE ("float|double|half|int|float4"),
      "private register tile with local tiles", 0, 2, false },
    { DIM_ALGO, 3, "\\b\\w*(matrix_mad|dpas)\\w*",
      "matrix engine (DPAS)", 0, 0, false },
    { DIM_SYNC, 1, "\\b(work_group_)?barrier \\(",
      "work-group barrier", 0, 0, false },
    { DIM_SYNC, 1, "\\bwork_group_(reduce|scan|broadcast|any|all)\\w*",
      "work-group collective", 0, 0, false },
    { DIM_SYNC, 2, "\\b(intel_)?sub_group_(reduce|scan|shuffle|broadcast|any|all|barrier|non_uniform|clustered|ballot|elect)\\w*",
      "sub-group primitive", 0, 0, false },
    { DIM_SYNC, 3, "\\b(atomic|atom)_\\w+",
      "atomic operation", 0, 0, false },
    { DIM_SYNC, 3, "\\b(__)?kernel\\b[^;{]*\\bvoid\\b",
      "several kernels (multi-pass)", 2, 0, false },
};

static const s_rule_t s_sycl_rules[] = {
    { DIM_MEM, 1, "\\bvec < \\w+ , (2|4|8|16) >|\\b(float|double|int|uint|half)(2|4|8|16)\\b",
      "vector type (sycl::vec)", 0, 0, false },
    { DIM_MEM, 1, "\\b(group_load|group_store)\\b",
      "group block load", 0, 0, false },
    { DIM_MEM, 3, "\\basync_work_group_copy\\b",
      "asynchronous copy into local memory", 0, 0, false },
    { DIM_MEM, 3, "\\bprefetch \\(",
      "prefetch with local tiles", 0, 2, false },
    { DIM_MEM, 3, REG_TILE ("float|double|half|int"),
      "private register tile with local tiles", 0, 2, false },
    { DIM_MEM, 3, "\\bjoint_matrix_load\\b",
      "matrix fragments fed from local tiles", 0, 2, false },
    { DIM_ALGO, 3, "\\bjoint_matrix\\w*",
      "joint_matrix (matrix engine)", 0, 0, false },
    { DIM_SYNC, 1, "\\bgroup_barrier \\(|\\.barrier \\(|\\bfence_space::local_space\\b",
      "work-group barrier", 0, 0, false },
    { DIM_SYNC, 2, "\\b(reduce_over_group|shift_group_left|shift_group_right|permute_group_by_xor|select_from_group|group_broadcast|inclusive_scan_over_group|exclusive_scan_over_group|any_of_group|all_of_group|none_of_group)\\b",
      "sub-group / group collective", 0, 0, false },
    { DIM_SYNC, 3, "\\batomic_ref\\b|\\bsycl::atomic\\b|\\batomic_fence\\b",
      "atomic operation", 0, 0, false },
    { DIM_SYNC, 3, "\\b(parallel_for|single_task)\\b",
      "several kernel submissions", 2, 0, false },
};

//  The host's own vocabulary: "memory" is SIMD width and cache blocking,
//  "synchronisation" is threads. A shuffle or horizontal add moves data
//  between the lanes of one register of one thread: it is SIMD evidence
//  (memory 1), never synchronisation.
static const s_rule_t s_c_rules[] = {
    { DIM_MEM, 1, "# pragma omp\\b[^\n]*\\bsimd\\b|# pragma GCC ivdep\\b|# pragma clang loop vectorize",
      "vectorisation pragma", 0, 0, false },
    { DIM_MEM, 1, "\\b__m(128|256|512)[dhi]?\\b|\\b_mm(256|512)?_\\w+|\\b(float|int|uint)(8|16|32|64)x[0-9]+(x[0-9])?_t\\b|\\bvld1q?_\\w+",
      "SIMD intrinsics / vector types", 0, 0, false },
    { DIM_MEM, 1, "\\b(vector_size|ext_vector_type)\\b|\\b__builtin_(shufflevector|convertvector)\\b",
      "compiler vector extension", 0, 0, false },
    { DIM_MEM, 1, "\\bv(padd|pmax|pmin|addv|maxv|minv|zip|uzp|trn|ext)q?_\\w+",
      "NEON lane operation", 0, 0, false },
    { DIM_MEM, 1, STMT " (float|double)\\s+\\w+ \\[[^];]+\\] = \\{ 0",
      "per-lane accumulator array", 0, 0, false },
    { DIM_MEM, 1, "\\bfor \\( \\w+ = 0 ; \\w+ \\+ ([2-9]|[1-9][0-9]+) <= \\w+ ; \\w+ \\+= \\1 \\)",
      "loop strip-mined by a constant width (vector lanes)", 0, 0, false },
    //  Block sizes by name (TILE, BLOCK, BS, and BLAS's NB, KB, MB, BM...)
    //  are read by code (s_named_rule): a loop that runs once is none.
    //  Register tiles are read by their accumulators (s_acc_rules below),
    //  not by a declaration: round 10's coefficient table, a local 2-D
    //  float array filled once, read as one (rule set 7).
    { DIM_MEM, 3, "\\bfor \\([^;]*;[^;]*; \\w+ \\+= (MC|NC|KC|\\w*L[123]\\w*) \\)",
      "nested cache-level blocking (L1/L2, MC/KC/NC)", 0, 0, false },
    { DIM_MEM, 3, "\\b(__builtin_prefetch|_mm_prefetch)\\b",
      "software prefetch inside cache blocks", 0, 2, false },
    //  Approximate math (issue 15, round 4): a polynomial in Horner form
    //  (three steps at least), 2^k built in the exponent field (scalef, a
    //  shift by 23, the 1.5 * 2^23 rounding constant), approximate
    //  reciprocals. Round 7: these are how one function is computed (every
    //  vectorised exp is a polynomial and a scalef), not the formula, and
    //  as level 2 they made every kernel of both runs "reformulated". They
    //  are notes now (level 0: listed, never a level); the identity
    //  tanh(softplus(x)) = n / (n + 2), which changes the formula, stays 2.
    { DIM_ALGO, 0, "\\b(\\w+) = \\1 \\* \\w+ \\+ " NUM " ;",
      S_APPROX "polynomial (Horner steps)", 3, 0, false },
    //  The coefficient as a call or a named constant (c3), as the
    //  planner's reading takes it (kf_prompt_does.c).
    { DIM_ALGO, 0, "\\b(\\w+) = _mm(256|512)?_fn?madd_p[sd] \\( \\1 , \\w+ , (_mm(256|512)?_set1_p[sd] \\(|\\w+ \\))",
      S_APPROX "polynomial (Horner steps)", 3, 0, false },
    { DIM_ALGO, 0, "\\b(\\w+) = fmaf? \\( \\1 , \\w+ , " NUM " \\)",
      S_APPROX "polynomial (Horner steps)", 3, 0, false },
    { DIM_ALGO, 0, "\\b_mm(256|512)?_scalef_(p|s)[sd]\\b|<< 23\\b|\\b0x4[Bb]400000\\b|\\b12582912(\\.0*)?f?\\b"
                   "|\\b_mm(256|512)?_slli_epi32 \\([^;]*, 23 \\)",
      S_APPROX "2^k built in the exponent field (scalef / shift by 23)", 0, 0, false },
    { DIM_ALGO, 2, "\\b(\\w+) / \\( \\1 \\+ 2(\\.0*)?f? \\)",
      "identity n / (n + 2) in place of tanh(softplus)", 0, 0, false },
    { DIM_ALGO, 0, "\\b_mm(256|512)?_(rcp|rsqrt)(14|28)?_(p|s)[sd]\\b",
      S_APPROX "approximate reciprocal (rcp / rsqrt)", 0, 0, false },
    { DIM_ALGO, 3, "\\b_tile_\\w+",
      "AMX tile instructions", 0, 0, false },
    { DIM_SYNC, 1, "# pragma omp\\b[^\n]*\\b(parallel|task)\\b|\\bpthread_(create|join)\\b|\\bthrd_(create|join)\\b",
      "threads (OpenMP parallel / pthreads, fork-join)", 0, 0, false },
    { DIM_SYNC, 2, "# pragma omp\\b[^\n]*\\b(barrier|taskwait|single|master|masked|ordered|reduction|depend)\\b|\\bpthread_(barrier_wait|cond_wait|cond_signal|cond_broadcast)\\b|\\bcnd_wait\\b",
      "threads that cooperate (barrier, reduction clause, single, task dependences)", 0, 0, false },
    { DIM_SYNC, 2, "# pragma omp\\b[^\n]*\\bschedule \\( (dynamic|guided)\\b",
      "dynamic work distribution (schedule dynamic / guided)", 0, 0, false },
    //  Atomic functions and _Atomic objects are read by code
    //  (kf_descriptor_host.c): a lone work counter is not a lock.
    //  Locks too: one that guards only a claimed work index is dynamic
    //  scheduling (round 5).
    { DIM_SYNC, 3, "# pragma omp\\b[^\n]*\\b(atomic|critical)\\b",
      "atomics / critical section / lock across threads", 0, 0, false },
};

#define N_OF(a) (sizeof (a) / sizeof ((a)[0]))

typedef struct {
    const char *name;
    const s_rule_t *rules;
    size_t n_rules;
    regex_t *compiled;
} s_table_t;

static regex_t s_algo_re[N_OF (s_algo_rules)];
static regex_t s_cuda_re[N_OF (s_cuda_rules)];
static regex_t s_opencl_re[N_OF (s_opencl_rules)];
static regex_t s_sycl_re[N_OF (s_sycl_rules)];
static regex_t s_c_re[N_OF (s_c_rules)];

static s_table_t s_algo_table = { "algo", s_algo_rules, N_OF (s_algo_rules), s_algo_re };
static s_table_t s_lang_tables[] = {
    { "cuda", s_cuda_rules, N_OF (s_cuda_rules), s_cuda_re },
    { "opencl", s_opencl_rules, N_OF (s_opencl_rules), s_opencl_re },
    { "sycl", s_sycl_rules, N_OF (s_sycl_rules), s_sycl_re },
    { "c", s_c_rules, N_OF (s_c_rules), s_c_re },
};

static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static bool s_compiled_ok;

//  The grid is one for every target; what its levels are called is not.
//  A GPU kernel is described in warps, shared memory and coalescing; a
//  host kernel in SIMD width, cache blocking and threads.
static const char *s_level_names[DIM_COUNT][KF_DESCRIPTOR_LEVELS] = {
    { "scalar global access", "coalesced/vectorised", "shared/local tiling", "multi-level hierarchy" },
    { "direct translation", "fused", "reformulated", "novel" },
    { "none", "block barriers", "warp/sub-group primitives", "global coordination" },
};
static const char *s_dim_names[DIM_COUNT] = { "memory", "algorithm", "synchronisation" };
static const char *s_host_level_names[DIM_COUNT][KF_DESCRIPTOR_LEVELS] = {
    //  Round 18: "multi-level blocking" was read as packing; it is two
    //  levels of blocks, packed or not.
    { "scalar", "SIMD vectorised", "cache- or register-blocked",
      "multi-level blocking (a register tile inside cache blocks, or nested cache blocks; "
      "packed or not)" },
    { "direct translation", "fused", "reformulated", "novel" },
    { "single thread", "threads (fork-join)", "cooperating threads", "atomics/locks across threads" },
};
static const char *s_host_dim_names[DIM_COUNT] = { "memory (SIMD width, cache blocking)", "algorithm",
                                                   "threads" };

//  Evidence found by code rather than by a pattern (s_tiles): a
//  shared/local array filled from the kernel's input is a tile; one only
//  written with values the threads computed (partial sums, maxima, a
//  flag) is reduction or broadcast scratch, which the barriers or
//  shuffles around it already count under synchronisation.
static const s_rule_t s_tile_rule = {
    DIM_MEM, 2, NULL, "input tile staged in shared/local memory", 0, 0, false };
static const s_rule_t s_scratch_rule = {
    DIM_MEM, 0, NULL, "shared/local memory used only as reduction/broadcast scratch, not a tile", 0, 0, false };
//  Host evidence read by code (kf_descriptor_host.c).
static const s_rule_t s_autovec_rule = {
    DIM_MEM, 1, NULL, "unit-stride loop that GCC -O3 vectorises (no libm call in the file)", 0, 0, false };
static const s_rule_t s_built_vec_rule = {
    DIM_MEM, 1, NULL, "loops the compiler vectorised (its -fopt-info-vec report)", 0, 0, false };
static const s_rule_t s_packing_rule = {
    DIM_MEM, 3, NULL, "operand packed into a contiguous local buffer", 0, 2, false };
//  Round 39: an 8 x 48 tile over a K x 48 panel of B packed per call
//  (the panel reused by every row of A, the N loop stepping by the
//  tile's width) read "cache- or register-blocked", a 4 x 4 dot tile in
//  blocks of 128 rows "multi-level": a packed buffer that a register tile
//  reads is the cache block itself.
static const s_rule_t s_packed_block_rule = {
    DIM_MEM, 2, NULL, "operand packed into a buffer a register tile reads (a cache block)", 0, 0, false };
static const s_rule_t s_counter_rule = {
    DIM_SYNC, 2, NULL, "dynamic work distribution (threads claim blocks from one work counter)", 0, 0, false };
static const s_rule_t s_blocking_rule = {
    DIM_MEM, 2, NULL, "loops over blocks of a constant size around a loop nest (cache blocking)", 0, 0, false };
static const s_rule_t s_named_rule = {
    DIM_MEM, 2, NULL, "loop stepping by a block size (cache blocking)", 0, 0, false };
static const s_rule_t s_lock_rule = {
    DIM_SYNC, 3, NULL, "lock across threads (guarding results, not a work index)", 0, 0, false };
static const s_rule_t s_atomic_rule = {
    DIM_SYNC, 3, NULL, "atomics on shared data across threads", 0, 0, false };
//  Register tiles by their accumulators (kf_descriptor_acc.c), in every
//  language: named ones (c00 ... c13) and 2-D arrays alike (round 7: a
//  micro-kernel of named accumulators stayed in its parent's cell). On a
//  GPU a register tile per thread is a level of its own, below shared
//  tiles; on the host it needs SIMD evidence.
static const s_rule_t s_acc_rules[2][2] = {
    { { DIM_MEM, 2, NULL, "register tile per thread (register blocking)", 0, -1, false },
      { DIM_MEM, 3, NULL, "register tile with shared tiles", 0, 2, false } },
    { { DIM_MEM, 2, NULL, "register tile of accumulators (register blocking)", 0, 1, false },
      { DIM_MEM, 3, NULL, "register tile inside cache blocks", 0, 2, false } },
};
//  Values followed through a function (kf_descriptor_flow.c, round 10).
static const s_rule_t s_epilogue_rule = {
    DIM_ALGO, 1, NULL, "epilogue applied to the accumulators before their store (fused epilogue)", 0, 0, false };
//  Round 44: one triangle of x @ x^T (and its mirror) does half the
//  multiply-adds; the archive filed it beside the full product.
static const s_rule_t s_triangle_rule = {
    DIM_ALGO, 2, NULL, KF_DESCRIPTOR_TRIANGLE_LABEL, 0, 0, false };
//  Round 52: (x @ u) @ v a block of rows at a time (kf_descriptor_chain.c).
static const s_rule_t s_chain_rule = { DIM_ALGO, 1, NULL, KF_DESCRIPTOR_CHAIN_LABEL, 0, 0, false };
static const s_rule_t s_logcosh_rule = {
    DIM_ALGO, 2, NULL, S_LOGCOSH ": |x| through exp(-2|x|) and back into the sum", 0, 0, false };
//  Algorithms that change the arithmetic, read by code on the host
//  (kf_descriptor_algo.c, round 26: a Winograd kernel read as direct).
static const s_rule_t s_algo_read_rules[KF_ALGO_COUNT] = {
    { DIM_ALGO, 3, NULL, "Winograd minimal filtering (its tile transforms or matrices)", 0, 0, false },
    { DIM_ALGO, 3, NULL, "FFT (twiddle factors cos/sin of 2 pi k / n, butterflies)", 0, 0, false },
    { DIM_ALGO, 3, NULL, "Strassen-like split (sums of quadrants of both operands)", 0, 0, false },
    { DIM_ALGO, 2, NULL, "im2col: the input's patches unfolded into a matrix", 0, 0, false },
    { DIM_ALGO, 2, NULL, "running sum rescaled by exp of a max difference (online softmax)", 0, 0, false },
    { DIM_ALGO, 2, NULL, "running second-moment update (Welford)", 0, 0, false },
};


//  Table patterns to regcomp syntax: a space becomes optional white space.
static char *
s_translate (const char *pattern)
{
    static const char ws[] = "[[:space:]]*";
    size_t spaces = 0, n = strlen (pattern);
    for (size_t i = 0; i < n; i++)
        spaces += pattern[i] == ' ';
    char *out = malloc (n + spaces * (sizeof ws - 1) + 1);
    if (!out)
        return NULL;
    char *o = out;
    for (size_t i = 0; i < n; i++) {
        if (pattern[i] == ' ') {
            memcpy (o, ws, sizeof ws - 1);
            o += sizeof ws - 1;
        }
        else
            *o++ = pattern[i];
    }
    *o = 0;
    return out;
}

static bool
s_compile_table (s_table_t *table)
{
    bool ok = true;
    for (size_t i = 0; i < table->n_rules; i++) {
        char *re = s_translate (table->rules[i].pattern);
        if (!re || regcomp (&table->compiled[i], re, REG_EXTENDED) != 0) {
            //  A bad pattern is a bug in this file; the unit test sees it.
            fprintf (stderr, "kf_descriptor: %s rule %zu does not compile: %s\n",
                     table->name, i, table->rules[i].pattern);
            ok = false;
        }
        free (re);
    }
    return ok;
}

//  Compiled once per process and kept: regexec on a compiled pattern is
//  safe from several threads, and recompiling ~80 patterns per candidate
//  would cost more than the matching.
static void
s_compile_all (void)
{
    bool ok = s_compile_table (&s_algo_table);
    for (size_t t = 0; t < N_OF (s_lang_tables); t++)
        ok = s_compile_table (&s_lang_tables[t]) && ok;
    s_compiled_ok = ok;
}


//  ---------------------------------------------------------------------
//  Matching

typedef struct {
    const s_rule_t *rule;
    int count;
    char snippet[48];
} s_hit_t;

//  Adds RULE's hit, COUNT times with SNIP, to HITS (N of them) when
//  COUNT is above 0.
static void
s_add_hit (s_hit_t *hits, size_t *n, const s_rule_t *rule, int count, const char *snip)
{
    if (count <= 0)
        return;
    hits[*n].rule = rule;
    hits[*n].count = count;
    snprintf (hits[*n].snippet, sizeof hits[*n].snippet, "%s", snip);
    (*n)++;
}

//  Counts matches of RE in TEXT, stopping at LIMIT; copies the first
//  match, white space squeezed, into SNIPPET.
static int
s_count (const regex_t *re, const char *text, int limit, char *snippet, size_t size)
{
    int count = 0;
    const char *p = text;
    regmatch_t m[1];
    while (count < limit && *p && regexec (re, p, 1, m, p == text ? 0 : REG_NOTBOL) == 0) {
        if (count == 0) {
            size_t n = 0;
            bool space = false;
            for (regoff_t k = m[0].rm_so; k < m[0].rm_eo && n + 5 < size; k++) {
                char c = p[k];
                if (isspace ((unsigned char) c) || (n == 0 && (c == ';' || c == '{' || c == '}'))) {
                    space = n > 0;      //  and no statement-start anchor
                    continue;
                }
                if (space)
                    snippet[n++] = ' ';
                space = false;
                snippet[n++] = c;
            }
            if (n + 5 >= size && m[0].rm_so + (regoff_t) n < m[0].rm_eo) {
                memcpy (snippet + n, "...", 3);
                n += 3;
            }
            snippet[n] = 0;
        }
        count++;
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

static void
s_match_table (const s_table_t *table, const char *code, const char *asm_text,
               s_hit_t *hits, size_t *n_hits)
{
    for (size_t i = 0; i < table->n_rules; i++) {
        const s_rule_t *rule = &table->rules[i];
        const char *text = rule->in_asm ? asm_text : code;
        if (!text || !*text)
            continue;
        int need = rule->min_count > 1 ? rule->min_count : 1;
        s_hit_t *hit = &hits[*n_hits];
        hit->rule = rule;
        hit->snippet[0] = 0;
        //  Count past the minimum so `why` can say how many there were.
        hit->count = s_count (&table->compiled[i], text, need + 8, hit->snippet, sizeof hit->snippet);
        if (hit->count >= need)
            (*n_hits)++;
    }
}

//  A hit whose rule needs plain evidence at another level counts only
//  when such evidence exists in the same dimension.
static bool
s_hit_counts (const s_hit_t *hits, size_t n_hits, const s_hit_t *hit)
{
    if (hit->rule->needs <= 0)
        return true;
    for (size_t j = 0; j < n_hits; j++)
        if (!hits[j].rule->needs && hits[j].rule->dim == hit->rule->dim
            && hits[j].rule->level == hit->rule->needs)
            return true;
    return false;
}

typedef struct {
    char *data;
    size_t len, cap;
    bool failed;
} s_buf_t;

static void
s_printf (s_buf_t *b, const char *fmt, ...)
{
    if (b->failed)
        return;
    va_list ap;
    va_start (ap, fmt);
    int n = vsnprintf (NULL, 0, fmt, ap);
    va_end (ap);
    if (n < 0) {
        b->failed = true;
        return;
    }
    if (b->len + (size_t) n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 256;
        while (b->len + (size_t) n + 1 > cap)
            cap *= 2;
        char *grown = realloc (b->data, cap);
        if (!grown) {
            b->failed = true;
            return;
        }
        b->data = grown;
        b->cap = cap;
    }
    va_start (ap, fmt);
    vsnprintf (b->data + b->len, (size_t) n + 1, fmt, ap);
    va_end (ap);
    b->len += (size_t) n;
}

//  One line per dimension: "memory 2 (shared/local tiling): label
//  `snippet`; ...", evidence listed from the highest level down.
static char *
s_explain (const char *language, const int level[DIM_COUNT], const s_hit_t *hits, size_t n_hits)
{
    s_buf_t b = { 0 };
    for (int d = 0; d < DIM_COUNT; d++) {
        s_printf (&b, "%s%s %d (%s):", d ? "\n" : "", kf_descriptor_dim_name_for (language, d),
                  level[d], kf_descriptor_level_name_for (language, d, level[d]));
        int listed = 0;
        //  Level 0 lists notes: evidence that was read and does not count.
        for (int l = KF_DESCRIPTOR_LEVELS - 1; l >= 0; l--)
            for (size_t i = 0; i < n_hits; i++) {
                const s_hit_t *h = &hits[i];
                if (h->rule->dim != d || h->rule->level != l || !s_hit_counts (hits, n_hits, h))
                    continue;
                bool dup = false;       //  one line per label
                for (size_t j = 0; j < i; j++)
                    dup |= strcmp (hits[j].rule->label, h->rule->label) == 0
                           && hits[j].rule->dim == d && s_hit_counts (hits, n_hits, &hits[j]);
                if (dup)
                    continue;
                s_printf (&b, "%s [%d] %s `%s`", listed ? ";" : "", l, h->rule->label, h->snippet);
                if (h->rule->min_count > 1)
                    s_printf (&b, " x%d", h->count);
                listed++;
            }
        if (!listed)
            s_printf (&b, " no evidence");
    }
    if (b.failed) {
        free (b.data);
        return NULL;
    }
    return b.data;
}

int
kf_descriptor_classify (const char *source, size_t size, const char *language,
                        kf_coords_t *out, char **why)
{
    return kf_descriptor_classify_built (source, size, language, -1, out, why);
}

int
kf_descriptor_classify_built (const char *source, size_t size, const char *language,
                              int vectorised_loops, kf_coords_t *out, char **why)
{
    if (!source || !language || !out)
        return -1;
    const s_table_t *table = NULL;
    for (size_t t = 0; t < N_OF (s_lang_tables); t++)
        if (strcmp (language, s_lang_tables[t].name) == 0)
            table = &s_lang_tables[t];
    if (!table)
        return -1;
    pthread_once (&s_once, s_compile_all);
    assert (s_compiled_ok);

    //  Two working copies: code (comments and strings blanked) and asm
    //  (only comments blanked, so the strings of asm statements survive).
    //  A NUL inside the source would end the text early: make it a space.
    char *code = malloc (size + 1);
    char *with_strings = malloc (size + 1);
    if (!code || !with_strings) {
        free (code);
        free (with_strings);
        return -1;
    }
    for (size_t i = 0; i < size; i++)
        code[i] = source[i] ? source[i] : ' ';
    code[size] = 0;
    memcpy (with_strings, code, size + 1);
    kf_descriptor_strip_text (code, false);
    kf_descriptor_blank_if0 (code);
    kf_descriptor_strip_text (with_strings, true);
    kf_descriptor_blank_if0 (with_strings);
    char *asm_text = kf_descriptor_asm_text (with_strings);
    free (with_strings);

    //  Room for every rule and every piece of evidence read by code.
    size_t max_hits = table->n_rules + s_algo_table.n_rules + 20 + KF_ALGO_COUNT;
    s_hit_t *hits = calloc (max_hits, sizeof *hits);
    if (!hits) {
        free (code);
        free (asm_text);
        return -1;
    }
    size_t n_hits = 0;
    s_match_table (table, code, asm_text, hits, &n_hits);
    s_match_table (&s_algo_table, code, asm_text, hits, &n_hits);
    if (strcmp (language, "c") != 0) {
        s_hit_t *tile = &hits[n_hits], *scratch = &hits[n_hits + 1];
        tile->rule = &s_tile_rule;
        scratch->rule = &s_scratch_rule;
        tile->count = kf_descriptor_tiles (code, language, &scratch->count, tile->snippet,
                               scratch->snippet, sizeof tile->snippet);
        if (tile->count)
            n_hits++;
        if (scratch->count && !tile->count) {
            hits[n_hits] = *scratch;
            n_hits++;
        }
    }
    int packed = 0;
    char packed_snip[KF_HOST_SNIP] = "";
    if (!strcmp (language, "c")) {
        kf_host_evidence_t ev;
        if (kf_descriptor_host (code, &ev) == 0) {
            packed = ev.packing;
            memcpy (packed_snip, ev.packing_snip, sizeof packed_snip);
            //  What the compiler reported beats the guess from the text.
            char built[KF_HOST_SNIP];
            snprintf (built, sizeof built, "%d loop%s", vectorised_loops,
                      vectorised_loops == 1 ? "" : "s");
            bool known = vectorised_loops >= 0;
            const struct { const s_rule_t *rule; int count; const char *snip; } found[] = {
                { &s_autovec_rule, known ? 0 : ev.autovec, ev.autovec_snip },
                { &s_built_vec_rule, known ? vectorised_loops : 0, built },
                { &s_packing_rule, ev.packing, ev.packing_snip },
                { &s_named_rule, ev.named_block, ev.named_snip },
                { &s_blocking_rule, ev.blocking, ev.blocking_snip },
                { &s_counter_rule, ev.counter, ev.counter_snip },
                { &s_lock_rule, ev.lock, ev.lock_snip },
                { &s_atomic_rule, ev.shared_atomic, ev.shared_snip },
            };
            for (size_t i = 0; i < N_OF (found); i++)
                s_add_hit (hits, &n_hits, found[i].rule, found[i].count, found[i].snip);
        }
        char tri[KF_HOST_SNIP];
        s_add_hit (hits, &n_hits, &s_triangle_rule, kf_descriptor_triangle (code, tri, sizeof tri),
                   tri);
        kf_descriptor_algo_t al;
        if (kf_descriptor_algo (code, &al) == 0)
            for (int i = 0; i < KF_ALGO_COUNT; i++)
                s_add_hit (hits, &n_hits, &s_algo_read_rules[i], al.count[i], al.snip[i]);
    }

    kf_descriptor_acc_t *acc = calloc (1, sizeof *acc);
    if (acc) {
        kf_descriptor_accumulators (code, acc);
        bool host = !strcmp (language, "c");
        for (int r = 0; r < 2 && kf_descriptor_acc_is_tile (acc); r++)
            s_add_hit (hits, &n_hits, &s_acc_rules[host][r], acc->tile, acc->tile_snip);
        if (host && kf_descriptor_acc_is_tile (acc))
            s_add_hit (hits, &n_hits, &s_packed_block_rule, packed, packed_snip);
        kf_descriptor_flow_t flow;
        kf_descriptor_flow (code, acc, &flow);
        const struct { const s_rule_t *rule; int count; const char *snip; } found[] = {
            { &s_epilogue_rule, flow.epilogue, flow.epilogue_snip },
            { &s_logcosh_rule, flow.logcosh, flow.logcosh_snip },
        };
        for (size_t i = 0; i < N_OF (found); i++)
            s_add_hit (hits, &n_hits, found[i].rule, found[i].count, found[i].snip);
        char chain[KF_HOST_SNIP] = "";
        if (host)
            s_add_hit (hits, &n_hits, &s_chain_rule, kf_descriptor_chain (code, acc, chain,
                                                                           sizeof chain), chain);
        free (acc);
    }

    int level[DIM_COUNT] = { 0, 0, 0 };
    for (size_t i = 0; i < n_hits; i++)
        if (s_hit_counts (hits, n_hits, &hits[i]) && hits[i].rule->level > level[hits[i].rule->dim])
            level[hits[i].rule->dim] = hits[i].rule->level;
    out->mem = level[DIM_MEM];
    out->algo = level[DIM_ALGO];
    out->sync = level[DIM_SYNC];
    if (why)
        *why = s_explain (language, level, hits, n_hits);
    free (hits);
    free (code);
    free (asm_text);
    return 0;
}

int
kf_descriptor_bin (int level, int bins)
{
    if (level < 0 || level >= KF_DESCRIPTOR_LEVELS || bins < 1 || bins > KF_DESCRIPTOR_LEVELS)
        return -1;
    //  Spread 0..3 over 0..bins-1 with rounding, keeping both ends: for
    //  2 bins 0,0,1,1; for 3 bins 0,1,1,2; for 4 the identity.
    return (level * (bins - 1) + 1) / (KF_DESCRIPTOR_LEVELS - 1);
}

const char *
kf_descriptor_level_name (int dim, int level)
{
    if (dim < 0 || dim >= DIM_COUNT || level < 0 || level >= KF_DESCRIPTOR_LEVELS)
        return "?";
    return s_level_names[dim][level];
}

const char *
kf_descriptor_level_name_for (const char *language, int dim, int level)
{
    if (dim < 0 || dim >= DIM_COUNT || level < 0 || level >= KF_DESCRIPTOR_LEVELS)
        return "?";
    return language && !strcmp (language, "c") ? s_host_level_names[dim][level]
                                                : s_level_names[dim][level];
}

const char *
kf_descriptor_dim_name_for (const char *language, int dim)
{
    if (dim < 0 || dim >= DIM_COUNT)
        return "?";
    return language && !strcmp (language, "c") ? s_host_dim_names[dim] : s_dim_names[dim];
}
