/*  kf_meta_prompt.h - the text a meta-prompter model reads (kf_meta.c
 *  queues the job; this writes its prompt).
 *
 *  Besides the sections and the latest outcomes, it says what became of
 *  the meta-prompter's own earlier edits: which prompt version each round
 *  made, from which, with which edits, and how the kernels written under
 *  each version fared (how many, their verdicts, version score, best
 *  speedup), with the rejected edits and why; and it names the axes of
 *  the archive coordinates the outcomes carry. A model that cannot see
 *  what its edits did can only guess again (flagged by the model in the
 *  loop, issue 15).
 */
#ifndef KF_META_PROMPT_H
#define KF_META_PROMPT_H

#include "kf_db.h"
#include "kf_meta_history.h"
#include <jansson.h>
#include <stdio.h>
#include <stdint.h>

/* The kernel source shown at most, per kernel. */
#define KF_META_SOURCE_MAX 6000

/* kf_meta_history and the history section: kf_meta_history.h. */

/* Sets "idea" on each search outcome of OUTCOMES (kf_meta.c's rows:
 * generation, slot, phase) to the idea its attempt was asked to try
 * (kf_prompt_idea_at for RUN's spec, target, language and population),
 * where the task has ideas. */
void kf_meta_outcome_ideas (json_t *run, json_t *outcomes);

/* How many of the LEN bytes of TEXT to show within MAX: all when LEN <=
 * MAX, else up to the end of the last whole word that fits (trailing
 * blanks and commas off; at a UTF-8 character when one word is longer),
 * the caller adding "..." (round 11: an idea quoted "at a tim"). */
int kf_meta_word_cut (const char *text, int len, int max);

/* Writes the first line of TEXT within MAX bytes, cut at a word
 * (kf_meta_word_cut), with "..." where anything was left out. */
void kf_meta_quote_cut (FILE *f, const char *text, int max);

/* Fewer full-protocol outcomes than this, and the meta-prompter is asked
 * not to rewrite the philosophy (round 4: it rewrote it from 3 outcomes
 * as "the per-element math binds", which later outcomes refuted). */
#define KF_META_PHILOSOPHY_MIN 4

/* The version a meta round edits: its NUMBER, WHY it is the one (the
 * reason kf_meta_pick gives: on trial, or the highest score over a newer
 * one), and the run's POPULATION (a new version's trial). */
typedef struct {
    int64_t number;
    const char *why;
    int population;
    json_t *hardware;   /* kf_prompt_hardware's object, or NULL: not said */
    json_t *output_range;   /* kf_prompt_output_range's, or NULL */
} kf_meta_base_t;

/* The meta-prompter's prompt (caller frees; NULL on allocation failure):
 * RUN ({language, target, spec}), the SECTIONS of version BASE, OUTCOMES
 * (kf_meta.c's rows, oldest first, with bandwidth and compute figures,
 * host_load and host_condition where measured, and what each kernel did:
 * idea, parent_id, parent_coords, phase, best_config where known; for the
 * guesses' evidence parent_speedup, parent_fidelity, features,
 * parent_features, finished_s: kf_meta_guess.h; screen_points, a tuning
 * screen's points), at most MAX_EDITS, the code behind BEST_OUTCOME and
 * WORST_OUTCOME (either NULL; cut at whole lines, the cut marked), the
 * run's BEST_KERNEL when it is not among them, and HISTORY
 * (kf_meta_history's, or NULL; a version that is neither BASE nor one it
 * was made from is marked as not in the sections shown; its versions'
 * made_s date the guesses' outcomes). Pure. */
char *kf_meta_prompt_text (json_t *run, json_t *sections, const kf_meta_base_t *base,
                           json_t *outcomes, int max_edits, json_t *best_kernel,
                           json_t *best_outcome, json_t *worst_outcome, json_t *history);

#endif
