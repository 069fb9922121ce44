/*  kf_descriptor_regex.c - the descriptors' regular expressions, compiled
 *  once per reader (kf_descriptor_regex.h).
 */
#include "kf_descriptor_regex.h"
#include <stdio.h>

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
