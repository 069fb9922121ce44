/*  kfctl_text.c - long worker text made fit to show (kfctl_text.h).
 *
 *  A log cut at a byte count ends mid-word and hides how much is gone; a
 *  name the worker gave the user's file ("kernel.c" in its build folder,
 *  "problem.py" in the reference runner's) sends the user looking for a
 *  file they do not have. The stored text stays as the worker wrote it
 *  (it is the record); only what kfctl prints is cut and renamed.
 */
#include "kfctl_text.h"
#include "kf_str.h"
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The count of a note the worker left where it cut ("(12 more lines)"
//  opening a traceback, "[12 more lines omitted]" closing a compiler
//  log) in the line at LINE (LEN bytes), or 0 when it is no such note.
static int
s_note (const char *line, size_t len)
{
    int n = 0, used = 0;
    char open = len ? line[0] : 0;
    if ((open != '(' && open != '[') || sscanf (line + 1, "%d more line%n", &n, &used) != 1
        || n < 1 || (size_t) used + 1 > len || line[len - 1] != (open == '(' ? ')' : ']'))
        return 0;
    return n;
}

char *
kf_ctl_text_lines (const char *text, int max_lines, bool from_end)
{
    size_t len = strlen (text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == '\r' || text[len - 1] == ' '))
        len--;
    int lines = len ? 1 : 0;
    for (size_t i = 0; i < len; i++)
        lines += text[i] == '\n';
    if (max_lines < 1)
        max_lines = 1;
    if (lines <= max_lines)
        return kf_strdupf ("%.*s", (int) len, text);
    int dropped = lines - max_lines;
    if (!from_end) {
        size_t end = 0;
        for (int seen = 0; end < len; end++)
            if (text[end] == '\n' && ++seen == max_lines)
                break;
        //  The worker's own note, now among the lines left out, counts
        //  its lines instead of itself.
        const char *last = text + len;
        while (last > text && last[-1] != '\n')
            last--;
        int earlier = s_note (last, (size_t) (text + len - last));
        if (earlier)
            dropped += earlier - 1;
        return kf_strdupf ("%.*s\n(%d more line%s)", (int) end, text, dropped,
                           dropped == 1 ? "" : "s");
    }
    size_t start = 0;
    for (int seen = 0; start < len; start++)
        if (text[start] == '\n' && ++seen == dropped)
            break;
    int earlier = s_note (text, strcspn (text, "\n"));
    if (earlier)
        dropped += earlier - 1;
    return kf_strdupf ("(%d more line%s)\n%.*s", dropped, dropped == 1 ? "" : "s",
                       (int) (len - start - 1), text + start + 1);
}

//  Whether C can be part of a file name: "mykernel.c" is not "kernel.c".
static bool
s_name_char (char c)
{
    return isalnum ((unsigned char) c) || c == '_' || c == '-' || c == '.';
}

char *
kf_ctl_text_rename (const char *text, const char *ours, const char *theirs)
{
    size_t n = strlen (ours), m = strlen (theirs), hits = 0;
    for (const char *p = strstr (text, ours); p; p = strstr (p + n, ours))
        hits++;
    char *out = malloc (strlen (text) + hits * (m > n ? m - n : 0) + 1);
    if (!out)
        return NULL;
    char *w = out;
    const char *r = text;
    for (const char *p = strstr (r, ours); p; p = strstr (r, ours)) {
        bool whole = (p == text || !s_name_char (p[-1]) || p[-1] == '/')
                     && !s_name_char (p[n]) ;
        //  A name is followed by ':' (a location), a quote or a blank;
        //  a trailing '.' ends a sentence.
        if (p[n] == '.' && (p[n + 1] == 0 || isspace ((unsigned char) p[n + 1])))
            whole = p == text || !s_name_char (p[-1]) || p[-1] == '/';
        memcpy (w, r, (size_t) (p - r));
        w += p - r;
        memcpy (w, whole ? theirs : ours, whole ? m : n);
        w += whole ? m : n;
        r = p + n;
    }
    strcpy (w, r);
    return out;
}

void
kf_ctl_text_shape (json_t *shape, char *buf, size_t size)
{
    size_t used = 0;
    used += (size_t) snprintf (buf, size, "[");
    size_t i;
    json_t *d;
    json_array_foreach (shape, i, d) {
        if (used >= size)
            break;
        used += (size_t) snprintf (buf + used, size - used, "%s%lld", i ? ", " : "",
                                   (long long) json_integer_value (d));
    }
    if (used < size)
        snprintf (buf + used, size - used, "]");
}
