/*  kf_descriptor_chain.c - a chain of two products done a block of rows at
 *  a time (kf_descriptor_chain.h).
 */
#include "kf_descriptor_chain.h"

#include "kf_descriptor_text.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NAMES 24
#define S_CALLS 2
//  The loops read, and the longest code read at all: a candidate's text
//  cannot make the reading unbounded (each loop's body and the functions
//  it calls are read for both inputs' names).
#define S_LOOPS 512
#define S_CODE_MAX ((size_t) 1 << 20)

typedef struct {
    char name[S_NAMES][KF_ACC_NAME];
    int n;
} s_set_t;

static bool
s_ident (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

static bool
s_has (const s_set_t *s, const char *name, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (strlen (s->name[i]) == len && !strncmp (s->name[i], name, len))
            return true;
    return false;
}

//  Adds NAME (LEN bytes); true when it was not there.
static bool
s_put (s_set_t *s, const char *name, size_t len)
{
    if (!len || len >= KF_ACC_NAME || s->n >= S_NAMES || s_has (s, name, len)
        || (*name >= '0' && *name <= '9'))
        return false;
    snprintf (s->name[s->n++], KF_ACC_NAME, "%.*s", (int) len, name);
    return true;
}

//  The next identifier of [P, END) that is in S (a member's name too:
//  j->v), or NULL.
static const char *
s_next (const s_set_t *s, const char *t, const char *p, const char *end, size_t *len)
{
    for (; p < end; p++) {
        if (!s_ident (*p) || (p > t && s_ident (p[-1])) || (*p >= '0' && *p <= '9'))
            continue;
        const char *e = p;
        while (e < end && s_ident (*e))
            e++;
        if (s_has (s, p, (size_t) (e - p))) {
            *len = (size_t) (e - p);
            return p;
        }
        p = e - 1;
    }
    return NULL;
}

//  The name before the parenthesis OPEN (spaces between), no further back
//  than FROM, and its length into *LEN (0 where none).
static const char *
s_callee (const char *from, const char *open, size_t *len)
{
    const char *f = open;
    while (f > from && (f[-1] == ' ' || f[-1] == '\t'))
        f--;
    const char *fe = f;
    while (f > from && s_ident (f[-1]))
        f--;
    *len = (size_t) (fe - f);
    return f;
}

//  The first identifier of [P, END) and its length into *LEN (0: none).
static const char *
s_first_word (const char *p, const char *end, size_t *len)
{
    while (p < end && !s_ident (*p))
        p++;
    const char *e = p;
    while (e < end && s_ident (*e))
        e++;
    *len = (size_t) (e - p);
    return p;
}

//  The functions CODE defines: a name, its parameter list's parenthesis
//  and its body's braces (at the top level), read once; a call is looked
//  up here, not searched for in the whole text each time.
#define S_FUNCS 128

typedef struct {
    const char *name, *params, *body, *end;
    size_t len;
} s_func_t;

typedef struct {
    s_func_t f[S_FUNCS];
    int n;
} s_funcs_t;

static void
s_functions (const char *code, s_funcs_t *fs)
{
    fs->n = 0;
    int depth = 0;
    s_func_t *open = NULL;
    for (const char *p = code; *p; p++) {
        if (*p == '}' && depth > 0 && --depth == 0 && open) {
            open->end = p;
            open = NULL;
        }
        if (*p != '{' || depth++ != 0 || fs->n >= S_FUNCS)
            continue;
        const char *q = p;
        while (q > code && (q[-1] == ' ' || q[-1] == '\t' || q[-1] == '\n'))
            q--;
        if (q == code || q[-1] != ')')
            continue;
        int d = 0;
        const char *o = q - 1;
        for (; o > code; o--)
            if (*o == ')')
                d++;
            else if (*o == '(' && --d == 0)
                break;
        size_t len;
        const char *name = s_callee (code, o, &len);
        if (*o != '(' || !len)
            continue;
        static const char *const keywords[] = { "if", "for", "while", "switch", NULL };
        bool keyword = false;
        for (int k = 0; keywords[k]; k++)
            keyword |= strlen (keywords[k]) == len && !strncmp (keywords[k], name, len);
        if (keyword)
            continue;
        open = &fs->f[fs->n++];
        *open = (s_func_t) { .name = name, .len = len, .params = o, .body = p, .end = p };
    }
}

//  The function of FS named NAME (LEN bytes), or NULL.
static const s_func_t *
s_function (const s_funcs_t *fs, const char *name, size_t len)
{
    for (int i = 0; i < fs->n; i++)
        if (fs->f[i].len == len && !strncmp (fs->f[i].name, name, len)
            && fs->f[i].end > fs->f[i].body)
            return &fs->f[i];
    return NULL;
}

//  Whether [P, END) names input K of kf_forward's parameter IN ("in[1]")
//  or a name of S.
static bool
s_names (const s_set_t *s, const char *in, int k, const char *t, const char *p, const char *end)
{
    size_t len = in ? strlen (in) : 0, n;
    for (const char *q = p; in && q + len < end; q++) {
        if (strncmp (q, in, len) || (q > t && s_ident (q[-1])) || s_ident (q[len]))
            continue;
        const char *r = q + len;
        while (r < end && (*r == ' ' || *r == '\t' || *r == '\n'))
            r++;
        if (r >= end || *r != '[')
            continue;
        r += 1 + strspn (r + 1, " \t");
        if (*r == '0' + k && r[1 + strspn (r + 1, " \t")] == ']')
            return true;
    }
    return s_next (s, t, p, end, &n) != NULL;
}

//  The name an assignment's left side LHS..END sets: the base of an
//  element (vp of vp[i]), else its last word (v of jobs[t].v, p of *p).
static const char *
s_target (const char *lhs, const char *end, size_t *len)
{
    while (end > lhs && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\n'))
        end--;
    if (end > lhs && end[-1] == ']') {
        const char *open = memchr (lhs, '[', (size_t) (end - lhs));
        end = open ? open : end;
        while (end > lhs && !s_ident (end[-1]))
            end--;
    }
    const char *b = end;
    while (b > lhs && s_ident (b[-1]))
        b--;
    *len = (size_t) (end - b);
    return b;
}

//  The first WORD in [P, END), or NULL.
static const char *
s_within (const char *p, const char *end, const char *word)
{
    size_t len = strlen (word);
    for (; p + len <= end; p++)
        if (!strncmp (p, word, len))
            return p;
    return NULL;
}

//  Whether the occurrence at W of RHS is inside a call's arguments (a
//  load's, a function's: a value, not an address).
static bool
s_in_call (const char *rhs, const char *w)
{
    int depth = 0;
    for (const char *q = w; q > rhs; q--) {
        char c = q[-1];
        depth += c == ')';
        if (c == '(' && depth-- == 0) {
            const char *f = q - 1;
            while (f > rhs && (f[-1] == ' ' || f[-1] == '\t'))
                f--;
            if (f > rhs && s_ident (f[-1]))
                return true;
        }
    }
    return false;
}

//  Whether the right side RHS..END is an address of input K (a pointer,
//  an offset from one, a member holding one; not an element read, nor a
//  load's or a call's value), or, where ELEMENT, a plain copy of one of
//  its elements (a packed copy: vp[i] = v[j]).
static bool
s_binds (const s_set_t *s, const char *in, int k, const char *t, const char *rhs, const char *end,
         bool element)
{
    if (!s_names (s, in, k, t, rhs, end))
        return false;
    size_t len;
    const char *w = s_next (s, t, rhs, end, &len);
    //  kf_forward's own parameter: in[k].data, &in[k], in[k].shape (not).
    if (!w) {
        const char *at = s_within (rhs, end, in);
        return at && !s_within (rhs, end, "shape") && !s_within (rhs, end, "rank")
               && !s_in_call (rhs, at);
    }
    for (; w; w = s_next (s, t, w + len, end, &len)) {
        if (s_in_call (rhs, w))
            continue;
        const char *after = w + len;
        while (after < end && (*after == ' ' || *after == '\t'))
            after++;
        const char *before = w;
        while (before > rhs && (before[-1] == ' ' || before[-1] == '\t'))
            before--;
        if (after >= end || *after != '[' || (before > rhs && before[-1] == '&'))
            return true;
        if (element && !memchr (after, '*', (size_t) (end - after))
            && !memchr (after, '+', strcspn (after, "]")))
            return true;
    }
    return false;
}

//  The name the pointer NAME (LEN bytes) is set from where CODE declares
//  or assigns it from an offset (dst = vp + p * 32): vp, into S.
static bool
s_put_source (s_set_t *s, const char *code, const char *at, size_t len)
{
    char name[KF_ACC_NAME];
    if (!len || len >= sizeof name)
        return false;
    snprintf (name, sizeof name, "%.*s", (int) len, at);
    for (const char *p = code; (p = strstr (p, name)); p += len) {
        if ((p > code && s_ident (p[-1])) || s_ident (p[len]))
            continue;
        const char *q = p + len;
        while (*q == ' ' || *q == '\t')
            q++;
        if (*q != '=' || q[1] == '=')
            continue;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '&' || *q == '(')
            q++;
        const char *e = q;
        while (s_ident (*e))
            e++;
        return e > q && s_put (s, q, (size_t) (e - q));
    }
    return false;
}

//  Calls FN (CTX, LHS, RHS, END) for each plain assignment of CODE (one
//  per declarator: x = .., *u = ..; not +=), the name set from LHS..RHS-1
//  and the value RHS..END.
typedef void (*s_assign_fn) (void *ctx, const char *code, const char *lhs, const char *rhs,
                             const char *end);

static void
s_assignments (const char *code, s_assign_fn fn, void *ctx)
{
    for (const char *st = code; *st;) {
        const char *end = st + strcspn (st, ";{}");
        int depth = 0;
        const char *part = st, *eq = NULL;
        for (const char *p = st; p <= end; p++) {
            if (p == end || (*p == ',' && depth == 0)) {
                if (eq && !strchr ("+-*/%&|^", eq[-1]))
                    fn (ctx, code, part, eq + 1, p);
                part = p + 1;
                eq = NULL;
                continue;
            }
            depth += *p == '(' || *p == '[';
            depth -= *p == ')' || *p == ']';
            if (*p == '=' && depth == 0 && !eq && p[1] != '=' && p > st && !strchr ("=!<>", p[-1]))
                eq = p;
        }
        st = end + (*end != 0);
    }
}

typedef struct {
    s_set_t *s;
    const char *in;
    int k;
    bool grew;
} s_assign_t;

//  An assignment that binds its name to the input (s_binds).
static void
s_bind_one (void *ctx, const char *code, const char *lhs, const char *rhs, const char *end)
{
    s_assign_t *a = ctx;
    size_t len;
    const char *name = s_target (lhs, rhs - 1, &len);
    if (s_binds (a->s, a->in, a->k, code, rhs, end, name[len] == '['))
        a->grew |= s_put (a->s, name, len);
}

//  An assignment whose value names the input: a value loaded from it.
static void
s_load_one (void *ctx, const char *code, const char *lhs, const char *rhs, const char *end)
{
    s_assign_t *a = ctx;
    size_t len;
    const char *name = s_target (lhs, rhs - 1, &len);
    if (s_names (a->s, NULL, 0, code, rhs, end))
        s_put (a->s, name, len);
}

//  Names bound to input K of kf_forward's parameter IN, through CODE's
//  assignments, vector copies and calls, into S.
static void
s_bind (s_set_t *s, const char *code, const s_funcs_t *fs, const char *in, int k)
{
    for (int pass = 0, grew = 1; grew && pass < 6; pass++) {
        grew = 0;
        s_assign_t a = { s, in, k, 0 };
        s_assignments (code, s_bind_one, &a);
        grew |= a.grew;
        //  A vector copy (store (dst, loadu (src))) or memcpy (dst, src, n)
        //  from a bound name binds dst; a call's argument naming one binds
        //  the parameter in its place.
        for (const char *p = code; (p = strchr (p, '(')); p++) {
            size_t flen;
            const char *f = s_callee (code, p, &flen), *fe = f + flen;
            if (!flen)
                continue;
            const char *close = kf_descriptor_close (p);
            if (!close)
                break;
            const char *a0 = p + 1, *c0 = a0;
            int depth = 0;
            while (c0 < close && !(*c0 == ',' && depth == 0)) {
                depth += *c0 == '(' || *c0 == '[';
                depth -= *c0 == ')' || *c0 == ']';
                c0++;
            }
            bool copy = (flen > 6 && s_within (f, fe, "store"))
                        || (flen == 6 && !strncmp (f, "memcpy", 6));
            if (copy && c0 < close && s_names (s, in, k, code, c0, close)) {
                //  The destination's base: vp of vp + i * 16.
                size_t blen;
                const char *b = s_first_word (a0, c0, &blen);
                grew |= s_put (s, b, blen);
                //  ... and the buffer it points into (vp of dst = vp + p * 32).
                grew |= s_put_source (s, code, b, blen);
                continue;
            }
            const s_func_t *fn = s_function (fs, f, flen);
            if (!fn)
                continue;
            const char *def = fn->body, *popen = fn->params;
            const char *arg = p + 1, *param = popen + 1;
            while (arg < close && param < def) {
                const char *ae = arg, *pe = param;
                for (depth = 0; ae < close && !(*ae == ',' && depth == 0); ae++) {
                    depth += *ae == '(' || *ae == '[';
                    depth -= *ae == ')' || *ae == ']';
                }
                while (pe < def && *pe != ',' && *pe != ')')
                    pe++;
                size_t len;
                const char *name = s_target (param, pe, &len);
                if (s_binds (s, in, k, code, arg, ae, false))
                    grew |= s_put (s, name, len);
                //  A parameter a copy fills (pack_v (v, R, N, buf)) binds the
                //  argument that names a buffer.
                else if (s_has (s, name, len)) {
                    size_t alen;
                    const char *an = s_first_word (arg, ae, &alen);
                    if (alen && an + alen + strspn (an + alen, " \t\n") == ae)
                        grew |= s_put (s, an, alen);
                }
                if (*pe != ',')
                    break;
                arg = ae + 1;
                param = pe + 1;
            }
        }
    }
}

//  Whether the name at W (LEN bytes) is only handed on: a whole right
//  side (.v = v) or an element of an aggregate ({ x, u, v }).
static bool
s_handed_on (const char *t, const char *w, size_t len)
{
    const char *a = w + len;
    while (*a == ' ' || *a == '\t' || *a == '\n')
        a++;
    if (!strchr (",;}", *a))
        return false;
    const char *b = w;
    while (b > t && (b[-1] == ' ' || b[-1] == '\t' || b[-1] == '\n'))
        b--;
    if (b == t || !strchr ("=,{", b[-1]))
        return false;
    int depth = 0;
    for (const char *q = w; q > t; q--) {
        char c = q[-1];
        if (c == ';')
            return true;
        depth += c == ')' || c == '}';
        if ((c == '(' || c == '{') && depth-- == 0)
            return c == '{';
    }
    return true;
}

//  Whether [P, END) uses a name of S beyond handing it on, or calls a
//  function of CODE whose body does (CALLS levels deep).
static bool
s_uses (const s_set_t *s, const char *in, int k, const char *code, const s_funcs_t *fs,
        const char *p, const char *end, int calls)
{
    size_t len;
    for (const char *w = p; (w = s_next (s, code, w, end, &len)); w += len)
        if (!s_handed_on (code, w, len))
            return true;
    if (s_names (&(s_set_t) { .n = 0 }, in, k, code, p, end))
        return true;
    for (const char *q = p; calls > 0 && (q = memchr (q, '(', (size_t) (end - q))); q++) {
        size_t flen;
        const char *f = s_callee (p, q, &flen);
        const s_func_t *fn = flen ? s_function (fs, f, flen) : NULL;
        if (fn && s_uses (s, in, k, code, fs, fn->body, fn->end, calls - 1))
            return true;
    }
    return false;
}

//  The arguments of the call whose parenthesis opens at OPEN, up to END:
//  the starts of the first three into ARG (ARG[N] just past the last).
static int
s_args (const char *open, const char *end, const char *arg[4])
{
    int n = 0, depth = 0;
    arg[n++] = open + 1;
    for (const char *c = open + 1; c < end && n < 4; c++) {
        depth += *c == '(' || *c == '[';
        if ((*c == ')' || *c == ']') && depth-- == 0) {
            arg[n] = c + 1;
            return n;
        }
        if (*c == ',' && depth == 0)
            arg[n++] = c + 1;
    }
    return n - 1;
}

//  Whether a product's accumulation takes a factor bound to input 2 or
//  loaded from it (b of b = _mm512_load_ps (pv + ..)): `acc += f * g` or
//  `acc = fmadd (f, g, acc)`, neither factor the accumulator (a Horner
//  step). A bias added to the output's accumulators, then scaled by a
//  constant or an activation's polynomial, is no such factor.
static bool
s_factor (const s_set_t *s, const char *code)
{
    s_set_t loaded = *s;
    s_assign_t a = { &loaded, NULL, 0, false };
    s_assignments (code, s_load_one, &a);
    for (const char *st = code; *st;) {
        const char *end = st + strcspn (st, ";{}");
        const char *plus = s_within (st, end, "+="), *fma = s_within (st, end, "fmadd");
        const char *eq = fma ? memchr (st, '=', (size_t) (fma - st)) : NULL;
        size_t len;
        const char *name = plus ? s_target (st, plus, &len) : eq ? s_target (st, eq, &len) : NULL;
        char acc[KF_ACC_NAME] = "";
        if (name && len < sizeof acc)
            snprintf (acc, sizeof acc, "%.*s", (int) len, name);
        s_set_t self = { .n = 0 };
        s_put (&self, acc, strlen (acc));
        const char *arg[4];
        bool sum = *acc && plus && memchr (plus, '*', (size_t) (end - plus))
                   && !s_names (&self, NULL, 0, code, plus + 2, end)
                   && s_names (&loaded, NULL, 0, code, plus + 2, end);
        bool madd = *acc && !plus && eq && strchr (fma, '(')
                    && s_args (strchr (fma, '('), end, arg) == 3
                    && s_names (&self, NULL, 0, code, arg[2], arg[3])
                    && !s_names (&self, NULL, 0, code, arg[0], arg[2])
                    && s_names (&loaded, NULL, 0, code, arg[0], arg[2]);
        if (sum || madd)
            return true;
        st = end + (*end != 0);
    }
    return false;
}

bool
kf_descriptor_chain (const char *code, const kf_descriptor_acc_t *acc, char *snip, size_t size)
{
    bool product = acc && acc->tile > 0;
    for (int i = 0; acc && !product && i < acc->n; i++)
        product = acc->madd[i] && *acc->ops[i][0] && *acc->ops[i][1];
    const char *fw = strstr (code, "kf_forward");
    if (!product || !fw || strlen (code) > S_CODE_MAX)
        return false;
    //  kf_forward's first parameter: the last word before its first comma.
    const char *open = strchr (fw, '('), *comma = open ? strchr (open, ',') : NULL;
    if (!comma)
        return false;
    size_t len;
    const char *in_at = s_target (open + 1, comma, &len);
    char in[KF_ACC_NAME];
    if (!len || len >= sizeof in)
        return false;
    snprintf (in, sizeof in, "%.*s", (int) len, in_at);
    s_set_t *sets = calloc (2, sizeof *sets);
    s_funcs_t *fs = calloc (1, sizeof *fs);
    if (!sets || !fs) {
        free (sets);
        free (fs);
        return false;
    }
    s_functions (code, fs);
    s_bind (&sets[0], code, fs, in, 1);
    s_bind (&sets[1], code, fs, in, 2);
    bool chained = false;
    int loops = 0;
    if (sets[1].n > 0 && s_factor (&sets[1], code))
        for (const char *p = code; !chained && loops < S_LOOPS && (p = strstr (p, "for"));
             p += 3) {
            if ((p > code && s_ident (p[-1])) || s_ident (p[3]))
                continue;
            const char *h = p + 3;
            while (*h == ' ' || *h == '\t' || *h == '\n')
                h++;
            const char *hclose = *h == '(' ? kf_descriptor_close (h) : NULL;
            if (!hclose)
                continue;
            const char *b = hclose + 1;
            while (*b == ' ' || *b == '\t' || *b == '\n')
                b++;
            const char *bend = *b == '{' ? kf_descriptor_close (b) : b + strcspn (b, ";");
            if (!bend)
                continue;
            loops++;
            chained = s_uses (&sets[0], in, 1, code, fs, b, bend, S_CALLS)
                      && s_uses (&sets[1], in, 2, code, fs, b, bend, S_CALLS);
            if (chained && snip && size)
                snprintf (snip, size, "%.*s", (int) (hclose + 1 - p < 60 ? hclose + 1 - p : 60), p);
        }
    free (fs);
    free (sets);
    return chained;
}
