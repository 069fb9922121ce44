/*  kf_prompt_premise.c - what an idea's text takes as given of the kernel
 *  it is handed with (kf_prompt_class.h: kf_prompt_idea_premise,
 *  kf_prompt_idea_for_parent).
 *
 *  Round 20 of issue 15 kept the ideas "once each element's math is
 *  vectorised" from kernels whose math is scalar. The rounds after found
 *  more ideas of that kind that no feature filter told: the fused
 *  epilogue "at the last k chunk" went to a kernel that blocks nothing,
 *  packing "inside the cache blocks" reads the same, and a meta round
 *  added "keep the streaming stores but ..." for kernels that stream
 *  nothing. One reading serves them all, the lists' texts and a meta
 *  round's alike, so that the planner (kf_search_idea.c) hands such an
 *  idea only to a kernel that has what it takes as given:
 *
 *  - a word that presupposes (once, keep, already, existing) and, later
 *    in the same clause, a feature's name: "once each element's math is
 *    vectorised", "keep streaming stores";
 *  - a definite word (the, its, each, their) right before a feature's
 *    name: "inside the cache blocks", "around the register tile".
 *
 *  An idea's own subject (kf_prompt_idea_bits) is no premise: "by
 *  non-temporal (streaming) stores ... the streaming stores" adds them.
 *  A clause that says only what to do in a kernel that has a feature is
 *  no premise either: it is dropped from the text handed for a kernel
 *  without it (kf_prompt_idea_for_parent), as the rest of the idea holds
 *  for any kernel.
 */
#include "kf_prompt_class.h"
#include "kf_prompt_epilogue.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define S_BIT(f) (1u << (f))

//  Feature names, as a prefix of a word ("thread" for "threads",
//  "threaded"), case ignored.
static const struct {
    const char *name;
    unsigned bits;
} s_names[] = {
    { "streaming store", S_BIT (KF_IDEA_STREAM) },
    { "streaming (non-temporal) store", S_BIT (KF_IDEA_STREAM) },
    { "non-temporal store", S_BIT (KF_IDEA_STREAM) },
    { "non-temporal (streaming) store", S_BIT (KF_IDEA_STREAM) },
    { "thread", S_BIT (KF_IDEA_THREADS) },
    { "intrinsics", S_BIT (KF_IDEA_SIMD) }, { "SIMD", S_BIT (KF_IDEA_SIMD) },
    { "vectorised", KF_PREMISE_VECTORS }, { "vectorized", KF_PREMISE_VECTORS },
    { "vector registers", KF_PREMISE_VECTORS }, { "vector code", KF_PREMISE_VECTORS },
    { "cache block", S_BIT (KF_IDEA_BLOCK) }, { "k block", S_BIT (KF_IDEA_BLOCK) },
    { "k-block", S_BIT (KF_IDEA_BLOCK) }, { "k chunk", S_BIT (KF_IDEA_BLOCK) },
    { "blocked loop", S_BIT (KF_IDEA_BLOCK) }, { "tile load", S_BIT (KF_IDEA_BLOCK) },
    { "register tile", S_BIT (KF_IDEA_MICRO) }, { "register block", S_BIT (KF_IDEA_MICRO) },
    { "micro-kernel", S_BIT (KF_IDEA_MICRO) },
    { "packed", S_BIT (KF_IDEA_PACK) },
    { "prefetch", S_BIT (KF_IDEA_PREFETCH) },
};

//  Words that take what their clause names as given; "double-buffered"
//  for the GPU product's "double-buffered tile loads", which pay only on
//  top of shared-memory tiles (kf_prompt_ideas.c).
static const char *const s_leads[] = { "once ", "keep ", "keeping ", "already ", "existing ",
                                       "on top of ", "double-buffered " };

//  Definite words: the feature's name right after one refers to what the
//  kernel has. "its own" before "its".
static const char *const s_definite[] = { "the ", "its own ", "its ", "each ", "their " };

//  Clauses that say what to do where the kernel has a feature, with that
//  feature: left out for a kernel without it, and never a premise; and
//  (WITHOUT) where it lacks one, left out for a kernel with it.
static const struct {
    const char *clause;
    kf_idea_feature_t feature;
    bool without;   //  for a kernel without the feature: left out where it has it
} s_clauses[] = {
    { KF_PROMPT_EPILOGUE_K_CHUNKS, KF_IDEA_BLOCK, false },
    { KF_PROMPT_PREFETCH_WRITE_ALLOCATE, KF_IDEA_STREAM, true },
};

//  Words that end a lead's clause, besides ",;:()." ("keep the streaming
//  stores but add threads" keeps the stores, not the threads).
static const char *const s_enders[] = { " but ", " by ", " then ", " so ", " while ",
                                        " where " };

#define S_CLAUSE_MAX 100

//  The bits of the feature name at P, or 0.
static unsigned
s_name_at (const char *p)
{
    for (size_t i = 0; i < sizeof s_names / sizeof s_names[0]; i++)
        if (!strncasecmp (p, s_names[i].name, strlen (s_names[i].name)))
            return s_names[i].bits;
    return 0;
}

//  Whether WORD starts at P of TEXT, at the start of a word.
static bool
s_word_at (const char *text, const char *p, const char *word)
{
    return (p == text || !isalpha ((unsigned char) p[-1]))
           && !strncasecmp (p, word, strlen (word));
}

//  The end of the clause that starts at P.
static const char *
s_clause_end (const char *p)
{
    const char *end = p;
    while (*end && !strchr (",;:().", *end) && end - p < S_CLAUSE_MAX)
        end++;
    for (size_t i = 0; i < sizeof s_enders / sizeof s_enders[0]; i++) {
        const char *at = strstr (p, s_enders[i]);
        if (at && at < end)
            end = at;
    }
    return end;
}

//  TEXT with each clause of s_clauses left out whose feature FEATURES
//  lacks, or every one where ALL. Caller frees.
static char *
s_without_clauses (const char *text, unsigned features, bool all)
{
    char *out = strdup (text);
    for (size_t i = 0; out && i < sizeof s_clauses / sizeof s_clauses[0]; i++) {
        if (!all && ((features >> s_clauses[i].feature) & 1u) != s_clauses[i].without)
            continue;
        size_t len = strlen (s_clauses[i].clause);
        char *at;
        while ((at = strstr (out, s_clauses[i].clause)))
            memmove (at, at + len, strlen (at + len) + 1);
    }
    return out;
}

unsigned
kf_prompt_idea_premise (const char *idea)
{
    if (!idea)
        return 0;
    char *text = s_without_clauses (idea, 0, true);
    if (!text)
        return 0;
    unsigned bits = 0;
    for (const char *p = text; *p; p++) {
        for (size_t d = 0; d < sizeof s_definite / sizeof s_definite[0]; d++)
            if (s_word_at (text, p, s_definite[d])) {
                bits |= s_name_at (p + strlen (s_definite[d]));
                break;
            }
        for (size_t l = 0; l < sizeof s_leads / sizeof s_leads[0]; l++) {
            if (!s_word_at (text, p, s_leads[l]))
                continue;
            const char *from = p + strlen (s_leads[l]), *end = s_clause_end (from);
            for (const char *q = from; q < end; q++)
                if (q == from || !isalpha ((unsigned char) q[-1]))
                    bits |= s_name_at (q);
        }
    }
    free (text);
    return bits & ~kf_prompt_idea_bits (idea);
}

char *
kf_prompt_idea_for_parent (const char *idea, unsigned features)
{
    return idea ? s_without_clauses (idea, features, false) : NULL;
}

bool
kf_prompt_idea_cites (const char *idea, int64_t id)
{
    static const char word[] = "candidate";
    for (const char *p = idea ? idea : ""; id > 0 && (p = strstr (p, word)); ) {
        p += sizeof word - 1;
        p += *p == 's';
        while (*p == ' ' || *p == '#')
            p++;
        char *end;
        long long n = strtoll (p, &end, 10);
        if (end > p && n == id && !isdigit ((unsigned char) *end))
            return true;
    }
    return false;
}
