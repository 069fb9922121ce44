/*  kf_isa.c - extension lists to compiler flags (kf_isa.h).
 *
 *  Only extensions every supported compiler has accepted for years are
 *  turned into flags: an -m option a compiler does not know fails every
 *  build, while leaving a newer extension out (AMX, AVX512-FP16) costs
 *  only the intrinsics of it, which a kernel guards with #ifdef anyway.
 */
#include "kf_isa.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct { const char *name, *flag; } s_x86[] = {
    { "sse4.2", "-msse4.2" }, { "avx", "-mavx" }, { "avx2", "-mavx2" }, { "fma", "-mfma" },
    { "f16c", "-mf16c" }, { "bmi2", "-mbmi2" }, { "avx512f", "-mavx512f" },
    { "avx512dq", "-mavx512dq" }, { "avx512cd", "-mavx512cd" }, { "avx512bw", "-mavx512bw" },
    { "avx512vl", "-mavx512vl" }, { "avx512vnni", "-mavx512vnni" },
};

//  Whether the space-separated LIST holds WORD.
static bool
s_has (const char *list, const char *word, size_t n)
{
    for (const char *p = list; p && *p; ) {
        while (*p == ' ')
            p++;
        size_t len = strcspn (p, " ");
        if (len == n && !strncmp (p, word, n))
            return true;
        p += len;
    }
    return false;
}

bool
kf_isa_has (const char *isa, const char *name)
{
    return name && s_has (isa, name, strlen (name));
}

size_t
kf_isa_flags (const char *isa, const char **flags, size_t max)
{
    size_t n = 0;
    if (!flags || max == 0)
        return 0;
    bool x86 = false;
    for (size_t i = 0; i < sizeof s_x86 / sizeof s_x86[0]; i++)
        x86 |= s_has (isa, s_x86[i].name, strlen (s_x86[i].name));
    if (x86) {
        flags[n++] = "-march=x86-64";
        for (size_t i = 0; i < sizeof s_x86 / sizeof s_x86[0] && n < max; i++)
            if (s_has (isa, s_x86[i].name, strlen (s_x86[i].name)))
                flags[n++] = s_x86[i].flag;
    }
    else if (s_has (isa, "neon", 4))
        flags[n++] = "-march=armv8-a";
    else
        flags[n++] = "-march=native";
    return n;
}

char *
kf_isa_flags_line (const char *isa, char *buf, size_t size)
{
    const char *flags[32];
    size_t n = kf_isa_flags (isa, flags, 32);
    size_t used = 0;
    if (size)
        buf[0] = 0;
    for (size_t i = 0; i < n && used < size; i++)
        used += (size_t) snprintf (buf + used, size - used, "%s%s", i ? " " : "", flags[i]);
    return buf;
}

//  Whether the extension P (LEN bytes) is one kf_isa_flags enables.
static bool
s_flagged (const char *p, size_t len)
{
    for (size_t i = 0; i < sizeof s_x86 / sizeof s_x86[0]; i++)
        if (strlen (s_x86[i].name) == len && !strncmp (p, s_x86[i].name, len))
            return true;
    //  -march=armv8-a has NEON; fp16, dotprod and SVE need later levels.
    return len == 4 && !strncmp (p, "neon", 4);
}

char *
kf_isa_select (const char *isa, bool enabled)
{
    size_t size = isa ? strlen (isa) + 1 : 1;
    char *out = malloc (size);
    if (!out)
        return NULL;
    size_t used = 0;
    out[0] = 0;
    for (const char *p = isa; p && *p; ) {
        while (*p == ' ')
            p++;
        size_t len = strcspn (p, " ");
        if (len && s_flagged (p, len) == enabled) {
            if (used)
                out[used++] = ' ';
            memcpy (out + used, p, len);
            used += len;
            out[used] = 0;
        }
        p += len;
    }
    return out;
}

char *
kf_isa_common (const char *a, const char *b)
{
    size_t size = a ? strlen (a) + 1 : 1;
    char *out = malloc (size);
    if (!out)
        return NULL;
    size_t used = 0;
    out[0] = 0;
    for (const char *p = a; p && *p; ) {
        while (*p == ' ')
            p++;
        size_t len = strcspn (p, " ");
        if (len && (!b || s_has (b, p, len))) {
            if (used)
                out[used++] = ' ';
            memcpy (out + used, p, len);
            used += len;
            out[used] = 0;
        }
        p += len;
    }
    return out;
}
