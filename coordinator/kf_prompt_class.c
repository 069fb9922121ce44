/*  kf_prompt_class.c - task classes, target kinds, and the advice that
 *  fits them (kf_prompt_class.h).
 *
 *  The wording is this project's. Each piece of advice is written for one
 *  class or one kind of target and is only given where it holds: nothing
 *  about coalescing, shared memory or warps reaches a CPU prompt, and the
 *  row-maximum rule of softmax reaches only tasks that exponentiate along
 *  a row.
 */
#include "kf_prompt_class.h"
#include "kf_prompt_formula.h"
#include "kf_json.h"
#include "kf_str.h"
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const s_class_names[] = {
    "elementwise", "row reduction", "matrix product / convolution", "attention", "scan", "other"
};

const char *
kf_prompt_class_name (kf_task_class_t c)
{
    return c <= KF_CLASS_OTHER ? s_class_names[c] : "other";
}

//  Whether TEXT contains any of the NULL-ended WORDS.
static bool
s_any (const char *text, const char *const *words)
{
    for (size_t i = 0; words[i]; i++)
        if (strstr (text, words[i]))
            return true;
    return false;
}

//  Whether one of OP's parts (split at every character that is not a
//  letter or a digit: "mm_at_relu_bias") is one of the NULL-ended PARTS.
static bool
s_any_part (const char *op, const char *const *parts)
{
    for (const char *p = op; *p;) {
        size_t n = 0;
        while (isalnum ((unsigned char) p[n]))
            n++;
        for (size_t i = 0; n && parts[i]; i++)
            if (strlen (parts[i]) == n && !strncasecmp (p, parts[i], n))
                return true;
        p += n ? n : 1;
    }
    return false;
}

//  How often TEXT holds any of the NULL-ended WORDS, each occurrence
//  counted.
static int
s_count (const char *text, const char *const *words)
{
    int n = 0;
    for (size_t i = 0; words[i]; i++)
        for (const char *p = strstr (text, words[i]); p; p = strstr (p + 1, words[i]))
            n++;
    return n;
}

//  Round 27: attention as a user writes it without the fused call (the
//  host's PyTorch has none): a softmax between two products, "q @ k^T"
//  and "@ v". Its name's "softmax" had made it a row reduction, and the
//  products alone a matrix product; one product before a softmax
//  (bmm_bt_softmax) stays one.
static bool
s_attention_by_calls (const char *src)
{
    static const char *const softmax[] = { "softmax(", NULL };
    static const char *const products[] = { " @ ", "matmul(", "bmm(", "einsum(", NULL };
    const char *body = kf_prompt_forward_from (src);
    return s_count (body, softmax) >= 1 && s_count (body, products) >= 2;
}

double
kf_prompt_tensor_elements (json_t *tensor)
{
    json_t *shape = json_object_get (tensor, "shape");
    double n = 1;
    size_t i;
    json_t *d;
    json_array_foreach (shape, i, d)
        n *= (double) json_integer_value (d);
    return n;
}

kf_task_class_t
kf_prompt_task_class (json_t *spec)
{
    static const char *const attention[] = { "attention", "attn", "flash", NULL };
    static const char *const scan[] = { "cumsum", "cumprod", "cummax", "cummin", "scan",
                                        "prefix", NULL };
    static const char *const matmul[] = { "matmul", "gemm", "bmm", "linear", "Linear", "conv",
                                          "Conv", "einsum", "torch.mm", ".mm(", " @ ", NULL };
    static const char *const rows[] = { "softmax", "norm", "Norm", "reduc", "sum(", "mean(",
                                        "amax", "amin", "max(dim", "logsumexp", "var(",
                                        "std(", "argmax", "argmin", ".max(", ".min(", NULL };
    static const char *const ew[] = { "activation", "gelu", "relu", "silu", "sigmoid", "tanh",
                                      "elementwise", "swish", "add", "mul", NULL };
    //  Round 15: an op of parts ("mm_at_relu_bias") names its product by
    //  a part the words above miss ("mm"), and its activation's part made
    //  it elementwise; the product's and the reduction's parts come first.
    static const char *const matmul_parts[] = { "mm", "bmm", "addmm", "baddbmm", "gemv", "mv",
                                                "matmul", "linear", NULL };
    static const char *const rows_parts[] = { "sum", "mean", "var", "std", "reduce", "amax",
                                              "amin", "argmax", "argmin", NULL };
    const char *src = kf_jstr (json_object_get (spec, "reference"), "source");
    if (s_attention_by_calls (src))
        return KF_CLASS_ATTENTION;
    const char *op = kf_jstr (spec, "op");
    if (*op) {
        if (s_any (op, attention))
            return KF_CLASS_ATTENTION;
        if (s_any (op, scan))
            return KF_CLASS_SCAN;
        if (s_any (op, matmul) || s_any_part (op, matmul_parts))
            return KF_CLASS_MATMUL;
        if (s_any (op, rows) || !strcmp (op, "row_reduction") || s_any_part (op, rows_parts))
            return KF_CLASS_ROW_REDUCTION;
        if (s_any (op, ew))
            return KF_CLASS_ELEMENTWISE;
    }
    //  What the reference calls, comments included: a module's layers
    //  name the work better than the task's free text. In the code's
    //  forms, not as words: round 10's log-cosh, whose docstring spoke of
    //  "a small linear term", was read as a matrix product and handed
    //  GEMM ideas; a "normal" distribution is no normalisation either.
    static const char *const matmul_src[] = { "matmul", "gemm", "bmm(", "nn.Linear", "F.linear",
                                              "functional.linear", ".linear(", "conv1d", "conv2d",
                                              "conv3d", "conv_transpose", "Conv1d", "Conv2d",
                                              "Conv3d", "ConvTranspose", "einsum", "torch.mm",
                                              ".mm(", " @ ", "addmm", NULL };
    static const char *const rows_src[] = { "softmax", "_norm", "Norm", "norm(", "normalize(",
                                            "sum(", "mean(", "amax", "amin", "max(dim",
                                            "logsumexp", "var(", "std(", "argmax", "argmin",
                                            ".max(", ".min(", NULL };
    if (s_any (src, (const char *const[]) { "scaled_dot_product_attention", "MultiheadAttention",
                                             NULL }))
        return KF_CLASS_ATTENTION;
    if (s_any (src, (const char *const[]) { "cumsum", "cumprod", "cummax", "cummin", NULL }))
        return KF_CLASS_SCAN;
    if (s_any (src, matmul_src))
        return KF_CLASS_MATMUL;
    if (s_any (src, rows_src))
        return KF_CLASS_ROW_REDUCTION;
    json_t *in0 = json_array_get (json_object_get (spec, "inputs"), 0);
    json_t *outs = json_object_get (spec, "outputs");
    if (!in0 || !json_array_size (outs))
        return KF_CLASS_OTHER;
    size_t i;
    json_t *o;
    json_array_foreach (outs, i, o)
        if (kf_prompt_tensor_elements (o) != kf_prompt_tensor_elements (in0))
            return KF_CLASS_OTHER;
    return KF_CLASS_ELEMENTWISE;
}

//  Whether WORD occurs in TEXT as a whole identifier, in any case:
//  "elu" in "F.elu(" but not in "relu", "sigmoid" not in "hardsigmoid"
//  nor in "hard-sigmoid".
static bool
s_word (const char *text, const char *word)
{
    size_t n = strlen (word);
    for (const char *at = strcasestr (text, word); at; at = strcasestr (at + 1, word)) {
        bool before = at > text && (isalnum ((unsigned char) at[-1]) || at[-1] == '_');
        //  "hard-swish", "hard sigmoid": the piecewise-linear kinds.
        if (!before && at - text >= 5 && !strncasecmp (at - 5, "hard", 4)
            && (at[-1] == '-' || at[-1] == ' '))
            before = true;
        bool after = isalnum ((unsigned char) at[n]) || at[n] == '_';
        if (!before && !after)
            return true;
    }
    return false;
}

bool
kf_prompt_costly_math (json_t *spec)
{
    //  Functions a compiler turns into a libm call or a long polynomial;
    //  square roots, divisions, minima and maxima have SIMD instructions.
    //  The formula count's libm names (kf_prompt_libm_name), each also
    //  with C's f suffix, and the row functions built of exp.
    static const char *const rows[] = { "softmax", "logsumexp", NULL };
    //  Round 50: calls made once a value of a broadcast input (tanh(b) of
    //  a * tanh(b)) cost an output nothing.
    kf_formula_t fm;
    if (kf_prompt_formula (spec, &fm) && fm.calls > 0 && fm.hoist_calls >= fm.calls)
        return false;
    const char *texts[4] = { kf_jstr (spec, "op"), kf_jstr (spec, "description"),
                             kf_jstr (json_object_get (spec, "reference"), "source"),
                             kf_jstr (json_object_get (spec, "attributes"), "fn") };
    for (size_t t = 0; t < 4; t++) {
        for (size_t i = 0; rows[i]; i++)
            if (s_word (texts[t], rows[i]))
                return true;
        const char *name;
        for (size_t i = 0; (name = kf_prompt_libm_name (i)); i++) {
            char f[32];
            snprintf (f, sizeof f, "%sf", name);
            if (s_word (texts[t], name) || s_word (texts[t], f))
                return true;
        }
    }
    return false;
}

kf_target_kind_t
kf_prompt_target_kind (const char *target, const char *language)
{
    if (target && !strncmp (target, "cuda", 4))
        return KF_TARGET_CUDA;
    if (target && (strstr (target, "level-zero") || strstr (target, "ze") == target
                   || !strncmp (target, "opencl", 6)
                   || strstr (target, "intel")))
        return KF_TARGET_INTEL;
    if (target && *target)
        return KF_TARGET_HOST;
    if (language && !strcmp (language, "cuda"))
        return KF_TARGET_CUDA;
    if (language && (!strcmp (language, "opencl") || !strcmp (language, "sycl")))
        return KF_TARGET_INTEL;
    return KF_TARGET_HOST;
}

//  ---------------------------------------------------------------------
//  Philosophy: what bounds this class of work

static const char *const s_bound[] = {
    [KF_CLASS_ELEMENTWISE] =
        "- Each output element depends only on the inputs at the same position: the work is "
        "bound by memory traffic unless the per-element formula is expensive (erf, tanh, exp), "
        "in which case cheaper math within the tolerance pays.\n",
    [KF_CLASS_ROW_REDUCTION] =
        "- Each output needs a whole row (or column): read it once, keep partial results in "
        "registers, and write once; the work is bound by memory traffic.\n",
    [KF_CLASS_MATMUL] =
        "- A matrix product or convolution does O(n) arithmetic per element loaded: at these "
        "sizes it is bound by arithmetic throughput, so the aim is reuse of loaded values "
        "(blocking) and the peak compute figure, not the copy bandwidth. Small or skinny "
        "shapes are the exception.\n",
    [KF_CLASS_ATTENTION] =
        "- Attention is two matrix products around a softmax: never materialise the full score "
        "matrix if it can stay in blocks; the products are bound by arithmetic, the softmax by "
        "how often the scores are re-read.\n",
    [KF_CLASS_SCAN] =
        "- A scan carries a dependency along its dimension: each output adds one element to "
        "the one before it, a chain of dependent additions. Independent rows (or other "
        "independent scans) break that chain: scan several at once, and split them across "
        "cores; only where there are too few of them, split the dimension itself into blocks "
        "scanned independently and fixed up with their carries. Every element is still read "
        "and written once, so a scan over large rows is bound by memory traffic once its "
        "chain is hidden.\n",
    [KF_CLASS_OTHER] =
        "- Work out first whether the operation is bound by memory traffic or by arithmetic "
        "(bytes moved against operations done) and optimise for that limit.\n",
};

//  An elementwise formula without libm calls: the operations its code
//  does, named (round 11: "additions, products, minima and maxima only"
//  stood beside softsign's divide and absolute value). Caller frees.
static char *
s_bound_cheap (json_t *spec)
{
    kf_formula_t fm;
    char kinds[160] = "";
    if (kf_prompt_formula (spec, &fm) && fm.counted && fm.kinds)
        snprintf (kinds, sizeof kinds, "; its code computes %s, %d operation%s an "
                  "element", kf_prompt_formula_kinds (fm.kinds, (char[128]) { 0 }, 128), fm.ops,
                  fm.ops == 1 ? "" : "s");
    bool slow = *kinds && fm.kinds & (1u << KF_OP_DIV | 1u << KF_OP_SQRT);
    return kf_strdupf (
        "- Each output element depends only on the inputs at the same position, and the "
        "formula here calls no exp, tanh, erf or log%s. The work is bound by memory traffic, so "
        "the aim is the copy bandwidth of the Target section. Read each input once, write each "
        "output once, and make no extra pass.\n%s", kinds,
        slow ? "- A division or a square root is not as cheap as an addition or a product: in "
               "SIMD registers a divide or square root costs several times a multiply (no figure "
               "for it is measured on this target), so count each as several operations when "
               "setting the formula against the memory time, and add none the formula does not "
               "need (an approximate reciprocal refined by one Newton step is cheaper where the "
               "tolerance allows).\n"
             : "");
}

static const char *s_philosophy_common =
    "- A wrong kernel is worth less than a slow one: stay within the stated tolerance before "
    "chasing speed.\n"
    "- Change one idea at a time relative to the kernel you start from, so a gain or a loss "
    "has a known cause.\n"
    "- Compare the kernel with the target's figures (Target section): its share of the "
    "memory and compute peaks says how much room is left.\n";

//  ---------------------------------------------------------------------
//  Strategies, by target kind, then by class

static const char *const s_strategies_host[] = {
    [KF_CLASS_ELEMENTWISE] =
        "- Keep the loop simple, pointers restrict, and let -O3 with the target flags "
        "vectorise it; check that the formula has no call the compiler cannot vectorise (expf, "
        "erff, tanhf, atan2f and every other libm function are not, under -std=c11 without "
        "-ffast-math, nor is sqrtf, which may set errno here; such a loop stays one scalar "
        "call an element, and neither __attribute__((optimize(\"no-math-errno\"))), "
        "#pragma GCC optimize nor __builtin_sqrtf changes that with this compiler): a "
        "polynomial or rational approximation, or a square root by intrinsic "
        "(_mm256_sqrt_ps with AVX2, _mm512_sqrt_ps with AVX-512), is.\n"
        //  Round 14: "bound by memory again" was asserted where the
        //  prompt's own budget said the loop was bound by its arithmetic,
        //  and a meta line saying so stood beside it.
        "- Once the math is vectorised, the loop is bound by memory only if the task's "
        "bytes at the measured rates take longer than its arithmetic (the Target section's "
        "budget per vector says which); then the output is written once and never read "
        "back, so non-temporal (streaming) stores, from the registers the results are in, "
        "save the cache-line read an ordinary store makes first; GCC does not emit them for "
        "a plain loop, so they take intrinsics (_mm256_stream_ps, _mm512_stream_ps) on an "
        "aligned destination, then _mm_sfence().\n"
        "- Split large tensors across cores with a few threads, each on a contiguous range.\n",
    [KF_CLASS_ROW_REDUCTION] =
        "- Walk each row contiguously and finish it while it is in cache; use several "
        "independent accumulators so additions overlap and vectorise.\n"
        "- Fuse the passes a row needs (an online maximum with a rescaled sum, Welford for mean "
        "and variance) when the row does not stay in cache between passes.\n"
        "- Give rows to threads in contiguous groups.\n",
    [KF_CLASS_MATMUL] =
        "- Block the loops so a tile of each operand stays in L1/L2 while it is reused; order "
        "the innermost loop so it walks contiguous memory (transpose or pack a block of the "
        "operand that is read with a stride).\n"
        "- Compute a register block of outputs per inner step with FMA, so each loaded value "
        "is used several times: x86-64 has 16 vector registers (32 with AVX-512), and an FMA "
        "takes about 4 cycles with one or two started a cycle, as the core goes (the Target "
        "section gives this host's measured rate), so 4 to 8 independent vector accumulators "
        "at least (its latency times its rate) are needed to keep them busy; leave a few "
        "registers "
        "for the loaded operands (e.g. 6 rows x 2 vectors = 12 accumulators with AVX2, 8 rows "
        "x 3 vectors = 24 with AVX-512; pick the vectors a row so they divide the output's "
        "columns, or handle the columns left over: 3 vectors of 16 floats, 48 columns, divide "
        "no power of two).\n"
        "- Split the output into blocks across cores with threads.\n",
    [KF_CLASS_ATTENTION] =
        "- Process a block of queries at a time against blocks of keys with an online softmax, "
        "so the score block stays in cache; vectorise the dot products over the head "
        "dimension.\n",
    [KF_CLASS_SCAN] =
        "- Along the contiguous dimension, a prefix sum within a vector takes log2(lanes) "
        "shift-and-add steps (lanes shifted in with zeros by permutes or alignr), then the "
        "carry of the elements before it, broadcast from the last lane of the previous "
        "vector. Along a slower dimension (down columns), each lane carries its own column's "
        "running sum: a row of outputs is the row of outputs before it plus a row of inputs, "
        "no prefix within a vector.\n"
        "- Many independent rows: give each thread a contiguous group of rows and scan "
        "several rows at once per thread so one row's dependent adds overlap another's. Few "
        "long rows: scan blocks of a row independently (one per thread), then add each "
        "block's carry in a second, vectorised pass.\n",
    [KF_CLASS_OTHER] =
        "- Make the innermost loop contiguous and simple enough to vectorise; block for the "
        "caches when data is reused; use threads for independent parts.\n",
};

static const char *const s_strategies_gpu[] = {
    [KF_CLASS_ELEMENTWISE] =
        "- Consecutive threads on consecutive elements, wide (16-byte) loads where aligned, "
        "a grid-stride loop, and enough blocks to fill every multiprocessor.\n"
        "- Fast math intrinsics are fine where the tolerance allows.\n",
    [KF_CLASS_ROW_REDUCTION] =
        "- One block per long row, one warp (sub-group) per short row; reduce within the warp "
        "with shuffles, across warps through shared (local) memory.\n"
        "- Fuse the passes a row needs (online softmax, Welford) so the row is read once.\n",
    [KF_CLASS_MATMUL] =
        "- Tile through shared (local) memory, with each thread computing a register tile of "
        "outputs; use tensor cores (or the matrix engine) when the dtypes and tolerance allow; "
        "double-buffer the tile loads.\n",
    [KF_CLASS_ATTENTION] =
        "- Tile queries per block, loop over key blocks with an online softmax in registers, "
        "and accumulate the output without writing scores to global memory.\n",
    [KF_CLASS_SCAN] =
        "- Scan within warps by shuffles, within blocks through shared memory, and across "
        "blocks with a carry pass (or decoupled look-back).\n",
    [KF_CLASS_OTHER] =
        "- Map independent work to threads so neighbours touch neighbouring addresses; stage "
        "reused data in shared (local) memory.\n",
};

//  Round 6: the generic advice ("transpose or pack a block of the operand
//  that is read with a stride") beside a layout note saying neither
//  operand of nn.Linear needs a transpose.
static const char *s_strategies_host_mm_rows_k =
    "- Both operands are read along k as they are stored (the Data section's layout note): "
    "each output is a dot product of two contiguous rows, so no transpose or packing is "
    "needed for unit stride. Two inner loops fit: dot products along k, one vector "
    "accumulator per output summed across its lanes at the end (no copy, one lane sum per "
    "output); or the outer-product order, a tile of outputs in registers fed by broadcasts "
    "of x against vectors of a copy of W's block transposed to [K][NR] panels (one copy a "
    "call, no lane sums). Time both; the second is the form tuned GEMM libraries use.\n"
    "- Compute a small block of outputs (a few rows of x against a few rows of W) per inner "
    "step, so each loaded vector feeds several FMAs; block the rows and k so the reused "
    "rows stay in L1/L2.\n"
    "- Split the output into blocks across cores with threads.\n";
static const char *s_strategies_host_cheap =
    "- Keep the loop simple, pointers restrict, and let -O3 with the target flags vectorise it; a "
    "clamp written as a conditional expression (x < lo ? lo : x) vectorises, but fminf/fmaxf "
    "stay calls into libm without -ffast-math (which this build does not use), and a branch "
    "may not vectorise.\n"
    "- Split large tensors across cores with a few threads, each on a contiguous range.\n"
    "- The output is written once and never read back: non-temporal (streaming) stores can "
    "save the cache-line read an ordinary store to an uncached line costs; GCC does not emit "
    "them for a plain loop, so they take intrinsics (_mm256_stream_ps, _mm512_stream_ps) on "
    "an aligned destination, then _mm_sfence().\n";
static const char *s_strategies_gpu_cheap =
    "- Consecutive threads on consecutive elements, wide (16-byte) loads where aligned, "
    "a grid-stride loop, and enough blocks to fill every multiprocessor.\n"
    "- Several elements per thread, with all loads issued before the first use, so enough "
    "bytes are in flight to saturate memory.\n";

//  Pitfalls of every task, of some classes, and of each target.
static const char *s_pitfalls_common =
    "- Outputs are filled with garbage before every call: write every element, every call.\n"
    "- Keep nothing between calls; each call is checked on fresh inputs.\n"
    "- Inputs are read-only, even as scratch space; use ctx->scratch_alloc for temporary "
    "memory.\n"
    "- Sizes need not be multiples of the vector width or block size: handle the tail, and "
    "every shape case listed in the task.\n";
static const char *s_pitfalls_exp =
    "- Subtract the maximum of the values a sum of exponentials runs over (each row's, or "
    "each column's where the softmax is over dim 0) before exponentiating, or large inputs "
    "overflow.\n";
static const char *s_pitfalls_matmul =
    "- Accumulate in at least the precision the reference uses; a long sum in low precision "
    "drifts past the tolerance.\n";
static const char *s_pitfalls_host =
    "- Threads you start must have finished when kf_forward returns (work after it is "
    "rejected as hidden from the clock); no OpenMP runtime is linked.\n";
static const char *s_pitfalls_cuda =
    "- Launch on ctx->stream; do not synchronise the device or allocate memory inside "
    "kf_forward; managed memory is refused at compile time.\n";

static const char *s_analysis =
    "Answer these briefly before the code:\n"
    "1. How many bytes must the kernel move and how many operations must it do at least, and "
    "what runtime does each imply at the target's measured figures? Which one binds?\n"
    "2. With a kernel to improve shown: where does it stand against that bound, and what "
    "is the largest cost left? With none yet: which structure reaches the bound most "
    "directly?\n"
    "3. Which single change is most likely to help next, and what could it break?\n";

static bool
s_exponentiates (json_t *spec, kf_task_class_t c)
{
    if (c == KF_CLASS_ATTENTION)
        return true;
    const char *op = kf_jstr (spec, "op");
    const char *src = kf_jstr (json_object_get (spec, "reference"), "source");
    return strstr (op, "softmax") || strstr (src, "softmax") || strstr (src, "logsumexp");
}

json_t *
kf_prompt_default_sections_for (const char *language, const char *target, json_t *spec)
{
    kf_task_class_t c = kf_prompt_task_class (spec);
    kf_target_kind_t k = kf_prompt_target_kind (target, language);
    bool cheap = c == KF_CLASS_ELEMENTWISE && spec && !kf_prompt_costly_math (spec);
    char *bound = cheap ? s_bound_cheap (spec) : NULL;
    char *philosophy = kf_strdupf ("%s%s", bound ? bound : s_bound[c], s_philosophy_common);
    free (bound);
    const char *strategies = k == KF_TARGET_HOST ? s_strategies_host[c] : s_strategies_gpu[c];
    if (cheap)
        strategies = k == KF_TARGET_HOST ? s_strategies_host_cheap : s_strategies_gpu_cheap;
    if (c == KF_CLASS_MATMUL && k == KF_TARGET_HOST && kf_prompt_rows_along_k (spec))
        strategies = s_strategies_host_mm_rows_k;
    char *pitfalls = kf_strdupf ("%s%s%s%s", s_pitfalls_common,
                                 s_exponentiates (spec, c) ? s_pitfalls_exp : "",
                                 c == KF_CLASS_MATMUL || c == KF_CLASS_ATTENTION
                                     ? s_pitfalls_matmul : "",
                                 k == KF_TARGET_HOST ? s_pitfalls_host
                                 : k == KF_TARGET_CUDA ? s_pitfalls_cuda : "");
    json_t *sections = philosophy && pitfalls
                       ? json_pack ("{s:s, s:s, s:s, s:s}", "philosophy", philosophy,
                                    "strategies", strategies, "pitfalls", pitfalls,
                                    "analysis", s_analysis)
                       : NULL;
    free (philosophy);
    free (pitfalls);
    return sections;
}

//  ---------------------------------------------------------------------
//  Hint vocabulary

//  Hints the gradient wrote in a GPU's words (kf_gradient.c writes a
//  host's own words for a host run; these cover hints stored before), in
//  what the host descriptor's levels mean: threads started and joined,
//  threads that wait for each other, atomics or locks
//  (analysis/kf_descriptor.c).
static const struct { const char *gpu, *host; } s_host_words[] = {
    { "tiling through shared/local memory (or cache blocking on the host)", "cache blocking" },
    { "coalesced or vectorised loads and stores (wide types, aligned, contiguous accesses)",
      "contiguous, SIMD-vectorised loads and stores" },
    { "register tiles over shared tiles, double buffering or asynchronous copies",
      "register blocks inside cache blocks, with prefetching" },
    { "block/work-group barriers so threads cooperate through shared memory",
      "several threads, each on its own share of the work, started and joined" },
    { "warp/sub-group primitives (shuffles, sub-group reductions) in place of barriers",
      "threads that wait for each other (barriers, condition variables, OpenMP reductions)" },
    { "global coordination (atomics or several launches) to spread one row over many blocks",
      "threads that update shared results with atomics or locks" },
    { "no synchronisation at all (each thread independent)", "a single thread" },
    { "(tensor cores, matrix engines)", "(FMA micro-kernels, AMX or VNNI where present)" },
    { "coalesced/vectorised", "SIMD-vectorised" },
    { "shared/local tiling", "cache blocking" },
    { "warp/sub-group primitives", "threads that wait for each other" },
    { "block barriers", "threads started and joined" },
    { "global coordination", "threads sharing results through atomics or locks" },
    { "scalar global access", "scalar access" },
};

char *
kf_prompt_hints_for_target (const char *hints, kf_target_kind_t k)
{
    if (!hints)
        return NULL;
    char *text = strdup (hints);
    if (k != KF_TARGET_HOST || !text)
        return text;
    for (size_t i = 0; i < sizeof s_host_words / sizeof s_host_words[0]; i++) {
        const char *from = s_host_words[i].gpu, *to = s_host_words[i].host;
        char *at;
        while (text && (at = strstr (text, from))) {
            char *next = kf_strdupf ("%.*s%s%s", (int) (at - text), text, to, at + strlen (from));
            free (text);
            text = next;
        }
    }
    return text;
}
