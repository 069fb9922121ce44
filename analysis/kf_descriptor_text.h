/*  kf_descriptor_text.h - a source reduced to what is evidence for the
 *  descriptors (kf_descriptor.c): nothing in a comment, a string or an
 *  `#if 0` region moves a kernel; inline assembly is read from its
 *  strings apart.
 */
#ifndef KF_DESCRIPTOR_TEXT_H
#define KF_DESCRIPTOR_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Blanks comments in T, and string and character literals' contents
 * unless KEEP_STRINGS; newlines are kept (kf_descriptor_strip is this
 * without KEEP_STRINGS). */
void kf_descriptor_strip_text (char *t, bool keep_strings);

/* Blanks the lines of `#if 0` regions of T (up to the matching #else,
 * #elif or #endif). */
void kf_descriptor_blank_if0 (char *t);

/* The body, braces included, of the function NAME (LEN bytes, need not be
 * NUL-terminated) as defined in CODE (comments and strings blanked): a
 * name followed by a parameter list and a brace, not a call or a
 * prototype; keywords (if, for, while, switch) are never functions.
 * Newly allocated; NULL when CODE defines no such function. */
char *kf_descriptor_function_body (const char *code, const char *name, size_t len);

/* Whether FN says yes of the body of a function CODE defines that TEXT
 * calls, FN given CALLS - 1 (the levels of calls it may follow in turn);
 * false when CALLS is 0. */
typedef bool (*kf_descriptor_body_fn) (const char *code, const char *body, int calls);
bool kf_descriptor_any_callee (const char *code, const char *text, int calls,
                               kf_descriptor_body_fn fn);

/* The bracket that closes the one at OPEN ('(' or '{'), brackets of
 * that kind nested inside counted; NULL when the text ends first. */
const char *kf_descriptor_close (const char *open);

/* The string contents of every asm statement in T (comments already
 * removed, strings kept), newly allocated; NULL when out of memory. */
char *kf_descriptor_asm_text (const char *t);

/* A cell's coordinates COORDS ("{1,0,0}") with each axis and level named
 * for a run on TARGET (kf_descriptor_level_short): "{1,0,0}: memory SIMD,
 * algorithm direct, threads one thread" (round 18: "coordinates (memory,
 * algorithm, threads) {1,0,0}" read as archive jargon); COORDS as it is
 * where it is not three numbers. Writes OUT (SIZE bytes), returns it. */
const char *kf_descriptor_cell_text (const char *target, const char *coords, char *out,
                                     size_t size);

#endif
