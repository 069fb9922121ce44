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

#endif
