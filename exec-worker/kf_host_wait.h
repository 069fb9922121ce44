/*  kf_host_wait.h - how long a side of the host judge's timing waited for
 *  a CPU (round 25 of the model in the loop: one kernel timed 5.6 ms in
 *  one evaluation and 13.4 ms in another while other processes shared
 *  the 2 CPUs, and one-idea comparisons measured the load).
 *
 *  Linux keeps, per thread, the time it was runnable and not running:
 *  the second field of /proc/PID/task/TID/schedstat (run_delay, ns). The
 *  judge reads it around each timed batch, outside the timed interval:
 *  for the candidate's batch the sum over every thread of its process
 *  plus the judge's own thread (whose wake-up ends the batch's clock),
 *  from before the resume to the stop at its answer (kf_runner_wait_ns:
 *  not the window after the answer, where the runner and the judge's
 *  looks at it take turns); for the reference's batch the judge's own
 *  thread. The protocol
 *  (kf_eval_protocol.h) marks a sample whose side waited past a small
 *  share of its time as disturbed and takes the figures over the pairs
 *  that were not. A thread that ends within a batch takes its waits
 *  with it (a kernel that starts threads in each call): such a kernel's
 *  waits read low, never high.
 */
#ifndef KF_HOST_WAIT_H
#define KF_HOST_WAIT_H

#include <stdbool.h>

/* The run_delay of every thread of process PID added up, ns; -1 when
 * its threads cannot be read. */
double kf_host_wait_process_ns (int pid);

/* The calling thread's run_delay, ns; -1 when it cannot be read. */
double kf_host_wait_self_ns (void);

/* The waits of a batch: the candidate's process (PID; 0: none, the
 * reference's batch) and the judge's thread, read once before it. */
typedef struct {
    int pid;
    double before;           /* below 0: could not be read */
} kf_host_wait_t;

/* Reads W's start for a batch of process PID (0: the judge's alone). */
void kf_host_wait_begin (kf_host_wait_t *w, int pid);

/* The wait since kf_host_wait_begin, ns; -1 when either reading failed. */
double kf_host_wait_end (const kf_host_wait_t *w);

#endif
