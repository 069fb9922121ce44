/*  kf_prompt_diff.h - a kernel shown as its difference from another.
 *
 *  Round 12: inspirations and last tries that were variants of the kernel
 *  to improve cost a prompt about 200 lines each, most of them lines the
 *  prompt had shown already. A kernel that shares at least half of its
 *  lines with the kernel shown above it is given as a unified diff
 *  against that kernel instead: the lines that differ, each hunk with
 *  KF_PROMPT_DIFF_CONTEXT unchanged lines around it.
 */
#ifndef KF_PROMPT_DIFF_H
#define KF_PROMPT_DIFF_H

#include <stddef.h>
#include <stdio.h>

//  Unchanged lines shown around each change.
#define KF_PROMPT_DIFF_CONTEXT 2
//  The least share of B's lines that A must hold for a diff to be shown.
#define KF_PROMPT_DIFF_SHARE 0.5
//  Sources longer than this many lines are shown whole (the table the
//  diff needs grows with the product of the two lengths).
#define KF_PROMPT_DIFF_MAX_LINES 1500

/* B as a unified diff against A ("@@ -A_LINE,A_COUNT +B_LINE,B_COUNT @@"
 * hunks of ' ', '-' and '+' lines), when at least SHARE of B's lines
 * (blank lines included) are common to both and B differs from A;
 * *COMMON and *B_LINES get the counts. NULL when B is better shown whole
 * (identical, too different, too long, or no memory). The caller frees
 * the text. */
char *kf_prompt_diff (const char *a, const char *b, double share, int *common, int *b_lines);

/* SOURCE in a ```LANGUAGE block, or, when it is a variant of BASE (the
 * kernel to improve, candidate BASE_ID, shown above it; NULL: none), a
 * sentence saying so and the diff in a ```diff block. WHO starts the
 * sentence ("It", "This kernel"). */
void kf_prompt_code_or_diff (FILE *f, const char *language, const char *source,
                             const char *base, long long base_id, const char *who);

/* SOURCE in a ```LANGUAGE fenced block, ending in one newline. */
void kf_prompt_code_block (FILE *f, const char *language, const char *source);

#endif
