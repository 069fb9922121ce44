/*  kf_prompt_target.c - the target section and the host's memory layout
 *  (kf_prompt_target.h); a task's and a kernel's position against the
 *  peaks are kf_prompt_position.c's, the host's read rates and a task's
 *  budget at the cold ones kf_prompt_budget.c's, the noise
 *  kf_prompt_noise.c's.
 *
 *  Every figure printed comes from a worker's HELLO or an evaluation: a
 *  fact the workers do not report (a clock, a cache size, an ISA) is left
 *  out rather than guessed, and where the prompt can still say something
 *  true about it (what -march=native means) it says that instead.
 */
#include "kf_prompt_target.h"
#include "kf_prompt_blocking.h"
#include "kf_prompt_budget.h"
#include "kf_prompt_core.h"
#include "kf_prompt.h"
#include "kf_prompt_class.h"
#include "kf_isa.h"
#include "kf_json.h"
#include "kf_lineage.h"
#include "kf_rates.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>


/* Round 40: a 4 x 4 tile kept as `__m512 acc[16]`, indexed in a loop
 * and passed to a helper, stayed in memory under GCC 12, and the
 * registers' count alone did not warn of it. */
#define S_TILE_ARRAY                                                                        \
    "; an array of accumulators stays in registers only where every index is a constant "  \
    "once loops are unrolled, so one indexed in a loop the compiler keeps, or passed to a " \
    "function it does not inline, lives in memory: name the accumulators, or unroll."

/* The flags of compile-worker/kf_toolchain_cc.c and kf_toolchain_nvcc.c,
 * in the order they pass them. */
static const struct { const char *language, *flags; } s_flags[] = {
    { "c", "-O3 -march=native -std=c11 -g -shared -fPIC (linked with -lm)" },
    { "cuda", "-O3 -arch=ARCH -shared -cudart shared -Xcompiler -fPIC" },
};

const char *
kf_prompt_build_flags (const char *language)
{
    for (size_t i = 0; i < sizeof s_flags / sizeof s_flags[0]; i++)
        if (language && !strcmp (language, s_flags[i].language))
            return s_flags[i].flags;
    return NULL;
}

//  The first line of a toolchain's version text.
static void
s_version (FILE *f, const char *text)
{
    fprintf (f, "%.*s", (int) strcspn (text, "\n"), text);
}

//  Which CPUs share a cache (kf_host_caps.c's count of its
//  shared_cpu_list): one, all of the device's, or a group.
static void
s_sharing (FILE *f, json_t *d, const char *key)
{
    if (!(kf_jnum (d, key, 0) >= 1))
        return;
    double n = kf_jnum (d, key, 0), cores = kf_jnum (d, "cores", 0);
    if (n == 1)
        fputs (" per core", f);
    else if (cores == 2 && n >= cores)
        fputs (" shared by both cores", f);
    else if (cores > 2 && n >= cores)
        fprintf (f, " shared by all %.0f cores", cores);
    else
        fprintf (f, " shared by each group of %.0f logical CPUs", n);
}

//  The L1's ways and sets, and the stride at which lines share a set
//  (round 18: the model could not tell that an unpacked panel of b, its
//  rows 2048 bytes apart, falls in few of the L1's sets).
static void
s_l1_geometry (FILE *f, json_t *d)
{
    double bytes = kf_jnum (d, "l1d_bytes", 0), ways = kf_jnum (d, "l1d_ways", 0);
    double line = kf_jnum (d, "l1d_line_bytes", 0);
    if (!(bytes > 0 && ways >= 1 && line >= 1))
        return;
    double sets = bytes / (ways * line);
    if (sets < 1 || sets != (double) (long) sets)
        return;
    char b[32];
    fprintf (f, " (%.0f-way, %.0f sets of %.0f-byte lines: addresses %s apart fall in one set, "
             "so at most %.0f lines at that stride stay in L1 at once)", ways, sets, line,
             kf_rates_bytes (sets * line, b, sizeof b), ways);
}

//  What the host exec worker measured of one core and of all of them
//  (exec-worker/kf_host_measure.c; round 3 of the model in the loop: the
//  all-core peak read as one core's, no thread start cost, no word on
//  streaming stores). Each figure only when reported. HARDWARE gives the
//  fastest rate a kernel of the run reached, the run's task and the ISA
//  kernels are compiled for.
static void
s_host_measured (FILE *f, json_t *d, json_t *hardware)
{
    double achieved = kf_jnum (hardware, "achieved_gflops", 0);
    json_t *spec = json_object_get (hardware, "task");
    double one = kf_jnum (d, "peak_gflops_one_core", 0);
    double all = kf_jnum (d, "peak_gflops_all_threads", 0);
    double cores = kf_jnum (d, "cores", 0);
    if (one > 0) {
        fprintf (f, "  Compute peak in f32 FMA (%s instructions), measured by the exec worker "
                 "at start: %.0f GFLOP/s on one core alone", *kf_jstr (d, "peak_source")
                 ? kf_jstr (d, "peak_source") : "its widest", one);
        if (all > 0 && cores > 1)
            fprintf (f, ", %.0f GFLOP/s with one thread on each of the %.0f logical CPUs at "
                     "once (%.1fx one core's)", all, cores, all / one);
        if (kf_jnum (d, "peak_gflops", 0) > 0) {
            fprintf (f, "; the shares of the compute peak below are of %.0f GFLOP/s, each "
                     "core's best run summed", kf_jnum (d, "peak_gflops", 0));
            //  Round 4: 110 for the shares beside 92 for all threads at
            //  once read as two ceilings; one sentence says how they differ.
            if (all > 0 && cores > 1)
                fprintf (f, " (every core at its best at once, the ceiling; the %.0f GFLOP/s "
                         "of all threads together is one run timed to the last thread's end, "
                         "so it counts the slowest thread and the host's other work)", all);
        }
        fputs (".\n", f);
        //  Round 6: 61 GFLOP/s for both threads at once against 65 for one
        //  core read as "threads never pay", while the ceiling above and
        //  the ideas spoke of every core.
        if (all > 0 && cores > 1 && all < 1.2 * one)
            //  Round 22: "when this was measured" read against the cold
            //  reads' "2.0x one core's" as a contradiction: it is the FMAs'.
            fprintf (f, "  When the FMA peak was measured, %.0f threads at once did no more "
                     "than one core alone (the host's other work held the other CPUs): a threaded "
                     "kernel gains only while CPUs are free, and each outcome's load below says "
                     "how busy they were when it was timed.\n", cores);
        //  Round 5: a one-thread GEMM reached 88.4 GFLOP/s against a
        //  one-core peak of 72 measured under load. No peak is left
        //  standing below what a kernel of this run reached.
        double ceiling = fmax (all, kf_jnum (d, "peak_gflops", 0));
        if (achieved > one && ceiling > 0 && achieved > ceiling)
            fprintf (f, "  These peaks are lower bounds (measured at start, beside the host's "
                     "other work): a kernel of this run reached %.1f GFLOP/s, above every one "
                     "of them; take %.1f GFLOP/s as the ceiling.\n", achieved, achieved);
        //  Round 44: not of a kernel that starts threads, which is
        //  above one core's figure by its threads.
        else if (achieved > one && !json_is_true (json_object_get (hardware, "achieved_threaded")))
            fprintf (f, "  A kernel of this run reached %.1f GFLOP/s, above the one-core "
                     "figure: if it ran on one thread, the one-core figure is a lower bound "
                     "(measured at start, beside the host's other work) and one core does at "
                     "least %.1f GFLOP/s.\n", achieved, achieved);
    }
    //  Round 15: what a divide, a square root and an estimate cost.
    kf_prompt_host_vec_line (f, d);
    //  Round 20: which instructions compete with the FMAs.
    kf_prompt_host_units_line (f, d);
    if (kf_jhas_num (d, "copy_one_core_gbs") && kf_jnum (d, "copy_one_core_gbs", 0) > 0) {
        char b[32];
        fputs ("  One core copying", f);
        if (kf_jhas_num (d, "copy_one_core_bytes") && kf_jnum (d, "copy_one_core_bytes", 0) > 0)
            fprintf (f, " %s", kf_rates_bytes (kf_jnum (d, "copy_one_core_bytes", 0), b, sizeof b));
        //  Round 5: bytes moved both ways, or an elementwise kernel's
        //  position against the bound reads wrong.
        if (kf_jnum (d, "copy_one_core_traffic_gbs", 0) > 0)
            fprintf (f, ": with ordinary stores %.1f GB/s counting the bytes read plus the "
                     "bytes written (2 bytes per byte copied), which is %.1f GB/s of memory "
                     "traffic once the write-allocate read of each destination line is counted "
                     "(3 bytes per byte copied: an ordinary store reads its line first)",
                     kf_jnum (d, "copy_one_core_gbs", 0),
                     kf_jnum (d, "copy_one_core_traffic_gbs", 0));
        else
            fprintf (f, ": %.1f GB/s with memcpy (bytes read plus bytes written; the "
                     "write-allocate read of each destination line not counted)",
                     kf_jnum (d, "copy_one_core_gbs", 0));
        if (kf_jnum (d, "copy_stream_one_core_gbs", 0) > 0)
            fprintf (f, "; with streaming (non-temporal) stores %.1f GB/s, read plus write and "
                     "nothing else (they skip the write-allocate read and leave the destination "
                     "out of the caches)", kf_jnum (d, "copy_stream_one_core_gbs", 0));
        //  Round 18: two threads of a streaming elementwise kernel stopped
        //  near 46-50 GB/s against 86.2 GB/s of all cores' cold reads, and
        //  no figure said what reads and streaming writes reach together.
        if (kf_jnum (d, "copy_stream_all_cores_gbs", 0) > 0 && kf_jnum (d, "cores", 0) > 1)
            fprintf (f, "; every logical CPU at once, each copying its own cold share with "
                     "streaming stores, %.1f GB/s read plus written (the ceiling of a kernel "
                     "on all cores that reads N and streams M)",
                     kf_jnum (d, "copy_stream_all_cores_gbs", 0));
        fputs (". A kernel reading N bytes and writing M with ordinary stores moves N + 2M; "
               "with streaming stores N + M.\n", f);
        kf_prompt_task_traffic_line (f, spec, d);
        fprintf (f, "  The copy figures are warm-cache rates: the buffers were written just "
                 "before%s; the timing flushes the caches before each call, so a kernel's "
                 "inputs come from memory.\n",
                 kf_jhas_num (d, "l3_bytes") && kf_jhas_num (d, "copy_one_core_bytes")
                         && kf_jnum (d, "copy_one_core_bytes", 0) < kf_jnum (d, "l3_bytes", 0)
                     ? " and fit in the L3"
                     : "");
    }
    if (kf_jhas_num (d, "thread_start_join_us") && kf_jnum (d, "thread_start_join_us", 0) > 0)
        fprintf (f, "  Starting and joining one POSIX thread takes %.1f us here (the lowest of "
                 "five medians of 51 pthread_create + pthread_join: on a busy host the wait for "
                 "a CPU comes on top), paid inside every timed call that starts "
                 "threads: threading pays only when each thread's share of the work takes "
                 "well over that.\n", kf_jnum (d, "thread_start_join_us", 0));
    kf_prompt_task_libm_line (f, spec, d);
    kf_prompt_task_budget_line (f, spec, d, kf_jstr (hardware, "compile_isa"));
    kf_prompt_task_product_line (f, spec, d);
    kf_prompt_blocking_line (f, spec, d, kf_jstr (hardware, "compile_isa"));
}

//  Logical CPUs and what they are (kf_host_caps.c's sysfs topology;
//  round 4: "2 cores" beside "2 logical CPUs", and a threaded kernel's
//  author could not tell whether a second thread gets a core of its own).
static void
s_host_cores (FILE *f, json_t *d)
{
    double cpus = kf_jnum (d, "cores", 0), cores = kf_jnum (d, "physical_cores", 0);
    double smt = kf_jnum (d, "threads_per_core", 0);
    fprintf (f, ", %.0f logical CPU%s", cpus, cpus == 1 ? "" : "s");
    if (smt >= 2)
        fprintf (f, " on %.0f physical core%s, %.0f SMT threads (hyperthreads) per core: "
                 "threads on one core share its execution units, so a second thread there "
                 "adds little to compute-bound work", cores, cores == 1 ? "" : "s", smt);
    else if (smt == 1)
        fprintf (f, ", each a physical core of its own (no SMT siblings, per the host's "
                 "topology)");
    //  Round 27: "2 logical CPUs" left open what a kernel counting its
    //  CPUs at run time would get; the count is the exec host's sysconf.
    if (cpus >= 1)
        fprintf (f, "; sysconf(_SC_NPROCESSORS_ONLN) returns %.0f there", cpus);
}

//  The clock: what the host says and what was measured, each with where
//  it came from (round 4: none given, so runtimes could not become cycles).
static void
s_host_clock (FILE *f, json_t *d)
{
    if (kf_jhas_num (d, "clock_mhz") && kf_jnum (d, "clock_mhz", 0) > 0)
        fprintf (f, ", clock %.0f MHz by %s (what the kernel reports; in a virtual machine "
                 "often the base clock)", kf_jnum (d, "clock_mhz", 0),
                 *kf_jstr (d, "clock_source") ? kf_jstr (d, "clock_source") : "the host");
    if (kf_jhas_num (d, "clock_mhz_measured") && kf_jnum (d, "clock_mhz_measured", 0) > 0)
        fprintf (f, ", %.0f MHz measured at start by the exec worker (a chain of dependent "
                 "integer adds, one per cycle: the clock one busy core runs at)",
                 kf_jnum (d, "clock_mhz_measured", 0));
}

static void
s_device (FILE *f, json_t *d, kf_target_kind_t kind, json_t *hardware)
{
    char b[32];
    fprintf (f, "- %s", *kf_jstr (d, "name") ? kf_jstr (d, "name") : "unnamed device");
    if (*kf_jstr (d, "compute_capability"))
        fprintf (f, ", compute capability %s", kf_jstr (d, "compute_capability"));
    if (kf_jhas_num (d, "multiprocessors"))
        fprintf (f, ", %.0f multiprocessors", kf_jnum (d, "multiprocessors", 0));
    if (kf_jhas_num (d, "cores") && kind == KF_TARGET_HOST && kf_jhas_num (d, "physical_cores"))
        s_host_cores (f, d);
    else if (kf_jhas_num (d, "cores"))
        fprintf (f, ", %.0f cores", kf_jnum (d, "cores", 0));
    if (kind == KF_TARGET_HOST
        && (kf_jhas_num (d, "clock_source") || kf_jhas_num (d, "clock_mhz_measured")))
        s_host_clock (f, d);
    else if (kf_jhas_num (d, "clock_mhz"))
        fprintf (f, ", %.0f MHz", kf_jnum (d, "clock_mhz", 0));
    if (kf_jhas_num (d, "memory_bytes"))
        fprintf (f, ", %s memory", kf_rates_bytes (kf_jnum (d, "memory_bytes", 0), b, sizeof b));
    static const char *const caches[][2] = { { "l1d_bytes", "L1d" }, { "l2_bytes", "L2" },
                                             { "l3_bytes", "L3" } };
    static const char *const shared[] = { "l1d_shared_cpus", "l2_shared_cpus",
                                          "l3_shared_cpus" };
    for (size_t i = 0; i < 3; i++)
        if (kf_jhas_num (d, caches[i][0])) {
            fprintf (f, ", %s %s", kf_rates_bytes (kf_jnum (d, caches[i][0], 0), b, sizeof b),
                     caches[i][1]);
            s_sharing (f, d, shared[i]);
            if (i == 0)
                s_l1_geometry (f, d);
            //  Rounds 11-12: "508.0 MiB L3" on a 2-CPU virtual machine,
            //  what its CPUID said; no core has that much to itself.
            double cpus = kf_jnum (d, "cores", 0);
            if (i == 2 && cpus > 0
                && kf_jnum (d, caches[i][0], 0) > KF_PROMPT_L3_PER_CPU_MAX * cpus)
                fprintf (f, " (as the CPU reports it: more than %.0f MiB for each of %.0f "
                         "CPUs, so a virtual machine's view of a larger host's cache, shared "
                         "with work outside it; do not size blocks by it)",
                         KF_PROMPT_L3_PER_CPU_MAX / (1024 * 1024), cpus);
        }
    if (*kf_jstr (d, "isa"))
        fprintf (f, ", ISA %s", kf_jstr (d, "isa"));
    fputs ("\n", f);
    if (kind == KF_TARGET_HOST)
        kf_prompt_host_cpu_line (f, d);
    //  Round 23: all cores' cold read at 22 GB/s (39 quiet) and a copy of
    //  15.5, measured at the worker's start beside other work, were given
    //  as the host's figures.
    if (json_is_true (json_object_get (d, "figures_measured_busy")))
        fputs ("  The exec worker measured the figures below at its start while other work "
               "ran on the host, so its rates may read low, the all-core ones most (a kernel "
               "may beat them by up to 2x without anything being wrong), and its costs in "
               "cycles high (where the FMA's cost below and the FMA peak disagree, the peak is "
               "the one the budget uses): the estimates built on them are no bounds.\n", f);
    //  Round 34: figures measured again mid-run changed with no word.
    if (*kf_jstr (d, "figures_measured_again_at"))
        fprintf (f, "  The exec worker measured the figures below again at %s, on a quiet "
                 "host, in place of those it took at its start beside other work: figures "
                 "quoted earlier in this run (in verdicts, in the sections) may be the old "
                 "ones.\n", kf_jstr (d, "figures_measured_again_at"));
    const char *scope = kind == KF_TARGET_HOST && kf_jhas_num (d, "cores") ? " (all cores together)"
                                                                      : "";
    if (kf_jhas_num (d, "copy_bandwidth_gbs") && kf_jnum (d, "copy_bandwidth_gbs", 0) > 0) {
        if (kind == KF_TARGET_HOST)
            //  kf_eval_roofline.c: memcpy on every logical CPU at once;
            //  glibc picks the store kind by size (round 3: "silent on
            //  the write-allocate read").
        {
            //  Round 4: 15 GB/s on every core below 17.2 on one, unexplained.
            //  Round 28: below the streaming copies too (33 against 42.1
            //  and 56.2), and a one-thread kernel read 110% of it: the
            //  shares are of the fastest copy now. Round 35: still headed
            //  "Memory peak", beside "the memory can do at least 39.8".
            const char *name;
            double peak = kf_jnum (d, "copy_bandwidth_gbs", 0);
            double best = kf_prompt_copy_ceiling (d, peak, &name, NULL);
            fprintf (f, "  %s: %.0f GB/s, a memcpy on every core at once measured by "
                     "the exec worker (bytes read plus bytes written; the read of each "
                     "destination line that an ordinary store makes first, write-allocate, is "
                     "not counted, and the C library's memcpy picks its own kind of store).",
                     best > peak ? "All cores' memcpy" : "Memory peak", peak);
            if (best > peak)
                fprintf (f, " It is below %s (%.1f GB/s, below): the copies were measured at "
                         "different moments of the worker's start on a host that runs other "
                         "work, and the memcpy caught more of it. The memory can do at least "
                         "%.1f GB/s, and a kernel's share of the copy in its figures is of "
                         "that.", name, best, best);
            fputs ("\n", f);
        }
        else
            fprintf (f, "  Memory peak: %.0f GB/s, a copy measured by the exec worker (bytes "
                     "read plus bytes written, ordinary stores).\n",
                     kf_jnum (d, "copy_bandwidth_gbs", 0));
    }
    //  The reads, cold and from L2 (kf_prompt_budget.c).
    if (kind == KF_TARGET_HOST)
        kf_prompt_host_reads (f, d);
    if (kind == KF_TARGET_HOST)
        s_host_measured (f, d, hardware);
    if (kf_jhas_num (d, "peak_gflops") && kf_jnum (d, "peak_gflops", 0) > 0
        && !(kind == KF_TARGET_HOST && kf_jhas_num (d, "peak_gflops_one_core")))
        fprintf (f, "  Compute peak: %.0f GFLOP/s in f32 FMA, measured by the exec worker "
                 "(%s)%s.\n", kf_jnum (d, "peak_gflops", 0), kf_jstr (d, "peak_source"), scope);
}

//  Whether the timing host runs other work beside the timing, as far as
//  the worker registry tells (round 3: "the timing machine is shared with
//  compiles" went unsaid).
static void
s_host_sharing (FILE *f, json_t *hardware, kf_target_kind_t kind)
{
    const char *host = kf_jstr (hardware, "host");
    if (!*host || !kf_jhas_num (hardware, "compile_workers_beside"))
        return;
    double compiles = kf_jnum (hardware, "compile_workers_beside", 0);
    double execs = kf_jnum (hardware, "exec_workers_beside", 0);
    if (compiles < 1 && execs < 1) {
        fprintf (f, "No compile worker and no other exec worker is registered on the exec "
                 "host (%s): as far as the workers' host names tell, no other candidate is "
                 "built or timed beside this one's timing.\n", host);
        return;
    }
    fprintf (f, "The exec host (%s) is shared: it also runs ", host);
    if (compiles >= 1)
        fprintf (f, "%.0f compile worker%s", compiles, compiles > 1 ? "s" : "");
    if (compiles >= 1 && execs >= 1)
        fputs (" and ", f);
    if (execs >= 1)
        fprintf (f, "%.0f other exec worker%s", execs, execs > 1 ? "s" : "");
    fprintf (f, ", so other candidates may be %s while this one is timed; that load is "
             "part of the noise of every figure here%s.\n",
             compiles >= 1 && execs >= 1 ? "compiled or timed" : compiles >= 1 ? "compiled"
                                                                                : "timed",
             kind == KF_TARGET_HOST ? ", and it takes cores from a kernel's threads" : "");
}

void
kf_prompt_target_section (FILE *f, const char *target, const char *language, json_t *hardware,
                          json_t *compiler)
{
    kf_target_kind_t kind = kf_prompt_target_kind (target, language);
    fprintf (f, "\n## Target\nThe kernel runs on '%s'", target ? target : "");
    json_t *devices = json_object_get (hardware, "devices");
    const char *arch = kf_jstr (hardware, "arch");
    if (!json_array_size (devices))
        fputs (" (no exec worker has described its device yet).\n", f);
    else {
        fprintf (f, "%s%s%s:\n", *arch ? " (" : "", arch, *arch ? ")" : "");
        size_t i;
        json_t *d;
        json_array_foreach (devices, i, d)
            s_device (f, d, kind, hardware);
    }
    //  The build.
    const char *flags = kf_prompt_build_flags (language);
    const char *isa = kind == KF_TARGET_HOST ? kf_jstr (hardware, "compile_isa") : "";
    json_t *tools = json_object_get (compiler, "toolchains");
    const char *tool = !strcmp (language, "cuda") ? "nvcc" : !strcmp (language, "c") ? "cc"
                                                                                   : NULL;
    const char *version = tool ? kf_jstr (tools, tool) : "";
    if (flags) {
        fprintf (f, "Build: %s", tool ? tool : "");
        if (*version) {
            fputs (" (", f);
            s_version (f, version);
            fputs (")", f);
        }
        char arch_flags[400];
        const char *at = strstr (flags, "ARCH");
        const char *march = strstr (flags, "-march=native");
        if (at)
            snprintf (arch_flags, sizeof arch_flags, "%.*s%s%s", (int) (at - flags), flags,
                      *arch ? arch : "native", at + 4);
        else if (march && *isa) {
            //  The exec hosts' extensions, as the cc toolchain builds them.
            char line[300];
            snprintf (arch_flags, sizeof arch_flags, "%.*s%s%s", (int) (march - flags), flags,
                      kf_isa_flags_line (isa, line, sizeof line), march + strlen ("-march=native"));
        }
        else
            snprintf (arch_flags, sizeof arch_flags, "%s", flags);
        fprintf (f, " with %s", arch_flags);
        if (*kf_jstr (compiler, "arch"))
            fprintf (f, ", on a %s compile worker", kf_jstr (compiler, "arch"));
        fputs (".\n", f);
    }
    if (kind == KF_TARGET_HOST) {
        bool has_isa = false;
        const char *measured = NULL;
        size_t i;
        json_t *d;
        json_array_foreach (devices, i, d) {
            has_isa |= *kf_jstr (d, "isa") != 0;
            //  The FMA peak names the instructions it was measured with
            //  (kf_eval_roofline.c): the CPU has at least those.
            const char *src = kf_jstr (d, "peak_source");
            if (!strncmp (src, "avx", 3) || !strcmp (src, "fma") || !strcmp (src, "neon")
                || !strcmp (src, "sse"))
                measured = src;
        }
        //  Only the extensions the flags enable are compiled for; the
        //  others the hosts reported (AMX, AVX512-FP16) have no flag.
        char *on = kf_isa_select (kf_jstr (hardware, "compile_isa"), true);
        char *off = kf_isa_select (kf_jstr (hardware, "compile_isa"), false);
        if (on && *on) {
            fprintf (f, "The code is compiled for the instruction sets the flags above enable "
                     "(%s), which every exec host of this target has, not for the compile "
                     "host's CPU: __AVX2__, __AVX512F__ and the like are defined exactly for "
                     "those, and an intrinsic of any other extension does not compile.", on);
            if (off && *off)
                fprintf (f, " The exec hosts also have %s, but the flags do not enable %s: "
                         "%s intrinsics do not compile here.", off,
                         strchr (off, ' ') ? "them" : "it", strchr (off, ' ') ? "their" : "its");
            //  Round 19: how many vector registers a tile of accumulators
            //  and its operands must fit in was not said.
            if (kf_isa_has (on, "avx512f"))
                fputs (" With AVX-512 a kernel has 32 vector registers of 16 floats (zmm0-31), "
                       "and 8 mask registers: a register tile of accumulators and the operands "
                       "it loads must fit in them, or the compiler spills to the stack" S_TILE_ARRAY,
                       f);
            else if (kf_isa_has (on, "avx") || kf_isa_has (on, "avx2"))
                fputs (" With AVX2 a kernel has 16 vector registers of 8 floats (ymm0-15): a "
                       "register tile of accumulators and the operands it loads must fit in "
                       "them, or the compiler spills to the stack" S_TILE_ARRAY, f);
            fputs ("\n", f);
        }
        else if (!has_isa) {
            fputs ("-march=native enables every instruction set extension of the build "
                   "host's CPU", f);
            if (measured)
                fprintf (f, "; the exec worker measured its FMA peak with %s instructions, "
                         "so the CPU has them", measured);
            fputs ("; no full list is reported, so guard explicit intrinsics with #if "
                   "defined(__AVX512F__), __AVX2__, __FMA__ or __ARM_NEON and keep a portable "
                   "path.\n", f);
        }
        free (on);
        free (off);
        //  GCC in an ISO mode (-std=c11) neither contracts a*b+c into an
        //  FMA nor defines the POSIX interfaces; clang contracts within an
        //  expression. What a kernel author must write by hand follows.
        if (flags && !strcmp (language, "c") && strstr (flags, "-std=c11")) {
            if (*version && !strstr (version, "clang"))
                fputs ("-std=c11 is ISO C: GCC then does not fuse a*b+c into one FMA "
                       "(-ffp-contract=off), and without -ffast-math it does not reorder a "
                       "floating-point sum, so it will not vectorise a reduction loop; call "
                       "fmaf() or FMA intrinsics, and keep several partial sums yourself.\n",
                       f);
            fputs ("No POSIX feature macro is defined by -std=c11: put #define _GNU_SOURCE "
                   "(or _POSIX_C_SOURCE 200809L) before the first #include to use "
                   "clock_gettime, sched_* or CPU affinity; pthread_create and friends need no "
                   "extra flag or library.\n", f);
        }
        fputs ("kf_forward is called on one thread; it may start its own threads (POSIX "
               "threads) if they have all finished when it returns: creating and joining "
               "them is part of every timed call, and no thread or pool may outlive a call.\n"
               "Timing: every timed batch starts with the tensors flushed from every cache "
               "level and each call gets inputs of its own, so the kernel is timed with cold "
               "caches, against the reference timed the same way.\n", f);
    }
    else if (kind == KF_TARGET_CUDA)
        fputs ("Timing: the L2 cache is flushed before each sample of back-to-back calls, "
               "timed by device events around a device-wide synchronisation.\n", f);
    s_host_sharing (f, hardware, kind);
    kf_prompt_run_noise (f, hardware);
}

void
kf_prompt_host_layout (FILE *f, json_t *spec)
{
    //  kf_runner.c maps each tensor so that it ends where an inaccessible
    //  page begins: its start is as aligned as its size in bytes allows.
    fputs ("Memory layout: every tensor is dense and row-major (strides as its shape "
           "implies). Each one ends exactly where an inaccessible page begins, so a read or "
           "write past its last element faults, and its first element is aligned only to the "
           "largest power of two dividing its size in bytes (at most a page, 4096 bytes on "
           "x86_64); "
           "use unaligned loads, or peel to an aligned start, before aligned or streaming "
           "stores.", f);
    const char *lists[2] = { "inputs", "outputs" };
    int shown = 0;
    for (int l = 0; l < 2; l++) {
        size_t i;
        json_t *t;
        json_array_foreach (json_object_get (spec, lists[l]), i, t) {
            double bytes = kf_prompt_tensor_bytes (t);
            long align = 1;
            while (align < 4096 && bytes > 0 && fmod (bytes, (double) (align * 2)) == 0)
                align *= 2;
            fprintf (f, "%s%s %ld", shown++ ? ", " : " At the main shape: ",
                     kf_jstr (t, "name"), align);
        }
    }
    fputs (shown ? " bytes.\n" : "\n", f);
    //  Round 10: "fresh memory each call" made the model template a static
    //  buffer, whose off point won; round 20: "comes back from the heap
    //  with its pages in" (glibc's malloc) and candidate 17 took 96 page
    //  faults a call. The runner's arena (exec-worker/kf_scratch.h) makes
    //  the promise below hold: 0 faults a call for 1, 8 and 40 MiB
    //  blocks where malloc took 15685 (test_eval_repeat).
    fputs ("ctx->scratch_alloc on the host carves blocks out of an arena the candidate's "
           "process keeps across the calls on one shape: every block starts on a 64-byte "
           "boundary, a call may take at most 64 blocks and 8 GiB in all (past either "
           "limit it returns NULL), and all of a call's blocks are handed back together when "
           "it returns, the arena reset rather than freed. Call it from kf_forward's own "
           "thread (it is not thread-safe); the threads you start may use the memory. "
           "Taking a block is inside the timed call but makes no system call once the arena "
           "has grown to what the calls take. A call that asks for the same sizes in the "
           "same order as the call before gets the same addresses, so from the second call "
           "on the pages the call before touched are still resident and touching them again "
           "faults nothing, whatever the blocks' size; the warm-up calls come before any "
           "timed one. A block that does not fit where earlier calls' blocks lay (larger, "
           "or asked in another order) gets new memory once, kept for the calls after it. "
           "A block's contents at the start of a call are unspecified: scratch only, no "
           "results kept between calls. On x86 the timing flushes the tensors' lines from "
           "the caches before each timed batch, not the scratch blocks': what of them the "
           "last call and the tensors' traffic left in a cache is still there.\n", f);
}

json_t *
kf_prompt_hardware (kf_db_t *db, const char *backend, const char *arch, int64_t run_id)
{
    char run[24];
    snprintf (run, sizeof run, "%lld", (long long) run_id);
    const char *params[3] = { backend ? backend : "host", arch ? arch : "", run };
    //  In a mixed fleet the device that judged the run's latest candidate
    //  is the one its next kernel will most likely meet.
    //  Who else works on that host (the registry's host names, from each
    //  worker's gethostname): compiles beside a timing disturb it.
    json_t *row = kf_db_row (db,
                             "SELECT w.id, w.capabilities, w.host,"
                             " (SELECT count(*) FROM workers o WHERE o.role = 'compile'"
                             "  AND o.host = w.host AND o.last_seen > now() - interval '10 minutes')"
                             "  AS compile_beside,"
                             " (SELECT count(*) FROM workers o WHERE o.role = 'execute'"
                             "  AND o.id <> w.id AND o.host = w.host"
                             "  AND o.last_seen > now() - interval '10 minutes') AS exec_beside"
                             " FROM workers w"
                             " WHERE w.role = 'execute'"
                             " AND w.capabilities->'backends' @> jsonb_build_array($1::text)"
                             " AND ($2 = '' OR w.capabilities->>'arch' = $2)"
                             " ORDER BY w.id IS NOT DISTINCT FROM"
                             "  (SELECT e.worker FROM evaluations e"
                             "   JOIN candidates c ON c.id = e.candidate_id"
                             "   WHERE c.run_id = $3::bigint ORDER BY e.id DESC LIMIT 1) DESC,"
                             " w.last_seen DESC, w.id LIMIT 1",
                             3, params, NULL);
    if (!row)
        return NULL;
    json_t *caps = json_object_get (row, "capabilities");
    json_t *devices = json_object_get (caps, "devices");
    json_t *out = json_pack ("{s:O, s:s, s:O, s:o}", "worker", json_object_get (row, "id"),
                             "backend", params[0], "arch",
                             json_object_get (caps, "arch") ? json_object_get (caps, "arch")
                                                            : json_null (),
                             "devices", json_is_array (devices) ? json_incref (devices)
                                                                : json_array ());
    const char *host = kf_jstr (row, "host");
    if (out && *host) {
        json_object_set_new (out, "host", json_string (host));
        json_object_set (out, "compile_workers_beside", json_object_get (row, "compile_beside"));
        json_object_set (out, "exec_workers_beside", json_object_get (row, "exec_beside"));
    }
    json_decref (row);
    //  How far the screen and full figures of one kernel came apart in
    //  this run so far (round 4: 2.4x, said in one lineage line only):
    //  the largest ratio, how many, and once there are enough the median
    //  one (kf_lineage_repeat, which the children's lines use too).
    double largest = 0;
    long pairs = 0;
    double typical = 0, band = out ? kf_lineage_repeat_all (db, run_id, &largest, &pairs,
                                                            &typical) : 0;
    if (pairs > 0) {
        json_object_set_new (out, "screen_full_gap", json_real (largest));
        json_object_set_new (out, "screen_full_count", json_integer (pairs));
        if (typical > 0)
            json_object_set_new (out, "screen_full_typical", json_real (1 + typical));
        if (band > 0)
            json_object_set_new (out, "screen_full_band", json_real (1 + band));
    }
    //  The run's task, so the Target section can set its traffic and its
    //  libm calls against these figures (round 11; kf_prompt_position.c).
    //  The derived task (runs.spec) has a PyTorch task's tensors; the
    //  stored one has only its source.
    json_t *task = out ? kf_db_row (db, "SELECT coalesce(r.spec, t.spec) AS spec FROM runs r"
                                    " JOIN tasks t ON t.id = r.task_id WHERE r.id = $1::bigint", 1,
                                    (const char *[]) { run }, NULL)
                       : NULL;
    if (task && json_is_object (json_object_get (task, "spec")))
        json_object_set (out, "task", json_object_get (task, "spec"));
    json_decref (task);
    //  The run's measured noise, the host's load and condition over its
    //  timings, and the fastest compute rate a kernel of it reached
    //  (round 5; s_run_noise, s_host_measured).
    json_t *rn = out ? kf_db_row (db,
                                  "SELECT count(spread) AS n,"
                                  " percentile_cont(0.5) WITHIN GROUP (ORDER BY spread)"
                                  "  AS spread_median, max(spread) AS spread_max,"
                                  " count(runnable) AS load_n, min(runnable) AS load_min,"
                                  " max(runnable) AS load_max, max(cpus) AS cpus,"
                                  " count(*) FILTER (WHERE share >= 0.5) AS heavy_n,"
                                  " max(share) AS share_max,"
                                  " count(*) FILTER (WHERE beside > 0) AS shared_n,"
                                  " count(*) FILTER (WHERE beside = 0) AS alone_n,"
                                  " max(gflops) AS achieved_gflops,"
                                  " min(cand_ns) AS fastest_ns,"
                                  " (array_agg(tried ORDER BY gflops DESC NULLS LAST))[1]"
                                  "  AS top_tried,"
                                  " (array_agg(tried ORDER BY cand_ns NULLS LAST))[1]"
                                  "  AS fastest_tried"
                                  " FROM (SELECT sqrt(power(((f->'candidate'->>'p90_ns')::float8"
                                  "  - (f->'candidate'->>'p10_ns')::float8) / (2 * nullif("
                                  "  (f->'candidate'->>'median_ns')::float8, 0)), 2)"
                                  "  + power(((f->'reference'->>'p90_ns')::float8"
                                  "  - (f->'reference'->>'p10_ns')::float8) / (2 * nullif("
                                  "  (f->'reference'->>'median_ns')::float8, 0)), 2)) AS spread,"
                                  "  (f->'host_load'->>'runnable_others')::float8 AS runnable,"
                                  "  (f->'host_load'->>'cpus')::float8 AS cpus,"
                                  "  (f->'host_load'->>'others_cpu_share')::float8 AS share,"
                                  "  (f->'host_condition'->>'compile_workers_beside')::float8"
                                  "  + (f->'host_condition'->>'exec_workers_beside')::float8"
                                  "  AS beside,"
                                  "  (f->'compute'->>'candidate_gflops')::float8 AS gflops,"
                                  "  e.candidate_ns AS cand_ns,"
                                  "  f->'one_core'->>'tried' AS tried"
                                  "  FROM (SELECT e.figures AS f, e.candidate_ns FROM evaluations e"
                                  "   JOIN candidates c ON c.id = e.candidate_id"
                                  "   WHERE c.run_id = $1::bigint AND e.correct) e) x",
                                  1, (const char *[]) { run }, NULL)
                     : NULL;
    if (rn) {
        kf_json_drop_nulls (rn);
        double achieved = kf_jnum (rn, "achieved_gflops", 0);
        //  A matrix product without an operation count: 2*M*N*K over the
        //  fastest kernel's time, as its position line derives it.
        double derived = kf_jnum (rn, "fastest_ns", 0) > 0
                             ? kf_prompt_product_flops (json_object_get (out, "task"), NULL)
                             : 0;
        //  Round 44: whether the kernel that reached it starts threads
        //  (its one-core figure was tried).
        bool threaded = !strcmp (kf_jstr (rn, "top_tried"), "true");
        if (derived > 0 && derived / kf_jnum (rn, "fastest_ns", 0) > achieved) {
            achieved = derived / kf_jnum (rn, "fastest_ns", 0);
            threaded = !strcmp (kf_jstr (rn, "fastest_tried"), "true");
        }
        if (achieved > 0) {
            json_object_set_new (out, "achieved_gflops", json_real (achieved));
            json_object_set_new (out, "achieved_threaded", json_boolean (threaded));
        }
        json_object_set_new (out, "run_noise", rn);
    }
    //  What a host kernel is compiled for (the compile job's target.arch).
    if (out && !strcmp (params[0], "host")) {
        char *isa = kf_prompt_host_isa (db);
        if (isa && *isa)
            json_object_set_new (out, "compile_isa", json_string (isa));
        free (isa);
    }
    return out;
}

char *
kf_prompt_host_isa (kf_db_t *db)
{
    json_t *rows = kf_db_query (db,
                                "SELECT capabilities->'devices'->0->>'isa' AS isa,"
                                " last_seen > now() - interval '10 minutes' AS recent"
                                " FROM workers WHERE role = 'execute'"
                                " AND capabilities->'backends' @> '[\"host\"]'"
                                " AND capabilities->'devices'->0->>'isa' IS NOT NULL"
                                " ORDER BY last_seen DESC, id",
                                0, NULL);
    if (!rows)
        return NULL;
    char *isa = NULL;
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        if (i > 0 && !json_is_true (json_object_get (row, "recent")))
            break;
        char *both = kf_isa_common (isa ? isa : kf_jstr (row, "isa"), kf_jstr (row, "isa"));
        free (isa);
        isa = both;
        if (!isa)
            break;
    }
    json_decref (rows);
    return isa ? isa : strdup ("");
}

json_t *
kf_prompt_compiler (kf_db_t *db, const char *backend)
{
    const char *params[1] = { backend ? backend : "host" };
    json_t *row = kf_db_row (db,
                             "SELECT capabilities FROM workers WHERE role = 'compile'"
                             " AND capabilities->'backends' @> jsonb_build_array($1::text)"
                             " ORDER BY last_seen DESC, id LIMIT 1",
                             1, params, NULL);
    json_t *caps = row ? json_incref (json_object_get (row, "capabilities")) : NULL;
    json_decref (row);
    return caps;
}
