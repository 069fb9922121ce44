/*  kf_descriptor_tiles.c - tiles and scratch in shared / local memory,
 *  read by code for kf_descriptor.c (kf_descriptor_tiles.h).
 */
#include "kf_descriptor_tiles.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool
s_is_ident (int c)
{
    return isalnum ((unsigned char) c) || c == '_';
}

//  ---------------------------------------------------------------------
//  Tiles and scratch in shared / local memory
//
//  Declaring `__shared__` (`__local`, a local_accessor) is not tiling by
//  itself: most reductions keep their partial sums there. Tiling stages a
//  piece of the input that several threads then read. So the arrays in
//  shared/local memory are found by name, and every assignment to one is
//  read: a right-hand side that loads from another array or pointer (not
//  shared, not a private array of the thread) is input staging; one that
//  reads shared memory itself (red[t] += red[t + s]) is a reduction in
//  place. An array is a tile when something stages input into it and
//  nothing reduces in place, or when it is handed to a copy routine
//  (memcpy_async, async_work_group_copy, a load_tile helper).

#define S_MAX_NAMES 32

typedef struct {
    char name[S_MAX_NAMES][64];
    size_t n;
} s_names_t;

static bool
s_names_has (const s_names_t *set, const char *p, size_t len)
{
    for (size_t i = 0; i < set->n; i++)
        if (strlen (set->name[i]) == len && strncmp (set->name[i], p, len) == 0)
            return true;
    return false;
}

static void
s_names_add (s_names_t *set, const char *p, size_t len)
{
    if (len == 0 || len >= sizeof set->name[0] || set->n >= S_MAX_NAMES || s_names_has (set, p, len))
        return;
    memcpy (set->name[set->n], p, len);
    set->name[set->n][len] = 0;
    set->n++;
}

//  True when the word at P (length LEN) in TEXT stands alone.
static bool
s_is_word_at (const char *text, const char *p, size_t len)
{
    return (p == text || !s_is_ident (p[-1])) && !s_is_ident (p[len]);
}

static const char *
s_skip_space (const char *p)
{
    while (isspace ((unsigned char) *p))
        p++;
    return p;
}

//  Past the bracketed group that opens at P ('[', '(' or '<'), or P when
//  it does not open one; stops at a ';' so a stray bracket cannot run on.
static const char *
s_skip_group (const char *p)
{
    char open = *p, close = open == '[' ? ']' : open == '(' ? ')' : open == '<' ? '>' : 0;
    if (!close)
        return p;
    int depth = 0;
    for (; *p && *p != ';'; p++) {
        if (*p == open)
            depth++;
        else if (*p == close && --depth == 0)
            return p + 1;
    }
    return p;
}

//  The declarators of the declaration that starts after the memory-space
//  keyword at KW: every identifier followed, outside brackets, by '[',
//  ',', ';', ')' or '=' (a type or qualifier is followed by another word).
static void
s_declarators (const char *code, const char *kw, size_t kw_len, s_names_t *set)
{
    //  A kernel parameter (__local float *scratch, ...) declares one name.
    const char *b = kw;
    while (b > code && isspace ((unsigned char) b[-1]))
        b--;
    bool param = b > code && (b[-1] == '(' || b[-1] == ',');
    const char *p = kw + kw_len;
    int depth = 0;
    while (*p && *p != ';' && *p != '{') {
        if (*p == '(' || *p == '[')
            depth++;
        else if (*p == ')' || *p == ']') {
            if (--depth < 0)
                return;             //  the end of a parameter list
        }
        else if (depth == 0 && s_is_ident (*p) && !isdigit ((unsigned char) *p)) {
            const char *w = p;
            while (s_is_ident (*p))
                p++;
            const char *q = s_skip_space (p);
            if (*q == '[' || *q == ',' || *q == ';' || *q == ')' || *q == '=')
                s_names_add (set, w, (size_t) (p - w));
            if (*q == ',' && param)
                return;             //  the next parameter is not ours
            continue;
        }
        p++;
    }
}

//  The shared/local arrays of CODE in LANGUAGE, pointers aliasing them
//  included (extern __shared__ float smem[]; float *a = smem + n;).
static void
s_shared_names (const char *code, const char *language, s_names_t *set)
{
    bool cuda = !strcmp (language, "cuda"), ocl = !strcmp (language, "opencl");
    for (const char *p = code; *p; p++) {
        if (!s_is_ident (*p) || (p > code && s_is_ident (p[-1])))
            continue;
        if (cuda && strncmp (p, "__shared__", 10) == 0 && !s_is_ident (p[10]))
            s_declarators (code, p, 10, set);
        else if (ocl && strncmp (p, "__local", 7) == 0 && !s_is_ident (p[7]))
            s_declarators (code, p, 7, set);
        else if (ocl && strncmp (p, "local", 5) == 0 && !s_is_ident (p[5]))
            s_declarators (code, p, 5, set);
        else if (!cuda && !ocl && ((strncmp (p, "local_accessor", 14) == 0 && !s_is_ident (p[14]))
                                   || (strncmp (p, "target::local", 13) == 0 && !s_is_ident (p[13])))) {
            //  local_accessor<T, N> NAME (...): the word after the template
            //  arguments; target::local sits inside them.
            const char *q = p;
            int depth = 0;
            if (p[0] == 't') {
                depth = 1;
                q = p + 13;
            }
            else {
                q = s_skip_space (p + 14);
                if (*q != '<')
                    continue;
            }
            for (; *q && *q != ';'; q++) {
                if (*q == '<')
                    depth++;
                else if (*q == '>' && --depth == 0)
                    break;
            }
            if (*q != '>')
                continue;
            q = s_skip_space (q + 1);
            const char *w = q;
            while (s_is_ident (*q))
                q++;
            s_names_add (set, w, (size_t) (q - w));
        }
        else if (!cuda && !ocl && strncmp (p, "group_local_memory", 18) == 0) {
            //  auto &NAME = *group_local_memory<...>(...): the word before '='.
            const char *q = p;
            while (q > code && *q != '=' && *q != ';' && *q != '{' && *q != '}')
                q--;
            if (*q != '=')
                continue;
            while (q > code && !s_is_ident (q[-1]) && q[-1] != ';' && q[-1] != '{')
                q--;
            const char *e = q;
            while (q > code && s_is_ident (q[-1]))
                q--;
            s_names_add (set, q, (size_t) (e - q));
        }
    }
    //  Aliases: "* NAME = <expression naming a shared array>".
    for (int pass = 0; pass < 2 && set->n; pass++)
        for (const char *p = code; *p; p++) {
            if (*p != '=' || p[1] == '=' || p == code || strchr ("=!<>+-*/%&|^", p[-1]))
                continue;
            const char *e = p;
            while (e > code && isspace ((unsigned char) e[-1]))
                e--;
            const char *w = e;
            while (w > code && s_is_ident (w[-1]))
                w--;
            const char *star = w;
            while (star > code && isspace ((unsigned char) star[-1]))
                star--;
            if (w == e || star == code || star[-1] != '*')
                continue;
            bool names_shared = false;
            for (const char *r = p + 1; *r && *r != ';' && *r != ','; r++)
                if (s_is_ident (*r) && (r == code || !s_is_ident (r[-1]))) {
                    const char *re = r;
                    while (s_is_ident (*re))
                        re++;
                    names_shared |= s_names_has (set, r, (size_t) (re - r));
                    r = re - 1;
                }
            if (names_shared)
                s_names_add (set, w, (size_t) (e - w));
        }
}

//  Private arrays declared in CODE ("float acc[4]", "float v[N][M] ="):
//  their elements are a thread's registers, not input.
static void
s_private_arrays (const char *code, const s_names_t *shared, s_names_t *set)
{
    static const char *const not_types[] = { "return", "case", "else", "do", "sizeof", "goto", NULL };
    for (const char *p = code; *p; p++) {
        if (*p != '[' || p == code || p[1] == ']')
            continue;
        const char *e = p;
        while (e > code && isspace ((unsigned char) e[-1]))
            e--;
        const char *w = e;
        while (w > code && s_is_ident (w[-1]))
            w--;
        if (w == e || isdigit ((unsigned char) *w) || s_names_has (shared, w, (size_t) (e - w)))
            continue;
        const char *t = w;
        while (t > code && isspace ((unsigned char) t[-1]))
            t--;
        const char *te = t;
        while (t > code && s_is_ident (t[-1]))
            t--;
        if (t == te)
            continue;               //  not "TYPE NAME [": an expression
        bool keyword = false;
        for (size_t k = 0; not_types[k]; k++)
            keyword |= strlen (not_types[k]) == (size_t) (te - t) && !strncmp (t, not_types[k], (size_t) (te - t));
        if (!keyword)
            s_names_add (set, w, (size_t) (e - w));
    }
}

//  What the right-hand side R..END of an assignment to shared memory
//  reads: 1 input (an array, pointer or load of something not shared),
//  2 shared memory, 0 neither (values the thread computed).
static int
s_rhs_kind (const char *code, const char *r, const char *end, const s_names_t *shared,
            const s_names_t *priv)
{
    bool input = false;
    char prev = '=';
    for (const char *p = r; p < end; p++) {
        if (isspace ((unsigned char) *p))
            continue;
        if (s_is_ident (*p) && (p == code || !s_is_ident (p[-1]))) {
            const char *w = p;
            while (s_is_ident (*p))
                p++;
            size_t len = (size_t) (p - w);
            if (s_names_has (shared, w, len))
                return 2;
            const char *q = s_skip_space (p);
            if (!isdigit ((unsigned char) *w) && *q == '[' && !s_names_has (priv, w, len))
                input = true;
            if ((len > 3 && !strncmp (w, "__ld", 4)) || (len > 5 && !strncmp (w, "vload", 5)))
                input = true;
            prev = 'a';
            p--;
            continue;
        }
        //  A unary '*' dereferences a pointer; ")[" subscripts one.
        if (*p == '*' && strchr ("=(,?:+-*/", prev))
            input = true;
        if (*p == '[' && prev == ')')
            input = true;
        prev = *p;
    }
    return input ? 1 : 0;
}

//  Counts the tiles in CODE (LANGUAGE cuda, opencl or sycl); SCRATCH gets
//  the number of shared arrays that are not tiles. The first of each is
//  named in TILE_SNIP / SCRATCH_SNIP.
int
kf_descriptor_tiles (const char *code, const char *language, int *scratch, char *tile_snip,
                     char *scratch_snip, size_t size)
{
    *scratch = 0;
    s_names_t *shared = calloc (1, sizeof *shared), *priv = calloc (1, sizeof *priv);
    if (!shared || !priv) {
        free (shared);
        free (priv);
        return 0;
    }
    s_shared_names (code, language, shared);
    if (shared->n)
        s_private_arrays (code, shared, priv);
    int tiles = 0;
    for (size_t i = 0; i < shared->n; i++) {
        const char *name = shared->name[i];
        size_t len = strlen (name);
        bool staged = false, reduced = false, copied = false;
        for (const char *p = strstr (code, name); p; p = strstr (p + len, name)) {
            if (!s_is_word_at (code, p, len))
                continue;
            //  Handed to a routine that copies into it?
            const char *b = p;
            while (b > code && (isspace ((unsigned char) b[-1]) || b[-1] == '&'))
                b--;
            if (b > code && (b[-1] == '(' || b[-1] == ',')) {
                int depth = 0;
                const char *f = b - 1;
                for (; f > code && *f != ';' && *f != '{' && *f != '}'; f--) {
                    if (*f == ')')
                        depth++;
                    else if (*f == '(' && depth-- == 0)
                        break;
                }
                if (*f == '(') {
                    const char *fe = f;
                    while (fe > code && isspace ((unsigned char) fe[-1]))
                        fe--;
                    const char *fw = fe;
                    while (fw > code && (s_is_ident (fw[-1]) || fw[-1] == ':'))
                        fw--;
                    char fn[64];
                    size_t fl = (size_t) (fe - fw) < sizeof fn - 1 ? (size_t) (fe - fw) : sizeof fn - 1;
                    memcpy (fn, fw, fl);
                    fn[fl] = 0;
                    for (char *c = fn; *c; c++)
                        *c = (char) tolower ((unsigned char) *c);
                    if (strstr (fn, "copy") || strstr (fn, "async") || strstr (fn, "load_tile")
                        || strstr (fn, "stage") || (strstr (fn, "load") && !strstr (fn, "matrix")))
                        copied = true;
                }
            }
            //  An assignment to it: NAME [..]... (op)= RHS, or through a
            //  cast of its address: *(float4 *) &NAME[..] = RHS.
            //  Element writes only: "float *a = smem" and "flag = ..."
            //  set a pointer or a scalar, not the array's contents.
            const char *q = s_skip_space (p + len);
            const char *a = p;
            while (a > code && isspace ((unsigned char) a[-1]))
                a--;
            bool element = *q == '[' || (a > code && a[-1] == '&');
            while (*q == '[' || *q == '.' || *q == ')') {
                if (*q == '[')
                    q = s_skip_group (q);
                else if (*q == '.') {
                    q++;
                    while (s_is_ident (*q))
                        q++;
                }
                else
                    q++;
                q = s_skip_space (q);
            }
            bool compound = false;
            if (*q && strchr ("+-*/%|&^", *q) && q[1] == '=') {
                compound = true;
                q++;
            }
            else if ((*q == '<' || *q == '>') && q[1] == *q && q[2] == '=') {
                compound = true;
                q += 2;
            }
            if (*q != '=' || q[1] == '=' || !element)
                continue;
            const char *end = q + 1;
            int depth = 0;
            for (; *end && *end != ';'; end++) {
                if (*end == '(' || *end == '[' || *end == '{')
                    depth++;
                else if (*end == ')' || *end == ']' || *end == '}') {
                    if (--depth < 0)
                        break;
                }
                else if (*end == ',' && depth == 0)
                    break;
            }
            int kind = s_rhs_kind (code, q + 1, end, shared, priv);
            if (kind == 2 || compound)
                reduced = true;
            else if (kind == 1)
                staged = true;
        }
        bool tile = copied || (staged && !reduced);
        char *snip = tile ? tile_snip : scratch_snip;
        if ((tile ? tiles : *scratch) == 0)
            snprintf (snip, size, "%s", name);
        if (tile)
            tiles++;
        else
            (*scratch)++;
    }
    free (shared);
    free (priv);
    return tiles;
}
