/*  kf_verify.h - a correct result too good to believe is evaluated again
 *  before it counts.
 *
 *  The coordinator judges every correct result itself, from the task and
 *  the figures (common/kf_plausible.c): it is suspicious when it beats the
 *  measured memory or compute ceiling of the worker that timed it, or its
 *  speedup is far beyond the run's distribution. A result that would be
 *  the run's new best goes the same way, suspected of nothing (the run's
 *  `confirm_best` switch): it is timed once more and counts at the lower
 *  figure, whatever the second timing says. The worker's own audit
 *  flag can only add suspicion, never remove it. A suspicious candidate is
 *  made final as 'correct' with verify_state 'pending' (it enters the
 *  archive, so the search explores from it, but does not count towards
 *  the run's figures), and a second evaluate job runs it with a fresh
 *  seed, the full protocol, on another exec worker where one is
 *  connected. That job decides: 'verified' (it counts) or 'failed' (held
 *  for `kfctl audit`, audit_reason saying what failed). Every state is in
 *  the database, so a restarted coordinator carries on. Every function
 *  runs inside the caller's transaction, like kf_search.c's.
 */
#ifndef KF_VERIFY_H
#define KF_VERIFY_H

#include "kf_search.h"

/* The SQL condition of a correct candidate that counts towards a run's
 * best and first-correct figures: timed with the full protocol (a screen
 * figure never counts, kf_fidelity.h), not held for audit (or accepted by
 * a person), and not waiting for its re-verification. */
#define KF_VERIFY_COUNTS \
    "((fidelity IS NULL OR fidelity = 'full')" \
    " AND ((audit_reason IS NULL AND verify_state IS DISTINCT FROM 'pending')" \
    "  OR audit_verdict = 'accepted'))"

/* Whether a correct RESULT of JOB (SPEEDUP) of CAND_ID of RUN is timed
 * again: past a ceiling of the worker that timed it, flagged by that
 * worker, far beyond the run's counted speedups, or (confirm_best) above
 * the best of them. Returns 1 with the
 * reason in REASON (SIZE bytes), 0 when it is not, -1 on a database
 * error. Changes nothing. */
int kf_verify_suspicious (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                          const kf_eval_result_t *result, double speedup, char *reason,
                          size_t size);

/* A correct full-protocol evaluation of CAND_ID of RUN (JOB: its evaluate
 * job row, with the worker; RESULT: the worker's result; SPEEDUP: its
 * figure): when the result is suspicious, marks the candidate pending and
 * queues its re-verification (a copy of JOB with a fresh seed). FINAL: the
 * candidate is final already (its full evaluation followed a screen,
 * kf_fidelity.c); else it is not yet. Returns 0 (whether or not it was
 * suspicious), -1 on a database error. */
int kf_verify_check (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                     const kf_eval_result_t *result, double speedup, bool final);

/* An evaluate JOB of RUN completed with RESULT. Returns 1 when it is not a
 * re-verification (the caller judges it as a first evaluation); else
 * decides the candidate, recomputes the run's figures and lets the run go
 * on (kf_search_begin): 0, or -1 on a database error. */
int kf_verify_job_done (kf_search_t *self, json_t *run, json_t *job,
                        const kf_eval_result_t *result);

/* An evaluate JOB failed for good (REASON). Returns 1 when it is not a
 * re-verification; else the candidate is held for audit: 0, or -1. */
int kf_verify_job_failed (kf_search_t *self, json_t *job, const char *reason);

/* --- What a second evaluation of a final candidate (a re-verification
 * here, a full-protocol timing after a screen in kf_fidelity.c) does
 * alike; each keeps its own SQL. */

/* The candidate of the second evaluation JOB, as SQL (one parameter: the
 * job's id when BY_JOB, else its candidate's) finds it: the row (the
 * caller's), or NULL with *RC 1 (not such a job) or -1 (a database
 * error). */
json_t *kf_verify_second_of (kf_search_t *self, json_t *job, const char *sql, bool by_job,
                             int *rc);

/* After a decision on a candidate of RUN_ID: the run's figures
 * recomputed, the event KIND with FIELDS (taken), and the run goes on
 * (kf_search_begin). 0, or -1 on a database error. */
int kf_verify_decided (kf_search_t *self, int64_t run_id, const char *kind, json_t *fields);

/* Whether any re-verification job of ROLE is queued. */
bool kf_verify_queued (kf_db_t *db, const char *role);

/* Leases up to LIMIT queued re-verification jobs of ROLE that a worker of
 * BACKENDS (a text[] literal) and ARCH can run to WORKER_ID: those whose
 * suspicious figure came from another worker, and, when ALONE (no other
 * connected worker of its kind could take them), its own as well. Returns
 * the leased rows as dispatch sends them ({id, lease, kind, payload,
 * blobs, worker}; caller's), or NULL on a database error. */
json_t *kf_verify_lease (kf_db_t *db, const char *role, const char *backends,
                         const char *arch, const char *worker_id, int limit, bool alone);

#endif
