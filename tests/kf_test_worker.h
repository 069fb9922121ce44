/*  kf_test_worker.h - a worker loop (kf_worker_run) on a thread of its
 *  own, and the wait for its next message, for the tests that play its
 *  coordinator on a ROUTER (test_worker_keep, test_worker_idle).
 */
#ifndef KF_TEST_WORKER_H
#define KF_TEST_WORKER_H

#include "kf_proto.h"
#include "kf_worker.h"
#include <signal.h>
#include <stdint.h>
#include <string.h>

/* CFG run until STOP is set; RC what kf_worker_run returned. */
typedef struct {
    kf_worker_config_t cfg;
    volatile sig_atomic_t stop;
    int rc;
} kf_test_worker_t;

/* The thread's function: ARG is a kf_test_worker_t. */
static inline void *
kf_test_worker_main (void *arg)
{
    kf_test_worker_t *run = arg;
    run->rc = kf_worker_run (&run->cfg, &run->stop);
    return NULL;
}

/* The next message of TYPE on ROUTER within MS (others skipped) from a
 * routing id other than NOT (when given); its routing id in *ROUTE. The
 * HEARTBEATs on the way, and one it returns, are counted in *BEATS, and
 * those that list job JOB alone in *LISTED (each when given). NULL when
 * none came in time. */
static inline kf_msg_t *
kf_test_worker_expect (zsock_t *router, const char *type, int ms, zframe_t **route,
                       zframe_t *not, int *beats, int *listed, int64_t job)
{
    int64_t until = zclock_mono () + ms;
    while (zclock_mono () < until) {
        zmq_pollitem_t item = { zsock_resolve (router), 0, ZMQ_POLLIN, 0 };
        if (zmq_poll (&item, 1, 20) <= 0)
            continue;
        zframe_t *r = NULL;
        kf_msg_t *m = NULL;
        if (kf_msg_recv (router, KF_EP_WORKER_IN, 1 << 20, true, &r, &m, NULL) != KF_PROTO_OK)
            continue;
        if (!strcmp (m->type, "HEARTBEAT")) {
            if (beats)
                (*beats)++;
            json_t *jobs = json_object_get (m->body, "jobs");
            if (listed && json_array_size (jobs) == 1
                && json_integer_value (json_array_get (jobs, 0)) == job)
                (*listed)++;
        }
        if (!strcmp (m->type, type) && !(not && zframe_eq (not, r))) {
            zframe_destroy (route);
            *route = r;
            return m;
        }
        zframe_destroy (&r);
        kf_msg_destroy (&m);
    }
    return NULL;
}

#endif
