/*  kf_prompt_does.c - what a kernel already does, for the ideas handed to
 *  its children (kf_prompt_class.h: kf_prompt_idea_feature,
 *  kf_prompt_source_does).
 *
 *  The descriptors (analysis/kf_descriptor.c) place a kernel on the grid
 *  by a few canonical forms; a planner that asks "does this kernel unroll,
 *  approximate, block for registers?" needs the forms a model writes too.
 *  Round 6 of issue 15 handed ideas to parents that already did them: a
 *  kernel unrolled by hand (four loads at +0, +16, +32, +48 and four
 *  accumulators), a polynomial whose coefficients were named constants
 *  (p = _mm512_fmadd_ps (p, t, c3)), 2^k built by _mm512_slli_epi32 (k,
 *  23), a micro-kernel of accumulators c00 ... c13 were all read as not
 *  doing it. The extra forms here are read from the code with comments and
 *  strings blanked, and decide only which parent an idea starts from: the
 *  grid's coordinates stay the descriptors'.
 */
#include "kf_prompt_class.h"
#include "kf_descriptor.h"
#include "kf_descriptor_text.h"
#include "kf_text.h"
#include <ctype.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kf_idea_feature_t
kf_prompt_idea_feature (const char *idea)
{
    static const struct { const char *word; kf_idea_feature_t f; } map[] = {
        { "by threads", KF_IDEA_THREADS }, { "split across threads", KF_IDEA_THREADS },
        { "by non-temporal", KF_IDEA_STREAM }, { "streaming loads", KF_IDEA_STREAM },
        { "by explicit SIMD intrinsics", KF_IDEA_SIMD },
        { "by unrolling", KF_IDEA_UNROLL },
        { "by a branch-free approximation", KF_IDEA_APPROX },
        { "micro-kernel", KF_IDEA_MICRO },
        { "by cache blocking", KF_IDEA_BLOCK }, { "by blocking several rows", KF_IDEA_BLOCK },
        { "by packing", KF_IDEA_PACK },
        { "by a single fused pass", KF_IDEA_FUSED_ROW },
        { "by several independent accumulators", KF_IDEA_ACCUMULATORS },
    };
    for (size_t i = 0; idea && i < sizeof map / sizeof map[0]; i++)
        if (strstr (idea, map[i].word))
            return map[i].f;
    return KF_IDEA_OTHER;
}

//  ---------------------------------------------------------------------
//  Accumulators and polynomial steps, statement by statement

#define S_MAX_ACC 64

typedef struct {
    char names[S_MAX_ACC][48];   /* distinct accumulators */
    int n;
    int same;                    /* the most of them that differ only by a number
                                    (acc0, acc1; s[0], s[1]): several of one kind */
    int fma;                     /* of them, updated by a multiply-add */
    int tile;                    /* of them, a 2-D element or named like c01 */
    int horner;                  /* steps p = p * t + c, p = fma (p, t, c) */
} s_acc_t;

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

//  NAME without white space (a[i] [j] and a[i][j] alike) into BUF.
static void
s_squeeze (const char *name, char *buf, size_t size)
{
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < size; p++)
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

static void
s_add_acc (s_acc_t *a, const char *raw, bool fma)
{
    char name[48];
    s_squeeze (raw, name, sizeof name);
    for (int i = 0; i < a->n; i++)
        if (!strcmp (a->names[i], name))
            return;
    if (a->n >= S_MAX_ACC)
        return;
    snprintf (a->names[a->n++], sizeof a->names[0], "%s", name);
    a->fma += fma;
    size_t stem = s_stem (name);
    int kin = 0;
    for (int i = 0; stem < strlen (name) && i < a->n; i++)
        kin += s_stem (a->names[i]) == stem && !strncmp (a->names[i], name, stem);
    if (kin > a->same)
        a->same = kin;
    //  A register tile: acc[i][j], or names numbered by row and column.
    size_t n = strlen (name);
    bool two_d = strchr (name, '[') && strchr (strchr (name, '[') + 1, '[');
    bool numbered = n >= 3 && isdigit ((unsigned char) name[n - 1])
                    && isdigit ((unsigned char) name[n - 2]) && isalpha ((unsigned char) name[0]);
    a->tile += fma && (two_d || numbered);
}

//  One statement: "X = f (..)" with f a multiply-add or an addition, or
//  "X += ..", or "X = X * Y + Z".
static void
s_statement (const char *st, const regex_t *call, const regex_t *plus, const regex_t *mul,
             s_acc_t *a)
{
    regmatch_t m[4];
    char dest[48], fn[48], arg0[64], arg1[64], arg2[64];
    if (regexec (call, st, 4, m, 0) == 0) {
        snprintf (dest, sizeof dest, "%.*s", (int) (m[1].rm_eo - m[1].rm_so), st + m[1].rm_so);
        snprintf (fn, sizeof fn, "%.*s", (int) (m[3].rm_eo - m[3].rm_so), st + m[3].rm_so);
        const char *open = st + m[0].rm_eo;
        char d[48];
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
            s_add_acc (a, dest, true);
        else if (is_fma && has0 && has2 && !strcmp (a0, d))
            a->horner++;
        else if (strstr (fn, "_add_") && has1 && (!strcmp (a0, d) || !strcmp (a1, d)))
            s_add_acc (a, dest, false);
        return;
    }
    if (regexec (plus, st, 2, m, 0) == 0) {
        snprintf (dest, sizeof dest, "%.*s", (int) (m[1].rm_eo - m[1].rm_so), st + m[1].rm_so);
        s_add_acc (a, dest, strchr (st + m[0].rm_eo, '*') != NULL);
        return;
    }
    if (regexec (mul, st, 2, m, 0) == 0)
        a->horner++;
}

static void
s_scan (const char *code, s_acc_t *a)
{
    memset (a, 0, sizeof *a);
    regex_t call, plus, mul;
    const char *id = "([[:alpha:]_][[:alnum:]_]*([[:space:]]*\\[[^];]*\\])*)";
    char pat[512];
    snprintf (pat, sizeof pat, "%s[[:space:]]*=[[:space:]]*([[:alnum:]_]+)[[:space:]]*\\(", id);
    int rc = regcomp (&call, pat, REG_EXTENDED);
    snprintf (pat, sizeof pat, "%s[[:space:]]*\\+=", id);
    rc |= regcomp (&plus, pat, REG_EXTENDED);
    //  p = p * t + c (the descriptors' rule wants a literal c).
    rc |= regcomp (&mul, "\\b([[:alpha:]_][[:alnum:]_]*)[[:space:]]*=[[:space:]]*\\1[[:space:]]*"
                         "\\*[[:space:]]*[[:alnum:]_.]+[[:space:]]*[-+][[:space:]]*[[:alnum:]_.]+"
                         "[[:space:]]*$", REG_EXTENDED);
    if (rc == 0) {
        size_t len = strlen (code);
        char *st = malloc (len + 1);
        for (const char *p = code; st && *p;) {
            size_t n = strcspn (p, ";{}");
            memcpy (st, p, n);
            st[n] = 0;
            s_statement (st, &call, &plus, &mul, a);
            p += n + (p[n] != 0);
        }
        free (st);
    }
    regfree (&call);
    regfree (&plus);
    regfree (&mul);
}

//  ---------------------------------------------------------------------
//  Features

unsigned
kf_prompt_source_features (const char *source, const char *language)
{
    if (!source || !*source)
        return 0;
    const char *lang = language && *language ? language : "c";
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL;
    //  The descriptors read the code with comments and strings blanked.
    if (kf_descriptor_classify (source, strlen (source), lang, &c, &why) != 0)
        why = NULL;
    const char *w = why ? why : "";
    char *code = strdup (source);
    if (code) {
        kf_descriptor_strip_text (code, false);
        kf_descriptor_blank_if0 (code);
    }
    const char *t = code ? code : source;
    s_acc_t acc;
    s_scan (t, &acc);
    bool host = !strcmp (lang, "c");
    unsigned f = 0;
#define S_SET(feature, cond) (f |= (cond) ? 1u << (feature) : 0)
    S_SET (KF_IDEA_THREADS, c.sync >= 1);
    S_SET (KF_IDEA_SIMD, strstr (w, "SIMD intrinsics") || strstr (w, "vector extension"));
    S_SET (KF_IDEA_STREAM,
           kf_text_matches (t, "\\b_mm(256|512)?_stream_(ps|pd|si(32|64|128|256|512))\\b|"
                               "__builtin_nontemporal_store|\\b__stcs\\b|\\bst\\.global\\.cs\\b"));
    //  Several vectors per iteration: a pragma, two accumulators or more,
    //  or a load at a constant offset of whole vectors from the index.
    S_SET (KF_IDEA_UNROLL,
           kf_text_matches (t, "#[[:space:]]*pragma[[:space:]]+(GCC[[:space:]]+)?unroll")
           || kf_text_matches (t, "\\b[[:alpha:]_]*acc[[:alpha:]_]*1\\b[^;]*=[^;]*;")
           || acc.same >= 2 || strstr (w, "per-lane accumulator") || strstr (w, "register tile")
           || kf_text_matches (t, "_mm(256|512)?_loadu?_(ps|pd|si(128|256|512))[[:space:]]*"
                                  "\\([^;]*\\+[[:space:]]*(4|8|16|24|32|48|64|96|128)"
                                  "[[:space:]]*[])]"));
    S_SET (KF_IDEA_APPROX, c.algo >= 2 || acc.horner >= 3
                           || kf_text_matches (t, "_slli_epi32[[:space:]]*\\([^;]*,[[:space:]]*"
                                                  "23[[:space:]]*\\)"));
    //  On the host, blocking for a cache, not a register tile alone (the
    //  descriptors' level 2 counts both).
    S_SET (KF_IDEA_BLOCK, host ? strstr (w, "(cache blocking)") || strstr (w, "cache-level")
                                     || strstr (w, "inside cache blocks")
                               : c.mem >= 2);
    S_SET (KF_IDEA_MICRO, strstr (w, "register tile") || acc.tile >= 4);
    S_SET (KF_IDEA_PACK, strstr (w, "packed")
                         || kf_text_matches (t, "\\b[[:alnum:]_]*[Pp]ack[[:alnum:]_]*[[:space:]]*"
                                                "\\[[^];]*\\][[:space:]]*=[^=]"));
    S_SET (KF_IDEA_FUSED_ROW, c.algo >= 1);
    S_SET (KF_IDEA_ACCUMULATORS, strstr (w, "per-lane accumulator") || acc.same >= 2);
#undef S_SET
    free (code);
    free (why);
    return f;
}

bool
kf_prompt_source_does (const char *source, const char *language, kf_idea_feature_t f)
{
    return f != KF_IDEA_OTHER && (kf_prompt_source_features (source, language) >> f) & 1u;
}
