/*  kf_prompt_hints.h - the generation prompt's "Hints from the search so
 *  far": the gradient's sentences (kf_gradient_hints) in the target's
 *  words, less those too thin to use or that the plan contradicts.
 *
 *  Round 17 of the model in the loop: "consider cache blocking" (strength
 *  0.17 over 2 moves, one of which lost) stood one section above the
 *  planner's "Set aside ... cache blocking ... lost".
 */
#ifndef KF_PROMPT_HINTS_H
#define KF_PROMPT_HINTS_H

#include "kf_prompt.h"
#include "kf_prompt_class.h"
#include <stdio.h>

/* Fewest judged moves a hint may rest on: below this it is left out
 * (round 17: a hint over 2 moves, one of them a loss, said nothing). */
#define KF_PROMPT_HINT_MOVES 3

/* The moves (or attempts) hint LINE rests on, read from its figures
 * ("over N moves", "in K of N moves", "in K of N attempts"); -1 where
 * it gives none. */
int kf_prompt_hint_moves (const char *line);

/* The idea feature hint LINE advises towards (the level after
 * "consider", or the "to" level of a move that paid), KF_IDEA_OTHER
 * for none or a move that did not pay. */
kf_idea_feature_t kf_prompt_hint_feature (const char *line);

/* Writes the section for IN (IN->hints in the words of target kind
 * KIND), keeping only the lines that rest on KF_PROMPT_HINT_MOVES or
 * more moves and advise no idea the plan set aside (IN->ideas' aside),
 * and saying what was left out; nothing where no hint is left or IN is
 * a tuning request. */
void kf_prompt_hints_section (FILE *f, const kf_prompt_in_t *in, kf_target_kind_t kind);

#endif
