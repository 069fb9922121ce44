/*  kf_descriptor_simd.c - whether a source computes in vector registers
 *  (kf_descriptor_simd.h): the intrinsics that compute, not those that
 *  only move data, and vector types used by operators.
 */
#include "kf_descriptor_simd.h"
#include "kf_text.h"

#include <ctype.h>
#include <stddef.h>
#include <string.h>

//  The intrinsics that only move data: loads and stores of every kind,
//  setting and broadcasting values, casts between register types,
//  fences and prefetches. Anything else computes.
static bool
s_moves_only (const char *name, size_t len)
{
    static const char *const moves[] = {
        "load", "store", "stream", "set", "broadcast", "cast", "sfence", "lfence", "mfence",
        "prefetch", "undefined", "lddqu", "maskload", "maskstore", "zextps", "zextsi",
    };
    for (size_t i = 0; i < sizeof moves / sizeof moves[0]; i++) {
        size_t m = strlen (moves[i]);
        if (len >= m && !strncmp (name, moves[i], m))
            return true;
    }
    return false;
}

bool
kf_descriptor_simd_math (const char *code)
{
    if (!code)
        return false;
    for (const char *p = code; (p = strstr (p, "_mm")); p += 3) {
        if (p > code && (isalnum ((unsigned char) p[-1]) || p[-1] == '_'))
            continue;
        const char *q = p + 3;
        if (!strncmp (q, "256", 3) || !strncmp (q, "512", 3))
            q += 3;
        if (*q != '_')
            continue;
        q++;
        size_t len = 0;
        while (isalnum ((unsigned char) q[len]) || q[len] == '_')
            len++;
        const char *after = q + len;
        while (*after == ' ' || *after == '\t' || *after == '\n')
            after++;
        if (len > 0 && *after == '(' && !s_moves_only (q, len))
            return true;
    }
    return kf_text_matches (code, "\\b(vector_size|ext_vector_type)\\b"
                                  "|\\b(float|int|uint)(8|16|32|64)x[0-9]+(x[0-9])?_t\\b"
                                  "|\\bv(add|mul|fma|sub|max|min)q?_\\w+");
}
