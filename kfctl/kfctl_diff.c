/*  kfctl_diff.c - a line diff of two sources by a longest common
 *  subsequence: the common head and tail are cut first, so a step that
 *  changes a few lines of a long kernel costs a small table; a middle too
 *  large for the table (KF_CTL_DIFF_MAX_CELLS) is shown as replaced whole.
 */
#include "kfctl_diff.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *text;
    size_t len;
} s_line_t;

/* TEXT cut into lines (a last line without a newline counts; an empty
 * text has none). Returns the count with *LINES set, or -1. */
static long
s_lines (const char *text, s_line_t **lines)
{
    size_t n = 0;
    for (const char *p = text; *p; p++)
        if (*p == '\n')
            n++;
    size_t len = strlen (text);
    if (len && text[len - 1] != '\n')
        n++;
    *lines = calloc (n ? n : 1, sizeof **lines);
    if (!*lines)
        return -1;
    size_t i = 0;
    for (const char *p = text; *p && i < n; i++) {
        const char *end = strchr (p, '\n');
        size_t l = end ? (size_t) (end - p) : strlen (p);
        (*lines)[i] = (s_line_t) { p, l };
        p += l + (end ? 1 : 0);
    }
    return (long) n;
}

static int
s_equal (const s_line_t *x, const s_line_t *y)
{
    return x->len == y->len && !memcmp (x->text, y->text, x->len);
}

static void
s_emit (kf_ctl_diff_line_t *out, long *count, kf_ctl_diff_op_t op, const s_line_t *l)
{
    out[(*count)++] = (kf_ctl_diff_line_t) { op, l->text, l->len };
}

long
kf_ctl_diff (const char *a, const char *b, kf_ctl_diff_line_t **out)
{
    *out = NULL;
    s_line_t *la = NULL, *lb = NULL;
    long na = s_lines (a, &la), nb = s_lines (b, &lb);
    long count = -1;
    uint32_t *table = NULL;
    kf_ctl_diff_line_t *lines = NULL;
    if (na < 0 || nb < 0)
        goto done;
    lines = calloc ((size_t) (na + nb) + 1, sizeof *lines);
    if (!lines)
        goto done;

    long head = 0;
    while (head < na && head < nb && s_equal (&la[head], &lb[head]))
        head++;
    long tail = 0;
    while (tail < na - head && tail < nb - head
           && s_equal (&la[na - 1 - tail], &lb[nb - 1 - tail]))
        tail++;
    /* The changed middles: A[head..head+m), B[head..head+n). */
    long m = na - head - tail, n = nb - head - tail;
    count = 0;
    for (long i = 0; i < head; i++)
        s_emit (lines, &count, KF_CTL_DIFF_SAME, &la[i]);

    const s_line_t *ma = la + head, *mb = lb + head;
    if ((uint64_t) (m + 1) * (uint64_t) (n + 1) <= KF_CTL_DIFF_MAX_CELLS
        && (table = calloc ((size_t) (m + 1) * (size_t) (n + 1), sizeof *table))) {
        /* T[i][j]: the longest common subsequence of MA[i..] and MB[j..]. */
#define T(i, j) table[(size_t) (i) * (size_t) (n + 1) + (size_t) (j)]
        for (long i = m - 1; i >= 0; i--)
            for (long j = n - 1; j >= 0; j--)
                T (i, j) = s_equal (&ma[i], &mb[j])
                               ? T (i + 1, j + 1) + 1
                               : (T (i + 1, j) >= T (i, j + 1) ? T (i + 1, j) : T (i, j + 1));
        long i = 0, j = 0;
        while (i < m || j < n) {
            if (i < m && j < n && s_equal (&ma[i], &mb[j])) {
                s_emit (lines, &count, KF_CTL_DIFF_SAME, &ma[i]);
                i++, j++;
            }
            else if (j >= n || (i < m && T (i + 1, j) >= T (i, j + 1)))
                s_emit (lines, &count, KF_CTL_DIFF_DEL, &ma[i++]);
            else
                s_emit (lines, &count, KF_CTL_DIFF_ADD, &mb[j++]);
        }
#undef T
    }
    else {
        for (long i = 0; i < m; i++)
            s_emit (lines, &count, KF_CTL_DIFF_DEL, &ma[i]);
        for (long j = 0; j < n; j++)
            s_emit (lines, &count, KF_CTL_DIFF_ADD, &mb[j]);
    }
    for (long i = na - tail; i < na; i++)
        s_emit (lines, &count, KF_CTL_DIFF_SAME, &la[i]);
    *out = lines;
    lines = NULL;
done:
    free (table);
    free (lines);
    free (la);
    free (lb);
    return count;
}
