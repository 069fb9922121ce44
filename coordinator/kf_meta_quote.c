/*  kf_meta_quote.c - a factual correction's quote of the task's text
 *  (kf_meta_quote.h).
 */
#include "kf_meta_quote.h"
#include "kf_meta_edits.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  A copy of S (N bytes) with each run of spaces, tabs and line breaks
//  made one space (caller frees; NULL without memory).
static char *
s_squeezed (const char *s, size_t n)
{
    char *out = malloc (n + 1);
    size_t k = 0;
    for (size_t i = 0; out && i < n; i++) {
        bool space = s[i] == ' ' || s[i] == '\n' || s[i] == '\t' || s[i] == '\r';
        if (space && k > 0 && out[k - 1] == ' ')
            continue;
        out[k++] = space ? ' ' : s[i];
    }
    if (out)
        out[k] = '\0';
    return out;
}

//  Whether TEXT quotes KF_META_QUOTE_MIN bytes or more of FLAT (a task's
//  text squeezed), into QUOTE.
static bool
s_quoted_in (const char *text, const char *flat, char *quote, size_t size)
{
    static const char *const opens[] = { "\"", "\xe2\x80\x9c", NULL };
    static const char *const closes[] = { "\"", "\xe2\x80\x9d", NULL };
    for (int k = 0; opens[k]; k++) {
        for (const char *q = strstr (text, opens[k]); q;) {
            const char *in = q + strlen (opens[k]);
            const char *end = strstr (in, closes[k]);
            if (!end)
                break;
            size_t n = (size_t) (end - in);
            if (n >= KF_META_QUOTE_MIN && n < 2000) {
                char *span = s_squeezed (in, n);
                bool found = span && strlen (span) >= KF_META_QUOTE_MIN && strstr (flat, span);
                if (found)
                    snprintf (quote, size, "%s", span);
                free (span);
                if (found)
                    return true;
            }
            q = strstr (end + strlen (closes[k]), opens[k]);
        }
    }
    return false;
}

bool
kf_meta_quotes_task (const char *text, const char *task, char *quote, size_t size)
{
    char *flat = s_squeezed (task, strlen (task));
    bool found = flat && s_quoted_in (text, flat, quote, size);
    free (flat);
    return found;
}
