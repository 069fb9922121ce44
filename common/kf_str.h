/*  kf_str.h - formatted strings for error messages, and a string's
 *  place in a list of names. */
#ifndef KF_STR_H
#define KF_STR_H

#include <stdbool.h>

/* Returns a newly allocated formatted string (caller frees), or NULL. */
char *kf_strdupf (const char *fmt, ...) __attribute__ ((format (printf, 1, 2)));

/* Sets *ERR (when ERR is not NULL; caller frees) to a formatted message and
 * returns -1, so error paths read `return kf_fail (err, "...", ...)`. */
int kf_fail (char **err, const char *fmt, ...) __attribute__ ((format (printf, 2, 3)));

/* Whether S is one of LIST's strings (LIST ends with NULL). */
bool kf_str_in (const char *s, const char *const *list);

#endif
