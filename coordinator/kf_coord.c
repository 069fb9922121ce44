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
 *  After each pass, outside its transaction, the figures /metrics reports
 *  of the database are read when due (kf_coord_metrics.c), so that a
 *  scrape runs no statement. The state all this shares is in
 *  kf_coord_internal.h, which names the file of each part.
 */
#include "kf_coord_internal.h"
#include "kf_take.h"
#include "kf_log.h"
#include <math.h>
#include <string.h>

kf_coord_t *
kf_coord_new (const kf_coord_config_t *cfg)
{
    kf_coord_t *self = calloc (1, sizeof *self);
    self->cfg = *cfg;
    self->by_id = zhashx_new ();
    zhashx_set_destructor (self->by_id, kf_coord_worker_free);
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
    size_t max = cfg->max_message;
    if (kf_coord_bind (self, &self->workers, ZMQ_ROUTER, cfg->worker_endpoint, max)
        || kf_coord_bind (self, &self->clients, ZMQ_ROUTER, cfg->client_endpoint, max)
        || kf_coord_bind (self, &self->status, ZMQ_ROUTER, cfg->status_endpoint, max)
        || kf_coord_bind (self, &self->events, ZMQ_PUB, cfg->event_endpoint, max)) {
        kf_coord_destroy (&self);
        return NULL;
    }
    if (cfg->metrics_address && *cfg->metrics_address) {
        self->metrics = kf_metrics_new (cfg->metrics_address, kf_coord_metrics_text, self, &err);
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
    if (kf_coord_metrics_start (self) != 0) {
        kf_error ("cannot start the reader of the /metrics figures");
        kf_coord_destroy (&self);
        return NULL;
    }
    self->search.db = self->db;
    self->search.events = json_array ();
    self->search.timing = cfg->timing;
    self->search.max_attempts = cfg->max_attempts;
    memcpy (self->search.lease_ms, cfg->lease_ms, sizeof cfg->lease_ms);
    self->search.defaults = cfg->search_defaults;
    self->search.plausible = cfg->plausible;
    self->search.idea_cache = kf_search_idea_cache_new ();
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
    kf_coord_t *self = KF_TAKE (self_p);
    if (self) {
        if (self->outbox)
            kf_coord_flush_outbox (self, false);
        zlistx_destroy (&self->outbox);
        kf_inbox_destroy (&self->results);
        kf_inbox_destroy (&self->recorded);
        zhashx_destroy (&self->by_route);
        zhashx_destroy (&self->by_id);
        zsock_destroy (&self->workers);
        zsock_destroy (&self->clients);
        zsock_destroy (&self->status);
        zsock_destroy (&self->events);
        kf_coord_metrics_stop (self);
        kf_metrics_destroy (&self->metrics);
        kf_auth_destroy (&self->auth);
        zhashx_destroy (&self->drained);
        kf_db_destroy (&self->db);
        json_decref (self->search.events);
        kf_search_idea_cache_destroy (&self->search.idea_cache);
        free (self);
    }
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
            kf_coord_drain (self, self->clients, KF_EP_CLIENT_IN);
        if (items[2].revents & ZMQ_POLLIN)
            kf_coord_drain (self, self->status, KF_EP_STATUS_IN);
        /* Then one transaction for everything the workers said, the
         * periodic checks and the dispatch they make possible: one commit
         * per pass however many messages it covers. */
        if (!self->ready) {
            /* Workers stay registered and heartbeated; a result cannot be
             * recorded now, and its job is requeued once the database is
             * back (its lease is from before). */
            if (items[0].revents & ZMQ_POLLIN)
                kf_coord_drain (self, self->workers, KF_EP_WORKER_IN);
            kf_inbox_clear (self->results);
            kf_coord_cron (self);
            continue;
        }
        int64_t tx_start = zclock_usecs ();
        kf_db_begin (self->db);
        if (items[0].revents & ZMQ_POLLIN)
            kf_coord_drain (self, self->workers, KF_EP_WORKER_IN);
        kf_coord_complete_results (self);
        kf_coord_cron (self);
        if (self->dispatch_needed)
            kf_coord_dispatch (self);
        bool committed = kf_db_commit (self->db) == 0;
        double tx = (double) (zclock_usecs () - tx_start) / 1e6;
        self->tx_seconds += tx;
        self->tx_count++;
        if (tx > self->tx_max_seconds)
            self->tx_max_seconds = tx;
        if (!committed) {
            kf_db_rollback (self->db);
            self->counters[KF_COORD_DB_ERRORS]++;
            kf_coord_truncate_events (self, 0);
        }
        else {
            self->counters[KF_COORD_BATCHES]++;
            kf_coord_publish_events (self);
        }
        kf_coord_results_after_commit (self, committed);
        if (!committed)
            self->sweep_orphans = true;
        kf_coord_flush_outbox (self, committed);
        /* The reader of the figures /metrics serves may start. */
        if (self->ready)
            kf_coord_metrics_ready (self);
    }
    kf_info ("stopping");
    return rc;
}
