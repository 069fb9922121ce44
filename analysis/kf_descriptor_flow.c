/*  kf_descriptor_flow.c - values followed through each function
 *  (kf_descriptor_flow.h): a product's accumulators to their store
 *  through an activation, a magnitude through exp(-2|x|) back into a sum.
 *
 *  The code is read as the accumulator reader reads it, one statement at
 *  a time (split at ; { }), and each statement as a store, or as
 *  assignments (a declaration's list split at its commas). What a name
 *  follows from is kept from one statement to the next within a function
 *  and forgotten at the next function: the same short names (s, v, z)
 *  are reused across a file's functions, and an epilogue pass in a
 *  function of its own loads its values back from the output.
 */
#include "kf_descriptor_flow.h"
#include "kf_descriptor_regex.h"
#include "kf_descriptor_text.h"

#include <ctype.h>
#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_NAMES 64
//  Levels of calls followed when asking whether a call applies a
//  function of the value (gelu16 -> exp16 -> scalef).
#define S_CALLS 3

enum { F_FOLLOWS = 1, F_ACC = 2, F_ACT = 4, F_MAG = 8, F_EXPO = 16 };

typedef struct {
    char name[S_NAMES][KF_ACC_NAME];
    unsigned char flags[S_NAMES];
    int n;
} s_names_t;

//  Activation: a function of the value, as a call or an intrinsic, or a
//  comparison's `?` (a ReLU written out). Store intrinsics. A magnitude.
//  The factor -2 of exp(-2|x|), in base e or (-2 log2 e) base 2; an
//  exponential by a name that says so, or that base-2 factor.
enum { R_ACT, R_STORE, R_ABS, R_TWO, R_EXP, R_COUNT };
static const char *const s_patterns[R_COUNT] = {
    "\\b([[:alnum:]_]+::)?(__|native_|half_)?(exp|exp2|expm1|log|log1p|log2|tanh|erf|erfc|sqrt|"
    "rsqrt|pow|fmax|fmin|max|min|sigmoid)f?[[:space:]]*\\("
    "|\\b_mm(256|512)?_(mask_|maskz_)?(max|min|div|rcp14|rcp|rsqrt14|rsqrt|scalef|exp|log|tanh|"
    "erf|sqrt)_p[sd]\\b|[^-<>][<>]=?[^<>=][^;?]*\\?",
    "\\b(_mm(256|512)?_(mask_)?(storeu?|stream|store_s[sd])_[[:alnum:]_]*|vst1q?_[[:alnum:]_]+"
    "|__builtin_nontemporal_store)[[:space:]]*\\(",
    "^[[:space:]]*(([[:alnum:]_]+::)?(__builtin_)?fabsf?|([[:alnum:]_]+::)?abs"
    "|_mm(256|512)?_(abs|and|andnot)_p[sd])[[:space:]]*\\(",
    "(^|[^0-9.eE])-[[:space:]]*2(\\.0*)?f?([^0-9.eE]|$)|-2\\.885390",
    "-2\\.885390|[[:alnum:]_]*exp[[:alnum:]_]*[[:space:]]*\\(",
};
static regex_t s_re[R_COUNT];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static bool s_ok;

static void
s_compile (void)
{
    s_ok = kf_descriptor_regcomp (s_re, s_patterns, R_COUNT, "kf_descriptor_flow");
}

static bool
s_ident (char c)
{
    return isalnum ((unsigned char) c) || c == '_';
}

static int
s_find (const s_names_t *s, const char *name, size_t len)
{
    for (int i = 0; i < s->n; i++)
        if (strlen (s->name[i]) == len && !strncmp (s->name[i], name, len))
            return i;
    return -1;
}

static int
s_add (s_names_t *s, const char *name, size_t len)
{
    int i = s_find (s, name, len);
    if (i >= 0 || s->n >= S_NAMES || len >= KF_ACC_NAME)
        return i;
    snprintf (s->name[s->n], KF_ACC_NAME, "%.*s", (int) len, name);
    s->flags[s->n] = 0;
    return s->n++;
}

//  The first name in TEXT (not a member after . or ->, not a called
//  function) whose flags have one of FLAGS, into NAME; false when none.
static bool
s_first (const s_names_t *s, const char *text, int flags, char *name, size_t size)
{
    for (const char *p = text; *p; p++) {
        if (!(isalpha ((unsigned char) *p) || *p == '_') || (p > text && s_ident (p[-1])))
            continue;
        const char *e = p;
        while (s_ident (*e))
            e++;
        const char *q = e;
        while (isspace ((unsigned char) *q))
            q++;
        bool member = p > text && (p[-1] == '.' || (p[-1] == '>' && p - 1 > text && p[-2] == '-'));
        int i = member || *q == '(' ? -1 : s_find (s, p, (size_t) (e - p));
        if (i >= 0 && (s->flags[i] & flags)) {
            snprintf (name, size, "%s", s->name[i]);
            return true;
        }
        p = e - 1;
    }
    return false;
}

//  Whether TEXT applies a function of a value: itself, or through a call
//  of a function of the file that does.
static bool
s_activation (const char *code, const char *text, int calls)
{
    return regexec (&s_re[R_ACT], text, 0, NULL, 0) == 0
           || kf_descriptor_any_callee (code, text, calls, s_activation);
}

//  A factor of a product's multiply-add read from memory.
static bool
s_load (const char *op)
{
    return strchr (op, '[') || strstr (op, "load") || strstr (op, "set1") || strstr (op, "broadcast")
           || op[0] == '*' || strstr (op, "__ldg");
}

//  The accumulators of a product, by base name (c0 of c0[r]), into
//  BASES (the names of S, flagged as following from themselves).
static void
s_products (s_names_t *bases, const char *code, const kf_descriptor_acc_t *acc)
{
    bases->n = 0;
    bool tile = kf_descriptor_acc_is_tile (acc);
    for (int i = 0; i < acc->n; i++) {
        const char *f0 = acc->ops[i][0], *f1 = acc->ops[i][1];
        if (!acc->madd[i] || !*f0 || !*f1 || !strcmp (f0, f1) || !(tile || (s_load (f0) && s_load (f1))))
            continue;
        bool vec;
        size_t len = strcspn (acc->names[i], "[");
        if (acc->names[i][len] && kf_descriptor_acc_local_array (code, acc->names[i], &vec) == 0)
            continue;       //  a sum kept in memory, not in a register
        int at = s_add (bases, acc->names[i], len);
        if (at >= 0)
            bases->flags[at] = F_ACC | F_FOLLOWS;
    }
}

//  A store of VALUE: an epilogue applied before it when VALUE is
//  activated, or follows from an accumulator through an activation here.
static void
s_store (const char *code, const char *value, const s_names_t *s, kf_descriptor_flow_t *out)
{
    char name[KF_ACC_NAME];
    if (s_first (s, value, F_ACT, name, sizeof name)
        || (s_first (s, value, F_FOLLOWS, name, sizeof name) && s_activation (code, value, S_CALLS)))
        if (out->epilogue++ == 0)
            snprintf (out->epilogue_snip, sizeof out->epilogue_snip, "%s", name);
}

//  The value a store intrinsic whose arguments open at OPEN writes: its
//  last argument, or the first of __builtin_nontemporal_store. Into BUF.
static void
s_store_value (const char *open, bool first, char *buf, size_t size)
{
    int depth = 0;
    const char *start = open + 1, *p = open;
    for (; *p; p++) {
        depth += *p == '(' || *p == '[';
        depth -= *p == ')' || *p == ']';
        if (depth == 0 && *p == ')')
            break;
        if (depth == 1 && *p == ',') {
            if (first)
                break;
            start = p + 1;
        }
    }
    snprintf (buf, size, "%.*s", (int) (p - start), start);
}

//  Whether statement ST adds the magnitude NAME into a sum: a + .., a -
//  .., .. + a, or a as an argument of an add, subtract or FMA intrinsic.
static bool
s_adds (const char *st, const char *name)
{
    char pattern[512];
    snprintf (pattern, sizeof pattern,
              "(^|[^[:alnum:]_.>])%s[[:space:]]*[-+][^-+=>]|\\+[[:space:]]*%s([^[:alnum:]_]|$)"
              "|_(add|sub|fmadd|fmsub|fnmadd|fnmsub)_p[sd][[:space:]]*\\(([^;]*[(,])?[[:space:]]*%s"
              "[[:space:]]*[,)]", name, name, name);
    regex_t re;
    if (regcomp (&re, pattern, REG_EXTENDED) != 0)
        return false;
    bool yes = regexec (&re, st, 0, NULL, 0) == 0;
    regfree (&re);
    return yes;
}

//  Whether an assignment to NAME (LEN bytes) with right side RHS adds
//  into NAME: `+=` or `-=` (COMPOUND, OP the character before '='), or
//  NAME itself among RHS's words (`s = _mm512_add_ps (s, v)`, `s = s + v`).
static bool
s_folds (const char *rhs, const char *name, size_t len, bool compound, char op)
{
    if (compound)
        return op == '+' || op == '-';
    for (const char *p = rhs; *p; p++)
        if (!strncmp (p, name, len) && (p == rhs || !s_ident (p[-1])) && !s_ident (p[len]))
            return strchr (rhs, '+') || strstr (rhs, "_add_");
    return false;
}

//  One assignment PART (LHS op RHS, op at EQ, COMPOUND for += and the
//  like): a store to memory, or what the name assigned follows from.
static void
s_assignment (const char *code, const char *part, const char *eq, bool compound, s_names_t *s,
              kf_descriptor_flow_t *out)
{
    const char *lhs_end = eq - compound, *rhs = eq + 1;
    const char *open = memchr (part, '[', (size_t) (lhs_end - part));
    const char *l = part;
    while (l < lhs_end && isspace ((unsigned char) *l))
        l++;
    //  The name assigned: the one before the first subscript, after a *,
    //  or the last word of a declaration.
    const char *end = open ? open : lhs_end;
    while (end > part && !s_ident (end[-1]))
        end--;
    const char *name = end;
    while (name > part && s_ident (name[-1]))
        name--;
    if (name == end)
        return;
    if (open || *l == '*') {
        char base[KF_ACC_NAME];
        bool vec;
        snprintf (base, sizeof base, "%.*s", (int) (end - name), name);
        if (kf_descriptor_acc_local_array (code, base, &vec) == 0) {
            s_store (code, rhs, s, out);
            return;
        }
    }
    char buf[KF_ACC_NAME];
    bool follows = s_first (s, rhs, F_FOLLOWS, buf, sizeof buf);
    bool act = s_first (s, rhs, F_ACT, buf, sizeof buf) || (follows && s_activation (code, rhs, S_CALLS));
    bool mag = !compound && regexec (&s_re[R_ABS], rhs, 0, NULL, 0) == 0;
    unsigned char now = (unsigned char) ((follows ? F_FOLLOWS : 0) | (act ? F_ACT : 0) | (mag ? F_MAG : 0));
    //  Round 46: a function of the accumulators folded into a sum of its
    //  own (`rs[r] = _mm512_add_ps (rs[r], tanh16 (_mm512_mul_ps (c00, s)))`,
    //  rows of tanh(x @ w) summed to one value each) is an epilogue applied
    //  in registers whose results are never stored one by one.
    if (act && follows && s_folds (rhs, name, (size_t) (end - name), compound, eq[-1])
        && out->epilogue++ == 0)
        snprintf (out->epilogue_snip, sizeof out->epilogue_snip, "%.*s", (int) (end - name),
                  name);
    //  Only names that follow from something are kept (loop counters are not).
    int at = s_find (s, name, (size_t) (end - name));
    if (at < 0 && now)
        at = s_add (s, name, (size_t) (end - name));
    if (at < 0)
        return;
    //  An accumulator follows from itself whatever it is set to (zero,
    //  or partial sums loaded back before the product loop).
    unsigned char kept = (unsigned char) (s->flags[at] & F_ACC ? F_ACC | F_FOLLOWS : 0);
    s->flags[at] = (unsigned char) (compound ? s->flags[at] | now : kept | now);
}

//  One statement ST: a store intrinsic, or assignments; then the log-cosh
//  identity's two steps on the whole statement.
static void
s_statement (const char *code, const char *st, s_names_t *s, kf_descriptor_flow_t *out)
{
    regmatch_t m[1];
    if (regexec (&s_re[R_STORE], st, 1, m, 0) == 0) {
        char value[512];
        s_store_value (st + m[0].rm_eo - 1, strstr (st + m[0].rm_so, "nontemporal") != NULL, value,
                       sizeof value);
        s_store (code, value, s, out);
    }
    else {
        //  The parts between top-level commas, each an assignment or not.
        int depth = 0;
        const char *part = st, *eq = NULL;
        bool compound = false;
        for (const char *p = st;; p++) {
            if (*p == 0 || (*p == ',' && depth == 0)) {
                if (eq) {
                    char *one = strndup (part, (size_t) (p - part));
                    if (one)
                        s_assignment (code, one, one + (eq - part), compound, s, out);
                    free (one);
                }
                if (*p == 0)
                    break;
                part = p + 1;
                eq = NULL;
                continue;
            }
            depth += *p == '(' || *p == '[';
            depth -= *p == ')' || *p == ']';
            if (*p == '=' && depth == 0 && !eq && p[1] != '=' && p > st && !strchr ("=!<>", p[-1])) {
                eq = p;
                compound = strchr ("+-*/%&|^", p[-1]) != NULL;
            }
        }
    }
    //  exp(-2|x|): a magnitude beside the factor -2 and an exponential.
    char name[KF_ACC_NAME];
    bool times = strchr (st, '*') || strstr (st, "_mul_");
    int mag = times && s_first (s, st, F_MAG, name, sizeof name) ? s_find (s, name, strlen (name)) : -1;
    if (mag >= 0 && regexec (&s_re[R_TWO], st, 0, NULL, 0) == 0 && regexec (&s_re[R_EXP], st, 0, NULL, 0) == 0)
        s->flags[mag] |= F_EXPO;
    //  ... and the magnitude added back (this statement or a later one).
    for (int i = 0; i < s->n; i++)
        if ((s->flags[i] & F_EXPO) && s_adds (st, s->name[i])) {
            if (out->logcosh++ == 0)
                snprintf (out->logcosh_snip, sizeof out->logcosh_snip, "%s", s->name[i]);
            s->flags[i] &= (unsigned char) ~F_EXPO;
        }
}

//  Whether the text before a brace at the top level, PIECE, is a
//  function's header: a parameter list, not a keyword's condition.
static bool
s_function_header (const char *piece)
{
    while (isspace ((unsigned char) *piece))
        piece++;
    static const char *const keywords[] = { "if", "for", "while", "switch", "do", "else", NULL };
    for (int k = 0; keywords[k]; k++) {
        size_t n = strlen (keywords[k]);
        if (!strncmp (piece, keywords[k], n) && !s_ident (piece[n]))
            return false;
    }
    const char *close = strrchr (piece, ')');
    return close && strchr (piece, '(') && !close[1 + strspn (close + 1, " \t\n")];
}

//  A function's body starts after HEADER: what is known is the file's
//  product accumulators, less those a parameter of the same name hides
//  (round 52: a parameter c0, a column offset, read as another
//  function's accumulator c0, so that a mask computed from it was
//  "activated" and the first product's stores an epilogue).
static void
s_enter (s_names_t *s, const s_names_t *bases, const char *header)
{
    *s = *bases;
    const char *params = strchr (header, '(');
    for (int i = 0; params && i < s->n; i++) {
        size_t len = strlen (s->name[i]);
        for (const char *p = strstr (params, s->name[i]); p; p = strstr (p + 1, s->name[i]))
            if (!s_ident (p[-1]) && !s_ident (p[len])) {
                s->flags[i] = 0;
                break;
            }
    }
}

void
kf_descriptor_flow (const char *code, const kf_descriptor_acc_t *acc, kf_descriptor_flow_t *out)
{
    memset (out, 0, sizeof *out);
    pthread_once (&s_once, s_compile);
    //  What is known at a function's start: its product's accumulators.
    s_names_t *bases = calloc (1, sizeof *bases), *s = calloc (1, sizeof *s);
    char *st = malloc (strlen (code) + 1);
    if (s_ok && bases && s && st) {
        s_products (bases, code, acc);
        *s = *bases;
        int depth = 0;
        for (const char *p = code; *p;) {
            size_t n = strcspn (p, ";{}");
            memcpy (st, p, n);
            st[n] = 0;
            s_statement (code, st, s, out);
            //  A function's body starts: nothing follows from its caller.
            if (p[n] == '{' && depth++ == 0 && s_function_header (st))
                s_enter (s, bases, st);
            else if (p[n] == '}' && depth > 0)
                depth--;
            p += n + (p[n] != 0);
        }
    }
    free (st);
    free (s);
    free (bases);
}
