/*  kf_prompt_history.h - this attempt among the run's others.
 *
 *  A model asked for one kernel of a generation sees the kernel it
 *  starts from, maybe the best and a few inspirations; round 4 showed
 *  that it then repeats what already lost elsewhere in the run ("candidate
 *  6, packing, lost: never shown"), is given an idea the run already tried
 *  without being told how it went, is told that its siblings "usually"
 *  start from other kernels when two of them share its parent, and cannot
 *  tell which version of the evolvable sections it reads. The readers here
 *  fetch what the run knows (the search planner calls them, kf_search_plan.c;
 *  kf_prompt_history_db.c); the writers put it in the prompt (kf_prompt.c
 *  calls them) without I/O, so every sentence is tested from plain JSON:
 *  "Other results so far" and the candidates in words (kf_prompt_history.c),
 *  "This attempt" (kf_prompt_attempt.c).
 */
#ifndef KF_PROMPT_HISTORY_H
#define KF_PROMPT_HISTORY_H

#include "kf_db.h"
#include "kf_prompt.h"
#include "kf_prompt_changed.h"
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>

/* Rows of the run's finished candidates read for a prompt, newest first. */
#define KF_PROMPT_HISTORY_READ 48
/* Lines of "Other results so far" at most. */
#define KF_PROMPT_OTHER_RESULTS 8
/* Earlier candidates named beside this attempt's idea at most. */
#define KF_PROMPT_IDEA_TRIES 3

/* RUN_ID's candidates, those not finished first, then the finished ones
 * newest first, at most KF_PROMPT_HISTORY_READ, as [{id, generation,
 * slot, phase ("search", "tuning"), parent_id, finished, status, speedup,
 * fidelity, candidate_ns, detail, log (a failed compile's), norm_hash,
 * features, parent_features, and changed, parent_lines, lines for a try
 * whose code added no feature: kf_prompt_changed.h}] (absent keys:
 * unknown). Caller's; NULL on a database error. */
json_t *kf_prompt_history (kf_db_t *db, int64_t run_id);

/* The search candidates of RUN_ID's GENERATION planned so far, as
 * [{slot, parent_id}] (parent_id absent: no parent). Caller's; NULL on a
 * database error. */
json_t *kf_prompt_siblings (kf_db_t *db, int64_t run_id, int generation);

/* Prompt version VERSION_ID's number and the generation that made it:
 * *NUMBER and *GENERATION, both 0 when it is not found. */
void kf_prompt_version_of (kf_db_t *db, int64_t version_id, int *number, int *generation);

/* "## This attempt": the idea of IN's slot, what became of it where the
 * run tried it before (IN->history), the siblings' ideas and which
 * kernels the siblings start from (IN->siblings). Nothing for a tuning
 * prompt or without a population. */
void kf_prompt_direction (FILE *f, const kf_prompt_in_t *in);

/* Round 34's notes: every sibling's idea in full made about 1.5 KB of
 * each "This attempt". The head of an idea's TEXT, as the siblings' list
 * gives it, into BUF: up to its first colon, semicolon or bracket past
 * its first few words; where that is past KF_PROMPT_IDEA_HEAD_MAX bytes,
 * up to its last comma within them (round 38), else its last word within
 * them and " ..."; the whole text where it has no such break. */
#define KF_PROMPT_IDEA_HEAD_MAX 150
const char *kf_prompt_idea_head (const char *text, char *buf, size_t size);

/* "## Other results so far": up to KF_PROMPT_OTHER_RESULTS lines, newest
 * first, for the run's candidates in IN->history that the prompt does not
 * show already (base, best, last, children, inspirations); one of an
 * earlier generation not judged yet says so, one of this generation is a
 * sibling and left to "This attempt". */
void kf_prompt_other_results (FILE *f, const kf_prompt_in_t *in);

/* The idea label of a search candidate at GENERATION, SLOT of IN's run,
 * or NULL when there are no ideas for the task and target. */
const char *kf_prompt_idea_at (const kf_prompt_in_t *in, int generation, int slot);

//  ---------------------------------------------------------------------
//  The run's candidates in words (kf_prompt_history.c), for both sections

/* Room for kf_prompt_added_text's words. */
#define KF_PROMPT_ADDED_MAX                                                                    \
    (KF_PROMPT_FEATURE_WORDS_MAX + KF_PROMPT_CHANGED_TEXT_MAX + KF_PROMPT_SAID_TEXT_MAX + 64)

/* The idea candidate C was handed: as stored with it (kf_search_idea.h),
 * else its slot's place (kf_prompt_idea_at). Borrowed. */
const char *kf_prompt_idea_of (const kf_prompt_in_t *in, json_t *c);

/* "; its code added to its parent's: threads, ..." for candidate C in
 * BUF, then its author's words for the change where its code has them
 * (kf_prompt_said_text), or nothing. */
void kf_prompt_added_text (json_t *c, char *buf, size_t size);

/* Candidate C's outcome in a line in BUF (returned): "correct, 4.58 ms
 * (2.10x), screen timing only" or "did not compile: error: ..."; with the
 * host's condition when IN_CHANGED (kf_prompt_conditions_differ). */
/* Room for kf_prompt_outcome's words, the load and a retiming said (round
 * 45: 400 bytes cut "the exec host shared with 1 compile and"). */
#define KF_PROMPT_OUTCOME_MAX 1200
const char *kf_prompt_outcome (json_t *c, bool in_changed, char *buf, size_t size);

/* Whether A and B are one candidate: the same id, or the same normalised
 * source. */
bool kf_prompt_same_candidate (json_t *a, json_t *b);

/* Candidate C is not judged yet and of IN's generation or a later one: a
 * sibling, not a result. */
bool kf_prompt_pending_here (const kf_prompt_in_t *in, json_t *c);

/* Whether HISTORY's timings were taken under different host conditions:
 * some with other workers registered on the exec host, some with none. */
bool kf_prompt_conditions_differ (json_t *history);

#endif
