/*  kf_prompt_standing.h - the generation prompt's account of where the
 *  search stands: the kernels it shows with their figures and code.
 *
 *  Round 21: the best came first and whole beside a kernel to improve
 *  sharing 80% of its lines (60-77 KB prompts); each kernel after the
 *  first is now the shortest diff against one shown before it
 *  (kf_prompt_diff.h), whole only where no diff is shorter.
 */
#ifndef KF_PROMPT_STANDING_H
#define KF_PROMPT_STANDING_H

#include "kf_prompt.h"
#include <stdio.h>

/* Writes what the search has for IN, in LANGUAGE's code blocks: the
 * kernel to improve, whole (and why the plan moved this attempt to it),
 * then the fastest kernel the search holds (marked when it does not count
 * yet), then what was tried from the kernel to improve (a tuning prompt:
 * one verdict line each), the last kernel tried with its log and compiler
 * report, and the inspirations not shown above. */
void kf_prompt_standing (FILE *f, const kf_prompt_in_t *in, const char *language);

#endif
