/*  kf_coord_workers.c - the coordinator's workers: the registry of those
 *  connected (by id and by routing id), what they say (HELLO, RESULT,
 *  HEARTBEAT, BYE, ERROR), the recording of their results in the pass's
 *  transaction, and the periodic checks: heartbeats out, dead workers,
 *  expired leases and leases of workers gone.
 *
 *  In memory is only what can be rebuilt: the connected workers and the
 *  jobs each holds. A job leaving its lease other than by a result goes
 *  through s_requeue_ex, with only constants in the statement's text.
 */
#include "kf_coord_fit.h"
#include "kf_coord_internal.h"
#include "kf_log.h"
#include "kf_msg_compile.h"
#include "kf_msg_generate.h"
#include "kf_msg_eval.h"
#include "kf_msg_profile.h"
#include "kf_msg_reference.h"
#include "kf_pgarray.h"
#include "kf_text.h"
#include <stdlib.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

void
kf_coord_worker_free (void **item)
{
    kf_coord_worker_t *w = *item;
    if (!w)
        return;
    free (w->id);
    free (w->route_key);
    free (w->name);
    free (w->host);
    zframe_destroy (&w->route);
    json_decref (w->caps);
    json_decref (w->jobs);
    kf_lease_book_destroy (&w->book);
    free (w);
    *item = NULL;
}

/* ---- worker bookkeeping ---------------------------------------------- */

bool
kf_coord_worker_has_torch (const kf_coord_worker_t *w)
{
    return json_is_object (json_object_get (w->caps, "torch"));
}

void
kf_coord_forget_job (kf_coord_worker_t *w, int64_t job_id)
{
    kf_lease_book_remove (w->book, job_id);
    size_t i;
    json_t *v;
    json_array_foreach (w->jobs, i, v)
        if (json_integer_value (v) == job_id) {
            json_array_remove (w->jobs, i);
            return;
        }
}

/* How a job leaves its lease other than by a result. */
typedef enum {
    S_RETRY,       /* requeued, or failed for good once its attempts are used up */
    S_HANDED_BACK, /* handed back unstarted (its worker is being stopped by an
                    * operator): requeued, the attempt it used given back */
    S_FINAL        /* the worker says it fails the same way on any worker and
                    * any try: failed at once */
} s_requeue_mode_t;

/* Requeues (or fails for good) the jobs matched by WHERE_SQL, a constant
 * whose parameters $1..$N are PARAMS; REASON is kept (it becomes $N+1).
 * No value is ever printed into the text: only the constant clause, the
 * mode's constants and the parameter number, so the statements stay a
 * handful in kf_db's prepared cache. Runs inside the caller's
 * transaction. */
static int
s_requeue_ex (kf_coord_t *self, const char *where_sql, int n, const char *const *params,
              const char *reason, s_requeue_mode_t mode)
{
    assert (n >= 0 && n <= 3);
    bool uncount = mode == S_HANDED_BACK;
    char sql[1200];
    snprintf (sql, sizeof sql,
              "UPDATE jobs j SET state = CASE WHEN %s OR (NOT %s AND j.attempts >= j.max_attempts)"
              " THEN 'failed' ELSE 'queued' END, reason = $%d, worker = NULL,"
              " attempts = CASE WHEN %s THEN greatest(j.attempts - 1, 0) ELSE j.attempts END,"
              " lease_deadline = NULL, updated_at = now()"
              " FROM (SELECT id, worker AS old_worker FROM jobs WHERE %s FOR UPDATE) o"
              " WHERE j.id = o.id"
              " RETURNING j.id, j.run_id, j.candidate_id, j.kind, j.state,"
              " j.attempts, o.old_worker",
              mode == S_FINAL ? "true" : "false", uncount ? "true" : "false", n + 1,
              uncount ? "true" : "false", where_sql);
    const char *all[4];
    for (int i = 0; i < n; i++)
        all[i] = params[i];
    all[n] = reason;
    json_t *rows = kf_db_query (self->db, sql, n + 1, all);
    if (!rows)
        return -1;
    int rc = 0;
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        const char *old = json_string_value (json_object_get (row, "old_worker"));
        kf_coord_worker_t *w = old ? zhashx_lookup (self->by_id, old) : NULL;
        if (w)
            kf_coord_forget_job (w, json_integer_value (json_object_get (row, "id")));
        const char *state = json_string_value (json_object_get (row, "state"));
        if (!strcmp (state, "failed")) {
            char text[600], after[64];
            if (mode == S_FINAL)
                snprintf (after, sizeof after, " (not retried: it fails the same way"
                          " on any worker)");
            else
                snprintf (after, sizeof after, " (after %lld attempts)",
                          (long long) json_integer_value (json_object_get (row, "attempts")));
            /* At a line, saying what was left. */
            kf_text_head_in (text, sizeof text, "", reason, 400, after);
            self->counters[KF_COORD_FAILED]++;
            if (kf_search_job_failed (&self->search, row, text))
                rc = -1;
        }
        else
            self->counters[uncount ? KF_COORD_HANDED_BACK : KF_COORD_REQUEUED]++;
    }
    if (json_array_size (rows))
        self->dispatch_needed = true;
    json_decref (rows);
    return rc;
}

static int
s_requeue (kf_coord_t *self, const char *where_sql, int n, const char *const *params,
           const char *reason)
{
    return s_requeue_ex (self, where_sql, n, params, reason, S_RETRY);
}

/* Forgets W and requeues its leases, inside the loop's transaction; a
 * worker that LEFT (said BYE) hands them back without using an attempt. */
static void
s_worker_gone (kf_coord_t *self, kf_coord_worker_t *w, const char *why, bool left)
{
    if (json_array_size (w->jobs))
        kf_warn ("worker %s %s; requeueing its %zu job(s)", w->id, why,
                 json_array_size (w->jobs));
    char reason[200];
    snprintf (reason, sizeof reason, "worker %.100s %s", w->id, why);
    const char *params[1] = { w->id };
    if (s_requeue_ex (self, "state = 'leased' AND worker = $1", 1, params, reason,
                      left ? S_HANDED_BACK : S_RETRY))
        self->counters[KF_COORD_DB_ERRORS]++;   /* the lease deadline is the backstop */
    zhashx_delete (self->by_route, w->route_key);
    zhashx_delete (self->by_id, w->id);
}

static void
s_worker_lost (kf_coord_t *self, kf_coord_worker_t *w, const char *why)
{
    s_worker_gone (self, w, why, false);
}

/* ---- worker messages --------------------------------------------------- */

/* Counts job ID as taking one of W's credits, unless W counts it already. */
static void
s_hold_job (kf_coord_worker_t *w, json_int_t id)
{
    size_t k;
    json_t *u;
    json_array_foreach (w->jobs, k, u)
        if (json_integer_value (u) == id)
            return;
    json_array_append_new (w->jobs, json_integer (id));
}

/* Counts each job of the array JOBS that W does not count yet as taking
 * one of its credits. */
static void
s_hold_jobs (kf_coord_worker_t *w, json_t *jobs)
{
    size_t i;
    json_t *v;
    json_array_foreach (jobs, i, v)
        if (json_is_integer (v))
            s_hold_job (w, json_integer_value (v));
}

/* Hands back the leases W holds that its HELLO's JOBS no longer lists. */
static void
s_unlisted_back (kf_coord_t *self, kf_coord_worker_t *w, json_t *jobs)
{
    int64_t held[512];
    size_t n = kf_lease_book_jobs (w->book, held, 512);
    kf_pgarray_t *lost = kf_pgarray_new ();
    for (size_t k = 0; k < n && k < 512; k++) {
        bool listed = false;
        size_t i;
        json_t *v;
        json_array_foreach (jobs, i, v)
            listed |= json_is_integer (v) && json_integer_value (v) == held[k];
        char id[24];
        if (!listed)
            kf_pgarray_add (lost, S_I64 (id, held[k]));
    }
    if (kf_pgarray_size (lost)) {
        kf_warn ("worker %s reconnected without %zu of its job(s); requeueing them", w->id,
                 kf_pgarray_size (lost));
        const char *params[2] = { kf_pgarray_text (lost), w->id };
        if (s_requeue_ex (self, "id = ANY($1::bigint[]) AND state = 'leased' AND worker = $2",
                          2, params, "its worker reconnected without it", S_HANDED_BACK))
            self->counters[KF_COORD_DB_ERRORS]++;
    }
    kf_pgarray_destroy (&lost);
}

static void
s_on_hello (kf_coord_t *self, zframe_t *route, const char *route_key, kf_msg_t *msg)
{
    const char *id = kf_msg_str (msg, "worker_id");
    const char *role = kf_msg_str (msg, "role");
    int64_t credits = kf_msg_int (msg, "credits", 0);
    static const char *id_chars = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                  "0123456789._:@-";
    if (!*id || strlen (id) > 200 || strspn (id, id_chars) != strlen (id)
        || !*role || strlen (role) >= 32 || credits < 1 || credits > 4096) {
        kf_coord_reply_error (self, self->workers, route, "bad-request",
                              "worker_id (letters, digits, ._:@-), role or credits out of range");
        return;
    }
    kf_coord_worker_t *prev = zhashx_lookup (self->by_route, route_key);
    if (prev && strcmp (prev->id, id))
        /* A new identity on a known connection: the old one is gone. */
        s_worker_lost (self, prev, "was replaced on its connection");
    kf_coord_worker_t *w = zhashx_lookup (self->by_id, id);
    /* A second HELLO on the same connection (the worker answered two
     * unknown-worker ERRORs, each to a message sent before its first
     * HELLO) may have crossed a JOB sent since: that JOB is still on its
     * way, so the leases it does not list are kept, not handed back. */
    bool same_route = w && w->route_key && !strcmp (w->route_key, route_key);
    if (w) {
        /* The same worker again (it reconnected): new route. Leases it
         * held and no longer lists were lost on its side (a restart, a
         * result it could not keep): back to the queue now, without the
         * attempt (issue 13, item 9), instead of at their lease's end. */
        if (!same_route)
            s_unlisted_back (self, w, json_object_get (msg->body, "jobs"));
        zhashx_delete (self->by_route, w->route_key);
        free (w->route_key);
        zframe_destroy (&w->route);
        json_decref (w->caps);
        free (w->name);
        free (w->host);
    }
    else {
        w = calloc (1, sizeof *w);
        w->id = strdup (id);
        w->jobs = json_array ();
        w->book = kf_lease_book_new ();
        zhashx_insert (self->by_id, id, w);
        kf_info ("worker %s joined (%s, %lld credits)", id, role, (long long) credits);
    }
    w->route_key = strdup (route_key);
    w->route = zframe_dup (route);
    snprintf (w->role, sizeof w->role, "%s", role);
    w->credits = (int) credits;
    w->caps = json_incref (json_object_get (msg->body, "capabilities"));
    w->name = strdup (kf_msg_str (msg, "name") ? kf_msg_str (msg, "name") : id);
    w->host = strdup (kf_msg_str (msg, "host") ? kf_msg_str (msg, "host") : "");
    w->last_heard = zclock_mono ();
    /* An operator's drain outlives reconnects. */
    w->draining = zhashx_lookup (self->drained, id) != NULL;
    /* Backends as a text[] literal for the dispatch query, built by
     * kf_pgarray (every element quoted); names it would not match are
     * left out, at most 8 of them. */
    kf_pgarray_t *backends = kf_pgarray_new ();
    size_t i;
    json_t *b;
    json_array_foreach (json_object_get (w->caps, "backends"), i, b) {
        const char *name = json_string_value (b);
        if (name && strlen (name) <= 20 && kf_pgarray_size (backends) < 8
            && strspn (name, "abcdefghijklmnopqrstuvwxyz-_0123456789") == strlen (name))
            kf_pgarray_add (backends, name);
    }
    snprintf (w->backends, sizeof w->backends, "%s", kf_pgarray_text (backends));
    kf_pgarray_destroy (&backends);
    const char *arch = json_string_value (json_object_get (w->caps, "arch"));
    snprintf (w->arch, sizeof w->arch, "%s", arch ? arch : "");
    /* Jobs it still runs keep their credits busy, and so do the leases
     * on their way to it over this same connection. */
    json_array_clear (w->jobs);
    s_hold_jobs (w, json_object_get (msg->body, "jobs"));
    if (same_route) {
        int64_t held[512];
        size_t n = kf_lease_book_jobs (w->book, held, 512);
        for (size_t k = 0; k < n && k < 512; k++)
            s_hold_job (w, held[k]);
    }
    zhashx_insert (self->by_route, route_key, w);

    char *caps = json_dumps (w->caps, JSON_COMPACT);
    const char *params[5] = { id, role, w->name, w->host, caps };
    kf_db_exec (self->db,
                "INSERT INTO workers (id, role, name, host, capabilities)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET"
                " role = $2, name = $3, host = $4, capabilities = $5, last_seen = now()",
                5, params);
    free (caps);
    kf_coord_send (self, self->workers, route, "WELCOME",
                   json_pack ("{s:s, s:i, s:i}", "worker_id", id, "heartbeat_ms",
                       self->cfg.heartbeat_ms, "liveness", self->cfg.liveness));
    self->dispatch_needed = true;
}

/* The job kinds whose results are decoded at the edge, each into its
 * typed struct through its codec (kf_msg_field.h). */
static const struct {
    const char *kind;
    kf_msg_kind_t tag;
    const kf_field_codec_t *codec;
    void (*release) (void *r);
} s_typed[] = {
    { "evaluate", KF_MSG_EVAL_RESULT, &kf_eval_result_codec, kf_eval_result_release },
    { "compile", KF_MSG_COMPILE_RESULT, &kf_compile_result_codec, kf_compile_result_release },
    { "generate", KF_MSG_GENERATE_RESULT, &kf_generate_result_codec,
      kf_generate_result_release },
    { "meta", KF_MSG_GENERATE_RESULT, &kf_generate_result_codec, kf_generate_result_release },
    { "reference", KF_MSG_REFERENCE_RESULT, &kf_reference_result_codec,
      kf_reference_result_release },
    { "profile", KF_MSG_PROFILE_RESULT, &kf_profile_result_codec, kf_profile_result_release },
};

/* Decodes at the edge the result of MSG, a successful RESULT of JOB_ID
 * from W, its lease holder: an evaluate, compile, generate, meta,
 * reference or profile job's becomes its typed struct (kf_msg_eval.h,
 * kf_msg_compile.h, kf_msg_generate.h, kf_msg_reference.h,
 * kf_msg_profile.h) in MSG's typed slot, once, and the modules of the
 * search take that. The kind is what the lease book says was leased,
 * never what the RESULT claims. A malformed result is refused here: W
 * gets an ERROR "malformed" naming the field, the refusal is counted,
 * and MSG becomes a failed RESULT with that reason, so its job is
 * requeued with the attempt counted (or fails for good once its attempts
 * are used up) and nothing of it is recorded. */
static void
s_decode_result (kf_coord_t *self, kf_coord_worker_t *w, kf_msg_t *msg, int64_t job_id)
{
    const char *kind = kf_lease_book_kind (w->book, job_id);
    size_t k = 0, n = sizeof s_typed / sizeof s_typed[0];
    while (k < n && strcmp (kind, s_typed[k].kind))
        k++;
    if (k == n || !json_is_true (json_object_get (msg->body, "ok")))
        return;
    char why[300] = "out of memory";
    json_t *result = json_object_get (msg->body, "result");
    void *r = calloc (1, s_typed[k].codec->size);
    if (r && !kf_field_decode (s_typed[k].codec, result, r, why, sizeof why)) {
        msg->typed = r;
        msg->typed_free = s_typed[k].release;
        msg->typed_kind = s_typed[k].tag;
        return;
    }
    free (r);
    char reason[400];
    snprintf (reason, sizeof reason, "malformed %s result: %s", kind, why);
    kf_warn ("job %lld from %s: %s", (long long) job_id, w->id, reason);
    self->errors[KF_PROTO_MALFORMED]++;
    kf_coord_reply_error (self, self->workers, w->route, "malformed", reason);
    json_object_set_new (msg->body, "ok", json_false ());
    json_object_set_new (msg->body, "error", json_string (reason));
    json_object_del (msg->body, "returned");
    json_object_del (msg->body, "final");
}

/* A RESULT counts only from the worker W that holds its lease, with the
 * lease's token (kf_lease.h): then it waits in the pass's batch, recorded
 * by kf_coord_complete_results. Any other (from a peer that never said HELLO,
 * from another worker, for a lease lost since, or with a wrong token) is
 * discarded: counted as late, and as refused when its sender said no
 * HELLO or the job is held (by another worker, or under another token).
 * Takes *MSG_P. */
static void
s_on_result (kf_coord_t *self, kf_coord_worker_t *w, kf_msg_t **msg_p)
{
    int64_t job_id = kf_msg_int (*msg_p, "job_id", 0);
    if (!w || !kf_lease_book_holds (w->book, job_id, kf_msg_int (*msg_p, "lease", 0),
                                    kf_msg_str (*msg_p, "lease_token"))) {
        self->counters[KF_COORD_LATE]++;
        /* A job it listed in HELLO but holds no lease of (one from before
         * a restart of ours) stops taking its credit now. */
        if (w && !kf_lease_book_has (w->book, job_id))
            kf_coord_forget_job (w, job_id);
        bool refused = !w;
        for (kf_coord_worker_t *o = zhashx_first (self->by_id); o && !refused;
             o = zhashx_next (self->by_id))
            refused = kf_lease_book_has (o->book, job_id);   /* held: not by this one */
        if (refused) {
            self->counters[KF_COORD_REFUSED]++;
            kf_warn ("refused a RESULT for job %lld from %s: not the lease holder's",
                     (long long) job_id, w ? w->id : "a peer that said no HELLO");
        }
        kf_msg_destroy (msg_p);
        return;
    }
    s_decode_result (self, w, *msg_p, job_id);
    kf_coord_forget_job (w, job_id);
    /* A JOB handed back unstarted for want of a free credit (the worker
     * holds more than we counted) lists what the worker holds: those take
     * its credits until their RESULTs come, so the job is not sent back
     * to it at once. */
    if (json_is_true (json_object_get ((*msg_p)->body, "returned")))
        s_hold_jobs (w, json_object_get ((*msg_p)->body, "jobs"));
    w->finished++;
    self->dispatch_needed = true;
    kf_inbox_add (self->results, msg_p);
}

/* A failed RESULT: its job is requeued (or fails for good). */
static void
s_on_failure (kf_coord_t *self, kf_msg_t *msg)
{
    char id[24], lease[24];
    const char *params[2] = { S_I64 (id, kf_msg_int (msg, "job_id", 0)),
                              S_I64 (lease, kf_msg_int (msg, "lease", 0)) };
    const char *error = kf_msg_str (msg, "error");
    bool returned = json_is_true (json_object_get (msg->body, "returned"));
    bool final = !returned && json_is_true (json_object_get (msg->body, "final"));
    if (s_requeue_ex (self, "id = $1 AND lease = $2 AND state = 'leased'", 2, params,
                      error ? error : "worker reported failure",
                      returned ? S_HANDED_BACK : final ? S_FINAL : S_RETRY))
        self->counters[KF_COORD_DB_ERRORS]++;
}

/* Fails RUN_ID, still running, for REASON, with its queued and leased
 * jobs, inside the pass's transaction. */
static void
s_fail_run (kf_coord_t *self, int64_t run_id, const char *reason)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    if (kf_search_finish_run (&self->search, run_id, "failed", reason)
        || kf_db_exec (self->db,
                       "UPDATE jobs SET state = 'failed', reason = 'its run failed',"
                       " updated_at = now() WHERE run_id = $1"
                       " AND state IN ('queued', 'leased')", 1, params) < 0)
        self->counters[KF_COORD_DB_ERRORS]++;
}

/* The decoding of M (s_decode_result) as the search takes it: the
 * member of its kind set, the others NULL. */
static void
s_search_typed (const kf_msg_t *m, kf_search_typed_t *typed)
{
    memset (typed, 0, sizeof *typed);
    switch (m->typed_kind) {
    case KF_MSG_EVAL_RESULT:
        typed->eval = m->typed;
        break;
    case KF_MSG_COMPILE_RESULT:
        typed->compile = m->typed;
        break;
    case KF_MSG_GENERATE_RESULT:
        typed->gen = m->typed;
        break;
    case KF_MSG_REFERENCE_RESULT:
        typed->ref = m->typed;
        break;
    case KF_MSG_PROFILE_RESULT:    /* a profile's result is its caller's, not the search's */
    case KF_MSG_UNTYPED:
        break;
    }
}

/* Records every RESULT waiting: failures requeue their jobs; the
 * successes are completed in one statement: the batch goes in as one JSON
 * array, and only rows whose lease still matches come back. Each returned
 * job of a run then takes its search step, in a savepoint so a failing
 * step does not undo the others; such a step fails its run (s_fail_run).
 * The messages move to RECORDED until the
 * pass's transaction ends (kf_coord_run keeps them for another try when it
 * does not commit). */
void
kf_coord_complete_results (kf_coord_t *self)
{
    if (kf_inbox_size (self->results) == 0)
        return;
    json_t *batch = json_array ();
    zhashx_t *by_job = zhashx_new ();
    for (kf_msg_t *m = kf_inbox_first (self->results); m; m = kf_inbox_next (self->results)) {
        if (!json_is_true (json_object_get (m->body, "ok"))) {
            s_on_failure (self, m);
            continue;
        }
        char key[24];
        S_I64 (key, kf_msg_int (m, "job_id", 0));
        zhashx_update (by_job, key, m);   /* a duplicate: the last one counts */
        json_array_append_new (batch, json_pack ("{s:I, s:I, s:O}", "id",
                                                 (json_int_t) kf_msg_int (m, "job_id", 0),
                                                 "lease", (json_int_t) kf_msg_int (m, "lease", 0),
                                                 "result", json_object_get (m->body, "result")));
    }
    char *text = json_dumps (batch, JSON_COMPACT);
    json_decref (batch);
    const char *params[1] = { text };
    json_t *rows = kf_db_query (self->db,
                                "UPDATE jobs j SET state = 'done', result = v.result,"
                                " lease_deadline = NULL, updated_at = now()"
                                " FROM jsonb_to_recordset($1::jsonb)"
                                "  AS v(id bigint, lease bigint, result jsonb)"
                                " WHERE j.id = v.id AND j.lease = v.lease AND j.state = 'leased'"
                                " RETURNING j.id, j.run_id, j.candidate_id, j.kind, j.worker",
                                1, params);
    free (text);
    if (!rows)
        self->counters[KF_COORD_DB_ERRORS]++;
    else {
        self->counters[KF_COORD_DONE] += (long) json_array_size (rows);
        self->counters[KF_COORD_LATE] += (long) (zhashx_size (by_job) - json_array_size (rows));
        size_t i;
        json_t *job;
        json_array_foreach (rows, i, job) {
            if (!json_integer_value (json_object_get (job, "run_id")))
                continue;
            char key[24];
            S_I64 (key, json_integer_value (json_object_get (job, "id")));
            kf_msg_t *m = zhashx_lookup (by_job, key);
            size_t events_before = json_array_size (self->search.events);
            kf_search_typed_t typed;
            s_search_typed (m, &typed);
            if (kf_db_exec (self->db, "SAVEPOINT result", 0, NULL) < 0
                || kf_search_job_done (&self->search, job, json_object_get (m->body, "result"),
                                       &typed, m->frames)) {
                char reason[400];
                const char *error = kf_db_error (self->db);
                int first_line = (int) strcspn (error, "\n");
                snprintf (reason, sizeof reason, "internal error: the search step of job %s "
                          "failed: %.*s", key, first_line < 300 ? first_line : 300, error);
                kf_error ("job %s: search step failed: %s", key, kf_db_error (self->db));
                self->counters[KF_COORD_DB_ERRORS]++;
                kf_db_exec (self->db, "ROLLBACK TO SAVEPOINT result", 0, NULL);
                kf_coord_truncate_events (self, events_before);
                //  The job is recorded done but its step left nothing: its
                //  candidate would wait forever, and the run with it. The
                //  run fails, saying why (a run that hung instead was seen
                //  when a planner query failed). A database that went away
                //  fails this too, and the pass is not committed.
                s_fail_run (self, json_integer_value (json_object_get (job, "run_id")), reason);
            }
            else
                kf_db_exec (self->db, "RELEASE SAVEPOINT result", 0, NULL);
        }
        json_decref (rows);
    }
    zhashx_destroy (&by_job);
    kf_inbox_append (self->recorded, self->results);
}

/* The pass's transaction ended. Committed: its RESULTs are recorded for
 * good. Not committed (the database went away mid-pass, or refused): they
 * go back to wait for the next pass, so a result that arrives during an
 * outage is recorded when the database is back instead of its job waiting
 * for its lease to expire. Their lease numbers make a second recording
 * harmless. Held for as long as the database is unreachable, up to
 * max_held_result_bytes (kf_inbox: by bytes, since one result may be
 * max_message bytes); with the database connected, three failed passes in
 * a row mean the batch itself is refused, and it is dropped (the leases
 * are the backstop). */
void
kf_coord_results_after_commit (kf_coord_t *self, bool committed)
{
    if (committed || kf_inbox_size (self->recorded) == 0) {
        kf_inbox_clear (self->recorded);
        self->unrecorded_passes = 0;
        return;
    }
    if (kf_db_connected (self->db) && ++self->unrecorded_passes >= 3) {
        kf_error ("dropping %zu result(s) the database refused three times: %s",
                  kf_inbox_size (self->recorded), kf_db_error (self->db));
        kf_inbox_clear (self->recorded);
        self->unrecorded_passes = 0;
        return;
    }
    //  Back in front of what came since, in arrival order.
    kf_inbox_prepend (self->results, self->recorded);
    size_t dropped = kf_inbox_trim (self->results);
    if (dropped)
        kf_warn ("dropped the oldest %zu result(s) held for the database (over %zu bytes)",
                 dropped, self->cfg.max_held_bytes);
    self->counters[KF_COORD_HELD_DROPPED] += (long) dropped;
}

static void
s_route_key (zframe_t *route, char *out, size_t size)
{
    char *hex = zframe_strhex (route);
    snprintf (out, size, "%s", hex);
    free (hex);
}

void
kf_coord_on_worker_message (kf_coord_t *self, zframe_t *route, kf_msg_t **msg_p)
{
    kf_msg_t *msg = *msg_p;
    char key[128];
    s_route_key (route, key, sizeof key);
    kf_coord_worker_t *w = zhashx_lookup (self->by_route, key);
    if (w)
        w->last_heard = zclock_mono ();
    if (!strcmp (msg->type, "HELLO"))
        s_on_hello (self, route, key, msg);
    else if (!strcmp (msg->type, "RESULT")) {
        s_on_result (self, w, msg_p);
        if (!w)
            kf_coord_reply_error (self, self->workers, route, "unknown-worker", "say HELLO");
    }
    else if (!strcmp (msg->type, "ERROR")) {
        /* Logged and counted; never answered with an ERROR (PROTOCOL.md). */
        self->counters[KF_COORD_WORKER_ERRORS]++;
        kf_warn ("worker %s says %.40s: %.200s", w ? w->id : "(no HELLO)",
                 kf_msg_str (msg, "code"), kf_msg_str (msg, "reason"));
    }
    else if (!w)
        kf_coord_reply_error (self, self->workers, route, "unknown-worker", "say HELLO");
    else if (!strcmp (msg->type, "HEARTBEAT")) {
        /* Credits 0: the worker is stopping (SIGTERM). */
        int64_t credits = kf_msg_int (msg, "credits", w->credits);
        w->draining = credits == 0 || zhashx_lookup (self->drained, w->id);
    }
    else if (!strcmp (msg->type, "BYE")) {
        kf_info ("worker %s said goodbye", w->id);
        kf_coord_complete_results (self);   /* its last results came just before */
        s_worker_gone (self, w, "left", true);
    }
}

/* ---- cron ---------------------------------------------------------------- */

/* Every KF_COORD_SEEN_BEATS heartbeats, the workers still heard from get
 * workers.last_seen = now(): it was written at HELLO only, so a worker
 * connected for over ten minutes counted as gone where the prompt and the
 * stored host condition ask who is "seen in the last ten minutes" (round
 * 12: the same exec host read "also runs 1 compile worker" and then "no
 * compile worker" within one run). */
static void
s_seen_write (kf_coord_t *self, int64_t now)
{
    if (!self->ready || now < self->next_seen_write)
        return;
    self->next_seen_write = now + (int64_t) self->cfg.heartbeat_ms * KF_COORD_SEEN_BEATS;
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
        const char *params[1] = { w->id };
        kf_db_exec (self->db, "UPDATE workers SET last_seen = now() WHERE id = $1", 1, params);
    }
}

void
kf_coord_cron (kf_coord_t *self)
{
    int64_t now = zclock_mono ();
    if (now >= self->next_heartbeat) {
        self->next_heartbeat = now + self->cfg.heartbeat_ms;
        /* Liveness is judged only on what has been read: while worker
         * messages wait unread (a pass that stalled on the database, a
         * batch cap reached), their heartbeats may be among them, and
         * the judgement waits for the next pass. */
        bool unread = (zsock_events (self->workers) & ZMQ_POLLIN) != 0;
        int64_t window = (int64_t) self->cfg.heartbeat_ms * self->cfg.liveness;
        zlistx_t *dead = zlistx_new ();
        for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
            /* A peer flooding the socket cannot keep a dead worker alive
             * for ever: past twice its window it is judged regardless. */
            int64_t silent = now - w->last_heard;
            if (silent > window && (!unread || silent > 2 * window))
                zlistx_add_end (dead, w);
            else
                kf_coord_send (self, self->workers, w->route, "HEARTBEAT", NULL);
        }
        for (kf_coord_worker_t *w = zlistx_first (dead); w; w = zlistx_next (dead))
            s_worker_lost (self, w, "missed its heartbeats");
        zlistx_destroy (&dead);
        s_seen_write (self, now);
    }
    if (self->ready && now >= self->next_lease_check) {
        int64_t last_pass = self->next_lease_check - 1000;
        self->next_lease_check = now + 1000;
        if (s_requeue (self, "state = 'leased' AND lease_deadline < now()", 0, NULL,
                       "lease expired"))
            self->counters[KF_COORD_DB_ERRORS]++;
        /* Leases of workers this coordinator no longer knows: one declared
         * gone in a pass that did not commit (the database was away) still
         * holds its jobs. Swept once after such a pass; a sweep that does
         * not commit either is one more such pass. */
        kf_pgarray_t *ids = self->sweep_orphans ? kf_pgarray_new () : NULL;
        if (ids) {
            self->sweep_orphans = false;
            for (kf_coord_worker_t *w = zhashx_first (self->by_id); w;
                 w = zhashx_next (self->by_id))
                kf_pgarray_add (ids, w->id);
            const char *params[1] = { kf_pgarray_text (ids) };
            if (s_requeue (self, "state = 'leased' AND NOT (worker = ANY($1::text[]))", 1,
                           params, "its worker is gone"))
                self->counters[KF_COORD_DB_ERRORS]++;
            kf_pgarray_destroy (&ids);
        }
        /* Runs no connected worker could serve for worker_wait_s fail. */
        kf_coord_fit_check (self, last_pass);
        /* Jobs may have been added by another writer (benchmarks). */
        self->dispatch_needed = true;
    }
}
