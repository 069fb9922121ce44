/*  kf_prompt_diff.c - a kernel shown as its difference from another
 *  (kf_prompt_diff.h): the longest common subsequence of lines, by the
 *  textbook table, then the edit script in hunks with context.
 */
#include "kf_prompt_diff.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *at;
    size_t len;
} s_line_t;

//  TEXT's lines (a last line without '\n' counts); -1 past MAX.
static int
s_split (const char *text, s_line_t *lines, int max)
{
    int n = 0;
    for (const char *p = text; *p;) {
        const char *end = strchr (p, '\n');
        size_t len = end ? (size_t) (end - p) : strlen (p);
        if (n == max)
            return -1;
        lines[n++] = (s_line_t) { p, len };
        p = end ? end + 1 : p + len;
    }
    return n;
}

static bool
s_eq (const s_line_t *x, const s_line_t *y)
{
    return x->len == y->len && !memcmp (x->at, y->at, x->len);
}

//  One step of the edit script: ' ' both, '-' A only, '+' B only.
typedef struct {
    char op;
    int a, b;     // the line's index in A (for ' ' and '-') and in B (' ', '+')
} s_step_t;

static void
s_line_out (FILE *f, char op, const s_line_t *l)
{
    fputc (op, f);
    fwrite (l->at, 1, l->len, f);
    fputc ('\n', f);
}

//  The steps from FIRST to LAST (inclusive) as one hunk.
static void
s_hunk (FILE *f, const s_step_t *steps, int first, int last, const s_line_t *la,
        const s_line_t *lb)
{
    int a0 = -1, b0 = -1, na = 0, nb = 0;
    for (int k = first; k <= last; k++) {
        if (steps[k].op != '+') {
            if (a0 < 0)
                a0 = steps[k].a;
            na++;
        }
        if (steps[k].op != '-') {
            if (b0 < 0)
                b0 = steps[k].b;
            nb++;
        }
    }
    fprintf (f, "@@ -%d,%d +%d,%d @@\n", a0 < 0 ? 0 : a0 + 1, na, b0 < 0 ? 0 : b0 + 1, nb);
    for (int k = first; k <= last; k++)
        s_line_out (f, steps[k].op, steps[k].op == '+' ? &lb[steps[k].b] : &la[steps[k].a]);
}

char *
kf_prompt_diff (const char *a, const char *b, double share, int *common, int *b_lines)
{
    *common = 0;
    *b_lines = 0;
    if (!a || !b)
        return NULL;
    s_line_t *la = malloc (2 * KF_PROMPT_DIFF_MAX_LINES * sizeof *la);
    if (!la)
        return NULL;
    s_line_t *lb = la + KF_PROMPT_DIFF_MAX_LINES;
    int n = s_split (a, la, KF_PROMPT_DIFF_MAX_LINES);
    int m = s_split (b, lb, KF_PROMPT_DIFF_MAX_LINES);
    uint16_t *t = n > 0 && m > 0 ? calloc ((size_t) (n + 1) * (size_t) (m + 1), sizeof *t) : NULL;
    s_step_t *steps = t ? malloc ((size_t) (n + m) * sizeof *steps) : NULL;
    char *text = NULL;
    if (!steps)
        goto done;
    *b_lines = m;
    //  T[i][j]: the common subsequence of A's lines from I and B's from J.
    size_t w = (size_t) m + 1;
    for (int i = n - 1; i >= 0; i--)
        for (int j = m - 1; j >= 0; j--)
            t[i * w + j] = s_eq (&la[i], &lb[j])
                               ? (uint16_t) (t[(i + 1) * w + j + 1] + 1)
                               : t[(i + 1) * w + j] > t[i * w + j + 1] ? t[(i + 1) * w + j]
                                                                        : t[i * w + j + 1];
    *common = t[0];
    if (*common == m && m == n)
        goto done;                  // the same source: nothing to show as a diff
    if ((double) *common < share * (double) m)
        goto done;
    int k = 0, i = 0, j = 0;
    while (i < n || j < m) {
        if (i < n && j < m && s_eq (&la[i], &lb[j]))
            steps[k++] = (s_step_t) { ' ', i++, j++ };
        else if (i < n && (j == m || t[(i + 1) * w + j] >= t[i * w + j + 1]))
            steps[k++] = (s_step_t) { '-', i++, j };    //  removed lines first
        else
            steps[k++] = (s_step_t) { '+', i, j++ };
    }
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        goto done;
    //  Hunks: each change with its context; changes whose contexts meet
    //  share a hunk.
    for (int s = 0; s < k;) {
        if (steps[s].op == ' ') {
            s++;
            continue;
        }
        int first = s - KF_PROMPT_DIFF_CONTEXT < 0 ? 0 : s - KF_PROMPT_DIFF_CONTEXT;
        int last = s;
        for (int e = s; e < k; e++) {
            if (steps[e].op != ' ')
                last = e;
            else if (e - last > 2 * KF_PROMPT_DIFF_CONTEXT)
                break;
        }
        int end = last + KF_PROMPT_DIFF_CONTEXT >= k ? k - 1 : last + KF_PROMPT_DIFF_CONTEXT;
        s_hunk (f, steps, first, end, la, lb);
        s = end + 1;
    }
    if (fclose (f) != 0) {
        free (text);
        text = NULL;
    }
done:
    free (steps);
    free (t);
    free (la);
    return text;
}

//  The sentence before a diff of WHO against AGAINST into BUF (SIZE
//  bytes); its length, as snprintf counts it.
static int
s_intro (char *buf, size_t size, const char *who, const kf_prompt_shown_t *against, int common,
         int lines)
{
    return snprintf (buf, size, "%s shares %d of its %d lines with %s (candidate %lld), so only "
                     "what differs is shown: a unified diff whose '-' lines are %s's, '+' "
                     "lines this kernel's, with %d unchanged lines around each change.\n",
                     who, common, lines, against->name, against->id, against->name,
                     KF_PROMPT_DIFF_CONTEXT);
}

void
kf_prompt_diff_intro (FILE *f, const char *who, const kf_prompt_shown_t *against, int common,
                      int lines)
{
    char buf[600];
    s_intro (buf, sizeof buf, who, against, common, lines);
    fputs (buf, f);
}

char *
kf_prompt_diff_shortest (const char *source, const kf_prompt_shown_t *shown, int n,
                         const char *who, int *which, int *common, int *lines)
{
    *which = -1;
    *common = *lines = 0;
    if (!source)
        return NULL;
    //  Round 21: whole, unless a diff and its sentence are shorter.
    size_t least = strlen (source);
    char *text = NULL;
    for (int k = 0; k < n; k++) {
        if (!shown[k].source || !*shown[k].source)
            continue;
        int c = 0, l = 0;
        char *diff = kf_prompt_diff (shown[k].source, source, 0.0, &c, &l);
        size_t size = diff ? strlen (diff) + (size_t) s_intro (NULL, 0, who, &shown[k], c, l)
                           : 0;
        if (diff && size < least) {
            free (text);
            text = diff;
            least = size;
            *which = k;
            *common = c;
            *lines = l;
        }
        else
            free (diff);
    }
    return text;
}

void
kf_prompt_code_or_diff (FILE *f, const char *language, const char *source,
                        const kf_prompt_shown_t *shown, int n, const char *who)
{
    int which, common, lines;
    char *diff = kf_prompt_diff_shortest (source, shown, n, who, &which, &common, &lines);
    if (diff)
        kf_prompt_diff_intro (f, who, &shown[which], common, lines);
    kf_prompt_code_block (f, diff ? "diff" : language, diff ? diff : source);
    free (diff);
}

void
kf_prompt_code_block (FILE *f, const char *language, const char *source)
{
    size_t n = strlen (source);
    fprintf (f, "```%s\n%s%s```\n", language, source, n && source[n - 1] == '\n' ? "" : "\n");
}
