/*  kf_http.c - libcurl multi driven by the caller's poll (see kf_http.h).
 *
 *  curl tells us which sockets to watch through its socket callback and
 *  when it next needs a call through its timer callback; we keep both and
 *  hand them to the loop as zmq_pollitem_t, so curl's sockets sit in the
 *  same zmq_poll as the worker's DEALER and nothing needs a thread. Easy
 *  handles are recycled (curl_easy_reset keeps nothing but the handle),
 *  and connections live in the multi handle's cache, which is what makes
 *  keep-alive work across requests.
 */
#include "kf_http.h"
#include "kf_str.h"
#include "kf_take.h"

#include <curl/curl.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct s_req_t s_req_t;

struct s_req_t {
    kf_http_t *http;
    CURL *easy;
    struct curl_slist *headers;
    char *buf;
    size_t len, cap;
    long retry_after_ms;
    kf_http_done_fn *done;
    void *arg;
    s_req_t *prev, *next;
    int code;                    /* CURLcode once done */
    char errbuf[CURL_ERROR_SIZE];
};

typedef struct {
    curl_socket_t fd;
    int what;                    /* CURL_POLL_IN, _OUT, _INOUT */
} s_sock_t;

struct kf_http_t {
    CURLM *multi;
    kf_http_options_t opt;
    s_sock_t *socks;
    int n_socks, max_socks;
    int64_t timer_at;            /* ms, monotonic; -1: no timer */
    s_req_t *reqs;               /* in flight, for destroy */
    int running;
    CURL **pool;                 /* idle easy handles */
    int n_pool, max_pool;
};

static int
s_on_socket (CURL *easy, curl_socket_t fd, int what, void *userp, void *socketp)
{
    (void) easy;
    (void) socketp;
    kf_http_t *self = userp;
    int i = 0;
    while (i < self->n_socks && self->socks[i].fd != fd)
        i++;
    if (what == CURL_POLL_REMOVE) {
        if (i < self->n_socks)
            self->socks[i] = self->socks[--self->n_socks];
        return 0;
    }
    if (i == self->n_socks) {
        if (self->n_socks == self->max_socks) {
            int grown = self->max_socks ? self->max_socks * 2 : 64;
            s_sock_t *s = realloc (self->socks, sizeof *s * (size_t) grown);
            if (!s)
                return -1;   //  curl fails this transfer; we go on
            self->socks = s;
            self->max_socks = grown;
        }
        self->n_socks++;
    }
    self->socks[i].fd = fd;
    self->socks[i].what = what;
    return 0;
}

static int
s_on_timer (CURLM *multi, long timeout_ms, void *userp)
{
    (void) multi;
    kf_http_t *self = userp;
    self->timer_at = timeout_ms < 0 ? -1 : zclock_mono () + timeout_ms;
    return 0;
}

static size_t
s_on_body (char *data, size_t size, size_t nmemb, void *userp)
{
    s_req_t *req = userp;
    size_t n = size * nmemb;
    if (req->len + n > req->http->opt.max_body)
        return 0;    //  CURLE_WRITE_ERROR: a response this big is not one we want
    if (req->len + n + 1 > req->cap) {
        size_t cap = req->cap ? req->cap : 4096;
        while (cap < req->len + n + 1)
            cap *= 2;
        char *buf = realloc (req->buf, cap);
        if (!buf)
            return 0;
        req->buf = buf;
        req->cap = cap;
    }
    memcpy (req->buf + req->len, data, n);
    req->len += n;
    req->buf[req->len] = 0;
    return n;
}

//  Retry-After in seconds or as an HTTP date, and the millisecond variant
//  some vendors add; the millisecond one wins because it is more precise.
static size_t
s_on_header (char *data, size_t size, size_t nmemb, void *userp)
{
    s_req_t *req = userp;
    size_t n = size * nmemb;
    char line[256];
    if (n >= sizeof line)
        return n;
    memcpy (line, data, n);
    line[n] = 0;
    if (!strncasecmp (line, "HTTP/", 5))
        req->retry_after_ms = -1;    //  a new response (after a 100) starts afresh
    else if (!strncasecmp (line, "retry-after-ms:", 15)) {
        char *end;
        double ms = strtod (line + 15, &end);
        if (end != line + 15 && ms >= 0)
            req->retry_after_ms = (long) ms;
    }
    else if (!strncasecmp (line, "retry-after:", 12) && req->retry_after_ms < 0) {
        char *v = line + 12;
        while (*v == ' ' || *v == '\t')
            v++;
        char *end;
        double s = strtod (v, &end);
        if (end != v && s >= 0)
            req->retry_after_ms = (long) (s * 1000);
        else {
            v[strcspn (v, "\r\n")] = 0;
            time_t when = curl_getdate (v, NULL);
            if (when > 0) {
                time_t now = time (NULL);
                req->retry_after_ms = when > now ? (long) (when - now) * 1000 : 0;
            }
        }
    }
    return n;
}

kf_http_t *
kf_http_new (const kf_http_options_t *options)
{
    static bool s_global;
    if (!s_global) {
        //  Not thread-safe, and must precede every other curl call: the
        //  gateway's main thread reaches here first.
        if (curl_global_init (CURL_GLOBAL_DEFAULT) != CURLE_OK)
            return NULL;
        s_global = true;
    }
    kf_http_t *self = calloc (1, sizeof *self);
    if (!self)
        return NULL;
    if (options)
        self->opt = *options;
    if (!self->opt.connect_timeout_ms)
        self->opt.connect_timeout_ms = 10000;
    if (!self->opt.timeout_ms)
        self->opt.timeout_ms = 600000;
    if (!self->opt.max_body)
        self->opt.max_body = 8u << 20;
    if (!self->opt.max_connections)
        self->opt.max_connections = 256;
    self->timer_at = -1;
    self->multi = curl_multi_init ();
    if (!self->multi) {
        free (self);
        return NULL;
    }
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETFUNCTION, s_on_socket);
    curl_multi_setopt (self->multi, CURLMOPT_SOCKETDATA, self);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERFUNCTION, s_on_timer);
    curl_multi_setopt (self->multi, CURLMOPT_TIMERDATA, self);
    //  Keep as many idle connections as we may have requests in flight,
    //  or a burst would close and reopen them.
    curl_multi_setopt (self->multi, CURLMOPT_MAXCONNECTS, (long) self->opt.max_connections);
    return self;
}

static void
s_unlink (s_req_t *req)
{
    kf_http_t *self = req->http;
    if (req->prev)
        req->prev->next = req->next;
    else if (self->reqs == req)
        self->reqs = req->next;
    if (req->next)
        req->next->prev = req->prev;
    req->prev = req->next = NULL;
}

//  Frees an unlinked request; its easy handle goes back to the pool.
static void
s_req_free (s_req_t *req)
{
    kf_http_t *self = req->http;
    curl_slist_free_all (req->headers);
    if (self->n_pool < self->max_pool)
        self->pool[self->n_pool++] = req->easy;
    else
        curl_easy_cleanup (req->easy);
    free (req->buf);
    free (req);
    self->running--;
}

void
kf_http_destroy (kf_http_t **self_p)
{
    kf_http_t *self = KF_TAKE (self_p);
    if (!self)
        return;
    while (self->reqs) {
        s_req_t *req = self->reqs;
        curl_multi_remove_handle (self->multi, req->easy);
        kf_http_response_t resp = { .aborted = true, .curl_code = CURLE_ABORTED_BY_CALLBACK,
                                    .error = "aborted", .retry_after_ms = -1 };
        kf_http_done_fn *done = req->done;
        void *arg = req->arg;
        s_unlink (req);
        s_req_free (req);
        if (done)
            done (arg, &resp);
    }
    for (int i = 0; i < self->n_pool; i++)
        curl_easy_cleanup (self->pool[i]);
    free (self->pool);
    curl_multi_cleanup (self->multi);
    free (self->socks);
    free (self);
}

int
kf_http_post (kf_http_t *self, const char *url, const char *const *headers,
              const char *body, size_t body_len, kf_http_done_fn *done, void *arg)
{
    s_req_t *req = calloc (1, sizeof *req);
    if (!req)
        return -1;
    req->http = self;
    req->done = done;
    req->arg = arg;
    req->retry_after_ms = -1;
    if (self->n_pool > 0) {
        req->easy = self->pool[--self->n_pool];
        curl_easy_reset (req->easy);
    }
    else
        req->easy = curl_easy_init ();
    if (!req->easy) {
        free (req);
        return -1;
    }
    bool ok = true;
    for (int i = 0; headers && headers[i] && ok; i++) {
        struct curl_slist *h = curl_slist_append (req->headers, headers[i]);
        ok = h != NULL;
        req->headers = h ? h : req->headers;
    }
    //  "Expect:" turns off 100-continue, a round trip per request that
    //  buys nothing for bodies this small.
    const char *fixed[] = { "Content-Type: application/json", "Expect:", NULL };
    for (int i = 0; fixed[i] && ok; i++) {
        struct curl_slist *h = curl_slist_append (req->headers, fixed[i]);
        ok = h != NULL;
        req->headers = h ? h : req->headers;
    }
    CURL *e = req->easy;
    ok = ok && curl_easy_setopt (e, CURLOPT_URL, url) == CURLE_OK;
    curl_easy_setopt (e, CURLOPT_HTTPHEADER, req->headers);
    curl_easy_setopt (e, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t) body_len);
    ok = ok && curl_easy_setopt (e, CURLOPT_COPYPOSTFIELDS, body) == CURLE_OK;
    curl_easy_setopt (e, CURLOPT_PRIVATE, req);
    curl_easy_setopt (e, CURLOPT_WRITEFUNCTION, s_on_body);
    curl_easy_setopt (e, CURLOPT_WRITEDATA, req);
    curl_easy_setopt (e, CURLOPT_HEADERFUNCTION, s_on_header);
    curl_easy_setopt (e, CURLOPT_HEADERDATA, req);
    curl_easy_setopt (e, CURLOPT_ERRORBUFFER, req->errbuf);
    curl_easy_setopt (e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt (e, CURLOPT_CONNECTTIMEOUT_MS, self->opt.connect_timeout_ms);
    curl_easy_setopt (e, CURLOPT_TIMEOUT_MS, self->opt.timeout_ms);
    if (self->opt.low_speed_s > 0) {
        curl_easy_setopt (e, CURLOPT_LOW_SPEED_LIMIT, self->opt.low_speed_bytes);
        curl_easy_setopt (e, CURLOPT_LOW_SPEED_TIME, self->opt.low_speed_s);
    }
    curl_easy_setopt (e, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt (e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt (e, CURLOPT_TCP_NODELAY, 1L);
    //  Plain http:// only to a local server, https:// anywhere: both are
    //  fine, but never file:// or the other schemes curl knows.
    curl_easy_setopt (e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt (e, CURLOPT_FOLLOWLOCATION, 0L);
    if (!ok || curl_multi_add_handle (self->multi, e) != CURLM_OK) {
        curl_slist_free_all (req->headers);
        curl_easy_cleanup (e);
        free (req);
        return -1;
    }
    req->next = self->reqs;
    if (self->reqs)
        self->reqs->prev = req;
    self->reqs = req;
    self->running++;
    if (self->max_pool < self->running) {
        //  The pool never needs more handles than were ever in flight.
        CURL **pool = realloc (self->pool, sizeof *pool * (size_t) self->running);
        if (pool) {
            self->pool = pool;
            self->max_pool = self->running;
        }
    }
    return 0;
}

int
kf_http_prepare (kf_http_t *self, zmq_pollitem_t *items, int max, long *timeout_ms)
{
    for (int i = 0; i < self->n_socks && i < max; i++) {
        int what = self->socks[i].what;
        items[i] = (zmq_pollitem_t) {
            NULL, self->socks[i].fd,
            (short) (((what & CURL_POLL_IN) ? ZMQ_POLLIN : 0)
                     | ((what & CURL_POLL_OUT) ? ZMQ_POLLOUT : 0)),
            0
        };
    }
    if (self->timer_at >= 0) {
        int64_t wait = self->timer_at - zclock_mono ();
        if (wait < 0)
            wait = 0;
        if (wait < *timeout_ms)
            *timeout_ms = (long) wait;
    }
    return self->n_socks;
}

//  Collects finished transfers first and calls their done functions
//  afterwards, so a done function that starts a new request cannot
//  disturb curl's message queue while we read it.
static void
s_reap (kf_http_t *self)
{
    s_req_t *done_list = NULL;
    CURLMsg *m;
    int left;
    while ((m = curl_multi_info_read (self->multi, &left))) {
        if (m->msg != CURLMSG_DONE)
            continue;
        s_req_t *req = NULL;
        curl_easy_getinfo (m->easy_handle, CURLINFO_PRIVATE, (char **) &req);
        if (!req)
            continue;
        req->code = m->data.result;
        curl_multi_remove_handle (self->multi, m->easy_handle);
        s_unlink (req);
        req->next = done_list;
        done_list = req;
    }
    while (done_list) {
        s_req_t *req = done_list;
        done_list = req->next;
        req->next = NULL;
        kf_http_response_t resp = { .curl_code = req->code,
                                    .retry_after_ms = req->retry_after_ms };
        curl_easy_getinfo (req->easy, CURLINFO_RESPONSE_CODE, &resp.status);
        curl_easy_getinfo (req->easy, CURLINFO_TOTAL_TIME, &resp.total_s);
        resp.timed_out = req->code == CURLE_OPERATION_TIMEDOUT;
        if (req->code != CURLE_OK)
            resp.error = req->errbuf[0] ? req->errbuf : curl_easy_strerror (req->code);
        resp.body = req->buf;
        resp.body_len = req->len;
        req->done (req->arg, &resp);
        s_req_free (req);
    }
}

void
kf_http_dispatch (kf_http_t *self, zmq_pollitem_t *items, int n)
{
    int still;
    for (int i = 0; i < n; i++) {
        if (!items[i].revents)
            continue;
        int flags = ((items[i].revents & ZMQ_POLLIN) ? CURL_CSELECT_IN : 0)
                    | ((items[i].revents & ZMQ_POLLOUT) ? CURL_CSELECT_OUT : 0)
                    | ((items[i].revents & ZMQ_POLLERR) ? CURL_CSELECT_ERR : 0);
        curl_multi_socket_action (self->multi, items[i].fd, flags, &still);
    }
    if (self->timer_at >= 0 && zclock_mono () >= self->timer_at) {
        self->timer_at = -1;
        curl_multi_socket_action (self->multi, CURL_SOCKET_TIMEOUT, 0, &still);
    }
    s_reap (self);
}

int
kf_http_running (const kf_http_t *self)
{
    return self->running;
}

char *
kf_http_url (const char *base, const char *default_base, const char *path)
{
    if (!base)
        base = default_base;
    size_t len = strlen (base);
    while (len > 0 && base[len - 1] == '/')
        len--;
    return kf_strdupf ("%.*s%s", (int) len, base, path);
}

void
kf_http_secret_free (char *secret)
{
    if (!secret)
        return;
    volatile char *p = secret;
    while (*p)
        *p++ = 0;
    free (secret);
}
