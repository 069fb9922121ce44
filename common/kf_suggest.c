/*  kf_suggest.c - the nearest known word to a mistyped one (kf_suggest.h):
 *  an optimal-string-alignment distance over short words, bounded so a
 *  long hostile input costs no more than a short one.
 */
#include "kf_suggest.h"
#include <ctype.h>
#include <string.h>

/* Words longer than this are no typo of a command or a field name. */
#define S_MAX_LEN 48

static size_t
s_min3 (size_t a, size_t b, size_t c)
{
    size_t m = a < b ? a : b;
    return m < c ? m : c;
}

/* Edit distance between A and B (both at most S_MAX_LEN long), with a
 * swap of neighbours counted as one edit, case ignored. */
static size_t
s_distance (const char *a, size_t la, const char *b, size_t lb)
{
    size_t d[S_MAX_LEN + 1][S_MAX_LEN + 1];
    for (size_t i = 0; i <= la; i++)
        d[i][0] = i;
    for (size_t j = 0; j <= lb; j++)
        d[0][j] = j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            size_t cost = tolower ((unsigned char) a[i - 1]) != tolower ((unsigned char) b[j - 1]);
            d[i][j] = s_min3 (d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
            if (i > 1 && j > 1
                && tolower ((unsigned char) a[i - 1]) == tolower ((unsigned char) b[j - 2])
                && tolower ((unsigned char) a[i - 2]) == tolower ((unsigned char) b[j - 1])
                && d[i - 2][j - 2] + 1 < d[i][j])
                d[i][j] = d[i - 2][j - 2] + 1;
        }
    return d[la][lb];
}

const char *
kf_suggest (const char *word, const char *const *known, size_t n)
{
    if (!word || !known)
        return NULL;
    size_t lw = strlen (word);
    if (lw == 0 || lw > S_MAX_LEN)
        return NULL;
    const char *best = NULL;
    size_t best_d = (size_t) -1;
    for (size_t i = 0; i < n; i++) {
        if (!known[i])
            continue;
        size_t lk = strlen (known[i]);
        if (lk == 0 || lk > S_MAX_LEN)
            continue;
        size_t d = s_distance (word, lw, known[i], lk);
        /* About a third of the longer word may differ, at least one
         * letter: "sumbit" is submit, "xyz" is nothing. */
        size_t longer = lw > lk ? lw : lk;
        size_t limit = longer / 3 > 0 ? longer / 3 : 1;
        if (d <= limit && d < best_d) {
            best = known[i];
            best_d = d;
        }
    }
    return best;
}

const char *
kf_suggest_list (const char *word, const char *const *known)
{
    size_t n = 0;
    while (known && known[n])
        n++;
    return kf_suggest (word, known, n);
}
