/*  test_profile_perf.c - the host profile: perf stat's output condensed,
 *  and the start-up trial that decides whether a worker offers profiles.
 *
 *  tests/fixtures/perf/ holds perf stat's -x, output: software events as
 *  perf 6.1 wrote them here, and hardware counters in the same format
 *  (README.md there says which is which). The rates' wording is
 *  test_rates.c's; here only that the summary states both rates and
 *  keeps the host's cold-cache rule. tests/integration/test_profile_host.sh
 *  runs real profile jobs.
 */
#include "../../exec-worker/kf_profile.h"
#include "../kf_test.h"
#include "kf_file.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static double
s_num (json_t *obj, const char *key)
{
    json_t *v = json_object_get (obj, key);
    return json_is_number (v) ? json_number_value (v) : NAN;
}

//  The evaluation result of a profiled run, as the host judge writes it:
//  40 calls of 1.3 ms, the rates against the host's ceilings.
static json_t *
s_eval (double gbs, double gflops)
{
    return json_pack ("{s:s, s:{s:f, s:i, s:i}, s:{s:f, s:f, s:f}, s:{s:f, s:f}}",
                      "verdict", "correct", "candidate", "median_ns", 1.3e6, "samples", 10,
                      "calls_per_sample", 4, "bandwidth", "bytes", 12582912.0, "candidate_gbs",
                      gbs, "copy_gbs", 9.4, "compute", "candidate_gflops", gflops,
                      "peak_gflops", 6.1);
}

static void
s_hardware (bool verbose)
{
    size_t size = 0;
    char *text = kf_file_read ("tests/fixtures/perf/hardware_counters.csv", 1 << 20, &size);
    CHECK (text != NULL);
    json_t *eval = s_eval (0.5, 5.2);
    json_t *m = NULL;
    char *summary = NULL, *error = NULL;
    CHECK (kf_profile_perf_condense (text, size, eval, &m, &summary, &error) == 0);
    if (verbose && summary)
        printf ("%s", summary);
    //  412034561 / 183402112; 1000 x 1230411 / 412034561; 160485 / 40121333.
    CHECK (fabs (s_num (m, "ipc") - 2.247) < 0.001);
    CHECK (fabs (s_num (m, "cache_misses_per_kilo_instruction") - 2.986) < 0.001);
    CHECK (fabs (s_num (m, "cache_miss_pct") - 14.99) < 0.01);
    CHECK (fabs (s_num (m, "branch_miss_pct") - 0.4) < 0.001);
    //  52.31 ms of CPU over 40 calls of 1.3 ms.
    CHECK (fabs (s_num (m, "cpus_busy") - 1.01) < 0.006);
    CHECK (s_num (m, "calls") == 40);
    CHECK (fabs (s_num (m, "instructions_per_call") - 412034561 / 40.0) < 1);
    //  ":u" (perf's fall-back to user space) is not part of the name.
    CHECK (json_object_get (json_object_get (m, "events"), "cycles") != NULL);
    CHECK (kf_test_has (summary, "counted over 40 timed calls of kf_forward"));
    CHECK (kf_test_has (summary, "IPC 2.25 (instructions per cycle)"));
    CHECK (kf_test_has (summary, "cache misses 2.99 per 1000 instructions (15.0% of cache references"));
    CHECK (kf_test_has (summary, "branch misses 0.40% of branches (0.39 per 1000 instructions)"));
    CHECK (kf_test_has (summary, "some ran 80% of the time and are scaled"));
    CHECK (kf_test_has (summary, "cores busy during the calls: 1.0"));
    //  Both rates, and which ceiling is nearer: a GEMM is compute's.
    CHECK (kf_test_has (summary, "memory: moves at least 12.0 MiB at 0.5 GB/s, 5% of the measured "
                                 "copy bandwidth (9 GB/s)"));
    CHECK (kf_test_has (summary, "compute: 5.2 GFLOP/s, 85.2% of the measured peak (6 GFLOP/s)"));
    CHECK (kf_test_has (summary, "nearer the compute ceiling (85% against 5%)"));
    json_decref (m);
    free (summary);
    json_decref (eval);

    //  Above the copy figure on the host, whose calls start with cold
    //  caches: never a share over 100%, never served from cache.
    eval = s_eval (19.0, 0);
    CHECK (kf_profile_perf_condense (text, size, eval, &m, &summary, &error) == 0);
    CHECK (kf_test_has (summary, "above the measured copy bandwidth (9 GB/s) although every call "
                                 "starts with its data flushed from the caches"));
    CHECK (!kf_test_has (summary, "202%") && !kf_test_has (summary, "fits") && !kf_test_has (summary, "served"));
    CHECK (kf_test_has (summary, "compute: not known (the task gives no operation count)"));
    CHECK (json_object_get (m, "gflops") == NULL);
    json_decref (m);
    free (summary);
    json_decref (eval);
    free (text);
}

static void
s_software (void)
{
    size_t size = 0;
    char *text = kf_file_read ("tests/fixtures/perf/software_events.csv", 1 << 20, &size);
    CHECK (text != NULL);
    json_t *eval = s_eval (1.15, 0);
    json_t *m = NULL;
    char *summary = NULL, *error = NULL;
    CHECK (kf_profile_perf_condense (text, size, eval, &m, &summary, &error) == 0);
    //  No hardware counters: no IPC or misses claimed, the cores still.
    CHECK (!kf_test_has (summary, "IPC") && !kf_test_has (summary, "misses"));
    CHECK (fabs (s_num (m, "cpus_busy") - 406.42 / 52.0) < 0.01);
    CHECK (s_num (json_object_get (json_object_get (m, "events"), "page-faults"), "value") == 61);
    json_decref (m);
    free (summary);
    free (text);

    //  Counters never turned on, and no output at all.
    const char *off = "# started on Tue Dec  1 21:51:24 2026\n\n"
                      "<not counted>,msec,task-clock,0,100.00,,\n"
                      "<not counted>,,cycles:u,0,100.00,,\n";
    CHECK (kf_profile_perf_condense (off, strlen (off), eval, &m, &summary, &error) == -1);
    CHECK (m == NULL && summary == NULL && kf_test_has (error, "perf counted nothing"));
    free (error);
    CHECK (kf_profile_perf_condense ("", 0, eval, &m, &summary, &error) == -1);
    CHECK (kf_test_has (error, "no counts"));
    free (error);
    json_decref (eval);
}

//  The trial at start-up: refusals name why; where perf runs, the
//  verdict is the kernel's, and software events always count.
static void
s_probe (void)
{
    char *perf, *version, *events;
    int paranoid;
    char *why = kf_profile_perf_probe ("off", NULL, &perf, &version, &events, &paranoid);
    CHECK (kf_test_has (why, "perf is turned off") && !perf && !version && !events);
    free (why);
    why = kf_profile_perf_probe ("/bin/false", NULL, &perf, &version, &events, &paranoid);
    CHECK (kf_test_has (why, "/bin/false does not run as perf"));
    free (why);
    why = kf_profile_perf_probe (NULL, "cycles;rm -rf", &perf, &version, &events, &paranoid);
    CHECK (kf_test_has (why, "is not a list of event names"));
    free (why);
    why = kf_profile_perf_probe (NULL, "-o,/etc/x", &perf, &version, &events, &paranoid);
    CHECK (kf_test_has (why, "is not a list of event names"));
    free (why);
    char *found = kf_profile_on_path ("perf");
    if (!found) {
        printf ("test_profile_perf: no perf on PATH (Debian: linux-perf); the trial's own "
                "checks skipped\n");
        return;
    }
    free (found);
    why = kf_profile_perf_probe (NULL, "task-clock,page-faults", &perf, &version, &events,
                                 &paranoid);
    CHECK (why == NULL && kf_test_has (perf, "perf") && kf_test_has (version, "perf version")
           && !strcmp (events, "task-clock,page-faults"));
    free (why);
    free (perf);
    free (version);
    free (events);
    why = kf_profile_perf_probe (NULL, NULL, &perf, &version, &events, &paranoid);
    if (why) {
        printf ("test_profile_perf: hardware counters here: %s\n", why);
        CHECK (perf == NULL && kf_test_has (why, "perf stat"));
    }
    else
        CHECK (!strcmp (events, "task-clock," KF_PROFILE_PERF_EVENTS));
    free (why);
    free (perf);
    free (version);
    free (events);
}

int
main (int argc, char **argv)
{
    bool verbose = argc > 1 && !strcmp (argv[1], "-v");
    s_hardware (verbose);
    s_software ();
    s_probe ();
    return kf_test_done ("test_profile_perf");
}
