/*  kf_coord_metrics.c - the text of GET /metrics, and the database's
 *  figures it reports.
 *
 *  A scrape runs no statement: it reads the loop's memory (workers,
 *  counters, transaction times) and a snapshot of what the tables hold
 *  (jobs by role and state, runs by status with their token and cost
 *  sums, evaluations). The snapshot is read by a thread of its own on a
 *  connection of its own, so neither the loop nor a scrape ever waits on
 *  those table scans: at start (once the loop is ready), then every
 *  S_SNAPSHOT_EVERY_MS while someone scrapes. Exact counts kept in
 *  memory instead would have to follow every writer of the jobs table
 *  (the search, re-verification, fidelity, meta-prompts, benchmarks
 *  writing from outside), so the snapshot is read, and a scrape says how
 *  old it is (kf_metrics_snapshot_age_seconds). A read that the database
 *  does not finish within S_SNAPSHOT_STATEMENT_MS a statement keeps the
 *  previous figures and is counted in kf_db_errors_total.
 */
#include "kf_coord_internal.h"
#include "kf_log.h"
#include <math.h>
#include <string.h>

/* Read every 5 s while scraped; nobody scraping for 5 minutes, not at
 * all (the statements count and scan whole tables). Each statement of a
 * read stops after 2 s (or db_statement_timeout_ms when lower). */
#define S_SNAPSHOT_EVERY_MS 5000
#define S_SNAPSHOT_IDLE_MS 300000
#define S_SNAPSHOT_STATEMENT_MS 2000

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

/* The exposition text of one scrape, from memory only; names and meanings
 * are listed in docs/operations.md ("Metrics"). Counters named *_total are
 * this process's since it started, except the kf_llm_* and
 * kf_evaluations_total sums, which come from the database's snapshot and
 * so survive restarts. */
char *
kf_coord_metrics_text (void *arg)
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
    for (kf_coord_worker_t *w = zhashx_first (self->by_id); w; w = zhashx_next (self->by_id)) {
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

    /* The database: the connection as the loop knows it, the round trip
     * and the tables' figures as the last snapshot read them. */
    kf_coord_snapshot_t *snap = &self->snapshot;
    int64_t now = zclock_mono ();
    pthread_mutex_lock (&snap->mu);
    //  A scrape after a quiet spell wakes the reader for fresh figures.
    if (!snap->last_scrape || now - snap->last_scrape > S_SNAPSHOT_IDLE_MS)
        pthread_cond_signal (&snap->wake);
    snap->last_scrape = now;
    bool up = self->ready && kf_db_connected (self->db);
    kf_metrics_head (f, "kf_database_up", "gauge",
                     "1 while the coordinator holds its database connection");
    kf_metrics_sample (f, "kf_database_up", NULL, up ? 1 : 0);
    kf_metrics_head (f, "kf_db_ping_seconds", "gauge",
                     "round trip of SELECT 1 at the last attempt to read the snapshot");
    kf_metrics_sample (f, "kf_db_ping_seconds", NULL, up ? snap->ping_s : NAN);
    kf_metrics_head (f, "kf_metrics_snapshot_age_seconds", "gauge",
                     "age of the database figures (kf_jobs, kf_runs, kf_llm_*, kf_evaluations_*)");
    kf_metrics_sample (f, "kf_metrics_snapshot_age_seconds", NULL,
                       (double) (now - (snap->jobs ? snap->taken : self->started)) / 1000.0);
    kf_metrics_head (f, "kf_db_pass_seconds", "summary",
                     "time of the loop's write transactions (worker messages, cron, dispatch)");
    kf_metrics_sample (f, "kf_db_pass_seconds_sum", NULL, self->tx_seconds);
    kf_metrics_sample (f, "kf_db_pass_seconds_count", NULL, (double) self->tx_count);
    kf_metrics_head (f, "kf_db_pass_max_seconds", "gauge",
                     "slowest write transaction since the previous scrape");
    kf_metrics_sample (f, "kf_db_pass_max_seconds", NULL, self->tx_max_seconds);
    self->tx_max_seconds = 0;
    kf_metrics_head (f, "kf_db_statements_total", "counter", "statements sent to the database");
    kf_metrics_sample (f, "kf_db_statements_total", NULL,
                       (double) (kf_db_statements (self->db) + snap->statements));
    kf_metrics_head (f, "kf_db_errors_total", "counter",
                     "transactions or statements the database refused or lost");
    kf_metrics_sample (f, "kf_db_errors_total", NULL,
                       (double) (self->counters[KF_COORD_DB_ERRORS] + snap->read_errors));

    json_t *jobs = snap->jobs;
    size_t i;
    json_t *row;
    /* The three roles always appear, so an empty queue reads 0 rather
     * than as a missing series. Nothing before the first read. */
    if (jobs)
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
    if (jobs)
        kf_metrics_head (f, "kf_jobs", "gauge", "jobs in the database by role and state");
    json_array_foreach (jobs, i, row) {
        s_label (l1, sizeof l1, "role", json_string_value (json_object_get (row, "role")));
        s_label (l2, sizeof l2, "state", json_string_value (json_object_get (row, "state")));
        snprintf (labels, sizeof labels, "%s,%s", l1, l2);
        kf_metrics_sample (f, "kf_jobs", labels, s_num (row, "n"));
    }

    json_t *runs = snap->runs;
    double in_tokens = 0, out_tokens = 0, cost = 0;
    if (runs)
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

    json_t *evals = snap->evals;
    if (evals) {
        kf_metrics_head (f, "kf_evaluations_total", "counter", "evaluations recorded");
        kf_metrics_sample (f, "kf_evaluations_total", NULL, s_num (evals, "total"));
        kf_metrics_head (f, "kf_evaluations_per_minute", "gauge",
                         "evaluations recorded in the 60 seconds before the snapshot");
        kf_metrics_sample (f, "kf_evaluations_per_minute", NULL, s_num (evals, "last_minute"));
    }
    pthread_mutex_unlock (&snap->mu);

    /* This process's counters. */
    static const struct {
        int counter;
        const char *name, *help;
    } counters[] = {
        { KF_COORD_RECEIVED, "kf_messages_received_total", "messages received on the ROUTERs" },
        { KF_COORD_SENT, "kf_messages_sent_total", "messages sent by the coordinator" },
        { KF_COORD_DISPATCHED, "kf_jobs_dispatched_total", "JOBs sent to workers" },
        { KF_COORD_DONE, "kf_jobs_done_total", "jobs completed with a current lease" },
        { KF_COORD_FAILED, "kf_jobs_failed_total", "jobs failed for good (attempts used up)" },
        { KF_COORD_REQUEUED, "kf_jobs_requeued_total",
          "jobs put back in the queue, attempt counted" },
        { KF_COORD_HANDED_BACK, "kf_jobs_handed_back_total",
          "jobs given back by a stopping worker, attempt not counted" },
        { KF_COORD_LATE, "kf_late_results_total",
          "results for a lease no longer held (discarded)" },
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

//  Frees the figures; under MU or with the reader stopped.
static void
s_clear (kf_coord_snapshot_t *snap)
{
    json_decref (snap->jobs);
    json_decref (snap->runs);
    json_decref (snap->evals);
    snap->jobs = snap->runs = snap->evals = NULL;
}

/* Reads the figures on DB: a timed SELECT 1 (the database's round trip),
 * then the three counts in one transaction under a short
 * statement_timeout of its own (set_config local to it), into *JOBS,
 * *RUNS, *EVALS and *PING_S. 0, or -1 (nothing kept). */
static int
s_snapshot_read (kf_db_t *db, int limit_ms, json_t **jobs, json_t **runs, json_t **evals,
                 double *ping_s)
{
    *jobs = *runs = *evals = NULL;
    if (kf_db_connect (db, 0) != 0) {
        *ping_s = NAN;
        return -1;
    }
    int64_t t0 = zclock_usecs ();
    json_t *ping = kf_db_query (db, "SELECT 1 AS one", 0, NULL);
    *ping_s = ping ? (double) (zclock_usecs () - t0) / 1e6 : NAN;
    if (!ping)
        return -1;
    json_decref (ping);
    char limit[24];
    snprintf (limit, sizeof limit, "%d", limit_ms);
    const char *params[1] = { limit };
    bool failed = true;
    kf_db_begin (db);
    if (kf_db_exec (db, "SELECT set_config('statement_timeout', $1, true)", 1, params) >= 0)
        *jobs = kf_db_query (db,
                             "SELECT role, state, count(*) AS n FROM jobs"
                             " GROUP BY role, state ORDER BY role, state", 0, NULL);
    if (*jobs)
        *runs = kf_db_query (db,
                             "SELECT status, count(*) AS n,"
                             " sum(input_tokens)::float8 AS input_tokens,"
                             " sum(output_tokens)::float8 AS output_tokens,"
                             " sum(cost_usd)::float8 AS cost_usd FROM runs GROUP BY status"
                             " ORDER BY status", 0, NULL);
    if (*runs)
        *evals = kf_db_row (db,
                            "SELECT count(*) AS total, count(*) FILTER"
                            " (WHERE created_at > now() - interval '1 minute') AS last_minute"
                            " FROM evaluations", 0, NULL, &failed);
    if (failed || !*evals || kf_db_commit (db)) {
        kf_db_rollback (db);
        json_decref (*jobs);
        json_decref (*runs);
        json_decref (*evals);
        *jobs = *runs = *evals = NULL;
        return -1;
    }
    return 0;
}

//  The reader: waits until a read is due (the loop ready; no figures yet,
//  or a scrape in the last S_SNAPSHOT_IDLE_MS and S_SNAPSHOT_EVERY_MS
//  since the last read), reads without holding MU, keeps what it read.
static void *
s_reader (void *arg)
{
    kf_coord_t *self = arg;
    kf_coord_snapshot_t *snap = &self->snapshot;
    int limit_ms = S_SNAPSHOT_STATEMENT_MS;
    if (self->cfg.db_statement_ms > 0 && self->cfg.db_statement_ms < limit_ms)
        limit_ms = self->cfg.db_statement_ms;
    pthread_mutex_lock (&snap->mu);
    while (!snap->stop) {
        int64_t now = zclock_mono ();
        bool scraped = snap->last_scrape && now - snap->last_scrape <= S_SNAPSHOT_IDLE_MS;
        bool due = snap->enabled && now >= snap->next && (!snap->jobs || scraped);
        if (!due) {
            int64_t until = snap->enabled && now < snap->next ? snap->next : now + 1000;
            struct timespec ts;
            clock_gettime (CLOCK_REALTIME, &ts);
            int64_t ns = ts.tv_nsec + (until - now) * 1000000;
            ts.tv_sec += ns / 1000000000;
            ts.tv_nsec = ns % 1000000000;
            pthread_cond_timedwait (&snap->wake, &snap->mu, &ts);
            continue;
        }
        snap->next = now + S_SNAPSHOT_EVERY_MS;
        pthread_mutex_unlock (&snap->mu);
        json_t *jobs, *runs, *evals;
        double ping_s;
        long before = kf_db_statements (snap->db);
        int rc = s_snapshot_read (snap->db, limit_ms, &jobs, &runs, &evals, &ping_s);
        long sent = kf_db_statements (snap->db) - before;
        if (rc != 0 && !snap->failing)
            kf_warn ("metrics: cannot read the database's figures (%s); /metrics serves"
                     " the last ones read, with their age", kf_db_error (snap->db));
        else if (rc == 0 && snap->failing)
            kf_info ("metrics: the database's figures are read again");
        pthread_mutex_lock (&snap->mu);
        snap->statements += sent;
        snap->ping_s = ping_s;
        snap->failing = rc != 0;
        if (rc == 0) {
            s_clear (snap);
            snap->jobs = jobs;
            snap->runs = runs;
            snap->evals = evals;
            snap->taken = zclock_mono ();
        }
        else
            snap->read_errors++;
    }
    pthread_mutex_unlock (&snap->mu);
    return NULL;
}

int
kf_coord_metrics_start (kf_coord_t *self)
{
    kf_coord_snapshot_t *snap = &self->snapshot;
    pthread_mutex_init (&snap->mu, NULL);
    pthread_cond_init (&snap->wake, NULL);
    snap->ping_s = NAN;
    if (!self->metrics)
        return 0;
    snap->db = kf_db_new (self->cfg.database_url);
    if (!snap->db)
        return -1;
    if (self->cfg.db_connect_s > 0)
        kf_db_set_limits (snap->db, self->cfg.db_connect_s, self->cfg.db_statement_ms,
                          self->cfg.db_keepalive_s);
    if (pthread_create (&snap->thread, NULL, s_reader, self) != 0)
        return -1;
    snap->running = true;
    return 0;
}

void
kf_coord_metrics_ready (kf_coord_t *self)
{
    kf_coord_snapshot_t *snap = &self->snapshot;
    if (!snap->running || snap->enabled)
        return;          // ENABLED only ever goes from false to true, in this thread
    pthread_mutex_lock (&snap->mu);
    snap->enabled = true;
    pthread_cond_signal (&snap->wake);
    pthread_mutex_unlock (&snap->mu);
}

void
kf_coord_metrics_stop (kf_coord_t *self)
{
    kf_coord_snapshot_t *snap = &self->snapshot;
    if (snap->running) {
        pthread_mutex_lock (&snap->mu);
        snap->stop = true;
        pthread_cond_signal (&snap->wake);
        pthread_mutex_unlock (&snap->mu);
        pthread_join (snap->thread, NULL);
        snap->running = false;
    }
    kf_db_destroy (&snap->db);
    s_clear (snap);
}
