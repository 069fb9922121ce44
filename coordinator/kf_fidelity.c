/*  kf_fidelity.c - a short screen for every candidate, the full protocol
 *  for the ones near the best (kf_fidelity.h; docs/search.md, "Fidelity",
 *  and docs/evaluation.md, "Fidelity").
 *
 *  The same mechanism as a re-verification (kf_verify.c): the state is a
 *  column of the candidate (fidelity: 'screen', 'pending', 'full'), the
 *  second evaluation is a job marked in its payload (jobs.fidelity
 *  mirrors payload.fidelity), and the candidate is made final at its
 *  first figure and kept open until the second one is in, so a
 *  coordinator restarted at any point carries on from the database.
 */
#include "kf_fidelity.h"
#include "kf_descriptor.h"
#include "kf_floors.h"
#include "kf_json.h"
#include "kf_log.h"
#include "kf_meta.h"
#include "kf_repeat.h"
#include "kf_search_int.h"
#include "kf_str.h"
#include "kf_tune.h"
#include "kf_verify.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* The floors of a timing object: the screen's default, the exec
 * worker's default where a full timing leaves one out
 * (exec-worker/kf_host_timing.c), and the coordinator's eval_* bounds. */
static const struct {
    const char *key;
    bool integer;
    double screen, worker, lo, hi;
} s_floors[] = {
    { "min_time_s", false, KF_FIDELITY_SCREEN_MIN_TIME_S, KF_FULL_MIN_TIME_S, 0.001, 600 },
    { "min_samples", true, KF_FIDELITY_SCREEN_MIN_SAMPLES, KF_FULL_MIN_SAMPLES, 1, 100000 },
    { "warmup_s", false, KF_FIDELITY_SCREEN_WARMUP_S, KF_FULL_WARMUP_S, 0, 600 },
    { "warmup_calls", true, KF_FIDELITY_SCREEN_WARMUP_CALLS, KF_FULL_WARMUP_CALLS, 0, 100000 },
};
#define S_N_FLOORS (sizeof s_floors / sizeof s_floors[0])

bool
kf_fidelity_wants_full (double screened, double elite, double best, double margin)
{
    if (!(screened > 0))
        return false;
    if (isnan (best) || isnan (elite))
        return true;   /* nothing counted yet, or a cell of its own */
    double bar = elite < best ? elite : best;
    return screened >= margin * bar;
}

double
kf_fidelity_wait_allowance (double wait_share, bool undisturbed)
{
    if (undisturbed || !(wait_share > 0))
        return 1;
    return 1 / (1 - fmin (wait_share, KF_FIDELITY_WAIT_CAP));
}

json_t *
kf_fidelity_screen_timing (json_t *screen, json_t *full)
{
    json_t *out = json_is_object (full) ? json_deep_copy (full) : json_object ();
    bool shorter = false;
    for (size_t k = 0; k < S_N_FLOORS; k++) {
        double f = kf_jnum (full, s_floors[k].key, s_floors[k].worker);
        double s = kf_jnum (screen, s_floors[k].key, s_floors[k].screen);
        double v = s < f ? s : f;
        shorter |= s < f;
        json_object_set_new (out, s_floors[k].key, s_floors[k].integer
                                                       ? json_integer ((json_int_t) v)
                                                       : json_real (v));
    }
    if (!shorter) {
        json_decref (out);
        return NULL;
    }
    return out;
}

int
kf_fidelity_timing_check (json_t *v, const char *where, const char *key, char **why)
{
    if (!json_is_object (v))
        return kf_fail (why, "%s%s must be an object {min_time_s, min_samples, warmup_s,"
                        " warmup_calls}", where, key);
    const char *name;
    json_t *m;
    json_object_foreach (v, name, m) {
        size_t k = 0;
        while (k < S_N_FLOORS && strcmp (s_floors[k].key, name))
            k++;
        if (k == S_N_FLOORS)
            return kf_fail (why, "%s%s.%s: unknown member (min_time_s, min_samples,"
                            " warmup_s, warmup_calls)", where, key, name);
        bool typed = s_floors[k].integer ? json_is_integer (m) : json_is_number (m);
        if (!typed || json_number_value (m) < s_floors[k].lo
            || json_number_value (m) > s_floors[k].hi)
            return kf_fail (why, "%s%s.%s must be %s in [%g, %g]", where, key, name,
                            s_floors[k].integer ? "an integer" : "a number", s_floors[k].lo,
                            s_floors[k].hi);
    }
    return 0;
}

/* ---- settings and the archive ------------------------------------------- */

/* A run's value of KEY: its config's, else the default in force. */
static json_t *
s_setting (kf_search_t *self, json_t *run, const char *key)
{
    json_t *v = json_object_get (json_object_get (run, "config"), key);
    return v ? v : kf_search_default (self, key);
}

/* The run's full timing (borrowed): its config's, else the coordinator's
 * eval_* settings, as the first evaluate job's payload has always had. */
static json_t *
s_full_timing (kf_search_t *self, json_t *run)
{
    json_t *timing = json_object_get (json_object_get (run, "config"), "timing");
    return timing ? timing : self->timing;
}

/* The binned cell of COORDS ("{m,a,s}") with BINS per dimension, as
 * archive_cells holds it, into CELL; false when there are no coords. */
static bool
s_cell (json_t *coords, int bins, char *cell, size_t size)
{
    int m, a, y;
    if (!json_is_string (coords)
        || sscanf (json_string_value (coords), "{%d,%d,%d}", &m, &a, &y) != 3)
        return false;
    snprintf (cell, size, "{%d,%d,%d}", kf_descriptor_bin (m, bins), kf_descriptor_bin (a, bins),
              kf_descriptor_bin (y, bins));
    return true;
}

/* What a screen of CAND_ID is measured against: the speedup of the elite
 * of its cell (*ELITE; NAN when the cell is empty or it has no coords)
 * and the run's best counted speedup (*BEST; NAN when none). */
static int
s_bar (kf_search_t *self, int64_t cand_id, double *elite, double *best)
{
    *elite = *best = NAN;
    char cand[24];
    const char *p[1] = { S_I64 (cand, cand_id) };
    json_t *row = kf_db_row (self->db,
                             "SELECT c.run_id, c.coords::text AS coords, r.best_speedup,"
                             " coalesce((r.config->>'archive_bins')::int, 4) AS bins"
                             " FROM candidates c JOIN runs r ON r.id = c.run_id WHERE c.id = $1",
                             1, p, NULL);
    if (!row)
        return -1;
    if (json_is_number (json_object_get (row, "best_speedup")))
        *best = json_number_value (json_object_get (row, "best_speedup"));
    char run[24], cell[48];
    S_I64 (run, kf_jint (row, "run_id"));
    bool has_cell = s_cell (json_object_get (row, "coords"), (int) kf_jint (row, "bins"), cell,
                            sizeof cell);
    json_decref (row);
    if (!has_cell)
        return 0;
    const char *cp[3] = { run, cell, cand };
    bool failed = false;
    row = kf_db_row (self->db,
                     "SELECT speedup FROM archive_cells WHERE run_id = $1 AND cell = $2::int[]"
                     " AND candidate_id <> $3",
                     3, cp, &failed);
    if (failed)
        return -1;
    if (json_is_number (json_object_get (row, "speedup")))
        *elite = json_number_value (json_object_get (row, "speedup"));
    json_decref (row);
    return 0;
}

/* The cell of CAND_ID decided again from its candidates' figures, now
 * that its own changed from the screen's to the full protocol's: its
 * elite may have been displaced by a screen figure that did not hold, or
 * the candidate may win a cell its screen lost. Round 45: and every other
 * cell it holds, taken under coordinates it has since left (a tuned
 * candidate takes its winning point's: kf_search_tuned_coords), at a
 * figure it no longer has: candidate 16 held {2,1,2} at 143.27x beside
 * {2,1,3} at the 139.43x that counts. */
int
kf_fidelity_recell (kf_search_t *self, int64_t run_id, int64_t cand_id)
{
    char run[24];
    const char *p[1] = { S_I64 (run, run_id) };
    json_t *rows = kf_db_query (self->db,
                                "SELECT c.id, c.coords::text AS coords, c.speedup, c.fitness,"
                                " coalesce((r.config->>'archive_bins')::int, 4) AS bins"
                                " FROM candidates c JOIN runs r ON r.id = c.run_id"
                                " WHERE c.run_id = $1 AND c.status = 'correct' AND c.speedup > 0"
                                " AND c.coords IS NOT NULL"
                                " AND c.audit_verdict IS DISTINCT FROM 'rejected' ORDER BY c.id",
                                1, p);
    if (!rows)
        return -1;
    char mine[48] = "", cell[48];
    size_t i;
    json_t *c;
    json_array_foreach (rows, i, c)
        if (kf_jint (c, "id") == cand_id)
            s_cell (json_object_get (c, "coords"), (int) kf_jint (c, "bins"), mine, sizeof mine);
    int rc = 0;
    char cand[24];
    const char *dp[3] = { run, mine, S_I64 (cand, cand_id) };
    json_t *gone = *mine ? kf_db_query (self->db, "DELETE FROM archive_cells WHERE run_id = $1"
                                                  " AND (cell = $2::int[] OR candidate_id = $3)"
                                                  " RETURNING cell::text AS cell", 3, dp)
                         : NULL;
    if (*mine && !gone)
        rc = -1;
    json_array_foreach (rows, i, c) {
        if (rc || !*mine || !s_cell (json_object_get (c, "coords"), (int) kf_jint (c, "bins"),
                                     cell, sizeof cell))
            continue;
        //  Every cell emptied above is decided again from its candidates.
        bool freed = !strcmp (cell, mine);
        size_t g;
        json_t *cell_row;
        json_array_foreach (gone, g, cell_row)
            freed |= !strcmp (kf_jstr (cell_row, "cell"), cell);
        if (!freed)
            continue;
        char sp[40], fit[40];
        snprintf (sp, sizeof sp, "%.17g", json_number_value (json_object_get (c, "speedup")));
        snprintf (fit, sizeof fit, "%.17g", json_number_value (json_object_get (c, "fitness")));
        rc = kf_search_archive_offer (self, run_id, kf_jint (c, "id"), sp, fit);
    }
    json_decref (gone);
    json_decref (rows);
    return rc;
}

/* ---- the screen --------------------------------------------------------- */

int
kf_fidelity_first_payload (kf_search_t *self, json_t *run, json_t *payload)
{
    json_t *screen = NULL;
    if (json_is_true (s_setting (self, run, "screening"))) {
        /* A run's screen_timing names the members it changes; the rest
         * are the defaults' (kf_search.c fills a run's missing keys in at
         * its start, so a run without one has the default whole). */
        json_t *want = json_object ();
        json_t *dflt = kf_search_default (self, "screen_timing");
        json_t *own = json_object_get (json_object_get (run, "config"), "screen_timing");
        if (json_is_object (dflt))
            json_object_update (want, dflt);
        if (json_is_object (own))
            json_object_update (want, own);
        screen = kf_fidelity_screen_timing (want, json_object_get (payload, "timing"));
        json_decref (want);
    }
    if (screen)
        json_object_set_new (payload, "timing", screen);
    json_object_set_new (payload, "fidelity", json_string (screen ? "screen" : "full"));
    return 0;
}

//  The payload config of PARAMS among CONFIGS, or NULL.
static json_t *
s_config_of (json_t *configs, json_t *params)
{
    size_t i;
    json_t *c;
    json_array_foreach (configs, i, c)
        if (json_equal (json_object_get (c, "params"), params))
            return c;
    return NULL;
}

json_t *
kf_fidelity_full_points (json_t *payload_configs, json_t *result_configs, json_t *best, int n)
{
    json_t *out = json_array ();
    json_t *first = best ? s_config_of (payload_configs, best) : NULL;
    if (!out || !first || n < 1)
        return out;
    json_array_append_new (out, json_deep_copy (first));
    //  The others by screened speedup, highest first (a table of at most
    //  16 rows: picked one at a time).
    while ((int) json_array_size (out) < n) {
        json_t *next = NULL;
        double top = 0;
        size_t i;
        json_t *r;
        json_array_foreach (result_configs, i, r) {
            json_t *c = s_config_of (payload_configs, json_object_get (r, "params"));
            double sp = kf_jnum (r, "speedup", 0);
            if (c && !strcmp (kf_jstr (r, "verdict"), "correct") && sp > top
                && !s_config_of (out, json_object_get (c, "params"))) {
                next = c;
                top = sp;
            }
        }
        if (!next)
            break;
        json_array_append_new (out, json_deep_copy (next));
    }
    return out;
}

char *
kf_fidelity_points_blobs (kf_db_t *db, const char *jobid, json_t *points, const char *ref)
{
    char *hashes = strdup ("");
    size_t i = 0;
    while (hashes && i < json_array_size (points)) {
        json_t *c = json_array_get (points, i);
        char frame[24];
        const char *fp[2] = { jobid, S_I64 (frame, kf_jint (c, "frame")) };
        json_t *hash = kf_db_row (db, "SELECT blobs[$2::int + 1] AS h FROM jobs WHERE id = $1",
                                  2, fp, NULL);
        char *more = *kf_jstr (hash, "h")
                     ? kf_strdupf ("%s%s%s", hashes, *hashes ? "," : "", kf_jstr (hash, "h"))
                     : NULL;
        json_decref (hash);
        if (!more)
            break;      //  the points before it go
        free (hashes);
        hashes = more;
        json_object_set_new (c, "frame", json_integer ((json_int_t) i++));
    }
    while (json_array_size (points) > i)
        json_array_remove (points, i);
    char *blobs = hashes && *hashes
                  ? kf_strdupf ("{%s%s%s}", hashes, ref && *ref ? "," : "", ref ? ref : "")
                  : NULL;
    free (hashes);
    return blobs;
}

/* Queues the full-protocol evaluation of CAND_ID of RUN after its screen
 * JOB gave RESULT: the screen's payload (task, seed, reference data) with
 * the run's full timing; for a swept candidate, only the config the screen
 * chose (its artifact and the reference), since the sweep is done. */
static int
s_queue_full (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
              const kf_eval_result_t *result)
{
    char jobid[24];
    const char *p[1] = { S_I64 (jobid, kf_jint (job, "id")) };
    json_t *row = kf_db_row (self->db,
                             "SELECT backend, arch, payload, blobs::text AS blobs FROM jobs"
                             " WHERE id = $1",
                             1, p, NULL);
    if (!row)
        return -1;
    json_t *payload = json_deep_copy (json_object_get (row, "payload"));
    if (s_full_timing (self, run))
        json_object_set (payload, "timing", s_full_timing (self, run));
    else
        json_object_del (payload, "timing");   /* the exec worker's own defaults */
    json_object_set_new (payload, "fidelity", json_string ("full"));
    char *blobs = strdup (kf_jstr (row, "blobs"));
    //  The points to time in full, their artifacts as frames 0, 1, ...
    //  and the reference after them; one point goes without a table.
    json_t *points = kf_fidelity_full_points (json_object_get (payload, "configs"),
                                              result->configs, result->best_config,
                                              KF_FIDELITY_FULL_POINTS);
    char *own = kf_fidelity_points_blobs (self->db, jobid, points, kf_jstr (run, "ref_artifact"));
    if (own) {
        free (blobs);
        blobs = own;
        if (json_array_size (points) > 1)
            json_object_set (payload, "configs", points);
        else
            json_object_del (payload, "configs");
    }
    json_decref (points);
    int rc = kf_search_insert_job (self, kf_jint (run, "id"), cand_id, "execute", "evaluate",
                                   kf_jstr (row, "backend"), kf_jstr (row, "arch"), payload,
                                   blobs);
    free (blobs);
    json_decref (row);
    return rc;
}

int
kf_fidelity_check (kf_search_t *self, json_t *run, json_t *job, int64_t cand_id,
                   const kf_eval_result_t *result, double speedup)
{
    char jobid[24], cand[24];
    S_I64 (cand, cand_id);
    const char *jp[1] = { S_I64 (jobid, kf_jint (job, "id")) };
    json_t *row = kf_db_row (self->db, "SELECT fidelity FROM jobs WHERE id = $1", 1, jp, NULL);
    if (!row)
        return -1;
    /* A screen job, or a sweep that could time none of its configs in
     * full (its result's fidelity, exec-worker/kf_sweep.c). */
    bool screen = !strcmp (kf_jstr (row, "fidelity"), "screen")
                  || !strcmp (result->fidelity, "screen");
    json_decref (row);
    const char *cp[1] = { cand };
    if (!screen) {
        /* The full protocol at once (screening off, or a screen that
         * would be no shorter): judged for plausibility as it is. */
        if (kf_db_exec (self->db, "UPDATE candidates SET fidelity = 'full'"
                                  " WHERE id = $1 AND finished_at IS NULL", 1, cp) < 0)
            return -1;
        return kf_verify_check (self, run, job, cand_id, result, speedup, false);
    }
    double elite, best;
    if (s_bar (self, cand_id, &elite, &best))
        return -1;
    double margin = json_number_value (s_setting (self, run, "full_margin"));
    char why[500] = "";
    double allow = kf_fidelity_wait_allowance (result->load_wait_share, result->load_undisturbed);
    if (kf_fidelity_wants_full (speedup, elite, best, margin)) {
        if (isnan (best))
            snprintf (why, sizeof why, "the run has no counted best yet");
        else if (isnan (elite))
            snprintf (why, sizeof why, "its cell is empty");
        else
            snprintf (why, sizeof why, "at least %.2f of %.2fx (%s)", margin,
                      elite < best ? elite : best, elite < best ? "its cell's elite"
                                                                : "the run's best");
    }
    else if (allow > 1 && kf_fidelity_wants_full (speedup * allow, elite, best, margin))
        snprintf (why, sizeof why, "its screen's calls waited for a CPU %.0f%% of their time, "
                  "so %.2fx may read as low as %.2fx: within %.2f of %.2fx (%s)",
                  100 * fmin (result->load_wait_share, KF_FIDELITY_WAIT_CAP), speedup * allow,
                  speedup, margin, elite < best ? elite : best,
                  elite < best ? "its cell's elite" : "the run's best");
    else {
        /* A screen too good to believe is timed in full first; that
         * figure is then judged, and re-verified if it must be. */
        char reason[400];
        int suspicious = kf_verify_suspicious (self, run, job, cand_id, result, speedup, reason,
                                               sizeof reason);
        if (suspicious < 0)
            return -1;
        if (suspicious)
            snprintf (why, sizeof why, "suspicious: %s", reason);
    }
    if (!*why)
        return kf_db_exec (self->db, "UPDATE candidates SET fidelity = 'screen'"
                                     " WHERE id = $1 AND finished_at IS NULL", 1, cp) < 0
                   ? -1 : 0;
    /* Pending before the candidate is made final, so the run's figures
     * never count its screen and the run cannot end while it waits. A
     * replay finds it final already and queues nothing twice. */
    char sp[40];
    snprintf (sp, sizeof sp, "%.17g", speedup);
    const char *pp[2] = { cand, sp };
    bool failed = false;
    row = kf_db_row (self->db,
                     "UPDATE candidates SET fidelity = 'pending', screen_speedup = $2"
                     " WHERE id = $1 AND finished_at IS NULL AND fidelity IS NULL RETURNING id",
                     2, pp, &failed);
    if (!row)
        return failed ? -1 : 0;
    json_decref (row);
    if (s_queue_full (self, run, job, cand_id, result))
        return -1;
    kf_debug ("run %lld candidate %s: screened %.2fx (%s); timing it with the full protocol",
              (long long) kf_jint (run, "id"), cand, speedup, why);
    kf_search_event (self, kf_jint (run, "id"), "fidelity",
                     json_pack ("{s:I, s:s, s:f, s:s}", "candidate_id", (json_int_t) cand_id,
                                "state", "pending", "screen_speedup", speedup, "why", why));
    return 0;
}

/* ---- the full protocol's verdict ---------------------------------------- */

/* The candidate of a full-protocol JOB that followed its screen:
 * {run_id, fidelity, screen_speedup}, or NULL with *RC 1 (not such a job)
 * or -1 (a database error). A candidate's first evaluation makes it
 * final; a full-protocol job of a final candidate that is not its
 * re-verification (kf_verify.c took those) is the one its screen asked
 * for. */
static json_t *
s_candidate (kf_search_t *self, json_t *job, int *rc)
{
    return kf_verify_second_of (self, job,
                                "SELECT c.run_id, c.fidelity, c.screen_speedup FROM jobs j"
                                " JOIN candidates c ON c.id = j.candidate_id WHERE j.id = $1"
                                " AND j.fidelity = 'full' AND c.finished_at IS NOT NULL",
                                true, rc);
}

/* The screen of CAND_ID (CAND: s_candidate's row) did not hold: WHAT
 * says why. Held for audit at its screen figure, which never counts. */
static int
s_hold (kf_search_t *self, json_t *cand, int64_t cand_id, const char *worker,
        const char *what)
{
    char id[24], audit[900], detail[700];
    double screened = json_number_value (json_object_get (cand, "screen_speedup"));
    snprintf (audit, sizeof audit, "its screen (%.2fx) was not confirmed: the full-protocol"
              " evaluation%s%.100s %.600s", screened, *worker ? " on " : "", worker, what);
    snprintf (detail, sizeof detail, "; held for audit: the full-protocol evaluation %.600s",
              what);
    const char *p[3] = { S_I64 (id, cand_id), audit, detail };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET fidelity = 'screen', audit_reason = $2,"
                             " verdict_detail = coalesce(verdict_detail, '') || $3"
                             " WHERE id = $1 AND fidelity = 'pending' RETURNING run_id",
                             3, p, &failed);
    if (!row)
        return failed ? -1 : 0;
    int64_t run_id = kf_jint (row, "run_id");
    json_decref (row);
    kf_warn ("run %lld candidate %lld held for audit: %s", (long long) run_id,
             (long long) cand_id, audit);
    return kf_verify_decided (self, run_id, "fidelity",
                              json_pack ("{s:I, s:s, s:f, s:s}", "candidate_id",
                                         (json_int_t) cand_id, "state", "failed",
                                         "screen_speedup", screened, "audit_reason", audit));
}

int
kf_fidelity_job_done (kf_search_t *self, json_t *run, json_t *job,
                      const kf_eval_result_t *result)
{
    int rc;
    json_t *cand = s_candidate (self, job, &rc);
    if (!cand)
        return rc;
    int64_t cand_id = kf_jint (job, "candidate_id");
    const char *worker = kf_jstr (job, "worker");
    bool pending = !strcmp (kf_jstr (cand, "fidelity"), "pending");
    if (!pending || kf_search_record_evaluation (self, job, cand_id, result)) {
        json_decref (cand);
        return pending ? -1 : 0;   /* not pending: decided before, nothing twice */
    }
    const char *verdict = result->verdict;
    double full = result->speedup;
    if (strcmp (verdict, "correct") || !(full > 0)) {
        char what[600];
        snprintf (what, sizeof what, "was not correct: %.40s: %.450s",
                  verdict, result->detail);
        rc = s_hold (self, cand, cand_id, worker, what);
        json_decref (cand);
        return rc;
    }
    double screened = json_number_value (json_object_get (cand, "screen_speedup"));
    int64_t run_id = kf_jint (cand, "run_id");
    json_decref (cand);
    char id[24], sp[40], fit[40], detail[600], point[400] = "";
    snprintf (sp, sizeof sp, "%.17g", full);
    snprintf (fit, sizeof fit, "%.17g", kf_search_fitness ("correct", full));
    //  Round 42: where the full job timed the screen's best points
    //  (kf_fidelity_full_points), the one that counts may not be the
    //  screen's winner: its point is named, and its coordinates taken.
    if (result->n_configs > 1 && result->best_config) {
        char label[300];
        snprintf (point, sizeof point, " at %s, the faster of the screen's best %zu timed in "
                  "full", kf_tune_params_label (result->best_config, label, sizeof label),
                  result->n_configs);
    }
    snprintf (detail, sizeof detail, "; full protocol%s%.100s: %.2fx%s (screen %.2fx)",
              *worker ? " on " : "", worker, full, point, screened);
    const char *p[4] = { S_I64 (id, cand_id), sp, fit, detail };
    bool failed = false;
    json_t *row = kf_db_row (self->db,
                             "UPDATE candidates SET fidelity = 'full', speedup = $2, fitness = $3,"
                             " verdict_detail = coalesce(verdict_detail, '') || $4"
                             " WHERE id = $1 AND fidelity = 'pending' RETURNING id",
                             4, p, &failed);
    if (!row)
        return failed ? -1 : 0;
    json_decref (row);
    /* The move from its parent is recorded at the figure that stands. */
    const char *tp[2] = { id, fit };
    if (kf_db_exec (self->db, "UPDATE transitions SET child_fitness = $2 WHERE child_id = $1",
                    2, tp) < 0
        /* The figure, and maybe the run's best, moved; a meta round that
         * waited for it may go now (kf_meta_waits). */
        || kf_meta_after_candidate (self, run_id, cand_id)
        || kf_repeat_follow (self, cand_id)
        || (*point && kf_search_tuned_coords (self, cand_id, result))
        || kf_fidelity_recell (self, run_id, cand_id)
        /* A full figure is judged like any other: suspicious, it is
         * re-verified before it counts. */
        || kf_verify_check (self, run, job, cand_id, result, full, true))
        return -1;
    kf_debug ("run %lld candidate %lld: full protocol %.2fx (screen %.2fx)", (long long) run_id,
              (long long) cand_id, full, screened);
    return kf_verify_decided (self, run_id, "fidelity",
                              json_pack ("{s:I, s:s, s:f, s:f}", "candidate_id",
                                         (json_int_t) cand_id, "state", "full", "speedup", full,
                                         "screen_speedup", screened));
}

int
kf_fidelity_job_failed (kf_search_t *self, json_t *job, const char *reason)
{
    int rc;
    json_t *cand = s_candidate (self, job, &rc);
    if (!cand)
        return rc;
    char what[600];
    snprintf (what, sizeof what, "failed: %.500s", reason);
    rc = s_hold (self, cand, kf_jint (job, "candidate_id"), "", what);
    json_decref (cand);
    return rc;
}
