/*  kf_prompt_formula.h - what a PyTorch reference's forward computes per
 *  output element, as its code reads.
 *
 *  Round 11 of the model in the loop: softsign's prompt said its formula
 *  had "additions, products, minima and maxima only" beside a divide and
 *  an absolute value, said "compute: not known" of five operations an
 *  element, and matmul_scale_tanh's said nothing of 196,608 tanh calls
 *  that cost as much as the product. The counts come from forward's
 *  code (comments and strings blanked), and only where every call and
 *  operator in it is one this reader knows; otherwise it says nothing.
 */
#ifndef KF_PROMPT_FORMULA_H
#define KF_PROMPT_FORMULA_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* SRC (Python) with its comments and string literals, docstrings
 * included, blanked to spaces (caller frees; NULL when out of memory). */
char *kf_prompt_python_code (const char *src);

/* The parameter names of `def NAME(self, ...)` in SRC, self left out, as
 * a JSON array (caller's), or NULL where there is no such def: forward's
 * say what a PyTorch task's in<i> stand for. */
json_t *kf_prompt_python_params (const char *src, const char *name);

/* The kinds of arithmetic a formula does, as bits 1 << KF_OP_*. */
typedef enum {
    KF_OP_ABS, KF_OP_ADD, KF_OP_DIV, KF_OP_MINMAX, KF_OP_MUL, KF_OP_SQRT, KF_OP_CMP,
    KF_OP_KINDS
} kf_formula_op_t;

/* What forward of SPEC's PyTorch reference does: OPS the arithmetic
 * operations it writes (an operator or a known function, F.softsign
 * three: an absolute value, an addition, a division), KINDS their
 * kinds, CALLS the calls of functions a compiler makes a libm call of
 * (tanh, exp, erf, log, sigmoid: one each; softplus two, mish three),
 * with NAMES the first few of them ("tanh"). COUNTED is false where
 * forward holds anything else (a call this reader does not know,
 * indexing, a loop, a matrix product's @): OPS and KINDS then mean
 * nothing. AFTER_PRODUCT counts the libm calls that come after the
 * first matrix product in forward or take it as their argument (an
 * epilogue's); PRODUCT says whether forward names one. RELATED: an
 * exact identity may share or remove a call (round 16: exp(-x*x/2) *
 * cos(3*x) was handed one, and none exists): two of its libm calls take
 * the same argument, one takes another's result, or one function makes
 * several calls (softplus, mish). */
typedef struct {
    bool counted;
    int ops;
    unsigned kinds;
    int calls;
    int after_product;
    bool product;
    bool related;
    /* Round 34: NESTED: one libm call's argument holds another's (tanh of
     * a softplus): only then does a composition's identity apply. */
    bool nested;
    char names[64];
    /* Round 38: CALL_VOPS: the vector instructions a vector of outputs
     * takes for the calls, each as SIMD code computes it
     * (kf_prompt_libm_vops), summed over the calls forward makes. */
    int call_vops;
    /* Round 48: AFTER_VOPS: those of the calls AFTER_PRODUCT counts (an
     * epilogue's tanh at its 16, not an exp's 10). */
    int after_vops;
    /* Round 50: HOIST_CALLS, HOIST_VOPS: the calls (and their vector
     * instructions) whose argument reads only inputs smaller than the
     * output, broadcast across it (tanh(b) of a * tanh(b), b one value a
     * column): made once per such value, HOIST_VALUES of them at most,
     * not once per output element; HOIST_NAMES their functions. */
    int hoist_calls;
    int hoist_vops;
    double hoist_values;
    char hoist_names[32];
    /* Round 39: DIVS: its `/` operators by a value, not a literal. */
    int divs;
    /* Round 16: softmax(q @ k^T / 8) was counted as its product alone.
     * EPI_OPS: the arithmetic operations per output after the product
     * (an operator, a known function; a sign of a literal is none), as
     * AFTER_PRODUCT counts its calls; ROW: the row function applied to
     * the product's result ("softmax", "log_softmax", "layer_norm"; "" where none),
     * ROW_OUTER when it is the last thing forward does (its result is
     * the output). */
    int epi_ops;
    char row[16];
    bool row_outer;
    /* Round 24: p * rsqrt((p * p).mean(dim=0, keepdim=True) + 1e-5) was
     * read as 5 elementwise operations, its fusion told to finish each
     * tile in registers. COL: a reduction over the product's rows, each
     * column's ("mean", "sum", "amax", "amin", "norm", "vector_norm"; ""
     * where none): the first such call over dim 0 or -2 (dim=, axis=, or
     * positional but for a norm, whose positional argument is its order)
     * whose argument holds the product or comes after it; COL_DIM the
     * dimension as written. COL_SQUARES: its argument squares (a product
     * in it) or it is a norm; COL_ABS: its argument takes abs. COL_AFTER:
     * the kinds (1 << KF_OP_*) of the operations after the product outside
     * the call and its argument (a per-column scale: products, divisions,
     * square roots); COL_OUTER when it is the last thing forward does. */
    char col[16];
    int col_dim;
    /* Round 46: a * rsqrt(1 + a * a) * exp(-b * b / 2) was told its terms
     * can cancel, where its one sum adds a constant to a square. CALL_SUM:
     * a binary + or - whose parenthesis group (or line) holds a libm call
     * or a root or reciprocal, so an approximated term's error reaches a
     * sum (1 + erf(x), sigmoid(a) - tanh(b), tanh(exp(a) - b)). */
    bool call_sum;
    bool col_squares, col_abs, col_outer;
    unsigned col_after;
} kf_formula_t;

/* Whether FM's output sums terms that hold its calls' results, which can
 * cancel: a sum with a call among its terms (CALL_SUM), or a row's sum
 * of them ("sum" as ROW). An approximation's error then counts against
 * the sum, not the term. */
bool kf_prompt_formula_sums_calls (const kf_formula_t *fm);

/* Whether WORD is a whole entry of NAMES (kf_formula_t's list, ", "
 * between): "sigmoid" is not found in "logsigmoid". */
bool kf_prompt_formula_named (const char *names, const char *word);

/* Where forward's definition starts in a reference's SOURCE (SOURCE
 * itself where it has none): the text from there holds the calls forward
 * and the methods after it make, not a docstring's formula above it
 * (round 27: "softmax(q @ k^T / 8)" above one bmm read as attention). */
const char *kf_prompt_forward_from (const char *source);

/* Reads SPEC's reference into F; returns false (F zeroed) where it is not
 * PyTorch or has no forward. */
bool kf_prompt_formula (json_t *spec, kf_formula_t *f);

/* Whether no exact identity can share or remove a libm call of SPEC's
 * formula: it makes one known call, or calls unrelated (kf_formula_t's
 * RELATED). Round 24: celu(a) * g[None, :] + b (one exp) was handed the
 * identity idea twice, its broadcast's indexing leaving it uncounted
 * while its one known call was read all the same. */
bool kf_prompt_formula_no_identity (json_t *spec);

/* The I-th name of the functions the count takes for libm calls (tanh,
 * exp, atan, ...), NULL past the last: one list for the count and for
 * kf_prompt_costly_math (round 15: atan was counted as a call but not
 * known as costly, and the prompt said the formula calls no exp, tanh,
 * erf or log and is bound by memory). */
const char *kf_prompt_libm_name (size_t i);

/* Round 38: the vector instructions a vector of NAME (a libm name of
 * kf_prompt_libm_name's list) takes where SIMD code computes it near f32
 * precision, a range reduction and a polynomial (exp about 10, atan
 * about 16): an assumption, not measured; 0 for a name not in the list. */
int kf_prompt_libm_vops (const char *name);

/* KINDS as words in a list, in the order of kf_formula_op_t: "absolute
 * values, additions, divisions and products" (into BUF). */
const char *kf_prompt_formula_kinds (unsigned kinds, char *buf, size_t size);

#endif
