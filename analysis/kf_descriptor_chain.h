/*  kf_descriptor_chain.h - a chain of two products (in0 @ in1) @ in2 done
 *  a block of rows at a time, read from a host kernel's code.
 *
 *  Round 52 of issue 15: the archive filed two chained kernels as fused
 *  (a misread epilogue) and a third of the same structure as direct,
 *  and the planner's reading knew no chaining at all, so the chain's own
 *  idea ("keep the intermediate out of memory") was offered as untried
 *  beside three candidates that did it.
 */
#ifndef KF_DESCRIPTOR_CHAIN_H
#define KF_DESCRIPTOR_CHAIN_H

#include "kf_descriptor_acc.h"

#include <stddef.h>

#define KF_DESCRIPTOR_CHAIN_LABEL                                                        \
    "two products chained a block of rows at a time (the intermediate never stored whole)"

/* Whether CODE (comments and strings blanked), whose accumulators are ACC
 * (kf_descriptor_accumulators), chains two products: it accumulates a
 * product; one loop's body (or what it calls) uses both a name bound to
 * kf_forward's input 1 and one bound to its input 2, beyond handing them
 * on (`.v = v`); and a name bound to input 2 is a factor of a
 * multiply-add. Names are bound by assignment from an expression that
 * names one (`float *vr = v + k * N`, a packed copy `vp[i] = v[...]`)
 * and by a call's argument to the parameter of a function of the file.
 * A product whose intermediate is computed whole in one loop nest and
 * multiplied in another has no such loop. The loop's header to SNIP
 * (SIZE bytes) when not NULL. */
bool kf_descriptor_chain (const char *code, const kf_descriptor_acc_t *acc, char *snip,
                          size_t size);

#endif
