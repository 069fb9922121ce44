/*  kf_load_busy.h - when a timing counts as taken beside other work: one
 *  rule for the exec worker, which times such a kernel again after a
 *  quiet moment (exec-worker/kf_host_load.c), and the coordinator, whose
 *  prompts and planner call its figures not like for like
 *  (coordinator/kf_prompt_noise.c).
 */
#ifndef KF_LOAD_BUSY_H
#define KF_LOAD_BUSY_H

#include <stdbool.h>

/* Other runnable tasks, the mean over the timing's samples. */
#define KF_LOAD_BUSY_RUNNABLE 0.5
/* The share of all CPUs' time other processes took over the timing. */
#define KF_LOAD_BUSY_SHARE 0.1

/* Whether a timing with RUNNABLE other runnable tasks on average and
 * SHARE of the CPUs' time taken by others was beside other work (either
 * figure negative: not known, so no sign of load). */
static inline bool
kf_load_busy (double runnable, double share)
{
    return runnable >= KF_LOAD_BUSY_RUNNABLE || share >= KF_LOAD_BUSY_SHARE;
}

#endif
