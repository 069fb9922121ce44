/*  kf_test_worker.h - a worker loop (kf_worker_run) on a thread of its
 *  own, for the tests that play its coordinator on a ROUTER
 *  (test_worker_keep, test_worker_idle).
 */
#ifndef KF_TEST_WORKER_H
#define KF_TEST_WORKER_H

#include "kf_worker.h"
#include <signal.h>

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

#endif
