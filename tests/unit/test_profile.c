/*  test_profile.c - the profile job's condensing and its refusals.
 *
 *  The fixture tests/fixtures/ncu/good_softmax_h200_raw.csv is what
 *  `ncu --csv --page raw` wrote on an NVIDIA H200 for three launches of
 *  tests/fixtures/kernels/cuda/good_softmax.cu (4096 x 4096 rows) run by
 *  the evaluation child, ncu's own "==PROF==" lines included, so the
 *  condensing is tested on the profiler's real output, not on a guess of
 *  it. Synthetic reports check the verdicts the fixture cannot show. No
 *  GPU is needed here; tests/gpu/test-gpu.sh runs a real profile job.
 */
#include "../../exec-worker/kf_exec.h"
#include "../../exec-worker/kf_profile.h"
#include "../kf_test.h"
#include "kf_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double
s_num (json_t *obj, const char *key)
{
    json_t *v = json_object_get (obj, key);
    return json_is_number (v) ? json_number_value (v) : NAN;
}

static void
s_fixture (bool verbose)
{
    size_t size = 0;
    char *csv = kf_file_read ("tests/fixtures/ncu/good_softmax_h200_raw.csv", 1 << 24, &size);
    CHECK (csv != NULL);
    if (!csv)
        return;
    json_t *m = NULL;
    char *summary = NULL, *error = NULL;
    CHECK (kf_profile_condense (csv, size, &m, &summary, &error) == 0);
    CHECK (error == NULL);
    if (verbose && summary)
        printf ("%s", summary);
    if (m) {
        //  The figures as ncu printed them for the three launches:
        //  gpu__dram_throughput 69.67, 71.03, 69.57; sm__throughput 69.79,
        //  71.05, 70.10; lts__throughput 85.29 ...; warps active 85.89, ...
        CHECK (fabs (s_num (m, "dram_pct") - 70.09) < 0.01);
        CHECK (fabs (s_num (m, "compute_pct") - 70.31) < 0.01);
        CHECK (fabs (s_num (m, "achieved_occupancy_pct") - 85.87) < 0.01);
        CHECK (s_num (m, "theoretical_occupancy_pct") == 100);
        //  "34,592" with its thousands separator read as 34592 ns.
        CHECK (fabs (s_num (m, "duration_ns") - (34592 + 33984 + 34592) / 3.0) < 0.01);
        //  The busiest memory unit is L2 (85%), above the SM's 70%.
        CHECK (!strcmp (json_string_value (json_object_get (m, "bound")), "memory"));
        CHECK (!strcmp (json_string_value (json_object_get (m, "memory_unit")), "L2"));
        CHECK (s_num (m, "memory_pct") > 85 && s_num (m, "memory_pct") < 86);
        json_t *stalls = json_object_get (m, "top_stalls");
        CHECK (json_array_size (stalls) == 3);
        CHECK (!strcmp (json_string_value (json_object_get (json_array_get (stalls, 0), "reason")),
                        "long_scoreboard"));
        CHECK (!strcmp (json_string_value (json_object_get (json_array_get (stalls, 1), "reason")),
                        "not_selected"));
        //  "selected" (1.0 per issue by definition) is no stall.
        for (size_t i = 0; i < json_array_size (stalls); i++)
            CHECK (strcmp (json_string_value (json_object_get (json_array_get (stalls, i), "reason")),
                           "selected") != 0);
        json_t *kernels = json_object_get (m, "kernels");
        CHECK (json_array_size (kernels) == 1);
        json_t *k = json_array_get (kernels, 0);
        CHECK (!strcmp (json_string_value (json_object_get (k, "name")), "softmax_rows"));
        CHECK (json_integer_value (json_object_get (k, "launches")) == 3);
        CHECK (s_num (k, "registers_per_thread") == 32);
        CHECK (!strcmp (json_string_value (json_object_get (k, "block")), "(256, 1, 1)"));
        CHECK (json_integer_value (json_object_get (m, "launches_profiled")) == 3);
    }
    CHECK (summary && strstr (summary, "kernel softmax_rows: grid (4096, 1, 1), block (256, 1, 1), 32 registers/thread"));
    CHECK (summary && strstr (summary, "memory-bound: DRAM throughput 70.1% of peak, busiest memory unit (L2) 85."));
    CHECK (summary && strstr (summary, "occupancy: achieved 85.9% of 64 warps/SM, theoretical 100.0%\n"));
    CHECK (summary && strstr (summary, "top stalls (warps waiting per issued instruction): long_scoreboard 7.77"));
    //  Short enough for a prompt.
    CHECK (summary && strlen (summary) < 600);
    json_decref (m);
    free (summary);
    free (error);
    free (csv);
}

//  A report of two kernels written for the verdicts: the longer one leads.
static void
s_synthetic (bool verbose)
{
    const char *csv =
        "==PROF== Connected to process 1 (x)\n"
        "\"ID\",\"Kernel Name\",\"Block Size\",\"Grid Size\",\"gpu__time_duration.sum\","
        "\"gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed\","
        "\"sm__throughput.avg.pct_of_peak_sustained_elapsed\","
        "\"sm__warps_active.avg.pct_of_peak_sustained_active\","
        "\"sm__maximum_warps_per_active_cycle_pct\",\"launch__occupancy_limit_registers\","
        "\"launch__occupancy_limit_warps\","
        "\"smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio\","
        "\"smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio\"\n"
        "\"\",\"\",\"\",\"\",\"ns\",\"%\",\"%\",\"%\",\"%\",\"block\",\"block\",\"inst\",\"inst\"\n"
        "\"0\",\"small(int)\",\"(32, 1, 1)\",\"(1, 1, 1)\",\"2,000\",\"1.5\",\"3\",\"6.2\",\"50\",\"2\",\"16\",\"0\",\"4.5\"\n"
        "\"1\",\"void gemm<128, 64>(float const*, float*)\",\"(128, 1, 1)\",\"(512, 1, 1)\",\"1,200,000\",\"20\",\"91.5\",\"45\",\"50\",\"4\",\"16\",\"3.25\",\"0.5\"\n"
        "==PROF== Disconnected from process 1\n";
    json_t *m = NULL;
    char *summary = NULL, *error = NULL;
    CHECK (kf_profile_condense (csv, strlen (csv), &m, &summary, &error) == 0);
    if (verbose && summary)
        printf ("%s", summary);
    CHECK (!strcmp (json_string_value (json_object_get (m, "bound")), "compute"));
    json_t *kernels = json_object_get (m, "kernels");
    CHECK (json_array_size (kernels) == 2);
    //  Templates keep their arguments, parameters go.
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (kernels, 0), "name")),
                    "void gemm<128, 64>"));
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (kernels, 1), "name")),
                    "small"));
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (kernels, 1), "bound")),
                    "latency"));
    CHECK (!strcmp (json_string_value (json_object_get (json_array_get (kernels, 0),
                                                        "occupancy_limiter")), "registers"));
    CHECK (summary && strstr (summary, "compute-bound"));
    CHECK (summary && strstr (summary, "(limited by registers)"));
    CHECK (summary && strstr (summary, "math_pipe_throttle 3.25"));
    CHECK (summary && strstr (summary, "other kernels:\n- small: 2.0 us, latency-bound"));
    json_decref (m);
    free (summary);
    free (error);

    //  No report at all, and a header with no rows.
    const char *none = "==PROF== Connected\n==ERROR== the profiler failed\n";
    CHECK (kf_profile_condense (none, strlen (none), &m, &summary, &error) == -1);
    CHECK (m == NULL && summary == NULL && error && strstr (error, "no ncu report"));
    free (error);
    const char *empty = "\"ID\",\"Kernel Name\"\n\"\",\"\"\n";
    CHECK (kf_profile_condense (empty, strlen (empty), &m, &summary, &error) == -1);
    CHECK (error && strstr (error, "lists no profiled kernel"));
    free (error);
}

//  Where profiling cannot work, the job fails saying so.
static void
s_unavailable (void)
{
    kf_profile_config_t host = { .backend = "host", .perf = "off" };
    kf_profile_t *p = kf_profile_new (&host);
    CHECK (p && kf_profile_unavailable (p)
           && strstr (kf_profile_unavailable (p), "perf is turned off"));
    CHECK (kf_profile_capability (p) == NULL);
    kf_profile_config_t ze = { .backend = "level-zero" };
    kf_profile_t *z = kf_profile_new (&ze);
    CHECK (z && kf_profile_unavailable (z)
           && strstr (kf_profile_unavailable (z), "level-zero backend has no profiler"));
    kf_profile_destroy (&z);

    json_t *payload = json_pack ("{s:{s:s}}", "task", "name", "t");
    zmsg_t *frames = zmsg_new ();
    zmsg_addstr (frames, "not a kernel");
    kf_job_t job = { .job_id = 1, .lease = 1, .kind = "profile", .payload = payload,
                     .frames = frames };
    kf_job_result_t res;
    kf_profile_set_shared (NULL);
    kf_exec_handle (NULL, &job, &res);
    CHECK (!res.ok && res.error
           && !strcmp (res.error, "profiling unavailable: this worker has no profiler set up"));
    free (res.error);
    kf_profile_set_shared (p);
    kf_exec_handle (NULL, &job, &res);
    CHECK (!res.ok && res.error
           && !strcmp (res.error, "profiling unavailable: perf is turned off (perf = off)"));
    free (res.error);
    kf_profile_set_shared (NULL);
    kf_profile_destroy (&p);
    CHECK (p == NULL);
    kf_profile_destroy (&p);

    kf_profile_config_t off = { .backend = "cuda", .ncu = "off" };
    p = kf_profile_new (&off);
    CHECK (p && strstr (kf_profile_unavailable (p), "turned off"));
    kf_profile_destroy (&p);
    kf_profile_config_t bogus = { .backend = "cuda", .ncu = "/bin/false" };
    p = kf_profile_new (&bogus);
    CHECK (p && strstr (kf_profile_unavailable (p), "/bin/false does not run as ncu"));
    kf_profile_destroy (&p);
    json_decref (payload);
    zmsg_destroy (&frames);
}

int
main (int argc, char **argv)
{
    bool verbose = argc > 1 && !strcmp (argv[1], "-v");
    s_fixture (verbose);
    s_synthetic (verbose);
    s_unavailable ();
    return kf_test_done ("test_profile");
}
