/*  kf_prompt_formula_args.h - a call's arguments in a PyTorch forward, as
 *  the formula reader (kf_prompt_formula.c) reads them: one after another,
 *  and what they say of a power's exponent or a reduction's dimension.
 *  OPEN and CLOSE are the call's '(' and ')'.
 */
#ifndef KF_PROMPT_FORMULA_ARGS_H
#define KF_PROMPT_FORMULA_ARGS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* The next top-level argument into ARG (ARG_SIZE bytes, white space
 * removed, cut to fit); *AT where to go on from. False past the last. */
bool kf_formula_next_arg (const char **at, const char *close, char *arg, size_t arg_size);

/* Whether the last argument is the literal 2: a square, one product. */
bool kf_formula_pow_square (const char *open, const char *close);

/* Whether the last argument is a third: a cube root. */
bool kf_formula_pow_third (const char *open, const char *close);

/* Whether a reduction's arguments name the last dimension of what it
 * reduces, given the output's RANK. */
bool kf_formula_last_dim (const char *open, const char *close, size_t rank);

/* Whether F.normalize's arguments scale each row of an output of RANK
 * dimensions to unit Euclidean length. */
bool kf_formula_normalize_rows (const char *open, const char *close, size_t rank);

/* Round 50: the values a call's argument reads where it reads only
 * forward's tensor arguments (PARAMS, kf_prompt_python_params, in the
 * order of SPEC's inputs) smaller than OUTPUTS elements, broadcast: the
 * most elements among them; 0 where it reads anything else (another
 * name, an input as large as the output) or no input at all. */
double kf_formula_arg_broadcast (const char *open, const char *close, json_t *spec,
                                 json_t *params, double outputs);

#endif
