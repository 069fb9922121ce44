/*  kfctl_progress.h - what kfctl says of a run's progress (watch, submit
 *  --wait, runs, show, status): the phase (generation g/G or tuning round
 *  r/R), candidates done of the total and in flight, the best so far and
 *  a better figure still pending verification, the time since submission
 *  and an estimate of what remains. The counting rules live here, so they
 *  are one set and unit tested (tests/unit/test_progress.c).
 */
#ifndef KFCTL_PROGRESS_H
#define KFCTL_PROGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Candidates that must have finished before an estimate is shown. */
#define KF_CTL_ESTIMATE_MIN 3

/* Progress of one run, from SHOW replies and events. */
typedef struct {
    long long run_id;
    long long done, total, in_flight;
    long long generation, generations;   /* generation is 0-based */
    long long tuning_round, tuning_rounds; /* round 1-based; 0: main phase */
    double best;                         /* valid when has_best */
    bool has_best;
    double pending;                      /* valid when has_pending */
    bool has_pending;
    double elapsed_s;                    /* < 0: unknown */
    char status[16];                     /* running, done, ... */
} kf_ctl_progress_t;

/* PROGRESS for RUN_ID, nothing known yet. */
void kf_ctl_progress_init (kf_ctl_progress_t *progress, long long run_id);
/* Updates PROGRESS from a run object (borrowed). Counts never go back:
 * done keeps its largest value, the total is never below done, and the
 * phase never moves from tuning back to the generations. */
void kf_ctl_progress_from_run (kf_ctl_progress_t *progress, json_t *run);
/* Updates PROGRESS from an EVENT body (borrowed): the best and the status
 * only; the counts come from SHOW, which events cannot count twice. */
void kf_ctl_progress_from_event (kf_ctl_progress_t *progress, json_t *event);
/* The phase in words: "generation 2/3" or "tuning round 1/2" (never past
 * the last). */
void kf_ctl_phase_text (const kf_ctl_progress_t *progress, char *buf, size_t size);
/* Seconds left, estimated from the mean time per finished candidate;
 * < 0 when there is none to give (run not running, fewer than
 * KF_CTL_ESTIMATE_MIN done, or nothing left). */
double kf_ctl_progress_estimate (const kf_ctl_progress_t *progress);
/* "1h02m", "3m05s", "42s". */
void kf_ctl_duration_text (double seconds, char *buf, size_t size);
/* One line, no newline: "run 4 [######------] 6/12 done, 2 in flight
 * generation 2/3  best 1.85x  elapsed 40s, about 40s left (estimate)
 * running". */
void kf_ctl_progress_line (const kf_ctl_progress_t *progress, char *buf, size_t size);

#endif
