/*  kf_metrics.c - a minimal HTTP server for Prometheus scrapes (see
 *  kf_metrics.h for what it promises).
 *
 *  Why not ZMQ_STREAM: it would give the same bytes through a socket of
 *  the kind we already poll, but it cannot close a connection after the
 *  reply without a second empty-frame dance, and it owns no backlog limit.
 *  A listening TCP socket with accept() is thirty lines and behaves like
 *  every other exporter an operator has met.
 */
#include "kf_metrics.h"
#include "kf_log.h"
#include "kf_str.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_MAX_CONN 16
#define S_REQ_MAX 4096
#define S_DEADLINE_MS 2000

typedef struct {
    int fd;                  /* -1: free slot */
    char req[S_REQ_MAX];
    size_t req_len;
    char *resp;              /* owned; NULL while reading */
    size_t resp_len, resp_sent;
    int64_t deadline;
} s_conn_t;

struct kf_metrics_t {
    int listen_fd;
    kf_metrics_render_fn *render;
    void *arg;
    s_conn_t conn[S_MAX_CONN];
    long scrapes;
};

static void
s_close (s_conn_t *c)
{
    if (c->fd >= 0)
        close (c->fd);
    free (c->resp);
    memset (c, 0, sizeof *c);
    c->fd = -1;
}

kf_metrics_t *
kf_metrics_new (const char *address, kf_metrics_render_fn *render, void *arg, char **err)
{
    /* Split HOST:PORT at the last colon; [v6] loses its brackets. */
    char host[256] = "";
    const char *colon = strrchr (address, ':');
    if (!colon || !colon[1] || (size_t) (colon - address) >= sizeof host) {
        kf_fail (err, "metrics_address '%s' is not HOST:PORT", address);
        return NULL;
    }
    memcpy (host, address, (size_t) (colon - address));
    host[colon - address] = 0;
    if (host[0] == '[' && host[strlen (host) - 1] == ']') {
        memmove (host, host + 1, strlen (host));
        host[strlen (host) - 1] = 0;
    }
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV };
    struct addrinfo *ai = NULL;
    int gai = getaddrinfo (host[0] ? host : NULL, colon + 1, &hints, &ai);
    if (gai) {
        kf_fail (err, "metrics_address '%s': %s", address, gai_strerror (gai));
        return NULL;
    }
    int fd = socket (ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    int one = 1;
    if (fd >= 0)
        setsockopt (fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (fd < 0 || bind (fd, ai->ai_addr, ai->ai_addrlen) || listen (fd, 64)) {
        kf_fail (err, "cannot listen on %s: %s", address, strerror (errno));
        if (fd >= 0)
            close (fd);
        freeaddrinfo (ai);
        return NULL;
    }
    freeaddrinfo (ai);
    kf_metrics_t *self = calloc (1, sizeof *self);
    self->listen_fd = fd;
    self->render = render;
    self->arg = arg;
    for (int i = 0; i < S_MAX_CONN; i++)
        self->conn[i].fd = -1;
    return self;
}

void
kf_metrics_destroy (kf_metrics_t **self_p)
{
    if (!self_p || !*self_p)
        return;
    kf_metrics_t *self = *self_p;
    for (int i = 0; i < S_MAX_CONN; i++)
        s_close (&self->conn[i]);
    close (self->listen_fd);
    free (self);
    *self_p = NULL;
}

int
kf_metrics_prepare (kf_metrics_t *self, zmq_pollitem_t *items, int max, long *timeout_ms)
{
    int n = 0;
    int64_t now = zclock_mono ();
    bool room = false;
    for (int i = 0; i < S_MAX_CONN; i++) {
        s_conn_t *c = &self->conn[i];
        if (c->fd < 0) {
            room = true;
            continue;
        }
        if (n >= max)
            break;
        items[n++] = (zmq_pollitem_t) { NULL, c->fd, c->resp ? ZMQ_POLLOUT : ZMQ_POLLIN, 0 };
        if (c->deadline - now < *timeout_ms)
            *timeout_ms = c->deadline - now < 0 ? 0 : (long) (c->deadline - now);
    }
    /* With every slot busy the listener leaves the poll: new connections
     * wait in the backlog instead of spinning the loop. */
    if (room && n < max)
        items[n++] = (zmq_pollitem_t) { NULL, self->listen_fd, ZMQ_POLLIN, 0 };
    return n;
}

static s_conn_t *
s_conn_of (kf_metrics_t *self, int fd)
{
    for (int i = 0; i < S_MAX_CONN; i++)
        if (self->conn[i].fd == fd)
            return &self->conn[i];
    return NULL;
}

static void
s_respond (kf_metrics_t *self, s_conn_t *c)
{
    const char *status = "404 Not Found", *type = "text/plain; charset=utf-8";
    char *body = NULL;
    if (!strncmp (c->req, "GET /metrics ", 13) || !strncmp (c->req, "GET /metrics?", 13)
        || !strncmp (c->req, "GET / ", 6)) {
        body = self->render (self->arg);
        if (body) {
            status = "200 OK";
            type = "text/plain; version=0.0.4; charset=utf-8";
            self->scrapes++;
        }
        else
            status = "503 Service Unavailable";
    }
    else if (strncmp (c->req, "GET ", 4))
        status = "405 Method Not Allowed";
    const char *text = body ? body : status;
    c->resp = kf_strdupf ("HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
                          "Connection: close\r\n\r\n%s%s",
                          status, type, strlen (text) + (body ? 0 : 1), text, body ? "" : "\n");
    c->resp_len = c->resp ? strlen (c->resp) : 0;
    c->resp_sent = 0;
    free (body);
    if (!c->resp)
        s_close (c);
}

void
kf_metrics_dispatch (kf_metrics_t *self, zmq_pollitem_t *items, int n)
{
    int64_t now = zclock_mono ();
    for (int k = 0; k < n; k++) {
        zmq_pollitem_t *it = &items[k];
        if (it->fd == self->listen_fd) {
            if (!(it->revents & ZMQ_POLLIN))
                continue;
            s_conn_t *slot = s_conn_of (self, -1);
            int fd = slot ? accept4 (self->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)
                          : -1;
            if (fd >= 0) {
                slot->fd = fd;
                slot->deadline = now + S_DEADLINE_MS;
            }
            continue;
        }
        s_conn_t *c = s_conn_of (self, it->fd);
        if (!c)
            continue;
        if (it->revents & ZMQ_POLLERR) {
            s_close (c);
            continue;
        }
        if (!c->resp && (it->revents & ZMQ_POLLIN)) {
            ssize_t r = read (c->fd, c->req + c->req_len, sizeof c->req - 1 - c->req_len);
            if (r <= 0) {
                if (r == 0 || (errno != EAGAIN && errno != EINTR))
                    s_close (c);
                continue;
            }
            c->req_len += (size_t) r;
            c->req[c->req_len] = 0;
            if (strstr (c->req, "\r\n\r\n") || strstr (c->req, "\n\n"))
                s_respond (self, c);
            else if (c->req_len >= sizeof c->req - 1)
                s_close (c);   /* headers too large: no answer */
        }
        else if (c->resp && (it->revents & ZMQ_POLLOUT)) {
            ssize_t w = send (c->fd, c->resp + c->resp_sent, c->resp_len - c->resp_sent,
                              MSG_NOSIGNAL);
            if (w > 0)
                c->resp_sent += (size_t) w;
            if ((w < 0 && errno != EAGAIN && errno != EINTR) || c->resp_sent == c->resp_len)
                s_close (c);
        }
    }
    /* A client that is too slow loses its connection. */
    for (int i = 0; i < S_MAX_CONN; i++)
        if (self->conn[i].fd >= 0 && now >= self->conn[i].deadline)
            s_close (&self->conn[i]);
}

long
kf_metrics_scrapes (const kf_metrics_t *self)
{
    return self->scrapes;
}

void
kf_metrics_head (FILE *out, const char *name, const char *type, const char *help)
{
    fprintf (out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void
kf_metrics_sample (FILE *out, const char *name, const char *labels, double value)
{
    if (labels && *labels)
        fprintf (out, "%s{%s} ", name, labels);
    else
        fprintf (out, "%s ", name);
    if (isnan (value))
        fprintf (out, "NaN\n");
    else if (value == floor (value) && fabs (value) < 1e15)
        fprintf (out, "%.0f\n", value);
    else
        fprintf (out, "%.9g\n", value);
}
