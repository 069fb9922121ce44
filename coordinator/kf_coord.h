/*  kf_coord.h - the coordinator daemon: worker, client, status and event
 *  endpoints around one event loop, with every state change in PostgreSQL.
 */
#ifndef KF_COORD_H
#define KF_COORD_H

#include "kf_plausible.h"
#include <jansson.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct {
    const char *database_url;
    const char *worker_endpoint;
    const char *client_endpoint;
    const char *status_endpoint;
    const char *event_endpoint;
    int heartbeat_ms;        /* to and from workers */
    int liveness;            /* heartbeats missed before a worker is dead */
    int max_attempts;        /* leases of one job before it fails for good */
    int worker_wait_s;       /* a run no worker can serve fails after it (kf_coord_fit.c) */
    size_t max_message;
    size_t max_held_bytes;   /* RESULTs held while the database is away */
    int db_connect_s;        /* kf_db_set_limits */
    int db_statement_ms;
    int db_keepalive_s;
    int batch;               /* worker messages per transaction */
    int lease_ms[3];         /* generate, compile, execute backstops */
    json_t *timing;          /* default evaluate timing (borrowed) */
    json_t *search_defaults; /* kf_search_defaults_load's (borrowed); NULL: built in */
    const char *curve_cert;  /* our secret certificate: CURVE on tcp:// */
    const char *curve_allow_dir;   /* public certificates admitted */
    bool allow_plain_tcp;    /* plain tcp:// beyond loopback, knowingly */
    const char *metrics_address;   /* HOST:PORT of /metrics; NULL: none */
    const char *metrics_allow;     /* peers served (kf_metrics_allow); NULL: loopback */
    kf_plausible_rules_t plausible;   /* when a result is re-verified (kf_verify.c) */
} kf_coord_config_t;

typedef struct kf_coord_t kf_coord_t;

/* Binds the endpoints. The database is opened by kf_coord_run, which
 * serves status while it waits for it. Returns NULL on failure. */
kf_coord_t *kf_coord_new (const kf_coord_config_t *cfg);
void kf_coord_destroy (kf_coord_t **self_p);

/* Serves until *STOP is set. Returns 0, or 1 when the schema cannot be
 * applied. */
int kf_coord_run (kf_coord_t *self, volatile sig_atomic_t *stop);

#endif
