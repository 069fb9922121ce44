/*  kf_meta_ideas.h - the list of ideas a run hands its attempts, as the
 *  meta-prompter may edit it (kf_meta.h).
 *
 *  Each attempt of the search is handed one idea from a fixed list per
 *  task class (kf_prompt_ideas_for). Round 14 found the most harmful text
 *  of a run there (an idea described by another task's identity), and the
 *  meta round could not touch it. A meta reply may now carry, besides its
 *  SEARCH/REPLACE blocks, lines
 *
 *      DROP IDEA 3: why, with the outcomes that show it
 *      REWORD IDEA 2: the idea's new text
 *      ADD IDEA: a new idea's text (round 15: a missing idea, "cut the
 *                formula's arithmetic", could only be had by rewording
 *                one that was not wrong)
 *
 *  numbered as the meta prompt lists the ideas. The accepted ones make the
 *  new version's list, kept in its sections object under KF_META_IDEAS_KEY
 *  (prompt_versions.sections; absent: the task's defaults) as every idea
 *  of the list with the dropped ones marked, so an idea's number never
 *  changes: a dropped idea keeps its place, a reworded one its number,
 *  and an added one is appended under the next number.
 *  The planner (kf_search_idea.c) and the kernel prompt take the list of
 *  the version a kernel is written with (kf_meta_ideas). Pure functions,
 *  no database.
 */
#ifndef KF_META_IDEAS_H
#define KF_META_IDEAS_H

#include "kf_prompt_class.h"
#include <jansson.h>
#include <stddef.h>

/* The key of a version's sections object that holds its edited list:
 * [{text, dropped (the reason; absent while the idea is handed out),
 * was (a reworded idea's earlier texts, oldest first)}]. */
#define KF_META_IDEAS_KEY "ideas"

/* The longest a reworded idea may be, in bytes (the longest default is
 * about 260). */
#define KF_META_IDEA_MAX 320

/* Ideas one reply may add, and the most a list may hold, dropped ones
 * included (the defaults are at most about 8). */
#define KF_META_IDEA_ADDS 2
#define KF_META_IDEAS_MAX 16

/* The ideas handed out under SECTIONS (a version's sections object, may
 * be NULL: the defaults), for SPEC on a target of KIND, dropped ones left
 * out: an array of *COUNT texts borrowed from SECTIONS or static (the
 * caller frees the array only, and keeps SECTIONS while it uses them).
 * NULL with *COUNT 0 when there are none (or out of memory). */
const char **kf_meta_ideas (json_t *sections, json_t *spec, kf_target_kind_t kind,
                            size_t *count);

/* Round 19: a meta round's rewording made the planner call an idea
 * untried after two tries, since tries are matched to ideas by text.
 * Sets the "idea" of each row of ROWS (candidates, as the planner and the
 * prompt read them) that holds an earlier text of an idea of SECTIONS
 * ("was") to that idea's text now, keeping the text it held as
 * "idea_handed" (round 25: a row's own line shows the words the kernel
 * was written under). */
void kf_meta_ideas_canon (json_t *sections, json_t *rows);

/* Every idea under SECTIONS, numbered by place, dropped ones marked:
 * [{text, dropped?}] (caller's; the defaults, none dropped, where SECTIONS
 * holds no list). */
json_t *kf_meta_idea_list (json_t *sections, json_t *spec, kf_target_kind_t kind);

/* The idea edits in TEXT, a meta reply: lines "DROP IDEA N: reason",
 * "REWORD IDEA N: text" and "ADD IDEA: text" (any case, markdown
 * emphasis or a list dash before them allowed) outside SEARCH/REPLACE
 * blocks, as [{action ("drop", "reword" or "add"), idea (N; 0 for an
 * add), text}] in order (caller's; empty when none). */
json_t *kf_meta_parse_idea_edits (const char *text);

/* Applies EDITS (kf_meta_parse_idea_edits') to a copy of LIST
 * (kf_meta_idea_list's), at most MAX_EDITS accepted, and appends one
 * {section "ideas", search (the idea's text, "idea N" when there is
 * none), replace (the new text, or "dropped: reason"), accepted, reason}
 * per edit to LOG. An edit is refused, with the reason, when N is not an
 * idea of the list, the idea is dropped already or was edited earlier in
 * the reply, a drop gives no reason or would leave no idea, or a new
 * text is empty, longer than KF_META_IDEA_MAX, holds a control character
 * or a section marker, equals the old one or another idea's (an idea is
 * known by its text: two alike would be one). An add is appended, logged
 * with an empty search, and refused as a reword's text is, or past
 * KF_META_IDEA_ADDS in the reply or KF_META_IDEAS_MAX in the list; it
 * counts towards MAX_EDITS too. Returns the new list (caller's);
 * *ACCEPTED gets how many were applied. */
json_t *kf_meta_apply_idea_edits (json_t *list, json_t *edits, int max_edits, json_t *log,
                                  int *accepted);

#endif
