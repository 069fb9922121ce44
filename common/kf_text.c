/*  kf_text.c - long text cut at whole lines (kf_text.h).
 *
 *  A message that holds a traceback keeps its end (the problem's own
 *  frames and the exception); a cut at a byte count would start mid-word
 *  and hide how much is gone, so the cut moves to the next line and the
 *  lines before it are counted. kfctl folds that count into its own when
 *  it cuts again (kfctl_text.c).
 */
#include "kf_text.h"
#include "kf_str.h"

#include <regex.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *
kf_text_tail (const char *text, size_t max)
{
    size_t len = strlen (text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
        len--;
    size_t start = len > max ? len - max : 0;
    bool partial = false;
    if (start) {
        const char *nl = memchr (text + start, '\n', len - start);
        const char *blank = memchr (text + start, ' ', len - start);
        if (nl && nl + 1 < text + len)
            start = (size_t) (nl + 1 - text);
        else {              /* within the last line: from a word, marked */
            partial = true;
            if (blank && blank + 1 < text + len)
                start = (size_t) (blank + 1 - text);
        }
    }
    int left = 0;
    for (size_t i = 0; i < start; i++)
        left += text[i] == '\n';
    char note[48] = "";
    if (left)
        snprintf (note, sizeof note, "(%d more line%s)\n", left, left == 1 ? "" : "s");
    return kf_strdupf ("%s%s%.*s", note, partial ? "... " : "", (int) (len - start),
                       text + start);
}

size_t
kf_text_last_line (const char *text, const char **line)
{
    size_t len = text ? strlen (text) : 0;
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
        len--;
    size_t start = len;
    while (start && text[start - 1] != '\n')
        start--;
    *line = text ? text + start : "";
    return len - start;
}

char *
kf_text_head (const char *text, size_t max)
{
    size_t len = strlen (text);
    while (len && (text[len - 1] == '\n' || text[len - 1] == ' ' || text[len - 1] == '\r'))
        len--;
    if (len <= max)
        return kf_strdupf ("%.*s", (int) len, text);
    size_t end = max;
    while (end > 0 && text[end] != '\n')
        end--;
    bool partial = end == 0;        /* the first line alone is past MAX */
    if (partial) {
        end = max;
        while (end > max / 2 && text[end] != ' ')
            end--;
        if (end <= max / 2)
            end = max;
    }
    int left = 0;
    for (size_t i = end; i < len; i++)
        left += text[i] == '\n';
    if (partial && !left)
        return kf_strdupf ("%.*s ...", (int) end, text);
    if (partial)
        return kf_strdupf ("%.*s ...\n(%d more line%s)", (int) end, text, left,
                           left == 1 ? "" : "s");
    return kf_strdupf ("%.*s\n(%d more line%s)", (int) end, text, left, left == 1 ? "" : "s");
}

char *
kf_text_head_in (char *buf, size_t size, const char *prefix, const char *text, size_t max,
                 const char *suffix)
{
    char *cut = kf_text_head (text ? text : "", max);
    snprintf (buf, size, "%s%s%s", prefix, cut ? cut : "", suffix);
    free (cut);
    return buf;
}

bool
kf_text_matches (const char *text, const char *pattern)
{
    regex_t re;
    if (!text || regcomp (&re, pattern, REG_EXTENDED | REG_NOSUB) != 0)
        return false;
    bool hit = regexec (&re, text, 0, NULL, 0) == 0;
    regfree (&re);
    return hit;
}
