/*  kf_coord.c - the coordinator's event loop.
 *
 *  One thread, one zmq_poll over the worker, client and status ROUTERs,
 *  and a cron step for heartbeats, liveness, lease expiry and dispatch.
 *  Worker messages are read in batches and handled in one transaction
 *  (each RESULT inside a savepoint, so one bad message cannot undo the
 *  others), which turns a commit per message into a commit per batch.
 *  Events are published only after the commit that made them true.
 *
 *  In memory is only what can be rebuilt: the connected workers and the
 *  jobs each holds. Job state, runs and candidates live in PostgreSQL.
 */
#include "kf_auth.h"
#include "kf_coord.h"
#include "kf_curve.h"
#include "kf_db.h"
#include "kf_inbox.h"
#include "kf_lease.h"
#include "kf_log.h"
#include "kf_meta.h"
#include "kf_metrics.h"
#include "kf_models.h"
#include "kf_pgarray.h"
#include "kf_proto.h"
#include "kf_str.h"
#include "kf_search.h"
#include "kf_task.h"
#include "kf_verify.h"
#include <czmq.h>
#include <string.h>

#define S_I64(buf, v) (snprintf ((buf), sizeof (buf), "%lld", (long long) (v)), (buf))

typedef struct {
    char *id;
    char *route_key;         /* hex of the routing id */
    zframe_t *route;
    char role[32];
    char *name, *host;
    json_t *caps;
    char backends[256];      /* text[] literal (kf_pgarray), e.g. {"host","cuda"} */
    char arch[64];
    int credits;             /* as claimed; kf_lease_allowance caps its use */
    long finished;           /* results it brought for leases it held */
    json_t *jobs;            /* array of job ids leased to it */
    kf_lease_book_t *book;   /* the leases and tokens it holds */
    int64_t last_heard;
    bool draining;
} s_worker_t;

enum {
    C_RECEIVED, C_SENT, C_LATE, C_REQUEUED, C_DONE, C_FAILED, C_DISPATCHED,
    C_BATCHES, C_DB_ERRORS, C_HANDED_BACK, C_REFUSED, C_HELD_DROPPED, C_WORKER_ERRORS,
    C_DISPATCH_FAILED, C_N
};
static const char *s_counter_names[C_N] = {
    "received", "sent", "late_results", "requeued", "jobs_done", "jobs_failed",
    "dispatched", "batches", "db_errors", "handed_back", "refused_results",
    "held_results_dropped", "worker_errors", "dispatch_failed"
};

typedef struct {
    char *worker_id;
    int64_t job_id;
    kf_msg_t *msg;
} s_outbox_t;

struct kf_coord_t {
    kf_coord_config_t cfg;
    zlistx_t *outbox;        /* s_outbox_t: JOBs waiting for their commit */
    kf_inbox_t *results;     /* RESULTs waiting to be recorded */
    kf_inbox_t *recorded;    /* RESULTs recorded in this pass's transaction;
                                back to RESULTS if it fails */
    bool sweep_orphans;      /* a pass did not commit: leases of workers
                                declared gone in it may still stand */
    int unrecorded_passes;   /* passes in a row that failed to record them
                                with the database connected */
    kf_db_t *db;
    kf_search_t search;
    zsock_t *workers, *clients, *status, *events;
    zhashx_t *by_id;         /* worker id -> s_worker_t (owned) */
    zhashx_t *by_route;      /* route key -> s_worker_t (borrowed) */
    long counters[C_N];
    long errors[KF_PROTO_N_ERRORS];
    int64_t started;
    int64_t next_heartbeat, next_lease_check;
    bool dispatch_needed;
    bool ready;              /* database connected, migrated, listening */
    bool waiting_logged;
    kf_auth_t *auth;         /* NULL: no CURVE */
    kf_metrics_t *metrics;   /* NULL: no /metrics */
    zhashx_t *drained;       /* worker ids an operator drained (kfctl drain) */
    double tx_seconds;       /* the loop's write transactions: total time */
    long tx_count;
    double tx_max_seconds;   /* the slowest since the last scrape */
};

static char *s_metrics_text (void *arg);

static void s_flush_outbox (kf_coord_t *self, bool committed);

static void
s_worker_free (void **item)
{
    s_worker_t *w = *item;
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

/* CURVE on every tcp:// endpoint when we have a certificate; without one,
 * tcp:// beyond loopback only when the operator allowed it. */
static int
s_secure (kf_coord_t *self, zsock_t *sock, const char *endpoint)
{
    kf_scope_t scope = kf_curve_scope (endpoint);
    if (scope == KF_SCOPE_LOCAL)
        return 0;
    if (self->auth) {
        kf_auth_secure (self->auth, sock);
        return 0;
    }
    if (scope == KF_SCOPE_REMOTE && !self->cfg.allow_plain_tcp) {
        kf_error ("refusing to serve %s without CURVE: give curve_cert and"
                  " curve_allow_dir, or allow_plain_tcp to send in the clear", endpoint);
        return -1;
    }
    if (scope == KF_SCOPE_REMOTE)
        kf_warn ("serving %s as PLAIN TCP: anyone who can reach it can read and"
                 " send everything (allow_plain_tcp)", endpoint);
    return 0;
}

static int
s_bind (kf_coord_t *self, zsock_t **sock, int type, const char *endpoint, size_t max_message)
{
    *sock = zsock_new (type);
    if (!*sock)
        return -1;
    if (s_secure (self, *sock, endpoint))
        return -1;
    zsock_set_linger (*sock, 0);
    zsock_set_rcvtimeo (*sock, 0);
    if (type != ZMQ_PUB)
        /* Past twice the cap the connection is dropped without reading;
         * between the cap and that, the codec answers "oversized". */
        zsock_set_maxmsgsize (*sock, (int64_t) max_message * 2);
    if (zsock_bind (*sock, "%s", endpoint) < 0) {
        kf_error ("cannot bind %s: %s", endpoint, zmq_strerror (zmq_errno ()));
        return -1;
    }
    return 0;
}

kf_coord_t *
kf_coord_new (const kf_coord_config_t *cfg)
{
    kf_coord_t *self = calloc (1, sizeof *self);
    self->cfg = *cfg;
    self->by_id = zhashx_new ();
    zhashx_set_destructor (self->by_id, s_worker_free);
    self->by_route = zhashx_new ();
    self->outbox = zlistx_new ();
    self->results = kf_inbox_new (cfg->max_held_bytes);
    self->recorded = kf_inbox_new (cfg->max_held_bytes);
    self->started = zclock_mono ();
    self->drained = zhashx_new ();
    char *err = NULL;
    if (cfg->curve_cert && *cfg->curve_cert) {
        self->auth = kf_auth_new (cfg->curve_cert, cfg->curve_allow_dir, &err);
        if (!self->auth) {
            kf_error ("%s", err ? err : "cannot set up CURVE");
            free (err);
            kf_coord_destroy (&self);
            return NULL;
        }
        json_t *a = kf_auth_status (self->auth);
        kf_info ("CURVE on tcp:// endpoints; our public key %s",
                 json_string_value (json_object_get (a, "public_key")));
        json_decref (a);
    }
    if (s_bind (self, &self->workers, ZMQ_ROUTER, cfg->worker_endpoint, cfg->max_message)
        || s_bind (self, &self->clients, ZMQ_ROUTER, cfg->client_endpoint, cfg->max_message)
        || s_bind (self, &self->status, ZMQ_ROUTER, cfg->status_endpoint, cfg->max_message)
        || s_bind (self, &self->events, ZMQ_PUB, cfg->event_endpoint, cfg->max_message)) {
        kf_coord_destroy (&self);
        return NULL;
    }
    if (cfg->metrics_address && *cfg->metrics_address) {
        self->metrics = kf_metrics_new (cfg->metrics_address, s_metrics_text, self, &err);
        if (!self->metrics
            || (cfg->metrics_allow && kf_metrics_allow (self->metrics, cfg->metrics_allow, &err))) {
            kf_error ("%s", err ? err : "cannot serve metrics");
            free (err);
            kf_coord_destroy (&self);
            return NULL;
        }
        kf_info ("serving Prometheus metrics on http://%s/metrics", cfg->metrics_address);
    }
    self->db = kf_db_new (cfg->database_url);
    if (self->db && cfg->db_connect_s > 0)
        kf_db_set_limits (self->db, cfg->db_connect_s, cfg->db_statement_ms,
                          cfg->db_keepalive_s);
    self->search.db = self->db;
    self->search.events = json_array ();
    self->search.timing = cfg->timing;
    self->search.max_attempts = cfg->max_attempts;
    memcpy (self->search.lease_ms, cfg->lease_ms, sizeof cfg->lease_ms);
    self->search.defaults = cfg->search_defaults;
    self->search.plausible = cfg->plausible;
    self->dispatch_needed = true;
    kf_info ("serving workers on %s, clients on %s, status on %s, events on %s",
             cfg->worker_endpoint, cfg->client_endpoint, cfg->status_endpoint,
             cfg->event_endpoint);
    return self;
}

/* Connects, migrates, listens and requeues the leases of a previous
 * incarnation, once. Until then the loop serves status (database
 * "unavailable") and keeps workers registered, and the database is
 * retried with kf_db's backoff: a database that is down at start is waited
 * for, not fatal. Returns 0 when ready, -1 to try again, -2 when the
 * schema cannot be applied (fatal). */
static int
s_open_database (kf_coord_t *self)
{
    if (self->ready)
        return 0;
    if (kf_db_connect (self->db, 0)) {
        if (!self->waiting_logged)
            kf_error ("waiting for the database (retrying with backoff; status answers meanwhile)");
        self->waiting_logged = true;
        return -1;
    }
    if (kf_db_migrate (self->db))
        return kf_db_connected (self->db) ? -2 : -1;
    if (kf_db_listen (self->db, "kf_jobs"))
        return -1;
    /* Leases held by workers of a previous incarnation cannot be trusted:
     * requeue them without counting the attempt (the crash was ours). A
     * result that still arrives for one is discarded by its lease number. */
    long n = kf_db_exec (self->db,
                         "UPDATE jobs SET state = 'queued', worker = NULL,"
                         " lease_deadline = NULL, attempts = greatest(attempts - 1, 0),"
                         " reason = 'coordinator restarted', updated_at = now()"
                         " WHERE state = 'leased'",
                         0, NULL);
    if (n < 0)
        return -1;
    if (n > 0)
        kf_info ("requeued %ld job(s) leased before the restart", n);
    kf_info ("database ready");
    self->ready = true;
    self->dispatch_needed = true;
    return 0;
}

void
kf_coord_destroy (kf_coord_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    kf_coord_t *self = *self_p;
    if (self->outbox)
        s_flush_outbox (self, false);
    zlistx_destroy (&self->outbox);
    kf_inbox_destroy (&self->results);
    kf_inbox_destroy (&self->recorded);
    zhashx_destroy (&self->by_route);
    zhashx_destroy (&self->by_id);
    zsock_destroy (&self->workers);
    zsock_destroy (&self->clients);
    zsock_destroy (&self->status);
    zsock_destroy (&self->events);
    kf_metrics_destroy (&self->metrics);
    kf_auth_destroy (&self->auth);
    zhashx_destroy (&self->drained);
    kf_db_destroy (&self->db);
    json_decref (self->search.events);
    free (self);
    *self_p = NULL;
}

static void
s_send (kf_coord_t *self, zsock_t *sock, zframe_t *route, const char *type,
        json_t *body)
{
    kf_msg_t *msg = kf_msg_new (type, body);
    if (msg && kf_msg_send (&msg, sock, route, NULL) == 0)
        self->counters[C_SENT]++;
}

static void
s_reply_error (kf_coord_t *self, zsock_t *sock, zframe_t *route, const char *code,
               const char *reason)
{
    s_send (self, sock, route, "ERROR",
            json_pack ("{s:s, s:s}", "code", code, "reason", reason));
}

static void
s_publish_events (kf_coord_t *self)
{
    size_t i;
    json_t *ev;
    json_array_foreach (self->search.events, i, ev) {
        kf_msg_t *msg = kf_msg_new ("EVENT", json_incref (json_object_get (ev, "body")));
        kf_msg_send (&msg, self->events, NULL,
                     json_string_value (json_object_get (ev, "topic")));
    }
    json_array_clear (self->search.events);
}

static void
s_truncate_events (kf_coord_t *self, size_t keep)
{
    while (json_array_size (self->search.events) > keep)
        json_array_remove (self->search.events, json_array_size (self->search.events) - 1);
}

/* ---- worker bookkeeping ---------------------------------------------- */

static void
s_forget_job (s_worker_t *w, int64_t job_id)
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
        s_worker_t *w = old ? zhashx_lookup (self->by_id, old) : NULL;
        if (w)
            s_forget_job (w, json_integer_value (json_object_get (row, "id")));
        const char *state = json_string_value (json_object_get (row, "state"));
        if (!strcmp (state, "failed")) {
            char text[600];
            if (mode == S_FINAL)
                snprintf (text, sizeof text, "%.400s (not retried: it fails the same way"
                          " on any worker)", reason);
            else
                snprintf (text, sizeof text, "%.400s (after %lld attempts)", reason,
                          (long long) json_integer_value (json_object_get (row, "attempts")));
            self->counters[C_FAILED]++;
            if (kf_search_job_failed (&self->search, row, text))
                rc = -1;
        }
        else
            self->counters[uncount ? C_HANDED_BACK : C_REQUEUED]++;
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
s_worker_gone (kf_coord_t *self, s_worker_t *w, const char *why, bool left)
{
    if (json_array_size (w->jobs))
        kf_warn ("worker %s %s; requeueing its %zu job(s)", w->id, why,
                 json_array_size (w->jobs));
    char reason[200];
    snprintf (reason, sizeof reason, "worker %.100s %s", w->id, why);
    const char *params[1] = { w->id };
    if (s_requeue_ex (self, "state = 'leased' AND worker = $1", 1, params, reason,
                      left ? S_HANDED_BACK : S_RETRY))
        self->counters[C_DB_ERRORS]++;   /* the lease deadline is the backstop */
    zhashx_delete (self->by_route, w->route_key);
    zhashx_delete (self->by_id, w->id);
}

static void
s_worker_lost (kf_coord_t *self, s_worker_t *w, const char *why)
{
    s_worker_gone (self, w, why, false);
}

/* ---- worker messages --------------------------------------------------- */

/* Hands back the leases W holds that its HELLO's JOBS no longer lists. */
static void
s_unlisted_back (kf_coord_t *self, s_worker_t *w, json_t *jobs)
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
            self->counters[C_DB_ERRORS]++;
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
        s_reply_error (self, self->workers, route, "bad-request",
                       "worker_id (letters, digits, ._:@-), role or credits out of range");
        return;
    }
    s_worker_t *prev = zhashx_lookup (self->by_route, route_key);
    if (prev && strcmp (prev->id, id))
        /* A new identity on a known connection: the old one is gone. */
        s_worker_lost (self, prev, "was replaced on its connection");
    s_worker_t *w = zhashx_lookup (self->by_id, id);
    if (w) {
        /* The same worker again (it reconnected): new route. Leases it
         * held and no longer lists were lost on its side (a restart, a
         * result it could not keep): back to the queue now, without the
         * attempt (issue 13, item 9), instead of at their lease's end. */
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
    /* Jobs it still runs keep their credits busy. */
    json_t *jobs = json_object_get (msg->body, "jobs");
    json_array_clear (w->jobs);
    json_array_foreach (jobs, i, b)
        if (json_is_integer (b))
            json_array_append (w->jobs, b);
    zhashx_insert (self->by_route, route_key, w);

    char *caps = json_dumps (w->caps, JSON_COMPACT);
    const char *params[5] = { id, role, w->name, w->host, caps };
    kf_db_exec (self->db,
                "INSERT INTO workers (id, role, name, host, capabilities)"
                " VALUES ($1, $2, $3, $4, $5) ON CONFLICT (id) DO UPDATE SET"
                " role = $2, name = $3, host = $4, capabilities = $5, last_seen = now()",
                5, params);
    free (caps);
    s_send (self, self->workers, route, "WELCOME",
            json_pack ("{s:s, s:i, s:i}", "worker_id", id, "heartbeat_ms",
                       self->cfg.heartbeat_ms, "liveness", self->cfg.liveness));
    self->dispatch_needed = true;
}

/* A RESULT counts only from the worker W that holds its lease, with the
 * lease's token (kf_lease.h): then it waits in the pass's batch, recorded
 * by s_complete_results. Any other (from a peer that never said HELLO,
 * from another worker, for a lease lost since, or with a wrong token) is
 * discarded: counted as late, and as refused when its sender said no
 * HELLO or the job is held (by another worker, or under another token).
 * Takes *MSG_P. */
static void
s_on_result (kf_coord_t *self, s_worker_t *w, kf_msg_t **msg_p)
{
    int64_t job_id = kf_msg_int (*msg_p, "job_id", 0);
    if (!w || !kf_lease_book_holds (w->book, job_id, kf_msg_int (*msg_p, "lease", 0),
                                    kf_msg_str (*msg_p, "lease_token"))) {
        self->counters[C_LATE]++;
        /* A job it listed in HELLO but holds no lease of (one from before
         * a restart of ours) stops taking its credit now. */
        if (w && !kf_lease_book_has (w->book, job_id))
            s_forget_job (w, job_id);
        bool refused = !w;
        for (s_worker_t *o = zhashx_first (self->by_id); o && !refused;
             o = zhashx_next (self->by_id))
            refused = kf_lease_book_has (o->book, job_id);   /* held: not by this one */
        if (refused) {
            self->counters[C_REFUSED]++;
            kf_warn ("refused a RESULT for job %lld from %s: not the lease holder's",
                     (long long) job_id, w ? w->id : "a peer that said no HELLO");
        }
        kf_msg_destroy (msg_p);
        return;
    }
    s_forget_job (w, job_id);
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
        self->counters[C_DB_ERRORS]++;
}

/* Records every RESULT waiting: failures requeue their jobs; the
 * successes are completed in one statement: the batch goes in as one JSON
 * array, and only rows whose lease still matches come back. Each returned
 * job of a run then takes its search step, in a savepoint so a failing
 * step does not undo the others. The messages move to RECORDED until the
 * pass's transaction ends (kf_coord_run keeps them for another try when it
 * does not commit). */
static void
s_complete_results (kf_coord_t *self)
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
        self->counters[C_DB_ERRORS]++;
    else {
        self->counters[C_DONE] += (long) json_array_size (rows);
        self->counters[C_LATE] += (long) (zhashx_size (by_job) - json_array_size (rows));
        size_t i;
        json_t *job;
        json_array_foreach (rows, i, job) {
            if (!json_integer_value (json_object_get (job, "run_id")))
                continue;
            char key[24];
            S_I64 (key, json_integer_value (json_object_get (job, "id")));
            kf_msg_t *m = zhashx_lookup (by_job, key);
            size_t events_before = json_array_size (self->search.events);
            if (kf_db_exec (self->db, "SAVEPOINT result", 0, NULL) < 0
                || kf_search_job_done (&self->search, job,
                                       json_object_get (m->body, "result"), m->frames)) {
                kf_error ("job %s: search step failed: %s", key, kf_db_error (self->db));
                self->counters[C_DB_ERRORS]++;
                kf_db_exec (self->db, "ROLLBACK TO SAVEPOINT result", 0, NULL);
                s_truncate_events (self, events_before);
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
static void
s_results_after_commit (kf_coord_t *self, bool committed)
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
    self->counters[C_HELD_DROPPED] += (long) dropped;
}

static void
s_route_key (zframe_t *route, char *out, size_t size)
{
    char *hex = zframe_strhex (route);
    snprintf (out, size, "%s", hex);
    free (hex);
}

static void
s_on_worker_message (kf_coord_t *self, zframe_t *route, kf_msg_t **msg_p)
{
    kf_msg_t *msg = *msg_p;
    char key[128];
    s_route_key (route, key, sizeof key);
    s_worker_t *w = zhashx_lookup (self->by_route, key);
    if (w)
        w->last_heard = zclock_mono ();
    if (!strcmp (msg->type, "HELLO"))
        s_on_hello (self, route, key, msg);
    else if (!strcmp (msg->type, "RESULT")) {
        s_on_result (self, w, msg_p);
        if (!w)
            s_reply_error (self, self->workers, route, "unknown-worker", "say HELLO");
    }
    else if (!strcmp (msg->type, "ERROR")) {
        /* Logged and counted; never answered with an ERROR (PROTOCOL.md). */
        self->counters[C_WORKER_ERRORS]++;
        kf_warn ("worker %s says %.40s: %.200s", w ? w->id : "(no HELLO)",
                 kf_msg_str (msg, "code"), kf_msg_str (msg, "reason"));
    }
    else if (!w)
        s_reply_error (self, self->workers, route, "unknown-worker", "say HELLO");
    else if (!strcmp (msg->type, "HEARTBEAT")) {
        /* Credits 0: the worker is stopping (SIGTERM). */
        int64_t credits = kf_msg_int (msg, "credits", w->credits);
        w->draining = credits == 0 || zhashx_lookup (self->drained, w->id);
    }
    else if (!strcmp (msg->type, "BYE")) {
        kf_info ("worker %s said goodbye", w->id);
        s_complete_results (self);   /* its last results came just before */
        s_worker_gone (self, w, "left", true);
    }
}

static void s_on_client_message (kf_coord_t *self, zsock_t *sock, zframe_t *route,
                                 kf_msg_t *msg);

/* Reads every waiting message from SOCK, up to the batch size. */
static void
s_drain (kf_coord_t *self, zsock_t *sock, kf_endpoint_t ep)
{
    for (int i = 0; i < self->cfg.batch; i++) {
        /* Bounded while it is read (kf_proto_recv_bounded): frames past
         * the count or size cap are let go as they come. */
        zmsg_t *zmsg = NULL;
        const char *reason = "";
        kf_proto_rc_t rc = kf_proto_recv_bounded (sock, 1, self->cfg.max_message, &zmsg,
                                                  &reason);
        if (rc == KF_PROTO_NOMSG)
            break;
        self->counters[C_RECEIVED]++;
        zframe_t *route = NULL;
        kf_msg_t *msg = NULL;
        /* An ERROR is never answered with an ERROR, even a malformed one. */
        bool is_error = false;
        if (zmsg && zmsg_size (zmsg) >= 3) {
            zmsg_first (zmsg);                 /* routing id */
            zmsg_next (zmsg);                  /* signature */
            zframe_t *type = zmsg_next (zmsg);
            is_error = type && zframe_streq (type, "ERROR");
        }
        if (rc == KF_PROTO_OK)
            rc = kf_msg_decode (&zmsg, ep, self->cfg.max_message, true, false, &route, &msg,
                                &reason);
        else {
            route = zmsg_pop (zmsg);
            zmsg_destroy (&zmsg);
        }
        if (rc != KF_PROTO_OK) {
            self->errors[rc]++;
            if (route && !is_error)
                s_reply_error (self, sock, route, kf_proto_rc_name (rc), reason);
        }
        else if (ep == KF_EP_WORKER_IN)
            s_on_worker_message (self, route, &msg);
        else
            s_on_client_message (self, sock, route, msg);
        kf_msg_destroy (&msg);
        zframe_destroy (&route);
    }
}

/* ---- dispatch ------------------------------------------------------------ */

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
s_free_credits (const s_worker_t *w)
{
    return kf_lease_allowance (w->credits, w->finished) - (int) json_array_size (w->jobs);
}

static int s_dispatch_group (kf_coord_t *self, zlistx_t *list);

/* Queues the JOB messages of ROWS (leased jobs: id, lease, kind, payload,
 * blobs, worker) in the outbox, to be sent once the lease commits. */
static void
s_send_leased (kf_coord_t *self, json_t *rows)
{
    size_t i;
    json_t *row;
    json_array_foreach (rows, i, row) {
        int64_t job_id = json_integer_value (json_object_get (row, "id"));
        s_worker_t *w = zhashx_lookup (
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
                                  json_integer_value (json_object_get (row, "lease")), token)
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
    s_worker_t *first = zlistx_first (list);
    if (strcmp (first->role, "execute") || !kf_verify_queued (self->db, first->role))
        return 0;
    for (s_worker_t *w = zlistx_first (list); w; w = zlistx_next (list)) {
        int free_credits = s_free_credits (w);
        if (free_credits <= 0)
            continue;
        //  Right after a start the others may not have said HELLO yet:
        //  nobody is alone until each had its liveness window to do so.
        bool alone = zclock_mono () - self->started
                     > (int64_t) self->cfg.heartbeat_ms * self->cfg.liveness;
        for (s_worker_t *o = zhashx_first (self->by_id); o && alone;
             o = zhashx_next (self->by_id))
            alone = o == w || o->draining || strcmp (o->role, w->role)
                    || strcmp (o->backends, w->backends) || strcmp (o->arch, w->arch);
        json_t *rows = kf_verify_lease (self->db, w->role, w->backends, w->arch, w->id,
                                        free_credits, alone);
        if (!rows)
            return -1;
        s_send_leased (self, rows);
        json_decref (rows);
    }
    return 0;
}

/* Leases queued jobs to every worker with free credits. Workers with the
 * same role and capabilities form one group and share one statement: the
 * array of worker ids, one entry per free credit in round-robin order, is
 * matched to the leased jobs by row number. The JOB messages wait in the
 * outbox until the transaction that leased them commits. */
static void
s_dispatch (kf_coord_t *self)
{
    self->dispatch_needed = false;
    zhashx_t *groups = zhashx_new ();   /* key -> zlistx of s_worker_t */
    zhashx_set_destructor (groups, (zhashx_destructor_fn *) zlistx_destroy);
    for (s_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
        if (w->draining || s_free_credits (w) <= 0)
            continue;
        char key[400];
        snprintf (key, sizeof key, "%s|%s|%s", w->role, w->backends, w->arch);
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
            self->counters[C_DB_ERRORS]++;
            break;
        }
        size_t outbox_before = zlistx_size (self->outbox);
        int rc = s_dispatch_group (self, list);
        if (rc == 0)
            kf_db_exec (self->db, "RELEASE SAVEPOINT dispatch", 0, NULL);
        else {
            s_worker_t *first = zlistx_first (list);
            kf_error ("dispatch to %s workers (%s, %s) failed: %s", first->role, first->backends,
                      first->arch, kf_db_error (self->db));
            self->counters[C_DISPATCH_FAILED]++;
            self->counters[C_DB_ERRORS]++;
            /* Forget what this group was given: its leases are undone. */
            while (zlistx_size (self->outbox) > outbox_before) {
                s_outbox_t *o = zlistx_last (self->outbox);
                zlistx_detach_cur (self->outbox);
                s_worker_t *w = zhashx_lookup (self->by_id, o->worker_id);
                if (w)
                    s_forget_job (w, o->job_id);
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
    s_worker_t *first = zlistx_first (list);
    /* Round-robin over free credits so jobs spread over the group. */
    kf_pgarray_t *ids = kf_pgarray_new ();
    int total = 0;
    for (int round = 0; round < 4096; round++) {
        int added = 0;
        for (s_worker_t *w = zlistx_first (list); w; w = zlistx_next (list))
            if (s_free_credits (w) > round) {
                kf_pgarray_add (ids, w->id);
                total++;
                added++;
            }
        if (!added)
            break;
    }
    char limit[24];
    const char *params[5] = { first->role, first->backends, first->arch,
                              S_I64 (limit, total), kf_pgarray_text (ids) };
    json_t *rows = s_one_source (self, first->role)
        ? kf_db_query (self->db,
                       "WITH locked AS (SELECT id FROM jobs WHERE state = 'queued'"
                       "  AND role = $1 AND (backend IS NULL OR backend = ANY($2::text[]))"
                       "  AND avoid_worker IS NULL"
                       "  AND (arch IS NULL OR arch = $3)"
                       "  ORDER BY role, id LIMIT $4 FOR UPDATE SKIP LOCKED),"
                       " picked AS (SELECT id, row_number() OVER (ORDER BY id) AS rn"
                       "  FROM locked)"
                       S_LEASE_PICKED,
                       5, params)
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
        "    AND (arch IS NULL OR arch = $3) ORDER BY id LIMIT $4) c"
        "  UNION ALL"
        "  SELECT id, row_number() OVER (ORDER BY id), NULL::timestamptz FROM"
        /* Ordered as the (role, run_id, id) queued index is, so that
         * index serves it: ordered by id alone, the primary key did
         * once its statistics were stale, stepping over every done
         * job (28 ms a pass behind 15,000 of them). */
        "   (SELECT id FROM jobs WHERE state = 'queued' AND role = $1 AND run_id IS NULL"
        "    AND (backend IS NULL OR backend = ANY($2::text[]))"
        "    AND (arch IS NULL OR arch = $3) ORDER BY role, run_id, id LIMIT $4) n),"
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
        5, params);
    kf_pgarray_destroy (&ids);
    if (!rows)
        return -1;
    s_send_leased (self, rows);
    json_decref (rows);
    return 0;
}

/* After the loop's transaction: send the leased jobs, or, when it did not
 * commit, forget them (they are still queued in the database). */
static void
s_flush_outbox (kf_coord_t *self, bool committed)
{
    s_outbox_t *o;
    while ((o = zlistx_detach (self->outbox, NULL))) {
        s_worker_t *w = zhashx_lookup (self->by_id, o->worker_id);
        if (committed && w) {
            self->counters[C_DISPATCHED]++;
            if (kf_msg_send (&o->msg, self->workers, w->route, NULL) == 0)
                self->counters[C_SENT]++;
        }
        else if (w)
            s_forget_job (w, o->job_id);
        kf_msg_destroy (&o->msg);
        free (o->worker_id);
        free (o);
    }
}

/* ---- cron ---------------------------------------------------------------- */

static void
s_cron (kf_coord_t *self)
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
        for (s_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
            /* A peer flooding the socket cannot keep a dead worker alive
             * for ever: past twice its window it is judged regardless. */
            int64_t silent = now - w->last_heard;
            if (silent > window && (!unread || silent > 2 * window))
                zlistx_add_end (dead, w);
            else
                s_send (self, self->workers, w->route, "HEARTBEAT", NULL);
        }
        for (s_worker_t *w = zlistx_first (dead); w; w = zlistx_next (dead))
            s_worker_lost (self, w, "missed its heartbeats");
        zlistx_destroy (&dead);
    }
    if (self->ready && now >= self->next_lease_check) {
        self->next_lease_check = now + 1000;
        if (s_requeue (self, "state = 'leased' AND lease_deadline < now()", 0, NULL,
                       "lease expired"))
            self->counters[C_DB_ERRORS]++;
        /* Leases of workers this coordinator no longer knows: one declared
         * gone in a pass that did not commit (the database was away) still
         * holds its jobs. Swept once after such a pass; a sweep that does
         * not commit either is one more such pass. */
        kf_pgarray_t *ids = self->sweep_orphans ? kf_pgarray_new () : NULL;
        if (ids) {
            self->sweep_orphans = false;
            for (s_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id))
                kf_pgarray_add (ids, w->id);
            const char *params[1] = { kf_pgarray_text (ids) };
            if (s_requeue (self, "state = 'leased' AND NOT (worker = ANY($1::text[]))", 1,
                           params, "its worker is gone"))
                self->counters[C_DB_ERRORS]++;
            kf_pgarray_destroy (&ids);
        }
        /* Jobs may have been added by another writer (benchmarks). */
        self->dispatch_needed = true;
    }
}

/* ---- clients --------------------------------------------------------------- */

static const char *S_RUN_COLUMNS =
    "SELECT r.id, t.name AS task_name, r.status, r.target, r.generation,"
    " r.generations, r.population, r.seed,"
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id"
    "  AND c.finished_at IS NOT NULL) AS done,"
    /* The main phase's plan, or every candidate once tuning rounds add more. */
    " greatest(r.generations * r.population,"
    "  (SELECT count(*) FROM candidates c WHERE c.run_id = r.id)) AS total,"
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id"
    "  AND c.audit_reason IS NOT NULL AND c.audit_verdict IS NULL) AS held_for_audit,"
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id"
    "  AND c.verify_state = 'pending') AS verifying,"
    /* Multi-fidelity timing (kf_fidelity.c): screen figures only, and
     * screens waiting for their full-protocol evaluation. */
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id"
    "  AND c.fidelity = 'screen') AS screened_out,"
    " (SELECT count(*) FROM candidates c WHERE c.run_id = r.id"
    "  AND c.fidelity = 'pending') AS full_pending,"
    " r.best_speedup, r.first_speedup,"
    " r.best_candidate_id, r.reason, r.input_tokens, r.output_tokens, r.cost_usd,"
    " r.ref_eager_ns, r.ref_compiled_ns, r.warnings,"   /* kf_reference.c */
    " r.created_at::text AS created_at,"
    " r.finished_at::text AS finished_at"
    " FROM runs r JOIN tasks t ON t.id = r.task_id";

static json_t *
s_run_object (kf_coord_t *self, int64_t run_id)
{
    char sql[2048], id[24];
    snprintf (sql, sizeof sql, "%s WHERE r.id = $1", S_RUN_COLUMNS);
    const char *params[1] = { S_I64 (id, run_id) };
    return kf_db_row (self->db, sql, 1, params, NULL);
}

/* Checks a target name: host | cuda | level-zero, optionally ":arch". */
static bool
s_target_ok (const char *target)
{
    static const char *backends[] = { "host", "cuda", "level-zero" };
    for (size_t i = 0; i < 3; i++) {
        size_t n = strlen (backends[i]);
        if (!strncmp (target, backends[i], n)
            && (target[n] == 0
                || (target[n] == ':' && target[n + 1]
                    && strlen (target + n + 1) < 32
                    && strspn (target + n + 1, "abcdefghijklmnopqrstuvwxyz0123456789_.-")
                           == strlen (target + n + 1))))
            return true;
    }
    return false;
}

/* Checks a number field of CONFIG: absent is fine, else within [LO, HI]. */
static int
s_number_in (json_t *config, const char *key, double lo, double hi, char **why)
{
    json_t *v = json_object_get (config, key);
    if (!v)
        return 0;
    if (!json_is_number (v) || json_number_value (v) < lo || json_number_value (v) > hi)
        return kf_fail (why, "config.%s must be a number in [%g, %g]", key, lo, hi);
    return 0;
}

/* The generator settings of a run from its SUBMIT config: the model spec
 * as an ensemble, the first generation's model, sampling settings (the
 * paper's Table 6 by default) and the budget. NULL with *WHY when bad. */
static json_t *
s_generator_config (json_t *config, char **why)
{
    const char *spec = json_string_value (json_object_get (config, "model"));
    json_t *models = kf_models_parse (spec ? spec : "offline", why);
    if (!models)
        return NULL;
    /* Sampling settings left out take the search defaults at run start
     * (kf_search.c, coordinator/search-defaults.json). */
    json_t *out = json_pack ("{s:o}", "models", models);
    const char *first = json_string_value (json_object_get (config, "first_model"));
    const char *meta = json_string_value (json_object_get (config, "meta_model"));
    json_t *budget = json_object_get (config, "budget");
    if ((first && kf_models_check (first, why))
        || (meta && kf_models_check (meta, why))
        || s_number_in (config, "temperature", 0, 2, why)
        || s_number_in (config, "top_p", 0, 1, why)
        || s_number_in (config, "max_tokens", 1, 1000000, why)
        || (budget && (!json_is_object (budget)
                       || s_number_in (budget, "tokens", 1, 1e15, why)
                       || s_number_in (budget, "usd", 0.000001, 1e9, why)))) {
        if (budget && !json_is_object (budget) && !*why)
            kf_fail (why, "config.budget must be an object {tokens, usd}");
        json_decref (out);
        return NULL;
    }
    json_t *bins = json_object_get (config, "archive_bins");
    if (bins && (!json_is_integer (bins) || json_integer_value (bins) < 1
                 || json_integer_value (bins) > 4)) {
        kf_fail (why, "config.archive_bins must be an integer in 1..4");
        json_decref (out);
        return NULL;
    }
    json_t *tune = json_object_get (config, "tune");
    if (tune && (!json_is_integer (tune) || json_integer_value (tune) < 1
                 || json_integer_value (tune) > 16)) {
        kf_fail (why, "config.tune must be an integer in 1..16 (kf-tune points per candidate)");
        json_decref (out);
        return NULL;
    }
    static const char *copied[] = { "first_model", "temperature", "top_p", "max_tokens", "budget",
                                    "archive_bins", "tune", "meta_model" };
    for (size_t i = 0; i < sizeof copied / sizeof copied[0]; i++)
        if (json_object_get (config, copied[i]))
            json_object_set (out, copied[i], json_object_get (config, copied[i]));
    if (kf_search_config_check (config, out, why)) {
        json_decref (out);
        return NULL;
    }
    return out;
}

static void
s_on_submit (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    json_t *task = json_object_get (msg->body, "task");
    json_t *config = json_object_get (msg->body, "config");
    char *err = NULL;
    if (kf_task_validate (task, &err)) {
        s_reply_error (self, sock, route, "bad-request", err ? err : "invalid task");
        free (err);
        return;
    }
    const char *target = json_string_value (json_object_get (config, "target"));
    if (!target)
        target = "host";
    json_int_t generations = json_integer_value (json_object_get (config, "generations"));
    json_int_t population = json_integer_value (json_object_get (config, "population"));
    json_t *seed_v = json_object_get (config, "seed");
    json_int_t seed = json_is_integer (seed_v) ? json_integer_value (seed_v)
                                               : (json_int_t) (zclock_time () & 0xffffff);
    if (!generations)
        generations = json_integer_value (kf_search_default (&self->search, "generations"));
    if (!population)
        population = json_integer_value (kf_search_default (&self->search, "population"));
    if (!s_target_ok (target) || generations < 1 || generations > 100000
        || population < 1 || population > 10000 || seed < 0) {
        s_reply_error (self, sock, route, "bad-request",
                       "config: target must be host, cuda or level-zero (optionally"
                       " :arch); generations 1..100000; population 1..10000; seed >= 0");
        return;
    }
    json_t *timing = json_object_get (config, "timing");
    if (timing && !json_is_object (timing)) {
        s_reply_error (self, sock, route, "bad-request", "config.timing must be an object");
        return;
    }
    char *why = NULL;
    json_t *generator = s_generator_config (config, &why);
    if (!generator) {
        s_reply_error (self, sock, route, "bad-request", why ? why : "bad generator settings");
        free (why);
        return;
    }
    const char *backend_end = strchr (target, ':');
    size_t blen = backend_end ? (size_t) (backend_end - target) : strlen (target);
    const char *language = !strncmp (target, "cuda", blen) ? "cuda"
                           : !strncmp (target, "level-zero", blen) ? "opencl" : "c";
    char hash[65];
    kf_task_hash (task, hash);
    char *spec = json_dumps (task, JSON_COMPACT | JSON_SORT_KEYS);
    json_t *stored_config = json_pack ("{s:s, s:I, s:I, s:I}", "target", target,
                                       "generations", generations, "population",
                                       population, "seed", seed);
    if (timing)
        json_object_set (stored_config, "timing", timing);
    if (json_is_true (json_object_get (config, "allow_degenerate")))   /* kf_reference.c */
        json_object_set_new (stored_config, "allow_degenerate", json_true ());
    json_object_update (stored_config, generator);
    json_decref (generator);
    char *config_text = json_dumps (stored_config, JSON_COMPACT);
    json_decref (stored_config);
    const char *name = json_string_value (json_object_get (task, "name"));
    char g[24], p[24], s[24];
    const char *tparams[3] = { name ? name : "task", hash, spec };
    int64_t run_id = 0;
    if (kf_db_begin (self->db) == 0) {
        json_t *trow = kf_db_row (self->db,
                                  "INSERT INTO tasks (name, hash, spec) VALUES ($1, $2, $3)"
                                  " ON CONFLICT (hash) DO UPDATE SET name = EXCLUDED.name"
                                  " RETURNING id",
                                  3, tparams, NULL);
        if (trow) {
            char tid[24];
            const char *rparams[7] = {
                S_I64 (tid, json_integer_value (json_object_get (trow, "id"))),
                target, language, S_I64 (g, generations), S_I64 (p, population),
                S_I64 (s, seed), config_text };
            json_t *rrow = kf_db_row (self->db,
                                      "INSERT INTO runs (task_id, target, language,"
                                      " generations, population, seed, config)"
                                      " VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id",
                                      7, rparams, NULL);
            run_id = json_integer_value (json_object_get (rrow, "id"));
            json_decref (rrow);
        }
        json_decref (trow);
        if (run_id && kf_search_start_run (&self->search, run_id) == 0
            && kf_db_commit (self->db) == 0)
            s_publish_events (self);
        else {
            run_id = 0;
            kf_db_rollback (self->db);
            s_truncate_events (self, 0);
        }
    }
    free (spec);
    free (config_text);
    if (!run_id) {
        s_reply_error (self, sock, route, "unavailable", "the database did not accept the run");
        return;
    }
    kf_info ("run %lld submitted: task %s, target %s, %lld x %lld", (long long) run_id,
             name, target, (long long) generations, (long long) population);
    self->dispatch_needed = true;
    s_send (self, sock, route, "SUBMITTED", json_pack ("{s:I}", "run_id", (json_int_t) run_id));
}

static void
s_on_cancel (kf_coord_t *self, zsock_t *sock, zframe_t *route, int64_t run_id)
{
    char id[24];
    const char *params[1] = { S_I64 (id, run_id) };
    long n = -1;
    if (kf_db_begin (self->db) == 0) {
        n = kf_db_exec (self->db,
                        "UPDATE runs SET status = 'cancelled', reason = 'cancelled by user',"
                        " finished_at = now() WHERE id = $1 AND status = 'running'",
                        1, params);
        if (n > 0)
            kf_db_exec (self->db,
                        "UPDATE jobs SET state = 'failed', reason = 'run cancelled',"
                        " updated_at = now() WHERE run_id = $1"
                        " AND state IN ('queued', 'leased')",
                        1, params);
        if (kf_db_commit (self->db))
            n = -1;
    }
    if (n < 0)
        s_reply_error (self, sock, route, "unavailable", "database unavailable");
    else if (n == 0)
        s_reply_error (self, sock, route, "not-found", "no running run with that id");
    else {
        json_t *ev = json_pack ("{s:I, s:s, s:s, s:s}", "run_id", (json_int_t) run_id,
                                "event", "finished", "status", "cancelled", "reason",
                                "cancelled by user");
        char topic[48];
        snprintf (topic, sizeof topic, "run/%lld/", (long long) run_id);
        kf_msg_t *m = kf_msg_new ("EVENT", ev);
        kf_msg_send (&m, self->events, NULL, topic);
        s_send (self, sock, route, "CANCELLED", json_pack ("{s:I}", "run_id", (json_int_t) run_id));
    }
}

/* DRAIN {worker_id, resume}: an operator stops (or resumes) giving a
 * worker new jobs; the ones it holds run to the end. Remembered by id in
 * memory, so it holds across the worker's reconnects but not across a
 * coordinator restart. */
static void
s_on_drain (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    const char *id = kf_msg_str (msg, "worker_id");
    bool resume = json_is_true (json_object_get (msg->body, "resume"));
    s_worker_t *w = zhashx_lookup (self->by_id, id);
    if (!w) {
        s_reply_error (self, sock, route, "not-found", "no connected worker with that id");
        return;
    }
    if (resume) {
        zhashx_delete (self->drained, id);
        w->draining = false;
        self->dispatch_needed = true;
        kf_info ("worker %s resumed by an operator", id);
    }
    else {
        zhashx_update (self->drained, id, self);   /* a set: the value is unused */
        w->draining = true;
        kf_info ("worker %s drained by an operator; %zu job(s) to finish", id,
                 json_array_size (w->jobs));
    }
    s_send (self, sock, route, "DRAINING",
            json_pack ("{s:s, s:b, s:O}", "worker_id", id, "draining", w->draining,
                       "jobs", w->jobs));
}

/* AUDIT {candidate_id, verdict: "accept"|"reject"}: a person's word on a
 * result the evaluator flagged (kf_search_audit). */
static void
s_on_audit (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    int64_t cand = kf_msg_int (msg, "candidate_id", 0);
    const char *verdict = kf_msg_str (msg, "verdict");
    bool accept = !strcmp (verdict, "accept");
    if (!accept && strcmp (verdict, "reject")) {
        s_reply_error (self, sock, route, "bad-request", "verdict must be accept or reject");
        return;
    }
    json_t *out = NULL;
    int rc = kf_db_begin (self->db) == 0 ? kf_search_audit (&self->search, cand, accept, &out)
                                         : -1;
    if (rc == 0 && kf_db_commit (self->db) == 0) {
        s_publish_events (self);
        kf_info ("candidate %lld %s after audit by an operator", (long long) cand,
                 accept ? "accepted" : "rejected");
        s_send (self, sock, route, "AUDITED", out);
        return;
    }
    json_decref (out);
    kf_db_rollback (self->db);
    s_truncate_events (self, 0);
    if (rc == 1)
        s_reply_error (self, sock, route, "not-found",
                       "no candidate with that id, or it was not flagged for audit");
    else
        s_reply_error (self, sock, route, "unavailable", "database unavailable");
}

static json_t *
s_workers_array (kf_coord_t *self)
{
    json_t *out = json_array ();
    int64_t now = zclock_mono ();
    for (s_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id))
        json_array_append_new (
            out, json_pack ("{s:s, s:s, s:s, s:s, s:O, s:i, s:O, s:b, s:b, s:I}", "id",
                            w->id, "role", w->role, "name", w->name, "host", w->host,
                            "capabilities", w->caps, "credits", w->credits, "jobs",
                            w->jobs, "draining", w->draining, "drained",
                            zhashx_lookup (self->drained, w->id) != NULL,
                            "last_heartbeat_ms_ago", (json_int_t) (now - w->last_heard)));
    return out;
}

static json_t *
s_status (kf_coord_t *self)
{
    json_t *counters = json_object ();
    for (int i = 0; i < C_N; i++)
        json_object_set_new (counters, s_counter_names[i], json_integer (self->counters[i]));
    for (int i = KF_PROTO_MALFORMED; i <= KF_PROTO_UNKNOWN_TYPE; i++)
        json_object_set_new (counters, kf_proto_rc_name (i), json_integer (self->errors[i]));
    json_object_set_new (counters, "db_statements",
                         json_integer (kf_db_statements (self->db)));
    json_object_set_new (counters, "db_prepared", json_integer (kf_db_prepared (self->db)));
    json_object_set_new (counters, "metrics_refused",
                         json_integer (self->metrics ? kf_metrics_refused (self->metrics) : 0));
    json_object_set_new (counters, "auth_denied",
                         json_integer (self->auth ? kf_auth_denied (self->auth) : 0));
    json_t *status = json_pack ("{s:o, s:o, s:I, s:i}", "workers", s_workers_array (self),
                                "counters", counters, "uptime_s",
                                (json_int_t) ((zclock_mono () - self->started) / 1000),
                                "version", KF_PROTO_VERSION);
    json_t *queues = kf_db_query (self->db,
                                  "SELECT role, count(*) FILTER (WHERE state = 'queued') AS queued,"
                                  " count(*) FILTER (WHERE state = 'leased') AS leased"
                                  " FROM jobs WHERE state IN ('queued', 'leased') GROUP BY role",
                                  0, NULL);
    char sql[2048];
    snprintf (sql, sizeof sql,
              "%s WHERE r.status = 'running' OR r.id IN"
              " (SELECT id FROM runs ORDER BY id DESC LIMIT 10) ORDER BY r.id", S_RUN_COLUMNS);
    json_t *runs = queues ? kf_db_query (self->db, sql, 0, NULL) : NULL;
    json_t *qobj = json_object ();
    size_t i;
    json_t *row;
    json_array_foreach (queues, i, row)
        json_object_set (qobj, json_string_value (json_object_get (row, "role")), row);
    json_object_set_new (status, "queues", qobj);
    json_object_set_new (status, "runs", runs ? runs : json_array ());
    json_object_set_new (status, "database",
                         json_string (queues && runs ? "ok" : "unavailable"));
    if (self->auth)
        json_object_set_new (status, "auth", kf_auth_status (self->auth));
    json_decref (queues);
    return status;
}

static void
s_on_client_message (kf_coord_t *self, zsock_t *sock, zframe_t *route, kf_msg_t *msg)
{
    const char *type = msg->type;
    int64_t run_id = kf_msg_int (msg, "run_id", 0);
    if (!strcmp (type, "STATUS"))
        s_send (self, sock, route, "STATUS", s_status (self));
    else if (!strcmp (type, "WORKERS"))
        s_send (self, sock, route, "WORKERS",
                json_pack ("{s:o}", "workers", s_workers_array (self)));
    else if (!strcmp (type, "SUBMIT"))
        s_on_submit (self, sock, route, msg);
    else if (!strcmp (type, "DRAIN"))
        s_on_drain (self, sock, route, msg);
    else if (!strcmp (type, "AUDIT"))
        s_on_audit (self, sock, route, msg);
    else if (!strcmp (type, "CANCEL"))
        s_on_cancel (self, sock, route, run_id);
    else if (!strcmp (type, "RUNS")) {
        char sql[2048];
        snprintf (sql, sizeof sql, "%s ORDER BY r.id", S_RUN_COLUMNS);
        json_t *runs = kf_db_query (self->db, sql, 0, NULL);
        if (runs)
            s_send (self, sock, route, "RUNS", json_pack ("{s:o}", "runs", runs));
        else
            s_reply_error (self, sock, route, "unavailable", "database unavailable");
    }
    else if (!strcmp (type, "SHOW") || !strcmp (type, "BEST")) {
        json_t *run = s_run_object (self, run_id);
        if (!run) {
            s_reply_error (self, sock, route, "not-found", "no run with that id");
            return;
        }
        char id[24];
        const char *params[1] = { S_I64 (id, run_id) };
        if (!strcmp (type, "SHOW")) {
            json_t *cands = kf_db_query (
                self->db,
                "SELECT id, generation, slot, parent_id, status, language, speedup,"
                " fitness, generator, model, cost_usd, coords::text AS coords,"
                " verdict_detail, audit_reason, audit_verdict, verify_state,"
                " verify_reason, verify_speedup, fidelity, screen_speedup FROM candidates"
                " WHERE run_id = $1"
                " ORDER BY generation, slot",
                1, params);
            json_t *cells = kf_db_query (
                self->db,
                "SELECT a.cell::text AS cell, a.candidate_id, a.speedup, a.fitness"
                " FROM archive_cells a WHERE a.run_id = $1 ORDER BY a.cell",
                1, params);
            json_t *models = kf_db_query (
                self->db,
                "SELECT model, count(*) AS candidates,"
                " coalesce(sum((usage->>'input_tokens')::bigint), 0) AS input_tokens,"
                " coalesce(sum((usage->>'output_tokens')::bigint), 0) AS output_tokens,"
                " coalesce(sum(cost_usd), 0) AS cost_usd"
                " FROM candidates WHERE run_id = $1 AND model IS NOT NULL"
                " GROUP BY model ORDER BY model",
                1, params);
            json_t *body = json_pack ("{s:o, s:o, s:o, s:o}", "run", run, "candidates",
                                      cands ? cands : json_array (), "archive",
                                      cells ? cells : json_array (), "models",
                                      models ? models : json_array ());
            /* prompt_versions, prompt_rejected, meta_jobs (kf_meta.h) */
            json_t *prompts = kf_meta_show (self->db, run_id);
            json_object_update (body, prompts);
            json_decref (prompts);
            s_send (self, sock, route, "RUN", body);
            return;
        }
        json_t *cand = kf_db_row (self->db,
                                  "SELECT c.id, c.generation, c.slot, c.parent_id, c.status,"
                                  " c.language, c.speedup, c.verdict_detail, c.source_hash"
                                  " FROM runs r JOIN candidates c ON c.id = r.best_candidate_id"
                                  " WHERE r.id = $1",
                                  1, params, NULL);
        json_decref (run);
        if (!cand) {
            s_reply_error (self, sock, route, "not-found", "the run has no correct candidate yet");
            return;
        }
        void *data = NULL;
        size_t size = 0;
        kf_db_fetch_blob (self->db, "SELECT data FROM blobs WHERE hash = $1",
                          json_string_value (json_object_get (cand, "source_hash")),
                          &data, &size);
        kf_msg_t *reply = kf_msg_new ("BEST", json_pack ("{s:I, s:o}", "run_id",
                                                         (json_int_t) run_id, "candidate", cand));
        kf_msg_add_frame (reply, data ? data : "", size);
        free (data);
        if (kf_msg_send (&reply, sock, route, NULL) == 0)
            self->counters[C_SENT]++;
    }
}

/* ---- metrics ------------------------------------------------------------- */

/* LABEL="VALUE" with VALUE escaped as the exposition format wants. */
static void
s_label (char *out, size_t size, const char *label, const char *value)
{
    size_t n = (size_t) snprintf (out, size, "%s=\"", label);
    for (const char *p = value ? value : ""; *p && n + 4 < size; p++) {
        if (*p == '\\' || *p == '"')
            out[n++] = '\\', out[n++] = *p;
        else if (*p == '\n')
            out[n++] = '\\', out[n++] = 'n';
        else
            out[n++] = *p;
    }
    snprintf (out + n, size - n, "\"");
}

static double
s_num (json_t *row, const char *key)
{
    json_t *v = json_object_get (row, key);
    return json_is_number (v) ? json_number_value (v) : 0;
}

/* The exposition text of one scrape; names and meanings are listed in
 * docs/operations.md ("Metrics"). Counters named *_total are this
 * process's since it started, except the kf_llm_* and kf_evaluations_total
 * sums, which are read from the database and so survive restarts. */
static char *
s_metrics_text (void *arg)
{
    kf_coord_t *self = arg;
    char *text = NULL;
    size_t size = 0;
    FILE *f = open_memstream (&text, &size);
    if (!f)
        return NULL;
    char l1[160], l2[160], labels[400];
    kf_metrics_head (f, "kf_uptime_seconds", "gauge", "seconds since the coordinator started");
    kf_metrics_sample (f, "kf_uptime_seconds", NULL,
                       (double) (zclock_mono () - self->started) / 1000.0);

    /* Workers from memory: per role, idle / busy / draining. */
    static const char *states[] = { "idle", "busy", "draining" };
    zhashx_t *roles = zhashx_new ();
    zhashx_set_destructor (roles, (zhashx_destructor_fn *) zstr_free);
    for (s_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
        long *agg = zhashx_lookup (roles, w->role);
        if (!agg) {
            agg = calloc (5, sizeof *agg);
            zhashx_insert (roles, w->role, agg);
        }
        agg[w->draining ? 2 : json_array_size (w->jobs) ? 1 : 0]++;
        agg[3] += w->credits;
        agg[4] += (long) json_array_size (w->jobs);
    }
    kf_metrics_head (f, "kf_workers", "gauge", "connected workers by role and state");
    for (long *agg = zhashx_first (roles); agg; agg = zhashx_next (roles))
        for (int k = 0; k < 3; k++) {
            s_label (l1, sizeof l1, "role", zhashx_cursor (roles));
            s_label (l2, sizeof l2, "state", states[k]);
            snprintf (labels, sizeof labels, "%s,%s", l1, l2);
            kf_metrics_sample (f, "kf_workers", labels, (double) agg[k]);
        }
    kf_metrics_head (f, "kf_worker_credits", "gauge", "jobs the connected workers take at once");
    for (long *agg = zhashx_first (roles); agg; agg = zhashx_next (roles)) {
        s_label (l1, sizeof l1, "role", zhashx_cursor (roles));
        kf_metrics_sample (f, "kf_worker_credits", l1, (double) agg[3]);
    }
    kf_metrics_head (f, "kf_worker_jobs", "gauge", "jobs leased to connected workers");
    for (long *agg = zhashx_first (roles); agg; agg = zhashx_next (roles)) {
        s_label (l1, sizeof l1, "role", zhashx_cursor (roles));
        kf_metrics_sample (f, "kf_worker_jobs", l1, (double) agg[4]);
    }
    zhashx_destroy (&roles);

    /* The database: a round trip timed now, then what it holds. */
    int64_t t0 = zclock_usecs ();
    json_t *ping = kf_db_query (self->db, "SELECT 1 AS one", 0, NULL);
    double ping_s = (double) (zclock_usecs () - t0) / 1e6;
    kf_metrics_head (f, "kf_database_up", "gauge", "1 when the database answered this scrape");
    kf_metrics_sample (f, "kf_database_up", NULL, ping ? 1 : 0);
    kf_metrics_head (f, "kf_db_ping_seconds", "gauge", "round trip of SELECT 1 at this scrape");
    kf_metrics_sample (f, "kf_db_ping_seconds", NULL, ping ? ping_s : NAN);
    kf_metrics_head (f, "kf_db_pass_seconds", "summary",
                     "time of the loop's write transactions (worker messages, cron, dispatch)");
    kf_metrics_sample (f, "kf_db_pass_seconds_sum", NULL, self->tx_seconds);
    kf_metrics_sample (f, "kf_db_pass_seconds_count", NULL, (double) self->tx_count);
    kf_metrics_head (f, "kf_db_pass_max_seconds", "gauge",
                     "slowest write transaction since the previous scrape");
    kf_metrics_sample (f, "kf_db_pass_max_seconds", NULL, self->tx_max_seconds);
    self->tx_max_seconds = 0;
    kf_metrics_head (f, "kf_db_statements_total", "counter", "statements sent to the database");
    kf_metrics_sample (f, "kf_db_statements_total", NULL, (double) kf_db_statements (self->db));
    kf_metrics_head (f, "kf_db_errors_total", "counter",
                     "transactions or statements the database refused or lost");
    kf_metrics_sample (f, "kf_db_errors_total", NULL, (double) self->counters[C_DB_ERRORS]);
    json_decref (ping);

    json_t *jobs = kf_db_query (self->db,
                                "SELECT role, state, count(*) AS n FROM jobs"
                                " GROUP BY role, state ORDER BY role, state", 0, NULL);
    size_t i;
    json_t *row;
    /* The three roles always appear, so an empty queue reads 0 rather
     * than as a missing series. */
    kf_metrics_head (f, "kf_queue_depth", "gauge", "queued jobs waiting for a worker, by role");
    static const char *std_roles[] = { "generate", "compile", "execute" };
    for (size_t r = 0; jobs && r < 3; r++) {
        bool seen = false;
        json_array_foreach (jobs, i, row)
            seen |= !strcmp (json_string_value (json_object_get (row, "role")), std_roles[r])
                    && !strcmp (json_string_value (json_object_get (row, "state")), "queued");
        if (!seen) {
            s_label (l1, sizeof l1, "role", std_roles[r]);
            kf_metrics_sample (f, "kf_queue_depth", l1, 0);
        }
    }
    json_array_foreach (jobs, i, row)
        if (!strcmp (json_string_value (json_object_get (row, "state")), "queued")) {
            s_label (l1, sizeof l1, "role", json_string_value (json_object_get (row, "role")));
            kf_metrics_sample (f, "kf_queue_depth", l1, s_num (row, "n"));
        }
    kf_metrics_head (f, "kf_jobs", "gauge", "jobs in the database by role and state");
    json_array_foreach (jobs, i, row) {
        s_label (l1, sizeof l1, "role", json_string_value (json_object_get (row, "role")));
        s_label (l2, sizeof l2, "state", json_string_value (json_object_get (row, "state")));
        snprintf (labels, sizeof labels, "%s,%s", l1, l2);
        kf_metrics_sample (f, "kf_jobs", labels, s_num (row, "n"));
    }
    json_decref (jobs);

    json_t *runs = kf_db_query (self->db,
                                "SELECT status, count(*) AS n,"
                                " sum(input_tokens)::float8 AS input_tokens,"
                                " sum(output_tokens)::float8 AS output_tokens,"
                                " sum(cost_usd)::float8 AS cost_usd FROM runs GROUP BY status"
                                " ORDER BY status", 0, NULL);
    double in_tokens = 0, out_tokens = 0, cost = 0;
    kf_metrics_head (f, "kf_runs", "gauge", "runs by status");
    json_array_foreach (runs, i, row) {
        s_label (l1, sizeof l1, "status", json_string_value (json_object_get (row, "status")));
        kf_metrics_sample (f, "kf_runs", l1, s_num (row, "n"));
        in_tokens += s_num (row, "input_tokens");
        out_tokens += s_num (row, "output_tokens");
        cost += s_num (row, "cost_usd");
    }
    if (runs) {
        kf_metrics_head (f, "kf_llm_tokens_total", "counter",
                         "LLM tokens used by every run, by direction");
        kf_metrics_sample (f, "kf_llm_tokens_total", "direction=\"input\"", in_tokens);
        kf_metrics_sample (f, "kf_llm_tokens_total", "direction=\"output\"", out_tokens);
        kf_metrics_head (f, "kf_llm_cost_usd_total", "counter",
                         "LLM cost of every run in US dollars, as the gateway priced it");
        kf_metrics_sample (f, "kf_llm_cost_usd_total", NULL, cost);
    }
    json_decref (runs);

    json_t *evals = kf_db_row (self->db,
                               "SELECT count(*) AS total, count(*) FILTER"
                               " (WHERE created_at > now() - interval '1 minute') AS last_minute"
                               " FROM evaluations", 0, NULL, NULL);
    if (evals) {
        kf_metrics_head (f, "kf_evaluations_total", "counter", "evaluations recorded");
        kf_metrics_sample (f, "kf_evaluations_total", NULL, s_num (evals, "total"));
        kf_metrics_head (f, "kf_evaluations_per_minute", "gauge",
                         "evaluations recorded in the last 60 seconds");
        kf_metrics_sample (f, "kf_evaluations_per_minute", NULL, s_num (evals, "last_minute"));
    }
    json_decref (evals);

    /* This process's counters. */
    static const struct {
        int counter;
        const char *name, *help;
    } counters[] = {
        { C_RECEIVED, "kf_messages_received_total", "messages received on the ROUTERs" },
        { C_SENT, "kf_messages_sent_total", "messages sent by the coordinator" },
        { C_DISPATCHED, "kf_jobs_dispatched_total", "JOBs sent to workers" },
        { C_DONE, "kf_jobs_done_total", "jobs completed with a current lease" },
        { C_FAILED, "kf_jobs_failed_total", "jobs failed for good (attempts used up)" },
        { C_REQUEUED, "kf_jobs_requeued_total", "jobs put back in the queue, attempt counted" },
        { C_HANDED_BACK, "kf_jobs_handed_back_total",
          "jobs given back by a stopping worker, attempt not counted" },
        { C_LATE, "kf_late_results_total", "results for a lease no longer held (discarded)" },
    };
    for (size_t k = 0; k < sizeof counters / sizeof counters[0]; k++) {
        kf_metrics_head (f, counters[k].name, "counter", counters[k].help);
        kf_metrics_sample (f, counters[k].name, NULL, (double) self->counters[counters[k].counter]);
    }
    kf_metrics_head (f, "kf_protocol_errors_total", "counter",
                     "messages refused by the codec, by ERROR code");
    for (int k = KF_PROTO_MALFORMED; k <= KF_PROTO_UNKNOWN_TYPE; k++) {
        s_label (l1, sizeof l1, "code", kf_proto_rc_name (k));
        kf_metrics_sample (f, "kf_protocol_errors_total", l1, (double) self->errors[k]);
    }
    if (self->auth) {
        json_t *a = kf_auth_status (self->auth);
        kf_metrics_head (f, "kf_auth_denied_total", "counter",
                         "CURVE handshakes refused (key not in the allow-list)");
        kf_metrics_sample (f, "kf_auth_denied_total", NULL, s_num (a, "denied"));
        kf_metrics_head (f, "kf_auth_accepted_total", "counter", "CURVE handshakes admitted");
        kf_metrics_sample (f, "kf_auth_accepted_total", NULL, s_num (a, "accepted"));
        kf_metrics_head (f, "kf_auth_allowed_keys", "gauge", "public keys in the allow-list folder");
        kf_metrics_sample (f, "kf_auth_allowed_keys", NULL, s_num (a, "allowed_keys"));
        json_decref (a);
    }
    kf_metrics_head (f, "kf_metrics_scrapes_total", "counter", "scrapes answered before this one");
    kf_metrics_sample (f, "kf_metrics_scrapes_total", NULL,
                       (double) kf_metrics_scrapes (self->metrics));
    fclose (f);
    return text;
}

/* ---- the loop ---------------------------------------------------------------- */

int
kf_coord_run (kf_coord_t *self, volatile sig_atomic_t *stop)
{
    int rc = 0;
    while (!*stop) {
        if (!self->ready && s_open_database (self) == -2) {
            kf_error ("cannot apply the schema: %s", kf_db_error (self->db));
            rc = 1;
            break;
        }
        /* The database socket joins the poll for notifications: jobs
         * queued by another writer wake the dispatch at once. */
        int dbfd = kf_db_socket (self->db);
        /* The three ROUTERs, then what is switched on: the ZAP handler,
         * the database socket, the metrics listener and its connections. */
        zmq_pollitem_t items[3 + 2 + 24] = {
            { zsock_resolve (self->workers), 0, ZMQ_POLLIN, 0 },
            { zsock_resolve (self->clients), 0, ZMQ_POLLIN, 0 },
            { zsock_resolve (self->status), 0, ZMQ_POLLIN, 0 },
        };
        int n_items = 3, i_zap = -1, i_db = -1, i_metrics = -1, n_metrics = 0;
        if (self->auth) {
            i_zap = n_items;
            items[n_items++] = (zmq_pollitem_t) { kf_auth_socket (self->auth), 0, ZMQ_POLLIN, 0 };
        }
        if (dbfd >= 0) {
            i_db = n_items;
            items[n_items++] = (zmq_pollitem_t) { NULL, dbfd, ZMQ_POLLIN, 0 };
        }
        int64_t now = zclock_mono ();
        int64_t wait = self->next_heartbeat - now;
        if (self->next_lease_check - now < wait)
            wait = self->next_lease_check - now;
        if (self->dispatch_needed && self->ready)
            wait = 0;
        if (!self->ready && wait > 200)
            wait = 200;
        if (wait < 0)
            wait = 0;
        long poll_wait = (long) wait;
        if (self->metrics) {
            i_metrics = n_items;
            n_metrics = kf_metrics_prepare (self->metrics, items + n_items, 24, &poll_wait);
            n_items += n_metrics;
        }
        if (zmq_poll (items, n_items, poll_wait) < 0)
            continue;   /* EINTR: the loop condition looks at *stop */
        /* Handshakes first: a peer waits on the answer to connect at all. */
        if (i_zap >= 0 && (items[i_zap].revents & ZMQ_POLLIN))
            kf_auth_handle (self->auth);
        if (i_db >= 0 && (items[i_db].revents & ZMQ_POLLIN) && kf_db_notified (self->db))
            self->dispatch_needed = true;
        if (i_metrics >= 0)
            kf_metrics_dispatch (self->metrics, items + i_metrics, n_metrics);
        /* Clients and status first, each request on its own. */
        if (items[1].revents & ZMQ_POLLIN)
            s_drain (self, self->clients, KF_EP_CLIENT_IN);
        if (items[2].revents & ZMQ_POLLIN)
            s_drain (self, self->status, KF_EP_STATUS_IN);
        /* Then one transaction for everything the workers said, the
         * periodic checks and the dispatch they make possible: one commit
         * per pass however many messages it covers. */
        if (!self->ready) {
            /* Workers stay registered and heartbeated; a result cannot be
             * recorded now, and its job is requeued once the database is
             * back (its lease is from before). */
            if (items[0].revents & ZMQ_POLLIN)
                s_drain (self, self->workers, KF_EP_WORKER_IN);
            kf_inbox_clear (self->results);
            s_cron (self);
            continue;
        }
        int64_t tx_start = zclock_usecs ();
        kf_db_begin (self->db);
        if (items[0].revents & ZMQ_POLLIN)
            s_drain (self, self->workers, KF_EP_WORKER_IN);
        s_complete_results (self);
        s_cron (self);
        if (self->dispatch_needed)
            s_dispatch (self);
        bool committed = kf_db_commit (self->db) == 0;
        double tx = (double) (zclock_usecs () - tx_start) / 1e6;
        self->tx_seconds += tx;
        self->tx_count++;
        if (tx > self->tx_max_seconds)
            self->tx_max_seconds = tx;
        if (!committed) {
            kf_db_rollback (self->db);
            self->counters[C_DB_ERRORS]++;
            s_truncate_events (self, 0);
        }
        else {
            self->counters[C_BATCHES]++;
            s_publish_events (self);
        }
        s_results_after_commit (self, committed);
        if (!committed)
            self->sweep_orphans = true;
        s_flush_outbox (self, committed);
    }
    kf_info ("stopping");
    return rc;
}
