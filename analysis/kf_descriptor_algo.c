/*  kf_descriptor_algo.c - algorithms that change a host kernel's
 *  arithmetic, read by code (kf_descriptor_algo.h): Winograd, FFT,
 *  Strassen, im2col, and the online softmax and Welford update written
 *  in intrinsics.
 *
 *  The code is read one region at a time (a function body, or a
 *  top-level initialiser): each region's sums and differences of two or
 *  three operands are collected, in scalar form (`d[1][c] + d[2][c]`)
 *  and as _mm*_add/sub_p[sd] calls, with the operands' white space
 *  removed, and the algorithms' transforms are looked for among them.
 *  Constant tables are read as lists of numbers (1.0f / 6 is a number)
 *  and compared with the Winograd transform matrices.
 */
#include "kf_descriptor_algo.h"
#include "kf_descriptor_regex.h"
#include "kf_descriptor_text.h"

#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define W "[[:space:]]*"
#define NAME "[[:alpha:]_][[:alnum:]_]*"
//  An operand: a name with its subscripts (d[0][c], x[(c * H + ih) * W]).
#define OPND NAME "(" W "\\[[^];]*\\])*"
#define ADDSUB "_mm(256|512)?_(add|sub)_p[sd]" W "\\(" W
#define EXPCALL "[[:alnum:]_]*exp[[:alnum:]_]*" W "\\(" W "_mm(256|512)?_sub_p[sd]" W "\\("

enum { R_PAIR, R_TRIPLE, R_IPAIR, R_ITRIPLE, R_F43, R_TWOPI, R_CEXP, R_COS, R_SIN, R_QUAD,
       R_SUM, R_STORE, R_INDEX, R_MEMCPY, R_ONLINE, R_FACTOR, R_WELFORD, R_COUNT };
static const char *const s_patterns[R_COUNT] = {
    "(" OPND ")" W "([-+])" W "(" OPND ")",
    "(" OPND ")" W "([-+])" W "(" OPND ")" W "([-+])" W "(" OPND ")",
    ADDSUB "(" OPND ")" W "," W "(" OPND ")" W "\\)",
    ADDSUB ADDSUB "(" OPND ")" W "," W "(" OPND ")" W "\\)" W "," W "(" OPND ")" W "\\)",
    //  The F(4,3) input transform's first row, 4 d0 - 5 d2 + d4.
    "\\b4(\\.0*)?f?" W "\\*" W OPND W "-" W "5(\\.0*)?f?" W "\\*" W OPND W "\\+" W OPND,
    //  2 pi, by the macro or its digits (the compile worker reads the
    //  preprocessed source, where M_PI is 3.14159265358979323846).
    "\\b2(\\.0*)?[fF]?" W "\\*" W "(\\(" W NAME W "\\)" W ")?(M_PI|PI|[Pp]i|3\\.14159)"
    "|\\b(M_PI|PI|[Pp]i)" W "\\*" W "2(\\.0*)?f?\\b|\\b6\\.28318|\\b(TWO_PI|M_2PI|TAU)\\b",
    "\\b(cexpf?|sincosf?)" W "\\(",
    "\\bcosf?" W "\\(",
    "\\bsinf?" W "\\(",
    //  Two quadrants of one matrix side by side: A11 + A22, a_21 - a_11,
    //  or handed to a helper with one argument between (add (A11, n, A22, ..)).
    "\\b([[:alpha:]]+)_?(11|12|21|22)\\b" W "(\\[[^];]*\\]" W ")?([-+,])" W
    "([[:alnum:]_]+" W "," W ")?([[:alpha:]]+)_?(11|12|21|22)\\b",
    "\\b(" NAME ")(" W "\\*" W "[[:alnum:]_]+)?" W "[-+]" W "(" NAME ")",
    //  A statement storing an element: NAME[index] = value.
    "^" W "(" NAME ")" W "\\[([^;=]*)\\]" W "=([^=].*)$",
    //  An element read: NAME[index].
    "\\b(" NAME ")" W "\\[([^];]*)\\]",
    "\\bmemcpy" W "\\(" W "&?" W "(" NAME ")" W "(\\[([^];]*)\\]|\\+([^,;]*))," W "&?" W "(" NAME ")" W
    "(\\[([^];]*)\\]|\\+([^,;]*)),",
    //  The running sum multiplied by exp of a difference, in place.
    "\\b(" NAME ")" W "=" W "_mm(256|512)?_(mul|fmadd)_p[sd]" W "\\(" W "\\1" W "," W EXPCALL,
    //  A factor: a name set to exp of a difference, in a vector or not
    //  (al = exp_neg (_mm512_sub_ps (m, mn)), al = expf (mo - mn)).
    "\\b(" NAME ")" W "=" W "(" EXPCALL "|[[:alnum:]_]*exp[[:alnum:]_]*" W "\\(" W OPND W "-"
    W OPND W "\\))",
    //  M2 += delta * (x - mean), as an FMA or an add of a product.
    "\\b(" NAME ")" W "=" W "_mm(256|512)?_fn?madd_p[sd]" W "\\(" W NAME W "," W
    "_mm(256|512)?_sub_p[sd]" W "\\(" W NAME W "," W NAME W "\\)" W "," W "\\1" W "\\)"
    "|\\b(" NAME ")" W "=" W "_mm(256|512)?_add_p[sd]" W "\\(" W "\\4" W "," W
    "_mm(256|512)?_mul_p[sd]" W "\\(" W NAME W "," W "_mm(256|512)?_sub_p[sd]" W "\\(",
};
static regex_t s_re[R_COUNT];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static bool s_ok;

static void
s_compile (void)
{
    s_ok = kf_descriptor_regcomp (s_re, s_patterns, R_COUNT, "kf_descriptor_algo");
}

//  The first piece of evidence: TEXT's N bytes, white space squeezed.
static void
s_note (kf_descriptor_algo_t *out, int kind, const char *text, size_t n)
{
    if (out->count[kind]++ > 0)
        return;
    char *snip = out->snip[kind];
    size_t k = 0;
    bool space = false;
    //  Two bytes a step (a space and a character), then "..." and the NUL.
    for (size_t i = 0; i < n && text[i] && k + 5 < KF_ALGO_SNIP; i++) {
        if (isspace ((unsigned char) text[i])) {
            space = k > 0;
            continue;
        }
        if (space)
            snip[k++] = ' ';
        space = false;
        snip[k++] = text[i];
    }
    if (k + 5 >= KF_ALGO_SNIP)
        snip[k++] = '.', snip[k++] = '.', snip[k++] = '.';
    snip[k] = 0;
}

//  ---------------------------------------------------------------------
//  Sums and differences of a region

#define S_OPND 64
#define S_FACTS 256

typedef struct {
    char op[2];                 /* the signs: op[0] between a and b, op[1] between b and c */
    char a[S_OPND], b[S_OPND], c[S_OPND];
    const char *at;             /* where it was read, for the snippet */
} s_fact_t;

typedef struct {
    s_fact_t pair[S_FACTS], triple[S_FACTS];
    int n_pair, n_triple;
} s_facts_t;

//  Copies the operand TEXT[M] without its white space into OUT; false
//  when it does not fit.
static bool
s_opnd (const char *text, regmatch_t m, char *out)
{
    size_t k = 0;
    for (regoff_t i = m.rm_so; i < m.rm_eo; i++)
        if (!isspace ((unsigned char) text[i])) {
            if (k + 1 >= S_OPND)
                return false;
            out[k++] = text[i];
        }
    out[k] = 0;
    return true;
}

//  Whether a scalar sum from FROM to TO (in TEXT) stands alone in its
//  expression: no product, quotient, minus or member access binds its
//  first operand from the left or its last from the right, and the last
//  is no call.
static bool
s_alone (const char *text, const char *from, const char *to)
{
    while (from > text && isspace ((unsigned char) from[-1]))
        from--;
    if (from > text && strchr ("*/-.>%", from[-1]))
        return false;
    while (isspace ((unsigned char) *to))
        to++;
    return !(*to && strchr ("*/(.%", *to));
}

//  Collects the sums and differences of REGION (N bytes, NUL-terminated
//  copy) into F: regex RE with operands at groups G[0..2] and signs at
//  S[0..1] (-1: the intrinsic's name says it, at group NAMES[0..1]).
static void
s_collect (const char *text, int re, const int g[3], const int s[2], const int names[2],
           bool scalar, s_fact_t *facts, int *n)
{
    regmatch_t m[16];
    const char *p = text;
    while (*n < S_FACTS && *p && regexec (&s_re[re], p, 16, m, p == text ? 0 : REG_NOTBOL) == 0) {
        s_fact_t *f = &facts[*n];
        bool ok = !scalar || s_alone (text, p + m[0].rm_so, p + m[0].rm_eo);
        for (int k = 0; k < 3 && ok; k++)
            ok = g[k] < 0 ? (f->c[0] = 0, true) : s_opnd (p, m[g[k]], k == 0 ? f->a : k == 1 ? f->b : f->c);
        for (int k = 0; k < 2 && ok; k++)
            f->op[k] = s[k] >= 0 ? p[m[s[k]].rm_so]
                       : names[k] >= 0 ? (p[m[names[k]].rm_so] == 'a' ? '+' : '-') : 0;
        if (ok) {
            f->at = p + m[0].rm_so;
            (*n)++;
        }
        //  Overlapping sums: read on from the second operand.
        regoff_t next = m[g[1]].rm_so > 0 ? m[g[1]].rm_so : m[0].rm_eo;
        p += next > 0 ? next : 1;
    }
}

static void
s_facts (const char *text, s_facts_t *f)
{
    f->n_pair = f->n_triple = 0;
    //  Group numbers follow the patterns: OPND holds one group of its own.
    s_collect (text, R_PAIR, (int[]) { 1, 4, -1 }, (int[]) { 3, -1 }, (int[]) { -1, -1 }, true,
               f->pair, &f->n_pair);
    s_collect (text, R_TRIPLE, (int[]) { 1, 4, 7 }, (int[]) { 3, 6 }, (int[]) { -1, -1 }, true,
               f->triple, &f->n_triple);
    s_collect (text, R_IPAIR, (int[]) { 3, 5, -1 }, (int[]) { -1, -1 }, (int[]) { 2, -1 }, false,
               f->pair, &f->n_pair);
    s_collect (text, R_ITRIPLE, (int[]) { 5, 7, 9 }, (int[]) { -1, -1 }, (int[]) { 4, 2 }, false,
               f->triple, &f->n_triple);
}

static bool
s_eq (const char *a, const char *b)
{
    return !strcmp (a, b);
}

//  The pair OP (A, B) of F, or NULL; ANY_ORDER takes B OP A as well.
static const s_fact_t *
s_pair (const s_facts_t *f, char op, const char *a, const char *b, bool any_order)
{
    for (int i = 0; i < f->n_pair; i++) {
        const s_fact_t *p = &f->pair[i];
        if (p->op[0] == op && ((s_eq (p->a, a) && s_eq (p->b, b))
                               || (any_order && s_eq (p->a, b) && s_eq (p->b, a))))
            return p;
    }
    return NULL;
}

//  B^T d of F(2,3): d0 - d2, d1 + d2, d2 - d1, d1 - d3.
static const s_fact_t *
s_winograd_input (const s_facts_t *f)
{
    for (int i = 0; i < f->n_pair; i++) {
        const s_fact_t *m = &f->pair[i];          //  d2 - d1
        if (m->op[0] != '-' || !s_pair (f, '+', m->b, m->a, true))
            continue;
        for (int j = 0; j < f->n_pair; j++) {
            const s_fact_t *r = &f->pair[j];      //  d1 - d3
            if (r->op[0] != '-' || !s_eq (r->a, m->b) || s_eq (r->b, m->a))
                continue;
            for (int k = 0; k < f->n_pair; k++) {
                const s_fact_t *l = &f->pair[k];  //  d0 - d2
                if (l->op[0] == '-' && s_eq (l->b, m->a) && !s_eq (l->a, m->b)
                    && !s_eq (l->a, r->b))
                    return l;
            }
        }
    }
    return NULL;
}

//  G g of F(2,3): g0 + g1 + g2 beside g0 - g1 + g2; A^T m: m0 + m1 + m2
//  beside m1 - m2 - m3.
static const s_fact_t *
s_winograd_sums (const s_facts_t *f)
{
    for (int i = 0; i < f->n_triple; i++) {
        const s_fact_t *t = &f->triple[i];
        if (t->op[0] != '+' || t->op[1] != '+')
            continue;
        for (int j = 0; j < f->n_triple; j++) {
            const s_fact_t *u = &f->triple[j];
            bool filter = u->op[0] == '-' && u->op[1] == '+' && s_eq (u->a, t->a)
                          && s_eq (u->b, t->b) && s_eq (u->c, t->c);
            bool output = u->op[0] == '-' && u->op[1] == '-' && s_eq (u->a, t->b)
                          && s_eq (u->b, t->c) && !s_eq (u->c, t->a);
            if (filter || output)
                return t;
        }
    }
    return NULL;
}

//  A butterfly: a + b beside a - b.
static const s_fact_t *
s_butterfly (const s_facts_t *f)
{
    for (int i = 0; i < f->n_pair; i++)
        if (f->pair[i].op[0] == '+' && s_pair (f, '-', f->pair[i].a, f->pair[i].b, false))
            return &f->pair[i];
    return NULL;
}

//  ---------------------------------------------------------------------
//  Constant tables

#define S_VALUES 256

//  The Winograd transform matrices, row-major, and their transposes
//  (a table may hold either); F(4,3)'s first rows suffice.
static const struct {
    int n;
    double v[20];
} s_tables[] = {
    { 16, { 1, 0, -1, 0, 0, 1, 1, 0, 0, -1, 1, 0, 0, 1, 0, -1 } },           //  B^T F(2,3)
    { 16, { 1, 0, 0, 0, 0, 1, -1, 1, -1, 1, 1, 0, 0, 0, 0, -1 } },           //  B
    { 12, { 1, 0, 0, .5, .5, .5, .5, -.5, .5, 0, 0, 1 } },                   //  G
    { 12, { 1, .5, .5, 0, 0, .5, -.5, 0, 0, .5, .5, 1 } },                   //  G^T
    { 8, { 1, 1, 1, 0, 0, 1, -1, -1 } },                                     //  A^T
    { 8, { 1, 0, 1, 1, 1, -1, 0, -1 } },                                     //  A
    { 18, { 4, 0, -5, 0, 1, 0, 0, -4, -4, 1, 1, 0, 0, 4, -4, -1, 1, 0 } },   //  B^T F(4,3)
    { 18, { 4, 0, 0, 0, 0, 0, 0, -4, 4, -2, 2, 4, -5, -4, -4, -1, -1, 0 } }, //  B
    { 12, { 1. / 4, 0, 0, -1. / 6, -1. / 6, -1. / 6, -1. / 6, 1. / 6, -1. / 6, 1. / 24,
            1. / 12, 1. / 6 } },                                             //  G
    { 12, { 1. / 4, -1. / 6, -1. / 6, 1. / 24, 1. / 24, 0, 0, -1. / 6, 1. / 6, 1. / 12,
            -1. / 12, 0 } },                                                 //  G^T
    { 12, { 1, 1, 1, 1, 1, 0, 0, 1, -1, 2, -2, 0 } },                        //  A^T
    { 16, { 1, 0, 0, 0, 1, 1, 1, 1, 1, -1, 1, -1, 1, 2, 4, 8 } },            //  A
};

//  The numbers of the initialiser from OPEN to CLOSE into V (at most
//  S_VALUES); a quotient of two literals (1.0f / 6) is one number.
static int
s_numbers (const char *open, const char *close, double *v)
{
    int n = 0;
    const char *p = open;
    while (p < close && n < S_VALUES) {
        bool sign = (*p == '-' || *p == '+') && (isdigit ((unsigned char) p[1]) || p[1] == '.');
        if (!(isdigit ((unsigned char) *p) || *p == '.' || sign)
            || (p > open && (isalnum ((unsigned char) p[-1]) || p[-1] == '_'))) {
            p++;
            continue;
        }
        char *end;
        double x = strtod (p, &end);
        if (end == p) {
            p++;
            continue;
        }
        p = end;
        while (*p == 'f' || *p == 'F' || *p == 'l' || *p == 'L')
            p++;
        const char *q = p;
        while (isspace ((unsigned char) *q))
            q++;
        if (*q == '/') {
            double d = strtod (q + 1, &end);
            if (end != q + 1 && d != 0) {
                x /= d;
                p = end;
                while (*p == 'f' || *p == 'F')
                    p++;
            }
        }
        v[n++] = x;
    }
    return n;
}

static bool
s_holds_table (const double *v, int n)
{
    for (size_t t = 0; t < sizeof s_tables / sizeof s_tables[0]; t++)
        for (int at = 0; at + s_tables[t].n <= n; at++) {
            int k = 0;
            while (k < s_tables[t].n && fabs (v[at + k] - s_tables[t].v[k]) < 1e-4)
                k++;
            if (k == s_tables[t].n)
                return true;
        }
    return false;
}

static void
s_tables_read (const char *code, kf_descriptor_algo_t *out)
{
    double v[S_VALUES];
    for (const char *p = strchr (code, '='); p; p = strchr (p + 1, '=')) {
        const char *q = p + 1;
        while (isspace ((unsigned char) *q))
            q++;
        if (*q != '{')
            continue;
        const char *close = kf_descriptor_close (q);
        if (!close)
            return;
        if (s_holds_table (v, s_numbers (q, close, v))) {
            const char *line = p;           //  from the declaration's line
            while (line > code && line[-1] != '\n' && line[-1] != ';')
                line--;
            s_note (out, KF_ALGO_WINOGRAD, line, (size_t) (close - line + 1));
        }
    }
}

//  ---------------------------------------------------------------------
//  im2col

#define S_EXPANDED 1024

static bool
s_has_word (const char *text, const char *word, size_t len)
{
    for (const char *p = strstr (text, word); p; p = strstr (p + 1, word)) {
        bool left = p == text || !(isalnum ((unsigned char) p[-1]) || p[-1] == '_');
        bool right = !(isalnum ((unsigned char) p[len]) || p[len] == '_');
        if (left && right && !strncmp (p, word, len))
            return true;
    }
    return false;
}

//  INDEX (LEN bytes) followed by the expression each of its names was
//  first assigned in REGION (`int ih = oh + kh - 1, iw = ...`, up to its
//  comma or semicolon), one level, into OUT.
static void
s_expand (const char *region, const char *index, size_t len, char *out)
{
    snprintf (out, S_EXPANDED, "%.*s", (int) len, index);
    size_t used = strlen (out);
    for (size_t i = 0; i < len && used + 2 < S_EXPANDED;) {
        if (!(isalpha ((unsigned char) index[i]) || index[i] == '_')
            || (i > 0 && (isalnum ((unsigned char) index[i - 1]) || index[i - 1] == '_'))) {
            i++;
            continue;
        }
        size_t n = 0;
        while (i + n < len && (isalnum ((unsigned char) index[i + n]) || index[i + n] == '_'))
            n++;
        for (const char *p = strstr (region, "="); p; p = strstr (p + 1, "=")) {
            const char *e = p;
            while (e > region && isspace ((unsigned char) e[-1]))
                e--;
            if (p[1] == '=' || strchr ("=!<>+-*/%&|^", p[-1]) || e - region < (long) n
                || strncmp (e - n, index + i, n)
                || (e - (long) n > region && (isalnum ((unsigned char) e[-n - 1]) || e[-n - 1] == '_')))
                continue;
            size_t k = 1;
            int depth = 0;
            while (p[k] && p[k] != ';' && !(depth == 0 && p[k] == ',')) {
                depth += (p[k] == '(') - (p[k] == ')');
                k++;
            }
            int wrote = snprintf (out + used, S_EXPANDED - used, " %.*s", (int) (k - 1), p + 1);
            used = wrote > 0 && used + (size_t) wrote < S_EXPANDED ? used + (size_t) wrote
                                                                   : S_EXPANDED - 1;
            break;
        }
        i += n;
    }
}

//  Whether the factor M of a sum's first name (oh * 2 + kh) is a stride:
//  a number, or a name that says so. A linear index (i * h + j) adds a
//  row's start to a column, not a tap to a position.
static bool
s_stride (const char *text, regmatch_t m)
{
    if (m.rm_so < 0)
        return true;
    const char *f = text + m.rm_so;
    while (*f == '*' || isspace ((unsigned char) *f))
        f++;
    size_t n = (size_t) (text + m.rm_eo - f);
    if (isdigit ((unsigned char) *f))
        return true;
    static const char *const names[] = { "s", "S", "sh", "sw", "SH", "SW", "sy", "sx", NULL };
    for (int i = 0; names[i]; i++)
        if (strlen (names[i]) == n && !strncmp (f, names[i], n))
            return true;
    for (size_t i = 0; i + 3 <= n; i++)
        if (!strncasecmp (f + i, "str", 3))
            return true;
    return false;
}

//  Whether SRC, expanded, adds two different names that both index DST,
//  expanded (oh + kh into col[row * P + oh * OW + ow], row from kh).
static bool
s_unfolds (const char *region, const char *dst, size_t dst_len, const char *src, size_t src_len)
{
    char *d = malloc (S_EXPANDED), *x = malloc (S_EXPANDED);
    bool found = false;
    if (d && x) {
        s_expand (region, dst, dst_len, d);
        s_expand (region, src, src_len, x);
        regmatch_t m[4];
        for (const char *p = x; !found && *p && regexec (&s_re[R_SUM], p, 4, m, p == x ? 0 : REG_NOTBOL) == 0;) {
            size_t la = (size_t) (m[1].rm_eo - m[1].rm_so), lb = (size_t) (m[3].rm_eo - m[3].rm_so);
            char a[S_OPND], b[S_OPND];
            if (la < S_OPND && lb < S_OPND) {
                snprintf (a, sizeof a, "%.*s", (int) la, p + m[1].rm_so);
                snprintf (b, sizeof b, "%.*s", (int) lb, p + m[3].rm_so);
                found = strcmp (a, b) && s_stride (p, m[2]) && s_has_word (d, a, la)
                        && s_has_word (d, b, lb);
            }
            p += m[3].rm_so > 0 ? m[3].rm_so : 1;
        }
    }
    free (d);
    free (x);
    return found;
}

//  A buffer filled from an input through an unfolding index, element by
//  element (`col[..] = cond ? x[..] : 0`) or a row at a time (memcpy).
static void
s_im2col (const char *region, kf_descriptor_algo_t *out)
{
    regmatch_t m[10];
    for (const char *p = region; *p;) {
        size_t n = strcspn (p, ";{}");
        char *st = strndup (p, n);
        if (st && regexec (&s_re[R_STORE], st, 4, m, 0) == 0) {
            const char *rhs = st + m[3].rm_so;
            size_t dn = (size_t) (m[1].rm_eo - m[1].rm_so);
            regmatch_t r[3];
            for (const char *q = rhs; regexec (&s_re[R_INDEX], q, 3, r, q == rhs ? 0 : REG_NOTBOL) == 0;
                 q += r[0].rm_eo) {
                bool other = (size_t) (r[1].rm_eo - r[1].rm_so) != dn
                             || strncmp (q + r[1].rm_so, st + m[1].rm_so, dn);
                if (other && s_unfolds (region, st + m[2].rm_so, (size_t) (m[2].rm_eo - m[2].rm_so),
                                        q + r[2].rm_so, (size_t) (r[2].rm_eo - r[2].rm_so))) {
                    s_note (out, KF_ALGO_IM2COL, st, n);
                    break;
                }
            }
        }
        else if (st && regexec (&s_re[R_MEMCPY], st, 10, m, 0) == 0) {
            int dg = m[3].rm_so >= 0 ? 3 : 4, sg = m[7].rm_so >= 0 ? 7 : 8;
            if (s_unfolds (region, st + m[dg].rm_so, (size_t) (m[dg].rm_eo - m[dg].rm_so),
                           st + m[sg].rm_so, (size_t) (m[sg].rm_eo - m[sg].rm_so)))
                s_note (out, KF_ALGO_IM2COL, st, n);
        }
        free (st);
        p += n + (p[n] != 0);
    }
}

//  ---------------------------------------------------------------------
//  Strassen: quadrants of one matrix combined, for two matrices at least
//  (a register tile's c11 + c12 names one).

#define S_PREFIXES 8

static void
s_strassen (const char *code, kf_descriptor_algo_t *out)
{
    char prefix[S_PREFIXES][16];
    int count[S_PREFIXES] = { 0 }, n = 0;
    const char *first = NULL;
    regmatch_t m[8];
    for (const char *p = code; *p && regexec (&s_re[R_QUAD], p, 8, m, p == code ? 0 : REG_NOTBOL) == 0;) {
        size_t la = (size_t) (m[1].rm_eo - m[1].rm_so), lb = (size_t) (m[6].rm_eo - m[6].rm_so);
        bool same = la == lb && la < sizeof prefix[0] && !strncmp (p + m[1].rm_so, p + m[6].rm_so, la)
                    && strncmp (p + m[2].rm_so, p + m[7].rm_so, 2);
        if (same) {
            int i = 0;
            while (i < n && (strlen (prefix[i]) != la || strncmp (prefix[i], p + m[1].rm_so, la)))
                i++;
            if (i == n && n < S_PREFIXES)
                snprintf (prefix[n++], sizeof prefix[0], "%.*s", (int) la, p + m[1].rm_so);
            if (i < n)
                count[i]++;
            if (!first)
                first = p + m[0].rm_so;
        }
        p += m[6].rm_so > 0 ? m[6].rm_so : 1;
    }
    int matrices = 0, total = 0;
    for (int i = 0; i < n; i++) {
        matrices += count[i] >= 2;
        total += count[i];
    }
    if (matrices >= 2) {
        s_note (out, KF_ALGO_STRASSEN, first, strcspn (first, ";"));
        out->count[KF_ALGO_STRASSEN] = total;
    }
}

//  ---------------------------------------------------------------------
//  The reader

static bool
s_found (int re, const char *text)
{
    return regexec (&s_re[re], text, 0, NULL, 0) == 0;
}

//  Counts RE's matches in CODE as evidence of KIND.
static void
s_count (int re, const char *code, int kind, kf_descriptor_algo_t *out)
{
    regmatch_t m[1];
    for (const char *p = code; *p && regexec (&s_re[re], p, 1, m, p == code ? 0 : REG_NOTBOL) == 0;) {
        s_note (out, kind, p + m[0].rm_so, (size_t) (m[0].rm_eo - m[0].rm_so));
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
}

//  ---------------------------------------------------------------------
//  The online softmax's rescale, followed by name

#define S_FACTORS 16
#define S_STATEMENT 512

//  ST (NUL-terminated) without white space except one blank between two
//  words, and without line continuations, into OUT.
static void
s_squeeze (const char *st, size_t len, char *out, size_t size)
{
    size_t k = 0;
    bool blank = false;
    for (size_t i = 0; i < len && k + 2 < size; i++) {
        char c = st[i];
        if (isspace ((unsigned char) c) || c == '\\') {
            blank = true;
            continue;
        }
        if (blank && k > 0 && (isalnum ((unsigned char) out[k - 1]) || out[k - 1] == '_')
            && (isalnum ((unsigned char) c) || c == '_'))
            out[k++] = ' ';
        blank = false;
        out[k++] = c;
    }
    out[k] = 0;
}

//  The first argument of the call whose arguments start at *P (past its
//  opening parenthesis), into OUT; *P moves past its comma.
static bool
s_argument (const char **p, char *out, size_t size)
{
    int depth = 0;
    const char *a = *p;
    for (; **p; (*p)++) {
        depth += **p == '(' || **p == '[';
        if (depth == 0 && (**p == ',' || **p == ')'))
            break;
        depth -= **p == ')' || **p == ']';
    }
    size_t n = (size_t) (*p - a);
    if (!**p || n == 0 || n >= size)
        return false;
    memcpy (out, a, n);
    out[n] = 0;
    (*p)++;
    return true;
}

//  Whether the N factors hold NAME's LEN bytes already.
static bool
s_factor_at (const char factor[][S_OPND], int n, const char *name, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen (factor[i]) == len && !strncmp (factor[i], name, len))
            return true;
    return false;
}

static bool
s_factor (const char *name, const char factor[][S_OPND], int n)
{
    return s_factor_at (factor, n, name, strlen (name));
}

//  Whether statement S (squeezed) multiplies a running value by one of
//  the N factors in place: x *= f; x = x * f (+ ...); x = f * x;
//  x = _mm*_mul/fmadd_p[sd] (x, f, ...) or (f, x, ...).
static bool
s_rescales (const char *s, const char factor[][S_OPND], int n)
{
    const char *eq = strchr (s, '=');
    if (!eq || eq == s || eq[1] == '=' || strchr ("!<>", eq[-1]))
        return false;
    bool times = eq[-1] == '*';
    const char *end = eq - times, *lhs = end;
    while (lhs > s && lhs[-1] != ' ')
        lhs--;
    char name[S_OPND];
    if (end - lhs <= 0 || (size_t) (end - lhs) >= sizeof name)
        return false;
    snprintf (name, sizeof name, "%.*s", (int) (end - lhs), lhs);
    const char *rhs = eq + 1;
    if (times)
        return s_factor (rhs, factor, n);
    if (!strncmp (rhs, "_mm", 3)) {
        const char *op = rhs + 3 + strspn (rhs + 3, "0123456789");
        const char *open = strchr (op, '(');
        if (!open || (strncmp (op, "_mul_p", 6) && strncmp (op, "_fmadd_p", 8)))
            return false;
        const char *p = open + 1;
        char a[S_OPND], b[S_OPND];
        if (!s_argument (&p, a, sizeof a) || !s_argument (&p, b, sizeof b))
            return false;
        return (!strcmp (a, name) && s_factor (b, factor, n))
               || (!strcmp (b, name) && s_factor (a, factor, n));
    }
    size_t len = strlen (name);
    for (int i = 0; i < n; i++) {
        size_t flen = strlen (factor[i]);
        //  x * f or f * x, the whole of the right side or a sum's first term.
        for (int order = 0; order < 2; order++) {
            const char *first = order ? factor[i] : name, *second = order ? name : factor[i];
            size_t l1 = order ? flen : len, l2 = order ? len : flen;
            if (!strncmp (rhs, first, l1) && rhs[l1] == '*' && !strncmp (rhs + l1 + 1, second, l2)
                && strchr ("+-", rhs[l1 + 1 + l2]))
                return true;
        }
    }
    return false;
}

//  Round 28: two online softmaxes read as direct translations. One set
//  its factor (al0 = exp_neg (_mm512_sub_ps (m0, mn0))) some thirty
//  statements before the running sum took it (l0 = _mm512_fmadd_ps (l0,
//  al0, s)); the other kept its sums in an array (lrow[q] = lrow[q] * al
//  + ...). Each factor of REGION is followed by name to its statements.
static void
s_online (const char *region, kf_descriptor_algo_t *out)
{
    char factor[S_FACTORS][S_OPND];
    int n = 0;
    regmatch_t m[2];
    for (const char *p = region; n < S_FACTORS && *p
         && regexec (&s_re[R_FACTOR], p, 2, m, p == region ? 0 : REG_NOTBOL) == 0;
         p += m[0].rm_eo > 0 ? m[0].rm_eo : 1) {
        size_t len = (size_t) (m[1].rm_eo - m[1].rm_so);
        if (len < S_OPND && !s_factor_at (factor, n, p + m[1].rm_so, len))
            snprintf (factor[n++], S_OPND, "%.*s", (int) len, p + m[1].rm_so);
    }
    char st[S_STATEMENT];
    for (const char *p = region; n > 0 && *p;) {
        size_t len = strcspn (p, ";{}");
        s_squeeze (p, len, st, sizeof st);
        if (s_rescales (st, factor, n))
            s_note (out, KF_ALGO_ONLINE, p, len);
        p += len + (p[len] != 0);
    }
}

static void
s_note_fact (kf_descriptor_algo_t *out, int kind, const s_fact_t *f)
{
    if (f)
        s_note (out, kind, f->at, strcspn (f->at, ";"));
}

int
kf_descriptor_algo (const char *code, kf_descriptor_algo_t *out)
{
    memset (out, 0, sizeof *out);
    pthread_once (&s_once, s_compile);
    s_facts_t *f = malloc (sizeof *f);
    if (!s_ok || !f) {
        free (f);
        return -1;
    }
    bool twiddle = s_found (R_TWOPI, code)
                   && (s_found (R_CEXP, code) || (s_found (R_COS, code) && s_found (R_SIN, code)));
    //  One region at a time: a function body or a top-level initialiser.
    int depth = 0;
    for (const char *p = code; *p; p++) {
        depth += (*p == '{') - (*p == '}');
        if (!(*p == '{' && depth == 1))
            continue;
        const char *close = kf_descriptor_close (p);
        char *region = strndup (p, close ? (size_t) (close - p + 1) : strlen (p));
        if (!region)
            break;
        s_facts (region, f);
        s_note_fact (out, KF_ALGO_WINOGRAD, s_winograd_input (f));
        s_note_fact (out, KF_ALGO_WINOGRAD, s_winograd_sums (f));
        if (twiddle)
            s_note_fact (out, KF_ALGO_FFT, s_butterfly (f));
        s_im2col (region, out);
        s_online (region, out);
        free (region);
        if (!close)
            break;
        p = close;
        depth = 0;
    }
    free (f);
    s_tables_read (code, out);
    s_count (R_F43, code, KF_ALGO_WINOGRAD, out);
    s_strassen (code, out);
    s_count (R_ONLINE, code, KF_ALGO_ONLINE, out);
    s_count (R_WELFORD, code, KF_ALGO_WELFORD, out);
    return 0;
}
