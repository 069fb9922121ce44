/*  kf_descriptor_text.c - what of a source is evidence for the
 *  descriptors (kf_descriptor_text.h): comments and literals blanked,
 *  `#if 0` regions blanked, the strings of asm statements collected;
 *  and the short names of the levels, for a grid's axes.
 */
#include "kf_descriptor.h"
#include "kf_descriptor_text.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  ---------------------------------------------------------------------
//  Stripping

static bool
s_is_ident (int c)
{
    return isalnum ((unsigned char) c) || c == '_';
}

//  True when the quote at T[I] opens a C++ raw string: R", u8R", uR",
//  UR" or LR", with no identifier character before the prefix.
static bool
s_raw_prefix (const char *t, size_t i)
{
    if (i == 0 || t[i - 1] != 'R')
        return false;
    size_t start = i - 1;
    while (start > 0 && s_is_ident (t[start - 1]))
        start--;
    size_t len = i - 1 - start;       //  characters before the R
    const char *p = t + start;
    return len == 0 || (len == 1 && (*p == 'u' || *p == 'U' || *p == 'L'))
           || (len == 2 && p[0] == 'u' && p[1] == '8');
}

//  Blanks comments, and string and character literals' contents unless
//  KEEP_STRINGS. Newlines are always kept.
void
kf_descriptor_strip_text (char *t, bool keep_strings)
{
    enum { CODE, LINE, BLOCK, STR, CHR } state = CODE;
    bool in_token = false, token_is_number = false;
    size_t i = 0;
    while (t[i]) {
        char c = t[i], next = t[i + 1];
        switch (state) {
        case CODE:
            if (c == '/' && next == '/') {
                t[i] = t[i + 1] = ' ';
                state = LINE;
                i += 2;
                in_token = false;
                continue;
            }
            if (c == '/' && next == '*') {
                t[i] = t[i + 1] = ' ';
                state = BLOCK;
                i += 2;
                in_token = false;
                continue;
            }
            if (c == '"' && s_raw_prefix (t, i)) {
                //  R"delim( ... )delim": no escapes inside.
                size_t d = i + 1;
                while (t[d] && t[d] != '(' && t[d] != '"' && t[d] != '\n' && d - i <= 17)
                    d++;
                if (t[d] == '(') {
                    size_t dlen = d - i - 1;
                    char close[20];
                    close[0] = ')';
                    memcpy (close + 1, t + i + 1, dlen);
                    close[dlen + 1] = '"';
                    close[dlen + 2] = 0;
                    char *end = strstr (t + d, close);
                    size_t stop = end ? (size_t) (end - t) + dlen + 1 : strlen (t);
                    if (!keep_strings)
                        for (size_t k = i + 1; k < stop; k++)
                            if (t[k] != '\n')
                                t[k] = ' ';
                    i = end ? stop + 1 : stop;
                    in_token = false;
                    continue;
                }
            }
            if (c == '"') {
                state = STR;
                in_token = false;
                i++;
                continue;
            }
            if (c == '\'') {
                //  A digit separator (1'000'000) is not a literal.
                if (in_token && token_is_number && s_is_ident (next)) {
                    i++;
                    continue;
                }
                state = CHR;
                in_token = false;
                i++;
                continue;
            }
            if (s_is_ident (c) || (c == '.' && in_token && token_is_number)) {
                if (!in_token)
                    token_is_number = isdigit ((unsigned char) c);
                in_token = true;
            }
            else
                in_token = false;
            i++;
            continue;
        case LINE:
            if (c == '\n')
                state = CODE;
            else if (c == '\\' && next == '\n') {
                t[i] = ' ';         //  a spliced line continues the comment
                i += 2;
                continue;
            }
            else
                t[i] = ' ';
            i++;
            continue;
        case BLOCK:
            if (c == '*' && next == '/') {
                t[i] = t[i + 1] = ' ';
                state = CODE;
                i += 2;
                continue;
            }
            if (c != '\n')
                t[i] = ' ';
            i++;
            continue;
        case STR:
        case CHR:
            if (c == '\\' && next) {
                if (!keep_strings) {
                    t[i] = ' ';
                    if (next != '\n')
                        t[i + 1] = ' ';
                }
                i += 2;
                continue;
            }
            if ((state == STR && c == '"') || (state == CHR && c == '\'')) {
                state = CODE;
                i++;
                continue;
            }
            if (c == '\n') {
                //  An unterminated literal ends with its line, as the
                //  compiler would have it; a stray quote in an #error
                //  line must not swallow the rest of the file.
                state = CODE;
                i++;
                continue;
            }
            if (!keep_strings)
                t[i] = ' ';
            i++;
            continue;
        }
    }
}

void
kf_descriptor_strip (char *text)
{
    if (text)
        kf_descriptor_strip_text (text, false);
}

//  The directive on the line at P ("if", "ifdef", "else", ...), copied
//  into WORD; empty when the line is not a directive.
static const char *
s_directive (const char *p, char *word, size_t size, const char **rest)
{
    while (*p == ' ' || *p == '\t')
        p++;
    word[0] = 0;
    if (*p != '#')
        return word;
    p++;
    while (*p == ' ' || *p == '\t')
        p++;
    size_t n = 0;
    while (isalpha ((unsigned char) *p) && n + 1 < size)
        word[n++] = *p++;
    word[n] = 0;
    *rest = p;
    return word;
}

//  Blanks the lines of `#if 0` regions (up to the matching #else, #elif
//  or #endif): code the compiler never sees is no evidence.
void
kf_descriptor_blank_if0 (char *t)
{
    int depth = 0;                  //  > 0 inside a dead region
    char *line = t;
    while (*line) {
        char *eol = strchr (line, '\n');
        char *end = eol ? eol : line + strlen (line);
        char word[16];
        const char *rest = line;
        s_directive (line, word, sizeof word, &rest);
        bool blank = depth > 0;
        if (depth == 0 && strcmp (word, "if") == 0) {
            while (*rest == ' ' || *rest == '\t')
                rest++;
            if (rest[0] == '0' && !s_is_ident (rest[1]))
                depth = 1;
        }
        else if (depth > 0) {
            if (strncmp (word, "if", 2) == 0)
                depth++;
            else if (strcmp (word, "endif") == 0)
                depth--;
            else if (depth == 1 && (strcmp (word, "else") == 0 || strcmp (word, "elif") == 0))
                depth = 0;
            if (depth == 0)
                blank = false;      //  keep the closing directive itself
        }
        if (blank)
            for (char *p = line; p < end; p++)
                *p = ' ';
        line = eol ? eol + 1 : end;
    }
}

char *
kf_descriptor_function_body (const char *code, const char *name, size_t len)
{
    static const char *const keywords[] = { "if", "for", "while", "switch", "return", "sizeof",
                                            "do", "else", NULL };
    for (int k = 0; keywords[k]; k++)
        if (strlen (keywords[k]) == len && !strncmp (keywords[k], name, len))
            return NULL;
    char word[128];
    if (len == 0 || len >= sizeof word)
        return NULL;
    memcpy (word, name, len);
    word[len] = 0;
    for (const char *p = code; (p = strstr (p, word)) != NULL; p++) {
        if ((p > code && s_is_ident (p[-1])) || s_is_ident (p[len]))
            continue;
        const char *q = p + len;
        while (isspace ((unsigned char) *q))
            q++;
        if (*q != '(')
            continue;
        if (!(q = kf_descriptor_close (q)))
            return NULL;
        //  After the parameters: attributes, then the body's brace.
        q++;
        while (isspace ((unsigned char) *q))
            q++;
        if (*q != '{')
            continue;
        const char *end = kf_descriptor_close (q);
        return end ? strndup (q, (size_t) (end - q + 1)) : NULL;
    }
    return NULL;
}

bool
kf_descriptor_any_callee (const char *code, const char *text, int calls, kf_descriptor_body_fn fn)
{
    if (calls <= 0)
        return false;
    for (const char *p = text; *p; p++) {
        if (!(isalpha ((unsigned char) *p) || *p == '_') || (p > text && s_is_ident (p[-1])))
            continue;
        const char *e = p;
        while (s_is_ident (*e))
            e++;
        const char *q = e;
        while (isspace ((unsigned char) *q))
            q++;
        if (*q == '(') {
            char *body = kf_descriptor_function_body (code, p, (size_t) (e - p));
            bool yes = body && fn (code, body, calls - 1);
            free (body);
            if (yes)
                return true;
        }
        p = e - 1;
    }
    return false;
}

//  Collects the string contents of every asm statement in T (comments
//  already removed, strings kept) into a newly allocated text.
char *
kf_descriptor_asm_text (const char *t)
{
    size_t cap = 256, len = 0;
    char *out = malloc (cap);
    if (!out)
        return NULL;
    out[0] = 0;
    for (const char *p = t; *p; p++) {
        if (!(p == t || !s_is_ident (p[-1])))
            continue;
        size_t kw = strncmp (p, "__asm__", 7) == 0 ? 7
                    : strncmp (p, "__asm", 5) == 0 ? 5
                    : strncmp (p, "asm", 3) == 0 ? 3 : 0;
        if (!kw || s_is_ident (p[kw]))
            continue;
        const char *q = p + kw;
        //  Qualifiers between the keyword and the parenthesis.
        for (;;) {
            while (isspace ((unsigned char) *q))
                q++;
            if (!s_is_ident (*q))
                break;
            while (s_is_ident (*q))
                q++;
        }
        if (*q != '(')
            continue;
        int depth = 0;
        bool in_str = false;
        for (; *q; q++) {
            char c = *q;
            if (in_str) {
                if (c == '\\' && q[1]) {
                    q++;
                    continue;
                }
                if (c == '"') {
                    in_str = false;
                    c = '\n';       //  one line per literal
                }
                if (len + 2 > cap) {
                    char *grown = realloc (out, cap * 2);
                    if (!grown) {
                        free (out);
                        return NULL;
                    }
                    out = grown;
                    cap *= 2;
                }
                out[len++] = c;
                out[len] = 0;
                continue;
            }
            if (c == '"')
                in_str = true;
            else if (c == '(')
                depth++;
            else if (c == ')' && --depth == 0)
                break;
        }
        if (!*q)
            break;
        p = q;
    }
    return out;
}

const char *
kf_descriptor_close (const char *open)
{
    char o = *open, c = o == '(' ? ')' : '}';
    int depth = 0;
    for (const char *p = open; *p; p++) {
        depth += *p == o;
        depth -= *p == c;
        if (depth == 0)
            return p;
    }
    return NULL;
}

//  ---------------------------------------------------------------------
//  Names of levels

//  The same levels in a word or two, for a grid's axes (kfctl show, the
//  HTML report): the GPU's are docs/descriptors.md's short names.
static const char *s_short_names[2][3][KF_DESCRIPTOR_LEVELS] = {
    { { "scalar", "coalesced", "tiled", "hierarchical" },
      { "direct", "fused", "reformulated", "novel" },
      { "none", "barriers", "warp", "global" } },
    { { "scalar", "SIMD", "blocked", "multi-level" },
      { "direct", "fused", "reformulated", "novel" },
      { "one thread", "fork-join", "cooperating", "atomics/locks" } },
};
static const char *s_short_dims[2][3] = {
    { "memory", "algorithm", "synchronisation" },
    { "memory", "algorithm", "threads" },
};

bool
kf_descriptor_target_is_host (const char *target)
{
    return target && !strncmp (target, "host", 4) && (target[4] == 0 || target[4] == ':');
}

const char *
kf_descriptor_level_short (const char *target, int dim, int level)
{
    if (dim < 0 || dim >= 3 || level < 0 || level >= KF_DESCRIPTOR_LEVELS)
        return "?";
    return s_short_names[kf_descriptor_target_is_host (target)][dim][level];
}

const char *
kf_descriptor_dim_short (const char *target, int dim)
{
    if (dim < 0 || dim >= 3)
        return "?";
    return s_short_dims[kf_descriptor_target_is_host (target)][dim];
}

const char *
kf_descriptor_cell_text (const char *target, const char *coords, char *out, size_t size)
{
    int c[3];
    if (!size)
        return out;
    if (!coords || sscanf (coords, "{%d,%d,%d}", &c[0], &c[1], &c[2]) != 3) {
        snprintf (out, size, "%s", coords ? coords : "");
        return out;
    }
    snprintf (out, size, "%s: %s %s, %s %s, %s %s", coords, kf_descriptor_dim_short (target, 0),
              kf_descriptor_level_short (target, 0, c[0]), kf_descriptor_dim_short (target, 1),
              kf_descriptor_level_short (target, 1, c[1]), kf_descriptor_dim_short (target, 2),
              kf_descriptor_level_short (target, 2, c[2]));
    return out;
}
