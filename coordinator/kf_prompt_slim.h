/*  kf_prompt_slim.h - which kernels a prompt leaves as one line, not code.
 *
 *  Round 24: prompts of 58-75 KB whose useful part was a fraction. An
 *  inspiration at 112 ms came whole (~140 lines) beside a kernel to
 *  improve at 14.2 ms, though it held nothing that kernel could borrow;
 *  a tuning prompt templating candidate 12 carried the run's best
 *  (candidate 11, ~290 lines, ~20 KB of 60 KB) whole. Such a kernel is now
 *  one line: its candidate, its figure and what its code does (the
 *  feature reading of kf_prompt_source_features), and a sentence saying
 *  why its code is left out.
 */
#ifndef KF_PROMPT_SLIM_H
#define KF_PROMPT_SLIM_H

#include "kf_prompt.h"
#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* An inspiration this many times slower than the kernel to improve (its
 * speedup below that kernel's divided by this) is named, not shown.
 * Round 24 (celu_colscale_add): candidate 1, plain scalar C at 112 ms,
 * came whole as an inspiration to a 14.2 ms kernel of intrinsics, 7.9
 * times faster; the mm_colrms inspirations that helped (candidate 12's
 * whole-K packed variant beside candidate 4) were within 1.5 times of the
 * kernel to improve. */
#define KF_PROMPT_INSPIRATION_SLOWER 5.0

/* An inspiration shown whole but this many times slower than the kernel
 * to improve says so (round 29: a two-thread split that had just lost,
 * 35.08x against the parent's 98.70x, came whole without a word to the
 * next try of the same idea, which read it as the design to follow). */
#define KF_PROMPT_INSPIRATION_BEHIND 1.05

/* "It is slower than the kernel to improve (A against B): ..." for
 * inspiration K of IN, where it is KF_PROMPT_INSPIRATION_BEHIND times
 * slower than IN's base; nothing otherwise (no figure, an earlier run's
 * kernel). Where the base ran threads side by side and K one thread that
 * takes less than the base on one core, it says K is the faster per
 * core instead. */
void kf_prompt_inspiration_behind (FILE *f, const kf_prompt_in_t *in, json_t *k);

/* Whether inspiration K of IN is too slow to show whole: its speedup is
 * below 1/KF_PROMPT_INSPIRATION_SLOWER of the kernel to improve's (IN's
 * base), or of the run's best's where the base has no figure. False for a
 * kernel of an earlier run (kf_memory.h: its figure is not of this run)
 * and wherever either figure is missing. */
bool kf_prompt_inspiration_slow (const kf_prompt_in_t *in, json_t *k);

/* Whether candidate C (an id, or a "norm_hash" of its source without
 * comments and spacing) is an inspiration of IN that the prompt shows
 * whole, not as one line (the history's "its figures and code are shown
 * above"). */
bool kf_prompt_inspiration_whole (const kf_prompt_in_t *in, json_t *c);

/* K in one line: "Candidate N: 1.660x the reference's speed (full
 * protocol); its code has: threads, SIMD intrinsics." (the features
 * kf_prompt_source_features reads in K's source, in LANGUAGE), then
 * "Its code is left out: WHY.\n". */
void kf_prompt_kernel_line (FILE *f, json_t *k, const char *language, const char *why);

/* Where inspiration K of IN is too slow to show whole
 * (kf_prompt_inspiration_slow), writes its line (kf_prompt_kernel_line)
 * with the figure it is set against, and returns true; else writes
 * nothing and returns false. */
bool kf_prompt_inspiration_named (FILE *f, const kf_prompt_in_t *in, json_t *k,
                                  const char *language);

/* In a tuning prompt (IN->templated), where BEST, the run's best, is not
 * the kernel to template (IN's base), writes its line, saying the
 * template keeps its own kernel's structure, and returns true; else
 * writes nothing and returns false (the caller shows BEST). */
bool kf_prompt_best_named (FILE *f, const kf_prompt_in_t *in, json_t *best, const char *language);

#endif
