/*  kf_descriptor_flow.h - values followed statement by statement through
 *  each function, for the algorithm axis of the descriptors
 *  (kf_descriptor.c).
 *
 *  Round 10 of issue 15 filed two kernels "direct translation" that a
 *  kernel engineer would not:
 *  - a GEMM applying bias + GELU to its accumulators in registers before
 *    they are written (a fused epilogue) was read only in the one shape
 *    `gelu (acc + bias[j])`, not as `s = add (s, bias); s = gelu16 (s);
 *    store (.., s)` nor `v0 = gelu16 (_mm512_add_ps (v0, b0))`;
 *  - log cosh x taken as |x| - ln 2 + log1p(exp(-2|x|)), never a cosh,
 *    with exp(-2|x|) built by hand in base 2 and log1p from a table.
 *  Both are a value's path from one statement to the next, which no
 *  single pattern sees.
 */
#ifndef KF_DESCRIPTOR_FLOW_H
#define KF_DESCRIPTOR_FLOW_H

#include "kf_descriptor_acc.h"

#define KF_FLOW_SNIP 48

typedef struct {
    int epilogue;                   /* stores of a product's accumulator value that
                                       went through an activation on the way */
    int logcosh;                    /* magnitudes |x| through exp(-2|x|) and added back */
    char epilogue_snip[KF_FLOW_SNIP];  /* the value stored */
    char logcosh_snip[KF_FLOW_SNIP];   /* the magnitude */
} kf_descriptor_flow_t;

/* Reads CODE (comments and strings blanked) with ACC, its accumulators
 * (kf_descriptor_accumulators), into OUT:
 * - the product's accumulators are those updated by a multiply-add of two
 *   different factors, each a load (x[k], _mm512_loadu_ps (..)), or any
 *   of a register tile; a sum of squares (x * x) is none, nor is a sum kept
 *   in memory (z[j] += ..., not a local). Through each function, in order,
 *   a name assigned from an expression that names an accumulator, or a
 *   name that follows from one, follows from it; it is activated when the
 *   expression applies a function of the value (exp, tanh, erf, max, div,
 *   scalef ... as a call or an intrinsic, a comparison's `?`, or a call of
 *   a function of the file that does) or names an activated value. A
 *   store (an element of an array that is not local, or a store
 *   intrinsic) of an activated value, or of a following one through such
 *   a function, is an epilogue applied before the store. A value loaded
 *   back from the output follows from nothing: an epilogue pass of its
 *   own is not fused.
 * - a magnitude is a name assigned fabs / abs / an and-mask / _abs_ps of
 *   something; a statement that names it with a factor -2 (or -2 log2 e,
 *   -2.885390..., the exponent of exp(-2|x|) in base 2) beside an
 *   exponential (or that constant), then a statement that adds it (a + ..,
 *   a - .., _mm512_add_ps (a, ..), an FMA with a as an argument) is the
 *   log-cosh identity. A tanh from exp(-2|u|) adds nothing back. */
void kf_descriptor_flow (const char *code, const kf_descriptor_acc_t *acc, kf_descriptor_flow_t *out);

#endif
