/*  kf_source.h - a kernel source read as text, without a preprocessor.
 *
 *  The tuner takes a parameter's default from the source's `#define`
 *  (kf_tune.c), and a launch-size expression may name an integer macro
 *  of the source (exec-worker's Level Zero launch): both look for the
 *  first `#define NAME` line, as written.
 */
#ifndef KF_SOURCE_H
#define KF_SOURCE_H

#include <stddef.h>

/* The first `#define NAME ...` line of SOURCE (SIZE bytes; blanks allowed
 * around '#' and between the words): returns where its value starts,
 * blanks skipped, and sets *LEN to the rest of that line (to the newline
 * or SOURCE's end, comments included); NULL when no line defines NAME. */
const char *kf_source_define (const char *source, size_t size, const char *name, size_t *len);

#endif
