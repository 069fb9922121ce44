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
//  A constant added to a plain counter: the shape of dynamic scheduling.
static const char s_counter_p[] =
    "\\b(atomic_fetch_(add|sub)(_explicit)?|__atomic_(fetch_add|add_fetch|fetch_sub|sub_fetch)|"
    "__sync_(fetch_and_add|add_and_fetch|fetch_and_sub|sub_and_fetch))" W "\\(" W LVAL W ","
    W "([0-9]+|[A-Z][A-Z0-9_]*)[uUlL]*" W "[,)]";
//  Setting the counter up before the threads start.
static const char s_neutral_p[] =
    "\\b(atomic_(init|store)(_explicit)?|__atomic_store(_n)?)" W "\\(" W LVAL W ",";
static const char s_atomic_type_p[] =
    "\\b(_Atomic|atomic_(bool|char|schar|uchar|short|ushort|int|uint|long|ulong|llong|"
    "ullong|size_t|ptrdiff_t|intptr_t|uintptr_t|flag))\\b";
//  A local one-dimensional buffer without an initialiser: `float wp[KB * NP];`.
static const char s_buffer_p[] =
    "(^|[;{}])" W "(float|double)[[:space:]]+(" NAME ")" W "\\[[^];[]+\\]"
    "(" W "__attribute__" W "\\(\\([^;]*\\)\\))?" W ";";

enum { R_LOOP, R_LIBM, R_CALL, R_COUNTER, R_NEUTRAL, R_TYPE, R_BUFFER, R_COUNT };
static const char *const s_patterns[R_COUNT] = {
    s_loop_p, s_libm_p, s_atomic_call_p, s_counter_p, s_neutral_p, s_atomic_type_p, s_buffer_p };
static regex_t s_re[R_COUNT];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static bool s_ok;

static void
s_compile (void)
{
    s_ok = true;
    for (int i = 0; i < R_COUNT; i++)
        if (regcomp (&s_re[i], s_patterns[i], REG_EXTENDED) != 0) {
            fprintf (stderr, "kf_descriptor_host: pattern %d does not compile\n", i);
            s_ok = false;
        }
}

//  Copies TEXT[so, eo) into SNIP, white space squeezed.
static void
s_snip (char *snip, const char *text, regoff_t so, regoff_t eo)
{
    size_t n = 0;
    bool space = false;
    for (regoff_t k = so; k < eo && n + 4 < KF_HOST_SNIP; k++) {
        char c = text[k];
        if (isspace ((unsigned char) c) || (n == 0 && (c == ';' || c == '{' || c == '}'))) {
            space = n > 0;
            continue;
        }
        if (space)
            snip[n++] = ' ';
        space = false;
        snip[n++] = c;
    }
    if (n + 4 >= KF_HOST_SNIP) {
        memcpy (snip + n, "...", 3);
        n += 3;
    }
    snip[n] = 0;
}

//  Counts matches of RE in TEXT; the first goes to SNIP when not NULL.
static int
s_count (const regex_t *re, const char *text, char *snip)
{
    int count = 0;
    const char *p = text;
    regmatch_t m[1];
    while (*p && regexec (re, p, 1, m, p == text ? 0 : REG_NOTBOL) == 0) {
        if (count++ == 0 && snip)
            s_snip (snip, p, m[0].rm_so, m[0].rm_eo);
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

//  Whether PATTERN (printf format with the name VAR once or twice)
//  matches TEXT.
static bool
s_matches (const char *fmt, const char *var, const char *text)
{
    char pattern[512];
    snprintf (pattern, sizeof pattern, fmt, var, var);
    regex_t re;
    if (regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return false;
    bool hit = regexec (&re, text, 0, NULL, 0) == 0;
    regfree (&re);
    return hit;
}

//  The body of the loop whose header ends at P: a braced block or one
//  statement. Returned as a copy (the caller frees it), NULL when unclosed.
static char *
s_body (const char *p)
{
    while (isspace ((unsigned char) *p))
        p++;
    const char *end = p;
    if (*p == '{') {
        int depth = 0;
        for (; *end; end++) {
            depth += *end == '{';
            depth -= *end == '}';
            if (depth == 0)
                break;
        }
    }
    else
        end = strchr (p, ';');
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
                s_snip (snip, p, m[0].rm_so, m[0].rm_eo);
            free (body);
        }
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

//  Packing: a local buffer filled element by element from an operand read
//  at a computed (strided) position, `wp[k * NP + c] = src[cc * K + k]`.
static int
s_packing (const char *code, char *snip)
{
    int count = 0;
    const char *p = code;
    regmatch_t m[4];
    while (*p && regexec (&s_re[R_BUFFER], p, 4, m, p == code ? 0 : REG_NOTBOL) == 0) {
        char name[64];
        size_t len = (size_t) (m[3].rm_eo - m[3].rm_so);
        if (len < sizeof name) {
            memcpy (name, p + m[3].rm_so, len);
            name[len] = 0;
            char pattern[256];
            snprintf (pattern, sizeof pattern,
                      "\\b%s" W "\\[[^];=]*\\]" W "=" W NAME W "\\[[^];]*\\*[^];]*\\]", name);
            regex_t re;
            if (regcomp (&re, pattern, REG_EXTENDED) == 0) {
                char one[KF_HOST_SNIP];
                if (s_count (&re, code, one) > 0 && count++ == 0)
                    memcpy (snip, one, sizeof one);
                regfree (&re);
            }
        }
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

int
kf_descriptor_host (const char *code, kf_host_evidence_t *ev)
{
    pthread_once (&s_once, s_compile);
    memset (ev, 0, sizeof *ev);
    if (!s_ok)
        return -1;
    ev->autovec = s_autovec (code, ev->autovec_snip);
    ev->packing = s_packing (code, ev->packing_snip);

    //  Atomics: a fetch-add of a constant to a plain counter (and its
    //  initialisation) is how threads take the next block of work; any
    //  other atomic operation (accumulation into an output, a flag, a
    //  compare-and-swap) synchronises on shared data.
    int calls = s_count (&s_re[R_CALL], code, ev->shared_snip);
    int counter = s_count (&s_re[R_COUNTER], code, ev->counter_snip);
    int neutral = s_count (&s_re[R_NEUTRAL], code, NULL);
    if (counter > 0 && calls == counter + neutral)
        ev->counter = counter;
    else if (calls > 0)
        ev->shared_atomic = calls;
    else
        ev->shared_atomic = s_count (&s_re[R_TYPE], code, ev->shared_snip);
    if (!ev->shared_atomic)
        ev->shared_snip[0] = 0;
    return 0;
}
