/*  kf_meta_edits.h - the edits a meta-prompter proposes to the evolvable
 *  sections of a run's prompt (kf_meta.h), parsed and checked: pure
 *  functions, no database, so tests call them directly.
 */
#ifndef KF_META_EDITS_H
#define KF_META_EDITS_H

#include <jansson.h>

/* Parses the edits in TEXT: blocks of
 *     SECTION: name          (optional)
 *     <<<<<<< SEARCH
 *     text to find
 *     =======
 *     replacement
 *     >>>>>>> REPLACE
 * Returns an array of {section?, search, replace} (caller's; empty when
 * there are none). */
json_t *kf_meta_parse_edits (const char *text);

/* Applies EDITS to a copy of SECTIONS, in order. An edit applies when its
 * search text occurs exactly once in one section (the named one, when it
 * names one; an empty search with a named section appends), its
 * replacement does not forge a section marker, and fewer than MAX_EDITS
 * edits have been accepted. OUTSIDE (may be NULL) is the rest of the
 * prompt: a search text found only there is "outside the evolvable
 * sections". Returns the new sections (caller's) and sets *LOG (caller's)
 * to one {section, search, replace, accepted, reason} per edit. */
json_t *kf_meta_apply_edits (json_t *sections, json_t *edits, int max_edits,
                             const char *outside, json_t **log);

/* The text that marks an accepted strategy that names fewer than
 * KF_META_EVIDENCE_MIN full-protocol outcomes, appended to it. */
#define KF_META_GUESS_MARK " (a guess to test: fewer than two full-protocol outcomes show it)"
#define KF_META_EVIDENCE_MIN 2

/* As kf_meta_apply_edits, with the evidence rules the meta prompt states
 * (kf_meta_prompt.c) held against OUTCOMES, the outcomes the round was
 * shown ({candidate_id, fidelity, speedup}; NULL: no rules): an edit of
 * the philosophy is rejected when fewer than KF_META_PHILOSOPHY_MIN of
 * them have a full-protocol figure; a strategy whose new text names
 * ("candidate 12", "candidates 12 and 14", "#12") fewer than
 * KF_META_EVIDENCE_MIN of those and does not call itself a guess or a
 * hypothesis is accepted with KF_META_GUESS_MARK appended, and its log
 * entry's reason says so. Round 5 accepted strategies that one outcome
 * each had suggested and the next refuted; the rules were words only.
 * Pitfalls are not held to it: most say what failed to compile or was
 * wrong, which verdicts show, not timings. */
json_t *kf_meta_apply_edits_judged (json_t *sections, json_t *edits, int max_edits,
                                    const char *outside, json_t *outcomes, json_t **log);

#endif
