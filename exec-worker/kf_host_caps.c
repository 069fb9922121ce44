/*  kf_host_caps.c - cache sizes and SIMD extensions of the host's CPU
 *  (kf_host_caps.h).
 *
 *  Read from the kernel's own reports (sysfs cache folders, the cpuinfo
 *  flags line) rather than CPUID, so the same code answers on x86 and
 *  ARM and a test can point it at a folder of its own. The ISA list is
 *  the extensions a kernel author would test for (#ifdef __AVX2__), in
 *  the spelling GCC's -m options and `__builtin_cpu_supports` use.
 */
#include "kf_host_caps.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The first line of PATH, without its newline, into BUF; false when it
//  cannot be read.
static bool
s_line (const char *path, char *buf, size_t size)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return false;
    bool ok = fgets (buf, (int) size, f) != NULL;
    fclose (f);
    if (ok)
        buf[strcspn (buf, "\n")] = 0;
    return ok;
}

//  "48K", "2048K", "32M", "1024" as bytes; 0 when not a size.
static double
s_size (const char *text)
{
    char *end = NULL;
    double v = strtod (text, &end);
    if (end == text || !(v > 0))
        return 0;
    switch (*end) {
    case 'K': case 'k': return v * 1024;
    case 'M': case 'm': return v * 1024 * 1024;
    case 'G': case 'g': return v * 1024 * 1024 * 1024;
    default: return v;
    }
}

//  The number of CPUs a cpulist names ("0-3,8-11" is 8); 0 when it
//  names none or is not a list.
static int
s_cpus (const char *list)
{
    int n = 0;
    for (const char *p = list; *p; ) {
        char *end = NULL;
        long a = strtol (p, &end, 10), b = a;
        if (end == p || a < 0)
            return 0;
        p = end;
        if (*p == '-') {
            b = strtol (p + 1, &end, 10);
            if (end == p + 1 || b < a)
                return 0;
            p = end;
        }
        n += (int) (b - a + 1);
        if (*p == ',')
            p++;
        else if (*p)
            return 0;
    }
    return n;
}

static int
s_caches (const char *dir, json_t *device)
{
    static const char *const keys[] = { NULL, "l1d_bytes", "l2_bytes", "l3_bytes" };
    static const char *const shared[] = { NULL, "l1d_shared_cpus", "l2_shared_cpus",
                                          "l3_shared_cpus" };
    int added = 0;
    for (int i = 0; i < 16; i++) {
        char path[512], level[32], type[32], size[32];
        snprintf (path, sizeof path, "%s/index%d/level", dir, i);
        if (!s_line (path, level, sizeof level))
            continue;
        snprintf (path, sizeof path, "%s/index%d/type", dir, i);
        if (!s_line (path, type, sizeof type))
            continue;
        snprintf (path, sizeof path, "%s/index%d/size", dir, i);
        if (!s_line (path, size, sizeof size))
            continue;
        int l = atoi (level);
        double bytes = s_size (size);
        //  The instruction cache holds no data a kernel can block for.
        if (l < 1 || l > 3 || !strcmp (type, "Instruction") || !(bytes > 0)
            || json_object_get (device, keys[l]))
            continue;
        json_object_set_new (device, keys[l], json_integer ((json_int_t) bytes));
        added++;
        //  Per core or shared: the CPUs this cache serves.
        char list[256];
        snprintf (path, sizeof path, "%s/index%d/shared_cpu_list", dir, i);
        int cpus = s_line (path, list, sizeof list) ? s_cpus (list) : 0;
        if (cpus > 0) {
            json_object_set_new (device, shared[l], json_integer (cpus));
            added++;
        }
    }
    return added;
}

//  cpuinfo's flag name and the compiler's, in the order of the list.
static const struct { const char *flag, *isa; } s_isa[] = {
    { "sse4_2", "sse4.2" }, { "avx", "avx" }, { "avx2", "avx2" }, { "fma", "fma" },
    { "f16c", "f16c" }, { "bmi2", "bmi2" }, { "avx512f", "avx512f" },
    { "avx512dq", "avx512dq" }, { "avx512cd", "avx512cd" }, { "avx512bw", "avx512bw" },
    { "avx512vl", "avx512vl" }, { "avx512_vnni", "avx512vnni" },
    { "avx512_bf16", "avx512bf16" }, { "avx512_fp16", "avx512fp16" },
    { "avx_vnni", "avxvnni" }, { "amx_tile", "amx-tile" }, { "amx_bf16", "amx-bf16" },
    { "amx_int8", "amx-int8" },
    //  ARM (cpuinfo's "Features" line).
    { "asimd", "neon" }, { "asimdhp", "fp16" }, { "asimddp", "dotprod" }, { "sve", "sve" },
    { "sve2", "sve2" },
};

//  Whether the space-separated word list LIST holds WORD.
static bool
s_has_word (const char *list, const char *word)
{
    size_t n = strlen (word);
    for (const char *p = list; (p = strstr (p, word)); p += n)
        if ((p == list || p[-1] == ' ' || p[-1] == '\t') && (p[n] == ' ' || p[n] == 0
                                                             || p[n] == '\t'))
            return true;
    return false;
}

static int
s_isa_read (const char *cpuinfo, json_t *device)
{
    FILE *f = fopen (cpuinfo, "r");
    if (!f)
        return 0;
    //  The flags line of a modern CPU runs past 1 KiB.
    size_t cap = 0;
    char *line = NULL, *flags = NULL;
    while (getline (&line, &cap, f) > 0)
        if (!strncmp (line, "flags", 5) || !strncmp (line, "Features", 8)) {
            char *colon = strchr (line, ':');
            if (colon) {
                colon[strcspn (colon, "\n")] = 0;
                flags = colon + 1;
            }
            break;
        }
    fclose (f);
    int added = 0;
    if (flags) {
        char isa[512] = "";
        for (size_t i = 0; i < sizeof s_isa / sizeof s_isa[0]; i++)
            if (s_has_word (flags, s_isa[i].flag)) {
                size_t used = strlen (isa);
                snprintf (isa + used, sizeof isa - used, "%s%s", used ? " " : "", s_isa[i].isa);
            }
        if (*isa) {
            json_object_set_new (device, "isa", json_string (isa));
            added = 1;
        }
    }
    free (line);
    return added;
}

int
kf_host_caps_read (const char *cache_dir, const char *cpuinfo, json_t *device)
{
    if (!json_is_object (device))
        return 0;
    return (cache_dir ? s_caches (cache_dir, device) : 0)
           + (cpuinfo ? s_isa_read (cpuinfo, device) : 0);
}
