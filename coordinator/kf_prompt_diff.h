/*  kf_prompt_diff.h - a kernel shown as its difference from another.
 *
 *  Round 12: inspirations and last tries that were variants of the kernel
 *  to improve cost a prompt about 200 lines each, most of them lines the
 *  prompt had shown already. A kernel that shares at least half of its
 *  lines with the kernel shown above it is given as a unified diff
 *  against that kernel instead: the lines that differ, each hunk with
 *  KF_PROMPT_DIFF_CONTEXT unchanged lines around it.
 *  Round 21: prompts of 28-77 KB, the same kernel two or three times.
 *  The share rule is gone: a kernel is given as its diff against
 *  whichever kernel shown above makes the shorter text, and whole only
 *  where no diff is shorter.
 */
#ifndef KF_PROMPT_DIFF_H
#define KF_PROMPT_DIFF_H

#include <stddef.h>
#include <stdio.h>

//  Unchanged lines shown around each change.
#define KF_PROMPT_DIFF_CONTEXT 2
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

/* A kernel a prompt shows above, which a later one may be given as a
 * diff against: its SOURCE, its candidate ID, and NAME, how the prompt
 * calls it ("the kernel to improve"). */
typedef struct {
    const char *source;
    long long id;
    const char *name;
} kf_prompt_shown_t;

/* Round 21: the best kernel came whole beside a kernel to improve that
 * shared 80% of its lines, and a variant sharing less than half with the
 * kernel to improve came whole though it was a few lines off the best.
 * SOURCE's shortest diff against the N kernels of SHOWN (those with a
 * source), when that diff and the sentence introducing it
 * (kf_prompt_diff_intro, WHO) are shorter than SOURCE itself; *WHICH gets
 * the index of the kernel it is against, *COMMON and *LINES its counts.
 * NULL where SOURCE is best shown whole (no diff is shorter, the same
 * source, too long, or no memory). The caller frees the text. */
char *kf_prompt_diff_shortest (const char *source, const kf_prompt_shown_t *shown, int n,
                               const char *who, int *which, int *common, int *lines);

/* The sentence before a diff: "WHO shares COMMON of its LINES lines with
 * NAME (candidate ID), so only what differs is shown: ...". */
void kf_prompt_diff_intro (FILE *f, const char *who, const kf_prompt_shown_t *against,
                           int common, int lines);

/* SOURCE in a ```LANGUAGE block, or, where kf_prompt_diff_shortest finds
 * a shorter diff against one of the N kernels of SHOWN (shown above it),
 * the sentence saying so and the diff in a ```diff block. WHO starts the
 * sentence ("It", "This kernel"). */
void kf_prompt_code_or_diff (FILE *f, const char *language, const char *source,
                             const kf_prompt_shown_t *shown, int n, const char *who);

/* SOURCE in a ```LANGUAGE fenced block, ending in one newline. */
void kf_prompt_code_block (FILE *f, const char *language, const char *source);

#endif
