/*  kf_host_load.h - how busy the host was while the host judge timed a
 *  candidate (round 5 of the model in the loop: "noise drowns the
 *  differences the search ranks"; the same arithmetic measured 1.80 and
 *  2.7 ms while a CI suite ran beside the run, and no outcome said so).
 *
 *  The judge reads /proc/stat before and after its timed samples, and
 *  its procs_running line after each candidate batch: the tasks that
 *  were runnable beside the judge, and the CPU time every other process
 *  took over the sampling (the CPUs' busy time less the judge's and the
 *  candidate's own). The result carries both as "host_load"
 *  (docs/evaluation.md, "Result"), the coordinator stores it with the
 *  evaluation, and the prompt names it per outcome.
 */
#ifndef KF_HOST_LOAD_H
#define KF_HOST_LOAD_H

#include <jansson.h>
#include <stdbool.h>

/* One reading of a /proc/stat file. */
typedef struct {
    bool ok;                 /* the "cpu" line was read */
    double busy_s, total_s;  /* all CPUs together, seconds (ticks / USER_HZ) */
    int running;             /* procs_running, the reader included; -1: absent */
    int cpus;                /* the cpuN lines */
} kf_host_load_snap_t;

/* The load over one timing: snapshots before and after, the runnable
 * others seen after each sample, the CPU the judge and the candidate
 * used meanwhile. */
typedef struct {
    kf_host_load_snap_t before, after;
    double runnable_sum;     /* procs_running - 1 summed over the readings */
    int runnable_max, readings;
    double own_cpu_s;        /* the judge's and the candidate's CPU over the sampling */
    double wall_s;
    int cpus_allowed;        /* CPUs the candidate's process may run on; 0: not known */
    bool waits_known;        /* the sides' waits for a CPU were measured (kf_host_wait.h), */
    bool undisturbed_only;   /*   and the figures are over pairs in which neither waited */
    double cand_wait_share;  /* the candidate's threads' waits over its samples' time */
} kf_host_load_t;

/* Reads PATH (a /proc/stat file) into *S; S->ok false when its "cpu"
 * line cannot be read. */
void kf_host_load_snap (const char *path, kf_host_load_snap_t *s);

/* Adds one reading of PATH's procs_running to L (the judge itself, one
 * task, not counted); nothing when the file has no such line. */
void kf_host_load_note (kf_host_load_t *l, const char *path);

/* How many CPUs this process may run on (sched_getaffinity), which the
 * candidate's runner, forked from it, inherits; 0 when not known. Round
 * 16: threads bought 4% where both cores gave 1.8 times one core's rate,
 * and no prompt could say whether the second CPU was the kernel's. */
int kf_host_load_allowed (void);

/* The result's "host_load" object from L, or NULL when the before and
 * after snapshots were not both read:
 * {"cpus": N, "runnable_others": mean, "runnable_others_max": max,
 *  "readings": n, "others_cpu_s": s, "others_cpu_share": s / (wall * cpus),
 *  "wall_s": wall, "cpus_allowed": n (only when known),
 *  "undisturbed_only": b and "cand_wait_share": the candidate's threads' waits for a CPU
 *  summed, over its timed samples' time (both only where waits were measured)}. others_cpu_s is the CPUs' busy time over the
 * sampling less OWN_CPU_S, never below 0; runnable_others only with
 * readings. Caller owns it. */
json_t *kf_host_load_json (const kf_host_load_t *l);

/* The share of the CPUs' time other processes took over L's wall time
 * (0 to 1; the "others_cpu_share" kf_host_load_json reports, unrounded),
 * or -1 where it was not read. One reckoning for the report, the busy
 * rule and the retiming's choice. */
double kf_host_load_share (const kf_host_load_t *l);

/* Whether L's timing was beside other work (common/kf_load_busy.h's
 * rule, on the figures kf_host_load_json reports); false when they were
 * not read, and when its figures are over undisturbed pairs only: the
 * other work ran, but not while the samples counted were taken. */
bool kf_host_load_busy (const kf_host_load_t *l);

/* Waits, at most MAX_S seconds, until PATH (a /proc/stat file) has shown
 * no runnable task but the reader for KF_HOST_QUIET_READINGS readings in
 * a row, KF_HOST_QUIET_STEP_S apart. Returns the seconds waited; *QUIET
 * (when not NULL) says whether the quiet came. */
#define KF_HOST_QUIET_READINGS 5
#define KF_HOST_QUIET_STEP_S 0.01
double kf_host_load_wait_quiet (const char *path, double max_s, bool *quiet);

#endif
