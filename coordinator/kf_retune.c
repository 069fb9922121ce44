/*  kf_retune.c - a template re-centred on its sweep's winner
 *  (kf_retune.h).
 */
#include "kf_retune.h"
#include "kf_json.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool
kf_retune_is_template (const char *source)
{
    return source && strstr (source, "kf-tune:") != NULL;
}

json_t *
kf_retune_winner (json_t *configs)
{
    json_t *full = NULL, *screen = NULL;
    double full_s = 0, screen_s = 0;
    size_t i;
    json_t *row;
    json_array_foreach (configs, i, row) {
        if (strcmp (kf_jstr (row, "verdict"), "correct")
            || !json_is_object (json_object_get (row, "params")))
            continue;
        double f = json_is_number (json_object_get (row, "full_speedup"))
                       ? kf_jnum (row, "full_speedup", 0)
                   : !strcmp (kf_jstr (row, "fidelity"), "full") ? kf_jnum (row, "speedup", 0)
                                                                 : 0;
        double s = kf_jnum (row, "speedup", 0);
        if (f > full_s) {
            full = row;
            full_s = f;
        }
        if (s > screen_s) {
            screen = row;
            screen_s = s;
        }
    }
    return full ? full : screen;
}

//  The identifier at P (at most SIZE - 1 characters) into BUF; its end.
static const char *
s_ident (const char *p, char *buf, size_t size)
{
    size_t n = 0;
    while ((isalnum ((unsigned char) *p) || *p == '_') && n + 1 < size)
        buf[n++] = *p++;
    buf[n] = 0;
    return p;
}

//  A parameter's value as text ("64", "FAST").
static void
s_value (json_t *v, char *buf, size_t size)
{
    if (json_is_integer (v))
        snprintf (buf, size, "%lld", (long long) json_integer_value (v));
    else if (json_is_string (v))
        snprintf (buf, size, "%s", json_string_value (v));
    else if (json_is_number (v))
        snprintf (buf, size, "%.17g", json_number_value (v));
    else
        buf[0] = 0;
}

char *
kf_retune_source (const char *source, json_t *params, bool *changed)
{
    if (changed)
        *changed = false;
    size_t cap = strlen (source) + 1;
    char *out = malloc (cap);
    if (!out)
        return NULL;
    size_t used = 0;
    for (const char *line = source; *line; ) {
        const char *eol = strchr (line, '\n');
        size_t n = eol ? (size_t) (eol - line) + 1 : strlen (line);
        //  A line grows by at most a value's length.
        if (used + n + 64 + 1 > cap) {
            char *grown = realloc (out, cap + n + 64 + 1);
            if (!grown) {
                free (out);
                return NULL;
            }
            out = grown;
            cap += n + 64 + 1;
        }
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        char name[64] = "", value[64] = "";
        const char *name_end = NULL;
        if (*p == '#') {
            p++;
            while (*p == ' ' || *p == '\t')
                p++;
            if (!strncmp (p, "define", 6) && (p[6] == ' ' || p[6] == '\t')) {
                p += 6;
                while (*p == ' ' || *p == '\t')
                    p++;
                name_end = s_ident (p, name, sizeof name);
            }
        }
        json_t *v = *name ? json_object_get (params, name) : NULL;
        if (v)
            s_value (v, value, sizeof value);
        if (v && *value && (*name_end == ' ' || *name_end == '\t')) {
            //  "#define NAME old  // comment" -> "#define NAME new  // comment"
            const char *old = name_end;
            while (*old == ' ' || *old == '\t')
                old++;
            const char *old_end = old;
            while (*old_end && !isspace ((unsigned char) *old_end))
                old_end++;
            size_t vlen = strlen (value);
            if (changed && ((size_t) (old_end - old) != vlen || strncmp (old, value, vlen)))
                *changed = true;
            used += (size_t) snprintf (out + used, cap - used, "%.*s%s", (int) (old - line), line,
                                       value);
            memcpy (out + used, old_end, n - (size_t) (old_end - line));
            used += n - (size_t) (old_end - line);
        }
        else {
            memcpy (out + used, line, n);
            used += n;
        }
        out[used] = 0;
        line += n;
    }
    return out;
}
