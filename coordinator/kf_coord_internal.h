/*  kf_coord_internal.h - the coordinator's state, shared by its files:
 *  kf_coord.c (start, stop, the event loop), kf_coord_endpoints.c
 *  (sockets, CURVE, reading and sending messages), kf_coord_workers.c
 *  (the worker registry, their messages and results, liveness and lease
 *  expiry), kf_coord_dispatch.c (leasing queued jobs, the outbox),
 *  kf_coord_clients.c (client requests: submit, cancel, drain, audit,
 *  status) and kf_coord_metrics.c (the /metrics text and the database
 *  figures it is drawn from).
 *
 *  Private to those files; kf_coord.h is the interface.
 */
#ifndef KF_COORD_INTERNAL_H
#define KF_COORD_INTERNAL_H

#include "kf_auth.h"
#include "kf_coord.h"
#include "kf_db.h"
#include "kf_inbox.h"
#include "kf_lease.h"
#include "kf_metrics.h"
#include "kf_proto.h"
#include "kf_search.h"
#include <czmq.h>
#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A connected worker, as its HELLO described it. */
typedef struct {
    char *id;
    char *route_key;         /* hex of the routing id */
    zframe_t *route;
    char role[32];
    char *name, *host;
    json_t *caps;
    char backends[256];      /* text[] literal (kf_pgarray), e.g. {"host","cuda"} */
    char arch[64];
    int credits;             /* as claimed; kf_lease_allowance caps its use */
    long finished;           /* results it brought for leases it held */
    json_t *jobs;            /* array of job ids leased to it */
    kf_lease_book_t *book;   /* the leases and tokens it holds */
    int64_t last_heard;
    bool draining;
} kf_coord_worker_t;

/* This process's counters (status "counters", the *_total metrics). */
enum {
    KF_COORD_RECEIVED, KF_COORD_SENT, KF_COORD_LATE, KF_COORD_REQUEUED, KF_COORD_DONE,
    KF_COORD_FAILED, KF_COORD_DISPATCHED, KF_COORD_BATCHES, KF_COORD_DB_ERRORS,
    KF_COORD_HANDED_BACK, KF_COORD_REFUSED, KF_COORD_HELD_DROPPED, KF_COORD_WORKER_ERRORS,
    KF_COORD_DISPATCH_FAILED, KF_COORD_N
};

/* What /metrics reports of the database's tables, read by a thread of
 * its own on a connection of its own (kf_coord_metrics.c), never by the
 * loop nor by a scrape: a scrape runs no statement, so a slow or locked
 * database cannot hold up either. Fields below MU are shared with that
 * thread and read or written under it. */
typedef struct {
    pthread_t thread;
    bool running;            /* THREAD was started */
    kf_db_t *db;             /* the reader's own connection */
    pthread_mutex_t mu;
    pthread_cond_t wake;
    bool stop;               /* the coordinator is going */
    bool enabled;            /* the loop is ready (schema migrated) */
    json_t *jobs;            /* rows {role, state, n}; NULL until the first read */
    json_t *runs;            /* rows {status, n, input_tokens, output_tokens, cost_usd} */
    json_t *evals;           /* {total, last_minute} */
    int64_t taken;           /* zclock_mono of the read */
    double ping_s;           /* SELECT 1's round trip at the last read; NAN: failed */
    int64_t next;            /* no read before (zclock_mono); 0: at once */
    int64_t last_scrape;     /* zclock_mono of the last scrape; 0: none yet */
    long read_errors;        /* reads that failed */
    long statements;         /* statements the reader sent */
    bool failing;            /* the last read failed (logged once a streak) */
} kf_coord_snapshot_t;

struct kf_coord_t {
    kf_coord_config_t cfg;
    zlistx_t *outbox;        /* JOBs waiting for their commit (kf_coord_dispatch.c) */
    kf_inbox_t *results;     /* RESULTs waiting to be recorded */
    kf_inbox_t *recorded;    /* RESULTs recorded in this pass's transaction;
                                back to RESULTS if it fails */
    bool sweep_orphans;      /* a pass did not commit: leases of workers
                                declared gone in it may still stand */
    int unrecorded_passes;   /* passes in a row that failed to record them
                                with the database connected */
    kf_db_t *db;
    kf_search_t search;
    zsock_t *workers, *clients, *status, *events;
    zhashx_t *by_id;         /* worker id -> kf_coord_worker_t (owned) */
    zhashx_t *by_route;      /* route key -> kf_coord_worker_t (borrowed) */
    long counters[KF_COORD_N];
    long errors[KF_PROTO_N_ERRORS];
    int64_t started;
    int64_t next_heartbeat, next_lease_check;
    int64_t next_seen_write; /* when workers.last_seen is next written */
    bool dispatch_needed;
    bool ready;              /* database connected, migrated, listening */
    bool waiting_logged;
    kf_auth_t *auth;         /* NULL: no CURVE */
    kf_metrics_t *metrics;   /* NULL: no /metrics */
    zhashx_t *drained;       /* worker ids an operator drained (kfctl drain) */
    double tx_seconds;       /* the loop's write transactions: total time */
    long tx_count;
    double tx_max_seconds;   /* the slowest since the last scrape */
    kf_coord_snapshot_t snapshot;   /* the database's figures for /metrics */
};

/* ---- kf_coord_endpoints.c: sockets and messages ---------------------------- */

/* A socket of TYPE bound to ENDPOINT, with CURVE where kf_curve_scope
 * wants it. Returns 0, or -1 (logged). */
int kf_coord_bind (kf_coord_t *self, zsock_t **sock, int type, const char *endpoint,
                   size_t max_message);
/* Sends TYPE with BODY (taken) to ROUTE on SOCK, counted. */
void kf_coord_send (kf_coord_t *self, zsock_t *sock, zframe_t *route, const char *type,
                    json_t *body);
void kf_coord_reply_error (kf_coord_t *self, zsock_t *sock, zframe_t *route, const char *code,
                           const char *reason);
/* The ERROR for a request whose row did not come: "unavailable" when the
 * database FAILED, else "not-found" saying WHY ("no run with that id"). */
void kf_coord_reply_missing (kf_coord_t *self, zsock_t *sock, zframe_t *route, bool failed,
                             const char *why);
/* The search's events, published after the commit that made them true;
 * truncated to KEEP when it did not commit. */
void kf_coord_publish_events (kf_coord_t *self);
void kf_coord_truncate_events (kf_coord_t *self, size_t keep);
/* Reads every waiting message from SOCK, up to the batch size, and hands
 * each to the worker or client handler. */
void kf_coord_drain (kf_coord_t *self, zsock_t *sock, kf_endpoint_t ep);

/* ---- kf_coord_workers.c: the registry, results, liveness ---------------------- */

/* zhashx destructor of by_id. */
void kf_coord_worker_free (void **item);
void kf_coord_forget_job (kf_coord_worker_t *w, int64_t job_id);
/* The job kinds that run PyTorch (a PyTorch problem's reference, a
 * model_profile), as SQL: they go only to a worker that has torch
 * (kf_coord_dispatch.c), and a run waiting for one says so
 * (kf_coord_fit.c). */
/* Heartbeats between two writes of the live workers' workers.last_seen
 * (kf_coord_cron): 50 of the default 1 s, well inside the ten minutes
 * the prompt's host condition looks back. */
#define KF_COORD_SEEN_BEATS 50

#define KF_COORD_TORCH_KINDS "('reference', 'model_profile')"
/* Whether W's HELLO said it found a Python with torch. */
bool kf_coord_worker_has_torch (const kf_coord_worker_t *w);
/* One message from a worker, inside the pass's transaction; takes *MSG_P
 * when it keeps it (a RESULT). */
void kf_coord_on_worker_message (kf_coord_t *self, zframe_t *route, kf_msg_t **msg_p);
/* Records the RESULTs waiting, inside the pass's transaction. */
void kf_coord_complete_results (kf_coord_t *self);
/* After the pass's transaction: keeps its RESULTs for another try when it
 * did not commit. */
void kf_coord_results_after_commit (kf_coord_t *self, bool committed);
/* Heartbeats out, dead workers, expired and orphaned leases. */
void kf_coord_cron (kf_coord_t *self);

/* ---- kf_coord_dispatch.c: leases and the outbox ------------------------------- */

/* Leases queued jobs to every worker with free credits; the JOBs wait in
 * the outbox for the pass's commit. */
void kf_coord_dispatch (kf_coord_t *self);
/* Sends the outbox (COMMITTED) or forgets it. */
void kf_coord_flush_outbox (kf_coord_t *self, bool committed);

/* ---- kf_coord_clients.c: client and status requests --------------------------- */

void kf_coord_on_client_message (kf_coord_t *self, zsock_t *sock, zframe_t *route,
                                 kf_msg_t *msg);

/* ---- kf_coord_metrics.c: /metrics ------------------------------------------------ */

/* kf_metrics_render_fn: the exposition text of one scrape (caller frees). */
char *kf_coord_metrics_text (void *arg);
/* Starts the reader of the database's figures (with /metrics only). 0,
 * or -1 when the thread cannot start. */
int kf_coord_metrics_start (kf_coord_t *self);
/* The loop is ready: the reader may read (idempotent, cheap). */
void kf_coord_metrics_ready (kf_coord_t *self);
/* Stops the reader and frees the figures. */
void kf_coord_metrics_stop (kf_coord_t *self);

#endif
