/*  test_host_load.c - the host judge records the host's load with every
 *  timing (exec-worker/kf_host_load.c; round 5 of the model in the loop:
 *  kernels of the same arithmetic measured 1.80 and 2.7 ms while a CI
 *  suite ran beside the run, and no outcome said so).
 *
 *  Made-up /proc/stat files give known answers: the busy time, the
 *  CPUs, the runnable tasks beside the reader; then the result's
 *  "host_load" object from two snapshots and three readings; then this
 *  machine's own /proc/stat.
 */
#include "../kf_test.h"
#include "../../exec-worker/kf_host_load.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void
s_file (const char *path, const char *text)
{
    FILE *f = fopen (path, "w");
    CHECK (f != NULL);
    if (f) {
        fputs (text, f);
        fclose (f);
    }
}

static double
s_num (json_t *o, const char *key)
{
    return json_number_value (json_object_get (o, key));
}

int
main (void)
{
    char path[] = "/tmp/kf_host_load.XXXXXX";
    int fd = mkstemp (path);
    CHECK (fd >= 0);
    close (fd);
    double hz = (double) sysconf (_SC_CLK_TCK);
    //  Ticks: user nice system idle iowait irq softirq steal guest guest_nice.
    s_file (path, "cpu  1000 0 500 8000 500 0 0 0 300 0\n"
                  "cpu0 500 0 250 4000 250 0 0 0 150 0\n"
                  "cpu1 500 0 250 4000 250 0 0 0 150 0\n"
                  "intr 1 2 3\nprocs_running 3\nprocs_blocked 0\n");
    kf_host_load_t l;
    memset (&l, 0, sizeof l);
    kf_host_load_snap (path, &l.before);
    CHECK (l.before.ok && l.before.cpus == 2 && l.before.running == 3);
    //  Busy is all but idle and iowait; guest is inside user already.
    CHECK (fabs (l.before.busy_s - 1500 / hz) < 1e-9);
    CHECK (fabs (l.before.total_s - 10000 / hz) < 1e-9);
    //  Three readings between samples: 2, 0 and 1 tasks beside the reader.
    kf_host_load_note (&l, path);
    s_file (path, "cpu  1100 0 500 8000 500 0 0 0 0 0\ncpu0 1 0 0 0\ncpu1 1 0 0 0\n"
                  "procs_running 1\n");
    kf_host_load_note (&l, path);
    //  After: 1.5 s of busy time more (both CPUs), over 1 s of sampling
    //  in which the judge and the candidate used 0.6 s.
    char text[400];
    snprintf (text, sizeof text, "cpu  %.0f 0 %.0f 8000 500 0 0 0 0 0\ncpu0 1 0 0 0\n"
              "cpu1 1 0 0 0\nprocs_running 2\n", 1000 + 1.0 * hz, 500 + 0.5 * hz);
    s_file (path, text);
    kf_host_load_note (&l, path);
    kf_host_load_snap (path, &l.after);
    l.own_cpu_s = 0.6;
    l.wall_s = 1.0;
    json_t *o = kf_host_load_json (&l);
    char *dump = json_dumps (o, JSON_COMPACT);
    printf ("host_load: %s\n", dump ? dump : "(null)");
    free (dump);
    CHECK (json_integer_value (json_object_get (o, "cpus")) == 2);
    CHECK (fabs (s_num (o, "runnable_others") - 1.0) < 1e-9);
    CHECK (json_integer_value (json_object_get (o, "runnable_others_max")) == 2);
    CHECK (json_integer_value (json_object_get (o, "readings")) == 3);
    CHECK (fabs (s_num (o, "others_cpu_s") - 0.9) < 1e-6);
    CHECK (fabs (s_num (o, "others_cpu_share") - 0.45) < 1e-6);
    //  Not known, not said.
    CHECK (!json_object_get (o, "cpus_allowed"));
    json_decref (o);
    //  Round 16: the CPUs the candidate could use go with the load, as
    //  this process reads them (the runner is forked from it).
    l.cpus_allowed = kf_host_load_allowed ();
    CHECK (l.cpus_allowed >= 1 && l.cpus_allowed <= (int) sysconf (_SC_NPROCESSORS_CONF));
    o = kf_host_load_json (&l);
    CHECK (json_integer_value (json_object_get (o, "cpus_allowed")) == l.cpus_allowed);
    json_decref (o);
    //  The judge's own CPU beyond the busy time: others took nothing.
    l.own_cpu_s = 5;
    o = kf_host_load_json (&l);
    CHECK (s_num (o, "others_cpu_s") == 0 && s_num (o, "others_cpu_share") == 0);
    json_decref (o);
    //  Busy by the coordinator's rule (common/kf_load_busy.h): 1.0
    //  runnable and 45% taken above; a quiet one is not.
    l.own_cpu_s = 0.6;
    CHECK (kf_host_load_busy (&l));
    kf_host_load_t calm = l;
    calm.runnable_sum = 0.3;
    calm.own_cpu_s = 1.4;   //  others 0.1 s of 2 CPU-seconds: 5%
    CHECK (!kf_host_load_busy (&calm));
    calm.runnable_sum = 1.5;   //  0.5 on average over 3 readings
    CHECK (kf_host_load_busy (&calm));
    //  Round 20: the wait for a quiet host before a second timing. Only
    //  the reader runnable: quiet after KF_HOST_QUIET_READINGS readings.
    bool quiet = false;
    s_file (path, "cpu  1 0 0 0\nprocs_running 1\n");
    double waited = kf_host_load_wait_quiet (path, 5.0, &quiet);
    printf ("quiet file: %.3f s\n", waited);
    CHECK (quiet && waited < 2.0);
    //  Two others runnable throughout: the whole wait, and not quiet.
    s_file (path, "cpu  1 0 0 0\nprocs_running 3\n");
    waited = kf_host_load_wait_quiet (path, 0.2, &quiet);
    printf ("busy file: %.3f s\n", waited);
    CHECK (!quiet && waited >= 0.2 && waited < 5.0);
    //  No count to read: nothing to wait for.
    s_file (path, "cpu  1 0 0 0\n");
    waited = kf_host_load_wait_quiet (path, 5.0, &quiet);
    CHECK (quiet && waited < 2.0);
    //  No snapshot, no object; a file without procs_running adds no reading.
    l.after.ok = false;
    CHECK (!kf_host_load_busy (&l));
    CHECK (kf_host_load_json (&l) == NULL);
    s_file (path, "cpu  1 0 0 0\n");
    int before = l.readings;
    kf_host_load_note (&l, path);
    CHECK (l.readings == before);
    unlink (path);
    kf_host_load_snap (path, &l.before);
    CHECK (!l.before.ok);
    //  This machine: every CPU counted, the reader itself running.
    kf_host_load_snap ("/proc/stat", &l.before);
    CHECK (l.before.ok && l.before.running >= 1);
    CHECK (l.before.cpus == (int) sysconf (_SC_NPROCESSORS_ONLN));
    return kf_test_done ("test_host_load");
}
