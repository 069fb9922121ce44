/*  kf_str.c - formatted strings for error messages, and a string's
 *  place in a list of names (kf_str.h). */
#include "kf_str.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *
s_vformat (const char *fmt, va_list ap)
{
    char *text = NULL;
    if (vasprintf (&text, fmt, ap) < 0)
        text = NULL;
    return text;
}

char *
kf_strdupf (const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    char *text = s_vformat (fmt, ap);
    va_end (ap);
    return text;
}

int
kf_fail (char **err, const char *fmt, ...)
{
    va_list ap;
    va_start (ap, fmt);
    char *text = s_vformat (fmt, ap);
    va_end (ap);
    if (err)
        *err = text;
    else
        free (text);
    return -1;
}

bool
kf_str_in (const char *s, const char *const *list)
{
    for (size_t i = 0; list[i]; i++)
        if (!strcmp (s, list[i]))
            return true;
    return false;
}
