/*  kf_suggest.h - "did you mean": the known word nearest to a mistyped
 *  one (a command, an option, a field of a task file or run config).
 *
 *  Nearness is the edit distance (insert, delete, substitute, swap two
 *  neighbours), case ignored; a word further than about a third of its
 *  length from every known one gets no suggestion, so a wild guess is
 *  not dressed up as a typo.
 */
#ifndef KF_SUGGEST_H
#define KF_SUGGEST_H

#include <stddef.h>

/* The entry of KNOWN (N words; NULL entries skipped) nearest to WORD, or
 * NULL when none is near enough. Borrowed from KNOWN. */
const char *kf_suggest (const char *word, const char *const *known, size_t n);

/* The same over a NULL-terminated list. */
const char *kf_suggest_list (const char *word, const char *const *known);

#endif
