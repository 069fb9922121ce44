/*  kf_verify.c - plausibility by physics, then re-verification
 *  (kf_verify.h; docs/evaluation.md, "Plausibility and re-verification").
 *
 *  The worker's result is the worker's word; what the coordinator stores
 *  as a flag it computes here from figures it can check: the bytes and
 *  work of one call from the task itself, the candidate's median from the
 *  result, the ceilings from the worker's HELLO (what it measured once at
 *  start-up, before any candidate ran), the result's only where the HELLO
 *  has none. A suspicious result is not held for a person but evaluated
 *  again; only what fails that waits for `kfctl audit`.
 */
#include "kf_verify.h"
#include "kf_fidelity.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_meta.h"
#include "kf_plausible.h"
#include "kf_repeat.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* The figures of RESULT, timed by WORKER for RUN, as the coordinator
 * reads them. Returns 0, or -1 on a database error. */
static int
s_figures (kf_search_t *self, json_t *run, const char *worker, const kf_eval_result_t *result,
           kf_plausible_figures_t *f)
{
    json_t *spec = json_object_get (run, "spec");
    memset (f, 0, sizeof *f);
    /* The task's own bytes and work: a result cannot shrink them. */
    f->bytes = kf_plausible_task_bytes (spec);
    f->read_bytes = kf_plausible_task_read_bytes (spec);
    if (!(f->bytes > 0)) {
        f->bytes = result->bytes;
        f->read_bytes = 0;
    }
    f->flops = kf_plausible_task_flops (spec);
    if (!(f->flops > 0))
        f->flops = result->flops;
    f->cand_ns = result->candidate.median_ns;
    json_t *row = NULL;
    if (*worker) {
        const char *p[1] = { worker };
        bool failed = false;
        row = kf_db_row (self->db,
                         "SELECT capabilities->'devices'->0 AS dev FROM workers WHERE id = $1",
                         1, p, &failed);
        if (failed)
            return -1;
    }
    json_t *dev = json_object_get (row, "dev");
    f->copy_gbs = kf_jnum (dev, "copy_bandwidth_gbs", 0);
    if (!(f->copy_gbs > 0))
        f->copy_gbs = result->copy_gbs;
    f->read_gbs = kf_jnum (dev, "read_cold_all_cores_gbs", 0);
    f->stream_gbs = fmax (kf_jnum (dev, "copy_stream_one_core_gbs", 0),
                          kf_jnum (dev, "copy_stream_all_cores_gbs", 0));
    f->write_gbs = kf_jnum (dev, "write_stream_all_cores_gbs", 0);
    f->peak_gflops = kf_jnum (dev, "peak_gflops", 0);
    if (!(f->peak_gflops > 0))
        f->peak_gflops = result->peak_gflops;
    /* The copy bandwidth binds only on data the cache cannot hold between
     * calls: a GPU's L2 (CUDA) or its largest cache (Level Zero) from the
     * HELLO; the host names no cache size there, so the worker's own
     * judgement (its last-level cache) stands. */
    double cache = kf_jnum (dev, "l2_bytes", 0);
    if (!(cache > 0))
        cache = kf_jnum (dev, "cache_bytes", 0);
    f->bw_applies = cache > 0 ? f->bytes > cache : result->roofline_applies;
    f->ceilings_busy = json_is_true (json_object_get (dev, "figures_measured_busy"));
    json_decref (row);
    return 0;
}

/* A seed of its own for the re-verification, from the first one (a
 * splitmix64 step, kept to the 48 bits seeds travel in): other input
 * sets, the same for every replay. */
static int64_t
s_fresh_seed (int64_t seed)
{
    uint64_t z = (uint64_t) seed + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    int64_t fresh = (int64_t) (z & 0xffffffffffffULL);
    return fresh == seed ? (fresh + 1) & 0xffffffffffffLL : fresh;
}

/* Whether RUN times a would-be new best once more (its `confirm_best`
 * switch, else the default in force). */
static bool
s_confirms (kf_search_t *self, json_t *run)
{
    json_t *v = json_object_get (json_object_get (run, "config"), "confirm_best");
    return json_is_true (v ? v : kf_search_default (self, "confirm_best"));
}

int
kf_verify_suspicious (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                      const kf_eval_result_t *result, double speedup, char *reason,
                      size_t size)
{
    const kf_plausible_rules_t *rules = &self->plausible;
    kf_plausible_figures_t f;
    if (s_figures (self, run, kf_jstr (job, "worker"), result, &f))
        return -1;
    char why[300], run_id[24], cand[24];
    S_I64 (run_id, kf_jint (run, "id"));
    S_I64 (cand, cand_id);
    reason[0] = 0;
    if (kf_plausible_ceiling (&f, rules->margin, why, sizeof why))
        snprintf (reason, size, "%s", why);
    else if (result->audit)
        /* The worker's flag adds suspicion; it never takes one away. */
        snprintf (reason, size, "the worker flagged it: %.300s", result->audit_reason);
    else {
        const char *p[2] = { run_id, cand };
        json_t *row = kf_db_row (self->db,
                                 "SELECT count(*) AS n, max(speedup) AS best FROM candidates"
                                 " WHERE run_id = $1 AND id <> $2 AND status = 'correct'"
                                 " AND speedup > 0 AND " KF_VERIFY_COUNTS,
                                 2, p, NULL);
        if (!row)
            return -1;
        double best = kf_jnum (row, "best", 0);
        long n = (long) kf_jint (row, "n");
        if (kf_plausible_outlier (speedup, best, n, rules, why, sizeof why)
            || (s_confirms (self, run)
                && kf_plausible_new_best (speedup, best, n, why, sizeof why)))
            snprintf (reason, size, "%s", why);
        json_decref (row);
    }
    return *reason ? 1 : 0;
}

/* Queues the evaluate job JOBID once more: the same job (task, timing,
 * tuning configs, reference data, artifacts), a fresh seed from its own
 * (into SEED, 24 bytes), and the worker to stay clear of (dispatch,
 * kf_verify_lease): the one the job itself stayed clear of, else the one
 * that ran it. Returns 0, or -1 on a database error. */
static int
s_again (kf_search_t *self, const char *jobid, char *seed)
{
    const char *jp[1] = { jobid };
    json_t *row = kf_db_row (self->db,
                             "SELECT j.payload, j.result->'best_config' AS best,"
                             " coalesce(r.ref_artifact, '') AS ref"
                             " FROM jobs j JOIN runs r ON r.id = j.run_id WHERE j.id = $1",
                             1, jp, NULL);
    if (!row)
        return -1;
    json_t *payload = json_deep_copy (json_object_get (row, "payload"));
    snprintf (seed, 24, "%lld", (long long) s_fresh_seed (kf_jint (payload, "seed")));
    json_object_set_new (payload, "seed", json_integer (atoll (seed)));
    //  Round 42: a swept job timed again swept again, the faster of its
    //  points counting each time: the point that counted is timed alone.
    char *blobs = NULL;
    json_t *best = json_object_get (row, "best");
    json_t *configs = json_object_get (payload, "configs");
    if (json_array_size (configs) > 1 && json_is_object (best)) {
        json_t *points = kf_fidelity_full_points (configs, NULL, best, 1);
        blobs = json_array_size (points) == 1
                ? kf_fidelity_points_blobs (self->db, jobid, points, kf_jstr (row, "ref"))
                : NULL;
        //  Kept as a table of one, so its evaluation names its point as
        //  every evaluation of a swept candidate does.
        if (blobs)
            json_object_set (payload, "configs", points);
        json_decref (points);
    }
    json_decref (row);
    char *text = json_dumps (payload, JSON_COMPACT);
    json_decref (payload);
    const char *ip[3] = { jobid, text, blobs };
    int rc = text ? kf_db_exec (self->db,
                                "INSERT INTO jobs (run_id, candidate_id, role, kind, backend,"
                                " arch, payload, blobs, max_attempts, lease_ms, avoid_worker)"
                                " SELECT run_id, candidate_id, role, kind, backend, arch,"
                                "  $2::jsonb, coalesce($3::text[], blobs), max_attempts,"
                                "  lease_ms, coalesce(avoid_worker, worker, '')"
                                " FROM jobs WHERE id = $1",
                                3, ip)
                  : -1;
    free (text);
    free (blobs);
    return rc == 1 ? 0 : -1;
}

int
kf_verify_check (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                 const kf_eval_result_t *result, double speedup, bool final)
{
    char reason[400];
    int suspicious = kf_verify_suspicious (self, run, job, cand_id, result, speedup, reason,
                                           sizeof reason);
    if (suspicious <= 0)
        return suspicious;
    char run_id[24], cand[24], jobid[24];
    S_I64 (run_id, kf_jint (run, "id"));
    S_I64 (cand, cand_id);
    S_I64 (jobid, kf_jint (job, "id"));
    /* Pending before the candidate is made final, so the run's figures
     * never count it and the run cannot end while it waits. A replay finds
     * the candidate final already (or, for a full-protocol result that
     * follows a screen, no longer waiting for it: kf_fidelity.c) and
     * queues nothing twice. */
    const char *p[2] = { cand, reason };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             final ? "UPDATE candidates SET verify_state = 'pending',"
                                     " verify_reason = $2"
                                     " WHERE id = $1 AND verify_state IS NULL RETURNING id"
                                   : "UPDATE candidates SET verify_state = 'pending',"
                                     " verify_reason = $2 WHERE id = $1"
                                     " AND finished_at IS NULL AND verify_state IS NULL"
                                     " RETURNING id",
                             2, p, &failed);
    if (!row)
        return failed ? -1 : 0;
    json_decref (row);
    char seed[24];
    if (s_again (self, jobid, seed))
        return -1;
    kf_info ("run %s candidate %s: %.2fx %s (%s); re-verifying with seed %s", run_id, cand,
             speedup, strncmp (reason, KF_PLAUSIBLE_CONFIRM, strlen (KF_PLAUSIBLE_CONFIRM))
                 ? "is suspicious" : "would be the run's best", reason, seed);
    kf_search_event (self, kf_jint (run, "id"), "verify",
                     json_pack ("{s:I, s:s, s:s, s:f}", "candidate_id", (json_int_t) cand_id,
                                "state", "pending", "reason", reason, "speedup", speedup));
    return 0;
}

json_t *
kf_verify_second_of (kf_search_t *self, json_t *job, const char *sql, bool by_job, int *rc)
{
    *rc = 1;
    int64_t cand_id = kf_jint (job, "candidate_id");
    if (!cand_id || strcmp (kf_jstr (job, "kind"), "evaluate"))
        return NULL;
    char id[24];
    const char *p[1] = { S_I64 (id, by_job ? kf_jint (job, "id") : cand_id) };
    bool failed = false;
    json_t *row = kf_db_row (self->db, sql, 1, p, &failed);
    if (failed)
        *rc = -1;
    return row;
}

int
kf_verify_decided (kf_search_t *self, int64_t run_id, const char *kind, json_t *fields)
{
    json_t *figures = kf_search_run_figures (self, run_id);
    if (!figures) {
        json_decref (fields);
        return -1;
    }
    json_decref (figures);
    kf_search_event (self, run_id, kind, fields);
    /* No longer open: the run may plan its next candidate, or end. */
    return kf_search_begin (self, run_id);
}

/* The candidate of a re-verification JOB: {run_id, verify_state,
 * verify_reason, speedup, verify_speedup, verify_worker, verify_figures,
 * first_check (its first re-verification job's id)}, or NULL with *RC 1
 * (not a re-verification) or -1 (a database error). A candidate's first evaluation makes it final;
 * an evaluate job of a final candidate that was found suspicious is its
 * re-verification. */
static json_t *
s_candidate (kf_search_t *self, json_t *job, int *rc)
{
    return kf_verify_second_of (self, job,
                                "SELECT run_id, verify_state, verify_reason, speedup,"
                                " verify_speedup, verify_worker, verify_figures,"
                                " (SELECT min(j.id) FROM jobs j"
                                "  WHERE j.candidate_id = c.id AND j.avoid_worker IS NOT NULL)"
                                "  AS first_check"
                                " FROM candidates c WHERE id = $1 AND finished_at IS NOT NULL"
                                " AND verify_state IS NOT NULL",
                                false, rc);
}

/* Decides the pending candidate CAND (s_candidate's row) of CAND_ID: it
 * HOLDS or not, WHAT says why not; AGAIN (NAN: none) the re-verified
 * speedup on WORKER, THIRD (NAN: none) a third timing's, and RESULT and
 * JOB the figures and job of the timing that counts where it is not the
 * first (both NULL when the job failed). */
static int
s_decide (kf_search_t *self, json_t *cand, int64_t cand_id, bool holds, double again,
          double third, const char *worker, json_t *job, const kf_eval_result_t *result,
          const char *what)
{
    if (strcmp (kf_jstr (cand, "verify_state"), "pending"))
        return 0;   /* decided before: a late duplicate */
    int64_t run_id = kf_jint (cand, "run_id");
    double first = kf_jnum (cand, "speedup", 0);
    /* What counts is the lower of the two figures: each was measured, and
     * the run reports only what held twice; of three, the middle one. */
    double counted = !holds ? first
                     : isfinite (third) ? kf_plausible_middle (first, again, third)
                     : again < first ? again : first;
    char id[24], sp[40], fit[40], vsp[40], tsp[40], detail[700], audit[1000];
    snprintf (sp, sizeof sp, "%.17g", counted);
    snprintf (fit, sizeof fit, "%.17g", kf_search_fitness ("correct", counted));
    snprintf (vsp, sizeof vsp, "%.17g", again);
    snprintf (tsp, sizeof tsp, "%.17g", third);
    if (holds && isfinite (third))
        snprintf (detail, sizeof detail, "; re-verified on %.100s: %.2fx, over %gx below"
                  " the first, so timed a third time: %.2fx (the middle figure of the three,"
                  " %.2fx, is the one that counts)", worker, again, KF_PLAUSIBLE_DISAGREE,
                  third, counted);
    else if (holds)
        /* Round 16: "re-verified ...: 399.53x" beside 368.50x left the
         * model asking which figure counts. */
        snprintf (detail, sizeof detail, "; re-verified on %.100s: %.2fx (the lower figure,"
                  " %.2fx, is the one that counts: of two timings the lower, of three the"
                  " middle)", worker, again, counted);
    else {
        snprintf (detail, sizeof detail, "; held for audit: the re-verification %.500s", what);
        snprintf (audit, sizeof audit, "%.400s; re-verification%s%.100s: %.450s",
                  kf_jstr (cand, "verify_reason"), *worker ? " on " : "", worker, what);
    }
    char *figures = result ? json_dumps (result->json, JSON_COMPACT) : NULL;
    const char *p[10] = { S_I64 (id, cand_id), holds ? "verified" : "failed",
                          isfinite (again) ? vsp : NULL, *worker ? worker : NULL, figures,
                          holds ? NULL : audit, sp, fit, detail,
                          isfinite (third) ? tsp : NULL };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET verify_state = $2, verify_speedup = $3,"
                             " verify_worker = $4,"
                             " verify_figures = coalesce($5::jsonb, verify_figures),"
                             " audit_reason = $6, speedup = $7, fitness = $8,"
                             " verdict_detail = coalesce(verdict_detail, '') || $9,"
                             " verify_third = $10::float8"
                             " WHERE id = $1 AND verify_state = 'pending' RETURNING run_id",
                             10, p, &failed);
    free (figures);
    if (!row)
        return failed ? -1 : 0;
    json_decref (row);
    /* A second timing that counts is the candidate's evaluation of
     * record: every reader of times (prompts, kfctl show, export) takes a
     * candidate's latest evaluation, so it is recorded as one, after the
     * first. One that does not count stays in verify_figures only. */
    if (counted < first && job && result
        && kf_search_record_evaluation (self, job, cand_id, result))
        return -1;
    /* Its cell is chosen again (a lowered elite may no longer be the
     * cell's fastest: test_netns), and its moves are recorded, at the
     * figure that counts. */
    const char *tp[2] = { id, fit };
    if (counted < first
        && (kf_repeat_follow (self, cand_id)
            || kf_fidelity_recell (self, run_id, cand_id)
            || kf_db_exec (self->db,
                           "UPDATE transitions SET"
                           " child_fitness = CASE WHEN child_id = $1 THEN $2::float8"
                           "  ELSE child_fitness END,"
                           " parent_fitness = CASE WHEN parent_id = $1 THEN $2::float8"
                           "  ELSE parent_fitness END"
                           " WHERE child_id = $1 OR parent_id = $1", 2, tp) < 0))
        return -1;
    /* Its prompt version's best figure too (round 16: v2 showed 395.17x,
     * a first figure that its re-verification brought to 365.57x). */
    if (counted < first && kf_meta_after_candidate (self, run_id, cand_id))
        return -1;
    if (holds)
        kf_info ("run %lld candidate %lld re-verified: %.2fx (first %.2fx)", (long long) run_id,
                 (long long) cand_id, again, first);
    else
        kf_warn ("run %lld candidate %lld held for audit: the re-verification %s",
                 (long long) run_id, (long long) cand_id, what);
    json_t *event = json_pack ("{s:I, s:s, s:f}", "candidate_id", (json_int_t) cand_id,
                               "state", holds ? "verified" : "failed", "speedup", counted);
    json_object_set_new (event, "verify_speedup", isfinite (again) ? json_real (again)
                                                                   : json_null ());
    if (!holds)
        json_object_set_new (event, "audit_reason", json_string (audit));
    return kf_verify_decided (self, run_id, "verify", event);
}

/* The second timing of CAND (s_candidate's row), stored while a third
 * was queued: its job as kf_search_record_evaluation reads one ({id,
 * worker}) into *JOB, its figures into *RESULT. Returns 0, or -1 where
 * they cannot be read (*JOB NULL, *RESULT holding nothing). */
static int
s_second (json_t *cand, json_t **job, kf_eval_result_t *result)
{
    char why[200];
    memset (result, 0, sizeof *result);
    *job = NULL;
    json_t *figures = json_object_get (cand, "verify_figures");
    if (!json_is_object (figures) || kf_eval_result_decode (figures, result, why, sizeof why))
        return -1;
    *job = json_pack ("{s:I, s:s}", "id", (json_int_t) kf_jint (cand, "first_check"), "worker",
                      kf_jstr (cand, "verify_worker"));
    return *job ? 0 : -1;
}

/* The second timing of a would-be best, AGAIN on WORKER (JOB, RESULT),
 * over KF_PLAUSIBLE_DISAGREE times below the first: stored with CAND
 * (s_candidate's row) of CAND_ID, which stays pending, and a third timing
 * queued. A replay finds the second stored and queues nothing. */
static int
s_third (kf_search_t *self, json_t *cand, int64_t cand_id, double again, const char *worker,
         json_t *job, const kf_eval_result_t *result)
{
    char id[24], vsp[40], jobid[24], seed[24];
    snprintf (vsp, sizeof vsp, "%.17g", again);
    char *figures = json_dumps (result->json, JSON_COMPACT);
    const char *p[4] = { S_I64 (id, cand_id), vsp, worker, figures };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET verify_speedup = $2, verify_worker = $3,"
                             " verify_figures = $4::jsonb WHERE id = $1"
                             " AND verify_state = 'pending' AND verify_speedup IS NULL"
                             " RETURNING run_id",
                             4, p, &failed);
    free (figures);
    if (!row)
        return failed ? -1 : 0;
    int64_t run_id = kf_jint (row, "run_id");
    json_decref (row);
    if (s_again (self, S_I64 (jobid, kf_jint (job, "id")), seed))
        return -1;
    double first = kf_jnum (cand, "speedup", 0);
    kf_info ("run %lld candidate %lld: timed %.2fx, then %.2fx, over %gx below; a third timing"
             " with seed %s decides", (long long) run_id, (long long) cand_id, first, again,
             KF_PLAUSIBLE_DISAGREE, seed);
    kf_search_event (self, run_id, "verify",
                     json_pack ("{s:I, s:s, s:f, s:f}", "candidate_id", (json_int_t) cand_id,
                                "state", "third", "speedup", first, "verify_speedup", again));
    return 0;
}

/* A third timing, AGAIN on WORKER (JOB, RESULT), of CAND (s_candidate's
 * row) of CAND_ID that HOLDS: the middle of the three counts, and the
 * evaluation of record is the timing that gave it. */
static int
s_decide_third (kf_search_t *self, json_t *cand, int64_t cand_id, bool holds, double again,
                const char *worker, json_t *job, const kf_eval_result_t *result,
                const char *what)
{
    double first = kf_jnum (cand, "speedup", 0), second = kf_jnum (cand, "verify_speedup", 0);
    double middle = kf_plausible_middle (first, second, again);
    if (!holds || middle != second || middle == again)
        return s_decide (self, cand, cand_id, holds, second, holds ? again : NAN, worker, job,
                         result, what);
    /* The second's figures, where they can be read (else the third's
     * stand for them: the figure that counts is the same). */
    json_t *second_job;
    kf_eval_result_t second_result;
    bool read = s_second (cand, &second_job, &second_result) == 0;
    int rc = s_decide (self, cand, cand_id, true, second, again, worker,
                       read ? second_job : job, read ? &second_result : result, what);
    json_decref (second_job);
    kf_eval_result_free (&second_result);
    return rc;
}

int
kf_verify_job_done (kf_search_t *self, json_t *run, json_t *job,
                    const kf_eval_result_t *result)
{
    int rc;
    json_t *cand = s_candidate (self, job, &rc);
    if (!cand)
        return rc;
    /* A second timing is stored: this job is the third, unless it is the
     * second's own job come again (a replay: nothing to do). */
    bool third = kf_jnum (cand, "verify_speedup", 0) > 0;
    if (third && kf_jint (job, "id") == kf_jint (cand, "first_check")) {
        json_decref (cand);
        return 0;
    }
    const char *worker = kf_jstr (job, "worker");
    const char *verdict = result->verdict;
    double again = result->speedup;
    double first = kf_jnum (cand, "speedup", 0);
    char what[600] = "";
    bool holds = false;
    if (strcmp (verdict, "correct") || !(again > 0))
        snprintf (what, sizeof what, "was not correct on fresh inputs: %.40s: %.450s",
                  verdict, result->detail);
    else {
        /* The ceilings bind the second figure as they did the first: a
         * rate past physics twice is a cheat that repeats itself, or a
         * ceiling or work count that is wrong; either way a person's
         * call. */
        kf_plausible_figures_t f;
        char why[300];
        if (s_figures (self, run, worker, result, &f)) {
            json_decref (cand);
            return -1;
        }
        if (kf_plausible_ceiling (&f, kf_plausible_margin_again (self->plausible.margin), why,
                                  sizeof why))
            snprintf (what, sizeof what, "%s", why);
        else if (!strncmp (kf_jstr (cand, "verify_reason"), KF_PLAUSIBLE_CONFIRM,
                           strlen (KF_PLAUSIBLE_CONFIRM))) {
            /* A confirmation suspected nothing: a slower second timing
             * is what it counts, not a reason to hold the kernel; one
             * far below the first asks for a third. */
            holds = true;
            if (!third && kf_plausible_disagree (first, again)) {
                rc = s_third (self, cand, kf_jint (job, "candidate_id"), again, worker, job,
                              result);
                json_decref (cand);
                return rc;
            }
        }
        else
            holds = kf_plausible_holds (first, again, self->plausible.tolerance, what,
                                        sizeof what);
    }
    int64_t cand_id = kf_jint (job, "candidate_id");
    rc = third ? s_decide_third (self, cand, cand_id, holds, again > 0 ? again : NAN, worker,
                                 job, result, what)
               : s_decide (self, cand, cand_id, holds, again > 0 ? again : NAN, NAN, worker,
                           job, result, what);
    json_decref (cand);
    return rc;
}

int
kf_verify_job_failed (kf_search_t *self, json_t *job, const char *reason)
{
    int rc;
    json_t *cand = s_candidate (self, job, &rc);
    if (!cand)
        return rc;
    char what[600];
    snprintf (what, sizeof what, "job failed: %.500s", reason);
    int64_t cand_id = kf_jint (job, "candidate_id");
    /* A third timing that failed: the two before it decide, as two do. */
    json_t *second_job = NULL;
    kf_eval_result_t second_result;
    if (kf_jnum (cand, "verify_speedup", 0) > 0
        && kf_jint (job, "id") != kf_jint (cand, "first_check")
        && s_second (cand, &second_job, &second_result) == 0) {
        rc = s_decide (self, cand, cand_id, true, kf_jnum (cand, "verify_speedup", 0), NAN,
                       kf_jstr (cand, "verify_worker"), second_job, &second_result, what);
        json_decref (second_job);
        kf_eval_result_free (&second_result);
    }
    else
        rc = s_decide (self, cand, cand_id, false, NAN, NAN, "", NULL, NULL, what);
    json_decref (cand);
    return rc;
}

bool
kf_verify_queued (kf_db_t *db, const char *role)
{
    const char *p[1] = { role };
    json_t *row = kf_db_row (db,
                             "SELECT EXISTS (SELECT 1 FROM jobs WHERE state = 'queued'"
                             " AND role = $1 AND avoid_worker IS NOT NULL) AS q",
                             1, p, NULL);
    bool queued = json_is_true (json_object_get (row, "q"));
    json_decref (row);
    return queued;
}

json_t *
kf_verify_lease (kf_db_t *db, const char *role, const char *backends, const char *arch,
                 const char *worker_id, int limit, bool alone)
{
    char lim[24];
    const char *p[6] = { role, backends, arch, worker_id, S_I64 (lim, limit),
                         alone ? "true" : "false" };
    return kf_db_query (db,
                        "WITH picked AS (SELECT id FROM jobs WHERE state = 'queued'"
                        "  AND role = $1 AND avoid_worker IS NOT NULL"
                        "  AND (backend IS NULL OR backend = ANY($2::text[]))"
                        "  AND (arch IS NULL OR arch = $3)"
                        "  AND (avoid_worker <> $4 OR $6::boolean)"
                        "  ORDER BY role, id LIMIT $5 FOR UPDATE SKIP LOCKED)"
                        " UPDATE jobs j SET state = 'leased', lease = j.lease + 1,"
                        " attempts = j.attempts + 1, worker = $4, updated_at = now(),"
                        " lease_deadline = now() + j.lease_ms * interval '1 millisecond'"
                        " FROM picked p WHERE j.id = p.id"
                        " RETURNING j.id, j.lease, j.kind, j.payload, j.blobs::text AS blobs,"
                        " j.worker",
                        6, p);
}
