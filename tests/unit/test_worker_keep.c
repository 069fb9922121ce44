/*  test_worker_keep.c - the worker side of issue 13, item 9, against a
 *  coordinator played by this test on a ROUTER:
 *    - a JOB beyond the worker's credits is handed back unstarted
 *      ("returned": its attempt is not spent), listing the jobs it holds;
 *    - the worker heartbeats at the interval WELCOME names (100 ms), not
 *      at its own (5 s), and takes the coordinator for gone after the
 *      liveness WELCOME names;
 *    - a job that finishes while the worker has no connection (it took
 *      the coordinator for gone and waits to reconnect) keeps its RESULT:
 *      the next HELLO lists the job, and the RESULT, with the JOB's lease
 *      token, follows the next WELCOME.
 *  Every wait is for a message or a socket event, bounded by a generous
 *  ceiling for a loaded machine. */
#include "../kf_test.h"
#include "../kf_test_worker.h"
#include "kf_proto.h"
#include "kf_worker.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static atomic_int s_gate, s_finished;

static void
s_handler (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    (void) arg;
    (void) job;
    while (!atomic_load (&s_gate))
        zclock_sleep (10);
    res->ok = true;
    res->result = json_pack ("{s:b}", "kept", 1);
    atomic_store (&s_finished, 1);
}

int
main (void)
{
    char endpoint[128];
    snprintf (endpoint, sizeof endpoint, "ipc:///tmp/kf-test-worker-keep-%d.sock", (int) getpid ());
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    CHECK (zsock_bind (router, "%s", endpoint) == 0);
    zactor_t *monitor = zactor_new (zmonitor, router);
    zstr_sendx (monitor, "LISTEN", "DISCONNECTED", NULL);
    zstr_sendx (monitor, "START", NULL);
    zsock_wait (monitor);

    json_t *caps = json_pack ("{s:[s], s:s}", "backends", "host", "arch", "x86_64");
    kf_test_worker_t run = { .cfg = { .endpoint = endpoint, .role = "keep", .worker_id = "keeper",
                             .credits = 1, .capabilities = caps, .handler = s_handler,
                             .heartbeat_ms = 5000, .liveness = 3,
                             /* At least 1 s without a connection after it takes
                              * us for gone: the job finishes in that window. */
                             .backoff_min_ms = 2000, .backoff_max_ms = 2000 } };
    pthread_t tid;
    pthread_create (&tid, NULL, kf_test_worker_main, &run);

    zframe_t *route = NULL;
    kf_msg_t *m;
    m = kf_test_worker_expect (router, "HELLO", 30000, &route, NULL, NULL, NULL, 0);
    CHECK (m != NULL);
    kf_msg_destroy (&m);
    kf_msg_t *w = kf_msg_new ("WELCOME", json_pack ("{s:s, s:i, s:i}", "worker_id", "keeper",
                                                    "heartbeat_ms", 100, "liveness", 3));
    kf_msg_send (&w, router, route, NULL);
    const char *token = "0123456789abcdef0123456789abcdef";
    kf_msg_t *job = kf_msg_new ("JOB", json_pack ("{s:i, s:i, s:s, s:s, s:{}}", "job_id", 7,
                                                  "lease", 3, "lease_token", token, "kind",
                                                  "noop", "payload"));
    kf_msg_send (&job, router, route, NULL);

    /* 0. A second JOB while its one credit runs job 7: handed back
     * unstarted ("returned", so no attempt is spent), listing job 7. */
    job = kf_msg_new ("JOB", json_pack ("{s:i, s:i, s:s, s:s, s:{}}", "job_id", 8, "lease", 1,
                                        "lease_token", token, "kind", "noop", "payload"));
    kf_msg_send (&job, router, route, NULL);
    m = kf_test_worker_expect (router, "RESULT", 30000, &route, NULL, NULL, NULL, 0);
    CHECK (m && kf_msg_int (m, "job_id", 0) == 8 && !json_is_true (json_object_get (m->body, "ok")));
    CHECK (m && json_is_true (json_object_get (m->body, "returned")));
    json_t *held = m ? json_object_get (m->body, "jobs") : NULL;
    CHECK (json_array_size (held) == 1 && json_integer_value (json_array_get (held, 0)) == 7);
    kf_msg_destroy (&m);

    /* 1. Heartbeats at WELCOME's 100 ms: five arrive long before the
     * worker's own 5 s would have sent one. */
    int beats = 0;
    int64_t t0 = zclock_mono ();
    while (beats < 5 && zclock_mono () - t0 < 4000) {
        /* We heartbeat too (every 50 ms), so it keeps us for alive. */
        kf_msg_t *hb = kf_msg_new ("HEARTBEAT", NULL);
        kf_msg_send (&hb, router, route, NULL);
        m = kf_test_worker_expect (router, "HEARTBEAT", 50, &route, NULL, &beats, NULL, 0);
        kf_msg_destroy (&m);
    }
    CHECK (beats >= 5);
    printf ("test_worker_keep: %d heartbeats in %lld ms\n", beats,
            (long long) (zclock_mono () - t0));

    /* 2. Silence: the worker takes us for gone after 3 x 100 ms and drops
     * its connection (the monitor sees it), then waits >= 1 s to try
     * again. The job finishes in that window. */
    char *event = NULL;
    zsock_set_rcvtimeo (monitor, 30000);
    event = zstr_recv (monitor);
    CHECK (event && !strcmp (event, "DISCONNECTED"));
    zstr_free (&event);
    atomic_store (&s_gate, 1);
    while (!atomic_load (&s_finished))
        zclock_sleep (10);

    /* 3. It comes back: HELLO lists the finished job, and after WELCOME
     * the kept RESULT arrives with the lease and its token. */
    zframe_t *old = zframe_dup (route);
    m = kf_test_worker_expect (router, "HELLO", 30000, &route, old, NULL, NULL, 0);
    zframe_destroy (&old);
    CHECK (m != NULL);
    json_t *jobs = m ? json_object_get (m->body, "jobs") : NULL;
    CHECK (json_array_size (jobs) == 1 && json_integer_value (json_array_get (jobs, 0)) == 7);
    kf_msg_destroy (&m);
    w = kf_msg_new ("WELCOME", json_pack ("{s:s, s:i, s:i}", "worker_id", "keeper",
                                          "heartbeat_ms", 100, "liveness", 3));
    kf_msg_send (&w, router, route, NULL);
    m = kf_test_worker_expect (router, "RESULT", 30000, &route, NULL, NULL, NULL, 0);
    CHECK (m != NULL);
    CHECK (m && kf_msg_int (m, "job_id", 0) == 7 && kf_msg_int (m, "lease", 0) == 3);
    CHECK (m && kf_msg_str (m, "lease_token") && !strcmp (kf_msg_str (m, "lease_token"), token));
    CHECK (m && json_is_true (json_object_get (json_object_get (m->body, "result"), "kept")));
    kf_msg_destroy (&m);

    run.stop = 1;
    pthread_join (tid, NULL);
    CHECK (run.rc == 0);
    zframe_destroy (&route);
    zactor_destroy (&monitor);
    zsock_destroy (&router);
    json_decref (caps);
    return kf_test_done ("test_worker_keep");
}
