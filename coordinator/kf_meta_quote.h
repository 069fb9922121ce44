/*  kf_meta_quote.h - what a meta round's factual correction quotes: the
 *  task's own text (kf_meta_edits.h's rule), found in it spacing aside.
 */
#ifndef KF_META_QUOTE_H
#define KF_META_QUOTE_H

#include <stdbool.h>
#include <stddef.h>

/* Whether TEXT quotes, in straight or curly double quotes,
 * KF_META_QUOTE_MIN bytes or more found in TASK, runs of spaces, tabs and
 * line breaks on either side counted as one space (round 32: a sentence
 * of the task's docstring, quoted as one line, crossed its line break and
 * was refused). QUOTE (SIZE bytes) gets the quote found, so spaced. */
bool kf_meta_quotes_task (const char *text, const char *task, char *quote, size_t size);

#endif
