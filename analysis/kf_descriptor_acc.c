/*  kf_descriptor_acc.c - accumulators, statement by statement
 *  (kf_descriptor_acc.h).
 *
 *  Each statement is read as one of: "X = f (..)" with f a multiply-add
 *  (X an accumulator when it is f's addend, a polynomial step when it is
 *  f's first factor) or an addition into X; "X += .."; "X = X * Y + Z" (a
 *  Horner step). A register tile is told from accumulators that only
 *  unroll a loop by its factors: in a tile each loaded value feeds several
 *  accumulators (c00 and c01 share a0, c00 and c10 share b0), while
 *  unrolled sums each read their own (s0 += x[i], s1 += x[i + 1]), and a
 *  constant scale shared by all is one factor, not a tile's two.
 */
#include "kf_descriptor_acc.h"
#include "kf_text.h"

#include <ctype.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The Nth (0-based) top-level argument of the call whose arguments
//  start after OPEN, trimmed, into BUF; false when there is none.
static bool
s_arg (const char *open, int nth, char *buf, size_t size)
{
    int depth = 0, k = 0;
    const char *start = open;
    for (const char *p = open; *p; p++) {
        if (*p == '(' || *p == '[')
            depth++;
        else if ((*p == ')' || *p == ']') && depth > 0)
            depth--;
        else if ((*p == ',' && depth == 0) || (*p == ')' && depth == 0)) {
            if (k == nth) {
                while (start < p && isspace ((unsigned char) *start))
                    start++;
                const char *end = p;
                while (end > start && isspace ((unsigned char) end[-1]))
                    end--;
                snprintf (buf, size, "%.*s", (int) (end - start), start);
                return end > start;
            }
            if (*p == ')')
                return false;
            k++;
            start = p + 1;
        }
    }
    return false;
}

//  TEXT without white space (a[i] [j] and a[i][j] alike) into BUF.
static void
s_squeeze (const char *text, char *buf, size_t size)
{
    size_t k = 0;
    for (const char *p = text; *p && k + 1 < size; p++)
        if (!isspace ((unsigned char) *p))
            buf[k++] = *p;
    buf[k] = 0;
}

//  The length of NAME without its number: "acc" of acc12, s[3], v_1.
static size_t
s_stem (const char *name)
{
    size_t n = strlen (name);
    while (n > 1 && (isdigit ((unsigned char) name[n - 1]) || strchr ("_[]", name[n - 1])))
        n--;
    return n;
}

//  How many dimensions the local array NAME (an element, c0[r], or the
//  bare name) is declared with in CODE: `__m512 acc[MR][NR];`, `float
//  acc[4][4] = {0}`, the second of `__m512 c0[MR], c1[MR];`; 0 when it is
//  no local array - a parameter or a shared array in memory (C[i][j] of a
//  naive product, a __shared__ tile) is not a register. *VEC says whether
//  its elements are SIMD vectors.
int
kf_descriptor_acc_local_array (const char *code, const char *name, bool *vec)
{
    *vec = false;
    size_t len = strcspn (name, "[ \t\n");
    char pattern[320];
    if (len == 0 || len >= 64)
        return 0;
    snprintf (pattern, sizeof pattern,
              "(^|[;{}])[[:space:]]*(static[[:space:]]+)?(const[[:space:]]+)?([[:alnum:]_]+)[[:space:]]+"
              "([^];=(){}[]*(\\[[^];]+\\][[:space:]]*)*,[[:space:]]*)*%.*s[[:space:]]*\\[[^];]+\\]"
              "([[:space:]]*\\[)?", (int) len, name);
    regex_t re;
    if (regcomp (&re, pattern, REG_EXTENDED) != 0)
        return 0;
    regmatch_t m[8];
    int dims = 0;
    if (regexec (&re, code, 8, m, 0) == 0) {
        char type[64];
        snprintf (type, sizeof type, "%.*s", (int) (m[4].rm_eo - m[4].rm_so), code + m[4].rm_so);
        *vec = kf_text_matches (type, "^(__m(128|256|512)[dhi]?|float(32|64)x[0-9]+_t|"
                                      "(float|double|half|int)[248]|__half2)$");
        dims = m[7].rm_so >= 0 ? 2 : 1;
    }
    regfree (&re);
    return dims;
}

static void
s_add_acc (kf_descriptor_acc_t *a, const char *raw, const char *f0, const char *f1)
{
    char name[KF_ACC_NAME];
    s_squeeze (raw, name, sizeof name);
    for (int i = 0; i < a->n; i++)
        if (!strcmp (a->names[i], name))
            return;
    if (a->n >= KF_ACC_MAX)
        return;
    int at = a->n++;
    snprintf (a->names[at], sizeof a->names[0], "%s", name);
    s_squeeze (f0 ? f0 : "", a->ops[at][0], sizeof a->ops[0][0]);
    s_squeeze (f1 ? f1 : "", a->ops[at][1], sizeof a->ops[0][1]);
    a->madd[at] = f0 != NULL;
    a->fma += f0 != NULL;
    size_t stem = s_stem (name);
    int kin = 0;
    for (int i = 0; stem < strlen (name) && i < a->n; i++)
        kin += s_stem (a->names[i]) == stem && !strncmp (a->names[i], name, stem);
    if (kin > a->same)
        a->same = kin;
}

//  The two factors of a product "X * Y" (nothing else at the top level),
//  into F0 and F1; false for any other expression.
static bool
s_product (const char *rhs, char *f0, char *f1, size_t size)
{
    int depth = 0;
    const char *star = NULL;
    for (const char *p = rhs; *p; p++) {
        if (*p == '(' || *p == '[')
            depth++;
        else if (*p == ')' || *p == ']')
            depth--;
        else if (depth == 0 && strchr ("+-/?:<>=&|", *p))
            return false;
        else if (depth == 0 && *p == '*') {
            if (star)
                return false;
            star = p;
        }
    }
    if (!star || star == rhs)
        return false;
    snprintf (f0, size, "%.*s", (int) (star - rhs), rhs);
    snprintf (f1, size, "%s", star + 1);
    char t0[KF_ACC_NAME], t1[KF_ACC_NAME];
    s_squeeze (f0, t0, sizeof t0);
    s_squeeze (f1, t1, sizeof t1);
    snprintf (f0, size, "%s", t0);
    snprintf (f1, size, "%s", t1);
    return *f0 && *f1;
}

typedef struct {
    regex_t call, plus, mul;
} s_res_t;

//  One statement ST.
static void
s_statement (const char *st, const s_res_t *re, kf_descriptor_acc_t *a)
{
    regmatch_t m[4];
    //  An argument s_arg does not find stays empty (it was read unset).
    char dest[KF_ACC_NAME], fn[48], arg0[64] = "", arg1[64] = "", arg2[64] = "";
    if (regexec (&re->call, st, 4, m, 0) == 0) {
        snprintf (dest, sizeof dest, "%.*s", (int) (m[1].rm_eo - m[1].rm_so), st + m[1].rm_so);
        snprintf (fn, sizeof fn, "%.*s", (int) (m[3].rm_eo - m[3].rm_so), st + m[3].rm_so);
        const char *open = st + m[0].rm_eo;
        char d[KF_ACC_NAME];
        s_squeeze (dest, d, sizeof d);
        bool has0 = s_arg (open, 0, arg0, sizeof arg0), has1 = s_arg (open, 1, arg1, sizeof arg1);
        bool has2 = s_arg (open, 2, arg2, sizeof arg2);
        char a0[64] = "", a1[64] = "", a2[64] = "";
        s_squeeze (arg0, a0, sizeof a0);
        s_squeeze (arg1, a1, sizeof a1);
        s_squeeze (arg2, a2, sizeof a2);
        bool is_fma = strstr (fn, "fmadd") || strstr (fn, "fnmadd") || !strcmp (fn, "fma")
                      || !strcmp (fn, "fmaf") || strstr (fn, "builtin_fma");
        if (is_fma && has2 && !strcmp (a2, d))
            s_add_acc (a, dest, a0, a1);
        else if (is_fma && has0 && has2 && !strcmp (a0, d))
            a->horner++;
        else if (strstr (fn, "_add_") && has1 && (!strcmp (a0, d) || !strcmp (a1, d)))
            s_add_acc (a, dest, NULL, NULL);
        return;
    }
    if (regexec (&re->plus, st, 2, m, 0) == 0) {
        snprintf (dest, sizeof dest, "%.*s", (int) (m[1].rm_eo - m[1].rm_so), st + m[1].rm_so);
        const char *rhs = st + m[0].rm_eo;
        char f0[KF_ACC_NAME], f1[KF_ACC_NAME];
        if (s_product (rhs, f0, f1, sizeof f0))
            s_add_acc (a, dest, f0, f1);
        else if (strchr (rhs, '*'))
            s_add_acc (a, dest, "", "");        //  a multiply-add of another shape
        else
            s_add_acc (a, dest, NULL, NULL);
        return;
    }
    if (regexec (&re->mul, st, 2, m, 0) == 0)
        a->horner++;
}

//  The variable a row of accumulators is indexed by: r of c0[r], when
//  NAME is an element of a local one-dimensional array of vectors indexed
//  by a name (not a literal), into INDEX; false otherwise.
static bool
s_row (const char *code, const char *name, char *index, size_t size)
{
    const char *open = strchr (name, '[');
    if (!open || strchr (open + 1, '[') || !(isalpha ((unsigned char) open[1]) || open[1] == '_'))
        return false;
    size_t n = strcspn (open + 1, "]");
    for (size_t i = 1; i <= n; i++)
        if (!(isalnum ((unsigned char) open[i]) || open[i] == '_'))
            return false;
    bool vec;
    if (kf_descriptor_acc_local_array (code, name, &vec) != 1 || !vec)
        return false;
    snprintf (index, size, "%.*s", (int) n, open + 1);
    return true;
}

//  Whether the word WORD occurs in TEXT.
static bool
s_names (const char *text, const char *word)
{
    size_t n = strlen (word);
    for (const char *p = strstr (text, word); p; p = strstr (p + 1, word))
        if ((p == text || !(isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
            && !(isalnum ((unsigned char) p[n]) || p[n] == '_'))
            return true;
    return false;
}

//  After the scan: the accumulators of a register tile (see the header).
static void
s_tiles (const char *code, kf_descriptor_acc_t *a)
{
    //  Factors shared by two accumulators or more: a tile has two of them
    //  at least (a row's value and a column's), a shared scale one.
    char shared[KF_ACC_MAX * 2][KF_ACC_NAME];
    int n_shared = 0;
    //  Round 10: an element of a local 1-D array of vectors indexed by a
    //  name, c0[r] of `__m512 c0[MR]` updated in a loop over r, is a row
    //  of accumulators; a factor that does not name the index (b0, one
    //  row of a packed panel) is shared by its elements. Two such rows
    //  sharing the broadcast were read as two accumulators.
    bool row[KF_ACC_MAX] = { false };
    for (int i = 0; i < a->n; i++) {
        char index[KF_ACC_NAME] = "";
        row[i] = a->madd[i] && s_row (code, a->names[i], index, sizeof index);
        for (int f = 0; f < 2; f++) {
            const char *op = a->ops[i][f];
            if (!*op)
                continue;
            bool again = row[i] && !s_names (op, index), known = false;
            for (int j = 0; j < a->n && !again; j++)
                again = j != i && (!strcmp (a->ops[j][0], op) || !strcmp (a->ops[j][1], op));
            for (int s = 0; s < n_shared && !known; s++)
                known = !strcmp (shared[s], op);
            if (again && !known && n_shared < KF_ACC_MAX * 2)
                snprintf (shared[n_shared++], sizeof shared[0], "%s", op);
        }
    }
    a->tile = 0;
    for (int i = 0; i < a->n; i++) {
        if (!a->madd[i])
            continue;
        bool in = false;
        for (int s = 0; n_shared >= 2 && s < n_shared && !in; s++)
            in = !strcmp (a->ops[i][0], shared[s]) || !strcmp (a->ops[i][1], shared[s]);
        //  One element of a local 2-D array updated by a multiply-add in
        //  a loop is a whole tile by itself.
        bool vec;
        bool grid = strchr (a->names[i], '[')
                    && kf_descriptor_acc_local_array (code, a->names[i], &vec) == 2;
        if (grid)
            in = true;
        if (!in)
            continue;
        if (a->tile == 0)
            snprintf (a->tile_snip, sizeof a->tile_snip, "%s", a->names[i]);
        a->tile += grid ? KF_ACC_TILE_MIN : row[i] ? 2 : 1;
    }
}

void
kf_descriptor_accumulators (const char *code, kf_descriptor_acc_t *a)
{
    memset (a, 0, sizeof *a);
    s_res_t re;
    const char *id = "([[:alpha:]_][[:alnum:]_]*([[:space:]]*\\[[^];]*\\])*)";
    char pat[512];
    snprintf (pat, sizeof pat, "%s[[:space:]]*=[[:space:]]*([[:alnum:]_]+)[[:space:]]*\\(", id);
    bool call = regcomp (&re.call, pat, REG_EXTENDED) == 0;
    snprintf (pat, sizeof pat, "%s[[:space:]]*\\+=", id);
    bool plus = regcomp (&re.plus, pat, REG_EXTENDED) == 0;
    //  p = p * t + c, c a literal or a name (the descriptors' pattern
    //  rule wants a literal).
    bool mul = regcomp (&re.mul, "\\b([[:alpha:]_][[:alnum:]_]*)[[:space:]]*=[[:space:]]*\\1"
                                 "[[:space:]]*\\*[[:space:]]*[[:alnum:]_.]+[[:space:]]*[-+]"
                                 "[[:space:]]*[[:alnum:]_.]+[[:space:]]*$", REG_EXTENDED) == 0;
    if (call && plus && mul) {
        size_t len = strlen (code);
        char *st = malloc (len + 1);
        for (const char *p = code; st && *p;) {
            size_t n = strcspn (p, ";{}");
            memcpy (st, p, n);
            st[n] = 0;
            s_statement (st, &re, a);
            p += n + (p[n] != 0);
        }
        free (st);
        s_tiles (code, a);
    }
    if (call)
        regfree (&re.call);
    if (plus)
        regfree (&re.plus);
    if (mul)
        regfree (&re.mul);
}

int
kf_descriptor_acc_is_tile (const kf_descriptor_acc_t *a)
{
    return a->tile >= KF_ACC_TILE_MIN;
}
