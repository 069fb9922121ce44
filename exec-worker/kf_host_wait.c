/*  kf_host_wait.c - the run_delay of the timing's sides (kf_host_wait.h).
 *
 *  /proc/.../schedstat holds three numbers: the time on a CPU, the time
 *  runnable and waiting for one (run_delay), and the times run, each
 *  since the thread started. A reading costs an open and a read, a few
 *  microseconds, and is taken outside the timed interval.
 */
#include "kf_host_wait.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

//  The run_delay in the schedstat file PATH; -1 when it cannot be read.
static double
s_read (const char *path)
{
    FILE *f = fopen (path, "re");
    if (!f)
        return -1;
    unsigned long long run = 0, delay = 0;
    int n = fscanf (f, "%llu %llu", &run, &delay);
    fclose (f);
    return n == 2 ? (double) delay : -1;
}

double
kf_host_wait_process_ns (int pid)
{
    char dir[64];
    snprintf (dir, sizeof dir, "/proc/%d/task", pid);
    DIR *d = opendir (dir);
    if (!d)
        return -1;
    double sum = 0;
    int read = 0;
    for (struct dirent *t; (t = readdir (d));) {
        if (t->d_name[0] == '.')
            continue;
        char path[128];
        snprintf (path, sizeof path, "%s/%.32s/schedstat", dir, t->d_name);
        double ns = s_read (path);
        //  A thread that ended since the listing has nothing to add.
        if (ns >= 0) {
            sum += ns;
            read++;
        }
    }
    closedir (d);
    return read > 0 ? sum : -1;
}

double
kf_host_wait_self_ns (void)
{
    return s_read ("/proc/thread-self/schedstat");
}

//  The batch's sides' run_delay now: the judge's thread and, for PID,
//  its process; -1 when either cannot be read.
static double
s_now (int pid)
{
    double own = kf_host_wait_self_ns ();
    double cand = pid > 0 ? kf_host_wait_process_ns (pid) : 0;
    return own >= 0 && cand >= 0 ? own + cand : -1;
}

void
kf_host_wait_begin (kf_host_wait_t *w, int pid)
{
    w->pid = pid;
    w->before = s_now (pid);
}

double
kf_host_wait_end (const kf_host_wait_t *w)
{
    if (w->before < 0)
        return -1;
    double after = s_now (w->pid);
    //  A thread that ended meanwhile took its waits with it: the sum can
    //  fall. Such a batch counts as having waited nothing more.
    return after >= 0 ? (after > w->before ? after - w->before : 0) : -1;
}
