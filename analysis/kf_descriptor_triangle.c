/*  kf_descriptor_triangle.c - whether a kernel's loops walk one triangle
 *  (kf_descriptor_triangle.h).
 */
#include "kf_descriptor_triangle.h"
#include "kf_text.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

//  Loops read per kernel; past this many the rest are not read.
#define S_LOOPS 128
#define S_TEXT 64

//  Clauses of a condition read (`j < J0 + GB && j <= i`).
#define S_CLAUSES 2

typedef struct {
    char var[S_TEXT];   //  the index the init sets
    char init[S_TEXT];  //  what it sets it to
    struct {
        char op[3];         //  the clause's comparison: "<" or "<="
        char bound[S_TEXT]; //  its right side
    } c[S_CLAUSES];
    int clauses;
    bool capped;        //  a clause not on the index (`np < PANELS`)
    char step[S_TEXT];  //  what `+=` adds, "1" for `++`
} s_loop_t;

//  S[0, N) without spaces into OUT.
static void
s_squeeze (const char *s, size_t n, char *out)
{
    size_t k = 0;
    for (size_t i = 0; i < n && k + 1 < S_TEXT; i++)
        if (!isspace ((unsigned char) s[i]))
            out[k++] = s[i];
    out[k] = '\0';
}

static bool
s_ident (const char *s)
{
    if (!*s || !(isalpha ((unsigned char) *s) || *s == '_'))
        return false;
    for (; *s; s++)
        if (!(isalnum ((unsigned char) *s) || *s == '_'))
            return false;
    return true;
}

//  The header of the for loop whose '(' is at OPEN into L; false where
//  it is not `[type] v = init; v < bound | v <= bound; ...`.
static bool
s_header (const char *open, s_loop_t *l)
{
    const char *part[3], *end[3];
    int depth = 0, k = 0;
    part[0] = open + 1;
    const char *p;
    for (p = open; *p; p++) {
        if (*p == '(')
            depth++;
        else if (*p == ')' && --depth == 0)
            break;
        else if (*p == ';' && depth == 1) {
            if (k >= 2)
                return false;
            end[k] = p;
            part[++k] = p + 1;
        }
    }
    if (!*p || k != 2)
        return false;
    end[2] = p;
    //  The init: its last `name = expr` (a type before the name).
    const char *eq = memchr (part[0], '=', (size_t) (end[0] - part[0]));
    if (!eq || eq[1] == '=')
        return false;
    const char *v = eq;
    while (v > part[0] && isspace ((unsigned char) v[-1]))
        v--;
    const char *ve = v;
    while (v > part[0] && (isalnum ((unsigned char) v[-1]) || v[-1] == '_'))
        v--;
    s_squeeze (v, (size_t) (ve - v), l->var);
    s_squeeze (eq + 1, (size_t) (end[0] - eq - 1), l->init);
    //  The condition: clauses joined by &&, each the index, then < or
    //  <=, then the bound (round 45: `j0 < J0 + GB && j0 <= i0`).
    char cond[S_TEXT];
    s_squeeze (part[1], (size_t) (end[1] - part[1]), cond);
    size_t n = strlen (l->var);
    l->clauses = 0;
    l->capped = false;
    for (char *c = cond; c && l->clauses < S_CLAUSES;) {
        char *next = strstr (c, "&&");
        if (next)
            *next = '\0';
        l->capped |= !(n && !strncmp (c, l->var, n) && c[n] == '<');
        if (n && !strncmp (c, l->var, n) && c[n] == '<') {
            bool le = c[n + 1] == '=';
            snprintf (l->c[l->clauses].op, sizeof l->c[0].op, "%s", le ? "<=" : "<");
            snprintf (l->c[l->clauses].bound, sizeof l->c[0].bound, "%s", c + n + 1 + le);
            l->clauses += *l->c[l->clauses].bound != '\0';
        }
        c = next ? next + 2 : NULL;
    }
    if (!l->clauses)
        return false;
    char step[S_TEXT];
    s_squeeze (part[2], (size_t) (end[2] - part[2]), step);
    const char *add = strstr (step, "+=");
    snprintf (l->step, sizeof l->step, "%s", add ? add + 2 : strstr (step, "++") ? "1" : "");
    return s_ident (l->var);
}

//  Whether CODE compares A and B for (in)equality as whole names: "A !=
//  B", "B == A" and the like, spaces aside (a diagonal's test).
static bool
s_compared (const char *code, const char *a, const char *b)
{
    static const char *const ops[] = { "!=", "==" };
    size_t la = strlen (a), lb = strlen (b);
    for (const char *p = code; (p = strstr (p, a)) != NULL; p += la) {
        if (p > code && (isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p + la;
        while (isspace ((unsigned char) *q))
            q++;
        for (size_t o = 0; o < 2; o++) {
            if (strncmp (q, ops[o], 2))
                continue;
            const char *r = q + 2;
            while (isspace ((unsigned char) *r))
                r++;
            if (!strncmp (r, b, lb) && !(isalnum ((unsigned char) r[lb]) || r[lb] == '_'))
                return true;
        }
    }
    return false;
}

//  L's header, squeezed, into SNIP (SIZE bytes; none when NULL); true.
static bool
s_found (const s_loop_t *l, char *snip, size_t size)
{
    if (snip && size)
        snprintf (snip, size, "for (%s = %s; %s %s %s%s; ...)", l->var, l->init, l->var,
                  l->c[0].op, l->c[0].bound, l->clauses > 1 ? " && ..." : "");
    return true;
}

//  Whether CODE stores by rows of U and columns of V and the other way
//  too (`y + (i0 + r) * n + j0` and `y + (j0 + c) * n + i0`): an output
//  tile and its mirror.
static bool
s_mirrored (const char *code, const char *u, const char *v)
{
    char a[200], b[200];
    snprintf (a, sizeof a, "\\b%s\\b[^;=]*\\)[[:space:]]*\\*[^;=]*\\+[[:space:]]*%s\\b", u, v);
    snprintf (b, sizeof b, "\\b%s\\b[^;=]*\\)[[:space:]]*\\*[^;=]*\\+[[:space:]]*%s\\b", v, u);
    return kf_text_matches (code, a) && kf_text_matches (code, b);
}

//  Whether TEXT names NAME as a whole word.
static bool
s_mentions (const char *text, const char *name)
{
    size_t n = strlen (name);
    for (const char *p = text; n && (p = strstr (p, name)) != NULL; p += n)
        if ((p == text || !(isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
            && !(isalnum ((unsigned char) p[n]) || p[n] == '_'))
            return true;
    return false;
}

//  Whether IN's clause C runs its rows up to the end of a block of
//  columns whose start the code sets as a count of such blocks (`const
//  int jc = bcol * NC;` before `for (ic = 0; ic < jc + NC; ic += MC)`,
//  round 44): the lower triangle by blocks, no loop of jc's own.
static bool
s_to_block_end (const char *code, const s_loop_t *in, int c)
{
    const char *bound = in->c[c].bound, *plus = strchr (bound, '+');
    char start[S_TEXT], size[S_TEXT];
    if (!plus || (size_t) (plus - bound) >= sizeof start)
        return false;
    snprintf (start, sizeof start, "%.*s", (int) (plus - bound), bound);
    snprintf (size, sizeof size, "%s", plus + 1);
    if (!s_ident (start) || !s_ident (size) || !strcmp (start, in->var)
        || s_mentions (in->init, start))
        return false;
    char re[3 * S_TEXT + 80];
    snprintf (re, sizeof re, "\\b%s[[:space:]]*=[[:space:]]*[A-Za-z_0-9]+[[:space:]]*\\*[[:space:]]*%s\\b",
              start, size);
    return kf_text_matches (code, re);
}

//  Whether IN, inside a loop OUT, walks one triangle by its clause C.
static bool
s_walks (const s_loop_t *in, const s_loop_t *out, int c)
{
    const char *op = in->c[c].op, *bound = in->c[c].bound;
    //  j = i to the outer loop's own bound: the upper triangle; not a
    //  block's loop clamped to the bound (`i = ii; i < ii + TILE && i <
    //  m`), whose other clause runs from its start.
    //  Round 47: nor one capped by a second clause (`j0 = jp; j0 < N && np
    //  < PANELS`), a block of panels that runs to the bound only at the end.
    bool block = in->clauses > 1 || in->capped;
    for (int k = 0; k < in->clauses; k++)
        block |= s_mentions (in->c[k].bound, in->init);
    if (!block && !strcmp (in->init, out->var) && !strcmp (bound, out->c[0].bound))
        return true;
    //  j from the start up to i itself: the lower one.
    if (!strcmp (op, "<=") && !strcmp (bound, out->var))
        return true;
    //  Round 45's open item: rows up to the end of the outer loop's block
    //  of columns (`for (ic = 0; ic < jc + NC; ic += MC)` inside `jc +=
    //  NC`): the lower triangle by blocks, its diagonal blocks whole.
    char block_end[2 * S_TEXT + 2];
    snprintf (block_end, sizeof block_end, "%s+%s", out->var, out->step);
    if (*out->step && strcmp (out->step, "1") && !strcmp (bound, block_end)
        && !s_mentions (in->init, out->var))
        return true;
    //  Or short of it by blocks of one size (round 41's mirror of the
    //  blocks below the diagonal); by ones it is as likely a sum over
    //  earlier threads' totals (round 35's scan).
    return !strcmp (bound, out->var) && !strcmp (in->step, out->step)
           && strcmp (in->step, "1") && *in->step;
}

bool
kf_descriptor_triangle (const char *code, char *snip, size_t size)
{
    if (snip && size)
        snip[0] = '\0';
    s_loop_t loops[S_LOOPS];
    size_t n = 0;
    for (const char *p = code ? strstr (code, "for") : NULL; p && n < S_LOOPS;
         p = strstr (p + 3, "for")) {
        if ((p > code && (isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
            || isalnum ((unsigned char) p[3]) || p[3] == '_')
            continue;
        const char *open = p + 3;
        while (isspace ((unsigned char) *open))
            open++;
        if (*open != '(' || !s_header (open, &loops[n]))
            continue;
        const s_loop_t *in = &loops[n];
        //  Round 44: j from a row index the code tests against it (`for (J
        //  = I; J < nb; J++)` beside `if (I != J)`, I from a list of row
        //  pairs, no loop of its own): the diagonal's test says it.
        //  Round 45: or from a column index whose tile the code stores
        //  twice, as itself and as its mirror (`for (i0 = j0; i0 < n;
        //  ...)`, j0 from a block number).
        if (s_ident (in->init) && strcmp (in->init, in->var)
            && (s_compared (code, in->init, in->var) || s_compared (code, in->var, in->init)
                || s_mirrored (code, in->init, in->var)))
            return s_found (in, snip, size);
        for (int c = 0; c < in->clauses; c++)
            if (s_to_block_end (code, in, c))
                return s_found (in, snip, size);
        for (size_t o = 0; o < n; o++)
            for (int c = 0; c < in->clauses; c++)
                if (strcmp (loops[o].var, in->var) && s_walks (in, &loops[o], c))
                    return s_found (in, snip, size);
        n++;
    }
    return false;
}
