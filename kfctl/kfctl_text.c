/*  kfctl_text.c - long worker text made fit to show (kfctl_text.h).
 *
 *  A log cut at a byte count ends mid-word and hides how much is gone.
 *  The stored text stays as the worker wrote it (it is the record); only
 *  what kfctl prints is cut. (The user's file names are given back by
 *  common/kf_rename.h.)
 */
#include "kfctl_text.h"
#include "kf_str.h"
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
