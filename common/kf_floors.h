/*  kf_floors.h - the full timing protocol's floors where a run or a job
 *  names none (docs/evaluation.md, "Timing"): the coordinator's eval_*
 *  defaults, the exec worker's for a timing object that leaves one out,
 *  and the sweep's time estimate all take them from here.
 *
 *  On the H200 (docs/results-gpu.md, `make bench-eval-floors`), five
 *  evaluations of one kernel at 4096 x 4096 and 16384 x 4096 gave medians
 *  within 0.2-0.6% of each other with 0.1 s of warm-up as with 1 s, and
 *  within 0.5-0.6% with half a second of samples; a 7 us kernel's
 *  (1024 x 1024) spread 2-7% whatever the floors, up to 1 s and 1 s. So
 *  a tenth of a second of warm-up and half a second of samples, which
 *  lets one device judge about 55 candidates a minute at 1024 x 1024
 *  in full, where 1 s and 1 s allowed 24.
 */
#ifndef KF_FLOORS_H
#define KF_FLOORS_H

#define KF_FULL_MIN_TIME_S 0.5
#define KF_FULL_MIN_SAMPLES 10
#define KF_FULL_WARMUP_S 0.1
#define KF_FULL_WARMUP_CALLS 10

/* A floor as the text of a configuration default. */
#define KF_FLOOR_TEXT(x) KF_FLOOR_TEXT_ (x)
#define KF_FLOOR_TEXT_(x) #x

#endif
