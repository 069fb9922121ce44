/*  kf_descriptor_macro.h - a kernel's function-like macros expanded where
 *  it uses them, for readings of its code that see the text, not the
 *  preprocessor's output.
 *
 *  Round 44 of the model in the loop (issue 15): a 4 x 4 register tile
 *  of dot products written as `#define ROW(i) ... c##i##0 =
 *  _mm512_fmadd_ps (va, vb0, c##i##0); ...` and `ROW (0) ROW (1) ...`
 *  read as "added no feature this reading knows", and the planner handed
 *  its idea again. The compile worker reads the preprocessed source; the
 *  coordinator's reading of the features (kf_prompt_source_features) has
 *  the text alone, and expands the macros it defines.
 */
#ifndef KF_DESCRIPTOR_MACRO_H
#define KF_DESCRIPTOR_MACRO_H

/* Passes over the text (a macro's body may use another's) and the most
 * bytes the expansion may reach, as a multiple of the text's and at
 * most KF_MACRO_MAX: a candidate's macros cannot make the reading
 * unbounded. */
#define KF_MACRO_PASSES 4
#define KF_MACRO_GROWTH 8
#define KF_MACRO_MAX (1 << 22)

/* CODE (comments and strings blanked) with every use of a function-like
 * macro it defines (`#define NAME(a, b) body`, continuation lines
 * joined) replaced by the body, the arguments put in place of the
 * parameters and `##` pasted; object-like macros (`#define N 32`) stay
 * as written, since the readings take block sizes by their names. NULL
 * where CODE defines no such macro, or the expansion would pass its
 * bounds, or memory ran out: then read CODE as it is. Caller frees. */
char *kf_descriptor_macros (const char *code);

#endif
