/*  kf_worker_internal.h - the worker loop's state, shared by its files:
 *  the loop (kf_worker.c), its threads (kf_worker_threads.c) and what
 *  becomes of its RESULTs (kf_worker_results.c). Nothing outside common/
 *  includes it; the public interface is kf_worker.h.
 */
#ifndef KF_WORKER_INTERNAL_H
#define KF_WORKER_INTERNAL_H

#include "kf_worker.h"
#include "kf_proto.h"

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
    zlistx_t *held;          /* results not sent yet, oldest first */
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

//  ---------------------------------------------------------------------
//  Results (kf_worker_results.c)

/* The RESULT for RES, whose contents it takes; TOKEN is the lease token
 * (or NULL). Pure, so job threads and the loop thread both use it. */
kf_msg_t *kf_worker_result_msg (int64_t job_id, int64_t lease, const char *token,
                                kf_job_result_t *res);

/* The jobs SELF holds, as an array of ids (caller's): running, and
 * finished with the RESULT not sent yet (so the coordinator does not
 * hand them back on our HELLO). */
json_t *kf_worker_jobs_array (kf_worker_t *self);

/* The destructor of SELF->held's items. */
void kf_worker_held_free (void **item);

/* Sends the encoded RESULT *ZMSG_P of JOB_ID now when SELF is
 * registered, else keeps it for the next WELCOME (oldest dropped past
 * KF_WORKER_HELD_BYTES: their leases lapse on the coordinator's side). */
void kf_worker_send_result (kf_worker_t *self, int64_t job_id, zmsg_t **zmsg_p);

/* After a WELCOME: the results kept meanwhile, oldest first. */
void kf_worker_flush_held (kf_worker_t *self);

//  ---------------------------------------------------------------------
//  Threads (kf_worker_threads.c)

/* Runs the JOB *MSG_P (taken), whose slot is taken, in a detached thread
 * of its own; frees the slot again when the thread cannot start. */
void kf_worker_start_thread (kf_worker_t *self, kf_msg_t **msg_p);

/* Starts the idle work's thread; when it cannot start, the idle work is
 * not tried again. */
void kf_worker_idle_start (kf_worker_t *self);

#endif
