/*  kf_worker.c - the worker lifecycle: HELLO, credits, heartbeats, jobs in
 *  threads, reconnect with capped jittered backoff, goodbye on stop.
 *
 *  One thread owns the DEALER (ZeroMQ sockets are not thread-safe). Each
 *  job runs in a detached thread that owns its copy of the job, calls the
 *  handler, encodes the RESULT and pushes it over inproc to the main
 *  thread, which forwards it (kf_worker_threads.c; the RESULT kept while
 *  not registered, kf_worker_results.c). So the handler may block for
 *  minutes while heartbeats keep flowing.
 *
 *  In asynchronous mode there are no job threads: the start function runs
 *  on this thread and kf_worker_complete sends the RESULT from here too,
 *  and the caller's hooks put its descriptors and timer into the same
 *  zmq_poll. The slot bookkeeping is shared by both modes.
 *
 *  The idle work (kf_worker_idle_t) runs in a detached thread too, only
 *  while no job is held, and says it is done over the same inproc socket
 *  as the job threads, with an empty first frame where they put a job id.
 */
#include "kf_worker_internal.h"
#include "kf_config.h"
#include "kf_curve.h"
#include "kf_log.h"
#include "kf_proto.h"
#include <stdarg.h>
#include <string.h>
#include <unistd.h>

typedef struct kf_worker_t s_worker_t;

static volatile sig_atomic_t *s_stop_flag;

static void
s_on_signal (int sig)
{
    (void) sig;
    if (s_stop_flag)
        *s_stop_flag = 1;
}

void
kf_worker_catch_signals (volatile sig_atomic_t *stop)
{
    s_stop_flag = stop;
    zsys_handler_set (NULL);     /* czmq's handler would hide ours */
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;  /* no SA_RESTART: polls return EINTR */
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
}

static void
s_send (s_worker_t *self, const char *type, json_t *body)
{
    kf_msg_t *msg = kf_msg_new (type, body);
    if (self->dealer && msg)
        kf_msg_send (&msg, self->dealer, NULL, NULL);
    else
        kf_msg_destroy (&msg);
}

static void
s_hello (s_worker_t *self)
{
    const kf_worker_config_t *cfg = self->cfg;
    char host[256] = "";
    gethostname (host, sizeof host - 1);
    json_t *body = json_pack (
        "{s:s, s:s, s:i, s:O, s:s, s:s, s:i, s:o}", "worker_id",
        self->worker_id, "role", cfg->role, "credits", cfg->credits,
        "capabilities", self->caps, "name",
        cfg->name ? cfg->name : self->worker_id, "host", host, "pid",
        (int) getpid (), "jobs", kf_worker_jobs_array (self));
    s_send (self, "HELLO", body);
}

static void
s_connect (s_worker_t *self)
{
    zsock_destroy (&self->dealer);
    self->dealer = zsock_new (ZMQ_DEALER);
    zsock_set_linger (self->dealer, 1000);
    /* A connection the coordinator refused (a CURVE key not admitted) is
     * closed by libzmq for good, leaving the DEALER without a peer, where a
     * send would block forever. A bounded send keeps the loop turning, so
     * the silence is noticed and the reconnect below tries again. */
    zsock_set_sndtimeo (self->dealer, 200);
    zsock_set_maxmsgsize (self->dealer,
                          (int64_t) (self->cfg->max_message
                                         ? self->cfg->max_message
                                         : KF_PROTO_DEFAULT_MAX_MESSAGE) * 2);
    char *err = NULL;
    if (kf_curve_client_apply (self->dealer, self->cfg->endpoint, self->cfg->curve_cert,
                               self->cfg->curve_server_key, self->cfg->allow_plain_tcp,
                               &err)) {
        /* Checked at start, so only a key file that changed since gets
         * here; retry later like an unreachable coordinator. */
        kf_error ("%s", err ? err : "cannot set up CURVE");
        free (err);
        zsock_destroy (&self->dealer);
        self->reconnect_at = zclock_mono () + 1000;
        return;
    }
    if (zsock_connect (self->dealer, "%s", self->cfg->endpoint)) {
        kf_error ("cannot connect to %s", self->cfg->endpoint);
        zsock_destroy (&self->dealer);
        return;
    }
    self->welcomed = false;
    self->last_heard = zclock_mono ();
    self->reconnect_at = 0;
    s_hello (self);
}

static void
s_start_job (s_worker_t *self, kf_msg_t **msg_p)
{
    kf_msg_t *msg = *msg_p;
    int64_t job_id = kf_msg_int (msg, "job_id", 0);
    int slot = -1;
    for (int i = 0; i < self->cfg->credits && slot < 0; i++)
        if (!self->jobs[i])
            slot = i;
    const char *token = kf_msg_str (msg, "lease_token");
    if (slot < 0 || job_id <= 0) {
        /* The coordinator sent more than our credits: hand it back
         * unstarted ("returned": the attempt is not spent), with the jobs
         * we hold, so its count of our credits meets ours. */
        json_t *body = json_pack ("{s:I, s:I, s:b, s:{}, s:s, s:b, s:o}", "job_id",
                                  (json_int_t) job_id, "lease",
                                  (json_int_t) kf_msg_int (msg, "lease", 0), "ok", 0,
                                  "result", "error", "worker has no free credit",
                                  "returned", 1, "jobs", kf_worker_jobs_array (self));
        if (token)
            json_object_set_new (body, "lease_token", json_string (token));
        s_send (self, "RESULT", body);
        kf_msg_destroy (msg_p);
        return;
    }
    if (self->cfg->start) {
        //  The slot is taken before the start function runs, because it
        //  may complete the job (and free the slot) before it returns.
        kf_job_t job = { .job_id = job_id, .lease = kf_msg_int (msg, "lease", 0),
                         .lease_token = token, .kind = kf_msg_str (msg, "kind"),
                         .payload = json_object_get (msg->body, "payload"),
                         .frames = msg->frames };
        self->jobs[slot] = job_id;
        self->leases[slot] = job.lease;
        free (self->tokens[slot]);
        self->tokens[slot] = token ? strdup (token) : NULL;
        self->running++;
        self->cfg->start (self->cfg->handler_arg, self, &job);
        kf_msg_destroy (msg_p);
        return;
    }
    self->jobs[slot] = job_id;
    self->running++;
    //  The idle work holds the host: the job starts when it is done.
    if (self->idle_running) {
        zlistx_add_end (self->deferred, *msg_p);
        *msg_p = NULL;
        return;
    }
    kf_worker_start_thread (self, msg_p);
}

static void
s_on_coordinator (s_worker_t *self)
{
    kf_msg_t *msg = NULL;
    const char *reason;
    kf_proto_rc_t rc = kf_msg_recv (self->dealer, KF_EP_WORKER_OUT,
                                    self->cfg->max_message
                                        ? self->cfg->max_message
                                        : KF_PROTO_DEFAULT_MAX_MESSAGE,
                                    false, NULL, &msg, &reason);
    if (rc == KF_PROTO_NOMSG)
        return;
    self->last_heard = zclock_mono ();
    if (rc != KF_PROTO_OK) {
        kf_warn ("bad message from coordinator: %s", reason);
        return;
    }
    if (!strcmp (msg->type, "WELCOME")) {
        self->welcomed = true;
        self->backoff_ms = 0;
        /* The coordinator's heartbeat and liveness are the ones that
         * count: with ours slower it would take us for dead. Bounded as
         * our own configuration is. */
        json_int_t hb = kf_msg_int (msg, "heartbeat_ms", 0);
        json_int_t live = kf_msg_int (msg, "liveness", 0);
        if (hb >= 50 && hb <= 60000 && live >= 1 && live <= 100
            && (hb != self->heartbeat_ms || live != self->liveness)) {
            kf_info ("heartbeat %lld ms, liveness %lld, as the coordinator says", (long long) hb,
                     (long long) live);
            self->heartbeat_ms = (int) hb;
            self->liveness = (int) live;
            if (self->next_heartbeat > zclock_mono () + hb)
                self->next_heartbeat = zclock_mono () + hb;
        }
        kf_info ("registered with %s as %s", self->cfg->endpoint,
                 self->worker_id);
        kf_worker_flush_held (self);
    }
    else if (!strcmp (msg->type, "JOB")) {
        s_start_job (self, &msg);
    }
    else if (!strcmp (msg->type, "ERROR")) {
        const char *code = kf_msg_str (msg, "code");
        if (code && !strcmp (code, "unknown-worker"))
            s_hello (self);   /* the coordinator restarted: register again */
        else
            kf_warn ("coordinator says %s: %s", code,
                     kf_msg_str (msg, "reason"));
    }
    kf_msg_destroy (&msg);
}

int64_t
kf_worker_heartbeat_age (const kf_worker_t *self)
{
    return zclock_mono () - self->last_heartbeat;
}

//  Asynchronous mode: asks the hooks for their items, behind our two, and
//  lowers *WAIT to their timer. Returns the number of hook items.
static int
s_hook_items (s_worker_t *self, long *wait)
{
    const kf_worker_hooks_t *hooks = self->cfg->hooks;
    if (!hooks || !hooks->prepare)
        return 0;
    while (true) {
        int n = hooks->prepare (self->cfg->handler_arg, self->items + 2,
                                self->items_max - 2, wait);
        if (n <= self->items_max - 2)
            return n < 0 ? 0 : n;
        zmq_pollitem_t *grown = realloc (self->items, sizeof *grown * (size_t) (n + 2));
        if (!grown)
            return 0;
        self->items = grown;
        self->items_max = n + 2;
    }
}

//  The idle work is done (ZMSG: s_idle_main's frames after the first):
//  new capabilities said at once in a HELLO, the jobs that waited started.
static void
s_idle_done (s_worker_t *self, zmsg_t *zmsg)
{
    self->idle_running = false;
    zframe_t *nf = zmsg_pop (zmsg);
    int64_t next = -1;
    if (nf && zframe_size (nf) == sizeof next)
        memcpy (&next, zframe_data (nf), sizeof next);
    zframe_destroy (&nf);
    self->idle_at = next >= 0 ? zclock_mono () + next : 0;
    char *text = zmsg_popstr (zmsg);
    json_t *caps = text && *text ? json_loads (text, 0, NULL) : NULL;
    free (text);
    if (caps) {
        json_decref (self->caps);
        self->caps = caps;
        //  Without a connection the next one's HELLO says them.
        if (self->dealer) {
            kf_info ("capabilities changed: HELLO again on the same connection");
            s_hello (self);
        }
    }
    kf_msg_t *msg;
    while ((msg = zlistx_detach (self->deferred, NULL)))
        kf_worker_start_thread (self, &msg);
}

static void
s_on_result (s_worker_t *self)
{
    zmsg_t *zmsg = zmsg_recv (self->results);
    if (!zmsg)
        return;
    zframe_t *idf = zmsg_pop (zmsg);
    if (idf && zframe_size (idf) == 0) {
        zframe_destroy (&idf);
        s_idle_done (self, zmsg);
        zmsg_destroy (&zmsg);
        return;
    }
    uint64_t job_id = 0;
    if (idf && zframe_size (idf) == 8)
        memcpy (&job_id, zframe_data (idf), 8);
    zframe_destroy (&idf);
    for (int i = 0; job_id && i < self->cfg->credits; i++)
        if (self->jobs[i] == (int64_t) job_id) {
            self->jobs[i] = 0;
            self->running--;
            break;
        }
    kf_worker_send_result (self, (int64_t) job_id, &zmsg);
}

int
kf_worker_run (const kf_worker_config_t *cfg, volatile sig_atomic_t *stop)
{
    if (!cfg->endpoint || !cfg->role || cfg->credits < 1
        || !cfg->handler == !cfg->start) {
        kf_error ("worker configuration incomplete");
        return -1;
    }
    char *err = NULL;
    zsock_t *probe = zsock_new (ZMQ_DEALER);
    int curve_rc = kf_curve_client_apply (probe, cfg->endpoint, cfg->curve_cert,
                                          cfg->curve_server_key, cfg->allow_plain_tcp, &err);
    zsock_destroy (&probe);
    if (curve_rc) {
        kf_error ("%s", err ? err : "cannot set up CURVE");
        free (err);
        return -1;
    }
    if (kf_curve_scope (cfg->endpoint) == KF_SCOPE_REMOTE
        && !(cfg->curve_cert && *cfg->curve_cert))
        kf_warn ("connecting to %s as PLAIN TCP (allow_plain_tcp): jobs, sources and"
                 " results cross the network unencrypted", cfg->endpoint);
    kf_worker_config_t c = *cfg;
    c.heartbeat_ms = c.heartbeat_ms > 0 ? c.heartbeat_ms : 1000;
    c.liveness = c.liveness > 0 ? c.liveness : 3;
    c.backoff_min_ms = c.backoff_min_ms > 0 ? c.backoff_min_ms : 100;
    c.backoff_max_ms = c.backoff_max_ms > 0 ? c.backoff_max_ms : 5000;
    c.drain_ms = c.drain_ms > 0 ? c.drain_ms : 30000;
    s_worker_t self = { .cfg = &c };
    if (c.worker_id)
        snprintf (self.worker_id, sizeof self.worker_id, "%s", c.worker_id);
    else {
        char host[200] = "";
        gethostname (host, sizeof host - 1);
        snprintf (self.worker_id, sizeof self.worker_id, "%s-%s-%d", host,
                  c.role, (int) getpid ());
    }
    self.jobs = calloc ((size_t) c.credits, sizeof (int64_t));
    self.leases = calloc ((size_t) c.credits, sizeof (int64_t));
    self.tokens = calloc ((size_t) c.credits, sizeof (char *));
    self.heartbeat_ms = c.heartbeat_ms;
    self.liveness = c.liveness;
    self.held = zlistx_new ();
    zlistx_set_destructor (self.held, kf_worker_held_free);
    self.items_max = 2 + 64;
    self.items = calloc ((size_t) self.items_max, sizeof *self.items);
    self.last_heartbeat = zclock_mono ();
    self.caps = json_incref (c.capabilities);
    self.deferred = zlistx_new ();
    zlistx_set_destructor (self.deferred, (zlistx_destructor_fn *) kf_msg_destroy);
    if (c.handler && c.idle && c.idle->fn && c.idle->first_ms >= 0)
        self.idle_at = zclock_mono () + c.idle->first_ms;
    snprintf (self.results_ep, sizeof self.results_ep,
              "inproc://kf-worker-results-%p", (void *) &self);
    self.results = zsock_new_pull (self.results_ep);
    if (!self.results || !self.jobs || !self.leases || !self.tokens || !self.items
        || !self.held || !self.deferred) {
        zsock_destroy (&self.results);
        zlistx_destroy (&self.held);
        zlistx_destroy (&self.deferred);
        json_decref (self.caps);
        free (self.tokens);
        free (self.jobs);
        free (self.leases);
        free (self.items);
        return -1;
    }
    srandom ((unsigned) (zclock_mono () ^ getpid ()));
    s_connect (&self);
    self.next_heartbeat = zclock_mono () + self.heartbeat_ms;
    int64_t drain_deadline = 0;

    while (true) {
        int64_t now = zclock_mono ();
        if (*stop && !drain_deadline) {
            kf_info ("stopping: %d job(s) to finish", self.running);
            drain_deadline = now + c.drain_ms;
            /* Say so now rather than at the next heartbeat, so the
             * coordinator stops sending jobs at once. */
            if (self.dealer && self.running)
                s_send (&self, "HEARTBEAT",
                        json_pack ("{s:i, s:o}", "credits", 0, "jobs", kf_worker_jobs_array (&self)));
        }
        if (drain_deadline && ((self.running == 0 && !self.idle_running)
                               || now >= drain_deadline))
            break;
        if (!self.reconnect_at && self.dealer
            && now - self.last_heard > (int64_t) self.heartbeat_ms * self.liveness) {
            /* Capped exponential backoff with full jitter, so a fleet that
             * lost its coordinator does not come back in lockstep. */
            self.backoff_ms = self.backoff_ms ? self.backoff_ms * 2
                                              : c.backoff_min_ms;
            if (self.backoff_ms > c.backoff_max_ms)
                self.backoff_ms = c.backoff_max_ms;
            int wait = c.backoff_min_ms / 2
                       + (int) (random () % (self.backoff_ms + 1));
            kf_warn ("coordinator silent for %lld ms; reconnecting in %d ms",
                     (long long) (now - self.last_heard), wait);
            zsock_destroy (&self.dealer);
            self.reconnect_at = now + wait;
        }
        if (self.reconnect_at && now >= self.reconnect_at)
            s_connect (&self);
        if (now >= self.next_heartbeat) {
            if (self.dealer)
                s_send (&self, "HEARTBEAT",
                        json_pack ("{s:i, s:o}", "credits",
                                   drain_deadline ? 0 : c.credits, "jobs",
                                   kf_worker_jobs_array (&self)));
            self.next_heartbeat = now + self.heartbeat_ms;
            self.last_heartbeat = now;
        }
        //  The idle work, in a moment without a job.
        bool idle_free = self.idle_at && !self.idle_running && !self.running && !drain_deadline;
        if (idle_free && now >= self.idle_at) {
            kf_worker_idle_start (&self);
            idle_free = false;
        }
        int64_t wait = self.next_heartbeat - now;
        if (self.reconnect_at && self.reconnect_at - now < wait)
            wait = self.reconnect_at - now;
        if (idle_free && self.idle_at - now < wait)
            wait = self.idle_at - now;
        if (wait < 0)
            wait = 0;
        //  The hooks' items follow ours; without a dealer its slot polls
        //  nothing (a NULL socket and fd -1 are ignored by zmq_poll).
        long hook_wait = (long) wait;
        int n_hook = c.start ? s_hook_items (&self, &hook_wait) : 0;
        zmq_pollitem_t *items = self.items;
        items[0] = (zmq_pollitem_t) { zsock_resolve (self.results), 0, ZMQ_POLLIN, 0 };
        items[1] = (zmq_pollitem_t) { self.dealer ? zsock_resolve (self.dealer) : NULL,
                                      -1, self.dealer ? ZMQ_POLLIN : 0, 0 };
        if (hook_wait < wait)
            wait = hook_wait < 0 ? 0 : hook_wait;
        int n = zmq_poll (items, 2 + n_hook, (long) wait);
        if (n < 0)
            continue;   /* EINTR: the loop top looks at *stop */
        if (c.start && c.hooks && c.hooks->dispatch)
            c.hooks->dispatch (c.handler_arg, &self, items + 2, n_hook);
        if (items[0].revents & ZMQ_POLLIN)
            s_on_result (&self);
        if (self.dealer && (items[1].revents & ZMQ_POLLIN)) {
            if (drain_deadline) {
                /* Stopping: hand new work straight back; "returned" tells
                 * the coordinator not to count the attempt. */
                kf_msg_t *msg = NULL;
                kf_proto_rc_t rc = kf_msg_recv (self.dealer, KF_EP_WORKER_OUT,
                                                KF_PROTO_DEFAULT_MAX_MESSAGE, false, NULL,
                                                &msg, NULL);
                /* Still heard: without this a worker finishing a long job
                 * would take the coordinator for silent, reconnect, stop
                 * heartbeating and lose the job it is finishing. */
                if (rc != KF_PROTO_NOMSG)
                    self.last_heard = zclock_mono ();
                if (rc == KF_PROTO_OK && !strcmp (msg->type, "JOB")) {
                    json_t *body = json_pack ("{s:I, s:I, s:b, s:{}, s:s, s:b}", "job_id",
                                              (json_int_t) kf_msg_int (msg, "job_id", 0),
                                              "lease",
                                              (json_int_t) kf_msg_int (msg, "lease", 0),
                                              "ok", 0, "result", "error",
                                              "worker is stopping", "returned", 1);
                    const char *token = kf_msg_str (msg, "lease_token");
                    if (token)
                        json_object_set_new (body, "lease_token", json_string (token));
                    s_send (&self, "RESULT", body);
                }
                kf_msg_destroy (&msg);
            }
            else
                s_on_coordinator (&self);
        }
    }
    if (self.dealer)
        s_send (&self, "BYE", NULL);
    if (self.running)
        kf_warn ("%d job(s) still running at exit", self.running);
    zsock_destroy (&self.dealer);
    zsock_destroy (&self.results);
    free (self.jobs);
    free (self.leases);
    for (int i = 0; i < c.credits; i++)
        free (self.tokens[i]);
    free (self.tokens);
    if (zlistx_size (self.held))
        kf_warn ("%zu finished result(s) never sent: the coordinator was not reachable",
                 zlistx_size (self.held));
    zlistx_destroy (&self.held);
    zlistx_destroy (&self.deferred);
    json_decref (self.caps);
    free (self.items);
    kf_info ("stopped");
    return 0;
}

int
kf_job_fail (kf_job_result_t *res, const char *fmt, ...)
{
    char reason[KF_JOB_ERROR_MAX];
    va_list ap;
    va_start (ap, fmt);
    vsnprintf (reason, sizeof reason, fmt, ap);
    va_end (ap);
    res->ok = false;
    res->error = strdup (reason);
    return -1;
}
