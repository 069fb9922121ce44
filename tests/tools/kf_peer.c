/*  kf_peer - a scripted worker-endpoint peer for the tests of issue 13
 *  (items 5-10): it says what a test tells it to, honest or not, through
 *  the real codec, and prints every message it receives as one JSON line
 *  {"type", "body"} on stdout.
 *
 *      kf_peer --endpoint EP [--heartbeat-ms MS] STEP...
 *
 *  Steps, one argument each, run in order:
 *
 *      hello ID ROLE CREDITS CAPS [JOBS]   HELLO (CAPS, JOBS: JSON)
 *      send TYPE BODY                      any message; in BODY the text
 *                                          $job, $lease and $token stand for
 *                                          the last JOB's values
 *      expect TYPE [MS]                    read until a TYPE arrives (10 s)
 *      jobs N [MS]                         read until N JOBs in all (10 s)
 *      waitfile PATH [MS]                  read until PATH exists (300 s)
 *      reconnect                           a new DEALER: a new routing id
 *      answer N [MS]                       answer the next N JOBs with a
 *                                          failed RESULT (lease and token
 *                                          echoed; 300 s)
 *      results SIZE                        an ok RESULT for every JOB held,
 *                                          its result padded to SIZE bytes
 *      raw N SIZE                          a HEARTBEAT with N extra frames
 *                                          of SIZE bytes (over the caps)
 *      silent                              stop heartbeating from here
 *
 *  While it waits it heartbeats every --heartbeat-ms (200), credits as
 *  the last HELLO said and no jobs listed, and answers nothing. Exits 0
 *  when every step ran, 1 when an expectation timed out, 2 on usage.
 */
#include "kf_proto.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    const char *endpoint;
    zsock_t *sock;
    int heartbeat_ms;
    int64_t next_hb;
    bool silent;
    int credits;
    long jobs;
    int64_t job_id, lease;
    char token[64];
    json_t *held;            /* every JOB's {job_id, lease, lease_token} */
} s_peer_t;

static void
s_connect (s_peer_t *self)
{
    zsock_destroy (&self->sock);
    self->sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (self->sock, 500);
    zsock_set_sndhwm (self->sock, 100000);
    zsock_connect (self->sock, "%s", self->endpoint);
}

static void
s_send (s_peer_t *self, const char *type, json_t *body)
{
    kf_msg_t *m = kf_msg_new (type, body);
    kf_msg_send (&m, self->sock, NULL, NULL);
}

/* Reads for up to MS, heartbeating; returns true as soon as DONE says. */
static bool
s_read (s_peer_t *self, int ms, bool (*done) (s_peer_t *, kf_msg_t *, const void *),
        const void *arg)
{
    int64_t until = zclock_mono () + ms;
    while (zclock_mono () < until) {
        int64_t now = zclock_mono ();
        if (!self->silent && now >= self->next_hb) {
            s_send (self, "HEARTBEAT", json_pack ("{s:i, s:[]}", "credits", self->credits,
                                                  "jobs"));
            self->next_hb = now + self->heartbeat_ms;
        }
        if (done && done (self, NULL, arg))
            return true;
        zmq_pollitem_t item = { zsock_resolve (self->sock), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, 50) <= 0)
            continue;
        kf_msg_t *m = NULL;
        if (kf_msg_recv (self->sock, KF_EP_WORKER_OUT, KF_PROTO_DEFAULT_MAX_MESSAGE, false,
                         NULL, &m, NULL) != KF_PROTO_OK)
            continue;
        if (!strcmp (m->type, "JOB")) {
            self->jobs++;
            self->job_id = kf_msg_int (m, "job_id", 0);
            self->lease = kf_msg_int (m, "lease", 0);
            const char *t = kf_msg_str (m, "lease_token");
            snprintf (self->token, sizeof self->token, "%s", t ? t : "");
            json_array_append_new (self->held, json_pack ("{s:I, s:I, s:s}", "job_id",
                                                          (json_int_t) self->job_id, "lease",
                                                          (json_int_t) self->lease,
                                                          "lease_token", self->token));
        }
        if (strcmp (m->type, "HEARTBEAT")) {
            char *body = json_dumps (m->body, JSON_COMPACT);
            printf ("{\"type\": \"%s\", \"body\": %s}\n", m->type, body);
            fflush (stdout);
            free (body);
        }
        bool stop = done && done (self, m, arg);
        kf_msg_destroy (&m);
        if (stop)
            return true;
    }
    return false;
}

static bool
s_is_type (s_peer_t *self, kf_msg_t *m, const void *arg)
{
    (void) self;
    return m && !strcmp (m->type, (const char *) arg);
}

static bool
s_has_jobs (s_peer_t *self, kf_msg_t *m, const void *arg)
{
    (void) m;
    return self->jobs >= *(const long *) arg;
}

/* Answers each JOB as it comes with a failed RESULT; done after ARG. */
static bool
s_answer (s_peer_t *self, kf_msg_t *m, const void *arg)
{
    static long answered;
    if (m && !strcmp (m->type, "JOB")) {
        s_send (self, "RESULT",
                json_pack ("{s:I, s:I, s:s, s:b, s:{}, s:s}", "job_id",
                           (json_int_t) self->job_id, "lease", (json_int_t) self->lease,
                           "lease_token", self->token, "ok", 0, "result", "error",
                           "kf_peer fails every job"));
        answered++;
    }
    return answered >= *(const long *) arg;
}

static bool
s_file_exists (s_peer_t *self, kf_msg_t *m, const void *arg)
{
    (void) self;
    (void) m;
    return access ((const char *) arg, F_OK) == 0;
}

/* BODY with $job, $lease and $token replaced. Caller frees. */
static char *
s_subst (s_peer_t *self, const char *body)
{
    size_t cap = strlen (body) * 2 + 256, n = 0;
    char *out = malloc (cap);
    for (const char *p = body; *p && n + 80 < cap;) {
        if (!strncmp (p, "$job", 4)) {
            n += (size_t) snprintf (out + n, cap - n, "%lld", (long long) self->job_id);
            p += 4;
        }
        else if (!strncmp (p, "$lease", 6)) {
            n += (size_t) snprintf (out + n, cap - n, "%lld", (long long) self->lease);
            p += 6;
        }
        else if (!strncmp (p, "$token", 6)) {
            n += (size_t) snprintf (out + n, cap - n, "%s", self->token);
            p += 6;
        }
        else
            out[n++] = *p++;
    }
    out[n] = 0;
    return out;
}

static json_t *
s_json (const char *text)
{
    json_error_t err;
    json_t *j = json_loads (text, JSON_DECODE_ANY, &err);
    if (!j)
        fprintf (stderr, "kf_peer: bad JSON '%s': %s\n", text, err.text);
    return j;
}

int
main (int argc, char **argv)
{
    s_peer_t self = { .heartbeat_ms = 200, .credits = 1, .held = json_array () };
    int i = 1;
    for (; i + 1 < argc && !strncmp (argv[i], "--", 2); i += 2) {
        if (!strcmp (argv[i], "--endpoint"))
            self.endpoint = argv[i + 1];
        else if (!strcmp (argv[i], "--heartbeat-ms"))
            self.heartbeat_ms = atoi (argv[i + 1]);
        else
            break;
    }
    if (!self.endpoint || i >= argc) {
        fprintf (stderr, "usage: kf_peer --endpoint EP [--heartbeat-ms MS] STEP... (see source)\n");
        return 2;
    }
    zsys_handler_set (NULL);
    s_connect (&self);
    int rc = 0;
    for (; i < argc && rc == 0; i++) {
        char *step = strdup (argv[i]);
        char *save = NULL, *verb = strtok_r (step, " ", &save);
        char *rest = save;
        if (!verb)
            rc = 2;
        else if (!strcmp (verb, "hello")) {
            char *id = strtok_r (NULL, " ", &save), *role = strtok_r (NULL, " ", &save);
            char *credits = strtok_r (NULL, " ", &save), *caps = strtok_r (NULL, " ", &save);
            char *jobs = strtok_r (NULL, " ", &save);
            json_t *c = caps ? s_json (caps) : NULL;
            if (!id || !role || !credits || !c)
                rc = 2;
            else {
                self.credits = atoi (credits);
                json_t *body = json_pack ("{s:s, s:s, s:i, s:o}", "worker_id", id, "role", role,
                                          "credits", self.credits, "capabilities", c);
                if (jobs)
                    json_object_set_new (body, "jobs", s_json (jobs));
                s_send (&self, "HELLO", body);
            }
        }
        else if (!strcmp (verb, "send")) {
            char *type = strtok_r (NULL, " ", &save);
            char *text = type && save ? s_subst (&self, save) : NULL;
            json_t *body = text ? s_json (text) : NULL;
            free (text);
            if (!type || !json_is_object (body)) {
                json_decref (body);
                rc = 2;
            }
            else
                s_send (&self, type, body);
        }
        else if (!strcmp (verb, "expect")) {
            char *type = strtok_r (NULL, " ", &save), *ms = strtok_r (NULL, " ", &save);
            if (!type)
                rc = 2;
            else if (!s_read (&self, ms ? atoi (ms) : 10000, s_is_type, type)) {
                fprintf (stderr, "kf_peer: no %s came\n", type);
                rc = 1;
            }
        }
        else if (!strcmp (verb, "jobs")) {
            char *n = strtok_r (NULL, " ", &save), *ms = strtok_r (NULL, " ", &save);
            long want = n ? atol (n) : 1;
            if (!s_read (&self, ms ? atoi (ms) : 10000, s_has_jobs, &want)) {
                fprintf (stderr, "kf_peer: %ld of %ld jobs came\n", self.jobs, want);
                rc = 1;
            }
        }
        else if (!strcmp (verb, "waitfile")) {
            char *path = strtok_r (NULL, " ", &save), *ms = strtok_r (NULL, " ", &save);
            if (!path || !s_read (&self, ms ? atoi (ms) : 300000, s_file_exists, path))
                rc = 1;
        }
        else if (!strcmp (verb, "answer")) {
            char *n = strtok_r (NULL, " ", &save), *ms = strtok_r (NULL, " ", &save);
            long want = n ? atol (n) : 1;
            if (!s_read (&self, ms ? atoi (ms) : 300000, s_answer, &want))
                rc = 1;
        }
        else if (!strcmp (verb, "results")) {
            char *size = strtok_r (NULL, " ", &save);
            size_t n = size ? (size_t) atol (size) : 0;
            char *pad = malloc (n + 1);
            memset (pad, 'p', n);
            pad[n] = 0;
            size_t k;
            json_t *h;
            json_array_foreach (self.held, k, h) {
                json_t *body = json_deep_copy (h);
                json_object_set_new (body, "ok", json_true ());
                json_object_set_new (body, "result", json_pack ("{s:s}", "pad", pad));
                s_send (&self, "RESULT", body);
            }
            json_array_clear (self.held);
            free (pad);
        }
        else if (!strcmp (verb, "reconnect"))
            s_connect (&self);
        else if (!strcmp (verb, "silent"))
            self.silent = true;
        else if (!strcmp (verb, "raw")) {
            char *n = strtok_r (NULL, " ", &save), *size = strtok_r (NULL, " ", &save);
            size_t frames = n ? (size_t) atol (n) : 0, bytes = size ? (size_t) atol (size) : 0;
            const char sig[3] = { 'K', 'F', KF_PROTO_VERSION };
            zmsg_t *m = zmsg_new ();
            zmsg_addmem (m, sig, 3);
            zmsg_addstr (m, "HEARTBEAT");
            zmsg_addstr (m, "{}");
            char *chunk = calloc (1, bytes ? bytes : 1);
            for (size_t k = 0; k < frames; k++)
                zmsg_addmem (m, chunk, bytes);
            free (chunk);
            zmsg_send (&m, self.sock);
            zmsg_destroy (&m);
        }
        else {
            fprintf (stderr, "kf_peer: unknown step '%s'\n", verb);
            rc = 2;
        }
        (void) rest;
        free (step);
    }
    printf ("{\"type\": \"END\", \"body\": {\"rc\": %d, \"jobs\": %ld}}\n", rc, self.jobs);
    zsock_destroy (&self.sock);
    json_decref (self.held);
    return rc;
}
