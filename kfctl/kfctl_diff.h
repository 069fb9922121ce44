/*  kfctl_diff.h - a line diff of two sources, for the report's lineage:
 *  what each step of the best kernel's ancestry changed in its parent.
 */
#ifndef KFCTL_DIFF_H
#define KFCTL_DIFF_H

#include <stddef.h>

/* Past this many cells (changed lines of A times changed lines of B) the
 * changed middle is given as all deleted then all added: the table is
 * 4 bytes a cell, and sources are a few KB. */
#define KF_CTL_DIFF_MAX_CELLS (4u * 1024u * 1024u)

typedef enum { KF_CTL_DIFF_SAME, KF_CTL_DIFF_DEL, KF_CTL_DIFF_ADD } kf_ctl_diff_op_t;

typedef struct {
    kf_ctl_diff_op_t op;
    const char *line;     /* borrowed from A or B, without its newline */
    size_t len;
} kf_ctl_diff_line_t;

/* The lines that turn A into B (both borrowed; they must outlive *OUT):
 * a longest common subsequence of lines, after the common head and tail.
 * Returns the number of lines with *OUT set (caller frees the array), or
 * -1 when out of memory. */
long kf_ctl_diff (const char *a, const char *b, kf_ctl_diff_line_t **out);

#endif
