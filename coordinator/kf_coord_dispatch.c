/*  kf_coord_dispatch.c - leasing queued jobs to the connected workers.
 *
 *  Workers alike (role, backends, arch, whether they can profile) form a
 *  group served by one statement in a savepoint of its own; re-verifications go first, to a
 *  worker other than the one in doubt. The JOB messages, each with its
 *  lease token, wait in the outbox until the pass's transaction commits,
 *  and are forgotten when it does not (the jobs are still queued then).
 */
#include "kf_coord_internal.h"
#include "kf_log.h"
#include "kf_pgarray.h"
#include "kf_verify.h"
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

/* A JOB leased in this pass, waiting for its commit. */
typedef struct {
    char *worker_id;
    int64_t job_id;
    kf_msg_t *msg;
} s_outbox_t;

/* Fetches the frames a job needs (sources, artifacts) into MSG. */
static int
s_attach_blobs (kf_coord_t *self, kf_msg_t *msg, json_t *blobs)
{
    /* blobs arrives as a text[] literal "{a,b}": hex hashes, no quoting. */
    const char *text = json_string_value (blobs);
    if (!text || *text != '{')
        return -1;
    char *buf = strdup (text + 1), *save = NULL;
    int rc = buf ? 0 : -1;
    for (char *h = buf ? strtok_r (buf, ",}", &save) : NULL; h && rc == 0;
         h = strtok_r (NULL, ",}", &save)) {
        void *data;
        size_t size;
        rc = kf_db_fetch_blob (self->db, "SELECT data FROM blobs WHERE hash = $1", h,
                               &data, &size);
        if (rc == 0) {
            kf_msg_add_frame (msg, data, size);
            free (data);
        }
    }
    free (buf);
    return rc;
}

/* The end of both lease statements: PICKED (id, rn) leased to the rn-th
 * worker id of $5. */
#define S_LEASE_PICKED                                                              \
    " UPDATE jobs j SET state = 'leased', lease = j.lease + 1,"                     \
    " attempts = j.attempts + 1, worker = ($5::text[])[p.rn], updated_at = now(),"   \
    " lease_deadline = now() + j.lease_ms * interval '1 millisecond'"               \
    " FROM picked p WHERE j.id = p.id"                                              \
    " RETURNING j.id, j.lease, j.kind, j.payload, j.blobs::text AS blobs, j.worker"

/* Profile jobs go only to a worker whose HELLO said it has a profiler
 * for its backend ("profile": true; exec-worker/kf_profile.c), and the
 * jobs that run PyTorch (a PyTorch problem's `reference`, a
 * `model_profile`) only to one that found a Python with torch ("torch":
 * {...}; exec-worker/kf_torch_ref.c): workers with and without each form
 * groups of their own, and $6 and $7 of the lease statements say which
 * this group is. */
#define S_PROFILE_FITS " AND (kind <> 'profile' OR $6::boolean)"                  \
                       " AND (kind NOT IN " KF_COORD_TORCH_KINDS " OR $7::boolean)"

static bool
s_profiler (const kf_coord_worker_t *w)
{
    return json_is_true (json_object_get (w->caps, "profile"));
}

/* Whether ROLE's queued jobs all come from one source (one run, or only
 * runless jobs): then there is no one to be fair to, and the plain lease
 * in id order does (it leases about twice as many jobs a second as the
 * round-robin statement, docs/benchmarks.md). Three index probes. */
static bool
s_one_source (kf_coord_t *self, const char *role)
{
    const char *params[1] = { role };
    json_t *row = kf_db_row (self->db,
                             "SELECT (SELECT run_id FROM jobs WHERE state = 'queued' AND role = $1"
                             "  AND run_id IS NOT NULL ORDER BY role, run_id LIMIT 1) AS lo,"
                             " (SELECT run_id FROM jobs WHERE state = 'queued' AND role = $1"
                             "  AND run_id IS NOT NULL ORDER BY role DESC, run_id DESC LIMIT 1) AS hi,"
                             " EXISTS (SELECT 1 FROM jobs WHERE state = 'queued' AND role = $1"
                             "  AND run_id IS NULL) AS runless",
                             1, params, NULL);
    if (!row)
        return false;   /* the round-robin statement will say what is wrong */
    json_t *lo = json_object_get (row, "lo"), *hi = json_object_get (row, "hi");
    bool one = !json_is_integer (lo)
               || (json_equal (lo, hi) && !json_is_true (json_object_get (row, "runless")));
    json_decref (row);
    return one;
}

/* Jobs W may be given now: its claimed credits, capped by what it has
 * finished (kf_lease_allowance), less what it holds. */
static int
s_free_credits (const kf_coord_worker_t *w)
{
    return kf_lease_allowance (w->credits, w->finished) - (int) json_array_size (w->jobs);
}

static int s_dispatch_group (kf_coord_t *self, zlistx_t *list);

/* What the RESULT of the leased job ROW is to hold, for the decoder at
 * the edge (kf_coord_workers.c): its kind, but "probe" for a reference
 * probe, an evaluate job whose result is findings, not a verdict. */
static const char *
s_result_kind (json_t *row)
{
    const char *kind = json_string_value (json_object_get (row, "kind"));
    if (kind && !strcmp (kind, "evaluate")
        && json_is_true (json_object_get (json_object_get (row, "payload"), "probe")))
        return "probe";
    return kind;
}

/* Queues the JOB messages of ROWS (taken: leased jobs: id, lease, kind,
 * payload, blobs, worker) in the outbox, to be sent once the lease
 * commits. Returns 0, or -1 when ROWS is NULL (the lease failed). */
static int
s_send_leased (kf_coord_t *self, json_t *rows)
{
    if (!rows)
        return -1;
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        int64_t job_id = json_integer_value (json_object_get (row, "id"));
        kf_coord_worker_t *w = zhashx_lookup (
            self->by_id, json_string_value (json_object_get (row, "worker")));
        char token[KF_LEASE_TOKEN_LEN + 1] = "";
        kf_msg_t *msg = kf_msg_new (
            "JOB", json_pack ("{s:I, s:O, s:O, s:O}", "job_id", (json_int_t) job_id,
                              "lease", json_object_get (row, "lease"), "kind",
                              json_object_get (row, "kind"), "payload",
                              json_object_get (row, "payload")));
        const char *blobs = json_string_value (json_object_get (row, "blobs"));
        /* The token goes to this worker only; its RESULT must bring it. */
        if (!w || kf_lease_token (token)
            || kf_lease_book_add (w->book, job_id,
                                  json_integer_value (json_object_get (row, "lease")), token,
                                  s_result_kind (row))
            || (blobs && strcmp (blobs, "{}")
                && s_attach_blobs (self, msg, json_object_get (row, "blobs")))) {
            if (w)
                kf_lease_book_remove (w->book, job_id);
            /* Its lease will lapse and the job comes back. */
            kf_error ("job %lld: cannot send: %s", (long long) job_id,
                      kf_db_error (self->db));
            kf_msg_destroy (&msg);
            continue;
        }
        json_object_set_new (msg->body, "lease_token", json_string (token));
        json_array_append_new (w->jobs, json_integer (job_id));
        s_outbox_t *o = calloc (1, sizeof *o);
        o->worker_id = strdup (w->id);
        o->job_id = job_id;
        o->msg = msg;
        zlistx_add_end (self->outbox, o);
    }
    json_decref (rows);
    return 0;
}

/* Re-verification jobs (kf_verify.c) go to a worker other than the one
 * whose figure is in doubt: each free worker of the group LIST leases
 * those it may take, its own only when no other connected worker of its
 * kind (role, backends, arch; not draining) could, and not before every
 * worker has had its liveness window to reconnect after a start. Before the group's
 * ordinary lease, which leaves them alone. */
static int
s_dispatch_verify (kf_coord_t *self, zlistx_t *list)
{
    kf_coord_worker_t *first = zlistx_first (list);
    if (strcmp (first->role, "execute") || !kf_verify_queued (self->db, first->role))
        return 0;
    for (kf_coord_worker_t *w = zlistx_first (list); w; w = zlistx_next (list)) {
        int free_credits = s_free_credits (w);
        if (free_credits <= 0)
            continue;
        //  Right after a start the others may not have said HELLO yet:
        //  nobody is alone until each had its liveness window to do so.
        bool alone = zclock_mono () - self->started
                     > (int64_t) self->cfg.heartbeat_ms * self->cfg.liveness;
        for (kf_coord_worker_t *o = zhashx_first (self->by_id); o && alone;
             o = zhashx_next (self->by_id))
            alone = o == w || o->draining || strcmp (o->role, w->role)
                    || strcmp (o->backends, w->backends) || strcmp (o->arch, w->arch);
        if (s_send_leased (self, kf_verify_lease (self->db, w->role, w->backends, w->arch,
                                                  w->id, free_credits, alone)))
            return -1;
    }
    return 0;
}

/* Leases queued jobs to every worker with free credits. Workers with the
 * same role and capabilities form one group and share one statement: the
 * array of worker ids, one entry per free credit in round-robin order, is
 * matched to the leased jobs by row number. The JOB messages wait in the
 * outbox until the transaction that leased them commits. */
void
kf_coord_dispatch (kf_coord_t *self)
{
    self->dispatch_needed = false;
    zhashx_t *groups = zhashx_new ();   /* key -> zlistx of kf_coord_worker_t */
    zhashx_set_destructor (groups, (zhashx_destructor_fn *) zlistx_destroy);
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
        if (w->draining || s_free_credits (w) <= 0)
            continue;
        char key[400];
        snprintf (key, sizeof key, "%s|%s|%s|%d|%d", w->role, w->backends, w->arch,
                  s_profiler (w), kf_coord_worker_has_torch (w));
        zlistx_t *list = zhashx_lookup (groups, key);
        if (!list) {
            list = zlistx_new ();
            zhashx_insert (groups, key, list);
        }
        zlistx_add_end (list, w);
    }
    for (zlistx_t *list = zhashx_first (groups); list; list = zhashx_next (groups)) {
        /* Each group in a savepoint: a statement that fails for one group
         * (whatever its workers said) rolls back that group's leases
         * only, not the pass's results and the other groups'. */
        if (kf_db_exec (self->db, "SAVEPOINT dispatch", 0, NULL) < 0) {
            self->counters[KF_COORD_DB_ERRORS]++;
            break;
        }
        size_t outbox_before = zlistx_size (self->outbox);
        int rc = s_dispatch_group (self, list);
        if (rc == 0)
            kf_db_exec (self->db, "RELEASE SAVEPOINT dispatch", 0, NULL);
        else {
            kf_coord_worker_t *first = zlistx_first (list);
            kf_error ("dispatch to %s workers (%s, %s) failed: %s", first->role, first->backends,
                      first->arch, kf_db_error (self->db));
            self->counters[KF_COORD_DISPATCH_FAILED]++;
            self->counters[KF_COORD_DB_ERRORS]++;
            /* Forget what this group was given: its leases are undone. */
            while (zlistx_size (self->outbox) > outbox_before) {
                s_outbox_t *o = zlistx_last (self->outbox);
                zlistx_detach_cur (self->outbox);
                kf_coord_worker_t *w = zhashx_lookup (self->by_id, o->worker_id);
                if (w)
                    kf_coord_forget_job (w, o->job_id);
                kf_msg_destroy (&o->msg);
                free (o->worker_id);
                free (o);
            }
            if (!kf_db_connected (self->db)
                || kf_db_exec (self->db, "ROLLBACK TO SAVEPOINT dispatch", 0, NULL) < 0)
                break;
        }
    }
    zhashx_destroy (&groups);
}

/* Leases what one group LIST of alike workers may take: re-verifications
 * first, then the ordinary queue. Returns 0, or -1 when a statement
 * failed. */
static int
s_dispatch_group (kf_coord_t *self, zlistx_t *list)
{
    if (s_dispatch_verify (self, list))
        return -1;
    kf_coord_worker_t *first = zlistx_first (list);
    /* Round-robin over free credits so jobs spread over the group. */
    kf_pgarray_t *ids = kf_pgarray_new ();
    int total = 0;
    for (int round = 0; round < 4096; round++) {
        int added = 0;
        for (kf_coord_worker_t *w = zlistx_first (list); w; w = zlistx_next (list))
            if (s_free_credits (w) > round) {
                kf_pgarray_add (ids, w->id);
                total++;
                added++;
            }
        if (!added)
            break;
    }
    char limit[24];
    const char *params[7] = { first->role, first->backends, first->arch,
                              S_I64 (limit, total), kf_pgarray_text (ids),
                              s_profiler (first) ? "true" : "false",
                              kf_coord_worker_has_torch (first) ? "true" : "false" };
    json_t *rows = s_one_source (self, first->role)
        ? kf_db_query (self->db,
                       "WITH locked AS (SELECT id FROM jobs WHERE state = 'queued'"
                       "  AND role = $1 AND (backend IS NULL OR backend = ANY($2::text[]))"
                       "  AND avoid_worker IS NULL"
                       "  AND (arch IS NULL OR arch = $3)" S_PROFILE_FITS
                       "  ORDER BY role, id LIMIT $4 FOR UPDATE SKIP LOCKED),"
                       " picked AS (SELECT id, row_number() OVER (ORDER BY id) AS rn"
                       "  FROM locked)"
                       S_LEASE_PICKED,
                       7, params)
        : kf_db_query (
        self->db,
        /* Round-robin across runs, so runs share the fleet fairly:
         * each run's queued jobs are numbered in its own order (turn),
         * every run's turn 1 goes before any turn 2, and among equal
         * turns the run served least recently (its latest lease or
         * completion in this role) goes first. That last key is what
         * makes it round-robin across passes too: a worker that takes
         * one job per pass would otherwise always get the oldest run's.
         * The runs with queued jobs are found by skipping along the
         * (role, run_id, id) index, and each contributes at most $4
         * jobs, so no pass sorts the whole queue. Runless jobs
         * (benchmarks) are one more queue. */
        "WITH RECURSIVE runs_q (run_id) AS ("
        "  (SELECT run_id FROM jobs WHERE state = 'queued' AND role = $1"
        "   AND run_id IS NOT NULL ORDER BY run_id LIMIT 1)"
        "  UNION ALL"
        "  SELECT (SELECT j.run_id FROM jobs j WHERE j.state = 'queued' AND j.role = $1"
        "   AND j.run_id > q.run_id ORDER BY j.run_id LIMIT 1)"
        "  FROM runs_q q WHERE q.run_id IS NOT NULL),"
        " queue AS ("
        "  SELECT c.id, c.turn, s.served FROM runs_q q"
        "   CROSS JOIN LATERAL (SELECT max(updated_at) AS served FROM jobs"
        "    WHERE run_id = q.run_id AND role = $1 AND state IN ('leased', 'done')) s"
        "   CROSS JOIN LATERAL"
        "   (SELECT id, row_number() OVER (ORDER BY id) AS turn FROM jobs"
        "    WHERE state = 'queued' AND role = $1 AND run_id = q.run_id"
        "    AND (backend IS NULL OR backend = ANY($2::text[])) AND avoid_worker IS NULL"
        "    AND (arch IS NULL OR arch = $3)" S_PROFILE_FITS " ORDER BY id LIMIT $4) c"
        "  UNION ALL"
        "  SELECT id, row_number() OVER (ORDER BY id), NULL::timestamptz FROM"
        /* Ordered as the (role, run_id, id) queued index is, so that
         * index serves it: ordered by id alone, the primary key did
         * once its statistics were stale, stepping over every done
         * job (28 ms a pass behind 15,000 of them). */
        "   (SELECT id FROM jobs WHERE state = 'queued' AND role = $1 AND run_id IS NULL"
        "    AND (backend IS NULL OR backend = ANY($2::text[]))"
        "    AND (arch IS NULL OR arch = $3)" S_PROFILE_FITS
        "    ORDER BY role, run_id, id LIMIT $4) n),"
        /* The ids as an array for jobs' primary key: joined to the
         * queue alone, the planner may hash the whole jobs table
         * (it did: 7.8 ms a pass at 20,000 rows, 0.5 ms this way). */
        " locked AS (SELECT j.id, q.turn, q.served FROM jobs j JOIN queue q ON q.id = j.id"
        "  WHERE j.id = ANY (ARRAY (SELECT id FROM queue)) AND j.state = 'queued'"
        "  ORDER BY q.turn, q.served NULLS FIRST, j.id LIMIT $4"
        "  FOR UPDATE OF j SKIP LOCKED),"
        " picked AS (SELECT id, row_number() OVER (ORDER BY turn, served NULLS FIRST, id)"
        "  AS rn FROM locked)"
        S_LEASE_PICKED,
        7, params);
    kf_pgarray_destroy (&ids);
    return s_send_leased (self, rows);
}

/* After the loop's transaction: send the leased jobs, or, when it did not
 * commit, forget them (they are still queued in the database). */
void
kf_coord_flush_outbox (kf_coord_t *self, bool committed)
{
    s_outbox_t *o;
    while ((o = zlistx_detach (self->outbox, NULL))) {
        kf_coord_worker_t *w = zhashx_lookup (self->by_id, o->worker_id);
        if (committed && w) {
            self->counters[KF_COORD_DISPATCHED]++;
            if (kf_msg_send (&o->msg, self->workers, w->route, NULL) == 0)
                self->counters[KF_COORD_SENT]++;
        }
        else if (w)
            kf_coord_forget_job (w, o->job_id);
        kf_msg_destroy (&o->msg);
        free (o->worker_id);
        free (o);
    }
}
