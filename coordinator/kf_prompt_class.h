/*  kf_prompt_class.h - what kind of task and target a prompt speaks to.
 *
 *  Advice that fits a softmax ("subtract the row maximum") is noise in a
 *  GELU prompt, "memory-bound" is false for a large matrix product, and
 *  coalescing or shared memory mean nothing on a CPU. So the starting
 *  sections, the directions sibling prompts are pointed at and the
 *  vocabulary of the gradient's hints are chosen here from the task's
 *  class and the target's kind (kf_prompt_class.c; the directions, the
 *  idea lists, are kf_prompt_ideas.c).
 */
#ifndef KF_PROMPT_CLASS_H
#define KF_PROMPT_CLASS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef enum {
    KF_CLASS_ELEMENTWISE,    /* one output element from the same place in the inputs */
    KF_CLASS_ROW_REDUCTION,  /* softmax, norms, sums and maxima over a dimension */
    KF_CLASS_MATMUL,         /* matrix products, linear layers, convolutions */
    KF_CLASS_ATTENTION,      /* scores, softmax and the weighted sum together */
    KF_CLASS_SCAN,           /* prefix sums and other running operations */
    KF_CLASS_OTHER
} kf_task_class_t;

typedef enum {
    KF_TARGET_HOST,          /* the CPU: C, -march=native */
    KF_TARGET_CUDA,          /* an NVIDIA GPU */
    KF_TARGET_INTEL          /* an Intel GPU through Level Zero (OpenCL C, SYCL) */
} kf_target_kind_t;

/* The class of task SPEC: by its op when that names one, else by what
 * its reference calls (a PyTorch module's layers and functions, a C
 * reference's loops are not read), else elementwise when every output
 * has as many elements as the first input, else OTHER. */
kf_task_class_t kf_prompt_task_class (json_t *spec);
const char *kf_prompt_class_name (kf_task_class_t c);

/* The kind of TARGET ("host", "cuda:sm_90", "level-zero"), with LANGUAGE
 * deciding when the target is empty. */
kf_target_kind_t kf_prompt_target_kind (const char *target, const char *language);

/* The starting text of the four evolvable sections for a task of SPEC in
 * LANGUAGE on TARGET (caller's): {philosophy, strategies, pitfalls,
 * analysis}. */
json_t *kf_prompt_default_sections_for (const char *language, const char *target, json_t *spec);

/* Directions worth trying for a task of class C on a target of kind K:
 * a NULL-ended list of short phrases (static). Sibling prompts are each
 * pointed at a different one. Each host list opens with at least
 * KF_PROMPT_IDEAS_APART directions that stand alone (worth trying from
 * the plain kernel, none "once" another is done) and differ in what they
 * change; those that build on another come after (round 6). */
#define KF_PROMPT_IDEAS_APART 3

/* The head of the elementwise idea that cuts a formula's instructions once
 * it is in vector registers (kf_prompt_ideas.c), as the attempt's text
 * knows it (kf_prompt_attempt.c). */
#define KF_PROMPT_IDEA_CUT "spend fewer instructions"

/* Whether IDEA is the one about cutting a kernel's own instructions
 * (it begins with KF_PROMPT_IDEA_CUT). */
bool kf_prompt_idea_cuts_code (const char *idea);
const char *const *kf_prompt_ideas (kf_task_class_t c, kf_target_kind_t k, size_t *count);

/* The same for task SPEC: an elementwise formula without costly math
 * (kf_prompt_costly_math false) gets directions about memory traffic,
 * not about approximating a function it does not have, and one with it
 * on the host a direction that cuts the arithmetic of its functions
 * (named, with the tolerance); a host matrix product whose layout is
 * read (kf_prompt_layout_ideas: nn.Linear, a @ b.T, a.T @ b, a @ b)
 * gets directions that follow that layout, naming its operands. */
const char *const *kf_prompt_ideas_for (json_t *spec, kf_target_kind_t k, size_t *count);

/* TEXTS (N of them, each the caller's allocation, taken) as a NULL-ended
 * list kept for the process's life, one copy of each distinct list: the
 * idea lists written for a task (its operands' names, its function, its
 * tolerance) live as long as the static ones. NULL where a text is NULL,
 * N is 0 or over 8, or the store is full. */
const char *const *kf_prompt_ideas_kept (char **texts, size_t n);

/* IDEA with the generic middle of the elementwise approximation idea
 * (the range reductions of a log and an exp, frexpf, sqrtf) replaced by
 * those of the functions SPEC's formula calls (a sine's, an exp's, a
 * log's, erf's, a square root's), as the attempt reads it; NULL where
 * IDEA holds no such middle or the formula names none of them. The
 * list's text stays the key of the idea's tries. Caller frees. */
char *kf_prompt_approx_on_host (const char *idea, json_t *spec);

/* Whether SPEC's reference reads both operands of its matrix product
 * along the reduction dimension as stored: a linear layer (nn.Linear,
 * F.linear, weight [out][in]) or a product against an operand used
 * transposed (a @ b.T, b [N][K]), as kf_prompt_product_layout reads it
 * (the Data section's layout note, kf_prompt_layout.h). */
bool kf_prompt_rows_along_k (json_t *spec);

/* Whether SPEC's op, description, attributes.fn or reference source
 * names a function that costs far more than a multiply-add (exp, tanh,
 * erf, log, sigmoid, GELU, ELU, ...), as a whole word in any case. An
 * elementwise task without one is bound by memory traffic. */
bool kf_prompt_costly_math (json_t *spec);

/* HINTS (the gradient's sentences, GPU vocabulary) in the words of a
 * target of kind K: on the host, shared-memory tiling is cache blocking,
 * warp primitives are SIMD lane operations and so on. Caller frees; NULL
 * when HINTS is NULL. */
char *kf_prompt_hints_for_target (const char *hints, kf_target_kind_t k);

/* What an idea of the lists above changes, so a kernel that already does
 * it is not handed it again (round 5 of issue 15). */
typedef enum {
    KF_IDEA_OTHER, KF_IDEA_THREADS, KF_IDEA_SIMD, KF_IDEA_STREAM, KF_IDEA_UNROLL,
    KF_IDEA_APPROX, KF_IDEA_BLOCK, KF_IDEA_MICRO, KF_IDEA_PACK, KF_IDEA_FUSED_ROW,
    KF_IDEA_ACCUMULATORS, KF_IDEA_EPILOGUE,
    /* Round 17: cheaper math by hardware estimates or a table (rcp/rsqrt
     * estimates, getexp/getmant, a permute table), which a parent's
     * polynomial already tagged approximate hid; the outer-product order
     * of a product (an element of one operand broadcast against a vector
     * of the other's row, accumulating a row of outputs). */
    KF_IDEA_ESTIMATE, KF_IDEA_OUTER,
    /* Round 24: how threads split the work, beside that they start: taken
     * as they go from a shared counter (atomic_fetch_add,
     * __atomic_fetch_add, __sync_fetch_and_add, a claim under a lock) or
     * a dynamic schedule, not fixed shares. No idea is about it alone: it
     * is a way of doing the threads idea (kf_prompt_credit.h). Candidate
     * 7's fixed halves turned chunks from a counter read as "added no
     * feature this reading knows". */
    KF_IDEA_DYNAMIC,
    /* Round 26: software prefetch a distance ahead of the loads
     * (_mm_prefetch, __builtin_prefetch): logexp_where's largest gain
     * (3.79 to 3.31 ms), which no idea offered. */
    KF_IDEA_PREFETCH,
    /* Round 43: only the diagonal and one triangle of a symmetric product
     * (x @ x.t()), read from loops that walk one triangle
     * (kf_descriptor_triangle.h). */
    KF_IDEA_TRIANGLE,
    /* Round 52: a chain of two products done a block of rows at a time,
     * the intermediate kept in a small buffer (kf_descriptor_chain.h):
     * three candidates did it while the chain's idea read as untried. */
    KF_IDEA_CHAIN
} kf_idea_feature_t;

/* Round 22: how a second try of an idea about FEATURE differs from one
 * in flight whose code is not written yet ("another formula: a lower
 * degree, ..."): static text. */
const char *kf_prompt_feature_other_way (kf_idea_feature_t feature);

/* Round 28: whether SPEC's scan (a cumsum and the like in its reference)
 * runs along a dimension other than the last, contiguous one ("dim=0" of
 * a matrix): its lanes are then columns, each its own running sum. False
 * where no dim is read. */
bool kf_prompt_scan_down (json_t *spec);

/* The feature IDEA (one of the lists' texts) is about; KF_IDEA_OTHER for
 * one no code shows (the simplest loop). */
kf_idea_feature_t kf_prompt_idea_feature (const char *idea);

/* What IDEA's text takes as given of the kernel it is handed with, its
 * premises (kf_prompt_premise.c), as bits of kf_idea_feature_t and
 * KF_PREMISE_VECTORS: a feature named after a word that presupposes it
 * (once, keep, already, existing) in the same clause, or right after a
 * definite one (the, its, each, their): "packing ... inside the cache
 * blocks", "keep the streaming stores but ...", "threads ... once each
 * element's math is vectorised" (round 20's rule, of which this is the
 * general form). What the idea adds itself (kf_prompt_idea_bits) is no
 * premise, nor a clause kf_prompt_idea_for_parent drops. The lists' texts
 * and a meta round's are read alike; 0 for NULL. */
unsigned kf_prompt_idea_premise (const char *idea);

/* Whether IDEA names the kernel ID ("candidate 8", "candidates 8 and",
 * "candidate #8"): round 34's meta round wrote an idea from candidate 8's
 * code that the planner then handed to candidate 8, the idea's feature
 * being one no code reading tells. */
bool kf_prompt_idea_cites (const char *idea, int64_t id);

/* The words of the idea a plain loop the compiler vectorises is (a
 * kernel whose build vectorised its loops without intrinsics has it:
 * kf_search_idea.c, round 52). */
#define KF_PROMPT_IDEA_SIMPLEST_LOOP "by the simplest loop the compiler vectorises fully"

/* The premise of math computed in vector registers, by intrinsics or by
 * the compiler: held by a kernel that is not scalar
 * (kf_search_idea_scalar), not by a feature bit. */
#define KF_PREMISE_VECTORS (1u << 31)

/* Round 48: the prefetch idea's clause for a kernel of ordinary stores,
 * left out for one that streams (kf_prompt_idea_for_parent). */
#define KF_PROMPT_PREFETCH_WRITE_ALLOCATE                                                 \
    "; with ordinary stores the output's write-allocate read is a stream too (a write "   \
    "prefetch, _MM_HINT_ET0, is prefetchw only where the flags enable PRFCHW, else a read " \
    "prefetch, which fetches the line as well)"

/* IDEA as handed to an attempt from a kernel whose code does FEATURES
 * (kf_prompt_source_features): a clause that says what to do where the
 * kernel has a feature ("in a kernel that blocks k ..., at the last k
 * chunk's store", KF_PROMPT_EPILOGUE_K_CHUNKS) left out where it lacks
 * that feature (round 25: the fused epilogue "at the last k chunk" went
 * to a kernel that blocks nothing), and one for a kernel without a
 * feature (KF_PROMPT_PREFETCH_WRITE_ALLOCATE) left out where it has it
 * (round 48: the write-allocate stream's prefetch for a kernel that
 * streams its stores). Caller frees; NULL for NULL. */
char *kf_prompt_idea_for_parent (const char *idea, unsigned features);

/* The elements of TENSOR (a task's input or output: its "shape"), 1 for
 * one of no dimensions. */
double kf_prompt_tensor_elements (json_t *tensor);

/* Whether SOURCE (in LANGUAGE) already does F: threads (and whether they
 * take their work from a shared counter as they go), SIMD intrinsics,
 * streaming stores, unrolling or several accumulators, approximate math,
 * cache blocking, a register micro-kernel, packing, a fused row pass, on
 * the host an epilogue fused into the product (the output never read
 * back), hardware estimates or tables, the outer-product order -
 * read by the descriptors (analysis/kf_descriptor.h) and from the code
 * in the forms models write (kf_prompt_does.c). False for
 * KF_IDEA_OTHER. */
bool kf_prompt_source_does (const char *source, const char *language, kf_idea_feature_t f);

/* Every feature SOURCE does, as bits 1 << F (one reading of the code for
 * all ideas). */
unsigned kf_prompt_source_features (const char *source, const char *language);

/* FEATURES (bits as above) in words, comma-separated, into BUF: "threads,
 * streaming (non-temporal) stores"; "" for none. Returns BUF. Every
 * feature's words together fit in KF_PROMPT_FEATURE_WORDS_MAX bytes
 * (test_tags_round18). */
#define KF_PROMPT_FEATURE_WORDS_MAX 1024
const char *kf_prompt_feature_words (unsigned features, char *buf, size_t size);

/* What a candidate's code added to its parent's, from its ROW (a history
 * or try row with "features" and "parent_features", the bits kept with
 * the plan, and "parent_id"): the child's bits less its parent's, all of
 * them for a kernel written from scratch, 0 where either is unknown. */
unsigned kf_prompt_features_added (json_t *row);

/* Round 14: whether a try handed the idea HANDED (may be NULL) whose code
 * ADDED those feature bits counts for IDEA: it was handed IDEA, or IDEA
 * in other words (round 19: a meta round's rewording; the same subject,
 * kf_prompt_idea_bits, other than none), or its code added what IDEA is
 * about (candidate 3, handed intrinsics, stored streaming too; every
 * part of an idea of several). *BY_CODE (when not NULL) is set for the
 * last. */
bool kf_prompt_try_counts (const char *handed, unsigned added, const char *idea, bool *by_code);

/* Round 20: the features IDEA needs, as bits of kf_idea_feature_t: its
 * subject's (kf_prompt_idea_feature), and for an idea of several parts
 * done "as one change" each part it names (cache blocking, packing, a
 * micro-kernel); 0 for KF_IDEA_OTHER. */
unsigned kf_prompt_idea_bits (const char *idea);

#endif
