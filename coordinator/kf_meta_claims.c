/*  kf_meta_claims.c - claims about the toolchain in a meta-prompter's
 *  edits (kf_meta_claims.h).
 */
#include "kf_meta_claims.h"
#include "kf_meta_edits.h"
#include "kf_prompt_formula.h"
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

//  Whether C may stand inside a C name.
static int
s_name_char (char c)
{
    return isalnum ((unsigned char) c) || c == '_';
}

//  Whether the LEN bytes at S hold WORD (any case) as a whole C name: not
//  inside _mm512_sqrt_ps, which does vectorise.
static int
s_has_name (const char *s, size_t len, const char *word)
{
    size_t w = strlen (word);
    for (size_t i = 0; i + w <= len; i++)
        if (!strncasecmp (s + i, word, w) && (i == 0 || !s_name_char (s[i - 1]))
            && (i + w == len || !s_name_char (s[i + w])))
            return 1;
    return 0;
}

//  The libm function the LEN bytes at S name ("sqrtf", "expf", or the
//  name without its f), copied into FN; 0 when none.
static int
s_libm (const char *s, size_t len, char *fn, size_t size)
{
    char name[32];
    for (size_t i = 0;; i++) {
        const char *base = i == 0 ? "sqrt" : kf_prompt_libm_name (i - 1);
        if (!base)
            return 0;
        for (int f = 1; f >= 0; f--) {
            snprintf (name, sizeof name, "%s%s", base, f ? "f" : "");
            if (s_has_name (s, len, name)) {
                snprintf (fn, size, "%s", name);
                return 1;
            }
        }
    }
}

//  Whether the LEN bytes at S hold WORD (any case) as a word of the prose:
//  between blanks or punctuation, not inside a flag ("no-math-errno").
static int
s_has_word (const char *s, size_t len, const char *word)
{
    size_t w = strlen (word);
    for (size_t i = 0; i + w <= len; i++)
        if (!strncasecmp (s + i, word, w)
            && (i == 0 || isspace ((unsigned char) s[i - 1]) || strchr ("(,;:", s[i - 1]))
            && (i + w == len || isspace ((unsigned char) s[i + w]) || strchr ("),.;:", s[i + w])))
            return 1;
    return 0;
}

typedef struct {
    char *fn;
    size_t size;
} s_ctx_t;

static bool
s_claim_one (const char *s, size_t len, void *ctx, char *buf, size_t size)
{
    static const char *const verbs[] = { "vectoris", "vectoriz", NULL };
    static const char *const negations[] = { "not", "no", "never", "cannot", "nor", "neither",
                                             "scalar", NULL };
    s_ctx_t *c = ctx;
    int verb = 0;
    for (int k = 0; verbs[k] && !verb; k++)
        for (size_t i = 0; i + strlen (verbs[k]) <= len && !verb; i++)
            verb = !strncasecmp (s + i, verbs[k], strlen (verbs[k]));
    char fn[32];
    if (!verb || !s_libm (s, len, fn, sizeof fn))
        return false;
    //  A sentence that says it does not ("sqrtf is not vectorised") is
    //  right; so is one already marked ("not so at ...").
    for (size_t i = 0; i + 3 <= len; i++)
        if (!strncmp (s + i, "n't", 3))
            return false;
    for (int k = 0; negations[k]; k++)
        if (s_has_word (s, len, negations[k]))
            return false;
    snprintf (buf, size, "%s", KF_META_CLAIM_MARK);
    if (!*c->fn)
        snprintf (c->fn, c->size, "%s", fn);
    return true;
}

char *
kf_meta_claims_mark (const char *text, int *marked, char *fn, size_t size)
{
    if (size)
        *fn = '\0';
    s_ctx_t c = { .fn = fn, .size = size };
    return kf_meta_mark_sentences (text, s_claim_one, &c, marked);
}
