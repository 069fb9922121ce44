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
#include "kf_take.h"
#include "kf_log.h"
#include "kf_str.h"
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <arpa/inet.h>
#include <netdb.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define S_MAX_CONN 16
#define S_REQ_MAX 4096
#define S_DEADLINE_MS 2000
#define S_MAX_ALLOW 32

typedef struct {
    int family;              /* AF_INET or AF_INET6 */
    unsigned char addr[16];
    int prefix;              /* bits */
} s_allow_t;

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
    s_allow_t allow[S_MAX_ALLOW];
    int n_allow;
    long refused;
};

int
kf_metrics_allow (kf_metrics_t *self, const char *list, char **err)
{
    char *copy = strdup (list ? list : ""), *save = NULL;
    int n = 0, rc = 0;
    for (char *e = strtok_r (copy, ", \t", &save); e && rc == 0; e = strtok_r (NULL, ", \t", &save)) {
        s_allow_t a = { 0 };
        char *slash = strchr (e, '/');
        if (slash)
            *slash = 0;
        if (inet_pton (AF_INET, e, a.addr) == 1)
            a.family = AF_INET, a.prefix = 32;
        else if (inet_pton (AF_INET6, e, a.addr) == 1)
            a.family = AF_INET6, a.prefix = 128;
        char *end = NULL;
        long bits = slash ? strtol (slash + 1, &end, 10) : a.prefix;
        if (!a.family || (slash && (!*(slash + 1) || *end)) || bits < 0 || bits > a.prefix
            || n >= S_MAX_ALLOW)
            rc = kf_fail (err, "metrics_allow: '%s%s%s' is not an address or CIDR block"
                          " (at most %d)", e, slash ? "/" : "", slash ? slash + 1 : "",
                          S_MAX_ALLOW);
        else {
            a.prefix = (int) bits;
            self->allow[n++] = a;
        }
    }
    free (copy);
    if (rc == 0)
        self->n_allow = n;
    return rc;
}

long
kf_metrics_refused (const kf_metrics_t *self)
{
    return self->refused;
}

static bool
s_prefix_match (const unsigned char *a, const unsigned char *b, int bits)
{
    int bytes = bits / 8, rest = bits % 8;
    if (memcmp (a, b, (size_t) bytes))
        return false;
    if (!rest)
        return true;
    unsigned char mask = (unsigned char) (0xff << (8 - rest));
    return (a[bytes] & mask) == (b[bytes] & mask);
}

/* Whether the peer at SA may scrape. IPv4 peers on an IPv6 listener come
 * as ::ffff:a.b.c.d and are matched as IPv4. */
static bool
s_allowed (const kf_metrics_t *self, const struct sockaddr_storage *sa)
{
    unsigned char addr[16];
    int family = sa->ss_family;
    if (family == AF_INET)
        memcpy (addr, &((const struct sockaddr_in *) sa)->sin_addr, 4);
    else if (family == AF_INET6) {
        const struct in6_addr *a6 = &((const struct sockaddr_in6 *) sa)->sin6_addr;
        if (IN6_IS_ADDR_V4MAPPED (a6)) {
            family = AF_INET;
            memcpy (addr, a6->s6_addr + 12, 4);
        }
        else
            memcpy (addr, a6->s6_addr, 16);
    }
    else
        return false;
    for (int i = 0; i < self->n_allow; i++)
        if (self->allow[i].family == family
            && s_prefix_match (self->allow[i].addr, addr, self->allow[i].prefix))
            return true;
    return false;
}

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
    kf_metrics_allow (self, "127.0.0.0/8, ::1", NULL);
    return self;
}

void
kf_metrics_destroy (kf_metrics_t **self_p)
{
    kf_metrics_t *self = KF_TAKE (self_p);
    if (self) {
        for (int i = 0; i < S_MAX_CONN; i++)
            s_close (&self->conn[i]);
        close (self->listen_fd);
        free (self);
    }
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
            struct sockaddr_storage peer;
            socklen_t len = sizeof peer;
            int fd = slot ? accept4 (self->listen_fd, (struct sockaddr *) &peer, &len,
                                     SOCK_NONBLOCK | SOCK_CLOEXEC)
                          : -1;
            if (fd >= 0 && !s_allowed (self, &peer)) {
                /* Not in metrics_allow: closed unread, nothing rendered. */
                close (fd);
                self->refused++;
                continue;
            }
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
