/*  kf_prompt_epilogue.h - the work a matrix product's task does after the
 *  product (its epilogue), counted per output and estimated in time.
 *
 *  Round 16 of the model in the loop: softmax(q @ k^T / 8) read "68% of
 *  one core's peak" counting the product's flops alone, while its 2
 *  million exps took about a quarter of the time; its ideas spoke of a
 *  "bias, activation" epilogue. The count, the estimate and the idea
 *  come from the reference's forward (kf_prompt_formula.h), one
 *  reckoning for the Target section, a kernel's position line and the
 *  meta round's outcomes.
 */
#ifndef KF_PROMPT_EPILOGUE_H
#define KF_PROMPT_EPILOGUE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* What follows SPEC's product, per output element: ROW the row function
 * ("softmax", "log_softmax"; "" for none), OPS its arithmetic
 * operations (a softmax's maximum, subtraction, sum and scaling by the
 * row's reciprocal sum, and what forward writes besides), CALLS its libm
 * calls (a softmax's exp), NAMES those calls ("tanh"), OUTPUTS the
 * output elements, VECTOR_OPS the vector operations an element is
 * estimated at: OPS plus CALL_VOPS, its calls' (round 48: each as SIMD
 * code near f32 computes it, kf_prompt_libm_vops, a row function's exp
 * as KF_PROMPT_EXP_OPS; no call's rate is measured). */
typedef struct {
    char row[16];
    /* Round 24: COL, where the epilogue reduces over the product's rows
     * (kf_formula_t's COL; "" where not, or where a row function is read):
     * COL_STAT the statistic in words ("mean of its squares"), COL_FOLD
     * what a tile folds into ("sums of squares"), COL_THEN what follows
     * on each element ("scale", "shift", "step"; "" where the statistic
     * is the output), COL_DIM its dimension as forward writes it. OPS
     * counts the reduction's own operation an element (an add, a maximum;
     * a norm's square besides). Round 32: a softmax over each column
     * ("softmax", "log_softmax") is read here too: its statistic the
     * column's maximum and sum of exponentials, then "exp and scale"
     * ("exp and shift") on each element, its exp counted in CALLS. */
    char col[16];
    char col_stat[48];
    char col_fold[48];
    char col_then[16];
    int col_dim;
    /* The product's M, N and K (kf_prompt_matmul_flops) and its count. */
    long long mnk[3];
    double flops;
    int ops;
    int calls;
    char names[64];
    double outputs;
    int call_vops;
    double vector_ops;
    /* Round 31: a row function that reduces each row to one value
     * (logsumexp(a @ w.t(), dim=1)): the product is no output, and
     * OUTPUTS counts its elements, which the epilogue works on. */
    bool reduced;
} kf_epilogue_t;

/* Vector operations an exp is taken at: a range reduction (a multiply, a
 * rounding, a subtraction), a degree-5 polynomial (5 FMAs) and the 2^k
 * scaling (2 integer operations). An estimate from the operation count,
 * said to be one wherever it is used. */
#define KF_PROMPT_EXP_OPS 10

/* Reads SPEC's epilogue into E: true where SPEC is a matrix product
 * whose operation count follows from its shapes and whose forward does
 * something readable after the product; false (E zeroed) otherwise. */
bool kf_prompt_epilogue (json_t *spec, kf_epilogue_t *e);

/* The estimated one-core times, in ms, at host device D's measured
 * one-core FMA peak (each vector operation in an FMA's issue slot):
 * *PRODUCT_MS the product's, *EPI_MS the epilogue's. False where SPEC has
 * no epilogue (kf_prompt_epilogue) or D no such peak. */
bool kf_prompt_epilogue_ms (json_t *spec, json_t *d, kf_epilogue_t *e, double *product_ms,
                            double *epi_ms);

/* Writes what the epilogue does per output and its estimated time, and
 * the product's share of the estimated one-core floor (product plus
 * epilogue), beginning "the softmax after the product is not in that
 * count: ..." and ending with a full stop; nothing where
 * kf_prompt_epilogue_ms is false. */
void kf_prompt_epilogue_text (FILE *f, json_t *spec, json_t *d);

/* The position line's sentences for a kernel whose compute figures count
 * the product alone: " Those shares are the product's alone: the
 * softmax after it is not counted (estimated ...)." and the product's
 * share of the estimated floor. */
void kf_prompt_epilogue_position (FILE *f, json_t *spec, json_t *d);

/* The Target section's line: "  Epilogue: " and kf_prompt_epilogue_text. */
void kf_prompt_epilogue_line (FILE *f, json_t *spec, json_t *d);

/* The same reckoning as a clause of a meta round's outcome line: "; the
 * softmax after the product is not counted (estimated ...)". */
void kf_prompt_epilogue_brief (FILE *f, json_t *spec, json_t *d);

/* The host idea that fuses SPEC's epilogue, naming it (a softmax: in
 * the tile while the scores are in registers, the row's maximum and sum
 * in one pass, a cheaper exp within the task's tolerance); caller frees.
 * NULL where no epilogue is read: the general text stands. A chain of two
 * products gets its own fusion idea instead (kf_prompt_chain_idea). */
char *kf_prompt_epilogue_idea (json_t *spec);

/* Round 24: for an epilogue that reduces over each column's rows (a
 * column's RMS after the product), the threads idea that splits by
 * column blocks, each thread owning whole columns, with A and B the
 * operands' names; round 30: for one over each row (a softmax, a row's
 * norm), by row blocks, each thread owning whole rows. Caller frees.
 * NULL where SPEC's epilogue is neither: the general text stands. */
char *kf_prompt_epilogue_threads_idea (json_t *spec, const char *a, const char *b);

/* Round 24: the working-set line's clause on splitting threads for such
 * an epilogue (" By column blocks each thread ...", or " By row blocks"
 * for a row's); nothing otherwise. */
void kf_prompt_epilogue_split (FILE *f, json_t *spec);

/* "the task's tolerance (rtol R, atol A)" of SPEC into OUT (SIZE bytes),
 * or without the figures where it has none: how the ideas that trade
 * accuracy for speed name their bound. */
void kf_prompt_tolerance_within (json_t *spec, char *out, size_t size);

/* Round 21: "write the output once" against a kernel that blocks k and
 * keeps its partial sums in the output (a k chunk at a time): the idea
 * says where its epilogue goes in such a kernel. Appended to each
 * epilogue idea's text. */
#define KF_PROMPT_EPILOGUE_K_CHUNKS \
    " (in a kernel that blocks k and keeps partial sums in the output, at the last k " \
    "chunk's store, so that no pass reads the output back afterwards)"

#endif
