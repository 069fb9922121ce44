/*  kf_meta_guess.h - the guesses a version's sections hold, the outcomes
 *  that bear on each, and the meta-prompter's edit that retracts one.
 *
 *  Round 17: v2 of a run said, labelled "a guess to test", that chunks
 *  handed out from an atomic counter keep both cores busy; candidates 8
 *  (2.51 ms against fixed halves' 2.32) and 12 (3.82 against 3.40) refuted
 *  it, yet it stayed in the sections every later kernel prompt read: the
 *  meta prompt showed no guess beside the outcomes that tested it, and no
 *  edit removed a line. The meta prompt now lists each guess line with
 *  the outcomes finished since the version that added it whose attempt
 *  was handed, or whose code added, what the line is about, each against
 *  its parent; and a reply may carry, outside its SEARCH/REPLACE blocks,
 *
 *      RETRACT GUESS 1: why, naming the outcomes that refute it
 *
 *  which removes that line, applied and logged like the other edits.
 *  Pure functions, no database.
 */
#ifndef KF_META_GUESS_H
#define KF_META_GUESS_H

#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* The longest guess line quoted in the meta prompt, in bytes. */
#define KF_META_GUESS_QUOTE 400

/* The outcomes listed beside one guess at most (the newest). */
#define KF_META_GUESS_OUTCOMES 6

/* The guess lines of SECTIONS (a version's sections object), in the
 * order of the philosophy, strategies and pitfalls, numbered from 1 by
 * place: [{section, line}] (caller's; empty when none). A guess line is
 * one that calls itself a guess, a hypothesis, untested or unverified
 * (KF_META_GUESS_MARK among them). */
json_t *kf_meta_guess_lines (json_t *sections);

/* What LINE is about, as bits 1 << F of kf_idea_feature_t
 * (kf_prompt_class.h), from its words: threads, streaming stores,
 * intrinsics, unrolling, approximate math, cache blocking, a register
 * micro-kernel, packing, a fused row pass, accumulators, the epilogue.
 * 0 when it names none. */
unsigned kf_meta_guess_features (const char *line);

/* Writes the meta prompt's section on the guesses of SECTIONS (nothing
 * when there are none): each line numbered, the version that added it
 * (the newest of BASE and the versions it was made from, in HISTORY
 * (kf_meta_history's, may be NULL), whose edits wrote it; the default
 * sections otherwise) and the OUTCOMES (kf_meta.c's rows, with
 * finished_s, idea, features, parent_features, parent_speedup,
 * parent_fidelity) finished after that version was made, of the search,
 * from a parent, handed an idea about what the line is about or whose
 * code added it, with their figures against their parents'. */
void kf_meta_guess_text (FILE *f, json_t *sections, json_t *outcomes, json_t *history,
                         int64_t base);

/* Writes, for a kernel prompt, each guess line of SECTIONS that an
 * outcome since has tested, with those outcomes, as kf_meta_guess_text
 * lists them (round 34: a guess that candidate 11 had tested, 3.15 ms
 * against its parent's 3.00, still read "a guess to test" in the kernel
 * prompts written before the next meta round). Nothing when none is. */
void kf_meta_guess_tested (FILE *f, json_t *sections, json_t *outcomes, json_t *history,
                           int64_t base);

/* The retractions in TEXT, a meta reply: lines "RETRACT GUESS N: why"
 * (any case, markdown emphasis or a list dash before them allowed)
 * outside SEARCH/REPLACE blocks, as [{guess (N), text (why)}] in order
 * (caller's; empty when none). */
json_t *kf_meta_parse_retractions (const char *text);

/* Applies RETRACTIONS to a copy of SECTIONS (the sections after the
 * reply's other edits), guess N being line N of kf_meta_guess_lines
 * (ORIGINAL) (the sections the prompt showed), at most MAX_EDITS
 * accepted; appends one {section, search (the line), replace "",
 * accepted, reason} per retraction to LOG. Refused, with the reason,
 * when N is no guess of the list, its line was retracted earlier in the
 * reply or an edit of the reply changed it, or the why is empty or names
 * no candidate ("candidate 8", "#8"). Returns the new sections
 * (caller's); *ACCEPTED gets how many were applied. */
json_t *kf_meta_apply_retractions (json_t *original, json_t *sections, json_t *retractions,
                                   int max_edits, json_t *log, int *accepted);

#endif
