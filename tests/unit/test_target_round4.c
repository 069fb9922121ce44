/*  test_target_round4.c - the Target figures round 4 of the model in the
 *  loop flagged (issue 15), as coordinator/kf_prompt_target.c states them
 *  from what the host exec worker reports (exec-worker/kf_host_caps.c,
 *  kf_host_measure.c):
 *
 *  - logical CPUs named as such, with whether each is a physical core of
 *    its own or an SMT sibling ("2 cores" beside "2 logical CPUs");
 *  - the clock, from cpuinfo and measured, each with its source;
 *  - an all-core memory peak below one core's copy is explained, never
 *    printed bare (15 GB/s beside 17.2 GB/s);
 *  - the two compute figures (each core's best summed, all threads at
 *    once) explained in one sentence;
 *  - the copy figures said to be warm-cache rates;
 *  - the run's largest screen-against-full ratio so far, and how the
 *    noise figure is computed.
 */
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

//  The 2-CPU VM of round 4, as its exec worker reports it.
static json_t *
s_hw (int threads_per_core, int physical)
{
    json_t *hw = json_pack (
        "{s:s, s:s, s:[{s:s, s:i, s:f, s:f, s:s, s:f, s:f, s:f, s:f, s:f, s:I, s:I,"
        " s:f, s:s, s:f, s:i, s:i, s:i}]}",
        "backend", "host", "arch", "x86_64", "devices", "name", "Xeon VM", "cores", 2,
        "copy_bandwidth_gbs", 15.0, "peak_gflops", 110.0, "peak_source", "avx512f",
        "peak_gflops_one_core", 56.0, "peak_gflops_all_threads", 92.0,
        "thread_start_join_us", 7.6, "copy_one_core_gbs", 17.2, "copy_stream_one_core_gbs",
        26.7, "copy_one_core_bytes", (json_int_t) 33554432, "l3_bytes",
        (json_int_t) 503316480, "clock_mhz", 2599.998, "clock_source",
        "/proc/cpuinfo cpu MHz", "clock_mhz_measured", 3900.2, "logical_cpus", 2,
        "physical_cores", physical, "threads_per_core", threads_per_core);
    return hw;
}

static char *
s_section (json_t *hw)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    kf_prompt_target_section (f, "host", "c", hw, NULL);
    fclose (f);
    return text;
}

int
main (void)
{
    json_t *hw = s_hw (1, 2);
    char *p = s_section (hw);
    CHECK (p != NULL);
    printf ("%s\n", p ? p : "");
    /* Logical CPUs, each a core of its own. */
    CHECK (kf_test_has (p, "Xeon VM, 2 logical CPUs, each a physical core of its own (no SMT "
                           "siblings, per the host's topology)"));
    CHECK (!kf_test_has (p, "Xeon VM, 2 cores"));
    /* The clock, both figures with their sources. */
    CHECK (kf_test_has (p, "clock 2600 MHz by /proc/cpuinfo cpu MHz (what the kernel reports; in a "
                           "virtual machine often the base clock), 3900 MHz measured at start by the "
                           "exec worker (a chain of dependent integer adds, one per cycle"));
    /* The all-core memory peak below one core's copy: explained. */
    //  Round 35: below the streaming copy, not headed the peak.
    CHECK (kf_test_has (p, "All cores' memcpy: 15 GB/s, a memcpy on every core at once"));
    CHECK (!kf_test_has (p, "Memory peak: 15"));
    CHECK (kf_test_has (p, "It is below one core's streaming copy (26.7 GB/s, below): the copies "
                           "were measured at different moments"));
    CHECK (kf_test_has (p, "The memory can do at least 26.7 GB/s"));
    /* One compute ceiling, the other figure explained beside it. */
    CHECK (kf_test_has (p, "the shares of the compute peak below are of 110 GFLOP/s, each core's "
                           "best run summed (every core at its best at once, the ceiling; the 92 "
                           "GFLOP/s of all threads together is one run timed to the last thread's "
                           "end"));
    /* Warm buffers, said. */
    CHECK (kf_test_has (p, "The copy figures are warm-cache rates: the buffers were written just "
                           "before and fit in the L3; the timing flushes the caches before each "
                           "call"));
    free (p);
    json_decref (hw);
    /* SMT siblings: one core, two threads. */
    hw = s_hw (2, 1);
    p = s_section (hw);
    CHECK (kf_test_has (p, "2 logical CPUs on 1 physical core, 2 SMT threads (hyperthreads) per "
                           "core: threads on one core share its execution units"));
    free (p);
    json_decref (hw);
    /* An all-core figure above one core's: no explanation needed. */
    hw = s_hw (1, 2);
    json_object_set_new (json_array_get (json_object_get (hw, "devices"), 0),
                         "copy_bandwidth_gbs", json_real (30.0));
    p = s_section (hw);
    CHECK (kf_test_has (p, "Memory peak: 30 GB/s"));
    CHECK (!kf_test_has (p, "It is below one core's"));
    free (p);
    json_decref (hw);
    /* The run's screen-against-full disagreement (kf_prompt_hardware's
     * figure), in the Target section every kernel and tuning prompt has;
     * none said when no candidate was timed both ways. */
    hw = s_hw (1, 2);
    json_object_set_new (hw, "screen_full_gap", json_real (2.41));
    json_object_set_new (hw, "screen_full_count", json_integer (7));
    p = s_section (hw);
    CHECK (kf_test_has (p, "Screen against full timing in this run so far: the short screen figure "
                           "and the full-protocol figure of one kernel differed by up to 2.41x (the "
                           "largest ratio, either way, among the 7 candidates timed both ways)"));
    free (p);
    json_decref (hw);
    hw = s_hw (1, 2);
    p = s_section (hw);
    CHECK (!kf_test_has (p, "Screen against full timing"));
    free (p);
    json_decref (hw);
    /* The noise figure says how it is computed. */
    json_t *k = json_pack ("{s:{s:f, s:f, s:f}, s:{s:f, s:f, s:f}}", "timing_candidate",
                           "median_ns", 1000.0, "p10_ns", 900.0, "p90_ns", 1100.0,
                           "timing_reference", "median_ns", 2000.0, "p10_ns", 1900.0,
                           "p90_ns", 2100.0);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_noise_line (f, k);
    fclose (f);
    printf ("%s", text ? text : "");
    CHECK (kf_test_has (text, "the timing samples of this kernel spread by +/-10.0% and the "
                              "reference's by +/-5.0% (half the width between the 10th and 90th "
                              "percentile sample, over the median; the two added in quadrature give "
                              "+/-11.2%)"));
    free (text);
    json_decref (k);
    /* Round 11: a PyTorch reference is one figure without samples, and
     * the line was left out; and the samples' spread was the only noise
     * said, where the figure is their median. Round 11's candidate 7:
     * 338 samples, p10-p90 1025-2000 us around 1322 us. */
    k = json_pack ("{s:{s:f, s:f, s:f, s:i}, s:{s:f, s:s}}", "timing_candidate", "median_ns",
                   1322e3, "p10_ns", 1025e3, "p90_ns", 2000e3, "samples", 338,
                   "timing_reference", "median_ns", 3841.7e3, "kind", "pytorch-eager");
    text = NULL;
    f = open_memstream (&text, &size);
    kf_prompt_noise_line (f, k);
    fclose (f);
    printf ("%s", text ? text : "");
    CHECK (kf_test_has (text, "the timing samples of this kernel spread by +/-36.9% (half the width "
                              "between the 10th and 90th percentile sample, over the median); the "
                              "reference's time is one figure, measured once."));
    CHECK (kf_test_has (text, "This kernel's figure is the median of 338 samples, which lies within "
                              "about +/-3.9% of what the same timing would give again"));
    CHECK (kf_test_has (text, "speedups within about +/-3.9% of each other are not a real difference"));
    free (text);
    json_decref (k);
    return kf_test_done ("test_target_round4");
}
