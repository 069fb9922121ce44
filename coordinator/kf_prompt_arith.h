/*  kf_prompt_arith.h - what an elementwise formula's arithmetic costs a
 *  vector of outputs on the host, estimated from its code.
 *
 *  Round 38 of the model in the loop: atan(x) * exp(-x * x / 8) read
 *  "compute: not known" on every prompt, so the planner took its
 *  kernels, at 29 cycles a vector against a memory budget of 27, to be
 *  bound by memory and handed streaming stores and prefetch, which
 *  gained nothing, while cheaper math gained 1.5x. The helper counted
 *  about 30 instructions a vector itself each time. The estimate is the
 *  formula's operations and its calls' instructions as SIMD code
 *  computes them (kf_prompt_libm_vops), at one core's measured vector
 *  FMAs a cycle: an assumption, stated as one wherever it is used.
 */
#ifndef KF_PROMPT_ARITH_H
#define KF_PROMPT_ARITH_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    int ops;            /* the formula's operations an element */
    int call_vops;      /* its calls' vector instructions a vector */
    int calls;          /* its libm calls an element */
    double instr;       /* OPS + CALL_VOPS: vector instructions a vector */
    int divs;           /* its divisions by a value (kf_formula_t's DIVS) */
    double div_fmas;    /* round 39: one vector division's time in FMAs'
                           (vec_div_cycles over vec_fma_cycles), 0 where
                           not measured */
    double div_used;    /* what a division counts: DIV_FMAS, or a
                           reciprocal estimate (vec_rcp_cycles) and two
                           FMAs where cheaper (round 40) */
    double fma_equiv;   /* INSTR with each division at DIV_USED: the
                           estimate CYCLES follows */
    double fmas;        /* one core's measured vector FMAs a cycle */
    double cycles;      /* FMA_EQUIV / FMAS: one core's cycles a vector */
    int lanes;          /* f32 lanes of the vector unit */
    unsigned kinds;     /* the operations' kinds (kf_formula_t's) */
    char names[64];     /* the calls' names ("atan, exp") */
} kf_arith_t;

/* *A for elementwise task SPEC on host device D: false (A zeroed) where
 * the task is not elementwise, its formula is not counted
 * (kf_prompt_formula's COUNTED), or the lanes or the FMA rate are not
 * known. */
bool kf_prompt_formula_arith (json_t *spec, json_t *d, kf_arith_t *a);

/* The estimate of a formula with libm calls in words, into BUF: "an
 * estimate of about 30 vector instructions a vector of outputs: its 4
 * operations, and atan about 16 and exp about 10 ... about 30 cycles of
 * one core at its 1.0 vector FMAs a cycle". BUF empty, and false, where
 * kf_prompt_formula_arith gives nothing or the formula calls nothing. */
bool kf_prompt_formula_arith_words (json_t *spec, json_t *d, char *buf, size_t size);

/* The same words of an estimate A already made (kf_prompt_formula_arith). */
bool kf_prompt_arith_words (const kf_arith_t *a, char *buf, size_t size);

/* Round 48: one core's memory budget a vector (kf_prompt_budget's
 * Arithmetic budget line: the task's bytes with streaming stores at one
 * core's cold read and streaming write rates), in cycles, where formula
 * SPEC calls a function and its estimate near f32 precision (*A) is
 * below it: by the estimates such a kernel is bound by memory before any
 * cheaper math. 0 otherwise. */
double kf_prompt_arith_under_memory (json_t *spec, json_t *d, kf_arith_t *a);

/* Round 38: where a formula's estimated arithmetic (cycles of one core a
 * vector) is this share of a kernel's memory budget or more, memory
 * cannot be said to bind it alone: the planner does not take such a
 * kernel to be at the memory bound by its budget (kf_search_idea_bound_share).
 * 0.90, as KF_SEARCH_IDEA_BOUND: the arithmetic alone would fill that
 * share of the time the bytes need. */
#define KF_PROMPT_ARITH_FILLS 0.90

#endif
