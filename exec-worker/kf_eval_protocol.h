/*  kf_eval_protocol.h - the timing protocol of every judge (host, CUDA,
 *  OpenCL, Level Zero), written once above a small per-backend
 *  interface: "one sample of SIDE with CALLS calls".
 *
 *  The protocol (kf_eval_protocol.c) owns what the judges do alike: the
 *  floors (kf_eval_floors), the interleaved warm-up that tops up what
 *  the correctness pass's calls left of them (kf_eval_warm_more), the
 *  calls per sample for each side's target window, the trial sample
 *  that corrects that count, the paired, alternating samples until
 *  min_samples and min_time, the per-call arrays, the bookkeeping of the
 *  protocol as run, and which side a failure is blamed on. A backend
 *  gives one function that takes one sample on the judge's clock, doing
 *  there whatever its device needs around it (a cache flush, inputs of
 *  the sample's own, outputs poisoned before and checked after, an idle
 *  probe); its windows, its call caps, the fixed cost of a sample on
 *  each side, and whether a reference runs beside the candidate.
 *
 *  A backend that can tell how long a side's threads waited for a CPU
 *  over a sample (the host judge: run_delay, kf_host_wait.h) says so in
 *  the sample's wait_ns; such a sample is "disturbed" past
 *  kf_eval_disturbed's share of its time, and the figures are taken
 *  over the pairs in which neither side was (kf_eval_undisturbed). A
 *  backend that says nothing (CUDA, OpenCL, Level Zero) never marks one.
 */
#ifndef KF_EVAL_PROTOCOL_H
#define KF_EVAL_PROTOCOL_H

#include "kf_eval_check.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* A step's outcome, in the values every judge's enum shares
 * (KF_HOST_*, KF_CUDA_*, KF_DEV_*). A status from KF_EVAL_ST_HARNESS up
 * is the harness's or the loader's and is blamed on no side. */
enum { KF_EVAL_ST_OK = 0, KF_EVAL_ST_INCORRECT, KF_EVAL_ST_CRASHED, KF_EVAL_ST_REF_FAILED,
       KF_EVAL_ST_HARNESS };

/* The sides of a sample. */
enum { KF_EVAL_REF = 0, KF_EVAL_CAND = 1 };

/* Where a sample falls in the protocol. */
enum { KF_EVAL_WARMUP = -1, KF_EVAL_TRIAL = -2 };

/* The protocol as run, and its figures. */
typedef struct {
    double *ref_ns, *cand_ns;        /* per call, one entry per sample (kf_eval_timing_free) */
    int samples, ref_calls, cand_calls;
    double overhead_ns;              /* in: the fixed cost of a reference sample, */
    double cand_overhead_ns;         /*   and of a candidate's, subtracted from each */
    double warmup_s, topup_s, sampling_s, measured_s;
    int counted, topup;              /* warm-up calls per side: the correctness pass's, the top-up's */
    double cand_s;                   /* the candidate's timed samples added up, seconds */
    /* Waits for a CPU (kf_eval_sample_t's wait_ns), over the timed pairs: */
    unsigned char *disturbed;        /* per pair taken: 1 when either side was disturbed */
    int taken;                       /* pairs taken; SAMPLES those the figures use */
    int disturbed_n;                 /* of TAKEN, the disturbed */
    double wait_s, wall_s;           /* the sides' waits and the samples' time, added up */
    double cand_wait_s, cand_wall_s; /* the same of the candidate's samples alone */
    bool waits_known;                /* some sample's wait was measured */
    bool undisturbed_only;           /* the figures are over undisturbed pairs only */
} kf_eval_timing_t;

/* One sample, as the protocol asks for it and the backend answers. */
typedef struct {
    int side;                        /* KF_EVAL_REF or KF_EVAL_CAND */
    int calls;
    int sample;                      /* its number, or KF_EVAL_WARMUP / KF_EVAL_TRIAL */
    unsigned salt;                   /* for the backend's flush pattern */
    double ns;                       /* out: on the judge's clock, the fixed cost included */
    double wait_ns;                  /* out: the side's threads' wait for a CPU over the */
                                     /*   sample; below 0 (as set): not measured */
    char why[256];                   /* out: a failed reference's device error, or "" */
} kf_eval_sample_t;

/* A backend's side of the protocol. */
typedef struct {
    /* Takes sample S (its calls, side and number set) into S->ns;
     * T the protocol so far (call counts, samples). KF_EVAL_ST_OK, or a
     * status: a failed candidate sample leaves its account in DETAIL,
     * a failed reference sample may say its device's error in S->why. */
    int (*sample) (void *arg, const kf_eval_timing_t *t, kf_eval_sample_t *s);
    void *arg;
    bool paired;                     /* a reference is timed beside the candidate */
    bool trial;                      /* one trial sample per side corrects the count */
    double target_ns[2];             /* a sample's window, per side */
    int max_calls[2];                /* calls per sample at most, per side */
    int max_samples;
    bool undisturbed;                /* prefer undisturbed pairs (kf_eval_undisturbed), */
                                     /*   unless the timing's prefer_undisturbed is false */
    kf_eval_warm_t *warm;            /* the correctness pass's counted calls; NULL: none */
    int harness_st;                  /* the status of the protocol's own failure */
    char *detail;                    /* where a failure is said */
    size_t detail_size;
} kf_eval_timer_t;

/* Times as TIMING's floors say (kf_eval_floors) through P (its
 * "prefer_undisturbed": false turns P's preference off, for an ablation:
 * samples are marked all the same); T's
 * overhead_ns and cand_overhead_ns as the backend measured them, the
 * rest filled here. KF_EVAL_ST_OK, a failed candidate sample's status
 * (its account in the detail), KF_EVAL_ST_REF_FAILED ("reference failed
 * during timing[: WHY]"), a status from KF_EVAL_ST_HARNESS up as the
 * backend returned it, or P->harness_st with the detail. */
int kf_eval_time (const kf_eval_timer_t *p, json_t *timing, kf_eval_timing_t *t);

/* A sample whose side waited WAIT_NS for a CPU over WALL_NS is
 * disturbed past KF_EVAL_WAIT_SHARE of its time plus KF_EVAL_WAIT_FLOOR_NS
 * (a wake-up's latency; round 25: one kernel timed 5.6 and 13.4 ms in two
 * evaluations while other processes shared the 2 CPUs). WAIT_NS below 0
 * (not measured): never. */
#define KF_EVAL_WAIT_SHARE 0.02
#define KF_EVAL_WAIT_FLOOR_NS 50e3
bool kf_eval_disturbed (double wait_ns, double wall_ns);

/* Past the floors, samples go on until MIN_SAMPLES pairs are undisturbed,
 * for at most this share of the measured time the floors took again
 * (1: the sampling at most doubles), never past max_samples, and not at
 * all when every pair so far was disturbed (a host busy all along). */
#define KF_EVAL_EXTRA_SHARE 1.0

/* The selection rule, on T's TAKEN pairs and their DISTURBED marks: where
 * PREFER and at least MIN_SAMPLES pairs are undisturbed, T's per-call
 * arrays keep those alone (in order; SAMPLES their count) and
 * UNDISTURBED_ONLY is set; else every pair stays, and UNDISTURBED_ONLY
 * says whether none was disturbed. Pure. */
void kf_eval_undisturbed (kf_eval_timing_t *t, int min_samples, bool prefer);

/* Frees T's arrays. */
void kf_eval_timing_free (kf_eval_timing_t *t);

/* The "protocol" object of a result: warm-up, top-up, sampling and
 * measured time, the calls counted; where waits were measured also
 * "samples" (pairs taken), "samples_disturbed", "run_delay_share" (the
 * waits over the samples' time) and "undisturbed_only". Caller owns it. */
json_t *kf_eval_protocol_json (const kf_eval_timing_t *t);

#endif
