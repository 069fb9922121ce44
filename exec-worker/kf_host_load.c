/*  kf_host_load.c - the host's load during a timing (kf_host_load.h).
 *
 *  /proc/stat's first line adds up every CPU's time in USER_HZ ticks:
 *  user nice system idle iowait irq softirq steal ...; busy is all but
 *  idle and iowait. Ticks are 10 ms, so the busy time of a short
 *  sampling is coarse; the runnable count read after each sample is the
 *  finer figure.
 */
#include "kf_host_load.h"
#include "kf_load_busy.h"

#include <math.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

void
kf_host_load_snap (const char *path, kf_host_load_snap_t *s)
{
    memset (s, 0, sizeof *s);
    s->running = -1;
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    long hz = sysconf (_SC_CLK_TCK);
    if (hz <= 0)
        hz = 100;
    char line[512];
    while (fgets (line, sizeof line, f)) {
        if (!strncmp (line, "cpu ", 4)) {
            double v[10] = { 0 };
            int n = sscanf (line + 4, "%lf %lf %lf %lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1],
                            &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
            if (n < 4)
                continue;
            //  guest and guest_nice (8, 9) are already in user and nice.
            double total = 0;
            for (int i = 0; i < n && i < 8; i++)
                total += v[i];
            s->total_s = total / (double) hz;
            s->busy_s = (total - v[3] - (n > 4 ? v[4] : 0)) / (double) hz;
            s->ok = true;
        }
        else if (!strncmp (line, "cpu", 3) && line[3] >= '0' && line[3] <= '9')
            s->cpus++;
        else if (!strncmp (line, "procs_running ", 14))
            s->running = atoi (line + 14);
    }
    fclose (f);
}

void
kf_host_load_note (kf_host_load_t *l, const char *path)
{
    kf_host_load_snap_t s;
    kf_host_load_snap (path, &s);
    if (s.running < 1)
        return;
    int others = s.running - 1;
    l->runnable_sum += others;
    if (others > l->runnable_max)
        l->runnable_max = others;
    l->readings++;
}

int
kf_host_load_allowed (void)
{
    cpu_set_t set;
    if (sched_getaffinity (0, sizeof set, &set) != 0)
        return 0;
    return CPU_COUNT (&set);
}

static double
s_round (double x, double unit)
{
    return round (x / unit) * unit;
}

double
kf_host_load_share (const kf_host_load_t *l)
{
    if (!l->before.ok || !l->after.ok || !(l->wall_s > 0))
        return -1;
    int cpus = l->after.cpus > 0 ? l->after.cpus : 1;
    double others = l->after.busy_s - l->before.busy_s - l->own_cpu_s;
    return fmin (fmax (others, 0) / (l->wall_s * cpus), 1);
}

json_t *
kf_host_load_json (const kf_host_load_t *l)
{
    if (!l->before.ok || !l->after.ok)
        return NULL;
    json_t *o = json_object ();
    if (!o)
        return NULL;
    int cpus = l->after.cpus > 0 ? l->after.cpus : 1;
    json_object_set_new (o, "cpus", json_integer (cpus));
    if (l->readings > 0) {
        json_object_set_new (o, "runnable_others",
                             json_real (s_round (l->runnable_sum / l->readings, 0.01)));
        json_object_set_new (o, "runnable_others_max", json_integer (l->runnable_max));
        json_object_set_new (o, "readings", json_integer (l->readings));
    }
    double busy = l->after.busy_s - l->before.busy_s;
    double others = busy - l->own_cpu_s;
    if (!(others > 0))
        others = 0;
    json_object_set_new (o, "others_cpu_s", json_real (s_round (others, 0.001)));
    double wall = l->wall_s > 0 ? l->wall_s : 0;
    json_object_set_new (o, "wall_s", json_real (s_round (wall, 0.001)));
    double share = kf_host_load_share (l);
    if (share >= 0)
        json_object_set_new (o, "others_cpu_share", json_real (s_round (share, 0.001)));
    if (l->cpus_allowed > 0)
        json_object_set_new (o, "cpus_allowed", json_integer (l->cpus_allowed));
    if (l->waits_known) {
        json_object_set_new (o, "undisturbed_only", json_boolean (l->undisturbed_only));
        json_object_set_new (o, "cand_wait_share", json_real (s_round (l->cand_wait_share, 0.001)));
    }
    return o;
}

bool
kf_host_load_busy (const kf_host_load_t *l)
{
    if (!l->before.ok || !l->after.ok || (l->waits_known && l->undisturbed_only))
        return false;
    double runnable = l->readings > 0 ? l->runnable_sum / l->readings : -1;
    return kf_load_busy (runnable, kf_host_load_share (l));
}

static double
s_now (void)
{
    struct timespec t;
    clock_gettime (CLOCK_MONOTONIC, &t);
    return (double) t.tv_sec + (double) t.tv_nsec * 1e-9;
}

double
kf_host_load_wait_quiet (const char *path, double max_s, bool *quiet)
{
    double t0 = s_now ();
    int calm = 0;
    for (;;) {
        kf_host_load_snap_t s;
        kf_host_load_snap (path, &s);
        //  No count to read: nothing to wait for.
        calm = s.running < 1 ? KF_HOST_QUIET_READINGS : s.running == 1 ? calm + 1 : 0;
        double waited = s_now () - t0;
        if (calm >= KF_HOST_QUIET_READINGS || waited >= max_s) {
            if (quiet)
                *quiet = calm >= KF_HOST_QUIET_READINGS;
            return waited;
        }
        struct timespec step = { 0, (long) (KF_HOST_QUIET_STEP_S * 1e9) };
        nanosleep (&step, NULL);
    }
}
