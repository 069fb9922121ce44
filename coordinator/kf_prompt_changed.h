/*  kf_prompt_changed.h - what a try changed of its parent's code, told
 *  by lines where no feature reading names it.
 *
 *  Round 15: "Tried before" and "Tried from this kernel so far" said a try
 *  "regressed" with nothing of what it changed when its code added no
 *  feature the reading knows (kf_prompt_source_features), so a template
 *  author had to guess which changes were refuted. Such a try is now told
 *  by how many of its parent's lines it changed, counted by the diff the
 *  prompt shows inspirations with (kf_prompt_diff.c), and a child of the
 *  kernel to improve by what its code added too.
 */
#ifndef KF_PROMPT_CHANGED_H
#define KF_PROMPT_CHANGED_H

#include "kf_db.h"
#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* How CHILD differs from PARENT by lines (kf_prompt_diff's reading: a
 * last line without a newline counts): *PARENT_LINES, *CHANGED (the
 * parent's lines the child does not keep) and *LINES (the child's). False
 * when either is missing or too long to compare (KF_PROMPT_DIFF_MAX_LINES)
 * or memory ran out. */
bool kf_prompt_changed_counts (const char *parent, const char *child, int *changed,
                               int *parent_lines, int *lines);

/* Room for kf_prompt_changed_ops' and kf_prompt_changed_text's words. */
#define KF_PROMPT_CHANGED_OPS_MAX 400
#define KF_PROMPT_CHANGED_TEXT_MAX (KF_PROMPT_CHANGED_OPS_MAX + 200)

/* Round 21: the kinds of vector intrinsic (FMAs, divides, rcp/rsqrt
 * estimates, shuffles, ...) whose count in the code differs between
 * PARENT and CHILD, "divides 1 to 0, rcp/rsqrt estimates 1 to 2", each
 * call counted once as written, into BUF (SIZE bytes; whole kinds only);
 * empty when none differs. */
const char *kf_prompt_changed_ops (const char *parent, const char *child, char *buf,
                                   size_t size);

/* Round 30: a try handed cheaper math that cut its parent's polynomial
 * (21 to 17 vector instructions) read "not seen done", its features the
 * same, and the idea was handed again. SOURCE's vector arithmetic calls
 * (FMAs, multiplies, adds, divides, square roots, rcp/rsqrt estimates),
 * each counted once as written, as kf_prompt_changed_ops counts them; -1
 * for NULL or without memory. Kept with each candidate as
 * selection.arith when its source arrives. */
int kf_prompt_source_arith (const char *source);

/* ROW's counts ({changed, parent_lines, lines, ops}, as
 * kf_prompt_history_changes sets them) in words, "changed 34 of its
 * parent's 120 lines (its own has 126); the vector operations ...: divides
 * 1 to 0", into BUF; empty without them. */
const char *kf_prompt_changed_text (json_t *row, char *buf, size_t size);

/* Round 29: "changed 2 of its parent's 144 lines" did not say what the
 * two lines did, and the next template swept the same prefetch distance
 * again. Every answer is asked to begin its code with "// change: " and
 * what the try changes in words; this is that line of SOURCE (one of its
 * first KF_PROMPT_SAID_LINES lines; "/" "* change: ... *" "/" too, any
 * case), cleaned: printable ASCII only (a character beyond it reads '?'),
 * no run of three '<' or '>' (the prompts' section marks), whitespace
 * folded, cut at a word within KF_PROMPT_SAID_MAX bytes with "...". BUF
 * (SIZE bytes) is empty when there is no such line or it says nothing. */
#define KF_PROMPT_SAID_LINES 40
#define KF_PROMPT_SAID_MAX 160
const char *kf_prompt_changed_said (const char *source, char *buf, size_t size);

/* For each search row of HISTORY (kf_prompt_history's) with a parent and
 * both features stored whose code added none (kf_prompt_features_added),
 * sets changed, parent_lines and lines from the two sources. (A row's
 * said, its change line, is kept with the candidate when its source
 * arrives: kf_search_generated.) 0, or -1 on a database error. */
int kf_prompt_history_changes (kf_db_t *db, json_t *history);

/* For each row of CHILDREN (kf_lineage_children's, of PARENT_ID) appends
 * to its reason what it changed: "; what its code added to its parent's:
 * threads", else "; its code added no feature this reading knows: it
 * changed 34 of its parent's 120 lines (its own has 126)", and its
 * author's words for the change where its code has them
 * (kf_prompt_said_text). 0, or -1 on a database error. */
int kf_prompt_children_changes (kf_db_t *db, json_t *children, int64_t parent_id);

/* "; its author's words for it: \"...\"" for ROW's said (the change
 * line kept with its candidate), or nothing, into BUF. */
#define KF_PROMPT_SAID_TEXT_MAX (KF_PROMPT_SAID_MAX + 48)
const char *kf_prompt_said_text (json_t *row, char *buf, size_t size);

#endif
