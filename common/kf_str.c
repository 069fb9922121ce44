/*  kf_str.c - formatted strings for error messages. */
#include "kf_str.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

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
