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
        //  The L1's geometry: which addresses compete for a set (round 18:
        //  a panel with rows 2048 bytes apart falls in few of its sets).
        static const char *const l1[][2] = { { "ways_of_associativity", "l1d_ways" },
                                             { "coherency_line_size", "l1d_line_bytes" } };
        for (size_t k = 0; l == 1 && k < sizeof l1 / sizeof l1[0]; k++) {
            char value[32];
            snprintf (path, sizeof path, "%s/index%d/%s", dir, i, l1[k][0]);
            long v = s_line (path, value, sizeof value) ? atol (value) : 0;
            if (v > 0 && v <= 4096) {
                json_object_set_new (device, l1[k][1], json_integer (v));
                added++;
            }
        }
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

//  Physical cores and SMT from the cpuN/topology folders under CPU_DIR
//  (round 4: "2 cores" beside "2 logical CPUs" left open whether a
//  second thread gets a core of its own or shares one): the distinct
//  (package, core) pairs among the CPUs, and how many logical CPUs share
//  cpu0's core (its thread_siblings_list).
static int
s_topology (const char *cpu_dir, json_t *device)
{
    char path[512], line[256];
    snprintf (path, sizeof path, "%s/cpu0/topology/thread_siblings_list", cpu_dir);
    if (!s_line (path, line, sizeof line))
        return 0;
    int per_core = s_cpus (line);
    if (per_core < 1)
        return 0;
    enum { S_MAX = 4096 };
    long seen[S_MAX];
    int cores = 0, cpus = 0;
    for (int i = 0; i < S_MAX; i++) {
        char pkg[32] = "0", core[32];
        snprintf (path, sizeof path, "%s/cpu%d/topology/core_id", cpu_dir, i);
        if (!s_line (path, core, sizeof core))
            break;
        snprintf (path, sizeof path, "%s/cpu%d/topology/physical_package_id", cpu_dir, i);
        if (!s_line (path, pkg, sizeof pkg))
            snprintf (pkg, sizeof pkg, "0");
        long key = atol (pkg) * 1000003L + atol (core);
        bool known = false;
        for (int k = 0; k < cores && !known; k++)
            known = seen[k] == key;
        if (!known)
            seen[cores++] = key;
        cpus++;
    }
    if (cores < 1)
        return 0;
    json_object_set_new (device, "logical_cpus", json_integer (cpus));
    json_object_set_new (device, "physical_cores", json_integer (cores));
    json_object_set_new (device, "threads_per_core", json_integer (per_core));
    return 3;
}

//  The clock cpuinfo reports ("cpu MHz", the first CPU's; on x86 the
//  kernel's reading of the current frequency, often the base clock in a
//  virtual machine), when it gives one.
static int
s_clock (const char *cpuinfo, json_t *device)
{
    FILE *f = fopen (cpuinfo, "r");
    if (!f)
        return 0;
    size_t cap = 0;
    char *line = NULL;
    double mhz = 0;
    while (getline (&line, &cap, f) > 0)
        if (!strncmp (line, "cpu MHz", 7)) {
            char *colon = strchr (line, ':');
            mhz = colon ? strtod (colon + 1, NULL) : 0;
            break;
        }
    free (line);
    fclose (f);
    if (!(mhz > 0))
        return 0;
    json_object_set_new (device, "clock_mhz", json_real (mhz));
    json_object_set_new (device, "clock_source", json_string ("/proc/cpuinfo cpu MHz"));
    return 2;
}

//  The CPU's identity by CPUID as cpuinfo gives it (the first CPU's
//  "vendor_id", "cpu family" and "model" lines): "cpu_vendor",
//  "cpu_family", "cpu_model". Round 15: a virtual machine's model name
//  was "AMD EPYC", and the model had to guess the core's generation.
//  Only all three, and only where cpuinfo has them (x86).
static int
s_ident (const char *cpuinfo, json_t *device)
{
    FILE *f = fopen (cpuinfo, "r");
    if (!f)
        return 0;
    size_t cap = 0;
    char *line = NULL, vendor[64] = "";
    long family = -1, model = -1;
    while (getline (&line, &cap, f) > 0 && !(*vendor && family >= 0 && model >= 0)) {
        char *colon = strchr (line, ':');
        if (!colon)
            continue;
        //  The key: the text before the colon, its tabs and spaces off
        //  ("model" is not "model name").
        size_t k = (size_t) (colon - line);
        while (k > 0 && (line[k - 1] == ' ' || line[k - 1] == '\t'))
            k--;
        char *value = colon + 1, *end = NULL;
        value += strspn (value, " \t");
        value[strcspn (value, "\n")] = 0;
        if (k == 9 && !strncmp (line, "vendor_id", 9) && !*vendor && *value)
            snprintf (vendor, sizeof vendor, "%s", value);
        else if (k == 10 && !strncmp (line, "cpu family", 10) && family < 0) {
            long v = strtol (value, &end, 10);
            family = end != value && !*end && v >= 0 ? v : -1;
        }
        else if (k == 5 && !strncmp (line, "model", 5) && model < 0) {
            long v = strtol (value, &end, 10);
            model = end != value && !*end && v >= 0 ? v : -1;
        }
    }
    free (line);
    fclose (f);
    if (!*vendor || family < 0 || model < 0)
        return 0;
    json_object_set_new (device, "cpu_vendor", json_string (vendor));
    json_object_set_new (device, "cpu_family", json_integer (family));
    json_object_set_new (device, "cpu_model", json_integer (model));
    return 3;
}

int
kf_host_cpu_model (char *model, size_t size)
{
    FILE *f = fopen ("/proc/cpuinfo", "r");
    char line[512];
    int rc = -1;
    while (f && rc != 0 && fgets (line, sizeof line, f))
        if (strncmp (line, "model name", 10) == 0) {
            char *colon = strchr (line, ':');
            if (colon) {
                colon++;
                while (*colon == ' ' || *colon == '\t')
                    colon++;
                snprintf (model, size, "%.*s", (int) strcspn (colon, "\n"), colon);
                rc = 0;
            }
            break;
        }
    if (f)
        fclose (f);
    return rc;
}

int
kf_host_caps_read (const char *cache_dir, const char *cpuinfo, json_t *device)
{
    if (!json_is_object (device))
        return 0;
    int added = (cache_dir ? s_caches (cache_dir, device) : 0)
                + (cpuinfo ? s_isa_read (cpuinfo, device) + s_clock (cpuinfo, device)
                                 + s_ident (cpuinfo, device)
                           : 0);
    //  The CPUs' folder is the cache folder's grandparent when it is
    //  ".../cpuN/cache" (sysfs's layout).
    size_t n = cache_dir ? strlen (cache_dir) : 0;
    const char *tail = "/cache";
    if (n > 6 && !strcmp (cache_dir + n - 6, tail)) {
        char dir[512];
        snprintf (dir, sizeof dir, "%.*s", (int) (n - 6), cache_dir);
        char *slash = strrchr (dir, '/');
        if (slash && !strncmp (slash, "/cpu", 4)) {
            *slash = 0;
            added += s_topology (dir, device);
        }
    }
    return added;
}

int
kf_host_caps_cpuid_caches (json_t *device, const long sizes[3])
{
    static const char *const keys[] = { "l1d_bytes", "l2_bytes", "l3_bytes" };
    if (!json_is_object (device))
        return 0;
    int added = 0;
    for (int l = 0; l < 3; l++)
        if (sizes[l] > 0 && !json_object_get (device, keys[l])) {
            json_object_set_new (device, keys[l], json_integer ((json_int_t) sizes[l]));
            added++;
        }
    if (added) {
        json_object_set_new (device, "cache_source", json_string ("cpuid"));
        added++;
    }
    return added;
}
