/*  kf_prompt_does.c - what a kernel already does, for the ideas handed to
 *  its children (kf_prompt_class.h: kf_prompt_idea_feature,
 *  kf_prompt_source_does).
 *
 *  The descriptors (analysis/kf_descriptor.c) place a kernel on the grid
 *  by a few canonical forms; a planner that asks "does this kernel unroll,
 *  approximate, block for registers?" needs the forms a model writes too.
 *  Round 6 of issue 15 handed ideas to parents that already did them: a
 *  kernel unrolled by hand (four loads at +0, +16, +32, +48 and four
 *  accumulators), a polynomial whose coefficients were named constants
 *  (p = _mm512_fmadd_ps (p, t, c3)), 2^k built by _mm512_slli_epi32 (k,
 *  23), a micro-kernel of accumulators c00 ... c13 were all read as not
 *  doing it. The extra forms here are read from the code with comments and
 *  strings blanked, and decide only which parent an idea starts from: the
 *  grid's coordinates stay the descriptors'. The accumulators are read
 *  once, by the descriptors' own reading (analysis/kf_descriptor_acc.h),
 *  so a register tile the planner sees is one the grid sees too (round 7).
 */
#include "kf_prompt_class.h"
#include "kf_descriptor.h"
#include "kf_descriptor_acc.h"
#include "kf_descriptor_text.h"
#include "kf_text.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

kf_idea_feature_t
kf_prompt_idea_feature (const char *idea)
{
    static const struct { const char *word; kf_idea_feature_t f; } map[] = {
        { "by threads", KF_IDEA_THREADS }, { "split across threads", KF_IDEA_THREADS },
        { "by non-temporal", KF_IDEA_STREAM }, { "streaming loads", KF_IDEA_STREAM },
        { "by explicit SIMD intrinsics", KF_IDEA_SIMD },
        { "by unrolling", KF_IDEA_UNROLL },
        { "by a branch-free approximation", KF_IDEA_APPROX },
        { "micro-kernel", KF_IDEA_MICRO },
        { "by cache blocking", KF_IDEA_BLOCK }, { "by blocking several rows", KF_IDEA_BLOCK },
        { "by packing", KF_IDEA_PACK },
        { "by a single fused pass", KF_IDEA_FUSED_ROW },
        { "by several independent accumulators", KF_IDEA_ACCUMULATORS },
    };
    for (size_t i = 0; idea && i < sizeof map / sizeof map[0]; i++)
        if (strstr (idea, map[i].word))
            return map[i].f;
    return KF_IDEA_OTHER;
}

//  ---------------------------------------------------------------------
//  Features

unsigned
kf_prompt_source_features (const char *source, const char *language)
{
    if (!source || !*source)
        return 0;
    const char *lang = language && *language ? language : "c";
    kf_coords_t c = { 0, 0, 0 };
    char *why = NULL;
    //  The descriptors read the code with comments and strings blanked.
    if (kf_descriptor_classify (source, strlen (source), lang, &c, &why) != 0)
        why = NULL;
    const char *w = why ? why : "";
    char *code = strdup (source);
    if (code) {
        kf_descriptor_strip_text (code, false);
        kf_descriptor_blank_if0 (code);
    }
    const char *t = code ? code : source;
    //  The accumulators as the descriptors read them (one reading for both).
    kf_descriptor_acc_t acc;
    kf_descriptor_accumulators (t, &acc);
    bool host = !strcmp (lang, "c");
    unsigned f = 0;
#define S_SET(feature, cond) (f |= (cond) ? 1u << (feature) : 0)
    S_SET (KF_IDEA_THREADS, c.sync >= 1);
    S_SET (KF_IDEA_SIMD, strstr (w, "SIMD intrinsics") || strstr (w, "vector extension"));
    S_SET (KF_IDEA_STREAM,
           kf_text_matches (t, "\\b_mm(256|512)?_stream_(ps|pd|si(32|64|128|256|512))\\b|"
                               "__builtin_nontemporal_store|\\b__stcs\\b|\\bst\\.global\\.cs\\b"));
    //  Several vectors per iteration: a pragma, two accumulators or more,
    //  or a load at a constant offset of whole vectors from the index.
    S_SET (KF_IDEA_UNROLL,
           kf_text_matches (t, "#[[:space:]]*pragma[[:space:]]+(GCC[[:space:]]+)?unroll")
           || kf_text_matches (t, "\\b[[:alpha:]_]*acc[[:alpha:]_]*1\\b[^;]*=[^;]*;")
           || acc.same >= 2 || strstr (w, "per-lane accumulator") || strstr (w, "register tile")
           || kf_text_matches (t, "_mm(256|512)?_loadu?_(ps|pd|si(128|256|512))[[:space:]]*"
                                  "\\([^;]*\\+[[:space:]]*(4|8|16|24|32|48|64|96|128)"
                                  "[[:space:]]*[])]"));
    //  Approximate math is a note of the descriptors, not a level (round 7).
    S_SET (KF_IDEA_APPROX, c.algo >= 2 || strstr (w, "approximate math") || acc.horner >= 3
                           || kf_text_matches (t, "_slli_epi32[[:space:]]*\\([^;]*,[[:space:]]*"
                                                  "23[[:space:]]*\\)"));
    //  On the host, blocking for a cache, not a register tile alone (the
    //  descriptors' level 2 counts both).
    S_SET (KF_IDEA_BLOCK, host ? strstr (w, "(cache blocking)") || strstr (w, "cache-level")
                                     || strstr (w, "inside cache blocks")
                               : c.mem >= 2);
    S_SET (KF_IDEA_MICRO, strstr (w, "register tile") || kf_descriptor_acc_is_tile (&acc));
    S_SET (KF_IDEA_PACK, strstr (w, "packed")
                         || kf_text_matches (t, "\\b[[:alnum:]_]*[Pp]ack[[:alnum:]_]*[[:space:]]*"
                                                "\\[[^];]*\\][[:space:]]*=[^=]"));
    S_SET (KF_IDEA_FUSED_ROW, c.algo >= 1);
    S_SET (KF_IDEA_ACCUMULATORS, strstr (w, "per-lane accumulator") || acc.same >= 2);
#undef S_SET
    free (code);
    free (why);
    return f;
}

bool
kf_prompt_source_does (const char *source, const char *language, kf_idea_feature_t f)
{
    return f != KF_IDEA_OTHER && (kf_prompt_source_features (source, language) >> f) & 1u;
}
