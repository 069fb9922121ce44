/*  kf_descriptor_regex.c - the descriptors' regular expressions, compiled
 *  once per reader (kf_descriptor_regex.h).
 */
#include "kf_descriptor_regex.h"
#include "kf_descriptor_host.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>

bool
kf_descriptor_regcomp (regex_t *re, const char *const *patterns, int n, const char *who)
{
    bool ok = true;
    for (int i = 0; i < n; i++)
        if (regcomp (&re[i], patterns[i], REG_EXTENDED) != 0) {
            fprintf (stderr, "%s: pattern %d does not compile\n", who, i);
            ok = false;
        }
    return ok;
}

//  Copies TEXT[so, eo) into SNIP, white space squeezed. A step may write
//  two bytes (a space and a character), and "..." and the NUL follow:
//  n + 5 < KF_HOST_SNIP keeps all of them inside (with n + 4 a long
//  snippet ending on a space wrote the NUL one past the end).
void
kf_descriptor_snip (char *snip, const char *text, regoff_t so, regoff_t eo)
{
    size_t n = 0;
    bool space = false;
    for (regoff_t k = so; k < eo && n + 5 < KF_HOST_SNIP; k++) {
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
    if (n + 5 >= KF_HOST_SNIP) {
        memcpy (snip + n, "...", 3);
        n += 3;
    }
    snip[n] = 0;
}

//  Counts matches of RE in TEXT; the first goes to SNIP when not NULL.
int
kf_descriptor_count (const regex_t *re, const char *text, char *snip)
{
    int count = 0;
    const char *p = text;
    regmatch_t m[1];
    while (*p && regexec (re, p, 1, m, p == text ? 0 : REG_NOTBOL) == 0) {
        if (count++ == 0 && snip)
            kf_descriptor_snip (snip, p, m[0].rm_so, m[0].rm_eo);
        p += m[0].rm_eo > 0 ? m[0].rm_eo : 1;
    }
    return count;
}
