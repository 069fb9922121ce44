/*  kf_prompt_tune.h - the request for a templated kernel in a tuning
 *  round (appendix E.2 of the paper, in this project's words).
 *
 *  A tuning prompt must say which kernel to template (the prompt shows
 *  several), how many points will really be built, what agreement the
 *  points need, which parameters make sense on this target, and what the
 *  previous round measured for every point, not only the winner.
 */
#ifndef KF_PROMPT_TUNE_H
#define KF_PROMPT_TUNE_H

#include "kf_prompt.h"
#include <stdio.h>

/* A threaded kernel's bandwidth is set against one core's cold read rate
 * (its copy rate where no cold rate was measured) only from this share
 * of it up: below, its arithmetic binds, and the figure says nothing of
 * its threads (round 13). */
#define KF_PROMPT_TUNE_NEAR_COPY 0.5

/* Writes the "## Tuning parameters" section for IN (in->templated). */
void kf_prompt_tune_section (FILE *f, const kf_prompt_in_t *in);

/* Writes what was tried from IN's base (in->children, in->last) as one
 * verdict line each, no code, log or figures: a tuning prompt's stand-in
 * for a kernel prompt's "Recent attempts from the kernel to improve" and
 * "Last kernel tried from the kernel to improve" blocks (round 11: 175 lines of another kernel's
 * code in a prompt whose template keeps the parent's structure). The
 * last kernel's sweep table, when it was a template, is
 * kf_prompt_tune_section's. Writes nothing when nothing was tried. */
void kf_prompt_tune_tried (FILE *f, const kf_prompt_in_t *in);

#endif
