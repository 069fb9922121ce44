/*  kf_prompt_siblings.h - the siblings of an attempt (the other slots of
 *  its generation) as its prompt tells them: where each starts, as far
 *  as the plan knows, and the idea each leans towards.
 */
#ifndef KF_PROMPT_SIBLINGS_H
#define KF_PROMPT_SIBLINGS_H

#include "kf_prompt.h"
#include <jansson.h>
#include <stdio.h>

/* Which kernel each sibling of IN's attempt starts from: those planned
 * before it have their parents; the later ones draw theirs when they are
 * planned. */
void kf_prompt_sibling_parents (FILE *f, const kf_prompt_in_t *in);

/* Sibling slot K's row among IN's candidates planned so far (borrowed);
 * NULL when K is planned later. */
json_t *kf_prompt_sibling_planned (const kf_prompt_in_t *in, int k);

/* Round 17: the plan's prediction for later sibling slot K
 * (kf_search_idea_later; borrowed), or NULL. */
json_t *kf_prompt_sibling_later (const kf_prompt_in_t *in, int k);

/* The idea sibling slot K leans towards: as planned, else as the plan
 * predicts it, else its place in the run's order of ideas, else its
 * slot's place among IDEAS (N). */
const char *kf_prompt_sibling_idea (const kf_prompt_in_t *in, const char *const *ideas,
                                    size_t n, int k);

#endif
