/*  kf_extract.c - picking the kernel out of a model's reply.
 *
 *  Every fenced block (``` or ~~~, with or without an info string; an
 *  unclosed one runs to the end, as a reply cut short leaves it) is a
 *  candidate. Its score: the info string names the requested language
 *  (or a close relative: cu/cuh/c++ for CUDA, cl for OpenCL, h for C),
 *  the block defines the entry point (kf_forward; __kernel for OpenCL C),
 *  and it is long; the highest score wins, the first on a tie. Blocks in
 *  another language (python, bash, text) lose to any that fits. Without
 *  fences, a reply that holds the entry point or preprocessor lines is
 *  taken from its first line of code to the end.
 */
#include "kf_extract.h"
#include "kf_str.h"

#include <ctype.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *start;           /* first byte of the code */
    size_t len;
    char tag[24];                /* the info string's first word, lower case */
} s_block_t;

#define KF_EXTRACT_MAX_BLOCKS 64

const char *
kf_extract_rc_name (kf_extract_rc_t rc)
{
    return rc == KF_EXTRACT_EMPTY ? "empty" : rc == KF_EXTRACT_NO_CODE ? "no_code" : "ok";
}

//  0: another language; 1: no tag; 2: a relative; 3: the language itself.
static int
s_tag_score (const char *tag, const char *language)
{
    static const char *const c[] = { "c", "h", NULL };
    static const char *const c_rel[] = { "c11", "c99", "cpp", "c++", "cc", NULL };
    static const char *const cuda[] = { "cuda", "cu", NULL };
    static const char *const cuda_rel[] = { "cuh", "cpp", "c++", "cc", "c", NULL };
    static const char *const cl[] = { "opencl", "cl", "opencl-c", NULL };
    static const char *const cl_rel[] = { "c", NULL };
    static const char *const sycl[] = { "sycl", NULL };
    static const char *const sycl_rel[] = { "cpp", "c++", "cc", NULL };
    if (!*tag)
        return 1;
    const char *const *same = c, *const *rel = c_rel;
    if (!strcmp (language, "cuda"))
        same = cuda, rel = cuda_rel;
    else if (!strcmp (language, "opencl"))
        same = cl, rel = cl_rel;
    else if (!strcmp (language, "sycl"))
        same = sycl, rel = sycl_rel;
    return kf_str_in (tag, same) ? 3 : kf_str_in (tag, rel) ? 2 : 0;
}

static bool
s_has (const char *start, size_t len, const char *needle)
{
    size_t n = strlen (needle);
    for (size_t i = 0; i + n <= len; i++)
        if (!memcmp (start + i, needle, n))
            return true;
    return false;
}

static bool
s_has_entry (const char *start, size_t len, const char *language)
{
    if (!strcmp (language, "opencl"))
        return s_has (start, len, "__kernel") || s_has (start, len, "kernel void");
    return s_has (start, len, "kf_forward");
}

//  A fence: at least three backticks or tildes at the start of a line
//  (after up to three spaces, as Markdown allows).
static size_t
s_fence_at (const char *line, char *ch)
{
    const char *p = line;
    for (int i = 0; i < 3 && *p == ' '; i++)
        p++;
    if (*p != '`' && *p != '~')
        return 0;
    size_t n = 0;
    while (p[n] == *p)
        n++;
    if (n < 3)
        return 0;
    *ch = *p;
    return (size_t) (p - line) + n;
}

static int
s_find_blocks (const char *text, s_block_t *blocks, int max)
{
    int n = 0;
    const char *line = text;
    while (*line && n < max) {
        char ch;
        size_t f = s_fence_at (line, &ch);
        const char *eol = strchr (line, '\n');
        if (!f) {
            line = eol ? eol + 1 : line + strlen (line);
            continue;
        }
        s_block_t *b = &blocks[n];
        memset (b, 0, sizeof *b);
        const char *info = line + f;
        while (*info == ' ' || *info == '\t')
            info++;
        size_t t = 0;
        while (info[t] && !isspace ((unsigned char) info[t]) && info[t] != '{'
               && t < sizeof b->tag - 1) {
            b->tag[t] = (char) tolower ((unsigned char) info[t]);
            t++;
        }
        if (!eol) {   //  a fence on the last line opens nothing
            break;
        }
        b->start = eol + 1;
        const char *p = b->start;
        const char *end = NULL;
        while (*p) {
            char c2;
            size_t g = s_fence_at (p, &c2);
            const char *after = p + g;
            while (g && (*after == ' ' || *after == '\t' || *after == '\r'))
                after++;
            if (g && c2 == ch && (*after == '\n' || *after == 0)) {
                end = p;
                break;
            }
            const char *nl = strchr (p, '\n');
            p = nl ? nl + 1 : p + strlen (p);
        }
        b->len = (size_t) ((end ? end : p) - b->start);
        n++;
        if (!end)
            break;
        const char *nl = strchr (end, '\n');
        line = nl ? nl + 1 : end + strlen (end);
    }
    return n;
}

//  Bare code: from the first line that starts like C to the end.
static const char *
s_first_code_line (const char *text)
{
    static const char *const starts[] = { "#include", "#define", "#if", "#pragma", "/*", "//",
                                          "extern", "static", "int ", "void ", "__global__",
                                          "__kernel", "kernel ", "typedef", "template", "struct",
                                          "const ", "float ", "__device__", NULL };
    for (const char *line = text; line && *line;) {
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        for (int i = 0; starts[i]; i++)
            if (!strncmp (p, starts[i], strlen (starts[i])))
                return line;
        const char *nl = strchr (line, '\n');
        line = nl ? nl + 1 : NULL;
    }
    return NULL;
}

kf_extract_rc_t
kf_extract_code (const char *text, const char *language, char **code, char **detail)
{
    *code = NULL;
    if (detail)
        *detail = NULL;
    language = language ? language : "c";
    const char *p = text ? text : "";
    while (isspace ((unsigned char) *p))
        p++;
    if (!*p) {
        if (detail)
            *detail = strdup ("the reply is empty");
        return KF_EXTRACT_EMPTY;
    }
    s_block_t blocks[KF_EXTRACT_MAX_BLOCKS];
    int n = s_find_blocks (text, blocks, KF_EXTRACT_MAX_BLOCKS);
    int best = -1;
    long best_score = -1;
    for (int i = 0; i < n; i++) {
        const char *s = blocks[i].start;
        size_t len = blocks[i].len;
        size_t k = 0;
        while (k < len && isspace ((unsigned char) s[k]))
            k++;
        if (k == len)
            continue;
        int tag = s_tag_score (blocks[i].tag, language);
        if (tag == 0 && !s_has_entry (s, len, language))
            continue;    //  a python test or a shell line, not our kernel
        long score = (long) tag * 4 + (s_has_entry (s, len, language) ? 16 : 0);
        //  Length breaks ties between equally good blocks (a full kernel
        //  beats a one-line excerpt of it), but never outweighs a tag.
        score = score * 1000000 + (long) (len < 999999 ? len : 999999);
        if (score > best_score) {
            best_score = score;
            best = i;
        }
    }
    if (best >= 0) {
        *code = strndup (blocks[best].start, blocks[best].len);
        return *code ? KF_EXTRACT_OK : KF_EXTRACT_NO_CODE;
    }
    if (n == 0 && (s_has_entry (p, strlen (p), language) || s_has (p, strlen (p), "#include"))) {
        const char *start = s_first_code_line (p);
        if (start) {
            *code = strdup (start);
            return *code ? KF_EXTRACT_OK : KF_EXTRACT_NO_CODE;
        }
    }
    if (detail)
        *detail = n ? kf_strdupf ("%d code block(s), none in %s", n, language)
                    : kf_strdupf ("no code block and no %s code in %zu bytes of text", language,
                                  strlen (p));
    return KF_EXTRACT_NO_CODE;
}
