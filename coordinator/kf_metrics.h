/*  kf_metrics.h - the coordinator's Prometheus endpoint: a small HTTP/1.0
 *  responder whose sockets join the coordinator's zmq_poll.
 *
 *  It answers GET /metrics (and GET /) with the text the caller renders,
 *  anything else with 404, then closes the connection. Nothing here
 *  blocks: sockets are non-blocking, a request must arrive within two
 *  seconds and fit in 4 KiB, and at most 16 connections are open at once
 *  (further ones wait in the kernel's backlog). The coordinator's
 *  rendering reads memory only (kf_coord_metrics.c): no statement runs
 *  during a scrape.
 */
#ifndef KF_METRICS_H
#define KF_METRICS_H

#include <czmq.h>
#include <stdio.h>

typedef struct kf_metrics_t kf_metrics_t;

/* Returns the exposition text (caller's to free), or NULL on failure. */
typedef char *(kf_metrics_render_fn) (void *arg);

/* Listens on ADDRESS ("HOST:PORT", "[V6]:PORT" or ":PORT" for every
 * address). Returns NULL with *ERR (caller frees) when it cannot. */
kf_metrics_t *kf_metrics_new (const char *address, kf_metrics_render_fn *render,
                              void *arg, char **err);
void kf_metrics_destroy (kf_metrics_t **self_p);

/* Serves only peers whose address is in LIST: comma-separated addresses
 * or CIDR blocks ("127.0.0.1/8, ::1, 10.0.5.0/24"); any other connection
 * is closed at once, unread, and counted. Until this is called, only
 * loopback peers are served. Returns 0, or -1 with *ERR on a bad entry. */
int kf_metrics_allow (kf_metrics_t *self, const char *list, char **err);
/* Connections refused by the allow-list so far. */
long kf_metrics_refused (const kf_metrics_t *self);

/* Writes up to MAX poll items (plain file descriptors) and returns how
 * many; lowers *TIMEOUT_MS to the nearest request deadline. */
int kf_metrics_prepare (kf_metrics_t *self, zmq_pollitem_t *items, int max, long *timeout_ms);

/* Serves what the poll found ready on ITEMS (as prepare wrote them). */
void kf_metrics_dispatch (kf_metrics_t *self, zmq_pollitem_t *items, int n);

/* Scrapes answered so far. */
long kf_metrics_scrapes (const kf_metrics_t *self);

/* Exposition helpers: "# HELP" and "# TYPE" lines, then samples. */
void kf_metrics_head (FILE *out, const char *name, const char *type, const char *help);
/* One sample: NAME, optional LABELS ("role=\"compile\"", or NULL), VALUE. */
void kf_metrics_sample (FILE *out, const char *name, const char *labels, double value);

#endif
