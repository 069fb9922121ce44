/*  kfctl_client.c - endpoint lookup and the request/reply exchange of kfctl.
 *
 *  Every request opens its own DEALER with linger 0 and closes it after
 *  the reply or the timeout. A reply that arrives after we gave up can then
 *  never be mistaken for the answer to a later request, which is what lets
 *  kfctl ignore the optional "req" echo entirely.
 */
#include "kf_clock.h"
#include "kf_curve.h"
#include "kf_str.h"
#include "kf_take.h"
#include "kfctl_client.h"
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

volatile sig_atomic_t kf_ctl_interrupted;

static void
s_on_signal (int sig)
{
    (void) sig;
    kf_ctl_interrupted = 1;
}

void
kf_ctl_catch_signals (void)
{
    /* czmq installs its own SIGINT handler on first use unless told not
     * to; ours must be the one that runs so the wait loops see it. */
    zsys_handler_set (NULL);
    struct sigaction sa;
    memset (&sa, 0, sizeof sa);
    sa.sa_handler = s_on_signal;
    sigemptyset (&sa.sa_mask);
    sigaction (SIGINT, &sa, NULL);
    sigaction (SIGTERM, &sa, NULL);
}

int64_t
kf_ctl_now_ms (void)
{
    return (int64_t) (kf_clock_now () * 1000);
}

char *
kf_ctl_state_dir (void)
{
    const char *state = getenv ("KF_STATE");
    if (state && *state)
        return strdup (state);
    if (geteuid () == 0)
        return strdup ("/var/lib/kf-local");
    const char *home = getenv ("HOME");
    char *dir = NULL;
    if (asprintf (&dir, "%s/.kf-local", home && *home ? home : ".") < 0)
        return NULL;
    return dir;
}

/* Reads KEY=VALUE lines of PATH into the endpoints still unset. A missing
 * file is not an error: the caller reports which endpoint is unknown. */
static void
s_read_endpoints_file (kf_ctl_endpoints_t *ep, const char *path)
{
    FILE *f = fopen (path, "r");
    if (!f)
        return;
    char line[1024];
    while (fgets (line, sizeof line, f)) {
        line[strcspn (line, "\r\n")] = '\0';
        char *eq = strchr (line, '=');
        if (line[0] == '#' || !eq || eq[1] == '\0')
            continue;
        *eq = '\0';
        const char *value = eq + 1;
        char **slot = NULL;
        if (!strcmp (line, "KF_CLIENT_ENDPOINT"))
            slot = &ep->client;
        else if (!strcmp (line, "KF_STATUS_ENDPOINT"))
            slot = &ep->status;
        else if (!strcmp (line, "KF_EVENT_ENDPOINT"))
            slot = &ep->event;
        else if (!strcmp (line, "KF_WORKER_ENDPOINT"))
            slot = &ep->worker;
        if (slot && !*slot) {
            *slot = strdup (value);
            if (slot == &ep->client && !ep->source)
                ep->source = strdup (path);
        }
    }
    fclose (f);
}

static void
s_pick (char **slot, const char *flag, const char *env_name)
{
    if (flag && *flag) {
        *slot = strdup (flag);
        return;
    }
    const char *env = getenv (env_name);
    if (env && *env)
        *slot = strdup (env);
}

int
kf_ctl_endpoints_resolve (kf_ctl_endpoints_t *ep, const char *client_flag,
                          const char *status_flag, const char *event_flag)
{
    memset (ep, 0, sizeof *ep);
    s_pick (&ep->client, client_flag, "KF_CLIENT_ENDPOINT");
    if (ep->client)
        ep->source = strdup (client_flag && *client_flag
                                 ? "--endpoint" : "KF_CLIENT_ENDPOINT");
    s_pick (&ep->status, status_flag, "KF_STATUS_ENDPOINT");
    s_pick (&ep->event, event_flag, "KF_EVENT_ENDPOINT");
    s_pick (&ep->worker, NULL, "KF_WORKER_ENDPOINT");
    if (!ep->client || !ep->status || !ep->event) {
        char *dir = kf_ctl_state_dir ();
        char *path = NULL;
        if (dir && asprintf (&path, "%s/endpoints", dir) >= 0) {
            s_read_endpoints_file (ep, path);
            free (path);
        }
        free (dir);
    }
    return 0;
}

void
kf_ctl_endpoints_clear (kf_ctl_endpoints_t *ep)
{
    KF_CLEAR (ep, ep->client, ep->status, ep->event, ep->worker, ep->source);
}

/* Waits for EVENTS (ZMQ_POLLIN / ZMQ_POLLOUT) on SOCK. */
static int
s_wait (zsock_t *sock, short events, int timeout_ms)
{
    /* Short slices: a signal that lands between our flag check and the
     * poll would otherwise go unnoticed for the whole timeout. */
    int64_t deadline = kf_ctl_now_ms () + timeout_ms;
    while (!kf_ctl_interrupted) {
        int64_t left = deadline - kf_ctl_now_ms ();
        if (left <= 0)
            return 0;
        long slice = left < 100 ? (long) left : 100;
        if (!sock) {
            usleep ((useconds_t) slice * 1000);
            continue;
        }
        zmq_pollitem_t item = { zsock_resolve (sock), 0, events, 0 };
        int rc = zmq_poll (&item, 1, slice);
        if (rc > 0 && (item.revents & events))
            return 1;
        if (rc < 0 && errno != EINTR)
            return 0;
    }
    return -1;
}

int
kf_ctl_wait_readable (zsock_t *sock, int timeout_ms)
{
    return s_wait (sock, ZMQ_POLLIN, timeout_ms);
}


int
kf_ctl_secure (zsock_t *sock, const char *endpoint, char **err)
{
    /* Said here in kfctl's own terms (the variables it reads), not in
     * the daemons' config keys that kf_curve_client_apply names. */
    if (strncmp (endpoint, "tcp://", 6) && strncmp (endpoint, "ipc://", 6)
        && strncmp (endpoint, "inproc://", 9))
        return kf_fail (err, "'%s' is no endpoint: give tcp://HOST:PORT or ipc://PATH"
                        " (--endpoint, or the variables KF_CLIENT_ENDPOINT,"
                        " KF_STATUS_ENDPOINT, KF_EVENT_ENDPOINT)", endpoint);
    const char *plain = getenv ("KF_ALLOW_PLAIN_TCP");
    bool allow_plain = plain && (!strcmp (plain, "1") || !strcasecmp (plain, "true")
                                 || !strcasecmp (plain, "yes"));
    const char *cert = getenv ("KF_CURVE_CERT"), *key = getenv ("KF_CURVE_SERVER_KEY");
    bool have_cert = cert && *cert, have_key = key && *key;
    if (kf_curve_scope (endpoint) == KF_SCOPE_REMOTE && !have_cert && !have_key && !allow_plain)
        return kf_fail (err, "%s leaves this host: set KF_CURVE_CERT (your secret"
                        " certificate, from 'kfctl keygen') and KF_CURVE_SERVER_KEY (the"
                        " coordinator's public key), or KF_ALLOW_PLAIN_TCP=1 to send in"
                        " the clear", endpoint);
    if (kf_curve_scope (endpoint) != KF_SCOPE_LOCAL && have_cert != have_key)
        return kf_fail (err, "CURVE needs both KF_CURVE_CERT (your secret certificate) and"
                        " KF_CURVE_SERVER_KEY (the coordinator's public key); only %s is set",
                        have_cert ? "KF_CURVE_CERT" : "KF_CURVE_SERVER_KEY");
    return kf_curve_client_apply (sock, endpoint, cert, key, allow_plain, err);
}

kf_ctl_rc_t
kf_ctl_request (const char *endpoint, kf_msg_t **req_p, const char *expect,
                int timeout_ms, kf_msg_t **reply_p, char **err)
{
    *reply_p = NULL;
    *err = NULL;
    zsock_t *sock = zsock_new (ZMQ_DEALER);
    if (!sock) {
        kf_msg_destroy (req_p);
        *err = kf_strdupf ("cannot create a socket: %s", zmq_strerror (errno));
        return KF_CTL_NO_REPLY;
    }
    zsock_set_linger (sock, 0);
    /* Without this a send to a peer that never came up would sit in the
     * queue; with it we fail the same way as a silent peer: by timeout. */
    zsock_set_immediate (sock, 1);
    kf_ctl_rc_t rc = KF_CTL_NO_REPLY;
    if (kf_ctl_secure (sock, endpoint, err)) {
        kf_msg_destroy (req_p);
        rc = KF_CTL_BAD_REPLY;   /* a configuration error, not an absent peer */
        goto done;
    }
    if (zsock_connect (sock, "%s", endpoint) != 0) {
        kf_msg_destroy (req_p);
        *err = kf_strdupf ("cannot connect to %s: %s", endpoint,
                          zmq_strerror (errno));
        goto done;
    }
    /* With IMMEDIATE a DEALER is writable only once a connection exists,
     * so a missing coordinator shows up here, before anything is queued.
     * Waiting for that rather than sending with a timeout also keeps a
     * failed send from leaving a half-sent message behind. */
    int64_t started = kf_ctl_now_ms ();
    int ready = s_wait (sock, ZMQ_POLLOUT, timeout_ms);
    if (ready < 0) {
        rc = KF_CTL_INTERRUPTED;
        goto done;
    }
    if (ready == 0) {
        *err = kf_strdupf ("no coordinator answering on %s within %.1f s",
                          endpoint, timeout_ms / 1000.0);
        goto done;
    }
    zsock_set_sndtimeo (sock, 1000);
    if (kf_msg_send (req_p, zsock_resolve (sock), NULL, NULL) != 0) {
        *err = kf_strdupf ("send to %s failed: %s", endpoint,
                          zmq_strerror (errno));
        goto done;
    }
    int left = timeout_ms - (int) (kf_ctl_now_ms () - started);
    ready = kf_ctl_wait_readable (sock, left > 0 ? left : 1);
    if (ready < 0) {
        rc = KF_CTL_INTERRUPTED;
        goto done;
    }
    if (ready == 0) {
        *err = kf_strdupf ("no reply from %s within %.1f s", endpoint,
                          timeout_ms / 1000.0);
        goto done;
    }
    zmsg_t *zmsg = zmsg_recv (sock);
    if (!zmsg) {
        rc = kf_ctl_interrupted ? KF_CTL_INTERRUPTED : KF_CTL_NO_REPLY;
        if (rc == KF_CTL_NO_REPLY)
            *err = kf_strdupf ("receive failed on %s", endpoint);
        goto done;
    }
    const char *reason = NULL;
    kf_msg_t *reply = NULL;
    kf_proto_rc_t prc = kf_msg_decode (&zmsg, KF_EP_CLIENT_OUT,
                                       KF_PROTO_DEFAULT_MAX_MESSAGE, false,
                                       false, NULL, &reply, &reason);
    if (prc != KF_PROTO_OK) {
        rc = KF_CTL_BAD_REPLY;
        *err = kf_strdupf ("bad reply from %s: %s: %s", endpoint,
                          kf_proto_rc_name (prc), reason ? reason : "");
        goto done;
    }
    if (!strcmp (reply->type, "ERROR")) {
        rc = KF_CTL_ERROR_REPLY;
        *reply_p = reply;
        goto done;
    }
    if (strcmp (reply->type, expect)) {
        rc = KF_CTL_BAD_REPLY;
        *err = kf_strdupf ("unexpected reply %s from %s (wanted %s)",
                          reply->type, endpoint, expect);
        kf_msg_destroy (&reply);
        goto done;
    }
    rc = KF_CTL_REPLY;
    *reply_p = reply;
done:
    kf_msg_destroy (req_p);
    zsock_destroy (&sock);
    return rc;
}
