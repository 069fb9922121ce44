/*  kf_meta_code.h - the code a meta prompt shows: the kernels behind the
 *  best and the worst of its outcomes, and the run's best kernel when it
 *  is neither (kf_meta_prompt.c writes the rest of the prompt).
 *
 *  Round 21: the three came whole, three near-identical matrix products
 *  of about 280 lines. The first is shown whole (up to
 *  KF_META_SOURCE_MAX bytes); each later one as its diff against a
 *  kernel shown before it where that is shorter (kf_prompt_diff.h).
 */
#ifndef KF_META_CODE_H
#define KF_META_CODE_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

/* Why outcome O's figure does not count towards the run's best yet, from
 * its standing (kf_lineage_standing, set by kf_meta.c), or NULL when it
 * counts or is a screen figure (said beside the figure already). */
const char *kf_meta_uncounted (json_t *o);

/* Round 24: whether candidate ID of OUTCOMES has a full-protocol figure
 * that does not count yet (kf_meta_uncounted): a meta round cited two
 * such figures, 10.5 and 10.2 ms, which their second timings replaced
 * with 12.7 and 12.5 ms while the sections kept the first. */
bool kf_meta_unconfirmed (json_t *outcomes, long long id);

/* SOURCE in a code block, at most KF_META_SOURCE_MAX bytes, cut at a
 * whole line with "(N more lines)" after it. */
void kf_meta_source (FILE *f, const char *source);

/* Writes the code sections of a meta prompt: BEST_OUTCOME's and
 * WORST_OUTCOME's kernels (prompt kernel objects, either NULL) with what
 * the evaluation said of them, and BEST_KERNEL, the run's best that
 * counts (its speedup COUNTED), when it is not BEST_OUTCOME, with the
 * rule that makes a figure count and the OUTCOMES above it that do not
 * count yet. */
void kf_meta_code (FILE *f, json_t *outcomes, json_t *best_kernel, json_t *best_outcome,
                   json_t *worst_outcome, double counted);

#endif
