/*  test_host_caps.c - the host exec worker reports its data caches and
 *  SIMD extensions (exec-worker/kf_host_caps.c), which the prompt's
 *  Target section states and the host compile job targets (flagged by
 *  the model in the loop, issue 15: "host cache sizes and the exact ISA
 *  not reported").
 *
 *  A made-up sysfs folder and cpuinfo file give known answers; then this
 *  machine's own files are read and checked against what the same files
 *  say when read by the shell's tools.
 */
#include "../kf_test.h"
#include "../../exec-worker/kf_host_caps.h"
#include "../../exec-worker/kf_host_measure.h"
#include "../../exec-worker/kf_eval_check.h"
#include "../../exec-worker/kf_host_figures.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *
s_str (json_t *o, const char *key)
{
    const char *v = json_string_value (json_object_get (o, key));
    return v ? v : "";
}

static void
s_write (const char *dir, const char *name, const char *text)
{
    char path[512];
    snprintf (path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen (path, "w");
    CHECK (f != NULL);
    if (f) {
        fputs (text, f);
        fclose (f);
    }
}

static void
s_index (const char *root, int i, const char *level, const char *type, const char *size,
         const char *cpus)
{
    char dir[512];
    snprintf (dir, sizeof dir, "%s/index%d", root, i);
    CHECK (mkdir (dir, 0755) == 0);
    s_write (dir, "level", level);
    s_write (dir, "type", type);
    s_write (dir, "size", size);
    if (cpus)
        s_write (dir, "shared_cpu_list", cpus);
    //  The L1's geometry (round 18): 12 ways of 64-byte lines.
    if (!strcmp (level, "1\n") && !strcmp (type, "Data\n")) {
        s_write (dir, "ways_of_associativity", "12\n");
        s_write (dir, "coherency_line_size", "64\n");
    }
}

static void
s_fixture (void)
{
    char root[] = "/tmp/kf_host_caps.XXXXXX";
    CHECK (mkdtemp (root) != NULL);
    char cache[600];
    snprintf (cache, sizeof cache, "%s/cache", root);
    CHECK (mkdir (cache, 0755) == 0);
    //  Per core, a core's two hyperthreads, a socket of 8 (round 3: the
    //  prompt gave sizes without saying which are per core).
    s_index (cache, 0, "1\n", "Data\n", "48K\n", "0\n");
    s_index (cache, 1, "1\n", "Instruction\n", "64K\n", "0\n");
    s_index (cache, 2, "2\n", "Unified\n", "2048K\n", "0,2\n");
    s_index (cache, 3, "3\n", "Unified\n", "480M\n", "0-3,8-11\n");
    s_write (root, "cpuinfo",
             "processor\t: 0\nmodel name\t: Test CPU\n"
             "flags\t\t: fpu sse sse2 ssse3 sse4_1 sse4_2 avx avx2 fma avx512f avx512bw "
             "avx512vl avx512_vnni avx512vbmi amx_tile\n"
             "processor\t: 1\nflags\t\t: fpu\n");
    char cpuinfo[600];
    snprintf (cpuinfo, sizeof cpuinfo, "%s/cpuinfo", root);
    json_t *d = json_object ();
    CHECK (kf_host_caps_read (cache, cpuinfo, d) == 9);
    CHECK (json_integer_value (json_object_get (d, "l1d_ways")) == 12);
    CHECK (json_integer_value (json_object_get (d, "l1d_line_bytes")) == 64);
    CHECK (json_integer_value (json_object_get (d, "l1d_shared_cpus")) == 1);
    CHECK (json_integer_value (json_object_get (d, "l2_shared_cpus")) == 2);
    CHECK (json_integer_value (json_object_get (d, "l3_shared_cpus")) == 8);
    CHECK (json_integer_value (json_object_get (d, "l1d_bytes")) == 48 * 1024);
    CHECK (json_integer_value (json_object_get (d, "l2_bytes")) == 2048 * 1024);
    CHECK (json_integer_value (json_object_get (d, "l3_bytes")) == 480LL * 1024 * 1024);
    CHECK (!strcmp (s_str (d, "isa"),
                    "sse4.2 avx avx2 fma avx512f avx512bw avx512vl avx512vnni amx-tile"));
    json_decref (d);
    //  A list that is not one adds no count, the size still.
    char l3[700];
    snprintf (l3, sizeof l3, "%s/index3", cache);
    s_write (l3, "shared_cpu_list", "0-x\n");
    d = json_object ();
    CHECK (kf_host_caps_read (cache, NULL, d) == 7);
    CHECK (json_object_get (d, "l3_bytes") && !json_object_get (d, "l3_shared_cpus"));
    json_decref (d);
    //  An ARM Features line; no cache folder: only the ISA.
    s_write (root, "cpuinfo", "Features\t: fp asimd evtstrm aes asimdhp asimddp sve\n");
    d = json_object ();
    CHECK (kf_host_caps_read ("/nonexistent", cpuinfo, d) == 1);
    CHECK (!strcmp (s_str (d, "isa"),
                    "neon fp16 dotprod sve"));
    json_decref (d);
    //  Round 4: "2 cores" beside "2 logical CPUs". A sysfs-shaped tree:
    //  four logical CPUs, two cores of two SMT threads each; and cpuinfo's
    //  clock.
    char cpu[700], dir[800];
    snprintf (cpu, sizeof cpu, "%s/cpu", root);
    CHECK (mkdir (cpu, 0755) == 0);
    for (int i = 0; i < 4; i++) {
        snprintf (dir, sizeof dir, "%s/cpu%d", cpu, i);
        CHECK (mkdir (dir, 0755) == 0);
        snprintf (dir, sizeof dir, "%s/cpu%d/topology", cpu, i);
        CHECK (mkdir (dir, 0755) == 0);
        s_write (dir, "core_id", i % 2 ? "1\n" : "0\n");
        s_write (dir, "physical_package_id", "0\n");
        s_write (dir, "thread_siblings_list", i % 2 ? "1,3\n" : "0,2\n");
    }
    snprintf (dir, sizeof dir, "%s/cpu0/cache", cpu);
    CHECK (mkdir (dir, 0755) == 0);
    s_index (dir, 0, "1\n", "Data\n", "32K\n", "0,2\n");
    s_write (root, "cpuinfo", "processor\t: 0\ncpu MHz\t\t: 2599.998\nflags\t\t: avx2\n");
    d = json_object ();
    CHECK (kf_host_caps_read (dir, cpuinfo, d) == 2 + 1 + 2 + 2 + 3);
    CHECK (json_integer_value (json_object_get (d, "logical_cpus")) == 4);
    CHECK (json_integer_value (json_object_get (d, "physical_cores")) == 2);
    CHECK (json_integer_value (json_object_get (d, "threads_per_core")) == 2);
    CHECK (json_real_value (json_object_get (d, "clock_mhz")) > 2599.9
           && json_real_value (json_object_get (d, "clock_mhz")) < 2600.0);
    CHECK (!strcmp (s_str (d, "clock_source"), "/proc/cpuinfo cpu MHz"));
    json_decref (d);
    //  One thread per core: as many cores as logical CPUs.
    for (int i = 0; i < 4; i++) {
        snprintf (dir, sizeof dir, "%s/cpu%d/topology", cpu, i);
        char id[16];
        snprintf (id, sizeof id, "%d\n", i);
        s_write (dir, "core_id", id);
        s_write (dir, "thread_siblings_list", id);
    }
    snprintf (dir, sizeof dir, "%s/cpu0/cache", cpu);
    d = json_object ();
    kf_host_caps_read (dir, NULL, d);
    CHECK (json_integer_value (json_object_get (d, "physical_cores")) == 4);
    CHECK (json_integer_value (json_object_get (d, "threads_per_core")) == 1);
    json_decref (d);
    char cmd[700];
    snprintf (cmd, sizeof cmd, "rm -rf '%s'", root);
    CHECK (system (cmd) == 0);
}

//  Round 6: no sysfs cache folders on a virtual machine left the prompt
//  without cache sizes; the CPU's own sizes fill what sysfs lacks, and
//  never replace what it gave.
static void
s_cpuid_caches (void)
{
    json_t *d = json_object ();
    const long sizes[3] = { 49152, 1048576, 33554432 };
    CHECK (kf_host_caps_cpuid_caches (d, sizes) == 4);
    CHECK (json_integer_value (json_object_get (d, "l1d_bytes")) == 49152);
    CHECK (json_integer_value (json_object_get (d, "l2_bytes")) == 1048576);
    CHECK (json_integer_value (json_object_get (d, "l3_bytes")) == 33554432);
    CHECK (!strcmp (json_string_value (json_object_get (d, "cache_source")), "cpuid"));
    json_decref (d);
    d = json_pack ("{s:i}", "l2_bytes", 524288);
    const long partial[3] = { 0, 1048576, -1 };
    CHECK (kf_host_caps_cpuid_caches (d, partial) == 0);
    CHECK (json_integer_value (json_object_get (d, "l2_bytes")) == 524288);
    CHECK (!json_object_get (d, "l1d_bytes") && !json_object_get (d, "l3_bytes"));
    CHECK (!json_object_get (d, "cache_source"));
    json_decref (d);
    CHECK (kf_host_caps_cpuid_caches (NULL, sizes) == 0);
}

//  Round 15: a virtual machine's model name was "AMD EPYC", and the
//  model had to guess the core. cpuinfo's vendor_id, cpu family and model
//  (the first CPU's; "model" is not "model name"), all three or none.
static void
s_ident (void)
{
    char root[] = "/tmp/kf_host_ident.XXXXXX";
    CHECK (mkdtemp (root) != NULL);
    char cpuinfo[600];
    snprintf (cpuinfo, sizeof cpuinfo, "%s/cpuinfo", root);
    //  This machine's first lines; a second CPU that differs is not read.
    s_write (root, "cpuinfo",
             "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: 2\n"
             "model name\t: AMD EPYC\nstepping\t: 1\n\n"
             "processor\t: 1\nvendor_id\t: GenuineIntel\ncpu family\t: 6\nmodel\t\t: 143\n");
    json_t *d = json_object ();
    CHECK (kf_host_caps_read (NULL, cpuinfo, d) == 3);
    CHECK (!strcmp (s_str (d, "cpu_vendor"), "AuthenticAMD"));
    CHECK (json_integer_value (json_object_get (d, "cpu_family")) == 26);
    CHECK (json_integer_value (json_object_get (d, "cpu_model")) == 2);
    json_decref (d);
    //  The model name first: not taken for the model.
    s_write (root, "cpuinfo",
             "vendor_id\t: GenuineIntel\ncpu family\t: 6\n"
             "model name\t: Intel(R) Xeon(R) Platinum 8480+\nmodel\t\t: 143\n"
             "cpu MHz\t\t: 2000.000\n");
    d = json_object ();
    CHECK (kf_host_caps_read (NULL, cpuinfo, d) == 2 + 3);
    CHECK (!strcmp (s_str (d, "cpu_vendor"), "GenuineIntel"));
    CHECK (json_integer_value (json_object_get (d, "cpu_family")) == 6);
    CHECK (json_integer_value (json_object_get (d, "cpu_model")) == 143);
    json_decref (d);
    //  No family, a model that is not a number, an ARM cpuinfo: nothing.
    static const char *const partial[] = {
        "vendor_id\t: AuthenticAMD\nmodel\t\t: 2\n",
        "vendor_id\t: AuthenticAMD\ncpu family\t: 26\nmodel\t\t: two\n",
        "processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\nmodel name\t: ARMv8\n",
    };
    for (size_t i = 0; i < sizeof partial / sizeof partial[0]; i++) {
        s_write (root, "cpuinfo", partial[i]);
        d = json_object ();
        CHECK (kf_host_caps_read (NULL, cpuinfo, d) == 0);
        CHECK (!json_object_get (d, "cpu_vendor") && !json_object_get (d, "cpu_model"));
        json_decref (d);
    }
    unlink (cpuinfo);
    rmdir (root);
    //  This machine: what grep finds in its cpuinfo.
    d = json_object ();
    kf_host_caps_read (NULL, "/proc/cpuinfo", d);
    FILE *p = popen ("grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2", "r");
    char line[64] = "";
    if (p) {
        if (!fgets (line, sizeof line, p))
            line[0] = 0;
        pclose (p);
    }
    if (atoi (line) > 0) {
        CHECK (json_integer_value (json_object_get (d, "cpu_family")) == atoi (line));
        CHECK (*s_str (d, "cpu_vendor"));
    }
    printf ("this host's CPU: %s family %lld model %lld\n", s_str (d, "cpu_vendor"),
            (long long) json_integer_value (json_object_get (d, "cpu_family")),
            (long long) json_integer_value (json_object_get (d, "cpu_model")));
    json_decref (d);
}

//  This machine: what its sysfs and cpuinfo say, read by the shell.
static void
s_this_host (void)
{
    json_t *d = json_object ();
    int n = kf_host_caps_read ("/sys/devices/system/cpu/cpu0/cache", "/proc/cpuinfo", d);
    char *text = json_dumps (d, JSON_COMPACT);
    printf ("this host: %d keys: %s\n", n, text ? text : "");
    free (text);
    FILE *p = popen ("for i in /sys/devices/system/cpu/cpu0/cache/index*; do "
                     "[ \"$(cat $i/level)\" = 2 ] && cat $i/size; done | head -1", "r");
    char line[64] = "";
    if (p) {
        if (!fgets (line, sizeof line, p))
            line[0] = 0;
        pclose (p);
    }
    if (*line) {
        long kib = strtol (line, NULL, 10);
        CHECK (json_integer_value (json_object_get (d, "l2_bytes")) == kib * 1024);
        //  Every Linux cache folder has a shared_cpu_list.
        CHECK (json_integer_value (json_object_get (d, "l2_shared_cpus")) >= 1);
    }
    p = popen ("grep -m1 '^flags' /proc/cpuinfo | grep -qw avx2 && echo yes", "r");
    line[0] = 0;
    if (p) {
        if (!fgets (line, sizeof line, p))
            line[0] = 0;
        pclose (p);
    }
    const char *isa = json_string_value (json_object_get (d, "isa"));
    if (!strncmp (line, "yes", 3))
        CHECK (isa && strstr (isa, "avx2"));
    //  Physical cores as the shell counts distinct (package, core) pairs.
    p = popen ("cd /sys/devices/system/cpu && for c in cpu[0-9]*; do "
               "echo $(cat $c/topology/physical_package_id 2>/dev/null || echo 0)."
               "$(cat $c/topology/core_id); done 2>/dev/null | sort -u | wc -l", "r");
    line[0] = 0;
    if (p) {
        if (!fgets (line, sizeof line, p))
            line[0] = 0;
        pclose (p);
    }
    if (atoi (line) > 0 && json_object_get (d, "physical_cores"))
        CHECK (json_integer_value (json_object_get (d, "physical_cores")) == atoi (line));
    json_decref (d);
}

static double
s_num (json_t *o, const char *key)
{
    return json_number_value (json_object_get (o, key));
}

//  What one core and all of them do, measured at start (round 3: "the
//  all-core figure is one core's", "no thread start and join cost", "the
//  copy figure silent on the write-allocate read"): each figure is there,
//  in a range no real CPU leaves, and the whole costs well under a second
//  of CPU (its processor time, which a loaded machine's waits do not
//  inflate; the wall time only for the log).
static void
s_measured (void)
{
    json_t *d = json_object ();
    struct timespec t0, t1, c0, c1;
    clock_gettime (CLOCK_MONOTONIC, &t0);
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &c0);
    int n = kf_host_caps_measure (d);
    clock_gettime (CLOCK_PROCESS_CPUTIME_ID, &c1);
    clock_gettime (CLOCK_MONOTONIC, &t1);
    double s = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    double cpu = (double) (c1.tv_sec - c0.tv_sec) + (double) (c1.tv_nsec - c0.tv_nsec) * 1e-9;
    char *text = json_dumps (d, JSON_COMPACT);
    printf ("measured in %.3f s (%.3f s of CPU): %d keys: %s\n", s, cpu, n, text ? text : "");
    free (text);
    bool stream = false;
#if defined(__x86_64__)
    stream = __builtin_cpu_supports ("avx2");
#endif
    //  The first call measures every figure of the boot at once
    //  (kf_host_figures.h): one core's and the all-core ceilings, a
    //  thread on each CPU for the latter. A Zen 5 VM's AVX-512 figures
    //  took 3.21 s of CPU under AddressSanitizer on 2 CPUs (5.3 s wall).
    CHECK (cpu < 2.5 * (double) sysconf (_SC_NPROCESSORS_ONLN));
    bool x86 = false;
#if defined(__x86_64__)
    x86 = true;
#endif
    //  Round 5: the ordinary copy's traffic with its write-allocate read,
    //  and a cold-cache one-core read, beside the rest; round 13: the
    //  cold read of all cores at once, and one core's L2 read where the
    //  L2's size is known.
    bool l2 = json_object_get (d, "read_l2_one_core_gbs") != NULL;
    //  Round 17: every logical CPU reading from its L2 at once, where
    //  there are two or more (two threads of an L2-bound kernel scaled
    //  poorly, and nothing measured whether their L2 reads add up).
    bool l2_all = json_object_get (d, "read_l2_all_cores_gbs") != NULL;
    CHECK (!l2_all || l2);
    //  Round 15: the widest vector's divide, square root, reciprocal
    //  estimate and FMA, throughput and latency, and its lanes
    //  (test_host_vec.c checks their values).
    bool vec = false;
#if defined(__x86_64__)
    vec = __builtin_cpu_supports ("avx512f")
          || (__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma"));
#endif
    //  Round 18: and all cores' streaming copy with them (2 keys); round 19:
    //  six more vector costs (kf_host_vec.h); round 20: one core's and all
    //  cores' streaming writes (4 keys), seven instructions alone and
    //  beside FMAs (14); round 21: five more (10, vhaddps's 2 not with
    //  AVX-512, which has no 512-bit form of it).
    bool wide = false;
#if defined(__x86_64__)
    wide = __builtin_cpu_supports ("avx512f");
#endif
    //  Version 13: a load's latency from memory everywhere, from L2 where
    //  its size is known, each in cycles too where the clock was measured.
    bool l2_lat = json_object_get (d, "l2_latency_ns") != NULL;
    //  Version 14: the data TLBs' pages, where their steps showed (a
    //  virtual machine may blur them); the second only with the first.
    bool tlb1 = json_object_get (d, "dtlb_l1_pages") != NULL;
    bool tlb2 = json_object_get (d, "dtlb_l2_pages") != NULL;
    CHECK (!tlb2 || tlb1);
    printf ("data TLB: first level %lld pages, second %lld (0: no clear step)\n",
            (long long) s_num (d, "dtlb_l1_pages"), (long long) s_num (d, "dtlb_l2_pages"));
    CHECK (n == (stream ? 17 : 3) + (x86 ? 1 : 0) + (l2 ? 2 : 0) + (l2_all ? 2 : 0)
                + (vec ? (wide ? 37 : 39) : 0) + (x86 ? 2 : 1) * (1 + (l2_lat ? 1 : 0))
                + (tlb1 ? 1 : 0) + (tlb2 ? 1 : 0));
    CHECK (!vec || (json_object_get (d, "vec_div_cycles") && json_object_get (d, "vec_lanes")));
    if (stream && sysconf (_SC_LEVEL2_CACHE_SIZE) >= 256 << 10)
        CHECK (l2);
    //  The clock a dependent add chain runs at (round 4: none was given):
    //  a real core's, 0.2 to 7 GHz; within 0.4x to 2.5x of what cpuinfo
    //  says where it says (base clock against turbo, a throttled VM). An
    //  add-immediate chain gave 16 GHz on this machine's cores (folded by
    //  the renamer): the upper bound catches that.
    if (x86) {
        double mhz = s_num (d, "clock_mhz_measured");
        CHECK (mhz > 200 && mhz < 7000);
        json_t *caps = json_object ();
        kf_host_caps_read (NULL, "/proc/cpuinfo", caps);
        if (s_num (caps, "clock_mhz") > 0)
            CHECK (mhz > 0.4 * s_num (caps, "clock_mhz") && mhz < 2.5 * s_num (caps, "clock_mhz"));
        json_decref (caps);
        //  No x86 core does more than 64 f32 flops a cycle (two 512-bit
        //  FMA pipes): round 9's clock, 1922 MHz beside 226 GFLOP/s on one
        //  core, was runs cut by other processes (test_host_caps.c measures
        //  both in one process, so a slow FMA run cannot hide a slow clock).
        printf ("clock %.0f MHz, one-core FMA %.1f GFLOP/s: %.1f flops a cycle\n", mhz,
                s_num (d, "peak_gflops_one_core"), s_num (d, "peak_gflops_one_core") * 1e3 / mhz);
        //  The two are timed apart and a boosting core's clock moves
        //  between them: a Zen 5 VM read 3548 MHz beside 233.9 GFLOP/s
        //  (65.9 a cycle). 15% on top of 64 still catches round 9's 117.
        CHECK (s_num (d, "peak_gflops_one_core") * 1e3 <= 64 * 1.15 * mhz);
    }
    //  One core's f32 FMA rate: above nothing (a sanitized build on a
    //  loaded machine measured 1.4), below any core's 2 x 512-bit FMA at
    //  10 GHz.
    CHECK (s_num (d, "peak_gflops_one_core") > 0.1 && s_num (d, "peak_gflops_one_core") < 700);
    long cpus = sysconf (_SC_NPROCESSORS_ONLN);
    CHECK (s_num (d, "peak_gflops_all_threads") > 0);
    CHECK (s_num (d, "peak_gflops_all_threads") < 700.0 * (double) cpus);
    //  A thread's start and join: microseconds, not nothing, not a
    //  scheduler's tick.
    CHECK (s_num (d, "thread_start_join_us") > 0.5 && s_num (d, "thread_start_join_us") < 5000);
    if (stream) {
        CHECK (s_num (d, "copy_one_core_gbs") > 0.1 && s_num (d, "copy_one_core_gbs") < 2000);
        CHECK (s_num (d, "copy_stream_one_core_gbs") > 0.1);
        CHECK (json_integer_value (json_object_get (d, "copy_one_core_bytes")) == 32 << 20);
        //  Bytes moved both ways: read + write + the write-allocate read.
        double ratio = s_num (d, "copy_one_core_traffic_gbs") / s_num (d, "copy_one_core_gbs");
        CHECK (ratio > 1.45 && ratio < 1.55);
        //  The cold read: from memory, a buffer past any core's caches.
        CHECK (s_num (d, "read_cold_one_core_gbs") > 0.1);
        CHECK (s_num (d, "read_cold_one_core_gbs") < 2000);
        CHECK (json_integer_value (json_object_get (d, "read_cold_one_core_bytes")) == 32 << 20);
        //  Round 13: every CPU reading its share of a flushed buffer at
        //  once (at least 32 MiB in all, whole pages a thread).
        CHECK (s_num (d, "read_cold_all_cores_gbs") > 0.1);
        CHECK (s_num (d, "read_cold_all_cores_gbs") < 2000.0 * (double) cpus);
        json_int_t all = json_integer_value (json_object_get (d, "read_cold_all_cores_bytes"));
        CHECK (all % (4096 * cpus) == 0 && all > (32 << 20) - 4096 * cpus && all <= 128 << 20);
        //  Round 18: every CPU copying half its cold share to the other
        //  half with streaming stores, bytes read plus written: whole
        //  pages a thread, within the cold read's buffer.
        double sall = s_num (d, "copy_stream_all_cores_gbs");
        json_int_t sbytes = json_integer_value (json_object_get (d, "copy_stream_all_cores_bytes"));
        printf ("streaming copy on all %ld CPUs %.1f GB/s of %lld bytes (cold read %.1f)\n",
                cpus, sall, (long long) sbytes, s_num (d, "read_cold_all_cores_gbs"));
        CHECK (sall > 0.1 && sall < 2000.0 * (double) cpus);
        CHECK (sbytes > 0 && sbytes % (2 * 4096 * cpus) == 0 && sbytes <= all);
        //  Round 20: streaming stores alone, nothing read, into lines no
        //  cache holds: one core 32 MiB, every CPU its share of the cold
        //  read's buffer. A core stores at most two 32-byte vectors a
        //  cycle, so one core writes at most 64 bytes a cycle (the clock
        //  is the fastest seen, so a slowed write stays below it).
        double w1 = s_num (d, "write_stream_one_core_gbs");
        double wall = s_num (d, "write_stream_all_cores_gbs");
        printf ("streaming writes: one core %.1f GB/s, all %ld CPUs %.1f GB/s (%.1f bytes a "
                "cycle on one)\n", w1, cpus, wall, w1 * 1e3 / s_num (d, "clock_mhz_measured"));
        CHECK (w1 > 0.1 && w1 * 1e3 <= 64.0 * s_num (d, "clock_mhz_measured"));
        CHECK (json_integer_value (json_object_get (d, "write_stream_one_core_bytes"))
               == 32 << 20);
        CHECK (wall > 0.1 && wall * 1e3 <= 64.0 * (double) cpus * s_num (d, "clock_mhz_measured"));
        CHECK (json_integer_value (json_object_get (d, "write_stream_all_cores_bytes")) == all);
    }
    //  Round 13: one core reading half its L2 again and again: faster than
    //  the cold read from memory, at most 128 bytes a cycle (two 64-byte
    //  loads), and its bytes within the L2.
    if (l2) {
        double gbs = s_num (d, "read_l2_one_core_gbs");
        json_int_t bytes = json_integer_value (json_object_get (d, "read_l2_one_core_bytes"));
        printf ("L2 read %.1f GB/s of %lld bytes: %.1f bytes a cycle\n", gbs, (long long) bytes,
                gbs * 1e3 / s_num (d, "clock_mhz_measured"));
        CHECK (gbs > s_num (d, "read_cold_one_core_gbs"));
        CHECK (gbs * 1e3 < 128.0 * s_num (d, "clock_mhz_measured"));
        CHECK (bytes > 0 && bytes % 4096 == 0);
        if (sysconf (_SC_LEVEL2_CACHE_SIZE) > 0)
            CHECK (bytes <= sysconf (_SC_LEVEL2_CACHE_SIZE) / 2);
        //  All cores at once, each a quarter of its L2: measured wherever
        //  one core's was and there are two CPUs or more; at most
        //  128 bytes a cycle a CPU, and whole pages a thread.
        CHECK (l2_all == (cpus >= 2));
        if (l2_all) {
            double all = s_num (d, "read_l2_all_cores_gbs");
            json_int_t all_bytes = json_integer_value (json_object_get (d, "read_l2_all_cores_bytes"));
            printf ("L2 read on all %ld CPUs %.1f GB/s (%.2fx one core's) of %lld bytes\n", cpus,
                    all, all / gbs, (long long) all_bytes);
            CHECK (all > s_num (d, "read_cold_all_cores_gbs"));
            CHECK (all * 1e3 < 128.0 * (double) cpus * s_num (d, "clock_mhz_measured"));
            CHECK (all_bytes > 0 && all_bytes % (4096 * cpus) == 0);
            CHECK (all_bytes / cpus <= bytes / 2);
        }
    }
    //  A model in the loop could not size a prefetch distance without a
    //  load's latency: from memory, tens to hundreds of nanoseconds
    //  (more than a cycle's worth of L2), from L2 a few nanoseconds,
    //  above an L1 hit's 4 cycles and below memory's; in cycles at the
    //  measured clock, to the figures' rounding.
    double mem_ns = s_num (d, "mem_latency_ns"), l2_ns = s_num (d, "l2_latency_ns");
    printf ("load latency: memory %.1f ns (%.1f cycles), L2 %.1f ns (%.1f cycles)\n", mem_ns,
            s_num (d, "mem_latency_cycles"), l2_ns, s_num (d, "l2_latency_cycles"));
    CHECK (isfinite (mem_ns) && mem_ns > 20 && mem_ns < 2000);
    CHECK (!l2 || l2_lat);
    if (l2_lat)
        CHECK (isfinite (l2_ns) && l2_ns > 0.5 && l2_ns < 50 && l2_ns < mem_ns / 2);
    if (x86) {
        double mhz = s_num (d, "clock_mhz_measured");
        CHECK (fabs (s_num (d, "mem_latency_cycles") - mem_ns * mhz / 1e3) < 0.06 * mhz / 1e3 + 0.06);
        if (l2_lat) {
            CHECK (s_num (d, "l2_latency_cycles") > 4);
            CHECK (fabs (s_num (d, "l2_latency_cycles") - l2_ns * mhz / 1e3)
                   < 0.06 * mhz / 1e3 + 0.06);
        }
    }
    CHECK (kf_host_caps_measure (NULL) == 0);
    //  The one FMA loop: its unit and its count of flops.
    const char *isa = NULL;
    kf_host_fma_fn fma = kf_host_fma_pick (&isa);
    float sink = 0;
    double lanes = isa && !strcmp (isa, "avx512f") ? 16 : isa && !strcmp (isa, "avx2+fma") ? 8 : 4;
    double chains = isa && !strcmp (isa, "avx512f") ? 24 : 12;
    CHECK (fma && isa && fma (10, &sink) == 2.0 * lanes * chains * 10);
#if defined(__x86_64__)
    if (__builtin_cpu_supports ("avx512f"))
        CHECK (isa && !strcmp (isa, "avx512f"));
#endif
    //  Once per process: a second device gets the same figures.
    json_t *again = json_object ();
    CHECK (kf_host_caps_measure (again) == n && json_equal (again, d));
    json_decref (again);
    //  Each key the measurement sets is one the figures file's version
    //  knows (kf_host_figures.h): round 18's exec worker read a file of
    //  version 6, kept for the boot, and so never gave the L2 read of all
    //  cores that its code measured by then. A new key goes in this list
    //  and raises KF_HOST_FIGURES_VERSION with it.
    static const char *const known[] = {
        "peak_gflops_one_core", "peak_gflops_all_threads", "thread_start_join_us",
        "clock_mhz_measured", "vec_lanes", "vec_div_cycles", "vec_div_latency_cycles",
        "vec_sqrt_cycles", "vec_sqrt_latency_cycles", "vec_rcp_cycles", "vec_rcp_latency_cycles",
        "vec_fma_cycles", "vec_fma_latency_cycles", "copy_one_core_gbs",
        "copy_one_core_traffic_gbs", "copy_stream_one_core_gbs", "copy_one_core_bytes",
        "read_cold_one_core_gbs", "read_cold_one_core_bytes", "read_cold_all_cores_gbs",
        "read_cold_all_cores_bytes", "read_l2_one_core_gbs", "read_l2_one_core_bytes",
        "read_l2_all_cores_gbs", "read_l2_all_cores_bytes", "copy_stream_all_cores_gbs",
        "copy_stream_all_cores_bytes", "vec_rsqrt_cycles", "vec_rsqrt_latency_cycles",
        "vec_load_cycles", "vec_bcast_cycles", "vec_fma_mem_cycles", "vec_divsqrt_cycles",
        "vec_perm_cycles", "vec_perm_with_fma_cycles", "vec_shuf_cycles",
        "vec_shuf_with_fma_cycles", "vec_blend_cycles", "vec_blend_with_fma_cycles",
        "vec_and_cycles", "vec_and_with_fma_cycles", "vec_cmp_cycles", "vec_cmp_with_fma_cycles",
        "vec_cvt_cycles", "vec_cvt_with_fma_cycles", "vec_iadd_cycles",
        "vec_iadd_with_fma_cycles", "write_stream_one_core_gbs", "write_stream_one_core_bytes",
        "write_stream_all_cores_gbs", "write_stream_all_cores_bytes", "vec_round_cycles",
        "vec_round_with_fma_cycles", "vec_shift_cycles", "vec_shift_with_fma_cycles",
        "vec_max_cycles", "vec_max_with_fma_cycles", "vec_cvtf_cycles",
        "vec_cvtf_with_fma_cycles", "vec_hadd_cycles", "vec_hadd_with_fma_cycles",
        "mem_latency_ns", "mem_latency_cycles", "l2_latency_ns", "l2_latency_cycles",
        "dtlb_l1_pages", "dtlb_l2_pages" };
    //  (Version 8: all cores' streaming copy, and files kept under the FMA
    //  rule alone, before the other processes' share was counted, are
    //  measured again; 9: round 19's vector costs; 10: round 20's
    //  instructions beside FMAs; 11: its streaming writes; 12: round
    //  21's five instructions more beside FMAs; 13: a load's latency
    //  from memory and from L2; 14: the data TLBs' pages.)
    CHECK (KF_HOST_FIGURES_VERSION == 14);
    const char *key;
    json_t *value;
    json_object_foreach (d, key, value) {
        bool in = false;
        for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
            in = in || !strcmp (key, known[i]);
        if (!in)
            printf ("measured key %s is not in version %d's list\n", key,
                    KF_HOST_FIGURES_VERSION);
        CHECK (in);
    }
    json_decref (d);
}

//  The test's own FMA loop, written apart from the worker's: sixteen
//  512-bit chains, each a named variable (a register at -O1 as at -O2),
//  or twelve 256-bit ones without AVX-512. Returns flops per second, the
//  best of RUNS runs of about 2 ms.
#if defined(__x86_64__)
#include <immintrin.h>
#define S_R512(x) x = _mm512_fmadd_ps (x, a, b)
__attribute__ ((target ("avx512f"), no_sanitize ("address", "undefined"), noinline)) static double
s_ref512 (long iters, float *sink)
{
    __m512 a = _mm512_set1_ps (0.999999f), b = _mm512_set1_ps (1e-7f);
    //  Each chain starts apart: chains equal from the start are one value
    //  to GCC at -O2, which kept a single chain and the test counted 16
    //  (475 GFLOP/s "reached" on a core that does 232).
#define S_C512(k) _mm512_set1_ps (1e-7f * (k + 1))
    __m512 c0 = S_C512 (0), c1 = S_C512 (1), c2 = S_C512 (2), c3 = S_C512 (3);
    __m512 c4 = S_C512 (4), c5 = S_C512 (5), c6 = S_C512 (6), c7 = S_C512 (7);
    __m512 c8 = S_C512 (8), c9 = S_C512 (9), c10 = S_C512 (10), c11 = S_C512 (11);
    __m512 c12 = S_C512 (12), c13 = S_C512 (13), c14 = S_C512 (14), c15 = S_C512 (15);
    for (long i = 0; i < iters; i++) {
        S_R512 (c0); S_R512 (c1); S_R512 (c2); S_R512 (c3);
        S_R512 (c4); S_R512 (c5); S_R512 (c6); S_R512 (c7);
        S_R512 (c8); S_R512 (c9); S_R512 (c10); S_R512 (c11);
        S_R512 (c12); S_R512 (c13); S_R512 (c14); S_R512 (c15);
    }
    c0 = _mm512_add_ps (_mm512_add_ps (_mm512_add_ps (c0, c1), _mm512_add_ps (c2, c3)),
                        _mm512_add_ps (_mm512_add_ps (c4, c5), _mm512_add_ps (c6, c7)));
    c8 = _mm512_add_ps (_mm512_add_ps (_mm512_add_ps (c8, c9), _mm512_add_ps (c10, c11)),
                        _mm512_add_ps (_mm512_add_ps (c12, c13), _mm512_add_ps (c14, c15)));
    *sink += _mm512_reduce_add_ps (_mm512_add_ps (c0, c8));
    return 2.0 * 16 * 16 * (double) iters;
}

#define S_R256(x) x = _mm256_fmadd_ps (x, a, b)
__attribute__ ((target ("avx2,fma"), no_sanitize ("address", "undefined"), noinline)) static double
s_ref256 (long iters, float *sink)
{
    __m256 a = _mm256_set1_ps (0.999999f), b = _mm256_set1_ps (1e-7f);
#define S_C256(k) _mm256_set1_ps (1e-7f * (k + 1))
    __m256 c0 = S_C256 (0), c1 = S_C256 (1), c2 = S_C256 (2), c3 = S_C256 (3);
    __m256 c4 = S_C256 (4), c5 = S_C256 (5), c6 = S_C256 (6), c7 = S_C256 (7);
    __m256 c8 = S_C256 (8), c9 = S_C256 (9), c10 = S_C256 (10), c11 = S_C256 (11);
    for (long i = 0; i < iters; i++) {
        S_R256 (c0); S_R256 (c1); S_R256 (c2); S_R256 (c3);
        S_R256 (c4); S_R256 (c5); S_R256 (c6); S_R256 (c7);
        S_R256 (c8); S_R256 (c9); S_R256 (c10); S_R256 (c11);
    }
    c0 = _mm256_add_ps (_mm256_add_ps (_mm256_add_ps (c0, c1), _mm256_add_ps (c2, c3)),
                        _mm256_add_ps (_mm256_add_ps (c4, c5), _mm256_add_ps (c6, c7)));
    c8 = _mm256_add_ps (_mm256_add_ps (c8, c9), _mm256_add_ps (c10, c11));
    float out[8];
    _mm256_storeu_ps (out, _mm256_add_ps (c0, c8));
    *sink += out[0];
    return 2.0 * 8 * 12 * (double) iters;
}

static double
s_ref_rate (int runs)
{
    bool wide = __builtin_cpu_supports ("avx512f");
    if (!wide && !(__builtin_cpu_supports ("avx2") && __builtin_cpu_supports ("fma")))
        return 0;
    float sink = 0;
    double best = 0;
    for (int r = 0; r < runs; r++) {
        struct timespec t0, t1;
        clock_gettime (CLOCK_MONOTONIC, &t0);
        double f = wide ? s_ref512 (400000, &sink) : s_ref256 (800000, &sink);
        clock_gettime (CLOCK_MONOTONIC, &t1);
        double t = (double) (t1.tv_sec - t0.tv_sec) + (double) (t1.tv_nsec - t0.tv_nsec) * 1e-9;
        if (t > 0 && f / t > best)
            best = f / t;
    }
    volatile float keep = sink;
    (void) keep;
    return best;
}
#else
static double
s_ref_rate (int runs)
{
    (void) runs;
    return 0;
}
#endif

//  Round 6: the worker's one-core peak was 65 GFLOP/s on a Zen 5 core
//  that does 230 (its chains, an array of __m512, stayed in memory at
//  -O1 and -O2), and a one-thread GEMM read as 98.7% of it. The peak
//  the worker reports is at least what the test's own loop reaches on
//  this core, within 15%; each measured several times in turn, the best
//  of each, so the host's other work touches both alike. And the
//  capabilities and the roofline ceiling are one measurement: the
//  ceiling is each thread's best summed, never below one core's.
static void
s_peak_reached (void)
{
    double ref = 0, peak = 0;
    const char *isa = NULL;
    for (int round = 0; round < 4; round++) {
        ref = fmax (ref, s_ref_rate (10));
        const char *name = NULL;
        double rate = kf_host_fma_one_core (&name);
        if (rate > peak) {
            peak = rate;
            isa = name;
        }
    }
    printf ("one core: worker %.1f GFLOP/s (%s), the test's own loop %.1f GFLOP/s\n", peak * 1e-9,
            isa ? isa : "?", ref * 1e-9);
    CHECK (peak > 0 && isa);
    CHECK (peak >= 0.85 * ref);
    //  What the capabilities report is the figure measured once a
    //  process, with the same loop (rounded to 0.1 GFLOP/s).
    json_t *d = json_object ();
    kf_host_caps_measure (d);
    kf_host_fma_peaks_t p;
    kf_host_fma_peaks (&p);
    CHECK (fabs (s_num (d, "peak_gflops_one_core") - p.one_core * 1e-9) < 0.06);
    CHECK (fabs (s_num (d, "peak_gflops_all_threads") - p.all_threads * 1e-9) < 0.06);
    //  (Not compared with REF: measured once, it carries whatever else
    //  ran at that moment - 105.6 against 220.6 beside another test on
    //  CI's two cores - and the loop it runs is the one checked above.)
    CHECK (p.one_core > 0);
    CHECK (p.summed >= p.one_core && p.all_threads > 0);
    kf_eval_ceilings_t c;
    kf_eval_host_ceilings (&c);
    CHECK (c.peak_gflops == p.summed / 1e9 && c.peak_source && !strcmp (c.peak_source, p.isa));
    json_decref (d);
}

int
main (void)
{
    s_fixture ();
    s_cpuid_caches ();
    s_ident ();
    s_this_host ();
    s_measured ();
    s_peak_reached ();
    return kf_test_done ("test_host_caps");
}
