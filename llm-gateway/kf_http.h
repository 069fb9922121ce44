/*  kf_http.h - HTTP requests over libcurl's multi interface, inside the
 *  caller's event loop.
 *
 *  Nothing here blocks: kf_http_start queues a request and returns; the
 *  loop asks kf_http_prepare for the sockets curl wants watched and its
 *  timer, polls them with everything else, and hands the outcome to
 *  kf_http_dispatch, which drives curl and calls each request's done
 *  function when it ends. Connections are kept in the multi handle's
 *  cache, so requests to one host reuse them. Retries are not made here:
 *  the response says what happened (status, curl error, Retry-After) and
 *  the caller decides.
 */
#ifndef KF_HTTP_H
#define KF_HTTP_H

#include <czmq.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct kf_http_t kf_http_t;

typedef struct {
    long status;             /* HTTP status; 0 when no response came */
    int curl_code;           /* CURLE_OK or why the transfer failed */
    bool timed_out;          /* connect, total or low-speed limit hit */
    bool aborted;            /* the engine was destroyed first */
    const char *error;       /* curl's text for curl_code (borrowed) */
    char *body;              /* owned by the engine until done returns */
    size_t body_len;
    long retry_after_ms;     /* from Retry-After / retry-after-ms; -1 none */
    double total_s;
} kf_http_response_t;

/* Called once per request, on the loop thread. RESP is borrowed. */
typedef void (kf_http_done_fn) (void *arg, const kf_http_response_t *resp);

typedef struct {
    long connect_timeout_ms;     /* 0: 10000 */
    long timeout_ms;             /* whole transfer; 0: 600000 */
    long low_speed_bytes;        /* abort below this many bytes/s ... */
    long low_speed_s;            /* ... for this long; 0: no check */
    size_t max_body;             /* response bytes kept; 0: 8 MiB */
    int max_connections;         /* cached connections; 0: 256 */
} kf_http_options_t;

/* Returns NULL when curl cannot be set up. OPTIONS is copied. */
kf_http_t *kf_http_new (const kf_http_options_t *options);

/* Ends every request in flight, calling its done function with
 * resp->aborted set, and frees the engine. */
void kf_http_destroy (kf_http_t **self_p);

/* POSTs BODY (borrowed, copied by curl) to URL with HEADERS (each
 * "Name: value", NULL-ended, copied). Returns 0, or -1 when it could not
 * be queued (DONE is not called then). */
int kf_http_post (kf_http_t *self, const char *url, const char *const *headers,
                  const char *body, size_t body_len, kf_http_done_fn *done, void *arg);

/* Poll items curl wants (as kf_worker_hooks_t.prepare): writes up to MAX,
 * returns how many there are, lowers *TIMEOUT_MS to curl's timer. */
int kf_http_prepare (kf_http_t *self, zmq_pollitem_t *items, int max, long *timeout_ms);

/* Drives curl after a poll: ITEMS as prepare wrote them, with revents. */
void kf_http_dispatch (kf_http_t *self, zmq_pollitem_t *items, int n);

/* Requests in flight. */
int kf_http_running (const kf_http_t *self);

/* BASE (or DEFAULT_BASE when NULL) without trailing slashes, then PATH:
 * the vendors' SDKs take base URLs with and without one. Caller frees. */
char *kf_http_url (const char *base, const char *default_base, const char *path);

/* Overwrites and frees a string that holds a secret (an API key header),
 * so the key is not left in freed memory for a core dump to show. */
void kf_http_secret_free (char *secret);

#endif
