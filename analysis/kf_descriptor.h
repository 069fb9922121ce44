/*  kf_descriptor.h - behavioural coordinates of a kernel for the MAP-Elites
 *  archive, found by static pattern matching on its source.
 *
 *  Three dimensions, four levels each (docs/descriptors.md has the tables):
 *    mem   0 scalar global access, 1 vectorised / wide loads, 2 tiles of
 *          the input staged in shared or local memory (reduction scratch
 *          there is not a tile), or a register tile per thread alone, 3 a
 *          multi-level hierarchy (shared + register tiles, double
 *          buffering, asynchronous copies); on the host 1 SIMD
 *          (intrinsics, or a plain loop GCC -O3 vectorises), 2 cache
 *          blocking or a register tile (a 2-D accumulator array, named
 *          accumulators c00 ... c13 that share their loaded factors, or
 *          rows of vector accumulators c0[r], c1[r]; a table in a 2-D
 *          array is none), 3 a register tile or packed operand inside
 *          cache blocks, nested cache levels;
 *    algo  0 direct translation, 1 fused work in one pass (an epilogue
 *          applied to a product's accumulators before their store), 2
 *          reformulated (online softmax, Welford, single-pass variance,
 *          log-sum-exp, log cosh as |x| - ln 2 + log1p(exp(-2|x|)), on
 *          the host n / (n + 2) for tanh(softplus)), 3 novel
 *          (tensor-core MMA, Winograd, FFT). Approximate math (polynomial
 *          exp, 2^k in the exponent field, rcp14) is how one function is
 *          computed, not the formula: a note in `why`, no level;
 *    sync  0 none, 1 block / work-group barriers, 2 warp / sub-group
 *          primitives, 3 global coordination (atomics, grid sync, several
 *          dependent launches); on the host threads: 0 one thread, 1
 *          fork-join, 2 cooperating (barriers, reductions, dynamic work
 *          distribution through one atomic counter), 3 atomics on shared
 *          data and locks. SIMD shuffles are lanes of one thread: memory 1.
 *  Comments and string literals are removed before matching, so text in
 *  them never moves a kernel; names of identifiers are not evidence either.
 *  Pure functions: no I/O, no global state beyond compiled patterns, safe to
 *  call from several threads.
 */
#ifndef KF_DESCRIPTOR_H
#define KF_DESCRIPTOR_H

#include <stdbool.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define KF_DESCRIPTOR_LEVELS 4
/* Bumped whenever a rule changes, so coordinates cached by the compile
 * worker under an older rule set are computed again, not reused. */
#define KF_DESCRIPTOR_RULES 20

typedef struct {
    int mem, algo, sync;        /* each 0..3 */
} kf_coords_t;

/* Classifies SOURCE (SIZE bytes, need not be NUL-terminated) written in
 * LANGUAGE: "cuda", "opencl", "sycl" or "c" (the host backend). Fills OUT.
 * When WHY is not NULL it receives a short explanation, one line per
 * dimension with the evidence found; the caller frees it. Returns 0, or -1
 * for an unknown language or a NULL argument (OUT and WHY untouched). */
int kf_descriptor_classify (const char *source, size_t size,
                            const char *language, kf_coords_t *out,
                            char **why);

/* As kf_descriptor_classify, with what the compiler said of the build:
 * VECTORISED_LOOPS is the number of loops of a host ("c") source that the
 * vectoriser reported vectorising (GCC's -fopt-info-vec), or -1 when not
 * known. When known it replaces the guess from the text at which plain
 * loops the compiler vectorises (memory 1). Other languages ignore it. */
int kf_descriptor_classify_built (const char *source, size_t size, const char *language,
                                  int vectorised_loops, kf_coords_t *out, char **why);

/* Blanks comments (slash-slash and slash-star) and the contents of string
 * and character literals in TEXT, in place. Newlines are kept, so line
 * numbers still match; the quotes of a literal stay so the code around
 * it still reads as code. */
void kf_descriptor_strip (char *text);

/* Maps LEVEL (0..3) onto BINS (1..4) archive bins: 0 always goes to bin 0
 * and 3 to bin BINS-1, monotonically in between. Returns -1 when either
 * argument is out of range. */
int kf_descriptor_bin (int level, int bins);

/* The name of level LEVEL of dimension DIM (0 mem, 1 algo, 2 sync), e.g.
 * "shared/local tiling", in GPU terms; "?" when out of range. Borrowed. */
const char *kf_descriptor_level_name (int dim, int level);

/* The same in the words of LANGUAGE's target: for "c" (the host) memory
 * speaks of SIMD width and cache blocking ("SIMD vectorised",
 * "cache- or register-blocked") and synchronisation of threads ("single thread",
 * "threads (fork-join)"); any other language, or NULL, gets the GPU names
 * above. The levels and their numbers are the same for every target.
 * Borrowed; "?" when out of range. */
const char *kf_descriptor_level_name_for (const char *language, int dim, int level);

/* The name of dimension DIM for LANGUAGE's target: "memory", "algorithm",
 * "synchronisation"; on the host "memory (SIMD width, cache blocking)" and
 * "threads". Borrowed; "?" when out of range. */
const char *kf_descriptor_dim_name_for (const char *language, int dim);

/* Whether a run's TARGET ("host", "cuda:sm_90", ...) is the host CPU. */
bool kf_descriptor_target_is_host (const char *target);

/* The short names of a grid's axes for a run on TARGET: a level of
 * dimension DIM ("coalesced", "barriers", "warp" on a GPU; "SIMD",
 * "fork-join", "cooperating" on the host) and the dimension itself
 * ("synchronisation" on a GPU, "threads" on the host). At most 13
 * characters; borrowed; "?" when out of range. */
const char *kf_descriptor_level_short (const char *target, int dim, int level);
const char *kf_descriptor_dim_short (const char *target, int dim);

#ifdef __cplusplus
}
#endif
#endif
