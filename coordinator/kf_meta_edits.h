/*  kf_meta_edits.h - the edits a meta-prompter proposes to the evolvable
 *  sections of a run's prompt (kf_meta.h), parsed and checked: pure
 *  functions, no database, so tests call them directly.
 */
#ifndef KF_META_EDITS_H
#define KF_META_EDITS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

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
 * names one; an empty search with a named section appends), it is whole
 * sentences or lines (it starts at a line's start, after a list marker
 * or after a sentence's end, and ends at a line's end or a sentence's:
 * round 15's SEARCH began mid-sentence and its REPLACE was spliced into
 * it), its replacement does not forge a section marker, and fewer than
 * MAX_EDITS edits have been accepted. OUTSIDE (may be NULL) is the rest of the
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

/* A philosophy edit from fewer than KF_META_PHILOSOPHY_MIN full outcomes
 * is still accepted when it is a factual correction: its new text holds
 * KF_META_FACT_WORDS (any case) and, in double quotes, at least
 * KF_META_QUOTE_MIN bytes found in the task's own text, spacing aside
 * (kf_meta_quote.h; round 11: "additions, products, minima and maxima
 * only" for a formula with a divide could not be fixed from 2 outcomes). */
#define KF_META_FACT_WORDS "Factual correction:"
#define KF_META_QUOTE_MIN 8

/* A sentence of an accepted edit that names a candidate ("candidate 2",
 * "#2") with a rank word (best, fastest, slowest, worst, quickest) is
 * kept with this mark after it, N the highest candidate number among the
 * outcomes shown: round 11's v2 said "Candidate 2 ... (1.38 ms, the best
 * full-protocol figure)" while candidate 3 was already faster. Marked,
 * not rejected: the figure beside the rank stays true and the rest of
 * the edit (a how-to, a layout fix) is worth keeping, where one word
 * would otherwise cost a whole round's edit; and a false match ("works
 * best with candidate 4's tile") costs a few words, not the edit. The
 * mark names no candidate and holds no rank word, so a later round that
 * keeps it is not marked again. */
#define KF_META_RANK_MARK " (ranked when written, among the kernels up to number %lld: a " \
                          "later one may be faster; compare the figures)"

/* A sentence of an accepted edit that names a candidate whose figure
 * among the outcomes shown is a screen timing only (fidelity 'screen',
 * or 'pending' while its full protocol runs) and holds a figure (a
 * number with ms, us, ns, x, GB/s, GFLOP/s or %) is kept with this mark
 * after it, %lld that candidate. Round 14: a strategy cited "candidate 3
 * with streaming stores, 2319 us on the screen only", and kept citing it
 * after the full protocol had it at 2.21 ms. Marked, not rejected, as
 * ranks are: the figure in the sentence may be another candidate's. */
#define KF_META_SCREEN_MARK " (candidate %lld's figure was a screen timing only when " \
                            "written: short and noisy, its full protocol may differ; take " \
                            "its figure from the list of attempts)"

/* Round 24: the same for a full-protocol figure that awaited its second
 * timing when it was cited (kf_meta_unconfirmed). */
#define KF_META_UNCONFIRMED_MARK " (candidate %lld's figure awaited confirmation when " \
                                 "written: its second timing may have replaced it; take " \
                                 "its figure from the list of attempts)"

/* What kf_meta_apply_edits_ruled holds edits to: OUTCOMES as in
 * kf_meta_apply_edits_judged (NULL: no evidence rules, no rank marks),
 * TASK the task's own text (its description and reference source) that a
 * factual correction quotes (NULL: none can be). */
typedef struct {
    json_t *outcomes;
    const char *task;
} kf_meta_rules_t;

/* As kf_meta_apply_edits_judged, with RULES (may be NULL: none). */
json_t *kf_meta_apply_edits_ruled (json_t *sections, json_t *edits, int max_edits,
                                   const char *outside, const kf_meta_rules_t *rules,
                                   json_t **log);

/* TEXT with a mark before the end of each sentence that MARK (called
 * with the sentence's LEN bytes at S and CTX) writes one for into BUF, or
 * NULL when no sentence has one (or out of memory); *MARKED gets the
 * count. One walker for the screen, rank and claim marks. */
typedef bool (*kf_meta_mark_fn) (const char *s, size_t len, void *ctx, char *buf, size_t size);
char *kf_meta_mark_sentences (const char *text, kf_meta_mark_fn mark, void *ctx, int *marked);

/* The line at *P (without its newline and a CR before it), *LEN its
 * length, and *P moved past it; NULL at the end. Shared by the edit
 * blocks' reader and the idea lines' (kf_meta_ideas.c). */
const char *kf_meta_edit_line (const char **p, size_t *len);

/* Whether the LEN bytes at LINE are MARKER ("<<<<<<< SEARCH"), with
 * blanks after it only. */
bool kf_meta_edit_marker (const char *line, size_t len, const char *marker);

/* The next line of a meta reply at *P that lies outside its SEARCH/REPLACE
 * blocks (whatever a block holds is the sections' business), with the list
 * and emphasis marks before it ("- ", "* ", "#", "`") skipped; *LEN its
 * length, *IN_BLOCK (false at the start) the reader's state. NULL at the
 * end. Shared by the command readers: RETRACT GUESS (kf_meta_guess.c) and
 * DROP/REWORD/ADD IDEA (kf_meta_ideas.c). */
const char *kf_meta_reply_line (const char **p, bool *in_block, size_t *len);

/* Whether the LEN bytes at LINE (from kf_meta_reply_line) are the command
 * VERB (any case), a number when NUMBERED ("VERB 3", "VERB #3"), then an
 * optional ':' or '-' and the command's text: *N the number (0 when not
 * NUMBERED; a number written anyway is read and ignored), *TEXT and
 * *TEXT_LEN the text without the emphasis marks around it. A word that
 * runs on from VERB ("ideas") is not the command. */
bool kf_meta_command (const char *line, size_t len, const char *verb, bool numbered, long *n,
                      const char **text, size_t *text_len);

#endif
