/*  kf_descriptor_host.c - host evidence read by code for kf_descriptor.c
 *  (kf_descriptor_host.h): auto-vectorised loops, a lone atomic work
 *  counter, and packing into a local buffer.
 *
 *  Round 4 of the model-in-the-loop runs (issue 15) showed the host table
 *  misreading real kernels: a plain loop that GCC turns into zmm code was
 *  "scalar" because nothing in its text says SIMD, and one atomic counter
 *  that hands out blocks of work made a kernel "atomics/locks across
 *  threads". Both need more than one pattern: the first a loop's body read
 *  against the whole file (a libm call anywhere can stop the vectoriser),
 *  the second every atomic operation compared with the counter's.
 */
#include "kf_descriptor_host.h"
#include "kf_descriptor_pack.h"
#include "kf_descriptor_regex.h"
#include "kf_descriptor_text.h"
#include "kf_text.h"

#include <ctype.h>
#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W "[[:space:]]*"
#define NAME "[[:alpha:]_][[:alnum:]_]*"
//  A plain lvalue: a name, a member, a pointer member (t->next).
#define LVAL "&?" W "[[:alpha:]_][[:alnum:]_.>-]*"

//  A counted loop stepping by one: `for (int64_t i = a; i < n; i++)`; a
//  bound of a few literal iterations is unrolled, not vectorised.
static const char s_loop_p[] =
    "\\bfor" W "\\(" W "[^;]*\\b(" NAME ")" W "=" W "[^;=][^;]*;" W "\\1" W "<=?" W
    "([^;0-9[:space:]][^;]*|[0-9][0-9]+[^;]*);" W
    "(\\1" W "\\+\\+|\\+\\+" W "\\1|\\1" W "\\+=" W "1\\b)" W "\\)";
//  Calls that stop GCC's vectoriser under -std=c11 without -ffast-math
//  (errno, no vector variant): with one anywhere in the file the loop
//  may reach it, so no loop counts as vectorised.
static const char s_libm_p[] =
    "\\b(exp|expf|exp2|exp2f|expm1|expm1f|log|logf|log2|log2f|log10|log10f|log1p|log1pf|"
    "tanh|tanhf|tan|tanf|sin|sinf|cos|cosf|erf|erff|erfc|erfcf|pow|powf|sqrt|sqrtf|cbrt|"
    "cbrtf|atan|atanf|atan2|atan2f|fmod|fmodf)" W "\\(";
static const char s_atomic_call_p[] = "\\b(atomic_\\w+|__atomic_\\w+|__sync_\\w+)" W "\\(";
static const char s_atomic_type_p[] =
    "\\b(_Atomic|atomic_(bool|char|schar|uchar|short|ushort|int|uint|long|ulong|llong|"
    "ullong|size_t|ptrdiff_t|intptr_t|uintptr_t|flag))\\b";
//  A loop stepping by a constant: `for (int64_t j0 = 0; j0 < N; j0 += JW)`.
//  Its variable: group 1, its condition: group 2, its step: group 3.
static const char s_block_p[] =
    "\\bfor" W "\\(" W "[^;]*\\b(" NAME ")" W "=" W "[^;=][^;]*;([^;]*);" W "\\1" W "\\+=" W
    "(" NAME "|[0-9]+)[uUlL]*" W "\\)";
//  A loop stepping by a block size by its name: TILE, BLOCK, BS, and
//  BLAS's NB, KB, MB (BM...). Its condition: group 1, its variable: group
//  2, its step: group 3.
static const char s_named_p[] =
    "\\bfor" W "\\([^;]*;([^;]*);" W "(" NAME ")" W "\\+=" W
    "([[:alnum:]_]*(TILE|BLOCK|BLK|Tile|Block|tile|block|BS)[[:alnum:]_]*|[MNKIJ]B|B[MNKIJ])"
    W "\\)";
//  Round 46: a loop over block numbers by ones (`for (int kb = 0; kb <
//  nkb; kb++)`), each block's start its number times the block's size
//  (`k0 = (int64_t) kb * KC`). Its variable: group 1.
static const char s_block_number_p[] =
    "\\bfor" W "\\(" W "[^;]*\\b(" NAME ")" W "=" W "[^;=][^;]*;[^;]*;" W
    "(\\+\\+" W "(" NAME ")|(" NAME ")" W "\\+\\+)" W "\\)";
//  Round 48: a block claimed from a shared counter and scaled by its
//  size (`j0 = (int64_t) atomic_fetch_add (jb->next, 1) * NB`), the block
//  loop of a kernel whose threads take blocks as they go. Its variable:
//  group 1, its size: group 2.
static const char s_claimed_block_p[] =
    "\\b(" NAME ")" W "=" W "[^;=]*(atomic_fetch_add|__atomic_fetch_add|__sync_fetch_and_add)"
    "[^;]*\\)" W "\\*" W "\\(?" W "(" NAME "|[0-9]+)[uUlL]*" W "\\)?" W ";";
//  Round 51: a block number claimed in one statement and scaled in
//  another (`b = atomic_fetch_add (&next, 1); ... i0 = b * RB`). Its
//  variable: group 1; the match ends at the call's name.
static const char s_claimed_number_p[] =
    "\\b(" NAME ")" W "=" W "(\\(" W NAME W "\\)" W ")?"
    "(atomic_fetch_add|atomic_fetch_add_explicit|__atomic_fetch_add|__sync_fetch_and_add)\\b";
static const char s_lock_p[] =
    "\\b(pthread_mutex_lock|pthread_spin_lock|mtx_lock|omp_set_lock)" W "\\([^;]*";

enum { R_LOOP, R_LIBM, R_CALL, R_TYPE, R_BLOCK, R_NAMED, R_LOCK,
       R_BLOCK_NUMBER, R_CLAIMED_BLOCK, R_CLAIMED_NUMBER, R_COUNT };
static const char *const s_patterns[R_COUNT] = {
    s_loop_p, s_libm_p, s_atomic_call_p, s_atomic_type_p,
    s_block_p, s_named_p, s_lock_p, s_block_number_p, s_claimed_block_p, s_claimed_number_p };
static regex_t s_re[R_COUNT];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static bool s_ok;

static void
s_compile (void)
{
    s_ok = kf_descriptor_regcomp (s_re, s_patterns, R_COUNT, "kf_descriptor_host");
}

//  Whether PATTERN (printf format with the name VAR once or twice)
//  matches TEXT.
static bool
s_matches (const char *fmt, const char *var, const char *text)
{
    char pattern[512];
    snprintf (pattern, sizeof pattern, fmt, var, var);
    return kf_text_matches (text, pattern);
}

//  The body of the loop whose header ends at P: a braced block or one
//  statement, an unbraced `for`, `while` or `if` with its own header and
//  body. Returned as a copy (the caller frees it), NULL when unclosed.
static char *
s_body (const char *p)
{
    while (isspace ((unsigned char) *p))
        p++;
    const char *end = p;
    for (int guard = 0; guard < 64; guard++) {
        while (isspace ((unsigned char) *end))
            end++;
        size_t kw = !strncmp (end, "for", 3) ? 3 : !strncmp (end, "while", 5) ? 5
                    : !strncmp (end, "if", 2) ? 2 : 0;
        const char *h = end + kw;
        while (kw && isspace ((unsigned char) *h))
            h++;
        if (!kw || *h != '(' || isalnum ((unsigned char) end[kw]) || end[kw] == '_')
            break;
        if (!(h = kf_descriptor_close (h)))
            return NULL;
        end = h + 1;
    }
    while (isspace ((unsigned char) *end))
        end++;
    if (*end == '{')
        end = kf_descriptor_close (end);
    else
        end = strchr (end, ';');
    if (!end || !*end)
        return NULL;
    return strndup (p, (size_t) (end - p + 1));
}

//  A loop GCC -O3 vectorises without help: counted, stepping by one, its
//  body a straight line (no inner loop, no early exit) that stores to
//  NAME[i], reads no neighbour of i (a recurrence), and the file calls no
//  libm function (the vectoriser leaves such a call scalar, and the loop
//  with it). A reduction into a scalar is not counted: without
//  -ffast-math GCC keeps a float sum in order, scalar.
static int
s_autovec (const char *code, char *snip)
{
    if (regexec (&s_re[R_LIBM], code, 0, NULL, 0) == 0)
        return 0;
    int count = 0;
    const char *p = code;
    regmatch_t m[2];
    while (*p && regexec (&s_re[R_LOOP], p, 2, m, p == code ? 0 : REG_NOTBOL) == 0) {
        char var[64];
        size_t len = (size_t) (m[1].rm_eo - m[1].rm_so);
        char *body = len < sizeof var ? s_body (p + m[0].rm_eo) : NULL;
        if (body) {
            memcpy (var, p + m[1].rm_so, len);
            var[len] = 0;
            bool store = s_matches ("\\b" NAME W "\\[" W "%s" W "\\]" W "([-+*/]?=[^=])", var, body);
            //  Explicit SIMD in the body is not the compiler's doing.
            bool straight = !s_matches ("\\b(for|while|do|break|return|goto|_mm\\w*|__m(128|256|512)\\w*)\\b"
                                        "|\\[" W "%s" W "[-+]", var, body);
            if (store && straight && count++ == 0)
                kf_descriptor_snip (snip, p, m[0].rm_so, m[0].rm_eo);
            free (body);
        }
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

//  ---------------------------------------------------------------------
//  Cache blocking, by what the loops do (round 5 of issue 15: a kernel
//  blocked by JW, KSPAN and ISTRIP read as unblocked, since only names
//  such as NB or TILE were known): a loop stepping by a constant (a name
//  or a literal of 8 or more) whose body uses the block, starting an
//  inner loop at its variable or bounding one by `v + C`, and holds a
//  loop nest (two levels at least) - the work that reuses the block.
//  A strip of vector width (`i += 16` around loads) has no inner loop
//  over the block; a chunk of an elementwise loop has no nest inside.

//  Round 10: a k-block loop whose nest is in the micro-kernel it calls
//  (`for (kc ...) for (i0 ...) micro (...)`, the k and row loops inside
//  micro) read as no nest, and the compile worker's preprocessed text
//  had lost the name KC: a function the file defines is read through its
//  calls, at most S_CALLS deep (a recursive one ends there).
#define S_CALLS 3

//  Whether TEXT holds a loop, or calls a function that does.
static bool
s_has_loop (const char *code, const char *text, int calls)
{
    return s_matches ("\\bfor" W "\\(%.0s%.0s", "", text)
           || kf_descriptor_any_callee (code, text, calls, s_has_loop);
}

//  Whether BODY holds a `for` whose own body holds a loop, or calls a
//  function that does (CALLS levels of calls followed).
static bool
s_has_nest (const char *code, const char *body, int calls)
{
    for (const char *p = strstr (body, "for"); p; p = strstr (p + 3, "for")) {
        bool word = (p == body || !(isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
                    && !(isalnum ((unsigned char) p[3]) || p[3] == '_');
        if (!word)
            continue;
        const char *q = p + 3;
        while (isspace ((unsigned char) *q))
            q++;
        if (*q != '(')
            continue;
        if (!(q = kf_descriptor_close (q)))
            return false;
        char *inner = s_body (q + 1);
        bool nest = inner && s_has_loop (code, inner, calls);
        free (inner);
        if (nest)
            return true;
    }
    return kf_descriptor_any_callee (code, body, calls, s_has_nest);
}

//  The value of TOKEN in CODE: a literal's, or a name's that CODE
//  defines as one (`#define KB 512`, `const int KB = 512;`, an enum's
//  `KB = 512,`); 0 where not known.
static long
s_value (const char *code, const char *token)
{
    if (isdigit ((unsigned char) *token))
        return atol (token);
    char pattern[160];
    snprintf (pattern, sizeof pattern,
              "(#" W "define[[:space:]]+%s[[:space:]]+\\(?" W "|\\b%s" W "=" W ")"
              "([0-9]+)[uUlL]*" W "\\)?" W "([,;}]|$|\n)", token, token);
    regex_t re;
    if (strlen (token) > 48 || regcomp (&re, pattern, REG_EXTENDED | REG_NEWLINE))
        return 0;
    regmatch_t m[3];
    long v = regexec (&re, code, 3, m, 0) == 0 ? atol (code + m[2].rm_so) : 0;
    regfree (&re);
    return v;
}

//  Round 35: `for (kk = 0; kk < K; kk += KB)` with K and KB both 512 read
//  as cache blocking (and the kernel as "multi-level blocking"), and the
//  blocking idea as tried twice. Whether the loop of VAR, whose condition
//  is COND and whose step STEP, runs once: its bound and step known, the
//  step no smaller than the bound.
static bool
s_one_block (const char *code, const char *var, const char *cond, const char *step)
{
    char pattern[160], bound[64] = "";
    snprintf (pattern, sizeof pattern, "^" W "%s" W "<" W "(" NAME "|[0-9]+)[uUlL]*" W "$", var);
    regex_t re;
    if (strlen (var) > 48 || regcomp (&re, pattern, REG_EXTENDED))
        return false;
    regmatch_t m[2];
    if (regexec (&re, cond, 2, m, 0) == 0 && m[1].rm_eo - m[1].rm_so < (regoff_t) sizeof bound)
        memcpy (bound, cond + m[1].rm_so, (size_t) (m[1].rm_eo - m[1].rm_so));
    regfree (&re);
    long b = *bound ? s_value (code, bound) : 0, s = s_value (code, step);
    return b > 0 && s >= b;
}

//  Whether BODY sets a block's start from the block number VAR, `START =
//  [(cast)] VAR * STEP`, and its end, `START + STEP`: a row's offset
//  (`r = i * N`) has no end beside it.
static bool
s_block_start (const char *body, const char *var, char *start, size_t size)
{
    char pattern[256];
    snprintf (pattern, sizeof pattern,
              "\\b(" NAME ")" W "=" W "(\\(" W NAME W "\\)" W ")?\\b%s" W "\\*" W "(" NAME
              "|[0-9]+)\\b", var);
    regex_t re;
    if (strlen (var) > 48 || regcomp (&re, pattern, REG_EXTENDED))
        return false;
    bool found = false;
    regmatch_t m[4];
    for (const char *p = body; !found && regexec (&re, p, 4, m, p == body ? 0 : REG_NOTBOL) == 0;
         p += m[0].rm_eo > 0 ? m[0].rm_eo : 1) {
        int ls = (int) (m[1].rm_eo - m[1].rm_so), lz = (int) (m[3].rm_eo - m[3].rm_so);
        char end[200];
        snprintf (end, sizeof end, "\\b%.*s" W "\\+" W "%.*s\\b", ls, p + m[1].rm_so, lz,
                  p + m[3].rm_so);
        found = ls < 64 && lz < 64 && kf_text_matches (body, end);
        if (found && start)
            snprintf (start, size, "%.*s", ls, p + m[1].rm_so);
    }
    regfree (&re);
    return found;
}

//  One match of a loop pattern: its first three groups, each as text, and
//  the body of the loop whose header it ends (NULL where not asked for).
typedef struct {
    const char *code;
    const char *end;    //  where the match ends in CODE
    char group[3][160];
    char *body;
} s_loop_match_t;

//  Counts the matches of the pattern RE in CODE that TEST accepts, taking
//  each match's GROUPS and, where WITH_BODY, its body (a match whose
//  groups are too long or whose body is unclosed is not counted); the
//  first accepted goes to SNIP.
static int
s_count_loops (const regex_t *re, int groups, bool with_body, const char *code,
               char *snip, bool (*test) (const s_loop_match_t *))
{
    int count = 0;
    const char *p = code;
    regmatch_t m[4];
    while (*p && regexec (re, p, 4, m, p == code ? 0 : REG_NOTBOL) == 0) {
        s_loop_match_t match = { .code = code, .end = p + m[0].rm_eo };
        bool fits = true;
        for (int g = 0; g < groups && fits; g++) {
            size_t len = m[g + 1].rm_so < 0 ? 0 : (size_t) (m[g + 1].rm_eo - m[g + 1].rm_so);
            fits = len < sizeof match.group[g];
            if (fits) {
                memcpy (match.group[g], p + m[g + 1].rm_so, len);
                match.group[g][len] = 0;
            }
        }
        if (fits && with_body)
            fits = (match.body = s_body (p + m[0].rm_eo)) != NULL;
        if (fits && test (&match) && count++ == 0)
            kf_descriptor_snip (snip, p, m[0].rm_so, m[0].rm_eo);
        free (match.body);
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

//  A loop over block numbers (s_block_number_p) whose body sets a block's
//  start and end from the number (s_block_start) and holds a loop nest.
static bool
s_block_number_loop (const s_loop_match_t *match)
{
    return s_block_start (match->body, match->group[0], NULL, 0)
           && s_has_nest (match->code, match->body, S_CALLS);
}

//  A loop stepping by a block (s_block_p: its variable, condition and
//  step) that uses the block inside and holds a loop nest.
static bool
s_block_loop (const s_loop_match_t *match)
{
    const char *var = match->group[0], *cond = match->group[1], *step = match->group[2];
    const char *body = match->body;
    bool literal = isdigit ((unsigned char) step[0]);
    bool sized = !literal || atol (step) >= 8;
    //  The block used inside: an inner loop from VAR, or VAR + STEP.
    bool used = s_matches ("\\bfor" W "\\(" W "([[:alpha:]_][[:alnum:]_]*" W ")?"
                           "[[:alpha:]_][[:alnum:]_]*" W "=" W "%s" W "[;<]", var, body);
    if (!used) {
        char pattern[512];
        snprintf (pattern, sizeof pattern, "\\b%s" W "\\+" W "%s\\b", var, step);
        used = kf_text_matches (body, pattern);
    }
    //  Round 46: or the block's size clamped to what is left of the
    //  range (`np = j->p1 - pb < 16 ? j->p1 - pb : 16`), a packed
    //  kernel's block of rows in L2 that read as no blocking.
    if (!used) {
        char pattern[512];
        snprintf (pattern, sizeof pattern, "-" W "%s" W "<=?" W "%s\\b", var, step);
        used = kf_text_matches (body, pattern);
    }
    return sized && used && !s_one_block (match->code, var, cond, step)
           && s_has_nest (match->code, body, S_CALLS);
}

//  The rest of the block that holds the match's end: up to the brace
//  that closes it (the caller frees it).
static char *
s_rest (const s_loop_match_t *match)
{
    int depth = 0;
    const char *e = match->end;
    for (; *e && depth >= 0; e++)
        depth += (*e == '{') - (*e == '}');
    return strndup (match->end, (size_t) (e - match->end));
}

//  Whether REST reuses the block that starts at VAR: a loop from VAR
//  with a loop nest inside it (the block's rows through a product), or
//  inside another loop of REST (round 48: a block of columns read again
//  for every 4 rows). Round 51: an elementwise kernel's claimed chunk of
//  rows, a loop from its start over each row's columns and no more, is
//  no cache block.
static bool
s_block_reused (const char *code, const char *rest, const char *var)
{
    char pattern[256];
    snprintf (pattern, sizeof pattern, "\\bfor" W "\\(" W "(" NAME W ")?" NAME W "=" W "%s\\b",
              var);
    regex_t re;
    regmatch_t m[1];
    if (strlen (var) > 60 || regcomp (&re, pattern, REG_EXTENDED))
        return false;
    bool found = false;
    for (const char *p = rest; !found && regexec (&re, p, 1, m, p == rest ? 0 : REG_NOTBOL) == 0;
         p += m[0].rm_eo > 0 ? m[0].rm_eo : 1) {
        const char *at = p + m[0].rm_so, *close = kf_descriptor_close (strchr (at, '('));
        char *body = close ? s_body (close + 1) : NULL;
        found = body && s_has_nest (code, body, S_CALLS);
        free (body);
        //  Or a loop before it whose body holds it.
        for (const char *q = rest; !found && close && (q = strstr (q, "for")) && q < at; q += 3) {
            const char *h = q + 3, *end;
            while (isspace ((unsigned char) *h))
                h++;
            if ((q > rest && (isalnum ((unsigned char) q[-1]) || q[-1] == '_')) || *h != '('
                || !(end = kf_descriptor_close (h)))
                continue;
            char *outer = s_body (end + 1), *head = strndup (at, (size_t) (close + 1 - at));
            found = outer && head && strstr (outer, head);
            free (outer);
            free (head);
        }
    }
    regfree (&re);
    return found;
}

//  A block claimed from a shared counter (s_claimed_block_p: its start's
//  variable, the counter's call, its size) that the rest of its block
//  reuses (s_block_reused).
static bool
s_claimed_block (const s_loop_match_t *match)
{
    const char *var = match->group[0], *step = match->group[2];
    if (isdigit ((unsigned char) step[0]) && atol (step) < 8)
        return false;
    char *rest = s_rest (match);
    bool found = rest && s_block_reused (match->code, rest, var);
    free (rest);
    return found;
}

//  A block number claimed from a shared counter (s_claimed_number_p: its
//  variable) that the rest of its block scales to a block's start and
//  end (s_block_start) and reuses (s_block_reused).
static bool
s_claimed_number (const s_loop_match_t *match)
{
    char *rest = s_rest (match), start[64];
    bool found = rest && s_block_start (rest, match->group[0], start, sizeof start)
                 && s_block_reused (match->code, rest, start);
    free (rest);
    return found;
}

//  A loop stepping by a block size by its name (s_named_p: its condition,
//  variable and step) that runs more than once.
static bool
s_named_loop (const s_loop_match_t *match)
{
    return !s_one_block (match->code, match->group[1], match->group[0], match->group[2]);
}

//  ---------------------------------------------------------------------
//  Atomics and locks, by what they are applied to

//  The object of the atomic call whose argument list opens at P: its
//  first argument without `&`, `*`, casts or spaces, reduced to the last
//  member name (`&job->next` -> "next"); *INDEXED when it is an array
//  element. The name is taken at the outermost depth that has one: a
//  compiled source has <stdatomic.h>'s macros expanded, which wrap the
//  argument (`__atomic_fetch_add (( &s->next ), 1, 0)`; round 9 of issue
//  15 read that chunk counter as atomics on shared data). Returns the end
//  of the first argument.
#define S_ARG_DEPTHS 8
static const char *
s_atomic_object (const char *p, char *name, size_t size, bool *indexed)
{
    name[0] = 0;
    *indexed = false;
    int depth = 0;
    const char *q = p + 1, *last[S_ARG_DEPTHS] = { NULL };
    size_t len[S_ARG_DEPTHS] = { 0 };
    bool index_at[S_ARG_DEPTHS] = { false };
    for (; *q; q++) {
        if (*q == '(' || *q == '[') {
            if (*q == '[' && depth < S_ARG_DEPTHS)
                index_at[depth] = true;
            depth++;
        }
        else if (*q == ')' || *q == ']') {
            if (depth-- == 0)
                break;
        }
        else if (*q == ',' && depth == 0)
            break;
        else if (depth < S_ARG_DEPTHS && (isalpha ((unsigned char) *q) || *q == '_')
                 && (q == p + 1 || !(isalnum ((unsigned char) q[-1]) || q[-1] == '_'))) {
            last[depth] = q;
            len[depth] = 0;
            while (isalnum ((unsigned char) q[len[depth]]) || q[len[depth]] == '_')
                len[depth]++;
        }
    }
    for (int d = 0; d < S_ARG_DEPTHS; d++)
        if (last[d]) {
            *indexed = index_at[d];
            if (len[d] < size) {
                memcpy (name, last[d], len[d]);
                name[len[d]] = 0;
            }
            break;
        }
    return q;
}

//  <stdatomic.h>'s load, store and init expand to a statement expression
//  that names its object once, `__auto_type __atomic_store_ptr = (&s.next);`,
//  then calls `__atomic_store (__atomic_store_ptr, ...)`: the object of
//  such a call (NAME, a temporary of the macro) is the one the temporary
//  was set to, found at most a few hundred bytes before CALL in CODE.
static void
s_macro_object (const char *code, const char *call, char *name, size_t size, bool *indexed)
{
    if (strncmp (name, "__atomic_", 9) != 0)
        return;
    char decl[96];
    snprintf (decl, sizeof decl, "__auto_type %s = (", name);
    const char *from = call - code > 400 ? call - 400 : code, *hit = NULL;
    for (const char *at = from; (at = strstr (at, decl)) != NULL && at < call; at++)
        hit = at;
    if (hit)
        s_atomic_object (hit + strlen (decl) - 1, name, size, indexed);
}

#define S_MAX_OBJECTS 16

//  Whether the value of the call at CALL is used: what precedes it is not
//  a statement start. A cast in front of it is looked through (round 7: a
//  chunk counter claimed as `long i0 = (long) atomic_fetch_add (&next,
//  CHUNK)` read as a dropped result, so as atomics on shared data); a
//  `(void)` cast, or the condition of an if, while or for before it, is
//  not a use.
static bool
s_result_used (const char *code, const char *call)
{
    const char *b = call;
    while (b > code && isspace ((unsigned char) b[-1]))
        b--;
    if (b == code || b[-1] == ';' || b[-1] == '{' || b[-1] == '}')
        return false;
    if (b[-1] != ')')
        return true;
    //  A cast holds only a type: words, '*' and spaces.
    const char *open = b - 1;
    while (open > code && open[-1] != '(') {
        char c = open[-1];
        if (!(isalnum ((unsigned char) c) || c == '_' || c == '*' || isspace ((unsigned char) c)))
            return false;
        open--;
    }
    if (open == code)
        return false;
    open--;
    char type[64];
    snprintf (type, sizeof type, "%.*s", (int) (b - 1 - open - 1), open + 1);
    if (!strcmp (type, "void") || !*type)
        return false;
    const char *p = open;
    while (p > code && isspace ((unsigned char) p[-1]))
        p--;
    if (p == code || p[-1] == ';' || p[-1] == '{' || p[-1] == '}')
        return false;
    //  A word before the parenthesis: a keyword's condition or a call,
    //  unless it is `return`.
    if (isalnum ((unsigned char) p[-1]) || p[-1] == '_') {
        const char *w = p;
        while (w > code && (isalnum ((unsigned char) w[-1]) || w[-1] == '_'))
            w--;
        return p - w == 6 && !strncmp (w, "return", 6);
    }
    return p[-1] != ')';
}

//  Every atomic call: a fetch-add or fetch-sub whose result is used (a
//  claimed index: `b = atomic_fetch_add (&next, 1)`, in a condition) on a
//  plain object marks it a work counter; loads, stores and inits of a
//  counter set it up or test it. Anything else - a fetch-add whose result
//  is dropped (adding into a shared sum), an array element, a step read
//  from an array, a compare-and-swap, a flag, a load of another object -
//  synchronises on shared data.
static void
s_atomics (const char *code, kf_host_evidence_t *ev)
{
    char counters[S_MAX_OBJECTS][64];
    int n_counters = 0, claims = 0;
    //  Two passes: the counters first, then every call against them.
    for (int pass = 0; pass < 2; pass++) {
        const char *p = code;
        regmatch_t m[2];
        while (*p && regexec (&s_re[R_CALL], p, 2, m, p == code ? 0 : REG_NOTBOL) == 0) {
            const char *call = p + m[1].rm_so;
            size_t call_len = (size_t) (m[1].rm_eo - m[1].rm_so);
            const char *open = p + m[0].rm_eo - 1;
            char name[64];
            bool indexed;
            const char *end = s_atomic_object (open, name, sizeof name, &indexed);
            s_macro_object (code, call, name, sizeof name, &indexed);
            p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
            char fn[64];
            snprintf (fn, sizeof fn, "%.*s", (int) (call_len < 63 ? call_len : 63), call);
            bool add = strstr (fn, "fetch_add") || strstr (fn, "add_fetch")
                       || strstr (fn, "fetch_sub") || strstr (fn, "sub_fetch")
                       || strstr (fn, "fetch_and_add") || strstr (fn, "add_and_fetch")
                       || strstr (fn, "fetch_and_sub") || strstr (fn, "sub_and_fetch");
            bool setup = strstr (fn, "load") || strstr (fn, "store") || strstr (fn, "init");
            bool used = s_result_used (code, call);
            //  The step: the second argument reads no array element.
            bool plain_step = *end == ',' && !memchr (end, '[', (size_t) (strcspn (end, ";")));
            bool claim = add && used && !indexed && *name && plain_step;
            if (pass == 0) {
                bool known = false;
                for (int i = 0; i < n_counters; i++)
                    known |= !strcmp (counters[i], name);
                if (claim && !known && n_counters < S_MAX_OBJECTS)
                    snprintf (counters[n_counters++], sizeof counters[0], "%s", name);
                continue;
            }
            bool counter = false;
            for (int i = 0; i < n_counters; i++)
                counter |= !strcmp (counters[i], name);
            if (claim && counter) {
                if (claims++ == 0)
                    kf_descriptor_snip (ev->counter_snip, call, 0, (regoff_t) (end - call) + 1);
            }
            else if (!(setup && counter && !indexed)) {
                if (ev->shared_atomic++ == 0)
                    kf_descriptor_snip (ev->shared_snip, call, 0, (regoff_t) (end - call) + 1);
            }
        }
    }
    ev->counter = ev->shared_atomic ? 0 : claims;
    if (ev->shared_atomic && claims)
        ev->counter_snip[0] = 0;
}

//  Every lock taken: one whose region up to its unlock only takes the
//  next work index (`blk = s->next++;`, `b = next; next += 1;`) is
//  dynamic scheduling written with a lock (round 5); any other guards
//  shared data.
static void
s_locks (const char *code, kf_host_evidence_t *ev)
{
    const char *p = code;
    regmatch_t m[1];
    while (*p && regexec (&s_re[R_LOCK], p, 1, m, p == code ? 0 : REG_NOTBOL) == 0) {
        const char *at = p + m[0].rm_so;
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
        const char *stmt = strchr (at, ';');
        const char *unlock = stmt ? strstr (stmt, "unlock") : NULL;
        bool claim = false;
        if (unlock && unlock - stmt < 240) {
            char *region = strndup (stmt + 1, (size_t) (unlock - stmt - 1));
            //  An index taken and moved on, nothing else written: no array
            //  element, no call but the unlock's own name before it.
            claim = region
                    && s_matches ("(\\+\\+|\\+=)%.0s%.0s", "", region)
                    && !s_matches ("\\]" W "([-+*/|&^]?=[^=]|\\+\\+|--)|\\(" W "[^)]*\\)" W
                                   "[;{]%.0s%.0s", "", region);
            free (region);
        }
        regoff_t len = m[0].rm_eo - m[0].rm_so;
        if (claim) {
            if (ev->lock_claim++ == 0 && !ev->counter_snip[0])
                kf_descriptor_snip (ev->counter_snip, at, 0, len);
        }
        else if (ev->lock++ == 0)
            kf_descriptor_snip (ev->lock_snip, at, 0, len);
    }
}

int
kf_descriptor_host (const char *code, kf_host_evidence_t *ev)
{
    pthread_once (&s_once, s_compile);
    memset (ev, 0, sizeof *ev);
    if (!s_ok)
        return -1;
    ev->autovec = s_autovec (code, ev->autovec_snip);
    ev->packing = kf_descriptor_packing (code, ev->packing_snip);
    ev->blocking = s_count_loops (&s_re[R_BLOCK], 3, true, code, ev->blocking_snip,
                                  s_block_loop);
    if (!ev->blocking)
        ev->blocking = s_count_loops (&s_re[R_BLOCK_NUMBER], 1, true, code,
                                      ev->blocking_snip, s_block_number_loop);
    if (!ev->blocking)
        ev->blocking = s_count_loops (&s_re[R_CLAIMED_BLOCK], 3, false, code,
                                      ev->blocking_snip, s_claimed_block);
    if (!ev->blocking)
        ev->blocking = s_count_loops (&s_re[R_CLAIMED_NUMBER], 1, false, code,
                                      ev->blocking_snip, s_claimed_number);
    ev->named_block = s_count_loops (&s_re[R_NAMED], 3, false, code, ev->named_snip,
                                     s_named_loop);
    s_atomics (code, ev);
    s_locks (code, ev);
    //  _Atomic objects used through operators only (n += 1): shared data.
    if (!ev->shared_atomic && !ev->counter && kf_descriptor_count (&s_re[R_CALL], code, NULL) == 0)
        ev->shared_atomic = kf_descriptor_count (&s_re[R_TYPE], code, ev->shared_snip);
    //  A claim under a lock is a work counter as an atomic one is.
    ev->counter += ev->lock_claim;
    if (!ev->shared_atomic)
        ev->shared_snip[0] = 0;
    return 0;
}
