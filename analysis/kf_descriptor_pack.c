/*  kf_descriptor_pack.c - packing read by code for kf_descriptor_host.c
 *  (kf_descriptor_pack.h): a local or allocated buffer filled from an
 *  operand read at computed positions, element by element or by vector
 *  copies.
 */
#include "kf_descriptor_pack.h"
#include "kf_descriptor_host.h"
#include "kf_descriptor_regex.h"

#include <pthread.h>
#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define W "[[:space:]]*"
#define NAME "[[:alpha:]_][[:alnum:]_]*"

//  A local buffer without an initialiser, of one dimension or more:
//  `float wp[KB * NP];`, `float Kp[DMAX][KB];` (round 28: a K^T packed
//  into a three-dimensional buffer read as nothing). Its name: group 3.
static const char s_buffer_p[] =
    "(^|[;{}])" W "(float|double)[[:space:]]+(" NAME ")" W "(\\[[^];[]+\\]" W ")+"
    "(__attribute__" W "\\(\\([^;]*\\)\\))?" W ";";
//  A buffer taken from an allocator, the kernel's scratch or the C
//  library's: `float *restrict kt = (float *) scratch_alloc (ctx, n)`,
//  `double *wp = aligned_alloc (64, n)`. Its name: group 6.
static const char s_alloc_buffer_p[] =
    "(^|[;{}])" W "(const[[:space:]]+)?(float|double)" W "\\*" W
    "((restrict|__restrict|__restrict__)[[:space:]]+)?(" NAME ")" W "=" W
    "[^;]*\\b[[:alnum:]_]*(alloc|scratch)[[:alnum:]_]*" W "\\(";

enum { R_BUFFER, R_ALLOC_BUFFER, R_COUNT };
static const char *const s_patterns[R_COUNT] = { s_buffer_p, s_alloc_buffer_p };
static regex_t s_re[R_COUNT];
static pthread_once_t s_once = PTHREAD_ONCE_INIT;
static bool s_ok;

static void
s_compile (void)
{
    s_ok = kf_descriptor_regcomp (s_re, s_patterns, R_COUNT, "kf_descriptor_pack");
}

//  Round 51: or filled by vectors, a store of a load (or a memcpy) into
//  NAME or a pointer set into it (`dst = pk + p * R * 64`: v copied into
//  64-column panels). The store's text goes to SNIP.
static bool
s_vector_fill (const char *code, const char *name, char *snip, bool alias)
{
    char pattern[320];
    snprintf (pattern, sizeof pattern,
              alias ? "\\b(" NAME ")" W "=" W "%s" W "\\+%.0s"
                    : "_mm[0-9]*_store[a-z]*_p[sd]" W "\\(" W "(\\([^()]*\\))?" W "%s\\b[^;]*"
                      "_mm[0-9]*_load[a-z]*_p[sd]|\\bmemcpy" W "\\(" W "(\\([^()]*\\))?" W
                      "%s\\b",
              name, name);
    regex_t re;
    regmatch_t m[2];
    if (strlen (name) > 60 || regcomp (&re, pattern, REG_EXTENDED))
        return false;
    bool found = !alias && kf_descriptor_count (&re, code, snip) > 0;
    for (const char *p = code;
         alias && !found && regexec (&re, p, 2, m, p == code ? 0 : REG_NOTBOL) == 0;
         p += m[0].rm_eo > 0 ? m[0].rm_eo : 1) {
        char to[64];
        int len = (int) (m[1].rm_eo - m[1].rm_so);
        snprintf (to, sizeof to, "%.*s", len < 63 ? len : 63, p + m[1].rm_so);
        found = s_vector_fill (code, to, snip, false);
    }
    regfree (&re);
    return found;
}

//  Packing: a local buffer filled element by element from an operand read
//  at a computed (strided) position, `wp[k * NP + c] = src[cc * K + k]`,
//  `Kp[d][j] = k[(j0 + j) * D + d] * scale`: the buffers RE declares,
//  each named by its group GROUP; the first fill's text in SNIP (when the
//  count is 0 on entry).
static int
s_packing_by (const regex_t *re, int group, const char *code, char *snip, int count)
{
    const char *p = code;
    regmatch_t m[8];
    while (*p && regexec (re, p, 8, m, p == code ? 0 : REG_NOTBOL) == 0) {
        char name[64];
        size_t len = (size_t) (m[group].rm_eo - m[group].rm_so);
        if (len < sizeof name) {
            memcpy (name, p + m[group].rm_so, len);
            name[len] = 0;
            char pattern[256];
            snprintf (pattern, sizeof pattern,
                      "\\b%s" W "(\\[[^];=]*\\]" W ")+=" W NAME W "\\[[^];]*\\*[^];]*\\]", name);
            regex_t fill;
            if (regcomp (&fill, pattern, REG_EXTENDED) == 0) {
                char one[KF_HOST_SNIP];
                if ((kf_descriptor_count (&fill, code, one) > 0 || s_vector_fill (code, name, one, false)
                     || s_vector_fill (code, name, one, true))
                    && count++ == 0)
                    memcpy (snip, one, sizeof one);
                regfree (&fill);
            }
        }
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}

int
kf_descriptor_packing (const char *code, char *snip)
{
    pthread_once (&s_once, s_compile);
    if (!s_ok)
        return 0;
    int count = s_packing_by (&s_re[R_BUFFER], 3, code, snip, 0);
    return s_packing_by (&s_re[R_ALLOC_BUFFER], 6, code, snip, count);
}
