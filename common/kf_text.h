/*  kf_text.h - long text a program wrote (a traceback, a child's output)
 *  cut to fit a message, at whole lines, saying what was left out.
 */
#ifndef KF_TEXT_H
#define KF_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* The last MAX bytes of TEXT, starting at a line, trailing blanks gone;
 * when lines were left out before it, "(N more lines)" on a line of its
 * own first, so a reader knows what is missing and no line is cut (the
 * last line alone past MAX: its end from a word on, after "... ").
 * Caller frees; NULL when out of memory. */
char *kf_text_tail (const char *text, size_t max);

/* The last line of TEXT with something on it, trailing newlines and
 * blanks not counted: a child's last word ("ModuleNotFoundError: ...",
 * perf's or ncu's complaint). Sets *LINE to its start in TEXT and returns
 * its length; 0 when TEXT is NULL or blank. */
size_t kf_text_last_line (const char *text, const char **line);

/* The first MAX bytes of TEXT, ending at a line, then "(N more lines)"
 * on a line of its own (a compiler log, a reason stored for a run); the
 * first line alone past MAX: its start up to a word, then " ...". For
 * the places that cut with "%.400s" today. Caller frees. */
char *kf_text_head (const char *text, size_t max);

/* PREFIX, then TEXT cut by kf_text_head to MAX bytes, then SUFFIX,
 * written into BUF (SIZE bytes; what does not fit is dropped from the
 * end): a reason stored or sent with the head of a long text in it.
 * Returns BUF. */
char *kf_text_head_in (char *buf, size_t size, const char *prefix, const char *text,
                       size_t max, const char *suffix);

/* Whether TEXT holds a match of the POSIX extended regular expression
 * PATTERN; false also when PATTERN does not compile. */
bool kf_text_matches (const char *text, const char *pattern);

#endif
