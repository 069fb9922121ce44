/*  test_worker_idle.c - a worker's work in the moments it holds no job
 *  (kf_worker_idle_t, common/kf_worker.h; the exec worker measures busy
 *  host figures again with it), against a coordinator played by this
 *  test on a ROUTER:
 *    - the first call comes first_ms after the start, on a thread of its
 *      own: heartbeats go on while it runs (800 ms here, 8 heartbeats);
 *    - a JOB that arrives meanwhile takes its credit at once (the
 *      heartbeats list it) and starts only after the idle work returned;
 *    - new capabilities it returns are said in a second HELLO on the same
 *      connection, which lists the job held;
 *    - no call while a job runs, though one is due; it comes after;
 *    - -1: no more calls.
 *  Every wait is for a message or a state, bounded by a generous ceiling
 *  for a loaded machine. */
#include "../kf_test.h"
#include "../kf_test_worker.h"
#include "kf_proto.h"
#include "kf_worker.h"
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <unistd.h>

static atomic_int s_calls, s_in_idle, s_gate;
static atomic_llong s_idle_end, s_job_start;

static int64_t
s_idle (void *arg, json_t **caps)
{
    (void) arg;
    int n = atomic_fetch_add (&s_calls, 1) + 1;
    if (n > 1)
        return -1;
    atomic_store (&s_in_idle, 1);
    zclock_sleep (800);
    *caps = json_pack ("{s:[s], s:i}", "backends", "host", "v", 2);
    atomic_store (&s_idle_end, zclock_mono ());
    atomic_store (&s_in_idle, 0);
    return 200;
}

static void
s_handler (void *arg, const kf_job_t *job, kf_job_result_t *res)
{
    (void) arg;
    (void) job;
    atomic_store (&s_job_start, zclock_mono ());
    while (!atomic_load (&s_gate))
        zclock_sleep (10);
    res->ok = true;
}

static bool
s_wait_for (atomic_int *v, int want, int ms)
{
    for (int64_t until = zclock_mono () + ms; zclock_mono () < until; zclock_sleep (5))
        if (atomic_load (v) == want)
            return true;
    return false;
}

int
main (void)
{
    char endpoint[128];
    snprintf (endpoint, sizeof endpoint, "ipc:///tmp/kf-test-worker-idle-%d.sock", (int) getpid ());
    zsock_t *router = zsock_new (ZMQ_ROUTER);
    CHECK (zsock_bind (router, "%s", endpoint) == 0);

    json_t *caps = json_pack ("{s:[s], s:i}", "backends", "host", "v", 1);
    kf_worker_idle_t idle = { .fn = s_idle, .first_ms = 300 };
    kf_test_worker_t run = { .cfg = { .endpoint = endpoint, .role = "idle", .worker_id = "idler",
                             .credits = 1, .capabilities = caps, .handler = s_handler,
                             .idle = &idle, .heartbeat_ms = 100, .liveness = 100 } };
    pthread_t tid;
    int64_t t0 = zclock_mono ();
    pthread_create (&tid, NULL, kf_test_worker_main, &run);

    zframe_t *route = NULL;
    kf_msg_t *m;
    m = kf_test_worker_expect (router, "HELLO", 30000, &route, NULL, NULL, NULL, 0);
    CHECK (m && kf_msg_int (m, "credits", 0) == 1);
    CHECK (m && json_integer_value (json_object_get (json_object_get (m->body, "capabilities"),
                                                     "v")) == 1);
    kf_msg_destroy (&m);
    kf_msg_t *w = kf_msg_new ("WELCOME", json_pack ("{s:s, s:i, s:i}", "worker_id", "idler",
                                                    "heartbeat_ms", 100, "liveness", 100));
    kf_msg_send (&w, router, route, NULL);
    zframe_t *first = zframe_dup (route);

    //  The first call, first_ms after the start.
    CHECK (s_wait_for (&s_in_idle, 1, 30000));
    CHECK (zclock_mono () - t0 >= 300);
    kf_msg_t *job = kf_msg_new ("JOB", json_pack ("{s:i, s:i, s:s, s:s, s:{}}", "job_id", 11,
                                                  "lease", 1, "lease_token",
                                                  "0123456789abcdef0123456789abcdef", "kind",
                                                  "noop", "payload"));
    kf_msg_send (&job, router, route, NULL);

    //  While it runs: heartbeats, the job listed; then a HELLO with the
    //  new capabilities and the job, on the same connection.
    int beats = 0, listed = 0;
    m = kf_test_worker_expect (router, "HELLO", 30000, &route, NULL, &beats, &listed, 11);
    printf ("test_worker_idle: %d heartbeats during the idle work, %d listing the job\n", beats,
            listed);
    CHECK (m != NULL);
    CHECK (beats >= 4 && listed >= 2);
    CHECK (route && zframe_eq (route, first));
    json_t *said = m ? json_object_get (m->body, "capabilities") : NULL;
    CHECK (json_integer_value (json_object_get (said, "v")) == 2);
    json_t *jobs = m ? json_object_get (m->body, "jobs") : NULL;
    CHECK (json_array_size (jobs) == 1 && json_integer_value (json_array_get (jobs, 0)) == 11);
    kf_msg_destroy (&m);

    //  The job started after the idle work returned, never beside it.
    for (int64_t until = zclock_mono () + 30000;
         !atomic_load (&s_job_start) && zclock_mono () < until;)
        zclock_sleep (5);
    CHECK (atomic_load (&s_job_start) >= atomic_load (&s_idle_end) && atomic_load (&s_idle_end) > 0);

    //  The next call is due 200 ms later, but the job holds the worker.
    zclock_sleep (600);
    CHECK (atomic_load (&s_calls) == 1);
    atomic_store (&s_gate, 1);
    m = kf_test_worker_expect (router, "RESULT", 30000, &route, NULL, NULL, NULL, 0);
    CHECK (m && kf_msg_int (m, "job_id", 0) == 11);
    kf_msg_destroy (&m);
    CHECK (s_wait_for (&s_calls, 2, 30000));
    //  It returned -1 and no capabilities: no HELLO, no further call.
    m = kf_test_worker_expect (router, "HELLO", 600, &route, NULL, NULL, NULL, 0);
    CHECK (m == NULL);
    kf_msg_destroy (&m);
    CHECK (atomic_load (&s_calls) == 2);

    run.stop = 1;
    pthread_join (tid, NULL);
    CHECK (run.rc == 0);
    zframe_destroy (&first);
    zframe_destroy (&route);
    zsock_destroy (&router);
    json_decref (caps);
    return kf_test_done ("test_worker_idle");
}
