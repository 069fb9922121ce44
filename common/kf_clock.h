/*  kf_clock.h - the one clock for measuring how long something took.
 *
 *  CLOCK_MONOTONIC: it never steps when the wall clock is set, and its
 *  readings compare between processes of one host (the evaluation child
 *  stamps its phases on it and the worker reads them).
 */
#ifndef KF_CLOCK_H
#define KF_CLOCK_H

/* Seconds on CLOCK_MONOTONIC. */
double kf_clock_now (void);

#endif
