/*  kf_source.c - `#define` lines of a kernel source (kf_source.h). */
#include "kf_source.h"

#include <stdbool.h>
#include <string.h>

static bool
s_blank (char c)
{
    return c == ' ' || c == '\t';
}

static const char *
s_skip_blanks (const char *p, const char *end)
{
    while (p < end && s_blank (*p))
        p++;
    return p;
}

const char *
kf_source_define (const char *source, size_t size, const char *name, size_t *len)
{
    size_t name_len = strlen (name);
    const char *p = source, *end = source + size;
    while (p < end) {
        const char *nl = memchr (p, '\n', (size_t) (end - p));
        const char *eol = nl ? nl : end;
        const char *q = s_skip_blanks (p, eol);
        if (q < eol && *q == '#') {
            q = s_skip_blanks (q + 1, eol);
            if (eol - q > 7 && !memcmp (q, "define", 6) && s_blank (q[6])) {
                q = s_skip_blanks (q + 7, eol);
                if ((size_t) (eol - q) > name_len && !memcmp (q, name, name_len)
                    && s_blank (q[name_len])) {
                    q = s_skip_blanks (q + name_len, eol);
                    *len = (size_t) (eol - q);
                    return q;
                }
            }
        }
        p = eol + 1;
    }
    return NULL;
}
