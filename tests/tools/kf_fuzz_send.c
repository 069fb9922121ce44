/*  kf_fuzz_send - throws bad and odd messages at a coordinator's endpoints.
 *
 *  One DEALER each on the worker, client and status endpoints (and an
 *  XSUB on the event PUB endpoint) sends --count messages built raw with
 *  czmq, mixing: fully random frames; the right signature with a random
 *  type; a valid type with truncated or garbled JSON; valid JSON with
 *  required fields of the wrong type; schema-valid messages with random
 *  values; messages over --max-message (one huge frame, or many frames
 *  adding up); too few or too many frames; a wrong version byte; deeply
 *  nested JSON. Replies are read without blocking as it goes and counted
 *  by ERROR code.
 *
 *  Then it opens a fresh DEALER on the status endpoint, sends a proper
 *  STATUS (built with the codec) and requires the STATUS reply within
 *  --reply-timeout-ms. Prints one JSON line; exits 0 when that reply
 *  came, 1 when not, 2 on usage errors.
 *
 *  With --late-worker EP it is instead one well-behaved worker that turns
 *  hung: it says HELLO (role --role), takes one JOB, stops heartbeating,
 *  and after --late-ms sends that job's RESULT anyway, with the lease it
 *  was given: by then the coordinator has declared it dead and requeued
 *  the job, so the RESULT must be discarded as late. Prints one JSON line
 *  (job_id, lease, the reply's type); exits 0 when it got a job.
 */
#include "kf_proto.h"
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef enum {
    F_RANDOM, F_RANDOM_TYPE, F_BAD_JSON, F_WRONG_TYPES, F_VALID_ODD,
    F_OVERSIZED, F_FRAME_COUNT, F_VERSION, F_DEEP, F_N
} s_kind_t;

static const char *s_kind_names[F_N] = {
    "random", "random_type", "bad_json", "wrong_types", "valid_odd",
    "oversized", "frame_count", "version", "deep"
};

/* Relative weight of each kind: oversized ones are big, so rarer; the
 * rest evenly. */
static const int s_weights[F_N] = { 14, 14, 14, 14, 10, 3, 12, 12, 2 };

typedef struct {
    const char *name;
    zsock_t *sock;
    const char **types;      /* types this endpoint accepts */
    long sent[F_N];
    long send_failed;
    long replies;
    zhashx_t *codes;         /* ERROR code -> count (as a pointer-sized int) */
    long other_replies;
} s_target_t;

static size_t s_max_message = 65536;

static uint32_t
s_rand (void)
{
    return (uint32_t) random ();
}

static void
s_random_bytes (unsigned char *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (unsigned char) s_rand ();
}

static void
s_add_random (zmsg_t *msg, size_t max)
{
    size_t n = max ? s_rand () % (max + 1) : 0;
    unsigned char *buf = malloc (n + 1);
    s_random_bytes (buf, n);
    zmsg_addmem (msg, buf, n);
    free (buf);
}

static void
s_add_sig (zmsg_t *msg, unsigned char version)
{
    unsigned char sig[3] = { 'K', 'F', version };
    zmsg_addmem (msg, sig, 3);
}

/* A valid body for TYPE, as text (caller frees). */
static char *
s_valid_body (const char *type)
{
    json_t *b;
    if (!strcmp (type, "HELLO"))
        b = json_pack ("{s:s, s:s, s:i, s:{s:[s], s:s}}", "worker_id", "fz-hello",
                       "role", "fuzz", "credits", 1, "capabilities", "backends",
                       "host", "arch", "x86_64");
    else if (!strcmp (type, "RESULT"))
        b = json_pack ("{s:i, s:i, s:b, s:{}}", "job_id", 1, "lease", 1, "ok", 1,
                       "result");
    else if (!strcmp (type, "HEARTBEAT"))
        b = json_pack ("{s:i, s:[]}", "credits", 1, "jobs");
    else if (!strcmp (type, "SUBMIT"))
        b = json_pack ("{s:{s:s}, s:{s:s}}", "task", "name", "x", "config", "target",
                       "host");
    else if (!strcmp (type, "SHOW") || !strcmp (type, "BEST") || !strcmp (type, "CANCEL"))
        b = json_pack ("{s:i}", "run_id", 1);
    else
        b = json_object ();
    char *text = json_dumps (b, JSON_COMPACT);
    json_decref (b);
    return text;
}

/* A random JSON value of a type other than the field wants. */
static json_t *
s_wrong_value (int salt)
{
    switch (salt % 6) {
    case 0: return json_string ("3");
    case 1: return json_real (1.5);
    case 2: return json_null ();
    case 3: return json_pack ("[i]", 1);
    case 4: return json_pack ("{s:i}", "x", 1);
    default: return json_true ();
    }
}

/* A body for TYPE whose required fields have the wrong JSON type. For
 * types without required fields, a body that is not an object. */
static char *
s_wrong_types_body (const char *type)
{
    static const char *fields[][5] = {
        { "HELLO", "worker_id", "role", "credits", "capabilities" },
        { "RESULT", "job_id", "lease", "ok", "result" },
        { "SUBMIT", "task", "config", NULL, NULL },
        { "SHOW", "run_id", NULL, NULL, NULL },
        { "BEST", "run_id", NULL, NULL, NULL },
        { "CANCEL", "run_id", NULL, NULL, NULL },
    };
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++) {
        if (strcmp (fields[i][0], type))
            continue;
        char *valid = s_valid_body (type);
        json_t *b = json_loads (valid, 0, NULL);
        free (valid);
        int n = 0;
        while (n < 4 && fields[i][n + 1])
            n++;
        /* One field wrong, or one missing. */
        const char *victim = fields[i][1 + s_rand () % n];
        if (s_rand () % 4 == 0)
            json_object_del (b, victim);
        else
            json_object_set_new (b, victim, s_wrong_value ((int) s_rand ()));
        char *text = json_dumps (b, JSON_COMPACT);
        json_decref (b);
        return text;
    }
    static const char *not_objects[] = { "[]", "1", "\"s\"", "null", "true", "[{}]" };
    return strdup (not_objects[s_rand () % 6]);
}

/* A schema-valid body with random values: ids out of range, negative or
 * huge numbers, odd strings. Checked by the handlers, not the codec. */
static char *
s_valid_odd_body (const char *type)
{
    static const json_int_t ints[] = { 0, -1, 1, 2, 4096, 4097, 1LL << 40,
                                       9223372036854775807LL, -9223372036854775807LL };
    json_int_t n = ints[s_rand () % (sizeof ints / sizeof ints[0])];
    char id[64];
    static const char *ids[] = { "", "fz-a", "fz b", "fz/../x", "fz'; DROP TABLE jobs; --",
                                 "fz\xc3\xa9", "fz-zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz" };
    snprintf (id, sizeof id, "%s%u", ids[s_rand () % 7], s_rand () % 50);
    /* Roles nothing else in the test uses, so fake workers get no jobs. */
    static const char *roles[] = { "fuzz", "", "x{y}", "fuzz-role-with-a-long-name-over-32" };
    json_t *b;
    if (!strcmp (type, "HELLO")) {
        json_t *backends = json_array ();
        int nb = (int) (s_rand () % 4);
        for (int i = 0; i < nb; i++) {
            static const char *names[] = { "host", "cuda", "a,b", "{x}", "\"q\"",
                                           "name-longer-than-twenty-chars" };
            json_array_append_new (backends, json_string (names[s_rand () % 6]));
        }
        if (s_rand () % 5 == 0)
            json_array_append_new (backends, json_integer (7));
        b = json_pack ("{s:s, s:s, s:I, s:{s:o, s:s}, s:[I]}", "worker_id", id, "role",
                       roles[s_rand () % 4], "credits", n, "capabilities", "backends",
                       backends, "arch", s_rand () % 2 ? "x86_64" : "sm_{90}", "jobs", n);
    }
    else if (!strcmp (type, "RESULT"))
        b = json_pack ("{s:I, s:I, s:b, s:{s:s}, s:s}", "job_id", n, "lease", n, "ok",
                       (int) (s_rand () % 2), "result", "source", "x", "error", "fuzz");
    else if (!strcmp (type, "HEARTBEAT"))
        b = json_pack ("{s:I, s:[I]}", "credits", n, "jobs", n);
    else if (!strcmp (type, "SUBMIT"))
        b = json_pack ("{s:{s:s, s:I}, s:{s:s, s:I, s:I}}", "task", "name", id, "x", n,
                       "config", "target", s_rand () % 2 ? "host:../x" : "cuda",
                       "generations", n, "population", n);
    else if (!strcmp (type, "SHOW") || !strcmp (type, "BEST") || !strcmp (type, "CANCEL"))
        b = json_pack ("{s:I}", "run_id", n);
    else
        b = json_pack ("{s:s, s:I}", "req", id, "extra", n);
    char *text = b ? json_dumps (b, JSON_COMPACT) : NULL;
    json_decref (b);
    return text ? text : strdup ("{}");
}

static void
s_add_str (zmsg_t *msg, const char *text)
{
    zmsg_addmem (msg, text, strlen (text));
}

/* Builds one message of KIND for endpoint T (types: what it accepts). */
static zmsg_t *
s_build (s_target_t *t, s_kind_t kind)
{
    zmsg_t *msg = zmsg_new ();
    size_t ntypes = 0;
    while (t->types[ntypes])
        ntypes++;
    const char *type = t->types[s_rand () % ntypes];
    switch (kind) {
    case F_RANDOM: {
        int n = 1 + (int) (s_rand () % 6);
        for (int i = 0; i < n; i++)
            s_add_random (msg, 64);
        break;
    }
    case F_RANDOM_TYPE: {
        s_add_sig (msg, KF_PROTO_VERSION);
        char buf[40];
        size_t n = 1 + s_rand () % 32;
        if (s_rand () % 2) {
            /* Syntactically a type, but none the protocol knows. */
            for (size_t i = 0; i < n; i++)
                buf[i] = (char) ('A' + s_rand () % 26);
            zmsg_addmem (msg, buf, n);
        }
        else if (s_rand () % 4 == 0)
            zmsg_addmem (msg, "", 0);
        else {
            n = s_rand () % 40;
            s_random_bytes ((unsigned char *) buf, n);
            zmsg_addmem (msg, buf, n);
        }
        s_add_str (msg, "{}");
        break;
    }
    case F_BAD_JSON: {
        s_add_sig (msg, KF_PROTO_VERSION);
        s_add_str (msg, type);
        char *body = s_valid_body (type);
        size_t len = strlen (body);
        if (s_rand () % 2)
            len = s_rand () % len;             /* truncated */
        else {
            for (int i = 0; i < 3; i++)        /* garbled */
                body[s_rand () % len] = (char) s_rand ();
        }
        zmsg_addmem (msg, body, len);
        free (body);
        break;
    }
    case F_WRONG_TYPES: {
        s_add_sig (msg, KF_PROTO_VERSION);
        s_add_str (msg, type);
        char *body = s_wrong_types_body (type);
        s_add_str (msg, body);
        free (body);
        break;
    }
    case F_VALID_ODD: {
        s_add_sig (msg, KF_PROTO_VERSION);
        s_add_str (msg, type);
        char *body = s_valid_odd_body (type);
        s_add_str (msg, body);
        free (body);
        if (s_rand () % 3 == 0)
            s_add_random (msg, 256);           /* an unexpected binary frame */
        break;
    }
    case F_OVERSIZED: {
        s_add_sig (msg, KF_PROTO_VERSION);
        s_add_str (msg, type);
        /* Over the cap, but under twice the cap per frame, which the
         * coordinator's sockets drop without reading. */
        size_t size = s_max_message + 1 + s_rand () % (s_max_message / 2);
        if (s_rand () % 2) {
            char *body = malloc (size);
            memset (body, ' ', size);
            body[0] = '{';
            body[size - 1] = '}';
            zmsg_addmem (msg, body, size);
            free (body);
        }
        else {
            /* Small body, the rest in binary frames that add up. */
            s_add_str (msg, "{}");
            size_t part = size / 8 + 1;
            unsigned char *buf = calloc (1, part);
            for (int i = 0; i < 8; i++)
                zmsg_addmem (msg, buf, part);
            free (buf);
        }
        break;
    }
    case F_FRAME_COUNT: {
        if (s_rand () % 2) {
            /* Too few: signature (and maybe a type) only. */
            s_add_sig (msg, KF_PROTO_VERSION);
            if (s_rand () % 2)
                s_add_str (msg, type);
        }
        else {
            s_add_sig (msg, KF_PROTO_VERSION);
            s_add_str (msg, type);
            char *body = s_valid_body (type);
            s_add_str (msg, body);
            free (body);
            int extra = KF_PROTO_MAX_FRAMES + 1 + (int) (s_rand () % 40);
            for (int i = 0; i < extra; i++)
                s_add_random (msg, 8);
        }
        break;
    }
    case F_VERSION: {
        unsigned char v = (unsigned char) s_rand ();
        if (v == KF_PROTO_VERSION)
            v = 0;
        s_add_sig (msg, v);
        s_add_str (msg, type);
        char *body = s_valid_body (type);
        s_add_str (msg, body);
        free (body);
        break;
    }
    case F_DEEP: {
        /* Nesting far past any sane parser depth, under the size cap. */
        s_add_sig (msg, KF_PROTO_VERSION);
        s_add_str (msg, type);
        size_t depth = 5000 + s_rand () % 20000;
        char *body = malloc (depth * 2 + 16);
        size_t n = 0;
        n += (size_t) sprintf (body, "{\"a\":");
        for (size_t i = 0; i < depth; i++)
            body[n++] = '[';
        for (size_t i = 0; i < depth; i++)
            body[n++] = ']';
        body[n++] = '}';
        zmsg_addmem (msg, body, n);
        free (body);
        break;
    }
    default:
        break;
    }
    return msg;
}

/* Reads every reply waiting on T, without blocking. */
static void
s_drain (s_target_t *t)
{
    while (zsock_events (t->sock) & ZMQ_POLLIN) {
        zmsg_t *msg = zmsg_recv_nowait (t->sock);
        if (!msg)
            break;
        t->replies++;
        zframe_t *type = zmsg_first (msg);
        type = type ? zmsg_next (msg) : NULL;
        zframe_t *body = type ? zmsg_next (msg) : NULL;
        if (type && zframe_streq (type, "ERROR") && body) {
            json_t *b = json_loadb ((const char *) zframe_data (body), zframe_size (body), 0,
                                    NULL);
            const char *code = json_string_value (json_object_get (b, "code"));
            if (code) {
                uintptr_t n = (uintptr_t) zhashx_lookup (t->codes, code);
                zhashx_update (t->codes, code, (void *) (n + 1));
            }
            else
                t->other_replies++;
            json_decref (b);
        }
        else
            t->other_replies++;
        zmsg_destroy (&msg);
    }
}

static s_kind_t
s_pick_kind (void)
{
    int total = 0;
    for (int i = 0; i < F_N; i++)
        total += s_weights[i];
    int r = (int) (s_rand () % (uint32_t) total);
    for (int i = 0; i < F_N; i++) {
        if (r < s_weights[i])
            return (s_kind_t) i;
        r -= s_weights[i];
    }
    return F_RANDOM;
}

/* Sends one message on T, never blocking for long: a full pipe means we
 * read replies and try again a few times, then count it as failed. */
static void
s_send (s_target_t *t, zmsg_t **msg_p, s_kind_t kind)
{
    for (int tries = 0; tries < 50; tries++) {
        zmsg_t *copy = zmsg_dup (*msg_p);
        if (zmsg_send (&copy, t->sock) == 0) {
            t->sent[kind]++;
            zmsg_destroy (msg_p);
            return;
        }
        zmsg_destroy (&copy);
        if (t->types)
            s_drain (t);
        zclock_sleep (10);
    }
    t->send_failed++;
    zmsg_destroy (msg_p);
}

static json_t *
s_target_json (s_target_t *t)
{
    json_t *sent = json_object (), *codes = json_object ();
    long total = 0;
    for (int i = 0; i < F_N; i++) {
        json_object_set_new (sent, s_kind_names[i], json_integer (t->sent[i]));
        total += t->sent[i];
    }
    if (t->codes)
        for (void *n = zhashx_first (t->codes); n; n = zhashx_next (t->codes))
            json_object_set_new (codes, zhashx_cursor (t->codes),
                                 json_integer ((json_int_t) (uintptr_t) n));
    return json_pack ("{s:I, s:o, s:I, s:I, s:o, s:I}", "sent_total", (json_int_t) total,
                      "sent", sent, "send_failed", (json_int_t) t->send_failed, "replies",
                      (json_int_t) t->replies, "error_codes", codes, "other_replies",
                      (json_int_t) t->other_replies);
}

/* A proper STATUS on a fresh DEALER; 0 when the STATUS reply came within
 * TIMEOUT_MS. */
static int
s_status_probe (const char *endpoint, int timeout_ms, double *took_ms)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 0);
    int rc = -1;
    int64_t start = zclock_mono ();
    if (zsock_connect (sock, "%s", endpoint) == 0) {
        kf_msg_t *req = kf_msg_new ("STATUS", json_object ());
        if (kf_msg_send (&req, zsock_resolve (sock), NULL, NULL) == 0) {
            zpoller_t *poller = zpoller_new (sock, NULL);
            while (rc != 0) {
                int left = timeout_ms - (int) (zclock_mono () - start);
                if (left <= 0 || !zpoller_wait (poller, left))
                    break;
                kf_msg_t *reply = NULL;
                if (kf_msg_recv (zsock_resolve (sock), KF_EP_CLIENT_OUT,
                                 KF_PROTO_DEFAULT_MAX_MESSAGE, false, NULL, &reply,
                                 NULL) == KF_PROTO_OK
                    && !strcmp (reply->type, "STATUS"))
                    rc = 0;
                kf_msg_destroy (&reply);
            }
            zpoller_destroy (&poller);
        }
    }
    *took_ms = (double) (zclock_mono () - start);
    zsock_destroy (&sock);
    return rc;
}

/* The --late-worker mode (see file header). */
static int
s_late_worker (const char *endpoint, const char *role, int late_ms)
{
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    zsock_set_linger (sock, 500);
    if (zsock_connect (sock, "%s", endpoint)) {
        fprintf (stderr, "kf_fuzz_send: cannot connect %s\n", endpoint);
        return 2;
    }
    char id[64];
    snprintf (id, sizeof id, "late-%d", (int) getpid ());
    kf_msg_t *m = kf_msg_new ("HELLO", json_pack ("{s:s, s:s, s:i, s:{s:[s], s:s}}",
                                                  "worker_id", id, "role", role, "credits",
                                                  1, "capabilities", "backends", "host",
                                                  "arch", "x86_64"));
    kf_msg_send (&m, zsock_resolve (sock), NULL, NULL);
    /* Behave until the job comes: heartbeat every 100 ms, up to 20 s. */
    zpoller_t *poller = zpoller_new (sock, NULL);
    int64_t job_id = 0, lease = 0, give_up = zclock_mono () + 20000;
    while (!job_id && zclock_mono () < give_up) {
        if (zpoller_wait (poller, 100)) {
            kf_msg_t *in = NULL;
            if (kf_msg_recv (zsock_resolve (sock), KF_EP_WORKER_OUT,
                             KF_PROTO_DEFAULT_MAX_MESSAGE, false, NULL, &in, NULL)
                    == KF_PROTO_OK
                && !strcmp (in->type, "JOB")) {
                job_id = kf_msg_int (in, "job_id", 0);
                lease = kf_msg_int (in, "lease", 0);
            }
            kf_msg_destroy (&in);
        }
        kf_msg_t *hb = kf_msg_new ("HEARTBEAT", json_pack ("{s:i, s:[]}", "credits", 1, "jobs"));
        kf_msg_send (&hb, zsock_resolve (sock), NULL, NULL);
    }
    char reply[KF_PROTO_MAX_TYPE + 64] = "";
    if (job_id) {
        /* Hung: no heartbeats, nothing read, then the stale RESULT. */
        zclock_sleep (late_ms);
        m = kf_msg_new ("RESULT", json_pack ("{s:I, s:I, s:b, s:{s:b}}", "job_id",
                                             (json_int_t) job_id, "lease", (json_int_t) lease,
                                             "ok", 1, "result", "late", 1));
        kf_msg_send (&m, zsock_resolve (sock), NULL, NULL);
        /* Whatever it answers (ERROR unknown-worker: it forgot us), read
         * the last thing within a second, skipping queued HEARTBEATs. */
        int64_t until = zclock_mono () + 1000;
        while (zclock_mono () < until && zpoller_wait (poller, 100)) {
            kf_msg_t *in = NULL;
            if (kf_msg_recv (zsock_resolve (sock), KF_EP_WORKER_OUT,
                             KF_PROTO_DEFAULT_MAX_MESSAGE, false, NULL, &in, NULL)
                    == KF_PROTO_OK
                && strcmp (in->type, "HEARTBEAT")) {
                const char *code = kf_msg_str (in, "code");
                snprintf (reply, sizeof reply, "%s%s%s", in->type, code ? " " : "",
                          code ? code : "");
            }
            kf_msg_destroy (&in);
        }
    }
    printf ("{\"worker_id\": \"%s\", \"job_id\": %lld, \"lease\": %lld, \"reply\": \"%s\"}\n",
            id, (long long) job_id, (long long) lease, reply);
    zpoller_destroy (&poller);
    zsock_destroy (&sock);
    return job_id ? 0 : 1;
}

static void
s_usage (FILE *out)
{
    fprintf (out,
             "usage: kf_fuzz_send --worker EP --client EP --status EP [--event EP]\n"
             "         [--count N] [--max-message BYTES] [--seed S] [--reply-timeout-ms MS]\n"
             "       kf_fuzz_send --late-worker EP [--role R] [--late-ms MS]\n"
             "Sends N bad or odd messages to each endpoint, then requires a STATUS\n"
             "reply from the status endpoint (see file header).\n");
}

int
main (int argc, char **argv)
{
    const char *worker_ep = NULL, *client_ep = NULL, *status_ep = NULL, *event_ep = NULL;
    const char *late_ep = NULL, *role = "late";
    int late_ms = 2000;
    long count = 10000;
    unsigned seed = 1;
    int reply_timeout_ms = 5000;
    static struct option opts[] = {
        { "worker", 1, 0, 'w' }, { "client", 1, 0, 'c' }, { "status", 1, 0, 's' },
        { "event", 1, 0, 'e' }, { "count", 1, 0, 'n' }, { "max-message", 1, 0, 'm' },
        { "seed", 1, 0, 'S' }, { "reply-timeout-ms", 1, 0, 'r' }, { "help", 0, 0, 'h' },
        { "late-worker", 1, 0, 'L' }, { "role", 1, 0, 'R' }, { "late-ms", 1, 0, 'T' },
        { 0, 0, 0, 0 }
    };
    int o;
    while ((o = getopt_long (argc, argv, "", opts, NULL)) != -1) {
        switch (o) {
        case 'w': worker_ep = optarg; break;
        case 'c': client_ep = optarg; break;
        case 's': status_ep = optarg; break;
        case 'e': event_ep = optarg; break;
        case 'n': count = atol (optarg); break;
        case 'm': s_max_message = (size_t) atol (optarg); break;
        case 'S': seed = (unsigned) strtoul (optarg, NULL, 10); break;
        case 'r': reply_timeout_ms = atoi (optarg); break;
        case 'L': late_ep = optarg; break;
        case 'R': role = optarg; break;
        case 'T': late_ms = atoi (optarg); break;
        case 'h': s_usage (stdout); return 0;
        default: s_usage (stderr); return 2;
        }
    }
    zsys_handler_set (NULL);
    if (late_ep)
        return late_ms >= 0 ? s_late_worker (late_ep, role, late_ms) : 2;
    if (!worker_ep || !client_ep || !status_ep || count < 1 || s_max_message < 64
        || reply_timeout_ms < 1) {
        s_usage (stderr);
        return 2;
    }
    srandom (seed);
    zsys_handler_set (NULL);

    static const char *worker_types[] = { "HELLO", "HEARTBEAT", "RESULT", "BYE", NULL };
    static const char *client_types[] = { "SUBMIT", "RUNS", "SHOW", "BEST", "CANCEL",
                                          "STATUS", "WORKERS", NULL };
    /* On the status endpoint mostly types it refuses: a valid STATUS is
     * answered with a full snapshot, and thousands of those only measure
     * the database. */
    static const char *status_types[] = { "STATUS", "SUBMIT", "SHOW", "HELLO", "RESULT",
                                          "EVENT", NULL };
    s_target_t targets[3] = {
        { .name = "worker", .types = worker_types },
        { .name = "client", .types = client_types },
        { .name = "status", .types = status_types },
    };
    const char *eps[3] = { worker_ep, client_ep, status_ep };
    for (int i = 0; i < 3; i++) {
        targets[i].sock = zsock_new (ZMQ_DEALER);
        targets[i].codes = zhashx_new ();
        zsock_set_linger (targets[i].sock, 0);
        zsock_set_sndhwm (targets[i].sock, 0);   /* queue everything */
        zsock_set_rcvhwm (targets[i].sock, 0);
        zsock_set_sndtimeo (targets[i].sock, 100);
        if (zsock_connect (targets[i].sock, "%s", eps[i])) {
            fprintf (stderr, "kf_fuzz_send: cannot connect %s\n", eps[i]);
            return 2;
        }
    }
    s_target_t sub = { .name = "event" };
    if (event_ep) {
        sub.sock = zsock_new (ZMQ_XSUB);
        zsock_set_linger (sub.sock, 0);
        zsock_set_sndtimeo (sub.sock, 100);
        if (zsock_connect (sub.sock, "%s", event_ep)) {
            fprintf (stderr, "kf_fuzz_send: cannot connect %s\n", event_ep);
            return 2;
        }
    }

    int64_t start = zclock_mono ();
    for (long i = 0; i < count; i++) {
        for (int k = 0; k < 3; k++) {
            s_kind_t kind = s_pick_kind ();
            zmsg_t *msg = s_build (&targets[k], kind);
            s_send (&targets[k], &msg, kind);
            if (i % 64 == 0)
                s_drain (&targets[k]);
        }
        if (sub.sock) {
            /* Upstream on a PUB: subscriptions (first byte 1 or 0) with
             * random topics, and random frames it must ignore. */
            zmsg_t *msg = zmsg_new ();
            int n = 1 + (int) (s_rand () % 3);
            for (int f = 0; f < n; f++)
                s_add_random (msg, 48);
            s_send (&sub, &msg, F_RANDOM);
        }
    }
    double send_s = (zclock_mono () - start) / 1000.0;
    /* Let the replies come in for a while: until a quiet half second. */
    int64_t quiet_since = zclock_mono (), give_up = zclock_mono () + 20000;
    while (zclock_mono () - quiet_since < 500 && zclock_mono () < give_up) {
        long before = 0, after = 0;
        for (int k = 0; k < 3; k++)
            before += targets[k].replies;
        zclock_sleep (50);
        for (int k = 0; k < 3; k++) {
            s_drain (&targets[k]);
            after += targets[k].replies;
        }
        if (after > before)
            quiet_since = zclock_mono ();
    }

    double took_ms = 0;
    int probe = s_status_probe (status_ep, reply_timeout_ms, &took_ms);

    json_t *report = json_pack ("{s:I, s:I, s:f, s:b, s:f}", "count", (json_int_t) count,
                                "seed", (json_int_t) seed, "send_s", send_s,
                                "status_reply", probe == 0, "status_reply_ms", took_ms);
    for (int k = 0; k < 3; k++)
        json_object_set_new (report, targets[k].name, s_target_json (&targets[k]));
    if (sub.sock)
        json_object_set_new (report, "event",
                             json_pack ("{s:I, s:I}", "sent", (json_int_t) sub.sent[F_RANDOM],
                                        "send_failed", (json_int_t) sub.send_failed));
    char *text = json_dumps (report, JSON_COMPACT);
    printf ("%s\n", text);
    free (text);
    json_decref (report);
    for (int k = 0; k < 3; k++) {
        zsock_destroy (&targets[k].sock);
        zhashx_destroy (&targets[k].codes);
    }
    zsock_destroy (&sub.sock);
    return probe == 0 ? 0 : 1;
}
