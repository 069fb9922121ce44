/*  test_measure_round5.c - round 5 of the model in the loop on
 *  measurement (docs/search.md, "A model in the loop", fifth round;
 *  coordinator/kf_prompt_noise.c, kf_prompt_target.c, kf_prompt_history.c):
 *  - noise: an outcome timed beside other work says so, with the load;
 *    the run's measured spread is stated with the count it rests on; a
 *    screen-against-full figure from one or two candidates bounds nothing;
 *  - the host changed mid-run: each outcome names its condition when the
 *    run's timings had different ones;
 *  - peaks below what kernels reach: a kernel above the measured peak
 *    makes it a lower bound, the share taken of the higher figure;
 *  - the copy figure states bytes moved both ways, and a cold-cache
 *    one-core read stands beside the all-core figure.
 */
#include "../../coordinator/kf_prompt.h"
#include "../../coordinator/kf_prompt_history.h"
#include "../../coordinator/kf_prompt_target.h"
#include "../kf_test.h"
#include <stdlib.h>
#include <string.h>

static char *
s_target (json_t *hw)
{
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_target_section (f, "host", "c", hw, NULL);
    fclose (f);
    return text;
}

static json_t *
s_host (void)
{
    return json_loads ("{\"backend\": \"host\", \"devices\": [{\"name\": \"AMD EPYC\","
                       " \"cores\": 2, \"copy_bandwidth_gbs\": 24, \"peak_gflops\": 140,"
                       " \"peak_source\": \"avx512f\", \"peak_gflops_one_core\": 72,"
                       " \"peak_gflops_all_threads\": 130, \"copy_one_core_gbs\": 20,"
                       " \"copy_one_core_traffic_gbs\": 30, \"copy_stream_one_core_gbs\": 26,"
                       " \"copy_one_core_bytes\": 33554432, \"read_cold_one_core_gbs\": 14.5,"
                       " \"read_cold_one_core_bytes\": 33554432}]}", 0, NULL);
}

static void
s_target_section (void)
{
    json_t *hw = s_host ();
    char *text = s_target (hw);
    //  Bytes moved both ways.
    CHECK (kf_test_has (text, "with ordinary stores 20.0 GB/s counting the bytes read plus the bytes "
                              "written (2 bytes per byte copied), which is 30.0 GB/s of memory "
                              "traffic once the write-allocate read"));
    CHECK (kf_test_has (text, "with streaming (non-temporal) stores 26.0 GB/s, read plus write"));
    CHECK (kf_test_has (text, "moves N + 2M; with streaming stores N + M"));
    //  The cold one-core read beside the all-core figure.
    CHECK (kf_test_has (text, "Memory read by one core with cold caches: 14.5 GB/s"));
    CHECK (kf_test_has (text, "against 24 GB/s for the copy on every core at once"));
    CHECK (!strstr (text, "lower bound"));
    CHECK (!strstr (text, "threads at once did no more than one core"));
    free (text);
    //  Round 6: both threads at once no better than one core (measured
    //  beside other work) is said, with what it means for threads.
    json_t *dev = json_array_get (json_object_get (hw, "devices"), 0);
    json_object_set_new (dev, "peak_gflops_all_threads", json_real (61));
    json_object_set_new (dev, "peak_gflops_one_core", json_real (65));
    text = s_target (hw);
    CHECK (kf_test_has (text, "When the FMA peak was measured, 2 threads at once did no more "
                              "than one core alone"));
    free (text);
    json_object_set_new (dev, "peak_gflops_all_threads", json_real (130));
    json_object_set_new (dev, "peak_gflops_one_core", json_real (72));
    //  A kernel of the run reached more than one core's figure; then
    //  more than every figure.
    json_object_set_new (hw, "achieved_gflops", json_real (88.4));
    text = s_target (hw);
    CHECK (kf_test_has (text, "reached 88.4 GFLOP/s, above the one-core figure: if it ran on one "
                              "thread, the one-core figure is a lower bound"));
    free (text);
    //  Round 44: not of a kernel that starts threads.
    json_object_set_new (hw, "achieved_threaded", json_true ());
    text = s_target (hw);
    CHECK (text && !strstr (text, "above the one-core figure"));
    free (text);
    json_object_del (hw, "achieved_threaded");
    json_object_set_new (hw, "achieved_gflops", json_real (150));
    text = s_target (hw);
    CHECK (kf_test_has (text, "These peaks are lower bounds"));
    CHECK (kf_test_has (text, "take 150.0 GFLOP/s as the ceiling"));
    free (text);
    json_object_del (hw, "achieved_gflops");
    //  The run's noise with its count; the load range; the condition
    //  changed mid-run; one screen-against-full pair bounds nothing.
    json_object_set_new (hw, "run_noise",
                         json_pack ("{s:i, s:f, s:f, s:i, s:f, s:f, s:i, s:i, s:i}", "n", 7,
                                    "spread_median", 0.04, "spread_max", 0.3, "load_n", 7,
                                    "load_min", 0.1, "load_max", 1.6, "cpus", 2, "shared_n", 3,
                                    "alone_n", 4));
    json_object_set_new (hw, "screen_full_gap", json_real (1.1));
    json_object_set_new (hw, "screen_full_count", json_integer (1));
    text = s_target (hw);
    CHECK (kf_test_has (text, "over 7 timed correct kernels, the speedup's own samples spread by a "
                              "median of +/-4.0% and at most +/-30.0%"));
    CHECK (kf_test_has (text, "0.1 to 1.6 other runnable tasks on 2 CPUs"));
    CHECK (kf_test_has (text, "not comparable by the ratio of their figures"));
    CHECK (kf_test_has (text, "condition changed during this run: 3 timings ran with other workers "
                              "registered on it and 4 with none"));
    CHECK (kf_test_has (text, "one candidate timed both ways"));
    CHECK (kf_test_has (text, "one pair bounds nothing"));
    CHECK (!strstr (text, "can be off by that much"));
    free (text);
    json_object_set_new (hw, "screen_full_count", json_integer (4));
    text = s_target (hw);
    CHECK (kf_test_has (text, "among the 4 candidates timed both ways"));
    CHECK (!strstr (text, "typically differ"));
    free (text);
    //  Round 11: the same kernel's two timings came out a median 16%
    //  apart where each median's samples said +/-2-4%; the run says so.
    json_object_set_new (hw, "screen_full_typical", json_real (1.16));
    json_object_set_new (hw, "screen_full_band", json_real (1.38));
    json_object_set_new (hw, "screen_full_gap", json_real (1.46));
    text = s_target (hw);
    //  Round 15: with its range, the largest ratio beside the median.
    CHECK (kf_test_has (text, "The median of those ratios is 1.16x and the largest 1.46x: two "
                              "timings of one kernel in this run typically differ by 16% and have "
                              "differed by 46%, 9 times in 10 by at most 38% (an estimate from "
                              "so few pairs, which one outlying pair does not set), so two kernels' "
                              "figures closer than that are not told apart (the search calls "
                              "such a child within noise of its parent), and a screen figure "
                              "alone can be as far off as the largest."));
    free (text);
    json_decref (hw);
}

static void
s_kernel_lines (void)
{
    //  The noise line names the load the kernel was timed under.
    json_t *k = json_loads ("{\"status\": \"correct\", \"timing_candidate\": {\"median_ns\": 1800000,"
                            " \"p10_ns\": 1750000, \"p90_ns\": 3280000}, \"timing_reference\":"
                            " {\"median_ns\": 17000000, \"p10_ns\": 16800000, \"p90_ns\": 17500000},"
                            " \"host_load\": {\"cpus\": 2, \"runnable_others\": 1.6,"
                            " \"others_cpu_share\": 0.45}, \"host_condition\":"
                            " {\"compile_workers_beside\": 1, \"exec_workers_beside\": 0}}", 0,
                            NULL);
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_noise_line (f, k);
    fclose (f);
    CHECK (kf_test_has (text, "This kernel was timed with 1.6 other runnable tasks on 2 CPUs (other "
                              "processes took 45% of the CPUs' time while it was timed); the exec "
                              "host shared with 1 compile and 0 other exec workers"));
    CHECK (kf_test_has (text, "not a like-for-like comparison"));
    CHECK (!kf_test_has (text, "Page faults"));    //  not counted: not said
    free (text);
    //  Round 10: the page faults of the kernel's process per timed call.
    json_object_set_new (json_object_get (k, "timing_candidate"), "minor_faults_per_call",
                         json_real (2563.7));
    f = open_memstream (&text, &size);
    kf_prompt_noise_line (f, k);
    fclose (f);
    CHECK (kf_test_has (text, "Page faults: 2564 minor page faults per timed call in this kernel's "
                              "process: memory mapped and touched afresh in every call"));
    //  Round 13: with the usual causes, threads' stacks first.
    CHECK (kf_test_has (text, "The usual causes: threads started in each call (each new thread "
                              "faults in every page of stack it touches"));
    //  Round 20: scratch keeps its pages (kf_scratch.h) unless it grows.
    CHECK (kf_test_has (text, "scratch blocks that grow from call to call"));
    CHECK (!kf_test_has (text, "over 32 MiB"));
    free (text);
    json_object_set_new (json_object_get (k, "timing_candidate"), "minor_faults_per_call",
                         json_real (0.1));
    f = open_memstream (&text, &size);
    kf_prompt_noise_line (f, k);
    fclose (f);
    CHECK (kf_test_has (text, "Page faults: none in the timed calls"));
    free (text);
    //  A quiet host: said, without the warning.
    char buf[300];
    json_t *quiet = json_pack ("{s:i, s:f, s:f}", "cpus", 2, "runnable_others", 0.1,
                               "others_cpu_share", 0.02);
    CHECK (!kf_prompt_load_text (quiet, NULL, buf, sizeof buf));
    CHECK (kf_test_has (buf, "timed with 0.1 other runnable tasks on 2 CPUs"));
    CHECK (kf_prompt_load_text (json_object_get (k, "host_load"), NULL, buf, sizeof buf));
    CHECK (!kf_prompt_load_text (NULL, NULL, buf, sizeof buf) && buf[0] == 0);
    json_decref (quiet);
    json_decref (k);
    //  A kernel above the measured peak: the peak is a lower bound and
    //  the share is of what the kernel reached.
    k = json_loads ("{\"compute\": {\"candidate_gflops\": 88.4, \"peak_gflops\": 72}}", 0, NULL);
    text = NULL;
    f = open_memstream (&text, &size);
    kf_prompt_position_line (f, k, NULL, NULL, KF_TARGET_HOST);
    fclose (f);
    CHECK (kf_test_has (text, "The measured peak (72.0 GFLOP/s"));
    CHECK (kf_test_has (text, "is a lower bound: this kernel reached 88.4 GFLOP/s"));
    CHECK (kf_test_has (text, "100.0% of the measured peak (88 GFLOP/s)"));
    CHECK (!strstr (text, "above the measured f32 FMA peak"));
    free (text);
    json_decref (k);
    //  Round 7: against every core's summed peak, a one-thread kernel's
    //  share of one core is stated too (123 of 219.5 is 56%).
    k = json_loads ("{\"compute\": {\"candidate_gflops\": 123, \"peak_gflops\": 439}}", 0, NULL);
    json_t *hw = json_loads ("{\"devices\": [{\"peak_gflops_one_core\": 219.5}]}", 0, NULL);
    text = NULL;
    f = open_memstream (&text, &size);
    kf_prompt_position_line (f, k, NULL, hw, KF_TARGET_HOST);
    fclose (f);
    CHECK (kf_test_has (text, "against one core's peak (219.5 GFLOP/s) this kernel is at 56%"));
    free (text);
    json_decref (hw);
    json_decref (k);
}

//  The run's other results: a loaded outcome says so; when the host's
//  condition differed within the run, every outcome names its own.
static void
s_other_results (void)
{
    json_t *history = json_loads (
        "[{\"id\": 9, \"generation\": 1, \"slot\": 0, \"phase\": \"search\", \"status\": "
        "\"correct\", \"speedup\": 6.42, \"fidelity\": \"full\", \"finished\": true,"
        " \"candidate_ns\": 2700000, \"host_load\": {\"cpus\": 2, \"runnable_others\": 1.6,"
        " \"others_cpu_share\": 0.45}, \"host_condition\": {\"compile_workers_beside\": 1,"
        " \"exec_workers_beside\": 0}},"
        " {\"id\": 8, \"generation\": 1, \"slot\": 1, \"phase\": \"search\", \"status\": "
        "\"correct\", \"speedup\": 9.6, \"fidelity\": \"full\", \"finished\": true,"
        " \"candidate_ns\": 1800000, \"host_load\": {\"cpus\": 2, \"runnable_others\": 0.1,"
        " \"others_cpu_share\": 0.01}, \"host_condition\": {\"compile_workers_beside\": 0,"
        " \"exec_workers_beside\": 0}}]", 0, NULL);
    kf_prompt_in_t in = { .history = history, .generation = 2 };
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    kf_prompt_other_results (f, &in);
    fclose (f);
    CHECK (kf_test_has (text, "6.42x), full protocol; timed with 1.6 other runnable tasks on 2 CPUs"));
    CHECK (kf_test_has (text, "9.60x), full protocol; timed with 0.1 other runnable tasks on 2 CPUs "
                              "(other processes took 1% of the CPUs' time while it was timed); no "
                              "other worker registered on the exec host"));
    free (text);
    //  One condition throughout: a quiet outcome's line stays short, and
    //  still says it was quiet (round 11: the run's best said nothing, so
    //  a quiet host could not be told from an unknown one).
    json_object_set_new (json_object_get (json_array_get (history, 0), "host_condition"),
                         "compile_workers_beside", json_integer (0));
    text = NULL;
    f = open_memstream (&text, &size);
    kf_prompt_other_results (f, &in);
    fclose (f);
    CHECK (kf_test_has (text, "6.42x), full protocol; timed with 1.6 other runnable tasks"));
    CHECK (kf_test_has (text, "9.60x), full protocol; timed on a quiet host (0.1 other runnable "
                              "tasks)\n"));
    free (text);
    json_decref (history);
}

int
main (void)
{
    s_target_section ();
    s_kernel_lines ();
    s_other_results ();
    return kf_test_done ("test_measure_round5");
}
