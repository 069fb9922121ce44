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
 *  grid's coordinates stay the descriptors'. The accumulators are read
 *  once, by the descriptors' own reading (analysis/kf_descriptor_acc.h),
 *  so a register tile the planner sees is one the grid sees too (round 7).
 */
#include "kf_prompt_class.h"
#include "kf_meta_guess.h"
#include "kf_descriptor_macro.h"
#include "kf_descriptor_triangle.h"
#include "kf_descriptor_chain.h"
#include "kf_descriptor.h"
#include "kf_descriptor_simd.h"
#include "kf_descriptor_acc.h"
#include "kf_descriptor_text.h"
#include "kf_json.h"
#include "kf_text.h"
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

kf_idea_feature_t
kf_prompt_idea_feature (const char *idea)
{
    static const struct { const char *word; kf_idea_feature_t f; } map[] = {
        { "by threads", KF_IDEA_THREADS }, { "split across threads", KF_IDEA_THREADS },
        { "by non-temporal", KF_IDEA_STREAM }, { "streaming loads", KF_IDEA_STREAM },
        { "by explicit SIMD intrinsics", KF_IDEA_SIMD },
        { "by unrolling", KF_IDEA_UNROLL },
        { "by a branch-free approximation", KF_IDEA_APPROX },
        //  Round 17: the outer-product order over a transposed copy,
        //  before "micro-kernel", which its text may name.
        { "by the outer-product order", KF_IDEA_OUTER },
        //  Round 23: the plain [K][N] product's loop-order idea is that
        //  order (@A[i][k] broadcast against @B's row k), and went three
        //  times to kernels that walked it already, as it was about no
        //  feature the reader knows.
        { "by the loop order that reads both operands along their rows: i-k-j",
          KF_IDEA_OUTER },
        { "micro-kernel", KF_IDEA_MICRO },
        { "by cache blocking", KF_IDEA_BLOCK }, { "by blocking several rows", KF_IDEA_BLOCK },
        { "by packing", KF_IDEA_PACK },
        { "by a single fused pass", KF_IDEA_FUSED_ROW },
        { "by several independent accumulators", KF_IDEA_ACCUMULATORS },
        { "by fusing the epilogue", KF_IDEA_EPILOGUE },
        { "by software prefetch", KF_IDEA_PREFETCH },
        { "by computing only the diagonal and one triangle", KF_IDEA_TRIANGLE },
        { "by chaining the two products", KF_IDEA_CHAIN },
    };
    for (size_t i = 0; idea && i < sizeof map / sizeof map[0]; i++)
        if (strstr (idea, map[i].word))
            return map[i].f;
    return KF_IDEA_OTHER;
}

//  ---------------------------------------------------------------------
//  The output read back

#define S_NAMES 16

static bool
s_ident (char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

//  The next whole-word NAME in T from P, before END (NULL: the end of
//  T), or NULL: bounded, as a statement's scan must not read the rest of
//  a long source for every name.
static const char *
s_word (const char *t, const char *p, const char *end, const char *name)
{
    size_t len = strlen (name);
    if (!end)
        end = p + strlen (p);
    for (const char *q = p; q + len <= end; q++)
        if (*q == *name && !strncmp (q, name, len) && (q == t || !s_ident (q[-1]))
            && !s_ident (q[len]))
            return q;
    return NULL;
}

//  The identifier that ends before AT (what lies between skipped), no
//  further back than FROM, into NAME.
static void
s_name_before (const char *from, const char *at, char name[64])
{
    while (at > from && !s_ident (at[-1]))
        at--;
    const char *b = at;
    while (b > from && s_ident (b[-1]))
        b--;
    snprintf (name, 64, "%.*s", (int) (at - b), b);
}

//  Whether the name at W, LEN long, stands for the output's data: not
//  out[0].shape or out[0].rank (a size taken from the output).
static bool
s_data (const char *w, size_t len)
{
    const char *q = w + len;
    if (*q != '[')
        return true;
    q = strchr (q, ']');
    if (!q)
        return true;
    q++;
    if (*q == '.')
        q++;
    else if (*q == '-' && q[1] == '>')
        q += 2;
    else
        return true;
    return !strncmp (q, "data", 4) && !s_ident (q[4]);
}

//  Names bound to the output: "out" (kf_forward's parameter, and a job
//  struct's field of that name), and whatever is assigned from an
//  expression that names one of them (float *o = t->out + i * n).
static int
s_output_names (const char *t, char names[S_NAMES][64])
{
    int n = 0;
    snprintf (names[n++], 64, "out");
    for (int pass = 0, grew = 1; grew && pass < 4; pass++) {
        grew = 0;
        for (const char *stmt = t; *stmt && n < S_NAMES;) {
            size_t len = strcspn (stmt, ";{}");
            const char *eq = NULL;
            for (const char *q = stmt; q < stmt + len; q++)
                if (*q == '=' && q[1] != '=' && q > stmt && !strchr ("=!<>+-*/%&|^", q[-1])) {
                    eq = q;
                    break;
                }
            bool named = false;
            for (int k = 0; eq && k < n && !named; k++)
                for (const char *w = s_word (t, eq, stmt + len, names[k]); w && !named;
                     w = s_word (t, w + 1, stmt + len, names[k]))
                    named = s_data (w, strlen (names[k]));
            if (named) {
                char name[64];
                s_name_before (stmt, eq, name);
                bool known = !*name || (*name >= '0' && *name <= '9');
                for (int k = 0; k < n && !known; k++)
                    known = !strcmp (names[k], name);
                if (!known) {
                    snprintf (names[n++], 64, "%s", name);
                    grew = 1;
                }
            }
            stmt += len + (stmt[len] != 0);
        }
    }
    return n;
}

//  Whether the occurrence of a name at P, LEN long, reads the data behind
//  it: a subscript used as a value or updated (out[i] += ...), not one
//  written (out[i] = ...), addressed (&out[i]) or a member (out[0].data);
//  or an argument of a call whose name has "load" or "gather" in it.
static bool
s_reads (const char *t, const char *p, size_t len)
{
    const char *q = p + len;
    while (*q == ' ' || *q == '\t' || *q == '\n')
        q++;
    if (*q == '[') {
        const char *b = p;
        while (b > t && (b[-1] == ' ' || b[-1] == '\t'))
            b--;
        if (b > t && b[-1] == '&')
            return false;
        int depth = 0;
        for (; *q; q++) {
            depth += *q == '[';
            depth -= *q == ']';
            if (*q == ']' && depth == 0)
                break;
        }
        if (!*q)
            return false;
        q++;
        while (*q == ' ' || *q == '\t' || *q == '\n')
            q++;
        if (*q == '.' || (*q == '-' && q[1] == '>') || *q == '[')
            return false;
        return !(*q == '=' && q[1] != '=');
    }
    //  The call whose arguments hold it.
    int depth = 0;
    for (const char *b = p; b > t; b--) {
        char c = b[-1];
        if (c == ';' || c == '{' || c == '}')
            return false;
        depth += c == ')';
        if (c == '(' && depth-- == 0) {
            char fn[64];
            s_name_before (t, b - 1, fn);
            return strstr (fn, "load") || strstr (fn, "gather");
        }
    }
    return false;
}

//  Whether code T (comments and strings blanked) reads its output back:
//  an epilogue in a pass of its own over the product, or sums kept in
//  the output itself. Round 9 handed "fuse the epilogue" to a kernel
//  whose micro-kernel stored only finished outputs.
static bool
s_reads_output (const char *t)
{
    //  The output's pointer handed to an aggregate by position ({ a, b,
    //  out[0].data, n }) lands in a field whose name this reading cannot
    //  tell, unless the field is called out: what the code reads through
    //  it is not known, so it may read the output back (round 19: a job
    //  struct's Y, read back by the epilogue pass, was "written once").
    if (kf_text_matches (t, "=[[:space:]]*\\{[^;}]*[,{][[:space:]]*(\\([^()]*\\)[[:space:]]*)?"
                            "out[[:space:]]*\\[[^]]*\\][[:space:]]*(\\.|->)[[:space:]]*data")
        && !kf_text_matches (t, "(->|\\.)[[:space:]]*out\\b"))
        return true;
    char names[S_NAMES][64];
    int n = s_output_names (t, names);
    for (int k = 0; k < n; k++)
        for (const char *w = s_word (t, t, NULL, names[k]); w;
             w = s_word (t, w + 1, NULL, names[k]))
            if (s_reads (t, w, strlen (names[k])))
                return true;
    return false;
}

//  Whether a multiply-add's factor F is read from memory: an element, or
//  a load of a vector.
static bool
s_from_memory (const char *f)
{
    return strchr (f, '[') || strstr (f, "load");
}

//  F without the casts before it: (double) x[i] is x[i] (white space is
//  already out of the accumulators' factors).
static const char *
s_uncast (const char *f)
{
    static const char *const casts[] = { "(double)", "(float)", "(long)", "(int)",
                                         "(int64_t)", NULL };
    for (int k = 0; casts[k];)
        if (!strncmp (f, casts[k], strlen (casts[k]))) {
            f += strlen (casts[k]);
            k = 0;
        }
        else
            k++;
    return f;
}

//  Whether the code accumulates a product: a register tile, or a
//  multiply-add of two other values both read from memory (a dot
//  product's a[i][k] * b[k][j]); not a Horner step (p = p * t + c), a
//  sum of squares ((double) x[i] * x[i]) nor Welford's d * (x - mean).
//  Where it does not, it has no epilogue to fuse (round 18: "the output
//  written once (no read back)" on every elementwise kernel).
static bool
s_has_product (const kf_descriptor_acc_t *acc)
{
    if (acc->tile > 0)
        return true;
    for (int i = 0; i < acc->n; i++) {
        const char *a = acc->ops[i][0], *b = acc->ops[i][1];
        if (acc->madd[i] && s_from_memory (a) && s_from_memory (b)
            && strcmp (s_uncast (a), s_uncast (b))
            && strcmp (a, acc->names[i]) && strcmp (b, acc->names[i]))
            return true;
    }
    return false;
}

//  ---------------------------------------------------------------------
//  Round 17: cheaper math and the outer-product order

//  Hardware estimates and tables in place of a divide, a square root or
//  a polynomial's range reduction: a reciprocal or reciprocal square root
//  estimate, an exponent and mantissa split by getexp/getmant, a permute
//  of a table held in registers; the GPU's fast intrinsics. Candidate 7
//  (vrcp14ps, a vpermps table, getexp/getmant over candidate 1's
//  polynomial) read only as "explicit SIMD", as approximate math was its
//  parent's already.
//  Round 46: an estimate refined by a Newton step (y = rsqrt14 (d), then
//  y (1.5 - 0.5 d y^2); y = rcp14 (d), then y (2 - d y)) is near f32, the
//  base's way to a vector form, and was tagged "cheaper math by a
//  hardware estimate". An estimate counts unless it is assigned to a name
//  that a multiply-add which subtracts takes next (the step's residual).
static bool
s_unrefined (const char *t, const char *estimate)
{
    char re[200];
    snprintf (re, sizeof re, "\\b_mm(256|512)?_%s(14|28)?_(p|s)[sd]\\b", estimate);
    if (!kf_text_matches (t, re))
        return false;
    snprintf (re, sizeof re, "\\b([[:alpha:]_][[:alnum:]_]*)[[:space:]]*=[[:space:]]*"
              "_mm(256|512)?_%s(14|28)?_(p|s)[sd]\\b", estimate);
    regex_t rx;
    if (regcomp (&rx, re, REG_EXTENDED))
        return true;
    regmatch_t m[2];
    bool refined = regexec (&rx, t, 2, m, 0) == 0 && m[1].rm_eo - m[1].rm_so < 64;
    regfree (&rx);
    if (!refined)
        return true;
    char step[200];
    snprintf (step, sizeof step, "_(fnmadd|fmsub|sub)_p[sd][[:space:]]*\\([^;]*\\b%.*s\\b",
              (int) (m[1].rm_eo - m[1].rm_so), t + m[1].rm_so);
    return !kf_text_matches (t + m[1].rm_eo, step);
}

static bool
s_estimates (const char *t)
{
    return s_unrefined (t, "rsqrt") || s_unrefined (t, "rcp")
           || kf_text_matches (t, "\\b_mm(256|512)?_(getexp|getmant)_(p|s)[sd]\\b|"
                               "\\bv(recpe|rsqrte)q?_f(32|64)\\b|"
                               "\\b(__frcp_r[nzud]|__frsqrt_rn|__fdividef|__expf|__logf|__tanhf)\\b")
           || kf_text_matches (t, "\\b(_mm(256|512)?_permutex2?var_p[sd]|_mm256_permutevar8x32_ps|"
                                  "vqtbl[1-4]q_u8)[[:space:]]*\\([^;]*"
                                  "([Tt]ab|[Ll]ut|LUT|[Tt]able)");
}

//  Whether ARG (an argument's text, LEN long) is a broadcast of one
//  element of an array: _mm512_set1_ps (a[i * K + k]), a pointer's
//  target, or a name assigned from one (NAMES, N of them).
static bool
s_broadcast_arg (const char *arg, size_t len, char names[S_NAMES][64], int n)
{
    char a[256];
    size_t k = 0;
    for (size_t i = 0; i < len && k + 1 < sizeof a; i++)
        if (arg[i] != ' ' && arg[i] != '\t' && arg[i] != '\n')
            a[k++] = arg[i];
    a[k] = '\0';
    //  Round 21: _mm256_broadcast_ss (a0 + k) takes a pointer whatever
    //  its spelling; set1 an element only where it reads one.
    if (kf_text_matches (a, "^(_mm(256|512)?_broadcast_?s[sd](_p[sd])?\\(|_mm(256|512)?_set1_p[sd]"
                            "\\((.*\\[|[*&]))"))
        return true;
    for (int i = 0; i < n; i++)
        if (!strcmp (a, names[i]))
            return true;
    return false;
}

//  The outer-product order: an FMA acc = fmadd (b, v, acc) whose factor b
//  broadcasts one element of an operand against a vector v of the
//  other's row (a packed or transposed copy, or a [K][N] operand as
//  stored), so a row of outputs accumulates with no sum across lanes; in
//  plain C, acc[j] += a * bt[k * NR + j] into a local array, with a taken
//  from an element. A dot product's fmadd (load (x + k), load (w + k),
//  acc) has no broadcast; a polynomial's broadcast is its addend.
static bool
s_outer (const char *t)
{
    char names[S_NAMES][64];
    int n = 0;
    regex_t re;
    regmatch_t m[2];
    if (regcomp (&re, "\\b([[:alpha:]_][[:alnum:]_]*)[[:space:]]*=[[:space:]]*"
                      "(_mm(256|512)?_broadcast_?s[sd](_p[sd])?[[:space:]]*\\(|"
                      "_mm(256|512)?_set1_p[sd][[:space:]]*\\(([^;)]*\\[|[[:space:]]*[*&]))",
                 REG_EXTENDED) == 0) {
        for (const char *p = t; n < S_NAMES && regexec (&re, p, 2, m, p == t ? 0 : REG_NOTBOL) == 0;
             p += m[0].rm_eo)
            snprintf (names[n++], 64, "%.*s", (int) (m[1].rm_eo - m[1].rm_so), p + m[1].rm_so);
        regfree (&re);
    }
    for (const char *p = strstr (t, "fmadd_p"); p; p = strstr (p + 1, "fmadd_p")) {
        const char *q = strchr (p, '(');
        const char *end = strpbrk (p, ";{}");
        if (!q || (end && end < q))
            continue;
        //  The three arguments, split at the commas of depth 0.
        const char *arg[4] = { q + 1, NULL, NULL, NULL };
        size_t len[3] = { 0, 0, 0 };
        int depth = 0, k = 0;
        for (const char *r = q + 1; *r && k < 3; r++) {
            depth += *r == '(';
            if (*r == ')' && depth-- == 0) {
                len[k] = (size_t) (r - arg[k]);
                k++;
                break;
            }
            if (*r == ',' && depth == 0) {
                len[k] = (size_t) (r - arg[k]);
                arg[++k] = r + 1;
            }
        }
        if (k != 3)
            continue;
        //  Accumulating: the addend is the name assigned.
        char acc[64], add[64];
        const char *eq = p;
        while (eq > t && (s_ident (eq[-1]) || eq[-1] == ' ' || eq[-1] == '\t'))
            eq--;
        if (eq == t || eq[-1] != '=' || eq - 1 == t || strchr ("=!<>", eq[-2]))
            continue;
        s_name_before (t, eq - 1, acc);
        s_name_before (arg[2], arg[2] + len[2], add);
        if (*acc && !strcmp (acc, add)
            && (s_broadcast_arg (arg[0], len[0], names, n)
                || s_broadcast_arg (arg[1], len[1], names, n)))
            return true;
    }
    //  Plain C: acc[j] += a * b[...] with a = x[...], acc a local array.
    if (regcomp (&re, "\\b([[:alpha:]_][[:alnum:]_]*)[[:space:]]*\\[[^];]*\\][[:space:]]*\\+=[[:space:]]*"
                      "([[:alpha:]_][[:alnum:]_]*)[[:space:]]*\\*[[:space:]]*[[:alpha:]_][[:alnum:]_]*"
                      "[[:space:]]*\\[", REG_EXTENDED) != 0)
        return false;
    regmatch_t c[3];
    bool hit = false;
    for (const char *p = t; !hit && regexec (&re, p, 3, c, p == t ? 0 : REG_NOTBOL) == 0;
         p += c[0].rm_eo) {
        char dst[64], s[64], pat[200];
        snprintf (dst, sizeof dst, "%.*s", (int) (c[1].rm_eo - c[1].rm_so), p + c[1].rm_so);
        snprintf (s, sizeof s, "%.*s", (int) (c[2].rm_eo - c[2].rm_so), p + c[2].rm_so);
        bool vec = false;
        snprintf (pat, sizeof pat, "\\b%s[[:space:]]*=[^;=]*[[:alnum:]_][[:space:]]*\\[", s);
        hit = kf_descriptor_acc_local_array (t, dst, &vec) >= 1 && kf_text_matches (t, pat);
    }
    regfree (&re);
    return hit;
}

//  ---------------------------------------------------------------------
//  Features

//  Independent chains of one sum that hide an FMA's latency (4 cycles on
//  the x86 cores since Skylake, 3-4 on Arm's): fewer leave the FMA units
//  idle most cycles.
#define S_CHAINS 4

unsigned
kf_prompt_source_features (const char *source, const char *language)
{
    if (!source || !*source)
        return 0;
    const char *lang = language && *language ? language : "c";
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL;
    //  The descriptors read the code with comments and strings blanked.
    char *code = strdup (source);
    if (code) {
        kf_descriptor_strip_text (code, false);
        kf_descriptor_blank_if0 (code);
        //  Round 44: and with the function-like macros it defines expanded
        //  (a register tile written as `c##i##0 = _mm512_fmadd_ps (...)`
        //  in a ROW(i) macro read as no feature).
        char *expanded = kf_descriptor_macros (code);
        if (expanded) {
            free (code);
            code = expanded;
        }
    }
    const char *t = code ? code : source;
    if (kf_descriptor_classify (t, strlen (t), lang, &c, &why) != 0)
        why = NULL;
    const char *w = why ? why : "";
    //  The accumulators as the descriptors read them (one reading for both).
    kf_descriptor_acc_t acc;
    kf_descriptor_accumulators (t, &acc);
    bool host = !strcmp (lang, "c");
    unsigned f = 0;
#define S_SET(feature, cond) (f |= (cond) ? 1u << (feature) : 0)
    S_SET (KF_IDEA_THREADS, c.sync >= 1);
    //  Round 24: the descriptors' work counter (kf_descriptor_host.c: a
    //  lone counter's fetch-adds, a claim under a lock) or a dynamic
    //  schedule; with atomics on shared data as well (level 3) the
    //  counter is not told apart, and the threads are read as before.
    S_SET (KF_IDEA_DYNAMIC, c.sync >= 1 && strstr (w, "dynamic work distribution"));
    //  Round 25: intrinsics that only load and store (scalar math
    //  streamed out by _mm256_stream_ps) are no explicit SIMD.
    S_SET (KF_IDEA_SIMD, (strstr (w, "SIMD intrinsics") || strstr (w, "vector extension"))
                             && kf_descriptor_simd_math (t));
    S_SET (KF_IDEA_PREFETCH, kf_text_matches (t, "\\b(_mm_prefetch|__builtin_prefetch)\\b"));
    //  On the host the descriptors read the triangle (their explanation
    //  says so); elsewhere it is read here.
    S_SET (KF_IDEA_TRIANGLE, host ? strstr (w, KF_DESCRIPTOR_TRIANGLE_LABEL) != NULL
                                  : kf_descriptor_triangle (t, NULL, 0));
    S_SET (KF_IDEA_CHAIN, host && strstr (w, KF_DESCRIPTOR_CHAIN_LABEL) != NULL);
    S_SET (KF_IDEA_STREAM,
           kf_text_matches (t, "\\b_mm(256|512)?_stream_(ps|pd|si(32|64|128|256|512))\\b|"
                               "__builtin_nontemporal_store|\\b__stcs\\b|\\bst\\.global\\.cs\\b"));
    //  Several vectors per iteration: a pragma, four accumulators of one
    //  kind or more, or a load at a constant offset of whole vectors from
    //  the index. Round 17: a dot product over two chains (a0, a1, loads at
    //  k and k + 16) is not what "hide the FMA latency" asks for: at 4
    //  cycles an FMA, two chains issue one FMA every 2 cycles, a quarter
    //  of two units' peak; its loads at + 16 are its chains' (fewer than
    //  4 of one kind), not an elementwise loop's unrolling.
    bool chains = acc.same >= 2 && acc.same < S_CHAINS;
    //  Round 20: the descriptors' "per-lane accumulator array" is any
    //  zeroed float array, an intrinsics kernel's tail buffer (float
    //  ta[8] = { 0 }) too; it counts as accumulators only where some
    //  array element is summed into.
    bool lanes_acc = strstr (w, "per-lane accumulator")
                     && kf_text_matches (t, "[[:alnum:]_][[:space:]]*\\[[^];]*\\][[:space:]]*"
                                            "\\+=");
    S_SET (KF_IDEA_UNROLL,
           kf_text_matches (t, "#[[:space:]]*pragma[[:space:]]+(GCC[[:space:]]+)?unroll")
           || kf_text_matches (t, "\\b[[:alpha:]_]*acc[[:alpha:]_]*3\\b[^;]*=[^;]*;")
           || acc.same >= S_CHAINS || lanes_acc || strstr (w, "register tile")
           || (!chains
               && kf_text_matches (t, "_mm(256|512)?_loadu?_(ps|pd|si(128|256|512))[[:space:]]*"
                                      "\\([^;]*\\+[[:space:]]*(4|8|16|24|32|48|64|96|128)"
                                      "[[:space:]]*[])]")));
    //  Approximate math is a note of the descriptors, not a level (round
    //  7); of the level-2 rewrites only those of one element's function
    //  cut its math (round 17: a layer norm's one-pass variance, a
    //  rewrite of a row's statistics, was read as approximate math).
    S_SET (KF_IDEA_APPROX, strstr (w, "approximate math") || strstr (w, "tanh rewritten")
                           || strstr (w, "in place of tanh(softplus)")
                           || strstr (w, "log cosh as") || acc.horner >= 3
                           || kf_text_matches (t, "_slli_epi32[[:space:]]*\\([^;]*,[[:space:]]*"
                                                  "23[[:space:]]*\\)"));
    //  On the host, blocking for a cache, not a register tile alone (the
    //  descriptors' level 2 counts both).
    S_SET (KF_IDEA_BLOCK, host ? strstr (w, "(cache blocking)") || strstr (w, "cache-level")
                                     || strstr (w, "inside cache blocks")
                               : c.mem >= 2);
    S_SET (KF_IDEA_MICRO, strstr (w, "register tile") || kf_descriptor_acc_is_tile (&acc));
    //  The descriptors' packing rule, not a level name's "packed or not".
    //  Round 21: and a routine named for packing (pack_b (B, N, K, Bp,
    //  ...) wrote its panels through a pointer named dst); the
    //  intrinsics' _mm256_packs_epi32 and unpacklo are no such routine.
    S_SET (KF_IDEA_PACK, strstr (w, "operand packed into")
                         || kf_text_matches (t, "\\b[[:alnum:]_]*[Pp]ack[[:alnum:]_]*[[:space:]]*"
                                                "\\[[^];]*\\][[:space:]]*=[^=]")
                         || kf_text_matches (t, "\\b[Pp]ack[[:alnum:]_]*[[:space:]]*\\("));
    //  A kernel with a product is "fused" by its epilogue (the idea
    //  below), not by a row's passes (round 18: "one fused pass per row"
    //  for a product whose RMS norm ran in a pass of its own).
    //  Round 28: attention's one pass over the keys, an online softmax,
    //  is its fused pass (candidate 4 read "not seen done").
    bool product = s_has_product (&acc);
    S_SET (KF_IDEA_FUSED_ROW, (c.algo >= 1 && !product) || strstr (w, "(online softmax)"));
    S_SET (KF_IDEA_ACCUMULATORS, lanes_acc || acc.same >= S_CHAINS);
    S_SET (KF_IDEA_ESTIMATE, s_estimates (t));
    S_SET (KF_IDEA_OUTER, s_outer (t));
    //  On a GPU the output reaches the kernel as a parameter of any name.
    S_SET (KF_IDEA_EPILOGUE, host && product && !s_reads_output (t));
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

const char *
kf_prompt_feature_words (unsigned features, char *buf, size_t size)
{
    //  Round 14: a try was described by the idea it was handed; these say
    //  what its code did (the words of kf_prompt_source_features' reading).
    static const char *const words[] = {
        [KF_IDEA_THREADS] = "threads", [KF_IDEA_SIMD] = "explicit SIMD (intrinsics or vector types)",
        [KF_IDEA_STREAM] = "streaming (non-temporal) stores",
        //  Round 44: "several vectors an iteration" read as the
        //  elementwise form beside a product's unrolled k.
        [KF_IDEA_UNROLL] = "unrolled loops (several vectors, or several steps of k, an "
                           "iteration)",
        [KF_IDEA_APPROX] = "approximate math (a polynomial or bit tricks)",
        [KF_IDEA_BLOCK] = "cache blocking", [KF_IDEA_MICRO] = "a register tile",
        [KF_IDEA_PACK] = "packed operands", [KF_IDEA_FUSED_ROW] = "one fused pass per row",
        [KF_IDEA_ACCUMULATORS] = "several independent accumulators",
        [KF_IDEA_EPILOGUE] = "the output written once (no read back)",
        //  Round 18: "(rcp/rsqrt estimate, getexp/getmant, a permute
        //  table)" read as what the kernel did, where it used one of them.
        [KF_IDEA_ESTIMATE] = "cheaper math by a hardware estimate or table (one of: an "
                             "rcp/rsqrt estimate, getexp/getmant, a permute table)",
        [KF_IDEA_OUTER] = "the outer-product order (an element broadcast against a vector of "
                          "the other operand's row)",
        //  Round 24: not "threads" alone, which read as fixed shares.
        [KF_IDEA_DYNAMIC] = "threads that take their work as they go (chunks from a shared "
                            "counter or a dynamic schedule, not fixed shares)",
        [KF_IDEA_PREFETCH] = "software prefetch ahead of the loads",
        [KF_IDEA_TRIANGLE] = KF_DESCRIPTOR_TRIANGLE_LABEL,
        [KF_IDEA_CHAIN] = KF_DESCRIPTOR_CHAIN_LABEL,
    };
    size_t used = 0;
    if (size)
        buf[0] = '\0';
    //  Threads that take their work as they go are said once, in the
    //  threads' place.
    bool dynamic = (features >> KF_IDEA_DYNAMIC) & 1u, threads = (features >> KF_IDEA_THREADS) & 1u;
    for (size_t f = 1; f < sizeof words / sizeof words[0] && used < size; f++)
        if ((features >> f) & 1u && !(f == KF_IDEA_DYNAMIC && threads)) {
            const char *w = f == KF_IDEA_THREADS && dynamic ? words[KF_IDEA_DYNAMIC] : words[f];
            int n = snprintf (buf + used, size - used, "%s%s", used ? ", " : "", w);
            used = n < 0 ? size : used + (size_t) n;
        }
    return buf;
}

unsigned
kf_prompt_features_added (json_t *row)
{
    json_t *f = json_object_get (row, "features"), *p = json_object_get (row, "parent_features");
    if (!json_is_integer (f))
        return 0;
    //  Written from scratch: everything its code does is its own.
    if (!kf_jint (row, "parent_id"))
        return (unsigned) json_integer_value (f);
    return json_is_integer (p) ? (unsigned) (json_integer_value (f) & ~json_integer_value (p))
                               : 0;
}

bool
kf_prompt_idea_cuts_code (const char *idea)
{
    return idea && !strncmp (idea, KF_PROMPT_IDEA_CUT, strlen (KF_PROMPT_IDEA_CUT));
}

unsigned
kf_prompt_idea_bits (const char *idea)
{
    kf_idea_feature_t f = kf_prompt_idea_feature (idea);
    //  Round 48: a meta round's idea in its own words ("combine streaming
    //  stores with threads: ...") read as about nothing, so a kernel doing
    //  both was no try of it: a combination, "combine" and two or more
    //  features its words name, is about them. Other free words stay as
    //  they were: "keep the streaming stores but ..." takes the stores as
    //  given (kf_prompt_idea_premise), and the cut idea's "reciprocal
    //  estimate" is no approximation idea.
    if (f == KF_IDEA_OTHER) {
        unsigned named = idea && !strncasecmp (idea, "combine ", 8)
                         ? kf_meta_guess_features (idea) : 0;
        return named & (named - 1) ? named : 0;
    }
    unsigned bits = 1u << f;
    if (!idea || !strstr (idea, "as one change"))
        return bits;
    static const struct { const char *word; kf_idea_feature_t f; } parts[] = {
        { "blocking", KF_IDEA_BLOCK }, { "cache blocks", KF_IDEA_BLOCK },
        { "packing", KF_IDEA_PACK }, { "packed", KF_IDEA_PACK },
        { "micro-kernel", KF_IDEA_MICRO },
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
        if (strstr (idea, parts[i].word))
            bits |= 1u << parts[i].f;
    return bits;
}

bool
kf_prompt_try_counts (const char *handed, unsigned added, const char *idea, bool *by_code)
{
    if (by_code)
        *by_code = false;
    if (handed && idea && !strcmp (handed, idea))
        return true;
    unsigned need = kf_prompt_idea_bits (idea);
    //  Round 19: a meta round's rewording of an idea made the planner
    //  call it untried after two tries; the same idea in other words
    //  (one subject, every part of it) keeps its tries.
    if (handed && need && kf_prompt_idea_bits (handed) == need)
        return true;
    //  Round 17: cheaper math over a parent's polynomial is what an
    //  approximation idea is about too. Round 20: an idea of several
    //  parts counts by code only where the code added every part (a
    //  register tile in cache blocks was said to do "blocking, packing
    //  and micro-kernel as one change" without packing anything).
    unsigned either = (need >> KF_IDEA_APPROX) & 1u ? 1u << KF_IDEA_ESTIMATE : 0;
    bool yes = need && ((added & need) == need || (added & either));
    if (by_code)
        *by_code = yes;
    return yes;
}

//  Round 22: "do it another way than the try in flight (another split,
//  order or width)" where that try's code was not written yet: the model
//  could differ only by remembering its own answer. The way to differ,
//  by what the idea is about, so two tries of it start apart.
const char *
kf_prompt_feature_other_way (kf_idea_feature_t feature)
{
    switch (feature) {
    case KF_IDEA_THREADS:
        return "a split other than equal contiguous ranges, such as chunks taken from a shared "
               "counter, or another thread count";
    case KF_IDEA_APPROX:
    case KF_IDEA_ESTIMATE:
        return "another formula: a lower degree, an estimate with a Newton step in place of a "
               "divide or root, or another identity";
    case KF_IDEA_BLOCK:
        return "other block sizes or another order of the blocked loops";
    case KF_IDEA_MICRO:
    case KF_IDEA_OUTER:
    case KF_IDEA_PACK:
        //  Round 40: with the try in flight's code not written, the
        //  helper guessed its tile: the likeliest is the Target's.
        //  Round 49: read as steering away from the Target's shape, which
        //  the try in flight had not taken: it is a guess, said so.
        return "another tile shape (rows x vectors) than the Target section's block sizes "
               "name, which a try started from them likely takes (a guess: its code is not "
               "written yet), or another packed layout";
    case KF_IDEA_UNROLL:
    case KF_IDEA_ACCUMULATORS:
        return "another depth: more or fewer independent chains";
    case KF_IDEA_PREFETCH:
        return "another distance, or every input stream prefetched";
    case KF_IDEA_CHAIN:
        return "another block of rows (how many rows of the intermediate one block keeps, in "
               "L1 or in L2), or the second product's tile taken over the block another way";
    case KF_IDEA_TRIANGLE:
        return "another tile along the diagonal (a finer one wastes less of the diagonal "
               "blocks' work), or the mirror stored another way";
    default:
        return "another split, order or width";
    }
}
