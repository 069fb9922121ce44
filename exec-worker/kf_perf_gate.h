/*  kf_perf_gate.h - the host judge's hold on perf stat's counters during a
 *  profile: on only while the candidate's timed calls run.
 *
 *  perf stat counts a whole process tree, and an evaluation child is
 *  mostly the judge's own work (drawing inputs, the reference, checking
 *  outputs, flushing caches). A host profile (exec-worker/
 *  kf_profile_perf.c) therefore starts perf with its counters off
 *  (`--delay -1`) and control FIFOs (`--control fifo:CTL,ACK`), and names
 *  the FIFOs in the child's timing (`perf_control` {ctl, ack}); the judge
 *  says "enable" just before each timed batch of the candidate and
 *  "disable" just after, each answered by perf's "ack". What is counted
 *  is then the candidate's process and its threads during those calls,
 *  and the judge waiting for its answer (blocked, so it counts little).
 *
 *  The judge opens the FIFOs when timing begins and removes their names,
 *  so a candidate can reach them only before that; at worst it skews its
 *  own profile's counts, never a verdict or a timing (perf's answers come
 *  outside the timed window). Without perf_control every call does
 *  nothing.
 */
#ifndef KF_PERF_GATE_H
#define KF_PERF_GATE_H

#include <jansson.h>
#include <stdbool.h>

typedef struct {
    int ctl, ack;            /* the FIFOs, -1 when there is no gate */
    bool on;
    int batches;             /* batches counted (enable answered) */
} kf_perf_gate_t;

/* Opens the FIFOs CONTROL names ({ctl, ack}: paths; NULL or absent: no
 * gate) and unlinks them. A FIFO that will not open leaves no gate. */
void kf_perf_gate_open (kf_perf_gate_t *g, json_t *control);

/* Turns the counters on or off and waits (up to 5 s) for perf's answer;
 * a gate perf does not answer is closed. */
void kf_perf_gate_set (kf_perf_gate_t *g, bool on);

/* Turns the counters off if on and closes the FIFOs. */
void kf_perf_gate_close (kf_perf_gate_t *g);

#endif
