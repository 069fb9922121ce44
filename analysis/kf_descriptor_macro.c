/*  kf_descriptor_macro.c - a kernel's function-like macros expanded where
 *  it uses them (kf_descriptor_macro.h).
 */
#include "kf_descriptor_macro.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_MACROS 64
#define S_PARAMS 16
#define S_NAME 64
#define S_BODY 4096

typedef struct {
    char name[S_NAME];
    char params[S_PARAMS][S_NAME];
    int n_params;
    char body[S_BODY];
    size_t at;                  /* where the definition starts in the text */
} s_macro_t;

static bool
s_id (char c)
{
    return isalnum ((unsigned char) c) || c == '_';
}

//  The identifier at P into OUT (S_NAME bytes); its length, 0 where none
//  or too long.
static size_t
s_name (const char *p, char *out)
{
    size_t n = 0;
    if (!(isalpha ((unsigned char) *p) || *p == '_'))
        return 0;
    while (s_id (p[n]))
        n++;
    if (n >= S_NAME)
        return 0;
    memcpy (out, p, n);
    out[n] = '\0';
    return n;
}

//  The function-like `#define` whose line starts at LINE into M; where
//  the definition ends (after its last continued line) into *END. False
//  where the line is no such definition (or a variadic one).
static bool
s_define (const char *line, s_macro_t *m, const char **end)
{
    const char *p = line;
    while (*p == ' ' || *p == '\t')
        p++;
    if (*p++ != '#')
        return false;
    while (*p == ' ' || *p == '\t')
        p++;
    if (strncmp (p, "define", 6) || s_id (p[6]))
        return false;
    p += 6;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = s_name (p, m->name);
    if (!n || p[n] != '(')
        return false;
    p += n + 1;
    m->n_params = 0;
    for (;;) {
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ')' && m->n_params == 0)
            break;
        if (m->n_params >= S_PARAMS || !(n = s_name (p, m->params[m->n_params])))
            return false;
        m->n_params++;
        p += n;
        while (*p == ' ' || *p == '\t')
            p++;
        if (*p == ')')
            break;
        if (*p++ != ',')
            return false;
    }
    p++;
    //  The body, continuation lines joined.
    size_t used = 0;
    while (*p && *p != '\n') {
        if (*p == '\\' && p[1] == '\n') {
            p += 2;
            continue;
        }
        if (used + 1 >= S_BODY)
            return false;
        m->body[used++] = *p++;
    }
    while (used > 0 && isspace ((unsigned char) m->body[used - 1]))
        used--;
    m->body[used] = '\0';
    size_t lead = strspn (m->body, " \t");
    memmove (m->body, m->body + lead, used - lead + 1);
    *end = p;
    return true;
}

//  M's body with ARGS (N of them, each [start, end)) in place of its
//  parameters and `##` pasted, onto F.
static void
s_substitute (FILE *f, const s_macro_t *m, const char *const *args, const char *const *ends)
{
    const char *b = m->body;
    bool paste = false;
    while (*b) {
        if (b[0] == '#' && b[1] == '#') {
            //  Pasting: the spaces on both sides go.
            b += 2;
            while (*b == ' ' || *b == '\t')
                b++;
            paste = true;
            continue;
        }
        if (*b == ' ' || *b == '\t') {
            const char *q = b;
            while (*q == ' ' || *q == '\t')
                q++;
            if (q[0] == '#' && q[1] == '#') {
                b = q;
                continue;
            }
        }
        char name[S_NAME];
        size_t n = (b == m->body || !s_id (b[-1]) || paste) ? s_name (b, name) : 0;
        paste = false;
        int k = -1;
        for (int i = 0; n && i < m->n_params; i++)
            if (!strcmp (name, m->params[i]))
                k = i;
        if (k >= 0) {
            const char *a = args[k], *e = ends[k];
            while (a < e && isspace ((unsigned char) *a))
                a++;
            while (e > a && isspace ((unsigned char) e[-1]))
                e--;
            fwrite (a, 1, (size_t) (e - a), f);
            b += n;
        }
        else if (n) {
            fwrite (b, 1, n, f);
            b += n;
        }
        else
            fputc (*b++, f);
    }
}

//  One pass over TEXT, expanding the uses of MACROS (N); the new text
//  (caller frees) and *DID whether any was expanded; NULL past LIMIT
//  bytes or out of memory.
static char *
s_pass (const char *text, const s_macro_t *macros, size_t n, size_t limit, bool *did)
{
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&out, &size);
    if (!f)
        return NULL;
    *did = false;
    const char *p = text;
    while (*p) {
        char name[S_NAME];
        size_t len = (p == text || !s_id (p[-1])) ? s_name (p, name) : 0;
        const s_macro_t *m = NULL;
        for (size_t i = 0; len && i < n && !m; i++)
            if (!strcmp (name, macros[i].name))
                m = &macros[i];
        const char *q = p + len;
        while (m && isspace ((unsigned char) *q))
            q++;
        if (!m || *q != '(') {
            if (len) {
                fwrite (p, 1, len, f);
                p += len;
            }
            else
                fputc (*p++, f);
            continue;
        }
        //  The arguments: commas at the call's own depth split them.
        const char *args[S_PARAMS + 1], *ends[S_PARAMS + 1];
        int k = 0, depth = 0;
        const char *r = q;
        args[0] = q + 1;
        for (; *r; r++) {
            if (*r == '(')
                depth++;
            else if (*r == ')' && --depth == 0)
                break;
            else if (*r == ',' && depth == 1) {
                if (k >= S_PARAMS)
                    break;
                ends[k++] = r;
                args[k] = r + 1;
            }
        }
        bool none = m->n_params == 0 && k == 0;
        if (*r != ')' || (!none && k + 1 != m->n_params)) {
            fwrite (p, 1, len, f);
            p += len;
            continue;
        }
        ends[k] = r;
        s_substitute (f, m, args, ends);
        *did = true;
        p = r + 1;
        if (ftell (f) > (long) limit)
            break;
    }
    bool over = ftell (f) > (long) limit;
    if (fclose (f) != 0 || over) {
        free (out);
        return NULL;
    }
    return out;
}

char *
kf_descriptor_macros (const char *code)
{
    if (!code)
        return NULL;
    s_macro_t *macros = calloc (S_MACROS, sizeof *macros);
    char *text = strdup (code);
    if (!macros || !text) {
        free (macros);
        free (text);
        return NULL;
    }
    //  The definitions, each blanked where it stands (its lines kept).
    size_t n = 0;
    for (char *line = text; line && *line && n < S_MACROS;) {
        const char *end;
        if (s_define (line, &macros[n], &end)) {
            macros[n++].at = (size_t) (line - text);
            for (char *c = line; c < end; c++)
                if (*c != '\n')
                    *c = ' ';
            line = (char *) end;
        }
        line = strchr (line, '\n');
        line = line ? line + 1 : NULL;
    }
    if (!n) {
        free (macros);
        free (text);
        return NULL;
    }
    size_t len = strlen (code);
    size_t limit = len * KF_MACRO_GROWTH < KF_MACRO_MAX ? len * KF_MACRO_GROWTH : KF_MACRO_MAX;
    //  Round 53: a name defined three times (`#define ST(r)` a plain store,
    //  then a streaming one, then a plain one again, each #undef'd) was
    //  expanded everywhere by its first definition, so the streaming
    //  stores read as none. Each stretch of the text between two
    //  definitions is expanded with the definitions made before it, the
    //  latest of a name winning.
    char *out = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&out, &size);
    s_macro_t *active = calloc (S_MACROS, sizeof *active);
    bool ok = f && active;
    for (size_t i = 0; ok && i <= n; i++) {
        size_t from = i ? macros[i - 1].at : 0, to = i < n ? macros[i].at : len;
        size_t k = 0;
        for (size_t j = i; j-- > 0;) {
            bool seen = false;
            for (size_t a = 0; a < k && !seen; a++)
                seen = !strcmp (active[a].name, macros[j].name);
            if (!seen)
                active[k++] = macros[j];
        }
        char *part = strndup (text + from, to - from);
        bool did = k > 0;
        for (int pass = 0; part && did && pass < KF_MACRO_PASSES; pass++) {
            char *next = s_pass (part, active, k, limit, &did);
            free (part);
            part = next;
        }
        ok = part && fputs (part, f) >= 0 && ftell (f) <= (long) limit;
        free (part);
    }
    if (f && fclose (f) != 0)
        ok = false;
    free (active);
    free (macros);
    free (text);
    if (!ok) {
        free (out);
        return NULL;
    }
    return out;
}
