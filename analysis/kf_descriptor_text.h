/*  kf_descriptor_text.h - a source reduced to what is evidence for the
 *  descriptors (kf_descriptor.c): nothing in a comment, a string or an
 *  `#if 0` region moves a kernel; inline assembly is read from its
 *  strings apart.
 */
#ifndef KF_DESCRIPTOR_TEXT_H
#define KF_DESCRIPTOR_TEXT_H

#include <stdbool.h>

/* Blanks comments in T, and string and character literals' contents
 * unless KEEP_STRINGS; newlines are kept (kf_descriptor_strip is this
 * without KEEP_STRINGS). */
void kf_descriptor_strip_text (char *t, bool keep_strings);

/* Blanks the lines of `#if 0` regions of T (up to the matching #else,
 * #elif or #endif). */
void kf_descriptor_blank_if0 (char *t);

/* The string contents of every asm statement in T (comments already
 * removed, strings kept), newly allocated; NULL when out of memory. */
char *kf_descriptor_asm_text (const char *t);

#endif
