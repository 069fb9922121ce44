/*  kf_fidelity.h - multi-fidelity timing: every candidate is screened
 *  with a short protocol, and only the ones whose screen comes near the
 *  best are timed with the full protocol before they count.
 *
 *  Most candidates of a search are far slower than the run's best; timing
 *  each of them for seconds buys nothing. The first evaluate job of a
 *  candidate therefore runs the run's `screen_timing` (payload `fidelity`
 *  "screen"). A correct screen within `full_margin` of the cell's elite or
 *  the run's best (whichever is lower), in an empty cell, in a run with no
 *  best yet, or one the plausibility rules find suspicious, is made final
 *  with fidelity 'pending' (in the archive at its screen figure, counting
 *  for nothing, the run kept open) and evaluated again with the run's full
 *  timing and the same seed; its figures become the full ones ('full').
 *  Any other correct screen is final at fidelity 'screen': it may sit in
 *  the archive, but never counts towards the run's best or first-correct
 *  figures. A full result is then judged for plausibility (kf_verify.c) as
 *  any full evaluation is. docs/search.md and docs/evaluation.md
 *  ("Fidelity") say why. Every function runs inside the caller's
 *  transaction, like kf_search.c's.
 */
#ifndef KF_FIDELITY_H
#define KF_FIDELITY_H

#include "kf_search.h"
#include <stdbool.h>

/* The SQL condition of a candidate whose figures may count towards a
 * run's best: timed with the full protocol (NULL: evaluated before
 * fidelity existed, when every evaluation was the full one). */
#define KF_FIDELITY_COUNTS "(fidelity IS NULL OR fidelity = 'full')"

/* The screen protocol's floors where neither the built-in defaults
 * (coordinator/search-defaults.json) nor the run name one. */
#define KF_FIDELITY_SCREEN_MIN_TIME_S   0.1
#define KF_FIDELITY_SCREEN_MIN_SAMPLES  5
#define KF_FIDELITY_SCREEN_WARMUP_S     0.05
#define KF_FIDELITY_SCREEN_WARMUP_CALLS 3

/* ---- rules (pure; tests/unit/test_fidelity.c) --------------------------- */

/* Whether a correct SCREENED speedup is timed with the full protocol:
 * when the run has no counted best yet (BEST is NAN), the candidate's cell
 * is empty or it has none (ELITE is NAN), or SCREENED is at least MARGIN
 * times the lower of ELITE and BEST. Never for a speedup that is not > 0. */
bool kf_fidelity_wants_full (double screened, double elite, double best, double margin);

/* Round 38: a threaded kernel screened at 16.65x was timed at 24.71x in
 * full, its screen's calls waiting for a CPU beside other work (a screen
 * is too short to wait for undisturbed samples). What a screen's figure
 * may be under-read by: 1 / (1 - W), W its calls' waits for a CPU over
 * their time (WAIT_SHARE, summed over its threads; capped at
 * KF_FIDELITY_WAIT_CAP), where its figures are not over undisturbed
 * samples alone (UNDISTURBED); 1 where none waited or it is not known
 * (WAIT_SHARE < 0). The screen is set against the bar at its figure
 * times this: one the waits alone may have put below it is timed in full. */
#define KF_FIDELITY_WAIT_CAP 0.5
double kf_fidelity_wait_allowance (double wait_share, bool undisturbed);

/* The screen protocol of a run whose evaluate jobs' full timing is FULL
 * (members it leaves out are the exec worker's defaults: 1 s, 10 samples,
 * 1 s, 10 calls) and whose screen_timing is SCREEN (members it leaves out
 * are the KF_FIDELITY_SCREEN_* above): each floor the lower of the two, so
 * a screen is never longer than the full protocol. Returns it (caller's),
 * or NULL when it is shorter than FULL in no floor: then there is nothing
 * to screen with, and the first evaluation is the full one. */
json_t *kf_fidelity_screen_timing (json_t *screen, json_t *full);

/* Checks a screen_timing value V (an object of min_time_s, min_samples,
 * warmup_s, warmup_calls, each optional, within the coordinator's eval_*
 * bounds). Returns 0, or -1 with *WHY (caller frees) naming WHERE and KEY. */
int kf_fidelity_timing_check (json_t *v, const char *where, const char *key, char **why);

/* Round 39: tuned points that won their screens fell far when timed in
 * full (59.95x to 25.59x, 66.07x to 35.30x) while the runner-up went
 * untimed. The points a screened sweep's full-protocol job takes: of
 * PAYLOAD_CONFIGS (the screen job's, each {params, frame}), those the
 * screen's table RESULT_CONFIGS found correct with a speedup, BEST (the
 * screen's best_config) first, then the rest by screened speedup, at most
 * N; each a copy of its payload config. Returns the array (caller's),
 * empty where BEST is not among them. The exec worker screens them and
 * times them in full (its sweep_full_configs), and the faster counts. */
#define KF_FIDELITY_FULL_POINTS 2
json_t *kf_fidelity_full_points (json_t *payload_configs, json_t *result_configs, json_t *best,
                                 int n);

/* The blobs (a text[] literal; caller frees) of a job that times POINTS
 * alone, each {params, frame} of job JOBID's payload: their artifacts as
 * frames 0, 1, ... (POINTS' frames renumbered so) and the run's reference
 * artifact REF (may be empty) after them. Where a point's artifact cannot
 * be read, POINTS is cut to those before it; NULL where none is left. */
char *kf_fidelity_points_blobs (kf_db_t *db, const char *jobid, json_t *points, const char *ref);

/* ---- the mechanism ------------------------------------------------------ */

/* A candidate's first evaluate job is about to be queued with PAYLOAD
 * (holding the run's full `timing`): when RUN screens, replaces the timing
 * with the screen protocol. Sets payload `fidelity` ("screen" or "full"),
 * which jobs.fidelity mirrors. Returns 0, or -1. */
int kf_fidelity_first_payload (kf_search_t *self, json_t *run, json_t *payload);

/* A correct result (SPEEDUP > 0) of the first evaluate JOB of CAND_ID,
 * before the candidate is made final: a screen near the best is marked
 * 'pending' and its full-protocol evaluation queued; any other screen is
 * 'screen'; a full result is 'full' and judged for plausibility
 * (kf_verify_check). Returns 0, or -1 on a database error. */
int kf_fidelity_check (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                       const kf_eval_result_t *result, double speedup);

/* An evaluate JOB of RUN completed with RESULT. Returns 1 when it is not
 * the full-protocol evaluation of a screened candidate (the caller goes
 * on); else records it, gives the candidate its full figures (or holds it
 * for audit when the full evaluation was not correct), lets the run go on:
 * 0, or -1 on a database error. */
int kf_fidelity_job_done (kf_search_t *self, json_t *run, json_t *job,
                          const kf_eval_result_t *result);

/* An evaluate JOB failed for good (REASON). Returns 1 when it is not a
 * full-protocol evaluation of a screened candidate; else the candidate is
 * held for audit at its screen figure: 0, or -1. */
int kf_fidelity_job_failed (kf_search_t *self, json_t *job, const char *reason);

/* CAND_ID of RUN_ID has a new figure: its archive cell is chosen again
 * among the cell's correct candidates at their figures now (a lowered
 * elite may no longer be the cell's fastest). 0, or -1. */
int kf_fidelity_recell (kf_search_t *self, int64_t run_id, int64_t cand_id);

#endif
