/*  kf_worker.c - the worker lifecycle: HELLO, credits, heartbeats, jobs in
 *  threads, reconnect with capped jittered backoff, goodbye on stop.
 *
 *  One thread owns the DEALER (ZeroMQ sockets are not thread-safe). Each
 *  job runs in a detached thread that owns its copy of the job, calls the
 *  handler, encodes the RESULT and pushes it over inproc to the main
 *  thread, which forwards it. So the handler may block for minutes while
 *  heartbeats keep flowing.
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
#include "kf_worker.h"
#include "kf_secrets.h"
#include "kf_config.h"
#include "kf_curve.h"
#include "kf_log.h"
#include "kf_proto.h"
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const kf_worker_config_t *cfg;
    char results_ep[64];
    kf_job_t job;            /* kind, token and payload owned here */
    char *kind;
    char *token;
    zmsg_t *frames;
} s_job_thread_t;

/* A finished RESULT not sent yet: no registered connection to send on. */
typedef struct {
    int64_t job_id;
    zmsg_t *msg;             /* encoded RESULT (no routing frame) */
    size_t bytes;
} s_held_t;

typedef struct kf_worker_t s_worker_t;

struct kf_worker_t {
    const kf_worker_config_t *cfg;
    char worker_id[256];
    zsock_t *dealer;
    zsock_t *results;        /* PULL: encoded RESULTs from job threads */
    char results_ep[64];
    int64_t *jobs;           /* job ids in progress, 0 = free slot */
    int64_t *leases;         /* the lease of each slot's job */
    char **tokens;           /* the lease token of each slot's job (owned) */
    int running;
    int heartbeat_ms;        /* ours until a WELCOME names the coordinator's */
    int liveness;
    zlistx_t *held;          /* s_held_t, oldest first */
    size_t held_bytes;
    int64_t last_heartbeat;  /* ms, monotonic: when we last sent one */
    zmq_pollitem_t *items;   /* asynchronous mode: ours, then the hooks' */
    int items_max;
    int64_t last_heard;      /* ms, monotonic */
    int64_t next_heartbeat;
    int64_t reconnect_at;    /* 0: connected */
    int backoff_ms;
    bool welcomed;
    json_t *caps;            /* what HELLO says; the idle work may replace it */
    int64_t idle_at;         /* ms, monotonic: the idle work is due; 0: never */
    bool idle_running;
    zlistx_t *deferred;      /* kf_msg_t JOBs that came while the idle work ran */
};

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

//  The RESULT for RES, whose contents it takes. Pure, so job threads and
//  the loop thread both use it.
static kf_msg_t *
s_result_msg (int64_t job_id, int64_t lease, const char *token, kf_job_result_t *res)
{
    json_t *body = json_pack ("{s:I, s:I, s:b, s:o}", "job_id", (json_int_t) job_id,
                              "lease", (json_int_t) lease, "ok", res->ok, "result",
                              res->result ? res->result : json_object ());
    res->result = NULL;
    //  The lease token proves the RESULT comes from the lease's holder.
    if (body && token)
        json_object_set_new (body, "lease_token", json_string (token));
    if (body && !res->ok) {
        json_object_set_new (body, "error",
                             json_string (res->error ? res->error : "job failed"));
        if (res->final)
            json_object_set_new (body, "final", json_true ());
    }
    free (res->error);
    res->error = NULL;
    //  Verdict details, compiler logs and errors go to the database and
    //  the next prompt: none carries a secret of this worker's.
    kf_secrets_scrub (body);
    kf_msg_t *msg = kf_msg_new ("RESULT", body);
    if (msg && res->frames) {
        zmsg_destroy (&msg->frames);
        msg->frames = res->frames;
        res->frames = NULL;
    }
    zmsg_destroy (&res->frames);
    return msg;
}

static void *
s_job_main (void *arg)
{
    s_job_thread_t *jt = arg;
    kf_job_result_t res = { 0 };
    jt->cfg->handler (jt->cfg->handler_arg, &jt->job, &res);
    kf_msg_t *msg = s_result_msg (jt->job.job_id, jt->job.lease, jt->token, &res);
    zsock_t *push = zsock_new_push (jt->results_ep);
    /* The job id travels first, in the routing position of the same
     * message, so the main thread knows which slot is free again; the
     * rest is the encoded RESULT it forwards unchanged. */
    uint64_t id = (uint64_t) jt->job.job_id;
    zframe_t *idf = zframe_new (&id, sizeof id);
    kf_msg_send (&msg, push, idf, NULL);
    zframe_destroy (&idf);
    zsock_destroy (&push);
    free (jt->kind);
    free (jt->token);
    json_decref (jt->job.payload);
    zmsg_destroy (&jt->frames);
    free (jt);
    return NULL;
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

//  The jobs we hold: running, and finished with the RESULT not sent yet
//  (so the coordinator does not hand them back on our HELLO).
static json_t *
s_jobs_array (s_worker_t *self)
{
    json_t *a = json_array ();
    for (int i = 0; i < self->cfg->credits; i++)
        if (self->jobs[i])
            json_array_append_new (a, json_integer (self->jobs[i]));
    for (s_held_t *h = zlistx_first (self->held); h; h = zlistx_next (self->held))
        json_array_append_new (a, json_integer (h->job_id));
    return a;
}

static void
s_held_free (void **item)
{
    s_held_t *h = *item;
    if (h)
        zmsg_destroy (&h->msg);
    free (h);
    *item = NULL;
}

//  Sends the encoded RESULT *ZMSG_P of JOB_ID now when we are registered,
//  else keeps it for the next WELCOME (oldest dropped past
//  KF_WORKER_HELD_BYTES: their leases lapse on the coordinator's side).
static void
s_send_result (s_worker_t *self, int64_t job_id, zmsg_t **zmsg_p)
{
    if (self->dealer && self->welcomed && zmsg_send (zmsg_p, self->dealer) == 0)
        return;
    s_held_t *h = calloc (1, sizeof *h);
    if (!h) {
        zmsg_destroy (zmsg_p);
        return;
    }
    h->job_id = job_id;
    h->msg = *zmsg_p;
    h->bytes = zmsg_content_size (h->msg);
    *zmsg_p = NULL;
    zlistx_add_end (self->held, h);
    self->held_bytes += h->bytes;
    while (self->held_bytes > KF_WORKER_HELD_BYTES && zlistx_size (self->held) > 1) {
        s_held_t *old = zlistx_detach (self->held, NULL);
        kf_warn ("dropping the result of job %lld kept for the coordinator (over %u bytes)",
                 (long long) old->job_id, KF_WORKER_HELD_BYTES);
        self->held_bytes -= old->bytes;
        s_held_free ((void **) &old);
    }
}

//  After a WELCOME: the results kept meanwhile, oldest first.
static void
s_flush_held (s_worker_t *self)
{
    s_held_t *h;
    while (self->dealer && (h = zlistx_first (self->held))) {
        if (zmsg_send (&h->msg, self->dealer))
            break;                   /* kept for the next WELCOME */
        zlistx_detach_cur (self->held);
        self->held_bytes -= h->bytes;
        kf_info ("sent the result of job %lld kept while not registered",
                 (long long) h->job_id);
        s_held_free ((void **) &h);
    }
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
        (int) getpid (), "jobs", s_jobs_array (self));
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

//  Runs the JOB *MSG_P, whose slot is taken, in a thread of its own.
static void
s_start_thread (s_worker_t *self, kf_msg_t **msg_p)
{
    kf_msg_t *msg = *msg_p;
    int64_t job_id = kf_msg_int (msg, "job_id", 0);
    const char *token = kf_msg_str (msg, "lease_token");
    s_job_thread_t *jt = calloc (1, sizeof *jt);
    jt->cfg = self->cfg;
    memcpy (jt->results_ep, self->results_ep, sizeof jt->results_ep);
    jt->kind = strdup (kf_msg_str (msg, "kind"));
    jt->token = token ? strdup (token) : NULL;
    jt->job.lease_token = jt->token;
    jt->job.job_id = job_id;
    jt->job.lease = kf_msg_int (msg, "lease", 0);
    jt->job.kind = jt->kind;
    jt->job.payload = json_incref (json_object_get (msg->body, "payload"));
    jt->frames = msg->frames;
    jt->job.frames = jt->frames;
    msg->frames = NULL;
    kf_msg_destroy (msg_p);

    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create (&tid, &attr, s_job_main, jt)) {
        kf_error ("cannot start a job thread");
        free (jt->kind);
        free (jt->token);
        json_decref (jt->job.payload);
        zmsg_destroy (&jt->frames);
        free (jt);
        for (int i = 0; i < self->cfg->credits; i++)
            if (self->jobs[i] == job_id) {
                self->jobs[i] = 0;
                self->running--;
                break;
            }
    }
    pthread_attr_destroy (&attr);
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
                                  "returned", 1, "jobs", s_jobs_array (self));
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
    s_start_thread (self, msg_p);
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
        s_flush_held (self);
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

int
kf_worker_complete (kf_worker_t *self, int64_t job_id, kf_job_result_t *res)
{
    int slot = -1;
    for (int i = 0; job_id > 0 && i < self->cfg->credits && slot < 0; i++)
        if (self->jobs[i] == job_id)
            slot = i;
    if (slot < 0) {
        free (res->error);
        json_decref (res->result);
        zmsg_destroy (&res->frames);
        memset (res, 0, sizeof *res);
        return -1;
    }
    kf_msg_t *msg = s_result_msg (job_id, self->leases[slot], self->tokens[slot], res);
    self->jobs[slot] = 0;
    self->leases[slot] = 0;
    free (self->tokens[slot]);
    self->tokens[slot] = NULL;
    self->running--;
    //  Without a registered connection it is kept for the next WELCOME.
    zmsg_t *zmsg = msg ? kf_msg_encode (&msg, NULL, NULL) : NULL;
    if (zmsg)
        s_send_result (self, job_id, &zmsg);
    return 0;
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

//  The idle work's thread: its function's answer, pushed to the loop as
//  [empty frame, next ms (int64), capabilities as JSON text or ""].
typedef struct {
    const kf_worker_idle_t *idle;
    char results_ep[64];
} s_idle_thread_t;

static void *
s_idle_main (void *arg)
{
    s_idle_thread_t *it = arg;
    json_t *caps = NULL;
    int64_t next = it->idle->fn (it->idle->arg, &caps);
    char *text = caps ? json_dumps (caps, JSON_COMPACT) : NULL;
    json_decref (caps);
    zsock_t *push = zsock_new_push (it->results_ep);
    zmsg_t *msg = zmsg_new ();
    zmsg_addmem (msg, NULL, 0);
    zmsg_addmem (msg, &next, sizeof next);
    zmsg_addstr (msg, text ? text : "");
    zmsg_send (&msg, push);
    zsock_destroy (&push);
    free (text);
    free (it);
    return NULL;
}

static void
s_idle_start (s_worker_t *self)
{
    s_idle_thread_t *it = calloc (1, sizeof *it);
    pthread_t tid;
    pthread_attr_t attr;
    pthread_attr_init (&attr);
    pthread_attr_setdetachstate (&attr, PTHREAD_CREATE_DETACHED);
    if (it) {
        it->idle = self->cfg->idle;
        memcpy (it->results_ep, self->results_ep, sizeof it->results_ep);
    }
    if (!it || pthread_create (&tid, &attr, s_idle_main, it)) {
        kf_error ("cannot start the idle work's thread; it is not tried again");
        free (it);
        self->idle_at = 0;
    }
    else
        self->idle_running = true;
    pthread_attr_destroy (&attr);
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
        s_start_thread (self, &msg);
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
    s_send_result (self, (int64_t) job_id, &zmsg);
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
    zlistx_set_destructor (self.held, s_held_free);
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
                        json_pack ("{s:i, s:o}", "credits", 0, "jobs", s_jobs_array (&self)));
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
                                   s_jobs_array (&self)));
            self.next_heartbeat = now + self.heartbeat_ms;
            self.last_heartbeat = now;
        }
        //  The idle work, in a moment without a job.
        bool idle_free = self.idle_at && !self.idle_running && !self.running && !drain_deadline;
        if (idle_free && now >= self.idle_at) {
            s_idle_start (&self);
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
