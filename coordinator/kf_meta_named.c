/*  kf_meta_named.c - the candidates a meta-prompter's sentence names
 *  (kf_meta_named.h), for the evidence rules of kf_meta_edits.c.
 */
#include "kf_meta_named.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

//  Whether P begins a figure rather than a candidate's number: a number
//  with a decimal point or followed by a unit ("2.08 ms", "31x", "40%").
static bool
s_figure (const char *p)
{
    if (*p < '0' || *p > '9')
        return false;
    while ((*p >= '0' && *p <= '9') || *p == '.')
        if (*p++ == '.')
            return true;
    if (*p == ' ')
        p++;
    static const char *const units[] = { "ms", "us", "ns", "x", "%", "GB", "GFLOP", "MiB",
                                         "KiB", "s" };
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        size_t n = strlen (units[i]);
        if (!strncmp (p, units[i], n)
            && !((p[n] >= 'a' && p[n] <= 'z') || (p[n] >= 'A' && p[n] <= 'Z')))
            return true;
    }
    return false;
}

int
kf_meta_named (const char *text, json_t *outcomes, bool (*want) (json_t *, long long),
         long long *first)
{
    long long seen[32];
    int n = 0;
    for (const char *p = text; *p; p++) {
        bool list = false;
        if (*p == '#')
            p++;
        else if (!strncasecmp (p, "candidate", 9)) {
            p += 9;
            if (*p == 's')
                p++;
            list = true;
        }
        else
            continue;
        for (;;) {
            while (*p == ' ' || *p == '#' || *p == '\t')
                p++;
            if (*p < '0' || *p > '9')
                break;
            char *end;
            long long id = strtoll (p, &end, 10);
            p = end;
            bool dup = false;
            for (int k = 0; k < n; k++)
                dup = dup || seen[k] == id;
            if (!dup && n < 32 && want (outcomes, id)) {
                if (!n && first)
                    *first = id;
                seen[n++] = id;
            }
            //  Round 11: "Candidates 4 (1.80 ms, full) and 5 (1.71 ms)": a
            //  number's figures in brackets stand between it and the next.
            const char *q = p;
            while (*q == ' ')
                q++;
            if (list && *q == '(') {
                int depth = 0;
                for (; *q; q++) {
                    depth += (*q == '(') - (*q == ')');
                    if (!depth)
                        break;
                }
                if (*q)
                    p = q + 1;
            }
            //  The next of a list: ", ", " and ", "/", " & ".
            q = p;
            bool comma = false;
            for (; *q == ' ' || *q == ','; q++)
                comma = comma || *q == ',';
            if (!list)
                break;
            //  Round 51: "candidates 4, 2.08 ms, and 6, 2.39 ms": a figure
            //  after a number's comma stands between it and the next.
            if (comma && s_figure (q)) {
                while (*q && *q != ',' && *q != ';' && *q != '.')
                    q++;
                if (*q == '.' && q[1] >= '0' && q[1] <= '9')
                    for (q++; *q && *q != ',' && *q != ';' && *q != '.'; q++)
                        ;
                if (*q != ',')
                    break;
                for (q++; *q == ' '; q++)
                    ;
            }
            if (!strncmp (q, "and ", 4) || !strncmp (q, "or ", 3))
                q += *q == 'a' ? 4 : 3;
            else if (*q == '/' || *q == '&')
                q++;
            else if (!comma)
                break;
            p = q;
        }
        p--;   //  the outer step lands on what ended the list
    }
    return n;
}

